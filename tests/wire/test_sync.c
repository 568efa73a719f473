/* SPDX-License-Identifier: MIT */
/* test_sync.c - the session decoder joining a session late (fbw_dec_start_anywhere, wire/sync.c),
 * fed bytes only (no server): a made-up session of transactions, executes with parameters,
 * fetches of rows and commits, at protocol 15 and 17, cut at every byte offset. From every cut
 * the decoder must lock on within a few exchanges, report exactly the tail of the session's packet
 * sequence, count the round trips the bytes show, mark rows of a statement prepared before the
 * cut as of unknown format and decode them again once a BLR names the format. Garbage (another
 * protocol) is never taken for Firebird. */
#include "dec.h"
#include "fbwire.h"
#include "msg.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHUNKS 512
#define MAX_PKTS 2048

typedef struct chunk {
    int from_client;
    size_t at, n; /* in the session's bytes */
} chunk;

typedef struct session {
    fbw_buf bytes;
    chunk c[MAX_CHUNKS];
    size_t nc;
    int dir[MAX_PKTS], op[MAX_PKTS]; /* every packet in order */
    size_t at[MAX_PKTS];             /* where it starts */
    size_t np;
    int protocol;
} session;

static fbw_col bind_cols[1] = {{.type = FBW_SQL_LONG, .length = 4}};
static fbw_col sel_cols[2] = {{.type = FBW_SQL_LONG, .length = 4},
                              {.type = FBW_SQL_VARYING, .charset = FBW_CS_UTF8, .length = 10}};

static const uint8_t ok_status[12] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};

static void put(session *s, int from_client, fbw_pkt *p)
{
    fbw_pkt_ctx ctx = {.protocol = s->protocol};
    fbw_wr w;
    cr_assert_lt(s->np, MAX_PKTS);
    s->dir[s->np] = from_client;
    s->op[s->np] = p->op;
    s->at[s->np] = s->bytes.len;
    s->np++;
    fbw_wr_init(&w, &s->bytes);
    cr_assert_eq(fbw_pkt_encode(&ctx, &w, p), FBW_OK);
    /* one chunk per burst: a new one when the direction changes */
    if (s->nc == 0 || s->c[s->nc - 1].from_client != from_client) {
        cr_assert_lt(s->nc, MAX_CHUNKS);
        s->c[s->nc++] = (chunk){from_client, s->at[s->np - 1], 0};
    }
    s->c[s->nc - 1].n = s->bytes.len - s->c[s->nc - 1].at;
}

static void response(session *s, uint16_t object)
{
    fbw_pkt p = {.op = FBW_OP_RESPONSE};
    p.u.resp.object = object;
    p.u.resp.status = (fbw_bytes){ok_status, sizeof ok_status};
    put(s, 0, &p);
}

static void blr_of(fbw_col *cols, uint16_t n, fbw_buf *out)
{
    fbw_msgfmt f = {cols, n, n};
    fbw_err err;
    cr_assert_eq(fbw_blr_build(&f, 0, 3, out, &err), FBW_OK, "%s", err.msg);
}

/* op_execute of statement 5 with parameter v, then op_fetch; with_blr 0: both without BLR, as a
 * client sends them once the server knows the formats. */
