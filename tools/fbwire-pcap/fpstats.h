/* SPDX-License-Identifier: MIT */
/* fpstats.h - replay latency per statement fingerprint: SQL normalised (literals to ?, comments
 * dropped, whitespace folded) so executions of one statement with other values group together,
 * and per group the count, capture and replay latency percentiles, their ratio, round trips per
 * execution and result matches, printed as text or JSON. Pure: no I/O, no clock. */
#ifndef FBW_PCAP_FPSTATS_H
#define FBW_PCAP_FPSTATS_H

#include "buf.h"

#include <stddef.h>
#include <stdint.h>

/* Append the fingerprint of sql[0..n) to out: string literals ('...', with '' inside) and numbers
 * not part of a name become ?, -- and block comments go, runs of whitespace become one space,
 * quoted names ("...") stay as written. */
void fbw_fingerprint(const char *sql, size_t n, fbw_buf *out);

typedef struct fbw_fpstats fbw_fpstats;

enum { FBW_FP_NOT_COMPARED = -1, FBW_FP_DIFFERENT = 0, FBW_FP_MATCH = 1 };

/* One execution. replayed: the replay ran it without failure (else only the capture side
 * counts). result: FBW_FP_*. Returns -1 when out of memory. */
typedef struct fbw_fp_exec {
    uint64_t capture_ns, replay_ns;
    uint32_t capture_rt, replay_rt;
    int replayed;
    int result;
} fbw_fp_exec;

fbw_fpstats *fbw_fpstats_new(void);
int fbw_fpstats_add(fbw_fpstats *f, const char *key, size_t len, const fbw_fp_exec *e);
/* The table, slowest first (replay time in total, else capture time); at most `limit` rows
 * (0: all) and a line saying how many were left out. */
void fbw_fpstats_text(fbw_fpstats *f, fbw_buf *b, size_t limit);
/* A JSON array of every group, slowest first (docs/fbwire-pcap-replay.schema.json). */
void fbw_fpstats_json(fbw_fpstats *f, fbw_buf *b);
size_t fbw_fpstats_count(const fbw_fpstats *f);
void fbw_fpstats_free(fbw_fpstats *f);

#endif
