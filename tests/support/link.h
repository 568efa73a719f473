/* SPDX-License-Identifier: MIT */
/* link.h - fbwire-link (tools/fbwire-link, docs/fbwire-link.md) as a child process of a test: a
 * relay on a loopback port the kernel picks, in front of a real server, with the test's shaping and
 * fault options; its fault log read back so a test can check that a fault hit where it meant it to.
 *
 * The relay's stderr, --json summary and fault log go to files in a directory of their own
 * ($TMPDIR). The child is killed when the test process dies (PR_SET_PDEATHSIG), and fbw_link_stop
 * bounds its end (SIGTERM, then SIGKILL after 5 s). */
#ifndef FBW_TEST_LINK_H
#define FBW_TEST_LINK_H

#include "err.h"

#include <stdint.h>

typedef struct fbw_link {
    int pid;       /* 0 when not running */
    int port;      /* where clients connect (127.0.0.1) */
    char dir[256]; /* the relay's files: err.txt, faults.jsonl, summary.json */
} fbw_link;

/* One line of the fault log. */
typedef struct fbw_link_fault {
    unsigned conn;     /* 1-based connection number */
    char fault[16];    /* "reset", "shutdown", "stall" */
    char dir[8];       /* "up" or "down" */
    uint64_t up, down; /* bytes delivered each way on that connection before the fault */
} fbw_link_fault;

/* The relay binary of this build. */
const char *fbw_link_program(void);
/* Start a relay to host:port with the extra options opts (NULL-terminated; NULL for none) and a
 * fault log; FBW_OK once it listens (l->port set). */
int fbw_link_start(fbw_link *l, const char *host, int port, const char *const *opts, fbw_err *err);
/* SIGUSR1: release every held stall. */
void fbw_link_release(const fbw_link *l);
/* End the relay (SIGTERM; SIGKILL if it is still there after 5 s), keep its files. Returns its
 * exit status (0 after SIGTERM), -1 when it had to be killed. */
int fbw_link_stop(fbw_link *l);
/* Parse the fault log into out[0..max); returns the number of faults logged (may exceed max). */
int fbw_link_faults(const fbw_link *l, fbw_link_fault *out, int max);
/* The first connection's totals from the relay's --json summary (after fbw_link_stop): bytes and
 * chunks read from the client (up) and from the server (down). FBW_OK or FBW_E_USAGE (no summary).
 */
typedef struct fbw_link_conn {
    uint64_t up_bytes, up_chunks, down_bytes, down_chunks;
} fbw_link_conn;
int fbw_link_first_conn(const fbw_link *l, fbw_link_conn *out);
/* Remove the relay's files and directory (after fbw_link_stop). */
void fbw_link_cleanup(fbw_link *l);

#endif
