/* SPDX-License-Identifier: MIT */
/* test_blob.c - blobs against real FB3 and FB4: 0 bytes, 1 byte, 1 MiB of binary (SHA-256 compared)
 * and UTF-8 text with 4-byte characters, written through the parameter of an INSERT and read back
 * through a SELECT; the round trips of writing and reading; exact segments read with a small
 * buffer (incomplete segments); seek on a stream blob; a bad blob id leaving the connection usable.
 *
 * Round trips asserted (lazy port, the default):
 *   write any size  = 1: op_create_blob2 + op_batch_segments... (handle 0xFFFF) + op_close_blob in
 *                        one write; every reply is flushed by the server, nothing waits between.
 *   read <= 65533 B = 1: op_open_blob2 + op_info_blob(0xFFFF) + op_get_segment(0xFFFF, 65535).
 *   read 1 MiB      = 2: the first reply pair gives 65533 bytes and the size; all further
 *                        op_get_segment requests go out together in the second write.
 *   close           = 0: queued; it rides with the next request (here the commit). */
#include <criterion/criterion.h>

#include "blob.h"
#include "sqlt.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1u << 20)

typedef struct blob_fixture {
    fbw_sqlt q;
    char table[64];
    fbw_stmt *ins, *sel;
} blob_fixture;

/* DDL in the shared test database can collide with other suites' DDL running at the same time
 * ("update conflicts with concurrent update" on the system tables): retry those a few times. */
static void ddl_retry(fbw_sqlt *q, const char *sql)
{
    fbw_err err;
    int rc = FBW_OK;
    for (int attempt = 0; attempt < 20; attempt++) {
        rc = fbw_sqlt_ddl(q, sql, &err);
        fbw_errclass ec = fbw_err_classify(&err);
        if (rc == FBW_OK || (ec != FBW_EC_UPDATE_CONFLICT && ec != FBW_EC_DEADLOCK &&
                             ec != FBW_EC_LOCK_CONFLICT))
            break;
        usleep(50000u * (unsigned)(attempt + 1));
    }
    cr_assert_eq(rc, FBW_OK, "%s: %s: %s", fbw_server_name(q->id), sql, err.msg);
}

static void setup(blob_fixture *f, fbw_server_id id)
{
    char sql[512];
    fbw_sqlt_open(&f->q, id, NULL);
    fbw_sqlt_name(&f->q, "TBLOB", f->table, sizeof f->table);
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (ID INTEGER NOT NULL PRIMARY KEY, B BLOB SUB_TYPE BINARY, "
             "T BLOB SUB_TYPE TEXT CHARACTER SET UTF8)",
             f->table);
    ddl_retry(&f->q, sql);
    snprintf(sql, sizeof sql, "INSERT INTO %s (ID, B, T) VALUES (?, ?, ?)", f->table);
    f->ins = fbw_sqlt_prepare_ok(&f->q, f->q.tx, sql);
    snprintf(sql, sizeof sql, "SELECT B, T FROM %s WHERE ID = ?", f->table);
    f->sel = fbw_sqlt_prepare_ok(&f->q, f->q.tx, sql);
}

static void teardown(blob_fixture *f)
{
    char sql[128];
    fbw_stmt_free(f->ins);
    fbw_stmt_free(f->sel);
    if (fbw_tx_state(f->q.tx) == FBW_TX_ACTIVE) {
        fbw_tx_commit(f->q.tx);
        fbw_sqlt_wait_ok(&f->q);
    }
    snprintf(sql, sizeof sql, "DROP TABLE %s", f->table);
    ddl_retry(&f->q, sql);
    fbw_sqlt_close(&f->q);
}

static uint64_t rt_now(blob_fixture *f) { return fbw_conn_stats(f->q.c)->round_trips; }

