/* SPDX-License-Identifier: MIT */
/* commands.h - the isql commands fbwire-sql answers itself instead of sending them to the server:
 * EXIT, QUIT, SHOW TABLES, SHOW TABLE name, SHOW DATABASE, SET STATS [ON|OFF], SET STATEMENT
 * TIMEOUT n [HOUR|MINUTE|SECOND|MILLISECOND] (the connection's statement timeout), and for scrollable
 * cursors (protocol 18+) SET SCROLL ON|OFF, FETCH NEXT|PRIOR|FIRST|LAST|ABSOLUTE n|RELATIVE n and
 * SHOW COUNT (session.h). Each one is a
 * statement like any other (it ends with the terminator); SET TERM is the splitter's (split.h).
 * SHOW runs ordinary queries on the system tables through the session (session.h). */
#ifndef SQLTOOL_COMMANDS_H
#define SQLTOOL_COMMANDS_H

#include "session.h"

enum sqltool_cmd_result {
    SQLTOOL_CMD_SQL,  /* not a command: send it to the server */
    SQLTOOL_CMD_DONE, /* a command ran (or failed, reported and counted as a failed statement) */
    SQLTOOL_CMD_EXIT, /* EXIT: leave, committing the open transaction */
    SQLTOOL_CMD_QUIT, /* QUIT: leave, rolling it back */
};

/* Run sql[0..len) if it is a command; *rc is FBW_OK, the failure, or a fatal code when the
 * connection is gone. */
int sqltool_cmd_run(sqltool_session *se, const char *sql, size_t len, unsigned line, int *rc);

/* key: value lines of what the connection negotiated and cost so far (--info, SHOW DATABASE). */
void sqltool_cmd_print_info(fbw_client *cl, FILE *out);

#endif
