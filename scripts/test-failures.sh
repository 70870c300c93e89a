#!/bin/sh
# Prints what a failed `swift test` run (its log as $1) needs a reader to see
# first: the failed tests and their expectations, then crashes, and only when
# no test ran, the compiler's errors. CI keeps the log's tail only, and a
# compiler warning that mentions "error" must not push the failures out of it.
log="${1:-.build/test.log}"
[ -r "$log" ] || { echo "no test log at $log"; exit 0; }

failed=$(grep -E '^✘ Test .* failed after' "$log" | grep -v '^✘ Test run with' | sed -E 's/ failed after .*//; s/^✘ Test //' | sort -u)
if [ -n "$failed" ]; then
  echo "--- failed tests ($(printf '%s\n' "$failed" | wc -l)):"
  printf '%s\n' "$failed" | sed 's/^/  /'
  echo "--- their expectations:"
  # An issue line, then its continuation lines (a comment, a multi-line value).
  awk '/^✘ Test .* recorded an issue/ { print; keep = 1; n = 0; next }
       keep && (/^↳ / || /^  /) && n < 8 { print; n++; next }
       { keep = 0 }' "$log" | head -120
fi

crashes=$(grep -E 'Fatal error|crashed|exited with (signal|unexpected)|Assertion failed|Precondition failed|[Ss]egmentation fault' "$log" | grep -v '^✔' | head -20)
if [ -n "$crashes" ]; then
  echo "--- crashes:"
  printf '%s\n' "$crashes"
fi

if [ -z "$failed" ] && [ -z "$crashes" ]; then
  # Nothing ran to the end: the build broke. Compiler errors have a place
  # ("file:line:col: error: …"); warnings are left out.
  errors=$(grep -E '(^|: )error: ' "$log" | grep -v -E 'warning:|^ *\|' | sort -u | head -40)
  if [ -n "$errors" ]; then
    echo "--- errors:"
    printf '%s\n' "$errors"
  else
    echo "--- the log's last lines:"
    tail -30 "$log"
  fi
fi
exit 0
