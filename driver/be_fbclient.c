/* SPDX-License-Identifier: MIT */
/* be_fbclient.c - the baseline backend: Firebird's own client library through the ISC API.
 *
 * libfbclient.so.2 is dlopen()ed on first use, so it is not a build or link dependency and the
 * plug-in still loads where it is missing. The few ISC types and entry points used are declared
 * here from the documented C API (XSQLDA, TEB, status vectors); fbclient's headers are not
 * used. Wire encryption is switched off through the DPB config (WireCrypt = Disabled by
 * default) so captures of this baseline stay readable by fbwire's decoder. The only
 * process-wide state is the resolved entry-point table, written once under pthread_once. */
#define _GNU_SOURCE
#include "backend.h"

#include <dlfcn.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- ISC declarations */

typedef intptr_t isc_status;   /* ISC_STATUS on LP64 */
typedef unsigned int isc_handle; /* FB_API_HANDLE on LP64 */
#define STATUS_LEN 20

typedef struct xsqlvar {
    short sqltype, sqlscale, sqlsubtype, sqllen;
    char *sqldata;
    short *sqlind;
    short sqlname_length;
    char sqlname[32];
    short relname_length;
    char relname[32];
    short ownname_length;
    char ownname[32];
    short aliasname_length;
    char aliasname[32];
} xsqlvar;

typedef struct xsqlda {
    short version;
    char sqldaid[8];
    int sqldabc;
    short sqln, sqld;
    xsqlvar sqlvar[1];
} xsqlda;

typedef struct isc_teb {
    isc_handle *db;
    int tpb_len;
    const char *tpb;
} isc_teb;

_Static_assert(sizeof(xsqlvar) == 160, "XSQLVAR layout");
_Static_assert(offsetof(xsqlda, sqlvar) == 24, "XSQLDA layout");

enum {
    SQL_TEXT = 452, SQL_VARYING = 448, SQL_SHORT = 500, SQL_LONG = 496, SQL_FLOAT = 482,
    SQL_DOUBLE = 480, SQL_D_FLOAT = 530, SQL_TIMESTAMP = 510, SQL_BLOB = 520, SQL_ARRAY = 540,
    SQL_QUAD = 550, SQL_TYPE_TIME = 560, SQL_TYPE_DATE = 570, SQL_INT64 = 580,
    SQL_BOOLEAN = 32764, SQL_NULL = 32766
};
enum { SQLDA_VERSION1 = 1, SQL_DIALECT_V6 = 3, DSQL_CLOSE = 1, DSQL_DROP = 2 };
enum {
    DPB_VERSION1 = 1, DPB_PAGE_SIZE = 4, DPB_USER_NAME = 28, DPB_PASSWORD = 29,
    DPB_CONNECT_TIMEOUT = 57, DPB_SQL_DIALECT = 63, DPB_CONFIG = 87
};
enum {
    TPB_VERSION3 = 3, TPB_CONSISTENCY = 1, TPB_CONCURRENCY = 2, TPB_WAIT = 6, TPB_NOWAIT = 7,
    TPB_READ = 8, TPB_WRITE = 9, TPB_READ_COMMITTED = 15, TPB_AUTOCOMMIT = 16,
    TPB_REC_VERSION = 17, TPB_NO_REC_VERSION = 18, TPB_LOCK_TIMEOUT = 21,
    TPB_READ_CONSISTENCY = 22
};
enum {
    INFO_END = 1, INFO_TRUNCATED = 2, INFO_SQL_STMT_TYPE = 21, INFO_SQL_RECORDS = 23,
    INFO_REQ_SELECT = 13, INFO_REQ_INSERT = 14, INFO_REQ_UPDATE = 15, INFO_REQ_DELETE = 16
};
enum {
    STMT_SELECT = 1, STMT_INSERT = 2, STMT_UPDATE = 3, STMT_DELETE = 4, STMT_EXEC_PROC = 8,
    STMT_SELECT_FOR_UPD = 12
};
enum { ARG_END = 0, ARG_GDS = 1, ARG_CSTRING = 3 };

typedef struct fbclient_api {
    isc_status (*attach)(isc_status *, short, const char *, isc_handle *, short, const char *);
    isc_status (*detach)(isc_status *, isc_handle *);
    isc_status (*create)(isc_status *, short, const char *, isc_handle *, short, const char *,
                         short);
    isc_status (*start_multiple)(isc_status *, isc_handle *, short, void *);
    isc_status (*commit)(isc_status *, isc_handle *);
    isc_status (*rollback)(isc_status *, isc_handle *);
    isc_status (*alloc)(isc_status *, isc_handle *, isc_handle *);
    isc_status (*prepare)(isc_status *, isc_handle *, isc_handle *, unsigned short, const char *,
                          unsigned short, xsqlda *);
    isc_status (*describe)(isc_status *, isc_handle *, unsigned short, xsqlda *);
    isc_status (*describe_bind)(isc_status *, isc_handle *, unsigned short, xsqlda *);
    isc_status (*execute)(isc_status *, isc_handle *, isc_handle *, unsigned short,
                          const xsqlda *);
    isc_status (*execute2)(isc_status *, isc_handle *, isc_handle *, unsigned short,
                           const xsqlda *, const xsqlda *);
    isc_status (*immediate)(isc_status *, isc_handle *, isc_handle *, unsigned short,
                            const char *, unsigned short, const xsqlda *);
    isc_status (*fetch)(isc_status *, isc_handle *, unsigned short, const xsqlda *);
    isc_status (*free_stmt)(isc_status *, isc_handle *, unsigned short);
    isc_status (*sql_info)(isc_status *, isc_handle *, short, const char *, short, char *);
    int (*interpret)(char *, unsigned int, const isc_status **);
    void (*sqlstate)(char *, const isc_status *);
} fbclient_api;

