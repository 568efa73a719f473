/* SPDX-License-Identifier: MIT */
/* cpuacct.c - sampling of the client CPU clock and the per-class estimate (see cpuacct.h). */
#include "cpuacct.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int sbdrv_cpu_mode_parse(const char *s)
{
    if (!s || !*s || strcasecmp(s, "sampled") == 0)
        return SBDRV_CPU_SAMPLED;
    if (strcasecmp(s, "every-call") == 0)
        return SBDRV_CPU_EVERY_CALL;
    if (strcasecmp(s, "off") == 0)
        return -2;
    if (strncasecmp(s, "cost-", 5) == 0) {
        int m = sbdrv_cpu_mode_parse(s + 5);
        return m >= 0 && !(m & SBDRV_CPU_COST) && s[5] ? m | SBDRV_CPU_COST : -1;
    }
    return -1;
}

const char *sbdrv_cpu_mode_name(sbdrv_cpu_mode m)
{
    return m == SBDRV_CPU_EVERY_CALL ? "every-call" : "sampled";
}

/* xorshift64 (Marsaglia): cheap, and plenty for choosing gaps. */
static uint64_t next_random(sbdrv_cpu_sampler *s)
{
    uint64_t x = s->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->rng = x;
    return x;
}

/* Uniform in 1 .. 2N-1: mean N. A gap of 1 is possible, so the phase of the next sample within
 * any periodic workload is spread over every position. */
static uint32_t draw_gap(sbdrv_cpu_sampler *s)
{
    return (uint32_t)((next_random(s) >> 33) % (2u * SBDRV_CPU_SAMPLE_EVERY - 1u)) + 1u;
}

void sbdrv_cpu_sampler_init(sbdrv_cpu_sampler *s, sbdrv_cpu_mode mode, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->mode = mode;
    s->warm = SBDRV_CPU_WARM_CALLS;
    /* splitmix64 finaliser: nearby seeds (connection addresses) give unrelated sequences */
    uint64_t z = seed + 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    s->rng = z ? z : 0x2545f4914f6cdd1du;
    s->countdown = draw_gap(s);
}

sbdrv_cpu_how sbdrv_cpu_sampler_next(sbdrv_cpu_sampler *s)
{
    if (s->mode == SBDRV_CPU_EVERY_CALL)
        return SBDRV_CPU_READ;
    if (s->warm) {
        s->warm--;
        return SBDRV_CPU_READ;
    }
    if (--s->countdown)
        return SBDRV_CPU_SKIP;
    s->countdown = draw_gap(s);
    return SBDRV_CPU_SAMPLE;
}

void sbdrv_cpu_add(sbdrv_cpu_cls *c, sbdrv_cpu_how how, uint64_t ns)
{
    switch (how) {
    case SBDRV_CPU_READ:
        c->read_calls++;
        c->read_ns += ns;
        break;
    case SBDRV_CPU_SAMPLE:
        c->sample_calls++;
        c->sample_ns += ns;
        break;
    case SBDRV_CPU_SKIP:
        c->skipped_calls++;
        break;
    default:
        break;
    }
}

void sbdrv_cpu_sum(sbdrv_cpu_cls *into, const sbdrv_cpu_cls *from)
{
    into->read_calls += from->read_calls;
    into->read_ns += from->read_ns;
    into->sample_calls += from->sample_calls;
    into->sample_ns += from->sample_ns;
    into->skipped_calls += from->skipped_calls;
}

uint64_t sbdrv_cpu_calls(const sbdrv_cpu_cls *c)
{
    return c->read_calls + c->sample_calls + c->skipped_calls;
}

uint64_t sbdrv_cpu_measured_calls(const sbdrv_cpu_cls *c) { return c->read_calls + c->sample_calls; }

uint64_t sbdrv_cpu_estimate(const sbdrv_cpu_cls *c)
{
    uint64_t measured = c->read_ns + c->sample_ns;
    if (c->skipped_calls == 0)
        return measured;
    /* The sample stands for the calls it was drawn from: those after the warm-up. Only when a
     * class has no sampled call do its warm-up calls stand in. */
    double mean = c->sample_calls ? (double)c->sample_ns / (double)c->sample_calls
                  : c->read_calls ? (double)c->read_ns / (double)c->read_calls
                                  : 0.0;
    return measured + (uint64_t)(mean * (double)c->skipped_calls + 0.5);
}

/* ---------------------------------------------------------------- the accounting's own cost */

int sbdrv_cost_next_call(sbdrv_cost_probe *p)
{
    if (p->left > 1) {
        p->left--;
        return 0;
    }
    return 1;
}

static void add_ratio(sbdrv_cost_result *res, double ratio)
{
    if (res->n == res->cap) {
        size_t cap = res->cap ? res->cap * 2 : 256;
        double *n = realloc(res->ratios, cap * sizeof *n);
        if (!n)
            return;
        res->ratios = n;
        res->cap = cap;
    }
    res->ratios[res->n++] = ratio;
}

void sbdrv_cost_block(sbdrv_cost_probe *p, uint64_t now_ns, sbdrv_cost_result *res)
{
    if (p->left == 0) { /* the first call: start an unaccounted block */
        p->left = SBDRV_COST_BLOCK;
        p->on = 0;
        p->t0 = now_ns;
        return;
    }
    double per_call = now_ns > p->t0 ? (double)(now_ns - p->t0) / SBDRV_COST_BLOCK : 0.0;
    if (p->on) {
        res->on_ns += now_ns - p->t0;
        res->on_calls += SBDRV_COST_BLOCK;
        p->on_per_call = per_call;
    } else {
        res->off_ns += now_ns - p->t0;
        res->off_calls += SBDRV_COST_BLOCK;
        /* An accounted block against the mean of the unaccounted ones on either side: a drift
         * of the machine during the run cancels out instead of favouring one kind. */
        if (p->on_per_call > 0 && p->off_per_call > 0 && per_call > 0)
            add_ratio(res, p->on_per_call / ((p->off_per_call + per_call) / 2) - 1.0);
        p->off_per_call = per_call;
        p->on_per_call = 0;
    }
    p->on = !p->on;
    p->left = SBDRV_COST_BLOCK;
    p->t0 = now_ns;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    return i + 1 < n ? v[i] + (pos - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

void sbdrv_cost_summary(sbdrv_cost_result *res, const char *method, char *buf, size_t cap)
{
    if (res->n == 0) {
        snprintf(buf, cap, "accounting cost (%s): not measured (fewer than %u driver calls)", method,
                 2 * SBDRV_COST_BLOCK);
        return;
    }
    qsort(res->ratios, res->n, sizeof *res->ratios, cmp_double);
    double on = res->on_calls ? (double)res->on_ns / (double)res->on_calls / 1e3 : 0;
    double off = res->off_calls ? (double)res->off_ns / (double)res->off_calls / 1e3 : 0;
    snprintf(buf, cap,
             "accounting cost (%s): %+.2f%% of client CPU per call, median of %zu accounted blocks "
             "of %u calls, each against the unaccounted blocks around it (quartiles %+.2f%% .. %+.2f%%); pooled: %.3f us per call accounted, %.3f us not "
             "(%+.2f%%)",
             method, 100 * quantile(res->ratios, res->n, 0.5), res->n, SBDRV_COST_BLOCK,
             100 * quantile(res->ratios, res->n, 0.25), 100 * quantile(res->ratios, res->n, 0.75),
             on, off, off > 0 ? 100 * (on / off - 1) : 0.0);
}

void sbdrv_cost_free(sbdrv_cost_result *res)
{
    free(res->ratios);
    memset(res, 0, sizeof *res);
}
