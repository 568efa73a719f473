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
 * @fb5 twin (protocol 19) checks the sizes. Needs root (tcpdump on lo). */
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
    seen v = {0, -1, 0, 0, 0};
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
        }
        if (!conn[0] || strcmp(id, conn) != 0)
            continue;
        const char *f;
        if (strstr(line, " C>S op_execute ")) {
            v.executes++;
            if ((f = strstr(line, " inline_blob_size=")))
                v.inline_size = strtol(f + 18, NULL, 10);
        }
        v.inline_blobs += strstr(line, " S>C op_inline_blob ") != NULL;
        v.opens += strstr(line, " C>S op_open_blob2 ") != NULL;
    }
    return v;
}

/* Replay pcap/NAME.pcap into the target (with --inline-blob-size opt unless NULL) under tcpdump. */
static seen replay(const target *t, const char *name, const char *opt)
{
    make_table(t);
    char dir[1024], raw[1100], errlog[1100], filter[64], port[16], cap[1200];
    cr_assert_eq(fbw_capture_dir("replay-inline", dir, sizeof dir), 0, "%s", strerror(errno));
    snprintf(raw, sizeof raw, "%s/raw.pcap", dir);
    snprintf(errlog, sizeof errlog, "%s/tcpdump.err", dir);
    snprintf(filter, sizeof filter, "tcp port %d", t->srv->port);
    snprintf(port, sizeof port, "%d", t->srv->port);
    snprintf(cap, sizeof cap, "%s/%s.pcap", PCAP_DIR, name);
    pid_t td = fbw_tcpdump_start(raw, filter, errlog);
    cr_assert_neq(td, -1, "cannot start tcpdump: %s", strerror(errno));
    const char *argv[] = {"replay", "--db", t->dsn, "--user", t->s.user, "--password",
                          t->s.password, "--pace", "none", opt ? "--inline-blob-size" : cap,
                          opt ? opt : NULL, opt ? cap : NULL, NULL};
    fbw_run r = fbw_run_tool(TOOL, argv, NULL, 1u << 20);
    fbw_tcpdump_stop(td);
    cr_assert_eq(r.status, 0, "replay of %s: exit %d\n%s\n%s", name, r.status, r.out, r.err);
    cr_assert(strstr(r.out, " 0 failed"), "replay of %s: a step failed\n%s", name, r.out);
    fbw_run_free(&r);
    const char *dargv[] = {"dump", "--port", port, raw, NULL};
    fbw_run d = fbw_run_tool(TOOL, dargv, NULL, 16u << 20);
    seen v = read_dump(d.out, t->db);
    cr_assert(v.found, "the replay's connection is not in its capture\n%s", d.err);
    cr_assert_eq(v.executes, 1, "%s: %u op_execute", name, v.executes);
    fbw_run_free(&d);
    unlink(raw);
    unlink(errlog);
    rmdir(dir);
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