/* Create, write in chunks of `chunk` bytes, close; returns the id and the round trips it took. */
static fbw_value write_blob(blob_fixture *f, const uint8_t *p, size_t n, size_t chunk, uint64_t *rt)
{
    fbw_blob *b;
    fbw_err err;
    cr_assert_eq(fbw_blob_new(f->q.c, &b, &err), FBW_OK);
    uint64_t r0 = rt_now(f);
    cr_assert_eq(fbw_blob_create(b, f->q.tx, NULL, 0), FBW_OK, "%s", fbw_blob_error(b)->msg);
    for (size_t at = 0; at < n; at += chunk) {
        size_t k = n - at < chunk ? n - at : chunk;
        int rc = fbw_blob_write(b, p + at, k);
        cr_assert_eq(rc, FBW_OK, "write at %zu: %s %s", at, fbw_rc_name(rc), fbw_blob_error(b)->msg);
    }
    cr_assert_eq(fbw_blob_close(b), FBW_OK);
    fbw_sqlt_wait_ok(&f->q);
    *rt = rt_now(f) - r0;
    cr_assert_eq(fbw_blob_error(b)->code, FBW_OK, "%s: write blob: %s", fbw_server_name(f->q.id),
                 fbw_blob_error(b)->msg);
    cr_assert_eq(fbw_blob_bytes_written(b), n);
    fbw_value id;
    cr_assert_eq(fbw_blob_id(b, &id), FBW_OK);
    cr_assert(id.u.quad.high || id.u.quad.low, "created blob has the NULL id");
    fbw_blob_free(b);
    return id;
}

static fbw_value int_value(int64_t v)
{
    fbw_value x = {.type = FBW_SQL_LONG};
    x.u.i64 = v;
    return x;
}

static void insert_row(blob_fixture *f, int id, const fbw_value *bin, const fbw_value *text)
{
    fbw_value p[3] = {int_value(id), {.type = FBW_SQL_BLOB, .is_null = 1},
                      {.type = FBW_SQL_BLOB, .is_null = 1}};
    if (bin)
        p[1] = *bin;
    if (text)
        p[2] = *text;
    fbw_err err;
    int rc = fbw_sqlt_run(&f->q, f->ins, f->q.tx, p, &err);
    cr_assert_eq(rc, FBW_OK, "%s: insert: %s", fbw_server_name(f->q.id), err.msg);
}

/* SELECT B, T of row id; the ids of both columns. */
static void select_ids(blob_fixture *f, int id, fbw_value out[2])
{
    fbw_value p = int_value(id);
    fbw_err err;
    fbw_stmt_clear_rows(f->sel);
    cr_assert_eq(fbw_sqlt_run(&f->q, f->sel, f->q.tx, &p, &err), FBW_OK, "select: %s", err.msg);
    cr_assert_eq(fbw_stmt_row_count(f->sel), 1);
    cr_assert_eq(fbw_stmt_row(f->sel, 0, out, &err), FBW_OK, "%s", err.msg);
}

/* read_all of id: the blob (caller frees) and the round trips of the read. */
static fbw_blob *read_blob(blob_fixture *f, const fbw_value *id, uint64_t *rt)
{
    fbw_blob *b;
    fbw_err err;
    cr_assert_eq(fbw_blob_new(f->q.c, &b, &err), FBW_OK);
    uint64_t r0 = rt_now(f);
    cr_assert_eq(fbw_blob_read_all(b, f->q.tx, id, NULL, 0), FBW_OK);
    fbw_sqlt_wait_ok(&f->q);
    *rt = rt_now(f) - r0;
    cr_assert_eq(fbw_blob_error(b)->code, FBW_OK, "%s: read blob: %s", fbw_server_name(f->q.id),
                 fbw_blob_error(b)->msg);
    cr_assert(fbw_blob_eof(b));
    return b;
}

static void sha256(const uint8_t *p, size_t n, uint8_t out[32])
{
    unsigned len = 0;
    cr_assert_eq(EVP_Digest(p, n, out, &len, EVP_sha256(), NULL), 1);
    cr_assert_eq(len, 32);
}

