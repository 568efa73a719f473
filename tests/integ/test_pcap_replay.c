/* SPDX-License-Identifier: MIT */
/* test_pcap_replay.c - `fbwire-pcap replay`.
 *
 * Offline (files in pcap/ only): --list rebuilds exactly the statement sequence the recording
 * sessions ran (pcap/session.c for fb3_script and fb3l_p10, the isql script of pcap/record.sh for
 * fb3_isql), with transaction boundaries; truncated and encrypted captures give a clear error and
 * exit 1 without replaying anything; bad options exit 2.
 *
 * Live (FB3 server, root for tcpdump): isql-fb (fbclient) runs a script with literals and an
 * fbwire session runs parameterised INSERT/UPDATE on a fresh database while tcpdump records;
 * the capture is replayed into a second fresh database. Every step must replay, both databases
 * must hold the same rows, and the capture figures the replay prints must be those `stats`
 * prints for the same file. */
#include "run_tool.h"
#include "capture.h"
#include "servers.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define PCAP_DIR FBWIRE_SOURCE_DIR "/pcap"
#define TOOL FBWIRE_BINARY_DIR "/tools/fbwire-pcap"
#define SQL_TOOL FBWIRE_BINARY_DIR "/tools/fbwire-sql"
#define OUT_MAX (4u << 20)

static fbw_run pcap_tool(const char *const *argv)
{
    return fbw_run_tool(TOOL, argv, NULL, OUT_MAX);
}

static void no_crash(const fbw_run *r, const char *what)
{
    cr_assert(r->status < 128, "%s: fbwire-pcap died (status %d)\n%s", what, r->status, r->err);
}

/* The step lines of --list text ("    3 prepare s1 t2 ...") without their numbers, in order. */
static size_t step_lines(const char *out, char lines[][512], size_t max)
{
    size_t n = 0;
    for (const char *p = out; p && *p && n < max;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        size_t i = 0;
        while (i < len && p[i] == ' ')
            i++;
        size_t d = i;
        while (d < len && p[d] >= '0' && p[d] <= '9')
            d++;
        if (d > i && d < len && p[d] == ' ' && i > 0)
            snprintf(lines[n++], 512, "%.*s", (int)(len - d - 1), p + d + 1);
        p = nl ? nl + 1 : NULL;
    }
    return n;
}

static void expect_steps(const char *out, const char *const *want, size_t nwant)
{
    static char got[256][512];
    size_t n = step_lines(out, got, 256);
    for (size_t i = 0; i < n && i < nwant; i++)
        cr_expect_str_eq(got[i], want[i], "step %zu:\n got  %s\n want %s", i + 1, got[i],
                         want[i]);
    cr_assert_eq(n, nwant, "%zu steps listed, %zu expected:\n%s", n, nwant, out);
}

/* ---- the recorded captures ---- */

/* pcap/session.c: create (own transaction), insert/select/update in one, drop (own). */
#define CREATE_SQL                                                                                 \
    "\"CREATE TABLE FBW_PCAP (ID INTEGER NOT NULL PRIMARY KEY, NAME VARCHAR(20), AMOUNT "          \
    "NUMERIC(9,2))\""
#define INSERT_SQL                                                                                 \
    "\"INSERT INTO FBW_PCAP (ID, NAME, AMOUNT) WITH RECURSIVE R (N) AS (SELECT 1 FROM "            \
    "RDB$DATABASE UNION ALL SELECT N + 1 FROM R WHERE N < 100) SELECT N, CASE WHEN MOD(N, 10) = "  \
    "0 THEN NULL ELSE 'row ' || N END, N * 1.5 FROM R\""
#define SELECT_SQL "\"SELECT ID, NAME, AMOUNT FROM FBW_PCAP ORDER BY ID\""
#define UPDATE_SQL "\"UPDATE FBW_PCAP SET AMOUNT = AMOUNT + 1 WHERE ID <= 50\""
#define DROP_SQL "\"DROP TABLE FBW_PCAP\""
/* fbw_tx_opts defaults: isc_tpb_version3, read_committed, rec_version, wait, write */
#define FBWIRE_TPB "030f110906"

