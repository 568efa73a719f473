/* SPDX-License-Identifier: MIT */
/* row.c - one message on the wire: framing, decoding and encoding (xdr_packed_message for
 * protocol >= 13, xdr_message below it; per-field XDR as in src/common/xdr.cpp xdr_datum). */
#include "msg.h"

#include <string.h>

/* XDR size of the fixed-size types. xdr_datum sends SHORT through xdr_short (4 bytes), BOOLEAN
 * as opaque(1) (1 byte + 3 pad), each TZ zone/offset through xdr_short (4 bytes each), INT128 and
 * DEC34 as two 8-byte halves, high half first. Returns 0 for the variable-size and unknown types. */
static size_t fixed_wire_size(uint16_t type)
{
    switch (type) {
    case FBW_SQL_SHORT:
    case FBW_SQL_LONG:
    case FBW_SQL_FLOAT:
    case FBW_SQL_TYPE_DATE:
    case FBW_SQL_TYPE_TIME:
    case FBW_SQL_BOOLEAN:
        return 4;
    case FBW_SQL_INT64:
    case FBW_SQL_DOUBLE:
    case FBW_SQL_D_FLOAT:
    case FBW_SQL_TIMESTAMP:
    case FBW_SQL_BLOB:
    case FBW_SQL_ARRAY:
    case FBW_SQL_QUAD:
    case FBW_SQL_DEC16:
    case FBW_SQL_TIME_TZ:
        return 8;
    case FBW_SQL_TIME_TZ_EX:
    case FBW_SQL_TIMESTAMP_TZ:
        return 12;
    case FBW_SQL_INT128:
    case FBW_SQL_DEC34:
    case FBW_SQL_TIMESTAMP_TZ_EX:
        return 16;
    default:
        return 0;
    }
}

static int is_text_type(uint16_t type) { return type == FBW_SQL_TEXT || type == FBW_SQL_NULL; }

/* Length of a VARCHAR on the wire, checked against the declared length. The server never sends
 * more (xdr_datum clamps to the declared size), so a longer one means we lost the framing. */
static uint16_t varying_len(fbw_rd *r, const fbw_col *c)
{
    uint16_t len = fbw_xdr_u16(r);
    if (r->rc == FBW_OK && len > c->length)
        fbw_rd_fail(r, FBW_E_PROTO, "VARCHAR value longer than its declared length");
    return r->rc == FBW_OK ? len : 0;
}

static void skip_field(fbw_rd *r, const fbw_col *c)
{
    if (is_text_type(c->type)) {
        (void)fbw_xdr_opaque(r, c->length);
    } else if (c->type == FBW_SQL_VARYING) {
        uint16_t len = varying_len(r, c);
        (void)fbw_xdr_opaque(r, len);
    } else {
        size_t n = fixed_wire_size(c->type);
        if (n == 0)
            fbw_rd_fail(r, FBW_E_USAGE, "message format has an unknown SQL type");
        fbw_xdr_skip(r, n);
    }
}

static int bit_is_null(const uint8_t *bitmap, uint16_t i) { return bitmap[i >> 3] >> (i & 7) & 1; }

static size_t bitmap_bytes(uint16_t n) { return ((size_t)n + 7) / 8; }

int fbw_msg_frame(fbw_rd *r, const fbw_msgfmt *f, int protocol, fbw_bytes *raw)
{
    const uint8_t *start = r->p;
    raw->p = NULL;
    raw->n = 0;
    if (protocol >= 13) {
        fbw_bytes bitmap = fbw_xdr_opaque(r, bitmap_bytes(f->n));
        for (uint16_t i = 0; i < f->n && r->rc == FBW_OK; i++)
            if (!bit_is_null(bitmap.p, i))
                skip_field(r, &f->cols[i]);
    } else {
        for (uint16_t i = 0; i < f->n && r->rc == FBW_OK; i++) {
            skip_field(r, &f->cols[i]);
            fbw_xdr_skip(r, 4); /* NULL indicator (xdr_short) */
        }
    }
    if (r->rc == FBW_OK) {
        raw->p = start;
        raw->n = (size_t)(r->p - start);
    }
    return r->rc;
}

