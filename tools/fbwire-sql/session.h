/* SPDX-License-Identifier: MIT */
/* session.h - runs SQL statements one at a time on a connected client, the way isql does: prepare,
 * execute with the first fetch in the same write, fetch the rest, read blobs, print rows through
 * format.h, count affected rows, and keep the transaction state (autocommit per statement, or one
 * transaction with COMMIT / ROLLBACK / SET TRANSACTION typed as SQL). Reports failures and the
 * round-trip accounting on the message stream.
 *
 * Blocks (it waits on the client). Does not split scripts (split.h) or parse options (main.c). */
#ifndef FBW_SESSION_H
#define FBW_SESSION_H

#include "fbwire.h"

#include <stdio.h>

typedef struct fbw_session_opts {
    int mode;       /* enum fbw_fmt_mode */
    int stats;      /* print the accounting per statement and in total */
    int autocommit; /* each statement in its own transaction, committed after it */
    fbw_tx_opts tx; /* isolation and lock timeout of the transactions the session starts */
} fbw_session_opts;

typedef struct fbw_session fbw_session;

/* A session on cl, which fbw_session_close closes. Rows go to out, errors and stats to msg.
 * Returns FBW_OK or FBW_E_NOMEM / FBW_E_USAGE (bad options); cl stays open then. */
int fbw_session_new(fbw_client *cl, const fbw_session_opts *o, FILE *out, FILE *msg,
                    fbw_session **s);
/* Free the session and close its client: detach politely (an idle transaction autocommit started
 * ahead is rolled back in the same write), or drop the connection when `abort` or when it failed.
 * Returns what fbw_client_close returned. NULL is fine. */
int fbw_session_close(fbw_session *s, int abort);

/* Print the cost of what the connection did so far (connect, attach) as "-- stats connect:"
 * when stats are on. */
void fbw_session_note_connect(fbw_session *s);

/* Run one statement; `line` is where it starts in its script (for messages). Returns FBW_OK; or
 * the statement failed and was reported, the session goes on: FBW_E_SERVER, FBW_E_BADVALUE,
 * FBW_E_USAGE, FBW_E_UNSUPPORTED; or a fatal code (fbw_is_fatal): the connection is gone. */
int fbw_session_exec(fbw_session *s, const char *sql, size_t len, unsigned line);

/* fbw_session_exec without printing rows or stats, not counted as a statement (a failure is
 * reported and counted): *rows is how many rows it returned. */
int fbw_session_count(fbw_session *s, const char *sql, size_t len, unsigned line, uint64_t *rows);
/* SET STATS ON / OFF: the accounting of each following statement (and the totals at the end). */
void fbw_session_set_stats(fbw_session *s, int on);
fbw_client *fbw_session_client(fbw_session *s);

/* Report a failure found before the server was asked (a splitter error), counted as a failed
 * statement. */
void fbw_session_fail(fbw_session *s, const fbw_err *e, unsigned line);

/* End the session's transaction (commit when `commit`, else roll back) if statements ran in it,
 * and print the totals when stats are on. (A transaction autocommit started for a statement that
 * did not come is left to fbw_session_close.) Returns FBW_OK or the failure (reported). */
int fbw_session_end(fbw_session *s, int commit);

/* Statements that failed so far. */
unsigned fbw_session_failures(const fbw_session *s);

#endif
