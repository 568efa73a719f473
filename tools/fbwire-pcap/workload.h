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
#ifndef PCAPTOOL_WORKLOAD_H
#define PCAPTOOL_WORKLOAD_H

#include "dec.h"
#include "msg.h"
#include "ring.h"

#include <stddef.h>
#include <stdint.h>

enum pcaptool_step_kind {
    PCAPTOOL_STEP_START, /* op_transaction: data = TPB */
    PCAPTOOL_STEP_COMMIT,
    PCAPTOOL_STEP_COMMIT_RETAINING,
    PCAPTOOL_STEP_ROLLBACK,
    PCAPTOOL_STEP_ROLLBACK_RETAINING,
    PCAPTOOL_STEP_PREPARE,          /* data = SQL */
    PCAPTOOL_STEP_EXECUTE,          /* params */
    PCAPTOOL_STEP_FETCH,            /* fetch the open cursor to its end */
    PCAPTOOL_STEP_CLOSE,            /* op_free_statement DSQL_close (or unprepare) */
    PCAPTOOL_STEP_DROP,             /* op_free_statement DSQL_drop */
    PCAPTOOL_STEP_IMMEDIATE,        /* op_exec_immediate: data = SQL */
    PCAPTOOL_STEP_BLOB,             /* op_create_blob(2) + its segments: data = contents, bpb */
    PCAPTOOL_STEP_BLOB_READ,        /* op_open_blob(2) of an id from a fetched row + what the client
                                * did with it (acts) until op_close_blob / op_cancel_blob */
    PCAPTOOL_STEP_INFO_SQL,         /* op_info_sql: data = items, info_buflen */
    PCAPTOOL_STEP_INFO_DATABASE,    /* op_info_database: data = items, info_buflen */
    PCAPTOOL_STEP_INFO_TRANSACTION, /* op_info_transaction: data = items, info_buflen */
    PCAPTOOL_STEP_FETCH_SCROLL,     /* op_fetch_scroll: fetch_op, fetch_pos; result: its row */
    PCAPTOOL_STEP_COUNT_CURSOR,     /* op_info_cursor: result.rows = the record count the capture got */
    PCAPTOOL_STEP_KINDS
};

/* One parameter as the client sent it: its column (from the BLR) and its canonical text. */
typedef struct pcaptool_param {
    fbw_col col;
    int is_null;
    char *text; /* NUL-terminated; NULL when is_null */
    size_t len;
} pcaptool_param;

/* What the capture's own replies said about one execution: rows fetched (count and an
 * order-insensitive hash of their values as text) and affected rows (when the client asked). */
typedef struct pcaptool_result {
    int64_t rows;     /* -1: the execution has no rows the capture shows (no cursor, no singleton) */
    uint64_t hash;    /* sum of each row's FNV-1a hash of its values' text */
    int eof;          /* the capture read the cursor to its end */
    int64_t affected; /* -1: the client never asked (isc_info_sql_records) */
    int unknown;      /* rows arrived in a format the capture never showed */
} pcaptool_result;

/* One request the client sent on a blob it opened for reading, in order: op_get_segment (buflen),
 * op_seek_blob (mode, offset) or op_info_blob (items, buflen). burst: a reply arrived between it
 * and the client's previous packet (the client waited), so the replay waits there too. */
typedef struct pcaptool_blob_act {
    int32_t op;
    uint32_t buflen;
    uint16_t mode;
    int32_t offset;
    uint8_t *items;
    size_t nitems;
    int burst;
} pcaptool_blob_act;

