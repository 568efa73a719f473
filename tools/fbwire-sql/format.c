/* SPDX-License-Identifier: MIT */
/* format.c - table, TSV and CSV writers (format.h). */
#include "format.h"

#include "buf.h"
#include "err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NULL_TEXT "NULL"
#define NULL_LEN ((size_t)-1) /* stored length of a NULL cell in the table */

typedef struct cellref {
    size_t off, len; /* into text; len NULL_LEN for NULL */
} cellref;

struct sqltool_fmt {
    int mode;
    FILE *out;
    int open; /* between begin and end */
    size_t ncols, nrows;
    unsigned char *right;
    size_t *width; /* table: widest cell per column, in code points */
    fbw_buf text;  /* table: escaped cells back to back, header first */
    fbw_buf refs;  /* table: cellref per cell, header first */
    fbw_buf line;  /* scratch for one escaped cell */
};

size_t sqltool_fmt_width(const char *p, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        w += ((unsigned char)p[i] & 0xC0) != 0x80;
    return w;
}

int sqltool_fmt_new(int mode, FILE *out, sqltool_fmt **f)
{
    if (mode != SQLTOOL_FMT_TABLE && mode != SQLTOOL_FMT_TSV && mode != SQLTOOL_FMT_CSV)
        return FBW_E_USAGE;
    sqltool_fmt *x = calloc(1, sizeof *x);
    if (!x)
        return FBW_E_NOMEM;
    x->mode = mode;
    x->out = out;
    fbw_buf_init(&x->text);
    fbw_buf_init(&x->refs);
    fbw_buf_init(&x->line);
    *f = x;
    return FBW_OK;
}

static void drop_set(sqltool_fmt *f)
{
    free(f->right);
    free(f->width);
    f->right = NULL;
    f->width = NULL;
    fbw_buf_reset(&f->text);
    fbw_buf_reset(&f->refs);
    f->open = 0;
}

void sqltool_fmt_free(sqltool_fmt *f)
{
    if (!f)
        return;
    drop_set(f);
    fbw_buf_free(&f->text);
    fbw_buf_free(&f->refs);
    fbw_buf_free(&f->line);
    free(f);
}

size_t sqltool_fmt_rows(const sqltool_fmt *f)
{
    return f->nrows;
}

/* ---- escaping: each writes the cell's text as it will be printed into f->line ---- */

static int put2(fbw_buf *b, char a, char c)
{
    char two[2] = {a, c};
    return fbw_buf_append(b, two, 2);
}

/* Table and TSV: control characters that would break a line or a column become \n \t \r; TSV
 * also escapes the backslash so the text can be read back unambiguously. */
static int escape_line(fbw_buf *b, const char *p, size_t n, int backslash)
{
    int rc = FBW_OK;
    size_t run = 0;
    for (size_t i = 0; i <= n && rc == FBW_OK; i++) {
        char c = i < n ? p[i] : 0;
        char e = c == '\n'                ? 'n'
                 : c == '\t'              ? 't'
                 : c == '\r'              ? 'r'
                 : c == '\\' && backslash ? '\\'
                                          : 0;
        if (i < n && !e)
            continue;
        rc = fbw_buf_append(b, p + run, i - run);
        if (rc == FBW_OK && e)
            rc = put2(b, '\\', e);
        run = i + 1;
    }
    return rc;
}

/* CSV (RFC 4180): quote a field holding , " CR or LF, doubling quotes. The text NULL is quoted
 * too, so that it differs from an SQL NULL, which is written bare. */
static int escape_csv(fbw_buf *b, const char *p, size_t n)
{
    int quote = n == 4 && memcmp(p, NULL_TEXT, 4) == 0;
    for (size_t i = 0; i < n && !quote; i++)
        quote = p[i] == ',' || p[i] == '"' || p[i] == '\r' || p[i] == '\n';
    if (!quote)
        return fbw_buf_append(b, p, n);
    int rc = fbw_buf_append(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n && rc == FBW_OK; i++) {
        if (p[i] != '"')
            continue;
        rc = fbw_buf_append(b, p + run, i + 1 - run); /* up to and including the quote */
        if (rc == FBW_OK)
            rc = fbw_buf_append(b, "\"", 1);
        run = i + 1;
    }
    if (rc == FBW_OK)
        rc = fbw_buf_append(b, p + run, n - run);
    return rc ? rc : fbw_buf_append(b, "\"", 1);
}

static int escape_cell(sqltool_fmt *f, const sqltool_fmt_cell *c)
{
    fbw_buf_reset(&f->line);
    if (c->is_null)
        return fbw_buf_append(&f->line, NULL_TEXT, 4);
    if (f->mode == SQLTOOL_FMT_CSV)
        return escape_csv(&f->line, c->p ? c->p : "", c->n);
    return escape_line(&f->line, c->p ? c->p : "", c->n, f->mode == SQLTOOL_FMT_TSV);
}

/* ---- streaming: TSV and CSV ---- */

