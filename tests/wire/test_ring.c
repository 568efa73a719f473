/* SPDX-License-Identifier: MIT */
/* test_ring.c - the growing FIFO (base/ring.h): order kept across wrap-around and across growth
 * while the elements wrap, pop from empty, clear, the element limit (the decoder's), element sizes
 * that are not a power of two, sizes and counts whose bytes would overflow refused before any
 * allocation, and a long random run against a plain array. */
#include <criterion/criterion.h>

#include "err.h"
#include "ring.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* 12 bytes, like conn.c's and dec.c's entries: an op and what it refers to. */
typedef struct item {
    int32_t op;
    uint32_t a, b;
} item;

static item mk(uint32_t i) { return (item){(int32_t)i, i * 3u, ~i}; }

static void push_ok(fbw_ring *r, uint32_t i)
{
    item x = mk(i);
    cr_assert_eq(fbw_ring_push(r, &x), FBW_OK, "push %u", i);
}

static void pop_is(fbw_ring *r, uint32_t i)
{
    item x;
    cr_assert_eq(fbw_ring_pop(r, &x), 1, "pop %u: empty", i);
    item want = mk(i);
    cr_assert_eq(memcmp(&x, &want, sizeof x), 0, "pop: got op %d, want %u", x.op, i);
}

/* Every element from the oldest (first) to the newest, by index. */
static void holds(const fbw_ring *r, uint32_t first, size_t n)
{
    cr_assert_eq(fbw_ring_len(r), n);
    for (size_t i = 0; i < n; i++) {
        const item *x = fbw_ring_at(r, i);
        cr_assert_not_null(x, "at %zu", i);
        cr_assert_eq(x->op, (int32_t)(first + i), "at %zu: op %d", i, x->op);
        cr_assert_eq(x->b, ~(uint32_t)(first + i));
    }
    cr_assert_null(fbw_ring_at(r, n), "nothing past the newest");
}

Test(ring, fifo_and_wrap_around)
{
    fbw_ring r;
    fbw_ring_init(&r, sizeof(item), 0);
    holds(&r, 0, 0);
    for (uint32_t i = 0; i < 10; i++)
        push_ok(&r, i);
    for (uint32_t i = 0; i < 6; i++)
        pop_is(&r, i);
    /* 16 slots, the oldest at slot 6: these run past the last slot and on from slot 0 */
    for (uint32_t i = 10; i < 22; i++)
        push_ok(&r, i);
    cr_assert_eq(r.cap, 16, "no growth while there was room");
    holds(&r, 6, 16);
    for (uint32_t i = 6; i < 22; i++)
        pop_is(&r, i);
    holds(&r, 0, 0);
    fbw_ring_free(&r);
}

Test(ring, growth_while_wrapped)
{
    fbw_ring r;
    fbw_ring_init(&r, sizeof(item), 0);
    for (uint32_t i = 0; i < 16; i++)
        push_ok(&r, i);
    for (uint32_t i = 0; i < 11; i++)
        pop_is(&r, i);
    for (uint32_t i = 16; i < 27; i++) /* full again, the oldest at slot 11, the newest at 10 */
        push_ok(&r, i);
    cr_assert_eq(r.cap, 16);
    cr_assert_eq(r.head, 11);
    push_ok(&r, 27); /* grows: both runs move, oldest first */
    cr_assert_eq(r.cap, 32);
    holds(&r, 11, 17);
    for (uint32_t i = 28; i < 100; i++)
        push_ok(&r, i);
    cr_assert_eq(r.cap, 128);
    holds(&r, 11, 89);
    for (uint32_t i = 11; i < 100; i++)
        pop_is(&r, i);
    fbw_ring_free(&r);
}

Test(ring, pop_from_empty)
{
    fbw_ring r;
    fbw_ring_init(&r, sizeof(item), 0);
    item x = mk(77);
    cr_assert_eq(fbw_ring_pop(&r, &x), 0, "never pushed: nothing to pop");
    cr_assert_eq(x.op, 77, "out untouched");
    cr_assert_eq(fbw_ring_pop(&r, NULL), 0);
    push_ok(&r, 1);
    cr_assert_eq(fbw_ring_pop(&r, NULL), 1, "NULL out drops the element");
    cr_assert_eq(fbw_ring_pop(&r, &x), 0, "emptied: nothing to pop");
    cr_assert_eq(x.op, 77);
    cr_assert_eq(fbw_ring_len(&r), 0);
    cr_assert_null(fbw_ring_at(&r, 0));
    fbw_ring_free(&r);
    cr_assert_eq(fbw_ring_pop(&r, &x), 0, "freed: empty");
}

Test(ring, clear_keeps_the_slots)
{
    fbw_ring r;
    fbw_ring_init(&r, sizeof(item), 0);
    for (uint32_t i = 0; i < 20; i++)
        push_ok(&r, i);
    fbw_ring_clear(&r);
    holds(&r, 0, 0);
    cr_assert_eq(r.cap, 32);
    cr_assert_eq(fbw_ring_pop(&r, NULL), 0);
    push_ok(&r, 5);
    holds(&r, 5, 1);
    fbw_ring_free(&r);
    push_ok(&r, 6); /* a freed ring is empty and usable again */
    holds(&r, 6, 1);
    fbw_ring_free(&r);
}

