/* SPDX-License-Identifier: MIT */
/* test_crypt.c - wire encryption and compression end to end against the real servers of
 * scripts/fb-servers.sh: every plugin x compression on/off on FB3 (Arc4 only) and FB4 (ChaCha64,
 * ChaCha, Arc4), confirmed from the server side (FB4: MON$ATTACHMENTS; both: RDB$GET_CONTEXT
 * WIRE_ENCRYPTED / WIRE_COMPRESSED) and from a live loopback capture (libpcap, needs root); the
 * policy errors (server Required vs client disabled, client required vs Legacy_Auth or no common
 * plugin); and a 64 MiB transfer through each cipher checked against a checksum the server computes. */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>

#include "servers.h"

#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GDS_WIRECRYPT_INCOMPAT 335545064u /* isc_wirecrypt_incompatible */
#define GDS_MISS_WIRECRYPT 335545065u     /* isc_miss_wirecrypt */

#define MAX_COLS 8

static int has(const char *hay, const char *needle) { return strstr(hay, needle) != NULL; }

/* ---- connecting ---- */

/* One wire setup: plugin NULL = encryption disabled. */
typedef struct setup {
    fbw_server_id id;
    const char *plugin;
    int compress;
} setup;

static void setup_opts(const fbw_servers *s, const setup *k, fbw_client_opts *o)
{
    fbw_servers_client_opts(s, o);
    o->conn.compress = k->compress;
    o->conn.wire_crypt = k->plugin ? FBW_WIRE_CRYPT_REQUIRED : FBW_WIRE_CRYPT_DISABLED;
    o->conn.crypt_list = k->plugin;
    o->timeout_ms = 60000; /* the big transfer's server-side aggregate takes a while */
}

static const char *setup_name(const setup *k, char *buf, size_t size)
{
    snprintf(buf, size, "%s %s%s", fbw_server_name(k->id), k->plugin ? k->plugin : "no crypt",
             k->compress ? " + zlib" : "");
    return buf;
}

static fbw_client *connect_setup(const fbw_servers *s, const setup *k)
{
    fbw_client_opts o;
    setup_opts(s, k, &o);
    char dsn[1400], name[64];
    fbw_client *cl = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    int rc = fbw_client_connect(fbw_servers_dsn(s, k->id, dsn, sizeof dsn), &o, &cl, &err);
    cr_assert_eq(rc, FBW_OK, "%s: %s: %s", setup_name(k, name, sizeof name), fbw_rc_name(rc), err.msg);
    const fbw_conn_info *in = fbw_conn_get_info(fbw_client_conn(cl));
    cr_assert_str_eq(in->wire_crypt, k->plugin ? k->plugin : "none", "%s", setup_name(k, name, sizeof name));
    cr_assert_eq(in->compressed, k->compress, "%s", setup_name(k, name, sizeof name));
    return cl;
}

/* Connect expecting failure: returns the code with err filled; the password never shows. */
static int connect_fail(const fbw_servers *s, fbw_server_id id, const fbw_client_opts *o, fbw_err *err,
                        const char *what)
{
    char dsn[1400];
    fbw_client *cl = NULL;
    fbw_err_clear(err);
    int rc = fbw_client_connect(fbw_servers_dsn(s, id, dsn, sizeof dsn), o, &cl, err);
    cr_assert_neq(rc, FBW_OK, "%s: connected although it should not", what);
    cr_assert_null(cl);
    cr_assert(!o->conn.password || !*o->conn.password || !has(err->msg, o->conn.password),
              "%s: the password is in the message", what);
    return rc;
}

/* ---- running SQL ---- */

typedef int (*row_fn)(void *arg, const fbw_msgfmt *f, const fbw_value *v);

