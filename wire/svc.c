/* SPDX-License-Identifier: MIT */
/* svc.c - the services API on a connection: start SPBs, op_service_start and op_service_info
 * queued like any request, and the decoding of query replies (src/jrd/svc.cpp Service::query2 is
 * what writes them: INF_put_item for texts, a bare 4-byte number for counters, a bare tag for the
 * markers). The attach and detach are conn.c's, with fbw_conn_opts.service set. */
#include "svc.h"

#include "pkt.h"
#include "request.h"
#include "status.h"

#include <string.h>

/* ---- start SPB ---- */

void fbw_spb_init(fbw_spb *s, uint8_t action)
{
    fbw_buf_init(&s->buf);
    s->rc = fbw_buf_append(&s->buf, &action, 1);
}

void fbw_spb_add_bytes(fbw_spb *s, uint8_t tag, const void *p, size_t n)
{
    if (s->rc)
        return;
    if (n > 0xFFFF) {
        s->rc = FBW_E_USAGE;
        return;
    }
    uint8_t hdr[3] = {tag, (uint8_t)n, (uint8_t)(n >> 8)};
    s->rc = fbw_buf_append(&s->buf, hdr, sizeof hdr);
    if (s->rc == FBW_OK && n)
        s->rc = fbw_buf_append(&s->buf, p, n);
}

void fbw_spb_add_str(fbw_spb *s, uint8_t tag, const char *v)
{
    fbw_spb_add_bytes(s, tag, v ? v : "", v ? strlen(v) : 0);
}

