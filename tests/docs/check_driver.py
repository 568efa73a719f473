#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_driver.py - the sysbench driver keeps its layers and its own names.

    check_driver.py REPO_ROOT     check the repository (exit 1 and one line per problem)
    check_driver.py --self-test   check the checker on small trees it writes, good and broken

A problem is:
  - a cycle among driver/ files: a header that includes itself through other driver headers, or
    .c files that use each other's functions or data in a ring (a.c calls b.c, which calls a.c,
    directly or through others). A file uses another when it names a function or variable that
    the other defines and does not make static (struct members and designated initializers,
    written after '.' or '->', are not uses). The driver's parts must point one way: an entry file
    at the top (the one sysbench's table reaches), layers under it;
  - a function, variable or type (typedef, struct, union or enum tag), an enumerator or a macro
    that a file under driver/, measure/ or a C tool's directory (tools/fbwire-*) defines or
    declares, not static, with the library's prefix fbw_ or FBW_: those name libfbwire (base/,
    auth/, wire/) only. The driver's own names begin with sbdrv_ (be_fbwire_, be_fbclient_ inside
    a backend), measure/'s with srvcpu_, fbwire-pcap's with pcaptool_ (PCAPTOOL_ for macros and
    enumerators), fbwire-sql's with sqltool_, fbwire-bench's with benchtool_ (docs/design.md, Rules).
The C is read as text (comments and strings blanked, bodies skipped), which is enough for the
project's style; it is no compiler.
"""
import os
import re
import sys
import tempfile

import checkmain

CYCLE_DIRS = ["driver"]
PREFIX_DIRS = ["driver", "measure", "tools/fbwire-pcap", "tools/fbwire-sql", "tools/fbwire-bench",
               "tools/fbwire-report", "tools/fbwire-link", "tools/fbwire-cpu"]
# What each directory's own names begin with, for the message (docs/design.md, Rules).
OWN_PREFIX = {"driver": "sbdrv_", "measure": "srvcpu_", "tools/fbwire-pcap": "pcaptool_",
              "tools/fbwire-sql": "sqltool_", "tools/fbwire-bench": "benchtool_"}
LIBRARY_PREFIX = re.compile(r"^(fbw|FBW)_")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)", re.M)
IDENT = re.compile(r"(?<![\w.>])(?<!->)([A-Za-z_]\w*)")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def blank(text):
    """Comments and string/char literals emptied, line breaks kept."""
    def keep_lines(m):
        return "\n" * m.group(0).count("\n")
    text = re.sub(r"/\*.*?\*/", keep_lines, text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(?:\\.|[^'\\\n])*'", "''", text)


def file_scope(text):
    """The text outside braces of functions and initializers, preprocessor lines dropped; a body
    stays as '{}' so definitions can be told from declarations. Struct/enum bodies are kept
    (their tags and enumerators are file-scope names)."""
    text = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", "", blank(text), flags=re.M)
    out, depth, i = [], 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "{":
            head = "".join(out[-200:]) if depth == 0 else ""
            keep = depth == 0 and re.search(r"\b(struct|union|enum)\b[^;(){}]*$", head)
            if keep:
                j, d = i, 0
                while j < len(text):  # copy the aggregate's body with its braces
                    d += {"{": 1, "}": -1}.get(text[j], 0)
                    j += 1
                    if d == 0:
                        break
                out.append(text[i:j])
                i = j
                continue
            if depth == 0:
                out.append("{}")
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
        i += 1
    return "".join(out)


def declarations(text):
    """(name, kind, static) for each file-scope name a C file or header defines or declares."""
    scope = file_scope(text)
    found = [(m.group(1), "macro", False) for m in DEFINE.finditer(blank(text))]
    for m in re.finditer(r"\b(?:struct|union|enum)\s+([A-Za-z_]\w*)\s*\{", scope):
        found.append((m.group(1), "type", False))
    for m in re.finditer(r"\benum\b[^{;]*\{([^{}]*)\}", scope):
        for item in m.group(1).split(","):
            name = re.match(r"\s*([A-Za-z_]\w*)", item)
            if name:
                found.append((name.group(1), "enumerator", False))
    flat = scope
    while re.search(r"\{[^{}]*[^{}\s][^{}]*\}|\{[^{}]*\{\}[^{}]*\}", flat):
        flat = re.sub(r"\{[^{}]*\}", "{}", flat)
    flat = re.sub(r"\)\s*\{\}", "){};", flat)  # a function body ends its definition
    for stmt in flat.split(";"):
        s = " ".join(stmt.split())
        if not s:
            continue
        static = re.match(r"(?:(?:extern|inline|const)\s+)*static\b", s) is not None
        if s.startswith("typedef"):
            name = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\(|([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$", s)
            if name:
                found.append((name.group(1) or name.group(2), "type", False))
            continue
        fn = re.match(r"[^(=]*?\b([A-Za-z_]\w*)\s*\(", s)
        if fn and not re.search(r"\(\s*\*", s[:fn.end() + 2]):
            found.append((fn.group(1), "function", static))
            continue
        var = re.match(r"[^=(]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*(?:=|$)", s)
        if var and not re.match(r"(?:struct|union|enum)\s+\w+\s*(?:\{\})?$", s):
            found.append((var.group(1), "variable", static))
    return found


def uses(text):
    body = re.sub(r"^\s*#[^\n]*", "", blank(text), flags=re.M)
    return set(IDENT.findall(body))


def walk(root, top, exts):
    base = os.path.join(root, top)
    if not os.path.isdir(base):
        return []
    return sorted(os.path.join(top, f) for f in os.listdir(base) if f.endswith(exts))


def find_cycle(graph):
    """One cycle of graph (node -> set of nodes) as a list of nodes, or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                got = visit(m)
                if got:
                    return got
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            got = visit(n)
            if got:
                return got
    return None