/* Run sql in its own read-only transaction, fetching every row through fn. Returns the row count. */
static size_t run_sql(fbw_client *cl, const char *sql, row_fn fn, void *arg)
{
    fbw_conn *c = fbw_client_conn(cl);
    fbw_tx *tx;
    fbw_tx_opts to;
    cr_assert_eq(fbw_tx_new(c, &tx, NULL), FBW_OK);
    fbw_tx_opts_init(&to);
    to.read_only = 1;
    fbw_err err;
    fbw_stmt *st;
    cr_assert_eq(fbw_stmt_new(c, &st, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_tx_start(tx, &to), FBW_OK);
    /* prepare inside the transaction: FB3 refuses some statements in the system transaction */
    int rc = fbw_client_wait(cl);
    cr_assert_eq(rc, FBW_OK, "start transaction: %s", fbw_client_error(cl)->msg);
    rc = fbw_client_prepare(cl, st, tx, sql, strlen(sql));
    cr_assert_eq(rc, FBW_OK, "prepare: %s", fbw_client_error(cl)->msg);
    cr_assert_eq(fbw_stmt_error(st)->code, FBW_OK, "prepare %s: %s", sql, fbw_stmt_error(st)->msg);
    const fbw_msgfmt *f = fbw_stmt_output(st);
    cr_assert_leq(f->n, MAX_COLS);
    rc = fbw_client_execute(cl, st, tx, NULL, 0);
    size_t rows = 0;
    fbw_value v[MAX_COLS];
    while (rc == FBW_OK) {
        cr_assert_eq(fbw_stmt_error(st)->code, FBW_OK, "%s: %s", sql, fbw_stmt_error(st)->msg);
        for (size_t i = 0; i < fbw_stmt_row_count(st); i++, rows++) {
            cr_assert_eq(fbw_stmt_row(st, i, v, &err), FBW_OK, "row %zu: %s", rows, err.msg);
            cr_assert_eq(fn(arg, f, v), 0);
        }
        fbw_stmt_clear_rows(st);
        if (fbw_stmt_eof(st))
            break;
        rc = fbw_client_fetch(cl, st);
    }
    cr_assert_eq(rc, FBW_OK, "fetch: %s", fbw_client_error(cl)->msg);
    fbw_stmt_free(st);
    rc = fbw_client_commit(cl, tx);
    cr_assert_eq(rc, FBW_OK, "commit: %s", fbw_client_error(cl)->msg);
    fbw_tx_free(tx);
    return rows;
}

/* A single row of text/integer columns, rendered as text. */
typedef struct text_row {
    char col[MAX_COLS][256];
    int null[MAX_COLS];
    int n;
} text_row;

static int keep_text(void *arg, const fbw_msgfmt *f, const fbw_value *v)
{
    text_row *t = arg;
    fbw_buf b;
    fbw_buf_init(&b);
    t->n = f->n;
    for (int i = 0; i < f->n; i++) {
        fbw_err err;
        fbw_buf_reset(&b);
        t->null[i] = v[i].is_null;
        if (!v[i].is_null)
            cr_assert_eq(fbw_value_to_text(&v[i], &f->cols[i], NULL, &b, &err), FBW_OK, "%s", err.msg);
        size_t n = fbw_buf_avail(&b) < 255 ? fbw_buf_avail(&b) : 255;
        memcpy(t->col[i], fbw_buf_head(&b), n);
        t->col[i][n] = 0;
        /* CHAR columns arrive blank-padded */
        while (n > 0 && t->col[i][n - 1] == ' ')
            t->col[i][--n] = 0;
    }
    fbw_buf_free(&b);
    return 0;
}

static void one_row(fbw_client *cl, const char *sql, text_row *out)
{
    memset(out, 0, sizeof *out);
    size_t n = run_sql(cl, sql, keep_text, out);
    cr_assert_eq(n, 1, "%s: %zu rows", sql, n);
}

/* ---- the server's view ---- */

/* Both FB3 and FB4 tell a connection how it arrived through RDB$GET_CONTEXT. */
static void expect_context(fbw_client *cl, const setup *k)
{
    char name[64];
    text_row r;
    one_row(cl,
            "SELECT RDB$GET_CONTEXT('SYSTEM', 'WIRE_ENCRYPTED'), RDB$GET_CONTEXT('SYSTEM', "
            "'WIRE_COMPRESSED') FROM RDB$DATABASE",
            &r);
    cr_expect_str_eq(r.col[0], k->plugin ? "TRUE" : "FALSE", "%s: server says WIRE_ENCRYPTED=%s",
                     setup_name(k, name, sizeof name), r.col[0]);
    cr_expect_str_eq(r.col[1], k->compress ? "TRUE" : "FALSE", "%s: server says WIRE_COMPRESSED=%s",
                     setup_name(k, name, sizeof name), r.col[1]);
}

/* FB4 also names the plugin in MON$ATTACHMENTS. */
static void expect_mon_attachment(fbw_client *cl, const setup *k)
{
    char name[64];
    text_row r;
    one_row(cl,
            "SELECT MON$WIRE_CRYPT_PLUGIN, MON$WIRE_ENCRYPTED, MON$WIRE_COMPRESSED FROM MON$ATTACHMENTS "
            "WHERE MON$ATTACHMENT_ID = CURRENT_CONNECTION",
            &r);
    setup_name(k, name, sizeof name);
    if (k->plugin)
        cr_expect_str_eq(r.col[0], k->plugin, "%s: MON$WIRE_CRYPT_PLUGIN=%s", name, r.col[0]);
    else
        cr_expect(r.null[0] || r.col[0][0] == 0, "%s: MON$WIRE_CRYPT_PLUGIN=%s", name, r.col[0]);
    cr_expect_str_eq(r.col[1], k->plugin ? "TRUE" : "FALSE", "%s: MON$WIRE_ENCRYPTED=%s", name, r.col[1]);
    cr_expect_str_eq(r.col[2], k->compress ? "TRUE" : "FALSE", "%s: MON$WIRE_COMPRESSED=%s", name,
                     r.col[2]);
}

/* ---- checksummed transfers ---- */

/* Firebird's HASH() (SysFunction.cpp evlHash): a 64-bit PJW/ELF hash over the string's bytes. The
 * high nibble is folded back with an arithmetic shift of the signed value, so when bit 63 is set the
 * fold flips bits 8..59 too. */
static uint64_t fb_hash(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        v = (v << 4) + p[i];
        uint64_t hi = v & 0xF000000000000000u;
        if (hi) {
            uint64_t fold = hi >> 56;
            if (hi & 0x8000000000000000u)
                fold |= 0xFFFFFFFFFFFFFF00u; /* sign extension of a 56-bit shift */
            v ^= fold;
        }
        v &= ~hi;
    }
    return v;
}

