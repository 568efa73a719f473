/* SPDX-License-Identifier: MIT */
/* status.h - Firebird status vectors: framing on the wire, interpretation into fbw_err
 * (gds chain, SQLSTATE, SQLCODE, isql-style text from msgs.c), warnings kept apart, error classes
 * for retry decisions (errclass.c), and an encoder for tests and fake servers.
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

/* Error classes: the one error model of the library, the sysbench driver and the tools
 * (docs/library.md "Errors"), decided from the return code and the gds codes of the chain (primary
 * and secondary), never from text, except for the engine errors that carry nothing but
 * isc_random and their text (errclass.c says which and why). Each code is of at most one class;
 * an error is in every class one of its codes is in, and its class is the highest-ranked. */
typedef enum {
    FBW_EC_NONE,             /* no error */
    FBW_EC_OTHER,            /* an error of none of the classes below */
    FBW_EC_SYNTAX,           /* the parser refused the SQL */
    FBW_EC_UNKNOWN_OBJECT,   /* table, column, procedure... unknown */
    FBW_EC_UNIQUE,           /* duplicate key: isc_unique_key_violation, isc_no_dup */
    FBW_EC_FOREIGN_KEY,      /* isc_foreign_key */
    FBW_EC_UPDATE_CONFLICT,  /* a concurrent transaction changed or deleted the row: retry */
    FBW_EC_DEADLOCK,         /* isc_deadlock with no refinement */
    FBW_EC_LOCK_CONFLICT,    /* no-wait lock request refused */
    FBW_EC_LOCK_TIMEOUT,     /* a timed lock wait expired */
    FBW_EC_CONNECTION_LOST,  /* the attachment is gone: EOF, I/O, timeout, shutdown, killed */
    FBW_EC_AUTH,             /* login, auth plugins, wire crypt negotiation */
    FBW_EC_NO_DATABASE,      /* the database file cannot be opened or is not a database */
    FBW_EC_CANCELLED,        /* isc_cancelled: fbw_client_cancel or the server's cancel */
    FBW_EC_STATEMENT_TIMEOUT, /* FB4+: isc_cancelled because a statement timeout expired */
    FBW_EC_TIMEOUT,          /* FBW_E_TIMEOUT: no reply within fbw_client_opts.timeout_ms; the
                              * connection was closed, so CONNECTION_LOST holds too */
    FBW_EC_COUNT             /* number of classes, not a class */
} fbw_errclass;

/* The class of err: NONE for NULL or FBW_OK; FBW_E_EOF/IO -> CONNECTION_LOST; FBW_E_TIMEOUT ->
 * TIMEOUT; FBW_E_AUTH -> AUTH; otherwise the highest-ranked class of the chain's codes (a lost
 * link outranks the server's words, isc_update_conflict outranks the isc_deadlock it comes with);
 * OTHER when none has a class. */
FBW_API fbw_errclass fbw_err_classify(const fbw_err *err);
/* 1 when err is in class c: one of its codes (or its return code) belongs to c, so the isc_deadlock
 * + isc_update_conflict of a record conflict is in DEADLOCK and in UPDATE_CONFLICT. For NONE and
 * OTHER: whether fbw_err_classify gives exactly that. */
FBW_API int fbw_err_in_class(const fbw_err *err, fbw_errclass c);
/* "update_conflict" etc.; "unknown" for a value that is no class; never NULL. */
FBW_API const char *fbw_errclass_name(fbw_errclass c);
/* The class named name as fbw_errclass_name spells it, '-' for '_' and any case accepted
 * ("update-conflict"): 1 and *out set, else 0. */
FBW_API int fbw_errclass_from_name(const char *name, fbw_errclass *out);

#endif
