/* SPDX-License-Identifier: MIT */
/* sync.c - joining a session mid-stream: finding packet boundaries without having seen the
 * session start (dec.h explains the model).
 *
 * Firebird packets carry no length and no marker, so a boundary can only be proven by decoding.
 * What makes it tractable: a peer stops talking only after a whole packet (the client waits for
 * replies, the server for requests), so the first byte after a turnaround starts a packet, and
 * XDR keeps every packet a multiple of 4 bytes. Candidate decoders (one per protocol layout:
 * versions whose packets look alike share one) start at a client burst; one that frames several
 * bursts exactly, with every reply answering a request it saw, has found the session. */
#include "dec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Protocol layouts that differ: rows without null bitmap (< 13), op_execute trailers added in 16,
 * 18 and 19, op_prepare_statement flags in 20. Listed in the order a tie is broken in (the most
 * common servers first); the decoder runs each with its highest version. */
#define NLAYOUTS 6
static const int layout_lo[NLAYOUTS] = {16, 13, 18, 19, 20, 10};
static const int layout_hi[NLAYOUTS] = {17, 15, 18, 19, 20, 12};

#define CHAIN_MAX 64                  /* packets a boundary look-ahead decodes at most */
#define LOCK_PAIRS 32 /* exchanges after which layouts still alive are a tie (replayed, not lost) */
#define REC_MAX (4u << 20)            /* bytes replayed after a lock; more decides at once */
#define GIVE_UP_BURSTS 64             /* never locked after this many client bursts ... */
#define GIVE_UP_BYTES (16ull << 20)   /* ... or bytes: not a Firebird session (or ciphertext) */

typedef struct dec_hunt {
    fbw_dec *trial[NLAYOUTS]; /* NULL: not started or failed */
    fbw_buf rec;              /* what the trials were fed: flags (1: bit 0 from the client, bit 1
                               * its turn already counted), ts (8), n (4), bytes */
    uint64_t fed[2];          /* bytes fed to the trials */
    uint64_t start[2];        /* stream offsets the trials started at */
    int active;
    uint64_t bursts;          /* client bursts seen while hunting */
} dec_hunt;

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Ops a session sends once it is open, by direction: the ones a boundary may start with. */
int fbw_sync_session_op(int from_client, uint32_t op)
{
    switch (op) {
    case FBW_OP_CRYPT_KEY_CALLBACK:
        return 1;
    case FBW_OP_EVENT: case FBW_OP_SLICE: case FBW_OP_TRANSACT_RESPONSE:
        return !from_client;
    case FBW_OP_SEND: /* a message each way: the client's, and the server's reply to a receive */
        return 1;
    case FBW_OP_GET_SLICE: case FBW_OP_PUT_SLICE: case FBW_OP_DDL: case FBW_OP_COMPILE:
    case FBW_OP_START: case FBW_OP_START_AND_SEND: case FBW_OP_RECEIVE: case FBW_OP_UNWIND:
    case FBW_OP_START_AND_RECEIVE: case FBW_OP_START_SEND_AND_RECEIVE: case FBW_OP_RELEASE:
    case FBW_OP_TRANSACT:
        return from_client;
    case FBW_OP_RESPONSE: case FBW_OP_FETCH_RESPONSE: case FBW_OP_SQL_RESPONSE:
    case FBW_OP_BATCH_CS: case FBW_OP_INLINE_BLOB: case FBW_OP_RESPONSE_PIGGYBACK:
        return !from_client;
    case FBW_OP_DUMMY:
        return 1;
    case FBW_OP_TRANSACTION: case FBW_OP_COMMIT: case FBW_OP_ROLLBACK:
    case FBW_OP_COMMIT_RETAINING: case FBW_OP_ROLLBACK_RETAINING: case FBW_OP_PREPARE_STATEMENT:
    case FBW_OP_EXECUTE: case FBW_OP_EXECUTE2: case FBW_OP_EXEC_IMMEDIATE:
    case FBW_OP_EXEC_IMMEDIATE2: case FBW_OP_FETCH: case FBW_OP_FETCH_SCROLL:
    case FBW_OP_FREE_STATEMENT: case FBW_OP_ALLOCATE_STATEMENT: case FBW_OP_SET_CURSOR:
    case FBW_OP_INFO_SQL: case FBW_OP_INFO_DATABASE: case FBW_OP_INFO_TRANSACTION:
    case FBW_OP_INFO_BLOB: case FBW_OP_INFO_BATCH: case FBW_OP_INFO_CURSOR:
    case FBW_OP_INFO_REQUEST: case FBW_OP_OPEN_BLOB: case FBW_OP_OPEN_BLOB2:
    case FBW_OP_CREATE_BLOB: case FBW_OP_CREATE_BLOB2: case FBW_OP_GET_SEGMENT:
    case FBW_OP_PUT_SEGMENT: case FBW_OP_BATCH_SEGMENTS: case FBW_OP_CLOSE_BLOB:
    case FBW_OP_CANCEL_BLOB: case FBW_OP_SEEK_BLOB: case FBW_OP_BATCH_CREATE:
    case FBW_OP_BATCH_MSG: case FBW_OP_BATCH_EXEC: case FBW_OP_BATCH_RLS: case FBW_OP_BATCH_CANCEL:
    case FBW_OP_BATCH_SYNC: case FBW_OP_BATCH_SET_BPB: case FBW_OP_BATCH_REGBLOB:
    case FBW_OP_BATCH_BLOB_STREAM: case FBW_OP_DETACH: case FBW_OP_PING: case FBW_OP_CANCEL: case FBW_OP_QUE_EVENTS:
    case FBW_OP_CANCEL_EVENTS: case FBW_OP_SERVICE_INFO: case FBW_OP_SERVICE_START:
    case FBW_OP_SERVICE_DETACH: case FBW_OP_DROP_DATABASE: case FBW_OP_DISCONNECT: case FBW_OP_EXIT:
        return from_client;
    default:
        return 0;
    }
}

