/* SPDX-License-Identifier: MIT */
/* sbreport.c - sysbench glue of the wire statistics report (see sbreport.h).
 *
 * Threads: hooks run in the worker owning the connection; the interval thread only reads relaxed
 * running totals (report.h) and sysbench's atomic counters; done runs after sysbench joined its
 * workers. The report object is created in init (under sysbench's driver mutex) and freed in
 * done; the facts are written once, under the report's lock. */
#define _GNU_SOURCE
#include "sbreport.h"

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
#define VERSION_SQL "SELECT rdb$get_context('SYSTEM', 'ENGINE_VERSION') FROM rdb$database"

/* The head of sysbench 1.0.20's sb_timer_t (sb_timer.h): started when all threads are ready,
 * stopped before the cumulative report. */
typedef struct sb_timer_head {
    struct timespec time_start, time_end;
} sb_timer_head;

struct fbw_sbrep {
    fbw_sb_host host;
    const char *driver;
    const fbw_backend *be;
    const fbw_be_conf *conf;
    fbw_cpu_mode cpu_mode;       /* --P-accounting */
    int cost;                    /* --P-accounting=cost-*: measure the accounting, no report */
    fbw_sbrep_conn *live;        /* connections not finally detached (under lock) */
    fbw_cost_result cost_res;    /* under lock */
    char *json_path;
    fbw_rep *rep;
    pthread_mutex_t lock;        /* facts, interval list, thread start/stop */
    pthread_cond_t wake;
    int have_facts, asked_version, stop, thread_started;
    fbw_rep_facts facts;
    pthread_t thread;
    unsigned interval_s, threads;
    fbw_rep_interval *intervals;
    size_t nintervals, cap;
    uint64_t (*counter)(int thread_id, int type);
    const sb_timer_head *timer;
    fbw_srvcpu srv;              /* the server's process, found at the first attach */
    int srv_state;               /* 0 not tried, 1 found (srv_cpu0 valid), -1 not available */
    uint64_t srv_cpu0;           /* its CPU then */
    char srv_why[200];
};

struct fbw_sbrep_conn {
    fbw_sbrep *r;
    fbw_rep_conn *acc;
    fbw_tap *tap;
    fbw_be_conn *bc;
    fbw_sbrep_conn *next_live;   /* fbw_sbrep.live */
    fbw_cpu_sampler sampler;     /* which calls have their CPU clock read */
    fbw_cpu_how how;             /* the call begun: UNTIMED when none */
    fbw_cost_probe probe;        /* cost mode: which calls are accounted */
    int unaccounted;             /* cost mode: the call begun is in an unaccounted block */
    uint64_t cpu0;               /* thread CPU clock at fbw_sbrep_begin, when read */
};

/* ---------------------------------------------------------------- command line */

/* argv of this process (NUL-separated in /proc/self/cmdline); *buf owns the strings. */
static char **read_cmdline(int *argc, char **buf)
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
static const char *positional(int argc, char **argv, int n)
{
    for (int i = 1; i < argc; i++)
        if (argv[i][0] != '-' && n-- == 0)
            return argv[i];
    return NULL;
}

static const char *autocommit_name(fbw_autocommit a)
{
    return a == FBW_AC_SHARED ? "shared" : a == FBW_AC_PIPELINED ? "pipelined" : "per-statement";
}

static const char *isolation_name(fbw_be_isolation i)
{
    switch (i) {
    case FBW_BE_ISO_READ_COMMITTED_NOREC: return "read-committed-no-rec-version";
    case FBW_BE_ISO_READ_CONSISTENCY: return "read-consistency";
    case FBW_BE_ISO_SNAPSHOT: return "snapshot";
    case FBW_BE_ISO_SERIALIZABLE: return "serializable";
    default: return "read-committed";
    }
}

/* ---------------------------------------------------------------- open */

int fbw_sbrep_accounting(const char *value) { return fbw_cpu_mode_parse(value); }

