#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# library.sh - libfbwire as an installed C library: install the build into a scratch prefix,
# check that the installed headers are those docs/library.md lists as public (with the reason),
# that libfbwire.so exports exactly the functions the installed headers declare with FBW_API,
# each of them called by a test (tests/**/*.c, *.h) or an example of docs/library.md, that the
# version agrees everywhere (fbwire.h, pkg-config, CMake package, soname), build the examples as
# printed (their ```c blocks: README.md's first program, docs/library.md's point select and
# pipelined transactions) with pkg-config against the shared library (the point select also with
# find_package(fbwire) against the static one), and run them against the FB3 and FB4 servers
# (output and round trips as the documents say).
#
#   tests/package/library.sh BUILD_DIR
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${1:?usage: library.sh BUILD_DIR}
WORK=$(mktemp -d /tmp/fbwire-lib.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
FAILS=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

PREFIX=$WORK/prefix
cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; exit 1; }
# The version, written once (wire/fbwire.h), everywhere else derived from it.
VERSION=$(sed -n 's/^#define FBWIRE_VERSION "\([0-9.]*\)"$/\1/p' "$PREFIX/include/fbwire/fbwire.h")
MAJOR=${VERSION%%.*}
# The ABI version the soname carries (docs/library.md "ABI"): the major, before 1.0 0.<minor>.
MINOR=${VERSION#*.}; MINOR=${MINOR%%.*}
ABI=$MAJOR; [ "$MAJOR" = 0 ] && ABI=0.$MINOR
[ -n "$VERSION" ] && ok "fbwire.h says version $VERSION" || fail "no FBWIRE_VERSION in the installed fbwire.h"
for f in include/fbwire/fbwire.h "lib/libfbwire.so.$ABI" lib/libfbwire.a lib/pkgconfig/fbwire.pc \
         lib/cmake/fbwire/fbwireConfig.cmake; do
  [ -e "$PREFIX/$f" ] && ok "installed $f" || fail "missing $f"
done

soname=$(readelf -d "$PREFIX/lib/libfbwire.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
[ "$soname" = "libfbwire.so.$ABI" ] && ok "soname $soname follows the version" ||
  fail "soname '$soname', version $VERSION wants libfbwire.so.$ABI"
[ -e "$PREFIX/lib/libfbwire.so.$VERSION" ] && ok "libfbwire.so.$VERSION installed" || fail "no libfbwire.so.$VERSION"
pcver=$(PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig pkg-config --modversion fbwire)
[ "$pcver" = "$VERSION" ] && ok "pkg-config says $pcver" || fail "pkg-config says '$pcver', fbwire.h $VERSION"
grep -q "set(PACKAGE_VERSION \"$VERSION\")" "$PREFIX/lib/cmake/fbwire/fbwireConfigVersion.cmake" &&
  ok "the CMake package is version $VERSION" || fail "fbwireConfigVersion.cmake is not version $VERSION"

# The installed headers: exactly those docs/library.md lists under "What is public and why".
awk '/^## What is public and why/ { on = 1; next } /^## / { on = 0 } on' "$REPO/docs/library.md" |
  sed -n 's/^| `\([a-z_]*\.h\)` | .*/\1/p' | sort -u >"$WORK/headers.doc"
(cd "$PREFIX/include/fbwire" && ls -- *.h) | sort -u >"$WORK/headers.installed"
if [ -s "$WORK/headers.doc" ] && diff "$WORK/headers.doc" "$WORK/headers.installed" >"$WORK/headers.diff"; then
  ok "the $(wc -l <"$WORK/headers.doc") installed headers are the public ones docs/library.md gives reasons for"
else
  fail "installed headers differ from docs/library.md (< documented only, > installed only):"
  cat "$WORK/headers.diff"
fi

# Every include of the installed headers resolves inside include/fbwire (nothing left behind).
echo '#include <fbwire/fbwire.h>' | cc -std=c11 -fsyntax-only -I"$PREFIX/include" -x c - 2>"$WORK/hdr.err" &&
  ok "fbwire.h compiles from the install alone" || { fail "fbwire.h from the install"; cat "$WORK/hdr.err"; }

# Exports: the FBW_API declarations of the installed headers, and nothing else.
cat "$PREFIX"/include/fbwire/*.h | grep -oE '^FBW_API [^(;]*\bfbw_[a-z0-9_]+ *(\(|\[|;)' |
  grep -oE 'fbw_[a-z0-9_]+ *(\(|\[|;)$' | tr -d '([; ' | sort -u >"$WORK/declared"
nm -D --defined-only "$PREFIX/lib/libfbwire.so" | awk '{ print $3 }' | sort -u >"$WORK/exported"
if [ -s "$WORK/declared" ] && diff "$WORK/declared" "$WORK/exported" >"$WORK/exports.diff"; then
  ok "libfbwire.so exports exactly the $(wc -l <"$WORK/declared") FBW_API functions of the headers"
else
  fail "exports differ from the headers (< declared only, > exported only):"
  cat "$WORK/exports.diff"
fi

# The examples, exactly as the documents print them: README.md's ```c block, docs/library.md's
# first and the one that is pipeline.c (by its opening line: the snippets between them are not
# programs, and a new one must not shift which block is tested).
example() { awk -v want="$2" '/^```c$/ { n++; on = n == want; next } /^```$/ { on = 0 } on' "$REPO/$1"; }
example_named() {
  awk -v name="$2" '/^```c$/ { on = 1; first = 1; next } /^```$/ { on = 0; keep = 0 }
    on && first { first = 0; keep = index($0, "/* " name " - ") == 1 } on && keep' "$REPO/$1"
}
example README.md 1 >"$WORK/hello.c"
example docs/library.md 1 >"$WORK/point_select.c"
example_named docs/library.md pipeline.c >"$WORK/pipeline.c"

# Every exported function has a caller: a test's C source or one of the examples. A function
# only the library calls is internal (declared without FBW_API); one nothing calls is dead.
: >"$WORK/uncalled"
while read -r fn; do
  grep -rqw --include='*.c' --include='*.h' -- "$fn" "$REPO/tests" ||
    grep -qw -- "$fn" "$WORK/hello.c" "$WORK/point_select.c" "$WORK/pipeline.c" || echo "$fn" >>"$WORK/uncalled"
done <"$WORK/exported"
if [ -s "$WORK/exported" ] && [ ! -s "$WORK/uncalled" ]; then
  ok "each of the $(wc -l <"$WORK/exported") exported functions is called by a test or an example"
else
  fail "exported functions no test or example calls:"; sed 's/^/    /' "$WORK/uncalled"
fi
[ -s "$WORK/hello.c" ] || fail "no C example in README.md"
[ -s "$WORK/point_select.c" ] || fail "no C example in docs/library.md"
[ -s "$WORK/pipeline.c" ] || fail "no pipeline example in docs/library.md"
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
# shellcheck disable=SC2046
if cc -std=c11 -Wall -Wextra -Werror -o "$WORK/ps_pc" "$WORK/point_select.c" $(pkg-config --cflags --libs fbwire) \
    -Wl,-rpath,"$PREFIX/lib" 2>"$WORK/cc.err"; then
  ok "example builds with pkg-config (shared)"
  # ldd's output into a file first: grep -q stops reading at the first match, and with pipefail
  # the SIGPIPE ldd may then get would turn a match into a failure.
  ldd "$WORK/ps_pc" >"$WORK/ldd.out"
  grep -q "$PREFIX/lib/libfbwire.so.$ABI" "$WORK/ldd.out" && ok "example uses the installed libfbwire.so.$ABI" ||
    fail "example does not load the installed libfbwire.so.$ABI"
else
  fail "example with pkg-config"; cat "$WORK/cc.err"
fi
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$WORK/pipeline" "$WORK/pipeline.c" $(pkg-config --cflags --libs fbwire) \
    -Wl,-rpath,"$PREFIX/lib" 2>"$WORK/cc-pipe.err" && ok "pipeline example builds with pkg-config" ||
  { fail "pipeline example with pkg-config"; cat "$WORK/cc-pipe.err"; }
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$WORK/hello" "$WORK/hello.c" $(pkg-config --cflags --libs fbwire) \
    -Wl,-rpath,"$PREFIX/lib" 2>"$WORK/cc-hello.err" && ok "README example builds with pkg-config" ||
  { fail "README example with pkg-config"; cat "$WORK/cc-hello.err"; }
mkdir -p "$WORK/cm"
cat >"$WORK/cm/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.20)
project(fbwire_consumer C)
find_package(fbwire ${VERSION%.*} REQUIRED)
add_executable(ps_cmake $WORK/point_select.c)
target_link_libraries(ps_cmake PRIVATE fbwire::fbwire_static)
EOF
if cmake -S "$WORK/cm" -B "$WORK/cm/build" -DCMAKE_PREFIX_PATH="$PREFIX" >"$WORK/cm.log" 2>&1 &&
   cmake --build "$WORK/cm/build" >>"$WORK/cm.log" 2>&1; then
  ok "example builds with find_package(fbwire), fbwire::fbwire_static"
  ldd "$WORK/cm/build/ps_cmake" >"$WORK/ldd-static.out"
  grep -q libfbwire "$WORK/ldd-static.out" && fail "static build still needs libfbwire.so" ||
    ok "static build does not need libfbwire.so"
else
  fail "example with find_package"; tail -n 20 "$WORK/cm.log"
fi

ENV_FILE=${FBWIRE_STATE:-/var/tmp/fbwire-state}/servers.env
[ -f "$ENV_FILE" ] || "$REPO/scripts/fb-servers.sh" start >&2 || { echo "servers did not start" >&2; exit 1; }
set -a; . "$ENV_FILE"; set +a
export ISC_USER=$FBW_USER ISC_PASSWORD=$FBW_PASSWORD
for server in FB3 FB4; do
  host=FBW_${server}_HOST port=FBW_${server}_PORT db=FBW_${server}_DB
  for exe in "$WORK/ps_pc" "$WORK/cm/build/ps_cmake"; do
    [ -x "$exe" ] || continue
    out=$WORK/$server-${exe##*/}.out
    if "$exe" "${!host}/${!port}:${!db}" >"$out" 2>&1 &&
       grep -q '^  row: 1 | RDB\$DATABASE$' "$out" &&
       [ "$(grep -c '^execute  1 round trip(s)$' "$out")" = 3 ] &&
       grep -q '^prepare  1 round trip(s)$' "$out" && grep -Eq 'wire crypt (Arc4|ChaCha|ChaCha64),' "$out"; then
      ok "$server ${exe##*/}: point selects, one round trip each, wire crypt on"
    else
      fail "$server ${exe##*/}:"; sed 's/^/    /' "$out"
    fi
  done
  # README's example: the server's version, protocol, wire crypt, and 5 round trips (connect,
  # SRP proof, crypt, attach, version). A release says LI-V5.0.4.1812 Firebird 5.0, a development
  # build LI-T6.0.0.2123 Firebird 6.0 Initial (its stage after the version); protocols 10..20.
  out=$WORK/$server-hello.out
  if [ -x "$WORK/hello" ] && "$WORK/hello" "${!host}/${!port}:${!db}" >"$out" 2>&1 &&
     grep -Eq '^[A-Z]{2}-[A-Z][0-9.]+ Firebird [0-9.]+( [A-Za-z]+)?, protocol (1[0-9]|20), wire crypt (Arc4|ChaCha|ChaCha64): 5 round trips$' "$out"; then
    ok "$server README example: $(cat "$out")"
  else
    fail "$server README example:"; sed 's/^/    /' "$out"
  fi
  # Pipeline mode: read-only COMMIT rides along (1 round trip), a writing one waits for the
  # check (2), a failure names its request and is rolled back (2).
  out=$WORK/$server-pipeline.out
  if [ -x "$WORK/pipeline" ] && "$WORK/pipeline" "${!host}/${!port}:${!db}" >"$out" 2>&1 &&
     grep -q '^read-only: 3 executions + COMMIT in 1 round trip(s)$' "$out" &&
     [ "$(grep -c '^  request [123]: 1 row(s)$' "$out")" = 3 ] &&
     grep -q '^  latest row: RDB\$FIELDS$' "$out" &&
     grep -q '^writing: 3 executions, COMMIT after the check: 2 round trip(s), committed$' "$out" &&
     grep -q '^failing: statement 2 of 3 of the pipelined transaction (key 0): arithmetic exception' "$out" &&
     grep -q '; rolled back, 2 round trip(s)$' "$out"; then
    ok "$server pipeline: commit rules and round trips as documented"
  else
    fail "$server pipeline:"; sed 's/^/    /' "$out"
  fi
done

[ $FAILS -eq 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo "library checks passed"