typedef struct pcaptool_step {
    int kind;         /* enum pcaptool_step_kind */
    int tx;           /* transaction slot (1-based), 0: none */
    int stmt;         /* statement slot (1-based), 0: none */
    uint64_t packet;  /* client packet it comes from (1-based, counting every decoded packet) */
    uint8_t *data;    /* SQL text or TPB (NUL-terminated copy) */
    size_t len;
    pcaptool_param *params;
    uint16_t nparams;
    uint32_t fetches; /* op_fetch packets this fetch step stands for */
    uint32_t inline_blob_size; /* execute, immediate2: the inline blobs its op_execute or
                                * op_exec_immediate2 asked for (0: none, or below protocol 19) */
    int scrollable;   /* execute: its cursor opened scrollable (op_execute's cursor_flags, protocol 18+) */
    uint16_t fetch_op; /* fetch_scroll: the move (enum fbw_fetch_op, as sent) and its position */
    int32_t fetch_pos;
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
    pcaptool_result result; /* execute steps */
    /* execute: per parameter, the blob step (1-based) that created the blob id it sends, or 0 */
    size_t *blob_steps;
    /* blob steps: the BPB, the id the server gave, content capacity, cancelled by the client */
    uint8_t *bpb;
    size_t bpb_len, data_cap;
    uint32_t blob_hi, blob_lo;
    int cancelled;
    /* execute: count_info: the client asked for the affected rows in the same write (the replay
     * does: FBW_EXEC_COUNT); counted_by: the info_sql step that asked later (1-based), 0 none or
     * not known (that step came after the execute was handed on: the replay finds its execution
     * by the info step's owner). Blob reads of ids in its rows find the replay's ids by
     * (execute step, row, column): replay_ops.c keeps them. */
    int count_info;
    size_t counted_by;
    /* blob read steps: what the client did, and where the id came from (result: rows = bytes
     * the capture read, hash = their FNV-1a hash, eof = read to its end) */
    pcaptool_blob_act *acts;
    size_t nacts, acts_cap;
    size_t read_exec;    /* the execute step whose row held the id (1-based), 0 unknown */
    uint32_t read_row;
    uint16_t read_col;
    /* info steps: the reply buffer length the client gave (items in data) */
    uint32_t info_buflen;
    /* execute: the row format the client asked for (op_execute2's or the first op_fetch's BLR;
     * until one is seen, the statement's previous one), so the replay asks for the same */
    fbw_col *row_cols;
    uint16_t row_n;
    /* op_exec_immediate2: the output row's format the client gave (its BLR) */
    int imm2;
    fbw_col *out_cols;
    uint16_t out_n;
} pcaptool_step;

typedef struct pcaptool_handle_slot {
    uint16_t handle;
    int slot;
} pcaptool_handle_slot;

/* A BLR request (op_compile) the replay cannot reproduce: fbwire runs DSQL only. Listed, one line
 * each, by replay --list; more than PCAPTOOL_WL_REQUESTS_MAX are only counted. */
typedef struct pcaptool_wl_request {
    uint64_t packet;   /* the op_compile (1-based, counting every decoded packet) */
    size_t blr_bytes;
    unsigned messages; /* declared by its BLR; 0 also when the BLR does not walk */
} pcaptool_wl_request;
#define PCAPTOOL_WL_REQUESTS_MAX 4096
#define PCAPTOOL_WL_REQUEST_WHY "a BLR request (gbak, gfix, QLI, precompiled programs): fbwire replays DSQL only"

/* Blob ids of fetched rows the workload remembers for the blob reads that open them. */
#define PCAPTOOL_WL_BIDS_MAX 65536