int fbw_msg_frame_plain(fbw_rd *r, const fbw_msgfmt *f, fbw_bytes *raw)
{
    const uint8_t *start = r->p;
    raw->p = NULL;
    raw->n = 0;
    for (uint16_t i = 0; i < f->n && r->rc == FBW_OK; i++)
        skip_field(r, &f->cols[i]);
    if (r->rc == FBW_OK) {
        raw->p = start;
        raw->n = (size_t)(r->p - start);
    }
    return r->rc;
}

/* ---- decode ---- */

static void get_tz(fbw_rd *r, fbw_value *v, int ex)
{
    v->u.dt.zone = fbw_xdr_u16(r);
    if (ex) {
        v->u.dt.offset = (int16_t)fbw_xdr_u16(r);
        v->u.dt.has_offset = 1;
    } else if (v->u.dt.zone <= 2 * 1439) {
        /* Offset zones encode the displacement as minutes + 1439 (TimeZoneUtil.cpp). */
        v->u.dt.offset = (int16_t)((int)v->u.dt.zone - 1439);
        v->u.dt.has_offset = 1;
    } else if (v->u.dt.zone == 65535) {
        v->u.dt.offset = 0; /* GMT */
        v->u.dt.has_offset = 1;
    }
}

static void get_field(fbw_rd *r, const fbw_col *c, fbw_value *v)
{
    uint64_t u;
    uint32_t u32;
    fbw_bytes b;
    switch (c->type) {
    case FBW_SQL_TEXT:
    case FBW_SQL_NULL:
        v->u.bytes = fbw_xdr_opaque(r, c->length);
        break;
    case FBW_SQL_VARYING:
        v->u.bytes = fbw_xdr_opaque(r, varying_len(r, c));
        break;
    case FBW_SQL_SHORT: v->u.i64 = (int16_t)fbw_xdr_u16(r); break;
    case FBW_SQL_LONG: v->u.i64 = fbw_xdr_i32(r); break;
    case FBW_SQL_INT64: v->u.i64 = fbw_xdr_i64(r); break;
    case FBW_SQL_INT128:
        v->u.i128.hi = fbw_xdr_i64(r);
        v->u.i128.lo = (uint64_t)fbw_xdr_i64(r);
        break;
    case FBW_SQL_FLOAT:
        u32 = fbw_xdr_u32(r);
        memcpy(&v->u.f32, &u32, sizeof u32);
        break;
    case FBW_SQL_DOUBLE:
    case FBW_SQL_D_FLOAT:
        u = (uint64_t)fbw_xdr_i64(r);
        memcpy(&v->u.f64, &u, sizeof u);
        break;
    case FBW_SQL_BOOLEAN:
        b = fbw_xdr_opaque(r, 1);
        v->u.boolean = b.p && b.p[0] != 0;
        break;
    case FBW_SQL_TYPE_DATE: v->u.dt.date = fbw_xdr_i32(r); break;
    case FBW_SQL_TYPE_TIME: v->u.dt.time = fbw_xdr_u32(r); break;
    case FBW_SQL_TIMESTAMP:
        v->u.dt.date = fbw_xdr_i32(r);
        v->u.dt.time = fbw_xdr_u32(r);
        break;
    case FBW_SQL_TIME_TZ:
    case FBW_SQL_TIME_TZ_EX:
        v->u.dt.time = fbw_xdr_u32(r);
        get_tz(r, v, c->type == FBW_SQL_TIME_TZ_EX);
        break;
    case FBW_SQL_TIMESTAMP_TZ:
    case FBW_SQL_TIMESTAMP_TZ_EX:
        v->u.dt.date = fbw_xdr_i32(r);
        v->u.dt.time = fbw_xdr_u32(r);
        get_tz(r, v, c->type == FBW_SQL_TIMESTAMP_TZ_EX);
        break;
    case FBW_SQL_DEC16:
    case FBW_SQL_DEC34:
        b = fbw_xdr_raw(r, fixed_wire_size(c->type));
        if (b.p)
            memcpy(v->u.dec, b.p, b.n);
        break;
    case FBW_SQL_BLOB:
    case FBW_SQL_ARRAY:
    case FBW_SQL_QUAD:
        v->u.quad.high = fbw_xdr_u32(r);
        v->u.quad.low = fbw_xdr_u32(r);
        break;
    default:
        fbw_rd_fail(r, FBW_E_USAGE, "message format has an unknown SQL type");
        break;
    }
}

