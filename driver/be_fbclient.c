/* SPDX-License-Identifier: MIT */
/* be_fbclient.c - the baseline backend: Firebird's own client library through the ISC API.
 *
 * libfbclient.so.2 is dlopen()ed on first use, so it is not a build or link dependency and the
 * plug-in still loads where it is missing. Wire encryption follows --fbclient-wire-crypt, passed
 * in the DPB config (WireCrypt = Enabled by default, as fbclient's own default; Disabled keeps
 * captures of this baseline readable by fbwire's decoder). The only process-wide state is the
 * resolved entry-point table, written once under pthread_once.
 * This file is the library, the connection and the vtable; the other parts are listed in
 * be_fbclient.h. */
#define _GNU_SOURCE
#include "be_fbclient.h"

#include <dlfcn.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- library and errors */

fbclient_lib fbw_bec_lib = {PTHREAD_ONCE_INIT, FBW_E_UNSUPPORTED, "", {0}};

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
        snprintf(fbw_bec_lib.msg, sizeof fbw_bec_lib.msg, "cannot load libfbclient.so.2: %s",
                 dlerror());
        return;
    }
    fbclient_api *a = &fbw_bec_lib.api;
    *(void **)&a->attach = sym(h, "isc_attach_database", &fbw_bec_lib);
    *(void **)&a->detach = sym(h, "isc_detach_database", &fbw_bec_lib);
    *(void **)&a->create = sym(h, "isc_create_database", &fbw_bec_lib);
    *(void **)&a->start_multiple = sym(h, "isc_start_multiple", &fbw_bec_lib);
    *(void **)&a->commit = sym(h, "isc_commit_transaction", &fbw_bec_lib);
    *(void **)&a->rollback = sym(h, "isc_rollback_transaction", &fbw_bec_lib);
    *(void **)&a->alloc = sym(h, "isc_dsql_allocate_statement", &fbw_bec_lib);
    *(void **)&a->prepare = sym(h, "isc_dsql_prepare", &fbw_bec_lib);
    *(void **)&a->describe = sym(h, "isc_dsql_describe", &fbw_bec_lib);
    *(void **)&a->describe_bind = sym(h, "isc_dsql_describe_bind", &fbw_bec_lib);
    *(void **)&a->execute = sym(h, "isc_dsql_execute", &fbw_bec_lib);
    *(void **)&a->execute2 = sym(h, "isc_dsql_execute2", &fbw_bec_lib);
    *(void **)&a->immediate = sym(h, "isc_dsql_execute_immediate", &fbw_bec_lib);
    *(void **)&a->fetch = sym(h, "isc_dsql_fetch", &fbw_bec_lib);
    *(void **)&a->free_stmt = sym(h, "isc_dsql_free_statement", &fbw_bec_lib);
    *(void **)&a->sql_info = sym(h, "isc_dsql_sql_info", &fbw_bec_lib);
    *(void **)&a->interpret = sym(h, "fb_interpret", &fbw_bec_lib);
    *(void **)&a->sqlstate = sym(h, "fb_sqlstate", &fbw_bec_lib);
    fbw_bec_lib.rc = fbw_bec_lib.msg[0] ? FBW_E_UNSUPPORTED : FBW_OK;
}

static int fbc_global_init(fbw_err *err)
{
    pthread_once(&fbw_bec_lib.once, load_lib);
    if (fbw_bec_lib.rc != FBW_OK)
        return fbw_err_set(err, fbw_bec_lib.rc, "fbclient: %s", fbw_bec_lib.msg);
    return FBW_OK;
}

int fbw_bec_status_err(const isc_status *st, fbw_err *err, const char *what)
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
    fbw_bec_build_tpbs(c);
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
            rc = fbw_bec_status_err(st, err, "create database");
        else if (!create && API->attach(st, (short)dbl, conf->db, &c->db, (short)dpb_len, dpb) &&
                 has_error(st))
            rc = fbw_bec_status_err(st, err, "attach");
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
    (void)fbw_bec_end_tr(&c->exp_tr, 0, &e);
    (void)fbw_bec_end_tr(&c->shared_tr, 1, &e);
    (void)fbw_bec_end_tr(&c->meta_tr, 1, &e);
    isc_status st[STATUS_LEN];
    if (c->db != 0)
        (void)API->detach(st, &c->db);
    free(c);
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
    .begin = fbw_bec_begin,
    .commit = fbw_bec_commit,
    .rollback = fbw_bec_rollback,
    .prepare = fbw_bec_prepare,
    .param_count = fbw_bec_param_count,
    .execute = fbw_bec_execute,
    .close = fbw_bec_close,
    .exec = fbw_bec_exec,
    .bulk_insert = fbw_bec_bulk_insert,
    .stats = fbc_stats,
};
