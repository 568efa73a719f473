/* SPDX-License-Identifier: MIT */
/* Unit tests of fbwire-pcap's replay parts that are logic, not I/O: the comparison of an execution
 * with the capture and a connection's tally (replay_results.c), the slot tables and transaction
 * renumbering (replay_slots.c), JSON values of captured bytes (jsonout.c), and the report model
 * rendered as text and as JSON from the same data (replay_text.c, replay_json.c). */
#include <criterion/criterion.h>

#include "conn.h"
#include "script.h"
#include "jsonout.h"
#include "replay_report.h"
#include "replay_results.h"
#include "replay_slots.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- comparison and tally ---- */

static rp_exec exec_of(int kind, pcaptool_result cap, pcaptool_result rep)
{
    rp_exec x;
    memset(&x, 0, sizeof x);
    x.step = 7;
    x.stmt = 2;
    x.ok = 1;
    x.kind = kind;
    x.cap = cap;
    x.rep = rep;
    return x;
}

Test(replay_results, rows_and_hash_decide_a_cursor)
{
    pcaptool_result cap = {.rows = 3, .hash = 42, .affected = -1};
    pcaptool_result same = cap, other = {.rows = 3, .hash = 41, .affected = -1};
    rp_exec x = exec_of(PCAPTOOL_STEP_EXECUTE, cap, same);
    cr_expect_eq(rp_compare(&x, 0), PCAPTOOL_FP_MATCH);
    x.rep = other;
    cr_expect_eq(rp_compare(&x, 0), PCAPTOOL_FP_DIFFERENT);
    x.rep.unknown = 1; /* rows in a format the capture never showed: the count alone */
    cr_expect_eq(rp_compare(&x, 0), PCAPTOOL_FP_MATCH);
    x.rep.rows = 2;
    cr_expect_eq(rp_compare(&x, 0), PCAPTOOL_FP_DIFFERENT);
    cr_expect_eq(rp_compare(&x, 1), PCAPTOOL_FP_NOT_COMPARED, "--results ignore");
    x.ok = 0;
    cr_expect_eq(rp_compare(&x, 0), PCAPTOOL_FP_NOT_COMPARED, "a failed execution");
}

Test(replay_results, affected_rows_only_when_the_client_asked)
{
    pcaptool_result cap = {.rows = -1, .affected = 5}, rep = {.rows = -1, .affected = 5};
    rp_exec x = exec_of(PCAPTOOL_STEP_EXECUTE, cap, rep);
    cr_expect_eq(rp_compare(&x, 0), PCAPTOOL_FP_MATCH);
    x.rep.affected = 4;
    cr_expect_eq(rp_compare(&x, 0), PCAPTOOL_FP_DIFFERENT);
    x.cap.affected = -1; /* never asked: nothing to compare */
    cr_expect_eq(rp_compare(&x, 0), PCAPTOOL_FP_NOT_COMPARED);
}

Test(replay_results, blob_read_bytes)
{
    pcaptool_result cap = {.rows = 10, .hash = 9, .affected = -1, .eof = 1};
    rp_exec x = exec_of(PCAPTOOL_STEP_BLOB_READ, cap, cap);
    cr_expect_eq(rp_compare(&x, 0), PCAPTOOL_FP_MATCH);
    x.rep.hash = 8;
    cr_expect_eq(rp_compare(&x, 0), PCAPTOOL_FP_DIFFERENT);
    x.cap.unknown = 1;
    cr_expect_eq(rp_compare(&x, 0), PCAPTOOL_FP_NOT_COMPARED);
}

