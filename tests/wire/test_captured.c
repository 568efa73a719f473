/* SPDX-License-Identifier: MIT */
/* test_captured.c - inline blobs and blob batches against real Firebird 5 replies, no socket: the
 * server turns of pcap/fb5_blob_inline.pcap and pcap/fb5_blob_batch.pcap (pcap/session.c --blobs
 * recorded by pcap/record.sh: a SELECT of six rows, five text blobs and a NULL) are fed to the
 * library as it makes the same calls the recorded client made. Each wait checks that the library
 * queued the ops the recorded client sent in that turn (and the same inline blob size in its
 * op_execute), then hands it the server's captured answer (tests/support/captured.h).
 *
 * Checked: inline blobs served with no round trip, their content and the blob info the server sent
 * with them; a batch reading every blob in one write; both fed whole, one byte at a time and in
 * 7-byte pieces; the real inline reply cut at every offset of its first blob (and every 7th byte
 * after), then the connection lost, never serves a blob with other than its real bytes; a
 * corrupted op_inline_blob (unknown op, impossible length, segment past its end) is a protocol
 * error naming what is wrong, with no crash. The connection itself is brought to READY by the
 * scripted server (tests/support/script.h): the captured connect and attach carry SRP exchanges a
 * replay cannot answer. */
#include <criterion/criterion.h>

#include "blob.h"
#include "blobset.h"
#include "captured.h"
#include "pkt.h"
#include "script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FB5_PORT 3060
#define BLOB_ROWS 5 /* rows 1..5 have a blob, row 6 NULL */
static const char select_sql[] = "SELECT ID, B FROM FBW_PCAP_BLOB ORDER BY ID";

typedef struct replay {
    fbw_script s; /* the connection, at READY */
    fbw_captured cap;
    size_t at;      /* the next captured client turn */
    unsigned waits; /* turns answered: round trips */
    size_t chunk;   /* server turns fed in pieces of this many bytes (0: whole) */
    fbw_tx *tx;
    fbw_tx_opts to;
    fbw_stmt *st;
    fbw_blobset *bs;
} replay;

/* The bytes pcap/session.c --blobs put in row k's blob: "blob k: " and k * 300 bytes of
 * "abcdefghij" repeated (the server made them: RPAD). */
static void expected_blob(unsigned k, fbw_buf *out)
{
    char head[16];
    int n = snprintf(head, sizeof head, "blob %u: ", k);
    fbw_buf_reset(out);
    fbw_buf_append(out, head, (size_t)n);
    for (unsigned i = 0; i < k * 300; i++)
        fbw_buf_append(out, &"abcdefghij"[i % 10], 1);
}

/* ---- client ops of a turn ---- */

static const fbw_msgfmt *no_format(void *arg, enum fbw_fmt_kind kind, const fbw_pkt *p,
                                   fbw_err *err)
{
    (void)arg;
    (void)p;
    fbw_err_set(err, FBW_E_UNSUPPORTED, "no message format for kind %d", (int)kind);
    return NULL;
}

/* The ops of client bytes, with the inline blob size of each op_execute after its op. */
static size_t client_ops(const uint8_t *p, size_t n, uint32_t *out, size_t max)
{
    fbw_pkt_ctx ctx = {19, no_format, NULL};
    size_t k = 0;
    while (n > 0) {
        fbw_pkt pk;
        size_t used = 0;
        fbw_err err;
        fbw_err_clear(&err);
        int rc = fbw_pkt_decode(&ctx, p, n, &pk, &used, &err);
        cr_assert_eq(rc, FBW_OK, "client bytes: %s", err.msg);
        cr_assert_lt(k + 1, max);
        out[k++] = (uint32_t)pk.op;
        if (pk.op == FBW_OP_EXECUTE || pk.op == FBW_OP_EXECUTE2)
            out[k++] = pk.u.sqldata.inline_blob_size;
        p += used;
        n -= used;
    }
    return k;
}

/* ---- the replay ---- */

