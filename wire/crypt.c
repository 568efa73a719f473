/* SPDX-License-Identifier: MIT */
/* crypt.c - Firebird wire ciphers over OpenSSL EVP (RC4 from the legacy provider, ChaCha20). */
#include "crypt.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CHACHA_BLOCK 64u
#define ARC4_MAX_KEY 256u
#define CHACHA_MIN_KEY 16u /* Firebird's ChaCha plugin refuses shorter session keys */
/* EVP_EncryptUpdate takes an int length; feed it whole ChaCha blocks at a time. */
#define UPDATE_CHUNK ((size_t)1 << 30)

enum { KIND_ARC4, KIND_CHACHA, KIND_CHACHA64 };

struct fbw_cipher {
    EVP_CIPHER_CTX *ctx;
    const char *name;
    int counted;         /* ChaCha family: we track the block position ourselves */
    unsigned offset;     /* keystream bytes of `block` already used, 0..63 */
    uint64_t block;      /* counter of the block that supplies the next keystream byte */
    uint64_t last_block; /* last block Firebird's peer would still produce */
};

/* Process-wide, created once and never modified afterwards. A fresh OSSL_LIB_CTX costs ~0.5 ms
 * for the first fetch (method store population), a shared one ~1 us, so we share it; it is
 * fbwire's own context, so the host's default context and its configuration stay untouched. */
typedef struct crypt_lib {
    OSSL_LIB_CTX *libctx;
    EVP_CIPHER *rc4; /* NULL when the legacy provider cannot be loaded */
    EVP_CIPHER *chacha;
    EVP_MD *sha256;
} crypt_lib;

static crypt_lib lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_init(void)
{
    /* Keep whatever errors provider loading raises out of the caller's thread error queue. */
    ERR_set_mark();
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    if (ctx) {
        (void)OSSL_PROVIDER_load(ctx, "default");
        (void)OSSL_PROVIDER_load(ctx, "legacy");
        lib.chacha = EVP_CIPHER_fetch(ctx, "ChaCha20", NULL);
        lib.rc4 = EVP_CIPHER_fetch(ctx, "RC4", NULL);
        lib.sha256 = EVP_MD_fetch(ctx, "SHA2-256", NULL);
    }
    lib.libctx = ctx;
    ERR_pop_to_mark();
}

static const crypt_lib *lib_get(void)
{
    if (pthread_once(&lib_once, lib_init) != 0)
        return NULL;
    return &lib;
}

