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
 * in the main thread before workers start, and by init() under sysbench's driver mutex. */
#include "sbdrv.h"

#include "backend.h"
#include "classify.h"
#include "dialect.h"
#include "sbreport.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_IGNORE 32
#define RECONNECT_SECONDS 30

enum { CLASS_NETWORK = 1u, CLASS_ALL = 2u };

typedef struct ignore_rule {
    uint32_t gds;     /* 0 when the rule is a SQLSTATE */
    char sqlstate[6];
    const char *text; /* if set, the message must also contain it (for isc_random) */
} ignore_rule;

typedef struct fbw_sbdrv {
    sb_driver drv;
    const fbw_backend *be;
    const char *prefix;
    fbw_be_conf conf;
    int ps_disable;
    int debug;
    unsigned classes;            /* CLASS_* */
    ignore_rule ignore[MAX_IGNORE];
    int nignore;
    fbw_sbrep *rep;              /* wire statistics report of `run` (sbreport.h), or NULL */
} fbw_sbdrv;

/* Per sysbench connection (db_conn_t.ptr). */
typedef struct sbstmt sbstmt;
typedef struct sbconn {
    fbw_sbdrv *d;
    fbw_be_conn *bc;
    fbw_be_result res;
    fbw_err err;
    char state[6];
    sbstmt *stmts;               /* every open statement, for reconnect and disconnect */
    int in_txn;                  /* between BEGIN and COMMIT/ROLLBACK */
    fbw_sbrep_conn *rep;         /* round-trip accounting of this connection, or NULL */
    int last_cls;                /* class of the last statement executed (its result's) */
} sbconn;

/* Per sysbench statement (db_stmt_t.ptr). */
struct sbstmt {
    sbstmt *next;
    fbw_sql_kind kind;
    char *sql;                   /* as sysbench sent it */
    size_t sql_len;
    char *text;                  /* what the backend prepares (rewritten or sql) */
    size_t text_len;
    int emulated;
    fbw_be_stmt *bs;             /* NULL when emulated, or closed by a reconnect */
    fbw_val *vals;
    char (*scratch)[32];         /* rendered date/time parameters */
    size_t nvals;
    int cls;                     /* statement class for the report (classify.h) */
};

static fbw_sb_host HOST;

/* ---------------------------------------------------------------- options */

/* EXTRA: entries only one backend has (fbclient cannot bound the waits after connect). */
#define FB_ARGS(P, EXTRA)                                                                       \
    {                                                                                           \
        {P "-db", "connection string host[/port]:path or alias", "localhost:sbtest",            \
         SB_ARG_TYPE_STRING, NULL},                                                             \
        {P "-user", "user name (default: $ISC_USER, else SYSDBA)", NULL, SB_ARG_TYPE_STRING,    \
         NULL},                                                                                 \
        {P "-password", "password (default: $ISC_PASSWORD)", NULL, SB_ARG_TYPE_STRING, NULL},   \
        {P "-isolation",                                                                        \
         "read-committed, read-committed-no-rec-version, read-consistency, snapshot or "        \
         "serializable",                                                                        \
         "read-committed", SB_ARG_TYPE_STRING, NULL},                                           \
        {P "-lock-timeout", "lock wait in seconds (-1 forever, 0 no wait)", "1",                \
         SB_ARG_TYPE_INT, NULL},                                                                \
        {P "-ignore-errors",                                                                    \
         "error classes (update-conflict, deadlock, lock-conflict, lock-timeout, unique, "      \
         "network), gds codes or SQLSTATEs to retry, or \"all\"",                               \
         "update-conflict,deadlock,lock-conflict,lock-timeout,unique", SB_ARG_TYPE_STRING,     \
         NULL},                                                                                 \
        {P "-autocommit",                                                                       \
         "statements outside BEGIN: per-statement (own transaction each), shared (one "         \
         "autocommit transaction, restarted periodically) or pipelined (fbwire: own "          \
         "transaction in one round trip; reads in a read-only transaction) [fbwire: shared, "    \
         "fbclient: per-statement]",                                                            \
         NULL, SB_ARG_TYPE_STRING, NULL},                                                       \
        {P "-pipeline",                                                                         \
         "statements inside BEGIN ... COMMIT: off or transaction (fbwire: queued without "      \
         "waiting, written together at COMMIT, a result read or a cap)",                        \
         "off", SB_ARG_TYPE_STRING, NULL},                                                      \
        {P "-shared-restart-statements", "shared autocommit: restart after N statements",       \
         "1000", SB_ARG_TYPE_INT, NULL},                                                        \
        {P "-shared-restart-ms", "shared autocommit: restart after N milliseconds", "1000",     \
         SB_ARG_TYPE_INT, NULL},                                                                \
        {P "-report", "also write the wire statistics report to FILE as JSON",                  \
         NULL, SB_ARG_TYPE_STRING, NULL},                                                       \
        {P "-accounting",                                                                       \
         "client CPU of the report: sampled (clock read around a random 1 in 16 calls), "       \
         "every-call, off (no wire statistics report), or cost-sampled / cost-every-call "      \
         "(measure what the report costs, print that instead)",                                 \
         "sampled", SB_ARG_TYPE_STRING, NULL},                                                  \
        {P "-wire-crypt", "wire encryption: disabled, enabled or required", "enabled",          \
         SB_ARG_TYPE_STRING, NULL},                                                             \
        {P "-compress", "wire compression", "off", SB_ARG_TYPE_BOOL, NULL},                     \
        {P "-auth", "client authentication plugin list (e.g. Srp256,Srp)", NULL,                \
         SB_ARG_TYPE_STRING, NULL},                                                             \
        {P "-create-db", "create the database when it does not exist (never an existing one)", \
         "off", SB_ARG_TYPE_BOOL, NULL},                                                        \
        {P "-page-size", "page size of a database that create-db creates (0: server default)", \
         "0", SB_ARG_TYPE_INT, NULL},                                                           \
        {P "-connect-timeout", "seconds for TCP connect, login and attach", "30",               \
         SB_ARG_TYPE_INT, NULL},                                                                \
        EXTRA{NULL, NULL, NULL, SB_ARG_TYPE_NULL, NULL},                                        \
    }

