/* SPDX-License-Identifier: MIT */
/* test_pcap_keylog.c - fbwire-pcap --keylog: encrypted sessions decoded with their key log line.
 *
 * The recorded captures in pcap/ (pcap/record.sh) ran pcap/session.c with wire crypt Arc4 (FB3),
 * ChaCha64 and ChaCha (FB4), each with and without zlib, and wrote their key log lines next to
 * them. Decrypted, each must decode to the same ops, SQL and round trips after the attach as the
 * same session recorded in clear on that server. A wrong, truncated or mismatched key line is a
 * clear error, never garbage. The live test records an encrypted fbwire session with tcpdump (root)
 * and checks that the key log it wrote (mode 0600) decrypts the capture to the live figures. */
#include "capture.h"
#include "run_tool.h"
#include "servers.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PCAP_DIR FBWIRE_SOURCE_DIR "/pcap"
#define TOOL FBWIRE_BINARY_DIR "/tools/fbwire-pcap"
#define OUT_MAX (4u << 20)

static fbw_run pcap_tool(const char *cmd, const char *file, const char *port, const char *keys,
                         const char *extra)
{
    const char *argv[10];
    int n = 0;
    argv[n++] = cmd;
    if (extra)
        argv[n++] = extra;
    argv[n++] = "--port";
    argv[n++] = port;
    if (keys) {
        argv[n++] = "--keylog";
        argv[n++] = keys;
    }
    argv[n++] = file;
    argv[n] = NULL;
    return fbw_run_tool(TOOL, argv, NULL, OUT_MAX);
}

/* What a session did after its attach, from `dump`: one "DIR op [sql=...]" line per packet, and
 * the round trips (client packets followed by server packets). The connect phase differs between
 * a clear and an encrypted session (op_crypt, the auth ending in op_cont_auth), the rest must not. */
typedef struct body {
    char *text;
    size_t n, cap;
    int trips;
} body;

static void body_add(body *b, const char *p, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->text = realloc(b->text, b->cap);
        cr_assert(b->text);
    }
    memcpy(b->text + b->n, p, n);
    b->n += n;
    b->text[b->n] = 0;
}

static body session_body(const char *dump)
{
    body b = {NULL, 0, 0, 0};
    body_add(&b, "", 0);
    int on = 0, last_client = 0;
    for (const char *line = dump; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char l[8192];
        snprintf(l, sizeof l, "%.*s", (int)(len < sizeof l - 1 ? len : sizeof l - 1), line);
        line = nl ? nl + 1 : NULL;
        if (!on) {
            on = strstr(l, "reply_to=\"op_attach\"") != NULL;
            continue;
        }
        char t[32], conn[16], dir[8], op[48];
        if (sscanf(l, "%31s %15s %7s %47s", t, conn, dir, op) != 4 || !strchr("0123456789", t[0]))
            continue;
        int client = !strcmp(dir, "C>S");
        if (!client && last_client)
            b.trips++;
        last_client = client;
        body_add(&b, dir, strlen(dir));
        body_add(&b, " ", 1);
        body_add(&b, op, strlen(op));
        const char *sql = strstr(l, " sql=\"");
        if (sql)
            body_add(&b, sql, strlen(sql));
        body_add(&b, "\n", 1);
    }
    cr_assert(on, "no reply to op_attach in the dump");
    return b;
}

static body decoded_body(const char *name, const char *port, int with_keys)
{
    char file[512], keys[512];
    snprintf(file, sizeof file, "%s/%s.pcap", PCAP_DIR, name);
    snprintf(keys, sizeof keys, "%s/%s.keys", PCAP_DIR, name);
    fbw_run r = pcap_tool("dump", file, port, with_keys ? keys : NULL, NULL);
    cr_assert_eq(r.status, 0, "%s: exit %d\n%s", name, r.status, r.err);
    cr_assert(!strstr(r.out, "encrypted with"), "%s: still encrypted:\n%s", name, r.out);
    body b = session_body(r.out);
    fbw_run_free(&r);
    return b;
}

