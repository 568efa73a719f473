/* SPDX-License-Identifier: MIT */
/* test_fpstats.c - fbwire-pcap's statement fingerprints and latency per fingerprint
 * (tools/fbwire-pcap/fpstats.c): literals become ?, names and quoted names stay, comments and
 * whitespace fold; percentiles are nearest-rank; groups come slowest first; JSON escapes. */
#include <criterion/criterion.h>

#include "fpstats.h"

#include <stdlib.h>
#include <string.h>

static char *fp(const char *sql)
{
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_fingerprint(sql, strlen(sql), &b);
    char *s = strndup((const char *)fbw_buf_head(&b), fbw_buf_avail(&b));
    fbw_buf_free(&b);
    return s;
}

static void expect_fp(const char *sql, const char *want)
{
    char *got = fp(sql);
    cr_expect_str_eq(got, want, "fingerprint of [%s]", sql);
    free(got);
}

Test(fpstats, literals_become_markers)
{
    expect_fp("SELECT * FROM T WHERE ID = 42 AND NAME = 'it''s' AND X > -1.5e3",
              "SELECT * FROM T WHERE ID = ? AND NAME = ? AND X > -?");
    expect_fp("INSERT INTO T VALUES (1, .5, 'a')", "INSERT INTO T VALUES (?, ?, ?)");
    /* Firebird's q'...' strings, read by the one SQL tokenizer like the driver reads them */
    expect_fp("SELECT q'{it's}', Q'<a>b>' FROM T", "SELECT ?, ? FROM T");
}

Test(fpstats, names_with_digits_and_quoted_names_stay)
{
    expect_fp("SELECT c1, T2.x FROM sbtest1 \"Tab 3\" WHERE k=?",
              "SELECT c1, T2.x FROM sbtest1 \"Tab 3\" WHERE k=?");
    expect_fp("SELECT RDB$RELATION_NAME FROM RDB$RELATIONS",
              "SELECT RDB$RELATION_NAME FROM RDB$RELATIONS");
}

Test(fpstats, comments_and_whitespace_fold)
{
    expect_fp("  SELECT  a,\n\tb -- why\nFROM /* c */ t  ", "SELECT a, b FROM t");
    expect_fp("SELECT 'unterminated", "SELECT ?");
    expect_fp("SELECT 1 /* open", "SELECT ?");
}

static void add(fbw_fpstats *f, const char *key, uint64_t cap_ms, uint64_t rep_ms, int result)
{
    fbw_fp_exec e = {cap_ms * 1000000u, rep_ms * 1000000u, 1, 2, 1, result};
    cr_assert_eq(fbw_fpstats_add(f, key, strlen(key), &e), 0);
}

Test(fpstats, percentiles_ratio_and_order)
{
    fbw_fpstats *f = fbw_fpstats_new();
    for (uint64_t i = 1; i <= 20; i++)
        add(f, "SELECT ?", i, 2 * i, FBW_FP_MATCH);
    add(f, "COMMIT", 100, 1000, FBW_FP_NOT_COMPARED);
    add(f, "SELECT ?", 1, 1, FBW_FP_DIFFERENT);
    cr_assert_eq(fbw_fpstats_count(f), 2);
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_fpstats_json(f, &b);
    fbw_buf_append(&b, "", 1);
    const char *j = (const char *)fbw_buf_head(&b);
    /* COMMIT took 1000 ms in the replay, SELECT 421 ms in all: COMMIT first */
    cr_expect(strstr(j, "[{\"statement\":\"COMMIT\",\"count\":1,"), "%s", j);
    /* 21 SELECTs: capture 1,1,2..20 ms -> p50 the 11th = 10, p95 the 20th = 19; replay doubled */
    cr_expect(strstr(j, "{\"statement\":\"SELECT ?\",\"count\":21,\"replayed\":21,\"capture\":{"
                        "\"p50_ms\":10.000000,\"p95_ms\":19.000000,\"round_trips\":1.0000},"
                        "\"replay\":{\"p50_ms\":20.000000,\"p95_ms\":38.000000,\"round_trips\":"
                        "2.0000},\"ratio\":2.0000,\"results\":{\"compared\":21,\"matched\":20}}"),
              "%s", j);
    fbw_buf_free(&b);
    fbw_buf_init(&b);
    fbw_fpstats_text(f, &b, 1);
    fbw_buf_append(&b, "", 1);
    const char *t = (const char *)fbw_buf_head(&b);
    cr_expect(strstr(t, "COMMIT\n(1 more statements: --json lists all)\n"), "%s", t);
    cr_expect(!strstr(t, "SELECT"), "%s", t);
    fbw_buf_free(&b);
    fbw_fpstats_free(f);
}

Test(fpstats, json_escapes_the_statement)
{
    fbw_fpstats *f = fbw_fpstats_new();
    add(f, "SELECT \"a\\b\"\x01", 1, 1, FBW_FP_NOT_COMPARED);
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_fpstats_json(f, &b);
    fbw_buf_append(&b, "", 1);
    cr_expect(strstr((const char *)fbw_buf_head(&b), "\"statement\":\"SELECT \\\"a\\\\b\\\"\\u0001\""),
              "%s", (const char *)fbw_buf_head(&b));
    fbw_buf_free(&b);
    fbw_fpstats_free(f);
}

/* Past 4096 executions a group folds its latencies into a fixed histogram: the percentiles are
 * then the middle of a bucket 1/32 of a power of two wide, within 1.6 % of the exact value. */
static double json_num(const char *j, const char *key)
{
    const char *p = strstr(j, key);
    cr_assert(p, "%s not in %s", key, j);
    return strtod(p + strlen(key), NULL);
}

Test(fpstats, many_executions_keep_fixed_memory_and_close_percentiles)
{
    fbw_fpstats *f = fbw_fpstats_new();
    for (uint64_t i = 1; i <= 20000; i++) { /* capture 0.001..20 ms, replay 3x */
        fbw_fp_exec e = {i * 1000u, i * 3000u, 1, 1, 1, FBW_FP_MATCH};
        cr_assert_eq(fbw_fpstats_add(f, "SELECT ?", 8, &e), 0);
    }
    fbw_buf b;
    fbw_buf_init(&b);
    fbw_fpstats_json(f, &b);
    fbw_buf_append(&b, "", 1);
    const char *j = (const char *)fbw_buf_head(&b);
    cr_expect(strstr(j, "\"count\":20000,\"replayed\":20000"), "%s", j);
    double c50 = json_num(j, "\"capture\":{\"p50_ms\":"), c95 = json_num(j, "\"p95_ms\":");
    double r50 = json_num(j, "\"replay\":{\"p50_ms\":");
    cr_expect(c50 > 10.0 * 0.984 && c50 < 10.0 * 1.016, "capture p50 %f, exact 10", c50);
    cr_expect(c95 > 19.0 * 0.984 && c95 < 19.0 * 1.016, "capture p95 %f, exact 19", c95);
    cr_expect(r50 > 30.0 * 0.984 && r50 < 30.0 * 1.016, "replay p50 %f, exact 30", r50);
    fbw_buf_free(&b);
    fbw_fpstats_free(f);
}
