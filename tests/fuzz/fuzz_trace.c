/* SPDX-License-Identifier: MIT */
/* fuzz_trace.c - libFuzzer target for fbwire-pcap's Firebird trace parser (tools/fbwire-pcap/
 * trace.c) and the workload built from what it parsed (trace_workload.c): the text a trace
 * session writes, which `replay --trace` and `trace-record` read. The first byte sets the size of
 * the pieces the text is also fed in (a live session hands it out in chunks); the rest is the
 * text. Invariants (abort() when broken): every call consumes at most what it was given; fed in
 * pieces, the text gives the same events and the same verdict as fed whole; the workload of what
 * was parsed builds or fails cleanly. ASan/UBSan catch the rest. */
#include "trace.h"
#include "trace_workload.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t piece = 1 + data[0] % 64;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;

    pcaptool_trace whole;
    pcaptool_trace_init(&whole);
    size_t used = 0;
    int rc = pcaptool_trace_feed(&whole, text, len, 1, &used);
    if (used > len || (rc == FBW_OK && used != len) || (rc != FBW_OK && !whole.err[0]))
        abort();

    pcaptool_trace parts;
    pcaptool_trace_init(&parts);
    size_t at = 0, end = 0;
    int prc = FBW_OK;
    while (prc == FBW_OK && end < len) {
        end = end + piece < len ? end + piece : len;
        size_t u = 0;
        prc = pcaptool_trace_feed(&parts, text + at, end - at, end == len, &u);
        if (u > end - at)
            abort();
        at += u;
    }
    if (len && (prc == FBW_OK) != (rc == FBW_OK) && rc != FBW_E_NOMEM && prc != FBW_E_NOMEM)
        abort();
    if (rc == FBW_OK && prc == FBW_OK && parts.n != whole.n)
        abort();

    pcaptool_trace_workload w;
    int wrc = pcaptool_trace_workload_build(&whole, NULL, &w);
    if (wrc != FBW_OK && !w.err[0])
        abort();
    pcaptool_trace_workload_free(&w);
    pcaptool_trace_free(&whole);
    pcaptool_trace_free(&parts);
    return 0;
}
