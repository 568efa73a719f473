/* SPDX-License-Identifier: MIT */
/* client.c - blocking loop over conn.c and sock.c. */
#include "client.h"
#include "request.h"

#include "dsn.h"
#include "keylog.h"
#include "ops.h"
#include "sock.h"

#include <openssl/crypto.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RECV_CHUNK 65536

struct fbw_client {
    fbw_sock sock;
    fbw_conn *conn;
    fbw_err err;
    int timeout_ms;
    int connect_timeout_ms;
    int create;           /* attaching means op_create (for naming the wait) */
    uint64_t deadline_ns; /* while connecting: the whole login must finish by then (0 = none) */
    uint8_t *rbuf; /* heap, not stack: sysbench threads have 64 KiB stacks */
    /* Cancel (fbw_client_cancel, from another thread). The waiting thread owns the connection
     * except while it sits in recv with everything sent: only then may the canceller queue and
     * send op_cancel, which goes through the same cipher and zlib stream, so `mu` orders the two. */
    pthread_mutex_t mu;
    int in_wait;        /* inside fbw_client_wait_until: a cancel is not lost */
    int cancellable;    /* blocked in recv, nothing unsent: the canceller may send now */
    int cancel_pending; /* asked while not cancellable: the waiting thread sends it itself */
    int cancel_sent;    /* op_cancel went out in this wait: clear a raise that found nothing */
};

void fbw_client_opts_init(fbw_client_opts *o)
{
    memset(o, 0, sizeof *o);
    fbw_conn_opts_init(&o->conn);
    o->connect_timeout_ms = 30000;
    o->timeout_ms = 60000;
}

fbw_conn *fbw_client_conn(fbw_client *cl) { return cl->conn; }
int fbw_client_fd(const fbw_client *cl) { return cl->sock.fd; }
int fbw_client_timeout_ms(const fbw_client *cl) { return cl->timeout_ms; }
const fbw_err *fbw_client_error(const fbw_client *cl) { return &cl->err; }

/* The first record of list[0..n) that holds an error, NULL when none does. */
static const fbw_err *first_error(const fbw_err *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] && list[i]->code != FBW_OK)
            return list[i];
    return NULL;
}

const fbw_err *fbw_client_call_error(const fbw_client *cl, int rc, const fbw_stmt *st,
                                     const fbw_tx *tx)
{
    static const fbw_err none = {.op = -1}; /* read-only: "no error" */
    const fbw_err *waited[] = {&cl->err, fbw_conn_error(cl->conn), st ? fbw_stmt_error(st) : NULL,
                               tx ? fbw_tx_error(tx) : NULL};
    const fbw_err *answered[] = {st ? fbw_stmt_error(st) : NULL, tx ? fbw_tx_error(tx) : NULL};
    const fbw_err *e = rc != FBW_OK ? first_error(waited, sizeof waited / sizeof waited[0])
                                    : first_error(answered, sizeof answered / sizeof answered[0]);
    return e ? e : &none;
}

/* Errors are kept in one place: a connection error wins over a socket error description. */
static int take_conn_error(fbw_client *cl, int rc)
{
    const fbw_err *e = fbw_conn_error(cl->conn);
    if (e->code != FBW_OK)
        cl->err = *e;
    else if (cl->err.code == FBW_OK)
        fbw_err_set(&cl->err, rc, "%s", fbw_rc_name(rc));
    return cl->err.code ? cl->err.code : rc;
}

static int read_once(fbw_client *cl, int timeout_ms, int cancellable);

/* "5 s" or "1500 ms". */
static void fmt_ms(char *b, size_t n, int ms)
{
    if (ms % 1000 == 0)
        snprintf(b, n, "%d s", ms / 1000);
    else
        snprintf(b, n, "%d ms", ms);
}

/* What the connection is waiting for: the login step, or the oldest outstanding request, how many
 * follow it, and whether a COMMIT is among them (its outcome is then unknown to us). */
