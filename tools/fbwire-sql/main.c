/* SPDX-License-Identifier: MIT */
/* fbwire-sql - command-line SQL client over fbwire: runs SQL from arguments, a file or stdin
 * (split.c), prints rows as a table, TSV or CSV (format.c) and the round-trip accounting of every
 * statement (session.c); at a terminal it prompts and runs each statement as it is typed
 * (interactive.c). isql's EXIT, QUIT, SHOW, SET STATS and SET STATEMENT TIMEOUT, and SET SCROLL and FETCH for
 * scrollable cursors, are answered by commands.c. --info
 * connects, reports what was negotiated and what it cost on the wire, and detaches. The password
 * is never printed. Options and value forms: docs/fbwire-sql.md. */
#include "commands.h"
#include "fbwire.h"
#include "format.h"
#include "interactive.h"
#include "session.h"
#include "split.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fbwire-sql [options] DATABASE [SQL ...]\n"
            "       fbwire-sql --info [options] DATABASE\n"
            "  DATABASE              host[/port]:path, [ipv6]/port:path, inet://host:port/path or alias\n"
            "  SQL                   statements to run (each argument a script); without them the\n"
            "                        script comes from -i FILE or stdin. Statements end with \";\"\n"
            "                        (SET TERM changes that); -- ends the options. On a terminal:\n"
            "                        a SQL> prompt, each statement runs when its terminator is\n"
            "                        typed, Ctrl-C cancels it, EXIT; commits and leaves, QUIT;\n"
            "                        rolls back and leaves, Ctrl-D leaves like EXIT; history in\n"
            "                        $FBWIRE_SQL_HISTORY (default ~/.fbwire_sql_history)\n"
            "  isql commands         SHOW TABLES; SHOW TABLE name; SHOW DATABASE; SET STATS ON|OFF;\n"
            "                        SET STATEMENT TIMEOUT n [HOUR|MINUTE|SECOND|MILLISECOND];\n"
            "                        EXIT; QUIT;\n"
            "  scrollable cursors    SET SCROLL ON|OFF; with it on (Firebird 5+, protocol 18) a\n"
            "                        SELECT's cursor stays open until the next statement and\n"
            "                        FETCH NEXT|PRIOR|FIRST|LAST|ABSOLUTE n|RELATIVE n; prints\n"
            "                        the row it lands on, SHOW COUNT; its record count\n"
            "  --info                connect, attach, print key: value lines, detach\n"
            "  -i, --input FILE      read the script from FILE\n"
            "  --table | --tsv | --csv  output form (default: table on a terminal, else tsv)\n"
            "  --stats               round trips, packets, bytes and wait time per statement and in\n"
            "                        total, on stderr\n"
            "  --autocommit          each statement in its own transaction (default)\n"
            "  --no-autocommit       one transaction for the session, committed at the end;\n"
            "                        COMMIT, ROLLBACK and SET TRANSACTION typed as SQL are honoured\n"
            "  --isolation LEVEL     read-committed (default), read-consistency (FB4+), snapshot,\n"
            "                        serializable\n"
            "  --lock-timeout N      seconds to wait for a lock: -1 forever (default), 0 no wait\n"
            "  --bail                stop at the first failing statement\n"
            "  --user U              login (default $ISC_USER)\n"
            "  --password P          password (default $ISC_PASSWORD)\n"
            "  --auth LIST           auth plugins, default \"Srp256,Srp\" (Legacy_Auth only if listed)\n"
            "  --protocol-min N      lowest protocol offered (10..20, default 10)\n"
            "  --protocol-max N      highest protocol offered (10..20, default 20)\n"
            "  --no-lazy             do not offer lazy send (deferred replies)\n"
            "  --wire-crypt MODE     required | enabled | disabled (default enabled)\n"
            "  --wire-crypt-plugins LIST  default \"ChaCha64,ChaCha,Arc4\"\n"
            "  --compress            ask for zlib wire compression\n"
            "  --row-format F        compact (default: CHAR of multi-byte sets travels as VARCHAR,\n"
            "                        values unchanged) or described (as the server describes them)\n"
            "  --keylog FILE         append the wire crypt key of the connection to FILE (default\n"
            "                        $FBWIRE_KEYLOGFILE): lets fbwire-pcap --keylog decrypt a capture\n"
            "                        of it; a debugging aid, anyone who reads FILE can read the session\n"
            "  --create              create the database (with --page-size N)\n"
            "  --connect-timeout S   seconds for TCP connect and login (default 30)\n"
            "  --timeout S           seconds to wait for any later reply (default 60)\n"
            "  --statement-timeout MS  milliseconds each statement may run before the server\n"
            "                        cancels it (Firebird 4+; refused by older servers; default 0:\n"
            "                        none); SET STATEMENT TIMEOUT changes it\n"
            "  --version             print the version and exit\n"
            "Exit status: 0 all statements succeeded, 1 a statement or the connection failed, 2 usage.\n");
}

