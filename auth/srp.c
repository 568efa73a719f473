/* SPDX-License-Identifier: MIT */
/* srp.c - Firebird's SRP client (plugins Srp, Srp224, Srp256, Srp384, Srp512), OpenSSL BIGNUM.
 *
 * Follows FB src/auth/SecureRemotePassword/srp.cpp and client/SrpClient.cpp as described in
 * docs/protocol/auth.md §5: SHA-1 everywhere except the final proof, numbers hashed as minimal
 * big-endian bytes, the salt hashed as the hex text the server sent, hex output upper-case
 * without leading zeros. Secrets (a, x, S, K and every temporary derived from them) live in
 * secure BIGNUMs flagged constant-time and are cleared before they are freed. */
#include "auth_internal.h"
#include "srp_internal.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <string.h>

struct fbw_srp_client {
    fbw_srp_group grp;
    BIGNUM *a; /* private key, secret */
    BIGNUM *A; /* public key g^a mod N */
    int a_fixed; /* set by the test hook: do not draw a random key */
};

/* ---- small helpers ---------------------------------------------------------------------- */

/* A digest with a sticky error, so a hash over several parts is checked once at the end. */
typedef struct hasher {
    EVP_MD_CTX *ctx;
    int ok;
} hasher;

static void h_begin(hasher *h, const EVP_MD *md)
{
    h->ctx = EVP_MD_CTX_new();
    h->ok = h->ctx && EVP_DigestInit_ex(h->ctx, md, NULL) == 1;
}

static void h_data(hasher *h, const void *p, size_t n)
{
    if (h->ok && n > 0)
        h->ok = EVP_DigestUpdate(h->ctx, p, n) == 1;
}

static void h_num(hasher *h, const BIGNUM *x)
{
    uint8_t buf[FBW_SRP_NUM_MAX];
    size_t n = 0;
    if (h->ok && fbw_srp_bytes(x, buf, sizeof buf, &n) != FBW_OK)
        h->ok = 0;
    h_data(h, buf, n);
    OPENSSL_cleanse(buf, sizeof buf); /* S passes through here */
}

/* Finish into out (EVP_MAX_MD_SIZE bytes); frees the context in every case. */
static int h_end(hasher *h, uint8_t *out, size_t *len)
{
    unsigned int n = 0;
    if (h->ok)
        h->ok = EVP_DigestFinal_ex(h->ctx, out, &n) == 1;
    EVP_MD_CTX_free(h->ctx);
    h->ctx = NULL;
    if (len)
        *len = n;
    return h->ok ? FBW_OK : FBW_E_NOMEM;
}

/* Finish and read the digest as an unsigned big-endian integer. */
static int h_end_num(hasher *h, BIGNUM *x)
{
    uint8_t md[EVP_MAX_MD_SIZE];
    size_t n = 0;
    int rc = h_end(h, md, &n);
    if (rc == FBW_OK && !BN_bin2bn(md, (int)n, x))
        rc = FBW_E_NOMEM;
    OPENSSL_cleanse(md, sizeof md);
    return rc;
}

static BIGNUM *secret_bn(void)
{
    BIGNUM *x = BN_secure_new();
    if (x)
        BN_set_flags(x, BN_FLG_CONSTTIME);
    return x;
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Index of the first non-hex byte, or n when all are hex digits. */
static size_t bad_hex_at(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n && hexval(p[i]) >= 0)
        i++;
    return i;
}

/* ---- numbers ------------------------------------------------------------------------------ */

int fbw_srp_bytes(const BIGNUM *x, uint8_t *out, size_t cap, size_t *len)
{
    /* BN_bn2bin writes exactly BN_num_bytes bytes, which is already the minimal form. */
    size_t n = (size_t)BN_num_bytes(x);
    if (n > cap)
        return FBW_E_USAGE;
    if (BN_bn2bin(x, out) != (int)n)
        return FBW_E_NOMEM;
    *len = n;
    return FBW_OK;
}

int fbw_srp_hex(const BIGNUM *x, char *out, size_t cap)
{
    static const char digits[] = "0123456789ABCDEF";
    uint8_t buf[FBW_SRP_NUM_MAX];
    size_t n = 0, o = 0;
    int rc = fbw_srp_bytes(x, buf, sizeof buf, &n);
    if (rc != FBW_OK)
        return rc;
    if (cap < 2 * n + 1 || cap < 2)
        return FBW_E_USAGE;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 || buf[i] >> 4) /* only the first byte can carry a leading zero nibble */
            out[o++] = digits[buf[i] >> 4];
        out[o++] = digits[buf[i] & 15];
    }
    if (o == 0)
        out[o++] = '0';
    out[o] = '\0';
    return FBW_OK;
}