static void replay_open(replay *r, const char *name, int32_t inline_size, size_t chunk)
{
    memset(r, 0, sizeof *r);
    char path[1024], msg[256];
    snprintf(path, sizeof path, "%s/pcap/%s.pcap", FBWIRE_SOURCE_DIR, name);
    cr_assert_eq(fbw_captured_load(path, FB5_PORT, &r->cap, msg, sizeof msg), 0, "%s", msg);
    fbw_script_open_at(&r->s, 19, inline_size);
    r->chunk = chunk;
    for (size_t i = 0; i + 1 < r->cap.n && !r->at; i++) {
        uint32_t ops[64];
        const fbw_cap_turn *t = &r->cap.turns[i];
        if (t->from_client && client_ops(t->bytes.data, t->bytes.len, ops, 64) > 0 &&
            ops[0] == FBW_OP_ATTACH)
            r->at = i + 2; /* the first turn after the attach's reply */
    }
    cr_assert(r->at, "%s: no op_attach turn", name);
    fbw_err err;
    cr_assert_eq(fbw_tx_new(r->s.c, &r->tx, &err), FBW_OK);
    fbw_tx_opts_init(&r->to);
    cr_assert_eq(fbw_stmt_new(r->s.c, &r->st, &err), FBW_OK);
    cr_assert_eq(fbw_blobset_new(r->s.c, 0, &r->bs, &err), FBW_OK);
}

static void replay_close(replay *r)
{
    fbw_blobset_free(r->bs);
    fbw_stmt_free(r->st);
    fbw_tx_free(r->tx);
    /* not fbw_script_close: that answers what is queued, the script answers nothing here */
    fbw_conn_free(r->s.c);
    fbw_buf_free(&r->s.sent);
    free(r->s.txs);
    free(r->s.blob_of);
    free(r->s.blob_at);
    fbw_captured_free(&r->cap);
}

/* Give the client the server bytes; returns the first refusal (FBW_OK: all taken). */
static int feed(replay *r, const uint8_t *p, size_t n)
{
    size_t step = r->chunk ? r->chunk : n;
    for (size_t at = 0; at < n; at += step) {
        int rc = fbw_conn_recv(r->s.c, p + at, n - at < step ? n - at : step);
        if (rc != FBW_OK)
            return rc;
    }
    return FBW_OK;
}

/* Send what the client queued: it must be the captured client turn's ops. Returns its server turn.
 */
static const fbw_buf *send_turn(replay *r)
{
    cr_assert(fbw_conn_before_wait(r->s.c), "nothing to wait for");
    fbw_buf sent;
    fbw_buf_init(&sent);
    const uint8_t *p;
    size_t n;
    while (fbw_conn_pending(r->s.c, &p, &n) == FBW_OK && n > 0) {
        fbw_buf_append(&sent, p, n);
        fbw_conn_sent(r->s.c, n);
    }
    cr_assert_lt(r->at + 1, r->cap.n, "the capture has no turn %zu", r->at);
    const fbw_cap_turn *c = &r->cap.turns[r->at], *s = &r->cap.turns[r->at + 1];
    cr_assert(c->from_client && !s->from_client);
    uint32_t want[256], got[256];
    size_t nw = client_ops(c->bytes.data, c->bytes.len, want, 256);
    size_t ng = client_ops(sent.data, sent.len, got, 256);
    cr_assert_eq(ng, nw, "turn %zu: %zu ops and sizes queued, the recorded client sent %zu", r->at,
                 ng, nw);
    for (size_t i = 0; i < nw; i++)
        cr_assert_eq(got[i], want[i], "turn %zu item %zu: %u, recorded %u", r->at, i, got[i],
                     want[i]);
    fbw_buf_free(&sent);
    r->at += 2;
    r->waits++;
    return &s->bytes;
}

/* One round trip: send, feed the captured answer, every reply must have come. */
static void turn(replay *r)
{
    const fbw_buf *answer = send_turn(r);
    cr_assert_eq(feed(r, answer->data, answer->len), FBW_OK, "the real reply was refused: %s",
                 fbw_conn_error(r->s.c)->msg);
    cr_assert_eq(fbw_conn_outstanding(r->s.c), 0, "replies still expected after the captured turn");
}

