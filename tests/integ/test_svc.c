/* SPDX-License-Identifier: MIT */
/* test_svc.c - the services API against real FB3 and FB4 (wire/svc.h, wire/svcclient.h): attach to
 * the service manager with the test login (the database attach's handshake: wire crypt included),
 * the server version, a db_stats run read to its end, a refused password with the server's error,
 * a trace session read line by line with a timeout and stopped from a second service attachment,
 * detach; misuse reported as such. */
#include <criterion/criterion.h>

#include "servers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ISC_LOGIN 335544472u

static fbw_client *svc_open(const fbw_servers *s, fbw_server_id id, const char *password)
{
    fbw_client_opts o;
    fbw_servers_client_opts(s, &o);
    if (password)
        o.conn.password = password;
    char dsn[1400];
    fbw_client *cl = NULL;
    fbw_err err;
    int rc = fbw_client_svc_connect(fbw_servers_dsn(s, id, dsn, sizeof dsn), &o, &cl, &err);
    cr_assert_eq(rc, FBW_OK, "%s service attach: %s", fbw_server_name(id), err.msg);
    return cl;
}

static const char *text(fbw_buf *b)
{
    uint8_t nul = 0;
    cr_assert_eq(fbw_buf_append(b, &nul, 1), FBW_OK);
    b->len--;
    return (const char *)b->data;
}

/* Attach, ask the version, detach: the version names the server's release, the handshake was the
 * database attach's (wire crypt on, as the servers' Enabled setting gives), and the close sends
 * op_service_detach and gets its answer. */
static void version(fbw_server_id id)
{
    fbw_servers s;
    fbw_servers_require(&s);
    fbw_client *cl = svc_open(&s, id, NULL);
    const fbw_conn_info *ci = fbw_conn_get_info(fbw_client_conn(cl));
    cr_expect_str_neq(ci->wire_crypt, "none", "the service attachment is encrypted like a database's");
    char v[256], tag[64];
    fbw_err err;
    cr_assert_eq(fbw_client_svc_server_version(cl, v, sizeof v, &err), FBW_OK, "%s", err.msg);
    fbw_servers_version_tag(&s, id, tag, sizeof tag);
    cr_expect(strstr(v, tag) != NULL, "server version \"%s\" lacks \"%s\"", v, tag);
    const fbw_stats *st = fbw_conn_stats(fbw_client_conn(cl));
    cr_expect_eq(st->op[FBW_OP_SERVICE_ATTACH].packets_sent, 1);
    cr_expect_eq(st->op[FBW_OP_SERVICE_INFO].packets_sent, 1);
    cr_assert_eq(fbw_client_close(cl), FBW_OK);
}

Test(svc, version_fb3, .timeout = 60) { version(FBW_SRV_FB3); }
Test(svc, version_fb4, .timeout = 60) { version(FBW_SRV_FB4); }

/* isc_action_svc_db_stats with the header page only, read with to_eof until the service ends: the
 * header page report of the test database. */
static void db_stats(fbw_server_id id)
{
    fbw_servers s;
    fbw_servers_require(&s);
    fbw_client *cl = svc_open(&s, id, NULL);
    fbw_spb spb;
    fbw_spb_init(&spb, FBW_SVC_ACTION_DB_STATS);
    fbw_spb_add_str(&spb, FBW_SPB_DBNAME, s.srv[id].db);
    fbw_spb_add_int(&spb, FBW_SPB_OPTIONS, FBW_SPB_STS_HDR_PAGES);
    fbw_buf out;
    fbw_buf_init(&out);
    fbw_err err;
    int rc = fbw_client_svc_run(cl, &spb, 5, 0, &out, &err);
    cr_assert_eq(rc, FBW_OK, "%s", err.msg);
    const char *t = text(&out);
    cr_expect(strstr(t, "Database header page information") != NULL, "db_stats output:\n%s", t);
    cr_expect(strstr(t, "Page size") != NULL, "db_stats output:\n%s", t);
    cr_expect(strstr(t, "Data pages") == NULL, "only the header was asked for:\n%s", t);
    /* the service has ended: one more read is EOF at once, the attachment takes another start */
    fbw_svc_output o;
    fbw_buf_reset(&out);
    cr_assert_eq(fbw_client_svc_output(cl, FBW_INFO_SVC_LINE, 1, &out, &o, &err), FBW_OK, "%s", err.msg);
    cr_expect_eq(o, FBW_SVC_OUT_EOF);
    fbw_buf_reset(&out);
    cr_assert_eq(fbw_client_svc_run(cl, &spb, 5, 0, &out, &err), FBW_OK, "%s", err.msg);
    cr_expect(strstr(text(&out), "Database header page information") != NULL);
    fbw_spb_free(&spb);
    fbw_buf_free(&out);
    cr_assert_eq(fbw_client_close(cl), FBW_OK);
}