/* Rows of `width` bytes (OCTETS), each a repeated pattern that differs per row. The server sums the
 * low and high 32 bits of HASH() per row (the sum of the full 60-bit values would overflow BIGINT). */
#define ROWS_CTE                                                                                    \
    "WITH RECURSIVE r(n) AS (SELECT 0 FROM RDB$DATABASE UNION ALL SELECT n + 1 FROM r WHERE n < 99), " \
    "t(id) AS (SELECT a.n * 100 + b.n FROM r a CROSS JOIN r b WHERE a.n * 100 + b.n < %d), "         \
    "d(s) AS (SELECT CAST(RPAD(CAST('' AS VARCHAR(1) CHARACTER SET OCTETS), %d, "                    \
    "CAST(id || ':' || HASH(id * 7919) || ';' AS VARCHAR(48) CHARACTER SET OCTETS)) "               \
    "AS VARCHAR(%d) CHARACTER SET OCTETS) FROM t) "

typedef struct checksum {
    uint64_t rows, bytes, lo, hi;
} checksum;

static int add_row(void *arg, const fbw_msgfmt *f, const fbw_value *v)
{
    checksum *c = arg;
    cr_assert_eq(f->n, 1);
    cr_assert(!v[0].is_null);
    uint64_t h = fb_hash(v[0].u.bytes.p, v[0].u.bytes.n);
    c->rows++;
    c->bytes += v[0].u.bytes.n;
    c->lo += h & 0xFFFFFFFFu;
    c->hi += h >> 32;
    return 0;
}

