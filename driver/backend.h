/* SPDX-License-Identifier: MIT */
/* backend.h - the seam between the generic sysbench driver (sbdrv.c) and a Firebird client.
 *
 * A backend is a small vtable: attach/detach, explicit transactions, prepared statements with
 * fully fetched results, one-shot SQL, row-wise bulk insert and (optionally) wire statistics.
 * It speaks Firebird SQL only: sysbench's MySQL-isms are removed by dialect.c before a backend
 * sees the text, and sysbench structures never reach it. Implementations: be_fbclient*.c (the
 * ISC API of libfbclient, the baseline; parts listed in be_fbclient.h) and be_fbwire*.c (the
 * native protocol client; its entry be_fbwire.c lists the layers). */
#ifndef SBDRV_BACKEND_H
#define SBDRV_BACKEND_H

#include "dialect.h"
#include "err.h"
#include "msg.h"
#include "stats.h"

#include <stddef.h>
#include <stdint.h>

/* Isolation of explicit transactions and of per-statement autocommit transactions. */
typedef enum {
    SBDRV_BE_ISO_READ_COMMITTED = 0,   /* read committed, record version (default) */
    SBDRV_BE_ISO_READ_COMMITTED_NOREC, /* read committed, no record version (waits for writers) */
    SBDRV_BE_ISO_READ_CONSISTENCY,     /* read committed read consistency (Firebird 4+) */
    SBDRV_BE_ISO_SNAPSHOT,             /* concurrency */
    SBDRV_BE_ISO_SERIALIZABLE          /* consistency (table stability) */
} sbdrv_be_isolation;

/* How statements outside BEGIN ... COMMIT are made durable one by one. */
typedef enum {
    SBDRV_AC_PER_STATEMENT = 0, /* start a transaction, run the statement, commit it */
    SBDRV_AC_SHARED,            /* one long-lived read-committed autocommit transaction, restarted
                                 every restart_statements statements or restart_ms ms */
    SBDRV_AC_PIPELINED          /* fbwire only: a write gets its own transaction, started, executed
                                 and committed in one write to the server (one round trip); a
                                 SELECT runs in a long-lived read-only read-committed transaction
                                 restarted like the shared one */
} sbdrv_autocommit;

/* Statements inside BEGIN ... COMMIT (fbwire only). */
typedef enum {
    SBDRV_PIPE_OFF = 0,         /* each statement waits for its reply */
    SBDRV_PIPE_TRANSACTION      /* prepared statements are queued without waiting and written
                                 together at a sync point: COMMIT/ROLLBACK, a result the script
                                 reads, a request that cannot be queued (SQL text, prepare, DDL),
                                 or the caps on replies and bytes in flight. An error of a queued
                                 statement is reported at the next sync point, naming it; a
                                 transaction with a failed statement is never committed */
} sbdrv_pipeline;

/* Connection settings, already validated by sbdrv.c. Strings stay valid while connected. */
typedef struct sbdrv_be_conf {
    const char *db;           /* "host[/port]:path" or alias */
    const char *user;
    const char *password;     /* never logged */
    sbdrv_be_isolation isolation;
    int lock_timeout;         /* seconds; -1 = wait forever, 0 = no wait */
    sbdrv_autocommit autocommit;
    sbdrv_pipeline pipeline;
    unsigned restart_statements; /* SBDRV_AC_SHARED and SBDRV_AC_PIPELINED's read-only transaction:
                                    restart after this many statements (0 = never) */
    unsigned restart_ms;         /* the same after this many ms (0 = never) */
    const char *wire_crypt;   /* "disabled" | "enabled" | "required" (default "enabled") */
    int compress;             /* request wire compression */
    int row_format;           /* fbwire: FBW_ROW_FORMAT_* (wire/msg.h); fbclient sends described */
    const char *auth;         /* client auth plugin list, "" = client default */
    int debug;                /* log extra detail to stderr */
    int create_db;            /* sbdrv.c: create the database when the attach finds none */
    int page_size;            /* create: page size in bytes, 0 = server default */
    int connect_timeout;      /* seconds for TCP connect + login + attach (> 0) */
    int timeout;              /* fbwire: seconds any later wait for the server may last without a
                                 byte (> 0); the wait then fails fatally, naming the request.
                                 fbclient cannot bound these waits (docs/sysbench.md) */
    uint32_t statement_timeout_ms; /* fbwire: sent with every execute (fbw_conn_opts); 0: none */
    const char *client_library; /* fbclient: the libfbclient to dlopen (a path, or a name the
                                   dynamic linker looks up); NULL: libfbclient.so.2 */
} sbdrv_be_conf;

