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
#include <pthread.h>
#include <time.h>
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
    /* the record-count requests went in the execute's write: part of the execute step */
    cr_expect(!strstr(r.out, "not replayed"), "every op is replayed:\n%s", r.out);
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

/* Firebird 6 speaks protocol 19 and 20: the same session in both gives the same workload (the
 * prepare flags protocol 20 adds are read past, not taken for the SQL or the next field). From
 * protocol 19 on each execute carries the inline blob size it asked for (fbwire's default). */
Test(pcap_replay, list_fb6_script_is_the_same_workload_at_protocols_19_and_20)
{
    const char *names[] = {"fb6_script_p19", "fb6_script_p20"};
    enum { NSTEPS = sizeof session_steps / sizeof *session_steps };
    static char lines[NSTEPS][512];
    const char *want[NSTEPS];
    for (size_t i = 0; i < NSTEPS; i++) {
        snprintf(lines[i], sizeof lines[i], "%s%s", session_steps[i],
                 strncmp(session_steps[i], "execute ", 8) ? "" : " inline_blob_size=65535");
        want[i] = lines[i];
    }
    for (size_t i = 0; i < 2; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s.pcap", PCAP_DIR, names[i]);
        const char *argv[] = {"replay", path, "--port", "3061", "--list", NULL};
        fbw_run r = pcap_tool(argv);
        no_crash(&r, names[i]);
        cr_assert_eq(r.status, 0, "%s: exit %d: %s", names[i], r.status, r.err);
        expect_steps(r.out, want, NSTEPS);
        cr_expect(!strstr(r.out, "not replayed"), "%s: every op is replayed:\n%s", names[i], r.out);
        fbw_run_free(&r);
    }
}

/* isql-fb runs DDL in its metadata transaction (TPB 01090f0612: version1, write, wait,
 * read_committed, rec_version) and DML in its default one (empty TPB); it prepares every
 * statement first, executes DDL with execute immediate, and sends COMMIT as SQL on the default
 * transaction before committing the metadata one. */
