/* SPDX-License-Identifier: MIT */
/* info.c - info reply parsers (src/dsql/dsql.cpp sql_info/var_info; src/common/StatementMetadata.cpp
 * parse). All reads through fbw_rd over complete buffers. */
#include "info.h"

#include <string.h>

#define DESCRIBE_VARS FBW_INFO_SQL_DESCRIBE_VARS, FBW_INFO_SQL_SQLDA_SEQ, FBW_INFO_SQL_TYPE, \
    FBW_INFO_SQL_SUB_TYPE, FBW_INFO_SQL_SCALE, FBW_INFO_SQL_LENGTH, FBW_INFO_SQL_FIELD, \
    FBW_INFO_SQL_RELATION, FBW_INFO_SQL_ALIAS, FBW_INFO_SQL_DESCRIBE_END

const uint8_t fbw_describe_items[] = {FBW_INFO_SQL_STMT_TYPE, FBW_INFO_SQL_STMT_FLAGS,
                                      FBW_INFO_SQL_BIND, DESCRIBE_VARS,
                                      FBW_INFO_SQL_SELECT, DESCRIBE_VARS};
const size_t fbw_describe_items_len = sizeof fbw_describe_items;

size_t fbw_describe_continue_items(int select, uint32_t from, uint8_t *buf)
{
    static const uint8_t vars[] = {DESCRIBE_VARS};
    size_t n = 0;
    buf[n++] = FBW_INFO_SQL_SQLDA_START;
    buf[n++] = 2;
    buf[n++] = (uint8_t)from;
    buf[n++] = (uint8_t)(from >> 8);
    buf[n++] = select ? FBW_INFO_SQL_SELECT : FBW_INFO_SQL_BIND;
    memcpy(buf + n, vars, sizeof vars);
    return n + sizeof vars;
}

static uint8_t get_u8(fbw_rd *r)
{
    fbw_bytes b = fbw_xdr_raw(r, 1);
    return b.p ? b.p[0] : 0;
}

/* item length then value bytes */
static fbw_bytes get_value(fbw_rd *r)
{
    fbw_bytes l = fbw_xdr_raw(r, 2);
    return fbw_xdr_raw(r, l.p ? fbw_le16(l.p) : 0);
}

static int64_t le_int(fbw_bytes v)
{
    uint64_t x = 0;
    for (size_t i = 0; i < v.n && i < 8; i++)
        x |= (uint64_t)v.p[i] << (8 * i);
    if (v.n > 0 && v.n < 8 && (v.p[v.n - 1] & 0x80)) /* sign-extend short forms */
        x |= ~(uint64_t)0 << (8 * v.n);
    return (int64_t)x;
}

static void copy_name(char *dst, fbw_bytes v)
{
    size_t n = v.n > FBW_NAME_MAX ? FBW_NAME_MAX : v.n;
    if (n)
        memcpy(dst, v.p, n);
    dst[n] = 0;
}

static int bad(fbw_err *err, const fbw_rd *r, const char *what)
{
    return fbw_err_set(err, FBW_E_BADVALUE, "describe reply: %s at offset %zu", what, fbw_rd_offset(r));
}

