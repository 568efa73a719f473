/* SPDX-License-Identifier: MIT */
/* test_pcap_replay_inline.c - `fbwire-pcap replay` asks the target for the inline blobs (protocol
 * 19) the captured client asked for, as each captured op_execute did: the Firebird 5 captures of
 * pcap/ (fb5_blob_inline asked for 65535 bytes, fb5_blob_batch for none) and the Firebird 3 one
 * (fb3_blob, below protocol 19: none), unless --inline-blob-size says otherwise.
 *
 * Each replay runs into a fresh database holding the table the recording session selected from,
 * while tcpdump records its traffic; fbwire-pcap dump of that shows what the replay's op_execute
 * asked for (inline_blob_size=N, no field below protocol 19), how many op_inline_blob the target
 * sent and how many blobs the replay opened. On fb4 (protocol 17) nothing can be asked: the test
 * checks that none is and that the replay still reads exactly what the captured client read; its
 * @fb5 twin (protocol 19) checks the sizes. op_exec_immediate2 carries the size too (protocol 19):
 * a live fbwire session asking for 1000 bytes runs one under tcpdump; its replay asks for 1000
 * (--inline-blob-size captured) or for what --inline-blob-size N says. Needs root (tcpdump on lo). */
#include "capture.h"
#include "run_tool.h"
#include "servers.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCAP_DIR FBWIRE_SOURCE_DIR "/pcap"
#define TOOL FBWIRE_BINARY_DIR "/tools/fbwire-pcap"
#define SQL_TOOL FBWIRE_BINARY_DIR "/tools/fbwire-sql"
#define BLOBS 5 /* the recorded table: six rows, five blobs */

typedef struct target {
    fbw_servers s;
    const fbw_server *srv;
    int protocol; /* the highest the server speaks */
    char db[1200], dsn[1600];
} target;

/* What the replay's own connection did, read from a capture of it. */
typedef struct seen {
    int found;
    long inline_size;      /* its op_execute's inline_blob_size; -1: no such field */
    unsigned executes;
    unsigned inline_blobs; /* op_inline_blob the target sent */
    unsigned opens;        /* op_open_blob2 the replay sent */
    long imm_inline_size;  /* its op_exec_immediate2's inline_blob_size; -1: no such field */
    unsigned immediates2;
} seen;

static void sql(const target *t, const char *text)
{
    const char *argv[] = {"--user", t->s.user, "--password", t->s.password, "--wire-crypt",
                          "disabled", t->dsn, text, NULL};
    fbw_run r = fbw_run_tool(SQL_TOOL, argv, NULL, 65536);
    cr_assert_eq(r.status, 0, "%s: %s", text, r.err);
    fbw_run_free(&r);
}

/* A fresh database on the fb4 slot (fb5 under the @fb5 twin). */
static void target_open(target *t)
{
    if (geteuid() != 0)
        cr_skip_test("tcpdump on lo needs root");
    fbw_servers_require(&t->s);
    t->srv = &t->s.srv[FBW_SRV_FB4];
    t->protocol = fbw_servers_protocol_max(&t->s, FBW_SRV_FB4);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", t->srv->db);
    snprintf(t->db, sizeof t->db, "%s/fbwire_replay_inline_%d.fdb", dirname(dir), (int)getpid());
    snprintf(t->dsn, sizeof t->dsn, "%s/%d:%s", t->srv->host, t->srv->port, t->db);
    fbw_servers_drop_db(&t->s, t->dsn);
    const char *argv[] = {"--info", "--create", "--user", t->s.user, "--password", t->s.password,
                          "--wire-crypt", "disabled", t->dsn, NULL};
    fbw_run r = fbw_run_tool(SQL_TOOL, argv, NULL, 65536);
    cr_assert_eq(r.status, 0, "cannot create %s: %s", t->dsn, r.err);
    fbw_run_free(&r);
}

