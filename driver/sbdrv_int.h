/* SPDX-License-Identifier: MIT */
/* sbdrv_int.h - the sysbench drivers' parts (driver/sbdrv*.c) and what they share: the driver,
 * connection and statement records and the calls one part makes into another. Internal to the
 * sysbench driver; its contract is sbdrv.h.
 *   sbdrv.c        the entry: driver-level ops, the connection ops, the driver objects
 *   sbdrv_opts.c   the --P-* options: their table, parsing, error classes to ignore
 *   sbdrv_stmt.c   a statement's outcome, the query op, prepared statements, results
 *   sbdrv_conn.c   the host table, releasing a statement, reattaching
 * Each calls only parts listed below it. */
#ifndef SBDRV_INT_H
#define SBDRV_INT_H

#include "sbdrv.h"

#include "backend.h"
#include "dialect.h"
#include "sbreport.h"

#include <stddef.h>
#include <stdint.h>

#define MAX_IGNORE 32

enum { CLASS_NETWORK = 1u, CLASS_ALL = 2u };

/* A code of --P-ignore-errors: a gds code anywhere in the chain, or the error's SQLSTATE. */
typedef struct ignore_rule {
    uint32_t gds;     /* 0 when the rule is a SQLSTATE */
    char sqlstate[6];
} ignore_rule;

typedef struct sbdrv_driver {
    sb_driver drv;
    const sbdrv_backend *be;
    const char *prefix;
    sbdrv_be_conf conf;
    int ps_disable;
    int debug;
    unsigned classes;            /* CLASS_* */
    uint32_t ignore_classes;     /* bit c: errors in fbw_errclass c (status.h) restart the event */
    ignore_rule ignore[MAX_IGNORE];
    int nignore;
    sbdrv_sbrep *rep;              /* wire statistics report of `run` (sbreport.h), or NULL */
} sbdrv_driver;

/* Per sysbench connection (db_conn_t.ptr). */
typedef struct sbdrv_stmt sbdrv_stmt;
typedef struct sbdrv_conn {
    sbdrv_driver *d;
    sbdrv_be_conn *bc;
    sbdrv_be_result res;
    fbw_err err;
    char state[6];
    sbdrv_stmt *stmts;               /* every open statement, for reconnect and disconnect */
    int in_txn;                  /* between BEGIN and COMMIT/ROLLBACK */
    sbdrv_sbrep_conn *rep;         /* round-trip accounting of this connection, or NULL */
    int last_cls;                /* class of the last statement executed (its result's) */
} sbdrv_conn;

/* Per sysbench statement (db_stmt_t.ptr). */
struct sbdrv_stmt {
    sbdrv_stmt *next;
    sbdrv_sql_kind kind;
    char *sql;                   /* as sysbench sent it */
    size_t sql_len;
    char *text;                  /* what the backend prepares (rewritten or sql) */
    size_t text_len;
    int emulated;
    sbdrv_be_stmt *bs;             /* NULL when emulated, or closed by a reconnect */
    sbdrv_val *vals;
    char (*scratch)[32];         /* rendered date/time parameters */
    size_t nvals;
    int cls;                     /* statement class for the report (classify.h) */
};

extern sbdrv_sb_host sbdrv_host; /* sbdrv_conn.c: the host table of sbdrv_setup() */

static inline sbdrv_driver *driver_of(const sb_conn *con)
{
    return (sbdrv_driver *)(void *)con->driver; /* drv is the first member */
}

static inline sbdrv_conn *conn_of(const sb_conn *con)
{
    return con->ptr;
}

/* sbdrv_conn.c */
void sbdrv_stmt_release(sbdrv_conn *sc, sbdrv_stmt *ss);
int sbdrv_reattach(sbdrv_conn *sc);

/* sbdrv_opts.c */
extern sb_arg sbdrv_args_fbwire[];
extern sb_arg sbdrv_args_fbclient[];
const char *sbdrv_opt_string(const sbdrv_driver *d, const char *suffix);
int sbdrv_read_options(sbdrv_driver *d);

/* sbdrv_stmt.c: the ops */
sb_db_error sbdrv_query(sb_conn *con, const char *query, size_t len, sb_result *rs);
int sbdrv_prepare(sb_stmt *stmt, const char *query, size_t len);
int sbdrv_bind_param(sb_stmt *stmt, sb_bind *params, size_t n);
sb_db_error sbdrv_execute(sb_stmt *stmt, sb_result *rs);
int sbdrv_close(sb_stmt *stmt);
int sbdrv_bind_result(sb_stmt *stmt, sb_bind *results, size_t n);
int sbdrv_fetch(sb_result *rs);
int sbdrv_fetch_row(sb_result *rs, sb_row *row);
int sbdrv_free_results(sb_result *rs);

#endif