static void same_as_clear(const char *name, const char *clear, const char *port,
                          const char *plugin)
{
    body want = decoded_body(clear, port, 0), got = decoded_body(name, port, 1);
    cr_expect_gt(want.trips, 10, "%s: too few round trips to compare", clear);
    cr_expect_eq(got.trips, want.trips, "%s: %d round trips after the attach, %s has %d", name,
                 got.trips, clear, want.trips);
    cr_expect_str_eq(got.text, want.text, "%s: ops or SQL differ from %s", name, clear);
    /* ... and the tool says what it decrypted */
    char file[512], keys[512], want_crypt[64];
    snprintf(file, sizeof file, "%s/%s.pcap", PCAP_DIR, name);
    snprintf(keys, sizeof keys, "%s/%s.keys", PCAP_DIR, name);
    fbw_run r = pcap_tool("stats", file, port, keys, NULL);
    snprintf(want_crypt, sizeof want_crypt, "wire_crypt: %s\nkey_log: line 1\n", plugin);
    cr_expect(strstr(r.out, want_crypt), "%s: stats lacks \"%s\":\n%s", name, want_crypt, r.out);
    cr_expect(strstr(r.out, "total: 1 connections, 0 not decoded to the end"), "%s:\n%s", name,
              r.out);
    fbw_run_free(&r);
    free(want.text);
    free(got.text);
}

Test(keylog, encrypted_sessions_decode_like_clear_ones)
{
    same_as_clear("fb3_script_arc4", "fb3_script", "3050", "Arc4");
    same_as_clear("fb3_script_arc4_zlib", "fb3_script", "3050", "Arc4");
    same_as_clear("fb4_script_chacha64", "fb4_script_zlib", "3051", "ChaCha64");
    same_as_clear("fb4_script_chacha64_zlib", "fb4_script_zlib", "3051", "ChaCha64");
    same_as_clear("fb4_script_chacha", "fb4_script_zlib", "3051", "ChaCha");
    same_as_clear("fb4_script_chacha_zlib", "fb4_script_zlib", "3051", "ChaCha");
}

/* replay rebuilds the same SQL workload from the decrypted capture as from the clear one. */
Test(keylog, replay_lists_the_same_workload)
{
    char clear[512], enc[512], keys[512];
    snprintf(clear, sizeof clear, "%s/fb4_script_zlib.pcap", PCAP_DIR);
    snprintf(enc, sizeof enc, "%s/fb4_script_chacha_zlib.pcap", PCAP_DIR);
    snprintf(keys, sizeof keys, "%s/fb4_script_chacha_zlib.keys", PCAP_DIR);
    fbw_run a = pcap_tool("replay", clear, "3051", NULL, "--list");
    fbw_run b = pcap_tool("replay", enc, "3051", keys, "--list");
    cr_assert_eq(a.status, 0, "%s", a.err);
    cr_assert_eq(b.status, 0, "%s", b.err);
    /* the first line names the client port, which differs */
    const char *sa = strchr(a.out, '\n'), *sb = strchr(b.out, '\n');
    cr_assert(sa && sb);
    cr_expect_str_eq(sb, sa, "replay --list differs");
    cr_expect(strstr(a.out, "prepare s"), "no steps:\n%s", a.out);
    fbw_run_free(&a);
    fbw_run_free(&b);
    fbw_run c = pcap_tool("replay", enc, "3051", NULL, "--list");
    cr_expect_eq(c.status, 1);
    cr_expect(strstr(c.out, "error: the capture is encrypted (wire crypt ChaCha)"), "%s", c.out);
    fbw_run_free(&c);
}

/* ---- bad key lines ---- */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s: %s", path, strerror(errno));
    char *buf = calloc(1, 4096);
    cr_assert(buf);
    size_t n = fread(buf, 1, 4095, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s: %s", path, strerror(errno));
    fputs(text, f);
    fclose(f);
}

/* stats of `name` with a key log whose line was changed by edit(); returns the run. */
static fbw_run with_edited_line(const char *name, const char *port, void (*edit)(char *line))
{
    char src[512], file[512], keys[64] = "/tmp/fbwire-test-keylog.XXXXXX";
    snprintf(src, sizeof src, "%s/%s.keys", PCAP_DIR, name);
    snprintf(file, sizeof file, "%s/%s.pcap", PCAP_DIR, name);
    int fd = mkstemp(keys);
    cr_assert(fd >= 0);
    close(fd);
    char *line = read_text(src);
    edit(line);
    write_text(keys, line);
    free(line);
    fbw_run r = pcap_tool("stats", file, port, keys, NULL);
    unlink(keys);
    return r;
}

static char *field(char *line, const char *name)
{
    char *p = strstr(line, name);
    cr_assert(p, "no %s in the key line", name);
    return p + strlen(name);
}

static void flip_key_byte(char *line)
{
    char *k = field(line, " key=");
    k[6] = k[6] == '0' ? '1' : '0';
}

static void cut_key_even(char *line) /* a key with its last two hex digits lost */
{
    char *k = field(line, " key=");
    char *iv = strstr(k, " iv=");
    memmove(iv - 2, iv, strlen(iv) + 1);
}

