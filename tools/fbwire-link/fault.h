/* SPDX-License-Identifier: MIT */
/* fault.h - fbwire-link's fault schedule: rules parsed from `--fault TEXT`, and per connection
 * the decision which bytes pass before a rule fires. Sans-I/O, no clock: the event loop turns a
 * fired rule into a mark in a line (line.h), so the fault takes effect exactly behind the bytes
 * that preceded it.
 *
 * Syntax of one rule (words separated by blanks, in any order):
 *   conn=N                        only the N-th accepted connection (1-based); default every one
 *   after=COUNTER:N               fire once when the counter reaches N:
 *                                   client-writes, server-writes  chunks read from that side
 *                                   client-bytes,  server-bytes   bytes read from that side (exact:
 *                                                                 a chunk is split at the N-th
 * byte) prob=P                        instead of after=: fire after each chunk with probability P
 * (seeded) dir=up|down|both              the direction acted on (up = client to server); default:
 * the counter's side (after=), every chunk's own direction (prob=) reset | shutdown | stall=T |
 * stall=hold      the action (exactly one): reset     both sides get a TCP reset once the bytes
 * before it are delivered shutdown  the direction's write half is closed (the receiver reads end of
 * stream) stall=T   the direction delivers nothing for T (a duration); hold: until SIGUSR1 Example:
 * "conn=3 after=client-writes:40 reset". */
#ifndef FBL_FAULT_H
#define FBL_FAULT_H

#include "line.h"

#include <stddef.h>
#include <stdint.h>

#define FBL_MAX_RULES 16
#define FBL_RULE_MAX_TEXT 256

enum { FBL_UP = 0, FBL_DOWN = 1, FBL_BOTH = 2 };

typedef enum fbl_counter {
    FBL_CNT_PROB = 0, /* no counter: prob= */
    FBL_CNT_WRITES,
    FBL_CNT_BYTES
} fbl_counter;

typedef struct fbl_rule {
    uint32_t conn; /* 0 = every connection */
    fbl_counter counter;
    int side;          /* FBL_UP: client, FBL_DOWN: server (counters); FBL_BOTH for prob */
    uint64_t after;    /* counter threshold */
    uint32_t prob_ppb; /* prob=: parts per billion */
    int dir;           /* direction acted on: FBL_UP, FBL_DOWN, FBL_BOTH, -1 = default */
    fbl_kind action;   /* FBL_RESET, FBL_SHUTDOWN or FBL_STALL */
    uint64_t stall_ns; /* FBL_NEVER: hold until released */
} fbl_rule;

typedef struct fbl_sched {
    fbl_rule rule[FBL_MAX_RULES];
    int n;
} fbl_sched;

/* Parse one rule. Returns 0, or -1 with a message in err. */
int fbl_rule_parse(const char *text, fbl_rule *r, char *err, size_t errlen);
/* One line of text naming the rule (for logs): "conn=3 after=client-writes:40 reset". */
void fbl_rule_format(const fbl_rule *r, char *out, size_t outlen);

/* Per connection and direction: where the rules stand. */
typedef struct fbl_faults {
    uint32_t conn;                /* this connection's number */
    uint64_t writes[2], bytes[2]; /* chunks and bytes read per side so far */
    unsigned char fired[FBL_MAX_RULES];
    uint64_t rng;
} fbl_faults;

void fbl_faults_init(fbl_faults *f, uint32_t conn, uint64_t seed);

/* Of the next `len` bytes read from `side`, how many pass before a byte rule fires; *hit is that
 * rule (-1: none, all len pass). Call again with the rest until len is used up. */
size_t fbl_faults_bytes(fbl_faults *f, const fbl_sched *s, int side, size_t len, int *hit);
/* After a whole chunk from `side`: the write-count and probability rules that fire, in rule
 * order, into hits[] (at most FBL_MAX_RULES). Returns how many. */
int fbl_faults_chunk(fbl_faults *f, const fbl_sched *s, int side, int *hits);

/* The direction(s) a fired rule acts on, given the side whose bytes fired it. */
int fbl_rule_dir(const fbl_rule *r, int side);

#endif
