/* SPDX-License-Identifier: MIT */
/* servers.c - settings of the real test servers (see servers.h) and loopback helpers. */
#include "servers.h"

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef FBWIRE_SOURCE_DIR
#define FBWIRE_SOURCE_DIR "."
#endif

#define LINE_MAX_LEN 1536

typedef struct setting {
    const char *key;
    char *text;    /* string destination, or NULL for a port */
    size_t size;
    int *port;
    int required;
} setting;

enum { NSETTINGS = FBW_SRV_COUNT * 4 + 8 };

/* The keys fb-servers.sh writes, bound to their fields in s. */
static void bind_settings(fbw_servers *s, setting *t)
{
    static const char *const keys[FBW_SRV_COUNT][4] = {
        {"FBW_FB3_HOST", "FBW_FB3_PORT", "FBW_FB3_DB", "FBW_FB3_VERSION"},
        {"FBW_FB4_HOST", "FBW_FB4_PORT", "FBW_FB4_DB", "FBW_FB4_VERSION"},
        {"FBW_FB3L_HOST", "FBW_FB3L_PORT", "FBW_FB3L_DB", "FBW_FB3L_VERSION"},
        {"FBW_FB3R_HOST", "FBW_FB3R_PORT", "FBW_FB3R_DB", "FBW_FB3R_VERSION"}};
    int n = 0;
    for (int i = 0; i < FBW_SRV_COUNT; i++) {
        fbw_server *v = &s->srv[i];
        t[n++] = (setting){keys[i][0], v->host, sizeof v->host, NULL, 1};
        t[n++] = (setting){keys[i][1], NULL, 0, &v->port, 1};
        t[n++] = (setting){keys[i][2], v->db, sizeof v->db, NULL, 1};
        t[n++] = (setting){keys[i][3], v->version, sizeof v->version, NULL, 0};
    }
    t[n++] = (setting){"FBW_USER", s->user, sizeof s->user, NULL, 1};
    t[n++] = (setting){"FBW_PASSWORD", s->password, sizeof s->password, NULL, 1};
    t[n++] = (setting){"FBW_TEST_USER", s->test_user, sizeof s->test_user, NULL, 1};
    t[n++] = (setting){"FBW_TEST_PASSWORD", s->test_password, sizeof s->test_password, NULL, 1};
    t[n++] = (setting){"FBW_QUOTED_USER", s->quoted_user, sizeof s->quoted_user, NULL, 1};
    t[n++] = (setting){"FBW_QUOTED_PASSWORD", s->quoted_password, sizeof s->quoted_password, NULL, 1};
    t[n++] = (setting){"FBW_LEGACY_USER", s->legacy_user, sizeof s->legacy_user, NULL, 1};
    t[n++] = (setting){"FBW_LEGACY_PASSWORD", s->legacy_password, sizeof s->legacy_password, NULL, 1};
}

/* Store one value; *found marks it. Unknown keys are ignored (the file has more than tests need). */
static int apply(setting *t, int *found, const char *key, const char *val, fbw_err *err)
{
    for (int i = 0; i < NSETTINGS; i++) {
        if (strcmp(t[i].key, key) != 0)
            continue;
        if (t[i].port) {
            char *end;
            long p = strtol(val, &end, 10);
            if (*val == 0 || *end || p < 1 || p > 65535)
                return fbw_err_set(err, FBW_E_USAGE, "%s: %s is not a port number: \"%s\"",
                                   FBW_SERVERS_MISSING, key, val);
            *t[i].port = (int)p;
        } else {
            if (strlen(val) >= t[i].size)
                return fbw_err_set(err, FBW_E_USAGE, "%s: %s is longer than %zu bytes",
                                   FBW_SERVERS_MISSING, key, t[i].size - 1);
            memcpy(t[i].text, val, strlen(val) + 1);
        }
        found[i] = 1;
        return FBW_OK;
    }
    return FBW_OK;
}

static int check_complete(const fbw_servers *s, const setting *t, const int *found, fbw_err *err)
{
    for (int i = 0; i < NSETTINGS; i++)
        if (t[i].required && !found[i])
            return fbw_err_set(err, FBW_E_USAGE, "%s (%s has no %s)", FBW_SERVERS_MISSING, s->origin,
                               t[i].key);
    return FBW_OK;
}