/* The table pcap/session.c --blobs made before the captured connection (which drops it). */
static void make_table(const target *t)
{
    sql(t, "CREATE TABLE FBW_PCAP_BLOB (ID INTEGER NOT NULL PRIMARY KEY, B BLOB SUB_TYPE TEXT)");
    sql(t, "INSERT INTO FBW_PCAP_BLOB (ID, B) WITH RECURSIVE R (N) AS (SELECT 1 FROM RDB$DATABASE "
           "UNION ALL SELECT N + 1 FROM R WHERE N < 6) SELECT N, CASE WHEN N = 6 THEN NULL ELSE "
           "'blob ' || N || ': ' || RPAD('', N * 300, 'abcdefghij') END FROM R");
}

/* The dump lines of the connection that attached to db: ops counted, the execute's size read. */
static seen read_dump(const char *dump, const char *db)
{
    seen v = {0, -1, 0, 0, 0, -1, 0};
    char conn[32] = "", want[1300];
    snprintf(want, sizeof want, "file=\"%s\"", db);
    for (const char *p = dump; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[2048];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        p = nl ? nl + 1 : NULL;
        char id[32];
        if (sscanf(line, "%*s %31s", id) != 1)
            continue;
        if (strstr(line, " C>S op_connect ") && strstr(line, want)) {
            snprintf(conn, sizeof conn, "%s", id); /* the last one that attached to db */
            memset(&v, 0, sizeof v);
            v.found = 1;
            v.inline_size = -1;
            v.imm_inline_size = -1;
        }
        if (!conn[0] || strcmp(id, conn) != 0)
            continue;
        const char *f;
        if (strstr(line, " C>S op_execute ")) {
            v.executes++;
            if ((f = strstr(line, " inline_blob_size=")))
                v.inline_size = strtol(f + 18, NULL, 10);
        }
        if (strstr(line, " C>S op_exec_immediate2 ")) {
            v.immediates2++;
            if ((f = strstr(line, " inline_blob_size=")))
                v.imm_inline_size = strtol(f + 18, NULL, 10);
        }
        v.inline_blobs += strstr(line, " S>C op_inline_blob ") != NULL;
        v.opens += strstr(line, " C>S op_open_blob2 ") != NULL;
    }
    return v;
}

/* Replay capture file cap into the target (with --inline-blob-size opt unless NULL) under tcpdump:
 * what the replay's connection sent and got. */
static seen replay_file(const target *t, const char *cap, const char *opt)
{
    char dir[1024], raw[1100], errlog[1100], filter[64], port[16];
    cr_assert_eq(fbw_capture_dir("replay-inline", dir, sizeof dir), 0, "%s", strerror(errno));
    snprintf(raw, sizeof raw, "%s/raw.pcap", dir);
    snprintf(errlog, sizeof errlog, "%s/tcpdump.err", dir);
    snprintf(filter, sizeof filter, "tcp port %d", t->srv->port);
    snprintf(port, sizeof port, "%d", t->srv->port);
    pid_t td = fbw_tcpdump_start(raw, filter, errlog);
    cr_assert_neq(td, -1, "cannot start tcpdump: %s", strerror(errno));
    const char *argv[] = {"replay", "--db", t->dsn, "--user", t->s.user, "--password",
                          t->s.password, "--pace", "none", opt ? "--inline-blob-size" : cap,
                          opt ? opt : NULL, opt ? cap : NULL, NULL};
    fbw_run r = fbw_run_tool(TOOL, argv, NULL, 1u << 20);
    fbw_tcpdump_stop(td);
    cr_assert_eq(r.status, 0, "replay of %s: exit %d\n%s\n%s", cap, r.status, r.out, r.err);
    cr_assert(strstr(r.out, " 0 failed"), "replay of %s: a step failed\n%s", cap, r.out);
    fbw_run_free(&r);
    const char *dargv[] = {"dump", "--port", port, raw, NULL};
    fbw_run d = fbw_run_tool(TOOL, dargv, NULL, 16u << 20);
    seen v = read_dump(d.out, t->db);
    cr_assert(v.found, "the replay's connection is not in its capture\n%s", d.err);
    fbw_run_free(&d);
    unlink(raw);
    unlink(errlog);
    rmdir(dir);
    return v;
}

