/* SPDX-License-Identifier: MIT */
/* workload.c - rebuild a captured client's SQL workload from its decoded packets (workload.h).
 * Replies matter only where they name a handle (op_transaction, op_allocate_statement, and
 * op_exec_immediate when SQL such as SET TRANSACTION started a transaction); replies come in
 * request order, so a FIFO of those requests pairs each reply with its slot. */
#include "workload.h"

#include "status.h"
#include "value.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A request whose reply binds a handle to slot (op_transaction, op_allocate_statement,
 * op_exec_immediate sent without a transaction). */
typedef struct fbw_wl_wait {
    int32_t op;
    int slot;
} wl_wait;

static const char *const step_names[FBW_STEP_KINDS] = {
    "start",   "commit",  "commit_retaining", "rollback", "rollback_retaining", "prepare",
    "execute", "fetch",   "close",            "drop",     "immediate",
};

const char *fbw_step_name(int kind)
{
    return kind >= 0 && kind < FBW_STEP_KINDS ? step_names[kind] : "?";
}

void fbw_workload_init(fbw_workload *w)
{
    memset(w, 0, sizeof *w);
}

static void step_free(fbw_step *s)
{
    free(s->data);
    for (uint16_t i = 0; i < s->nparams; i++)
        free(s->params[i].text);
    free(s->params);
    free(s->problem);
}

void fbw_workload_free(fbw_workload *w)
{
    for (size_t i = 0; i < w->n; i++)
        step_free(&w->steps[i]);
    free(w->steps);
    free(w->txh);
    free(w->sth);
    free(w->fetch_step);
    free(w->wait);
    memset(w, 0, sizeof *w);
}

/* ---- growing arrays (every failure is remembered in w->nomem; the report says so) ---- */

static int grow(fbw_workload *w, void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, n * size);
    if (!p) {
        w->nomem = 1;
        return -1;
    }
    memset((char *)p + *cap * size, 0, (n - *cap) * size);
    *arr = p;
    *cap = n;
    return 0;
}

