/* SPDX-License-Identifier: MIT */
/* buf.h - growable byte buffer with a consumed prefix.
 *
 * Readable bytes are data[start..len). Appending grows the buffer; consuming moves `start`
 * and compacts lazily, so a decoder can keep views into it until the next append/compact.
 * No I/O. Allocation failure returns FBW_E_NOMEM and leaves the buffer unchanged. */
#ifndef FBW_BUF_H
#define FBW_BUF_H

#include "err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fbw_buf {
    uint8_t *data;
    size_t start; /* first unconsumed byte */
    size_t len;   /* end of valid bytes */
    size_t cap;
} fbw_buf;

FBW_API void fbw_buf_init(fbw_buf *b);
/* Frees memory; wipes it first when `secret` is non-zero. */
FBW_API void fbw_buf_free(fbw_buf *b);
FBW_API void fbw_buf_wipe_free(fbw_buf *b);
/* Ensure room for `extra` more bytes after len (may compact). Returns FBW_OK or FBW_E_NOMEM. */
FBW_API int fbw_buf_reserve(fbw_buf *b, size_t extra);
FBW_API int fbw_buf_append(fbw_buf *b, const void *p, size_t n);
/* Append text: a C string, or printf-style output of any length (no terminating NUL). */
FBW_API int fbw_buf_puts(fbw_buf *b, const char *s);
FBW_API int fbw_buf_printf(fbw_buf *b, const char *fmt, ...) FBW_PRINTF(2, 3);
/* Pointer to the readable region and its size. */
static inline const uint8_t *fbw_buf_head(const fbw_buf *b) { return b->data + b->start; }
static inline size_t fbw_buf_avail(const fbw_buf *b) { return b->len - b->start; }
/* Writable tail after reserve(); commit with fbw_buf_added(). */
static inline uint8_t *fbw_buf_tail(fbw_buf *b) { return b->data + b->len; }
static inline void fbw_buf_added(fbw_buf *b, size_t n) { b->len += n; }
/* Drop n readable bytes from the front (n <= avail). */
FBW_API void fbw_buf_consume(fbw_buf *b, size_t n);
/* Drop everything. */
static inline void fbw_buf_reset(fbw_buf *b) { b->start = b->len = 0; }

#endif
