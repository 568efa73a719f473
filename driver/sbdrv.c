/* SPDX-License-Identifier: MIT */
/* sbdrv.c - sysbench 1.0.20 drv_ops for Firebird, generic over a backend (see sbdrv.h).
 *
 * Driver options (same set under each prefix P = fbwire | fbclient; defaults in brackets):
 *   --P-db=STRING            connection string host[/port]:path or alias [localhost:sbtest]
 *   --P-user=STRING          user; default $ISC_USER, else SYSDBA
 *   --P-password=STRING      password; default $ISC_PASSWORD (never printed)
 *   --P-isolation=STRING     read-committed | read-committed-no-rec-version |
 *                            read-consistency (FB4+) | snapshot | serializable [read-committed]
 *   --P-lock-timeout=N       seconds to wait for a lock; -1 forever, 0 no wait [1]. Firebird
 *                            breaks a deadlock only after the server's DeadlockTimeout (10 s by
 *                            default), so a short lock timeout keeps a deadlocked event from
 *                            stalling the run; the timeout is ignorable and the event retried
 *   --P-ignore-errors=STRING comma list of error classes, gds codes or SQLSTATEs, or "all":
 *                            classes update-conflict, deadlock, lock-conflict, lock-timeout,
 *                            unique (key violation), network (lost connection: reconnect);
 *                            a class matches when its code is anywhere in the status vector
 *                            [update-conflict,deadlock,lock-conflict,lock-timeout,unique]
 *                            (unique, as sysbench's pgsql driver does: two events that DELETE
 *                            and re-INSERT the same id race to a key violation)
 *   --P-autocommit=STRING    statements outside BEGIN: shared (one read-committed
 *                            isc_tpb_autocommit transaction, restarted now and then)
 *                            | per-statement (own transaction each) | pipelined (fbwire only:
 *                            a write in its own transaction in one round trip, reads in a
 *                            read-only transaction) [fbwire: shared, fbclient: per-statement]
 *   --P-pipeline=STRING      statements inside BEGIN ... COMMIT: off (each waits for its reply)
 *                            | transaction (fbwire: prepared statements are queued and written
 *                            together at COMMIT, a result read, or a cap; docs/sysbench.md) [off]
 *   --P-shared-restart-statements=N  shared mode (and pipelined mode's read-only transaction):
 *                            restart after N statements, 0 never [1000]
 *   --P-shared-restart-ms=N  the same after N ms, 0 never [1000]
 *   --P-report=FILE          also write the wire statistics report as JSON (docs/report.md)
 *   --P-accounting=STRING    how the report takes client CPU: sampled | every-call | off (no
 *                            report) | cost-sampled | cost-every-call (print what that method
 *                            costs instead of the report; docs/report.md) [sampled]
 *   --P-wire-crypt=STRING    disabled | enabled | required [enabled, as fbclient: encrypted when
 *                            the server requires it or allows it; disabled keeps captures and
 *                            the fbclient tap's op-level detail readable]
 *   --P-compress[=on|off]    wire compression [off]
 *   --P-auth=STRING          client auth plugin list, e.g. Srp256,Srp [client default]
 *   --P-create-db[=on|off]   create the database when it does not exist [off]; never touches
 *                            an existing one
 *   --P-page-size=N          page size of a database --P-create-db creates [0: server default]
 *   --P-connect-timeout=N    seconds for TCP connect, login and attach [30] (fbclient:
 *                            isc_dpb_connect_timeout)
 *   --fbwire-timeout=N       seconds any later wait for the server may go without a reply [60];
 *                            then the connection is closed with an error naming the request
 *                            (fatal, or a reconnect under ignore-errors=network). fbclient has no
 *                            such bound (docs/sysbench.md)
 * General options honoured: --db-ps-mode=disable (values inlined as literals), --db-debug
 * (every statement, rewrite and outcome is logged).
 *
 * Process-wide state: the two driver objects below. sysbench's ABI gives init/done no context
 * pointer and links the objects into its own list, so they must be static; they are written
 * in the main thread before workers start, and by init() under sysbench's driver mutex.
 *
 * This file is the entry: driver-level ops, the connection ops and the driver objects; the
 * options are in sbdrv_opts.c, the statement ops in sbdrv_stmt.c, what both use of a connection
 * in sbdrv_conn.c (sbdrv_int.h lists the parts). */
#include "sbdrv_int.h"

#include "classify.h"
#include "msgs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---------------------------------------------------------------- driver-level ops */