Test(svc, db_stats_fb3, .timeout = 60) { db_stats(FBW_SRV_FB3); }
Test(svc, db_stats_fb4, .timeout = 60) { db_stats(FBW_SRV_FB4); }

/* A database that does not exist: the start or the output carries the server's error, and the
 * attachment takes the next start once the failed service has ended (isc_info_svc_running). */
static void db_stats_missing(fbw_server_id id)
{
    fbw_servers s;
    fbw_servers_require(&s);
    fbw_client *cl = svc_open(&s, id, NULL);
    fbw_spb spb;
    fbw_spb_init(&spb, FBW_SVC_ACTION_DB_STATS);
    fbw_spb_add_str(&spb, FBW_SPB_DBNAME, "/nonexistent/fbwire_svc_missing.fdb");
    fbw_spb_add_int(&spb, FBW_SPB_OPTIONS, FBW_SPB_STS_HDR_PAGES);
    fbw_buf out;
    fbw_buf_init(&out);
    fbw_err err;
    int rc = fbw_client_svc_run(cl, &spb, 5, 0, &out, &err);
    cr_assert_eq(rc, FBW_E_SERVER, "rc %d, output:\n%s", rc, text(&out));
    cr_expect(err.ngds > 0, "%s", err.msg);
    cr_expect(strstr(err.msg, "fbwire_svc_missing.fdb") != NULL, "%s", err.msg);
    /* the failed service may still be ending on the server (a start now can be refused with
     * isc_svc_in_use, and queries repeat its error meanwhile): wait until isc_info_svc_running
     * answers 0 */
    static const uint8_t running[] = {FBW_INFO_SVC_RUNNING, FBW_INFO_END};
    uint32_t still = 1;
    for (int i = 0; i < 1000 && still; i++) {
        rc = fbw_client_svc_query(cl, NULL, 0, running, sizeof running, 64, &out, &err);
        if (rc == FBW_E_SERVER)
            continue;
        cr_assert_eq(rc, FBW_OK, "%s", err.msg);
        fbw_svc_reader r;
        fbw_svc_item it;
        fbw_svc_reader_init(&r, out.data, out.len);
        cr_assert_eq(fbw_svc_next(&r, &it, &err), FBW_OK, "%s", err.msg);
        cr_assert_eq(it.tag, FBW_INFO_SVC_RUNNING);
        still = it.value;
    }
    cr_assert_eq(still, 0, "the failed service never ended");
    fbw_spb_free(&spb);
    fbw_spb_init(&spb, FBW_SVC_ACTION_DB_STATS);
    fbw_spb_add_str(&spb, FBW_SPB_DBNAME, s.srv[id].db);
    fbw_spb_add_int(&spb, FBW_SPB_OPTIONS, FBW_SPB_STS_HDR_PAGES);
    fbw_buf_reset(&out);
    rc = fbw_client_svc_run(cl, &spb, 5, 0, &out, &err);
    cr_expect_eq(rc, FBW_OK, "the next start: %s", err.msg);
    fbw_spb_free(&spb);
    fbw_buf_free(&out);
    cr_assert_eq(fbw_client_close(cl), FBW_OK);
}

Test(svc, db_stats_missing_fb3, .timeout = 60) { db_stats_missing(FBW_SRV_FB3); }
Test(svc, db_stats_missing_fb4, .timeout = 60) { db_stats_missing(FBW_SRV_FB4); }

/* A wrong password is the server's isc_login, no connection, and the password in no message. */
static void bad_password(fbw_server_id id)
{
    fbw_servers s;
    fbw_servers_require(&s);
    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    static const char wrong[] = "fbwire-not-the-password";
    o.conn.password = wrong;
    char dsn[1400];
    fbw_client *cl = NULL;
    fbw_err err;
    int rc = fbw_client_svc_connect(fbw_servers_dsn(&s, id, dsn, sizeof dsn), &o, &cl, &err);
    cr_assert_eq(rc, FBW_E_SERVER, "rc %d: %s", rc, err.msg);
    cr_assert_null(cl);
    cr_expect(err.ngds > 0 && err.gds[0] == ISC_LOGIN, "first gds %u: %s",
              err.ngds ? (unsigned)err.gds[0] : 0u, err.msg);
    cr_expect(strstr(err.msg, wrong) == NULL, "the password leaked into: %s", err.msg);
}

