/* SPDX-License-Identifier: MIT */
/* err.c - fixed-size error records; never allocates. */
#include "err.h"

#include <stdio.h>
#include <string.h>

void fbw_err_clear(fbw_err *e)
{
    if (!e)
        return;
    memset(e, 0, sizeof *e);
    e->op = -1;
}

/* vsnprintf into the fixed buffer; mark truncation with "..." so a reader knows text is missing. */
static void put_msg(fbw_err *e, size_t at, const char *fmt, va_list ap)
{
    if (at >= sizeof e->msg)
        return;
    int n = vsnprintf(e->msg + at, sizeof e->msg - at, fmt, ap);
    if (n >= 0 && (size_t)n >= sizeof e->msg - at)
        memcpy(e->msg + sizeof e->msg - 4, "...", 4);
}

static int err_setv(fbw_err *e, int code, const char *fmt, va_list ap)
{
    if (!e)
        return code;
    fbw_err_clear(e);
    e->code = code;
    put_msg(e, 0, fmt, ap);
    return code;
}

int fbw_err_set(fbw_err *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = err_setv(e, code, fmt, ap);
    va_end(ap);
    return rc;
}

int fbw_err_set_errno(fbw_err *e, int sys_errno, const char *fmt, ...)
{
    if (!e)
        return FBW_E_IO;
    va_list ap;
    va_start(ap, fmt);
    err_setv(e, FBW_E_IO, fmt, ap);
    va_end(ap);
    e->sys_errno = sys_errno;
    size_t len = strlen(e->msg);
    if (len + 3 < sizeof e->msg)
        snprintf(e->msg + len, sizeof e->msg - len, ": %s", strerror(sys_errno));
    return FBW_E_IO;
}

int fbw_err_prefix(fbw_err *e, const char *fmt, ...)
{
    if (!e)
        return FBW_E_USAGE;
    char old[FBW_ERR_MSG_MAX];
    memcpy(old, e->msg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    put_msg(e, 0, fmt, ap);
    va_end(ap);
    /* Append ": old" by hand: snprintf of a possibly truncated copy trips -Wformat-truncation. */
    size_t len = strlen(e->msg), room = sizeof e->msg - 1 - len, oldlen = strnlen(old, sizeof old - 1);
    if (room >= 2) {
        memcpy(e->msg + len, ": ", 2);
        len += 2;
        room -= 2;
        size_t take = oldlen < room ? oldlen : room;
        memcpy(e->msg + len, old, take);
        e->msg[len + take] = 0;
        if (take < oldlen)
            memcpy(e->msg + sizeof e->msg - 4, "...", 4);
    }
    return e->code;
}

const char *fbw_rc_name(int rc)
{
    switch (rc) {
    case FBW_OK: return "FBW_OK";
    case FBW_AGAIN: return "FBW_AGAIN";
    case FBW_WAIT: return "FBW_WAIT";
    case FBW_E_NOMEM: return "FBW_E_NOMEM";
    case FBW_E_USAGE: return "FBW_E_USAGE";
    case FBW_E_PROTO: return "FBW_E_PROTO";
    case FBW_E_EOF: return "FBW_E_EOF";
    case FBW_E_IO: return "FBW_E_IO";
    case FBW_E_TIMEOUT: return "FBW_E_TIMEOUT";
    case FBW_E_AUTH: return "FBW_E_AUTH";
    case FBW_E_CRYPT: return "FBW_E_CRYPT";
    case FBW_E_UNSUPPORTED: return "FBW_E_UNSUPPORTED";
    case FBW_E_SERVER: return "FBW_E_SERVER";
    case FBW_E_BADVALUE: return "FBW_E_BADVALUE";
    default: return "FBW_E_UNKNOWN";
    }
}

int fbw_is_fatal(int rc)
{
    return rc == FBW_E_PROTO || rc == FBW_E_EOF || rc == FBW_E_IO || rc == FBW_E_TIMEOUT ||
           rc == FBW_E_NOMEM || rc == FBW_E_CRYPT;
}

int fbw_err_has_gds(const fbw_err *e, uint32_t code)
{
    for (int i = 0; e && i < e->ngds && i < FBW_ERR_GDS_MAX; i++)
        if (e->gds[i] == code)
            return 1;
    return 0;
}
