/* SPDX-License-Identifier: MIT */
/* replay.c - `fbwire-pcap replay` (replay.h): collect each captured connection from the report's
 * tap, then either list its workload or plan the replay (the jobs: every captured connection to
 * replay, then --connections copies; the streaming reader's queues), run it (replay_threads.h)
 * and fill the report model (replay_report.h) that is rendered as text or JSON.
 *
 * The parts, each with its header: replay_threads.c (a thread per connection and the reader),
 * replay_conn.c (one connection: pacing, measuring, the fingerprint table), replay_steps.c and
 * replay_ops.c (running a step), replay_slots.c (slot tables, transaction renumbering),
 * replay_results.c (comparison, failures, differences), replay_text.c and replay_json.c (the
 * report). Includes point one way: this file drives them, none of them knows of it. */
#include "replay.h"

#include "jsonout.h"
#include "replay_report.h"
#include "replay_threads.h"
#include "stream.h"
#include "trace_workload.h"
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One captured connection: its workload (--list) or what the streaming reader feeds, and, when
 * replayed, its job. */
typedef struct rconn {
    pcaptool_workload w;     /* --list */
    pcaptool_stream_src src; /* replay: what the reader feeds (its steps counted by kind) */
    uint64_t t_detach;       /* capture time of its op_detach, from the validation pass */
    int seen;
    int run;    /* to be replayed */
    rp_job job; /* its replay (the first; copies are in pcaptool_replay.copies) */
    rp_kind_count kinds[PCAPTOOL_STEP_KINDS]; /* --list, or a connection not replayed */
} rconn;

struct pcaptool_replay {
    pcaptool_replay_opts o;
    rconn *c; /* by connection id - 1 */
    size_t n;
    rp_job **copies;
    size_t ncopies;
    uint64_t cap_t1;    /* capture time of the last packet of the replayed ones */
    uint64_t wall_ns;   /* replay wall time */
    rp_shared sh;       /* sh.jobs: the captured jobs, then the copies */
    pcaptool_stream st; /* the reader */
};

/* ---- collecting the workloads ---- */

int pcaptool_replay_new(const pcaptool_replay_opts *o, pcaptool_replay **out)
{
    pcaptool_replay *rp = calloc(1, sizeof *rp);
    if (!rp)
        return FBW_E_NOMEM;
    rp->o = *o;
    if (pthread_mutex_init(&rp->sh.f_mu, NULL)) {
        free(rp);
        return FBW_E_NOMEM;
    }
    *out = rp;
    return FBW_OK;
}

void pcaptool_replay_free(pcaptool_replay *rp)
{
    if (!rp)
        return;
    for (size_t i = 0; i < rp->ncopies; i++) {
        rp_job_free(rp->copies[i]);
        free(rp->copies[i]);
    }
    free(rp->copies);
    free(rp->sh.jobs);
    free(rp->st.src);
    free(rp->st.all);
    for (size_t i = 0; i < rp->n; i++) {
        pcaptool_workload_free(&rp->c[i].w);
        pcaptool_workload_free(&rp->c[i].src.w);
        free(rp->c[i].src.q);
        rp_job_free(&rp->c[i].job);
    }
    free(rp->c);
    pcaptool_fpstats_free(rp->sh.f);
    pthread_mutex_destroy(&rp->sh.f_mu);
    free(rp);
}

void pcaptool_replay_source(pcaptool_replay *rp, const char *file, const pcaptool_keys *keys,
                            const uint16_t *ports, size_t nports, int explicit_ports)
{
    rp->o.file = file;
    rp->o.keys = keys;
    rp->o.ports = ports;
    rp->o.nports = nports;
    rp->o.explicit_ports = explicit_ports;
}

static rconn *conn_at(pcaptool_replay *rp, int id)
{
    if (id < 1)
        return NULL;
    if ((size_t)id > rp->n) {
        rconn *c = realloc(rp->c, (size_t)id * sizeof *c);
        if (!c) {
            atomic_store(&rp->sh.nomem, 1);
            return NULL;
        }
        memset(c + rp->n, 0, ((size_t)id - rp->n) * sizeof *c);
        for (size_t i = rp->n; i < (size_t)id; i++)
            pcaptool_workload_init(&c[i].w);
        rp->c = c;
        rp->n = (size_t)id;
    }
    return &rp->c[id - 1];
}

