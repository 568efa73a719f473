/* SPDX-License-Identifier: MIT */
/* pcaptool.h - the parts of fbwire-pcap: capture.c reads pcap/pcapng files through libpcap and
 * turns frames into TCP segments; tcp.c reassembles each connection's two byte streams; report.c
 * feeds them to the shared session decoder (wire/dec.h) and prints packets or statistics.
 *
 * Nothing here decodes Firebird packets itself: that is dec.c/pkt.c, the same code the live client
 * uses. Captures are hostile input: every length read from a frame is checked before use. */
#ifndef PCAPTOOL_H
#define PCAPTOOL_H

#include "buf.h"
#include "err.h"
#include "keylog.h"
#include "stats.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- capture.c ---- */

#define PCAPTOOL_TCP_FIN 0x01
#define PCAPTOOL_TCP_SYN 0x02
#define PCAPTOOL_TCP_RST 0x04
#define PCAPTOOL_TCP_ACK 0x10

/* One TCP segment as the capture holds it. */
typedef struct pcaptool_seg {
    uint64_t frame; /* 1-based frame number in the file (Wireshark's numbering) */
    uint64_t ts_ns; /* capture timestamp */
    int family;     /* 4 or 6 */
    uint8_t src[16], dst[16];
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags;       /* PCAPTOOL_TCP_* */
    const uint8_t *data; /* captured payload, valid during the callback */
    size_t len;          /* captured payload bytes */
    size_t wire_len; /* payload bytes the IP header announces; > len when snaplen cut the frame */
} pcaptool_seg;

typedef void (*pcaptool_seg_fn)(void *arg, const pcaptool_seg *s);

typedef struct pcaptool_cap_summary {
    uint64_t frames;    /* frames read */
    uint64_t tcp;       /* TCP segments handed on */
    uint64_t skipped;   /* not IP/TCP, fragments, unknown link type */
    uint64_t malformed; /* headers that do not fit the frame */
    int linktype;
    char truncated[256]; /* "" or why reading stopped early (libpcap's message) */
} pcaptool_cap_summary;

/* Read every frame of a pcap or pcapng file and call fn for each TCP segment. FBW_OK also when
 * the file ends early (then sum->truncated says so); FBW_E_IO when it cannot be opened or is not
 * a capture; FBW_E_UNSUPPORTED for a link type other than Ethernet, Linux cooked (SLL, SLL2),
 * BSD loopback/null or raw IP. */
int pcaptool_cap_read(const char *path, pcaptool_seg_fn fn, void *arg, pcaptool_cap_summary *sum,
                      fbw_err *err);
/* The same from an open stream (the fuzz target reads memory through fmemopen); f is closed
 * in every case. name is for messages. */
int pcaptool_cap_read_file(FILE *f, const char *name, pcaptool_seg_fn fn, void *arg,
                           pcaptool_cap_summary *sum, fbw_err *err);
/* "127.0.0.1:3050" or "[::1]:3050" */
void pcaptool_cap_endpoint(int family, const uint8_t *addr, uint16_t port, char *buf, size_t size);

/* ---- tcp.c ---- */

typedef struct pcaptool_tcp pcaptool_tcp;

enum pcaptool_tcp_end { PCAPTOOL_TCP_END_FIN, PCAPTOOL_TCP_END_RST, PCAPTOOL_TCP_END_CAPTURE };

/* What reassembly hands to its user, per connection. conn is what open() returned. */
typedef struct pcaptool_tcp_sink {
    /* A new connection; client/server as seen from the SYN (else from the server port). saw_syn is
     * 0 when the capture started after the connection did. Return NULL to ignore the connection. */
    void *(*open)(void *arg, const char *client, const char *server, int saw_syn, uint64_t frame);
    /* In-order stream bytes of one direction. */
    void (*data)(void *conn, int from_client, const uint8_t *p, size_t n, uint64_t ts_ns,
                 uint64_t frame);
    /* The stream cannot be followed any more (gap, snaplen cut): no more data() calls follow. */
    void (*broken)(void *conn, const char *why);
    /* The connection ended (or the capture did). Called once per open(). */
    void (*close)(void *conn, enum pcaptool_tcp_end how);
    void *arg;
} pcaptool_tcp_sink;

/* Connections whose client or server port is in ports[0..nports) are followed; every TCP
 * connection when nports is 0. Without a SYN, the side on a listed port is the server, else the
 * side with the lower port (servers listen below the ephemeral range). */
int pcaptool_tcp_new(const pcaptool_tcp_sink *sink, const uint16_t *ports, size_t nports,
                     pcaptool_tcp **out);