/* Deterministic bytes covering every value, not a repeating short pattern. */
static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    uint32_t x = seed;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (uint8_t)(x >> 24);
    }
}

/* ---- sizes ---- */

static void roundtrip_binary(fbw_server_id sid, size_t n, uint64_t want_read_rt)
{
    blob_fixture f;
    setup(&f, sid);
    uint8_t *data = malloc(n ? n : 1);
    cr_assert_not_null(data);
    fill(data, n, (uint32_t)n + 7);
    uint64_t wrt, rrt;
    fbw_value id = write_blob(&f, data, n, 10000, &wrt);
    cr_assert_eq(wrt, 1, "%s: writing %zu bytes took %llu round trips, expected 1",
                 fbw_server_name(sid), n, (unsigned long long)wrt);
    insert_row(&f, 1, &id, NULL);

    fbw_value got[2];
    select_ids(&f, 1, got);
    cr_assert(!got[0].is_null, "%zu-byte blob reads back as NULL", n);
    cr_assert(got[1].is_null);
    fbw_blob *b = read_blob(&f, &got[0], &rrt);
    /* Protocol 19 (Firebird 5.0.3+) sends a blob that fits the inline size (its bytes plus a 2-byte
     * segment length; the connection asks for the default) with the row: read with no request. */
    int inlined = fbw_conn_get_info(f.q.c)->protocol >= 19 && n + 2 <= FBW_INLINE_BLOB_SIZE_DEFAULT;
    cr_assert_eq(fbw_blob_was_inline(b), inlined, "%s: %zu-byte blob inline: %d, expected %d",
                 fbw_server_name(sid), n, fbw_blob_was_inline(b), inlined);
    if (inlined)
        want_read_rt = 0;
    cr_assert_eq(rrt, want_read_rt, "%s: reading %zu bytes took %llu round trips, expected %llu",
                 fbw_server_name(sid), n, (unsigned long long)rrt, (unsigned long long)want_read_rt);
    size_t len;
    const uint8_t *back = fbw_blob_data(b, &len);
    cr_assert_eq(len, n, "%s: read %zu bytes of %zu", fbw_server_name(sid), len, n);
    uint8_t h1[32], h2[32];
    sha256(data, n, h1);
    sha256(back, len, h2);
    cr_assert_arr_eq(h1, h2, 32, "%s: SHA-256 of the %zu-byte blob differs", fbw_server_name(sid), n);

    /* the writer's segment rule, seen from the server: segments of FBW_BLOB_SEGMENT_MAX */
    const fbw_blob_info *in = fbw_blob_get_info(b);
    cr_assert_eq(in->total_length, (int64_t)n);
    int64_t segs = (int64_t)((n + FBW_BLOB_SEGMENT_MAX - 1) / FBW_BLOB_SEGMENT_MAX);
    cr_assert_eq(in->num_segments, segs, "%s: %lld segments, expected %lld", fbw_server_name(sid),
                 (long long)in->num_segments, (long long)segs);
    cr_assert_eq(fbw_blob_segments_read(b), (size_t)segs);
    if (n >= FBW_BLOB_SEGMENT_MAX)
        cr_assert_eq(in->max_segment, FBW_BLOB_SEGMENT_MAX);

    /* the close is queued, not waited for: it goes out with the commit, in its round trip (an
     * inlined blob was never opened on the server: nothing to close) */
    const fbw_stats *st = fbw_conn_stats(f.q.c);
    uint64_t r0 = st->round_trips, close0 = st->op[FBW_OP_CLOSE_BLOB].packets_sent;
    uint64_t ping0 = st->op[FBW_OP_PING].packets_sent;
    cr_assert_eq(fbw_blob_close(b), FBW_OK);
    cr_assert_eq(st->round_trips, r0);
    fbw_sqlt_commit_ok(&f.q, f.q.tx);
    cr_assert_eq(st->round_trips - r0, 1);
    cr_assert_eq(st->op[FBW_OP_CLOSE_BLOB].packets_sent - close0, inlined ? 0u : 1u);
    cr_assert_eq(st->op[FBW_OP_PING].packets_sent, ping0, "the close needed a ping of its own");
    cr_assert_eq(fbw_blob_error(b)->code, FBW_OK, "close: %s", fbw_blob_error(b)->msg);
    cr_assert(!fbw_blob_busy(b));
    fbw_blob_free(b);
    free(data);

    fbw_sqlt_tx_start_ok(&f.q, &f.q.tx, NULL);
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT OCTET_LENGTH(B) FROM %s WHERE ID = 1", f.table);
    cr_assert_eq(fbw_sqlt_int_ok(&f.q, f.q.tx, sql), (int64_t)n);
    teardown(&f);
}

