/* SPDX-License-Identifier: MIT */
/* replay_threads.c - a thread per replayed connection and the streaming reader
 * (replay_threads.h). */
#include "replay_threads.h"

#include <stdio.h>

static void *job_thread(void *arg)
{
    rp_job *j = arg;
    rp_job_replay(j);
    atomic_store(&j->finished, 1);
    atomic_fetch_add(&j->sh->done_conns, 1);
    return NULL;
}

static void progress_line(rp_shared *sh, int final)
{
    fprintf(stderr, "\rreplay: %.1f s, %d/%zu connections open, %d done, %lu steps, %lu failed%s",
            (double)(rp_now_ns() - sh->start_ns) / 1e9, atomic_load(&sh->open_conns), sh->njobs,
            atomic_load(&sh->done_conns), (unsigned long)atomic_load(&sh->steps_done),
            (unsigned long)atomic_load(&sh->steps_failed), final ? "\n" : "   ");
    fflush(stderr);
}

/* Threads for every job; returns how many started (the rest are marked and abandoned). */
static size_t start_jobs(rp_shared *sh)
{
    size_t started = 0;
    for (; started < sh->njobs; started++)
        if (pthread_create(&sh->jobs[started]->thread, NULL, job_thread, sh->jobs[started])) {
            for (size_t k = started; k < sh->njobs; k++) {
                rp_job_set_not_run(sh->jobs[k], "cannot start a thread for it");
                pcaptool_stepq_abandon(&sh->jobs[k]->q); /* the reader must not wait on it */
                atomic_store(&sh->jobs[k]->finished, 1);
            }
            break;
        }
    return started;
}

uint64_t rp_threads_run(rp_shared *sh, pcaptool_stream *st, int progress)
{
    sh->start_ns = rp_now_ns();
    size_t started = start_jobs(sh);
    int reading = st && pcaptool_stream_start(st) == FBW_OK;
    if (st && !reading) {
        atomic_store(&sh->nomem, 1);
        for (size_t k = 0; k < sh->njobs; k++)
            pcaptool_stepq_close(&sh->jobs[k]->q, 0);
    }
    uint64_t next = sh->start_ns + 1000000000u;
    while ((size_t)atomic_load(&sh->done_conns) < started) {
        rp_sleep_until(rp_now_ns() + 50000000u);
        if (progress && rp_now_ns() >= next) {
            progress_line(sh, 0);
            next += 1000000000u;
        }
    }
    for (size_t i = 0; i < started; i++)
        pthread_join(sh->jobs[i]->thread, NULL);
    uint64_t wall = rp_now_ns() - sh->start_ns;
    if (reading)
        pcaptool_stream_join(st);
    if (st && (atomic_load(&st->nomem) || (reading && st->status != FBW_OK)))
        atomic_store(&sh->nomem, 1);
    if (st && st->forced) /* not an error: the docs ("Streaming") say when and why */
        fprintf(stderr,
                "fbwire-pcap: replay: %llu steps queued past a full queue (a replay connection "
                "was stuck while another waited for the reader)\n",
                (unsigned long long)st->forced);
    if (progress)
        progress_line(sh, 1);
    return wall;
}