typedef struct fbclient_lib {
    pthread_once_t once;
    int rc;
    char msg[256];
    fbclient_api api;
} fbclient_lib;

/* Written once by load_lib under pthread_once, read-only afterwards. */
static fbclient_lib LIB = {PTHREAD_ONCE_INIT, FBW_E_UNSUPPORTED, "", {0}};

#define API (&LIB.api)

/* ---------------------------------------------------------------- objects */

struct fbw_be_conn {
    const fbw_be_conf *conf;
    isc_handle db;
    isc_handle meta_tr;   /* read-only read committed: prepares outside transactions */
    isc_handle exp_tr;    /* explicit transaction (BEGIN) */
    isc_handle shared_tr; /* FBW_AC_SHARED */
    unsigned shared_count;
    uint64_t shared_started_ms;
    char tpb[16];         /* read-write transactions */
    int tpb_len;
    char tpb_ac[16];      /* shared autocommit transaction */
    int tpb_ac_len;
};

struct fbw_be_stmt {
    fbw_be_conn *c;
    isc_handle h;
    int type;             /* STMT_* */
    xsqlda *in, *out;
    char *outbuf;
    short *out_ind, *in_ind;
    int64_t *in_num;      /* int64/double parameter storage */
    char null_byte;
};

/* How a statement's transaction was obtained, for release_tr. */
enum { TR_EXPLICIT, TR_SHARED, TR_OWN };

/* ---------------------------------------------------------------- library and errors */

static void *sym(void *h, const char *name, fbclient_lib *lib)
{
    void *p = dlsym(h, name);
    if (p == NULL && lib->msg[0] == '\0')
        snprintf(lib->msg, sizeof lib->msg, "libfbclient.so.2 lacks %s", name);
    return p;
}

static void load_lib(void)
{
    void *h = dlopen("libfbclient.so.2", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        snprintf(LIB.msg, sizeof LIB.msg, "cannot load libfbclient.so.2: %s", dlerror());
        return;
    }
    fbclient_api *a = &LIB.api;
    *(void **)&a->attach = sym(h, "isc_attach_database", &LIB);
    *(void **)&a->detach = sym(h, "isc_detach_database", &LIB);
    *(void **)&a->create = sym(h, "isc_create_database", &LIB);
    *(void **)&a->start_multiple = sym(h, "isc_start_multiple", &LIB);
    *(void **)&a->commit = sym(h, "isc_commit_transaction", &LIB);
    *(void **)&a->rollback = sym(h, "isc_rollback_transaction", &LIB);
    *(void **)&a->alloc = sym(h, "isc_dsql_allocate_statement", &LIB);
    *(void **)&a->prepare = sym(h, "isc_dsql_prepare", &LIB);
    *(void **)&a->describe = sym(h, "isc_dsql_describe", &LIB);
    *(void **)&a->describe_bind = sym(h, "isc_dsql_describe_bind", &LIB);
    *(void **)&a->execute = sym(h, "isc_dsql_execute", &LIB);
    *(void **)&a->execute2 = sym(h, "isc_dsql_execute2", &LIB);
    *(void **)&a->immediate = sym(h, "isc_dsql_execute_immediate", &LIB);
    *(void **)&a->fetch = sym(h, "isc_dsql_fetch", &LIB);
    *(void **)&a->free_stmt = sym(h, "isc_dsql_free_statement", &LIB);
    *(void **)&a->sql_info = sym(h, "isc_dsql_sql_info", &LIB);
    *(void **)&a->interpret = sym(h, "fb_interpret", &LIB);
    *(void **)&a->sqlstate = sym(h, "fb_sqlstate", &LIB);
    LIB.rc = LIB.msg[0] ? FBW_E_UNSUPPORTED : FBW_OK;
}

static int fbc_global_init(fbw_err *err)
{
    pthread_once(&LIB.once, load_lib);
    if (LIB.rc != FBW_OK)
        return fbw_err_set(err, LIB.rc, "fbclient: %s", LIB.msg);
    return FBW_OK;
}

static int has_error(const isc_status *st)
{
    return st[0] == 1 && st[1] != 0;
}

/* Fill err from a status vector: gds chain, SQLSTATE and the interpreted text. A lost
 * attachment is reported as FBW_E_IO so callers can test it with fbw_be_conn_lost(). */
