/* SPDX-License-Identifier: MIT */
/* replay_report.h - what `fbwire-pcap replay` reports, as one model filled once by the replay
 * (replay.c) and rendered twice: as text (replay_text.c) and as JSON (replay_json.c, with
 * jansson; docs/fbwire-pcap-replay.schema.json). The model points into what the replay keeps
 * (workloads, tallies, the fingerprint table): it owns nothing and is valid as long as they are.
 * The renderers only read it. */
#ifndef PCAPTOOL_REPLAY_REPORT_H
#define PCAPTOOL_REPLAY_REPORT_H

#include "fpstats.h"
#include "pcaptool.h"
#include "replay_results.h"
#include "workload.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One captured connection (or a fan-out copy, in rp_report.copies). */
typedef struct rp_conn_report {
    const pcaptool_report_conn *ci; /* the capture's view (NULL for copies) */
    int id, copy;                   /* copy: 1.. for fan-out copies */
    /* --list */
    const pcaptool_step *steps;
    size_t nsteps;
    /* replay: whether it ran (run), connected (replayed), and why not (error) */
    int run, replayed;
    const char *error;
    const rp_tally *tally;   /* failures and differences; NULL when it did not run */
    const fbw_stats *replay; /* the replay's figures */
    uint64_t late;           /* replies past the streaming window */
    /* both */
    const rp_kind_count *kinds; /* by step kind */
    uint64_t steps_total, failed_total;
    const uint64_t *not_replayed; /* by op (FBW_OP_MAX + 1): ops the replay does not run */
    const pcaptool_wl_request *requests; /* BLR requests compiled: the first nrequests listed */
    size_t nrequests, requests_total;
} rp_conn_report;

typedef struct rp_totals {
    fbw_stats capture, replay;
    rp_kind_count kinds[PCAPTOOL_STEP_KINDS];
    uint64_t steps, failed;
    size_t conns, replayed;
    uint64_t compared, matched, different;
} rp_totals;

typedef struct rp_load {
    int pace_none;
    double speed;
    size_t connections;
    double wall_s, capture_s;
    int results_ignore;
    pcaptool_fpstats *f; /* sorted when rendered */
} rp_load;

typedef struct rp_report {
    int list;              /* --list, else a replay */
    const char *database;  /* NULL with --list */
    const char *truncated; /* why the capture file ended early, or NULL */
    rp_conn_report *conns;
    size_t nconns;
    rp_conn_report *copies;
    size_t ncopies;
    int has_load; /* the replay ran: copies and load are reported */
    int from_trace; /* the workload came from a Firebird trace: no packets, round trips or bytes
                     * (the capture's figures are unknown, never 0) */
    rp_totals t;
    rp_load load;
} rp_report;

/* The text report written to out (a connection at a time): 0, or -1 when a write failed. */
int rp_report_text(const rp_report *m, FILE *out);
/* The JSON report (new reference; NULL when out of memory). */
json_t *rp_report_json(const rp_report *m);

#endif
