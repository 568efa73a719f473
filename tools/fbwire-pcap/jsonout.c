/* SPDX-License-Identifier: MIT */
/* jsonout.c - JSON values of fbwire-pcap's reports (jsonout.h). */
#include "jsonout.h"

#include "buf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t pcaptool_utf8_len(const uint8_t *p, size_t n)
{
    size_t len = p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0) ||
        (p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90))
        return 0; /* overlong, surrogate, past U+10FFFF */
    return len;
}

json_t *pcaptool_json_bytes(const void *data, size_t n, size_t limit)
{
    const uint8_t *p = data;
    size_t max = limit && n > limit ? limit : n;
    fbw_buf b;
    fbw_buf_init(&b);
    int bad = 0;
    for (size_t i = 0; i < max && !bad;) {
        size_t u = p[i] >= 0x80 ? pcaptool_utf8_len(p + i, max - i) : 0;
        if (u) {
            bad = fbw_buf_append(&b, p + i, u) != FBW_OK;
            i += u;
        } else if (p[i] >= 0x80) { /* the byte's value as a code point: two bytes of UTF-8 */
            uint8_t two[2] = {(uint8_t)(0xC0 | (p[i] >> 6)), (uint8_t)(0x80 | (p[i] & 0x3F))};
            bad = fbw_buf_append(&b, two, 2) != FBW_OK;
            i++;
        } else {
            bad = fbw_buf_append(&b, p + i, 1) != FBW_OK;
            i++;
        }
    }
    if (!bad && max < n)
        bad = fbw_buf_puts(&b, "...") != FBW_OK;
    json_t *s = NULL;
    if (!bad)
        s = fbw_buf_avail(&b) ? json_stringn((const char *)fbw_buf_head(&b), fbw_buf_avail(&b))
                              : json_string("");
    fbw_buf_free(&b);
    return s;
}

json_t *pcaptool_json_str(const char *s)
{
    return s ? pcaptool_json_bytes(s, strlen(s), 0) : json_null();
}

json_t *pcaptool_json_hex(const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    char *h = malloc(2 * n + 1);
    if (!h)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        h[2 * i] = digits[p[i] >> 4];
        h[2 * i + 1] = digits[p[i] & 15];
    }
    json_t *s = json_stringn(h, 2 * n);
    free(h);
    return s;
}

json_t *pcaptool_json_fixed(double v, int decimals)
{
    double scale = pow(10.0, decimals);
    return json_real(round(v * scale) / scale);
}

int pcaptool_json_print(json_t *doc, FILE *out)
{
    if (!doc)
        return -1;
    /* 15 significant digits: a value rounded to its decimals prints as those decimals */
    int rc = json_dumpf(doc, out, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(doc);
    if (rc == 0 && fputc('\n', out) == EOF)
        rc = -1;
    return rc;
}
