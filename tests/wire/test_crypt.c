/* SPDX-License-Identifier: MIT */
/* test_crypt.c - wire ciphers: known vectors, IV mapping, counter carry and overflow, chunking. */
#include <criterion/criterion.h>

#include "crypt.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <stdlib.h>
#include <string.h>

/* ---- independent references (test code only) ---- */

/* RFC 8439 section 2.3 ChaCha20 block function over the 16 state words given by key, word 12..15. */
static uint32_t rotl(uint32_t v, int n) { return v << n | v >> (32 - n); }

static void quarter(uint32_t *x, int a, int b, int c, int d)
{
    x[a] += x[b]; x[d] = rotl(x[d] ^ x[a], 16);
    x[c] += x[d]; x[b] = rotl(x[b] ^ x[c], 12);
    x[a] += x[b]; x[d] = rotl(x[d] ^ x[a], 8);
    x[c] += x[d]; x[b] = rotl(x[b] ^ x[c], 7);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void ref_block(const uint8_t key[32], const uint32_t w12_15[4], uint8_t out[64])
{
    uint32_t s[16], x[16];
    s[0] = 0x61707865; s[1] = 0x3320646e; s[2] = 0x79622d32; s[3] = 0x6b206574;
    for (int i = 0; i < 8; i++)
        s[4 + i] = le32(key + 4 * i);
    for (int i = 0; i < 4; i++)
        s[12 + i] = w12_15[i];
    memcpy(x, s, sizeof x);
    for (int r = 0; r < 10; r++) {
        quarter(x, 0, 4, 8, 12); quarter(x, 1, 5, 9, 13);
        quarter(x, 2, 6, 10, 14); quarter(x, 3, 7, 11, 15);
        quarter(x, 0, 5, 10, 15); quarter(x, 1, 6, 11, 12);
        quarter(x, 2, 7, 8, 13); quarter(x, 3, 4, 9, 14);
    }
    for (int i = 0; i < 16; i++) {
        uint32_t v = x[i] + s[i];
        out[4 * i] = (uint8_t)v; out[4 * i + 1] = (uint8_t)(v >> 8);
        out[4 * i + 2] = (uint8_t)(v >> 16); out[4 * i + 3] = (uint8_t)(v >> 24);
    }
}

/* ChaCha64 (DJB layout) keystream block: words 12..13 = 64-bit counter, 14..15 = 8-byte nonce. */
static void ref_block64(const uint8_t key[32], const uint8_t nonce[8], uint64_t ctr, uint8_t out[64])
{
    uint32_t w[4] = {(uint32_t)ctr, (uint32_t)(ctr >> 32), le32(nonce), le32(nonce + 4)};
    ref_block(key, w, out);
}

/* RFC 8439 layout: word 12 = 32-bit counter, 13..15 = 12-byte nonce. */
static void ref_block32(const uint8_t key[32], const uint8_t nonce[12], uint32_t ctr, uint8_t out[64])
{
    uint32_t w[4] = {ctr, le32(nonce), le32(nonce + 4), le32(nonce + 8)};
    ref_block(key, w, out);
}

static void ref_rc4(const uint8_t *key, size_t klen, uint8_t *buf, size_t n)
{
    uint8_t s[256], i = 0, j = 0;
    for (int k = 0; k < 256; k++)
        s[k] = (uint8_t)k;
    for (int k = 0, m = 0; k < 256; k++) {
        m = (m + s[k] + key[k % klen]) & 0xff;
        uint8_t t = s[k]; s[k] = s[m]; s[m] = t;
    }
    for (size_t k = 0; k < n; k++) {
        i++;
        j = (uint8_t)(j + s[i]);
        uint8_t t = s[i]; s[i] = s[j]; s[j] = t;
        buf[k] ^= s[(uint8_t)(s[i] + s[j])];
    }
}

static void sha256(const uint8_t *p, size_t n, uint8_t out[32])
{
    unsigned int len = 0;
    cr_assert(EVP_Digest(p, n, out, &len, EVP_sha256(), NULL));
    cr_assert_eq(len, 32);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

static fbw_cipher *make(const char *plugin, const uint8_t *k, size_t klen, const uint8_t *iv,
                        size_t ivlen)
{
    fbw_cipher *c = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    int rc = fbw_cipher_new(plugin, k, klen, iv, ivlen, &c, &err);
    cr_assert_eq(rc, FBW_OK, "%s: %s", plugin, err.msg);
    cr_assert_not_null(c);
    return c;
}

static void apply_ok(fbw_cipher *c, uint8_t *buf, size_t n)
{
    fbw_err err;
    fbw_err_clear(&err);
    int rc = fbw_cipher_apply(c, buf, n, &err);
    cr_assert_eq(rc, FBW_OK, "%s: %s", fbw_cipher_name(c), err.msg);
}

static const uint8_t K20[20] = {0x1c, 0x3e, 0x55, 0x07, 0x9a, 0xb1, 0x22, 0x40, 0x6d, 0x91,
                                0xee, 0x03, 0x5f, 0x70, 0x88, 0x12, 0xc4, 0xd9, 0x2b, 0x66};
static const uint8_t IV8[8] = {0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6, 0x07, 0x18};
static const uint8_t IV16[16] = {0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87,
                                 0x98, 0xa9, 0xba, 0xcb, 0, 0, 0, 0};

/* ---- known vectors ---- */

Test(crypt, arc4_rfc6229_40bit_key)
{
    static const uint8_t key[5] = {1, 2, 3, 4, 5};
    static const uint8_t want[32] = {
        0xb2, 0x39, 0x63, 0x05, 0xf0, 0x3d, 0xc0, 0x27, 0xcc, 0xc3, 0x52, 0x4a, 0x0a, 0x11, 0x18, 0xa8,
        0x69, 0x82, 0x94, 0x4f, 0x18, 0xfc, 0x82, 0xd5, 0x89, 0xc4, 0x03, 0xa4, 0x7a, 0x0d, 0x09, 0x19};
    uint8_t buf[32] = {0};
    fbw_cipher *c = make("Arc4", key, sizeof key, NULL, 0);
    apply_ok(c, buf, sizeof buf);
    cr_assert_arr_eq(buf, want, sizeof want);
    cr_assert_str_eq(fbw_cipher_name(c), "Arc4");
    fbw_cipher_free(c);
}

Test(crypt, arc4_matches_reference_for_session_key_lengths)
{
    static const size_t lens[] = {1, 16, 20, 32, 64, 255, 256};
    uint8_t key[256], got[1000], want[1000];
    fill(key, sizeof key, 7);
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        fill(got, sizeof got, 99);
        memcpy(want, got, sizeof got);
        fbw_cipher *c = make("Arc4", key, lens[i], NULL, 0);
        apply_ok(c, got, sizeof got);
        ref_rc4(key, lens[i], want, sizeof want);
        cr_assert_arr_eq(got, want, sizeof got, "key length %zu", lens[i]);
        fbw_cipher_free(c);
    }
}

static const char RFC_PLAIN[] = "Ladies and Gentlemen of the class of '99: If I could offer you only "
                                "one tip for the future, sunscreen would be it.";
static const uint8_t RFC_CIPHER[114] = {
    0x6e, 0x2e, 0x35, 0x9a, 0x25, 0x68, 0xf9, 0x80, 0x41, 0xba, 0x07, 0x28, 0xdd, 0x0d, 0x69, 0x81,
    0xe9, 0x7e, 0x7a, 0xec, 0x1d, 0x43, 0x60, 0xc2, 0x0a, 0x27, 0xaf, 0xcc, 0xfd, 0x9f, 0xae, 0x0b,
    0xf9, 0x1b, 0x65, 0xc5, 0x52, 0x47, 0x33, 0xab, 0x8f, 0x59, 0x3d, 0xab, 0xcd, 0x62, 0xb3, 0x57,
    0x16, 0x39, 0xd6, 0x24, 0xe6, 0x51, 0x52, 0xab, 0x8f, 0x53, 0x0c, 0x35, 0x9f, 0x08, 0x61, 0xd8,
    0x07, 0xca, 0x0d, 0xbf, 0x50, 0x0d, 0x6a, 0x61, 0x56, 0xa3, 0x8e, 0x08, 0x8a, 0x22, 0xb6, 0x5e,
    0x52, 0xbc, 0x51, 0x4d, 0x16, 0xcc, 0xf8, 0x06, 0x81, 0x8c, 0xe9, 0x1a, 0xb7, 0x79, 0x37, 0x36,
    0x5a, 0xf9, 0x0b, 0xbf, 0x74, 0xa3, 0x5b, 0xe6, 0xb4, 0x0b, 0x8e, 0xed, 0xf2, 0x78, 0x5e, 0x42,
    0x87, 0x4d};
static const uint8_t RFC_NONCE[12] = {0, 0, 0, 0, 0, 0, 0, 0x4a, 0, 0, 0, 0};

static void rfc_key(uint8_t key[32])
{
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)i;
}

