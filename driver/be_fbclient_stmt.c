/* SPDX-License-Identifier: MIT */
/* be_fbclient_stmt.c - the baseline backend's statements: prepare (in the explicit transaction,
 * else a read-only one kept for metadata lookups), describe, binding (the server converts the
 * values to the column types), execute and results as text (types that need the server's
 * formatting rules are requested as text). */
#include "be_fbclient.h"

#include "buf.h"
#include "msgs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
static int info_item(sbdrv_be_stmt *s, char item, unsigned char *buf, size_t cap,
                     const unsigned char **val, size_t *len, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    if (API->sql_info(st, &s->h, 1, &item, (short)cap, (char *)buf) && has_error(st))
        return be_fbclient_status_err(st, err, "statement info");
    if (cap < 3 || buf[0] != (unsigned char)item)
        return fbw_err_set(err, FBW_E_PROTO, "fbclient: statement info item %d missing", item);
    size_t l = (size_t)le_uint(buf + 1, 2);
    if (l > cap - 3)
        return fbw_err_set(err, FBW_E_PROTO, "fbclient: statement info item %d truncated", item);
    *val = buf + 3;
    *len = l;
    return FBW_OK;
}

static int stmt_type(sbdrv_be_stmt *s, fbw_err *err)
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
static int affected_rows(sbdrv_be_stmt *s, uint64_t *out, fbw_err *err)
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
static int setup_output(sbdrv_be_stmt *s, fbw_err *err)
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

