/* SPDX-License-Identifier: MIT */
/* blr.c - message BLR: build it the way fbclient does, parse what fbclient and Jaybird send.
 * Codes are those of Firebird's blr.h; layout of a message BLR is in
 * docs/protocol/messages.md §1-3. */
#include "msg.h"

#include <string.h>

enum {
    BLR_VERSION4 = 4,
    BLR_VERSION5 = 5,
    BLR_BEGIN = 2,
    BLR_MESSAGE = 4,
    BLR_SHORT = 7,
    BLR_LONG = 8,
    BLR_QUAD = 9,
    BLR_FLOAT = 10,
    BLR_D_FLOAT = 11,
    BLR_SQL_DATE = 12,
    BLR_SQL_TIME = 13,
    BLR_TEXT = 14,
    BLR_TEXT2 = 15,
    BLR_INT64 = 16,
    BLR_BLOB2 = 17,
    BLR_BOOL = 23,
    BLR_DEC64 = 24,
    BLR_DEC128 = 25,
    BLR_INT128 = 26,
    BLR_DOUBLE = 27,
    BLR_SQL_TIME_TZ = 28,
    BLR_TIMESTAMP_TZ = 29,
    BLR_EX_TIME_TZ = 30,
    BLR_EX_TIMESTAMP_TZ = 31,
    BLR_TIMESTAMP = 35,
    BLR_VARYING = 37,
    BLR_VARYING2 = 38,
    BLR_CSTRING = 40,
    BLR_CSTRING2 = 41,
    BLR_END = 255,
    BLR_EOC = 76,
};

/* Native size and alignment of each type (Firebird's align.h type_lengths / type_alignments;
 * 8-byte alignment for double, int64, decfloat and int128 as on every 64-bit build). */
static size_t native_size(const fbw_col *c, size_t *align)
{
    *align = 4;
    switch (c->type) {
    case FBW_SQL_TEXT:
    case FBW_SQL_NULL:
        *align = 1;
        return c->length;
    case FBW_SQL_VARYING:
        *align = 2;
        return (size_t)c->length + 2;
    case FBW_SQL_SHORT:
        *align = 2;
        return 2;
    case FBW_SQL_BOOLEAN:
        *align = 1;
        return 1;
    case FBW_SQL_LONG:
    case FBW_SQL_FLOAT:
    case FBW_SQL_TYPE_DATE:
    case FBW_SQL_TYPE_TIME:
        return 4;
    case FBW_SQL_TIMESTAMP:
    case FBW_SQL_BLOB:
    case FBW_SQL_ARRAY:
    case FBW_SQL_QUAD:
    case FBW_SQL_TIME_TZ:
    case FBW_SQL_TIME_TZ_EX:
        return 8;
    case FBW_SQL_TIMESTAMP_TZ:
    case FBW_SQL_TIMESTAMP_TZ_EX:
        return 12;
    case FBW_SQL_INT64:
    case FBW_SQL_DOUBLE:
    case FBW_SQL_D_FLOAT:
    case FBW_SQL_DEC16:
        *align = 8;
        return 8;
    case FBW_SQL_INT128:
    case FBW_SQL_DEC34:
        *align = 8;
        return 16;
    default:
        *align = 1;
        return 0;
    }
}

size_t fbw_msg_native_size(const fbw_col *c)
{
    size_t align;
    return native_size(c, &align);
}

static size_t align_up(size_t off, size_t a) { return (off + a - 1) / a * a; }

size_t fbw_msg_length(const fbw_msgfmt *f)
{
    size_t off = 0;
    for (uint16_t i = 0; i < f->n; i++) {
        size_t align;
        size_t size = native_size(&f->cols[i], &align);
        off = align_up(off, align) + size;
        off = align_up(off, 2) + 2; /* the NULL indicator */
    }
    return off;
}

/* ---- build ---- */

typedef struct blr_out {
    uint8_t b[8];
    size_t n;
} blr_out;

static void out1(blr_out *o, unsigned v) { o->b[o->n++] = (uint8_t)v; }
static void out2(blr_out *o, unsigned v)
{
    out1(o, v & 0xFF);
    out1(o, (v >> 8) & 0xFF);
}