#define FBWIRE_TIMEOUT_ARG                                                                      \
    {"fbwire-timeout", "seconds any wait for the server may last without a reply before the "    \
     "connection is closed with an error naming the request", "60", SB_ARG_TYPE_INT, NULL},

static sb_arg ARGS_FBWIRE[] = FB_ARGS("fbwire", FBWIRE_TIMEOUT_ARG);
static sb_arg ARGS_FBCLIENT[] = FB_ARGS("fbclient", );

static const char *opt_string(const fbw_sbdrv *d, const char *suffix)
{
    char name[64];
    snprintf(name, sizeof name, "%s-%s", d->prefix, suffix);
    const char *v = HOST.get_string(name);
    return v && v[0] ? v : NULL;
}

static int opt_int(const fbw_sbdrv *d, const char *suffix)
{
    char name[64];
    snprintf(name, sizeof name, "%s-%s", d->prefix, suffix);
    return HOST.get_int(name);
}

static int opt_flag(const fbw_sbdrv *d, const char *suffix)
{
    char name[64];
    snprintf(name, sizeof name, "%s-%s", d->prefix, suffix);
    return HOST.get_flag(name);
}

static int parse_isolation(const char *s, fbw_be_isolation *out)
{
    static const struct { const char *name; fbw_be_isolation iso; } map[] = {
        {"read-committed", FBW_BE_ISO_READ_COMMITTED},
        {"read-committed-no-rec-version", FBW_BE_ISO_READ_COMMITTED_NOREC},
        {"read-consistency", FBW_BE_ISO_READ_CONSISTENCY},
        {"snapshot", FBW_BE_ISO_SNAPSHOT},
        {"serializable", FBW_BE_ISO_SERIALIZABLE},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcasecmp(s, map[i].name) == 0) {
            *out = map[i].iso;
            return 1;
        }
    }
    return 0;
}

/* Named classes and the status codes they stand for. "cannot update erased record" is how
 * Firebird reports that a concurrent transaction deleted the row we waited for: it arrives as
 * isc_random (335544382) with that text, so it is matched by code and text. */
#define ISC_RANDOM 335544382u
static const struct {
    const char *name;
    uint32_t gds[2];
    const char *random_text;
} CLASSES[] = {
    /* isc_update_conflict; isc_no_cur_rec is FB3's word for a row that a concurrent
     * transaction deleted (and garbage collected) while our UPDATE waited for it */
    {"update-conflict", {335544451u, 335544348u}, "cannot update erased record"},
    {"deadlock", {335544336u, 0}, NULL},        /* isc_deadlock */
    {"lock-conflict", {335544345u, 0}, NULL},   /* isc_lock_conflict */
    {"lock-timeout", {335544510u, 0}, NULL},    /* isc_lock_timeout */
    {"unique", {335544665u, 335544349u}, NULL}, /* isc_unique_key_violation, isc_no_dup */
};

static int add_rule(fbw_sbdrv *d, uint32_t gds, const char *state, const char *text)
{
    if (d->nignore >= MAX_IGNORE)
        return 0;
    ignore_rule *r = &d->ignore[d->nignore++];
    r->gds = gds;
    snprintf(r->sqlstate, sizeof r->sqlstate, "%s", state ? state : "");
    r->text = text;
    return 1;
}

