/* SPDX-License-Identifier: MIT */
/* test_ops.c - the op table against Firebird's enum P_OP (src/remote/protocol.h, names and numbers
 * transcribed separately here), directions, deferral, first protocol, protocol version encoding;
 * the table of every op number in docs/protocol/packets.md §4.1 against the op table and the codec. */
#include <criterion/criterion.h>

#include "ops.h"
#include "pkt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every op protocol.h still uses; the numbers in between are obsolete (page server, lock ops). */
static const struct {
    int op;
    const char *name;
} fb_ops[] = {
    {0, "op_void"},
    {1, "op_connect"},
    {2, "op_exit"},
    {3, "op_accept"},
    {4, "op_reject"},
    {6, "op_disconnect"},
    {9, "op_response"},
    {19, "op_attach"},
    {20, "op_create"},
    {21, "op_detach"},
    {22, "op_compile"},
    {23, "op_start"},
    {24, "op_start_and_send"},
    {25, "op_send"},
    {26, "op_receive"},
    {27, "op_unwind"},
    {28, "op_release"},
    {29, "op_transaction"},
    {30, "op_commit"},
    {31, "op_rollback"},
    {32, "op_prepare"},
    {33, "op_reconnect"},
    {34, "op_create_blob"},
    {35, "op_open_blob"},
    {36, "op_get_segment"},
    {37, "op_put_segment"},
    {38, "op_cancel_blob"},
    {39, "op_close_blob"},
    {40, "op_info_database"},
    {41, "op_info_request"},
    {42, "op_info_transaction"},
    {43, "op_info_blob"},
    {44, "op_batch_segments"},
    {48, "op_que_events"},
    {49, "op_cancel_events"},
    {50, "op_commit_retaining"},
    {51, "op_prepare2"},
    {52, "op_event"},
    {53, "op_connect_request"},
    {54, "op_aux_connect"},
    {55, "op_ddl"},
    {56, "op_open_blob2"},
    {57, "op_create_blob2"},
    {58, "op_get_slice"},
    {59, "op_put_slice"},
    {60, "op_slice"},
    {61, "op_seek_blob"},
    {62, "op_allocate_statement"},
    {63, "op_execute"},
    {64, "op_exec_immediate"},
    {65, "op_fetch"},
    {66, "op_fetch_response"},
    {67, "op_free_statement"},
    {68, "op_prepare_statement"},
    {69, "op_set_cursor"},
    {70, "op_info_sql"},
    {71, "op_dummy"},
    {72, "op_response_piggyback"},
    {73, "op_start_and_receive"},
    {74, "op_start_send_and_receive"},
    {75, "op_exec_immediate2"},
    {76, "op_execute2"},
    {77, "op_insert"},
    {78, "op_sql_response"},
    {79, "op_transact"},
    {80, "op_transact_response"},
    {81, "op_drop_database"},
    {82, "op_service_attach"},
    {83, "op_service_detach"},
    {84, "op_service_info"},
    {85, "op_service_start"},
    {86, "op_rollback_retaining"},
    {87, "op_update_account_info"},
    {88, "op_authenticate_user"},
    {89, "op_partial"},
    {90, "op_trusted_auth"},
    {91, "op_cancel"},
    {92, "op_cont_auth"},
    {93, "op_ping"},
    {94, "op_accept_data"},
    {95, "op_abort_aux_connection"},
    {96, "op_crypt"},
    {97, "op_crypt_key_callback"},
    {98, "op_cond_accept"},
    {99, "op_batch_create"},
    {100, "op_batch_msg"},
    {101, "op_batch_exec"},
    {102, "op_batch_rls"},
    {103, "op_batch_cs"},
    {104, "op_batch_regblob"},
    {105, "op_batch_blob_stream"},
    {106, "op_batch_set_bpb"},
    {107, "op_repl_data"},
    {108, "op_repl_req"},
    {109, "op_batch_cancel"},
    {110, "op_batch_sync"},
    {111, "op_info_batch"},
    {112, "op_fetch_scroll"},
    {113, "op_info_cursor"},
    {114, "op_inline_blob"},
};

#define N_FB_OPS (sizeof fb_ops / sizeof fb_ops[0])

Test(ops, every_firebird_op_is_known_by_name)
{
    cr_assert_eq(N_FB_OPS, 100);
    for (size_t i = 0; i < N_FB_OPS; i++) {
        const fbw_opinfo *oi = fbw_op_info(fb_ops[i].op);
        cr_assert_not_null(oi, "op %d (%s) missing", fb_ops[i].op, fb_ops[i].name);
        cr_assert_str_eq(oi->name, fb_ops[i].name, "op %d", fb_ops[i].op);
        char nb[16];
        cr_assert_str_eq(fbw_op_name(fb_ops[i].op, nb, sizeof nb), fb_ops[i].name);
    }
}

