/* SPDX-License-Identifier: MIT */
/* bstream.c - walking the batch blob stream of op_batch_blob_stream across packets (bstream.h). */
#include "bstream.h"

#include <string.h>

#define BPB_VERSION1 1
#define BPB_TYPE 3        /* isc_bpb_type */
#define BPB_TYPE_STREAM 1 /* isc_bpb_type_stream */
#define SEG_ALIGN 2       /* IBatch::BLOB_SEGHDR_ALIGN: a segment length starts at an even offset */

void fbw_bstream_init(fbw_bstream *s, uint16_t align)
{
    memset(s, 0, sizeof *s);
    s->align = align;
}

int fbw_bpb_segmented(const uint8_t *bpb, size_t n)
{
    if (n < 1 || bpb[0] != BPB_VERSION1)
        return -1;
    for (size_t i = 1; i < n;) { /* clumplets: tag, length byte, value */
        if (n - i < 2 || n - i - 2 < bpb[i + 1])
            return -1;
        uint8_t tag = bpb[i], len = bpb[i + 1];
        if (tag == BPB_TYPE) {
            uint32_t v = 0; /* little-endian, as gds__vax_integer reads it */
            for (uint8_t k = 0; k < len && k < 4; k++)
                v |= (uint32_t)bpb[i + 2 + k] << (8 * k);
            return (v & BPB_TYPE_STREAM) ? 0 : 1;
        }
        i += 2u + len;
    }
    return 1;
}

/* One walk over one packet's stream: pos counts stream bytes from the packet's start. */
typedef struct walk {
    fbw_rd *r;
    fbw_bstream *s;
    uint32_t pos, left; /* stream bytes done in this packet, still to come */
} walk;

static void skip_gap(walk *w, uint32_t align, int in_blob)
{
    uint32_t a = w->pos % align ? align - w->pos % align : 0;
    w->pos += a;
    w->left -= a;
    if (in_blob)
        w->s->blob_left -= a;
}

static int read_header(walk *w, uint32_t *blobs)
{
    (void)fbw_xdr_u32(w->r); /* the batch's blob id, high and low word */
    (void)fbw_xdr_u32(w->r);
    uint32_t size = fbw_xdr_u32(w->r), bpb = fbw_xdr_u32(w->r);
    if (w->r->rc != FBW_OK)
        return w->r->rc;
    if (bpb > size)
        return fbw_rd_fail(w->r, FBW_E_PROTO, "batch blob stream: a BPB longer than its blob");
    w->pos += FBW_BSTREAM_HEAD;
    w->left -= FBW_BSTREAM_HEAD;
    w->s->blob_left = size;
    w->s->bpb_left = bpb;
    w->s->seg_left = 0;
    w->s->bpb_n = 0;
    if (bpb == 0)
        w->s->segmented = w->s->default_segmented;
    (*blobs)++;
    return FBW_OK;
}

static int read_bpb(walk *w)
{
    fbw_bstream *s = w->s;
    uint32_t n = s->bpb_left < w->left ? s->bpb_left : w->left;
    fbw_bytes b = fbw_xdr_raw(w->r, n);
    if (w->r->rc != FBW_OK)
        return w->r->rc;
    if (s->bpb_n + n <= FBW_BSTREAM_BPB_MAX) {
        memcpy(s->bpb + s->bpb_n, b.p, n);
        s->bpb_n = (uint8_t)(s->bpb_n + n);
    } else if (s->bpb_n || n < s->bpb_left) {
        return fbw_rd_fail(w->r, FBW_E_UNSUPPORTED,
                           "batch blob stream: a BPB of more than 255 bytes cut by a packet end");
    }
    const uint8_t *whole = s->bpb_n ? s->bpb : b.p;
    size_t whole_n = s->bpb_n ? s->bpb_n : n;
    w->pos += n;
    w->left -= n;
    s->blob_left -= n;
    s->bpb_left -= n;
    if (s->bpb_left == 0) {
        int seg = fbw_bpb_segmented(whole, whole_n);
        if (seg < 0)
            return fbw_rd_fail(w->r, FBW_E_PROTO, "batch blob stream: a blob's BPB is not a version 1 BPB");
        s->segmented = (uint8_t)seg;
        s->bpb_n = 0;
    }
    return FBW_OK;
}

static int read_data(walk *w)
{
    fbw_bstream *s = w->s;
    uint32_t n = s->blob_left < w->left ? s->blob_left : w->left;
    if (s->segmented) {
        if (s->seg_left == 0) {
            if (w->pos % SEG_ALIGN) {
                skip_gap(w, SEG_ALIGN, 1);
                return FBW_OK;
            }
            if (w->left < 2 || s->blob_left < 2)
                return fbw_rd_fail(w->r, FBW_E_PROTO, "batch blob stream: a segment length cut off");
            uint16_t seg = fbw_xdr_u16(w->r); /* 4 bytes on the wire, 2 in the stream */
            if (w->r->rc != FBW_OK)
                return w->r->rc;
            w->pos += 2;
            w->left -= 2;
            s->blob_left -= 2;
            if (seg > s->blob_left)
                return fbw_rd_fail(w->r, FBW_E_PROTO, "batch blob stream: a segment longer than its blob");
            s->seg_left = seg;
        }
        n = s->seg_left < w->left ? s->seg_left : w->left;
        s->seg_left -= n;
    }
    (void)fbw_xdr_raw(w->r, n);
    if (w->r->rc != FBW_OK)
        return w->r->rc;
    w->pos += n;
    w->left -= n;
    s->blob_left -= n;
    return FBW_OK;
}

int fbw_bstream_walk(fbw_rd *r, uint32_t length, fbw_bstream *s, uint32_t *blobs)
{
    if (s->align == 0 || length % s->align)
        return fbw_rd_fail(r, FBW_E_PROTO, "batch blob stream: length not a multiple of the blob alignment");
    walk w = {r, s, 0, length};
    while (w.left && r->rc == FBW_OK) {
        if (s->blob_left == 0) {
            if (w.pos % s->align)
                skip_gap(&w, s->align, 0);
            else if (w.left < FBW_BSTREAM_HEAD)
                break; /* the sender keeps a cut header for its next packet */
            else
                read_header(&w, blobs);
        } else if (s->bpb_left) {
            read_bpb(&w);
        } else {
            read_data(&w);
        }
    }
    return r->rc;
}
