/* SPDX-License-Identifier: MIT */
/* line.h - the sans-I/O core of fbwire-link: one direction of a relayed TCP connection.
 *
 * Bytes read from one side enter as a chunk at time `now` (nanoseconds on any monotonic clock);
 * the line gives every chunk the time it is due at the other side and answers, for a given `now`,
 * what to write. It never touches a socket or reads a clock, so tests drive it with made-up times.
 *
 * Stages, in the order a chunk meets them:
 *   rate   a token bucket of depth `burst_bytes` draining at `rate_bps`: a chunk leaves when the
 *          bucket has transmitted its last byte (burst 0 = a plain wire of that speed);
 *   delay  one-way delay plus a jitter drawn uniformly from [0, jitter_ns] (seeded);
 *   order  due = max(previous due, leave + delay + jitter): jitter never reorders;
 *   stall  nothing is written before `stall_until` (a fault; see fault.h);
 *   slice  at most `slice` bytes per write (a fault: 1 = every byte its own segment).
 * A mark (end of stream, reset, shutdown, stall) travels in the queue like data, so it takes
 * effect exactly after the bytes before it have been delivered. */
#ifndef FBL_LINE_H
#define FBL_LINE_H

#include <stddef.h>
#include <stdint.h>

#define FBL_NEVER UINT64_MAX

typedef struct fbl_line_cfg {
    uint64_t delay_ns;    /* one-way delay */
    uint64_t jitter_ns;   /* extra delay drawn from [0, jitter_ns] per chunk */
    uint64_t rate_bps;    /* bits per second, 0 = unlimited */
    uint64_t burst_bytes; /* token bucket depth: bytes an idle link may send at once */
    size_t slice;         /* bytes per write at most, 0 = unlimited */
} fbl_line_cfg;

/* What the head of the queue asks for. */
typedef enum fbl_kind {
    FBL_NONE = 0, /* nothing due yet (or the queue is empty) */
    FBL_DATA,     /* write these bytes */
    FBL_EOF,      /* the source side ended its stream: shut the destination's write half */
    FBL_RESET,    /* reset both sides of the connection */
    FBL_SHUTDOWN, /* close this direction's write half (a fault) */
    FBL_STALL     /* stall this direction for `arg` ns (FBL_NEVER: until released) */
} fbl_kind;

typedef struct fbl_chunk {
    struct fbl_chunk *next;
    uint64_t due; /* ns: when it may be written */
    fbl_kind kind;
    uint64_t arg; /* FBL_STALL: ns; marks from a fault rule: the rule's number in `rule` */
    int rule;     /* fault rule that made this mark, -1 otherwise */
    size_t len, off;
    unsigned char data[];
} fbl_chunk;

typedef struct fbl_line {
    fbl_line_cfg cfg;
    fbl_chunk *head, *tail;
    size_t queued;        /* data bytes held */
    uint64_t last_due;    /* due time of the newest chunk: the order stage */
    uint64_t free_at;     /* the rate stage: when the link has sent everything accepted so far */
    uint64_t rate_rem;    /* remainder of len*8e9/rate carried to the next chunk: exact sum */
    uint64_t stall_until; /* the stall stage */
    uint64_t rng;         /* jitter draws */
    /* counts */
    uint64_t bytes_in, chunks_in, bytes_out, writes_out;
} fbl_line;

void fbl_line_init(fbl_line *l, const fbl_line_cfg *cfg, uint64_t seed);
void fbl_line_free(fbl_line *l);

/* A chunk of `len` bytes read at `now`. Returns 0, or -1 when out of memory. */
int fbl_line_push(fbl_line *l, uint64_t now, const void *buf, size_t len);
/* A mark behind everything queued (due with the chunk before it, or at now + delay). */
int fbl_line_push_mark(fbl_line *l, uint64_t now, fbl_kind kind, uint64_t arg, int rule);

/* When the head may be written: FBL_NEVER when the queue is empty or stalled until released. */
uint64_t fbl_line_next_due(const fbl_line *l);

/* What to do at `now`. FBL_DATA: *buf and *len are the next write (at most one slice). A mark is
 * removed from the queue when returned (FBL_STALL arms the stall itself); data is removed by
 * fbl_line_consume with the count actually written. */
fbl_kind fbl_line_peek(fbl_line *l, uint64_t now, const unsigned char **buf, size_t *len,
                       uint64_t *arg, int *rule);
void fbl_line_consume(fbl_line *l, size_t n);

/* End a stall now (the "until released" stall included). */
void fbl_line_release(fbl_line *l);

/* Time for `len` bytes at `rate_bps`, in ns, with the remainder carried in *rem (exact over a sum).
 */
uint64_t fbl_tx_ns(uint64_t len, uint64_t rate_bps, uint64_t *rem);

/* The seeded generator shared by the stages (splitmix64): deterministic per connection. */
uint64_t fbl_rand(uint64_t *state);

#endif
