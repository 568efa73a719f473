/* SPDX-License-Identifier: MIT */
/* test_dbheader.c - SHOW DATABASE's header page (tools/fbwire-sql/dbheader.c): the statistics
 * service's report (as Firebird 3 printed it for gstat -h) becomes header_<field>: value lines,
 * headings and "*END*" skipped, text without the header section prints nothing; a server that cannot
 * be reached prints one "header_page: unavailable (why)" line instead. */
#include <criterion/criterion.h>

#include "dbheader.h"

#include <stdlib.h>
#include <string.h>

static char *run_format(const char *text, int *lines)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    cr_assert_not_null(f);
    *lines = sqltool_dbheader_format(text, strlen(text), f);
    fclose(f);
    return buf;
}

static const char report[] =
    "\nDatabase \"/db/x.fdb\"\nGstat execution time Sun Dec  6 02:19:23 2026\n\n"
    "Database header page information:\n"
    "\tFlags\t\t\t0\n"
    "\tPage size\t\t8192\n"
    "\tODS version\t\t12.0\n"
    "\tNext transaction\t83852\n"
    "\tImplementation\t\tHW=AMD/Intel/x64 little-endian OS=Linux CC=gcc\n"
    "\tAttributes\t\tforce write\r\n"
    "\n    Variable header data:\n"
    "\tSweep interval:\t\t20000\n"
    "\t*END*\n"
    "Gstat completion time Sun Dec  6 02:19:23 2026\n";

Test(dbheader, report_becomes_key_value_lines)
{
    int lines;
    char *out = run_format(report, &lines);
    cr_assert_eq(lines, 7, "%s", out);
    cr_assert_str_eq(out, "header_flags: 0\n"
                          "header_page_size: 8192\n"
                          "header_ods_version: 12.0\n"
                          "header_next_transaction: 83852\n"
                          "header_implementation: HW=AMD/Intel/x64 little-endian OS=Linux CC=gcc\n"
                          "header_attributes: force write\n"
                          "header_sweep_interval: 20000\n");
    free(out);
}

Test(dbheader, no_header_section_prints_nothing)
{
    int lines;
    char *out = run_format("\tPage size\t\t8192\nDatabase \"/x\"\n", &lines);
    cr_assert_eq(lines, 0);
    cr_assert_str_eq(out, "");
    free(out);
    out = run_format("", &lines);
    cr_assert_eq(lines, 0);
    free(out);
}

/* Nothing listens on port 1 of the loopback: the attach fails and one line says so. */
Test(dbheader, unreachable_server_says_unavailable)
{
    fbw_client_opts o;
    fbw_client_opts_init(&o);
    o.conn.user = "nobody";
    o.conn.password = "not-a-password";
    o.connect_timeout_ms = 2000;
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    cr_assert_not_null(f);
    int rc = sqltool_dbheader_print("127.0.0.1/1:/db/x.fdb", &o, f);
    fclose(f);
    cr_assert_neq(rc, FBW_OK);
    cr_assert(strncmp(buf, "header_page: unavailable (", 26) == 0, "%s", buf);
    cr_assert(strstr(buf, "not-a-password") == NULL, "%s", buf);
    cr_assert_eq(strchr(buf, '\n'), buf + strlen(buf) - 1, "one line: %s", buf);
    free(buf);
}
