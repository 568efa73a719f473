/* SPDX-License-Identifier: MIT */
/* buf.c - growable byte buffer. */
#include "buf.h"

#include "err.h"

#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fbw_buf_init(fbw_buf *b) { memset(b, 0, sizeof *b); }

void fbw_buf_free(fbw_buf *b)
{
    free(b->data);
    fbw_buf_init(b);
}

void fbw_buf_wipe_free(fbw_buf *b)
{
    if (b->data)
        OPENSSL_cleanse(b->data, b->cap);
    fbw_buf_free(b);
}

int fbw_buf_reserve(fbw_buf *b, size_t extra)
{
    if (b->cap - b->len >= extra)
        return FBW_OK;
    /* Compact first: the consumed prefix is dead space. */
    if (b->start > 0) {
        memmove(b->data, b->data + b->start, b->len - b->start);
        b->len -= b->start;
        b->start = 0;
        if (b->cap - b->len >= extra)
            return FBW_OK;
    }
    if (extra > SIZE_MAX / 2 - b->len)
        return FBW_E_NOMEM;
    size_t need = b->len + extra;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p)
        return FBW_E_NOMEM;
    b->data = p;
    b->cap = cap;
    return FBW_OK;
}

int fbw_buf_append(fbw_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return FBW_OK;
    int rc = fbw_buf_reserve(b, n);
    if (rc)
        return rc;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return FBW_OK;
}

int fbw_buf_puts(fbw_buf *b, const char *s)
{
    return fbw_buf_append(b, s, strlen(s));
}

int fbw_buf_printf(fbw_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return FBW_E_USAGE;
    int rc = fbw_buf_reserve(b, (size_t)n + 1); /* vsnprintf writes a NUL past the text */
    if (rc)
        return rc;
    va_start(ap, fmt);
    vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return FBW_OK;
}

void fbw_buf_consume(fbw_buf *b, size_t n)
{
    b->start += n;
    if (b->start >= b->len)
        b->start = b->len = 0;
}