#define ISQL_TPB "01090f0612"
static const char *const isql_steps[] = {
    "info_database items=20213e650101 buffer=1024", /* isql asks the server's version, ODS, ... */
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
    cr_expect(strstr(r.out, "\"not_replayed\":{\"op_cancel\":16}"), "%s",
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
    fbw_tx *tx;
    fbw_stmt *s;
    const char *sql;
    fbw_value v[4];
} live;


/* Prepare sql and execute it once per row of texts (NULL = SQL NULL). */
static void run_params(live *l, const char *sql, const char *const *rows, int nrows, int ncols)
{
    fbw_err e;
    l->sql = sql;
    cr_assert_eq(fbw_stmt_new(l->c, &l->s, &e), FBW_OK);
    cr_assert_eq(fbw_client_prepare(l->cl, l->s, l->tx, l->sql, strlen(l->sql)), FBW_OK, "%s", fbw_client_error(l->cl)->msg);
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
        cr_assert_eq(fbw_client_execute(l->cl, l->s, l->tx, l->v, FBW_EXEC_COUNT), FBW_OK, "%s",
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
    cr_assert_eq(fbw_tx_new(l.c, &l.tx, NULL), FBW_OK);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    cr_assert_eq(fbw_tx_start(l.tx, &to), FBW_OK);
    cr_assert_eq(fbw_client_wait(l.cl), FBW_OK);
    run_params(&l, "INSERT INTO RP_T (ID, NAME, AMOUNT, D) VALUES (?, ?, ?, ?)", param_rows, 3, 4);
    run_params(&l, "UPDATE RP_T SET NAME = ?, AMOUNT = ? WHERE ID = ?", update_row, 1, 3);
    cr_assert_eq(fbw_tx_commit(l.tx), FBW_OK);
    cr_assert_eq(fbw_client_wait(l.cl), FBW_OK);
    cr_assert_eq(fbw_tx_error(l.tx)->code, FBW_OK, "%s", fbw_tx_error(l.tx)->msg);
    cr_assert_eq(fbw_conn_detach(l.c), FBW_OK);
    fbw_client_wait(l.cl);
    fbw_tx_free(l.tx);
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

/* ---- a concurrent capture on FB4 replayed as a load on FB3 ----
 * (captured on FB4: the shared FB3 port carries the other tests' traffic, more than tcpdump on a
 * busy machine keeps up with) */

/* Four fbwire clients at once, each with think time between its transactions: point and range
 * selects, UPDATE, a DATE parameter bound as a TIMESTAMP (as node-firebird does), INSERT and
 * DELETE, on rows of its own. */
#define LD_THREADS 4
#define LD_SECONDS 2
#define LD_THINK_MS 30

static const char *const ld_sql[] = {
    "SELECT ID, K, C, D FROM LD_T WHERE ID = ?",
    "SELECT ID, K FROM LD_T WHERE ID BETWEEN ? AND ? ORDER BY ID",
    "UPDATE LD_T SET K = K + 1 WHERE ID = ?",
    "UPDATE LD_T SET D = ? WHERE ID = ?",
    "INSERT INTO LD_T (ID, K, C, D) VALUES (?, ?, ?, ?)",
    "DELETE FROM LD_T WHERE ID = ?",
    "INSERT INTO LD_B (ID, B) VALUES (?, ?)",
    "INSERT INTO LD_C (ID, V) VALUES (?, ?)",
};
#define LD_NSQL (sizeof ld_sql / sizeof *ld_sql)

typedef struct ld_client {
    fbw_blob *blob;
    int blob_stage;
    char text[64];
    const fbw_servers *s;
    const char *dsn;
    int k;
    fbw_client *cl;
    fbw_tx *tx;
    fbw_stmt *st[LD_NSQL];
    size_t cur;
    fbw_value v[4];
    fbw_col ts_cols[2];
    char failed[512];
} ld_client;

/* Execute the current statement with c->v. */
static int ld_execute(ld_client *c)
{
    return fbw_client_execute(c->cl, c->st[c->cur], c->tx, c->v, FBW_EXEC_COUNT);
}

static int ld_q_blob(void *arg)
{
    ld_client *c = arg;
    int rc = FBW_OK;
    if (c->blob_stage == 0 && (rc = fbw_blob_create(c->blob, c->tx, NULL, 0)) == FBW_OK)
        c->blob_stage = 1;
    if (rc == FBW_OK && c->blob_stage == 1 &&
        (rc = fbw_blob_write(c->blob, c->text, strlen(c->text))) == FBW_OK)
        c->blob_stage = 2;
    if (rc == FBW_OK && c->blob_stage == 2 && (rc = fbw_blob_close(c->blob)) == FBW_OK)
        c->blob_stage = 3;
    return rc;
}

static int ld_fail(ld_client *c, const char *what, const char *msg);

typedef struct ld_batch {
    ld_client *c;
    fbw_batch *b;
    int stage;
    fbw_value v[2];
    char v_text[16];
} ld_batch;

/* create, 5 messages, execute: a stage that cannot be queued yet is resumed */
static int ld_q_batch(void *arg)
{
    ld_batch *x = arg;
    int rc = FBW_OK;
    if (x->stage == 0 && (rc = fbw_batch_create(x->b)) == FBW_OK)
        x->stage = 1;
    const fbw_msgfmt *in = fbw_stmt_input(x->c->st[7]);
    while (rc == FBW_OK && x->stage >= 1 && x->stage <= 5) {
        char id[16];
        fbw_err e;
        snprintf(id, sizeof id, "%d", x->c->k * 100 + x->stage);
        snprintf(x->v_text, sizeof x->v_text, "batch %d", x->stage);
        memset(x->v, 0, sizeof x->v);
        x->v[0].type = in->cols[0].type;
        x->v[1].type = in->cols[1].type;
        if (fbw_value_from_text(&in->cols[0], id, strlen(id), &x->v[0], &e) ||
            fbw_value_from_text(&in->cols[1], x->v_text, strlen(x->v_text), &x->v[1], &e))
            return FBW_E_USAGE;
        if ((rc = fbw_batch_add(x->b, x->v)) == FBW_OK)
            x->stage++;
    }
    if (rc == FBW_OK && x->stage == 6 && (rc = fbw_batch_execute(x->b, x->c->tx)) == FBW_OK)
        x->stage = 7;
    return rc;
}

/* One FB4 batch of five INSERTs (op_batch_create, op_batch_msg, op_batch_exec), committed. */
static int ld_batch_insert(ld_client *c)
{
    ld_batch x;
    memset(&x, 0, sizeof x);
    x.c = c;
    fbw_batch_opts o;
    fbw_batch_opts_init(&o);
    fbw_err e;
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    if (fbw_tx_start(c->tx, &to) || fbw_client_wait(c->cl) || fbw_tx_error(c->tx)->code)
        return ld_fail(c, "start", fbw_tx_error(c->tx)->msg);
    if (fbw_batch_new(fbw_client_conn(c->cl), c->st[7], &o, &x.b, &e))
        return ld_fail(c, "batch", e.msg);
    int rc = fbw_client_run(c->cl, ld_q_batch, &x);
    if (!rc)
        rc = fbw_client_wait(c->cl);
    const fbw_batch_cs *cs = fbw_batch_result(x.b);
    if (rc || !fbw_batch_executed(x.b) || !cs || cs->reccount != 5) {
        ld_fail(c, "batch execute", rc ? fbw_client_error(c->cl)->msg : "not all 5 messages ran");
        fbw_batch_free(x.b);
        return -1;
    }
    fbw_batch_free(x.b);
    if (fbw_tx_commit(c->tx) || fbw_client_wait(c->cl) || fbw_tx_error(c->tx)->code)
        return ld_fail(c, "commit", fbw_tx_error(c->tx)->msg);
    return 0;
}

static int ld_fail(ld_client *c, const char *what, const char *msg)
{
    if (!c->failed[0])
        snprintf(c->failed, sizeof c->failed, "client %d: %.200s: %.250s", c->k, what, msg);
    return -1;
}

/* Execute statement i with the parameters given as text (in the statement's format, or
 * TIMESTAMP for statement 3's DATE) and read its cursor to the end. */
static int ld_exec(ld_client *c, size_t i, const char *const *texts, int n)
{
    c->cur = i;
    const fbw_msgfmt *in = fbw_stmt_input(c->st[i]);
    for (int k = 0; k < n; k++) {
        fbw_err e;
        memset(&c->v[k], 0, sizeof c->v[k]);
        c->v[k].type = in->cols[k].type;
        if (fbw_value_from_text(&in->cols[k], texts[k], strlen(texts[k]), &c->v[k], &e))
            return ld_fail(c, texts[k], e.msg);
    }
    if (ld_execute(c) || fbw_stmt_error(c->st[i])->code)
        return ld_fail(c, ld_sql[i], fbw_stmt_error(c->st[i])->msg);
    while (!fbw_stmt_eof(c->st[i])) {
        fbw_stmt_clear_rows(c->st[i]);
        if (fbw_client_fetch(c->cl, c->st[c->cur]) || fbw_stmt_error(c->st[i])->code)
            return ld_fail(c, "fetch", fbw_stmt_error(c->st[i])->msg);
    }
    fbw_stmt_clear_rows(c->st[i]);
    return 0;
}

static int ld_iteration(ld_client *c, int it)
{
    char id[16], lo[16], hi[16], nid[16], k[16];
    int base = c->k * 50 + 1;
    snprintf(id, sizeof id, "%d", base + it % 50);
    snprintf(lo, sizeof lo, "%d", base + it % 45);
    snprintf(hi, sizeof hi, "%d", base + it % 45 + 4);
    snprintf(nid, sizeof nid, "%d", 100000 + c->k * 10000 + it);
    snprintf(k, sizeof k, "%d", it);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    if (fbw_tx_start(c->tx, &to) || fbw_client_wait(c->cl) || fbw_tx_error(c->tx)->code)
        return ld_fail(c, "start", fbw_tx_error(c->tx)->msg);
    const char *p0[] = {id}, *p1[] = {lo, hi}, *p3[] = {"2024-01-06 00:00:00", id},
               *p4[] = {nid, k, "load", "2024-02-29"};
    if (ld_exec(c, 0, p0, 1) || ld_exec(c, 1, p1, 2) || ld_exec(c, 2, p0, 1) ||
        ld_exec(c, 3, p3, 2) || ld_exec(c, 4, p4, 4) || ld_exec(c, 5, (const char *[]){nid}, 1))
        return -1;
    /* a text blob written with op_create_blob2 + op_batch_segments, then inserted by its id */
    fbw_err e;
    snprintf(c->text, sizeof c->text, "blob of row %s, iteration %d", nid, it);
    c->blob_stage = 0;
    if (fbw_blob_new(fbw_client_conn(c->cl), &c->blob, &e))
        return ld_fail(c, "blob", e.msg);
    int rc = fbw_client_run(c->cl, ld_q_blob, c);
    if (!rc)
        rc = fbw_client_wait(c->cl);
    if (!rc)
        rc = fbw_blob_id(c->blob, &c->v[1]);
    if (rc || fbw_blob_error(c->blob)->code) {
        ld_fail(c, "blob", fbw_blob_error(c->blob)->msg);
        fbw_blob_free(c->blob);
        return -1;
    }
    fbw_blob_free(c->blob);
    const fbw_msgfmt *in = fbw_stmt_input(c->st[6]);
    memset(&c->v[0], 0, sizeof c->v[0]);
    c->v[0].type = in->cols[0].type;
    if (fbw_value_from_text(&in->cols[0], nid, strlen(nid), &c->v[0], &e))
        return ld_fail(c, nid, e.msg);
    c->v[1].type = in->cols[1].type;
    c->cur = 6;
    if (ld_execute(c) || fbw_stmt_error(c->st[6])->code)
        return ld_fail(c, ld_sql[6], fbw_stmt_error(c->st[6])->msg);
    if (fbw_tx_commit(c->tx) || fbw_client_wait(c->cl) || fbw_tx_error(c->tx)->code)
        return ld_fail(c, "commit", fbw_tx_error(c->tx)->msg);
    return 0;
}

static void *ld_thread(void *arg)
{
    ld_client *c = arg;
    fbw_client_opts o;
    fbw_servers_client_opts(c->s, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
    fbw_err e;
    usleep((useconds_t)c->k * 40000u); /* staggered starts: offsets the replay must keep */
    if (fbw_client_connect(c->dsn, &o, &c->cl, &e)) {
        ld_fail(c, "connect", e.msg);
        return NULL;
    }
    fbw_conn *conn = fbw_client_conn(c->cl);
    cr_assert_eq(fbw_tx_new(conn, &c->tx, NULL), FBW_OK);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    if (fbw_tx_start(c->tx, &to) || fbw_client_wait(c->cl) || fbw_tx_error(c->tx)->code)
        ld_fail(c, "start", fbw_tx_error(c->tx)->msg);
    for (size_t i = 0; i < LD_NSQL && !c->failed[0]; i++) {
        c->cur = i;
        if (fbw_stmt_new(conn, &c->st[i], &e) || fbw_client_prepare(c->cl, c->st[i], c->tx, ld_sql[i], strlen(ld_sql[i])) ||
            fbw_stmt_error(c->st[i])->code) {
            ld_fail(c, ld_sql[i], fbw_stmt_error(c->st[i])->msg);
            break;
        }
    }
    if (!c->failed[0] && (fbw_tx_commit(c->tx) || fbw_client_wait(c->cl) || fbw_tx_error(c->tx)->code))
        ld_fail(c, "commit", fbw_tx_error(c->tx)->msg);
    /* the DATE parameter of statement 3 as the client binds it: a TIMESTAMP */
    if (!c->failed[0]) {
        const fbw_msgfmt *in = fbw_stmt_input(c->st[3]);
        memcpy(c->ts_cols, in->cols, 2 * sizeof *c->ts_cols);
        c->ts_cols[0].type = FBW_SQL_TIMESTAMP;
        c->ts_cols[0].length = 8;
        fbw_msgfmt f = {c->ts_cols, 2, 2};
        if (fbw_stmt_set_input(c->st[3], &f))
            ld_fail(c, "bind as TIMESTAMP", fbw_stmt_error(c->st[3])->msg);
    }
    if (!c->failed[0])
        ld_batch_insert(c);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int it = 0; !c->failed[0]; it++) {
        if (ld_iteration(c, it)) {
            size_t n = strlen(c->failed);
            snprintf(c->failed + n, sizeof c->failed - n, " (iteration %d)", it);
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 >= LD_SECONDS)
            break;
        usleep(LD_THINK_MS * 1000);
    }
    for (size_t i = 0; i < LD_NSQL; i++)
        fbw_stmt_free(c->st[i]);
    fbw_tx_free(c->tx);
    if (fbw_conn_detach(conn) == FBW_OK)
        fbw_client_wait(c->cl);
    fbw_client_close(c->cl);
    return NULL;
}

/* The table on a fresh database: 200 rows, K = ID * kmul. */
static void ld_db(const fbw_servers *s, const char *dsn, int kmul)
{
    create_db(s, dsn);
    char fill[600];
    snprintf(fill, sizeof fill,
             "CREATE TABLE LD_T (ID INTEGER NOT NULL PRIMARY KEY, K INTEGER, C VARCHAR(40), "
             "D DATE);\n"
             "CREATE TABLE LD_B (ID INTEGER NOT NULL PRIMARY KEY, B BLOB SUB_TYPE TEXT);\n"
             "CREATE TABLE LD_C (ID INTEGER NOT NULL PRIMARY KEY, V VARCHAR(20));\n"
             "INSERT INTO LD_T SELECT N, N * %d, 'row ' || N, DATE '2024-01-01' + N FROM (WITH "
             "RECURSIVE R (N) AS (SELECT 1 FROM RDB$DATABASE UNION ALL SELECT N + 1 FROM R WHERE "
             "N < 200) SELECT N FROM R);\n",
             kmul);
    const char *argv[] = {"--user", s->user, "--password", s->password, "--wire-crypt",
                          "disabled", "--bail", dsn, fill, NULL};
    fbw_run r = fbw_run_tool(SQL_TOOL, argv, NULL, 65536);
    cr_assert_eq(r.status, 0, "cannot fill %s: %s%s", dsn, r.out, r.err);
    fbw_run_free(&r);
}

static void db_path(const fbw_server *srv, const char *tag, char *path, size_t psize, char *dsn,
                    size_t dsize)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", srv->db);
    int n = snprintf(path, psize, "%s/fbwire_rload_%s_%d.fdb", dirname(dir), tag, (int)getpid());
    cr_assert(n > 0 && (size_t)n < psize, "database path too long");
    n = snprintf(dsn, dsize, "%s/%d:%s", srv->host, srv->port, path);
    cr_assert(n > 0 && (size_t)n < dsize, "connection string too long");
    unlink(path);
}

/* A query's rows as fbwire-sql prints them (blob contents as text). */
static char *rows_of(const fbw_servers *s, const char *dsn, const char *sql)
{
    const char *argv[] = {"--user", s->user, "--password", s->password, "--wire-crypt", "disabled",
                          "--tsv", dsn, sql, NULL};
    fbw_run r = fbw_run_tool(SQL_TOOL, argv, NULL, 1u << 20);
    cr_assert_eq(r.status, 0, "query %s: %s", dsn, r.err);
    char *out = strdup(r.out);
    fbw_run_free(&r);
    return out;
}

/* A number after "\"KEY\":" in JSON text at or after p; -1 when absent. */
static double json_num(const char *p, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *q = p ? strstr(p, k) : NULL;
    return q ? strtod(q + strlen(k), NULL) : -1;
}

/* Validate a replay's JSON output against docs/fbwire-pcap-replay.schema.json. */
static void check_schema(const char *tmp, const char *json)
{
    char path[700], out[700];
    snprintf(path, sizeof path, "%s/replay.json", tmp);
    snprintf(out, sizeof out, "%s/schema.out", tmp);
    write_file(path, json);
    char *argv[] = {"python3", "-c",
                    "import json,sys,jsonschema\n"
                    "jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))\n",
                    FBWIRE_SOURCE_DIR "/docs/fbwire-pcap-replay.schema.json", path, NULL};
    int st = spawn_wait(argv, NULL, out);
    FILE *f = fopen(out, "r");
    char msg[4096] = "";
    if (f) {
        size_t n = fread(msg, 1, sizeof msg - 1, f);
        msg[n] = 0;
        fclose(f);
    }
    cr_assert_eq(st, 0, "the replay JSON does not follow docs/fbwire-pcap-replay.schema.json:\n%s",
                 msg);
    unlink(path);
    unlink(out);
}

/* json: 1 --json, 2 --progress (text), 0 neither */
static fbw_run ld_replay(const fbw_servers *s, const char *cap, const char *port, const char *dsn,
                         const char *pace, int json)
{
    const char *argv[] = {"replay", cap, "--port", port, "--db", dsn, "--user", s->user,
                          "--password", s->password, "--pace", pace,
                          json == 1 ? "--json" : json == 2 ? "--progress" : NULL, NULL};
    fbw_run r = pcap_tool(argv);
    no_crash(&r, "load replay");
    cr_expect(!strstr(r.out, s->password) && !strstr(r.err, s->password), "password printed");
    return r;
}

/* Run the four clients on src while tcpdump records; keep only their connections in cap.
 * Returns 0 when tcpdump lost the start of one of them (then nothing is in cap). */
static int ld_capture(const fbw_servers *s, const char *tmp, const char *src, const char *src_dsn,
                       const char *raw, const char *cap, unsigned long *dropped)
{
    const fbw_server *from = &s->srv[FBW_SRV_FB4];
    char errlog[700], filter[64], port[16], tdout[700];
    snprintf(errlog, sizeof errlog, "%s/tcpdump.err", tmp);
    snprintf(tdout, sizeof tdout, "%s/tcpdump-r.out", tmp);
    snprintf(filter, sizeof filter, "tcp port %d", from->port);
    snprintf(port, sizeof port, "%d", from->port);
    pid_t td = fbw_tcpdump_start(raw, filter, errlog);
    cr_assert_neq(td, -1, "cannot start tcpdump: %s", strerror(errno));
    ld_client cl[LD_THREADS];
    pthread_t th[LD_THREADS];
    memset(cl, 0, sizeof cl);
    for (int i = 0; i < LD_THREADS; i++) {
        cl[i].s = s;
        cl[i].dsn = src_dsn;
        cl[i].k = i;
        cr_assert_eq(pthread_create(&th[i], NULL, ld_thread, &cl[i]), 0);
    }
    for (int i = 0; i < LD_THREADS; i++)
        pthread_join(th[i], NULL);
    fbw_tcpdump_stop(td);
    for (int i = 0; i < LD_THREADS; i++)
        cr_assert_str_empty(cl[i].failed, "%s", cl[i].failed);
    FILE *f = fopen(errlog, "r"); /* tcpdump's counts: did the kernel drop packets? */
    char line[256];
    *dropped = 0;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "dropped by kernel")) {
            fprintf(stderr, "capture: tcpdump: %s", line);
            *dropped = strtoul(line, NULL, 10);
        }
    if (f)
        fclose(f);

    const char *dump_argv[] = {"dump", "--port", port, raw, NULL};
    fbw_run d = pcap_tool(dump_argv);
    int ports[LD_THREADS + 1];
    size_t np = our_ports(d.out, src, ports, LD_THREADS + 1);
    fbw_run_free(&d);
    if (np != LD_THREADS) {
        fprintf(stderr, "expected %d connections in the capture, found %zu\n", LD_THREADS, np);
        unlink(raw);
        unlink(errlog);
        return 0;
    }
    char keep[200];
    snprintf(keep, sizeof keep,
             "tcp port %d and (tcp port %d or tcp port %d or tcp port %d or tcp port %d)",
             from->port, ports[0], ports[1], ports[2], ports[3]);
    char *tdr[] = {"tcpdump", "-r", (char *)raw, "-w", (char *)cap, keep, NULL};
    cr_assert_eq(spawn_wait(tdr, NULL, tdout), 0, "tcpdump -r failed");
    unlink(raw);
    unlink(errlog);
    unlink(tdout);
    return 1;
}