Test(blob, empty_fb3, .timeout = 60) { roundtrip_binary(FBW_SRV_FB3, 0, 1); }
Test(blob, empty_fb4, .timeout = 60) { roundtrip_binary(FBW_SRV_FB4, 0, 1); }
Test(blob, one_byte_fb3, .timeout = 60) { roundtrip_binary(FBW_SRV_FB3, 1, 1); }
Test(blob, one_byte_fb4, .timeout = 60) { roundtrip_binary(FBW_SRV_FB4, 1, 1); }
Test(blob, largest_single_read_fb4, .timeout = 60) { roundtrip_binary(FBW_SRV_FB4, 65533, 1); }
Test(blob, one_mib_fb3, .timeout = 120) { roundtrip_binary(FBW_SRV_FB3, MIB, 2); }
Test(blob, one_mib_fb4, .timeout = 120) { roundtrip_binary(FBW_SRV_FB4, MIB, 2); }

/* ---- UTF-8 text ---- */

static void utf8_text(fbw_server_id sid)
{
    blob_fixture f;
    setup(&f, sid);
    /* G clef, grinning face, CJK extension B: 4 bytes each in UTF-8; plus 2- and 3-byte ones */
    const char piece[] = "\xF0\x9D\x84\x9E \xF0\x9F\x98\x80 \xF0\xA0\x80\x80 caf\xC3\xA9 \xE2\x82\xAC|";
    const size_t piece_chars = 13; /* 3 x 4-byte, 1 x 2-byte, 1 x 3-byte, 8 ASCII */
    const int reps = 5000;         /* ~120 KB: more than one read */
    size_t plen = strlen(piece), n = plen * reps;
    uint8_t *text = malloc(n);
    cr_assert_not_null(text);
    for (int i = 0; i < reps; i++)
        memcpy(text + i * plen, piece, plen);
    uint64_t wrt, rrt;
    fbw_value id = write_blob(&f, text, n, 777, &wrt); /* odd chunks split characters: bytes are bytes */
    cr_assert_eq(wrt, 1);
    insert_row(&f, 2, NULL, &id);
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT CHAR_LENGTH(T) FROM %s WHERE ID = 2", f.table);
    cr_assert_eq(fbw_sqlt_int_ok(&f.q, f.q.tx, sql), (int64_t)(piece_chars * reps),
                 "%s: the server counts other characters than written", fbw_server_name(sid));
    snprintf(sql, sizeof sql, "SELECT OCTET_LENGTH(T) FROM %s WHERE ID = 2", f.table);
    cr_assert_eq(fbw_sqlt_int_ok(&f.q, f.q.tx, sql), (int64_t)n);

    fbw_value got[2];
    select_ids(&f, 2, got);
    cr_assert(got[0].is_null && !got[1].is_null);
    fbw_blob *b = read_blob(&f, &got[1], &rrt);
    cr_assert_eq(rrt, 2, "%zu bytes of text: %llu round trips", n, (unsigned long long)rrt);
    size_t len;
    const uint8_t *back = fbw_blob_data(b, &len);
    cr_assert_eq(len, n);
    cr_assert_arr_eq(back, text, n);
    fbw_blob_free(b);
    free(text);
    teardown(&f);
}

