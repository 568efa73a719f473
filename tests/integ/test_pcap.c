/* SPDX-License-Identifier: MIT */
/* test_pcap.c - fbwire-pcap and the session decoder (wire/dec.c) on the project's own captures in
 * pcap/: every capture decodes to exactly its .expect; truncated, byte-flipped and TCP-mangled
 * copies (lost, duplicated, overlapping segments) are reported, never crash; no password is in any
 * capture. These use only files from pcap/ (the password check reads servers.env).
 *
 * The last test is the live-vs-capture agreement: tcpdump records a live fbwire session (connect,
 * prepare, a point SELECT executed 50 times, detach) and the per-op packet and byte counts and
 * round trips fbw_conn_stats kept must equal what fbwire-pcap decodes from the capture. It needs
 * root (tcpdump) and the FB4 server; it is skipped when not root. */
#include "capture.h"
#include "servers.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define PCAP_DIR FBWIRE_SOURCE_DIR "/pcap"
#define TOOL FBWIRE_BINARY_DIR "/tools/fbwire-pcap"
#define MAX_CAPTURES 64
#define MAX_ARGS 16

/* ---- small helpers ---- */

/* memmem without _GNU_SOURCE */
static const char *find_bytes(const void *hay, size_t n, const void *needle, size_t m)
{
    const char *h = hay;
    for (size_t i = 0; m && i + m <= n; i++)
        if (!memcmp(h + i, needle, m))
            return h + i;
    return NULL;
}

typedef struct blob {
    char *p;
    size_t n;
} blob;

static blob slurp(const char *path)
{
    blob b = {NULL, 0};
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot open %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b.p = malloc((size_t)n + 1);
    cr_assert(b.p);
    b.n = fread(b.p, 1, (size_t)n, f);
    b.p[b.n] = 0;
    fclose(f);
    return b;
}

static void spill(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f, "cannot write %s", path);
    cr_assert_eq(fwrite(p, 1, n, f), n);
    fclose(f);
}

typedef struct run_result {
    int exited, status, signaled;
    blob out, err;
} run_result;

static void run_free(run_result *r)
{
    free(r->out.p);
    free(r->err.p);
}

/* Run fbwire-pcap with argv[1..] (argv[0] is ignored), stdout and stderr into files. */
static run_result run_tool(char *const *argv, const char *tmpdir)
{
    char out[512], err[512];
    snprintf(out, sizeof out, "%s/out", tmpdir);
    snprintf(err, sizeof err, "%s/err", tmpdir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int rc = posix_spawn(&pid, TOOL, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    cr_assert_eq(rc, 0, "cannot run %s: %s (build the fbwire-pcap target)", TOOL, strerror(rc));
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    run_result r = {WIFEXITED(st), WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                    WIFSIGNALED(st) ? WTERMSIG(st) : 0, slurp(out), slurp(err)};
    return r;
}

static void make_tmpdir(char *buf, size_t size)
{
    snprintf(buf, size, "/tmp/fbwire-test-pcap.XXXXXX");
    cr_assert(mkdtemp(buf), "mkdtemp: %s", strerror(errno));
}

static void remove_tmpdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Names of the captures (without .pcap), sorted. */
static size_t captures(char names[][64])
{
    size_t n = 0;
    DIR *d = opendir(PCAP_DIR);
    cr_assert(d, "cannot open %s", PCAP_DIR);
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 5 && len < 60 && !strcmp(e->d_name + len - 5, ".pcap")) {
            cr_assert_lt(n, MAX_CAPTURES, "more captures in %s than MAX_CAPTURES: raise it", PCAP_DIR);
            snprintf(names[n], 64, "%.*s", (int)(len - 5), e->d_name);
            n++;
        }
    }
    closedir(d);
    qsort(names, n, 64, (int (*)(const void *, const void *))strcmp);
    return n;
}

/* The port a capture's .expect names ("# args: ... --port N"). */
static void expect_args(const char *name, char *args, size_t size, int *exit_status, blob *body)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.expect", PCAP_DIR, name);
    blob e = slurp(path);
    args[0] = 0;
    *exit_status = 0;
    body->p = malloc(e.n + 1);
    body->n = 0;
    for (char *line = e.p; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        if (!strncmp(line, "# args: ", 8))
            snprintf(args, size, "%.*s", (int)(len - 9), line + 8);
        else if (!strncmp(line, "# exit: ", 8))
            *exit_status = atoi(line + 8);
        else if (line[0] != '#') {
            memcpy(body->p + body->n, line, len);
            body->n += len;
        }
        line = nl ? nl + 1 : NULL;
    }
    body->p[body->n] = 0;
    free(e.p);
    cr_assert(args[0], "%s.expect has no \"# args:\" line", name);
}

/* argv from "stats --trips --port 3050" + file; "pcap/X" (a key log) names a file of the source
 * tree. The paths live in static storage until the next call. */