static int parse_one_ignore(fbw_sbdrv *d, const char *w)
{
    if (strcasecmp(w, "all") == 0) {
        d->classes |= CLASS_ALL | CLASS_NETWORK;
        return 1;
    }
    if (strcasecmp(w, "network") == 0) {
        d->classes |= CLASS_NETWORK;
        return 1;
    }
    for (size_t i = 0; i < sizeof CLASSES / sizeof CLASSES[0]; i++) {
        if (strcasecmp(w, CLASSES[i].name) == 0) {
            int ok = add_rule(d, CLASSES[i].gds[0], NULL, NULL);
            if (ok && CLASSES[i].gds[1])
                ok = add_rule(d, CLASSES[i].gds[1], NULL, NULL);
            if (ok && CLASSES[i].random_text)
                ok = add_rule(d, ISC_RANDOM, NULL, CLASSES[i].random_text);
            return ok;
        }
    }
    size_t n = strlen(w);
    if (n == 5 && strspn(w, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") == 5)
        return add_rule(d, 0, w, NULL);
    if (n > 0 && n <= 10 && strspn(w, "0123456789") == n) {
        unsigned long long v = strtoull(w, NULL, 10);
        return v > 0 && v <= UINT32_MAX && add_rule(d, (uint32_t)v, NULL, NULL);
    }
    return 0;
}

static int parse_ignore(fbw_sbdrv *d, const char *list)
{
    char buf[512];
    if (list == NULL)
        return 1;
    if (strlen(list) >= sizeof buf)
        return 0;
    strcpy(buf, list);
    for (char *save = NULL, *w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save))
        if (!parse_one_ignore(d, w)) {
            HOST.log_text(FBW_SB_LOG_FATAL, "%s: invalid --%s-ignore-errors entry '%s'",
                          d->prefix, d->prefix, w);
            return 0;
        }
    return 1;
}

static int read_options(fbw_sbdrv *d)
{
    fbw_be_conf *f = &d->conf;
    memset(f, 0, sizeof *f);
    d->classes = 0;
    d->nignore = 0;
    f->db = opt_string(d, "db");
    f->user = opt_string(d, "user");
    if (f->user == NULL)
        f->user = getenv("ISC_USER");
    if (f->user == NULL || f->user[0] == '\0')
        f->user = "SYSDBA";
    f->password = opt_string(d, "password");
    if (f->password == NULL)
        f->password = getenv("ISC_PASSWORD");
    if (f->password == NULL)
        f->password = "";
    f->lock_timeout = opt_int(d, "lock-timeout");
    f->restart_statements = (unsigned)opt_int(d, "shared-restart-statements");
    f->restart_ms = (unsigned)opt_int(d, "shared-restart-ms");
    f->wire_crypt = opt_string(d, "wire-crypt");
    f->compress = opt_flag(d, "compress");
    f->auth = opt_string(d, "auth");
    f->create_db = opt_flag(d, "create-db");
    f->page_size = opt_int(d, "page-size");
    f->connect_timeout = opt_int(d, "connect-timeout");
    f->timeout = d->be == &fbw_backend_fbwire ? opt_int(d, "timeout") : 0;
    const char *iso = opt_string(d, "isolation");
    const char *ac = opt_string(d, "autocommit");
    const char *pipe = opt_string(d, "pipeline");
    const char *why = NULL;
    if (f->db == NULL)
        why = "--%s-db is required";
    else if (iso && !parse_isolation(iso, &f->isolation))
        why = "invalid --%s-isolation";
    else if (ac && strcasecmp(ac, "shared") == 0)
        f->autocommit = FBW_AC_SHARED;
    else if (ac && strcasecmp(ac, "pipelined") == 0 && d->be == &fbw_backend_fbwire)
        f->autocommit = FBW_AC_PIPELINED;
    else if (!ac || !*ac)
        f->autocommit = d->be == &fbw_backend_fbwire ? FBW_AC_SHARED : FBW_AC_PER_STATEMENT;
    else if (strcasecmp(ac, "per-statement") != 0)
        why = d->be == &fbw_backend_fbwire
                  ? "invalid --%s-autocommit (per-statement, shared or pipelined)"
                  : "invalid --%s-autocommit (per-statement or shared; only fbwire can pipeline)";
    if (why == NULL && f->wire_crypt && strcasecmp(f->wire_crypt, "disabled") != 0 &&
        strcasecmp(f->wire_crypt, "enabled") != 0 && strcasecmp(f->wire_crypt, "required") != 0)
        why = "invalid --%s-wire-crypt (disabled, enabled or required)";
    if (why == NULL && f->page_size != 0 && f->page_size != 4096 && f->page_size != 8192 &&
        f->page_size != 16384 && f->page_size != 32768)
        why = "invalid --%s-page-size (4096, 8192, 16384 or 32768; 0 for the server's default)";
    if (why == NULL && pipe && strcasecmp(pipe, "transaction") == 0 && d->be == &fbw_backend_fbwire)
        f->pipeline = FBW_PIPE_TRANSACTION;
    else if (why == NULL && pipe && strcasecmp(pipe, "off") != 0)
        why = d->be == &fbw_backend_fbwire
                  ? "invalid --%s-pipeline (off or transaction)"
                  : "invalid --%s-pipeline (only off: only fbwire pipelines)";
    if (why == NULL && (f->connect_timeout < 1 || f->connect_timeout > 86400))
        why = "invalid --%s-connect-timeout (1..86400 seconds)";
    if (why == NULL && d->be == &fbw_backend_fbwire && (f->timeout < 1 || f->timeout > 86400))
        why = "invalid --%s-timeout (1..86400 seconds)";
    if (why == NULL && f->lock_timeout < -1)
        why = "invalid --%s-lock-timeout (-1, 0 or seconds)";
    if (why != NULL) {
        HOST.log_text(FBW_SB_LOG_FATAL, why, d->prefix);
        return 0;
    }
    return parse_ignore(d, opt_string(d, "ignore-errors"));
}

/* ---------------------------------------------------------------- driver-level ops */

static int drv_init(fbw_sbdrv *d)
{
    if (!read_options(d))
        return 1;
    d->ps_disable = HOST.db_globals->ps_mode == SB_PS_MODE_DISABLE;
    d->debug = HOST.db_globals->debug != 0;
    d->conf.debug = d->debug;
    fbw_err err;
    fbw_err_clear(&err);
    if (d->be->global_init(&err) != FBW_OK) {
        HOST.log_text(FBW_SB_LOG_FATAL, "%s: %s", d->prefix, err.msg);
        return 1;
    }
    int acct = fbw_sbrep_accounting(opt_string(d, "accounting"));
    if (acct == -1) {
        HOST.log_text(FBW_SB_LOG_FATAL,
                      "invalid --%s-accounting (sampled, every-call, off, cost-sampled or "
                      "cost-every-call)", d->prefix);
        return 1;
    }
    d->rep = fbw_sbrep_open(&HOST, d->prefix, d->be, &d->conf, opt_string(d, "report"), acct);
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
    for (int i = 0; i < FBW_SBDRV_COUNT; i++) {
        fbw_sbdrv *d = (fbw_sbdrv *)(void *)fbw_sbdrv_driver(i); /* drv is the first member */
        fbw_sbrep_done(d->rep);
        d->rep = NULL;
    }
    return 0;
}

static fbw_sbdrv *driver_of(const sb_conn *con)
{
    return (fbw_sbdrv *)(void *)con->driver; /* drv is the first member */
}

static sbconn *conn_of(const sb_conn *con)
{
    return con->ptr;
}

/* ---------------------------------------------------------------- connections */

/* Server status codes the connect hints look for. */
#define ISC_IO_ERROR 335544344u
#define ISC_IO_OPEN_ERR 335544734u
#define ISC_LOGIN 335544472u
#define ISC_LOGIN_ERROR 335545106u /* e.g. no plugin of the client's list is in AuthServer */
#define ISC_WIRECRYPT_INCOMPATIBLE 335545064u
#define ISC_MISS_WIRECRYPT 335545065u
#define ISC_WIRECRYPT_PLUGIN 335545067u
#define ISC_CONNECT_REJECT 335544421u /* also fbclient's word for a connect timeout */

static int has_gds(const fbw_err *e, uint32_t code)
{
    for (int i = 0; i < e->ngds && i < FBW_ERR_GDS_MAX; i++)
        if (e->gds[i] == code)
            return 1;
    return 0;
}

/* The server could not open the database file: usually it does not exist. (The OS error comes
 * as text, so it is not told apart from e.g. a permission problem; creating then fails with the
 * server's own reason, as the server never overwrites a file.) */
static int db_missing(const fbw_err *e)
{
    return e->code == FBW_E_SERVER && has_gds(e, ISC_IO_ERROR) && has_gds(e, ISC_IO_OPEN_ERR);
}

/* What to change when the server refused the connection: the option that decides it. */
static void connect_hint(const fbw_sbdrv *d, const fbw_err *e, char *out, size_t cap)
{
    const char *p = d->prefix, *wc = d->conf.wire_crypt ? d->conf.wire_crypt : "enabled";
    out[0] = '\0';
    if (has_gds(e, ISC_WIRECRYPT_INCOMPATIBLE) || has_gds(e, ISC_MISS_WIRECRYPT) ||
        (e->code == FBW_E_CRYPT && strcasecmp(wc, "required") == 0))
        snprintf(out, cap,
                 strcasecmp(wc, "disabled") == 0
                     ? " (the server requires wire encryption: use --%s-wire-crypt=enabled)"
                     : " (the server does not allow wire encryption: use --%s-wire-crypt=enabled "
                       "or disabled)",
                 p);
    else if (has_gds(e, ISC_WIRECRYPT_PLUGIN) || e->code == FBW_E_CRYPT)
        snprintf(out, cap, " (no wire crypt plugin both sides support: try --%s-wire-crypt="
                 "disabled if the server allows it)", p);
    else if (has_gds(e, ISC_LOGIN) || has_gds(e, ISC_LOGIN_ERROR) || e->code == FBW_E_AUTH)
        snprintf(out, cap,
                 " (check --%s-user and --%s-password or ISC_USER/ISC_PASSWORD; and that "
                 "--%s-auth (now %s) names a plugin of the server's AuthServer list)",
                 p, p, p, d->conf.auth ? d->conf.auth : "the client default Srp256,Srp");
    else if (db_missing(e))
        snprintf(out, cap, " (if the database does not exist, --%s-create-db=on creates it)", p);
    else if (has_gds(e, ISC_CONNECT_REJECT))
        snprintf(out, cap, " (fbclient says this too when the server did not answer within "
                 "--%s-connect-timeout=%d)", p, d->conf.connect_timeout);
}

/* Create the database when the attach found none and --P-create-db is on. Serialized: sysbench's
 * prepare connects from several threads at once, and only the first may create; the others
 * then attach to what it created. */
static int attach_or_create(fbw_sbdrv *d, sbconn *sc)
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
            HOST.log_text(FBW_SB_LOG_NOTICE, "%s: created database '%s'", d->prefix, d->conf.db);
        else
            fbw_err_prefix(&sc->err, "--%s-create-db=on: cannot create the database", d->prefix);
    }
    pthread_mutex_unlock(&create_lock);
    return rc;
}

