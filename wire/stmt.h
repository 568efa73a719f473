/* SPDX-License-Identifier: MIT */
/* stmt.h - SQL statements on a connection: allocate + prepare + describe in one write, execute
 * (op_execute, or op_execute2 for singleton results), cursor fetches, affected-row counts, deferred
 * close and drop, and execute immediate. Sans-I/O like conn.h: calls queue packets and reply handlers;
 * the caller moves bytes (client.h) and then reads results here.
 *
 * Pipelining is the point: a DSQL_close left from the previous run, op_execute, op_fetch and the
 * records info request go out in one write and cost one round trip. A call returns FBW_WAIT when
 * it cannot be queued before earlier replies arrive (a handle still unknown); wait, then call again. */
#ifndef FBW_STMT_H
#define FBW_STMT_H

#include "info.h"
#include "msg.h"
#include "tx.h"

typedef struct fbw_stmt fbw_stmt;

FBW_API int fbw_stmt_new(fbw_conn *c, fbw_stmt **out, fbw_err *err);
/* Queues op_free_statement(DSQL_drop) if the server has a handle (its reply is deferred and
 * ignored), and frees the statement once no reply for it is outstanding. NULL is fine. */
FBW_API void fbw_stmt_free(fbw_stmt *s);

/* Queue allocate (first time) + prepare with describe items. tx may be NULL (prepare in the
 * attachment's system transaction). */
FBW_API int fbw_stmt_prepare(fbw_stmt *s, fbw_tx *tx, const char *sql, size_t len);

/* Prepare flags (IStatement::PREPARE_* of Firebird's API), sent in op_prepare_statement from
 * protocol 20 (Firebird 6) on. The prefetch bits fbwire always sends itself, matching the describe
 * items it asks for (the server ORs both); the caller's are the flags that change what the server
 * does: FBW_PREPARE_REQUIRE_SEMICOLON makes the parser require the statement's closing ';' (text
 * without it fails with "Unexpected end of command", isc_command_end_err2: a client such as isql
 * learns that the statement is not complete yet) instead of dropping a trailing ';'. Flags set on a
 * connection below protocol 20 make fbw_stmt_prepare fail with FBW_E_UNSUPPORTED before anything is
 * queued: the server would parse the text differently. 0 (the default) is what older servers do. */
#define FBW_PREPARE_PREFETCH_TYPE 0x01u
#define FBW_PREPARE_PREFETCH_INPUT_PARAMETERS 0x02u
#define FBW_PREPARE_PREFETCH_OUTPUT_PARAMETERS 0x04u
#define FBW_PREPARE_PREFETCH_FLAGS 0x40u
#define FBW_PREPARE_PREFETCH_METADATA 0x47u /* the four above: what fbw_describe_items asks */
#define FBW_PREPARE_REQUIRE_SEMICOLON 0x80u
FBW_API void fbw_stmt_set_prepare_flags(fbw_stmt *s, unsigned flags);
FBW_API unsigned fbw_stmt_prepare_flags(const fbw_stmt *s);

enum {
    FBW_EXEC_COUNT = 1,   /* also ask for the affected-row count in the same write */
    FBW_EXEC_NO_FETCH = 2 /* open the cursor only; fetch later with fbw_stmt_fetch */
};
/* Queue an execution with params[0..in_count) (types as described, or converted with value.h).
 * Statements with a cursor also get their first op_fetch queued unless FBW_EXEC_NO_FETCH. */
FBW_API int fbw_stmt_execute(fbw_stmt *s, fbw_tx *tx, const fbw_value *params, unsigned flags);
/* One execution's own result, for several executions of the statement in flight at once
 * (pipelining): each reply updates the fbw_exec_out its execution was queued with. The statement-
 * level results below follow only the latest execution; rows of an older one are counted and
 * dropped as they arrive, and so are the latest one's while drop_rows is set (nobody will read
 * them). The caller owns *out and keeps it valid until done (or until the connection is gone). */
