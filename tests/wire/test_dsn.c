/* SPDX-License-Identifier: MIT */
/* test_dsn.c - connection string forms from doc/README.connection_strings, plus bad input. */
#include <criterion/criterion.h>

#include "dsn.h"

#include <stdio.h>
#include <string.h>

struct good {
    const char *text, *host, *port, *path;
    int family;
};

static const struct good goods[] = {
    /* legacy host[/port]:path */
    {"192.168.0.11:/db/mydb.fdb", "192.168.0.11", "3050", "/db/mydb.fdb", 0},
    {"192.168.0.11:C:\\db\\mydb.fdb", "192.168.0.11", "3050", "C:\\db\\mydb.fdb", 0},
    {"myserver:mydb", "myserver", "3050", "mydb", 0},
    {"localhost/3051:/db/mydb.fdb", "localhost", "3051", "/db/mydb.fdb", 0},
    {"myserver/fb_db:mydb", "myserver", "fb_db", "mydb", 0},
    {"db.example.org/gds_db:a:b:c", "db.example.org", "gds_db", "a:b:c", 0},
    {"[::1]:employee", "::1", "3050", "employee", 0},
    {"[::1]/3051:/var/db/x.fdb", "::1", "3051", "/var/db/x.fdb", 0},
    {"[fe80::1%eth0]/3052:db", "fe80::1%eth0", "3052", "db", 0},
    {"[localhost]:db", "localhost", "3050", "db", 0},
    {"h/65535:x", "h", "65535", "x", 0},
    /* URL forms */
    {"inet://192.168.0.11//db/mydb.fdb", "192.168.0.11", "3050", "/db/mydb.fdb", 0},
    {"inet://myserver/C:\\db\\mydb.fdb", "myserver", "3050", "C:\\db\\mydb.fdb", 0},
    {"inet://localhost/mydb", "localhost", "3050", "mydb", 0},
    {"inet://myserver:3051//db/mydb.fdb", "myserver", "3051", "/db/mydb.fdb", 0},
    {"inet://192.168.0.11:fb_db/mydb", "192.168.0.11", "fb_db", "mydb", 0},
    {"INET://Server/DB", "Server", "3050", "DB", 0},
    {"inet4://myserver/mydb", "myserver", "3050", "mydb", 4},
    {"inet6://myserver/mydb", "myserver", "3050", "mydb", 6},
    {"inet6://[::1]:3051/employee", "::1", "3051", "employee", 6},
    {"inet://[2001:db8::7]/x/y.fdb", "2001:db8::7", "3050", "x/y.fdb", 0},
    {"inet://h:1/a:b", "h", "1", "a:b", 0},
    /* URL loopback */
    {"inet:///db/mydb.fdb", "localhost", "3050", "/db/mydb.fdb", 0},
    {"inet://C:\\db\\mydb.fdb", "localhost", "3050", "C:\\db\\mydb.fdb", 0},
    {"inet://C:/db/mydb.fdb", "localhost", "3050", "C:/db/mydb.fdb", 0},
    {"inet://mydb", "localhost", "3050", "mydb", 0},
    /* local */
    {"employee", "localhost", "3050", "employee", 0},
    {"/var/db/x.fdb", "localhost", "3050", "/var/db/x.fdb", 0},
    {"/var/db/odd:name.fdb", "localhost", "3050", "/var/db/odd:name.fdb", 0},
    {"C:\\db\\x.fdb", "localhost", "3050", "C:\\db\\x.fdb", 0},
    {"C:/db", "localhost", "3050", "C:/db", 0},
    {"relative/dir/x.fdb", "localhost", "3050", "relative/dir/x.fdb", 0},
};

Test(dsn, accepted_forms)
{
    for (size_t i = 0; i < sizeof goods / sizeof goods[0]; i++) {
        const struct good *g = &goods[i];
        fbw_dsn d;
        fbw_err err;
        fbw_err_clear(&err);
        int rc = fbw_dsn_parse(g->text, &d, &err);
        cr_assert_eq(rc, FBW_OK, "%s: %s", g->text, err.msg);
        cr_expect_str_eq(d.host, g->host, "%s: host", g->text);
        cr_expect_str_eq(d.port, g->port, "%s: port", g->text);
        cr_expect_str_eq(d.path, g->path, "%s: path", g->text);
        cr_expect_eq(d.family, g->family, "%s: family", g->text);
    }
}