Test(ring, limit_refused_and_ring_unchanged)
{
    fbw_ring r;
    fbw_ring_init(&r, sizeof(item), 20); /* not a power of two: the last growth stops at it */
    for (uint32_t i = 0; i < 20; i++)
        push_ok(&r, i);
    cr_assert_eq(r.cap, 20);
    item x = mk(99);
    cr_assert_eq(fbw_ring_push(&r, &x), FBW_E_USAGE, "the 21st is refused");
    holds(&r, 0, 20);
    pop_is(&r, 0);
    push_ok(&r, 20); /* room again, in the slot just freed */
    holds(&r, 1, 20);
    fbw_ring_free(&r);

    fbw_ring_init(&r, sizeof(item), 3); /* below the first growth */
    for (uint32_t i = 0; i < 3; i++)
        push_ok(&r, i);
    cr_assert_eq(fbw_ring_push(&r, &x), FBW_E_USAGE);
    cr_assert_eq(r.cap, 3);
    holds(&r, 0, 3);
    fbw_ring_free(&r);
}

Test(ring, odd_element_size)
{
    fbw_ring r;
    fbw_ring_init(&r, 7, 0);
    unsigned char e[7];
    for (int i = 0; i < 40; i++) {
        memset(e, i, sizeof e);
        cr_assert_eq(fbw_ring_push(&r, e), FBW_OK);
        if (i % 3 == 0)
            cr_assert_eq(fbw_ring_pop(&r, e), 1);
    }
    /* pushed 0..39, popped 14 of them, the first ones */
    for (int i = 14; i < 40; i++) {
        cr_assert_eq(fbw_ring_pop(&r, e), 1);
        for (int k = 0; k < 7; k++)
            cr_assert_eq(e[k], i, "element %d byte %d", i, k);
    }
    cr_assert_eq(fbw_ring_pop(&r, e), 0);
    fbw_ring_free(&r);
}

/* Sizes whose byte count does not fit a size_t are refused before malloc is asked. */
Test(ring, huge_sizes_refused)
{
    static unsigned char one[1];
    fbw_ring r;
    fbw_ring_init(&r, SIZE_MAX / 8, 0); /* 16 of them overflow */
    cr_assert_eq(fbw_ring_push(&r, one), FBW_E_NOMEM);
    cr_assert_eq(fbw_ring_len(&r), 0);
    cr_assert_null(r.items);
    fbw_ring_free(&r);

    fbw_ring_init(&r, SIZE_MAX, 0);
    cr_assert_eq(fbw_ring_push(&r, one), FBW_E_NOMEM);
    cr_assert_eq(fbw_ring_len(&r), 0);
    fbw_ring_free(&r);

    /* A ring as if it were full at a count whose doubling overflows (no slots behind it: the
     * refusal must come before any element is touched). */
    fbw_ring_init(&r, 2, 0);
    r.cap = r.len = SIZE_MAX / 2 + 1;
    cr_assert_eq(fbw_ring_push(&r, one), FBW_E_NOMEM);
    cr_assert_eq(r.len, SIZE_MAX / 2 + 1, "unchanged");
    r.cap = r.len = SIZE_MAX / 4 + 1; /* doubles without overflow, its bytes do not */
    cr_assert_eq(fbw_ring_push(&r, one), FBW_E_NOMEM);
    cr_assert_eq(r.len, SIZE_MAX / 4 + 1, "unchanged");
    r.cap = r.len = 0;
    fbw_ring_free(&r);
}

/* A long random run of pushes and pops against a plain array: growth at every wrap position. */
Test(ring, random_against_an_array)
{
    enum { OPS = 200000, MAXN = 5000 };
    uint32_t *model = malloc(sizeof(uint32_t) * OPS);
    cr_assert_not_null(model);
    size_t lo = 0, hi = 0;
    uint32_t next = 0;
    fbw_ring r;
    fbw_ring_init(&r, sizeof(item), MAXN);
    srand(17);
    for (int k = 0; k < OPS; k++) {
        /* drift: phases that mostly fill, phases that mostly drain */
        int fill = (k / 5000) % 2 == 0 ? 3 : 1;
        if (rand() % 4 < fill) {
            item x = mk(next);
            int rc = fbw_ring_push(&r, &x);
            if (hi - lo == MAXN) {
                cr_assert_eq(rc, FBW_E_USAGE);
            } else {
                cr_assert_eq(rc, FBW_OK);
                model[hi++] = next;
            }
            next++;
        } else if (hi == lo) {
            cr_assert_eq(fbw_ring_pop(&r, NULL), 0);
        } else {
            pop_is(&r, model[lo++]);
        }
        cr_assert_eq(fbw_ring_len(&r), hi - lo);
    }
    for (size_t i = 0; i < hi - lo; i += 97) {
        const item *x = fbw_ring_at(&r, i);
        cr_assert_eq(x->op, (int32_t)model[lo + i]);
    }
    fbw_ring_free(&r);
    free(model);
}
