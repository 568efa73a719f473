/* SPDX-License-Identifier: MIT */
/* keylog.h - the wire crypt key log (FBWIRE_KEYLOGFILE): one text line per encrypted connection
 * with what a capture reader needs to decrypt it, like TLS's SSLKEYLOGFILE. A debugging aid: whoever
 * can read the file can read every session logged in it (and, for Arc4, forge traffic in them).
 *
 * Line format (docs/fbwire-pcap.md, "Key log"), fields separated by one space:
 *   FBWIRE_KEYLOG_1 time=2026-12-01T21:03:04.123456Z client=127.0.0.1:41234 server=127.0.0.1:3050
 *       plugin=ChaCha64 key=<hex> iv=<hex>
 * key is the session key the plugin derives its ciphers from (SRP's K; Arc4 uses it as is, ChaCha
 * and ChaCha64 hash it with SHA-256); iv is the IV/nonce the server sent (empty for Arc4). Addresses
 * are written as fbwire-pcap prints them ("[::1]:3050" for IPv6), so lookup is a string compare.
 * Lines starting with '#' and empty lines are comments; unknown key=value fields are ignored.
 *
 * Formatting and parsing are pure; fbw_keylog_append is the only function that touches a file and
 * belongs to the blocking layer (client.c calls it, the sans-I/O core never does). */
#ifndef FBW_KEYLOG_H
#define FBW_KEYLOG_H

#include "err.h"

#include <stddef.h>
#include <stdint.h>

#define FBW_KEYLOG_ENV "FBWIRE_KEYLOGFILE"
#define FBW_KEYLOG_LABEL "FBWIRE_KEYLOG_1"
#define FBW_KEYLOG_KEY_MAX 256 /* Arc4's longest key; SRP's K is 20 bytes */
#define FBW_KEYLOG_IV_MAX 64
/* Longest line fbw_keylog_format writes, newline included. */
#define FBW_KEYLOG_LINE_MAX 1024

typedef struct fbw_keylog_entry {
    char time[40];    /* ISO 8601 UTC, as written; informational */
    char client[64];  /* "127.0.0.1:41234" or "[::1]:41234" */
    char server[64];
    char plugin[16];  /* Arc4, ChaCha, ChaCha64 */
    uint8_t key[FBW_KEYLOG_KEY_MAX];
    size_t key_len;
    uint8_t iv[FBW_KEYLOG_IV_MAX];
    size_t iv_len;
} fbw_keylog_entry;

/* One line, '\n' included, into buf (FBW_KEYLOG_LINE_MAX bytes suffice). Returns its length, or 0
 * when a field does not fit or contains a space or newline. */
size_t fbw_keylog_format(const fbw_keylog_entry *e, char *buf, size_t size);

/* Parse one line (without or with its '\n'). FBW_OK fills *e; for a comment or empty line FBW_OK
 * with *e cleared (key_len 0: a real line always has a key);
 * FBW_E_BADVALUE with a message naming the field for anything malformed (wrong label, missing
 * field, odd or non-hex digits, key or IV too long, empty key). Key bytes never enter a message. */
int fbw_keylog_parse(const char *line, size_t n, fbw_keylog_entry *e, fbw_err *err);

/* Append one formatted line to path with a single write() on an O_APPEND descriptor, so lines of
 * concurrent threads and processes never interleave. Creates the file with mode 0600 (an existing
 * file keeps its mode). FBW_E_IO when it cannot be opened or the write is short. */
int fbw_keylog_append(const char *path, const char *line, size_t n, fbw_err *err);

#endif
