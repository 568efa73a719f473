/* SPDX-License-Identifier: MIT */
/* test_srp.c - SRP client math: the fixed vector of docs/protocol/auth.md §7, leading-zero
 * handling, malformed server data, and 2000 random logins checked against an SRP server written
 * here with its own byte/hex helpers (BN_bn2binpad + strip), so a padding bug in the library cannot
 * hide. */
#include <criterion/criterion.h>

#include "auth.h"
#include "srp_internal.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>

/* ---- §5.6 test vector ------------------------------------------------------------------ */

#define V_LOGIN "SYSDBA"
#define V_PASSWORD "masterkey"
#define V_SALT "2E268803000000079A478A700000002D1A6979000000026E1601C000000054F"
#define V_A_PRIV "60975527035CF2AD1989806F0407210BC81EDC04E2762A56AFD529DDDA2D4393"
#define V_X "980C1C90A1BE655F31093F56A9EF5CE7C04B262F"
#define V_A                                                                                       \
    "712C5F8A2DB82464C4D640AE971025AA50AB64906D4F044F822E8AF8A58ADABBDBE1EFABA00BCCD4CDAA8A955BC4" \
    "3C3600BEAB9EBB9BD41ACC56E37F1A48F17293F24E876B53EEA6A60712D3F943769056B63202416827B400E162A8" \
    "C0938D482274307585E0BC1D9DD52EFA7330B28E41B7CFCEFD9E8523FD11440EE5DE93A8"
#define V_B                                                                                       \
    "38C2E70F0FA08BA23295868147F719C329900E5C91B8BB67DC33EE1C788D883551F0BCF2E32C0E65EDBBC417F292" \
    "C7E0D636514B387777BED759B4725DB386A90154ED118E3EA9E96FE0EA235FD704C6772FC32C5075C99A138BFDEA" \
    "0CAA097ED7F28DDB3114EEBB937B3B171C22F706A506A9CC508EC53FC46196A87FC2559B"
#define V_U "73FD94EC2E546305DB1C0DFAB6545A6D48135291"
#define V_K "BAF2AC1E2FE66C9B1E05A76380FE08C9161CBF78"
#define V_N1                                                                                      \
    "3CD1FF1BCCC815CA220DF92D42AC29F7AB874A50F6894D2D64F74685ADEC6F5256BE34BACFD045855E18BBDD1209" \
    "9BA6827DDDEFEFBADD43CB4DFDB7899C62D520241310841475A80D171A51705E773E4476693A35FE9632DAC0B426" \
    "312B3CC2AC9B25858D72DC04C7FDD75E52782368D936E4902F3546FCF049A56593F2AA8F"
#define V_N2 "325B32AC6CDC607502C4532300FADD4D3A0CDC1C"
#define V_M1 "1014C1B9791A96D7CB9C925E035E57A8CE26284A"
#define V_M256 "435C67CE661EB382EC45636606FD9F7049E59FBC4F958D8229923C581A6F4A23"
#define V_CHACHA "9831d099b062bc6f5f9a2ec6d618c98e615183d37d6eae3c74f8d4fdc4715596"
#define V_KHEX_K "DFC212B4BD69674855CFCEB30002B5C306AC60B5"

/* ---- independent helpers (deliberately not the library's) ------------------------------ */

static BIGNUM *bn_hex(const char *hex)
{
    BIGNUM *x = NULL;
    cr_assert(BN_hex2bn(&x, hex) == (int)strlen(hex), "bad hex literal %s", hex);
    return x;
}

/* bytes(X) built from a fixed-width encoding with the leading zero bytes stripped. */
static size_t strip_bytes(const BIGNUM *x, uint8_t out[FBW_SRP_NUM_MAX])
{
    uint8_t pad[FBW_SRP_NUM_MAX];
    size_t i = 0;
    cr_assert(BN_bn2binpad(x, pad, sizeof pad) == (int)sizeof pad);
    while (i < sizeof pad && pad[i] == 0)
        i++;
    memcpy(out, pad + i, sizeof pad - i);
    return sizeof pad - i;
}

/* hex(X): OpenSSL's byte-wise upper-case hex with the one possible leading '0' removed. */
static void ref_hex(const BIGNUM *x, char *out, size_t cap)
{
    char *h = BN_bn2hex(x);
    const char *p = h;
    cr_assert(h);
    while (p[0] == '0' && p[1] != '\0')
        p++;
    cr_assert(strlen(p) < cap);
    strcpy(out, p);
    OPENSSL_free(h);
}

static void bin_to_hex(const uint8_t *p, size_t n, char *out, int upper)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, upper ? "%02X" : "%02x", p[i]);
    out[2 * n] = '\0';
}

typedef struct ref_hash {
    EVP_MD_CTX *c;
} ref_hash;

static void rh_init(ref_hash *h, const EVP_MD *md)
{
    h->c = EVP_MD_CTX_new();
    cr_assert(h->c && EVP_DigestInit_ex(h->c, md, NULL) == 1);
}

static void rh_data(ref_hash *h, const void *p, size_t n)
{
    cr_assert(EVP_DigestUpdate(h->c, p, n) == 1);
}

static void rh_num(ref_hash *h, const BIGNUM *x)
{
    uint8_t b[FBW_SRP_NUM_MAX];
    size_t n = strip_bytes(x, b);
    rh_data(h, b, n);
}