Test(blob, utf8_text_fb3, .timeout = 60) { utf8_text(FBW_SRV_FB3); }
Test(blob, utf8_text_fb4, .timeout = 60) { utf8_text(FBW_SRV_FB4); }

/* ---- exact segments, read with a small buffer ---- */

static void exact_segments(fbw_server_id sid)
{
    blob_fixture f;
    setup(&f, sid);
    static const size_t sizes[] = {1, 300, 0, FBW_BLOB_PUT_MAX};
    size_t total = 0;
    for (size_t i = 0; i < 4; i++)
        total += sizes[i];
    uint8_t *data = malloc(total);
    cr_assert_not_null(data);
    fill(data, total, 99);
    fbw_blob *w;
    fbw_err err;
    cr_assert_eq(fbw_blob_new(f.q.c, &w, &err), FBW_OK);
    cr_assert_eq(fbw_blob_create(w, f.q.tx, NULL, 0), FBW_OK);
    size_t at = 0;
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(fbw_blob_put_segment(w, data + at, sizes[i]), FBW_OK, "%s", fbw_blob_error(w)->msg);
        at += sizes[i];
    }
    cr_assert_eq(fbw_blob_put_segment(w, data, FBW_BLOB_PUT_MAX + 1), FBW_E_USAGE);
    cr_assert_eq(fbw_blob_close(w), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_blob_error(w)->code, FBW_E_USAGE); /* the refused segment, nothing else */
    fbw_value id;
    cr_assert_eq(fbw_blob_id(w, &id), FBW_OK);
    fbw_blob_free(w);

    /* read it back 100 bytes at a time: the 65535-byte segment arrives in incomplete pieces */
    fbw_blob *r;
    cr_assert_eq(fbw_blob_new(f.q.c, &r, &err), FBW_OK);
    cr_assert_eq(fbw_blob_open(r, f.q.tx, &id, NULL, 0), FBW_OK);
    cr_assert_eq(fbw_blob_query_info(r), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_blob_get_info(r)->num_segments, 4);
    cr_assert_eq(fbw_blob_get_info(r)->max_segment, FBW_BLOB_PUT_MAX);
    cr_assert_eq(fbw_blob_get_info(r)->total_length, (int64_t)total);
    cr_assert_eq(fbw_blob_get_info(r)->type, 0);
    int reads = 0;
    while (!fbw_blob_eof(r)) {
        cr_assert_eq(fbw_blob_read(r, 100), FBW_OK, "%s", fbw_blob_error(r)->msg);
        fbw_sqlt_wait_ok(&f.q);
        cr_assert_eq(fbw_blob_error(r)->code, FBW_OK, "%s", fbw_blob_error(r)->msg);
        cr_assert_lt(++reads, 1000);
    }
    size_t len;
    const uint8_t *back = fbw_blob_data(r, &len);
    cr_assert_eq(len, total);
    cr_assert_arr_eq(back, data, total);
    cr_assert_gt(reads, 600, "65535 bytes in 100-byte reads: %d reads", reads);
    cr_assert_eq(fbw_blob_read(r, 2), FBW_E_USAGE);
    fbw_blob_free(r); /* queues the close */
    free(data);
    teardown(&f);
}

Test(blob, exact_segments_fb3, .timeout = 60) { exact_segments(FBW_SRV_FB3); }
Test(blob, exact_segments_fb4, .timeout = 60) { exact_segments(FBW_SRV_FB4); }

/* ---- stream blob: seek ----
 * The blob is stored (inserted) before it is opened: seeking in a temporary stream blob that was
 * only created and closed reads zero bytes on FB 3.0.11 and 4.0.5 (observed here), while the same
 * seek on the stored copy reads the right bytes. */