static int split_args(char *args, const char *file, char **argv)
{
    static char paths[MAX_ARGS][512];
    int n = 0;
    argv[n++] = "fbwire-pcap";
    for (char *t = strtok(args, " "); t && n < MAX_ARGS - 2; t = strtok(NULL, " ")) {
        if (!strncmp(t, "pcap/", 5)) {
            snprintf(paths[n], sizeof paths[n], "%s/%s", FBWIRE_SOURCE_DIR, t);
            t = paths[n];
        }
        argv[n++] = t;
    }
    argv[n++] = (char *)file;
    argv[n] = NULL;
    return n;
}

static const char *port_of(char *const *argv)
{
    for (int i = 0; argv[i]; i++)
        if (!strcmp(argv[i], "--port") && argv[i + 1])
            return argv[i + 1];
    return "3050";
}

/* ---- the .expect files ---- */

Test(pcap, every_capture_decodes_to_its_expect)
{
    char names[MAX_CAPTURES][64], tmp[64];
    size_t n = captures(names);
    cr_assert_geq(n, 5, "expected the recorded captures in %s, found %zu (pcap/record.sh)",
                  PCAP_DIR, n);
    make_tmpdir(tmp, sizeof tmp);
    for (size_t i = 0; i < n; i++) {
        char args[256], file[512], *argv[MAX_ARGS];
        int want_exit;
        blob body;
        expect_args(names[i], args, sizeof args, &want_exit, &body);
        snprintf(file, sizeof file, "%s/%.63s.pcap", PCAP_DIR, names[i]);
        split_args(args, file, argv);
        run_result r = run_tool(argv, tmp);
        cr_expect(r.exited && r.status == want_exit, "%s: exit %d (want %d), stderr:\n%s", names[i],
                  r.status, want_exit, r.err.p);
        cr_expect_str_eq(r.out.p, body.p, "%s: output differs from %s.expect", names[i], names[i]);
        run_free(&r);
        free(body.p);
    }
    remove_tmpdir(tmp);
}

/* Captures of Firebird's own tools (pcap/record.sh) carry a round-trip count made without fbwire:
 * "# independent: round_trips=N" from tshark's turnarounds. The decoded round trips must equal it,
 * and the decode must have reached the end (no problem line). */
Test(pcap, tool_captures_match_the_independent_count)
{
    char names[MAX_CAPTURES][64];
    size_t n = captures(names), checked = 0, gbak = 0;
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%.63s.expect", PCAP_DIR, names[i]);
        blob e = slurp(path);
        const char *ind = strstr(e.p, "\n# independent: round_trips=");
        int tool = (!strncmp(names[i], "fb3_", 4) || !strncmp(names[i], "fb4_", 4)) &&
                   (!strncmp(names[i] + 4, "gbak", 4) || !strncmp(names[i] + 4, "gfix", 4) ||
                    !strncmp(names[i] + 4, "svc", 3));
        if (tool)
            cr_expect(ind, "%s.expect has no independent round-trip count", names[i]);
        if (ind) {
            long want = atol(ind + strlen("\n# independent: round_trips="));
            const char *got = strstr(e.p, "\nround_trips: ");
            cr_assert(got, "%s.expect has no round_trips line", names[i]);
            cr_expect_eq(atol(got + strlen("\nround_trips: ")), want,
                         "%s: decoded round trips differ from the independent count %ld", names[i],
                         want);
            cr_expect(!strstr(e.p, "\nproblem:"), "%s: the decode did not reach the end", names[i]);
            checked++;
            gbak += !strncmp(names[i] + 3, "_gbak", 5);
        }
        free(e.p);
    }
    cr_expect_geq(gbak, 4, "the FB3 and FB4 gbak backup and restore captures are missing");
    cr_expect_geq(checked, 16, "expected the FB3 and FB4 tool captures of pcap/record.sh, found %zu",
                  checked);
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *q = strstr(hay, needle); q; q = strstr(q + 1, needle))
        n++;
    return n;
}

/* gbak's backup in dump: every op_compile with the messages its BLR declares, the rows of each
 * receive on its last op_send (as DSQL rows on op_fetch_response); replay --list names every
 * compiled request with the reason it is not replayed. */