/* Fetch rows x width bytes through the connection and compare with the server's own sums. */
static void checked_transfer(fbw_client *cl, const setup *k, int rows, int width, uint64_t min_bytes)
{
    char name[64], sql[1024];
    setup_name(k, name, sizeof name);
    snprintf(sql, sizeof sql, ROWS_CTE "SELECT s FROM d", rows, width, width);
    checksum got = {0};
    size_t n = run_sql(cl, sql, add_row, &got);
    cr_assert_eq(n, (size_t)rows, "%s: %zu rows", name, n);
    cr_assert_geq(got.bytes, min_bytes, "%s: only %llu bytes", name, (unsigned long long)got.bytes);
    snprintf(sql, sizeof sql,
             ROWS_CTE "SELECT COUNT(*), CAST(SUM(CHAR_LENGTH(s)) AS BIGINT), "
                      "CAST(SUM(BIN_AND(HASH(s), 4294967295)) AS BIGINT), "
                      "CAST(SUM(BIN_SHR(HASH(s), 32)) AS BIGINT) FROM d",
             rows, width, width);
    text_row r;
    one_row(cl, sql, &r);
    char mine[4][32];
    snprintf(mine[0], sizeof mine[0], "%llu", (unsigned long long)got.rows);
    snprintf(mine[1], sizeof mine[1], "%llu", (unsigned long long)got.bytes);
    snprintf(mine[2], sizeof mine[2], "%llu", (unsigned long long)got.lo);
    snprintf(mine[3], sizeof mine[3], "%llu", (unsigned long long)got.hi);
    static const char *const what[4] = {"rows", "bytes", "hash low sum", "hash high sum"};
    for (int i = 0; i < 4; i++)
        cr_expect_str_eq(r.col[i], mine[i], "%s: %s: server %s, client %s", name, what[i], r.col[i],
                         mine[i]);
    /* the wire really carried it: the client decoded at least as many bytes as the rows hold */
    const fbw_stats *st = fbw_conn_stats(fbw_client_conn(cl));
    cr_log_info("%s: %llu rows, %llu bytes, checksum %s/%s; received %llu XDR bytes, %llu on the wire",
                name, (unsigned long long)got.rows, (unsigned long long)got.bytes, mine[2], mine[3],
                (unsigned long long)st->bytes_received, (unsigned long long)st->wire_bytes_received);
    cr_expect_geq(st->bytes_received, got.bytes, "%s", name);
    if (k->compress)
        cr_expect_lt(st->wire_bytes_received, st->bytes_received, "%s: zlib did not shrink", name);
    else
        cr_expect_eq(st->wire_bytes_received, st->bytes_received, "%s: stream cipher changed sizes", name);
}

/* ---- every plugin x compression, both servers ---- */

static const char *const FB4_PLUGINS[] = {"ChaCha64", "ChaCha", "Arc4", NULL};

static void matrix_case(const fbw_servers *s, const setup *k)
{
    fbw_client *cl = connect_setup(s, k);
    expect_context(cl, k);
    if (k->id == FBW_SRV_FB4)
        expect_mon_attachment(cl, k);
    /* a few hundred KiB both ways through the filters */
    checked_transfer(cl, k, 300, 1000, 300000);
    cr_expect_eq(fbw_client_close(cl), FBW_OK);
}

