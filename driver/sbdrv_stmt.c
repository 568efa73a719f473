/* SPDX-License-Identifier: MIT */
/* sbdrv_stmt.c - the drivers' statement ops (see sbdrv_int.h): a backend outcome turned into
 * sysbench's result and error, the query op through the dialect, prepared (or emulated)
 * statements and their parameters, buffered result rows. */
#include "sbdrv_int.h"

#include "classify.h"
#include "status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- outcome of a statement */

static void clear_error(sb_conn *con)
{
    con->sql_errno = 0;
    con->sql_state = NULL;
    con->sql_errmsg = NULL;
}

/* --P-ignore-errors: a class of the library's model (fbw_err_in_class: one of the chain's codes
 * is of it), a gds code anywhere in the chain, or the SQLSTATE. */
static int is_ignorable(const sbdrv_driver *d, const fbw_err *e)
{
    if (d->classes & CLASS_ALL)
        return 1;
    for (int c = 0; c < FBW_EC_COUNT; c++)
        if ((d->ignore_classes >> c & 1u) && fbw_err_in_class(e, (fbw_errclass)c))
            return 1;
    for (int r = 0; r < d->nignore; r++) {
        const ignore_rule *ir = &d->ignore[r];
        if (ir->gds ? fbw_err_has_gds(e, ir->gds) : strcmp(ir->sqlstate, e->sqlstate) == 0)
            return 1;
    }
    return 0;
}

static void debug_sql(const sbdrv_driver *d, const char *what, const char *sql, size_t len)
{
    if (d->debug)
        sbdrv_host.log_text(SBDRV_SB_LOG_NOTICE, "%s: %s: %.*s", d->prefix, what,
                      (int)(len > 2000 ? 2000 : len), sql);
}

/* What a lost attachment means for the statement's transaction, as the end of the fatal message.
 * The fbwire backend knows whether a request that may commit was unanswered; fbclient does not
 * say, so for it a write outside BEGIN ... COMMIT (autocommit: it commits with its own reply) is
 * taken as one. A COMMIT's own error says so already. */
static const char *lost_outcome(const sbdrv_conn *sc, const char *sql, size_t len, int code)
{
    const sbdrv_backend *be = sc->d->be;
    int unknown = be->outcome_unknown ? be->outcome_unknown(sc->bc) : -1;
    /* A wait that ended without its reply (EOF, I/O, timeout) names the unanswered COMMIT in its
     * error already (client.c give_up); a connection failed otherwise (a protocol error) does not. */
    int named = code == FBW_E_EOF || code == FBW_E_IO || code == FBW_E_TIMEOUT;
    if (unknown > 0)
        return named ? "" : "; a request that may commit was unanswered: its outcome is unknown";
    if (unknown == 0)
        return "";
    sbdrv_sql_class cls = sql ? sbdrv_classify(sql, len) : SBDRV_CLS_OTHER;
    int autocommit_write = !sc->in_txn && (cls == SBDRV_CLS_UPDATE_INDEX || cls == SBDRV_CLS_UPDATE_NON_INDEX ||
                                           cls == SBDRV_CLS_DELETE || cls == SBDRV_CLS_INSERT ||
                                           cls == SBDRV_CLS_BULK_INSERT || cls == SBDRV_CLS_DDL);
    return autocommit_write ? "; the statement ran in autocommit: whether it was committed is unknown" : "";
}