Test(ops, obsolete_and_out_of_range_numbers_are_unknown)
{
    int known = 0;
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        int listed = 0;
        for (size_t i = 0; i < N_FB_OPS; i++)
            listed |= fb_ops[i].op == op;
        cr_assert_eq(fbw_op_info(op) != NULL, listed, "op %d", op);
        known += listed;
    }
    cr_assert_eq(known, 100);
    cr_assert_null(fbw_op_info(-1));
    cr_assert_null(fbw_op_info(FBW_OP_MAX + 1));
    cr_assert_null(fbw_op_info(INT32_MAX));
    cr_assert_null(fbw_op_info(INT32_MIN));
}

Test(ops, unknown_names_are_numbered)
{
    char nb[16];
    cr_assert_str_eq(fbw_op_name(5, nb, sizeof nb), "op_5");
    cr_assert_str_eq(fbw_op_name(115, nb, sizeof nb), "op_115");
    cr_assert_str_eq(fbw_op_name(-7, nb, sizeof nb), "op_-7");
    char small[4];
    const char *s = fbw_op_name(1000, small, sizeof small);
    cr_assert_eq(strlen(s), 3, "truncated into the caller's buffer");
}

Test(ops, enum_values_match_names)
{
    static const struct {
        int v;
        const char *name;
    } e[] = {
        {FBW_OP_CONNECT, "op_connect"}, {FBW_OP_RESPONSE, "op_response"}, {FBW_OP_ATTACH, "op_attach"},
        {FBW_OP_FETCH_RESPONSE, "op_fetch_response"}, {FBW_OP_DUMMY, "op_dummy"},
        {FBW_OP_CONT_AUTH, "op_cont_auth"}, {FBW_OP_COND_ACCEPT, "op_cond_accept"},
        {FBW_OP_BATCH_CS, "op_batch_cs"}, {FBW_OP_FETCH_SCROLL, "op_fetch_scroll"},
        {FBW_OP_INLINE_BLOB, "op_inline_blob"}, {FBW_OP_EXECUTE2, "op_execute2"},
        {FBW_OP_SQL_RESPONSE, "op_sql_response"}, {FBW_OP_CRYPT_KEY_CALLBACK, "op_crypt_key_callback"},
    };
    for (size_t i = 0; i < sizeof e / sizeof e[0]; i++)
        cr_assert_str_eq(fbw_op_info(e[i].v)->name, e[i].name);
}

Test(ops, directions)
{
    int server[] = {FBW_OP_ACCEPT, FBW_OP_REJECT, FBW_OP_RESPONSE, FBW_OP_FETCH_RESPONSE, FBW_OP_SQL_RESPONSE,
                    FBW_OP_ACCEPT_DATA, FBW_OP_COND_ACCEPT, FBW_OP_BATCH_CS, FBW_OP_INLINE_BLOB, FBW_OP_EVENT,
                    FBW_OP_SLICE, FBW_OP_RESPONSE_PIGGYBACK};
    int client[] = {FBW_OP_CONNECT, FBW_OP_ATTACH, FBW_OP_EXECUTE, FBW_OP_FETCH, FBW_OP_FREE_STATEMENT,
                    FBW_OP_CRYPT, FBW_OP_PING, FBW_OP_BATCH_MSG, FBW_OP_DETACH, FBW_OP_CANCEL};
    int both[] = {FBW_OP_DUMMY, FBW_OP_CONT_AUTH, FBW_OP_CRYPT_KEY_CALLBACK};
    for (size_t i = 0; i < sizeof server / sizeof *server; i++)
        cr_assert_eq(fbw_op_info(server[i])->dir, FBW_DIR_SERVER, "%s", fbw_op_info(server[i])->name);
    for (size_t i = 0; i < sizeof client / sizeof *client; i++)
        cr_assert_eq(fbw_op_info(client[i])->dir, FBW_DIR_CLIENT, "%s", fbw_op_info(client[i])->name);
    for (size_t i = 0; i < sizeof both / sizeof *both; i++)
        cr_assert_eq(fbw_op_info(both[i])->dir, FBW_DIR_BOTH, "%s", fbw_op_info(both[i])->name);
}

/* Replies a lazy-send server holds back: every send_response(..., true) call site in server.cpp
 * (docs/protocol/lazy-send.md §2): allocate_statement, free_statement, release and the batch
 * ops. */