void pcaptool_replay_tap(void *arg, int conn_id, const struct fbw_dec *d, int from_client,
                         const struct fbw_pkt *p, uint64_t ts_ns)
{
    pcaptool_replay *rp = arg;
    if (rp->o.connection && conn_id != rp->o.connection)
        return;
    rconn *c = conn_at(rp, conn_id);
    if (!c)
        return;
    c->seen = 1;
    if (rp->o.list) {
        pcaptool_workload_packet(&c->w, d, from_client, p, ts_ns);
        return;
    }
    /* The validation pass of a replay: only what planning needs (the workload is streamed). */
    if (!c->job.t_first)
        c->job.t_first = ts_ns;
    c->job.t_last = ts_ns;
    if (from_client && (p->op == FBW_OP_DETACH || p->op == FBW_OP_DISCONNECT) && !c->t_detach)
        c->t_detach = ts_ns;
    c->src.packets++;
}

/* ---- planning the replay ---- */

static int add_job(pcaptool_replay *rp, rp_job *j)
{
    rp_job **a = realloc(rp->sh.jobs, (rp->sh.njobs + 1) * sizeof *a);
    if (!a)
        return -1;
    rp->sh.jobs = a;
    if (pcaptool_stepq_init(&j->q, PCAPTOOL_STREAM_QUEUE_STEPS, PCAPTOOL_STREAM_QUEUE_BYTES) != FBW_OK)
        return -1;
    j->q_ready = 1;
    j->sh = &rp->sh;
    rp->sh.jobs[rp->sh.njobs++] = j;
    return 0;
}

/* The reader's view: each captured connection feeds its own queue and its copies'. */
static int plan_stream(pcaptool_replay *rp)
{
    pcaptool_stream *st = &rp->st;
    st->file = rp->o.file;
    st->keys = rp->o.keys;
    st->ports = rp->o.ports;
    st->nports = rp->o.nports;
    st->explicit_ports = rp->o.explicit_ports;
    st->n = rp->n;
    st->src = calloc(rp->n ? rp->n : 1, sizeof *st->src);
    st->all = calloc(rp->sh.njobs ? rp->sh.njobs : 1, sizeof *st->all);
    if (!st->src || !st->all)
        return -1;
    for (size_t i = 0; i < rp->sh.njobs; i++) {
        rp_job *j = rp->sh.jobs[i];
        rconn *orig = &rp->c[j->id - 1];
        pcaptool_stepq **q = realloc(orig->src.q, (orig->src.nq + 1) * sizeof *q);
        if (!q)
            return -1;
        q[orig->src.nq++] = &j->q;
        orig->src.q = q;
        st->src[j->id - 1] = &orig->src;
        st->all[st->nall++] = &j->q;
    }
    for (size_t i = 0; i < rp->sh.njobs; i++) { /* nothing decoded: nothing will come */
        rconn *orig = &rp->c[rp->sh.jobs[i]->id - 1];
        if (!orig->src.packets) {
            orig->src.ended = 1;
            pcaptool_stepq_close(&rp->sh.jobs[i]->q, 0);
        }
    }
    for (size_t i = 0; i < rp->n; i++) /* not replayed: the reader only counts their steps */
        if (rp->c[i].job.id && !rp->c[i].run) {
            pcaptool_workload_init(&rp->c[i].src.w);
            st->src[i] = &rp->c[i].src;
        }
    return 0;
}

static int add_copy(pcaptool_replay *rp, const rp_job *orig, int copy)
{
    rp_job **a = realloc(rp->copies, (rp->ncopies + 1) * sizeof *a);
    if (!a)
        return -1;
    rp->copies = a;
    rp_job *j = calloc(1, sizeof *j);
    if (!j)
        return -1;
    j->id = orig->id;
    j->t_first = orig->t_first;
    j->t_last = orig->t_last;
    j->copy = copy;
    rp->copies[rp->ncopies++] = j; /* freed with the replay, also when add_job fails */
    return add_job(rp, j);
}

/* The replayed connections: every captured one to replay, then --connections copies. */
static int plan_jobs(pcaptool_replay *rp)
{
    size_t captured = 0;
    for (size_t i = 0; i < rp->n; i++) {
        rconn *c = &rp->c[i];
        if (!c->run)
            continue;
        pcaptool_workload_init(&c->src.w);
        c->src.t_detach = c->t_detach;
        if (add_job(rp, &c->job))
            return -1;
        if (!captured || c->job.t_first < rp->sh.cap_t0)
            rp->sh.cap_t0 = c->job.t_first;
        if (c->job.t_last > rp->cap_t1)
            rp->cap_t1 = c->job.t_last;
        captured++;
    }
    if (rp->o.connections && captured && (size_t)rp->o.connections < captured)
        fprintf(stderr,
                "fbwire-pcap: --connections %d is fewer than the %zu captured connections: each "
                "is replayed once\n",
                rp->o.connections, captured);
    for (size_t j = captured; captured && j < (size_t)rp->o.connections; j++)
        if (add_copy(rp, rp->sh.jobs[j % captured], (int)(j / captured)))
            return -1;
    return 0;
}

