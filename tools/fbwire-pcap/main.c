/* SPDX-License-Identifier: MIT */
/* fbwire-pcap - decode Firebird wire sessions from a capture file with the same decoder the live
 * client uses (wire/dec.h): `dump` prints every packet, `stats` the round-trip accounting per
 * connection, `replay` rebuilds each connection's SQL workload and lists it or runs it through
 * fbwire (replay.h), `turns` counts turnarounds and bytes of any TCP protocol (turns.h). Exit
 * status: 0 all decoded (and replayed), 1 something could not be decoded or a replayed step failed
 * (reported), 2 usage or unreadable file. */
#include "cliopts.h"
#include "pcaptool.h"
#include "replay.h"
#include "trace_record.h"
#include "trace_replay.h"
#include "turns.h"

#include "conn.h"
#include "msg.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PORTS 64
#define DEFAULT_PORT 3050

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: fbwire-pcap dump FILE [--port N]... [--json] [--keylog KEYS]\n"
        "       fbwire-pcap stats FILE [--port N]... [--json] [--trips] [--keylog KEYS]\n"
        "       fbwire-pcap replay FILE --db DSN [--user U] [--password P] [--port N]...\n"
        "                          [--connection K] [--pace original|none] [--speed X]\n"
        "                          [--connections N] [--results compare|ignore] [--progress]\n"
        "                          [--json]\n"
        "       fbwire-pcap replay FILE --list [--port N]... [--connection K] [--json]\n"
        "       fbwire-pcap replay --trace TRACE [--trace-db PATH] (--db DSN ... | --list)\n"
        "       fbwire-pcap turns FILE --port N [--port N]... [--json]\n"
        "       fbwire-pcap trace-record --server HOST[/PORT] --database PATH --out FILE\n"
        "                          [--time S] [--user U] [--password P] [--wire-crypt MODE]\n"
        "  FILE        pcap or pcapng (Ethernet, Linux cooked, loopback or raw IP; IPv4/IPv6)\n"
        "  dump        one line per packet: time, connection, direction, op, size, key fields\n"
        "  stats       per connection and total: packets and bytes per op each way, round trips,\n"
        "              wait time (the numbers fbw_conn_stats gives the live client)\n"
        "  replay      rebuild each connection's SQL workload from the client's packets (transactions\n"
        "              with their TPB, prepare, execute with its parameters, fetch, free, execute\n"
        "              immediate with or without parameters, blob reads, info requests, and on\n"
        "              scrollable cursors (protocol 18) each move and the record count) and run\n"
        "              it through fbwire on --db, all connections at once, each from its offset\n"
        "              in the capture, one connection per captured one; compares every\n"
        "              execution's rows and affected rows and every blob read's contents with\n"
        "              the capture's replies, and prints latency per statement fingerprint and\n"
        "              the capture's round trips, packets and bytes next to fbwire's.\n"
        "              Blobs the client wrote are written again; FB4 batches run message by\n"
        "              message. Not replayed, but counted and listed: events, cancel, BLR\n"
        "              requests, reads of blobs opened before the capture began, and steps\n"
        "              sending blob ids the capture did not create. Encrypted or\n"
        "              undecodable connections are not replayed (an error says why).\n"
        "              docs/fbwire-pcap.md has the details\n"
        "  --trace     FILE is the text of a Firebird trace session (fbtracemgr's output): its\n"
        "              attachments' statements, parameters and transactions are replayed as\n"
        "              above; SELECT row counts compared (docs/fbwire-pcap.md: what a trace\n"
        "              cannot give)\n"
        "  --trace-db PATH   with --trace: only attachments of this database (its path as the\n"
        "              server names it, or its file name)\n"
        "  trace-record   record a live server's workload (encrypted or not) through Firebird's\n"
        "              trace API until --time S or Ctrl-C, into FILE for replay --trace\n"
        "              (fbwire-pcap trace-record --help)\n"
        "  turns       any protocol (no decoding): per connection to --port, turnarounds (server\n"
        "              bytes after client bytes, as stats counts round trips) and bytes each way\n"
        "  --db DSN    replay into this database (host[/port]:path) instead of the captured one\n"
        "  --user U, --password P   login (default $ISC_USER, $ISC_PASSWORD)\n"
        "  --wire-crypt MODE   disabled (default: a capture that decodes was not encrypted, so\n"
        "              this compares like with like), enabled or required\n"
        "  --connection K   only connection K, numbered as stats numbers them\n"
        "  --list      print the rebuilt workload, one line per step; connect nowhere\n"
        "  --pace P    original (default): connections start at their offsets and keep the\n"
        "              client's think time between requests; none: no waiting at all\n"
        "  --speed X   with --pace original: offsets and think times divided by X (default 1)\n"
        "  --connections N   replay on N connections: connection j runs captured connection\n"
        "              (j mod captured count); N at least the captured count\n"
        "  --results R compare (default): rows and affected rows against the capture's replies;\n"
        "              ignore: do not compare\n"
        "  --row-format F   captured (default): rows asked for in the format the captured client\n"
        "              asked for; compact or described: the library's formats (wire/msg.h)\n"
        "  --inline-blob-size N   captured (default): each execution asks for the inline blobs\n"
        "              (Firebird 5.0.3+) its captured op_execute or op_exec_immediate2 asked\n"
        "              for, none when the captured client did not ask (Firebird 3/4);\n"
        "              N (0-65535): that size for every one\n"
        "  --progress  a progress line on stderr (default when stderr is a terminal)\n"
        "  --port N    follow only port 3050 and port N (repeatable); without it every TCP\n"
        "              connection is followed and Firebird ones are recognised by content (an\n"
        "              op_connect, or packets the decoder locks on to mid-session)\n"
        "  --json      JSON (dump: one object per line)\n"
        "  --trips     stats: list each round trip's ops (> sent, < received)\n"
        "  --keylog KEYS   decrypt encrypted connections with their line in this key log (written\n"
        "              by fbwire with FBWIRE_KEYLOGFILE=KEYS); every subcommand takes it\n");
}

