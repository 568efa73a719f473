/* SPDX-License-Identifier: MIT */
/* trace_workload.c - trace events into per-attachment replay steps (trace_workload.h). */
#include "trace_workload.h"

#include "sqlkind.h"
#include "tx.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A trace id (TRA_n, statement n) bound to the slot the steps use. */
typedef struct idmap {
    int64_t id;
    int slot;
    size_t prepare; /* statements: the prepare step (1-based) */
    size_t exec;    /* statements: the execution under way (1-based), 0 none */
    int select;     /* statements: a SELECT (a cursor to fetch) */
} idmap;

typedef struct builder {
    idmap *tx, *st;
    size_t ntx, nst, txcap, stcap;
    int tx_slots, st_slots;
    size_t imm; /* the execute immediate under way (1-based), 0 none */
} builder;

/* ---- the TPB ---- */

int pcaptool_trace_tpb(const char *opts, fbw_buf *out, fbw_err *err)
{
    fbw_tx_opts o;
    fbw_tx_opts_init(&o);
    int rc_iso = 0, norec = 0, consistency = 0;
    const char *p = opts;
    while (*p) {
        while (*p == ' ' || *p == '|')
            p++;
        const char *b = p;
        while (*p && *p != '|')
            p++;
        size_t n = (size_t)(p - b);
        while (n && b[n - 1] == ' ')
            n--;
        if (!n)
            continue;
#define IS(lit) (n == sizeof lit - 1 && !memcmp(b, lit, n))
        if (IS("CONCURRENCY"))
            o.isolation = FBW_ISO_SNAPSHOT;
        else if (IS("CONSISTENCY"))
            o.isolation = FBW_ISO_SERIALIZABLE;
        else if (IS("READ_COMMITTED"))
            rc_iso = 1;
        else if (IS("REC_VERSION"))
            norec = 0;
        else if (IS("NO_REC_VERSION"))
            norec = 1;
        else if (IS("READ_CONSISTENCY"))
            consistency = 1;
        else if (IS("WAIT"))
            o.lock_timeout = -1;
        else if (IS("NOWAIT"))
            o.lock_timeout = 0;
        else if (IS("READ_ONLY"))
            o.read_only = 1;
        else if (IS("READ_WRITE"))
            o.read_only = 0;
        else if (n > 5 && !memcmp(b, "WAIT ", 5)) { /* a lock timeout: "WAIT 5" */
            int v = 0;
            for (size_t i = 5; i < n; i++) {
                if (!isdigit((unsigned char)b[i]) || v > 32767)
                    return fbw_err_set(err, FBW_E_BADVALUE, "a lock timeout that is not a number: %.*s",
                                       (int)n, b);
                v = v * 10 + (b[i] - '0');
            }
            o.lock_timeout = v;
        } else
            return fbw_err_set(err, FBW_E_BADVALUE, "a transaction option the replay does not know: %.*s",
                               (int)(n > 60 ? 60 : n), b);
#undef IS
    }
    if (rc_iso)
        o.isolation = consistency ? FBW_ISO_READ_CONSISTENCY
                      : norec     ? FBW_ISO_READ_COMMITTED_NO_REC
                                  : FBW_ISO_READ_COMMITTED;
    return fbw_tpb_build(&o, out, err);
}

/* ---- steps ---- */

static int grow(void **a, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 16;
    void *p = realloc(*a, c * size);
    if (!p)
        return -1;
    *a = p;
    *cap = c;
    return 0;
}

