/* SPDX-License-Identifier: MIT */
/* replay_slots.h - one replay connection's slot tables: the capture names transactions and
 * statements by slot (workload.h); the replay keeps, per slot, the fbwire object standing for it
 * and what it needs to know about it. Transaction slots are renumbered to small numbers that are
 * reused once a transaction ended, so the tables follow the open transactions, not the capture's
 * count of them; ended transactions go to a pool for reuse (their generation kept, so a statement
 * that still points to one sees its cursor gone). Tables grow as the stream names new slots.
 *
 * Owns every table and every fbw_tx, fbw_stmt and rp_exec in them; rp_slots_free releases them.
 * Pure but for fbwire's own objects (no I/O: a transaction is only initialised here). */
#ifndef PCAPTOOL_REPLAY_SLOTS_H
#define PCAPTOOL_REPLAY_SLOTS_H

#include "replay_results.h"
#include "stmt.h"
#include "tx.h"

#include <stddef.h>

typedef struct rp_slots {
    fbw_conn *c; /* NULL: no connection, no transactions are made */
    /* by small transaction number, ntx + 1 each */
    fbw_tx **tx;
    size_t *tx_start; /* its start step (1-based) while its reply is unchecked */
    int *tx_orig;     /* the capture's slot it stands for, 0 free */
    size_t ntx;
    int tx_used;  /* small numbers handed out so far */
    int *tx_free; /* small numbers free again */
    size_t ntx_free, tx_free_cap;
    fbw_tx **txpool; /* ended transactions, for reuse */
    size_t ntxpool, txpool_cap;
    int *pend; /* small numbers whose start reply is unchecked */
    size_t npend, pend_cap;
    /* by statement slot, nst + 1 each */
    fbw_stmt **st;
    size_t *slot_exec; /* its current execute step (1-based) */
    rp_exec **ex;      /* its execution being measured */
    char **sql;        /* the SQL of its latest prepare */
    size_t nst;
} rp_slots;

/* Tables hold transaction number tx and statement slot stmt (0: none); the transaction exists
 * when there is a connection. 0, or -1 when out of memory. */
int rp_slots_ensure(rp_slots *sl, int tx, int stmt);
/* The small number standing for the capture's transaction slot orig (0: none, -1: out of
 * memory): the one it has, else a free one, else the next. */
int rp_slots_small_tx(rp_slots *sl, int orig);
/* The capture's slot small number t stands for (t itself when none). */
int rp_slots_orig_tx(const rp_slots *sl, int t);
/* Transaction t ended: it goes back to the pool and its number is free again (when its start
 * was checked and it is ended). */
void rp_slots_tx_ended(rp_slots *sl, int t);
/* Number t is free again (the pool step of rp_slots_tx_ended). */
void rp_slots_release(rp_slots *sl, int t);
/* The transaction of small number t, NULL for 0. */
fbw_tx *rp_slots_tx(const rp_slots *sl, int t);
void rp_slots_free(rp_slots *sl);

#endif
