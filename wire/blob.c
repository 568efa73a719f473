/* SPDX-License-Identifier: MIT */
/* blob.c - blobs (docs/protocol/statements.md §5; server: server.cpp get_segment, put_segment,
 * end_blob). */
#include "blob.h"
#include "request.h"

#include "inline.h"
#include "pending.h"
#include "status.h"

#include <stdlib.h>
#include <string.h>

#define NO_SEGMENT ((size_t)-1)
#define INFO_BUFFER 128      /* what fbclient asks for with its open prefetch */
#define READ_WINDOW_MAX 64   /* op_get_segment requests in flight during read-all (~4 MiB) */
#define READ_WINDOW_BLIND 8  /* the same when the info reply gave no size */
#define MIN_READ 3           /* the server gives nothing unless more than 2 bytes fit */

/* isc_info_* items of blob info (inf_pub.h) */
enum { INFO_END = 1, INFO_TRUNCATED = 2, INFO_ERROR = 3, INFO_NUM_SEGMENTS = 4, INFO_MAX_SEGMENT = 5,
       INFO_TOTAL_LENGTH = 6, INFO_TYPE = 7 };

enum { ALLOC_NONE, ALLOC_PENDING, ALLOC_DONE };
enum { MODE_NONE, MODE_WRITE, MODE_READ };

struct fbw_blob {
    fbw_conn *conn;
    int mode;               /* MODE_* of the current server object */
    int alloc;              /* ALLOC_* */
    uint64_t alloc_token;
    uint16_t handle;
    int have_id;
    uint32_t id_hi, id_lo;
    int server_open;        /* an object exists (or is being made) and no close/cancel is queued */
    fbw_pending pend;       /* replies outstanding; freed by the user before they came */

    fbw_buf out;            /* segments waiting for op_batch_segments */
    size_t seg_at;          /* offset of the joinable segment's length prefix, or NO_SEGMENT */
    size_t packet;
    uint64_t written;

    fbw_buf data;           /* bytes read */
    size_t limit;
    size_t *shared_left;    /* budget shared with other blobs (fbw_blob_share_limit), or NULL */
    size_t shared_limit;
    size_t nsegs;
    uint64_t bytes_read;    /* data bytes received since the open (data may be cleared) */
    int eof;
    int read_all, reads_started;
    int filtered;           /* opened with a BPB: lengths may differ from the stored ones */
    int was_inline;         /* read-all found it in the connection's inline cache */
    int inflight;           /* op_get_segment requests outstanding */
    uint32_t read_len;      /* largest buffer length among them */
    fbw_blob_info info;
    int32_t position;
    fbw_err err;
};

static void info_reset(fbw_blob_info *i)
{
    i->num_segments = i->max_segment = i->total_length = -1;
    i->type = -1;
}

int fbw_blob_new(fbw_conn *c, fbw_blob **out, fbw_err *err)
{
    fbw_blob *b = calloc(1, sizeof *b);
    if (!b)
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    b->conn = c;
    b->seg_at = NO_SEGMENT;
    b->packet = FBW_BLOB_PACKET_DEFAULT;
    b->limit = FBW_BLOB_LIMIT_DEFAULT;
    info_reset(&b->info);
    fbw_err_clear(&b->err);
    *out = b;
    return FBW_OK;
}

static void destroy(void *arg)
{
    fbw_blob *b = arg;
    fbw_buf_free(&b->out);
    fbw_buf_free(&b->data);
    free(b);
}

/* Every reply handler ends here: it accounts the reply and frees a blob its user dropped. */
static int settle(fbw_blob *b, int rc) { return fbw_pending_settle(&b->pend, rc, destroy, b); }

static int request(fbw_blob *b, const fbw_pkt *p, fbw_reply_fn fn)
{
    return fbw_pending_track(&b->pend, fbw_conn_request(b->conn, p, fn, b));
}

/* Keep the first error: later ones are usually its consequences (a failed create makes every write
 * to it fail with a bad handle). */
static void keep_error(fbw_blob *b, const fbw_err *e)
{
    if (b->err.code == FBW_OK && e->code != FBW_OK)
        b->err = *e;
}

