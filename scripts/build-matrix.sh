#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# build-matrix.sh - every build type with every compiler: configure with warnings as errors,
# build, run the unit tests (ctest -L unit). Prints one line per combination and the time each
# took; exits non-zero if any failed (all are tried).
#
#   scripts/build-matrix.sh [TYPE...]      default: Debug Release RelWithDebInfo MinSizeRel
#
# FBWIRE_MATRIX_CC="gcc clang"   compilers to try (default both)
# FBWIRE_MATRIX_SKIP="gcc-Type"   combinations another step already covers (e.g. .ci/run's main
#                                build is gcc RelWithDebInfo with its unit tests)
# FBWIRE_MATRIX_DIR=d            where the build trees go (default build-matrix/ in the checkout)
# FBWIRE_JOBS=n                  build parallelism (default 2)
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=${FBWIRE_MATRIX_DIR:-$REPO/build-matrix}
JOBS=${FBWIRE_JOBS:-2}
types=("$@")
[ ${#types[@]} -gt 0 ] || types=(Debug Release RelWithDebInfo MinSizeRel)
read -r -a compilers <<<"${FBWIRE_MATRIX_CC:-gcc clang}"

one() { # compiler type builddir
  cmake -S "$REPO" -B "$3" -DCMAKE_C_COMPILER="$1" -DCMAKE_BUILD_TYPE="$2" -DFBWIRE_WERROR=ON \
    >"$3.log" 2>&1 &&
    cmake --build "$3" -j"$JOBS" >>"$3.log" 2>&1 &&
    ctest --test-dir "$3" -L unit -j"$JOBS" --output-on-failure >>"$3.log" 2>&1
}

mkdir -p "$ROOT"
failed=0 t_all=$SECONDS
for cc in "${compilers[@]}"; do
  for type in "${types[@]}"; do
    if [[ " ${FBWIRE_MATRIX_SKIP:-} " == *" $cc-$type "* ]]; then
      printf 'build-matrix: %-6s %-15s skipped (FBWIRE_MATRIX_SKIP)\n' "$cc" "$type"
      continue
    fi
    dir=$ROOT/$cc-$type t0=$SECONDS
    if one "$cc" "$type" "$dir"; then
      result=pass
    else
      result="FAIL (log: $dir.log)"
      failed=1
      tail -n 30 "$dir.log" >&2
    fi
    printf 'build-matrix: %-6s %-15s %s in %d s\n' "$cc" "$type" "$result" $((SECONDS - t0))
  done
done
echo "build-matrix: done in $((SECONDS - t_all)) s"
exit "$failed"
