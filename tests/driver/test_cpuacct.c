/* SPDX-License-Identifier: MIT */
/* test_cpuacct.c - the report's client CPU sampling and per-class estimate (driver/cpuacct.h). */
#include "cpuacct.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

Test(cpuacct, mode_values)
{
    cr_expect_eq(sbdrv_cpu_mode_parse(NULL), SBDRV_CPU_SAMPLED);
    cr_expect_eq(sbdrv_cpu_mode_parse(""), SBDRV_CPU_SAMPLED);
    cr_expect_eq(sbdrv_cpu_mode_parse("sampled"), SBDRV_CPU_SAMPLED);
    cr_expect_eq(sbdrv_cpu_mode_parse("Every-Call"), SBDRV_CPU_EVERY_CALL);
    cr_expect_eq(sbdrv_cpu_mode_parse("off"), -2);
    cr_expect_eq(sbdrv_cpu_mode_parse("sometimes"), -1);
    cr_expect_str_eq(sbdrv_cpu_mode_name(SBDRV_CPU_EVERY_CALL), "every-call");
    cr_expect_str_eq(sbdrv_cpu_mode_name(SBDRV_CPU_SAMPLED), "sampled");
}

Test(cpuacct, every_call_reads_every_call)
{
    sbdrv_cpu_sampler s;
    sbdrv_cpu_sampler_init(&s, SBDRV_CPU_EVERY_CALL, 1);
    for (int i = 0; i < 10000; i++)
        cr_assert_eq(sbdrv_cpu_sampler_next(&s), SBDRV_CPU_READ, "call %d", i);
}

/* The warm-up is read in full, then about one call in N is sampled. */
Test(cpuacct, sampled_rate)
{
    sbdrv_cpu_sampler s;
    sbdrv_cpu_sampler_init(&s, SBDRV_CPU_SAMPLED, 42);
    for (unsigned i = 0; i < SBDRV_CPU_WARM_CALLS; i++)
        cr_assert_eq(sbdrv_cpu_sampler_next(&s), SBDRV_CPU_READ);
    const unsigned n = 160000;
    unsigned sampled = 0, gap = 0, max_gap = 0;
    for (unsigned i = 0; i < n; i++) {
        sbdrv_cpu_how h = sbdrv_cpu_sampler_next(&s);
        cr_assert(h == SBDRV_CPU_SAMPLE || h == SBDRV_CPU_SKIP);
        gap++;
        if (h == SBDRV_CPU_SAMPLE) {
            sampled++;
            max_gap = gap > max_gap ? gap : max_gap;
            gap = 0;
        }
    }
    double want = (double)n / SBDRV_CPU_SAMPLE_EVERY;
    cr_expect(sampled > want * 0.95 && sampled < want * 1.05, "%u sampled of %u", sampled, n);
    cr_expect_leq(max_gap, 2 * SBDRV_CPU_SAMPLE_EVERY - 1);
}

/* A workload repeating with the sampling period itself (an oltp_read_only event is 16 calls)
 * must still have every position sampled at the same rate: a fixed 1-in-16 would see one. */
Test(cpuacct, periodic_workload_sees_every_position)
{
    const unsigned periods[] = {2, 16, 31, 32};
    for (size_t p = 0; p < sizeof periods / sizeof *periods; p++) {
        unsigned period = periods[p], hits[32] = {0};
        sbdrv_cpu_sampler s;
        sbdrv_cpu_sampler_init(&s, SBDRV_CPU_SAMPLED, 7 + p);
        const unsigned calls = 16000u * period;
        for (unsigned i = 0; i < calls; i++)
            if (sbdrv_cpu_sampler_next(&s) == SBDRV_CPU_SAMPLE)
                hits[i % period]++;
        double want = 16000.0 / SBDRV_CPU_SAMPLE_EVERY; /* per position */
        for (unsigned k = 0; k < period; k++)
            cr_expect(hits[k] > want * 0.85 && hits[k] < want * 1.15,
                      "period %u, position %u: %u samples, want about %.0f", period, k, hits[k], want);
    }
}

