/* SPDX-License-Identifier: MIT */
/* test_status.c - status vectors: framing (prefixes, corruptions, caps), interpretation
 * (text, SQLSTATE, SQLCODE, warnings), classification, and the msgs.c table. */
#include <criterion/criterion.h>

#include "msgs.h"
#include "status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define GDS(c) {FBW_ARG_GDS, (c), NULL}
#define WARN(c) {FBW_ARG_WARNING, (c), NULL}
#define STR(s) {FBW_ARG_STRING, 0, (s)}
#define NUM(n) {FBW_ARG_NUMBER, (uint32_t)(n), NULL}
#define INTERP(s) {FBW_ARG_INTERPRETED, 0, (s)}
#define STATE(s) {FBW_ARG_SQL_STATE, 0, (s)}
/* clang-format on */

static fbw_bytes build(fbw_buf *b, const fbw_status_arg *args, int n)
{
    fbw_wr w;
    fbw_buf_init(b);
    fbw_wr_init(&w, b);
    fbw_status_encode(&w, args, n);
    cr_assert_eq(w.rc, FBW_OK);
    fbw_bytes v = {fbw_buf_head(b), fbw_buf_avail(b)};
    return v;
}

/* Whole vector (plus trailing bytes) frames to exactly itself; every strict prefix, each in an
 * exact-size heap block so ASan sees any over-read, asks for more bytes. */
static void check_framing(fbw_bytes v)
{
    uint8_t *copy = malloc(v.n + 8);
    cr_assert_not_null(copy);
    memcpy(copy, v.p, v.n);
    memset(copy + v.n, 0xEE, 8);
    fbw_rd r;
    fbw_rd_init(&r, copy, v.n + 8, FBW_AGAIN);
    fbw_bytes got = fbw_status_frame(&r);
    cr_assert_eq(r.rc, FBW_OK);
    cr_assert_eq(got.n, v.n);
    cr_assert_eq(got.p, copy);
    cr_assert_eq(fbw_rd_offset(&r), v.n);
    free(copy);
    for (size_t k = 0; k < v.n; k++) {
        uint8_t *pre = malloc(k ? k : 1);
        cr_assert_not_null(pre);
        memcpy(pre, v.p, k);
        fbw_rd_init(&r, pre, k, FBW_AGAIN);
        got = fbw_status_frame(&r);
        cr_assert_eq(r.rc, FBW_AGAIN, "prefix %zu of %zu gave %s", k, v.n, fbw_rc_name(r.rc));
        cr_assert_eq(got.n, 0);
        cr_assert_null(got.p);
        free(pre);
    }
}

static int decode(const fbw_status_arg *args, int n, fbw_err *err, fbw_warnings *warn)
{
    fbw_buf b;
    fbw_bytes v = build(&b, args, n);
    check_framing(v);
    int rc = fbw_status_decode(v, err, warn);
    fbw_buf_free(&b);
    return rc;
}

static int sqlcode_vec(const fbw_status_arg *args, int n)
{
    fbw_buf b;
    int code = fbw_status_sqlcode_vec(build(&b, args, n));
    fbw_buf_free(&b);
    return code;
}

Test(status, success)
{
    const fbw_status_arg a[] = {GDS(0)};
    fbw_err err;
    fbw_warnings warn;
    memset(&err, 0x55, sizeof err);
    cr_assert_eq(decode(a, N(a), &err, &warn), FBW_OK);
    cr_assert_eq(err.code, FBW_OK);
    cr_assert_eq(err.ngds, 0);
    cr_assert_str_empty(err.msg);
    cr_assert_eq(warn.n, 0);
    cr_assert_str_empty(warn.msg);
    cr_assert_eq(sqlcode_vec(a, N(a)), 0);
    cr_assert_eq(decode(a, N(a), &err, NULL), FBW_OK);

    /* The 32-byte op_response tail captured live: "1 0 0" as three words. */
    static const uint8_t live[] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    fbw_bytes v = {live, sizeof live};
    cr_assert(fbw_status_is_success(v));
    cr_assert_eq(fbw_status_decode(v, &err, NULL), FBW_OK);
}

Test(status, success_with_warning)
{
    const fbw_status_arg a[] = {GDS(0), WARN(FBW_ISC_DSQL_DIALECT_WARNING_EXPR), STR("DATE")};
    fbw_err err;
    fbw_warnings warn;
    cr_assert_eq(decode(a, N(a), &err, &warn), FBW_OK);
    cr_assert_eq(err.code, FBW_OK);
    cr_assert_str_empty(err.msg);
    cr_assert_eq(warn.n, 1);
    cr_assert_eq(warn.code[0], 336003076u);
    cr_assert_str_eq(warn.msg, "Use of DATE expression that returns different results in dialect 1 "
                               "and dialect 3");
    /* A vector starting with a warning has no error either. */
    const fbw_status_arg b[] = {WARN(FBW_ISC_DSQL_DIALECT_WARNING_EXPR), STR("X")};
    cr_assert_eq(decode(b, N(b), &err, &warn), FBW_OK);
    cr_assert_eq(warn.n, 1);
}