fbw_sbrep *fbw_sbrep_open(const fbw_sb_host *host, const char *driver, const fbw_backend *be,
                          const fbw_be_conf *conf, const char *json_path, int accounting)
{
    if (accounting < 0)
        return NULL;
    int argc;
    char *buf;
    char **argv = read_cmdline(&argc, &buf);
    const char *cmd = argv ? positional(argc, argv, 1) : NULL;
    int is_run = cmd && strcmp(cmd, "run") == 0;
    free(argv);
    free(buf);
    if (!is_run)
        return NULL;
    fbw_sbrep *r = calloc(1, sizeof *r);
    if (!r || fbw_rep_new(&r->rep) != FBW_OK ||
        (json_path && (r->json_path = strdup(json_path)) == NULL)) {
        if (r)
            fbw_rep_free(r->rep);
        free(r);
        host->log_text(FBW_SB_LOG_WARNING, "%s: out of memory: no wire statistics report", driver);
        return NULL;
    }
    r->host = *host;
    r->driver = driver;
    r->be = be;
    r->conf = conf;
    r->cpu_mode = (fbw_cpu_mode)(accounting & ~FBW_CPU_COST);
    r->cost = (accounting & FBW_CPU_COST) != 0;
    pthread_mutex_init(&r->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->wake, &ca);
    pthread_condattr_destroy(&ca);
    fbw_rep_facts_init(&r->facts);
    int iv = host->get_int("report-interval");
    r->interval_s = iv > 0 ? (unsigned)iv : 0;
    int th = host->get_int("threads");
    r->threads = th > 0 ? (unsigned)th : 1;
    *(void **)&r->counter = dlsym(RTLD_DEFAULT, "sb_counter_val");
    r->timer = dlsym(RTLD_DEFAULT, "sb_exec_timer");
    return r;
}

/* ---------------------------------------------------------------- per-connection hooks */

/* The connection's cumulative stats: the tap's or the backend's own (live, not copied), or a
 * copy in the report's scratch; NULL when there is no source. */
static const fbw_stats *source(fbw_sbrep_conn *c)
{
    if (c->tap)
        return fbw_tap_stats(c->tap);
    if (!c->bc)
        return NULL;
    if (c->r->be->stats_ref)
        return c->r->be->stats_ref(c->bc);
    fbw_stats *now = fbw_rep_conn_now(c->acc);
    fbw_err e;
    return c->r->be->stats && c->r->be->stats(c->bc, now, &e) == FBW_OK ? now : NULL;
}

/* CPU time of the calling thread (user + system): what the driver call cost the client, without
 * the time it slept waiting for the server. */
static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Cost mode: count the call; at a block boundary read the clock and switch blocks. Returns 1
 * when the call is not to be accounted. */
static int cost_skip(fbw_sbrep_conn *c)
{
    if (fbw_cost_next_call(&c->probe)) {
        uint64_t now = thread_cpu_ns();
        pthread_mutex_lock(&c->r->lock);
        fbw_cost_block(&c->probe, now, &c->r->cost_res);
        pthread_mutex_unlock(&c->r->lock);
    }
    c->unaccounted = !c->probe.on;
    return c->unaccounted;
}

void fbw_sbrep_begin(fbw_sbrep_conn *c)
{
    if (!c || (c->r->cost && cost_skip(c)))
        return;
    c->how = fbw_cpu_sampler_next(&c->sampler);
    if (c->how != FBW_CPU_SKIP)
        c->cpu0 = thread_cpu_ns();
}

static void charge(fbw_sbrep_conn *c, int cls, int execution)
{
    if (!c)
        return;
    if (c->unaccounted) { /* cost mode: as if there were no report */
        c->unaccounted = 0;
        return;
    }
    uint64_t cpu = 0;
    fbw_cpu_how how = c->how;
    if (how == FBW_CPU_READ || how == FBW_CPU_SAMPLE) {
        /* read before source(): the fbclient tap decodes there, off the clock */
        uint64_t end = thread_cpu_ns();
        cpu = end > c->cpu0 ? end - c->cpu0 : 0;
    }
    c->how = FBW_CPU_UNTIMED;
    fbw_rep_conn_charge_src(c->acc, source(c), cls, execution, how, cpu);
}

void fbw_sbrep_charge(fbw_sbrep_conn *c, int cls) { charge(c, cls, 1); }