int fbw_srp_parse_hex(const uint8_t *p, size_t n, const char *what, BIGNUM **x, fbw_err *err)
{
    uint8_t bin[FBW_SRP_NUM_MAX];
    size_t bad = bad_hex_at(p, n), nb = (n + 1) / 2, i = 0, j = 0;
    int rc = FBW_OK;
    if (n == 0)
        return fbw_err_set(err, FBW_E_AUTH, "SRP: %s is empty", what);
    if (bad < n)
        return fbw_err_set(err, FBW_E_AUTH, "SRP: %s has a non-hex byte 0x%02X at offset %zu",
                           what, p[bad], bad);
    if (nb > sizeof bin)
        return fbw_err_set(err, FBW_E_AUTH, "SRP: %s has %zu hex digits, at most %d allowed",
                           what, n, 2 * FBW_SRP_NUM_MAX);
    if (n % 2) /* an odd count: the first digit stands alone in the first byte */
        bin[i++] = (uint8_t)hexval(p[j++]);
    for (; j < n; j += 2)
        bin[i++] = (uint8_t)(hexval(p[j]) << 4 | hexval(p[j + 1]));
    if (!*x)
        *x = BN_new();
    if (!*x || !BN_bin2bn(bin, (int)nb, *x))
        rc = fbw_err_set(err, FBW_E_NOMEM, "SRP: out of memory parsing %s", what);
    return rc;
}

int fbw_srp_parse_server_data(const uint8_t *in, size_t len, fbw_bytes *salt, fbw_bytes *key,
                              fbw_err *err)
{
    fbw_rd r;
    fbw_bytes lb;
    size_t salt_len, key_len, bad;
    if (!in || len == 0)
        return fbw_err_set(err, FBW_E_AUTH, "SRP: server sent no salt and key (empty data)");
    if (len > FBW_SRP_DATA_MAX)
        return fbw_err_set(err, FBW_E_AUTH, "SRP: server data is %zu bytes, at most %d allowed",
                           len, FBW_SRP_DATA_MAX);
    fbw_rd_init(&r, in, len, FBW_E_PROTO);
    lb = fbw_xdr_raw(&r, 2);
    if (r.rc != FBW_OK)
        return fbw_err_set(err, FBW_E_AUTH, "SRP: server data (%zu bytes) too short for the salt "
                           "length", len);
    salt_len = fbw_le16(lb.p);
    if (salt_len > FBW_SRP_SALT_MAX)
        return fbw_err_set(err, FBW_E_AUTH, "SRP: salt length %zu exceeds %d", salt_len,
                           FBW_SRP_SALT_MAX);
    *salt = fbw_xdr_raw(&r, salt_len);
    lb = fbw_xdr_raw(&r, 2);
    if (r.rc != FBW_OK)
        return fbw_err_set(err, FBW_E_AUTH, "SRP: server data (%zu bytes) truncated: salt length "
                           "%zu leaves no room for the key length", len, salt_len);
    key_len = fbw_le16(lb.p);
    if (key_len != fbw_rd_left(&r))
        return fbw_err_set(err, FBW_E_AUTH, "SRP: key length %zu does not match the %zu bytes "
                           "left in the server data", key_len, fbw_rd_left(&r));
    *key = fbw_xdr_raw(&r, key_len);
    bad = bad_hex_at(salt->p, salt->n);
    if (bad < salt->n)
        return fbw_err_set(err, FBW_E_AUTH, "SRP: salt has a non-hex byte 0x%02X at offset %zu",
                           salt->p[bad], bad);
    if (key->n == 0)
        return fbw_err_set(err, FBW_E_AUTH, "SRP: server public key is empty");
    bad = bad_hex_at(key->p, key->n);
    if (bad < key->n)
        return fbw_err_set(err, FBW_E_AUTH, "SRP: server public key has a non-hex byte 0x%02X "
                           "at offset %zu", key->p[bad], bad);
    return FBW_OK;
}

/* ---- the group and the formulas of §5.5 ------------------------------------------------ */

void fbw_srp_group_clear(fbw_srp_group *grp)
{
    BN_free(grp->N);
    BN_free(grp->g);
    BN_free(grp->k);
    grp->N = grp->g = grp->k = NULL;
}

