/* SPDX-License-Identifier: MIT */
/* stats.h - round-trip accounting, built into every connection from the first packet.
 *
 * Input is events only: a packet of op X and N bytes went one way; the client is about to wait; the
 * wait took T ns. The live client (client.c) and the capture tool feed the same events, so both count
 * alike. A round trip is counted each time the client waits for the server after having sent something
 * since its last wait. Bytes per op are XDR bytes (before compression/encryption); wire totals are
 * counted separately. No I/O, no clock, no allocation. */
#ifndef FBW_STATS_H
#define FBW_STATS_H

#include "ops.h"

#include <stdint.h>

typedef struct fbw_op_stats {
    uint64_t packets_sent, packets_received;
    uint64_t bytes_sent, bytes_received;
} fbw_op_stats;

typedef struct fbw_stats {
    fbw_op_stats op[FBW_OP_MAX + 1];
    uint64_t packets_sent, packets_received; /* all ops */
    uint64_t bytes_sent, bytes_received;     /* XDR bytes, all ops */
    uint64_t wire_bytes_sent, wire_bytes_received; /* after compression and encryption */
    uint64_t wire_chunks_sent, wire_chunks_received; /* fbw_stats_turn only: socket calls (tap)
                                                        or capture segments that carried bytes */
    uint64_t round_trips;
    uint64_t waits;          /* waits in total, including ones with nothing sent (e.g. more rows) */
    uint64_t wait_ns;        /* time spent waiting for the server */
    int sent_since_wait;     /* internal: something was sent since the last wait */
} fbw_stats;

FBW_API void fbw_stats_reset(fbw_stats *s);
/* A packet of `op` and `bytes` XDR bytes went client->server (sent=1) or server->client (sent=0). */
FBW_API void fbw_stats_packet(fbw_stats *s, int32_t op, int sent, uint64_t bytes);
/* Bytes handed to / taken from the network after filters. */
FBW_API void fbw_stats_wire(fbw_stats *s, int sent, uint64_t bytes);
/* The client starts waiting for the server: counts a round trip if it sent anything since the last
 * wait. Returns 1 when this wait is a new round trip. */
FBW_API int fbw_stats_wait_begin(fbw_stats *s);
/* The wait ended after ns nanoseconds (may be called several times per wait). */
FBW_API void fbw_stats_wait_time(fbw_stats *s, uint64_t ns);
/* The turnaround rule for a byte stream watched from outside (capture, socket tap), where no wait
 * is seen: a round trip when the server's bytes follow client bytes, the wait from the last
 * client bytes to the first server bytes after them. Also counts wire bytes and chunks. It needs
 * no decoded packet, so it goes on counting over ciphertext. */
typedef struct fbw_turn {
    uint64_t last_client_ts;
    int last_from_client;
} fbw_turn;
FBW_API void fbw_stats_turn(fbw_stats *s, fbw_turn *t, int from_client, uint64_t bytes, uint64_t ts_ns);
/* a += b (for totals across connections and statement classes). */
FBW_API void fbw_stats_add(fbw_stats *a, const fbw_stats *b);
/* d = a - b, for the cost of one operation measured as before/after snapshots. */
FBW_API void fbw_stats_diff(fbw_stats *d, const fbw_stats *a, const fbw_stats *b);

#endif
