/* SPDX-License-Identifier: MIT */
/* stepq.c - the bounded step queue of the streaming replay (stepq.h): a ring of shared step
 * references under a mutex, two condition variables on the monotonic clock. */
#include "stepq.h"

#include "err.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t pcaptool_stepq_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct timespec abs_time(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    return ts;
}

int pcaptool_stepq_init(pcaptool_stepq *q, size_t max_items, size_t max_bytes)
{
    memset(q, 0, sizeof *q);
    q->max_items = max_items ? max_items : 1;
    q->max_bytes = max_bytes;
    fbw_ring_init(&q->items, sizeof(pcaptool_qstep *), 0);
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca))
        return FBW_E_NOMEM;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_mutex_init(&q->mu, NULL);
    if (!rc && (rc = pthread_cond_init(&q->more, &ca)) != 0)
        pthread_mutex_destroy(&q->mu);
    if (!rc && (rc = pthread_cond_init(&q->room, &ca)) != 0) {
        pthread_cond_destroy(&q->more);
        pthread_mutex_destroy(&q->mu);
    }
    pthread_condattr_destroy(&ca);
    return rc ? FBW_E_NOMEM : FBW_OK;
}

static void drop_all(pcaptool_stepq *q)
{
    pcaptool_qstep *x;
    while (fbw_ring_pop(&q->items, &x))
        pcaptool_qstep_unref(x);
    q->bytes = 0;
}

void pcaptool_stepq_destroy(pcaptool_stepq *q)
{
    drop_all(q);
    fbw_ring_free(&q->items);
    pthread_cond_destroy(&q->more);
    pthread_cond_destroy(&q->room);
    pthread_mutex_destroy(&q->mu);
}

static size_t step_bytes(const pcaptool_step *s)
{
    size_t n = sizeof *s + s->len + s->msg_len + s->bpb_len + (s->problem ? strlen(s->problem) : 0);
    n += s->nparams * sizeof *s->params + s->msg_n * sizeof *s->msg_cols;
    for (uint16_t i = 0; s->params && i < s->nparams; i++)
        n += s->params[i].len;
    if (s->blob_steps)
        n += s->nparams * sizeof *s->blob_steps;
    n += s->nacts * sizeof *s->acts + s->out_n * sizeof *s->out_cols; /* blob reads, immediate2 */
    for (size_t i = 0; s->acts && i < s->nacts; i++)
        n += s->acts[i].nitems;
    return n;
}

pcaptool_qstep *pcaptool_qstep_new(pcaptool_step *s, size_t index, int refs)
{
    pcaptool_qstep *x = malloc(sizeof *x);
    if (!x) {
        pcaptool_step_free(s);
        return NULL;
    }
    x->s = *s;
    x->index = index;
    x->bytes = step_bytes(s);
    atomic_init(&x->refs, refs);
    return x;
}

void pcaptool_qstep_unref(pcaptool_qstep *x)
{
    if (x && atomic_fetch_sub(&x->refs, 1) == 1) {
        pcaptool_step_free(&x->s);
        free(x);
    }
}

static int is_full(const pcaptool_stepq *q)
{
    size_t n = fbw_ring_len(&q->items);
    return n >= q->max_items || (q->max_bytes && n && q->bytes >= q->max_bytes);
}

int pcaptool_stepq_push(pcaptool_stepq *q, pcaptool_qstep *x, uint64_t deadline_ns, int force)
{
    pthread_mutex_lock(&q->mu);
    if (q->abandoned) {
        pthread_mutex_unlock(&q->mu);
        pcaptool_qstep_unref(x);
        return FBW_OK;
    }
    while (!force && is_full(q) && !q->abandoned) {
        struct timespec ts = abs_time(deadline_ns);
        if (pthread_cond_timedwait(&q->room, &q->mu, &ts) && pcaptool_stepq_now() >= deadline_ns)
            break;
    }
    if (q->abandoned) {
        pthread_mutex_unlock(&q->mu);
        pcaptool_qstep_unref(x);
        return FBW_OK;
    }
    if (!force && is_full(q)) {
        pthread_mutex_unlock(&q->mu);
        return FBW_AGAIN;
    }
    q->overfilled += is_full(q);
    int rc = fbw_ring_push(&q->items, &x);
    if (rc == FBW_OK) {
        q->bytes += x->bytes;
        if (fbw_ring_len(&q->items) > q->peak_items)
            q->peak_items = fbw_ring_len(&q->items);
        pthread_cond_signal(&q->more);
    }
    pthread_mutex_unlock(&q->mu);
    if (rc != FBW_OK)
        pcaptool_qstep_unref(x);
    return rc;
}

void pcaptool_stepq_close(pcaptool_stepq *q, uint64_t t_detach)
{
    pthread_mutex_lock(&q->mu);
    q->closed = 1;
    q->t_detach = t_detach;
    pthread_cond_broadcast(&q->more);
    pthread_mutex_unlock(&q->mu);
}

int pcaptool_stepq_pop(pcaptool_stepq *q, pcaptool_qstep **out, uint64_t deadline_ns)
{
    int rc = PCAPTOOL_STEPQ_TIMEOUT;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        if (fbw_ring_pop(&q->items, out)) {
            q->bytes -= (*out)->bytes;
            atomic_fetch_add(&q->popped, 1);
            pthread_cond_signal(&q->room);
            rc = PCAPTOOL_STEPQ_STEP;
            break;
        }
        if (q->closed) {
            rc = PCAPTOOL_STEPQ_END;
            break;
        }
        q->waiting = 1;
        struct timespec ts = abs_time(deadline_ns);
        int w = pthread_cond_timedwait(&q->more, &q->mu, &ts);
        q->waiting = 0;
        if (w && pcaptool_stepq_now() >= deadline_ns && !fbw_ring_len(&q->items) && !q->closed)
            break;
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

void pcaptool_stepq_abandon(pcaptool_stepq *q)
{
    pthread_mutex_lock(&q->mu);
    q->abandoned = 1;
    drop_all(q);
    pthread_cond_broadcast(&q->room);
    pthread_mutex_unlock(&q->mu);
}

int pcaptool_stepq_full(pcaptool_stepq *q)
{
    pthread_mutex_lock(&q->mu);
    int full = is_full(q) && !q->abandoned;
    pthread_mutex_unlock(&q->mu);
    return full;
}

int pcaptool_stepq_starving(pcaptool_stepq *q)
{
    pthread_mutex_lock(&q->mu);
    int s = q->waiting && !fbw_ring_len(&q->items) && !q->closed;
    pthread_mutex_unlock(&q->mu);
    return s;
}
