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
#include "ring.h"

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
    FBW_STEP_BLOB,               /* op_create_blob(2) + its segments: data = contents, bpb */
    FBW_STEP_KINDS
};

/* One parameter as the client sent it: its column (from the BLR) and its canonical text. */
typedef struct fbw_param {
    fbw_col col;
    int is_null;
    char *text; /* NUL-terminated; NULL when is_null */
    size_t len;
} fbw_param;

/* What the capture's own replies said about one execution: rows fetched (count and an
 * order-insensitive hash of their values as text) and affected rows (when the client asked). */
typedef struct fbw_result {
    int64_t rows;     /* -1: the execution has no rows the capture shows (no cursor, no singleton) */
    uint64_t hash;    /* sum of each row's FNV-1a hash of its values' text */
    int eof;          /* the capture read the cursor to its end */
    int64_t affected; /* -1: the client never asked (isc_info_sql_records) */
    int unknown;      /* rows arrived in a format the capture never showed */
} fbw_result;

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
    /* the client's own message: its format (from its BLR) and raw bytes, bound as sent */
    fbw_col *msg_cols;
    uint16_t msg_n;
    uint8_t *msg;
    size_t msg_len;
    int msg_protocol;
    /* timing in the capture: request (first client packet) and the last reply before the next
     * step's request, in capture ns; round trips the capture spent on the step */
    uint64_t t_req, t_end;
    uint32_t round_trips;
    size_t owner;       /* the step this one belongs to (1-based): a fetch its execute, else itself */
    size_t sql_step;    /* execute/fetch: the prepare step of its statement (1-based), 0 unknown */
    fbw_result result;  /* execute steps */
    /* execute: per parameter, the blob step (1-based) that created the blob id it sends, or 0 */
    size_t *blob_steps;
    /* blob steps: the BPB, the id the server gave, content capacity, cancelled by the client */
    uint8_t *bpb;
    size_t bpb_len, data_cap;
    uint32_t blob_hi, blob_lo;
    int cancelled;
} fbw_step;

typedef struct fbw_handle_slot {
    uint16_t handle;
    int slot;
} fbw_handle_slot;

typedef struct fbw_workload {
    fbw_step *steps;  /* steps base+1 .. n (1-based numbers); base is 0 unless streaming */
    size_t n, cap;
    size_t base;      /* steps handed on (fbw_workload_take) */
    int ntx, nstmt; /* slots used */
    uint64_t not_replayed[FBW_OP_MAX + 1]; /* client packets per op that no step reproduces */
    uint64_t packets;                      /* decoded packets seen, both directions */
    int nomem;
    /* handle tracking */
    fbw_handle_slot *txh, *sth, *blh; /* live handle -> slot bindings (blobs: step) */
    size_t ntxh, nsth, txh_cap, sth_cap, nblh, blh_cap;
    int last_blob;              /* blob step (1-based) 0xFFFF names after a create */
    int last_tx, last_stmt;     /* what 0xFFFF names */
    int *fetch_step;            /* per statement slot: its open fetch step (index + 1) or 0 */
    size_t fetch_cap;
    fbw_ring wait;              /* requests whose reply binds a handle, oldest first */
    /* results and timing */
    struct fbw_wl_slot *slot;   /* per statement slot: prepare, current execute, row format */
    size_t slot_cap;
    fbw_ring info_wait;         /* op_info_sql requests in flight (int): slot asking, or 0 */
    int fetching;               /* slot of the latest op_fetch / op_execute2 (rows go there) */
    size_t cur;                 /* step of the latest client packet (1-based), 0 none */
    int last_from_client;
    uint64_t t_first, t_last;   /* capture time of the first and last packet */
    uint64_t now;               /* capture time of the packet being handled */
    uint64_t t_detach;          /* capture time of the client's op_detach (0 if none) */
} fbw_workload;

void fbw_workload_init(fbw_workload *w);
void fbw_workload_free(fbw_workload *w);
/* What one decoded packet means; call it from the fbw_dec callback for every packet. */
void fbw_workload_packet(fbw_workload *w, const fbw_dec *d, int from_client, const fbw_pkt *p,
                         uint64_t ts_ns);
/* FNV-1a hash of one row: each value's text (value.h) followed by 0x1F, NULL as 0x00 0x1F. The
 * replay hashes its rows the same way. */
uint64_t fbw_row_hash(const fbw_value *v, const fbw_msgfmt *f);
/* Streaming: how many of the oldest held steps are final (nothing later in the capture changes
 * them); every held step when the connection ended. When more than window_max (0: no limit) are
 * held, the oldest are given up as final anyway down to window_max / 2 (a statement executed once
 * and never freed would else hold every step after it); later replies about them are then not
 * counted. */
size_t fbw_workload_final(fbw_workload *w, int ended, size_t window_max);
/* Move the k oldest held steps to out[0..k) (the caller owns them: fbw_step_free); they are
 * steps base+1 .. base+k before the call. */
void fbw_workload_take(fbw_workload *w, fbw_step *out, size_t k);
/* Free what one step holds. */
void fbw_step_free(fbw_step *s);
/* "start", "commit", "prepare", ... */
const char *fbw_step_name(int kind);

#endif