static int open_backend(sbconn *sc)
{
    fbw_sbdrv *d = sc->d;
    fbw_err_clear(&sc->err);
    int rc = attach_or_create(d, sc);
    if (rc != FBW_OK) {
        char hint[320];
        connect_hint(d, &sc->err, hint, sizeof hint);
        HOST.log_text(FBW_SB_LOG_FATAL, "%s: connection to '%s' as %s failed: %s%s", d->prefix,
                      d->conf.db, d->conf.user, sc->err.msg, hint);
    }
    return rc;
}

static int drv_connect(sb_conn *con)
{
    sbconn *sc = calloc(1, sizeof *sc);
    if (sc == NULL)
        return 1;
    sc->d = driver_of(con);
    fbw_sbrep_connect_begin(sc->d->rep); /* report hooks: watch the attach, charge it */
    int rc = open_backend(sc);
    fbw_sbrep_connect_end(sc->d->rep, &sc->rep, sc->bc, rc);
    if (rc != FBW_OK) {
        free(sc);
        return 1;
    }
    con->ptr = sc;
    return 0;
}

static void stmt_release(sbconn *sc, sbstmt *ss)
{
    if (ss->bs)
        sc->d->be->close(ss->bs);
    free(ss->sql);
    if (ss->text != ss->sql)
        free(ss->text);
    free(ss->vals);
    free(ss->scratch);
    free(ss);
}

static int drv_disconnect(sb_conn *con)
{
    sbconn *sc = conn_of(con);
    if (sc == NULL)
        return 0;
    while (sc->stmts) { /* statements the script never closed */
        sbstmt *ss = sc->stmts;
        sc->stmts = ss->next;
        stmt_release(sc, ss);
    }
    fbw_sbrep_detach(&sc->rep, 1); /* report: charge what is left, stop watching */
    sc->d->be->disconnect(sc->bc);
    fbw_be_result_free(&sc->res);
    free(sc);
    con->ptr = NULL;
    return 0;
}

/* Drop the attachment and attach again, retrying for RECONNECT_SECONDS unless sysbench is
 * stopping. Statements are re-prepared lazily on their next execute. */