static const char *const session_steps[] = {
    "start t1 tpb=" FBWIRE_TPB,
    "immediate t1 " CREATE_SQL,
    "commit t1",
    "start t2 tpb=" FBWIRE_TPB,
    "prepare s1 t2 " INSERT_SQL,
    "execute s1 t2",
    "drop s1",
    "prepare s2 t2 " SELECT_SQL,
    "execute s2 t2",
    "fetch s2 op_fetch=1",
    "drop s2",
    "prepare s3 t2 " UPDATE_SQL,
    "execute s3 t2",
    "drop s3",
    "commit t2",
    "start t3 tpb=" FBWIRE_TPB,
    "immediate t3 " DROP_SQL,
    "commit t3",
};

Test(pcap_replay, list_fb3_script_is_the_session_c_workload)
{
    const char *argv[] = {"replay", PCAP_DIR "/fb3_script.pcap", "--list", NULL};
    fbw_run r = pcap_tool(argv);
    no_crash(&r, "fb3_script");
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    expect_steps(r.out, session_steps, sizeof session_steps / sizeof *session_steps);
    cr_expect(strstr(r.out, "not replayed: op_info_sql 2"), "the record-count requests:\n%s",
              r.out);
    fbw_run_free(&r);
}

Test(pcap_replay, list_fb3l_p10_is_the_same_workload_at_protocol_10)
{
    const char *argv[] = {"replay", PCAP_DIR "/fb3l_p10.pcap", "--port", "3052", "--list", NULL};
    fbw_run r = pcap_tool(argv);
    no_crash(&r, "fb3l_p10");
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    expect_steps(r.out, session_steps, sizeof session_steps / sizeof *session_steps);
    fbw_run_free(&r);
}

/* isql-fb runs DDL in its metadata transaction (TPB 01090f0612: version1, write, wait,
 * read_committed, rec_version) and DML in its default one (empty TPB); it prepares every
 * statement first, executes DDL with execute immediate, and sends COMMIT as SQL on the default
 * transaction before committing the metadata one. */
#define ISQL_TPB "01090f0612"
static const char *const isql_steps[] = {
    "start t1 tpb=default",
    "start t2 tpb=" ISQL_TPB,
    "prepare s1 t2 " CREATE_SQL,
    "immediate t2 " CREATE_SQL,
    "commit t2",
    "start t3 tpb=" ISQL_TPB,
    "drop s1",
    "prepare s2 t3 " INSERT_SQL,
    "execute s2 t1",
    "drop s2",
    "prepare s3 t3 " SELECT_SQL,
    "execute s3 t1",
    "fetch s3 op_fetch=1",
    "close s3",
    "drop s3",
    "prepare s4 t3 " UPDATE_SQL,
    "execute s4 t1",
    "drop s4",
    "prepare s5 t3 \"COMMIT\"",
    "execute s5 t1",
    "commit t3",
    "start t4 tpb=default",
    "start t5 tpb=" ISQL_TPB,
    "drop s5",
    "prepare s6 t5 " DROP_SQL,
    "immediate t5 " DROP_SQL,
    "commit t5",
    "start t6 tpb=" ISQL_TPB,
    "drop s6",
    "prepare s7 t6 \"COMMIT\"",
    "execute s7 t4",
    "commit t6",
    "drop s7",
};

Test(pcap_replay, list_fb3_isql_is_the_record_sh_script)
{
    const char *argv[] = {"replay", PCAP_DIR "/fb3_isql.pcap", "--list", NULL};
    fbw_run r = pcap_tool(argv);
    no_crash(&r, "fb3_isql");
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    expect_steps(r.out, isql_steps, sizeof isql_steps / sizeof *isql_steps);
    cr_expect(strstr(r.out, "op_cancel 16"), "isql's op_cancel are counted:\n%s", r.out);
    fbw_run_free(&r);
}

Test(pcap_replay, list_json_has_every_step)
{
    const char *argv[] = {"replay", PCAP_DIR "/fb3_isql.pcap", "--list", "--json", NULL};
    fbw_run r = pcap_tool(argv);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    size_t steps = 0;
    for (const char *p = r.out; (p = strstr(p, "{\"step\":")); p++)
        steps++;
    cr_expect_eq(steps, sizeof isql_steps / sizeof *isql_steps);
    cr_expect(strstr(r.out, "\"mode\":\"list\""));
    cr_expect(strstr(r.out, "\"not_replayed\":{\"op_info_database\":1,\"op_cancel\":16}"), "%s",
              r.out);
    fbw_run_free(&r);
}