static int parse_int(const char *s, const char *what, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        fprintf(stderr, "fbwire-sql: %s must be a number from %d to %d, got \"%s\"\n", what, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static void print_error(const char *stage, const fbw_err *e)
{
    fprintf(stderr, "fbwire-sql: %s failed: %s\n", stage, e->msg[0] ? e->msg : fbw_rc_name(e->code));
    if (e->sqlstate[0])
        fprintf(stderr, "SQLSTATE = %s\n", e->sqlstate);
    if (e->ngds > 0)
        fprintf(stderr, "gds code = %u\n", e->gds[0]);
}

enum { O_USER = 256, O_PASSWORD, O_AUTH, O_PMIN, O_PMAX, O_NOLAZY, O_CRYPT, O_CRYPTLIST, O_COMPRESS, O_ROWFORMAT,
       O_CREATE, O_PAGESIZE, O_CTIMEOUT, O_TIMEOUT, O_INFO, O_HELP, O_VERSION, O_TABLE, O_TSV, O_CSV, O_STATS,
       O_ISOLATION, O_LOCKTIMEOUT, O_AUTOCOMMIT, O_NOAUTOCOMMIT, O_BAIL, O_KEYLOG, O_STMTTIMEOUT };

typedef struct args {
    fbw_client_opts client;
    sqltool_session_opts session;
    int info, bail, mode_set;
    const char *input; /* -i FILE */
    const char *dsn;
    char **sql;        /* SQL arguments */
    int nsql;
} args;

static int parse_isolation(const char *s, int *iso)
{
    static const struct { const char *name; int iso; } levels[] = {
        {"read-committed", FBW_ISO_READ_COMMITTED}, {"read-consistency", FBW_ISO_READ_CONSISTENCY},
        {"snapshot", FBW_ISO_SNAPSHOT}, {"serializable", FBW_ISO_SERIALIZABLE}};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        if (!strcmp(s, levels[i].name)) {
            *iso = levels[i].iso;
            return 0;
        }
    }
    fprintf(stderr, "fbwire-sql: --isolation takes read-committed, read-consistency, snapshot or "
                    "serializable, got \"%s\"\n", s);
    return -1;
}

/* Options into *a. Returns -1 to go on, else the exit code (0 after --help, 2 on bad usage). */
static int parse_args(int argc, char **argv, args *a)
{
    static const struct option longopts[] = {
        {"user", required_argument, 0, O_USER}, {"password", required_argument, 0, O_PASSWORD},
        {"auth", required_argument, 0, O_AUTH}, {"protocol-min", required_argument, 0, O_PMIN},
        {"protocol-max", required_argument, 0, O_PMAX}, {"no-lazy", no_argument, 0, O_NOLAZY},
        {"wire-crypt", required_argument, 0, O_CRYPT},
        {"wire-crypt-plugins", required_argument, 0, O_CRYPTLIST},
        {"compress", no_argument, 0, O_COMPRESS}, {"create", no_argument, 0, O_CREATE},
        {"row-format", required_argument, 0, O_ROWFORMAT},
        {"keylog", required_argument, 0, O_KEYLOG},
        {"page-size", required_argument, 0, O_PAGESIZE},
        {"connect-timeout", required_argument, 0, O_CTIMEOUT},
        {"timeout", required_argument, 0, O_TIMEOUT}, {"info", no_argument, 0, O_INFO},
        {"statement-timeout", required_argument, 0, O_STMTTIMEOUT},
        {"help", no_argument, 0, O_HELP}, {"version", no_argument, 0, O_VERSION}, {"input", required_argument, 0, 'i'},
        {"table", no_argument, 0, O_TABLE}, {"tsv", no_argument, 0, O_TSV}, {"csv", no_argument, 0, O_CSV},
        {"stats", no_argument, 0, O_STATS}, {"isolation", required_argument, 0, O_ISOLATION},
        {"lock-timeout", required_argument, 0, O_LOCKTIMEOUT},
        {"autocommit", no_argument, 0, O_AUTOCOMMIT}, {"no-autocommit", no_argument, 0, O_NOAUTOCOMMIT},
        {"bail", no_argument, 0, O_BAIL}, {0, 0, 0, 0}};
    fbw_client_opts *o = &a->client;
    int v;
    for (int ch; (ch = getopt_long(argc, argv, "i:", longopts, NULL)) != -1;) {
        switch (ch) {
        case O_USER: o->conn.user = optarg; break;
        case O_PASSWORD: o->conn.password = optarg; break;
        case O_AUTH: o->conn.auth_list = optarg; break;
        case O_PMIN: if (parse_int(optarg, "--protocol-min", 10, 20, &o->conn.protocol_min)) return 2; break;
        case O_PMAX: if (parse_int(optarg, "--protocol-max", 10, 20, &o->conn.protocol_max)) return 2; break;
        case O_NOLAZY: o->conn.lazy = 0; break;
        case O_CRYPT:
            if (!strcmp(optarg, "required")) o->conn.wire_crypt = FBW_WIRE_CRYPT_REQUIRED;
            else if (!strcmp(optarg, "enabled")) o->conn.wire_crypt = FBW_WIRE_CRYPT_ENABLED;
            else if (!strcmp(optarg, "disabled")) o->conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
            else {
                fprintf(stderr, "fbwire-sql: --wire-crypt takes required, enabled or disabled\n");
                return 2;
            }
            break;
        case O_CRYPTLIST: o->conn.crypt_list = optarg; break;
        case O_COMPRESS: o->conn.compress = 1; break;
        case O_ROWFORMAT:
            if (fbw_row_format_parse(optarg, &o->conn.row_format) != FBW_OK) {
                fprintf(stderr, "fbwire-sql: --row-format takes compact or described, got \"%s\"\n",
                        optarg);
                return 2;
            }
            break;
        case O_KEYLOG: a->client.keylog = optarg; break;
        case O_CREATE: o->conn.create = 1; break;
        case O_PAGESIZE: if (parse_int(optarg, "--page-size", 1024, 65536, &o->conn.page_size)) return 2; break;
        case O_CTIMEOUT: if (parse_int(optarg, "--connect-timeout", 1, 86400, &v)) return 2; o->connect_timeout_ms = v * 1000; break;
        case O_TIMEOUT: if (parse_int(optarg, "--timeout", 1, 86400, &v)) return 2; o->timeout_ms = v * 1000; break;
        case O_STMTTIMEOUT:
            if (parse_int(optarg, "--statement-timeout", 0, 86400000, &v)) return 2;
            o->conn.statement_timeout_ms = (uint32_t)v;
            break;
        case O_INFO: a->info = 1; break;
        case O_HELP: usage(stdout); return 0;
        case O_VERSION: printf("fbwire-sql %s\n", FBWIRE_VERSION); return 0;
        case 'i': a->input = optarg; break;
        case O_TABLE: a->session.mode = SQLTOOL_FMT_TABLE; a->mode_set = 1; break;
        case O_TSV: a->session.mode = SQLTOOL_FMT_TSV; a->mode_set = 1; break;
        case O_CSV: a->session.mode = SQLTOOL_FMT_CSV; a->mode_set = 1; break;
        case O_STATS: a->session.stats = 1; break;
        case O_ISOLATION: if (parse_isolation(optarg, &a->session.tx.isolation)) return 2; break;
        case O_LOCKTIMEOUT: if (parse_int(optarg, "--lock-timeout", -1, 32767, &a->session.tx.lock_timeout)) return 2; break;
        case O_AUTOCOMMIT: a->session.autocommit = 1; break;
        case O_NOAUTOCOMMIT: a->session.autocommit = 0; break;
        case O_BAIL: a->bail = 1; break;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc || (a->info && optind != argc - 1) || (a->input && optind != argc - 1)) {
        if (a->input && optind < argc - 1)
            fprintf(stderr, "fbwire-sql: -i FILE and SQL arguments exclude each other\n");
        usage(stderr);
        return 2;
    }
    a->dsn = argv[optind];
    a->sql = argv + optind + 1;
    a->nsql = argc - optind - 1;
    if (o->conn.protocol_min > o->conn.protocol_max)
        o->conn.protocol_min = o->conn.protocol_max;
    if (!a->mode_set)
        a->session.mode = isatty(STDOUT_FILENO) ? SQLTOOL_FMT_TABLE : SQLTOOL_FMT_TSV;
    return -1;
}

static int run_info(const args *a)
{
    fbw_client *cl = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    if (fbw_client_connect(a->dsn, &a->client, &cl, &err) != FBW_OK) {
        print_error("connect", &err);
        return 1;
    }
    fbw_conn *c = fbw_client_conn(cl);
    if (fbw_conn_query_version(c) != FBW_OK || fbw_client_wait(cl) != FBW_OK) {
        print_error("info", fbw_client_error(cl));
        fbw_client_abort(cl);
        return 1;
    }
    /* Report the cost of the whole session: detach first, so its trip is counted too. */
    if (fbw_conn_detach(c) == FBW_OK && fbw_client_wait(cl) == FBW_OK) {
        const uint8_t *p;
        size_t n;
        fbw_conn_pending(c, &p, &n); /* op_disconnect is queued: count it before printing */
    } else {
        print_error("detach", fbw_client_error(cl));
        fbw_client_abort(cl);
        return 1;
    }
    sqltool_cmd_print_info(cl, stdout);
    fbw_client_close(cl);
    return 0;
}

/* The whole of FILE ("-" or NULL: stdin) into b. */
static int read_script(const char *path, fbw_buf *b)
{
    FILE *f = path && strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "fbwire-sql: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (;;) {
        if (fbw_buf_reserve(b, 65536)) {
            fprintf(stderr, "fbwire-sql: out of memory reading the script\n");
            rc = -1;
            break;
        }
        size_t n = fread(fbw_buf_tail(b), 1, 65536, f);
        fbw_buf_added(b, n);
        /* One end of file ends the input: on a terminal another read after Ctrl-D would wait for
         * a second one. */
        if (n < 65536 || feof(f) || ferror(f))
            break;
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "fbwire-sql: cannot read %s: %s\n", path ? path : "stdin", strerror(errno));
        rc = -1;
    }
    if (f != stdin)
        fclose(f);
    return rc;
}