static void describe_wait(fbw_client *cl, char *b, size_t n)
{
    switch (fbw_conn_get_state(cl->conn)) {
    case FBW_CS_CONNECTING: snprintf(b, n, "the reply to op_connect"); return;
    case FBW_CS_AUTH: snprintf(b, n, "the authentication reply (op_cont_auth)"); return;
    case FBW_CS_CRYPT: snprintf(b, n, "the reply to op_crypt"); return;
    case FBW_CS_ATTACHING:
        snprintf(b, n, "the reply to %s", cl->create ? "op_create" : "op_attach");
        return;
    default: break;
    }
    int total = fbw_conn_outstanding(cl->conn), commit = 0;
    if (total <= 0) {
        snprintf(b, n, "the server");
        return;
    }
    /* Name the oldest request the server answers at once: replies it defers (lazy send) to
     * earlier requests, e.g. op_free_statement, come with that answer but are not what waits. */
    int first = -1;
    for (int i = 0; i < total; i++) {
        int32_t op = fbw_conn_pending_op(cl->conn, (size_t)i);
        if (fbw_conn_pending_commits(cl->conn, (size_t)i))
            commit = op == FBW_OP_COMMIT || op == FBW_OP_COMMIT_RETAINING ? 1 : commit ? commit : 2;
        if (first < 0 && !fbw_conn_pending_deferred(cl->conn, (size_t)i))
            first = i;
    }
    if (first < 0)
        first = 0;
    char name[40];
    int k = snprintf(b, n, "the reply to %s", fbw_op_name(fbw_conn_pending_op(cl->conn,
                                                                              (size_t)first),
                                                          name, sizeof name));
    int others = total - 1;
    if (others > 0 && k > 0 && (size_t)k < n)
        k += snprintf(b + k, n - (size_t)k, " (%d more request%s outstanding)", others,
                      others > 1 ? "s" : "");
    /* The same condition as fbw_conn_outcome_unknown once the connection is failed. */
    if (commit && k > 0 && (size_t)k < n)
        snprintf(b + k, n - (size_t)k, "; %s was sent and never answered: its outcome is unknown "
                 "(the transaction may or may not have been committed)",
                 commit == 1 ? "a COMMIT" : "a statement of an autocommit transaction");
}

/* A wait ended without the reply (timeout, lost or failed socket): say which wait, close the
 * socket and fail the connection, so nothing waits on it again (a close does not try to detach). */
static int give_up(fbw_client *cl, int rc, int sending)
{
    char what[320], t[32];
    describe_wait(cl, what, sizeof what);
    if (rc == FBW_E_TIMEOUT) {
        int connecting = cl->deadline_ns != 0;
        fmt_ms(t, sizeof t, connecting ? cl->connect_timeout_ms : cl->timeout_ms);
        if (sending)
            fbw_err_set(&cl->err, rc, "the server took no data for %s while requests were sent, "
                        "waiting for %s; the connection was closed", t, what);
        else if (connecting)
            fbw_err_set(&cl->err, rc, "the login timed out: no reply from the server within the "
                        "connect timeout of %s, waiting for %s; the connection was closed", t, what);
        else
            fbw_err_set(&cl->err, rc, "no reply from the server for %s while waiting for %s; the "
                        "connection was closed", t, what);
    } else if (rc == FBW_E_EOF && !sending) {
        fbw_err_set(&cl->err, rc, "connection lost: server closed the connection while fbwire "
                    "waited for %s", what);
    } else {
        char was[FBW_ERR_MSG_MAX];
        snprintf(was, sizeof was, "%s", cl->err.msg[0] ? cl->err.msg : fbw_rc_name(rc));
        int sys = cl->err.sys_errno;
        fbw_err_set(&cl->err, rc, "%s, waiting for %s", was, what);
        cl->err.sys_errno = sys;
    }
    fbw_conn_fail(cl->conn, &cl->err);
    fbw_sock_close(&cl->sock);
    return rc;
}

/* Write everything queued. Pipelined requests may ask for more reply bytes than the socket buffers
 * hold: when the send would block and replies are waiting, read them first (the server stops
 * reading while it cannot write, so writing only would deadlock), then go on writing. Each step
 * that makes no progress is bounded by timeout_ms. */
