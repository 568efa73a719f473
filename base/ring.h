/* SPDX-License-Identifier: MIT */
/* ring.h - a growing FIFO of fixed-size elements (internal: not part of the installed API).
 *
 * Replies come back in request order, so three places keep a queue of what is still to be
 * answered: the connection (conn.c), the session decoder (dec.c) and fbwire-pcap's workload
 * rebuild. This is that queue, written once. Elements are copied in and out by value; an element
 * stays where it is until it is popped or the ring grows (growth moves every element, so a pointer
 * from fbw_ring_at is good until the next push).
 *
 * Growth doubles the capacity (16 first) and is checked: it never passes the ring's limit and never
 * lets the byte size overflow size_t, so a huge element size or count is refused, not wrapped. */
#ifndef FBW_RING_H
#define FBW_RING_H

#include <stddef.h>

typedef struct fbw_ring {
    unsigned char *items;
    size_t size;            /* bytes per element */
    size_t max;             /* most elements it may hold */
    size_t cap, head, len;  /* slots allocated, index of the oldest, elements held */
} fbw_ring;

/* An empty ring of elements of size bytes (> 0) holding at most max of them (0: no limit but
 * memory). Allocates nothing until the first push. */
void fbw_ring_init(fbw_ring *r, size_t size, size_t max);
/* Frees the slots; the ring is empty and usable again (same size and limit). */
void fbw_ring_free(fbw_ring *r);
/* Append a copy of item (size bytes) at the tail. FBW_OK; FBW_E_USAGE when the ring holds its
 * limit already; FBW_E_NOMEM when the memory cannot be had (or its size would overflow). On
 * failure the ring is unchanged. */
int fbw_ring_push(fbw_ring *r, const void *item);
/* Remove the oldest element, copying it to out (may be NULL). 1 when one was removed, 0 when the
 * ring was empty (out untouched). */
int fbw_ring_pop(fbw_ring *r, void *out);
/* The element i places from the oldest (0: the oldest, len - 1: the newest), NULL past the end. */
void *fbw_ring_at(const fbw_ring *r, size_t i);
/* Elements held. */
size_t fbw_ring_len(const fbw_ring *r);
/* Drop every element, keeping the slots. */
void fbw_ring_clear(fbw_ring *r);

#endif
