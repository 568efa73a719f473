/* SPDX-License-Identifier: MIT */
/* err.h - return codes and the fixed-size error record every fbwire object keeps.
 *
 * Convention (see docs/design.md, docs/library.md "Return codes"): fallible functions return
 * int. FBW_OK (0) is success. Two positive codes are not errors, and each has one meaning:
 * FBW_AGAIN "incomplete input: feed more bytes" (decoders and the reply handlers they drive),
 * FBW_WAIT "this request cannot be queued before earlier replies arrive: wait, then call again"
 * (the objects' queueing calls; client.h waits and retries for you). Negative codes are errors. Reporting never allocates: the message lives in a fixed buffer, truncated
 * with "..." when too long. Secrets (passwords, keys) must never be formatted into it. */
#ifndef FBW_ERR_H
#define FBW_ERR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define FBW_API __attribute__((visibility("default")))
#define FBW_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define FBW_API
#define FBW_PRINTF(a, b)
#endif

enum {
    FBW_OK = 0,
    FBW_AGAIN = 1,           /* incomplete input: feed more bytes, nothing consumed; not an error */
    FBW_WAIT = 2,            /* a queueing call needs earlier replies first (a handle still unknown):
                              * nothing was queued; wait for the outstanding replies, call again */
    FBW_E_NOMEM = -1,
    FBW_E_USAGE = -2,        /* caller misuse or bad option */
    FBW_E_PROTO = -3,        /* malformed or unexpected bytes from the peer: framing lost */
    FBW_E_EOF = -4,          /* peer closed the connection */
    FBW_E_IO = -5,           /* socket error, errno in sys_errno */
    FBW_E_TIMEOUT = -6,
    FBW_E_AUTH = -7,         /* client-side authentication failure */
    FBW_E_CRYPT = -8,        /* wire encryption / compression failure */
    FBW_E_UNSUPPORTED = -9,  /* feature the peer or fbwire does not support */
    FBW_E_SERVER = -10,      /* the server returned an error status; connection stays usable */
    FBW_E_BADVALUE = -11,    /* a bad value inside a well-framed packet; stream still in sync */
};

#define FBW_ERR_MSG_MAX 512
#define FBW_ERR_GDS_MAX 16

typedef struct fbw_err {
    int code;                      /* FBW_E_*; FBW_OK when clear */
    int sys_errno;                 /* errno for FBW_E_IO, else 0 */
    int op;                        /* op code being decoded, -1 if none */
    size_t offset;                 /* stream offset for FBW_E_PROTO, else 0 */
    uint32_t gds[FBW_ERR_GDS_MAX]; /* isc_arg_gds chain, primary code first (FBW_E_SERVER) */
    int ngds;
    char sqlstate[6];              /* "" when unknown */
    char msg[FBW_ERR_MSG_MAX];     /* rendered text */
} fbw_err;

/* Clear an error record to "no error". */
FBW_API void fbw_err_clear(fbw_err *e);
/* Set code and printf-formatted message; returns code so callers can `return fbw_err_set(...)`.
 * e may be NULL (then only the code is returned). */
FBW_API int fbw_err_set(fbw_err *e, int code, const char *fmt, ...) FBW_PRINTF(3, 4);
/* Like fbw_err_set but records errno for FBW_E_IO and appends strerror. */
FBW_API int fbw_err_set_errno(fbw_err *e, int sys_errno, const char *fmt, ...) FBW_PRINTF(3, 4);
/* Prefix the existing message with "context: " (keeps the code). Returns e->code. */
FBW_API int fbw_err_prefix(fbw_err *e, const char *fmt, ...) FBW_PRINTF(2, 3);
/* 1 when code is one of e's gds codes (primary or secondary), else 0; e may be NULL. */
FBW_API int fbw_err_has_gds(const fbw_err *e, uint32_t code);
/* Symbolic name of a return code ("FBW_E_PROTO"). Never NULL. */
FBW_API const char *fbw_rc_name(int rc);
/* True for errors after which the connection cannot be used any more. */
FBW_API int fbw_is_fatal(int rc);

#endif