static int keep_status(fbw_blob *b, const fbw_pkt *r, const char *what)
{
    fbw_err e;
    int rc = fbw_status_decode(r->u.resp.status, &e, NULL);
    if (rc != FBW_OK) {
        fbw_err_prefix(&e, "%s", what);
        keep_error(b, &e);
    }
    return rc;
}

static int expect_response(const fbw_pkt *r, fbw_err *err, const char *what)
{
    if (r->op == FBW_OP_RESPONSE)
        return FBW_OK;
    return fbw_err_set(err, FBW_E_PROTO, "unexpected op %d in answer to %s", (int)r->op, what);
}

/* Every change of server_open goes through here, so the connection's count of blobs open for
 * writing stays right (conn.h fbw_conn_blob_writers). */
static void set_open(fbw_blob *b, int open)
{
    if (b->mode == MODE_WRITE && open != b->server_open)
        fbw_conn_blob_writers(b->conn, open ? 1 : -1);
    b->server_open = open;
}

static int blob_handle(const fbw_blob *b, uint16_t *h)
{
    if (b->alloc == ALLOC_DONE) {
        *h = b->handle;
        return FBW_OK;
    }
    if (b->alloc == ALLOC_PENDING && fbw_conn_get_info(b->conn)->lazy &&
        fbw_conn_allocations(b->conn) == b->alloc_token &&
        (b->mode != MODE_WRITE || fbw_conn_blob_writers(b->conn, 0) <= 1)) {
        *h = FBW_INVALID_OBJECT;
        return FBW_OK;
    }
    return b->alloc == ALLOC_PENDING ? FBW_WAIT : FBW_E_USAGE;
}

int fbw_blob_handle(const fbw_blob *b, uint16_t *h)
{
    return b->server_open ? blob_handle(b, h) : FBW_E_USAGE;
}

/* A failed create/open leaves nothing to address: report why instead of "bad usage". */
static int handle_or_error(fbw_blob *b, uint16_t *h)
{
    int rc = blob_handle(b, h);
    if (rc == FBW_E_USAGE && b->err.code != FBW_OK)
        return b->err.code;
    if (rc == FBW_E_USAGE)
        return fbw_err_set(&b->err, FBW_E_USAGE, "blob is not open");
    return rc;
}

/* ---- create / open ---- */

/* Takes the create/open reply into b without settling it, so a handler that goes on using b
 * (on_open_then_read) settles exactly once, after its last use. */
static int take_alloc(fbw_blob *b, const fbw_pkt *r, fbw_err *err)
{
    int rc = expect_response(r, err, b->mode == MODE_WRITE ? "op_create_blob2" : "op_open_blob2");
    if (rc)
        return rc;
    if (keep_status(b, r, b->mode == MODE_WRITE ? "create blob" : "open blob") != FBW_OK) {
        b->alloc = ALLOC_NONE;
        set_open(b, 0);
        b->eof = 1;
        return FBW_OK;
    }
    b->handle = r->u.resp.object;
    b->alloc = ALLOC_DONE;
    if (b->mode == MODE_WRITE) {
        b->id_hi = r->u.resp.blob_hi;
        b->id_lo = r->u.resp.blob_lo;
        b->have_id = 1;
    }
    return FBW_OK;
}

static int on_alloc(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    (void)c;
    return settle(arg, take_alloc(arg, r, err));
}

static int start_reads(fbw_blob *b);

/* Read-all without the 0xFFFF shortcut: the first reads go out once the handle is known. */
static int on_open_then_read(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    fbw_blob *b = arg;
    (void)c;
    int rc = take_alloc(b, r, err);
    if (rc == FBW_OK && b->alloc == ALLOC_DONE && !b->pend.released)
        rc = start_reads(b);
    return settle(b, rc);
}

