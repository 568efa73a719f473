/* SPDX-License-Identifier: MIT */
/* opts.c - fbwire-link's options (opts.h) and its man-style help. */
#include "opts.h"

#include "lead.h"
#include "units.h"

#include <stdlib.h>
#include <string.h>

/* The help text is laid out as it prints. */
/* clang-format off */
void fbl_usage(FILE *f)
{
    fprintf(f,
"NAME\n"
"    fbwire-link - a TCP relay that puts a network between a client and a server\n"
"\n"
"SYNOPSIS\n"
"    fbwire-link --listen ADDR:PORT --to ADDR:PORT [--rtt D] [--delay-up D] [--delay-down D]\n"
"                [--jitter D] [--rate R] [--rate-up R] [--rate-down R] [--burst SIZE]\n"
"                [--slice N] [--slice-up N] [--slice-down N] [--fault RULE]... [--seed N]\n"
"                [--fault-log FILE] [--json FILE] [--queue SIZE] [--max-conns N]\n"
"                [--spin auto|auto:D|D] [--quiet]\n"
"    fbwire-link --self-test [--self-rtt LIST] [--self-count N] [--tolerance PCT,US] [shaping]\n"
"\n"
"DESCRIPTION\n"
"    Accepts TCP connections on --listen, opens one to --to for each, and forwards every byte\n"
"    both ways, in order, for any protocol (TCP_NODELAY on both sides). Each chunk read is\n"
"    delivered whole at its own due time, so bytes written together arrive together and\n"
"    pipelined writes are not serialised. Ends cleanly on SIGTERM or SIGINT and prints its CPU\n"
"    time and per-connection byte and chunk counts to stderr (and --json FILE).\n"
"\n"
"    up is client to server, down is server to client. D is a duration (100us, 1ms, 0.5ms,\n"
"    2s; a bare number is ms), R a rate (9600bit, 64kbit, 100mbit, 1gbit; at most 10gbit),\n"
"    SIZE bytes (65536, 64k, 4m).\n"
"\n"
"OPTIONS\n"
"    --rtt D             round-trip delay, split evenly: D/2 each way\n"
"    --delay-up D, --delay-down D   one-way delay of one direction\n"
"    --jitter D          extra delay per chunk, uniform in [0, D], both ways; never reorders\n"
"                        (a chunk is never due before the one read before it)\n"
"    --rate R            bandwidth cap each way (token bucket); --rate-up, --rate-down\n"
"    --burst SIZE        bucket depth: bytes an idle link sends at once (default 0: a wire)\n"
"    --slice N           write at most N bytes at a time each way (1: every byte its own\n"
"                        segment); --slice-up, --slice-down for one direction\n"
"    --fault RULE        a fault schedule rule (repeatable, at most %d), words in any order:\n"
"                          conn=N  after=client-writes:K | server-writes:K | client-bytes:N |\n"
"                          server-bytes:N | prob=P   dir=up|down|both\n"
"                          reset | shutdown | stall=D | stall=hold  (hold: until SIGUSR1)\n"
"                        e.g. 'conn=3 after=client-writes:40 reset', 'prob=0.01 reset',\n"
"                        'after=server-bytes:100 stall=200ms', 'after=client-bytes:0 shutdown'\n"
"    --seed N            seed of jitter and prob= draws (default 1): runs repeat exactly\n"
"    --fault-log FILE    one JSON object per line for every fault injected\n"
"    --json FILE         the exit summary as JSON\n"
"    --queue SIZE        bytes held per direction before that side is no longer read\n"
"                        (backpressure; default 4m)\n"
"    --spin auto|auto:D|D  wake before each due time and poll through the rest, so a chunk\n"
"                        leaves on time even where the timer wakes the relay late: `auto`\n"
"                        (the default) learns how early from the timer's recent lateness, at\n"
"                        most D (default 100us); D alone always wakes D early; 0 never polls.\n"
"                        At most 1ms; the polling costs CPU, reported in the summary\n"
"    --max-conns N       concurrent connections (default 4096; raises the open-file limit)\n"
"    --quiet             no per-connection lines in the exit summary on stderr\n"
"    --self-test         measure the link: ping-pong over loopback through a link at each\n"
"                        --self-rtt (default 0.1,1,5,50 ms), timed by ends that are awake\n"
"                        when the bytes are due; prints median and p99 RTT against the asked\n"
"                        one, the link's CPU per chunk and lateness, and the median seen by\n"
"                        ends that sleep while they wait; exit 1 when the smaller of the two\n"
"                        medians is off by more than --tolerance (default 5,30: 5%% + 30 us)\n"
"    --self-count N      pings per RTT (default: about one second's worth, 20 .. 2000)\n"
"                        (with --json FILE: the figures as JSON)\n"
"    -h, --help          this text\n"
"\n"
"SIGNALS\n"
"    SIGTERM, SIGINT     close every connection, print the summary, exit 0\n"
"    SIGUSR1             release every stalled direction\n"
"\n"
"EXIT STATUS\n"
"    0 after a signal (or a passing self-test), 1 on a failed self-test, 2 on bad usage or\n"
"    a setup error.\n",
            FBL_MAX_RULES);
}
/* clang-format on */

