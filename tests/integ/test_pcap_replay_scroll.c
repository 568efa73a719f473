/* SPDX-License-Identifier: MIT */
/* test_pcap_replay_scroll.c - `fbwire-pcap replay` of a scrollable cursor: pcap/fb5_scroll.pcap is
 * fbwire-sql with SET SCROLL ON on Firebird 5 (pcap/record.sh): a SELECT of 12 rows whose op_execute
 * opened the cursor scrollable, 12 op_fetch_scroll (every move, past both ends and back) and one
 * op_info_cursor. replay --list shows the execute's scrollable cursor, each move with its position
 * and the row count the capture got, and the record count. Replayed where the fb4 slot speaks
 * protocol 18 (the @fb5 twin), every move lands on the row the capture's did (12 of 12 compared
 * and matched: FIRST and LAST, PRIOR and NEXT give different rows, so a move replayed as another
 * one would differ) and the count is the capture's; below protocol 18 (Firebird 3, and Firebird 4
 * in the base run) each scroll step fails with the library's reason naming the protocol, and the
 * rest of the session (the SELECT read forward, the DROP) replays and matches. The capture's
 * session makes and drops its own table in the target database. */
#include "run_tool.h"
#include "servers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAPTURE FBWIRE_SOURCE_DIR "/pcap/fb5_scroll.pcap"
#define TOOL FBWIRE_BINARY_DIR "/tools/fbwire-pcap"
#define SQL_TOOL FBWIRE_BINARY_DIR "/tools/fbwire-sql"
#define MOVES 12
#define STEPS 33

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static fbw_run replay_on(fbw_servers *s, fbw_server_id id)
{
    const fbw_server *v = &s->srv[id];
    char dsn[1400];
    snprintf(dsn, sizeof dsn, "%s/%d:%s", v->host, v->port, v->db);
    /* a table an interrupted run left behind would fail the captured CREATE */
    const char *drop[] = {"--user", s->user, "--password", s->password, dsn,
                          "DROP TABLE FBW_PCAP_SCROLL", NULL};
    fbw_run d = fbw_run_tool(SQL_TOOL, drop, NULL, 65536);
    fbw_run_free(&d);
    const char *argv[] = {"replay", CAPTURE, "--port", "3060", "--db", dsn, "--user", s->user,
                          "--password", s->password, "--pace", "none", NULL};
    return fbw_run_tool(TOOL, argv, NULL, 1u << 20);
}

/* Every scroll step replayed and matched, the record count too. */
static void replayed(const fbw_run *r)
{
    cr_assert_eq(r->status, 0, "exit %d\n%s\n%s", r->status, r->out, r->err);
    cr_expect(strstr(r->out, "total: 1 connection, 1 replayed, 33 steps, 0 failed"), "%s", r->out);
    cr_expect(strstr(r->out, "fetch_scroll                 12            0           12\n"),
              "12 scroll fetches, one round trip each:\n%s", r->out);
    cr_expect(strstr(r->out, "count_cursor                  1            0            1\n"),
              "the record count in one round trip:\n%s", r->out);
    /* the fingerprint lines: matched/compared right before the name */
    cr_expect(strstr(r->out, " 12/12  (scroll fetch)\n"), "every move's row as the capture's:\n%s",
              r->out);
    cr_expect(strstr(r->out, " 1/1  (cursor count)\n"), "the count as the capture's:\n%s", r->out);
    cr_expect(strstr(r->out, "results: 17 compared, 17 matched, 0 different"), "%s", r->out);
}

