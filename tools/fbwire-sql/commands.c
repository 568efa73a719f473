/* SPDX-License-Identifier: MIT */
/* commands.c - isql commands run by fbwire-sql itself (commands.h). The type names of SHOW TABLE
 * come from RDB$FIELDS codes (RDB$FIELD_TYPE: 7 SMALLINT, 8 INTEGER, 16 BIGINT, 26 INT128 - scaled
 * or with sub-type 1/2 they are NUMERIC/DECIMAL - 10 FLOAT, 27 DOUBLE, 12 DATE, 13 TIME,
 * 35 TIMESTAMP, 28/29 the WITH TIME ZONE forms, 14 CHAR, 37 VARCHAR, 261 BLOB, 23 BOOLEAN, 24/25
 * DECFLOAT), so every server version answers the same query. */
#include "commands.h"

#include "dbheader.h"

#include <stdint.h>
#include <string.h>

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Case-insensitive word w at *p (followed by a blank or the end); moves *p past it and the blanks. */
static int word(const char **p, const char *end, const char *w)
{
    size_t k = strlen(w);
    if ((size_t)(end - *p) < k)
        return 0;
    for (size_t i = 0; i < k; i++) {
        char c = (*p)[i];
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        if (c != w[i])
            return 0;
    }
    if (*p + k < end && !is_space((*p)[k]))
        return 0;
    *p += k;
    while (*p < end && is_space(**p))
        (*p)++;
    return 1;
}

static int fail(sqltool_session *se, unsigned line, const char *fmt, const char *arg, int arglen)
{
    fbw_err e;
    fbw_err_set(&e, FBW_E_USAGE, fmt, arglen, arg);
    sqltool_session_fail(se, &e, line);
    return FBW_E_USAGE;
}

void sqltool_cmd_print_info(fbw_client *cl, FILE *out)
{
    fbw_conn *c = fbw_client_conn(cl);
    const fbw_conn_info *i = fbw_conn_get_info(c);
    const fbw_stats *s = fbw_conn_stats(c);
    fprintf(out, "server_version: %s\n", i->server_version);
    fprintf(out, "protocol: %d\n", i->protocol);
    fprintf(out, "lazy_send: %s\n", i->lazy ? "yes" : "no");
    fprintf(out, "auth_plugin: %s\n", i->auth_plugin[0] ? i->auth_plugin : "none");
    fprintf(out, "wire_crypt: %s\n", i->wire_crypt);
    fprintf(out, "compression: %s\n", i->compressed ? "zlib" : "none");
    fprintf(out, "row_format: %s\n", fbw_row_format_name(fbw_conn_row_format(c)));
    fprintf(out, "statement_timeout_ms: %lu\n", (unsigned long)fbw_conn_statement_timeout(c));
    fprintf(out, "round_trips: %llu\n", (unsigned long long)s->round_trips);
    fprintf(out, "packets_sent: %llu\n", (unsigned long long)s->packets_sent);
    fprintf(out, "packets_received: %llu\n", (unsigned long long)s->packets_received);
    fprintf(out, "bytes_sent: %llu\n", (unsigned long long)s->bytes_sent);
    fprintf(out, "bytes_received: %llu\n", (unsigned long long)s->bytes_received);
    fprintf(out, "wire_bytes_sent: %llu\n", (unsigned long long)s->wire_bytes_sent);
    fprintf(out, "wire_bytes_received: %llu\n", (unsigned long long)s->wire_bytes_received);
    fprintf(out, "wait_ms: %.3f\n", (double)s->wait_ns / 1e6);
}

static int show_database(sqltool_session *se, unsigned line)
{
    fbw_client *cl = sqltool_session_client(se);
    int rc = fbw_conn_query_version(fbw_client_conn(cl));
    if (rc == FBW_OK)
        rc = fbw_client_wait(cl);
    if (rc) {
        sqltool_session_fail(se, fbw_client_error(cl), line);
        return rc;
    }
    sqltool_cmd_print_info(cl, stdout);
    const sqltool_session_opts *o = sqltool_session_options(se);
    if (o->dsn && o->client)
        sqltool_dbheader_print(o->dsn, o->client, stdout); /* best effort: says when unavailable */
    fflush(stdout);
    return FBW_OK;
}