Test(crypt, fb4_every_plugin_and_compression, .timeout = 120)
{
    fbw_servers s;
    fbw_servers_require(&s);
    for (int z = 0; z <= 1; z++)
        for (size_t i = 0; i < sizeof FB4_PLUGINS / sizeof *FB4_PLUGINS; i++) {
            setup k = {FBW_SRV_FB4, FB4_PLUGINS[i], z};
            matrix_case(&s, &k);
        }
}

Test(crypt, fb3_arc4_and_compression, .timeout = 120)
{
    fbw_servers s;
    fbw_servers_require(&s);
    for (int z = 0; z <= 1; z++) {
        setup k = {FBW_SRV_FB3, "Arc4", z};
        matrix_case(&s, &k);
        setup none = {FBW_SRV_FB3, NULL, z};
        matrix_case(&s, &none);
        setup req = {FBW_SRV_FB3R, "Arc4", z};
        matrix_case(&s, &req);
    }
}

/* FB3 offers Arc4 only (and protocol 15 < 16 carries no ChaCha IV): required fails on the client
 * before op_attach; enabled falls back to an unencrypted attachment, as fbclient does. */
Test(crypt, fb3_has_no_chacha, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    const char *plugins[] = {"ChaCha64", "ChaCha", "ChaCha64,ChaCha"};
    for (size_t i = 0; i < 3; i++) {
        fbw_client_opts o;
        setup k = {FBW_SRV_FB3, plugins[i], 0};
        setup_opts(&s, &k, &o);
        fbw_err err;
        int rc = connect_fail(&s, FBW_SRV_FB3, &o, &err, plugins[i]);
        cr_expect_eq(rc, FBW_E_CRYPT, "%s: %s %s", plugins[i], fbw_rc_name(rc), err.msg);
        cr_expect(has(err.msg, "required") && has(err.msg, "Arc4"),
                  "%s: message should say what each side offers: \"%s\"", plugins[i], err.msg);

        o.conn.wire_crypt = FBW_WIRE_CRYPT_ENABLED;
        char dsn[1400];
        fbw_client *cl = NULL;
        rc = fbw_client_connect(fbw_servers_dsn(&s, FBW_SRV_FB3, dsn, sizeof dsn), &o, &cl, &err);
        cr_assert_eq(rc, FBW_OK, "%s enabled: %s", plugins[i], err.msg);
        cr_expect_str_eq(fbw_conn_get_info(fbw_client_conn(cl))->wire_crypt, "none");
        setup none = {FBW_SRV_FB3, NULL, 0};
        expect_context(cl, &none);
        fbw_client_close(cl);
    }
}

/* ---- policy errors ---- */

Test(crypt, required_server_refuses_disabled_client, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    for (int z = 0; z <= 1; z++) {
        fbw_client_opts o;
        fbw_servers_client_opts(&s, &o);
        o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
        o.conn.compress = z;
        fbw_err err;
        int rc = connect_fail(&s, FBW_SRV_FB3R, &o, &err, "client disabled");
        cr_expect_eq(rc, FBW_E_SERVER, "%s: %s", fbw_rc_name(rc), err.msg);
        cr_expect_eq(err.ngds > 0 ? err.gds[0] : 0, GDS_WIRECRYPT_INCOMPAT, "gds %u: %s", err.gds[0],
                     err.msg);
        /* enabled, but no plugin in common: fbclient's behaviour, the server refuses the attach */
        o.conn.wire_crypt = FBW_WIRE_CRYPT_ENABLED;
        o.conn.crypt_list = "ChaCha";
        rc = connect_fail(&s, FBW_SRV_FB3R, &o, &err, "enabled, no common plugin");
        cr_expect_eq(rc, FBW_E_SERVER, "%s: %s", fbw_rc_name(rc), err.msg);
        cr_expect_eq(err.ngds > 0 ? err.gds[0] : 0, GDS_MISS_WIRECRYPT, "gds %u: %s", err.gds[0], err.msg);
    }
}

/* ---- loopback capture ---- */