static int drv_init(sbdrv_driver *d)
{
    if (!sbdrv_read_options(d))
        return 1;
    d->ps_disable = sbdrv_host.db_globals->ps_mode == SB_PS_MODE_DISABLE;
    d->debug = sbdrv_host.db_globals->debug != 0;
    d->conf.debug = d->debug;
    fbw_err err;
    fbw_err_clear(&err);
    if (d->be->global_init(&d->conf, &err) != FBW_OK) {
        sbdrv_host.log_text(SBDRV_SB_LOG_FATAL, "%s", err.msg); /* it names the backend */
        return 1;
    }
    int acct = sbdrv_sbrep_accounting(sbdrv_opt_string(d, "accounting"));
    if (acct == -1) {
        sbdrv_host.log_text(SBDRV_SB_LOG_FATAL,
                      "invalid --%s-accounting (sampled, every-call, off, cost-sampled or "
                      "cost-every-call)", d->prefix);
        return 1;
    }
    d->rep = sbdrv_sbrep_open(&sbdrv_host, d->prefix, d->be, &d->conf,
                            sbdrv_opt_string(d, "report"), acct);
    return 0;
}

static int describe(sb_drv_caps *caps)
{
    /* needs_commit stays 0: every bulk flush is committed by the driver itself. */
    memset(caps, 0, sizeof *caps);
    caps->multi_rows_insert = 1;
    caps->prepared_statements = 1;
    return 0;
}

static int drv_done(void)
{
    /* Runs after sysbench's cumulative report: the wire statistics follow it. */
    for (int i = 0; i < SBDRV_COUNT; i++) {
        sbdrv_driver *d = (sbdrv_driver *)(void *)sbdrv_sysbench_driver(i); /* drv is the first member */
        sbdrv_sbrep_done(d->rep);
        d->rep = NULL;
    }
    return 0;
}


/* ---------------------------------------------------------------- connections */

/* The server could not open the database file: usually it does not exist. (The OS error comes
 * as text, so it is not told apart from e.g. a permission problem; creating then fails with the
 * server's own reason, as the server never overwrites a file.) */
static int db_missing(const fbw_err *e)
{
    return e->code == FBW_E_SERVER && fbw_err_has_gds(e, FBW_ISC_IO_ERROR) &&
           fbw_err_has_gds(e, FBW_ISC_IO_OPEN_ERR);
}

/* What to change when the server refused the connection: the option that decides it. */
static void connect_hint(const sbdrv_driver *d, const fbw_err *e, char *out, size_t cap)
{
    const char *p = d->prefix, *wc = d->conf.wire_crypt ? d->conf.wire_crypt : "enabled";
    out[0] = '\0';
    if (fbw_err_has_gds(e, FBW_ISC_WIRECRYPT_INCOMPATIBLE) ||
        fbw_err_has_gds(e, FBW_ISC_MISS_WIRECRYPT) ||
        (e->code == FBW_E_CRYPT && strcasecmp(wc, "required") == 0))
        snprintf(out, cap,
                 strcasecmp(wc, "disabled") == 0
                     ? " (the server requires wire encryption: use --%s-wire-crypt=enabled)"
                     : " (the server does not allow wire encryption: use --%s-wire-crypt=enabled "
                       "or disabled)",
                 p);
    else if (fbw_err_has_gds(e, FBW_ISC_WIRECRYPT_PLUGIN) || e->code == FBW_E_CRYPT)
        snprintf(out, cap, " (no wire crypt plugin both sides support: try --%s-wire-crypt="
                 "disabled if the server allows it)", p);
    else if (fbw_err_has_gds(e, FBW_ISC_LOGIN) || fbw_err_has_gds(e, FBW_ISC_LOGIN_ERROR) ||
             e->code == FBW_E_AUTH)
        snprintf(out, cap,
                 " (check --%s-user and --%s-password or ISC_USER/ISC_PASSWORD; and that "
                 "--%s-auth (now %s) names a plugin of the server's AuthServer list)",
                 p, p, p, d->conf.auth ? d->conf.auth : "the client default Srp256,Srp");
    else if (db_missing(e))
        snprintf(out, cap, " (if the database does not exist, --%s-create-db=on creates it)", p);
    else if (fbw_err_has_gds(e, FBW_ISC_CONNECT_REJECT))
        snprintf(out, cap, " (fbclient says this too when the server did not answer within "
                 "--%s-connect-timeout=%d)", p, d->conf.connect_timeout);
}

/* Create the database when the attach found none and --P-create-db is on. Serialized: sysbench's
 * prepare connects from several threads at once, and only the first may create; the others
 * then attach to what it created. */