static int parse_port(const char *s, uint16_t *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 1 || v > 65535) {
        fprintf(stderr, "fbwire-pcap: --port must be a number from 1 to 65535, got \"%s\"\n", s);
        return -1;
    }
    *out = (uint16_t)v;
    return 0;
}

/* rp: replay (the report decodes quietly and taps every packet into it), else dump or stats. */
static int run(const char *file, pcaptool_report_opts *ro, const uint16_t *ports, size_t nports,
               int explicit_ports, pcaptool_replay *rp, const char *keylog)
{
    pcaptool_report *r = NULL;
    pcaptool_cap_summary sum;
    fbw_err err;
    fbw_err_clear(&err);
    int status = 2;
    pcaptool_keys *keys = NULL;
    if (keylog && pcaptool_keys_load(keylog, &keys, &err) != FBW_OK) {
        fprintf(stderr, "fbwire-pcap: %s\n", err.msg);
        goto done;
    }
    ro->keys = keys;
    ro->ports = ports;
    ro->nports = nports;
    if (pcaptool_report_new(ro, &r) != FBW_OK)
        goto done;
    /* Without --port every TCP connection is followed and recognised by content. */
    if (pcaptool_report_read(r, file, ports, nports, explicit_ports, &sum, &err) != FBW_OK) {
        if (err.code)
            fprintf(stderr, "fbwire-pcap: %s\n", err.msg);
        goto done;
    }
    int problems = pcaptool_report_finish(r, file, &sum);
    if (rp)
        pcaptool_replay_source(rp, file, keys, ports, nports, explicit_ports);
    if (rp && pcaptool_replay_finish(rp, r, &sum))
        problems = problems ? problems : 1;
    fflush(ro->out);
    if (sum.truncated[0])
        fprintf(stderr, "fbwire-pcap: %s: capture truncated after frame %llu: %s\n", file,
                (unsigned long long)sum.frames, sum.truncated);
    if (problems && rp)
        fprintf(stderr, "fbwire-pcap: %s: not everything could be decoded or replayed (above)\n",
                file);
    else if (problems)
        fprintf(stderr, "fbwire-pcap: %s: %d connection%s could not be decoded to the end\n", file,
                problems, problems == 1 ? "" : "s");
    status = problems || sum.truncated[0] ? 1 : 0;
done:
    if (status == 2 && !err.code)
        fprintf(stderr, "fbwire-pcap: out of memory\n");
    pcaptool_report_free(r);
    pcaptool_keys_free(keys);
    return status;
}