static void init_value(fbw_value *v, const fbw_col *c, int is_null)
{
    memset(v, 0, sizeof *v);
    v->type = c->type;
    v->is_null = (uint8_t)(is_null || c->type == FBW_SQL_NULL);
}

int fbw_msg_decode(fbw_bytes raw, const fbw_msgfmt *f, int protocol, fbw_value *values,
                   fbw_err *err)
{
    fbw_rd r;
    uint16_t i = 0;
    fbw_rd_init(&r, raw.p, raw.n, FBW_E_PROTO);
    if (protocol >= 13) {
        fbw_bytes bitmap = fbw_xdr_opaque(&r, bitmap_bytes(f->n));
        for (; i < f->n && r.rc == FBW_OK; i++) {
            int is_null = bit_is_null(bitmap.p, i);
            init_value(&values[i], &f->cols[i], is_null);
            if (!is_null)
                get_field(&r, &f->cols[i], &values[i]);
        }
    } else {
        for (; i < f->n && r.rc == FBW_OK; i++) {
            fbw_value *v = &values[i];
            init_value(v, &f->cols[i], 0);
            get_field(&r, &f->cols[i], v);
            /* Any non-zero indicator means NULL; the value bytes sent with it are meaningless. */
            if ((int16_t)fbw_xdr_u16(&r) != 0) {
                init_value(v, &f->cols[i], 1);
            }
        }
    }
    if (r.rc == FBW_OK && fbw_rd_left(&r) != 0)
        fbw_rd_fail(&r, FBW_E_PROTO, "bytes left over after the message");
    if (r.rc != FBW_OK)
        return fbw_err_set(err, r.rc, "message: %s (field %u, offset %zu)",
                           r.what ? r.what : "bad data", i ? i - 1u : 0u, fbw_rd_offset(&r));
    return FBW_OK;
}

int fbw_msg_decode_plain(fbw_bytes raw, const fbw_msgfmt *f, fbw_value *values, fbw_err *err)
{
    fbw_rd r;
    uint16_t i = 0;
    fbw_rd_init(&r, raw.p, raw.n, FBW_E_PROTO);
    for (; i < f->n && r.rc == FBW_OK; i++) {
        init_value(&values[i], &f->cols[i], 0);
        get_field(&r, &f->cols[i], &values[i]);
    }
    if (r.rc == FBW_OK && fbw_rd_left(&r) != 0)
        fbw_rd_fail(&r, FBW_E_PROTO, "bytes left over after the message");
    if (r.rc != FBW_OK)
        return fbw_err_set(err, r.rc, "request message: %s (field %u, offset %zu)",
                           r.what ? r.what : "bad data", i ? i - 1u : 0u, fbw_rd_offset(&r));
    return FBW_OK;
}

/* ---- encode ---- */

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Value bytes as sent: raw, or decoded from hex digits (validated by fbw_value_from_text). */
static size_t value_len(const fbw_value *v) { return v->hex ? v->u.bytes.n / 2 : v->u.bytes.n; }