Test(crypt, reference_block_matches_rfc8439_2_4_2)
{
    /* Validate the test's own reference before trusting it below. */
    uint8_t key[32], ks[128], buf[114];
    rfc_key(key);
    ref_block32(key, RFC_NONCE, 1, ks);
    ref_block32(key, RFC_NONCE, 2, ks + 64);
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)RFC_PLAIN[i] ^ ks[i];
    cr_assert_arr_eq(buf, RFC_CIPHER, sizeof buf);
}

Test(crypt, chacha_rfc8439_2_4_2_through_fb_iv_layout)
{
    /* Firebird's 16-byte ChaCha IV: 12-byte nonce, then the initial counter big-endian. */
    uint8_t key[32], iv[16], buf[114];
    rfc_key(key);
    memcpy(iv, RFC_NONCE, 12);
    iv[12] = 0; iv[13] = 0; iv[14] = 0; iv[15] = 1;
    memcpy(buf, RFC_PLAIN, sizeof buf);
    fbw_cipher *c = NULL;
    fbw_err err;
    cr_assert_eq(fbw_cipher_new_raw_key("ChaCha", key, iv, sizeof iv, &c, &err), FBW_OK, "%s", err.msg);
    apply_ok(c, buf, 50);
    apply_ok(c, buf + 50, sizeof buf - 50);
    cr_assert_arr_eq(buf, RFC_CIPHER, sizeof buf);
    fbw_cipher_free(c);
}