Test(pcap, gbak_requests_in_dump_and_replay_list)
{
    char tmp[64], file[512];
    make_tmpdir(tmp, sizeof tmp);
    snprintf(file, sizeof file, "%s/fb3_gbak_backup.pcap", PCAP_DIR);
    char *a1[] = {"fbwire-pcap", "dump", file, NULL};
    run_result d = run_tool(a1, tmp);
    cr_assert_eq(d.status, 0, "%s", d.err.p);
    cr_expect(strstr(d.out.p, " C>S op_compile 204 blr_bytes=190 messages=\"0:1\"\n"), "%s", d.out.p);
    cr_expect(strstr(d.out.p, " S>C op_send 28 request=2 msg=0 messages=0 rows=3\n"), "no rows");
    cr_expect(strstr(d.out.p, " C>S op_start_send_and_receive 44 request=2 tr=1 msg=0 messages=0\n"));
    cr_expect(!strstr(d.out.p, "not supported"), "a packet did not decode");
    size_t compiles = count_of(d.out.p, " C>S op_compile ");
    cr_expect_eq(compiles, 33);
    char *a2[] = {"fbwire-pcap", "replay", file, "--list", NULL};
    run_result l = run_tool(a2, tmp);
    cr_assert_eq(l.status, 0, "%s", l.err.p);
    cr_expect(strstr(l.out.p, "request compiled at packet 7 (190 bytes of BLR, 1 messages) [not "
                              "replayable: a BLR request"), "%s", l.out.p);
    cr_expect_eq(count_of(l.out.p, "\nrequest compiled at packet "), compiles);
    char *a3[] = {"fbwire-pcap", "replay", file, "--list", "--json", NULL};
    run_result j = run_tool(a3, tmp);
    cr_expect(strstr(j.out.p, "\"blr_requests\":{\"compiled\":33,"), "%s", j.out.p);
    run_free(&d);
    run_free(&l);
    run_free(&j);
    remove_tmpdir(tmp);
}

/* FB4's gbak restores rows through the batch API and blobs through the batch blob stream: every
 * op_batch_blob_stream decodes (stream bytes and blob headers from bstream.c), the whole capture
 * with it, and replay --list counts it among the ops it does not replay; a stream cut inside a
 * segment goes on in the next packet. */
Test(pcap, fb4_gbak_restore_decodes_the_batch_blob_stream)
{
    char tmp[64], file[512];
    make_tmpdir(tmp, sizeof tmp);
    snprintf(file, sizeof file, "%s/fb4_gbak_restore.pcap", PCAP_DIR);
    char *a1[] = {"fbwire-pcap", "dump", "--port", "3051", file, NULL};
    run_result d = run_tool(a1, tmp);
    cr_assert_eq(d.status, 0, "%s", d.err.p);
    cr_expect(strstr(d.out.p, " C>S op_batch_blob_stream 75 stmt=10 stream_bytes=60 blobs=2\n"), "%s",
              d.out.p);
    cr_expect(strstr(d.out.p, " S>C op_response 32 reply_to=\"op_batch_blob_stream\" status=\"ok\"\n"));
    cr_expect(!strstr(d.out.p, "not supported"), "a packet did not decode");
    cr_expect(!strstr(d.out.p, "\nproblem"), "the decode stopped");
    char *a2[] = {"fbwire-pcap", "replay", "--port", "3051", file, "--list", NULL};
    run_result l = run_tool(a2, tmp);
    cr_assert_eq(l.status, 0, "%s", l.err.p);
    cr_expect(strstr(l.out.p, "op_batch_blob_stream 1,"), "%s", l.out.p);
    run_free(&d);
    run_free(&l);
    /* eleven 12 KB blobs overflow fbclient's 128 KB stream buffer: the first packet ends 50 bytes
     * into a segment, the second starts with those bytes, then a new blob header */
    snprintf(file, sizeof file, "%s/fb4_gbak_restore_blobs.pcap", PCAP_DIR);
    run_result b = run_tool(a1, tmp);
    cr_assert_eq(b.status, 0, "%s", b.err.p);
    cr_expect(strstr(b.out.p, " C>S op_batch_blob_stream 131962 stmt=7 stream_bytes=131072 blobs=11\n"),
              "%s", b.out.p);
    cr_expect(strstr(b.out.p, " C>S op_batch_blob_stream 2098 stmt=7 stream_bytes=2088 blobs=1\n"));
    cr_expect(!strstr(b.out.p, "not supported") && !strstr(b.out.p, "\nproblem"), "%s", b.out.p);
    run_free(&b);
    remove_tmpdir(tmp);
}

/* The same numbers in JSON: the connection's round trips must match the text output's. */
Test(pcap, json_agrees_with_text)
{
    char tmp[64], file[512];
    make_tmpdir(tmp, sizeof tmp);
    snprintf(file, sizeof file, "%s/fb3_isql.pcap", PCAP_DIR);
    char *a1[] = {"fbwire-pcap", "stats", "--json", file, NULL};
    run_result j = run_tool(a1, tmp);
    char *a2[] = {"fbwire-pcap", "stats", file, NULL};
    run_result t = run_tool(a2, tmp);
    cr_assert_eq(j.status, 0, "%s", j.err.p);
    const char *rt = strstr(t.out.p, "\nround_trips: ");
    cr_assert(rt);
    char want[64];
    snprintf(want, sizeof want, "\"round_trips\":%ld,", strtol(rt + 14, NULL, 10));
    cr_expect(strstr(j.out.p, want), "JSON lacks %s:\n%s", want, j.out.p);
    cr_expect(
        strstr(
            j.out.p,
            "\"op_fetch_response\":{\"packets_sent\":0,\"bytes_sent\":0,\"packets_received\":101,"),
        "JSON per-op entry missing:\n%s", j.out.p);
    run_free(&j);
    run_free(&t);
    remove_tmpdir(tmp);
}

