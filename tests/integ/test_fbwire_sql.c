/* SPDX-License-Identifier: MIT */
/* test_fbwire_sql.c - the built fbwire-sql program, run as a user would (popen) against the real
 * servers: `--info` output keys and values, error exits with the server's message and SQLSTATE,
 * and that the password is printed in no case. */
#include <criterion/criterion.h>

#include "run_tool.h"
#include "servers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef FBWIRE_BINARY_DIR
#define FBWIRE_BINARY_DIR "."
#endif

#define TOOL FBWIRE_BINARY_DIR "/tools/fbwire-sql"
#define OUT_MAX 65536

typedef fbw_run run_result;

static run_result run_tool(const char *const *argv) { return fbw_run_tool(TOOL, argv, NULL, OUT_MAX); }
static void run_free(run_result *r) { fbw_run_free(r); }

/* Value of "key: value" in the tool's output, copied into v; 0 when the key is missing. */
static int value_of(const char *out, const char *key, char *v, size_t size)
{
    size_t k = strlen(key);
    for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, key, k) == 0 && line[k] == ':' && line[k + 1] == ' ') {
            const char *s = line + k + 2;
            size_t len = strcspn(s, "\n");
            if (len >= size)
                len = size - 1;
            memcpy(v, s, len);
            v[len] = 0;
            return 1;
        }
    }
    return 0;
}

static long long number_of(const char *out, const char *key)
{
    char v[64];
    cr_assert(value_of(out, key, v, sizeof v), "key \"%s\" missing in:\n%s", key, out);
    char *end;
    long long x = strtoll(v, &end, 10);
    cr_assert(*v && !*end && x >= 0, "%s: \"%s\" is not a count", key, v);
    return x;
}

static void expect_no_secret(const run_result *r, const char *pw)
{
    cr_expect(!strstr(r->out, pw), "the password is on stdout");
    cr_expect(!strstr(r->err, pw), "the password is on stderr");
}

/* --info on one server: every key, values consistent with what the server is. */
static void info_on(fbw_server_id id, const char *crypt)
{
    fbw_servers s;
    fbw_servers_require(&s);
    /* what the server in the slot is (the fb4 slot may hold fb5, fb6: on-server.sh) */
    char version[32];
    fbw_servers_version_tag(&s, id, version, sizeof version);
    int protocol = fbw_servers_protocol_max(&s, id);
    /* fbwire-sql offers up to 20 (FBW_PROTOCOL_MAX), the highest any server speaks */
    char dsn[1400];
    const char *argv[] = {"--info", "--user", s.user, "--password", s.password, "--connect-timeout", "5",
                          fbw_servers_dsn(&s, id, dsn, sizeof dsn), NULL};
    run_result r = run_tool(argv);
    cr_assert_eq(r.status, 0, "exit %d, stderr:\n%s", r.status, r.err);
    expect_no_secret(&r, s.password);
    const char *keys[] = {"server_version", "protocol",     "auth_plugin",      "wire_crypt",
                          "compression",    "round_trips",  "packets_sent",     "packets_received",
                          "bytes_sent",     "bytes_received"};
    char v[300];
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_expect(value_of(r.out, keys[i], v, sizeof v), "key %s missing in:\n%s", keys[i], r.out);
    cr_assert(value_of(r.out, "server_version", v, sizeof v));
    cr_expect(strstr(v, version) != NULL, "server_version \"%s\", expected %s", v, version);
    cr_expect_eq(number_of(r.out, "protocol"), protocol);
    cr_assert(value_of(r.out, "auth_plugin", v, sizeof v));
    cr_expect_str_eq(v, "Srp256");
    cr_assert(value_of(r.out, "wire_crypt", v, sizeof v));
    cr_expect_str_eq(v, crypt);
    cr_assert(value_of(r.out, "compression", v, sizeof v));
    cr_expect_str_eq(v, "none");
    /* flow A with crypt (see test_connect.c round_trips): 4 trips to attach, + info + detach */
    cr_expect_eq(number_of(r.out, "round_trips"), 6);
    cr_expect_eq(number_of(r.out, "packets_sent"), 7, "op_connect, op_cont_auth, op_crypt, "
                                                        "op_attach, op_info_database, op_detach, "
                                                        "op_disconnect");
    cr_expect_eq(number_of(r.out, "packets_received"), 6);
    /* each packet is at least its 4-byte op code; the whole session fits in a few KiB */
    long long bs = number_of(r.out, "bytes_sent"), br = number_of(r.out, "bytes_received");
    cr_expect(bs >= 7 * 4 && bs < 4096, "bytes_sent %lld", bs);
    cr_expect(br >= 6 * 4 && br < 4096, "bytes_received %lld", br);
    cr_expect_eq(bs % 4, 0, "XDR is 4-byte aligned: bytes_sent %lld", bs);
    cr_expect_eq(br % 4, 0, "XDR is 4-byte aligned: bytes_received %lld", br);
    fprintf(stderr, "%s --info: %lld round trips, %lld/%lld packets, %lld/%lld bytes sent/received\n",
            fbw_server_name(id), number_of(r.out, "round_trips"), number_of(r.out, "packets_sent"),
            number_of(r.out, "packets_received"), bs, br);
    run_free(&r);
}

