/* SPDX-License-Identifier: MIT */
/* stepq.h - the bounded queue of completed steps between the streaming replay's reader thread
 * (stream.c) and one replay connection's thread (replay.c). A step is decoded once and shared by
 * every fan-out copy of its connection: each copy's queue holds a reference, the last one frees
 * it. The reader waits while a queue holds its limit of steps or bytes (backpressure); when waiting
 * could deadlock (stream.c says when) it may push past the limit, and the queue counts that. Every
 * wait has a deadline on the monotonic clock. */
#ifndef FBW_PCAP_STEPQ_H
#define FBW_PCAP_STEPQ_H

#include "ring.h"
#include "workload.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* One completed step, shared by the queues of a connection's copies. */
typedef struct fbw_qstep {
    fbw_step s;       /* owned: its buffers go with the last reference */
    size_t index;     /* its number in the connection (1-based) */
    size_t bytes;     /* what it holds, for the byte limit */
    atomic_int refs;
} fbw_qstep;

typedef struct fbw_stepq {
    pthread_mutex_t mu;
    pthread_cond_t more, room;
    fbw_ring items;        /* fbw_qstep * */
    size_t bytes, max_items, max_bytes;
    int closed;            /* the reader delivered the connection's last step */
    int abandoned;         /* the consumer stopped: pushes drop the step at once */
    int waiting;           /* the consumer waits on an empty queue */
    uint64_t t_detach;     /* given with close: capture time of the client's op_detach, or 0 */
    atomic_ulong popped;   /* steps taken so far (the reader watches progress) */
    atomic_int pacing;     /* the consumer sleeps until a request's time: it takes steps again
                            * by itself, the reader may wait for it as long as that takes */
    uint64_t overfilled;   /* pushes past the limit */
    size_t peak_items;     /* most steps held at once */
} fbw_stepq;

/* max_items >= 1; max_bytes 0: no byte limit. FBW_OK or FBW_E_NOMEM. */
int fbw_stepq_init(fbw_stepq *q, size_t max_items, size_t max_bytes);
/* Drops the references still held. */
void fbw_stepq_destroy(fbw_stepq *q);
/* A step and its size for the byte limit; refs references (one per queue it goes to). NULL when
 * out of memory (s is then freed). */
fbw_qstep *fbw_qstep_new(fbw_step *s, size_t index, int refs);
void fbw_qstep_unref(fbw_qstep *x);
/* Append x (taking one of its references). FBW_OK; FBW_AGAIN when the queue is still full at
 * deadline_ns (then nothing changed). force: append past the limit. */
int fbw_stepq_push(fbw_stepq *q, fbw_qstep *x, uint64_t deadline_ns, int force);
/* No more steps will come. */
void fbw_stepq_close(fbw_stepq *q, uint64_t t_detach);
enum { FBW_STEPQ_END = 0, FBW_STEPQ_STEP = 1, FBW_STEPQ_TIMEOUT = 2 };
/* FBW_STEPQ_STEP: *out is the next step (the caller owns that reference); FBW_STEPQ_END: closed
 * and empty; FBW_STEPQ_TIMEOUT: nothing by deadline_ns. */
int fbw_stepq_pop(fbw_stepq *q, fbw_qstep **out, uint64_t deadline_ns);
/* The consumer stops taking steps: what is queued and what comes is dropped. */
void fbw_stepq_abandon(fbw_stepq *q);
/* Holding its limit (locks). */
int fbw_stepq_full(fbw_stepq *q);
/* The consumer waits on it, empty, for the reader (locks). */
int fbw_stepq_starving(fbw_stepq *q);
/* The monotonic clock in ns (the clock every deadline here is on). */
uint64_t fbw_stepq_now(void);

#endif