static int load_environment(setting *t, int *found, fbw_err *err)
{
    int rc = FBW_OK;
    for (int i = 0; i < NSETTINGS && rc == FBW_OK; i++) {
        const char *v = getenv(t[i].key);
        if (v)
            rc = apply(t, found, t[i].key, v, err);
    }
    return rc;
}

/* Strip the newline, surrounding blanks and one pair of matching quotes. */
static char *trim_value(char *v)
{
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == '\n' || v[n - 1] == '\r' || v[n - 1] == ' ' || v[n - 1] == '\t'))
        v[--n] = 0;
    while (*v == ' ' || *v == '\t')
        v++, n--;
    if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
        v[n - 1] = 0;
        v++;
    }
    return v;
}

/* KEY=VALUE lines as fb-servers.sh writes them; '#' lines and blank lines are skipped. */
static int load_file(const char *path, setting *t, int *found, fbw_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fbw_err_set(err, FBW_E_USAGE, "%s (cannot read %s: %s)", FBW_SERVERS_MISSING, path,
                           strerror(errno));
    char *line = malloc(LINE_MAX_LEN);
    int rc = line ? FBW_OK : fbw_err_set(err, FBW_E_NOMEM, "out of memory");
    while (rc == FBW_OK && fgets(line, LINE_MAX_LEN, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "export ", 7) == 0)
            p += 7;
        char *eq = strchr(p, '=');
        if (*p == '#' || !eq)
            continue;
        *eq = 0;
        rc = apply(t, found, p, trim_value(eq + 1), err);
    }
    free(line);
    fclose(f);
    return rc;
}

int fbw_servers_load(fbw_servers *out, fbw_err *err)
{
    setting t[NSETTINGS];
    int found[NSETTINGS] = {0};
    memset(out, 0, sizeof *out);
    bind_settings(out, t);
    int rc;
    const char *state = getenv("FBWIRE_STATE");
    const char *file = getenv("FBW_SERVERS_ENV");
    if (getenv("FBW_FB3_PORT")) {
        snprintf(out->origin, sizeof out->origin, "the environment");
        rc = load_environment(t, found, err);
    } else {
        if (file && *file)
            snprintf(out->origin, sizeof out->origin, "%s", file);
        else if (state && *state)
            snprintf(out->origin, sizeof out->origin, "%s/servers.env", state);
        else
            snprintf(out->origin, sizeof out->origin, "%s/servers.env", FBWIRE_STATE_DEFAULT);
        rc = load_file(out->origin, t, found, err);
    }
    if (rc == FBW_OK)
        rc = check_complete(out, t, found, err);
    return rc;
}

/* One KEY from the environment, else from the env file (trimmed as load_file does). */
static int lookup(const char *key, char *out, size_t size)
{
    const char *v = getenv(key);
    if (v) {
        snprintf(out, size, "%s", v);
        return 1;
    }
    const char *state = getenv("FBWIRE_STATE"), *file = getenv("FBW_SERVERS_ENV");
    char path[1100];
    if (file && *file)
        snprintf(path, sizeof path, "%s", file);
    else if (state && *state)
        snprintf(path, sizeof path, "%s/servers.env", state);
    else
        snprintf(path, sizeof path, "%s/servers.env", FBWIRE_STATE_DEFAULT);
    FILE *f = fopen(path, "r");
    char line[LINE_MAX_LEN];
    int found = 0;
    size_t kn = strlen(key);
    while (f && !found && fgets(line, sizeof line, f)) {
        char *p = line + (strncmp(line, "export ", 7) == 0 ? 7 : 0);
        if (strncmp(p, key, kn) == 0 && p[kn] == '=') {
            snprintf(out, size, "%s", trim_value(p + kn + 1));
            found = 1;
        }
    }
    if (f)
        fclose(f);
    return found;
}

