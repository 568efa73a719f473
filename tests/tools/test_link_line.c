/* SPDX-License-Identifier: MIT */
/* test_link_line.c - one direction of fbwire-link (tools/fbwire-link/line.c) without sockets or a
 * clock: delay and rate arithmetic to the nanosecond, chunks delivered whole and never serialised,
 * slicing, marks, stalls, and (seeded random chunk sizes, times, delays, jitter, rates and partial
 * writes) no reordering and no byte lost or changed, ever. */
#include <criterion/criterion.h>

#include "line.h"

#include <stdlib.h>
#include <string.h>

#define MS 1000000ull
#define US 1000ull

static fbl_line make(uint64_t delay, uint64_t jitter, uint64_t rate, uint64_t burst, size_t slice)
{
    fbl_line l;
    fbl_line_cfg cfg = {.delay_ns = delay,
                        .jitter_ns = jitter,
                        .rate_bps = rate,
                        .burst_bytes = burst,
                        .slice = slice};
    fbl_line_init(&l, &cfg, 42);
    return l;
}

/* The next write at `now`: its length, or 0 when nothing is due; checks the kind. */
static size_t take(fbl_line *l, uint64_t now, fbl_kind want)
{
    const unsigned char *p;
    size_t n = 0;
    uint64_t arg;
    int rule;
    fbl_kind k = fbl_line_peek(l, now, &p, &n, &arg, &rule);
    cr_assert_eq(k, want, "at %llu: kind %d, expected %d", (unsigned long long)now, k, want);
    if (k == FBL_DATA)
        fbl_line_consume(l, n);
    return k == FBL_DATA ? n : 0;
}

Test(link_line, delay_is_exact_and_chunks_arrive_whole)
{
    fbl_line l = make(500 * US, 0, 0, 0, 0);
    char buf[300] = {0};
    cr_assert_eq(fbl_line_push(&l, 1000, buf, sizeof buf), 0);
    cr_assert_eq(fbl_line_next_due(&l), 1000 + 500 * US);
    take(&l, 1000 + 500 * US - 1, FBL_NONE);
    cr_assert_eq(take(&l, 1000 + 500 * US, FBL_DATA), 300,
                 "a chunk read together is written together");
    cr_assert_eq(fbl_line_next_due(&l), FBL_NEVER);
    cr_assert_eq(l.bytes_out, 300);
    cr_assert_eq(l.writes_out, 1);
    fbl_line_free(&l);
}

Test(link_line, pipelined_chunks_are_not_serialised)
{
    /* Three requests 10 us apart through 1 ms of delay arrive 10 us apart, not 1 ms apart. */
    fbl_line l = make(1 * MS, 0, 0, 0, 0);
    for (int i = 0; i < 3; i++)
        fbl_line_push(&l, (uint64_t)i * 10 * US, "abc", 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(fbl_line_next_due(&l), 1 * MS + (uint64_t)i * 10 * US);
        cr_assert_eq(take(&l, 1 * MS + (uint64_t)i * 10 * US, FBL_DATA), 3);
    }
    fbl_line_free(&l);
}

Test(link_line, rate_is_a_wire_of_that_speed)
{
    /* 8 mbit/s = 1 byte per us: 1000 bytes leave 1 ms after they were read, the next 500 queue
     * behind them, and the delay adds on top. */
    fbl_line l = make(2 * MS, 0, 8000000, 0, 0);
    static char buf[1000];
    fbl_line_push(&l, 0, buf, 1000);
    fbl_line_push(&l, 0, buf, 500);
    cr_assert_eq(take(&l, 3 * MS, FBL_DATA), 1000);
    cr_assert_eq(fbl_line_next_due(&l), 3 * MS + 500 * US);
    /* An idle link starts again from now, with no credit (burst 0). */
    fbl_line_push(&l, 10 * MS, buf, 100);
    take(&l, 3 * MS + 500 * US, FBL_DATA);
    cr_assert_eq(fbl_line_next_due(&l), 10 * MS + 100 * US + 2 * MS);
    fbl_line_free(&l);
}

