/* SPDX-License-Identifier: MIT */
/* test_pcap_turns.c - `fbwire-pcap turns`, the protocol-neutral round-trip count: on every
 * recorded Firebird capture in pcap/ that decodes to its end, its turnarounds and bytes each way
 * equal the round trips and wire bytes `fbwire-pcap stats` decodes (the same definition, counted
 * without knowing the protocol); an encrypted session still counts; usage and unreadable files are
 * refused. Uses only the files in pcap/ (no server). */
#include "run_tool.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCAP_DIR FBWIRE_SOURCE_DIR "/pcap"
#define TOOL FBWIRE_BINARY_DIR "/tools/fbwire-pcap"
#define OUT_MAX (1u << 20)

/* The number after "key": in the object that starts at the first `section` (e.g. "\"total\":{"). */
static long long json_num(const char *doc, const char *section, const char *key)
{
    const char *s = strstr(doc, section);
    cr_assert(s, "no %s in %s", section, doc);
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *v = strstr(s, k);
    cr_assert(v, "no %s after %s in %s", key, section, doc);
    return strtoll(v + strlen(k), NULL, 10);
}

/* Every port a capture in pcap/ was recorded on (record.sh's servers: fb3 3050, fb4 3051, the
 * fb3/fb4 variants 3052-3055, fb5 3060, fb6 3061): a capture on a port not named here would decode
 * to nothing and count no turnarounds. */
static fbw_run pcap_tool(const char *cmd, const char *file)
{
    const char *argv[] = {cmd,    file,     "--json", "--port", "3050", "--port", "3051",
                          "--port", "3052", "--port", "3053", "--port", "3054", "--port",
                          "3055", "--port", "3060", "--port", "3061", NULL};
    return fbw_run_tool(TOOL, argv, NULL, OUT_MAX);
}

Test(pcap_turns, agrees_with_the_firebird_count_on_every_capture)
{
    DIR *d = opendir(PCAP_DIR);
    cr_assert(d);
    int compared = 0, encrypted = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".pcap"))
            continue;
        char file[512];
        snprintf(file, sizeof file, "%s/%s", PCAP_DIR, e->d_name);
        fbw_run st = pcap_tool("stats", file), tu = pcap_tool("turns", file);
        cr_assert_eq(tu.status, 0, "%s: turns exit %d: %s", file, tu.status, tu.err);
        long long turns = json_num(tu.out, "\"totals\":{", "round_trips");
        cr_expect_eq(json_num(tu.out, "\"totals\":{", "connections"),
                     json_num(st.out, "\"total\":{", "connections"), "%s: connections", file);
        if (st.status == 0) {
            cr_expect_gt(turns, 0, "%s: no turnarounds", file);
            cr_expect_eq(turns, json_num(st.out, "\"total\":{", "round_trips"),
                         "%s: turnarounds vs Firebird round trips", file);
            cr_expect_eq(json_num(tu.out, "\"totals\":{", "bytes_sent"),
                         json_num(st.out, "\"total\":{", "wire_bytes_sent"), "%s: bytes sent",
                         file);
            cr_expect_eq(json_num(tu.out, "\"totals\":{", "bytes_received"),
                         json_num(st.out, "\"total\":{", "wire_bytes_received"),
                         "%s: bytes received", file);
            compared++;
        } else {
            /* stats stops where encryption starts; turns needs no decoding and goes on */
            cr_expect(strstr(st.out, "encrypted"), "%s: stats failed without encryption: %s", file,
                      st.out);
            cr_expect_gt(turns, json_num(st.out, "\"total\":{", "round_trips"), "%s", file);
            encrypted++;
        }
        fbw_run_free(&st);
        fbw_run_free(&tu);
    }
    closedir(d);
    cr_expect_geq(compared, 5, "only %d captures compared", compared);
    cr_expect_geq(encrypted, 1, "the encrypted capture was not seen");
}

Test(pcap_turns, text_and_json_carry_the_same_totals)
{
    const char *file = PCAP_DIR "/fb3_isql.pcap";
    const char *argv[] = {"turns", file, "--port", "3050", NULL};
    fbw_run t = fbw_run_tool(TOOL, argv, NULL, OUT_MAX);
    fbw_run j = pcap_tool("turns", file);
    cr_assert_eq(t.status, 0, "%s", t.err);
    char want[200];
    snprintf(want, sizeof want, "total: %lld turnarounds, %lld bytes client->server, %lld bytes",
             json_num(j.out, "\"totals\":{", "round_trips"),
             json_num(j.out, "\"totals\":{", "bytes_sent"),
             json_num(j.out, "\"totals\":{", "bytes_received"));
    cr_expect(strstr(t.out, want), "no \"%s\" in %s", want, t.out);
    fbw_run_free(&t);
    fbw_run_free(&j);
}

Test(pcap_turns, other_ports_are_not_followed)
{
    const char *argv[] = {"turns", PCAP_DIR "/fb3_isql.pcap", "--port", "5433", "--json", NULL};
    fbw_run r = fbw_run_tool(TOOL, argv, NULL, OUT_MAX);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(json_num(r.out, "\"totals\":{", "connections"), 0);
    cr_expect_eq(json_num(r.out, "\"totals\":{", "round_trips"), 0);
    fbw_run_free(&r);
}

Test(pcap_turns, usage_and_unreadable_files)
{
    const char *noport[] = {"turns", PCAP_DIR "/fb3_isql.pcap", NULL};
    const char *badport[] = {"turns", PCAP_DIR "/fb3_isql.pcap", "--port", "0", NULL};
    const char *notcap[] = {"turns", PCAP_DIR "/fb3_isql.expect", "--port", "3050", NULL};
    const char *missing[] = {"turns", PCAP_DIR "/no-such.pcap", "--port", "3050", NULL};
    const char *const *cases[] = {noport, badport, notcap, missing};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fbw_run r = fbw_run_tool(TOOL, cases[i], NULL, OUT_MAX);
        cr_expect_eq(r.status, 2, "case %zu: exit %d (%s)", i, r.status, r.err);
        cr_expect(r.err[0], "case %zu: no message", i);
        fbw_run_free(&r);
    }
}
