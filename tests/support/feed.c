/* SPDX-License-Identifier: MIT */
/* feed.c - cutting inputs every way and guard-page buffers (see feed.h). */
#include "feed.h"

#include "err.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- stateless decoders ---- */

void fbw_feed_result_free(fbw_feed_result *r) { fbw_buf_free(&r->transcript); }

/* Decode as many items as the pending bytes hold. Returns FBW_OK when it stopped for lack of bytes
 * (or with nothing left), else the error. */
static int drain(fbw_feed_decode_fn fn, void *arg, fbw_guard *g, fbw_buf *pending, fbw_feed_result *res)
{
    while (fbw_buf_avail(pending) > 0) {
        const uint8_t *q = fbw_guard_place(g, fbw_buf_head(pending), fbw_buf_avail(pending));
        size_t used = 0;
        int rc = fn(arg, q, fbw_buf_avail(pending), &used, &res->transcript);
        if (rc == FBW_AGAIN)
            return FBW_OK;
        if (rc != FBW_OK)
            return rc;
        cr_assert(used > 0 && used <= fbw_buf_avail(pending), "decoder reported used=%zu of %zu", used,
                  fbw_buf_avail(pending));
        fbw_buf_consume(pending, used);
        res->consumed += used;
        res->items++;
    }
    return FBW_OK;
}

void fbw_feed_run(fbw_feed_decode_fn fn, void *arg, const uint8_t *p, size_t n, const size_t *cuts,
                  size_t ncuts, fbw_feed_result *res)
{
    memset(res, 0, sizeof *res);
    fbw_buf_init(&res->transcript);
    fbw_buf pending;
    fbw_buf_init(&pending);
    fbw_guard g;
    fbw_guard_init(&g, n);
    size_t from = 0;
    int rc = FBW_OK;
    for (size_t i = 0; i <= ncuts && rc == FBW_OK; i++) {
        size_t to = i < ncuts ? cuts[i] : n;
        cr_assert(to >= from && to <= n, "cuts must grow and stay inside the input");
        if (to > from && fbw_buf_append(&pending, p + from, to - from) != FBW_OK)
            abort();
        from = to;
        rc = drain(fn, arg, &g, &pending, res);
    }
    if (rc == FBW_OK && fbw_buf_avail(&pending) > 0)
        rc = FBW_AGAIN;
    res->rc = rc;
    fbw_guard_free(&g);
    fbw_buf_free(&pending);
}

static void same(const fbw_feed_result *a, const fbw_feed_result *b, const char *how, size_t at)
{
    cr_assert_eq(a->rc, b->rc, "%s (at %zu): rc %d, whole input gave %d", how, at, b->rc, a->rc);
    cr_assert_eq(a->consumed, b->consumed, "%s (at %zu): consumed %zu, whole %zu", how, at, b->consumed,
                 a->consumed);
    cr_assert_eq(a->items, b->items, "%s (at %zu): %zu items, whole %zu", how, at, b->items, a->items);
    size_t na = fbw_buf_avail(&a->transcript), nb = fbw_buf_avail(&b->transcript);
    cr_assert(na == nb && (na == 0 || memcmp(fbw_buf_head(&a->transcript), fbw_buf_head(&b->transcript), na) == 0),
              "%s (at %zu): decoded items differ from the whole-input run", how, at);
}

void fbw_feed_check(fbw_feed_decode_fn fn, void *arg, const uint8_t *p, size_t n,
                    fbw_feed_result *whole)
{
    fbw_feed_run(fn, arg, p, n, NULL, 0, whole);
    size_t *cuts = calloc(n ? n : 1, sizeof *cuts);
    if (!cuts)
        abort();
    for (size_t i = 0; i < n; i++)
        cuts[i] = i + 1;
    fbw_feed_result r;
    fbw_feed_run(fn, arg, p, n, cuts, n ? n - 1 : 0, &r);
    same(whole, &r, "byte by byte", 0);
    fbw_feed_result_free(&r);
    for (size_t at = 1; at < n; at++) {
        fbw_feed_run(fn, arg, p, n, &at, 1, &r);
        same(whole, &r, "split", at);
        fbw_feed_result_free(&r);
    }
    free(cuts);
}

