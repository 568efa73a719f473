/* SPDX-License-Identifier: MIT */
/* units.c - exact parsing of fbwire-link's numbers (units.h). */
#include "units.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

int fbl_parse_scaled(const char **s, uint64_t scale, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    int digits = 0;
    for (; isdigit((unsigned char)*p); p++, digits++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (scale && v > UINT64_MAX / scale)
        return -1;
    v *= scale;
    if (*p == '.') {
        p++;
        /* Fraction digits finer than 1/scale are dropped: the result is exact to the unit. */
        for (uint64_t step = scale / 10; isdigit((unsigned char)*p); p++, digits++, step /= 10)
            v += (uint64_t)(*p - '0') * step;
    }
    if (!digits)
        return -1;
    *s = p;
    *out = v;
    return 0;
}

typedef struct unit {
    const char *name;
    uint64_t scale;
} unit;

/* The number, then one of the units (case-insensitive), then the end of the string. */
static int parse_with(const char *s, const unit *units, int n, uint64_t dflt, uint64_t *out)
{
    const char *p = s;
    uint64_t probe;
    if (fbl_parse_scaled(&p, 1, &probe))
        return -1;
    uint64_t scale = dflt;
    if (*p) {
        int i;
        for (i = 0; i < n && strcasecmp(p, units[i].name); i++)
            ;
        if (i == n)
            return -1;
        scale = units[i].scale;
    }
    if (!scale)
        return -1;
    p = s;
    return fbl_parse_scaled(&p, scale, out);
}

int fbl_parse_duration(const char *s, uint64_t *ns)
{
    static const unit u[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
    uint64_t v;
    if (parse_with(s, u, 4, 1000000, &v) || v > 1000000000000000ull)
        return -1;
    *ns = v;
    return 0;
}

int fbl_parse_rate(const char *s, uint64_t *bps)
{
    static const unit u[] = {{"bit", 1}, {"kbit", 1000}, {"mbit", 1000000}, {"gbit", 1000000000}};
    uint64_t v;
    if (parse_with(s, u, 4, 0, &v) || v < 1 || v > 10000000000ull)
        return -1;
    *bps = v;
    return 0;
}

int fbl_parse_size(const char *s, uint64_t *bytes)
{
    static const unit u[] = {{"k", 1024}, {"m", 1024 * 1024}};
    /* 1024 is no power of ten: the fraction would be wrong, so whole numbers only. */
    if (strchr(s, '.'))
        return -1;
    uint64_t v;
    if (parse_with(s, u, 2, 1, &v) || v > 1000000000000ull)
        return -1;
    *bytes = v;
    return 0;
}

int fbl_parse_prob(const char *s, uint32_t *ppb)
{
    const char *p = s;
    uint64_t v;
    if (fbl_parse_scaled(&p, 1000000000, &v) || *p || v > 1000000000)
        return -1;
    *ppb = (uint32_t)v;
    return 0;
}
