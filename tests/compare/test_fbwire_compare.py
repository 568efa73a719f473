# SPDX-License-Identifier: MIT
"""Unit tests of tools/fbwire_compare: parser, medians and ranges, workload list, build lookup,
targets, one run's record, the summary and its model, procnet, charts, the CLI. No server needed;
the fbwire-link test runs only when the binary is built (skipped with the reason otherwise)."""
import importlib
import json
import re
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from fbwire_compare import (builds, charts, cli, link, procnet, record, runner, stats, summary,
                            sysbench, targets, workloads)

PS = "oltp_point_select-t2-%s-%s"


def read(path):
    with open(path) as f:
        return f.read()


# ---------------------------------------------------------------- sysbench parser

def test_parse_point_select(fixtures):
    d = sysbench.parse(read(os.path.join(fixtures, "point_select/runs", PS % ("pg", "r1") + ".log")))
    assert d["tps"] == 46584.65
    assert d["transactions"] == 93399 and d["events"] == 93399
    assert d["queries"] == {"read": 93399, "write": 0, "other": 0, "total": 93399}
    assert d["latency_ms"] == {"min": 0.01, "avg": 0.04, "max": 18.34, "p95": 0.03}
    assert d["duration_s"] == 2.0032 and d["errors"] == 0 and d["reconnects"] == 0


def test_parse_read_write_through_fbwire(fixtures):
    d = sysbench.parse_file(os.path.join(fixtures, "read_write/oltp_read_write-t1-fb4-fbwire-r1.log"))
    assert d["queries"] == {"read": 1806, "write": 516, "other": 258, "total": 2580}
    assert d["transactions"] == 129 and d["tps"] == 63.25 and d["qps"] == 1264.91
    assert d["latency_ms"]["min"] == 2.63 and d["latency_ms"]["max"] == 35.61


def test_parse_failed_run_is_none(fixtures):
    assert sysbench.parse_file(os.path.join(fixtures, "read_write/failed.log")) is None
    assert sysbench.parse("") is None
    assert sysbench.parse_file(os.path.join(fixtures, "no-such-file.log")) is None


def test_parse_truncated_output_is_none(fixtures):
    text = read(os.path.join(fixtures, "point_select/runs", PS % ("pg", "r1") + ".log"))
    assert sysbench.parse(text[:text.index("General statistics")]) is None


# ---------------------------------------------------------------- medians and ranges

def test_median_range():
    assert stats.median_range([3, 1, 2]) == {"median": 2, "min": 1, "max": 3, "n": 3}
    assert stats.median_range([4, None, 1]) == {"median": 2.5, "min": 1, "max": 4, "n": 2}
    assert stats.median_range([None, None]) is None
    assert stats.median_range(iter([])) is None


def test_median_item_keeps_the_run_together():
    runs = [{"tps": 5, "id": "a"}, {"tps": 1, "id": "b"}, {"tps": 9, "id": "c"}, {"tps": None, "id": "d"}]
    assert stats.median_item(runs, lambda r: r["tps"])["id"] == "a"
    # an even count: the lower middle one, a run that happened
    assert stats.median_item(runs[:2], lambda r: r["tps"])["id"] == "b"
    assert stats.median_item([], lambda r: r) is None


def test_fmt():
    assert stats.fmt(None) == "n/a"
    assert stats.fmt(12345.6) == "12,346"
    assert stats.fmt({"median": 2, "min": 1, "max": 3, "n": 3}) == "2 (1–3)"
    assert stats.fmt({"median": 2.0, "min": 2.0, "max": 2.0, "n": 3}, 1) == "2.0"


# ---------------------------------------------------------------- workloads

def test_workload_list():
    assert len(workloads.OLTP) == 10 and "bulk_insert" not in workloads.OLTP
    assert workloads.ALL[-1] == "bulk_insert"
    assert set(workloads.QUICK) <= set(workloads.OLTP)
    assert workloads.split("a, b,,c") == ["a", "b", "c"]
    assert workloads.tables_for("select_random_points", 4) == 1
    assert workloads.tables_for("oltp_read_only", 4) == 4
    assert workloads.fresh_per_run("bulk_insert") and not workloads.fresh_per_run("oltp_insert")


def test_missing_workloads(tmp_path):
    (tmp_path / "oltp_read_only.lua").write_text("-- stub script for the lookup\n")
    assert workloads.missing(["oltp_read_only", "nope"], str(tmp_path)) == ["nope"]
    # the project's own workload is found in lua/, not in sysbench's directory
    assert workloads.missing(["oltp_blob"], str(tmp_path)) == []


def test_project_workload():
    path = workloads.script("oltp_blob")
    assert path.endswith(os.path.join("lua", "oltp_blob.lua")) and os.path.isfile(path)
    assert workloads.script("oltp_read_only") == "oltp_read_only"
    assert workloads.table_names("oltp_blob", 4) == ["sbblob"]
    assert workloads.table_names("oltp_read_only", 2) == ["sbtest1", "sbtest2"]


# ---------------------------------------------------------------- build lookup