Test(status, unique_violation)
{
    const fbw_status_arg a[] = {GDS(FBW_ISC_UNIQUE_KEY_VIOLATION), STR("PK_T"), STR("T"),
                                GDS(FBW_ISC_IDX_KEY_VALUE), STR("(\"ID\" = 1)")};
    fbw_err err;
    cr_assert_eq(decode(a, N(a), &err, NULL), FBW_E_SERVER);
    cr_assert_eq(err.code, FBW_E_SERVER);
    cr_assert_eq(err.ngds, 2);
    cr_assert_eq(err.gds[0], 335544665u);
    cr_assert_eq(err.gds[1], 335545072u);
    cr_assert_str_eq(err.sqlstate, "23000");
    cr_assert_str_eq(err.msg, "violation of PRIMARY or UNIQUE KEY constraint \"PK_T\" on table "
                              "\"T\"\n-Problematic key value is (\"ID\" = 1)");
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_UNIQUE);
    cr_assert_eq(fbw_status_sqlcode(&err), -803);
    cr_assert_eq(sqlcode_vec(a, N(a)), -803);
    cr_assert(fbw_is_fatal(err.code) == 0);
}

Test(status, unknown_table)
{
    const fbw_status_arg a[] = {GDS(FBW_ISC_DSQL_ERROR),
                                GDS(FBW_ISC_SQLERR),
                                NUM(-204),
                                GDS(FBW_ISC_DSQL_RELATION_ERR),
                                GDS(FBW_ISC_RANDOM),
                                STR("NOPE"),
                                GDS(FBW_ISC_DSQL_LINE_COL_ERROR),
                                NUM(1),
                                NUM(15)};
    fbw_err err;
    fbw_warnings warn;
    cr_assert_eq(decode(a, N(a), &err, &warn), FBW_E_SERVER);
    cr_assert_str_eq(err.sqlstate, "42S02");
    cr_assert_eq(err.ngds, 5);
    cr_assert_eq(err.gds[0], 335544569u);
    cr_assert_eq(err.gds[4], 336397208u);
    cr_assert_str_eq(err.msg, "Dynamic SQL Error\n-SQL error code = -204\n-Table unknown\n-NOPE\n"
                              "-At line 1, column 15");
    cr_assert_eq(warn.n, 0);
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_UNKNOWN_OBJECT);
    cr_assert_eq(sqlcode_vec(a, N(a)), -204);
    cr_assert_eq(fbw_status_sqlcode(&err), -204);
}

Test(status, update_conflict)
{
    const fbw_status_arg a[] = {GDS(FBW_ISC_DEADLOCK), GDS(FBW_ISC_UPDATE_CONFLICT),
                                GDS(FBW_ISC_CONCURRENT_TRANSACTION), STR("1234")};
    fbw_err err;
    cr_assert_eq(decode(a, N(a), &err, NULL), FBW_E_SERVER);
    cr_assert_str_eq(err.sqlstate, "40001");
    cr_assert_str_eq(err.msg, "deadlock\n-update conflicts with concurrent update\n"
                              "-concurrent transaction number is 1234");
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_UPDATE_CONFLICT);
    cr_assert_str_eq(fbw_errclass_name(fbw_err_classify(&err)), "update_conflict");
    cr_assert_eq(fbw_status_sqlcode(&err), -913);
    cr_assert_eq(sqlcode_vec(a, N(a)), -913);
}

Test(status, interpreted_text)
{
    const fbw_status_arg a[] = {GDS(FBW_ISC_IO_ERROR), STR("open"), STR("/db/x.fdb"),
                                GDS(FBW_ISC_IO_OPEN_ERR), INTERP("No such file or directory")};
    fbw_err err;
    cr_assert_eq(decode(a, N(a), &err, NULL), FBW_E_SERVER);
    cr_assert_str_eq(err.msg, "I/O error during \"open\" operation for file \"/db/x.fdb\"\n"
                              "-Error while trying to open file\n-No such file or directory");
    cr_assert_str_eq(err.sqlstate, "08001");
    cr_assert_eq(err.ngds, 2);
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_NO_DATABASE);

    const fbw_status_arg b[] = {INTERP("already formatted")};
    cr_assert_eq(decode(b, N(b), &err, NULL), FBW_E_SERVER);
    cr_assert_str_eq(err.msg, "already formatted");
    cr_assert_eq(err.ngds, 0);
    cr_assert_str_eq(err.sqlstate, "HY000");
}

