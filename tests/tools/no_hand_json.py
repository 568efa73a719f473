#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""no_hand_json.py - no C source of the programs writes JSON by hand: every JSON document is built
with jansson (json_pack, json_object_set_new, ...) and written by json_dumpf / json_dump_file, so
escaping, nesting and commas are the library's, never a printf format's.

    no_hand_json.py REPO_ROOT     check tools/, driver/, measure/, wire/ (exit 1, one line a hit)
    no_hand_json.py --self-test   check the checker on lines it must and must not flag

A hit is a C string literal (comments are skipped) that formats a JSON object or key:
  - a key named in the literal followed by its colon: \"name\": (a space may follow the colon);
  - a key put in by a format, \"%s\":, with the value right after the colon or the literal ending
    there (a key emitter); messages that quote a value, "\"%s\": bad", are not keys;
  - an object opened on a key: {\"
Programs that read JSON (strstr on a key) live in tests/, which is not checked.
"""
import os
import re
import sys

DIRS = ["tools", "driver", "measure", "wire"]

KEY_NAMED = re.compile(r'\\"[A-Za-z_][A-Za-z0-9_]*\\": ?')
KEY_FORMAT = re.compile(r'\\"%[-.0-9]*[a-z]+\\":(?:$|[%{\[\\0-9ntf])')
OBJECT_OPEN = re.compile(r'\{\\"')

# A C string literal, or a comment, or a character literal (matched to be skipped).
TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|/\*.*?\*/|//[^\n]*|\'(?:[^\'\\\n]|\\.)*\'', re.S)


def literals(text):
    """(line number, literal body) of each string literal of C source text."""
    for m in TOKEN.finditer(text):
        tok = m.group(0)
        if tok.startswith('"'):
            yield text.count("\n", 0, m.start()) + 1, tok[1:-1]


def hand_json(body):
    """Why the literal body formats JSON, or None."""
    for what, rx in (("a JSON key", KEY_NAMED), ("a JSON key by format", KEY_FORMAT),
                     ("a JSON object", OBJECT_OPEN)):
        m = rx.search(body)
        if m:
            return "%s (%s)" % (what, m.group(0))
    return None


def check_file(path, shown):
    hits = []
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for line, body in literals(text):
        why = hand_json(body)
        if why:
            hits.append("%s:%d: JSON written by hand: %s; build it with jansson" % (shown, line, why))
    return hits


def check_tree(root):
    hits = []
    for d in DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith((".c", ".h")):
                    path = os.path.join(dirpath, name)
                    hits += check_file(path, os.path.relpath(path, root))
    return hits


# Lines of C the checker must flag (each the way a program of this tree once wrote JSON) ...
BAD = [
    r'putf(b, "{\"step\":%zu,\"kind\":\"%s\"", i + 1, name);',
    r'fbw_buf_printf(b, ",\"round_trips\":%.4f},", rt);',
    r'putf(e->b, ",\"%s\":", k);',
    r'putf(b, "%s\"%s\":%" PRIu64, first ? "" : ",", name, v);',
    r'fprintf(f, " \"cpu\": {\"user_s\":%.6f}", s);',
    r'put(b, ",\"not_replayed\":{");',
]
# ... and lines it must not: messages that quote a value, JSON in comments, escapes of a quote.
GOOD = [
    r'fprintf(stderr, "fbwire-link: %s \"%s\": %s\n", opt, val, what);',
    r'return fail(err, errlen, "\"%.40s\": given twice", p);',
    r'return bad(err, "nothing after \"://\"");',
    r'/* writes {"step":1,"kind":"execute"} */',
    r'// "\"key\":" in a comment',
    r'if (c == \'"\' || c == \'\\\\\') putf(b, "\\%c", c);',
    r'json_t *o = json_pack("{s:I,s:s}", "step", n, "kind", name);',
]


def self_test():
    fails = []
    for line in BAD:
        if not any(hand_json(b) for _, b in literals(line)):
            fails.append("not flagged: " + line)
    for line in GOOD:
        hits = [hand_json(b) for _, b in literals(line)]
        if any(hits):
            fails.append("flagged: %s (%s)" % (line, [h for h in hits if h]))
    for f in fails:
        print("no_hand_json.py self-test: " + f)
    return 1 if fails else 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if len(argv) != 1:
        print(__doc__)
        return 2
    if self_test():  # a checker that cannot flag anything proves nothing
        return 1
    hits = check_tree(argv[0])
    for h in hits:
        print(h)
    print("no_hand_json.py: %d C string literals format JSON by hand" % len(hits)
          if hits else "no_hand_json.py: no JSON written by hand in %s" % ", ".join(DIRS))
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
