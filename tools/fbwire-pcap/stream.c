/* SPDX-License-Identifier: MIT */
/* stream.c - the streaming replay's reader thread (stream.h).
 *
 * Backpressure and deadlock. The reader waits while a connection's queue is full. A replay thread
 * can itself wait on something only the reader provides: another replay connection's next step
 * (a row lock held by a transaction whose commit is still in the file; "Order": a connection that
 * began after another ended waits for that one to finish). So the reader never waits on a full
 * queue without bound: it waits in slices of 100 ms, and pushes past the limit when the full
 * queue's thread has taken no step for STUCK_NS while it is not sleeping for its pacing and some
 * other replay thread waits on an empty queue. A thread sleeping until a request's time (pacing,
 * a connection whose start is in the future) always wakes by itself, so the reader simply waits
 * for it: in a capture in time order, the steps behind it in the file are not due earlier. In a
 * capture, a client waiting for a lock sends nothing, so what a push past the limit adds is what
 * the stuck connection sent meanwhile: little. */
#include "stream.h"

#include <stdlib.h>
#include <string.h>

#define SLICE_NS 100000000u
#define STUCK_NS 1000000000u

static int someone_starving(pcaptool_stream *st, const pcaptool_stepq *except)
{
    for (size_t i = 0; i < st->nall; i++)
        if (st->all[i] != except && pcaptool_stepq_starving(st->all[i]))
            return 1;
    return 0;
}

static void push(pcaptool_stream *st, pcaptool_stepq *q, pcaptool_qstep *x)
{
    uint64_t since = pcaptool_stepq_now();
    unsigned long popped = atomic_load(&q->popped);
    for (;;) {
        uint64_t now = pcaptool_stepq_now();
        int force = !atomic_load(&q->pacing) && now - since >= STUCK_NS &&
                    someone_starving(st, q);
        int rc = pcaptool_stepq_push(q, x, now + SLICE_NS, force);
        if (rc == FBW_OK) {
            st->forced += force;
            return;
        }
        if (rc != FBW_AGAIN) {
            atomic_store(&st->nomem, 1);
            return;
        }
        if (atomic_load(&q->popped) != popped || atomic_load(&q->pacing)) {
            popped = atomic_load(&q->popped);
            since = pcaptool_stepq_now(); /* it moves: not stuck */
        }
    }
}

/* Hand the final steps of src on (all of them once it ended). */
static void deliver(pcaptool_stream *st, pcaptool_stream_src *src)
{
    size_t k = pcaptool_workload_final(&src->w, src->ended, PCAPTOOL_STREAM_WINDOW);
    size_t held = src->w.n - src->w.base;
    if (held > st->max_window)
        st->max_window = held;
    for (size_t i = 0; i < k; i++) {
        pcaptool_step s;
        size_t index = src->w.base + 1;
        pcaptool_workload_take(&src->w, &s, 1);
        if (s.kind >= 0 && s.kind < PCAPTOOL_STEP_KINDS)
            src->kinds[s.kind]++;
        if (!src->nq) {
            pcaptool_step_free(&s);
            continue;
        }
        pcaptool_qstep *x = pcaptool_qstep_new(&s, index, (int)src->nq);
        if (!x) {
            atomic_store(&st->nomem, 1);
            continue;
        }
        for (size_t j = 0; j < src->nq; j++)
            push(st, src->q[j], x);
    }
    if (!src->ended)
        return;
    for (size_t j = 0; j < src->nq; j++)
        pcaptool_stepq_close(src->q[j], src->t_detach);
    /* only the counts of ops not replayed are left for the report */
    uint64_t nr[FBW_OP_MAX + 1];
    memcpy(nr, src->w.not_replayed, sizeof nr);
    uint64_t packets = src->w.packets;
    int nomem = src->w.nomem;
    pcaptool_workload_free(&src->w);
    memcpy(src->w.not_replayed, nr, sizeof nr);
    src->w.packets = packets;
    src->w.nomem = nomem;
}

static void tap(void *arg, int conn_id, const struct fbw_dec *d, int from_client,
                const struct fbw_pkt *p, uint64_t ts_ns)
{
    pcaptool_stream *st = arg;
    if (conn_id < 1 || (size_t)conn_id > st->n || !st->src[conn_id - 1])
        return;
    pcaptool_stream_src *src = st->src[conn_id - 1];
    if (src->ended)
        return;
    size_t before = src->w.n;
    pcaptool_workload_packet(&src->w, d, from_client, p, ts_ns);
    src->ended = ++src->seen >= src->packets;
    if (src->ended || src->w.n != before)
        deliver(st, src);
}

static void *reader(void *arg)
{
    pcaptool_stream *st = arg;
    pcaptool_report_opts ro = {.mode = PCAPTOOL_REPORT_QUIET,
                               .out = stdout,
                               .tap = tap,
                               .tap_arg = st,
                               .keys = st->keys,
                               .ports = st->ports,
                               .nports = st->nports};
    pcaptool_report *r = NULL;
    pcaptool_cap_summary sum;
    fbw_err err;
    fbw_err_clear(&err);
    st->status = FBW_E_NOMEM;
    if (pcaptool_report_new(&ro, &r) == FBW_OK)
        st->status = pcaptool_report_read(r, st->file, st->ports, st->nports, st->explicit_ports,
                                          &sum, &err);
    /* Connections the first pass saw end but this one did not (out of memory): end them now. */
    for (size_t i = 0; i < st->n; i++)
        if (st->src[i] && !st->src[i]->ended) {
            st->src[i]->ended = 1;
            deliver(st, st->src[i]);
        }
    pcaptool_report_free(r);
    return NULL;
}

int pcaptool_stream_start(pcaptool_stream *st)
{
    atomic_init(&st->nomem, 0);
    if (pthread_create(&st->thread, NULL, reader, st))
        return FBW_E_NOMEM;
    return FBW_OK;
}

void pcaptool_stream_join(pcaptool_stream *st)
{
    pthread_join(st->thread, NULL);
}
