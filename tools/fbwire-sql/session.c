/* SPDX-License-Identifier: MIT */
/* session.c - the statement loop of fbwire-sql (session.h).
 *
 * Statements are prepared inside a live transaction: Firebird 3 refuses a prepare without one
 * (isc_bad_trans_handle, "expecting explicit transaction start"), and in one long transaction
 * (--no-autocommit) the prepare must see what that transaction did. fbw_stmt_prepare puts only an
 * answered transaction handle into op_prepare_statement, so the transaction must be started and
 * answered before the prepare. In autocommit mode the next statement's transaction is therefore
 * started in the same write as the previous one's commit. Round trips per statement then are:
 * prepare (1), execute with the first fetch and the row count (1), more fetches when the rows do
 * not fit one batch, the blobs of a batch all in one write (1), commit + next start (1). The same
 * text run again right after itself is not prepared again. The transaction started for a statement
 * that never comes is rolled back in the write that detaches (sqltool_session_close). */
#include "session.h"

#include "blob.h"
#include "format.h"

#include <stdlib.h>
#include <string.h>

enum { PH_BEGIN, PH_PREPARE, PH_EXECUTE, PH_FETCH, PH_BLOB, PH_TZ, PH_COMMIT, PH_N };
static const char *const phase_names[PH_N] = {"begin", "prepare", "execute", "fetch",
                                              "blob",  "tz",      "commit"};

#define TZ_NAME_MAX 63

typedef struct tzname {
    uint16_t id;
    char name[TZ_NAME_MAX + 1];
} tzname;

/* A statement, its transaction and the text to prepare. */
typedef struct job {
    fbw_stmt *st;
    fbw_tx *tx;
    const fbw_tx_opts *topts;
    const char *sql;
    size_t len;
    int started; /* this job queued the transaction start already */
} job;

struct sqltool_session {
    fbw_client *cl;
    fbw_conn *conn;
    sqltool_session_opts o;
    FILE *out, *msg;
    sqltool_fmt *fmt;
    fbw_tx *txs[2];  /* autocommit: the next transaction starts while the last one commits */
    int cur;         /* txs[cur] is the session's transaction */
    int explicit_tx; /* autocommit mode: a SET TRANSACTION typed as SQL is in force */
    fbw_stmt *stmt;
    fbw_buf last_sql; /* text of the prepared statement, when it may run again unprepared */
    int reusable;
    unsigned nstmt, nfailed, line;
    int failed; /* the current statement failed */
    int quiet;  /* count the rows of the statement instead of printing them */
    uint64_t rows;
    int scroll;      /* SET SCROLL ON: SELECTs open scrollable cursors */
    int cursor_open; /* the last SELECT's scrollable cursor is open for FETCH and SHOW COUNT */

    fbw_stats start, diff, total; /* accounting (big: kept off the stack) */
    uint64_t mark_rt, phase_rt[PH_N], total_rt[PH_N];
    int phase;

    fbw_value *vals; /* one row, output columns */
    sqltool_fmt_cell *cells;
    size_t *offs;
    size_t cols_cap;
    fbw_buf text;   /* the cells of one row */
    fbw_blobset *blobs; /* the blobs of one batch (created on first use) */

    int tz_state; /* 0 not loaded, 1 loaded, -1 unavailable */
    tzname *tz;
    size_t ntz;
    fbw_tznames tzcb;
    fbw_err err;
};

#define TX(s) ((s)->txs[(s)->cur])

/* ---- accounting ---- */

/* Charge the round trips since the last mark to the current phase and switch to `ph`; returns the
 * phase that was current. */
static int phase(sqltool_session *s, int ph)
{
    uint64_t now = fbw_conn_stats(s->conn)->round_trips;
    int prev = s->phase;
    s->phase_rt[prev] += now - s->mark_rt;
    s->mark_rt = now;
    s->phase = ph;
    return prev;
}

static void stats_begin(sqltool_session *s)
{
    s->start = *fbw_conn_stats(s->conn);
    s->mark_rt = s->start.round_trips;
    memset(s->phase_rt, 0, sizeof s->phase_rt);
    s->phase = PH_PREPARE;
}

static void print_stats(sqltool_session *s, const fbw_stats *d, const uint64_t *ph)
{
    fprintf(s->msg, "round_trips=%llu", (unsigned long long)d->round_trips);
    for (int i = 0; ph && i < PH_N; i++)
        fprintf(s->msg, " %s=%llu", phase_names[i], (unsigned long long)ph[i]);
    fprintf(s->msg,
            " packets_sent=%llu packets_received=%llu bytes_sent=%llu bytes_received=%llu "
            "wait_ms=%.3f\n",
            (unsigned long long)d->packets_sent, (unsigned long long)d->packets_received,
            (unsigned long long)d->bytes_sent, (unsigned long long)d->bytes_received,
            (double)d->wait_ns / 1e6);
}

