#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fuzz.sh - build the libFuzzer targets with clang (ASan + UBSan) and run each for N seconds.
#
#   scripts/fuzz.sh [seconds] [target...]     default 60 s per target; targets: pkt status conn dsn dec svc capture fault text
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
[ ${#targets[@]} -eq 0 ] && targets=(pkt status conn dsn dec svc capture fault text)

CC=clang cmake -S "$REPO" -B "$BUILD" -DFBWIRE_FUZZ=ON -DFBWIRE_SANITIZE=ON -DFBWIRE_BUILD_TESTS=ON >/dev/null
cmake --build "$BUILD" -j"${FBWIRE_JOBS:-2}" --target "${targets[@]/#/fuzz_}"

# FBWIRE_FUZZ_PARALLEL=n runs n targets at a time (default 1; one per core is the most that still
# gives each target a whole core). Each target's summary line, for docs/fuzzing.md:
#   | target | seconds | executions | edges (cov) | features (ft) | corpus | crashes |
fuzz_one() { # target
  local t=$1 work=$BUILD/corpus/$1 crashes=$BUILD/crashes/$1 seeds=$REPO/tests/fuzz/corpus/fuzz_$1 rc=0
  mkdir -p "$work" "$crashes" "$seeds"
  echo "--- fuzz.sh: fuzz_$t for ${secs}s"
  "$BUILD/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
       -print_final_stats=1 -artifact_prefix="$crashes/" "$work" "$seeds" 2>"$BUILD/fuzz_$t.log" || rc=$?
  summary "$t" "$rc" >"$BUILD/fuzz_$t.summary"
  if [ "$rc" -ne 0 ]; then
    echo "fuzz.sh: fuzz_$t FAILED, inputs in $crashes/ (log: $BUILD/fuzz_$t.log):" >&2
    ls "$crashes" >&2
    tail -40 "$BUILD/fuzz_$t.log" >&2
  fi
  return "$rc"
}

summary() { # target exit-status: one table row from the libFuzzer log
  local log=$BUILD/fuzz_$1.log execs secs cov ft corp crashes
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^stat::.*//; s/^#[0-9]*.*DONE.*//; s/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  corp=$(find "$BUILD/corpus/$1" -type f | wc -l)
  crashes=$(find "$BUILD/crashes/$1" -type f | wc -l)
  [ "$2" -ne 0 ] && crashes="$crashes (exit $2)"
  echo "| fuzz_$1 | ${secs:-?} | ${execs:-?} | ${cov:-?} | ${ft:-?} | $corp | $crashes |"
}

status=0 par=${FBWIRE_FUZZ_PARALLEL:-1} pids=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$par" ]; do wait -n || status=1; done
  fuzz_one "$t" &
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do wait -n || status=1; done
echo "| target | seconds | executions | edges (cov) | features (ft) | corpus files | crash inputs |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for t in "${targets[@]}"; do cat "$BUILD/fuzz_$t.summary"; done
exit $status