Test(crypt, chacha_key_is_sha256_of_session_key)
{
    uint8_t key[32], a[300] = {0}, b[300] = {0};
    sha256(K20, sizeof K20, key);
    fbw_cipher *c1 = make("ChaCha", K20, sizeof K20, IV16, sizeof IV16);
    fbw_cipher *c2 = NULL;
    fbw_err err;
    cr_assert_eq(fbw_cipher_new_raw_key("ChaCha", key, IV16, sizeof IV16, &c2, &err), FBW_OK);
    apply_ok(c1, a, sizeof a);
    apply_ok(c2, b, sizeof b);
    cr_assert_arr_eq(a, b, sizeof a);
    /* and against the reference: counter 0 from the IV's zero tail */
    for (uint32_t blk = 0; blk * 64 < sizeof a; blk++) {
        uint8_t ks[64];
        size_t n = sizeof a - 64 * blk < 64 ? sizeof a - 64 * blk : 64;
        ref_block32(key, IV16, blk, ks);
        cr_assert_arr_eq(a + 64 * blk, ks, n, "block %u", blk);
    }
    fbw_cipher_free(c1);
    fbw_cipher_free(c2);
}

Test(crypt, chacha64_matches_reference_from_counter_zero)
{
    uint8_t key[32], buf[200] = {0}, ks[64];
    sha256(K20, sizeof K20, key);
    fbw_cipher *c = make("ChaCha64", K20, sizeof K20, IV8, sizeof IV8);
    apply_ok(c, buf, sizeof buf);
    for (uint64_t blk = 0; blk < 4; blk++) {
        size_t n = blk == 3 ? sizeof buf - 192 : 64;
        ref_block64(key, IV8, blk, ks);
        cr_assert_arr_eq(buf + 64 * blk, ks, n, "block %llu", (unsigned long long)blk);
    }
    cr_assert_str_eq(fbw_cipher_name(c), "ChaCha64");
    fbw_cipher_free(c);
}

/* ---- counter boundary ---- */

