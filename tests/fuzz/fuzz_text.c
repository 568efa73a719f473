/* SPDX-License-Identifier: MIT */
/* fuzz_text.c - libFuzzer target for fbwire's text decoders: what a user types, a script holds or
 * a capture carries as SQL or as a value, and the key log's lines. The first byte picks the
 * decoder, the next ones its settings, the rest is the text:
 *   0  the SQL tokenizer (wire/sqltok.c): every raw token, then every significant one, with a
 *      terminator (isql's SET TERM) taken from the text itself; tokens must tile the text
 *   1  statement kinds and INSERT's VALUES (wire/sqlkind.c)
 *   2  a key log line (wire/keylog.c); a parsed line must format and parse back to the same entry
 *   3  a value for a column of the type, scale and length the settings give (wire/value.c); a
 *      parsed value must print (fbw_value_to_text)
 *   4  DECFLOAT(16) and DECFLOAT(34) text (wire/decfloat.c)
 *   5  the statement fingerprint of fbwire-pcap replay (tools/fbwire-pcap/fpstats.c)
 * Everything must end in a result or a clean error; ASan/UBSan catch the rest and abort() marks a
 * broken invariant. */
#include "fpstats.h"
#include "keylog.h"
#include "sqlkind.h"
#include "sqltok.h"
#include "value.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void tokens(const char *s, size_t n, uint8_t setting)
{
    fbw_sqltok t;
    fbw_sqltok_init(&t, s, n);
    size_t pos = 0;
    for (fbw_tok k = fbw_sqltok_raw(&t); k.kind != FBW_TOK_END; k = fbw_sqltok_raw(&t)) {
        if (k.b != pos || k.e <= k.b || k.e > n)
            abort(); /* raw tokens cover the text, in order, without gaps or empty tokens */
        pos = k.e;
    }
    if (pos != n)
        abort();
    fbw_sqltok_init(&t, s, n);
    size_t term_len = (size_t)(setting % 4);
    if (term_len && term_len <= n)
        fbw_sqltok_set_term(&t, s, term_len); /* the text's own first bytes as terminator */
    size_t last = 0;
    for (fbw_tok k = fbw_sqltok_next(&t); k.kind != FBW_TOK_END; k = fbw_sqltok_next(&t)) {
        if (k.b < last || k.e > n || k.kind == FBW_TOK_SPACE || k.kind == FBW_TOK_COMMENT)
            abort();
        last = k.e;
        (void)fbw_sqltok_peek(&t);
        (void)fbw_tok_is(&t, &k, "select");
        (void)fbw_tok_is_char(&t, &k, ';');
    }
    if (!fbw_sqltok_at_end(&t))
        abort();
}

static void kinds(const char *s, size_t n)
{
    size_t body = 0, b = 0, e = 0;
    (void)fbw_sql_stmt_kind(s, n, &body);
    if (body > n)
        abort();
    if (fbw_sql_find_values(s, n, &b, &e) && (b >= e || e > n))
        abort();
}

static void keylog_line(const char *s, size_t n)
{
    fbw_keylog_entry e, back;
    fbw_err err;
    if (fbw_keylog_parse(s, n, &e, &err) != FBW_OK || e.key_len == 0)
        return; /* malformed, or a comment or empty line */
    char line[FBW_KEYLOG_LINE_MAX];
    size_t len = fbw_keylog_format(&e, line, sizeof line);
    if (len == 0)
        return; /* a field that parses but cannot be written back (a space, say) */
    if (fbw_keylog_parse(line, len, &back, &err) != FBW_OK || back.key_len != e.key_len ||
        back.iv_len != e.iv_len || memcmp(back.key, e.key, e.key_len) != 0 || memcmp(back.iv, e.iv, e.iv_len) != 0 ||
        strcmp(back.plugin, e.plugin) != 0 || strcmp(back.client, e.client) != 0 ||
        strcmp(back.server, e.server) != 0)
        abort();
}

static const uint16_t value_types[] = {
    FBW_SQL_VARYING, FBW_SQL_TEXT,    FBW_SQL_DOUBLE,     FBW_SQL_FLOAT,          FBW_SQL_LONG,
    FBW_SQL_SHORT,   FBW_SQL_TIMESTAMP, FBW_SQL_BLOB,     FBW_SQL_QUAD,           FBW_SQL_TYPE_TIME,
    FBW_SQL_TYPE_DATE, FBW_SQL_INT64, FBW_SQL_TIMESTAMP_TZ_EX, FBW_SQL_TIME_TZ_EX, FBW_SQL_INT128,
    FBW_SQL_TIMESTAMP_TZ, FBW_SQL_TIME_TZ, FBW_SQL_DEC16, FBW_SQL_DEC34,         FBW_SQL_BOOLEAN,
    FBW_SQL_NULL,
};

static void value(const char *s, size_t n, uint8_t type_byte, uint8_t shape)
{
    fbw_col c = {0};
    c.type = value_types[type_byte % (sizeof value_types / sizeof value_types[0])];
    c.nullable = 1;
    if (c.type == FBW_SQL_TEXT || c.type == FBW_SQL_VARYING) {
        c.length = (uint16_t)(shape * 4u);
        c.charset = (uint16_t)(shape % 2 ? 4 : 0); /* UTF8 or NONE */
    } else {
        c.length = (uint16_t)fbw_msg_native_size(&c);
        if (c.type == FBW_SQL_SHORT || c.type == FBW_SQL_LONG || c.type == FBW_SQL_INT64 || c.type == FBW_SQL_INT128)
            c.scale = (int16_t)-(shape % 40); /* NUMERIC(p, 0..39): larger than any real scale */
    }
    fbw_value v;
    fbw_err err;
    if (fbw_value_from_text(&c, s, n, &v, &err) != FBW_OK)
        return;
    fbw_buf out;
    fbw_buf_init(&out);
    if (fbw_value_to_text(&v, &c, NULL, &out, &err) == FBW_E_NOMEM)
        abort();
    fbw_buf_free(&out);
}

static void decfloat(const char *s, size_t n)
{
    uint8_t be[16];
    char text[FBW_DEC_TEXT_MAX];
    fbw_err err;
    for (size_t bytes = 8; bytes <= 16; bytes += 8)
        if (fbw_dec_from_text(s, n, bytes, be, &err) == FBW_OK && fbw_dec_to_text(be, bytes, text) >= FBW_DEC_TEXT_MAX)
            abort();
}

static void fingerprint(const char *s, size_t n)
{
    fbw_buf out;
    fbw_buf_init(&out);
    pcaptool_fingerprint(s, n, &out);
    if (fbw_buf_avail(&out) > n + 1)
        abort(); /* never longer than the statement (each literal becomes one ?) */
    fbw_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    uint8_t which = data[0], a = data[1], b = data[2];
    size_t n = size - 3;
    /* A copy of exactly n bytes, so ASan sees a read past the text. */
    char *s = malloc(n ? n : 1);
    if (!s)
        return 0;
    memcpy(s, data + 3, n);
    switch (which % 6) {
    case 0: tokens(s, n, a); break;
    case 1: kinds(s, n); break;
    case 2: keylog_line(s, n); break;
    case 3: value(s, n, a, b); break;
    case 4: decfloat(s, n); break;
    default: fingerprint(s, n); break;
    }
    free(s);
    return 0;
}
