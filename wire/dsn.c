/* SPDX-License-Identifier: MIT */
/* dsn.c - connection string parsing (see dsn.h).
 *
 * Follows fbclient: src/common/isc_file.cpp ISC_analyze_tcp (legacy "host[/port]:path", '[' starts
 * a bracketed IPv6 host) and ISC_analyze_protocol ("inet[4|6]://" prefix, case-insensitive; the
 * node ends at the first '/', its ':' becomes the port separator), src/remote/inet.cpp
 * INET_connect (node split at '/', brackets removed) and doc/README.connection_strings.
 * Deliberate differences, all where fbclient would go on with a nonsensical node name:
 *  - "X:\..." and "X:/..." (one letter, colon, slash) are local Windows paths on every platform;
 *    fbclient checks for a drive letter only on Windows and elsewhere would try host "X".
 *  - A string starting with '/' or '\' is a local path even if it contains ':' later.
 *  - Empty host, empty port ("host/:db"), text after "[v6]" other than the port, a port that is
 *    not a number 1..65535 or a service-name-like word, and a missing path are errors here;
 *    fbclient falls back to a local path, the default port or fails later at connect time.
 *  - Hostless strings always mean TCP loopback; fbclient may pick embedded or XNET instead.
 *  - No "xnet://" and no "\\server\share" (Windows named pipes / UNC) forms. */
#include "dsn.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FORMS                                                                                      \
    "use host[/port]:path, [ipv6][/port]:path, inet[4|6]://host[:port]/path, inet://path or a "    \
    "local path or alias"

static int bad(fbw_err *err, const char *why)
{
    return fbw_err_set(err, FBW_E_USAGE, "bad connection string: %s; " FORMS, why);
}

/* Copy n bytes into a field of `size` bytes; too long is an error, never a silent cut. */
static int put(char *dst, size_t size, const char *p, size_t n, const char *what, fbw_err *err)
{
    if (n >= size)
        return fbw_err_set(err, FBW_E_USAGE,
                           "bad connection string: %s too long (%zu bytes, at most %zu)", what, n,
                           size - 1);
    memcpy(dst, p, n);
    dst[n] = '\0';
    return FBW_OK;
}

/* "C:\..." or "C:/...": a Windows drive path, not host "C". */
static int is_drive_path(const char *s)
{
    return isalpha((unsigned char)s[0]) && s[1] == ':' && (s[2] == '\\' || s[2] == '/');
}

static int host_char_ok(char c)
{
    return c > ' ' && c != 0x7f && !strchr("/\\[]@:", c);
}

/* Host text (already without brackets). `bracketed` allows ':' for IPv6 literals. */
static int set_host(fbw_dsn *out, const char *p, size_t n, int bracketed, fbw_err *err)
{
    if (n == 0)
        return bad(err, bracketed ? "empty address inside [ ]" : "empty host name");
    for (size_t i = 0; i < n; i++)
        if (!host_char_ok(p[i]) && !(bracketed && p[i] == ':'))
            return bad(err, bracketed || p[i] != ':'
                                ? "invalid character in host name"
                                : "invalid character in host name (put IPv6 addresses in [ ])");
    return put(out->host, sizeof out->host, p, n, "host name", err);
}

/* Port number 1..65535 or a service name made of letters, digits, '-', '_' and '.'. */
static int set_port(fbw_dsn *out, const char *p, size_t n, fbw_err *err)
{
    size_t digits = 0;
    if (n == 0)
        return bad(err, "empty port or service name");
    for (size_t i = 0; i < n; i++) {
        if (isdigit((unsigned char)p[i]))
            digits++;
        else if (!isalnum((unsigned char)p[i]) && !strchr("-_.", p[i]))
            return bad(err, "invalid character in port or service name");
    }
    int rc = put(out->port, sizeof out->port, p, n, "port or service name", err);
    if (rc == FBW_OK && digits == n) {
        long v = n <= 5 ? strtol(out->port, NULL, 10) : 0;
        if (v < 1 || v > 65535)
            rc = bad(err, "port number out of range 1..65535");
    }
    return rc;
}

