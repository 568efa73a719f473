/* SPDX-License-Identifier: MIT */
/* cpuacct.c - sampling of the client CPU clock and the per-class estimate (see cpuacct.h). */
#include "cpuacct.h"

#include <string.h>
#include <strings.h>

int fbw_cpu_mode_parse(const char *s)
{
    if (!s || !*s || strcasecmp(s, "sampled") == 0)
        return FBW_CPU_SAMPLED;
    if (strcasecmp(s, "every-call") == 0)
        return FBW_CPU_EVERY_CALL;
    if (strcasecmp(s, "off") == 0)
        return -2;
    return -1;
}

const char *fbw_cpu_mode_name(fbw_cpu_mode m)
{
    return m == FBW_CPU_EVERY_CALL ? "every-call" : "sampled";
}

/* xorshift64 (Marsaglia): cheap, and plenty for choosing gaps. */
static uint64_t next_random(fbw_cpu_sampler *s)
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
static uint32_t draw_gap(fbw_cpu_sampler *s)
{
    return (uint32_t)((next_random(s) >> 33) % (2u * FBW_CPU_SAMPLE_EVERY - 1u)) + 1u;
}

void fbw_cpu_sampler_init(fbw_cpu_sampler *s, fbw_cpu_mode mode, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->mode = mode;
    s->warm = FBW_CPU_WARM_CALLS;
    /* splitmix64 finaliser: nearby seeds (connection addresses) give unrelated sequences */
    uint64_t z = seed + 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    s->rng = z ? z : 0x2545f4914f6cdd1du;
    s->countdown = draw_gap(s);
}

fbw_cpu_how fbw_cpu_sampler_next(fbw_cpu_sampler *s)
{
    if (s->mode == FBW_CPU_EVERY_CALL)
        return FBW_CPU_READ;
    if (s->warm) {
        s->warm--;
        return FBW_CPU_READ;
    }
    if (--s->countdown)
        return FBW_CPU_SKIP;
    s->countdown = draw_gap(s);
    return FBW_CPU_SAMPLE;
}

void fbw_cpu_add(fbw_cpu_cls *c, fbw_cpu_how how, uint64_t ns)
{
    switch (how) {
    case FBW_CPU_READ:
        c->read_calls++;
        c->read_ns += ns;
        break;
    case FBW_CPU_SAMPLE:
        c->sample_calls++;
        c->sample_ns += ns;
        break;
    case FBW_CPU_SKIP:
        c->skipped_calls++;
        break;
    default:
        break;
    }
}

void fbw_cpu_sum(fbw_cpu_cls *into, const fbw_cpu_cls *from)
{
    into->read_calls += from->read_calls;
    into->read_ns += from->read_ns;
    into->sample_calls += from->sample_calls;
    into->sample_ns += from->sample_ns;
    into->skipped_calls += from->skipped_calls;
}

uint64_t fbw_cpu_calls(const fbw_cpu_cls *c)
{
    return c->read_calls + c->sample_calls + c->skipped_calls;
}

uint64_t fbw_cpu_measured_calls(const fbw_cpu_cls *c) { return c->read_calls + c->sample_calls; }

uint64_t fbw_cpu_estimate(const fbw_cpu_cls *c)
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
