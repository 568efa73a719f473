/* SPDX-License-Identifier: MIT */
/* format.h - result sets as text: an aligned table for people, TSV or CSV for programs.
 *
 * A writer gets a header row, then rows of cells (text already in canonical form, or NULL), then
 * the end of the set. TSV and CSV stream each row out at once; the table buffers the set to size
 * its columns. Knows nothing of SQL types except "right-align this column"; does no charset
 * conversion (text is UTF-8; widths count code points). */
#ifndef SQLTOOL_FORMAT_H
#define SQLTOOL_FORMAT_H

#include <stddef.h>
#include <stdio.h>

enum sqltool_fmt_mode {
    SQLTOOL_FMT_TABLE, /* "A | B" columns padded to width, a rule under the header, "(N rows)" after */
    SQLTOOL_FMT_TSV,   /* tab-separated; tab, newline, CR and backslash escaped as \t \n \r \\ */
    SQLTOOL_FMT_CSV,   /* RFC 4180: comma-separated, CRLF, fields with , " CR LF quoted, " doubled */
};

/* One cell: p[0..n) is its text; is_null marks SQL NULL (printed as NULL; p is ignored). */
typedef struct sqltool_fmt_cell {
    const char *p;
    size_t n;
    int is_null;
} sqltool_fmt_cell;

typedef struct sqltool_fmt sqltool_fmt;

/* A writer printing to out (not closed by free). Returns FBW_OK, FBW_E_USAGE (unknown mode) or
 * FBW_E_NOMEM. */
int sqltool_fmt_new(int mode, FILE *out, sqltool_fmt **f);
void sqltool_fmt_free(sqltool_fmt *f);

/* Start a result set of ncols columns with header names[0..ncols) (never NULL cells).
 * right[i] non-zero right-aligns column i in the table (numbers); right may be NULL. */
int sqltool_fmt_begin(sqltool_fmt *f, size_t ncols, const sqltool_fmt_cell *names, const unsigned char *right);
/* One row of ncols cells, copied as needed. */
int sqltool_fmt_row(sqltool_fmt *f, const sqltool_fmt_cell *cells);
/* End the set: the table is printed now, followed by "(N rows)". */
int sqltool_fmt_end(sqltool_fmt *f);
/* Rows given since sqltool_fmt_begin. */
size_t sqltool_fmt_rows(const sqltool_fmt *f);

/* Display width of UTF-8 text: its code points (continuation bytes do not count). */
size_t sqltool_fmt_width(const char *p, size_t n);

/* All return FBW_OK, FBW_E_NOMEM, FBW_E_USAGE (called out of order) or FBW_E_IO (writing failed).
 */

#endif
