/* SPDX-License-Identifier: MIT */
/* value.h - Firebird SQL values to and from canonical text, plus the date and DECFLOAT codecs
 * behind it. Pure functions: no I/O, no connection state, no static mutable state. Formatting
 * appends to an fbw_buf (the only allocation); parsing never allocates. Blob contents and
 * time-zone rules are not here: callers fetch blobs and look zone names up themselves.
 *
 * CANONICAL TEXT (docs/tools.md copies this block)
 *   NULL                 NULL (formatting only; parsing never yields NULL: set is_null instead)
 *   SMALLINT, INTEGER, BIGINT, INT128, NUMERIC/DECIMAL
 *                        exact decimal, never via double: scale -4 and 12345678 -> 1234.5678,
 *                        -5 at scale -2 -> -0.05, 0 at scale -2 -> 0.00, scale 0 -> 42.
 *                        Parsing accepts [+-]digits[.digits][E[+-]digits]; digits beyond the
 *                        column's scale are rounded half away from zero on the first dropped digit
 *                        (Firebird cvt.cpp adjustForScale); a result outside the storage type
 *                        (INT16/32/64/128) is FBW_E_BADVALUE.
 *   FLOAT, DOUBLE PRECISION
 *                        the fewest significant digits that read back to the same bits; plain
 *                        notation when the decimal exponent is -5..16 (0.1, 100, 0.00001, -0),
 *                        else printf's %e form (1e+20, 5e-324, 1.7976931348623157e+308);
 *                        NaN, Infinity, -Infinity. Parsing takes decimal text and those words.
 *                        Assumes LC_NUMERIC is "C" (the default when nobody calls setlocale).
 *   DECFLOAT(16)/(34)    IEEE 754 decimal64/decimal128, DPD encoding (what Firebird's decNumber
 *                        uses and sends); text is the General Decimal Arithmetic
 *                        to-scientific-string (same as Firebird and Python's str(Decimal)):
 *                        1.23, 1.23E+5, 1E-398, -0, Infinity, -Infinity, NaN, sNaN, NaN123.
 *                        Parsing rounds half up (Firebird's default DECFLOAT ROUND) to 16/34
 *                        digits; overflow is FBW_E_BADVALUE, underflow rounds to subnormal/0.
 *   DATE                 YYYY-MM-DD, years 0001..9999 (others are FBW_E_BADVALUE)
 *   TIME                 HH:MM:SS.ffff (always 4 fraction digits: Firebird's 1/10000 s).
 *                        Parsing accepts HH:MM, HH:MM:SS, HH:MM:SS.f..; digits past 4 are cut.
 *   TIMESTAMP            YYYY-MM-DD HH:MM:SS.ffff (parsing also takes 'T' or a bare date)
 *   TIME/TIMESTAMP WITH TIME ZONE
 *                        local time in the value's zone, a space, the zone:
 *                        offset zones "+05:30"/"-03:00", GMT "GMT", regions by name through the
 *                        fbw_tznames callback (the statement layer loads RDB$TIME_ZONES).
 *                        The wire carries UTC + zone id; the local time of a region needs its
 *                        rules, which only the _EX types carry (the server adds the offset):
 *                        request them (fbw_msgfmt_tz_ex). Without an offset (plain TZ type,
 *                        region zone) the text is the UTC time followed by "+00:00": the same
 *                        instant, the region is lost. With an offset but no name, the offset
 *                        replaces the name. Parsing accepts offsets and GMT; region names give
 *                        FBW_E_UNSUPPORTED (bind such values as VARCHAR and let the server convert).
 *   BOOLEAN              TRUE / FALSE (parsing: either case, surrounding spaces ignored)
 *   CHAR, VARCHAR        the bytes as they are (connection charset, UTF-8); CHAR keeps its
 *                        trailing spaces. Charset OCTETS: uppercase hex, two digits per byte
 *                        (parsing: hex digits of either case).
 *   BLOB, ARRAY, QUAD    the id as isql shows it: high:low in lowercase hex ("1a:2"); contents
 *                        are fetched separately by the statement layer.
 */
#ifndef FBW_VALUE_H
#define FBW_VALUE_H

#include "msg.h"

#include <stddef.h>
#include <stdint.h>

/* Region time-zone names: name(ctx, id) returns the zone's name or NULL when unknown. The
 * returned pointer must stay valid during the call that asked for it. */
typedef struct fbw_tznames {
    const char *(*name)(void *ctx, uint16_t id);
    void *ctx;
} fbw_tznames;

/* Append the canonical text of v (a value of column c) to out, without a terminating NUL.
 * tz may be NULL. Returns FBW_OK, FBW_E_BADVALUE (date/time out of range, bad zone, unknown
 * type; message in err), FBW_E_NOMEM. */
FBW_API int fbw_value_to_text(const fbw_value *v, const fbw_col *c, const fbw_tznames *tz, fbw_buf *out,
                      fbw_err *err);

/* Parse s[0..n) for column c into *v (type = c->type, not NULL). CHAR/VARCHAR values are views
 * into s, so s must outlive v. Returns FBW_OK, FBW_E_BADVALUE (syntax, range, too long; message
 * names the column type and what is wrong), FBW_E_UNSUPPORTED (region time zone), FBW_E_USAGE
 * (SQL_NULL column, unknown type). */
FBW_API int fbw_value_from_text(const fbw_col *c, const char *s, size_t n, fbw_value *v, fbw_err *err);

/* Switch TIME/TIMESTAMP WITH TIME ZONE columns to their _EX forms, so rows carry the offset
 * that region zones need for local time. For output formats before building the fetch BLR. */
FBW_API void fbw_msgfmt_tz_ex(fbw_msgfmt *f);

/* ---- dates: Firebird counts days from 1858-11-17 and time in 1/10000 s ---- */
#define FBW_DATE_MIN (-678575)          /* 0001-01-01 */
#define FBW_DATE_MAX 2973483            /* 9999-12-31 */
#define FBW_TIME_PER_DAY 864000000u     /* 24 h in 1/10000 s */
FBW_API int32_t fbw_date_from_ymd(int y, int m, int d);
FBW_API void fbw_date_to_ymd(int32_t date, int *y, int *m, int *d);

/* ---- DECFLOAT (in decfloat.c): bytes are DPD, big-endian, 8 (decimal64) or 16 (decimal128) ---- */
#define FBW_DEC_TEXT_MAX 64 /* longest text plus NUL */
/* Writes the to-scientific-string text and a NUL into out[FBW_DEC_TEXT_MAX]; returns its length. */
FBW_API size_t fbw_dec_to_text(const uint8_t *be, size_t nbytes, char *out);
/* Parse s[0..n) into be[nbytes]. Returns FBW_OK or FBW_E_BADVALUE (syntax, overflow, payload). */
FBW_API int fbw_dec_from_text(const char *s, size_t n, size_t nbytes, uint8_t *be, fbw_err *err);

#endif