static int begin(fbw_blob *b, fbw_tx *tx, int mode, uint16_t *tr)
{
    if (b->server_open)
        return fbw_err_set(&b->err, FBW_E_USAGE, "blob is still open: close it first");
    if (b->inflight > 0) /* their replies would be taken for the new object's */
        return fbw_err_set(&b->err, FBW_E_USAGE, "reads of the previous blob still outstanding");
    int rc = fbw_tx_handle(tx, tr);
    if (rc == FBW_E_USAGE)
        return fbw_err_set(&b->err, FBW_E_USAGE, "transaction is not active");
    if (rc)
        return rc;
    b->mode = mode;
    b->alloc = ALLOC_NONE;
    b->have_id = 0;
    b->eof = 0;
    b->read_all = b->reads_started = b->filtered = b->was_inline = 0;
    b->inflight = 0;
    b->read_len = 0;
    b->nsegs = 0;
    b->bytes_read = 0;
    b->written = 0;
    b->position = 0;
    b->seg_at = NO_SEGMENT;
    fbw_buf_reset(&b->out);
    fbw_buf_reset(&b->data);
    info_reset(&b->info);
    fbw_err_clear(&b->err);
    return FBW_OK;
}

static int queue_alloc(fbw_blob *b, int32_t op, uint16_t tr, const fbw_value *id, const uint8_t *bpb,
                       size_t bpb_len, fbw_reply_fn fn)
{
    fbw_pkt p = {.op = op};
    p.u.blob.bpb.p = bpb;
    p.u.blob.bpb.n = bpb ? bpb_len : 0;
    p.u.blob.tr = tr;
    if (id) {
        p.u.blob.id_hi = id->u.quad.high;
        p.u.blob.id_lo = id->u.quad.low;
    }
    int rc = request(b, &p, fn);
    if (rc)
        return rc;
    b->alloc = ALLOC_PENDING;
    b->alloc_token = fbw_conn_note_allocation(b->conn);
    set_open(b, 1);
    return FBW_OK;
}

int fbw_blob_create(fbw_blob *b, fbw_tx *tx, const uint8_t *bpb, size_t bpb_len)
{
    uint16_t tr;
    int rc = begin(b, tx, MODE_WRITE, &tr);
    return rc ? rc : queue_alloc(b, FBW_OP_CREATE_BLOB2, tr, NULL, bpb, bpb_len, on_alloc);
}

static int check_id(fbw_blob *b, const fbw_value *id)
{
    if (!id || id->is_null || (id->type != FBW_SQL_BLOB && id->type != FBW_SQL_QUAD))
        return fbw_err_set(&b->err, FBW_E_USAGE, "blob id must be a non-NULL BLOB or QUAD value");
    return FBW_OK;
}

int fbw_blob_open(fbw_blob *b, fbw_tx *tx, const fbw_value *id, const uint8_t *bpb, size_t bpb_len)
{
    uint16_t tr;
    int rc = check_id(b, id);
    if (rc == FBW_OK)
        rc = begin(b, tx, MODE_READ, &tr);
    if (rc)
        return rc;
    b->id_hi = id->u.quad.high;
    b->id_lo = id->u.quad.low;
    b->have_id = 1;
    return queue_alloc(b, FBW_OP_OPEN_BLOB2, tr, id, bpb, bpb_len, on_alloc);
}

/* ---- writing ---- */

static int on_reply(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err, const char *op,
                    const char *what)
{
    fbw_blob *b = arg;
    (void)c;
    int rc = expect_response(r, err, op);
    if (rc == FBW_OK)
        keep_status(b, r, what);
    return settle(b, rc);
}

static int on_segments(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    return on_reply(arg, c, r, err, "op_batch_segments", "write blob");
}

static int on_close(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    return on_reply(arg, c, r, err, "op_close_blob", "close blob");
}

static int on_ignore(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    (void)c, (void)r, (void)err;
    return settle(arg, FBW_OK);
}