/* Every scroll step failed before sending, naming the protocol; the rest replayed. */
static void refused(const fbw_run *r, int protocol)
{
    char want[160];
    snprintf(want, sizeof want, " needs protocol 18 (Firebird 5 or later); this connection speaks "
                                "protocol %d: nothing was sent\"", protocol);
    cr_expect_eq(count(r->out, want), MOVES + 1, "each scroll step and the count:\n%s", r->out);
    cr_expect_eq(count(r->out, "fetch_scroll s1: \"FETCH "), MOVES, "%s", r->out);
    cr_expect(strstr(r->out, "failed: step 24 count_cursor s1: \"the cursor's record count needs "
                             "protocol 18"), "%s", r->out);
    cr_expect(strstr(r->out, "total: 1 connection, 1 replayed, 33 steps, 13 failed"), "%s", r->out);
    cr_expect(strstr(r->out, "fetch_scroll                 12           12            0\n"),
              "nothing sent for them:\n%s", r->out);
    cr_expect(strstr(r->out, "1/1  SELECT ID, V FROM FBW_PCAP_SCROLL ORDER BY ID"),
              "the SELECT still read forward as the capture did:\n%s", r->out);
    cr_expect(strstr(r->out, "1/1  DROP TABLE FBW_PCAP_SCROLL"), "the session went on:\n%s",
              r->out);
}

/* No server: the steps as replay --list shows them. */
Test(pcap_replay_scroll, list_shows_the_moves, .timeout = 30)
{
    const char *argv[] = {"replay", CAPTURE, "--port", "3060", "--list", NULL};
    fbw_run r = fbw_run_tool(TOOL, argv, NULL, 1u << 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    static const char *const lines[] = {
        "   11 execute s1 t3 inline_blob_size=65535 cursor=scrollable\n",
        "   12 fetch s1 op_fetch=1\n",
        "   13 fetch_scroll s1 fetch=\"first\" rows=1\n",
        "   14 fetch_scroll s1 fetch=\"prior\" rows=0\n",
        "   16 fetch_scroll s1 fetch=\"last\" rows=1\n",
        "   17 fetch_scroll s1 fetch=\"next\" rows=0\n",
        "   19 fetch_scroll s1 fetch=\"absolute\" pos=5 rows=1\n",
        "   20 fetch_scroll s1 fetch=\"absolute\" pos=-3 rows=1\n",
        "   21 fetch_scroll s1 fetch=\"relative\" pos=-4 rows=1\n",
        "   23 fetch_scroll s1 fetch=\"relative\" pos=0 rows=1\n",
        "   24 count_cursor s1 count=12\n",
        "   25 fetch_scroll s1 fetch=\"next\" rows=1\n",
        "fetch_scroll                 12\n",
        "count_cursor                  1\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        cr_expect(strstr(r.out, lines[i]), "missing: %s\n%s", lines[i], r.out);
    cr_expect(!strstr(r.out, "not replayed: op_fetch_scroll"), "%s", r.out);
    fbw_run_free(&r);

    const char *jargv[] = {"replay", CAPTURE, "--port", "3060", "--list", "--json", NULL};
    r = fbw_run_tool(TOOL, jargv, NULL, 1u << 20);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"fetch\": \"absolute\"") || strstr(r.out, "\"fetch\":\"absolute\""),
              "%s", r.out);
    cr_expect(strstr(r.out, "\"count\": 12") || strstr(r.out, "\"count\":12"), "%s", r.out);
    fbw_run_free(&r);
}

Test(pcap_replay_scroll, fb4_slot, .timeout = 120)
{
    fbw_servers s;
    fbw_servers_require(&s);
    int protocol = fbw_servers_protocol_max(&s, FBW_SRV_FB4);
    fbw_run r = replay_on(&s, FBW_SRV_FB4);
    if (protocol >= 18) {
        replayed(&r);
    } else {
        cr_assert_neq(r.status, 0, "failed steps give a failing exit status\n%s", r.out);
        refused(&r, protocol);
    }
    printf("%s (protocol %d): replay of fb5_scroll: %s\n", fbw_server_name(FBW_SRV_FB4), protocol,
           protocol >= 18 ? "12 moves and the count replayed, rows as captured"
                          : "scroll steps refused naming the protocol, the rest replayed");
    fbw_run_free(&r);
}

Test(pcap_replay_scroll, refused_on_fb3, .timeout = 120)
{
    fbw_servers s;
    fbw_servers_require(&s);
    fbw_run r = replay_on(&s, FBW_SRV_FB3);
    refused(&r, fbw_servers_protocol_max(&s, FBW_SRV_FB3));
    fbw_run_free(&r);
}