int fbw_sync_recoverable(int from_client, const fbw_pkt *p)
{
    switch (p->op) {
    case FBW_OP_EXECUTE: case FBW_OP_EXECUTE2:
        return from_client && p->u.sqldata.messages == 1;
    case FBW_OP_EXEC_IMMEDIATE2:
        return from_client && p->u.sqlst.messages == 1;
    case FBW_OP_BATCH_MSG:
        return from_client && p->u.batch_msg.count > 0;
    case FBW_OP_BATCH_BLOB_STREAM: /* its op_batch_create came before the capture */
        return from_client && p->u.bstream.length > 0;
    case FBW_OP_FETCH_RESPONSE:
        return !from_client && p->u.sqldata.messages == 1 &&
               (p->u.sqldata.status == 0 || p->u.sqldata.status == 100);
    case FBW_OP_SQL_RESPONSE:
        return !from_client && p->u.sqldata.messages == 1;
    case FBW_OP_SEND: case FBW_OP_START_AND_SEND: case FBW_OP_START_SEND_AND_RECEIVE:
        return (from_client || p->op == FBW_OP_SEND) && p->u.data.messages <= 1;
    case FBW_OP_SLICE: /* its op_get_slice came before the capture */
        return !from_client;
    default:
        return 0;
    }
}

static const fbw_msgfmt *no_format(void *arg, enum fbw_fmt_kind kind, const fbw_pkt *p,
                                   fbw_err *err)
{
    (void)arg, (void)kind, (void)p;
    fbw_err_set(err, FBW_E_UNSUPPORTED, "format unknown");
    return NULL;
}

/* Do b[0..n) decode as packets to their end exactly? A packet whose message cannot be framed
 * without its format ends the look-ahead with yes: nothing past it can be checked; so do
 * CHAIN_MAX packets in a row (the look-ahead runs at every 4-byte step: keep it linear). */
static int chain_ok(const fbw_dec *d, int from_client, const uint8_t *b, size_t n)
{
    fbw_pkt_ctx ctx = {d->ctx.protocol, no_format, NULL};
    int count = 0;
    for (size_t off = 0; off < n; count++) {
        if (count == CHAIN_MAX)
            return 1;
        if (n - off < 4 || !fbw_sync_session_op(from_client, be32(b + off)))
            return 0;
        fbw_pkt p;
        size_t used = 0;
        int rc = fbw_pkt_decode(&ctx, b + off, n - off, &p, &used, NULL);
        if (rc == FBW_OK) {
            off += used;
            continue;
        }
        return rc != FBW_AGAIN && fbw_sync_recoverable(from_client, &p);
    }
    return 1;
}

/* Ops of a single word: small numbers that message data holds all the time, so they never
 * mark where a message ends. */
static int bare_op(uint32_t op)
{
    return op == FBW_OP_EXIT || op == FBW_OP_DISCONNECT || op == FBW_OP_DUMMY ||
           op == FBW_OP_PING || op == FBW_OP_BATCH_SYNC;
}