int fbw_blob_flush(fbw_blob *b)
{
    size_t n = fbw_buf_avail(&b->out);
    if (n == 0)
        return FBW_OK;
    uint16_t h;
    int rc = handle_or_error(b, &h);
    if (rc)
        return rc;
    fbw_pkt p = {.op = FBW_OP_BATCH_SEGMENTS};
    p.u.sgmt.blob = h;
    /* The server reads the cstring length; this u16 only mirrors it (fbclient truncates it too). */
    p.u.sgmt.length = (uint16_t)(n > 0xFFFF ? 0xFFFF : n);
    p.u.sgmt.segment.p = fbw_buf_head(&b->out);
    p.u.sgmt.segment.n = n;
    rc = request(b, &p, on_segments);
    if (rc == FBW_OK) {
        fbw_buf_reset(&b->out); /* the packet was encoded into the connection's buffer */
        b->seg_at = NO_SEGMENT;
    }
    return rc;
}

static int start_segment(fbw_blob *b, size_t want)
{
    if (fbw_buf_avail(&b->out) + 2 + want > b->packet) {
        int rc = fbw_blob_flush(b);
        if (rc)
            return rc;
    }
    static const uint8_t zero[2];
    if (fbw_buf_append(&b->out, zero, 2))
        return FBW_E_NOMEM;
    b->seg_at = b->out.len - 2;
    return FBW_OK;
}

static size_t open_length(const fbw_blob *b)
{
    return b->seg_at == NO_SEGMENT ? 0 : fbw_le16(b->out.data + b->seg_at);
}

/* Append n bytes: as one segment (join = 0) or joined to/cut into stream segments (join = 1). */
static int append(fbw_blob *b, const uint8_t *p, size_t n, int join)
{
    size_t max = join ? FBW_BLOB_SEGMENT_MAX : FBW_BLOB_PUT_MAX;
    int rc = FBW_OK;
    if (!join) {
        b->seg_at = NO_SEGMENT;
        rc = start_segment(b, n);
    }
    while (rc == FBW_OK && n > 0) {
        size_t cur = open_length(b);
        if (join && (b->seg_at == NO_SEGMENT || cur == max)) {
            rc = start_segment(b, n < max ? n : max);
            continue;
        }
        size_t take = n < max - cur ? n : max - cur;
        if (fbw_buf_avail(&b->out) + take > b->packet) { /* the joined segment would overflow */
            rc = fbw_blob_flush(b);
            continue;
        }
        if (fbw_buf_append(&b->out, p, take))
            return FBW_E_NOMEM;
        cur += take;
        b->out.data[b->seg_at] = (uint8_t)cur;
        b->out.data[b->seg_at + 1] = (uint8_t)(cur >> 8);
        p += take;
        n -= take;
        b->written += take;
    }
    if (!join)
        b->seg_at = NO_SEGMENT;
    if (rc == FBW_OK && fbw_buf_avail(&b->out) >= b->packet)
        rc = fbw_blob_flush(b);
    return rc;
}

/* All or nothing: when a packet would have to go out and cannot yet, take nothing. */
static int write_checked(fbw_blob *b, const void *p, size_t n, int join)
{
    if (b->mode != MODE_WRITE || !b->server_open)
        return b->err.code ? b->err.code
                           : fbw_err_set(&b->err, FBW_E_USAGE, "blob is not open for writing");
    if (!join && n > FBW_BLOB_PUT_MAX)
        return fbw_err_set(&b->err, FBW_E_USAGE, "segment of %zu bytes exceeds %u", n,
                           FBW_BLOB_PUT_MAX);
    uint16_t h;
    int rc = handle_or_error(b, &h);
    if (rc == FBW_WAIT) {
        size_t worst = fbw_buf_avail(&b->out) + n + 2 * (n / FBW_BLOB_SEGMENT_MAX + 2);
        if (worst >= b->packet)
            return FBW_WAIT;
        rc = FBW_OK;
    }
    return rc ? rc : append(b, p, n, join);
}

int fbw_blob_write(fbw_blob *b, const void *p, size_t n) { return write_checked(b, p, n, 1); }
int fbw_blob_put_segment(fbw_blob *b, const void *p, size_t n) { return write_checked(b, p, n, 0); }

/* ---- reading ---- */

