/* SPDX-License-Identifier: MIT */
/* fpstats.h - replay latency per statement fingerprint: SQL normalised (literals to ?, comments
 * dropped, whitespace folded) so executions of one statement with other values group together,
 * and per group the count, capture and replay latency percentiles, their ratio, round trips per
 * execution and result matches, printed as text or JSON. Pure: no I/O, no clock. */
#ifndef PCAPTOOL_FPSTATS_H
#define PCAPTOOL_FPSTATS_H

#include "buf.h"

#include <jansson.h>

#include <stddef.h>
#include <stdint.h>

/* Append the fingerprint of sql[0..n) to out: string literals ('...', with '' inside) and numbers
 * not part of a name become ?, -- and block comments go, runs of whitespace become one space,
 * quoted names ("...") stay as written. */
void pcaptool_fingerprint(const char *sql, size_t n, fbw_buf *out);

typedef struct pcaptool_fpstats pcaptool_fpstats;

enum { PCAPTOOL_FP_NOT_COMPARED = -1, PCAPTOOL_FP_DIFFERENT = 0, PCAPTOOL_FP_MATCH = 1 };

/* One execution. replayed: the replay ran it without failure (else only the capture side
 * counts). result: PCAPTOOL_FP_*. Returns -1 when out of memory. */
typedef struct pcaptool_fp_exec {
    uint64_t capture_ns, replay_ns;
    uint32_t capture_rt, replay_rt;
    int replayed;
    int result;
} pcaptool_fp_exec;

pcaptool_fpstats *pcaptool_fpstats_new(void);
int pcaptool_fpstats_add(pcaptool_fpstats *f, const char *key, size_t len,
                         const pcaptool_fp_exec *e);
/* The table, slowest first (replay time in total, else capture time); at most `limit` rows
 * (0: all) and a line saying how many were left out. */
/* The workload came from a trace (no round trips): the capture's round trips are shown as
 * unknown ("-", null), never as 0. */
void pcaptool_fpstats_no_capture_rt(pcaptool_fpstats *f);
void pcaptool_fpstats_text(pcaptool_fpstats *f, fbw_buf *b, size_t limit);
/* A JSON array of every group, slowest first (docs/fbwire-pcap-replay.schema.json): a new
 * reference, NULL when out of memory. */
json_t *pcaptool_fpstats_json(pcaptool_fpstats *f);
size_t pcaptool_fpstats_count(const pcaptool_fpstats *f);
void pcaptool_fpstats_free(pcaptool_fpstats *f);

#endif
