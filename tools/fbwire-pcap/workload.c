/* SPDX-License-Identifier: MIT */
/* workload.c - rebuild a captured client's SQL workload from its decoded packets (workload.h).
 * Replies matter only where they name a handle (op_transaction, op_allocate_statement, and
 * op_exec_immediate when SQL such as SET TRANSACTION started a transaction); replies come in
 * request order, so a FIFO of those requests pairs each reply with its slot. */
#include "workload.h"

#include "batch.h"
#include "blob.h"
#include "info.h"
#include "request.h"
#include "status.h"
#include "value.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A request whose reply binds a handle to slot (op_transaction, op_allocate_statement,
 * op_exec_immediate sent without a transaction). */
typedef struct pcaptool_wl_wait {
    int32_t op;
    int slot;
} wl_wait;

/* Per statement slot: its prepare and current execute steps (1-based) and the row format the
 * client last gave in an op_fetch or op_execute2 BLR. */
typedef struct pcaptool_wl_slot {
    size_t prepare, exec;
    fbw_col *cols;
    uint16_t n;
    int have_fmt;
    fbw_col *batch_cols;   /* op_batch_create's message format */
    uint16_t batch_n;
    int have_batch;
    size_t batch_from;     /* first step of the messages the next op_batch_exec runs (1-based) */
    size_t run_from, run_to; /* the steps the last op_batch_exec ran, for its op_batch_cs */
} wl_slot;

#define WL_CURSOR_SCROLLABLE 1 /* IStatement::CURSOR_TYPE_SCROLLABLE in op_execute's cursor flags */

static const char *const step_names[PCAPTOOL_STEP_KINDS] = {
    "start",   "commit",  "commit_retaining", "rollback", "rollback_retaining", "prepare",
    "execute", "fetch",   "close",            "drop",     "immediate",          "blob",
    "blob_read", "info_sql", "info_database", "info_transaction", "fetch_scroll", "count_cursor",
};

/* A blob id seen in a fetched row: where it was (execute step, row, column). */
typedef struct pcaptool_wl_bid {
    uint32_t hi, lo;
    size_t exec; /* 1-based; 0: empty entry */
    uint32_t row;
    uint16_t col;
} wl_bid;

uint64_t pcaptool_fnv(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211u;
    return h;
}

const char *pcaptool_step_name(int kind)
{
    return kind >= 0 && kind < PCAPTOOL_STEP_KINDS ? step_names[kind] : "?";
}

const char *pcaptool_fetch_op_name(unsigned op)
{
    static const char *const names[] = {"next", "prior", "first", "last", "absolute", "relative"};
    return op < sizeof names / sizeof names[0] ? names[op] : NULL;
}

void pcaptool_workload_init(pcaptool_workload *w)
{
    memset(w, 0, sizeof *w);
    fbw_ring_init(&w->wait, sizeof(wl_wait), 0);
    fbw_ring_init(&w->info_wait, sizeof(int), 0);
    fbw_ring_init(&w->seg_wait, sizeof(size_t), 0);
    fbw_ring_init(&w->imm_wait, sizeof(size_t), 0);
    fbw_ring_init(&w->count_wait, sizeof(size_t), 0);
}

void pcaptool_step_free(pcaptool_step *s)
{
    free(s->data);
    for (uint16_t i = 0; i < s->nparams; i++)
        free(s->params[i].text);
    free(s->params);
    free(s->problem);
    free(s->msg_cols);
    free(s->msg);
    free(s->blob_steps);
    free(s->bpb);
    for (size_t i = 0; i < s->nacts; i++)
        free(s->acts[i].items);
    free(s->acts);
    free(s->out_cols);
    free(s->row_cols);
}

void pcaptool_workload_free(pcaptool_workload *w)
{
    free(w->requests);
    for (size_t i = 0; i < w->n - w->base; i++)
        pcaptool_step_free(&w->steps[i]);
    free(w->steps);
    free(w->txh);
    free(w->sth);
    free(w->blh);
    free(w->fetch_step);
    fbw_ring_free(&w->wait);
    for (size_t i = 0; i < w->slot_cap; i++) {
        free(w->slot[i].cols);
        free(w->slot[i].batch_cols);
    }
    free(w->slot);
    fbw_ring_free(&w->info_wait);
    fbw_ring_free(&w->seg_wait);
    fbw_ring_free(&w->imm_wait);
    fbw_ring_free(&w->count_wait);
    free(w->bids);
    memset(w, 0, sizeof *w);
}

/* ---- growing arrays (every failure is remembered in w->nomem; the report says so) ---- */

static int grow(pcaptool_workload *w, void **arr, size_t *cap, size_t need, size_t size)
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

/* Step k (1-based, counting released ones); NULL when it was released (streaming) or is none. */
static pcaptool_step *at(pcaptool_workload *w, size_t k)
{
    return k > w->base && k <= w->n ? &w->steps[k - w->base - 1] : NULL;
}

static pcaptool_step *add_step(pcaptool_workload *w, int kind, uint64_t packet)
{
    if (grow(w, (void **)&w->steps, &w->cap, w->n - w->base + 1, sizeof *w->steps))
        return NULL;
    pcaptool_step *s = &w->steps[w->n++ - w->base];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->packet = packet;
    s->t_req = w->now;
    s->owner = w->n;
    s->result.rows = -1;
    s->result.affected = -1;
    w->cur = w->n;
    return s;
}

static void set_problem(pcaptool_workload *w, pcaptool_step *s, const char *fmt, ...)
    FBW_PRINTF(3, 4);
static void set_problem(pcaptool_workload *w, pcaptool_step *s, const char *fmt, ...)
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

static int copy_bytes(pcaptool_workload *w, pcaptool_step *s, fbw_bytes b)
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

static int new_stmt_slot(pcaptool_workload *w)
{
    int slot = w->nstmt + 1;
    if (grow(w, (void **)&w->fetch_step, &w->fetch_cap, (size_t)slot + 1, sizeof *w->fetch_step) ||
        grow(w, (void **)&w->slot, &w->slot_cap, (size_t)slot + 1, sizeof *w->slot))
        return 0;
    w->nstmt = slot;
    return slot;
}

static void bind(pcaptool_workload *w, pcaptool_handle_slot **map, size_t *n, size_t *cap,
                 uint16_t handle, int slot)
{
    for (size_t i = 0; i < *n; i++)
        if ((*map)[i].handle == handle) {
            (*map)[i].slot = slot; /* the server reused the handle: the old object is gone */
            return;
        }
    if (grow(w, (void **)map, cap, *n + 1, sizeof **map))
        return;
    (*map)[(*n)++] = (pcaptool_handle_slot){handle, slot};
}

/* The slot a handle in a client packet names: 0xFFFF is the object allocated last. Returns 0
 * (none) for handle 0 and -1 for a handle the capture never bound. */
static int lookup(const pcaptool_handle_slot *map, size_t n, uint16_t handle, int last)
{
    if (handle == FBW_INVALID_OBJECT)
        return last ? last : -1;
    for (size_t i = 0; i < n; i++)
        if (map[i].handle == handle)
            return map[i].slot;
    return -1;
}

static void wait_push(pcaptool_workload *w, int32_t op, int slot)
{
    if (fbw_ring_push(&w->wait, &(wl_wait){op, slot}) != FBW_OK)
        w->nomem = 1;
}