static int parse_connection(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 1 || v > 1000000) {
        fprintf(stderr, "fbwire-pcap: --connection must be a connection number (1, 2, ...), got "
                        "\"%s\"\n",
                s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Replay needs --db unless it only lists; dump and stats take none of replay's options. */
static int check_mode(int mode, const pcaptool_replay_opts *po, int replay_opts)
{
    if (mode != PCAPTOOL_REPORT_QUIET && replay_opts) {
        fprintf(stderr, "fbwire-pcap: --db, --user, --password, --wire-crypt, --connection and "
                        "--list are replay options\n");
        return -1;
    }
    if (mode == PCAPTOOL_REPORT_QUIET && !po->list && !po->dsn) {
        fprintf(stderr, "fbwire-pcap: replay needs --db DSN (or --list)\n");
        return -1;
    }
    if (mode == PCAPTOOL_REPORT_QUIET && po->list && (po->dsn || po->user || po->password)) {
        fprintf(stderr, "fbwire-pcap: --list connects nowhere: no --db, --user or --password\n");
        return -1;
    }
    return 0;
}

static int mode_of(const char *cmd)
{
    return !strcmp(cmd, "stats")    ? PCAPTOOL_REPORT_STATS
           : !strcmp(cmd, "dump")   ? PCAPTOOL_REPORT_DUMP
           : !strcmp(cmd, "replay") ? PCAPTOOL_REPORT_QUIET
                                    : -1;
}

static int run_replay(const char *file, pcaptool_report_opts *ro, const uint16_t *ports,
                      size_t nports, pcaptool_replay_opts *po, const char *keylog)
{
    pcaptool_replay *rp = NULL;
    po->json = ro->json;
    po->out = ro->out;
    if (pcaptool_replay_new(po, &rp) != FBW_OK) {
        fprintf(stderr, "fbwire-pcap: out of memory\n");
        return 2;
    }
    ro->tap = pcaptool_replay_tap;
    ro->tap_arg = rp;
    int status = run(file, ro, ports, nports, nports > 1, rp, keylog);
    pcaptool_replay_free(rp);
    return status;
}

enum {
    O_PORT = 256, O_JSON, O_TRIPS, O_HELP, O_DB, O_USER, O_PASSWORD, O_CONNECTION, O_LIST, O_CRYPT,
    O_KEYLOG, O_PACE, O_SPEED, O_CONNECTIONS, O_RESULTS, O_PROGRESS, O_ROWFORMAT, O_TRACE, O_TRACEDB,
    O_INLINE
};

static int parse_replay_opt(int ch, const char *arg, pcaptool_replay_opts *po)
{
    char *end;
    errno = 0;
    switch (ch) {
    case O_PACE:
        if (!strcmp(arg, "original") || !strcmp(arg, "none")) {
            po->pace_none = !strcmp(arg, "none");
            return 0;
        }
        fprintf(stderr, "fbwire-pcap: --pace takes original or none\n");
        return -1;
    case O_SPEED:
        po->speed = strtod(arg, &end);
        if (errno || *end || !(po->speed >= 0.01 && po->speed <= 1000)) {
            fprintf(stderr, "fbwire-pcap: --speed must be a number from 0.01 to 1000\n");
            return -1;
        }
        return 0;
    case O_CONNECTIONS: {
        long v = strtol(arg, &end, 10);
        if (errno || *end || v < 1 || v > 10000) {
            fprintf(stderr, "fbwire-pcap: --connections must be a number from 1 to 10000\n");
            return -1;
        }
        po->connections = (int)v;
        return 0;
    }
    case O_RESULTS:
        if (!strcmp(arg, "compare") || !strcmp(arg, "ignore")) {
            po->results_ignore = !strcmp(arg, "ignore");
            return 0;
        }
        fprintf(stderr, "fbwire-pcap: --results takes compare or ignore\n");
        return -1;
    case O_ROWFORMAT:
        if (!strcmp(arg, "captured")) {
            po->row_format = PCAPTOOL_REPLAY_ROWS_CAPTURED;
            return 0;
        }
        if (fbw_row_format_parse(arg, &po->row_format) == FBW_OK)
            return 0;
        fprintf(stderr, "fbwire-pcap: --row-format takes captured, compact or described\n");
        return -1;
    case O_INLINE: {
        if (!strcmp(arg, "captured")) {
            po->inline_blob_size = PCAPTOOL_REPLAY_INLINE_CAPTURED;
            return 0;
        }
        long v = strtol(arg, &end, 10);
        if (errno || *end || end == arg || v < 0 || v > 65535) {
            fprintf(stderr, "fbwire-pcap: --inline-blob-size takes captured or a number from 0 "
                            "to 65535\n");
            return -1;
        }
        po->inline_blob_size = (int32_t)v;
        return 0;
    }
    default:
        po->progress = 1;
        return 0;
    }
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"port", required_argument, 0, O_PORT},
                                             {"json", no_argument, 0, O_JSON},
                                             {"trips", no_argument, 0, O_TRIPS},
                                             {"help", no_argument, 0, O_HELP},
                                             {"db", required_argument, 0, O_DB},
                                             {"user", required_argument, 0, O_USER},
                                             {"password", required_argument, 0, O_PASSWORD},
                                             {"connection", required_argument, 0, O_CONNECTION},
                                             {"list", no_argument, 0, O_LIST},
                                             {"wire-crypt", required_argument, 0, O_CRYPT},
                                             {"keylog", required_argument, 0, O_KEYLOG},
                                             {"pace", required_argument, 0, O_PACE},
                                             {"speed", required_argument, 0, O_SPEED},
                                             {"connections", required_argument, 0, O_CONNECTIONS},
                                             {"results", required_argument, 0, O_RESULTS},
                                             {"row-format", required_argument, 0, O_ROWFORMAT},
                                             {"inline-blob-size", required_argument, 0, O_INLINE},
                                             {"progress", no_argument, 0, O_PROGRESS},
                                             {"trace", no_argument, 0, O_TRACE},
                                             {"trace-db", required_argument, 0, O_TRACEDB},
                                             {0, 0, 0, 0}};
    uint16_t ports[MAX_PORTS] = {DEFAULT_PORT};
    size_t nports = 1;
    pcaptool_report_opts ro = {.mode = PCAPTOOL_REPORT_DUMP, .out = stdout};
    pcaptool_replay_opts po = {
        .wire_crypt = FBW_WIRE_CRYPT_DISABLED, .speed = 1, .row_format = PCAPTOOL_REPLAY_ROWS_CAPTURED,
        .inline_blob_size = PCAPTOOL_REPLAY_INLINE_CAPTURED};
    int replay_opts = 0;
    const char *keylog = NULL, *trace_db = NULL;
    int trace = 0;
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "turns"))
        return pcaptool_turns_main(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "trace-record"))
        return pcaptool_trace_record_main(argc - 1, argv + 1);
    if (argc < 2 || mode_of(argv[1]) < 0) {
        usage(stderr);
        return 2;
    }
    ro.mode = mode_of(argv[1]);
    argv++;
    argc--;
    for (int ch; (ch = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        uint16_t p;
        switch (ch) {
        case O_PORT:
            if (parse_port(optarg, &p))
                return 2;
            if (nports == MAX_PORTS) {
                fprintf(stderr, "fbwire-pcap: at most %d ports\n", MAX_PORTS);
                return 2;
            }
            ports[nports++] = p;
            break;
        case O_JSON:
            ro.json = 1;
            break;
        case O_TRIPS:
            ro.trips = 1;
            break;
        case O_DB:
            po.dsn = optarg;
            replay_opts = 1;
            break;
        case O_USER:
            po.user = optarg;
            replay_opts = 1;
            break;
        case O_PASSWORD:
            po.password = optarg;
            replay_opts = 1;
            break;
        case O_CONNECTION:
            if (parse_connection(optarg, &po.connection))
                return 2;
            replay_opts = 1;
            break;
        case O_LIST:
            po.list = 1;
            replay_opts = 1;
            break;
        case O_CRYPT:
            if (pcaptool_parse_wire_crypt(optarg, &po.wire_crypt))
                return 2;
            replay_opts = 1;
            break;
        case O_KEYLOG:
            keylog = optarg;
            break;
        case O_TRACE:
            trace = 1;
            replay_opts = 1;
            break;
        case O_TRACEDB:
            trace_db = optarg;
            replay_opts = 1;
            break;
        case O_PACE: case O_SPEED: case O_CONNECTIONS: case O_RESULTS: case O_PROGRESS: case O_ROWFORMAT:
        case O_INLINE:
            if (parse_replay_opt(ch, optarg, &po))
                return 2;
            replay_opts = 1;
            break;
        case O_HELP:
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1 || check_mode(ro.mode, &po, replay_opts) ||
        (ro.trips && ro.mode == PCAPTOOL_REPORT_QUIET)) {
        usage(stderr);
        return 2;
    }
    if (trace_db && !trace) {
        fprintf(stderr, "fbwire-pcap: --trace-db goes with --trace\n");
        return 2;
    }
    if (trace) {
        po.json = ro.json;
        po.out = ro.out;
        return pcaptool_trace_replay_file(argv[optind], trace_db, &po);
    }
    if (ro.mode == PCAPTOOL_REPORT_QUIET)
        return run_replay(argv[optind], &ro, ports, nports, &po, keylog);
    return run(argv[optind], &ro, ports, nports, nports > 1, NULL, keylog);
}