def make_exe(path, mtime=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    if mtime:
        os.utime(path, (mtime, mtime))


def test_newest_build_wins(tmp_path):
    repo, now = tmp_path / "repo", time.time()
    (repo / "tools" / "fbwire-pcap").mkdir(parents=True)  # the source directory, not the program
    make_exe(repo / "build" / "tools" / "fbwire-pcap", now - 100)
    make_exe(repo / "build-clang" / "tools" / "fbwire-pcap", now - 10)
    b = builds.Builds(str(repo / "tools"), env={})
    assert b.find("fbwire-pcap") == str(repo / "build-clang" / "tools" / "fbwire-pcap")
    assert b.find("fbwire-link") is None


def test_installed_next_to_the_command_and_env_override(tmp_path):
    prefix = tmp_path / "usr"
    make_exe(prefix / "bin" / "fbwire-cpu")
    (prefix / "lib").mkdir()
    (prefix / "lib" / "libfbwire-sysbench.so").write_text("")
    b = builds.Builds(str(prefix / "bin"), env={})
    assert b.find("fbwire-cpu") == str(prefix / "bin" / "fbwire-cpu")
    assert b.find("libfbwire-sysbench.so") == str(prefix / "lib" / "libfbwire-sysbench.so")
    b = builds.Builds(str(prefix / "bin"), env={"FBWIRE_CPU": "/opt/x/fbwire-cpu"})
    assert b.find("fbwire-cpu") == "/opt/x/fbwire-cpu"


# ---------------------------------------------------------------- targets

ENV = {"PEER_PG_HOST": "127.0.0.1", "PEER_PG_PORT": "5433", "PEER_PG_USER": "sbtest", "PEER_PG_DB": "sbtest",
       "PEER_PG_PASSWORD": "pgsecret", "PEER_MARIADB_HOST": "127.0.0.1", "PEER_MARIADB_PORT": "3307",
       "PEER_MARIADB_USER": "sbtest", "PEER_MARIADB_DB": "sbtest", "PEER_MARIADB_PASSWORD": "mysecret",
       "FBW_USER": "SYSDBA", "FBW_PASSWORD": "fbsecret", "FBW_FB3_HOST": "127.0.0.1", "FBW_FB3_PORT": "3050",
       "FBW_DBDIR_FB3": "/db/fb3", "PEER_FB_DB": "sbtest.fdb"}


def test_targets_and_crypt():
    off, on = targets.Crypt(False), targets.Crypt(True)
    t = targets.resolve(["pg", "fb3-fbclient-per-statement", "x"], {"x": ("fb3-fbwire", "--fbwire-autocommit=pipelined")}, on)
    assert [x.engine for x in t] == ["pg", "fb3", "fb3"]
    assert t[1].options == ["--db-driver=fbclient", "--fbclient-wire-crypt=required", "--fbclient-autocommit=per-statement"]
    assert t[2].options[-1] == "--fbwire-autocommit=pipelined" and t[2].driver == "fbwire"
    assert targets.resolve(["mariadb"], {}, off)[0].options == ["--db-driver=mysql", "--mysql-ssl=off"]
    # any fb<major> is a Firebird engine; whether it is registered is servers.env's business
    assert [x.engine for x in targets.resolve(["fb5-fbwire", "fb6-fbclient"], {}, off)] == ["fb5", "fb6"]
    for bad in ("fb5-nope", "fbx-fbwire", "fb-fbwire", "fb5"):
        with pytest.raises(ValueError):
            targets.resolve([bad], {}, off)
    servers = targets.Servers(dict(ENV, FBW_FB6_HOST="127.0.0.1", FBW_FB6_PORT="3061", FBW_DBDIR_FB6="/srv/fb6",
                                   FBW_FB6_USER="OWNER6", FBW_FB6_PASSWORD="six"), off)
    with pytest.raises(KeyError, match="fb5 is not registered"):
        servers.host_port("fb5")
    assert servers.fb_dsn("fb6") == "127.0.0.1/3061:/srv/fb6/sbtest.fdb"
    assert servers.fb_login("fb6") == {"ISC_USER": "OWNER6", "ISC_PASSWORD": "six"}, "a registration's own login"
    assert servers.fb_login("fb3") == {"ISC_USER": "SYSDBA", "ISC_PASSWORD": "fbsecret"}
    assert servers.env("fb6")["ISC_PASSWORD"] == "six" and "six" not in servers.conn_string("fb6")
    with pytest.raises(ValueError):
        targets.parse_spec("nobase")
    assert targets.parse_spec("a=fb3-fbwire:--x=1 --y") == ("a", "fb3-fbwire", "--x=1 --y")


def test_fbclient_targets_with_another_library(tmp_path):
    lib = tmp_path / "libfbclient.so.2"
    lib.write_bytes(b"")
    off = targets.Crypt(False)
    specs = {"fbc": ("fb3-fbclient@%s" % lib, ""), "fbcps": ("fb4-fbclient-per-statement@%s" % lib, "--threads=2"),
             "byname": ("fb3-fbclient@libfbclient.so.2", "")}
    t = targets.resolve(["fbc", "fbcps", "byname", "fb3-fbclient"], specs, off)
    assert [x.engine for x in t] == ["fb3", "fb4", "fb3", "fb3"] and [x.driver for x in t] == ["fbclient"] * 4
    assert t[0].library == str(lib) and t[0].options == [
        "--db-driver=fbclient", "--fbclient-wire-crypt=disabled", "--fbclient-autocommit=shared",
        "--fbclient-library=" + str(lib)]
    assert "--fbclient-autocommit=per-statement" in t[1].options and t[1].options[-1] == "--fbclient-library=" + str(lib)
    assert t[2].options[-1] == "--fbclient-library=libfbclient.so.2", "a name the dynamic linker looks up"
    assert t[3].library is None and not any(o.startswith("--fbclient-library") for o in t[3].options)
    assert targets.parse_spec("fbc=fb4-fbclient@/opt/fb5/libfbclient.so.2:--threads=2") == \
        ("fbc", "fb4-fbclient@/opt/fb5/libfbclient.so.2", "--threads=2")
    for bad, why in ((("x", "fb3-fbwire@%s" % lib), "only the fbclient"), (("x", "fb3-fbclient@"), "needs the path"),
                     (("x", "fb3-fbclient@/no/such/libfbclient.so"), "no file"),
                     (("fb3-fbclient@%s" % lib, "fb3-fbclient@%s" % lib), "a name of its own")):
        with pytest.raises(ValueError, match=why):
            targets.resolve([bad[0]], {} if bad[0] == bad[1] else {bad[0]: (bad[1], "")}, off)


def test_record_names_the_client_library(fixtures, tmp_path):
    src = os.path.join(fixtures, "read_write/oltp_read_write-t1-fb4-fbwire-r1")
    base = str(tmp_path / "oltp_read_write-t1-fbc-r1")
    shutil.copy(src + ".log", base + ".log")
    rep = json.load(open(src + ".report.json"))
    rep["connection"] = {"client_library": "/opt/fb5/libfbclient.so.2 (LI-V5.0.1.1469 Firebird 5.0)"}
    json.dump(rep, open(base + ".report.json", "w"))
    d = record.record(base, {"target": "fbc", "engine": "fb4", "workload": "oltp_read_write", "threads": 1,
                             "repeat": 1, "exit": 0, "options": ["--db-driver=fbclient"]})
    assert d["client_library"] == "/opt/fb5/libfbclient.so.2 (LI-V5.0.1.1469 Firebird 5.0)"
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.load(open(os.path.join(fixtures, "..", "..", "..", "docs", "compare.schema.json")))
    jsonschema.validate(d, schema)


def test_servers_options_never_carry_passwords():
    s = targets.Servers(ENV, targets.Crypt(False))
    assert s.conn_options("fb3") == ["--fbwire-db=127.0.0.1/3050:/db/fb3/sbtest.fdb",
                                     "--fbclient-db=127.0.0.1/3050:/db/fb3/sbtest.fdb"]
    assert "--pgsql-port=40000" in s.conn_options("pg", ("127.0.0.1", 40000))
    text = " ".join(" ".join([s.conn_string(e)] + s.conn_options(e)) for e in ("pg", "mariadb", "fb3"))
    assert not any(p in text for p in ("pgsecret", "mysecret", "fbsecret"))
    assert s.env()["PGPASSWORD"] == "pgsecret" and s.env()["ISC_PASSWORD"] == "fbsecret"


def test_debian13_peers():
    env = dict(ENV, PEER_PG17_HOST="127.0.0.1", PEER_PG17_PORT="5434", PEER_PG17_USER="sbtest", PEER_PG17_DB="sbtest",
               PEER_PG17_PASSWORD="pg17secret", PEER_MARIADB118_HOST="127.0.0.1", PEER_MARIADB118_PORT="3308",
               PEER_MARIADB118_USER="sbtest", PEER_MARIADB118_DB="sbtest", PEER_MARIADB118_PASSWORD="m118secret",
               PEER_PG17_VERSION="17.6")
    crypt = targets.Crypt(False)
    t = targets.resolve(["pg17", "mariadb118"], {}, crypt)
    assert [x.engine for x in t] == ["pg17", "mariadb118"] and [x.driver for x in t] == ["pgsql", "mysql"]
    s = targets.Servers(env, crypt)
    assert "--pgsql-port=5434" in s.conn_options("pg17") and "--mysql-port=3308" in s.conn_options("mariadb118")
    assert s.conn_string("pg17") == "postgresql://sbtest@127.0.0.1:5434/sbtest?sslmode=disable"
    # each engine's sysbench gets that server's password
    assert s.env("pg17")["PGPASSWORD"] == "pg17secret" and s.env("pg")["PGPASSWORD"] == "pgsecret"
    assert s.env("mariadb118")["MYSQL_PWD"] == "m118secret" and s.env("mariadb")["MYSQL_PWD"] == "mysecret"
    assert s.version("pg17") == "17.6" and s.version("mariadb118") == "?"
    assert targets.kind("pg17") == "pg" and targets.kind("fb4") == "fb"


def test_load_env(tmp_path):
    p = tmp_path / "servers.env"
    p.write_text("# comment\nA=1\nB='two words'\nC=\"x\"\nnot a line\n")
    assert targets.load_env(str(p)) == {"A": "1", "B": "two words", "C": "x"}


# ---------------------------------------------------------------- one run's record

def pg_run(repeat, **kw):
    r = {"target": "pg", "engine": "pg", "workload": "oltp_point_select", "threads": 2, "repeat": repeat, "exit": 0,
         "options": ["--db-driver=pgsql"], "client_ports": set(), "foreign": 0}
    r.update(kw)
    return r


def ports(path):
    return {int(line.split()[1]) for line in open(path) if line.startswith("O ")}


def test_record_captured_run(fixtures):
    base = os.path.join(fixtures, "point_select/runs", PS % ("pg", "cap"))
    d = record.record(base, pg_run(0, client_ports=ports(base + ".ports")))
    turns = json.load(open(base + ".turns.json"))
    assert d["capture"]["connections"] == 2
    assert d["round_trips_per_event"] == turns["totals"]["round_trips"] / d["events"]
    assert 0.98 <= d["round_trips_per_event"] <= 1.05  # a PostgreSQL point select: one round trip
    assert d["server_cpu_us_per_event"] > 0 and d["client_cpu_us_per_event"] > 0
    assert d["driver_round_trips_per_event"] is None and "pgsql" in d["not_available"]["driver_round_trips_per_event"]


def test_record_capture_of_other_connections_only(fixtures):
    base = os.path.join(fixtures, "point_select/runs", PS % ("pg", "cap"))
    d = record.record(base, pg_run(0, client_ports={1}))
    assert d["capture"]["connections"] == 0 and d["capture_note"].startswith("0 of 2")


def test_record_timed_run_and_foreign_clients(fixtures):
    base = os.path.join(fixtures, "point_select/runs", PS % ("pg", "r1"))
    d = record.record(base, pg_run(1, foreign=3))
    assert d["tps"] == 46584.65 and d["latency_p95_ms"] == 0.03
    assert d["round_trips_per_event"] is None and "not captured" in d["not_available"]["round_trips_per_event"]
    assert d["server_cpu_us_per_event"] is None and "3 other" in d["not_available"]["server_cpu_us_per_event"]
    assert abs(d["client_cpu_us_per_event"] - 0.685087e6 / 93399) < 1e-9


def test_record_server_cpu_under_a_tick_is_not_0(fixtures, tmp_path):
    src = os.path.join(fixtures, "point_select/runs", PS % ("pg", "r1"))
    base = str(tmp_path / "zero")
    for ext in (".log", ".cpu.json"):
        shutil.copy(src + ext, base + ext)
    cpu = json.load(open(base + ".cpu.json"))
    cpu["servers"][0]["cpu_s"] = 0.0
    json.dump(cpu, open(base + ".cpu.json", "w"))
    d = record.record(base, pg_run(1))
    assert d["server_cpu_us_per_event"] is None
    assert "under the server CPU resolution" in d["not_available"]["server_cpu_us_per_event"]
    assert d["client_cpu_us_per_event"] > 0


def test_record_driver_report_and_failed_run(fixtures):
    base = os.path.join(fixtures, "read_write/oltp_read_write-t1-fb4-fbwire-r1")
    d = record.record(base, {"target": "fb4-fbwire", "engine": "fb4", "workload": "oltp_read_write", "threads": 1,
                             "repeat": 1, "exit": 0, "options": ["--db-driver=fbwire"]})
    assert d["driver_round_trips_per_event"] == 19.0 and d["server_version"] == "4.0.5"
    f = record.record(os.path.join(fixtures, "read_write/failed"), pg_run(1, exit=1))
    assert f["tps"] is None and f["sysbench"] is None
    assert "exit 1" in f["not_available"]["tps"]
    for k in record.PER_EVENT:
        assert f[k] is None and f["not_available"][k]


def test_record_schema(fixtures):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.load(open(os.path.join(fixtures, "..", "..", "..", "docs", "compare.schema.json")))
    base = os.path.join(fixtures, "point_select/runs", PS % ("mariadb", "cap"))
    jsonschema.validate(record.record(base, pg_run(0, target="mariadb", engine="mariadb")), schema)
    jsonschema.validate(record.record(base, pg_run(0, rtt_ms=1.0, rate="100mbit", link_rtt_ms=1.02)), schema)


def test_link_figures():
    # fbwire-link's --json: "cpu": {"user_s", "sys_s", "wall_s", "us_per_chunk"}
    assert record.link_figures({"cpu": {"user_s": 0.25, "sys_s": 0.5, "wall_s": 3.0}}) == (0.75, None)
    assert record.link_figures({"cpu": {"user_s": 0.25, "system_s": 0.5}}) == (0.75, None)
    assert record.link_figures({"cpu_s": 1.5, "measured_rtt_ms": 1.01}) == (1.5, 1.01)
    assert record.link_figures(None) == (None, None)


# ---------------------------------------------------------------- summary and model

def recorded_dir(fixtures, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(os.path.join(fixtures, "point_select"), out)
    for t in ("pg", "mariadb"):
        for r in ("cap", "r1", "r2"):
            base = str(out / "runs" / (PS % (t, r)))
            d = record.record(base, pg_run(0 if r == "cap" else int(r[1]), target=t, engine=t,
                                           client_ports=ports(base + ".ports")))
            json.dump(d, open(base + ".json", "w"))
    return out


def test_summary_medians_and_tables(fixtures, tmp_path):
    out = recorded_dir(fixtures, tmp_path)
    s, made, bad = summary.summarize(str(out))
    assert not bad and made == [] and len(s["cases"]) == 2
    tps = [sysbench.parse_file(str(out / "runs" / (PS % ("pg", r) + ".log")))["tps"] for r in ("r1", "r2")]
    c = summary.find(s["cases"], "oltp_point_select", "pg")
    assert c["tps"] == {"median": (tps[0] + tps[1]) / 2, "min": min(tps), "max": max(tps), "n": 2}
    assert c["runs"] == 2 and c["round_trips_per_event"]["n"] == 1
    md = read(str(out / "summary.md"))
    assert "| oltp_point_select | %s | " % stats.fmt(c["tps"]) in md
    assert "TPS against RTT" not in md  # loopback only
    assert json.load(open(str(out / "summary.json")))["format"] == summary.FORMAT


def test_model_prediction():
    loop = {"threads": 1, "tps": {"median": 1000.0}, "round_trips_per_event": {"median": 1.0},
            "driver_round_trips_per_event": None}
    assert summary.predict(loop, 0) == 1000.0
    assert abs(summary.predict(loop, 1.0) - 500.0) < 1e-9  # 1 ms of CPU + 1 ms of wire per event
    loop4 = dict(loop, threads=4, tps={"median": 4000.0}, round_trips_per_event={"median": 16.0})
    assert abs(summary.predict(loop4, 5.0) - 4 / (0.001 + 0.080)) < 1e-9
    assert summary.predict(dict(loop, round_trips_per_event=None), 1) is None


def test_summary_at_distance_flags_the_model(fixtures, tmp_path):
    out = recorded_dir(fixtures, tmp_path)
    # the same runs said to be at 1 ms: far faster than one round trip per ms allows
    for t in ("pg", "mariadb"):
        for r in ("cap", "r1", "r2"):
            d = json.load(open(str(out / "runs" / (PS % (t, r) + ".json"))))
            d["rtt_ms"] = 1.0
            json.dump(d, open(str(out / "runs" / (PS % (t, r) + "-rtt1.json")), "w"))
    s, _, _ = summary.summarize(str(out))
    c = summary.find(s["cases"], "oltp_point_select", "pg", 1.0)
    loop = summary.find(s["cases"], "oltp_point_select", "pg", 0.0)
    assert c["predicted_tps"] == summary.predict(loop, 1.0)
    assert c["model_flag"] and c["model_difference"] > 0.15
    md = read(str(out / "summary.md"))
    assert "oltp_point_select, 2 threads: TPS against RTT" in md and "**!**" in md
    assert "latency p95 (ms) against RTT" in md and "| direct | 1 ms |" in md


def test_model_at_the_links_measured_rtt(fixtures, tmp_path):
    out = recorded_dir(fixtures, tmp_path)
    for t in ("pg", "mariadb"):  # at 1 ms, the ping through the link said 1.25 ms (its own lateness)
        for r in ("cap", "r1", "r2"):
            d = json.load(open(str(out / "runs" / (PS % (t, r) + ".json"))))
            d["rtt_ms"], d["link_rtt_ms"] = 1.0, 1.25
            json.dump(d, open(str(out / "runs" / (PS % (t, r) + "-rtt1.json")), "w"))
    s, _, _ = summary.summarize(str(out))
    c = summary.find(s["cases"], "oltp_point_select", "pg", 1.0)
    loop = summary.find(s["cases"], "oltp_point_select", "pg", 0.0)
    assert c["predicted_tps_link_rtt"] == summary.predict(loop, 1.25) < c["predicted_tps"]
    assert abs(c["model_difference_link_rtt"] - (c["tps"]["median"] / c["predicted_tps_link_rtt"] - 1)) < 1e-9
    assert loop["predicted_tps_link_rtt"] is None  # direct: no link, nothing to predict
    md = read(str(out / "summary.md"))
    assert "oltp_point_select, 2 threads: predicted at the link's measured RTT" in md


def test_runs_with_a_stalled_link_are_counted(fixtures, tmp_path):
    out = recorded_dir(fixtures, tmp_path)
    late = {"r1": 0, "r2": 150}  # r2: the link wrote its median chunk 150 us late (a stalled host)
    for t in ("pg", "mariadb"):
        for r in ("cap", "r1", "r2"):
            d = json.load(open(str(out / "runs" / (PS % (t, r) + ".json"))))
            d["rtt_ms"], d["link_rtt_ms"] = 1.0, 1.05
            if r in late:
                d["link_late_us"] = {"p50": late[r], "p99": 1000, "max": 4000.0}
            json.dump(d, open(str(out / "runs" / (PS % (t, r) + "-rtt1.json")), "w"))
    s, _, _ = summary.summarize(str(out))
    far = summary.find(s["cases"], "oltp_point_select", "pg", 1.0)
    near = summary.find(s["cases"], "oltp_point_select", "pg", 0.0)
    assert far["stalled_link_runs"] == 1 and far["link_late_p50_us"]["median"] == 75
    assert near["stalled_link_runs"] is None  # direct: no link, nothing to count
    assert summary.stalled([{"link_late_us": {"p50": summary.STALLED_LINK_US}}, {"link_late_us": None}]) == 1
    md = read(str(out / "summary.md"))
    assert "oltp_point_select, 2 threads: the link's median lateness" in md
    assert "75 (0–150) (1 of 2 stalled)" in md


def test_capture_once_names_why_distant_cases_have_no_count(fixtures, tmp_path):
    out = recorded_dir(fixtures, tmp_path)
    meta = read(str(out / "meta.txt"))
    meta = re.sub(r"(?m)^capture=.*$", "capture=once", meta) if re.search(r"(?m)^capture=", meta) \
        else meta + "capture=once\n"
    open(str(out / "meta.txt"), "w").write(meta)
    for t in ("pg", "mariadb"):  # timed runs at 1 ms, no captured run there (--capture once)
        for r in ("r1", "r2"):
            d = json.load(open(str(out / "runs" / (PS % (t, r) + ".json"))))
            d["rtt_ms"] = 1.0
            json.dump(d, open(str(out / "runs" / (PS % (t, r) + "-rtt1.json")), "w"))
    s, _, _ = summary.summarize(str(out))
    far = summary.find(s["cases"], "oltp_point_select", "pg", 1.0)
    near = summary.find(s["cases"], "oltp_point_select", "pg", 0.0)
    assert far["round_trips_per_event"] is None and near["round_trips_per_event"]
    assert far["not_available"]["round_trips_per_event"] == "captured at RTT 0 ms only (--capture once)"
    assert far["predicted_tps"] == summary.predict(near, 1.0)  # the model still has the direct count


# ---------------------------------------------------------------- procnet

def test_procnet_tells_own_connections():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    assert procnet.listening(port)
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    a, _ = srv.accept()
    try:
        own = procnet.socket_inodes(os.getpid())
        seen = procnet.classify(procnet.table(), own, port)
        assert ("O", c.getsockname()[1]) in seen
        assert procnet.classify(procnet.table(), set(), port) == {("F", c.getsockname()[1])}
        assert os.getpid() in procnet.descendants([os.getpid()])
    finally:
        for s in (c, a, srv):
            s.close()


# ---------------------------------------------------------------- charts

def test_charts_follow_the_data(fixtures, tmp_path):
    pytest.importorskip("matplotlib")
    out = recorded_dir(fixtures, tmp_path)
    s, made, _ = summary.summarize(str(out), charts.render)
    assert made == ["tps-t2.svg", "cpu-t2.svg", "rt-t2.svg"]
    svg = read(str(out / "tps-t2.svg"))
    assert "<svg" in svg
    width_one = float(svg.split('width="', 1)[1].split("pt", 1)[0])
    more = dict(s, workloads=s["workloads"] + ["w2", "w3", "w4"],
                cases=s["cases"] + [dict(c, workload=w) for w in ("w2", "w3", "w4") for c in s["cases"]])
    assert charts.bars(str(tmp_path / "four.svg"), more, 2, "tps")
    width_four = float(read(str(tmp_path / "four.svg")).split('width="', 1)[1].split("pt", 1)[0])
    assert width_four > width_one


def test_rtt_chart(fixtures, tmp_path):
    pytest.importorskip("matplotlib")
    out = recorded_dir(fixtures, tmp_path)
    s, _, _ = summary.summarize(str(out))
    far = [dict(c, rtt_ms=1.0, predicted_tps=100.0) for c in s["cases"]]
    s2 = dict(s, rtt_ms=[0.0, 1.0], cases=s["cases"] + far)
    assert charts.rtt_lines(str(tmp_path / "rtt.svg"), s2, "oltp_point_select", 2)
    assert not charts.rtt_lines(str(tmp_path / "none.svg"), s, "oltp_point_select", 2)


# ---------------------------------------------------------------- CLI

def test_cli_options():
    p = cli.parser()
    argv = ["out", "--quick", "--time", "2", "--rtt", "0,0.2,1,5", "--rate", "100mbit"]
    st = cli.settings(p.parse_args(argv), argv)
    assert st.time == 2 and st.runs == 1 and st.threads == [2] and st.workloads == list(workloads.QUICK)
    assert st.rtt == [0.0, 0.2, 1.0, 5.0] and st.rate == "100mbit" and st.keep
    argv = ["out", "--time", "3", "--quick"]
    assert cli.settings(p.parse_args(argv), argv).time == 1
    with pytest.raises(cli.Usage):
        argv = ["out", "--runs", "0", "--capture", "none"]
        cli.settings(p.parse_args(argv), argv)
    assert runner.rtt_tag(0, None) == "" and runner.rtt_tag(0.2, None) == "-rtt0.2"


@pytest.mark.parametrize("args", [["out", "--time", "0"], ["out", "--threads", "1,x"], ["out", "--rtt", "-1"],
                                  ["out", "--capture", "all"], ["out", "--nope"]])
def test_cli_refuses(args):
    tool = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "fbwire-compare")
    r = subprocess.run([sys.executable, tool] + args, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "fbwire-compare:" in r.stderr


def test_state_dir_outside_the_checkout(monkeypatch):
    monkeypatch.delenv("FBWIRE_STATE", raising=False)
    assert builds.state_dir() == "/var/tmp/fbwire-state"
    monkeypatch.setenv("FBWIRE_STATE", "/x/state")
    assert builds.state_dir() == "/x/state"


@pytest.mark.parametrize("args", [["OUT", "--quick", "--capture", "none", "--targets", "fb3-fbwire"],
                                  ["--preset", "glance", "OUT"]])
def test_without_servers_says_how_to_start_them(tmp_path, args):
    """No state directory (a machine where the servers never ran): the command and a preset say that
    no servers are registered and which command starts them (the command once failed opening its lock
    file in the missing directory: "[Errno 2] No such file or directory: .../.compare.lock")."""
    tool = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "fbwire-compare")
    plugin = tmp_path / "libfbwire-sysbench.so"  # the preset looks for the plug-in first
    plugin.write_text("")
    state = tmp_path / "no-state"
    env = dict(os.environ, FBWIRE_STATE=str(state), FBWIRE_SYSBENCH_LIB=str(plugin))
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    r = subprocess.run([sys.executable, tool] + argv, capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode in (1, 2), r.stderr
    assert "no servers registered: %s/servers.env does not exist" % state in r.stderr, r.stderr
    assert "`scripts/fb-servers.sh start`" in r.stderr and "FBWIRE_STATE" in r.stderr, r.stderr
    assert not state.exists()


# ---------------------------------------------------------------- fbwire-link (when built)

def link_binary():
    b = builds.Builds(os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
    return b.find("fbwire-link")


def test_link_rtt_through_fbwire_link():
    binary = link_binary()
    if not link.available(binary):
        pytest.skip("fbwire-link not built (tools/fbwire-link of issue 19; FBWIRE_LINK overrides): "
                    "the --rtt path is not tested here")
    got = link.measure_rtt(binary, 2.0, None, pings=10)
    # never early (the link holds every chunk for its delay). Late only by wake-ups: on a loaded
    # 2-core machine the median of 10 pings reached 3.8 ms, so the upper bound only catches a
    # wrong unit or a missing delay stage; accuracy itself is `fbwire-link --self-test`'s benchmark.
    assert got is not None and 2.0 <= got <= 2.0 + 10.0


# ---------------------------------------------------------------- presets

def test_preset_results_parts_are_valid_command_lines():
    results = importlib.import_module("fbwire_compare.presets.results")  # the module, not the function
    p = cli.parser()
    for part in ("distance", "loopback", "rate"):
        argv = results.part_argv(part, "out", 5, 3)
        st = cli.settings(p.parse_args(argv), argv)
        assert st.capture == "once" and st.threads == [1, 4] and st.runs == 3 and argv[0] == "out/" + part
        assert len(st.targets) * len(st.workloads) * 2 * (len(st.rtt) * 3 + 1) == results.count_runs(argv)
    st = cli.settings(p.parse_args(results.part_argv("distance", "o", 5, 3)), [])
    assert st.rtt == [0.0, 0.2, 1.0, 5.0] and len(st.targets) == 12 and "fb4-fbclient-per-statement" in st.targets
    st = cli.settings(p.parse_args(results.part_argv("loopback", "o", 5, 3)), [])
    assert st.rtt == [0.0] and set(st.workloads).isdisjoint(results.DISTANCE_WORKLOADS) and len(st.workloads) == 6
    assert len(st.targets) == 10 and not any(t.endswith("-pipelined") for t in st.targets)
    st = cli.settings(p.parse_args(results.part_argv("rate", "o", 5, 3)), [])
    assert st.rate == "100mbit" and st.specs["fb3-fbwire-zlib"] == ("fb3-fbwire", "--fbwire-compress=on")


def test_preset_results_new_parts(tmp_path):
    results = importlib.import_module("fbwire_compare.presets.results")
    (tmp_path / "servers.env").write_text("FBW_FB3_PORT=3050\nFBW_FB4_PORT=3051\nFBW_FB3L_PORT=3052\n"
                                          "FBW_FB6_PORT=3061\nFBW_FB5_PORT=3060\nFBW_FB10_PORT=3070\n")
    fbs = results.registered_fb(str(tmp_path))
    assert fbs == ["fb3", "fb4", "fb5", "fb6", "fb10"], "version order, test variants (fb3l) left out"
    assert results.registered_fb(str(tmp_path / "none")) == ["fb3", "fb4"]
    p = cli.parser()
    seen = {}
    for part in ("engines", "formats", "blob"):
        for sub, argv in results.part_argvs(part, "out", 2, 3, ["fb3", "fb4", "fb5"], "/x/libfbclient.so"):
            st = cli.settings(p.parse_args(argv), argv)
            assert argv[0] == "out/" + sub and st.runs == 3 and st.time == 2 and st.tables == 1
            assert results.count_runs(argv) == (len(st.targets) * len(st.workloads) * len(st.threads)
                                                * (len(st.rtt) * 3 + 1))
            seen[sub] = st
    tx, auto = seen["engines-tx"], seen["engines-auto"]
    assert set(tx.workloads) | set(auto.workloads) == set(results.FORMAT_WORKLOADS) and "oltp_blob" in auto.workloads
    assert "fb3-fbwire-pipelined" in tx.targets and not any(t.endswith("-pipelined") for t in auto.targets)
    assert {"fb5-fbwire", "fb3-described", "pg17", "mariadb118"} <= set(auto.targets) and auto.rtt == [0.0, 1.0]
    assert auto.specs["fb3-described"] == ("fb3-fbwire", "--fbwire-row-format=described")
    f = seen["formats"]
    assert f.rate == "100mbit" and f.rtt == [1.0] and f.specs["fb3-described-zlib"] == (
        "fb3-fbwire", "--fbwire-row-format=described --fbwire-compress=on")
    b = seen["blob"]
    assert b.workloads == ["oltp_blob"] and b.threads == [1, 4] and b.specs["fb5-fbclient5"] == (
        "fb5-fbclient@/x/libfbclient.so", "")
    assert len(b.targets) == 2 + 3 * 4
    _, argv = results.part_argvs("blob", "out", 2, 3, ["fb3", "fb4"], None)[0]
    assert not any("fbclient5" in a for a in argv), "no Firebird 5 client: no such targets"


def test_preset_pipeline_tags_as_the_shell_script_named_them():
    from fbwire_compare.presets.pipeline import pipeline_tag
    assert pipeline_tag("oltp_read_only:--range_selects=off") == (
        "oltp_read_only", ["--range_selects=off"], "oltp_read_only_range_selects-off")
    assert pipeline_tag("oltp_write_only") == ("oltp_write_only", [], "oltp_write_only")


def test_preset_unknown_and_help():
    tool = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "fbwire-compare")
    r = subprocess.run([sys.executable, tool, "--preset", "nope"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "--preset cpu" in r.stderr
    r = subprocess.run([sys.executable, tool, "--preset", "bench", "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "--table-size" in r.stdout
    r = subprocess.run([sys.executable, tool, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "fbwire-compare OUTDIR" in r.stdout and "--rtt LIST" in r.stdout
    r = subprocess.run([sys.executable, tool], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "fbwire-compare OUTDIR" in r.stderr


def test_link_json_read_by_record(tmp_path, fixtures):
    binary = link_binary()
    if not link.available(binary):
        pytest.skip("fbwire-link not built (FBWIRE_LINK overrides): its JSON is not read here")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    lk = link.Link(binary, ("127.0.0.1", srv.getsockname()[1]), 1.0, None, str(tmp_path / "run.link.json"),
                   str(tmp_path / "run.link.log"))
    with socket.create_connection(("127.0.0.1", lk.port), timeout=5) as c:
        a, _ = srv.accept()
        c.sendall(b"ping")
        a.settimeout(5)
        assert a.recv(4) == b"ping"
        a.close()
    assert lk.stop() == 0
    srv.close()
    doc = json.load(open(str(tmp_path / "run.link.json")))
    cpu, _ = record.link_figures(doc)
    assert cpu is not None and cpu >= 0
    base = str(tmp_path / "run")
    shutil.copy(os.path.join(fixtures, "point_select/runs", PS % ("pg", "r1") + ".log"), base + ".log")
    d = record.record(base, pg_run(1, rtt_ms=1.0, link_rtt_ms=1.05))
    assert d["link_cpu_us_per_event"] == cpu * 1e6 / d["events"] and d["link_late_us"] == doc.get("late_us")


# ---------------------------------------------------------------- complete captures (issue 19, point 6)

def conn(port, end="fin", problem=None, syn=True, rt=10):
    return {"client": "127.0.0.1:%d" % port, "server": "127.0.0.1:5433", "round_trips": rt, "bytes_sent": 100,
            "bytes_received": 200, "saw_syn": syn, "end": end, "problem": problem}


def test_capture_problem_names_what_is_missing():
    own = {40001, 40002}
    whole = {"connections": [conn(40001), conn(40002, end="rst"), conn(50000, end="capture")], "truncated": None}
    assert record.capture_problem(whole, own, 0) is None  # another client's open connection is not ours
    assert "3 packet(s) dropped" in record.capture_problem(whole, own, 3)
    assert record.capture_problem(None, own) == "fbwire-pcap turns gave no result"
    lost = {"connections": [conn(40001), conn(40002, end="capture")]}
    assert "1 connection(s) without their FIN or RST" in record.capture_problem(lost, own)
    missing = {"connections": [conn(40001)]}
    assert "1 of the run's 2 connection(s) are not in the capture" == record.capture_problem(missing, own)
    gap = {"connections": [conn(40001), conn(40002, problem="gap in the client stream")]}
    assert "not followed (gap in the client stream)" in record.capture_problem(gap, own)
    nosyn = {"connections": [conn(40001), conn(40002, syn=False)]}
    assert "without their SYN" in record.capture_problem(nosyn, own)
    assert "truncated" in record.capture_problem({"connections": [], "truncated": "short record"}, own)


def test_record_incomplete_capture_is_null_with_the_reason(fixtures, tmp_path):
    src = os.path.join(fixtures, "point_select/runs", PS % ("pg", "cap"))
    base = str(tmp_path / "cap")
    for ext in (".log", ".turns.json", ".cpu.json", ".ports"):
        shutil.copy(src + ext, base + ext)
    why = "tcpdump: 7 packet(s) dropped by the kernel"
    d = record.record(base, pg_run(0, client_ports=ports(base + ".ports"), capture_attempts=2, capture_problem=why))
    assert d["round_trips_per_event"] is None and d["not_available"]["round_trips_per_event"] == why
    assert d["capture_attempts"] == 2 and d["capture_problem"] == why
    ok = record.record(base, pg_run(0, client_ports=ports(base + ".ports"), capture_problem=None))
    assert ok["round_trips_per_event"] > 0 and ok["capture_problem"] is None and ok["capture_attempts"] == 1
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.load(open(os.path.join(fixtures, "..", "..", "..", "docs", "compare.schema.json")))
    jsonschema.validate(d, schema)
    jsonschema.validate(ok, schema)


def test_procnet_waits_for_both_ends():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    c = socket.create_connection(("127.0.0.1", port), timeout=5)
    a, _ = srv.accept()
    mine = {c.getsockname()[1]}
    try:
        t0 = time.monotonic()
        assert procnet.wait_closed(port, mine, time.monotonic() + 0.3) == mine  # open: waits, then says so
        assert time.monotonic() - t0 >= 0.3
        c.close()  # our FIN only: FIN_WAIT2, not done yet
        assert procnet.open_ends(port, mine) == mine
        a.close()  # the server's FIN too: TIME_WAIT
        assert procnet.wait_closed(port, mine, time.monotonic() + 5) == set()
    finally:
        for s in (c, a, srv):
            s.close()


# ---------------------------------------------------------------- preset glance (issue 19, point 9)

def glance_summary(rt_pipelined=1.0):
    def case(t, rtt, tps, rt):
        return {"workload": "oltp_read_only", "threads": 1, "target": "fb3-" + t, "rtt_ms": rtt,
                "tps": tps and {"median": tps, "min": tps, "max": tps, "n": 1},
                "driver_round_trips_per_event": rt and {"median": rt, "min": rt, "max": rt, "n": 1},
                "link_rtt_ms": {"median": 1.05, "min": 1.05, "max": 1.05, "n": 1} if rtt else None}
    return {"meta": {"version.fb3": "3.0.11", "time_s": "5"},
            "cases": [case("fbclient", 0.0, 150, 16.0), case("fbwire", 0.0, 205, 15.0),
                      case("fbwire-pipelined", 0.0, 160, rt_pipelined), case("fbclient", 1.0, 27, 16.0),
                      case("fbwire", 1.0, 37, 15.0), case("fbwire-pipelined", 1.0, 105, rt_pipelined)]}


def test_glance_table(tmp_path):
    from fbwire_compare.presets.glance import table
    text, complete = table(glance_summary(), "fb3", 1.0, str(tmp_path))
    assert complete
    lines = text.splitlines()
    assert "fbwire pipelined  1 ms RTT           105               1.00            3.89" in lines
    assert "fbclient          direct             150              16.00            1.00" in lines
    assert "(the link measured 1.050 ms)" in text and "Chart: none" in text
    text, complete = table(glance_summary(rt_pipelined=None), "fb3", 1.0, str(tmp_path))
    assert not complete and "n/a" in text


def test_fb_database_without_peers_env():
    s = targets.Servers({"FBW_FB3_HOST": "127.0.0.1", "FBW_FB3_PORT": "3050", "FBW_DBDIR_FB3": "/db/fb3"},
                        targets.Crypt(False))
    assert s.fb_dsn("fb3") == "127.0.0.1/3050:/db/fb3/" + targets.FB_DB
    assert "--fbwire-create-db=on" in targets.setup_options("fb3", targets.Crypt(False))