def cycles(root, d):
    problems = []
    headers = {os.path.basename(p): p for p in walk(root, d, (".h",))}
    hgraph = {h: {i for i in INCLUDE.findall(read(os.path.join(root, p))) if i in headers}
              for h, p in headers.items()}
    cyc = find_cycle(hgraph)
    if cyc:
        problems.append("%s/: include cycle %s" % (d, " -> ".join(cyc)))
    sources = walk(root, d, (".c",))
    owner = {}
    for rel in sources:
        for name, kind, static in declarations(read(os.path.join(root, rel))):
            if kind in ("function", "variable") and not static:
                owner.setdefault(name, rel)
    graph = {}
    for rel in sources:
        graph[rel] = {owner[n] for n in uses(read(os.path.join(root, rel)))
                      if n in owner and owner[n] != rel}
    done = set()
    for n in sorted(graph):  # every group of files that reach each other, with one ring of it
        if n in done:
            continue
        group = {m for m in reach(graph, n) if n in reach(graph, m)}
        done |= group
        if len(group) > 1:
            cyc = find_cycle({k: graph[k] & group for k in group})
            problems.append("%s/: files use each other in a cycle: %s (e.g. %s); a layer may only "
                            "call layers under it" % (d, ", ".join(sorted(os.path.basename(g) for g in group)),
                                                      " -> ".join(os.path.basename(c) for c in cyc)))
    return problems


def reach(graph, n):
    seen, todo = set(), [n]
    while todo:
        for m in graph.get(todo.pop(), ()):
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return seen


def prefixes(root, d):
    problems = []
    for rel in walk(root, d, (".c", ".h")):
        seen = set()
        for name, kind, static in declarations(read(os.path.join(root, rel))):
            if static or not LIBRARY_PREFIX.match(name) or name in seen:
                continue
            seen.add(name)
            problems.append("%s: %s %s has the library's prefix (use %s)"
                            % (rel, kind, name, OWN_PREFIX.get(d, "the tool's own prefix")))
    return problems


def check(root):
    problems = []
    for d in CYCLE_DIRS:
        problems += cycles(root, d)
    for d in PREFIX_DIRS:
        problems += prefixes(root, d)
    return problems


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def self_test():
    tree = {
        "driver/top.h": '#include "low.h"\nint top_op(int x);\n',
        "driver/top.c": ('#include "top.h"\nstatic int helper(void) { return 1; }\n'
                         'int top_op(int x) { return low_op(x) + helper(); }\n'
                         'static const struct vt { int (*low_op)(int); } vt = {.low_op = low_op};\n'),
        "driver/low.h": ('typedef struct sbdrv_thing { int a; } sbdrv_thing;\nenum { SBDRV_A = 1 };\n'
                         '#define SBDRV_MAX 3\nint low_op(int x);\nextern int sbdrv_count;\n'),
        "driver/low.c": ('#include "low.h"\n#include "fbwire.h"\nint sbdrv_count;\n'
                         '/* top_op() is named in a comment only */\n'
                         'static int fbw_private(void) { return 0; }\n'
                         'int low_op(int x) { struct s *p = 0; (void)p; fbw_call(x); return x->top_op + fbw_private(); }\n'),
        "measure/m.h": "int srvcpu_read(int fd);\n",
        "tools/fbwire-pcap/t.h": "enum { PCAPTOOL_STEP_A = 1 };\nint pcaptool_run(void);\n",
    }
    cases = [
        ("a call cycle", {"driver/low.c": tree["driver/low.c"] + "int back(void) { return top_op(1); }\n"}),
        ("an include cycle", {"driver/low.h": '#include "top.h"\n' + tree["driver/low.h"]}),
        ("a driver function with the library's prefix", {"driver/low.c": tree["driver/low.c"] + "int fbw_low(void) { return 0; }\n"}),
        ("a prototype with the library's prefix", {"driver/low.h": tree["driver/low.h"] + "void fbw_sbdrv_x(int a,\n    int b);\n"}),
        ("a typedef with the library's prefix", {"driver/low.h": tree["driver/low.h"] + "typedef struct fbw_be fbw_be;\n"}),
        ("a struct tag with the library's prefix", {"driver/low.h": tree["driver/low.h"] + "struct fbw_rec {\n    int a;\n};\n"}),
        ("an enumerator with the library's prefix", {"driver/low.h": tree["driver/low.h"] + "typedef enum {\n    FBW_X = 0,\n    FBW_Y\n} sbdrv_e;\n"}),
        ("a macro with the library's prefix", {"driver/top.h": tree["driver/top.h"] + "#define FBW_TOP_H\n"}),
        ("a variable with the library's prefix", {"driver/top.c": tree["driver/top.c"] + "const int fbw_table[2] = {1, 2};\n"}),
        ("a measure/ function with the library's prefix", {"measure/m.h": "int fbw_srvcpu_read(int fd);\n"}),
        ("a tool's enumerator with the library's prefix",
         {"tools/fbwire-pcap/t.h": tree["tools/fbwire-pcap/t.h"] + "enum { FBW_STEP_B = 2 };\n"}),
        ("a tool's include guard with the library's prefix",
         {"tools/fbwire-pcap/t.h": "#define FBW_PCAP_T_H\n" + tree["tools/fbwire-pcap/t.h"]}),
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
                write(root, rel, tree[rel])
    for f in failures:
        print("self-test: " + f)
    return 1 if failures else 0


def main(argv):
    return checkmain.run(argv, "check_driver", __doc__, self_test, check)

if __name__ == "__main__":
    sys.exit(main(sys.argv))
