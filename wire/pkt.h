/* SPDX-License-Identifier: MIT */
/* pkt.h - every Firebird wire packet as a C struct, and its XDR encoding in both directions.
 *
 * One decoder serves the live client, the fbclient tap and the pcap tool: fbw_pkt_decode() parses one
 * packet from a stream that may still be growing (FBW_AGAIN = incomplete, nothing consumed). Packets
 * carry no length prefix, so framing is parsing; data-bearing packets (rows, execute messages) need the
 * message format, which the caller supplies through fbw_pkt_ctx. Byte fields are views into the input
 * buffer, valid until that buffer changes. Layouts follow src/remote/protocol.cpp xdr_protocol().
 * No I/O, no allocation. Internal to the project (not installed, not exported): programs use the
 * objects; the decoder and the tools reach packets through dec.h. */
#ifndef FBW_PKT_H
#define FBW_PKT_H

#include "bstream.h"
#include "ops.h"
#include "xdr.h"

typedef struct fbw_msgfmt fbw_msgfmt;

#define FBW_CNCT_MAX_VERSIONS 11 /* servers up to FB5 read 10 entries, FB6 11 */
#define FBW_CNCT_MAX_WIRE 64     /* more entries than this in a packet is not a real client */
#define FBW_STR_MAX 65535u       /* status strings, names */
#define FBW_BUF_MAX (64u << 20)  /* any counted buffer (SQL text, info reply, segment, batch) */

/* ptype values and flags in the accept type word (protocol.h) */
#define FBW_PTYPE_BATCH_SEND 3
#define FBW_PTYPE_OUT_OF_BAND 4
#define FBW_PTYPE_LAZY_SEND 5
#define FBW_PTYPE_MASK 0xFF
#define FBW_PFLAG_COMPRESS 0x100

#define FBW_ARCH_GENERIC 1
#define FBW_INVALID_OBJECT 0xFFFF

typedef struct fbw_cnct_version {
    uint16_t version; /* wire value, e.g. 0x800D */
    int32_t arch;
    uint16_t min_type, max_type, weight;
} fbw_cnct_version;

typedef struct fbw_pkt {
    int32_t op;
    union {
        struct { int32_t operation; uint16_t cversion; int32_t client_arch; fbw_bytes file;
                 fbw_bytes user_id; uint16_t count; /* entries kept, <= FBW_CNCT_MAX_VERSIONS */
                 uint16_t count_wire; fbw_cnct_version ver[FBW_CNCT_MAX_VERSIONS]; } cnct;
        /* op_accept uses version/arch/type only */
        struct { uint16_t version; int32_t arch; uint16_t type; fbw_bytes data, plugin;
                 uint16_t authenticated; fbw_bytes keys; } acpt;
        /* status: view of the whole status vector, see status.h */
        struct { uint16_t object; uint32_t blob_hi, blob_lo; fbw_bytes data, status; } resp;
        struct { uint16_t db; fbw_bytes file, dpb; } atch;          /* attach, create, service_attach */
        struct { uint16_t object; } rlse;                            /* detach, commit, release, ... */
        struct { uint16_t db; fbw_bytes tpb; } sttr;                 /* transaction, reconnect */
        struct { uint16_t tr; fbw_bytes data; } prep;                /* prepare2 */
        struct { fbw_bytes bpb; uint16_t tr; uint32_t id_hi, id_lo; } blob; /* (open|create)_blob[2] */
        struct { uint16_t blob, length; fbw_bytes segment; } sgmt;   /* get/put segment, batch_segments */
        struct { uint16_t blob, mode; int32_t offset; } seek;
        struct { uint16_t object, incarnation; fbw_bytes items, recv_items; uint32_t buffer_length; } info;
        struct { uint16_t tr, stmt, dialect; fbw_bytes sql, items; uint32_t buffer_length;
                 uint16_t flags; /* P20 */
                 fbw_bytes blr; uint16_t msg_number, messages; fbw_bytes msg;   /* exec_immediate2 */
                 fbw_bytes out_blr; uint16_t out_msg_number; uint32_t inline_blob_size; } sqlst;
        /* execute(2), fetch(_scroll), fetch_response, sql_response */
        struct { uint16_t stmt, tr; fbw_bytes blr; uint16_t msg_number, messages; fbw_bytes msg;
                 fbw_bytes out_blr; uint16_t out_msg_number;
                 uint32_t timeout, cursor_flags, inline_blob_size; /* P16, P18, P19 */
                 uint16_t fetch_op; int32_t fetch_pos;               /* fetch_scroll */
                 int32_t status; } sqldata;                          /* fetch_response: 0 row, 100 eof */
        struct { uint16_t stmt, option; } sqlfree;
        struct { uint16_t stmt; fbw_bytes name; uint16_t type; } sqlcur;
        struct { fbw_bytes data, name, list, keys; } auth;           /* cont_auth */
        struct { fbw_bytes data; } trau;                             /* trusted_auth */
        struct { uint16_t kind; } cancel;
        struct { fbw_bytes plugin, key; } crypt;
        struct { fbw_bytes data; uint16_t reply; int has_reply; } cc; /* crypt_key_callback */
        struct { uint16_t type, object; int32_t partner; } req;      /* connect_request, aux_connect */
        struct { uint16_t db; fbw_bytes items; int32_t ast, arg, rid; } event; /* que_events, event */
        struct { uint16_t db, tr; fbw_bytes blr; } ddl;              /* ddl; compile uses db+blr */
        struct { uint16_t db; fbw_bytes data; } account;             /* update_account_info, repl_data */
        struct { uint16_t db; fbw_bytes dpb, items; uint16_t buffer_length; } authuser;
        struct { uint16_t stmt; fbw_bytes blr; uint32_t msglen; fbw_bytes pb; } batch_create;
        struct { uint16_t stmt; uint32_t count; fbw_bytes data; } batch_msg;
        struct { uint16_t stmt, tr; } batch_exec;
        struct { uint16_t stmt; uint32_t reccount, updates, vectors, errors; fbw_bytes detail; } batch_cs;
        struct { uint16_t stmt; fbw_bytes bpb; } batch_bpb;
        struct { uint16_t stmt; uint32_t exist_hi, exist_lo, id_hi, id_lo; } batch_regblob;
        struct { uint16_t tr; uint32_t id_hi, id_lo; fbw_bytes info, data; } inline_blob;
        /* batch_blob_stream: length counts stream bytes as the sender's buffer holds them, data views
         * the wire bytes (encoding: already in wire form); st is the stream state after this packet
         * (the caller keeps it for the statement's next one), blobs the blob headers it opened */
        struct { uint16_t stmt; uint32_t length; fbw_bytes data; fbw_bstream st; uint32_t blobs; } bstream;
        /* BLR requests: start, start_and_receive, receive (no message); send, start_and_send,
         * start_send_and_receive (one message of request's format msg_number; from the server,
         * messages = 1 means more op_send follow in this reply, 0 the last) */
        struct { uint16_t request, incarnation, tr, msg_number, messages; fbw_bytes msg; } data;
        /* transact: the BLR declares message 0 (in) and 1 (out); transact_response uses
         * messages + msg (message 1) */
        struct { uint16_t db, tr; fbw_bytes blr; uint16_t messages; fbw_bytes msg; } trrq;
        /* get_slice, put_slice: the slice's elements follow the packet's own SDL; op_slice (only
         * length, slice_length, slice) those of the op_get_slice it answers. slice_length counts
         * bytes in the native slice buffer (elements x fbw_slice_stride), slice views the wire */
        struct { uint16_t tr; uint32_t id_hi, id_lo, length; fbw_bytes sdl, params;
                 uint32_t slice_length; fbw_bytes slice; } slc;
    } u;
} fbw_pkt;