static int bad(const char *opt, const char *val, const char *what)
{
    fprintf(stderr, "fbwire-link: %s \"%s\": %s\n", opt, val, what);
    return -1;
}

/* "0.1,1,5,50" (ms, or with units) into o->self_rtt. */
static int parse_rtt_list(fbl_opts *o, const char *v)
{
    char buf[256];
    if (strlen(v) >= sizeof buf)
        return -1;
    strcpy(buf, v);
    o->self_n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->self_n == (int)(sizeof o->self_rtt / sizeof o->self_rtt[0]) ||
            fbl_parse_duration(t, &o->self_rtt[o->self_n]))
            return -1;
        o->self_n++;
    }
    return o->self_n ? 0 : -1;
}

static int parse_tolerance(fbl_opts *o, const char *v)
{
    const char *p = v;
    uint64_t pct_ppm, us_ns;
    if (fbl_parse_scaled(&p, 10000, &pct_ppm) || *p != ',')
        return -1;
    p++;
    if (fbl_parse_scaled(&p, 1000, &us_ns) || *p)
        return -1;
    o->tol_ppm = pct_ppm;
    o->tol_ns = us_ns;
    return 0;
}

static int parse_count(const char *v, uint64_t max, uint64_t *out)
{
    const char *p = v;
    return fbl_parse_scaled(&p, 1, out) || *p || strchr(v, '.') || *out < 1 || *out > max ? -1 : 0;
}

/* Options that set both directions or one: "--rate" / "--rate-up" / "--rate-down". */
static int which_dirs(const char *opt, const char *base, int *lo, int *hi)
{
    size_t n = strlen(base);
    if (strncmp(opt, base, n))
        return 0;
    if (!opt[n])
        *lo = 0, *hi = 1;
    else if (!strcmp(opt + n, "-up"))
        *lo = *hi = FBL_UP;
    else if (!strcmp(opt + n, "-down"))
        *lo = *hi = FBL_DOWN;
    else
        return 0;
    return 1;
}

static int shaping_option(fbl_opts *o, const char *opt, const char *v)
{
    int lo, hi;
    uint64_t x;
    if (!strcmp(opt, "--rtt")) {
        if (fbl_parse_duration(v, &x))
            return bad(opt, v, "not a duration");
        o->line[FBL_UP].delay_ns = x / 2;
        o->line[FBL_DOWN].delay_ns = x - x / 2;
    } else if (!strcmp(opt, "--delay-up") || !strcmp(opt, "--delay-down")) {
        if (fbl_parse_duration(v, &x))
            return bad(opt, v, "not a duration");
        o->line[opt[8] == 'u' ? FBL_UP : FBL_DOWN].delay_ns = x;
    } else if (!strcmp(opt, "--jitter")) {
        if (fbl_parse_duration(v, &x))
            return bad(opt, v, "not a duration");
        o->line[0].jitter_ns = o->line[1].jitter_ns = x;
    } else if (which_dirs(opt, "--rate", &lo, &hi)) {
        if (fbl_parse_rate(v, &x))
            return bad(opt, v, "not a rate (e.g. 100mbit; 1bit .. 10gbit)");
        for (int d = lo; d <= hi; d++)
            o->line[d].rate_bps = x;
    } else if (!strcmp(opt, "--burst")) {
        if (fbl_parse_size(v, &x) || x > (1u << 30))
            return bad(opt, v, "not a size (at most 1g)");
        o->line[0].burst_bytes = o->line[1].burst_bytes = x;
    } else if (which_dirs(opt, "--slice", &lo, &hi)) {
        if (parse_count(v, 1u << 30, &x))
            return bad(opt, v, "not a byte count >= 1");
        for (int d = lo; d <= hi; d++)
            o->line[d].slice = (size_t)x;
    } else {
        return 1;
    }
    return 0;
}