static int flush(fbw_client *cl, int timeout_ms)
{
    for (;;) {
        const uint8_t *p;
        size_t n, sent = 0;
        if (fbw_conn_get_state(cl->conn) == FBW_CS_FAILED)
            return take_conn_error(cl, FBW_E_PROTO);
        int rc = fbw_conn_pending(cl->conn, &p, &n);
        if (rc)
            return take_conn_error(cl, rc);
        if (n == 0)
            return FBW_OK;
        rc = fbw_sock_send_or_read(&cl->sock, p, n, timeout_ms, &sent, &cl->err);
        fbw_conn_sent(cl->conn, sent);
        if (rc != FBW_WAIT && rc != FBW_OK)
            return give_up(cl, rc, 1);
        if (rc != FBW_WAIT)
            return rc;
        rc = read_once(cl, timeout_ms, 0);
        if (rc)
            return rc;
    }
}

/* Queue op_cancel(kind) and send it at once. Called with mu held, by the canceller while the
 * waiting thread is in recv, or by the waiting thread itself; nothing else is unsent then. */
static int send_cancel(fbw_client *cl, int kind, fbw_err *err)
{
    int rc = fbw_conn_cancel(cl->conn, kind);
    if (rc)
        return rc == FBW_E_UNSUPPORTED
                   ? fbw_err_set(err, rc, "cancel needs protocol 12 or later (Firebird 2.5+)")
                   : fbw_err_set(err, rc, "nothing to cancel: the connection is not attached");
    const uint8_t *p;
    size_t n;
    rc = fbw_conn_pending(cl->conn, &p, &n);
    if (rc == FBW_OK)
        rc = fbw_sock_send_all(&cl->sock, p, n, cl->timeout_ms, err);
    if (rc == FBW_OK)
        fbw_conn_sent(cl->conn, n);
    return rc;
}

/* Enter or leave the cancellable part of a wait; entering sends a cancel asked for meanwhile. */
static void set_cancellable(fbw_client *cl, int on)
{
    pthread_mutex_lock(&cl->mu);
    cl->cancellable = on;
    if (on && cl->cancel_pending) {
        fbw_err e;
        fbw_err_clear(&e);
        cl->cancel_pending = 0;
        if (send_cancel(cl, FBW_CANCEL_RAISE, &e) == FBW_OK)
            cl->cancel_sent = 1;
    }
    pthread_mutex_unlock(&cl->mu);
}

/* The end of a wait in which a cancel went out: the engine keeps a raise that finds nothing running
 * as a flag (jrd cancel_operation), so disable + enable (processed in order, no replies, 2 small
 * packets) clear it before the next call. Defensive: in the racing test (test_cancel.c) FB 3.0.11
 * and 4.0.5 did not let a late raise hit the next statement without it either. */
static int end_wait(fbw_client *cl, int rc)
{
    pthread_mutex_lock(&cl->mu);
    int sent = cl->cancel_sent;
    cl->in_wait = cl->cancel_pending = cl->cancel_sent = 0;
    pthread_mutex_unlock(&cl->mu);
    if (sent && rc == FBW_OK && fbw_conn_get_state(cl->conn) == FBW_CS_READY) {
        rc = fbw_conn_cancel(cl->conn, FBW_CANCEL_DISABLE);
        if (rc == FBW_OK)
            rc = fbw_conn_cancel(cl->conn, FBW_CANCEL_ENABLE);
        if (rc == FBW_OK)
            rc = flush(cl, cl->timeout_ms);
        else
            rc = take_conn_error(cl, rc);
    }
    return rc;
}

int fbw_client_cancel(fbw_client *cl)
{
    fbw_err e;
    fbw_err_clear(&e);
    pthread_mutex_lock(&cl->mu);
    int rc = FBW_OK;
    if (cl->cancellable) {
        rc = send_cancel(cl, FBW_CANCEL_RAISE, &e);
        cl->cancel_sent |= rc == FBW_OK;
    } else if (cl->in_wait) {
        cl->cancel_pending = 1; /* between two reads: sent when the wait reads again */
    } else {
        rc = FBW_E_USAGE; /* nothing is running */
    }
    pthread_mutex_unlock(&cl->mu);
    return rc;
}