static void execute_fetch(session *s, int with_blr, int32_t v)
{
    fbw_buf bind, sel, msg;
    fbw_buf_init(&bind);
    fbw_buf_init(&sel);
    fbw_buf_init(&msg);
    blr_of(bind_cols, 1, &bind);
    blr_of(sel_cols, 2, &sel);
    fbw_msgfmt f = {bind_cols, 1, 1};
    fbw_value val = {.type = FBW_SQL_LONG};
    val.u.i64 = v;
    fbw_wr w;
    fbw_err err;
    fbw_wr_init(&w, &msg);
    cr_assert_eq(fbw_msg_encode(&w, &f, s->protocol, &val, &err), FBW_OK, "%s", err.msg);
    fbw_pkt p = {.op = FBW_OP_EXECUTE};
    p.u.sqldata.stmt = 5;
    p.u.sqldata.tr = 2;
    if (with_blr)
        p.u.sqldata.blr = (fbw_bytes){bind.data, bind.len};
    p.u.sqldata.messages = 1;
    p.u.sqldata.msg = (fbw_bytes){msg.data, msg.len};
    put(s, 1, &p);
    fbw_pkt q = {.op = FBW_OP_FETCH};
    q.u.sqldata.stmt = 5;
    if (with_blr)
        q.u.sqldata.blr = (fbw_bytes){sel.data, sel.len};
    q.u.sqldata.messages = 200;
    put(s, 1, &q);
    response(s, 0);
    fbw_msgfmt rf = {sel_cols, 2, 2};
    for (int i = 0; i < 3; i++) {
        fbw_buf row;
        fbw_buf_init(&row);
        fbw_value rv[2] = {{.type = FBW_SQL_LONG}, {.type = FBW_SQL_VARYING}};
        rv[0].u.i64 = v * 10 + i;
        char text[11];
        snprintf(text, sizeof text, "row %d", i);
        rv[1].u.bytes = (fbw_bytes){(const uint8_t *)text, strlen(text)};
        fbw_wr_init(&w, &row);
        cr_assert_eq(fbw_msg_encode(&w, &rf, s->protocol, rv, &err), FBW_OK, "%s", err.msg);
        fbw_pkt r = {.op = FBW_OP_FETCH_RESPONSE};
        r.u.sqldata.messages = 1;
        r.u.sqldata.msg = (fbw_bytes){row.data, row.len};
        put(s, 0, &r);
        fbw_buf_free(&row);
    }
    fbw_pkt end = {.op = FBW_OP_FETCH_RESPONSE};
    end.u.sqldata.status = 100;
    put(s, 0, &end);
    fbw_buf_free(&bind);
    fbw_buf_free(&sel);
    fbw_buf_free(&msg);
}

/* Rounds of: start, execute + fetch with BLR, twice without, commit. */
static void build(session *s, int protocol, int rounds)
{
    memset(s, 0, sizeof *s);
    fbw_buf_init(&s->bytes);
    s->protocol = protocol;
    for (int r = 0; r < rounds; r++) {
        fbw_pkt t = {.op = FBW_OP_TRANSACTION};
        static const uint8_t tpb[] = {3, 9, 6, 15};
        t.u.sttr.tpb = (fbw_bytes){tpb, sizeof tpb};
        put(s, 1, &t);
        response(s, 2);
        execute_fetch(s, 1, r * 3);
        execute_fetch(s, 0, r * 3 + 1);
        execute_fetch(s, 0, r * 3 + 2);
        fbw_pkt c = {.op = FBW_OP_COMMIT};
        c.u.rlse.object = 2;
        put(s, 1, &c);
        response(s, 0);
    }
}

typedef struct seen {
    fbw_dec *d;
    int dir[MAX_PKTS], op[MAX_PKTS];
    size_t n;
    int rows_decoded, rows_unknown;
} seen;

static void on_packet(void *arg, int from_client, const fbw_pkt *p, size_t bytes, uint64_t ts)
{
    (void)bytes, (void)ts;
    seen *s = arg;
    cr_assert_lt(s->n, MAX_PKTS);
    s->dir[s->n] = from_client;
    s->op[s->n++] = p->op;
    if (p->op == FBW_OP_FETCH_RESPONSE && p->u.sqldata.messages) {
        if (fbw_dec_format_unknown(s->d))
            s->rows_unknown++;
        else
            s->rows_decoded++;
    }
}