/* The BLR of one field (without its NULL indicator), fbclient's choices (BlrFromMessage.cpp). */
static int field_blr(const fbw_col *c, int protocol, blr_out *o)
{
    switch (c->type) {
    case FBW_SQL_VARYING:
        if (c->length > FBW_MSG_MAX_VARYING)
            return FBW_E_USAGE;
        out1(o, BLR_VARYING2);
        out2(o, c->charset);
        out2(o, c->length);
        return FBW_OK;
    case FBW_SQL_TEXT:
        out1(o, BLR_TEXT2);
        out2(o, c->charset);
        out2(o, c->length);
        return FBW_OK;
    case FBW_SQL_NULL:
        out1(o, BLR_TEXT);
        out2(o, c->length);
        return FBW_OK;
    case FBW_SQL_SHORT:
        out1(o, BLR_SHORT);
        out1(o, (uint8_t)c->scale);
        return FBW_OK;
    case FBW_SQL_LONG:
        out1(o, BLR_LONG);
        out1(o, (uint8_t)c->scale);
        return FBW_OK;
    case FBW_SQL_INT64:
        out1(o, BLR_INT64);
        out1(o, (uint8_t)c->scale);
        return FBW_OK;
    case FBW_SQL_INT128:
        out1(o, BLR_INT128);
        out1(o, (uint8_t)c->scale);
        return FBW_OK;
    case FBW_SQL_QUAD:
        out1(o, BLR_QUAD);
        out1(o, (uint8_t)c->scale);
        return FBW_OK;
    case FBW_SQL_ARRAY:
        out1(o, BLR_QUAD);
        out1(o, 0);
        return FBW_OK;
    case FBW_SQL_BLOB:
        /* Servers before FB 2.5 (protocol 12) do not accept blr_blob2 in remote messages. */
        if (protocol >= 12) {
            out1(o, BLR_BLOB2);
            out2(o, (uint16_t)c->subtype);
            out2(o, c->charset);
        } else {
            out1(o, BLR_QUAD);
            out1(o, 0);
        }
        return FBW_OK;
    case FBW_SQL_FLOAT: out1(o, BLR_FLOAT); return FBW_OK;
    case FBW_SQL_DOUBLE: out1(o, BLR_DOUBLE); return FBW_OK;
    case FBW_SQL_D_FLOAT: out1(o, BLR_D_FLOAT); return FBW_OK;
    case FBW_SQL_DEC16: out1(o, BLR_DEC64); return FBW_OK;
    case FBW_SQL_DEC34: out1(o, BLR_DEC128); return FBW_OK;
    case FBW_SQL_TYPE_DATE: out1(o, BLR_SQL_DATE); return FBW_OK;
    case FBW_SQL_TYPE_TIME: out1(o, BLR_SQL_TIME); return FBW_OK;
    case FBW_SQL_TIMESTAMP: out1(o, BLR_TIMESTAMP); return FBW_OK;
    case FBW_SQL_TIME_TZ: out1(o, BLR_SQL_TIME_TZ); return FBW_OK;
    case FBW_SQL_TIME_TZ_EX: out1(o, BLR_EX_TIME_TZ); return FBW_OK;
    case FBW_SQL_TIMESTAMP_TZ: out1(o, BLR_TIMESTAMP_TZ); return FBW_OK;
    case FBW_SQL_TIMESTAMP_TZ_EX: out1(o, BLR_EX_TIMESTAMP_TZ); return FBW_OK;
    case FBW_SQL_BOOLEAN: out1(o, BLR_BOOL); return FBW_OK;
    default:
        return FBW_E_USAGE;
    }
}

