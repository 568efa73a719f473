/* SPDX-License-Identifier: MIT */
/* replay_conn.c - one replayed connection, connect to detach, on its own thread (replay_conn.h).
 * A captured connection is a sequential client that waits for every reply, so a thread that
 * sleeps its think time and blocks on its round trips is that client, and the blocking client
 * already owns every timeout. Results and latency are counted as each execution ends, so nothing
 * here grows with the number of steps. */
#include "replay_conn.h"

#include "replay_step.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the runner of one connection owns: its slots, its step context, the job it fills. */
typedef struct runner {
    rp_job *j;
    rp_shared *sh;
    rp_slots sl;
    rp_step x;
} runner;

uint64_t rp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* nanosleep, restarted after signals. */
void rp_sleep_until(uint64_t until)
{
    for (uint64_t t = rp_now_ns(); t < until; t = rp_now_ns()) {
        struct timespec ts = {(time_t)((until - t) / 1000000000u),
                              (long)((until - t) % 1000000000u)};
        nanosleep(&ts, NULL);
    }
}

void rp_job_set_not_run(rp_job *j, const char *fmt, ...)
{
    char tmp[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    free(j->not_run);
    j->not_run = strdup(tmp);
    if (!j->not_run)
        atomic_store(&j->sh->nomem, 1);
}

void rp_job_free(rp_job *j)
{
    if (j->q_ready)
        pcaptool_stepq_destroy(&j->q);
    j->q_ready = 0;
    rp_tally_free(&j->tally);
    free(j->not_run);
    j->not_run = NULL;
}

static char *dup_str(runner *r, const char *s)
{
    char *d = strdup(s);
    if (!d)
        atomic_store(&r->sh->nomem, 1);
    return d;
}

/* Wait until the request's time comes: its offset from the capture's start, scaled. A client's
 * think time is kept as long as the replay keeps up; when a reply came later than in the capture,
 * the next request goes at once (catching up, as pgreplay does) instead of every delay adding to
 * the next, so the load keeps the capture's rate. */
static void pace(rp_job *j, uint64_t capture_ts)
{
    const rp_shared *sh = j->sh;
    if (sh->o.pace_none || capture_ts < sh->cap_t0)
        return;
    atomic_store(&j->q.pacing, 1);
    rp_sleep_until(sh->start_ns + (uint64_t)((double)(capture_ts - sh->cap_t0) / sh->o.speed));
    atomic_store(&j->q.pacing, 0);
}

/* ---- latency per fingerprint ---- */

static const char *const end_names[PCAPTOOL_STEP_KINDS] = {
    [PCAPTOOL_STEP_COMMIT] = "COMMIT",     [PCAPTOOL_STEP_COMMIT_RETAINING] = "COMMIT RETAIN",
    [PCAPTOOL_STEP_ROLLBACK] = "ROLLBACK", [PCAPTOOL_STEP_ROLLBACK_RETAINING] = "ROLLBACK RETAIN",
    [PCAPTOOL_STEP_BLOB] = "(blob write)", [PCAPTOOL_STEP_BLOB_READ] = "(blob read)",
    [PCAPTOOL_STEP_FETCH_SCROLL] = "(scroll fetch)", [PCAPTOOL_STEP_COUNT_CURSOR] = "(cursor count)",
};

static int is_execution(int kind)
{
    return kind == PCAPTOOL_STEP_EXECUTE || kind == PCAPTOOL_STEP_IMMEDIATE || end_names[kind] != NULL;
}

/* One execution into the shared table (the threads add as their executions end). */
static void add_fp(runner *r, const char *kind_name, const char *sql, const pcaptool_fp_exec *e)
{
    fbw_buf key;
    fbw_buf_init(&key);
    if (kind_name)
        (void)fbw_buf_puts(&key, kind_name);
    else if (sql)
        pcaptool_fingerprint(sql, strlen(sql), &key);
    else
        (void)fbw_buf_puts(&key, "(statement prepared before the capture)");
    rp_shared *sh = r->sh;
    pthread_mutex_lock(&sh->f_mu);
    if (sh->f &&
        pcaptool_fpstats_add(sh->f, (const char *)fbw_buf_head(&key), fbw_buf_avail(&key), e))
        atomic_store(&sh->nomem, 1);
    pthread_mutex_unlock(&sh->f_mu);
    fbw_buf_free(&key);
}

/* The execution of a statement slot ended (its next execute, its drop, the connection's end):
 * compare its result and add its latency. */
static void exec_end(runner *r, int slot)
{
    rp_exec *x = r->sl.ex ? r->sl.ex[slot] : NULL;
    if (!x || !x->step)
        return;
    int res = rp_compare(x, r->sh->o.results_ignore);
    rp_tally_result(&r->j->tally, x, res);
    x->e.result = res;
    add_fp(r, NULL, x->sql, &x->e);
    free(x->sql);
    x->sql = NULL;
    x->step = 0;
}

static void exec_begin(runner *r, const pcaptool_qstep *q)
{
    int slot = q->s.stmt;
    exec_end(r, slot);
    rp_exec *x = r->sl.ex[slot];
    if (!x && !(x = r->sl.ex[slot] = malloc(sizeof *x))) {
        atomic_store(&r->sh->nomem, 1);
        return;
    }
    memset(x, 0, sizeof *x);
    x->step = q->index;
    x->stmt = slot;
    x->kind = PCAPTOOL_STEP_EXECUTE;
    x->cap = q->s.result;
    x->rep = (pcaptool_result){.rows = -1, .affected = -1};
    x->sql = q->s.sql_step && r->sl.sql[slot] ? dup_str(r, r->sl.sql[slot]) : NULL;
}

static void add_to(pcaptool_fp_exec *e, const pcaptool_step *s, uint64_t ns, uint32_t rts)
{
    e->capture_ns += s->t_end > s->t_req ? s->t_end - s->t_req : 0;
    e->capture_rt += s->round_trips;
    e->replay_ns += ns;
    e->replay_rt += rts;
}

/* An execution is its execute step, the fetch steps of its cursor and the info_sql steps that
 * asked about it: latencies and round trips of those steps add up (think time between them is not
 * latency). */
static void account(runner *r, const pcaptool_qstep *q, uint64_t ns, uint32_t rts, int ran)
{
    const pcaptool_step *s = &q->s;
    int ok = ran && r->x.step_ok;
    int slot = s->stmt > 0 ? s->stmt : 0;
    rp_exec *x = slot && r->sl.ex ? r->sl.ex[slot] : NULL;
    if (s->kind == PCAPTOOL_STEP_PREPARE && slot && s->data) {
        free(r->sl.sql[slot]);
        r->sl.sql[slot] = dup_str(r, (const char *)s->data);
    }
    if (s->kind == PCAPTOOL_STEP_EXECUTE && x && x->step == q->index) {
        x->ok = ok;
        x->e.replayed = ok && r->j->replayed;
        add_to(&x->e, s, ns, rts);
    } else if ((s->kind == PCAPTOOL_STEP_FETCH || s->kind == PCAPTOOL_STEP_INFO_SQL) &&
               s->owner != q->index && x && x->step == s->owner) {
        x->e.replayed &= ok;
        add_to(&x->e, s, ns, rts);
    } else if (is_execution(s->kind)) {
        pcaptool_fp_exec e = {.replayed = ok && r->j->replayed,
                              .result = ran ? r->x.once_result : PCAPTOOL_FP_NOT_COMPARED};
        add_to(&e, s, ns, rts);
        const char *sql = s->kind == PCAPTOOL_STEP_IMMEDIATE ? (const char *)s->data : NULL;
        add_fp(r, end_names[s->kind], sql, &e);
    }
    if (s->kind == PCAPTOOL_STEP_DROP && slot)
        exec_end(r, slot);
}

/* ---- running the stream ---- */

/* What the step context noted for the shared counters. */
static void take_counts(runner *r)
{
    if (r->x.failed)
        atomic_fetch_add(&r->sh->steps_failed, r->x.failed);
    r->x.failed = 0;
    if (r->x.nomem || r->j->tally.nomem)
        atomic_store(&r->sh->nomem, 1);
}

/* One step from the stream: run it (when connected and not broken), measure it, count it. */
static void run_one(runner *r, const pcaptool_qstep *q)
{
    pcaptool_step local =
        q->s; /* shared with fan-out copies: the small transaction number is ours */
    const pcaptool_step *s = &local;
    size_t i = q->index;
    int ran = r->x.c && !r->x.broken;
    local.tx = ran ? rp_slots_small_tx(&r->sl, q->s.tx) : 0; /* a step not run needs no tx */
    if (local.tx < 0 || rp_slots_ensure(&r->sl, s->tx, s->stmt)) {
        atomic_store(&r->sh->nomem, 1);
        if (ran)
            rp_job_set_not_run(r->j, "out of memory");
        r->x.broken = 1;
        return;
    }
    r->x.step = i;
    if (!ran) {
        r->x.step_ok = 0;
        if (s->kind == PCAPTOOL_STEP_EXECUTE && s->stmt > 0)
            exec_begin(r, q);
        account(r, q, 0, 0, 0);
        return;
    }
    r->x.s = s;
    pace(r->j, s->t_req);
    uint64_t before = fbw_conn_stats(r->x.c)->round_trips;
    uint64_t t0 = rp_now_ns();
    r->j->tally.kinds[s->kind].steps++;
    r->x.step_ok = 1;
    r->x.once_result = PCAPTOOL_FP_NOT_COMPARED;
    if (s->kind == PCAPTOOL_STEP_EXECUTE && s->stmt > 0)
        exec_begin(r, q);
    if (s->problem)
        rp_add_failure(&r->x, i, s, NULL, s->problem);
    else
        rp_step_run(&r->x, i);
    uint64_t rts = fbw_conn_stats(r->x.c)->round_trips - before;
    uint64_t ns = rp_now_ns() - t0;
    r->j->tally.kinds[s->kind].round_trips += rts;
    rp_step_check_starts(&r->x);
    if (s->tx > 0 && (s->kind == PCAPTOOL_STEP_COMMIT || s->kind == PCAPTOOL_STEP_ROLLBACK ||
                      (r->sl.tx[s->tx] && fbw_tx_state(r->sl.tx[s->tx]) == FBW_TX_ENDED)))
        rp_step_tx_ended(&r->x, s->tx); /* also COMMIT or ROLLBACK as SQL */
    account(r, q, ns, (uint32_t)rts, 1);
    take_counts(r);
    atomic_fetch_add(&r->sh->steps_done, 1);
}

/* Take the connection's steps from its queue until the reader ends it. Every wait is bounded;
 * the reader closes every queue when it stops, whatever the reason. */
static void run_stream(runner *r)
{
    for (;;) {
        pcaptool_qstep *q = NULL;
        int got = pcaptool_stepq_pop(&r->j->q, &q, rp_now_ns() + 1000000000u);
        if (got == PCAPTOOL_STEPQ_TIMEOUT)
            continue;
        if (got != PCAPTOOL_STEPQ_STEP)
            break;
        run_one(r, q);
        pcaptool_qstep_unref(q);
    }
    for (size_t k = 1; r->sl.ex && k <= r->sl.nst; k++)
        exec_end(r, (int)k);
    take_counts(r);
}

/* A connection that began after another one ended in the capture begins after it in the replay
 * too (its SQL may need what the other committed, e.g. a table). */
static void wait_predecessors(const rp_job *j)
{
    const rp_shared *sh = j->sh;
    for (size_t i = 0; i < sh->njobs; i++) {
        const rp_job *o = sh->jobs[i];
        if (o == j || o->t_last >= j->t_first)
            continue;
        while (!atomic_load(&o->finished))
            rp_sleep_until(rp_now_ns() + 1000000u);
    }
}

static void runner_free(runner *r)
{
    rp_slots_free(&r->sl);
    rp_step_free(&r->x);
}

void rp_job_replay(rp_job *j)
{
    rp_shared *sh = j->sh;
    pace(j, j->t_first);
    wait_predecessors(j);
    fbw_client_opts o;
    fbw_client_opts_init(&o);
    o.conn.user = sh->o.user;
    o.conn.password = sh->o.password;
    o.conn.wire_crypt = sh->o.wire_crypt;
    if (!sh->o.rows_captured)
        o.conn.row_format = sh->o.row_format;
    /* the executes set their own (replay_steps.c); the rest (execute immediate) asks for none,
     * unless a size was given for all */
    o.conn.inline_blob_size = sh->o.inline_blob_size < 0 ? 0 : sh->o.inline_blob_size;
    j->tally.keep_all_diffs = sh->o.keep_all_diffs;
    runner r;
    memset(&r, 0, sizeof r);
    r.j = j;
    r.sh = sh;
    r.x.sl = &r.sl;
    r.x.tally = &j->tally;
    r.x.rows_captured = sh->o.rows_captured;
    r.x.results_ignore = sh->o.results_ignore;
    r.x.inline_blob_size = sh->o.inline_blob_size;
    fbw_err err;
    fbw_err_clear(&err);
    if (fbw_client_connect(sh->o.dsn, &o, &r.x.cl, &err)) {
        rp_job_set_not_run(j, "cannot connect to %s: %s%s%s%s", sh->o.dsn, err.msg,
                           err.sqlstate[0] ? " [SQLSTATE " : "", err.sqlstate,
                           err.sqlstate[0] ? "]" : "");
        r.x.cl = NULL;
        run_stream(&r); /* counted, not run */
        runner_free(&r);
        return;
    }
    r.x.c = r.sl.c = fbw_client_conn(r.x.cl);
    j->replayed = 1;
    atomic_fetch_add(&sh->open_conns, 1);
    run_stream(&r);
    runner_free(&r);
    atomic_fetch_sub(&sh->open_conns, 1);
    if (r.x.broken) {
        if (!j->not_run) /* else out of memory, which not_run says */
            rp_job_set_not_run(j, "the replay connection failed: %s",
                               fbw_client_error(r.x.cl)->msg);
        j->stats = *fbw_conn_stats(r.x.c);
        fbw_client_abort(r.x.cl);
        return;
    }
    pace(j, j->q.t_detach);
    if (fbw_conn_detach(r.x.c) == FBW_OK)
        fbw_client_wait(r.x.cl); /* the capture's detach is counted too: count ours */
    j->stats = *fbw_conn_stats(r.x.c);
    fbw_client_close(r.x.cl);
}
