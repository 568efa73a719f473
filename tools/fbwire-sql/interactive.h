/* SPDX-License-Identifier: MIT */
/* interactive.h - fbwire-sql at a terminal: a prompt (SQL> , CON> while a statement goes on),
 * each statement run as soon as its terminator is typed, line editing and a history file through
 * libedit, and Ctrl-C cancelling the running statement on the server (fbw_client_cancel) while the
 * session goes on. Scripts, pipes and -i FILE do not come here (main.c). */
#ifndef FBW_INTERACTIVE_H
#define FBW_INTERACTIVE_H

#include "session.h"
#include "split.h"

enum { FBW_IA_END_COMMIT, FBW_IA_END_ROLLBACK, FBW_IA_FATAL };

/* Read and run statements until EXIT (commit), QUIT (rollback), end of input (commit) or a lost
 * connection (FBW_IA_FATAL). The history file is $FBWIRE_SQL_HISTORY, else ~/.fbwire_sql_history
 * ("" turns it off). */
int fbw_interactive_run(fbw_session *se, fbw_split *sp);

#endif
