/* SPDX-License-Identifier: MIT */
/* trace_record.h - `fbwire-pcap trace-record`: record a live server's workload through Firebird's
 * trace API (the services API, wire/svcclient.h), encrypted or not: start a user trace session
 * whose configuration logs attachments, transactions and every statement's prepare, start (with
 * its parameters), finish (rows fetched, time), close and free; write its text as it comes to a
 * file that `fbwire-pcap replay --trace` runs as a load; stop after --time seconds or on Ctrl-C
 * (SIGINT/SIGTERM) by isc_action_svc_trace_stop from a second service attachment, then read the
 * session's output to its end. The text is parsed as it arrives (trace.h), so a recording that
 * the replay could not read fails here. */
#ifndef PCAPTOOL_TRACE_RECORD_H
#define PCAPTOOL_TRACE_RECORD_H

#include <stddef.h>

/* argv[0] is "trace-record". Returns the exit status: 0 recorded and parsed, 1 the trace's text
 * did not parse or the session could not be stopped cleanly, 2 usage or no connection. */
int pcaptool_trace_record_main(int argc, char **argv);

/* The trace configuration for the database named path (its file name is matched in any
 * directory): into out (cap bytes). 0, or -1 when it does not fit or the name holds a character
 * the configuration's pattern would treat as special. */
int pcaptool_trace_config(const char *path, char *out, size_t cap);

#endif