typedef struct fbw_exec_out {
    int done;          /* every reply queued so far for this execution has arrived */
    int drop_rows;     /* set by the caller at any time: discard rows arriving from now on */
    int eof;           /* cursor exhausted, or the execution failed */
    size_t rows;       /* rows that arrived, kept or dropped */
    uint64_t affected; /* with FBW_EXEC_COUNT */
    fbw_err err;       /* this execution's server error; code FBW_OK when none */
} fbw_exec_out;
/* fbw_stmt_execute, reporting to *out as well (cleared here once the execution is queued). */
FBW_API int fbw_stmt_execute_out(fbw_stmt *s, fbw_tx *tx, const fbw_value *params, unsigned flags,
                                 fbw_exec_out *out);
/* Queue an execution right behind the statement's queued, still unanswered prepare, for SQL the
 * caller knows has no parameters, no cursor and no output (INSERT/UPDATE/DELETE without
 * RETURNING). The statement must already have its server handle (re-prepare a statement used
 * before): op_execute cannot carry 0xFFFF. Prepare and execute then cost one round trip. If the
 * prepare fails, its error is the statement's error. FBW_E_USAGE when no prepare is queued;
 * FBW_WAIT while the handle is unknown. */
FBW_API int fbw_stmt_execute_unprepared(fbw_stmt *s, fbw_tx *tx, unsigned flags);
/* Statement timeout (protocol 16+, Firebird 4+) of every later execution of this statement, in ms;
 * 0 (the default): the connection's (fbw_conn_opts.statement_timeout_ms, fbw_conn_set_statement_
 * timeout); a statement cannot run without the connection's limit. It travels in op_execute / op_execute2; the server's timer runs from the execute to the
 * last row fetched (fetches do not restart it). An execution that runs out fails with isc_cancelled
 * + isc_req_stmt_timeout (class FBW_EC_STATEMENT_TIMEOUT, status.h), its message ending
 * "(statement timeout N ms)"; the connection, the transaction and the statement stay usable. An
 * execute with a timeout on a protocol below 16 is refused before anything is queued:
 * FBW_E_UNSUPPORTED, naming the protocol, in fbw_stmt_error. Execute immediate and batches carry no
 * timeout (the protocol has no field for one); the server's own SET STATEMENT TIMEOUT covers those
 * (docs/library.md "Statement timeouts"). */
FBW_API void fbw_stmt_set_timeout(fbw_stmt *s, uint32_t ms);
FBW_API uint32_t fbw_stmt_timeout(const fbw_stmt *s);
/* Protocol 19 (Firebird 5.0.3+): the inline blob size this statement's executes ask for instead of
 * the connection's inline_blob_size (conn.h), as fbclient's IStatement::setMaxInlineBlobSize: 0 asks
 * for none, above 65535 is 65535, negative (the default) takes the connection's again. Below
 * protocol 19 nothing is asked. fbwire-pcap replay sets the size each captured execute asked for. */
FBW_API void fbw_stmt_set_inline_blob_size(fbw_stmt *s, int32_t size);
FBW_API int32_t fbw_stmt_inline_blob_size(const fbw_stmt *s); /* -1: the connection's */
/* Queue the next batch of rows (nothing if at end of cursor or none is open). */
FBW_API int fbw_stmt_fetch(fbw_stmt *s);
/* Queue DSQL_close for an open cursor; its reply is deferred and ignored (not needed after the
 * cursor's transaction ended: the server closed it then). */
FBW_API int fbw_stmt_close(fbw_stmt *s);
/* Rows per op_fetch; 0 = fbclient's rule: min(1000, 1 MiB / row length), at least 10. */
FBW_API void fbw_stmt_set_fetch_size(fbw_stmt *s, uint32_t rows);

