/* SPDX-License-Identifier: MIT */
/* fpstats.c - statement fingerprints and latency per fingerprint (fpstats.h). Memory per group is
 * bounded: the first EXACT_MAX latencies of each side are kept as they are (8 bytes each), so
 * percentiles are exact up to there; past it the samples are folded into a fixed log-linear
 * histogram (32 buckets per power of two, values below 64 ns exact), and a percentile is the
 * middle of its bucket: within 1.6 % of the exact value. Groups are found by a linear search, fine
 * for the tens of distinct statements a workload has. */
#include "fpstats.h"

#include "jsonout.h"

#include "sqltok.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXACT_MAX 4096 /* samples kept exactly per side and group */
#define SUB 32         /* histogram buckets per power of two */
#define NBUCKETS (2 * SUB + (64 - 6) * SUB)

/* Latencies of one side: exact samples, or (past EXACT_MAX) a histogram of bucket counts. */
typedef struct lat {
    uint64_t *v;    /* the samples (sorted by prepare) while hist is NULL */
    size_t cap;
    uint64_t *hist; /* NBUCKETS counts once folded */
} lat;

typedef struct group {
    char *key;
    size_t len;
    uint64_t count, replayed;
    lat cap, rep; /* ns per execution; rep only for replayed ones */
    uint64_t cap_rt, rep_rt;
    uint64_t compared, matched;
    uint64_t rep_total, cap_total;
} group;

struct pcaptool_fpstats {
    group *g;
    size_t n, cap;
    int cap_rt_unknown; /* the workload came from a trace: it has no round trips */
};

void pcaptool_fpstats_no_capture_rt(pcaptool_fpstats *f)
{
    f->cap_rt_unknown = 1;
}

/* A number that begins with its decimal point (.5): the tokenizer reads '.' and 5 apart. */
static int leading_point(const char *sql, const fbw_tok *t, size_t n, int after_name)
{
    return t->kind == FBW_TOK_PUNCT && sql[t->b] == '.' && !after_name && t->e < n && sql[t->e] >= '0' &&
           sql[t->e] <= '9';
}

/* On the one SQL tokenizer (wire/sqltok.h), so quotes, q'...' strings and comments are read the
 * way the driver and fbwire-sql read them. */
void pcaptool_fingerprint(const char *sql, size_t n, fbw_buf *out)
{
    fbw_sqltok t;
    fbw_sqltok_init(&t, sql, n);
    size_t start = fbw_buf_avail(out);
    int space = 0, after_name = 0;
    for (fbw_tok k = fbw_sqltok_raw(&t); k.kind != FBW_TOK_END; k = fbw_sqltok_raw(&t)) {
        if (k.kind == FBW_TOK_SPACE || k.kind == FBW_TOK_COMMENT) {
            space = 1;
            after_name = 0;
            continue;
        }
        if (space && fbw_buf_avail(out) > start)
            fbw_buf_append(out, " ", 1);
        space = 0;
        if (leading_point(sql, &k, n, after_name)) {
            k = fbw_sqltok_raw(&t); /* the digits after the point */
            k.kind = FBW_TOK_NUMBER;
        }
        if (k.kind == FBW_TOK_STRING || k.kind == FBW_TOK_NUMBER)
            fbw_buf_append(out, "?", 1);
        else
            fbw_buf_append(out, sql + k.b, k.e - k.b);
        after_name = k.kind == FBW_TOK_WORD || k.kind == FBW_TOK_QNAME;
    }
}

pcaptool_fpstats *pcaptool_fpstats_new(void)
{
    return calloc(1, sizeof(pcaptool_fpstats));
}

void pcaptool_fpstats_free(pcaptool_fpstats *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++) {
        free(f->g[i].key);
        free(f->g[i].cap.v);
        free(f->g[i].cap.hist);
        free(f->g[i].rep.v);
        free(f->g[i].rep.hist);
    }
    free(f->g);
    free(f);
}

size_t pcaptool_fpstats_count(const pcaptool_fpstats *f)
{
    return f->n;
}

/* Histogram bucket of v: exact below 64, else SUB buckets per power of two. */
static size_t bucket(uint64_t v)
{
    if (v < 2 * SUB)
        return (size_t)v;
    int e = 63;
    while (!(v >> e))
        e--;
    return (size_t)(2 * SUB + (e - 6) * SUB) + (size_t)((v >> (e - 5)) & (SUB - 1));
}

