/* SPDX-License-Identifier: MIT */
/* test_plugins.c - plugin table, instance life cycle, login normalization (dpbItemUpper rule of
 * FB 3.0.10+/4.0.2+, docs/protocol/auth.md §8) and plugin-list parsing/formatting. */
#include <criterion/criterion.h>

#include "auth.h"

#include <string.h>

/* ---- login normalization ----------------------------------------------------------------- */

static void norm_ok(const char *in, const char *want)
{
    char out[64];
    fbw_err err;
    int rc = fbw_auth_normalize_login(in, out, sizeof out, &err);
    cr_assert_eq(rc, FBW_OK, "login [%s]: %s", in, err.msg);
    cr_expect_str_eq(out, want, "login [%s]", in);
}

static void norm_bad(const char *in, const char *needle)
{
    char out[64];
    fbw_err err;
    int rc = fbw_auth_normalize_login(in, out, sizeof out, &err);
    cr_expect_eq(rc, FBW_E_USAGE, "login [%s] accepted", in);
    cr_expect_eq(err.code, FBW_E_USAGE);
    cr_expect(strstr(err.msg, needle) != NULL, "'%s' not in: %s", needle, err.msg);
}

Test(plugins, normalize_unquoted)
{
    norm_ok("sysdba", "SYSDBA");
    norm_ok("SysDba", "SYSDBA");
    norm_ok("_a$1b", "_A$1B");
    norm_ok("$x", "$X");
    norm_ok("", "");
    /* not an identifier: left exactly as typed */
    norm_ok("john.doe", "john.doe");
    norm_ok("john-doe", "john-doe");
    norm_ok("a b", "a b");
    norm_ok("1abc", "1abc");       /* digit first */
    norm_ok("abc1", "ABC1");       /* digit later is fine */
    norm_ok("j\xc3\xbcrgen", "j\xc3\xbcrgen");
    norm_ok("ab\"c", "ab\"c");     /* a quote not at the start is just a character */
}

Test(plugins, normalize_double_quoted)
{
    norm_ok("\"Mixed\"", "Mixed");
    norm_ok("\"john.doe\"", "john.doe");
    norm_ok("\"a\"\"b\"", "a\"b");
    norm_ok("\"\"\"\"", "\"");
    norm_ok("\"\"", "");
    norm_ok("\"it's\"", "it's");
    norm_ok("\"lower\"", "lower"); /* double quotes keep the case */
}

Test(plugins, normalize_single_quoted)
{
    norm_ok("'abc'", "ABC");       /* identifier characters only: upper-cased */
    norm_ok("'a.b'", "a.b");       /* otherwise kept */
    norm_ok("'1ab'", "1ab");       /* digit first (position 1 in the input) */
    norm_ok("'a''b'", "A'B");      /* Firebird does not check the escaped quote itself */
    norm_ok("'Say \"hi\"'", "Say \"hi\"");
    norm_ok("'j\xc3\xbcrgen'", "j\xc3\xbcrgen");
}