int fbw_blr_build(const fbw_msgfmt *f, int protocol, int dialect, fbw_buf *out, fbw_err *err)
{
    if (f->n == 0)
        return FBW_OK;
    if (f->n > FBW_MSG_MAX_COLS)
        return fbw_err_set(err, FBW_E_USAGE, "message BLR: %u fields, at most %d", f->n,
                           FBW_MSG_MAX_COLS);
    size_t start = out->len;
    uint8_t head[6] = {dialect <= 1 ? BLR_VERSION4 : BLR_VERSION5, BLR_BEGIN, BLR_MESSAGE, 0,
                       (uint8_t)((f->n * 2) & 0xFF), (uint8_t)((f->n * 2) >> 8)};
    int rc = fbw_buf_append(out, head, sizeof head);
    for (uint16_t i = 0; i < f->n && rc == FBW_OK; i++) {
        blr_out o = {.n = 0};
        rc = field_blr(&f->cols[i], protocol, &o);
        if (rc != FBW_OK) {
            rc = fbw_err_set(err, FBW_E_USAGE, "message BLR: field %u has type %u%s", i,
                             f->cols[i].type,
                             f->cols[i].type == FBW_SQL_VARYING ? " and too long a length"
                                                                : ", which has no BLR form");
            break;
        }
        out1(&o, BLR_SHORT); /* the NULL indicator */
        out1(&o, 0);
        rc = fbw_buf_append(out, o.b, o.n);
    }
    if (rc == FBW_OK) {
        static const uint8_t tail[2] = {BLR_END, BLR_EOC};
        rc = fbw_buf_append(out, tail, sizeof tail);
    }
    if (rc != FBW_OK) {
        out->len = start; /* leave no half-built BLR behind */
        if (rc == FBW_E_NOMEM)
            fbw_err_set(err, rc, "message BLR: out of memory");
    }
    return rc;
}

/* ---- parse ---- */

typedef struct blr_in {
    const uint8_t *p;
    size_t n, i;
    fbw_err *err;
    int rc;
    int request; /* a request's BLR (op_compile, op_transact): blr_cstring allowed, other words */
} blr_in;

static int in_fail(blr_in *in, const char *what)
{
    if (in->rc == FBW_OK && in->request)
        in->rc = fbw_err_set(in->err, FBW_E_BADVALUE,
                             "request BLR not understood at offset %zu: %s", in->i, what);
    else if (in->rc == FBW_OK)
        in->rc = fbw_err_set(in->err, FBW_E_BADVALUE, "message BLR: %s at offset %zu", what,
                             in->i);
    return in->rc;
}

static unsigned in1(blr_in *in)
{
    if (in->rc != FBW_OK)
        return 0;
    if (in->i >= in->n) {
        in_fail(in, "truncated");
        return 0;
    }
    return in->p[in->i++];
}

static unsigned in2(blr_in *in)
{
    unsigned lo = in1(in);
    return lo | in1(in) << 8;
}

/* The header up to and including the count; returns the number of fields. */
static uint16_t parse_head(blr_in *in)
{
    unsigned v = in1(in);
    if (in->rc == FBW_OK && v != BLR_VERSION4 && v != BLR_VERSION5) {
        in->i--;
        fbw_err_set(in->err, FBW_E_BADVALUE,
                    "message BLR: version byte %u at offset 0 (want 4 or 5)", v);
        in->rc = FBW_E_BADVALUE;
        return 0;
    }
    if (in1(in) != BLR_BEGIN && in->rc == FBW_OK) {
        in->i--;
        in_fail(in, "expected blr_begin");
        return 0;
    }
    if (in1(in) != BLR_MESSAGE && in->rc == FBW_OK) {
        in->i--;
        in_fail(in, "expected blr_message");
        return 0;
    }
    (void)in1(in); /* message number: any */
    unsigned count = in2(in);
    if (in->rc != FBW_OK)
        return 0;
    if (count % 2 != 0) {
        in->i -= 2;
        in_fail(in, "odd descriptor count (each field needs a NULL indicator)");
        return 0;
    }
    return (uint16_t)(count / 2);
}

static int16_t scale_of(unsigned b) { return (int16_t)(int8_t)(uint8_t)b; }

