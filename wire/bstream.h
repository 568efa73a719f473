/* SPDX-License-Identifier: MIT */
/* bstream.h - the batch blob stream carried by op_batch_blob_stream (protocol 16+): the blobs a
 * client adds to a batch (IBatch::addBlob, appendBlobData, addBlobStream through the remote
 * provider; FB4's gbak restore is one such client), walked the way the server's receiver walks
 * them (src/remote/protocol.cpp xdr_blob_stream; docs/protocol/statements.md §6.1). The stream runs
 * on from one packet to the next (a blob, its BPB or a segment may be cut by a packet end), so the
 * walk takes the state the statement's previous packet left and returns the new one. No I/O, no
 * allocation. Internal to the project. */
#ifndef FBW_BSTREAM_H
#define FBW_BSTREAM_H

#include "xdr.h"

#include <stdint.h>

/* The blob alignment of every Firebird 4 to 6 server (DsqlBatch BLOB_STREAM_ALIGN), what the
 * server reports as isc_info_sql_stmt_blob_align / the batch's INF_BLOB_ALIGNMENT. */
#define FBW_BSTREAM_ALIGN 4
#define FBW_BSTREAM_HEAD 16 /* blob header: quad id, u32 blob size, u32 BPB size */
#define FBW_BSTREAM_BPB_MAX 255

typedef struct fbw_bstream {
    uint32_t blob_left; /* bytes of the current blob still to come: BPB, segment headers, data */
    uint32_t bpb_left;  /* of its BPB */
    uint32_t seg_left;  /* of the current segment (segmented blobs) */
    uint16_t align;     /* blob headers start at multiples of this in each packet's stream */
    uint8_t segmented;  /* the current blob is segmented (a 2-byte length before each segment) */
    uint8_t default_segmented; /* op_batch_set_bpb's BPB asked for segmented blobs */
    uint8_t bpb_n;      /* the current blob's BPB so far (a BPB cut by a packet end) */
    uint8_t bpb[FBW_BSTREAM_BPB_MAX];
} fbw_bstream;

/* The state of a new batch (op_batch_create): blobs are streams unless a BPB says otherwise. */
void fbw_bstream_init(fbw_bstream *s, uint16_t align);

/* Whether a BPB asks for segmented blobs (no isc_bpb_type, or a type without the stream bit):
 * 1 segmented, 0 stream, -1 not a version 1 BPB or a clumplet runs past its end. */
int fbw_bpb_segmented(const uint8_t *bpb, size_t n);

/* Read the stream part of one op_batch_blob_stream from r: `length` stream bytes as the sender
 * counted them. On the wire a blob header is 16 bytes, a BPB and data their own bytes unpadded, a
 * segment length 4 bytes (2 in the stream); alignment gaps take no bytes, and a header the packet
 * end would cut is not sent (it opens the next packet). Updates *s, adds the blob headers read to
 * *blobs. Errors go to r (fbw_rd_fail): FBW_AGAIN when r runs short, FBW_E_PROTO for a stream the
 * server would reject or a count that does not fit its blob, FBW_E_UNSUPPORTED for a BPB longer
 * than FBW_BSTREAM_BPB_MAX cut by a packet end. Returns r->rc. */
int fbw_bstream_walk(fbw_rd *r, uint32_t length, fbw_bstream *s, uint32_t *blobs);

#endif
