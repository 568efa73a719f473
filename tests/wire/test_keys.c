/* SPDX-License-Identifier: MIT */
/* test_keys.c - server key clumplets: parsing, accumulation, plugin choice, malformed input. */
#include <criterion/criterion.h>

#include "crypt.h"
#include "keys.h"

#include <string.h>

/* Captured from Firebird 3.0.11. */
static const uint8_t FB3[] = {0x00, 0x09, 'S', 'y', 'm', 'm', 'e', 't', 'r', 'i', 'c',
                              0x01, 0x04, 'A', 'r', 'c', '4'};

static const uint8_t IV64[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static const uint8_t IV16[16] = {9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 0, 0, 0, 0};

/* Firebird >= 4.0.1 default, built byte by byte as extractNewKeys does. */
static size_t fb4_keys(uint8_t *p)
{
    size_t n = 0;
    p[n++] = 0x00; p[n++] = 9; memcpy(p + n, "Symmetric", 9); n += 9;
    p[n++] = 0x01; p[n++] = 0x14; memcpy(p + n, "ChaCha64 ChaCha Arc4", 20); n += 20;
    p[n++] = 0x03; p[n++] = 0x11; memcpy(p + n, "ChaCha64\0", 9); n += 9;
    memcpy(p + n, IV64, 8); n += 8;
    p[n++] = 0x03; p[n++] = 0x17; memcpy(p + n, "ChaCha\0", 7); n += 7;
    memcpy(p + n, IV16, 16); n += 16;
    return n;
}

static void add_ok(fbw_server_keys *k, const uint8_t *p, size_t n)
{
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_keys_add(k, p, n, &err), FBW_OK, "%s", err.msg);
}

static const char *choose_ok(const fbw_server_keys *k, const char *list, const uint8_t **iv,
                             size_t *iv_len)
{
    const char *plugin = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_keys_choose(k, list, &plugin, iv, iv_len, &err), FBW_OK, "%s", err.msg);
    cr_assert_not_null(plugin);
    return plugin;
}

Test(keys, fb3_capture_gives_arc4)
{
    fbw_server_keys k;
    fbw_keys_init(&k);
    add_ok(&k, FB3, sizeof FB3);
    cr_assert_eq(k.nkeys, 1);
    cr_assert_eq(k.keys[0].nplugins, 1);
    const uint8_t *iv;
    size_t iv_len;
    cr_assert_str_eq(choose_ok(&k, FBW_CRYPT_DEFAULT_LIST, &iv, &iv_len), "Arc4");
    cr_assert_null(iv);
    cr_assert_eq(iv_len, 0);
    cr_assert_null(fbw_keys_known_plugins(&k));
}

Test(keys, fb4_default_prefers_chacha64_with_its_iv)
{
    uint8_t buf[128];
    size_t n = fb4_keys(buf);
    cr_assert_eq(n, 11 + 22 + 19 + 25);
    fbw_server_keys k;
    fbw_keys_init(&k);
    add_ok(&k, buf, n);
    cr_assert_eq(k.keys[0].nplugins, 3);
    cr_assert_eq(k.nspecific, 2);
    const uint8_t *iv;
    size_t iv_len;
    cr_assert_str_eq(choose_ok(&k, FBW_CRYPT_DEFAULT_LIST, &iv, &iv_len), "ChaCha64");
    cr_assert_eq(iv_len, 8);
    cr_assert_arr_eq(iv, IV64, 8);
    /* Client preference decides, separators vary. */
    cr_assert_str_eq(choose_ok(&k, "ChaCha;\tChaCha64", &iv, &iv_len), "ChaCha");
    cr_assert_eq(iv_len, 16);
    cr_assert_arr_eq(iv, IV16, 16);
    cr_assert_str_eq(choose_ok(&k, " Arc4 , ChaCha", &iv, &iv_len), "Arc4");
    cr_assert_null(iv);
    /* Names are exact: no prefix or case matches. */
    cr_assert_str_eq(choose_ok(&k, "Cha,chacha64,ChaCha6,Arc4", &iv, &iv_len), "Arc4");
    /* The chosen IV really builds a cipher. */
    static const uint8_t key[20] = {1};
    fbw_cipher *c = NULL;
    fbw_err err;
    const char *p = choose_ok(&k, FBW_CRYPT_DEFAULT_LIST, &iv, &iv_len);
    cr_assert_eq(fbw_cipher_new(p, key, sizeof key, iv, iv_len, &c, &err), FBW_OK, "%s", err.msg);
    fbw_cipher_free(c);
}

