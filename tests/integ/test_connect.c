/* SPDX-License-Identifier: MIT */
/* test_connect.c - connect, authenticate and attach against the real servers of
 * scripts/fb-servers.sh (fb3, fb4, fb3l = fb3 with Legacy_Auth, fb3r = fb3 with WireCrypt=Required):
 * every auth plugin, protocol caps, lazy send, login rules, the error paths, compression, the exact
 * round-trip cost of a session, and many logins in a row. */
#include <criterion/criterion.h>

#include "ops.h" /* FBW_PROTOCOL_MAX: the highest protocol_max fbwire accepts */
#include "servers.h"
#include "sqlt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Firebird error codes the tests expect (iberror.h). */
#define GDS_LOGIN 335544472u           /* isc_login: user name and password are not defined */
#define GDS_IO_ERROR 335544344u        /* isc_io_error: I/O error during "open" */
#define GDS_WIRECRYPT_INCOMPAT 335545064u /* isc_wirecrypt_incompatible */

#define WRONG_PASSWORD "wrong-Pw-7731x"

static int has(const char *hay, const char *needle)
{
    return strstr(hay, needle) != NULL;
}

/* Connect with o to server id; fail the test with the error text if that does not work. */
static fbw_client *connect_ok(const fbw_servers *s, fbw_server_id id, const fbw_client_opts *o,
                              const char *what)
{
    char dsn[1400];
    fbw_client *cl = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    int rc = fbw_client_connect(fbw_servers_dsn(s, id, dsn, sizeof dsn), o, &cl, &err);
    cr_assert_eq(rc, FBW_OK, "%s on %s: %s: %s", what, fbw_server_name(id), fbw_rc_name(rc), err.msg);
    cr_assert_not_null(cl);
    cr_assert_eq(fbw_conn_get_state(fbw_client_conn(cl)), FBW_CS_READY);
    return cl;
}

/* Connect expecting failure; returns the code, err filled. A password must never be in the text. */
static int connect_fail(const char *dsn, const fbw_client_opts *o, fbw_err *err, const char *what)
{
    fbw_client *cl = NULL;
    fbw_err_clear(err);
    int rc = fbw_client_connect(dsn, o, &cl, err);
    cr_assert_neq(rc, FBW_OK, "%s: connected although it should not", what);
    cr_assert_null(cl);
    cr_assert_eq(err->code, rc, "%s: err.code %d vs rc %d", what, err->code, rc);
    if (o->conn.password && *o->conn.password)
        cr_assert(!has(err->msg, o->conn.password), "%s: the password is in the message", what);
    return rc;
}

static const fbw_conn_info *info_of(fbw_client *cl)
{
    return fbw_conn_get_info(fbw_client_conn(cl));
}

/* ---- plugins ---- */

static int min_int(int a, int b) { return a < b ? a : b; }

struct plugin_case {
    fbw_server_id id;
    const char *auth;
    int legacy_user;
    int protocol;
    const char *crypt;
};

Test(connect, auth_plugins, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    /* the fb4 slot may hold a newer server (on-server.sh): its highest protocol, all of which we offer */
    const int p4 = fbw_servers_protocol_max(&s, FBW_SRV_FB4);
    char tag[2][32];
    fbw_servers_version_tag(&s, FBW_SRV_FB3, tag[0], sizeof tag[0]);
    fbw_servers_version_tag(&s, FBW_SRV_FB4, tag[1], sizeof tag[1]);
    const struct plugin_case cases[] = {
        {FBW_SRV_FB3, "Srp256", 0, 15, "Arc4"},      {FBW_SRV_FB3, "Srp", 0, 15, "Arc4"},
        {FBW_SRV_FB4, "Srp256", 0, p4, "ChaCha64"},  {FBW_SRV_FB4, "Srp", 0, p4, "ChaCha64"},
        {FBW_SRV_FB3R, "Srp256", 0, 15, "Arc4"},     {FBW_SRV_FB3L, "Srp256", 0, 15, "Arc4"},
        {FBW_SRV_FB3L, "Legacy_Auth", 1, 15, "none"}, /* no session key: nothing to encrypt with */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct plugin_case *k = &cases[i];
        fbw_client_opts o;
        fbw_servers_client_opts(&s, &o);
        o.conn.auth_list = k->auth;
        if (k->legacy_user) {
            o.conn.user = s.legacy_user;
            o.conn.password = s.legacy_password;
        }
        fbw_client *cl = connect_ok(&s, k->id, &o, k->auth);
        const fbw_conn_info *in = info_of(cl);
        cr_expect_eq(in->protocol, k->protocol, "%s %s: protocol %d", fbw_server_name(k->id), k->auth,
                     in->protocol);
        cr_expect_str_eq(in->auth_plugin, k->auth, "%s: plugin", fbw_server_name(k->id));
        cr_expect_str_eq(in->wire_crypt, k->crypt, "%s %s: wire crypt", fbw_server_name(k->id), k->auth);
        cr_expect_eq(in->compressed, 0);
        cr_expect_eq(in->lazy, 1, "lazy send is offered by default and both servers take it");
        cr_expect_neq(in->db_handle, 0xFFFF);
        /* the connection is usable: ask for the version */
        cr_assert_eq(fbw_conn_query_version(fbw_client_conn(cl)), FBW_OK);
        cr_assert_eq(fbw_client_wait(cl), FBW_OK, "%s", fbw_client_error(cl)->msg);
        cr_expect(has(in->server_version, tag[k->id == FBW_SRV_FB4]),
                  "%s: server_version \"%s\"", fbw_server_name(k->id), in->server_version);
        cr_expect_eq(fbw_client_close(cl), FBW_OK);
    }
}