static int attach_or_create(sbdrv_driver *d, sbdrv_conn *sc)
{
    static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;
    int rc = d->be->connect(&d->conf, &sc->bc, &sc->err);
    if (rc == FBW_OK || !d->conf.create_db || !db_missing(&sc->err))
        return rc;
    pthread_mutex_lock(&create_lock);
    fbw_err_clear(&sc->err);
    rc = d->be->connect(&d->conf, &sc->bc, &sc->err);
    if (rc != FBW_OK && db_missing(&sc->err)) {
        fbw_err_clear(&sc->err);
        rc = d->be->create(&d->conf, &sc->bc, &sc->err);
        if (rc == FBW_OK)
            sbdrv_host.log_text(SBDRV_SB_LOG_NOTICE, "%s: created database '%s'", d->prefix,
                                    d->conf.db);
        else
            fbw_err_prefix(&sc->err, "--%s-create-db=on: cannot create the database", d->prefix);
    }
    pthread_mutex_unlock(&create_lock);
    return rc;
}

static int open_backend(sbdrv_conn *sc)
{
    sbdrv_driver *d = sc->d;
    fbw_err_clear(&sc->err);
    int rc = attach_or_create(d, sc);
    if (rc != FBW_OK) {
        char hint[320];
        connect_hint(d, &sc->err, hint, sizeof hint);
        sbdrv_host.log_text(SBDRV_SB_LOG_FATAL, "%s: connection to '%s' as %s failed: %s%s",
                                d->prefix, d->conf.db, d->conf.user, sc->err.msg, hint);
    }
    return rc;
}

static int drv_connect(sb_conn *con)
{
    sbdrv_conn *sc = calloc(1, sizeof *sc);
    if (sc == NULL)
        return 1;
    sc->d = driver_of(con);
    sbdrv_sbrep_connect_begin(sc->d->rep); /* report hooks: watch the attach, charge it */
    int rc = open_backend(sc);
    sbdrv_sbrep_connect_end(sc->d->rep, &sc->rep, sc->bc, rc);
    if (rc != FBW_OK) {
        free(sc);
        return 1;
    }
    con->ptr = sc;
    return 0;
}

static int drv_disconnect(sb_conn *con)
{
    sbdrv_conn *sc = conn_of(con);
    if (sc == NULL)
        return 0;
    while (sc->stmts) { /* statements the script never closed */
        sbdrv_stmt *ss = sc->stmts;
        sc->stmts = ss->next;
        sbdrv_stmt_release(sc, ss);
    }
    sbdrv_sbrep_detach(&sc->rep, 1); /* report: charge what is left, stop watching */
    sc->d->be->disconnect(sc->bc);
    sbdrv_be_result_free(&sc->res);
    free(sc);
    con->ptr = NULL;
    return 0;
}

static int drv_reconnect(sb_conn *con)
{
    sbdrv_conn *sc = conn_of(con);
    if (sc == NULL)
        return SB_DB_ERROR_FATAL;
    return sbdrv_reattach(sc) == 0 ? SB_DB_ERROR_IGNORABLE : SB_DB_ERROR_FATAL;
}

/* ---------------------------------------------------------------- the driver objects */

static int init_fbwire(void);
static int init_fbclient(void);

#define FB_OPS(INIT)                                                                               \
    {                                                                                              \
        .init = INIT, .thread_init = NULL, .describe = describe, .connect = drv_connect,           \
        .disconnect = drv_disconnect, .reconnect = drv_reconnect, .prepare = sbdrv_prepare,    \
        .bind_param = sbdrv_bind_param, .bind_result = sbdrv_bind_result,                  \
        .execute = sbdrv_execute, .fetch = sbdrv_fetch, .fetch_row = sbdrv_fetch_row,  \
        .free_results = sbdrv_free_results, .close = sbdrv_close,                          \
        .query = sbdrv_query, .thread_done = NULL, .done = drv_done,                           \
    }

static sbdrv_driver DRIVERS[SBDRV_COUNT] = {
    {.drv = {.sname = "fbwire", .lname = "Firebird driver (fbwire native protocol client)",
             .args = sbdrv_args_fbwire, .ops = FB_OPS(init_fbwire)},
     .be = &sbdrv_backend_fbwire, .prefix = "fbwire"},
    {.drv = {.sname = "fbclient", .lname = "Firebird driver (libfbclient baseline)",
             .args = sbdrv_args_fbclient, .ops = FB_OPS(init_fbclient)},
     .be = &sbdrv_backend_fbclient, .prefix = "fbclient"},
};

static int init_fbwire(void)
{
    return drv_init(&DRIVERS[SBDRV_FBWIRE]);
}

static int init_fbclient(void)
{
    return drv_init(&DRIVERS[SBDRV_FBCLIENT]);
}

void sbdrv_setup(const sbdrv_sb_host *host)
{
    sbdrv_host = *host;
}

sb_driver *sbdrv_sysbench_driver(int which)
{
    if (which < 0 || which >= SBDRV_COUNT)
        return NULL;
    return &DRIVERS[which].drv;
}