static int status_err(const isc_status *st, fbw_err *err, const char *what)
{
    fbw_err_clear(err);
    for (int i = 0; i < STATUS_LEN - 1 && st[i] != ARG_END; i += 2) {
        if (st[i] == ARG_GDS && err->ngds < FBW_ERR_GDS_MAX)
            err->gds[err->ngds++] = (uint32_t)st[i + 1];
        else if (st[i] == ARG_CSTRING)
            i++; /* length, pointer: one slot more */
    }
    char state[8] = "";
    API->sqlstate(state, st);
    memcpy(err->sqlstate, state, 5);
    err->sqlstate[5] = '\0';
    char line[512];
    size_t used = (size_t)snprintf(err->msg, sizeof err->msg, "%s: ", what);
    const isc_status *p = st;
    int first = 1;
    while (used < sizeof err->msg - 1 && API->interpret(line, sizeof line, &p) > 0) {
        int n = snprintf(err->msg + used, sizeof err->msg - used, "%s%s", first ? "" : "; ", line);
        used += n > 0 ? (size_t)n : 0;
        first = 0;
    }
    err->code = FBW_E_SERVER;
    if (fbw_be_conn_lost(FBW_E_SERVER, err))
        err->code = FBW_E_IO;
    return err->code;
}

/* ---------------------------------------------------------------- transactions */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int put_isolation(char *t, int n, fbw_be_isolation iso)
{
    switch (iso) {
    case FBW_BE_ISO_SNAPSHOT:
        t[n++] = TPB_CONCURRENCY;
        break;
    case FBW_BE_ISO_SERIALIZABLE:
        t[n++] = TPB_CONSISTENCY;
        break;
    case FBW_BE_ISO_READ_COMMITTED_NOREC:
        t[n++] = TPB_READ_COMMITTED;
        t[n++] = TPB_NO_REC_VERSION;
        break;
    case FBW_BE_ISO_READ_CONSISTENCY:
        t[n++] = TPB_READ_COMMITTED;
        t[n++] = TPB_READ_CONSISTENCY;
        break;
    default:
        t[n++] = TPB_READ_COMMITTED;
        t[n++] = TPB_REC_VERSION;
        break;
    }
    return n;
}

static int put_wait(char *t, int n, int lock_timeout)
{
    if (lock_timeout == 0) {
        t[n++] = TPB_NOWAIT;
        return n;
    }
    t[n++] = TPB_WAIT;
    if (lock_timeout > 0) {
        uint32_t v = (uint32_t)lock_timeout;
        t[n++] = TPB_LOCK_TIMEOUT;
        t[n++] = 4;
        for (int i = 0; i < 4; i++)
            t[n++] = (char)(v >> (8 * i));
    }
    return n;
}

static void build_tpbs(fbw_be_conn *c)
{
    int n = 0;
    c->tpb[n++] = TPB_VERSION3;
    c->tpb[n++] = TPB_WRITE;
    n = put_isolation(c->tpb, n, c->conf->isolation);
    c->tpb_len = put_wait(c->tpb, n, c->conf->lock_timeout);
    n = 0;
    c->tpb_ac[n++] = TPB_VERSION3;
    c->tpb_ac[n++] = TPB_WRITE;
    n = put_isolation(c->tpb_ac, n, FBW_BE_ISO_READ_COMMITTED);
    n = put_wait(c->tpb_ac, n, c->conf->lock_timeout);
    c->tpb_ac[n++] = TPB_AUTOCOMMIT;
    c->tpb_ac_len = n;
}

static int start_tr(fbw_be_conn *c, isc_handle *tr, const char *tpb, int len, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    isc_teb teb = {&c->db, len, tpb};
    *tr = 0;
    if (API->start_multiple(st, tr, 1, &teb) && has_error(st))
        return status_err(st, err, "start transaction");
    return FBW_OK;
}

static int end_tr(isc_handle *tr, int commit, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    if (*tr == 0)
        return FBW_OK;
    if (commit) {
        if (API->commit(st, tr) && has_error(st)) {
            int rc = status_err(st, err, "commit");
            isc_status st2[STATUS_LEN];
            if (API->rollback(st2, tr) && has_error(st2))
                *tr = 0; /* the handle is useless either way */
            return rc;
        }
    } else if (API->rollback(st, tr) && has_error(st)) {
        *tr = 0;
        return status_err(st, err, "rollback");
    }
    *tr = 0;
    return FBW_OK;
}

/* The shared autocommit transaction, restarted when it has run long enough. */
static int shared_tr(fbw_be_conn *c, fbw_err *err)
{
    const fbw_be_conf *f = c->conf;
    if (c->shared_tr != 0) {
        int due = (f->restart_statements && c->shared_count >= f->restart_statements) ||
                  (f->restart_ms && now_ms() - c->shared_started_ms >= f->restart_ms);
        if (!due)
            return FBW_OK;
        int rc = end_tr(&c->shared_tr, 1, err);
        if (rc != FBW_OK)
            return rc;
    }
    c->shared_count = 0;
    c->shared_started_ms = now_ms();
    return start_tr(c, &c->shared_tr, c->tpb_ac, c->tpb_ac_len, err);
}