/* A fully fetched result. Cells are row-major; a cell's bytes live in `arena` at `off`.
 * Text rendering: integers and scaled numerics in decimal, CHAR with its blank padding,
 * VARCHAR as stored, other types as the server converts them to text. */
typedef struct sbdrv_be_cell {
    size_t off;
    uint32_t len;
    uint8_t null;
} sbdrv_be_cell;

typedef struct sbdrv_be_result {
    int has_set;        /* the statement returned rows (a SELECT, even with 0 rows) */
    uint32_t ncols;
    uint32_t nrows;
    uint64_t affected;  /* rows inserted + updated + deleted by DML */
    int deferred;       /* pipelined: queued, not answered yet; rows (nrows) and affected are
                         * unknown until fetch_rows (a result set) or the next sync point */
    int deferred_write; /* deferred INSERT, UPDATE or DELETE (counted as a write) */
    sbdrv_be_cell *cells;
    size_t ncells, cells_cap;
    char *arena;
    size_t arena_len, arena_cap;
} sbdrv_be_result;

/* Cap on a buffered result set: beyond it the statement fails with FBW_E_UNSUPPORTED. */
#define SBDRV_BE_RESULT_MAX ((size_t)256 * 1024 * 1024)

/* Result helpers shared by backends (backend.c). reset keeps the memory for reuse. */
void sbdrv_be_result_reset(sbdrv_be_result *r);
void sbdrv_be_result_free(sbdrv_be_result *r);
/* Mark r as a result set of ncols columns (no rows yet). */
void sbdrv_be_result_set_cols(sbdrv_be_result *r, uint32_t ncols);
/* Append one cell (p == NULL: SQL NULL); a row is complete every ncols cells. */
int sbdrv_be_result_add(sbdrv_be_result *r, const void *p, size_t len, fbw_err *err);
/* Pointer to the bytes of cell i (NULL for SQL NULL). Valid until the next add/reset. */
const char *sbdrv_be_cell_ptr(const sbdrv_be_result *r, size_t i);

typedef struct sbdrv_be_conn sbdrv_be_conn; /* one attachment, defined by each backend */
typedef struct sbdrv_be_stmt sbdrv_be_stmt; /* one prepared statement of an attachment */

/* Every int-returning entry gives FBW_OK or a negative FBW_E_* with *err filled:
 *   FBW_E_SERVER  the server refused the operation; err->gds holds the status vector codes
 *                 (primary first), err->sqlstate the SQLSTATE, err->msg the text. The
 *                 connection is usable; a failed autocommit statement left nothing behind.
 *   fbw_is_fatal(rc) (FBW_E_IO, FBW_E_EOF, ...) or err->code == FBW_E_IO with network gds codes:
 *                 the attachment is lost; only close/disconnect may follow.
 *   others        local failures (FBW_E_NOMEM, FBW_E_USAGE, FBW_E_UNSUPPORTED).
 * A backend object is used by one thread at a time; backends keep no mutable globals except
 * what global_init sets up once. */
