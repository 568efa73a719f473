/* SPDX-License-Identifier: MIT */
/* fuzz_svc.c - libFuzzer target: a service query's reply (wire/svc.c) walked item by item and read
 * as service output (line and to_eof). Items must lie inside the reply, the walk must end, a
 * failure must say why, and the output's text must be a view of the reply. */
#include "feed.h"
#include "svc.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const uint8_t *p, size_t size)
{
    fbw_svc_reader r;
    fbw_svc_item it;
    fbw_err err;
    fbw_err_clear(&err);
    fbw_svc_reader_init(&r, p, size);
    int rc;
    size_t steps = 0;
    while ((rc = fbw_svc_next(&r, &it, &err)) == FBW_OK) {
        if (++steps > size || r.off > size)
            abort(); /* each item takes at least one byte */
        if (it.kind == FBW_SVC_ITEM_BYTES && (it.data < p || it.data + it.len > p + size))
            abort();
    }
    if (rc != FBW_AGAIN && (rc != FBW_E_BADVALUE || err.msg[0] == 0))
        abort();
}

static void output(const uint8_t *p, size_t size, uint8_t item)
{
    fbw_svc_output o;
    const uint8_t *t;
    size_t n;
    fbw_err err;
    fbw_err_clear(&err);
    int rc = fbw_svc_output_parse(p, size, item, &o, &t, &n, &err);
    if (rc == FBW_OK) {
        if (n && (t < p || t + n > p + size || o != FBW_SVC_OUT_DATA))
            abort();
        if (!n && o == FBW_SVC_OUT_DATA)
            abort();
    } else if (rc != FBW_E_BADVALUE || err.msg[0] == 0) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fbw_guard g;
    fbw_guard_init(&g, size);
    const uint8_t *p = fbw_guard_place(&g, data, size);
    walk(p, size);
    output(p, size, FBW_INFO_SVC_LINE);
    output(p, size, FBW_INFO_SVC_TO_EOF);
    fbw_guard_free(&g);
    return 0;
}
