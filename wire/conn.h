/* SPDX-License-Identifier: MIT */
/* conn.h - one Firebird connection as a sans-I/O state machine: op_connect, authentication (the
 * op_cont_auth loop with plugin switching), wire encryption and compression start, attach/create,
 * then ordered request/reply matching for everything that follows.
 *
 * The caller moves bytes: fbw_conn_pending()/fbw_conn_sent() give what to write, fbw_conn_recv() takes
 * what was read. Nothing here touches a socket or a clock (client.c does, over sock.c). Replies are
 * matched to requests strictly in order; replies a lazy-send server holds back (deferred ops) are never
 * waited for alone: fbw_conn_before_wait() appends an op_ping when needed. The request queue the
 * objects (tx, stmt, blob, batch) put packets on is internal: wire/request.h. */
#ifndef FBW_CONN_H
#define FBW_CONN_H

#include "buf.h"
#include "err.h"
#include "stats.h"

enum fbw_wire_crypt { FBW_WIRE_CRYPT_DISABLED = 0, FBW_WIRE_CRYPT_ENABLED = 1, FBW_WIRE_CRYPT_REQUIRED = 2 };

typedef struct fbw_conn_opts {
    const char *database;     /* path or alias on the server */
    const char *user;         /* login as typed */
    const char *password;
    const char *role;         /* NULL: none */
    const char *auth_list;    /* NULL: FBW_AUTH_DEFAULT_LIST ("Srp256,Srp") */
    int wire_crypt;           /* enum fbw_wire_crypt, default ENABLED */
    const char *crypt_list;   /* NULL: "ChaCha64,ChaCha,Arc4" */
    int compress;             /* ask for zlib wire compression */
    int protocol_min, protocol_max; /* offered range, default 10..20 */
    int lazy;                 /* offer ptype_lazy_send (default 1); 0 offers ptype_batch_send */
    int create;               /* op_create instead of op_attach */
    int service;              /* attach to the service manager (svc.h): op_service_attach with an SPB;
                               * database: the service's name, "service_mgr" when NULL */
    int page_size;            /* create: 0 = server default */
    const char *charset;      /* connection charset, default "UTF8" */
    int dialect;              /* default 3 */
    const char *session_time_zone; /* NULL: server default */
    const char *client_host, *client_user; /* for the user-id block; NULL: "unknown" */
    int32_t process_id;
    const char *process_name;
    int row_format;           /* FBW_ROW_FORMAT_COMPACT (default) or _DESCRIBED (msg.h): the formats
                               * statements ask rows and send parameters in */
    /* Protocol 19 (Firebird 5.0.3+): blobs of at most this many bytes (segment prefixes included,
     * at most 65535) come inline with the rows that name them and are read with no request
     * (blob.h fbw_blob_read_all, blobset.h). Default FBW_INLINE_BLOB_SIZE_DEFAULT, fbclient's; 0
     * (or negative) asks for none (0 in the execute, as before protocol 19). */
    int32_t inline_blob_size;
    /* Bytes of inline blobs the connection keeps until read (oldest dropped past it: read from the
     * server then). 0: FBW_INLINE_BLOB_CACHE_DEFAULT, fbclient's 10 MiB. */
    size_t inline_blob_cache;
    uint32_t statement_timeout_ms; /* 0: none. The connection's statement timeout: sent in every
                               * op_execute of its statements that set none of their own
                               * (fbw_stmt_set_timeout); needs protocol 16 (Firebird 4+): on an
                               * older server the connect fails with FBW_E_UNSUPPORTED after
                               * op_accept, before op_attach (docs/library.md "Statement timeouts") */
} fbw_conn_opts;

#define FBW_INLINE_BLOB_SIZE_DEFAULT 65535
#define FBW_INLINE_BLOB_CACHE_DEFAULT ((size_t)10 << 20)

FBW_API void fbw_conn_opts_init(fbw_conn_opts *o);

typedef enum fbw_conn_state {
    FBW_CS_INIT, FBW_CS_CONNECTING, FBW_CS_AUTH, FBW_CS_CRYPT, FBW_CS_ATTACHING, FBW_CS_READY,
    FBW_CS_DETACHED, FBW_CS_FAILED
} fbw_conn_state;

typedef struct fbw_conn fbw_conn;

/* Copies the options (strings included; the password into memory wiped on free). */
FBW_API int fbw_conn_new(const fbw_conn_opts *o, fbw_conn **out, fbw_err *err);
FBW_API void fbw_conn_free(fbw_conn *c);
/* Queue op_connect. */
FBW_API int fbw_conn_start(fbw_conn *c);