void fbw_feed_check_prefixes(fbw_feed_decode_fn fn, void *arg, const uint8_t *p, size_t n)
{
    fbw_guard g;
    fbw_guard_init(&g, n);
    fbw_buf t;
    fbw_buf_init(&t);
    for (size_t k = 0; k < n; k++) {
        size_t used = 0;
        int rc = fn(arg, fbw_guard_place(&g, p, k), k, &used, &t);
        cr_assert_eq(rc, FBW_AGAIN, "prefix of %zu of %zu bytes gave %d (%s), expected FBW_AGAIN", k, n,
                     rc, fbw_rc_name(rc));
    }
    size_t used = 0;
    int rc = fn(arg, fbw_guard_place(&g, p, n), n, &used, &t);
    cr_assert_eq(rc, FBW_OK, "whole input of %zu bytes gave %d (%s)", n, rc, fbw_rc_name(rc));
    cr_assert_eq(used, n, "whole input: used %zu of %zu", used, n);
    fbw_buf_free(&t);
    fbw_guard_free(&g);
}

/* ---- stateful consumers ---- */

static int sink_run(const fbw_feed_sink *s, const uint8_t *p, size_t n, const size_t *cuts, size_t ncuts,
                    fbw_buf *summary)
{
    void *st = s->open(s->arg);
    fbw_guard g;
    fbw_guard_init(&g, n);
    size_t from = 0;
    int rc = FBW_OK;
    for (size_t i = 0; i <= ncuts && rc == FBW_OK; i++) {
        size_t to = i < ncuts ? cuts[i] : n;
        if (to > from)
            rc = s->push(st, fbw_guard_place(&g, p + from, to - from), to - from);
        from = to;
    }
    s->summary(st, summary);
    s->close(st);
    fbw_guard_free(&g);
    return rc;
}

int fbw_feed_check_sink(const fbw_feed_sink *s, const uint8_t *p, size_t n, fbw_buf *summary)
{
    fbw_buf whole, other;
    fbw_buf_init(&whole);
    int rc = sink_run(s, p, n, NULL, 0, &whole);
    size_t *cuts = calloc(n ? n : 1, sizeof *cuts);
    if (!cuts)
        abort();
    for (size_t i = 0; i < n; i++)
        cuts[i] = i + 1;
    for (size_t at = 0; at < n; at++) {
        fbw_buf_init(&other);
        /* at == 0: byte by byte; otherwise one split at `at` */
        int rc2 = at == 0 ? sink_run(s, p, n, cuts, n ? n - 1 : 0, &other) : sink_run(s, p, n, &at, 1, &other);
        const char *how = at == 0 ? "byte by byte" : "split";
        cr_assert_eq(rc2, rc, "%s (at %zu): rc %d, whole input gave %d", how, at, rc2, rc);
        cr_assert(fbw_buf_avail(&other) == fbw_buf_avail(&whole) &&
                      memcmp(fbw_buf_head(&other), fbw_buf_head(&whole), fbw_buf_avail(&whole)) == 0,
                  "%s (at %zu): state differs from the whole-input run", how, at);
        fbw_buf_free(&other);
    }
    free(cuts);
    if (summary)
        *summary = whole;
    else
        fbw_buf_free(&whole);
    return rc;
}

/* ---- helpers ---- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

void fbw_test_hex(fbw_buf *out, const char *hex)
{
    int hi = -1;
    for (; *hex; hex++) {
        if (*hex == ' ' || *hex == '\n' || *hex == '|' || *hex == '\t')
            continue;
        int v = hexval(*hex);
        if (v < 0)
            abort();
        if (hi < 0) {
            hi = v;
            continue;
        }
        uint8_t b = (uint8_t)(hi << 4 | v);
        if (fbw_buf_append(out, &b, 1) != FBW_OK)
            abort();
        hi = -1;
    }
    if (hi >= 0)
        abort();
}

void fbw_test_save(const char *dir, const char *name, const void *p, size_t n)
{
    if (!dir)
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    if (n)
        fwrite(p, 1, n, f);
    fclose(f);
}

const char *fbw_test_corpus_dir(const char *sub, char *buf, size_t size)
{
    const char *root = getenv("FBW_CORPUS_DIR");
    if (!root || !*root)
        return NULL;
    mkdir(root, 0755);
    snprintf(buf, size, "%s/%s", root, sub);
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return NULL;
    return buf;
}
