/* SPDX-License-Identifier: MIT */
/* replay_slots.c - a replay connection's transaction and statement slots (replay_slots.h). */
#include "replay_slots.h"

#include <stdlib.h>
#include <string.h>

/* Grow a slot table from had to n elements (zeroed). */
static int grow_table(void **a, size_t had, size_t n, size_t size)
{
    void *p = realloc(*a, n * size);
    if (!p)
        return -1;
    memset((char *)p + had * size, 0, (n - had) * size);
    *a = p;
    return 0;
}

static size_t grown(size_t have, size_t need)
{
    size_t n = have * 2 > need ? have * 2 : need;
    return n < 16 ? 16 : n;
}

static int new_tx(rp_slots *sl, int t)
{
    fbw_err e;
    if (sl->ntxpool)
        sl->tx[t] = sl->txpool[--sl->ntxpool]; /* ended: it starts again as it is */
    else if (fbw_tx_new(sl->c, &sl->tx[t], &e))
        return -1;
    return 0;
}

int rp_slots_ensure(rp_slots *sl, int tx, int stmt)
{
    size_t t = tx > 0 ? (size_t)tx : 0, st = stmt > 0 ? (size_t)stmt : 0;
    if (!sl->tx || t > sl->ntx) {
        size_t had = sl->tx ? sl->ntx + 1 : 0, n = grown(sl->ntx, t);
        if (grow_table((void **)&sl->tx, had, n + 1, sizeof *sl->tx) ||
            grow_table((void **)&sl->tx_start, had, n + 1, sizeof *sl->tx_start) ||
            grow_table((void **)&sl->tx_orig, had, n + 1, sizeof *sl->tx_orig))
            return -1;
        sl->ntx = n;
    }
    if (!sl->st || st > sl->nst) {
        size_t had = sl->st ? sl->nst + 1 : 0, n = grown(sl->nst, st);
        if (grow_table((void **)&sl->st, had, n + 1, sizeof *sl->st) ||
            grow_table((void **)&sl->slot_exec, had, n + 1, sizeof *sl->slot_exec) ||
            grow_table((void **)&sl->ex, had, n + 1, sizeof *sl->ex) ||
            grow_table((void **)&sl->sql, had, n + 1, sizeof *sl->sql))
            return -1;
        sl->nst = n;
    }
    if (t && !sl->tx[t] && sl->c)
        return new_tx(sl, (int)t);
    return 0;
}

int rp_slots_small_tx(rp_slots *sl, int orig)
{
    if (orig <= 0)
        return orig;
    for (size_t t = 1; sl->tx_orig && t <= sl->ntx && (int)t <= sl->tx_used; t++)
        if (sl->tx_orig[t] == orig)
            return (int)t;
    int t = sl->ntx_free ? sl->tx_free[--sl->ntx_free] : sl->tx_used + 1;
    if (rp_slots_ensure(sl, t, 0))
        return -1;
    if (t > sl->tx_used)
        sl->tx_used = t;
    sl->tx_orig[t] = orig;
    return t;
}

int rp_slots_orig_tx(const rp_slots *sl, int t)
{
    return t > 0 && sl->tx_orig && (size_t)t <= sl->ntx && sl->tx_orig[t] ? sl->tx_orig[t] : t;
}

void rp_slots_release(rp_slots *sl, int t)
{
    if (rp_grow_for_one((void **)&sl->tx_free, &sl->tx_free_cap, sl->ntx_free, sizeof *sl->tx_free))
        return; /* the number is not reused */
    sl->tx_orig[t] = 0;
    sl->tx_free[sl->ntx_free++] = t;
}

void rp_slots_tx_ended(rp_slots *sl, int t)
{
    if (!sl->tx[t] || fbw_tx_state(sl->tx[t]) != FBW_TX_ENDED || sl->tx_start[t])
        return;
    if (rp_grow_for_one((void **)&sl->txpool, &sl->txpool_cap, sl->ntxpool, sizeof *sl->txpool))
        return; /* kept where it is */
    sl->txpool[sl->ntxpool++] = sl->tx[t];
    sl->tx[t] = NULL;
    rp_slots_release(sl, t);
}

fbw_tx *rp_slots_tx(const rp_slots *sl, int t)
{
    return t ? sl->tx[t] : NULL;
}

void rp_slots_free(rp_slots *sl)
{
    for (size_t k = 1; sl->st && k <= sl->nst; k++) {
        fbw_stmt_free(sl->st[k]);
        free(sl->sql[k]);
        free(sl->ex[k]);
    }
    for (size_t t = 1; sl->tx && t <= sl->ntx; t++)
        fbw_tx_free(sl->tx[t]);
    for (size_t k = 0; k < sl->ntxpool; k++)
        fbw_tx_free(sl->txpool[k]);
    free(sl->txpool);
    free(sl->st);
    free(sl->sql);
    free(sl->ex);
    free(sl->tx);
    free(sl->tx_start);
    free(sl->tx_orig);
    free(sl->tx_free);
    free(sl->slot_exec);
    free(sl->pend);
    memset(sl, 0, sizeof *sl);
}
