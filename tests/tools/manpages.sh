#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# manpages.sh - every installed program has a man page that man renders: install the build into a
# scratch prefix, then for each file in bin/ expect share/man/man1/<name>.1.gz, rendered by
# `man -l` without errors, its NAME line naming the program and its text listing the program's
# options (the --help output help2man read). Also the licence files in share/doc/fbwire.
#
#   tests/tools/manpages.sh BUILD_DIR
set -uo pipefail

BUILD=${1:?usage: manpages.sh BUILD_DIR}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fbwire-man.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILS=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

command -v man >/dev/null || { echo "FAIL: man is not installed (man-db)"; exit 1; }
cmake --install "$BUILD" --prefix "$WORK/p" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; exit 1; }
progs=0
for prog in "$WORK"/p/bin/*; do
  name=${prog##*/}
  progs=$((progs + 1))
  page=$WORK/p/share/man/man1/$name.1.gz
  if [ ! -f "$page" ]; then
    fail "$name: no man page share/man/man1/$name.1.gz"
    continue
  fi
  if ! MANWIDTH=100 man -l "$page" >"$WORK/$name.txt" 2>"$WORK/$name.err"; then
    fail "$name: man -l failed: $(head -n 3 "$WORK/$name.err")"
    continue
  fi
  if [ -s "$WORK/$name.err" ]; then
    fail "$name: man -l warned: $(head -n 3 "$WORK/$name.err")"
  elif ! grep -A1 "^NAME" "$WORK/$name.txt" | grep -Eq "^ *$name +- "; then
    fail "$name: NAME section does not name it"; head -n 8 "$WORK/$name.txt"
  elif grep -Eq 'Sanitizer|ASan|not found \(set' "$WORK/$name.txt"; then
    fail "$name: the page holds an error instead of the help:"; grep -E 'Sanitizer|ASan|not found' "$WORK/$name.txt" | head -n 3
  elif ! grep -q -- '--[a-z]' "$WORK/$name.txt"; then
    fail "$name: the page lists no options"; head -n 12 "$WORK/$name.txt"
  else
    ok "$name: man page renders ($(wc -l <"$WORK/$name.txt") lines)"
  fi
done
[ "$progs" -ge 5 ] || fail "only $progs programs installed in bin/"
for f in LICENSE copyright; do
  [ -s "$WORK/p/share/doc/fbwire/$f" ] && ok "share/doc/fbwire/$f installed" || fail "share/doc/fbwire/$f missing"
done
grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/$' \
  "$WORK/p/share/doc/fbwire/copyright" && grep -q '^License: MIT$' "$WORK/p/share/doc/fbwire/copyright" &&
  ok "copyright is in Debian's machine-readable format, MIT" || fail "copyright format"
[ $FAILS -eq 0 ] || { echo "$FAILS failure(s)"; exit 1; }
echo "man pages of all $progs programs render"
