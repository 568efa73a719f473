/* SPDX-License-Identifier: MIT */
/* test_link_lead.c - fbwire-link's wake-up lead (tools/fbwire-link/lead.c): a fixed lead stays
 * put, a learnt one is the 9th decile of the timer's recent lateness plus a margin, within its
 * cap, and forgets what is older than its window. */
#include <criterion/criterion.h>

#include "lead.h"

#define US 1000ull

Test(link_lead, fixed_lead_ignores_what_the_timer_does)
{
    fbl_lead l;
    fbl_lead_init(&l, 0, 30 * US);
    cr_assert_eq(fbl_lead_ns(&l), 30 * US);
    for (int i = 0; i < 100; i++)
        fbl_lead_note(&l, 500 * US);
    cr_assert_eq(fbl_lead_ns(&l), 30 * US);
}

Test(link_lead, learnt_lead_starts_at_zero)
{
    fbl_lead l;
    fbl_lead_init(&l, 1, 100 * US);
    cr_assert_eq(fbl_lead_ns(&l), 0);
}

Test(link_lead, learnt_lead_is_the_ninth_decile_plus_margin)
{
    fbl_lead l;
    fbl_lead_init(&l, 1, 1000 * US);
    /* 32 samples, 1..32 us, in a scrambled order: index (31 * 900) / 1000 = 27 -> 28 us */
    for (unsigned i = 0; i < FBL_LEAD_SAMPLES; i++)
        fbl_lead_note(&l, (uint64_t)((i * 7) % FBL_LEAD_SAMPLES + 1) * US);
    cr_assert_eq(fbl_lead_ns(&l), 28 * US + 5 * US, "lead %llu ns",
                 (unsigned long long)fbl_lead_ns(&l));
}

Test(link_lead, one_sample_is_its_own_quantile)
{
    fbl_lead l;
    fbl_lead_init(&l, 1, 1000 * US);
    fbl_lead_note(&l, 40 * US);
    cr_assert_eq(fbl_lead_ns(&l), 45 * US);
}

Test(link_lead, learnt_lead_stays_within_its_cap)
{
    fbl_lead l;
    fbl_lead_init(&l, 1, 100 * US);
    for (int i = 0; i < 40; i++)
        fbl_lead_note(&l, 5000 * US);
    cr_assert_eq(fbl_lead_ns(&l), 100 * US);
    fbl_lead_note(&l, UINT64_MAX); /* a clock jump: clamped, not wrapped */
    cr_assert_eq(fbl_lead_ns(&l), 100 * US);
}

Test(link_lead, old_lateness_is_forgotten)
{
    fbl_lead l;
    fbl_lead_init(&l, 1, 1000 * US);
    for (int i = 0; i < FBL_LEAD_SAMPLES; i++)
        fbl_lead_note(&l, 200 * US); /* an idle machine */
    cr_assert_eq(fbl_lead_ns(&l), 205 * US);
    /* It got busy. With five old samples left they still hold the 9th decile (index 27 of 32)... */
    for (int i = 0; i < FBL_LEAD_SAMPLES - 5; i++)
        fbl_lead_note(&l, 10 * US);
    cr_assert_eq(fbl_lead_ns(&l), 205 * US);
    /* ...with four, the new lateness decides. */
    fbl_lead_note(&l, 10 * US);
    cr_assert_eq(fbl_lead_ns(&l), 15 * US);
}
