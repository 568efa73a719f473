/* SPDX-License-Identifier: MIT */
/* compact.c - compact message formats: fixed-length text asked for and sent as VARCHAR.
 *
 * Why: a message's format is the client's to choose and the server converts (the BLR of op_execute,
 * op_execute2 and the first op_fetch). A CHAR(n) column described in UTF8 is 4n bytes wide and
 * travels space-padded to all of them, while the same value as VARCHAR of the same character set
 * and byte length travels at its length (docs/protocol/messages.md §6). The application still sees
 * the described format: rows are expanded back here, padded as the engine pads a CHAR (spaces, zero
 * bytes for OCTETS), so a value is the same byte for byte in both formats. */
#include "msg.h"

#include <string.h>

int fbw_row_format_parse(const char *s, int *format)
{
    if (s && strcmp(s, "compact") == 0)
        *format = FBW_ROW_FORMAT_COMPACT;
    else if (s && strcmp(s, "described") == 0)
        *format = FBW_ROW_FORMAT_DESCRIBED;
    else
        return FBW_E_USAGE;
    return FBW_OK;
}

const char *fbw_row_format_name(int format)
{
    return format == FBW_ROW_FORMAT_DESCRIBED ? "described" : "compact";
}

/* Most bytes one character takes in a character set (Firebird's intlnames: the multi-byte sets);
 * every other set takes one. */
static unsigned max_bytes_per_char(uint16_t charset)
{
    switch (charset) {
    case 3:  /* UNICODE_FSS */
        return 3;
    case FBW_CS_UTF8:
    case 69: /* GB18030 */
        return 4;
    case 5:  /* SJIS_0208 */
    case 6:  /* EUCJ_0208 */
    case 44: /* KSC_5601 */
    case 56: /* BIG_5 */
    case 57: /* GB_2312 */
    case 67: /* GBK */
    case 68: /* CP943C */
        return 2;
    default:
        return 1;
    }
}

static size_t xdr_round(size_t n) { return (n + 3) & ~(size_t)3; }

/* Which columns change: a CHAR whose VARCHAR form is smaller for a value of single-byte characters
 * (a 4-byte length, then the characters, to a multiple of 4) than its described width. A CHAR of a
 * single-byte set would grow by the length word when its values fill it, and a UTF8 CHAR(1) or
 * CHAR(2) saves nothing, so those stay as described. Longer than a VARCHAR can be: stays too. */
static int compactable(const fbw_col *c)
{
    if (c->type != FBW_SQL_TEXT || c->length > FBW_MSG_MAX_COMPACT)
        return 0;
    unsigned k = max_bytes_per_char(c->charset);
    return k > 1 && 4 + xdr_round(c->length / k) < xdr_round(c->length);
}

uint16_t fbw_msgfmt_compact(const fbw_msgfmt *described, fbw_msgfmt *wire)
{
    uint16_t changed = 0;
    wire->n = described->n <= wire->cap ? described->n : 0;
    for (uint16_t i = 0; i < wire->n; i++) {
        wire->cols[i] = described->cols[i];
        if (compactable(&described->cols[i])) {
            wire->cols[i].type = FBW_SQL_VARYING;
            changed++;
        }
    }
    return changed;
}

/* The bytes a CHAR value is padded with, as the engine pads it. */
static uint8_t pad_byte(const fbw_col *c) { return c->charset == FBW_CS_OCTETS ? 0 : ' '; }

void fbw_values_compact(const fbw_msgfmt *described, const fbw_msgfmt *wire, const fbw_value *in,
                        fbw_value *out)
{
    for (uint16_t i = 0; i < described->n; i++) {
        out[i] = in[i];
        if (wire->cols[i].type != FBW_SQL_VARYING || described->cols[i].type != FBW_SQL_TEXT)
            continue;
        if (in[i].is_null || in[i].type != FBW_SQL_TEXT)
            continue; /* a NULL, or a wrong type: fbw_msg_encode says which field */
        out[i].type = FBW_SQL_VARYING;
        if (in[i].hex)
            continue; /* hex digits: a trailing "00" is two digits, not padding */
        /* The server pads a CHAR again, so trailing padding need not travel. */
        uint8_t pad = pad_byte(&described->cols[i]);
        while (out[i].u.bytes.n > 0 && out[i].u.bytes.p[out[i].u.bytes.n - 1] == pad)
            out[i].u.bytes.n--;
    }
}

int fbw_msg_expand(fbw_bytes raw, const fbw_msgfmt *wire, const fbw_msgfmt *described,
                   int protocol, fbw_value *scratch, fbw_buf *out, fbw_err *err)
{
    if (wire->n != described->n)
        return fbw_err_set(err, FBW_E_USAGE, "message: %u fields received, %u described", wire->n,
                           described->n);
    int rc = fbw_msg_decode(raw, wire, protocol, scratch, err);
    if (rc)
        return rc;
    for (uint16_t i = 0; i < wire->n; i++) {
        const fbw_col *d = &described->cols[i];
        if (scratch[i].is_null || wire->cols[i].type == d->type)
            continue;
        if (wire->cols[i].type != FBW_SQL_VARYING || d->type != FBW_SQL_TEXT)
            return fbw_err_set(err, FBW_E_USAGE, "message: field %u: type %u received for a %u "
                               "column, which is not a compact form", i, wire->cols[i].type, d->type);
        scratch[i].type = FBW_SQL_TEXT; /* padded to the column's length by the encoder */
    }
    size_t mark = out->len;
    fbw_wr w;
    fbw_wr_init(&w, out);
    rc = fbw_msg_encode(&w, described, protocol, scratch, err);
    if (rc)
        out->len = mark; /* nothing of a message that failed */
    return rc;
}
