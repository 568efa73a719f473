#!/bin/sh
# SPDX-License-Identifier: MIT
# help2man-run.sh - what help2man runs to read a program's --help (cmake/manpage.cmake): the
# program named by $FBWIRE_MAN_PROG, its usage text on stdout whichever stream it uses and
# whatever its exit status (fbwire-compare prints its usage on stderr and exits 2).
"$FBWIRE_MAN_PROG" "$@" 2>&1
exit 0
