/* SPDX-License-Identifier: MIT */
/* interactive.h - fbwire-sql at a terminal: a prompt (SQL> , CON> while a statement goes on),
 * each statement run as soon as its terminator is typed, line editing and a history file through
 * libedit, and Ctrl-C cancelling the running statement on the server (fbw_client_cancel) while the
 * session goes on. Scripts, pipes and -i FILE do not come here (main.c). */
#ifndef SQLTOOL_INTERACTIVE_H
#define SQLTOOL_INTERACTIVE_H

#include "session.h"
#include "split.h"

enum { SQLTOOL_IA_END_COMMIT, SQLTOOL_IA_END_ROLLBACK, SQLTOOL_IA_FATAL };

/* Read and run statements until EXIT (commit), QUIT (rollback), end of input (commit) or a lost
 * connection (SQLTOOL_IA_FATAL). The history file is $FBWIRE_SQL_HISTORY, else ~/.fbwire_sql_history
 * ("" turns it off). */
int sqltool_interactive_run(sqltool_session *se, sqltool_split *sp);

#endif
