/* SPDX-License-Identifier: MIT */
/* pipeline.c - "fbwire-bench pipeline": what one round trip costs the client and the server.
 *
 * One prepared point SELECT (--sql, default sysbench's `SELECT c FROM sbtest1 WHERE id=?`) in a
 * read-only transaction. Each round queues K executions of it with random ids 1..--ids in the
 * library's pipeline (pipe.h: each with its own result; execute + first fetch + the previous
 * execution's close), then syncs once: K statements per round trip. For every K of --k the
 * rounds run for --seconds; the K values alternate within each of --runs runs so drift hits them
 * alike. Printed per K, medians over the runs: statements/s, client CPU per statement (getrusage
 * of this process) and server CPU per statement (the server process found from the connection's
 * socket, measure/srvcpu.h: user+system, children included; "n/a" with the reason when the server
 * is not on this machine). The server's figure counts everything that server did meanwhile: run
 * it on an otherwise idle server. Every execution must return exactly one row. */
#include "bench.h"
#include "srvcpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_K 16   /* values in --k */
#define MAX_RUNS 100
#define MAX_BATCH 1024

typedef struct pipe_state {
    const char *sql;
    int ids;
    double seconds;
    int k[MAX_K], nk;
} pipe_state;

static void pipe_init(void *state)
{
    pipe_state *st = state;
    st->sql = "SELECT c FROM sbtest1 WHERE id=?";
    st->ids = 10000;
    st->seconds = 3;
    const int dflt[] = {1, 2, 5, 14, 32};
    st->nk = 5;
    memcpy(st->k, dflt, sizeof dflt);
}

static int parse_k(pipe_state *st, const char *value)
{
    st->nk = 0;
    for (const char *p = value; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > MAX_BATCH || st->nk == MAX_K)
            return -1;
        st->k[st->nk++] = (int)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return st->nk ? 1 : -1;
}

static int pipe_option(void *state, const char *name, const char *value)
{
    pipe_state *st = state;
    int rc = 1;
    if (!strcmp(name, "--sql"))
        st->sql = value;
    else if (!strcmp(name, "--ids"))
        rc = (st->ids = atoi(value)) > 0 ? 1 : -1;
    else if (!strcmp(name, "--seconds"))
        rc = (st->seconds = atof(value)) > 0 ? 1 : -1;
    else if (!strcmp(name, "--k"))
        rc = parse_k(st, value);
    else
        return 0;
    if (rc < 0)
        fprintf(stderr, "fbwire-bench pipeline: bad value for %s: %s\n", name, value);
    return rc;
}

typedef struct round {
    benchtool_stmt *b;
    fbw_pipe *p;
    int ids;
    unsigned seed;
    unsigned k[MAX_BATCH]; /* the executions' numbers in the pipeline */
} round;

/* Queue k executions, sync once, and check that each returned exactly one row. */
static int one_round(round *r, int k, fbw_err *err)
{
    for (int i = 0; i < k; i++) {
        fbw_value v;
        memset(&v, 0, sizeof v);
        v.type = FBW_SQL_LONG;
        v.u.i64 = 1 + (int64_t)(rand_r(&r->seed) % (unsigned)r->ids);
        int rc = fbw_pipe_execute(r->p, r->b->s, &v, 0, r->b->sql, &r->k[i], err);
        if (rc)
            return rc;
    }
    int rc = fbw_pipe_sync(r->p, err);
    if (rc)
        return rc;
    if (fbw_pipe_error(r->p)->code != FBW_OK) {
        *err = *fbw_pipe_error(r->p);
        return err->code;
    }
    for (int i = 0; i < k; i++) {
        const fbw_exec_out *o = fbw_pipe_result(r->p, r->k[i]);
        if (!o || o->rows != 1)
            return fbw_err_set(err, FBW_E_BADVALUE, "an execution returned %zu rows, not 1",
                               o ? o->rows : 0);
    }
    return FBW_OK;
}

typedef struct sample {
    double qps, client_us, server_us, stmts_per_rt;
    int server_ok;
} sample;

/* One K for st->seconds: rounds of K pipelined executions. */
static int measure(benchtool_stmt *b, srvcpu *srv, int srv_ok, const pipe_state *st, int k,
                   round *r, sample *out, fbw_err *err)
{
    fbw_conn *c = fbw_client_conn(b->cl);
    uint64_t stmts = 0, rt0 = fbw_conn_stats(c)->round_trips, s0 = 0, s1 = 0;
    if (srv_ok && srvcpu_read(srv, &s0, NULL) != FBW_OK)
        srv_ok = 0;
    uint64_t w0 = benchtool_wall_ns(), c0 = benchtool_cpu_ns();
    uint64_t until = w0 + (uint64_t)(st->seconds * 1e9);
    while (benchtool_wall_ns() < until) {
        int rc = one_round(r, k, err);
        if (rc)
            return rc;
        fbw_stmt_clear_rows(b->s);
        stmts += (uint64_t)k;
    }
    uint64_t wall = benchtool_wall_ns() - w0, cpu = benchtool_cpu_ns() - c0;
    if (srv_ok && srvcpu_read(srv, &s1, NULL) != FBW_OK)
        srv_ok = 0;
    uint64_t rts = fbw_conn_stats(c)->round_trips - rt0;
    out->qps = (double)stmts / ((double)wall / 1e9);
    out->client_us = (double)cpu / 1e3 / (double)stmts;
    out->server_ok = srv_ok && s1 >= s0;
    out->server_us = out->server_ok ? (double)(s1 - s0) / 1e3 / (double)stmts : 0;
    out->stmts_per_rt = rts ? (double)stmts / (double)rts : 0;
    return FBW_OK;
}

