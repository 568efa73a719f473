/* SPDX-License-Identifier: MIT */
/* replay_threads.h - every replayed connection at once: a thread per job (replay_conn.h), the
 * streaming reader (stream.h) feeding their queues, a progress line on stderr. An event loop
 * would need the same per-connection state machine plus timers, for no gain at the tens to
 * hundreds of connections a capture holds. */
#ifndef PCAPTOOL_REPLAY_THREADS_H
#define PCAPTOOL_REPLAY_THREADS_H

#include "replay_conn.h"
#include "stream.h"

/* Start a thread per job of sh and the reader st, wait for all of them, and return the replay's
 * wall time in ns (sh->start_ns is when it began). A job whose thread cannot start is marked not
 * run and its queue abandoned; a reader that cannot start or fails sets sh->nomem. st NULL: the
 * queues hold every step already (a trace's workload, replay.c). progress: print the progress
 * line every second. */
uint64_t rp_threads_run(rp_shared *sh, pcaptool_stream *st, int progress);

#endif
