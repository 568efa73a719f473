/* SPDX-License-Identifier: MIT */
/* fuzz_conn.c - libFuzzer target: a started connection fed server bytes.
 * Input: byte 0 chooses the options (bit 0 compression, bit 1 SRP plugins first, bit 2 batch-send
 * instead of lazy, bit 3 wire crypt disabled, bit 4 protocols 13..15 only), byte 1 the chunk size
 * (0 -> everything at once), the rest is what the server sends. Whatever the client wants to send is
 * taken after every chunk; once attached, the client asks for the server version so that reply
 * parsing is reached too. The connection must never crash, and once failed it must stay failed. */
#include "conn.h"
#include "feed.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint8_t optset = data[0];
    size_t chunk = data[1] ? data[1] : size;
    data += 2;
    size -= 2;

    fbw_conn_opts o;
    fbw_conn_opts_init(&o);
    o.database = "/db/fuzz.fdb";
    o.user = "SYSDBA";
    o.password = "masterkey";
    o.auth_list = optset & 2 ? "Srp256,Srp,Legacy_Auth" : "Legacy_Auth,Srp";
    o.compress = optset & 1;
    o.lazy = !(optset & 4);
    o.wire_crypt = optset & 8 ? FBW_WIRE_CRYPT_DISABLED : FBW_WIRE_CRYPT_ENABLED;
    if (optset & 16) {
        o.protocol_min = 13;
        o.protocol_max = 15;
    }
    fbw_conn *c = NULL;
    fbw_err err;
    if (fbw_conn_new(&o, &c, &err) != FBW_OK)
        abort();
    if (fbw_conn_start(c) != FBW_OK)
        abort();
    fbw_guard g;
    fbw_guard_init(&g, chunk < size ? chunk : size);
    int asked = 0, failed_rc = 0;
    for (size_t off = 0; off < size; off += chunk) {
        size_t n = size - off < chunk ? size - off : chunk;
        const uint8_t *p;
        size_t np;
        fbw_conn_pending(c, &p, &np);
        fbw_conn_sent(c, np);
        int rc = fbw_conn_recv(c, fbw_guard_place(&g, data + off, n), n);
        if (failed_rc) {
            if (rc != failed_rc || fbw_conn_get_state(c) != FBW_CS_FAILED)
                abort(); /* a failed connection stays failed with the same error */
            continue;
        }
        if (rc < 0) {
            if (fbw_conn_get_state(c) != FBW_CS_FAILED && rc != FBW_E_SERVER)
                abort();
            if (fbw_conn_get_state(c) == FBW_CS_FAILED)
                failed_rc = rc;
            if (strnlen(fbw_conn_error(c)->msg, FBW_ERR_MSG_MAX) == FBW_ERR_MSG_MAX)
                abort();
        }
        if (fbw_conn_get_state(c) == FBW_CS_READY && !asked) {
            asked = 1;
            (void)fbw_conn_query_version(c);
        }
        (void)fbw_conn_before_wait(c);
    }
    fbw_guard_free(&g);
    fbw_conn_free(c);
    return 0;
}
