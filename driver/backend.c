/* SPDX-License-Identifier: MIT */
/* backend.c - helpers every backend shares: buffered result sets, the connection-loss test, the
 * clock and the shared transaction's restart rule. */
#include "backend.h"

#include "status.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

void sbdrv_be_result_reset(sbdrv_be_result *r)
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

void sbdrv_be_result_free(sbdrv_be_result *r)
{
    free(r->cells);
    free(r->arena);
    memset(r, 0, sizeof *r);
}

void sbdrv_be_result_set_cols(sbdrv_be_result *r, uint32_t ncols)
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
    if (ncap * elem > SBDRV_BE_RESULT_MAX + SBDRV_BE_RESULT_MAX / 2)
        return fbw_err_set(err, FBW_E_UNSUPPORTED, "result set exceeds %zu MiB",
                           SBDRV_BE_RESULT_MAX >> 20);
    void *np = realloc(*p, ncap * elem);
    if (np == NULL)
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory buffering a result set");
    *p = np;
    *cap = ncap;
    return FBW_OK;
}

int sbdrv_be_result_add(sbdrv_be_result *r, const void *p, size_t len, fbw_err *err)
{
    if (len > UINT32_MAX || r->arena_len + len > SBDRV_BE_RESULT_MAX)
        return fbw_err_set(err, FBW_E_UNSUPPORTED, "result set exceeds %zu MiB",
                           SBDRV_BE_RESULT_MAX >> 20);
    int rc = grow((void **)&r->cells, &r->cells_cap, r->ncells + 1, sizeof *r->cells, err);
    if (rc == FBW_OK && p != NULL)
        rc = grow((void **)&r->arena, &r->arena_cap, r->arena_len + len, 1, err);
    if (rc != FBW_OK)
        return rc;
    sbdrv_be_cell *c = &r->cells[r->ncells++];
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

const char *sbdrv_be_cell_ptr(const sbdrv_be_result *r, size_t i)
{
    const sbdrv_be_cell *c = &r->cells[i];
    if (c->null)
        return NULL;
    /* An empty string must still be non-NULL: point at a static "" when there is no arena. */
    return r->arena ? r->arena + c->off : "";
}

/* A fatal return code (the library closed the connection) or the library's CONNECTION_LOST class
 * (network failure, shutdown, attachment killed: status.h). */
int sbdrv_be_conn_lost(int rc, const fbw_err *err)
{
    return fbw_is_fatal(rc) || fbw_err_in_class(err, FBW_EC_CONNECTION_LOST);
}

uint64_t sbdrv_be_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int sbdrv_be_shared_due(const sbdrv_be_conf *conf, const sbdrv_be_shared_age *age)
{
    return (conf->restart_statements && age->statements >= conf->restart_statements) ||
           (conf->restart_ms && sbdrv_be_now_ms() - age->started_ms >= conf->restart_ms);
}

void sbdrv_be_shared_started(sbdrv_be_shared_age *age, unsigned statements)
{
    age->statements = statements;
    age->started_ms = sbdrv_be_now_ms();
}
