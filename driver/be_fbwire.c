/* SPDX-License-Identifier: MIT */
/* be_fbwire.c - the native backend: fbwire's own protocol client behind the backend vtable.
 *
 * Where fbclient waits after every request, this backend queues what belongs together and waits
 * once (docs/design.md, Pipelining). Statements outside BEGIN (--fbwire-autocommit):
 *   - shared (default): one read-committed transaction with isc_tpb_autocommit, so the engine
 *     commits (retaining) every statement that changed something, durably, before its reply;
 *     op_execute + op_info_sql(records) go out together, one round trip; the transaction is
 *     restarted every N statements or T ms (it would hold back garbage collection), the restart
 *     riding along with the next statement; DDL runs in a transaction of its own;
 *   - pipelined: a write gets its own transaction: op_transaction + op_execute +
 *     op_info_sql(records) + op_commit in one write, one round trip; a SELECT runs in a
 *     long-lived read-only read-committed transaction restarted like the shared one;
 *   - BEGIN queues op_transaction, which goes out with the first statement of the transaction;
 *   - a multi-row INSERT goes through the batch API on protocol 16+ (Firebird 4+: create, rows
 *     and execute in one round trip), else as one pipelined run of single-row executes.
 * --fbwire-pipeline=transaction: inside BEGIN ... COMMIT, executions of prepared statements are
 * queued without waiting (be_fbwire_pipe.c, on the library's pipeline mode); COMMIT of a
 * transaction that wrote nothing rides along with them (one round trip), a writing transaction
 * is committed only after every reply was checked (two round trips).
 * --fbwire-autocommit=per-statement and =shared behave like the fbclient backend's modes so that
 * the two clients can be compared request for request.
 * This file is the connection and the vtable; the other parts are listed in be_fbwire.h. */
#include "be_fbwire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int iso_of(fbw_be_isolation i)
{
    switch (i) {
    case FBW_BE_ISO_READ_COMMITTED_NOREC: return FBW_ISO_READ_COMMITTED_NO_REC;
    case FBW_BE_ISO_READ_CONSISTENCY: return FBW_ISO_READ_CONSISTENCY;
    case FBW_BE_ISO_SNAPSHOT: return FBW_ISO_SNAPSHOT;
    case FBW_BE_ISO_SERIALIZABLE: return FBW_ISO_SERIALIZABLE;
    default: return FBW_ISO_READ_COMMITTED;
    }
}

/* Copy the client's error, or the connection's when the client has none. */
int fbw_bew_fail(fbw_be_conn *c, int rc, fbw_err *err)
{
    const fbw_err *e = fbw_client_error(c->cl);
    if (e->code == FBW_OK)
        e = fbw_conn_error(c->c);
    if (e->code != FBW_OK)
        *err = *e;
    else
        fbw_err_set(err, rc, "fbwire: %s", fbw_rc_name(rc));
    /* Once the connection failed (a wait timed out, the socket broke), every later call fails
     * with its own code (e.g. FBW_E_USAGE for a transaction that cannot start): report the loss. */
    if (fbw_conn_get_state(c->c) == FBW_CS_FAILED && fbw_is_fatal(err->code)) {
        /* A pipelined transaction: name the oldest queued statement still without its reply. */
        const char *what = NULL;
        unsigned k = c->pipe ? fbw_pipe_oldest_unanswered(c->pipe, &what) : 0;
        size_t n = strlen(err->msg);
        if (k && n < sizeof err->msg)
            snprintf(err->msg + n, sizeof err->msg - n, " (oldest unanswered: statement %u of "
                     "the pipelined transaction, '%s')", k, what ? what : "");
        return err->code;
    }
    return rc;
}

/* A server error of a request becomes the operation's error. */
int fbw_bew_server_error(const fbw_err *e, fbw_err *err)
{
    *err = *e;
    return e->code;
}

int fbw_bew_wait_all(fbw_be_conn *c, fbw_err *err)
{
    int rc = fbw_client_wait(c->cl);
    return rc ? fbw_bew_fail(c, rc, err) : FBW_OK;
}

typedef struct queued {
    int (*fn)(void *arg);
    void *arg;
} queued;

int fbw_bew_run(fbw_be_conn *c, int (*fn)(void *), void *arg, fbw_err *err)
{
    int rc = fbw_client_run(c->cl, fn, arg);
    return rc ? fbw_bew_fail(c, rc, err) : FBW_OK;
}

/* ---- connect ---- */

static int fbwire_global_init(fbw_err *err)
{
    (void)err;
    return FBW_OK;
}