Test(crypt, chacha64_carries_across_2_pow_32_blocks)
{
    const uint64_t first = ((uint64_t)1 << 32) - 2;
    uint8_t key[32], bulk[256] = {0}, pieces[256] = {0}, ks[64];
    sha256(K20, sizeof K20, key);
    fbw_cipher *c = NULL;
    fbw_err err;
    cr_assert_eq(fbw_cipher_new_at_block("ChaCha64", K20, sizeof K20, IV8, 8, first, &c, &err), FBW_OK,
                 "%s", err.msg);
    apply_ok(c, bulk, sizeof bulk);
    fbw_cipher_free(c);
    /* Blocks 2^32-2, 2^32-1, 2^32, 2^32+1: word 13 must take the carry. */
    for (uint64_t i = 0; i < 4; i++) {
        ref_block64(key, IV8, first + i, ks);
        cr_assert_arr_eq(bulk + 64 * i, ks, 64, "block 2^32-2+%llu", (unsigned long long)i);
    }
    /* Also with a fresh OpenSSL context placed directly on block 2^32+1. */
    cr_assert_eq(fbw_cipher_new_at_block("ChaCha64", K20, sizeof K20, IV8, 8, first + 3, &c, &err),
                 FBW_OK);
    memset(ks, 0, sizeof ks);
    apply_ok(c, ks, sizeof ks);
    cr_assert_arr_eq(bulk + 192, ks, 64);
    fbw_cipher_free(c);
    /* Crossing the boundary inside partial blocks gives the same stream. */
    static const size_t cuts[] = {1, 62, 66, 3, 60, 64};
    cr_assert_eq(fbw_cipher_new_at_block("ChaCha64", K20, sizeof K20, IV8, 8, first, &c, &err), FBW_OK);
    size_t off = 0;
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        apply_ok(c, pieces + off, cuts[i]);
        off += cuts[i];
    }
    cr_assert_eq(off, sizeof pieces);
    cr_assert_arr_eq(pieces, bulk, sizeof bulk);
    fbw_cipher_free(c);
}

Test(crypt, chacha_32bit_counter_stops_before_wrapping)
{
    /* IV counter 0xFFFFFFFC: blocks ...FC, FD, FE are usable; FF is the one libtomcrypt refuses. */
    uint8_t iv[16], key[32], buf[193] = {0}, ks[64];
    memcpy(iv, IV16, 12);
    iv[12] = 0xff; iv[13] = 0xff; iv[14] = 0xff; iv[15] = 0xfc;
    sha256(K20, sizeof K20, key);
    fbw_cipher *c = make("ChaCha", K20, sizeof K20, iv, sizeof iv);
    apply_ok(c, buf, 100);
    apply_ok(c, buf + 100, 92);
    for (uint32_t i = 0; i < 3; i++) {
        ref_block32(key, iv, 0xfffffffcu + i, ks);
        cr_assert_arr_eq(buf + 64 * i, ks, 64, "block %u", i);
    }
    fbw_err err;
    fbw_err_clear(&err);
    buf[192] = 0x5a;
    cr_assert_eq(fbw_cipher_apply(c, buf + 192, 1, &err), FBW_E_CRYPT);
    cr_assert(strstr(err.msg, "ChaCha counter overflow"), "%s", err.msg);
    cr_assert_eq(buf[192], 0x5a, "buffer must be untouched on overflow");
    /* Still refuses afterwards, and zero-length calls stay harmless. */
    cr_assert_eq(fbw_cipher_apply(c, buf, 1, &err), FBW_E_CRYPT);
    cr_assert_eq(fbw_cipher_apply(c, buf, 0, &err), FBW_OK);
    fbw_cipher_free(c);

    /* One call that would run past the end is refused as a whole. */
    c = make("ChaCha", K20, sizeof K20, iv, sizeof iv);
    memset(buf, 0, sizeof buf);
    cr_assert_eq(fbw_cipher_apply(c, buf, 193, &err), FBW_E_CRYPT);
    for (size_t i = 0; i < sizeof buf; i++)
        cr_assert_eq(buf[i], 0);
    apply_ok(c, buf, 192);
    fbw_cipher_free(c);
}

