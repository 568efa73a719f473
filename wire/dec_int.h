/* SPDX-License-Identifier: MIT */
/* dec_int.h - the session decoder's state, shared by dec.c (decoding a session from its start)
 * and sync.c (finding packet boundaries in a session the capture joined late). Private to wire/. */
#ifndef FBW_DEC_INT_H
#define FBW_DEC_INT_H

#include "bstream.h"
#include "buf.h"
#include "compress.h"
#include "crypt.h"
#include "dec.h"
#include "msg.h"
#include "ring.h"

#define MAX_FORMATS 4096 /* statements tracked at once; more is not a real client */
#define MAX_WAITING (1u << 20) /* requests without replies; more is not a real client either */

/* Formats a statement handle has announced. An entry exists from the op_allocate_statement on:
 * until its reply names the handle it is `pending` and only reachable as 0xFFFF. */
typedef struct stmt_fmt {
    uint16_t handle;
    uint8_t pending, unused;
    fbw_msgfmt bind, select, out, batch; /* out: execute2 singleton output */
    uint8_t has_batch;  /* an op_batch_create was seen: blobs holds its blob stream's state */
    fbw_bstream blobs;
} stmt_fmt;

/* A compiled BLR request (op_compile) and the messages its BLR declares. An entry exists from
 * the op_compile on; until its reply names the handle it is `pending`. */
typedef struct req_msg {
    uint8_t number;
    fbw_msgfmt f;
} req_msg;
typedef struct req_fmt {
    uint16_t handle;
    uint8_t pending, unused;
    req_msg *msgs;
    unsigned nmsgs;
    char why[192]; /* the BLR could not be walked: why (its messages cannot be framed) */
} req_fmt;

/* A request waiting for its reply; fmt is the statement entry it concerns (index + 1, 0 none),
 * fixed when the request is seen, because 0xFFFF means "allocated last" at that moment. */
typedef struct waiting {
    int32_t op;
    size_t fmt;
} waiting;

typedef struct direction {
    fbw_buf raw;      /* after capture, before decrypt and inflate */
    fbw_buf plain;    /* XDR bytes waiting to be decoded */
    fbw_cipher *ci;   /* from op_crypt on, when the key is known */
    int verified;     /* a packet decrypted with ci decoded: the key is right */
    fbw_inflater *zi;
    uint64_t offset;  /* stream offset of plain's head, for messages */
    int blind;        /* lenient: the packet at plain's head cannot be framed (format unknown);
                       * the rest of the burst waits for its end (sync.c) */
} direction;

struct fbw_dec {
    fbw_dec_packet_fn fn;
    void *arg;
    fbw_err err;
    fbw_stats stats;
    fbw_pkt_ctx ctx;
    direction dir[2];         /* [1] client->server, [0] server->client */
    int crypt_started;
    int crypt_pending;        /* op_crypt decoded and the key is known: start both ciphers */
    char crypt_plugin[32];
    int have_key;             /* fbw_dec_set_key: the session's key material */
    char key_plugin[16];
    uint8_t key[256], iv[64];
    size_t key_len, iv_len;
    int compress_pending;     /* accept said compress: switch both directions after it */
    stmt_fmt *fmts;
    size_t nfmts;
    size_t alloc_fmt;         /* entry 0xFFFF names (index + 1): the last allocation the client
                               * asked for, if that was a statement; 0 otherwise */
    fbw_ring q;               /* requests waiting for their replies (waiting), oldest first */
    fbw_msgfmt imm_in, imm_out; /* op_exec_immediate2 formats */
    req_fmt *reqs;            /* compiled BLR requests (reqfmt.c) */
    size_t nreqs;
    req_fmt trrq;             /* the last op_transact's messages (0 in, 1 out) */
    fbw_col slice_elem;       /* the element of the last op_get_slice's SDL, for its op_slice */
    fbw_msgfmt slice_fmt;     /* one column: slice_elem; n = 0 when that SDL did not parse */
    char slice_why[160];
    fbw_turn turn;
    int32_t answering;        /* request op the server packet being reported answers */
    size_t msg_fmt;           /* format the packet being decoded framed its input message with:
                               * statement entry (index + 1) or ... */
    int msg_imm;              /* ... imm_in (op_exec_immediate2); both 0: none */
    /* ---- joining a session late (sync.c) ---- */
    int mode;                 /* DEC_* below */
    int anywhere;             /* fbw_dec_start_anywhere: hunt when the stream does not open */
    int lenient;              /* locked on mid-session: a packet that cannot be framed is
                               * skipped to the next packet boundary, a lost boundary is hunted */
    int is_trial;             /* a candidate decoder of sync.c: fail instead of hunting */
    int last_dir;             /* direction of the last bytes fed, -1 none */
    int unknown;              /* the packet being reported could not be framed */
    int took;                 /* fbw_dec_feed_bytes appended the chunk before failing */
    uint64_t fed[2];          /* bytes fed per direction */
    uint64_t pair_pkts[2];    /* packets decoded since the client's burst began */
    uint64_t pairs;           /* request/reply exchanges that decoded and paired exactly */
    uint64_t unknown_pkts;    /* packets skipped to a boundary (a trial's score) */
    fbw_dec_sync sync;
    struct dec_hunt *hunt;    /* while hunting */
};

