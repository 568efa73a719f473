/* SPDX-License-Identifier: MIT */
/* blobset.c - the blobs of many rows read together (blobset.h). */
#include "blobset.h"

#include <stdlib.h>
#include <string.h>

#define NO_BLOB ((size_t)-1)

typedef struct entry {
    fbw_value id;
    fbw_blob *b;
    int queued;
} entry;

struct fbw_blobset {
    fbw_conn *conn;
    fbw_tx *tx;
    const fbw_stmt *st;
    size_t limit, left; /* left: the budget fbw_blob_share_limit counts down */
    entry *e;
    size_t n, cap;
    size_t *cells, ncells, cells_cap, ncols; /* (row, col) -> entry index or NO_BLOB, row-major */
    size_t rows_first, rows_n;
    fbw_value *vals;
    size_t vals_cap;
    fbw_err err;
};

int fbw_blobset_new(fbw_conn *c, size_t limit, fbw_blobset **out, fbw_err *err)
{
    fbw_blobset *bs = calloc(1, sizeof *bs);
    if (!bs)
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    bs->conn = c;
    bs->limit = bs->left = limit ? limit : FBW_BLOBSET_LIMIT_DEFAULT;
    fbw_err_clear(&bs->err);
    *out = bs;
    return FBW_OK;
}

void fbw_blobset_reset(fbw_blobset *bs)
{
    for (size_t i = 0; i < bs->n; i++)
        fbw_blob_free(bs->e[i].b); /* queues the close; it rides along with the next request */
    bs->n = 0;
    bs->ncells = bs->ncols = bs->rows_first = bs->rows_n = 0;
    bs->left = bs->limit;
    bs->tx = NULL;
    bs->st = NULL;
    fbw_err_clear(&bs->err);
}

void fbw_blobset_free(fbw_blobset *bs)
{
    if (!bs)
        return;
    fbw_blobset_reset(bs);
    free(bs->e);
    free(bs->cells);
    free(bs->vals);
    free(bs);
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return FBW_OK;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    void *q = realloc(*p, ncap * size);
    if (!q)
        return FBW_E_NOMEM;
    *p = q;
    *cap = ncap;
    return FBW_OK;
}

static int same_tx(fbw_blobset *bs, fbw_tx *tx, fbw_err *err)
{
    if (bs->tx && bs->tx != tx)
        return fbw_err_set(err, FBW_E_USAGE, "blob set holds blobs of another transaction: reset it");
    bs->tx = tx;
    return FBW_OK;
}

int fbw_blobset_add(fbw_blobset *bs, fbw_tx *tx, const fbw_value *id, size_t *index, fbw_err *err)
{
    if (!id || id->is_null || (id->type != FBW_SQL_BLOB && id->type != FBW_SQL_QUAD))
        return fbw_err_set(err, FBW_E_USAGE, "blob id must be a non-NULL BLOB or QUAD value");
    int rc = same_tx(bs, tx, err);
    if (rc)
        return rc;
    if (grow((void **)&bs->e, &bs->cap, bs->n + 1, sizeof *bs->e))
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    entry *e = &bs->e[bs->n];
    memset(e, 0, sizeof *e);
    e->id = *id;
    rc = fbw_blob_new(bs->conn, &e->b, err);
    if (rc)
        return rc;
    fbw_blob_share_limit(e->b, &bs->left, bs->limit);
    if (index)
        *index = bs->n;
    bs->n++;
    return FBW_OK;
}