Test(crypt, chacha_counter_from_at_block_hook)
{
    fbw_cipher *c = NULL;
    fbw_err err;
    uint8_t key[32], buf[64] = {0}, ks[64];
    sha256(K20, sizeof K20, key);
    cr_assert_eq(fbw_cipher_new_at_block("ChaCha", K20, sizeof K20, IV16, 16, (uint64_t)1 << 32, &c,
                                         &err), FBW_E_USAGE);
    cr_assert_null(c);
    cr_assert_eq(fbw_cipher_new_at_block("ChaCha", K20, sizeof K20, IV16, 16, 0xfffffffeu, &c, &err),
                 FBW_OK);
    apply_ok(c, buf, sizeof buf);
    ref_block32(key, IV16, 0xfffffffeu, ks);
    cr_assert_arr_eq(buf, ks, 64);
    cr_assert_eq(fbw_cipher_apply(c, buf, 1, &err), FBW_E_CRYPT);
    fbw_cipher_free(c);
}

/* ---- stream behaviour ---- */

Test(crypt, odd_chunks_equal_one_call)
{
    static const char *plugins[] = {"Arc4", "ChaCha", "ChaCha64"};
    uint8_t plain[2000], once[2000], chunked[2000];
    fill(plain, sizeof plain, 3);
    for (int p = 0; p < 3; p++) {
        const uint8_t *iv = p == 1 ? IV16 : p == 2 ? IV8 : NULL;
        size_t ivlen = p == 1 ? 16 : p == 2 ? 8 : 0;
        fbw_cipher *a = make(plugins[p], K20, sizeof K20, iv, ivlen);
        fbw_cipher *b = make(plugins[p], K20, sizeof K20, iv, ivlen);
        memcpy(once, plain, sizeof plain);
        memcpy(chunked, plain, sizeof plain);
        apply_ok(a, once, sizeof once);
        size_t off = 0, step = 1;
        while (off < sizeof chunked) {
            size_t n = step < sizeof chunked - off ? step : sizeof chunked - off;
            apply_ok(b, chunked + off, n);
            off += n;
            step = step * 3 % 131 + 1; /* 1, 4, 13, 40, 121, 103, ... odd mixes */
        }
        cr_assert_arr_eq(once, chunked, sizeof once, "%s", plugins[p]);
        cr_assert(memcmp(once, plain, sizeof plain) != 0, "%s did nothing", plugins[p]);
        fbw_cipher_free(a);
        fbw_cipher_free(b);
    }
}

Test(crypt, two_directions_are_independent)
{
    static const char *plugins[] = {"Arc4", "ChaCha", "ChaCha64"};
    uint8_t x[500], y[300], x_alone[500], y_alone[300];
    for (int p = 0; p < 3; p++) {
        const uint8_t *iv = p == 1 ? IV16 : p == 2 ? IV8 : NULL;
        size_t ivlen = p == 1 ? 16 : p == 2 ? 8 : 0;
        fill(x, sizeof x, 11);
        fill(y, sizeof y, 12);
        memcpy(x_alone, x, sizeof x);
        memcpy(y_alone, y, sizeof y);
        fbw_cipher *ref = make(plugins[p], K20, sizeof K20, iv, ivlen);
        apply_ok(ref, x_alone, sizeof x_alone);
        fbw_cipher_free(ref);
        ref = make(plugins[p], K20, sizeof K20, iv, ivlen);
        apply_ok(ref, y_alone, sizeof y_alone);
        fbw_cipher_free(ref);
        /* Interleave send and receive: each must behave as if alone. */
        fbw_cipher *send = make(plugins[p], K20, sizeof K20, iv, ivlen);
        fbw_cipher *recv = make(plugins[p], K20, sizeof K20, iv, ivlen);
        apply_ok(send, x, 100);
        apply_ok(recv, y, 77);
        apply_ok(send, x + 100, 400);
        apply_ok(recv, y + 77, 223);
        cr_assert_arr_eq(x, x_alone, sizeof x, "%s send", plugins[p]);
        cr_assert_arr_eq(y, y_alone, sizeof y, "%s recv", plugins[p]);
        /* The peer's decryptor restores the plaintext. */
        fbw_cipher *peer = make(plugins[p], K20, sizeof K20, iv, ivlen);
        uint8_t back[500];
        memcpy(back, x, sizeof back);
        apply_ok(peer, back, 250);
        apply_ok(peer, back + 250, 250);
        fill(x, sizeof x, 11);
        cr_assert_arr_eq(back, x, sizeof x, "%s round trip", plugins[p]);
        fbw_cipher_free(send);
        fbw_cipher_free(recv);
        fbw_cipher_free(peer);
    }
}

