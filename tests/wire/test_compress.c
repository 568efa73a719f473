/* SPDX-License-Identifier: MIT */
/* test_compress.c - zlib stream filters: round trips under every split, sync flushes, bad streams. */
#include <criterion/criterion.h>

#include "compress.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void fill_random(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

static void fill_text(uint8_t *p, size_t n)
{
    static const char words[] = "SELECT c FROM sbtest1 WHERE id=? op_fetch op_execute ";
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)words[i % (sizeof words - 1)];
}

static fbw_deflater *mk_def(void)
{
    fbw_deflater *d = NULL;
    fbw_err err;
    cr_assert_eq(fbw_deflater_new(&d, &err), FBW_OK);
    return d;
}

static fbw_inflater *mk_inf(void)
{
    fbw_inflater *z = NULL;
    fbw_err err;
    cr_assert_eq(fbw_inflater_new(&z, &err), FBW_OK);
    return z;
}

static void deflate_ok(fbw_deflater *d, const uint8_t *p, size_t n, fbw_buf *out)
{
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_deflater_flush(d, p, n, out, &err), FBW_OK, "%s", err.msg);
}

static void inflate_ok(fbw_inflater *z, const uint8_t *p, size_t n, fbw_buf *out)
{
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_inflater_feed(z, p, n, out, &err), FBW_OK, "%s", err.msg);
}

/* Compress `msg` in one flush, then inflate the bytes split at `cut`; the plaintext must match. */
static void check_all_splits(const uint8_t *msg, size_t n)
{
    fbw_buf comp;
    fbw_buf_init(&comp);
    fbw_deflater *d = mk_def();
    deflate_ok(d, msg, n, &comp);
    /* Sync flush marker: an empty stored block ends every flush. */
    size_t cn = fbw_buf_avail(&comp);
    cr_assert_geq(cn, 6);
    cr_assert_arr_eq(fbw_buf_head(&comp) + cn - 4, ((uint8_t[]){0, 0, 0xff, 0xff}), 4);
    for (size_t cut = 0; cut <= cn; cut++) {
        fbw_inflater *z = mk_inf();
        fbw_buf out;
        fbw_buf_init(&out);
        inflate_ok(z, fbw_buf_head(&comp), cut, &out);
        cr_assert_leq(fbw_buf_avail(&out), n);
        if (fbw_buf_avail(&out) > 0)
            cr_assert_arr_eq(fbw_buf_head(&out), msg, fbw_buf_avail(&out), "prefix at cut %zu", cut);
        inflate_ok(z, fbw_buf_head(&comp) + cut, cn - cut, &out);
        cr_assert_eq(fbw_buf_avail(&out), n, "cut %zu", cut);
        cr_assert_arr_eq(fbw_buf_head(&out), msg, n, "cut %zu", cut);
        fbw_buf_free(&out);
        fbw_inflater_free(z);
    }
    fbw_deflater_free(d);
    fbw_buf_free(&comp);
}

Test(compress, round_trip_every_split_small_inputs)
{
    uint8_t msg[300];
    static const size_t sizes[] = {1, 2, 7, 64, 299};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        fill_random(msg, sizes[i], (unsigned)i + 1);
        check_all_splits(msg, sizes[i]);
        fill_text(msg, sizes[i]);
        check_all_splits(msg, sizes[i]);
    }
}

