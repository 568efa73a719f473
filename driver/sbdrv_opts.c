/* SPDX-License-Identifier: MIT */
/* sbdrv_opts.c - the drivers' --P-* options (listed in sbdrv.c): the table sysbench shows and
 * parses, reading them into the backend configuration, the error classes (the library's,
 * status.h) and codes --P-ignore-errors names. */
#include "sbdrv_int.h"

#include "status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- options */

/* EXTRA: entries only one backend has (fbclient cannot bound the waits after connect). */
#define FB_ARGS(P, EXTRA)                                                                       \
    {                                                                                           \
        {P "-db", "connection string host[/port]:path or alias", "localhost:sbtest",            \
         SB_ARG_TYPE_STRING, NULL},                                                             \
        {P "-user", "user name (default: $ISC_USER, else SYSDBA)", NULL, SB_ARG_TYPE_STRING,    \
         NULL},                                                                                 \
        {P "-password", "password (default: $ISC_PASSWORD)", NULL, SB_ARG_TYPE_STRING, NULL},   \
        {P "-isolation",                                                                        \
         "read-committed, read-committed-no-rec-version, read-consistency, snapshot or "        \
         "serializable",                                                                        \
         "read-committed", SB_ARG_TYPE_STRING, NULL},                                           \
        {P "-lock-timeout", "lock wait in seconds (-1 forever, 0 no wait)", "1",                \
         SB_ARG_TYPE_INT, NULL},                                                                \
        {P "-ignore-errors",                                                                    \
         "error classes (update-conflict, deadlock, lock-conflict, lock-timeout, unique, "      \
         "network), gds codes or SQLSTATEs to retry, or \"all\"",                               \
         "update-conflict,deadlock,lock-conflict,lock-timeout,unique", SB_ARG_TYPE_STRING,     \
         NULL},                                                                                 \
        {P "-autocommit",                                                                       \
         "statements outside BEGIN: per-statement (own transaction each), shared (one "         \
         "autocommit transaction, restarted periodically) or pipelined (fbwire: own "          \
         "transaction in one round trip; reads in a read-only transaction) [fbwire: shared, "    \
         "fbclient: per-statement]",                                                            \
         NULL, SB_ARG_TYPE_STRING, NULL},                                                       \
        {P "-pipeline",                                                                         \
         "statements inside BEGIN ... COMMIT: off or transaction (fbwire: queued without "      \
         "waiting, written together at COMMIT, a result read or a cap)",                        \
         "off", SB_ARG_TYPE_STRING, NULL},                                                      \
        {P "-shared-restart-statements", "shared autocommit: restart after N statements",       \
         "1000", SB_ARG_TYPE_INT, NULL},                                                        \
        {P "-shared-restart-ms", "shared autocommit: restart after N milliseconds", "1000",     \
         SB_ARG_TYPE_INT, NULL},                                                                \
        {P "-report", "also write the wire statistics report to FILE as JSON",                  \
         NULL, SB_ARG_TYPE_STRING, NULL},                                                       \
        {P "-accounting",                                                                       \
         "client CPU of the report: sampled (clock read around a random 1 in 16 calls), "       \
         "every-call, off (no wire statistics report), or cost-sampled / cost-every-call "      \
         "(measure what the report costs, print that instead)",                                 \
         "sampled", SB_ARG_TYPE_STRING, NULL},                                                  \
        {P "-wire-crypt", "wire encryption: disabled, enabled or required", "enabled",          \
         SB_ARG_TYPE_STRING, NULL},                                                             \
        {P "-compress", "wire compression", "off", SB_ARG_TYPE_BOOL, NULL},                     \
        {P "-auth", "client authentication plugin list (e.g. Srp256,Srp)", NULL,                \
         SB_ARG_TYPE_STRING, NULL},                                                             \
        {P "-create-db", "create the database when it does not exist (never an existing one)", \
         "off", SB_ARG_TYPE_BOOL, NULL},                                                        \
        {P "-page-size", "page size of a database that create-db creates (0: server default)", \
         "0", SB_ARG_TYPE_INT, NULL},                                                           \
        {P "-connect-timeout", "seconds for TCP connect, login and attach", "30",               \
         SB_ARG_TYPE_INT, NULL},                                                                \
        EXTRA{NULL, NULL, NULL, SB_ARG_TYPE_NULL, NULL},                                        \
    }

#define FBWIRE_TIMEOUT_ARG                                                                      \
    {"fbwire-timeout", "seconds any wait for the server may last without a reply before the "    \
     "connection is closed with an error naming the request", "60", SB_ARG_TYPE_INT, NULL},      \
    {"fbwire-statement-timeout", "milliseconds a statement may run before the server cancels it "  \
     "(sent with every execute; Firebird 4+, refused at connect by older servers; 0: none)", "0",  \
     SB_ARG_TYPE_INT, NULL},                                                                     \
    {"fbwire-row-format", "rows and parameters: compact (CHAR of multi-byte sets travels as "    \
     "VARCHAR, values unchanged) or described (as the server describes them, as fbclient)",     \
     "compact", SB_ARG_TYPE_STRING, NULL},

