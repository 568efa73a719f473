/* SPDX-License-Identifier: MIT */
/* sqlt.c - SQL helpers for the statement-layer integration tests (sqlt.h). */
#include "sqlt.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void fbw_sqlt_wait_ok(fbw_sqlt *q)
{
    int rc = fbw_client_wait(q->cl);
    cr_assert_eq(rc, FBW_OK, "%s: wait: %s: %s", fbw_server_name(q->id), fbw_rc_name(rc),
                 fbw_client_error(q->cl)->msg);
}

/* A new transaction, kept for fbw_sqlt_close to free. */
static fbw_tx *tx_new(fbw_sqlt *q)
{
    fbw_tx **a = realloc(q->txs, (q->ntxs + 1) * sizeof *a);
    cr_assert_not_null(a);
    q->txs = a;
    fbw_err err;
    cr_assert_eq(fbw_tx_new(q->c, &a[q->ntxs], &err), FBW_OK, "%s", err.msg);
    return a[q->ntxs++];
}

void fbw_sqlt_tx_start_ok(fbw_sqlt *q, fbw_tx **out, const fbw_tx_opts *o)
{
    fbw_tx_opts d;
    fbw_tx_opts_init(&d);
    fbw_tx *t = *out = tx_new(q);
    cr_assert_eq(fbw_tx_start(t, o ? o : &d), FBW_OK, "tx start: %s", fbw_tx_error(t)->msg);
    fbw_sqlt_wait_ok(q);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ACTIVE, "%s: tx start: %s", fbw_server_name(q->id),
                 fbw_tx_error(t)->msg);
}

void fbw_sqlt_commit_ok(fbw_sqlt *q, fbw_tx *t)
{
    int rc = fbw_client_commit(q->cl, t);
    cr_assert_eq(rc, FBW_OK, "%s: commit: %s: %s", fbw_server_name(q->id), fbw_rc_name(rc),
                 fbw_client_call_error(q->cl, rc, NULL, t)->msg);
    cr_assert_eq(fbw_tx_state(t), FBW_TX_ENDED, "%s: commit: %s", fbw_server_name(q->id),
                 fbw_tx_error(t)->msg);
}

void fbw_sqlt_open(fbw_sqlt *q, fbw_server_id id, const fbw_client_opts *o)
{
    memset(q, 0, sizeof *q);
    fbw_servers_require(&q->srv);
    q->id = id;
    fbw_client_opts d;
    fbw_servers_client_opts(&q->srv, &d);
    char dsn[1400];
    fbw_err err;
    fbw_err_clear(&err);
    int rc = fbw_client_connect(fbw_servers_dsn(&q->srv, id, dsn, sizeof dsn), o ? o : &d, &q->cl, &err);
    cr_assert_eq(rc, FBW_OK, "connect %s: %s: %s", fbw_server_name(id), fbw_rc_name(rc), err.msg);
    q->c = fbw_client_conn(q->cl);
    fbw_sqlt_tx_start_ok(q, &q->tx, NULL);
}

void fbw_sqlt_close(fbw_sqlt *q)
{
    if (!q->cl)
        return;
    if (q->tx && fbw_tx_state(q->tx) == FBW_TX_ACTIVE && fbw_tx_rollback(q->tx) == FBW_OK)
        fbw_client_wait(q->cl);
    for (size_t i = 0; i < q->ntxs; i++)
        fbw_tx_free(q->txs[i]); /* before the connection goes (one with replies due waits) */
    free(q->txs);
    q->txs = NULL;
    q->ntxs = 0;
    q->tx = NULL;
    fbw_client_close(q->cl);
    q->cl = NULL;
    q->c = NULL;
}

const char *fbw_sqlt_name(fbw_sqlt *q, const char *prefix, char *buf, size_t size)
{
    snprintf(buf, size, "%s_%ld_%u", prefix, (long)getpid() % 1000000, ++q->serial);
    return buf;
}

const char *fbw_sqlt_str(fbw_buf *b)
{
    cr_assert_eq(fbw_buf_reserve(b, 1), FBW_OK);
    b->data[b->len] = 0;
    return (const char *)b->data + b->start;
}

/* ---- execute immediate ---- */