Test(plugins, normalize_errors)
{
    norm_bad("\"", "missing closing quote");
    norm_bad("'", "missing closing quote");
    norm_bad("\"abc", "missing closing quote");
    norm_bad("\"ab\"\"", "missing closing quote");
    norm_bad("\"abc\"x", "after the closing quote");
    norm_bad("'abc'd'", "after the closing quote");
    norm_bad("\"abc\" ", "after the closing quote");
    char out[4];
    fbw_err err;
    cr_expect_eq(fbw_auth_normalize_login("abcd", out, sizeof out, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_normalize_login("abc", out, sizeof out, &err), FBW_OK);
    cr_expect_str_eq(out, "ABC");
    cr_expect_eq(fbw_auth_normalize_login("\"abcd\"", out, sizeof out, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_normalize_login("\"abc\"", out, sizeof out, &err), FBW_OK);
    cr_expect_str_eq(out, "abc");
    cr_expect_eq(fbw_auth_normalize_login(NULL, out, sizeof out, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_normalize_login("a", NULL, 0, &err), FBW_E_USAGE);
}

/* ---- instances ----------------------------------------------------------------------------- */

Test(plugins, new_names)
{
    static const char *names[][2] = {{"Srp", "Srp"},       {"Srp256", "Srp256"},
                                     {"srp256", "Srp256"}, {"SRP224", "Srp224"},
                                     {"Srp384", "Srp384"}, {"Srp512", "Srp512"},
                                     {"LEGACY_AUTH", "Legacy_Auth"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        fbw_auth *a = NULL;
        fbw_err err;
        cr_assert_eq(fbw_auth_new(names[i][0], "john.doe", "pw", &a, &err), FBW_OK, "%s",
                     err.msg);
        cr_expect_str_eq(fbw_auth_name(a), names[i][1]);
        cr_expect_str_eq(fbw_auth_login(a), "john.doe");
        cr_expect_not(fbw_auth_done(a));
        fbw_auth_free(a);
    }
    fbw_auth_free(NULL);
}

Test(plugins, new_errors)
{
    fbw_auth *a = (fbw_auth *)&a;
    fbw_err err;
    char big[FBW_AUTH_PASSWORD_MAX + 2];
    cr_expect_eq(fbw_auth_new("Win_Sspi", "u", "p", &a, &err), FBW_E_UNSUPPORTED);
    cr_expect(strstr(err.msg, "Win_Sspi") != NULL, "%s", err.msg);
    cr_expect_null(a);
    cr_expect_eq(fbw_auth_new("Srp25", "u", "p", &a, &err), FBW_E_UNSUPPORTED);
    cr_expect_eq(fbw_auth_new("", "u", "p", &a, &err), FBW_E_UNSUPPORTED);
    cr_expect_eq(fbw_auth_new(NULL, "u", "p", &a, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_new("Srp", NULL, "p", &a, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_new("Srp", "u", NULL, &a, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_new("Srp", "", "p", &a, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_new("Srp", "\"\"", "p", &a, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_new("Srp", "\"abc", "p", &a, &err), FBW_E_USAGE);
    cr_expect(strstr(err.msg, "quote") != NULL, "%s", err.msg);
    memset(big, 'p', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    cr_expect_eq(fbw_auth_new("Srp", "u", big, &a, &err), FBW_E_USAGE);
    cr_expect(strstr(err.msg, "ppp") == NULL);
    big[FBW_AUTH_PASSWORD_MAX] = '\0';
    cr_expect_eq(fbw_auth_new("Srp", "u", big, &a, &err), FBW_OK);
    fbw_auth_free(a);
    cr_expect_eq(fbw_auth_new("Srp", big, "p", &a, &err), FBW_E_USAGE); /* login too long */
    cr_expect_eq(fbw_auth_new("Srp", "u", "", &a, &err), FBW_OK);       /* empty password ok */
    fbw_auth_free(a);
}

Test(plugins, step_argument_checks)
{
    fbw_auth *a = NULL;
    fbw_err err;
    const uint8_t *out;
    size_t out_len;
    cr_assert_eq(fbw_auth_new("Srp", "u", "p", &a, &err), FBW_OK);
    cr_expect_eq(fbw_auth_step(NULL, NULL, 0, &out, &out_len, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_step(a, NULL, 5, &out, &out_len, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_step(a, NULL, 0, NULL, &out_len, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_step(a, NULL, 0, &out, &out_len, NULL), FBW_OK); /* err optional */
    cr_expect_eq(fbw_auth_step(a, NULL, 0, &out, &out_len, NULL), FBW_E_AUTH); /* empty data */
    cr_expect_eq(fbw_auth_step(a, NULL, 0, &out, &out_len, &err), FBW_E_AUTH);
    cr_expect_eq(fbw_auth_session_key(NULL, &out, &out_len, &err), FBW_E_USAGE);
    fbw_auth_free(a);
}

/* ---- plugin lists -------------------------------------------------------------------------- */

static void list_ok(const char *text, const char *formatted)
{
    fbw_auth_list l;
    fbw_err err;
    char out[128];
    cr_assert_eq(fbw_auth_list_parse(text, &l, &err), FBW_OK, "[%s]: %s", text ? text : "NULL",
                 err.msg);
    int n = fbw_auth_list_format(&l, out, sizeof out);
    cr_assert_eq(n, (int)strlen(formatted));
    cr_expect_str_eq(out, formatted);
    /* the formatted text parses back to the same list */
    fbw_auth_list again;
    cr_assert_eq(fbw_auth_list_parse(out, &again, &err), FBW_OK);
    cr_expect_eq(again.n, l.n);
    for (int i = 0; i < l.n; i++)
        cr_expect_str_eq(again.name[i], l.name[i]);
}

Test(plugins, list_parse_and_format)
{
    list_ok(NULL, "Srp256, Srp");
    list_ok(FBW_AUTH_DEFAULT_LIST, "Srp256, Srp");
    list_ok("Srp256, Srp", "Srp256, Srp");
    list_ok(" ;Srp,,\tLegacy_Auth; ", "Srp, Legacy_Auth");
    list_ok("srp256 SRP", "Srp256, Srp");
    list_ok("Srp Srp SRP srp", "Srp");
    list_ok("Srp512;Srp384;Srp256;Srp224;Srp;Legacy_Auth",
            "Srp512, Srp384, Srp256, Srp224, Srp, Legacy_Auth");
}

Test(plugins, list_errors)
{
    fbw_auth_list l;
    fbw_err err;
    cr_expect_eq(fbw_auth_list_parse("Srp,Foo", &l, &err), FBW_E_USAGE);
    cr_expect(strstr(err.msg, "\"Foo\"") != NULL, "%s", err.msg);
    cr_expect_eq(fbw_auth_list_parse("Srp256x", &l, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_list_parse("Win_Sspi", &l, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_list_parse("", &l, &err), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_list_parse(" , ;\t", &l, &err), FBW_E_USAGE);
    cr_expect(strstr(err.msg, "empty") != NULL, "%s", err.msg);
    cr_expect_eq(fbw_auth_list_parse("Srp", NULL, &err), FBW_E_USAGE);
}

Test(plugins, list_contains_is_case_sensitive)
{
    fbw_auth_list l;
    fbw_err err;
    cr_assert_eq(fbw_auth_list_parse("srp256, legacy_auth", &l, &err), FBW_OK);
    cr_expect(fbw_auth_list_contains(&l, "Srp256"));
    cr_expect(fbw_auth_list_contains(&l, "Legacy_Auth"));
    cr_expect_not(fbw_auth_list_contains(&l, "srp256"));
    cr_expect_not(fbw_auth_list_contains(&l, "Srp"));
    cr_expect_not(fbw_auth_list_contains(&l, "Srp2"));
    cr_expect_not(fbw_auth_list_contains(NULL, "Srp"));
    cr_expect_not(fbw_auth_list_contains(&l, NULL));
}

Test(plugins, list_default_has_no_legacy)
{
    fbw_auth_list l;
    fbw_err err;
    cr_assert_eq(fbw_auth_list_parse(NULL, &l, &err), FBW_OK);
    cr_expect_not(fbw_auth_list_contains(&l, "Legacy_Auth"));
    cr_expect_eq(l.n, 2);
}

Test(plugins, list_format_buffer_sizes)
{
    fbw_auth_list l;
    fbw_err err;
    char out[12];
    cr_assert_eq(fbw_auth_list_parse("Srp256,Srp", &l, &err), FBW_OK);
    cr_expect_eq(fbw_auth_list_format(&l, out, 12), 11); /* "Srp256, Srp" + NUL */
    cr_expect_str_eq(out, "Srp256, Srp");
    cr_expect_eq(fbw_auth_list_format(&l, out, 11), FBW_E_USAGE);
    cr_expect_eq(fbw_auth_list_format(&l, out, 0), FBW_E_USAGE);
    l.n = FBW_AUTH_MAX_PLUGINS + 1;
    cr_expect_eq(fbw_auth_list_format(&l, out, sizeof out), FBW_E_USAGE);
}