sb_arg sbdrv_args_fbwire[] = FB_ARGS("fbwire", FBWIRE_TIMEOUT_ARG);
#define FBCLIENT_LIBRARY_ARG                                                                    \
    {"fbclient-library", "the libfbclient to load: a path, or a name the dynamic linker looks up "   \
     "(its version is in the report)", "libfbclient.so.2", SB_ARG_TYPE_STRING, NULL},

sb_arg sbdrv_args_fbclient[] = FB_ARGS("fbclient", FBCLIENT_LIBRARY_ARG);

const char *sbdrv_opt_string(const sbdrv_driver *d, const char *suffix)
{
    char name[64];
    snprintf(name, sizeof name, "%s-%s", d->prefix, suffix);
    const char *v = sbdrv_host.get_string(name);
    return v && v[0] ? v : NULL;
}

static int opt_int(const sbdrv_driver *d, const char *suffix)
{
    char name[64];
    snprintf(name, sizeof name, "%s-%s", d->prefix, suffix);
    return sbdrv_host.get_int(name);
}

static int opt_flag(const sbdrv_driver *d, const char *suffix)
{
    char name[64];
    snprintf(name, sizeof name, "%s-%s", d->prefix, suffix);
    return sbdrv_host.get_flag(name);
}

static int parse_isolation(const char *s, sbdrv_be_isolation *out)
{
    static const struct { const char *name; sbdrv_be_isolation iso; } map[] = {
        {"read-committed", SBDRV_BE_ISO_READ_COMMITTED},
        {"read-committed-no-rec-version", SBDRV_BE_ISO_READ_COMMITTED_NOREC},
        {"read-consistency", SBDRV_BE_ISO_READ_CONSISTENCY},
        {"snapshot", SBDRV_BE_ISO_SNAPSHOT},
        {"serializable", SBDRV_BE_ISO_SERIALIZABLE},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcasecmp(s, map[i].name) == 0) {
            *out = map[i].iso;
            return 1;
        }
    }
    return 0;
}

static int add_rule(sbdrv_driver *d, uint32_t gds, const char *state)
{
    if (d->nignore >= MAX_IGNORE)
        return 0;
    ignore_rule *r = &d->ignore[d->nignore++];
    r->gds = gds;
    snprintf(r->sqlstate, sizeof r->sqlstate, "%s", state ? state : "");
    return 1;
}

/* A class name of the library's error model (fbw_errclass_from_name: "update-conflict",
 * "deadlock", ...). The ones that say "the connection is gone" are `network` here (a reconnect,
 * not a restart), and none/other are no error class to name. */
static int add_class(sbdrv_driver *d, const char *w)
{
    fbw_errclass c;
    if (!fbw_errclass_from_name(w, &c) || c == FBW_EC_NONE || c == FBW_EC_OTHER ||
        c == FBW_EC_CONNECTION_LOST || c == FBW_EC_TIMEOUT)
        return 0;
    d->ignore_classes |= (uint32_t)1u << (unsigned)c;
    return 1;
}

