/* SPDX-License-Identifier: MIT */
/* inline.h - internal: the blobs a protocol 19 server sends inline with the rows (op_inline_blob,
 * docs/protocol/statements.md §5.5), kept per connection until a reader takes them (blobset.c) or
 * the transaction they belong to ends. Bounded: conn.h inline_blob_cache bytes at most; past it
 * the oldest are dropped (a dropped blob is read from the server as usual). Not exported. */
#ifndef FBW_INLINE_H
#define FBW_INLINE_H

#include "blob.h"
#include "conn.h"
#include "pkt.h"

typedef struct fbw_inline fbw_inline;

/* What else an op_inline_blob says of its blob: the server's blob info (items as op_info_blob
 * answers them; have_info 0 when it sent none or none that parses) and the segments it held. */
typedef struct fbw_inline_meta {
    fbw_blob_info info;
    int have_info;
    size_t nsegs;
} fbw_inline_meta;

/* The cache of a connection; created on first use by fbw_inline_put. */
void fbw_inline_free(fbw_inline *in);
/* Keep the blob of one op_inline_blob (its segments checked and joined). A bad segment list is
 * FBW_E_PROTO (the stream is not what the protocol says); a blob the cache cannot hold is skipped. */
int fbw_inline_put(fbw_conn *c, const fbw_pkt *p);
/* Take the blob (tr, id) out of the cache: 1 and *data (malloc'd, the caller frees; NULL when the
 * blob is empty), *n and *meta when it was there, 0 when not. */
int fbw_inline_take(fbw_conn *c, uint16_t tr, uint32_t hi, uint32_t lo, uint8_t **data, size_t *n,
                    fbw_inline_meta *meta);
/* Drop the blobs of transaction tr (it ended: its blob ids mean nothing now). */
void fbw_inline_forget_tx(fbw_conn *c, uint16_t tr);

/* conn.c: the connection's cache slot */
fbw_inline **fbw_conn_inline_slot(fbw_conn *c);

#endif