static const int deferred[] = {FBW_OP_ALLOCATE_STATEMENT, FBW_OP_FREE_STATEMENT, FBW_OP_RELEASE,
                               FBW_OP_BATCH_CREATE, FBW_OP_BATCH_MSG, FBW_OP_BATCH_BLOB_STREAM,
                               FBW_OP_BATCH_SET_BPB, FBW_OP_BATCH_REGBLOB, FBW_OP_BATCH_RLS};

Test(ops, deferred_replies_are_flagged)
{
    for (size_t i = 0; i < sizeof deferred / sizeof *deferred; i++)
        cr_assert(fbw_op_info(deferred[i])->flags & FBW_OPF_DEFERRED, "%s", fbw_op_info(deferred[i])->name);
    int flushed[] = {FBW_OP_EXECUTE, FBW_OP_FETCH, FBW_OP_PREPARE_STATEMENT, FBW_OP_COMMIT, FBW_OP_PING,
                     FBW_OP_BATCH_EXEC, FBW_OP_BATCH_SYNC, FBW_OP_INFO_SQL, FBW_OP_DETACH};
    for (size_t i = 0; i < sizeof flushed / sizeof *flushed; i++)
        cr_assert_not(fbw_op_info(flushed[i])->flags & FBW_OPF_DEFERRED, "%s", fbw_op_info(flushed[i])->name);
}

/* Exactly that set. Disabled: ops.c also flags op_close_blob and op_cancel_blob, but server.cpp
 * end_blob answers them with send_response(..., false) (flushed); reported to the owner of ops.c. */
Test(ops, deferred_set_is_exact)
{
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        const fbw_opinfo *oi = fbw_op_info(op);
        if (!oi)
            continue;
        int want = 0;
        for (size_t i = 0; i < sizeof deferred / sizeof *deferred; i++)
            want |= deferred[i] == op;
        cr_assert_eq(!!(oi->flags & FBW_OPF_DEFERRED), want, "%s", oi->name);
    }
}

Test(ops, first_protocol)
{
    cr_assert_eq(fbw_op_info(FBW_OP_CONNECT)->min_protocol, 10);
    cr_assert_eq(fbw_op_info(FBW_OP_TRUSTED_AUTH)->min_protocol, 11);
    cr_assert_eq(fbw_op_info(FBW_OP_CANCEL)->min_protocol, 12);
    cr_assert_eq(fbw_op_info(FBW_OP_CONT_AUTH)->min_protocol, 13);
    cr_assert_eq(fbw_op_info(FBW_OP_PING)->min_protocol, 13);
    cr_assert_eq(fbw_op_info(FBW_OP_BATCH_CREATE)->min_protocol, 16);
    cr_assert_eq(fbw_op_info(FBW_OP_BATCH_SYNC)->min_protocol, 17);
    cr_assert_eq(fbw_op_info(FBW_OP_INFO_BATCH)->min_protocol, 17);
    cr_assert_eq(fbw_op_info(FBW_OP_FETCH_SCROLL)->min_protocol, 18);
    cr_assert_eq(fbw_op_info(FBW_OP_INLINE_BLOB)->min_protocol, 19);
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        const fbw_opinfo *oi = fbw_op_info(op);
        if (oi)
            cr_assert(oi->min_protocol >= FBW_PROTOCOL_MIN && oi->min_protocol <= FBW_PROTOCOL_MAX, "%s", oi->name);
    }
}

Test(ops, protocol_version_encoding)
{
    cr_assert_eq(fbw_protocol_to_wire(10), 0x000A);
    cr_assert_eq(fbw_protocol_to_wire(11), 0x800B);
    cr_assert_eq(fbw_protocol_to_wire(13), 0x800D);
    cr_assert_eq(fbw_protocol_to_wire(20), 0x8014);
    for (int v = FBW_PROTOCOL_MIN; v <= FBW_PROTOCOL_MAX; v++)
        cr_assert_eq(fbw_protocol_from_wire(fbw_protocol_to_wire(v)), v);
    cr_assert_eq(fbw_protocol_from_wire(0), 0);
    cr_assert_eq(fbw_protocol_from_wire(11), 0, "versions above 10 carry the 0x8000 flag");
    cr_assert_eq(fbw_protocol_from_wire(13), 0);
    cr_assert_eq(fbw_protocol_from_wire(0x800A), 0, "P10 never has the flag");
    cr_assert_eq(fbw_protocol_from_wire(0x8000), 0);
}

