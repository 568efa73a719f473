/* SPDX-License-Identifier: MIT */
/* trace_replay.c - `fbwire-pcap replay --trace FILE`: read a Firebird trace's text (fbtracemgr's
 * output, or what `trace-record` wrote), parse it (trace.h), build its workload
 * (trace_workload.h) and list or replay it (replay.h). The one place that does I/O for a trace. */
#include "trace_replay.h"

#include "replay.h"
#include "trace.h"
#include "trace_workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file (a trace is text of a bounded session), NUL-terminated. */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fbwire-pcap: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t k = fread(buf + n, 1, cap - n - 1, f);
        n += k;
        if (n + 1 < cap)
            break;
        char *b = realloc(buf, cap * 2);
        if (!b) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (!buf || err) {
        fprintf(stderr, "fbwire-pcap: %s: %s\n", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

static void print_skips(const pcaptool_trace_workload *w)
{
    const pcaptool_trace_skips *k = &w->skipped;
    fprintf(stderr,
            "fbwire-pcap: trace: %zu attachments; events left out: %llu of other databases, %llu "
            "of the engine's own attachments, %llu in the system transaction, %llu refused by "
            "the server, %llu transaction statements (replayed as their transaction events), "
            "%llu not about the workload, %llu ends of transactions begun before the trace\n",
            w->n, (unsigned long long)k->other_db, (unsigned long long)k->internal,
            (unsigned long long)k->system_tx, (unsigned long long)k->failed,
            (unsigned long long)k->tx_statements, (unsigned long long)k->not_workload,
            (unsigned long long)k->orphans);
}

int pcaptool_trace_replay_file(const char *path, const char *database,
                               const pcaptool_replay_opts *po)
{
    size_t len, used;
    char *text = read_all(path, &len);
    if (!text)
        return 2;
    pcaptool_trace t;
    pcaptool_trace_init(&t);
    int status = 0;
    if (pcaptool_trace_feed(&t, text, len, 1, &used) != FBW_OK) {
        /* what was read before the damage is still a workload; the exit status says it */
        fprintf(stderr, "fbwire-pcap: %s: %s (%zu events before it are replayed)\n", path, t.err,
                t.n);
        status = 1;
    }
    free(text);
    pcaptool_trace_workload w;
    if (pcaptool_trace_workload_build(&t, database, &w) != FBW_OK) {
        fprintf(stderr, "fbwire-pcap: %s: %s\n", path, w.err);
        pcaptool_trace_workload_free(&w);
        pcaptool_trace_free(&t);
        return 1;
    }
    pcaptool_trace_free(&t);
    if (!po->json)
        print_skips(&w);
    pcaptool_replay *rp = NULL;
    if (pcaptool_replay_new(po, &rp) != FBW_OK) {
        fprintf(stderr, "fbwire-pcap: out of memory\n");
        pcaptool_trace_workload_free(&w);
        return 2;
    }
    status |= pcaptool_replay_trace(rp, &w);
    pcaptool_replay_free(rp);
    pcaptool_trace_workload_free(&w);
    return status;
}
