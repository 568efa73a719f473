/* SPDX-License-Identifier: MIT */
/* blob.h - blobs on a connection: create and write (segments packed into op_batch_segments), open
 * and read (op_get_segment, the segment list parsed bounds-checked), a read-all that pipelines open,
 * info and the first read into one write, seek, info, close and cancel. Sans-I/O like stmt.h: calls
 * queue packets and reply handlers; the caller moves bytes (client.h) and then reads results here.
 * Not here: reading the blobs of many rows together (blobset.h, which also serves inline blobs),
 * array slices, batch blob streams. Facts: docs/protocol/statements.md §5, lazy-send.md §3. */
#ifndef FBW_BLOB_H
#define FBW_BLOB_H

#include "msg.h"
#include "tx.h"

/* Longest segment fbw_blob_write makes: with its 2-byte length it fills exactly one op_get_segment
 * buffer of FBW_BLOB_READ_MAX, so a reader with the largest buffer gets whole segments. */
#define FBW_BLOB_SEGMENT_MAX 65533u
#define FBW_BLOB_PUT_MAX 65535u        /* longest segment the engine stores (u16 length) */
#define FBW_BLOB_READ_MAX 65535u       /* op_get_segment buffer length is a u16 */
#define FBW_BLOB_PACKET_DEFAULT (256u << 10) /* bytes of segments per op_batch_segments */
#define FBW_BLOB_LIMIT_DEFAULT (256u << 20)  /* most bytes a blob buffers while reading */

/* p_resp_object of an op_get_segment reply */
enum { FBW_SEG_OK = 0, FBW_SEG_INCOMPLETE = 1, FBW_SEG_EOF = 2 };
/* op_seek_blob modes */
enum { FBW_SEEK_SET = 0, FBW_SEEK_CUR = 1, FBW_SEEK_END = 2 };

typedef struct fbw_blob fbw_blob;

/* What op_info_blob says (isc_info_blob_*); -1 where the reply did not carry the item. */
typedef struct fbw_blob_info {
    int64_t num_segments, max_segment, total_length;
    int type; /* 0 segmented, 1 stream */
} fbw_blob_info;

FBW_API int fbw_blob_new(fbw_conn *c, fbw_blob **out, fbw_err *err);
/* Queues op_close_blob for a blob opened for reading, op_cancel_blob for one created but not
 * closed (its replies are deferred and ignored), and frees once no reply is outstanding. */
FBW_API void fbw_blob_free(fbw_blob *b);
/* Internal (blobset.c), not exported: count the bytes this blob reads against a budget shared with
 * other blobs: a reply
 * that would take *left below 0 stops the blob with FBW_E_BADVALUE "... exceeds the read limit of
 * `limit` bytes" instead of buffering it; the bytes taken are subtracted. NULL: the blob's own
 * limit only (FBW_BLOB_LIMIT_DEFAULT). left must outlive the blob's reads. */
void fbw_blob_share_limit(fbw_blob *b, size_t *left, size_t limit);

/* Queue op_create_blob2 in tx with an optional BPB (NULL/0: none). The id is known once the reply
 * is in (fbw_blob_id). On a lazy port the writes that follow address the blob as 0xFFFF, so create,
 * segments and close share one write. Caveat of that shortcut (Jaybird has it too): should the
 * create fail, those writes go to the object the server allocated last, which errs unless it is
 * another blob still open for writing. */
FBW_API int fbw_blob_create(fbw_blob *b, fbw_tx *tx, const uint8_t *bpb, size_t bpb_len);
/* Append bytes as a stream: they are cut into segments of at most FBW_BLOB_SEGMENT_MAX (small writes
 * join the open segment) and an op_batch_segments is queued each time the packet size is reached.
 * Either all n bytes are taken (FBW_OK) or none: FBW_WAIT when a packet must go out but the handle
 * is still unknown (wait for the create reply, then call again). */
FBW_API int fbw_blob_write(fbw_blob *b, const void *p, size_t n);
/* Append exactly one segment of n <= FBW_BLOB_PUT_MAX bytes (same rules as fbw_blob_write). */
FBW_API int fbw_blob_put_segment(fbw_blob *b, const void *p, size_t n);
/* Queue the buffered segments now (nothing when none). */
FBW_API int fbw_blob_flush(fbw_blob *b);

/* Queue op_open_blob2 for blob id (a BLOB or QUAD value) in tx with an optional BPB. */
FBW_API int fbw_blob_open(fbw_blob *b, fbw_tx *tx, const fbw_value *id, const uint8_t *bpb, size_t bpb_len);
/* Queue one op_get_segment with a buffer of buffer_length (3..FBW_BLOB_READ_MAX) bytes. The data
 * of its segments is appended to the blob's buffer (fbw_blob_data). Nothing is queued at EOF. */
