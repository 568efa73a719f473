/* SPDX-License-Identifier: MIT */
/* xdr.h - bounded XDR reader and growable XDR writer: the only code that does raw pointer
 * arithmetic on wire bytes.
 *
 * Reader errors are sticky (pqexpbuffer style): after the first failure every getter returns
 * 0/empty and rd->rc keeps the first error, so decoders read a whole structure and check once.
 * A shortfall yields rd->short_rc: FBW_AGAIN when parsing a stream that may still grow (packets),
 * FBW_E_PROTO when parsing a complete buffer (info replies, status data). No I/O, no allocation. */
#ifndef FBW_XDR_H
#define FBW_XDR_H

#include "buf.h"
#include "err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fbw_rd {
    const uint8_t *base; /* start of the buffer, for offsets in messages */
    const uint8_t *p;
    const uint8_t *end;
    int rc;              /* FBW_OK, or the first error */
    int short_rc;        /* what running out of bytes means: FBW_AGAIN or FBW_E_PROTO */
    const char *what;    /* static text describing the first error */
    const uint8_t *fail_at; /* where the first error happened (p moves to the end on failure) */
} fbw_rd;

/* A (pointer, length) view into a reader's buffer. Valid while that buffer is. */
typedef struct fbw_bytes {
    const uint8_t *p;
    size_t n;
} fbw_bytes;

FBW_API void fbw_rd_init(fbw_rd *r, const void *p, size_t n, int short_rc);
/* Offset of the read position, or of the failing field once the reader has failed. */
static inline size_t fbw_rd_offset(const fbw_rd *r)
{
    return (size_t)((r->rc != FBW_OK && r->fail_at ? r->fail_at : r->p) - r->base);
}
static inline size_t fbw_rd_left(const fbw_rd *r) { return (size_t)(r->end - r->p); }
/* Record an error (first one wins). Returns r->rc. */
FBW_API int fbw_rd_fail(fbw_rd *r, int rc, const char *what);

/* 4-byte big-endian unsigned / signed. */
FBW_API uint32_t fbw_xdr_u32(fbw_rd *r);
FBW_API int32_t fbw_xdr_i32(fbw_rd *r);
/* A 16-bit field sent through xdr_short: 4 bytes on the wire, sign-extended; low 16 bits kept. */
FBW_API uint16_t fbw_xdr_u16(fbw_rd *r);
/* 8-byte big-endian (xdr_hyper). */
FBW_API int64_t fbw_xdr_i64(fbw_rd *r);
/* Counted opaque (int32 length, bytes, pad to 4). Lengths over `max` fail with FBW_E_PROTO.
 * A length whose upper 16 bits are 0xFFFF is taken as a sign-extended 16-bit length (Firebird's
 * fixupLength). Returns a view. */
FBW_API fbw_bytes fbw_xdr_bytes(fbw_rd *r, size_t max);
/* Fixed-size opaque of n bytes plus padding to 4. */
FBW_API fbw_bytes fbw_xdr_opaque(fbw_rd *r, size_t n);
/* Raw n bytes, no padding. */
FBW_API fbw_bytes fbw_xdr_raw(fbw_rd *r, size_t n);
/* Skip n raw bytes. */
FBW_API void fbw_xdr_skip(fbw_rd *r, size_t n);

/* Writer over an fbw_buf; errors (only FBW_E_NOMEM) are sticky in w->rc. */
typedef struct fbw_wr {
    fbw_buf *b;
    int rc;
} fbw_wr;

static inline void fbw_wr_init(fbw_wr *w, fbw_buf *b) { w->b = b; w->rc = FBW_OK; }
FBW_API void fbw_xdr_put_u32(fbw_wr *w, uint32_t v);
static inline void fbw_xdr_put_i32(fbw_wr *w, int32_t v) { fbw_xdr_put_u32(w, (uint32_t)v); }
/* xdr_short: the 16-bit value sign-extended to 4 bytes, as Firebird sends it. */
FBW_API void fbw_xdr_put_short(fbw_wr *w, uint16_t v);
FBW_API void fbw_xdr_put_i64(fbw_wr *w, int64_t v);
/* Counted opaque: length, bytes, zero padding. */
FBW_API void fbw_xdr_put_bytes(fbw_wr *w, const void *p, size_t n);
static inline void fbw_xdr_put_str(fbw_wr *w, const char *s);
/* Fixed opaque: bytes + zero padding. */
FBW_API void fbw_xdr_put_opaque(fbw_wr *w, const void *p, size_t n);
/* Raw bytes, no padding. */
FBW_API void fbw_xdr_put_raw(fbw_wr *w, const void *p, size_t n);
/* Zero padding for n data bytes already written raw. */
FBW_API void fbw_xdr_put_pad(fbw_wr *w, size_t n);

#include <string.h>
static inline void fbw_xdr_put_str(fbw_wr *w, const char *s)
{
    fbw_xdr_put_bytes(w, s, s ? strlen(s) : 0);
}

/* Little-endian helpers for parameter blocks and SRP data (not XDR, but bounded the same way). */
static inline uint32_t fbw_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint16_t fbw_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

#endif
