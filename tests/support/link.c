/* SPDX-License-Identifier: MIT */
/* link.c - fbwire-link as a child process of a test (link.h). */
#define _GNU_SOURCE
#include "link.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_OPTS 48

const char *fbw_link_program(void)
{
    return FBWIRE_BINARY_DIR "/tools/fbwire-link";
}

static void path_in(const fbw_link *l, const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", l->dir, name);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void child(const fbw_link *l, const char *const *argv)
{
    char errpath[300];
    path_in(l, "err.txt", errpath, sizeof errpath);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a test that dies takes its relay along */
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int nul = open("/dev/null", O_RDWR);
    if (fd < 0 || nul < 0)
        _exit(126);
    dup2(nul, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

/* Wait up to 5 s for "listening on 127.0.0.1:PORT" in the relay's stderr. */
static int wait_listening(fbw_link *l, fbw_err *err)
{
    char errpath[300], text[2048];
    path_in(l, "err.txt", errpath, sizeof errpath);
    for (int i = 0; i < 500; i++) {
        FILE *f = fopen(errpath, "r");
        size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f)
            fclose(f);
        text[n] = 0;
        const char *p = strstr(text, "listening on ");
        const char *colon = p ? strchr(p + 13, ':') : NULL;
        if (colon && strchr(colon, ',') && atoi(colon + 1) > 0) {
            l->port = atoi(colon + 1);
            return FBW_OK;
        }
        int st;
        if (waitpid(l->pid, &st, WNOHANG) == l->pid) {
            l->pid = 0;
            return fbw_err_set(err, FBW_E_USAGE, "fbwire-link ended before listening: %s", text);
        }
        sleep_ms(10);
    }
    fbw_link_stop(l);
    return fbw_err_set(err, FBW_E_TIMEOUT, "fbwire-link did not listen within 5 s: %s", text);
}

int fbw_link_start(fbw_link *l, const char *host, int port, const char *const *opts, fbw_err *err)
{
    memset(l, 0, sizeof *l);
    const char *tmp = getenv("TMPDIR");
    snprintf(l->dir, sizeof l->dir, "%s/fbwire-link-test.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(l->dir))
        return fbw_err_set_errno(err, errno, "mkdtemp %s", l->dir);
    char to[300], flog[300], json[300];
    snprintf(to, sizeof to, "%s:%d", host, port);
    path_in(l, "faults.jsonl", flog, sizeof flog);
    path_in(l, "summary.json", json, sizeof json);
    const char *argv[MAX_OPTS + 10];
    int n = 0;
    argv[n++] = fbw_link_program();
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--to";
    argv[n++] = to;
    argv[n++] = "--fault-log";
    argv[n++] = flog;
    argv[n++] = "--json";
    argv[n++] = json;
    for (int i = 0; opts && opts[i] && i < MAX_OPTS; i++)
        argv[n++] = opts[i];
    argv[n] = NULL;
    fflush(NULL);
    l->pid = fork();
    if (l->pid < 0)
        return fbw_err_set_errno(err, errno, "fork");
    if (l->pid == 0)
        child(l, argv);
    return wait_listening(l, err);
}

void fbw_link_release(const fbw_link *l)
{
    if (l->pid > 0)
        kill(l->pid, SIGUSR1);
}

int fbw_link_stop(fbw_link *l)
{
    if (l->pid <= 0)
        return 0;
    kill(l->pid, SIGTERM);
    int st = 0;
    for (int i = 0; i < 500; i++) {
        if (waitpid(l->pid, &st, WNOHANG) == l->pid) {
            l->pid = 0;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        sleep_ms(10);
    }
    kill(l->pid, SIGKILL);
    waitpid(l->pid, &st, 0);
    l->pid = 0;
    return -1;
}

static uint64_t num_after(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static void str_after(const char *line, const char *key, char *out, size_t n)
{
    const char *p = strstr(line, key);
    out[0] = 0;
    if (!p)
        return;
    p += strlen(key);
    size_t k = 0;
    while (p[k] && p[k] != '"' && k + 1 < n) {
        out[k] = p[k];
        k++;
    }
    out[k] = 0;
}

int fbw_link_faults(const fbw_link *l, fbw_link_fault *out, int max)
{
    char flog[300], line[1024];
    path_in(l, "faults.jsonl", flog, sizeof flog);
    FILE *f = fopen(flog, "r");
    if (!f)
        return 0;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (n < max && out) {
            fbw_link_fault *x = &out[n];
            x->conn = (unsigned)num_after(line, "\"conn\":");
            str_after(line, "\"fault\":\"", x->fault, sizeof x->fault);
            str_after(line, "\"dir\":\"", x->dir, sizeof x->dir);
            x->up = num_after(line, "\"up\":");
            x->down = num_after(line, "\"down\":");
        }
        n++;
    }
    fclose(f);
    return n;
}

int fbw_link_first_conn(const fbw_link *l, fbw_link_conn *out)
{
    char json[300], text[8192];
    path_in(l, "summary.json", json, sizeof json);
    FILE *f = fopen(json, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = 0;
    const char *c = strstr(text, "\"per_connection\":[");
    const char *up = c ? strstr(c, "\"up\":{") : NULL;
    const char *down = up ? strstr(up, "\"down\":{") : NULL;
    if (!down)
        return FBW_E_USAGE;
    out->up_bytes = num_after(up, "\"bytes\":");
    out->up_chunks = num_after(up, "\"chunks\":");
    out->down_bytes = num_after(down, "\"bytes\":");
    out->down_chunks = num_after(down, "\"chunks\":");
    return FBW_OK;
}

void fbw_link_cleanup(fbw_link *l)
{
    char p[300];
    path_in(l, "summary.json", p, sizeof p);
    unlink(p);
    path_in(l, "err.txt", p, sizeof p);
    unlink(p);
    path_in(l, "faults.jsonl", p, sizeof p);
    unlink(p);
    rmdir(l->dir);
}