/* A new step of c (its number, 1-based), or 0 when out of memory. */
static size_t add_step(pcaptool_trace_conn *c, int kind, const pcaptool_trace_event *e)
{
    if (grow((void **)&c->steps, &c->cap, c->n, sizeof *c->steps))
        return 0;
    pcaptool_step *s = &c->steps[c->n++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->packet = e->line;
    s->t_req = s->t_end = e->ts_ns;
    s->owner = c->n;
    s->result = (pcaptool_result){.rows = -1, .affected = -1};
    return c->n;
}

static idmap *find(idmap *m, size_t n, int64_t id)
{
    for (size_t i = n; i-- > 0;)
        if (m[i].id == id)
            return &m[i];
    return NULL;
}

static void unmap(idmap *m, size_t *n, idmap *x)
{
    *x = m[--*n];
}

static int set_text(pcaptool_step *s, const char *text)
{
    size_t n = strlen(text);
    s->data = malloc(n + 1);
    if (!s->data)
        return -1;
    memcpy(s->data, text, n + 1);
    s->len = n;
    return 0;
}

/* The slot of e's transaction; one started before the trace began gets its start step now. 0: the
 * event has no transaction. -1: out of memory. -2: its options make no TPB (w->err). */
static int tx_slot(pcaptool_trace_workload *w, pcaptool_trace_conn *c, builder *b,
                   const pcaptool_trace_event *e)
{
    if (e->tra <= 0)
        return 0;
    idmap *m = find(b->tx, b->ntx, e->tra);
    if (m)
        return m->slot;
    if (grow((void **)&b->tx, &b->txcap, b->ntx, sizeof *b->tx))
        return -1;
    size_t i = add_step(c, PCAPTOOL_STEP_START, e);
    if (!i)
        return -1;
    fbw_buf tpb;
    fbw_buf_init(&tpb);
    fbw_err err;
    fbw_err_clear(&err);
    int rc = pcaptool_trace_tpb(e->tra_opts ? e->tra_opts : "", &tpb, &err);
    pcaptool_step *s = &c->steps[i - 1];
    if (rc == FBW_OK) {
        s->data = malloc(fbw_buf_avail(&tpb) + 1);
        if (s->data) {
            memcpy(s->data, fbw_buf_head(&tpb), fbw_buf_avail(&tpb));
            s->len = fbw_buf_avail(&tpb);
        }
    }
    fbw_buf_free(&tpb);
    if (rc == FBW_E_BADVALUE) {
        snprintf(w->err, sizeof w->err, "trace line %zu: %.150s", e->line, err.msg);
        return -2;
    }
    if (rc != FBW_OK || !s->data)
        return -1;
    s->tx = ++b->tx_slots;
    b->tx[b->ntx++] = (idmap){.id = e->tra, .slot = s->tx};
    return s->tx;
}

/* SQL whose effect the trace's transaction events already replay. */
static int tx_statement(const char *sql)
{
    size_t n = strlen(sql);
    fbw_stmt_kind k = fbw_sql_stmt_kind(sql, n, NULL);
    if (k == FBW_STMT_COMMIT || k == FBW_STMT_ROLLBACK || k == FBW_STMT_BEGIN)
        return 1;
    while (*sql && isspace((unsigned char)*sql))
        sql++;
    return !strncasecmp(sql, "SET TRANSACTION", 15) || !strncasecmp(sql, "COMMIT", 6) ||
           !strncasecmp(sql, "ROLLBACK", 8);
}

/* The statement slot of e; a statement prepared before the trace began (or whose prepare the
 * trace did not log) is prepared now from the SQL e carries. NULL: out of memory. */
static idmap *stmt_slot(pcaptool_trace_conn *c, builder *b, const pcaptool_trace_event *e, int tx)
{
    idmap *m = find(b->st, b->nst, e->stmt);
    if (m && e->kind != PCAPTOOL_TRACE_PREPARE)
        return m;
    if (!m) {
        if (grow((void **)&b->st, &b->stcap, b->nst, sizeof *b->st))
            return NULL;
        m = &b->st[b->nst++];
        *m = (idmap){.id = e->stmt, .slot = ++b->st_slots};
    }
    size_t i = add_step(c, PCAPTOOL_STEP_PREPARE, e);
    if (!i || set_text(&c->steps[i - 1], e->sql ? e->sql : ""))
        return NULL;
    c->steps[i - 1].stmt = m->slot;
    c->steps[i - 1].tx = tx;
    m->prepare = i;
    m->exec = 0;
    m->select = fbw_sql_stmt_kind(e->sql ? e->sql : "", e->sql ? strlen(e->sql) : 0, NULL) ==
                FBW_STMT_SELECT;
    return m;
}

/* Why the replay cannot send a parameter the trace printed, or NULL. */
static const char *param_problem(const pcaptool_trace_param *p)
{
    if (!strcmp(p->type, "blob") || !strcmp(p->type, "array") || !strcmp(p->type, "quad"))
        return "a blob or array parameter: the trace shows its id, never its contents";
    if (!p->is_null && !strcmp(p->text, "<unknown>"))
        return "a parameter the trace could not print (<unknown>)";
    return NULL;
}

/* The value's text as fbw_value_from_text reads it: the trace's own spellings rewritten. */
static int param_text(pcaptool_param *d, const pcaptool_trace_param *p)
{
    const char *v = p->text;
    size_t n = p->len;
    if (!strcmp(p->type, "boolean") && (!strcmp(v, "<true>") || !strcmp(v, "<false>"))) {
        v = v[1] == 't' ? "TRUE" : "FALSE";
        n = strlen(v);
    }
    d->text = malloc(n + 1);
    if (!d->text)
        return -1;
    memcpy(d->text, v, n);
    d->text[n] = 0;
    d->len = n;
    /* "2024-01-02T03:04:05.0000": the date and the time apart by a blank */
    if (!strncmp(p->type, "timestamp", 9) && n > 10 && d->text[10] == 'T')
        d->text[10] = ' ';
    return 0;
}

static int set_params(pcaptool_step *s, const pcaptool_trace_event *e)
{
    if (!e->nparams)
        return 0;
    s->params = calloc(e->nparams, sizeof *s->params);
    if (!s->params)
        return -1;
    s->nparams = e->nparams;
    for (uint16_t k = 0; k < e->nparams; k++) {
        const pcaptool_trace_param *p = &e->params[k];
        const char *why = param_problem(p);
        if (why && !s->problem) {
            char msg[160];
            snprintf(msg, sizeof msg, "parameter %u: %s", k + 1u, why);
            if (!(s->problem = strdup(msg)))
                return -1;
        }
        s->params[k].is_null = p->is_null;
        if (!p->is_null && param_text(&s->params[k], p))
            return -1;
    }
    return 0;
}

/* A SELECT's cursor read to its end: the fetch step of its execution m->exec. rows: what the
 * trace says it fetched, -1 unknown (no EXECUTE_STATEMENT_FINISH: a time_threshold above 0 logs
 * only slow statements). */
static int fetch_step(pcaptool_trace_conn *c, idmap *m, const pcaptool_trace_event *e, int tx,
                      int64_t rows)
{
    pcaptool_step *x = &c->steps[m->exec - 1];
    if (rows >= 0) {
        x->result.rows = rows;
        x->result.unknown = 1; /* the trace counts rows, it never shows them */
        x->result.eof = 1;
    }
    size_t exec = m->exec;
    m->exec = 0;
    size_t i = add_step(c, PCAPTOOL_STEP_FETCH, e);
    if (!i)
        return -1;
    pcaptool_step *f = &c->steps[i - 1];
    f->stmt = m->slot;
    f->tx = tx ? tx : c->steps[exec - 1].tx;
    f->owner = exec;
    f->sql_step = m->prepare;
    f->fetches = 1;
    return 0;
}

/* EXECUTE_STATEMENT_START: an execute step (or execute immediate for a statement without id). */
static int exec_start(pcaptool_trace_workload *w, pcaptool_trace_conn *c, builder *b,
                      const pcaptool_trace_event *e, int tx)
{
    if (!e->sql || tx_statement(e->sql)) {
        w->skipped.tx_statements++;
        return 0;
    }
    if (e->stmt == 0) {
        size_t i = add_step(c, PCAPTOOL_STEP_IMMEDIATE, e);
        if (!i || set_text(&c->steps[i - 1], e->sql))
            return -1;
        c->steps[i - 1].tx = tx;
        b->imm = i;
        return 0;
    }
    idmap *m = stmt_slot(c, b, e, tx);
    if (!m)
        return -1;
    if (m->exec && m->select && fetch_step(c, m, e, 0, -1)) /* its cursor had no finish */
        return -1;
    size_t i = add_step(c, PCAPTOOL_STEP_EXECUTE, e);
    if (!i)
        return -1;
    pcaptool_step *s = &c->steps[i - 1];
    s->stmt = m->slot;
    s->tx = tx;
    s->sql_step = m->prepare;
    m->exec = i;
    return set_params(s, e);
}

/* EXECUTE_STATEMENT_FINISH: the execution's end; a SELECT's rows are fetched by then. */
static int exec_finish(pcaptool_trace_conn *c, builder *b, const pcaptool_trace_event *e, int tx)
{
    if (e->stmt == 0) {
        if (b->imm)
            c->steps[b->imm - 1].t_end = e->ts_ns;
        b->imm = 0;
        return 0;
    }
    idmap *m = find(b->st, b->nst, e->stmt);
    if (!m || !m->exec)
        return 0; /* its start was before the trace (or not a workload statement) */
    c->steps[m->exec - 1].t_end = e->ts_ns;
    if (m->select)
        return fetch_step(c, m, e, tx, e->records);
    m->exec = 0;
    return 0;
}

static int free_stmt(pcaptool_trace_conn *c, builder *b, const pcaptool_trace_event *e)
{
    idmap *m = e->stmt ? find(b->st, b->nst, e->stmt) : NULL;
    if (!m)
        return 0;
    if (m->exec && m->select && fetch_step(c, m, e, 0, -1))
        return -1;
    size_t i = add_step(c, e->kind == PCAPTOOL_TRACE_FREE ? PCAPTOOL_STEP_DROP : PCAPTOOL_STEP_CLOSE, e);
    if (!i)
        return -1;
    c->steps[i - 1].stmt = m->slot;
    if (e->kind == PCAPTOOL_TRACE_FREE)
        unmap(b->st, &b->nst, m);
    return 0;
}

static int end_tx(pcaptool_trace_conn *c, builder *b, const pcaptool_trace_event *e, int tx)
{
    static const int kinds[] = {
        [PCAPTOOL_TRACE_COMMIT] = PCAPTOOL_STEP_COMMIT,
        [PCAPTOOL_TRACE_COMMIT_RETAINING] = PCAPTOOL_STEP_COMMIT_RETAINING,
        [PCAPTOOL_TRACE_ROLLBACK] = PCAPTOOL_STEP_ROLLBACK,
        [PCAPTOOL_TRACE_ROLLBACK_RETAINING] = PCAPTOOL_STEP_ROLLBACK_RETAINING,
    };
    size_t i = add_step(c, kinds[e->kind], e);
    if (!i)
        return -1;
    c->steps[i - 1].tx = tx;
    if (e->kind == PCAPTOOL_TRACE_COMMIT || e->kind == PCAPTOOL_TRACE_ROLLBACK)
        unmap(b->tx, &b->ntx, find(b->tx, b->ntx, e->tra));
    return 0;
}

/* One event of attachment c. */
static int event(pcaptool_trace_workload *w, pcaptool_trace_conn *c, builder *b,
                 const pcaptool_trace_event *e)
{
    c->t_last = e->ts_ns;
    if (e->kind == PCAPTOOL_TRACE_ATTACH) {
        c->attached = 1;
        return 0;
    }
    if (e->kind == PCAPTOOL_TRACE_DETACH) {
        c->t_detach = e->ts_ns;
        return 0;
    }
    if (e->kind == PCAPTOOL_TRACE_OTHER) {
        w->skipped.not_workload++;
        return 0;
    }
    if (e->tra == 0) { /* the system transaction: the engine's own statements */
        w->skipped.system_tx++;
        return 0;
    }
    if ((e->kind == PCAPTOOL_TRACE_COMMIT || e->kind == PCAPTOOL_TRACE_COMMIT_RETAINING ||
         e->kind == PCAPTOOL_TRACE_ROLLBACK || e->kind == PCAPTOOL_TRACE_ROLLBACK_RETAINING) &&
        !find(b->tx, b->ntx, e->tra)) {
        w->skipped.orphans++; /* started before the trace and never used in it: nothing to end */
        return 0;
    }
    int tx = tx_slot(w, c, b, e);
    if (tx < 0)
        return tx;
    switch (e->kind) {
    case PCAPTOOL_TRACE_START:
        return 0; /* tx_slot made it */
    case PCAPTOOL_TRACE_COMMIT:
    case PCAPTOOL_TRACE_COMMIT_RETAINING:
    case PCAPTOOL_TRACE_ROLLBACK:
    case PCAPTOOL_TRACE_ROLLBACK_RETAINING:
        return end_tx(c, b, e, tx);
    case PCAPTOOL_TRACE_PREPARE:
        if (!e->stmt || !e->sql || tx_statement(e->sql))
            return 0; /* run as execute immediate (no id), or by its transaction event */
        return stmt_slot(c, b, e, tx) ? 0 : -1;
    case PCAPTOOL_TRACE_EXEC_START:
        return exec_start(w, c, b, e, tx);
    case PCAPTOOL_TRACE_EXEC_FINISH:
        return exec_finish(c, b, e, tx);
    default:
        return free_stmt(c, b, e);
    }
}

static int db_matches(const char *db, const char *want)
{
    if (!want)
        return 1;
    if (!db)
        return 0;
    if (!strcmp(db, want))
        return 1;
    const char *slash = strrchr(db, '/');
    return slash && !strcmp(slash + 1, want);
}

static char *dup0(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The attachment of e (a new one at its first event), or NULL when out of memory. */
static pcaptool_trace_conn *conn_of(pcaptool_trace_workload *w, builder **bs,
                                    const pcaptool_trace_event *e, builder **b)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->c[i].att == e->att) {
            *b = &(*bs)[i];
            return &w->c[i];
        }
    pcaptool_trace_conn *c = realloc(w->c, (w->n + 1) * sizeof *c);
    if (!c)
        return NULL;
    w->c = c;
    builder *nb = realloc(*bs, (w->n + 1) * sizeof *nb);
    if (!nb)
        return NULL;
    *bs = nb;
    c = &w->c[w->n];
    memset(c, 0, sizeof *c);
    memset(&nb[w->n], 0, sizeof *nb);
    w->n++;
    c->att = e->att;
    c->t_first = e->ts_ns;
    c->db = dup0(e->db);
    c->user = dup0(e->user);
    c->remote = dup0(e->remote);
    c->process = dup0(e->process);
    *b = &nb[w->n - 1];
    return c;
}