Test(replay_results, tally_keeps_the_first_differences_for_text_and_all_for_json)
{
    pcaptool_result cap = {.rows = 1, .hash = 1, .affected = -1};
    pcaptool_result rep = {.rows = 1, .hash = 2, .affected = -1};
    rp_exec x = exec_of(PCAPTOOL_STEP_EXECUTE, cap, rep);
    char sql[] = "SELECT 1 FROM RDB$DATABASE";
    x.sql = sql;
    rp_tally text, json;
    memset(&text, 0, sizeof text);
    memset(&json, 0, sizeof json);
    json.keep_all_diffs = 1;
    for (int i = 0; i < RP_MAX_DIFFS_SHOWN + 5; i++) {
        rp_tally_result(&text, &x, rp_compare(&x, 0));
        rp_tally_result(&json, &x, rp_compare(&x, 0));
    }
    rp_tally_result(&text, &x, PCAPTOOL_FP_MATCH);
    rp_tally_result(&text, &x, PCAPTOOL_FP_NOT_COMPARED);
    cr_expect_eq(text.compared, RP_MAX_DIFFS_SHOWN + 6);
    cr_expect_eq(text.matched, 1);
    cr_expect_eq(text.different, RP_MAX_DIFFS_SHOWN + 5);
    cr_expect_eq(text.ndiffs, RP_MAX_DIFFS_SHOWN);
    cr_expect_eq(text.more_diffs, 5);
    cr_expect_eq(json.ndiffs, RP_MAX_DIFFS_SHOWN + 5);
    cr_expect_eq(json.more_diffs, 0);
    cr_expect_str_eq(json.diffs[0].sql, sql);
    cr_expect_neq(json.diffs[0].sql, sql, "the tally keeps its own copy");
    rp_tally_free(&text);
    rp_tally_free(&json);
}

Test(replay_results, failures_are_bounded_and_counted)
{
    rp_tally t;
    memset(&t, 0, sizeof t);
    fbw_err e;
    fbw_err_clear(&e);
    snprintf(e.msg, sizeof e.msg, "table exists");
    snprintf(e.sqlstate, sizeof e.sqlstate, "42S01");
    rp_tally_failure(&t, 3, PCAPTOOL_STEP_IMMEDIATE, 0, 5, &e, "execute immediate failed");
    rp_tally_failure(&t, 4, PCAPTOOL_STEP_PREPARE, 1, 5, NULL, "prepare failed");
    cr_expect_str_eq(t.fail[0].message, "table exists");
    cr_expect_str_eq(t.fail[0].sqlstate, "42S01");
    cr_expect_eq(t.fail[0].tx, 5);
    cr_expect_str_eq(t.fail[1].message, "prepare failed", "the fallback without an error");
    cr_expect_str_eq(t.fail[1].sqlstate, "");
    for (int i = 0; i < RP_MAX_FAILURES_KEPT + 10; i++)
        rp_tally_failure(&t, 5, PCAPTOOL_STEP_EXECUTE, 1, 0, NULL, "execute failed");
    cr_expect_eq(t.nfail, RP_MAX_FAILURES_KEPT);
    cr_expect_eq(t.more_fail, 12);
    cr_expect_eq(t.kinds[PCAPTOOL_STEP_EXECUTE].failed, RP_MAX_FAILURES_KEPT + 10);
    cr_expect_eq(t.kinds[PCAPTOOL_STEP_IMMEDIATE].failed, 1);
    rp_tally_free(&t);
}

/* ---- slots ---- */

Test(replay_slots, transactions_get_small_numbers_reused_after_they_end)
{
    fbw_script scr; /* a scripted server: the transactions really start and end */
    fbw_script_open(&scr);
    rp_slots sl;
    memset(&sl, 0, sizeof sl);
    sl.c = scr.c;
    /* the capture's slots 1000 and 2000 are open at once: 1 and 2 */
    cr_expect_eq(rp_slots_small_tx(&sl, 1000), 1);
    cr_expect_eq(rp_slots_small_tx(&sl, 2000), 2);
    cr_expect_eq(rp_slots_small_tx(&sl, 1000), 1, "the same slot keeps its number");
    cr_expect_eq(rp_slots_orig_tx(&sl, 2), 2000);
    cr_expect_eq(rp_slots_small_tx(&sl, 0), 0);
    cr_assert(sl.tx[1] && sl.tx[2], "a connection: the transactions exist");
    fbw_tx *first = sl.tx[1];
    /* a transaction still starting keeps its number */
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    cr_assert_eq(fbw_tx_start(sl.tx[1], &to), FBW_OK);
    fbw_script_wait_ok(&scr);
    cr_assert_eq(fbw_tx_commit(sl.tx[1]), FBW_OK);
    fbw_script_wait_ok(&scr);
    cr_assert_eq(fbw_tx_state(sl.tx[1]), FBW_TX_ENDED);
    sl.tx_start[1] = 9;
    rp_slots_tx_ended(&sl, 1);
    cr_expect_eq(sl.tx[1], first);
    /* ended: its object goes to the pool, its number to the next capture slot */
    sl.tx_start[1] = 0;
    rp_slots_tx_ended(&sl, 1);
    cr_expect_null(sl.tx[1]);
    cr_expect_eq(rp_slots_orig_tx(&sl, 1), 1, "a free number stands for nothing");
    cr_expect_eq(rp_slots_small_tx(&sl, 3000), 1);
    cr_expect_eq(sl.tx[1], first, "the pooled transaction is reused");
    cr_expect_eq(rp_slots_orig_tx(&sl, 1), 3000);
    cr_expect_eq(rp_slots_small_tx(&sl, 4000), 3);
    /* statement slots grow as steps name them */
    cr_assert_eq(rp_slots_ensure(&sl, 0, 500), 0);
    cr_expect_geq(sl.nst, 500);
    cr_expect_null(sl.st[500]);
    cr_expect_null(sl.ex[500]);
    rp_slots_free(&sl);
    fbw_script_close(&scr);
}

