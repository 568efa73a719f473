#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check.py TOOL PCAP SESSION_JSON CRYPT DBFILE - checks fbwire-pcap's view of a node-firebird
capture (tests/node/node-firebird.sh) against what tests/node/session.js printed it did. The
connection is the one whose op_connect names DBFILE (other tests' sessions may share the port).
Exit 0 when every check holds, 1 with one line per failed check."""
import json
import subprocess
import sys

tool, pcap, session_file, crypt, dbfile = sys.argv[1:6]
failed = []


def check(ok, what):
    if not ok:
        failed.append(what)
    return ok


def run(*args):
    p = subprocess.run([tool, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


# Without --port: the connection is found by its content, whatever the port.
rc, out, err = run("dump", pcap, "--json")
lines = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
conns = {l["conn"] for l in lines if l.get("op") == "op_connect" and dbfile in l.get("file", "")}
if not check(len(conns) == 1, f"one connection opening {dbfile} (found {sorted(conns)})"):
    print("\n".join("FAIL: " + f for f in failed))
    sys.exit(1)
cid = conns.pop()
pk = [l for l in lines if l.get("conn") == cid and "op" in l]
rc, out, err = run("stats", pcap, "--json", "--trips")
st = next(c for c in json.loads(out)["connections"] if c["id"] == cid)
check(st["recognised"] == "op_connect", f"recognised: {st['recognised']}")
port = st["server"].rsplit(":", 1)[1]
rc, tout, err = run("turns", pcap, "--json", "--port", port)
tc = next(c for c in json.loads(tout)["connections"] if c["client"] == st["client"])
if crypt != "1":  # an encrypted session without its key is counted up to op_crypt only
    check(st["round_trips"] == tc["round_trips"],
          f"round trips {st['round_trips']} = turnarounds {tc['round_trips']}")

if crypt == "1":
    check(st["wire_crypt"] not in ("none", None), f"wire_crypt {st['wire_crypt']}")
    check(st["problem"] is not None and "no key" in st["problem"] and
          "cannot decode" not in st["problem"], f"problem says encrypted, no key: {st['problem']}")
    check(not any(l["dir"] == "C>S" and l["op"] in ("op_prepare_statement", "op_execute")
                  for l in pk), "nothing after op_crypt decoded as a statement")
    print(f"{dbfile}: wire_crypt {st['wire_crypt']}: {st['problem']}")
else:
    s = json.load(open(session_file))
    check(st["problem"] is None, f"decoded to the end (problem: {st['problem']})")
    check(st["wire_crypt"] == "none", f"wire_crypt {st['wire_crypt']}")
    ops = st["ops"]

    def sent(op):
        return ops.get(op, {}).get("packets_sent", 0)

    prepared = [l["sql"] for l in pk if l["op"] == "op_prepare_statement"]
    immediate = [l["sql"] for l in pk if l["op"] in ("op_exec_immediate", "op_exec_immediate2")]
    for sql in s["sql"]:
        check(sql in prepared or sql in immediate, f"statement in the capture: {sql}")
    ins = s["sql"][1]
    check(prepared.count(ins) + immediate.count(ins) == s["inserts"],
          f"{s['inserts']} inserts prepared (capture: {prepared.count(ins)})")
    execs = sent("op_execute") + sent("op_execute2")
    check(execs >= s["inserts"] + 4, f"executes: {execs}")
    # the range select's rows: the fetch that ended with the end-of-cursor reply after its prepare
    rng = next(i for i, l in enumerate(pk) if l.get("sql", "").startswith("SELECT ID, NAME"))
    ends = [l for l in pk[rng:] if l["op"] == "op_fetch_response" and l.get("messages") == 0]
    check(ends and ends[0].get("rows") == s["range_rows"],
          f"range select rows {s['range_rows']} (capture: {ends[0].get('rows') if ends else None})")
    check(s["point"] == "row 7" and s["range_rows"] == 10 and s["blob_read"] and s["kept"] == 1,
          f"the session itself: {s}")
    check(sent("op_create_blob") + sent("op_create_blob2") >= 1, "a blob created")
    check(sent("op_put_segment") + sent("op_batch_segments") >= 1, "blob segments written")
    check(sent("op_open_blob") + sent("op_open_blob2") >= 1, "a blob opened")
    check(sent("op_get_segment") >= 1, "blob segments read")
    check(sent("op_rollback") >= 1, "a rollback")
    check(sent("op_commit") + sent("op_commit_retaining") >= 1, "a commit")
    errs = [l for l in pk if l.get("status") == "error"]
    check(s["error"] and any("NO_SUCH_TABLE" in l.get("message", "") for l in errs),
          f"the SQL error in a reply: {[l.get('message') for l in errs]}")
    rc, out, err = run("replay", pcap, "--list", "--connection", str(cid))
    check(rc in (0, 1) and out.count(f'"{ins}"') == s["inserts"],
          f"replay --list lists the {s['inserts']} inserts (found {out.count(ins)}): {err[-300:]}")
    print(f"{dbfile}: {st['round_trips']} round trips, {st['packets_sent']} packets sent, "
          f"{len(prepared)} prepares, {execs} executes, protocol {st['protocol']}")

for f in failed:
    print("FAIL: " + f)
sys.exit(1 if failed else 0)
