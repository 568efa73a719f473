/* SPDX-License-Identifier: MIT */
/* sbreport_run.c - the report's run-level part (see sbreport_int.h): the command line, run
 * metadata from sysbench's counters and timer, the interval thread's lines and the final report. */
#define _GNU_SOURCE
#include "sbreport_int.h"

#include "classify.h"
#include "cpuacct.h"
#include "report.h"
#include "srvcpu.h"
#include "tap.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CMDLINE (64u * 1024u)

/* ---------------------------------------------------------------- command line */

/* argv of this process (NUL-separated in /proc/self/cmdline); *buf owns the strings. */
char **sbdrv_sbrep_read_cmdline(int *argc, char **buf)
{
    *argc = 0;
    *buf = NULL;
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f)
        return NULL;
    char *b = malloc(MAX_CMDLINE + 1);
    size_t n = b ? fread(b, 1, MAX_CMDLINE, f) : 0;
    fclose(f);
    if (!b)
        return NULL;
    b[n] = '\0';
    int count = 0;
    for (size_t i = 0; i < n; i++)
        count += b[i] == '\0';
    char **argv = calloc((size_t)count + 1, sizeof *argv);
    if (!argv) {
        free(b);
        return NULL;
    }
    for (size_t i = 0; i < n && *argc < count; i += strlen(b + i) + 1)
        argv[(*argc)++] = b + i;
    *buf = b;
    return argv;
}

/* The n-th argument that is not an option (0: the script, 1: the command). */
const char *sbdrv_sbrep_positional(int argc, char **argv, int n)
{
    for (int i = 1; i < argc; i++)
        if (argv[i][0] != '-' && n-- == 0)
            return argv[i];
    return NULL;
}

static const char *autocommit_name(sbdrv_autocommit a)
{
    return a == SBDRV_AC_SHARED ? "shared" : a == SBDRV_AC_PIPELINED ? "pipelined" : "per-statement";
}

static const char *isolation_name(sbdrv_be_isolation i)
{
    switch (i) {
    case SBDRV_BE_ISO_READ_COMMITTED_NOREC: return "read-committed-no-rec-version";
    case SBDRV_BE_ISO_READ_CONSISTENCY: return "read-consistency";
    case SBDRV_BE_ISO_SNAPSHOT: return "snapshot";
    case SBDRV_BE_ISO_SERIALIZABLE: return "serializable";
    default: return "read-committed";
    }
}

/* ---------------------------------------------------------------- run metadata */

static uint64_t counter_sum(const sbdrv_sbrep *r, int type)
{
    uint64_t s = 0;
    for (unsigned i = 0; r->counter && i < r->threads; i++)
        s += r->counter((int)i, type);
    return s;
}

static uint64_t ts_ns(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

/* ---------------------------------------------------------------- interval lines */

static void add_ns(struct timespec *t, uint64_t ns)
{
    uint64_t v = ts_ns(t) + ns;
    t->tv_sec = (time_t)(v / 1000000000u);
    t->tv_nsec = (long)(v % 1000000000u);
}

/* Sleep until `when` (CLOCK_MONOTONIC) or until done asks to stop; returns 0 when stopping. */
static int sleep_until(sbdrv_sbrep *r, const struct timespec *when)
{
    pthread_mutex_lock(&r->lock);
    while (!r->stop && pthread_cond_timedwait(&r->wake, &r->lock, when) != ETIMEDOUT)
        ;
    int go = !r->stop;
    pthread_mutex_unlock(&r->lock);
    return go;
}

/* One line per interval, a little after sysbench's own (same schedule: start + k * interval). */
void *sbdrv_sbrep_interval_main(void *arg)
{
    sbdrv_sbrep *r = arg;
    struct timespec start = {0, 0}, when;
    while (start.tv_sec == 0 && start.tv_nsec == 0) { /* the timer starts once all threads are up */
        clock_gettime(CLOCK_MONOTONIC, &when);
        add_ns(&when, 10000000u);
        if (!sleep_until(r, &when))
            return NULL;
        start = r->timer->time_start;
    }
    uint64_t prev_events = 0;
    sbdrv_rep_live prev = {0, 0, 0}, now;
    for (unsigned k = 1;; k++) {
        when = start;
        add_ns(&when, (uint64_t)k * r->interval_s * 1000000000u + 20000000u);
        if (!sleep_until(r, &when))
            return NULL;
        uint64_t events = counter_sum(r, 3 /* SB_CNT_EVENT */);
        sbdrv_rep_live_sum(r->rep, &now);
        sbdrv_rep_interval iv = {(double)k * r->interval_s, r->interval_s, events - prev_events,
                               now.round_trips - prev.round_trips, now.wait_ns - prev.wait_ns,
                               now.executions - prev.executions};
        prev_events = events;
        prev = now;
        char line[256];
        sbdrv_rep_interval_line(line, sizeof line, r->driver, &iv, r->threads);
        r->host.log_text(SBDRV_SB_LOG_NOTICE, "%s", line);
        pthread_mutex_lock(&r->lock);
        if (r->nintervals == r->cap) {
            size_t cap = r->cap ? r->cap * 2 : 64;
            sbdrv_rep_interval *n = realloc(r->intervals, cap * sizeof *n);
            if (n) {
                r->intervals = n;
                r->cap = cap;
            }
        }
        if (r->nintervals < r->cap)
            r->intervals[r->nintervals++] = iv;
        pthread_mutex_unlock(&r->lock);
    }
}

/* ---------------------------------------------------------------- done */

/* Print a rendered text block line by line through sysbench's logger (keeps its ordering). */
static void emit(const sbdrv_sbrep *r, const char *text)
{
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        r->host.log_text(SBDRV_SB_LOG_NOTICE, "%.*s", (int)n, p);
        p += n + (nl ? 1 : 0);
    }
}