Test(cpuacct, seeds_differ)
{
    sbdrv_cpu_sampler a, b;
    sbdrv_cpu_sampler_init(&a, SBDRV_CPU_SAMPLED, 0x1000);
    sbdrv_cpu_sampler_init(&b, SBDRV_CPU_SAMPLED, 0x1040);
    int differ = 0;
    for (int i = 0; i < 2000; i++)
        differ |= sbdrv_cpu_sampler_next(&a) != sbdrv_cpu_sampler_next(&b);
    cr_expect(differ, "neighbouring connections sample the same calls");
}

Test(cpuacct, estimate)
{
    sbdrv_cpu_cls c;
    memset(&c, 0, sizeof c);
    cr_expect_eq(sbdrv_cpu_estimate(&c), 0);
    sbdrv_cpu_add(&c, SBDRV_CPU_UNTIMED, 999); /* not a timed call: nothing */
    cr_expect_eq(sbdrv_cpu_calls(&c), 0);
    sbdrv_cpu_add(&c, SBDRV_CPU_READ, 100);
    sbdrv_cpu_add(&c, SBDRV_CPU_READ, 300);
    cr_expect_eq(sbdrv_cpu_estimate(&c), 400, "all read: the exact sum");
    sbdrv_cpu_add(&c, SBDRV_CPU_SKIP, 12345); /* ns ignored */
    cr_expect_eq(sbdrv_cpu_estimate(&c), 600, "no sample yet: the read calls' mean (200) stands in");
    sbdrv_cpu_add(&c, SBDRV_CPU_SAMPLE, 10);
    sbdrv_cpu_add(&c, SBDRV_CPU_SAMPLE, 20);
    for (int i = 0; i < 6; i++)
        sbdrv_cpu_add(&c, SBDRV_CPU_SKIP, 0);
    /* 400 read + 30 sampled + 7 skipped at the sample's mean 15 */
    cr_expect_eq(sbdrv_cpu_estimate(&c), 400 + 30 + 105);
    cr_expect_eq(sbdrv_cpu_calls(&c), 11);
    cr_expect_eq(sbdrv_cpu_measured_calls(&c), 4);
    sbdrv_cpu_cls sum;
    memset(&sum, 0, sizeof sum);
    sbdrv_cpu_sum(&sum, &c);
    sbdrv_cpu_sum(&sum, &c);
    cr_expect_eq(sbdrv_cpu_estimate(&sum), 2 * (400 + 30 + 105));
}

/* A simulated run: two classes with different, position-dependent costs in a 16-call cycle.
 * The sampled estimate of each class is close to its true total. */
Test(cpuacct, estimate_tracks_truth)
{
    sbdrv_cpu_sampler s;
    sbdrv_cpu_sampler_init(&s, SBDRV_CPU_SAMPLED, 99);
    sbdrv_cpu_cls cls[2];
    memset(cls, 0, sizeof cls);
    uint64_t truth[2] = {0, 0};
    for (unsigned i = 0; i < 200000; i++) {
        unsigned pos = i % 16, k = pos < 10 ? 0 : 1;
        uint64_t ns = k == 0 ? 20000 + pos * 1000 : 120000 + (pos - 10) * 5000;
        truth[k] += ns;
        sbdrv_cpu_how h = sbdrv_cpu_sampler_next(&s);
        sbdrv_cpu_add(&cls[k], h, ns);
    }
    for (int k = 0; k < 2; k++) {
        double est = (double)sbdrv_cpu_estimate(&cls[k]), t = (double)truth[k];
        cr_expect(est > t * 0.98 && est < t * 1.02, "class %d: estimate %.0f, truth %.0f", k, est, t);
        cr_expect_lt(sbdrv_cpu_measured_calls(&cls[k]), sbdrv_cpu_calls(&cls[k]) / 8);
    }
}

