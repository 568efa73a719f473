/* SPDX-License-Identifier: MIT */
/* sbreport.h - the sysbench side of the wire statistics report: hooks sbdrv.c calls around
 * backend operations, the per-interval lines and the report printed after sysbench's own.
 *
 * Active for the `run` command only (every hook is a no-op on a NULL handle). fbclient's traffic
 * is seen through the socket tap (tap.h) for the whole session; fbwire's comes from its own
 * client (backend `stats`), and the tap only watches its handshake for the connection facts.
 * Run metadata (events, queries, duration, threads) is read from sysbench's exported counters and
 * timer at the end; the command line from /proc/self/cmdline (passwords are masked in output). */
#ifndef FBW_SBREPORT_H
#define FBW_SBREPORT_H

#include "backend.h"
#include "sbdrv.h"

typedef struct fbw_sbrep fbw_sbrep;           /* one per driver */
typedef struct fbw_sbrep_conn fbw_sbrep_conn; /* one per sysbench connection */

/* --P-accounting: "sampled" (default), "every-call", "off" (no report and no accounting at
 * all), or "cost-sampled" / "cost-every-call": measure what that method costs (cpuacct.h: blocks
 * of calls with and without accounting alternate) and print that instead of the report
 * (docs/report.md). Returns FBW_SBREP_ACCT_OFF, a fbw_cpu_mode possibly with FBW_CPU_COST, or
 * -1 for an invalid value. */
#define FBW_SBREP_ACCT_OFF (-2)
int fbw_sbrep_accounting(const char *value);

/* At driver init. Returns NULL (reporting off) unless the command is `run`, or when accounting
 * is FBW_SBREP_ACCT_OFF. json_path may be NULL. host, be and conf must outlive the handle. */
fbw_sbrep *fbw_sbrep_open(const fbw_sb_host *host, const char *driver, const fbw_backend *be,
                          const fbw_be_conf *conf, const char *json_path, int accounting);
/* Around the backend's connect: arms the tap in the calling thread, then takes the result. On
 * success *c is created (first attach) or reused (reconnect) and the attach is charged to the
 * session class; the first connection also learns the facts (and asks the server version). */
void fbw_sbrep_connect_begin(fbw_sbrep *r);
void fbw_sbrep_connect_end(fbw_sbrep *r, fbw_sbrep_conn **c, fbw_be_conn *bc, int rc);
/* Mark the start of a driver call. When the connection's sampler picks this call (cpuacct.h;
 * every call with --P-accounting=every-call) the calling thread's CPU clock is read here and
 * again at the next charge, and the difference is charged with the traffic; otherwise the call
 * is counted for its class's estimate. Calls not started this way are charged no CPU (attach,
 * the version query). */
void fbw_sbrep_begin(fbw_sbrep_conn *c);
/* Charge the traffic since the previous charge to class cls (classify.h). */
void fbw_sbrep_charge(fbw_sbrep_conn *c, int cls);
/* The same, adding to the class's last execution instead of counting a new one. */
void fbw_sbrep_charge_more(fbw_sbrep_conn *c, int cls);
/* Before the backend's disconnect: charge what is left to the session class and stop watching
 * this attachment (its detach is not counted, for either driver). `final` frees *c. */
void fbw_sbrep_detach(fbw_sbrep_conn **c, int final);
/* At driver done: print the report (log_text), write the JSON file, free everything. */
void fbw_sbrep_done(fbw_sbrep *r);

#endif