/* Copy the first n bytes of a capture: libpcap reports the file as truncated. */
static void truncated_copy(const char *from, const char *to, long n)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    cr_assert(in && out);
    char buf[4096];
    while (n > 0) {
        size_t got = fread(buf, 1, n < (long)sizeof buf ? (size_t)n : sizeof buf, in);
        if (got == 0)
            break;
        fwrite(buf, 1, got, out);
        n -= (long)got;
    }
    fclose(in);
    fclose(out);
}

Test(pcap_replay, truncated_capture_is_an_error_and_never_replays_in_part)
{
    char path[] = "/tmp/fbwire-replay-trunc-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    struct stat st;
    cr_assert_eq(stat(PCAP_DIR "/fb3_isql.pcap", &st), 0);
    char port[16];
    snprintf(port, sizeof port, "%d", fbw_servers_closed_port());
    char dsn[64];
    snprintf(dsn, sizeof dsn, "127.0.0.1/%s:/nowhere.fdb", port);
    for (long cut = 100; cut < st.st_size; cut += st.st_size / 7) {
        truncated_copy(PCAP_DIR "/fb3_isql.pcap", path, cut);
        const char *list[] = {"replay", path, "--list", NULL};
        fbw_run r = pcap_tool(list);
        no_crash(&r, "truncated --list");
        cr_expect_eq(r.status, 1, "cut at %ld: exit %d\n%s%s", cut, r.status, r.out, r.err);
        cr_expect(strstr(r.err, "truncated"), "cut at %ld: %s", cut, r.err);
        fbw_run_free(&r);
        /* replaying: the cut connection is refused before any connect (the port is closed, so
         * an attempt would show up as a connect error) */
        const char *rep[] = {"replay", path, "--db", dsn, "--user", "U", "--password", "P", NULL};
        r = pcap_tool(rep);
        no_crash(&r, "truncated replay");
        cr_expect_eq(r.status, 1, "cut at %ld: exit %d", cut, r.status);
        cr_expect(!strstr(r.out, "cannot connect") && !strstr(r.out, "replayed on"),
                  "cut at %ld: a cut connection was replayed:\n%s", cut, r.out);
        if (strstr(r.out, "connection 1:"))
            cr_expect(strstr(r.out, "error: the capture cannot be decoded to its end"),
                      "cut at %ld: no error for the cut connection:\n%s", cut, r.out);
        fbw_run_free(&r);
    }
    unlink(path);
}

Test(pcap_replay, garbage_file_is_an_error)
{
    char path[] = "/tmp/fbwire-replay-garbage-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, "this is not a capture file at all\n", 34), 34);
    close(fd);
    const char *argv[] = {"replay", path, "--list", NULL};
    fbw_run r = pcap_tool(argv);
    no_crash(&r, "garbage");
    cr_expect_neq(r.status, 0);
    cr_expect(r.err[0], "no error message");
    fbw_run_free(&r);
    unlink(path);
}

Test(pcap_replay, encrypted_capture_says_so_and_replays_nothing)
{
    const char *argv[] = {"replay", PCAP_DIR "/fb4_info_crypt.pcap", "--port", "3051",
                          "--db",   "127.0.0.1/1:/nowhere.fdb",     "--user", "U",
                          "--password", "P", NULL};
    fbw_run r = pcap_tool(argv);
    no_crash(&r, "encrypted");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.out, "error: the capture is encrypted (wire crypt ChaCha64)"), "%s", r.out);
    cr_expect(strstr(r.out, "nothing of this connection was replayed"), "%s", r.out);
    cr_expect(!strstr(r.out, "replayed on"), "%s", r.out);
    fbw_run_free(&r);
}