Test(svc, bad_password_fb3, .timeout = 60) { bad_password(FBW_SRV_FB3); }
Test(svc, bad_password_fb4, .timeout = 60) { bad_password(FBW_SRV_FB4); }

/* The trace session's id from its first line, "Trace session ID 5 started". */
static unsigned long session_id(const char *line)
{
    const char *p = strstr(line, "Trace session ID ");
    cr_assert_not_null(p, "first trace line: %s", line);
    return strtoul(p + strlen("Trace session ID "), NULL, 10);
}

/* A trace session: started on one attachment, its output read line by line with a 1-second
 * timeout (quiet periods answer TIMEOUT), a database attach traced while it runs, then stopped by
 * isc_action_svc_trace_stop from a second attachment; the first reads on to EOF. */
static void trace(fbw_server_id id)
{
    fbw_servers s;
    fbw_servers_require(&s);
    fbw_client *a = svc_open(&s, id, NULL);
    fbw_spb spb;
    fbw_spb_init(&spb, FBW_SVC_ACTION_TRACE_START);
    fbw_spb_add_str(&spb, FBW_SPB_TRC_NAME, "fbwire_svc_test");
    fbw_spb_add_str(&spb, FBW_SPB_TRC_CFG,
                    "database\n{\n\tenabled = true\n\tlog_connections = true\n}\n");
    fbw_err err;
    cr_assert_eq(fbw_client_svc_start(a, &spb, &err), FBW_OK, "%s", err.msg);
    fbw_spb_free(&spb);

    fbw_buf line;
    fbw_buf_init(&line);
    fbw_svc_output o;
    int rc, timeouts = 0;
    do /* the first line names the session; quiet seconds before it are TIMEOUT */
        rc = fbw_client_svc_output(a, FBW_INFO_SVC_LINE, 1, &line, &o, &err);
    while (rc == FBW_OK && o == FBW_SVC_OUT_TIMEOUT && ++timeouts < 10);
    cr_assert_eq(rc, FBW_OK, "%s", err.msg);
    cr_assert_eq(o, FBW_SVC_OUT_DATA);
    cr_assert_eq(memchr(line.data, '\n', line.len), NULL, "a line comes without its newline");
    unsigned long sid = session_id(text(&line));

    /* a quiet trace: a read within the timeout answers TIMEOUT, the session goes on */
    rc = fbw_client_svc_output(a, FBW_INFO_SVC_LINE, 1, &line, &o, &err);
    cr_assert_eq(rc, FBW_OK, "%s", err.msg);

    /* an attach to the database while it runs shows in the output */
    fbw_client_opts co;
    fbw_servers_client_opts(&s, &co);
    char dsn[1400];
    fbw_client *db;
    cr_assert_eq(fbw_client_connect(fbw_servers_dsn(&s, id, dsn, sizeof dsn), &co, &db, &err), FBW_OK,
                 "%s", err.msg);
    cr_assert_eq(fbw_client_close(db), FBW_OK);
    int attach_seen = 0;
    for (int i = 0; i < 200 && !attach_seen; i++) {
        rc = fbw_client_svc_output(a, FBW_INFO_SVC_LINE, 1, &line, &o, &err);
        cr_assert_eq(rc, FBW_OK, "%s", err.msg);
        cr_assert_neq(o, FBW_SVC_OUT_EOF, "the trace ended before it was stopped");
        attach_seen = o == FBW_SVC_OUT_DATA && strstr(text(&line), "ATTACH_DATABASE") != NULL;
    }
    cr_expect(attach_seen, "the traced attach never showed");

    /* stop it from a second attachment */
    fbw_client *b = svc_open(&s, id, NULL);
    fbw_spb_init(&spb, FBW_SVC_ACTION_TRACE_STOP);
    fbw_spb_add_int(&spb, FBW_SPB_TRC_ID, (uint32_t)sid);
    fbw_buf out;
    fbw_buf_init(&out);
    cr_assert_eq(fbw_client_svc_run(b, &spb, 5, 0, &out, &err), FBW_OK, "%s", err.msg);
    cr_expect(strstr(text(&out), "stopped") != NULL, "trace_stop said: %s", text(&out));
    fbw_spb_free(&spb);
    fbw_buf_free(&out);
    cr_assert_eq(fbw_client_close(b), FBW_OK);

    /* the first attachment reads what is left, then EOF */
    int n = 0;
    do
        rc = fbw_client_svc_output(a, FBW_INFO_SVC_LINE, 1, &line, &o, &err);
    while (rc == FBW_OK && o != FBW_SVC_OUT_EOF && ++n < 2000);
    cr_assert_eq(rc, FBW_OK, "%s", err.msg);
    cr_expect_eq(o, FBW_SVC_OUT_EOF, "no EOF after %d reads", n);
    fbw_buf_free(&line);
    cr_assert_eq(fbw_client_close(a), FBW_OK);
}

