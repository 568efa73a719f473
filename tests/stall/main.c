/* SPDX-License-Identifier: MIT */
/* fbwire-test-stall - stall a local stock test server for the shell timeout tests.
 *
 *   fbwire-test-stall PORT MAX_MS
 *
 * Stops the server listening on PORT (never the shared fb3/fb4) and prints "SERVER_PID
 * WATCHDOG_PID" once it is stopped; a watchdog in its own session resumes it after MAX_MS at the
 * latest, or at once on `kill WATCHDOG_PID` (the caller's trap also sends SIGCONT to SERVER_PID).
 * Exit 0 when stopped, 1 with the reason on stderr. */
#include "stall.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fbwire-test-stall PORT MAX_MS\n");
        return 2;
    }
    fbw_stall st;
    fbw_err err;
    fbw_err_clear(&err);
    if (fbw_stall_begin(&st, (unsigned)atoi(argv[1]), atoi(argv[2]), &err) != FBW_OK) {
        fprintf(stderr, "fbwire-test-stall: %s\n", err.msg);
        return 1;
    }
    printf("%d %d\n", st.server_pid, st.watchdog_pid);
    fflush(stdout);
    _Exit(0); /* not exit(): the atexit handler would resume the server at once */
}