Test(status, sql_state_argument_wins)
{
    const fbw_status_arg a[] = {GDS(FBW_ISC_DSQL_RELATION_ERR), STATE("45001")};
    fbw_err err;
    cr_assert_eq(decode(a, N(a), &err, NULL), FBW_E_SERVER);
    cr_assert_str_eq(err.sqlstate, "45001");
    cr_assert_str_eq(err.msg, "Table unknown");
    /* Not 5 characters: not a SQLSTATE, the per-code state is used. */
    const fbw_status_arg b[] = {GDS(FBW_ISC_DSQL_RELATION_ERR), STATE("4500")};
    cr_assert_eq(decode(b, N(b), &err, NULL), FBW_E_SERVER);
    cr_assert_str_eq(err.sqlstate, "42S02");
}

Test(status, general_states_yield_to_specific_ones)
{
    const fbw_status_arg a[] = {GDS(FBW_ISC_DSQL_ERROR), GDS(FBW_ISC_RANDOM), STR("x")};
    fbw_err err;
    cr_assert_eq(decode(a, N(a), &err, NULL), FBW_E_SERVER);
    cr_assert_str_eq(err.sqlstate, "42000"); /* isc_random (HY000) is skipped */
    const fbw_status_arg b[] = {GDS(FBW_ISC_ARITH_EXCEPT), GDS(FBW_ISC_STRING_TRUNCATION)};
    cr_assert_eq(decode(b, N(b), &err, NULL), FBW_E_SERVER);
    cr_assert_str_eq(err.sqlstate, "22001");
}

Test(status, unknown_code_fallback)
{
    const fbw_status_arg a[] = {GDS(335599999u), STR("a"), NUM(-42)};
    fbw_err err;
    cr_assert_eq(decode(a, N(a), &err, NULL), FBW_E_SERVER);
    cr_assert_str_eq(err.msg, "gds code 335599999: a, -42");
    cr_assert_str_eq(err.sqlstate, "HY000");
    cr_assert_eq(err.gds[0], 335599999u);
    cr_assert_eq(fbw_status_sqlcode(&err), -999);
    cr_assert_eq(sqlcode_vec(a, N(a)), -999);
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_OTHER);
}

Test(status, missing_args_and_nul_bytes)
{
    const fbw_status_arg a[] = {GDS(FBW_ISC_UNIQUE_KEY_VIOLATION), STR("PK")};
    fbw_err err;
    cr_assert_eq(decode(a, N(a), &err, NULL), FBW_E_SERVER);
    cr_assert_str_eq(
        err.msg,
        "violation of PRIMARY or UNIQUE KEY constraint \"PK\" on table \"<missing arg #2>\"");

    /* A NUL inside a peer string must not cut the message short. */
    fbw_buf b;
    fbw_wr w;
    fbw_buf_init(&b);
    fbw_wr_init(&w, &b);
    fbw_xdr_put_u32(&w, FBW_ARG_GDS);
    fbw_xdr_put_u32(&w, FBW_ISC_RANDOM);
    fbw_xdr_put_u32(&w, FBW_ARG_STRING);
    fbw_xdr_put_bytes(&w, "a\0b", 3);
    fbw_xdr_put_u32(&w, FBW_ARG_END);
    fbw_bytes v = {fbw_buf_head(&b), fbw_buf_avail(&b)};
    cr_assert_eq(fbw_status_decode(v, &err, NULL), FBW_E_SERVER);
    cr_assert_str_eq(err.msg, "a?b");
    fbw_buf_free(&b);
}

Test(status, warnings_after_errors_kept_apart)
{
    const fbw_status_arg a[] = {GDS(FBW_ISC_DEADLOCK), WARN(FBW_ISC_DSQL_DIALECT_WARNING_EXPR),
                                STR("TIME"), INTERP("extra")};
    fbw_err err;
    fbw_warnings warn;
    cr_assert_eq(decode(a, N(a), &err, &warn), FBW_E_SERVER);
    cr_assert_str_eq(err.msg, "deadlock");
    cr_assert_eq(err.ngds, 1);
    cr_assert_eq(warn.n, 1);
    cr_assert(strstr(warn.msg, "Use of TIME expression") == warn.msg, "%s", warn.msg);
    cr_assert(strstr(warn.msg, "\n-extra") != NULL, "%s", warn.msg);
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_DEADLOCK);
}

Test(status, gds_chain_capped)
{
    fbw_status_arg a[20];
    for (int i = 0; i < N(a); i++) {
        a[i].type = FBW_ARG_GDS;
        a[i].num = FBW_ISC_DEADLOCK;
        a[i].str = NULL;
    }
    a[19].num = FBW_ISC_UPDATE_CONFLICT; /* beyond the kept chain */
    fbw_err err;
    cr_assert_eq(decode(a, N(a), &err, NULL), FBW_E_SERVER);
    cr_assert_eq(err.ngds, FBW_ERR_GDS_MAX);
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_DEADLOCK);
}

/* ---- framing corruptions ------------------------------------------------------------- */