int pcaptool_trace_workload_build(const pcaptool_trace *t, const char *database,
                                  pcaptool_trace_workload *w)
{
    memset(w, 0, sizeof *w);
    builder *bs = NULL;
    int rc = FBW_OK;
    for (size_t i = 0; i < t->n && rc == FBW_OK; i++) {
        const pcaptool_trace_event *e = &t->ev[i];
        if (e->att < 0) {
            w->skipped.not_workload++;
            continue;
        }
        if (!db_matches(e->db, database)) {
            w->skipped.other_db++;
            continue;
        }
        if (e->remote && !strcmp(e->remote, "<internal>")) {
            w->skipped.internal++;
            continue;
        }
        if (e->failed) {
            w->skipped.failed++;
            continue;
        }
        builder *b;
        pcaptool_trace_conn *c = conn_of(w, &bs, e, &b);
        int r = c ? event(w, c, b, e) : -1;
        rc = r == -2 ? FBW_E_BADVALUE : r < 0 ? FBW_E_NOMEM : FBW_OK;
    }
    for (size_t i = 0; i < w->n; i++) {
        free(bs[i].tx);
        free(bs[i].st);
    }
    free(bs);
    if (rc == FBW_E_NOMEM)
        snprintf(w->err, sizeof w->err, "out of memory");
    return rc;
}

void pcaptool_trace_workload_free(pcaptool_trace_workload *w)
{
    for (size_t i = 0; i < w->n; i++) {
        pcaptool_trace_conn *c = &w->c[i];
        for (size_t k = 0; k < c->n; k++)
            pcaptool_step_free(&c->steps[k]);
        free(c->steps);
        free(c->db);
        free(c->user);
        free(c->remote);
        free(c->process);
    }
    free(w->c);
    memset(w, 0, sizeof *w);
}