static const char COLUMNS_SQL[] =
    "select trim(rf.rdb$field_name) as \"COLUMN\", trim(case "
    "when f.rdb$field_type in (7, 8, 16, 26) and (coalesce(f.rdb$field_scale, 0) <> 0 or "
    "coalesce(f.rdb$field_sub_type, 0) in (1, 2)) then "
    "case f.rdb$field_sub_type when 2 then 'DECIMAL(' else 'NUMERIC(' end || "
    "coalesce(f.rdb$field_precision, 0) || ',' || (-coalesce(f.rdb$field_scale, 0)) || ')' "
    "when f.rdb$field_type = 7 then 'SMALLINT' when f.rdb$field_type = 8 then 'INTEGER' "
    "when f.rdb$field_type = 16 then 'BIGINT' when f.rdb$field_type = 26 then 'INT128' "
    "when f.rdb$field_type = 10 then 'FLOAT' when f.rdb$field_type = 27 then 'DOUBLE PRECISION' "
    "when f.rdb$field_type = 12 then 'DATE' when f.rdb$field_type = 13 then 'TIME' "
    "when f.rdb$field_type = 35 then 'TIMESTAMP' "
    "when f.rdb$field_type = 28 then 'TIME WITH TIME ZONE' "
    "when f.rdb$field_type = 29 then 'TIMESTAMP WITH TIME ZONE' "
    "when f.rdb$field_type = 14 then 'CHAR(' || coalesce(f.rdb$character_length, "
    "f.rdb$field_length) || ')' "
    "when f.rdb$field_type = 37 then 'VARCHAR(' || coalesce(f.rdb$character_length, "
    "f.rdb$field_length) || ')' "
    "when f.rdb$field_type = 261 then 'BLOB SUB_TYPE ' || coalesce(f.rdb$field_sub_type, 0) "
    "when f.rdb$field_type = 23 then 'BOOLEAN' when f.rdb$field_type = 24 then 'DECFLOAT(16)' "
    "when f.rdb$field_type = 25 then 'DECFLOAT(34)' "
    "else 'TYPE ' || f.rdb$field_type end) as \"TYPE\", "
    "trim(case when coalesce(rf.rdb$null_flag, 0) = 1 or coalesce(f.rdb$null_flag, 0) = 1 "
    "then 'NOT NULL' else 'NULL' end) as \"NULLABLE\", "
    "trim(case when exists (select 1 from rdb$relation_constraints rc join rdb$index_segments s "
    "on s.rdb$index_name = rc.rdb$index_name where rc.rdb$relation_name = rf.rdb$relation_name "
    "and rc.rdb$constraint_type = 'PRIMARY KEY' and s.rdb$field_name = rf.rdb$field_name) "
    "then 'PRIMARY KEY' else '' end) as \"KEY\" "
    "from rdb$relation_fields rf join rdb$fields f on f.rdb$field_name = rf.rdb$field_source "
    "where rf.rdb$relation_name = '%s' order by rf.rdb$field_position";

/* The stored form of a name: "Quoted" as written ("" for "), unquoted in upper case. Returns 0
 * when it does not fit or is malformed; the result is safe inside '...' (quotes doubled). */
static int stored_name(const char *p, const char *end, char *out, size_t size)
{
    char name[256];
    size_t n = 0;
    while (end > p && is_space(end[-1]))
        end--;
    if (p < end && *p == '"') {
        if (end - p < 3 || end[-1] != '"')
            return 0;
        for (const char *q = p + 1; q < end - 1 && n < sizeof name - 1; q++) {
            if (*q == '"' && (++q >= end - 1 || *q != '"'))
                return 0;
            name[n++] = *q;
        }
    } else {
        for (const char *q = p; q < end && n < sizeof name - 1; q++) {
            if (is_space(*q) || *q == '"')
                return 0;
            name[n++] = *q >= 'a' && *q <= 'z' ? (char)(*q - 'a' + 'A') : *q;
        }
    }
    if (n == 0 || n > 63)
        return 0;
    size_t o = 0;
    for (size_t i = 0; i < n && o + 2 < size; i++) {
        if (name[i] == '\'')
            out[o++] = '\'';
        out[o++] = name[i];
    }
    out[o] = 0;
    return 1;
}