Test(status, bad_arg_types_are_protocol_errors)
{
    static const uint32_t bad[] = {3, 6, 8, 9, 10, 11, 12, 16, 20, 42, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const fbw_status_arg a[] = {GDS(FBW_ISC_RANDOM), {(int)bad[i], 7, NULL}};
        fbw_buf b;
        fbw_bytes v = build(&b, a, N(a));
        fbw_rd r;
        fbw_err err;
        fbw_err_clear(&err);
        fbw_rd_init(&r, v.p, v.n, FBW_AGAIN);
        fbw_bytes got = fbw_status_frame_ex(&r, &err);
        cr_assert_eq(r.rc, FBW_E_PROTO, "type %u", bad[i]);
        cr_assert_eq(got.n, 0);
        char expect[64];
        snprintf(expect, sizeof expect, "status arg type %u unknown at offset 8", bad[i]);
        cr_assert_str_eq(err.msg, expect);
        cr_assert_eq(err.offset, 8);
        cr_assert_eq(fbw_status_decode(v, &err, NULL), FBW_E_PROTO);
        fbw_buf_free(&b);
    }
}

Test(status, overlong_string_is_protocol_error)
{
    /* The length alone is enough to reject: no need to wait for 70000 bytes. */
    static const uint8_t v[] = {0, 0, 0, 1, 0x14, 0, 0, 0x7E, 0, 0, 0, 2, 0, 1, 0x11, 0x70};
    fbw_rd r;
    fbw_err err;
    fbw_err_clear(&err);
    fbw_rd_init(&r, v, sizeof v, FBW_AGAIN);
    fbw_bytes got = fbw_status_frame_ex(&r, &err);
    cr_assert_eq(r.rc, FBW_E_PROTO);
    cr_assert_eq(got.n, 0);
    cr_assert_str_eq(err.msg, "status string length 70000 over 65535 at offset 12");

    /* 65535 is allowed: a prefix of it asks for more. */
    static const uint8_t ok[] = {0, 0, 0, 2, 0, 0, 0xFF, 0xFF, 'a', 'b'};
    fbw_rd_init(&r, ok, sizeof ok, FBW_AGAIN);
    got = fbw_status_frame(&r);
    cr_assert_eq(r.rc, FBW_AGAIN);
}

Test(status, truncated_complete_buffer_is_protocol_error)
{
    const fbw_status_arg a[] = {GDS(FBW_ISC_RANDOM), STR("hello")};
    fbw_buf b;
    fbw_bytes v = build(&b, a, N(a));
    v.n -= 4; /* drop isc_arg_end */
    fbw_err err;
    cr_assert_eq(fbw_status_decode(v, &err, NULL), FBW_E_PROTO);
    cr_assert(strstr(err.msg, "truncated") != NULL, "%s", err.msg);
    fbw_buf_free(&b);
}

Test(status, entry_cap)
{
    int n = 10000;
    fbw_status_arg *a = calloc((size_t)n, sizeof *a);
    cr_assert_not_null(a);
    a[0].type = FBW_ARG_GDS;
    a[0].num = FBW_ISC_RANDOM;
    for (int i = 1; i < n; i++) {
        a[i].type = FBW_ARG_NUMBER;
        a[i].num = (uint32_t)i;
    }
    fbw_buf b;
    fbw_bytes v = build(&b, a, n);
    fbw_rd r;
    fbw_err err;
    fbw_err_clear(&err);
    fbw_rd_init(&r, v.p, v.n, FBW_AGAIN);
    fbw_bytes got = fbw_status_frame_ex(&r, &err);
    cr_assert_eq(r.rc, FBW_E_PROTO);
    cr_assert_eq(got.n, 0);
    cr_assert(strstr(err.msg, "longer than 256 entries") != NULL, "%s", err.msg);
    cr_assert_eq(fbw_status_decode(v, &err, NULL), FBW_E_PROTO);
    fbw_buf_free(&b);

    /* 255 entries + isc_arg_end is the largest accepted vector. */
    v = build(&b, a, FBW_STATUS_MAX_ENTRIES - 1);
    fbw_rd_init(&r, v.p, v.n, FBW_AGAIN);
    got = fbw_status_frame(&r);
    cr_assert_eq(r.rc, FBW_OK);
    cr_assert_eq(got.n, v.n);
    fbw_buf_free(&b);
    v = build(&b, a, FBW_STATUS_MAX_ENTRIES);
    fbw_rd_init(&r, v.p, v.n, FBW_AGAIN);
    (void)fbw_status_frame(&r);
    cr_assert_eq(r.rc, FBW_E_PROTO);
    fbw_buf_free(&b);
    free(a);
}

Test(status, huge_argument_truncates_message)
{
    char *big = malloc(60001);
    cr_assert_not_null(big);
    memset(big, 'A', 60000);
    big[60000] = '\0';
    const fbw_status_arg a[] = {GDS(FBW_ISC_RANDOM),   {FBW_ARG_STRING, 0, big},
                                GDS(FBW_ISC_DEADLOCK), GDS(0),
                                WARN(FBW_ISC_RANDOM),  {FBW_ARG_STRING, 0, big}};
    fbw_buf b;
    fbw_bytes v = build(&b, a, N(a));
    fbw_err err;
    fbw_warnings warn;
    cr_assert_eq(fbw_status_decode(v, &err, &warn), FBW_E_SERVER);
    cr_assert_eq(strlen(err.msg), sizeof err.msg - 1);
    cr_assert_str_eq(err.msg + sizeof err.msg - 4, "...");
    cr_assert_eq(err.ngds, 2); /* codes after the cut are still in the chain */
    cr_assert_eq(strlen(warn.msg), sizeof warn.msg - 1);
    cr_assert_str_eq(warn.msg + sizeof warn.msg - 4, "...");
    fbw_buf_free(&b);
    free(big);
}

