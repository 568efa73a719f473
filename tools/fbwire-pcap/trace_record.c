/* SPDX-License-Identifier: MIT */
/* trace_record.c - `fbwire-pcap trace-record` (trace_record.h): a user trace session through the
 * services API, its output written to a file and parsed as it arrives. */
#include "trace_record.h"

#include "cliopts.h"

#include "svcclient.h"
#include "trace.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop_asked;

static void on_signal(int sig)
{
    (void)sig;
    stop_asked = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fbwire-pcap trace-record --server HOST[/PORT] --database PATH --out FILE\n"
            "                                [--time S] [--user U] [--password P]\n"
            "                                [--wire-crypt disabled|enabled|required]\n"
            "  record every attachment to PATH on the server through Firebird's trace API (a user\n"
            "  trace session: statements with their parameters, transactions, attachments, with\n"
            "  timestamps) until --time S seconds passed or Ctrl-C; FILE is what\n"
            "  `fbwire-pcap replay --trace FILE` replays. Works on encrypted connections: the\n"
            "  server reports what it ran. The login needs the right to trace (SYSDBA, the\n"
            "  database owner for its own attachments, or TRACE_ANY_ATTACHMENT)\n");
}

int pcaptool_trace_config(const char *path, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!*base)
        return -1;
    /* the pattern is SQL's SIMILAR TO: the file name's own characters must be plain ('_' matches
     * any character: harmless) */
    for (const char *p = base; *p; p++)
        if (strchr("%[]()|*+?{}^\\-\"\n\r\t", *p))
            return -1;
    int n = snprintf(out, cap,
                     "database = %%[\\\\/]%s\n"
                     "{\n"
                     "\tenabled = true\n"
                     "\tlog_connections = true\n"
                     "\tlog_transactions = true\n"
                     "\tlog_statement_prepare = true\n"
                     "\tlog_statement_free = true\n"
                     "\tlog_statement_start = true\n"
                     "\tlog_statement_finish = true\n"
                     "\ttime_threshold = 0\n"
                     "\tmax_sql_length = 65000\n"
                     "\tmax_arg_length = 65000\n"
                     "\tmax_arg_count = 65000\n"
                     "}\n",
                     base);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

typedef struct rec {
    const char *server, *database, *file, *user, *password;
    int wire_crypt;
    double seconds; /* 0: until Ctrl-C */
    FILE *out;
    pcaptool_trace t;
    fbw_buf pending; /* text not yet parsed (a record still coming) */
    int parse_failed;
    unsigned long session;
    char head[64]; /* the output's first bytes: "Trace session ID N started" */
    size_t nhead;
    uint64_t bytes;
} rec;

static void client_opts(const rec *r, fbw_client_opts *o)
{
    fbw_client_opts_init(o);
    o->conn.user = r->user;
    o->conn.password = r->password;
    o->conn.wire_crypt = r->wire_crypt;
}

static int svc_open(const rec *r, fbw_client **cl, fbw_err *err)
{
    char dsn[600];
    snprintf(dsn, sizeof dsn, "%s:service_mgr", r->server);
    fbw_client_opts o;
    client_opts(r, &o);
    return fbw_client_svc_connect(dsn, &o, cl, err);
}

/* Text that came: to the file, and through the parser (only whole records are taken). */
static int take(rec *r, const uint8_t *p, size_t n, int final)
{
    if (n && fwrite(p, 1, n, r->out) != n)
        return -1;
    r->bytes += n;
    for (size_t i = 0; i < n && r->nhead + 1 < sizeof r->head; i++)
        r->head[r->nhead++] = (char)p[i];
    r->head[r->nhead] = 0;
    if (!r->session && !strncmp(r->head, "Trace session ID ", 17))
        r->session = strtoul(r->head + 17, NULL, 10);
    if (fbw_buf_append(&r->pending, p, n) != FBW_OK)
        return -1;
    if (r->parse_failed)
        return 0;
    size_t used;
    if (pcaptool_trace_feed(&r->t, (const char *)fbw_buf_head(&r->pending),
                            fbw_buf_avail(&r->pending), final, &used) != FBW_OK) {
        fprintf(stderr, "fbwire-pcap: trace-record: the trace's text does not parse: %s\n",
                r->t.err);
        r->parse_failed = 1;
    }
    fbw_buf_consume(&r->pending, used);
    return 0;
}

