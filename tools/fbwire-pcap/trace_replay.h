/* SPDX-License-Identifier: MIT */
/* trace_replay.h - `fbwire-pcap replay --trace FILE [--trace-db PATH]`: a Firebird trace's
 * workload listed or replayed (trace_replay.c). */
#ifndef PCAPTOOL_TRACE_REPLAY_H
#define PCAPTOOL_TRACE_REPLAY_H

#include "replay.h"

/* Read, parse, build and run; database: only its attachments (NULL all). The exit status: 0 all
 * parsed and replayed, 1 something was not, 2 the file could not be read. */
int pcaptool_trace_replay_file(const char *path, const char *database,
                               const pcaptool_replay_opts *po);

#endif