FBW_API int fbw_blob_read(fbw_blob *b, uint32_t buffer_length);
/* Open id and read the whole blob into the buffer. A blob the server sent inline with its row
 * (protocol 19) is taken from the connection's inline cache with no request (not with a BPB: the
 * cache holds the stored bytes). Otherwise op_open_blob2 + op_info_blob + op_get_segment
 * in one write (0xFFFF handles, as fbclient 5.0.2 does), so a blob of up to 65533 bytes costs one
 * round trip; larger ones get the further reads the info reply says are needed in one more write
 * (up to 64 reads, ~4 MiB, per round trip). Done when fbw_blob_eof(); errors in fbw_blob_error().
 * Close afterwards: queue it and it rides along with the next request. If the open fails, the
 * pipelined reads address whatever object the server allocated last; their replies are dropped. */
FBW_API int fbw_blob_read_all(fbw_blob *b, fbw_tx *tx, const fbw_value *id, const uint8_t *bpb,
                      size_t bpb_len);

/* Queue op_seek_blob (stream blobs); the new position is in fbw_blob_position() once answered. */
FBW_API int fbw_blob_seek(fbw_blob *b, int mode, int32_t offset);
/* Queue op_info_blob; the result is in fbw_blob_get_info() once answered. */
FBW_API int fbw_blob_query_info(fbw_blob *b);

/* Created blob: queue the buffered segments and op_close_blob (the id becomes usable in a
 * statement). Opened blob: queue op_close_blob. The close reply is deferred by fbclient's rules:
 * nothing needs to wait for it alone. */
FBW_API int fbw_blob_close(fbw_blob *b);

/* Results, valid once the queued requests are answered. */
FBW_API int fbw_blob_busy(const fbw_blob *b);              /* replies still outstanding for this blob */
/* The blob id: type FBW_SQL_BLOB, quad (high, low); FBW_WAIT before the create/open is answered. */
FBW_API int fbw_blob_id(const fbw_blob *b, fbw_value *id);
/* The server handle to address the blob with in a request built elsewhere (conn.h
 * fbw_conn_info_request): 0xFFFF while its open is unanswered on a lazy port and nothing was
 * allocated since; FBW_WAIT while the open is unanswered otherwise; FBW_E_USAGE when not open. */
FBW_API int fbw_blob_handle(const fbw_blob *b, uint16_t *h);
FBW_API const uint8_t *fbw_blob_data(const fbw_blob *b, size_t *n); /* bytes read so far */
FBW_API int fbw_blob_eof(const fbw_blob *b);               /* end reached (or reading stopped by an error) */
/* Read-all found the blob in the connection's inline cache (protocol 19, conn.h
 * inline_blob_size): it was served with no request. */
FBW_API int fbw_blob_was_inline(const fbw_blob *b);
FBW_API size_t fbw_blob_segments_read(const fbw_blob *b);  /* segment entries received so far */
FBW_API uint64_t fbw_blob_bytes_written(const fbw_blob *b);
FBW_API int32_t fbw_blob_position(const fbw_blob *b);
FBW_API const fbw_blob_info *fbw_blob_get_info(const fbw_blob *b);
/* The first server or data error of this blob's requests; code FBW_OK when none. */
FBW_API const fbw_err *fbw_blob_error(const fbw_blob *b);

/* ---- codecs (no connection) ---- */

/* Parse the segment list of an op_get_segment reply (data[0..n): entries of a 2-byte little-endian
 * length and that many bytes, no padding), appending the data bytes to out (may be NULL) and adding
 * the entry count to *nsegs (may be NULL). An entry running past the end is FBW_E_BADVALUE naming
 * its offset; nothing is appended then. */
FBW_API int fbw_blob_segments_parse(const uint8_t *data, size_t n, fbw_buf *out, size_t *nsegs, fbw_err *err);
/* Check an op_get_segment reply's state and size: state must be 0, 1 or 2 and n <= the buffer
 * length that was asked for. FBW_E_BADVALUE otherwise. */
FBW_API int fbw_blob_segment_reply_check(uint16_t state, size_t n, uint32_t buffer_length, fbw_err *err);
/* Parse an op_info_blob reply (items, 2-byte LE length, LE integer value of 1..8 bytes; end item 1).
 * Unknown items are skipped; truncation or a bad length is FBW_E_BADVALUE. */
FBW_API int fbw_blob_info_parse(const uint8_t *p, size_t n, fbw_blob_info *out, fbw_err *err);

#endif
