/* SPDX-License-Identifier: MIT */
/* test_split.c - the statement splitter of fbwire-sql (tools/fbwire-sql/split.c): terminators
 * outside quotes and comments, SET TERM, empty statements, line numbers, and the errors for
 * unterminated quotes and comments. */
#include <criterion/criterion.h>

#include "split.h"

#include <stdlib.h>
#include <string.h>

#define MAXS 16

typedef struct result {
    int rc; /* FBW_OK, or the error that stopped splitting */
    int n;
    char *sql[MAXS]; /* heap copies */
    unsigned line[MAXS];
    char msg[FBW_ERR_MSG_MAX];
} result;

/* Split one text completely (stopping at the first error). */
static result split_all(sqltool_split *sp, const char *text)
{
    result r;
    memset(&r, 0, sizeof r);
    sqltool_split_feed(sp, text, strlen(text));
    for (;;) {
        sqltool_split_stmt st;
        fbw_err err;
        fbw_err_clear(&err);
        r.rc = sqltool_split_next(sp, &st, &err);
        if (r.rc) {
            strcpy(r.msg, err.msg);
            break;
        }
        if (!st.sql)
            break;
        cr_assert_lt(r.n, MAXS);
        cr_assert(st.sql >= text && st.sql + st.len <= text + strlen(text),
                  "statement outside the text");
        r.sql[r.n] = strndup(st.sql, st.len);
        r.line[r.n++] = st.line;
    }
    return r;
}

static result split1(const char *text)
{
    sqltool_split sp;
    sqltool_split_init(&sp);
    return split_all(&sp, text);
}

static void result_free(result *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->sql[i]);
}

/* Expect exactly the statements in want (NULL-terminated). */
static void expect(const char *text, const char *const *want)
{
    result r = split1(text);
    cr_expect_eq(r.rc, FBW_OK, "error %d (%s) for: %s", r.rc, r.msg, text);
    int n = 0;
    while (want[n])
        n++;
    cr_expect_eq(r.n, n, "%d statements instead of %d for: %s", r.n, n, text);
    for (int i = 0; i < n && i < r.n; i++)
        cr_expect_str_eq(r.sql[i], want[i], "statement %d of: %s", i, text);
    result_free(&r);
}

Test(split, two_statements_and_trimming)
{
    const char *want[] = {"select 1 from rdb$database", "select 2 from t", NULL};
    expect("  select 1 from rdb$database ;\n\t select 2 from t;  \n", want);
}

Test(split, last_statement_needs_no_terminator)
{
    const char *want[] = {"create table t (a int)", "insert into t values (1)", NULL};
    expect("create table t (a int); insert into t values (1)  \n", want);
    const char *one[] = {"select 1 from rdb$database", NULL};
    expect("select 1 from rdb$database", one);
}

Test(split, terminator_inside_quotes_is_text)
{
    const char *want[] = {"insert into t values ('a;b', 'it''s;', '')", "select \"x;\"\"y\" from t",
                          "select 'tail' from t", NULL};
    expect(
        "insert into t values ('a;b', 'it''s;', '');select \"x;\"\"y\" from t;select 'tail' from t",
        want);
}

Test(split, q_strings)
{
    const char *want[] = {"select q'{a;'b}' from t", "select q'!x;y!' from t",
                          "select seq'x' from t", NULL};
    /* seq'x' is not a q-string: the q is inside a word, so 'x' is an ordinary string */
    expect("select q'{a;'b}' from t; select q'!x;y!' from t; select seq'x' from t;", want);
}

Test(split, comments_hide_terminators_and_are_trimmed)
{
    const char *want[] = {"select 1 /* ; */ from t -- ; \n where a = 1", "select 2 from t", NULL};
    expect("-- leading; comment\n/* block; */ select 1 /* ; */ from t -- ; \n where a = 1 -- "
           "trailing\n;"
           "\nselect 2 from t /* trailing block */ ;",
           want);
}