enum { GO_ON, STOP_BAIL, STOP_FATAL, STOP_EXIT, STOP_QUIT };

/* Run every statement of one script text; the splitter keeps SET TERM across texts. */
static int run_script(sqltool_session *se, sqltool_split *sp, const char *text, size_t len, int bail)
{
    sqltool_split_feed(sp, text, len);
    for (;;) {
        sqltool_split_stmt st;
        fbw_err err;
        fbw_err_clear(&err);
        if (sqltool_split_next(sp, &st, &err) != FBW_OK) {
            sqltool_session_fail(se, &err, sp->line);
            if (bail)
                return STOP_BAIL;
            continue; /* the splitter dropped the rest of this text */
        }
        if (!st.sql)
            return GO_ON;
        int rc;
        int cmd = sqltool_cmd_run(se, st.sql, st.len, st.line, &rc);
        if (cmd == SQLTOOL_CMD_SQL)
            rc = sqltool_session_exec(se, st.sql, st.len, st.line);
        if (cmd == SQLTOOL_CMD_EXIT)
            return STOP_EXIT;
        if (cmd == SQLTOOL_CMD_QUIT)
            return STOP_QUIT;
        if (fbw_is_fatal(rc))
            return STOP_FATAL;
        if (rc && bail)
            return STOP_BAIL;
    }
}

