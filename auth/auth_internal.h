/* SPDX-License-Identifier: MIT */
/* auth_internal.h - the plugin instance shared by plugins.c, srp.c and legacy.c.
 *
 * plugins.c owns creation, dispatch and destruction; srp.c and legacy.c only implement their
 * steps. Not installed, not for callers outside auth/. */
#ifndef FBW_AUTH_INTERNAL_H
#define FBW_AUTH_INTERNAL_H

#include "auth.h"

#include <openssl/evp.h>

/* Longest step output: hex(A) is at most 256 characters (A < N, 128 bytes). */
#define FBW_AUTH_OUT_MAX 260
#define FBW_AUTH_KEY_MAX 64

enum fbw_auth_kind { FBW_AUTH_SRP, FBW_AUTH_LEGACY };

enum fbw_auth_state {
    FBW_AUTH_START,  /* nothing produced yet */
    FBW_AUTH_SENT_A, /* SRP phase 1 done, waiting for salt/B */
    FBW_AUTH_DONE,   /* final data produced */
    FBW_AUTH_FAILED, /* a step failed; the instance is dead */
};

struct fbw_srp_client; /* srp.c: group and key pair */

struct fbw_auth {
    enum fbw_auth_kind kind;
    enum fbw_auth_state state;
    const char *name;          /* canonical, static */
    const EVP_MD *proof_md;    /* SRP: hash of the final proof M */
    char *password;            /* OpenSSL secure heap, NUL-terminated */
    size_t password_len;
    struct fbw_srp_client *srp; /* SRP only */
    uint8_t out[FBW_AUTH_OUT_MAX];
    size_t out_len;
    uint8_t key[FBW_AUTH_KEY_MAX]; /* session key, secret */
    size_t key_len;
    char login[FBW_AUTH_LOGIN_MAX + 1]; /* normalized */
};

/* srp.c */
int fbw_srp_start(fbw_auth *a, fbw_err *err);      /* allocate the group; called by fbw_auth_new */
int fbw_srp_step(fbw_auth *a, const uint8_t *in, size_t in_len, fbw_err *err);
void fbw_srp_free(struct fbw_srp_client *c);       /* NULL ok, wipes */
/* legacy.c */
int fbw_legacy_step(fbw_auth *a, fbw_err *err);

#endif
