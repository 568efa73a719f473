/* SPDX-License-Identifier: MIT */
/* pb.c - clumplet parameter blocks (src/common/classes/ClumpletWriter.cpp semantics). */
#include "pb.h"

#include "err.h"

#include <string.h>

void fbw_dpb_init(fbw_dpb *d)
{
    memset(d, 0, sizeof *d);
    fbw_buf_init(&d->data);
}

void fbw_dpb_free(fbw_dpb *d) { fbw_buf_wipe_free(&d->data); }

void fbw_dpb_add_bytes(fbw_dpb *d, uint8_t tag, const void *p, size_t n)
{
    if (d->rc)
        return;
    if (d->n == FBW_PB_MAX_ITEMS) {
        d->rc = FBW_E_USAGE;
        return;
    }
    fbw_pb_item *it = &d->item[d->n];
    it->tag = tag;
    it->off = d->data.len;
    it->len = n;
    if (fbw_buf_append(&d->data, p, n) != FBW_OK) {
        d->rc = FBW_E_NOMEM;
        return;
    }
    d->n++;
}

void fbw_dpb_add_str(fbw_dpb *d, uint8_t tag, const char *s) { fbw_dpb_add_bytes(d, tag, s, strlen(s)); }

void fbw_dpb_add_int(fbw_dpb *d, uint8_t tag, int32_t v)
{
    uint32_t u = (uint32_t)v;
    uint8_t le[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    fbw_dpb_add_bytes(d, tag, le, 4);
}

void fbw_dpb_add_flag(fbw_dpb *d, uint8_t tag) { fbw_dpb_add_bytes(d, tag, "", 0); }

static int any_wide(const fbw_dpb *d)
{
    for (int i = 0; i < d->n; i++)
        if (d->item[i].len > 255)
            return 1;
    return 0;
}

/* The clumplets after the header: 1-byte lengths, or 4-byte ones when wide. */
static int put_items(const fbw_dpb *d, int wide, fbw_buf *out, int rc)
{
    for (int i = 0; i < d->n && rc == FBW_OK; i++) {
        const fbw_pb_item *it = &d->item[i];
        uint8_t hdr[5] = {it->tag, (uint8_t)it->len, (uint8_t)(it->len >> 8), (uint8_t)(it->len >> 16),
                          (uint8_t)(it->len >> 24)};
        rc = fbw_buf_append(out, hdr, wide ? 5 : 2);
        if (rc == FBW_OK && it->len) /* flags only: d->data may still be NULL */
            rc = fbw_buf_append(out, d->data.data + it->off, it->len);
    }
    return rc;
}

int fbw_dpb_build(const fbw_dpb *d, fbw_buf *out)
{
    if (d->rc)
        return d->rc;
    int wide = any_wide(d);
    uint8_t version = wide ? FBW_DPB_VERSION2 : FBW_DPB_VERSION1;
    return put_items(d, wide, out, fbw_buf_append(out, &version, 1));
}

int fbw_spb_attach_build(const fbw_dpb *d, fbw_buf *out)
{
    if (d->rc)
        return d->rc;
    int wide = any_wide(d);
    static const uint8_t v2[] = {FBW_SPB_VERSION, FBW_SPB_CURRENT_VERSION}, v3[] = {FBW_SPB_VERSION3};
    int rc = wide ? fbw_buf_append(out, v3, sizeof v3) : fbw_buf_append(out, v2, sizeof v2);
    return put_items(d, wide, out, rc);
}

int fbw_pb_put_clumplet(fbw_buf *out, uint8_t tag, const void *p, size_t n)
{
    if (n > 255)
        return FBW_E_USAGE;
    uint8_t hdr[2] = {tag, (uint8_t)n};
    int rc = fbw_buf_append(out, hdr, 2);
    return rc ? rc : fbw_buf_append(out, p, n);
}

int fbw_pb_put_multipart(fbw_buf *out, uint8_t tag, const void *p, size_t n)
{
    const uint8_t *q = p;
    if (n > 254 * 256)
        return FBW_E_USAGE;
    for (unsigned seq = 0; n > 0; seq++) {
        size_t part = n > 254 ? 254 : n;
        uint8_t hdr[3] = {tag, (uint8_t)(part + 1), (uint8_t)seq};
        int rc = fbw_buf_append(out, hdr, 3);
        if (rc == FBW_OK)
            rc = fbw_buf_append(out, q, part);
        if (rc)
            return rc;
        q += part;
        n -= part;
    }
    return FBW_OK;
}
