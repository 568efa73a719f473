/* SPDX-License-Identifier: MIT */
/* test_sqltok.c - the one SQL tokenizer (wire/sqltok.c) and statement-kind rule (wire/sqlkind.c):
 * the cases the driver's dialect, the report's classes and fbwire-sql's splitter each handled
 * with their own lexer before, and the edges (unclosed quotes and comments at the end, empty
 * input, only comments, long input, NUL bytes, every prefix read without over-reading). */
#include <criterion/criterion.h>

#include "sqlkind.h"
#include "sqltok.h"

#include <stdlib.h>
#include <string.h>

#define MAXT 64

typedef struct toks {
    int n;
    fbw_tok t[MAXT];
} toks;

/* Every token of s[0, n) (blanks and comments too when raw), with the terminator term. */
static toks lex(const char *s, size_t n, const char *term, int raw)
{
    toks r;
    memset(&r, 0, sizeof r);
    fbw_sqltok t;
    fbw_sqltok_init(&t, s, n);
    if (term)
        fbw_sqltok_set_term(&t, term, strlen(term));
    size_t last = 0;
    for (;;) {
        fbw_tok k = raw ? fbw_sqltok_raw(&t) : fbw_sqltok_next(&t);
        if (k.kind == FBW_TOK_END) {
            cr_assert_eq(k.b, n);
            cr_assert_eq(k.e, n);
            return r;
        }
        cr_assert(k.b >= last && k.e > k.b && k.e <= n, "token [%zu, %zu) of %zu", k.b, k.e, n);
        last = k.e;
        cr_assert_lt(r.n, MAXT);
        r.t[r.n++] = k;
    }
}

static toks lex0(const char *s) { return lex(s, strlen(s), NULL, 0); }

static void expect_tok(const char *s, const fbw_tok *k, fbw_tok_kind kind, const char *text)
{
    cr_expect_eq(k->kind, kind, "kind of [%.*s]", (int)(k->e - k->b), s + k->b);
    cr_expect_eq(k->e - k->b, strlen(text), "[%.*s] is not [%s]", (int)(k->e - k->b), s + k->b,
                 text);
    cr_expect(memcmp(s + k->b, text, strlen(text)) == 0, "[%.*s] is not [%s]",
              (int)(k->e - k->b), s + k->b, text);
}

Test(sqltok, every_kind)
{
    const char *s = "SELECT a_1, $x, \"Q\"\"n\", 'it''s', 12.5e3, ? /* c */ -- d\n FROM t;";
    toks r = lex(s, strlen(s), NULL, 1);
    const struct {
        fbw_tok_kind kind;
        const char *text;
    } want[] = {
        {FBW_TOK_WORD, "SELECT"},  {FBW_TOK_SPACE, " "},       {FBW_TOK_WORD, "a_1"},
        {FBW_TOK_PUNCT, ","},      {FBW_TOK_SPACE, " "},       {FBW_TOK_WORD, "$x"},
        {FBW_TOK_PUNCT, ","},      {FBW_TOK_SPACE, " "},       {FBW_TOK_QNAME, "\"Q\"\"n\""},
        {FBW_TOK_PUNCT, ","},      {FBW_TOK_SPACE, " "},       {FBW_TOK_STRING, "'it''s'"},
        {FBW_TOK_PUNCT, ","},      {FBW_TOK_SPACE, " "},       {FBW_TOK_NUMBER, "12.5e3"},
        {FBW_TOK_PUNCT, ","},      {FBW_TOK_SPACE, " "},       {FBW_TOK_PARAM, "?"},
        {FBW_TOK_SPACE, " "},      {FBW_TOK_COMMENT, "/* c */"}, {FBW_TOK_SPACE, " "},
        {FBW_TOK_COMMENT, "-- d"}, {FBW_TOK_SPACE, "\n "},     {FBW_TOK_WORD, "FROM"},
        {FBW_TOK_SPACE, " "},      {FBW_TOK_WORD, "t"},        {FBW_TOK_PUNCT, ";"},
    };
    size_t nw = sizeof want / sizeof want[0];
    cr_assert_eq((size_t)r.n, nw);
    for (size_t i = 0; i < nw; i++)
        expect_tok(s, &r.t[i], want[i].kind, want[i].text);
    for (int i = 0; i < r.n; i++)
        cr_expect_eq(r.t[i].open, 0);
}