Test(pcap, dump_shows_sql_rows_and_status)
{
    char tmp[64], file[512];
    make_tmpdir(tmp, sizeof tmp);
    snprintf(file, sizeof file, "%s/fb3_isql.pcap", PCAP_DIR);
    char *argv[] = {"fbwire-pcap", "dump", file, NULL};
    run_result r = run_tool(argv, tmp);
    cr_assert_eq(r.status, 0, "%s", r.err.p);
    cr_expect(strstr(r.out.p, " C>S op_prepare_statement ") &&
                  strstr(r.out.p, "sql=\"SELECT ID, NAME, AMOUNT FROM FBW_PCAP ORDER BY ID\""),
              "prepare with SQL text missing");
    cr_expect(strstr(r.out.p, "S>C op_fetch_response 12 status=100 messages=0 rows=100"),
              "row count missing");
    cr_expect(strstr(r.out.p, "status=\"ok\""), "no status");
    run_free(&r);
    /* fbwire asks for the records count with every DML execute; isql does not */
    snprintf(file, sizeof file, "%s/fb3_script.pcap", PCAP_DIR);
    r = run_tool(argv, tmp);
    cr_assert_eq(r.status, 0, "%s", r.err.p);
    cr_expect(strstr(r.out.p,
                     "reply_to=\"op_info_sql\" object=2 data_bytes=33 affected=100 selected=100"),
              "no affected count:\n%s", r.out.p);
    run_free(&r);
    remove_tmpdir(tmp);
}

/* ---- secrets ---- */

Test(pcap, no_password_in_any_capture)
{
    fbw_servers s;
    fbw_err err;
    if (fbw_servers_load(&s, &err) != FBW_OK)
        cr_skip_test("no servers.env to read the passwords from: %s", err.msg);
    char names[MAX_CAPTURES][64];
    size_t n = captures(names);
    cr_assert_gt(n, 0);
    cr_assert_gt(strlen(s.password), 3);
    for (size_t i = 0; i < n; i++) {
        char file[512];
        snprintf(file, sizeof file, "%s/%.63s.pcap", PCAP_DIR, names[i]);
        blob b = slurp(file);
        cr_expect(!find_bytes(b.p, b.n, s.password, strlen(s.password)),
                  "%s contains the SYSDBA password", names[i]);
        if (strlen(s.legacy_password) > 3)
            cr_expect(!find_bytes(b.p, b.n, s.legacy_password, strlen(s.legacy_password)),
                      "%s contains the Legacy_Auth password", names[i]);
        free(b.p);
    }
}

/* ---- hostile copies ---- */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int reported_truncation(const run_result *r)
{
    return strstr(r->out.p, "capture truncated") ||
           strstr(r->out.p, "session ends inside a packet") ||
           strstr(r->out.p, "still open when the capture ended") || strstr(r->err.p, "truncated") ||
           strstr(r->err.p, "not a capture") || strstr(r->err.p, "unknown file format");
}

static void no_crash(const run_result *r, const char *what)
{
    cr_assert(r->exited, "%s: killed by signal %d\nstderr:\n%s", what, r->signaled, r->err.p);
    cr_assert(r->status <= 2, "%s: exit %d\nstderr:\n%s", what, r->status, r->err.p);
    cr_assert(!strstr(r->err.p, "Sanitizer") && !strstr(r->err.p, "runtime error"), "%s:\n%s", what,
              r->err.p);
}

Test(pcap, truncated_captures_are_reported, .timeout = 300)
{
    char names[MAX_CAPTURES][64], tmp[64];
    size_t n = captures(names);
    make_tmpdir(tmp, sizeof tmp);
    uint64_t seed = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < n; i++) {
        char file[512], cut[600], args[256], *argv[MAX_ARGS];
        int want_exit;
        blob body;
        expect_args(names[i], args, sizeof args, &want_exit, &body);
        free(body.p);
        snprintf(file, sizeof file, "%s/%.63s.pcap", PCAP_DIR, names[i]);
        snprintf(cut, sizeof cut, "%s/cut.pcap", tmp);
        blob b = slurp(file);
        cr_assert_gt(b.n, 100);
        /* about 400 cuts in all, however many captures pcap/ holds (the run time stays put) */
        int cuts = n > 8 ? (int)(400 / n) : 50;
        for (int k = 0; k < cuts; k++) {
            size_t at = 25 + (size_t)(rng_next(&seed) % (b.n - 26)); /* inside the frames */
            spill(cut, b.p, at);
            char *a[] = {"fbwire-pcap", "dump",
                         "--port",      (char *)port_of((split_args(args, file, argv), argv)),
                         cut,           NULL};
            run_result r = run_tool(a, tmp);
            char what[700];
            snprintf(what, sizeof what, "%.63s cut at %zu of %zu", names[i], at, b.n);
            no_crash(&r, what);
            cr_expect(r.status != 0 || reported_truncation(&r), "%s: not reported\n%s", what,
                      r.out.p);
            cr_expect(reported_truncation(&r),
                      "%s: no truncation message\nstdout:\n%s\nstderr:\n%s", what, r.out.p,
                      r.err.p);
            run_free(&r);
            expect_args(names[i], args, sizeof args, &want_exit, &body); /* strtok ate args */
            free(body.p);
        }
        free(b.p);
    }
    remove_tmpdir(tmp);
}

