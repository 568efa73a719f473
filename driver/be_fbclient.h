/* SPDX-License-Identifier: MIT */
/* be_fbclient.h - the baseline backend's parts (driver/be_fbclient*.c) and what they share: the
 * ISC declarations, the attachment and statement records and the calls one part makes into
 * another. Internal to the sysbench driver; the backend's contract is backend.h.
 *   be_fbclient.c       connection: attach/create (DPB), detach, statistics, vtable
 *   be_fbclient_bulk.c  multi-row INSERT: single-row executes, under a savepoint inside BEGIN
 *   be_fbclient_stmt.c  statements: prepare, describe, binding, execute, results
 *   be_fbclient_tx.c    transactions and autocommit: TPBs, BEGIN/COMMIT/ROLLBACK, where a
 *                       statement runs (explicit, shared or its own transaction)
 *   be_fbclient_lib.c   libfbclient: dlopen on first use, entry points, status vectors
 * Each part calls only parts listed below it.
 *
 * The few ISC types and entry points used are declared here from the documented C API (XSQLDA,
 * TEB, status vectors); fbclient's headers are not used, so libfbclient is no build dependency. */
#ifndef BE_FBCLIENT_H
#define BE_FBCLIENT_H

#include "backend.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- ISC declarations */

typedef intptr_t isc_status;   /* ISC_STATUS on LP64 */
typedef unsigned int isc_handle; /* FB_API_HANDLE on LP64 */
#define STATUS_LEN 20

typedef struct xsqlvar {
    short sqltype, sqlscale, sqlsubtype, sqllen;
    char *sqldata;
    short *sqlind;
    short sqlname_length;
    char sqlname[32];
    short relname_length;
    char relname[32];
    short ownname_length;
    char ownname[32];
    short aliasname_length;
    char aliasname[32];
} xsqlvar;

typedef struct xsqlda {
    short version;
    char sqldaid[8];
    int sqldabc;
    short sqln, sqld;
    xsqlvar sqlvar[1];
} xsqlda;

typedef struct isc_teb {
    isc_handle *db;
    int tpb_len;
    const char *tpb;
} isc_teb;

_Static_assert(sizeof(xsqlvar) == 160, "XSQLVAR layout");
_Static_assert(offsetof(xsqlda, sqlvar) == 24, "XSQLDA layout");

enum {
    SQL_TEXT = 452, SQL_VARYING = 448, SQL_SHORT = 500, SQL_LONG = 496, SQL_FLOAT = 482,
    SQL_DOUBLE = 480, SQL_D_FLOAT = 530, SQL_TIMESTAMP = 510, SQL_BLOB = 520, SQL_ARRAY = 540,
    SQL_QUAD = 550, SQL_TYPE_TIME = 560, SQL_TYPE_DATE = 570, SQL_INT64 = 580,
    SQL_BOOLEAN = 32764, SQL_NULL = 32766
};
enum { SQLDA_VERSION1 = 1, SQL_DIALECT_V6 = 3, DSQL_CLOSE = 1, DSQL_DROP = 2 };
enum {
    DPB_VERSION1 = 1, DPB_PAGE_SIZE = 4, DPB_USER_NAME = 28, DPB_PASSWORD = 29,
    DPB_CONNECT_TIMEOUT = 57, DPB_SQL_DIALECT = 63, DPB_CONFIG = 87
};
enum {
    TPB_VERSION3 = 3, TPB_CONSISTENCY = 1, TPB_CONCURRENCY = 2, TPB_WAIT = 6, TPB_NOWAIT = 7,
    TPB_READ = 8, TPB_WRITE = 9, TPB_READ_COMMITTED = 15, TPB_AUTOCOMMIT = 16,
    TPB_REC_VERSION = 17, TPB_NO_REC_VERSION = 18, TPB_LOCK_TIMEOUT = 21,
    TPB_READ_CONSISTENCY = 22
};
enum {
    INFO_END = 1, INFO_TRUNCATED = 2, INFO_SQL_STMT_TYPE = 21, INFO_SQL_RECORDS = 23,
    INFO_REQ_SELECT = 13, INFO_REQ_INSERT = 14, INFO_REQ_UPDATE = 15, INFO_REQ_DELETE = 16
};
enum {
    STMT_SELECT = 1, STMT_INSERT = 2, STMT_UPDATE = 3, STMT_DELETE = 4, STMT_EXEC_PROC = 8,
    STMT_SELECT_FOR_UPD = 12
};
enum { ARG_END = 0, ARG_GDS = 1, ARG_CSTRING = 3 };