/* Translate a backend outcome into sysbench's result fields and error code. */
static sb_db_error finish(sb_conn *con, sbdrv_conn *sc, int rc, const char *sql, size_t len)
{
    sb_result *rs = &con->rs;
    sbdrv_driver *d = sc->d;
    if (rc == FBW_OK) {
        const sbdrv_be_result *r = &sc->res;
        if (r->deferred) {
            /* Pipelined: the reply is still to come. sysbench fetches rows only when nrows > 0,
             * so a result set says UINT32_MAX (unknown) until its first fetch_row, which syncs
             * and sets the true count; DML counts as a write (affected rows not known yet). */
            rs->counter = r->has_set          ? SB_CNT_READ
                          : r->deferred_write ? SB_CNT_WRITE
                                              : SB_CNT_OTHER;
            rs->nrows = r->has_set ? UINT32_MAX : 0;
            rs->nfields = r->has_set ? r->ncols : 0;
            rs->ptr = r->has_set ? sc : NULL;
            rs->row.ptr = NULL;
        } else if (r->has_set) {
            rs->counter = SB_CNT_READ;
            rs->nrows = r->nrows;
            rs->nfields = r->ncols;
            rs->ptr = sc;
            rs->row.ptr = NULL;
        } else {
            rs->nrows = r->affected > UINT32_MAX ? UINT32_MAX : (uint32_t)r->affected;
            rs->counter = r->affected > 0 ? SB_CNT_WRITE : SB_CNT_OTHER;
        }
        if (d->debug)
            sbdrv_host.log_text(SBDRV_SB_LOG_NOTICE, "%s: -> %s, %u rows", d->prefix,
                          r->has_set ? "rows" : "done", rs->nrows);
        return SB_DB_ERROR_NONE;
    }
    fbw_err *e = &sc->err;
    snprintf(sc->state, sizeof sc->state, "%s", e->sqlstate[0] ? e->sqlstate : "HY000");
    con->sql_errno = e->ngds > 0 ? (int)e->gds[0] : rc;
    con->sql_state = sc->state;
    con->sql_errmsg = e->msg;
    rs->counter = SB_CNT_ERROR;
    rs->nrows = 0;
    if (sbdrv_be_conn_lost(rc, e)) {
        if ((d->classes & CLASS_NETWORK) && sbdrv_reattach(sc) == 0) {
            rs->counter = SB_CNT_RECONNECT;
            return SB_DB_ERROR_IGNORABLE;
        }
        sbdrv_host.log_text(SBDRV_SB_LOG_FATAL, "%s: connection lost during '%.*s': %s%s",
                                d->prefix, (int)(len > 200 ? 200 : len), sql ? sql : "", e->msg,
                                lost_outcome(sc, sql, len, e->code));
        return SB_DB_ERROR_FATAL;
    }
    if (is_ignorable(d, e)) {
        if (d->debug)
            sbdrv_host.log_text(SBDRV_SB_LOG_NOTICE, "%s: ignoring error %d: %s", d->prefix,
                          con->sql_errno, e->msg);
        fbw_err keep = *e;
        (void)d->be->rollback(sc->bc, e); /* the event restarts from its BEGIN */
        sc->in_txn = 0;
        *e = keep;
        return SB_DB_ERROR_IGNORABLE;
    }
    sbdrv_host.log_text(SBDRV_SB_LOG_FATAL, "%s: error %d (SQLSTATE %s) for query '%.*s': %s",
                            d->prefix, con->sql_errno, sc->state, (int)(len > 500 ? 500 : len),
                            sql ? sql : "", e->msg);
    return SB_DB_ERROR_FATAL;
}

/* BEGIN, COMMIT, ROLLBACK: transaction calls of the backend. */
static int txn_control(sbdrv_conn *sc, sbdrv_sql_kind kind)
{
    const sbdrv_backend *be = sc->d->be;
    int rc;
    if (kind == SBDRV_SQL_BEGIN) {
        rc = be->begin(sc->bc, &sc->err);
        sc->in_txn = rc == FBW_OK;
        return rc;
    }
    rc = kind == SBDRV_SQL_COMMIT ? be->commit(sc->bc, &sc->err) : be->rollback(sc->bc, &sc->err);
    sc->in_txn = 0; /* a failed commit is rolled back by the backend */
    return rc;
}

/* Concurrent DDL (parallel `prepare` of several tables) collides on system tables; such a
 * statement run in autocommit left nothing behind, so it is simply tried again. */
#define DDL_RETRIES 20

static int is_conflict(const fbw_err *e)
{
    return fbw_err_in_class(e, FBW_EC_DEADLOCK) || fbw_err_in_class(e, FBW_EC_UPDATE_CONFLICT) ||
           fbw_err_in_class(e, FBW_EC_LOCK_CONFLICT) || fbw_err_in_class(e, FBW_EC_LOCK_TIMEOUT);
}

