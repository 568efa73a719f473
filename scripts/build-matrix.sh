#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# build-matrix.sh - every build type with every compiler: configure with warnings as errors,
# build, run the unit tests (ctest -L unit). Then one library-only build (docs/building.md): the
# library configured where pkg-config finds no package at all (so no libpcap, LuaJIT, Criterion,
# libedit or jansson can be used), built, installed, and README.md's example built against the
# install with pkg-config (shared) and find_package(fbwire) (static). Prints one line per
# configuration and the time each took; exits non-zero if any failed (all are tried).
#
#   scripts/build-matrix.sh [TYPE...]      default: Debug Release RelWithDebInfo MinSizeRel
#
# FBWIRE_MATRIX_CC="gcc clang"   compilers to try (default both)
# FBWIRE_MATRIX_SKIP="gcc-Type"   combinations another step already covers (e.g. .ci/run's main
#                                build is gcc RelWithDebInfo with its unit tests); "library"
#                                skips the library-only build
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

library_only() { # builddir: configure, build, install the library alone; build README's example
  local dir=$1 nopc=$1/no-pkg-config prefix=$1/install ex=$1/example
  rm -rf "$dir" && mkdir -p "$nopc" "$ex" || return 1
  PKG_CONFIG_LIBDIR=$nopc PKG_CONFIG_PATH='' cmake -S "$REPO" -B "$dir" -DFBWIRE_WERROR=ON \
    -DFBWIRE_BUILD_TOOLS=OFF -DFBWIRE_BUILD_DRIVER=OFF >"$dir.log" 2>&1 || return 1
  if grep -E '^(HELP2MAN|PCAP|LUAJIT|CRITERION|LIBEDIT|JANSSON)[_A-Z]*:' "$dir/CMakeCache.txt" >>"$dir.log"; then
    echo "build-matrix: the library-only build looked for a dependency of the tools, plug-in or tests" >>"$dir.log"
    return 1
  fi
  cmake --build "$dir" -j"$JOBS" >>"$dir.log" 2>&1 &&
    cmake --install "$dir" --prefix "$prefix" >>"$dir.log" 2>&1 || return 1
  awk '/^```c$/ { n++; on = n == 1; next } /^```$/ { on = 0 } on' "$REPO/README.md" >"$ex/hello.c"
  [ -s "$ex/hello.c" ] || { echo "build-matrix: no C example in README.md" >>"$dir.log"; return 1; }
  # shellcheck disable=SC2046
  cc -std=c11 -Wall -Wextra -Werror -o "$ex/hello" "$ex/hello.c" \
    $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs fbwire) >>"$dir.log" 2>&1 || return 1
  printf '%s\n' 'cmake_minimum_required(VERSION 3.20)' 'project(hello C)' 'find_package(fbwire REQUIRED)' \
    'add_executable(hello hello.c)' 'target_link_libraries(hello PRIVATE fbwire::fbwire_static)' \
    >"$ex/CMakeLists.txt"
  cmake -S "$ex" -B "$ex/build" -DCMAKE_PREFIX_PATH="$prefix" >>"$dir.log" 2>&1 &&
    cmake --build "$ex/build" >>"$dir.log" 2>&1
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
if [[ " ${FBWIRE_MATRIX_SKIP:-} " == *" library "* ]]; then
  printf 'build-matrix: %-22s skipped (FBWIRE_MATRIX_SKIP)\n' library-only
else
  dir=$ROOT/library-only t0=$SECONDS
  if library_only "$dir"; then
    result=pass
  else
    result="FAIL (log: $dir.log)"
    failed=1
    tail -n 30 "$dir.log" >&2
  fi
  printf 'build-matrix: %-22s %s in %d s\n' library-only "$result" $((SECONDS - t0))
fi
echo "build-matrix: done in $((SECONDS - t_all)) s"
exit "$failed"