typedef struct fbclient_api {
    isc_status (*attach)(isc_status *, short, const char *, isc_handle *, short, const char *);
    isc_status (*detach)(isc_status *, isc_handle *);
    isc_status (*create)(isc_status *, short, const char *, isc_handle *, short, const char *,
                         short);
    isc_status (*start_multiple)(isc_status *, isc_handle *, short, void *);
    isc_status (*commit)(isc_status *, isc_handle *);
    isc_status (*rollback)(isc_status *, isc_handle *);
    isc_status (*alloc)(isc_status *, isc_handle *, isc_handle *);
    isc_status (*prepare)(isc_status *, isc_handle *, isc_handle *, unsigned short, const char *,
                          unsigned short, xsqlda *);
    isc_status (*describe)(isc_status *, isc_handle *, unsigned short, xsqlda *);
    isc_status (*describe_bind)(isc_status *, isc_handle *, unsigned short, xsqlda *);
    isc_status (*execute)(isc_status *, isc_handle *, isc_handle *, unsigned short,
                          const xsqlda *);
    isc_status (*execute2)(isc_status *, isc_handle *, isc_handle *, unsigned short,
                           const xsqlda *, const xsqlda *);
    isc_status (*immediate)(isc_status *, isc_handle *, isc_handle *, unsigned short,
                            const char *, unsigned short, const xsqlda *);
    isc_status (*fetch)(isc_status *, isc_handle *, unsigned short, const xsqlda *);
    isc_status (*free_stmt)(isc_status *, isc_handle *, unsigned short);
    isc_status (*sql_info)(isc_status *, isc_handle *, short, const char *, short, char *);
    isc_status (*open_blob2)(isc_status *, isc_handle *, isc_handle *, isc_handle *, void *,
                             unsigned short, const unsigned char *);
    isc_status (*get_segment)(isc_status *, isc_handle *, unsigned short *, unsigned short, char *);
    isc_status (*close_blob)(isc_status *, isc_handle *);
    int (*interpret)(char *, unsigned int, const isc_status **);
    void (*sqlstate)(char *, const isc_status *);
    void (*client_version)(char *); /* isc_get_client_version: "LI-V3.0.11.33703 Firebird 3.0" */
} fbclient_api;

typedef struct fbclient_lib {
    pthread_mutex_t lock; /* held while loading */
    int loaded;           /* load tried: rc, msg, api and about are final */
    int rc;
    char msg[512];
    char about[512];      /* "PATH (isc_get_client_version)" once loaded */
    fbclient_api api;
} fbclient_lib;

/* Written once by be_fbclient_lib.c's load under its lock, read-only afterwards (every reader
 * took the lock first, in be_fbclient_global_init). */
extern fbclient_lib be_fbclient_lib;

#define API (&be_fbclient_lib.api)

/* ---------------------------------------------------------------- objects */

struct sbdrv_be_conn {
    const sbdrv_be_conf *conf;
    isc_handle db;
    isc_handle meta_tr;   /* read-only read committed: prepares outside transactions */
    isc_handle exp_tr;    /* explicit transaction (BEGIN) */
    isc_handle shared_tr; /* SBDRV_AC_SHARED */
    sbdrv_be_shared_age shared_age; /* of shared_tr */
    char tpb[16];         /* read-write transactions */
    int tpb_len;
    char tpb_ac[16];      /* shared autocommit transaction */
    int tpb_ac_len;
};

struct sbdrv_be_stmt {
    sbdrv_be_conn *c;
    isc_handle h;
    int type;             /* STMT_* */
    xsqlda *in, *out;
    char *outbuf;
    short *out_ind, *in_ind;
    int64_t *in_num;      /* int64/double parameter storage */
    char null_byte;
};

/* How a statement's transaction was obtained, for release_tr. */
enum { TR_EXPLICIT, TR_SHARED, TR_OWN };

static inline int has_error(const isc_status *st)
{
    return st[0] == 1 && st[1] != 0;
}

/* be_fbclient_lib.c */
/* Load the library once (conf->client_library, default libfbclient.so.2); FBW_E_UNSUPPORTED
 * naming the library and what is missing (the file, a symbol). */
int be_fbclient_global_init(const sbdrv_be_conf *conf, fbw_err *err);
/* "PATH (version)" of the loaded library; NULL before a successful load. */
const char *be_fbclient_client_library(void);
/* Fill err from a status vector; a lost attachment gives FBW_E_IO. */
int be_fbclient_status_err(const isc_status *st, fbw_err *err, const char *what);

/* be_fbclient_tx.c */
void be_fbclient_build_tpbs(sbdrv_be_conn *c);
int be_fbclient_start_tr(sbdrv_be_conn *c, isc_handle *tr, const char *tpb, int len, fbw_err *err);
int be_fbclient_end_tr(isc_handle *tr, int commit, fbw_err *err);
int be_fbclient_acquire_tr(sbdrv_be_conn *c, isc_handle **tr, isc_handle *own, int *how,
                       fbw_err *err);
int be_fbclient_release_tr(sbdrv_be_conn *c, isc_handle *own, int how, int rc, fbw_err *err);
int be_fbclient_begin(sbdrv_be_conn *c, fbw_err *err);
int be_fbclient_commit(sbdrv_be_conn *c, fbw_err *err);
int be_fbclient_rollback(sbdrv_be_conn *c, fbw_err *err);

/* be_fbclient_stmt.c */
void be_fbclient_stmt_free(sbdrv_be_stmt *s);
int be_fbclient_prepare_in(sbdrv_be_conn *c, isc_handle *tr, const char *sql, size_t len,
                       sbdrv_be_stmt **out, fbw_err *err);
int be_fbclient_bind_params(sbdrv_be_stmt *s, const sbdrv_val *p, size_t n, fbw_err *err);
int be_fbclient_prepare(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_stmt **out,
                    fbw_err *err);
unsigned be_fbclient_param_count(const sbdrv_be_stmt *s);
int be_fbclient_execute(sbdrv_be_stmt *s, const sbdrv_val *params, size_t n, sbdrv_be_result *res,
                    fbw_err *err);
void be_fbclient_close(sbdrv_be_stmt *s);
int be_fbclient_exec(sbdrv_be_conn *c, const char *sql, size_t len, sbdrv_be_result *res,
                 fbw_err *err);

/* be_fbclient_bulk.c */
int be_fbclient_bulk_insert(sbdrv_be_conn *c, const sbdrv_bulk_insert *b, sbdrv_be_result *res,
                        fbw_err *err);

#endif