Test(compress, wire_format_is_zlib_wrapper_default_level)
{
    uint8_t msg[100];
    fill_text(msg, sizeof msg);
    fbw_buf comp;
    fbw_buf_init(&comp);
    fbw_deflater *d = mk_def();
    deflate_ok(d, msg, sizeof msg, &comp);
    cr_assert_eq(fbw_buf_head(&comp)[0], 0x78);
    cr_assert_eq(fbw_buf_head(&comp)[1], 0x9c);
    /* Plain zlib inflate (what Firebird's REMOTE_inflate does) decodes it without a finish. */
    uint8_t back[200];
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    cr_assert_eq(inflateInit(&zs), Z_OK);
    zs.next_in = comp.data + comp.start;
    zs.avail_in = (uInt)fbw_buf_avail(&comp);
    zs.next_out = back;
    zs.avail_out = sizeof back;
    cr_assert_eq(inflate(&zs, Z_NO_FLUSH), Z_OK);
    cr_assert_eq(sizeof back - zs.avail_out, sizeof msg);
    cr_assert_arr_eq(back, msg, sizeof msg);
    inflateEnd(&zs);
    fbw_deflater_free(d);
    fbw_buf_free(&comp);
    /* Compressible data really shrinks. */
    uint8_t big[10000];
    fill_text(big, sizeof big);
    fbw_buf_init(&comp);
    d = mk_def();
    deflate_ok(d, big, sizeof big, &comp);
    cr_assert_lt(fbw_buf_avail(&comp), sizeof big / 10);
    fbw_deflater_free(d);
    fbw_buf_free(&comp);
}

Test(compress, many_sync_flushes_one_stream)
{
    /* 200 sends of varying size; after each the peer must have everything sent so far. */
    fbw_deflater *d = mk_def();
    fbw_inflater *z = mk_inf();
    fbw_buf comp, out;
    fbw_buf_init(&comp);
    fbw_buf_init(&out);
    uint8_t *all = malloc(200 * 1500);
    size_t total = 0;
    for (int i = 0; i < 200; i++) {
        size_t n = (size_t)(i * 37 % 1500) + 1;
        if (i % 3)
            fill_text(all + total, n);
        else
            fill_random(all + total, n, (unsigned)i);
        deflate_ok(d, all + total, n, &comp);
        total += n;
        inflate_ok(z, fbw_buf_head(&comp), fbw_buf_avail(&comp), &out);
        fbw_buf_consume(&comp, fbw_buf_avail(&comp));
        cr_assert_eq(fbw_buf_avail(&out), total, "send %d", i);
    }
    cr_assert_arr_eq(fbw_buf_head(&out), all, total);
    /* An empty send adds no bytes. */
    size_t before = fbw_buf_avail(&comp);
    deflate_ok(d, NULL, 0, &comp);
    cr_assert_eq(fbw_buf_avail(&comp), before);
    free(all);
    fbw_buf_free(&comp);
    fbw_buf_free(&out);
    fbw_deflater_free(d);
    fbw_inflater_free(z);
}

Test(compress, large_input_needs_several_output_rounds)
{
    size_t n = 3u << 20; /* incompressible and bigger than one output round */
    uint8_t *msg = malloc(n);
    fill_random(msg, n, 5);
    fbw_deflater *d = mk_def();
    fbw_inflater *z = mk_inf();
    fbw_buf comp, out;
    fbw_buf_init(&comp);
    fbw_buf_init(&out);
    deflate_ok(d, msg, n, &comp);
    inflate_ok(z, fbw_buf_head(&comp), fbw_buf_avail(&comp), &out);
    cr_assert_eq(fbw_buf_avail(&out), n);
    cr_assert(memcmp(fbw_buf_head(&out), msg, n) == 0);
    free(msg);
    fbw_buf_free(&comp);
    fbw_buf_free(&out);
    fbw_deflater_free(d);
    fbw_inflater_free(z);
}