int fbw_servers_stock(const char *name, fbw_server *out, fbw_err *err)
{
    char key[64], port[16];
    memset(out, 0, sizeof *out);
    char up[8];
    size_t i = 0;
    for (; name[i] && i < sizeof up - 1; i++)
        up[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    up[i] = 0;
    snprintf(key, sizeof key, "FBW_%s_HOST", up);
    int ok = lookup(key, out->host, sizeof out->host);
    snprintf(key, sizeof key, "FBW_%s_PORT", up);
    ok = ok && lookup(key, port, sizeof port);
    snprintf(key, sizeof key, "FBW_%s_DB", up);
    ok = ok && lookup(key, out->db, sizeof out->db);
    snprintf(key, sizeof key, "FBW_%s_VERSION", up);
    lookup(key, out->version, sizeof out->version);
    out->port = ok ? atoi(port) : 0;
    if (!ok || out->port <= 0)
        return fbw_err_set(err, FBW_E_USAGE, "%s (no usable %s)", FBW_SERVERS_MISSING, key);
    return FBW_OK;
}

void fbw_servers_require(fbw_servers *out)
{
    fbw_err err;
    fbw_err_clear(&err);
    if (fbw_servers_load(out, &err) != FBW_OK)
        cr_assert_fail("%s", err.msg);
}

const char *fbw_server_name(fbw_server_id id)
{
    static const char *const names[FBW_SRV_COUNT] = {"fb3", "fb4", "fb3l", "fb3r"};
    /* tests/support/on-server.sh puts a newer server in fb4's place and names it here */
    const char *target = getenv("FBW_TARGET");
    if (id == FBW_SRV_FB4 && target && *target)
        return target;
    return id >= 0 && id < FBW_SRV_COUNT ? names[id] : "?";
}

void fbw_servers_version(const fbw_servers *s, fbw_server_id id, int *major, int *minor, int *patch)
{
    int v[3] = {id == FBW_SRV_FB4 ? 4 : 3, 0, 0};
    if (sscanf(s->srv[id].version, "%d.%d.%d", &v[0], &v[1], &v[2]) < 1)
        v[0] = id == FBW_SRV_FB4 ? 4 : 3;
    *major = v[0], *minor = v[1], *patch = v[2];
}

char *fbw_servers_version_tag(const fbw_servers *s, fbw_server_id id, char *buf, size_t size)
{
    int major, minor, patch;
    fbw_servers_version(s, id, &major, &minor, &patch);
    snprintf(buf, size, "Firebird %d.%d", major, minor);
    return buf;
}

int fbw_servers_protocol_max(const fbw_servers *s, fbw_server_id id)
{
    int major, minor, patch;
    fbw_servers_version(s, id, &major, &minor, &patch);
    if (major <= 3)
        return 15;
    if (major == 4)
        return minor > 0 || patch >= 1 ? 17 : 16;
    if (major == 5)
        return minor > 0 || patch >= 3 ? 19 : 18;
    return 20;
}

char *fbw_servers_dsn(const fbw_servers *s, fbw_server_id id, char *buf, size_t size)
{
    const fbw_server *v = &s->srv[id];
    /* IPv6 literals need brackets so the ':' inside them is not taken for the path separator. */
    if (strchr(v->host, ':'))
        snprintf(buf, size, "[%s]/%d:%s", v->host, v->port, v->db);
    else
        snprintf(buf, size, "%s/%d:%s", v->host, v->port, v->db);
    return buf;
}

void fbw_servers_client_opts(const fbw_servers *s, fbw_client_opts *o)
{
    fbw_client_opts_init(o);
    o->conn.user = s->user;
    o->conn.password = s->password;
    o->connect_timeout_ms = FBW_TEST_CONNECT_TIMEOUT_MS;
    o->timeout_ms = FBW_TEST_TIMEOUT_MS;
}

/* Bind a loopback TCP socket to an ephemeral port; listen when asked. */
static int loopback_socket(int do_listen, int *port)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    cr_assert(fd >= 0, "socket: %s", strerror(errno));
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0, "bind: %s", strerror(errno));
    if (do_listen)
        cr_assert_eq(listen(fd, 8), 0, "listen: %s", strerror(errno));
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

int fbw_servers_silent_listener(int *port)
{
    return loopback_socket(1, port);
}

int fbw_servers_closed_port(void)
{
    int port;
    close(loopback_socket(0, &port));
    return port;
}

double fbw_servers_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void fbw_servers_drop_db(const fbw_servers *s, const char *dsn)
{
    fbw_client_opts o;
    fbw_servers_client_opts(s, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
    fbw_client *cl;
    fbw_err e;
    if (fbw_client_connect(dsn, &o, &cl, &e) != FBW_OK)
        return;
    if (fbw_conn_drop_database(fbw_client_conn(cl)) == FBW_OK)
        fbw_client_wait(cl);
    fbw_client_close(cl);
}
