/* SPDX-License-Identifier: MIT */
/* turns.c - `fbwire-pcap turns FILE --port N... [--json]` (turns.h). */
#include "turns.h"

#include "jsonout.h"

#include "pcaptool.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PORTS 64

typedef struct tconn {
    int id;
    char client[64], server[64];
    int saw_syn, ended, last_from_client;
    enum pcaptool_tcp_end end;
    uint64_t turns, bytes_sent, bytes_received; /* sent/received as the client sees it */
    char problem[200];                          /* "" or why the stream could not be followed */
} tconn;

typedef struct turns {
    tconn **c;
    size_t n, cap;
    int failed; /* out of memory: the figures are incomplete */
} turns;

static void *on_open(void *arg, const char *client, const char *server, int saw_syn, uint64_t frame)
{
    (void)frame;
    turns *t = arg;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        tconn **n = realloc(t->c, cap * sizeof *n);
        if (!n) {
            t->failed = 1;
            return NULL;
        }
        t->c = n;
        t->cap = cap;
    }
    tconn *c = calloc(1, sizeof *c);
    if (!c) {
        t->failed = 1;
        return NULL;
    }
    c->id = (int)t->n + 1;
    snprintf(c->client, sizeof c->client, "%s", client);
    snprintf(c->server, sizeof c->server, "%s", server);
    c->saw_syn = saw_syn;
    t->c[t->n++] = c;
    return c;
}

/* The same rule as fbw_dec_feed: a turnaround is server data after client data. */
static void on_data(void *conn, int from_client, const uint8_t *p, size_t n, uint64_t ts_ns,
                    uint64_t frame)
{
    (void)p, (void)ts_ns, (void)frame;
    tconn *c = conn;
    if (from_client) {
        c->bytes_sent += n;
        c->last_from_client = 1;
        return;
    }
    if (c->last_from_client)
        c->turns++;
    c->last_from_client = 0;
    c->bytes_received += n;
}

static void on_broken(void *conn, const char *why)
{
    tconn *c = conn;
    if (!c->problem[0])
        snprintf(c->problem, sizeof c->problem, "%s", why);
}

static void on_close(void *conn, enum pcaptool_tcp_end how)
{
    tconn *c = conn;
    c->ended = 1;
    c->end = how;
}

static const char *end_name(const tconn *c)
{
    return !c->ended                   ? "capture"
           : c->end == PCAPTOOL_TCP_END_FIN ? "fin"
           : c->end == PCAPTOOL_TCP_END_RST ? "rst"
                                       : "capture";
}

static void print_text(FILE *out, const turns *t, const char *file)
{
    uint64_t turns_ = 0, sent = 0, received = 0;
    size_t incomplete = 0;
    fprintf(out, "%s: %zu connection%s\n", file, t->n, t->n == 1 ? "" : "s");
    for (size_t i = 0; i < t->n; i++) {
        const tconn *c = t->c[i];
        fprintf(out,
                "connection %d %s -> %s: %" PRIu64 " turnarounds, %" PRIu64
                " bytes client->server, %" PRIu64 " bytes server->client (end: %s%s)%s%s\n",
                c->id, c->client, c->server, c->turns, c->bytes_sent, c->bytes_received,
                end_name(c), c->saw_syn ? "" : ", started before the capture",
                c->problem[0] ? "; incomplete: " : "", c->problem);
        turns_ += c->turns;
        sent += c->bytes_sent;
        received += c->bytes_received;
        incomplete += c->problem[0] != 0;
    }
    fprintf(out,
            "total: %" PRIu64 " turnarounds, %" PRIu64 " bytes client->server, %" PRIu64
            " bytes server->client%s\n",
            turns_, sent, received,
            incomplete ? " (lower bounds: see incomplete connections)" : "");
}

static json_t *problem_json(const char *problem)
{
    return problem[0] ? pcaptool_json_str(problem) : json_null();
}