Test(split, comment_markers_inside_strings_are_text)
{
    const char *want[] = {"select '--;', '/*;' from t", "select 2 from t", NULL};
    expect("select '--;', '/*;' from t; select 2 from t", want);
}

Test(split, empty_statements_are_skipped)
{
    const char *none[] = {NULL};
    expect("", none);
    expect(" ;;  ; -- only a comment\n ; /* and another */ ;\n", none);
    const char *want[] = {"select 1 from t", NULL};
    expect(";;select 1 from t;;;", want);
}

Test(split, line_numbers)
{
    result r = split1("\n\nselect 1\nfrom t;\n-- c\n\n  select 2 from t;\nselect\n'a\nb' from t;");
    cr_assert_eq(r.rc, FBW_OK);
    cr_assert_eq(r.n, 3);
    cr_expect_eq(r.line[0], 3);
    cr_expect_eq(r.line[1], 7);
    cr_expect_eq(r.line[2], 8);
    result_free(&r);
}

Test(split, set_term_for_psql)
{
    const char *text = "create table t (a int);\n"
                       "SET TERM ^ ;\n"
                       "create procedure p returns (r int) as\nbegin\n  r = 1;\n  suspend;\nend^\n"
                       "execute block as begin insert into t values (1); end ^\n"
                       "set   term ; ^\n"
                       "select r from p;\n";
    const char *want[] = {"create table t (a int)",
                          "create procedure p returns (r int) as\nbegin\n  r = 1;\n  suspend;\nend",
                          "execute block as begin insert into t values (1); end", "select r from p",
                          NULL};
    expect(text, want);
}

Test(split, set_term_multichar_and_terminator_word)
{
    const char *want[] = {"select 1; select 2 from t", "select 3 from t", NULL};
    expect("set terminator !! ;select 1; select 2 from t!! select 3 from t !!", want);
}

Test(split, set_term_inside_a_string_is_a_statement)
{
    const char *want[] = {"select 'SET TERM ^' from t", "SET TERMS ^", NULL};
    expect("select 'SET TERM ^' from t; SET TERMS ^;", want);
}

Test(split, set_term_errors)
{
    result r = split1("select 1 from t;\nset term ;");
    cr_expect_eq(r.rc, FBW_E_BADVALUE);
    cr_expect(strstr(r.msg, "SET TERM at line 2") != NULL, "%s", r.msg);
    cr_expect_eq(r.n, 1);
    result_free(&r);
    r = split1("set term a b;");
    cr_expect_eq(r.rc, FBW_E_BADVALUE, "two words");
    result_free(&r);
    r = split1("set term 12345678901234567;");
    cr_expect_eq(r.rc, FBW_E_BADVALUE, "17 bytes");
    cr_expect(strstr(r.msg, "longer") != NULL, "%s", r.msg);
    result_free(&r);
    const char *max[] = {"select 1 from t", NULL};
    expect("set term 1234567890123456;select 1 from t 1234567890123456", max);
}

Test(split, terminator_is_kept_across_texts)
{
    sqltool_split sp;
    sqltool_split_init(&sp);
    result a = split_all(&sp, "set term # ;");
    cr_expect_eq(a.rc, FBW_OK);
    cr_expect_eq(a.n, 0);
    result b = split_all(&sp, "select 1; select 2 from t#\nselect 3 from t");
    cr_expect_eq(b.rc, FBW_OK);
    cr_assert_eq(b.n, 2);
    cr_expect_str_eq(b.sql[0], "select 1; select 2 from t");
    cr_expect_str_eq(b.sql[1], "select 3 from t");
    cr_expect_eq(b.line[1], 2, "lines count from 1 in each text");
    result_free(&a);
    result_free(&b);
}

static void expect_error(const char *text, const char *needle, int statements_before)
{
    result r = split1(text);
    cr_expect_eq(r.rc, FBW_E_BADVALUE, "no error for: %s", text);
    cr_expect(strstr(r.msg, needle) != NULL, "\"%s\" not in \"%s\"", needle, r.msg);
    cr_expect_eq(r.n, statements_before, "for: %s", text);
    result_free(&r);
}

