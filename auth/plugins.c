/* SPDX-License-Identifier: MIT */
/* plugins.c - plugin table, instance life cycle, login normalization and plugin lists.
 *
 * The math lives in srp.c and legacy.c; this file decides which one runs, keeps the state
 * machine (start -> [SRP: sent A] -> done, or failed) and owns the secrets' memory. */
#include "auth_internal.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <string.h>
#include <strings.h>

typedef struct plugin_def {
    const char *name;
    enum fbw_auth_kind kind;
    const EVP_MD *(*proof_md)(void); /* SRP: hash of the final proof */
} plugin_def;

/* Srp224..Srp512 exist from FB 3.0.4 on; the server picks, the client follows. */
static const plugin_def plugins[] = {
    {"Srp", FBW_AUTH_SRP, EVP_sha1},
    {"Srp224", FBW_AUTH_SRP, EVP_sha224},
    {"Srp256", FBW_AUTH_SRP, EVP_sha256},
    {"Srp384", FBW_AUTH_SRP, EVP_sha384},
    {"Srp512", FBW_AUTH_SRP, EVP_sha512},
    {"Legacy_Auth", FBW_AUTH_LEGACY, NULL},
};

static const plugin_def *find_plugin(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof plugins / sizeof plugins[0]; i++)
        if (strlen(plugins[i].name) == len && strncasecmp(plugins[i].name, name, len) == 0)
            return &plugins[i];
    return NULL;
}

/* ---- login normalization (FB src/common/utils.cpp dpbItemUpper) --------------------------- */

/* An SQL identifier character: ASCII letter, '_' or '$', or a digit when not first. */
static int ident_char(unsigned char c, int first)
{
    if (c >= 0x80)
        return 0;
    return (c >= '0' && c <= '9' && !first) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           c == '_' || c == '$';
}

static void ascii_upper(char *s)
{
    for (; *s; s++)
        if (*s >= 'a' && *s <= 'z')
            *s = (char)(*s - 'a' + 'A');
}

/* Strip the quotes of a quoted login into out; *ident tells whether every character was an
 * identifier character (positions counted in the input, as Firebird does). */
static int unquote(const char *s, size_t len, char *out, size_t out_size, int *ident,
                   fbw_err *err)
{
    const char q = s[0];
    size_t o = 0;
    int closed = 0;
    *ident = 1;
    for (size_t i = 1; i < len; i++) {
        if (s[i] == q) {
            if (i + 1 == len) {
                closed = 1; /* the closing quote ends the input */
                break;
            }
            if (s[++i] != q)
                return fbw_err_set(err, FBW_E_USAGE, "login: text after the closing quote %c at "
                                   "offset %zu", q, i);
            /* a doubled quote stands for one quote character, not checked as identifier */
        } else if (!ident_char((unsigned char)s[i], i == 1)) {
            *ident = 0;
        }
        if (o + 1 >= out_size)
            return fbw_err_set(err, FBW_E_USAGE, "normalized login does not fit %zu bytes",
                               out_size);
        out[o++] = s[i];
    }
    if (!closed)
        return fbw_err_set(err, FBW_E_USAGE, "login: missing closing quote %c", q);
    out[o] = '\0';
    return FBW_OK;
}

int fbw_auth_normalize_login(const char *login, char *out, size_t out_size, fbw_err *err)
{
    size_t len;
    int ident = 1, rc;
    if (!login || !out || out_size == 0)
        return fbw_err_set(err, FBW_E_USAGE, "fbw_auth_normalize_login: NULL argument");
    len = strlen(login);
    if (len > 0 && (login[0] == '"' || login[0] == '\'')) {
        rc = unquote(login, len, out, out_size, &ident, err);
        if (rc == FBW_OK && ident && login[0] == '\'')
            ascii_upper(out);
        return rc;
    }
    if (len + 1 > out_size)
        return fbw_err_set(err, FBW_E_USAGE, "normalized login does not fit %zu bytes", out_size);
    memcpy(out, login, len + 1);
    for (size_t i = 0; i < len && ident; i++)
        ident = ident_char((unsigned char)login[i], i == 0);
    if (ident) /* otherwise (dots, dashes, non-ASCII...) the server keeps it unchanged */
        ascii_upper(out);
    return FBW_OK;
}

