/* SPDX-License-Identifier: MIT */
/* stream.h - the reader of the streaming replay: a thread that decodes the capture a second time,
 * in file order (capture.c, tcp.c, report.c and the session decoder, frame by frame), rebuilds
 * each replayed connection's workload in a window (workload.c keeps only steps that may still
 * change) and hands every final step to the bounded queue (stepq.h) of each replay of that
 * connection: memory is bounded by the open connections, not by the file. The first pass
 * (main.c's run) already validated every connection; this one streams only the valid ones. */
#ifndef FBW_PCAP_STREAM_H
#define FBW_PCAP_STREAM_H

#include "pcaptool.h"
#include "stepq.h"
#include "workload.h"

#include <pthread.h>
#include <stdatomic.h>

/* One replayed captured connection, as the reader feeds it. */
typedef struct fbw_stream_src {
    fbw_workload w;      /* the window; freed when the connection ends, but for not_replayed */
    uint64_t packets;    /* decoded packets the first pass counted: the last one ends it */
    uint64_t seen;       /* decoded so far */
    uint64_t t_detach;   /* given to the queues with their end */
    fbw_stepq **q;       /* its replays' queues: the captured one, then fan-out copies; none:
                          * not replayed, its steps are only counted */
    size_t nq;
    uint64_t kinds[FBW_STEP_KINDS]; /* steps handed on, by kind */
    int ended;
} fbw_stream_src;

typedef struct fbw_stream {
    const char *file;
    const fbw_pcap_keys *keys;
    const uint16_t *ports;
    size_t nports;
    int explicit_ports;
    fbw_stream_src **src; /* by connection id - 1; NULL: not replayed */
    size_t n;
    fbw_stepq **all;      /* every queue (for the deadlock check) */
    size_t nall;
    /* results */
    pthread_t thread;
    int status;           /* FBW_OK, or why the reader stopped */
    atomic_int nomem;
    uint64_t forced;      /* pushes past a queue's limit to avoid a deadlock */
    uint64_t max_window;  /* most steps a connection's window held */
} fbw_stream;

/* Queue limits and the window of one connection (documented in docs/fbwire-pcap.md). */
#define FBW_STREAM_QUEUE_STEPS 256
#define FBW_STREAM_QUEUE_BYTES (4u << 20)
#define FBW_STREAM_WINDOW 4096

int fbw_stream_start(fbw_stream *st);
/* Waits for the reader to finish; every queue is closed by then. */
void fbw_stream_join(fbw_stream *st);

#endif
