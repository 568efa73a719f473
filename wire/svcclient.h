/* SPDX-License-Identifier: MIT */
/* svcclient.h - the services API over the blocking client: connect to a server's service manager,
 * start a service, query it, read its output to the end or line by line with a timeout, detach
 * (fbw_client_close sends op_service_detach). Each call runs svc.h's requests to their answer
 * through fbw_client_wait, so the client's deadlines apply (client.h timeout_ms). */
#ifndef FBW_SVCCLIENT_H
#define FBW_SVCCLIENT_H

#include "client.h"
#include "svc.h"

/* Connect to the service manager of the server dsn names (any connection string of client.h: the
 * path, a database's or "service_mgr", is not sent; "service_mgr" is). o as for fbw_client_connect
 * (NULL: defaults); login, auth plugins, wire crypt and compression work as for a database. A
 * refused login is FBW_E_SERVER with the server's error in *err (isc_login, ...). */
FBW_API int fbw_client_svc_connect(const char *dsn, const fbw_client_opts *o, fbw_client **out,
                                   fbw_err *err);

/* Start a service (op_service_start) and wait for its answer. FBW_E_SERVER: the server refused it
 * (its error in *err); other codes as fbw_client_wait. err may be NULL. */
FBW_API int fbw_client_svc_start(fbw_client *cl, const fbw_spb *spb, fbw_err *err);

/* One op_service_info, run to its answer: the reply's items in *reply (reset first; decode with
 * fbw_svc_next). FBW_E_SERVER with the server's error in *err. err may be NULL. */
FBW_API int fbw_client_svc_query(fbw_client *cl, const uint8_t *send, size_t nsend,
                                 const uint8_t *recv, size_t nrecv, uint32_t buffer_length,
                                 fbw_buf *reply, fbw_err *err);

/* The server's version text (isc_info_svc_server_version, "LI-V4.0.5.3140 Firebird 4.0"), into
 * out (at most cap - 1 bytes, NUL-terminated; longer is FBW_E_BADVALUE). */
FBW_API int fbw_client_svc_server_version(fbw_client *cl, char *out, size_t cap, fbw_err *err);

/* Read the output of the service started on this attachment, once: item FBW_INFO_SVC_LINE (one
 * line, without its newline) or FBW_INFO_SVC_TO_EOF (as much as fits one reply), the server waiting
 * at most timeout_s seconds for it (1..65535; it must be shorter than the client's timeout_ms, which
 * would otherwise end the connection first: FBW_E_USAGE). *text is reset and gets the text; *out
 * says DATA, TIMEOUT (nothing within timeout_s: call again; a trace session that is quiet answers
 * so until it is stopped) or EOF (the service ended: nothing more will come). A line longer than
 * one reply (64 KiB) comes as DATA in pieces, the rest in the next reads. */
FBW_API int fbw_client_svc_output(fbw_client *cl, uint8_t item, uint16_t timeout_s, fbw_buf *text,
                                  fbw_svc_output *out, fbw_err *err);

/* Start a service and read all its output (isc_info_svc_to_eof) into *text (appended), waiting at
 * most timeout_s seconds per query, until it ends. A service that writes more than max_bytes
 * (0: 64 MiB) is FBW_E_BADVALUE after max_bytes were kept; the attachment is then still busy with
 * it (close it). For services that end by themselves (db_stats, get_fb_log, backup with verbose
 * output), not for trace. */
FBW_API int fbw_client_svc_run(fbw_client *cl, const fbw_spb *spb, uint16_t timeout_s,
                               size_t max_bytes, fbw_buf *text, fbw_err *err);

#endif