Test(fbwire_sql, info_fb3, .timeout = 60)
{
    info_on(FBW_SRV_FB3, "Arc4");
}

Test(fbwire_sql, info_fb4, .timeout = 60)
{
    info_on(FBW_SRV_FB4, "ChaCha64");
}

Test(fbwire_sql, info_compressed, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    char dsn[1400];
    const char *argv[] = {"--info", "--compress", "--user", s.user, "--password", s.password,
                          fbw_servers_dsn(&s, FBW_SRV_FB4, dsn, sizeof dsn), NULL};
    run_result r = run_tool(argv);
    cr_assert_eq(r.status, 0, "exit %d, stderr:\n%s", r.status, r.err);
    char v[64];
    cr_assert(value_of(r.out, "compression", v, sizeof v), "no compression key in:\n%s", r.out);
    cr_expect_str_eq(v, "zlib");
    cr_expect_lt(number_of(r.out, "wire_bytes_received"), number_of(r.out, "bytes_received"));
    expect_no_secret(&r, s.password);
    run_free(&r);
}

/* Run, expect a non-zero exit, and every needle on stderr. */
static void expect_failure(const char *const *argv, const char *pw, const char *const *needles)
{
    run_result r = run_tool(argv);
    cr_expect_neq(r.status, 0, "exit 0 for a failure; stdout:\n%s", r.out);
    cr_expect_lt(r.status, 128, "killed by a signal (%d)", r.status - 128);
    for (int i = 0; needles[i]; i++)
        cr_expect(strstr(r.err, needles[i]) != NULL, "\"%s\" not on stderr:\n%s", needles[i], r.err);
    expect_no_secret(&r, pw);
    run_free(&r);
}

Test(fbwire_sql, wrong_password, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    const fbw_server_id ids[] = {FBW_SRV_FB3, FBW_SRV_FB4};
    for (size_t i = 0; i < 2; i++) {
        char dsn[1400];
        const char *pw = "wrong-Pw-9917q";
        const char *argv[] = {"--info", "--user", s.user, "--password", pw,
                              fbw_servers_dsn(&s, ids[i], dsn, sizeof dsn), NULL};
        const char *needles[] = {"user name and password are not defined", "SQLSTATE = 28000",
                                 "335544472", NULL};
        expect_failure(argv, pw, needles);
    }
}

Test(fbwire_sql, unknown_user, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    char dsn[1400];
    const char *argv[] = {"--info", "--user", "NO_SUCH_USER_FBW", "--password", s.password,
                          fbw_servers_dsn(&s, FBW_SRV_FB4, dsn, sizeof dsn), NULL};
    const char *needles[] = {"user name and password are not defined", "SQLSTATE = 28000", NULL};
    expect_failure(argv, s.password, needles);
}

Test(fbwire_sql, missing_database, .timeout = 60)
{
    fbw_servers s;
    fbw_servers_require(&s);
    char dsn[1400];
    const char *path = "/nonexistent-fbwire-dir/missing.fdb";
    snprintf(dsn, sizeof dsn, "%s/%d:%s", s.srv[FBW_SRV_FB3].host, s.srv[FBW_SRV_FB3].port, path);
    const char *argv[] = {"--info", "--user", s.user, "--password", s.password, dsn, NULL};
    const char *needles[] = {path, "I/O error", "SQLSTATE = 08001", "335544344", NULL};
    expect_failure(argv, s.password, needles);
}

Test(fbwire_sql, nothing_listening, .timeout = 30)
{
    fbw_servers s;
    fbw_servers_require(&s);
    char dsn[256];
    snprintf(dsn, sizeof dsn, "127.0.0.1/%d:/tmp/x.fdb", fbw_servers_closed_port());
    const char *argv[] = {"--info", "--user", s.user, "--password", s.password, dsn, NULL};
    const char *needles[] = {"refused", NULL};
    expect_failure(argv, s.password, needles);
}

Test(fbwire_sql, silent_server_times_out, .timeout = 30)
{
    fbw_servers s;
    fbw_servers_require(&s);
    int port;
    int lfd = fbw_servers_silent_listener(&port);
    char dsn[256];
    snprintf(dsn, sizeof dsn, "127.0.0.1/%d:/tmp/x.fdb", port);
    const char *argv[] = {"--info", "--connect-timeout", "1", "--user", s.user, "--password", s.password,
                          dsn, NULL};
    run_result r = run_tool(argv);
    cr_expect_neq(r.status, 0);
    cr_expect(strstr(r.err, "timed out") != NULL, "stderr:\n%s", r.err);
    cr_expect_lt(r.seconds, 1.0 + 2.0, "took %.3f s with --connect-timeout 1", r.seconds);
    cr_expect_geq(r.seconds, 0.9, "gave up after %.3f s", r.seconds);
    expect_no_secret(&r, s.password);
    run_free(&r);
    close(lfd);
}

Test(fbwire_sql, bad_usage_exits_2, .timeout = 30)
{
    const char *argv[] = {"--info", "--protocol-max", "99", "--password", "usage-secret-1", "x:y", NULL};
    run_result r = run_tool(argv);
    cr_expect_eq(r.status, 2, "exit %d", r.status);
    cr_expect(strstr(r.err, "--protocol-max") != NULL, "stderr:\n%s", r.err);
    expect_no_secret(&r, "usage-secret-1");
    run_free(&r);
}
