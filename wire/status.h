/* SPDX-License-Identifier: MIT */
/* status.h - Firebird status vectors: framing on the wire, interpretation into fbw_err
 * (gds chain, SQLSTATE, SQLCODE, isql-style text from msgs.c), warnings kept apart, error classes
 * for retry decisions, and an encoder for tests and fake servers.
 *
 * No I/O, no allocation. Layout: docs/protocol/packets.md §5, src/remote/protocol.cpp
 * xdr_status_vector; interpretation rules: src/yvalve/gds.cpp fb_sqlstate, gds__sqlcode. */
#ifndef FBW_STATUS_H
#define FBW_STATUS_H

#include "err.h"
#include "xdr.h"

/* isc_arg_* argument types that may appear on the wire (iberror.h). */
enum {
    FBW_ARG_END = 0,
    FBW_ARG_GDS = 1,
    FBW_ARG_STRING = 2,
    FBW_ARG_NUMBER = 4,
    FBW_ARG_INTERPRETED = 5,
    FBW_ARG_UNIX = 7,
    FBW_ARG_NEXT_MACH = 15,
    FBW_ARG_WIN32 = 17,
    FBW_ARG_WARNING = 18,
    FBW_ARG_SQL_STATE = 19,
};

#define FBW_STATUS_MAX_ENTRIES 256 /* argument entries per vector, isc_arg_end included */
#define FBW_STATUS_MAX_STRING 65535

/* Walk one status vector at the reader position, checking every argument type (unknown ->
 * FBW_E_PROTO "status arg type unknown"), string lengths (<= 65535) and the entry count (<= 256).
 * Returns a view of the vector from its first argument type to just after isc_arg_end, valid as
 * long as the reader's buffer; on failure an empty view and r->rc says why (r->short_rc when the
 * bytes end early, so FBW_AGAIN on a growing stream). */
FBW_API fbw_bytes fbw_status_frame(fbw_rd *r);
/* The same, also describing a failure in err (may be NULL) with the offending value and stream
 * offset: "status arg type 42 unknown at offset 118". */
FBW_API fbw_bytes fbw_status_frame_ex(fbw_rd *r, fbw_err *err);

/* Warnings (isc_arg_warning items), kept apart from errors. */
#define FBW_WARNINGS_MAX 8
typedef struct fbw_warnings {
    int n; /* codes stored in code[] (extra ones are only rendered) */
    uint32_t code[FBW_WARNINGS_MAX];
    char msg[512]; /* rendered like errors, lines joined with "\n-" */
} fbw_warnings;

/* Interpret a framed vector. Success (first item isc_arg_gds 0, or no error item) -> FBW_OK with
 * err cleared. Error -> FBW_E_SERVER with err->gds (primary first, at most FBW_ERR_GDS_MAX),
 * err->sqlstate (isc_arg_sql_state wins, else the first specific per-code state, general states
 * 22000/42000/HY000 only if nothing better, default HY000), err->msg (one line per item from the
 * templates, joined with "\n-" like isql; unknown code -> "gds code N: args"; interpreted text as
 * is; truncated with "..."). err is required; warn (may be NULL) gets the warnings of either
 * kind of vector. A malformed vector gives FBW_E_PROTO (described in err). */
FBW_API int fbw_status_decode(fbw_bytes vec, fbw_err *err, fbw_warnings *warn);
/* Cheap check on a framed vector: 1 when it reports no error (as above), else 0. */
FBW_API int fbw_status_is_success(fbw_bytes vec);

/* SQLCODE of a decoded error. fbw_err keeps no arguments, so isc_sqlerr's number is not available
 * here: the first code in the chain other than isc_dsql_error/isc_sqlerr with a non-generic table
 * SQLCODE is used instead (the number isc_sqlerr carries in the vectors seen in practice),
 * default -999; 0 when err holds no error. fbw_status_sqlcode_vec is exact. */
FBW_API int fbw_status_sqlcode(const fbw_err *err);
/* SQLCODE of a framed vector exactly as gds.cpp gds__sqlcode: the number after isc_sqlerr wins,
 * else the primary code's table SQLCODE unless generic, else -999; 0 for success. */
FBW_API int fbw_status_sqlcode_vec(fbw_bytes vec);

/* Append a status vector made of nargs entries plus isc_arg_end. String types (2, 5, 19) write
 * `str` (NULL = empty), every other type writes `num`, so invalid vectors can be built for tests.
 */
typedef struct fbw_status_arg {
    int type;
    uint32_t num;
    const char *str;
} fbw_status_arg;
FBW_API void fbw_status_encode(fbw_wr *w, const fbw_status_arg *args, int nargs);

/* Error classes the sysbench driver acts on, decided from gds codes and fbw_err codes only. */
typedef enum {
    FBW_EC_NONE,
    FBW_EC_OTHER,
    FBW_EC_SYNTAX,
    FBW_EC_UNKNOWN_OBJECT,
    FBW_EC_UNIQUE,
    FBW_EC_FOREIGN_KEY,
    FBW_EC_UPDATE_CONFLICT,
    FBW_EC_DEADLOCK,
    FBW_EC_LOCK_CONFLICT,
    FBW_EC_LOCK_TIMEOUT,
    FBW_EC_CONNECTION_LOST,
    FBW_EC_AUTH,
    FBW_EC_NO_DATABASE
} fbw_errclass;

/* FBW_OK -> NONE; FBW_E_EOF/IO/TIMEOUT -> CONNECTION_LOST; FBW_E_AUTH -> AUTH; FBW_E_SERVER ->
 * the most specific class any code of the chain belongs to (see status.c); anything else OTHER. */
FBW_API fbw_errclass fbw_err_classify(const fbw_err *err);
/* "update_conflict" etc.; never NULL. */
FBW_API const char *fbw_errclass_name(fbw_errclass c);

#endif
