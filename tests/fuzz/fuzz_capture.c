/* SPDX-License-Identifier: MIT */
/* fuzz_capture.c - libFuzzer target for fbwire-pcap's capture reader and TCP reassembly
 * (tools/fbwire-pcap/capture.c, tcp.c) with the report that feeds the session decoder behind them:
 * the input is a whole pcap or pcapng file, read through libpcap from memory. Header lengths, link
 * types, IPv4/IPv6 headers and options, TCP options and sequence numbers (out of order,
 * overlapping, retransmitted, gaps) all come from the input. Reading must end in FBW_OK or a clean
 * error; ASan/UBSan catch everything else. Seeds: the captures in pcap/ (tests/fuzz/corpus); the
 * key log lines of its encrypted ones (fuzz_capture.keys, FBW_FUZZ_KEYS) are loaded, so mutated
 * ciphertext runs through the decryption and the wrong-key checks too (after re-recording:
 * concatenate the pcap/NAME.keys files into it). Every decoded packet also goes to replay's
 * workload builder (tools/fbwire-pcap/workload.c), as `replay` feeds it, so its decoding of
 * requests and replies (handles, rows, blob ids and segments, info and execute immediate
 * messages) runs on mutated sessions too. */
#include "pcaptool.h"
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_segment(void *arg, const pcaptool_seg *s)
{
    pcaptool_tcp_segment(arg, s);
}

#define MAX_WORKLOADS 8

/* Per connection (up to MAX_WORKLOADS; the rest are not built) its workload, as replay's tap. */
static void tap(void *arg, int conn_id, const struct fbw_dec *d, int from_client,
                const struct fbw_pkt *p, uint64_t ts_ns)
{
    pcaptool_workload *w = arg;
    if (conn_id >= 1 && conn_id <= MAX_WORKLOADS)
        pcaptool_workload_packet(&w[conn_id - 1], d, from_client, p, ts_ns);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink_out;
    static pcaptool_keys *keys;
    if (!sink_out) {
        fbw_err err;
        sink_out = fopen("/dev/null", "w");
        if (pcaptool_keys_load(FBW_FUZZ_KEYS, &keys, &err) != FBW_OK)
            abort(); /* the fuzzer would silently lose the decryption paths */
    }
    if (!sink_out || size == 0)
        return 0;
    /* Every connection is followed, as without --port: Firebird ones are recognised by content
     * (sessions the seeds cut run the lock-on search); 3050 is listed even when not recognised. */
    static const uint16_t ports[] = {3050};
    static pcaptool_workload wl[MAX_WORKLOADS];
    for (int i = 0; i < MAX_WORKLOADS; i++)
        pcaptool_workload_init(&wl[i]);
    pcaptool_report_opts ro = {.mode = PCAPTOOL_REPORT_STATS,
                               .trips = 1,
                               .out = sink_out,
                               .keys = keys,
                               .ports = ports,
                               .nports = 1,
                               .tap = tap,
                               .tap_arg = wl};
    pcaptool_report *r = NULL;
    pcaptool_tcp *t = NULL;
    pcaptool_tcp_sink sink;
    if (pcaptool_report_new(&ro, &r) != FBW_OK) {
        for (int i = 0; i < MAX_WORKLOADS; i++)
            pcaptool_workload_free(&wl[i]);
        return 0;
    }
    pcaptool_report_sink(r, &sink);
    if (pcaptool_tcp_new(&sink, ports, 0, &t) == FBW_OK) {
        /* fmemopen with mode "r" never writes through the pointer. */
        FILE *f = fmemopen((void *)(uintptr_t)data, size, "r");
        pcaptool_cap_summary sum;
        fbw_err err;
        fbw_err_clear(&err);
        if (f && pcaptool_cap_read_file(f, "input", on_segment, t, &sum, &err) == FBW_OK) {
            pcaptool_tcp_finish(t);
            pcaptool_report_finish(r, "input", &sum);
            for (size_t i = 0; i < pcaptool_report_count(r); i++) {
                pcaptool_report_conn ci;
                pcaptool_report_conn_info(r, i, &ci);
            }
        }
    }
    pcaptool_tcp_free(t);
    pcaptool_report_free(r);
    for (int i = 0; i < MAX_WORKLOADS; i++)
        pcaptool_workload_free(&wl[i]);
    return 0;
}