Test(replay_slots, no_connection_no_transactions)
{
    rp_slots sl;
    memset(&sl, 0, sizeof sl);
    cr_expect_eq(rp_slots_small_tx(&sl, 7), 1);
    cr_expect_null(sl.tx[1]);
    cr_expect_null(rp_slots_tx(&sl, 0));
    rp_slots_free(&sl);
}

/* ---- JSON values ---- */

static char *dump(json_t *v)
{
    cr_assert(v);
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(v);
    cr_assert(s);
    return s;
}

Test(jsonout, captured_bytes_as_the_text_quote_shows_them)
{
    /* valid UTF-8 kept; a lone byte 0xE9 (Latin-1 e acute) is U+00E9; control bytes escaped */
    char *s = dump(pcaptool_json_bytes("caf\xc3\xa9 \xe9\t\"x\"", 11, 0));
    cr_expect_str_eq(s, "\"caf\xc3\xa9 \xc3\xa9\\t\\\"x\\\"\"");
    free(s);
    s = dump(pcaptool_json_bytes("\xed\xa0\x80", 3, 0)); /* a surrogate is not UTF-8 */
    cr_expect_str_eq(s, "\"\xc3\xad\xc2\xa0\xc2\x80\"");
    free(s);
    s = dump(pcaptool_json_bytes("abcdef", 6, 3));
    cr_expect_str_eq(s, "\"abc...\"");
    free(s);
    s = dump(pcaptool_json_bytes("", 0, 0));
    cr_expect_str_eq(s, "\"\"");
    free(s);
    s = dump(pcaptool_json_str(NULL));
    cr_expect_str_eq(s, "null");
    free(s);
    s = dump(pcaptool_json_hex((const uint8_t *)"\x01\xab", 2));
    cr_expect_str_eq(s, "\"01ab\"");
    free(s);
}

Test(jsonout, fixed_decimals)
{
    char *s = dump(pcaptool_json_fixed(2.0 / 3.0, 4));
    cr_expect_str_eq(s, "0.6667");
    free(s);
    s = dump(pcaptool_json_fixed(12345.6789012, 6));
    cr_expect_str_eq(s, "12345.678901");
    free(s);
    s = dump(pcaptool_json_fixed(1.0, 4));
    cr_expect_str_eq(s, "1.0");
    free(s);
}

/* ---- the report model, rendered twice ---- */

/* A replay of one connection with one failure and one difference. */
typedef struct model {
    rp_report m;
    rp_conn_report c;
    pcaptool_report_conn ci;
    fbw_stats cap, rep;
    rp_tally t;
    uint64_t not_replayed[FBW_OP_MAX + 1];
} model;