/* The middle of bucket i (its only value below 64). */
static uint64_t bucket_mid(size_t i)
{
    if (i < 2 * SUB)
        return i;
    int e = (int)((i - 2 * SUB) / SUB) + 6;
    uint64_t sub = (i - 2 * SUB) % SUB, width = (uint64_t)1 << (e - 5);
    return (SUB + sub) * width + width / 2;
}

/* Add sample number n (0-based) to l. */
static int push(lat *l, uint64_t n, uint64_t v)
{
    if (!l->hist && n == EXACT_MAX) { /* fold the exact samples into the histogram */
        l->hist = calloc(NBUCKETS, sizeof *l->hist);
        if (!l->hist)
            return -1;
        for (size_t i = 0; i < n; i++)
            l->hist[bucket(l->v[i])]++;
        free(l->v);
        l->v = NULL;
        l->cap = 0;
    }
    if (l->hist) {
        l->hist[bucket(v)]++;
        return 0;
    }
    if (n == l->cap) {
        size_t c = l->cap ? l->cap * 2 : 16;
        uint64_t *p = realloc(l->v, c * sizeof *p);
        if (!p)
            return -1;
        l->v = p;
        l->cap = c;
    }
    l->v[n] = v;
    return 0;
}

static group *find(pcaptool_fpstats *f, const char *key, size_t len)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->g[i].len == len && !memcmp(f->g[i].key, key, len))
            return &f->g[i];
    if (f->n == f->cap) {
        size_t c = f->cap ? f->cap * 2 : 16;
        group *g = realloc(f->g, c * sizeof *g);
        if (!g)
            return NULL;
        f->g = g;
        f->cap = c;
    }
    group *g = &f->g[f->n];
    memset(g, 0, sizeof *g);
    g->key = malloc(len + 1);
    if (!g->key)
        return NULL;
    memcpy(g->key, key, len);
    g->key[len] = 0;
    g->len = len;
    f->n++;
    return g;
}

int pcaptool_fpstats_add(pcaptool_fpstats *f, const char *key, size_t len,
                         const pcaptool_fp_exec *e)
{
    group *g = find(f, key, len);
    if (!g || push(&g->cap, g->count, e->capture_ns))
        return -1;
    g->count++;
    g->cap_rt += e->capture_rt;
    g->cap_total += e->capture_ns;
    if (e->replayed) {
        if (push(&g->rep, g->replayed, e->replay_ns))
            return -1;
        g->replayed++;
        g->rep_rt += e->replay_rt;
        g->rep_total += e->replay_ns;
    }
    if (e->result != PCAPTOOL_FP_NOT_COMPARED) {
        g->compared++;
        g->matched += e->result == PCAPTOOL_FP_MATCH;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of the n samples of l (sorted) in ms; -1 when empty. From a histogram:
 * the middle of the bucket holding that rank. */
static double pct(const lat *l, uint64_t n, int p)
{
    if (!n)
        return -1;
    uint64_t rank = (n * (uint64_t)p + 99) / 100;
    rank = rank ? rank : 1;
    if (!l->hist)
        return (double)l->v[rank - 1] / 1e6;
    uint64_t seen = 0;
    for (size_t i = 0; i < NBUCKETS; i++) {
        seen += l->hist[i];
        if (seen >= rank)
            return (double)bucket_mid(i) / 1e6;
    }
    return -1;
}

static int cmp_group(const void *a, const void *b)
{
    const group *x = a, *y = b;
    uint64_t tx = x->replayed ? x->rep_total : x->cap_total;
    uint64_t ty = y->replayed ? y->rep_total : y->cap_total;
    return tx > ty ? -1 : tx < ty;
}

/* qsort with an empty array: its pointer may be NULL, which qsort does not allow (UBSan). */
static void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n)
        qsort(base, n, size, cmp);
}

static void prepare(pcaptool_fpstats *f)
{
    for (size_t i = 0; i < f->n; i++) {
        if (!f->g[i].cap.hist)
            sort(f->g[i].cap.v, f->g[i].count, sizeof *f->g[i].cap.v, cmp_u64);
        if (!f->g[i].rep.hist)
            sort(f->g[i].rep.v, f->g[i].replayed, sizeof *f->g[i].rep.v, cmp_u64);
    }
    sort(f->g, f->n, sizeof *f->g, cmp_group);
}