static size_t rh_final(ref_hash *h, uint8_t *out)
{
    unsigned int n = 0;
    cr_assert(EVP_DigestFinal_ex(h->c, out, &n) == 1);
    EVP_MD_CTX_free(h->c);
    return n;
}

static BIGNUM *rh_final_bn(ref_hash *h)
{
    uint8_t md[EVP_MAX_MD_SIZE];
    size_t n = rh_final(h, md);
    BIGNUM *x = BN_bin2bn(md, (int)n, NULL);
    cr_assert(x);
    return x;
}

static void expect_bn_hex(const BIGNUM *x, const char *hex, const char *what)
{
    char got[400];
    cr_assert_eq(fbw_srp_hex(x, got, sizeof got), FBW_OK);
    cr_expect_str_eq(got, hex, "%s: got %s", what, got);
}

/* ---- group ------------------------------------------------------------------------------ */

Test(srp, group_constants)
{
    fbw_srp_group g = {0};
    BIGNUM *N = bn_hex(FBW_SRP_N_HEX);
    uint8_t pad[2 * FBW_SRP_N_BYTES], md[SHA_DIGEST_LENGTH];
    cr_assert_eq(fbw_srp_group_init(&g), FBW_OK);
    cr_expect_eq(BN_num_bits(N), 1024);
    cr_expect_eq(BN_cmp(g.N, N), 0);
    cr_expect(BN_is_word(g.g, 2));
    /* k = SHA1(N || g padded to |N|), computed here from fixed-width encodings */
    cr_assert(BN_bn2binpad(N, pad, FBW_SRP_N_BYTES) == FBW_SRP_N_BYTES);
    cr_assert(BN_bn2binpad(g.g, pad + FBW_SRP_N_BYTES, FBW_SRP_N_BYTES) == FBW_SRP_N_BYTES);
    SHA1(pad, sizeof pad, md);
    BIGNUM *k = BN_bin2bn(md, sizeof md, NULL);
    cr_expect_eq(BN_cmp(g.k, k), 0);
    expect_bn_hex(g.k, V_KHEX_K, "k");
    BN_free(k);
    BN_free(N);
    fbw_srp_group_clear(&g);
    fbw_srp_group_clear(&g); /* idempotent */
}

/* ---- the vector, piece by piece --------------------------------------------------------- */

Test(srp, vector_pieces)
{
    fbw_srp_group g = {0};
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *a = bn_hex(V_A_PRIV), *B = bn_hex(V_B), *A = BN_new(), *x = BN_new(), *u = BN_new();
    BIGNUM *n1 = BN_new(), *n2 = BN_new();
    uint8_t K[FBW_SRP_K_BYTES], M[EVP_MAX_MD_SIZE], ck[SHA256_DIGEST_LENGTH];
    char hex[200];
    size_t M_len = 0;
    cr_assert_eq(fbw_srp_group_init(&g), FBW_OK);
    cr_assert(BN_mod_exp(A, g.g, a, g.N, ctx));
    expect_bn_hex(A, V_A, "A");

    cr_assert_eq(fbw_srp_user_hash(V_LOGIN, (const uint8_t *)V_SALT, strlen(V_SALT), V_PASSWORD,
                                   strlen(V_PASSWORD), x), FBW_OK);
    expect_bn_hex(x, V_X, "x");
    cr_assert_eq(fbw_srp_scramble(A, B, u), FBW_OK);
    expect_bn_hex(u, V_U, "u");
    cr_assert_eq(fbw_srp_session_key(&g, a, B, u, x, K), FBW_OK);
    bin_to_hex(K, sizeof K, hex, 1);
    cr_expect_str_eq(hex, V_K);
    cr_assert_eq(fbw_srp_n1(&g, n1), FBW_OK);
    expect_bn_hex(n1, V_N1, "n1");
    cr_assert_eq(fbw_srp_n2(V_LOGIN, n2), FBW_OK);
    expect_bn_hex(n2, V_N2, "n2");

    cr_assert_eq(fbw_srp_proof(EVP_sha1(), n1, n2, (const uint8_t *)V_SALT, strlen(V_SALT), A, B,
                               K, sizeof K, M, &M_len), FBW_OK);
    cr_assert_eq(M_len, 20);
    bin_to_hex(M, M_len, hex, 1);
    cr_expect_str_eq(hex, V_M1);
    cr_assert_eq(fbw_srp_proof(EVP_sha256(), n1, n2, (const uint8_t *)V_SALT, strlen(V_SALT), A,
                               B, K, sizeof K, M, &M_len), FBW_OK);
    cr_assert_eq(M_len, 32);
    bin_to_hex(M, M_len, hex, 1);
    cr_expect_str_eq(hex, V_M256);

    SHA256(K, sizeof K, ck);
    bin_to_hex(ck, sizeof ck, hex, 0);
    cr_expect_str_eq(hex, V_CHACHA);

    BN_free(a), BN_free(B), BN_free(A), BN_free(x), BN_free(u), BN_free(n1), BN_free(n2);
    BN_CTX_free(ctx);
    fbw_srp_group_clear(&g);
}

