#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_refs.py - every document that a comment or a doc cites exists in the repository.

    check_refs.py REPO_ROOT       check the repository (exit 1 and one line per problem)
    check_refs.py --self-test     check the checker on small trees it writes, good and broken

Scanned: every text file under wire/ auth/ driver/ tools/ tests/ scripts/ docs/ lua/ pcap/ cmake/
and the top-level *.md files. A problem is:
  - a Markdown document named in a comment or text (a path ending in .md) that does not exist.
    A path with a slash resolves from the repository root or from the citing file's directory; a
    bare name from the citing file's directory, the root, docs/ or docs/protocol/;
  - "<doc>.md#anchor" whose anchor is no heading of that file (GitHub's heading ids);
  - "<doc>.md §N" or "§N.M" or "§N-M" whose numbered heading does not exist in that file;
  - a relative Markdown link [text](target) whose target (any file or directory) does not exist,
    or whose #anchor is no heading of the target (or of the same file for "#anchor" alone);
  - any mention of the reference-notes folder outside the repository.
Names the project's programs write (not documents) are listed in OUTPUT_NAMES.
"""
import os
import re
import sys
import tempfile

import checkmain

SCAN_DIRS = ["base", "wire", "auth", "measure", "driver", "tools", "tests", "scripts", "docs", "lua", "pcap", "cmake"]
BARE_DIRS = ["", "docs", "docs/protocol"]
OUTPUT_NAMES = {
    "summary" + ".md": "written by tools/fbwire-compare-summary",
    "FILE" + ".md": "placeholder of an output file in usage text",
}
OUTSIDE_NOTES = "shared/" + "reference"

# A path ending in .md, not part of a URL, an absolute path or a shell/printf expansion.
TOKEN = re.compile(r"(?<![\w$%}/.:-])((?:\.\.?/|[\w-]+/)*[\w.-]*[\w-]\.md)(?![\w/])"
                   r"(#[\w-]+)?(?:\s*§\s*(\d+(?:\.\d+)*)(?:\s*[-–]\s*(\d+(?:\.\d+)*))?)?")
LINK = re.compile(r"\[[^\]]*\]\(([^()\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?(?:\s|$)")


def slug(text):
    """GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\*|~~", "", text.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


class Doc:
    def __init__(self, path):
        self.anchors, self.sections = set(), set()
        seen = {}
        fenced = False
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lstrip().startswith("```"):
                    fenced = not fenced
                    continue
                m = None if fenced else HEADING.match(line.rstrip("\n"))
                if not m:
                    continue
                title = m.group(2)
                base = slug(title)
                n = seen.get(base, 0)
                seen[base] = n + 1
                self.anchors.add(base if n == 0 else "%s-%d" % (base, n))
                num = NUMBERED.match(title)
                if num:
                    self.sections.add(num.group(1))


class Checker:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.docs = {}
        self.problems = []

    def doc(self, path):
        if path not in self.docs:
            self.docs[path] = Doc(path)
        return self.docs[path]

    def problem(self, rel, lineno, msg):
        self.problems.append("%s:%d: %s" % (rel, lineno, msg))

    def inside(self, path):
        p = os.path.realpath(path)
        return p == self.root or p.startswith(self.root + os.sep)

    def resolve(self, rel_dir, name, link):
        if link:
            cands = [os.path.join(self.root, rel_dir, name)]
        elif "/" in name:
            cands = [os.path.join(self.root, name), os.path.join(self.root, rel_dir, name)]
        else:
            cands = [os.path.join(self.root, rel_dir, name)]
            cands += [os.path.join(self.root, d, name) for d in BARE_DIRS]
        for c in cands:
            if os.path.exists(c) and self.inside(c):
                return c
        return None

    def check_anchor(self, rel, lineno, target, anchor, shown):
        if anchor and target.endswith(".md") and anchor not in self.doc(target).anchors:
            self.problem(rel, lineno, "%s: no heading with id #%s" % (shown, anchor))

    def check_sections(self, rel, lineno, target, secs, shown):
        have = self.doc(target).sections
        for s in secs:
            if s and s.rstrip(".") not in have:
                self.problem(rel, lineno, "%s: no section %s" % (shown, s.rstrip(".")))

    def check_file(self, rel):
        path = os.path.join(self.root, rel)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            return  # binary (captures, fuzz seeds)
        if "\0" in text:
            return
        rel_dir = os.path.dirname(rel)
        is_md = rel.endswith(".md")
        for lineno, line in enumerate(text.split("\n"), 1):
            if OUTSIDE_NOTES in line:
                self.problem(rel, lineno, "cites notes outside the repository (%s)" % OUTSIDE_NOTES)
            for m in TOKEN.finditer(line):
                name, anchor = m.group(1), (m.group(2) or "")[1:]
                if os.path.basename(name) in OUTPUT_NAMES:
                    continue
                target = self.resolve(rel_dir, name, False)
                if target is None:
                    self.problem(rel, lineno, "cites %s, which is not in the repository" % name)
                    continue
                self.check_anchor(rel, lineno, target, anchor, name)
                if m.group(3):
                    self.check_sections(rel, lineno, target, [m.group(3), m.group(4)], name)
            if not is_md:
                continue
            for m in LINK.finditer(line):
                dest = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", dest):
                    continue  # http:, https:, mailto:
                name, _, anchor = dest.partition("#")
                if not name:
                    self.check_anchor(rel, lineno, path, anchor, "#" + anchor)
                    continue
                target = self.resolve(rel_dir, name, True)
                if target is None:
                    self.problem(rel, lineno, "link to %s, which does not exist" % dest)
                    continue
                self.check_anchor(rel, lineno, target, anchor, dest)

    def files(self):
        for top in sorted(os.listdir(self.root)):
            if top.endswith(".md") and os.path.isfile(os.path.join(self.root, top)):
                yield top
        for d in SCAN_DIRS:
            base = os.path.join(self.root, d)
            for dirpath, dirnames, filenames in os.walk(base):
                dirnames[:] = sorted(x for x in dirnames if not x.startswith("."))
                for fn in sorted(filenames):
                    yield os.path.relpath(os.path.join(dirpath, fn), self.root)

    def run(self):
        for rel in self.files():
            self.check_file(rel)
        return self.problems


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def self_test():
    md = ".md"
    good = {
        "docs/a" + md: "# A\n\n## 1. One\n\n### 1.2 Sub part\n\nSee [b](b" + md + "#two-words), "
                       "[the code](../wire/x.c), [here](#1-one).\n",
        "docs/b" + md: "# B\n\n## Two words\n\n```\n## not a heading\n```\n",
        "wire/x.c": "/* x.c - see docs/a" + md + " §1.2 and b" + md + " (bare name, docs/). */\n",
        "tools/t.sh": "out=\"$DIR/summary" + md + "\"; echo \"$OUT/$name" + md + "\"  # outputs\n",
    }
    broken = {
        "wire/gone.c": "/* see docs/gone" + md + " */\n",
        "wire/sec.c": "/* see docs/a" + md + " §9 */\n",
        "wire/range.c": "/* see docs/a" + md + " §1-3 */\n",
        "wire/notes.c": "/* see " + OUTSIDE_NOTES + "/x" + md + " */\n",
        "docs/link" + md: "[x](nothere.txt)\n",
        "docs/anchor" + md: "[x](a" + md + "#nope)\n",
        "docs/self" + md: "# Self\n[x](#missing)\n",
        "tests/t.c": "/* anchor: docs/b" + md + "#three */\n",
    }
    failures = []
    with tempfile.TemporaryDirectory() as root:
        for rel, text in good.items():
            write(root, rel, text)
        got = Checker(root).run()
        if got:
            failures.append("good tree reported: %s" % got)
        for rel, text in broken.items():
            write(root, rel, text)
            got = [p for p in Checker(root).run() if p.startswith(rel + ":")]
            if not got:
                failures.append("%s: broken reference not reported" % rel)
            os.remove(os.path.join(root, rel))
    for f in failures:
        print("self-test: " + f)
    return 1 if failures else 0


def main(argv):
    return checkmain.run(argv, "check_refs", __doc__, self_test, lambda top: Checker(top).run())

if __name__ == "__main__":
    sys.exit(main(sys.argv))