/* The transaction a statement runs in (explicit, shared or a new one of its own). */
static int acquire_tr(fbw_be_conn *c, isc_handle **tr, isc_handle *own, int *how, fbw_err *err)
{
    if (c->exp_tr != 0) {
        *how = TR_EXPLICIT;
        *tr = &c->exp_tr;
        return FBW_OK;
    }
    if (c->conf->autocommit == FBW_AC_SHARED) {
        *how = TR_SHARED;
        *tr = &c->shared_tr;
        return shared_tr(c, err);
    }
    *how = TR_OWN;
    *tr = own;
    return start_tr(c, own, c->tpb, c->tpb_len, err);
}

/* Finish a statement's transaction: commit (rc == OK) or roll back its own transaction. */
static int release_tr(fbw_be_conn *c, isc_handle *own, int how, int rc, fbw_err *err)
{
    if (how == TR_SHARED)
        c->shared_count++;
    if (how != TR_OWN)
        return rc;
    if (rc == FBW_OK)
        return end_tr(own, 1, err);
    fbw_err keep = *err;
    (void)end_tr(own, 0, err);
    *err = keep;
    return rc;
}

/* ---------------------------------------------------------------- connect */

static size_t dpb_put(char *dpb, size_t n, size_t cap, int tag, const char *v, size_t len)
{
    if (len > 255 || n + 2 + len > cap)
        return 0;
    dpb[n++] = (char)tag;
    dpb[n++] = (char)len;
    memcpy(dpb + n, v, len);
    return n + len;
}

static int build_dpb(const fbw_be_conf *f, int create, char *dpb, size_t cap, size_t *len,
                     fbw_err *err)
{
    static const char dialect[4] = {SQL_DIALECT_V6, 0, 0, 0};
    const char page[4] = {(char)(f->page_size & 0xff), (char)((f->page_size >> 8) & 0xff),
                          (char)((f->page_size >> 16) & 0xff), 0};
    char config[300];
    const char *crypt = f->wire_crypt && f->wire_crypt[0] ? f->wire_crypt : "enabled";
    int cn = snprintf(config, sizeof config, "WireCrypt = %s\nWireCompression = %s%s%s", crypt,
                      f->compress ? "true" : "false", f->auth && f->auth[0] ? "\nAuthClient = " : "",
                      f->auth && f->auth[0] ? f->auth : "");
    size_t n = 0;
    dpb[n++] = DPB_VERSION1;
    n = dpb_put(dpb, n, cap, DPB_USER_NAME, f->user, strlen(f->user));
    if (n)
        n = dpb_put(dpb, n, cap, DPB_PASSWORD, f->password, strlen(f->password));
    if (n)
        n = dpb_put(dpb, n, cap, DPB_SQL_DIALECT, dialect, sizeof dialect);
    if (n && cn > 0)
        n = dpb_put(dpb, n, cap, DPB_CONFIG, config, (size_t)cn);
    if (n && create && f->page_size > 0)
        n = dpb_put(dpb, n, cap, DPB_PAGE_SIZE, page, sizeof page);
    /* The only wait fbclient lets a caller bound: TCP connect and the login (seconds). */
    const char ct[4] = {(char)(f->connect_timeout & 0xff), (char)((f->connect_timeout >> 8) & 0xff),
                        (char)((f->connect_timeout >> 16) & 0xff), 0};
    if (n && f->connect_timeout > 0)
        n = dpb_put(dpb, n, cap, DPB_CONNECT_TIMEOUT, ct, sizeof ct);
    if (n == 0)
        return fbw_err_set(err, FBW_E_USAGE,
                           "fbclient: user, password or auth list longer than 255 bytes");
    *len = n;
    return FBW_OK;
}

/* Attach, or with create set create the database (isc_create_database never overwrites). */
static int open_db(const fbw_be_conf *conf, int create, fbw_be_conn **out, fbw_err *err)
{
    *out = NULL;
    int rc = fbc_global_init(err);
    if (rc != FBW_OK)
        return rc;
    fbw_be_conn *c = calloc(1, sizeof *c);
    if (c == NULL)
        return fbw_err_set(err, FBW_E_NOMEM, "fbclient: out of memory");
    c->conf = conf;
    build_tpbs(c);
    char dpb[1024];
    size_t dpb_len = 0;
    rc = build_dpb(conf, create, dpb, sizeof dpb, &dpb_len, err);
    if (rc == FBW_OK) {
        isc_status st[STATUS_LEN];
        size_t dbl = strlen(conf->db);
        if (dbl > 32767)
            rc = fbw_err_set(err, FBW_E_USAGE, "fbclient: connection string too long");
        else if (create && API->create(st, (short)dbl, conf->db, &c->db, (short)dpb_len, dpb, 0) &&
                 has_error(st))
            rc = status_err(st, err, "create database");
        else if (!create && API->attach(st, (short)dbl, conf->db, &c->db, (short)dpb_len, dpb) &&
                 has_error(st))
            rc = status_err(st, err, "attach");
    }
    OPENSSL_cleanse(dpb, sizeof dpb);
    if (rc != FBW_OK) {
        free(c);
        return rc;
    }
    *out = c;
    return FBW_OK;
}

static int fbc_connect(const fbw_be_conf *conf, fbw_be_conn **out, fbw_err *err)
{
    return open_db(conf, 0, out, err);
}

static int fbc_create(const fbw_be_conf *conf, fbw_be_conn **out, fbw_err *err)
{
    return open_db(conf, 1, out, err);
}