static int show_table(sqltool_session *se, const char *p, const char *end, unsigned line)
{
    char name[160], sql[sizeof COLUMNS_SQL + 200];
    if (!stored_name(p, end, name, sizeof name))
        return fail(se, line, "SHOW TABLE needs one table name, got \"%.*s\"", p, (int)(end - p));
    uint64_t rows = 0;
    snprintf(sql, sizeof sql, "select 1 from rdb$relations where rdb$relation_name = '%s'", name);
    int rc = sqltool_session_count(se, sql, strlen(sql), line, &rows);
    if (rc == FBW_OK && rows == 0)
        return fail(se, line, "there is no table or view %.*s", name, (int)strlen(name));
    if (rc)
        return rc;
    snprintf(sql, sizeof sql, COLUMNS_SQL, name);
    return sqltool_session_exec(se, sql, strlen(sql), line);
}

static const char TABLES_SQL[] =
    "select trim(rdb$relation_name) as \"TABLE\" from rdb$relations "
    "where coalesce(rdb$system_flag, 0) = 0 and rdb$view_blr is null order by 1";

static int show(sqltool_session *se, const char *args, const char *end, unsigned line)
{
    const char *p = args;
    if (word(&p, end, "TABLES") && p == end)
        return sqltool_session_exec(se, TABLES_SQL, sizeof TABLES_SQL - 1, line);
    p = args;
    if (word(&p, end, "TABLE"))
        return p == end ? sqltool_session_exec(se, TABLES_SQL, sizeof TABLES_SQL - 1, line)
                        : show_table(se, p, end, line);
    p = args;
    if (word(&p, end, "DATABASE") && p == end)
        return show_database(se, line);
    p = args;
    if (word(&p, end, "COUNT") && p == end)
        return sqltool_session_count_cursor(se, line);
    return fail(se, line, "unknown SHOW command \"SHOW %.*s\" (there are SHOW TABLES, SHOW TABLE name, "
                          "SHOW DATABASE, SHOW COUNT)", args, (int)(end - args));
}

/* SET STATEMENT TIMEOUT n [HOUR | MINUTE | SECOND | MILLISECOND], Firebird's syntax (parse.y
 * timepart_ses_stmt_tout: SECOND when no unit is given), n as Firebird reads it: an unsigned
 * 32-bit count of milliseconds at most. fbwire-sql sets the connection's timeout
 * (fbw_conn_set_statement_timeout), which every later execute carries: the server's own
 * attachment-level statement would make FB3 answer "Token unknown" instead of a clear refusal. */
static int set_statement_timeout(sqltool_session *se, const char *p, const char *end, unsigned line)
{
    static const struct { const char *unit; uint32_t ms; } units[] = {
        {"HOUR", 3600000}, {"MINUTE", 60000}, {"SECOND", 1000}, {"MILLISECOND", 1}};
    const char *num = p;
    uint64_t n = 0;
    while (p < end && *p >= '0' && *p <= '9' && n <= UINT32_MAX)
        n = n * 10 + (uint64_t)(*p++ - '0');
    int digits = p > num && (p == end || is_space(*p));
    while (p < end && is_space(*p))
        p++;
    uint64_t mult = 1000;
    for (size_t i = 0; digits && p < end && i < sizeof units / sizeof units[0]; i++) {
        const char *q = p;
        if (word(&q, end, units[i].unit)) {
            mult = units[i].ms;
            p = q;
        }
    }
    if (!digits || p != end)
        return fail(se, line, "SET STATEMENT TIMEOUT takes a number and HOUR, MINUTE, SECOND (the "
                              "default) or MILLISECOND, got \"%.*s\"", num, (int)(end - num));
    if (n * mult > UINT32_MAX)
        return fail(se, line, "SET STATEMENT TIMEOUT %.*s: more than 4294967295 ms", num,
                    (int)(end - num));
    fbw_err e;
    int rc = fbw_conn_set_statement_timeout(fbw_client_conn(sqltool_session_client(se)),
                                            (uint32_t)(n * mult), &e);
    if (rc)
        sqltool_session_fail(se, &e, line);
    return rc;
}

