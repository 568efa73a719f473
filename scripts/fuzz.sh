#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fuzz.sh - build the libFuzzer targets with clang (ASan + UBSan) and run each for N seconds.
#
#   scripts/fuzz.sh [seconds] [target...]     default 60 s per target; targets: pkt status conn dsn dec capture fault
#
# Seeds are read from tests/fuzz/corpus/fuzz_<target>/ (never written); the corpus libFuzzer grows lives in
# $BUILD/corpus/<target>/ and crash inputs land in $BUILD/crashes/<target>/ (turn each into a unit test).
# FBWIRE_FUZZ_BUILD=dir  build directory (default build-fuzz)   FBWIRE_JOBS=n  build parallelism (2)
# Regenerate seeds from the unit tests' packets:
#   FBW_CORPUS_DIR=$PWD/tests/fuzz/corpus ctest --test-dir build -R 'wire_test_(pkt|conn)'
# The default test run replays every target's seeds once (ctest -R fuzz_smoke, tests/fuzz/smoke.cmake).
# Exit status: 0 when no target crashed, 1 otherwise.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${FBWIRE_FUZZ_BUILD:-$REPO/build-fuzz}
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(pkt status conn dsn dec capture fault)

CC=clang cmake -S "$REPO" -B "$BUILD" -DFBWIRE_FUZZ=ON -DFBWIRE_SANITIZE=ON -DFBWIRE_TESTS=ON >/dev/null
cmake --build "$BUILD" -j"${FBWIRE_JOBS:-2}" --target "${targets[@]/#/fuzz_}"

status=0
for t in "${targets[@]}"; do
  work=$BUILD/corpus/$t crashes=$BUILD/crashes/$t seeds=$REPO/tests/fuzz/corpus/fuzz_$t
  mkdir -p "$work" "$crashes" "$seeds"
  echo "--- fuzz.sh: fuzz_$t for ${secs}s"
  if ! "$BUILD/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
       -print_final_stats=1 -artifact_prefix="$crashes/" "$work" "$seeds" 2>"$BUILD/fuzz_$t.log"; then
    status=1
    echo "fuzz.sh: fuzz_$t FAILED, inputs in $crashes/ (log: $BUILD/fuzz_$t.log):" >&2
    ls "$crashes" >&2
    tail -40 "$BUILD/fuzz_$t.log" >&2
  fi
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$BUILD/fuzz_$t.log" || true
done
exit $status
