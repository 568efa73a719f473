/* SPDX-License-Identifier: MIT */
/* stepq.h - the bounded queue of completed steps between the streaming replay's reader thread
 * (stream.c) and one replay connection's thread (replay.c). A step is decoded once and shared by
 * every fan-out copy of its connection: each copy's queue holds a reference, the last one frees
 * it. The reader waits while a queue holds its limit of steps or bytes (backpressure); when waiting
 * could deadlock (stream.c says when) it may push past the limit, and the queue counts that. Every
 * wait has a deadline on the monotonic clock. */
#ifndef PCAPTOOL_STEPQ_H
#define PCAPTOOL_STEPQ_H

#include "ring.h"
#include "workload.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* One completed step, shared by the queues of a connection's copies. */
typedef struct pcaptool_qstep {
    pcaptool_step s;  /* owned: its buffers go with the last reference */
    size_t index;     /* its number in the connection (1-based) */
    size_t bytes;     /* what it holds, for the byte limit */
    atomic_int refs;
} pcaptool_qstep;

typedef struct pcaptool_stepq {
    pthread_mutex_t mu;
    pthread_cond_t more, room;
    fbw_ring items; /* pcaptool_qstep * */
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
} pcaptool_stepq;

/* max_items >= 1; max_bytes 0: no byte limit. FBW_OK or FBW_E_NOMEM. */
int pcaptool_stepq_init(pcaptool_stepq *q, size_t max_items, size_t max_bytes);
/* Drops the references still held. */
void pcaptool_stepq_destroy(pcaptool_stepq *q);
/* A step and its size for the byte limit; refs references (one per queue it goes to). NULL when
 * out of memory (s is then freed). */
pcaptool_qstep *pcaptool_qstep_new(pcaptool_step *s, size_t index, int refs);
void pcaptool_qstep_unref(pcaptool_qstep *x);
/* Append x (taking one of its references). FBW_OK; FBW_AGAIN when the queue is still full at
 * deadline_ns (then nothing changed). force: append past the limit. */
int pcaptool_stepq_push(pcaptool_stepq *q, pcaptool_qstep *x, uint64_t deadline_ns, int force);
/* No more steps will come. */
void pcaptool_stepq_close(pcaptool_stepq *q, uint64_t t_detach);
enum { PCAPTOOL_STEPQ_END = 0, PCAPTOOL_STEPQ_STEP = 1, PCAPTOOL_STEPQ_TIMEOUT = 2 };
/* PCAPTOOL_STEPQ_STEP: *out is the next step (the caller owns that reference); PCAPTOOL_STEPQ_END: closed
 * and empty; PCAPTOOL_STEPQ_TIMEOUT: nothing by deadline_ns. */
int pcaptool_stepq_pop(pcaptool_stepq *q, pcaptool_qstep **out, uint64_t deadline_ns);
/* The consumer stops taking steps: what is queued and what comes is dropped. */
void pcaptool_stepq_abandon(pcaptool_stepq *q);
/* Holding its limit (locks). */
int pcaptool_stepq_full(pcaptool_stepq *q);
/* The consumer waits on it, empty, for the reader (locks). */
int pcaptool_stepq_starving(pcaptool_stepq *q);
/* The monotonic clock in ns (the clock every deadline here is on). */
uint64_t pcaptool_stepq_now(void);

#endif