int fbw_srp_group_init(fbw_srp_group *grp)
{
    static const uint8_t zeros[FBW_SRP_N_BYTES];
    hasher h;
    int rc = FBW_E_NOMEM;
    grp->N = BN_new();
    grp->g = BN_new();
    grp->k = BN_new();
    if (!grp->N || !grp->g || !grp->k || !BN_hex2bn(&grp->N, FBW_SRP_N_HEX) ||
        !BN_set_word(grp->g, 2))
        goto out;
    /* k hashes g left-padded to the length of N (srp.cpp RemoteGroup). */
    h_begin(&h, EVP_sha1());
    h_num(&h, grp->N);
    h_data(&h, zeros, (size_t)(BN_num_bytes(grp->N) - BN_num_bytes(grp->g)));
    h_num(&h, grp->g);
    rc = h_end_num(&h, grp->k);
out:
    if (rc != FBW_OK)
        fbw_srp_group_clear(grp);
    return rc;
}

int fbw_srp_user_hash(const char *login, const uint8_t *salt, size_t salt_len,
                      const char *password, size_t password_len, BIGNUM *x)
{
    uint8_t inner[EVP_MAX_MD_SIZE];
    size_t inner_len = 0;
    hasher h;
    int rc;
    h_begin(&h, EVP_sha1());
    h_data(&h, login, strlen(login));
    h_data(&h, ":", 1);
    h_data(&h, password, password_len);
    rc = h_end(&h, inner, &inner_len);
    if (rc == FBW_OK) {
        h_begin(&h, EVP_sha1());
        h_data(&h, salt, salt_len);
        h_data(&h, inner, inner_len);
        rc = h_end_num(&h, x);
    }
    OPENSSL_cleanse(inner, sizeof inner);
    return rc;
}

int fbw_srp_scramble(const BIGNUM *A, const BIGNUM *B, BIGNUM *u)
{
    hasher h;
    h_begin(&h, EVP_sha1());
    h_num(&h, A);
    h_num(&h, B);
    return h_end_num(&h, u);
}

int fbw_srp_session_key(const fbw_srp_group *grp, const BIGNUM *a, const BIGNUM *B,
                        const BIGNUM *u, const BIGNUM *x, uint8_t K[FBW_SRP_K_BYTES])
{
    BN_CTX *ctx = BN_CTX_secure_new();
    BIGNUM *gx = secret_bn(), *kgx = secret_bn(), *diff = secret_bn();
    BIGNUM *ux = secret_bn(), *aux = secret_bn(), *S = secret_bn();
    uint8_t md[EVP_MAX_MD_SIZE];
    size_t md_len = 0;
    hasher h;
    int rc = FBW_E_NOMEM;
    if (!ctx || !gx || !kgx || !diff || !ux || !aux || !S)
        goto out;
    /* x and a + ux are secret exponents: BN_mod_exp picks the constant-time path for them
     * because their BN_FLG_CONSTTIME is set (x is the caller's; gx etc. carry it). */
    if (!BN_mod_exp(gx, grp->g, x, grp->N, ctx) ||       /* g^x */
        !BN_mod_mul(kgx, grp->k, gx, grp->N, ctx) ||     /* k*g^x */
        !BN_mod_sub(diff, B, kgx, grp->N, ctx) ||        /* B - k*g^x, in [0, N) */
        !BN_mod_mul(ux, u, x, grp->N, ctx) ||            /* u*x mod N (FB reduces by N, not N-1) */
        !BN_mod_add(aux, a, ux, grp->N, ctx) ||          /* a + u*x mod N */
        !BN_mod_exp(S, diff, aux, grp->N, ctx))
        goto out;
    h_begin(&h, EVP_sha1());
    h_num(&h, S);
    rc = h_end(&h, md, &md_len);
    if (rc == FBW_OK)
        memcpy(K, md, FBW_SRP_K_BYTES);
out:
    OPENSSL_cleanse(md, sizeof md);
    BN_clear_free(gx);
    BN_clear_free(kgx);
    BN_clear_free(diff);
    BN_clear_free(ux);
    BN_clear_free(aux);
    BN_clear_free(S);
    BN_CTX_free(ctx);
    return rc;
}

int fbw_srp_n1(const fbw_srp_group *grp, BIGNUM *n1)
{
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *hn = BN_new(), *hg = BN_new();
    hasher h;
    int rc = FBW_E_NOMEM;
    if (!ctx || !hn || !hg)
        goto out;
    h_begin(&h, EVP_sha1());
    h_num(&h, grp->N);
    rc = h_end_num(&h, hn);
    if (rc == FBW_OK) {
        h_begin(&h, EVP_sha1());
        h_num(&h, grp->g);
        rc = h_end_num(&h, hg);
    }
    /* Firebird raises H(N) to the power H(g) where RFC 5054 xors them. */
    if (rc == FBW_OK && !BN_mod_exp(n1, hn, hg, grp->N, ctx))
        rc = FBW_E_NOMEM;
out:
    BN_free(hn);
    BN_free(hg);
    BN_CTX_free(ctx);
    return rc;
}

