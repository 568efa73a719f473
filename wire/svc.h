/* SPDX-License-Identifier: MIT */
/* svc.h - the services API (fbclient's isc_service_attach, _start, _query, _detach) on the sans-I/O
 * connection, and the blocking helpers that run it over the client.
 *
 * A service attachment is a connection (conn.h) opened with fbw_conn_opts.service set: op_connect,
 * authentication, wire crypt and compression are the database attach's code; only the last packet
 * differs (op_service_attach with an SPB naming the service manager, "service_mgr" when no database
 * is given, instead of op_attach with a DPB), and fbw_conn_detach sends op_service_detach. On such a
 * connection the objects of stmt.h, tx.h, blob.h do not apply (the server rejects them).
 *
 * Services run on the server and write text output the client reads by queries: op_service_start
 * starts one (an action and its arguments in a start SPB, built with fbw_spb_*), op_service_info asks
 * for items (isc_info_svc_*) and may send items (isc_info_svc_timeout: how long the server waits for
 * output). A long-running service (trace) is read line by line with a timeout until it ends; another
 * attachment stops it (isc_action_svc_trace_stop with its id). Reply items are decoded by
 * fbw_svc_next, bounds-checked. Nothing here touches a socket or a clock. */
#ifndef FBW_SVC_H
#define FBW_SVC_H

#include "buf.h"
#include "conn.h"
#include "err.h"
#include "info.h"

#include <stddef.h>
#include <stdint.h>

/* Actions (isc_action_svc_*, src/include/firebird/impl/consts_pub.h): the first byte of a start SPB. */
enum {
    FBW_SVC_ACTION_BACKUP = 1, FBW_SVC_ACTION_RESTORE = 2, FBW_SVC_ACTION_REPAIR = 3,
    FBW_SVC_ACTION_DISPLAY_USER = 7, FBW_SVC_ACTION_PROPERTIES = 8, FBW_SVC_ACTION_DB_STATS = 11,
    FBW_SVC_ACTION_GET_FB_LOG = 12, FBW_SVC_ACTION_NBAK = 20, FBW_SVC_ACTION_NREST = 21,
    FBW_SVC_ACTION_TRACE_START = 22, FBW_SVC_ACTION_TRACE_STOP = 23, FBW_SVC_ACTION_TRACE_SUSPEND = 24,
    FBW_SVC_ACTION_TRACE_RESUME = 25, FBW_SVC_ACTION_TRACE_LIST = 26, FBW_SVC_ACTION_VALIDATE = 30,
};

/* Start SPB argument tags (isc_spb_*). Strings take a 2-byte length, integers 4 bytes. */
enum {
    FBW_SPB_COMMAND_LINE = 105, FBW_SPB_DBNAME = 106, FBW_SPB_VERBOSE = 107, FBW_SPB_OPTIONS = 108,
    /* trace: session id (int), name (string), configuration text (string) */
    FBW_SPB_TRC_ID = 1, FBW_SPB_TRC_NAME = 2, FBW_SPB_TRC_CFG = 3,
};
/* isc_spb_options bits of isc_action_svc_db_stats (isc_spb_sts_*) */
enum {
    FBW_SPB_STS_DATA_PAGES = 0x01, FBW_SPB_STS_DB_LOG = 0x02, FBW_SPB_STS_HDR_PAGES = 0x04,
    FBW_SPB_STS_IDX_PAGES = 0x08, FBW_SPB_STS_SYS_RELATIONS = 0x10, FBW_SPB_STS_RECORD_VERSIONS = 0x20,
    FBW_SPB_STS_NOCREATION = 0x80, FBW_SPB_STS_ENCRYPTION = 0x100,
};

/* Query items (isc_info_svc_*; FBW_INFO_END and FBW_INFO_TRUNCATED are info.h's). */
enum {
    FBW_INFO_DATA_NOT_READY = 4, FBW_INFO_FLAG_END = 127,
    FBW_INFO_SVC_SVR_DB_INFO = 50, FBW_INFO_SVC_VERSION = 54, FBW_INFO_SVC_SERVER_VERSION = 55,
    FBW_INFO_SVC_IMPLEMENTATION = 56, FBW_INFO_SVC_CAPABILITIES = 57, FBW_INFO_SVC_USER_DBPATH = 58,
    FBW_INFO_SVC_GET_ENV = 59, FBW_INFO_SVC_GET_ENV_LOCK = 60, FBW_INFO_SVC_GET_ENV_MSG = 61,
    FBW_INFO_SVC_LINE = 62, FBW_INFO_SVC_TO_EOF = 63, FBW_INFO_SVC_TIMEOUT = 64,
    FBW_INFO_SVC_RUNNING = 67, FBW_INFO_SVC_STDIN = 78,
};

/* ---- start SPB ---- */

/* A start SPB under construction: the action byte, then tagged arguments. Errors are sticky (rc):
 * a string longer than 65535 bytes gives FBW_E_USAGE, memory FBW_E_NOMEM; fbw_svc_start refuses an
 * SPB whose rc is not FBW_OK. */
typedef struct fbw_spb {
    fbw_buf buf;
    int rc;
} fbw_spb;

