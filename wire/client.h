/* SPDX-License-Identifier: MIT */
/* client.h - the blocking client: runs the sans-I/O connection (conn.c) over a TCP socket (sock.c)
 * with deadlines, and feeds the round-trip accounting its wait events. This and sock.c are the only
 * wire/ files that block or read a clock. */
#ifndef FBW_CLIENT_H
#define FBW_CLIENT_H

#include "blobset.h"
#include "conn.h"
#include "stmt.h"

typedef struct fbw_client fbw_client;

typedef struct fbw_client_opts {
    fbw_conn_opts conn;     /* conn.database is ignored: the path comes from the connection string */
    int connect_timeout_ms; /* TCP connect + until attached; default 30000; < 0 = none */
    int timeout_ms;         /* every later wait for the server; default 60000; < 0 = none.
                             * A wait that gets no byte for this long fails with FBW_E_TIMEOUT and
                             * an error naming the request waited for (and an unanswered COMMIT:
                             * outcome unknown); the connection is then closed (fatal). */
    /* Key log (keylog.h): a file to append this connection's wire crypt key line to once it is
     * encrypted; NULL: $FBWIRE_KEYLOGFILE; "" or unset: none. A debugging aid that exposes the
     * session (docs/fbwire-pcap.md): a key log that cannot be written fails the connect. */
    const char *keylog;
} fbw_client_opts;

FBW_API void fbw_client_opts_init(fbw_client_opts *o);
/* Parse dsn ("host[/port]:path", ...), connect, authenticate, attach (or create). Missing user or
 * password are taken from ISC_USER / ISC_PASSWORD. On failure *out is NULL and err says why
 * (FBW_E_SERVER carries gds codes and SQLSTATE). */
FBW_API int fbw_client_connect(const char *dsn, const fbw_client_opts *o, fbw_client **out, fbw_err *err);
/* Send what is queued and read until no reply is outstanding. */
FBW_API int fbw_client_wait(fbw_client *cl);
/* Send what is queued and read until pred(arg) is true or nothing is outstanding. */
FBW_API int fbw_client_wait_until(fbw_client *cl, int (*pred)(void *arg), void *arg);
/* Finish a queueing call (stmt.h, tx.h, blob.h, batch.h, conn.h's info request) whose return code
 * is rc. FBW_OK: send what is queued and wait until nothing is outstanding (fbw_client_wait).
 * FBW_WAIT (the call needs earlier replies first and queued nothing): wait for them, then return
 * FBW_WAIT again, meaning "make the same call again"; FBW_E_USAGE when nothing is outstanding to
 * wait for. Any other rc is returned as it is. One request, run to its answer, whatever it is:
 *     do rc = fbw_client_complete(cl, fbw_blob_read(b, n)); while (rc == FBW_WAIT);
 * The server's answer is then in the object (fbw_stmt_error, fbw_tx_error, fbw_blob_error, ...);
 * a failed rc's record is found by fbw_client_call_error. */
FBW_API int fbw_client_complete(fbw_client *cl, int rc);
/* That loop for the common requests: prepare, execute (with its first fetch), fetch, commit,
 * rollback. Requests queued before ride in the same write. */
FBW_API int fbw_client_prepare(fbw_client *cl, fbw_stmt *st, fbw_tx *tx, const char *sql, size_t len);
FBW_API int fbw_client_execute(fbw_client *cl, fbw_stmt *st, fbw_tx *tx, const fbw_value *params,
                               unsigned flags);
FBW_API int fbw_client_fetch(fbw_client *cl, fbw_stmt *st);
/* Scrollable cursors (stmt.h): clear st's buffered rows, move and fetch (fbw_stmt_fetch_scroll),
 * wait. Afterwards the row is fbw_stmt_row(st, 0) when fbw_stmt_row_count(st) is 1; 0 rows and
 * fbw_stmt_eof: the move went past either end. A refusal (protocol, forward-only cursor) returns
 * its code before anything is sent; a server error is in fbw_stmt_error. */