static int exec_ddl_aware(sbdrv_conn *sc, const sbdrv_sql_plan *plan, const char *sql, size_t len)
{
    int rc;
    for (int attempt = 0;; attempt++) {
        rc = sc->d->be->exec(sc->bc, sql, len, &sc->res, &sc->err);
        if (rc != FBW_E_SERVER || !plan->ddl || sc->in_txn || attempt >= DDL_RETRIES ||
            !is_conflict(&sc->err))
            return rc;
        if (sc->d->debug)
            sbdrv_host.log_text(SBDRV_SB_LOG_NOTICE, "%s: retrying DDL after: %s", sc->d->prefix,
                          sc->err.msg);
        struct timespec pause = {0, (long)(attempt + 1) * 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

/* Run SQL text through the dialect and the backend (the query op and emulated statements). */
static int run_text(sbdrv_conn *sc, const char *sql, size_t len)
{
    const sbdrv_backend *be = sc->d->be;
    sbdrv_sql_plan plan;
    debug_sql(sc->d, "query", sql, len);
    sbdrv_be_result_reset(&sc->res);
    int rc = sbdrv_dialect_plan(sql, len, &plan, &sc->err);
    if (rc != FBW_OK)
        return rc;
    switch (plan.kind) {
    case SBDRV_SQL_BEGIN:
    case SBDRV_SQL_COMMIT:
    case SBDRV_SQL_ROLLBACK:
        rc = txn_control(sc, plan.kind);
        break;
    case SBDRV_SQL_BULK_INSERT: {
        sbdrv_bulk_insert b;
        rc = sbdrv_dialect_parse_insert(sql, len, &b, &sc->err);
        if (rc == FBW_OK) {
            debug_sql(sc->d, "bulk insert", b.single, b.single_len);
            rc = be->bulk_insert(sc->bc, &b, &sc->res, &sc->err);
            sbdrv_dialect_bulk_free(&b);
        }
        break;
    }
    case SBDRV_SQL_REWRITTEN:
        debug_sql(sc->d, "rewritten", plan.text, plan.len);
        rc = exec_ddl_aware(sc, &plan, plan.text, plan.len);
        break;
    default:
        rc = exec_ddl_aware(sc, &plan, sql, len);
        break;
    }
    sbdrv_dialect_plan_free(&plan);
    return rc;
}

sb_db_error sbdrv_query(sb_conn *con, const char *query, size_t len, sb_result *rs)
{
    (void)rs; /* always &con->rs */
    sbdrv_conn *sc = conn_of(con);
    clear_error(con);
    sbdrv_sbrep_begin(sc->rep);
    sb_db_error e = finish(con, sc, run_text(sc, query, len), query, len);
    sc->last_cls = sbdrv_classify(query, len);
    sbdrv_sbrep_charge(sc->rep, sc->last_cls); /* report: this statement's traffic */
    return e;
}

/* ---------------------------------------------------------------- statements */

static int prepare_backend(sbdrv_conn *sc, sbdrv_stmt *ss)
{
    if (ss->emulated || ss->kind == SBDRV_SQL_BEGIN || ss->kind == SBDRV_SQL_COMMIT ||
        ss->kind == SBDRV_SQL_ROLLBACK || ss->bs != NULL)
        return FBW_OK;
    debug_sql(sc->d, "prepare", ss->text, ss->text_len);
    return sc->d->be->prepare(sc->bc, ss->text, ss->text_len, &ss->bs, &sc->err);
}

int sbdrv_prepare(sb_stmt *stmt, const char *query, size_t len)
{
    sb_conn *con = stmt->connection;
    sbdrv_conn *sc = conn_of(con);
    clear_error(con);
    sbdrv_sbrep_begin(sc->rep);
    sbdrv_stmt *ss = calloc(1, sizeof *ss);
    sbdrv_sql_plan plan = {SBDRV_SQL_PLAIN, 0, NULL, 0};
    int rc = ss ? FBW_OK : fbw_err_set(&sc->err, FBW_E_NOMEM, "out of memory");
    if (rc == FBW_OK && (ss->sql = malloc(len + 1)) == NULL)
        rc = fbw_err_set(&sc->err, FBW_E_NOMEM, "out of memory");
    if (rc == FBW_OK) {
        memcpy(ss->sql, query, len);
        ss->sql[len] = '\0';
        ss->sql_len = len;
        rc = sbdrv_dialect_plan(query, len, &plan, &sc->err);
    }
    if (rc == FBW_OK) {
        ss->kind = plan.kind;
        ss->text = plan.text ? plan.text : ss->sql;
        ss->text_len = plan.text ? plan.len : len;
        ss->emulated = sc->d->ps_disable || plan.kind == SBDRV_SQL_BULK_INSERT;
        stmt->emulated = (char)ss->emulated;
        ss->cls = sbdrv_classify(query, len);
        rc = prepare_backend(sc, ss);
        sbdrv_sbrep_charge(sc->rep, SBDRV_CLS_PREPARE);
    }
    if (rc != FBW_OK) {
        if (ss)
            sbdrv_stmt_release(sc, ss);
        else
            sbdrv_dialect_plan_free(&plan);
        (void)finish(con, sc, rc, query, len);
        return 1;
    }
    ss->next = sc->stmts;
    sc->stmts = ss;
    stmt->ptr = ss;
    return 0;
}

int sbdrv_bind_param(sb_stmt *stmt, sb_bind *params, size_t n)
{
    sbdrv_stmt *ss = stmt->ptr;
    sbdrv_conn *sc = conn_of(stmt->connection);
    if (ss->bs && sc->d->be->param_count(ss->bs) != n) {
        sbdrv_host.log_text(SBDRV_SB_LOG_FATAL,
                                "%s: statement takes %u parameters, %zu bound: %s", sc->d->prefix,
                                sc->d->be->param_count(ss->bs), n, ss->sql);
        return 1;
    }
    sb_bind *copy = n ? malloc(n * sizeof *copy) : NULL;
    sbdrv_val *vals = n ? calloc(n, sizeof *vals) : NULL;
    char(*scratch)[32] = n ? calloc(n, sizeof *scratch) : NULL;
    if (n && (copy == NULL || vals == NULL || scratch == NULL)) {
        free(copy);
        free(vals);
        free(scratch);
        return 1;
    }
    if (n)
        memcpy(copy, params, n * sizeof *copy);
    free(stmt->bound_param); /* sysbench frees only the last one, at close */
    stmt->bound_param = copy;
    stmt->bound_param_len = (unsigned)n;
    free(ss->vals);
    free(ss->scratch);
    ss->vals = vals;
    ss->scratch = scratch;
    ss->nvals = n;
    return 0;
}

/* Read the current bound values (sysbench rewrites the buffers, not the binds). */
static void load_params(sb_stmt *stmt, sbdrv_stmt *ss)
{
    for (size_t i = 0; i < ss->nvals; i++) {
        const sb_bind *b = &stmt->bound_param[i];
        sbdrv_val *v = &ss->vals[i];
        memset(v, 0, sizeof *v);
        if ((b->is_null && *b->is_null) || b->buffer == NULL) {
            v->type = SBDRV_VAL_NULL;
            continue;
        }
        v->type = SBDRV_VAL_INT64;
        switch (b->type) {
        case SB_TYPE_TINYINT: v->i = *(const int8_t *)b->buffer; break;
        case SB_TYPE_SMALLINT: v->i = *(const int16_t *)b->buffer; break;
        case SB_TYPE_INT: v->i = *(const int32_t *)b->buffer; break;
        case SB_TYPE_BIGINT: v->i = *(const int64_t *)b->buffer; break;
        case SB_TYPE_FLOAT:
            v->type = SBDRV_VAL_DOUBLE;
            v->d = *(const float *)b->buffer;
            break;
        case SB_TYPE_DOUBLE:
            v->type = SBDRV_VAL_DOUBLE;
            v->d = *(const double *)b->buffer;
            break;
        case SB_TYPE_TIME: case SB_TYPE_DATE: case SB_TYPE_DATETIME: case SB_TYPE_TIMESTAMP: {
            const sb_time *t = b->buffer;
            int k = b->type == SB_TYPE_TIME
                        ? snprintf(ss->scratch[i], 32, "%02u:%02u:%02u", t->hour % 100u,
                                   t->minute % 100u, t->second % 100u)
                    : b->type == SB_TYPE_DATE
                        ? snprintf(ss->scratch[i], 32, "%04u-%02u-%02u", t->year % 10000u,
                                   t->month % 100u, t->day % 100u)
                        : snprintf(ss->scratch[i], 32, "%04u-%02u-%02u %02u:%02u:%02u",
                                   t->year % 10000u, t->month % 100u, t->day % 100u,
                                   t->hour % 100u, t->minute % 100u, t->second % 100u);
            v->type = SBDRV_VAL_TEXT;
            v->s = ss->scratch[i];
            v->len = (size_t)k;
            break;
        }
        default: { /* CHAR, VARCHAR: data_len counts; no NUL terminator when full */
            size_t len = b->data_len ? *b->data_len : strnlen(b->buffer, b->max_len);
            v->type = SBDRV_VAL_TEXT;
            v->s = b->buffer;
            v->len = len > b->max_len ? b->max_len : len;
            break;
        }
        }
    }
}

static int exec_emulated(sbdrv_conn *sc, sbdrv_stmt *ss)
{
    char *text;
    size_t len;
    int rc = sbdrv_dialect_inline(ss->sql, ss->sql_len, ss->vals, ss->nvals, &text, &len,
                                &sc->err);
    if (rc == FBW_OK) {
        rc = run_text(sc, text, len);
        free(text);
    }
    return rc;
}

static int exec_prepared(sbdrv_conn *sc, sbdrv_stmt *ss)
{
    const sbdrv_backend *be = sc->d->be;
    sbdrv_be_result_reset(&sc->res);
    debug_sql(sc->d, "execute", ss->text, ss->text_len);
    if (ss->kind == SBDRV_SQL_BEGIN || ss->kind == SBDRV_SQL_COMMIT || ss->kind == SBDRV_SQL_ROLLBACK)
        return txn_control(sc, ss->kind);
    int rc = prepare_backend(sc, ss); /* after a reconnect */
    if (rc == FBW_OK)
        rc = be->execute(ss->bs, ss->vals, ss->nvals, &sc->res, &sc->err);
    return rc;
}

sb_db_error sbdrv_execute(sb_stmt *stmt, sb_result *rs)
{
    (void)rs;
    sb_conn *con = stmt->connection;
    sbdrv_conn *sc = conn_of(con);
    sbdrv_stmt *ss = stmt->ptr;
    clear_error(con);
    sbdrv_sbrep_begin(sc->rep);
    if (ss->nvals && stmt->bound_param == NULL)
        ss->nvals = 0;
    load_params(stmt, ss);
    int rc = ss->emulated ? exec_emulated(sc, ss) : exec_prepared(sc, ss);
    sb_db_error e = finish(con, sc, rc, ss->sql, ss->sql_len);
    sc->last_cls = ss->cls;
    sbdrv_sbrep_charge(sc->rep, ss->cls); /* report: this statement's traffic */
    return e;
}

int sbdrv_close(sb_stmt *stmt)
{
    sbdrv_stmt *ss = stmt->ptr;
    sbdrv_conn *sc = conn_of(stmt->connection);
    if (ss == NULL || sc == NULL)
        return 0;
    for (sbdrv_stmt **pp = &sc->stmts; *pp; pp = &(*pp)->next) {
        if (*pp == ss) {
            *pp = ss->next;
            break;
        }
    }
    sbdrv_sbrep_begin(sc->rep);
    sbdrv_stmt_release(sc, ss);
    sbdrv_sbrep_charge(sc->rep, SBDRV_CLS_SESSION);
    stmt->ptr = NULL;
    return 0;
}

int sbdrv_bind_result(sb_stmt *stmt, sb_bind *results, size_t n)
{
    (void)stmt;
    (void)results;
    (void)n;
    sbdrv_host.log_text(SBDRV_SB_LOG_ALERT, "fbwire: bind_result (legacy API) is not supported");
    return 1;
}

/* ---------------------------------------------------------------- results */

int sbdrv_fetch(sb_result *rs)
{
    (void)rs;
    return 1;
}

int sbdrv_fetch_row(sb_result *rs, sb_row *row)
{
    sbdrv_conn *sc = rs->ptr;
    if (sc == NULL)
        return 1;
    if (sc->res.deferred && sc->d->be->fetch_rows) {
        /* A pipelined result read by the script: a sync point. A failure (of this or any
         * queued statement) ends the rows here and is reported by the next statement. */
        sbdrv_sbrep_begin(sc->rep);
        fbw_err e;
        fbw_err_clear(&e);
        int rc = sc->d->be->fetch_rows(sc->bc, &sc->res, &e);
        sbdrv_sbrep_charge_more(sc->rep, sc->last_cls);
        if (rc != FBW_OK) {
            if (sc->d->debug)
                sbdrv_host.log_text(SBDRV_SB_LOG_NOTICE, "%s: pipelined result not read: %s",
                                        sc->d->prefix, e.msg);
            sc->res.nrows = 0;
            return 1;
        }
        rs->nrows = sc->res.nrows;
    }
    const sbdrv_be_result *r = &sc->res;
    uintptr_t idx = (uintptr_t)row->ptr;
    if (idx >= r->nrows)
        return 1;
    for (uint32_t c = 0; c < r->ncols; c++) {
        size_t cell = (size_t)idx * r->ncols + c;
        row->values[c].ptr = sbdrv_be_cell_ptr(r, cell);
        row->values[c].len = r->cells[cell].len;
    }
    row->ptr = (void *)(idx + 1);
    return 0;
}

int sbdrv_free_results(sb_result *rs)
{
    rs->ptr = NULL;
    rs->row.ptr = NULL;
    return 0;
}
