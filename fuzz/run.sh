#!/bin/sh
# Fuzzes moon's front end (libyaml loader + graph decoder + diagnostics) with
# libFuzzer and AddressSanitizer for FUZZ_SECONDS (default 60).
#   fuzz/run.sh            # 60 s over fuzz/corpus
#   FUZZ_SECONDS=600 fuzz/run.sh -jobs=2
# New interesting inputs go to .build-fuzz/corpus (fuzz/corpus, the committed
# seeds, is only read); crashes are written to .build-fuzz/artifacts/ and the
# script exits non-zero. Turn each crash into a regression test.
# `make fuzz` then runs fuzz/shell-values.py (values that must stay data in
# shell scripts) for as long.
set -eu
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
scratch=.build-fuzz
mkdir -p "$scratch"
MOON_FUZZ=1 swift build --scratch-path "$scratch" --product moonfuzz \
    --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address >"$scratch/build.log" 2>&1 || { cat "$scratch/build.log"; exit 1; }
bin="$(MOON_FUZZ=1 swift build --scratch-path "$scratch" --product moonfuzz --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address --show-bin-path)/moonfuzz"
mkdir -p "$scratch/corpus" "$scratch/artifacts"
# Leaks are not crashes here: the Swift runtime keeps caches for the process's life.
exec "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -detect_leaks=0 -print_final_stats=1 -dict=fuzz/moon.dict -artifact_prefix="$scratch/artifacts/" "$@" \
    "$scratch/corpus" fuzz/corpus
