/* SPDX-License-Identifier: MIT */
/* Unit tests of the streaming replay's step queue (tools/fbwire-pcap/stepq.c): order, the step
 * and byte limits with their deadline, a push past the limit, the end, shared steps, and the
 * "waits on an empty queue" state the reader's deadlock check reads. */
#include <criterion/criterion.h>
#include "stepq.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A step holding n bytes of SQL. */
static pcaptool_qstep *step(size_t index, size_t n, int refs)
{
    pcaptool_step s;
    memset(&s, 0, sizeof s);
    s.kind = PCAPTOOL_STEP_PREPARE;
    s.data = malloc(n + 1);
    cr_assert(s.data);
    memset(s.data, 'x', n);
    s.data[n] = 0;
    s.len = n;
    pcaptool_qstep *x = pcaptool_qstep_new(&s, index, refs);
    cr_assert(x);
    return x;
}

Test(stepq, order_limit_deadline_force_and_end)
{
    pcaptool_stepq q;
    cr_assert_eq(pcaptool_stepq_init(&q, 2, 0), FBW_OK);
    uint64_t now = pcaptool_stepq_now();
    cr_assert_eq(pcaptool_stepq_push(&q, step(1, 10, 1), now + 1000000000u, 0), FBW_OK);
    cr_assert_eq(pcaptool_stepq_push(&q, step(2, 10, 1), now + 1000000000u, 0), FBW_OK);
    cr_assert(pcaptool_stepq_full(&q));
    pcaptool_qstep *third = step(3, 10, 1);
    now = pcaptool_stepq_now();
    cr_assert_eq(pcaptool_stepq_push(&q, third, now + 50000000u, 0), FBW_AGAIN);
    uint64_t waited = pcaptool_stepq_now() - now;
    cr_expect(waited >= 50000000u && waited < 1000000000u, "waited %llu ns",
              (unsigned long long)waited);
    cr_assert_eq(pcaptool_stepq_push(&q, third, pcaptool_stepq_now(), 1), FBW_OK);
    cr_expect_eq(q.overfilled, 1);
    cr_expect_eq(q.peak_items, 3);
    pcaptool_qstep *x;
    for (size_t i = 1; i <= 3; i++) {
        cr_assert_eq(pcaptool_stepq_pop(&q, &x, pcaptool_stepq_now() + 1000000000u),
                     PCAPTOOL_STEPQ_STEP);
        cr_expect_eq(x->index, i);
        pcaptool_qstep_unref(x);
    }
    cr_expect_eq(pcaptool_stepq_pop(&q, &x, pcaptool_stepq_now() + 20000000u), PCAPTOOL_STEPQ_TIMEOUT);
    pcaptool_stepq_close(&q, 42);
    cr_expect_eq(pcaptool_stepq_pop(&q, &x, pcaptool_stepq_now() + 1000000000u), PCAPTOOL_STEPQ_END);
    cr_expect_eq(q.t_detach, 42);
    pcaptool_stepq_destroy(&q);
}

Test(stepq, byte_limit_holds_back_but_never_below_one_step)
{
    pcaptool_stepq q;
    cr_assert_eq(pcaptool_stepq_init(&q, 100, 1000), FBW_OK);
    /* one step larger than the byte limit still goes in an empty queue */
    cr_assert_eq(pcaptool_stepq_push(&q, step(1, 5000, 1), pcaptool_stepq_now(), 0), FBW_OK);
    pcaptool_qstep *small = step(2, 10, 1);
    cr_expect_eq(pcaptool_stepq_push(&q, small, pcaptool_stepq_now() + 10000000u, 0), FBW_AGAIN);
    pcaptool_qstep *x;
    cr_assert_eq(pcaptool_stepq_pop(&q, &x, pcaptool_stepq_now()), PCAPTOOL_STEPQ_STEP);
    pcaptool_qstep_unref(x);
    cr_expect_eq(pcaptool_stepq_push(&q, small, pcaptool_stepq_now(), 0), FBW_OK);
    pcaptool_stepq_destroy(&q); /* drops the queued reference */
}

Test(stepq, a_shared_step_lives_until_its_last_queue_lets_go)
{
    pcaptool_stepq a, b;
    cr_assert_eq(pcaptool_stepq_init(&a, 4, 0), FBW_OK);
    cr_assert_eq(pcaptool_stepq_init(&b, 4, 0), FBW_OK);
    pcaptool_qstep *s = step(7, 100, 2);
    cr_assert_eq(pcaptool_stepq_push(&a, s, pcaptool_stepq_now(), 0), FBW_OK);
    cr_assert_eq(pcaptool_stepq_push(&b, s, pcaptool_stepq_now(), 0), FBW_OK);
    pcaptool_qstep *x;
    cr_assert_eq(pcaptool_stepq_pop(&a, &x, pcaptool_stepq_now()), PCAPTOOL_STEPQ_STEP);
    pcaptool_qstep_unref(x);
    cr_expect_eq(atomic_load(&s->refs), 1);
    cr_expect_str_eq((const char *)s->s.data, "xxxxxxxxxx" "xxxxxxxxxx" "xxxxxxxxxx" "xxxxxxxxxx"
                                              "xxxxxxxxxx" "xxxxxxxxxx" "xxxxxxxxxx" "xxxxxxxxxx"
                                              "xxxxxxxxxx" "xxxxxxxxxx");
    pcaptool_stepq_destroy(
        &b); /* the last reference: freed (ASan/valgrind would see a leak else) */
    pcaptool_stepq_destroy(&a);
}

static void *consumer(void *arg)
{
    pcaptool_stepq *q = arg;
    pcaptool_qstep *x;
    int got = pcaptool_stepq_pop(q, &x, pcaptool_stepq_now() + 5000000000u);
    if (got == PCAPTOOL_STEPQ_STEP)
        pcaptool_qstep_unref(x);
    return (void *)(intptr_t)got;
}

Test(stepq, a_consumer_waiting_on_an_empty_queue_is_starving_until_a_step_comes)
{
    pcaptool_stepq q;
    cr_assert_eq(pcaptool_stepq_init(&q, 4, 0), FBW_OK);
    cr_expect(!pcaptool_stepq_starving(&q));
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, consumer, &q), 0);
    for (int i = 0; i < 500 && !pcaptool_stepq_starving(&q); i++)
        usleep(2000);
    cr_expect(pcaptool_stepq_starving(&q));
    cr_assert_eq(pcaptool_stepq_push(&q, step(1, 1, 1), pcaptool_stepq_now(), 0), FBW_OK);
    void *got;
    pthread_join(t, &got);
    cr_expect_eq((intptr_t)got, PCAPTOOL_STEPQ_STEP);
    cr_expect(!pcaptool_stepq_starving(&q));
    cr_expect_eq(atomic_load(&q.popped), 1);
    /* abandoned: pushes drop the step at once, even when the queue would be full */
    pcaptool_stepq_abandon(&q);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(pcaptool_stepq_push(&q, step(2, 1, 1), pcaptool_stepq_now(), 0), FBW_OK);
    pcaptool_stepq_destroy(&q);
}