/* One variable's items up to describe_end; `idx` is 0-based once sqlda_seq is seen. */
static int parse_var(fbw_rd *r, fbw_describe_side *s, fbw_err *err, int *ended)
{
    long idx = -1;
    *ended = 0;
    while (r->rc == FBW_OK && fbw_rd_left(r) > 0) {
        uint8_t item = get_u8(r);
        if (item == FBW_INFO_SQL_DESCRIBE_END) {
            if (idx < 0)
                return bad(err, r, "variable without sqlda_seq");
            if ((uint32_t)idx + 1 > s->complete)
                s->complete = (uint32_t)idx + 1;
            *ended = 1;
            return FBW_OK;
        }
        if (item == FBW_INFO_TRUNCATED || item == FBW_INFO_END) {
            r->p--; /* let the caller see it */
            return FBW_OK;
        }
        fbw_bytes v = get_value(r);
        if (r->rc)
            break;
        if (item == FBW_INFO_SQL_SQLDA_SEQ) {
            idx = (long)le_int(v) - 1;
            if (idx < 0 || (uint32_t)idx >= s->count)
                return bad(err, r, "sqlda_seq out of range");
            continue;
        }
        if (idx < 0)
            return bad(err, r, "variable item before sqlda_seq");
        fbw_col *c = &s->fmt->cols[idx];
        int64_t x = le_int(v);
        switch (item) {
        case FBW_INFO_SQL_TYPE:
            c->nullable = (uint8_t)(x & 1);
            c->type = (uint16_t)(x & ~1);
            break;
        case FBW_INFO_SQL_SUB_TYPE: c->subtype = (int16_t)x; break;
        case FBW_INFO_SQL_SCALE: c->scale = (int16_t)x; break;
        case FBW_INFO_SQL_LENGTH: c->length = (uint16_t)x; break;
        case FBW_INFO_SQL_FIELD: if (s->names) copy_name(s->names[idx].field, v); break;
        case FBW_INFO_SQL_RELATION: if (s->names) copy_name(s->names[idx].relation, v); break;
        case FBW_INFO_SQL_ALIAS: if (s->names) copy_name(s->names[idx].alias, v); break;
        default: break; /* owner and items we did not ask for */
        }
    }
    return r->rc == FBW_OK ? FBW_OK : bad(err, r, "truncated variable");
}

/* The sub-type and scale items mean different things per type (docs/protocol/statements.md
 * §2.5). */
static void finish_cols(fbw_describe_side *s)
{
    for (uint32_t i = 0; i < s->complete && i < s->count; i++) {
        fbw_col *c = &s->fmt->cols[i];
        if (c->type == FBW_SQL_TEXT || c->type == FBW_SQL_VARYING) {
            c->charset = (uint16_t)(c->subtype & 0xFF);
            c->subtype = 0;
            c->scale = 0;
        } else if (c->type == FBW_SQL_BLOB) {
            c->charset = (uint16_t)c->scale;
            c->scale = 0;
        }
    }
}

static int parse_section(fbw_describe *d, fbw_rd *r, fbw_describe_side *s, fbw_err *err)
{
    while (r->rc == FBW_OK && fbw_rd_left(r) > 0) {
        uint8_t item = get_u8(r);
        if (item == FBW_INFO_SQL_DESCRIBE_VARS) {
            uint32_t count = (uint32_t)le_int(get_value(r));
            if (r->rc)
                break;
            if (count > FBW_MSG_MAX_COLS)
                return bad(err, r, "too many columns");
            if (!s->have_count) {
                s->count = count;
                s->have_count = 1;
                int rc = d->alloc(d->alloc_arg, s, count);
                if (rc)
                    return fbw_err_set(err, rc, "out of memory for %u columns", count);
                s->fmt->n = (uint16_t)count;
            } else if (count != s->count) {
                return bad(err, r, "column count changed between replies");
            }
            continue;
        }
        if (item == FBW_INFO_SQL_SQLDA_SEQ) {
            if (!s->have_count)
                return bad(err, r, "variable before describe_vars");
            r->p--;
            int ended;
            int rc = parse_var(r, s, err, &ended);
            if (rc)
                return rc;
            if (!ended)
                return FBW_OK; /* truncated inside a variable */
            continue;
        }
        r->p--; /* next section or end */
        return FBW_OK;
    }
    return r->rc == FBW_OK ? FBW_OK : bad(err, r, "truncated section");
}

