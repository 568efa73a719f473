/* SPDX-License-Identifier: MIT */
/* test_format.c - the result writers of fbwire-sql (tools/fbwire-sql/format.c): TSV escapes, CSV
 * quoting per RFC 4180, the aligned table (UTF-8 widths, right-aligned numbers, row counts), and
 * calls out of order. */
#include <criterion/criterion.h>

#include "format.h"

#include "err.h"

#include <stdlib.h>
#include <string.h>

typedef struct capture {
    FILE *f;
    char *buf;
    size_t len;
} capture;

static sqltool_fmt *open_fmt(int mode, capture *c)
{
    c->buf = NULL;
    c->len = 0;
    c->f = open_memstream(&c->buf, &c->len);
    cr_assert_not_null(c->f);
    sqltool_fmt *f = NULL;
    cr_assert_eq(sqltool_fmt_new(mode, c->f, &f), FBW_OK);
    return f;
}

/* Close the stream and return what was written (caller frees). */
static char *close_fmt(sqltool_fmt *f, capture *c)
{
    sqltool_fmt_free(f);
    fclose(c->f);
    return c->buf;
}

#define CELL(s) ((sqltool_fmt_cell){(s), sizeof(s) - 1, 0})
#define NUL ((sqltool_fmt_cell){NULL, 0, 1})

/* A set with header (ID, NAME, NOTE) and the given rows of 3 cells, written in mode. */
static char *write_set(int mode, const sqltool_fmt_cell *rows, size_t nrows, const unsigned char *right)
{
    capture c;
    sqltool_fmt *f = open_fmt(mode, &c);
    const sqltool_fmt_cell head[] = {CELL("ID"), CELL("NAME"), CELL("NOTE")};
    cr_assert_eq(sqltool_fmt_begin(f, 3, head, right), FBW_OK);
    for (size_t i = 0; i < nrows; i++)
        cr_assert_eq(sqltool_fmt_row(f, rows + 3 * i), FBW_OK);
    cr_expect_eq(sqltool_fmt_rows(f), nrows);
    cr_assert_eq(sqltool_fmt_end(f), FBW_OK);
    return close_fmt(f, &c);
}

Test(format, tsv_escapes_and_null)
{
    const sqltool_fmt_cell rows[] = {CELL("1"),
                                 CELL("a\tb"),
                                 CELL("line1\nline2\r"),
                                 CELL("2"),
                                 CELL("back\\slash"),
                                 NUL,
                                 CELL("3"),
                                 CELL(""),
                                 CELL("NULL")};
    char *out = write_set(SQLTOOL_FMT_TSV, rows, 3, NULL);
    cr_expect_str_eq(out, "ID\tNAME\tNOTE\n"
                          "1\ta\\tb\tline1\\nline2\\r\n"
                          "2\tback\\\\slash\tNULL\n"
                          "3\t\tNULL\n");
    free(out);
}

Test(format, csv_rfc4180)
{
    const sqltool_fmt_cell rows[] = {CELL("1"),          CELL("a,b"), CELL("say \"hi\""), CELL("2"),
                                 CELL("two\nlines"), NUL,         CELL("3"),          CELL("NULL"),
                                 CELL(""),           CELL("4"),   CELL("tab\tand\\"), CELL("cr\r")};
    char *out = write_set(SQLTOOL_FMT_CSV, rows, 4, NULL);
    cr_expect_str_eq(out, "ID,NAME,NOTE\r\n"
                          "1,\"a,b\",\"say \"\"hi\"\"\"\r\n"
                          "2,\"two\nlines\",NULL\r\n"
                          "3,\"NULL\",\r\n"
                          "4,tab\tand\\,\"cr\r\"\r\n");
    free(out);
}

Test(format, table_alignment_and_count)
{
    const unsigned char right[] = {1, 0, 0};
    const sqltool_fmt_cell rows[] = {CELL("1"), CELL("alpha"), NUL, CELL("1234"), CELL("b"), CELL("x")};
    char *out = write_set(SQLTOOL_FMT_TABLE, rows, 2, right);
    cr_expect_str_eq(out, "ID   | NAME  | NOTE\n"
                          "-----+-------+-----\n"
                          "   1 | alpha | NULL\n"
                          "1234 | b     | x\n"
                          "(2 rows)\n\n");
    free(out);
}

