/* SPDX-License-Identifier: MIT */
/* dbheader.h - the database's header page for SHOW DATABASE, from the server's statistics service
 * (isc_action_svc_db_stats with isc_spb_sts_hdr_pages, what gstat -h prints) over a second
 * attachment: to the service manager of the same server, with the same login and options
 * (wire/svcclient.h). Blocks; bounded by the client's timeouts. */
#ifndef SQLTOOL_DBHEADER_H
#define SQLTOOL_DBHEADER_H

#include "fbwire.h"

#include <stdio.h>

/* Print the header page of the database dsn names as "header_<field>: value" lines (field: the
 * service's label in lower case, blanks as '_': header_page_size, header_next_transaction,
 * header_ods_version, ...). When it cannot be had (no service attachment, a refused login, a user
 * the server does not let read statistics) one line says so: "header_page: unavailable (why)".
 * Returns FBW_OK when the lines were printed, else the failure (already printed as unavailable). */
int sqltool_dbheader_print(const char *dsn, const fbw_client_opts *o, FILE *out);

/* The "header_<field>: value" lines of db_stats output text[0..n) (the lines after "Database
 * header page information:", each "\t<label>\t...<value>"; "*END*" and headings skipped), for
 * the unit test. Returns how many lines were printed. */
int sqltool_dbheader_format(const char *text, size_t n, FILE *out);

#endif
