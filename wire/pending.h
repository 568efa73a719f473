/* SPDX-License-Identifier: MIT */
/* pending.h - the replies an object (statement, blob, batch) still waits for, and its release when
 * its user frees it before they came (internal: not part of the installed API).
 *
 * A reply handler gets the object as its argument, so an object freed while replies are due cannot
 * go away at once: it is marked released, and the handler of its last reply destroys it. A failed
 * connection calls no reply handler again (conn.h), so there it is destroyed at once.
 *
 * Use: fbw_pending_track around each request queued with the object as the handler's argument;
 * every reply handler returns through fbw_pending_settle; the object's free function ends with
 * fbw_pending_release. After either of the last two destroyed it, the object is not touched. */
#ifndef FBW_PENDING_H
#define FBW_PENDING_H

#include "conn.h"

typedef struct fbw_pending {
    int count;      /* replies outstanding */
    int released;   /* freed by its user while replies were outstanding */
} fbw_pending;

/* Frees an object (the obj given with it). */
typedef void (*fbw_destroy_fn)(void *obj);

/* rc of queueing a request: on FBW_OK one more reply is due. Returns rc. */
int fbw_pending_track(fbw_pending *p, int rc);
/* A reply handler's result rc: unless FBW_AGAIN (the reply is not complete) its reply is accounted,
 * and when it was the last reply of a released object, destroy(obj) runs. Returns rc. */
int fbw_pending_settle(fbw_pending *p, int rc, fbw_destroy_fn destroy, void *obj);
/* The object's user frees it (requests it queues on the way out are tracked first): destroy(obj)
 * runs now when nothing is due or connection c failed; else the last reply's settle runs it. */
void fbw_pending_release(fbw_pending *p, const fbw_conn *c, fbw_destroy_fn destroy, void *obj);
/* Replies still due. */
int fbw_pending_busy(const fbw_pending *p);

#endif