/* Which message format a data-bearing packet needs. */
enum fbw_fmt_kind {
    FBW_FMT_EXEC_IN,      /* message in op_execute/op_execute2 (u.sqldata.blr, or the stmt's last one) */
    FBW_FMT_IMMEDIATE_IN, /* message in op_exec_immediate2 (u.sqlst.blr) */
    FBW_FMT_FETCH,        /* rows in op_fetch_response: the format of the fetch being answered */
    FBW_FMT_SQL_RESPONSE, /* row in op_sql_response: out format of the last execute2/exec_immediate2 */
    FBW_FMT_BATCH,        /* messages in op_batch_msg: format given in op_batch_create */
    FBW_FMT_REQUEST,      /* op_send family: message u.data.msg_number of request u.data.request */
    FBW_FMT_TRANSACT_IN,  /* op_transact: message 0 of its own u.trrq.blr */
    FBW_FMT_TRANSACT_OUT, /* op_transact_response: message 1 of the op_transact answered */
    FBW_FMT_SLICE,        /* op_slice: a one-column format, the element of the op_get_slice's SDL */
};

/* What the decoder needs to know about the session, learned from the stream itself (dec.c). */
typedef struct fbw_pkt_ctx {
    int protocol;  /* negotiated version 10..20, 0 while still connecting */
    /* Returns the format for a data-bearing packet (fields already decoded up to the message),
     * or NULL with *err set when it cannot be known. */
    const fbw_msgfmt *(*format)(void *arg, enum fbw_fmt_kind kind, const fbw_pkt *p, fbw_err *err);
    void *arg;
    /* op_batch_blob_stream: the blob stream state statement stmt's previous packets left (a new
     * batch: fbw_bstream_init), or NULL with *err set when it cannot be known. NULL callback:
     * such packets do not decode. */
    const fbw_bstream *(*blob_stream)(void *arg, uint16_t stmt, fbw_err *err);
} fbw_pkt_ctx;

/* Decode one packet from p[0..n). Returns FBW_OK with *used = its size, FBW_AGAIN when incomplete,
 * FBW_E_PROTO (framing lost: unknown op, impossible length), FBW_E_UNSUPPORTED (an op with no
 * packet layout: fbw_pkt_has_layout), or an error from the format and blob stream callbacks. err gets a message naming op and offset. */
int fbw_pkt_decode(const fbw_pkt_ctx *ctx, const uint8_t *p, size_t n, fbw_pkt *out, size_t *used,
                   fbw_err *err);
/* Whether op has a packet layout this codec decodes and encodes (ops with none: docs/protocol/
 * packets.md §4, "no layout"; tests/wire/test_ops.c keeps that table and this function in step). */
int fbw_pkt_has_layout(int32_t op);
/* Append one packet to w. Message views (msg, data) must already hold XDR-encoded bytes.
 * Returns FBW_OK, FBW_E_NOMEM, or FBW_E_UNSUPPORTED for ops without an encoder. */
int fbw_pkt_encode(const fbw_pkt_ctx *ctx, fbw_wr *w, const fbw_pkt *p);

/* The message framing function from row.c, used for data-bearing packets. */
FBW_API int fbw_msg_frame(fbw_rd *r, const fbw_msgfmt *f, int protocol, fbw_bytes *raw);
int fbw_msg_frame_plain(fbw_rd *r, const fbw_msgfmt *f, fbw_bytes *raw);

#endif
