/* SPDX-License-Identifier: MIT */
/* srp_internal.h - the pieces of Firebird's SRP-6a variant (docs/protocol/auth.md §5),
 * exposed so unit tests can check each against the fixed test vector and against an in-test server.
 *
 * Not a public API: only srp.c, plugins.c and tests/auth include it. Numbers are OpenSSL BIGNUMs;
 * every function returns FBW_OK, FBW_E_NOMEM (OpenSSL failure), FBW_E_USAGE (output buffer too
 * small) or, where it says so, FBW_E_AUTH. */
#ifndef FBW_SRP_INTERNAL_H
#define FBW_SRP_INTERNAL_H

#include "auth.h"
#include "xdr.h"

#include <openssl/bn.h>
#include <openssl/evp.h>

/* Firebird's 1024-bit group (srp.cpp primeStr), g = 2. */
#define FBW_SRP_N_HEX                                                                            \
    "E67D2E994B2F900C3F41F08F5BB2627ED0D49EE1FE767A52EFCD565C"                                   \
    "D6E768812C3E1E9CE8F0A8BEA6CB13CD29DDEBF7A96D4A93B55D488D"                                   \
    "F099A15C89DCB0640738EB2CBDD9A8F7BAB561AB1B0DC1C6CDABF303"                                   \
    "264A08D1BCA932D1F1EE428B619D970F342ABA9A65793B8B2F041AE5"                                   \
    "364350C16F735F56ECBCA87BD57B29E7"
#define FBW_SRP_N_BYTES 128
#define FBW_SRP_K_BYTES 20      /* session key K = SHA-1(bytes(S)) */
#define FBW_SRP_SALT_MAX 64     /* hex characters (32 binary bytes) */
#define FBW_SRP_DATA_MAX 324    /* (32 + 128 + 2) * 2, SrpClient.cpp's cap on the salt/B block */
#define FBW_SRP_NUM_MAX 160     /* bytes: B may use all 320 hex digits the block leaves for it */

typedef struct fbw_srp_group {
    BIGNUM *N, *g, *k; /* k = SHA-1(bytes(N) || zero pad to |N| || bytes(g)) */
} fbw_srp_group;

int fbw_srp_group_init(fbw_srp_group *grp);
void fbw_srp_group_clear(fbw_srp_group *grp); /* safe on a zeroed or half-built group */

/* bytes(X): minimal unsigned big-endian, no leading zero byte (zero -> 0 bytes). */
int fbw_srp_bytes(const BIGNUM *x, uint8_t *out, size_t cap, size_t *len);
/* hex(X): upper-case, no leading zero digits, NUL-terminated ("0" for zero). */
int fbw_srp_hex(const BIGNUM *x, char *out, size_t cap);
/* Parse hex text (either case, no sign, not empty) into *x (allocated here when *x is NULL).
 * FBW_E_AUTH naming `what` for bad text. */
int fbw_srp_parse_hex(const uint8_t *p, size_t n, const char *what, BIGNUM **x, fbw_err *err);

/* Split the server's phase-1 answer (§5.5.1) into salt text and B text; checks lengths and hex
 * digits. FBW_E_AUTH with a message naming the problem. Views point into `in`. */
int fbw_srp_parse_server_data(const uint8_t *in, size_t len, fbw_bytes *salt, fbw_bytes *key,
                              fbw_err *err);

/* x = SHA-1(salt || SHA-1(login || ":" || password)); salt is the text as received. */
int fbw_srp_user_hash(const char *login, const uint8_t *salt, size_t salt_len,
                      const char *password, size_t password_len, BIGNUM *x);
/* u = SHA-1(bytes(A) || bytes(B)). */
int fbw_srp_scramble(const BIGNUM *A, const BIGNUM *B, BIGNUM *u);
/* K = SHA-1(bytes(S)), S = ((B - k*g^x) mod N) ^ ((a + u*x mod N) mod N) mod N. */
int fbw_srp_session_key(const fbw_srp_group *grp, const BIGNUM *a, const BIGNUM *B,
                        const BIGNUM *u, const BIGNUM *x, uint8_t K[FBW_SRP_K_BYTES]);
/* n1 = SHA-1(bytes(N)) ^ SHA-1(bytes(g)) mod N (modular power, not xor). */
int fbw_srp_n1(const fbw_srp_group *grp, BIGNUM *n1);
/* n2 = SHA-1(login). */
int fbw_srp_n2(const char *login, BIGNUM *n2);
/* M = md(bytes(n1) || bytes(n2) || salt || bytes(A) || bytes(B) || K); M_out holds
 * EVP_MAX_MD_SIZE bytes, *M_len gets the digest size. */
int fbw_srp_proof(const EVP_MD *md, const BIGNUM *n1, const BIGNUM *n2, const uint8_t *salt,
                  size_t salt_len, const BIGNUM *A, const BIGNUM *B, const uint8_t *K,
                  size_t K_len, uint8_t *M_out, size_t *M_len);

/* Tests only: replace the random private key of an SRP instance that has not stepped yet with
 * a fixed one (hex). FBW_E_USAGE for a non-SRP or already started instance, or a == 0 mod N. */
int fbw_srp_set_private(fbw_auth *a, const char *a_hex, fbw_err *err);

#endif