typedef struct capture {
    pcap_t *p;
    int port;
    int link_hdr;    /* bytes before the IP header */
    fbw_buf to_srv;  /* TCP payload towards the server port, in capture order */
    fbw_buf to_cli;  /* and back */
} capture;

static void on_packet(u_char *arg, const struct pcap_pkthdr *h, const u_char *pkt)
{
    capture *c = (capture *)arg;
    size_t n = h->caplen, off = (size_t)c->link_hdr;
    if (n < off + 20 || (pkt[off] >> 4) != 4)
        return; /* the servers listen on 127.0.0.1: IPv4 only */
    size_t ihl = (size_t)(pkt[off] & 15) * 4, ip_len = (size_t)pkt[off + 2] << 8 | pkt[off + 3];
    if (pkt[off + 9] != 6 || n < off + ihl + 20 || ip_len < ihl + 20 || off + ip_len > n)
        return;
    const u_char *tcp = pkt + off + ihl;
    size_t thl = (size_t)(tcp[12] >> 4) * 4;
    if (ihl + thl > ip_len)
        return;
    int dport = tcp[2] << 8 | tcp[3];
    fbw_buf *b = dport == c->port ? &c->to_srv : &c->to_cli;
    cr_assert_eq(fbw_buf_append(b, tcp + thl, ip_len - ihl - thl), FBW_OK);
}

static void capture_start(capture *c, int port)
{
    memset(c, 0, sizeof *c);
    c->port = port;
    fbw_buf_init(&c->to_srv);
    fbw_buf_init(&c->to_cli);
    char ebuf[PCAP_ERRBUF_SIZE] = "";
    c->p = pcap_create("lo", ebuf);
    cr_assert_not_null(c->p, "pcap_create(lo): %s", ebuf);
    /* Not immediate mode: that ring has one snaplen-sized slot per packet and overflows when
     * others' traffic to the same server arrives before capture_stop() drains it; the block ring
     * packs packets and hands a block over after the timeout. */
    cr_assert_eq(pcap_set_snaplen(c->p, 65535), 0);
    cr_assert_eq(pcap_set_timeout(c->p, 20), 0);
    cr_assert_eq(pcap_set_buffer_size(c->p, 64 << 20), 0);
    int rc = pcap_activate(c->p);
    cr_assert_geq(rc, 0, "pcap_activate(lo) (the test needs root): %s", pcap_geterr(c->p));
    int dl = pcap_datalink(c->p);
    cr_assert(dl == DLT_EN10MB || dl == DLT_NULL || dl == DLT_LINUX_SLL, "unexpected link type %d", dl);
    c->link_hdr = dl == DLT_EN10MB ? 14 : dl == DLT_NULL ? 4 : 16;
    char filter[64];
    snprintf(filter, sizeof filter, "tcp port %d", port);
    struct bpf_program prog;
    cr_assert_eq(pcap_compile(c->p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN), 0, "%s", pcap_geterr(c->p));
    cr_assert_eq(pcap_setfilter(c->p, &prog), 0, "%s", pcap_geterr(c->p));
    pcap_freecode(&prog);
    cr_assert_eq(pcap_setnonblock(c->p, 1, ebuf), 0, "%s", ebuf);
}

/* Collect what was captured; returns once nothing new arrived for a while. */
static void capture_stop(capture *c)
{
    int quiet = 0;
    while (quiet < 10) { /* 200 ms without packets: well past the 20 ms block timeout */
        int n = pcap_dispatch(c->p, -1, on_packet, (u_char *)c);
        cr_assert_geq(n, 0, "pcap_dispatch: %s", pcap_geterr(c->p));
        quiet = n == 0 ? quiet + 1 : 0;
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    struct pcap_stat st;
    if (pcap_stats(c->p, &st) == 0)
        cr_expect_eq(st.ps_drop, 0, "capture dropped %u packets", st.ps_drop);
    pcap_close(c->p);
    c->p = NULL;
}

static void capture_free(capture *c)
{
    fbw_buf_free(&c->to_srv);
    fbw_buf_free(&c->to_cli);
}

static int captured(const fbw_buf *b, const char *marker)
{
    return fbw_buf_avail(b) && memmem(fbw_buf_head(b), fbw_buf_avail(b), marker, strlen(marker));
}

static void make_marker(char *buf, size_t size, const char *what)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(buf, size, "FBWMARK_%s_%ld_%ld", what, (long)getpid(), (long)ts.tv_nsec);
}