/* ---- docs/protocol/packets.md §4.1: one row per op number, "| n | name | dir | codec |" ---- */

typedef struct doc_row {
    int seen;
    char name[40], dir[8], codec[24];
} doc_row;

/* The rows of §4.1 into rows[0..FBW_OP_MAX]; returns the number of rows read. A row for a number
 * above FBW_OP_MAX or a second row for a number fails the test. */
static int read_doc_table(doc_row *rows)
{
    const char *path = FBWIRE_SOURCE_DIR "/docs/protocol/packets.md";
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    char line[512];
    int in = 0, n = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "### 4.1 ", 8))
            in = 1;
        else if (in && !strncmp(line, "## ", 3))
            break;
        int op;
        char name[40], dir[8], codec[24];
        if (!in || sscanf(line, "| %d | %39s | %7s | %23[^:|]", &op, name, dir, codec) != 4)
            continue;
        cr_assert(op >= 0 && op <= FBW_OP_MAX, "packets.md §4.1 lists op %d, beyond FBW_OP_MAX %d: "
                                               "add it to wire/ops.h and ops.c", op, FBW_OP_MAX);
        cr_assert(!rows[op].seen, "packets.md §4.1 lists op %d twice", op);
        rows[op].seen = 1;
        snprintf(rows[op].name, sizeof rows[op].name, "%s", name);
        snprintf(rows[op].dir, sizeof rows[op].dir, "%s", dir);
        size_t k = strlen(codec);
        while (k && codec[k - 1] == ' ')
            codec[--k] = 0;
        snprintf(rows[op].codec, sizeof rows[op].codec, "%s", codec);
        n++;
    }
    fclose(f);
    return n;
}

static const char *dir_word(int dir)
{
    switch (dir) {
    case FBW_DIR_CLIENT: return "→S";
    case FBW_DIR_SERVER: return "→C";
    case FBW_DIR_BOTH: return "both";
    default: return "—";
    }
}

Test(ops, docs_table_lists_every_op_and_what_the_codec_does)
{
    doc_row rows[FBW_OP_MAX + 1];
    memset(rows, 0, sizeof rows);
    cr_assert_eq(read_doc_table(rows), FBW_OP_MAX + 1, "packets.md §4.1 needs one row per op 0..%d",
                 FBW_OP_MAX);
    int decoded = 0, without = 0, obsolete = 0;
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        const doc_row *r = &rows[op];
        const fbw_opinfo *oi = fbw_op_info(op);
        cr_assert(r->seen, "packets.md §4.1 has no row for op %d", op);
        if (!oi) {
            cr_assert_str_eq(r->codec, "obsolete", "op %d (%s): fbwire does not know it", op, r->name);
            cr_assert(!fbw_pkt_has_layout(op), "op %d", op);
            obsolete++;
            continue;
        }
        cr_assert_str_eq(r->name, oi->name, "op %d", op);
        cr_assert_str_eq(r->dir, dir_word(oi->dir), "%s", oi->name);
        if (fbw_pkt_has_layout(op)) {
            cr_assert_str_eq(r->codec, "decoded", "%s: the codec has its layout", oi->name);
            decoded++;
        } else {
            cr_assert(!strcmp(r->codec, "no layout") || !strcmp(r->codec, "no packet"),
                      "%s: pkt.c has no layout for it, the docs say '%s'", oi->name, r->codec);
            without++;
        }
    }
    /* Every op Firebird 3 to 6 sends has a layout; four numbers carry no packet or were never
     * implemented, fifteen are obsolete (checked against protocol.cpp xdr_protocol). */
    cr_expect_eq(decoded, 96);
    cr_expect_eq(without, 4);
    cr_expect_eq(obsolete, 15);
}

/* The table must be read as written: a row edited to claim a layout pkt.c lacks is refused. */
Test(ops, docs_table_parser_sees_the_codec_column)
{
    doc_row rows[FBW_OP_MAX + 1];
    memset(rows, 0, sizeof rows);
    read_doc_table(rows);
    cr_assert_str_eq(rows[FBW_OP_BATCH_BLOB_STREAM].codec, "decoded");
    cr_assert_str_eq(rows[FBW_OP_INSERT].codec, "no layout");
    cr_assert_str_eq(rows[FBW_OP_VOID].codec, "no packet");
    cr_assert_str_eq(rows[5].codec, "obsolete");
    cr_assert(fbw_pkt_has_layout(FBW_OP_BATCH_BLOB_STREAM));
    cr_assert(!fbw_pkt_has_layout(FBW_OP_INSERT));
}