static fbw_step *add_step(fbw_workload *w, int kind, uint64_t packet)
{
    if (grow(w, (void **)&w->steps, &w->cap, w->n + 1, sizeof *w->steps))
        return NULL;
    fbw_step *s = &w->steps[w->n++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->packet = packet;
    return s;
}

static void set_problem(fbw_workload *w, fbw_step *s, const char *fmt, ...) FBW_PRINTF(3, 4);
static void set_problem(fbw_workload *w, fbw_step *s, const char *fmt, ...)
{
    if (s->problem)
        return; /* the first reason is the one that matters */
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    s->problem = strdup(tmp);
    if (!s->problem)
        w->nomem = 1;
}

static int copy_bytes(fbw_workload *w, fbw_step *s, fbw_bytes b)
{
    s->data = malloc(b.n + 1);
    if (!s->data) {
        w->nomem = 1;
        return -1;
    }
    if (b.n)
        memcpy(s->data, b.p, b.n);
    s->data[b.n] = 0;
    s->len = b.n;
    return 0;
}

/* ---- handles and slots ---- */

static int new_stmt_slot(fbw_workload *w)
{
    int slot = w->nstmt + 1;
    if (grow(w, (void **)&w->fetch_step, &w->fetch_cap, (size_t)slot + 1, sizeof *w->fetch_step))
        return 0;
    w->nstmt = slot;
    return slot;
}

static void bind(fbw_workload *w, fbw_handle_slot **map, size_t *n, size_t *cap, uint16_t handle,
                 int slot)
{
    for (size_t i = 0; i < *n; i++)
        if ((*map)[i].handle == handle) {
            (*map)[i].slot = slot; /* the server reused the handle: the old object is gone */
            return;
        }
    if (grow(w, (void **)map, cap, *n + 1, sizeof **map))
        return;
    (*map)[(*n)++] = (fbw_handle_slot){handle, slot};
}

/* The slot a handle in a client packet names: 0xFFFF is the object allocated last. Returns 0
 * (none) for handle 0 and -1 for a handle the capture never bound. */
static int lookup(const fbw_handle_slot *map, size_t n, uint16_t handle, int last)
{
    if (handle == FBW_INVALID_OBJECT)
        return last ? last : -1;
    for (size_t i = 0; i < n; i++)
        if (map[i].handle == handle)
            return map[i].slot;
    return -1;
}

static void wait_push(fbw_workload *w, int32_t op, int slot)
{
    if (w->wait_len == w->wait_cap) {
        size_t cap = w->wait_cap ? w->wait_cap * 2 : 16;
        wl_wait *q = malloc(cap * sizeof *q);
        if (!q) {
            w->nomem = 1;
            return;
        }
        for (size_t i = 0; i < w->wait_len; i++)
            q[i] = w->wait[(w->wait_head + i) % w->wait_cap];
        free(w->wait);
        w->wait = q;
        w->wait_cap = cap;
        w->wait_head = 0;
    }
    w->wait[(w->wait_head + w->wait_len) % w->wait_cap] = (wl_wait){op, slot};
    w->wait_len++;
}

/* A step's transaction: handle 0 is none; an unknown handle is a problem of the step. */
static void step_tx(fbw_workload *w, fbw_step *s, uint16_t tr)
{
    if (tr == 0)
        return;
    int slot = lookup(w->txh, w->ntxh, tr, w->last_tx);
    if (slot < 0)
        set_problem(w, s, "transaction handle %u was never started in the capture", tr);
    else
        s->tx = slot;
}

static void step_stmt(fbw_workload *w, fbw_step *s, uint16_t handle)
{
    int slot = lookup(w->sth, w->nsth, handle, w->last_stmt);
    if (slot <= 0)
        set_problem(w, s, "statement handle %u was never allocated in the capture", handle);
    else
        s->stmt = slot;
}

/* ---- parameters ---- */

static int blobish(uint16_t type)
{
    return type == FBW_SQL_BLOB || type == FBW_SQL_ARRAY || type == FBW_SQL_QUAD;
}

/* Decode the execute message with the format the decoder framed it with; each value becomes its
 * canonical text (replay parses it again for the type the replayed statement describes). */
static void take_params(fbw_workload *w, fbw_step *s, const fbw_dec *d, fbw_bytes msg)
{
    const fbw_msgfmt *f = fbw_dec_message_format(d);
    if (!f) {
        set_problem(w, s, "no parameter format known");
        return;
    }
    if (f->n == 0)
        return;
    fbw_value *v = calloc(f->n, sizeof *v);
    s->params = calloc(f->n, sizeof *s->params);
    fbw_err err;
    fbw_err_clear(&err);
    if (!v || !s->params) {
        free(v);
        w->nomem = 1;
        return;
    }
    s->nparams = f->n;
    if (fbw_msg_decode(msg, f, fbw_dec_protocol(d), v, &err) != FBW_OK) {
        set_problem(w, s, "parameters cannot be decoded: %s", err.msg);
        s->nparams = 0;
        free(v);
        return;
    }
    for (uint16_t i = 0; i < f->n; i++) {
        fbw_param *pa = &s->params[i];
        pa->col = f->cols[i];
        pa->is_null = v[i].is_null || f->cols[i].type == FBW_SQL_NULL;
        if (pa->is_null)
            continue;
        if (blobish(f->cols[i].type))
            set_problem(w, s, "parameter %u is a BLOB/ARRAY id: blob contents are not replayed",
                        i + 1);
        fbw_buf t;
        fbw_buf_init(&t);
        if (fbw_value_to_text(&v[i], &f->cols[i], NULL, &t, &err) != FBW_OK ||
            fbw_buf_append(&t, "", 1) != FBW_OK) {
            set_problem(w, s, "parameter %u: %s", i + 1, err.msg[0] ? err.msg : "out of memory");
            fbw_buf_free(&t);
            continue;
        }
        pa->len = fbw_buf_avail(&t) - 1;
        pa->text = malloc(pa->len + 1);
        if (pa->text)
            memcpy(pa->text, fbw_buf_head(&t), pa->len + 1);
        else
            w->nomem = 1;
        fbw_buf_free(&t);
    }
    free(v);
}

/* ---- client packets ---- */

static void on_transaction(fbw_workload *w, const fbw_pkt *p)
{
    fbw_step *s = add_step(w, FBW_STEP_START, w->packets);
    if (!s)
        return;
    s->tx = ++w->ntx;
    copy_bytes(w, s, p->u.sttr.tpb);
    w->last_tx = s->tx;
    w->last_stmt = 0; /* 0xFFFF now names the transaction */
    wait_push(w, FBW_OP_TRANSACTION, s->tx);
}

static void on_tx_end(fbw_workload *w, int kind, const fbw_pkt *p)
{
    fbw_step *s = add_step(w, kind, w->packets);
    if (s)
        step_tx(w, s, p->u.rlse.object);
    if (s && !s->tx && !s->problem)
        set_problem(w, s, "no transaction named");
}

static void on_allocate(fbw_workload *w)
{
    int slot = new_stmt_slot(w);
    if (!slot)
        return;
    w->last_stmt = slot;
    w->last_tx = 0; /* 0xFFFF now names the statement */
    wait_push(w, FBW_OP_ALLOCATE_STATEMENT, slot);
}

static void on_prepare(fbw_workload *w, const fbw_pkt *p)
{
    fbw_step *s = add_step(w, FBW_STEP_PREPARE, w->packets);
    if (!s)
        return;
    step_stmt(w, s, p->u.sqlst.stmt);
    step_tx(w, s, p->u.sqlst.tr);
    copy_bytes(w, s, p->u.sqlst.sql);
    if (s->stmt)
        w->fetch_step[s->stmt] = 0;
}

static void on_execute(fbw_workload *w, const fbw_dec *d, const fbw_pkt *p)
{
    fbw_step *s = add_step(w, FBW_STEP_EXECUTE, w->packets);
    if (!s)
        return;
    step_stmt(w, s, p->u.sqldata.stmt);
    step_tx(w, s, p->u.sqldata.tr);
    if (p->u.sqldata.messages)
        take_params(w, s, d, p->u.sqldata.msg);
    if (s->stmt)
        w->fetch_step[s->stmt] = 0;
}

/* Consecutive op_fetch of one cursor are one step: the replay fetches to the end anyway. */
static void on_fetch(fbw_workload *w, const fbw_pkt *p)
{
    int slot = lookup(w->sth, w->nsth, p->u.sqldata.stmt, w->last_stmt);
    if (slot > 0 && w->fetch_step[slot]) {
        w->steps[w->fetch_step[slot] - 1].fetches++;
        return;
    }
    fbw_step *s = add_step(w, FBW_STEP_FETCH, w->packets);
    if (!s)
        return;
    s->fetches = 1;
    step_stmt(w, s, p->u.sqldata.stmt);
    if (s->stmt)
        w->fetch_step[s->stmt] = (int)w->n;
}

static void on_free(fbw_workload *w, const fbw_pkt *p)
{
    int drop = p->u.sqlfree.option == 2; /* DSQL_drop; close (1) and unprepare (4) keep it */
    fbw_step *s = add_step(w, drop ? FBW_STEP_DROP : FBW_STEP_CLOSE, w->packets);
    if (!s)
        return;
    step_stmt(w, s, p->u.sqlfree.stmt);
    if (s->stmt)
        w->fetch_step[s->stmt] = 0;
}

/* SET TRANSACTION (and COMMIT) can be SQL: without a transaction the step gets a fresh slot the
 * reply may start; with one, a reply object 0 means the SQL ended it. */
static void on_immediate(fbw_workload *w, const fbw_pkt *p)
{
    fbw_step *s = add_step(w, FBW_STEP_IMMEDIATE, w->packets);
    if (!s)
        return;
    step_tx(w, s, p->u.sqlst.tr);
    copy_bytes(w, s, p->u.sqlst.sql);
    if (p->u.sqlst.tr == 0) {
        s->tx = ++w->ntx;
        wait_push(w, FBW_OP_EXEC_IMMEDIATE, s->tx);
    }
}

/* Connection setup and teardown: the replay does its own (to --db). */
static int session_op(int32_t op)
{
    switch (op) {
    case FBW_OP_CONNECT: case FBW_OP_ATTACH: case FBW_OP_CREATE: case FBW_OP_CONT_AUTH:
    case FBW_OP_TRUSTED_AUTH: case FBW_OP_DETACH: case FBW_OP_DISCONNECT: case FBW_OP_DUMMY:
    case FBW_OP_CRYPT:
        return 1;
    default:
        return 0;
    }
}

static void client_packet(fbw_workload *w, const fbw_dec *d, const fbw_pkt *p)
{
    switch (p->op) {
    case FBW_OP_TRANSACTION: on_transaction(w, p); break;
    case FBW_OP_COMMIT: on_tx_end(w, FBW_STEP_COMMIT, p); break;
    case FBW_OP_COMMIT_RETAINING: on_tx_end(w, FBW_STEP_COMMIT_RETAINING, p); break;
    case FBW_OP_ROLLBACK: on_tx_end(w, FBW_STEP_ROLLBACK, p); break;
    case FBW_OP_ROLLBACK_RETAINING: on_tx_end(w, FBW_STEP_ROLLBACK_RETAINING, p); break;
    case FBW_OP_ALLOCATE_STATEMENT: on_allocate(w); break;
    case FBW_OP_PREPARE_STATEMENT: on_prepare(w, p); break;
    case FBW_OP_EXECUTE: case FBW_OP_EXECUTE2: on_execute(w, d, p); break;
    case FBW_OP_FETCH: on_fetch(w, p); break;
    case FBW_OP_FREE_STATEMENT: on_free(w, p); break;
    case FBW_OP_EXEC_IMMEDIATE: on_immediate(w, p); break;
    default:
        if (!session_op(p->op) && p->op >= 0 && p->op <= FBW_OP_MAX)
            w->not_replayed[p->op]++;
        break;
    }
}

/* ---- server packets: the replies that name handles ---- */

static void server_packet(fbw_workload *w, const fbw_dec *d, const fbw_pkt *p)
{
    if (p->op != FBW_OP_RESPONSE || w->wait_len == 0)
        return;
    const wl_wait *q = &w->wait[w->wait_head];
    if (q->op != fbw_dec_answering(d))
        return; /* answers a request that names no handle */
    wl_wait x = *q;
    w->wait_head = (w->wait_head + 1) % w->wait_cap;
    w->wait_len--;
    uint16_t obj = p->u.resp.object;
    if (!fbw_status_is_success(p->u.resp.status) || obj == 0)
        return;
    if (x.op == FBW_OP_ALLOCATE_STATEMENT)
        bind(w, &w->sth, &w->nsth, &w->sth_cap, obj, x.slot);
    else
        bind(w, &w->txh, &w->ntxh, &w->txh_cap, obj, x.slot);
}

void fbw_workload_packet(fbw_workload *w, const fbw_dec *d, int from_client, const fbw_pkt *p)
{
    w->packets++;
    if (from_client)
        client_packet(w, d, p);
    else
        server_packet(w, d, p);
}
