/* SPDX-License-Identifier: MIT */
/* replay_results.c - comparing a replayed execution with the capture's replies and keeping one
 * connection's counts, failures and differences (replay_results.h). */
#include "replay_results.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rp_grow_for_one(void **a, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 8;
    void *p = realloc(*a, c * size);
    if (!p)
        return -1;
    *a = p;
    *cap = c;
    return 0;
}

int rp_compare(const rp_exec *x, int results_ignore)
{
    const pcaptool_result *cap = &x->cap, *rep = &x->rep;
    if (results_ignore || !x->ok)
        return PCAPTOOL_FP_NOT_COMPARED;
    if (x->kind == PCAPTOOL_STEP_BLOB_READ) { /* its bytes: as many as the capture read */
        if (cap->unknown)
            return PCAPTOOL_FP_NOT_COMPARED;
        return rep->rows == cap->rows && rep->hash == cap->hash ? PCAPTOOL_FP_MATCH : PCAPTOOL_FP_DIFFERENT;
    }
    int compared = 0, same = 1;
    if (cap->rows >= 0) {
        compared = 1;
        same &= rep->rows == cap->rows && (cap->unknown || rep->unknown || rep->hash == cap->hash);
    }
    if (cap->affected >= 0 && cap->rows < 0 && rep->rows < 0) {
        compared = 1;
        same &= rep->affected == cap->affected;
    }
    return !compared ? PCAPTOOL_FP_NOT_COMPARED : same ? PCAPTOOL_FP_MATCH : PCAPTOOL_FP_DIFFERENT;
}

static void keep_diff(rp_tally *t, const rp_exec *x)
{
    if (!t->keep_all_diffs && t->ndiffs >= RP_MAX_DIFFS_SHOWN) {
        t->more_diffs++;
        return;
    }
    if (rp_grow_for_one((void **)&t->diffs, &t->diffs_cap, t->ndiffs, sizeof *t->diffs)) {
        t->nomem = 1;
        return;
    }
    rp_diff *d = &t->diffs[t->ndiffs++];
    d->step = x->step;
    d->stmt = x->stmt;
    d->kind = x->kind;
    d->read_exec = x->read_exec;
    d->read_row = x->read_row;
    d->read_col = x->read_col;
    d->sql = x->sql ? strdup(x->sql) : NULL;
    if (x->sql && !d->sql)
        t->nomem = 1;
    d->cap = x->cap;
    d->rep = x->rep;
}

void rp_tally_result(rp_tally *t, const rp_exec *x, int res)
{
    if (res != PCAPTOOL_FP_NOT_COMPARED) {
        t->compared++;
        t->matched += res == PCAPTOOL_FP_MATCH;
    }
    if (res == PCAPTOOL_FP_DIFFERENT) {
        t->different++;
        keep_diff(t, x);
    }
}

void rp_tally_failure(rp_tally *t, size_t step, int kind, int stmt, int tx, const fbw_err *e,
                      const char *fallback)
{
    t->kinds[kind].failed++;
    if (t->nfail >= RP_MAX_FAILURES_KEPT) { /* memory stays bounded when every step fails */
        t->more_fail++;
        return;
    }
    if (rp_grow_for_one((void **)&t->fail, &t->fail_cap, t->nfail, sizeof *t->fail)) {
        t->nomem = 1;
        return;
    }
    rp_failure *f = &t->fail[t->nfail++];
    memset(f, 0, sizeof *f);
    f->step = step;
    f->kind = kind;
    f->stmt = stmt;
    f->tx = tx;
    snprintf(f->message, sizeof f->message, "%s", e && e->msg[0] ? e->msg : fallback);
    if (e)
        snprintf(f->sqlstate, sizeof f->sqlstate, "%s", e->sqlstate);
}

void rp_tally_free(rp_tally *t)
{
    for (size_t k = 0; k < t->ndiffs; k++)
        free(t->diffs[k].sql);
    free(t->diffs);
    free(t->fail);
    t->diffs = NULL;
    t->fail = NULL;
    t->ndiffs = t->nfail = t->diffs_cap = t->fail_cap = 0;
}
