#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_error_model.py - the driver and the tools take error decisions from the library's error
model (wire/errclass.c, docs/design.md "Rules"), not from tables or text of their own:

  1. no string comparison (strstr, strcmp, memcmp, ...) whose arguments name an error message
     (`msg`, `errmsg`, `sql_errmsg`): decisions never read message text;
  2. no gds code written as a number (335544xxx, 336xxxxxxx): codes are named through wire/msgs.h
     and classes come from fbw_err_classify / fbw_err_in_class.

Comments and string literals are not code and are skipped. The checker first proves on built-in
samples that it catches both kinds, so it cannot pass by matching nothing.

  tests/driver/check_error_model.py SOURCE_DIR
"""
import pathlib
import re
import sys

FOLDERS = ("driver", "tools")
COMPARE = re.compile(r"\b(strstr|strcasestr|strn?cmp|strn?casecmp|memcmp|memmem)\s*\(")
MESSAGE = re.compile(r"\b(msg|errmsg|sql_errmsg)\b")
GDS_NUMBER = re.compile(r"\b33[56]\d{6}[uU]?\b")


def strip_comments_and_strings(text):
    """The code of a C file with comments and string/char literals blanked (lines kept)."""
    pattern = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def call_args(code, start):
    """The argument text of the call whose '(' is at start, up to its matching ')'."""
    depth = 0
    for i in range(start, len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")":
            depth -= 1
            if depth == 0:
                return code[start + 1:i]
    return code[start + 1:]


def findings(name, text):
    code = strip_comments_and_strings(text)
    out = []
    for m in COMPARE.finditer(code):
        if MESSAGE.search(call_args(code, m.end() - 1)):
            line = code.count("\n", 0, m.start()) + 1
            out.append(f"{name}:{line}: {m.group(1)} on an error message: decide with "
                       "fbw_err_classify / fbw_err_in_class (status.h)")
    for m in GDS_NUMBER.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        out.append(f"{name}:{line}: gds code {m.group(0)} written as a number: use wire/msgs.h "
                   "names or the library's classes")
    return out


SAMPLES = {
    "text match": 'if (strstr(e->msg, "cannot update erased record")) return 1;',
    "text compare": "return strncmp(err.msg, want, n) == 0;",
    "gds table": "static const uint32_t codes[] = {335544336u, 335544451u};",
    "dsql code": "if (e->gds[0] == 336397208) retry();",
}
CLEAN = {
    "class": "return fbw_err_in_class(e, FBW_EC_UPDATE_CONFLICT);",
    "comment": '/* strstr(e->msg, "x") and 335544336 in a comment */ int x = 1;',
    "string": 'log("gds 335544336: strstr(msg, ...)");',
    "other text": 'const char *p = strstr(text, "accounting cost (");',
}


def self_test():
    ok = True
    for what, sample in SAMPLES.items():
        if not findings(what, sample):
            print(f"self-test: the checker misses a {what}: {sample}")
            ok = False
    for what, sample in CLEAN.items():
        if findings(what, sample):
            print(f"self-test: the checker flags a {what}: {sample}")
            ok = False
    return ok


def main():
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    if not self_test():
        return 1
    files = [p for d in FOLDERS for p in sorted((src / d).rglob("*")) if p.suffix in (".c", ".h")]
    if not files:
        print(f"no C sources under {src}/{{{','.join(FOLDERS)}}}")
        return 1
    problems = []
    for p in files:
        problems += findings(str(p.relative_to(src)), p.read_text(errors="replace"))
    for line in problems:
        print(line)
    print(f"{len(files)} files checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
