/* SPDX-License-Identifier: MIT */
/* trace_workload.h - a parsed Firebird trace (trace.h) as the replay's workload (workload.h): one
 * step list per traced attachment, in the order the server reported its events, so `fbwire-pcap
 * replay --trace` runs it with the same engine as a capture (replay.h).
 *
 * Per attachment: START_TRANSACTION is a start step whose TPB is rebuilt from the options the
 * trace prints; COMMIT/ROLLBACK (retaining or not) end it; PREPARE_STATEMENT prepares a statement
 * slot per trace statement id; EXECUTE_STATEMENT_START executes it with the parameters' text (the
 * replay converts each to the type the replayed statement declares); EXECUTE_STATEMENT_FINISH
 * gives the execution its end time and, for a SELECT, a fetch step to the end of its cursor and
 * its row count to compare; FREE_STATEMENT and CLOSE_CURSOR free it. A statement the trace shows
 * without an id (DDL) runs as execute immediate. Transactions and statements already open when
 * the trace began are started and prepared when first seen.
 *
 * Left out, counted: attachments of other databases, the engine's own (<internal>: the garbage
 * collector, the security database) and the system transaction's statements (TRA_0: DDL's own
 * work); events the server refused (FAILED, UNAUTHORIZED); SQL COMMIT/ROLLBACK/SET TRANSACTION
 * statements (their transaction events are replayed); events that are not about the workload.
 * What a trace cannot give at all is in docs/fbwire-pcap.md ("Replaying a trace"). Pure. */
#ifndef PCAPTOOL_TRACE_WORKLOAD_H
#define PCAPTOOL_TRACE_WORKLOAD_H

#include "trace.h"
#include "workload.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pcaptool_trace_conn {
    int64_t att;                  /* ATT_n */
    char *db, *user, *remote, *process;
    pcaptool_step *steps;         /* 1-based step numbers: steps[0] is step 1 */
    size_t n, cap;
    uint64_t t_first, t_last;     /* its first and last event (trace ns) */
    uint64_t t_detach;            /* DETACH_DATABASE, 0 none (still attached at the end) */
    int attached;                 /* its ATTACH_DATABASE is in the trace */
} pcaptool_trace_conn;

/* Why events were left out (see above). */
typedef struct pcaptool_trace_skips {
    uint64_t other_db, internal, system_tx, failed, tx_statements, not_workload, orphans;
} pcaptool_trace_skips;

typedef struct pcaptool_trace_workload {
    pcaptool_trace_conn *c; /* in the order their first event came */
    size_t n;
    pcaptool_trace_skips skipped;
    char err[200];
} pcaptool_trace_workload;

/* The workload of every attachment of t on `database` (the path as the server names it, or its
 * last component; NULL: every database). FBW_OK, or FBW_E_NOMEM / FBW_E_BADVALUE (w->err). */
int pcaptool_trace_workload_build(const pcaptool_trace *t, const char *database,
                                  pcaptool_trace_workload *w);
void pcaptool_trace_workload_free(pcaptool_trace_workload *w);
/* A TPB for the options a START_TRANSACTION record prints ("READ_COMMITTED | REC_VERSION | WAIT
 * | READ_WRITE"): FBW_OK, FBW_E_BADVALUE for an option it does not know, FBW_E_NOMEM. */
int pcaptool_trace_tpb(const char *opts, fbw_buf *out, fbw_err *err);

#endif
