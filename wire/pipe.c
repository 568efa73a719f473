/* SPDX-License-Identifier: MIT */
/* pipe.c - pipeline mode (pipe.h): the queue of requests in flight, sync points, caps, the first
 * error, and commit only after the check. Sans-I/O: every wait is the caller's callback. */
#include "pipe.h"

#include <stdlib.h>
#include <string.h>

/* One queued request: its own result, and what names it. Entries are heap objects that never
 * move: the statement writes replies into `out` by address until they have all arrived. */
typedef struct ent {
    struct ent *next;
    fbw_exec_out out;
    fbw_blob *blob;                /* a blob's requests, until checked */
    int is_blob;                   /* else an execution */
    unsigned k;                    /* its place in the transaction, from 1 */
    char what[FBW_PIPE_WHAT_MAX];
} ent;

typedef struct list {
    ent *head, *tail;
} list;

struct fbw_pipe {
    fbw_conn *c;
    fbw_pipe_opts o;
    fbw_tx *tx;
    list queued;   /* not checked yet, in order */
    list checked;  /* checked at the last sync: results still readable */
    ent *spare;    /* for reuse */
    unsigned nqueued, n;
    int writes;    /* a request may have written: COMMIT only after the check */
    int failed;    /* a request failed: report it, never commit */
    fbw_err err;
};

void fbw_pipe_opts_init(fbw_pipe_opts *o)
{
    memset(o, 0, sizeof *o);
    o->max_replies = FBW_PIPE_MAX_REPLIES;
    o->max_bytes = FBW_PIPE_MAX_BYTES;
}

int fbw_pipe_new(fbw_conn *c, const fbw_pipe_opts *o, fbw_pipe **out, fbw_err *err)
{
    *out = NULL;
    if (!c || !o || !o->wait)
        return fbw_err_set(err, FBW_E_USAGE,
                           "pipeline: a connection and a wait callback are needed");
    fbw_pipe *p = calloc(1, sizeof *p);
    if (!p)
        return fbw_err_set(err, FBW_E_NOMEM, "pipeline: out of memory");
    p->c = c;
    p->o = *o;
    if (!p->o.max_replies)
        p->o.max_replies = FBW_PIPE_MAX_REPLIES;
    if (!p->o.max_bytes)
        p->o.max_bytes = FBW_PIPE_MAX_BYTES;
    *out = p;
    return FBW_OK;
}

static void free_chain(ent *e)
{
    while (e) {
        ent *next = e->next;
        free(e);
        e = next;
    }
}

void fbw_pipe_free(fbw_pipe *p)
{
    if (!p)
        return;
    free_chain(p->queued.head);
    free_chain(p->checked.head);
    free_chain(p->spare);
    free(p);
}

static void append(list *l, ent *e)
{
    e->next = NULL;
    if (l->tail)
        l->tail->next = e;
    else
        l->head = e;
    l->tail = e;
}

/* Move a whole list onto the spare chain. */
static void recycle(fbw_pipe *p, list *l)
{
    if (!l->head)
        return;
    l->tail->next = p->spare;
    p->spare = l->head;
    l->head = l->tail = NULL;
}

static int tx_live(const fbw_tx *t)
{
    return t && fbw_tx_live(t);
}

/* A request could not be queued: the connection's error, or the code named. */
static int local_fail(const fbw_pipe *p, int rc, fbw_err *err)
{
    const fbw_err *e = fbw_conn_error(p->c);
    if (e->code != FBW_OK)
        *err = *e;
    else
        fbw_err_set(err, rc, "fbwire: %s", fbw_rc_name(rc));
    return rc;
}

static int wait_all(fbw_pipe *p, fbw_err *err) { return p->o.wait(p->o.wait_arg, err); }

static int pipe_error(const fbw_pipe *p, fbw_err *err)
{
    *err = p->err;
    return p->err.code ? p->err.code : FBW_E_SERVER;
}

static const fbw_err *ent_error(const ent *e)
{
    static const fbw_err none; /* a blob already checked */
    if (e->is_blob)
        return e->blob ? fbw_blob_error(e->blob) : &none;
    return &e->out.err;
}