/* One field descriptor into c. Unknown codes fail naming the byte and its offset. */
static void parse_field(blr_in *in, fbw_col *c)
{
    size_t at = in->i;
    unsigned code = in1(in);
    memset(c, 0, sizeof *c);
    c->nullable = 1;
    switch (code) {
    case BLR_TEXT:
        c->type = FBW_SQL_TEXT;
        c->charset = FBW_CS_DYNAMIC;
        c->length = (uint16_t)in2(in);
        break;
    case BLR_TEXT2:
        c->type = FBW_SQL_TEXT;
        c->charset = (uint16_t)in2(in);
        c->length = (uint16_t)in2(in);
        break;
    case BLR_VARYING:
    case BLR_VARYING2:
        c->type = FBW_SQL_VARYING;
        c->charset = code == BLR_VARYING ? FBW_CS_DYNAMIC : (uint16_t)in2(in);
        c->length = (uint16_t)in2(in);
        if (in->rc == FBW_OK && c->length > FBW_MSG_MAX_VARYING) {
            in->i -= 2;
            in_fail(in, "VARCHAR length over 65533");
        }
        break;
    case BLR_SHORT: c->type = FBW_SQL_SHORT; c->scale = scale_of(in1(in)); break;
    case BLR_LONG: c->type = FBW_SQL_LONG; c->scale = scale_of(in1(in)); break;
    case BLR_INT64: c->type = FBW_SQL_INT64; c->scale = scale_of(in1(in)); break;
    case BLR_INT128: c->type = FBW_SQL_INT128; c->scale = scale_of(in1(in)); break;
    case BLR_QUAD: c->type = FBW_SQL_QUAD; c->scale = scale_of(in1(in)); break;
    case BLR_BLOB2:
        c->type = FBW_SQL_BLOB;
        c->subtype = (int16_t)in2(in);
        c->charset = (uint16_t)in2(in);
        break;
    case BLR_FLOAT: c->type = FBW_SQL_FLOAT; break;
    case BLR_DOUBLE: c->type = FBW_SQL_DOUBLE; break;
    case BLR_D_FLOAT: c->type = FBW_SQL_D_FLOAT; break;
    case BLR_DEC64: c->type = FBW_SQL_DEC16; break;
    case BLR_DEC128: c->type = FBW_SQL_DEC34; break;
    case BLR_SQL_DATE: c->type = FBW_SQL_TYPE_DATE; break;
    case BLR_SQL_TIME: c->type = FBW_SQL_TYPE_TIME; break;
    case BLR_TIMESTAMP: c->type = FBW_SQL_TIMESTAMP; break;
    case BLR_SQL_TIME_TZ: c->type = FBW_SQL_TIME_TZ; break;
    case BLR_EX_TIME_TZ: c->type = FBW_SQL_TIME_TZ_EX; break;
    case BLR_TIMESTAMP_TZ: c->type = FBW_SQL_TIMESTAMP_TZ; break;
    case BLR_EX_TIMESTAMP_TZ: c->type = FBW_SQL_TIMESTAMP_TZ_EX; break;
    case BLR_BOOL: c->type = FBW_SQL_BOOLEAN; break;
    case BLR_CSTRING:
    case BLR_CSTRING2:
        if (!in->request)
            goto unsupported;
        /* A NUL-terminated C string: on the wire a count (at most length - 1) and the bytes,
         * which is exactly a VARCHAR of length - 1 (xdr_datum, dtype_cstring). */
        c->type = FBW_SQL_VARYING;
        c->charset = code == BLR_CSTRING ? FBW_CS_DYNAMIC : (uint16_t)in2(in);
        c->length = (uint16_t)in2(in);
        c->length = c->length ? (uint16_t)(c->length - 1) : 0;
        return;
    default:
    unsupported:
        if (in->rc == FBW_OK) {
            if (in->request)
                in->rc = fbw_err_set(in->err, FBW_E_BADVALUE,
                                     "request BLR not understood at offset %zu: message field "
                                     "type byte %u", at, code);
            else
                in->rc = fbw_err_set(in->err, FBW_E_BADVALUE,
                                     "message BLR: unsupported type byte %u%s at offset %zu", code,
                                     code == BLR_CSTRING || code == BLR_CSTRING2 ? " (blr_cstring)" : "",
                                     at);
        }
        return;
    }
    if (c->type != FBW_SQL_TEXT && c->type != FBW_SQL_VARYING)
        c->length = (uint16_t)fbw_msg_native_size(c);
}

/* The NULL indicator after each field: blr_short with scale 0. */
static void parse_indicator(blr_in *in)
{
    if (in1(in) != BLR_SHORT && in->rc == FBW_OK) {
        in->i--;
        in_fail(in, "field not followed by its blr_short NULL indicator");
        return;
    }
    if (in1(in) != 0 && in->rc == FBW_OK) {
        in->i--;
        in_fail(in, "NULL indicator with a non-zero scale");
    }
}

