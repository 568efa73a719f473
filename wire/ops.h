/* SPDX-License-Identifier: MIT */
/* ops.h - Firebird wire operation codes 0..114 (src/remote/protocol.h enum P_OP) and what is known
 * about each: its name as Firebird spells it, who sends it, whether a lazy-send server holds back its
 * reply, and the first protocol version that has it. Pure data, no I/O. */
#ifndef FBW_OPS_H
#define FBW_OPS_H

#include "err.h"

#include <stdint.h>

enum fbw_op {
    FBW_OP_VOID = 0,
    FBW_OP_CONNECT = 1,
    FBW_OP_EXIT = 2,
    FBW_OP_ACCEPT = 3,
    FBW_OP_REJECT = 4,
    FBW_OP_DISCONNECT = 6,
    FBW_OP_RESPONSE = 9,
    FBW_OP_ATTACH = 19,
    FBW_OP_CREATE = 20,
    FBW_OP_DETACH = 21,
    FBW_OP_COMPILE = 22,
    FBW_OP_START = 23,
    FBW_OP_START_AND_SEND = 24,
    FBW_OP_SEND = 25,
    FBW_OP_RECEIVE = 26,
    FBW_OP_UNWIND = 27,
    FBW_OP_RELEASE = 28,
    FBW_OP_TRANSACTION = 29,
    FBW_OP_COMMIT = 30,
    FBW_OP_ROLLBACK = 31,
    FBW_OP_PREPARE = 32,
    FBW_OP_RECONNECT = 33,
    FBW_OP_CREATE_BLOB = 34,
    FBW_OP_OPEN_BLOB = 35,
    FBW_OP_GET_SEGMENT = 36,
    FBW_OP_PUT_SEGMENT = 37,
    FBW_OP_CANCEL_BLOB = 38,
    FBW_OP_CLOSE_BLOB = 39,
    FBW_OP_INFO_DATABASE = 40,
    FBW_OP_INFO_REQUEST = 41,
    FBW_OP_INFO_TRANSACTION = 42,
    FBW_OP_INFO_BLOB = 43,
    FBW_OP_BATCH_SEGMENTS = 44,
    FBW_OP_QUE_EVENTS = 48,
    FBW_OP_CANCEL_EVENTS = 49,
    FBW_OP_COMMIT_RETAINING = 50,
    FBW_OP_PREPARE2 = 51,
    FBW_OP_EVENT = 52,
    FBW_OP_CONNECT_REQUEST = 53,
    FBW_OP_AUX_CONNECT = 54,
    FBW_OP_DDL = 55,
    FBW_OP_OPEN_BLOB2 = 56,
    FBW_OP_CREATE_BLOB2 = 57,
    FBW_OP_GET_SLICE = 58,
    FBW_OP_PUT_SLICE = 59,
    FBW_OP_SLICE = 60,
    FBW_OP_SEEK_BLOB = 61,
    FBW_OP_ALLOCATE_STATEMENT = 62,
    FBW_OP_EXECUTE = 63,
    FBW_OP_EXEC_IMMEDIATE = 64,
    FBW_OP_FETCH = 65,
    FBW_OP_FETCH_RESPONSE = 66,
    FBW_OP_FREE_STATEMENT = 67,
    FBW_OP_PREPARE_STATEMENT = 68,
    FBW_OP_SET_CURSOR = 69,
    FBW_OP_INFO_SQL = 70,
    FBW_OP_DUMMY = 71,
    FBW_OP_RESPONSE_PIGGYBACK = 72,
    FBW_OP_START_AND_RECEIVE = 73,
    FBW_OP_START_SEND_AND_RECEIVE = 74,
    FBW_OP_EXEC_IMMEDIATE2 = 75,
    FBW_OP_EXECUTE2 = 76,
    FBW_OP_INSERT = 77,
    FBW_OP_SQL_RESPONSE = 78,
    FBW_OP_TRANSACT = 79,
    FBW_OP_TRANSACT_RESPONSE = 80,
    FBW_OP_DROP_DATABASE = 81,
    FBW_OP_SERVICE_ATTACH = 82,
    FBW_OP_SERVICE_DETACH = 83,
    FBW_OP_SERVICE_INFO = 84,
    FBW_OP_SERVICE_START = 85,
    FBW_OP_ROLLBACK_RETAINING = 86,
    FBW_OP_UPDATE_ACCOUNT_INFO = 87,
    FBW_OP_AUTHENTICATE_USER = 88,
    FBW_OP_PARTIAL = 89,
    FBW_OP_TRUSTED_AUTH = 90,
    FBW_OP_CANCEL = 91,
    FBW_OP_CONT_AUTH = 92,
    FBW_OP_PING = 93,
    FBW_OP_ACCEPT_DATA = 94,
    FBW_OP_ABORT_AUX_CONNECTION = 95,
    FBW_OP_CRYPT = 96,
    FBW_OP_CRYPT_KEY_CALLBACK = 97,
    FBW_OP_COND_ACCEPT = 98,
    FBW_OP_BATCH_CREATE = 99,
    FBW_OP_BATCH_MSG = 100,
    FBW_OP_BATCH_EXEC = 101,
    FBW_OP_BATCH_RLS = 102,
    FBW_OP_BATCH_CS = 103,
    FBW_OP_BATCH_REGBLOB = 104,
    FBW_OP_BATCH_BLOB_STREAM = 105,
    FBW_OP_BATCH_SET_BPB = 106,
    FBW_OP_REPL_DATA = 107,
    FBW_OP_REPL_REQ = 108,
    FBW_OP_BATCH_CANCEL = 109,
    FBW_OP_BATCH_SYNC = 110,
    FBW_OP_INFO_BATCH = 111,
    FBW_OP_FETCH_SCROLL = 112,
    FBW_OP_INFO_CURSOR = 113,
    FBW_OP_INLINE_BLOB = 114,
    FBW_OP_MAX = 114,
};