static json_t *turns_doc(const turns *t, const char *file, const pcaptool_cap_summary *sum)
{
    uint64_t turns_ = 0, sent = 0, received = 0;
    size_t incomplete = 0;
    json_t *conns = json_array();
    for (size_t i = 0; conns && i < t->n; i++) {
        const tconn *c = t->c[i];
        json_t *o = json_pack("{s:i,s:s,s:s,s:I,s:I,s:I,s:b,s:s,s:o}", "id", c->id, "client",
                              c->client, "server", c->server, "round_trips", (json_int_t)c->turns,
                              "bytes_sent", (json_int_t)c->bytes_sent, "bytes_received",
                              (json_int_t)c->bytes_received, "saw_syn", c->saw_syn, "end",
                              end_name(c), "problem", problem_json(c->problem));
        if (!o || json_array_append_new(conns, o)) {
            json_decref(conns);
            conns = NULL;
        }
        turns_ += c->turns;
        sent += c->bytes_sent;
        received += c->bytes_received;
        incomplete += c->problem[0] != 0;
    }
    return json_pack("{s:o,s:o,s:{s:I,s:I,s:I,s:I,s:I},s:I,s:o}", "file", pcaptool_json_str(file),
                     "connections", conns, "totals", "connections", (json_int_t)t->n, "round_trips",
                     (json_int_t)turns_, "bytes_sent", (json_int_t)sent, "bytes_received",
                     (json_int_t)received, "incomplete", (json_int_t)incomplete, "frames",
                     (json_int_t)sum->frames, "truncated", problem_json(sum->truncated));
}

static void print_json(FILE *out, const turns *t, const char *file, const pcaptool_cap_summary *sum)
{
    if (pcaptool_json_print(turns_doc(t, file, sum), out))
        fprintf(stderr, "fbwire-pcap: the JSON report could not be written\n");
}

static void on_segment(void *arg, const pcaptool_seg *s)
{
    pcaptool_tcp_segment(arg, s);
}

static int count(const char *file, const uint16_t *ports, size_t nports, int json)
{
    turns t = {0};
    pcaptool_tcp *tcp = NULL;
    pcaptool_tcp_sink sink = {on_open, on_data, on_broken, on_close, &t};
    pcaptool_cap_summary sum;
    fbw_err err;
    fbw_err_clear(&err);
    int status = 2;
    if (pcaptool_tcp_new(&sink, ports, nports, &tcp) != FBW_OK) {
        fprintf(stderr, "fbwire-pcap: out of memory\n");
        goto done;
    }
    if (pcaptool_cap_read(file, on_segment, tcp, &sum, &err) != FBW_OK) {
        fprintf(stderr, "fbwire-pcap: %s\n", err.msg);
        goto done;
    }
    pcaptool_tcp_finish(tcp);
    if (t.failed) {
        fprintf(stderr, "fbwire-pcap: out of memory\n");
        goto done;
    }
    if (json)
        print_json(stdout, &t, file, &sum);
    else
        print_text(stdout, &t, file);
    fflush(stdout);
    status = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.c[i]->problem[0])
            status = 1;
    if (sum.truncated[0]) {
        fprintf(stderr, "fbwire-pcap: %s: capture truncated after frame %" PRIu64 ": %s\n", file,
                sum.frames, sum.truncated);
        status = 1;
    }
done:
    pcaptool_tcp_free(tcp);
    for (size_t i = 0; i < t.n; i++)
        free(t.c[i]);
    free(t.c);
    return status;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fbwire-pcap turns FILE --port N [--port N]... [--json]\n"
            "  per TCP connection to port N: turnarounds (server bytes after client bytes,\n"
            "  the round-trip definition of `stats`) and payload bytes each way; any protocol\n");
}

int pcaptool_turns_main(int argc, char **argv)
{
    static const struct option longopts[] = {{"port", required_argument, 0, 'p'},
                                             {"json", no_argument, 0, 'j'},
                                             {"help", no_argument, 0, 'h'},
                                             {0, 0, 0, 0}};
    uint16_t ports[MAX_PORTS];
    size_t nports = 0;
    int json = 0;
    optind = 1;
    for (int ch; (ch = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        char *end;
        long v;
        switch (ch) {
        case 'p':
            errno = 0;
            v = strtol(optarg, &end, 10);
            if (errno || *end || v < 1 || v > 65535) {
                fprintf(stderr,
                        "fbwire-pcap: --port must be a number from 1 to 65535, got \"%s\"\n",
                        optarg);
                return 2;
            }
            if (nports == MAX_PORTS) {
                fprintf(stderr, "fbwire-pcap: at most %d ports\n", MAX_PORTS);
                return 2;
            }
            ports[nports++] = (uint16_t)v;
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1 || nports == 0) {
        if (nports == 0)
            fprintf(stderr, "fbwire-pcap: turns needs --port (no protocol has a default here)\n");
        usage(stderr);
        return 2;
    }
    return count(argv[optind], ports, nports, json);
}