/* What the splitter knew: q-strings with each bracket, and q inside a word is no q-string. */
Test(sqltok, q_strings)
{
    const char *s = "q'{a;'b}' Q'(x)' q'[y]' q'<z>' q'!x;y!' seq'x'";
    toks r = lex0(s);
    cr_assert_eq(r.n, 7);
    expect_tok(s, &r.t[0], FBW_TOK_STRING, "q'{a;'b}'");
    expect_tok(s, &r.t[1], FBW_TOK_STRING, "Q'(x)'");
    expect_tok(s, &r.t[2], FBW_TOK_STRING, "q'[y]'");
    expect_tok(s, &r.t[3], FBW_TOK_STRING, "q'<z>'");
    expect_tok(s, &r.t[4], FBW_TOK_STRING, "q'!x;y!'");
    expect_tok(s, &r.t[5], FBW_TOK_WORD, "seq");
    expect_tok(s, &r.t[6], FBW_TOK_STRING, "'x'");
}

/* Markers inside quotes and comments are text: no placeholder, comment or terminator there. */
Test(sqltok, markers_inside_quotes_and_comments)
{
    const char *s = "SELECT '?', \"?\", '--;', '/*;' FROM t /* ? ; */ WHERE a=? -- ? ;\n AND b IN (?, ?)";
    toks r = lex(s, strlen(s), ";", 0);
    int params = 0, terms = 0;
    for (int i = 0; i < r.n; i++) {
        params += r.t[i].kind == FBW_TOK_PARAM;
        terms += r.t[i].kind == FBW_TOK_TERM;
    }
    cr_expect_eq(params, 3);
    cr_expect_eq(terms, 0);
}

/* SET TERM terminators: any bytes, found even inside a word or number, never inside quotes. */
Test(sqltok, terminators)
{
    const char *s = "end^ 'a^b' x!!y 1234567890123456";
    toks r = lex(s, strlen(s), "^", 0);
    cr_assert_eq(r.n, 8);
    expect_tok(s, &r.t[0], FBW_TOK_WORD, "end");
    expect_tok(s, &r.t[1], FBW_TOK_TERM, "^");
    expect_tok(s, &r.t[2], FBW_TOK_STRING, "'a^b'");
    r = lex(s, strlen(s), "!!", 0);
    expect_tok(s, &r.t[3], FBW_TOK_WORD, "x");
    expect_tok(s, &r.t[4], FBW_TOK_TERM, "!!");
    expect_tok(s, &r.t[5], FBW_TOK_WORD, "y");
    r = lex(s, strlen(s), "1234567890123456", 0);
    expect_tok(s, &r.t[r.n - 1], FBW_TOK_TERM, "1234567890123456");
    const char *g = "ALGO x"; /* a terminator made of letters still ends a word */
    r = lex(g, strlen(g), "GO", 0);
    cr_assert_eq(r.n, 3);
    expect_tok(g, &r.t[0], FBW_TOK_WORD, "AL");
    expect_tok(g, &r.t[1], FBW_TOK_TERM, "GO");
    /* A comment wins over a terminator that looks like one. */
    r = lex("a -- x\n", 7, "--", 0);
    cr_expect_eq(r.n, 1);
}