static int other_option(fbl_opts *o, const char *opt, const char *v)
{
    uint64_t x;
    char err[160];
    if (!strcmp(opt, "--listen")) {
        o->listen = v;
    } else if (!strcmp(opt, "--to")) {
        o->to = v;
    } else if (!strcmp(opt, "--fault")) {
        if (o->sched.n == FBL_MAX_RULES)
            return bad(opt, v, "too many rules");
        if (fbl_rule_parse(v, &o->sched.rule[o->sched.n], err, sizeof err))
            return bad(opt, v, err);
        o->sched.n++;
    } else if (!strcmp(opt, "--seed")) {
        const char *p = v;
        if (fbl_parse_scaled(&p, 1, &o->seed) || *p)
            return bad(opt, v, "not a number");
    } else if (!strcmp(opt, "--fault-log")) {
        o->fault_log = v;
    } else if (!strcmp(opt, "--json")) {
        o->json = v;
    } else if (!strcmp(opt, "--spin")) {
        o->spin_auto = !strncmp(v, "auto", 4);
        if (o->spin_auto && !v[4])
            o->spin_ns = FBL_LEAD_AUTO_MAX_NS;
        else if (fbl_parse_duration(o->spin_auto ? v + 4 + (v[4] == ':') : v, &o->spin_ns) ||
                 (o->spin_auto && v[4] != ':') || o->spin_ns > 1000000)
            return bad(opt, v, "not auto, auto:D or a duration D of at most 1ms");
    } else if (!strcmp(opt, "--queue")) {
        if (fbl_parse_size(v, &o->queue_max) || o->queue_max < 1)
            return bad(opt, v, "not a size");
    } else if (!strcmp(opt, "--max-conns")) {
        if (parse_count(v, 1000000, &x))
            return bad(opt, v, "not a count (1 .. 1000000)");
        o->max_conns = (int)x;
    } else if (!strcmp(opt, "--self-rtt")) {
        if (parse_rtt_list(o, v))
            return bad(opt, v, "not a list of at most 8 durations");
    } else if (!strcmp(opt, "--self-count")) {
        if (parse_count(v, 1000000, &x))
            return bad(opt, v, "not a count");
        o->self_count = (int)x;
    } else if (!strcmp(opt, "--tolerance")) {
        if (parse_tolerance(o, v))
            return bad(opt, v, "not PCT,US (e.g. 5,30)");
    } else {
        fprintf(stderr, "fbwire-link: unknown option %s (see --help)\n", opt);
        return -1;
    }
    return 0;
}

int fbl_opts_parse(fbl_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->queue_max = 4u << 20;
    o->seed = 1;
    o->max_conns = 4096;
    o->spin_auto = 1;
    o->spin_ns = FBL_LEAD_AUTO_MAX_NS;
    o->tol_ppm = 50000;
    o->tol_ns = 30000;
    static const uint64_t rtts[] = {100000, 1000000, 5000000, 50000000};
    memcpy(o->self_rtt, rtts, sizeof rtts);
    o->self_n = 4;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
            fbl_usage(stdout);
            return 1;
        }
        if (!strcmp(opt, "--self-test") || !strcmp(opt, "--quiet")) {
            *(opt[2] == 's' ? &o->self_test : &o->quiet) = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "fbwire-link: %s needs a value (see --help)\n", opt);
            return -1;
        }
        const char *v = argv[++i];
        int rc = shaping_option(o, opt, v);
        if (rc > 0)
            rc = other_option(o, opt, v);
        if (rc)
            return -1;
    }
    if (!o->self_test && (!o->listen || !o->to)) {
        fprintf(stderr,
                "fbwire-link: --listen ADDR:PORT and --to ADDR:PORT are needed (see --help)\n");
        return -1;
    }
    return 0;
}
