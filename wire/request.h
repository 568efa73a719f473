/* SPDX-License-Identifier: MIT */
/* request.h - the connection's request queue, internal to the library: the objects (tx.c, stmt.c,
 * blob.c, batch.c) and the blocking client put packets (pkt.h) on it with a handler for each reply;
 * conn.c matches replies to them in order. Not installed: a program uses the objects, so the packet
 * layout stays free to follow the protocol (docs/library.md, what is public and why). Nothing
 * declared here is exported from libfbwire.so. */
#ifndef FBW_REQUEST_H
#define FBW_REQUEST_H

#include "batch.h"
#include "conn.h"
#include "pkt.h"

/* Reply handler for a request. Return FBW_OK when the reply completed the request (it is popped),
 * FBW_AGAIN when more reply packets belong to it (fetch responses), or a fatal error. A server error
 * in the reply is the request's business: store it and return FBW_OK. */
typedef int (*fbw_reply_fn)(void *arg, fbw_conn *c, const fbw_pkt *reply, fbw_err *err);

/* Queue a request (READY state) and the handler for its reply. Ops without replies (op_disconnect,
 * op_dummy) take fn = NULL. */
int fbw_conn_request(fbw_conn *c, const fbw_pkt *req, fbw_reply_fn fn, void *arg);
/* stmt.c: the same for requests whose reply carries rows (op_fetch,
 * op_execute2): `fmt` is the row format the decoder uses for them; it must stay valid until the
 * reply is handled. */
int fbw_conn_request_rows(fbw_conn *c, const fbw_pkt *req, const fbw_msgfmt *fmt, fbw_reply_fn fn,
                          void *arg);
/* stmt.c: like fbw_conn_request, for an arg on the heap that the handler frees when it
 * runs; if it never runs (the connection failed or is freed first), fbw_conn_free frees it. */
int fbw_conn_request_owned(fbw_conn *c, const fbw_pkt *req, fbw_reply_fn fn, void *arg);
/* stmt.c: both of the above (op_exec_immediate2's output row, its record on the heap). */
int fbw_conn_request_rows_owned(fbw_conn *c, const fbw_pkt *req, const fbw_msgfmt *fmt,
                                fbw_reply_fn fn, void *arg);
/* An info packet (op_info_*, op_service_info) queued with the reply handler of
 * fbw_conn_info_request: res is reset, then filled when the answer comes (svc.c shares it). */
int fbw_conn_info_packet(fbw_conn *c, const fbw_pkt *p, fbw_info_result *res);
/* Whether the connection was opened as a service attachment (fbw_conn_opts.service). */
int fbw_conn_is_service(const fbw_conn *c);
/* Requests that make the server allocate an object id (op_transaction, op_allocate_statement, blob
 * open/create) call this when queued; it returns the new allocation count. A lazy-send server maps
 * handle 0xFFFF to the most recent allocation, so a handle is usable as 0xFFFF while the count still
 * equals the one its allocation got. */
uint64_t fbw_conn_note_allocation(fbw_conn *c);
/* The current allocation count (tx.c, stmt.c, blob.c). */
uint64_t fbw_conn_allocations(const fbw_conn *c);
/* Blobs open for writing on this connection (blob.c adds +1/-1;
 * 0 reads). If a blob create fails, 0xFFFF names the previous allocation: writes may only use the
 * shortcut while no other blob is open for writing, so a failure can never put segments into
 * someone else's blob. */
int fbw_conn_blob_writers(fbw_conn *c, int delta);

/* What a key log line (keylog.h) records, once wire crypt has started: the plugin, the session key
 * it derives both directions' ciphers from and the IV the server sent (empty for Arc4). Views into
 * the connection, valid until it is freed. Only the blocking client asks, and only when a key log
 * was requested; nothing here writes them anywhere. FBW_E_UNSUPPORTED when not encrypted. */
typedef struct fbw_crypt_keys {
    const char *plugin;
    fbw_bytes key, iv;
} fbw_crypt_keys;
int fbw_conn_crypt_keys(const fbw_conn *c, fbw_crypt_keys *out, fbw_err *err);

/* batch.c's reply decoder, here because it takes a packet (the unit tests feed it crafted ones). */
/* Decode an op_batch_cs packet's counts and detail bytes (update counts x 4, then (position,
 * status vector) pairs, then bare positions) into cs (initialised here; free with
 * fbw_batch_cs_free). Every count, position and vector is checked: nupdates > reccount, a position
 * >= reccount, a bad vector or bytes left over give FBW_E_BADVALUE with what and where. */
int fbw_batch_cs_parse(const fbw_pkt *p, fbw_batch_cs *cs, fbw_err *err);

#endif
