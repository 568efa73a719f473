#!/bin/sh
# SPDX-License-Identifier: MIT
# help2man-run.sh - what help2man runs to read a program's --help (cmake/manpage.cmake): the
# program named by $FBWIRE_MAN_PROG, its usage text on stdout whichever stream it uses and
# whatever its exit status (fbwire-compare prints its usage on stderr and exits 2).
# A program that prints nothing, or dies of a signal, fails the build instead of making an empty page.
out=$("$FBWIRE_MAN_PROG" "$@" 2>&1)
status=$?
if [ -z "$out" ] || [ "$status" -gt 128 ]; then
  echo "help2man-run.sh: $FBWIRE_MAN_PROG $* printed nothing or died (status $status)" >&2
  exit 1
fi
printf '%s\n' "$out"
exit 0