static void fbc_disconnect(fbw_be_conn *c)
{
    if (c == NULL)
        return;
    fbw_err e;
    (void)end_tr(&c->exp_tr, 0, &e);
    (void)end_tr(&c->shared_tr, 1, &e);
    (void)end_tr(&c->meta_tr, 1, &e);
    isc_status st[STATUS_LEN];
    if (c->db != 0)
        (void)API->detach(st, &c->db);
    free(c);
}

static int fbc_begin(fbw_be_conn *c, fbw_err *err)
{
    int rc = end_tr(&c->exp_tr, 1, err);
    if (rc == FBW_OK)
        rc = start_tr(c, &c->exp_tr, c->tpb, c->tpb_len, err);
    return rc;
}

static int fbc_commit(fbw_be_conn *c, fbw_err *err)
{
    return end_tr(&c->exp_tr, 1, err);
}

static int fbc_rollback(fbw_be_conn *c, fbw_err *err)
{
    return end_tr(&c->exp_tr, 0, err);
}

/* ---------------------------------------------------------------- statements */

static xsqlda *sqlda_new(int n)
{
    if (n < 1)
        n = 1;
    xsqlda *d = calloc(1, sizeof(xsqlda) + (size_t)(n - 1) * sizeof(xsqlvar));
    if (d != NULL) {
        d->version = SQLDA_VERSION1;
        d->sqln = (short)n;
    }
    return d;
}

/* Read a little-endian integer of len bytes from an info buffer. */
static uint64_t le_uint(const unsigned char *p, size_t len)
{
    uint64_t v = 0;
    for (size_t i = len; i > 0; i--)
        v = (v << 8) | p[i - 1];
    return v;
}

/* Ask for one info item and return its value bytes (bounded to the reply). */
static int info_item(fbw_be_stmt *s, char item, unsigned char *buf, size_t cap,
                     const unsigned char **val, size_t *len, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    if (API->sql_info(st, &s->h, 1, &item, (short)cap, (char *)buf) && has_error(st))
        return status_err(st, err, "statement info");
    if (cap < 3 || buf[0] != (unsigned char)item)
        return fbw_err_set(err, FBW_E_PROTO, "fbclient: statement info item %d missing", item);
    size_t l = (size_t)le_uint(buf + 1, 2);
    if (l > cap - 3)
        return fbw_err_set(err, FBW_E_PROTO, "fbclient: statement info item %d truncated", item);
    *val = buf + 3;
    *len = l;
    return FBW_OK;
}

static int stmt_type(fbw_be_stmt *s, fbw_err *err)
{
    unsigned char buf[32];
    const unsigned char *v;
    size_t len;
    int rc = info_item(s, INFO_SQL_STMT_TYPE, buf, sizeof buf, &v, &len, err);
    if (rc == FBW_OK)
        s->type = len <= 4 ? (int)le_uint(v, len) : 0;
    return rc;
}

/* Rows inserted + updated + deleted by the last execution. */
static int affected_rows(fbw_be_stmt *s, uint64_t *out, fbw_err *err)
{
    unsigned char buf[64];
    const unsigned char *v;
    size_t len;
    *out = 0;
    int rc = info_item(s, INFO_SQL_RECORDS, buf, sizeof buf, &v, &len, err);
    for (size_t i = 0; rc == FBW_OK && i < len && v[i] != INFO_END;) {
        if (i + 3 > len)
            return fbw_err_set(err, FBW_E_PROTO, "fbclient: record counts truncated");
        unsigned char code = v[i];
        size_t l = (size_t)le_uint(v + i + 1, 2);
        if (l > 8 || i + 3 + l > len)
            return fbw_err_set(err, FBW_E_PROTO, "fbclient: bad record count length");
        if (code == INFO_REQ_INSERT || code == INFO_REQ_UPDATE || code == INFO_REQ_DELETE)
            *out += le_uint(v + i + 3, l);
        i += 3 + l;
    }
    return rc;
}

/* Bytes of one column in the row buffer, rounded up to keep every column 8-byte aligned. */
static size_t column_size(const xsqlvar *v)
{
    size_t sz = (size_t)(unsigned short)v->sqllen + ((v->sqltype & ~1) == SQL_VARYING ? 2u : 0u);
    return (sz + 7) & ~(size_t)7;
}

/* Choose how each output column arrives and lay out one buffer for all of them. Types that
 * need formatting rules of the server (dates, floats, booleans) are requested as text. */
static int setup_output(fbw_be_stmt *s, fbw_err *err)
{
    size_t total = 0;
    int n = s->out->sqld;
    for (int i = 0; i < n; i++) {
        xsqlvar *v = &s->out->sqlvar[i];
        int t = v->sqltype & ~1;
        if (t != SQL_TEXT && t != SQL_VARYING && t != SQL_SHORT && t != SQL_LONG &&
            t != SQL_INT64 && t != SQL_BLOB && t != SQL_ARRAY && t != SQL_QUAD && t != SQL_NULL) {
            v->sqltype = SQL_VARYING | 1;
            v->sqlsubtype = 0;
            v->sqlscale = 0;
            v->sqllen = 64;
        }
        v->sqltype |= 1; /* always give an indicator */
        total += column_size(v);
    }
    s->outbuf = malloc(total ? total : 1);
    s->out_ind = calloc((size_t)(n ? n : 1), sizeof(short));
    if (s->outbuf == NULL || s->out_ind == NULL)
        return fbw_err_set(err, FBW_E_NOMEM, "fbclient: out of memory for a row buffer");
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        xsqlvar *v = &s->out->sqlvar[i];
        v->sqldata = s->outbuf + off;
        v->sqlind = &s->out_ind[i];
        off += column_size(v);
    }
    return FBW_OK;
}