/* Where the packet of unknown format at pos ends: the first 4-byte step after it from which the
 * rest of the burst decodes, else the burst's end. */
static size_t boundary(const fbw_dec *d, int from_client, const uint8_t *b, size_t pos,
                       size_t end)
{
    for (size_t r = pos + 8; r + 4 <= end; r += 4) {
        uint32_t op = be32(b + r);
        if (!bare_op(op) && fbw_sync_session_op(from_client, op) &&
            chain_ok(d, from_client, b + r, end - r))
            return r;
    }
    return end;
}

int fbw_sync_resolve(fbw_dec *d, int from_client, uint64_t ts)
{
    direction *x = &d->dir[from_client];
    const uint8_t *b = fbw_buf_head(&x->plain);
    size_t end = fbw_buf_avail(&x->plain), pos = 0;
    int rc = FBW_OK;
    while (pos < end && rc == FBW_OK) {
        fbw_pkt p;
        size_t used = 0;
        d->msg_fmt = 0;
        d->msg_imm = 0;
        rc = fbw_pkt_decode(&d->ctx, b + pos, end - pos, &p, &used, &d->err);
        if (rc == FBW_OK && !fbw_sync_session_op(from_client, (uint32_t)p.op))
            rc = FBW_E_PROTO;
        if (rc == FBW_OK) {
            rc = fbw_dec_deliver(d, from_client, &p, used, ts);
            pos += used;
            continue;
        }
        if (rc == FBW_E_NOMEM)
            break;
        if (!fbw_sync_recoverable(from_client, &p)) {
            char why[200];
            snprintf(why, sizeof why, "%.199s", rc == FBW_AGAIN ? "packet longer than its burst" : d->err.msg);
            rc = fbw_err_set(&d->err, FBW_E_PROTO, "%s stream at offset %llu: %s: framing lost",
                             from_client ? "client" : "server",
                             (unsigned long long)(x->offset + pos), why);
            break;
        }
        fbw_err_clear(&d->err);
        size_t next = boundary(d, from_client, b, pos, end);
        d->msg_fmt = 0; /* nothing was framed: no format to decode a message with */
        d->msg_imm = 0;
        d->unknown = 1;
        d->unknown_pkts++;
        if (from_client)
            d->sync.unknown_msgs++;
        else
            d->sync.unknown_rows++;
        rc = fbw_dec_deliver(d, from_client, &p, next - pos, ts);
        d->unknown = 0;
        pos = next;
    }
    x->blind = 0;
    fbw_buf_consume(&x->plain, end);
    x->offset += end;
    if (rc == FBW_OK && (d->compress_pending || d->crypt_pending || d->crypt_started))
        rc = fbw_err_set(&d->err, FBW_E_PROTO, "compression or encryption starts mid-session");
    return rc;
}

/* ---- hunting ---- */

/* Walk the records of rec: fn(d, flags, bytes, n, ts) for each until it fails. */
typedef int (*rec_fn)(fbw_dec *d, int flags, const uint8_t *p, size_t n, uint64_t ts);

static int rec_walk(fbw_dec *d, const fbw_buf *rec, rec_fn fn)
{
    int rc = FBW_OK;
    const uint8_t *p = fbw_buf_head(rec), *end = p + fbw_buf_avail(rec);
    while (rc == FBW_OK && p + 13 <= end) {
        int flags = p[0];
        uint64_t ts = 0;
        uint32_t n = 0;
        for (int k = 0; k < 8; k++)
            ts |= (uint64_t)p[1 + k] << (8 * k);
        for (int k = 0; k < 4; k++)
            n |= (uint32_t)p[9 + k] << (8 * k);
        p += 13;
        rc = fn(d, flags, p, n, ts);
        p += n;
    }
    return rc;
}

/* Round trips count in stream order: bytes held for the trials count when they are decoded or
 * given up. */
static int count_turn(fbw_dec *d, int flags, const uint8_t *p, size_t n, uint64_t ts)
{
    (void)p;
    if (!(flags & 2))
        fbw_stats_turn(&d->stats, &d->turn, flags & 1, n, ts);
    return FBW_OK;
}

static int replay(fbw_dec *d, int flags, const uint8_t *p, size_t n, uint64_t ts)
{
    int rc = fbw_dec_resolve_other(d, flags & 1, ts);
    count_turn(d, flags, p, n, ts);
    return rc ? rc : fbw_dec_feed_bytes(d, flags & 1, p, n, ts);
}