static int run_sql(const args *a)
{
    fbw_buf script;
    fbw_buf_init(&script);
    int interactive = a->nsql == 0 && !a->input && isatty(STDIN_FILENO);
    if (a->nsql == 0 && !interactive) {
        if (read_script(a->input, &script)) {
            fbw_buf_free(&script);
            return 1;
        }
    }
    fbw_client *cl = NULL;
    sqltool_session *se = NULL;
    fbw_err err;
    fbw_err_clear(&err);
    if (fbw_client_connect(a->dsn, &a->client, &cl, &err) != FBW_OK) {
        print_error("connect", &err);
        fbw_buf_free(&script);
        return 1;
    }
    sqltool_session_opts so = a->session;
    so.dsn = a->dsn; /* SHOW DATABASE's service attachment: same server, same login */
    so.client = &a->client;
    if (sqltool_session_new(cl, &so, stdout, stderr, &se) != FBW_OK) {
        fprintf(stderr, "fbwire-sql: out of memory\n");
        fbw_client_close(cl);
        fbw_buf_free(&script);
        return 1;
    }
    sqltool_session_note_connect(se);
    sqltool_split sp;
    sqltool_split_init(&sp);
    int stop = GO_ON;
    if (interactive) {
        int end = sqltool_interactive_run(se, &sp);
        stop = end == SQLTOOL_IA_FATAL ? STOP_FATAL : end == SQLTOOL_IA_END_ROLLBACK ? STOP_QUIT : STOP_EXIT;
    } else if (a->nsql == 0) {
        stop = run_script(se, &sp, (const char *)script.data, script.len, a->bail);
    }
    for (int i = 0; i < a->nsql && stop == GO_ON; i++)
        stop = run_script(se, &sp, a->sql[i], strlen(a->sql[i]), a->bail);
    int rc = sqltool_session_failures(se) ? 1 : 0;
    /* End of input and EXIT commit, QUIT and --bail roll back (isql's rules). */
    int commit = stop == GO_ON || stop == STOP_EXIT;
    if (stop != STOP_FATAL && sqltool_session_end(se, commit) != FBW_OK)
        rc = 1;
    sqltool_session_close(se, stop == STOP_FATAL);
    fbw_buf_free(&script);
    return stop == STOP_FATAL ? 1 : rc;
}

int main(int argc, char **argv)
{
    args a;
    memset(&a, 0, sizeof a);
    fbw_client_opts_init(&a.client);
    fbw_tx_opts_init(&a.session.tx);
    a.session.autocommit = 1;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    return a.info ? run_info(&a) : run_sql(&a);
}
