/* SPDX-License-Identifier: MIT */
/* servers.h - the real Firebird servers of scripts/fb-servers.sh, as integration tests see them.
 *
 * Loads host, port, database and credentials from the environment (when FBW_FB3_PORT is set), else
 * from the env file named by $FBW_SERVERS_ENV, else $FBWIRE_STATE/servers.env, else
 * /var/tmp/fbwire-state/servers.env (FBWIRE_STATE_DEFAULT, the default of scripts/fb-servers.sh).
 * Builds DSNs and client options with short timeouts, and makes loopback sockets for the "nobody
 * there" cases. Does not start servers: a test that needs them and
 * finds none fails with "servers not configured: run scripts/fb-servers.sh start". */
#ifndef FBW_TEST_SERVERS_H
#define FBW_TEST_SERVERS_H

#include "fbwire.h"

#include <stddef.h>

typedef enum fbw_server_id {
    FBW_SRV_FB3,  /* Firebird 3, Srp256 + Srp, WireCrypt = Enabled */
    FBW_SRV_FB4,  /* Firebird 4 (fb5, fb6... under on-server.sh), Srp256 + Srp, WireCrypt Enabled */
    FBW_SRV_FB3L, /* Firebird 3 with Legacy_Auth too, user LEGACYUSER */
    FBW_SRV_FB3R, /* Firebird 3, WireCrypt = Required */
    FBW_SRV_COUNT
} fbw_server_id;

typedef struct fbw_server {
    char host[256];
    int port;
    char db[1024];
    char version[64]; /* "3.0.11" as the script found it; "" when not given */
} fbw_server;

typedef struct fbw_servers {
    fbw_server srv[FBW_SRV_COUNT];
    char user[64], password[128];                 /* SYSDBA */
    char test_user[64], test_password[128];       /* ordinary user */
    char quoted_user[64], quoted_password[128];   /* created as "john.doe" */
    char legacy_user[64], legacy_password[128];   /* Legacy_Auth user on fb3l */
    char origin[1100];                            /* "environment" or the file that was read */
} fbw_servers;

#define FBW_SERVERS_MISSING "servers not configured: run scripts/fb-servers.sh start"

/* Short timeouts so a broken server fails a test quickly instead of hanging it. */
#define FBW_TEST_CONNECT_TIMEOUT_MS 5000
#define FBW_TEST_TIMEOUT_MS 10000

/* Fill *out. FBW_E_USAGE when no source is found or a setting is missing or malformed; err->msg
 * starts with FBW_SERVERS_MISSING and names the source and the key. */
int fbw_servers_load(fbw_servers *out, fbw_err *err);
/* fbw_servers_load or fail the calling Criterion test with its message (never skips). */
void fbw_servers_require(fbw_servers *out);
/* Short lower-case name ("fb3", "fb4", "fb3l", "fb3r") for messages; for FBW_SRV_FB4, $FBW_TARGET
 * when set (tests/support/on-server.sh runs a test with server fb5, fb6, ... in fb4's place). */
const char *fbw_server_name(fbw_server_id id);
/* What the server in slot id is, for assertions that depend on the version: from the version
 * fb-servers.sh read from it (FBW_<NAME>_VERSION, "5.0.4"), else from the slot (fb4: 4.0, the
 * others 3.0). Under on-server.sh the fb4 slot holds fb5, fb6, ... */
void fbw_servers_version(const fbw_servers *s, fbw_server_id id, int *major, int *minor, int *patch);
/* "Firebird 5.0": what the server_version string of that server contains; returns buf. */
char *fbw_servers_version_tag(const fbw_servers *s, fbw_server_id id, char *buf, size_t size);
/* The highest wire protocol that server speaks: 15 (3.0), 16 (4.0.0), 17 (4.0.1 on), 18 (5.0.0 to 5.0.2, fetch
 * scroll), 19 (5.0.3 on, inline blobs), 20 (6.0). */
int fbw_servers_protocol_max(const fbw_servers *s, fbw_server_id id);
/* "host/port:path" for server id into buf; returns buf. */
char *fbw_servers_dsn(const fbw_servers *s, fbw_server_id id, char *buf, size_t size);
/* Client defaults with short timeouts, logging in as SYSDBA (strings point into s, which must
 * outlive o). */
void fbw_servers_client_opts(const fbw_servers *s, fbw_client_opts *o);
/* Drop a database a test made, ignoring failure (FB4's files are inside its chroot: unlink
 * cannot reach them, so the server drops it). */
void fbw_servers_drop_db(const fbw_servers *s, const char *dsn);

/* A stock server (packaged firebird.conf, WireCrypt = Required): name "fb3s" or "fb4s", read from
 * FBW_<NAME>_HOST/_PORT/_DB in the environment, else from the same env file fbw_servers_load reads.
 * The timeout tests stall these (tests/support/stall.h), never the shared fb3/fb4. */
int fbw_servers_stock(const char *name, fbw_server *out, fbw_err *err);

/* A loopback TCP listener that completes handshakes (kernel backlog) and never answers.
 * Returns the listening fd and the port, or fails the test. */
int fbw_servers_silent_listener(int *port);
/* A loopback port with nothing listening on it (bound, then closed) or fails the test. */
int fbw_servers_closed_port(void);
/* Monotonic clock in seconds, for timing assertions. */
double fbw_servers_now(void);

#endif
