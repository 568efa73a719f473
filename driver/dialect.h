/* SPDX-License-Identifier: MIT */
/* dialect.h - turns the SQL that sysbench's upstream scripts send into what Firebird accepts.
 *
 * Pure text work shared by every backend: classify a statement (transaction control, rewrite,
 * multi-row INSERT, plain), rewrite MySQL-only DDL forms (DROP ... IF EXISTS, CREATE ... IF NOT
 * EXISTS) into EXECUTE BLOCKs, split a multi-row INSERT into a one-row template plus decoded
 * literal rows, and inline parameter values for --db-ps-mode=disable. It never talks to a
 * server, never looks at sysbench and keeps no state: everything here is unit-tested alone.
 * Words come from the library's one SQL tokenizer (wire/sqltok.h: '...' and q'...' literals,
 * "..." identifiers, -- and block comments), and transaction control, DDL and multi-row INSERT
 * from its one statement-kind rule (wire/sqlkind.h), which the report's classes use too. */
#ifndef SBDRV_DIALECT_H
#define SBDRV_DIALECT_H

#include "err.h"

#include <stddef.h>
#include <stdint.h>

/* A value handed to a backend: a bound parameter or a literal from a multi-row INSERT. */
typedef enum {
    SBDRV_VAL_NULL = 0,
    SBDRV_VAL_INT64,   /* i */
    SBDRV_VAL_DOUBLE,  /* d */
    SBDRV_VAL_TEXT,    /* s/len: character data, not NUL-terminated, may contain any byte */
    SBDRV_VAL_NUMTEXT  /* s/len: a numeric literal too big or too precise for int64 ("1.5e3") */
} sbdrv_val_type;

typedef struct sbdrv_val {
    sbdrv_val_type type;
    int64_t i;
    double d;
    const char *s;
    size_t len;
} sbdrv_val;

typedef enum {
    SBDRV_SQL_PLAIN = 0,    /* send unchanged */
    SBDRV_SQL_BEGIN,        /* BEGIN [WORK|TRANSACTION], START TRANSACTION */
    SBDRV_SQL_COMMIT,       /* COMMIT [WORK] */
    SBDRV_SQL_ROLLBACK,     /* ROLLBACK [WORK] (not ROLLBACK TO SAVEPOINT) */
    SBDRV_SQL_REWRITTEN,    /* send sbdrv_sql_plan.text instead */
    SBDRV_SQL_BULK_INSERT   /* INSERT ... VALUES (..),(..): use sbdrv_dialect_parse_insert */
} sbdrv_sql_kind;

typedef struct sbdrv_sql_plan {
    sbdrv_sql_kind kind;
    int ddl;      /* metadata change (CREATE, ALTER, DROP, RECREATE, ...): safe to retry */
    char *text;   /* SBDRV_SQL_REWRITTEN only: malloc'd, NUL-terminated; else NULL */
    size_t len;
} sbdrv_sql_plan;

/* A multi-row INSERT split for row-wise execution. `single` is the one-row template
 * "<prefix> VALUES (?, ?, ...)"; values holds nrows*ncols literals, row-major, whose text
 * points into `arena` (strings are unescaped). Everything is owned by the struct. */
typedef struct sbdrv_bulk_insert {
    char *single;
    size_t single_len;
    size_t prefix_len;  /* bytes of `single` before " VALUES" (the "INSERT INTO t(cols)" part) */
    unsigned ncols;
    size_t nrows;
    sbdrv_val *values;
    char *arena;
} sbdrv_bulk_insert;

/* Largest statement the dialect accepts (the bulk layer sends at most 512 KiB). */
#define SBDRV_DIALECT_MAX_SQL (16u * 1024u * 1024u)
/* Largest row arity of a multi-row INSERT. */
#define SBDRV_DIALECT_MAX_COLS 1024u

/* Classify `sql` and, for DROP <obj> IF EXISTS / CREATE TABLE|SEQUENCE IF NOT EXISTS, build the
 * replacement EXECUTE BLOCK. Returns FBW_OK with *plan filled (free with sbdrv_dialect_plan_free),
 * FBW_E_UNSUPPORTED for IF [NOT] EXISTS forms it cannot translate (message says which),
 * FBW_E_USAGE for a statement over SBDRV_DIALECT_MAX_SQL, FBW_E_NOMEM. */
int sbdrv_dialect_plan(const char *sql, size_t len, sbdrv_sql_plan *plan, fbw_err *err);
void sbdrv_dialect_plan_free(sbdrv_sql_plan *plan);

/* Parse a multi-row INSERT (as classified SBDRV_SQL_BULK_INSERT). Literals: NULL, integers
 * (SBDRV_VAL_INT64 when they fit, else SBDRV_VAL_NUMTEXT), decimals/exponents (SBDRV_VAL_NUMTEXT),
 * '...' strings with '' escapes (SBDRV_VAL_TEXT), each optionally signed. Every row must have the
 * same arity. Returns FBW_OK, FBW_E_UNSUPPORTED (a non-literal value, text after the rows,
 * arity mismatch; the message gives the byte offset) or FBW_E_NOMEM. *out is cleared on error. */
int sbdrv_dialect_parse_insert(const char *sql, size_t len, sbdrv_bulk_insert *out, fbw_err *err);
void sbdrv_dialect_bulk_free(sbdrv_bulk_insert *b);

/* Number of '?' placeholders outside literals, quoted identifiers and comments. */
size_t sbdrv_dialect_count_params(const char *sql, size_t len);

/* Replace each placeholder by the SQL literal of params[i] (strings quoted, quotes doubled,
 * doubles with 17 significant digits). Returns FBW_OK with a malloc'd NUL-terminated *out,
 * FBW_E_USAGE when n differs from the number of placeholders or a double is not finite,
 * FBW_E_NOMEM. */
int sbdrv_dialect_inline(const char *sql, size_t len, const sbdrv_val *params, size_t n,
                       char **out, size_t *out_len, fbw_err *err);

#endif
