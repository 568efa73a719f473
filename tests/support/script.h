/* SPDX-License-Identifier: MIT */
/* script.h - a scripted Firebird server for unit tests of the statement, transaction and pipeline
 * layers without a socket or a server: the connection (conn.h) is brought to READY over bytes,
 * then every wait takes what the client queued, decodes each packet with the real decoder and
 * answers it in order with bytes built by the real encoders, following the script below (one
 * statement shape for every prepare, rows per fetch, which execution or commit fails). The
 * answers can be fed one byte at a time or in chunks, to show that replies split anywhere, or
 * larger than any socket buffer, give the same results.
 *
 * Only what a real server does is scripted here (the answers' layout is Firebird's); faults a real
 * server produces too (a unique violation, a failed commit) are scripted so every position of a
 * failure can be tried. For Criterion tests (asserts with cr_assert). */
#ifndef FBW_TEST_SCRIPT_H
#define FBW_TEST_SCRIPT_H

#include "pipe.h"
#include "request.h"

#define FBW_SCRIPT_MAX_COLS 4
#define FBW_SCRIPT_MAX_LOG 8192

typedef struct fbw_script {
    fbw_conn *c;
    /* the script */
    int stmt_type;                        /* what every prepare describes (FBW_STMT_*) */
    fbw_col in[FBW_SCRIPT_MAX_COLS], out[FBW_SCRIPT_MAX_COLS];
    uint16_t nin, nout;
    unsigned rows;                        /* rows each fetch returns before end of cursor */
    size_t row_text;                      /* bytes of the VARCHAR value of each row */
    uint64_t affected;                    /* what the records info reports */
    int64_t cursor_count;                 /* what op_info_cursor's record count reports */
    unsigned fail_exec;                   /* op_execute number n (from 1) fails; 0: none */
    unsigned fail_exec_every;             /* ... and every this many after it; 0: only n */
    unsigned fail_prepare;                /* op_prepare_statement number n fails */
    unsigned fail_commit;                 /* op_commit number n fails */
    unsigned fail_blob;                   /* op_create_blob2 number n fails */
    unsigned fail_start;                  /* op_transaction number n fails */
    size_t chunk;                         /* answers fed in pieces of this many bytes (0: whole) */
    int protocol;                         /* accepted protocol (fbw_script_open_at) */
    /* Blobs: a BLOB output column gets a new id per row (low half 1, 2, ...); each blob holds
     * blob_len bytes (byte i of blob k is 'a' + (k + i) % 26) stored as segments of blob_seg
     * bytes, read as server.cpp get_segment reads them (segments packed into the buffer, one cut
     * short ends the reply with state 1, the end with state 2). Protocol 19: a blob whose
     * segments fit the execute's inline size is sent inline (op_inline_blob) before its row. */
    size_t blob_len, blob_seg;
    unsigned blob_fail_open;              /* op_open_blob2 number n fails */
    /* what happened */
    unsigned waits;                       /* waits that sent something: round trips */
    unsigned execs, fetches, prepares, commits, rollbacks, starts, blobs;
    unsigned blob_opens, blob_reads, blob_closes, inline_sent;
    int32_t log[FBW_SCRIPT_MAX_LOG];      /* every client op in order (op_ping excluded) */
    unsigned nlog;
    int64_t last_param;                   /* first parameter of the latest op_execute */
    uint32_t last_timeout;                /* the statement timeout the latest op_execute carried */
    uint32_t last_cursor_flags;           /* ... and its cursor flags (protocol 18) */
    /* The latest op_fetch_scroll's op, position, rows asked and BLR bytes; it is answered with
     * row number fetch_pos (text 'a' + pos % 26) while rows > 0, else with end of cursor. */
    int last_fetch_op;
    int32_t last_fetch_pos;
    unsigned last_fetch_messages;
    size_t last_fetch_blr;
    uint16_t last_prepare_flags;          /* the flags the latest op_prepare_statement carried (P20) */
    uint8_t tpb[64];                      /* the latest op_transaction's TPB */
    size_t tpb_len;
    uint16_t end_object;                  /* the handle the latest op_commit/op_rollback named */
    /* internal */
    fbw_msgfmt infmt;
    fbw_buf sent;                         /* client bytes not decoded yet */
    uint16_t next_handle;
    uint16_t tx_handle;                   /* the latest op_transaction's */
    uint32_t blob_ids, inline_size;       /* ids given out; the latest execute's inline size */
    uint16_t last_alloc;                  /* the object 0xFFFF names */
    uint32_t *blob_of, *blob_at;          /* per handle: blob id (low) and read position */
    fbw_tx **txs;                         /* made by fbw_script_start, freed by fbw_script_close */
    size_t ntxs;
} fbw_script;

/* A connection at READY (protocol 17, lazy send) with the default script: a SELECT with one
 * INTEGER parameter and one VARCHAR(100) UTF8 column, 1 row per fetch of 10 bytes, affected 1. */
void fbw_script_open(fbw_script *s);
/* The same at another protocol (13..20) with the connection option inline_blob_size (conn.h). */
void fbw_script_open_at(fbw_script *s, int protocol, int32_t inline_blob_size);
/* Byte i of scripted blob k. */
#define FBW_SCRIPT_BLOB_BYTE(k, i) ((uint8_t)('a' + ((k) + (i)) % 26))
/* Answers whatever is still queued, then frees the connection. */
void fbw_script_close(fbw_script *s);
/* Describe INSERT/UPDATE/DELETE (no output, no cursor) with the same parameter. */
void fbw_script_dml(fbw_script *s, int stmt_type);
/* A wait callback (pipe.h fbw_pipe_wait_fn, arg = the script): answer everything outstanding. */
int fbw_script_wait(void *arg, fbw_err *err);
/* fbw_script_wait that must succeed. */
void fbw_script_wait_ok(fbw_script *s);
/* Prepare a new statement in tx and wait: asserts it prepared. */
fbw_stmt *fbw_script_prepare(fbw_script *s, fbw_tx *tx, const char *sql);
/* Start a new transaction *tx read-write (or read-only) and wait: asserts it is active. It is
 * freed by fbw_script_close. */
void fbw_script_start(fbw_script *s, fbw_tx **tx, int read_only);
/* How many times op appears in the log. */
unsigned fbw_script_count(const fbw_script *s, int32_t op);

#define FBW_SCRIPT_GDS_UNIQUE 335544665u /* violation of PRIMARY or UNIQUE KEY constraint */
#define FBW_SCRIPT_GDS_DEADLOCK 335544336u

#endif
