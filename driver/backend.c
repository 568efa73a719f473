/* SPDX-License-Identifier: MIT */
/* backend.c - helpers every backend shares: buffered result sets and connection-loss test. */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

void fbw_be_result_reset(fbw_be_result *r)
{
    r->has_set = 0;
    r->ncols = 0;
    r->nrows = 0;
    r->affected = 0;
    r->deferred = 0;
    r->deferred_write = 0;
    r->ncells = 0;
    r->arena_len = 0;
}

void fbw_be_result_free(fbw_be_result *r)
{
    free(r->cells);
    free(r->arena);
    memset(r, 0, sizeof *r);
}

void fbw_be_result_set_cols(fbw_be_result *r, uint32_t ncols)
{
    r->has_set = 1;
    r->ncols = ncols;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem, fbw_err *err)
{
    if (need <= *cap)
        return FBW_OK;
    size_t ncap = *cap ? *cap : 64;
    while (ncap < need)
        ncap *= 2;
    if (ncap * elem > FBW_BE_RESULT_MAX + FBW_BE_RESULT_MAX / 2)
        return fbw_err_set(err, FBW_E_UNSUPPORTED, "result set exceeds %zu MiB",
                           FBW_BE_RESULT_MAX >> 20);
    void *np = realloc(*p, ncap * elem);
    if (np == NULL)
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory buffering a result set");
    *p = np;
    *cap = ncap;
    return FBW_OK;
}

int fbw_be_result_add(fbw_be_result *r, const void *p, size_t len, fbw_err *err)
{
    if (len > UINT32_MAX || r->arena_len + len > FBW_BE_RESULT_MAX)
        return fbw_err_set(err, FBW_E_UNSUPPORTED, "result set exceeds %zu MiB",
                           FBW_BE_RESULT_MAX >> 20);
    int rc = grow((void **)&r->cells, &r->cells_cap, r->ncells + 1, sizeof *r->cells, err);
    if (rc == FBW_OK && p != NULL)
        rc = grow((void **)&r->arena, &r->arena_cap, r->arena_len + len, 1, err);
    if (rc != FBW_OK)
        return rc;
    fbw_be_cell *c = &r->cells[r->ncells++];
    c->off = r->arena_len;
    c->len = p ? (uint32_t)len : 0;
    c->null = p == NULL;
    if (p != NULL && len > 0) {
        memcpy(r->arena + r->arena_len, p, len);
        r->arena_len += len;
    }
    if (r->ncols > 0 && r->ncells % r->ncols == 0)
        r->nrows++;
    return FBW_OK;
}

const char *fbw_be_cell_ptr(const fbw_be_result *r, size_t i)
{
    const fbw_be_cell *c = &r->cells[i];
    if (c->null)
        return NULL;
    /* An empty string must still be non-NULL: point at a static "" when there is no arena. */
    return r->arena ? r->arena + c->off : "";
}

/* Status codes that mean the attachment is gone (network failure, shutdown, killed). */
static const uint32_t LOST_GDS[] = {
    335544721u, /* isc_network_error */
    335544722u, /* isc_net_connect_err */
    335544726u, /* isc_net_read_err */
    335544727u, /* isc_net_write_err */
    335544741u, /* isc_lost_db_connection */
    335544648u, /* isc_conn_lost */
    335544528u, /* isc_shutdown */
    335544856u, /* isc_att_shutdown */
    335544324u, /* isc_bad_db_handle */
};

int fbw_be_conn_lost(int rc, const fbw_err *err)
{
    if (fbw_is_fatal(rc))
        return 1;
    if (err == NULL)
        return 0;
    for (int i = 0; i < err->ngds && i < FBW_ERR_GDS_MAX; i++)
        for (size_t k = 0; k < sizeof LOST_GDS / sizeof LOST_GDS[0]; k++)
            if (err->gds[i] == LOST_GDS[k])
                return 1;
    return 0;
}
