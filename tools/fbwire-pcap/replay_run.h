/* SPDX-License-Identifier: MIT */
/* replay_run.h - internal to fbwire-pcap's replay: one replay connection's running state (run), the
 * execution being measured (xacc), and what replay.c and replay_ops.c share. replay.c runs the
 * steps of the streaming replay (transactions, prepare, execute, fetch, free, blob writes, plain
 * execute immediate) and counts results; replay_ops.c runs blob reads, op_exec_immediate2 and info
 * requests on the same state. Not a library interface. */
#ifndef FBW_PCAP_REPLAY_RUN_H
#define FBW_PCAP_REPLAY_RUN_H

#include "blob.h"
#include "client.h"
#include "fpstats.h"
#include "stmt.h"
#include "value.h"
#include "workload.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rconn rconn;
struct fbw_replay;

typedef struct run {
    struct fbw_replay *rp;
    rconn *rc;
    fbw_client *cl;
    fbw_conn *c;
    fbw_tx **tx;        /* by transaction slot */
    size_t *tx_start;   /* by slot: its start step (1-based) while its reply is unchecked */
    fbw_stmt **st;      /* by statement slot */
    size_t *slot_exec;  /* by statement slot: its current execute step (1-based) */
    struct blobid *blob_ids; /* the ids of the blobs blob steps created in the replay */
    size_t nblob_ids, blob_ids_cap;
    fbw_blob *blob;     /* the blob being written */
    int blob_stage;     /* 0 create, 1 write, 2 close: where a FBW_AGAIN resumes */
    const fbw_step *s;  /* the step being queued */
    fbw_value *vals;
    fbw_exec_result res;
    fbw_exec_result2 res2;  /* op_exec_immediate2 */
    fbw_msgfmt imm_out;     /* its output format: valid until the reply is in */
    fbw_info_result info;   /* info steps and op_info_blob of blob reads */
    size_t act, act_end;    /* blob read: next act to queue, end of the current write */
    size_t acts_n;          /* blob read: acts before its op_close_blob / op_cancel_blob */
    int opened;             /* blob read: op_open_blob2 queued */
    uint32_t more_len;      /* blob read: buffer length of the reads past the capture's */
    fbw_value read_id;      /* blob read: the id it opens */
    int broken;         /* the connection failed: stop */
    /* streaming: slot tables grow as steps name slots */
    size_t ntx, nst;          /* tx and tx_start hold ntx + 1, st, slot_exec, ex and sql nst + 1 */
    struct xacc **ex;         /* by statement slot: its execution being measured */
    char **sql;               /* by statement slot: the SQL of its latest prepare */
    int *pend;                /* transaction slots whose start reply is unchecked */
    size_t npend, pend_cap;
    size_t step;              /* the step being run (1-based) */
    int step_ok;              /* ... ran without failure so far */
    fbw_tx **txpool;          /* ended transactions, for reuse */
    size_t ntxpool, txpool_cap;
    /* Transaction slots are renumbered to small numbers reused once a transaction ended, so the
     * tables above follow the open transactions, not the capture's count of them: */
    int *tx_orig;             /* by small number (ntx + 1): the step's own slot, 0 free */
    int *tx_free;             /* small numbers free again */
    size_t ntx_free, tx_free_cap;
    int tx_used;              /* small numbers handed out so far */
    /* Blob ids of the replay's rows, for blob reads: by (execute step, row, column), the latest
     * REPLAY_ROW_BLOBS_MAX of the connection (a ring: the oldest go first) */
    struct rowblob *rblobs;
    size_t nrblobs, rblobs_cap, rblobs_next;
    size_t rblobs_gone;       /* the latest execute step whose ids were forgotten, 0 none */
    int once_result;          /* FBW_FP_* of a blob read or execute immediate that just ran */
} run;

/* A blob id in a row the replay fetched (or an op_exec_immediate2 output row: row 0). */
typedef struct rowblob {
    size_t step;     /* the execute step (1-based) */
    uint32_t row;    /* 0-based, every row of the execution */
    uint16_t col;
    fbw_value id;
} rowblob;

/* Blob ids per connection kept for blob reads: a blob read further back than this many blob ids
 * of rows fails as not replayable (its id is forgotten), never silently skipped. */
#define REPLAY_ROW_BLOBS_MAX 16384

/* A blob a blob step created in the replay (until its transaction ends). */
typedef struct blobid {
    size_t step;
    int tx;
    fbw_value id;
} blobid;

/* One execution being measured: its execute step and its cursor's fetch steps. */
typedef struct xacc {
    size_t step;     /* the execute step (1-based) */
    int stmt, ok;    /* ok: the execute ran without failure */
    int kind;        /* FBW_STEP_EXECUTE; one that ends at once: immediate, blob_read */
    size_t read_exec; /* blob_read: where its id came from */
    uint32_t read_row;
    uint16_t read_col;
    fbw_result cap, rep;
    fbw_fp_exec e;
    char *sql;       /* its statement's SQL, NULL when prepared before the capture */
} xacc;

/* replay.c */
void rp_add_failure(run *r, size_t step, const fbw_step *s, const fbw_err *e, const char *fallback);
fbw_tx *rp_tx_of(run *r, int slot);
/* Run queue(r) and wait (a fatal error breaks the connection; err: the client's error). */
int rp_run_step(run *r, int (*queue)(void *arg), fbw_err *err);
/* The step failed if rc is not FBW_OK or obj (the request's own error record) holds an error. */
void rp_check(run *r, size_t i, int rc, const fbw_err *e, const fbw_err *obj, const char *what);
/* The step's statement exists (and is prepared when asked); else a failure and 0. */
int rp_need_stmt(run *r, size_t i, int prepared);
/* The step's captured message decoded in the client's format into r->vals (blob ids mapped). */
int rp_decode_as_sent(run *r, size_t i);
/* Out of memory: the replay says so at its end. */
void rp_nomem(run *r);
/* Compare an execution that ended at once, count it, keep its difference: its FBW_FP_*. */
int rp_count_once(run *r, const xacc *x);

/* replay_ops.c */
/* The blob ids of one row of execute step `step` (its blob columns), kept for blob reads. */
void rp_keep_row_blobs(run *r, size_t step, uint32_t row, const fbw_value *v,
                       const fbw_msgfmt *out);
void rp_do_immediate2(run *r, size_t i);
void rp_do_info(run *r, size_t i);
void rp_do_blob_read(run *r, size_t i);

#endif