/* Check the answered requests in order: the first error becomes the pipeline's. */
static void collect(fbw_pipe *p)
{
    for (ent *e = p->queued.head; e; e = e->next) {
        const fbw_err *x = ent_error(e);
        if (x->code == FBW_OK || p->failed)
            continue;
        p->failed = 1;
        p->err = *x;
        const char *open = e->what[0] ? " (" : "", *close = e->what[0] ? ")" : "";
        fbw_err_prefix(&p->err, "%s %u of %u of the pipelined transaction%s%s%s",
                       e->is_blob ? "blob" : "statement", e->k, p->n, open, e->what, close);
    }
    for (ent *e = p->queued.head; e; e = e->next)
        e->blob = NULL; /* checked: the caller may free it from now on */
    if (p->queued.head) {
        recycle(p, &p->checked);
        p->checked = p->queued;
        p->queued.head = p->queued.tail = NULL;
    }
    p->nqueued = 0;
}

/* The transaction ended: forget its pipeline (results stay readable until the next request). */
static void reset(fbw_pipe *p)
{
    collect(p);
    p->n = 0;
    p->writes = 0;
    p->failed = 0;
    fbw_err_clear(&p->err);
}

void fbw_pipe_begin(fbw_pipe *p, fbw_tx *tx)
{
    reset(p);
    recycle(p, &p->checked);
    p->tx = tx;
}

int fbw_pipe_sync(fbw_pipe *p, fbw_err *err)
{
    if (!p->queued.head && fbw_conn_outstanding(p->c) == 0)
        return FBW_OK;
    int rc = wait_all(p, err);
    if (rc == FBW_OK)
        collect(p);
    return rc;
}

const fbw_err *fbw_pipe_error(const fbw_pipe *p) { return &p->err; }
unsigned fbw_pipe_queued(const fbw_pipe *p) { return p->nqueued; }
unsigned fbw_pipe_count(const fbw_pipe *p) { return p->n; }
int fbw_pipe_writes(const fbw_pipe *p) { return p->writes; }

unsigned fbw_pipe_oldest_unanswered(const fbw_pipe *p, const char **what)
{
    for (const ent *e = p->queued.head; e; e = e->next)
        if (e->is_blob || !e->out.done) {
            if (what)
                *what = e->what;
            return e->k;
        }
    if (what)
        *what = NULL;
    return 0;
}

static ent *find(const list *l, unsigned k)
{
    if (l->tail && l->tail->k == k)
        return l->tail; /* the usual question: the latest request */
    for (ent *e = l->head; e; e = e->next)
        if (e->k == k)
            return e;
    return NULL;
}

fbw_exec_out *fbw_pipe_result(fbw_pipe *p, unsigned k)
{
    ent *e = find(&p->queued, k);
    if (!e)
        e = find(&p->checked, k);
    return e && !e->is_blob && k > 0 ? &e->out : NULL;
}

/* A fresh entry; the results of the last sync are given up here, when the next request comes.
 * Its result is not cleared: fbw_stmt_execute_out clears it once the execution is queued, and a
 * blob's is never read. */
static ent *take(fbw_pipe *p)
{
    recycle(p, &p->checked);
    ent *e = p->spare;
    if (e)
        p->spare = e->next;
    else if (!(e = malloc(sizeof *e)))
        return NULL;
    e->next = NULL;
    e->blob = NULL;
    e->is_blob = 0;
    return e;
}

static void put_back(fbw_pipe *p, ent *e)
{
    e->next = p->spare;
    p->spare = e;
}

static void enqueue(fbw_pipe *p, ent *e, const char *what, unsigned *k)
{
    e->k = ++p->n;
    /* a bounded copy, not snprintf: this runs for every request (a tenth of an execution's cost) */
    size_t n = what ? strnlen(what, sizeof e->what - 1) : 0;
    memcpy(e->what, what ? what : "", n);
    e->what[n] = 0;
    append(&p->queued, e);
    p->nqueued++;
    if (k)
        *k = e->k;
}

static int over_caps(fbw_pipe *p)
{
    const uint8_t *b;
    size_t n = 0;
    if (fbw_conn_outstanding(p->c) >= (int)p->o.max_replies)
        return 1;
    return fbw_conn_pending(p->c, &b, &n) != FBW_OK || n >= p->o.max_bytes;
}