static const char *const bads[] = {
    "",
    ":db",              /* no host */
    "host:",            /* no path */
    "host/:db",         /* empty port */
    "host/0:db",        /* port out of range */
    "host/65536:db",    /* port out of range */
    "host/123456:db",   /* too many digits */
    "host/a b:db",      /* space in service */
    "host/a/b:db",      /* '/' in port */
    "ho st:db",         /* space in host */
    "[::1:db",          /* no ']' */
    "[::1]",            /* no path */
    "[]:db",            /* empty address */
    "[::1]x:db",        /* junk after ']' */
    "inet://",          /* nothing */
    "inet://host/",     /* no path */
    "inet://host:/db",  /* empty port */
    "inet://:3050/db",  /* empty host */
    "inet6://::1/db",   /* IPv6 without brackets */
    "inet://[::1/db",   /* no ']' */
    "inet://[::1]x/db", /* junk after ']' */
    "inet://h:99999/db",
};

Test(dsn, rejected_forms)
{
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        fbw_dsn d;
        fbw_err err;
        memset(&d, 'Z', sizeof d);
        fbw_err_clear(&err);
        int rc = fbw_dsn_parse(bads[i], &d, &err);
        cr_expect_eq(rc, FBW_E_USAGE, "\"%s\" gave %s", bads[i], fbw_rc_name(rc));
        cr_expect_eq(err.code, FBW_E_USAGE, "\"%s\"", bads[i]);
        cr_expect(strstr(err.msg, "bad connection string") != NULL, "\"%s\": %s", bads[i], err.msg);
        cr_expect_eq(d.host[0], '\0', "\"%s\": output not cleared", bads[i]);
        cr_expect_eq(d.path[0], '\0', "\"%s\": output not cleared", bads[i]);
    }
}

Test(dsn, message_lists_accepted_forms)
{
    fbw_dsn d;
    fbw_err err;
    cr_assert_eq(fbw_dsn_parse(NULL, &d, &err), FBW_E_USAGE);
    cr_assert(strstr(err.msg, "host[/port]:path") != NULL, "%s", err.msg);
    cr_assert(strstr(err.msg, "inet[4|6]://host[:port]/path") != NULL, "%s", err.msg);
    cr_assert_eq(fbw_dsn_parse("h/1:", &d, NULL), FBW_E_USAGE); /* NULL err is allowed */
}

/* Component at exactly the field limit is fine; one byte more is an error, never truncated. */
static void check_limit(const char *fmt, size_t field_size, const char *what)
{
    char part[1100], text[1200];
    fbw_dsn d;
    fbw_err err;
    for (size_t n = field_size - 1; n <= field_size; n++) {
        memset(part, 'a', n);
        part[n] = '\0';
        snprintf(text, sizeof text, fmt, part);
        int rc = fbw_dsn_parse(text, &d, &err);
        if (n == field_size - 1) {
            cr_assert_eq(rc, FBW_OK, "%s at limit: %s", what, err.msg);
        } else {
            cr_assert_eq(rc, FBW_E_USAGE, "%s over limit", what);
            cr_assert(strstr(err.msg, "too long") != NULL, "%s", err.msg);
            cr_assert(strstr(err.msg, what) != NULL, "%s", err.msg);
        }
    }
}

Test(dsn, overlong_components)
{
    check_limit("%s:db", sizeof((fbw_dsn *)0)->host, "host name");
    check_limit("[%s]:db", sizeof((fbw_dsn *)0)->host, "host name");
    check_limit("inet://%s/db", sizeof((fbw_dsn *)0)->host, "host name");
    check_limit("h/%s:db", sizeof((fbw_dsn *)0)->port, "port or service name");
    check_limit("h:%s", sizeof((fbw_dsn *)0)->path, "database path");
    check_limit("%s", sizeof((fbw_dsn *)0)->path, "database path");
    check_limit("inet://h/%s", sizeof((fbw_dsn *)0)->path, "database path");
}
