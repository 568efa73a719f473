/* SPDX-License-Identifier: MIT */
/* test_sql_tool.c - fbwire-sql as a SQL client, run as a user would (popen) against FB3 and FB4:
 * a CRUD script's TSV and "rows affected" lines, blobs, NULL, CSV and table output, a failing
 * statement in the middle (message, SQLSTATE, gds code, the session goes on, exit 1), --bail,
 * --stats accounting (per statement, phases, totals = sums, a repeated statement not prepared
 * again), --no-autocommit with ROLLBACK / COMMIT / SET TRANSACTION typed as SQL, SET TERM with a
 * procedure, scripts from -i and stdin, time zone names on FB4, and isql's SHOW TABLES / SHOW
 * TABLE / SHOW DATABASE / SET STATS / EXIT / QUIT. */
#include <criterion/criterion.h>

#include "run_tool.h"
#include "servers.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FBWIRE_BINARY_DIR
#define FBWIRE_BINARY_DIR "."
#endif

#define TOOL FBWIRE_BINARY_DIR "/tools/fbwire-sql"
#define OUT_MAX (1 << 20)
#define ARGS_MAX 32

typedef fbw_run run_result;

static const fbw_server_id servers[] = {FBW_SRV_FB3, FBW_SRV_FB4};

/* Run the tool with argv (NULL-terminated); stdin from stdin_path when given. */
static run_result run_tool(const char *const *argv, const char *stdin_path)
{
    return fbw_run_tool(TOOL, argv, stdin_path, OUT_MAX);
}

static void run_free(run_result *r) { fbw_run_free(r); }

/* Connection arguments for server id, then the extra arguments (NULL-terminated list). */
typedef struct argv_buf {
    const char *v[ARGS_MAX];
    char dsn[1400];
    fbw_servers s;
} argv_buf;

static const char *const *make_args(argv_buf *b, fbw_server_id id, ...)
{
    fbw_servers_require(&b->s);
    int n = 0;
    b->v[n++] = "--user";
    b->v[n++] = b->s.user;
    b->v[n++] = "--password";
    b->v[n++] = b->s.password;
    b->v[n++] = "--connect-timeout";
    b->v[n++] = "10";
    va_list ap;
    va_start(ap, id);
    const char *a;
    int db_placed = 0;
    while ((a = va_arg(ap, const char *)) != NULL) {
        cr_assert_lt(n, ARGS_MAX - 2);
        if (!strcmp(a, "DB")) {
            a = fbw_servers_dsn(&b->s, id, b->dsn, sizeof b->dsn);
            db_placed = 1;
        }
        b->v[n++] = a;
    }
    va_end(ap);
    cr_assert(db_placed, "argument list without DB");
    b->v[n] = NULL;
    return b->v;
}

/* DDL on the shared test database can collide with other suites' DDL at commit (update conflict
 * or lock conflict on the system tables); such a run is repeated under a new object name. */
#define ATTEMPTS 3
#define SQL_MAX 8192

static int collided(const run_result *r)
{
    return strstr(r->err, "gds code = 335544336") != NULL ||
           strstr(r->err, "gds code = 335544345") != NULL;
}