static void put_value_bytes(fbw_wr *w, const fbw_value *v)
{
    if (!v->hex) {
        fbw_xdr_put_raw(w, v->u.bytes.p, v->u.bytes.n);
        return;
    }
    uint8_t chunk[64];
    size_t k = 0;
    for (size_t i = 0; i + 1 < v->u.bytes.n; i += 2) {
        chunk[k++] = (uint8_t)(hexval(v->u.bytes.p[i]) << 4 | hexval(v->u.bytes.p[i + 1]));
        if (k == sizeof chunk) {
            fbw_xdr_put_raw(w, chunk, k);
            k = 0;
        }
    }
    fbw_xdr_put_raw(w, chunk, k);
}

static void put_fill(fbw_wr *w, uint8_t byte, size_t n)
{
    uint8_t chunk[64];
    memset(chunk, byte, sizeof chunk);
    while (n > 0) {
        size_t k = n < sizeof chunk ? n : sizeof chunk;
        fbw_xdr_put_raw(w, chunk, k);
        n -= k;
    }
}

static int int_fits(const fbw_value *v, uint16_t type)
{
    if (type == FBW_SQL_SHORT)
        return v->u.i64 >= INT16_MIN && v->u.i64 <= INT16_MAX;
    if (type == FBW_SQL_LONG)
        return v->u.i64 >= INT32_MIN && v->u.i64 <= INT32_MAX;
    return 1;
}

static void put_tz(fbw_wr *w, const fbw_value *v, int ex)
{
    fbw_xdr_put_short(w, v->u.dt.zone);
    if (ex)
        fbw_xdr_put_short(w, (uint16_t)v->u.dt.offset);
}

/* Writes one field. Returns FBW_OK or FBW_E_BADVALUE (value does not fit the column). */
static int put_field(fbw_wr *w, const fbw_col *c, const fbw_value *v)
{
    uint32_t u32;
    uint64_t u64;
    uint8_t b;
    switch (c->type) {
    case FBW_SQL_TEXT:
    case FBW_SQL_NULL:
        if (value_len(v) > c->length)
            return FBW_E_BADVALUE;
        put_value_bytes(w, v);
        /* CHAR is padded with spaces, binary CHAR (OCTETS) with zero bytes, as the engine does. */
        put_fill(w, c->charset == FBW_CS_OCTETS || v->is_null ? 0 : ' ', c->length - value_len(v));
        fbw_xdr_put_pad(w, c->length);
        return FBW_OK;
    case FBW_SQL_VARYING:
        if (value_len(v) > c->length)
            return FBW_E_BADVALUE;
        fbw_xdr_put_short(w, (uint16_t)value_len(v));
        put_value_bytes(w, v);
        fbw_xdr_put_pad(w, value_len(v));
        return FBW_OK;
    case FBW_SQL_SHORT:
    case FBW_SQL_LONG:
        if (!int_fits(v, c->type))
            return FBW_E_BADVALUE;
        fbw_xdr_put_i32(w, (int32_t)v->u.i64);
        return FBW_OK;
    case FBW_SQL_INT64: fbw_xdr_put_i64(w, v->u.i64); return FBW_OK;
    case FBW_SQL_INT128:
        fbw_xdr_put_i64(w, v->u.i128.hi);
        fbw_xdr_put_i64(w, (int64_t)v->u.i128.lo);
        return FBW_OK;
    case FBW_SQL_FLOAT:
        memcpy(&u32, &v->u.f32, sizeof u32);
        fbw_xdr_put_u32(w, u32);
        return FBW_OK;
    case FBW_SQL_DOUBLE:
    case FBW_SQL_D_FLOAT:
        memcpy(&u64, &v->u.f64, sizeof u64);
        fbw_xdr_put_i64(w, (int64_t)u64);
        return FBW_OK;
    case FBW_SQL_BOOLEAN:
        b = v->u.boolean ? 1 : 0;
        fbw_xdr_put_opaque(w, &b, 1);
        return FBW_OK;
    case FBW_SQL_TYPE_DATE: fbw_xdr_put_i32(w, v->u.dt.date); return FBW_OK;
    case FBW_SQL_TYPE_TIME: fbw_xdr_put_u32(w, v->u.dt.time); return FBW_OK;
    case FBW_SQL_TIMESTAMP:
        fbw_xdr_put_i32(w, v->u.dt.date);
        fbw_xdr_put_u32(w, v->u.dt.time);
        return FBW_OK;
    case FBW_SQL_TIME_TZ:
    case FBW_SQL_TIME_TZ_EX:
        fbw_xdr_put_u32(w, v->u.dt.time);
        put_tz(w, v, c->type == FBW_SQL_TIME_TZ_EX);
        return FBW_OK;
    case FBW_SQL_TIMESTAMP_TZ:
    case FBW_SQL_TIMESTAMP_TZ_EX:
        fbw_xdr_put_i32(w, v->u.dt.date);
        fbw_xdr_put_u32(w, v->u.dt.time);
        put_tz(w, v, c->type == FBW_SQL_TIMESTAMP_TZ_EX);
        return FBW_OK;
    case FBW_SQL_DEC16:
    case FBW_SQL_DEC34:
        fbw_xdr_put_raw(w, v->u.dec, fixed_wire_size(c->type));
        return FBW_OK;
    case FBW_SQL_BLOB:
    case FBW_SQL_ARRAY:
    case FBW_SQL_QUAD:
        fbw_xdr_put_u32(w, v->u.quad.high);
        fbw_xdr_put_u32(w, v->u.quad.low);
        return FBW_OK;
    default:
        return FBW_E_USAGE;
    }
}

