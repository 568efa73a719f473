/* SPDX-License-Identifier: MIT */
/* ring.c - a growing FIFO of fixed-size elements (ring.h). */
#include "ring.h"

#include "err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RING_MIN 16

void fbw_ring_init(fbw_ring *r, size_t size, size_t max)
{
    memset(r, 0, sizeof *r);
    r->size = size;
    r->max = max;
}

void fbw_ring_free(fbw_ring *r)
{
    free(r->items);
    r->items = NULL;
    r->cap = r->head = r->len = 0;
}

static unsigned char *slot(const fbw_ring *r, size_t i)
{
    return r->items + ((r->head + i) % r->cap) * r->size;
}

/* Double the slots (RING_MIN first, never past the limit), oldest element moved to slot 0. */
static int grow(fbw_ring *r)
{
    size_t limit = r->max ? r->max : SIZE_MAX;
    if (r->cap >= limit)
        return FBW_E_USAGE;
    size_t cap = r->cap == 0 ? RING_MIN : r->cap > SIZE_MAX / 2 ? SIZE_MAX : r->cap * 2;
    if (cap > limit)
        cap = limit;
    if (r->size == 0 || cap > SIZE_MAX / r->size)
        return FBW_E_NOMEM;
    unsigned char *items = malloc(cap * r->size);
    if (!items)
        return FBW_E_NOMEM;
    /* The held elements are at most two runs: head..end of the slots, then 0..the tail. */
    size_t first = r->len < r->cap - r->head ? r->len : r->cap - r->head;
    if (r->len) {
        memcpy(items, r->items + r->head * r->size, first * r->size);
        memcpy(items + first * r->size, r->items, (r->len - first) * r->size);
    }
    free(r->items);
    r->items = items;
    r->cap = cap;
    r->head = 0;
    return FBW_OK;
}

int fbw_ring_push(fbw_ring *r, const void *item)
{
    if (r->len == r->cap) {
        int rc = grow(r);
        if (rc)
            return rc;
    }
    memcpy(slot(r, r->len), item, r->size);
    r->len++;
    return FBW_OK;
}

int fbw_ring_pop(fbw_ring *r, void *out)
{
    if (r->len == 0)
        return 0;
    if (out)
        memcpy(out, slot(r, 0), r->size);
    r->head = (r->head + 1) % r->cap;
    r->len--;
    return 1;
}

void *fbw_ring_at(const fbw_ring *r, size_t i)
{
    return i < r->len ? slot(r, i) : NULL;
}

size_t fbw_ring_len(const fbw_ring *r) { return r->len; }

void fbw_ring_clear(fbw_ring *r) { r->head = r->len = 0; }