int fbw_blobset_add_rows(fbw_blobset *bs, const fbw_stmt *st, fbw_tx *tx, size_t first,
                         size_t *added, fbw_err *err)
{
    const fbw_msgfmt *f = fbw_stmt_output(st);
    size_t rows = fbw_stmt_row_count(st), before = bs->n;
    if (added)
        *added = 0;
    if (bs->st && bs->st != st)
        return fbw_err_set(err, FBW_E_USAGE, "blob set holds rows of another statement: reset it");
    if (bs->rows_n && first != bs->rows_first + bs->rows_n)
        return fbw_err_set(err, FBW_E_USAGE, "rows must be added in order, from row %zu",
                           bs->rows_first + bs->rows_n);
    int has = 0;
    for (size_t j = 0; j < f->n; j++)
        has |= f->cols[j].type == FBW_SQL_BLOB;
    if (!has || first >= rows)
        return FBW_OK;
    int rc = same_tx(bs, tx, err);
    if (rc == FBW_OK && (grow((void **)&bs->vals, &bs->vals_cap, f->n, sizeof *bs->vals) ||
                         grow((void **)&bs->cells, &bs->cells_cap, bs->ncells + (rows - first) * f->n,
                              sizeof *bs->cells)))
        rc = fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    if (rc)
        return rc;
    if (!bs->rows_n)
        bs->rows_first = first;
    bs->st = st;
    bs->ncols = f->n;
    for (size_t i = first; i < rows; i++) {
        rc = fbw_stmt_row(st, i, bs->vals, err);
        for (size_t j = 0; j < f->n && rc == FBW_OK; j++) {
            size_t *cell = &bs->cells[bs->ncells + j];
            *cell = NO_BLOB;
            if (f->cols[j].type == FBW_SQL_BLOB && !bs->vals[j].is_null)
                rc = fbw_blobset_add(bs, tx, &bs->vals[j], cell, err);
        }
        if (rc)
            return rc;
        bs->ncells += f->n;
        bs->rows_n++;
    }
    if (added)
        *added = bs->n - before;
    return FBW_OK;
}

static int readable(const entry *e)
{
    return !fbw_blob_eof(e->b) && !fbw_blob_busy(e->b) &&
           fbw_blob_error(e->b)->code == FBW_OK;
}

int fbw_blobset_queue(void *arg)
{
    fbw_blobset *bs = arg;
    for (size_t i = 0; i < bs->n; i++) {
        entry *e = &bs->e[i];
        int rc = FBW_OK;
        if (!e->queued) {
            rc = fbw_blob_read_all(e->b, bs->tx, &e->id, NULL, 0);
            e->queued = rc == FBW_OK;
        } else if (readable(e)) { /* read-all continues by itself; this only covers a stall */
            rc = fbw_blob_read(e->b, FBW_BLOB_READ_MAX);
        }
        if (rc)
            return rc; /* FBW_WAIT: called again once the replies so far are in */
    }
    return FBW_OK;
}

int fbw_blobset_pending(const fbw_blobset *bs)
{
    for (size_t i = 0; i < bs->n; i++)
        if (!bs->e[i].queued || readable(&bs->e[i]) ||
            fbw_blob_busy(bs->e[i].b))
            return 1;
    return 0;
}

size_t fbw_blobset_count(const fbw_blobset *bs) { return bs->n; }
size_t fbw_blobset_inline_count(const fbw_blobset *bs)
{
    size_t k = 0;
    for (size_t i = 0; i < bs->n; i++)
        k += fbw_blob_was_inline(bs->e[i].b);
    return k;
}

const uint8_t *fbw_blobset_data(const fbw_blobset *bs, size_t i, size_t *n)
{
    *n = 0;
    if (i >= bs->n)
        return NULL;
    const entry *e = &bs->e[i];
    if (!fbw_blob_eof(e->b) || fbw_blob_error(e->b)->code != FBW_OK)
        return NULL;
    return fbw_blob_data(e->b, n);
}

const uint8_t *fbw_blobset_cell(const fbw_blobset *bs, size_t row, size_t col, size_t *n)
{
    *n = 0;
    if (row < bs->rows_first || row - bs->rows_first >= bs->rows_n || col >= bs->ncols)
        return NULL;
    size_t i = bs->cells[(row - bs->rows_first) * bs->ncols + col];
    return i == NO_BLOB ? NULL : fbw_blobset_data(bs, i, n);
}

const fbw_err *fbw_blobset_error(const fbw_blobset *bs)
{
    for (size_t i = 0; i < bs->n; i++)
        if (fbw_blob_error(bs->e[i].b)->code != FBW_OK)
            return fbw_blob_error(bs->e[i].b);
    return &bs->err;
}
