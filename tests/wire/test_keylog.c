/* SPDX-License-Identifier: MIT */
/* test_keylog.c - the key log line format (wire/keylog.c): format and parse agree, malformed lines
 * are named errors, and appends from many threads and processes at once give whole lines in a
 * file of mode 0600. */
#include "keylog.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static fbw_keylog_entry sample(int i)
{
    fbw_keylog_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.time, sizeof e.time, "2026-12-01T21:00:00.%06dZ", i);
    snprintf(e.client, sizeof e.client, i % 2 ? "[::1]:%d" : "127.0.0.1:%d", 40000 + i);
    snprintf(e.server, sizeof e.server, i % 2 ? "[::1]:3051" : "127.0.0.1:3050");
    snprintf(e.plugin, sizeof e.plugin, "%s", i % 3 == 0 ? "Arc4" : i % 3 == 1 ? "ChaCha" : "ChaCha64");
    e.key_len = 20;
    for (size_t k = 0; k < e.key_len; k++)
        e.key[k] = (uint8_t)(i * 31 + k);
    e.iv_len = i % 3 == 0 ? 0 : i % 3 == 1 ? 16 : 8;
    for (size_t k = 0; k < e.iv_len; k++)
        e.iv[k] = (uint8_t)(255 - k - i);
    return e;
}

Test(keylog, format_and_parse_agree)
{
    for (int i = 0; i < 6; i++) {
        fbw_keylog_entry e = sample(i), back;
        char line[FBW_KEYLOG_LINE_MAX];
        size_t n = fbw_keylog_format(&e, line, sizeof line);
        cr_assert_gt(n, 0);
        cr_assert_eq(line[n - 1], '\n');
        cr_assert_eq(strlen(line), n);
        cr_assert(!strncmp(line, "FBWIRE_KEYLOG_1 time=", 21), "%s", line);
        fbw_err err;
        fbw_err_clear(&err);
        cr_assert_eq(fbw_keylog_parse(line, n, &back, &err), FBW_OK, "%s: %s", line, err.msg);
        cr_expect_str_eq(back.time, e.time);
        cr_expect_str_eq(back.client, e.client);
        cr_expect_str_eq(back.server, e.server);
        cr_expect_str_eq(back.plugin, e.plugin);
        cr_expect_eq(back.key_len, e.key_len);
        cr_expect_eq(back.iv_len, e.iv_len);
        cr_expect(!memcmp(back.key, e.key, e.key_len));
        cr_expect(!memcmp(back.iv, e.iv, e.iv_len));
    }
    fbw_keylog_entry e = sample(2);
    char line[FBW_KEYLOG_LINE_MAX];
    fbw_keylog_format(&e, line, sizeof line);
    cr_expect(strstr(line, " plugin=ChaCha64 key=3e3f40"), "%s", line);
    cr_expect(strstr(line, " iv=fdfcfbfaf9f8f7f6\n"), "%s", line);
}

Test(keylog, format_refuses_what_would_break_a_line)
{
    char line[FBW_KEYLOG_LINE_MAX];
    fbw_keylog_entry e = sample(1);
    snprintf(e.client, sizeof e.client, "a b");
    cr_expect_eq(fbw_keylog_format(&e, line, sizeof line), 0);
    e = sample(1);
    e.key_len = 0;
    cr_expect_eq(fbw_keylog_format(&e, line, sizeof line), 0);
    e = sample(1);
    cr_expect_eq(fbw_keylog_format(&e, line, 40), 0, "too small a buffer");
    e.key_len = FBW_KEYLOG_KEY_MAX;
    e.iv_len = FBW_KEYLOG_IV_MAX;
    cr_expect_gt(fbw_keylog_format(&e, line, sizeof line), 0, "the longest line fits");
}

static void bad(const char *line, const char *want)
{
    fbw_keylog_entry e;
    fbw_err err;
    fbw_err_clear(&err);
    cr_expect_eq(fbw_keylog_parse(line, strlen(line), &e, &err), FBW_E_BADVALUE, "%s", line);
    cr_expect(strstr(err.msg, want), "\"%s\": message \"%s\" lacks \"%s\"", line, err.msg, want);
}