int fbw_blob_segment_reply_check(uint16_t state, size_t n, uint32_t buffer_length, fbw_err *err)
{
    if (state > FBW_SEG_EOF)
        return fbw_err_set(err, FBW_E_BADVALUE, "op_get_segment reply state %u is not 0, 1 or 2",
                           (unsigned)state);
    if (n > buffer_length)
        return fbw_err_set(err, FBW_E_BADVALUE,
                           "op_get_segment reply of %zu bytes exceeds the %u-byte buffer asked for", n,
                           (unsigned)buffer_length);
    return FBW_OK;
}

int fbw_blob_segments_parse(const uint8_t *data, size_t n, fbw_buf *out, size_t *nsegs, fbw_err *err)
{
    fbw_rd r;
    size_t count = 0;
    if (n == 0) /* an empty reply (EOF); data may be NULL then */
        return FBW_OK;
    /* First pass validates, so a bad list appends nothing. */
    fbw_rd_init(&r, data, n, FBW_E_BADVALUE);
    while (fbw_rd_left(&r) > 0) {
        size_t at = fbw_rd_offset(&r);
        fbw_bytes len = fbw_xdr_raw(&r, 2);
        if (r.rc == FBW_OK)
            fbw_xdr_skip(&r, fbw_le16(len.p));
        if (r.rc != FBW_OK)
            return fbw_err_set(err, FBW_E_BADVALUE,
                               "blob segment list: entry %zu at offset %zu runs past the %zu-byte end",
                               count, at, n);
        count++;
    }
    if (out) {
        fbw_rd_init(&r, data, n, FBW_E_BADVALUE);
        while (fbw_rd_left(&r) > 0) {
            fbw_bytes seg = fbw_xdr_raw(&r, fbw_le16(fbw_xdr_raw(&r, 2).p));
            if (fbw_buf_append(out, seg.p, seg.n))
                return fbw_err_set(err, FBW_E_NOMEM, "out of memory");
        }
    }
    if (nsegs)
        *nsegs += count;
    return FBW_OK;
}

static int queue_read(fbw_blob *b, uint32_t len);

/* Read-all: ask for what the info says is left (at least one more, which also shows EOF). */
static int read_more(fbw_blob *b)
{
    uint32_t n = READ_WINDOW_BLIND;
    if (b->info.total_length >= 0 && b->info.num_segments >= 0) {
        uint64_t total = (uint64_t)b->info.total_length + 2 * (uint64_t)b->info.num_segments;
        uint64_t got = b->bytes_read + 2 * (uint64_t)b->nsegs;
        uint64_t left = total > got ? total - got : 0;
        /* a full reply carries at least READ_MAX - 4 counted bytes: 2 may stay unused, and a
         * segment split across replies gets a second length prefix */
        uint64_t want = left / (FBW_BLOB_READ_MAX - 4) + 1;
        n = want > READ_WINDOW_MAX ? READ_WINDOW_MAX : (uint32_t)want;
    }
    int rc = FBW_OK;
    for (uint32_t i = 0; i < n && rc == FBW_OK; i++)
        rc = queue_read(b, FBW_BLOB_READ_MAX);
    return rc;
}

static void stop_reading(fbw_blob *b, const fbw_err *e)
{
    keep_error(b, e);
    b->eof = 1;
}

static int take_segments(fbw_blob *b, const fbw_pkt *r)
{
    fbw_err e;
    fbw_err_clear(&e);
    fbw_bytes d = r->u.resp.data;
    int rc = fbw_blob_segment_reply_check(r->u.resp.object, d.n, b->read_len, &e);
    if (rc == FBW_OK && fbw_buf_avail(&b->data) + d.n > b->limit)
        rc = fbw_err_set(&e, FBW_E_BADVALUE, "blob exceeds the read limit of %zu bytes", b->limit);
    if (rc == FBW_OK && b->shared_left && d.n > *b->shared_left)
        rc = fbw_err_set(&e, FBW_E_BADVALUE, "blobs read together exceed the read limit of %zu bytes",
                         b->shared_limit);
    size_t before = fbw_buf_avail(&b->data);
    if (rc == FBW_OK)
        rc = fbw_blob_segments_parse(d.p, d.n, &b->data, &b->nsegs, &e);
    if (rc == FBW_E_NOMEM)
        return rc;
    if (rc) {
        stop_reading(b, &e);
        return FBW_OK;
    }
    b->bytes_read += fbw_buf_avail(&b->data) - before;
    if (b->shared_left)
        *b->shared_left -= d.n; /* the reply's length bounds what it added (prefixes included) */
    /* Without a BPB (no filter) the info's total length is the data length: having it all is the
     * end, and saves asking again just to hear "EOF" when the data filled the buffer exactly. */
    if (r->u.resp.object == FBW_SEG_EOF ||
        (b->read_all && !b->filtered && b->info.total_length >= 0 &&
         b->bytes_read >= (uint64_t)b->info.total_length))
        b->eof = 1;
    return FBW_OK;
}

