/* SPDX-License-Identifier: MIT */
/* dialect_int.h - what the dialect's two files share: a small growable string for building SQL
 * text (rewrites, the one-row INSERT template, inlined values). Not part of the contract. */
#ifndef SBDRV_DIALECT_INT_H
#define SBDRV_DIALECT_INT_H

#include <stddef.h>

typedef struct sbdrv_sbuf {
    char *p;
    size_t len, cap;
    int oom; /* an allocation failed: later puts do nothing */
} sbdrv_sbuf;

void sbdrv_sbuf_put(sbdrv_sbuf *b, const char *s, size_t n);
void sbdrv_sbuf_puts(sbdrv_sbuf *b, const char *s);
/* Append s with every ' doubled, for embedding inside a '...' literal. */
void sbdrv_sbuf_put_quoted_body(sbdrv_sbuf *b, const char *s, size_t n);

#endif