/* Run every job; from_trace: their queues are filled already (no reader). */
static void replay_all(pcaptool_replay *rp, int (*plan_steps)(pcaptool_replay *rp),
                       int from_trace)
{
    rp_conn_opts *o = &rp->sh.o;
    o->dsn = rp->o.dsn;
    o->user = rp->o.user;
    o->password = rp->o.password;
    o->wire_crypt = rp->o.wire_crypt;
    o->rows_captured = rp->o.row_format == PCAPTOOL_REPLAY_ROWS_CAPTURED;
    o->row_format = rp->o.row_format;
    o->pace_none = rp->o.pace_none;
    o->speed = rp->o.speed;
    o->results_ignore = rp->o.results_ignore;
    o->inline_blob_size = rp->o.inline_blob_size;
    o->keep_all_diffs = rp->o.json;
    rp->sh.f = pcaptool_fpstats_new();
    if (!rp->sh.f || plan_jobs(rp) || plan_steps(rp))
        atomic_store(&rp->sh.nomem, 1);
    else
        rp->wall_ns =
            rp_threads_run(&rp->sh, from_trace ? NULL : &rp->st, rp->o.progress || isatty(2));
}

/* ---- the report model ---- */

/* A connection still open when a damaged capture file ended was cut at an arbitrary point: it
 * gets a problem like any other undecodable one, so it is never replayed in part silently. */
static void check_truncation(char *why, size_t size, pcaptool_report_conn *ci,
                             const pcaptool_cap_summary *sum)
{
    if (ci->problem || !ci->open_at_end || !sum->truncated[0])
        return;
    snprintf(why, size, "the capture file is truncated while this connection was open: %s",
             sum->truncated);
    ci->problem = why;
}

static void sum_kinds(rp_conn_report *m)
{
    for (int k = 0; k < PCAPTOOL_STEP_KINDS; k++) {
        m->steps_total += m->kinds[k].steps;
        m->failed_total += m->kinds[k].failed;
    }
}

static void add_results(rp_totals *t, const rp_tally *y)
{
    t->compared += y->compared;
    t->matched += y->matched;
    t->different += y->different;
}

/* What the workload w could not replay: ops by count, BLR requests one by one. */
static void requests_model(rp_conn_report *m, const pcaptool_workload *w)
{
    m->not_replayed = w->not_replayed;
    m->requests = w->requests;
    m->nrequests = w->nrequests;
    m->requests_total = w->requests_total;
}

/* The model of connection c (ci: the capture's view of it), added to the totals. */
static void conn_model(const pcaptool_replay *rp, rconn *c, const pcaptool_report_conn *ci,
                       rp_conn_report *m, rp_totals *t)
{
    m->ci = ci;
    m->id = ci->id;
    m->run = c->run;
    if (rp->o.list) {
        for (size_t i = 0; i < c->w.n; i++)
            c->kinds[c->w.steps[i].kind].steps++;
        m->steps = c->w.steps;
        m->nsteps = c->w.n;
        m->kinds = c->kinds;
        requests_model(m, &c->w);
    } else {
        m->replayed = c->job.replayed;
        m->error = c->job.not_run;
        m->replay = &c->job.stats;
        m->late = c->src.w.late;
        requests_model(m, &c->src.w);
        if (c->run) {
            m->tally = &c->job.tally;
            m->kinds = c->job.tally.kinds;
            add_results(t, m->tally);
        } else { /* not replayed: the steps the reader decoded before the problem */
            for (int k = 0; k < PCAPTOOL_STEP_KINDS; k++)
                c->kinds[k].steps = c->src.kinds[k];
            m->kinds = c->kinds;
        }
    }
    sum_kinds(m);
    t->conns++;
    fbw_stats_add(&t->capture, ci->stats);
    if (m->replayed) {
        t->replayed++;
        fbw_stats_add(&t->replay, m->replay);
    }
    for (int k = 0; k < PCAPTOOL_STEP_KINDS; k++) {
        t->kinds[k].steps += m->kinds[k].steps;
        t->kinds[k].failed += m->kinds[k].failed;
        t->kinds[k].round_trips += m->kinds[k].round_trips;
    }
    t->steps += m->steps_total;
    t->failed += m->failed_total;
}