Test(split, unterminated_quotes_and_comments)
{
    expect_error("select 1 from t;\nselect 'abc;\nfrom t;",
                 "unterminated string starting at line 2", 1);
    expect_error("select \"abc from t", "unterminated quoted identifier starting at line 1", 0);
    expect_error("select 1 from t;\n\n/* open; select 2", "unterminated comment starting at line 3",
                 1);
    expect_error("select q'{abc from t", "unterminated q'' string", 0);
    expect_error("select 'it''", "unterminated string", 0);
}

Test(split, rest_is_dropped_after_an_error)
{
    sqltool_split sp;
    sqltool_split_init(&sp);
    sqltool_split_feed(&sp, "select 'x; select 2 from t;", 27);
    sqltool_split_stmt st;
    fbw_err err;
    cr_expect_eq(sqltool_split_next(&sp, &st, &err), FBW_E_BADVALUE);
    cr_expect_eq(sqltool_split_next(&sp, &st, &err), FBW_OK);
    cr_expect_null(st.sql, "nothing after an error");
}

/* Every prefix of a script splits without reading past its end, into statements inside it. */
Test(split, every_prefix)
{
    const char *text =
        "set term ^ ;\ncreate procedure p as begin /* ; */ exit; end^\n"
        "set term ; ^\ninsert into t values ('a''b', q'[x]', \"c\"\"d\"); -- x\nselect 1 from t";
    size_t n = strlen(text);
    for (size_t k = 0; k <= n; k++) {
        char *copy = malloc(k ? k : 1); /* exactly k bytes: ASan sees any over-read */
        cr_assert_not_null(copy);
        memcpy(copy, text, k);
        sqltool_split sp;
        sqltool_split_init(&sp);
        sqltool_split_feed(&sp, copy, k);
        for (int guard = 0; guard < 20; guard++) {
            sqltool_split_stmt st;
            fbw_err err;
            int rc = sqltool_split_next(&sp, &st, &err);
            cr_assert(rc == FBW_OK || rc == FBW_E_BADVALUE, "prefix %zu: rc %d", k, rc);
            if (rc == FBW_OK && !st.sql)
                break;
            if (rc == FBW_OK)
                cr_assert(st.sql >= copy && st.sql + st.len <= copy + k && st.len > 0);
            cr_assert_lt(guard, 19, "prefix %zu does not end", k);
        }
        free(copy);
    }
}

/* Typed input (sqltool_split_hold): statements come once terminated; the rest waits for more text. */
Test(split, hold_keeps_the_unfinished_statement)
{
    sqltool_split sp;
    sqltool_split_init(&sp);
    sqltool_split_hold(&sp, 1);
    const char *text = "select 1 from rdb$database; select 'a;\n";
    result r = split_all(&sp, text);
    cr_assert_eq(r.rc, FBW_OK, "%s", r.msg);
    cr_assert_eq(r.n, 1);
    cr_assert_str_eq(r.sql[0], "select 1 from rdb$database");
    cr_assert_str_eq(text + sp.rest, " select 'a;\n", "rest: [%s]", text + sp.rest);
    result_free(&r);
    r = split_all(&sp, "select 'a;\n' from t; /* open\n");
    cr_assert_eq(r.n, 1);
    cr_assert_str_eq(r.sql[0], "select 'a;\n' from t");
    result_free(&r);
    r = split_all(&sp, "set term ^;\nselect 1 from x;\n");
    cr_assert_eq(r.n, 0, "after SET TERM ^ the ; does not end it");
    cr_assert_str_eq(sp.term, "^");
    result_free(&r);
    r = split_all(&sp, "  -- only a comment\n");
    cr_assert_eq(r.n, 0);
    cr_assert_eq(sp.rest, strlen("  -- only a comment\n"), "nothing to keep");
    result_free(&r);
}