/* Close the accounting of one statement (label NULL) or of the end of the session (label). */
static void stats_end(sqltool_session *s, const char *label)
{
    phase(s, PH_PREPARE);
    fbw_stats_diff(&s->diff, fbw_conn_stats(s->conn), &s->start);
    fbw_stats_add(&s->total, &s->diff);
    for (int i = 0; i < PH_N; i++)
        s->total_rt[i] += s->phase_rt[i];
    if (!s->o.stats || s->quiet)
        return;
    if (label)
        fprintf(s->msg, "-- stats %s: ", label);
    else
        fprintf(s->msg, "-- stats #%u line %u: ", s->nstmt, s->line);
    print_stats(s, &s->diff, s->phase_rt);
    fflush(s->msg);
}

void sqltool_session_note_connect(sqltool_session *s)
{
    if (!s->o.stats)
        return;
    fprintf(s->msg, "-- stats connect: ");
    print_stats(s, fbw_conn_stats(s->conn), NULL);
}

/* ---- failures ---- */

static void report(sqltool_session *s, const fbw_err *e)
{
    const char *text = e->msg[0] ? e->msg : fbw_rc_name(e->code);
    /* Not "failed" when the connection broke: a COMMIT in flight may well have committed. */
    const char *how = fbw_is_fatal(e->code) ? "lost the connection" : "failed";
    if (s->line)
        fprintf(s->msg, "fbwire-sql: statement %u (line %u) %s: %s\n", s->nstmt, s->line, how,
                text);
    else
        fprintf(s->msg, "fbwire-sql: ending the transaction %s: %s\n", how, text);
    if (e->sqlstate[0])
        fprintf(s->msg, "SQLSTATE = %s\n", e->sqlstate);
    if (e->ngds > 0)
        fprintf(s->msg, "gds code = %u\n", e->gds[0]);
    if (e->ngds > 1) {
        fprintf(s->msg, "gds codes =");
        for (int i = 0; i < e->ngds; i++)
            fprintf(s->msg, "%s %u", i ? "," : "", e->gds[i]);
        fputc('\n', s->msg);
    }
    fflush(s->msg);
}

/* A failed statement: report e once and return its code (never FBW_OK). */
static int fail(sqltool_session *s, const fbw_err *e)
{
    s->failed = 1;
    report(s, e);
    return e->code < 0 ? e->code : FBW_E_USAGE;
}

static int fail_msg(sqltool_session *s, int code, const char *text)
{
    fbw_err_set(&s->err, code, "%s", text);
    return fail(s, &s->err);
}

/* After a wait: a fatal code means the connection is gone (report what the client says). */
static int after_wait(sqltool_session *s, int rc)
{
    if (!fbw_is_fatal(rc))
        return rc;
    const fbw_err *e = fbw_client_error(s->cl);
    if (e->code == FBW_OK) {
        fbw_err_set(&s->err, rc, "%s", fbw_rc_name(rc));
        e = &s->err;
    }
    fail(s, e);
    return rc;
}

unsigned sqltool_session_failures(const sqltool_session *s)
{
    return s->nfailed;
}

void sqltool_session_fail(sqltool_session *s, const fbw_err *e, unsigned line)
{
    s->nstmt++;
    s->line = line;
    fail(s, e);
    s->nfailed++;
}

/* ---- requests run to their answer (client.h) ---- */

static int tx_live(const fbw_tx *t) { return fbw_tx_live(t); }

/* Execute with the first fetch and the row count; when no transaction is live, its start is
 * queued first and rides in the same write. */
static int run_execute(fbw_client *cl, job *j)
{
    if (!j->started && !tx_live(j->tx)) {
        int rc = fbw_tx_start(j->tx, j->topts);
        if (rc)
            return rc;
        j->started = 1;
    }
    return fbw_client_execute(cl, j->st, j->tx, NULL, FBW_EXEC_COUNT);
}

/* ---- time zone names (value.h asks for them while formatting) ---- */

