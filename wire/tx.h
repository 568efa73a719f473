/* SPDX-License-Identifier: MIT */
/* tx.h - transactions: TPB from options, op_transaction, commit/rollback (retaining). Sans-I/O:
 * calls queue packets on the connection; results arrive with the replies. A transaction whose start
 * is still unanswered can already be used by later requests on a lazy port: the server maps handle
 * 0xFFFF to the object it allocated last (remote.h getHandle), so op_transaction, op_execute and
 * op_commit can share one write. */
#ifndef FBW_TX_H
#define FBW_TX_H

#include "buf.h"
#include "conn.h"

enum fbw_isolation {
    FBW_ISO_READ_COMMITTED = 0,      /* rec_version (FB4+ servers upgrade it to read consistency) */
    FBW_ISO_READ_COMMITTED_NO_REC,   /* no_rec_version: wait for the committed version */
    FBW_ISO_READ_CONSISTENCY,        /* FB4+: statement-level snapshot */
    FBW_ISO_SNAPSHOT,                /* concurrency */
    FBW_ISO_SERIALIZABLE,            /* consistency: snapshot table stability */
};

typedef struct fbw_tx_opts {
    int isolation;    /* enum fbw_isolation */
    int lock_timeout; /* -1 wait forever (default), 0 nowait, N seconds (1..32767) */
    int read_only;
    int autocommit;   /* isc_tpb_autocommit: the engine commits (retaining) after each write */
} fbw_tx_opts;

FBW_API void fbw_tx_opts_init(fbw_tx_opts *o);
/* Build the TPB. Returns FBW_OK, FBW_E_USAGE (bad option), FBW_E_NOMEM. */
FBW_API int fbw_tpb_build(const fbw_tx_opts *o, fbw_buf *out, fbw_err *err);

enum fbw_tx_state { FBW_TX_NONE, FBW_TX_STARTING, FBW_TX_ACTIVE, FBW_TX_ENDING, FBW_TX_ENDED, FBW_TX_FAILED };

typedef struct fbw_tx fbw_tx;

/* A transaction object on connection c, not started (FBW_TX_NONE); it can be started again once
 * ended. FBW_OK, or FBW_E_NOMEM with *out NULL and err saying so. */
FBW_API int fbw_tx_new(fbw_conn *c, fbw_tx **out, fbw_err *err);
/* Frees the object once no reply for it is outstanding (like fbw_stmt_free). Queues nothing: end
 * the transaction first; one left active on the server is rolled back when the attachment ends.
 * NULL is fine. */
FBW_API void fbw_tx_free(fbw_tx *t);
/* Queue op_transaction. */
FBW_API int fbw_tx_start(fbw_tx *t, const fbw_tx_opts *o);
/* Queue op_transaction with a TPB as given (e.g. one taken from a capture; empty: the server's
 * default, concurrency wait). The bytes are sent as they are, not checked. */
FBW_API int fbw_tx_start_tpb(fbw_tx *t, const uint8_t *tpb, size_t n);
/* Queue op_commit / op_rollback / *_retaining. FBW_WAIT while the start is unanswered and its
 * handle cannot be named yet (wait, then call again). */
FBW_API int fbw_tx_commit(fbw_tx *t);
FBW_API int fbw_tx_rollback(fbw_tx *t);
FBW_API int fbw_tx_commit_retaining(fbw_tx *t);
FBW_API int fbw_tx_rollback_retaining(fbw_tx *t);

/* Results, valid once the queued requests are answered. */
FBW_API int fbw_tx_state(const fbw_tx *t); /* enum fbw_tx_state */
/* STARTING or ACTIVE: requests may be queued in it (fbw_tx_state says which). */
FBW_API int fbw_tx_live(const fbw_tx *t);
/* The server error of this transaction's latest request (start, commit, rollback; cleared when
 * one is queued); code FBW_OK when none. */
FBW_API const fbw_err *fbw_tx_error(const fbw_tx *t);
FBW_API fbw_conn *fbw_tx_conn(const fbw_tx *t);
/* The handle to put into a request now: the real one, or 0xFFFF while the start is unanswered but
 * still the last allocation queued. FBW_WAIT: wait for the start's reply first. FBW_E_USAGE: the
 * transaction is not started or already ended. */
FBW_API int fbw_tx_handle(const fbw_tx *t, uint16_t *h);
/* The server's handle as last answered (0 before the start's reply and after the end): for
 * reports and for matching a capture's handles, not for building requests (fbw_tx_handle). */
FBW_API uint16_t fbw_tx_server_handle(const fbw_tx *t);

/* Internal (stmt.c, pipe.c): started with isc_tpb_autocommit (its executes commit), and the
 * start counter (cursors opened under an older start are gone). */
int fbw_tx_autocommit(const fbw_tx *t);
uint64_t fbw_tx_generation(const fbw_tx *t);

/* The server says a statement ended or started a transaction (COMMIT / SET TRANSACTION as SQL):
 * reply object 0 after sending a handle means ended; a new handle means started. */
FBW_API void fbw_tx_note_exec_reply(fbw_tx *t, uint16_t sent, uint16_t reply_object);

#endif
