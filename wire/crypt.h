/* SPDX-License-Identifier: MIT */
/* crypt.h - one direction of a Firebird wire cipher (Arc4, ChaCha, ChaCha64) over OpenSSL EVP.
 *
 * Transforms bytes in place below the packet layer (after deflate on send, before inflate on
 * receive). Does not choose the plugin (keys.h), send op_crypt or touch sockets. All OpenSSL objects
 * come from fbwire's own OSSL_LIB_CTX (default + legacy providers, loaded once per process), never
 * from the host program's default context. Key material is wiped; nothing here prints it. */
#ifndef FBW_CRYPT_H
#define FBW_CRYPT_H

#include "err.h"

#include <stddef.h>
#include <stdint.h>

/* Client's default preference, the same order as fbclient's WireCryptPlugin default. */
#define FBW_CRYPT_DEFAULT_LIST "ChaCha64,ChaCha,Arc4"

typedef struct fbw_cipher fbw_cipher;

/* Create one direction of `plugin`:
 *   "Arc4"     key = session_key (1..256 bytes); iv ignored.
 *   "ChaCha"   key = SHA-256(session_key), session_key >= 16 bytes; iv = 16 bytes from the server
 *              (12-byte nonce + 4-byte big-endian initial block counter) or 12 bytes (counter 0).
 *              32-bit block counter: like Firebird (libtomcrypt) the block with counter 2^32-1 is
 *              never produced; needing it fails with FBW_E_CRYPT "ChaCha counter overflow".
 *   "ChaCha64" key = SHA-256(session_key); iv = 8-byte nonce; 64-bit block counter from 0.
 * Wrong iv size or short key -> FBW_E_CRYPT; unknown plugin (or RC4 missing from OpenSSL) ->
 * FBW_E_UNSUPPORTED. Both directions are built from the same key and iv (that is the protocol). */
int fbw_cipher_new(const char *plugin, const uint8_t *session_key, size_t key_len,
                   const uint8_t *iv, size_t iv_len, fbw_cipher **out, fbw_err *err);

/* Encrypt or decrypt n bytes in place (stream cipher: the two are the same). No allocation.
 * Returns FBW_OK or FBW_E_CRYPT (counter exhausted; buf is then left unchanged). */
int fbw_cipher_apply(fbw_cipher *c, uint8_t *buf, size_t n, fbw_err *err);

/* The plugin name as sent in op_crypt ("ChaCha64"); static storage. */
const char *fbw_cipher_name(const fbw_cipher *c);

/* Free; the EVP context (key schedule) is wiped by OpenSSL. NULL is allowed. */
void fbw_cipher_free(fbw_cipher *c);

/* Test hook (internal): like fbw_cipher_new but start at keystream block `first_block`.
 * ChaCha64: the 64-bit counter; ChaCha: replaces the iv's 32-bit counter (must fit, else
 * FBW_E_USAGE); Arc4: must be 0. Lets tests reach the 2^32 block boundary without 256 GiB. */
int fbw_cipher_new_at_block(const char *plugin, const uint8_t *session_key, size_t key_len,
                            const uint8_t *iv, size_t iv_len, uint64_t first_block,
                            fbw_cipher **out, fbw_err *err);
/* Test hook (internal): ChaCha or ChaCha64 with a raw 32-byte ChaCha20 key (no SHA-256
 * derivation), so the RFC 8439 vectors can be run through the IV mapping. */
int fbw_cipher_new_raw_key(const char *plugin, const uint8_t key[32], const uint8_t *iv,
                           size_t iv_len, fbw_cipher **out, fbw_err *err);

#endif