/* ---- success check, SQLCODE -------------------------------------------------------- */

Test(status, is_success)
{
    fbw_buf b;
    const fbw_status_arg ok1[] = {STATE("00000"), GDS(0)};
    cr_assert(fbw_status_is_success(build(&b, ok1, N(ok1))));
    fbw_buf_free(&b);
    cr_assert(fbw_status_is_success(build(&b, NULL, 0))); /* just isc_arg_end */
    fbw_buf_free(&b);
    const fbw_status_arg bad1[] = {INTERP("boom")};
    cr_assert_not(fbw_status_is_success(build(&b, bad1, N(bad1))));
    fbw_buf_free(&b);
    const fbw_status_arg bad2[] = {STATE("HY000"), GDS(FBW_ISC_DEADLOCK)};
    cr_assert_not(fbw_status_is_success(build(&b, bad2, N(bad2))));
    fbw_buf_free(&b);
}

Test(status, sqlcode_rules)
{
    /* isc_sqlerr's number wins even when not first (gds.cpp gds__sqlcode). */
    const fbw_status_arg a[] = {GDS(FBW_ISC_NO_META_UPDATE),
                                GDS(FBW_ISC_DSQL_DROP_TABLE_FAILED),
                                STR("T"),
                                GDS(FBW_ISC_SQLERR),
                                NUM(-607),
                                GDS(FBW_ISC_DSQL_COMMAND_ERR),
                                GDS(FBW_ISC_DSQL_TABLE_NOT_FOUND),
                                STR("T")};
    cr_assert_eq(sqlcode_vec(a, N(a)), -607);
    fbw_err err;
    cr_assert_eq(decode(a, N(a), &err, NULL), FBW_E_SERVER);
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_UNKNOWN_OBJECT);
    cr_assert_str_eq(err.msg, "unsuccessful metadata update\n-DROP TABLE T failed\n"
                              "-SQL error code = -607\n-Invalid command\n-Table T does not exist");
    /* Without isc_sqlerr: the primary code's table value. */
    const fbw_status_arg b[] = {GDS(FBW_ISC_LOCK_CONFLICT)};
    cr_assert_eq(sqlcode_vec(b, N(b)), -901);

    fbw_err_clear(&err);
    cr_assert_eq(fbw_status_sqlcode(&err), 0);
    fbw_err_set(&err, FBW_E_EOF, "gone");
    cr_assert_eq(fbw_status_sqlcode(&err), -902);
}

/* ---- classification ---------------------------------------------------------------- */

static fbw_errclass classify(const fbw_status_arg *a, int n)
{
    fbw_err err;
    cr_assert_eq(decode(a, n, &err, NULL), FBW_E_SERVER);
    return fbw_err_classify(&err);
}