void fbw_sbrep_charge_more(fbw_sbrep_conn *c, int cls) { charge(c, cls, 0); }

void fbw_sbrep_connect_begin(fbw_sbrep *r)
{
    if (r)
        fbw_tap_arm(r->be == &fbw_backend_fbclient ? FBW_TAP_SESSION : FBW_TAP_HANDSHAKE);
}

static void *interval_main(void *arg);

/* Once per driver: facts from the tap's view of the handshake, the version from the server. */
static void learn_facts(fbw_sbrep *r, fbw_sbrep_conn *c, fbw_tap *hs)
{
    pthread_mutex_lock(&r->lock);
    int mine = !r->asked_version;
    r->asked_version = 1;
    pthread_mutex_unlock(&r->lock);
    if (!mine)
        return;
    fbw_rep_facts f;
    fbw_rep_facts_init(&f);
    if (hs)
        fbw_tap_facts(hs, &f);
    else
        snprintf(f.note, sizeof f.note, "the handshake was not seen by the socket tap");
    f.unmeasured = !hs && r->be == &fbw_backend_fbclient; /* fbclient's only source is its tap */
    fbw_be_result res;
    memset(&res, 0, sizeof res);
    fbw_err e;
    fbw_err_clear(&e);
    if (r->be->exec(c->bc, VERSION_SQL, strlen(VERSION_SQL), &res, &e) == FBW_OK && res.nrows == 1 &&
        res.ncols == 1 && !res.cells[0].null)
        snprintf(f.server_version, sizeof f.server_version, "%.*s",
                 (int)(res.cells[0].len < 63 ? res.cells[0].len : 63), fbw_be_cell_ptr(&res, 0));
    fbw_be_result_free(&res);
    fbw_sbrep_charge(c, FBW_CLS_SESSION);
    pthread_mutex_lock(&r->lock);
    r->facts = f;
    r->have_facts = 1;
    if (r->interval_s && r->counter && r->timer && !r->thread_started &&
        pthread_create(&r->thread, NULL, interval_main, r) == 0)
        r->thread_started = 1;
    pthread_mutex_unlock(&r->lock);
}

/* At the first attach: the server's process from the connection's socket, and its CPU so far.
 * The run's server CPU is the difference at the end: it covers the attaches and prepares of the
 * run and every other client of that server meanwhile (measure on an otherwise idle server). */
static void find_server(fbw_sbrep *r, const fbw_tap *t)
{
    pthread_mutex_lock(&r->lock);
    int mine = r->srv_state == 0;
    if (mine)
        r->srv_state = -1;
    pthread_mutex_unlock(&r->lock);
    if (!mine)
        return;
    fbw_err e;
    fbw_err_clear(&e);
    int fd = fbw_tap_fd(t);
    uint64_t ns = 0;
    int rc = fd < 0 ? fbw_err_set(&e, FBW_E_UNSUPPORTED, "the connection's socket was not seen")
                    : fbw_srvcpu_find_peer(&r->srv, fd, &e);
    if (rc == FBW_OK)
        rc = fbw_srvcpu_read(&r->srv, &ns, &e);
    pthread_mutex_lock(&r->lock);
    if (rc == FBW_OK) {
        r->srv_cpu0 = ns;
        r->srv_state = 1;
    } else {
        snprintf(r->srv_why, sizeof r->srv_why, "%.199s", r->srv.why[0] ? r->srv.why : e.msg);
    }
    pthread_mutex_unlock(&r->lock);
}

static void server_cpu_of_run(fbw_sbrep *r, fbw_rep_server_cpu *out)
{
    memset(out, 0, sizeof *out);
    uint64_t ns = 0;
    fbw_err e;
    fbw_err_clear(&e);
    if (r->srv_state != 1) {
        snprintf(out->why, sizeof out->why, "%s", r->srv_why[0] ? r->srv_why : "not measured");
        return;
    }
    if (fbw_srvcpu_read(&r->srv, &ns, &e) != FBW_OK || ns < r->srv_cpu0) {
        snprintf(out->why, sizeof out->why, "%.199s", r->srv.why[0] ? r->srv.why : e.msg);
        return;
    }
    out->available = 1;
    out->pid = r->srv.pid;
    out->children = r->srv.children;
    out->cpu_ns = ns - r->srv_cpu0;
}