Test(sqltok, unclosed_at_the_end)
{
    const char *cases[] = {"SELECT 'abc", "SELECT 'it''", "SELECT \"abc", "x /* open",
                           "x /*", "x /*/", "q'{abc", "q'", "x '"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *s = cases[i];
        toks r = lex(s, strlen(s), NULL, 1);
        cr_assert_gt(r.n, 0);
        cr_expect_eq(r.t[r.n - 1].open, 1, "%s", s);
        cr_expect_eq(r.t[r.n - 1].e, strlen(s), "%s", s);
    }
    /* A line comment needs no newline. */
    toks r = lex("x -- c", 6, NULL, 1);
    cr_expect_eq(r.t[r.n - 1].kind, FBW_TOK_COMMENT);
    cr_expect_eq(r.t[r.n - 1].open, 0);
}

Test(sqltok, empty_and_only_comments)
{
    cr_expect_eq(lex0("").n, 0);
    cr_expect_eq(lex(NULL, 0, NULL, 1).n, 0);
    cr_expect_eq(lex0("  -- a\n /* b */\t\r\n").n, 0);
    fbw_sqltok t;
    fbw_sqltok_init(&t, NULL, 0);
    cr_expect_eq(fbw_sqltok_next(&t).kind, FBW_TOK_END);
    cr_expect(fbw_sqltok_at_end(&t));
    fbw_sqltok_init(&t, " -- x\n ; /* y */", 16);
    cr_expect(fbw_sqltok_at_end(&t), "one ';' and comments");
    fbw_sqltok_init(&t, " ; ;", 4);
    cr_expect(!fbw_sqltok_at_end(&t), "two ';'");
    cr_expect_eq(fbw_sql_skip_blank(" /* a */ -- b\n x", 16, 0), 15);
    cr_expect_eq(fbw_sql_skip_blank("  ", 2, 0), 2);
}

/* NUL is a byte like any other: punctuation outside quotes, text inside. */
Test(sqltok, nul_bytes)
{
    const char s[] = {'a', '\0', 'b', ' ', '\'', 'x', '\0', 'y', '\'', '\0'};
    toks r = lex(s, sizeof s, NULL, 0);
    cr_assert_eq(r.n, 5);
    expect_tok(s, &r.t[0], FBW_TOK_WORD, "a");
    cr_expect_eq(r.t[1].kind, FBW_TOK_PUNCT);
    cr_expect_eq(r.t[3].kind, FBW_TOK_STRING);
    cr_expect_eq(r.t[3].e - r.t[3].b, 5);
    cr_expect_eq(r.t[4].kind, FBW_TOK_PUNCT);
}

/* The length bounds the text, and every prefix is read within it (exact-size copies: an ASan
 * build sees any over-read). */
Test(sqltok, every_prefix)
{
    const char *text = "set term ^ ;\ncreate procedure p as begin /* ; */ exit; end^\n"
                       "insert into t values ('a''b', q'[x]', \"c\"\"d\", ?, 1.5); -- x\nselect 1";
    size_t n = strlen(text);
    for (size_t k = 0; k <= n; k++) {
        char *copy = malloc(k ? k : 1);
        cr_assert_not_null(copy);
        memcpy(copy, text, k);
        for (int term = 0; term < 2; term++) {
            toks r = lex(copy, k, term ? "^" : NULL, 1);
            size_t covered = 0;
            for (int i = 0; i < r.n; i++) {
                cr_assert_eq(r.t[i].b, covered, "raw tokens cover the text");
                covered = r.t[i].e;
            }
            cr_assert_eq(covered, k);
        }
        (void)fbw_sql_stmt_kind(copy, k, NULL);
        free(copy);
    }
    cr_expect_eq(fbw_sql_stmt_kind("COMMIT garbage", 6, NULL), FBW_STMT_COMMIT);
    cr_expect_eq(fbw_sql_stmt_kind("COMMIT garbage", 3, NULL), FBW_STMT_OTHER);
}