FBW_API void fbw_spb_init(fbw_spb *s, uint8_t action);
FBW_API void fbw_spb_add_str(fbw_spb *s, uint8_t tag, const char *v);          /* <tag><len:2><bytes> */
FBW_API void fbw_spb_add_bytes(fbw_spb *s, uint8_t tag, const void *p, size_t n);
FBW_API void fbw_spb_add_int(fbw_spb *s, uint8_t tag, uint32_t v);             /* <tag><v:4 LE> */
FBW_API void fbw_spb_add_byte(fbw_spb *s, uint8_t tag, uint8_t v);             /* <tag><v:1> */
FBW_API void fbw_spb_add_flag(fbw_spb *s, uint8_t tag);                        /* <tag> */
FBW_API void fbw_spb_free(fbw_spb *s);

/* ---- requests on a service attachment (sans-I/O: queued like every other request) ---- */

/* The answer of a start: done once the reply came, err the server's error (code FBW_OK if none). */
typedef struct fbw_svc_result {
    int done;
    fbw_err err;
} fbw_svc_result;

/* Queue op_service_start with the SPB. res must outlive the reply. Returns FBW_OK, FBW_E_USAGE (not
 * a service attachment, not attached, an SPB in error or longer than 65535 bytes; the message in
 * res->err), FBW_E_NOMEM. */
FBW_API int fbw_svc_start(fbw_conn *c, const fbw_spb *spb, fbw_svc_result *res);

/* Queue op_service_info: send items (may be empty; fbw_svc_timeout_items builds the usual one),
 * receive items, and the reply's buffer length (1..65535: the server's query takes 16 bits). Once
 * answered res->done is set, the reply's items are in res->data (decode with fbw_svc_next), a server
 * error in res->err. res->data must be initialised (fbw_buf_init); each call resets it. Returns
 * FBW_OK, FBW_E_USAGE (as for a start, or no receive items; the message in res->err), FBW_E_NOMEM. */
FBW_API int fbw_svc_query(fbw_conn *c, const uint8_t *send, size_t nsend, const uint8_t *recv,
                          size_t nrecv, uint32_t buffer_length, fbw_info_result *res);

/* The send items "wait at most `seconds` for output" (isc_info_svc_timeout, 2-byte length 4, value)
 * followed by isc_info_end, as fbsvcmgr sends them: 8 bytes written to out, returns 8. 0 seconds
 * means the server does not wait at all. */
#define FBW_SVC_TIMEOUT_ITEMS_LEN 8
FBW_API size_t fbw_svc_timeout_items(uint8_t out[FBW_SVC_TIMEOUT_ITEMS_LEN], uint16_t seconds);

/* ---- decoding a query's reply ---- */

enum fbw_svc_item_kind {
    FBW_SVC_ITEM_BYTES,  /* tag, 2-byte length, bytes: server_version, implementation, line, to_eof, ... */
    FBW_SVC_ITEM_INT,    /* tag, 4-byte value: version, capabilities, running, stdin */
    FBW_SVC_ITEM_MARK,   /* tag alone: truncated, data_not_ready, svc_timeout */
};

typedef struct fbw_svc_item {
    uint8_t tag;
    int kind;              /* enum fbw_svc_item_kind */
    const uint8_t *data;   /* BYTES: view into the reply */
    size_t len;
    uint32_t value;        /* INT */
} fbw_svc_item;

typedef struct fbw_svc_reader {
    const uint8_t *p;
    size_t n, off;
} fbw_svc_reader;

FBW_API void fbw_svc_reader_init(fbw_svc_reader *r, const uint8_t *p, size_t n);
/* The next item: FBW_OK with *it filled; FBW_AGAIN at isc_info_end or the end of the bytes (no more
 * items); FBW_E_BADVALUE with what and where in *err for a truncated item or a tag whose layout is
 * not known (the clustered items svr_db_info, get_users, limbo_trans are not decoded here). */
FBW_API int fbw_svc_next(fbw_svc_reader *r, fbw_svc_item *it, fbw_err *err);

/* What one isc_info_svc_line (or _to_eof) answer means for a reader of service output. */
typedef enum fbw_svc_output {
    FBW_SVC_OUT_DATA,     /* text came (line: one line without its newline; to_eof: a chunk) */
    FBW_SVC_OUT_TIMEOUT,  /* none within the query's timeout, or none ready yet: ask again */
    FBW_SVC_OUT_EOF,      /* the service has finished and all its output was read */
} fbw_svc_output;

/* Decode the reply of a query whose receive items were isc_info_svc_line or isc_info_svc_to_eof
 * (with isc_info_svc_timeout or not): text and len view the text (empty unless DATA), out says
 * what it means; an empty chunk marked isc_info_truncated (more follows) is TIMEOUT, never EOF. Returns FBW_OK or
 * FBW_E_BADVALUE (the reply lacks the item, is truncated, or holds something else). */
FBW_API int fbw_svc_output_parse(const uint8_t *p, size_t n, uint8_t item, fbw_svc_output *out,
                                 const uint8_t **text, size_t *len, fbw_err *err);

#endif
