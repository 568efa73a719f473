/* SPDX-License-Identifier: MIT */
/* value.c - SQL values to and from canonical text (the rules are in value.h). Exact numerics go
 * through 128-bit integers, never double; dates use Firebird's day count from 1858-11-17
 * (src/common/classes/timestamp.cpp), time zones its id scheme (src/common/TimeZoneUtil.cpp). */
#include "value.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

#define DAY_UNITS ((int64_t)FBW_TIME_PER_DAY)
#define MINUTE_UNITS 600000          /* one minute in 1/10000 s */
#define ZONE_ONE_DAY 1439            /* offset zone id = displacement minutes + 1439 */
#define ZONE_GMT 65535
#define MJD_1970 40587               /* 1970-01-01 in Firebird's day count */

static const char *type_name(uint16_t type)
{
    switch (type) {
    case FBW_SQL_TEXT: return "CHAR";
    case FBW_SQL_VARYING: return "VARCHAR";
    case FBW_SQL_SHORT: return "SMALLINT";
    case FBW_SQL_LONG: return "INTEGER";
    case FBW_SQL_INT64: return "BIGINT";
    case FBW_SQL_INT128: return "INT128";
    case FBW_SQL_FLOAT: return "FLOAT";
    case FBW_SQL_DOUBLE: return "DOUBLE PRECISION";
    case FBW_SQL_D_FLOAT: return "D_FLOAT";
    case FBW_SQL_DEC16: return "DECFLOAT(16)";
    case FBW_SQL_DEC34: return "DECFLOAT(34)";
    case FBW_SQL_TYPE_DATE: return "DATE";
    case FBW_SQL_TYPE_TIME: return "TIME";
    case FBW_SQL_TIMESTAMP: return "TIMESTAMP";
    case FBW_SQL_TIME_TZ: return "TIME WITH TIME ZONE";
    case FBW_SQL_TIME_TZ_EX: return "TIME WITH TIME ZONE (EX)";
    case FBW_SQL_TIMESTAMP_TZ: return "TIMESTAMP WITH TIME ZONE";
    case FBW_SQL_TIMESTAMP_TZ_EX: return "TIMESTAMP WITH TIME ZONE (EX)";
    case FBW_SQL_BOOLEAN: return "BOOLEAN";
    case FBW_SQL_BLOB: return "BLOB";
    case FBW_SQL_ARRAY: return "ARRAY";
    case FBW_SQL_QUAD: return "QUAD";
    case FBW_SQL_NULL: return "NULL";
    default: return "unknown type";
    }
}

/* ---- dates (days from civil, H. Hinnant's algorithm, shifted to Firebird's epoch) ---- */

