/* SPDX-License-Identifier: MIT */
/* msg.h - message formats (the fields a BLR message describes), BLR build and parse, and the XDR
 * framing, decoding and encoding of one message: a fetched row or a set of input parameters.
 *
 * Pure codecs: no connection state, no I/O. BLR parse, framing and decoding never allocate;
 * decoded values are views into the raw message bytes. Conversion of values to and from text is
 * in value.h. Facts: docs/protocol/messages.md; Firebird src/remote/parser.cpp,
 * src/remote/protocol.cpp (xdr_message, xdr_packed_message), src/common/xdr.cpp (xdr_datum). */
#ifndef FBW_MSG_H
#define FBW_MSG_H

#include "buf.h"
#include "err.h"
#include "xdr.h"

#include <stddef.h>
#include <stdint.h>

/* SQL type codes of sqlda_pub.h (without the +1 "nullable" bit). */
enum {
    FBW_SQL_VARYING = 448,
    FBW_SQL_TEXT = 452,
    FBW_SQL_DOUBLE = 480,
    FBW_SQL_FLOAT = 482,
    FBW_SQL_LONG = 496,
    FBW_SQL_SHORT = 500,
    FBW_SQL_TIMESTAMP = 510,
    FBW_SQL_BLOB = 520,
    FBW_SQL_D_FLOAT = 530,
    FBW_SQL_ARRAY = 540,
    FBW_SQL_QUAD = 550,
    FBW_SQL_TYPE_TIME = 560,
    FBW_SQL_TYPE_DATE = 570,
    FBW_SQL_INT64 = 580,
    FBW_SQL_TIMESTAMP_TZ_EX = 32748,
    FBW_SQL_TIME_TZ_EX = 32750,
    FBW_SQL_INT128 = 32752,
    FBW_SQL_TIMESTAMP_TZ = 32754,
    FBW_SQL_TIME_TZ = 32756,
    FBW_SQL_DEC16 = 32760,
    FBW_SQL_DEC34 = 32762,
    FBW_SQL_BOOLEAN = 32764,
    FBW_SQL_NULL = 32766,
};

/* Character set ids used by the codecs (Firebird's intlnames). 127 is what a BLR without a charset
 * (blr_text, blr_varying) means: the attachment charset ("CS_dynamic"). */
enum { FBW_CS_NONE = 0, FBW_CS_OCTETS = 1, FBW_CS_UTF8 = 4, FBW_CS_DYNAMIC = 127 };

/* Most fields a message can have: the BLR count is a u16 holding 2 descriptors per field
 * (value + NULL indicator), and fbclient asserts count < 65535 / 2 (BlrFromMessage.cpp). */
#define FBW_MSG_MAX_COLS 32767
/* Longest CHAR / VARCHAR: BLR lengths are u16, and a VARCHAR's native size (2 + len) must fit too. */
#define FBW_MSG_MAX_TEXT 65535
#define FBW_MSG_MAX_VARYING 65533
/* Longest CHAR asked for as VARCHAR in compact formats: Firebird's longest VARCHAR column. */
#define FBW_MSG_MAX_COMPACT 32765

/* One field of a message. */
typedef struct fbw_col {
    uint16_t type;    /* FBW_SQL_*, never with the nullable bit */
    int16_t scale;    /* exact numerics: value = integer * 10^scale (NUMERIC(9,2) -> -2); else 0 */
    int16_t subtype;  /* BLOB subtype; exact numerics 1 NUMERIC / 2 DECIMAL (informational) */
    uint16_t charset; /* CHAR, VARCHAR, BLOB: charset id (FBW_CS_*); else 0 */
    uint16_t length;  /* CHAR/VARCHAR: max bytes (VARCHAR without its 2-byte prefix); SQL_NULL: 0;
                       * other types: their native size (fbw_msg_native_size) */
    uint8_t nullable; /* from describe; BLR does not carry it (parse sets 1). Informational only */
} fbw_col;

