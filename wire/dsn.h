/* SPDX-License-Identifier: MIT */
/* dsn.h - Firebird connection strings ("host/port:path", "inet://host:port/path", ...) split
 * into host, port (or service name) and database path or alias.
 *
 * Pure string parsing: no resolving, no file system, no environment. Hostless strings mean the
 * TCP loopback ("localhost") because fbwire only speaks the wire protocol (no embedded engine,
 * no XNET). Every component is checked against its field size: too long is an error. */
#ifndef FBW_DSN_H
#define FBW_DSN_H

#include "err.h"

typedef struct fbw_dsn {
    char host[256];  /* name or address, IPv6 without brackets; "localhost" when none given */
    char port[64];   /* port number or service name; "3050" when none given */
    char path[1024]; /* database path or alias, passed to the server as is */
    int family;      /* 4 for inet4://, 6 for inet6://, else 0 (any address family) */
} fbw_dsn;

/* Accepted forms:
 *   host:path  host/port:path  host/service:path  [v6]:path  [v6]/port:path
 *   inet://host/path  inet://host:port/path  inet://[v6]:port/path  (also inet4://, inet6://)
 *   inet://path-or-alias  inet:///abs/path  (loopback)
 *   alias  /abs/path  C:\dir\file.fdb  C:/dir/file.fdb  (no host: loopback)
 * The path may contain ':' after the host separator ("srv:C:\db\x.fdb").
 * Returns FBW_OK with *out filled, or FBW_E_USAGE (empty, malformed or overlong component; the
 * message lists the accepted forms) with *out cleared. */
FBW_API int fbw_dsn_parse(const char *text, fbw_dsn *out, fbw_err *err);

#endif
