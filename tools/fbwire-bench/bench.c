/* SPDX-License-Identifier: MIT */
/* bench.c - shared helpers of fbwire-bench (see bench.h). */
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MAX_COLS 32 /* keeps the value array on the stack small */

int benchtool_connect(const benchtool_opts *o, const char *plugin, int compress, fbw_client **out,
                      fbw_err *err)
{
    fbw_client_opts co;
    fbw_client_opts_init(&co);
    co.conn.user = o->user;
    co.conn.password = o->password;
    co.conn.wire_crypt = plugin ? FBW_WIRE_CRYPT_REQUIRED : FBW_WIRE_CRYPT_DISABLED;
    co.conn.crypt_list = plugin;
    co.conn.compress = compress;
    co.conn.row_format = o->row_format;
    co.conn.process_name = "fbwire-bench";
    co.timeout_ms = o->timeout_s * 1000;
    co.keylog = o->keylog;
    return fbw_client_connect(o->db, &co, out, err);
}

/* ---- statements ---- */

/* A client failure, or else the statement's own server error. */
static int stmt_result(benchtool_stmt *b, int rc, const char *what, fbw_err *err)
{
    if (rc) {
        *err = *fbw_client_error(b->cl);
    } else if (fbw_stmt_error(b->s)->code != FBW_OK) {
        *err = *fbw_stmt_error(b->s);
        rc = err->code;
    }
    if (rc)
        fbw_err_prefix(err, "%s", what);
    return rc;
}

int benchtool_prepare(benchtool_stmt *b, fbw_client *cl, const char *sql, fbw_err *err)
{
    memset(b, 0, sizeof *b);
    b->cl = cl;
    b->sql = sql;
    fbw_conn *c = fbw_client_conn(cl);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    to.read_only = 1;
    int rc = fbw_tx_new(c, &b->tx, err);
    if (rc == FBW_OK)
        rc = fbw_stmt_new(c, &b->s, err);
    if (rc)
        return rc;
    /* prepare inside the transaction (FB3 wants that for some SQL) */
    rc = fbw_client_complete(cl, fbw_tx_start(b->tx, &to));
    if (rc == FBW_OK)
        rc = fbw_client_prepare(cl, b->s, b->tx, b->sql, strlen(b->sql));
    rc = stmt_result(b, rc, "prepare", err);
    if (rc == FBW_OK && fbw_stmt_output(b->s)->n > MAX_COLS)
        rc = fbw_err_set(err, FBW_E_USAGE, "more than %d columns", MAX_COLS);
    return rc;
}

/* Decode every buffered row and drop them. */
static int consume_rows(benchtool_stmt *b, uint64_t *rows, fbw_err *err)
{
    fbw_value v[MAX_COLS];
    const fbw_msgfmt *f = fbw_stmt_output(b->s);
    for (size_t i = 0; i < fbw_stmt_row_count(b->s); i++) {
        int rc = fbw_stmt_row(b->s, i, v, err);
        if (rc)
            return rc;
        for (int k = 0; k < f->n; k++)
            if (!v[k].is_null && (v[k].type == FBW_SQL_TEXT || v[k].type == FBW_SQL_VARYING))
                b->sink += v[k].u.bytes.n;
        (*rows)++;
    }
    fbw_stmt_clear_rows(b->s);
    return FBW_OK;
}

int benchtool_exec(benchtool_stmt *b, const fbw_value *params, uint64_t *rows, fbw_err *err)
{
    *rows = 0;
    int rc = stmt_result(b, fbw_client_execute(b->cl, b->s, b->tx, params, 0), "execute", err);
    while (rc == FBW_OK) {
        rc = consume_rows(b, rows, err);
        if (rc || fbw_stmt_eof(b->s))
            break;
        rc = stmt_result(b, fbw_client_fetch(b->cl, b->s), "fetch", err);
    }
    return rc;
}

int benchtool_finish(benchtool_stmt *b, fbw_err *err)
{
    fbw_stmt_free(b->s);
    b->s = NULL;
    int rc = b->tx && fbw_tx_live(b->tx) ? fbw_client_commit(b->cl, b->tx) : FBW_OK;
    if (rc) {
        *err = *fbw_client_error(b->cl);
        fbw_err_prefix(err, "commit");
    }
    fbw_tx_free(b->tx);
    b->tx = NULL;
    return rc;
}

/* ---- clocks and statistics ---- */

uint64_t benchtool_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t tv_ns(struct timeval t) { return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_usec * 1000u; }

uint64_t benchtool_cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double benchtool_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void benchtool_print_error(const char *what, const fbw_err *e)
{
    fprintf(stderr, "fbwire-bench: %s: %s\n", what, e->msg[0] ? e->msg : fbw_rc_name(e->code));
    if (e->sqlstate[0])
        fprintf(stderr, "SQLSTATE = %s\n", e->sqlstate);
    if (e->ngds > 0)
        fprintf(stderr, "gds code = %u\n", e->gds[0]);
}