static int open_conn(const fbw_be_conf *conf, int create, fbw_be_conn **out, fbw_err *err)
{
    *out = NULL;
    fbw_be_conn *c = calloc(1, sizeof *c);
    if (!c)
        return fbw_err_set(err, FBW_E_NOMEM, "fbwire: out of memory");
    c->conf = conf;
    fbw_client_opts o;
    fbw_client_opts_init(&o);
    o.conn.user = conf->user;
    o.conn.password = conf->password;
    o.conn.auth_list = conf->auth && conf->auth[0] ? conf->auth : NULL;
    o.conn.compress = conf->compress;
    o.conn.row_format = conf->row_format;
    o.conn.process_name = "sysbench";
    const char *wc = conf->wire_crypt ? conf->wire_crypt : "enabled";
    o.conn.wire_crypt = !strcasecmp(wc, "required")   ? FBW_WIRE_CRYPT_REQUIRED
                        : !strcasecmp(wc, "disabled") ? FBW_WIRE_CRYPT_DISABLED
                                                      : FBW_WIRE_CRYPT_ENABLED;
    o.conn.create = create;
    o.conn.page_size = conf->page_size;
    if (conf->connect_timeout > 0)
        o.connect_timeout_ms = conf->connect_timeout * 1000;
    if (conf->timeout > 0)
        o.timeout_ms = conf->timeout * 1000;
    int rc = fbw_client_connect(conf->db, &o, &c->cl, err);
    if (rc) {
        free(c);
        return rc;
    }
    c->c = fbw_client_conn(c->cl);
    fbw_pipe_opts po;
    fbw_pipe_opts_init(&po);
    po.wait = fbw_client_pipe_wait;
    po.wait_arg = c->cl;
    if ((rc = fbw_pipe_new(c->c, &po, &c->pipe, err)) != FBW_OK) {
        fbw_client_close(c->cl);
        free(c);
        return rc;
    }
    fbw_tx_init(&c->exp, c->c);
    fbw_pipe_begin(c->pipe, &c->exp); /* pipelined transactions are explicit ones */
    fbw_tx_init(&c->own, c->c);
    fbw_tx_init(&c->shared[0], c->c);
    fbw_tx_init(&c->shared[1], c->c);
    fbw_tx_opts_init(&c->rw);
    c->rw.isolation = iso_of(conf->isolation);
    c->rw.lock_timeout = conf->lock_timeout;
    c->ro = c->rw;
    c->ro.isolation = FBW_ISO_READ_COMMITTED;
    c->ro.read_only = 1;
    fbw_tx_opts_init(&c->ac);
    c->ac.lock_timeout = conf->lock_timeout;
    c->ac.autocommit = 1;
    fbw_buf_init(&c->text);
    *out = c;
    return FBW_OK;
}

static int fbwire_connect(const fbw_be_conf *conf, fbw_be_conn **out, fbw_err *err)
{
    return open_conn(conf, 0, out, err);
}

static int fbwire_create(const fbw_be_conf *conf, fbw_be_conn **out, fbw_err *err)
{
    return open_conn(conf, 1, out, err);
}

static void fbwire_disconnect(fbw_be_conn *c)
{
    if (!c)
        return;
    fbw_bew_release_query(c);
    fbw_blobset_free(c->blobs); /* before the close: its blobs' closes go out with the detach */
    if (fbw_conn_get_state(c->c) == FBW_CS_READY) {
        if (tx_live(&c->exp))
            fbw_tx_rollback(&c->exp);
        for (int i = 0; i < 2; i++)
            if (tx_live(&c->shared[i]))
                fbw_tx_commit(&c->shared[i]);
        fbw_client_close(c->cl); /* detach waits for the queued ends too */
    } else {
        fbw_client_abort(c->cl);
    }
    fbw_buf_free(&c->text);
    fbw_pipe_free(c->pipe);
    free(c);
}

static int fbwire_stats(fbw_be_conn *c, fbw_stats *out, fbw_err *err)
{
    (void)err;
    *out = *fbw_conn_stats(c->c);
    return FBW_OK;
}

static const fbw_stats *fbwire_stats_ref(fbw_be_conn *c) { return fbw_conn_stats(c->c); }

/* The library follows every request that may commit (fbw_conn_outcome_unknown). */
static int fbwire_outcome_unknown(fbw_be_conn *c)
{
    return c && c->c ? fbw_conn_outcome_unknown(c->c) : -1;
}

const fbw_backend fbw_backend_fbwire = {
    .name = "fbwire",
    .global_init = fbwire_global_init,
    .connect = fbwire_connect,
    .create = fbwire_create,
    .disconnect = fbwire_disconnect,
    .begin = fbw_bew_begin,
    .commit = fbw_bew_commit,
    .rollback = fbw_bew_rollback,
    .prepare = fbw_bew_prepare,
    .param_count = fbw_bew_param_count,
    .execute = fbw_bew_execute,
    .close = fbw_bew_close,
    .exec = fbw_bew_exec,
    .bulk_insert = fbw_bew_bulk_insert,
    .fetch_rows = fbw_bew_fetch_rows,
    .stats = fbwire_stats,
    .stats_ref = fbwire_stats_ref,
    .outcome_unknown = fbwire_outcome_unknown,
};