Test(pcap_replay, usage_errors_exit_2)
{
    const char *f = PCAP_DIR "/fb3_script.pcap";
    const char *no_db[] = {"replay", f, NULL};
    const char *list_db[] = {"replay", f, "--list", "--db", "x:/y", NULL};
    const char *bad_conn[] = {"replay", f, "--list", "--connection", "0", NULL};
    const char *stats_db[] = {"stats", f, "--db", "x:/y", NULL};
    const char *bad_crypt[] = {"replay", f, "--db", "x:/y", "--wire-crypt", "maybe", NULL};
    const char *const *cases[] = {no_db, list_db, bad_conn, stats_db, bad_crypt};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fbw_run r = pcap_tool(cases[i]);
        cr_expect_eq(r.status, 2, "case %zu: exit %d\n%s", i, r.status, r.err);
        fbw_run_free(&r);
    }
    const char *missing[] = {"replay", f, "--list", "--connection", "2", NULL};
    fbw_run r = pcap_tool(missing);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "no connection 2"), "%s", r.err);
    fbw_run_free(&r);
}

/* ---- live: capture isql-fb and an fbwire session, replay into a fresh database ---- */

typedef struct live {
    fbw_client *cl;
    fbw_conn *c;
    fbw_tx tx;
    fbw_stmt *s;
    const char *sql;
    fbw_value v[4];
} live;

static int q_prepare(void *arg)
{
    live *l = arg;
    return fbw_stmt_prepare(l->s, &l->tx, l->sql, strlen(l->sql));
}

static int q_execute(void *arg)
{
    live *l = arg;
    return fbw_stmt_execute(l->s, &l->tx, l->v, FBW_EXEC_COUNT);
}

/* Prepare sql and execute it once per row of texts (NULL = SQL NULL). */
static void run_params(live *l, const char *sql, const char *const *rows, int nrows, int ncols)
{
    fbw_err e;
    l->sql = sql;
    cr_assert_eq(fbw_stmt_new(l->c, &l->s, &e), FBW_OK);
    cr_assert_eq(fbw_client_run(l->cl, q_prepare, l), FBW_OK, "%s", fbw_client_error(l->cl)->msg);
    cr_assert_eq(fbw_stmt_error(l->s)->code, FBW_OK, "%s", fbw_stmt_error(l->s)->msg);
    const fbw_msgfmt *in = fbw_stmt_input(l->s);
    cr_assert_eq(in->n, ncols);
    for (int r = 0; r < nrows; r++) {
        for (int k = 0; k < ncols; k++) {
            const char *t = rows[r * ncols + k];
            memset(&l->v[k], 0, sizeof l->v[k]);
            l->v[k].type = in->cols[k].type;
            l->v[k].is_null = t == NULL;
            if (t)
                cr_assert_eq(fbw_value_from_text(&in->cols[k], t, strlen(t), &l->v[k], &e), FBW_OK,
                             "%s: %s", t, e.msg);
        }
        cr_assert_eq(fbw_client_run(l->cl, q_execute, l), FBW_OK, "%s",
                     fbw_client_error(l->cl)->msg);
        cr_assert_eq(fbw_stmt_error(l->s)->code, FBW_OK, "%s", fbw_stmt_error(l->s)->msg);
    }
    fbw_stmt_free(l->s);
    l->s = NULL;
}

static const char *const param_rows[] = {
    "10", "ten",  "0.05",   "2020-02-29", /* */
    "11", NULL,   "-7",     NULL,         /* */
    "12", "it's", "123.45", "1999-12-31",
};
static const char *const update_row[] = {"upd", "99.99", "1"};