static int describe(sbdrv_be_stmt *s, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    if (s->out->sqld > s->out->sqln) {
        int n = s->out->sqld;
        free(s->out);
        s->out = sqlda_new(n);
        if (s->out == NULL)
            return fbw_err_set(err, FBW_E_NOMEM, "fbclient: out of memory for a descriptor");
        if (API->describe(st, &s->h, SQLDA_VERSION1, s->out) && has_error(st))
            return be_fbclient_status_err(st, err, "describe");
    }
    for (int pass = 0; pass < 2; pass++) {
        if (API->describe_bind(st, &s->h, SQLDA_VERSION1, s->in) && has_error(st))
            return be_fbclient_status_err(st, err, "describe parameters");
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

void be_fbclient_stmt_free(sbdrv_be_stmt *s)
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
int be_fbclient_prepare_in(sbdrv_be_conn *c, isc_handle *tr, const char *sql, size_t len,
                       sbdrv_be_stmt **out, fbw_err *err)
{
    *out = NULL;
    if (len > 65535)
        return fbw_err_set(err, FBW_E_UNSUPPORTED,
                           "fbclient: statement of %zu bytes exceeds 64 KiB", len);
    sbdrv_be_stmt *s = calloc(1, sizeof *s);
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
        rc = be_fbclient_status_err(st, err, "allocate statement");
    else if (API->prepare(st, tr, &s->h, (unsigned short)len, sql, SQL_DIALECT_V6, s->out) &&
             has_error(st))
        rc = be_fbclient_status_err(st, err, "prepare");
    else
        rc = describe(s, err);
    if (rc != FBW_OK) {
        be_fbclient_stmt_free(s);
        return rc;
    }
    *out = s;
    return FBW_OK;
}

int be_fbclient_prepare(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_stmt **out,
                    fbw_err *err)
{
    isc_handle *tr = &c->meta_tr;
    int rc = FBW_OK;
    if (c->exp_tr != 0) {
        tr = &c->exp_tr;
    } else if (c->meta_tr == 0) {
        static const char ro[] = {TPB_VERSION3, TPB_READ, TPB_READ_COMMITTED, TPB_REC_VERSION,
                                  TPB_WAIT};
        rc = be_fbclient_start_tr(c, &c->meta_tr, ro, (int)sizeof ro, err);
    }
    return rc == FBW_OK ? be_fbclient_prepare_in(c, tr, sql, len, out, err) : rc;
}

unsigned be_fbclient_param_count(const sbdrv_be_stmt *s)
{
    return (unsigned)s->in->sqld;
}

/* Point the parameter descriptors at the values; the server converts to the column types. */
int be_fbclient_bind_params(sbdrv_be_stmt *s, const sbdrv_val *p, size_t n, fbw_err *err)
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
        case SBDRV_VAL_INT64:
            s->in_num[i] = p[i].i;
            v->sqltype = SQL_INT64 | 1;
            v->sqllen = 8;
            v->sqldata = (char *)&s->in_num[i];
            break;
        case SBDRV_VAL_DOUBLE:
            memcpy(&s->in_num[i], &p[i].d, sizeof(double));
            v->sqltype = SQL_DOUBLE | 1;
            v->sqllen = 8;
            v->sqldata = (char *)&s->in_num[i];
            break;
        case SBDRV_VAL_TEXT:
        case SBDRV_VAL_NUMTEXT:
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

/* A blob's contents as the cell, read the ISC way (open, get_segment until the end, close): what a
 * program on fbclient does to show a blob column, so the baseline reads what fbwire reads. */
static int add_blob(sbdrv_be_stmt *s, isc_handle *tr, const xsqlvar *v, sbdrv_be_result *res,
                    fbw_err *err)
{
    isc_status st[STATUS_LEN];
    isc_handle b = 0;
    if (API->open_blob2(st, &s->c->db, tr, &b, v->sqldata, 0, NULL) && has_error(st))
        return be_fbclient_status_err(st, err, "open blob");
    fbw_buf text;
    fbw_buf_init(&text);
    int rc = FBW_OK;
    for (;;) {
        if (fbw_buf_reserve(&text, 32768)) {
            rc = fbw_err_set(err, FBW_E_NOMEM, "fbclient: out of memory for a blob");
            break;
        }
        unsigned short got = 0;
        isc_status r = API->get_segment(st, &b, &got, 32768, (char *)fbw_buf_tail(&text));
        if (r == (isc_status)FBW_ISC_SEGSTR_EOF)
            break;
        if (r != 0 && r != (isc_status)FBW_ISC_SEGMENT) {
            rc = be_fbclient_status_err(st, err, "read blob");
            break;
        }
        fbw_buf_added(&text, got);
        if (text.len > SBDRV_BE_RESULT_MAX) {
            rc = fbw_err_set(err, FBW_E_UNSUPPORTED, "fbclient: blob larger than a result may be");
            break;
        }
    }
    if (API->close_blob(st, &b) && has_error(st) && rc == FBW_OK)
        rc = be_fbclient_status_err(st, err, "close blob");
    if (rc == FBW_OK)
        rc = sbdrv_be_result_add(res, text.data ? (const char *)text.data : "", text.len, err);
    fbw_buf_free(&text);
    return rc;
}

static int add_column(const xsqlvar *v, sbdrv_be_result *res, fbw_err *err)
{
    char num[48];
    const char *d = v->sqldata;
    if (*v->sqlind < 0)
        return sbdrv_be_result_add(res, NULL, 0, err);
    switch (v->sqltype & ~1) {
    case SQL_TEXT:
        return sbdrv_be_result_add(res, d, (size_t)(unsigned short)v->sqllen, err);
    case SQL_VARYING: {
        unsigned short l;
        memcpy(&l, d, 2);
        if (l > (unsigned short)v->sqllen)
            l = (unsigned short)v->sqllen;
        return sbdrv_be_result_add(res, d + 2, l, err);
    }
    case SQL_SHORT: {
        int16_t x;
        memcpy(&x, d, 2);
        return sbdrv_be_result_add(res, num, format_scaled(x, v->sqlscale, num, sizeof num), err);
    }
    case SQL_LONG: {
        int32_t x;
        memcpy(&x, d, 4);
        return sbdrv_be_result_add(res, num, format_scaled(x, v->sqlscale, num, sizeof num), err);
    }
    case SQL_INT64: {
        int64_t x;
        memcpy(&x, d, 8);
        return sbdrv_be_result_add(res, num, format_scaled(x, v->sqlscale, num, sizeof num), err);
    }
    case SQL_NULL:
        return sbdrv_be_result_add(res, NULL, 0, err);
    default: /* ARRAY: content is not fetched, only a marker (a BLOB is read: add_blob) */
        return sbdrv_be_result_add(res, "[blob]", 6, err);
    }
}

static int add_row(sbdrv_be_stmt *s, isc_handle *tr, sbdrv_be_result *res, fbw_err *err)
{
    for (int i = 0; i < s->out->sqld; i++) {
        const xsqlvar *v = &s->out->sqlvar[i];
        int rc = (v->sqltype & ~1) == SQL_BLOB && *v->sqlind >= 0 ? add_blob(s, tr, v, res, err)
                                                                  : add_column(v, res, err);
        if (rc != FBW_OK)
            return rc;
    }
    return FBW_OK;
}

static int fetch_all(sbdrv_be_stmt *s, isc_handle *tr, sbdrv_be_result *res, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    int rc = FBW_OK;
    for (;;) {
        isc_status r = API->fetch(st, &s->h, SQLDA_VERSION1, s->out);
        if (r == 100)
            break;
        if (r != 0 && has_error(st)) {
            rc = be_fbclient_status_err(st, err, "fetch");
            break;
        }
        rc = add_row(s, tr, res, err);
        if (rc != FBW_OK)
            break;
    }
    if (!sbdrv_be_conn_lost(rc, err))
        (void)API->free_stmt(st, &s->h, DSQL_CLOSE);
    return rc;
}

/* Execute in transaction tr; fills res (rows or affected count). */
static int run_in(sbdrv_be_stmt *s, isc_handle *tr, sbdrv_be_result *res, fbw_err *err)
{
    isc_status st[STATUS_LEN];
    sbdrv_be_result_reset(res);
    int sel = s->type == STMT_SELECT || s->type == STMT_SELECT_FOR_UPD;
    if (sel) {
        if (API->execute(st, tr, &s->h, SQLDA_VERSION1, s->in) && has_error(st))
            return be_fbclient_status_err(st, err, "execute");
        sbdrv_be_result_set_cols(res, (uint32_t)s->out->sqld);
        return fetch_all(s, tr, res, err);
    }
    if (s->out->sqld > 0) { /* EXECUTE PROCEDURE, INSERT ... RETURNING: one row */
        if (API->execute2(st, tr, &s->h, SQLDA_VERSION1, s->in, s->out) && has_error(st))
            return be_fbclient_status_err(st, err, "execute");
        sbdrv_be_result_set_cols(res, (uint32_t)s->out->sqld);
        int rc = add_row(s, tr, res, err);
        if (rc != FBW_OK)
            return rc;
    } else if (API->execute(st, tr, &s->h, SQLDA_VERSION1, s->in) && has_error(st)) {
        return be_fbclient_status_err(st, err, "execute");
    }
    if (s->type == STMT_INSERT || s->type == STMT_UPDATE || s->type == STMT_DELETE)
        return affected_rows(s, &res->affected, err);
    return FBW_OK;
}

int be_fbclient_execute(sbdrv_be_stmt *s, const sbdrv_val *params, size_t n, sbdrv_be_result *res,
                    fbw_err *err)
{
    isc_handle own = 0, *tr;
    int how;
    int rc = be_fbclient_bind_params(s, params, n, err);
    if (rc == FBW_OK)
        rc = be_fbclient_acquire_tr(s->c, &tr, &own, &how, err);
    if (rc != FBW_OK)
        return rc;
    rc = run_in(s, tr, res, err);
    return be_fbclient_release_tr(s->c, &own, how, rc, err);
}

void be_fbclient_close(sbdrv_be_stmt *s)
{
    be_fbclient_stmt_free(s);
}

int be_fbclient_exec(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_result *res,
                 fbw_err *err)
{
    isc_handle own = 0, *tr;
    int how;
    sbdrv_be_stmt *s = NULL;
    int rc = be_fbclient_acquire_tr(c, &tr, &own, &how, err);
    if (rc != FBW_OK)
        return rc;
    rc = be_fbclient_prepare_in(c, tr, sql, len, &s, err);
    if (rc == FBW_OK)
        rc = be_fbclient_bind_params(s, NULL, 0, err);
    if (rc == FBW_OK)
        rc = run_in(s, tr, res, err);
    be_fbclient_stmt_free(s);
    return be_fbclient_release_tr(c, &own, how, rc, err);
}