/* Feed the session from byte `cut` on (the first chunk cut inside); returns the turnarounds. */
static uint64_t feed_from(const session *s, size_t cut, fbw_dec *d)
{
    uint64_t turns = 0;
    int last = -1;
    for (size_t i = 0; i < s->nc; i++) {
        size_t at = s->c[i].at, n = s->c[i].n;
        if (at + n <= cut)
            continue;
        if (at < cut) {
            n -= cut - at;
            at = cut;
        }
        if (!s->c[i].from_client && last == 1)
            turns++;
        last = s->c[i].from_client;
        /* servers' bursts arrive in two pieces, as TCP segments do */
        size_t half = s->c[i].from_client ? n : n / 2;
        cr_assert_eq(fbw_dec_feed(d, s->c[i].from_client, s->bytes.data + at, half, i), FBW_OK,
                     "cut %zu: %s", cut, fbw_dec_error(d)->msg);
        if (n > half)
            cr_assert_eq(fbw_dec_feed(d, s->c[i].from_client, s->bytes.data + at + half, n - half,
                                      i),
                         FBW_OK, "cut %zu: %s", cut, fbw_dec_error(d)->msg);
    }
    fbw_dec_end(d, 0);
    return turns;
}

/* The packets seen are the session's packets from some packet on, all of them, in order. */
static void check_suffix(const session *s, const seen *v, size_t cut)
{
    cr_assert_leq(v->n, s->np);
    if (v->n == 0)
        return;
    size_t first = s->np - v->n;
    if (getenv("SYNC_DEBUG") && v->n) {
        for (size_t i = 0; i < s->np; i++)
            fprintf(stderr, "%d%s@%zu ", s->op[i], i == first ? "|" : "", s->at[i]);
        fprintf(stderr, "\nseen:");
        for (size_t i = 0; i < v->n; i++)
            fprintf(stderr, " %d", v->op[i]);
        fprintf(stderr, "\n");
    }
    cr_assert_geq(s->at[first], cut, "cut %zu: a packet before the cut was reported", cut);
    for (size_t i = 0; i < v->n; i++)
        cr_assert(v->dir[i] == s->dir[first + i] && v->op[i] == s->op[first + i],
                  "cut %zu: packet %zu is op %d, the session has op %d there", cut, i, v->op[i],
                  s->op[first + i]);
}

static void every_cut(int protocol)
{
    session *s = malloc(sizeof *s);
    cr_assert(s);
    build(s, protocol, 4);
    size_t round = s->bytes.len / 4; /* bytes of one round */
    int locked = 0, cuts = 0;
    for (size_t cut = 0; cut < s->bytes.len; cut++) {
        seen *v = calloc(1, sizeof *v);
        cr_assert(v);
        cr_assert_eq(fbw_dec_new(on_packet, v, &v->d), FBW_OK);
        fbw_dec_start_anywhere(v->d);
        uint64_t turns = feed_from(s, cut, v->d);
        const fbw_dec_sync *y = fbw_dec_sync_info(v->d);
        cr_assert_eq(fbw_dec_stats(v->d)->round_trips, turns, "cut %zu: round trips", cut);
        check_suffix(s, v, cut);
        if (cut + 2 * round <= s->bytes.len) {
            /* at least two whole rounds left: locked on, and within the first round */
            cr_assert_eq(y->how, FBW_DEC_LOCKED_ON, "cut %zu: not locked on", cut);
            cr_assert_lt(y->lock_offset[0] + y->lock_offset[1], cut + round + 64,
                         "cut %zu: locked on late", cut);
            cr_assert_geq(protocol, y->protocol_lo);
            cr_assert_leq(protocol, y->protocol_hi);
            cr_assert_eq(y->relocks, 0, "cut %zu: lost framing after locking on", cut);
            cr_assert_gt(v->rows_decoded, 0, "cut %zu: no row decoded", cut);
            locked++;
        }
        cuts++;
        fbw_dec_free(v->d);
        free(v);
    }
    cr_assert_gt(locked, cuts / 2);
    fbw_buf_free(&s->bytes);
    free(s);
}

Test(sync, every_cut_at_protocol_15) { every_cut(15); }
Test(sync, every_cut_at_protocol_17) { every_cut(17); }

/* Cut where the second execute of the first round begins: the statement's formats were in the
 * first execute's BLR, before the cut, so its rows are counted as of unknown format until the
 * next round's BLR names the formats again. */