/* One long statement: a 1 MiB literal, 64 Ki words and an unclosed comment, in linear time. */
Test(sqltok, long_input, .timeout = 20)
{
    size_t n = 3u << 20;
    char *s = malloc(n);
    cr_assert_not_null(s);
    size_t i = 0;
    memcpy(s + i, "INSERT INTO t VALUES ('", 23);
    i += 23;
    memset(s + i, 'x', 1u << 20);
    i += 1u << 20;
    memcpy(s + i, "'), (", 5);
    i += 5;
    while (i + 8 < n - (1u << 20)) {
        memcpy(s + i, "abc, 12 ", 8);
        i += 8;
    }
    memcpy(s + i, ") /*", 4);
    i += 4;
    memset(s + i, ' ', n - i);
    cr_expect_eq(fbw_sql_stmt_kind(s, n, NULL), FBW_STMT_BULK_INSERT);
    fbw_sqltok t;
    fbw_sqltok_init(&t, s, n);
    size_t count = 0;
    fbw_tok k, last = {FBW_TOK_END, 0, 0, 0};
    while ((k = fbw_sqltok_next(&t)).kind != FBW_TOK_END) {
        count++;
        last = k;
    }
    cr_expect_gt(count, 200000);
    cr_expect_eq(last.kind, FBW_TOK_PUNCT, "the comment is skipped, open, to the end");
    fbw_sqltok_init(&t, s, n);
    t.pos = i - 2;
    k = fbw_sqltok_raw(&t);
    cr_expect_eq(k.kind, FBW_TOK_COMMENT);
    cr_expect(k.open);
    cr_expect_eq(k.e, n);
    free(s);
}

typedef struct kind_case {
    const char *sql;
    fbw_stmt_kind kind;
} kind_case;

static void expect_kinds(const kind_case *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(fbw_sql_stmt_kind(c[i].sql, strlen(c[i].sql), NULL), c[i].kind, "%s",
                     c[i].sql);
}

#define EXPECT_KINDS(cases) expect_kinds(cases, sizeof cases / sizeof cases[0])

/* The cases the dialect's and the report's rules each knew, now one rule. */
Test(sqlkind, transaction_control)
{
    static const kind_case cases[] = {
        {"BEGIN", FBW_STMT_BEGIN},
        {"  begin work ;  ", FBW_STMT_BEGIN},
        {"BEGIN TRANSACTION", FBW_STMT_BEGIN},
        {"/* c */ START TRANSACTION", FBW_STMT_BEGIN},
        {"COMMIT", FBW_STMT_COMMIT},
        {"commit WORK", FBW_STMT_COMMIT},
        {"-- x\nROLLBACK;", FBW_STMT_ROLLBACK},
        {"rollback work", FBW_STMT_ROLLBACK},
        {"ROLLBACK TO SAVEPOINT s1", FBW_STMT_OTHER},
        {"COMMIT RETAIN", FBW_STMT_OTHER},
        {"BEGINNING", FBW_STMT_OTHER},
        {"START", FBW_STMT_OTHER},
        {"START something", FBW_STMT_OTHER},
        {"BEGIN; BEGIN", FBW_STMT_OTHER},
        {"EXECUTE BLOCK AS BEGIN END", FBW_STMT_OTHER},
    };
    EXPECT_KINDS(cases);
}

