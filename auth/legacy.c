/* SPDX-License-Identifier: MIT */
/* legacy.c - the Legacy_Auth client plugin: traditional DES crypt(password, "9z") minus the salt.
 *
 * One step, no session key (so no wire encryption). Only the first 8 password bytes count, as in
 * every DES crypt. DES comes from OpenSSL's DES_fcrypt, which is deprecated API (DES itself is
 * obsolete) but still in libcrypto 3; it matches libxcrypt's crypt() byte for byte, 8-bit
 * characters included, and needs no 32 KiB crypt_data. */
#define OPENSSL_SUPPRESS_DEPRECATED /* for DES_fcrypt, in this file only */

#include "auth_internal.h"

#include <openssl/crypto.h>
#include <openssl/des.h>
#include <string.h>

#define LEGACY_SALT "9z"  /* LEGACY_PASSWORD_SALT in FB src/auth/SecurityDatabase/LegacyHash.h */
#define LEGACY_CRYPT_LEN 13 /* 2 salt characters + 11 hash characters */

int fbw_legacy_step(fbw_auth *a, fbw_err *err)
{
    char buf[LEGACY_CRYPT_LEN + 1] = {0}; /* DES_fcrypt writes 14 bytes including the NUL */
    int rc = FBW_OK;
    const char *r = DES_fcrypt(a->password, LEGACY_SALT, buf);
    if (!r || strlen(buf) != LEGACY_CRYPT_LEN || memcmp(buf, LEGACY_SALT, 2) != 0)
        rc = fbw_err_set(err, FBW_E_AUTH, "Legacy_Auth: DES crypt failed");
    else {
        memcpy(a->out, buf + 2, LEGACY_CRYPT_LEN - 2);
        a->out_len = LEGACY_CRYPT_LEN - 2;
    }
    OPENSSL_cleanse(buf, sizeof buf);
    return rc;
}
