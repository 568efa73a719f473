/* fbwire-pcap - decode Firebird wire sessions from a capture file with the same decoder the live
 * client uses (wire/dec.h): `dump` prints every packet, `stats` the round-trip accounting per
 * connection. Exit status: 0 all decoded, 1 something could not be decoded (reported), 2 usage or
 * unreadable file. */
#include "pcaptool.h"

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
        "usage: fbwire-pcap dump FILE [--port N]... [--json]\n"
        "       fbwire-pcap stats FILE [--port N]... [--json] [--trips]\n"
        "  FILE        pcap or pcapng (Ethernet, Linux cooked, loopback or raw IP; IPv4/IPv6)\n"
        "  dump        one line per packet: time, connection, direction, op, size, key fields\n"
        "  stats       per connection and total: packets and bytes per op each way, round trips,\n"
        "              wait time (the numbers fbw_conn_stats gives the live client)\n"
        "  --port N    also follow TCP port N (3050 always); repeatable\n"
        "  --json      JSON (dump: one object per line)\n"
        "  --trips     stats: list each round trip's ops (> sent, < received)\n");
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

static void on_segment(void *arg, const fbw_seg *s)
{
    fbw_tcp_segment(arg, s);
}

static int run(const char *file, const fbw_report_opts *ro, const uint16_t *ports, size_t nports)
{
    fbw_report *r = NULL;
    fbw_tcp *t = NULL;
    fbw_tcp_sink sink;
    fbw_cap_summary sum;
    fbw_err err;
    fbw_err_clear(&err);
    int status = 2;
    if (fbw_report_new(ro, &r) != FBW_OK)
        goto done;
    fbw_report_sink(r, &sink);
    if (fbw_tcp_new(&sink, ports, nports, &t) != FBW_OK)
        goto done;
    if (fbw_cap_read(file, on_segment, t, &sum, &err) != FBW_OK) {
        fprintf(stderr, "fbwire-pcap: %s\n", err.msg);
        goto done;
    }
    fbw_tcp_finish(t);
    int problems = fbw_report_finish(r, file, &sum);
    fflush(ro->out);
    if (sum.truncated[0])
        fprintf(stderr, "fbwire-pcap: %s: capture truncated after frame %llu: %s\n", file,
                (unsigned long long)sum.frames, sum.truncated);
    if (problems)
        fprintf(stderr, "fbwire-pcap: %s: %d connection%s could not be decoded to the end\n", file,
                problems, problems == 1 ? "" : "s");
    status = problems || sum.truncated[0] ? 1 : 0;
done:
    if (status == 2 && !err.code)
        fprintf(stderr, "fbwire-pcap: out of memory\n");
    fbw_tcp_free(t);
    fbw_report_free(r);
    return status;
}

enum { O_PORT = 256, O_JSON, O_TRIPS, O_HELP };

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"port", required_argument, 0, O_PORT},
                                             {"json", no_argument, 0, O_JSON},
                                             {"trips", no_argument, 0, O_TRIPS},
                                             {"help", no_argument, 0, O_HELP},
                                             {0, 0, 0, 0}};
    uint16_t ports[MAX_PORTS] = {DEFAULT_PORT};
    size_t nports = 1;
    fbw_report_opts ro = {.mode = FBW_REPORT_DUMP, .out = stdout};
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    if (argc < 2 || (strcmp(argv[1], "dump") && strcmp(argv[1], "stats"))) {
        usage(stderr);
        return 2;
    }
    ro.mode = !strcmp(argv[1], "stats") ? FBW_REPORT_STATS : FBW_REPORT_DUMP;
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
        case O_HELP:
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    return run(argv[optind], &ro, ports, nports);
}