static int tz_cmp(const void *a, const void *b)
{
    const tzname *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int tz_store(sqltool_session *s, fbw_stmt *st, size_t *cap)
{
    fbw_value v[2];
    for (size_t i = 0; i < fbw_stmt_row_count(st); i++) {
        int rc = fbw_stmt_row(st, i, v, &s->err);
        if (rc)
            return rc;
        if (v[0].is_null || v[1].is_null || v[1].u.bytes.n > TZ_NAME_MAX || v[0].u.i64 < 0 ||
            v[0].u.i64 > 0xFFFF)
            continue; /* not a name value.h could use */
        if (s->ntz == *cap) {
            size_t ncap = *cap ? *cap * 2 : 1024;
            tzname *t = realloc(s->tz, ncap * sizeof *t);
            if (!t)
                return FBW_E_NOMEM;
            s->tz = t;
            *cap = ncap;
        }
        tzname *z = &s->tz[s->ntz++];
        z->id = (uint16_t)v[0].u.i64;
        memcpy(z->name, v[1].u.bytes.p, v[1].u.bytes.n);
        z->name[v[1].u.bytes.n] = 0;
    }
    fbw_stmt_clear_rows(st);
    return FBW_OK;
}

/* Load RDB$TIME_ZONES (FB4+) in the session's transaction when one is live, else in a read-only
 * one of its own. */
static int tz_load(sqltool_session *s)
{
    static const char sql[] =
        "SELECT RDB$TIME_ZONE_ID, TRIM(RDB$TIME_ZONE_NAME) FROM RDB$TIME_ZONES";
    fbw_tx *own = NULL;
    fbw_tx_opts ro;
    fbw_tx_opts_init(&ro);
    ro.read_only = 1;
    job j = {.topts = &ro, .sql = sql, .len = sizeof sql - 1};
    size_t cap = 0;
    int rc = fbw_stmt_new(s->conn, &j.st, &s->err);
    if (rc == FBW_OK && !tx_live(TX(s)) && (rc = fbw_tx_new(s->conn, &own, &s->err)) == FBW_OK &&
        (rc = fbw_tx_start(own, &ro)) == FBW_OK)
        rc = fbw_client_wait(s->cl); /* prepare needs an answered transaction (see the top) */
    j.tx = own ? own : TX(s);
    if (rc == FBW_OK && own && fbw_tx_state(own) == FBW_TX_FAILED) {
        s->err = *fbw_tx_error(own);
        rc = s->err.code;
    }
    if (rc == FBW_OK)
        rc = fbw_client_prepare(s->cl, j.st, j.tx, j.sql, j.len);
    if (rc == FBW_OK && fbw_stmt_prepared(j.st))
        rc = run_execute(s->cl, &j);
    while (rc == FBW_OK && fbw_stmt_error(j.st)->code == FBW_OK && fbw_stmt_prepared(j.st)) {
        rc = tz_store(s, j.st, &cap);
        if (rc || fbw_stmt_eof(j.st))
            break;
        rc = fbw_client_fetch(s->cl, j.st);
    }
    if (rc == FBW_OK && fbw_stmt_error(j.st)->code) {
        s->err = *fbw_stmt_error(j.st);
        rc = s->err.code;
    }
    fbw_stmt_free(j.st);
    if (own && tx_live(own) && !fbw_is_fatal(rc)) {
        int crc = fbw_client_commit(s->cl, own);
        rc = rc ? rc : crc;
    }
    fbw_tx_free(own);
    if (rc == FBW_OK)
        qsort(s->tz, s->ntz, sizeof *s->tz, tz_cmp);
    return rc;
}

static const char *tz_name(void *ctx, uint16_t id)
{
    sqltool_session *s = ctx;
    if (s->tz_state == 0) {
        int prev = phase(s, PH_TZ);
        int rc = tz_load(s);
        phase(s, prev);
        s->tz_state = rc == FBW_OK ? 1 : -1;
        if (rc)
            fprintf(s->msg, "fbwire-sql: time zone names unavailable, offsets shown instead: %s\n",
                    fbw_client_error(s->cl)->code ? fbw_client_error(s->cl)->msg : s->err.msg);
    }
    tzname key = {.id = id};
    const tzname *z = s->ntz ? bsearch(&key, s->tz, s->ntz, sizeof *s->tz, tz_cmp) : NULL;
    return z ? z->name : NULL;
}

/* ---- blobs: every blob of a batch is read in one write (blobset.h) ---- */

static void blobs_free(sqltool_session *s)
{
    if (s->blobs)
        fbw_blobset_reset(s->blobs); /* queues the closes; they ride along with the next request */
}

/* Open and read every non-NULL BLOB value of the buffered rows. */
static int blobs_read(sqltool_session *s)
{
    size_t added = 0;
    int rc = s->blobs ? FBW_OK : fbw_blobset_new(s->conn, 0, &s->blobs, &s->err);
    if (rc == FBW_OK)
        rc = fbw_blobset_add_rows(s->blobs, s->stmt, TX(s), 0, &added, &s->err);
    if (rc)
        return fail(s, &s->err);
    if (added == 0)
        return FBW_OK;
    int prev = phase(s, PH_BLOB);
    rc = fbw_client_read_blobs(s->cl, s->blobs);
    phase(s, prev);
    if (!fbw_is_fatal(rc) && fbw_blobset_error(s->blobs)->code)
        return fail(s, fbw_blobset_error(s->blobs));
    return after_wait(s, rc);
}

/* Text blobs (subtype 1) as they are, others as uppercase hex. */
static int blob_text(sqltool_session *s, size_t row, size_t col, const fbw_col *c)
{
    size_t n;
    const uint8_t *p = fbw_blobset_cell(s->blobs, row, col, &n);
    if (!p)
        return fbw_err_set(&s->err, FBW_E_BADVALUE, "blob of row %zu column %zu was not read", row + 1,
                           col + 1);
    if (c->subtype == 1)
        return fbw_buf_append(&s->text, p, n);
    static const char hex[] = "0123456789ABCDEF";
    int rc = fbw_buf_reserve(&s->text, 2 * n);
    if (rc)
        return rc;
    uint8_t *o = fbw_buf_tail(&s->text);
    for (size_t i = 0; i < n; i++) {
        o[2 * i] = (uint8_t)hex[p[i] >> 4];
        o[2 * i + 1] = (uint8_t)hex[p[i] & 15];
    }
    fbw_buf_added(&s->text, 2 * n);
    return FBW_OK;
}

/* ---- rows ---- */

static int cols_reserve(sqltool_session *s, size_t n)
{
    if (n <= s->cols_cap)
        return FBW_OK;
    free(s->vals);
    free(s->cells);
    free(s->offs);
    s->vals = calloc(n, sizeof *s->vals);
    s->cells = calloc(n, sizeof *s->cells);
    s->offs = calloc(n, sizeof *s->offs);
    s->cols_cap = s->vals && s->cells && s->offs ? n : 0;
    return s->cols_cap ? FBW_OK : FBW_E_NOMEM;
}

static int is_number(uint16_t t)
{
    return t == FBW_SQL_SHORT || t == FBW_SQL_LONG || t == FBW_SQL_INT64 || t == FBW_SQL_INT128 ||
           t == FBW_SQL_FLOAT || t == FBW_SQL_DOUBLE || t == FBW_SQL_D_FLOAT ||
           t == FBW_SQL_DEC16 || t == FBW_SQL_DEC34;
}

static int begin_set(sqltool_session *s, const fbw_msgfmt *f)
{
    const fbw_colname *names = fbw_stmt_output_names(s->stmt);
    unsigned char *right = calloc(f->n, 1);
    if (!right)
        return FBW_E_NOMEM;
    for (size_t j = 0; j < f->n; j++) {
        const char *name = names[j].alias[0] ? names[j].alias : names[j].field;
        s->cells[j] = (sqltool_fmt_cell){name, strlen(name), 0};
        right[j] = (unsigned char)is_number(f->cols[j].type);
    }
    int rc = sqltool_fmt_begin(s->fmt, f->n, s->cells, right);
    free(right);
    return rc;
}

/* A UTF-8 CHAR(n) arrives padded with spaces to 4n bytes, its longest form. Its value is n
 * characters: drop the spaces past the n-th code point of the text appended from `from` on. */
static void cut_char_padding(fbw_buf *b, size_t from, const fbw_col *c)
{
    if (c->type != FBW_SQL_TEXT || (c->charset != FBW_CS_UTF8 && c->charset != FBW_CS_DYNAMIC))
        return;
    size_t chars = c->length / 4, i = from, seen = 0;
    for (; i < b->len; i++) {
        if ((b->data[i] & 0xC0) != 0x80 && seen++ == chars)
            break;
    }
    for (size_t k = i; k < b->len; k++)
        if (b->data[k] != ' ')
            return; /* not padding after all: keep the text as it is */
    b->len = i;
}

/* Text of the decoded row s->vals into the cells. */
static int row_cells(sqltool_session *s, const fbw_msgfmt *f, size_t row)
{
    fbw_buf_reset(&s->text);
    int rc = FBW_OK;
    for (size_t j = 0; j < f->n && rc == FBW_OK; j++) {
        s->offs[j] = s->text.len;
        if (s->vals[j].is_null)
            continue;
        if (f->cols[j].type == FBW_SQL_BLOB)
            rc = blob_text(s, row, j, &f->cols[j]);
        else
            rc = fbw_value_to_text(&s->vals[j], &f->cols[j], &s->tzcb, &s->text, &s->err);
        if (rc == FBW_OK)
            cut_char_padding(&s->text, s->offs[j], &f->cols[j]);
    }
    for (size_t j = 0; j < f->n && rc == FBW_OK; j++) {
        size_t end = j + 1 < f->n ? s->offs[j + 1] : s->text.len;
        s->cells[j].p = s->text.data ? (const char *)s->text.data + s->offs[j] : "";
        s->cells[j].n = end - s->offs[j];
        s->cells[j].is_null = s->vals[j].is_null;
    }
    return rc;
}

static int print_batch(sqltool_session *s, const fbw_msgfmt *f)
{
    int rc = blobs_read(s);
    for (size_t i = 0; i < fbw_stmt_row_count(s->stmt) && rc == FBW_OK; i++) {
        rc = fbw_stmt_row(s->stmt, i, s->vals, &s->err);
        if (rc == FBW_OK)
            rc = row_cells(s, f, i);
        if (rc == FBW_E_BADVALUE || rc == FBW_E_PROTO)
            rc = fail(s, &s->err);
        else if (rc == FBW_OK)
            rc = sqltool_fmt_row(s->fmt, s->cells);
    }
    blobs_free(s);
    return rc;
}

static int print_rows(sqltool_session *s, job *j)
{
    const fbw_msgfmt *f = fbw_stmt_output(s->stmt);
    int cursor = fbw_stmt_has_cursor(s->stmt);
    if (f->n == 0 || (!cursor && fbw_stmt_row_count(s->stmt) == 0))
        return FBW_OK;
    int rc = cols_reserve(s, f->n);
    if (rc == FBW_OK && !s->quiet)
        rc = begin_set(s, f);
    if (rc)
        return rc;
    for (;;) {
        s->rows += fbw_stmt_row_count(s->stmt);
        if (!s->quiet)
            rc = print_batch(s, f);
        if (rc || !cursor || fbw_stmt_eof(s->stmt))
            break;
        fbw_stmt_clear_rows(s->stmt);
        phase(s, PH_FETCH);
        rc = after_wait(s, fbw_client_fetch(s->cl, j->st));
        if (rc == FBW_OK && fbw_stmt_error(s->stmt)->code)
            rc = fail(s, fbw_stmt_error(s->stmt));
        if (rc)
            break;
    }
    int erc = s->quiet ? FBW_OK : sqltool_fmt_end(s->fmt);
    return rc ? rc : erc;
}

/* ---- transactions ---- */

/* Start the session's transaction unless it is live, and wait for the answer. */
static int begin_tx(sqltool_session *s)
{
    if (tx_live(TX(s)))
        return FBW_OK;
    int prev = phase(s, PH_BEGIN);
    int rc = fbw_tx_start(TX(s), &s->o.tx);
    if (rc && !fbw_is_fatal(rc))
        rc = fail(s, fbw_tx_error(TX(s)));
    else
        rc = after_wait(s, rc ? rc : fbw_client_wait(s->cl));
    phase(s, prev);
    if (rc == FBW_OK && fbw_tx_state(TX(s)) == FBW_TX_FAILED)
        rc = fail(s, fbw_tx_error(TX(s)));
    return rc;
}

/* End the session's transaction if it is live (commit or roll back), and with `next` start the
 * following one in the same write. */
static int end_tx(sqltool_session *s, int commit, int next)
{
    fbw_tx *t = TX(s);
    int live = tx_live(t);
    if (!live && !next)
        return FBW_OK;
    phase(s, PH_COMMIT);
    int rc = live ? (commit ? fbw_tx_commit(t) : fbw_tx_rollback(t)) : FBW_OK;
    if (rc == FBW_OK && next) {
        s->cur ^= 1;
        rc = fbw_tx_start(TX(s), &s->o.tx); /* a refused start shows at the next statement */
    }
    int wrc = after_wait(s, fbw_client_wait(s->cl));
    if (fbw_is_fatal(wrc))
        return wrc;
    if (rc) /* not queued: the transaction that refused says why */
        return fail(s, fbw_tx_error(t)->code ? fbw_tx_error(t) : fbw_tx_error(TX(s)));
    s->explicit_tx = 0;
    if (!live || fbw_tx_error(t)->code == FBW_OK)
        return FBW_OK;
    rc = fail(s, fbw_tx_error(t));
    if (commit && tx_live(t)) { /* a refused commit leaves it alive: undo it */
        wrc = after_wait(s, fbw_client_rollback(s->cl, t));
        if (fbw_is_fatal(wrc))
            return wrc;
    }
    return rc;
}

/* SET TRANSACTION typed as SQL: end the live transaction (committing it, as isql does), then run
 * it with transaction handle 0 so the server starts the new one
 * (docs/protocol/statements.md §1.4). */
static int set_transaction(sqltool_session *s, const char *sql, size_t len)
{
    int rc = end_tx(s, 1, 0);
    if (rc)
        return rc;
    phase(s, PH_EXECUTE);
    fbw_exec_result res;
    rc = fbw_exec_immediate(s->conn, TX(s), sql, len, &res);
    rc = after_wait(s, rc ? rc : fbw_client_wait(s->cl));
    if (rc)
        return fbw_is_fatal(rc) ? rc : fail_msg(s, rc, "SET TRANSACTION could not be sent");
    if (res.err.code)
        return fail(s, &res.err);
    s->explicit_tx = s->o.autocommit;
    return FBW_OK;
}

/* ---- one statement ---- */

static int prepare(sqltool_session *s, job *j)
{
    if (s->reusable && s->last_sql.len == j->len && memcmp(s->last_sql.data, j->sql, j->len) == 0)
        return FBW_OK;
    s->reusable = 0;
    int rc = begin_tx(s);
    if (rc)
        return rc;
    phase(s, PH_PREPARE);
    rc = after_wait(s, fbw_client_prepare(s->cl, j->st, j->tx, j->sql, j->len));
    if (rc == FBW_OK && !fbw_stmt_prepared(s->stmt))
        rc = fail(s, fbw_stmt_error(s->stmt));
    else if (rc && !fbw_is_fatal(rc))
        rc = fail(s, fbw_stmt_error(s->stmt)->code ? fbw_stmt_error(s->stmt)
                                                   : fbw_client_error(s->cl));
    if (rc == FBW_OK && fbw_stmt_input(s->stmt)->n > 0) {
        fbw_err_set(&s->err, FBW_E_UNSUPPORTED,
                    "the statement has %u parameter(s) (?); fbwire-sql "
                    "runs statements without parameters",
                    (unsigned)fbw_stmt_input(s->stmt)->n);
        rc = fail(s, &s->err);
    }
    fbw_buf_reset(&s->last_sql);
    if (rc == FBW_OK && fbw_buf_append(&s->last_sql, j->sql, j->len))
        rc = FBW_E_NOMEM;
    return rc;
}

static int reusable_type(int t)
{
    return t == FBW_STMT_SELECT || t == FBW_STMT_SELECT_FOR_UPD || t == FBW_STMT_INSERT ||
           t == FBW_STMT_UPDATE || t == FBW_STMT_DELETE || t == FBW_STMT_EXEC_PROCEDURE;
}

static int execute(sqltool_session *s, job *j)
{
    int type = fbw_stmt_type(s->stmt);
    phase(s, PH_EXECUTE);
    int rc = after_wait(s, run_execute(s->cl, j));
    if (fbw_is_fatal(rc))
        return rc;
    if (fbw_tx_state(j->tx) == FBW_TX_FAILED && j->started)
        return fail(s, fbw_tx_error(j->tx));
    if (rc || fbw_stmt_error(s->stmt)->code)
        return fail(s, fbw_stmt_error(s->stmt)->code ? fbw_stmt_error(s->stmt)
                                                     : fbw_client_error(s->cl));
    rc = print_rows(s, j);
    if (rc == FBW_OK &&
        (type == FBW_STMT_INSERT || type == FBW_STMT_UPDATE || type == FBW_STMT_DELETE)) {
        unsigned long long n = (unsigned long long)fbw_stmt_affected(s->stmt);
        fprintf(s->out, "%llu row%s affected\n", n, n == 1 ? "" : "s");
    }
    if (rc == FBW_OK)
        s->reusable = reusable_type(type);
    s->cursor_open = rc == FBW_OK && s->scroll && !s->quiet && fbw_stmt_has_cursor(s->stmt);
    return rc;
}

static int run_statement(sqltool_session *s, const char *sql, size_t len)
{
    job j = {.st = s->stmt, .tx = TX(s), .topts = &s->o.tx, .sql = sql, .len = len};
    int rc = prepare(s, &j);
    if (rc)
        return rc;
    if (fbw_stmt_type(s->stmt) == FBW_STMT_START_TRANS) {
        s->reusable = 0;
        return set_transaction(s, sql, len);
    }
    rc = execute(s, &j);
    if (fbw_is_fatal(rc))
        return rc;
    if (!tx_live(TX(s)))
        s->explicit_tx = 0; /* COMMIT or ROLLBACK typed as SQL ended it */
    if (s->o.autocommit && !s->explicit_tx && !s->cursor_open) {
        int erc = end_tx(s, rc == FBW_OK, 1);
        rc = rc ? rc : erc;
    }
    fflush(s->out);
    return rc;
}

/* The next statement closes the scrollable cursor the last SELECT left open: in autocommit mode
 * by the commit that was held back for it (the server closes the cursor with its transaction; the
 * next transaction starts in the same write), else by DSQL_close, which rides along with the next
 * request. */
static int release_cursor(sqltool_session *s)
{
    if (!s->cursor_open)
        return FBW_OK;
    s->cursor_open = 0;
    if (s->o.autocommit && !s->explicit_tx)
        return end_tx(s, 1, 1);
    return fbw_stmt_close(s->stmt) == FBW_OK ? FBW_OK : fail(s, fbw_stmt_error(s->stmt));
}

/* Every statement and cursor command is counted and accounted between these two. */
static void statement_begin(sqltool_session *s, unsigned line)
{
    s->nstmt++;
    s->line = line;
    s->failed = 0;
    s->rows = 0;
    stats_begin(s);
}

static int statement_end(sqltool_session *s, int rc)
{
    stats_end(s, NULL);
    s->nfailed += s->failed;
    return rc;
}

int sqltool_session_exec(sqltool_session *s, const char *sql, size_t len, unsigned line)
{
    statement_begin(s, line);
    int rc = release_cursor(s);
    if (rc == FBW_OK)
        rc = run_statement(s, sql, len);
    return statement_end(s, rc);
}

int sqltool_session_count(sqltool_session *s, const char *sql, size_t len, unsigned line, uint64_t *rows)
{
    s->quiet = 1;
    int rc = sqltool_session_exec(s, sql, len, line);
    s->quiet = 0;
    s->nstmt--; /* a look-up for a command, not a statement of the user's */
    *rows = s->rows;
    return rc;
}

void sqltool_session_set_stats(sqltool_session *s, int on)
{
    s->o.stats = on;
}

/* ---- scrollable cursors ---- */

int sqltool_session_set_scroll(sqltool_session *s, int on, unsigned line)
{
    if (fbw_stmt_set_scrollable(s->stmt, on)) {
        sqltool_session_fail(s, fbw_stmt_error(s->stmt), line);
        return fbw_stmt_error(s->stmt)->code;
    }
    s->scroll = on;
    return FBW_OK;
}

/* A command on the open cursor, accounted as a statement of its own (one round trip each). */
static int cursor_begin(sqltool_session *s, unsigned line)
{
    statement_begin(s, line);
    phase(s, PH_FETCH);
    if (s->cursor_open)
        return FBW_OK;
    return fail_msg(s, FBW_E_USAGE,
                    s->scroll ? "no scrollable cursor is open: run a SELECT first (any other "
                                "statement closes it)"
                              : "no scrollable cursor is open: SET SCROLL ON, then run a SELECT");
}

static int cursor_end(sqltool_session *s, int rc)
{
    fflush(s->out);
    return statement_end(s, rc);
}

/* The reply to a cursor request: the library refuses before sending (protocol below 18, no
 * scrollable cursor) with the statement's error, else the wait's outcome. */
static int cursor_reply(sqltool_session *s, int rc)
{
    if (rc && !fbw_is_fatal(rc))
        return fail(s, fbw_stmt_error(s->stmt)->code ? fbw_stmt_error(s->stmt) : fbw_client_error(s->cl));
    return after_wait(s, rc);
}

/* Print the one buffered row as a result set of one row. */
static int print_one(sqltool_session *s)
{
    const fbw_msgfmt *f = fbw_stmt_output(s->stmt);
    int rc = cols_reserve(s, f->n);
    if (rc == FBW_OK)
        rc = begin_set(s, f);
    if (rc == FBW_OK)
        rc = print_batch(s, f);
    int erc = sqltool_fmt_end(s->fmt);
    return rc ? rc : erc;
}

/* Which end a move that found no row went past (the server only says there was none). */
static const char *no_row(int op, int32_t pos)
{
    if (op == FBW_FETCH_FIRST || op == FBW_FETCH_LAST)
        return "the result set is empty";
    if (op == FBW_FETCH_PRIOR || (op != FBW_FETCH_NEXT && pos < 0) ||
        (op == FBW_FETCH_ABSOLUTE && pos == 0))
        return "the cursor is before the first row";
    if (op == FBW_FETCH_RELATIVE && pos == 0)
        return "the cursor is before the first row or after the last";
    return "the cursor is after the last row";
}

int sqltool_session_fetch(sqltool_session *s, int op, int32_t pos, unsigned line)
{
    int rc = cursor_begin(s, line);
    if (rc)
        return cursor_end(s, rc);
    rc = cursor_reply(s, fbw_client_fetch_scroll(s->cl, s->stmt, op, pos));
    if (rc == FBW_OK && fbw_stmt_error(s->stmt)->code)
        rc = fail(s, fbw_stmt_error(s->stmt));
    if (rc == FBW_OK && fbw_stmt_row_count(s->stmt) == 0)
        fprintf(s->out, "no row: %s\n", no_row(op, pos));
    else if (rc == FBW_OK)
        rc = print_one(s);
    return cursor_end(s, rc);
}

int sqltool_session_count_cursor(sqltool_session *s, unsigned line)
{
    int rc = cursor_begin(s, line);
    if (rc)
        return cursor_end(s, rc);
    int64_t n = -1;
    rc = cursor_reply(s, fbw_client_count_cursor(s->cl, s->stmt, &n));
    if (rc == FBW_OK && n < 0)
        rc = fail(s, fbw_stmt_error(s->stmt));
    if (rc == FBW_OK)
        fprintf(s->out, "record count: %lld\n", (long long)n);
    return cursor_end(s, rc);
}

fbw_client *sqltool_session_client(sqltool_session *s)
{
    return s->cl;
}

const sqltool_session_opts *sqltool_session_options(const sqltool_session *s) { return &s->o; }

/* The transaction autocommit started for a statement that did not come: nothing ran in it. */
static int idle_tx(const sqltool_session *s)
{
    return s->o.autocommit && !s->explicit_tx && !s->cursor_open && tx_live(TX(s));
}

int sqltool_session_end(sqltool_session *s, int commit)
{
    int rc = FBW_OK;
    if (tx_live(TX(s)) && !idle_tx(s) && fbw_conn_get_state(s->conn) == FBW_CS_READY) {
        s->failed = 0;
        s->line = 0;
        stats_begin(s);
        rc = end_tx(s, commit, 0);
        stats_end(s, commit ? "end-commit" : "end-rollback");
        s->nfailed += s->failed;
    }
    if (s->o.stats) {
        fprintf(s->msg, "-- stats total: statements=%u failed=%u ", s->nstmt, s->nfailed);
        print_stats(s, &s->total, s->total_rt);
        fflush(s->msg);
    }
    return rc;
}

/* ---- life cycle ---- */

static void session_free(sqltool_session *s)
{
    blobs_free(s);
    fbw_stmt_free(s->stmt);
    fbw_tx_free(s->txs[0]); /* after its rollback is queued: freed once that is answered */
    fbw_tx_free(s->txs[1]);
    sqltool_fmt_free(s->fmt);
    fbw_buf_free(&s->last_sql);
    fbw_buf_free(&s->text);
    free(s->vals);
    free(s->cells);
    free(s->offs);
    fbw_blobset_free(s->blobs);
    free(s->tz);
}

int sqltool_session_new(fbw_client *cl, const sqltool_session_opts *o, FILE *out, FILE *msg,
                    sqltool_session **out_s)
{
    sqltool_session *s = calloc(1, sizeof *s);
    if (!s)
        return FBW_E_NOMEM;
    s->cl = cl;
    s->conn = fbw_client_conn(cl);
    s->o = *o;
    s->out = out;
    s->msg = msg;
    fbw_buf_init(&s->last_sql);
    fbw_buf_init(&s->text);
    fbw_err_clear(&s->err);
    fbw_stats_reset(&s->total);
    s->tzcb.name = tz_name;
    s->tzcb.ctx = s;
    int rc = sqltool_fmt_new(o->mode, out, &s->fmt);
    if (rc == FBW_OK)
        rc = fbw_stmt_new(s->conn, &s->stmt, &s->err);
    if (rc == FBW_OK)
        rc = fbw_tx_new(s->conn, &s->txs[0], &s->err);
    if (rc == FBW_OK)
        rc = fbw_tx_new(s->conn, &s->txs[1], &s->err);
    if (rc) {
        session_free(s);
        free(s);
        return rc;
    }
    *out_s = s;
    return FBW_OK;
}

int sqltool_session_close(sqltool_session *s, int abort)
{
    if (!s)
        return FBW_OK;
    int ready = fbw_conn_get_state(s->conn) == FBW_CS_READY;
    if (!abort && ready && idle_tx(s))
        fbw_tx_rollback(TX(s)); /* its reply comes with the detach's */
    session_free(s);            /* queues the statement drop (deferred: it rides along too) */
    int rc = FBW_OK;
    if (abort || !ready)
        fbw_client_abort(s->cl);
    else
        rc = fbw_client_close(s->cl);
    free(s);
    return rc;
}