static int ossl_fail(fbw_err *err, const char *what)
{
    unsigned long e = ERR_peek_last_error();
    const char *why = e ? ERR_reason_error_string(e) : NULL;
    return fbw_err_set(err, FBW_E_CRYPT, "%s: %s", what, why ? why : "OpenSSL error");
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int arc4_init(fbw_cipher *c, const crypt_lib *l, const uint8_t *key, size_t key_len,
                     fbw_err *err)
{
    if (!l->rc4)
        return fbw_err_set(err, FBW_E_UNSUPPORTED,
                           "Arc4: RC4 unavailable (OpenSSL legacy provider not loadable)");
    if (key_len == 0 || key_len > ARC4_MAX_KEY)
        return fbw_err_set(err, FBW_E_CRYPT, "Arc4: session key length %zu not in 1..%u", key_len,
                           ARC4_MAX_KEY);
    /* RC4's key length is variable: set it before the key goes in. */
    if (!EVP_EncryptInit_ex2(c->ctx, l->rc4, NULL, NULL, NULL) ||
        !EVP_CIPHER_CTX_set_key_length(c->ctx, (int)key_len) ||
        !EVP_EncryptInit_ex2(c->ctx, NULL, key, NULL, NULL))
        return ossl_fail(err, "Arc4: cipher setup");
    return FBW_OK;
}

/* How cipher_create was asked to start: the test hooks override the counter or the key. */
typedef struct start_opts {
    int have_first;
    uint64_t first;
    int raw_key; /* key is the 32-byte ChaCha20 key itself */
} start_opts;

/* Map Firebird's (libtomcrypt's) IV layouts onto OpenSSL's 16-byte ChaCha20 IV, which is state
 * words 12..15: a 32-bit little-endian counter followed by 12 bytes loaded little-endian.
 * ChaCha:   word 12 = counter, words 13..15 = 12-byte nonce (RFC 8439).
 * ChaCha64: words 12..13 = 64-bit counter, words 14..15 = 8-byte nonce (original DJB layout).
 * OpenSSL carries word 12 into word 13 (proven in tests/wire/test_crypt.c), which is exactly the
 * 64-bit counter; for ChaCha the position tracking stops us before word 12 could wrap. */
static int chacha_iv(fbw_cipher *c, int kind, const uint8_t *iv, size_t iv_len,
                     const start_opts *o, uint8_t ossl_iv[16], fbw_err *err)
{
    if (kind == KIND_CHACHA64) {
        if (iv_len != 8 || !iv)
            return fbw_err_set(err, FBW_E_CRYPT, "ChaCha64: IV must be 8 bytes, got %zu", iv_len);
        uint64_t ctr = o->have_first ? o->first : 0;
        put_le32(ossl_iv, (uint32_t)ctr);
        put_le32(ossl_iv + 4, (uint32_t)(ctr >> 32));
        memcpy(ossl_iv + 8, iv, 8);
        c->block = ctr;
        c->last_block = UINT64_MAX - 1; /* libtomcrypt fails when the 64-bit counter wraps */
        return FBW_OK;
    }
    if ((iv_len != 16 && iv_len != 12) || !iv)
        return fbw_err_set(err, FBW_E_CRYPT, "ChaCha: IV must be 16 (or 12) bytes, got %zu", iv_len);
    uint64_t ctr = iv_len == 16 ? get_be32(iv + 12) : 0;
    if (o->have_first) {
        if (o->first > UINT32_MAX)
            return fbw_err_set(err, FBW_E_USAGE, "ChaCha: first block %llu beyond 32 bits",
                               (unsigned long long)o->first);
        ctr = o->first;
    }
    put_le32(ossl_iv, (uint32_t)ctr);
    memcpy(ossl_iv + 4, iv, 12);
    c->block = ctr;
    /* libtomcrypt generates block 2^32-1, sees the counter wrap and fails before using it. */
    c->last_block = UINT32_MAX - 1u;
    return FBW_OK;
}

static int chacha_init(fbw_cipher *c, const crypt_lib *l, int kind, const uint8_t *key,
                       size_t key_len, const uint8_t *iv, size_t iv_len, const start_opts *o,
                       fbw_err *err)
{
    uint8_t k[32], ossl_iv[16];
    unsigned int k_len = 0;
    int rc = FBW_OK;
    if (!l->chacha || !l->sha256) {
        rc = fbw_err_set(err, FBW_E_UNSUPPORTED, "%s: ChaCha20 or SHA-256 unavailable in OpenSSL",
                         c->name);
        goto out;
    }
    if (o->raw_key && (key_len != sizeof k || !key)) {
        rc = fbw_err_set(err, FBW_E_USAGE, "%s: raw key must be 32 bytes", c->name);
        goto out;
    }
    if (key_len < CHACHA_MIN_KEY || !key) {
        rc = fbw_err_set(err, FBW_E_CRYPT, "%s: session key too short (%zu bytes, need %u)",
                         c->name, key_len, CHACHA_MIN_KEY);
        goto out;
    }
    rc = chacha_iv(c, kind, iv, iv_len, o, ossl_iv, err);
    if (rc)
        goto out;
    if (o->raw_key)
        memcpy(k, key, sizeof k);
    else if (!EVP_Digest(key, key_len, k, &k_len, l->sha256, NULL) || k_len != sizeof k) {
        rc = ossl_fail(err, "SHA-256 of the session key");
        goto out;
    }
    if (!EVP_EncryptInit_ex2(c->ctx, l->chacha, k, ossl_iv, NULL))
        rc = ossl_fail(err, "ChaCha20: cipher setup");
    c->counted = 1;
out:
    OPENSSL_cleanse(k, sizeof k);
    OPENSSL_cleanse(ossl_iv, sizeof ossl_iv);
    return rc;
}

static int cipher_create(const char *plugin, const uint8_t *key, size_t key_len,
                         const uint8_t *iv, size_t iv_len, const start_opts *o, fbw_cipher **out,
                         fbw_err *err)
{
    fbw_cipher *c = NULL;
    const crypt_lib *l = NULL;
    int rc = FBW_OK;
    int kind;
    *out = NULL;
    ERR_set_mark();
    if (!plugin) {
        rc = fbw_err_set(err, FBW_E_USAGE, "wire crypt plugin name missing");
        goto out;
    }
    if (strcmp(plugin, "Arc4") == 0)
        kind = KIND_ARC4;
    else if (strcmp(plugin, "ChaCha") == 0)
        kind = KIND_CHACHA;
    else if (strcmp(plugin, "ChaCha64") == 0)
        kind = KIND_CHACHA64;
    else {
        rc = fbw_err_set(err, FBW_E_UNSUPPORTED, "unknown wire crypt plugin \"%.64s\"", plugin);
        goto out;
    }
    l = lib_get();
    if (!l || !l->libctx) {
        rc = fbw_err_set(err, FBW_E_CRYPT, "cannot create fbwire's OpenSSL library context");
        goto out;
    }
    c = calloc(1, sizeof *c);
    if (!c || !(c->ctx = EVP_CIPHER_CTX_new())) {
        rc = fbw_err_set(err, FBW_E_NOMEM, "out of memory creating %s cipher", plugin);
        goto out;
    }
    if (kind == KIND_ARC4) {
        c->name = "Arc4";
        rc = (o->have_first && o->first != 0) || o->raw_key
                 ? fbw_err_set(err, FBW_E_USAGE, "Arc4 has no block counter or derived key")
                 : arc4_init(c, l, key, key_len, err);
    } else {
        c->name = kind == KIND_CHACHA ? "ChaCha" : "ChaCha64";
        rc = chacha_init(c, l, kind, key, key_len, iv, iv_len, o, err);
    }
out:
    ERR_pop_to_mark();
    if (rc) {
        fbw_cipher_free(c);
        c = NULL;
    }
    *out = c;
    return rc;
}

int fbw_cipher_new(const char *plugin, const uint8_t *session_key, size_t key_len,
                   const uint8_t *iv, size_t iv_len, fbw_cipher **out, fbw_err *err)
{
    const start_opts o = {0, 0, 0};
    return cipher_create(plugin, session_key, key_len, iv, iv_len, &o, out, err);
}

int fbw_cipher_new_at_block(const char *plugin, const uint8_t *session_key, size_t key_len,
                            const uint8_t *iv, size_t iv_len, uint64_t first_block,
                            fbw_cipher **out, fbw_err *err)
{
    const start_opts o = {1, first_block, 0};
    return cipher_create(plugin, session_key, key_len, iv, iv_len, &o, out, err);
}

int fbw_cipher_new_raw_key(const char *plugin, const uint8_t key[32], const uint8_t *iv,
                           size_t iv_len, fbw_cipher **out, fbw_err *err)
{
    const start_opts o = {0, 0, 1};
    return cipher_create(plugin, key, 32, iv, iv_len, &o, out, err);
}

/* Advance the ChaCha block position by n bytes, refusing to need a block past last_block. */
static int chacha_advance(fbw_cipher *c, size_t n, fbw_err *err)
{
    uint64_t q = n / CHACHA_BLOCK;
    unsigned t = c->offset + (unsigned)(n % CHACHA_BLOCK); /* 0..126 */
    /* Blocks after the current one that hold the last byte of this call. */
    uint64_t extra = t == 0 ? q - 1 : q + (t - 1) / CHACHA_BLOCK;
    if (c->block > c->last_block || extra > c->last_block - c->block)
        return fbw_err_set(err, FBW_E_CRYPT,
                           "%s counter overflow: keystream exhausted, reconnect to continue",
                           c->name);
    c->block += q + t / CHACHA_BLOCK;
    c->offset = t % CHACHA_BLOCK;
    return FBW_OK;
}

int fbw_cipher_apply(fbw_cipher *c, uint8_t *buf, size_t n, fbw_err *err)
{
    if (n == 0)
        return FBW_OK;
    if (c->counted) {
        int rc = chacha_advance(c, n, err);
        if (rc)
            return rc;
    }
    while (n > 0) {
        size_t chunk = n < UPDATE_CHUNK ? n : UPDATE_CHUNK;
        int outl = 0;
        if (!EVP_EncryptUpdate(c->ctx, buf, &outl, buf, (int)chunk) || (size_t)outl != chunk)
            return ossl_fail(err, c->name);
        buf += chunk;
        n -= chunk;
    }
    return FBW_OK;
}

const char *fbw_cipher_name(const fbw_cipher *c) { return c->name; }

void fbw_cipher_free(fbw_cipher *c)
{
    if (!c)
        return;
    EVP_CIPHER_CTX_free(c->ctx); /* cleanses the key schedule */
    OPENSSL_cleanse(c, sizeof *c);
    free(c);
}