static int stream_row(sqltool_fmt *f, const sqltool_fmt_cell *cells)
{
    const char *sep = f->mode == SQLTOOL_FMT_CSV ? "," : "\t";
    const char *eol = f->mode == SQLTOOL_FMT_CSV ? "\r\n" : "\n";
    for (size_t i = 0; i < f->ncols; i++) {
        int rc = escape_cell(f, &cells[i]);
        if (rc)
            return rc;
        if ((i && fputs(sep, f->out) == EOF) ||
            fwrite(f->line.data, 1, f->line.len, f->out) != f->line.len)
            return FBW_E_IO;
    }
    return fputs(eol, f->out) == EOF ? FBW_E_IO : FBW_OK;
}

/* ---- table ---- */

static int store_row(sqltool_fmt *f, const sqltool_fmt_cell *cells)
{
    for (size_t i = 0; i < f->ncols; i++) {
        int rc = escape_cell(f, &cells[i]);
        cellref r = {f->text.len, cells[i].is_null ? NULL_LEN : f->line.len};
        if (rc == FBW_OK)
            rc = fbw_buf_append(&f->text, f->line.data, f->line.len);
        if (rc == FBW_OK)
            rc = fbw_buf_append(&f->refs, &r, sizeof r);
        if (rc)
            return rc;
        size_t w = sqltool_fmt_width(f->line.data ? (const char *)f->line.data : "", f->line.len);
        if (w > f->width[i])
            f->width[i] = w;
    }
    return FBW_OK;
}

static int pad(FILE *out, size_t n, char c)
{
    for (; n > 0; n--)
        if (putc(c, out) == EOF)
            return FBW_E_IO;
    return FBW_OK;
}

/* Print stored row r (0 = header), cells padded to their column width. */
static int print_row(sqltool_fmt *f, size_t r)
{
    const cellref *refs = (const cellref *)(const void *)f->refs.data;
    for (size_t i = 0; i < f->ncols; i++) {
        const cellref *c = &refs[r * f->ncols + i];
        const char *p = c->len == NULL_LEN ? NULL_TEXT : (const char *)f->text.data + c->off;
        size_t n = c->len == NULL_LEN ? 4 : c->len;
        size_t fill = f->width[i] - sqltool_fmt_width(p, n);
        int right = r > 0 && f->right && f->right[i];
        int last = i + 1 == f->ncols;
        if ((i && fputs(" | ", f->out) == EOF) || (right && pad(f->out, fill, ' ')) ||
            fwrite(p, 1, n, f->out) != n || (!right && !last && pad(f->out, fill, ' ')))
            return FBW_E_IO;
    }
    return putc('\n', f->out) == EOF ? FBW_E_IO : FBW_OK;
}

static int print_table(sqltool_fmt *f)
{
    int rc = print_row(f, 0);
    for (size_t i = 0; i < f->ncols && rc == FBW_OK; i++) {
        if (i && fputs("-+-", f->out) == EOF)
            rc = FBW_E_IO;
        else
            rc = pad(f->out, f->width[i], '-');
    }
    if (rc == FBW_OK && putc('\n', f->out) == EOF)
        rc = FBW_E_IO;
    for (size_t r = 1; r <= f->nrows && rc == FBW_OK; r++)
        rc = print_row(f, r);
    if (rc == FBW_OK && fprintf(f->out, "(%zu row%s)\n\n", f->nrows, f->nrows == 1 ? "" : "s") < 0)
        rc = FBW_E_IO;
    return rc;
}

/* ---- the set ---- */

int sqltool_fmt_begin(sqltool_fmt *f, size_t ncols, const sqltool_fmt_cell *names, const unsigned char *right)
{
    if (f->open || ncols == 0)
        return FBW_E_USAGE;
    f->ncols = ncols;
    f->nrows = 0;
    f->right = calloc(ncols, 1);
    f->width = calloc(ncols, sizeof *f->width);
    if (!f->right || !f->width) {
        drop_set(f);
        return FBW_E_NOMEM;
    }
    if (right)
        memcpy(f->right, right, ncols);
    f->open = 1;
    int rc = f->mode == SQLTOOL_FMT_TABLE ? store_row(f, names) : stream_row(f, names);
    if (rc)
        drop_set(f);
    return rc;
}

int sqltool_fmt_row(sqltool_fmt *f, const sqltool_fmt_cell *cells)
{
    if (!f->open)
        return FBW_E_USAGE;
    int rc = f->mode == SQLTOOL_FMT_TABLE ? store_row(f, cells) : stream_row(f, cells);
    if (rc == FBW_OK)
        f->nrows++;
    return rc;
}

int sqltool_fmt_end(sqltool_fmt *f)
{
    if (!f->open)
        return FBW_E_USAGE;
    int rc = f->mode == SQLTOOL_FMT_TABLE ? print_table(f) : FBW_OK;
    drop_set(f);
    if (rc == FBW_OK && fflush(f->out) == EOF)
        rc = FBW_E_IO;
    return rc;
}
