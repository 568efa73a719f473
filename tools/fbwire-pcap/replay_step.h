/* SPDX-License-Identifier: MIT */
/* replay_step.h - running one captured step on a replay connection, the way an fbwire application
 * would: a transaction start is only queued (it rides with the next request), frees are deferred,
 * prepare, execute, fetch, commit and execute immediate wait for their replies because the next
 * step needs them. replay_steps.c runs transactions, prepare, execute, fetch, free, blob writes and
 * plain execute immediate; replay_ops.c blob reads, op_exec_immediate2 and info requests; both use
 * the helpers of replay_step.c (waiting, checking, failures), which calls neither of them.
 *
 * The runner (replay_conn.h) owns an rp_step per connection: it sets the connection, the slot
 * tables and the tally, and for each step s, step and step_ok; a handler fills the tally (failures,
 * rows of the execution being measured, executions that end at once) and sets broken when the
 * connection failed. Nothing here knows of threads, pacing or the report. */
#ifndef PCAPTOOL_REPLAY_STEP_H
#define PCAPTOOL_REPLAY_STEP_H

#include "blob.h"
#include "client.h"
#include "replay_results.h"
#include "replay_slots.h"
#include "stmt.h"
#include "value.h"
#include "workload.h"

#include <stddef.h>
#include <stdint.h>

/* Blob ids per connection kept for blob reads: a blob read further back than this many blob ids
 * of rows fails as not replayable (its id is forgotten), never silently skipped. */
#define REPLAY_ROW_BLOBS_MAX 16384

/* A blob id in a row the replay fetched (or an op_exec_immediate2 output row: row 0). */
typedef struct rp_rowblob {
    size_t step;  /* the execute step (1-based) */
    uint32_t row; /* 0-based, every row of the execution */
    uint16_t col;
    fbw_value id;
} rp_rowblob;

/* The latest REPLAY_ROW_BLOBS_MAX blob ids of the connection's rows (a ring: the oldest go). */
typedef struct rp_rowblobs {
    rp_rowblob *v;
    size_t n, cap, next;
    size_t gone; /* the latest execute step whose ids were forgotten, 0 none */
} rp_rowblobs;

/* A blob a blob step created in the replay (until its transaction ends). */
typedef struct rp_blobid {
    size_t step;
    int tx;
    fbw_value id;
} rp_blobid;

/* A blob read under way: where a FBW_WAIT resumes. */
typedef struct rp_blobread {
    size_t act, act_end; /* next act to queue, end of the current write */
    size_t acts_n;       /* acts before its op_close_blob / op_cancel_blob */
    int opened;          /* op_open_blob2 queued */
    uint32_t more_len;   /* buffer length of the reads past the capture's */
    fbw_value id;        /* the id it opens */
} rp_blobread;

/* The request being queued: what fbwire writes its replies into. */
typedef struct rp_request {
    fbw_value *vals;
    fbw_exec_result res;
    fbw_exec_result2 res2; /* op_exec_immediate2 */
    fbw_msgfmt imm_out;    /* its output format: valid until the reply is in */
    fbw_info_result info;  /* info steps and op_info_blob of blob reads */
    fbw_blob *blob;        /* the blob being written or read */
    int blob_stage;        /* blob write: 0 create, 1 write, 2 close */
} rp_request;

typedef struct rp_step {
    /* set by the runner */
    fbw_client *cl;
    fbw_conn *c;
    rp_slots *sl;
    rp_tally *tally;
    int rows_captured;      /* --row-format captured: ask for rows as the captured client did */
    int results_ignore;     /* --results ignore */
    int32_t inline_blob_size; /* --inline-blob-size (PCAPTOOL_REPLAY_INLINE_CAPTURED: each step's) */
    const pcaptool_step *s; /* the step being run (its tx the small number) */
    size_t step;            /* ... its index (1-based) */
    int step_ok;            /* ... ran without failure so far */
    /* set by the handlers */
    int broken;      /* the connection failed: stop */
    int nomem;       /* something was lost for want of memory */
    uint64_t failed; /* failures added (the runner takes them for its progress line) */
    int once_result; /* PCAPTOOL_FP_* of a blob read or execute immediate that just ran */
    /* owned */
    rp_request rq;
    rp_blobid *made; /* the ids of the blobs blob steps created */
    size_t nmade, made_cap;
    rp_rowblobs rows;
    rp_blobread rd;
} rp_step;

/* Run the step r->s (index i, 1-based). */
void rp_step_run(rp_step *r, size_t i);
/* Starts whose reply has arrived by now: report the ones the server refused. */
void rp_step_check_starts(rp_step *r);
/* Transaction t ended (commit or rollback): its blobs are gone, its slot is free again. */
void rp_step_tx_ended(rp_step *r, int t);
/* A failure of step `step` (s: its kind, statement, transaction): e's message, else fallback. */
void rp_add_failure(rp_step *r, size_t step, const pcaptool_step *s, const fbw_err *e,
                    const char *fallback);
/* Release what r owns (not the connection, slots or tally). */
void rp_step_free(rp_step *r);

/* ---- shared by replay_steps.c and replay_ops.c ---- */

/* The end of a step's wait that returned rc (a client.h helper, or the fbw_client_complete loop
 * over one request): rc, the connection broken on a fatal error (err: the client's error). */
int rp_step_waited(rp_step *r, int rc, fbw_err *err);
/* Several requests of a step in one write: fbw_client_run over queue(r), ended by rp_step_waited. */
int rp_run_step(rp_step *r, int (*queue)(void *arg), fbw_err *err);
/* The step failed if rc is not FBW_OK or obj (the request's own error record) holds an error. */
void rp_check(rp_step *r, size_t i, int rc, const fbw_err *e, const fbw_err *obj, const char *what);
/* The step's statement exists (and is prepared when asked); else a failure and 0. */
int rp_need_stmt(rp_step *r, size_t i, int prepared);
/* The step's captured message decoded in the client's format into r->rq.vals (blob ids mapped). */
int rp_decode_as_sent(rp_step *r, size_t i);

/* replay_ops.c */
/* The blob ids of one row of execute step `step` (its blob columns), kept for blob reads. */
void rp_keep_row_blobs(rp_step *r, size_t step, uint32_t row, const fbw_value *v,
                       const fbw_msgfmt *out);
/* Count and hash st's buffered rows into res (rows -1 counts as none yet), stopping once res has
 * max rows (negative: no limit); keep_step (0: none) keeps each row's blob ids for that execute
 * step. 0, or -1 out of memory (r->nomem set). */
int rp_hash_rows(rp_step *r, fbw_stmt *st, pcaptool_result *res, int64_t max, size_t keep_step);
void rp_do_immediate2(rp_step *r, size_t i);
void rp_do_info(rp_step *r, size_t i);
void rp_do_blob_read(rp_step *r, size_t i);
/* A scroll fetch / cursor count step: executions that end at once, compared with the capture's row
 * (or none) / record count. */
void rp_do_fetch_scroll(rp_step *r, size_t i);
void rp_do_count_cursor(rp_step *r, size_t i);

#endif
