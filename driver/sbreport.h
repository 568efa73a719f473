/* SPDX-License-Identifier: MIT */
/* sbreport.h - the sysbench side of the wire statistics report: hooks sbdrv.c calls around
 * backend operations, the per-interval lines and the report printed after sysbench's own.
 *
 * Active for the `run` command only (every hook is a no-op on a NULL handle). fbclient's traffic
 * is seen through the socket tap (tap.h) for the whole session; fbwire's comes from its own
 * client (backend `stats`), and the tap only watches its handshake for the connection facts.
 * Run metadata (events, queries, duration, threads) is read from sysbench's exported counters and
 * timer at the end; the command line from /proc/self/cmdline (passwords are masked in output). */
#ifndef SBDRV_SBREPORT_H
#define SBDRV_SBREPORT_H

#include "backend.h"
#include "sbdrv.h"

typedef struct sbdrv_sbrep sbdrv_sbrep;           /* one per driver */
typedef struct sbdrv_sbrep_conn sbdrv_sbrep_conn; /* one per sysbench connection */

/* --P-accounting: "sampled" (default), "every-call", "off" (no report and no accounting at
 * all), or "cost-sampled" / "cost-every-call": measure what that method costs (cpuacct.h: blocks
 * of calls with and without accounting alternate) and print that instead of the report
 * (docs/report.md). Returns SBDRV_SBREP_ACCT_OFF, a sbdrv_cpu_mode possibly with SBDRV_CPU_COST, or
 * -1 for an invalid value. */
#define SBDRV_SBREP_ACCT_OFF (-2)
int sbdrv_sbrep_accounting(const char *value);

/* At driver init. Returns NULL (reporting off) unless the command is `run`, or when accounting
 * is SBDRV_SBREP_ACCT_OFF. json_path may be NULL. host, be and conf must outlive the handle. */
sbdrv_sbrep *sbdrv_sbrep_open(const sbdrv_sb_host *host, const char *driver, const sbdrv_backend *be,
                          const sbdrv_be_conf *conf, const char *json_path, int accounting);
/* Around the backend's connect: arms the tap in the calling thread, then takes the result. On
 * success *c is created (first attach) or reused (reconnect) and the attach is charged to the
 * session class; the first connection also learns the facts (and asks the server version). */
void sbdrv_sbrep_connect_begin(sbdrv_sbrep *r);
void sbdrv_sbrep_connect_end(sbdrv_sbrep *r, sbdrv_sbrep_conn **c, sbdrv_be_conn *bc, int rc);
/* Mark the start of a driver call. When the connection's sampler picks this call (cpuacct.h;
 * every call with --P-accounting=every-call) the calling thread's CPU clock is read here and
 * again at the next charge, and the difference is charged with the traffic; otherwise the call
 * is counted for its class's estimate. Calls not started this way are charged no CPU (attach,
 * the version query). */
void sbdrv_sbrep_begin(sbdrv_sbrep_conn *c);
/* Charge the traffic since the previous charge to class cls (classify.h). */
void sbdrv_sbrep_charge(sbdrv_sbrep_conn *c, int cls);
/* The same, adding to the class's last execution instead of counting a new one. */
void sbdrv_sbrep_charge_more(sbdrv_sbrep_conn *c, int cls);
/* Before the backend's disconnect: charge what is left to the session class and stop watching
 * this attachment (its detach is not counted, for either driver). `final` frees *c. */
void sbdrv_sbrep_detach(sbdrv_sbrep_conn **c, int final);
/* At driver done: print the report (log_text), write the JSON file, free everything. */
void sbdrv_sbrep_done(sbdrv_sbrep *r);

#endif