Test(pcap, byte_flipped_captures_never_crash, .timeout = 600)
{
    char names[MAX_CAPTURES][64], tmp[64];
    size_t n = captures(names);
    make_tmpdir(tmp, sizeof tmp);
    blob src[MAX_CAPTURES];
    for (size_t i = 0; i < n; i++) {
        char file[512];
        snprintf(file, sizeof file, "%s/%.63s.pcap", PCAP_DIR, names[i]);
        src[i] = slurp(file);
    }
    uint64_t seed = 0xD1B54A32D192ED03u;
    char mut[600];
    snprintf(mut, sizeof mut, "%s/mut.pcap", tmp);
    for (int k = 0; k < 1000; k++) {
        const blob *b = &src[(size_t)k % n];
        char *copy = malloc(b->n);
        memcpy(copy, b->p, b->n);
        int flips = 1 + (int)(rng_next(&seed) % 8);
        for (int f = 0; f < flips; f++) {
            /* mostly inside the frames (where the decoders are), sometimes anywhere */
            size_t at = (k % 10 == 0) ? rng_next(&seed) % b->n : 24 + rng_next(&seed) % (b->n - 24);
            copy[at] ^= (char)(1u << (rng_next(&seed) % 8));
            if (k % 3 == 0)
                copy[at] = (char)rng_next(&seed);
        }
        spill(mut, copy, b->n);
        free(copy);
        char *dump[] = {"fbwire-pcap", "dump", "--port", "3051", "--port", "3052", mut, NULL};
        char *stats[] = {"fbwire-pcap", "stats",  "--json", "--trips", "--port",
                         "3051",        "--port", "3052",   mut,       NULL};
        run_result r = run_tool(k % 2 ? dump : stats, tmp);
        char what[128];
        snprintf(what, sizeof what, "mutation %d of %s", k, names[(size_t)k % n]);
        no_crash(&r, what);
        run_free(&r);
    }
    for (size_t i = 0; i < n; i++)
        free(src[i].p);
    remove_tmpdir(tmp);
}

/* ---- TCP reassembly: the records of a classic pcap file (Ethernet/IPv4/TCP, as tcpdump -i lo)
 * ---- */

typedef struct rec {
    size_t off, len; /* whole record: 16-byte header + frame */
    size_t payload;  /* TCP payload bytes */
    int from_port;   /* source port */
} rec;

static uint32_t le32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

static size_t records(const blob *b, rec *out, size_t max)
{
    cr_assert_eq(le32(b->p), 0xA1B2C3D4u, "classic little-endian pcap expected");
    cr_assert_eq(le32(b->p + 20), 1u, "Ethernet link type expected");
    size_t n = 0;
    for (size_t off = 24; off + 16 <= b->n && n < max; n++) {
        size_t caplen = le32(b->p + off + 8);
        const unsigned char *f = (const unsigned char *)b->p + off + 16;
        cr_assert(off + 16 + caplen <= b->n);
        size_t ihl = (f[14] & 0x0F) * 4u, total = (size_t)(f[16] << 8 | f[17]);
        size_t doff = (f[14 + ihl + 12] >> 4) * 4u;
        out[n] = (rec){off, 16 + caplen, total - ihl - doff, f[14 + ihl] << 8 | f[14 + ihl + 1]};
        off += 16 + caplen;
    }
    return n;
}

/* stats text without the lines that depend on capture timing or frame counts */
static char *numbers(const char *out)
{
    char *r = malloc(strlen(out) + 1), *w = r;
    for (const char *line = out; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
        if (strncmp(line, "wait_ms:", 8) && strncmp(line, "capture:", 8)) {
            memcpy(w, line, len);
            w += len;
        }
        line += len;
    }
    *w = 0;
    return r;
}

static run_result stats_of(const char *file, const char *tmp)
{
    char *argv[] = {"fbwire-pcap", "stats", "--trips", "--port", "3051", (char *)file, NULL};
    return run_tool(argv, tmp);
}

