/* SPDX-License-Identifier: MIT */
/* test_pcap_replay_ops.c - `fbwire-pcap replay` of what a client does besides statements: blob
 * reads (op_open_blob2, op_get_segment, op_info_blob, op_close_blob) of ids from fetched rows,
 * execute immediate with parameters and an output row (op_exec_immediate2), and info requests
 * with the client's own items (op_info_database, op_info_transaction, op_info_sql).
 *
 * Live, on FB3 and on FB4 (root for tcpdump): an fbwire session does all of these on a fresh
 * database while tcpdump records; the capture is replayed into a second fresh database. The list
 * must show every one of them as a step and none as "not replayed"; the replay must run every step
 * and compare the blob contents, the execute immediate output rows and the affected rows the
 * client asked for with an info request, all matching. The session also calls the library's
 * fbw_conn_info_request, fbw_blob_handle and fbw_exec_immediate2 and checks what they return.
 * A blob read of a row fetched before tcpdump started is listed as not replayable and fails. */
#include "run_tool.h"
#include "capture.h"
#include "servers.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define TOOL FBWIRE_BINARY_DIR "/tools/fbwire-pcap"
#define SQL_TOOL FBWIRE_BINARY_DIR "/tools/fbwire-sql"
#define OUT_MAX (4u << 20)

/* Blob contents of the rows: row 2 spans several reads and is read only in part; row 4 is a
 * stream blob the session writes itself and reads from offset SEEK_AT. */
#define NROWS 4
#define SEEK_AT 1000
static const size_t blob_len[NROWS] = {100, 20000, 5000, 9000};

static void fill(char *p, size_t n, int k)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (char)('a' + (i * 7 + (size_t)k) % 26);
}

typedef struct sess {
    fbw_client *cl;
    fbw_conn *c;
    fbw_tx *tx;
} sess;

static void ok_wait(sess *s, const char *what)
{
    cr_assert_eq(fbw_client_wait(s->cl), FBW_OK, "%s: %s", what, fbw_client_error(s->cl)->msg);
}

static void start(sess *s)
{
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    if (!s->tx) /* one object; an ended transaction starts again */
        cr_assert_eq(fbw_tx_new(s->c, &s->tx, NULL), FBW_OK);
    cr_assert_eq(fbw_tx_start(s->tx, &to), FBW_OK);
    ok_wait(s, "start");
}

static void commit(sess *s)
{
    cr_assert_eq(fbw_tx_commit(s->tx), FBW_OK);
    ok_wait(s, "commit");
    cr_assert_eq(fbw_tx_error(s->tx)->code, FBW_OK, "commit: %s", fbw_tx_error(s->tx)->msg);
}

/* An info request with the caller's items; the reply must end with isc_info_end. */
static void info(sess *s, int32_t op, uint16_t object, const uint8_t *items, size_t n,
                 fbw_info_result *res)
{
    cr_assert_eq(fbw_conn_info_request(s->c, op, object, items, n, 256, res), FBW_OK);
    ok_wait(s, "info");
    cr_assert(res->done, "info reply not in");
    cr_assert_eq(res->err.code, FBW_OK, "info op %d: %s", (int)op, res->err.msg);
    cr_assert_gt(fbw_buf_avail(&res->data), 1, "info op %d: empty reply", (int)op);
    cr_assert_eq(fbw_buf_head(&res->data)[0], items[0], "info op %d: reply starts with item %u",
                 (int)op, fbw_buf_head(&res->data)[0]);
}