/* A message format: `n` columns in caller-owned storage of `cap` entries. */
typedef struct fbw_msgfmt {
    fbw_col *cols;
    uint16_t n;
    uint16_t cap;
} fbw_msgfmt;

/* A 128-bit two's-complement integer as two halves (INT128 values). */
typedef struct fbw_i128 {
    int64_t hi;
    uint64_t lo;
} fbw_i128;

/* One decoded field. `type` repeats the column type so a value can be checked against the column
 * it is encoded for; the union member in use follows from it:
 *   SHORT, LONG, INT64 -> i64 (unscaled integer; the column's scale applies)   INT128 -> i128
 *   FLOAT -> f32   DOUBLE, D_FLOAT -> f64   BOOLEAN -> boolean (0/1)
 *   TEXT, VARYING -> bytes (view; CHAR keeps its padding). When `hex` is set (only from
 *     fbw_value_from_text for OCTETS columns) the view holds hex digits that encode as bytes.
 *   DATE -> dt.date   TIME -> dt.time   TIMESTAMP -> dt.date + dt.time
 *   TIME_TZ(_EX), TIMESTAMP_TZ(_EX) -> dt (UTC) + dt.zone; dt.offset (minutes) valid when
 *     dt.has_offset (always for _EX types, from the wire; set by decode for offset zones and GMT)
 *   DEC16, DEC34 -> dec: IEEE 754 decimal64/decimal128 in DPD, big-endian (8 or 16 bytes used)
 *   BLOB, ARRAY, QUAD -> quad (blob id; (0,0) is the null blob)
 *   SQL_NULL -> nothing (always null) */
typedef struct fbw_value {
    uint16_t type;
    uint8_t is_null;
    uint8_t hex;
    union {
        int64_t i64;
        fbw_i128 i128;
        float f32;
        double f64;
        int boolean;
        fbw_bytes bytes;
        struct {
            int32_t date;   /* days since 1858-11-17 */
            uint32_t time;  /* 1/10000 s since midnight */
            uint16_t zone;  /* Firebird zone id (TimeZoneUtil): offset zones 0..2878, regions up */
            int16_t offset; /* minutes east of UTC (ext_offset) */
            uint8_t has_offset;
        } dt;
        uint8_t dec[16];
        struct {
            uint32_t high, low;
        } quad;
    } u;
} fbw_value;

/* ---- in blr.c ---- */

/* Native size of a column in a message (sqlTypeToDsc): CHAR len, VARCHAR len + 2, INT64 8... */
FBW_API size_t fbw_msg_native_size(const fbw_col *c);
/* Message length as the engine lays it out (docs/protocol/messages.md §3), needed for
 * op_batch_create. Returns 0 for an empty format. */
FBW_API size_t fbw_msg_length(const fbw_msgfmt *f);

/* Append the message BLR for `f` to `out`, as fbclient's BlrFromMessage writes it: blr_version5
 * (blr_version4 when dialect <= 1), blr_begin, blr_message 0 count, per field its type and
 * blr_short 0, blr_end, blr_eoc. An empty format appends nothing (fbclient sends an empty BLR).
 * `protocol` picks blr_blob2 (>= 12) or blr_quad for BLOB columns.
 * Returns FBW_OK, FBW_E_USAGE (unknown type, bad length, too many columns; message in err),
 * FBW_E_NOMEM. */
FBW_API int fbw_blr_build(const fbw_msgfmt *f, int protocol, int dialect, fbw_buf *out, fbw_err *err);

/* Number of fields of the message BLR in blr[0..n) (0 for an empty BLR), so the caller can size
 * the column storage before fbw_blr_parse. Returns FBW_OK or FBW_E_BADVALUE. */
FBW_API int fbw_blr_count(const uint8_t *blr, size_t n, uint16_t *count, fbw_err *err);