static int describe(fbw_be_stmt *s, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    if (s->out->sqld > s->out->sqln) {
        int n = s->out->sqld;
        free(s->out);
        s->out = sqlda_new(n);
        if (s->out == NULL)
            return fbw_err_set(err, FBW_E_NOMEM, "fbclient: out of memory for a descriptor");
        if (API->describe(st, &s->h, SQLDA_VERSION1, s->out) && has_error(st))
            return status_err(st, err, "describe");
    }
    for (int pass = 0; pass < 2; pass++) {
        if (API->describe_bind(st, &s->h, SQLDA_VERSION1, s->in) && has_error(st))
            return status_err(st, err, "describe parameters");
        if (s->in->sqld <= s->in->sqln)
            break;
        int n = s->in->sqld;
        free(s->in);
        s->in = sqlda_new(n);
        if (s->in == NULL)
            return fbw_err_set(err, FBW_E_NOMEM, "fbclient: out of memory for a descriptor");
    }
    int np = s->in->sqld;
    s->in_ind = calloc((size_t)(np ? np : 1), sizeof(short));
    s->in_num = calloc((size_t)(np ? np : 1), sizeof(int64_t));
    if (s->in_ind == NULL || s->in_num == NULL)
        return fbw_err_set(err, FBW_E_NOMEM, "fbclient: out of memory for parameters");
    int rc = stmt_type(s, err);
    return rc == FBW_OK ? setup_output(s, err) : rc;
}

static void stmt_free(fbw_be_stmt *s)
{
    if (s == NULL)
        return;
    if (s->h != 0) {
        isc_status st[STATUS_LEN];
        (void)API->free_stmt(st, &s->h, DSQL_DROP);
    }
    free(s->in);
    free(s->out);
    free(s->outbuf);
    free(s->out_ind);
    free(s->in_ind);
    free(s->in_num);
    free(s);
}

/* Prepare in transaction tr (any open transaction works for Firebird's metadata lookups). */
static int prepare_in(fbw_be_conn *c, isc_handle *tr, const char *sql, size_t len,
                      fbw_be_stmt **out, fbw_err *err)
{
    *out = NULL;
    if (len > 65535)
        return fbw_err_set(err, FBW_E_UNSUPPORTED,
                           "fbclient: statement of %zu bytes exceeds 64 KiB", len);
    fbw_be_stmt *s = calloc(1, sizeof *s);
    if (s == NULL)
        return fbw_err_set(err, FBW_E_NOMEM, "fbclient: out of memory");
    s->c = c;
    s->in = sqlda_new(16);
    s->out = sqlda_new(16);
    int rc = FBW_OK;
    isc_status st[STATUS_LEN];
    if (s->in == NULL || s->out == NULL)
        rc = fbw_err_set(err, FBW_E_NOMEM, "fbclient: out of memory for a descriptor");
    else if (API->alloc(st, &c->db, &s->h) && has_error(st))
        rc = status_err(st, err, "allocate statement");
    else if (API->prepare(st, tr, &s->h, (unsigned short)len, sql, SQL_DIALECT_V6, s->out) &&
             has_error(st))
        rc = status_err(st, err, "prepare");
    else
        rc = describe(s, err);
    if (rc != FBW_OK) {
        stmt_free(s);
        return rc;
    }
    *out = s;
    return FBW_OK;
}

static int fbc_prepare(fbw_be_conn *c, const char *sql, size_t len, fbw_be_stmt **out,
                       fbw_err *err)
{
    isc_handle *tr = &c->meta_tr;
    int rc = FBW_OK;
    if (c->exp_tr != 0) {
        tr = &c->exp_tr;
    } else if (c->meta_tr == 0) {
        static const char ro[] = {TPB_VERSION3, TPB_READ, TPB_READ_COMMITTED, TPB_REC_VERSION,
                                  TPB_WAIT};
        rc = start_tr(c, &c->meta_tr, ro, (int)sizeof ro, err);
    }
    return rc == FBW_OK ? prepare_in(c, tr, sql, len, out, err) : rc;
}

static unsigned fbc_param_count(const fbw_be_stmt *s)
{
    return (unsigned)s->in->sqld;
}