static int reattach(sbconn *sc)
{
    for (sbstmt *ss = sc->stmts; ss; ss = ss->next) {
        if (ss->bs)
            sc->d->be->close(ss->bs);
        ss->bs = NULL;
    }
    fbw_sbrep_detach(&sc->rep, 0);
    sc->d->be->disconnect(sc->bc);
    sc->bc = NULL;
    sc->in_txn = 0;
    struct timespec pause = {0, 10 * 1000 * 1000}, t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* Bounded by time, not attempts: against a stalled server each attempt itself lasts up to
     * the connect timeout. */
    for (now = t0; now.tv_sec - t0.tv_sec < RECONNECT_SECONDS && !*HOST.sb_error;
         clock_gettime(CLOCK_MONOTONIC, &now)) {
        fbw_err_clear(&sc->err);
        fbw_sbrep_connect_begin(sc->d->rep);
        int rc = sc->d->be->connect(&sc->d->conf, &sc->bc, &sc->err);
        fbw_sbrep_connect_end(sc->d->rep, &sc->rep, sc->bc, rc);
        if (rc == FBW_OK)
            return 0;
        nanosleep(&pause, NULL);
    }
    HOST.log_text(FBW_SB_LOG_FATAL, "%s: reconnect to '%s' failed: %s", sc->d->prefix,
                  sc->d->conf.db, sc->err.msg);
    return -1;
}

static int drv_reconnect(sb_conn *con)
{
    sbconn *sc = conn_of(con);
    if (sc == NULL)
        return SB_DB_ERROR_FATAL;
    return reattach(sc) == 0 ? SB_DB_ERROR_IGNORABLE : SB_DB_ERROR_FATAL;
}

/* ---------------------------------------------------------------- outcome of a statement */

static void clear_error(sb_conn *con)
{
    con->sql_errno = 0;
    con->sql_state = NULL;
    con->sql_errmsg = NULL;
}

static int is_ignorable(const fbw_sbdrv *d, const fbw_err *e)
{
    if (d->classes & CLASS_ALL)
        return 1;
    for (int r = 0; r < d->nignore; r++) {
        const ignore_rule *ir = &d->ignore[r];
        if (ir->gds == 0 && strcmp(ir->sqlstate, e->sqlstate) == 0)
            return 1;
        if (ir->text && strstr(e->msg, ir->text) == NULL)
            continue;
        for (int i = 0; ir->gds && i < e->ngds && i < FBW_ERR_GDS_MAX; i++)
            if (e->gds[i] == ir->gds)
                return 1;
    }
    return 0;
}

static void debug_sql(const fbw_sbdrv *d, const char *what, const char *sql, size_t len)
{
    if (d->debug)
        HOST.log_text(FBW_SB_LOG_NOTICE, "%s: %s: %.*s", d->prefix, what,
                      (int)(len > 2000 ? 2000 : len), sql);
}

/* Translate a backend outcome into sysbench's result fields and error code. */
static sb_db_error finish(sb_conn *con, sbconn *sc, int rc, const char *sql, size_t len)
{
    sb_result *rs = &con->rs;
    fbw_sbdrv *d = sc->d;
    if (rc == FBW_OK) {
        const fbw_be_result *r = &sc->res;
        if (r->deferred) {
            /* Pipelined: the reply is still to come. sysbench fetches rows only when nrows > 0,
             * so a result set says UINT32_MAX (unknown) until its first fetch_row, which syncs
             * and sets the true count; DML counts as a write (affected rows not known yet). */
            rs->counter = r->has_set          ? SB_CNT_READ
                          : r->deferred_write ? SB_CNT_WRITE
                                              : SB_CNT_OTHER;
            rs->nrows = r->has_set ? UINT32_MAX : 0;
            rs->nfields = r->has_set ? r->ncols : 0;
            rs->ptr = r->has_set ? sc : NULL;
            rs->row.ptr = NULL;
        } else if (r->has_set) {
            rs->counter = SB_CNT_READ;
            rs->nrows = r->nrows;
            rs->nfields = r->ncols;
            rs->ptr = sc;
            rs->row.ptr = NULL;
        } else {
            rs->nrows = r->affected > UINT32_MAX ? UINT32_MAX : (uint32_t)r->affected;
            rs->counter = r->affected > 0 ? SB_CNT_WRITE : SB_CNT_OTHER;
        }
        if (d->debug)
            HOST.log_text(FBW_SB_LOG_NOTICE, "%s: -> %s, %u rows", d->prefix,
                          r->has_set ? "rows" : "done", rs->nrows);
        return SB_DB_ERROR_NONE;
    }
    fbw_err *e = &sc->err;
    snprintf(sc->state, sizeof sc->state, "%s", e->sqlstate[0] ? e->sqlstate : "HY000");
    con->sql_errno = e->ngds > 0 ? (int)e->gds[0] : rc;
    con->sql_state = sc->state;
    con->sql_errmsg = e->msg;
    rs->counter = SB_CNT_ERROR;
    rs->nrows = 0;
    if (fbw_be_conn_lost(rc, e)) {
        if ((d->classes & CLASS_NETWORK) && reattach(sc) == 0) {
            rs->counter = SB_CNT_RECONNECT;
            return SB_DB_ERROR_IGNORABLE;
        }
        /* A write outside BEGIN ... COMMIT commits with its own reply: with the reply lost,
         * whether it is in the database is unknown (a COMMIT's own error says so already). */
        fbw_sql_class cls = sql ? fbw_classify(sql, len) : FBW_CLS_OTHER;
        int autocommit_write = !sc->in_txn && (cls == FBW_CLS_UPDATE_INDEX ||
                                               cls == FBW_CLS_UPDATE_NON_INDEX ||
                                               cls == FBW_CLS_DELETE || cls == FBW_CLS_INSERT ||
                                               cls == FBW_CLS_BULK_INSERT || cls == FBW_CLS_DDL);
        HOST.log_text(FBW_SB_LOG_FATAL, "%s: connection lost during '%.*s': %s%s", d->prefix,
                      (int)(len > 200 ? 200 : len), sql ? sql : "", e->msg,
                      autocommit_write ? "; the statement ran in autocommit: whether it was "
                                         "committed is unknown"
                                       : "");
        return SB_DB_ERROR_FATAL;
    }
    if (is_ignorable(d, e)) {
        if (d->debug)
            HOST.log_text(FBW_SB_LOG_NOTICE, "%s: ignoring error %d: %s", d->prefix,
                          con->sql_errno, e->msg);
        fbw_err keep = *e;
        (void)d->be->rollback(sc->bc, e); /* the event restarts from its BEGIN */
        sc->in_txn = 0;
        *e = keep;
        return SB_DB_ERROR_IGNORABLE;
    }
    HOST.log_text(FBW_SB_LOG_FATAL, "%s: error %d (SQLSTATE %s) for query '%.*s': %s", d->prefix,
                  con->sql_errno, sc->state, (int)(len > 500 ? 500 : len), sql ? sql : "",
                  e->msg);
    return SB_DB_ERROR_FATAL;
}

