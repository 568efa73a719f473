/* SPDX-License-Identifier: MIT */
/* compress.c - zlib stream filters for Firebird wire compression. */
#include "compress.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* zlib counts in uInt; hand it input in slices well below that. */
#define ZLIB_SLICE ((size_t)1 << 30)
/* Output space asked for per zlib call: enough for a typical packet in one go, small enough that
 * a huge input does not reserve a huge buffer up front. */
#define OUT_MIN ((size_t)4096)
#define OUT_MAX ((size_t)1 << 20)

struct fbw_deflater {
    z_stream zs;
    int broken; /* zlib failed: the stream state is undefined, refuse further use */
};

struct fbw_inflater {
    z_stream zs;
    int broken;
    int ended; /* the peer finished its stream (Firebird never does) */
    size_t max_out;
};

static size_t clamp(size_t v, size_t lo, size_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static const char *zmsg(const z_stream *zs, int zrc)
{
    return zs->msg ? zs->msg : zError(zrc);
}

int fbw_deflater_new(fbw_deflater **out, fbw_err *err)
{
    fbw_deflater *d = calloc(1, sizeof *d);
    int rc = FBW_OK;
    if (!d) {
        rc = fbw_err_set(err, FBW_E_NOMEM, "out of memory creating deflater");
        goto out;
    }
    int zrc = deflateInit(&d->zs, Z_DEFAULT_COMPRESSION);
    if (zrc != Z_OK) {
        rc = fbw_err_set(err, zrc == Z_MEM_ERROR ? FBW_E_NOMEM : FBW_E_CRYPT,
                         "deflateInit: %s", zmsg(&d->zs, zrc));
        free(d);
        d = NULL;
    }
out:
    *out = d;
    return rc;
}

/* Run deflate over the current input slice with `flush` until zlib has no more output pending
 * (it returns with output space left over). */
static int deflate_slice(fbw_deflater *d, int flush, fbw_buf *out, fbw_err *err)
{
    z_stream *zs = &d->zs;
    do {
        size_t room = clamp(deflateBound(zs, zs->avail_in) + 16, OUT_MIN, OUT_MAX);
        if (fbw_buf_reserve(out, room))
            return fbw_err_set(err, FBW_E_NOMEM, "out of memory compressing %u bytes",
                               zs->avail_in);
        zs->next_out = fbw_buf_tail(out);
        zs->avail_out = (uInt)room;
        int zrc = deflate(zs, flush);
        fbw_buf_added(out, room - zs->avail_out);
        /* Z_BUF_ERROR only says "no progress possible", e.g. a repeated flush: harmless. */
        if (zrc != Z_OK && zrc != Z_BUF_ERROR) {
            d->broken = 1;
            return fbw_err_set(err, FBW_E_CRYPT, "deflate: %s", zmsg(zs, zrc));
        }
    } while (zs->avail_out == 0);
    return FBW_OK;
}

int fbw_deflater_flush(fbw_deflater *d, const uint8_t *in, size_t n, fbw_buf *out, fbw_err *err)
{
    int rc = FBW_OK;
    if (d->broken)
        return fbw_err_set(err, FBW_E_CRYPT, "deflate stream unusable after an earlier error");
    while (n > 0 && rc == FBW_OK) {
        size_t slice = n < ZLIB_SLICE ? n : ZLIB_SLICE;
        d->zs.next_in = (Bytef *)(uintptr_t)in; /* zlib's API is not const-correct */
        d->zs.avail_in = (uInt)slice;
        rc = deflate_slice(d, slice == n ? Z_SYNC_FLUSH : Z_NO_FLUSH, out, err);
        in += slice;
        n -= slice;
    }
    d->zs.next_in = NULL;
    d->zs.avail_in = 0;
    return rc;
}

void fbw_deflater_free(fbw_deflater *d)
{
    if (!d)
        return;
    deflateEnd(&d->zs);
    free(d);
}

int fbw_inflater_new(fbw_inflater **out, fbw_err *err)
{
    fbw_inflater *z = calloc(1, sizeof *z);
    int rc = FBW_OK;
    if (!z) {
        rc = fbw_err_set(err, FBW_E_NOMEM, "out of memory creating inflater");
        goto out;
    }
    z->max_out = FBW_INFLATE_MAX_OUT;
    int zrc = inflateInit(&z->zs);
    if (zrc != Z_OK) {
        rc = fbw_err_set(err, zrc == Z_MEM_ERROR ? FBW_E_NOMEM : FBW_E_CRYPT,
                         "inflateInit: %s", zmsg(&z->zs, zrc));
        free(z);
        z = NULL;
    }
out:
    *out = z;
    return rc;
}

void fbw_inflater_set_max_out(fbw_inflater *z, size_t max_out)
{
    z->max_out = max_out ? max_out : FBW_INFLATE_MAX_OUT;
}

/* Inflate the current input slice completely. `produced` counts this call's output across slices
 * so the cap applies to the whole call. */
static int inflate_slice(fbw_inflater *z, fbw_buf *out, size_t *produced, fbw_err *err)
{
    z_stream *zs = &z->zs;
    for (;;) {
        /* Never ask for more than one byte past the cap: overshoot is detected, not allocated. */
        size_t room = clamp((size_t)zs->avail_in * 4, OUT_MIN, OUT_MAX);
        if (room > z->max_out - *produced + 1)
            room = z->max_out - *produced + 1;
        if (fbw_buf_reserve(out, room))
            return fbw_err_set(err, FBW_E_NOMEM, "out of memory inflating");
        zs->next_out = fbw_buf_tail(out);
        zs->avail_out = (uInt)room;
        uInt in_before = zs->avail_in;
        int zrc = inflate(zs, Z_NO_FLUSH);
        size_t got = room - zs->avail_out;
        fbw_buf_added(out, got);
        *produced += got;
        if (*produced > z->max_out)
            return fbw_err_set(err, FBW_E_PROTO,
                               "inflate: one read expands beyond %zu bytes (decompression bomb?)",
                               z->max_out);
        if (zrc == Z_STREAM_END) {
            z->ended = 1;
            if (zs->avail_in > 0)
                return fbw_err_set(err, FBW_E_CRYPT, "inflate: %u bytes after the end of the "
                                   "compressed stream", zs->avail_in);
            return FBW_OK;
        }
        if (zrc != Z_OK && zrc != Z_BUF_ERROR)
            return fbw_err_set(err, zrc == Z_MEM_ERROR ? FBW_E_NOMEM : FBW_E_CRYPT,
                               "inflate: %s", zmsg(zs, zrc));
        /* Done when the input is used up and zlib did not fill the space (nothing pending). */
        if (zs->avail_in == 0 && zs->avail_out > 0)
            return FBW_OK;
        if (got == 0 && zs->avail_in == in_before) /* no progress: cannot happen, never spin */
            return fbw_err_set(err, FBW_E_CRYPT, "inflate made no progress");
    }
}

int fbw_inflater_feed(fbw_inflater *z, const uint8_t *in, size_t n, fbw_buf *out, fbw_err *err)
{
    size_t keep = fbw_buf_avail(out); /* reserve() may compact, so remember the readable size */
    size_t produced = 0;
    int rc = FBW_OK;
    if (z->broken) {
        rc = fbw_err_set(err, FBW_E_CRYPT, "inflate stream unusable after an earlier error");
        goto out;
    }
    if (n > 0 && z->ended) {
        rc = fbw_err_set(err, FBW_E_CRYPT, "inflate: %zu bytes after the end of the compressed "
                         "stream", n);
        goto out;
    }
    while (n > 0 && rc == FBW_OK) {
        size_t slice = n < ZLIB_SLICE ? n : ZLIB_SLICE;
        z->zs.next_in = (Bytef *)(uintptr_t)in;
        z->zs.avail_in = (uInt)slice;
        rc = inflate_slice(z, out, &produced, err);
        in += slice;
        n -= slice;
    }
out:
    z->zs.next_in = NULL;
    z->zs.avail_in = 0;
    if (rc) {
        z->broken = 1;
        out->len = out->start + keep; /* drop partial output of the failed call */
    }
    return rc;
}

void fbw_inflater_free(fbw_inflater *z)
{
    if (!z)
        return;
    inflateEnd(&z->zs);
    free(z);
}
