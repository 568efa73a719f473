/* SPDX-License-Identifier: MIT */
/* compress.h - Firebird wire compression: one zlib stream per direction for the whole connection.
 *
 * zlib wrapper format, default level, windowBits 15 (what fbclient's initCompression uses); the
 * stream is never reset or finished. Each send ends with Z_SYNC_FLUSH so the peer can decode all of
 * it. Bytes in, bytes out: no sockets, no ciphers (those sit below, see crypt.h). */
#ifndef FBW_COMPRESS_H
#define FBW_COMPRESS_H

#include "buf.h"
#include "err.h"

#include <stddef.h>
#include <stdint.h>

/* Default cap on the bytes one fbw_inflater_feed call may produce. Valid deflate data expands at
 * most ~1032:1, so feeding at most 64 KiB per call never trips it on honest data; beyond it the
 * stream is treated as hostile (decompression bomb) and the call fails with FBW_E_PROTO. */
#define FBW_INFLATE_MAX_OUT ((size_t)80 << 20)

typedef struct fbw_deflater fbw_deflater;
typedef struct fbw_inflater fbw_inflater;

int fbw_deflater_new(fbw_deflater **out, fbw_err *err);
/* Compress n bytes and append them to out, ending with Z_SYNC_FLUSH so the peer can decode
 * everything sent so far. n == 0 appends nothing. Errors: FBW_E_NOMEM, FBW_E_CRYPT (zlib failure;
 * the stream is then unusable and every later call fails the same way). */
int fbw_deflater_flush(fbw_deflater *d, const uint8_t *in, size_t n, fbw_buf *out, fbw_err *err);
void fbw_deflater_free(fbw_deflater *d);

int fbw_inflater_new(fbw_inflater **out, fbw_err *err);
/* Inflate whatever arrived (any split) and append the plaintext to out. Incomplete input is kept
 * inside zlib and simply produces less output: never FBW_AGAIN, the caller's packet decoder decides
 * what is missing. Errors (sticky; out keeps its previous contents):
 *   FBW_E_CRYPT  corrupt stream, with zlib's message; data after a finished stream
 *   FBW_E_PROTO  this call would produce more than the max_out cap (FBW_INFLATE_MAX_OUT)
 *   FBW_E_NOMEM */
int fbw_inflater_feed(fbw_inflater *z, const uint8_t *in, size_t n, fbw_buf *out, fbw_err *err);
/* Change the per-call output cap (0 restores the default). */
void fbw_inflater_set_max_out(fbw_inflater *z, size_t max_out);
void fbw_inflater_free(fbw_inflater *z);

#endif
