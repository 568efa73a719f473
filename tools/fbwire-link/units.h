/* SPDX-License-Identifier: MIT */
/* units.h - the numbers fbwire-link reads: durations, rates, sizes and probabilities, parsed
 * exactly (decimal fractions in integer arithmetic), overflow-checked, whole string or error. */
#ifndef FBL_UNITS_H
#define FBL_UNITS_H

#include <stdint.h>

/* "1ms", "0.25ms", "100us", "2s", "500ns"; a bare number is milliseconds. Into ns, at most 1e15. */
int fbl_parse_duration(const char *s, uint64_t *ns);
/* "100mbit", "1.5gbit", "64kbit", "9600bit". Into bits per second, 1 .. 1e10 (10 gbit). */
int fbl_parse_rate(const char *s, uint64_t *bps);
/* "65536", "64k", "4m" (1024-based). Into bytes, at most 1e12. */
int fbl_parse_size(const char *s, uint64_t *bytes);
/* "0.01", "1", "0" (a probability). Into parts per billion. */
int fbl_parse_prob(const char *s, uint32_t *ppb);

/* The decimal number at *s times `scale` (a power of ten), truncated; *s moves past it. */
int fbl_parse_scaled(const char **s, uint64_t scale, uint64_t *out);

#endif
