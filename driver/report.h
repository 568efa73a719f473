/* SPDX-License-Identifier: MIT */
/* report.h - round trips per statement class for the sysbench drivers, and the "Firebird wire
 * statistics" report built from them (text for the console, JSON for files).
 *
 * After each driver operation the caller fills in the connection's cumulative fbw_stats (from the
 * fbwire client, or from the fbclient tap's decoder: tap.h) and charges the difference since the
 * previous operation to a statement class (classify.h). Each connection has its own accumulator,
 * touched only by the thread using the connection: no lock on that path. Merging, totals and
 * rendering happen at the end. No sysbench, no sockets here (sbreport.c does that glue). */
#ifndef SBDRV_REPORT_H
#define SBDRV_REPORT_H

#include "classify.h"
#include "cpuacct.h"
#include "err.h"
#include "stats.h"

#include <stdint.h>
#include <stdio.h>

/* Executions by wait time: 8 exact buckets for 0..7 ns, then 8 per power of two (12.5% wide)
 * up to 2^43 ns; longer waits land in the last bucket. */
#define SBDRV_REP_HIST 336

typedef struct sbdrv_rep_cls {
    uint64_t executions, round_trips;
    uint64_t packets_sent, packets_received, bytes_sent, bytes_received;
    uint64_t wait_ns;
    uint64_t cpu_ns;           /* client CPU (the calling thread's) inside the driver calls:
                                  set by sbdrv_rep_merge from `cpu` (measured + estimated) */
    sbdrv_cpu_cls cpu;           /* how that figure was taken (cpuacct.h) */
    uint32_t hist[SBDRV_REP_HIST];
} sbdrv_rep_cls;

/* One connection's accounting, or the merge of several. ops is everything charged, per op code. */
typedef struct sbdrv_rep_acc {
    sbdrv_rep_cls cls[SBDRV_CLS_COUNT];
    fbw_stats ops;
} sbdrv_rep_acc;

typedef struct sbdrv_rep sbdrv_rep;           /* all connections of one driver in one run */
typedef struct sbdrv_rep_conn sbdrv_rep_conn; /* one connection, used by one thread at a time */

int sbdrv_rep_new(sbdrv_rep **out);
/* Frees every connection accumulator too. */
void sbdrv_rep_free(sbdrv_rep *r);
/* A new accumulator owned by r (takes r's lock once). */
int sbdrv_rep_conn_new(sbdrv_rep *r, sbdrv_rep_conn **out);
/* Scratch the caller fills with the connection's cumulative stats before sbdrv_rep_conn_charge
 * (kept between charges: left unchanged, the next charge adds no traffic). */
fbw_stats *sbdrv_rep_conn_now(sbdrv_rep_conn *c);
/* Charge now - previous to class cls as one execution of it, with cpu_ns of client CPU time
 * the driver call took (its clock read: SBDRV_CPU_READ). */
void sbdrv_rep_conn_charge(sbdrv_rep_conn *c, int cls, uint64_t cpu_ns);
/* The same without counting an execution: later traffic of an execution already charged (a
 * pipelined result read by the script). */
void sbdrv_rep_conn_charge_more(sbdrv_rep_conn *c, int cls, uint64_t cpu_ns);
/* The statement path: charge src - previous (src: the source's live cumulative stats, not
 * copied; NULL when nothing new is known), as an execution or not, with the call's CPU and how
 * it was taken (cpuacct.h). Only the totals are compared per call; the per-op table is copied
 * from src every few hundred charges, so call sbdrv_rep_conn_snapshot with the source before it
 * goes away (detach), or the per-op table may miss the last calls. */
void sbdrv_rep_conn_charge_src(sbdrv_rep_conn *c, const fbw_stats *src, int cls, int execution,
                             sbdrv_cpu_how how, uint64_t cpu_ns);
/* Take the whole of src (the per-op table included) as the previous charge's figures. Call
 * right after a charge from the same source. */
void sbdrv_rep_conn_snapshot(sbdrv_rep_conn *c, const fbw_stats *src);
/* The stats source starts again from zero (a new attachment after a reconnect). */
void sbdrv_rep_conn_restart(sbdrv_rep_conn *c);
/* Sum of every connection into *out (zeroed first), with each class's cpu_ns estimated from
 * the merged figures. Call when no connection is in use. */
void sbdrv_rep_merge(sbdrv_rep *r, sbdrv_rep_acc *out);
unsigned sbdrv_rep_connections(sbdrv_rep *r);

/* Running totals, readable from any thread while connections work (relaxed atomics). */
typedef struct sbdrv_rep_live {
    uint64_t round_trips;      /* statement classes only (not prepare/session) */
    uint64_t wait_ns;          /* same */
    uint64_t executions;       /* same */
} sbdrv_rep_live;
void sbdrv_rep_live_sum(sbdrv_rep *r, sbdrv_rep_live *out);

