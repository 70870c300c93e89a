#!/bin/sh
# usage: tests/check.sh PROGRAM NAME
# Runs PROGRAM on tests/NAME.in and compares what it prints (standard output
# and error together, then its exit status) with tests/NAME.expected.
# The actual output stays in build/tests/NAME.actual for a look after a failure.
program=$1
name=$2
actual=build/tests/$name.actual
mkdir -p build/tests
"$program" "tests/$name.in" > "$actual" 2>&1
echo "exit $?" >> "$actual"
diff -u "tests/$name.expected" "$actual"