static int parse_one_ignore(sbdrv_driver *d, const char *w)
{
    if (strcasecmp(w, "all") == 0) {
        d->classes |= CLASS_ALL | CLASS_NETWORK;
        return 1;
    }
    if (strcasecmp(w, "network") == 0) {
        d->classes |= CLASS_NETWORK;
        return 1;
    }
    if (add_class(d, w))
        return 1;
    size_t n = strlen(w);
    if (n == 5 && strspn(w, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") == 5)
        return add_rule(d, 0, w);
    if (n > 0 && n <= 10 && strspn(w, "0123456789") == n) {
        unsigned long long v = strtoull(w, NULL, 10);
        return v > 0 && v <= UINT32_MAX && add_rule(d, (uint32_t)v, NULL);
    }
    return 0;
}

static int parse_ignore(sbdrv_driver *d, const char *list)
{
    char buf[512];
    if (list == NULL)
        return 1;
    if (strlen(list) >= sizeof buf)
        return 0;
    strcpy(buf, list);
    for (char *save = NULL, *w = strtok_r(buf, ", ", &save); w; w = strtok_r(NULL, ", ", &save))
        if (!parse_one_ignore(d, w)) {
            sbdrv_host.log_text(SBDRV_SB_LOG_FATAL, "%s: invalid --%s-ignore-errors entry '%s'",
                          d->prefix, d->prefix, w);
            return 0;
        }
    return 1;
}

int sbdrv_read_options(sbdrv_driver *d)
{
    sbdrv_be_conf *f = &d->conf;
    memset(f, 0, sizeof *f);
    d->classes = 0;
    d->ignore_classes = 0;
    d->nignore = 0;
    f->db = sbdrv_opt_string(d, "db");
    f->user = sbdrv_opt_string(d, "user");
    if (f->user == NULL)
        f->user = getenv("ISC_USER");
    if (f->user == NULL || f->user[0] == '\0')
        f->user = "SYSDBA";
    f->password = sbdrv_opt_string(d, "password");
    if (f->password == NULL)
        f->password = getenv("ISC_PASSWORD");
    if (f->password == NULL)
        f->password = "";
    f->lock_timeout = opt_int(d, "lock-timeout");
    f->restart_statements = (unsigned)opt_int(d, "shared-restart-statements");
    f->restart_ms = (unsigned)opt_int(d, "shared-restart-ms");
    f->wire_crypt = sbdrv_opt_string(d, "wire-crypt");
    f->compress = opt_flag(d, "compress");
    f->auth = sbdrv_opt_string(d, "auth");
    f->create_db = opt_flag(d, "create-db");
    f->page_size = opt_int(d, "page-size");
    f->connect_timeout = opt_int(d, "connect-timeout");
    f->timeout = d->be == &sbdrv_backend_fbwire ? opt_int(d, "timeout") : 0;
    int stmt_timeout = d->be == &sbdrv_backend_fbwire ? opt_int(d, "statement-timeout") : 0;
    f->client_library = d->be == &sbdrv_backend_fbclient ? sbdrv_opt_string(d, "library") : NULL;
    const char *rowf = d->be == &sbdrv_backend_fbwire ? sbdrv_opt_string(d, "row-format") : NULL;
    f->row_format = d->be == &sbdrv_backend_fbwire ? FBW_ROW_FORMAT_COMPACT : FBW_ROW_FORMAT_DESCRIBED;
    const char *iso = sbdrv_opt_string(d, "isolation");
    const char *ac = sbdrv_opt_string(d, "autocommit");
    const char *pipe = sbdrv_opt_string(d, "pipeline");
    const char *why = NULL;
    if (f->db == NULL)
        why = "--%s-db is required";
    else if (iso && !parse_isolation(iso, &f->isolation))
        why = "invalid --%s-isolation";
    else if (ac && strcasecmp(ac, "shared") == 0)
        f->autocommit = SBDRV_AC_SHARED;
    else if (ac && strcasecmp(ac, "pipelined") == 0 && d->be == &sbdrv_backend_fbwire)
        f->autocommit = SBDRV_AC_PIPELINED;
    else if (!ac || !*ac)
        f->autocommit = d->be == &sbdrv_backend_fbwire ? SBDRV_AC_SHARED : SBDRV_AC_PER_STATEMENT;
    else if (strcasecmp(ac, "per-statement") != 0)
        why = d->be == &sbdrv_backend_fbwire
                  ? "invalid --%s-autocommit (per-statement, shared or pipelined)"
                  : "invalid --%s-autocommit (per-statement or shared; only fbwire can pipeline)";
    if (why == NULL && f->wire_crypt && strcasecmp(f->wire_crypt, "disabled") != 0 &&
        strcasecmp(f->wire_crypt, "enabled") != 0 && strcasecmp(f->wire_crypt, "required") != 0)
        why = "invalid --%s-wire-crypt (disabled, enabled or required)";
    if (why == NULL && f->page_size != 0 && f->page_size != 4096 && f->page_size != 8192 &&
        f->page_size != 16384 && f->page_size != 32768)
        why = "invalid --%s-page-size (4096, 8192, 16384 or 32768; 0 for the server's default)";
    if (why == NULL && pipe && strcasecmp(pipe, "transaction") == 0 && d->be == &sbdrv_backend_fbwire)
        f->pipeline = SBDRV_PIPE_TRANSACTION;
    else if (why == NULL && pipe && strcasecmp(pipe, "off") != 0)
        why = d->be == &sbdrv_backend_fbwire
                  ? "invalid --%s-pipeline (off or transaction)"
                  : "invalid --%s-pipeline (only off: only fbwire pipelines)";
    if (why == NULL && (f->connect_timeout < 1 || f->connect_timeout > 86400))
        why = "invalid --%s-connect-timeout (1..86400 seconds)";
    if (why == NULL && d->be == &sbdrv_backend_fbwire && (f->timeout < 1 || f->timeout > 86400))
        why = "invalid --%s-timeout (1..86400 seconds)";
    if (why == NULL && (stmt_timeout < 0 || stmt_timeout > 86400000))
        why = "invalid --%s-statement-timeout (0..86400000 milliseconds)";
    f->statement_timeout_ms = stmt_timeout > 0 ? (uint32_t)stmt_timeout : 0;
    if (why == NULL && rowf && fbw_row_format_parse(rowf, &f->row_format) != FBW_OK)
        why = "invalid --%s-row-format (compact or described)";
    if (why == NULL && f->lock_timeout < -1)
        why = "invalid --%s-lock-timeout (-1, 0 or seconds)";
    if (why != NULL) {
        sbdrv_host.log_text(SBDRV_SB_LOG_FATAL, why, d->prefix);
        return 0;
    }
    return parse_ignore(d, sbdrv_opt_string(d, "ignore-errors"));
}