Test(pcap_replay, concurrent_capture_on_fb4_replays_as_a_paced_load_on_fb3, .timeout = 180)
{
    if (geteuid() != 0)
        cr_skip_test("tcpdump on lo needs root");
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server *from = &s.srv[FBW_SRV_FB4], *to = &s.srv[FBW_SRV_FB3];
    char src[1200], src_dsn[1600], dst[3][1200], dst_dsn[3][1600];
    const char *tags[] = {"paced", "nopace", "other"};
    for (int i = 0; i < 3; i++) {
        db_path(to, tags[i], dst[i], sizeof dst[i], dst_dsn[i], sizeof dst_dsn[i]);
        ld_db(&s, dst_dsn[i], i == 2 ? 3 : 1); /* "other": different K values */
    }

    char tmp[] = "/tmp/fbwire-test-rload.XXXXXX";
    cr_assert(mkdtemp(tmp));
    chmod(tmp, 0777);
    char raw[700], cap[700], port[16];
    snprintf(raw, sizeof raw, "%s/raw.pcap", tmp);
    snprintf(cap, sizeof cap, "%s/load.pcap", tmp);
    snprintf(port, sizeof port, "%d", from->port);
    /* tcpdump drops packets when the shared machine is busy: such a capture is not decodable to
     * its end (the tool says so); capture again on a fresh source database (at most 5 times) */
    static char lines[8192][512];
    size_t nsteps = 0;
    int lossy = 0; /* captures in which tcpdump reported drops */
    for (int attempt = 0; attempt < 5 && !nsteps; attempt++) {
        char tag[16];
        snprintf(tag, sizeof tag, "src%d", attempt);
        if (attempt)
            fbw_servers_drop_db(&s, src_dsn);
        db_path(from, tag, src, sizeof src, src_dsn, sizeof src_dsn);
        ld_db(&s, src_dsn, 1);
        unsigned long dropped = 0;
        int whole = ld_capture(&s, tmp, src, src_dsn, raw, cap, &dropped);
        lossy += dropped > 0;
        if (!whole)
            continue;
        const char *list_argv[] = {"replay", cap, "--port", port, "--list", NULL};
        fbw_run l = pcap_tool(list_argv);
        no_crash(&l, "--list");
        if (l.status == 0)
            nsteps = step_lines(l.out, lines, 8192);
        else
            fprintf(stderr, "capture %d cannot be replayed whole (lost packets?):\n%.600s\n",
                    attempt + 1, l.out);
        fbw_run_free(&l);
    }
    if (!nsteps && lossy == 5) {
        fbw_servers_drop_db(&s, src_dsn);
        for (int i = 0; i < 3; i++)
            fbw_servers_drop_db(&s, dst_dsn[i]);
        unlink(cap);
        rmdir(tmp);
        cr_skip_test("tcpdump dropped packets in each of 5 captures (a busy machine): nothing to "
                     "replay whole");
    }
    cr_assert_gt(nsteps, 100, "%zu steps", nsteps);

    size_t executes = 0; /* every execute's result is compared: rows (selects) or affected rows */
    for (size_t i = 0; i < nsteps; i++)
        executes += !strncmp(lines[i], "execute ", 8);

    /* paced, onto FB3 (text): every step, every result compared and matching, the table, wall
     * time ~ capture. The machine is shared: a run outside 10% is repeated (at most 3 runs). */
    double wall = -1, capture = -1;
    for (int attempt = 0; attempt < 3; attempt++) {
        char extra[1200], extra_dsn[1600], tag[16];
        const char *dsn = dst_dsn[0];
        if (attempt) {
            snprintf(tag, sizeof tag, "paced%d", attempt);
            db_path(to, tag, extra, sizeof extra, extra_dsn, sizeof extra_dsn);
            ld_db(&s, extra_dsn, 1);
            dsn = extra_dsn;
        }
        fbw_run r = ld_replay(&s, cap, port, dsn, "original", 0);
        cr_assert_eq(r.status, 0, "replay exit %d:\n%s%s", r.status, r.out, r.err);
        char want[160];
        snprintf(want, sizeof want, "total: %d connections, %d replayed, %zu steps, 0 failed\n",
                 LD_THREADS, LD_THREADS, nsteps);
        cr_expect(strstr(r.out, want), "want \"%s\":\n%s", want, r.out);
        snprintf(want, sizeof want, "\nresults: %zu compared, %zu matched, 0 different\n",
                 executes, executes);
        cr_expect(strstr(r.out, want), "want \"%s\":\n%s", want, r.out);
        const char *table = strstr(r.out, "statements by fingerprint");
        cr_assert(table, "%s", r.out);
        cr_expect(strstr(table, "cap_p50   cap_p95   rep_p50   rep_p95  ratio rt_cap rt_rep"),
                  "%s", table);
        cr_expect(strstr(table, "  UPDATE LD_T SET D = ? WHERE ID = ?\n"), "%s", table);
        cr_expect(strstr(table, "  COMMIT\n"), "%s", table);
        const char *w = strstr(r.out, "wall time: ");
        cr_assert(w && sscanf(w, "wall time: %lf s replay, %lf s capture", &wall, &capture) == 2,
                  "%s", r.out);
        fprintf(stderr, "paced replay on fb3 (run %d):\n%s", attempt + 1, table);
        fbw_run_free(&r);
        /* the blobs were written again from the captured segments, the batches ran message by
         * message: same contents */
        const char *q[] = {"SELECT ID, B FROM LD_B ORDER BY ID;", "SELECT ID, V FROM LD_C ORDER BY ID;"};
        for (int k = 0; k < 2; k++) {
            char *a = rows_of(&s, src_dsn, q[k]), *b = rows_of(&s, dsn, q[k]);
            cr_expect_gt(strlen(a), 100, "%s", a);
            cr_expect_str_eq(a, b, "%s differs:\ncapture's database:\n%.500s\nreplay's:\n%.500s",
                             q[k], a, b);
            free(a);
            free(b);
        }
        if (attempt)
            fbw_servers_drop_db(&s, extra_dsn);
        if (wall >= capture * 0.9 && wall <= capture * 1.1)
            break;
    }
    cr_expect(wall >= capture * 0.9 && wall <= capture * 1.1,
              "wall time %.3f s not within 10%% of the capture's %.3f s", wall, capture);

    /* no pacing (JSON, validated against its schema): same results, faster (no think time; a
     * run slower than the paced one on the busy machine is repeated, at most 3 runs) */
    double wall_none = -1;
    fbw_run r;
    for (int attempt = 0; attempt < 3 && !(wall_none > 0 && wall_none < wall); attempt++) {
        char extra[1200], extra_dsn[1600], tag[16];
        const char *dsn = dst_dsn[1];
        if (attempt) {
            snprintf(tag, sizeof tag, "nopace%d", attempt);
            db_path(to, tag, extra, sizeof extra, extra_dsn, sizeof extra_dsn);
            ld_db(&s, extra_dsn, 1);
            dsn = extra_dsn;
        }
        r = ld_replay(&s, cap, port, dsn, "none", 1);
        cr_assert_eq(r.status, 0, "replay exit %d:\n%s%s", r.status, r.out, r.err);
        check_schema(tmp, r.out);
        const char *total = strstr(r.out, "\"total\":");
        const char *load = strstr(r.out, "\"load\":");
        cr_assert(total && load, "%s", r.out);
        cr_expect_eq(json_num(total, "steps"), (double)nsteps, "%s", total);
        cr_expect_eq(json_num(total, "failed"), 0, "%s", total);
        cr_expect_eq(json_num(load, "compared"), (double)executes, "%s", load);
        cr_expect_eq(json_num(load, "matched"), (double)executes, "%s", load);
        cr_expect(strstr(load, "\"statement\":\"UPDATE LD_T SET D = ? WHERE ID = ?\""), "%s",
                  load);
        wall_none = json_num(load, "wall_s");
        fprintf(stderr, "--pace none (run %d): wall %.3f s\n", attempt + 1, wall_none);
        fbw_run_free(&r);
        if (attempt)
            fbw_servers_drop_db(&s, extra_dsn);
    }
    cr_expect(wall_none > 0 && wall_none < wall, "--pace none took %.3f s, paced %.3f s",
              wall_none, wall);

    /* other content: the differences are listed with their statement, and the exit status is 1;
     * --progress ends with its final line on stderr */
    r = ld_replay(&s, cap, port, dst_dsn[2], "none", 2);
    cr_expect_eq(r.status, 1, "exit %d:\n%s", r.status, r.out);
    char done[96];
    snprintf(done, sizeof done, "connections open, %d done, %zu steps, 0 failed\n", LD_THREADS,
             nsteps);
    cr_expect(strstr(r.err, "\rreplay: ") && strstr(r.err, done), "progress: %s", r.err);
    cr_expect(strstr(r.out, "different: step ") &&
                  strstr(r.out, "\"SELECT ID, K, C, D FROM LD_T WHERE ID = ?\": capture 1 rows"),
              "%s", r.out);
    const char *res = strstr(r.out, "\nresults: ");
    cr_expect(res && !strstr(res, " 0 different"), "%s", res ? res : r.out);
    fbw_run_free(&r);

    /* --connections 8: each captured connection replayed twice (the copies collide with the
     * originals' rows, so only the shape is checked, with --results ignore) */
    const char *fan_argv[] = {"replay", cap, "--port", port, "--db", dst_dsn[1], "--user", s.user,
                              "--password", s.password, "--pace", "none", "--connections", "8",
                              "--results", "ignore", NULL};
    r = pcap_tool(fan_argv);
    no_crash(&r, "--connections 8");
    char fan[160];
    snprintf(fan, sizeof fan, "\ntotal: %d connections, %d replayed, %zu steps, ", LD_THREADS,
             LD_THREADS, 2 * nsteps);
    cr_expect(strstr(r.out, fan) && strstr(r.out, "\nconnection 4 copy 1: ") &&
                  strstr(r.out, "(--results ignore)") && strstr(r.out, ", 8 connections\n"),
              "want \"%s\" and 4 copies:\n%s", fan, r.out);
    fbw_run_free(&r);

    fbw_servers_drop_db(&s, src_dsn);
    for (int i = 0; i < 3; i++)
        fbw_servers_drop_db(&s, dst_dsn[i]);
    unlink(cap);
    rmdir(tmp);
}
