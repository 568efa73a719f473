/* SPDX-License-Identifier: MIT */
/* be_fbclient.c - the baseline backend: Firebird's own client library through the ISC API.
 *
 * This file is the connection and the vtable; the other parts are listed in be_fbclient.h.
 * Attach and create pass the settings in a DPB. Wire encryption follows --fbclient-wire-crypt,
 * passed in the DPB config (WireCrypt = enabled by default, as fbclient's own default; disabled
 * keeps captures of this baseline readable by fbwire's decoder). The password is wiped from the
 * DPB once the attach returned. */
#include "be_fbclient.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int build_dpb(const sbdrv_be_conf *f, int create, char *dpb, size_t cap, size_t *len,
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
static int open_db(const sbdrv_be_conf *conf, int create, sbdrv_be_conn **out, fbw_err *err)
{
    *out = NULL;
    int rc = be_fbclient_global_init(conf, err);
    if (rc != FBW_OK)
        return rc;
    sbdrv_be_conn *c = calloc(1, sizeof *c);
    if (c == NULL)
        return fbw_err_set(err, FBW_E_NOMEM, "fbclient: out of memory");
    c->conf = conf;
    be_fbclient_build_tpbs(c);
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
            rc = be_fbclient_status_err(st, err, "create database");
        else if (!create && API->attach(st, (short)dbl, conf->db, &c->db, (short)dpb_len, dpb) &&
                 has_error(st))
            rc = be_fbclient_status_err(st, err, "attach");
    }
    OPENSSL_cleanse(dpb, sizeof dpb);
    if (rc != FBW_OK) {
        free(c);
        return rc;
    }
    *out = c;
    return FBW_OK;
}

static int fbc_connect(const sbdrv_be_conf *conf, sbdrv_be_conn **out, fbw_err *err)
{
    return open_db(conf, 0, out, err);
}

static int fbc_create(const sbdrv_be_conf *conf, sbdrv_be_conn **out, fbw_err *err)
{
    return open_db(conf, 1, out, err);
}

static void fbc_disconnect(sbdrv_be_conn *c)
{
    if (c == NULL)
        return;
    fbw_err e;
    (void)be_fbclient_end_tr(&c->exp_tr, 0, &e);
    (void)be_fbclient_end_tr(&c->shared_tr, 1, &e);
    (void)be_fbclient_end_tr(&c->meta_tr, 1, &e);
    isc_status st[STATUS_LEN];
    if (c->db != 0)
        (void)API->detach(st, &c->db);
    free(c);
}

static int fbc_stats(sbdrv_be_conn *c, fbw_stats *out, fbw_err *err)
{
    (void)c;
    (void)out;
    return fbw_err_set(err, FBW_E_UNSUPPORTED, "fbclient: wire statistics are not visible");
}

const sbdrv_backend sbdrv_backend_fbclient = {
    .name = "fbclient",
    .global_init = be_fbclient_global_init,
    .client_library = be_fbclient_client_library,
    .connect = fbc_connect,
    .create = fbc_create,
    .disconnect = fbc_disconnect,
    .begin = be_fbclient_begin,
    .commit = be_fbclient_commit,
    .rollback = be_fbclient_rollback,
    .prepare = be_fbclient_prepare,
    .param_count = be_fbclient_param_count,
    .execute = be_fbclient_execute,
    .close = be_fbclient_close,
    .exec = be_fbclient_exec,
    .bulk_insert = be_fbclient_bulk_insert,
    .stats = fbc_stats,
};