/* Parse a message BLR (every form fbclient and Jaybird send: text/text2, varying/varying2,
 * short/long/int64/int128 with scale, float, double, d_float, dec64/dec128, sql_date, sql_time,
 * timestamp, the four TZ forms, bool, blob2, quad) into f->cols (f->cap entries). Each field must
 * be followed by its blr_short NULL indicator. An empty BLR gives n = 0. Bounds-checked; any
 * malformation returns FBW_E_BADVALUE naming the byte and its offset; more fields than f->cap
 * returns FBW_E_USAGE. */
FBW_API int fbw_blr_parse(const uint8_t *blr, size_t n, fbw_msgfmt *f, fbw_err *err);

/* A message a request's BLR declares (op_compile, op_transact): its number, field count and
 * where its fields start in the BLR. */
typedef struct fbw_blr_msgdecl {
    uint8_t number;
    uint16_t fields;
    size_t offset;
} fbw_blr_msgdecl;
/* Most messages one request declares: the message number is one byte. */
#define FBW_BLR_MAX_MESSAGES 256

/* Walk a request's BLR (blr_version4/5, blr_begin, then the blr_message declarations that open
 * it, as Firebird's remote layer reads them; the first other verb ends the walk and nothing after
 * it is read) and list its messages in out[0..*count) (cap entries). Fields are those of a message
 * BLR plus blr_cstring/blr_cstring2 (NUL-terminated strings of precompiled programs), which travel
 * as a VARCHAR of length - 1. Request messages carry no NULL indicators of their own: every field
 * is one column. Bounds-checked: FBW_E_BADVALUE "request BLR not understood at offset N: ...",
 * FBW_E_USAGE when more than cap messages are declared. */
FBW_API int fbw_blr_request_scan(const uint8_t *blr, size_t n, fbw_blr_msgdecl *out, unsigned cap,
                                 unsigned *count, fbw_err *err);
/* The fields of message m (from fbw_blr_request_scan on the same BLR) into f (m->fields <= f->cap,
 * else FBW_E_USAGE). */
FBW_API int fbw_blr_request_fields(const uint8_t *blr, size_t n, const fbw_blr_msgdecl *m,
                                   fbw_msgfmt *f, fbw_err *err);

/* ---- in sdl.c ---- */

/* The element of an array slice from its SDL (isc_sdl_version1, then the relation, field and
 * isc_sdl_struct declarations; the subscript program after them is not read), as xdr_slice puts
 * elements on the wire: CHAR for text; every counted string (blr_cstring, blr_varying) a C string,
 * here a VARCHAR of its size - 1. FBW_E_BADVALUE "SDL not understood at offset N: ..." otherwise. */
FBW_API int fbw_sdl_element(const uint8_t *sdl, size_t n, fbw_col *elem, fbw_err *err);
/* The element's size in the slice buffer (its native size; a VARCHAR element: length + 1): the
 * slice length divided by it is the number of elements on the wire. */
FBW_API size_t fbw_slice_stride(const fbw_col *c);

/* ---- in row.c ---- */

/* Walk one message at the reader position without decoding it, and return its bytes in *raw.
 * protocol >= 13: NULL bitmap (opaque, ceil(n/8) bytes padded to 4), then the non-NULL fields;
 * protocol < 13: every field followed by its xdr_short NULL indicator.
 * On a shortfall returns r->short_rc (FBW_AGAIN on a growing stream) with the reader's position
 * unspecified: restart from the saved position once more bytes arrived. A VARCHAR longer than its
 * declared length returns FBW_E_PROTO (framing cannot be trusted). No allocation. */
FBW_API int fbw_msg_frame(fbw_rd *r, const fbw_msgfmt *f, int protocol, fbw_bytes *raw);

/* A message of a BLR request (op_send, op_transact): xdr_message with the request's own format,
 * every field in order and no NULL bitmap or indicators, at any protocol. Same contract as
 * fbw_msg_frame / fbw_msg_decode otherwise; decoded values are never NULL. */
int fbw_msg_frame_plain(fbw_rd *r, const fbw_msgfmt *f, fbw_bytes *raw);
FBW_API int fbw_msg_decode_plain(fbw_bytes raw, const fbw_msgfmt *f, fbw_value *values,
                                 fbw_err *err);