Test(pcap, tcp_retransmissions_reordering_and_loss)
{
    char tmp[64], file[512], mod[600];
    make_tmpdir(tmp, sizeof tmp);
    snprintf(file, sizeof file, "%s/fb4_script_zlib.pcap", PCAP_DIR);
    snprintf(mod, sizeof mod, "%s/mod.pcap", tmp);
    blob b = slurp(file);
    rec r[512];
    size_t n = records(&b, r, 512);
    run_result base = stats_of(file, tmp);
    cr_assert_eq(base.status, 0, "%s", base.err.p);
    char *want = numbers(base.out.p);
    /* the first client data record after the handshake, and the next record of either side with
     * data */
    size_t k = 0;
    while (k < n && !(r[k].payload > 8 && r[k].from_port != 3051 && k > 5))
        k++;
    cr_assert_lt(k, n);
    char *buf = malloc(b.n * 2);

    /* 1. a full retransmission: record k twice */
    memcpy(buf, b.p, r[k].off + r[k].len);
    memcpy(buf + r[k].off + r[k].len, b.p + r[k].off, b.n - r[k].off);
    spill(mod, buf, b.n + r[k].len);
    run_result x = stats_of(mod, tmp);
    char *got = numbers(x.out.p);
    cr_expect_eq(x.status, 0, "duplicate: %s", x.err.p);
    cr_expect_str_eq(got, want, "a duplicated segment changed the decoded numbers");
    free(got);
    run_free(&x);

    /* 2. a partial overlap: a copy of record k carrying only the first half of its payload, then
     * the whole record (whose first half is then a retransmission to trim) */
    size_t cutoff = r[k].payload - r[k].payload / 2, short_len = r[k].len - cutoff;
    uint32_t caplen = le32(b.p + r[k].off + 8) - (uint32_t)cutoff;
    const unsigned char *ip = (const unsigned char *)b.p + r[k].off + 16 + 14;
    unsigned total = (unsigned)(ip[2] << 8 | ip[3]) - (unsigned)cutoff;
    size_t w = 0;
    memcpy(buf, b.p, r[k].off);
    w = r[k].off;
    memcpy(buf + w, b.p + r[k].off, short_len);
    memcpy(buf + w + 8, &caplen, 4); /* caplen and len (little-endian host, like the file) */
    memcpy(buf + w + 12, &caplen, 4);
    buf[w + 16 + 14 + 2] = (char)(total >> 8);
    buf[w + 16 + 14 + 3] = (char)total;
    buf[w + 16 + 14 + 10] = buf[w + 16 + 14 + 11] = 0; /* IP checksum is not checked */
    w += short_len;
    memcpy(buf + w, b.p + r[k].off, b.n - r[k].off);
    w += b.n - r[k].off;
    spill(mod, buf, w);
    x = stats_of(mod, tmp);
    got = numbers(x.out.p);
    cr_expect_eq(x.status, 0, "overlap: %s", x.err.p);
    cr_expect_str_eq(got, want, "an overlapping retransmission changed the decoded numbers");
    free(got);
    run_free(&x);

    /* 3. out of order: record k swapped with the next data record of the same direction (when no
     * server data lies between, so the meaning of the session is unchanged) */
    size_t j = k + 1;
    while (j < n && !(r[j].from_port == r[k].from_port && r[j].payload > 0))
        j++;
    size_t between = 0;
    for (size_t i = k + 1; i < j && j < n; i++)
        between += r[i].payload && r[i].from_port == 3051;
    if (j < n && between == 0) { /* no server data in between: reordering keeps the meaning */
        w = 0;
        memcpy(buf, b.p, r[k].off);
        w = r[k].off;
        memcpy(buf + w, b.p + r[k].off + r[k].len, r[j].off + r[j].len - (r[k].off + r[k].len));
        w += r[j].off + r[j].len - (r[k].off + r[k].len);
        memcpy(buf + w, b.p + r[k].off, r[k].len);
        w += r[k].len;
        memcpy(buf + w, b.p + r[j].off + r[j].len, b.n - (r[j].off + r[j].len));
        w += b.n - (r[j].off + r[j].len);
        spill(mod, buf, w);
        x = stats_of(mod, tmp);
        got = numbers(x.out.p);
        cr_expect_eq(x.status, 0, "reorder: %s", x.err.p);
        cr_expect_str_eq(got, want, "out-of-order delivery changed the decoded numbers");
        free(got);
        run_free(&x);
    }

    /* 4. loss: record k dropped -> a gap for that connection, reported, no crash */
    memcpy(buf, b.p, r[k].off);
    memcpy(buf + r[k].off, b.p + r[k].off + r[k].len, b.n - r[k].off - r[k].len);
    spill(mod, buf, b.n - r[k].len);
    x = stats_of(mod, tmp);
    no_crash(&x, "lost segment");
    cr_expect_eq(x.status, 1, "a lost segment must be reported:\n%s", x.out.p);
    cr_expect(strstr(x.out.p, "problem: gap in the client stream"), "no gap reported:\n%s",
              x.out.p);
    run_free(&x);

    /* 5. snaplen: record k cut short (caplen < len) */
    memcpy(buf, b.p, b.n);
    uint32_t cl = le32(buf + r[k].off + 8) - 4;
    memcpy(buf + r[k].off + 8, &cl, 4); /* caplen only; len stays */
    memmove(buf + r[k].off + r[k].len - 4, buf + r[k].off + r[k].len, b.n - r[k].off - r[k].len);
    spill(mod, buf, b.n - 4);
    x = stats_of(mod, tmp);
    no_crash(&x, "snaplen");
    cr_expect(strstr(x.out.p, "cut by the capture's snaplen"), "snaplen cut not reported:\n%s",
              x.out.p);
    run_free(&x);

    free(buf);
    free(want);
    run_free(&base);
    free(b.p);
    remove_tmpdir(tmp);
}

