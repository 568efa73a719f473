/* SPDX-License-Identifier: MIT */
/* dbheader.c - SHOW DATABASE's header page through the services API (dbheader.h). The service's
 * text is the server's own gstat report; only its tab-separated header lines are kept, relabelled
 * as key: value lines like the rest of SHOW DATABASE. */
#include "dbheader.h"

#include <ctype.h>
#include <string.h>

#define HEADING "Database header page information:"
#define QUERY_WAIT_S 1          /* the server waits at most this long per read of the output */
#define OUTPUT_MAX (64u << 10)  /* a header report is about 1 KiB */

/* One "\t<label>\t+<value>" line as "header_<label>: <value>"; 0 when it is not such a line. */
static int print_field(const char *p, const char *end, FILE *out)
{
    if (p == end || *p != '\t')
        return 0;
    p++;
    const char *label = p;
    while (p < end && *p != '\t')
        p++;
    const char *label_end = p;
    while (label_end > label && (label_end[-1] == ':' || label_end[-1] == ' '))
        label_end--; /* "Sweep interval:" in the variable header data */
    while (p < end && (*p == '\t' || *p == ' '))
        p++;
    if (label_end == label || p == end)
        return 0; /* "*END*", headings, empty values */
    fputs("header_", out);
    for (const char *c = label; c < label_end; c++)
        fputc(*c == ' ' ? '_' : tolower((unsigned char)*c), out);
    fprintf(out, ": %.*s\n", (int)(end - p), p);
    return 1;
}

int sqltool_dbheader_format(const char *text, size_t n, FILE *out)
{
    const char *end = text + n, *p = text;
    const char *h = NULL;
    for (const char *q = text; q + sizeof HEADING - 1 <= end && !h; q++)
        if (memcmp(q, HEADING, sizeof HEADING - 1) == 0)
            h = q;
    if (!h)
        return 0;
    int printed = 0;
    for (p = h; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *trim = le;
        if (trim > p && trim[-1] == '\r')
            trim--;
        printed += print_field(p, trim, out);
        p = nl ? nl + 1 : end;
    }
    return printed;
}

int sqltool_dbheader_print(const char *dsn, const fbw_client_opts *o, FILE *out)
{
    fbw_err err;
    fbw_dsn d;
    int rc = fbw_dsn_parse(dsn, &d, &err);
    fbw_client *cl = NULL;
    if (rc == FBW_OK)
        rc = fbw_client_svc_connect(dsn, o, &cl, &err);
    fbw_buf text;
    fbw_buf_init(&text);
    if (rc == FBW_OK) {
        fbw_spb spb;
        fbw_spb_init(&spb, FBW_SVC_ACTION_DB_STATS);
        fbw_spb_add_str(&spb, FBW_SPB_DBNAME, d.path);
        fbw_spb_add_int(&spb, FBW_SPB_OPTIONS, FBW_SPB_STS_HDR_PAGES);
        rc = fbw_client_svc_run(cl, &spb, QUERY_WAIT_S, OUTPUT_MAX, &text, &err);
        fbw_spb_free(&spb);
    }
    if (rc == FBW_OK && sqltool_dbheader_format((const char *)text.data, text.len, out) == 0)
        rc = fbw_err_set(&err, FBW_E_BADVALUE, "the statistics service printed no header page");
    if (rc != FBW_OK)
        fprintf(out, "header_page: unavailable (%s)\n", err.msg);
    fbw_buf_free(&text);
    if (cl && fbw_client_close(cl) != FBW_OK && rc == FBW_OK)
        rc = FBW_E_IO; /* the lines are out; a failed detach only shows in the return */
    return rc;
}
