/* SPDX-License-Identifier: MIT */
/* pb.h - parameter blocks in clumplet form: the DPB (version 1, upgraded to version 2 when a value is
 * longer than 255 bytes, as Firebird's ClumpletWriter does) and the untagged op_connect user-id block.
 * Integers are little-endian (VAX order). Builders only; no I/O. */
#ifndef FBW_PB_H
#define FBW_PB_H

#include "buf.h"

#include <stddef.h>
#include <stdint.h>

/* DPB tags fbwire sends (src/include/firebird/impl/consts_pub.h) */
enum {
    FBW_DPB_VERSION1 = 1, FBW_DPB_VERSION2 = 2, FBW_DPB_PAGE_SIZE = 4, FBW_DPB_USER_NAME = 28,
    FBW_DPB_PASSWORD_ENC = 30, FBW_DPB_LC_CTYPE = 48, FBW_DPB_OVERWRITE = 54, FBW_DPB_CONNECT_TIMEOUT = 57,
    FBW_DPB_SQL_ROLE_NAME = 60, FBW_DPB_SQL_DIALECT = 63, FBW_DPB_SET_DB_CHARSET = 68,
    FBW_DPB_PROCESS_ID = 71, FBW_DPB_PROCESS_NAME = 74, FBW_DPB_UTF8_FILENAME = 77,
    FBW_DPB_CLIENT_VERSION = 80, FBW_DPB_SPECIFIC_AUTH_DATA = 84, FBW_DPB_AUTH_PLUGIN_LIST = 85,
    FBW_DPB_AUTH_PLUGIN_NAME = 86, FBW_DPB_CONFIG = 87, FBW_DPB_SESSION_TIME_ZONE = 91,
};

/* Service attach SPB tags (consts_pub.h isc_spb_*): the same login as a DPB, other numbers for the
 * rest. The SPB opens with isc_spb_version, isc_spb_current_version (2, 2), or isc_spb_version3 (3)
 * whose clumplets have 4-byte lengths. */
enum {
    FBW_SPB_VERSION = 2, FBW_SPB_CURRENT_VERSION = 2, FBW_SPB_VERSION3 = 3,
    FBW_SPB_USER_NAME = 28, FBW_SPB_PASSWORD_ENC = 30, FBW_SPB_SQL_ROLE_NAME = 60,
    FBW_SPB_PROCESS_ID = 110, FBW_SPB_SPECIFIC_AUTH_DATA = 111, FBW_SPB_PROCESS_NAME = 112,
    FBW_SPB_AUTH_PLUGIN_NAME = 116, FBW_SPB_AUTH_PLUGIN_LIST = 117, FBW_SPB_UTF8_FILENAME = 118,
    FBW_SPB_CLIENT_VERSION = 119,
};

/* op_connect user identification tags (src/remote/protocol.h CNCT_*) */
enum {
    FBW_CNCT_USER = 1, FBW_CNCT_HOST = 4, FBW_CNCT_USER_VERIFICATION = 6, FBW_CNCT_SPECIFIC_DATA = 7,
    FBW_CNCT_PLUGIN_NAME = 8, FBW_CNCT_LOGIN = 9, FBW_CNCT_PLUGIN_LIST = 10, FBW_CNCT_CLIENT_CRYPT = 11,
};

#define FBW_PB_MAX_ITEMS 32

typedef struct fbw_pb_item {
    uint8_t tag;
    size_t off, len; /* in fbw_pb.data */
} fbw_pb_item;

/* A DPB under construction: items are kept apart so the version can be chosen at the end. */
typedef struct fbw_dpb {
    fbw_pb_item item[FBW_PB_MAX_ITEMS];
    int n;
    fbw_buf data;
    int rc; /* sticky: FBW_E_NOMEM or FBW_E_USAGE (too many items) */
} fbw_dpb;

void fbw_dpb_init(fbw_dpb *d);
void fbw_dpb_free(fbw_dpb *d); /* wipes: DPBs can hold auth data */
void fbw_dpb_add_bytes(fbw_dpb *d, uint8_t tag, const void *p, size_t n);
void fbw_dpb_add_str(fbw_dpb *d, uint8_t tag, const char *s);
void fbw_dpb_add_int(fbw_dpb *d, uint8_t tag, int32_t v);
void fbw_dpb_add_flag(fbw_dpb *d, uint8_t tag);
/* Serialize: version 1 if every value fits 255 bytes, else version 2 (4-byte lengths for all). */
int fbw_dpb_build(const fbw_dpb *d, fbw_buf *out);

/* Serialize the items as a service attach SPB: version 2 (<tag><len:1>) when every value fits 255
 * bytes, else version 3 (<tag><len:4>), as fbclient's ClumpletWriter does for SpbAttach. */
int fbw_spb_attach_build(const fbw_dpb *d, fbw_buf *out);

/* Untagged clumplets <tag><len:1><data> for op_connect; values over 255 bytes fail (FBW_E_USAGE). */
int fbw_pb_put_clumplet(fbw_buf *out, uint8_t tag, const void *p, size_t n);
/* CNCT_specific_data split into 254-byte parts, each prefixed with its sequence number. */
int fbw_pb_put_multipart(fbw_buf *out, uint8_t tag, const void *p, size_t n);

#endif
