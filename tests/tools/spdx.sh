#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# spdx.sh - every source file of the repository names its licence: "SPDX-License-Identifier: MIT"
# in its first 5 lines. Source files: C, headers, shell, Python, Lua, CMake (CMakeLists.txt,
# *.cmake, *.in templates) and any file starting with "#!" (tools/fbwire-compare, .ci/run, ...).
# The tracked files when the tree is a git checkout, else every such file under it. Also checks
# the LICENSE file is the MIT licence.
#
#   tests/tools/spdx.sh SOURCE_DIR
set -uo pipefail

SRC=$(cd "${1:?usage: spdx.sh SOURCE_DIR}" && pwd)
cd "$SRC" || exit 1
if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -d '' files < <(git ls-files -z)
else
  mapfile -d '' files < <(find . -path ./.git -prune -o -path './build*' -prune -o -path ./.fbwire -prune \
                                 -o -type f -print0 | sed -z 's|^\./||')
fi

is_source() {
  case $1 in
    *.c | *.h | *.sh | *.py | *.lua | *.cmake | *.in | CMakeLists.txt | */CMakeLists.txt) return 0 ;;
  esac
  [ "$(head -c 2 "$1" 2>/dev/null | tr -d '\000')" = "#!" ]
}

checked=0 missing=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue # deleted in the work tree
  is_source "$f" || continue
  checked=$((checked + 1))
  if ! head -n 5 "$f" | grep -q 'SPDX-License-Identifier: MIT'; then
    echo "FAIL: $f: no 'SPDX-License-Identifier: MIT' in its first 5 lines"
    missing=$((missing + 1))
  fi
done
[ "$checked" -gt 50 ] || { echo "FAIL: only $checked source files found under $SRC"; exit 1; }
if [ -f LICENSE ] && head -n 1 LICENSE | grep -qx 'MIT License' &&
   grep -qx 'Copyright (c) 2026 fbwire developers' LICENSE; then
  echo "ok: LICENSE is the MIT licence"
else
  echo "FAIL: LICENSE missing or not the MIT licence of the fbwire developers"
  missing=$((missing + 1))
fi
[ "$missing" -eq 0 ] || { echo "$missing failure(s) in $checked source files"; exit 1; }
echo "ok: all $checked source files carry SPDX-License-Identifier: MIT"