Test(compress, header_only_and_truncated_streams_wait)
{
    fbw_inflater *z = mk_inf();
    fbw_buf out;
    fbw_buf_init(&out);
    static const uint8_t hdr[2] = {0x78, 0x9c};
    inflate_ok(z, hdr, 2, &out);
    cr_assert_eq(fbw_buf_avail(&out), 0);
    inflate_ok(z, hdr, 0, &out);
    cr_assert_eq(fbw_buf_avail(&out), 0);
    fbw_inflater_free(z);

    /* A send cut before its sync-flush marker: no error, more may come. */
    uint8_t msg[40];
    fill_random(msg, sizeof msg, 9);
    fbw_buf comp;
    fbw_buf_init(&comp);
    fbw_deflater *d = mk_def();
    deflate_ok(d, msg, sizeof msg, &comp);
    z = mk_inf();
    inflate_ok(z, fbw_buf_head(&comp), fbw_buf_avail(&comp) - 4, &out);
    cr_assert_leq(fbw_buf_avail(&out), sizeof msg);
    inflate_ok(z, fbw_buf_head(&comp) + fbw_buf_avail(&comp) - 4, 4, &out);
    cr_assert_eq(fbw_buf_avail(&out), sizeof msg);
    cr_assert_arr_eq(fbw_buf_head(&out), msg, sizeof msg);
    fbw_inflater_free(z);
    fbw_deflater_free(d);
    fbw_buf_free(&comp);
    fbw_buf_free(&out);
}

static int feed_err(const uint8_t *p, size_t n, fbw_err *err, size_t *out_len)
{
    fbw_inflater *z = mk_inf();
    fbw_buf out;
    fbw_buf_init(&out);
    static const uint8_t prior[3] = {'a', 'b', 'c'};
    fbw_buf_append(&out, prior, sizeof prior);
    fbw_err_clear(err);
    int rc = fbw_inflater_feed(z, p, n, &out, err);
    *out_len = fbw_buf_avail(&out);
    if (rc) {
        /* sticky: the stream stays broken */
        fbw_err again;
        cr_assert_eq(fbw_inflater_feed(z, p, 1, &out, &again), FBW_E_CRYPT);
    }
    fbw_buf_free(&out);
    fbw_inflater_free(z);
    return rc;
}

Test(compress, corrupt_streams_fail_cleanly)
{
    fbw_err err;
    size_t len;
    /* Not a zlib header (raw deflate or garbage). */
    static const uint8_t bad_hdr[4] = {0x78, 0x9d, 0x00, 0x00};
    cr_assert_eq(feed_err(bad_hdr, sizeof bad_hdr, &err, &len), FBW_E_CRYPT);
    cr_assert(strstr(err.msg, "header check"), "%s", err.msg);
    cr_assert_eq(len, 3, "previous contents kept, partial output dropped");
    /* Invalid block type 3 after a good header. */
    static const uint8_t bad_block[3] = {0x78, 0x9c, 0x07};
    cr_assert_eq(feed_err(bad_block, sizeof bad_block, &err, &len), FBW_E_CRYPT);
    cr_assert(strstr(err.msg, "invalid block type"), "%s", err.msg);
    /* Stored block whose length check fails. */
    static const uint8_t bad_stored[7] = {0x78, 0x9c, 0x00, 0x05, 0x00, 0x00, 0x00};
    cr_assert_eq(feed_err(bad_stored, sizeof bad_stored, &err, &len), FBW_E_CRYPT);
    /* Preset dictionary request: not part of the wire format. */
    static const uint8_t dict[6] = {0x78, 0xbb, 0, 0, 0, 1};
    cr_assert_eq(feed_err(dict, sizeof dict, &err, &len), FBW_E_CRYPT);
    /* Bit flips in a real stream: error or different bytes, never a crash. */
    uint8_t msg[500];
    fill_text(msg, sizeof msg);
    fbw_buf comp;
    fbw_buf_init(&comp);
    fbw_deflater *d = mk_def();
    deflate_ok(d, msg, sizeof msg, &comp);
    for (size_t i = 0; i < fbw_buf_avail(&comp) * 8; i++) {
        uint8_t copy[600];
        size_t cn = fbw_buf_avail(&comp);
        memcpy(copy, fbw_buf_head(&comp), cn);
        copy[i / 8] ^= (uint8_t)(1u << (i % 8));
        (void)feed_err(copy, cn, &err, &len);
    }
    fbw_deflater_free(d);
    fbw_buf_free(&comp);
}