static int ddl_once(fbw_sqlt *q, const char *sql, fbw_err *err)
{
    fbw_tx *t;
    fbw_sqlt_tx_start_ok(q, &t, NULL);
    fbw_exec_result res;
    cr_assert_eq(fbw_exec_immediate(q->c, t, sql, strlen(sql), &res), FBW_OK);
    fbw_sqlt_wait_ok(q);
    cr_assert(res.done);
    *err = res.err;
    if (res.err.code == FBW_OK) {
        /* DDL does its work at commit (deferred work), so the commit can fail too */
        cr_assert_eq(fbw_tx_commit(t), FBW_OK, "commit: %s", fbw_tx_error(t)->msg);
        fbw_sqlt_wait_ok(q);
        if (fbw_tx_state(t) == FBW_TX_ENDED)
            return FBW_OK;
        *err = *fbw_tx_error(t);
        fbw_err_prefix(err, "commit");
    }
    fbw_tx_rollback(t);
    fbw_sqlt_wait_ok(q);
    return err->code;
}

/* FB3 now and then fails the commit of a CREATE TABLE with an update conflict against another
 * transaction ("deadlock / update conflicts with concurrent update") although nothing else
 * changes the catalogue: retried a few times, like an application would. */
int fbw_sqlt_ddl(fbw_sqlt *q, const char *sql, fbw_err *err)
{
    int rc = FBW_OK;
    for (int attempt = 0; attempt < 5; attempt++) {
        rc = ddl_once(q, sql, err);
        if (fbw_err_classify(err) != FBW_EC_UPDATE_CONFLICT)
            break;
        struct timespec pause = {0, 50000000};
        nanosleep(&pause, NULL);
    }
    return rc;
}

void fbw_sqlt_ddl_ok(fbw_sqlt *q, const char *sql)
{
    fbw_err err;
    int rc = fbw_sqlt_ddl(q, sql, &err);
    cr_assert_eq(rc, FBW_OK, "%s: %s: %s", fbw_server_name(q->id), sql, err.msg);
}

/* ---- statements ---- */

fbw_stmt *fbw_sqlt_prepare(fbw_sqlt *q, fbw_tx *t, const char *sql)
{
    fbw_err err;
    fbw_stmt *s;
    cr_assert_eq(fbw_stmt_new(q->c, &s, &err), FBW_OK);
    int rc = fbw_client_prepare(q->cl, s, t, sql, strlen(sql));
    cr_assert_eq(rc, FBW_OK, "%s: prepare: %s: %s", fbw_server_name(q->id), fbw_rc_name(rc),
                 fbw_client_error(q->cl)->msg);
    return s;
}

fbw_stmt *fbw_sqlt_prepare_ok(fbw_sqlt *q, fbw_tx *t, const char *sql)
{
    fbw_stmt *s = fbw_sqlt_prepare(q, t, sql);
    cr_assert(fbw_stmt_prepared(s), "%s: prepare \"%s\": %s", fbw_server_name(q->id), sql,
              fbw_stmt_error(s)->msg);
    return s;
}

int fbw_sqlt_run(fbw_sqlt *q, fbw_stmt *s, fbw_tx *t, const fbw_value *params, fbw_err *err)
{
    int rc = fbw_client_execute(q->cl, s, t, params, FBW_EXEC_COUNT);
    while (rc == FBW_OK && fbw_stmt_error(s)->code == FBW_OK && !fbw_stmt_eof(s))
        rc = fbw_client_fetch(q->cl, s);
    cr_assert(rc == FBW_OK || !fbw_is_fatal(rc), "%s: run: %s: %s", fbw_server_name(q->id),
              fbw_rc_name(rc), fbw_client_error(q->cl)->msg);
    if (rc == FBW_OK && fbw_stmt_error(s)->code != FBW_OK)
        rc = fbw_stmt_error(s)->code;
    if (err) {
        if (rc == FBW_OK)
            fbw_err_clear(err);
        else if (fbw_stmt_error(s)->code != FBW_OK)
            *err = *fbw_stmt_error(s);
        else
            fbw_err_set(err, rc, "%s", fbw_client_error(q->cl)->msg);
    }
    return rc;
}