Test(status, classify_server_vectors)
{
    const fbw_status_arg deadlock[] = {GDS(FBW_ISC_DEADLOCK)};
    const fbw_status_arg read_conflict[] = {GDS(FBW_ISC_DEADLOCK), GDS(FBW_ISC_READ_CONFLICT),
                                            GDS(FBW_ISC_CONCURRENT_TRANSACTION), STR("9")};
    const fbw_status_arg nowait[] = {GDS(FBW_ISC_LOCK_CONFLICT),
                                     GDS(FBW_ISC_CONCURRENT_TRANSACTION), STR("9")};
    const fbw_status_arg timeout[] = {GDS(FBW_ISC_NO_META_UPDATE), GDS(FBW_ISC_LOCK_TIMEOUT),
                                      GDS(FBW_ISC_OBJ_IN_USE), STR("DATABASE")};
    const fbw_status_arg fk[] = {GDS(FBW_ISC_FOREIGN_KEY), STR("FK_X"), STR("T"),
                                 GDS(FBW_ISC_FOREIGN_KEY_TARGET_DOESNT_EXIST)};
    const fbw_status_arg dup[] = {GDS(FBW_ISC_NO_DUP), STR("RDB$PRIMARY1")};
    const fbw_status_arg syntax[] = {GDS(FBW_ISC_DSQL_ERROR),
                                     GDS(FBW_ISC_SQLERR),
                                     NUM(-104),
                                     GDS(FBW_ISC_DSQL_TOKEN_UNK_ERR),
                                     NUM(1),
                                     NUM(1),
                                     GDS(FBW_ISC_RANDOM),
                                     STR("SELEC")};
    const fbw_status_arg column[] = {GDS(FBW_ISC_DSQL_ERROR),     GDS(FBW_ISC_SQLERR), NUM(-206),
                                     GDS(FBW_ISC_DSQL_FIELD_ERR), GDS(FBW_ISC_RANDOM), STR("C")};
    const fbw_status_arg login[] = {GDS(FBW_ISC_LOGIN)};
    const fbw_status_arg crypt[] = {GDS(FBW_ISC_WIRECRYPT_INCOMPATIBLE)};
    const fbw_status_arg net[] = {GDS(FBW_ISC_NETWORK_ERROR), STR("host"),
                                  GDS(FBW_ISC_NET_READ_ERR)};
    const fbw_status_arg shut[] = {GDS(FBW_ISC_ATT_SHUTDOWN), GDS(FBW_ISC_ATT_SHUT_KILLED)};
    const fbw_status_arg lost[] = {GDS(FBW_ISC_LOST_DB_CONNECTION)};
    const fbw_status_arg baddb[] = {GDS(FBW_ISC_BAD_DB_FORMAT), STR("/tmp/x")};
    const fbw_status_arg other[] = {GDS(FBW_ISC_ARITH_EXCEPT), GDS(FBW_ISC_STRING_TRUNCATION)};
    const fbw_status_arg ddl[] = {GDS(FBW_ISC_NO_META_UPDATE), GDS(FBW_ISC_DSQL_COMMAND_ERR)};

    cr_assert_eq(classify(deadlock, N(deadlock)), FBW_EC_DEADLOCK);
    cr_assert_eq(classify(read_conflict, N(read_conflict)), FBW_EC_UPDATE_CONFLICT);
    cr_assert_eq(classify(nowait, N(nowait)), FBW_EC_LOCK_CONFLICT);
    cr_assert_eq(classify(timeout, N(timeout)), FBW_EC_LOCK_TIMEOUT);
    cr_assert_eq(classify(fk, N(fk)), FBW_EC_FOREIGN_KEY);
    cr_assert_eq(classify(dup, N(dup)), FBW_EC_UNIQUE);
    cr_assert_eq(classify(syntax, N(syntax)), FBW_EC_SYNTAX);
    cr_assert_eq(classify(column, N(column)), FBW_EC_UNKNOWN_OBJECT);
    cr_assert_eq(classify(login, N(login)), FBW_EC_AUTH);
    cr_assert_eq(classify(crypt, N(crypt)), FBW_EC_AUTH);
    cr_assert_eq(classify(net, N(net)), FBW_EC_CONNECTION_LOST);
    cr_assert_eq(classify(shut, N(shut)), FBW_EC_CONNECTION_LOST);
    cr_assert_eq(classify(lost, N(lost)), FBW_EC_CONNECTION_LOST);
    cr_assert_eq(classify(baddb, N(baddb)), FBW_EC_NO_DATABASE);
    cr_assert_eq(classify(other, N(other)), FBW_EC_OTHER);
    cr_assert_eq(classify(ddl, N(ddl)), FBW_EC_OTHER);
}

Test(status, classify_client_errors)
{
    fbw_err err;
    fbw_err_clear(&err);
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_NONE);
    cr_assert_eq(fbw_err_classify(NULL), FBW_EC_NONE);
    cr_assert(fbw_err_in_class(NULL, FBW_EC_NONE));
    fbw_err_set(&err, FBW_E_EOF, "connection lost");
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_CONNECTION_LOST);
    fbw_err_set_errno(&err, 104, "recv");
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_CONNECTION_LOST);
    /* a timed-out wait closed the connection: TIMEOUT first, CONNECTION_LOST too */
    fbw_err_set(&err, FBW_E_TIMEOUT, "no reply");
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_TIMEOUT);
    cr_assert(fbw_err_in_class(&err, FBW_EC_CONNECTION_LOST));
    cr_assert(!fbw_err_in_class(&err, FBW_EC_OTHER));
    fbw_err_set(&err, FBW_E_AUTH, "no plugin");
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_AUTH);
    fbw_err_set(&err, FBW_E_PROTO, "bad");
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_OTHER);
    cr_assert(fbw_err_in_class(&err, FBW_EC_OTHER));
    cr_assert(!fbw_err_in_class(&err, FBW_EC_NONE));
}

/* Membership: a record conflict (isc_deadlock + isc_update_conflict) is in both classes, its
 * class is the refinement; a class no code names is not held. */
