/* SPDX-License-Identifier: MIT */
/* fbwire-report - side-by-side comparison of sysbench wire statistics runs (see reporttool.h).
 * Exit status: 0 written, 1 a file could not be read or written, 2 usage. */
#include "reporttool.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 16

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fbwire-report RUN.json... [--svg FILE.svg] [--baseline N] [--output FILE.md]\n"
            "       fbwire-report --compare SUMMARY.json --metric tps|cpu|rt --threads N --svg FILE\n"
            "       fbwire-report --replay REPLAY.json [--top N] --svg FILE\n"
            "  RUN.json       written by the sysbench drivers (--fbwire-report=, --fbclient-report=)\n"
            "                 or by `fbwire-pcap stats --json` (totals only)\n"
            "  --svg FILE     also write a chart: round trips per event by statement class per run,\n"
            "                 and throughput per run\n"
            "  --baseline N   the run (1-based, in argument order) ratios refer to [1]\n"
            "  --output FILE  Markdown to FILE instead of standard output\n"
            "  --compare F    chart of a tools/fbwire-compare summary.json at --threads N: TPS per\n"
            "                 workload and target, CPU per event (client + server) or round trips\n"
            "                 per event (--metric)\n"
            "  --replay F     chart of `fbwire-pcap replay --json` output F: the --top N [10]\n"
            "                 slowest statement fingerprints, capture p50/p95 against replay\n"
            "                 p50/p95 (ms, log axis)\n");
}

/* Write one chart to svg with draw; the file is removed when drawing fails. */
static int write_chart(const char *svg, int (*draw)(FILE *, const void *), const void *arg)
{
    FILE *f = fopen(svg, "w");
    if (!f) {
        perror(svg);
        return 1;
    }
    int rc = draw(f, arg);
    if (fclose(f) != 0) {
        perror(svg);
        rc = -1;
    }
    if (rc)
        remove(svg);
    return rc ? 1 : 0;
}

typedef struct replay_arg {
    const char *path;
    int top;
} replay_arg;

static int draw_replay(FILE *f, const void *arg)
{
    const replay_arg *a = arg;
    return rt_replay_svg(f, a->path, a->top);
}

/* --replay: the slowest fingerprints of an fbwire-pcap replay. */
static int replay_chart(const char *path, long top, const char *svg, int no_runs)
{
    if (!svg || !no_runs) {
        fprintf(stderr, "fbwire-report: --replay takes --svg FILE, no RUN.json\n");
        return 2;
    }
    replay_arg a = {path, (int)top};
    return write_chart(svg, draw_replay, &a);
}

/* --compare: one chart of an fbwire-compare summary. */
static int compare_chart(const char *summary, const char *metric, int threads, const char *svg,
                         int no_runs)
{
    if (!svg || !threads || !no_runs) {
        fprintf(stderr, "fbwire-report: --compare takes --threads N and --svg FILE, no RUN.json\n");
        return 2;
    }
    FILE *f = fopen(svg, "w");
    if (!f) {
        perror(svg);
        return 1;
    }
    int rc = rt_compare_svg(f, summary, metric, threads);
    if (fclose(f) != 0) {
        perror(svg);
        rc = -1;
    }
    if (rc)
        remove(svg);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"svg", required_argument, 0, 's'},
                                             {"baseline", required_argument, 0, 'b'},
                                             {"output", required_argument, 0, 'o'},
                                             {"help", no_argument, 0, 'h'},
                                             {"compare", required_argument, 0, 'c'},
                                             {"metric", required_argument, 0, 'm'},
                                             {"threads", required_argument, 0, 't'},
                                             {"replay", required_argument, 0, 'r'},
                                             {"top", required_argument, 0, 'n'},
                                             {0, 0, 0, 0}};
    const char *svg = NULL, *out = NULL, *compare = NULL, *metric = "tps", *replay = NULL;
    long baseline = 1, threads = 0, top = 10;
    int c;
    while ((c = getopt_long(argc, argv, "s:b:o:hc:m:t:r:n:", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 's': svg = optarg; break;
        case 'o': out = optarg; break;
        case 'b':
            baseline = strtol(optarg, &end, 10);
            if (*end || baseline < 1) {
                fprintf(stderr, "fbwire-report: --baseline takes a run number from 1\n");
                return 2;
            }
            break;
        case 'c': compare = optarg; break;
        case 'm': metric = optarg; break;
        case 't':
            threads = strtol(optarg, &end, 10);
            if (*end || threads < 1) {
                fprintf(stderr, "fbwire-report: --threads takes a thread count from 1\n");
                return 2;
            }
            break;
        case 'r': replay = optarg; break;
        case 'n':
            top = strtol(optarg, &end, 10);
            if (*end || top < 1 || top > 100) {
                fprintf(stderr, "fbwire-report: --top takes a number of fingerprints, 1 to 100\n");
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (replay)
        return replay_chart(replay, top, svg, optind == argc);
    if (compare)
        return compare_chart(compare, metric, (int)threads, svg, optind == argc);
    int n = argc - optind;
    if (n < 1 || n > MAX_RUNS || baseline > n) {
        if (n > MAX_RUNS)
            fprintf(stderr, "fbwire-report: at most %d runs\n", MAX_RUNS);
        else if (n >= 1)
            fprintf(stderr, "fbwire-report: --baseline %ld but only %d run%s\n", baseline, n, n == 1 ? "" : "s");
        usage(stderr);
        return 2;
    }
    rt_run *runs = calloc((size_t)n, sizeof *runs);
    int rc = runs ? 0 : 1;
    for (int i = 0; rc == 0 && i < n; i++)
        if (rt_load(argv[optind + i], &runs[i]) != 0)
            rc = 1;
    FILE *md = rc == 0 ? (out ? fopen(out, "w") : stdout) : NULL;
    if (rc == 0 && !md) {
        perror(out);
        rc = 1;
    }
    if (rc == 0) {
        rt_markdown(md, runs, n, (int)baseline - 1);
        if (md != stdout && fclose(md) != 0) {
            perror(out);
            rc = 1;
        }
    }
    if (rc == 0 && svg) {
        FILE *f = fopen(svg, "w");
        if (f) {
            rt_svg(f, runs, n, (int)baseline - 1);
            if (fclose(f) != 0)
                f = NULL;
        }
        if (!f) {
            perror(svg);
            rc = 1;
        }
    }
    free(runs);
    return rc;
}