/* The fbwire client as "client X": parameterised INSERT and UPDATE in one transaction. */
static void fbwire_session(const fbw_servers *s, const char *dsn)
{
    fbw_client_opts o;
    fbw_servers_client_opts(s, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
    live l;
    memset(&l, 0, sizeof l);
    fbw_err e;
    cr_assert_eq(fbw_client_connect(dsn, &o, &l.cl, &e), FBW_OK, "%s", e.msg);
    l.c = fbw_client_conn(l.cl);
    fbw_tx_init(&l.tx, l.c);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    cr_assert_eq(fbw_tx_start(&l.tx, &to), FBW_OK);
    cr_assert_eq(fbw_client_wait(l.cl), FBW_OK);
    run_params(&l, "INSERT INTO RP_T (ID, NAME, AMOUNT, D) VALUES (?, ?, ?, ?)", param_rows, 3, 4);
    run_params(&l, "UPDATE RP_T SET NAME = ?, AMOUNT = ? WHERE ID = ?", update_row, 1, 3);
    cr_assert_eq(fbw_tx_commit(&l.tx), FBW_OK);
    cr_assert_eq(fbw_client_wait(l.cl), FBW_OK);
    cr_assert_eq(l.tx.err.code, FBW_OK, "%s", l.tx.err.msg);
    cr_assert_eq(fbw_conn_detach(l.c), FBW_OK);
    fbw_client_wait(l.cl);
    fbw_client_close(l.cl);
}

static const char isql_script[] =
    "CREATE TABLE RP_T (ID INTEGER NOT NULL PRIMARY KEY, NAME VARCHAR(20), AMOUNT NUMERIC(9,2), "
    "D DATE);\n"
    "COMMIT;\n"
    "INSERT INTO RP_T VALUES (1, 'one', 1.50, DATE '2024-01-02');\n"
    "INSERT INTO RP_T VALUES (2, NULL, -3.25, NULL);\n"
    "INSERT INTO RP_T (ID, NAME, AMOUNT) SELECT 3, 'three', 10 FROM RDB$DATABASE;\n"
    "SELECT ID, NAME, AMOUNT, D FROM RP_T ORDER BY ID;\n"
    "UPDATE RP_T SET AMOUNT = AMOUNT * 2 WHERE ID <= 2;\n"
    "COMMIT;\n";

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Run argv (searched in PATH) with env, stdout and stderr to out; returns the exit status. */
static int spawn_wait(char *const *argv, char *const *env, const char *out)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env ? env : environ);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "cannot run %s: %s", argv[0], strerror(rc));
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* isql-fb through fbclient with client-side WireCrypt = Disabled (as pcap/record.sh does). */
static void isql_session(const fbw_servers *s, const char *tmp, const char *dsn)
{
    char root[600], conf[700], msg[700], script[700], out[700];
    snprintf(root, sizeof root, "%s/fbroot", tmp);
    mkdir(root, 0700);
    snprintf(conf, sizeof conf, "%s/firebird.conf", root);
    write_file(conf, "WireCrypt = Disabled\nAuthClient = Srp256, Srp\n");
    snprintf(msg, sizeof msg, "%s/firebird.msg", root);
    const char *msgs[] = {"/usr/lib/x86_64-linux-gnu/firebird/3.0/firebird.msg",
                          "/usr/share/firebird/3.0/firebird.msg"};
    for (size_t i = 0; i < 2; i++)
        if (access(msgs[i], R_OK) == 0 && symlink(msgs[i], msg) == 0)
            break;
    snprintf(script, sizeof script, "%s/script.sql", tmp);
    write_file(script, isql_script);
    snprintf(out, sizeof out, "%s/isql.out", tmp);
    char e_root[700], e_user[128], e_pass[200], e_path[64] = "PATH=/usr/bin:/bin";
    snprintf(e_root, sizeof e_root, "FIREBIRD=%s", root);
    snprintf(e_user, sizeof e_user, "ISC_USER=%s", s->user);
    snprintf(e_pass, sizeof e_pass, "ISC_PASSWORD=%s", s->password);
    char *env[] = {e_root, e_user, e_pass, e_path, NULL};
    char *argv[] = {"isql-fb", "-q", "-bail", "-i", script, (char *)dsn, NULL};
    int st = spawn_wait(argv, env, out);
    char *text = NULL;
    size_t n = 0;
    FILE *f = fopen(out, "r");
    if (f) {
        text = calloc(1, 65536);
        n = fread(text, 1, 65535, f);
        fclose(f);
    }
    cr_assert_eq(st, 0, "isql-fb failed (%d):\n%.*s", st, (int)n, text ? text : "");
    free(text);
}


/* Create an empty database through fbwire-sql. */
static void create_db(const fbw_servers *s, const char *dsn)
{
    const char *argv[] = {"--info",   "--create", "--user",   s->user, "--password",
                          s->password, "--wire-crypt", "disabled", dsn,   NULL};
    fbw_run r = fbw_run_tool(SQL_TOOL, argv, NULL, 65536);
    cr_assert_eq(r.status, 0, "cannot create %s: %s", dsn, r.err);
    fbw_run_free(&r);
}

static char *table_of(const fbw_servers *s, const char *dsn)
{
    const char *argv[] = {"--user", s->user, "--password", s->password, "--tsv", dsn,
                          "SELECT ID, NAME, AMOUNT, D FROM RP_T ORDER BY ID", NULL};
    fbw_run r = fbw_run_tool(SQL_TOOL, argv, NULL, 65536);
    cr_assert_eq(r.status, 0, "query %s: %s", dsn, r.err);
    char *out = strdup(r.out);
    fbw_run_free(&r);
    return out;
}