/* Select a unique literal; the capture must see it in both directions exactly when not encrypted. */
static void sniff_case(const fbw_servers *s, const setup *k)
{
    char name[64], marker[96], sql[256];
    setup_name(k, name, sizeof name);
    make_marker(marker, sizeof marker, k->plugin ? k->plugin : "clear");
    snprintf(sql, sizeof sql, "SELECT '%s' FROM RDB$DATABASE", marker);
    capture cap;
    capture_start(&cap, s->srv[k->id].port);
    fbw_client *cl = connect_setup(s, k);
    text_row r;
    one_row(cl, sql, &r);
    cr_expect_eq(fbw_client_close(cl), FBW_OK);
    capture_stop(&cap);
    cr_assert_str_eq(r.col[0], marker, "%s: the query itself did not work", name);
    cr_assert_gt(fbw_buf_avail(&cap.to_srv), 0, "%s: nothing captured towards the server", name);
    cr_assert_gt(fbw_buf_avail(&cap.to_cli), 0, "%s: nothing captured from the server", name);
    int clear = k->plugin == NULL;
    cr_expect_eq(captured(&cap.to_srv, marker), clear, "%s: marker %s in the SQL sent to the server",
                 name, clear ? "missing" : "visible");
    cr_expect_eq(captured(&cap.to_cli, marker), clear, "%s: marker %s in the row sent back", name,
                 clear ? "missing" : "visible");
    capture_free(&cap);
}

Test(crypt, fb3_capture_arc4_hides_sql, .timeout = 180)
{
    fbw_servers s;
    fbw_servers_require(&s);
    setup none = {FBW_SRV_FB3, NULL, 0}, arc4 = {FBW_SRV_FB3, "Arc4", 0};
    sniff_case(&s, &none); /* the control: without crypt the marker is on the wire */
    sniff_case(&s, &arc4);
    setup arc4z = {FBW_SRV_FB3, "Arc4", 1};
    sniff_case(&s, &arc4z);
}

Test(crypt, fb4_capture_every_plugin_hides_sql, .timeout = 180)
{
    fbw_servers s;
    fbw_servers_require(&s);
    setup none = {FBW_SRV_FB4, NULL, 0};
    sniff_case(&s, &none);
    for (size_t i = 0; i < sizeof FB4_PLUGINS / sizeof *FB4_PLUGINS; i++) {
        setup k = {FBW_SRV_FB4, FB4_PLUGINS[i], 0};
        sniff_case(&s, &k);
    }
}

/* Client required + Legacy_Auth: a clear error naming Legacy_Auth, and op_attach (recognised by a
 * marker as its process name) never leaves the client. Enabled is the control: it attaches in clear. */