Test(sync, rows_of_a_statement_prepared_before_the_cut)
{
    session *s = malloc(sizeof *s);
    cr_assert(s);
    build(s, 17, 3);
    size_t cut = 0;
    int executes = 0;
    for (size_t i = 0; i < s->np; i++)
        if (s->op[i] == FBW_OP_EXECUTE && ++executes == 2)
            cut = s->at[i];
    seen *v = calloc(1, sizeof *v);
    cr_assert(v);
    cr_assert_eq(fbw_dec_new(on_packet, v, &v->d), FBW_OK);
    fbw_dec_start_anywhere(v->d);
    feed_from(s, cut, v->d);
    const fbw_dec_sync *y = fbw_dec_sync_info(v->d);
    cr_assert_eq(y->how, FBW_DEC_LOCKED_ON);
    cr_assert_eq(y->lock_offset[1], 0, "locks on at the first client burst");
    cr_assert_eq(y->lock_offset[0], 0);
    cr_assert_eq(y->skipped[0] + y->skipped[1], 0);
    cr_assert_eq(v->rows_unknown, 6, "two fetches of 3 rows before a BLR names the format");
    cr_assert_eq(y->unknown_rows, 6);
    cr_assert_eq(y->unknown_msgs, 2, "their execute parameters too");
    cr_assert_eq(v->rows_decoded, 2 * 3 * 3, "every later row decodes");
    check_suffix(s, v, cut);
    fbw_dec_free(v->d);
    free(v);
    fbw_buf_free(&s->bytes);
    free(s);
}

/* Bytes of another protocol (a PostgreSQL-like exchange) are never locked on to; the decoder gives
 * up with an error that says so, and round trips still count. */
Test(sync, another_protocol_is_not_firebird)
{
    fbw_dec *d = NULL;
    cr_assert_eq(fbw_dec_new(NULL, NULL, &d), FBW_OK);
    fbw_dec_start_anywhere(d);
    static const uint8_t q[] = "Q\0\0\0\x1dSELECT 1 FROM pg_class;\0";
    static const uint8_t r[] = "T\0\0\0\x21\0\x01?column?\0\0\0\0\0\0\0\0\0\0\x17\0\x04\xff\xff\xff\xff\0\0";
    int rc = FBW_OK;
    int i;
    for (i = 0; i < 200 && rc == FBW_OK; i++) {
        rc = fbw_dec_feed(d, 1, q, sizeof q - 1, (uint64_t)i);
        if (rc == FBW_OK)
            rc = fbw_dec_feed(d, 0, r, sizeof r - 1, (uint64_t)i);
    }
    cr_assert_eq(rc, FBW_E_PROTO, "gave up");
    cr_assert(strstr(fbw_dec_error(d)->msg, "no Firebird packets"), "%s", fbw_dec_error(d)->msg);
    cr_assert_eq(fbw_dec_sync_info(d)->how, FBW_DEC_NOT_YET);
    fbw_dec_end(d, 0);
    cr_assert_geq(fbw_dec_stats(d)->round_trips, (uint64_t)i - 1);
    fbw_dec_free(d);
}

/* Without fbw_dec_start_anywhere a stream that does not open with op_connect is an error, as
 * before (the live tap sees every session from its start). */
Test(sync, strict_without_start_anywhere)
{
    session *s = malloc(sizeof *s);
    cr_assert(s);
    build(s, 17, 1);
    fbw_dec *d = NULL;
    cr_assert_eq(fbw_dec_new(NULL, NULL, &d), FBW_OK);
    /* the first chunk cut 4 bytes in: framing is lost at once */
    int rc = fbw_dec_feed(d, 1, s->bytes.data + 4, s->c[0].n - 4, 0);
    cr_assert_neq(rc, FBW_OK);
    cr_assert_eq(fbw_dec_sync_info(d)->how, FBW_DEC_NOT_YET);
    fbw_dec_free(d);
    fbw_buf_free(&s->bytes);
    free(s);
}