/* Salt/B block as SrpServer.cpp sends it. */
static size_t server_block(const char *salt, const char *key, uint8_t *out, size_t cap)
{
    size_t s = strlen(salt), k = strlen(key);
    cr_assert(4 + s + k <= cap);
    out[0] = (uint8_t)(s & 0xFF), out[1] = (uint8_t)(s >> 8);
    memcpy(out + 2, salt, s);
    out[2 + s] = (uint8_t)(k & 0xFF), out[3 + s] = (uint8_t)(k >> 8);
    memcpy(out + 4 + s, key, k);
    return 4 + s + k;
}

/* The whole plugin with the fixed a: phase-1 text, phase-2 text, session key. */
static void vector_plugin(const char *name, const char *login, const char *M_expected)
{
    fbw_auth *a = NULL;
    fbw_err err;
    const uint8_t *out, *key;
    size_t out_len, key_len;
    uint8_t blk[400];
    char hex[100];
    size_t n = server_block(V_SALT, V_B, blk, sizeof blk);
    cr_assert_eq(fbw_auth_new(name, login, V_PASSWORD, &a, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(fbw_srp_set_private(a, V_A_PRIV, &err), FBW_OK, "%s", err.msg);
    cr_expect_str_eq(fbw_auth_login(a), V_LOGIN);
    cr_assert_eq(fbw_auth_step(a, NULL, 0, &out, &out_len, &err), FBW_OK, "%s", err.msg);
    cr_expect_not(fbw_auth_done(a));
    cr_expect_eq(fbw_auth_session_key(a, &key, &key_len, &err), FBW_E_USAGE);
    cr_assert_eq(out_len, strlen(V_A));
    cr_expect_eq(memcmp(out, V_A, out_len), 0, "A: %.*s", (int)out_len, (const char *)out);
    cr_assert_eq(fbw_srp_set_private(a, V_A_PRIV, &err), FBW_E_USAGE); /* too late */
    cr_assert_eq(fbw_auth_step(a, blk, n, &out, &out_len, &err), FBW_OK, "%s", err.msg);
    cr_expect(fbw_auth_done(a));
    cr_assert_eq(out_len, strlen(M_expected));
    cr_expect_eq(memcmp(out, M_expected, out_len), 0, "M: %.*s", (int)out_len, (const char *)out);
    cr_assert_eq(fbw_auth_session_key(a, &key, &key_len, &err), FBW_OK);
    cr_assert_eq(key_len, FBW_SRP_K_BYTES);
    bin_to_hex(key, key_len, hex, 1);
    cr_expect_str_eq(hex, V_K);
    cr_expect_eq(fbw_auth_step(a, blk, n, &out, &out_len, &err), FBW_E_AUTH);
    cr_expect_null(out);
    fbw_auth_free(a);
}

Test(srp, vector_plugin_srp) { vector_plugin("Srp", "SYSDBA", V_M1); }
Test(srp, vector_plugin_srp256) { vector_plugin("Srp256", "SYSDBA", V_M256); }
/* The user types lower case; the proof must use the normalized I. */
Test(srp, vector_plugin_lowercase_login) { vector_plugin("Srp256", "sysdba", V_M256); }
Test(srp, vector_plugin_single_quoted_login) { vector_plugin("Srp", "'sysdba'", V_M1); }

Test(srp, vector_wrong_password_differs)
{
    fbw_auth *a = NULL;
    fbw_err err;
    const uint8_t *out;
    size_t out_len;
    uint8_t blk[400];
    size_t n = server_block(V_SALT, V_B, blk, sizeof blk);
    cr_assert_eq(fbw_auth_new("Srp", "SYSDBA", "masterkez", &a, &err), FBW_OK);
    cr_assert_eq(fbw_srp_set_private(a, V_A_PRIV, &err), FBW_OK);
    cr_assert_eq(fbw_auth_step(a, NULL, 0, &out, &out_len, &err), FBW_OK);
    cr_assert_eq(fbw_auth_step(a, blk, n, &out, &out_len, &err), FBW_OK);
    cr_expect(out_len != strlen(V_M1) || memcmp(out, V_M1, out_len) != 0);
    fbw_auth_free(a);
}

/* ---- bytes() and hex() on numbers with leading zero bytes/nibbles ---------------------- */

static void check_bytes_and_hex(const BIGNUM *x)
{
    uint8_t lib[FBW_SRP_NUM_MAX], ref[FBW_SRP_NUM_MAX], plain[FBW_SRP_NUM_MAX];
    char lib_hex[2 * FBW_SRP_NUM_MAX + 2], ref_h[2 * FBW_SRP_NUM_MAX + 2];
    size_t lib_len = 12345, ref_len = strip_bytes(x, ref);
    int plain_len = BN_bn2bin(x, plain);
    cr_assert_eq(fbw_srp_bytes(x, lib, sizeof lib, &lib_len), FBW_OK);
    cr_assert_eq(lib_len, ref_len);
    cr_assert_eq((size_t)plain_len, ref_len);
    cr_assert_eq(memcmp(lib, ref, ref_len), 0);
    cr_assert_eq(memcmp(plain, ref, ref_len), 0);
    if (ref_len > 0)
        cr_assert_neq(lib[0], 0, "bytes() kept a leading zero byte");
    cr_assert_eq(fbw_srp_hex(x, lib_hex, sizeof lib_hex), FBW_OK);
    ref_hex(x, ref_h, sizeof ref_h);
    cr_assert_str_eq(lib_hex, ref_h);
    cr_assert(lib_hex[0] != '0' || lib_hex[1] == '\0', "hex() kept a leading zero: %s", lib_hex);
    /* hashing through the library equals hashing the stripped bytes */
    {
        BIGNUM *u_lib = BN_new(), *zero = BN_new();
        ref_hash h;
        cr_assert(u_lib && zero);
        BN_zero(zero);
        cr_assert_eq(fbw_srp_scramble(x, zero, u_lib), FBW_OK); /* SHA1(bytes(x) || "") */
        rh_init(&h, EVP_sha1());
        rh_data(&h, ref, ref_len);
        BIGNUM *u_ref = rh_final_bn(&h);
        cr_assert_eq(BN_cmp(u_lib, u_ref), 0);
        BN_free(u_lib), BN_free(u_ref), BN_free(zero);
    }
}

Test(srp, bytes_and_hex_leading_zeros)
{
    static const char *vals[] = {
        "0", "1", "F", "10", "FF", "100", "0A", "ABC", "1000000",
        /* 127 bytes: a 1024-bit-group value whose top byte is zero */
        "7F00000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000000000000001",
        V_SALT, V_A, V_N1,
    };
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        BIGNUM *x = bn_hex(vals[i]);
        check_bytes_and_hex(x);
        BN_free(x);
    }
    /* random numbers below 2^(8k) for every k: each has >= 1 leading zero byte at width 128 */
    for (int bits = 8; bits <= 1024; bits += 4) {
        BIGNUM *x = BN_new();
        cr_assert(BN_rand(x, bits, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY));
        check_bytes_and_hex(x);
        BN_free(x);
    }
}

Test(srp, bytes_and_hex_small_buffers)
{
    BIGNUM *x = bn_hex("ABCDEF");
    uint8_t b[3];
    char h[7];
    size_t n;
    cr_expect_eq(fbw_srp_bytes(x, b, 2, &n), FBW_E_USAGE);
    cr_expect_eq(fbw_srp_bytes(x, b, 3, &n), FBW_OK);
    cr_expect_eq(fbw_srp_hex(x, h, 6), FBW_E_USAGE);
    cr_expect_eq(fbw_srp_hex(x, h, 7), FBW_OK);
    cr_expect_str_eq(h, "ABCDEF");
    BN_free(x);
}

Test(srp, parse_hex)
{
    fbw_err err;
    BIGNUM *x = NULL;
    cr_assert_eq(fbw_srp_parse_hex((const uint8_t *)"0aBc", 4, "t", &x, &err), FBW_OK);
    cr_expect(BN_is_word(x, 0xABC));
    cr_assert_eq(fbw_srp_parse_hex((const uint8_t *)"abc", 3, "t", &x, &err), FBW_OK);
    cr_expect(BN_is_word(x, 0xABC));
    cr_expect_eq(fbw_srp_parse_hex((const uint8_t *)"", 0, "t", &x, &err), FBW_E_AUTH);
    cr_expect_eq(fbw_srp_parse_hex((const uint8_t *)"-1", 2, "t", &x, &err), FBW_E_AUTH);
    cr_expect_eq(fbw_srp_parse_hex((const uint8_t *)"12 3", 4, "thing", &x, &err), FBW_E_AUTH);
    cr_expect(strstr(err.msg, "thing") && strstr(err.msg, "offset 2"), "%s", err.msg);
    cr_expect_eq(fbw_srp_parse_hex((const uint8_t *)"1\0", 2, "t", &x, &err), FBW_E_AUTH);
    BN_free(x);
}

/* ---- an SRP server written here, for random and leading-zero logins --------------------- */

typedef struct srv_stats {
    size_t a_len, b_len, s_len, salt_len, m_hex_len;
} srv_stats;

typedef struct srv_group {
    BIGNUM *N, *g, *k, *n1;
    BN_CTX *ctx;
} srv_group;

static void srv_group_init(srv_group *s)
{
    uint8_t pad[2 * FBW_SRP_N_BYTES];
    ref_hash h;
    s->ctx = BN_CTX_new();
    s->N = bn_hex(FBW_SRP_N_HEX);
    s->g = BN_new();
    cr_assert(s->ctx && s->g && BN_set_word(s->g, 2));
    cr_assert(BN_bn2binpad(s->N, pad, FBW_SRP_N_BYTES) == FBW_SRP_N_BYTES);
    cr_assert(BN_bn2binpad(s->g, pad + FBW_SRP_N_BYTES, FBW_SRP_N_BYTES) == FBW_SRP_N_BYTES);
    rh_init(&h, EVP_sha1());
    rh_data(&h, pad, sizeof pad);
    s->k = rh_final_bn(&h);
    rh_init(&h, EVP_sha1());
    rh_num(&h, s->N);
    BIGNUM *hn = rh_final_bn(&h);
    rh_init(&h, EVP_sha1());
    rh_num(&h, s->g);
    BIGNUM *hg = rh_final_bn(&h);
    s->n1 = BN_new();
    cr_assert(s->n1 && BN_mod_exp(s->n1, hn, hg, s->N, s->ctx));
    BN_free(hn), BN_free(hg);
}

static void srv_group_free(srv_group *s)
{
    BN_free(s->N), BN_free(s->g), BN_free(s->k), BN_free(s->n1);
    BN_CTX_free(s->ctx);
}

/* One login: library client (random a, or a_hex) against this server with private key b and the
 * given binary salt. Asserts the client's M equals the server's recomputed M and both K agree. */
static void run_login(srv_group *s, const char *plugin, const EVP_MD *md, const char *typed,
                      const char *norm, const char *password, const uint8_t salt_bin[32],
                      const BIGNUM *b, const char *a_hex, srv_stats *st)
{
    fbw_auth *cl = NULL;
    fbw_err err;
    const uint8_t *out, *key;
    size_t out_len, key_len;
    char salt[80], Bhex[300], Ahex[300], Mhex[200], Mref[200];
    uint8_t inner[SHA_DIGEST_LENGTH], blk[400], K[EVP_MAX_MD_SIZE], M[EVP_MAX_MD_SIZE];
    uint8_t sb[FBW_SRP_NUM_MAX];
    ref_hash h;

    /* the verifier, as SrpManagement.cpp makes it: x from the hex text of the salt */
    BIGNUM *sbn = BN_bin2bn(salt_bin, 32, NULL);
    ref_hex(sbn, salt, sizeof salt);
    BN_free(sbn);
    rh_init(&h, EVP_sha1());
    rh_data(&h, norm, strlen(norm));
    rh_data(&h, ":", 1);
    rh_data(&h, password, strlen(password));
    rh_final(&h, inner);
    rh_init(&h, EVP_sha1());
    rh_data(&h, salt, strlen(salt));
    rh_data(&h, inner, sizeof inner);
    BIGNUM *x = rh_final_bn(&h), *v = BN_new();
    cr_assert(v && BN_mod_exp(v, s->g, x, s->N, s->ctx));

    /* client phase 1 */
    cr_assert_eq(fbw_auth_new(plugin, typed, password, &cl, &err), FBW_OK, "%s", err.msg);
    if (a_hex)
        cr_assert_eq(fbw_srp_set_private(cl, a_hex, &err), FBW_OK, "%s", err.msg);
    cr_assert_str_eq(fbw_auth_login(cl), norm);
    cr_assert_eq(fbw_auth_step(cl, NULL, 0, &out, &out_len, &err), FBW_OK, "%s", err.msg);
    cr_assert(out_len > 0 && out_len < sizeof Ahex);
    memcpy(Ahex, out, out_len);
    Ahex[out_len] = '\0';
    BIGNUM *A = bn_hex(Ahex);
    cr_assert(BN_cmp(A, BN_value_one()) > 0 && BN_cmp(A, s->N) < 0);
    char Acheck[300];
    ref_hex(A, Acheck, sizeof Acheck);
    cr_assert_str_eq(Ahex, Acheck, "A is not upper-case minimal hex");

    /* server: B = k*v + g^b mod N, send salt/B */
    BIGNUM *gb = BN_new(), *kv = BN_new(), *B = BN_new();
    cr_assert(gb && kv && B);
    cr_assert(BN_mod_exp(gb, s->g, b, s->N, s->ctx) && BN_mod_mul(kv, s->k, v, s->N, s->ctx) &&
              BN_mod_add(B, kv, gb, s->N, s->ctx));
    ref_hex(B, Bhex, sizeof Bhex);
    size_t n = server_block(salt, Bhex, blk, sizeof blk);

    /* client phase 2 */
    cr_assert_eq(fbw_auth_step(cl, blk, n, &out, &out_len, &err), FBW_OK, "%s", err.msg);
    cr_assert(out_len < sizeof Mhex);
    memcpy(Mhex, out, out_len);
    Mhex[out_len] = '\0';
    cr_assert(fbw_auth_done(cl));
    cr_assert_eq(fbw_auth_session_key(cl, &key, &key_len, &err), FBW_OK);

    /* server: u, S = (A * v^u)^b, K, M */
    rh_init(&h, EVP_sha1());
    rh_num(&h, A);
    rh_num(&h, B);
    BIGNUM *u = rh_final_bn(&h), *vu = BN_new(), *Avu = BN_new(), *S = BN_new();
    cr_assert(vu && Avu && S);
    cr_assert(BN_mod_exp(vu, v, u, s->N, s->ctx) && BN_mod_mul(Avu, A, vu, s->N, s->ctx) &&
              BN_mod_exp(S, Avu, b, s->N, s->ctx));
    rh_init(&h, EVP_sha1());
    rh_num(&h, S);
    cr_assert_eq(rh_final(&h, K), SHA_DIGEST_LENGTH);
    cr_assert_eq(key_len, SHA_DIGEST_LENGTH);
    cr_assert_eq(memcmp(key, K, key_len), 0, "session key differs (%s)", plugin);

    rh_init(&h, EVP_sha1());
    rh_data(&h, norm, strlen(norm));
    BIGNUM *n2 = rh_final_bn(&h);
    rh_init(&h, md);
    rh_num(&h, s->n1);
    rh_num(&h, n2);
    rh_data(&h, salt, strlen(salt));
    rh_num(&h, A);
    rh_num(&h, B);
    rh_data(&h, K, SHA_DIGEST_LENGTH);
    size_t mlen = rh_final(&h, M);
    BIGNUM *Mbn = BN_bin2bn(M, (int)mlen, NULL);
    ref_hex(Mbn, Mref, sizeof Mref);
    cr_assert_str_eq(Mhex, Mref, "proof differs (%s, login %s)", plugin, norm);

    if (st) {
        st->a_len = strip_bytes(A, sb);
        st->b_len = strip_bytes(B, sb);
        st->s_len = strip_bytes(S, sb);
        st->salt_len = strlen(salt);
        st->m_hex_len = strlen(Mhex);
    }
    BN_free(x), BN_free(v), BN_free(A), BN_free(gb), BN_free(kv), BN_free(B), BN_free(u);
    BN_free(vu), BN_free(Avu), BN_free(S), BN_free(n2), BN_free(Mbn);
    fbw_auth_free(cl);
}

/* Deterministic 128-byte numbers from a counter, so the searches below always end the same way. */
static BIGNUM *det_num(const char *tag, unsigned i, const BIGNUM *N)
{
    uint8_t buf[4 * SHA256_DIGEST_LENGTH];
    char seed[64];
    for (unsigned j = 0; j < 4; j++) {
        snprintf(seed, sizeof seed, "%s/%u/%u", tag, i, j);
        SHA256((const uint8_t *)seed, strlen(seed), buf + j * SHA256_DIGEST_LENGTH);
    }
    BIGNUM *x = BN_bin2bn(buf, sizeof buf, NULL), *r = BN_new();
    BN_CTX *ctx = BN_CTX_new();
    cr_assert(x && r && ctx && BN_nnmod(r, x, N, ctx));
    BN_free(x);
    BN_CTX_free(ctx);
    return r;
}

static void det_salt(unsigned i, uint8_t salt[32])
{
    char seed[32];
    snprintf(seed, sizeof seed, "salt/%u", i);
    SHA256((const uint8_t *)seed, strlen(seed), salt);
}

/* A whose top byte is zero: the client's hex(A) is shorter and u/M hash 127 bytes of A. */
Test(srp, leading_zero_client_key)
{
    srv_group s;
    srv_stats st;
    uint8_t salt[32];
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *A = BN_new();
    srv_group_init(&s);
    det_salt(0, salt);
    int found = 0;
    for (unsigned i = 0; i < 20000 && found < 2; i++) {
        BIGNUM *a = det_num("a", i, s.N);
        cr_assert(BN_mod_exp(A, s.g, a, s.N, ctx));
        if (BN_num_bytes(A) < FBW_SRP_N_BYTES) {
            char ahex[300];
            BIGNUM *b = det_num("b", i, s.N);
            ref_hex(a, ahex, sizeof ahex);
            run_login(&s, found ? "Srp" : "Srp256", found ? EVP_sha1() : EVP_sha256(), "sysdba",
                      "SYSDBA", "masterkey", salt, b, ahex, &st);
            cr_assert_lt(st.a_len, FBW_SRP_N_BYTES);
            BN_free(b);
            found++;
        }
        BN_free(a);
    }
    cr_assert_eq(found, 2, "no A with a leading zero byte found");
    BN_free(A);
    BN_CTX_free(ctx);
    srv_group_free(&s);
}

/* B and S with a zero top byte; a salt whose text lost leading zero digits; M with a leading
 * zero nibble (shorter hex). Each is searched for deterministically over b / salt. */
Test(srp, leading_zero_server_key_secret_salt_and_proof)
{
    srv_group s;
    srv_stats st;
    uint8_t salt[32];
    int short_b = 0, short_s = 0, short_salt = 0, short_m = 0;
    srv_group_init(&s);
    for (unsigned i = 0; i < 3000 && !(short_b && short_s && short_salt && short_m); i++) {
        BIGNUM *b = det_num("b2", i, s.N);
        det_salt(i, salt);
        if (i % 16 == 0)
            salt[0] = 0x00, salt[1] = (uint8_t)(i & 0x0F); /* salt text shorter than 64 */
        char ahex[300];
        BIGNUM *a = det_num("a2", i, s.N);
        ref_hex(a, ahex, sizeof ahex);
        run_login(&s, i % 2 ? "Srp" : "Srp256", i % 2 ? EVP_sha1() : EVP_sha256(), "SYSDBA",
                  "SYSDBA", "masterkey", salt, b, ahex, &st);
        short_b += st.b_len < FBW_SRP_N_BYTES;
        short_s += st.s_len < FBW_SRP_N_BYTES;
        short_salt += st.salt_len < 64;
        short_m += st.m_hex_len < (i % 2 ? 40u : 64u);
        BN_free(a);
        BN_free(b);
    }
    cr_log_info("short B %d, short S %d, short salt %d, short M %d", short_b, short_s,
                short_salt, short_m);
    cr_assert(short_b && short_s && short_salt && short_m,
              "search did not hit every leading-zero case (B %d S %d salt %d M %d)", short_b,
              short_s, short_salt, short_m);
    srv_group_free(&s);
}

/* 2000 random logins (random a in the library, random b, salt, login, password), every plugin. */
Test(srp, random_logins_against_server, .timeout = 110)
{
    static const char *logins[][2] = {
        {"sysdba", "SYSDBA"},     {"SYSDBA", "SYSDBA"},       {"john.doe", "john.doe"},
        {"\"Mixed\"", "Mixed"},   {"user_1$", "USER_1$"},     {"j\xc3\xbcrgen", "j\xc3\xbcrgen"},
        {"'abc'", "ABC"},         {"\"a\"\"b\"", "a\"b"},     {"x", "X"},
    };
    static const struct {
        const char *name;
        const EVP_MD *(*md)(void);
    } plugs[] = {{"Srp", EVP_sha1},       {"Srp256", EVP_sha256}, {"Srp", EVP_sha1},
                 {"Srp256", EVP_sha256},  {"Srp224", EVP_sha224}, {"Srp384", EVP_sha384},
                 {"Srp512", EVP_sha512}};
    srv_group s;
    srv_stats st;
    uint8_t salt[32], pwb[40];
    char pw[41];
    int short_a = 0, short_b = 0, short_s = 0, short_salt = 0;
    srv_group_init(&s);
    for (int i = 0; i < 2000; i++) {
        BIGNUM *b = BN_new();
        cr_assert(b && BN_rand_range(b, s.N));
        cr_assert(RAND_bytes(salt, sizeof salt) == 1 && RAND_bytes(pwb, sizeof pwb) == 1);
        size_t pl = pwb[0] % 33;
        for (size_t j = 0; j < pl; j++) /* printable ASCII and some UTF-8 lead/continuation */
            pw[j] = (char)(pwb[j + 1] % 2 ? 0x21 + pwb[j + 1] % 94 : 0x80 | pwb[j + 1]);
        pw[pl] = '\0';
        size_t li = (size_t)i % (sizeof logins / sizeof logins[0]);
        size_t pi = (size_t)(i / 3) % (sizeof plugs / sizeof plugs[0]);
        run_login(&s, plugs[pi].name, plugs[pi].md(), logins[li][0], logins[li][1], pw, salt, b,
                  NULL, &st);
        short_a += st.a_len < FBW_SRP_N_BYTES;
        short_b += st.b_len < FBW_SRP_N_BYTES;
        short_s += st.s_len < FBW_SRP_N_BYTES;
        short_salt += st.salt_len < 64;
        BN_free(b);
    }
    cr_log_info("2000 logins: short A %d, short B %d, short S %d, short salt %d", short_a,
                short_b, short_s, short_salt);
    srv_group_free(&s);
}

/* ---- malformed server data ----------------------------------------------------------------- */

static fbw_auth *after_phase1(const char *name)
{
    fbw_auth *a = NULL;
    fbw_err err;
    const uint8_t *out;
    size_t out_len;
    cr_assert_eq(fbw_auth_new(name, "SYSDBA", "s3cret-pw", &a, &err), FBW_OK);
    cr_assert_eq(fbw_auth_step(a, NULL, 0, &out, &out_len, &err), FBW_OK);
    return a;
}

/* Feed one server block; expect rc, a message containing `needle`, no password in the text. */
static void expect_phase2(const uint8_t *blk, size_t n, int rc, const char *needle)
{
    fbw_auth *a = after_phase1("Srp256");
    fbw_err err;
    const uint8_t *out, *key;
    size_t out_len, key_len;
    int got = fbw_auth_step(a, blk, n, &out, &out_len, &err);
    cr_expect_eq(got, rc, "len %zu: rc %d (%s)", n, got, err.msg);
    if (rc != FBW_OK) {
        cr_expect_eq(err.code, rc);
        cr_expect(strstr(err.msg, "SRP") != NULL, "%s", err.msg);
        if (needle)
            cr_expect(strstr(err.msg, needle) != NULL, "'%s' not in: %s", needle, err.msg);
        cr_expect(strstr(err.msg, "s3cret") == NULL);
        cr_expect_null(out);
        cr_expect_not(fbw_auth_done(a));
        cr_expect_eq(fbw_auth_session_key(a, &key, &key_len, &err), FBW_E_USAGE);
        cr_expect_eq(fbw_auth_step(a, blk, n, &out, &out_len, &err), FBW_E_AUTH);
        cr_expect(strstr(err.msg, "failed") != NULL, "%s", err.msg);
    }
    fbw_auth_free(a);
}

Test(srp, server_data_every_prefix_rejected)
{
    uint8_t blk[400];
    size_t n = server_block(V_SALT, V_B, blk, sizeof blk);
    for (size_t i = 0; i < n; i++)
        expect_phase2(blk, i, FBW_E_AUTH, NULL);
    expect_phase2(blk, n, FBW_OK, NULL);
}

Test(srp, server_data_named_corruptions)
{
    uint8_t blk[400], big[400];
    size_t n = server_block(V_SALT, V_B, blk, sizeof blk);
    expect_phase2(NULL, 0, FBW_E_AUTH, "no salt");
    /* salt length over 64 */
    memcpy(big, blk, n);
    big[0] = 65;
    expect_phase2(big, n, FBW_E_AUTH, "salt length 65");
    big[0] = 0xFF, big[1] = 0xFF;
    expect_phase2(big, n, FBW_E_AUTH, "salt length 65535");
    /* key length larger / smaller than what is left */
    memcpy(big, blk, n);
    big[2 + 63]++;
    expect_phase2(big, n, FBW_E_AUTH, "key length");
    memcpy(big, blk, n);
    big[2 + 63 + 1] = 0xFF;
    expect_phase2(big, n, FBW_E_AUTH, "key length");
    /* trailing garbage */
    memcpy(big, blk, n);
    big[n] = '0';
    expect_phase2(big, n + 1, FBW_E_AUTH, "key length");
    /* non-hex in salt, in key */
    memcpy(big, blk, n);
    big[2 + 5] = 'G';
    expect_phase2(big, n, FBW_E_AUTH, "salt has a non-hex byte 0x47 at offset 5");
    memcpy(big, blk, n);
    big[n - 1] = '\0';
    expect_phase2(big, n, FBW_E_AUTH, "public key has a non-hex");
    memcpy(big, blk, n);
    big[2 + 63 + 2] = '-';
    expect_phase2(big, n, FBW_E_AUTH, "public key has a non-hex");
    /* empty key, empty block pieces */
    n = server_block(V_SALT, "", big, sizeof big);
    expect_phase2(big, n, FBW_E_AUTH, "empty");
    /* more than 324 bytes */
    memset(big, 'A', sizeof big);
    n = server_block("AB", "", big, sizeof big);
    big[2 + 2] = (uint8_t)((325 - 6) & 0xFF), big[2 + 3] = (uint8_t)((325 - 6) >> 8);
    expect_phase2(big, 325, FBW_E_AUTH, "325 bytes");
}

Test(srp, server_data_limits_accepted)
{
    uint8_t blk[400];
    char key[330];
    /* empty salt and the longest key the block allows (320 digits): accepted, no crash */
    memset(key, 'F', 320);
    key[320] = '\0';
    size_t n = server_block("", key, blk, sizeof blk);
    cr_assert_eq(n, FBW_SRP_DATA_MAX);
    expect_phase2(blk, n, FBW_OK, NULL);
    /* lower-case hex is accepted too (mp_read_radix is case-insensitive) */
    char lower[300];
    strcpy(lower, V_B);
    for (char *p = lower; *p; p++)
        if (*p >= 'A' && *p <= 'F')
            *p = (char)(*p - 'A' + 'a');
    n = server_block(V_SALT, lower, blk, sizeof blk);
    expect_phase2(blk, n, FBW_OK, NULL);
}

/* B mod N < 2 is refused: 0, 1, N, N+1, 2N+1 (with leading zero digits); N+2 is fine. */
Test(srp, trivial_server_key)
{
    uint8_t blk[400];
    char hex[300];
    BIGNUM *N = bn_hex(FBW_SRP_N_HEX), *x = BN_new();
    static const struct {
        int mult, add, rc;
    } cases[] = {{0, 0, FBW_E_AUTH}, {0, 1, FBW_E_AUTH}, {1, 0, FBW_E_AUTH},
                 {1, 1, FBW_E_AUTH}, {2, 1, FBW_E_AUTH}, {1, 2, FBW_OK}, {0, 2, FBW_OK}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert(BN_copy(x, N) && BN_mul_word(x, (BN_ULONG)cases[i].mult) &&
                  BN_add_word(x, (BN_ULONG)cases[i].add));
        ref_hex(x, hex, sizeof hex);
        size_t n = server_block(V_SALT, hex, blk, sizeof blk);
        expect_phase2(blk, n, cases[i].rc, cases[i].rc ? "trivial" : NULL);
    }
    size_t n = server_block(V_SALT, "0000", blk, sizeof blk);
    expect_phase2(blk, n, FBW_E_AUTH, "trivial");
    BN_free(N), BN_free(x);
}

/* Phase 1 ignores data meant for another plugin; A is fresh per instance. */
Test(srp, phase1_ignores_input_and_is_random)
{
    fbw_auth *a = NULL, *b = NULL;
    fbw_err err;
    const uint8_t *out;
    size_t out_len;
    char first[300];
    uint8_t junk[] = {1, 2, 3};
    cr_assert_eq(fbw_auth_new("Srp", "u", "p", &a, &err), FBW_OK);
    cr_assert_eq(fbw_auth_new("Srp", "u", "p", &b, &err), FBW_OK);
    cr_assert_eq(fbw_auth_step(a, junk, sizeof junk, &out, &out_len, &err), FBW_OK);
    cr_assert(out_len > 200 && out_len <= 256, "A has %zu digits", out_len);
    memcpy(first, out, out_len);
    cr_assert_eq(fbw_auth_step(b, NULL, 0, &out, &out_len, &err), FBW_OK);
    cr_expect(memcmp(first, out, out_len) != 0);
    for (size_t i = 0; i < out_len; i++)
        cr_assert((out[i] >= '0' && out[i] <= '9') || (out[i] >= 'A' && out[i] <= 'F'));
    fbw_auth_free(a);
    fbw_auth_free(b);
}

Test(srp, set_private_rules)
{
    fbw_auth *a = NULL;
    fbw_err err;
    cr_assert_eq(fbw_auth_new("Legacy_Auth", "u", "p", &a, &err), FBW_OK);
    cr_expect_eq(fbw_srp_set_private(a, "5", &err), FBW_E_USAGE);
    fbw_auth_free(a);
    cr_assert_eq(fbw_auth_new("Srp", "u", "p", &a, &err), FBW_OK);
    cr_expect_eq(fbw_srp_set_private(a, FBW_SRP_N_HEX, &err), FBW_E_USAGE); /* 0 mod N */
    cr_expect_eq(fbw_srp_set_private(a, "xyz", &err), FBW_E_AUTH);
    cr_expect_eq(fbw_srp_set_private(a, "5", &err), FBW_OK);
    fbw_auth_free(a);
}
