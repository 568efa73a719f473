/* SPDX-License-Identifier: MIT */
/* sqlt.h - SQL helpers for the integration tests of the statement layer (tests/integ/test_types.c,
 * test_fetch.c, test_tx.c, test_ddl.c, test_leaks.c): connect to one of the test servers, run
 * statements through wire/stmt.h and wire/tx.h with the blocking client, read rows as canonical text,
 * make unique object names, and load RDB$TIME_ZONES for the region-name callback.
 * Every helper whose name ends in _ok fails the calling Criterion test with the server's message;
 * the others return the result for the test to judge. Not a driver: no retries, no caching. */
#ifndef FBW_TEST_SQLT_H
#define FBW_TEST_SQLT_H

#include "servers.h"

typedef struct fbw_sqlt {
    fbw_servers srv;
    fbw_server_id id;
    fbw_client *cl;
    fbw_conn *c;
    fbw_tx *tx;       /* the default transaction, started read committed by fbw_sqlt_open */
    unsigned serial;  /* for fbw_sqlt_name */
    fbw_tx **txs;     /* every transaction fbw_sqlt_tx_start_ok made, freed by fbw_sqlt_close */
    size_t ntxs;
} fbw_sqlt;

/* Connect to server id with the test client options (o may be NULL) and start q->tx. */
void fbw_sqlt_open(fbw_sqlt *q, fbw_server_id id, const fbw_client_opts *o);
/* Roll back q->tx when still active, detach, free. */
void fbw_sqlt_close(fbw_sqlt *q);
/* Send what is queued and read every reply; fails the test on a client/connection error. */
void fbw_sqlt_wait_ok(fbw_sqlt *q);
/* Start a new transaction *t on q (freed by fbw_sqlt_close) / commit t; wait; assert success. */
void fbw_sqlt_tx_start_ok(fbw_sqlt *q, fbw_tx **t, const fbw_tx_opts *o);
void fbw_sqlt_commit_ok(fbw_sqlt *q, fbw_tx *t);

/* A unique upper-case object name "<PREFIX>_<pid>_<serial>" into buf (at most 31 characters). */
const char *fbw_sqlt_name(fbw_sqlt *q, const char *prefix, char *buf, size_t size);

/* Execute immediate in its own transaction, committed (DDL). Returns FBW_OK or the error (in err). */
int fbw_sqlt_ddl(fbw_sqlt *q, const char *sql, fbw_err *err);
void fbw_sqlt_ddl_ok(fbw_sqlt *q, const char *sql);

/* New statement prepared in t (NULL: no transaction) and waited for. Returns the statement even
 * when prepare failed (check fbw_stmt_prepared / fbw_stmt_error); fbw_sqlt_prepare_ok asserts. */
fbw_stmt *fbw_sqlt_prepare(fbw_sqlt *q, fbw_tx *t, const char *sql);
fbw_stmt *fbw_sqlt_prepare_ok(fbw_sqlt *q, fbw_tx *t, const char *sql);
/* Execute s with params and fetch every row into the statement's buffer (rows accumulate: the
 * statement's buffer is not cleared between batches). Returns FBW_OK or the statement's error
 * copied to err. */
int fbw_sqlt_run(fbw_sqlt *q, fbw_stmt *s, fbw_tx *t, const fbw_value *params, fbw_err *err);
/* Prepare + run + free with no parameters; rows become text in out (may be NULL): columns joined
 * by '|', rows ended by '\n', NULL as "NULL". */
int fbw_sqlt_exec(fbw_sqlt *q, fbw_tx *t, const char *sql, fbw_buf *out, fbw_err *err);
void fbw_sqlt_exec_ok(fbw_sqlt *q, fbw_tx *t, const char *sql, fbw_buf *out);
/* First column of the first row of a query as int64 (asserts exactly one row). */
int64_t fbw_sqlt_int_ok(fbw_sqlt *q, fbw_tx *t, const char *sql);
/* Append buffered row i of s as text (format of fbw_sqlt_exec) using tz for zone names. */
void fbw_sqlt_row_text(const fbw_stmt *s, size_t i, const fbw_tznames *tz, fbw_buf *out);
/* NUL-terminate b and return its text. */
const char *fbw_sqlt_str(fbw_buf *b);

/* Region time-zone names from RDB$TIME_ZONES (FB4+), for fbw_value_to_text. */
typedef struct fbw_sqlt_zones {
    char **name; /* indexed by zone id, NULL where unknown */
    size_t n;
} fbw_sqlt_zones;
void fbw_sqlt_zones_load_ok(fbw_sqlt *q, fbw_sqlt_zones *z);
fbw_tznames fbw_sqlt_zones_names(fbw_sqlt_zones *z);
/* Id of a region by name, 0 when unknown. */
uint16_t fbw_sqlt_zone_id(const fbw_sqlt_zones *z, const char *name);
void fbw_sqlt_zones_free(fbw_sqlt_zones *z);

#endif
