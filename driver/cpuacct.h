/* SPDX-License-Identifier: MIT */
/* cpuacct.h - how the wire statistics report takes the client CPU of driver calls, and the
 * per-class estimate built from it.
 *
 * The figure wanted is the calling thread's CPU time inside each driver call, per statement
 * class. Reading the thread CPU clock is a system call (Linux has no vDSO path for
 * CLOCK_THREAD_CPUTIME_ID), about 0.3 us here; two per call cost more than the report may
 * (docs/report.md, "What the report costs"). So by default the clock is read around a random
 * sample of the calls and the rest are estimated from the sample of their class:
 *
 *   - the first SBDRV_CPU_WARM_CALLS calls of a connection are all timed (short runs and the
 *     prepares and first executions at the start are then exact);
 *   - after that one call in SBDRV_CPU_SAMPLE_EVERY on average is timed, the gap to the next
 *     timed call drawn at random (uniform in 1 .. 2N-1), so a workload that repeats with a
 *     period (an oltp_read_only event is 16 calls) cannot hide a class from the sample;
 *   - a class's figure is the CPU of its timed calls plus, for each untimed call, the mean of
 *     the class's sampled calls (of its timed calls when none was sampled).
 *
 * Pure bookkeeping: no clock here (sbreport.c reads it), no locks (one sampler per connection,
 * merged at the end). */
#ifndef SBDRV_CPUACCT_H
#define SBDRV_CPUACCT_H

#include <stddef.h>
#include <stdint.h>

#define SBDRV_CPU_SAMPLE_EVERY 16u
#define SBDRV_CPU_WARM_CALLS 64u

typedef enum sbdrv_cpu_mode {
    SBDRV_CPU_SAMPLED = 0,  /* the default (above) */
    SBDRV_CPU_EVERY_CALL,   /* the clock around every call: exact, two system calls per call */
} sbdrv_cpu_mode;

/* What is known of one call's CPU. */
typedef enum sbdrv_cpu_how {
    SBDRV_CPU_UNTIMED = 0,  /* not a timed call (the attach, the version query): no CPU charged */
    SBDRV_CPU_READ,         /* clock read because every such call is (every-call, warm-up) */
    SBDRV_CPU_SAMPLE,       /* clock read, the call being one of the random sample */
    SBDRV_CPU_SKIP,         /* clock not read: estimated from the class's sample */
} sbdrv_cpu_how;

/* One class's raw figures; summed over connections before the estimate is taken. */
typedef struct sbdrv_cpu_cls {
    uint64_t read_calls, read_ns;      /* SBDRV_CPU_READ */
    uint64_t sample_calls, sample_ns;  /* SBDRV_CPU_SAMPLE */
    uint64_t skipped_calls;            /* SBDRV_CPU_SKIP */
} sbdrv_cpu_cls;

/* Chooses, per connection, which calls are timed. */
typedef struct sbdrv_cpu_sampler {
    sbdrv_cpu_mode mode;
    uint32_t warm;       /* calls still timed unconditionally */
    uint32_t countdown;  /* calls until the next sampled one (1 = the next call) */
    uint64_t rng;        /* xorshift64 state, never 0 */
} sbdrv_cpu_sampler;

/* Parse a --P-accounting value: "sampled" (also NULL or ""), "every-call"; "off" gives -2 (no
 * report at all, sbreport.h); "cost-sampled" / "cost-every-call" give the mode with
 * SBDRV_CPU_COST set (measure what that mode costs, below); anything else -1. */
#define SBDRV_CPU_COST 0x10
int sbdrv_cpu_mode_parse(const char *s);
const char *sbdrv_cpu_mode_name(sbdrv_cpu_mode m);

void sbdrv_cpu_sampler_init(sbdrv_cpu_sampler *s, sbdrv_cpu_mode mode, uint64_t seed);
/* How the next call is taken: SBDRV_CPU_READ, SBDRV_CPU_SAMPLE (read the clock) or SBDRV_CPU_SKIP. */
sbdrv_cpu_how sbdrv_cpu_sampler_next(sbdrv_cpu_sampler *s);

/* Add one call's figure (ns ignored unless the clock was read). */
void sbdrv_cpu_add(sbdrv_cpu_cls *c, sbdrv_cpu_how how, uint64_t ns);
void sbdrv_cpu_sum(sbdrv_cpu_cls *into, const sbdrv_cpu_cls *from);
/* Calls with a CPU figure (timed or estimated), and those whose clock was read. */
uint64_t sbdrv_cpu_calls(const sbdrv_cpu_cls *c);
uint64_t sbdrv_cpu_measured_calls(const sbdrv_cpu_cls *c);
/* The class's CPU in ns: measured plus estimated (equal to the measured sum when nothing was
 * skipped). */
uint64_t sbdrv_cpu_estimate(const sbdrv_cpu_cls *c);

/* ---- What the accounting itself costs, measured inside one sysbench run.
 *
 * Runs of separate processes differ by far more than the report costs when the machine is
 * shared (+-40% between neighbouring runs here), so the comparison is made inside one thread:
 * blocks of SBDRV_COST_BLOCK driver calls alternate between no accounting at all and the method
 * measured. The thread CPU clock is read only at block boundaries (once per block in both
 * kinds), and each accounted block is compared with the mean of the unaccounted blocks just
 * before and after it (a drift during the run cancels): the median of those ratios is the cost,
 * as a share of the client CPU per call (blocks hold whole events of the same mix, so it is also
 * the share per event). */
#define SBDRV_COST_BLOCK 256u

typedef struct sbdrv_cost_probe {
    uint32_t left;       /* calls left in the current block; 0 before the first */
    int on;              /* the current block is accounted */
    uint64_t t0;         /* thread CPU at the current block's start */
    double off_per_call; /* ns per call of the last unaccounted block, 0 when none */
    double on_per_call;  /* ns per call of the accounted block since then, 0 when none */
} sbdrv_cost_probe;

typedef struct sbdrv_cost_result {
    uint64_t on_ns, on_calls, off_ns, off_calls;
    double *ratios;      /* per accounted block: its CPU per call / its neighbours' - 1 */
    size_t n, cap;
} sbdrv_cost_result;

/* At the start of each driver call: 1 when a block ends here (the caller then reads the clock
 * and calls sbdrv_cost_block before deciding anything else). */
int sbdrv_cost_next_call(sbdrv_cost_probe *p);
/* Close the block that ended at thread CPU now_ns and start the next one (the other kind);
 * the finished block goes into res (the caller serialises access to res). */
void sbdrv_cost_block(sbdrv_cost_probe *p, uint64_t now_ns, sbdrv_cost_result *res);
/* One line: the median paired cost with its quartiles and the pooled means. */
void sbdrv_cost_summary(sbdrv_cost_result *res, const char *method, char *buf, size_t cap);
void sbdrv_cost_free(sbdrv_cost_result *res);

#endif