Test(compress, data_after_finished_stream)
{
    /* Firebird never finishes its stream; a peer that does and keeps sending is broken. */
    uint8_t msg[20], comp[100];
    fill_text(msg, sizeof msg);
    uLongf cn = sizeof comp;
    cr_assert_eq(compress(comp, &cn, msg, sizeof msg), Z_OK);
    fbw_inflater *z = mk_inf();
    fbw_buf out;
    fbw_buf_init(&out);
    inflate_ok(z, comp, cn, &out);
    cr_assert_eq(fbw_buf_avail(&out), sizeof msg);
    fbw_err err;
    cr_assert_eq(fbw_inflater_feed(z, comp, 1, &out, &err), FBW_E_CRYPT);
    cr_assert(strstr(err.msg, "after the end"), "%s", err.msg);
    fbw_inflater_free(z);
    /* Same when the trailing byte comes in the same call. */
    comp[cn] = 0x55;
    fbw_buf_reset(&out);
    z = mk_inf();
    cr_assert_eq(fbw_inflater_feed(z, comp, cn + 1, &out, &err), FBW_E_CRYPT);
    fbw_inflater_free(z);
    fbw_buf_free(&out);
}

Test(compress, decompression_bomb_cap)
{
    size_t n = 1u << 20; /* 1 MiB of zeros compresses to about 1 KiB */
    uint8_t *zeros = calloc(1, n);
    fbw_deflater *d = mk_def();
    fbw_buf comp, out;
    fbw_buf_init(&comp);
    fbw_buf_init(&out);
    deflate_ok(d, zeros, n, &comp);
    cr_assert_lt(fbw_buf_avail(&comp), 2048);

    fbw_inflater *z = mk_inf();
    fbw_inflater_set_max_out(z, 64 * 1024);
    fbw_err err;
    cr_assert_eq(fbw_inflater_feed(z, fbw_buf_head(&comp), fbw_buf_avail(&comp), &out, &err),
                 FBW_E_PROTO);
    cr_assert(strstr(err.msg, "65536"), "%s", err.msg);
    cr_assert_eq(fbw_buf_avail(&out), 0);
    cr_assert_leq(out.cap, 2 * 65536 + 4096, "must not allocate far beyond the cap");
    fbw_inflater_free(z);

    /* Exactly at the cap is fine; fed in small pieces every call stays under it. */
    z = mk_inf();
    fbw_inflater_set_max_out(z, n);
    inflate_ok(z, fbw_buf_head(&comp), fbw_buf_avail(&comp), &out);
    cr_assert_eq(fbw_buf_avail(&out), n);
    fbw_inflater_free(z);
    fbw_buf_reset(&out);
    z = mk_inf();
    fbw_inflater_set_max_out(z, 64 * 1024);
    for (size_t i = 0; i < fbw_buf_avail(&comp); i += 16) {
        size_t k = fbw_buf_avail(&comp) - i < 16 ? fbw_buf_avail(&comp) - i : 16;
        size_t before = fbw_buf_avail(&out);
        int rc = fbw_inflater_feed(z, fbw_buf_head(&comp) + i, k, &out, &err);
        if (rc) { /* a 16-byte slice of a run of zeros can exceed 64 KiB: that is the guard */
            cr_assert_eq(rc, FBW_E_PROTO);
            break;
        }
        cr_assert_leq(fbw_buf_avail(&out) - before, 64 * 1024);
    }
    fbw_inflater_free(z);
    /* The default cap is what the header documents. */
    z = mk_inf();
    fbw_inflater_set_max_out(z, 0);
    fbw_buf_reset(&out);
    inflate_ok(z, fbw_buf_head(&comp), fbw_buf_avail(&comp), &out);
    cr_assert_eq(fbw_buf_avail(&out), n);
    fbw_inflater_free(z);
    fbw_deflater_free(d);
    fbw_buf_free(&comp);
    fbw_buf_free(&out);
    free(zeros);
}