/* fbw_client_complete's loop (client.c) with a captured turn as the wait. */
static void run(replay *r, int (*queue)(void *), void *arg)
{
    for (int k = 0; k < 16; k++) {
        int rc = queue(arg);
        cr_assert(rc == FBW_OK || rc == FBW_WAIT, "queue: %s", fbw_rc_name(rc));
        if (fbw_conn_outstanding(r->s.c) || rc == FBW_WAIT)
            turn(r);
        if (rc == FBW_OK)
            return;
    }
    cr_assert_fail("the request never queued");
}

static int q_start(void *a)
{
    replay *r = a;
    return fbw_tx_start(r->tx, &r->to);
}
static int q_prepare(void *a)
{
    replay *r = a;
    return fbw_stmt_prepare(r->st, r->tx, select_sql, strlen(select_sql));
}
static int q_execute(void *a)
{
    replay *r = a;
    return fbw_stmt_execute(r->st, r->tx, NULL, 0);
}
static int q_commit(void *a)
{
    replay *r = a;
    return fbw_tx_commit(r->tx);
}

/* Start, prepare, execute (with its first fetch), as the recorded client did. */
static void open_cursor(replay *r)
{
    run(r, q_start, r);
    run(r, q_prepare, r);
    cr_assert_eq(fbw_stmt_error(r->st)->code, FBW_OK, "%s", fbw_stmt_error(r->st)->msg);
    run(r, q_execute, r);
    cr_assert_eq(fbw_stmt_error(r->st)->code, FBW_OK, "%s", fbw_stmt_error(r->st)->msg);
}

/* Every blob cell of the buffered rows has its real bytes (row 6: NULL). */
static void check_cells(const replay *r)
{
    fbw_buf want;
    fbw_buf_init(&want);
    for (unsigned k = 1; k <= BLOB_ROWS + 1; k++) {
        size_t n = 0;
        const uint8_t *p = fbw_blobset_cell(r->bs, k - 1, 1, &n);
        if (k > BLOB_ROWS) {
            cr_assert_null(p, "row %u: a NULL blob served", k);
            continue;
        }
        expected_blob(k, &want);
        cr_assert_not_null(p, "row %u: %s", k, fbw_blobset_error(r->bs)->msg);
        cr_assert_eq(n, want.len, "row %u: %zu bytes, want %zu", k, n, want.len);
        cr_assert_eq(memcmp(p, want.data, n), 0, "row %u: other bytes than the server's", k);
    }
    fbw_buf_free(&want);
}

/* The recorded session after the cursor opened: the fetched rows' blobs read together, then the
 * statement freed and the transaction committed. Returns the round trips the blobs took. */
