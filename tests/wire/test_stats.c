/* SPDX-License-Identifier: MIT */
/* test_stats.c - round-trip accounting: a trip per wait that follows a send, per-op counters,
 * wire totals, diff and add. */
#include <criterion/criterion.h>

#include "stats.h"

#include <string.h>

Test(stats, sends_then_wait_is_one_trip)
{
    fbw_stats s;
    fbw_stats_reset(&s);
    fbw_stats_packet(&s, FBW_OP_EXECUTE, 1, 100);
    fbw_stats_packet(&s, FBW_OP_FETCH, 1, 40);
    cr_assert_eq(fbw_stats_wait_begin(&s), 1);
    cr_assert_eq(s.round_trips, 1);
    cr_assert_eq(s.waits, 1);
}

Test(stats, wait_with_nothing_sent_is_no_trip)
{
    fbw_stats s;
    fbw_stats_reset(&s);
    cr_assert_eq(fbw_stats_wait_begin(&s), 0);
    cr_assert_eq(s.round_trips, 0);
    cr_assert_eq(s.waits, 1);
    fbw_stats_packet(&s, FBW_OP_FETCH, 1, 40);
    cr_assert_eq(fbw_stats_wait_begin(&s), 1);
    fbw_stats_packet(&s, FBW_OP_FETCH_RESPONSE, 0, 400);
    /* more rows: waiting again without sending is not a new trip */
    cr_assert_eq(fbw_stats_wait_begin(&s), 0);
    fbw_stats_packet(&s, FBW_OP_FETCH_RESPONSE, 0, 400);
    cr_assert_eq(s.round_trips, 1);
    cr_assert_eq(s.waits, 3);
}

Test(stats, receiving_does_not_make_a_trip)
{
    fbw_stats s;
    fbw_stats_reset(&s);
    fbw_stats_packet(&s, FBW_OP_RESPONSE, 0, 32);
    cr_assert_eq(fbw_stats_wait_begin(&s), 0);
    cr_assert_eq(s.round_trips, 0);
}

Test(stats, alternating_sends_and_waits)
{
    fbw_stats s;
    fbw_stats_reset(&s);
    for (int i = 0; i < 5; i++) {
        fbw_stats_packet(&s, FBW_OP_EXEC_IMMEDIATE, 1, 60);
        fbw_stats_wait_begin(&s);
        fbw_stats_packet(&s, FBW_OP_RESPONSE, 0, 32);
    }
    cr_assert_eq(s.round_trips, 5);
    cr_assert_eq(s.waits, 5);
}

Test(stats, per_op_and_total_counters)
{
    fbw_stats s;
    fbw_stats_reset(&s);
    fbw_stats_packet(&s, FBW_OP_EXECUTE, 1, 100);
    fbw_stats_packet(&s, FBW_OP_EXECUTE, 1, 50);
    fbw_stats_packet(&s, FBW_OP_RESPONSE, 0, 32);
    fbw_stats_packet(&s, FBW_OP_FETCH_RESPONSE, 0, 8);
    cr_assert_eq(s.op[FBW_OP_EXECUTE].packets_sent, 2);
    cr_assert_eq(s.op[FBW_OP_EXECUTE].bytes_sent, 150);
    cr_assert_eq(s.op[FBW_OP_EXECUTE].packets_received, 0);
    cr_assert_eq(s.op[FBW_OP_RESPONSE].packets_received, 1);
    cr_assert_eq(s.op[FBW_OP_RESPONSE].bytes_received, 32);
    cr_assert_eq(s.op[FBW_OP_FETCH_RESPONSE].bytes_received, 8);
    cr_assert_eq(s.packets_sent, 2);
    cr_assert_eq(s.bytes_sent, 150);
    cr_assert_eq(s.packets_received, 2);
    cr_assert_eq(s.bytes_received, 40);
}

Test(stats, ops_outside_the_table_count_in_totals_only)
{
    fbw_stats s;
    fbw_stats_reset(&s);
    fbw_stats_packet(&s, -1, 1, 4);
    fbw_stats_packet(&s, FBW_OP_MAX + 1, 0, 4);
    fbw_stats_packet(&s, INT32_MAX, 1, 4);
    cr_assert_eq(s.packets_sent, 2);
    cr_assert_eq(s.packets_received, 1);
    uint64_t per_op = 0;
    for (int i = 0; i <= FBW_OP_MAX; i++)
        per_op += s.op[i].packets_sent + s.op[i].packets_received;
    cr_assert_eq(per_op, 0);
    cr_assert_eq(fbw_stats_wait_begin(&s), 1, "an unknown op sent still makes a trip");
}