/* ---- protocol negotiation ---- */

struct proto_case {
    fbw_server_id id;
    int legacy;
    int max;      /* offered protocol_max, 0 = default */
    int expected;
};

Test(connect, protocol_caps, .timeout = 120)
{
    fbw_servers s;
    fbw_servers_require(&s);
    const int p4 = fbw_servers_protocol_max(&s, FBW_SRV_FB4); /* 17 on FB4, more on fb5, fb6 */
    const struct proto_case cases[] = {
        /* below 13 only Legacy_Auth exists: the server must settle on exactly the cap */
        {FBW_SRV_FB3L, 1, 10, 10}, {FBW_SRV_FB3L, 1, 11, 11}, {FBW_SRV_FB3L, 1, 12, 12},
        {FBW_SRV_FB3L, 1, 13, 13}, {FBW_SRV_FB3L, 1, 15, 15},
        {FBW_SRV_FB3, 0, 13, 13},  {FBW_SRV_FB3, 0, 14, 14},  {FBW_SRV_FB3, 0, 15, 15},
        {FBW_SRV_FB4, 0, 13, 13},  {FBW_SRV_FB4, 0, 15, 15},
        {FBW_SRV_FB4, 0, 16, 16},  {FBW_SRV_FB4, 0, 17, 17},
        /* uncapped and over-the-top offers settle on each server's highest */
        {FBW_SRV_FB3, 0, 0, 15},   {FBW_SRV_FB4, 0, 0, p4},
        {FBW_SRV_FB3, 0, 16, 15},  {FBW_SRV_FB3, 0, 17, 15},
        {FBW_SRV_FB3, 0, 18, 15},  {FBW_SRV_FB3, 0, 19, 15},
        {FBW_SRV_FB4, 0, 18, min_int(p4, 18)},  {FBW_SRV_FB4, 0, 19, min_int(p4, 19)},
        /* 10..20 is eleven entries: servers before Firebird 6 read ten and skip the rest */
        {FBW_SRV_FB3, 0, 20, 15},  {FBW_SRV_FB3L, 1, 20, 15}, {FBW_SRV_FB4, 0, 20, p4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct proto_case *k = &cases[i];
        fbw_client_opts o;
        fbw_servers_client_opts(&s, &o);
        if (k->legacy) {
            o.conn.auth_list = "Legacy_Auth";
            o.conn.user = s.legacy_user;
            o.conn.password = s.legacy_password;
        }
        if (k->max)
            o.conn.protocol_max = k->max;
        fbw_client *cl = connect_ok(&s, k->id, &o, "protocol cap");
        const fbw_conn_info *in = info_of(cl);
        cr_expect_eq(in->protocol, k->expected, "%s, max %d: negotiated %d, expected %d",
                     fbw_server_name(k->id), k->max, in->protocol, k->expected);
        cr_expect_str_eq(in->auth_plugin, k->legacy ? "Legacy_Auth" : "Srp256");
        if (!k->legacy)
            cr_expect_str_neq(in->wire_crypt, "none", "%s max %d: Srp gives a key, so crypt is on",
                              fbw_server_name(k->id), k->max);
        cr_expect_eq(fbw_client_close(cl), FBW_OK);
    }
}

/* Offering only protocols above the server's highest: op_reject, reported like Firebird does. */
Test(connect, protocol_above_server_is_rejected, .timeout = 30)
{
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server_id ids[] = {FBW_SRV_FB3, FBW_SRV_FB4};
    for (size_t i = 0; i < 2; i++) {
        /* one above the server's highest, up to the highest we can offer */
        const int min = fbw_servers_protocol_max(&s, ids[i]) + 1;
        if (min > FBW_PROTOCOL_MAX) {
            cr_log_info("%s speaks protocol %d, the highest fbwire knows: nothing above to offer",
                        fbw_server_name(ids[i]), min - 1);
            continue;
        }
        fbw_client_opts o;
        fbw_servers_client_opts(&s, &o);
        o.conn.protocol_min = min;
        o.conn.protocol_max = min > 19 ? min : 19;
        char dsn[1400];
        fbw_err err;
        int rc = connect_fail(fbw_servers_dsn(&s, ids[i], dsn, sizeof dsn), &o, &err, "min > server max");
        cr_expect_eq(rc, FBW_E_SERVER, "%s: %s %s", fbw_server_name(ids[i]), fbw_rc_name(rc), err.msg);
        cr_expect_eq(err.ngds > 0 ? err.gds[0] : 0, 335544421u, "isc_connect_reject expected: %s", err.msg);
        cr_expect_str_eq(err.sqlstate, "08004");
    }
}

/* Protocol 20's prepare flags. On a protocol 20 server (Firebird 6) FBW_PREPARE_REQUIRE_SEMICOLON
 * reaches the parser: text without its closing ';' is an unexpected end of command
 * (isc_command_end_err2), with it the statement prepares; without the flag a trailing ';' is
 * dropped as before. Below protocol 20 the flag cannot travel, so prepare refuses it before sending
 * anything and the statement stays usable without it. */
#define GDS_COMMAND_END_ERR2 335544851u
static void prepare_flags(fbw_server_id id)
{
    fbw_sqlt q;
    fbw_sqlt_open(&q, id, NULL);
    const int protocol = fbw_conn_get_info(q.c)->protocol;
    fbw_err err;
    fbw_stmt *s;
    cr_assert_eq(fbw_stmt_new(q.c, &s, &err), FBW_OK);
    fbw_stmt_set_prepare_flags(s, FBW_PREPARE_REQUIRE_SEMICOLON);
    cr_expect_eq(fbw_stmt_prepare_flags(s), FBW_PREPARE_REQUIRE_SEMICOLON);
    const char *bare = "select 1 from rdb$database", *closed = "select 1 from rdb$database ;";
    int rc = fbw_client_prepare(q.cl, s, q.tx, bare, strlen(bare));
    if (protocol < 20) {
        cr_expect_eq(rc, FBW_E_UNSUPPORTED, "%s, protocol %d: %s", fbw_server_name(id), protocol,
                     fbw_rc_name(rc));
        cr_expect(strstr(fbw_stmt_error(s)->msg, "protocol 20"), "%s", fbw_stmt_error(s)->msg);
        cr_expect_not(fbw_stmt_prepared(s));
    } else {
        cr_assert_eq(rc, FBW_OK, "%s", fbw_client_error(q.cl)->msg);
        cr_expect_not(fbw_stmt_prepared(s), "%s prepared without its ';'", bare);
        cr_expect(fbw_err_has_gds(fbw_stmt_error(s), GDS_COMMAND_END_ERR2), "%s",
                  fbw_stmt_error(s)->msg);
        cr_assert_eq(fbw_client_prepare(q.cl, s, q.tx, closed, strlen(closed)), FBW_OK);
        cr_expect(fbw_stmt_prepared(s), "%s: %s", closed, fbw_stmt_error(s)->msg);
    }
    /* no flags: the server's own rule, on every version (a trailing ';' is dropped) */
    fbw_stmt_set_prepare_flags(s, 0);
    cr_assert_eq(fbw_client_prepare(q.cl, s, q.tx, closed, strlen(closed)), FBW_OK);
    cr_expect(fbw_stmt_prepared(s), "%s: %s", closed, fbw_stmt_error(s)->msg);
    cr_assert_eq(fbw_client_prepare(q.cl, s, q.tx, bare, strlen(bare)), FBW_OK);
    cr_expect(fbw_stmt_prepared(s), "%s: %s", bare, fbw_stmt_error(s)->msg);
    fbw_err run;
    cr_expect_eq(fbw_sqlt_run(&q, s, q.tx, NULL, &run), FBW_OK, "%s", run.msg);
    cr_expect_eq(fbw_stmt_row_count(s), 1);
    fbw_stmt_free(s);
    fbw_sqlt_close(&q);
}

Test(connect, prepare_flags_fb3, .timeout = 60) { prepare_flags(FBW_SRV_FB3); }
Test(connect, prepare_flags_fb4, .timeout = 60) { prepare_flags(FBW_SRV_FB4); }

Test(connect, lazy_off_still_connects, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server_id ids[] = {FBW_SRV_FB3, FBW_SRV_FB4};
    for (size_t i = 0; i < 2; i++) {
        fbw_client_opts o;
        fbw_servers_client_opts(&s, &o);
        o.conn.lazy = 0;
        fbw_client *cl = connect_ok(&s, ids[i], &o, "lazy off");
        cr_expect_eq(info_of(cl)->lazy, 0, "%s: lazy send accepted although not offered",
                     fbw_server_name(ids[i]));
        cr_assert_eq(fbw_conn_query_version(fbw_client_conn(cl)), FBW_OK);
        cr_assert_eq(fbw_client_wait(cl), FBW_OK, "%s", fbw_client_error(cl)->msg);
        cr_expect_neq(info_of(cl)->server_version[0], 0);
        cr_expect_eq(fbw_client_close(cl), FBW_OK);
    }
}

/* ---- login rules ---- */

Test(connect, quoted_lowercase_user_logs_in_unquoted, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server_id ids[] = {FBW_SRV_FB3, FBW_SRV_FB4};
    char dsn[1400];
    for (size_t i = 0; i < 2; i++) {
        fbw_client_opts o;
        fbw_servers_client_opts(&s, &o);
        o.conn.user = s.quoted_user; /* "john.doe": not an identifier, so the server keeps its case */
        o.conn.password = s.quoted_password;
        fbw_client *cl = connect_ok(&s, ids[i], &o, s.quoted_user);
        cr_expect_eq(fbw_client_close(cl), FBW_OK);
        /* The control: the same name upper-cased is another user, which does not exist. */
        o.conn.user = "JOHN.DOE";
        fbw_err err;
        int rc = connect_fail(fbw_servers_dsn(&s, ids[i], dsn, sizeof dsn), &o, &err, "JOHN.DOE");
        cr_expect_eq(rc, FBW_E_SERVER, "%s", err.msg);
        cr_expect_eq(err.ngds > 0 ? err.gds[0] : 0, GDS_LOGIN);
    }
}

static void expect_login_error(const fbw_servers *s, fbw_server_id id, const char *user, const char *pw,
                               const char *auth)
{
    fbw_client_opts o;
    fbw_servers_client_opts(s, &o);
    o.conn.user = user;
    o.conn.password = pw;
    o.conn.auth_list = auth;
    char dsn[1400], what[128];
    snprintf(what, sizeof what, "%s user %s", fbw_server_name(id), user);
    fbw_err err;
    int rc = connect_fail(fbw_servers_dsn(s, id, dsn, sizeof dsn), &o, &err, what);
    cr_expect_eq(rc, FBW_E_SERVER, "%s: %s %s", what, fbw_rc_name(rc), err.msg);
    cr_expect_geq(err.ngds, 1, "%s", what);
    cr_expect_eq(err.gds[0], GDS_LOGIN, "%s: gds %u", what, err.gds[0]);
    cr_expect_str_eq(err.sqlstate, "28000", "%s", what);
    cr_expect(has(err.msg, "user name and password are not defined"), "%s: %s", what, err.msg);
    cr_expect(!has(err.msg, s->password), "%s: the SYSDBA password is in the message", what);
}

Test(connect, wrong_password, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    expect_login_error(&s, FBW_SRV_FB3, s.user, WRONG_PASSWORD, "Srp256");
    expect_login_error(&s, FBW_SRV_FB3, s.user, WRONG_PASSWORD, "Srp");
    expect_login_error(&s, FBW_SRV_FB4, s.user, WRONG_PASSWORD, "Srp256");
    expect_login_error(&s, FBW_SRV_FB4, s.user, WRONG_PASSWORD, "Srp");
    expect_login_error(&s, FBW_SRV_FB3L, s.legacy_user, WRONG_PASSWORD, "Legacy_Auth");
    expect_login_error(&s, FBW_SRV_FB3R, s.user, WRONG_PASSWORD, NULL);
}

Test(connect, unknown_user, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    expect_login_error(&s, FBW_SRV_FB3, "NO_SUCH_USER_FBW", WRONG_PASSWORD, NULL);
    expect_login_error(&s, FBW_SRV_FB4, "NO_SUCH_USER_FBW", WRONG_PASSWORD, NULL);
    expect_login_error(&s, FBW_SRV_FB3L, "NO_SUCH_USER_FBW", WRONG_PASSWORD, "Legacy_Auth");
}

Test(connect, missing_database, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server_id ids[] = {FBW_SRV_FB3, FBW_SRV_FB4};
    const char *path = "/nonexistent-fbwire-dir/missing.fdb";
    for (size_t i = 0; i < 2; i++) {
        fbw_client_opts o;
        fbw_servers_client_opts(&s, &o);
        char dsn[1400];
        snprintf(dsn, sizeof dsn, "%s/%d:%s", s.srv[ids[i]].host, s.srv[ids[i]].port, path);
        fbw_err err;
        int rc = connect_fail(dsn, &o, &err, "missing database");
        cr_expect_eq(rc, FBW_E_SERVER, "%s: %s", fbw_rc_name(rc), err.msg);
        cr_expect_eq(err.ngds > 0 ? err.gds[0] : 0, GDS_IO_ERROR, "%s: gds %u: %s",
                     fbw_server_name(ids[i]), err.gds[0], err.msg);
        cr_expect(has(err.msg, path), "%s: path not in \"%s\"", fbw_server_name(ids[i]), err.msg);
        cr_expect(!has(err.msg, s.password));
    }
}

/* ---- nobody there ---- */

Test(connect, nothing_listening, .timeout = 30)
{
    fbw_servers s;
    fbw_servers_require(&s);
    char dsn[256];
    snprintf(dsn, sizeof dsn, "127.0.0.1/%d:/tmp/x.fdb", fbw_servers_closed_port());
    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    fbw_err err;
    int rc = connect_fail(dsn, &o, &err, "closed port");
    cr_expect_eq(rc, FBW_E_IO, "%s: %s", fbw_rc_name(rc), err.msg);
    cr_expect(has(err.msg, "refused"), "message \"%s\"", err.msg);
    cr_expect_eq(err.sys_errno, ECONNREFUSED);
}

Test(connect, silent_server_times_out, .timeout = 30)
{
    fbw_servers s;
    fbw_servers_require(&s);
    int port;
    int lfd = fbw_servers_silent_listener(&port);
    char dsn[256];
    snprintf(dsn, sizeof dsn, "127.0.0.1/%d:/tmp/x.fdb", port);
    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    o.connect_timeout_ms = 1500;
    double t0 = fbw_servers_now();
    fbw_err err;
    int rc = connect_fail(dsn, &o, &err, "silent server");
    double elapsed = fbw_servers_now() - t0;
    cr_expect_eq(rc, FBW_E_TIMEOUT, "%s: %s", fbw_rc_name(rc), err.msg);
    cr_expect_geq(elapsed, 1.4, "gave up after %.3f s, before the timeout", elapsed);
    cr_expect_lt(elapsed, 1.5 + 2.0, "took %.3f s for a 1.5 s connect timeout", elapsed);
    /* The TCP connection was made (it is in the backlog): the timeout was the wait for op_accept. */
    fcntl(lfd, F_SETFL, O_NONBLOCK);
    int cfd = accept(lfd, NULL, NULL);
    cr_expect(cfd >= 0, "the client never connected: %s", strerror(errno));
    if (cfd >= 0)
        close(cfd);
    close(lfd);
}

/* ---- wire encryption ---- */

Test(connect, crypt_disabled_against_required_server, .timeout = 30)
{
    fbw_servers s;
    fbw_servers_require(&s);
    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
    char dsn[1400];
    fbw_err err;
    int rc = connect_fail(fbw_servers_dsn(&s, FBW_SRV_FB3R, dsn, sizeof dsn), &o, &err, "crypt off");
    cr_expect_eq(rc, FBW_E_SERVER, "%s: %s", fbw_rc_name(rc), err.msg);
    cr_expect_eq(err.ngds > 0 ? err.gds[0] : 0, GDS_WIRECRYPT_INCOMPAT, "gds %u: %s", err.gds[0],
                 err.msg);
    /* the control: the same server with crypt on */
    fbw_servers_client_opts(&s, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_REQUIRED;
    fbw_client *cl = connect_ok(&s, FBW_SRV_FB3R, &o, "crypt required");
    cr_expect_str_eq(info_of(cl)->wire_crypt, "Arc4");
    fbw_client_close(cl);
}

Test(connect, legacy_not_listed_below_13, .timeout = 30)
{
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server_id ids[] = {FBW_SRV_FB3, FBW_SRV_FB3L};
    for (size_t i = 0; i < 2; i++) {
        fbw_client_opts o;
        fbw_servers_client_opts(&s, &o);
        o.conn.protocol_max = 12;
        char dsn[1400];
        fbw_err err;
        int rc = connect_fail(fbw_servers_dsn(&s, ids[i], dsn, sizeof dsn), &o, &err, "max 12");
        cr_expect_eq(rc, FBW_E_AUTH, "%s: %s %s", fbw_server_name(ids[i]), fbw_rc_name(rc), err.msg);
        cr_expect(has(err.msg, "Legacy_Auth"), "message does not say what to do: \"%s\"", err.msg);
    }
}

/* ---- compression ---- */

Test(connect, compression, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server_id ids[] = {FBW_SRV_FB3, FBW_SRV_FB4};
    for (size_t i = 0; i < 2; i++) {
        for (int crypt = 0; crypt <= 1; crypt++) {
            fbw_client_opts o;
            fbw_servers_client_opts(&s, &o);
            o.conn.compress = 1;
            o.conn.wire_crypt = crypt ? FBW_WIRE_CRYPT_REQUIRED : FBW_WIRE_CRYPT_DISABLED;
            fbw_client *cl = connect_ok(&s, ids[i], &o, crypt ? "zlib+crypt" : "zlib");
            fbw_conn *c = fbw_client_conn(cl);
            const fbw_conn_info *in = info_of(cl);
            cr_expect_eq(in->compressed, 1, "%s crypt=%d: not compressed", fbw_server_name(ids[i]), crypt);
            if (crypt)
                cr_expect_str_neq(in->wire_crypt, "none");
            else
                cr_expect_str_eq(in->wire_crypt, "none");
            cr_assert_eq(fbw_conn_query_version(c), FBW_OK);
            cr_assert_eq(fbw_client_wait(cl), FBW_OK, "%s", fbw_client_error(cl)->msg);
            cr_expect_neq(in->server_version[0], 0);
            const fbw_stats *st = fbw_conn_stats(c);
            /* zero-padded XDR shrinks under zlib: the wire must carry fewer bytes than the XDR */
            cr_expect_lt(st->wire_bytes_received, st->bytes_received, "%s crypt=%d: %llu wire vs %llu",
                         fbw_server_name(ids[i]), crypt, (unsigned long long)st->wire_bytes_received,
                         (unsigned long long)st->bytes_received);
            cr_expect_eq(fbw_client_close(cl), FBW_OK);
        }
    }
}

/* ---- round trips ---- */

/* Expected cost of connect+attach, by the flow the server chooses:
 *  A + crypt: op_connect -> op_cond_accept (SRP salt, B); op_cont_auth (proof) -> op_response;
 *             op_crypt -> op_response; op_attach -> op_response                   = 4 trips
 *  A, no crypt plugin in common: the same without op_crypt                       = 3 trips
 *  B (client crypt disabled: the server skips op_cond_accept): op_connect -> op_accept_data
 *    (salt, B); op_attach carrying the proof in the DPB -> op_response          = 2 trips
 *  Legacy_Auth: the hash is checked in op_connect -> op_accept_data (authenticated), or
 *    below protocol 13 op_accept with the hash sent in op_attach; op_attach -> op_response = 2 trips
 * Each trip is one packet each way. Then op_info_database (1 trip) and op_detach (1 trip; the
 * op_disconnect that follows has no reply): +2 trips, +3 packets sent, +2 received. */
struct trip_case {
    const char *name;
    fbw_server_id id;
    int legacy;
    int protocol_max;
    int wire_crypt;
    const char *crypt_list;
    int attach_trips;
    int accept_op; /* what answered op_connect */
};

static void check_op_sums(const fbw_stats *st, const char *name)
{
    uint64_t ps = 0, pr = 0, bs = 0, br = 0;
    for (int k = 0; k <= FBW_OP_MAX; k++) {
        ps += st->op[k].packets_sent;
        pr += st->op[k].packets_received;
        bs += st->op[k].bytes_sent;
        br += st->op[k].bytes_received;
    }
    cr_expect_eq(ps, st->packets_sent, "%s: per-op packets sent add up to %llu", name,
                 (unsigned long long)ps);
    cr_expect_eq(pr, st->packets_received, "%s", name);
    cr_expect_eq(bs, st->bytes_sent, "%s", name);
    cr_expect_eq(br, st->bytes_received, "%s", name);
    /* no compression; Arc4 and ChaCha are stream ciphers: the wire carries exactly the XDR bytes */
    cr_expect_eq(st->wire_bytes_sent, st->bytes_sent, "%s", name);
    cr_expect_eq(st->wire_bytes_received, st->bytes_received, "%s", name);
}

Test(connect, round_trips, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    const struct trip_case cases[] = {
        {"fb3 Srp256 + crypt", FBW_SRV_FB3, 0, 0, FBW_WIRE_CRYPT_ENABLED, NULL, 4, FBW_OP_COND_ACCEPT},
        {"fb4 Srp256 + crypt", FBW_SRV_FB4, 0, 0, FBW_WIRE_CRYPT_ENABLED, NULL, 4, FBW_OP_COND_ACCEPT},
        {"fb3r Srp256 + crypt", FBW_SRV_FB3R, 0, 0, FBW_WIRE_CRYPT_REQUIRED, NULL, 4, FBW_OP_COND_ACCEPT},
        {"fb3 no common crypt plugin", FBW_SRV_FB3, 0, 0, FBW_WIRE_CRYPT_ENABLED, "ChaCha", 3,
         FBW_OP_COND_ACCEPT},
        {"fb3 crypt disabled", FBW_SRV_FB3, 0, 0, FBW_WIRE_CRYPT_DISABLED, NULL, 2, FBW_OP_ACCEPT_DATA},
        {"fb4 crypt disabled", FBW_SRV_FB4, 0, 0, FBW_WIRE_CRYPT_DISABLED, NULL, 2, FBW_OP_ACCEPT_DATA},
        {"fb3l Legacy_Auth", FBW_SRV_FB3L, 1, 0, FBW_WIRE_CRYPT_ENABLED, NULL, 2, FBW_OP_ACCEPT_DATA},
        {"fb3l Legacy_Auth p12", FBW_SRV_FB3L, 1, 12, FBW_WIRE_CRYPT_ENABLED, NULL, 2, FBW_OP_ACCEPT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct trip_case *k = &cases[i];
        fbw_client_opts o;
        fbw_servers_client_opts(&s, &o);
        o.conn.wire_crypt = k->wire_crypt;
        o.conn.crypt_list = k->crypt_list;
        if (k->protocol_max)
            o.conn.protocol_max = k->protocol_max;
        if (k->legacy) {
            o.conn.auth_list = "Legacy_Auth";
            o.conn.user = s.legacy_user;
            o.conn.password = s.legacy_password;
        }
        fbw_client *cl = connect_ok(&s, k->id, &o, k->name);
        fbw_conn *c = fbw_client_conn(cl);
        const fbw_stats *st = fbw_conn_stats(c);
        uint64_t n = (uint64_t)k->attach_trips;
        int flow_a = k->accept_op == FBW_OP_COND_ACCEPT;
        int crypt = strcmp(info_of(cl)->wire_crypt, "none") != 0;
        cr_expect_eq(crypt, flow_a && k->attach_trips == 4, "%s: wire crypt %s", k->name,
                     info_of(cl)->wire_crypt);
        cr_expect_eq(st->round_trips, n, "%s: %llu trips to attach, expected %llu", k->name,
                     (unsigned long long)st->round_trips, (unsigned long long)n);
        cr_expect_eq(st->packets_sent, n, "%s: %llu packets sent", k->name,
                     (unsigned long long)st->packets_sent);
        cr_expect_eq(st->packets_received, n, "%s: %llu packets received", k->name,
                     (unsigned long long)st->packets_received);
        cr_expect_eq(st->op[k->accept_op].packets_received, 1, "%s: op_connect answered otherwise",
                     k->name);
        cr_expect_eq(st->op[FBW_OP_CONT_AUTH].packets_sent, (uint64_t)flow_a, "%s", k->name);
        cr_expect_eq(st->op[FBW_OP_CRYPT].packets_sent, (uint64_t)crypt, "%s", k->name);
        cr_expect_eq(st->op[FBW_OP_ATTACH].packets_sent, 1, "%s", k->name);

        cr_assert_eq(fbw_conn_query_version(c), FBW_OK);
        cr_assert_eq(fbw_client_wait(cl), FBW_OK, "%s", fbw_client_error(cl)->msg);
        cr_assert_eq(fbw_conn_detach(c), FBW_OK);
        cr_assert_eq(fbw_client_wait(cl), FBW_OK, "%s", fbw_client_error(cl)->msg);
        cr_expect_eq(fbw_conn_get_state(c), FBW_CS_DETACHED);
        cr_expect_eq(st->round_trips, n + 2, "%s: session cost %llu trips", k->name,
                     (unsigned long long)st->round_trips);
        cr_expect_eq(st->packets_sent, n + 3, "%s: session sent %llu packets", k->name,
                     (unsigned long long)st->packets_sent);
        cr_expect_eq(st->packets_received, n + 2, "%s: session received %llu packets", k->name,
                     (unsigned long long)st->packets_received);
        cr_expect_eq(st->op[FBW_OP_DISCONNECT].packets_sent, 1, "%s", k->name);
        check_op_sums(st, k->name);
        fprintf(stderr, "%s: %llu trips, %llu/%llu packets, %llu/%llu bytes sent/received\n", k->name,
                    (unsigned long long)st->round_trips, (unsigned long long)st->packets_sent,
                    (unsigned long long)st->packets_received, (unsigned long long)st->bytes_sent,
                    (unsigned long long)st->bytes_received);
        fbw_client_abort(cl);
    }
}

/* ---- many logins ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define LOGINS 500

/* SRP pads or does not pad big numbers depending on their leading bytes; a mistake there fails
 * about one login in 128, so hundreds in a row are needed to see it. */
static void many_logins(fbw_server_id id, const char *plugin)
{
    fbw_servers s;
    fbw_servers_require(&s);
    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    o.conn.auth_list = plugin;
    char dsn[1400];
    fbw_servers_dsn(&s, id, dsn, sizeof dsn);
    double *t = calloc(LOGINS, sizeof *t);
    cr_assert_not_null(t);
    int failed = 0;
    char first[FBW_ERR_MSG_MAX + 64] = "";
    for (int i = 0; i < LOGINS; i++) {
        fbw_client *cl = NULL;
        fbw_err err;
        fbw_err_clear(&err);
        double t0 = fbw_servers_now();
        int rc = fbw_client_connect(dsn, &o, &cl, &err);
        t[i] = fbw_servers_now() - t0;
        if (rc != FBW_OK) {
            if (!failed++)
                snprintf(first, sizeof first, "login %d: %s", i, err.msg);
            continue;
        }
        if (strcmp(info_of(cl)->auth_plugin, plugin) != 0 && !failed++)
            snprintf(first, sizeof first, "login %d used %s", i, info_of(cl)->auth_plugin);
        fbw_client_close(cl);
    }
    qsort(t, LOGINS, sizeof *t, cmp_double);
    double median = (t[LOGINS / 2 - 1] + t[LOGINS / 2]) / 2;
    fprintf(stderr, "%s %s: %d logins, %d failed, median login %.2f ms (min %.2f, max %.2f)\n",
            fbw_server_name(id), plugin, LOGINS, failed, median * 1e3, t[0] * 1e3, t[LOGINS - 1] * 1e3);
    free(t);
    cr_expect_eq(failed, 0, "%d of %d logins failed; first: %s", failed, LOGINS, first);
}

Test(connect, many_logins_srp256_fb4, .timeout = 300)
{
    many_logins(FBW_SRV_FB4, "Srp256");
}

Test(connect, many_logins_srp_fb3, .timeout = 300)
{
    many_logins(FBW_SRV_FB3, "Srp");
}