void fbw_sbrep_connect_end(fbw_sbrep *r, fbw_sbrep_conn **cp, fbw_be_conn *bc, int rc)
{
    if (!r)
        return;
    fbw_tap *t = fbw_tap_disarm();
    fbw_sbrep_conn *c = *cp;
    if (rc != FBW_OK || (!c && (c = calloc(1, sizeof *c)) == NULL)) {
        fbw_tap_free(t);
        return;
    }
    if (!c->acc && fbw_rep_conn_new(r->rep, &c->acc) != FBW_OK) {
        free(c);
        fbw_tap_free(t);
        return;
    }
    if (!c->r) { /* first attach: the sampler lives as long as the connection object */
        fbw_cpu_sampler_init(&c->sampler, r->cpu_mode, (uint64_t)(uintptr_t)c);
        pthread_mutex_lock(&r->lock);
        c->next_live = r->live;
        r->live = c;
        pthread_mutex_unlock(&r->lock);
    }
    c->r = r;
    c->bc = bc;
    fbw_tap *handshake = NULL;
    if (r->be == &fbw_backend_fbclient)
        c->tap = t;
    else
        handshake = t;
    find_server(r, t);
    *cp = c;
    fbw_sbrep_charge(c, FBW_CLS_SESSION);
    learn_facts(r, c, c->tap ? c->tap : handshake);
    fbw_tap_free(handshake);
}

void fbw_sbrep_detach(fbw_sbrep_conn **cp, int final)
{
    fbw_sbrep_conn *c = *cp;
    if (!c)
        return;
    if (c->bc) {
        fbw_sbrep_charge(c, FBW_CLS_SESSION);
        fbw_rep_conn_snapshot(c->acc, source(c)); /* the per-op table, before the source goes */
    }
    fbw_tap_free(c->tap);
    c->tap = NULL;
    c->bc = NULL;
    fbw_rep_conn_restart(c->acc); /* the accumulator stays with the report */
    if (final) {
        pthread_mutex_lock(&c->r->lock);
        for (fbw_sbrep_conn **pp = &c->r->live; *pp; pp = &(*pp)->next_live)
            if (*pp == c) {
                *pp = c->next_live;
                break;
            }
        pthread_mutex_unlock(&c->r->lock);
        free(c);
        *cp = NULL;
    }
}

/* At done, for connections the script never closed: their per-op tables, which the statement
 * path copies only now and then (report.h), complete before the merge. No worker runs now. */
static void snapshot_open_connections(fbw_sbrep *r)
{
    pthread_mutex_lock(&r->lock);
    for (fbw_sbrep_conn *c = r->live; c; c = c->next_live)
        if (c->bc || c->tap)
            fbw_rep_conn_snapshot(c->acc, source(c));
    pthread_mutex_unlock(&r->lock);
}

/* ---------------------------------------------------------------- run metadata */

static uint64_t counter_sum(const fbw_sbrep *r, int type)
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
static int sleep_until(fbw_sbrep *r, const struct timespec *when)
{
    pthread_mutex_lock(&r->lock);
    while (!r->stop && pthread_cond_timedwait(&r->wake, &r->lock, when) != ETIMEDOUT)
        ;
    int go = !r->stop;
    pthread_mutex_unlock(&r->lock);
    return go;
}