void fbw_sqlt_row_text(const fbw_stmt *s, size_t i, const fbw_tznames *tz, fbw_buf *out)
{
    const fbw_msgfmt *f = fbw_stmt_output(s);
    fbw_value *v = calloc(f->n ? f->n : 1, sizeof *v);
    fbw_err err;
    cr_assert_not_null(v);
    int rc = fbw_stmt_row(s, i, v, &err);
    cr_assert_eq(rc, FBW_OK, "row %zu: %s", i, err.msg);
    for (uint16_t k = 0; k < f->n; k++) {
        if (k)
            fbw_buf_append(out, "|", 1);
        if (v[k].is_null)
            fbw_buf_append(out, "NULL", 4);
        else
            cr_assert_eq(fbw_value_to_text(&v[k], &f->cols[k], tz, out, &err), FBW_OK,
                         "row %zu col %u: %s", i, k, err.msg);
    }
    fbw_buf_append(out, "\n", 1);
    free(v);
}

int fbw_sqlt_exec(fbw_sqlt *q, fbw_tx *t, const char *sql, fbw_buf *out, fbw_err *err)
{
    fbw_stmt *s = fbw_sqlt_prepare(q, t, sql);
    int rc;
    if (!fbw_stmt_prepared(s)) {
        rc = fbw_stmt_error(s)->code ? fbw_stmt_error(s)->code : FBW_E_USAGE;
        if (err)
            *err = *fbw_stmt_error(s);
    } else {
        rc = fbw_sqlt_run(q, s, t, NULL, err);
        for (size_t i = 0; out && rc == FBW_OK && i < fbw_stmt_row_count(s); i++)
            fbw_sqlt_row_text(s, i, NULL, out);
    }
    fbw_stmt_free(s);
    return rc;
}

void fbw_sqlt_exec_ok(fbw_sqlt *q, fbw_tx *t, const char *sql, fbw_buf *out)
{
    fbw_err err;
    int rc = fbw_sqlt_exec(q, t, sql, out, &err);
    cr_assert_eq(rc, FBW_OK, "%s: \"%s\": %s", fbw_server_name(q->id), sql, err.msg);
}

int64_t fbw_sqlt_int_ok(fbw_sqlt *q, fbw_tx *t, const char *sql)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_sqlt_exec_ok(q, t, sql, &b);
    const char *txt = fbw_sqlt_str(&b);
    char *end = NULL;
    long long v = strtoll(txt, &end, 10);
    cr_assert(end != txt && strcmp(end, "\n") == 0, "\"%s\" gave \"%s\", not one integer", sql, txt);
    fbw_buf_free(&b);
    return v;
}

/* ---- time zones ---- */

void fbw_sqlt_zones_load_ok(fbw_sqlt *q, fbw_sqlt_zones *z)
{
    z->n = 65536;
    z->name = calloc(z->n, sizeof *z->name);
    cr_assert_not_null(z->name);
    fbw_stmt *s = fbw_sqlt_prepare_ok(
        q, q->tx, "select rdb$time_zone_id, trim(rdb$time_zone_name) from rdb$time_zones");
    fbw_err err;
    cr_assert_eq(fbw_sqlt_run(q, s, q->tx, NULL, &err), FBW_OK, "time zones: %s", err.msg);
    cr_assert_gt(fbw_stmt_row_count(s), 100, "RDB$TIME_ZONES has %zu rows", fbw_stmt_row_count(s));
    fbw_value v[2];
    for (size_t i = 0; i < fbw_stmt_row_count(s); i++) {
        cr_assert_eq(fbw_stmt_row(s, i, v, &err), FBW_OK, "%s", err.msg);
        uint16_t id = (uint16_t)v[0].u.i64;
        z->name[id] = strndup((const char *)v[1].u.bytes.p, v[1].u.bytes.n);
    }
    fbw_stmt_free(s);
}

static const char *zone_name(void *ctx, uint16_t id)
{
    const fbw_sqlt_zones *z = ctx;
    return id < z->n ? z->name[id] : NULL;
}

fbw_tznames fbw_sqlt_zones_names(fbw_sqlt_zones *z)
{
    fbw_tznames t = {zone_name, z};
    return t;
}

uint16_t fbw_sqlt_zone_id(const fbw_sqlt_zones *z, const char *name)
{
    for (size_t i = 0; i < z->n; i++)
        if (z->name[i] && strcmp(z->name[i], name) == 0)
            return (uint16_t)i;
    return 0;
}

void fbw_sqlt_zones_free(fbw_sqlt_zones *z)
{
    for (size_t i = 0; z->name && i < z->n; i++)
        free(z->name[i]);
    free(z->name);
    z->name = NULL;
    z->n = 0;
}
