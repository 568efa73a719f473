/* SPDX-License-Identifier: MIT */
/* workload.h - the SQL workload a captured client ran, rebuilt from its packets as the shared
 * session decoder (wire/dec.h) reports them: transactions, prepares, executions with their
 * parameter values, fetches, frees and execute immediate, in the order the client sent them.
 *
 * Server handles are reused and may still be unknown when a request names them (0xFFFF, "the
 * object allocated last", on lazy ports), so steps name slots instead: one transaction slot per
 * op_transaction, one statement slot per op_allocate_statement; the server's op_response object
 * binds a handle to its slot. Ops the replay does not reproduce are counted, never dropped
 * silently. Pure: no I/O. */
#ifndef FBW_PCAP_WORKLOAD_H
#define FBW_PCAP_WORKLOAD_H

#include "dec.h"
#include "msg.h"

#include <stddef.h>
#include <stdint.h>

enum fbw_step_kind {
    FBW_STEP_START,              /* op_transaction: data = TPB */
    FBW_STEP_COMMIT,
    FBW_STEP_COMMIT_RETAINING,
    FBW_STEP_ROLLBACK,
    FBW_STEP_ROLLBACK_RETAINING,
    FBW_STEP_PREPARE,            /* data = SQL */
    FBW_STEP_EXECUTE,            /* params */
    FBW_STEP_FETCH,              /* fetch the open cursor to its end */
    FBW_STEP_CLOSE,              /* op_free_statement DSQL_close (or unprepare) */
    FBW_STEP_DROP,               /* op_free_statement DSQL_drop */
    FBW_STEP_IMMEDIATE,          /* op_exec_immediate: data = SQL */
    FBW_STEP_KINDS
};

/* One parameter as the client sent it: its column (from the BLR) and its canonical text. */
typedef struct fbw_param {
    fbw_col col;
    int is_null;
    char *text; /* NUL-terminated; NULL when is_null */
    size_t len;
} fbw_param;

typedef struct fbw_step {
    int kind;         /* enum fbw_step_kind */
    int tx;           /* transaction slot (1-based), 0: none */
    int stmt;         /* statement slot (1-based), 0: none */
    uint64_t packet;  /* client packet it comes from (1-based, counting every decoded packet) */
    uint8_t *data;    /* SQL text or TPB (NUL-terminated copy) */
    size_t len;
    fbw_param *params;
    uint16_t nparams;
    uint32_t fetches; /* op_fetch packets this fetch step stands for */
    char *problem;    /* why the step cannot be replayed as captured, else NULL */
} fbw_step;

typedef struct fbw_handle_slot {
    uint16_t handle;
    int slot;
} fbw_handle_slot;

typedef struct fbw_workload {
    fbw_step *steps;
    size_t n, cap;
    int ntx, nstmt; /* slots used */
    uint64_t not_replayed[FBW_OP_MAX + 1]; /* client packets per op that no step reproduces */
    uint64_t packets;                      /* decoded packets seen, both directions */
    int nomem;
    /* handle tracking */
    fbw_handle_slot *txh, *sth; /* live handle -> slot bindings */
    size_t ntxh, nsth, txh_cap, sth_cap;
    int last_tx, last_stmt;     /* what 0xFFFF names */
    int *fetch_step;            /* per statement slot: its open fetch step (index + 1) or 0 */
    size_t fetch_cap;
    struct fbw_wl_wait *wait;   /* requests whose reply binds a handle, oldest first */
    size_t wait_head, wait_len, wait_cap;
} fbw_workload;

void fbw_workload_init(fbw_workload *w);
void fbw_workload_free(fbw_workload *w);
/* What one decoded packet means; call it from the fbw_dec callback for every packet. */
void fbw_workload_packet(fbw_workload *w, const fbw_dec *d, int from_client, const fbw_pkt *p);
/* "start", "commit", "prepare", ... */
const char *fbw_step_name(int kind);

#endif
