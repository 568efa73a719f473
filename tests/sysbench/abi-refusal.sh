#!/bin/sh
# SPDX-License-Identifier: MIT
# abi-refusal.sh <plug-in .so> <fake host> <fake host with 1.0.20 Lua sizes>
# The plug-in preloaded into look-alikes of sysbench must refuse with a clear message and
# leave the program working; preloaded into an unrelated program it must stay silent.
set -u
lib=$1 fake=$2 fake_lua_ok=$3
# A sanitizer build of the plug-in needs the ASan runtime loaded ahead of it when preloaded.
asan=$(ldd "$lib" 2>/dev/null | awk '/libasan/ {print $3; exit}')
[ -n "$asan" ] && lib="$asan:$lib"
fail=0
expect() { # name program pattern
  out=$(LD_PRELOAD=$lib "$2" 2>&1); rc=$?
  if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q "$3"; then
    echo "FAIL $1: rc=$rc output: $out"; fail=1
  else
    echo "PASS $1: $(printf '%s\n' "$out" | grep "$3" | head -n 1)"
  fi
}
expect "other sysbench version" "$fake" "not activating.*not sysbench 1.0.20"
expect "other driver layout" "$fake_lua_ok" "not activating.*do not have the 1.0.20 layout"
out=$(LD_PRELOAD=$lib sh -c 'echo unrelated ok' 2>&1)
if [ "$out" = "unrelated ok" ]; then echo "PASS unrelated program: silent"; else echo "FAIL unrelated: $out"; fail=1; fi
exit $fail