static int on_segment(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    fbw_blob *b = arg;
    (void)c;
    int rc = expect_response(r, err, "op_get_segment");
    if (rc)
        return settle(b, rc);
    b->inflight--;
    if (b->eof) /* replies to reads beyond the end of a read-all window, or after an error */
        ;
    else if (keep_status(b, r, "read blob") != FBW_OK)
        b->eof = 1;
    else
        rc = take_segments(b, r);
    if (b->inflight == 0)
        b->read_len = 0;
    if (rc == FBW_OK && b->read_all && !b->eof && b->inflight == 0 && b->server_open &&
        !b->pend.released)
        rc = read_more(b);
    return settle(b, rc);
}

static int queue_read(fbw_blob *b, uint32_t len)
{
    uint16_t h;
    int rc = handle_or_error(b, &h);
    if (rc)
        return rc;
    fbw_pkt p = {.op = FBW_OP_GET_SEGMENT};
    p.u.sgmt.blob = h;
    p.u.sgmt.length = (uint16_t)len;
    rc = request(b, &p, on_segment);
    if (rc == FBW_OK) {
        b->inflight++;
        if (len > b->read_len)
            b->read_len = len;
    }
    return rc;
}

int fbw_blob_read(fbw_blob *b, uint32_t buffer_length)
{
    if (buffer_length < MIN_READ || buffer_length > FBW_BLOB_READ_MAX)
        return fbw_err_set(&b->err, FBW_E_USAGE, "read buffer length %u outside %u..%u",
                           (unsigned)buffer_length, MIN_READ, FBW_BLOB_READ_MAX);
    if (b->mode != MODE_READ || !b->server_open)
        return b->err.code ? b->err.code
                           : fbw_err_set(&b->err, FBW_E_USAGE, "blob is not open for reading");
    if (b->eof)
        return FBW_OK;
    return queue_read(b, buffer_length);
}

/* ---- info and seek ---- */

static int64_t le_int(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    if (n < 8 && (p[n - 1] & 0x80)) /* sign-extend like isc_portable_integer */
        v |= ~(uint64_t)0 << (8 * n);
    return (int64_t)v;
}

int fbw_blob_info_parse(const uint8_t *p, size_t n, fbw_blob_info *out, fbw_err *err)
{
    info_reset(out);
    if (n == 0)
        return FBW_OK;
    fbw_rd r;
    fbw_rd_init(&r, p, n, FBW_E_BADVALUE);
    while (fbw_rd_left(&r) > 0) {
        size_t at = fbw_rd_offset(&r);
        uint8_t item = *fbw_xdr_raw(&r, 1).p;
        if (item == INFO_END)
            return FBW_OK;
        if (item == INFO_TRUNCATED || item == INFO_ERROR)
            return fbw_err_set(err, FBW_E_BADVALUE, "blob info: %s at offset %zu",
                               item == INFO_TRUNCATED ? "reply truncated" : "server error item", at);
        fbw_bytes len = fbw_xdr_raw(&r, 2);
        fbw_bytes val = r.rc == FBW_OK ? fbw_xdr_raw(&r, fbw_le16(len.p)) : len;
        if (r.rc != FBW_OK)
            return fbw_err_set(err, FBW_E_BADVALUE, "blob info: item %u at offset %zu runs past the end",
                               (unsigned)item, at);
        int known = item >= INFO_NUM_SEGMENTS && item <= INFO_TYPE;
        if (known && (val.n == 0 || val.n > 8))
            return fbw_err_set(err, FBW_E_BADVALUE, "blob info: item %u at offset %zu has length %zu",
                               (unsigned)item, at, val.n);
        if (!known)
            continue;
        int64_t v = le_int(val.p, val.n);
        switch (item) {
        case INFO_NUM_SEGMENTS: out->num_segments = v; break;
        case INFO_MAX_SEGMENT: out->max_segment = v; break;
        case INFO_TOTAL_LENGTH: out->total_length = v; break;
        default: out->type = (int)v; break;
        }
    }
    return FBW_OK;
}

