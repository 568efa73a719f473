/* SPDX-License-Identifier: MIT */
/* sbreport_int.h - the sysbench report glue's parts (driver/sbreport*.c) and what they share: the
 * report and connection records and the calls one part makes into another. Internal to the
 * sysbench driver; the contract is sbreport.h.
 *   sbreport.c      open and done, the per-connection hooks around backend calls, the run's facts
 *   sbreport_run.c  the command line, run metadata, the interval thread's lines, the final report
 * sbreport.c calls sbreport_run.c, never the other way. */
#ifndef SBDRV_SBREPORT_INT_H
#define SBDRV_SBREPORT_INT_H

#include "sbreport.h"

#include "cpuacct.h"
#include "report.h"
#include "srvcpu.h"
#include "tap.h"

#include <pthread.h>
#include <time.h>


/* The head of sysbench 1.0.20's sb_timer_t (sb_timer.h): started when all threads are ready,
 * stopped before the cumulative report. */
typedef struct sb_timer_head {
    struct timespec time_start, time_end;
} sb_timer_head;

struct sbdrv_sbrep {
    sbdrv_sb_host host;
    const char *driver;
    const sbdrv_backend *be;
    const sbdrv_be_conf *conf;
    sbdrv_cpu_mode cpu_mode;       /* --P-accounting */
    int cost;                    /* --P-accounting=cost-*: measure the accounting, no report */
    sbdrv_sbrep_conn *live;        /* connections not finally detached (under lock) */
    sbdrv_cost_result cost_res;    /* under lock */
    char *json_path;
    sbdrv_rep *rep;
    pthread_mutex_t lock;        /* facts, interval list, thread start/stop */
    pthread_cond_t wake;
    int have_facts, asked_version, stop, thread_started;
    sbdrv_rep_facts facts;
    pthread_t thread;
    unsigned interval_s, threads;
    sbdrv_rep_interval *intervals;
    size_t nintervals, cap;
    uint64_t (*counter)(int thread_id, int type);
    const sb_timer_head *timer;
    srvcpu srv;              /* the server's process, found at the first attach */
    int srv_state;               /* 0 not tried, 1 found (srv_cpu0 valid), -1 not available */
    uint64_t srv_cpu0;           /* its CPU then */
    char srv_why[200];
};

struct sbdrv_sbrep_conn {
    sbdrv_sbrep *r;
    sbdrv_rep_conn *acc;
    sbdrv_tap *tap;
    sbdrv_be_conn *bc;
    sbdrv_sbrep_conn *next_live;   /* sbdrv_sbrep.live */
    sbdrv_cpu_sampler sampler;     /* which calls have their CPU clock read */
    sbdrv_cpu_how how;             /* the call begun: UNTIMED when none */
    sbdrv_cost_probe probe;        /* cost mode: which calls are accounted */
    int unaccounted;             /* cost mode: the call begun is in an unaccounted block */
    uint64_t cpu0;               /* thread CPU clock at sbdrv_sbrep_begin, when read */
};

/* sbreport_run.c */
char **sbdrv_sbrep_read_cmdline(int *argc, char **buf);
const char *sbdrv_sbrep_positional(int argc, char **argv, int n);
void *sbdrv_sbrep_interval_main(void *arg);
/* The final report of sbdrv_sbrep_done: printed (log_text) and written to the JSON file. */
void sbdrv_sbrep_report(sbdrv_sbrep *r);

#endif