/* ---- instances ----------------------------------------------------------------------------- */

int fbw_auth_new(const char *name, const char *login, const char *password, fbw_auth **out,
                 fbw_err *err)
{
    const plugin_def *def;
    fbw_auth *a = NULL;
    size_t pw_len;
    int rc;
    if (!name || !login || !password || !out)
        return fbw_err_set(err, FBW_E_USAGE, "fbw_auth_new: NULL argument");
    *out = NULL;
    def = find_plugin(name, strlen(name));
    if (!def)
        return fbw_err_set(err, FBW_E_UNSUPPORTED, "authentication plugin \"%.64s\" is not "
                           "supported (known: Srp, Srp224, Srp256, Srp384, Srp512, Legacy_Auth)",
                           name);
    pw_len = strlen(password);
    if (pw_len > FBW_AUTH_PASSWORD_MAX)
        return fbw_err_set(err, FBW_E_USAGE, "password longer than %d bytes",
                           FBW_AUTH_PASSWORD_MAX);
    if (strlen(login) > FBW_AUTH_LOGIN_MAX)
        return fbw_err_set(err, FBW_E_USAGE, "login longer than %d bytes", FBW_AUTH_LOGIN_MAX);
    a = OPENSSL_zalloc(sizeof *a);
    if (!a)
        return fbw_err_set(err, FBW_E_NOMEM, "out of memory creating %s", def->name);
    a->kind = def->kind;
    a->state = FBW_AUTH_START;
    a->name = def->name;
    a->proof_md = def->proof_md ? def->proof_md() : NULL;
    rc = fbw_auth_normalize_login(login, a->login, sizeof a->login, err);
    if (rc == FBW_OK && a->login[0] == '\0')
        rc = fbw_err_set(err, FBW_E_USAGE, "login is empty");
    if (rc == FBW_OK) {
        /* The secure heap is used when the application set one up; clear_free wipes either way. */
        a->password = OPENSSL_secure_zalloc(pw_len + 1);
        if (!a->password)
            rc = fbw_err_set(err, FBW_E_NOMEM, "out of memory copying the password");
    }
    if (rc == FBW_OK) {
        memcpy(a->password, password, pw_len);
        a->password_len = pw_len;
        if (a->kind == FBW_AUTH_SRP)
            rc = fbw_srp_start(a, err);
    }
    if (rc != FBW_OK) {
        fbw_auth_free(a);
        return rc;
    }
    *out = a;
    return FBW_OK;
}

const char *fbw_auth_name(const fbw_auth *a) { return a ? a->name : ""; }

const char *fbw_auth_login(const fbw_auth *a) { return a ? a->login : ""; }

int fbw_auth_done(const fbw_auth *a) { return a && a->state == FBW_AUTH_DONE; }

int fbw_auth_step(fbw_auth *a, const uint8_t *in, size_t in_len, const uint8_t **out,
                  size_t *out_len, fbw_err *err)
{
    int rc;
    if (!a || !out || !out_len || (!in && in_len > 0))
        return fbw_err_set(err, FBW_E_USAGE, "fbw_auth_step: NULL argument");
    *out = NULL;
    *out_len = 0;
    if (a->state == FBW_AUTH_DONE)
        return fbw_err_set(err, FBW_E_AUTH, "%s: step called after the final step", a->name);
    if (a->state == FBW_AUTH_FAILED)
        return fbw_err_set(err, FBW_E_AUTH, "%s: step called after a failed step", a->name);
    a->out_len = 0;
    if (a->kind == FBW_AUTH_SRP) {
        rc = fbw_srp_step(a, in, in_len, err);
    } else {
        rc = fbw_legacy_step(a, err);
        if (rc == FBW_OK)
            a->state = FBW_AUTH_DONE;
    }
    if (rc != FBW_OK) {
        a->state = FBW_AUTH_FAILED;
        return rc;
    }
    *out = a->out;
    *out_len = a->out_len;
    return FBW_OK;
}