/* Replay pcap/NAME.pcap (one op_execute) into the target with the table it reads. */
static seen replay(const target *t, const char *name, const char *opt)
{
    make_table(t);
    char cap[1200];
    snprintf(cap, sizeof cap, "%s/%s.pcap", PCAP_DIR, name);
    seen v = replay_file(t, cap, opt);
    cr_assert_eq(v.executes, 1, "%s: %u op_execute", name, v.executes);
    return v;
}

static void target_close(target *t) { fbw_servers_drop_db(&t->s, t->dsn); }

/* The captured client asked for 65535 bytes: so does the replay, the target sends the five blobs
 * inline, and the replay opens none (the captured client read none from the server). */
Test(pcap_replay_inline, fb5_capture_asks_its_inline_size, .timeout = 120)
{
    target t;
    target_open(&t);
    seen v = replay(&t, "fb5_blob_inline", NULL);
    if (t.protocol >= 19) {
        cr_assert_eq(v.inline_size, 65535, "asked for %ld", v.inline_size);
        cr_assert_eq(v.inline_blobs, BLOBS);
    } else {
        cr_assert_eq(v.inline_size, -1, "protocol %d has no inline blobs", t.protocol);
        cr_assert_eq(v.inline_blobs, 0);
    }
    cr_assert_eq(v.opens, 0, "blobs the captured client had inline were read again");
    target_close(&t);
}

/* The captured client asked for none and read the five through a batch: so does the replay. */
Test(pcap_replay_inline, fb5_capture_that_asked_none_asks_none, .timeout = 120)
{
    target t;
    target_open(&t);
    seen v = replay(&t, "fb5_blob_batch", NULL);
    cr_assert_eq(v.inline_size, t.protocol >= 19 ? 0 : -1, "asked for %ld", v.inline_size);
    cr_assert_eq(v.inline_blobs, 0);
    cr_assert_eq(v.opens, BLOBS);
    target_close(&t);
}

/* A Firebird 3 client could not ask: the replay asks for none, unless --inline-blob-size says. */
Test(pcap_replay_inline, fb3_capture_asks_none_unless_told, .timeout = 120)
{
    target t;
    target_open(&t);
    seen v = replay(&t, "fb3_blob", NULL);
    cr_assert_eq(v.inline_size, t.protocol >= 19 ? 0 : -1, "asked for %ld", v.inline_size);
    cr_assert_eq(v.inline_blobs, 0, "the target sent blobs the captured client never got inline");
    cr_assert_eq(v.opens, BLOBS);
    v = replay(&t, "fb3_blob", "65535");
    cr_assert_eq(v.inline_size, t.protocol >= 19 ? 65535 : -1, "asked for %ld", v.inline_size);
    cr_assert_eq(v.inline_blobs, t.protocol >= 19 ? BLOBS : 0);
    cr_assert_eq(v.opens, BLOBS, "the replay reads what the captured client read");
    target_close(&t);
}

/* A live fbwire session under tcpdump asking for 1000 bytes of inline blobs: one
 * op_exec_immediate2 with a blob in its output row, into file (in dir). Reached as 127.0.0.2, so
 * other tests' traffic stays out of the capture. */