static void end_trials(fbw_dec *d, int count_skipped)
{
    dec_hunt *h = d->hunt;
    if (count_skipped)
        rec_walk(d, &h->rec, count_turn);
    for (int i = 0; i < NLAYOUTS; i++) {
        fbw_dec_free(h->trial[i]);
        h->trial[i] = NULL;
    }
    if (count_skipped) {
        d->sync.skipped[0] += h->fed[0];
        d->sync.skipped[1] += h->fed[1];
    }
    fbw_buf_free(&h->rec);
    fbw_buf_init(&h->rec);
    h->fed[0] = h->fed[1] = 0;
    h->active = 0;
}

static int alive(const dec_hunt *h)
{
    int n = 0;
    for (int i = 0; i < NLAYOUTS; i++)
        n += h->trial[i] != NULL;
    return n;
}

/* Record the chunk and feed it to the live trials. 0 when the trials were given up instead
 * (a burst too long to judge, or no memory), without taking the chunk. */
static int feed_trials(fbw_dec *d, int from_client, const uint8_t *p, size_t n, uint64_t ts,
                       int counted)
{
    dec_hunt *h = d->hunt;
    uint8_t hd[13];
    hd[0] = (uint8_t)(from_client | (counted ? 2 : 0));
    for (int i = 0; i < 8; i++)
        hd[1 + i] = (uint8_t)(ts >> (8 * i));
    for (int i = 0; i < 4; i++)
        hd[9 + i] = (uint8_t)((uint32_t)n >> (8 * i));
    if (fbw_buf_avail(&h->rec) + n > 4 * (size_t)REC_MAX || fbw_buf_reserve(&h->rec, 13 + n)) {
        end_trials(d, 1); /* memory stays bounded: try again at the next client burst */
        return 0;
    }
    fbw_buf_append(&h->rec, hd, sizeof hd);
    fbw_buf_append(&h->rec, p, n);
    h->fed[from_client] += n;
    for (int i = 0; i < NLAYOUTS; i++)
        if (h->trial[i] && fbw_dec_feed_bytes(h->trial[i], from_client, p, n, ts) != FBW_OK) {
            fbw_dec_free(h->trial[i]);
            h->trial[i] = NULL;
        }
    return 1;
}

static void start_trials(fbw_dec *d, size_t n_now)
{
    dec_hunt *h = d->hunt;
    h->start[0] = d->fed[0];
    h->start[1] = d->fed[1] - n_now;
    for (int i = 0; i < NLAYOUTS; i++) {
        fbw_dec *t = NULL;
        if (fbw_dec_new(NULL, NULL, &t) != FBW_OK)
            continue;
        t->mode = DEC_LOCKED;
        t->lenient = 1;
        t->is_trial = 1;
        t->ctx.protocol = layout_hi[i];
        h->trial[i] = t;
    }
    h->active = 1;
}

/* The trial to lock on to, -1 none yet. At a client burst start, after the trials saw the end of
 * the server's burst. */
static int choose(const dec_hunt *h, int force)
{
    int best = -1, n = alive(h);
    uint64_t most = 0;
    for (int i = 0; i < NLAYOUTS; i++) {
        const fbw_dec *t = h->trial[i];
        if (!t || t->pairs == 0)
            continue;
        if (t->pairs > most)
            most = t->pairs;
        if (best < 0 || t->unknown_pkts < h->trial[best]->unknown_pkts)
            best = i;
    }
    if (best < 0)
        return -1;
    /* Decided: only one layout decodes, or enough exchanges decoded alike, or no more room. */
    if (force || n == 1 || most >= LOCK_PAIRS || fbw_buf_avail(&h->rec) > REC_MAX)
        return best;
    return -1;
}

/* Lock on with layout i: decode what the trials saw again, this time reporting it. */
static int lock_on(fbw_dec *d, int i)
{
    dec_hunt *h = d->hunt;
    fbw_buf rec = h->rec;
    fbw_buf_init(&h->rec);
    if (d->sync.how == FBW_DEC_NOT_YET) {
        d->sync.how = FBW_DEC_LOCKED_ON;
        d->sync.lock_offset[0] = h->start[0];
        d->sync.lock_offset[1] = h->start[1];
    } else {
        d->sync.relocks++;
    }
    d->sync.protocol_lo = layout_lo[i];
    d->sync.protocol_hi = layout_hi[i];
    d->sync.hunting = 0;
    d->ctx.protocol = layout_hi[i];
    end_trials(d, 0);
    d->mode = DEC_LOCKED;
    d->lenient = 1;
    d->last_dir = -1;
    fbw_dec_clear_queue(d);
    int rc = rec_walk(d, &rec, replay);
    fbw_buf_free(&rec);
    if (rc == FBW_E_NOMEM)
        return rc;
    if (rc)
        fbw_sync_lose(d);
    return FBW_OK;
}

