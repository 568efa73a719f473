/* SPDX-License-Identifier: MIT */
/* stream.h - the reader of the streaming replay: a thread that decodes the capture a second time,
 * in file order (capture.c, tcp.c, report.c and the session decoder, frame by frame), rebuilds
 * each replayed connection's workload in a window (workload.c keeps only steps that may still
 * change) and hands every final step to the bounded queue (stepq.h) of each replay of that
 * connection: memory is bounded by the open connections, not by the file. The first pass
 * (main.c's run) already validated every connection; this one streams only the valid ones. */
#ifndef PCAPTOOL_STREAM_H
#define PCAPTOOL_STREAM_H

#include "pcaptool.h"
#include "stepq.h"
#include "workload.h"

#include <pthread.h>
#include <stdatomic.h>

/* One replayed captured connection, as the reader feeds it. */
typedef struct pcaptool_stream_src {
    pcaptool_workload w; /* the window; freed when the connection ends, but for not_replayed */
    uint64_t packets;    /* decoded packets the first pass counted: the last one ends it */
    uint64_t seen;       /* decoded so far */
    uint64_t t_detach;   /* given to the queues with their end */
    pcaptool_stepq **q;  /* its replays' queues: the captured one, then fan-out copies; none:
                          * not replayed, its steps are only counted */
    size_t nq;
    uint64_t kinds[PCAPTOOL_STEP_KINDS]; /* steps handed on, by kind */
    int ended;
} pcaptool_stream_src;

typedef struct pcaptool_stream {
    const char *file;
    const pcaptool_keys *keys;
    const uint16_t *ports;
    size_t nports;
    int explicit_ports;
    pcaptool_stream_src **src; /* by connection id - 1; NULL: not replayed */
    size_t n;
    pcaptool_stepq **all; /* every queue (for the deadlock check) */
    size_t nall;
    /* results */
    pthread_t thread;
    int status;           /* FBW_OK, or why the reader stopped */
    atomic_int nomem;
    uint64_t forced;      /* pushes past a queue's limit to avoid a deadlock */
    uint64_t max_window;  /* most steps a connection's window held */
} pcaptool_stream;

/* Queue limits and the window of one connection (documented in docs/fbwire-pcap.md). */
#define PCAPTOOL_STREAM_QUEUE_STEPS 256
#define PCAPTOOL_STREAM_QUEUE_BYTES (4u << 20)
#define PCAPTOOL_STREAM_WINDOW 4096

int pcaptool_stream_start(pcaptool_stream *st);
/* Waits for the reader to finish; every queue is closed by then. */
void pcaptool_stream_join(pcaptool_stream *st);

#endif