/* Scrollable cursors (protocol 18+, Firebird 5; docs/library.md "Scrollable cursors").
 * fbw_stmt_set_scrollable(s, 1) before fbw_stmt_execute opens every later cursor of s scrollable
 * (CURSOR_TYPE_SCROLLABLE in op_execute's cursor flags); 0, the default, opens forward-only ones.
 * On a connection below protocol 18 it is refused: FBW_E_UNSUPPORTED, naming the protocol, in
 * fbw_stmt_error; nothing changes. Forward batches (fbw_stmt_fetch, the first fetch execute queues)
 * work on a scrollable cursor as on any other. */
#define FBW_PROTOCOL_FETCH_SCROLL 18
FBW_API int fbw_stmt_set_scrollable(fbw_stmt *s, int on);
FBW_API int fbw_stmt_scrollable(const fbw_stmt *s);
/* Where a scroll fetch moves (P_FETCH of Firebird's protocol; the values travel as they are). */
enum fbw_fetch_op {
    FBW_FETCH_NEXT = 0,
    FBW_FETCH_PRIOR = 1,
    FBW_FETCH_FIRST = 2,
    FBW_FETCH_LAST = 3,
    FBW_FETCH_ABSOLUTE = 4, /* pos: 1 the first row, -1 the last, 0 before the first */
    FBW_FETCH_RELATIVE = 5  /* pos rows from the current one; 0 fetches it again */
};
/* Queue op_fetch_scroll: move the open scrollable cursor (op, pos as above; pos is ignored by NEXT,
 * PRIOR, FIRST and LAST) and fetch the one row there. The row is appended to the buffered rows
 * (clear them first to find it at 0); a move past either end buffers no row and sets
 * fbw_stmt_eof, the cursor stays open and can move back. The cursor's position is the last row
 * the server sent: after a forward batch of 10 rows, PRIOR gives the 9th. Refused before anything
 * is queued, in fbw_stmt_error: FBW_E_UNSUPPORTED below protocol 18; FBW_E_USAGE with no open
 * cursor, a cursor opened forward-only, or an unknown op. */
FBW_API int fbw_stmt_fetch_scroll(fbw_stmt *s, int op, int32_t pos);
/* Queue op_info_cursor for the number of rows in the open scrollable cursor's result set
 * (INF_RECORD_COUNT: the server reads the whole result set to count it). Once answered,
 * fbw_stmt_cursor_count gives it; -1 before, or when the request failed (the server's error in
 * fbw_stmt_error). Refused as fbw_stmt_fetch_scroll is. The count does not move the cursor. */
FBW_API int fbw_stmt_count_cursor(fbw_stmt *s);
FBW_API int64_t fbw_stmt_cursor_count(const fbw_stmt *s);

/* Bind the parameters in another format than the statement describes, as a client may: the
 * server converts each value to the parameter's type (a TIMESTAMP sent for a DATE parameter).
 * The same number of fields as described; copied, and used (with its BLR) by every later
 * execute until the next prepare. FBW_E_USAGE when not prepared or the count differs, or a
 * column cannot be expressed in BLR (message in the statement's error). */
FBW_API int fbw_stmt_set_input(fbw_stmt *s, const fbw_msgfmt *f);

/* The output counterpart of fbw_stmt_set_input: rows in another format than described (the server
 * converts each column; a replay asks for what the captured client asked for). Same column count;
 * copied, and used by every later execute until the next prepare; rows then decode in it (rows
 * buffered before are dropped). Not while replies of an execution are still to come (FBW_E_USAGE,
 * message in the statement's error). */
FBW_API int fbw_stmt_set_output(fbw_stmt *s, const fbw_msgfmt *f);

/* Row format of the next prepare: FBW_ROW_FORMAT_COMPACT or _DESCRIBED (msg.h); a new statement
 * takes its connection's (fbw_conn_opts.row_format). With COMPACT, CHAR columns and parameters
 * travel as VARCHAR while fbw_stmt_input/output, values and rows stay as described. */
FBW_API void fbw_stmt_set_row_format(fbw_stmt *s, int format);
/* Whether the prepared statement's messages travel in a compact form (some CHAR column or
 * parameter; not after fbw_stmt_set_input/set_output replaced that side). */