enum fbw_dir { FBW_DIR_NONE = 0, FBW_DIR_CLIENT = 1, FBW_DIR_SERVER = 2, FBW_DIR_BOTH = 3 };

/* The server answers this op with send_partial under ptype_lazy_send: the reply is not flushed
 * until the next non-deferred reply (docs/protocol/lazy-send.md §2, server.cpp
 * send_response(..., true)). */
#define FBW_OPF_DEFERRED 0x1

typedef struct fbw_opinfo {
    const char *name; /* "op_fetch_response"; NULL for unused numbers */
    uint8_t dir;      /* enum fbw_dir */
    uint8_t flags;    /* FBW_OPF_* */
    uint8_t min_protocol; /* 10..20 */
} fbw_opinfo;

/* Info for op, or NULL for numbers outside 0..114 or unused ones. */
FBW_API const fbw_opinfo *fbw_op_info(int32_t op);
/* "op_fetch" or "op_<n>" written into buf for unknown numbers. */
FBW_API const char *fbw_op_name(int32_t op, char *buf, unsigned buf_size);

/* Protocol versions: 10, then 0x8000|n from 11 on. fbwire stores the plain number 10..20. */
#define FBW_PROTOCOL_FLAG 0x8000
#define FBW_PROTOCOL_MIN 10
#define FBW_PROTOCOL_MAX 20
static inline uint16_t fbw_protocol_to_wire(int v) { return (uint16_t)(v == 10 ? 10 : (FBW_PROTOCOL_FLAG | v)); }
/* Returns 0 for values that are not a known protocol version. */
static inline int fbw_protocol_from_wire(uint16_t w)
{
    if (w == 10)
        return 10;
    if ((w & FBW_PROTOCOL_FLAG) && (w & 0x7FFF) >= 11 && (w & 0x7FFF) <= 0x7FFF)
        return w & 0x7FFF;
    return 0;
}

#endif
