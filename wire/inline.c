/* SPDX-License-Identifier: MIT */
/* inline.c - the inline blob cache of a connection (inline.h). A list in arrival order: a fetch
 * brings at most a few hundred, and a reader takes them in about the order they came. */
#include "inline.h"

#include "blob.h"

#include <stdlib.h>
#include <string.h>

typedef struct item {
    uint16_t tr;
    uint32_t hi, lo;
    fbw_buf data;
    fbw_inline_meta meta; /* the server's blob info and the segment count */
} item;

struct fbw_inline {
    item *v;
    size_t n, cap;
    size_t bytes;
};

void fbw_inline_free(fbw_inline *in)
{
    if (!in)
        return;
    for (size_t i = 0; i < in->n; i++)
        fbw_buf_free(&in->v[i].data);
    free(in->v);
    free(in);
}

static void drop(fbw_inline *in, size_t i)
{
    in->bytes -= in->v[i].data.len;
    fbw_buf_free(&in->v[i].data);
    memmove(&in->v[i], &in->v[i + 1], (in->n - i - 1) * sizeof *in->v);
    in->n--;
}

int fbw_inline_put(fbw_conn *c, const fbw_pkt *p)
{
    fbw_inline **slot = fbw_conn_inline_slot(c);
    fbw_buf data;
    fbw_buf_init(&data);
    fbw_err e;
    fbw_err_clear(&e);
    fbw_inline_meta meta = {0};
    int rc = fbw_blob_segments_parse(p->u.inline_blob.data.p, p->u.inline_blob.data.n, &data,
                                     &meta.nsegs, &e);
    /* The info the server sends with the blob is what op_info_blob would answer: kept, so an
     * inlined blob reports its length and segments like one read from the server. */
    if (rc == FBW_OK && p->u.inline_blob.info.n)
        meta.have_info = fbw_blob_info_parse(p->u.inline_blob.info.p, p->u.inline_blob.info.n,
                                             &meta.info, &e) == FBW_OK;
    if (rc == FBW_E_BADVALUE)
        rc = FBW_E_PROTO;
    size_t limit = fbw_conn_inline_cache(c);
    if (rc || data.len > limit || (!*slot && !(*slot = calloc(1, sizeof **slot)))) {
        fbw_buf_free(&data);
        return rc == FBW_OK || rc == FBW_E_PROTO ? rc : FBW_E_NOMEM;
    }
    fbw_inline *in = *slot;
    for (size_t i = 0; i < in->n; i++) /* the same blob again (a refetch): keep the newest */
        if (in->v[i].tr == p->u.inline_blob.tr && in->v[i].hi == p->u.inline_blob.id_hi &&
            in->v[i].lo == p->u.inline_blob.id_lo) {
            drop(in, i);
            break;
        }
    while (in->n && in->bytes + data.len > limit)
        drop(in, 0);
    if (in->n == in->cap) {
        size_t ncap = in->cap ? in->cap * 2 : 32;
        item *v = realloc(in->v, ncap * sizeof *v);
        if (!v) {
            fbw_buf_free(&data);
            return FBW_E_NOMEM;
        }
        in->v = v;
        in->cap = ncap;
    }
    in->v[in->n++] = (item){p->u.inline_blob.tr, p->u.inline_blob.id_hi, p->u.inline_blob.id_lo, data,
                            meta};
    in->bytes += data.len;
    return FBW_OK;
}

int fbw_inline_take(fbw_conn *c, uint16_t tr, uint32_t hi, uint32_t lo, uint8_t **data, size_t *n,
                    fbw_inline_meta *meta)
{
    fbw_inline *in = *fbw_conn_inline_slot(c);
    for (size_t i = 0; in && i < in->n; i++) {
        item *it = &in->v[i];
        if (it->tr != tr || it->hi != hi || it->lo != lo)
            continue;
        *n = fbw_buf_avail(&it->data);
        *data = it->data.data; /* handed over: the buffer's bytes start at data (never consumed) */
        *meta = it->meta;
        in->bytes -= it->data.len;
        fbw_buf_init(&it->data);
        drop(in, i);
        return 1;
    }
    return 0;
}

void fbw_inline_forget_tx(fbw_conn *c, uint16_t tr)
{
    fbw_inline *in = *fbw_conn_inline_slot(c);
    for (size_t i = in ? in->n : 0; i-- > 0;)
        if (in->v[i].tr == tr)
            drop(in, i);
}