static void session(const fbw_servers *srv, const char *dsn, int *local_port)
{
    fbw_client_opts o;
    fbw_servers_client_opts(srv, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
    sess s;
    memset(&s, 0, sizeof s);
    fbw_err e;
    cr_assert_eq(fbw_client_connect(dsn, &o, &s.cl, &e), FBW_OK, "%s", e.msg);
    s.c = fbw_client_conn(s.cl);
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    cr_assert_eq(getsockname(fbw_client_fd(s.cl), (struct sockaddr *)&sa, &sl), 0);
    *local_port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                                 : ((struct sockaddr_in *)&sa)->sin_port);

    start(&s);
    fbw_exec_result er;
    const char *ddl = "CREATE TABLE RO_T (ID INTEGER NOT NULL PRIMARY KEY, B BLOB SUB_TYPE TEXT, "
                      "N VARCHAR(10))";
    cr_assert_eq(fbw_exec_immediate(s.c, s.tx, ddl, strlen(ddl), &er), FBW_OK);
    ok_wait(&s, "create table");
    cr_assert_eq(er.err.code, FBW_OK, "%s", er.err.msg);
    commit(&s);
    start(&s);

    /* op_exec_immediate2: input in the client's own format (the blob as a VARCHAR), output row */
    fbw_exec_result2 r2;
    fbw_buf_init(&r2.row);
    fbw_col in_cols[3] = {{.type = FBW_SQL_LONG, .length = 4},
                          {.type = FBW_SQL_VARYING, .length = 32000},
                          {.type = FBW_SQL_VARYING, .length = 10}};
    fbw_col out_cols[2] = {{.type = FBW_SQL_INT64, .length = 8},
                           {.type = FBW_SQL_VARYING, .length = 10}};
    fbw_msgfmt in = {in_cols, 3, 3}, out1 = {out_cols, 1, 1}, out2 = {out_cols, 2, 2};
    char *text = malloc(32000);
    cr_assert(text);
    const char *ins = "INSERT INTO RO_T (ID, B, N) VALUES (?, ?, ?) RETURNING ID * 10";
    for (int k = 0; k < 3; k++) {
        char name[12];
        snprintf(name, sizeof name, "n%d", k + 1);
        fill(text, blob_len[k], k);
        fbw_value v[3] = {{.type = FBW_SQL_LONG, .u.i64 = k + 1},
                          {.type = FBW_SQL_VARYING, .u.bytes = {(const uint8_t *)text, blob_len[k]}},
                          {.type = FBW_SQL_VARYING, .u.bytes = {(const uint8_t *)name, strlen(name)}}};
        cr_assert_eq(fbw_exec_immediate2(s.c, s.tx, ins, strlen(ins), &in, v, &out1, &r2), FBW_OK,
                     "%s", r2.err.msg);
        ok_wait(&s, "insert");
        cr_assert(r2.done);
        cr_assert_eq(r2.err.code, FBW_OK, "%s", r2.err.msg);
        cr_assert(r2.has_row, "INSERT ... RETURNING gave no row");
        fbw_value got;
        fbw_bytes raw = {fbw_buf_head(&r2.row), fbw_buf_avail(&r2.row)};
        cr_assert_eq(fbw_msg_decode(raw, &out1, fbw_conn_get_info(s.c)->protocol, &got, &e), FBW_OK,
                     "%s", e.msg);
        cr_expect_eq(got.u.i64, (k + 1) * 10);
    }
    free(text);
    const char *cnt = "SELECT COUNT(*), MAX(N) FROM RO_T";
    cr_assert_eq(fbw_exec_immediate2(s.c, s.tx, cnt, strlen(cnt), NULL, NULL, &out2, &r2), FBW_OK);
    ok_wait(&s, "count");
    cr_assert_eq(r2.err.code, FBW_OK, "%s", r2.err.msg);
    cr_assert(r2.has_row);

    /* a stream blob written by the session (isc_bpb_type stream), sent as a BLOB parameter */
    static const uint8_t stream_bpb[] = {1 /* isc_bpb_version1 */, 3 /* isc_bpb_type */, 1,
                                         1 /* isc_bpb_type_stream */};
    fbw_blob *wb;
    cr_assert_eq(fbw_blob_new(s.c, &wb, &e), FBW_OK);
    cr_assert_eq(fbw_blob_create(wb, s.tx, stream_bpb, sizeof stream_bpb), FBW_OK);
    ok_wait(&s, "create blob");
    char *stream = malloc(blob_len[3]);
    cr_assert(stream);
    fill(stream, blob_len[3], 3);
    cr_assert_eq(fbw_blob_write(wb, stream, blob_len[3]), FBW_OK);
    cr_assert_eq(fbw_blob_close(wb), FBW_OK);
    ok_wait(&s, "write blob");
    cr_assert_eq(fbw_blob_error(wb)->code, FBW_OK, "%s", fbw_blob_error(wb)->msg);
    free(stream);
    fbw_col bcols[2] = {{.type = FBW_SQL_LONG, .length = 4}, {.type = FBW_SQL_BLOB, .length = 8}};
    fbw_msgfmt bin = {bcols, 2, 2};
    fbw_value bv[2] = {{.type = FBW_SQL_LONG, .u.i64 = 4}};
    cr_assert_eq(fbw_blob_id(wb, &bv[1]), FBW_OK);
    fbw_blob_free(wb);
    const char *ins4 = "INSERT INTO RO_T (ID, B, N) VALUES (?, ?, 'n4')";
    cr_assert_eq(fbw_exec_immediate2(s.c, s.tx, ins4, strlen(ins4), &bin, bv, NULL, &r2), FBW_OK,
                 "%s", r2.err.msg);
    ok_wait(&s, "insert stream blob");
    cr_assert_eq(r2.err.code, FBW_OK, "%s", r2.err.msg);
    cr_assert(!r2.has_row);
    fbw_buf_free(&r2.row);

    /* info requests with the client's items */
    fbw_info_result ir;
    fbw_buf_init(&ir.data);
    static const uint8_t db_items[] = {14 /* page_size */, 32 /* ods_version */, 1};
    static const uint8_t tra_items[] = {4 /* isc_info_tra_id */, 1};
    static const uint8_t sql_items[] = {21 /* isc_info_sql_stmt_type */, 1};
    static const uint8_t rec_items[] = {23 /* isc_info_sql_records */, 1};
    static const uint8_t blob_items[] = {6 /* isc_info_blob_total_length */, 1};
    /* what fbw_conn_info_request refuses: another op, a buffer length out of range */
    cr_expect_eq(fbw_conn_info_request(s.c, FBW_OP_EXECUTE, 0, db_items, sizeof db_items, 256, &ir),
                 FBW_E_USAGE);
    cr_expect_eq(fbw_conn_info_request(s.c, FBW_OP_INFO_DATABASE, 0, db_items, sizeof db_items, 0,
                                       &ir), FBW_E_USAGE);
    cr_expect_eq(fbw_conn_info_request(s.c, FBW_OP_INFO_DATABASE, 0, db_items, sizeof db_items,
                                       (64u << 20) + 1, &ir), FBW_E_USAGE);
    info(&s, FBW_OP_INFO_DATABASE, 0, db_items, sizeof db_items, &ir);
    uint16_t h;
    cr_assert_eq(fbw_tx_handle(s.tx, &h), FBW_OK);
    info(&s, FBW_OP_INFO_TRANSACTION, h, tra_items, sizeof tra_items, &ir);

    /* the rows, then their blobs: read whole, in part, whole with an info request first */
    fbw_stmt *st;
    cr_assert_eq(fbw_stmt_new(s.c, &st, &e), FBW_OK);
    const char *sel = "SELECT ID, B FROM RO_T ORDER BY ID";
    cr_assert_eq(fbw_stmt_prepare(st, s.tx, sel, strlen(sel)), FBW_OK);
    ok_wait(&s, "prepare");
    cr_assert_eq(fbw_stmt_execute(st, s.tx, NULL, 0), FBW_OK);
    ok_wait(&s, "select");
    while (!fbw_stmt_eof(st) && fbw_stmt_row_count(st) < NROWS) {
        cr_assert_eq(fbw_stmt_fetch(st), FBW_OK);
        ok_wait(&s, "fetch");
    }
    cr_assert_eq(fbw_stmt_row_count(st), NROWS, "%s", fbw_stmt_error(st)->msg);
    cr_assert_eq(fbw_stmt_handle(st, &h), FBW_OK);
    info(&s, FBW_OP_INFO_SQL, h, sql_items, sizeof sql_items, &ir);
    fbw_value ids[NROWS];
    for (size_t k = 0; k < NROWS; k++) {
        fbw_value v[2];
        cr_assert_eq(fbw_stmt_row(st, k, v, &e), FBW_OK, "%s", e.msg);
        ids[k] = v[1];
    }
    for (int k = 0; k < NROWS; k++) {
        fbw_blob *b;
        cr_assert_eq(fbw_blob_new(s.c, &b, &e), FBW_OK);
        cr_assert_eq(fbw_blob_open(b, s.tx, &ids[k], NULL, 0), FBW_OK);
        ok_wait(&s, "open blob");
        if (k == 0) {
            cr_assert_eq(fbw_blob_query_info(b), FBW_OK);
            cr_assert_eq(fbw_blob_read(b, 4096), FBW_OK);
            ok_wait(&s, "info + read");
        } else if (k == 2) {
            cr_assert_eq(fbw_blob_handle(b, &h), FBW_OK);
            info(&s, FBW_OP_INFO_BLOB, h, blob_items, sizeof blob_items, &ir);
        } else if (k == 3) {
            cr_assert_eq(fbw_blob_seek(b, FBW_SEEK_SET, SEEK_AT), FBW_OK);
            ok_wait(&s, "seek");
            cr_assert_eq(fbw_blob_position(b), SEEK_AT, "position %d: %s", (int)fbw_blob_position(b),
                         fbw_blob_error(b)->msg);
        }
        int reads = 0;
        while (!fbw_blob_eof(b) && !(k == 1 && reads == 2)) {
            cr_assert_eq(fbw_blob_read(b, k == 2 ? 65535 : 4096), FBW_OK);
            ok_wait(&s, "read");
            reads++;
        }
        cr_assert_eq(fbw_blob_error(b)->code, FBW_OK, "%s", fbw_blob_error(b)->msg);
        size_t n;
        fbw_blob_data(b, &n);
        if (k == 1)
            cr_assert(n > 0 && n < blob_len[1], "row 2: a part read, %zu bytes", n);
        else
            cr_assert_eq(n, blob_len[k] - (k == 3 ? SEEK_AT : 0));
        cr_assert_eq(fbw_blob_close(b), FBW_OK);
        ok_wait(&s, "close blob");
        fbw_blob_free(b);
    }
    fbw_stmt_free(st);

    /* a blob id returned by op_exec_immediate2 (RETURNING), then read */
    const char *ret = "INSERT INTO RO_T (ID, B, N) VALUES (5, 'returned blob', 'n5') RETURNING B";
    fbw_col rcol = {.type = FBW_SQL_BLOB, .length = 8};
    fbw_msgfmt rout = {&rcol, 1, 1};
    fbw_buf_init(&r2.row);
    cr_assert_eq(fbw_exec_immediate2(s.c, s.tx, ret, strlen(ret), NULL, NULL, &rout, &r2), FBW_OK);
    ok_wait(&s, "insert returning");
    cr_assert_eq(r2.err.code, FBW_OK, "%s", r2.err.msg);
    cr_assert(r2.has_row);
    fbw_value rid;
    fbw_bytes rraw = {fbw_buf_head(&r2.row), fbw_buf_avail(&r2.row)};
    cr_assert_eq(fbw_msg_decode(rraw, &rout, fbw_conn_get_info(s.c)->protocol, &rid, &e), FBW_OK);
    fbw_buf_free(&r2.row);
    fbw_blob *rb;
    cr_assert_eq(fbw_blob_new(s.c, &rb, &e), FBW_OK);
    cr_assert_eq(fbw_blob_open(rb, s.tx, &rid, NULL, 0), FBW_OK);
    ok_wait(&s, "open returned blob");
    while (!fbw_blob_eof(rb)) {
        cr_assert_eq(fbw_blob_read(rb, 4096), FBW_OK);
        ok_wait(&s, "read returned blob");
    }
    size_t rn;
    fbw_blob_data(rb, &rn);
    cr_assert_eq(rn, strlen("returned blob"), "%s", fbw_blob_error(rb)->msg);
    fbw_blob_free(rb);

    /* affected rows asked in a write of their own, after the execution */
    cr_assert_eq(fbw_stmt_new(s.c, &st, &e), FBW_OK);
    const char *upd = "UPDATE RO_T SET N = 'u' || N WHERE ID BETWEEN 2 AND 3";
    cr_assert_eq(fbw_stmt_prepare(st, s.tx, upd, strlen(upd)), FBW_OK);
    ok_wait(&s, "prepare update");
    cr_assert_eq(fbw_stmt_execute(st, s.tx, NULL, 0), FBW_OK);
    ok_wait(&s, "update");
    cr_assert_eq(fbw_stmt_handle(st, &h), FBW_OK);
    info(&s, FBW_OP_INFO_SQL, h, rec_items, sizeof rec_items, &ir);
    uint64_t affected = 0, selected = 0;
    cr_assert_eq(fbw_info_records(fbw_buf_head(&ir.data), fbw_buf_avail(&ir.data), &affected,
                                  &selected, &e), FBW_OK, "%s", e.msg);
    cr_expect_eq(affected, 2);
    fbw_stmt_free(st);
    fbw_buf_free(&ir.data);
    commit(&s);
    fbw_tx_free(s.tx);
    cr_assert_eq(fbw_conn_detach(s.c), FBW_OK);
    fbw_client_wait(s.cl);
    fbw_client_close(s.cl);
}

