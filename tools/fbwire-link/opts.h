/* SPDX-License-Identifier: MIT */
/* opts.h - fbwire-link's command line: what the relay is asked to do. */
#ifndef FBL_OPTS_H
#define FBL_OPTS_H

#include "fault.h"
#include "line.h"

#include <stdio.h>

typedef struct fbl_opts {
    const char *listen, *to; /* ADDR:PORT */
    fbl_line_cfg line[2];    /* FBL_UP (client to server), FBL_DOWN */
    uint64_t queue_max;      /* bytes held per direction before reading that side stops */
    uint64_t seed;
    int max_conns;
    /* Wake before a due time and poll through the rest (lead.h): spin_auto 1 learns how early
     * (spin_ns is the cap), 0 uses spin_ns as it is (0: no polling). */
    int spin_auto;
    uint64_t spin_ns;
    fbl_sched sched;
    const char *json, *fault_log;
    int quiet; /* no per-connection lines on stderr */
    /* --self-test */
    int self_test;
    uint64_t self_rtt[8]; /* asked RTTs, ns */
    int self_n;
    int self_count;           /* pings per RTT, 0 = about a second's worth */
    uint64_t tol_ppm, tol_ns; /* pass when |median - asked| <= asked*tol_ppm/1e6 + tol_ns */
} fbl_opts;

/* Fill `o` from argv. Returns 0, 1 when --help was printed (exit 0), -1 after an error message. */
int fbl_opts_parse(fbl_opts *o, int argc, char **argv);
void fbl_usage(FILE *f);

#endif