/* Decode one message framed by fbw_msg_frame into values[0..f->n). Views in values point into
 * raw. Returns FBW_OK, FBW_E_PROTO (raw does not hold exactly one message). */
FBW_API int fbw_msg_decode(fbw_bytes raw, const fbw_msgfmt *f, int protocol, fbw_value *values,
                   fbw_err *err);

/* Append one message with values[0..f->n) to w. A non-NULL value must have its column's type
 * (FBW_E_USAGE otherwise). CHAR values shorter than the column are padded (spaces; zero bytes for
 * OCTETS); longer CHAR/VARCHAR values return FBW_E_BADVALUE. NULL fields are omitted from packed
 * messages and sent as zeros with indicator -1 in unpacked ones. Returns FBW_OK, FBW_E_USAGE,
 * FBW_E_BADVALUE, FBW_E_NOMEM (w->rc). */
FBW_API int fbw_msg_encode(fbw_wr *w, const fbw_msgfmt *f, int protocol, const fbw_value *values,
                   fbw_err *err);

/* ---- in compact.c ---- */

/* Row and parameter formats a connection asks for (fbw_conn_opts.row_format):
 *   COMPACT (default): CHAR columns and parameters of multi-byte sets travel as VARCHAR of the same
 *     character set and byte length (fbw_msgfmt_compact says which), so a value costs its length,
 *     not its declared width (a UTF8 CHAR(120) of 120 ASCII characters: 124 bytes, not 480). What the program sees is unchanged: formats and
 *     values are those described, CHAR values padded as Firebird pads them.
 *   DESCRIBED: the formats as the server describes them, as fbclient sends them. */
enum { FBW_ROW_FORMAT_COMPACT = 0, FBW_ROW_FORMAT_DESCRIBED = 1 };
/* "compact" / "described" to FBW_ROW_FORMAT_*: FBW_OK, or FBW_E_USAGE for anything else. */
FBW_API int fbw_row_format_parse(const char *s, int *format);
FBW_API const char *fbw_row_format_name(int format);

/* The compact form of `described` into wire->cols (wire->cap >= described->n, else wire->n = 0): a
 * CHAR becomes VARCHAR of the same byte length and character set where that is smaller for a value
 * of single-byte characters: a multi-byte set (UTF8, UNICODE_FSS, the East Asian sets) and a width
 * of at least 3 characters (UTF8), at most FBW_MSG_MAX_COMPACT bytes. CHARs of single-byte sets
 * (NONE, OCTETS, WIN1252 on a WIN1252 connection) stay: a value that fills one would cost 4 bytes
 * more. Every other column is copied. Returns how many columns changed (0: the formats are the
 * same). */
FBW_API uint16_t fbw_msgfmt_compact(const fbw_msgfmt *described, fbw_msgfmt *wire);

/* Values of `described` as values of its compact form `wire` into out[0..n) (out may be in): CHAR
 * values become VARCHAR without their trailing padding (spaces; zero bytes for OCTETS), which the
 * server adds again. Views are shared with in. Other values are copied. */
FBW_API void fbw_values_compact(const fbw_msgfmt *described, const fbw_msgfmt *wire,
                                const fbw_value *in, fbw_value *out);

/* One message framed in the compact format `wire` (fbw_msg_frame), appended to out in the
 * `described` format: each VARCHAR of a CHAR column padded to the column's length as Firebird pads
 * a CHAR. scratch holds described->n values. Returns FBW_OK, FBW_E_PROTO (raw is not one message),
 * FBW_E_USAGE (the formats are not a described format and its compact form), FBW_E_BADVALUE (a value
 * longer than its column), FBW_E_NOMEM. */
FBW_API int fbw_msg_expand(fbw_bytes raw, const fbw_msgfmt *wire, const fbw_msgfmt *described,
                           int protocol, fbw_value *scratch, fbw_buf *out, fbw_err *err);

#endif