/* A step's transaction: handle 0 is none; an unknown handle is a problem of the step. */
static void step_tx(pcaptool_workload *w, pcaptool_step *s, uint16_t tr)
{
    if (tr == 0)
        return;
    int slot = lookup(w->txh, w->ntxh, tr, w->last_tx);
    if (slot < 0)
        set_problem(w, s, "transaction handle %u was never started in the capture", tr);
    else
        s->tx = slot;
}

static void step_stmt(pcaptool_workload *w, pcaptool_step *s, uint16_t handle)
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

/* A blob id parameter: the blob step that created it (the latest with that id), remembered so the
 * replay sends the id of the blob it created from the same contents. */
static int blob_param(pcaptool_workload *w, pcaptool_step *s, uint16_t k, const fbw_value *v)
{
    for (size_t i = w->n; i-- > w->base;) {
        const pcaptool_step *b = at(w, i + 1);
        if (b->kind != PCAPTOOL_STEP_BLOB || b->cancelled || b->blob_hi != v->u.quad.high ||
            b->blob_lo != v->u.quad.low)
            continue;
        if (!s->blob_steps)
            s->blob_steps = calloc(s->nparams, sizeof *s->blob_steps);
        if (!s->blob_steps) {
            w->nomem = 1;
            return 0;
        }
        s->blob_steps[k] = i + 1;
        return 1;
    }
    return 0;
}

/* Decode the execute message with the format the decoder framed it with; each value becomes its
 * canonical text (replay parses it again for the type the replayed statement describes). */
static void take_params_fmt(pcaptool_workload *w, pcaptool_step *s, const fbw_msgfmt *f,
                            int protocol, fbw_bytes msg);

static void take_params(pcaptool_workload *w, pcaptool_step *s, const fbw_dec *d, fbw_bytes msg)
{
    take_params_fmt(w, s, fbw_dec_message_format(d), fbw_dec_protocol(d), msg);
}