int fbw_srp_n2(const char *login, BIGNUM *n2)
{
    hasher h;
    h_begin(&h, EVP_sha1());
    h_data(&h, login, strlen(login));
    return h_end_num(&h, n2);
}

int fbw_srp_proof(const EVP_MD *md, const BIGNUM *n1, const BIGNUM *n2, const uint8_t *salt,
                  size_t salt_len, const BIGNUM *A, const BIGNUM *B, const uint8_t *K,
                  size_t K_len, uint8_t *M_out, size_t *M_len)
{
    hasher h;
    h_begin(&h, md);
    h_num(&h, n1);
    h_num(&h, n2);
    h_data(&h, salt, salt_len);
    h_num(&h, A);
    h_num(&h, B);
    h_data(&h, K, K_len);
    return h_end(&h, M_out, M_len);
}

/* ---- the plugin ------------------------------------------------------------------------- */

void fbw_srp_free(struct fbw_srp_client *c)
{
    if (!c)
        return;
    fbw_srp_group_clear(&c->grp);
    BN_clear_free(c->a);
    BN_free(c->A);
    OPENSSL_clear_free(c, sizeof *c);
}

int fbw_srp_start(fbw_auth *a, fbw_err *err)
{
    struct fbw_srp_client *c = OPENSSL_zalloc(sizeof *c);
    int rc = FBW_E_NOMEM;
    if (!c)
        goto out;
    c->a = secret_bn();
    c->A = BN_new();
    if (!c->a || !c->A)
        goto out;
    rc = fbw_srp_group_init(&c->grp);
out:
    if (rc != FBW_OK) {
        fbw_srp_free(c);
        return fbw_err_set(err, rc, "SRP: out of memory setting up the group");
    }
    a->srp = c;
    return FBW_OK;
}

int fbw_srp_set_private(fbw_auth *a, const char *a_hex, fbw_err *err)
{
    BIGNUM *v = NULL;
    BN_CTX *ctx = NULL;
    int rc;
    if (!a || a->kind != FBW_AUTH_SRP || a->state != FBW_AUTH_START || !a_hex)
        return fbw_err_set(err, FBW_E_USAGE, "SRP: a private key can only be fixed before phase 1");
    rc = fbw_srp_parse_hex((const uint8_t *)a_hex, strlen(a_hex), "private key", &v, err);
    if (rc == FBW_OK) {
        ctx = BN_CTX_new();
        if (!ctx || !BN_nnmod(a->srp->a, v, a->srp->grp.N, ctx))
            rc = fbw_err_set(err, FBW_E_NOMEM, "SRP: out of memory fixing the private key");
    }
    if (rc == FBW_OK && BN_is_zero(a->srp->a))
        rc = fbw_err_set(err, FBW_E_USAGE, "SRP: private key is 0 mod N");
    if (rc == FBW_OK)
        a->srp->a_fixed = 1;
    BN_CTX_free(ctx);
    BN_clear_free(v);
    return rc;
}

/* Phase 1: a random (unless fixed), A = g^a mod N, output hex(A). */
static int phase1(fbw_auth *a, fbw_err *err)
{
    struct fbw_srp_client *c = a->srp;
    BN_CTX *ctx = BN_CTX_secure_new();
    int rc = ctx ? FBW_OK : FBW_E_NOMEM;
    /* A <= 1 would make the exchange trivial; srp.cpp draws again. A fixed a cannot. */
    for (int drawn = !ctx; !drawn;) {
        drawn = 1;
        if ((!c->a_fixed && !BN_priv_rand_range(c->a, c->grp.N)) ||
            !BN_mod_exp(c->A, c->grp.g, c->a, c->grp.N, ctx))
            rc = fbw_err_set(err, FBW_E_NOMEM, "SRP: OpenSSL failed computing A");
        else if (BN_cmp(c->A, BN_value_one()) > 0)
            rc = fbw_srp_hex(c->A, (char *)a->out, sizeof a->out);
        else if (c->a_fixed)
            rc = fbw_err_set(err, FBW_E_USAGE, "SRP: the fixed private key gives A <= 1");
        else
            drawn = 0;
    }
    if (rc == FBW_E_NOMEM && !ctx)
        fbw_err_set(err, rc, "SRP: out of memory computing A");
    if (rc == FBW_OK)
        a->out_len = strlen((char *)a->out);
    BN_CTX_free(ctx);
    return rc;
}