/* Stop the session from a second service attachment (the first one is busy reading it). */
static int stop_session(const rec *r)
{
    fbw_client *cl;
    fbw_err err;
    fbw_err_clear(&err);
    if (svc_open(r, &cl, &err)) {
        fprintf(stderr, "fbwire-pcap: trace-record: cannot connect to stop the session: %s\n",
                err.msg);
        return -1;
    }
    fbw_spb spb;
    fbw_spb_init(&spb, FBW_SVC_ACTION_TRACE_STOP);
    fbw_spb_add_int(&spb, FBW_SPB_TRC_ID, (uint32_t)r->session);
    fbw_buf said;
    fbw_buf_init(&said);
    int rc = fbw_client_svc_run(cl, &spb, 5, 0, &said, &err);
    fbw_spb_free(&spb);
    fbw_buf_free(&said);
    fbw_client_close(cl);
    if (rc)
        fprintf(stderr, "fbwire-pcap: trace-record: cannot stop session %lu: %s\n", r->session,
                err.msg);
    return rc ? -1 : 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read the session's output until it ends; ask it to stop when the time is up or on a signal. */
static int record(rec *r, fbw_client *cl)
{
    fbw_buf chunk;
    fbw_buf_init(&chunk);
    double t0 = now_s(), stopped_at = 0;
    int stopping = 0, status = 0;
    for (;;) {
        fbw_svc_output o;
        fbw_err err;
        fbw_err_clear(&err);
        if (fbw_client_svc_output(cl, FBW_INFO_SVC_TO_EOF, 1, &chunk, &o, &err)) {
            fprintf(stderr, "fbwire-pcap: trace-record: reading the session: %s\n", err.msg);
            status = 1;
            break;
        }
        if (o == FBW_SVC_OUT_EOF)
            break;
        if (o == FBW_SVC_OUT_DATA && take(r, fbw_buf_head(&chunk), fbw_buf_avail(&chunk), 0)) {
            fprintf(stderr, "fbwire-pcap: trace-record: %s: %s\n", r->file,
                    errno ? strerror(errno) : "out of memory");
            status = 1;
            break;
        }
        int due = stop_asked || (r->seconds > 0 && now_s() - t0 >= r->seconds);
        if (due && !stopping && r->session) {
            stopping = 1;
            stopped_at = now_s();
            if (stop_session(r)) {
                status = 1;
                break;
            }
        }
        if (stopping && now_s() - stopped_at > 30) { /* bounded: the server must end it */
            fprintf(stderr, "fbwire-pcap: trace-record: the session did not end 30 s after "
                            "it was stopped\n");
            status = 1;
            break;
        }
        if (due && !r->session && now_s() - t0 > r->seconds + 10) {
            fprintf(stderr, "fbwire-pcap: trace-record: the server never named the session\n");
            status = 1;
            break;
        }
    }
    fbw_buf_free(&chunk);
    if (!status && take(r, NULL, 0, 1))
        status = 1;
    return status;
}

static int parse_args(int argc, char **argv, rec *r)
{
    static const struct option lo[] = {{"server", required_argument, 0, 's'},
                                       {"database", required_argument, 0, 'd'},
                                       {"out", required_argument, 0, 'o'},
                                       {"time", required_argument, 0, 't'},
                                       {"user", required_argument, 0, 'u'},
                                       {"password", required_argument, 0, 'p'},
                                       {"wire-crypt", required_argument, 0, 'c'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    r->wire_crypt = FBW_WIRE_CRYPT_ENABLED;
    for (int ch; (ch = getopt_long(argc, argv, "", lo, NULL)) != -1;) {
        char *end;
        switch (ch) {
        case 's': r->server = optarg; break;
        case 'd': r->database = optarg; break;
        case 'o': r->file = optarg; break;
        case 'u': r->user = optarg; break;
        case 'p': r->password = optarg; break;
        case 't':
            errno = 0;
            r->seconds = strtod(optarg, &end);
            if (errno || *end || !(r->seconds > 0 && r->seconds <= 86400)) {
                fprintf(stderr, "fbwire-pcap: --time takes seconds from 0 to 86400\n");
                return -1;
            }
            break;
        case 'c':
            if (pcaptool_parse_wire_crypt(optarg, &r->wire_crypt))
                return -1;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return -1;
        }
    }
    if (optind != argc || !r->server || !r->database || !r->file) {
        fprintf(stderr, "fbwire-pcap: trace-record needs --server, --database and --out\n");
        return -1;
    }
    return 0;
}

int pcaptool_trace_record_main(int argc, char **argv)
{
    rec r;
    memset(&r, 0, sizeof r);
    if (parse_args(argc, argv, &r)) {
        usage(stderr);
        return 2;
    }
    char cfg[1200];
    if (pcaptool_trace_config(r.database, cfg, sizeof cfg)) {
        fprintf(stderr, "fbwire-pcap: trace-record: %s: a database file name the trace "
                        "configuration cannot match as is\n", r.database);
        return 2;
    }
    fbw_client *cl;
    fbw_err err;
    fbw_err_clear(&err);
    if (svc_open(&r, &cl, &err)) {
        fprintf(stderr, "fbwire-pcap: trace-record: cannot connect to %s: %s\n", r.server, err.msg);
        return 2;
    }
    fbw_spb spb;
    fbw_spb_init(&spb, FBW_SVC_ACTION_TRACE_START);
    fbw_spb_add_str(&spb, FBW_SPB_TRC_NAME, "fbwire-pcap trace-record");
    fbw_spb_add_str(&spb, FBW_SPB_TRC_CFG, cfg);
    int rc = fbw_client_svc_start(cl, &spb, &err);
    fbw_spb_free(&spb);
    if (rc) {
        fprintf(stderr, "fbwire-pcap: trace-record: the server refused the trace: %s\n", err.msg);
        fbw_client_close(cl);
        return 2;
    }
    if (!(r.out = fopen(r.file, "wb"))) {
        fprintf(stderr, "fbwire-pcap: trace-record: %s: %s\n", r.file, strerror(errno));
        fbw_client_close(cl);
        return 2;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    pcaptool_trace_init(&r.t);
    fbw_buf_init(&r.pending);
    int status = record(&r, cl);
    fbw_client_close(cl);
    if (fclose(r.out)) {
        fprintf(stderr, "fbwire-pcap: trace-record: %s: %s\n", r.file, strerror(errno));
        status = 1;
    }
    size_t kinds[PCAPTOOL_TRACE_KINDS] = {0};
    for (size_t i = 0; i < r.t.n; i++)
        kinds[r.t.ev[i].kind]++;
    fprintf(stderr,
            "fbwire-pcap: trace-record: session %lu: %llu bytes, %zu events (%zu attach, %zu "
            "transaction starts, %zu executions finished) to %s\n",
            r.session, (unsigned long long)r.bytes, r.t.n, kinds[PCAPTOOL_TRACE_ATTACH],
            kinds[PCAPTOOL_TRACE_START], kinds[PCAPTOOL_TRACE_EXEC_FINISH], r.file);
    pcaptool_trace_free(&r.t);
    fbw_buf_free(&r.pending);
    return status || r.parse_failed ? 1 : 0;
}