static void copy_model(const rp_job *j, rp_conn_report *m, rp_totals *t)
{
    m->id = j->id;
    m->copy = j->copy;
    m->run = m->replayed = j->replayed;
    m->error = j->not_run;
    m->tally = &j->tally;
    m->kinds = j->tally.kinds;
    m->replay = &j->stats;
    sum_kinds(m);
    add_results(t, &j->tally);
    t->steps += m->steps_total;
    t->failed += m->failed_total;
}

/* 1 when anything went wrong: a connection not decoded or not replayed to its end, a failed
 * step, a result difference. */
static int report_bad(const rp_report *m)
{
    int bad = m->truncated != NULL || m->t.different > 0;
    for (size_t i = 0; i < m->nconns; i++) {
        const rp_conn_report *c = &m->conns[i];
        bad |= c->ci->problem != NULL;
        if (c->run)
            bad |= c->error != NULL || c->tally->nfail > 0;
    }
    for (size_t i = 0; i < m->ncopies; i++)
        bad |= m->copies[i].error != NULL || m->copies[i].tally->nfail > 0;
    return bad;
}

/* As text or JSON (a write error shows in the stream's own state, as in every report). */
static void write_report(pcaptool_replay *rp, const rp_report *m)
{
    if (!rp->o.json) {
        (void)rp_report_text(m, rp->o.out);
        return;
    }
    json_t *doc = rp_report_json(m);
    if (!doc)
        atomic_store(&rp->sh.nomem, 1);
    (void)pcaptool_json_print(doc, rp->o.out);
}

/* The report model of the connections ci[0, count) and what ran, written as text or JSON;
 * 1 when anything went wrong. */
static int report(pcaptool_replay *rp, const pcaptool_report_conn *ci, size_t count,
                  const char *truncated, int from_trace)
{
    int bad = 0;
    rp_report m;
    memset(&m, 0, sizeof m);
    m.conns = calloc(count ? count : 1, sizeof *m.conns);
    if (!m.conns) {
        fprintf(stderr, "fbwire-pcap: out of memory\n");
        return 1;
    }
    m.list = rp->o.list;
    m.database = rp->o.dsn;
    m.truncated = truncated;
    m.from_trace = from_trace;
    if (from_trace && rp->sh.f)
        pcaptool_fpstats_no_capture_rt(rp->sh.f);
    fbw_stats_reset(&m.t.capture);
    fbw_stats_reset(&m.t.replay);
    for (size_t i = 0; i < count; i++) {
        if (rp->o.connection && ci[i].id != rp->o.connection)
            continue;
        rconn *c = conn_at(rp, ci[i].id);
        if (!c)
            break;
        conn_model(rp, c, &ci[i], &m.conns[m.nconns++], &m.t);
    }
    if (rp->o.connection && !m.nconns) {
        fprintf(stderr, "fbwire-pcap: the capture has no connection %d (it has %zu)\n",
                rp->o.connection, count);
        bad = 1;
    }
    rp_conn_report *copies = calloc(rp->ncopies ? rp->ncopies : 1, sizeof *copies);
    if (!copies)
        atomic_store(&rp->sh.nomem, 1);
    m.has_load = rp->sh.f != NULL;
    for (size_t i = 0; copies && m.has_load && i < rp->ncopies; i++)
        copy_model(rp->copies[i], &copies[m.ncopies++], &m.t);
    m.copies = copies;
    m.load = (rp_load){.pace_none = rp->o.pace_none,
                       .speed = rp->o.speed,
                       .connections = rp->sh.njobs,
                       .wall_s = (double)rp->wall_ns / 1e9,
                       .capture_s = (double)(rp->cap_t1 - rp->sh.cap_t0) / 1e9,
                       .results_ignore = rp->o.results_ignore,
                       .f = rp->sh.f};
    bad |= report_bad(&m);
    write_report(rp, &m);
    free(copies);
    free(m.conns);
    if (atomic_load(&rp->sh.nomem))
        fprintf(stderr, "fbwire-pcap: out of memory: the replay report is incomplete\n");
    return bad || atomic_load(&rp->sh.nomem) ? 1 : 0;
}