/* tmpl with every @T replaced by name, into out. */
static void expand(char *out, size_t size, const char *tmpl, const char *name)
{
    size_t n = 0, k = strlen(name);
    for (const char *p = tmpl; *p; p++) {
        cr_assert_lt(n + k + 1, size, "script too long");
        if (p[0] == '@' && p[1] == 'T') {
            memcpy(out + n, name, k);
            n += k;
            p++;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = 0;
}

static void script_file(const char *text, char *path);

enum { AS_ARGUMENT, AS_INPUT_FILE, AS_STDIN };

/* Run the script tmpl (@T: an object name no other run uses) on server id, with option opt (or
 * NULL), passed as an argument, with -i or on stdin. The name used is left in name[96]. */
static run_result run_ddl(fbw_server_id id, const char *stem, const char *tmpl, const char *opt,
                          int how, argv_buf *b, char *name)
{
    char *sql = malloc(SQL_MAX), file[64];
    cr_assert_not_null(sql);
    for (int attempt = 0;; attempt++) {
        snprintf(name, 96, "SQLT_%s_%s_%ld_%d", stem, fbw_server_name(id), (long)getpid(), attempt);
        expand(sql, SQL_MAX, tmpl, name);
        const char *path = NULL;
        if (how != AS_ARGUMENT) {
            script_file(sql, file);
            path = file;
        }
        const char *const *argv;
        if (how == AS_ARGUMENT)
            argv = opt ? make_args(b, id, opt, "DB", sql, NULL) : make_args(b, id, "DB", sql, NULL);
        else if (how == AS_INPUT_FILE)
            argv = opt ? make_args(b, id, opt, "-i", path, "DB", NULL)
                       : make_args(b, id, "-i", path, "DB", NULL);
        else
            argv = opt ? make_args(b, id, opt, "DB", NULL) : make_args(b, id, "DB", NULL);
        run_result r = run_tool(argv, how == AS_STDIN ? path : NULL);
        if (path)
            unlink(path);
        if (attempt + 1 == ATTEMPTS || !collided(&r)) {
            free(sql);
            return r;
        }
        run_free(&r);
    }
}

/* Write text to a new temporary file; its name goes to path[64]. */
static void script_file(const char *text, char *path)
{
    snprintf(path, 64, "/tmp/fbwire-sqltool-in-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void expect_no_secret(const run_result *r, const char *pw)
{
    cr_expect(!strstr(r->out, pw), "the password is on stdout");
    cr_expect(!strstr(r->err, pw), "the password is on stderr");
}

/* ---- CRUD script: TSV, rows affected, blobs, NULL ---- */

static void crud_on(fbw_server_id id)
{
    char t[96], want[1024];
    argv_buf b;
    run_result r = run_ddl(
        id, "CRUD",
        "create table @T (id int not null primary key, name varchar(20), amount numeric(9,2),\n"
        "  note blob sub_type text, raw blob sub_type binary);\n"
        "insert into @T values (1, 'one', 1.5, 'text blob', x'00FF10');\n"
        "insert into @T values (2, 'two', -0.05, null, null);\n"
        "insert into @T (id, name) values (3, 'tab\tx\\y');\n"
        "select id, name, amount, note, raw from @T order by id;\n"
        "update @T set amount = amount * 2 where id <= 2;\n"
        "delete from @T where id = 3;\n"
        "delete from @T where id = 99;\n"
        "select count(*) as n, sum(amount) as total, 'it''s' as \"Quoted\" from @T;\n"
        "drop table @T;\n",
        NULL, AS_ARGUMENT, &b, t);
    snprintf(want, sizeof want,
             "1 row affected\n1 row affected\n1 row affected\n"
             "ID\tNAME\tAMOUNT\tNOTE\tRAW\n"
             "1\tone\t1.50\ttext blob\t00FF10\n"
             "2\ttwo\t-0.05\tNULL\tNULL\n"
             "3\ttab\\tx\\\\y\tNULL\tNULL\tNULL\n"
             "2 rows affected\n1 row affected\n0 rows affected\n"
             "N\tTOTAL\tQuoted\n2\t2.90\tit's\n");
    cr_expect_str_eq(r.out, want, "%s stdout differs; stderr:\n%s", fbw_server_name(id), r.err);
    cr_expect_eq(r.status, 0, "%s exit %d, stderr:\n%s", fbw_server_name(id), r.status, r.err);
    cr_expect_str_eq(r.err, "", "%s: nothing on stderr without --stats", fbw_server_name(id));
    expect_no_secret(&r, b.s.password);
    run_free(&r);
}

Test(sql_tool, crud_script_tsv, .timeout = 120)
{
    for (size_t i = 0; i < 2; i++)
        crud_on(servers[i]);
}

/* ---- output forms ---- */

Test(sql_tool, csv_and_table, .timeout = 120)
{
    for (size_t i = 0; i < 2; i++) {
        argv_buf b;
        const char *q =
            "select 'a,b' as x, cast(null as int) as n, 'NULL' as s, 12 as num from rdb$database";
        run_result r = run_tool(make_args(&b, servers[i], "--csv", "DB", q, NULL), NULL);
        cr_expect_str_eq(r.out, "X,N,S,NUM\r\n\"a,b\",NULL,\"NULL\",12\r\n", "stderr:\n%s", r.err);
        cr_expect_eq(r.status, 0);
        run_free(&r);
        r = run_tool(make_args(&b, servers[i], "--table", "DB", q, NULL), NULL);
        cr_expect_str_eq(r.out,
                         "X   | N    | S    | NUM\n"
                         "----+------+------+----\n"
                         "a,b | NULL | NULL |  12\n"
                         "(1 row)\n\n",
                         "stderr:\n%s", r.err);
        run_free(&r);
    }
}

/* ---- failures ---- */

static const char *const failing_script = "select 1 as a from rdb$database;\n"
                                          "selec 2 from rdb$database;\n"
                                          "select 3 as b from rdb$database;\n";

Test(sql_tool, syntax_error_goes_on, .timeout = 120)
{
    for (size_t i = 0; i < 2; i++) {
        argv_buf b;
        run_result r = run_tool(make_args(&b, servers[i], "DB", failing_script, NULL), NULL);
        cr_expect_str_eq(r.out, "A\n1\nB\n3\n", "%s", fbw_server_name(servers[i]));
        cr_expect_eq(r.status, 1, "exit %d", r.status);
        const char *needles[] = {
            "statement 2 (line 2) failed", "Token unknown", "selec", "SQLSTATE = 42000",
            "gds code = 335544569",        "335544634",     NULL};
        for (int k = 0; needles[k]; k++)
            cr_expect(strstr(r.err, needles[k]) != NULL, "\"%s\" not on stderr:\n%s", needles[k],
                      r.err);
        expect_no_secret(&r, b.s.password);
        run_free(&r);
    }
}

Test(sql_tool, bail_stops, .timeout = 120)
{
    for (size_t i = 0; i < 2; i++) {
        argv_buf b;
        run_result r =
            run_tool(make_args(&b, servers[i], "--bail", "DB", failing_script, NULL), NULL);
        cr_expect_str_eq(r.out, "A\n1\n", "%s", fbw_server_name(servers[i]));
        cr_expect_eq(r.status, 1);
        cr_expect(strstr(r.err, "SQLSTATE = 42000") != NULL, "stderr:\n%s", r.err);
        run_free(&r);
    }
}

Test(sql_tool, unterminated_string_is_a_failed_statement, .timeout = 60)
{
    argv_buf b;
    run_result r = run_tool(make_args(&b, FBW_SRV_FB4, "DB",
                                      "select 1 as a from rdb$database;\nselect 'x from t;",
                                      "select 2 as b from rdb$database", NULL),
                            NULL);
    cr_expect_str_eq(r.out, "A\n1\nB\n2\n");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "unterminated string starting at line 2") != NULL, "stderr:\n%s",
              r.err);
    run_free(&r);
}

/* ---- --stats ---- */

typedef struct stat_line {
    unsigned long long rt, phases, ps, pr, bs, br, execute, prepare, begin, commit;
} stat_line;

static unsigned long long field(const char *line, const char *key)
{
    char k[40];
    snprintf(k, sizeof k, " %s=", key);
    const char *p = strstr(line, k);
    cr_assert_not_null(p, "no %s in: %.200s", key, line);
    return strtoull(p + strlen(k), NULL, 10);
}

static stat_line parse_stat(const char *line)
{
    stat_line s;
    s.rt = field(line, "round_trips");
    s.begin = field(line, "begin");
    s.prepare = field(line, "prepare");
    s.execute = field(line, "execute");
    s.commit = field(line, "commit");
    s.phases = s.begin + s.prepare + s.execute + s.commit + field(line, "fetch") +
               field(line, "blob") + field(line, "tz");
    s.ps = field(line, "packets_sent");
    s.pr = field(line, "packets_received");
    s.bs = field(line, "bytes_sent");
    s.br = field(line, "bytes_received");
    return s;
}

static void stats_on(fbw_server_id id)
{
    argv_buf b;
    const char *q = "select 1 as a from rdb$database";
    run_result r = run_tool(
        make_args(&b, id, "--stats", "DB", q, q, q, "select 2 as b from rdb$database", NULL), NULL);
    cr_assert_eq(r.status, 0, "stderr:\n%s", r.err);
    cr_expect_str_eq(r.out, "A\n1\nA\n1\nA\n1\nB\n2\n");
    stat_line st[8], sum = {0}, total = {0};
    int n = 0, have_total = 0;
    for (char *line = r.err; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        if (!strncmp(line, "-- stats #", 10) || !strncmp(line, "-- stats end", 12)) {
            cr_assert_lt(n, 8);
            st[n] = parse_stat(line);
            cr_expect_gt(st[n].rt, 0, "a statement without a round trip: %s", line);
            cr_expect_eq(st[n].phases, st[n].rt, "phases do not add up: %s", line);
            sum.rt += st[n].rt, sum.ps += st[n].ps, sum.pr += st[n].pr, sum.bs += st[n].bs,
                sum.br += st[n].br;
            n++;
        } else if (!strncmp(line, "-- stats total:", 15)) {
            total = parse_stat(line);
            have_total = 1;
            cr_expect(strstr(line, "statements=4 failed=0") != NULL, "%s", line);
        }
        line = nl ? nl + 1 : NULL;
    }
    cr_assert_eq(n, 4, "%d statement lines in:\n%s", n, r.err);
    cr_assert(have_total, "no total line");
    cr_expect_eq(total.rt, sum.rt, "total round trips %llu, sum %llu", total.rt, sum.rt);
    cr_expect_eq(total.ps, sum.ps);
    cr_expect_eq(total.pr, sum.pr);
    cr_expect_eq(total.bs, sum.bs);
    cr_expect_eq(total.br, sum.br);
    /* the first statement starts the first transaction; then prepare, execute+fetch, commit+next
     * start: one trip each */
    cr_expect_eq(st[0].begin, 1);
    cr_expect_eq(st[0].prepare, 1);
    cr_expect_eq(st[0].execute, 1);
    cr_expect_eq(st[0].commit, 1);
    /* the same text again is not prepared again: execute+fetch and commit only */
    for (int k = 1; k <= 2; k++) {
        cr_expect_eq(st[k].rt, 2, "repeat %d: %llu round trips", k, st[k].rt);
        cr_expect_eq(st[k].prepare, 0);
    }
    cr_expect_eq(st[3].rt, 3, "another text: prepare, execute, commit");
    cr_expect_eq(st[3].begin, 0, "its transaction was started with the last commit");
    cr_expect(strstr(r.err, "-- stats connect: round_trips=") != NULL, "no connect line:\n%s",
              r.err);
    fprintf(stderr, "%s stats: first %llu, repeated %llu, new %llu round trips\n",
            fbw_server_name(id), st[0].rt, st[1].rt, st[3].rt);
    run_free(&r);
}

Test(sql_tool, stats_per_statement_and_total, .timeout = 120)
{
    for (size_t i = 0; i < 2; i++)
        stats_on(servers[i]);
}

/* ---- transactions typed as SQL ---- */

static void no_autocommit_on(fbw_server_id id)
{
    char t[96];
    argv_buf b;
    run_result r = run_ddl(id, "TX",
                           "create table @T (id int);\n"
                           "commit;\n"
                           "insert into @T values (1);\n"
                           "rollback;\n"
                           "select count(*) as n from @T;\n"
                           "insert into @T values (2);\n"
                           "commit;\n"
                           "select count(*) as n from @T;\n"
                           "set transaction snapshot;\n"
                           "insert into @T values (3);\n"
                           "select count(*) as n from @T;\n"
                           "rollback;\n"
                           "select count(*) as n from @T;\n"
                           "drop table @T;\n",
                           "--no-autocommit", AS_ARGUMENT, &b, t);
    cr_expect_str_eq(r.out,
                     "1 row affected\nN\n0\n1 row affected\nN\n1\n1 row affected\nN\n2\nN\n1\n",
                     "%s stderr:\n%s", fbw_server_name(id), r.err);
    cr_expect_eq(r.status, 0, "stderr:\n%s", r.err);
    run_free(&r);
    /* the drop was committed at the end of the session: the table is gone */
    char q[256];
    snprintf(q, sizeof q, "select count(*) as n from rdb$relations where rdb$relation_name = '%s'",
             t);
    r = run_tool(make_args(&b, id, "DB", q, NULL), NULL);
    cr_expect_str_eq(r.out, "N\n0\n", "stderr:\n%s", r.err);
    run_free(&r);
}

Test(sql_tool, no_autocommit_rollback_commit_set_transaction, .timeout = 120)
{
    for (size_t i = 0; i < 2; i++)
        no_autocommit_on(servers[i]);
}

Test(sql_tool, no_autocommit_rolls_back_on_bail, .timeout = 120)
{
    char t[96], sql[1024];
    argv_buf b;
    run_result r =
        run_ddl(FBW_SRV_FB3, "BAIL", "create table @T (id int)", NULL, AS_ARGUMENT, &b, t);
    cr_assert_eq(r.status, 0, "stderr:\n%s", r.err);
    run_free(&r);
    snprintf(sql, sizeof sql, "insert into %s values (1); selec 1; insert into %s values (2);", t,
             t);
    r = run_tool(make_args(&b, FBW_SRV_FB3, "--no-autocommit", "--bail", "DB", sql, NULL), NULL);
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.out, "1 row affected\n");
    run_free(&r);
    snprintf(sql, sizeof sql, "select count(*) as n from %s; drop table %s", t, t);
    r = run_tool(make_args(&b, FBW_SRV_FB3, "DB", sql, NULL), NULL);
    cr_expect_str_eq(r.out, "N\n0\n", "the insert before the failure was rolled back; stderr:\n%s",
                     r.err);
    run_free(&r);
}

/* ---- SET TERM and PSQL, scripts from files and stdin ---- */

static void procedure_on(fbw_server_id id, int from_stdin)
{
    char p[96];
    argv_buf b;
    run_result r = run_ddl(id, "PROC",
                           "-- PSQL needs another terminator\n"
                           "set term ^ ;\n"
                           "create procedure @T (n int) returns (r int, s varchar(10)) as\n"
                           "begin\n"
                           "  r = n * 2; s = 'a;b';\n"
                           "  suspend;\n"
                           "  r = n * 3; s = null; /* ; */\n"
                           "  suspend;\n"
                           "end^\n"
                           "set term ; ^\n"
                           "select r, s from @T(7);\n"
                           "execute procedure @T(5);\n"
                           "drop procedure @T;\n",
                           NULL, from_stdin ? AS_STDIN : AS_INPUT_FILE, &b, p);
    cr_expect_str_eq(r.out, "R\tS\n14\ta;b\n21\tNULL\nR\tS\n10\ta;b\n", "%s stderr:\n%s",
                     fbw_server_name(id), r.err);
    cr_expect_eq(r.status, 0, "stderr:\n%s", r.err);
    run_free(&r);
}

Test(sql_tool, set_term_procedure, .timeout = 120)
{
    procedure_on(FBW_SRV_FB3, 0);
    procedure_on(FBW_SRV_FB4, 1);
}

/* ---- values ---- */

Test(sql_tool, fb4_time_zone_names_and_types, .timeout = 60)
{
    argv_buf b;
    const char *q = "select timestamp '2020-06-01 10:00 Europe/Berlin' as b,\n"
                    " time '10:00 +05:30' as t, cast(1.5 as decfloat(16)) as d,\n"
                    " cast(170141183460469231731687303715884105727 as int128) as i, true as bo,\n"
                    " cast('2020-02-29' as date) as dt, 'x' as c\n"
                    "from rdb$database";
    run_result r = run_tool(make_args(&b, FBW_SRV_FB4, "--stats", "DB", q, NULL), NULL);
    cr_expect_str_eq(r.out,
                     "B\tT\tD\tI\tBO\tDT\tC\n"
                     "2020-06-01 10:00:00.0000 Europe/Berlin\t10:00:00.0000 +05:30\t1.5\t"
                     "170141183460469231731687303715884105727\tTRUE\t2020-02-29\tx\n",
                     "stderr:\n%s", r.err);
    cr_expect(strstr(r.err, " tz=2 ") != NULL, "the zone names cost a prepare and an execute:\n%s",
              r.err);
    run_free(&r);
}

Test(sql_tool, statement_with_parameters_is_refused, .timeout = 60)
{
    argv_buf b;
    run_result r =
        run_tool(make_args(&b, FBW_SRV_FB3, "DB", "select 1 from rdb$database where 1 = ?",
                           "select 5 as f from rdb$database", NULL),
                 NULL);
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.out, "F\n5\n");
    cr_expect(strstr(r.err, "parameter") != NULL, "stderr:\n%s", r.err);
    run_free(&r);
}