/* The values after "\nNAME: " (stats text) or "\nNAME " (replay's capture column), in order. */
static size_t figures(const char *out, const char *name, int colon, unsigned long long *v,
                      size_t max)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s%s", name, colon ? ": " : " ");
    size_t n = 0;
    for (const char *p = strstr(out, key); p && n < max; p = strstr(p + 1, key))
        v[n++] = strtoull(p + strlen(key), NULL, 10);
    return n;
}

/* Client ports of the connections whose op_connect names db, from a dump of the raw capture. */
static size_t our_ports(const char *dump, const char *db, int *ports, size_t max)
{
    size_t n = 0;
    char want[1300];
    snprintf(want, sizeof want, "file=\"%s\"", db);
    for (const char *p = dump; p && *p && n < max;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char line[2048];
        snprintf(line, sizeof line, "%.*s", (int)(len < 2047 ? len : 2047), p);
        int conn;
        if (strstr(line, " C>S op_connect ") && strstr(line, want) &&
            sscanf(strchr(line, ' ') + 1, "c%d", &conn) == 1) {
            char key[32];
            snprintf(key, sizeof key, "c%d open ", conn);
            const char *o = strstr(dump, key);
            const char *colon = o ? strchr(o + strlen(key), ':') : NULL;
            if (colon)
                ports[n++] = atoi(colon + 1);
        }
        p = nl ? nl + 1 : NULL;
    }
    return n;
}

