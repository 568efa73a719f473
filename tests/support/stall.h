/* SPDX-License-Identifier: MIT */
/* stall.h - stop a local test server (SIGSTOP) for a bounded time: a hung server or a dead
 * network path, for the timeout tests (tests/integ/test_stall.c, tests/stall/ scripts).
 *
 * The server is the process that listens on the port (measure/srvcpu.h finds it). Only the stock
 * servers may be stalled: the shared fb3/fb4 ($FBW_FB3_PORT, $FBW_FB4_PORT) are refused, as are
 * ports nobody local listens on. The SIGCONT is guaranteed three ways: a watchdog process in a
 * session of its own (so a test killed with its process group cannot take it along) resumes the
 * server after max_ms whatever happens to the test; fbw_stall_end resumes it at once; and an
 * atexit handler resumes whatever this process still holds stopped. */
#ifndef FBW_TEST_STALL_H
#define FBW_TEST_STALL_H

#include "err.h"

typedef struct fbw_stall {
    int server_pid; /* the stopped server; 0 when none */
    int watchdog_pid;
} fbw_stall;

/* Stop the server listening on `port` for at most max_ms (1..60000). FBW_OK once it is stopped. */
int fbw_stall_begin(fbw_stall *st, unsigned port, int max_ms, fbw_err *err);
/* Resume the server now (also when the watchdog already did). Safe to call twice. */
void fbw_stall_end(fbw_stall *st);

#endif
