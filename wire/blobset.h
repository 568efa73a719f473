/* SPDX-License-Identifier: MIT */
/* blobset.h - the blobs of many rows read together: given the rows a statement fetched (or blob ids
 * added one by one), every blob is opened, sized and read in ONE write (per blob op_open_blob2 +
 * op_info_blob + op_get_segment, the later two addressed as 0xFFFF on a lazy port: blob.h
 * fbw_blob_read_all), so the blobs of a fetch cost one round trip whatever the number of rows.
 * A blob longer than one op_get_segment reply (65533 bytes) is continued in one more write shared
 * by all such blobs. The closes are queued once a blob is read and ride along with the
 * connection's next request (they are deferred replies: nothing waits for them alone).
 *
 * Blobs the server already sent inline with the rows (protocol 19, conn.h inline_blob_size) are
 * served from the connection's inline cache with no request at all.
 *
 * Memory is bounded: the bytes of all the set's blobs count against one limit
 * (fbw_blobset_new), and a reply that would pass it stops that blob with FBW_E_BADVALUE
 * "blobs read together exceed the read limit of N bytes" (fbw_blobset_error) instead of being
 * buffered. Sans-I/O like blob.h: fbw_blobset_queue queues and the caller moves bytes; client.h
 * fbw_client_read_blobs does both. Facts: docs/library.md "Blobs of a fetch". */
#ifndef FBW_BLOBSET_H
#define FBW_BLOBSET_H

#include "blob.h"
#include "stmt.h"

#define FBW_BLOBSET_LIMIT_DEFAULT FBW_BLOB_LIMIT_DEFAULT /* bytes all blobs of a set may hold together (as one blob may alone) */

typedef struct fbw_blobset fbw_blobset;

/* limit: bytes the set's blobs may hold together (0: FBW_BLOBSET_LIMIT_DEFAULT). */
FBW_API int fbw_blobset_new(fbw_conn *c, size_t limit, fbw_blobset **out, fbw_err *err);
/* Drop every blob (their closes are queued, see above) and forget the rows; keeps the memory. */
FBW_API void fbw_blobset_reset(fbw_blobset *bs);
FBW_API void fbw_blobset_free(fbw_blobset *bs); /* NULL is fine */

/* Take the non-NULL BLOB cells of rows [first, row count) of st's buffered rows (stmt.h
 * fbw_stmt_row), to be read in tx (the transaction the statement ran in). Returns how many were
 * added in *added (may be NULL). Rows are numbered as the statement numbers them. FBW_E_USAGE when
 * the set already holds rows of another statement or transaction (reset it first). */
FBW_API int fbw_blobset_add_rows(fbw_blobset *bs, const fbw_stmt *st, fbw_tx *tx, size_t first,
                                 size_t *added, fbw_err *err);
/* Add one blob id (a non-NULL BLOB or QUAD value) to read in tx; its index is *index. */
FBW_API int fbw_blobset_add(fbw_blobset *bs, fbw_tx *tx, const fbw_value *id, size_t *index,
                            fbw_err *err);

/* A queue callback (client.h fbw_client_run): queues the requests the set still needs. Call it
 * again after the wait while fbw_blobset_pending() says so (a blob longer than one reply). */
FBW_API int fbw_blobset_queue(void *bs);
/* Some blob is neither read to its end nor stopped by an error. */
FBW_API int fbw_blobset_pending(const fbw_blobset *bs);

FBW_API size_t fbw_blobset_count(const fbw_blobset *bs);
/* Blobs that came inline with the rows (no request was made for them). */
FBW_API size_t fbw_blobset_inline_count(const fbw_blobset *bs);
/* The bytes of blob i (in the order added), valid until the set is reset. NULL when i is out of
 * range or the blob was not read (then fbw_blobset_error says why). */
FBW_API const uint8_t *fbw_blobset_data(const fbw_blobset *bs, size_t i, size_t *n);
/* The bytes of the BLOB cell (row, col) taken by fbw_blobset_add_rows; NULL for a NULL cell, a
 * column that is not a BLOB, or a row the set did not take. */
FBW_API const uint8_t *fbw_blobset_cell(const fbw_blobset *bs, size_t row, size_t col, size_t *n);
/* The first error among the set's blobs (open, read, limit); code FBW_OK when none. */
FBW_API const fbw_err *fbw_blobset_error(const fbw_blobset *bs);

#endif
