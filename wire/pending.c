/* SPDX-License-Identifier: MIT */
/* pending.c - replies due to an object, and its release before they came (pending.h). */
#include "pending.h"

int fbw_pending_track(fbw_pending *p, int rc)
{
    if (rc == FBW_OK)
        p->count++;
    return rc;
}

int fbw_pending_settle(fbw_pending *p, int rc, fbw_destroy_fn destroy, void *obj)
{
    if (rc != FBW_AGAIN && --p->count == 0 && p->released)
        destroy(obj);
    return rc;
}

void fbw_pending_release(fbw_pending *p, const fbw_conn *c, fbw_destroy_fn destroy, void *obj)
{
    /* A failed connection calls no reply handler again: nothing would ever destroy the object. */
    if (p->count > 0 && fbw_conn_get_state(c) != FBW_CS_FAILED)
        p->released = 1;
    else
        destroy(obj);
}

int fbw_pending_busy(const fbw_pending *p) { return p->count > 0; }