int pcaptool_replay_finish(pcaptool_replay *rp, const pcaptool_report *r,
                           const pcaptool_cap_summary *sum)
{
    size_t count = pcaptool_report_count(r);
    pcaptool_report_conn *ci = calloc(count ? count : 1, sizeof *ci);
    char (*why)[400] = calloc(count ? count : 1, sizeof *why);
    if (!ci || !why) {
        free(ci);
        free(why);
        fprintf(stderr, "fbwire-pcap: out of memory\n");
        return 1;
    }
    int bad = 0;
    /* which connections run: decoded to their end and not only listed */
    for (size_t i = 0; i < count; i++) {
        pcaptool_report_conn_info(r, i, &ci[i]);
        check_truncation(why[i], sizeof why[i], &ci[i], sum);
        if (rp->o.connection && ci[i].id != rp->o.connection)
            continue;
        rconn *c = conn_at(rp, ci[i].id);
        if (!c)
            break;
        c->job.id = ci[i].id;
        c->run = !rp->o.list && !ci[i].problem;
        bad |= c->w.nomem;
    }
    if (!rp->o.list) {
        replay_all(rp, plan_stream, 0);
        for (size_t i = 0; i < rp->n; i++)
            bad |= rp->c[i].src.w.nomem;
    }
    bad |= report(rp, ci, count, sum->truncated[0] ? sum->truncated : NULL, 0);
    free(ci);
    free(why);
    return bad;
}

/* ---- a trace's workload ---- */

/* Every job's queue gets its connection's steps (shared by its copies), then its end. */
static int trace_queues(pcaptool_replay *rp)
{
    for (size_t i = 0; i < rp->n; i++) {
        rconn *c = &rp->c[i];
        int refs = 0;
        for (size_t k = 0; k < rp->sh.njobs; k++)
            refs += rp->sh.jobs[k]->id == (int)i + 1;
        for (size_t k = 0; k < c->w.n; k++) {
            pcaptool_qstep *x = refs ? pcaptool_qstep_new(&c->w.steps[k], k + 1, refs) : NULL;
            if (refs && !x) {
                memset(&c->w.steps[k], 0, sizeof c->w.steps[k]);
                return -1;
            }
            if (!refs)
                continue; /* not replayed (--connection): freed with the workload */
            memset(&c->w.steps[k], 0, sizeof c->w.steps[k]); /* the queues own it now */
            for (size_t j = 0; j < rp->sh.njobs; j++)
                if (rp->sh.jobs[j]->id == (int)i + 1)
                    (void)pcaptool_stepq_push(&rp->sh.jobs[j]->q, x, 0, 1);
        }
        if (refs)
            c->w.n = 0; /* what is left is zeroed steps */
    }
    for (size_t j = 0; j < rp->sh.njobs; j++)
        pcaptool_stepq_close(&rp->sh.jobs[j]->q, rp->c[rp->sh.jobs[j]->id - 1].t_detach);
    return 0;
}

int pcaptool_replay_trace(pcaptool_replay *rp, pcaptool_trace_workload *tw)
{
    size_t count = tw->n;
    pcaptool_report_conn *ci = calloc(count ? count : 1, sizeof *ci);
    char (*name)[2][300] = calloc(count ? count : 1, sizeof *name);
    fbw_stats *none = calloc(count ? count : 1, sizeof *none);
    if (!ci || !name || !none || (count && !conn_at(rp, (int)count))) {
        free(ci);
        free(name);
        free(none);
        fprintf(stderr, "fbwire-pcap: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < count; i++) {
        pcaptool_trace_conn *t = &tw->c[i];
        rconn *c = &rp->c[i];
        snprintf(name[i][0], sizeof name[i][0], "ATT_%lld %s%s%s", (long long)t->att,
                 t->remote ? t->remote : "?", t->process ? " " : "", t->process ? t->process : "");
        snprintf(name[i][1], sizeof name[i][1], "%s", t->db ? t->db : "?");
        fbw_stats_reset(&none[i]); /* a trace has no packets: its figures are unknown */
        ci[i] = (pcaptool_report_conn){.id = (int)i + 1, .client = name[i][0],
                                       .server = name[i][1], .stats = &none[i]};
        /* the steps move into the workload (--list) or the queues */
        c->w.steps = t->steps;
        c->w.n = c->w.cap = t->n;
        t->steps = NULL;
        t->n = t->cap = 0;
        c->job.id = (int)i + 1;
        c->job.t_first = t->t_first;
        c->job.t_last = t->t_last;
        c->t_detach = t->t_detach;
        c->run = !rp->o.list && (!rp->o.connection || rp->o.connection == (int)i + 1);
    }
    if (!rp->o.list)
        replay_all(rp, trace_queues, 1);
    int bad = report(rp, ci, count, NULL, 1);
    free(ci);
    free(name);
    free(none);
    return bad;
}