static void cut_key_odd(char *line)
{
    char *k = field(line, " key=");
    char *iv = strstr(k, " iv=");
    memmove(iv - 1, iv, strlen(iv) + 1);
}

static void cut_line(char *line) /* the line ends in the middle of the key */
{
    char *k = field(line, " key=");
    strcpy(k + 10, "\n");
}

static void other_plugin(char *line)
{
    char *p = field(line, " plugin=");
    char *rest = strchr(p, ' '); /* "ChaCha64" -> "ChaCha": drop the two digits */
    cr_assert(rest && rest - p == 8);
    memmove(p + 6, rest, strlen(rest) + 1);
}

static void flip_iv_byte(char *line)
{
    char *iv = field(line, " iv=");
    iv[0] = iv[0] == 'f' ? 'e' : 'f';
}

static void expect_not_decrypted(fbw_run *r, const char *what, const char *also)
{
    cr_expect_eq(r->status, 1, "%s: exit %d\n%s", what, r->status, r->err);
    cr_expect(strstr(r->out, "problem: key log line 1 for ") &&
                  strstr(r->out, ": the key does not decrypt this session: "),
              "%s: no clear error:\n%s", what, r->out);
    cr_expect(!also || strstr(r->out, also), "%s: lacks \"%s\":\n%s", what, also, r->out);
    cr_expect(strstr(r->out, "key_log: line 1 (not decrypted)"), "%s:\n%s", what, r->out);
    /* nothing decoded from garbage: the packets stop at op_crypt's */
    cr_expect(!strstr(r->out, "op_prepare_statement"), "%s: garbage decoded:\n%s", what, r->out);
}

Test(keylog, wrong_or_truncated_lines_are_clear_errors)
{
    fbw_run r = with_edited_line("fb3_script_arc4", "3050", flip_key_byte);
    expect_not_decrypted(&r, "Arc4, one key digit changed",
                         "the first server bytes after op_crypt do not decode");
    fbw_run_free(&r);
    r = with_edited_line("fb4_script_chacha64_zlib", "3051", flip_key_byte);
    expect_not_decrypted(&r, "ChaCha64 + zlib, one key digit changed", NULL);
    fbw_run_free(&r);
    r = with_edited_line("fb4_script_chacha", "3051", flip_iv_byte);
    expect_not_decrypted(&r, "ChaCha, IV changed", NULL);
    fbw_run_free(&r);
    r = with_edited_line("fb3_script_arc4", "3050", cut_key_even);
    expect_not_decrypted(&r, "Arc4, key one byte short", NULL);
    fbw_run_free(&r);
    r = with_edited_line("fb4_script_chacha64", "3051", other_plugin);
    expect_not_decrypted(&r, "line names ChaCha, session is ChaCha64",
                         "it is for ChaCha, but the session is encrypted with ChaCha64");
    fbw_run_free(&r);

    /* malformed lines stop before anything is decoded (usage error, line number named) */
    r = with_edited_line("fb4_script_chacha64", "3051", cut_key_odd);
    cr_expect_eq(r.status, 2, "odd key: exit %d", r.status);
    cr_expect(strstr(r.err, ":1: key: odd number of hex digits"), "odd key:\n%s", r.err);
    fbw_run_free(&r);
    r = with_edited_line("fb4_script_chacha64", "3051", cut_line);
    cr_expect_eq(r.status, 2, "cut line: exit %d", r.status);
    cr_expect(strstr(r.err, ":1: field iv= missing (truncated line?)"), "cut line:\n%s", r.err);
    fbw_run_free(&r);
}

/* A key log with no line for the connection leaves it encrypted, as without --keylog. */
Test(keylog, no_matching_line_reports_encrypted)
{
    char file[512], keys[512];
    snprintf(file, sizeof file, "%s/fb4_script_chacha.pcap", PCAP_DIR);
    snprintf(keys, sizeof keys, "%s/fb3_script_arc4.keys", PCAP_DIR);
    fbw_run r = pcap_tool("stats", file, "3051", keys, NULL);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.out, "problem: encrypted with ChaCha from packet"), "%s", r.out);
    cr_expect(!strstr(r.out, "key_log:"), "%s", r.out);
    fbw_run_free(&r);
    fbw_run m = pcap_tool("stats", file, "3051", "/nonexistent/keys", NULL);
    cr_expect_eq(m.status, 2);
    cr_expect(strstr(m.err, "key log /nonexistent/keys: cannot open"), "%s", m.err);
    fbw_run_free(&m);
}

/* ---- live: the key log fbwire writes decrypts a capture of the same session ---- */

