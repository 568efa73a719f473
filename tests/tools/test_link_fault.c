/* SPDX-License-Identifier: MIT */
/* test_link_fault.c - fbwire-link's fault schedule (tools/fbwire-link/fault.c) and number parsing
 * (units.c): the rule syntax and its refusals, exact byte and write triggers, connection filters,
 * seeded probabilities that repeat, and units parsed exactly. */
#include <criterion/criterion.h>

#include "fault.h"
#include "units.h"

#include <string.h>

static fbl_rule parse_ok(const char *text)
{
    fbl_rule r;
    char err[160] = "";
    cr_assert_eq(fbl_rule_parse(text, &r, err, sizeof err), 0, "\"%s\" refused: %s", text, err);
    return r;
}

Test(link_fault, parses_the_documented_rules)
{
    fbl_rule r = parse_ok("conn=3 after=client-writes:40 reset");
    cr_assert_eq(r.conn, 3);
    cr_assert_eq(r.counter, FBL_CNT_WRITES);
    cr_assert_eq(r.side, FBL_UP);
    cr_assert_eq(r.after, 40);
    cr_assert_eq(r.action, FBL_RESET);
    r = parse_ok("  stall=hold\tprob=0.25 dir=down ");
    cr_assert_eq(r.counter, FBL_CNT_PROB);
    cr_assert_eq(r.prob_ppb, 250000000u);
    cr_assert_eq(r.dir, FBL_DOWN);
    cr_assert_eq(r.stall_ns, FBL_NEVER);
    r = parse_ok("after=server-bytes:100 stall=200ms");
    cr_assert_eq(r.side, FBL_DOWN);
    cr_assert_eq(r.counter, FBL_CNT_BYTES);
    cr_assert_eq(r.stall_ns, 200000000ull);
    cr_assert_eq(fbl_rule_dir(&r, FBL_DOWN), FBL_DOWN, "acts on the counter's side by default");
    r = parse_ok("after=client-bytes:0 shutdown dir=down");
    cr_assert_eq(r.action, FBL_SHUTDOWN);
    cr_assert_eq(fbl_rule_dir(&r, FBL_UP), FBL_DOWN);
}

Test(link_fault, format_reads_back_as_the_same_rule)
{
    const char *rules[] = {"conn=3 after=client-writes:40 reset", "prob=0.000001 dir=up stall=hold",
                           "after=server-bytes:7 dir=both shutdown",
                           "after=client-bytes:12 stall=1500us"};
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        fbl_rule a = parse_ok(rules[i]), b;
        char text[160], err[160];
        fbl_rule_format(&a, text, sizeof text);
        cr_assert_eq(fbl_rule_parse(text, &b, err, sizeof err), 0, "\"%s\": %s", text, err);
        cr_assert(memcmp(&a, &b, sizeof a) == 0, "\"%s\" came back as \"%s\"", rules[i], text);
    }
}

Test(link_fault, refuses_bad_rules_with_a_reason)
{
    char longer[400];
    memset(longer, ' ', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    memcpy(longer + 300, "reset", 5);
    const char *bad[] = {"",
                         "reset",
                         "after=client-writes:40",
                         "conn=0 after=client-writes:1 reset",
                         "conn=99999999999 prob=1 reset",
                         "after=client-writes:-1 reset",
                         "after=client-writes:4.5 reset",
                         "after=client-writes: reset",
                         "after=client-writes:99999999999999999999999 reset",
                         "after=clients:1 reset",
                         "after=client-writes:1 reset shutdown",
                         "after=client-writes:1 prob=1 reset",
                         "prob=1.5 reset",
                         "prob=abc reset",
                         "prob=1 stall=",
                         "prob=1 stall=5parsecs",
                         "prob=1 reset dir=sideways",
                         "prob=1 reset conn=2 conn=3",
                         "prob=1 reset bogus",
                         "prob=1 reset=1",
                         "prob=1 stall",
                         longer};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fbl_rule r;
        char err[160] = "";
        cr_assert_eq(fbl_rule_parse(bad[i], &r, err, sizeof err), -1, "\"%.60s\" accepted", bad[i]);
        cr_assert(err[0], "\"%.60s\": no message", bad[i]);
    }
}

Test(link_fault, byte_rules_split_a_chunk_at_the_exact_byte)
{
    fbl_sched s = {.n = 2};
    s.rule[0] = parse_ok("after=client-bytes:10 reset");
    s.rule[1] = parse_ok("after=server-bytes:3 stall=1ms");
    fbl_faults f;
    fbl_faults_init(&f, 1, 7);
    int hit;
    cr_assert_eq(fbl_faults_bytes(&f, &s, FBL_UP, 4, &hit), 4);
    cr_assert_eq(hit, -1);
    cr_assert_eq(fbl_faults_bytes(&f, &s, FBL_UP, 4, &hit), 4);
    cr_assert_eq(fbl_faults_bytes(&f, &s, FBL_UP, 4, &hit), 2, "the 10th byte ends the first part");
    cr_assert_eq(hit, 0);
    cr_assert_eq(fbl_faults_bytes(&f, &s, FBL_UP, 2, &hit), 2, "the rest passes");
    cr_assert_eq(hit, -1, "a rule fires once");
    cr_assert_eq(fbl_faults_bytes(&f, &s, FBL_DOWN, 3, &hit), 3, "the 3rd byte at a chunk's end");
    cr_assert_eq(hit, 1);
}

