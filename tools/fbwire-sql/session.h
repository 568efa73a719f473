/* SPDX-License-Identifier: MIT */
/* session.h - runs SQL statements one at a time on a connected client, the way isql does: prepare,
 * execute with the first fetch in the same write, fetch the rest, read blobs, print rows through
 * format.h, count affected rows, and keep the transaction state (autocommit per statement, or one
 * transaction with COMMIT / ROLLBACK / SET TRANSACTION typed as SQL). Reports failures and the
 * round-trip accounting on the message stream.
 *
 * Blocks (it waits on the client). Does not split scripts (split.h) or parse options (main.c). */
#ifndef SQLTOOL_SESSION_H
#define SQLTOOL_SESSION_H

#include "fbwire.h"

#include <stdio.h>

typedef struct sqltool_session_opts {
    int mode;       /* enum sqltool_fmt_mode */
    int stats;      /* print the accounting per statement and in total */
    int autocommit; /* each statement in its own transaction, committed after it */
    fbw_tx_opts tx; /* isolation and lock timeout of the transactions the session starts */
    /* Where the session is connected and how (SHOW DATABASE attaches to the same server's service
     * manager with them, dbheader.h); NULL: no header page. Must outlive the session. */
    const char *dsn;
    const fbw_client_opts *client;
} sqltool_session_opts;

typedef struct sqltool_session sqltool_session;

/* A session on cl, which sqltool_session_close closes. Rows go to out, errors and stats to msg.
 * Returns FBW_OK or FBW_E_NOMEM / FBW_E_USAGE (bad options); cl stays open then. */
int sqltool_session_new(fbw_client *cl, const sqltool_session_opts *o, FILE *out, FILE *msg,
                    sqltool_session **s);
/* Free the session and close its client: detach politely (an idle transaction autocommit started
 * ahead is rolled back in the same write), or drop the connection when `abort` or when it failed.
 * Returns what fbw_client_close returned. NULL is fine. */
int sqltool_session_close(sqltool_session *s, int abort);

/* Print the cost of what the connection did so far (connect, attach) as "-- stats connect:"
 * when stats are on. */
void sqltool_session_note_connect(sqltool_session *s);

/* Run one statement; `line` is where it starts in its script (for messages). Returns FBW_OK; or
 * the statement failed and was reported, the session goes on: FBW_E_SERVER, FBW_E_BADVALUE,
 * FBW_E_USAGE, FBW_E_UNSUPPORTED; or a fatal code (fbw_is_fatal): the connection is gone. */
int sqltool_session_exec(sqltool_session *s, const char *sql, size_t len, unsigned line);

/* sqltool_session_exec without printing rows or stats, not counted as a statement (a failure is
 * reported and counted): *rows is how many rows it returned. */
int sqltool_session_count(sqltool_session *s, const char *sql, size_t len, unsigned line, uint64_t *rows);
/* SET STATS ON / OFF: the accounting of each following statement (and the totals at the end). */
void sqltool_session_set_stats(sqltool_session *s, int on);

/* SET SCROLL ON / OFF: later SELECTs open scrollable cursors (protocol 18+, Firebird 5), printed as
 * usual and then kept open until the next statement: in autocommit mode that statement's commit is
 * held back until then. Refused below protocol 18 (the library's error, reported and counted as a
 * failed statement; the setting stays as it was). */
int sqltool_session_set_scroll(sqltool_session *s, int on, unsigned line);
/* FETCH NEXT | PRIOR | FIRST | LAST | ABSOLUTE n | RELATIVE n: move the open scrollable cursor
 * (op and pos as fbw_stmt_fetch_scroll) and print the row it lands on, or "no row: ..." past
 * either end; one round trip, accounted as a statement. FBW_E_USAGE (reported) with no cursor open. */
int sqltool_session_fetch(sqltool_session *s, int op, int32_t pos, unsigned line);
/* SHOW COUNT: "record count: N" of the open scrollable cursor (op_info_cursor; one round trip, the
 * cursor stays where it is). */
int sqltool_session_count_cursor(sqltool_session *s, unsigned line);
fbw_client *sqltool_session_client(sqltool_session *s);
const sqltool_session_opts *sqltool_session_options(const sqltool_session *s);

/* Report a failure found before the server was asked (a splitter error), counted as a failed
 * statement. */
void sqltool_session_fail(sqltool_session *s, const fbw_err *e, unsigned line);

/* End the session's transaction (commit when `commit`, else roll back) if statements ran in it,
 * and print the totals when stats are on. (A transaction autocommit started for a statement that
 * did not come is left to sqltool_session_close.) Returns FBW_OK or the failure (reported). */
int sqltool_session_end(sqltool_session *s, int commit);

/* Statements that failed so far. */
unsigned sqltool_session_failures(const sqltool_session *s);

#endif
