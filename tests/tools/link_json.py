#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""link_json.py: questions the link tests ask of an fbwire-link --json summary.

  link_json.py slice-check FILE      the first connection moved bytes both ways in exactly one
                                     write per byte (fbwire-link-sql.sh, --slice 1); exit 1 if not
  link_json.py bytes FILE up|down    bytes the first connection moved that way (link-faults.sh)
"""
import json
import sys


def first_connection(path):
    summary = json.load(open(path))
    return summary, summary["per_connection"][0]


def slice_check(path):
    s, c = first_connection(path)
    print("    up %d bytes in %d writes, down %d bytes in %d writes; link CPU %.1f us per chunk" % (
        c["up"]["bytes"], c["up"]["writes"], c["down"]["bytes"], c["down"]["writes"],
        s["cpu"]["us_per_chunk"]))
    ok = c["up"]["bytes"] > 0 and c["up"]["writes"] == c["up"]["bytes"] \
        and c["down"]["writes"] == c["down"]["bytes"]
    return 0 if ok else 1


def main(argv):
    if len(argv) == 2 and argv[0] == "slice-check":
        return slice_check(argv[1])
    if len(argv) == 3 and argv[0] == "bytes" and argv[2] in ("up", "down"):
        print(first_connection(argv[1])[1][argv[2]]["bytes"])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
