/* SPDX-License-Identifier: MIT */
/* reporttool.h - fbwire-report: compare sysbench wire statistics runs side by side.
 *
 * Loads the JSON written by the sysbench drivers (--<driver>-report=FILE, docs/report.md) and
 * `fbwire-pcap stats --json` output, and renders a Markdown table (runs as columns, ratios to a
 * baseline run) and an SVG chart (round trips per event by statement class, grouped by run, and
 * throughput per run). Reading is done with jansson; rendering is plain text. */
#ifndef REPORTTOOL_H
#define REPORTTOOL_H

#include <stdio.h>

#define RT_MAX_CLASSES 17
#define RT_MAX_OPS 128

typedef struct rt_class {
    char id[24], label[32];
    double executions, round_trips, packets, bytes, wait_mean_ms, wait_p95_ms;
} rt_class;

typedef struct rt_op {
    char name[40];
    double packets_sent, packets_received, bytes_sent, bytes_received;
} rt_op;

typedef struct rt_run {
    char file[256];
    int is_capture;             /* fbwire-pcap stats: no events, no classes */
    char driver[16], autocommit[16], server[64], script[64], auth[32];
    int protocol, threads;
    double tps, qps, events, duration_s, rt_per_event, rt_per_transaction, rt_per_second,
        wait_share, round_trips;
    int has_cpu;                /* the file has client CPU figures (older ones do not) */
    int has_rte;                /* round trips per event known (null: nothing was measured) */
    int has_rtt;                /* round trips per transaction known (null when counted at the
                                   socket: an encrypted fbclient session) */
    double cpu_us_per_event, cpu_us_per_execution;
    char pipeline[16];          /* "" in files from before --<driver>-pipeline */
    double stmts_per_rt;        /* 0 when the file has none */
    int has_server_cpu;         /* the server's CPU was measured (server_cpu.available) */
    double server_us_per_event, server_us_per_execution;
    rt_class cls[RT_MAX_CLASSES];
    int ncls;
    rt_op ops[RT_MAX_OPS];
    int nops;
} rt_run;

/* Load one file; returns 0, or -1 after printing why to stderr. */
int rt_load(const char *path, rt_run *out);
/* A short name for a run ("fbwire pipelined"). */
void rt_run_name(const rt_run *r, char *buf, size_t cap);
/* Markdown comparison; baseline is an index into runs. */
void rt_markdown(FILE *f, const rt_run *runs, int n, int baseline);
/* SVG chart. */
void rt_svg(FILE *f, const rt_run *runs, int n, int baseline);
/* The chart palette (cycles), XML-escaped text, the SVG document start (header, the shared
 * style classes, a white background; end it with "</svg>") and a round axis step for values up
 * to v: the SVG writer compare.c and replay.c share with rt_svg. */
const char *rt_color(int i);
void rt_xml_text(FILE *f, const char *s);
void rt_svg_begin(FILE *f, int width, int height);
double rt_nice_step(double v);

/* replay.c: horizontal bars of the top slowest statement fingerprints of an `fbwire-pcap replay
 * --json` output (docs/fbwire-pcap-replay.schema.json, load.statements, in its order: replay
 * time in total): capture p50 and p95 against replay p50 and p95, in ms. Returns 0, or -1 after
 * printing why to stderr. */
int rt_replay_svg(FILE *f, const char *replay_json, int top);

/* compare.c: one chart of a tools/fbwire-compare summary.json (docs/compare.md) at one thread
 * count, workloads as groups and targets as bars: metric "tps" (median, whisker min-max), "cpu"
 * (client + server CPU per event, stacked) or "rt" (round trips per event). Log scale: the
 * workloads differ by orders of magnitude. Returns 0, or -1 after printing why to stderr. */
int rt_compare_svg(FILE *f, const char *summary_path, const char *metric, int threads);

#endif