Test(keys, every_strict_prefix_is_truncated)
{
    uint8_t buf[128];
    size_t n = fb4_keys(buf);
    /* Clumplet boundaries: 0, 11, 33, 52, 77 (=n). Anything else cuts one. */
    for (size_t cut = 0; cut < n; cut++) {
        fbw_server_keys k;
        fbw_keys_init(&k);
        fbw_err err;
        fbw_err_clear(&err);
        int rc = fbw_keys_add(&k, buf, cut, &err);
        int boundary = cut == 0 || cut == 11 || cut == 33 || cut == 52;
        if (boundary) {
            cr_assert_eq(rc, FBW_OK, "cut %zu: %s", cut, err.msg);
        } else {
            cr_assert_eq(rc, FBW_E_PROTO, "cut %zu", cut);
            cr_assert(strstr(err.msg, "truncated"), "%s", err.msg);
            cr_assert_eq(k.nkeys, 0, "failed add leaves no keys (cut %zu)", cut);
            cr_assert_eq(k.used, 0);
        }
    }
}

Test(keys, chacha_without_iv_is_skipped)
{
    /* Protocol < 16: the server lists ChaCha plugins but sends no IVs. */
    static const uint8_t p15[] = {0x00, 9, 'S', 'y', 'm', 'm', 'e', 't', 'r', 'i', 'c',
                                  0x01, 20, 'C', 'h', 'a', 'C', 'h', 'a', '6', '4', ' ', 'C', 'h',
                                  'a', 'C', 'h', 'a', ' ', 'A', 'r', 'c', '4'};
    fbw_server_keys k;
    fbw_keys_init(&k);
    add_ok(&k, p15, sizeof p15);
    const uint8_t *iv;
    size_t iv_len;
    cr_assert_str_eq(choose_ok(&k, FBW_CRYPT_DEFAULT_LIST, &iv, &iv_len), "Arc4");
    /* Without Arc4 on the client side nothing fits, and the message says why. */
    const char *plugin = (const char *)1;
    fbw_err err;
    cr_assert_eq(fbw_keys_choose(&k, "ChaCha64,ChaCha", &plugin, &iv, &iv_len, &err),
                 FBW_E_UNSUPPORTED);
    cr_assert_null(plugin);
    cr_assert(strstr(err.msg, "client offers [ChaCha64,ChaCha]"), "%s", err.msg);
    cr_assert(strstr(err.msg, "Symmetric: [ChaCha64 (no IV) ChaCha (no IV) Arc4]"), "%s", err.msg);
}

Test(keys, specific_data_without_nul_is_ignored)
{
    /* As in Firebird's addServerKeys: no '\0', or nothing after it, means no specific data. */
    uint8_t buf[128];
    size_t n = 0;
    buf[n++] = 0; buf[n++] = 9; memcpy(buf + n, "Symmetric", 9); n += 9;
    buf[n++] = 1; buf[n++] = 8; memcpy(buf + n, "ChaCha64", 8); n += 8;
    buf[n++] = 3; buf[n++] = 16; memcpy(buf + n, "ChaCha64", 8); memcpy(buf + n + 8, IV64, 8); n += 16;
    buf[n++] = 3; buf[n++] = 9; memcpy(buf + n, "ChaCha64\0", 9); n += 9;
    fbw_server_keys k;
    fbw_keys_init(&k);
    add_ok(&k, buf, n);
    cr_assert_eq(k.nspecific, 0);
    const char *plugin;
    const uint8_t *iv;
    size_t iv_len;
    fbw_err err;
    cr_assert_eq(fbw_keys_choose(&k, FBW_CRYPT_DEFAULT_LIST, &plugin, &iv, &iv_len, &err),
                 FBW_E_UNSUPPORTED);
    /* A later, well-formed IV for the same key type arrives in another packet: new key entry. */
    size_t m = 0;
    uint8_t more[64];
    more[m++] = 0; more[m++] = 9; memcpy(more + m, "Symmetric", 9); m += 9;
    more[m++] = 1; more[m++] = 8; memcpy(more + m, "ChaCha64", 8); m += 8;
    more[m++] = 3; more[m++] = 17; memcpy(more + m, "ChaCha64\0", 9); memcpy(more + m + 9, IV64, 8); m += 17;
    add_ok(&k, more, m);
    cr_assert_str_eq(choose_ok(&k, FBW_CRYPT_DEFAULT_LIST, &iv, &iv_len), "ChaCha64");
    cr_assert_arr_eq(iv, IV64, 8);
}