/* ---- bad parameters ---- */

static int try_new(const char *plugin, const uint8_t *k, size_t klen, const uint8_t *iv, size_t ivlen,
                   fbw_err *err)
{
    fbw_cipher *c = (fbw_cipher *)&c; /* must be reset to NULL on failure */
    fbw_err_clear(err);
    int rc = fbw_cipher_new(plugin, k, klen, iv, ivlen, &c, err);
    if (rc == FBW_OK)
        fbw_cipher_free(c);
    else
        cr_assert_null(c);
    return rc;
}

Test(crypt, bad_parameters)
{
    fbw_err err;
    uint8_t big[300] = {0};
    cr_assert_eq(try_new("ChaCha", K20, 20, IV8, 8, &err), FBW_E_CRYPT);
    cr_assert(strstr(err.msg, "IV"), "%s", err.msg);
    cr_assert_eq(try_new("ChaCha64", K20, 20, IV16, 16, &err), FBW_E_CRYPT);
    cr_assert_eq(try_new("ChaCha64", K20, 20, NULL, 0, &err), FBW_E_CRYPT);
    cr_assert_eq(try_new("ChaCha", K20, 20, NULL, 0, &err), FBW_E_CRYPT);
    cr_assert_eq(try_new("ChaCha", K20, 20, IV16, 12, &err), FBW_OK); /* FB accepts a bare nonce */
    cr_assert_eq(try_new("ChaCha", K20, 15, IV16, 16, &err), FBW_E_CRYPT);
    cr_assert(strstr(err.msg, "too short"), "%s", err.msg);
    cr_assert_eq(try_new("ChaCha64", K20, 16, IV8, 8, &err), FBW_OK);
    cr_assert_eq(try_new("Arc4", K20, 0, NULL, 0, &err), FBW_E_CRYPT);
    cr_assert_eq(try_new("Arc4", big, 257, NULL, 0, &err), FBW_E_CRYPT);
    cr_assert_eq(try_new("Arc4", K20, 20, IV8, 8, &err), FBW_OK); /* iv ignored */
    cr_assert_eq(try_new("Foo", K20, 20, NULL, 0, &err), FBW_E_UNSUPPORTED);
    cr_assert(strstr(err.msg, "Foo"), "%s", err.msg);
    cr_assert_eq(try_new("arc4", K20, 20, NULL, 0, &err), FBW_E_UNSUPPORTED);
    cr_assert_eq(try_new(NULL, K20, 20, NULL, 0, &err), FBW_E_USAGE);
    fbw_cipher_free(NULL);
}

Test(crypt, key_bytes_never_in_messages)
{
    /* An error after the key was supplied must not echo it. */
    fbw_err err;
    uint8_t k[20];
    memset(k, 'Q', sizeof k);
    cr_assert_eq(try_new("ChaCha", k, sizeof k, IV8, 8, &err), FBW_E_CRYPT);
    cr_assert_null(strstr(err.msg, "QQQQ"), "%s", err.msg);
}

Test(crypt, host_default_context_untouched)
{
    /* fbwire loads the legacy provider into its own library context only. */
    if (OSSL_PROVIDER_available(NULL, "legacy"))
        cr_skip_test("this host's openssl.cnf already activates the legacy provider");
    ERR_clear_error();
    fbw_cipher *c = make("Arc4", K20, sizeof K20, NULL, 0);
    fbw_err err;
    cr_assert_eq(try_new("Foo", K20, 20, NULL, 0, &err), FBW_E_UNSUPPORTED);
    cr_assert_eq(ERR_peek_error(), 0, "the caller's OpenSSL error queue stays clean");
    cr_assert_eq(OSSL_PROVIDER_available(NULL, "legacy"), 0);
    ERR_set_mark();
    EVP_CIPHER *rc4 = EVP_CIPHER_fetch(NULL, "RC4", NULL);
    ERR_pop_to_mark();
    cr_assert_null(rc4, "RC4 must not leak into the process default context");
    fbw_cipher_free(c);
}
