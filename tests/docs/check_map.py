#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_map.py - docs/design.md, the map of the code, cannot go stale.

    check_map.py REPO_ROOT       check the repository (exit 1 and one line per problem)
    check_map.py --self-test     check the checker on small trees it writes, good and broken

A problem is:
  - a .c file under base/ wire/ auth/ measure/ driver/ tools/ pcap/ whose path (e.g. wire/conn.c) the map does not name;
  - a path the map names in backquotes (`wire/x.c`, `tools/y/`) that does not exist;
  - a file under tools/ that includes an internal header (a header under wire/, auth/ or base/ that
    wire/fbwire.h does not include, directly or not) which the map's "Current exceptions" table does
    not list for that file;
  - a row of that table that no longer matches an include (the exception was resolved: drop it).
  - a file of a lower library layer that includes a header of a higher one: base/ includes only
    base/, auth/ only base/ and auth/ (the folders are the layering base <- auth <- wire).
A tool's own headers (found next to the including file) are always allowed.
"""
import os
import re
import sys
import tempfile

import checkmain

C_DIRS = ["base", "wire", "auth", "measure", "driver", "tools", "pcap"]
# The library's folders: their headers are internal unless wire/fbwire.h includes them. measure/ is
# not the library: its header is the measurement module's contract, open to every tool.
LIB_DIRS = ["wire", "auth", "base"]
PATH_ROOTS = ("base/", "measure/", "wire/", "auth/", "driver/", "tools/", "scripts/", "pcap/", "lua/", "tests/", "docs/",
              "cmake/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Which library folders a folder's files may include from (wire/ may use all three).
LAYER_MAY_USE = {"base": {"base"}, "auth": {"base", "auth"}}
ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*`([^`]+)`\s*\|")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def walk(root, top, exts):
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            if fn.endswith(exts):
                yield os.path.relpath(os.path.join(dirpath, fn), root)


def public_headers(root):
    """wire/fbwire.h and everything it includes, resolved in wire/ and auth/."""
    seen, todo = set(), ["fbwire.h"]
    while todo:
        h = todo.pop()
        if h in seen:
            continue
        path = next((os.path.join(root, d, h) for d in LIB_DIRS
                     if os.path.isfile(os.path.join(root, d, h))), None)
        if path is None:
            continue
        seen.add(h)
        todo.extend(INCLUDE.findall(read(path)))
    return seen


def exceptions(design):
    """(tool file, header) pairs of the table under the "Current exceptions" heading."""
    out, inside = set(), False
    for line in design.split("\n"):
        if line.startswith("#"):
            inside = "current exceptions" in line.lower()
            continue
        m = ROW.match(line) if inside else None
        if m:
            out.add((m.group(1), m.group(2)))
    return out


def check(root):
    problems = []
    design_path = os.path.join(root, "docs", "design.md")
    if not os.path.isfile(design_path):
        return ["docs/design.md: missing"]
    design = read(design_path)

    def named(rel):
        return re.search(r"(?<![\w/.-])" + re.escape(rel) + r"(?![\w/.-])", design) is not None

    for d in C_DIRS:
        for rel in walk(root, d, (".c",)):
            if not named(rel):
                problems.append("%s: not named in docs/design.md" % rel)

    for m in re.finditer(r"`([^`\s]+)`", design):
        p = m.group(1)
        if p.startswith(PATH_ROOTS) and not re.search(r"[*<>{}]", p):
            if not os.path.exists(os.path.join(root, p.split(" ")[0])):
                problems.append("docs/design.md: names %s, which does not exist" % p)

    internal = set()
    for d in LIB_DIRS:
        for rel in walk(root, d, (".h",)):
            internal.add(os.path.basename(rel))
    internal -= public_headers(root)
    allowed = exceptions(design)
    used = set()
    for rel in walk(root, "tools", (".c", ".h")):
        for h in INCLUDE.findall(read(os.path.join(root, rel))):
            if os.path.isfile(os.path.join(root, os.path.dirname(rel), h)):
                continue  # the tool's own header
            if h not in internal:
                continue
            if (rel, h) in allowed:
                used.add((rel, h))
            else:
                problems.append("%s: includes internal header %s, not listed in docs/design.md "
                                "(Current exceptions)" % (rel, h))
    for layer, may in sorted(LAYER_MAY_USE.items()):
        for rel in walk(root, layer, (".c", ".h")):
            for h in INCLUDE.findall(read(os.path.join(root, rel))):
                homes = [d for d in LIB_DIRS if os.path.isfile(os.path.join(root, d, h))]
                if homes and not set(homes) & may:
                    problems.append("%s: includes %s from %s/, a layer above %s/" % (rel, h, homes[0], layer))
    for rel, h in sorted(allowed - used):
        problems.append("docs/design.md: exception %s includes %s no longer holds; remove it"
                        % (rel, h))
    return problems


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def self_test():
    design = ("# map\n\n| `wire/a.c` | `auth/b.c` | `tools/t/main.c` | `tools/t/own.h` |\n\n"
              "### Current exceptions\n\n| tool file | header |\n|---|---|\n"
              "| `tools/t/main.c` | `priv.h` | why |\n\n## Rules\n")
    tree = {
        "wire/fbwire.h": '#include "pub.h"\n', "wire/pub.h": '#include "err.h"\n',
        "wire/err.h": "", "wire/priv.h": "", "auth/auth.h": "",
        "wire/a.c": "", "auth/b.c": "", "tools/t/own.h": "",
        "tools/t/main.c": '#include "fbwire.h"\n#include "err.h"\n#include "own.h"\n#include "priv.h"\n',
        "docs/design.md": design,
    }
    cases = [
        ("a .c file the map does not name", {"wire/new.c": ""}),
        ("a named path that does not exist", {"docs/design.md": design + "`wire/gone.c`\n"}),
        ("an internal header not listed", {"tools/t/main.c": tree["tools/t/main.c"] + '#include "auth.h"\n'}),
        ("an exception that no longer holds", {"tools/t/main.c": '#include "fbwire.h"\n'}),
        ("a header included only privately", {"wire/fbwire.h": ""}),
        ("a lower layer including a higher one", {"auth/b.c": '#include "pub.h"\n'}),
    ]
    failures = []
    with tempfile.TemporaryDirectory() as root:
        for rel, text in tree.items():
            write(root, rel, text)
        got = check(root)
        if got:
            failures.append("good tree reported: %s" % got)
        for what, change in cases:
            for rel, text in change.items():
                write(root, rel, text)
            if not check(root):
                failures.append("not reported: " + what)
            for rel in change:
                if rel in tree:
                    write(root, rel, tree[rel])
                else:
                    os.remove(os.path.join(root, rel))
    for f in failures:
        print("self-test: " + f)
    return 1 if failures else 0


def main(argv):
    return checkmain.run(argv, "check_map", __doc__, self_test, check)

if __name__ == "__main__":
    sys.exit(main(sys.argv))
