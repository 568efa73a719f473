/* SPDX-License-Identifier: MIT */
/* fuzz_status.c - libFuzzer target: frame a status vector (as a growing stream and as a complete
 * buffer) and interpret what frames: fbw_status_decode, fbw_status_is_success, SQLCODE, class. */
#include "feed.h"
#include "status.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fbw_guard g;
    fbw_guard_init(&g, size);
    const uint8_t *p = fbw_guard_place(&g, data, size);
    static const int short_rcs[] = {FBW_AGAIN, FBW_E_PROTO};
    for (int i = 0; i < 2; i++) {
        fbw_rd r;
        fbw_rd_init(&r, p, size, short_rcs[i]);
        fbw_err ferr;
        fbw_err_clear(&ferr);
        fbw_bytes v = fbw_status_frame_ex(&r, &ferr);
        if (r.rc != FBW_OK) {
            if (v.p || v.n || (r.rc < 0 && ferr.msg[0] == 0))
                abort(); /* a failure yields an empty view, and an error says why */
            continue;
        }
        if (v.p != p || v.n > size || v.n < 4)
            abort();
        fbw_err err;
        fbw_warnings warn;
        memset(&warn, 0, sizeof warn);
        int rc = fbw_status_decode(v, &err, &warn);
        if (rc != FBW_OK && rc != FBW_E_SERVER)
            abort(); /* a framed vector is well-formed */
        if ((rc == FBW_OK) != (fbw_status_is_success(v) != 0))
            abort();
        if (strnlen(err.msg, sizeof err.msg) == sizeof err.msg || strnlen(warn.msg, sizeof warn.msg) == sizeof warn.msg)
            abort(); /* messages stay terminated */
        if (err.ngds < 0 || err.ngds > FBW_ERR_GDS_MAX || warn.n < 0 || warn.n > FBW_WARNINGS_MAX)
            abort();
        (void)fbw_status_sqlcode(&err);
        (void)fbw_status_sqlcode_vec(v);
        (void)fbw_errclass_name(fbw_err_classify(&err));
    }
    fbw_guard_free(&g);
    return 0;
}