static void model_init(model *x)
{
    memset(x, 0, sizeof *x);
    x->cap.round_trips = 10;
    x->rep.round_trips = 5;
    x->ci = (pcaptool_report_conn){
        .id = 1, .client = "127.0.0.1:40000", .server = "127.0.0.1:3050", .stats = &x->cap};
    x->t.kinds[PCAPTOOL_STEP_EXECUTE] = (rp_kind_count){.steps = 4, .failed = 1, .round_trips = 6};
    rp_tally_failure(&x->t, 2, PCAPTOOL_STEP_EXECUTE, 1, 1, NULL, "execute failed");
    pcaptool_result cap = {.rows = 2, .hash = 0xab, .affected = -1};
    pcaptool_result rep = {.rows = 3, .hash = 0xcd, .affected = -1};
    rp_exec e = exec_of(PCAPTOOL_STEP_EXECUTE, cap, rep);
    x->t.keep_all_diffs = 1;
    rp_tally_result(&x->t, &e, rp_compare(&e, 0));
    x->not_replayed[FBW_OP_CANCEL] = 2;
    x->c = (rp_conn_report){.ci = &x->ci,
                            .id = 1,
                            .run = 1,
                            .replayed = 1,
                            .tally = &x->t,
                            .replay = &x->rep,
                            .kinds = x->t.kinds,
                            .steps_total = 4,
                            .failed_total = 1,
                            .not_replayed = x->not_replayed};
    x->m.database = "localhost:/db.fdb";
    x->m.conns = &x->c;
    x->m.nconns = 1;
    x->m.t.conns = 1;
    x->m.t.replayed = 1;
    x->m.t.steps = 4;
    x->m.t.failed = 1;
    x->m.t.capture = x->cap;
    x->m.t.replay = x->rep;
    x->m.t.different = 1;
    x->m.t.compared = 1;
}

Test(replay_report, json_of_a_replay_follows_the_schema_keys)
{
    model x;
    model_init(&x);
    json_t *doc = rp_report_json(&x.m);
    cr_assert(doc);
    const char *mode = NULL, *db = NULL;
    json_t *conns = NULL, *total = NULL, *trunc = NULL;
    cr_assert_eq(json_unpack(doc, "{s:s,s:s,s:o,s:o,s:o}", "mode", &mode, "database", &db,
                             "truncated", &trunc, "connections", &conns, "total", &total),
                 0);
    cr_expect_str_eq(mode, "replay");
    cr_expect(json_is_null(trunc));
    cr_expect_null(json_object_get(doc, "load"), "no load without a fingerprint table");
    json_t *c = json_array_get(conns, 0);
    double rt_ratio = 0;
    json_int_t nr = 0;
    const char *hash = NULL, *msg = NULL;
    cr_assert_eq(json_unpack(c, "{s:{s:F},s:{s:I},s:[{s:s}],s:[{s:{s:s}}]}", "ratio", "round_trips",
                             &rt_ratio, "not_replayed", "op_cancel", &nr, "failures", "message",
                             &msg, "differences", "capture", "hash", &hash),
                 0, "%s", json_dumps(c, 0));
    cr_expect_eq(rt_ratio, 0.5);
    cr_expect_eq(nr, 2);
    cr_expect_str_eq(msg, "execute failed");
    cr_expect_str_eq(hash, "00000000000000ab");
    /* the keys in the order the report always wrote them */
    static const char *const order[] = {"id",       "client",      "server",       "encrypted",
                                        "problem",  "open_at_end", "replayed",     "error",
                                        "failures", "replay",      "ratio",        "late_replies",
                                        "capture",  "step_counts", "blr_requests", "not_replayed",
                                        "differences"};
    size_t k = 0;
    const char *key;
    json_t *v;
    json_object_foreach(c, key, v)
    {
        cr_assert_lt(k, sizeof order / sizeof *order);
        cr_expect_str_eq(key, order[k++]);
    }
    cr_expect_eq(k, sizeof order / sizeof *order);
    json_decref(doc);
    rp_tally_free(&x.t);
}

Test(replay_report, text_of_the_same_model)
{
    model x;
    model_init(&x);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f);
    cr_assert_eq(rp_report_text(&x.m, f), 0);
    fclose(f);
    cr_expect(strstr(buf, "connection 1: 127.0.0.1:40000 -> 127.0.0.1:3050\n"
                          "replayed on localhost:/db.fdb\n"
                          "failed: step 2 execute s1 t1: \"execute failed\"\n"),
              "%s", buf);
    cr_expect(strstr(buf, "round_trips                  10            5    0.50\n"), "%s", buf);
    cr_expect(strstr(buf, "not replayed: op_cancel 2\n"), "%s", buf);
    cr_expect(strstr(buf, "different: step 7 execute s2 : capture 2 rows (hash 00000000000000ab), "
                          "replay 3 rows (hash 00000000000000cd)\n"),
              "%s", buf);
    cr_expect(strstr(buf, "\ntotal: 1 connection, 1 replayed, 4 steps, 1 failed\n"), "%s", buf);
    free(buf);
    rp_tally_free(&x.t);
}