Test(sqlkind, statements)
{
    static const kind_case cases[] = {
        {"SELECT c FROM sbtest1 WHERE id=?", FBW_STMT_SELECT},
        {"(SELECT c FROM t WHERE id=1)", FBW_STMT_SELECT},
        {"WITH x AS (SELECT 1 FROM t) SELECT * FROM x", FBW_STMT_SELECT},
        {"UPDATE sbtest1 SET k=k+1 WHERE id=?", FBW_STMT_UPDATE},
        {"DELETE FROM sbtest1 WHERE id=?", FBW_STMT_DELETE},
        {"CREATE TABLE sbtest1(id INTEGER NOT NULL, PRIMARY KEY (id))", FBW_STMT_DDL},
        {"DROP TABLE IF EXISTS sbtest1", FBW_STMT_DDL},
        {"CREATE INDEX k_1 ON sbtest1(k)", FBW_STMT_DDL},
        {"set generator g to 1", FBW_STMT_DDL},
        {"SET TRANSACTION READ ONLY", FBW_STMT_OTHER},
        {"\"SELECT\" x", FBW_STMT_OTHER},
        {"'COMMIT'", FBW_STMT_OTHER},
        {"", FBW_STMT_OTHER},
        {"   ", FBW_STMT_OTHER},
    };
    EXPECT_KINDS(cases);
    cr_expect_eq(fbw_sql_stmt_kind(NULL, 5, NULL), FBW_STMT_OTHER);
    size_t body = 99;
    cr_expect_eq(fbw_sql_stmt_kind(" ( select 1", 11, &body), FBW_STMT_SELECT);
    cr_expect_eq(body, 9, "just past SELECT");
    cr_expect_eq(fbw_sql_stmt_kind("x", 1, &body), FBW_STMT_OTHER);
    cr_expect_eq(body, 0);
}

Test(sqlkind, inserts)
{
    static const kind_case cases[] = {
        {"INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)", FBW_STMT_INSERT},
        {"INSERT INTO t (a) VALUES ('x,(y)')", FBW_STMT_INSERT},
        {"INSERT INTO t VALUES ('a),(b')", FBW_STMT_INSERT},
        {"INSERT INTO t VALUES ('it''s', (1))", FBW_STMT_INSERT},
        {"INSERT INTO t (a) SELECT a FROM u", FBW_STMT_INSERT},
        {"INSERT INTO t(\"VALUES\") VALUES (1)", FBW_STMT_INSERT},
        {"INSERT INTO sbtest2 VALUES(1,1),(2,2)", FBW_STMT_BULK_INSERT},
        {"insert into t(k, c) values (1, 'a'), (2, 'b')", FBW_STMT_BULK_INSERT},
        {"INSERT INTO t VALUES (1) /* , */ , -- x\n (2)", FBW_STMT_BULK_INSERT},
        {"INSERT INTO t VALUES (1), 'x'", FBW_STMT_INSERT},
        {"INSERT INTO t VALUES ((1)", FBW_STMT_INSERT},
    };
    EXPECT_KINDS(cases);
    size_t b = 0, e = 0;
    const char *s = "INSERT INTO t(\"values\", v) /* values */ VALUES (1)";
    cr_assert(fbw_sql_find_values(s, strlen(s), &b, &e));
    cr_expect_eq(b, strlen("INSERT INTO t(\"values\", v) /* values */ "));
    cr_expect_eq(e - b, 6);
    cr_expect(!fbw_sql_find_values("INSERT INTO t SELECT 'VALUES'", 29, &b, &e));
}

Test(sqltok, keywords_and_chars)
{
    const char *s = "select Sel ?";
    fbw_sqltok t;
    fbw_sqltok_init(&t, s, strlen(s));
    cr_expect(fbw_sqltok_accept(&t, "SELECT"));
    cr_expect(!fbw_sqltok_accept(&t, "SELECT"), "SEL is not SELECT");
    fbw_tok k = fbw_sqltok_next(&t);
    cr_expect(fbw_tok_is(&t, &k, "SEL"));
    k = fbw_sqltok_peek(&t);
    cr_expect(fbw_tok_is_char(&t, &k, '?'));
    cr_expect(!fbw_tok_is(&t, &k, "?"));
    cr_expect_eq(fbw_sqltok_next(&t).kind, FBW_TOK_PARAM);
    cr_expect_eq(fbw_sqltok_next(&t).kind, FBW_TOK_END);
    cr_expect_eq(fbw_sqltok_next(&t).kind, FBW_TOK_END, "END again at the end");
}
