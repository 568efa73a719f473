/* SPDX-License-Identifier: MIT */
/* guard.c - guard-page buffers (see feed.h); no Criterion, so fuzz targets can use it too. */
#include "feed.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void fbw_guard_init(fbw_guard *g, size_t cap)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t room = (cap + page - 1) / page * page;
    if (room == 0)
        room = page;
    g->size = room + page;
    g->room = room;
    g->map = mmap(NULL, g->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g->map == MAP_FAILED)
        abort();
    if (mprotect(g->map + room, page, PROT_NONE) != 0)
        abort();
}

void fbw_guard_free(fbw_guard *g)
{
    if (g->map && g->map != MAP_FAILED)
        munmap(g->map, g->size);
    g->map = NULL;
}

const uint8_t *fbw_guard_place(fbw_guard *g, const void *p, size_t n)
{
    if (n > g->room)
        abort();
    uint8_t *dst = g->map + g->room - n;
    if (n)
        memcpy(dst, p, n);
    return dst;
}