static int check_values(const fbw_msgfmt *f, const fbw_value *values, fbw_err *err)
{
    for (uint16_t i = 0; i < f->n; i++) {
        const fbw_col *c = &f->cols[i];
        const fbw_value *v = &values[i];
        if (fixed_wire_size(c->type) == 0 && !is_text_type(c->type) && c->type != FBW_SQL_VARYING)
            return fbw_err_set(err, FBW_E_USAGE, "message: field %u has unknown SQL type %u", i,
                               c->type);
        if (!v->is_null && v->type != c->type)
            return fbw_err_set(err, FBW_E_USAGE,
                               "message: field %u holds a value of type %u for a column of type %u",
                               i, v->type, c->type);
    }
    return FBW_OK;
}

int fbw_msg_encode(fbw_wr *w, const fbw_msgfmt *f, int protocol, const fbw_value *values,
                   fbw_err *err)
{
    int rc = check_values(f, values, err);
    if (rc != FBW_OK)
        return rc;
    if (protocol >= 13) {
        uint8_t bitmap[64];
        size_t nb = bitmap_bytes(f->n);
        /* Bitmap in chunks so the stack stays small; bit i%8 of byte i/8 is field i. */
        for (size_t base = 0; base < nb; base += sizeof bitmap) {
            size_t k = nb - base < sizeof bitmap ? nb - base : sizeof bitmap;
            memset(bitmap, 0, sizeof bitmap);
            for (size_t j = 0; j < k * 8 && (base * 8 + j) < f->n; j++)
                if (values[base * 8 + j].is_null)
                    bitmap[j >> 3] |= (uint8_t)(1u << (j & 7));
            fbw_xdr_put_raw(w, bitmap, k);
        }
        fbw_xdr_put_pad(w, nb);
    }
    for (uint16_t i = 0; i < f->n && rc == FBW_OK; i++) {
        const fbw_value *v = &values[i];
        if (protocol >= 13 && v->is_null)
            continue;
        if (v->is_null) {
            fbw_value zero;
            memset(&zero, 0, sizeof zero);
            zero.is_null = 1;
            rc = put_field(w, &f->cols[i], &zero);
        } else {
            rc = put_field(w, &f->cols[i], v);
        }
        if (rc != FBW_OK)
            rc = fbw_err_set(err, rc, "message: value of field %u is longer or larger than its "
                             "column allows", i);
        else if (protocol < 13)
            fbw_xdr_put_short(w, v->is_null ? 0xFFFF : 0);
    }
    if (rc == FBW_OK && w->rc != FBW_OK)
        rc = fbw_err_set(err, w->rc, "message: out of memory");
    return rc;
}