/* After a request was queued: a sync when a cap is reached. */
static int after_queue(fbw_pipe *p, fbw_err *err)
{
    if (!over_caps(p))
        return FBW_OK;
    int rc = fbw_pipe_sync(p, err);
    return rc ? rc : p->failed ? pipe_error(p, err) : FBW_OK;
}

int fbw_pipe_execute(fbw_pipe *p, fbw_stmt *s, const fbw_value *params, unsigned flags,
                     const char *what, unsigned *k, fbw_err *err)
{
    if (p->failed)
        return pipe_error(p, err);
    int st = fbw_stmt_type(s);
    if (st == FBW_STMT_START_TRANS || st == FBW_STMT_COMMIT || st == FBW_STMT_ROLLBACK)
        return fbw_err_set(err, FBW_E_USAGE,
                           "pipeline: a statement that starts or ends a transaction is not queued");
    ent *e = take(p);
    if (!e)
        return fbw_err_set(err, FBW_E_NOMEM, "pipeline: out of memory");
    int rc;
    while ((rc = fbw_stmt_execute_out(s, p->tx, params, flags, &e->out)) == FBW_WAIT) {
        rc = fbw_pipe_sync(p, err); /* a handle is not known yet: this request must wait */
        if (rc == FBW_OK && p->failed)
            rc = pipe_error(p, err);
        if (rc) {
            put_back(p, e);
            return rc;
        }
    }
    if (rc) {
        put_back(p, e);
        return local_fail(p, rc, err);
    }
    enqueue(p, e, what, k);
    if (st != FBW_STMT_SELECT)
        p->writes = 1;
    return after_queue(p, err);
}

int fbw_pipe_blob(fbw_pipe *p, fbw_blob *b, const char *what, unsigned *k, fbw_err *err)
{
    if (p->failed)
        return pipe_error(p, err);
    ent *e = take(p);
    if (!e)
        return fbw_err_set(err, FBW_E_NOMEM, "pipeline: out of memory");
    e->blob = b;
    e->is_blob = 1;
    enqueue(p, e, what, k);
    p->writes = 1;
    return after_queue(p, err);
}

/* The end of t was answered: its own error; a failed commit leaves t open, so roll it back. */
static int end_checked(fbw_pipe *p, fbw_tx *t, int commit, fbw_err *err)
{
    if (fbw_tx_error(t)->code == FBW_OK)
        return FBW_OK;
    *err = *fbw_tx_error(t);
    int rc = err->code;
    if (commit && tx_live(t)) {
        fbw_tx_rollback(t);
        fbw_err keep = *err;
        wait_all(p, err);
        *err = keep;
    }
    return rc;
}

static int end_tx(fbw_pipe *p, fbw_tx *t, int commit, fbw_err *err)
{
    if (!tx_live(t))
        return FBW_OK;
    int rc = commit ? fbw_tx_commit(t) : fbw_tx_rollback(t);
    rc = rc ? local_fail(p, rc, err) : wait_all(p, err);
    return rc ? rc : end_checked(p, t, commit, err);
}

int fbw_pipe_commit(fbw_pipe *p, fbw_err *err)
{
    fbw_tx *t = p->tx;
    int rc;
    if (!p->failed && !p->writes && tx_live(t)) {
        /* Only SELECTs were queued: COMMIT rides along, one round trip. A failed SELECT is still
         * reported, and nothing was written that could be lost. */
        rc = fbw_tx_commit(t);
        rc = rc ? local_fail(p, rc, err) : fbw_pipe_sync(p, err);
        if (rc == FBW_OK)
            rc = p->failed ? pipe_error(p, err) : end_checked(p, t, 1, err);
    } else {
        /* Every reply is checked before COMMIT is sent: a failed request rolls back. */
        rc = fbw_pipe_sync(p, err);
        if (rc == FBW_OK && p->failed) {
            rc = pipe_error(p, err);
            fbw_err keep = *err;
            end_tx(p, t, 0, err);
            *err = keep;
        } else if (rc == FBW_OK) {
            rc = end_tx(p, t, 1, err);
        }
    }
    reset(p);
    return rc;
}

int fbw_pipe_rollback(fbw_pipe *p, fbw_err *err)
{
    int rc = end_tx(p, p->tx, 0, err); /* also answers whatever was queued */
    if (rc == FBW_OK)
        rc = fbw_pipe_sync(p, err);
    reset(p);
    return rc;
}