static int on_info(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    fbw_blob *b = arg;
    (void)c;
    int rc = expect_response(r, err, "op_info_blob");
    if (rc)
        return settle(b, rc);
    fbw_err e;
    fbw_err_clear(&e);
    /* During read-all the info only sizes the read window: a failure there is not the blob's. */
    if (fbw_status_decode(r->u.resp.status, &e, NULL) == FBW_OK &&
        fbw_blob_info_parse(r->u.resp.data.p, r->u.resp.data.n, &b->info, &e) != FBW_OK)
        info_reset(&b->info);
    if (e.code != FBW_OK && !b->read_all)
        keep_error(b, &e);
    return settle(b, FBW_OK);
}

static const uint8_t info_items[] = {INFO_NUM_SEGMENTS, INFO_MAX_SEGMENT, INFO_TOTAL_LENGTH,
                                     INFO_TYPE, INFO_END};

static int queue_info(fbw_blob *b)
{
    uint16_t h;
    int rc = handle_or_error(b, &h);
    if (rc)
        return rc;
    fbw_pkt p = {.op = FBW_OP_INFO_BLOB};
    p.u.info.object = h;
    p.u.info.items.p = info_items;
    p.u.info.items.n = sizeof info_items;
    p.u.info.buffer_length = INFO_BUFFER;
    return request(b, &p, on_info);
}

int fbw_blob_query_info(fbw_blob *b)
{
    if (!b->server_open)
        return b->err.code ? b->err.code : fbw_err_set(&b->err, FBW_E_USAGE, "blob is not open");
    return queue_info(b);
}

static int on_seek(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    fbw_blob *b = arg;
    (void)c;
    int rc = expect_response(r, err, "op_seek_blob");
    if (rc == FBW_OK && keep_status(b, r, "seek blob") == FBW_OK) {
        b->position = (int32_t)r->u.resp.blob_lo; /* the new offset travels in the id's low half */
        b->eof = 0;
    }
    return settle(b, rc);
}

int fbw_blob_seek(fbw_blob *b, int mode, int32_t offset)
{
    if (mode < FBW_SEEK_SET || mode > FBW_SEEK_END)
        return fbw_err_set(&b->err, FBW_E_USAGE, "seek mode %d unknown", mode);
    if (b->mode != MODE_READ || !b->server_open)
        return fbw_err_set(&b->err, FBW_E_USAGE, "blob is not open for reading");
    uint16_t h;
    int rc = handle_or_error(b, &h);
    if (rc)
        return rc;
    fbw_pkt p = {.op = FBW_OP_SEEK_BLOB};
    p.u.seek.blob = h;
    p.u.seek.mode = (uint16_t)mode;
    p.u.seek.offset = offset;
    return request(b, &p, on_seek);
}

/* ---- read-all ---- */

static int start_reads(fbw_blob *b)
{
    b->reads_started = 1;
    int rc = queue_info(b);
    return rc ? rc : queue_read(b, FBW_BLOB_READ_MAX);
}

