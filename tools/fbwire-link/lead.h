/* SPDX-License-Identifier: MIT */
/* lead.h - how early fbwire-link wakes before a chunk is due. A sleeping process is woken by its
 * timer some microseconds late (about 10 us on a busy machine, 50-200 us on an idle virtual
 * machine, where a halted vCPU has to be scheduled again by the host). The relay wakes `lead`
 * before the due time and polls through the rest, so that the chunk leaves on time. The lead is
 * either fixed (--spin D) or learnt (--spin auto, the default): a high quantile of the timer's
 * recent lateness, capped, so an idle machine gets the lead it needs and a busy one spends no CPU
 * polling. No clock and no I/O here: the loop feeds it what it measured. */
#ifndef FBL_LEAD_H
#define FBL_LEAD_H

#include <stdint.h>

#define FBL_LEAD_SAMPLES 32
#define FBL_LEAD_AUTO_MAX_NS 100000ull /* the default cap of a learnt lead: 100 us */

typedef struct fbl_lead {
    int learn;                          /* 1: learnt from the samples, 0: fixed */
    uint64_t fixed_ns;                  /* the lead when fixed */
    uint64_t max_ns;                    /* the cap when learnt */
    uint32_t late_ns[FBL_LEAD_SAMPLES]; /* the latest wake-up lateness, a ring */
    unsigned n, pos;
    uint64_t lead_ns; /* the current lead */
} fbl_lead;

/* A fixed lead (learn 0: `ns` is the lead) or a learnt one (learn 1: `ns` is its cap). */
void fbl_lead_init(fbl_lead *l, int learn, uint64_t ns);
/* The timer woke the loop `late_ns` after the time it was armed for. */
void fbl_lead_note(fbl_lead *l, uint64_t late_ns);
/* How long before a due time to wake: the learnt quantile plus a margin, within the cap. */
static inline uint64_t fbl_lead_ns(const fbl_lead *l)
{
    return l->lead_ns;
}

#endif
