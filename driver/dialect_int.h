/* SPDX-License-Identifier: MIT */
/* dialect_int.h - what the dialect's two files share: a small growable string for building SQL
 * text (rewrites, the one-row INSERT template, inlined values). Not part of the contract. */
#ifndef FBW_DIALECT_INT_H
#define FBW_DIALECT_INT_H

#include <stddef.h>

typedef struct fbw_sbuf {
    char *p;
    size_t len, cap;
    int oom; /* an allocation failed: later puts do nothing */
} fbw_sbuf;

void fbw_sbuf_put(fbw_sbuf *b, const char *s, size_t n);
void fbw_sbuf_puts(fbw_sbuf *b, const char *s);
/* Append s with every ' doubled, for embedding inside a '...' literal. */
void fbw_sbuf_put_quoted_body(fbw_sbuf *b, const char *s, size_t n);

#endif