/* The server sent this blob with its row (protocol 19): the read is done without a request. */
static int take_inline(fbw_blob *b, uint16_t tr)
{
    uint8_t *p;
    size_t n;
    fbw_inline_meta meta;
    if (!fbw_inline_take(b->conn, tr, b->id_hi, b->id_lo, &p, &n, &meta))
        return 0;
    if (meta.have_info)
        b->info = meta.info;
    b->nsegs = meta.nsegs;
    fbw_buf_free(&b->data);
    b->data = (fbw_buf){p, 0, n, n};
    b->bytes_read = n;
    b->eof = b->was_inline = 1;
    return 1;
}

int fbw_blob_read_all(fbw_blob *b, fbw_tx *tx, const fbw_value *id, const uint8_t *bpb,
                      size_t bpb_len)
{
    uint16_t tr;
    int rc = check_id(b, id);
    if (rc == FBW_OK)
        rc = begin(b, tx, MODE_READ, &tr);
    if (rc)
        return rc;
    b->id_hi = id->u.quad.high;
    b->id_lo = id->u.quad.low;
    b->have_id = 1;
    b->read_all = 1;
    b->filtered = bpb && bpb_len > 0;
    if (!b->filtered && take_inline(b, tr))
        return FBW_OK;
    int shortcut = fbw_conn_get_info(b->conn)->lazy;
    rc = queue_alloc(b, FBW_OP_OPEN_BLOB2, tr, id, bpb, bpb_len, shortcut ? on_alloc : on_open_then_read);
    return rc == FBW_OK && shortcut ? start_reads(b) : rc;
}

/* ---- close, cancel, free ---- */

static int end_object(fbw_blob *b, int32_t op, fbw_reply_fn fn)
{
    uint16_t h;
    int rc = blob_handle(b, &h);
    if (rc)
        return rc;
    fbw_pkt p = {.op = op};
    p.u.rlse.object = h;
    rc = request(b, &p, fn);
    if (rc == FBW_OK)
        set_open(b, 0);
    return rc;
}

int fbw_blob_close(fbw_blob *b)
{
    if (!b->server_open)
        return b->err.code ? b->err.code : FBW_OK;
    int rc = b->mode == MODE_WRITE ? fbw_blob_flush(b) : FBW_OK;
    return rc ? rc : end_object(b, FBW_OP_CLOSE_BLOB, on_close);
}

void fbw_blob_free(fbw_blob *b)
{
    if (!b)
        return;
    if (b->server_open && fbw_conn_get_state(b->conn) == FBW_CS_READY) {
        fbw_buf_reset(&b->out);
        end_object(b, b->mode == MODE_WRITE ? FBW_OP_CANCEL_BLOB : FBW_OP_CLOSE_BLOB, on_ignore);
    }
    fbw_pending_release(&b->pend, b->conn, destroy, b);
}

void fbw_blob_share_limit(fbw_blob *b, size_t *left, size_t limit)
{
    b->shared_left = left;
    b->shared_limit = limit;
}

/* ---- accessors ---- */

int fbw_blob_busy(const fbw_blob *b) { return fbw_pending_busy(&b->pend); }

int fbw_blob_id(const fbw_blob *b, fbw_value *id)
{
    if (!b->have_id)
        return b->err.code ? b->err.code : FBW_WAIT;
    memset(id, 0, sizeof *id);
    id->type = FBW_SQL_BLOB;
    id->u.quad.high = b->id_hi;
    id->u.quad.low = b->id_lo;
    return FBW_OK;
}

const uint8_t *fbw_blob_data(const fbw_blob *b, size_t *n)
{
    *n = fbw_buf_avail(&b->data);
    return *n ? fbw_buf_head(&b->data) : (const uint8_t *)"";
}

int fbw_blob_eof(const fbw_blob *b) { return b->eof; }
int fbw_blob_was_inline(const fbw_blob *b) { return b->was_inline; }
size_t fbw_blob_segments_read(const fbw_blob *b) { return b->nsegs; }
uint64_t fbw_blob_bytes_written(const fbw_blob *b) { return b->written; }
int32_t fbw_blob_position(const fbw_blob *b) { return b->position; }
const fbw_blob_info *fbw_blob_get_info(const fbw_blob *b) { return &b->info; }
const fbw_err *fbw_blob_error(const fbw_blob *b) { return &b->err; }