static void create_db(const fbw_servers *s, const char *dsn)
{
    const char *argv[] = {"--info",   "--create", "--user",   s->user, "--password",
                          s->password, "--wire-crypt", "disabled", dsn,   NULL};
    fbw_run r = fbw_run_tool(SQL_TOOL, argv, NULL, 65536);
    cr_assert_eq(r.status, 0, "cannot create %s: %s", dsn, r.err);
    fbw_run_free(&r);
}

static int spawn_wait(char *const *argv, const char *out)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        return -1;
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void path_of(const fbw_server *srv, const char *tag, char *path, size_t psize, char *dsn,
                    size_t dsize)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", srv->db);
    int n = snprintf(path, psize, "%s/fbwire_replay_ops_%s_%d.fdb", dirname(dir), tag,
                     (int)getpid());
    cr_assert(n > 0 && (size_t)n < psize, "database path too long");
    n = snprintf(dsn, dsize, "%s/%d:%s", srv->host, srv->port, path);
    cr_assert(n > 0 && (size_t)n < dsize, "connection string too long");
}

static void capture_and_replay(int which)
{
    if (geteuid() != 0)
        cr_skip_test("tcpdump on lo needs root");
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server *srv = &s.srv[which];
    char src[1200], dst[1200], src_dsn[1600], dst_dsn[1600];
    path_of(srv, "src", src, sizeof src, src_dsn, sizeof src_dsn);
    path_of(srv, "dst", dst, sizeof dst, dst_dsn, sizeof dst_dsn);
    fbw_servers_drop_db(&s, src_dsn);
    fbw_servers_drop_db(&s, dst_dsn);
    create_db(&s, src_dsn);
    create_db(&s, dst_dsn);

    char tmp[600];
    cr_assert_eq(fbw_capture_dir("replay-ops", tmp, sizeof tmp), 0, "%s", strerror(errno));
    char raw[700], cap[700], errlog[700], tdout[700], filter[64], port[16], keep[96];
    snprintf(raw, sizeof raw, "%s/raw.pcap", tmp);
    snprintf(cap, sizeof cap, "%s/session.pcap", tmp);
    snprintf(errlog, sizeof errlog, "%s/tcpdump.err", tmp);
    snprintf(tdout, sizeof tdout, "%s/tcpdump-r.out", tmp);
    snprintf(filter, sizeof filter, "tcp port %d", srv->port);
    snprintf(port, sizeof port, "%d", srv->port);
    pid_t td = fbw_tcpdump_start(raw, filter, errlog);
    cr_assert_neq(td, -1, "cannot start tcpdump: %s", strerror(errno));
    int local = 0;
    session(&s, src_dsn, &local);
    fbw_tcpdump_stop(td);
    /* only our connection (others may use the same server meanwhile) */
    snprintf(keep, sizeof keep, "tcp port %d and tcp port %d", srv->port, local);
    char *tdr[] = {"tcpdump", "-r", raw, "-w", cap, keep, NULL};
    cr_assert_eq(spawn_wait(tdr, tdout), 0, "tcpdump -r failed");

    /* the list: every op of the session is a step, none is left out */
    const char *list_argv[] = {"replay", cap, "--port", port, "--list", NULL};
    fbw_run l = fbw_run_tool(TOOL, list_argv, NULL, OUT_MAX);
    cr_assert_eq(l.status, 0, "--list exit %d:\n%s%s", l.status, l.out, l.err);
    cr_expect(!strstr(l.out, "not replayed"), "ops left out:\n%s", l.out);
    cr_expect(!strstr(l.out, "not replayable"), "%s", l.out);
    cr_expect_eq(count(l.out, " blob_read t"), NROWS + 1, "a blob read per row, one returned:\n%s",
                 l.out);
    cr_expect(strstr(l.out, "from step ") && strstr(l.out, " row 2 col 2 "), "%s", l.out);
    cr_expect_eq(count(l.out, "(to its end)"), 4, "rows 1, 3, 4, the returned read to their end:\n%s",
                 l.out);
    cr_expect_eq(count(l.out, " blob t"), 1, "the stream blob written:\n%s", l.out);
    cr_expect(strstr(l.out, "params=(1, ") && strstr(l.out, "\"n3\") output=1"),
              "execute immediate with its parameters and output:\n%s", l.out);
    cr_expect(strstr(l.out, "\"SELECT COUNT(*), MAX(N) FROM RO_T\" output=2"), "%s", l.out);
    cr_expect(strstr(l.out, " info_database items=0e2001 buffer=256"), "%s", l.out);
    cr_expect(strstr(l.out, " info_transaction t"), "%s", l.out);
    cr_expect(strstr(l.out, " items=0401 buffer=256"), "%s", l.out);
    cr_expect(strstr(l.out, " info_sql s1 items=1501 buffer=256"), "%s", l.out);
    cr_expect(strstr(l.out, " info_sql s2 items=1701 buffer=256"), "%s", l.out);
    fbw_run_free(&l);

    /* the replay: every step runs and every compared result matches */
    const char *rep_argv[] = {"replay", cap, "--port", port, "--db", dst_dsn, "--user", s.user,
                              "--password", s.password, "--pace", "none", NULL};
    fbw_run r = fbw_run_tool(TOOL, rep_argv, NULL, OUT_MAX);
    fprintf(stderr, "%s", r.out);
    cr_assert_eq(r.status, 0, "replay exit %d:\n%s%s", r.status, r.out, r.err);
    cr_expect(strstr(r.out, " steps, 0 failed"), "%s", r.out);
    cr_expect(!strstr(r.out, "different:"), "%s", r.out);
    unsigned long compared = 0, matched = 0, different = 1;
    const char *res = strstr(r.out, "\nresults: ");
    cr_assert(res, "%s", r.out);
    cr_assert_eq(sscanf(res, "\nresults: %lu compared, %lu matched, %lu different", &compared,
                        &matched, &different), 3);
    /* 5 blob reads, 5 execute immediate rows, the SELECT, the UPDATE's affected rows */
    cr_expect_eq(compared, 12, "%s", r.out);
    cr_expect_eq(matched, compared);
    cr_expect_eq(different, 0);
    /* the blob reads' line of the latency table: the client's round trips, request for request */
    const char *br = strstr(r.out, "(blob read)");
    cr_assert(br, "the blob reads in the latency table:\n%s", r.out);
    while (br > r.out && br[-1] != '\n')
        br--;
    unsigned n = 0;
    double lat[5], rt_cap = -1, rt_rep = -2;
    cr_assert_eq(sscanf(br, "%u %lf %lf %lf %lf %lf %lf %lf", &n, &lat[0], &lat[1], &lat[2], &lat[3],
                        &lat[4], &rt_cap, &rt_rep), 8, "%.120s", br);
    cr_expect_eq(n, NROWS + 1);
    cr_expect(rt_cap == rt_rep && rt_cap >= 2, "blob read round trips: capture %.2f, replay %.2f",
              rt_cap, rt_rep);
    fbw_run_free(&r);

    /* the replayed database holds what the source does */
    const char *q = "SELECT ID, N, CHAR_LENGTH(B), HASH(B) FROM RO_T ORDER BY ID";
    const char *qa[] = {"--user", s.user, "--password", s.password, "--wire-crypt", "disabled",
                        "--tsv", src_dsn, q, NULL};
    fbw_run a = fbw_run_tool(SQL_TOOL, qa, NULL, 65536);
    qa[7] = dst_dsn;
    fbw_run b = fbw_run_tool(SQL_TOOL, qa, NULL, 65536);
    cr_assert_eq(a.status, 0, "%s", a.err);
    cr_assert_eq(b.status, 0, "%s", b.err);
    cr_expect(strstr(a.out, "20000"), "%s", a.out);
    cr_expect_str_eq(a.out, b.out);
    fbw_run_free(&a);
    fbw_run_free(&b);

    fbw_servers_drop_db(&s, src_dsn);
    fbw_servers_drop_db(&s, dst_dsn);
    unlink(raw);
    unlink(cap);
    unlink(errlog);
    unlink(tdout);
    rmdir(tmp);
}