/* ---- isql commands: SHOW, SET STATS, EXIT, QUIT ---- */

static int count_lines_with(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void commands_on(fbw_server_id id)
{
    char t[96], want[2048];
    argv_buf b;
    run_result r = run_ddl(
        id, "CMD",
        "create table @T (id int not null primary key, amount numeric(9,2), name varchar(20),\n"
        "  note blob sub_type text, stamp timestamp, ok boolean);\n"
        "show tables;\n"
        "SHOW TABLE @T;\n"
        "set stats on;\n"
        "select count(*) as n from @T;\n"
        "set stats off;\n"
        "select 1 as one from rdb$database;\n"
        "show database;\n"
        "show foo;\n"
        "show table NOSUCH_@T;\n"
        "drop table @T;\n",
        NULL, AS_STDIN, &b, t);
    for (char *p = t; *p; p++) /* unquoted: stored in upper case */
        if (*p >= 'a' && *p <= 'z')
            *p = (char)(*p - 'a' + 'A');
    snprintf(want, sizeof want, "\n%s\n", t);
    cr_expect(strstr(r.out, want), "%s: SHOW TABLES lacks %s:\n%s", fbw_server_name(id), t, r.out);
    cr_expect(strstr(r.out, "COLUMN\tTYPE\tNULLABLE\tKEY\n"
                            "ID\tINTEGER\tNOT NULL\tPRIMARY KEY\n"
                            "AMOUNT\tNUMERIC(9,2)\tNULL\t\n"
                            "NAME\tVARCHAR(20)\tNULL\t\n"
                            "NOTE\tBLOB SUB_TYPE 1\tNULL\t\n"
                            "STAMP\tTIMESTAMP\tNULL\t\n"
                            "OK\tBOOLEAN\tNULL\t\n"),
              "%s: SHOW TABLE:\n%s", fbw_server_name(id), r.out);
    cr_expect(strstr(r.out, "N\n0\nONE\n1\nserver_version: "), "%s: rows, then SHOW DATABASE:\n%s",
              fbw_server_name(id), r.out);
    cr_expect(strstr(r.out, "\nwire_crypt: ") && strstr(r.out, "\nround_trips: ") &&
                  strstr(r.out, "\nwait_ms: "),
              "%s: SHOW DATABASE prints what --info does:\n%s", fbw_server_name(id), r.out);
    /* SET STATS ON .. OFF: the one statement between them has its line, no totals at the end. */
    cr_expect_eq(count_lines_with(r.err, "-- stats #"), 1, "%s: stats lines:\n%s", fbw_server_name(id),
                 r.err);
    cr_expect(strstr(r.err, "-- stats #4 line 6: round_trips="), "%s:\n%s", fbw_server_name(id), r.err);
    cr_expect(!strstr(r.err, "-- stats total"), "%s: totals after SET STATS OFF", fbw_server_name(id));
    cr_expect(strstr(r.err, "failed: unknown SHOW command \"SHOW foo\""), "%s:\n%s",
              fbw_server_name(id), r.err);
    snprintf(want, sizeof want, "failed: there is no table or view NOSUCH_%s\n", t);
    cr_expect(strstr(r.err, want), "%s:\n%s", fbw_server_name(id), r.err);
    cr_expect_eq(r.status, 1, "%s: two failed commands, exit %d", fbw_server_name(id), r.status);
    run_free(&r);
}

Test(sql_tool, isql_show_and_set_stats, .timeout = 120)
{
    for (size_t i = 0; i < 2; i++)
        commands_on(servers[i]);
}

/* EXIT commits and stops the script, QUIT rolls back and stops it. */
static void exit_quit_on(fbw_server_id id)
{
    char t[96], sql[512];
    argv_buf b;
    run_result r = run_ddl(id, "EXQ",
                           "create table @T (id int);\n"
                           "commit;\n"
                           "insert into @T values (1);\n"
                           "exit;\n"
                           "insert into @T values (2);\n",
                           "--no-autocommit", AS_STDIN, &b, t);
    cr_expect_eq(r.status, 0, "%s: exit %d:\n%s", fbw_server_name(id), r.status, r.err);
    cr_expect_str_eq(r.out, "1 row affected\n", "%s: the statement after EXIT ran", fbw_server_name(id));
    run_free(&r);
    snprintf(sql, sizeof sql, "insert into %s values (3);\nQUIT;\nselect 1 from rdb$database;\n", t);
    r = run_tool(make_args(&b, id, "--no-autocommit", "DB", sql, NULL), NULL);
    cr_expect_str_eq(r.out, "1 row affected\n", "%s: the statement after QUIT ran", fbw_server_name(id));
    run_free(&r);
    snprintf(sql, sizeof sql, "select list(id) as ids from %s;\ndrop table %s;\n", t, t);
    r = run_tool(make_args(&b, id, "DB", sql, NULL), NULL);
    cr_expect_str_eq(r.out, "IDS\n1\n", "%s: EXIT committed 1, QUIT rolled 3 back; stderr:\n%s",
                     fbw_server_name(id), r.err);
    run_free(&r);
}

Test(sql_tool, exit_commits_quit_rolls_back, .timeout = 120)
{
    for (size_t i = 0; i < 2; i++)
        exit_quit_on(servers[i]);
}