Test(link_line, rate_remainders_sum_exactly)
{
    /* 3 bit/s: a byte takes 8/3 s. Three single bytes take exactly 8 s, not 3 * 2.666666666. */
    fbl_line l = make(0, 0, 3, 0, 0);
    for (int i = 0; i < 3; i++)
        fbl_line_push(&l, 0, "x", 1);
    uint64_t want[] = {2666666666ull, 5333333333ull, 8000000000ull};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(fbl_line_next_due(&l), want[i], "byte %d due %llu", i,
                     (unsigned long long)fbl_line_next_due(&l));
        take(&l, want[i], FBL_DATA);
    }
    uint64_t rem = 0, sum = 0;
    for (int i = 0; i < 1000; i++)
        sum +=
            fbl_tx_ns(1500, 100000000, &rem); /* 1000 packets of 1500 bytes at 100 mbit: 120 ms */
    cr_assert_eq(sum, 120 * MS);
    fbl_line_free(&l);
}

Test(link_line, burst_lets_an_idle_link_send_at_once)
{
    fbl_line l = make(0, 0, 8000000, 1000, 0);
    static char buf[1500];
    fbl_line_push(&l, 50 * MS, buf, 1000); /* idle for long: within the burst, leaves now */
    cr_assert_eq(fbl_line_next_due(&l), 50 * MS);
    take(&l, 50 * MS, FBL_DATA);
    fbl_line_push(&l, 50 * MS, buf, 1500); /* credit used up: 1.5 ms at 1 byte/us */
    cr_assert_eq(fbl_line_next_due(&l), 51 * MS + 500 * US);
    fbl_line_free(&l);
}

Test(link_line, slice_splits_writes)
{
    fbl_line l = make(0, 0, 0, 0, 3);
    fbl_line_push(&l, 0, "0123456789", 10);
    size_t sizes[] = {3, 3, 3, 1};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(take(&l, 0, FBL_DATA), sizes[i]);
    take(&l, 0, FBL_NONE);
    cr_assert_eq(l.writes_out, 4);
    cr_assert_eq(l.chunks_in, 1);
    fbl_line_free(&l);
}

Test(link_line, marks_follow_the_bytes_before_them)
{
    fbl_line l = make(1 * MS, 0, 0, 0, 0);
    fbl_line_push(&l, 0, "ab", 2);
    fbl_line_push_mark(&l, 0, FBL_EOF, 0, -1);
    take(&l, 1 * MS - 1, FBL_NONE);
    cr_assert_eq(take(&l, 1 * MS, FBL_DATA), 2);
    take(&l, 1 * MS, FBL_EOF);
    take(&l, 1 * MS, FBL_NONE);
    fbl_line_free(&l);
}

Test(link_line, stall_for_a_time_and_until_released)
{
    fbl_line l = make(0, 0, 0, 0, 0);
    fbl_line_push_mark(&l, 0, FBL_STALL, 5 * MS, 0);
    fbl_line_push(&l, 0, "ab", 2);
    take(&l, 0, FBL_STALL);
    cr_assert_eq(fbl_line_next_due(&l), 5 * MS, "data waits out the stall");
    take(&l, 5 * MS - 1, FBL_NONE);
    cr_assert_eq(take(&l, 5 * MS, FBL_DATA), 2);

    fbl_line_push_mark(&l, 6 * MS, FBL_STALL, FBL_NEVER, 0);
    fbl_line_push(&l, 6 * MS, "cd", 2);
    take(&l, 6 * MS, FBL_STALL);
    cr_assert_eq(fbl_line_next_due(&l), FBL_NEVER, "held until released");
    take(&l, 1000 * MS, FBL_NONE);
    fbl_line_release(&l);
    cr_assert_eq(take(&l, 1000 * MS, FBL_DATA), 2);
    fbl_line_free(&l);
}