static void legacy_case(const fbw_servers *s, const char *auth_list, int wire_crypt)
{
    char marker[96];
    make_marker(marker, sizeof marker, "attach");
    fbw_client_opts o;
    fbw_servers_client_opts(s, &o);
    o.conn.user = s->legacy_user;
    o.conn.password = s->legacy_password;
    o.conn.auth_list = auth_list;
    o.conn.wire_crypt = wire_crypt;
    o.conn.process_name = marker;
    capture cap;
    capture_start(&cap, s->srv[FBW_SRV_FB3L].port);
    fbw_err err;
    fbw_client *cl = NULL;
    int rc;
    if (wire_crypt == FBW_WIRE_CRYPT_REQUIRED) {
        rc = connect_fail(s, FBW_SRV_FB3L, &o, &err, auth_list);
        cr_expect_eq(rc, FBW_E_CRYPT, "%s: %s %s", auth_list, fbw_rc_name(rc), err.msg);
        cr_expect(has(err.msg, "Legacy_Auth") && has(err.msg, "required"),
                  "%s: the message should name Legacy_Auth: \"%s\"", auth_list, err.msg);
    } else {
        char dsn[1400];
        rc = fbw_client_connect(fbw_servers_dsn(s, FBW_SRV_FB3L, dsn, sizeof dsn), &o, &cl, &err);
        cr_assert_eq(rc, FBW_OK, "%s enabled: %s", auth_list, err.msg);
        cr_expect_str_eq(fbw_conn_get_info(fbw_client_conn(cl))->auth_plugin, "Legacy_Auth");
        cr_expect_str_eq(fbw_conn_get_info(fbw_client_conn(cl))->wire_crypt, "none");
        fbw_client_close(cl);
    }
    capture_stop(&cap);
    cr_assert_gt(fbw_buf_avail(&cap.to_srv), 0, "%s: nothing captured", auth_list);
    int sent = captured(&cap.to_srv, marker);
    cr_expect_eq(sent, wire_crypt != FBW_WIRE_CRYPT_REQUIRED, "%s crypt=%d: op_attach %s", auth_list,
                 wire_crypt, sent ? "went out in clear" : "never sent");
    capture_free(&cap);
}

Test(crypt, required_with_legacy_auth_fails_before_attach, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    /* Legacy_Auth first: the server authenticates on op_connect (op_accept_data, authenticated) */
    legacy_case(&s, "Legacy_Auth", FBW_WIRE_CRYPT_ENABLED);
    legacy_case(&s, "Legacy_Auth", FBW_WIRE_CRYPT_REQUIRED);
    /* Srp first: the server switches to Legacy_Auth through op_cont_auth */
    legacy_case(&s, "Srp256,Srp,Legacy_Auth", FBW_WIRE_CRYPT_ENABLED);
    legacy_case(&s, "Srp256,Srp,Legacy_Auth", FBW_WIRE_CRYPT_REQUIRED);
}

/* ---- 64 MiB through each cipher ---- */

#define BIG_ROWS 2100
#define BIG_WIDTH 32000
#define BIG_MIN ((uint64_t)64 << 20)

static void big_transfer(fbw_server_id id, const char *plugin, int compress)
{
    fbw_servers s;
    fbw_servers_require(&s);
    setup k = {id, plugin, compress};
    fbw_client *cl = connect_setup(&s, &k);
    checked_transfer(cl, &k, BIG_ROWS, BIG_WIDTH, BIG_MIN);
    cr_expect_eq(fbw_client_close(cl), FBW_OK);
}

Test(crypt, transfer_64mib_fb4_chacha64, .timeout = 300) { big_transfer(FBW_SRV_FB4, "ChaCha64", 0); }
Test(crypt, transfer_64mib_fb4_chacha, .timeout = 300) { big_transfer(FBW_SRV_FB4, "ChaCha", 0); }
Test(crypt, transfer_64mib_fb4_arc4, .timeout = 300) { big_transfer(FBW_SRV_FB4, "Arc4", 0); }
Test(crypt, transfer_64mib_fb3_arc4, .timeout = 300) { big_transfer(FBW_SRV_FB3, "Arc4", 0); }
Test(crypt, transfer_64mib_fb4_chacha64_zlib, .timeout = 300) { big_transfer(FBW_SRV_FB4, "ChaCha64", 1); }
Test(crypt, transfer_64mib_fb3_arc4_zlib, .timeout = 300) { big_transfer(FBW_SRV_FB3, "Arc4", 1); }