static void stream_seek(fbw_server_id sid)
{
    blob_fixture f;
    setup(&f, sid);
    static const uint8_t bpb[] = {1 /* isc_bpb_version1 */, 3 /* isc_bpb_type */, 1, 1 /* stream */};
    const char *text = "0123456789abcdefghijklmnopqrstuvwxyz";
    fbw_blob *w;
    fbw_err err;
    cr_assert_eq(fbw_blob_new(f.q.c, &w, &err), FBW_OK);
    cr_assert_eq(fbw_blob_create(w, f.q.tx, bpb, sizeof bpb), FBW_OK);
    cr_assert_eq(fbw_blob_write(w, text, strlen(text)), FBW_OK);
    cr_assert_eq(fbw_blob_close(w), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_blob_error(w)->code, FBW_OK, "%s", fbw_blob_error(w)->msg);
    fbw_value tmp_id, got[2];
    cr_assert_eq(fbw_blob_id(w, &tmp_id), FBW_OK);
    fbw_blob_free(w);
    insert_row(&f, 3, &tmp_id, NULL);
    select_ids(&f, 3, got);
    fbw_value id = got[0];

    fbw_blob *r;
    cr_assert_eq(fbw_blob_new(f.q.c, &r, &err), FBW_OK);
    cr_assert_eq(fbw_blob_open(r, f.q.tx, &id, NULL, 0), FBW_OK);
    cr_assert_eq(fbw_blob_seek(r, FBW_SEEK_SET, 10), FBW_OK);
    cr_assert_eq(fbw_blob_read(r, 5 + 2), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_blob_error(r)->code, FBW_OK, "%s: %s", fbw_server_name(sid), fbw_blob_error(r)->msg);
    cr_assert_eq(fbw_blob_position(r), 10);
    size_t len;
    const uint8_t *p = fbw_blob_data(r, &len);
    cr_assert_eq(len, 5);
    cr_assert_arr_eq(p, "abcde", 5, "%s: read %02x%02x%02x%02x%02x after seeking to 10", fbw_server_name(sid), p[0],p[1],p[2],p[3],p[4]);
    cr_assert_eq(fbw_blob_seek(r, FBW_SEEK_END, -3), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_blob_position(r), 33);
    cr_assert_eq(fbw_blob_seek(r, 7, 0), FBW_E_USAGE);
    fbw_blob_free(r);
    teardown(&f);
}

Test(blob, stream_seek_fb3, .timeout = 60) { stream_seek(FBW_SRV_FB3); }
Test(blob, stream_seek_fb4, .timeout = 60) { stream_seek(FBW_SRV_FB4); }

/* ---- errors ---- */

static void bad_id(fbw_server_id sid)
{
    blob_fixture f;
    setup(&f, sid);
    fbw_value id = {.type = FBW_SQL_BLOB};
    id.u.quad.high = 0x7ABC;
    id.u.quad.low = 0x12345;
    fbw_blob *b;
    fbw_err err;
    cr_assert_eq(fbw_blob_new(f.q.c, &b, &err), FBW_OK);
    cr_assert_eq(fbw_blob_read_all(b, f.q.tx, &id, NULL, 0), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_blob_error(b)->code, FBW_E_SERVER, "%s", fbw_blob_error(b)->msg);
    cr_assert(fbw_blob_eof(b));
    size_t len;
    fbw_blob_data(b, &len);
    cr_assert_eq(len, 0, "data of another object was taken for the failed blob");
    cr_assert_eq(fbw_blob_close(b), FBW_E_SERVER); /* nothing open to close */
    fbw_value null_id = {.type = FBW_SQL_BLOB, .is_null = 1};
    cr_assert_eq(fbw_blob_open(b, f.q.tx, &null_id, NULL, 0), FBW_E_USAGE);
    fbw_blob_free(b);
    cr_assert_eq(fbw_sqlt_int_ok(&f.q, f.q.tx, "SELECT 42 FROM RDB$DATABASE"), 42);
    teardown(&f);
}