Test(pcap_replay_ops, fb3_blob_reads_exec_immediate2_and_info_replay_and_match, .timeout = 120)
{
    capture_and_replay(FBW_SRV_FB3);
}

Test(pcap_replay_ops, fb4_blob_reads_exec_immediate2_and_info_replay_and_match, .timeout = 120)
{
    capture_and_replay(FBW_SRV_FB4);
}

/* A blob id the capture never saw in a row (the row was fetched before tcpdump started) cannot be
 * mapped to the replay's: its blob read is listed as not replayable and fails, never skipped. */
Test(pcap_replay_ops, blob_read_of_a_row_fetched_before_the_capture_is_not_replayable,
     .timeout = 120)
{
    if (geteuid() != 0)
        cr_skip_test("tcpdump on lo needs root");
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server *srv = &s.srv[FBW_SRV_FB3];
    char src[1200], dst[1200], src_dsn[1600], dst_dsn[1600];
    path_of(srv, "late_src", src, sizeof src, src_dsn, sizeof src_dsn);
    path_of(srv, "late_dst", dst, sizeof dst, dst_dsn, sizeof dst_dsn);
    fbw_servers_drop_db(&s, src_dsn);
    fbw_servers_drop_db(&s, dst_dsn);
    create_db(&s, src_dsn);
    create_db(&s, dst_dsn);

    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
    sess x;
    memset(&x, 0, sizeof x);
    fbw_err e;
    cr_assert_eq(fbw_client_connect(src_dsn, &o, &x.cl, &e), FBW_OK, "%s", e.msg);
    x.c = fbw_client_conn(x.cl);
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    cr_assert_eq(getsockname(fbw_client_fd(x.cl), (struct sockaddr *)&sa, &sl), 0);
    int local = ntohs(((struct sockaddr_in *)&sa)->sin_port);
    start(&x);
    fbw_exec_result er;
    const char *sql[] = {"CREATE TABLE RO_L (ID INTEGER, B BLOB SUB_TYPE TEXT)",
                         "INSERT INTO RO_L VALUES (1, 'read after the capture began')"};
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(fbw_exec_immediate(x.c, x.tx, sql[i], strlen(sql[i]), &er), FBW_OK);
        ok_wait(&x, sql[i]);
        cr_assert_eq(er.err.code, FBW_OK, "%s", er.err.msg);
        commit(&x);
        start(&x);
    }
    /* fbw_exec_immediate2 and a server error (before the capture: the replay would fail it
     * too): the error in the result, nothing returned, the connection usable */
    fbw_exec_result2 r2;
    fbw_buf_init(&r2.row);
    fbw_col oc = {.type = FBW_SQL_INT64, .length = 8};
    fbw_msgfmt out1 = {&oc, 1, 1};
    const char *bad = "SELECT NO_SUCH_COLUMN FROM RDB$DATABASE";
    cr_assert_eq(fbw_exec_immediate2(x.c, x.tx, bad, strlen(bad), NULL, NULL, &out1, &r2), FBW_OK);
    ok_wait(&x, "bad select");
    cr_expect(r2.done && !r2.has_row && r2.err.code == FBW_E_SERVER, "code %d", r2.err.code);
    cr_expect_str_eq(r2.err.sqlstate, "42S22");
    const char *one = "SELECT COUNT(*) FROM RO_L";
    cr_assert_eq(fbw_exec_immediate2(x.c, x.tx, one, strlen(one), NULL, NULL, &out1, &r2), FBW_OK);
    ok_wait(&x, "count");
    cr_assert_eq(r2.err.code, FBW_OK, "%s", r2.err.msg);
    cr_assert(r2.has_row);
    fbw_buf_free(&r2.row);

    fbw_stmt *st;
    cr_assert_eq(fbw_stmt_new(x.c, &st, &e), FBW_OK);
    const char *sel = "SELECT B FROM RO_L";
    cr_assert_eq(fbw_stmt_prepare(st, x.tx, sel, strlen(sel)), FBW_OK);
    ok_wait(&x, "prepare");
    cr_assert_eq(fbw_stmt_execute(st, x.tx, NULL, 0), FBW_OK);
    ok_wait(&x, "select");
    fbw_value id;
    cr_assert_eq(fbw_stmt_row_count(st), 1);
    cr_assert_eq(fbw_stmt_row(st, 0, &id, &e), FBW_OK, "%s", e.msg);

    char tmp[600];
    cr_assert_eq(fbw_capture_dir("replay-ops", tmp, sizeof tmp), 0, "%s", strerror(errno));
    char raw[700], cap[700], errlog[700], tdout[700], filter[64], port[16], keep[96];
    snprintf(raw, sizeof raw, "%s/raw.pcap", tmp);
    snprintf(cap, sizeof cap, "%s/late.pcap", tmp);
    snprintf(errlog, sizeof errlog, "%s/tcpdump.err", tmp);
    snprintf(tdout, sizeof tdout, "%s/tcpdump-r.out", tmp);
    snprintf(filter, sizeof filter, "tcp port %d and tcp port %d", srv->port, local);
    snprintf(port, sizeof port, "%d", srv->port);
    pid_t td = fbw_tcpdump_start(raw, filter, errlog);
    cr_assert_neq(td, -1, "cannot start tcpdump: %s", strerror(errno));
    fbw_blob *b;
    cr_assert_eq(fbw_blob_new(x.c, &b, &e), FBW_OK);
    cr_assert_eq(fbw_blob_open(b, x.tx, &id, NULL, 0), FBW_OK);
    ok_wait(&x, "open");
    while (!fbw_blob_eof(b)) {
        cr_assert_eq(fbw_blob_read(b, 4096), FBW_OK);
        ok_wait(&x, "read");
    }
    cr_assert_eq(fbw_blob_error(b)->code, FBW_OK, "%s", fbw_blob_error(b)->msg);
    cr_assert_eq(fbw_blob_close(b), FBW_OK);
    ok_wait(&x, "close");
    fbw_blob_free(b);
    fbw_stmt_free(st);
    commit(&x);
    cr_assert_eq(fbw_conn_detach(x.c), FBW_OK);
    fbw_client_wait(x.cl);
    fbw_tx_free(x.tx);
    fbw_client_close(x.cl);
    fbw_tcpdump_stop(td);
    snprintf(keep, sizeof keep, "tcp port %d and tcp port %d", srv->port, local);
    char *tdr[] = {"tcpdump", "-r", raw, "-w", cap, keep, NULL};
    cr_assert_eq(spawn_wait(tdr, tdout), 0, "tcpdump -r failed");

    const char *list_argv[] = {"replay", cap, "--port", port, "--list", NULL};
    fbw_run l = fbw_run_tool(TOOL, list_argv, NULL, OUT_MAX);
    fprintf(stderr, "%s%s", l.out, l.err);
    cr_assert(l.status < 128, "fbwire-pcap died: %d", l.status);
    cr_expect(strstr(l.out, " blob_read requests=2 ") &&
                  strstr(l.out, "is in no row the capture fetched (read before the capture started"),
              "%s", l.out);
    fbw_run_free(&l);
    const char *rep_argv[] = {"replay", cap, "--port", port, "--db", dst_dsn, "--user", s.user,
                              "--password", s.password, "--pace", "none", NULL};
    fbw_run r = fbw_run_tool(TOOL, rep_argv, NULL, OUT_MAX);
    fprintf(stderr, "%s%s", r.out, r.err);
    cr_expect_eq(r.status, 1, "exit %d", r.status);
    cr_expect(strstr(r.out, "failed: step 1 blob_read") &&
                  strstr(r.out, "is in no row the capture fetched"),
              "%s", r.out);
    cr_expect(strstr(r.out, "blob_read                     1            1"), "%s", r.out);
    fbw_run_free(&r);

    fbw_servers_drop_db(&s, src_dsn);
    fbw_servers_drop_db(&s, dst_dsn);
    unlink(raw);
    unlink(cap);
    unlink(errlog);
    unlink(tdout);
    rmdir(tmp);
}

