/* SPDX-License-Identifier: MIT */
/* replay_step.c - what every step handler shares (replay_step.h): waiting for a request and
 * telling a refused request from a broken connection, checking a reply, recording a failure,
 * finding the step's statement, and the captured parameters decoded as the client sent them.
 * replay_steps.c and replay_ops.c both sit on this file; it calls neither. */
#include "replay_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rp_add_failure(rp_step *r, size_t step, const pcaptool_step *s, const fbw_err *e,
                    const char *fallback)
{
    /* the capture's transaction numbering, not the small one */
    rp_tally_failure(r->tally, step, s->kind, s->stmt, rp_slots_orig_tx(r->sl, s->tx), e, fallback);
    if (step == r->step)
        r->step_ok = 0;
    r->failed++;
}

/* A fatal error ends the connection's replay (err: the client's error); any other code is fbwire
 * refusing the request, and the object's own error (stmt, tx) says more. */
int rp_step_waited(rp_step *r, int rc, fbw_err *err)
{
    if (rc == FBW_OK)
        return FBW_OK;
    if (fbw_is_fatal(rc) || fbw_conn_get_state(r->c) == FBW_CS_FAILED) {
        r->broken = 1;
        *err = *fbw_client_error(r->cl);
    }
    if (!err->msg[0])
        fbw_err_set(err, rc, "fbwire could not queue the request (%s)", fbw_rc_name(rc));
    return rc;
}

int rp_run_step(rp_step *r, int (*queue)(void *arg), fbw_err *err)
{
    return rp_step_waited(r, fbw_client_run(r->cl, queue, r), err);
}

/* The step failed if the request could not run or the server refused it: obj is the request's
 * own error record (statement, transaction, execute immediate result). */
void rp_check(rp_step *r, size_t i, int rc, const fbw_err *e, const fbw_err *obj, const char *what)
{
    if (obj->code)
        rp_add_failure(r, i, r->s, obj, what);
    else if (rc)
        rp_add_failure(r, i, r->s, e, what);
}

int rp_need_stmt(rp_step *r, size_t i, int prepared)
{
    const pcaptool_step *s = r->s;
    if (s->stmt && r->sl->st[s->stmt] && (!prepared || fbw_stmt_prepared(r->sl->st[s->stmt])))
        return 1;
    char msg[96];
    snprintf(msg, sizeof msg, "statement s%d is not %s in the replay", s->stmt,
             prepared ? "prepared" : "allocated");
    rp_add_failure(r, i, s, NULL, msg);
    return 0;
}

/* The captured values in the format the client sent them (its own BLR): the server converts them
 * to the parameters' types as it did for the client, so a TIMESTAMP bound to a DATE parameter
 * replays exactly. */
int rp_decode_as_sent(rp_step *r, size_t i)
{
    const pcaptool_step *s = r->s;
    fbw_msgfmt f = {s->msg_cols, s->msg_n, s->msg_n};
    free(r->rq.vals);
    r->rq.vals = calloc(f.n ? f.n : 1, sizeof *r->rq.vals);
    if (!r->rq.vals) {
        rp_add_failure(r, i, s, NULL, "out of memory");
        return -1;
    }
    fbw_err e;
    fbw_err_clear(&e);
    fbw_bytes raw = {s->msg, s->msg_len};
    if (fbw_msg_decode(raw, &f, s->msg_protocol, r->rq.vals, &e) != FBW_OK) {
        rp_add_failure(r, i, s, &e, "the captured parameters cannot be decoded");
        return -1;
    }
    for (uint16_t k = 0; s->blob_steps && k < f.n; k++) {
        size_t b = s->blob_steps[k];
        if (!b)
            continue;
        const fbw_value *id = NULL;
        for (size_t j = 0; j < r->nmade && !id; j++)
            if (r->made[j].step == b)
                id = &r->made[j].id;
        if (!id) {
            char msg[96];
            snprintf(msg, sizeof msg, "parameter %u: its blob (step %zu) was not created", k + 1,
                     b);
            rp_add_failure(r, i, s, NULL, msg);
            return -1;
        }
        r->rq.vals[k].u.quad = id->u.quad; /* the replay's blob, same contents */
    }
    return 0;
}
