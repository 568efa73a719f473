/* SPDX-License-Identifier: MIT */
/* loop.h - fbwire-link's event loop: sockets, epoll, the clock, signals; and what it counted. */
#ifndef FBL_LOOP_H
#define FBL_LOOP_H

#include "opts.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define FBL_LATE_BUCKETS 1001

/* One finished connection. Index 0/1 = FBL_UP (client to server) / FBL_DOWN. */
typedef struct fbl_conn_stats {
    uint32_t id;
    char client[64];
    uint64_t bytes[2], chunks[2], writes[2], dropped[2];
    uint32_t faults;
    double seconds;
    char end[48]; /* how it ended: "closed", "reset (fault)", "reset by server", ... */
} fbl_conn_stats;

typedef struct fbl_summary {
    fbl_conn_stats *conn; /* the first FBL_MAX_DETAIL connections */
    size_t nconn, cap;
    uint64_t conns, refused, max_open, faults;
    uint64_t bytes[2], chunks[2], writes[2];
    double user_s, sys_s, wall_s;
    double setup_cpu_s; /* of user_s + sys_s, spent before the first event: not per chunk */
    /* How late the relay wrote each chunk after its due time: its own wake-up error (plus any
     * wait for a full socket). Per microsecond; the last bucket holds 1 ms and more. */
    uint64_t late_hist[FBL_LATE_BUCKETS];
    uint64_t late_max_ns;
    uint64_t lead_ns; /* the wake-up lead at the end (lead.h) */
} fbl_summary;

/* The q-quantile (0..1) of the lateness, in microseconds (1000: 1 ms or more); 0 when none. */
unsigned fbl_late_us(const fbl_summary *s, double q);

#define FBL_MAX_DETAIL 100000

/* Split "ADDR:PORT" / "[V6]:PORT" / ":PORT" and resolve it. Returns 0 or -1 with a message. */
struct sockaddr_storage;
int fbl_resolve(const char *spec, int passive, struct sockaddr_storage *sa, unsigned *salen);

/* A listening socket on `spec` (non-blocking). -1 with a message on failure. */
int fbl_listen(const char *spec);

/* Relay until SIGTERM/SIGINT. listen_fd < 0: listen on o->listen. Fills `sum`; 0 or -1 (setup). */
int fbl_run(const fbl_opts *o, int listen_fd, fbl_summary *sum);

/* The exit summary: text (report.c) and JSON. */
void fbl_report_text(const fbl_opts *o, const fbl_summary *s, FILE *f);
int fbl_report_json(const fbl_opts *o, const fbl_summary *s, const char *path);
/* Write doc (built with jansson; released here) to the file path: 0, or -1 with a message (NULL
 * doc: out of memory). The --json files of the summary and of --self-test. */
int fbl_json_file(json_t *doc, const char *path);
void fbl_summary_free(fbl_summary *s);

/* --self-test (selftest.c): exit status. */
int fbl_self_test(const fbl_opts *o);

#endif