Test(status, class_membership_of_chain_codes)
{
    const fbw_status_arg a[] = {GDS(FBW_ISC_DEADLOCK), GDS(FBW_ISC_UPDATE_CONFLICT),
                                GDS(FBW_ISC_CONCURRENT_TRANSACTION), STR("77")};
    fbw_err err;
    cr_assert_eq(decode(a, N(a), &err, NULL), FBW_E_SERVER);
    cr_assert(fbw_err_in_class(&err, FBW_EC_DEADLOCK));
    cr_assert(fbw_err_in_class(&err, FBW_EC_UPDATE_CONFLICT));
    cr_assert(!fbw_err_in_class(&err, FBW_EC_LOCK_CONFLICT));
    cr_assert(!fbw_err_in_class(&err, FBW_EC_OTHER));
    cr_assert(!fbw_err_in_class(&err, FBW_EC_COUNT), "not a class");
    cr_assert(!fbw_err_in_class(&err, (fbw_errclass)-1), "not a class");
    cr_assert(fbw_err_has_gds(&err, FBW_ISC_CONCURRENT_TRANSACTION));
    cr_assert(!fbw_err_has_gds(&err, FBW_ISC_LOCK_CONFLICT));
    cr_assert(!fbw_err_has_gds(NULL, FBW_ISC_DEADLOCK));
}

/* The classes that come from secondary codes only: FB4 statement timeouts (isc_cancelled + the
 * level), a killed attachment (isc_att_shutdown + isc_att_shut_killed), FB3's isc_no_cur_rec. */
Test(status, classify_secondary_codes)
{
    const fbw_status_arg cancel[] = {GDS(FBW_ISC_CANCELLED)};
    const fbw_status_arg stmt_to[] = {GDS(FBW_ISC_CANCELLED), GDS(FBW_ISC_ATT_STMT_TIMEOUT)};
    const fbw_status_arg req_to[] = {GDS(FBW_ISC_CANCELLED), GDS(FBW_ISC_REQ_STMT_TIMEOUT)};
    const fbw_status_arg cfg_to[] = {GDS(FBW_ISC_CANCELLED), GDS(FBW_ISC_CFG_STMT_TIMEOUT)};
    const fbw_status_arg killed[] = {GDS(FBW_ISC_ATT_SHUTDOWN), GDS(FBW_ISC_ATT_SHUT_KILLED)};
    const fbw_status_arg gone[] = {GDS(FBW_ISC_BAD_DB_HANDLE)};
    const fbw_status_arg no_cur[] = {GDS(FBW_ISC_NO_CUR_REC)};
    const fbw_status_arg lost_after[] = {GDS(FBW_ISC_UNIQUE_KEY_VIOLATION), STR("PK"), STR("T"),
                                         GDS(FBW_ISC_NET_READ_ERR)};
    cr_assert_eq(classify(cancel, N(cancel)), FBW_EC_CANCELLED);
    cr_assert_eq(classify(stmt_to, N(stmt_to)), FBW_EC_STATEMENT_TIMEOUT);
    cr_assert_eq(classify(req_to, N(req_to)), FBW_EC_STATEMENT_TIMEOUT);
    cr_assert_eq(classify(cfg_to, N(cfg_to)), FBW_EC_STATEMENT_TIMEOUT);
    cr_assert_eq(classify(killed, N(killed)), FBW_EC_CONNECTION_LOST);
    cr_assert_eq(classify(gone, N(gone)), FBW_EC_CONNECTION_LOST);
    cr_assert_eq(classify(no_cur, N(no_cur)), FBW_EC_UPDATE_CONFLICT);
    cr_assert_eq(classify(lost_after, N(lost_after)), FBW_EC_CONNECTION_LOST);
    fbw_err err;
    cr_assert_eq(decode(stmt_to, N(stmt_to), &err, NULL), FBW_E_SERVER);
    cr_assert(fbw_err_in_class(&err, FBW_EC_CANCELLED), "a statement timeout is a cancel too");
}

/* isc_random alone: the engine's text is all there is (errclass.c random_text). The text decides
 * only when no code of the chain has a class, and only with isc_random in the chain. */
Test(status, classify_isc_random_text)
{
    const fbw_status_arg erased[] = {GDS(FBW_ISC_RANDOM), STR("cannot update erased record")};
    const fbw_status_arg other_text[] = {GDS(FBW_ISC_RANDOM), STR("cannot delete system relations")};
    /* a code with a class wins over the text */
    const fbw_status_arg coded[] = {GDS(FBW_ISC_LOCK_CONFLICT), GDS(FBW_ISC_RANDOM),
                                    STR("cannot update erased record")};
    /* the same words without isc_random (an exception's message) decide nothing */
    const fbw_status_arg exc[] = {GDS(FBW_ISC_EXCEPT), NUM(1), GDS(FBW_ISC_RANDOM - 1u),
                                  STR("cannot update erased record")};
    cr_assert_eq(classify(erased, N(erased)), FBW_EC_UPDATE_CONFLICT);
    cr_assert_eq(classify(other_text, N(other_text)), FBW_EC_OTHER);
    cr_assert_eq(classify(coded, N(coded)), FBW_EC_LOCK_CONFLICT);
    cr_assert_eq(classify(exc, N(exc)), FBW_EC_OTHER);
    fbw_err err;
    cr_assert_eq(decode(erased, N(erased), &err, NULL), FBW_E_SERVER);
    cr_assert_str_eq(err.msg, "cannot update erased record");
    fbw_err_prefix(&err, "statement 2 of 3 of the pipelined transaction (x)");
    cr_assert_eq(fbw_err_classify(&err), FBW_EC_UPDATE_CONFLICT, "a prefix keeps the class");
}