Test(format, table_counts_code_points)
{
    /* "äöü" is 6 bytes but 3 columns wide; "日本" is 6 bytes, 2 wide */
    const sqltool_fmt_cell rows[] = {CELL("1"),
                                 CELL("\xc3\xa4\xc3\xb6\xc3\xbc"),
                                 CELL("\xe6\x97\xa5\xe6\x9c\xac"),
                                 CELL("22"),
                                 CELL("abcd"),
                                 CELL("z")};
    char *out = write_set(SQLTOOL_FMT_TABLE, rows, 2, NULL);
    cr_expect_str_eq(out, "ID | NAME | NOTE\n"
                          "---+------+-----\n"
                          "1  | \xc3\xa4\xc3\xb6\xc3\xbc  | \xe6\x97\xa5\xe6\x9c\xac\n"
                          "22 | abcd | z\n"
                          "(2 rows)\n\n");
    free(out);
}

Test(format, table_escapes_control_characters_only)
{
    const sqltool_fmt_cell rows[] = {CELL("1"), CELL("a\tb\\c"), CELL("x\ny")};
    char *out = write_set(SQLTOOL_FMT_TABLE, rows, 1, NULL);
    cr_expect_str_eq(out, "ID | NAME   | NOTE\n"
                          "---+--------+-----\n"
                          "1  | a\\tb\\c | x\\ny\n"
                          "(1 row)\n\n");
    free(out);
}

Test(format, table_without_rows)
{
    char *out = write_set(SQLTOOL_FMT_TABLE, NULL, 0, NULL);
    cr_expect_str_eq(out, "ID | NAME | NOTE\n"
                          "---+------+-----\n"
                          "(0 rows)\n\n");
    free(out);
}

Test(format, several_sets_in_a_row)
{
    capture c;
    sqltool_fmt *f = open_fmt(SQLTOOL_FMT_TSV, &c);
    const sqltool_fmt_cell h1[] = {CELL("A")}, r1[] = {CELL("1")};
    const sqltool_fmt_cell h2[] = {CELL("B"), CELL("C")}, r2[] = {CELL("2"), NUL};
    cr_assert_eq(sqltool_fmt_begin(f, 1, h1, NULL), FBW_OK);
    cr_assert_eq(sqltool_fmt_row(f, r1), FBW_OK);
    cr_assert_eq(sqltool_fmt_end(f), FBW_OK);
    cr_assert_eq(sqltool_fmt_begin(f, 2, h2, NULL), FBW_OK);
    cr_expect_eq(sqltool_fmt_rows(f), 0);
    cr_assert_eq(sqltool_fmt_row(f, r2), FBW_OK);
    cr_assert_eq(sqltool_fmt_end(f), FBW_OK);
    char *out = close_fmt(f, &c);
    cr_expect_str_eq(out, "A\n1\nB\tC\n2\tNULL\n");
    free(out);
}

Test(format, calls_out_of_order)
{
    capture c;
    sqltool_fmt *f = open_fmt(SQLTOOL_FMT_TABLE, &c);
    const sqltool_fmt_cell h[] = {CELL("A")};
    cr_expect_eq(sqltool_fmt_row(f, h), FBW_E_USAGE, "row before begin");
    cr_expect_eq(sqltool_fmt_end(f), FBW_E_USAGE, "end before begin");
    cr_expect_eq(sqltool_fmt_begin(f, 0, h, NULL), FBW_E_USAGE, "no columns");
    cr_assert_eq(sqltool_fmt_begin(f, 1, h, NULL), FBW_OK);
    cr_expect_eq(sqltool_fmt_begin(f, 1, h, NULL), FBW_E_USAGE, "begin twice");
    cr_expect_eq(sqltool_fmt_end(f), FBW_OK);
    free(close_fmt(f, &c));
    sqltool_fmt *bad = NULL;
    cr_expect_eq(sqltool_fmt_new(7, stdout, &bad), FBW_E_USAGE);
    cr_expect_null(bad);
}

Test(format, write_failure_is_reported)
{
    FILE *ro = fopen("/dev/null", "r"); /* writes to a read-only stream fail */
    cr_assert_not_null(ro);
    sqltool_fmt *f = NULL;
    cr_assert_eq(sqltool_fmt_new(SQLTOOL_FMT_TSV, ro, &f), FBW_OK);
    const sqltool_fmt_cell h[] = {CELL("A")};
    int rc = sqltool_fmt_begin(f, 1, h, NULL);
    if (rc == FBW_OK)
        rc = sqltool_fmt_end(f); /* buffered: the failure shows at the flush */
    cr_expect_eq(rc, FBW_E_IO);
    sqltool_fmt_free(f);
    fclose(ro);
}

Test(format, width)
{
    cr_expect_eq(sqltool_fmt_width("", 0), 0);
    cr_expect_eq(sqltool_fmt_width("abc", 3), 3);
    cr_expect_eq(sqltool_fmt_width("\xc3\xa4x", 3), 2);
    cr_expect_eq(sqltool_fmt_width("\xf0\x9f\x98\x80", 4), 1);
}