static void record_immediate2(const target *t, const char *dir, const char *file)
{
    char errlog[1100], filter[96], dsn[1400];
    snprintf(errlog, sizeof errlog, "%s/tcpdump-live.err", dir);
    snprintf(filter, sizeof filter, "host 127.0.0.2 and tcp port %d", t->srv->port);
    snprintf(dsn, sizeof dsn, "127.0.0.2/%d:%s", t->srv->port, t->db);
    pid_t td = fbw_tcpdump_start(file, filter, errlog);
    cr_assert_neq(td, -1, "cannot start tcpdump: %s", strerror(errno));
    fbw_client_opts o;
    fbw_servers_client_opts(&t->s, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED; /* the replay reads the packets */
    o.conn.inline_blob_size = 1000;
    fbw_client *cl;
    fbw_tx *tx;
    fbw_err e;
    cr_assert_eq(fbw_client_connect(dsn, &o, &cl, &e), FBW_OK, "%s: %s", dsn, e.msg);
    fbw_conn *c = fbw_client_conn(cl);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    cr_assert_eq(fbw_tx_new(c, &tx, &e), FBW_OK);
    cr_assert_eq(fbw_tx_start(tx, &to), FBW_OK);
    const char *q = "SELECT CAST('inline ' || RPAD('', 300, 'x') AS BLOB SUB_TYPE TEXT) FROM RDB$DATABASE";
    fbw_col bcol = {.type = FBW_SQL_BLOB, .subtype = 1, .length = 8};
    fbw_msgfmt out = {&bcol, 1, 1};
    fbw_exec_result2 r2;
    fbw_buf_init(&r2.row);
    int rc = fbw_exec_immediate2(c, tx, q, strlen(q), NULL, NULL, &out, &r2);
    while (rc == FBW_WAIT)
        rc = fbw_client_complete(cl, fbw_exec_immediate2(c, tx, q, strlen(q), NULL, NULL, &out, &r2));
    if (rc == FBW_OK)
        rc = fbw_client_wait(cl);
    cr_assert_eq(rc, FBW_OK, "%s", fbw_client_error(cl)->msg);
    cr_assert_eq(r2.err.code, FBW_OK, "%s", r2.err.msg);
    cr_assert(r2.has_row);
    fbw_buf_free(&r2.row);
    cr_assert_eq(fbw_client_commit(cl, tx), FBW_OK);
    fbw_tx_free(tx);
    cr_assert_eq(fbw_client_close(cl), FBW_OK);
    fbw_tcpdump_stop(td);
    unlink(errlog);
}

/* op_exec_immediate2 asked for 1000 bytes: the replay asks the same (captured), or N when told. */
Test(pcap_replay_inline, exec_immediate2_asks_its_captured_size, .timeout = 120)
{
    target t;
    target_open(&t);
    char dir[1024], cap[1100], port[16];
    cr_assert_eq(fbw_capture_dir("replay-inline-imm2", dir, sizeof dir), 0, "%s", strerror(errno));
    snprintf(cap, sizeof cap, "%s/live.pcap", dir);
    snprintf(port, sizeof port, "%d", t.srv->port);
    record_immediate2(&t, dir, cap);
    const char *argv[] = {"replay", cap, "--port", port, "--list", NULL};
    fbw_run r = fbw_run_tool(TOOL, argv, NULL, 1u << 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *imm = strstr(r.out, " immediate t1 \"SELECT CAST(");
    cr_assert(imm, "the immediate step:\n%s", r.out);
    const char *eol = strchr(imm, '\n');
    const char *size = strstr(imm, " output=1 inline_blob_size=1000\n");
    if (t.protocol >= 19)
        cr_expect(size && size < eol, "--list shows the size it asked for: %.*s", (int)(eol - imm), imm);
    else
        cr_expect(!strstr(imm, "inline_blob_size") || strstr(imm, "inline_blob_size") > eol,
                  "below protocol 19 nothing is asked: %.*s", (int)(eol - imm), imm);
    fbw_run_free(&r);

    seen v = replay_file(&t, cap, NULL);
    cr_assert_eq(v.immediates2, 1);
    cr_expect_eq(v.imm_inline_size, t.protocol >= 19 ? 1000 : -1, "asked for %ld", v.imm_inline_size);
    v = replay_file(&t, cap, "77");
    cr_assert_eq(v.immediates2, 1);
    cr_expect_eq(v.imm_inline_size, t.protocol >= 19 ? 77 : -1, "asked for %ld", v.imm_inline_size);
    printf("%s (protocol %d): op_exec_immediate2 replayed asking for %ld (captured) and 77 (told)\n",
           fbw_server_name(FBW_SRV_FB4), t.protocol, t.protocol >= 19 ? 1000L : -1L);
    unlink(cap);
    rmdir(dir);
    target_close(&t);
}
