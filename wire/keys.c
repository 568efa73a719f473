/* SPDX-License-Identifier: MIT */
/* keys.c - "known server keys" clumplets and wire-crypt plugin choice. */
#include "keys.h"

#include "xdr.h"

#include <stdio.h>
#include <string.h>

#define SYMMETRIC "Symmetric"

void fbw_keys_init(fbw_server_keys *k) { memset(k, 0, sizeof *k); }

/* Copy n bytes (plus a NUL when `nul`) into the arena. */
static int arena_put(fbw_server_keys *k, const void *p, size_t n, int nul, fbw_keys_str *s)
{
    if (n + (nul ? 1 : 0) > FBW_KEYS_ARENA - k->used)
        return 0;
    s->off = (uint16_t)k->used;
    s->len = (uint16_t)n;
    if (n)
        memcpy(k->arena + k->used, p, n);
    k->used += n;
    if (nul)
        k->arena[k->used++] = '\0';
    return 1;
}

static int is_sep(char ch) { return ch == ' ' || ch == '\t' || ch == ',' || ch == ';' || ch == '\0'; }

/* Next name in a separated list; returns its length (0 at the end) and advances *pos. */
static size_t next_token(const char *s, size_t n, size_t *pos, const char **tok)
{
    size_t i = *pos;
    while (i < n && is_sep(s[i]))
        i++;
    size_t start = i;
    while (i < n && !is_sep(s[i]))
        i++;
    *pos = i;
    *tok = s + start;
    return i - start;
}

/* Store the server's plugin list as back-to-back NUL-terminated names. */
static int put_plugins(fbw_server_keys *k, fbw_bytes list, fbw_server_key *key)
{
    const char *s = (const char *)list.p;
    const char *tok;
    size_t pos = 0, len;
    key->plugins.off = (uint16_t)k->used;
    key->nplugins = 0;
    while ((len = next_token(s, list.n, &pos, &tok)) > 0) {
        fbw_keys_str unused;
        if (!arena_put(k, tok, len, 1, &unused))
            return 0;
        key->nplugins++;
    }
    key->plugins.len = (uint16_t)(k->used - key->plugins.off);
    return 1;
}

static int add_key(fbw_server_keys *k, fbw_bytes type, fbw_bytes plugins)
{
    if (k->nkeys >= FBW_KEYS_MAX)
        return 0;
    fbw_server_key *key = &k->keys[k->nkeys];
    if (!arena_put(k, type.p, type.n, 1, &key->type) || !put_plugins(k, plugins, key))
        return 0;
    k->nkeys++;
    return 1;
}

static int add_specific(fbw_server_keys *k, int key, fbw_bytes d)
{
    const uint8_t *nul = d.n ? memchr(d.p, 0, d.n) : NULL;
    if (!nul || nul + 1 == d.p + d.n)
        return 1; /* Firebird ignores specific data without a name terminator or without bytes */
    if (k->nspecific >= FBW_KEYS_MAX_SPECIFIC)
        return 0;
    fbw_keys_specific *s = &k->specific[k->nspecific];
    size_t name_len = (size_t)(nul - d.p);
    s->key = key;
    if (!arena_put(k, d.p, name_len, 1, &s->plugin) ||
        !arena_put(k, nul + 1, d.n - name_len - 1, 0, &s->data))
        return 0;
    k->nspecific++;
    return 1;
}

int fbw_keys_add(fbw_server_keys *k, const uint8_t *p, size_t n, fbw_err *err)
{
    /* Undo information: the arena is append-only, so counts and the fill level are enough. */
    const int saved_nkeys = k->nkeys, saved_nspecific = k->nspecific;
    const size_t saved_used = k->used;
    const fbw_keys_str saved_known = k->known_plugins;
    const int saved_has_known = k->has_known_plugins;
    fbw_rd rd;
    fbw_bytes type = {(const uint8_t *)"", 0};
    int current = -1; /* key opened by this list, as in Firebird's addServerKeys */
    int rc = FBW_OK;
    size_t at = 0;

    fbw_rd_init(&rd, p, n, FBW_E_PROTO);
    while (rc == FBW_OK && fbw_rd_left(&rd) > 0) {
        at = fbw_rd_offset(&rd);
        fbw_bytes hdr = fbw_xdr_raw(&rd, 2);
        fbw_bytes data = fbw_xdr_raw(&rd, hdr.p ? hdr.p[1] : 0);
        if (rd.rc) {
            rc = fbw_err_set(err, FBW_E_PROTO, "server keys: truncated clumplet at offset %zu of %zu",
                             at, n);
            break;
        }
        int ok = 1;
        switch (hdr.p[0]) {
        case FBW_TAG_KEY_TYPE:
            type = data;
            break;
        case FBW_TAG_KEY_PLUGINS:
            ok = add_key(k, type, data);
            current = ok ? k->nkeys - 1 : current;
            break;
        case FBW_TAG_KNOWN_PLUGINS:
            ok = arena_put(k, data.p, data.n, 1, &k->known_plugins);
            k->has_known_plugins |= ok;
            break;
        case FBW_TAG_PLUGIN_SPECIFIC:
            if (current < 0) {
                rc = fbw_err_set(err, FBW_E_PROTO, "server keys: plugin-specific data at offset "
                                 "%zu before any key plugin list", at);
                break;
            }
            ok = add_specific(k, current, data);
            break;
        default:
            break; /* unknown tags are skipped, as Firebird does */
        }
        if (!ok)
            rc = fbw_err_set(err, FBW_E_PROTO, "server keys: too many keys or too much key data "
                             "(clumplet at offset %zu)", at);
    }
    if (rc) {
        k->nkeys = saved_nkeys;
        k->nspecific = saved_nspecific;
        k->used = saved_used;
        k->known_plugins = saved_known;
        k->has_known_plugins = saved_has_known;
    }
    return rc;
}