enum { DEC_START, DEC_STRICT, DEC_HUNT, DEC_LOCKED };

#define BLIND_MAX (16u << 20) /* bytes held waiting for the end of a burst of unknown format */

/* dec.c */
int fbw_dec_deliver(fbw_dec *d, int from_client, const fbw_pkt *p, size_t used, uint64_t ts);
int fbw_dec_feed_bytes(fbw_dec *d, int from_client, const uint8_t *p, size_t n, uint64_t ts);
void fbw_dec_clear_queue(fbw_dec *d);
/* Bytes of from_client arrive: the other direction's burst is over, so (lenient) what it left
 * unframed is framed now, before the turn is counted, in the round trip it was sent in. */
int fbw_dec_resolve_other(fbw_dec *d, int from_client, uint64_t ts_ns);

/* reqfmt.c: BLR requests' message formats, learned from op_compile / op_transact */
/* op_compile: a pending entry with the BLR's messages; returns its index + 1 (0: no room). A BLR
 * that cannot be walked is remembered with the reason, not an error: the request's messages will
 * say why they cannot be framed. */
size_t fbw_req_compiled(fbw_dec *d, fbw_bytes blr);
/* op_response to op_compile: the request got its handle (or, on failure, the entry goes). */
void fbw_req_resolve(fbw_dec *d, size_t idx, int ok, uint16_t handle);
/* op_release: the request is gone. */
void fbw_req_release(fbw_dec *d, uint16_t handle);
/* The format of message `number` of the request `handle`, or NULL with err saying why. */
const fbw_msgfmt *fbw_req_format(fbw_dec *d, uint16_t handle, uint16_t number, fbw_err *err);
/* op_transact: its BLR's messages replace the previous op_transact's; then message `number`. */
int fbw_req_transact(fbw_dec *d, fbw_bytes blr);
const fbw_msgfmt *fbw_req_transact_format(fbw_dec *d, uint16_t number, fbw_err *err);
void fbw_req_free_all(fbw_dec *d);

/* sync.c */
/* Ops an open session sends in that direction (client requests, server replies): in a session
 * joined late, anything else means the framing is wrong. */
int fbw_sync_session_op(int from_client, uint32_t op);
/* A reply-bearing packet that may be skipped when it cannot be framed (its message's format was
 * never seen): the header read before the message looks sane. */
int fbw_sync_recoverable(int from_client, const fbw_pkt *p);
/* The burst of the other direction ended: frame what is left of this one, skipping packets of
 * unknown format to the next boundary. FBW_E_PROTO when the burst does not decode. */
int fbw_sync_resolve(fbw_dec *d, int from_client, uint64_t ts);
/* Feed while no boundary is known: candidate decoders, one per protocol layout, run from the start
 * of a client burst until one of them has decoded request/reply pairs exactly; then lock on. */
int fbw_sync_hunt(fbw_dec *d, int from_client, const uint8_t *p, size_t n, uint64_t ts,
                  int counted);
/* Locked on, lost again: drop what is buffered and hunt. */
void fbw_sync_lose(fbw_dec *d);
/* The session ended while hunting: lock on with the best candidate that decoded an exchange. */
int fbw_sync_finish(fbw_dec *d);
void fbw_sync_free(fbw_dec *d);

#endif