/* Point the parameter descriptors at the values; the server converts to the column types. */
static int bind_params(fbw_be_stmt *s, const fbw_val *p, size_t n, fbw_err *err)
{
    if (n != (size_t)s->in->sqld)
        return fbw_err_set(err, FBW_E_USAGE, "fbclient: statement takes %d parameters, got %zu",
                           s->in->sqld, n);
    for (size_t i = 0; i < n; i++) {
        xsqlvar *v = &s->in->sqlvar[i];
        v->sqlind = &s->in_ind[i];
        s->in_ind[i] = 0;
        v->sqlscale = 0;
        v->sqlsubtype = 0;
        switch (p[i].type) {
        case FBW_VAL_INT64:
            s->in_num[i] = p[i].i;
            v->sqltype = SQL_INT64 | 1;
            v->sqllen = 8;
            v->sqldata = (char *)&s->in_num[i];
            break;
        case FBW_VAL_DOUBLE:
            memcpy(&s->in_num[i], &p[i].d, sizeof(double));
            v->sqltype = SQL_DOUBLE | 1;
            v->sqllen = 8;
            v->sqldata = (char *)&s->in_num[i];
            break;
        case FBW_VAL_TEXT:
        case FBW_VAL_NUMTEXT:
            if (p[i].len > 32767)
                return fbw_err_set(err, FBW_E_UNSUPPORTED,
                                   "fbclient: parameter %zu is %zu bytes (max 32767)", i + 1,
                                   p[i].len);
            v->sqltype = SQL_TEXT | 1;
            v->sqllen = (short)p[i].len;
            v->sqldata = (char *)(p[i].s ? p[i].s : "");
            break;
        default:
            v->sqltype = SQL_TEXT | 1;
            v->sqllen = 1;
            v->sqldata = &s->null_byte;
            s->in_ind[i] = -1;
            break;
        }
    }
    return FBW_OK;
}

/* Decimal text of an integer with a negative scale (NUMERIC/DECIMAL). */
static size_t format_scaled(int64_t v, int scale, char *buf, size_t cap)
{
    if (scale >= 0)
        return (size_t)snprintf(buf, cap, "%lld", (long long)v);
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char digits[32];
    int nd = snprintf(digits, sizeof digits, "%llu", (unsigned long long)mag);
    int frac = -scale;
    if (frac > 18)
        frac = 18;
    char padded[48];
    if (nd <= frac) {
        memset(padded, '0', (size_t)(frac - nd + 1));
        memcpy(padded + frac - nd + 1, digits, (size_t)nd + 1);
        nd = frac + 1;
    } else {
        memcpy(padded, digits, (size_t)nd + 1);
    }
    return (size_t)snprintf(buf, cap, "%s%.*s.%s", v < 0 ? "-" : "", nd - frac, padded,
                            padded + nd - frac);
}

static int add_column(const xsqlvar *v, fbw_be_result *res, fbw_err *err)
{
    char num[48];
    const char *d = v->sqldata;
    if (*v->sqlind < 0)
        return fbw_be_result_add(res, NULL, 0, err);
    switch (v->sqltype & ~1) {
    case SQL_TEXT:
        return fbw_be_result_add(res, d, (size_t)(unsigned short)v->sqllen, err);
    case SQL_VARYING: {
        unsigned short l;
        memcpy(&l, d, 2);
        if (l > (unsigned short)v->sqllen)
            l = (unsigned short)v->sqllen;
        return fbw_be_result_add(res, d + 2, l, err);
    }
    case SQL_SHORT: {
        int16_t x;
        memcpy(&x, d, 2);
        return fbw_be_result_add(res, num, format_scaled(x, v->sqlscale, num, sizeof num), err);
    }
    case SQL_LONG: {
        int32_t x;
        memcpy(&x, d, 4);
        return fbw_be_result_add(res, num, format_scaled(x, v->sqlscale, num, sizeof num), err);
    }
    case SQL_INT64: {
        int64_t x;
        memcpy(&x, d, 8);
        return fbw_be_result_add(res, num, format_scaled(x, v->sqlscale, num, sizeof num), err);
    }
    case SQL_NULL:
        return fbw_be_result_add(res, NULL, 0, err);
    default: /* BLOB, ARRAY: content is not fetched, only a marker */
        return fbw_be_result_add(res, "[blob]", 6, err);
    }
}

static int add_row(fbw_be_stmt *s, fbw_be_result *res, fbw_err *err)
{
    for (int i = 0; i < s->out->sqld; i++) {
        int rc = add_column(&s->out->sqlvar[i], res, err);
        if (rc != FBW_OK)
            return rc;
    }
    return FBW_OK;
}

static int fetch_all(fbw_be_stmt *s, fbw_be_result *res, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    int rc = FBW_OK;
    for (;;) {
        isc_status r = API->fetch(st, &s->h, SQLDA_VERSION1, s->out);
        if (r == 100)
            break;
        if (r != 0 && has_error(st)) {
            rc = status_err(st, err, "fetch");
            break;
        }
        rc = add_row(s, res, err);
        if (rc != FBW_OK)
            break;
    }
    if (!fbw_be_conn_lost(rc, err))
        (void)API->free_stmt(st, &s->h, DSQL_CLOSE);
    return rc;
}