Test(blob, bad_id_fb3, .timeout = 60) { bad_id(FBW_SRV_FB3); }
Test(blob, bad_id_fb4, .timeout = 60) { bad_id(FBW_SRV_FB4); }

/* A blob create that fails leaves 0xFFFF naming the previous allocation. If another blob is open
 * for writing, pipelined writes of the failed blob would land in it: fbwire must wait for the
 * create's reply instead, so the other blob keeps exactly what was written to it. */
typedef struct failing_create {
    fbw_blob *b;
    fbw_tx *bad_tx;
    int created;
    int write_rc;
} failing_create;

static int queue_failing_create(void *arg)
{
    failing_create *k = arg;
    if (!k->created) {
        int rc = fbw_blob_create(k->b, k->bad_tx, NULL, 0);
        if (rc)
            return rc;
        k->created = 1;
    }
    int rc = fbw_blob_write(k->b, "BBBBBBBB", 8);
    if (rc == FBW_OK)
        rc = fbw_blob_flush(k->b);
    if (rc == FBW_WAIT)
        return rc;
    k->write_rc = rc;
    return FBW_OK;
}

static void failed_create_cannot_hit_other_blob(fbw_server_id sid)
{
    blob_fixture f;
    setup(&f, sid);
    fbw_err err;
    fbw_blob *a, *b;
    cr_assert_eq(fbw_blob_new(f.q.c, &a, &err), FBW_OK);
    cr_assert_eq(fbw_blob_create(a, f.q.tx, NULL, 0), FBW_OK);
    cr_assert_eq(fbw_blob_write(a, "AAAA", 4), FBW_OK);
    cr_assert_eq(fbw_blob_flush(a), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    cr_assert_eq(fbw_blob_error(a)->code, FBW_OK, "%s", fbw_blob_error(a)->msg);

    /* A transaction handle the server never issued: the create is refused. */
    fbw_tx *bad;
    cr_assert_eq(fbw_tx_new(f.q.c, &bad, NULL), FBW_OK);
    fbw_tx_note_exec_reply(bad, 0, 9999); /* as if a statement had started it with that handle */
    cr_assert_eq(fbw_blob_new(f.q.c, &b, &err), FBW_OK);
    failing_create k = {b, bad, 0, FBW_OK};
    cr_assert_eq(fbw_client_run(f.q.cl, queue_failing_create, &k), FBW_OK, "%s",
                 fbw_client_error(f.q.cl)->msg);
    cr_assert_neq(k.write_rc, FBW_OK, "%s: writing to the failed blob went through",
                  fbw_server_name(sid));
    cr_assert_neq(fbw_blob_error(b)->code, FBW_OK);

    cr_assert_eq(fbw_blob_close(a), FBW_OK);
    fbw_sqlt_wait_ok(&f.q);
    fbw_value id;
    cr_assert_eq(fbw_blob_id(a, &id), FBW_OK);
    uint64_t rt;
    fbw_blob *r = read_blob(&f, &id, &rt);
    size_t n;
    const uint8_t *data = fbw_blob_data(r, &n);
    cr_assert_eq(n, 4, "%s: blob A holds %zu bytes, the failed blob's segments went into it",
                 fbw_server_name(sid), n);
    cr_assert_eq(memcmp(data, "AAAA", 4), 0);
    fbw_blob_free(r);
    fbw_blob_free(b);
    fbw_blob_free(a);
    fbw_tx_free(bad);
    teardown(&f);
}

Test(blob, failed_create_cannot_hit_other_blob_fb3, .timeout = 60)
{
    failed_create_cannot_hit_other_blob(FBW_SRV_FB3);
}
Test(blob, failed_create_cannot_hit_other_blob_fb4, .timeout = 60)
{
    failed_create_cannot_hit_other_blob(FBW_SRV_FB4);
}