FBW_API int fbw_client_fetch_scroll(fbw_client *cl, fbw_stmt *st, int op, int32_t pos);
/* fbw_stmt_count_cursor and wait: *count gets fbw_stmt_cursor_count (-1 if the server failed the
 * request: its error in fbw_stmt_error). */
FBW_API int fbw_client_count_cursor(fbw_client *cl, fbw_stmt *st, int64_t *count);
FBW_API int fbw_client_commit(fbw_client *cl, fbw_tx *tx);
FBW_API int fbw_client_rollback(fbw_client *cl, fbw_tx *tx);
/* The same loop over queue(arg), for several requests that are to share one write: queue may
 * answer FBW_WAIT after queueing some of them, so it must remember what it queued already (it is
 * called again after the wait). Returns the first error of queueing or waiting. */
FBW_API int fbw_client_run(fbw_client *cl, int (*queue)(void *arg), void *arg);
/* Read every blob of set bs (blobset.h): its requests in one write, a further write only for blobs
 * longer than one reply. Returns the wait's error, else the first blob's (fbw_blobset_error). */
FBW_API int fbw_client_read_blobs(fbw_client *cl, fbw_blobset *bs);
/* fbw_client_wait(cl) as a wait callback (pipe.h fbw_pipe_opts.wait, with wait_arg = cl): on
 * failure err gets the client's error (or the connection's). */
FBW_API int fbw_client_pipe_wait(void *cl, fbw_err *err);
/* Detach and disconnect politely (bounded by the timeout), then free. NULL is fine. */
FBW_API int fbw_client_close(fbw_client *cl);
/* Drop the connection without talking to the server, then free. */
FBW_API void fbw_client_abort(fbw_client *cl);
FBW_API fbw_conn *fbw_client_conn(fbw_client *cl);
/* The connected socket (for socket options and finding the server's process); -1 when closed. */
FBW_API int fbw_client_fd(const fbw_client *cl);
FBW_API const fbw_err *fbw_client_error(const fbw_client *cl);
/* Internal (svcclient.c checks a service query's wait against it): the client's timeout_ms, the
 * longest a wait for the server may last (< 0: none). Not exported. */
int fbw_client_timeout_ms(const fbw_client *cl);
/* The error of a call that queued requests on st and/or tx (NULL for an object not involved) and
 * waited for them through cl (fbw_client_run, _wait, _wait_until), rc being what it returned: the
 * rule of docs/library.md "Errors" in one place. rc not FBW_OK: the first that holds an error of
 * the client (the wait failed), the connection, the statement, the transaction (a request could
 * not be queued). rc FBW_OK: the statement's, else the transaction's server error (a request was
 * answered with an error). Never NULL: a record with code FBW_OK when none of them holds an error
 * (rc then is all there is: fbw_rc_name). Classify it with fbw_err_classify (status.h). */
FBW_API const fbw_err *fbw_client_call_error(const fbw_client *cl, int rc, const fbw_stmt *st,
                                             const fbw_tx *tx);
/* Ask the server to cancel what the connection is waiting for: op_cancel with fb_cancel_raise, the
 * call fbclient's fb_cancel_operation and Jaybird's cancelOperation make (protocol 12+). Meant for
 * another thread while one thread waits in fbw_client_wait / _until / _run: the op_cancel is sent
 * at once, in the same (encrypted, compressed) stream, ordered with the waiting thread's writes;
 * called between two reads of that wait, it is sent when the wait reads again. The cancelled
 * request then fails as usual, with isc_cancelled (335544794, "operation was cancelled") in its
 * error; the connection, its transactions and statements stay usable. A cancel that reached the
 * server after the request ended is cleared when the wait ends, so it does not hit the next call.
 * Returns FBW_OK (sent or scheduled; the request may still finish normally, as it may have been
 * done already), FBW_E_USAGE (no wait in progress: nothing was sent), FBW_E_UNSUPPORTED (protocol
 * below 12) or the send's failure. Not async-signal-safe (it takes a lock): from a signal, let a
 * thread that waits for the signal (sigwait) or for a byte the handler writes to a pipe make the
 * call (docs/library.md). cl must stay open until the call returns. */
FBW_API int fbw_client_cancel(fbw_client *cl);

#endif