/* One wait for the server: counts the round trip, times the wait, feeds what arrived. */
static int read_once(fbw_client *cl, int timeout_ms, int cancellable)
{
    if (cl->deadline_ns) {
        uint64_t now = fbw_now_ns();
        int left = now >= cl->deadline_ns ? 0 : (int)((cl->deadline_ns - now) / 1000000);
        if (timeout_ms < 0 || left < timeout_ms)
            timeout_ms = left;
    }
    fbw_stats *st = fbw_conn_stats(cl->conn);
    fbw_stats_wait_begin(st);
    uint64_t t0 = fbw_now_ns();
    size_t got = 0;
    if (cancellable)
        set_cancellable(cl, 1);
    int rc = fbw_sock_recv(&cl->sock, cl->rbuf, RECV_CHUNK, timeout_ms, &got, &cl->err);
    if (cancellable)
        set_cancellable(cl, 0);
    fbw_stats_wait_time(st, fbw_now_ns() - t0);
    if (rc)
        return give_up(cl, rc, 0);
    rc = fbw_conn_recv(cl->conn, cl->rbuf, got);
    return rc ? take_conn_error(cl, rc) : FBW_OK;
}

static int wait_loop(fbw_client *cl, int (*pred)(void *arg), void *arg)
{
    for (;;) {
        int rc = flush(cl, cl->timeout_ms);
        if (rc)
            return rc;
        if (pred && pred(arg))
            return FBW_OK;
        if (!fbw_conn_before_wait(cl->conn)) {
            if (fbw_conn_get_state(cl->conn) == FBW_CS_FAILED)
                return take_conn_error(cl, FBW_E_PROTO);
            return flush(cl, cl->timeout_ms);
        }
        rc = flush(cl, cl->timeout_ms); /* the op_ping that before_wait may have added */
        if (rc == FBW_OK)
            rc = read_once(cl, cl->timeout_ms, 1);
        if (rc)
            return rc;
    }
}

int fbw_client_wait_until(fbw_client *cl, int (*pred)(void *arg), void *arg)
{
    pthread_mutex_lock(&cl->mu);
    cl->in_wait = 1;
    pthread_mutex_unlock(&cl->mu);
    return end_wait(cl, wait_loop(cl, pred, arg));
}

int fbw_client_wait(fbw_client *cl) { return fbw_client_wait_until(cl, NULL, NULL); }

int fbw_client_complete(fbw_client *cl, int rc)
{
    if (rc == FBW_OK)
        return fbw_client_wait(cl);
    if (rc != FBW_WAIT)
        return rc;
    if (fbw_conn_outstanding(cl->conn) == 0)
        return fbw_err_set(&cl->err, FBW_E_USAGE, "request cannot be queued and nothing is pending");
    rc = fbw_client_wait(cl);
    return rc ? rc : FBW_WAIT;
}

int fbw_client_run(fbw_client *cl, int (*queue)(void *arg), void *arg)
{
    int rc;
    do
        rc = fbw_client_complete(cl, queue(arg));
    while (rc == FBW_WAIT);
    return rc;
}

int fbw_client_read_blobs(fbw_client *cl, fbw_blobset *bs)
{
    int rc = FBW_OK;
    /* read-all continues long blobs by itself within one run; the loop only covers a stall, and
     * stops when a run made no progress */
    for (int k = 0; rc == FBW_OK && fbw_blobset_pending(bs) && k < 1 << 16; k++) {
        uint64_t before = cl->conn ? fbw_conn_stats(cl->conn)->packets_received : 0;
        rc = fbw_client_run(cl, fbw_blobset_queue, bs);
        if (rc == FBW_OK && fbw_blobset_pending(bs) &&
            fbw_conn_stats(cl->conn)->packets_received == before)
            return fbw_err_set(&cl->err, FBW_E_PROTO, "blob reads made no progress");
    }
    return rc ? rc : fbw_blobset_error(bs)->code;
}

int fbw_client_pipe_wait(void *arg, fbw_err *err)
{
    fbw_client *cl = arg;
    int rc = fbw_client_wait(cl);
    if (rc == FBW_OK)
        return FBW_OK;
    const fbw_err *e = cl->err.code != FBW_OK ? &cl->err : fbw_conn_error(cl->conn);
    if (e->code != FBW_OK)
        *err = *e;
    else
        fbw_err_set(err, rc, "fbwire: %s", fbw_rc_name(rc));
    return rc;
}

