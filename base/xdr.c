/* SPDX-License-Identifier: MIT */
/* xdr.c - bounded XDR primitives (src/common/xdr.cpp semantics, big-endian on TCP). */
#include "xdr.h"

#include <string.h>

void fbw_rd_init(fbw_rd *r, const void *p, size_t n, int short_rc)
{
    r->base = r->p = p;
    r->end = n ? r->p + n : r->p; /* an empty reply may come as (NULL, 0): NULL + 0 is undefined in C */
    r->rc = FBW_OK;
    r->short_rc = short_rc;
    r->what = NULL;
    r->fail_at = NULL;
}

int fbw_rd_fail(fbw_rd *r, int rc, const char *what)
{
    if (r->rc == FBW_OK) {
        r->rc = rc;
        r->what = what;
        r->fail_at = r->p;
    }
    r->p = r->end; /* every later read fails too */
    return r->rc;
}

/* Returns a pointer to n readable bytes and advances, or NULL after recording a shortfall. */
static const uint8_t *take(fbw_rd *r, size_t n)
{
    if (r->rc != FBW_OK)
        return NULL;
    if ((size_t)(r->end - r->p) < n) {
        fbw_rd_fail(r, r->short_rc, "truncated data");
        return NULL;
    }
    const uint8_t *q = r->p;
    r->p += n;
    return q;
}

uint32_t fbw_xdr_u32(fbw_rd *r)
{
    const uint8_t *q = take(r, 4);
    if (!q)
        return 0;
    return (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
}

int32_t fbw_xdr_i32(fbw_rd *r) { return (int32_t)fbw_xdr_u32(r); }

uint16_t fbw_xdr_u16(fbw_rd *r) { return (uint16_t)(fbw_xdr_u32(r) & 0xFFFF); }

int64_t fbw_xdr_i64(fbw_rd *r)
{
    uint64_t hi = fbw_xdr_u32(r);
    uint64_t lo = fbw_xdr_u32(r);
    return (int64_t)(hi << 32 | lo);
}

static size_t pad4(size_t n) { return (4 - (n & 3)) & 3; }

fbw_bytes fbw_xdr_bytes(fbw_rd *r, size_t max)
{
    fbw_bytes v = {NULL, 0};
    uint32_t n = fbw_xdr_u32(r);
    if (r->rc != FBW_OK)
        return v;
    /* fixupLength: old peers sign-extended 16-bit lengths >= 32 KiB. */
    if ((n & 0xFFFF0000u) == 0xFFFF0000u)
        n &= 0xFFFF;
    if (n > max) {
        fbw_rd_fail(r, FBW_E_PROTO, "counted string longer than allowed");
        return v;
    }
    const uint8_t *q = take(r, n);
    if (!q)
        return v;
    if (!take(r, pad4(n)))
        return v;
    v.p = q;
    v.n = n;
    return v;
}

fbw_bytes fbw_xdr_opaque(fbw_rd *r, size_t n)
{
    fbw_bytes v = {NULL, 0};
    const uint8_t *q = take(r, n);
    if (!q || !take(r, pad4(n)))
        return v;
    v.p = q;
    v.n = n;
    return v;
}

fbw_bytes fbw_xdr_raw(fbw_rd *r, size_t n)
{
    fbw_bytes v = {NULL, 0};
    const uint8_t *q = take(r, n);
    if (q) {
        v.p = q;
        v.n = n;
    }
    return v;
}

void fbw_xdr_skip(fbw_rd *r, size_t n) { (void)take(r, n); }

static void put(fbw_wr *w, const void *p, size_t n)
{
    if (w->rc != FBW_OK || n == 0)
        return;
    if (fbw_buf_append(w->b, p, n) != FBW_OK)
        w->rc = FBW_E_NOMEM;
}

void fbw_xdr_put_u32(fbw_wr *w, uint32_t v)
{
    uint8_t q[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    put(w, q, 4);
}

void fbw_xdr_put_short(fbw_wr *w, uint16_t v) { fbw_xdr_put_i32(w, (int32_t)(int16_t)v); }

void fbw_xdr_put_i64(fbw_wr *w, int64_t v)
{
    fbw_xdr_put_u32(w, (uint32_t)((uint64_t)v >> 32));
    fbw_xdr_put_u32(w, (uint32_t)v);
}

void fbw_xdr_put_pad(fbw_wr *w, size_t n)
{
    static const uint8_t zero[4] = {0, 0, 0, 0};
    put(w, zero, pad4(n));
}

void fbw_xdr_put_bytes(fbw_wr *w, const void *p, size_t n)
{
    fbw_xdr_put_u32(w, (uint32_t)n);
    put(w, p, n);
    fbw_xdr_put_pad(w, n);
}

void fbw_xdr_put_opaque(fbw_wr *w, const void *p, size_t n)
{
    put(w, p, n);
    fbw_xdr_put_pad(w, n);
}

void fbw_xdr_put_raw(fbw_wr *w, const void *p, size_t n) { put(w, p, n); }