int32_t fbw_date_from_ymd(int y, int m, int d)
{
    long yy = (long)y - (m <= 2);
    long era = (yy >= 0 ? yy : yy - 399) / 400;
    long yoe = yy - era * 400;
    long doy = (153L * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (int32_t)(era * 146097 + doe - 719468 + MJD_1970);
}

void fbw_date_to_ymd(int32_t date, int *y, int *m, int *d)
{
    long z = (long)date - MJD_1970 + 719468;
    long era = (z >= 0 ? z : z - 146096) / 146097;
    long doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

static int days_in_month(int y, int m)
{
    static const uint8_t days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[m - 1] + (m == 2 && leap);
}

/* ---- formatting helpers ---- */

typedef struct out_ctx {
    fbw_buf *b;
    int rc;
} out_ctx;

static void put(out_ctx *o, const void *p, size_t n)
{
    if (o->rc == FBW_OK && n > 0)
        o->rc = fbw_buf_append(o->b, p, n);
}

static void puts_(out_ctx *o, const char *s) { put(o, s, strlen(s)); }

/* Decimal digits of a magnitude, most significant first; returns the count (>= 1). */
static size_t u128_digits(u128 v, char *buf /* [40] */)
{
    char tmp[40];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

/* Exact numeric text of sign * mag * 10^scale. */
static void put_exact(out_ctx *o, int neg, u128 mag, int scale)
{
    char dig[40];
    size_t n = u128_digits(mag, dig);
    if (neg && mag != 0)
        put(o, "-", 1);
    if (scale >= 0) {
        put(o, dig, n);
        if (mag != 0)
            for (int i = 0; i < scale; i++)
                put(o, "0", 1);
        return;
    }
    size_t frac = (size_t)-scale;
    if (n <= frac) {
        put(o, "0.", 2);
        for (size_t i = n; i < frac; i++)
            put(o, "0", 1);
        put(o, dig, n);
    } else {
        put(o, dig, n - frac);
        put(o, ".", 1);
        put(o, dig + n - frac, frac);
    }
}

static int roundtrips(const char *buf, double d, int is_float)
{
    if (is_float)
        return strtof(buf, NULL) == (float)d;
    return strtod(buf, NULL) == d;
}

/* Shortest digits that read back to the same value; plain notation for decimal exponents
 * -5..16, else d.ddde+XX. */
static void put_binary_float(out_ctx *o, double d, int is_float)
{
    char buf[64];
    if (isnan(d)) {
        puts_(o, "NaN");
        return;
    }
    if (isinf(d)) {
        puts_(o, d < 0 ? "-Infinity" : "Infinity");
        return;
    }
    int maxp = is_float ? 9 : 17, p = 1;
    for (; p < maxp; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, d);
        if (roundtrips(buf, d, is_float))
            break;
    }
    snprintf(buf, sizeof buf, "%.*e", p - 1, d);
    int x = atoi(strchr(buf, 'e') + 1);
    if (x >= -5 && x <= 16) {
        int decimals = p - 1 - x;
        snprintf(buf, sizeof buf, "%.*f", decimals > 0 ? decimals : 0, d);
    }
    puts_(o, buf);
}

static int put_date(out_ctx *o, int32_t date)
{
    int y, m, d;
    char buf[40]; /* room for any three ints: the compiler cannot see the range check below */
    if (date < FBW_DATE_MIN || date > FBW_DATE_MAX)
        return FBW_E_BADVALUE;
    fbw_date_to_ymd(date, &y, &m, &d);
    snprintf(buf, sizeof buf, "%04d-%02d-%02d", y, m, d);
    puts_(o, buf);
    return FBW_OK;
}

static int put_time(out_ctx *o, uint32_t t)
{
    char buf[24];
    if (t >= FBW_TIME_PER_DAY)
        return FBW_E_BADVALUE;
    uint32_t s = t / 10000;
    snprintf(buf, sizeof buf, "%02u:%02u:%02u.%04u", s / 3600, s / 60 % 60, s % 60, t % 10000);
    puts_(o, buf);
    return FBW_OK;
}

static void put_offset(out_ctx *o, int minutes)
{
    char buf[16];
    int a = minutes < 0 ? -minutes : minutes;
    snprintf(buf, sizeof buf, "%c%02d:%02d", minutes < 0 ? '-' : '+', a / 60, a % 60);
    puts_(o, buf);
}

/* Local date/time + " " + zone, per the rules in value.h. with_date = 0 for TIME WITH TZ. */
static int put_tz(out_ctx *o, const fbw_value *v, int with_date, const fbw_tznames *tz)
{
    const char *name = NULL;
    /* Offset zones and GMT carry their offset in the id; regions only through _EX types. */
    int offset = v->u.dt.zone <= 2 * ZONE_ONE_DAY ? (int)v->u.dt.zone - ZONE_ONE_DAY
                 : v->u.dt.zone == ZONE_GMT || !v->u.dt.has_offset ? 0
                                                                   : v->u.dt.offset;
    if (v->u.dt.time >= FBW_TIME_PER_DAY || offset < -1439 || offset > 1439)
        return FBW_E_BADVALUE;
    int64_t units = (with_date ? (int64_t)v->u.dt.date * DAY_UNITS : 0) + v->u.dt.time +
                    (int64_t)offset * MINUTE_UNITS;
    int64_t day = units >= 0 ? units / DAY_UNITS : -((-units + DAY_UNITS - 1) / DAY_UNITS);
    uint32_t time = (uint32_t)(units - day * DAY_UNITS);
    int rc = FBW_OK;
    if (with_date) {
        rc = put_date(o, (int32_t)day);
        put(o, " ", 1);
    }
    if (rc == FBW_OK)
        rc = put_time(o, time);
    if (rc != FBW_OK)
        return rc;
    put(o, " ", 1);
    if (v->u.dt.zone <= 2 * ZONE_ONE_DAY) {
        put_offset(o, (int)v->u.dt.zone - ZONE_ONE_DAY);
    } else if (v->u.dt.zone == ZONE_GMT) {
        puts_(o, "GMT");
    } else {
        if (v->u.dt.has_offset && tz && tz->name)
            name = tz->name(tz->ctx, v->u.dt.zone);
        if (name)
            puts_(o, name);
        else
            put_offset(o, offset); /* offset only, or +00:00 for a UTC time without one */
    }
    return FBW_OK;
}

static void put_bytes(out_ctx *o, const fbw_value *v, const fbw_col *c)
{
    if (c->charset != FBW_CS_OCTETS) {
        put(o, v->u.bytes.p, v->u.bytes.n);
        return;
    }
    static const char hexdig[] = "0123456789ABCDEF";
    char chunk[128];
    size_t k = 0;
    for (size_t i = 0; i < v->u.bytes.n; i++) {
        chunk[k++] = hexdig[v->u.bytes.p[i] >> 4];
        chunk[k++] = hexdig[v->u.bytes.p[i] & 15];
        if (k == sizeof chunk) {
            put(o, chunk, k);
            k = 0;
        }
    }
    put(o, chunk, k);
}

static u128 i128_bits(fbw_i128 x) { return (u128)(uint64_t)x.hi << 64 | x.lo; }

static int format_value(out_ctx *o, const fbw_value *v, const fbw_col *c, const fbw_tznames *tz)
{
    char buf[FBW_DEC_TEXT_MAX];
    u128 u;
    if (v->is_null || c->type == FBW_SQL_NULL) {
        puts_(o, "NULL");
        return FBW_OK;
    }
    switch (c->type) {
    case FBW_SQL_TEXT:
    case FBW_SQL_VARYING:
        put_bytes(o, v, c);
        return FBW_OK;
    case FBW_SQL_SHORT:
    case FBW_SQL_LONG:
    case FBW_SQL_INT64:
        u = v->u.i64 < 0 ? (u128)(0 - (uint64_t)v->u.i64) : (u128)v->u.i64;
        put_exact(o, v->u.i64 < 0, u, c->scale);
        return FBW_OK;
    case FBW_SQL_INT128:
        u = i128_bits(v->u.i128);
        put_exact(o, v->u.i128.hi < 0, v->u.i128.hi < 0 ? 0 - u : u, c->scale);
        return FBW_OK;
    case FBW_SQL_FLOAT:
        put_binary_float(o, v->u.f32, 1);
        return FBW_OK;
    case FBW_SQL_DOUBLE:
    case FBW_SQL_D_FLOAT:
        put_binary_float(o, v->u.f64, 0);
        return FBW_OK;
    case FBW_SQL_DEC16:
    case FBW_SQL_DEC34:
        put(o, buf, fbw_dec_to_text(v->u.dec, c->type == FBW_SQL_DEC16 ? 8 : 16, buf));
        return FBW_OK;
    case FBW_SQL_BOOLEAN:
        puts_(o, v->u.boolean ? "TRUE" : "FALSE");
        return FBW_OK;
    case FBW_SQL_TYPE_DATE:
        return put_date(o, v->u.dt.date);
    case FBW_SQL_TYPE_TIME:
        return put_time(o, v->u.dt.time);
    case FBW_SQL_TIMESTAMP:
        if (put_date(o, v->u.dt.date) != FBW_OK)
            return FBW_E_BADVALUE;
        put(o, " ", 1);
        return put_time(o, v->u.dt.time);
    case FBW_SQL_TIME_TZ:
    case FBW_SQL_TIME_TZ_EX:
        return put_tz(o, v, 0, tz);
    case FBW_SQL_TIMESTAMP_TZ:
    case FBW_SQL_TIMESTAMP_TZ_EX:
        return put_tz(o, v, 1, tz);
    case FBW_SQL_BLOB:
    case FBW_SQL_ARRAY:
    case FBW_SQL_QUAD:
        snprintf(buf, sizeof buf, "%x:%x", v->u.quad.high, v->u.quad.low);
        puts_(o, buf);
        return FBW_OK;
    default:
        return FBW_E_BADVALUE;
    }
}

int fbw_value_to_text(const fbw_value *v, const fbw_col *c, const fbw_tznames *tz, fbw_buf *out,
                      fbw_err *err)
{
    out_ctx o = {out, FBW_OK};
    size_t start = out->len;
    /* An array value is an id whose contents need op_get_slice, which fbwire does not implement:
     * say so rather than print an id nobody can use. */
    if (c->type == FBW_SQL_ARRAY && !v->is_null)
        return fbw_err_set(err, FBW_E_UNSUPPORTED,
                           "ARRAY values are not supported by fbwire (array slices are not implemented)");
    int rc = format_value(&o, v, c, tz);
    if (rc == FBW_OK)
        rc = o.rc;
    if (rc != FBW_OK) {
        out->len = start;
        if (rc == FBW_E_NOMEM)
            return fbw_err_set(err, rc, "%s value: out of memory", type_name(c->type));
        return fbw_err_set(err, rc, "%s value out of range (date %d, time %u, zone %u)",
                           type_name(c->type), (int)v->u.dt.date, (unsigned)v->u.dt.time,
                           (unsigned)v->u.dt.zone);
    }
    return FBW_OK;
}

void fbw_msgfmt_tz_ex(fbw_msgfmt *f)
{
    for (uint16_t i = 0; i < f->n; i++) {
        fbw_col *c = &f->cols[i];
        if (c->type == FBW_SQL_TIME_TZ)
            c->type = FBW_SQL_TIME_TZ_EX;
        else if (c->type == FBW_SQL_TIMESTAMP_TZ)
            c->type = FBW_SQL_TIMESTAMP_TZ_EX;
        else
            continue;
        c->length = (uint16_t)fbw_msg_native_size(c);
    }
}

/* ---- parsing ---- */

/* A cursor over the input text; parsers set `why` on failure. */
typedef struct txt {
    const char *s;
    size_t n, i;
    const char *why;
} txt;

static int at_end(const txt *t) { return t->i >= t->n; }
static int peek(const txt *t) { return at_end(t) ? -1 : (unsigned char)t->s[t->i]; }
static int is_digit(int ch) { return ch >= '0' && ch <= '9'; }

static int lower(int ch) { return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch; }

static int ieq(const char *s, size_t n, const char *lit)
{
    if (strlen(lit) != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)s[i]) != lit[i])
            return 0;
    return 1;
}