/* Facts about the connection, the same for both drivers (learned by the tap's decoder). */
typedef struct sbdrv_rep_facts {
    char server_version[64];   /* ENGINE_VERSION, "" when unknown */
    int protocol;              /* 10..20, 0 when unknown */
    char auth_plugin[32];      /* "" when unknown */
    char wire_crypt[32];       /* "none" or the plugin */
    int compression;           /* -1 unknown */
    int lazy_send;             /* -1 unknown */
    char note[160];            /* why something is unknown (decoder error), "" */
    int socket_level;          /* encrypted fbclient session: round trips, packets and bytes
                                  are counted at the socket (send/recv calls, socket bytes);
                                  op codes and transactions are not available */
    int unmeasured;            /* no statistics source at all (fbclient without its tap): round
                                  trips, packets and bytes are not available */
} sbdrv_rep_facts;
void sbdrv_rep_facts_init(sbdrv_rep_facts *f);

/* One --report-interval line. */
typedef struct sbdrv_rep_interval {
    double t;                  /* seconds since the run started, at the end of the interval */
    double seconds;            /* length of the interval */
    uint64_t events, round_trips, wait_ns, executions;
} sbdrv_rep_interval;

/* CPU of the server process over the run (measure/srvcpu.h), when it runs on this machine. */
typedef struct sbdrv_rep_server_cpu {
    int available;             /* 0: why says why not (remote server, no permission, ...) */
    int pid, children;         /* the listening process; live descendants at the end */
    uint64_t cpu_ns;           /* user+system over the run, children included */
    char why[200];
} sbdrv_rep_server_cpu;

/* The run as sysbench saw it. Strings may be NULL. argv is the command line as given: values of
 * options whose name contains "password" are printed as "***". */
typedef struct sbdrv_rep_run {
    const char *driver;         /* "fbwire" | "fbclient" */
    const char *autocommit, *isolation;
    const char *pipeline;       /* "off" | "transaction" */
    const char *row_format;     /* "compact" | "described" (fbclient: described) */
    const char *client_library; /* fbclient: "PATH (isc_get_client_version)"; NULL for fbwire */
    const char *sysbench_version, *script, *command;
    int argc;
    char *const *argv;
    unsigned threads;
    double duration_s;
    uint64_t events, reads, writes, other, errors, reconnects;
    sbdrv_rep_facts facts;
    sbdrv_rep_server_cpu server_cpu;
    const sbdrv_rep_interval *intervals;
    size_t nintervals;
    const char *cpu_method;     /* "sampled" | "every-call" (NULL: every-call) */
    unsigned cpu_sample_every;  /* sampled: one call in N on average after the warm-up */
} sbdrv_rep_run;

/* Figures derived from an accumulator and the run (definitions in docs/report.md). */
typedef struct sbdrv_rep_totals {
    uint64_t round_trips;       /* statement classes */
    uint64_t round_trips_all;   /* including prepare and session */
    uint64_t executions;        /* statement classes */
    uint64_t wait_ns;           /* statement classes */
    uint64_t cpu_ns;            /* statement classes: client CPU inside driver calls */
    uint64_t cpu_calls;         /* statement classes: driver calls that figure covers */
    uint64_t cpu_measured_calls; /* of them, calls whose CPU clock was read (the rest estimated) */
    uint64_t transactions;      /* op_transaction requests sent */
    double rt_per_event, rt_per_transaction, rt_per_second, wait_share, tps, qps;
    double cpu_us_per_event, cpu_us_per_execution;
    double statements_per_round_trip;            /* executions / round trips (statement classes) */
    double server_us_per_event, server_us_per_execution; /* 0 when not available */
} sbdrv_rep_totals;
void sbdrv_rep_totals_of(const sbdrv_rep_acc *a, const sbdrv_rep_run *run, sbdrv_rep_totals *t);

/* Wait-time histogram helpers. */
unsigned sbdrv_rep_bucket(uint64_t ns);
uint64_t sbdrv_rep_bucket_upper(unsigned b);
/* Upper edge of the bucket holding the p-th percentile (0 < p <= 100) of c's executions. */
uint64_t sbdrv_rep_percentile(const sbdrv_rep_cls *c, double p);

/* The text section printed after sysbench's report. */
void sbdrv_rep_print(FILE *f, const sbdrv_rep_acc *a, const sbdrv_rep_run *run);
/* One short line per --report-interval. */
void sbdrv_rep_interval_line(char *buf, size_t cap, const char *driver, const sbdrv_rep_interval *iv,
                           unsigned threads);
/* The JSON document (docs/report.schema.json) written to path. FBW_E_UNSUPPORTED when built
 * without jansson, FBW_E_IO when the file cannot be written. */
int sbdrv_rep_write_json(const char *path, const sbdrv_rep_acc *a, const sbdrv_rep_run *run, fbw_err *err);

#endif