Test(keys, specific_before_any_key_is_an_error)
{
    static const uint8_t bad[] = {0x03, 0x05, 'A', 'r', 'c', '4', 0};
    static const uint8_t type_only[] = {0x00, 0x03, 'a', 'b', 'c', 0x03, 0x03, 'x', 0, 1};
    fbw_server_keys k;
    fbw_keys_init(&k);
    fbw_err err;
    cr_assert_eq(fbw_keys_add(&k, bad, sizeof bad, &err), FBW_E_PROTO);
    cr_assert(strstr(err.msg, "before any key"), "%s", err.msg);
    cr_assert_eq(fbw_keys_add(&k, type_only, sizeof type_only, &err), FBW_E_PROTO);
    /* A key from an earlier packet does not adopt it either (Firebird scopes it per packet). */
    add_ok(&k, FB3, sizeof FB3);
    cr_assert_eq(fbw_keys_add(&k, bad, sizeof bad, &err), FBW_E_PROTO);
    cr_assert_eq(k.nkeys, 1);
    cr_assert_eq(k.nspecific, 0);
}

Test(keys, accumulates_across_packets_and_other_types)
{
    /* Another key type first (no client key matches it), then Symmetric in a second packet,
     * plus the server's auth plugin list and an unknown tag. */
    static const uint8_t p1[] = {0x00, 4, 'O', 't', 'h', 'r', 0x01, 4, 'A', 'r', 'c', '4',
                                 0x02, 11, 'S', 'r', 'p', '2', '5', '6', ',', ' ', 'S', 'r', 'p',
                                 0x07, 0};
    fbw_server_keys k;
    fbw_keys_init(&k);
    add_ok(&k, p1, sizeof p1);
    cr_assert_str_eq(fbw_keys_known_plugins(&k), "Srp256, Srp");
    const char *plugin;
    const uint8_t *iv;
    size_t iv_len;
    fbw_err err;
    cr_assert_eq(fbw_keys_choose(&k, "Arc4", &plugin, &iv, &iv_len, &err), FBW_E_UNSUPPORTED);
    cr_assert(strstr(err.msg, "Othr: [Arc4]"), "%s", err.msg);
    add_ok(&k, FB3, sizeof FB3);
    cr_assert_eq(k.nkeys, 2);
    cr_assert_str_eq(choose_ok(&k, "Arc4", &iv, &iv_len), "Arc4");
    /* Key type missing in a packet: Firebird uses an empty type, which never matches. */
    static const uint8_t no_type[] = {0x01, 4, 'A', 'r', 'c', '4'};
    fbw_keys_init(&k);
    add_ok(&k, no_type, sizeof no_type);
    cr_assert_eq(fbw_keys_choose(&k, "Arc4", &plugin, &iv, &iv_len, &err), FBW_E_UNSUPPORTED);
    /* Nothing at all. */
    fbw_keys_init(&k);
    add_ok(&k, NULL, 0);
    cr_assert_eq(fbw_keys_choose(&k, NULL, &plugin, &iv, &iv_len, &err), FBW_E_UNSUPPORTED);
    cr_assert(strstr(err.msg, "no keys"), "%s", err.msg);
}

Test(keys, caps_are_enforced_atomically)
{
    /* Too many keys for the fixed record: the packet that overflows is rejected whole. */
    fbw_server_keys k;
    fbw_keys_init(&k);
    for (int i = 0; i < FBW_KEYS_MAX; i++)
        add_ok(&k, FB3, sizeof FB3);
    size_t used = k.used;
    fbw_err err;
    cr_assert_eq(fbw_keys_add(&k, FB3, sizeof FB3, &err), FBW_E_PROTO);
    cr_assert(strstr(err.msg, "too many"), "%s", err.msg);
    cr_assert_eq(k.nkeys, FBW_KEYS_MAX);
    cr_assert_eq(k.used, used);
    /* Arena exhaustion with long lists. */
    uint8_t big[2 + 255];
    big[0] = 1;
    big[1] = 255;
    for (int i = 0; i < 255; i++)
        big[2 + i] = (uint8_t)(i % 4 == 3 ? ' ' : 'a' + i % 26);
    fbw_keys_init(&k);
    int rc = FBW_OK;
    for (int i = 0; i < 8 && rc == FBW_OK; i++)
        rc = fbw_keys_add(&k, big, sizeof big, &err);
    cr_assert_eq(rc, FBW_E_PROTO);
    cr_assert_leq(k.used, FBW_KEYS_ARENA);
}