typedef struct pcaptool_workload {
    pcaptool_step *steps; /* steps base+1 .. n (1-based numbers); base is 0 unless streaming */
    size_t n, cap;
    size_t base;    /* steps handed on (pcaptool_workload_take) */
    int ntx, nstmt; /* slots used */
    uint64_t not_replayed[FBW_OP_MAX + 1]; /* client packets per op that no step reproduces */
    uint64_t packets;                      /* decoded packets seen, both directions */
    int nomem;
    /* handle tracking */
    pcaptool_handle_slot *txh, *sth, *blh; /* live handle -> slot bindings (blobs: step) */
    size_t ntxh, nsth, txh_cap, sth_cap, nblh, blh_cap;
    int last_blob;              /* blob step (1-based) 0xFFFF names after a create */
    int last_tx, last_stmt;     /* what 0xFFFF names */
    int *fetch_step;            /* per statement slot: its open fetch step (index + 1) or 0 */
    size_t fetch_cap;
    fbw_ring wait;              /* requests whose reply binds a handle, oldest first */
    /* results and timing */
    struct pcaptool_wl_slot *slot; /* per statement slot: prepare, current execute, row format */
    size_t slot_cap;
    fbw_ring info_wait;         /* op_info_sql requests in flight (int): slot asking, or 0 */
    int fetching;               /* slot of the latest op_fetch / op_execute2 (rows go there) */
    size_t cur;                 /* step of the latest client packet (1-based), 0 none */
    int last_from_client;
    uint64_t t_first, t_last;   /* capture time of the first and last packet */
    uint64_t now;               /* capture time of the packet being handled */
    uint64_t t_detach;          /* capture time of the client's op_detach (0 if none) */
    /* blob ids seen in fetched rows -> execute step, row and column (open addressing) */
    struct pcaptool_wl_bid *bids; /* at most PCAPTOOL_WL_BIDS_MAX: then it starts over (bids_forgot) */
    size_t nbids, bids_cap;
    int bids_forgot;
    uint64_t late;              /* streaming: replies about steps already handed on (rows, record
                                 * counts, segments, execute immediate results): not in the
                                 * capture's results, so not compared */
    fbw_ring seg_wait;          /* op_get_segment in flight (size_t): its blob read step, or 0 */
    fbw_ring imm_wait;          /* op_exec_immediate2 in flight (size_t): its step */
    size_t scroll_step;         /* the fetch_scroll step the fetch responses now answer, or 0 (an
                                 * op_fetch or execute since: they answer its execution) */
    fbw_ring count_wait;        /* op_info_cursor in flight (size_t): its count_cursor step */
    size_t close_step;          /* blob read whose op_close_blob was the latest packet, or 0 */
    pcaptool_wl_request *requests; /* BLR requests compiled (the first PCAPTOOL_WL_REQUESTS_MAX) */
    size_t nrequests, requests_total;
} pcaptool_workload;

void pcaptool_workload_init(pcaptool_workload *w);
void pcaptool_workload_free(pcaptool_workload *w);
/* What one decoded packet means; call it from the fbw_dec callback for every packet. */
void pcaptool_workload_packet(pcaptool_workload *w, const fbw_dec *d, int from_client,
                              const fbw_pkt *p, uint64_t ts_ns);
/* FNV-1a 64 over bytes, continuing from h (start with PCAPTOOL_FNV_BASIS); the blob contents hash. */
#define PCAPTOOL_FNV_BASIS 1469598103934665603u
uint64_t pcaptool_fnv(uint64_t h, const uint8_t *p, size_t n);
/* FNV-1a hash of one row: each value's text (value.h) followed by 0x1F, NULL as 0x00 0x1F. The
 * replay hashes its rows the same way. */
uint64_t pcaptool_row_hash(const fbw_value *v, const fbw_msgfmt *f);
/* Streaming: how many of the oldest held steps are final (nothing later in the capture changes
 * them); every held step when the connection ended. When more than window_max (0: no limit) are
 * held, the oldest are given up as final anyway down to window_max / 2 (a statement executed once
 * and never freed would else hold every step after it); later replies about them are then not
 * counted. */
size_t pcaptool_workload_final(pcaptool_workload *w, int ended, size_t window_max);
/* Move the k oldest held steps to out[0..k) (the caller owns them: pcaptool_step_free); they are
 * steps base+1 .. base+k before the call. */
void pcaptool_workload_take(pcaptool_workload *w, pcaptool_step *out, size_t k);
/* Free what one step holds. */
void pcaptool_step_free(pcaptool_step *s);
/* "start", "commit", "prepare", ... */
const char *pcaptool_step_name(int kind);
/* The name of an op_fetch_scroll move (Firebird's P_FETCH: "next" ... "relative"); NULL for a value
 * fbwire does not know. */
const char *pcaptool_fetch_op_name(unsigned op);

#endif