typedef struct sbdrv_backend {
    const char *name;
    /* Once per process before the first connect (may be called again: then a no-op; the
     * configuration is the one every later connect gets). */
    int (*global_init)(const sbdrv_be_conf *conf, fbw_err *err);
    /* The client library in use, "PATH (version)", for the report; NULL when the backend has
     * none of its own to name (fbwire) or before global_init succeeded. May be NULL itself. */
    const char *(*client_library)(void);
    /* Attach. *out stays NULL on failure. */
    int (*connect)(const sbdrv_be_conf *conf, sbdrv_be_conn **out, fbw_err *err);
    /* Create the database (conf->page_size) and stay attached to it, like connect. Fails when
     * the file exists: the server never overwrites a database. */
    int (*create)(const sbdrv_be_conf *conf, sbdrv_be_conn **out, fbw_err *err);
    /* Roll back any open transaction, detach and free. Never fails; also frees a connection
     * whose attachment is already lost. All statements must have been closed before. */
    void (*disconnect)(sbdrv_be_conn *c);
    /* Start the explicit transaction. If one is already open it is committed first (MySQL's
     * BEGIN semantics). Statements then run in it until commit/rollback. */
    int (*begin)(sbdrv_be_conn *c, fbw_err *err);
    /* End the explicit transaction; a no-op returning FBW_OK when none is open. A failed
     * commit leaves no transaction open (it is rolled back). */
    int (*commit)(sbdrv_be_conn *c, fbw_err *err);
    int (*rollback)(sbdrv_be_conn *c, fbw_err *err);
    /* Prepare Firebird SQL. Transaction-control statements never get here. */
    int (*prepare)(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_stmt **out, fbw_err *err);
    unsigned (*param_count)(const sbdrv_be_stmt *s);
    /* Execute with n == param_count values (converted to the described parameter types).
     * Runs in the explicit transaction if one is open, else in autocommit (conf->autocommit):
     * on FBW_OK the statement is committed and durable. res is reset, then filled: all rows of
     * a result set are fetched before returning; `affected` for DML. */
    int (*execute)(sbdrv_be_stmt *s, const sbdrv_val *params, size_t n, sbdrv_be_result *res,
                   fbw_err *err);
    /* Free a statement; never fails, also after the attachment was lost. */
    void (*close)(sbdrv_be_stmt *s);
    /* Prepare, execute and free one parameterless statement (same transaction rules and
     * result as execute). */
    int (*exec)(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_result *res, fbw_err *err);
    /* Insert all rows of b (b->single with each row's values) atomically: inside the explicit
     * transaction under a savepoint, otherwise in a transaction of its own committed before
     * returning. res->affected = rows inserted; nothing of the batch remains on error. */
    int (*bulk_insert)(sbdrv_be_conn *c, const sbdrv_bulk_insert *b, sbdrv_be_result *res,
                       fbw_err *err);
    /* A deferred result (res->deferred) is about to be read: write and wait for everything
     * queued (a sync point), then fill res with the rows. An error of any queued statement is
     * returned here and again at the next execute/exec/commit, which restarts the event. May be
     * NULL when the backend never defers. */
    int (*fetch_rows)(sbdrv_be_conn *c, sbdrv_be_result *res, fbw_err *err);
    /* Wire statistics of this attachment so far; FBW_E_UNSUPPORTED when the backend cannot
     * see the wire (fbclient). May be NULL (same meaning). */
    int (*stats)(sbdrv_be_conn *c, fbw_stats *out, fbw_err *err);
    /* The same without a copy: the live statistics, valid until the next call on c; NULL when
     * not visible. May be NULL. The report reads them after every driver call, where copying
     * the ~4 KB struct was a measurable cost. */
    const fbw_stats *(*stats_ref)(sbdrv_be_conn *c);
    /* After the attachment was lost: 1 when a request that may have committed a transaction
     * (a COMMIT, or a statement of an autocommit transaction) was unanswered, so whether it was
     * committed is unknown; 0 when none was (nothing unacknowledged was committed); -1 when the
     * backend cannot tell. May be NULL (-1): fbclient does not say, and the driver then judges
     * from the statement it ran. */
    int (*outcome_unknown)(sbdrv_be_conn *c);
} sbdrv_backend;

/* The backends linked into the plug-in. */
extern const sbdrv_backend sbdrv_backend_fbclient;
extern const sbdrv_backend sbdrv_backend_fbwire;

/* True when err describes a lost attachment (fatal rc or a network/shutdown gds code). */
int sbdrv_be_conn_lost(int rc, const fbw_err *err);

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t sbdrv_be_now_ms(void);

/* The long-lived autocommit transaction both backends keep (SBDRV_AC_SHARED, and fbwire's
 * read-only transaction of SBDRV_AC_PIPELINED): how long the live one has run. */
typedef struct sbdrv_be_shared_age {
    unsigned statements; /* statements run in it */
    uint64_t started_ms; /* sbdrv_be_now_ms() when it started */
} sbdrv_be_shared_age;

/* The restart rule (--P-shared-restart-statements, --P-shared-restart-ms): true when the live
 * transaction has run restart_statements statements or restart_ms ms (0 = no limit), so the next
 * statement is to run in a new one (an old one holds back garbage collection). */
int sbdrv_be_shared_due(const sbdrv_be_conf *conf, const sbdrv_be_shared_age *age);
/* A new shared transaction starts now, `statements` statements counted in it already. */
void sbdrv_be_shared_started(sbdrv_be_shared_age *age, unsigned statements);

#endif
