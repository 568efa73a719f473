/* SPDX-License-Identifier: MIT */
/* be_fbwire_conn.h - the native backend's core, the layer every other part stands on: the
 * attachment and statement records, opening and closing an attachment, and turning the client's
 * failures and waits into the backend's errors. Calls only the library (wire/). Internal to the
 * sysbench driver; driver/be_fbwire.c lists the backend's layers. */
#ifndef BE_FBWIRE_CONN_H
#define BE_FBWIRE_CONN_H

#include "backend.h"

#include "fbwire.h"

struct sbdrv_be_conn {
    const sbdrv_be_conf *conf;
    fbw_client *client;
    fbw_conn *conn;
    fbw_tx *explicit_tx; /* explicit transaction (BEGIN) */
    int explicit_open;
    fbw_tx *own_tx;      /* a statement's own transaction (autocommit) */
    fbw_tx *shared[2];   /* shared autocommit / pipelined read-only transaction; a restart
                            commits one while starting the other in the same write */
    int shared_live;     /* shared[shared_live] is the live one */
    sbdrv_be_shared_age shared_age; /* of shared[shared_live] */
    fbw_tx_opts opts_rw, opts_ro, opts_ac; /* read-write, read-only, shared autocommit */
    fbw_buf text;        /* scratch for result text */
    fbw_blobset *blobs;  /* the blobs of a result, read together (created on first use) */
    struct sbdrv_be_stmt *query; /* re-prepared for each unprepared DML query (its handle is kept) */
    /* pipelined transaction (--fbwire-pipeline=transaction): the library's pipeline (pipe.h) */
    fbw_pipe *pipe;
    unsigned reader;                 /* the latest execution's number: its rows may still be read */
    struct sbdrv_be_stmt *reader_bs;
};

struct sbdrv_be_stmt {
    sbdrv_be_conn *c;
    fbw_stmt *s;
    unsigned nparams;
    fbw_value *vals;     /* nparams */
    char (*num)[48];     /* nparams scratch strings for numbers bound to text columns */
    char what[96];       /* start of the SQL, to name the statement in a pipelined error */
};

static inline int tx_live(const fbw_tx *t) { return fbw_tx_live(t); }

/* Attach (create: create the database first), set up the transactions' options and the
 * pipeline; *out stays NULL on failure. */
int be_fbwire_attach(const sbdrv_be_conf *conf, int create, sbdrv_be_conn **out, fbw_err *err);
/* Roll back the explicit transaction, commit the shared ones, detach (or drop a lost
 * attachment) and free c. Statements must have been closed before. */
void be_fbwire_detach(sbdrv_be_conn *c);

/* Free a statement record and its library statement; NULL is a no-op. */
void be_fbwire_stmt_free(sbdrv_be_stmt *bs);
/* Free the statement kept for unprepared DML (c->query), if any. */
void be_fbwire_release_query(sbdrv_be_conn *c);

/* The client's (or connection's) error for a failed call that returned rc. */
int be_fbwire_fail(sbdrv_be_conn *c, int rc, fbw_err *err);
/* A request's server error becomes the operation's. */
int be_fbwire_server_error(const fbw_err *e, fbw_err *err);
/* The end of a call that waited (fbw_client_wait, _run, or a one-request helper such as
 * fbw_client_prepare / _fetch) and returned rc: FBW_OK, or its failure in err (be_fbwire_fail). */
int be_fbwire_waited(sbdrv_be_conn *c, int rc, fbw_err *err);
/* Write everything queued and wait for every reply. */
int be_fbwire_wait_all(sbdrv_be_conn *c, fbw_err *err);
/* After queuing with rc: wait for the replies (rc == FBW_OK) or report the queuing failure. */
int be_fbwire_wait_queued(sbdrv_be_conn *c, int rc, fbw_err *err);
/* Queue with fn(arg) until it has gone out and been answered (fbw_client_run): for several
 * requests in one write; one request is a client helper's call (client.h) ended by
 * be_fbwire_waited. */
int be_fbwire_round_trip(sbdrv_be_conn *c, int (*fn)(void *), void *arg, fbw_err *err);

#endif