int fbw_auth_session_key(const fbw_auth *a, const uint8_t **key, size_t *len, fbw_err *err)
{
    if (!a || !key || !len)
        return fbw_err_set(err, FBW_E_USAGE, "fbw_auth_session_key: NULL argument");
    *key = NULL;
    *len = 0;
    if (a->kind == FBW_AUTH_LEGACY)
        return fbw_err_set(err, FBW_E_UNSUPPORTED, "Legacy_Auth produces no session key");
    if (a->state != FBW_AUTH_DONE || a->key_len == 0)
        return fbw_err_set(err, FBW_E_USAGE, "%s: no session key before phase 2 succeeded",
                           a->name);
    *key = a->key;
    *len = a->key_len;
    return FBW_OK;
}

void fbw_auth_free(fbw_auth *a)
{
    if (!a)
        return;
    fbw_srp_free(a->srp);
    if (a->password)
        OPENSSL_secure_clear_free(a->password, a->password_len + 1);
    OPENSSL_clear_free(a, sizeof *a); /* session key, outputs */
}

/* ---- plugin lists -------------------------------------------------------------------------- */

static int is_sep(char c) { return c == ' ' || c == '\t' || c == ',' || c == ';'; }

int fbw_auth_list_parse(const char *text, fbw_auth_list *out, fbw_err *err)
{
    const char *p = text ? text : FBW_AUTH_DEFAULT_LIST;
    if (!out)
        return fbw_err_set(err, FBW_E_USAGE, "fbw_auth_list_parse: NULL argument");
    memset(out, 0, sizeof *out);
    while (*p) {
        size_t len = 0;
        const plugin_def *def;
        while (is_sep(*p))
            p++;
        while (p[len] && !is_sep(p[len]))
            len++;
        if (len == 0)
            break;
        def = find_plugin(p, len);
        if (!def)
            return fbw_err_set(err, FBW_E_USAGE, "unknown authentication plugin \"%.*s\" (known: "
                               "Srp, Srp224, Srp256, Srp384, Srp512, Legacy_Auth)",
                               (int)(len > 64 ? 64 : len), p);
        if (!fbw_auth_list_contains(out, def->name)) {
            if (out->n == FBW_AUTH_MAX_PLUGINS)
                return fbw_err_set(err, FBW_E_USAGE, "more than %d authentication plugins",
                                   FBW_AUTH_MAX_PLUGINS);
            strcpy(out->name[out->n++], def->name); /* names in the table are < 32 bytes */
        }
        p += len;
    }
    if (out->n == 0)
        return fbw_err_set(err, FBW_E_USAGE, "empty authentication plugin list");
    return FBW_OK;
}

int fbw_auth_list_contains(const fbw_auth_list *l, const char *name)
{
    if (!l || !name)
        return 0;
    for (int i = 0; i < l->n && i < FBW_AUTH_MAX_PLUGINS; i++)
        if (strcmp(l->name[i], name) == 0)
            return 1;
    return 0;
}

int fbw_auth_list_format(const fbw_auth_list *l, char *out, size_t out_size)
{
    size_t o = 0;
    if (!l || !out || out_size == 0 || l->n < 0 || l->n > FBW_AUTH_MAX_PLUGINS)
        return FBW_E_USAGE;
    out[0] = '\0';
    for (int i = 0; i < l->n; i++) {
        size_t n = strnlen(l->name[i], sizeof l->name[i]);
        size_t need = n + (i > 0 ? 2 : 0);
        if (n == sizeof l->name[i] || o + need + 1 > out_size)
            return FBW_E_USAGE;
        if (i > 0) {
            memcpy(out + o, ", ", 2);
            o += 2;
        }
        memcpy(out + o, l->name[i], n);
        o += n;
        out[o] = '\0';
    }
    return (int)o;
}