/* One line per interval, a little after sysbench's own (same schedule: start + k * interval). */
static void *interval_main(void *arg)
{
    fbw_sbrep *r = arg;
    struct timespec start = {0, 0}, when;
    while (start.tv_sec == 0 && start.tv_nsec == 0) { /* the timer starts once all threads are up */
        clock_gettime(CLOCK_MONOTONIC, &when);
        add_ns(&when, 10000000u);
        if (!sleep_until(r, &when))
            return NULL;
        start = r->timer->time_start;
    }
    uint64_t prev_events = 0;
    fbw_rep_live prev = {0, 0, 0}, now;
    for (unsigned k = 1;; k++) {
        when = start;
        add_ns(&when, (uint64_t)k * r->interval_s * 1000000000u + 20000000u);
        if (!sleep_until(r, &when))
            return NULL;
        uint64_t events = counter_sum(r, 3 /* SB_CNT_EVENT */);
        fbw_rep_live_sum(r->rep, &now);
        fbw_rep_interval iv = {(double)k * r->interval_s, r->interval_s, events - prev_events,
                               now.round_trips - prev.round_trips, now.wait_ns - prev.wait_ns,
                               now.executions - prev.executions};
        prev_events = events;
        prev = now;
        char line[256];
        fbw_rep_interval_line(line, sizeof line, r->driver, &iv, r->threads);
        r->host.log_text(FBW_SB_LOG_NOTICE, "%s", line);
        pthread_mutex_lock(&r->lock);
        if (r->nintervals == r->cap) {
            size_t cap = r->cap ? r->cap * 2 : 64;
            fbw_rep_interval *n = realloc(r->intervals, cap * sizeof *n);
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
static void emit(const fbw_sbrep *r, const char *text)
{
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        r->host.log_text(FBW_SB_LOG_NOTICE, "%.*s", (int)n, p);
        p += n + (nl ? 1 : 0);
    }
}

static void report(fbw_sbrep *r)
{
    fbw_rep_acc *acc = malloc(sizeof *acc);
    int argc;
    char *buf = NULL;
    char **argv = read_cmdline(&argc, &buf);
    if (!acc) {
        free(argv);
        free(buf);
        return;
    }
    fbw_rep_merge(r->rep, acc);
    fbw_rep_run run;
    memset(&run, 0, sizeof run);
    run.driver = r->driver;
    run.autocommit = autocommit_name(r->conf->autocommit);
    run.isolation = isolation_name(r->conf->isolation);
    run.sysbench_version = "1.0.20"; /* preload.c refuses every other version */
    run.script = argv ? positional(argc, argv, 0) : NULL;
    run.command = argv ? positional(argc, argv, 1) : NULL;
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
    run.pipeline = r->conf->pipeline == FBW_PIPE_TRANSACTION ? "transaction" : "off";
    server_cpu_of_run(r, &run.server_cpu);
    run.intervals = r->intervals;
    run.nintervals = r->nintervals;
    run.cpu_method = fbw_cpu_mode_name(r->cpu_mode);
    run.cpu_sample_every = r->cpu_mode == FBW_CPU_SAMPLED ? FBW_CPU_SAMPLE_EVERY : 1;

    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        fbw_rep_print(mem, acc, &run);
        fclose(mem);
        emit(r, text);
        free(text);
    }
    if (r->json_path) {
        fbw_err e;
        fbw_err_clear(&e);
        if (fbw_rep_write_json(r->json_path, acc, &run, &e) != FBW_OK)
            r->host.log_text(FBW_SB_LOG_WARNING, "%s: %s", r->driver, e.msg);
        else
            r->host.log_text(FBW_SB_LOG_NOTICE, "%s: wire statistics written to %s", r->driver,
                             r->json_path);
    }
    free(acc);
    free(argv);
    free(buf);
}

void fbw_sbrep_done(fbw_sbrep *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_broadcast(&r->wake);
    int joined = r->thread_started;
    pthread_mutex_unlock(&r->lock);
    if (joined)
        pthread_join(r->thread, NULL);
    if (r->cost) { /* the traffic figures are partial in this mode: only the cost is printed */
        char line[400];
        fbw_cost_summary(&r->cost_res, fbw_cpu_mode_name(r->cpu_mode), line, sizeof line);
        r->host.log_text(FBW_SB_LOG_NOTICE, "%s: %s", r->driver, line);
        fbw_cost_free(&r->cost_res);
    } else if (fbw_rep_connections(r->rep) > 0) {
        snapshot_open_connections(r);
        report(r);
    }
    fbw_rep_free(r->rep);
    free(r->intervals);
    free(r->json_path);
    pthread_cond_destroy(&r->wake);
    pthread_mutex_destroy(&r->lock);
    free(r);
}