FBW_API int fbw_stmt_compact(const fbw_stmt *s);
/* The format parameters travel in: fbw_stmt_input, or its compact form (batch.c sends it). */
FBW_API const fbw_msgfmt *fbw_stmt_wire_input(const fbw_stmt *s);

/* Results (valid once the queued requests are answered). */
FBW_API int fbw_stmt_busy(const fbw_stmt *s);          /* replies still outstanding for this statement */
FBW_API int fbw_stmt_prepared(const fbw_stmt *s);
FBW_API int fbw_stmt_type(const fbw_stmt *s);          /* FBW_STMT_* */
FBW_API int fbw_stmt_has_cursor(const fbw_stmt *s);
FBW_API const fbw_msgfmt *fbw_stmt_input(const fbw_stmt *s);
FBW_API const fbw_msgfmt *fbw_stmt_output(const fbw_stmt *s);
FBW_API const fbw_colname *fbw_stmt_input_names(const fbw_stmt *s);
FBW_API const fbw_colname *fbw_stmt_output_names(const fbw_stmt *s);
FBW_API size_t fbw_stmt_row_count(const fbw_stmt *s);  /* rows buffered since the last clear (latest
                                                 * execution only) */
FBW_API int fbw_stmt_eof(const fbw_stmt *s);           /* cursor exhausted (or no cursor) */
/* Decode buffered row i into values[0..output n). Views stay valid until rows are cleared. */
FBW_API int fbw_stmt_row(const fbw_stmt *s, size_t i, fbw_value *values, fbw_err *err);
FBW_API void fbw_stmt_clear_rows(fbw_stmt *s);
FBW_API uint64_t fbw_stmt_affected(const fbw_stmt *s); /* inserted+updated+deleted, with FBW_EXEC_COUNT */
/* The statement's server handle for requests built elsewhere (batch.c): FBW_OK, FBW_WAIT while
 * the allocation is unanswered, FBW_E_USAGE when not allocated. Never 0xFFFF: batch packets, like
 * op_execute and op_fetch, are decoded against the statement object by the server. */
FBW_API int fbw_stmt_handle(const fbw_stmt *s, uint16_t *h);
/* The server error of the last prepare/execute/fetch, code FBW_OK when none. */
FBW_API const fbw_err *fbw_stmt_error(const fbw_stmt *s);

/* Execute immediate without parameters (DDL, SET TRANSACTION, one-off SQL). Completion and error go
 * to *res once answered (res must outlive the reply). tx may be NULL only for SET TRANSACTION and
 * session statements. */
typedef struct fbw_exec_result {
    int done;
    fbw_err err;
} fbw_exec_result;
FBW_API int fbw_exec_immediate(fbw_conn *c, fbw_tx *tx, const char *sql, size_t len, fbw_exec_result *res);

/* Execute immediate with an input message and/or an output row (op_exec_immediate2, as
 * isc_dsql_exec_immed2 sends it): in/params the input message (in->n 0: none), out the format of
 * the output row (NULL or n 0: none); the server converts between these formats and the
 * statement's own. out must stay valid until the reply is in. Once answered, res->done is set,
 * res->has_row says whether op_sql_response carried the output message, res->row holds its bytes
 * (decode with fbw_msg_decode, out and the connection's protocol) and res->err a server error.
 * res->row must be initialised (fbw_buf_init) before the first call; each call resets it; the
 * caller frees it. Returns FBW_OK, FBW_E_USAGE (a format BLR cannot express, a value of the wrong
 * type; message in res->err), FBW_E_NOMEM, or the connection's error. */
typedef struct fbw_exec_result2 {
    int done;
    int has_row;
    fbw_buf row;
    fbw_err err;
} fbw_exec_result2;
FBW_API int fbw_exec_immediate2(fbw_conn *c, fbw_tx *tx, const char *sql, size_t len,
                                const fbw_msgfmt *in, const fbw_value *params,
                                const fbw_msgfmt *out, fbw_exec_result2 *res);

#endif