static void ms_text(fbw_buf *b, double v)
{
    if (v < 0)
        fbw_buf_printf(b, " %9s", "-");
    else
        fbw_buf_printf(b, " %9.3f", v);
}

void pcaptool_fpstats_text(pcaptool_fpstats *f, fbw_buf *b, size_t limit)
{
    prepare(f);
    fbw_buf_printf(b, "%7s %9s %9s %9s %9s %6s %6s %6s %9s  %s\n", "count", "cap_p50", "cap_p95",
                   "rep_p50", "rep_p95", "ratio", "rt_cap", "rt_rep", "results", "statement");
    size_t shown = 0;
    for (size_t i = 0; i < f->n && (!limit || shown < limit); i++, shown++) {
        const group *g = &f->g[i];
        double c50 = pct(&g->cap, g->count, 50), r50 = pct(&g->rep, g->replayed, 50);
        fbw_buf_printf(b, "%7" PRIu64, g->count);
        ms_text(b, c50);
        ms_text(b, pct(&g->cap, g->count, 95));
        ms_text(b, r50);
        ms_text(b, pct(&g->rep, g->replayed, 95));
        if (c50 > 0 && r50 >= 0)
            fbw_buf_printf(b, " %6.2f", r50 / c50);
        else
            fbw_buf_printf(b, " %6s", "-");
        if (f->cap_rt_unknown)
            fbw_buf_printf(b, " %6s", "-");
        else
            fbw_buf_printf(b, " %6.2f", (double)g->cap_rt / (double)g->count);
        if (g->replayed)
            fbw_buf_printf(b, " %6.2f", (double)g->rep_rt / (double)g->replayed);
        else
            fbw_buf_printf(b, " %6s", "-");
        if (g->compared) {
            char r[48];
            snprintf(r, sizeof r, "%" PRIu64 "/%" PRIu64, g->matched, g->compared);
            fbw_buf_printf(b, " %9s", r);
        } else {
            fbw_buf_printf(b, " %9s", "-");
        }
        fbw_buf_printf(b, "  %.*s%s\n", g->len > 100 ? 100 : (int)g->len, g->key,
                       g->len > 100 ? "..." : "");
    }
    if (shown < f->n)
        fbw_buf_printf(b, "(%zu more statements: --json lists all)\n", f->n - shown);
}

/* A latency in ms to 6 decimals, null when there is none. */
static json_t *ms_json(double v)
{
    return v < 0 ? json_null() : pcaptool_json_fixed(v, 6);
}

static json_t *group_json(const group *g, int cap_rt_unknown)
{
    double c50 = pct(&g->cap, g->count, 50), r50 = pct(&g->rep, g->replayed, 50);
    json_t *rep_rt =
        g->replayed ? pcaptool_json_fixed((double)g->rep_rt / (double)g->replayed, 4) : json_null();
    json_t *ratio = c50 > 0 && r50 >= 0 ? pcaptool_json_fixed(r50 / c50, 4) : json_null();
    /* fingerprints are SQL: any bytes, shown as the text report quotes them */
    return json_pack("{s:o,s:I,s:I,s:{s:o,s:o,s:o},s:{s:o,s:o,s:o},s:o,s:{s:I,s:I}}", "statement",
                     pcaptool_json_bytes(g->key, g->len, 0), "count", (json_int_t)g->count,
                     "replayed", (json_int_t)g->replayed, "capture", "p50_ms", ms_json(c50),
                     "p95_ms", ms_json(pct(&g->cap, g->count, 95)), "round_trips",
                     cap_rt_unknown ? json_null()
                                    : pcaptool_json_fixed((double)g->cap_rt / (double)g->count, 4),
                     "replay",
                     "p50_ms", ms_json(r50), "p95_ms", ms_json(pct(&g->rep, g->replayed, 95)),
                     "round_trips", rep_rt, "ratio", ratio, "results", "compared",
                     (json_int_t)g->compared, "matched", (json_int_t)g->matched);
}

json_t *pcaptool_fpstats_json(pcaptool_fpstats *f)
{
    prepare(f);
    json_t *a = json_array();
    for (size_t i = 0; a && i < f->n; i++) {
        json_t *g = group_json(&f->g[i], f->cap_rt_unknown);
        if (!g || json_array_append_new(a, g)) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}