Test(pcap_replay, live_isql_and_fbwire_capture_replays_into_a_fresh_database, .timeout = 120)
{
    if (geteuid() != 0)
        cr_skip_test("tcpdump on lo needs root");
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server *fb3 = &s.srv[FBW_SRV_FB3];
    char dir[1024], src[1200], dst[1200], src_dsn[1600], dst_dsn[1600];
    snprintf(dir, sizeof dir, "%s", fb3->db);
    snprintf(src, sizeof src, "%s/fbwire_replay_src_%d.fdb", dirname(dir), (int)getpid());
    snprintf(dir, sizeof dir, "%s", fb3->db);
    snprintf(dst, sizeof dst, "%s/fbwire_replay_dst_%d.fdb", dirname(dir), (int)getpid());
    snprintf(src_dsn, sizeof src_dsn, "%s/%d:%s", fb3->host, fb3->port, src);
    snprintf(dst_dsn, sizeof dst_dsn, "%s/%d:%s", fb3->host, fb3->port, dst);
    unlink(src);
    unlink(dst);
    create_db(&s, src_dsn);
    create_db(&s, dst_dsn);

    char tmp[] = "/tmp/fbwire-test-replay.XXXXXX";
    cr_assert(mkdtemp(tmp));
    chmod(tmp, 0777); /* tcpdump drops privileges before writing */
    char raw[700], cap[700], errlog[700], filter[64], port[16];
    snprintf(raw, sizeof raw, "%s/raw.pcap", tmp);
    snprintf(cap, sizeof cap, "%s/session.pcap", tmp);
    snprintf(errlog, sizeof errlog, "%s/tcpdump.err", tmp);
    snprintf(filter, sizeof filter, "tcp port %d", fb3->port);
    snprintf(port, sizeof port, "%d", fb3->port);
    pid_t td = fbw_tcpdump_start(raw, filter, errlog);
    cr_assert_neq(td, -1, "cannot start tcpdump: %s", strerror(errno));
    isql_session(&s, tmp, src_dsn);
    fbwire_session(&s, src_dsn);
    fbw_tcpdump_stop(td);

    /* Keep only our two connections (others may use the same server meanwhile). */
    const char *dump_argv[] = {"dump", "--port", port, raw, NULL};
    fbw_run d = pcap_tool(dump_argv);
    int ports[4];
    size_t np = our_ports(d.out, src, ports, 4);
    fbw_run_free(&d);
    cr_assert_eq(np, 2, "expected the isql and the fbwire connection in the capture, found %zu",
                 np);
    char keep[160];
    snprintf(keep, sizeof keep, "tcp port %d and (tcp port %d or tcp port %d)", fb3->port,
             ports[0], ports[1]);
    char *tdr[] = {"tcpdump", "-r", raw, "-w", cap, keep, NULL};
    char tdout[700];
    snprintf(tdout, sizeof tdout, "%s/tcpdump-r.out", tmp);
    cr_assert_eq(spawn_wait(tdr, NULL, tdout), 0, "tcpdump -r failed");

    /* The workload as listed: every statement of both sessions, the parameters as sent. */
    const char *list_argv[] = {"replay", cap, "--port", port, "--list", NULL};
    fbw_run l = pcap_tool(list_argv);
    cr_assert_eq(l.status, 0, "--list exit %d:\n%s%s", l.status, l.out, l.err);
    const char *want[] = {
        ("\"CREATE TABLE RP_T (ID INTEGER NOT NULL PRIMARY KEY, NAME VARCHAR(20), AMOUNT "
         "NUMERIC(9,2), D DATE)\""),
        "\"INSERT INTO RP_T VALUES (1, 'one', 1.50, DATE '2024-01-02')\"",
        "\"INSERT INTO RP_T VALUES (2, NULL, -3.25, NULL)\"",
        "\"INSERT INTO RP_T (ID, NAME, AMOUNT) SELECT 3, 'three', 10 FROM RDB$DATABASE\"",
        "\"SELECT ID, NAME, AMOUNT, D FROM RP_T ORDER BY ID\"",
        "\"UPDATE RP_T SET AMOUNT = AMOUNT * 2 WHERE ID <= 2\"",
        "\"INSERT INTO RP_T (ID, NAME, AMOUNT, D) VALUES (?, ?, ?, ?)\"",
        "params=(10, \"ten\", 0.05, \"2020-02-29\")",
        "params=(11, NULL, -7.00, NULL)",
        "params=(12, \"it's\", 123.45, \"1999-12-31\")",
        "\"UPDATE RP_T SET NAME = ?, AMOUNT = ? WHERE ID = ?\"",
        "params=(\"upd\", 99.99, 1)",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        cr_expect(strstr(l.out, want[i]), "--list lacks %s:\n%s", want[i], l.out);
    static char lines[512][512];
    size_t nsteps = step_lines(l.out, lines, 512);
    fbw_run_free(&l);

    /* The replay: every step, no failure, the password nowhere in the output. */
    const char *rep_argv[] = {"replay",     cap,        "--port", port, "--db", dst_dsn, "--user",
                              s.user,       "--password", s.password, NULL};
    fbw_run r = pcap_tool(rep_argv);
    fprintf(stderr, "%s", r.out);
    cr_assert_eq(r.status, 0, "replay exit %d:\n%s%s", r.status, r.out, r.err);
    char total[128];
    snprintf(total, sizeof total, "total: 2 connections, 2 replayed, %zu steps, 0 failed", nsteps);
    cr_expect(strstr(r.out, total), "want \"%s\":\n%s", total, r.out);
    cr_expect(!strstr(r.out, s.password) && !strstr(r.err, s.password), "password printed");

    /* The capture's figures are exactly those `stats` prints: each connection and the total. */
    const char *stats_argv[] = {"stats", "--port", port, cap, NULL};
    fbw_run sr = pcap_tool(stats_argv);
    cr_assert_eq(sr.status, 0, "%s", sr.err);
    const char *names[] = {"round_trips", "packets_sent", "packets_received", "bytes_sent",
                           "bytes_received"};
    for (size_t k = 0; k < 5; k++) {
        unsigned long long a[8], b[8];
        size_t na = figures(sr.out, names[k], 1, a, 8), nb = figures(r.out, names[k], 0, b, 8);
        cr_assert_eq(na, 3, "stats: %zu %s lines", na, names[k]);
        cr_assert_eq(nb, 3, "replay: %zu %s lines", nb, names[k]);
        for (size_t i = 0; i < 3; i++)
            cr_expect_eq(a[i], b[i], "%s %s: stats %llu, replay %llu", i < 2 ? "connection" : "total",
                         names[k], a[i], b[i]);
    }
    fbw_run_free(&sr);
    fbw_run_free(&r);

    /* Same rows in both databases. */
    char *a = table_of(&s, src_dsn), *b = table_of(&s, dst_dsn);
    int rows = 0;
    for (const char *p = a; (p = strchr(p, '\n')); p++)
        rows++;
    cr_expect_geq(rows, 6, "source table:\n%s", a);
    cr_expect_str_eq(a, b, "source:\n%s\nreplayed:\n%s", a, b);
    cr_expect(strstr(a, "upd"), "%s", a);
    free(a);
    free(b);
    unlink(src);
    unlink(dst);
    unlink(raw);
    unlink(cap);
    unlink(errlog);
    unlink(tdout);
    char p[800];
    snprintf(p, sizeof p, "%s/fbroot/firebird.conf", tmp);
    unlink(p);
    snprintf(p, sizeof p, "%s/fbroot/firebird.msg", tmp);
    unlink(p);
    snprintf(p, sizeof p, "%s/fbroot", tmp);
    rmdir(p);
    snprintf(p, sizeof p, "%s/script.sql", tmp);
    unlink(p);
    snprintf(p, sizeof p, "%s/isql.out", tmp);
    unlink(p);
    rmdir(tmp);
}

/* A statement that fails on replay is reported with Firebird's message and SQLSTATE, the replay
 * goes on, and the exit status is 1: pcap/fb3_script.pcap replayed into a database that already
 * has a table FBW_PCAP of another shape (CREATE, INSERT, SELECT and UPDATE fail; DROP works). */
Test(pcap_replay, failing_statements_are_reported_and_the_replay_goes_on, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server *fb3 = &s.srv[FBW_SRV_FB3];
    char dir[1024], db[1200], dsn[1600];
    snprintf(dir, sizeof dir, "%s", fb3->db);
    snprintf(db, sizeof db, "%s/fbwire_replay_fail_%d.fdb", dirname(dir), (int)getpid());
    snprintf(dsn, sizeof dsn, "%s/%d:%s", fb3->host, fb3->port, db);
    unlink(db);
    create_db(&s, dsn);
    const char *ddl[] = {"--user", s.user, "--password", s.password, dsn,
                         "CREATE TABLE FBW_PCAP (X INTEGER);", NULL};
    fbw_run c = fbw_run_tool(SQL_TOOL, ddl, NULL, 65536);
    cr_assert_eq(c.status, 0, "%s", c.err);
    fbw_run_free(&c);

    const char *argv[] = {"replay", PCAP_DIR "/fb3_script.pcap", "--db", dsn, "--user", s.user,
                          "--password", s.password, "--json", NULL};
    fbw_run r = pcap_tool(argv);
    no_crash(&r, "failing replay");
    cr_expect_eq(r.status, 1, "exit %d:\n%s%s", r.status, r.out, r.err);
    cr_expect(strstr(r.out, "\"kind\":\"immediate\",\"stmt\":0,\"tx\":1,\"message\":"),
              "the CREATE TABLE failure:\n%s", r.out);
    cr_expect(strstr(r.out, "\"sqlstate\":\"42S01\""), "table exists: SQLSTATE 42S01:\n%s",
              r.out);
    cr_expect(strstr(r.out, "\"sqlstate\":\"42S22\""), "unknown column: SQLSTATE 42S22:\n%s",
              r.out);
    cr_expect(strstr(r.out, "\"replayed\":true"), "%s", r.out);
    /* every step ran: 18 of them, the DROP at the end among the ones that worked */
    cr_expect(strstr(r.out, "\"immediate\":{\"count\":2,\"failed\":1"), "%s", r.out);
    cr_expect(strstr(r.out, "\"total\":{\"connections\":1,\"replayed\":1,\"steps\":18,"), "%s",
              r.out);
    fbw_run_free(&r);
    /* the DROP TABLE at the end of the workload ran */
    const char *q[] = {"--user", s.user, "--password", s.password, "--tsv", dsn,
                       "SELECT COUNT(*) FROM RDB$RELATIONS WHERE RDB$RELATION_NAME = 'FBW_PCAP';",
                       NULL};
    c = fbw_run_tool(SQL_TOOL, q, NULL, 65536);
    cr_assert_eq(c.status, 0, "%s", c.err);
    cr_expect(strstr(c.out, "0\n"), "FBW_PCAP still exists: %s", c.out);
    fbw_run_free(&c);
    unlink(db);
}