static void live_session(fbw_server_id id, const char *plugin, int compress)
{
    if (geteuid() != 0)
        cr_skip_test("needs root for tcpdump");
    fbw_servers s;
    fbw_servers_require(&s);
    char tmp[64] = "/tmp/fbwire-test-keylog.XXXXXX";
    cr_assert(mkdtemp(tmp));
    char file[128], keys[128], errlog[128], filter[128], dsn[1200], port[16];
    snprintf(file, sizeof file, "%s/live.pcap", tmp);
    snprintf(keys, sizeof keys, "%s/keys", tmp);
    snprintf(errlog, sizeof errlog, "%s/tcpdump.err", tmp);
    snprintf(port, sizeof port, "%d", s.srv[id].port);
    snprintf(filter, sizeof filter, "tcp port %d", s.srv[id].port);
    fbw_servers_dsn(&s, id, dsn, sizeof dsn);
    pid_t td = fbw_tcpdump_start(file, filter, errlog);
    cr_assert_neq(td, -1, "cannot start tcpdump: %s", strerror(errno));
    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_REQUIRED;
    o.conn.crypt_list = plugin;
    o.conn.compress = compress;
    o.keylog = keys;
    fbw_client *cl = NULL;
    fbw_err err;
    int rc = fbw_client_connect(dsn, &o, &cl, &err);
    if (rc == FBW_OK)
        rc = fbw_conn_query_version(fbw_client_conn(cl));
    if (rc == FBW_OK)
        rc = fbw_client_wait(cl);
    if (rc == FBW_OK)
        rc = fbw_conn_detach(fbw_client_conn(cl));
    if (rc == FBW_OK)
        rc = fbw_client_wait(cl); /* also writes op_disconnect */
    fbw_stats live;
    memset(&live, 0, sizeof live);
    if (cl) {
        live = *fbw_conn_stats(fbw_client_conn(cl));
        cr_expect_str_eq(fbw_conn_get_info(fbw_client_conn(cl))->wire_crypt, plugin);
        fbw_client_close(cl);
    }
    fbw_tcpdump_stop(td);
    cr_assert_eq(rc, FBW_OK, "%s: %s", dsn, cl ? fbw_client_error(cl)->msg : err.msg);

    struct stat st;
    cr_assert_eq(stat(keys, &st), 0, "no key log written");
    cr_expect_eq(st.st_mode & 0777, 0600, "key log mode %o", st.st_mode & 0777);
    char *text = read_text(keys);
    cr_expect(!strncmp(text, "FBWIRE_KEYLOG_1 time=", 21) && strstr(text, " plugin=") &&
                  strchr(text, '\n') == text + strlen(text) - 1,
              "one line expected:\n%s", text);
    cr_expect(!strstr(text, s.password), "the password is in the key log");
    free(text);

    fbw_run r = pcap_tool("stats", file, port, keys, NULL);
    /* The capture of the port may hold other tests' connections (the exit status is theirs too):
     * ours is the one the key log names. */
    char *sec = strstr(r.out, "\nkey_log: line 1\n");
    cr_assert(sec, "connection not decrypted:\n%s", r.out);
    char *end = strstr(sec, "\n\n");
    if (end)
        *end = 0;
    cr_expect(!strstr(sec, "\nproblem:"), "decoded with a problem:\n%s", sec);
    char want[600];
    snprintf(want, sizeof want,
             "round_trips: %llu\npackets_sent: %llu\npackets_received: %llu\nbytes_sent: %llu\n"
             "bytes_received: %llu\nwire_bytes_sent: %llu\nwire_bytes_received: %llu\n",
             (unsigned long long)live.round_trips, (unsigned long long)live.packets_sent,
             (unsigned long long)live.packets_received, (unsigned long long)live.bytes_sent,
             (unsigned long long)live.bytes_received, (unsigned long long)live.wire_bytes_sent,
             (unsigned long long)live.wire_bytes_received);
    cr_expect(strstr(sec, want), "decoded figures differ from the live ones:\nlive:\n%s\ncapture:\n%s",
              want, sec);
    cr_expect_geq(live.round_trips, 5, "connect, op_crypt, attach, info, detach");
    fbw_run_free(&r);
    unlink(file);
    unlink(keys);
    unlink(errlog);
    rmdir(tmp);
}

Test(keylog, live_arc4_on_fb3, .timeout = 60)
{
    live_session(FBW_SRV_FB3, "Arc4", 0);
}

Test(keylog, live_chacha_zlib_on_fb4, .timeout = 60)
{
    live_session(FBW_SRV_FB4, "ChaCha", 1);
}
