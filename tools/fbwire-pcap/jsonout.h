/* SPDX-License-Identifier: MIT */
/* jsonout.h - JSON values of fbwire-pcap's reports, built with jansson: strings of captured bytes
 * (which need not be UTF-8), hex strings, fixed-decimal numbers, and the one way a report
 * document is written. Reports are trees of json_t rendered by jansson, never text put together
 * by hand. Every function returns a new reference, NULL when out of memory. */
#ifndef PCAPTOOL_JSONOUT_H
#define PCAPTOOL_JSONOUT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Length of a valid UTF-8 sequence at p[0..n) (2..4 bytes; no overlong forms, surrogates or
 * code points past U+10FFFF), or 0. */
size_t pcaptool_utf8_len(const uint8_t *p, size_t n);
/* The string p[0..n) as pcaptool_quote (pcaptool.h) shows it: valid UTF-8 kept, any other byte
 * the code point of its value (U+0080..U+00FF), cut with "..." after limit bytes (0: no limit). */
json_t *pcaptool_json_bytes(const void *p, size_t n, size_t limit);
/* s as a string, JSON null for NULL. */
json_t *pcaptool_json_str(const char *s);
/* Lower-case hex of p[0..n). */
json_t *pcaptool_json_hex(const uint8_t *p, size_t n);
/* v rounded to `decimals` places (as printf's %.Nf would show it). */
json_t *pcaptool_json_fixed(double v, int decimals);
/* Write doc compact on one line to out and release it. NULL doc (a report that could not be
 * built for want of memory) writes nothing. 0, or -1 when nothing or not all was written. */
int pcaptool_json_print(json_t *doc, FILE *out);

#endif
