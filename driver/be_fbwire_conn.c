/* SPDX-License-Identifier: MIT */
/* be_fbwire_conn.c - the native backend's core: opening an attachment (the client's options
 * from the driver's settings, the transactions' options, the pipeline), closing it, the
 * statement record's destructor, and the client's failures and waits as the backend's errors. */
#include "be_fbwire_conn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int iso_of(sbdrv_be_isolation i)
{
    switch (i) {
    case SBDRV_BE_ISO_READ_COMMITTED_NOREC: return FBW_ISO_READ_COMMITTED_NO_REC;
    case SBDRV_BE_ISO_READ_CONSISTENCY: return FBW_ISO_READ_CONSISTENCY;
    case SBDRV_BE_ISO_SNAPSHOT: return FBW_ISO_SNAPSHOT;
    case SBDRV_BE_ISO_SERIALIZABLE: return FBW_ISO_SERIALIZABLE;
    default: return FBW_ISO_READ_COMMITTED;
    }
}

/* Copy the client's error, or the connection's when the client has none. */
int be_fbwire_fail(sbdrv_be_conn *c, int rc, fbw_err *err)
{
    const fbw_err *e = fbw_client_error(c->client);
    if (e->code == FBW_OK)
        e = fbw_conn_error(c->conn);
    if (e->code != FBW_OK)
        *err = *e;
    else
        fbw_err_set(err, rc, "fbwire: %s", fbw_rc_name(rc));
    /* Once the connection failed (a wait timed out, the socket broke), every later call fails
     * with its own code (e.g. FBW_E_USAGE for a transaction that cannot start): report the loss. */
    if (fbw_conn_get_state(c->conn) == FBW_CS_FAILED && fbw_is_fatal(err->code)) {
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
int be_fbwire_server_error(const fbw_err *e, fbw_err *err)
{
    *err = *e;
    return e->code;
}

int be_fbwire_waited(sbdrv_be_conn *c, int rc, fbw_err *err)
{
    return rc ? be_fbwire_fail(c, rc, err) : FBW_OK;
}

int be_fbwire_wait_all(sbdrv_be_conn *c, fbw_err *err)
{
    return be_fbwire_waited(c, fbw_client_wait(c->client), err);
}

/* The usual end of queuing: wait for the replies, or report why the request was not queued. */
int be_fbwire_wait_queued(sbdrv_be_conn *c, int rc, fbw_err *err)
{
    return rc == FBW_OK ? be_fbwire_wait_all(c, err) : be_fbwire_fail(c, rc, err);
}

int be_fbwire_round_trip(sbdrv_be_conn *c, int (*fn)(void *), void *arg, fbw_err *err)
{
    return be_fbwire_waited(c, fbw_client_run(c->client, fn, arg), err);
}

/* ---- attach and detach ---- */

/* Before the client goes: a transaction with replies due is freed by its last reply. */
static void free_txs(sbdrv_be_conn *c)
{
    fbw_tx_free(c->explicit_tx);
    fbw_tx_free(c->own_tx);
    fbw_tx_free(c->shared[0]);
    fbw_tx_free(c->shared[1]);
}

int be_fbwire_attach(const sbdrv_be_conf *conf, int create, sbdrv_be_conn **out, fbw_err *err)
{
    *out = NULL;
    sbdrv_be_conn *c = calloc(1, sizeof *c);
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
    o.conn.statement_timeout_ms = conf->statement_timeout_ms;
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
    int rc = fbw_client_connect(conf->db, &o, &c->client, err);
    if (rc) {
        free(c);
        return rc;
    }
    c->conn = fbw_client_conn(c->client);
    fbw_pipe_opts po;
    fbw_pipe_opts_init(&po);
    po.wait = fbw_client_pipe_wait;
    po.wait_arg = c->client;
    if ((rc = fbw_pipe_new(c->conn, &po, &c->pipe, err)) != FBW_OK) {
        fbw_client_close(c->client);
        free(c);
        return rc;
    }
    if ((rc = fbw_tx_new(c->conn, &c->explicit_tx, err)) != FBW_OK ||
        (rc = fbw_tx_new(c->conn, &c->own_tx, err)) != FBW_OK ||
        (rc = fbw_tx_new(c->conn, &c->shared[0], err)) != FBW_OK ||
        (rc = fbw_tx_new(c->conn, &c->shared[1], err)) != FBW_OK) {
        free_txs(c);
        fbw_pipe_free(c->pipe);
        fbw_client_close(c->client);
        free(c);
        return rc;
    }
    fbw_pipe_begin(c->pipe, c->explicit_tx); /* pipelined transactions are explicit ones */
    fbw_tx_opts_init(&c->opts_rw);
    c->opts_rw.isolation = iso_of(conf->isolation);
    c->opts_rw.lock_timeout = conf->lock_timeout;
    c->opts_ro = c->opts_rw;
    c->opts_ro.isolation = FBW_ISO_READ_COMMITTED;
    c->opts_ro.read_only = 1;
    fbw_tx_opts_init(&c->opts_ac);
    c->opts_ac.lock_timeout = conf->lock_timeout;
    c->opts_ac.autocommit = 1;
    fbw_buf_init(&c->text);
    *out = c;
    return FBW_OK;
}

void be_fbwire_detach(sbdrv_be_conn *c)
{
    if (!c)
        return;
    be_fbwire_release_query(c);
    fbw_blobset_free(c->blobs); /* before the close: its blobs' closes go out with the detach */
    if (fbw_conn_get_state(c->conn) == FBW_CS_READY) {
        if (tx_live(c->explicit_tx))
            fbw_tx_rollback(c->explicit_tx);
        for (int i = 0; i < 2; i++)
            if (tx_live(c->shared[i]))
                fbw_tx_commit(c->shared[i]);
        free_txs(c);                 /* each goes once its end is answered */
        fbw_client_close(c->client); /* detach waits for the queued ends too */
    } else {
        free_txs(c);
        fbw_client_abort(c->client);
    }
    fbw_buf_free(&c->text);
    fbw_pipe_free(c->pipe);
    free(c);
}

/* ---- statement records ---- */

void be_fbwire_stmt_free(sbdrv_be_stmt *bs)
{
    if (!bs)
        return;
    fbw_stmt_free(bs->s);
    free(bs->vals);
    free(bs->num);
    free(bs);
}

/* The statement kept for unprepared DML stays prepared on the server, and Firebird counts the table
 * it names as in use (a DROP would fail). Any other statement releases it first: its DSQL_drop
 * rides in the same write as the new statement's requests. */
void be_fbwire_release_query(sbdrv_be_conn *c)
{
    be_fbwire_stmt_free(c->query);
    c->query = NULL;
}