/* Bytes ready to write (after compression and encryption). *p valid until the next call. */
FBW_API int fbw_conn_pending(fbw_conn *c, const uint8_t **p, size_t *n);
FBW_API void fbw_conn_sent(fbw_conn *c, size_t n);
/* Bytes read from the network. Decodes and dispatches every complete packet. Returns FBW_OK or a
 * fatal error (the state becomes FBW_CS_FAILED and fbw_conn_error() says why). */
FBW_API int fbw_conn_recv(fbw_conn *c, const uint8_t *p, size_t n);
/* Replies still expected. */
FBW_API int fbw_conn_outstanding(const fbw_conn *c);
/* The op code of the i-th outstanding reply, oldest first (i = 0), or 0 when there is none: what a
 * wait that ends without a reply was waiting for (client.c names it in the timeout error). */
FBW_API int32_t fbw_conn_pending_op(const fbw_conn *c, size_t i);
/* Internal (client.c names what a timed-out wait waited for): whether the i-th outstanding reply
 * is one a lazy-send server holds back (op_free_statement, ...): a wait is really for the first one
 * that is not. 0 when there is no i-th. Not exported. */
int fbw_conn_pending_deferred(const fbw_conn *c, size_t i);
/* Internal (client.c names an unanswered COMMIT in a wait's error): whether the i-th outstanding
 * request is one the server may commit a transaction by: op_commit, op_commit_retaining, or an
 * execute in a transaction started with isc_tpb_autocommit. Not exported: a program asks
 * fbw_conn_outcome_unknown. */
int fbw_conn_pending_commits(const fbw_conn *c, size_t i);
/* The connection failed (fbw_conn_fail, a lost or timed-out wait) while a request that may commit
 * was queued or sent and its reply had not come: whether that transaction was committed is unknown
 * (it may or may not have been), so it must be reported neither as committed nor as failed. 0 when
 * the connection has not failed, or failed with no such request outstanding (then every transaction
 * whose commit was not acknowledged was not committed: the server rolls it back). Conservative: a
 * COMMIT queued but not yet written when the socket failed also counts as unknown. */
FBW_API int fbw_conn_outcome_unknown(const fbw_conn *c);
/* Internal (stmt.c): the request queued last may commit (fbw_conn_pending_commits). */
void fbw_conn_mark_commits(fbw_conn *c);
/* The blocking layer gave up on the connection (no reply within the timeout, the socket failed):
 * the state becomes FBW_CS_FAILED with *why as the error, nothing more is written, and every later
 * call returns that error. Outstanding replies stay listed (fbw_conn_pending_op) to name them, but
 * no reply handler is called again once a connection FAILED (for any reason): statements, blobs
 * and batches freed then are destroyed at once instead of waiting for their replies. */
FBW_API int fbw_conn_fail(fbw_conn *c, const fbw_err *why);
/* Call before blocking for replies: if every outstanding reply is one the server defers, queue an
 * op_ping so the server flushes them. Returns 1 when there is something to wait for. */
FBW_API int fbw_conn_before_wait(fbw_conn *c);

/* Queue op_detach (op_service_detach on a service attachment) (+ op_disconnect after its reply). */
FBW_API int fbw_conn_detach(fbw_conn *c);
/* Queue op_drop_database: the attached database is deleted and the attachment ends (+ op_disconnect).
 * isc_drdb_completed_with_errs still means the file is gone (fbclient treats it so); any other
 * error leaves the attachment as it was, with the error in fbw_conn_error(). */
FBW_API int fbw_conn_drop_database(fbw_conn *c);
/* Queue op_info_database for the server version; the result is in fbw_conn_info(). */
FBW_API int fbw_conn_query_version(fbw_conn *c);
/* An info request exactly as a client wrote it (isc_database_info, isc_transaction_info,
 * isc_dsql_sql_info, isc_blob_info): op is FBW_OP_INFO_DATABASE (object: ignored, the attachment's
 * handle is sent), FBW_OP_INFO_TRANSACTION, FBW_OP_INFO_SQL or FBW_OP_INFO_BLOB with the server
 * handle of the object (fbw_tx_handle, fbw_stmt_handle, fbw_blob_handle); the items are sent as
 * given (at most 65535 bytes) and buffer_length (1..64 MiB, a u32 on the wire as fbclient sends it)
 * bounds the server's reply. Once answered, res->done is set, the
 * reply's info bytes are in res->data (as the server sent them, not parsed: info.h and blob.h
 * have parsers) and a server error in res->err. res->data must be initialised (fbw_buf_init) before
 * the first call; each call resets it; the caller frees it. res must outlive the reply. Returns
 * FBW_OK, FBW_E_USAGE (another op, a buffer length out of range, not attached), FBW_E_NOMEM. */