static const char *str_at(const fbw_server_keys *k, fbw_keys_str s) { return k->arena + s.off; }

static int needs_iv(const char *name, size_t len)
{
    return (len == 6 && memcmp(name, "ChaCha", 6) == 0) ||
           (len == 8 && memcmp(name, "ChaCha64", 8) == 0);
}

/* The key's offered name equal to tok, or NULL. */
static const char *key_offers(const fbw_server_keys *k, const fbw_server_key *key, const char *tok,
                              size_t len)
{
    const char *s = str_at(k, key->plugins);
    for (int i = 0; i < key->nplugins; i++) {
        size_t sl = strlen(s);
        if (sl == len && memcmp(s, tok, len) == 0)
            return s;
        s += sl + 1;
    }
    return NULL;
}

static const fbw_keys_specific *find_specific(const fbw_server_keys *k, int key, const char *name)
{
    for (int i = 0; i < k->nspecific; i++)
        if (k->specific[i].key == key && strcmp(str_at(k, k->specific[i].plugin), name) == 0)
            return &k->specific[i];
    return NULL;
}

static int is_symmetric(const fbw_server_keys *k, const fbw_server_key *key)
{
    return key->type.len == sizeof SYMMETRIC - 1 &&
           memcmp(str_at(k, key->type), SYMMETRIC, sizeof SYMMETRIC - 1) == 0;
}

/* Append "type: [a b c]" for every key to msg (truncating quietly). */
static void describe_server(const fbw_server_keys *k, char *msg, size_t cap)
{
    size_t used = strlen(msg);
    for (int i = 0; i < k->nkeys && used < cap; i++) {
        const fbw_server_key *key = &k->keys[i];
        const char *s = str_at(k, key->plugins);
        int w = snprintf(msg + used, cap - used, "%s%.40s: [", i ? "; " : "", str_at(k, key->type));
        used += w > 0 ? (size_t)w : 0;
        for (int j = 0; j < key->nplugins && used < cap; j++) {
            const char *iv_note = needs_iv(s, strlen(s)) && !find_specific(k, i, s) ? " (no IV)" : "";
            w = snprintf(msg + used, cap - used, "%s%.40s%s", j ? " " : "", s, iv_note);
            used += w > 0 ? (size_t)w : 0;
            s += strlen(s) + 1;
        }
        if (used < cap) {
            w = snprintf(msg + used, cap - used, "]");
            used += w > 0 ? (size_t)w : 0;
        }
    }
}

int fbw_keys_choose(const fbw_server_keys *k, const char *client_list, const char **plugin,
                    const uint8_t **iv, size_t *iv_len, fbw_err *err)
{
    const char *list = client_list ? client_list : "";
    size_t list_len = strlen(list);
    *plugin = NULL;
    *iv = NULL;
    *iv_len = 0;
    /* Firebird's order: each server key in arrival order, then the client's own preference. */
    for (int i = 0; i < k->nkeys; i++) {
        if (!is_symmetric(k, &k->keys[i]))
            continue;
        const char *tok;
        size_t pos = 0, len;
        while ((len = next_token(list, list_len, &pos, &tok)) > 0) {
            const char *name = key_offers(k, &k->keys[i], tok, len);
            if (!name)
                continue;
            const fbw_keys_specific *s = find_specific(k, i, name);
            if (needs_iv(name, len) && !s)
                continue;
            *plugin = name;
            if (s) {
                *iv = (const uint8_t *)str_at(k, s->data);
                *iv_len = s->data.len;
            }
            return FBW_OK;
        }
    }
    char msg[FBW_ERR_MSG_MAX];
    snprintf(msg, sizeof msg, "no common wire crypt plugin: client offers [%.120s], server offers ",
             list);
    if (k->nkeys == 0)
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "no keys");
    else
        describe_server(k, msg, sizeof msg);
    return fbw_err_set(err, FBW_E_UNSUPPORTED, "%s", msg);
}

const char *fbw_keys_known_plugins(const fbw_server_keys *k)
{
    return k->has_known_plugins ? str_at(k, k->known_plugins) : NULL;
}