static int pipe_run(const benchtool_opts *o, void *state)
{
    const pipe_state *st = state;
    fbw_client *cl = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    if (benchtool_connect(o, NULL, 0, &cl, &err) != FBW_OK) {
        benchtool_print_error("connect", &err);
        return 1;
    }
    srvcpu srv;
    memset(&srv, 0, sizeof srv);
    int srv_ok = srvcpu_find_peer(&srv, fbw_client_fd(cl), NULL) == FBW_OK;
    benchtool_stmt b;
    round *r = calloc(1, sizeof *r);
    sample *s = calloc((size_t)st->nk * MAX_RUNS, sizeof *s);
    int rc = r && s ? benchtool_prepare(&b, cl, st->sql, &err)
                    : fbw_err_set(&err, FBW_E_NOMEM, "out of memory");
    if (rc == FBW_OK && fbw_stmt_input(b.s)->n != 1)
        rc = fbw_err_set(&err, FBW_E_USAGE, "--sql must take exactly one parameter (the id)");
    if (r) {
        r->b = &b;
        r->ids = st->ids;
        r->seed = 12345;
    }
    fbw_pipe_opts po;
    fbw_pipe_opts_init(&po);
    po.max_replies = 4u * MAX_BATCH; /* K is the point: no sync inside a round */
    po.wait = fbw_client_pipe_wait;
    po.wait_arg = cl;
    if (rc == FBW_OK && (rc = fbw_pipe_new(fbw_client_conn(cl), &po, &r->p, &err)) == FBW_OK)
        fbw_pipe_begin(r->p, b.tx);
    for (int run = 0; rc == FBW_OK && run < o->runs; run++)
        for (int i = 0; rc == FBW_OK && i < st->nk; i++)
            rc = measure(&b, &srv, srv_ok, st, st->k[i], r, &s[i * MAX_RUNS + run], &err);
    if (rc != FBW_OK) {
        benchtool_print_error("pipeline", &err);
    } else {
        printf("K statements per write, one wait per round; medians of %d runs of %.1f s per K\n",
               o->runs, st->seconds);
        printf("%6s %12s %10s %18s %18s\n", "K", "stmts/s", "stmts/rt", "client CPU us/stmt",
               "server CPU us/stmt");
        for (int i = 0; i < st->nk; i++) {
            double q[MAX_RUNS], cu[MAX_RUNS], su[MAX_RUNS], spr[MAX_RUNS];
            int ok = 1;
            for (int run = 0; run < o->runs; run++) {
                const sample *x = &s[i * MAX_RUNS + run];
                q[run] = x->qps, cu[run] = x->client_us, su[run] = x->server_us,
                spr[run] = x->stmts_per_rt;
                ok &= x->server_ok;
            }
            char server[32];
            if (ok)
                snprintf(server, sizeof server, "%.2f", benchtool_median(su, o->runs));
            else
                snprintf(server, sizeof server, "n/a");
            printf("%6d %12.0f %10.2f %18.2f %18s\n", st->k[i], benchtool_median(q, o->runs),
                   benchtool_median(spr, o->runs), benchtool_median(cu, o->runs), server);
        }
        if (!srv_ok)
            printf("server CPU not available: %s\n", srv.why[0] ? srv.why : "server not found");
        else
            printf("server: pid %d (%d child processes); its CPU includes all its other work\n",
                   srv.pid, srv.children);
        rc = benchtool_finish(&b, &err);
        if (rc)
            benchtool_print_error("finish", &err);
    }
    fbw_client_close(cl);
    if (r)
        fbw_pipe_free(r->p);
    free(r);
    free(s);
    return rc == FBW_OK ? 0 : 1;
}

const benchtool_mode benchtool_mode_pipeline = {
    .name = "pipeline",
    .summary = "K pipelined point SELECTs per round trip: statements/s, client and server CPU "
               "per statement",
    .options_help = "  --k LIST         statements per round trip, comma separated\n"
                    "                   (default 1,2,5,14,32)\n"
                    "  --sql SQL        statement with one id parameter\n"
                    "                   (default sysbench's point select)\n"
                    "  --ids N          ids drawn from 1..N (default 10000)\n"
                    "  --seconds S      time per K per run (default 3)\n",
    .state_size = sizeof(pipe_state),
    .init = pipe_init,
    .option = pipe_option,
    .run = pipe_run,
};