static unsigned read_blobs_and_commit(replay *r)
{
    size_t added = 0;
    fbw_err err;
    cr_assert_eq(fbw_stmt_row_count(r->st), BLOB_ROWS + 1, "the six rows came with the execute");
    cr_assert(fbw_stmt_eof(r->st));
    cr_assert_eq(fbw_blobset_add_rows(r->bs, r->st, r->tx, 0, &added, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(added, BLOB_ROWS);
    cr_assert_eq(fbw_blobset_count(r->bs), BLOB_ROWS, "one entry per non-NULL blob, the NULL row none");
    unsigned before = r->waits;
    for (int k = 0; k < 16 && fbw_blobset_pending(r->bs); k++)
        run(r, fbw_blobset_queue, r->bs);
    cr_assert_not(fbw_blobset_pending(r->bs));
    cr_assert_eq(fbw_blobset_error(r->bs)->code, FBW_OK, "%s", fbw_blobset_error(r->bs)->msg);
    unsigned trips = r->waits - before;
    check_cells(r);
    fbw_blobset_reset(r->bs); /* its closes ride along with the commit */
    fbw_stmt_free(r->st);     /* op_free_statement too */
    r->st = NULL;
    run(r, q_commit, r);
    cr_assert_eq(fbw_tx_error(r->tx)->code, FBW_OK, "%s", fbw_tx_error(r->tx)->msg);
    return trips;
}

/* ---- inline blobs (pcap/fb5_blob_inline.pcap) ---- */

static void inline_session(size_t chunk)
{
    replay r;
    replay_open(&r, "fb5_blob_inline", FBW_INLINE_BLOB_SIZE_DEFAULT, chunk);
    open_cursor(&r); /* its op_execute asked for 65535 bytes, as the recorded one (send_turn) */
    cr_assert_eq(r.waits, 3);
    cr_assert_eq(read_blobs_and_commit(&r), 0, "inline blobs need no round trip");
    cr_assert_eq(fbw_blobset_inline_count(r.bs), 0, "reset");
    cr_assert_eq(r.waits, 4, "start, prepare, execute, commit");
    replay_close(&r);
}

Test(captured, fb5_inline_blobs_need_no_round_trip)
{
    inline_session(0);
}
Test(captured, fb5_inline_blobs_fed_one_byte_at_a_time)
{
    inline_session(1);
}
Test(captured, fb5_inline_blobs_fed_in_7_byte_pieces)
{
    inline_session(7);
}

/* All five came inline: the queue takes them and writes nothing (counted before the reset). */
Test(captured, fb5_inline_count)
{
    replay r;
    replay_open(&r, "fb5_blob_inline", FBW_INLINE_BLOB_SIZE_DEFAULT, 0);
    open_cursor(&r);
    size_t added = 0;
    fbw_err err;
    cr_assert_eq(fbw_blobset_add_rows(r.bs, r.st, r.tx, 0, &added, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(added, BLOB_ROWS);
    cr_assert_eq(fbw_blobset_queue(r.bs), FBW_OK);
    cr_assert_eq(fbw_blobset_inline_count(r.bs), BLOB_ROWS);
    cr_assert_not(fbw_blobset_pending(r.bs));
    const uint8_t *p;
    size_t n;
    cr_assert_eq(fbw_conn_pending(r.s.c, &p, &n), FBW_OK);
    cr_assert_eq(n, 0, "the queue wrote a request");
    cr_assert_eq(fbw_conn_outstanding(r.s.c), 0);
    check_cells(&r);
    replay_close(&r);
}

/* One blob read with fbw_blob_read_all: served at once from the inline blob, its info (segment
 * count, longest segment, total length) as the server sent it in op_inline_blob. */
Test(captured, fb5_inline_blob_read_all_and_info)
{
    replay r;
    replay_open(&r, "fb5_blob_inline", FBW_INLINE_BLOB_SIZE_DEFAULT, 0);
    open_cursor(&r);
    fbw_value row[2];
    fbw_err err;
    cr_assert_eq(fbw_stmt_row(r.st, 2, row, &err), FBW_OK, "%s", err.msg);
    fbw_blob *b;
    cr_assert_eq(fbw_blob_new(r.s.c, &b, &err), FBW_OK);
    cr_assert_eq(fbw_blob_read_all(b, r.tx, &row[1], NULL, 0), FBW_OK);
    cr_assert(fbw_blob_eof(b) && fbw_blob_was_inline(b));
    cr_assert_eq(fbw_conn_outstanding(r.s.c), 0, "nothing was asked of the server");
    fbw_buf want;
    fbw_buf_init(&want);
    expected_blob(3, &want);
    size_t n;
    const uint8_t *p = fbw_blob_data(b, &n);
    cr_assert_eq(n, want.len);
    cr_assert_eq(memcmp(p, want.data, n), 0);
    const fbw_blob_info *in = fbw_blob_get_info(b);
    cr_assert_eq(in->total_length, (int64_t)want.len);
    cr_assert_eq((size_t)in->num_segments, fbw_blob_segments_read(b));
    cr_assert_geq(in->max_segment, 1);
    cr_assert_leq((size_t)in->max_segment, want.len);
    fbw_buf_free(&want);
    fbw_blob_free(b);
    replay_close(&r);
}

/* ---- a blob batch (pcap/fb5_blob_batch.pcap: the executes asked for no inline blobs) ---- */

static void batch_session(size_t chunk)
{
    replay r;
    replay_open(&r, "fb5_blob_batch", 0, chunk);
    open_cursor(&r); /* its op_execute asked for 0 bytes, as the recorded one */
    cr_assert_eq(read_blobs_and_commit(&r), 1, "the batch took one write and one round trip");
    cr_assert_eq(r.waits, 5, "start, prepare, execute, blobs, commit");
    replay_close(&r);
}

Test(captured, fb5_blob_batch_one_write)
{
    batch_session(0);
}
Test(captured, fb5_blob_batch_fed_one_byte_at_a_time)
{
    batch_session(1);
}

/* send_turn compares the inline size of every op_execute with the recording's: the library's
 * default against the capture that asked for none differs there (so the comparison can fail). */
Test(captured, default_inline_size_differs_from_the_batch_recording)
{
    replay r;
    replay_open(&r, "fb5_blob_batch", FBW_INLINE_BLOB_SIZE_DEFAULT, 0);
    run(&r, q_start, &r);
    run(&r, q_prepare, &r);
    cr_assert_eq(q_execute(&r), FBW_OK);
    uint32_t ops[64];
    const uint8_t *p;
    size_t n;
    cr_assert_eq(fbw_conn_pending(r.s.c, &p, &n), FBW_OK);
    size_t k = client_ops(p, n, ops, 64);
    cr_assert_geq(k, 2);
    cr_assert_eq(ops[0], FBW_OP_EXECUTE);
    cr_assert_eq(ops[1], 65535u);
    const fbw_buf *rec = &r.cap.turns[r.at].bytes;
    k = client_ops(rec->data, rec->len, ops, 64);
    cr_assert_eq(ops[1], 0u, "the recorded client asked for none");
    replay_close(&r);
}

/* ---- the real inline reply cut or corrupted ---- */

/* The execute's captured answer (op_response, op_inline_blob, op_fetch_response ...) and the offset
 * of its first op_inline_blob, found by decoding it up to there. */
static const fbw_buf *inline_answer(replay *r, size_t *first)
{
    run(r, q_start, r);
    run(r, q_prepare, r);
    cr_assert_eq(q_execute(r), FBW_OK);
    const fbw_buf *ans = send_turn(r);
    fbw_pkt_ctx ctx = {19, no_format, NULL};
    size_t at = 0;
    for (int i = 0; i < 4 && at < ans->len; i++) {
        fbw_pkt pk;
        size_t used = 0;
        fbw_err err;
        cr_assert_eq(fbw_pkt_decode(&ctx, ans->data + at, ans->len - at, &pk, &used, &err), FBW_OK,
                     "%s", err.msg);
        if (pk.op == FBW_OP_INLINE_BLOB) {
            *first = at;
            return ans;
        }
        at += used;
    }
    cr_assert_fail("no op_inline_blob in the execute's answer");
    return NULL;
}

/* Feed the answer cut after `cut` bytes, then lose the connection: every blob the set serves must
 * be the real one; the others fail with the connection's error, nothing is made up. */
static void cut_and_lose(size_t cut, size_t *served)
{
    replay r;
    replay_open(&r, "fb5_blob_inline", FBW_INLINE_BLOB_SIZE_DEFAULT, 0);
    size_t first;
    const fbw_buf *ans = inline_answer(&r, &first);
    cr_assert_eq(feed(&r, ans->data, cut), FBW_OK, "cut at %zu: %s", cut,
                 fbw_conn_error(r.s.c)->msg);
    cr_assert_gt(fbw_conn_outstanding(r.s.c), 0, "cut at %zu: every reply complete", cut);
    fbw_err why;
    fbw_err_set(&why, FBW_E_EOF, "the server closed the connection");
    fbw_conn_fail(r.s.c, &why);
    cr_assert_eq(fbw_conn_get_state(r.s.c), FBW_CS_FAILED);
    size_t added = 0, rows = fbw_stmt_row_count(r.st), taken = 0;
    fbw_err err;
    /* a row that arrived came after its inline blob: the set serves it with no request; a queue
     * that had to ask the lost connection fails */
    int rc = fbw_blobset_add_rows(r.bs, r.st, r.tx, 0, &added, &err);
    if (rc == FBW_OK && added)
        rc = fbw_blobset_queue(r.bs);
    cr_assert(rc != FBW_OK || !fbw_blobset_pending(r.bs), "cut at %zu: blobs left unread", cut);
    fbw_buf want;
    fbw_buf_init(&want);
    for (size_t i = 0; i < rows && i < BLOB_ROWS; i++) {
        size_t n;
        const uint8_t *p = fbw_blobset_cell(r.bs, i, 1, &n);
        if (!p)
            continue;
        expected_blob((unsigned)i + 1, &want);
        cr_assert(n == want.len && memcmp(p, want.data, n) == 0,
                  "cut at %zu: row %zu served "
                  "other bytes than the server's",
                  cut, i + 1);
        (*served)++;
        taken++;
    }
    cr_assert(rc != FBW_OK || taken == added, "cut at %zu: %zu of %zu blobs served", cut, taken,
              added);
    fbw_buf_free(&want);
    replay_close(&r);
}

Test(captured, fb5_inline_reply_cut_anywhere_serves_only_real_bytes)
{
    replay r;
    replay_open(&r, "fb5_blob_inline", FBW_INLINE_BLOB_SIZE_DEFAULT, 0);
    size_t first;
    size_t len = inline_answer(&r, &first)->len;
    replay_close(&r);
    size_t served = 0, runs = 0;
    for (size_t cut = first; cut < len; cut += cut < first + 700 ? 1 : 7, runs++)
        cut_and_lose(cut, &served);
    cr_assert_gt(served, 0, "no cut served a blob that had fully arrived");
    cr_assert_lt(served, runs * BLOB_ROWS, "every cut served every blob");
}

/* Corrupt the first op_inline_blob of the real answer at `off` (from its start) with `n` bytes. */
static void corrupt(size_t off, const void *with, size_t n, const char *expect)
{
    replay r;
    replay_open(&r, "fb5_blob_inline", FBW_INLINE_BLOB_SIZE_DEFAULT, 0);
    size_t first;
    const fbw_buf *ans = inline_answer(&r, &first);
    fbw_buf bad;
    fbw_buf_init(&bad);
    fbw_buf_append(&bad, ans->data, ans->len);
    cr_assert_leq(first + off + n, bad.len);
    memcpy(bad.data + first + off, with, n);
    int rc = feed(&r, bad.data, bad.len);
    cr_assert_neq(rc, FBW_OK, "the corrupted reply was taken");
    cr_assert_eq(fbw_conn_get_state(r.s.c), FBW_CS_FAILED);
    const char *msg = fbw_conn_error(r.s.c)->msg;
    cr_assert(strstr(msg, expect), "error \"%s\" does not say \"%s\"", msg, expect);
    fbw_buf_free(&bad);
    replay_close(&r);
}

/* op_inline_blob: op, tr, id (2 words), info (length, bytes, pad), data (length, bytes, pad); its
 * info here is the server's blob info, 4 + its length rounded up to a word. */
static size_t data_at(void)
{
    replay r;
    replay_open(&r, "fb5_blob_inline", FBW_INLINE_BLOB_SIZE_DEFAULT, 0);
    size_t first;
    const fbw_buf *ans = inline_answer(&r, &first);
    const uint8_t *ib = ans->data + first;
    size_t info = (size_t)ib[16] << 24 | (size_t)ib[17] << 16 | (size_t)ib[18] << 8 | ib[19];
    replay_close(&r);
    return 20 + (info + 3) / 4 * 4;
}

Test(captured, fb5_inline_blob_unknown_op_is_an_error)
{
    corrupt(0, "\x00\x00\x00\xf0", 4, "unknown op code op_240");
}

Test(captured, fb5_inline_blob_impossible_length_is_an_error)
{
    corrupt(data_at(), "\x7f\xff\xff\xf0", 4, "op_inline_blob: counted string longer than allowed");
}

Test(captured, fb5_inline_blob_segment_past_its_end_is_an_error)
{
    corrupt(data_at() + 4, "\xff\xff", 2, "op_inline_blob: bad segment list");
}