/* The server's CPU over the run, from its reading at the first attach. */
static void server_cpu_of_run(sbdrv_sbrep *r, sbdrv_rep_server_cpu *out)
{
    memset(out, 0, sizeof *out);
    uint64_t ns = 0;
    fbw_err e;
    fbw_err_clear(&e);
    if (r->srv_state != 1) {
        snprintf(out->why, sizeof out->why, "%s", r->srv_why[0] ? r->srv_why : "not measured");
        return;
    }
    if (srvcpu_read(&r->srv, &ns, &e) != FBW_OK || ns < r->srv_cpu0) {
        snprintf(out->why, sizeof out->why, "%.199s", r->srv.why[0] ? r->srv.why : e.msg);
        return;
    }
    out->available = 1;
    out->pid = r->srv.pid;
    out->children = r->srv.children;
    out->cpu_ns = ns - r->srv_cpu0;
}

void sbdrv_sbrep_report(sbdrv_sbrep *r)
{
    sbdrv_rep_acc *acc = malloc(sizeof *acc);
    int argc;
    char *buf = NULL;
    char **argv = sbdrv_sbrep_read_cmdline(&argc, &buf);
    if (!acc) {
        free(argv);
        free(buf);
        return;
    }
    sbdrv_rep_merge(r->rep, acc);
    sbdrv_rep_run run;
    memset(&run, 0, sizeof run);
    run.driver = r->driver;
    run.autocommit = autocommit_name(r->conf->autocommit);
    run.isolation = isolation_name(r->conf->isolation);
    run.sysbench_version = "1.0.20"; /* preload.c refuses every other version */
    run.script = argv ? sbdrv_sbrep_positional(argc, argv, 0) : NULL;
    run.command = argv ? sbdrv_sbrep_positional(argc, argv, 1) : NULL;
    run.argc = argv && argc > 0 ? argc - 1 : 0;
    run.argv = argv ? argv + 1 : NULL;
    run.threads = r->threads;
    if (r->timer && ts_ns(&r->timer->time_end) > ts_ns(&r->timer->time_start))
        run.duration_s = (double)(ts_ns(&r->timer->time_end) - ts_ns(&r->timer->time_start)) / 1e9;
    run.other = counter_sum(r, 0);
    run.reads = counter_sum(r, 1);
    run.writes = counter_sum(r, 2);
    run.events = counter_sum(r, 3);
    run.errors = counter_sum(r, 4);
    run.reconnects = counter_sum(r, 5);
    run.facts = r->facts;
    run.pipeline = r->conf->pipeline == SBDRV_PIPE_TRANSACTION ? "transaction" : "off";
    run.row_format = fbw_row_format_name(r->conf->row_format);
    run.client_library = r->be->client_library ? r->be->client_library() : NULL;
    server_cpu_of_run(r, &run.server_cpu);
    run.intervals = r->intervals;
    run.nintervals = r->nintervals;
    run.cpu_method = sbdrv_cpu_mode_name(r->cpu_mode);
    run.cpu_sample_every = r->cpu_mode == SBDRV_CPU_SAMPLED ? SBDRV_CPU_SAMPLE_EVERY : 1;

    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        sbdrv_rep_print(mem, acc, &run);
        fclose(mem);
        emit(r, text);
        free(text);
    }
    if (r->json_path) {
        fbw_err e;
        fbw_err_clear(&e);
        if (sbdrv_rep_write_json(r->json_path, acc, &run, &e) != FBW_OK)
            r->host.log_text(SBDRV_SB_LOG_WARNING, "%s: %s", r->driver, e.msg);
        else
            r->host.log_text(SBDRV_SB_LOG_NOTICE, "%s: wire statistics written to %s", r->driver,
                             r->json_path);
    }
    free(acc);
    free(argv);
    free(buf);
}
