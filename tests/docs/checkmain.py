# SPDX-License-Identifier: MIT
"""checkmain.py - the command line the docs checks share (check_map.py, check_refs.py,
check_driver.py): `check_X.py --self-test` runs only the self-test; `check_X.py TOP` runs the
self-test first (a check that no longer finds what it must is itself a failure), then the check on
the tree at TOP, one problem a line and a count."""
import os
import sys


def run(argv, name, doc, self_test, find_problems):
    """Exit status for argv; doc is the script's docstring (its second paragraph is the usage),
    find_problems(top) the list of problems found in the tree at top."""
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print(doc.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    if self_test():
        return 1
    problems = find_problems(argv[1])
    for p in problems:
        print(p)
    print("%s: %d problem(s)" % (name, len(problems)))
    return 1 if problems else 0