void fbw_spb_add_int(fbw_spb *s, uint8_t tag, uint32_t v)
{
    uint8_t b[5] = {tag, (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    if (s->rc == FBW_OK)
        s->rc = fbw_buf_append(&s->buf, b, sizeof b);
}

void fbw_spb_add_byte(fbw_spb *s, uint8_t tag, uint8_t v)
{
    uint8_t b[2] = {tag, v};
    if (s->rc == FBW_OK)
        s->rc = fbw_buf_append(&s->buf, b, sizeof b);
}

void fbw_spb_add_flag(fbw_spb *s, uint8_t tag)
{
    if (s->rc == FBW_OK)
        s->rc = fbw_buf_append(&s->buf, &tag, 1);
}

void fbw_spb_free(fbw_spb *s) { fbw_buf_wipe_free(&s->buf); /* may name a password (users) */ }

/* ---- requests ---- */

static int check_service(fbw_conn *c, fbw_err *e, const char *what)
{
    if (!fbw_conn_is_service(c))
        return fbw_err_set(e, FBW_E_USAGE, "%s: not a service attachment (fbw_conn_opts.service)", what);
    if (fbw_conn_get_state(c) != FBW_CS_READY)
        return fbw_err_set(e, FBW_E_USAGE, "%s: the service manager is not attached", what);
    return FBW_OK;
}

static int on_start_reply(void *arg, fbw_conn *c, const fbw_pkt *r, fbw_err *err)
{
    fbw_svc_result *res = arg;
    (void)c;
    res->done = 1;
    if (r->op != FBW_OP_RESPONSE)
        return fbw_err_set(err, FBW_E_PROTO, "unexpected op %d in answer to op_service_start",
                           (int)r->op);
    fbw_status_decode(r->u.resp.status, &res->err, NULL);
    return FBW_OK;
}

int fbw_svc_start(fbw_conn *c, const fbw_spb *spb, fbw_svc_result *res)
{
    fbw_err *e = &res->err; /* misuse is reported where the answer would be */
    fbw_err_clear(e);
    int rc = check_service(c, e, "service start");
    if (rc)
        return rc;
    if (spb->rc || spb->buf.len == 0 || spb->buf.len > FBW_STR_MAX)
        return fbw_err_set(e, FBW_E_USAGE, "service start: the SPB is %s",
                           spb->rc == FBW_E_NOMEM ? "incomplete (out of memory)"
                           : spb->buf.len == 0    ? "empty"
                                                  : "too long (a value or the whole over 65535 bytes)");
    fbw_pkt p = {.op = FBW_OP_SERVICE_START};
    p.u.info.object = fbw_conn_get_info(c)->db_handle;
    p.u.info.items.p = spb->buf.data;
    p.u.info.items.n = spb->buf.len;
    res->done = 0;
    fbw_err_clear(&res->err);
    return fbw_conn_request(c, &p, on_start_reply, res);
}

int fbw_svc_query(fbw_conn *c, const uint8_t *send, size_t nsend, const uint8_t *recv, size_t nrecv,
                  uint32_t buffer_length, fbw_info_result *res)
{
    fbw_err *e = &res->err;
    fbw_err_clear(e);
    int rc = check_service(c, e, "service query");
    if (rc)
        return rc;
    if (buffer_length == 0 || buffer_length > 0xFFFF || nsend > FBW_STR_MAX || nrecv == 0 ||
        nrecv > FBW_STR_MAX)
        return fbw_err_set(e, FBW_E_USAGE,
                           "service query: buffer length %u (1..65535) or %zu send / %zu receive "
                           "items out of range", (unsigned)buffer_length, nsend, nrecv);
    fbw_pkt p = {.op = FBW_OP_SERVICE_INFO};
    p.u.info.object = fbw_conn_get_info(c)->db_handle;
    p.u.info.items.p = send;
    p.u.info.items.n = nsend;
    p.u.info.recv_items.p = recv;
    p.u.info.recv_items.n = nrecv;
    p.u.info.buffer_length = buffer_length;
    return fbw_conn_info_packet(c, &p, res);
}

size_t fbw_svc_timeout_items(uint8_t out[FBW_SVC_TIMEOUT_ITEMS_LEN], uint16_t seconds)
{
    const uint8_t b[FBW_SVC_TIMEOUT_ITEMS_LEN] = {FBW_INFO_SVC_TIMEOUT, 4, 0, (uint8_t)seconds,
                                                  (uint8_t)(seconds >> 8), 0, 0, FBW_INFO_END};
    memcpy(out, b, sizeof b);
    return sizeof b;
}

/* ---- reply items ---- */

void fbw_svc_reader_init(fbw_svc_reader *r, const uint8_t *p, size_t n)
{
    r->p = p;
    r->n = p ? n : 0;
    r->off = 0;
}

static int item_kind(uint8_t tag)
{
    switch (tag) {
    case FBW_INFO_TRUNCATED: case FBW_INFO_DATA_NOT_READY: case FBW_INFO_SVC_TIMEOUT:
        return FBW_SVC_ITEM_MARK;
    case FBW_INFO_SVC_VERSION: case FBW_INFO_SVC_CAPABILITIES: case FBW_INFO_SVC_RUNNING:
    case FBW_INFO_SVC_STDIN:
        return FBW_SVC_ITEM_INT;
    case FBW_INFO_SVC_SERVER_VERSION: case FBW_INFO_SVC_IMPLEMENTATION:
    case FBW_INFO_SVC_USER_DBPATH: case FBW_INFO_SVC_GET_ENV: case FBW_INFO_SVC_GET_ENV_LOCK:
    case FBW_INFO_SVC_GET_ENV_MSG: case FBW_INFO_SVC_LINE: case FBW_INFO_SVC_TO_EOF:
        return FBW_SVC_ITEM_BYTES;
    default:
        return -1;
    }
}

int fbw_svc_next(fbw_svc_reader *r, fbw_svc_item *it, fbw_err *err)
{
    if (r->off >= r->n || r->p[r->off] == FBW_INFO_END)
        return FBW_AGAIN;
    size_t at = r->off, left = r->n - at - 1;
    const uint8_t *q = r->p + at + 1;
    memset(it, 0, sizeof *it);
    it->tag = r->p[at];
    it->kind = item_kind(it->tag);
    switch (it->kind) {
    case FBW_SVC_ITEM_MARK:
        r->off = at + 1;
        return FBW_OK;
    case FBW_SVC_ITEM_INT:
        if (left < 4)
            break;
        it->value = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
        r->off = at + 5;
        return FBW_OK;
    case FBW_SVC_ITEM_BYTES:
        if (left < 2)
            break;
        it->len = (size_t)q[0] | (size_t)q[1] << 8;
        if (left - 2 < it->len)
            break;
        it->data = q + 2;
        r->off = at + 3 + it->len;
        return FBW_OK;
    default:
        return fbw_err_set(err, FBW_E_BADVALUE,
                           "service query reply: item %u at byte %zu has no layout known here",
                           (unsigned)it->tag, at);
    }
    return fbw_err_set(err, FBW_E_BADVALUE,
                       "service query reply: item %u at byte %zu is truncated (%zu bytes left)",
                       (unsigned)it->tag, at, left);
}

int fbw_svc_output_parse(const uint8_t *p, size_t n, uint8_t item, fbw_svc_output *out,
                         const uint8_t **text, size_t *len, fbw_err *err)
{
    fbw_svc_reader r;
    fbw_svc_item it;
    int seen = 0, waiting = 0, more = 0, rc;
    *text = NULL;
    *len = 0;
    fbw_svc_reader_init(&r, p, n);
    while ((rc = fbw_svc_next(&r, &it, err)) == FBW_OK) {
        if (it.tag == item && !seen) {
            seen = 1;
            *text = it.data;
            *len = it.len;
        } else if (it.tag == FBW_INFO_SVC_TIMEOUT || it.tag == FBW_INFO_DATA_NOT_READY) {
            waiting = 1;
        } else if (it.tag == FBW_INFO_TRUNCATED) {
            more = 1;
        } else if (it.tag != FBW_INFO_SVC_STDIN) { /* fbsvcmgr asks for stdin with every read */
            return fbw_err_set(err, FBW_E_BADVALUE, "service output: unexpected item %u in the reply",
                               (unsigned)it.tag);
        }
    }
    if (rc != FBW_AGAIN)
        return rc;
    if (!seen)
        return fbw_err_set(err, FBW_E_BADVALUE, "service output: the reply lacks item %u",
                           (unsigned)item);
    /* Server rule: text means output; no text with a timeout or not-ready marker means none yet;
     * no text and no marker means the service has finished (to_eof's truncated marker says more
     * will come even when this chunk is empty). */
    *out = *len ? FBW_SVC_OUT_DATA : (waiting || more) ? FBW_SVC_OUT_TIMEOUT : FBW_SVC_OUT_EOF;
    return FBW_OK;
}
