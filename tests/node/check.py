#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check.py TOOL PCAP SESSION_JSON CRYPT DBFILE - checks fbwire-pcap's view of a node-firebird
capture (tests/node/node-firebird.sh) against what tests/node/session.js printed it did. The
connection is the one whose op_connect names DBFILE (other tests' sessions may share the port).
Exit 0 when every check holds, 1 with one line per failed check."""
import json
import os
import struct
import subprocess
import sys
import tempfile

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
    # node-firebird's blob read: a blob_read step on the id of the row it fetched, nothing of it
    # left as "not replayed"
    nr = next((l for l in out.splitlines() if l.startswith("not replayed:")), "")
    reads = [l for l in out.splitlines() if " blob_read " in l]
    check(reads and "op_open_blob" not in nr and "op_get_segment" not in nr,
          f"the blob read is a blob_read step (not replayed: {nr!r})")
    check(all("not replayable" not in l and " from step " in l for l in reads),
          f"the blob read's id comes from a fetched row: {reads}")
    print(f"{dbfile}: {st['round_trips']} round trips, {st['packets_sent']} packets sent, "
          f"{len(prepared)} prepares, {execs} executes, protocol {st['protocol']}")



def write_cut(src, dst, k, skip):
    """Records k.. of a classic pcap; skip > 0 drops that many payload bytes of the first frame
    (IP length and TCP sequence adjusted): the capture starts inside a packet."""
    b = open(src, "rb").read()
    e = "<" if struct.unpack("<I", b[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d) else ">"
    ip = {1: 14, 113: 16, 276: 20, 0: 4, 108: 4}.get(struct.unpack(e + "I", b[20:24])[0], 0)
    recs, o = [], 24
    while o + 16 <= len(b):
        cl = struct.unpack(e + "I", b[o + 8:o + 12])[0]
        recs.append([b[o:o + 8], bytearray(b[o + 16:o + 16 + cl]), struct.unpack(e + "I", b[o + 12:o + 16])[0]])
        o += 16 + cl
    rs = recs[k:]
    if skip and rs:
        f = rs[0][1]
        v6 = f[ip] >> 4 == 6
        th = ip + (40 if v6 else (f[ip] & 15) * 4)
        pay = th + (f[th + 12] >> 4) * 4
        n = min(skip, len(f) - pay)
        if n > 0:
            del f[pay:pay + n]
            lf = ip + 4 if v6 else ip + 2
            f[lf:lf + 2] = struct.pack(">H", struct.unpack(">H", f[lf:lf + 2])[0] - n)
            f[th + 4:th + 8] = struct.pack(">I", (struct.unpack(">I", f[th + 4:th + 8])[0] + n) & 0xFFFFFFFF)
            rs[0][2] -= n
    with open(dst, "wb") as out:
        out.write(b[:24])
        for h, f, ln in rs:
            out.write(h + struct.pack(e + "II", len(f), ln) + bytes(f))
    return len(recs)


# Start anywhere: the capture cut at 30 frames, also 6 bytes into a packet; round trips must equal
# turnarounds (+-1) and the session must be locked on to whenever 3 turnarounds remain.
if crypt != "1":
    fd, cut = tempfile.mkstemp(suffix=".pcap")
    os.close(fd)
    n = write_cut(pcap, cut, 0, 0)
    cuts = locked = 0
    for k in range(1, n - 1, max(1, n // 30)):
        for skip in (0, 6):
            write_cut(pcap, cut, k, skip)
            c = [x for x in json.loads(run("stats", cut, "--json", "--port", port)[1])["connections"]
                 if x["client"] == st["client"]]
            t = [x for x in json.loads(run("turns", cut, "--json", "--port", port)[1])["connections"]
                 if x["client"] == st["client"]]
            if not t:
                continue
            cuts += 1
            rt = c[0]["round_trips"] if c else 0
            check(abs(rt - t[0]["round_trips"]) <= 1,
                  f"cut at frame {k + 1}+{skip}: {rt} round trips, {t[0]['round_trips']} turnarounds")
            if t[0]["round_trips"] >= 3:
                ok = bool(c) and c[0]["recognised"] in ("op_connect", "mid-session")
                check(ok, f"cut at frame {k + 1}+{skip}: not recognised")
                locked += ok
    os.unlink(cut)
    print(f"{dbfile}: {cuts} cuts, recognised at {locked}")

for f in failed:
    print("FAIL: " + f)
sys.exit(1 if failed else 0)
