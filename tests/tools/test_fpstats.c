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
    pcaptool_fingerprint(sql, strlen(sql), &b);
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

static void add(pcaptool_fpstats *f, const char *key, uint64_t cap_ms, uint64_t rep_ms, int result)
{
    pcaptool_fp_exec e = {cap_ms * 1000000u, rep_ms * 1000000u, 1, 2, 1, result};
    cr_assert_eq(pcaptool_fpstats_add(f, key, strlen(key), &e), 0);
}

Test(fpstats, percentiles_ratio_and_order)
{
    pcaptool_fpstats *f = pcaptool_fpstats_new();
    for (uint64_t i = 1; i <= 20; i++)
        add(f, "SELECT ?", i, 2 * i, PCAPTOOL_FP_MATCH);
    add(f, "COMMIT", 100, 1000, PCAPTOOL_FP_NOT_COMPARED);
    add(f, "SELECT ?", 1, 1, PCAPTOOL_FP_DIFFERENT);
    cr_assert_eq(pcaptool_fpstats_count(f), 2);
    json_t *j = pcaptool_fpstats_json(f);
    cr_assert(j && json_is_array(j) && json_array_size(j) == 2);
    /* COMMIT took 1000 ms in the replay, SELECT 421 ms in all: COMMIT first */
    const char *first = NULL;
    json_int_t count = 0;
    cr_assert_eq(
        json_unpack(json_array_get(j, 0), "{s:s,s:I}", "statement", &first, "count", &count), 0);
    cr_expect_str_eq(first, "COMMIT");
    cr_expect_eq(count, 1);
    /* 21 SELECTs: capture 1,1,2..20 ms -> p50 the 11th = 10, p95 the 20th = 19; replay doubled */
    const char *sel = NULL;
    json_int_t replayed = 0, compared = 0, matched = 0;
    double c50, c95, crt, r50, r95, rrt, ratio;
    cr_assert_eq(json_unpack(json_array_get(j, 1),
                             "{s:s,s:I,s:I,s:{s:F,s:F,s:F},s:{s:F,s:F,s:F},s:F,s:{s:I,s:I}}",
                             "statement", &sel, "count", &count, "replayed", &replayed, "capture",
                             "p50_ms", &c50, "p95_ms", &c95, "round_trips", &crt, "replay",
                             "p50_ms", &r50, "p95_ms", &r95, "round_trips", &rrt, "ratio", &ratio,
                             "results", "compared", &compared, "matched", &matched),
                 0);
    cr_expect_str_eq(sel, "SELECT ?");
    cr_expect(count == 21 && replayed == 21 && compared == 21 && matched == 20);
    cr_expect(c50 == 10.0 && c95 == 19.0 && crt == 1.0, "%f %f %f", c50, c95, crt);
    cr_expect(r50 == 20.0 && r95 == 38.0 && rrt == 2.0 && ratio == 2.0, "%f %f %f %f", r50, r95,
              rrt, ratio);
    json_decref(j);
    fbw_buf b;
    fbw_buf_init(&b);
    pcaptool_fpstats_text(f, &b, 1);
    fbw_buf_append(&b, "", 1);
    const char *t = (const char *)fbw_buf_head(&b);
    cr_expect(strstr(t, "COMMIT\n(1 more statements: --json lists all)\n"), "%s", t);
    cr_expect(!strstr(t, "SELECT"), "%s", t);
    fbw_buf_free(&b);
    pcaptool_fpstats_free(f);
}

Test(fpstats, json_escapes_the_statement)
{
    pcaptool_fpstats *f = pcaptool_fpstats_new();
    add(f, "SELECT \"a\\b\"\x01", 1, 1, PCAPTOOL_FP_NOT_COMPARED);
    json_t *j = pcaptool_fpstats_json(f);
    char *text = json_dumps(j, JSON_COMPACT);
    cr_assert(text);
    cr_expect(strstr(text, "\"statement\":\"SELECT \\\"a\\\\b\\\"\\u0001\""), "%s", text);
    free(text);
    json_decref(j);
    pcaptool_fpstats_free(f);
}

/* Past 4096 executions a group folds its latencies into a fixed histogram: the percentiles are
 * then the middle of a bucket 1/32 of a power of two wide, within 1.6 % of the exact value. */
Test(fpstats, many_executions_keep_fixed_memory_and_close_percentiles)
{
    pcaptool_fpstats *f = pcaptool_fpstats_new();
    for (uint64_t i = 1; i <= 20000; i++) { /* capture 0.001..20 ms, replay 3x */
        pcaptool_fp_exec e = {i * 1000u, i * 3000u, 1, 1, 1, PCAPTOOL_FP_MATCH};
        cr_assert_eq(pcaptool_fpstats_add(f, "SELECT ?", 8, &e), 0);
    }
    json_t *j = pcaptool_fpstats_json(f);
    json_int_t count = 0, replayed = 0;
    double c50, c95, r50;
    cr_assert_eq(json_unpack(json_array_get(j, 0), "{s:I,s:I,s:{s:F,s:F},s:{s:F}}", "count", &count,
                             "replayed", &replayed, "capture", "p50_ms", &c50, "p95_ms", &c95,
                             "replay", "p50_ms", &r50),
                 0);
    cr_expect(count == 20000 && replayed == 20000);
    cr_expect(c50 > 10.0 * 0.984 && c50 < 10.0 * 1.016, "capture p50 %f, exact 10", c50);
    cr_expect(c95 > 19.0 * 0.984 && c95 < 19.0 * 1.016, "capture p95 %f, exact 19", c95);
    cr_expect(r50 > 30.0 * 0.984 && r50 < 30.0 * 1.016, "replay p50 %f, exact 30", r50);
    json_decref(j);
    pcaptool_fpstats_free(f);
}