static int give_up(fbw_dec *d)
{
    dec_hunt *h = d->hunt;
    if (d->sync.how != FBW_DEC_NOT_YET ||
        (h->bursts <= GIVE_UP_BURSTS && d->fed[0] + d->fed[1] <= GIVE_UP_BYTES))
        return FBW_OK;
    return fbw_err_set(&d->err, FBW_E_PROTO,
                       "no Firebird packets found in %llu client and %llu server bytes (%llu "
                       "client bursts): another protocol, or a session encrypted or compressed "
                       "before the capture began",
                       (unsigned long long)d->fed[1], (unsigned long long)d->fed[0],
                       (unsigned long long)h->bursts);
}

int fbw_sync_hunt(fbw_dec *d, int from_client, const uint8_t *p, size_t n, uint64_t ts,
                  int counted)
{
    if (!d->hunt && !(d->hunt = calloc(1, sizeof *d->hunt)))
        return fbw_err_set(&d->err, FBW_E_NOMEM, "out of memory");
    dec_hunt *h = d->hunt;
    d->sync.hunting = 1;
    int burst_start = from_client && d->last_dir != 1;
    d->last_dir = from_client;
    h->bursts += burst_start;
    if (h->active && feed_trials(d, from_client, p, n, ts, counted)) {
        if (burst_start && h->active) {
            int i = choose(h, 0);
            if (i >= 0)
                return lock_on(d, i);
        }
        if (h->active && alive(h))
            return FBW_OK;
        if (h->active && burst_start) {
            /* This chunk starts a client burst: new trials start with it. */
            h->rec.len -= 13 + n;
            h->fed[1] -= n;
        }
        if (h->active)
            end_trials(d, 1);
        if (!burst_start)
            return give_up(d);
    }
    if (burst_start && n) {
        start_trials(d, n);
        if (!feed_trials(d, from_client, p, n, ts, counted)) {
            d->sync.skipped[from_client] += n;
            if (!counted)
                fbw_stats_turn(&d->stats, &d->turn, from_client, n, ts);
        } else if (!alive(h)) {
            end_trials(d, 1);
        }
    } else {
        d->sync.skipped[from_client] += n;
        if (!counted)
            fbw_stats_turn(&d->stats, &d->turn, from_client, n, ts);
    }
    return give_up(d);
}

int fbw_sync_finish(fbw_dec *d)
{
    dec_hunt *h = d->hunt;
    if (d->mode != DEC_HUNT || !h || !h->active)
        return d->err.code;
    if (d->err.code) { /* gave up: the held bytes still count as round trips */
        end_trials(d, 1);
        return d->err.code;
    }
    /* The session ended: its last server burst is whole, so the trials may judge it. */
    for (int i = 0; i < NLAYOUTS; i++) {
        fbw_dec *t = h->trial[i];
        if (!t)
            continue;
        int rc = FBW_OK;
        if (t->dir[0].blind || fbw_buf_avail(&t->dir[0].plain))
            rc = fbw_sync_resolve(t, 0, 0);
        if (rc == FBW_OK && fbw_ring_len(&t->q) == 0 && t->pair_pkts[0] && t->pair_pkts[1])
            t->pairs++;
        if (rc) {
            fbw_dec_free(t);
            h->trial[i] = NULL;
        }
    }
    int i = choose(h, 1);
    if (i >= 0)
        return lock_on(d, i);
    end_trials(d, 1);
    return FBW_OK;
}

void fbw_sync_lose(fbw_dec *d)
{
    fbw_err_clear(&d->err);
    for (int i = 0; i < 2; i++) {
        direction *x = &d->dir[i];
        d->sync.skipped[i] += fbw_buf_avail(&x->plain) + fbw_buf_avail(&x->raw);
        x->offset += fbw_buf_avail(&x->plain);
        fbw_buf_reset(&x->plain);
        fbw_buf_reset(&x->raw);
        x->blind = 0;
    }
    fbw_dec_clear_queue(d);
    d->pair_pkts[0] = d->pair_pkts[1] = 0;
    d->mode = DEC_HUNT;
    d->lenient = 0;
    d->sync.hunting = 1;
}

void fbw_sync_free(fbw_dec *d)
{
    if (!d->hunt)
        return;
    end_trials(d, 0);
    free(d->hunt);
    d->hunt = NULL;
}