Test(status, errclass_names_distinct)
{
    for (int i = FBW_EC_NONE; i < FBW_EC_COUNT; i++) {
        const char *a = fbw_errclass_name((fbw_errclass)i);
        cr_assert_not_null(a);
        cr_assert_str_neq(a, "unknown");
        for (int j = FBW_EC_NONE; j < i; j++)
            cr_assert_str_neq(a, fbw_errclass_name((fbw_errclass)j));
        fbw_errclass back = FBW_EC_COUNT;
        cr_assert(fbw_errclass_from_name(a, &back), "%s", a);
        cr_assert_eq((int)back, i, "%s", a);
    }
    cr_assert_str_eq(fbw_errclass_name(FBW_EC_LOCK_TIMEOUT), "lock_timeout");
    cr_assert_str_eq(fbw_errclass_name(FBW_EC_COUNT), "unknown");
    cr_assert_str_eq(fbw_errclass_name((fbw_errclass)-3), "unknown");
}

Test(status, errclass_from_option_spelling)
{
    fbw_errclass c = FBW_EC_NONE;
    cr_assert(fbw_errclass_from_name("update-conflict", &c));
    cr_assert_eq(c, FBW_EC_UPDATE_CONFLICT);
    cr_assert(fbw_errclass_from_name("Lock-Timeout", &c));
    cr_assert_eq(c, FBW_EC_LOCK_TIMEOUT);
    cr_assert(fbw_errclass_from_name("statement_timeout", &c));
    cr_assert_eq(c, FBW_EC_STATEMENT_TIMEOUT);
    c = FBW_EC_AUTH;
    cr_assert(!fbw_errclass_from_name("update-conflicts", &c));
    cr_assert(!fbw_errclass_from_name("update", &c));
    cr_assert(!fbw_errclass_from_name("", &c));
    cr_assert(!fbw_errclass_from_name(NULL, &c));
    cr_assert_eq(c, FBW_EC_AUTH, "untouched on failure");
}

/* ---- msgs.c table -------------------------------------------------------------------- */

Test(status, msgs_table_sorted_and_well_formed)
{
    size_t n = 0;
    const fbw_msg *t = fbw_msg_table(&n);
    cr_assert_geq(n, 150);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(t[i].code & 0xFC000000u, 0x14000000u, "%s", t[i].name);
        cr_assert_eq(strncmp(t[i].name, "isc_", 4), 0);
        cr_assert_eq(strlen(t[i].sqlstate), 5, "%s", t[i].name);
        cr_assert_not_null(t[i].text);
        if (i > 0)
            cr_assert_gt(t[i].code, t[i - 1].code, "%s after %s", t[i].name, t[i - 1].name);
        cr_assert_eq(fbw_msg_find(t[i].code), &t[i]);
    }
    cr_assert_null(fbw_msg_find(0));
    cr_assert_null(fbw_msg_find(335544320u));
    cr_assert_null(fbw_msg_find(0xFFFFFFFFu));
}

Test(status, msgs_match_reference_numbers)
{
    /* Numbers from docs/protocol/packets.md §5.4, computed there from Firebird's message
     * headers. */
    static const struct {
        uint32_t code;
        const char *name;
        int sqlcode;
        const char *state;
    } ref[] = {
        {335544472u, "isc_login", -902, "28000"},
        {335545106u, "isc_login_error", -902, "08006"},
        {335544721u, "isc_network_error", -902, "08006"},
        {335544336u, "isc_deadlock", -913, "40001"},
        {335544451u, "isc_update_conflict", -904, "40001"},
        {335544345u, "isc_lock_conflict", -901, "40001"},
        {335544510u, "isc_lock_timeout", -901, "40001"},
        {335544665u, "isc_unique_key_violation", -803, "23000"},
        {335544580u, "isc_dsql_relation_err", -204, "42S02"},
        {335544578u, "isc_dsql_field_err", -206, "42S22"},
        {336397208u, "isc_dsql_line_col_error", -206, "42000"},
        {335545204u, "isc_db_crypt_key", -902, "08004"},
        {335545179u, "isc_multi_segment_dup", -901, "22000"},
        {335544914u, "isc_string_truncation", -802, "22001"},
        {335544794u, "isc_cancelled", -901, "HY008"},
    };
    for (size_t i = 0; i < sizeof ref / sizeof ref[0]; i++) {
        const fbw_msg *m = fbw_msg_find(ref[i].code);
        cr_assert_not_null(m, "%s", ref[i].name);
        cr_expect_str_eq(m->name, ref[i].name);
        cr_expect_eq(m->sqlcode, ref[i].sqlcode, "%s", ref[i].name);
        cr_expect_str_eq(m->sqlstate, ref[i].state, "%s", ref[i].name);
    }
}
