/* SPDX-License-Identifier: MIT */
/* keys.h - the server's "known keys" clumplets and the client's choice of wire-crypt plugin.
 *
 * Parses the untagged <tag:1><len:1><data> lists that arrive in p_acpt_keys, op_cont_auth keys and
 * the op_response data ending authentication, accumulating them across packets in a fixed-size
 * record (no allocation, nothing to free). Does not create ciphers (crypt.h) or send op_crypt. */
#ifndef FBW_KEYS_H
#define FBW_KEYS_H

#include "err.h"

#include <stddef.h>
#include <stdint.h>

/* Clumplet tags (Firebird src/remote/remote.h). */
#define FBW_TAG_KEY_TYPE 0        /* key type name, "Symmetric" for SRP's session key */
#define FBW_TAG_KEY_PLUGINS 1     /* space-separated wire-crypt plugins for the last key type */
#define FBW_TAG_KNOWN_PLUGINS 2   /* server's authentication plugin list */
#define FBW_TAG_PLUGIN_SPECIFIC 3 /* "plugin\0" + plugin data (ChaCha IVs), for the last key */

/* Caps: Firebird sends one key type with ~3 plugins and 2 IVs (about 100 bytes). Exceeding them
 * fails with FBW_E_PROTO rather than silently dropping keys. */
#define FBW_KEYS_MAX 8
#define FBW_KEYS_MAX_SPECIFIC 16
#define FBW_KEYS_ARENA 1024

/* A view into the record's arena: text is NUL-terminated there, data is raw. */
typedef struct fbw_keys_str {
    uint16_t off, len;
} fbw_keys_str;

typedef struct fbw_server_key {
    fbw_keys_str type;    /* e.g. "Symmetric" */
    fbw_keys_str plugins; /* server's plugin names, each NUL-terminated, back to back */
    int nplugins;
} fbw_server_key;

typedef struct fbw_keys_specific {
    int key;             /* index into keys[] it belongs to */
    fbw_keys_str plugin; /* NUL-terminated name */
    fbw_keys_str data;   /* raw bytes, e.g. the 8- or 16-byte ChaCha IV */
} fbw_keys_specific;

typedef struct fbw_server_keys {
    fbw_server_key keys[FBW_KEYS_MAX];
    int nkeys;
    fbw_keys_specific specific[FBW_KEYS_MAX_SPECIFIC];
    int nspecific;
    fbw_keys_str known_plugins; /* last TAG_KNOWN_PLUGINS text ("" when none) */
    int has_known_plugins;
    size_t used;                /* arena bytes in use */
    char arena[FBW_KEYS_ARENA];
} fbw_server_keys;

void fbw_keys_init(fbw_server_keys *k);

/* Parse one clumplet list and add what it carries. Firebird's rules: TAG_KEY_PLUGINS opens a key
 * with the last TAG_KEY_TYPE seen in the same list; TAG_PLUGIN_SPECIFIC attaches to the last key
 * and is ignored (as Firebird does) without a '\0' or without bytes after it; unknown tags are
 * skipped. Errors: FBW_E_PROTO for a truncated clumplet, specific data before any key, or a cap
 * exceeded; k is then left as it was before the call. */
int fbw_keys_add(fbw_server_keys *k, const uint8_t *p, size_t n, fbw_err *err);

/* Choose the wire-crypt plugin for key type "Symmetric": the first name in client_list (separated
 * by space, tab, comma or semicolon) that a Symmetric key offers. ChaCha and ChaCha64 need their
 * IV, so a key offering them without specific data (protocol < 16) is skipped for them. On success
 * *plugin points into k (valid while k is unchanged), *iv and *iv_len give the specific data (NULL/0
 * when none). None -> FBW_E_UNSUPPORTED with a message listing what each side offered. */
int fbw_keys_choose(const fbw_server_keys *k, const char *client_list, const char **plugin,
                    const uint8_t **iv, size_t *iv_len, fbw_err *err);

/* Server's authentication plugin list from TAG_KNOWN_PLUGINS, or NULL when none arrived. */
const char *fbw_keys_known_plugins(const fbw_server_keys *k);

#endif