Test(link_fault, write_rules_count_chunks_of_their_connection)
{
    fbl_sched s = {.n = 1};
    s.rule[0] = parse_ok("conn=2 after=client-writes:3 reset");
    fbl_faults one, two;
    fbl_faults_init(&one, 1, 7);
    fbl_faults_init(&two, 2, 7);
    int hits[FBL_MAX_RULES];
    for (int i = 1; i <= 5; i++) {
        cr_assert_eq(fbl_faults_chunk(&one, &s, FBL_UP, hits), 0, "another connection");
        cr_assert_eq(fbl_faults_chunk(&two, &s, FBL_DOWN, hits), 0, "server writes do not count");
        cr_assert_eq(fbl_faults_chunk(&two, &s, FBL_UP, hits), i == 3, "client write %d", i);
    }
}

static int count_hits(uint32_t conn, uint64_t seed, const char *rule, int chunks, int *first)
{
    fbl_sched s = {.n = 1};
    s.rule[0] = parse_ok(rule);
    fbl_faults f;
    fbl_faults_init(&f, conn, seed);
    int hits[FBL_MAX_RULES], n = 0;
    *first = -1;
    for (int i = 0; i < chunks; i++)
        if (fbl_faults_chunk(&f, &s, i % 2, hits)) {
            if (*first < 0)
                *first = i;
            n++;
        }
    return n;
}

Test(link_fault, probabilities_are_seeded_and_about_right)
{
    int first_a, first_b, first_c;
    int a = count_hits(1, 99, "prob=0.5 reset", 20000, &first_a);
    int b = count_hits(1, 99, "prob=0.5 reset", 20000, &first_b);
    int c = count_hits(1, 100, "prob=0.5 reset", 20000, &first_c);
    cr_assert_eq(a, b, "the same seed gives the same faults");
    cr_assert_eq(first_a, first_b);
    cr_assert(a != c || first_a != first_c, "another seed gives other faults");
    cr_assert(a > 9500 && a < 10500, "prob=0.5 fired %d times in 20000", a);
    int f;
    cr_assert_eq(count_hits(1, 5, "prob=0 reset", 1000, &f), 0);
    cr_assert_eq(count_hits(1, 5, "prob=1 reset", 1000, &f), 1000);
    cr_assert_eq(count_hits(1, 5, "prob=1 reset dir=down", 1000, &f), 500,
                 "only server chunks drawn");
}

Test(link_fault, units_are_exact)
{
    uint64_t v;
    uint32_t p;
    cr_assert_eq(fbl_parse_duration("1ms", &v), 0);
    cr_assert_eq(v, 1000000);
    cr_assert_eq(fbl_parse_duration("0.1", &v), 0, "a bare number is ms");
    cr_assert_eq(v, 100000);
    cr_assert_eq(fbl_parse_duration("2.5S", &v), 0);
    cr_assert_eq(v, 2500000000ull);
    cr_assert_eq(fbl_parse_duration("100us", &v), 0);
    cr_assert_eq(v, 100000);
    cr_assert_eq(fbl_parse_duration("1.0000001ms", &v), 0, "finer than 1 ns is dropped");
    cr_assert_eq(v, 1000000);
    cr_assert_eq(fbl_parse_rate("100mbit", &v), 0);
    cr_assert_eq(v, 100000000);
    cr_assert_eq(fbl_parse_rate("1.5gbit", &v), 0);
    cr_assert_eq(v, 1500000000);
    cr_assert_eq(fbl_parse_size("64k", &v), 0);
    cr_assert_eq(v, 65536);
    cr_assert_eq(fbl_parse_prob("0.000000001", &p), 0);
    cr_assert_eq(p, 1);
    const char *bad_d[] = {
        "", "ms", "1 ms", "1msx", "-1ms", "1e3ms", "99999999999999999999s", "2000000s"};
    for (size_t i = 0; i < sizeof bad_d / sizeof bad_d[0]; i++)
        cr_assert_eq(fbl_parse_duration(bad_d[i], &v), -1, "duration \"%s\" accepted", bad_d[i]);
    const char *bad_r[] = {"100", "0mbit", "11gbit", "fast", "100mb"};
    for (size_t i = 0; i < sizeof bad_r / sizeof bad_r[0]; i++)
        cr_assert_eq(fbl_parse_rate(bad_r[i], &v), -1, "rate \"%s\" accepted", bad_r[i]);
    cr_assert_eq(fbl_parse_size("1.5k", &v), -1);
    cr_assert_eq(fbl_parse_prob("1.0000001", &p), -1);
}