/* ---- live session vs its capture ---- */

typedef struct live {
    fbw_client *cl;
    fbw_tx *tx;
    fbw_stmt *s;
} live;

static const char live_sql[] =
    "SELECT RDB$RELATION_NAME FROM RDB$RELATIONS WHERE RDB$RELATION_ID = 1";

/* The local port of this process's TCP connection to `port` (the client fbwire opened). */
static int client_port(int port)
{
    for (int fd = 3; fd < 1024; fd++) {
        struct sockaddr_storage a;
        socklen_t al = sizeof a;
        int type = 0;
        socklen_t tl = sizeof type;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) || type != SOCK_STREAM)
            continue;
        if (getpeername(fd, (struct sockaddr *)&a, &al) || a.ss_family != AF_INET ||
            ntohs(((struct sockaddr_in *)&a)->sin_port) != port)
            continue;
        al = sizeof a;
        if (getsockname(fd, (struct sockaddr *)&a, &al) == 0)
            return ntohs(((struct sockaddr_in *)&a)->sin_port);
    }
    return 0;
}

/* The section of `stats` text for the connection from client port cport. */
static const char *section(const char *out, int cport)
{
    char key[64];
    snprintf(key, sizeof key, ":%d -> ", cport);
    for (const char *p = strstr(out, "\nconnection "); p; p = strstr(p + 1, "\nconnection ")) {
        const char *eol = strchr(p + 1, '\n');
        const char *k = strstr(p + 1, key);
        if (k && eol && k < eol)
            return p + 1;
    }
    return NULL;
}

static uint64_t field(const char *sec, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s: ", name);
    const char *p = strstr(sec, key);
    const char *end = strstr(sec, "\n\n");
    cr_assert(p && (!end || p < end), "no %s in the section", name);
    return strtoull(p + strlen(key), NULL, 10);
}