Test(cpuacct, cost_modes)
{
    cr_expect_eq(sbdrv_cpu_mode_parse("cost-sampled"), SBDRV_CPU_SAMPLED | SBDRV_CPU_COST);
    cr_expect_eq(sbdrv_cpu_mode_parse("cost-every-call"), SBDRV_CPU_EVERY_CALL | SBDRV_CPU_COST);
    cr_expect_eq(sbdrv_cpu_mode_parse("cost-"), -1);
    cr_expect_eq(sbdrv_cpu_mode_parse("cost-off"), -1);
    cr_expect_eq(sbdrv_cpu_mode_parse("cost-cost-sampled"), -1);
}

/* A simulated thread: a call costs 1000 ns without accounting and 1100 ns with it. Blocks
 * alternate, the clock is read once per block, and the paired cost comes out at 10%. */
Test(cpuacct, cost_probe_pairs_blocks)
{
    sbdrv_cost_probe p;
    sbdrv_cost_result res;
    memset(&p, 0, sizeof p);
    memset(&res, 0, sizeof res);
    uint64_t clock = 5000000, reads = 0;
    unsigned on_calls = 0, off_calls = 0;
    const unsigned calls = 40 * SBDRV_COST_BLOCK + 7;
    for (unsigned i = 0; i < calls; i++) {
        if (sbdrv_cost_next_call(&p)) {
            sbdrv_cost_block(&p, clock, &res);
            reads++;
        }
        if (p.on)
            on_calls++;
        else
            off_calls++;
        clock += p.on ? 1100 : 1000 + (i % 3); /* a little noise in the unaccounted ones */
    }
    /* 40 whole blocks, 20 of each kind, and the 7 calls of a 41st that never finished */
    cr_expect_eq(reads, 41, "one clock read per block");
    cr_expect_eq(on_calls + off_calls, calls);
    cr_expect_eq(on_calls, 20 * SBDRV_COST_BLOCK);
    cr_expect_eq(res.n, 19, "each accounted block with an unaccounted one on either side");
    cr_expect_eq(res.on_calls, 20 * SBDRV_COST_BLOCK);
    cr_expect_eq(res.off_calls, 20 * SBDRV_COST_BLOCK);
    char line[400];
    sbdrv_cost_summary(&res, "sampled", line, sizeof line);
    cr_expect(strstr(line, "accounting cost (sampled): +9.89%") != NULL, "%s", line);
    cr_expect(strstr(line, "median of 19 accounted blocks of 256 calls") != NULL, "%s", line);
    sbdrv_cost_free(&res);
    sbdrv_cost_summary(&res, "every-call", line, sizeof line);
    cr_expect(strstr(line, "not measured") != NULL, "%s", line);
}

/* The machine slows down steadily during the run (every call 0.05% dearer than the one before
 * it, whatever the mode): comparing an accounted block with the unaccounted one before it alone
 * would add the drift to the cost; against the mean of both neighbours it cancels. */
Test(cpuacct, cost_probe_cancels_drift)
{
    sbdrv_cost_probe p;
    sbdrv_cost_result res;
    memset(&p, 0, sizeof p);
    memset(&res, 0, sizeof res);
    uint64_t clock = 0;
    for (unsigned i = 0; i < 30 * SBDRV_COST_BLOCK; i++) {
        if (sbdrv_cost_next_call(&p))
            sbdrv_cost_block(&p, clock, &res);
        double base = 1000.0 * (1.0 + 0.0005 * i);
        clock += (uint64_t)(base * (p.on ? 1.02 : 1.0));
    }
    cr_assert_gt(res.n, 10);
    char line[400];
    sbdrv_cost_summary(&res, "sampled", line, sizeof line);
    double pct = 0;
    cr_assert_eq(sscanf(line, "accounting cost (sampled): %lf%%", &pct), 1, "%s", line);
    cr_expect(pct > 1.9 && pct < 2.1, "%s", line); /* the block before alone: about +15% */
    sbdrv_cost_free(&res);
}
