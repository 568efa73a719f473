/* SPDX-License-Identifier: MIT */
/* replay.h - `fbwire-pcap replay`: rebuild each captured connection's SQL workload (workload.h)
 * and either list it (--list, offline) or run it as a load: every connection at once on its own
 * thread and fbwire blocking client, each from its offset in the capture and keeping the client's
 * think time (--pace, --speed), fanned out over --connections. Then print the failures, the
 * result differences (rows and affected rows of each execution against the capture's replies),
 * latency per statement fingerprint (capture vs replay), and the capture's round trips, packets
 * and bytes (the figures `stats` prints) next to the replay's.
 *
 * --list: the capture is decoded once by report.c in quiet mode; its tap hands every packet to the
 * workload of its connection. A replay decodes it twice: first to validate every connection (a
 * connection that cannot be decoded to its end is not replayed at all) and take the times pacing
 * needs, keeping only counters; then streamed (stream.h): a reader thread decodes it again and
 * hands each connection's final steps through bounded queues to the replay threads. */
#ifndef PCAPTOOL_REPLAY_H
#define PCAPTOOL_REPLAY_H

#include "pcaptool.h"

/* --row-format captured: each execution asks for rows in the format the captured client asked for
 * (its fetch BLR), so results compare like with like; otherwise the library's compact or described
 * formats (wire/msg.h). */
enum { PCAPTOOL_REPLAY_ROWS_CAPTURED = -1 };
/* --inline-blob-size captured: each execution asks the target for the inline blobs (protocol 19)
 * its captured op_execute asked for: none from a client below protocol 19 or one that asked for
 * none, so the replay receives inline exactly the blobs the captured client did and reads the
 * others as it read them. A number asks every execution for that size instead. */
enum { PCAPTOOL_REPLAY_INLINE_CAPTURED = -1 };

typedef struct pcaptool_replay_opts {
    const char *dsn;      /* --db; NULL only with list */
    const char *user;     /* NULL: ISC_USER */
    const char *password; /* NULL: ISC_PASSWORD; never printed */
    int wire_crypt;       /* enum fbw_wire_crypt for the replay's connections */
    int connection;       /* only this connection (1-based), 0 all */
    int list;             /* print the workload, connect nowhere */
    int json;
    int pace_none;        /* --pace none: no offsets, no think time */
    double speed;         /* --speed: offsets and think times divided by it (1 default) */
    int connections;      /* --connections N (0: one per captured connection) */
    int results_ignore;   /* --results ignore */
    int row_format;       /* --row-format: PCAPTOOL_REPLAY_ROWS_CAPTURED (default) or FBW_ROW_FORMAT_* */
    int32_t inline_blob_size; /* --inline-blob-size: PCAPTOOL_REPLAY_INLINE_CAPTURED (default) or N */
    int progress;         /* --progress (also when stderr is a terminal) */
    FILE *out;
    /* the capture again, for the streaming reader (stream.h) */
    const char *file;
    const pcaptool_keys *keys;
    const uint16_t *ports;
    size_t nports;
    int explicit_ports;
} pcaptool_replay_opts;

typedef struct pcaptool_replay pcaptool_replay;

int pcaptool_replay_new(const pcaptool_replay_opts *o, pcaptool_replay **out);
void pcaptool_replay_free(pcaptool_replay *rp);
/* The report tap (pcaptool_report_opts.tap, tap_arg = rp). */
void pcaptool_replay_tap(void *arg, int conn_id, const struct fbw_dec *d, int from_client,
                         const struct fbw_pkt *p, uint64_t ts_ns);
/* The capture file and how main.c decoded it, for the streaming pass. */
void pcaptool_replay_source(pcaptool_replay *rp, const char *file, const pcaptool_keys *keys,
                            const uint16_t *ports, size_t nports, int explicit_ports);
/* After the report finished: list or replay, print, and return the exit status (0 every step
 * replayed and everything decoded, 1 otherwise). */
int pcaptool_replay_finish(pcaptool_replay *rp, const pcaptool_report *r,
                           const pcaptool_cap_summary *sum);

/* `replay --trace`: run the workload of a Firebird trace (trace_workload.h) instead of a capture's:
 * every traced attachment a connection, its steps queued at once (they are taken from tw, which
 * keeps only their count); then the same report, each connection named by its attachment.
 * Returns the exit status, as pcaptool_replay_finish. */
struct pcaptool_trace_workload;
int pcaptool_replay_trace(pcaptool_replay *rp, struct pcaptool_trace_workload *tw);

#endif
