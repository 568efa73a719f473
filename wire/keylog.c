/* SPDX-License-Identifier: MIT */
/* keylog.c - the FBWIRE_KEYLOGFILE line format and its atomic append. */
#include "keylog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A field value may not contain what separates fields or lines. */
static int plain_token(const char *s)
{
    return s[0] && !strpbrk(s, " \t\r\n");
}

static size_t put_hex(char *out, const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    return 2 * n;
}

size_t fbw_keylog_format(const fbw_keylog_entry *e, char *buf, size_t size)
{
    if (!plain_token(e->time) || !plain_token(e->client) || !plain_token(e->server) ||
        !plain_token(e->plugin) || e->key_len == 0 || e->key_len > FBW_KEYLOG_KEY_MAX ||
        e->iv_len > FBW_KEYLOG_IV_MAX)
        return 0;
    int head = snprintf(buf, size, "%s time=%s client=%s server=%s plugin=%s key=", FBW_KEYLOG_LABEL,
                        e->time, e->client, e->server, e->plugin);
    /* head, key hex, " iv=", iv hex, "\n" and the terminating NUL */
    if (head < 0 || (size_t)head + 2 * e->key_len + 4 + 2 * e->iv_len + 2 > size)
        return 0;
    size_t n = (size_t)head;
    n += put_hex(buf + n, e->key, e->key_len);
    memcpy(buf + n, " iv=", 4);
    n += 4;
    n += put_hex(buf + n, e->iv, e->iv_len);
    buf[n++] = '\n';
    buf[n] = 0;
    return n;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static int parse_hex(const char *name, const char *p, size_t n, uint8_t *out, size_t cap,
                     size_t *len, fbw_err *err)
{
    if (n % 2)
        return fbw_err_set(err, FBW_E_BADVALUE, "%s: odd number of hex digits (%zu): truncated?",
                           name, n);
    if (n / 2 > cap)
        return fbw_err_set(err, FBW_E_BADVALUE, "%s: %zu bytes, at most %zu", name, n / 2, cap);
    for (size_t i = 0; i < n; i += 2) {
        int hi = hexval(p[i]), lo = hexval(p[i + 1]);
        if (hi < 0 || lo < 0)
            return fbw_err_set(err, FBW_E_BADVALUE, "%s: not a hex digit at position %zu", name,
                               hexval(p[i]) < 0 ? i : i + 1);
        out[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    *len = n / 2;
    return FBW_OK;
}

static int copy_field(const char *name, const char *p, size_t n, char *out, size_t cap,
                      fbw_err *err)
{
    if (n == 0 || n >= cap)
        return fbw_err_set(err, FBW_E_BADVALUE, "%s: %s", name, n ? "too long" : "empty");
    memcpy(out, p, n);
    out[n] = 0;
    return FBW_OK;
}

/* One key=value token; seen collects which of the required fields were present. */
static int parse_field(const char *p, size_t n, fbw_keylog_entry *e, unsigned *seen, fbw_err *err)
{
    const char *eq = memchr(p, '=', n);
    if (!eq)
        return fbw_err_set(err, FBW_E_BADVALUE, "field \"%.*s\" is not key=value",
                           (int)(n < 32 ? n : 32), p);
    size_t kn = (size_t)(eq - p), vn = n - kn - 1;
    const char *v = eq + 1;
#define IS(k) (kn == sizeof(k) - 1 && !memcmp(p, k, kn))
    if (IS("time")) {
        *seen |= 1;
        return copy_field("time", v, vn, e->time, sizeof e->time, err);
    }
    if (IS("client")) {
        *seen |= 2;
        return copy_field("client", v, vn, e->client, sizeof e->client, err);
    }
    if (IS("server")) {
        *seen |= 4;
        return copy_field("server", v, vn, e->server, sizeof e->server, err);
    }
    if (IS("plugin")) {
        *seen |= 8;
        return copy_field("plugin", v, vn, e->plugin, sizeof e->plugin, err);
    }
    if (IS("key")) {
        *seen |= 16;
        int rc = parse_hex("key", v, vn, e->key, sizeof e->key, &e->key_len, err);
        if (rc == FBW_OK && e->key_len == 0)
            rc = fbw_err_set(err, FBW_E_BADVALUE, "key: empty");
        return rc;
    }
    if (IS("iv")) {
        *seen |= 32;
        return parse_hex("iv", v, vn, e->iv, sizeof e->iv, &e->iv_len, err);
    }
#undef IS
    return FBW_OK; /* a later version's field */
}

int fbw_keylog_parse(const char *line, size_t n, fbw_keylog_entry *e, fbw_err *err)
{
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    memset(e, 0, sizeof *e);
    if (n == 0 || line[0] == '#')
        return FBW_OK; /* nothing in it: key_len 0 */
    size_t label = sizeof FBW_KEYLOG_LABEL - 1;
    if (n < label || memcmp(line, FBW_KEYLOG_LABEL, label) || (n > label && line[label] != ' '))
        return fbw_err_set(err, FBW_E_BADVALUE, "not a fbwire key log line (expected %s ...)",
                           FBW_KEYLOG_LABEL);
    unsigned seen = 0;
    for (size_t i = label; i < n;) {
        while (i < n && line[i] == ' ')
            i++;
        size_t j = i;
        while (j < n && line[j] != ' ')
            j++;
        if (j > i) {
            int rc = parse_field(line + i, j - i, e, &seen, err);
            if (rc)
                return rc;
        }
        i = j;
    }
    static const char *const names[] = {"time", "client", "server", "plugin", "key", "iv"};
    for (unsigned b = 0; b < 6; b++)
        if (!(seen & (1u << b)))
            return fbw_err_set(err, FBW_E_BADVALUE, "field %s= missing (truncated line?)",
                               names[b]);
    return FBW_OK;
}

int fbw_keylog_append(const char *path, const char *line, size_t n, fbw_err *err)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
    if (fd < 0)
        return fbw_err_set_errno(err, errno, "key log %s: cannot open", path);
    /* One write per line: O_APPEND makes the seek and the write one atomic step, so concurrent
     * writers' lines never interleave (regular files on local file systems). */
    ssize_t w;
    do
        w = write(fd, line, n);
    while (w < 0 && errno == EINTR);
    int saved = errno;
    close(fd);
    if (w < 0)
        return fbw_err_set_errno(err, saved, "key log %s: cannot write", path);
    if ((size_t)w != n)
        return fbw_err_set(err, FBW_E_IO, "key log %s: short write (%zd of %zu bytes)", path, w, n);
    return FBW_OK;
}