/* Execute in transaction tr; fills res (rows or affected count). */
static int run_in(fbw_be_stmt *s, isc_handle *tr, fbw_be_result *res, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    fbw_be_result_reset(res);
    int sel = s->type == STMT_SELECT || s->type == STMT_SELECT_FOR_UPD;
    if (sel) {
        if (API->execute(st, tr, &s->h, SQLDA_VERSION1, s->in) && has_error(st))
            return status_err(st, err, "execute");
        fbw_be_result_set_cols(res, (uint32_t)s->out->sqld);
        return fetch_all(s, res, err);
    }
    if (s->out->sqld > 0) { /* EXECUTE PROCEDURE, INSERT ... RETURNING: one row */
        if (API->execute2(st, tr, &s->h, SQLDA_VERSION1, s->in, s->out) && has_error(st))
            return status_err(st, err, "execute");
        fbw_be_result_set_cols(res, (uint32_t)s->out->sqld);
        int rc = add_row(s, res, err);
        if (rc != FBW_OK)
            return rc;
    } else if (API->execute(st, tr, &s->h, SQLDA_VERSION1, s->in) && has_error(st)) {
        return status_err(st, err, "execute");
    }
    if (s->type == STMT_INSERT || s->type == STMT_UPDATE || s->type == STMT_DELETE)
        return affected_rows(s, &res->affected, err);
    return FBW_OK;
}

static int fbc_execute(fbw_be_stmt *s, const fbw_val *params, size_t n, fbw_be_result *res,
                       fbw_err *err)
{
    isc_handle own = 0, *tr;
    int how;
    int rc = bind_params(s, params, n, err);
    if (rc == FBW_OK)
        rc = acquire_tr(s->c, &tr, &own, &how, err);
    if (rc != FBW_OK)
        return rc;
    rc = run_in(s, tr, res, err);
    return release_tr(s->c, &own, how, rc, err);
}

static void fbc_close(fbw_be_stmt *s)
{
    stmt_free(s);
}

static int fbc_exec(fbw_be_conn *c, const char *sql, size_t len, fbw_be_result *res,
                    fbw_err *err)
{
    isc_handle own = 0, *tr;
    int how;
    fbw_be_stmt *s = NULL;
    int rc = acquire_tr(c, &tr, &own, &how, err);
    if (rc != FBW_OK)
        return rc;
    rc = prepare_in(c, tr, sql, len, &s, err);
    if (rc == FBW_OK)
        rc = bind_params(s, NULL, 0, err);
    if (rc == FBW_OK)
        rc = run_in(s, tr, res, err);
    stmt_free(s);
    return release_tr(c, &own, how, rc, err);
}

static int savepoint(fbw_be_conn *c, const char *sql, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    if (API->immediate(st, &c->db, &c->exp_tr, 0, sql, SQL_DIALECT_V6, NULL) && has_error(st))
        return status_err(st, err, "savepoint");
    return FBW_OK;
}

static int insert_rows(fbw_be_stmt *s, isc_handle *tr, const fbw_bulk_insert *b,
                       fbw_be_result *res, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    for (size_t r = 0; r < b->nrows; r++) {
        int rc = bind_params(s, b->values + r * b->ncols, b->ncols, err);
        if (rc != FBW_OK)
            return rc;
        if (API->execute(st, tr, &s->h, SQLDA_VERSION1, s->in) && has_error(st))
            return status_err(st, err, "bulk insert");
    }
    fbw_be_result_reset(res);
    res->affected = b->nrows;
    return FBW_OK;
}

static int fbc_bulk_insert(fbw_be_conn *c, const fbw_bulk_insert *b, fbw_be_result *res,
                           fbw_err *err)
{
    isc_handle own = 0, *tr = &c->exp_tr;
    int explicit_tr = c->exp_tr != 0;
    fbw_be_stmt *s = NULL;
    int rc = explicit_tr ? savepoint(c, "SAVEPOINT FBW_BULK", err)
                         : start_tr(c, &own, c->tpb, c->tpb_len, err);
    if (rc != FBW_OK)
        return rc;
    if (!explicit_tr)
        tr = &own;
    rc = prepare_in(c, tr, b->single, b->single_len, &s, err);
    if (rc == FBW_OK)
        rc = insert_rows(s, tr, b, res, err);
    stmt_free(s);
    if (explicit_tr) {
        if (rc == FBW_OK)
            return savepoint(c, "RELEASE SAVEPOINT FBW_BULK ONLY", err);
        if (!fbw_be_conn_lost(rc, err)) {
            fbw_err keep = *err;
            (void)savepoint(c, "ROLLBACK TO SAVEPOINT FBW_BULK", err);
            *err = keep;
        }
        return rc;
    }
    return release_tr(c, &own, TR_OWN, rc, err);
}

static int fbc_stats(fbw_be_conn *c, fbw_stats *out, fbw_err *err)
{
    (void)c;
    (void)out;
    return fbw_err_set(err, FBW_E_UNSUPPORTED, "fbclient: wire statistics are not visible");
}

const fbw_backend fbw_backend_fbclient = {
    .name = "fbclient",
    .global_init = fbc_global_init,
    .connect = fbc_connect,
    .create = fbc_create,
    .disconnect = fbc_disconnect,
    .begin = fbc_begin,
    .commit = fbc_commit,
    .rollback = fbc_rollback,
    .prepare = fbc_prepare,
    .param_count = fbc_param_count,
    .execute = fbc_execute,
    .close = fbc_close,
    .exec = fbc_exec,
    .bulk_insert = fbc_bulk_insert,
    .stats = fbc_stats,
};
