/* SPDX-License-Identifier: MIT */
/* sbreport.c - sysbench glue of the wire statistics report (see sbreport.h).
 *
 * Threads: hooks run in the worker owning the connection; the interval thread only reads relaxed
 * running totals (report.h) and sysbench's atomic counters; done runs after sysbench joined its
 * workers. The report object is created in init (under sysbench's driver mutex) and freed in
 * done; the facts are written once, under the report's lock. */
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

#define VERSION_SQL "SELECT rdb$get_context('SYSTEM', 'ENGINE_VERSION') FROM rdb$database"

/* ---------------------------------------------------------------- open */

int sbdrv_sbrep_accounting(const char *value) { return sbdrv_cpu_mode_parse(value); }

sbdrv_sbrep *sbdrv_sbrep_open(const sbdrv_sb_host *host, const char *driver, const sbdrv_backend *be,
                          const sbdrv_be_conf *conf, const char *json_path, int accounting)
{
    if (accounting < 0)
        return NULL;
    int argc;
    char *buf;
    char **argv = sbdrv_sbrep_read_cmdline(&argc, &buf);
    const char *cmd = argv ? sbdrv_sbrep_positional(argc, argv, 1) : NULL;
    int is_run = cmd && strcmp(cmd, "run") == 0;
    free(argv);
    free(buf);
    if (!is_run)
        return NULL;
    sbdrv_sbrep *r = calloc(1, sizeof *r);
    if (!r || sbdrv_rep_new(&r->rep) != FBW_OK ||
        (json_path && (r->json_path = strdup(json_path)) == NULL)) {
        if (r)
            sbdrv_rep_free(r->rep);
        free(r);
        host->log_text(SBDRV_SB_LOG_WARNING, "%s: out of memory: no wire statistics report", driver);
        return NULL;
    }
    r->host = *host;
    r->driver = driver;
    r->be = be;
    r->conf = conf;
    r->cpu_mode = (sbdrv_cpu_mode)(accounting & ~SBDRV_CPU_COST);
    r->cost = (accounting & SBDRV_CPU_COST) != 0;
    pthread_mutex_init(&r->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&r->wake, &ca);
    pthread_condattr_destroy(&ca);
    sbdrv_rep_facts_init(&r->facts);
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
static const fbw_stats *source(sbdrv_sbrep_conn *c)
{
    if (c->tap)
        return sbdrv_tap_stats(c->tap);
    if (!c->bc)
        return NULL;
    if (c->r->be->stats_ref)
        return c->r->be->stats_ref(c->bc);
    fbw_stats *now = sbdrv_rep_conn_now(c->acc);
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
static int cost_skip(sbdrv_sbrep_conn *c)
{
    if (sbdrv_cost_next_call(&c->probe)) {
        uint64_t now = thread_cpu_ns();
        pthread_mutex_lock(&c->r->lock);
        sbdrv_cost_block(&c->probe, now, &c->r->cost_res);
        pthread_mutex_unlock(&c->r->lock);
    }
    c->unaccounted = !c->probe.on;
    return c->unaccounted;
}

void sbdrv_sbrep_begin(sbdrv_sbrep_conn *c)
{
    if (!c || (c->r->cost && cost_skip(c)))
        return;
    c->how = sbdrv_cpu_sampler_next(&c->sampler);
    if (c->how != SBDRV_CPU_SKIP)
        c->cpu0 = thread_cpu_ns();
}

static void charge(sbdrv_sbrep_conn *c, int cls, int execution)
{
    if (!c)
        return;
    if (c->unaccounted) { /* cost mode: as if there were no report */
        c->unaccounted = 0;
        return;
    }
    uint64_t cpu = 0;
    sbdrv_cpu_how how = c->how;
    if (how == SBDRV_CPU_READ || how == SBDRV_CPU_SAMPLE) {
        /* read before source(): the fbclient tap decodes there, off the clock */
        uint64_t end = thread_cpu_ns();
        cpu = end > c->cpu0 ? end - c->cpu0 : 0;
    }
    c->how = SBDRV_CPU_UNTIMED;
    sbdrv_rep_conn_charge_src(c->acc, source(c), cls, execution, how, cpu);
}

void sbdrv_sbrep_charge(sbdrv_sbrep_conn *c, int cls) { charge(c, cls, 1); }

void sbdrv_sbrep_charge_more(sbdrv_sbrep_conn *c, int cls) { charge(c, cls, 0); }

void sbdrv_sbrep_connect_begin(sbdrv_sbrep *r)
{
    if (r)
        sbdrv_tap_arm(r->be == &sbdrv_backend_fbclient ? SBDRV_TAP_SESSION : SBDRV_TAP_HANDSHAKE);
}


/* Once per driver: facts from the tap's view of the handshake, the version from the server. */
static void learn_facts(sbdrv_sbrep *r, sbdrv_sbrep_conn *c, sbdrv_tap *hs)
{
    pthread_mutex_lock(&r->lock);
    int mine = !r->asked_version;
    r->asked_version = 1;
    pthread_mutex_unlock(&r->lock);
    if (!mine)
        return;
    sbdrv_rep_facts f;
    sbdrv_rep_facts_init(&f);
    if (hs)
        sbdrv_tap_facts(hs, &f);
    else
        snprintf(f.note, sizeof f.note, "the handshake was not seen by the socket tap");
    f.unmeasured = !hs && r->be == &sbdrv_backend_fbclient; /* fbclient's only source is its tap */
    sbdrv_be_result res;
    memset(&res, 0, sizeof res);
    fbw_err e;
    fbw_err_clear(&e);
    if (r->be->exec(c->bc, VERSION_SQL, strlen(VERSION_SQL), &res, &e) == FBW_OK && res.nrows == 1 &&
        res.ncols == 1 && !res.cells[0].null)
        snprintf(f.server_version, sizeof f.server_version, "%.*s",
                 (int)(res.cells[0].len < 63 ? res.cells[0].len : 63), sbdrv_be_cell_ptr(&res, 0));
    sbdrv_be_result_free(&res);
    sbdrv_sbrep_charge(c, SBDRV_CLS_SESSION);
    pthread_mutex_lock(&r->lock);
    r->facts = f;
    r->have_facts = 1;
    if (r->interval_s && r->counter && r->timer && !r->thread_started &&
        pthread_create(&r->thread, NULL, sbdrv_sbrep_interval_main, r) == 0)
        r->thread_started = 1;
    pthread_mutex_unlock(&r->lock);
}

/* At the first attach: the server's process from the connection's socket, and its CPU so far.
 * The run's server CPU is the difference at the end: it covers the attaches and prepares of the
 * run and every other client of that server meanwhile (measure on an otherwise idle server). */
static void find_server(sbdrv_sbrep *r, const sbdrv_tap *t)
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
    int fd = sbdrv_tap_fd(t);
    uint64_t ns = 0;
    int rc = fd < 0 ? fbw_err_set(&e, FBW_E_UNSUPPORTED, "the connection's socket was not seen")
                    : srvcpu_find_peer(&r->srv, fd, &e);
    if (rc == FBW_OK)
        rc = srvcpu_read(&r->srv, &ns, &e);
    pthread_mutex_lock(&r->lock);
    if (rc == FBW_OK) {
        r->srv_cpu0 = ns;
        r->srv_state = 1;
    } else {
        snprintf(r->srv_why, sizeof r->srv_why, "%.199s", r->srv.why[0] ? r->srv.why : e.msg);
    }
    pthread_mutex_unlock(&r->lock);
}

void sbdrv_sbrep_connect_end(sbdrv_sbrep *r, sbdrv_sbrep_conn **cp, sbdrv_be_conn *bc, int rc)
{
    if (!r)
        return;
    sbdrv_tap *t = sbdrv_tap_disarm();
    sbdrv_sbrep_conn *c = *cp;
    if (rc != FBW_OK || (!c && (c = calloc(1, sizeof *c)) == NULL)) {
        sbdrv_tap_free(t);
        return;
    }
    if (!c->acc && sbdrv_rep_conn_new(r->rep, &c->acc) != FBW_OK) {
        free(c);
        sbdrv_tap_free(t);
        return;
    }
    if (!c->r) { /* first attach: the sampler lives as long as the connection object */
        sbdrv_cpu_sampler_init(&c->sampler, r->cpu_mode, (uint64_t)(uintptr_t)c);
        pthread_mutex_lock(&r->lock);
        c->next_live = r->live;
        r->live = c;
        pthread_mutex_unlock(&r->lock);
    }
    c->r = r;
    c->bc = bc;
    sbdrv_tap *handshake = NULL;
    if (r->be == &sbdrv_backend_fbclient)
        c->tap = t;
    else
        handshake = t;
    find_server(r, t);
    *cp = c;
    sbdrv_sbrep_charge(c, SBDRV_CLS_SESSION);
    learn_facts(r, c, c->tap ? c->tap : handshake);
    sbdrv_tap_free(handshake);
}

void sbdrv_sbrep_detach(sbdrv_sbrep_conn **cp, int final)
{
    sbdrv_sbrep_conn *c = *cp;
    if (!c)
        return;
    if (c->bc) {
        sbdrv_sbrep_charge(c, SBDRV_CLS_SESSION);
        sbdrv_rep_conn_snapshot(c->acc, source(c)); /* the per-op table, before the source goes */
    }
    sbdrv_tap_free(c->tap);
    c->tap = NULL;
    c->bc = NULL;
    sbdrv_rep_conn_restart(c->acc); /* the accumulator stays with the report */
    if (final) {
        pthread_mutex_lock(&c->r->lock);
        for (sbdrv_sbrep_conn **pp = &c->r->live; *pp; pp = &(*pp)->next_live)
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
static void snapshot_open_connections(sbdrv_sbrep *r)
{
    pthread_mutex_lock(&r->lock);
    for (sbdrv_sbrep_conn *c = r->live; c; c = c->next_live)
        if (c->bc || c->tap)
            sbdrv_rep_conn_snapshot(c->acc, source(c));
    pthread_mutex_unlock(&r->lock);
}

void sbdrv_sbrep_done(sbdrv_sbrep *r)
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
        sbdrv_cost_summary(&r->cost_res, sbdrv_cpu_mode_name(r->cpu_mode), line, sizeof line);
        r->host.log_text(SBDRV_SB_LOG_NOTICE, "%s: %s", r->driver, line);
        sbdrv_cost_free(&r->cost_res);
    } else if (sbdrv_rep_connections(r->rep) > 0) {
        snapshot_open_connections(r);
        sbdrv_sbrep_report(r);
    }
    sbdrv_rep_free(r->rep);
    free(r->intervals);
    free(r->json_path);
    pthread_cond_destroy(&r->wake);
    pthread_mutex_destroy(&r->lock);
    free(r);
}