Test(svc, trace_fb3, .timeout = 120) { trace(FBW_SRV_FB3); }
Test(svc, trace_fb4, .timeout = 120) { trace(FBW_SRV_FB4); }

/* Misuse is reported, nothing is sent: svc calls on a database attachment, an output timeout the
 * client's own would cut, a service query with no receive items. */
Test(svc, misuse_fb3, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    fbw_client_opts co;
    fbw_servers_client_opts(&s, &co);
    char dsn[1400];
    fbw_client *db;
    fbw_err err;
    cr_assert_eq(fbw_client_connect(fbw_servers_dsn(&s, FBW_SRV_FB3, dsn, sizeof dsn), &co, &db, &err),
                 FBW_OK, "%s", err.msg);
    fbw_spb spb;
    fbw_spb_init(&spb, FBW_SVC_ACTION_DB_STATS);
    cr_expect_eq(fbw_client_svc_start(db, &spb, &err), FBW_E_USAGE);
    cr_expect(strstr(err.msg, "not a service attachment") != NULL, "%s", err.msg);
    cr_expect_eq(fbw_conn_outstanding(fbw_client_conn(db)), 0);
    cr_assert_eq(fbw_client_close(db), FBW_OK);

    fbw_client *cl = svc_open(&s, FBW_SRV_FB3, NULL);
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_svc_output o;
    /* the test client's timeout is 10 s: a 10-second server wait would be cut by it */
    cr_expect_eq(fbw_client_svc_output(cl, FBW_INFO_SVC_LINE, 10, &b, &o, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_client_svc_output(cl, FBW_INFO_SVC_VERSION, 1, &b, &o, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_client_svc_query(cl, NULL, 0, NULL, 0, 100, &b, &err), FBW_E_USAGE);
    /* a start SPB with a value too long for its 2-byte length is refused before sending */
    char *big = malloc(70000);
    cr_assert_not_null(big);
    memset(big, 'x', 69999);
    big[69999] = '\0';
    fbw_spb_add_str(&spb, FBW_SPB_DBNAME, big);
    free(big);
    cr_expect_eq(fbw_client_svc_start(cl, &spb, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_conn_outstanding(fbw_client_conn(cl)), 0);
    char v[256];
    cr_expect_eq(fbw_client_svc_server_version(cl, v, sizeof v, &err), FBW_OK, "%s", err.msg);
    fbw_spb_free(&spb);
    fbw_buf_free(&b);
    cr_assert_eq(fbw_client_close(cl), FBW_OK);
}

/* The sans-I/O requests (svc.h) queue like any other: a start and two queries written together
 * cost one round trip, and each answer lands in its own record. */
static void queued_together(fbw_server_id id)
{
    fbw_servers s;
    fbw_servers_require(&s);
    fbw_client *cl = svc_open(&s, id, NULL);
    fbw_conn *c = fbw_client_conn(cl);
    fbw_spb spb;
    fbw_spb_init(&spb, FBW_SVC_ACTION_DB_STATS);
    fbw_spb_add_str(&spb, FBW_SPB_DBNAME, s.srv[id].db);
    fbw_spb_add_int(&spb, FBW_SPB_OPTIONS, FBW_SPB_STS_HDR_PAGES);
    static const uint8_t version[] = {FBW_INFO_SVC_SERVER_VERSION, FBW_INFO_SVC_VERSION, FBW_INFO_END};
    static const uint8_t line[] = {FBW_INFO_SVC_LINE};
    uint8_t wait[FBW_SVC_TIMEOUT_ITEMS_LEN];
    size_t nwait = fbw_svc_timeout_items(wait, 2);
    fbw_info_result q1, q2;
    fbw_buf_init(&q1.data);
    fbw_buf_init(&q2.data);
    fbw_svc_result st;
    uint64_t rt0 = fbw_conn_stats(c)->round_trips;
    cr_assert_eq(fbw_svc_query(c, NULL, 0, version, sizeof version, 512, &q1), FBW_OK, "%s", q1.err.msg);
    cr_assert_eq(fbw_svc_start(c, &spb, &st), FBW_OK, "%s", st.err.msg);
    cr_assert_eq(fbw_svc_query(c, wait, nwait, line, sizeof line, 4096, &q2), FBW_OK, "%s", q2.err.msg);
    cr_assert_eq(fbw_conn_outstanding(c), 3);
    cr_assert_eq(fbw_client_wait(cl), FBW_OK, "%s", fbw_client_error(cl)->msg);
    cr_expect_eq(fbw_conn_stats(c)->round_trips - rt0, 1, "three requests, one round trip");
    cr_assert(q1.done && st.done && q2.done);
    cr_assert_eq(st.err.code, FBW_OK, "%s", st.err.msg);
    fbw_svc_reader r;
    fbw_svc_item it;
    fbw_err err;
    fbw_svc_reader_init(&r, q1.data.data, q1.data.len);
    cr_assert_eq(fbw_svc_next(&r, &it, &err), FBW_OK, "%s", err.msg);
    cr_expect_eq(it.tag, FBW_INFO_SVC_SERVER_VERSION);
    cr_assert_eq(fbw_svc_next(&r, &it, &err), FBW_OK, "%s", err.msg);
    cr_expect_eq(it.tag, FBW_INFO_SVC_VERSION);
    cr_expect_eq(it.kind, FBW_SVC_ITEM_INT);
    cr_expect_eq(it.value, 2, "the service manager's version: %u", (unsigned)it.value);
    cr_expect_eq(fbw_svc_next(&r, &it, &err), FBW_AGAIN);
    fbw_svc_output o;
    const uint8_t *t;
    size_t n;
    cr_assert_eq(fbw_svc_output_parse(q2.data.data, q2.data.len, FBW_INFO_SVC_LINE, &o, &t, &n, &err),
                 FBW_OK, "%s", err.msg);
    cr_expect_eq(o, FBW_SVC_OUT_DATA, "the report's first line");
    fbw_spb_free(&spb);
    fbw_buf_free(&q1.data);
    fbw_buf_free(&q2.data);
    cr_assert_eq(fbw_client_close(cl), FBW_OK); /* the rest of the report is dropped with the detach */
}

Test(svc, queued_together_fb3, .timeout = 60) { queued_together(FBW_SRV_FB3); }
Test(svc, queued_together_fb4, .timeout = 60) { queued_together(FBW_SRV_FB4); }

/* The service attach goes every way a database attach goes: Legacy_Auth (protocol 10: its hash
 * in the SPB as isc_spb_password_enc; 15: through the connect phase), zlib compression, a server
 * that requires wire crypt. */
Test(svc, attach_variants, .timeout = 120)
{
    fbw_servers s;
    fbw_servers_require(&s);
    const struct {
        fbw_server_id id;
        int legacy, max, compress;
        const char *plugin;
    } cases[] = {
        {FBW_SRV_FB3L, 1, 10, 0, "Legacy_Auth"}, {FBW_SRV_FB3L, 1, 15, 0, "Legacy_Auth"},
        {FBW_SRV_FB3, 0, 0, 1, "Srp256"},        {FBW_SRV_FB4, 0, 0, 1, "Srp256"},
        {FBW_SRV_FB3R, 0, 0, 0, "Srp256"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fbw_client_opts o;
        fbw_servers_client_opts(&s, &o);
        if (cases[i].legacy) {
            o.conn.auth_list = "Legacy_Auth";
            o.conn.user = s.legacy_user;
            o.conn.password = s.legacy_password;
        }
        if (cases[i].max)
            o.conn.protocol_max = cases[i].max;
        o.conn.compress = cases[i].compress;
        char dsn[1400];
        fbw_client *cl = NULL;
        fbw_err err;
        int rc = fbw_client_svc_connect(fbw_servers_dsn(&s, cases[i].id, dsn, sizeof dsn), &o, &cl, &err);
        cr_assert_eq(rc, FBW_OK, "case %zu (%s): %s", i, fbw_server_name(cases[i].id), err.msg);
        const fbw_conn_info *ci = fbw_conn_get_info(fbw_client_conn(cl));
        if (cases[i].max)
            cr_expect_eq(ci->protocol, cases[i].max, "case %zu", i);
        cr_expect_str_eq(ci->auth_plugin, cases[i].plugin, "case %zu", i);
        cr_expect_eq(ci->compressed, cases[i].compress, "case %zu", i);
        char v[256];
        cr_expect_eq(fbw_client_svc_server_version(cl, v, sizeof v, &err), FBW_OK, "case %zu: %s", i,
                     err.msg);
        cr_expect_eq(fbw_client_close(cl), FBW_OK, "case %zu", i);
    }
}