Test(stats, wire_bytes_and_wait_time)
{
    fbw_stats s;
    fbw_stats_reset(&s);
    fbw_stats_wire(&s, 1, 10);
    fbw_stats_wire(&s, 1, 5);
    fbw_stats_wire(&s, 0, 7);
    fbw_stats_wait_time(&s, 1000);
    fbw_stats_wait_time(&s, 234);
    cr_assert_eq(s.wire_bytes_sent, 15);
    cr_assert_eq(s.wire_bytes_received, 7);
    cr_assert_eq(s.wait_ns, 1234);
    cr_assert_eq(s.bytes_sent, 0, "wire bytes are separate from XDR bytes");
}

static void workload(fbw_stats *s, int n)
{
    for (int i = 0; i < n; i++) {
        fbw_stats_packet(s, FBW_OP_EXECUTE, 1, 100 + (uint64_t)i);
        fbw_stats_packet(s, FBW_OP_FETCH, 1, 20);
        fbw_stats_wire(s, 1, 90);
        fbw_stats_wait_begin(s);
        fbw_stats_wait_time(s, 500);
        fbw_stats_packet(s, FBW_OP_FETCH_RESPONSE, 0, 300);
        fbw_stats_wire(s, 0, 280);
        fbw_stats_wait_begin(s);
    }
}

Test(stats, diff_measures_one_operation)
{
    fbw_stats s, before, d;
    fbw_stats_reset(&s);
    workload(&s, 3);
    before = s;
    workload(&s, 2);
    fbw_stats_diff(&d, &s, &before);
    cr_assert_eq(d.round_trips, 2);
    cr_assert_eq(d.waits, 4);
    cr_assert_eq(d.packets_sent, 4);
    cr_assert_eq(d.op[FBW_OP_EXECUTE].packets_sent, 2);
    cr_assert_eq(d.op[FBW_OP_EXECUTE].bytes_sent, 100 + 101);
    cr_assert_eq(d.op[FBW_OP_FETCH_RESPONSE].bytes_received, 600);
    cr_assert_eq(d.wire_bytes_sent, 180);
    cr_assert_eq(d.wire_bytes_received, 560);
    cr_assert_eq(d.wait_ns, 1000);
}

Test(stats, add_then_diff_gives_back)
{
    fbw_stats a, b, sum, back;
    fbw_stats_reset(&a);
    fbw_stats_reset(&b);
    workload(&a, 4);
    workload(&b, 7);
    sum = a;
    fbw_stats_add(&sum, &b);
    cr_assert_eq(sum.round_trips, a.round_trips + b.round_trips);
    cr_assert_eq(sum.op[FBW_OP_FETCH].packets_sent, 11);
    cr_assert_eq(sum.wait_ns, a.wait_ns + b.wait_ns);
    fbw_stats_diff(&back, &sum, &b);
    cr_assert_eq(back.round_trips, a.round_trips);
    cr_assert_eq(back.waits, a.waits);
    cr_assert_eq(back.bytes_sent, a.bytes_sent);
    cr_assert_eq(back.bytes_received, a.bytes_received);
    cr_assert_eq(back.wire_bytes_received, a.wire_bytes_received);
    for (int i = 0; i <= FBW_OP_MAX; i++)
        cr_assert_eq(memcmp(&back.op[i], &a.op[i], sizeof a.op[i]), 0, "op %d", i);
}

Test(stats, reset_clears_pending_send)
{
    fbw_stats s;
    fbw_stats_reset(&s);
    fbw_stats_packet(&s, FBW_OP_PING, 1, 4);
    fbw_stats_reset(&s);
    cr_assert_eq(fbw_stats_wait_begin(&s), 0);
    cr_assert_eq(s.packets_sent, 0);
}

/* The turnaround rule for a stream watched from outside: server bytes after client bytes are a
 * round trip whose wait runs from the last client bytes; more server bytes in the same turn, or
 * client bytes after client bytes, are not a new one. Chunks and wire bytes are counted. */
Test(stats, turnaround_rule_from_outside)
{
    fbw_stats s;
    fbw_stats_reset(&s);
    fbw_turn t;
    memset(&t, 0, sizeof t);
    fbw_stats_turn(&s, &t, 1, 40, 100);
    fbw_stats_turn(&s, &t, 1, 20, 150);  /* the same burst: the wait starts at its last bytes */
    fbw_stats_turn(&s, &t, 0, 300, 400); /* reply: one round trip of 250 ns */
    fbw_stats_turn(&s, &t, 0, 100, 900); /* more of it: no new trip, no more wait */
    cr_assert_eq(s.round_trips, 1);
    cr_assert_eq(s.wait_ns, 250);
    fbw_stats_turn(&s, &t, 1, 10, 1000);
    fbw_stats_turn(&s, &t, 0, 10, 1600);
    cr_assert_eq(s.round_trips, 2);
    cr_assert_eq(s.wait_ns, 850);
    cr_assert_eq(s.wire_chunks_sent, 3);
    cr_assert_eq(s.wire_chunks_received, 3);
    cr_assert_eq(s.wire_bytes_sent, 70);
    cr_assert_eq(s.wire_bytes_received, 410);
}