typedef struct fbw_info_result {
    int done;
    fbw_buf data;
    fbw_err err;
} fbw_info_result;
FBW_API int fbw_conn_info_request(fbw_conn *c, int32_t op, uint16_t object, const uint8_t *items,
                                  size_t n, uint32_t buffer_length, fbw_info_result *res);
/* op_cancel kinds (fbclient's fb_cancel_*). RAISE makes the running request fail with
 * isc_cancelled; DISABLE then ENABLE clears a RAISE that found nothing running (the server keeps it
 * for the next call otherwise). ABORT is not sent: a client aborts by closing the socket. */
enum { FBW_CANCEL_DISABLE = 1, FBW_CANCEL_ENABLE = 2, FBW_CANCEL_RAISE = 3 };
/* Queue op_cancel of `kind` (READY state, protocol 12+). It gets no reply and is not counted as
 * outstanding. Returns FBW_OK, FBW_E_UNSUPPORTED (protocol below 12), FBW_E_USAGE (bad kind or not
 * attached). The bytes go out with the next fbw_conn_pending (client.h: fbw_client_cancel sends them
 * at once from another thread). */
FBW_API int fbw_conn_cancel(fbw_conn *c, int kind);

FBW_API fbw_conn_state fbw_conn_get_state(const fbw_conn *c);
FBW_API const fbw_err *fbw_conn_error(const fbw_conn *c);
FBW_API fbw_stats *fbw_conn_stats(fbw_conn *c);

typedef struct fbw_conn_info {
    int protocol;            /* 10..20, 0 before accept */
    int lazy;                /* ptype_lazy_send accepted */
    int compressed;
    char auth_plugin[32];    /* "" before authentication / when done in op_attach by the DPB */
    char wire_crypt[16];     /* "none" or the plugin name */
    uint16_t db_handle;
    char server_version[256];/* from isc_info_firebird_version, "" until queried */
} fbw_conn_info;
FBW_API const fbw_conn_info *fbw_conn_get_info(const fbw_conn *c);
/* The row format new statements of the connection use (fbw_conn_opts.row_format). */
FBW_API int fbw_conn_row_format(const fbw_conn *c);
/* Internal (stmt.c, inline.c): the inline blob size executes ask for (0 below protocol 19 or when
 * turned off) and the inline cache's limit in bytes. Not exported. */
uint32_t fbw_conn_inline_size(const fbw_conn *c);
size_t fbw_conn_inline_cache(const fbw_conn *c);

/* Protocol 16 (Firebird 4.0) added the statement timeout to op_execute and op_execute2. */
#define FBW_PROTOCOL_STMT_TIMEOUT 16
#define FBW_PROTOCOL_PREPARE_FLAGS 20 /* op_prepare_statement carries prepare flags (stmt.h) */
/* Change the connection's statement timeout (fbw_conn_opts.statement_timeout_ms) for every later
 * execution; 0 removes it. Nothing is sent. Returns FBW_E_UNSUPPORTED, with the message in *err
 * (which may be NULL), when ms > 0 and the connection speaks a protocol below 16; the timeout is
 * then left as it was. */
FBW_API int fbw_conn_set_statement_timeout(fbw_conn *c, uint32_t ms, fbw_err *err);
/* Change the inline blob size of the connection (fbw_conn_opts.inline_blob_size: 0 or negative
 * asks for none, at most 65535 is asked) for every later op_exec_immediate2 and every later
 * execute of a statement without its own (fbw_stmt_set_inline_blob_size). Nothing is sent; below
 * protocol 19 nothing is asked whatever the size. */
FBW_API void fbw_conn_set_inline_blob_size(fbw_conn *c, int32_t size);
FBW_API uint32_t fbw_conn_statement_timeout(const fbw_conn *c);
/* Internal (conn.c, stmt.c): FBW_OK when a timeout of ms can be sent on this connection (ms 0, or
 * protocol 16+ or not yet negotiated), else FBW_E_UNSUPPORTED in *err naming the protocol. */
int fbw_conn_check_timeout(const fbw_conn *c, uint32_t ms, fbw_err *err);

#endif