void pcaptool_tcp_segment(pcaptool_tcp *t, const pcaptool_seg *s);
/* End of capture: report held segments as gaps and close every open connection. */
void pcaptool_tcp_finish(pcaptool_tcp *t);
void pcaptool_tcp_free(pcaptool_tcp *t);

/* ---- keys.c ---- */

/* A key log (FBWIRE_KEYLOGFILE, wire/keylog.h) read whole. */
typedef struct pcaptool_keys pcaptool_keys;

/* FBW_E_IO when unreadable; FBW_E_BADVALUE "FILE:LINE: why" for the first malformed line. */
int pcaptool_keys_load(const char *path, pcaptool_keys **out, fbw_err *err);
/* The line for a connection (addresses as pcaptool_cap_endpoint prints them; the last such line
 * wins) and its line number; NULL when there is none. NULL k is allowed. */
const fbw_keylog_entry *pcaptool_keys_find(const pcaptool_keys *k, const char *client,
                                           const char *server, unsigned *line);
void pcaptool_keys_free(pcaptool_keys *k);

/* ---- report.c ---- */

/* QUIET decodes and keeps the statistics but prints nothing (replay.c prints its own report). */
enum pcaptool_report_mode { PCAPTOOL_REPORT_DUMP, PCAPTOOL_REPORT_STATS, PCAPTOOL_REPORT_QUIET };

struct fbw_dec;
struct fbw_pkt;
/* Every decoded packet of connection conn_id (numbered as `stats` numbers them), with the decoder
 * that produced it (for fbw_dec_answering, fbw_dec_message_format, fbw_dec_protocol) and the
 * capture time of the packet's bytes. */
typedef void (*pcaptool_report_tap)(void *arg, int conn_id, const struct fbw_dec *d,
                                    int from_client, const struct fbw_pkt *p, uint64_t ts_ns);

typedef struct pcaptool_report_opts {
    int mode; /* enum pcaptool_report_mode */
    int json;
    int trips; /* stats: list each round trip's ops */
    FILE *out;
    pcaptool_report_tap tap; /* optional */
    void *tap_arg;
    const pcaptool_keys *keys; /* optional: encrypted connections with a line are decrypted */
    /* Connections to these server ports are reported even when nothing in them is recognised as
     * Firebird; connections on other ports only when the decoder recognised them (an op_connect,
     * or packets it locked on to mid-session). */
    const uint16_t *ports;
    size_t nports;
} pcaptool_report_opts;

typedef struct pcaptool_report pcaptool_report;

int pcaptool_report_new(const pcaptool_report_opts *o, pcaptool_report **out);
/* The reassembly callbacks that feed this report (sink.arg is set to r). */
void pcaptool_report_sink(pcaptool_report *r, pcaptool_tcp_sink *sink);
/* Print what the mode asks for at the end (stats tables, problems); returns the number of
 * connections that could not be decoded to their end. */
int pcaptool_report_finish(pcaptool_report *r, const char *file, const pcaptool_cap_summary *sum);
/* Read a capture file into r: TCP reassembly (restricted to ports when explicit_ports, else every
 * connection, recognised by content) feeding the report. FBW_OK; FBW_E_NOMEM (err clear) when
 * reassembly cannot start; else the reader's error in err. What `dump`, `stats`, `replay --list`
 * and the streaming replay's reader share. */
int pcaptool_report_read(pcaptool_report *r, const char *file, const uint16_t *ports, size_t nports,
                         int explicit_ports, pcaptool_cap_summary *sum, fbw_err *err);
void pcaptool_report_free(pcaptool_report *r);

/* After pcaptool_report_finish: connection i (0-based; id is i + 1) as `stats` reports it. Pointers
 * stay valid until pcaptool_report_free. */
typedef struct pcaptool_report_conn {
    int id;
    const char *client, *server;
    const fbw_stats *stats; /* the capture's round trips, packets and bytes */
    const char *problem;    /* NULL, or why it could not be decoded to its end */
    const char *encrypted;  /* NULL, or the wire crypt plugin after which nothing decodes (NULL
                             * when the key log decrypted it) */
    int open_at_end;        /* the capture ended before the connection did */
} pcaptool_report_conn;
size_t pcaptool_report_count(const pcaptool_report *r);
void pcaptool_report_conn_info(const pcaptool_report *r, size_t i, pcaptool_report_conn *out);

/* A JSON string literal of p[0..n) (also for text output: control bytes never reach a
 * terminal), cut with "..." after limit bytes (0: no limit). */
void pcaptool_quote(fbw_buf *b, const uint8_t *p, size_t n, size_t limit);

#endif
