/* SPDX-License-Identifier: MIT */
/* lead.c - the wake-up lead (lead.h): a quantile of the timer's recent lateness. */
#include "lead.h"

#include <string.h>

/* The 9th decile of the recent lateness: a lead that makes nine wake-ups in ten early enough,
 * rather than the median, because a late delivery costs a whole round trip's accuracy while an
 * early one costs only CPU. Plus a margin for the work between waking and writing. */
#define LEAD_QUANTILE_PERMILLE 900
#define LEAD_MARGIN_NS 5000ull

void fbl_lead_init(fbl_lead *l, int learn, uint64_t ns)
{
    memset(l, 0, sizeof *l);
    l->learn = learn;
    if (learn)
        l->max_ns = ns;
    else
        l->fixed_ns = l->lead_ns = ns;
}

static uint64_t quantile(const fbl_lead *l)
{
    uint32_t v[FBL_LEAD_SAMPLES];
    unsigned n = l->n;
    memcpy(v, l->late_ns, n * sizeof *v);
    for (unsigned i = 1; i < n; i++) { /* insertion sort: at most 32 values */
        uint32_t x = v[i];
        unsigned j = i;
        for (; j && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    return v[(n - 1) * LEAD_QUANTILE_PERMILLE / 1000];
}

void fbl_lead_note(fbl_lead *l, uint64_t late_ns)
{
    if (!l->learn)
        return;
    l->late_ns[l->pos] = late_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)late_ns;
    l->pos = (l->pos + 1) % FBL_LEAD_SAMPLES;
    if (l->n < FBL_LEAD_SAMPLES)
        l->n++;
    uint64_t lead = quantile(l) + LEAD_MARGIN_NS;
    l->lead_ns = lead < l->max_ns ? lead : l->max_ns;
}
