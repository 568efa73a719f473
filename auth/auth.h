/* SPDX-License-Identifier: MIT */
/* auth.h - Firebird client authentication plugins: Srp, Srp224/256/384/512 and Legacy_Auth.
 *
 * A plugin instance turns a login and password into the data the server expects, one step at a
 * time: bytes in, bytes out. No I/O, no packet framing (the caller puts the output into
 * CNCT_specific_data, op_cont_auth or the DPB) and no wire encryption (the caller takes the SRP
 * session key from here). Plugin-list parsing and login normalization live here too. */
#ifndef FBW_AUTH_H
#define FBW_AUTH_H

#include "err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fbw_auth fbw_auth; /* one running plugin instance (opaque) */

/* Caps on caller-supplied text: a Firebird login is at most 63 UTF-8 characters, so these are
 * generous; they keep every buffer in the instance fixed-size. */
#define FBW_AUTH_LOGIN_MAX 1024    /* bytes, as typed and after normalization */
#define FBW_AUTH_PASSWORD_MAX 4096 /* bytes */

/* Start a plugin. name: "Srp", "Srp224", "Srp256", "Srp384", "Srp512" or "Legacy_Auth", matched
 * case-insensitively (the server compares plugin names that way too). login as typed by the user,
 * normalized internally (fbw_auth_normalize_login); password UTF-8, copied into OpenSSL secure
 * memory and wiped on free. Returns FBW_OK, FBW_E_UNSUPPORTED (unknown name), FBW_E_USAGE (NULL
 * or empty login, bad quoting, too long) or FBW_E_NOMEM. */
int fbw_auth_new(const char *name, const char *login, const char *password, fbw_auth **out,
                 fbw_err *err);

/* Canonical spelling of the plugin name, e.g. "Srp256". */
const char *fbw_auth_name(const fbw_auth *a);

/* One step. First call produces phase-1 data (SRP: hex(A), upper-case ASCII; Legacy_Auth: the
 * 11-char DES-crypt hash, final). Input to the first call is ignored, as Firebird's own client
 * does when it switches plugins. Second SRP call takes the server's salt/B block and produces
 * hex(M), final. *out stays valid until the next step or free.
 * Errors: FBW_E_AUTH for malformed server data (message says what is wrong), for a trivial server
 * key (B mod N < 2), for a call after the final step or after a failed step; FBW_E_NOMEM.
 * A failed step is final: the instance only reports errors afterwards. */
int fbw_auth_step(fbw_auth *a, const uint8_t *in, size_t in_len, const uint8_t **out,
                  size_t *out_len, fbw_err *err);

/* True once the plugin produced its final data (SRP after phase 2; Legacy_Auth after phase 1). */
int fbw_auth_done(const fbw_auth *a);

/* Session key for wire crypt ("Symmetric" key type): SRP's K (20 bytes, SHA-1 for every Srp
 * variant) after phase 2; the pointer lives as long as the instance. Legacy_Auth has none:
 * FBW_E_UNSUPPORTED "Legacy_Auth produces no session key". SRP before phase 2: FBW_E_USAGE. */
int fbw_auth_session_key(const fbw_auth *a, const uint8_t **key, size_t *len, fbw_err *err);

/* The normalized login used in the proof (I in SRP). The login to put into CNCT_login and
 * isc_dpb_user_name is the one the user typed, not this one. */
const char *fbw_auth_login(const fbw_auth *a);

/* NULL ok; wipes the password, SRP private key and session key. */
void fbw_auth_free(fbw_auth *a);

/* Login normalization exactly as the server applies it (fb_utils::dpbItemUpper, FB 3.0.10+,
 * 4.0.2+, 5, 6): "quoted" names lose their quotes ("" -> ") and keep their case; 'quoted' names
 * too, but are upper-cased when every character is an SQL identifier character; unquoted names
 * made only of [A-Za-z0-9_$] (first not a digit) are upper-cased; anything else is unchanged.
 * Errors: FBW_E_USAGE for a missing closing quote, text after the closing quote, or when the
 * result does not fit out_size (including the NUL). */
int fbw_auth_normalize_login(const char *login, char *out, size_t out_size, fbw_err *err);

/* Plugin lists. Separators: space, tab, comma, semicolon. Names are matched case-insensitively
 * and stored in canonical spelling; duplicates are dropped. Legacy_Auth is never in the default:
 * it sends a crackable hash, so it is used only when the user lists it. */
#define FBW_AUTH_DEFAULT_LIST "Srp256,Srp"
#define FBW_AUTH_MAX_PLUGINS 8

typedef struct fbw_auth_list {
    int n;
    char name[FBW_AUTH_MAX_PLUGINS][32];
} fbw_auth_list;

/* text NULL means FBW_AUTH_DEFAULT_LIST. Unknown names, an empty list or more than
 * FBW_AUTH_MAX_PLUGINS names -> FBW_E_USAGE. */
int fbw_auth_list_parse(const char *text, fbw_auth_list *out, fbw_err *err);
/* 1 if name is in the list (exact, case-sensitive comparison), else 0. */
int fbw_auth_list_contains(const fbw_auth_list *l, const char *name);
/* The list for CNCT_plugin_list / isc_dpb_auth_plugin_list, e.g. "Srp256, Srp". Returns the
 * length written (without the NUL), or FBW_E_USAGE if out_size is too small. */
int fbw_auth_list_format(const fbw_auth_list *l, char *out, size_t out_size);

#endif