int fbw_describe_parse(fbw_describe *d, const uint8_t *p, size_t n, int *truncated, fbw_err *err)
{
    fbw_rd r;
    fbw_rd_init(&r, p, n, FBW_E_BADVALUE);
    *truncated = 0;
    while (r.rc == FBW_OK && fbw_rd_left(&r) > 0) {
        uint8_t item = get_u8(&r);
        int rc = FBW_OK;
        switch (item) {
        case FBW_INFO_END:
            finish_cols(&d->in);
            finish_cols(&d->out);
            return FBW_OK;
        case FBW_INFO_TRUNCATED:
            *truncated = 1;
            finish_cols(&d->in);
            finish_cols(&d->out);
            return FBW_OK;
        case FBW_INFO_SQL_STMT_TYPE: d->stmt_type = (int)le_int(get_value(&r)); break;
        case FBW_INFO_SQL_STMT_FLAGS: d->stmt_flags = (int)le_int(get_value(&r)); break;
        case FBW_INFO_SQL_BIND: rc = parse_section(d, &r, &d->in, err); break;
        case FBW_INFO_SQL_SELECT: rc = parse_section(d, &r, &d->out, err); break;
        case FBW_INFO_ERROR: return bad(err, &r, "server did not understand an info item");
        default: return bad(err, &r, "unexpected info item");
        }
        if (rc)
            return rc;
    }
    if (r.rc)
        return bad(err, &r, "truncated reply");
    /* No isc_info_end: the server trims the reply to the real length, so treat the end as the end. */
    finish_cols(&d->in);
    finish_cols(&d->out);
    return FBW_OK;
}

int fbw_info_records(const uint8_t *p, size_t n, uint64_t *affected, uint64_t *selected, fbw_err *err)
{
    fbw_rd r;
    fbw_rd_init(&r, p, n, FBW_E_BADVALUE);
    *affected = *selected = 0;
    while (r.rc == FBW_OK && fbw_rd_left(&r) > 0) {
        uint8_t item = get_u8(&r);
        if (item == FBW_INFO_END)
            return FBW_OK;
        fbw_bytes v = get_value(&r);
        if (r.rc)
            break;
        if (item != FBW_INFO_SQL_RECORDS)
            continue;
        fbw_rd in;
        fbw_rd_init(&in, v.p, v.n, FBW_E_BADVALUE);
        while (in.rc == FBW_OK && fbw_rd_left(&in) > 0) {
            uint8_t k = get_u8(&in);
            if (k == FBW_INFO_END)
                break;
            uint64_t x = (uint64_t)le_int(get_value(&in));
            if (k == FBW_INFO_REQ_SELECT_COUNT)
                *selected += x;
            else if (k == FBW_INFO_REQ_INSERT_COUNT || k == FBW_INFO_REQ_UPDATE_COUNT ||
                     k == FBW_INFO_REQ_DELETE_COUNT)
                *affected += x;
        }
        if (in.rc)
            return fbw_err_set(err, FBW_E_BADVALUE, "records info: truncated counter list");
    }
    if (r.rc)
        return fbw_err_set(err, FBW_E_BADVALUE, "records info: truncated reply");
    return FBW_OK;
}

int fbw_info_cursor_count(const uint8_t *p, size_t n, int64_t *count, fbw_err *err)
{
    fbw_rd r;
    fbw_rd_init(&r, p, n, FBW_E_BADVALUE);
    while (r.rc == FBW_OK && fbw_rd_left(&r) > 0) {
        uint8_t item = get_u8(&r);
        if (item == FBW_INFO_END || item == FBW_INFO_TRUNCATED)
            break;
        fbw_bytes v = get_value(&r);
        if (r.rc)
            break;
        if (item == FBW_INFO_ERROR)
            return fbw_err_set(err, FBW_E_BADVALUE,
                               "cursor info: the server refused the item (error %lld)",
                               (long long)le_int(v));
        if (item == FBW_INFO_CURSOR_RECORD_COUNT) {
            if (v.n == 0 || v.n > 8)
                return fbw_err_set(err, FBW_E_BADVALUE, "cursor info: record count of %zu bytes",
                                   v.n);
            *count = le_int(v);
            return FBW_OK;
        }
    }
    if (r.rc)
        return fbw_err_set(err, FBW_E_BADVALUE, "cursor info: truncated reply");
    return fbw_err_set(err, FBW_E_BADVALUE, "cursor info: no record count in the reply");
}
