/* SPDX-License-Identifier: MIT */
/* svcclient.c - svc.h's requests run to their answers over the blocking client (svcclient.h). */
#include "svcclient.h"

#include <string.h>

#define QUERY_BUFFER 65535 /* the largest reply the server's 16-bit length allows */
#define RUN_MAX_DEFAULT ((size_t)64 << 20)

int fbw_client_svc_connect(const char *dsn, const fbw_client_opts *o, fbw_client **out, fbw_err *err)
{
    fbw_client_opts so;
    if (o)
        so = *o;
    else
        fbw_client_opts_init(&so);
    so.conn.service = 1;
    return fbw_client_connect(dsn, &so, out, err);
}

/* A queueing call's failure (its message in rec) or the wait's, or the server's answer in rec. */
static int finish(fbw_client *cl, int rc, const fbw_err *rec, fbw_err *err)
{
    if (rc == FBW_OK)
        rc = fbw_client_wait(cl);
    else if (rec->code != FBW_OK) {
        if (err)
            *err = *rec;
        return rc;
    }
    if (rc != FBW_OK) {
        if (err)
            *err = *fbw_client_call_error(cl, rc, NULL, NULL);
        return rc;
    }
    if (rec->code != FBW_OK) {
        if (err)
            *err = *rec;
        return rec->code;
    }
    return FBW_OK;
}

int fbw_client_svc_start(fbw_client *cl, const fbw_spb *spb, fbw_err *err)
{
    fbw_svc_result res;
    int rc = fbw_svc_start(fbw_client_conn(cl), spb, &res);
    return finish(cl, rc, &res.err, err);
}

int fbw_client_svc_query(fbw_client *cl, const uint8_t *send, size_t nsend, const uint8_t *recv,
                         size_t nrecv, uint32_t buffer_length, fbw_buf *reply, fbw_err *err)
{
    fbw_info_result res;
    res.data = *reply; /* the caller's buffer, filled in place */
    int rc = fbw_svc_query(fbw_client_conn(cl), send, nsend, recv, nrecv, buffer_length, &res);
    rc = finish(cl, rc, &res.err, err);
    *reply = res.data;
    return rc;
}

int fbw_client_svc_server_version(fbw_client *cl, char *out, size_t cap, fbw_err *err)
{
    static const uint8_t item[] = {FBW_INFO_SVC_SERVER_VERSION, FBW_INFO_END};
    fbw_err local;
    fbw_err *e = err ? err : &local;
    fbw_buf reply;
    fbw_buf_init(&reply);
    int rc = fbw_client_svc_query(cl, NULL, 0, item, sizeof item, 1024, &reply, e);
    fbw_svc_reader r;
    fbw_svc_item it;
    if (rc == FBW_OK) {
        fbw_svc_reader_init(&r, reply.data, reply.len);
        while ((rc = fbw_svc_next(&r, &it, e)) == FBW_OK && it.tag != FBW_INFO_SVC_SERVER_VERSION)
            ;
        if (rc == FBW_AGAIN)
            rc = fbw_err_set(e, FBW_E_BADVALUE, "server version: the reply lacks the item");
        else if (rc == FBW_OK && (cap == 0 || it.len >= cap))
            rc = fbw_err_set(e, FBW_E_BADVALUE, "server version: %zu bytes do not fit %zu", it.len, cap);
        else if (rc == FBW_OK) {
            memcpy(out, it.data, it.len);
            out[it.len] = '\0';
        }
    }
    fbw_buf_free(&reply);
    return rc;
}

int fbw_client_svc_output(fbw_client *cl, uint8_t item, uint16_t timeout_s, fbw_buf *text,
                          fbw_svc_output *out, fbw_err *err)
{
    fbw_err local;
    fbw_err *e = err ? err : &local;
    int wait_ms = fbw_client_timeout_ms(cl);
    if ((item != FBW_INFO_SVC_LINE && item != FBW_INFO_SVC_TO_EOF) || timeout_s == 0 ||
        (wait_ms >= 0 && (int64_t)timeout_s * 1000 >= wait_ms))
        return fbw_err_set(e, FBW_E_USAGE,
                           "service output: item %u (line or to_eof) or timeout %us (1.., shorter "
                           "than the client's %d ms) out of range", (unsigned)item,
                           (unsigned)timeout_s, wait_ms);
    uint8_t send[FBW_SVC_TIMEOUT_ITEMS_LEN];
    size_t nsend = fbw_svc_timeout_items(send, timeout_s);
    const uint8_t recv[] = {item, FBW_INFO_END};
    fbw_buf reply;
    fbw_buf_init(&reply);
    fbw_buf_reset(text);
    int rc = fbw_client_svc_query(cl, send, nsend, recv, sizeof recv, QUERY_BUFFER, &reply, e);
    const uint8_t *p;
    size_t n;
    if (rc == FBW_OK)
        rc = fbw_svc_output_parse(reply.data, reply.len, item, out, &p, &n, e);
    if (rc == FBW_OK && n && fbw_buf_append(text, p, n) != FBW_OK)
        rc = fbw_err_set(e, FBW_E_NOMEM, "service output: out of memory");
    fbw_buf_free(&reply);
    return rc;
}

int fbw_client_svc_run(fbw_client *cl, const fbw_spb *spb, uint16_t timeout_s, size_t max_bytes,
                       fbw_buf *text, fbw_err *err)
{
    fbw_err local;
    fbw_err *e = err ? err : &local;
    size_t max = max_bytes ? max_bytes : RUN_MAX_DEFAULT, got = 0;
    int rc = fbw_client_svc_start(cl, spb, e);
    fbw_buf chunk;
    fbw_buf_init(&chunk);
    fbw_svc_output out = FBW_SVC_OUT_DATA;
    while (rc == FBW_OK && out != FBW_SVC_OUT_EOF) {
        rc = fbw_client_svc_output(cl, FBW_INFO_SVC_TO_EOF, timeout_s, &chunk, &out, e);
        if (rc != FBW_OK || chunk.len == 0)
            continue;
        size_t keep = chunk.len <= max - got ? chunk.len : max - got;
        if (fbw_buf_append(text, chunk.data, keep) != FBW_OK)
            rc = fbw_err_set(e, FBW_E_NOMEM, "service output: out of memory");
        else if ((got += keep) == max && keep < chunk.len)
            rc = fbw_err_set(e, FBW_E_BADVALUE, "service output: more than %zu bytes", max);
    }
    fbw_buf_free(&chunk);
    return rc;
}