/* One live session at protocol_max pmax (0: fbwire's default offer), captured and decoded. */
static void live_session(const fbw_servers *sv, int pmax)
{
    fbw_servers s = *sv;
    char tmp[64], file[600], filter[128], dsn[1400];
    make_tmpdir(tmp, sizeof tmp);
    chmod(tmp, 0777); /* tcpdump drops privileges before writing */
    snprintf(file, sizeof file, "%s/live.pcap", tmp);
    int port = s.srv[FBW_SRV_FB4].port;
    /* FB4 listens on every address: 127.0.0.2 keeps other tests' traffic out of the kernel filter
     */
    snprintf(filter, sizeof filter, "host 127.0.0.2 and tcp port %d", port);
    snprintf(dsn, sizeof dsn, "127.0.0.2/%d:%s", port, s.srv[FBW_SRV_FB4].db);
    char errlog[700];
    snprintf(errlog, sizeof errlog, "%s/tcpdump.err", tmp);
    pid_t td = fbw_tcpdump_start(file, filter, errlog);
    cr_assert_neq(td, -1, "cannot start tcpdump: %s", strerror(errno));

    fbw_client_opts o;
    fbw_servers_client_opts(&s, &o);
    o.conn.wire_crypt = FBW_WIRE_CRYPT_DISABLED;
    if (pmax)
        o.conn.protocol_max = pmax;
    live l;
    fbw_err err;
    int rc = fbw_client_connect(dsn, &o, &l.cl, &err);
    cr_assert_eq(rc, FBW_OK, "connect %s: %s", dsn, err.msg);
    int cport = client_port(port);
    fbw_conn *c = fbw_client_conn(l.cl);
    const int protocol = fbw_conn_get_info(c)->protocol;
    cr_assert_eq(fbw_tx_new(c, &l.tx, NULL), FBW_OK);
    fbw_tx_opts to;
    fbw_tx_opts_init(&to);
    cr_assert_eq(fbw_tx_start(l.tx, &to), FBW_OK);
    cr_assert_eq(fbw_client_wait(l.cl), FBW_OK);
    cr_assert_eq(fbw_stmt_new(c, &l.s, &err), FBW_OK);
    cr_assert_eq(fbw_client_prepare(l.cl, l.s, l.tx, live_sql, sizeof live_sql - 1), FBW_OK, "%s", fbw_client_error(l.cl)->msg);
    cr_assert_eq(fbw_stmt_error(l.s)->code, FBW_OK, "%s", fbw_stmt_error(l.s)->msg);
    for (int i = 0; i < 50; i++) {
        cr_assert_eq(fbw_client_execute(l.cl, l.s, l.tx, NULL, 0), FBW_OK, "%s",
                     fbw_client_error(l.cl)->msg);
        cr_assert_eq(fbw_stmt_row_count(l.s), 1);
        fbw_stmt_clear_rows(l.s);
    }
    fbw_stmt_free(l.s);
    cr_assert_eq(fbw_tx_commit(l.tx), FBW_OK);
    cr_assert_eq(fbw_client_wait(l.cl), FBW_OK);
    cr_assert_eq(fbw_conn_detach(c), FBW_OK);
    cr_assert_eq(fbw_client_wait(l.cl), FBW_OK); /* also writes op_disconnect */
    fbw_stats live_stats = *fbw_conn_stats(c);
    fbw_tx_free(l.tx);
    fbw_client_close(l.cl);
    fbw_tcpdump_stop(td);
    cr_assert_gt(cport, 0, "could not find the client's socket");

    char portarg[16];
    snprintf(portarg, sizeof portarg, "%d", port);
    char *argv[] = {"fbwire-pcap", "stats", "--port", portarg, file, NULL};
    run_result r = run_tool(argv, tmp);
    no_crash(&r, "live capture");
    const char *sec = section(r.out.p, cport);
    cr_assert(sec, "client port %d not in the capture:\n%s", cport, r.out.p);
    const char *end = strstr(sec, "\n\n");
    size_t len = end ? (size_t)(end - sec) : strlen(sec);
    cr_assert(!find_bytes(sec, len, "\nproblem:", 9), "capture not decoded:\n%.*s", (int)len, sec);
    cr_expect_eq(
        field(sec, "round_trips"), live_stats.round_trips, "round trips: capture %llu, live %llu",
        (unsigned long long)field(sec, "round_trips"), (unsigned long long)live_stats.round_trips);
    cr_expect_eq(field(sec, "packets_sent"), live_stats.packets_sent);
    cr_expect_eq(field(sec, "packets_received"), live_stats.packets_received);
    cr_expect_eq(field(sec, "bytes_sent"), live_stats.bytes_sent);
    cr_expect_eq(field(sec, "bytes_received"), live_stats.bytes_received);
    cr_expect_eq(field(sec, "wire_bytes_sent"), live_stats.wire_bytes_sent);
    cr_expect_eq(field(sec, "wire_bytes_received"), live_stats.wire_bytes_received);
    cr_expect_geq(live_stats.round_trips, 50, "50 executions cannot take fewer trips");
    /* every op: packets and bytes each way */
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        const fbw_op_stats *ls = &live_stats.op[op];
        char nb[24], key[40];
        snprintf(key, sizeof key, "\n%s ", fbw_op_name(op, nb, sizeof nb));
        const char *row = find_bytes(sec, len, key, strlen(key));
        unsigned long long ps = 0, bs = 0, pr = 0, br = 0;
        if (row)
            sscanf(row + strlen(key), "%llu %llu %llu %llu", &ps, &bs, &pr, &br);
        cr_expect(ps == ls->packets_sent && bs == ls->bytes_sent && pr == ls->packets_received &&
                      br == ls->bytes_received,
                  "%s: capture %llu/%llu sent, %llu/%llu received; live %llu/%llu, %llu/%llu", nb,
                  ps, bs, pr, br, (unsigned long long)ls->packets_sent,
                  (unsigned long long)ls->bytes_sent, (unsigned long long)ls->packets_received,
                  (unsigned long long)ls->bytes_received);
    }
    fprintf(stderr, "live vs capture, protocol %d: %llu round trips, %llu/%llu packets sent/received agree\n",
            protocol, (unsigned long long)live_stats.round_trips,
            (unsigned long long)live_stats.packets_sent,
            (unsigned long long)live_stats.packets_received);
    run_free(&r);
    /* the dump reads the prepare's fields by the negotiated protocol: from 20 on its flags (the
     * describe items' prefetch bits, 0x47), below 20 there is no such field */
    char *dargv[] = {"fbwire-pcap", "dump", "--port", portarg, file, NULL};
    r = run_tool(dargv, tmp);
    no_crash(&r, "live capture dump");
    const char *prep = strstr(r.out.p, "op_prepare_statement");
    cr_assert(prep, "no op_prepare_statement in the dump:\n%s", r.out.p);
    const char *eol = strchr(prep, '\n');
    size_t plen = eol ? (size_t)(eol - prep) : strlen(prep);
    const int has_flags = find_bytes(prep, plen, "prepare_flags=71", 16) != NULL;
    cr_expect_eq(has_flags, protocol >= 20, "protocol %d: %.*s", protocol, (int)plen, prep);
    run_free(&r);
    remove_tmpdir(tmp);
}

/* At fbwire's default offer (protocol 20 on Firebird 6) and capped at 19 (the stream a Firebird 5
 * server, or an fbclient before 6, makes): the decoder follows each by the protocol it saw agreed. */
Test(pcap, live_stats_equal_the_capture, .timeout = 240)
{
    if (geteuid() != 0)
        cr_skip_test("tcpdump on lo needs root");
    fbw_servers s;
    fbw_servers_require(&s);
    live_session(&s, 0);
    live_session(&s, 19);
}