/* FETCH NEXT | PRIOR | FIRST | LAST | ABSOLUTE n | RELATIVE n (n a signed 32-bit number): the
 * moves of SQL's FETCH on a scrollable cursor, in Firebird's PSQL spelling. */
static int fetch(sqltool_session *se, const char *args, const char *end, unsigned line)
{
    static const struct { const char *name; int op; } moves[] = {
        {"NEXT", FBW_FETCH_NEXT},         {"PRIOR", FBW_FETCH_PRIOR}, {"FIRST", FBW_FETCH_FIRST},
        {"LAST", FBW_FETCH_LAST},         {"ABSOLUTE", FBW_FETCH_ABSOLUTE},
        {"RELATIVE", FBW_FETCH_RELATIVE}};
    for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++) {
        const char *p = args;
        if (!word(&p, end, moves[i].name))
            continue;
        int op = moves[i].op;
        if (op != FBW_FETCH_ABSOLUTE && op != FBW_FETCH_RELATIVE)
            return p == end ? sqltool_session_fetch(se, op, 0, line)
                            : fail(se, line, "FETCH NEXT, PRIOR, FIRST and LAST take no number, "
                                             "got \"%.*s\"", p, (int)(end - p));
        const char *num = p;
        int neg = p < end && (*p == '-' || *p == '+') ? *p++ == '-' : 0;
        int64_t n = 0;
        const char *digits = p;
        while (p < end && *p >= '0' && *p <= '9' && n <= INT32_MAX)
            n = n * 10 + (*p++ - '0');
        while (p < end && is_space(*p))
            p++;
        if (p == digits || p != end || n > (int64_t)INT32_MAX + neg)
            return fail(se, line, "FETCH ABSOLUTE and RELATIVE take a whole number from "
                                  "-2147483648 to 2147483647, got \"%.*s\"", num, (int)(end - num));
        return sqltool_session_fetch(se, op, (int32_t)(neg ? -n : n), line);
    }
    return fail(se, line, "FETCH takes NEXT, PRIOR, FIRST, LAST, ABSOLUTE n or RELATIVE n, got "
                          "\"%.*s\"", args, (int)(end - args));
}

int sqltool_cmd_run(sqltool_session *se, const char *sql, size_t len, unsigned line, int *rc)
{
    const char *p = sql, *end = sql + len;
    *rc = FBW_OK;
    if (word(&p, end, "EXIT") && p == end)
        return SQLTOOL_CMD_EXIT;
    p = sql;
    if (word(&p, end, "QUIT") && p == end)
        return SQLTOOL_CMD_QUIT;
    p = sql;
    if (word(&p, end, "SHOW")) {
        *rc = show(se, p, end, line);
        return SQLTOOL_CMD_DONE;
    }
    p = sql;
    if (word(&p, end, "SET") && word(&p, end, "STATS")) {
        if (p == end || word(&p, end, "ON")) {
            sqltool_session_set_stats(se, 1);
        } else if (word(&p, end, "OFF")) {
            sqltool_session_set_stats(se, 0);
        }
        if (p != end)
            *rc = fail(se, line, "SET STATS takes ON or OFF, got \"%.*s\"", p, (int)(end - p));
        return SQLTOOL_CMD_DONE;
    }
    p = sql;
    if (word(&p, end, "SET") && word(&p, end, "SCROLL")) {
        int on = -1;
        if (word(&p, end, "ON"))
            on = 1;
        else if (word(&p, end, "OFF"))
            on = 0;
        if (on < 0 || p != end)
            *rc = fail(se, line, "SET SCROLL takes ON or OFF, got \"%.*s\"", p, (int)(end - p));
        else
            *rc = sqltool_session_set_scroll(se, on, line);
        return SQLTOOL_CMD_DONE;
    }
    p = sql;
    if (word(&p, end, "FETCH")) {
        *rc = fetch(se, p, end, line);
        return SQLTOOL_CMD_DONE;
    }
    p = sql;
    if (word(&p, end, "SET") && word(&p, end, "STATEMENT") && word(&p, end, "TIMEOUT")) {
        *rc = set_statement_timeout(se, p, end, line);
        return SQLTOOL_CMD_DONE;
    }
    return SQLTOOL_CMD_SQL;
}