/* Read one blob of a fetched row whole (open, reads to its end, close). */
static void read_blob(sess *x, const fbw_value *id)
{
    fbw_err e;
    fbw_blob *b;
    cr_assert_eq(fbw_blob_new(x->c, &b, &e), FBW_OK);
    cr_assert_eq(fbw_blob_open(b, x->tx, id, NULL, 0), FBW_OK);
    ok_wait(x, "open");
    while (!fbw_blob_eof(b)) {
        cr_assert_eq(fbw_blob_read(b, 4096), FBW_OK);
        ok_wait(x, "read");
    }
    cr_assert_eq(fbw_blob_error(b)->code, FBW_OK, "%s", fbw_blob_error(b)->msg);
    cr_assert_eq(fbw_blob_close(b), FBW_OK);
    ok_wait(x, "close");
    fbw_blob_free(b);
}

/* The replay keeps the latest 16384 blob ids of a connection's rows (replay_step.h): a blob read of
 * the first of 16500 fetched rows fails as forgotten (counted, never skipped), a read of the last
 * row is replayed and matches. */
Test(pcap_replay_ops, blob_read_past_the_kept_blob_ids_fails_as_forgotten, .timeout = 180)
{
    if (geteuid() != 0)
        cr_skip_test("tcpdump on lo needs root");
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server *srv = &s.srv[FBW_SRV_FB3];
    char src[1200], dst[1200], src_dsn[1600], dst_dsn[1600];
    path_of(srv, "many_src", src, sizeof src, src_dsn, sizeof src_dsn);
    path_of(srv, "many_dst", dst, sizeof dst, dst_dsn, sizeof dst_dsn);
    fbw_servers_drop_db(&s, src_dsn);
    fbw_servers_drop_db(&s, dst_dsn);
    create_db(&s, src_dsn);
    create_db(&s, dst_dsn);

    char tmp[600];
    cr_assert_eq(fbw_capture_dir("replay-ops", tmp, sizeof tmp), 0, "%s", strerror(errno));
    char raw[700], cap[700], errlog[700], tdout[700], filter[64], port[16], keep[96];
    snprintf(raw, sizeof raw, "%s/raw.pcap", tmp);
    snprintf(cap, sizeof cap, "%s/many.pcap", tmp);
    snprintf(errlog, sizeof errlog, "%s/tcpdump.err", tmp);
    snprintf(tdout, sizeof tdout, "%s/tcpdump-r.out", tmp);
    snprintf(filter, sizeof filter, "tcp port %d", srv->port);
    snprintf(port, sizeof port, "%d", srv->port);
    pid_t td = fbw_tcpdump_start(raw, filter, errlog);
    cr_assert_neq(td, -1, "cannot start tcpdump: %s", strerror(errno));

    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
    sess x;
    memset(&x, 0, sizeof x);
    fbw_err e;
    cr_assert_eq(fbw_client_connect(src_dsn, &o, &x.cl, &e), FBW_OK, "%s", e.msg);
    x.c = fbw_client_conn(x.cl);
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    cr_assert_eq(getsockname(fbw_client_fd(x.cl), (struct sockaddr *)&sa, &sl), 0);
    int local = ntohs(((struct sockaddr_in *)&sa)->sin_port);
    start(&x);
    fbw_stmt *st;
    cr_assert_eq(fbw_stmt_new(x.c, &st, &e), FBW_OK);
    const char *sel = "SELECT CAST(a.RDB$TYPE || '-' || b.RDB$TYPE AS BLOB SUB_TYPE TEXT) "
                      "FROM RDB$TYPES a CROSS JOIN RDB$TYPES b ORDER BY a.RDB$TYPE, b.RDB$TYPE, "
                      "a.RDB$FIELD_NAME, b.RDB$FIELD_NAME ROWS 16500";
    cr_assert_eq(fbw_stmt_prepare(st, x.tx, sel, strlen(sel)), FBW_OK);
    ok_wait(&x, "prepare");
    cr_assert_eq(fbw_stmt_execute(st, x.tx, NULL, 0), FBW_OK);
    ok_wait(&x, "select");
    while (!fbw_stmt_eof(st) && !fbw_stmt_error(st)->code) {
        cr_assert_eq(fbw_stmt_fetch(st), FBW_OK);
        ok_wait(&x, "fetch");
    }
    cr_assert_eq(fbw_stmt_error(st)->code, FBW_OK, "%s", fbw_stmt_error(st)->msg);
    size_t n = fbw_stmt_row_count(st);
    cr_assert_eq(n, 16500, "rows %zu", n);
    fbw_value first, last;
    cr_assert_eq(fbw_stmt_row(st, 0, &first, &e), FBW_OK, "%s", e.msg);
    cr_assert_eq(fbw_stmt_row(st, n - 1, &last, &e), FBW_OK, "%s", e.msg);
    read_blob(&x, &first);
    read_blob(&x, &last);
    fbw_stmt_free(st);
    commit(&x);
    cr_assert_eq(fbw_conn_detach(x.c), FBW_OK);
    fbw_client_wait(x.cl);
    fbw_tx_free(x.tx);
    fbw_client_close(x.cl);
    fbw_tcpdump_stop(td);
    snprintf(keep, sizeof keep, "tcp port %d and tcp port %d", srv->port, local);
    char *tdr[] = {"tcpdump", "-r", raw, "-w", cap, keep, NULL};
    cr_assert_eq(spawn_wait(tdr, tdout), 0, "tcpdump -r failed");

    const char *list_argv[] = {"replay", cap, "--port", port, "--list", NULL};
    fbw_run l = fbw_run_tool(TOOL, list_argv, NULL, OUT_MAX);
    cr_assert(l.status < 128, "fbwire-pcap died: %d", l.status);
    cr_expect(strstr(l.out, "row 1 col 1 requests=") && strstr(l.out, "row 16500 col 1 requests="),
              "%s", l.out);
    cr_expect(!strstr(l.out, "not replayable"), "%s", l.out);
    fbw_run_free(&l);
    const char *rep_argv[] = {"replay", cap, "--port", port, "--db", dst_dsn, "--user", s.user,
                              "--password", s.password, "--pace", "none", NULL};
    fbw_run r = fbw_run_tool(TOOL, rep_argv, NULL, OUT_MAX);
    fprintf(stderr, "%s%s", r.out, r.err);
    cr_expect_eq(r.status, 1, "exit %d", r.status);
    cr_expect(strstr(r.out, "failed: step ") &&
                  strstr(r.out, "blob id at row 1 column 1 of step 3 is forgotten") &&
                  strstr(r.out, "is forgotten (a connection keeps the latest 16384 blob ids"),
              "%s", r.out);
    cr_expect(strstr(r.out, "blob_read                     2            1"), "%s", r.out);
    /* the SELECT's rows and the last row's blob */
    cr_expect(strstr(r.out, "\nresults: 2 compared, 2 matched, 0 different"), "%s", r.out);
    fbw_run_free(&r);

    fbw_servers_drop_db(&s, src_dsn);
    fbw_servers_drop_db(&s, dst_dsn);
    unlink(raw);
    unlink(cap);
    unlink(errlog);
    unlink(tdout);
    rmdir(tmp);
}