Test(keylog, malformed_lines_are_named_errors)
{
    const char *ok = "FBWIRE_KEYLOG_1 time=t client=127.0.0.1:1 server=127.0.0.1:3050 plugin=Arc4 "
                     "key=00ff iv=";
    fbw_keylog_entry e;
    fbw_err err;
    cr_assert_eq(fbw_keylog_parse(ok, strlen(ok), &e, &err), FBW_OK, "%s", err.msg);
    cr_expect_eq(e.key_len, 2);
    cr_expect_eq(e.iv_len, 0);
    cr_expect_eq(fbw_keylog_parse("# comment\n", 10, &e, &err), FBW_OK);
    cr_expect_eq(e.key_len, 0, "a comment holds no key");
    cr_expect_eq(fbw_keylog_parse(ok, strlen(ok), &e, &err), FBW_OK, "%s", err.msg);
    cr_expect_eq(fbw_keylog_parse("\n", 1, &e, &err), FBW_OK);
    cr_expect_eq(e.key_len, 0, "an empty line holds no key");
    /* a later version's extra field is ignored */
    const char *extra = "FBWIRE_KEYLOG_1 time=t client=c:1 server=s:2 plugin=ChaCha key=0a iv=0b "
                        "future=1";
    cr_expect_eq(fbw_keylog_parse(extra, strlen(extra), &e, &err), FBW_OK, "%s", err.msg);

    bad("CLIENT_RANDOM abc def", "not a fbwire key log line");
    bad("FBWIRE_KEYLOG_10 time=t", "not a fbwire key log line");
    bad("FBWIRE_KEYLOG_1 time=t client=c:1 server=s:2 plugin=Arc4 key=0", "key: odd number");
    bad("FBWIRE_KEYLOG_1 time=t client=c:1 server=s:2 plugin=Arc4 key=0g iv=", "key: not a hex");
    bad("FBWIRE_KEYLOG_1 time=t client=c:1 server=s:2 plugin=Arc4 key= iv=", "key: empty");
    bad("FBWIRE_KEYLOG_1 time=t client=c:1 server=s:2 plugin=Arc4 key=0102", "field iv= missing");
    bad("FBWIRE_KEYLOG_1 time=t server=s:2 plugin=Arc4 key=0102 iv=", "field client= missing");
    bad("FBWIRE_KEYLOG_1 time=t client= server=s:2 plugin=Arc4 key=01 iv=", "client: empty");
    bad("FBWIRE_KEYLOG_1 time=t client=c:1 server=s:2 plugin=Arc4 key=01 iv=0", "iv: odd");
    bad("FBWIRE_KEYLOG_1 time=t client=c:1 server=s:2 plugin=Arc4 key=01 iv junk", "not key=value");
    char longiv[300] = "FBWIRE_KEYLOG_1 time=t client=c:1 server=s:2 plugin=ChaCha key=01 iv=";
    for (int i = 0; i < 65; i++)
        strcat(longiv, "ab");
    bad(longiv, "iv: 65 bytes, at most 64");
}

/* ---- appends ---- */

#define WRITERS 4
#define LINES 200

typedef struct writer {
    const char *path;
    int id;
} writer;

static void *write_lines(void *arg)
{
    const writer *w = arg;
    for (int i = 0; i < LINES; i++) {
        fbw_keylog_entry e = sample(w->id * LINES + i);
        e.key_len = FBW_KEYLOG_KEY_MAX; /* long lines make a torn write likely if it could happen */
        char line[FBW_KEYLOG_LINE_MAX];
        size_t n = fbw_keylog_format(&e, line, sizeof line);
        fbw_err err;
        if (n == 0 || fbw_keylog_append(w->path, line, n, &err) != FBW_OK)
            return (void *)1;
    }
    return NULL;
}

/* Each process runs WRITERS threads. */
static int write_from_threads(const char *path, int base)
{
    pthread_t t[WRITERS];
    writer w[WRITERS];
    int failed = 0;
    for (int i = 0; i < WRITERS; i++) {
        w[i] = (writer){path, base + i};
        if (pthread_create(&t[i], NULL, write_lines, &w[i]))
            return 1;
    }
    for (int i = 0; i < WRITERS; i++) {
        void *rv;
        pthread_join(t[i], &rv);
        failed |= rv != NULL;
    }
    return failed;
}

Test(keylog, concurrent_appends_give_whole_lines_in_a_0600_file)
{
    char dir[] = "/tmp/fbwire-test-keylog.XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/keys", dir);
    mode_t old = umask(0); /* the mode must not depend on the umask being strict */
    pid_t kids[3];
    for (int k = 0; k < 3; k++) {
        kids[k] = fork();
        cr_assert_neq(kids[k], -1);
        if (kids[k] == 0)
            _exit(write_from_threads(path, (k + 1) * WRITERS));
    }
    int failed = write_from_threads(path, 0);
    for (int k = 0; k < 3; k++) {
        int st;
        cr_assert_eq(waitpid(kids[k], &st, 0), kids[k]);
        failed |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    umask(old);
    cr_assert_eq(failed, 0, "an append failed");
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);

    FILE *f = fopen(path, "r");
    cr_assert(f);
    char *line = malloc(FBW_KEYLOG_LINE_MAX * 2);
    int seen[4 * WRITERS * LINES] = {0}, lines = 0;
    while (fgets(line, FBW_KEYLOG_LINE_MAX * 2, f)) {
        fbw_keylog_entry e;
        fbw_err err;
        cr_assert_eq(fbw_keylog_parse(line, strlen(line), &e, &err), FBW_OK, "torn line %d: %s",
                     lines + 1, err.msg);
        int id = 0;
        cr_assert_eq(sscanf(e.time, "2026-12-01T21:00:00.%dZ", &id), 1);
        cr_assert(id >= 0 && id < 4 * WRITERS * LINES);
        fbw_keylog_entry want = sample(id);
        cr_assert(!memcmp(e.key, want.key, 20), "line %d: key of entry %d mixed up", lines + 1, id);
        seen[id]++;
        lines++;
    }
    fclose(f);
    free(line);
    cr_expect_eq(lines, 4 * WRITERS * LINES);
    for (int i = 0; i < 4 * WRITERS * LINES; i++)
        cr_expect_eq(seen[i], 1, "entry %d appears %d times", i, seen[i]);
    unlink(path);
    rmdir(dir);
}

Test(keylog, unwritable_path_is_an_io_error)
{
    fbw_err err;
    fbw_err_clear(&err);
    cr_expect_eq(fbw_keylog_append("/nonexistent/dir/keys", "x\n", 2, &err), FBW_E_IO);
    cr_expect(strstr(err.msg, "key log /nonexistent/dir/keys: cannot open"), "%s", err.msg);
}