/* ---- random traffic: order, content and timing under every stage at once ---- */

typedef struct sim {
    unsigned char *in, *out;
    size_t nin, nout;
    uint64_t arrivals[4096], dues[4096]; /* per chunk: read time, due time */
} sim;

static uint64_t rnd(uint64_t *s, uint64_t n)
{
    return n ? fbl_rand(s) % n : 0;
}

static void one_run(uint64_t seed)
{
    uint64_t rs = seed;
    uint64_t delay = rnd(&rs, 3) == 0 ? 0 : rnd(&rs, 5 * MS);
    uint64_t jitter = rnd(&rs, 2) ? rnd(&rs, 2 * MS) : 0;
    uint64_t rate = rnd(&rs, 2) ? 1000000 + rnd(&rs, 1000000000) : 0;
    size_t slice = rnd(&rs, 3) == 0 ? 1 + (size_t)rnd(&rs, 700) : 0;
    fbl_line l = make(delay, jitter, rate, rnd(&rs, 2) ? rnd(&rs, 20000) : 0, slice);
    l.rng = seed; /* jitter draws differ per run too */
    static sim S;
    size_t chunks = 50 + (size_t)rnd(&rs, 400), cap = chunks * 5000;
    S.in = malloc(cap);
    S.out = malloc(cap);
    S.nin = S.nout = 0;
    uint64_t now = 0, last_due = 0;
    size_t pushed = 0;
    for (;;) {
        /* Either read a chunk or let the writer take a (possibly partial) write. */
        if (pushed < chunks && rnd(&rs, 2)) {
            size_t n = 1 + (size_t)rnd(&rs, 5000);
            for (size_t i = 0; i < n; i++)
                S.in[S.nin + i] = (unsigned char)fbl_rand(&rs);
            cr_assert_eq(fbl_line_push(&l, now, S.in + S.nin, n), 0);
            uint64_t due = l.tail->due;
            cr_assert_geq(due, now + delay, "seed %llu: due before the delay",
                          (unsigned long long)seed);
            if (!jitter && !rate)
                cr_assert_eq(due, now + delay, "seed %llu: plain delay not exact",
                             (unsigned long long)seed);
            cr_assert_geq(due, last_due, "seed %llu: chunk %zu reordered", (unsigned long long)seed,
                          pushed);
            last_due = due;
            S.nin += n;
            pushed++;
        } else {
            const unsigned char *p;
            size_t n;
            uint64_t arg;
            int rule;
            if (fbl_line_peek(&l, now, &p, &n, &arg, &rule) == FBL_DATA) {
                cr_assert_leq(l.head->due, now, "seed %llu: written before due",
                              (unsigned long long)seed);
                if (slice)
                    cr_assert_leq(n, slice);
                size_t w =
                    rnd(&rs, 4) ? n : (size_t)rnd(&rs, n + 1); /* a short write now and then */
                memcpy(S.out + S.nout, p, w);
                S.nout += w;
                fbl_line_consume(&l, w);
            } else if (pushed == chunks && !l.head) {
                break;
            }
        }
        now += rnd(&rs, 4) == 0 ? rnd(&rs, 3 * MS) : rnd(&rs, 50 * US);
    }
    cr_assert_eq(S.nout, S.nin, "seed %llu: %zu bytes out of %zu", (unsigned long long)seed, S.nout,
                 S.nin);
    cr_assert(memcmp(S.in, S.out, S.nin) == 0, "seed %llu: bytes changed or reordered",
              (unsigned long long)seed);
    cr_assert_eq(l.bytes_out, S.nin);
    cr_assert_eq(l.queued, 0);
    free(S.in);
    free(S.out);
    fbl_line_free(&l);
}

Test(link_line, random_traffic_never_reorders_loses_or_changes_a_byte)
{
    for (uint64_t seed = 1; seed <= 300; seed++)
        one_run(seed);
}
