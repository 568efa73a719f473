/* SPDX-License-Identifier: MIT */
/* replay_conn.h - one replayed connection from its connect to its detach: it takes its steps
 * from its queue (stream.h: the reader thread decodes the capture meanwhile), waits for each
 * request's time (--pace, --speed), runs it (replay_step.h) and measures it. An execution is its
 * execute step, the fetch steps of its cursor and the info_sql steps that asked about it: when it
 * ends its result is compared (replay_results.h) and its latency and round trips go into the
 * shared fingerprint table.
 *
 * A job runs on its own thread (replay_threads.h) and writes only its rp_job, read after it is
 * joined; what the jobs share (rp_shared: the fingerprint table under its mutex, the progress
 * counters, the out-of-memory flag) is atomic or locked. The driver (replay.c) owns both. */
#ifndef PCAPTOOL_REPLAY_CONN_H
#define PCAPTOOL_REPLAY_CONN_H

#include "fpstats.h"
#include "replay_results.h"
#include "stats.h"
#include "stepq.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* How every connection is replayed (the command line's options). */
typedef struct rp_conn_opts {
    const char *dsn;
    const char *user, *password; /* NULL: ISC_USER, ISC_PASSWORD; the password never printed */
    int wire_crypt;
    int rows_captured; /* rows as the captured client asked for them */
    int row_format;    /* else FBW_ROW_FORMAT_* */
    int pace_none;
    double speed;
    int results_ignore;
    int32_t inline_blob_size; /* PCAPTOOL_REPLAY_INLINE_CAPTURED or the size every execute asks for */
    int keep_all_diffs; /* JSON report: every difference */
} rp_conn_opts;

struct rp_job;

/* What the jobs share. */
typedef struct rp_shared {
    rp_conn_opts o;
    uint64_t cap_t0;      /* capture time of the first packet of the replayed ones */
    uint64_t start_ns;    /* monotonic clock when the replay started */
    struct rp_job **jobs; /* every job (a job waits for those that ended before it began) */
    size_t njobs;
    pcaptool_fpstats *f; /* latency per fingerprint, filled as executions end */
    pthread_mutex_t f_mu;
    atomic_int nomem;
    atomic_ulong steps_done, steps_failed;
    atomic_int open_conns, done_conns;
} rp_shared;

/* One replayed connection: a captured one or a fan-out copy (--connections). */
typedef struct rp_job {
    rp_shared *sh;
    pcaptool_stepq q; /* its steps */
    int q_ready;
    uint64_t t_first, t_last; /* capture times of its first and last packet */
    int id;                   /* captured connection id */
    int copy;                 /* 0 the first replay of it, 1.. the fan-out copies */
    atomic_int finished;      /* its thread is done */
    pthread_t thread;
    /* results, read after the thread is joined */
    int replayed;    /* connected and ran its steps */
    char *not_run;   /* why it was not replayed (or stopped early), else NULL */
    fbw_stats stats; /* the replay's, connect to detach */
    rp_tally tally;
} rp_job;

/* Replay job j (on its thread): connect, run every step its queue hands over, detach. Steps that
 * cannot run (no connection, a broken one) are still taken and counted on the capture's side, so
 * the reader never waits on a connection that gave up. */
void rp_job_replay(rp_job *j);
/* j->not_run = the formatted reason (replacing one it had). */
void rp_job_set_not_run(rp_job *j, const char *fmt, ...) FBW_PRINTF(2, 3);
/* Release what j holds (not j itself). */
void rp_job_free(rp_job *j);

/* The monotonic clock in ns, and a sleep until it reads `until`. */
uint64_t rp_now_ns(void);
void rp_sleep_until(uint64_t until);

#endif
