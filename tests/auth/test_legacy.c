/* SPDX-License-Identifier: MIT */
/* test_legacy.c - Legacy_Auth: DES crypt(password, "9z") minus the salt, one step, no key.
 * Expected values come from libxcrypt's crypt() (an implementation independent of OpenSSL's
 * DES_fcrypt used by the library) and from docs/protocol/auth.md §9. */
#include <criterion/criterion.h>

#include "auth.h"

#include <string.h>

static void expect_hash(const char *password, const char *expected)
{
    fbw_auth *a = NULL;
    fbw_err err;
    const uint8_t *out;
    size_t out_len;
    cr_assert_eq(fbw_auth_new("Legacy_Auth", "sysdba", password, &a, &err), FBW_OK, "%s",
                 err.msg);
    cr_expect_not(fbw_auth_done(a));
    cr_assert_eq(fbw_auth_step(a, NULL, 0, &out, &out_len, &err), FBW_OK, "%s", err.msg);
    cr_assert_eq(out_len, 11);
    cr_expect_eq(memcmp(out, expected, 11), 0, "password '%s': got %.11s, want %s", password,
                 (const char *)out, expected);
    for (size_t i = 0; i < out_len; i++)
        cr_expect(strchr("./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                         out[i]) != NULL);
    cr_expect(fbw_auth_done(a));
    fbw_auth_free(a);
}

Test(legacy, masterkey) { expect_hash("masterkey", "QP3LMZ/MJh."); }

Test(legacy, libxcrypt_vectors)
{
    expect_hash("", "retK2Kk/GLk");
    expect_hash("a", "sMhH1U05.Ck");
    expect_hash("password", "3RNBnBoB0d6");
    expect_hash("Passw0rd!", "neccKTkcVTA");
    expect_hash("\xc3\xa9t\xc3\xa9", "cCQI1rLHNnM"); /* UTF-8 "été": 8-bit bytes */
    expect_hash("12345678901", "kR2aQutwZAE");
}

/* DES crypt reads 8 characters: everything after them is ignored. */
Test(legacy, only_eight_characters_count)
{
    expect_hash("masterke", "QP3LMZ/MJh.");
    expect_hash("masterkeyXYZ-anything", "QP3LMZ/MJh.");
    expect_hash("12345678", "kR2aQutwZAE");
}

Test(legacy, one_step_and_no_session_key)
{
    fbw_auth *a = NULL;
    fbw_err err;
    const uint8_t *out, *key = (const uint8_t *)"x";
    size_t out_len, key_len = 99;
    cr_assert_eq(fbw_auth_new("legacy_auth", "'Sysdba'", "masterkey", &a, &err), FBW_OK);
    cr_expect_str_eq(fbw_auth_name(a), "Legacy_Auth");
    cr_expect_str_eq(fbw_auth_login(a), "SYSDBA");
    cr_expect_eq(fbw_auth_session_key(a, &key, &key_len, &err), FBW_E_UNSUPPORTED);
    cr_assert_eq(fbw_auth_step(a, (const uint8_t *)"ignored", 7, &out, &out_len, &err), FBW_OK);
    cr_expect_eq(memcmp(out, "QP3LMZ/MJh.", 11), 0);
    cr_expect(fbw_auth_done(a));
    cr_expect_eq(fbw_auth_session_key(a, &key, &key_len, &err), FBW_E_UNSUPPORTED);
    cr_expect_str_eq(err.msg, "Legacy_Auth produces no session key");
    cr_expect_null(key);
    cr_expect_eq(key_len, 0);
    cr_expect_eq(fbw_auth_step(a, NULL, 0, &out, &out_len, &err), FBW_E_AUTH);
    cr_expect(strstr(err.msg, "Legacy_Auth") != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "masterkey") == NULL);
    fbw_auth_free(a);
}
