/* SPDX-License-Identifier: MIT */
/* reqfmt.c - the session decoder's knowledge of BLR requests: each compiled request's message
 * formats (from the blr_message declarations of its BLR, blr.c), found again by handle and message
 * number when op_send/op_start_and_send carry a message or the server answers op_receive with
 * one. op_transact's one-shot request is kept apart: its reply follows at once. */
#include "dec_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REQUESTS 4096 /* requests compiled at once; more is not a real client */

static void req_drop(req_fmt *q)
{
    for (unsigned i = 0; i < q->nmsgs; i++)
        free(q->msgs[i].f.cols);
    free(q->msgs);
    q->msgs = NULL;
    q->nmsgs = 0;
    q->why[0] = 0;
    q->unused = 1;
}

/* Fill q from the BLR; a BLR that cannot be walked leaves the reason in q->why. */
static int req_learn(fbw_dec *d, req_fmt *q, fbw_bytes blr)
{
    fbw_blr_msgdecl decl[FBW_BLR_MAX_MESSAGES];
    unsigned n = 0;
    fbw_err e;
    fbw_err_clear(&e);
    int rc = fbw_blr_request_scan(blr.p, blr.n, decl, FBW_BLR_MAX_MESSAGES, &n, &e);
    if (rc == FBW_OK && n) {
        q->msgs = calloc(n, sizeof *q->msgs);
        if (!q->msgs)
            return fbw_err_set(&d->err, FBW_E_NOMEM, "out of memory");
    }
    for (unsigned i = 0; rc == FBW_OK && i < n; i++) {
        req_msg *m = &q->msgs[i];
        m->number = decl[i].number;
        m->f.cols = calloc(decl[i].fields ? decl[i].fields : 1, sizeof *m->f.cols);
        if (!m->f.cols)
            return fbw_err_set(&d->err, FBW_E_NOMEM, "out of memory");
        m->f.cap = decl[i].fields;
        q->nmsgs = i + 1;
        rc = fbw_blr_request_fields(blr.p, blr.n, &decl[i], &m->f, &e);
    }
    if (rc != FBW_OK) {
        for (unsigned i = 0; i < q->nmsgs; i++)
            free(q->msgs[i].f.cols);
        free(q->msgs);
        q->msgs = NULL;
        q->nmsgs = 0;
        snprintf(q->why, sizeof q->why, "%.191s", e.msg);
    }
    return FBW_OK;
}

size_t fbw_req_compiled(fbw_dec *d, fbw_bytes blr)
{
    size_t i = 0;
    while (i < d->nreqs && !d->reqs[i].unused)
        i++;
    if (i == d->nreqs) {
        if (d->nreqs == MAX_REQUESTS)
            return 0;
        if (d->nreqs % 16 == 0) {
            req_fmt *n = realloc(d->reqs, (d->nreqs + 16) * sizeof *n);
            if (!n)
                return 0;
            d->reqs = n;
        }
        d->nreqs++;
    }
    req_fmt *q = &d->reqs[i];
    memset(q, 0, sizeof *q);
    q->pending = 1;
    if (req_learn(d, q, blr) != FBW_OK) {
        req_drop(q);
        return 0;
    }
    return i + 1;
}

static req_fmt *req_find(fbw_dec *d, uint16_t handle)
{
    for (size_t i = 0; i < d->nreqs; i++)
        if (!d->reqs[i].unused && !d->reqs[i].pending && d->reqs[i].handle == handle)
            return &d->reqs[i];
    return NULL;
}

void fbw_req_resolve(fbw_dec *d, size_t idx, int ok, uint16_t handle)
{
    if (!idx || idx > d->nreqs || d->reqs[idx - 1].unused || !d->reqs[idx - 1].pending)
        return;
    req_fmt *q = &d->reqs[idx - 1];
    if (!ok) {
        req_drop(q);
        return;
    }
    req_fmt *old = req_find(d, handle); /* a handle the server reuses: the old request is gone */
    if (old)
        req_drop(old);
    q->handle = handle;
    q->pending = 0;
}

void fbw_req_release(fbw_dec *d, uint16_t handle)
{
    req_fmt *q = req_find(d, handle);
    if (q)
        req_drop(q);
}

static const fbw_msgfmt *message_of(const req_fmt *q, uint16_t number, const char *what,
                                    fbw_err *err)
{
    if (q->why[0]) {
        fbw_err_set(err, FBW_E_UNSUPPORTED, "%s: %s", what, q->why);
        return NULL;
    }
    for (unsigned i = 0; i < q->nmsgs; i++)
        if (q->msgs[i].number == number)
            return &q->msgs[i].f;
    fbw_err_set(err, FBW_E_PROTO, "%s declares no message %u", what, number);
    return NULL;
}

const fbw_msgfmt *fbw_req_format(fbw_dec *d, uint16_t handle, uint16_t number, fbw_err *err)
{
    const req_fmt *q = req_find(d, handle);
    char what[48];
    snprintf(what, sizeof what, "request %u", handle);
    if (!q) {
        fbw_err_set(err, FBW_E_UNSUPPORTED, "no message format known for request %u (compiled "
                    "before the capture?)", handle);
        return NULL;
    }
    return message_of(q, number, what, err);
}

int fbw_req_transact(fbw_dec *d, fbw_bytes blr)
{
    req_drop(&d->trrq);
    memset(&d->trrq, 0, sizeof d->trrq);
    return req_learn(d, &d->trrq, blr);
}

const fbw_msgfmt *fbw_req_transact_format(fbw_dec *d, uint16_t number, fbw_err *err)
{
    return message_of(&d->trrq, number, "the op_transact BLR", err);
}

void fbw_req_free_all(fbw_dec *d)
{
    for (size_t i = 0; i < d->nreqs; i++)
        if (!d->reqs[i].unused)
            req_drop(&d->reqs[i]);
    free(d->reqs);
    d->reqs = NULL;
    d->nreqs = 0;
    req_drop(&d->trrq);
}