static void take_params_fmt(pcaptool_workload *w, pcaptool_step *s, const fbw_msgfmt *f,
                            int protocol, fbw_bytes msg)
{
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
    s->msg_cols = malloc(f->n * sizeof *s->msg_cols);
    s->msg = malloc(msg.n ? msg.n : 1);
    if (!s->msg_cols || !s->msg) {
        w->nomem = 1;
    } else {
        memcpy(s->msg_cols, f->cols, f->n * sizeof *s->msg_cols);
        if (msg.n)
            memcpy(s->msg, msg.p, msg.n);
        s->msg_n = f->n;
        s->msg_len = msg.n;
        s->msg_protocol = protocol;
    }
    if (fbw_msg_decode(msg, f, protocol, v, &err) != FBW_OK) {
        set_problem(w, s, "parameters cannot be decoded: %s", err.msg);
        s->nparams = 0;
        free(v);
        return;
    }
    for (uint16_t i = 0; i < f->n; i++) {
        pcaptool_param *pa = &s->params[i];
        pa->col = f->cols[i];
        pa->is_null = v[i].is_null || f->cols[i].type == FBW_SQL_NULL;
        if (pa->is_null)
            continue;
        if (blobish(f->cols[i].type) && !blob_param(w, s, i, &v[i]))
            set_problem(w, s,
                        "parameter %u is a BLOB/ARRAY id the capture did not create: its contents "
                        "are not replayed",
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

static void on_transaction(pcaptool_workload *w, const fbw_pkt *p)
{
    pcaptool_step *s = add_step(w, PCAPTOOL_STEP_START, w->packets);
    if (!s)
        return;
    s->tx = ++w->ntx;
    copy_bytes(w, s, p->u.sttr.tpb);
    w->last_tx = s->tx;
    w->last_stmt = 0; /* 0xFFFF now names the transaction */
    w->last_blob = 0;
    wait_push(w, FBW_OP_TRANSACTION, s->tx);
}

static void on_tx_end(pcaptool_workload *w, int kind, const fbw_pkt *p)
{
    pcaptool_step *s = add_step(w, kind, w->packets);
    if (s)
        step_tx(w, s, p->u.rlse.object);
    if (s && !s->tx && !s->problem)
        set_problem(w, s, "no transaction named");
}

static void on_allocate(pcaptool_workload *w)
{
    int slot = new_stmt_slot(w);
    if (!slot)
        return;
    w->last_stmt = slot;
    w->last_tx = 0; /* 0xFFFF now names the statement */
    w->last_blob = 0;
    wait_push(w, FBW_OP_ALLOCATE_STATEMENT, slot);
}

static void on_prepare(pcaptool_workload *w, const fbw_pkt *p)
{
    pcaptool_step *s = add_step(w, PCAPTOOL_STEP_PREPARE, w->packets);
    if (!s)
        return;
    step_stmt(w, s, p->u.sqlst.stmt);
    step_tx(w, s, p->u.sqlst.tr);
    copy_bytes(w, s, p->u.sqlst.sql);
    if (s->stmt) {
        w->fetch_step[s->stmt] = 0;
        w->slot[s->stmt].prepare = w->n;
        w->slot[s->stmt].exec = 0;
        w->slot[s->stmt].have_fmt = 0;
    }
}

/* The row format the client asks for in a BLR (op_fetch, op_execute2): rows are decoded with it. */
/* The execute step x asks for rows as the slot's format says (a copy). */
static void step_row_format(pcaptool_workload *w, pcaptool_step *x, const wl_slot *sl)
{
    free(x->row_cols);
    x->row_cols = NULL;
    x->row_n = 0;
    if (!sl->have_fmt)
        return;
    x->row_cols = malloc((sl->n ? sl->n : 1) * sizeof *x->row_cols);
    if (!x->row_cols) {
        w->nomem = 1;
        return;
    }
    memcpy(x->row_cols, sl->cols, sl->n * sizeof *x->row_cols);
    x->row_n = sl->n;
}

static void take_format(pcaptool_workload *w, int slot, fbw_bytes blr)
{
    if (slot <= 0 || blr.n == 0)
        return;
    wl_slot *sl = &w->slot[slot];
    uint16_t n = 0;
    fbw_err err;
    if (fbw_blr_count(blr.p, blr.n, &n, &err) != FBW_OK)
        return;
    fbw_col *cols = calloc(n ? n : 1, sizeof *cols);
    if (!cols) {
        w->nomem = 1;
        return;
    }
    fbw_msgfmt f = {cols, 0, n};
    if (fbw_blr_parse(blr.p, blr.n, &f, &err) != FBW_OK) {
        free(cols);
        return;
    }
    free(sl->cols);
    sl->cols = cols;
    sl->n = f.n;
    sl->have_fmt = 1;
    pcaptool_step *x = at(w, sl->exec);
    if (x && x->kind == PCAPTOOL_STEP_EXECUTE)
        step_row_format(w, x, sl);
}

static void on_execute(pcaptool_workload *w, const fbw_dec *d, const fbw_pkt *p)
{
    pcaptool_step *s = add_step(w, PCAPTOOL_STEP_EXECUTE, w->packets);
    if (!s)
        return;
    step_stmt(w, s, p->u.sqldata.stmt);
    step_tx(w, s, p->u.sqldata.tr);
    s->inline_blob_size = p->u.sqldata.inline_blob_size; /* decoded from protocol 19 on */
    s->scrollable = (p->u.sqldata.cursor_flags & WL_CURSOR_SCROLLABLE) != 0; /* from 18 on */
    w->scroll_step = 0;
    if (p->u.sqldata.messages)
        take_params(w, s, d, p->u.sqldata.msg);
    if (s->stmt) {
        w->fetch_step[s->stmt] = 0;
        w->slot[s->stmt].exec = w->n;
        s->sql_step = w->slot[s->stmt].prepare;
        step_row_format(w, s, &w->slot[s->stmt]); /* until this execution's BLR is seen */
        if (p->op == FBW_OP_EXECUTE2) {
            take_format(w, s->stmt, p->u.sqldata.out_blr);
            w->fetching = s->stmt;
        }
    }
}

/* A step on a statement's cursor (fetch, scroll move, count) belongs to the statement's current
 * execution and its SQL. */
static void own_cursor_step(pcaptool_workload *w, pcaptool_step *s)
{
    if (s->stmt && w->slot[s->stmt].exec) {
        s->owner = w->slot[s->stmt].exec;
        s->sql_step = w->slot[s->stmt].prepare;
    }
}

/* Consecutive op_fetch of one cursor are one step: the replay fetches to the end anyway. */
static void on_fetch(pcaptool_workload *w, const fbw_pkt *p)
{
    int slot = lookup(w->sth, w->nsth, p->u.sqldata.stmt, w->last_stmt);
    w->scroll_step = 0;
    if (slot > 0) {
        take_format(w, slot, p->u.sqldata.blr);
        w->fetching = slot;
    }
    if (slot > 0 && at(w, (size_t)w->fetch_step[slot])) {
        at(w, (size_t)w->fetch_step[slot])->fetches++;
        w->cur = (size_t)w->fetch_step[slot];
        return;
    }
    pcaptool_step *s = add_step(w, PCAPTOOL_STEP_FETCH, w->packets);
    if (!s)
        return;
    s->fetches = 1;
    step_stmt(w, s, p->u.sqldata.stmt);
    if (s->stmt) {
        w->fetch_step[s->stmt] = (int)w->n;
        own_cursor_step(w, s);
    }
}

/* op_fetch_scroll: a step of its own per move (the replay makes the same move); the fetch responses
 * after it are its row (or none past either end), compared by the replay. A later op_fetch of the
 * cursor starts a new fetch step (it reads on from where the moves left the cursor). */
static void on_fetch_scroll(pcaptool_workload *w, const fbw_pkt *p)
{
    int slot = lookup(w->sth, w->nsth, p->u.sqldata.stmt, w->last_stmt);
    if (slot > 0) {
        take_format(w, slot, p->u.sqldata.blr);
        w->fetching = slot;
        w->fetch_step[slot] = 0;
    }
    pcaptool_step *s = add_step(w, PCAPTOOL_STEP_FETCH_SCROLL, w->packets);
    if (!s)
        return;
    step_stmt(w, s, p->u.sqldata.stmt);
    s->fetch_op = p->u.sqldata.fetch_op;
    s->fetch_pos = p->u.sqldata.fetch_pos;
    s->result.rows = 0;
    own_cursor_step(w, s);
    w->scroll_step = w->n;
}

/* op_info_cursor (the record count of a scrollable cursor): a count_cursor step; its reply's count
 * is the result the replay compares. */
static void on_info_cursor(pcaptool_workload *w, const fbw_pkt *p)
{
    pcaptool_step *s = add_step(w, PCAPTOOL_STEP_COUNT_CURSOR, w->packets);
    if (!s)
        return;
    step_stmt(w, s, p->u.info.object);
    own_cursor_step(w, s);
    if (fbw_ring_push(&w->count_wait, &(size_t){w->n}) != FBW_OK)
        w->nomem = 1;
}

static int copy_info(pcaptool_workload *w, pcaptool_step *s, const fbw_pkt *p)
{
    s->info_buflen = p->u.info.buffer_length;
    return copy_bytes(w, s, p->u.info.items);
}

/* op_info_sql: replies come in request order; one asking for isc_info_sql_records gives the
 * affected rows of the statement's current execution. Sent in the same write as the execution
 * (as fbwire does) it is part of the execute step (the replay asks the same way); otherwise it is
 * an info_sql step of its own, replayed with the client's items on the replayed statement. */
static void on_info_sql(pcaptool_workload *w, const fbw_pkt *p)
{
    int slot = lookup(w->sth, w->nsth, p->u.info.object, w->last_stmt);
    int records = p->u.info.items.n && memchr(p->u.info.items.p, FBW_INFO_SQL_RECORDS,
                                              p->u.info.items.n) != NULL;
    size_t exec = slot > 0 ? w->slot[slot].exec : 0;
    static const uint8_t count_items[] = {FBW_INFO_SQL_RECORDS, FBW_INFO_END};
    /* (streaming: an execution already handed on cannot take it: a step of its own then) */
    int with_exec = exec && at(w, exec) && at(w, w->n) && at(w, w->n)->owner == exec &&
                    w->last_from_client && p->u.info.items.n == sizeof count_items &&
                    !memcmp(p->u.info.items.p, count_items, sizeof count_items);
    if (fbw_ring_push(&w->info_wait, &(int){records && slot > 0 ? slot : 0}) != FBW_OK)
        w->nomem = 1;
    if (with_exec) {
        at(w, exec)->count_info = 1;
        w->cur = exec;
        return;
    }
    pcaptool_step *s = add_step(w, PCAPTOOL_STEP_INFO_SQL, w->packets);
    if (!s)
        return;
    step_stmt(w, s, p->u.info.object);
    copy_info(w, s, p);
    if (exec) {
        s->owner = exec;
        s->sql_step = w->slot[slot].prepare;
        if (records && at(w, exec)) /* else handed on: the replay still counts it (owner) */
            at(w, exec)->counted_by = w->n;
    }
}

static void on_info_other(pcaptool_workload *w, const fbw_pkt *p)
{
    pcaptool_step *s = add_step(
        w, p->op == FBW_OP_INFO_DATABASE ? PCAPTOOL_STEP_INFO_DATABASE : PCAPTOOL_STEP_INFO_TRANSACTION,
        w->packets);
    if (!s)
        return;
    if (p->op == FBW_OP_INFO_TRANSACTION) {
        step_tx(w, s, p->u.info.object);
        if (!s->tx && !s->problem)
            set_problem(w, s, "no transaction named");
    }
    copy_info(w, s, p);
}

static void on_free(pcaptool_workload *w, const fbw_pkt *p)
{
    int drop = p->u.sqlfree.option == 2; /* DSQL_drop; close (1) and unprepare (4) keep it */
    pcaptool_step *s = add_step(w, drop ? PCAPTOOL_STEP_DROP : PCAPTOOL_STEP_CLOSE, w->packets);
    if (!s)
        return;
    step_stmt(w, s, p->u.sqlfree.stmt);
    if (s->stmt)
        w->fetch_step[s->stmt] = 0;
}

/* SET TRANSACTION (and COMMIT) can be SQL: without a transaction the step gets a fresh slot the
 * reply may start; with one, a reply object 0 means the SQL ended it. */
static void on_immediate(pcaptool_workload *w, const fbw_dec *d, const fbw_pkt *p)
{
    pcaptool_step *s = add_step(w, PCAPTOOL_STEP_IMMEDIATE, w->packets);
    if (!s)
        return;
    step_tx(w, s, p->u.sqlst.tr);
    copy_bytes(w, s, p->u.sqlst.sql);
    if (p->op == FBW_OP_EXEC_IMMEDIATE2) {
        /* the input message as the client sent it, the output row's format from its BLR */
        s->imm2 = 1;
        s->inline_blob_size = p->u.sqlst.inline_blob_size; /* decoded from protocol 19 on */
        if (p->u.sqlst.messages)
            take_params(w, s, d, p->u.sqlst.msg);
        fbw_bytes blr = p->u.sqlst.out_blr;
        uint16_t n = 0;
        fbw_err err;
        if (blr.n && fbw_blr_count(blr.p, blr.n, &n, &err) != FBW_OK) {
            set_problem(w, s, "output BLR: %s", err.msg);
        } else if (blr.n) {
            s->out_cols = calloc(n ? n : 1, sizeof *s->out_cols);
            fbw_msgfmt f = {s->out_cols, 0, n};
            if (!s->out_cols)
                w->nomem = 1;
            else if (fbw_blr_parse(blr.p, blr.n, &f, &err) != FBW_OK)
                set_problem(w, s, "output BLR: %s", err.msg);
            else
                s->out_n = f.n;
        }
        if (fbw_ring_push(&w->imm_wait, &(size_t){w->n}) != FBW_OK)
            w->nomem = 1;
    }
    if (p->u.sqlst.tr == 0) {
        s->tx = ++w->ntx;
        wait_push(w, p->op, s->tx);
    }
}

/* ---- blobs written by the client ---- */

static void on_create_blob(pcaptool_workload *w, const fbw_pkt *p)
{
    pcaptool_step *s = add_step(w, PCAPTOOL_STEP_BLOB, w->packets);
    if (!s)
        return;
    step_tx(w, s, p->u.blob.tr);
    if (p->u.blob.bpb.n) {
        s->bpb = malloc(p->u.blob.bpb.n);
        if (!s->bpb)
            w->nomem = 1;
        else
            memcpy(s->bpb, p->u.blob.bpb.p, p->u.blob.bpb.n);
        s->bpb_len = s->bpb ? p->u.blob.bpb.n : 0;
    }
    w->last_blob = (int)w->n; /* 0xFFFF now names the blob */
    w->last_tx = 0;
    w->last_stmt = 0;
    wait_push(w, p->op, (int)w->n);
}

static pcaptool_step *blob_step(pcaptool_workload *w, uint16_t handle)
{
    int i = lookup(w->blh, w->nblh, handle, w->last_blob);
    return i > 0 ? at(w, (size_t)i) : NULL;
}

static void blob_append(pcaptool_workload *w, pcaptool_step *s, const uint8_t *p, size_t n)
{
    if (s->len + n + 1 > s->data_cap) {
        size_t cap = s->data_cap ? s->data_cap : 256;
        while (cap < s->len + n + 1)
            cap *= 2;
        uint8_t *d = realloc(s->data, cap);
        if (!d) {
            w->nomem = 1;
            return;
        }
        s->data = d;
        s->data_cap = cap;
    }
    if (n)
        memcpy(s->data + s->len, p, n);
    s->len += n;
    s->data[s->len] = 0;
}

/* op_put_segment carries one segment; op_batch_segments several, each with its 2-byte length. */
static void on_segment(pcaptool_workload *w, const fbw_pkt *p)
{
    pcaptool_step *s = blob_step(w, p->u.sgmt.blob);
    if (!s) {
        w->not_replayed[p->op]++;
        return;
    }
    if (p->op == FBW_OP_PUT_SEGMENT) {
        blob_append(w, s, p->u.sgmt.segment.p, p->u.sgmt.segment.n);
        return;
    }
    fbw_buf out;
    fbw_buf_init(&out);
    fbw_err err;
    if (fbw_blob_segments_parse(p->u.sgmt.segment.p, p->u.sgmt.segment.n, &out, NULL, &err))
        set_problem(w, s, "op_batch_segments: %s", err.msg);
    else
        blob_append(w, s, fbw_buf_head(&out), fbw_buf_avail(&out));
    fbw_buf_free(&out);
}

static pcaptool_blob_act *add_act(pcaptool_workload *w, pcaptool_step *s, int32_t op);

static void on_blob_end(pcaptool_workload *w, const fbw_pkt *p)
{
    pcaptool_step *s = blob_step(w, p->u.rlse.object);
    if (s && s->kind == PCAPTOOL_STEP_BLOB_READ) {
        add_act(w, s, p->op); /* the replay closes it the same way: waiting or not */
        w->close_step = (size_t)(s - w->steps) + w->base + 1;
        return;
    }
    if (!s) {
        w->not_replayed[p->op]++; /* a blob opened for reading */
        return;
    }
    if (p->op == FBW_OP_CANCEL_BLOB)
        s->cancelled = 1;
}

/* ---- blobs read by the client ---- */

static wl_bid *bid_slot(wl_bid *t, size_t cap, uint32_t hi, uint32_t lo)
{
    size_t i = (size_t)(((uint64_t)hi << 32 | lo) * 0x9E3779B97F4A7C15u >> 17) & (cap - 1);
    while (t[i].exec && (t[i].hi != hi || t[i].lo != lo))
        i = (i + 1) & (cap - 1);
    return &t[i];
}

/* Remember where a blob id was fetched; a later row with the same id wins (the client opens the
 * id it fetched last). */
static void bid_put(pcaptool_workload *w, uint32_t hi, uint32_t lo, size_t exec, uint32_t row,
                    uint16_t col)
{
    if (w->nbids >= PCAPTOOL_WL_BIDS_MAX) { /* bounded (streaming): the oldest ids are forgotten */
        memset(w->bids, 0, w->bids_cap * sizeof *w->bids);
        w->nbids = 0;
        w->bids_forgot = 1;
    }
    if ((w->nbids + 1) * 2 > w->bids_cap) {
        size_t cap = w->bids_cap ? w->bids_cap * 2 : 64;
        wl_bid *t = calloc(cap, sizeof *t);
        if (!t) {
            w->nomem = 1;
            return;
        }
        for (size_t i = 0; i < w->bids_cap; i++)
            if (w->bids[i].exec)
                *bid_slot(t, cap, w->bids[i].hi, w->bids[i].lo) = w->bids[i];
        free(w->bids);
        w->bids = t;
        w->bids_cap = cap;
    }
    wl_bid *e = bid_slot(w->bids, w->bids_cap, hi, lo);
    w->nbids += e->exec == 0;
    *e = (wl_bid){hi, lo, exec, row, col};
}

static const wl_bid *bid_get(const pcaptool_workload *w, uint32_t hi, uint32_t lo)
{
    if (!w->bids_cap)
        return NULL;
    const wl_bid *e = bid_slot(w->bids, w->bids_cap, hi, lo);
    return e->exec ? e : NULL;
}

/* op_open_blob(2): a blob read step, replayed on the id the replay fetched at the same row and
 * column of the same execution. */
static void on_open_blob(pcaptool_workload *w, const fbw_pkt *p)
{
    pcaptool_step *s = add_step(w, PCAPTOOL_STEP_BLOB_READ, w->packets);
    if (!s)
        return;
    s->result.rows = 0;
    s->result.hash = PCAPTOOL_FNV_BASIS;
    if (p->u.blob.bpb.n) {
        s->bpb = malloc(p->u.blob.bpb.n);
        if (!s->bpb)
            w->nomem = 1;
        else
            memcpy(s->bpb, p->u.blob.bpb.p, p->u.blob.bpb.n);
        s->bpb_len = s->bpb ? p->u.blob.bpb.n : 0;
    }
    s->blob_hi = p->u.blob.id_hi;
    s->blob_lo = p->u.blob.id_lo;
    const wl_bid *b = bid_get(w, s->blob_hi, s->blob_lo);
    if (!b) {
        set_problem(w, s,
                    "blob id %08x:%08x is in no row the capture fetched (read before the capture "
                    "started, or from an output it cannot decode)%s",
                    (unsigned)s->blob_hi, (unsigned)s->blob_lo,
                    w->bids_forgot ? ", or among the fetched ids forgotten past the latest "
                                     "65536" : "");
    } else {
        /* the replay keeps the ids of its executions' rows (replay.c): the execution may have
         * been handed on already (streaming), its step is not needed here */
        const pcaptool_step *x = at(w, b->exec);
        s->read_exec = b->exec;
        s->read_row = b->row;
        s->read_col = b->col;
        s->sql_step = x ? x->sql_step : 0;
    }
    step_tx(w, s, p->u.blob.tr); /* after the id: an unknown id is the first reason */
    if (!s->tx && !s->problem)
        set_problem(w, s, "no transaction named");
    w->last_blob = (int)w->n; /* 0xFFFF now names the blob */
    w->last_tx = 0;
    w->last_stmt = 0;
    wait_push(w, p->op, (int)w->n);
}

static pcaptool_step *read_step(pcaptool_workload *w, uint16_t handle)
{
    pcaptool_step *s = blob_step(w, handle);
    return s && s->kind == PCAPTOOL_STEP_BLOB_READ ? s : NULL;
}

static pcaptool_blob_act *add_act(pcaptool_workload *w, pcaptool_step *s, int32_t op)
{
    if (grow(w, (void **)&s->acts, &s->acts_cap, s->nacts + 1, sizeof *s->acts))
        return NULL;
    pcaptool_blob_act *a = &s->acts[s->nacts++];
    memset(a, 0, sizeof *a);
    a->op = op;
    a->burst = !w->last_from_client;
    w->cur = (size_t)(s - w->steps) + w->base + 1; /* its round trips and time are the read's */
    return a;
}

/* op_get_segment, op_seek_blob, op_info_blob on a blob: an act of its read step. Every
 * op_get_segment's reply is awaited in order (seg_wait), also those on blobs not replayed. */
static void on_blob_op(pcaptool_workload *w, const fbw_pkt *p)
{
    uint16_t h = p->op == FBW_OP_GET_SEGMENT ? p->u.sgmt.blob
                 : p->op == FBW_OP_SEEK_BLOB ? p->u.seek.blob
                                             : p->u.info.object;
    pcaptool_step *s = read_step(w, h);
    pcaptool_blob_act *a = s ? add_act(w, s, p->op) : NULL;
    if (p->op == FBW_OP_GET_SEGMENT &&
        fbw_ring_push(&w->seg_wait, &(size_t){a ? (size_t)(s - w->steps) + w->base + 1 : 0}) != FBW_OK)
        w->nomem = 1;
    if (!a) {
        w->not_replayed[p->op]++;
        return;
    }
    if (p->op == FBW_OP_GET_SEGMENT) {
        a->buflen = p->u.sgmt.length;
    } else if (p->op == FBW_OP_SEEK_BLOB) {
        a->mode = p->u.seek.mode;
        a->offset = p->u.seek.offset;
    } else {
        a->buflen = p->u.info.buffer_length;
        a->nitems = p->u.info.items.n;
        a->items = malloc(a->nitems ? a->nitems : 1);
        if (!a->items)
            w->nomem = 1;
        else if (a->nitems)
            memcpy(a->items, p->u.info.items.p, a->nitems);
    }
}

/* The reply to an op_get_segment: its segments' bytes are what the client read. */
static void on_segment_reply(pcaptool_workload *w, const fbw_pkt *p)
{
    size_t i;
    if (!fbw_ring_pop(&w->seg_wait, &i) || !i)
        return;
    pcaptool_step *s = at(w, i); /* NULL: handed on (forced out of a full window) */
    w->late += !s;
    if (!s || !fbw_status_is_success(p->u.resp.status))
        return;
    fbw_buf out;
    fbw_buf_init(&out);
    fbw_err err;
    if (p->u.resp.object > FBW_SEG_EOF ||
        fbw_blob_segments_parse(p->u.resp.data.p, p->u.resp.data.n, &out, NULL, &err) != FBW_OK) {
        s->result.unknown = 1;
    } else {
        s->result.rows += (int64_t)fbw_buf_avail(&out);
        if (fbw_buf_avail(&out))
            s->result.hash = pcaptool_fnv(s->result.hash, fbw_buf_head(&out), fbw_buf_avail(&out));
        if (p->u.resp.object == FBW_SEG_EOF)
            s->result.eof = 1;
    }
    fbw_buf_free(&out);
}

/* ---- FB4 batches: each message becomes an execute of the statement ---- */

static void on_batch_create(pcaptool_workload *w, const fbw_pkt *p)
{
    int slot = lookup(w->sth, w->nsth, p->u.batch_create.stmt, w->last_stmt);
    fbw_bytes blr = p->u.batch_create.blr;
    uint16_t n = 0;
    fbw_err err;
    if (slot <= 0 || fbw_blr_count(blr.p, blr.n, &n, &err) != FBW_OK) {
        w->not_replayed[p->op]++;
        return;
    }
    wl_slot *sl = &w->slot[slot];
    fbw_col *cols = calloc(n ? n : 1, sizeof *cols);
    fbw_msgfmt f = {cols, 0, n};
    if (!cols || fbw_blr_parse(blr.p, blr.n, &f, &err) != FBW_OK) {
        free(cols);
        w->not_replayed[p->op]++;
        return;
    }
    free(sl->batch_cols);
    sl->batch_cols = cols;
    sl->batch_n = f.n;
    sl->have_batch = 1;
    sl->batch_from = 0;
}

/* The messages of op_batch_msg, framed one by one with op_batch_create's format. */
static void on_batch_msg(pcaptool_workload *w, const fbw_dec *d, const fbw_pkt *p)
{
    int slot = lookup(w->sth, w->nsth, p->u.batch_msg.stmt, w->last_stmt);
    if (slot <= 0 || !w->slot[slot].have_batch) {
        w->not_replayed[p->op]++;
        return;
    }
    wl_slot *sl = &w->slot[slot];
    fbw_msgfmt f = {sl->batch_cols, sl->batch_n, sl->batch_n};
    fbw_rd r;
    fbw_rd_init(&r, p->u.batch_msg.data.p, p->u.batch_msg.data.n, FBW_E_PROTO);
    for (uint32_t i = 0; i < p->u.batch_msg.count; i++) {
        fbw_bytes raw;
        pcaptool_step *s = add_step(w, PCAPTOOL_STEP_EXECUTE, w->packets);
        if (!s)
            return;
        s->stmt = slot;
        s->sql_step = sl->prepare;
        if (!sl->batch_from)
            sl->batch_from = w->n;
        if (fbw_msg_frame(&r, &f, fbw_dec_protocol(d), &raw) != FBW_OK) {
            set_problem(w, s, "batch message %u cannot be framed", i + 1);
            return;
        }
        take_params_fmt(w, s, &f, fbw_dec_protocol(d), raw);
        s->count_info = 1; /* the affected rows come with op_batch_cs: the replay asks for them */
    }
}

/* op_batch_exec names the transaction the messages since the last one run in. */
static void on_batch_exec(pcaptool_workload *w, const fbw_pkt *p)
{
    int slot = lookup(w->sth, w->nsth, p->u.batch_exec.stmt, w->last_stmt);
    if (slot <= 0 || !w->slot[slot].batch_from) {
        w->not_replayed[p->op]++;
        return;
    }
    for (size_t i = w->slot[slot].batch_from; i <= w->n; i++) {
        pcaptool_step *s = at(w, i);
        if (s && s->kind == PCAPTOOL_STEP_EXECUTE && s->stmt == slot && !s->tx)
            step_tx(w, s, p->u.batch_exec.tr);
    }
    w->slot[slot].run_from = w->slot[slot].batch_from;
    w->slot[slot].run_to = w->n;
    w->slot[slot].batch_from = 0;
}

/* op_batch_cs: the affected rows of each message, in order (with TAG_RECORD_COUNTS). */
static void on_batch_cs(pcaptool_workload *w, const fbw_pkt *p)
{
    int slot = lookup(w->sth, w->nsth, p->u.batch_cs.stmt, w->last_stmt);
    if (slot <= 0 || !w->slot[slot].run_from || !at(w, w->slot[slot].run_from))
        return; /* (streaming: its first message was released, counts would not line up) */
    fbw_batch_cs cs;
    fbw_err err;
    if (fbw_batch_cs_parse(p, &cs, &err) != FBW_OK)
        return;
    uint32_t k = 0;
    for (size_t i = w->slot[slot].run_from; i <= w->slot[slot].run_to && k < cs.nupdates; i++) {
        pcaptool_step *s = at(w, i);
        if (s->kind == PCAPTOOL_STEP_EXECUTE && s->stmt == slot && cs.updates[k] >= 0)
            s->result.affected = cs.updates[k];
        k += s->kind == PCAPTOOL_STEP_EXECUTE && s->stmt == slot;
    }
    fbw_batch_cs_free(&cs);
    w->slot[slot].run_from = 0;
}

/* A BLR request: remembered for the listing of what the replay cannot reproduce. */
static void on_compile(pcaptool_workload *w, const fbw_pkt *p)
{
    w->requests_total++;
    if (w->nrequests == PCAPTOOL_WL_REQUESTS_MAX)
        return;
    if (w->nrequests % 64 == 0) {
        pcaptool_wl_request *n = realloc(w->requests, (w->nrequests + 64) * sizeof *n);
        if (!n) {
            w->nomem = 1;
            return;
        }
        w->requests = n;
    }
    fbw_blr_msgdecl decl[FBW_BLR_MAX_MESSAGES];
    unsigned count = 0;
    fbw_err err;
    if (fbw_blr_request_scan(p->u.ddl.blr.p, p->u.ddl.blr.n, decl, FBW_BLR_MAX_MESSAGES, &count,
                             &err) != FBW_OK)
        count = 0;
    w->requests[w->nrequests++] = (pcaptool_wl_request){w->packets, p->u.ddl.blr.n, count};
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

static void client_packet(pcaptool_workload *w, const fbw_dec *d, const fbw_pkt *p)
{
    switch (p->op) {
    case FBW_OP_TRANSACTION: on_transaction(w, p); break;
    case FBW_OP_COMMIT: on_tx_end(w, PCAPTOOL_STEP_COMMIT, p); break;
    case FBW_OP_COMMIT_RETAINING: on_tx_end(w, PCAPTOOL_STEP_COMMIT_RETAINING, p); break;
    case FBW_OP_ROLLBACK: on_tx_end(w, PCAPTOOL_STEP_ROLLBACK, p); break;
    case FBW_OP_ROLLBACK_RETAINING: on_tx_end(w, PCAPTOOL_STEP_ROLLBACK_RETAINING, p); break;
    case FBW_OP_ALLOCATE_STATEMENT: on_allocate(w); break;
    case FBW_OP_PREPARE_STATEMENT: on_prepare(w, p); break;
    case FBW_OP_EXECUTE: case FBW_OP_EXECUTE2: on_execute(w, d, p); break;
    case FBW_OP_FETCH: on_fetch(w, p); break;
    case FBW_OP_FETCH_SCROLL: on_fetch_scroll(w, p); break;
    case FBW_OP_INFO_CURSOR: on_info_cursor(w, p); break;
    case FBW_OP_FREE_STATEMENT: on_free(w, p); break;
    case FBW_OP_EXEC_IMMEDIATE: case FBW_OP_EXEC_IMMEDIATE2: on_immediate(w, d, p); break;
    case FBW_OP_OPEN_BLOB: case FBW_OP_OPEN_BLOB2: on_open_blob(w, p); break;
    case FBW_OP_GET_SEGMENT: case FBW_OP_SEEK_BLOB: case FBW_OP_INFO_BLOB: on_blob_op(w, p); break;
    case FBW_OP_INFO_DATABASE: case FBW_OP_INFO_TRANSACTION: on_info_other(w, p); break;
    case FBW_OP_CREATE_BLOB: case FBW_OP_CREATE_BLOB2: on_create_blob(w, p); break;
    case FBW_OP_PUT_SEGMENT: case FBW_OP_BATCH_SEGMENTS: on_segment(w, p); break;
    case FBW_OP_CLOSE_BLOB: case FBW_OP_CANCEL_BLOB: on_blob_end(w, p); break;
    case FBW_OP_BATCH_CREATE: on_batch_create(w, p); break;
    case FBW_OP_BATCH_MSG: on_batch_msg(w, d, p); break;
    case FBW_OP_BATCH_EXEC: on_batch_exec(w, p); break;
    case FBW_OP_INFO_SQL: on_info_sql(w, p); break;
    case FBW_OP_COMPILE:
        on_compile(w, p);
        w->not_replayed[p->op]++;
        break;
    case FBW_OP_DETACH: case FBW_OP_DISCONNECT:
        if (!w->t_detach)
            w->t_detach = w->now;
        break;
    default:
        if (!session_op(p->op) && p->op >= 0 && p->op <= FBW_OP_MAX)
            w->not_replayed[p->op]++;
        break;
    }
}

/* ---- server packets: results, and the replies that name handles ---- */

uint64_t pcaptool_row_hash(const fbw_value *v, const fbw_msgfmt *f)
{
    uint64_t h = 1469598103934665603u;
    fbw_buf t;
    fbw_buf_init(&t);
    for (uint16_t i = 0; i < f->n; i++) {
        fbw_err err;
        fbw_buf_reset(&t);
        if (v[i].is_null || f->cols[i].type == FBW_SQL_NULL)
            fbw_buf_append(&t, "\0", 1);
        else if (blobish(f->cols[i].type))
            fbw_buf_puts(&t, "<blob>"); /* an id: each server gives its own */
        else if (fbw_value_to_text(&v[i], &f->cols[i], NULL, &t, &err) != FBW_OK)
            fbw_buf_puts(&t, "?");
        fbw_buf_append(&t, "\x1f", 1);
        const uint8_t *b = fbw_buf_head(&t);
        for (size_t k = 0; k < fbw_buf_avail(&t); k++)
            h = (h ^ b[k]) * 1099511628211u;
    }
    fbw_buf_free(&t);
    return h;
}

/* A row of the slot's current execution (into r: its result, or a scroll step's), decoded with the
 * format the client asked for. Blob ids are kept for the execution's rows. */
static void take_row(pcaptool_workload *w, const fbw_dec *d, int slot, fbw_bytes msg,
                     pcaptool_result *r)
{
    int exec_row = at(w, w->slot[slot].exec) && r == &at(w, w->slot[slot].exec)->result;
    r->rows = r->rows < 0 ? 1 : r->rows + 1;
    wl_slot *sl = &w->slot[slot];
    if (!sl->have_fmt) {
        r->unknown = 1;
        return;
    }
    fbw_value *v = calloc(sl->n ? sl->n : 1, sizeof *v);
    fbw_msgfmt f = {sl->cols, sl->n, sl->n};
    fbw_err err;
    if (!v) {
        w->nomem = 1;
        return;
    }
    if (fbw_msg_decode(msg, &f, fbw_dec_protocol(d), v, &err) == FBW_OK) {
        r->hash += pcaptool_row_hash(v, &f);
        for (uint16_t k = 0; exec_row && k < f.n; k++)
            if (!v[k].is_null && (f.cols[k].type == FBW_SQL_BLOB || f.cols[k].type == FBW_SQL_QUAD))
                bid_put(w, v[k].u.quad.high, v[k].u.quad.low, sl->exec, (uint32_t)(r->rows - 1), k);
    } else {
        r->unknown = 1;
    }
    free(v);
}

/* op_exec_immediate2's output row (op_sql_response), decoded with the client's output BLR. */
static void imm_row(pcaptool_workload *w, const fbw_dec *d, const fbw_pkt *p)
{
    const size_t *i = fbw_ring_at(&w->imm_wait, 0);
    pcaptool_step *s = i && *i ? at(w, *i) : NULL;
    if (!s) {
        w->late += i && *i; /* handed on already */
        return;
    }
    pcaptool_result *r = &s->result;
    if (!s->out_n)
        return; /* no output asked for: nothing to compare (the server answers with none) */
    if (r->rows < 0)
        r->rows = 0;
    r->eof = 1;
    if (!p->u.sqldata.messages)
        return;
    r->rows++;
    fbw_msgfmt f = {s->out_cols, s->out_n, s->out_n};
    fbw_value *v = calloc(f.n ? f.n : 1, sizeof *v);
    fbw_err err;
    if (!v) {
        w->nomem = 1;
        return;
    }
    if (s->out_cols && fbw_msg_decode(p->u.sqldata.msg, &f, fbw_dec_protocol(d), v, &err) == FBW_OK) {
        r->hash += pcaptool_row_hash(v, &f);
        for (uint16_t k = 0; k < f.n; k++) /* a blob id returned (RETURNING): readable too */
            if (!v[k].is_null && (f.cols[k].type == FBW_SQL_BLOB || f.cols[k].type == FBW_SQL_QUAD))
                bid_put(w, v[k].u.quad.high, v[k].u.quad.low, *i, 0, k);
    } else {
        r->unknown = 1;
    }
    free(v);
}

/* The answer to an op_fetch_scroll: its row, or none (status 100: past either end). */
static void scroll_result(pcaptool_workload *w, const fbw_dec *d, const fbw_pkt *p)
{
    pcaptool_step *s = at(w, w->scroll_step);
    if (!s) {
        w->late++; /* handed on already */
        return;
    }
    if (p->op == FBW_OP_FETCH_RESPONSE && p->u.sqldata.status == 100)
        s->result.eof = 1;
    else if (p->u.sqldata.messages && s->stmt > 0)
        take_row(w, d, s->stmt, p->u.sqldata.msg, &s->result);
}

static void server_result(pcaptool_workload *w, const fbw_dec *d, const fbw_pkt *p)
{
    if (w->scroll_step) {
        scroll_result(w, d, p);
        return;
    }
    int slot = w->fetching;
    if (slot <= 0 || !w->slot[slot].exec)
        return;
    if (!at(w, w->slot[slot].exec)) {
        w->late++; /* its execution was handed on (streaming) */
        return;
    }
    pcaptool_result *r = &at(w, w->slot[slot].exec)->result;
    if (p->op == FBW_OP_FETCH_RESPONSE && p->u.sqldata.status == 100) {
        r->eof = 1;
        if (r->rows < 0)
            r->rows = 0;
    } else if (p->u.sqldata.messages) {
        take_row(w, d, slot, p->u.sqldata.msg, r);
    } else if (p->op == FBW_OP_FETCH_RESPONSE && r->rows < 0) {
        r->rows = 0;
    }
    if (p->op == FBW_OP_SQL_RESPONSE) {
        r->eof = 1;
        if (r->rows < 0)
            r->rows = 0;
    }
}

static void server_info(pcaptool_workload *w, const fbw_pkt *p)
{
    int slot;
    if (!fbw_ring_pop(&w->info_wait, &slot))
        return;
    if (slot > 0 && w->slot[slot].exec && !at(w, w->slot[slot].exec)) {
        w->late++; /* the record counts of an execution already handed on */
        return;
    }
    if (slot <= 0 || !at(w, w->slot[slot].exec) || !fbw_status_is_success(p->u.resp.status))
        return;
    uint64_t affected = 0, selected = 0;
    fbw_err err;
    if (fbw_info_records(p->u.resp.data.p, p->u.resp.data.n, &affected, &selected, &err) ==
        FBW_OK)
        at(w, w->slot[slot].exec)->result.affected = (int64_t)affected;
}

/* op_info_cursor's answer: the record count the capture got (rows -1 when it failed or holds none). */
static void server_count(pcaptool_workload *w, const fbw_pkt *p)
{
    size_t i = 0;
    if (!fbw_ring_pop(&w->count_wait, &i) || !i)
        return;
    pcaptool_step *s = at(w, i);
    if (!s) {
        w->late++; /* handed on already */
        return;
    }
    int64_t n = -1;
    fbw_err err;
    s->result.rows = fbw_status_is_success(p->u.resp.status) &&
                             fbw_info_cursor_count(p->u.resp.data.p, p->u.resp.data.n, &n, &err) ==
                                 FBW_OK
                         ? n
                         : -1;
}

static void server_packet(pcaptool_workload *w, const fbw_dec *d, const fbw_pkt *p)
{
    int32_t answering = fbw_dec_answering(d);
    if (answering == FBW_OP_EXEC_IMMEDIATE2) {
        if (p->op == FBW_OP_SQL_RESPONSE) {
            imm_row(w, d, p);
            return;
        }
        if (p->op == FBW_OP_RESPONSE) {
            size_t i = 0;
            pcaptool_step *x = fbw_ring_pop(&w->imm_wait, &i) && i ? at(w, i) : NULL;
            w->late += i && !x; /* handed on already */
            if (x && !fbw_status_is_success(p->u.resp.status))
                x->result.rows = -1; /* failed: nothing to compare */
            else if (x && x->out_n && x->result.rows < 0)
                x->result.rows = 0;
        }
    }
    if (p->op == FBW_OP_RESPONSE && answering == FBW_OP_GET_SEGMENT)
        on_segment_reply(w, p);
    if (p->op == FBW_OP_FETCH_RESPONSE || p->op == FBW_OP_SQL_RESPONSE)
        server_result(w, d, p);
    if (p->op == FBW_OP_RESPONSE && fbw_dec_answering(d) == FBW_OP_INFO_SQL)
        server_info(w, p);
    if (p->op == FBW_OP_RESPONSE && fbw_dec_answering(d) == FBW_OP_INFO_CURSOR)
        server_count(w, p);
    if (p->op == FBW_OP_BATCH_CS)
        on_batch_cs(w, p);
    const wl_wait *q = fbw_ring_at(&w->wait, 0);
    if (p->op != FBW_OP_RESPONSE || !q)
        return;
    if (q->op != fbw_dec_answering(d))
        return; /* answers a request that names no handle */
    wl_wait x;
    fbw_ring_pop(&w->wait, &x);
    uint16_t obj = p->u.resp.object;
    if (!fbw_status_is_success(p->u.resp.status) || obj == 0)
        return;
    if (x.op == FBW_OP_ALLOCATE_STATEMENT) {
        bind(w, &w->sth, &w->nsth, &w->sth_cap, obj, x.slot);
    } else if (x.op == FBW_OP_OPEN_BLOB || x.op == FBW_OP_OPEN_BLOB2) {
        bind(w, &w->blh, &w->nblh, &w->blh_cap, obj, x.slot);
    } else if (x.op == FBW_OP_CREATE_BLOB || x.op == FBW_OP_CREATE_BLOB2) {
        bind(w, &w->blh, &w->nblh, &w->blh_cap, obj, x.slot);
        if (at(w, (size_t)x.slot)) {
            at(w, (size_t)x.slot)->blob_hi = p->u.resp.blob_hi;
            at(w, (size_t)x.slot)->blob_lo = p->u.resp.blob_lo;
        }
    } else
        bind(w, &w->txh, &w->ntxh, &w->txh_cap, obj, x.slot);
}

void pcaptool_workload_packet(pcaptool_workload *w, const fbw_dec *d, int from_client,
                              const fbw_pkt *p, uint64_t ts_ns)
{
    w->packets++;
    w->now = ts_ns;
    if (!w->t_first)
        w->t_first = ts_ns;
    if (w->close_step && from_client && w->last_from_client) {
        /* the close went in the same write as this request: nobody waited for its reply */
        pcaptool_step *c = at(w, w->close_step);
        if (c && c->nacts)
            c->acts[c->nacts - 1].burst = 0;
    }
    w->close_step = 0;
    if (from_client) {
        client_packet(w, d, p);
    } else {
        server_packet(w, d, p);
        if (at(w, w->cur)) {
            pcaptool_step *s = at(w, w->cur);
            if (w->last_from_client)
                s->round_trips++;
            if (ts_ns >= s->t_req)
                s->t_end = ts_ns;
        }
    }
    w->last_from_client = from_client;
    w->t_last = ts_ns;
}

/* ---- streaming: handing on the steps that are final ---- */

/* A blob step stays until its transaction ends: an execute of that transaction may send its id. */
static int blob_live(pcaptool_workload *w, size_t k, const pcaptool_step *b)
{
    for (size_t i = k + 1; i <= w->n; i++) {
        const pcaptool_step *s = at(w, i);
        if (s->tx == b->tx && (s->kind == PCAPTOOL_STEP_COMMIT || s->kind == PCAPTOOL_STEP_ROLLBACK))
            return 0;
    }
    return b->tx != 0;
}

/* A blob read ends with the client's op_close_blob or op_cancel_blob (its last act). */
static int read_closed(const pcaptool_step *s)
{
    return s->nacts && (s->acts[s->nacts - 1].op == FBW_OP_CLOSE_BLOB ||
                        s->acts[s->nacts - 1].op == FBW_OP_CANCEL_BLOB);
}

/* What a client asks about an execution (its affected rows, more of its rows) it asks right after
 * it; a statement executed once and kept prepared (a driver's version query) would otherwise stay
 * its statement's current execution, and hold every later step of the connection back until the
 * window overflowed, so the replay waited for the reader to read that far. */
#define PCAPTOOL_EXEC_PIN_STEPS 64

/* Step k may still change: it gets the round trips and time of the replies coming now (the
 * latest step, or one a fetch or info request went back to), it is its statement's current
 * execution (rows, affected rows), its open fetch (more op_fetch), part of a batch not yet run or
 * not yet answered, or a blob its transaction may still send. */
static int pinned(pcaptool_workload *w, size_t k, const pcaptool_step *s)
{
    if (k == w->n || k == w->cur)
        return 1;
    if (s->stmt > 0 && s->stmt <= w->nstmt) {
        const wl_slot *sl = &w->slot[s->stmt];
        if ((sl->exec == k && w->n - k <= PCAPTOOL_EXEC_PIN_STEPS) || (size_t)w->fetch_step[s->stmt] == k)
            return 1;
        if ((sl->batch_from && k >= sl->batch_from) ||
            (sl->run_from && k >= sl->run_from && k <= sl->run_to))
            return 1;
    }
    if (s->kind == PCAPTOOL_STEP_FETCH_SCROLL && k == w->scroll_step)
        return 1; /* its row may still come */
    if (s->kind == PCAPTOOL_STEP_COUNT_CURSOR) {
        const size_t *q = fbw_ring_at(&w->count_wait, 0);
        return q && *q <= k; /* its count not answered yet */
    }
    if (s->kind == PCAPTOOL_STEP_BLOB_READ)
        return !read_closed(s); /* its capture result (bytes read) is complete at its close */
    return s->kind == PCAPTOOL_STEP_BLOB && blob_live(w, k, s);
}

size_t pcaptool_workload_final(pcaptool_workload *w, int ended, size_t window_max)
{
    size_t held = w->n - w->base, k = 0;
    if (ended)
        return held;
    while (k < held && !pinned(w, w->base + k + 1, &w->steps[k]))
        k++;
    if (window_max && held > window_max && k < held - window_max / 2)
        k = held - window_max / 2; /* something holds on too long: hand on the oldest anyway */
    return k;
}

void pcaptool_workload_take(pcaptool_workload *w, pcaptool_step *out, size_t k)
{
    size_t held = w->n - w->base;
    if (k > held)
        k = held;
    memcpy(out, w->steps, k * sizeof *out);
    memmove(w->steps, w->steps + k, (held - k) * sizeof *w->steps);
    w->base += k;
}