static void trim(const char **s, size_t *n)
{
    while (*n > 0 && (**s == ' ' || **s == '\t'))
        (*s)++, (*n)--;
    while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* 1..maxd digits as an unsigned number; -1 when none. */
static long digits(txt *t, int maxd)
{
    long v = 0;
    int k = 0;
    while (k < maxd && is_digit(peek(t))) {
        v = v * 10 + (peek(t) - '0');
        t->i++;
        k++;
    }
    return k ? v : -1;
}

static int expect(txt *t, char ch)
{
    if (peek(t) != (unsigned char)ch)
        return 0;
    t->i++;
    return 1;
}

/* Exact numerics: value * 10^-scale rounded half away from zero, within the storage type. */
static int parse_exact(txt *t, const fbw_col *c, fbw_value *v)
{
    static const u128 zero = 0;
    const u128 umax = ~zero;
    int neg = 0, point = 0, seen = 0;
    long frac = 0, e = 0;
    if (peek(t) == '+' || peek(t) == '-')
        neg = t->s[t->i++] == '-';
    size_t mstart = t->i;
    for (; !at_end(t); t->i++) {
        int ch = peek(t);
        if (is_digit(ch)) {
            seen = 1;
            frac += point;
        } else if (ch == '.' && !point) {
            point = 1;
        } else {
            break;
        }
    }
    size_t mend = t->i;
    if (!seen)
        return t->why = "no digits", FBW_E_BADVALUE;
    if (peek(t) == 'e' || peek(t) == 'E') {
        int esign = 1;
        t->i++;
        if (peek(t) == '+' || peek(t) == '-')
            esign = t->s[t->i++] == '-' ? -1 : 1;
        if (!is_digit(peek(t)))
            return t->why = "exponent without digits", FBW_E_BADVALUE;
        while (is_digit(peek(t))) {
            if (e < 100000000L)
                e = e * 10 + (peek(t) - '0');
            t->i++;
        }
        e *= esign;
    }
    if (!at_end(t))
        return t->why = "unexpected character", FBW_E_BADVALUE;
    /* integer = D * 10^k, D the significant digits of the mantissa */
    long k = e - frac - c->scale, nd = 0;
    for (size_t i = mstart; i < mend; i++)
        if (is_digit((unsigned char)t->s[i]) && (nd > 0 || t->s[i] != '0'))
            nd++;
    long keep = k < 0 ? nd + k : nd, idx = 0;
    int dropped = 0;
    u128 acc = 0;
    for (size_t i = mstart; i < mend; i++) {
        int ch = (unsigned char)t->s[i];
        if (!is_digit(ch) || (idx == 0 && acc == 0 && ch == '0'))
            continue;
        if (idx < keep) {
            if (acc > (umax - 9) / 10)
                return t->why = "out of range", FBW_E_BADVALUE;
            acc = acc * 10 + (u128)(ch - '0');
        } else if (idx == keep) {
            dropped = ch - '0';
        }
        idx++;
    }
    if (dropped >= 5)
        acc++; /* cannot wrap: acc <= (umax - 9) / 10 */
    for (long j = 0; j < k && acc != 0; j++) {
        if (acc > umax / 10)
            return t->why = "out of range", FBW_E_BADVALUE;
        acc *= 10;
    }
    u128 limit = c->type == FBW_SQL_SHORT ? INT16_MAX
                 : c->type == FBW_SQL_LONG ? INT32_MAX
                 : c->type == FBW_SQL_INT64 ? INT64_MAX
                                            : umax >> 1;
    if (acc > limit + (u128)neg)
        return t->why = "out of range", FBW_E_BADVALUE;
    u128 bits = neg ? 0 - acc : acc;
    if (c->type == FBW_SQL_INT128) {
        v->u.i128.hi = (int64_t)(uint64_t)(bits >> 64);
        v->u.i128.lo = (uint64_t)bits;
    } else {
        v->u.i64 = (int64_t)(uint64_t)bits;
    }
    return FBW_OK;
}

static int parse_binary_float(txt *t, const fbw_col *c, fbw_value *v)
{
    char buf[512];
    size_t n = t->n - t->i;
    const char *s = t->s + t->i;
    int neg = n > 0 && s[0] == '-';
    size_t sk = n > 0 && (s[0] == '-' || s[0] == '+');
    double inf = neg ? -HUGE_VAL : HUGE_VAL;
    if (ieq(s + sk, n - sk, "infinity") || ieq(s + sk, n - sk, "inf")) {
        t->i = t->n;
        c->type == FBW_SQL_FLOAT ? (void)(v->u.f32 = (float)inf) : (void)(v->u.f64 = inf);
        return FBW_OK;
    }
    if (ieq(s + sk, n - sk, "nan")) {
        t->i = t->n;
        c->type == FBW_SQL_FLOAT ? (void)(v->u.f32 = NAN) : (void)(v->u.f64 = NAN);
        return FBW_OK;
    }
    /* Only decimal syntax: strtod would also take hex floats and "nan(...)". */
    for (size_t i = 0; i < n; i++)
        if (!is_digit((unsigned char)s[i]) && !strchr("+-.eE", s[i]))
            return t->why = "unexpected character", FBW_E_BADVALUE;
    if (n == 0 || n >= sizeof buf)
        return t->why = n ? "too long" : "empty", FBW_E_BADVALUE;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    if (c->type == FBW_SQL_FLOAT) {
        v->u.f32 = strtof(buf, &end);
        if (errno == ERANGE && isinf(v->u.f32))
            return t->why = "out of range", FBW_E_BADVALUE;
    } else {
        v->u.f64 = strtod(buf, &end);
        if (errno == ERANGE && isinf(v->u.f64))
            return t->why = "out of range", FBW_E_BADVALUE;
    }
    if (end != buf + n || end == buf)
        return t->why = "not a number", FBW_E_BADVALUE;
    t->i = t->n;
    return FBW_OK;
}

static int parse_date(txt *t, int32_t *date)
{
    long y = digits(t, 4), m, d;
    if (y < 1 || !expect(t, '-') || (m = digits(t, 2)) < 1 || m > 12 || !expect(t, '-') ||
        (d = digits(t, 2)) < 1 || d > days_in_month((int)y, (int)m))
        return t->why = "not a date YYYY-MM-DD in 0001-01-01..9999-12-31", FBW_E_BADVALUE;
    *date = fbw_date_from_ymd((int)y, (int)m, (int)d);
    return FBW_OK;
}

static int parse_time(txt *t, uint32_t *time)
{
    long h = digits(t, 2), m, s = 0, f = 0;
    if (h < 0 || h > 23 || !expect(t, ':') || (m = digits(t, 2)) < 0 || m > 59)
        return t->why = "not a time HH:MM[:SS[.ffff]]", FBW_E_BADVALUE;
    if (expect(t, ':')) {
        if ((s = digits(t, 2)) < 0 || s > 59)
            return t->why = "bad seconds", FBW_E_BADVALUE;
        if (expect(t, '.')) {
            int k = 0;
            if (!is_digit(peek(t)))
                return t->why = "bad fraction", FBW_E_BADVALUE;
            for (; is_digit(peek(t)); t->i++, k++)
                if (k < 4)
                    f = f * 10 + (peek(t) - '0');
            for (; k < 4; k++)
                f *= 10;
        }
    }
    *time = (uint32_t)(((h * 60 + m) * 60 + s) * 10000 + f);
    return FBW_OK;
}

static int parse_timestamp(txt *t, int32_t *date, uint32_t *time)
{
    int rc = parse_date(t, date);
    *time = 0;
    if (rc != FBW_OK || at_end(t))
        return rc;
    if (peek(t) == 'T' || peek(t) == 't') {
        t->i++;
    } else if (peek(t) == ' ') {
        while (peek(t) == ' ')
            t->i++;
        /* a date followed by a zone: the caller parses the zone */
        if (!is_digit(peek(t))) {
            while (t->i > 0 && t->s[t->i - 1] == ' ')
                t->i--;
            return FBW_OK;
        }
    } else {
        return t->why = "unexpected character after the date", FBW_E_BADVALUE;
    }
    return parse_time(t, time);
}

/* " +HH:MM", " -HH", " GMT": sets zone id and offset minutes. */
static int parse_zone(txt *t, uint16_t *zone, int *offset)
{
    if (!expect(t, ' '))
        return t->why = "missing time zone", FBW_E_BADVALUE;
    while (peek(t) == ' ')
        t->i++;
    if (peek(t) == '+' || peek(t) == '-') {
        int sign = t->s[t->i++] == '-' ? -1 : 1;
        long h = digits(t, 2), m = 0;
        if (h >= 0 && expect(t, ':'))
            m = digits(t, 2);
        if (h < 0 || m < 0 || m > 59 || h > 14 || (h == 14 && m != 0) || !at_end(t))
            return t->why = "bad time zone offset (want +HH:MM, at most 14:00)", FBW_E_BADVALUE;
        *offset = sign * (int)(h * 60 + m);
        *zone = (uint16_t)(*offset + ZONE_ONE_DAY);
        return FBW_OK;
    }
    if (ieq(t->s + t->i, t->n - t->i, "gmt")) {
        *offset = 0;
        *zone = ZONE_GMT;
        t->i = t->n;
        return FBW_OK;
    }
    t->why = "region time zones need the server's rules: bind the value as VARCHAR";
    return FBW_E_UNSUPPORTED;
}

static int parse_tz(txt *t, const fbw_col *c, fbw_value *v)
{
    int with_date = c->type == FBW_SQL_TIMESTAMP_TZ || c->type == FBW_SQL_TIMESTAMP_TZ_EX;
    int32_t date = 0;
    uint32_t time = 0;
    int offset = 0;
    int rc = with_date ? parse_timestamp(t, &date, &time) : parse_time(t, &time);
    if (rc == FBW_OK)
        rc = parse_zone(t, &v->u.dt.zone, &offset);
    if (rc != FBW_OK)
        return rc;
    /* The wire carries UTC. TIME WITH TIME ZONE wraps around midnight. */
    int64_t units = (int64_t)date * DAY_UNITS + time - (int64_t)offset * MINUTE_UNITS;
    int64_t day = units >= 0 ? units / DAY_UNITS : -((-units + DAY_UNITS - 1) / DAY_UNITS);
    if (with_date && (day < FBW_DATE_MIN || day > FBW_DATE_MAX))
        return t->why = "out of range in UTC", FBW_E_BADVALUE;
    v->u.dt.date = with_date ? (int32_t)day : 0;
    v->u.dt.time = (uint32_t)(units - day * DAY_UNITS);
    v->u.dt.offset = (int16_t)offset;
    v->u.dt.has_offset = 1;
    return FBW_OK;
}

static int parse_bytes(txt *t, const fbw_col *c, fbw_value *v)
{
    v->u.bytes.p = (const uint8_t *)t->s;
    v->u.bytes.n = t->n;
    if (c->charset == FBW_CS_OCTETS) {
        if (t->n % 2 != 0)
            return t->why = "odd number of hex digits", FBW_E_BADVALUE;
        for (size_t i = 0; i < t->n; i++)
            if (!strchr("0123456789abcdefABCDEF", t->s[i]) || t->s[i] == '\0')
                return t->why = "not a hex digit", FBW_E_BADVALUE;
        v->hex = 1;
    }
    size_t len = v->hex ? t->n / 2 : t->n;
    if (len > c->length)
        return t->why = "longer than the column", FBW_E_BADVALUE;
    t->i = t->n;
    return FBW_OK;
}

static int parse_quad(txt *t, fbw_value *v)
{
    unsigned long parts[2];
    for (int k = 0; k < 2; k++) {
        unsigned long x = 0;
        int nd = 0;
        for (; !at_end(t) && strchr("0123456789abcdefABCDEF", t->s[t->i]) && t->s[t->i]; t->i++) {
            if (++nd > 8)
                return t->why = "blob id part longer than 8 hex digits", FBW_E_BADVALUE;
            int ch = lower((unsigned char)t->s[t->i]);
            x = x * 16 + (unsigned long)(is_digit(ch) ? ch - '0' : ch - 'a' + 10);
        }
        if (!nd || (k == 0 && !expect(t, ':')))
            return t->why = "not a blob id high:low (hex)", FBW_E_BADVALUE;
        parts[k] = x;
    }
    v->u.quad.high = (uint32_t)parts[0];
    v->u.quad.low = (uint32_t)parts[1];
    return FBW_OK;
}

static int parse_value(txt *t, const fbw_col *c, fbw_value *v)
{
    switch (c->type) {
    case FBW_SQL_TEXT:
    case FBW_SQL_VARYING:
        return parse_bytes(t, c, v);
    case FBW_SQL_SHORT:
    case FBW_SQL_LONG:
    case FBW_SQL_INT64:
    case FBW_SQL_INT128:
        return parse_exact(t, c, v);
    case FBW_SQL_FLOAT:
    case FBW_SQL_DOUBLE:
    case FBW_SQL_D_FLOAT:
        return parse_binary_float(t, c, v);
    case FBW_SQL_BOOLEAN:
        if (ieq(t->s, t->n, "true") || ieq(t->s, t->n, "false")) {
            v->u.boolean = lower((unsigned char)t->s[0]) == 't';
            t->i = t->n;
            return FBW_OK;
        }
        return t->why = "not TRUE or FALSE", FBW_E_BADVALUE;
    case FBW_SQL_TYPE_DATE:
        return parse_date(t, &v->u.dt.date);
    case FBW_SQL_TYPE_TIME:
        return parse_time(t, &v->u.dt.time);
    case FBW_SQL_TIMESTAMP:
        return parse_timestamp(t, &v->u.dt.date, &v->u.dt.time);
    case FBW_SQL_TIME_TZ:
    case FBW_SQL_TIME_TZ_EX:
    case FBW_SQL_TIMESTAMP_TZ:
    case FBW_SQL_TIMESTAMP_TZ_EX:
        return parse_tz(t, c, v);
    case FBW_SQL_BLOB:
    case FBW_SQL_ARRAY:
    case FBW_SQL_QUAD:
        return parse_quad(t, v);
    default:
        t->why = "a column of this type accepts only NULL";
        return FBW_E_USAGE;
    }
}

int fbw_value_from_text(const fbw_col *c, const char *s, size_t n, fbw_value *v, fbw_err *err)
{
    memset(v, 0, sizeof *v);
    v->type = c->type;
    if (c->type == FBW_SQL_DEC16 || c->type == FBW_SQL_DEC34)
        return fbw_dec_from_text(s, n, c->type == FBW_SQL_DEC16 ? 8 : 16, v->u.dec, err);
    if (c->type != FBW_SQL_TEXT && c->type != FBW_SQL_VARYING)
        trim(&s, &n);
    txt t = {s, n, 0, NULL};
    int rc = parse_value(&t, c, v);
    if (rc == FBW_OK && !at_end(&t))
        rc = (t.why = "unexpected text after the value", FBW_E_BADVALUE);
    if (rc != FBW_OK)
        return fbw_err_set(err, rc, "%s: %s in \"%.*s\"", type_name(c->type),
                           t.why ? t.why : "bad value", (int)(n > 60 ? 60 : n), s);
    return FBW_OK;
}