static int connected(void *arg)
{
    fbw_conn_state s = fbw_conn_get_state(arg);
    return s == FBW_CS_READY || s == FBW_CS_FAILED;
}

static void default_identity(fbw_conn_opts *co, char *host, size_t hs, char *user, size_t us)
{
    fbw_sock_local_identity(host, hs, user, us);
    if (!co->client_host)
        co->client_host = host;
    if (!co->client_user)
        co->client_user = user;
    if (!co->process_id)
        co->process_id = (int32_t)getpid();
    if (!co->user || !*co->user)
        co->user = getenv("ISC_USER");
    if (!co->password)
        co->password = getenv("ISC_PASSWORD");
}

/* The key log line of an encrypted connection, written here because the sans-I/O core never
 * touches files: it only hands out the material (fbw_conn_crypt_keys). */
static int write_keylog(fbw_client *cl, const char *path)
{
    fbw_crypt_keys k;
    fbw_keylog_entry e;
    char line[FBW_KEYLOG_LINE_MAX];
    memset(&e, 0, sizeof e);
    int rc = fbw_conn_crypt_keys(cl->conn, &k, &cl->err);
    if (rc == FBW_E_UNSUPPORTED) { /* not encrypted: nothing to log */
        fbw_err_clear(&cl->err);
        return FBW_OK;
    }
    if (rc == FBW_OK)
        rc = fbw_sock_endpoints(&cl->sock, e.client, sizeof e.client, e.server, sizeof e.server,
                                &cl->err);
    if (rc)
        return rc;
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t tn = strftime(e.time, sizeof e.time, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(e.time + tn, sizeof e.time - tn, ".%06ldZ", ts.tv_nsec / 1000);
    snprintf(e.plugin, sizeof e.plugin, "%s", k.plugin);
    if (k.key.n > sizeof e.key || k.iv.n > sizeof e.iv)
        return fbw_err_set(&cl->err, FBW_E_CRYPT, "key log: key material too long to log");
    memcpy(e.key, k.key.p, k.key.n);
    e.key_len = k.key.n;
    if (k.iv.n)
        memcpy(e.iv, k.iv.p, k.iv.n);
    e.iv_len = k.iv.n;
    size_t n = fbw_keylog_format(&e, line, sizeof line);
    rc = n ? fbw_keylog_append(path, line, n, &cl->err)
           : fbw_err_set(&cl->err, FBW_E_CRYPT, "key log: line does not fit");
    OPENSSL_cleanse(&e, sizeof e);
    OPENSSL_cleanse(line, sizeof line);
    return rc;
}

static int establish(fbw_client *cl, const char *dsn, const fbw_client_opts *o)
{
    fbw_dsn d;
    int rc = fbw_dsn_parse(dsn, &d, &cl->err);
    if (rc)
        return rc;
    fbw_conn_opts co = o->conn;
    char host[256], user[256];
    default_identity(&co, host, sizeof host, user, sizeof user);
    co.database = o->conn.service ? NULL : d.path; /* a service attach names "service_mgr" */
    rc = fbw_conn_new(&co, &cl->conn, &cl->err);
    if (rc == FBW_OK)
        rc = fbw_conn_start(cl->conn);
    if (rc)
        return cl->conn ? take_conn_error(cl, rc) : rc;
    /* The connect timeout bounds the whole login: TCP connect, authentication and attach. */
    cl->deadline_ns = o->connect_timeout_ms < 0
                          ? 0
                          : fbw_now_ns() + (uint64_t)o->connect_timeout_ms * 1000000u;
    rc = fbw_sock_connect(&cl->sock, d.host, d.port, o->connect_timeout_ms, &cl->err);
    if (rc)
        return rc;
    cl->timeout_ms = o->connect_timeout_ms;
    cl->connect_timeout_ms = o->connect_timeout_ms;
    cl->create = o->conn.create;
    rc = fbw_client_wait_until(cl, connected, cl->conn);
    cl->timeout_ms = o->timeout_ms;
    cl->deadline_ns = 0;
    if (rc == FBW_OK && fbw_conn_get_state(cl->conn) != FBW_CS_READY)
        rc = take_conn_error(cl, FBW_E_PROTO);
    const char *keylog = o->keylog ? o->keylog : getenv(FBW_KEYLOG_ENV);
    if (rc == FBW_OK && keylog && keylog[0])
        rc = write_keylog(cl, keylog);
    return rc;
}

int fbw_client_connect(const char *dsn, const fbw_client_opts *o, fbw_client **out, fbw_err *err)
{
    *out = NULL;
    fbw_client *cl = calloc(1, sizeof *cl);
    uint8_t *rbuf = malloc(RECV_CHUNK);
    if (!cl || !rbuf) {
        free(cl);
        free(rbuf);
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    }
    cl->rbuf = rbuf;
    pthread_mutex_init(&cl->mu, NULL);
    fbw_sock_init(&cl->sock);
    fbw_err_clear(&cl->err);
    int rc = establish(cl, dsn, o);
    if (rc) {
        if (err)
            *err = cl->err;
        fbw_client_abort(cl);
        return rc;
    }
    *out = cl;
    return FBW_OK;
}

int fbw_client_close(fbw_client *cl)
{
    if (!cl)
        return FBW_OK;
    int rc = FBW_OK;
    if (fbw_conn_get_state(cl->conn) == FBW_CS_READY) {
        rc = fbw_conn_detach(cl->conn);
        if (rc == FBW_OK)
            rc = fbw_client_wait(cl);
        if (rc == FBW_OK)
            rc = flush(cl, cl->timeout_ms); /* op_disconnect */
    }
    fbw_client_abort(cl);
    return rc;
}

void fbw_client_abort(fbw_client *cl)
{
    if (!cl)
        return;
    fbw_sock_close(&cl->sock);
    fbw_conn_free(cl->conn);
    free(cl->rbuf);
    pthread_mutex_destroy(&cl->mu);
    free(cl);
}

/* ---- one request, run to its answer (the loop of fbw_client_complete) ---- */

int fbw_client_prepare(fbw_client *cl, fbw_stmt *st, fbw_tx *tx, const char *sql, size_t len)
{
    int rc;
    do
        rc = fbw_client_complete(cl, fbw_stmt_prepare(st, tx, sql, len));
    while (rc == FBW_WAIT);
    return rc;
}

int fbw_client_execute(fbw_client *cl, fbw_stmt *st, fbw_tx *tx, const fbw_value *params,
                       unsigned flags)
{
    int rc;
    do
        rc = fbw_client_complete(cl, fbw_stmt_execute(st, tx, params, flags));
    while (rc == FBW_WAIT);
    return rc;
}

int fbw_client_fetch(fbw_client *cl, fbw_stmt *st)
{
    int rc;
    do
        rc = fbw_client_complete(cl, fbw_stmt_fetch(st));
    while (rc == FBW_WAIT);
    return rc;
}

int fbw_client_fetch_scroll(fbw_client *cl, fbw_stmt *st, int op, int32_t pos)
{
    int rc;
    fbw_stmt_clear_rows(st);
    do
        rc = fbw_client_complete(cl, fbw_stmt_fetch_scroll(st, op, pos));
    while (rc == FBW_WAIT);
    return rc;
}

int fbw_client_count_cursor(fbw_client *cl, fbw_stmt *st, int64_t *count)
{
    int rc;
    do
        rc = fbw_client_complete(cl, fbw_stmt_count_cursor(st));
    while (rc == FBW_WAIT);
    *count = fbw_stmt_cursor_count(st);
    return rc;
}

int fbw_client_commit(fbw_client *cl, fbw_tx *tx)
{
    int rc;
    do
        rc = fbw_client_complete(cl, fbw_tx_commit(tx));
    while (rc == FBW_WAIT);
    return rc;
}

int fbw_client_rollback(fbw_client *cl, fbw_tx *tx)
{
    int rc;
    do
        rc = fbw_client_complete(cl, fbw_tx_rollback(tx));
    while (rc == FBW_WAIT);
    return rc;
}