static int set_path(fbw_dsn *out, const char *p, fbw_err *err)
{
    if (!*p)
        return bad(err, "missing database path or alias");
    return put(out->path, sizeof out->path, p, strlen(p), "database path", err);
}

/* "[v6]" followed by nothing or by `sep` and a port (sep is '/' in legacy strings, ':' in URLs). */
static int set_bracketed(fbw_dsn *out, const char *p, size_t n, char sep, fbw_err *err)
{
    const char *close = memchr(p, ']', n);
    if (!close)
        return bad(err, "missing ']' after IPv6 address");
    int rc = set_host(out, p + 1, (size_t)(close - p - 1), 1, err);
    const char *rest = close + 1, *end = p + n;
    if (rc == FBW_OK && rest < end) {
        if (*rest != sep)
            rc = bad(err, "unexpected text after ']'");
        else
            rc = set_port(out, rest + 1, (size_t)(end - rest - 1), err);
    }
    return rc;
}

/* Node "host", "host<sep>port" or "[v6]", "[v6]<sep>port". */
static int set_node(fbw_dsn *out, const char *p, size_t n, char sep, fbw_err *err)
{
    if (n > 0 && p[0] == '[')
        return set_bracketed(out, p, n, sep, err);
    const char *s = memchr(p, sep, n);
    if (!s)
        return set_host(out, p, n, 0, err);
    int rc = set_host(out, p, (size_t)(s - p), 0, err);
    if (rc == FBW_OK)
        rc = set_port(out, s + 1, (size_t)(p + n - s - 1), err);
    return rc;
}

/* After "inet://": "node/path", or a loopback path/alias when no node precedes a '/'. */
static int parse_url(const char *rest, fbw_dsn *out, fbw_err *err)
{
    if (!*rest)
        return bad(err, "nothing after \"://\"");
    const char *slash = strchr(rest, '/');
    if (is_drive_path(rest) || !slash || slash == rest)
        return set_path(out, rest, err);
    int rc = set_node(out, rest, (size_t)(slash - rest), ':', err);
    if (rc == FBW_OK)
        rc = set_path(out, slash + 1, err);
    return rc;
}

static int parse_legacy(const char *text, fbw_dsn *out, fbw_err *err)
{
    const char *colon;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close)
            return bad(err, "missing ']' after IPv6 address");
        colon = strchr(close + 1, ':');
        if (!colon)
            return bad(err, "missing ':path' after [address]");
    } else {
        colon = strchr(text, ':');
        if (!colon || is_drive_path(text) || text[0] == '/' || text[0] == '\\')
            return set_path(out, text, err);
        if (colon == text)
            return bad(err, "missing host before ':'");
    }
    int rc = set_node(out, text, (size_t)(colon - text), '/', err);
    if (rc == FBW_OK)
        rc = set_path(out, colon + 1, err);
    return rc;
}

/* Length of an "inet://", "inet4://" or "inet6://" prefix (any case), 0 if none. */
static size_t url_prefix(const char *text, int *family)
{
    static const struct {
        const char *prefix;
        int family;
    } protos[] = {{"inet://", 0}, {"inet4://", 4}, {"inet6://", 6}};
    for (size_t i = 0; i < sizeof protos / sizeof protos[0]; i++) {
        size_t n = strlen(protos[i].prefix);
        if (strncasecmp(text, protos[i].prefix, n) == 0) {
            *family = protos[i].family;
            return n;
        }
    }
    return 0;
}

int fbw_dsn_parse(const char *text, fbw_dsn *out, fbw_err *err)
{
    int rc;
    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return bad(err, "empty");
    int family = 0;
    size_t skip = url_prefix(text, &family);
    rc = skip ? parse_url(text + skip, out, err) : parse_legacy(text, out, err);
    if (rc != FBW_OK)
        goto fail;
    out->family = family;
    if (!out->host[0])
        memcpy(out->host, "localhost", sizeof "localhost");
    if (!out->port[0])
        memcpy(out->port, "3050", sizeof "3050");
    return FBW_OK;
fail:
    memset(out, 0, sizeof *out);
    return rc;
}
