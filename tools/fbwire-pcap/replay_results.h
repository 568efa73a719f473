/* SPDX-License-Identifier: MIT */
/* replay_results.h - what one replayed connection's steps came to: the executions being measured
 * (rp_exec), the comparison of an execution's rows and affected rows with the capture's replies
 * (rp_compare), and the tally the report reads (rp_tally: steps, failures and differences per
 * connection, each kept up to a bound so memory stays flat when every step fails). Pure: no I/O,
 * no clock, no locks (each replay thread owns its tally). */
#ifndef PCAPTOOL_REPLAY_RESULTS_H
#define PCAPTOOL_REPLAY_RESULTS_H

#include "err.h"
#include "fpstats.h"
#include "workload.h"

#include <stddef.h>
#include <stdint.h>

/* Failures kept per connection; past it they are counted (rp_tally.more_fail). */
#define RP_MAX_FAILURES_KEPT 1000
/* Differences the text report shows per connection (JSON keeps every one). */
#define RP_MAX_DIFFS_SHOWN 20

/* One execution being measured: its execute step and its cursor's fetch steps, or a step that
 * ends at once (execute immediate with an output, blob read). */
typedef struct rp_exec {
    size_t step;      /* the execute step (1-based) */
    int stmt, ok;     /* ok: the execute ran without failure */
    int kind;         /* PCAPTOOL_STEP_EXECUTE, PCAPTOOL_STEP_IMMEDIATE or PCAPTOOL_STEP_BLOB_READ */
    size_t read_exec; /* blob_read: where its id came from */
    uint32_t read_row;
    uint16_t read_col;
    pcaptool_result cap, rep;
    pcaptool_fp_exec e;
    char *sql; /* its statement's SQL, NULL when prepared before the capture (not owned) */
} rp_exec;

typedef struct rp_kind_count {
    uint64_t steps, failed, round_trips;
} rp_kind_count;

typedef struct rp_failure {
    size_t step; /* 1-based */
    int kind;
    int stmt, tx; /* tx: the capture's numbering */
    char message[FBW_ERR_MSG_MAX];
    char sqlstate[6];
} rp_failure;

/* A result difference (the SQL is the tally's copy). */
typedef struct rp_diff {
    size_t step;
    int stmt;
    int kind;
    size_t read_exec;
    uint32_t read_row;
    uint16_t read_col;
    char *sql;
    pcaptool_result cap, rep;
} rp_diff;

/* One connection's counts. Zero it to start; rp_tally_free releases what it holds. */
typedef struct rp_tally {
    rp_kind_count kinds[PCAPTOOL_STEP_KINDS];
    rp_failure *fail;
    size_t nfail, fail_cap, more_fail;
    uint64_t compared, matched, different;
    rp_diff *diffs;
    size_t ndiffs, diffs_cap, more_diffs;
    int keep_all_diffs; /* JSON: every difference; text: the first RP_MAX_DIFFS_SHOWN */
    int nomem;          /* something was not kept for want of memory */
} rp_tally;

/* PCAPTOOL_FP_* for an execution: its rows (count and hash) and affected rows against the capture's;
 * not compared when results_ignore, when it failed, or when the capture has nothing to compare. */
int rp_compare(const rp_exec *x, int results_ignore);
/* Count the comparison res of x (PCAPTOOL_FP_*) and keep x as a difference when it is one. */
void rp_tally_result(rp_tally *t, const rp_exec *x, int res);
/* A failed step: counted in its kind, kept (message: e's, else fallback) up to the bound. */
void rp_tally_failure(rp_tally *t, size_t step, int kind, int stmt, int tx, const fbw_err *e,
                      const char *fallback);
void rp_tally_free(rp_tally *t);

/* Room for one more element in an array of n used of *cap (doubling from 8): 0, or -1 when out of
 * memory (the array is as it was). */
int rp_grow_for_one(void **a, size_t *cap, size_t n, size_t size);

#endif
