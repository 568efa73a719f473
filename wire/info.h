/* SPDX-License-Identifier: MIT */
/* info.h - parsers for info replies (item, 2-byte little-endian length, value;
 * docs/protocol/statements.md §2.4-2.5): statement describe data (type, flags, input and output
 * columns with names) with the truncation/continue rule, and affected-row counts. Complete buffers,
 * bounds-checked, no I/O. */
#ifndef FBW_INFO_H
#define FBW_INFO_H

#include "msg.h"

enum {
    FBW_INFO_END = 1, FBW_INFO_TRUNCATED = 2, FBW_INFO_ERROR = 3,
    FBW_INFO_SQL_SELECT = 4, FBW_INFO_SQL_BIND = 5, FBW_INFO_SQL_DESCRIBE_VARS = 7,
    FBW_INFO_SQL_DESCRIBE_END = 8, FBW_INFO_SQL_SQLDA_SEQ = 9, FBW_INFO_SQL_TYPE = 11,
    FBW_INFO_SQL_SUB_TYPE = 12, FBW_INFO_SQL_SCALE = 13, FBW_INFO_SQL_LENGTH = 14,
    FBW_INFO_SQL_FIELD = 16, FBW_INFO_SQL_RELATION = 17, FBW_INFO_SQL_OWNER = 18,
    FBW_INFO_SQL_ALIAS = 19, FBW_INFO_SQL_SQLDA_START = 20, FBW_INFO_SQL_STMT_TYPE = 21,
    FBW_INFO_SQL_RECORDS = 23, FBW_INFO_SQL_STMT_FLAGS = 27,
    FBW_INFO_REQ_SELECT_COUNT = 13, FBW_INFO_REQ_INSERT_COUNT = 14, FBW_INFO_REQ_UPDATE_COUNT = 15,
    FBW_INFO_REQ_DELETE_COUNT = 16,
    FBW_INFO_CURSOR_RECORD_COUNT = 10, /* op_info_cursor (IResultSet::INF_RECORD_COUNT, P18) */
};

/* Statement types (isc_info_sql_stmt_*) and flags */
enum {
    FBW_STMT_SELECT = 1, FBW_STMT_INSERT = 2, FBW_STMT_UPDATE = 3, FBW_STMT_DELETE = 4,
    FBW_STMT_DDL = 5, FBW_STMT_EXEC_PROCEDURE = 8, FBW_STMT_START_TRANS = 9, FBW_STMT_COMMIT = 10,
    FBW_STMT_ROLLBACK = 11, FBW_STMT_SELECT_FOR_UPD = 12, FBW_STMT_SET_GENERATOR = 13,
    FBW_STMT_SAVEPOINT = 14,
};
#define FBW_STMT_FLAG_HAS_CURSOR 1

#define FBW_NAME_MAX 252 /* identifiers: 63 characters x 4 bytes */

/* Names of one described column. */
typedef struct fbw_colname {
    char field[FBW_NAME_MAX + 1], relation[FBW_NAME_MAX + 1], alias[FBW_NAME_MAX + 1];
} fbw_colname;

/* One side (input or output) being filled from one or more describe replies. */
typedef struct fbw_describe_side {
    fbw_msgfmt *fmt;     /* cols storage sized by the caller once the count is known */
    fbw_colname *names;  /* may be NULL */
    uint32_t count;      /* from describe_vars */
    uint32_t complete;   /* leading columns whose describe_end was seen */
    int have_count;
} fbw_describe_side;

typedef struct fbw_describe {
    int stmt_type, stmt_flags;
    fbw_describe_side in, out;
    /* Called when a side's count is learned, to size fmt->cols and names (return FBW_OK or NOMEM). */
    int (*alloc)(void *arg, fbw_describe_side *side, uint32_t count);
    void *alloc_arg;
} fbw_describe;

/* Internal, not exported: the describe codec stmt.c runs for fbw_stmt_prepare (a program reads the
 * result through fbw_stmt_input/output and fbw_stmt_*_names). */
/* The describe item list fbwire asks for (type, flags, bind and select sections). */
extern const uint8_t fbw_describe_items[];
extern const size_t fbw_describe_items_len;
/* Items to continue a side from 1-based column index `from`, into buf (>= 32 bytes). */
size_t fbw_describe_continue_items(int select, uint32_t from, uint8_t *buf);

/* Parse one describe reply. Sets *truncated when the server ran out of space; then continue the
 * incomplete side with fbw_describe_continue_items (select side if d->out is incomplete, else bind).
 * Returns FBW_OK or FBW_E_BADVALUE (malformed reply; message says where). */
int fbw_describe_parse(fbw_describe *d, const uint8_t *p, size_t n, int *truncated, fbw_err *err);

/* Internal (stmt.c, fbwire-pcap), not exported: isc_info_sql_records reply: inserted + updated +
 * deleted rows (selected rows in *selected). A program reads them with fbw_stmt_affected. */
int fbw_info_records(const uint8_t *p, size_t n, uint64_t *affected, uint64_t *selected, fbw_err *err);
/* Internal (stmt.c), not exported: the op_info_cursor reply to FBW_INFO_CURSOR_RECORD_COUNT: the
 * rows of the result set (-1 for a cursor that is not scrollable). FBW_E_BADVALUE when the item is
 * missing, truncated or answered with isc_info_error (message says which). */
int fbw_info_cursor_count(const uint8_t *p, size_t n, int64_t *count, fbw_err *err);

#endif