/* True when B mod N < 2 (Firebird's "Trivial public key"). */
static int trivial_key(const BIGNUM *B, const BIGNUM *N, int *trivial)
{
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *r = BN_new();
    int rc = FBW_E_NOMEM;
    if (ctx && r && BN_nnmod(r, B, N, ctx)) {
        *trivial = BN_is_zero(r) || BN_is_one(r);
        rc = FBW_OK;
    }
    BN_free(r);
    BN_CTX_free(ctx);
    return rc;
}

/* Phase 2 once B is parsed and accepted: K, n1, n2, M; output hex(M), keep K. */
static int phase2_math(fbw_auth *a, const fbw_bytes *salt, const BIGNUM *B)
{
    struct fbw_srp_client *c = a->srp;
    BIGNUM *u = BN_new(), *x = secret_bn(), *n1 = BN_new(), *n2 = BN_new(), *m = BN_new();
    uint8_t K[FBW_SRP_K_BYTES], M[EVP_MAX_MD_SIZE];
    size_t M_len = 0;
    int rc = FBW_E_NOMEM;
    if (!u || !x || !n1 || !n2 || !m)
        goto out;
    rc = fbw_srp_scramble(c->A, B, u);
    if (rc == FBW_OK)
        rc = fbw_srp_user_hash(a->login, salt->p, salt->n, a->password, a->password_len, x);
    if (rc == FBW_OK)
        rc = fbw_srp_session_key(&c->grp, c->a, B, u, x, K);
    if (rc == FBW_OK)
        rc = fbw_srp_n1(&c->grp, n1);
    if (rc == FBW_OK)
        rc = fbw_srp_n2(a->login, n2);
    if (rc == FBW_OK)
        rc = fbw_srp_proof(a->proof_md, n1, n2, salt->p, salt->n, c->A, B, K, sizeof K, M,
                           &M_len);
    /* hex(int(M)): a digest starting with zero nibbles is sent shorter. */
    if (rc == FBW_OK && !BN_bin2bn(M, (int)M_len, m))
        rc = FBW_E_NOMEM;
    if (rc == FBW_OK)
        rc = fbw_srp_hex(m, (char *)a->out, sizeof a->out);
    if (rc == FBW_OK) {
        a->out_len = strlen((char *)a->out);
        memcpy(a->key, K, sizeof K);
        a->key_len = sizeof K;
    }
out:
    OPENSSL_cleanse(K, sizeof K);
    BN_free(u);
    BN_clear_free(x);
    BN_free(n1);
    BN_free(n2);
    BN_free(m);
    return rc;
}

static int phase2(fbw_auth *a, const uint8_t *in, size_t in_len, fbw_err *err)
{
    fbw_bytes salt, key;
    BIGNUM *B = NULL;
    int trivial = 0;
    int rc = fbw_srp_parse_server_data(in, in_len, &salt, &key, err);
    if (rc == FBW_OK)
        rc = fbw_srp_parse_hex(key.p, key.n, "server public key", &B, err);
    if (rc == FBW_OK && (rc = trivial_key(B, a->srp->grp.N, &trivial)) != FBW_OK)
        fbw_err_set(err, rc, "SRP: out of memory checking the server key");
    if (rc == FBW_OK && trivial)
        rc = fbw_err_set(err, FBW_E_AUTH, "SRP: trivial server public key (B mod N < 2)");
    if (rc == FBW_OK && (rc = phase2_math(a, &salt, B)) != FBW_OK)
        fbw_err_set(err, rc, "SRP: OpenSSL failed computing the proof");
    BN_free(B);
    return rc;
}

int fbw_srp_step(fbw_auth *a, const uint8_t *in, size_t in_len, fbw_err *err)
{
    int rc;
    if (a->state == FBW_AUTH_START) {
        /* Data handed to a fresh instance belongs to another plugin: ignore it (SrpClient.cpp). */
        rc = phase1(a, err);
        if (rc == FBW_OK)
            a->state = FBW_AUTH_SENT_A;
        return rc;
    }
    rc = phase2(a, in, in_len, err);
    if (rc == FBW_OK) {
        a->state = FBW_AUTH_DONE;
        BN_clear_free(a->srp->a); /* no further use: wipe the private key now */
        a->srp->a = NULL;
    }
    return rc;
}