static void parse_tail(blr_in *in)
{
    if (in1(in) != BLR_END && in->rc == FBW_OK) {
        in->i--;
        in_fail(in, "expected blr_end");
        return;
    }
    /* fbclient and Jaybird end with blr_eoc; accept its absence, but nothing else. */
    if (in->rc == FBW_OK && in->i < in->n && in->p[in->i] == BLR_EOC)
        in->i++;
    if (in->rc == FBW_OK && in->i != in->n)
        in_fail(in, "trailing bytes after the message");
}

int fbw_blr_count(const uint8_t *blr, size_t n, uint16_t *count, fbw_err *err)
{
    blr_in in = {blr, n, 0, err, FBW_OK, 0};
    *count = 0;
    if (n == 0)
        return FBW_OK;
    uint16_t c = parse_head(&in);
    if (in.rc == FBW_OK)
        *count = c;
    return in.rc;
}

int fbw_blr_parse(const uint8_t *blr, size_t n, fbw_msgfmt *f, fbw_err *err)
{
    blr_in in = {blr, n, 0, err, FBW_OK, 0};
    f->n = 0;
    if (n == 0)
        return FBW_OK;
    uint16_t count = parse_head(&in);
    if (in.rc != FBW_OK)
        return in.rc;
    if (count > f->cap)
        return fbw_err_set(err, FBW_E_USAGE, "message BLR: %u fields, room for %u", count,
                           f->cap);
    for (uint16_t i = 0; i < count && in.rc == FBW_OK; i++) {
        parse_field(&in, &f->cols[i]);
        parse_indicator(&in);
    }
    parse_tail(&in);
    if (in.rc == FBW_OK)
        f->n = count;
    return in.rc;
}

/* ---- request BLR (op_compile, op_transact) ---- */

/* The remote layer knows a request's messages only from the declarations that open its BLR
 * (src/remote/parser.cpp PARSE_messages): version, blr_begin, then blr_message after blr_message;
 * the first other verb ends them. Messages declared deeper are not sent over the wire by any
 * Firebird client, and the server would not know their format either. */
static int request_head(blr_in *in)
{
    unsigned v = in1(in);
    if (in->rc == FBW_OK && v != BLR_VERSION4 && v != BLR_VERSION5) {
        in->i--;
        return in_fail(in, "version byte is not blr_version4 or blr_version5");
    }
    if (in1(in) != BLR_BEGIN && in->rc == FBW_OK) {
        in->i--;
        return in_fail(in, "expected blr_begin");
    }
    return in->rc;
}

int fbw_blr_request_scan(const uint8_t *blr, size_t n, fbw_blr_msgdecl *out, unsigned cap,
                         unsigned *count, fbw_err *err)
{
    blr_in in = {blr, n, 0, err, FBW_OK, 1};
    *count = 0;
    if (request_head(&in))
        return in.rc;
    while (in.i < in.n && in.p[in.i] == BLR_MESSAGE) {
        in.i++;
        fbw_blr_msgdecl m = {0};
        m.number = (uint8_t)in1(&in);
        m.fields = (uint16_t)in2(&in);
        m.offset = in.i;
        for (unsigned k = 0; k < m.fields && in.rc == FBW_OK; k++) {
            fbw_col c;
            parse_field(&in, &c);
        }
        if (in.rc != FBW_OK)
            return in.rc;
        for (unsigned k = 0; k < *count; k++)
            if (out[k].number == m.number)
                return fbw_err_set(err, FBW_E_BADVALUE, "request BLR not understood at offset "
                                   "%zu: message %u declared twice", m.offset - 3, m.number);
        if (*count == cap)
            return fbw_err_set(err, FBW_E_USAGE, "request BLR: more than %u messages", cap);
        out[(*count)++] = m;
    }
    return FBW_OK;
}

int fbw_blr_request_fields(const uint8_t *blr, size_t n, const fbw_blr_msgdecl *m, fbw_msgfmt *f,
                           fbw_err *err)
{
    blr_in in = {blr, n, m->offset, err, FBW_OK, 1};
    f->n = 0;
    if (m->fields > f->cap)
        return fbw_err_set(err, FBW_E_USAGE, "request BLR: message %u has %u fields, room for %u",
                           m->number, m->fields, f->cap);
    for (uint16_t i = 0; i < m->fields && in.rc == FBW_OK; i++)
        parse_field(&in, &f->cols[i]);
    if (in.rc == FBW_OK)
        f->n = m->fields;
    return in.rc;
}