/* BEGIN, COMMIT, ROLLBACK: transaction calls of the backend. */
static int txn_control(sbconn *sc, fbw_sql_kind kind)
{
    const fbw_backend *be = sc->d->be;
    int rc;
    if (kind == FBW_SQL_BEGIN) {
        rc = be->begin(sc->bc, &sc->err);
        sc->in_txn = rc == FBW_OK;
        return rc;
    }
    rc = kind == FBW_SQL_COMMIT ? be->commit(sc->bc, &sc->err) : be->rollback(sc->bc, &sc->err);
    sc->in_txn = 0; /* a failed commit is rolled back by the backend */
    return rc;
}

/* Concurrent DDL (parallel `prepare` of several tables) collides on system tables; such a
 * statement run in autocommit left nothing behind, so it is simply tried again. */
#define DDL_RETRIES 20

static int is_conflict(const fbw_err *e)
{
    static const uint32_t codes[] = {335544336u, 335544451u, 335544345u, 335544510u};
    for (int i = 0; i < e->ngds && i < FBW_ERR_GDS_MAX; i++)
        for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++)
            if (e->gds[i] == codes[k])
                return 1;
    return 0;
}

static int exec_ddl_aware(sbconn *sc, const fbw_sql_plan *plan, const char *sql, size_t len)
{
    int rc;
    for (int attempt = 0;; attempt++) {
        rc = sc->d->be->exec(sc->bc, sql, len, &sc->res, &sc->err);
        if (rc != FBW_E_SERVER || !plan->ddl || sc->in_txn || attempt >= DDL_RETRIES ||
            !is_conflict(&sc->err))
            return rc;
        if (sc->d->debug)
            HOST.log_text(FBW_SB_LOG_NOTICE, "%s: retrying DDL after: %s", sc->d->prefix,
                          sc->err.msg);
        struct timespec pause = {0, (long)(attempt + 1) * 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

/* Run SQL text through the dialect and the backend (the query op and emulated statements). */
static int run_text(sbconn *sc, const char *sql, size_t len)
{
    const fbw_backend *be = sc->d->be;
    fbw_sql_plan plan;
    debug_sql(sc->d, "query", sql, len);
    fbw_be_result_reset(&sc->res);
    int rc = fbw_dialect_plan(sql, len, &plan, &sc->err);
    if (rc != FBW_OK)
        return rc;
    switch (plan.kind) {
    case FBW_SQL_BEGIN:
    case FBW_SQL_COMMIT:
    case FBW_SQL_ROLLBACK:
        rc = txn_control(sc, plan.kind);
        break;
    case FBW_SQL_BULK_INSERT: {
        fbw_bulk_insert b;
        rc = fbw_dialect_parse_insert(sql, len, &b, &sc->err);
        if (rc == FBW_OK) {
            debug_sql(sc->d, "bulk insert", b.single, b.single_len);
            rc = be->bulk_insert(sc->bc, &b, &sc->res, &sc->err);
            fbw_dialect_bulk_free(&b);
        }
        break;
    }
    case FBW_SQL_REWRITTEN:
        debug_sql(sc->d, "rewritten", plan.text, plan.len);
        rc = exec_ddl_aware(sc, &plan, plan.text, plan.len);
        break;
    default:
        rc = exec_ddl_aware(sc, &plan, sql, len);
        break;
    }
    fbw_dialect_plan_free(&plan);
    return rc;
}

static sb_db_error drv_query(sb_conn *con, const char *query, size_t len, sb_result *rs)
{
    (void)rs; /* always &con->rs */
    sbconn *sc = conn_of(con);
    clear_error(con);
    fbw_sbrep_begin(sc->rep);
    sb_db_error e = finish(con, sc, run_text(sc, query, len), query, len);
    sc->last_cls = fbw_classify(query, len);
    fbw_sbrep_charge(sc->rep, sc->last_cls); /* report: this statement's traffic */
    return e;
}

/* ---------------------------------------------------------------- statements */

static int prepare_backend(sbconn *sc, sbstmt *ss)
{
    if (ss->emulated || ss->kind == FBW_SQL_BEGIN || ss->kind == FBW_SQL_COMMIT ||
        ss->kind == FBW_SQL_ROLLBACK || ss->bs != NULL)
        return FBW_OK;
    debug_sql(sc->d, "prepare", ss->text, ss->text_len);
    return sc->d->be->prepare(sc->bc, ss->text, ss->text_len, &ss->bs, &sc->err);
}

static int drv_prepare(sb_stmt *stmt, const char *query, size_t len)
{
    sb_conn *con = stmt->connection;
    sbconn *sc = conn_of(con);
    clear_error(con);
    fbw_sbrep_begin(sc->rep);
    sbstmt *ss = calloc(1, sizeof *ss);
    fbw_sql_plan plan = {FBW_SQL_PLAIN, 0, NULL, 0};
    int rc = ss ? FBW_OK : fbw_err_set(&sc->err, FBW_E_NOMEM, "out of memory");
    if (rc == FBW_OK && (ss->sql = malloc(len + 1)) == NULL)
        rc = fbw_err_set(&sc->err, FBW_E_NOMEM, "out of memory");
    if (rc == FBW_OK) {
        memcpy(ss->sql, query, len);
        ss->sql[len] = '\0';
        ss->sql_len = len;
        rc = fbw_dialect_plan(query, len, &plan, &sc->err);
    }
    if (rc == FBW_OK) {
        ss->kind = plan.kind;
        ss->text = plan.text ? plan.text : ss->sql;
        ss->text_len = plan.text ? plan.len : len;
        ss->emulated = sc->d->ps_disable || plan.kind == FBW_SQL_BULK_INSERT;
        stmt->emulated = (char)ss->emulated;
        ss->cls = fbw_classify(query, len);
        rc = prepare_backend(sc, ss);
        fbw_sbrep_charge(sc->rep, FBW_CLS_PREPARE);
    }
    if (rc != FBW_OK) {
        if (ss)
            stmt_release(sc, ss);
        else
            fbw_dialect_plan_free(&plan);
        (void)finish(con, sc, rc, query, len);
        return 1;
    }
    ss->next = sc->stmts;
    sc->stmts = ss;
    stmt->ptr = ss;
    return 0;
}

static int drv_bind_param(sb_stmt *stmt, sb_bind *params, size_t n)
{
    sbstmt *ss = stmt->ptr;
    sbconn *sc = conn_of(stmt->connection);
    if (ss->bs && sc->d->be->param_count(ss->bs) != n) {
        HOST.log_text(FBW_SB_LOG_FATAL, "%s: statement takes %u parameters, %zu bound: %s",
                      sc->d->prefix, sc->d->be->param_count(ss->bs), n, ss->sql);
        return 1;
    }
    sb_bind *copy = n ? malloc(n * sizeof *copy) : NULL;
    fbw_val *vals = n ? calloc(n, sizeof *vals) : NULL;
    char(*scratch)[32] = n ? calloc(n, sizeof *scratch) : NULL;
    if (n && (copy == NULL || vals == NULL || scratch == NULL)) {
        free(copy);
        free(vals);
        free(scratch);
        return 1;
    }
    if (n)
        memcpy(copy, params, n * sizeof *copy);
    free(stmt->bound_param); /* sysbench frees only the last one, at close */
    stmt->bound_param = copy;
    stmt->bound_param_len = (unsigned)n;
    free(ss->vals);
    free(ss->scratch);
    ss->vals = vals;
    ss->scratch = scratch;
    ss->nvals = n;
    return 0;
}

/* Read the current bound values (sysbench rewrites the buffers, not the binds). */
static void load_params(sb_stmt *stmt, sbstmt *ss)
{
    for (size_t i = 0; i < ss->nvals; i++) {
        const sb_bind *b = &stmt->bound_param[i];
        fbw_val *v = &ss->vals[i];
        memset(v, 0, sizeof *v);
        if ((b->is_null && *b->is_null) || b->buffer == NULL) {
            v->type = FBW_VAL_NULL;
            continue;
        }
        v->type = FBW_VAL_INT64;
        switch (b->type) {
        case SB_TYPE_TINYINT: v->i = *(const int8_t *)b->buffer; break;
        case SB_TYPE_SMALLINT: v->i = *(const int16_t *)b->buffer; break;
        case SB_TYPE_INT: v->i = *(const int32_t *)b->buffer; break;
        case SB_TYPE_BIGINT: v->i = *(const int64_t *)b->buffer; break;
        case SB_TYPE_FLOAT:
            v->type = FBW_VAL_DOUBLE;
            v->d = *(const float *)b->buffer;
            break;
        case SB_TYPE_DOUBLE:
            v->type = FBW_VAL_DOUBLE;
            v->d = *(const double *)b->buffer;
            break;
        case SB_TYPE_TIME: case SB_TYPE_DATE: case SB_TYPE_DATETIME: case SB_TYPE_TIMESTAMP: {
            const sb_time *t = b->buffer;
            int k = b->type == SB_TYPE_TIME
                        ? snprintf(ss->scratch[i], 32, "%02u:%02u:%02u", t->hour % 100u,
                                   t->minute % 100u, t->second % 100u)
                    : b->type == SB_TYPE_DATE
                        ? snprintf(ss->scratch[i], 32, "%04u-%02u-%02u", t->year % 10000u,
                                   t->month % 100u, t->day % 100u)
                        : snprintf(ss->scratch[i], 32, "%04u-%02u-%02u %02u:%02u:%02u",
                                   t->year % 10000u, t->month % 100u, t->day % 100u,
                                   t->hour % 100u, t->minute % 100u, t->second % 100u);
            v->type = FBW_VAL_TEXT;
            v->s = ss->scratch[i];
            v->len = (size_t)k;
            break;
        }
        default: { /* CHAR, VARCHAR: data_len counts; no NUL terminator when full */
            size_t len = b->data_len ? *b->data_len : strnlen(b->buffer, b->max_len);
            v->type = FBW_VAL_TEXT;
            v->s = b->buffer;
            v->len = len > b->max_len ? b->max_len : len;
            break;
        }
        }
    }
}

static int exec_emulated(sbconn *sc, sbstmt *ss)
{
    char *text;
    size_t len;
    int rc = fbw_dialect_inline(ss->sql, ss->sql_len, ss->vals, ss->nvals, &text, &len,
                                &sc->err);
    if (rc == FBW_OK) {
        rc = run_text(sc, text, len);
        free(text);
    }
    return rc;
}

static int exec_prepared(sbconn *sc, sbstmt *ss)
{
    const fbw_backend *be = sc->d->be;
    fbw_be_result_reset(&sc->res);
    debug_sql(sc->d, "execute", ss->text, ss->text_len);
    if (ss->kind == FBW_SQL_BEGIN || ss->kind == FBW_SQL_COMMIT || ss->kind == FBW_SQL_ROLLBACK)
        return txn_control(sc, ss->kind);
    int rc = prepare_backend(sc, ss); /* after a reconnect */
    if (rc == FBW_OK)
        rc = be->execute(ss->bs, ss->vals, ss->nvals, &sc->res, &sc->err);
    return rc;
}

static sb_db_error drv_execute(sb_stmt *stmt, sb_result *rs)
{
    (void)rs;
    sb_conn *con = stmt->connection;
    sbconn *sc = conn_of(con);
    sbstmt *ss = stmt->ptr;
    clear_error(con);
    fbw_sbrep_begin(sc->rep);
    if (ss->nvals && stmt->bound_param == NULL)
        ss->nvals = 0;
    load_params(stmt, ss);
    int rc = ss->emulated ? exec_emulated(sc, ss) : exec_prepared(sc, ss);
    sb_db_error e = finish(con, sc, rc, ss->sql, ss->sql_len);
    sc->last_cls = ss->cls;
    fbw_sbrep_charge(sc->rep, ss->cls); /* report: this statement's traffic */
    return e;
}

static int drv_close(sb_stmt *stmt)
{
    sbstmt *ss = stmt->ptr;
    sbconn *sc = conn_of(stmt->connection);
    if (ss == NULL || sc == NULL)
        return 0;
    for (sbstmt **pp = &sc->stmts; *pp; pp = &(*pp)->next) {
        if (*pp == ss) {
            *pp = ss->next;
            break;
        }
    }
    fbw_sbrep_begin(sc->rep);
    stmt_release(sc, ss);
    fbw_sbrep_charge(sc->rep, FBW_CLS_SESSION);
    stmt->ptr = NULL;
    return 0;
}

static int drv_bind_result(sb_stmt *stmt, sb_bind *results, size_t n)
{
    (void)stmt;
    (void)results;
    (void)n;
    HOST.log_text(FBW_SB_LOG_ALERT, "fbwire: bind_result (legacy API) is not supported");
    return 1;
}

/* ---------------------------------------------------------------- results */

static int drv_fetch(sb_result *rs)
{
    (void)rs;
    return 1;
}

static int drv_fetch_row(sb_result *rs, sb_row *row)
{
    sbconn *sc = rs->ptr;
    if (sc == NULL)
        return 1;
    if (sc->res.deferred && sc->d->be->fetch_rows) {
        /* A pipelined result read by the script: a sync point. A failure (of this or any
         * queued statement) ends the rows here and is reported by the next statement. */
        fbw_sbrep_begin(sc->rep);
        fbw_err e;
        fbw_err_clear(&e);
        int rc = sc->d->be->fetch_rows(sc->bc, &sc->res, &e);
        fbw_sbrep_charge_more(sc->rep, sc->last_cls);
        if (rc != FBW_OK) {
            if (sc->d->debug)
                HOST.log_text(FBW_SB_LOG_NOTICE, "%s: pipelined result not read: %s", sc->d->prefix,
                              e.msg);
            sc->res.nrows = 0;
            return 1;
        }
        rs->nrows = sc->res.nrows;
    }
    const fbw_be_result *r = &sc->res;
    uintptr_t idx = (uintptr_t)row->ptr;
    if (idx >= r->nrows)
        return 1;
    for (uint32_t c = 0; c < r->ncols; c++) {
        size_t cell = (size_t)idx * r->ncols + c;
        row->values[c].ptr = fbw_be_cell_ptr(r, cell);
        row->values[c].len = r->cells[cell].len;
    }
    row->ptr = (void *)(idx + 1);
    return 0;
}

static int drv_free_results(sb_result *rs)
{
    rs->ptr = NULL;
    rs->row.ptr = NULL;
    return 0;
}

/* ---------------------------------------------------------------- the driver objects */

static int init_fbwire(void);
static int init_fbclient(void);

#define FB_OPS(INIT)                                                                            \
    {                                                                                           \
        .init = INIT, .thread_init = NULL, .describe = describe, .connect = drv_connect,        \
        .disconnect = drv_disconnect, .reconnect = drv_reconnect, .prepare = drv_prepare,       \
        .bind_param = drv_bind_param, .bind_result = drv_bind_result, .execute = drv_execute,   \
        .fetch = drv_fetch, .fetch_row = drv_fetch_row, .free_results = drv_free_results,       \
        .close = drv_close, .query = drv_query, .thread_done = NULL, .done = drv_done,          \
    }

static fbw_sbdrv DRIVERS[FBW_SBDRV_COUNT] = {
    {.drv = {.sname = "fbwire", .lname = "Firebird driver (fbwire native protocol client)",
             .args = ARGS_FBWIRE, .ops = FB_OPS(init_fbwire)},
     .be = &fbw_backend_fbwire, .prefix = "fbwire"},
    {.drv = {.sname = "fbclient", .lname = "Firebird driver (libfbclient baseline)",
             .args = ARGS_FBCLIENT, .ops = FB_OPS(init_fbclient)},
     .be = &fbw_backend_fbclient, .prefix = "fbclient"},
};

static int init_fbwire(void)
{
    return drv_init(&DRIVERS[FBW_SBDRV_FBWIRE]);
}

static int init_fbclient(void)
{
    return drv_init(&DRIVERS[FBW_SBDRV_FBCLIENT]);
}

void fbw_sbdrv_setup(const fbw_sb_host *host)
{
    HOST = *host;
}

sb_driver *fbw_sbdrv_driver(int which)
{
    if (which < 0 || which >= FBW_SBDRV_COUNT)
        return NULL;
    return &DRIVERS[which].drv;
}
