/* SPDX-License-Identifier: MIT */
/* fbwire-cpu - run a command and report the CPU it and the local database servers spent.
 *
 *   fbwire-cpu [--port N]... [--json FILE] -- COMMAND [ARGS...]
 *
 * Client CPU is the command's own user+system time and that of the children it waited for
 * (wait4's rusage), so a benchmark client such as sysbench is measured whatever its driver.
 * Server CPU is read before and after the command for the process listening on each --port
 * (measure/srvcpu.h: the process, its reaped children and live descendants); a server that cannot
 * be found or read is reported as not available with the reason, never as 0. A server that forks
 * per connection (PostgreSQL, Firebird Classic) ends those processes after the command has
 * closed them, so the second reading waits (up to SETTLE_MS) for them to end and be reaped: their
 * teardown belongs to the run. The command's
 * output passes through untouched; figures go to stderr and, with --json, to FILE. Exits with
 * the command's status (128 + signal when it was killed). */
#include "srvcpu.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef FBW_HAVE_JANSSON
#include <jansson.h>
#endif

#define MAX_PORTS 8
#define SETTLE_MS 1000 /* longest wait for a forking server's connection processes to end */

/* The wall clock of the run: monotonic, so a clock step during the command does not skew it. The
 * tool's own, as the library's clock belongs to its blocking client. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef struct server {
    srvcpu cpu;
    int ok;               /* 1 when both readings worked */
    int children_before;  /* live descendants before the command: a forking server's own */
    uint64_t before, after;
} server;

typedef struct run {
    server srv[MAX_PORTS];
    int nsrv;
    const char *json;
    char **argv;          /* the command */
    int status;           /* wait status */
    double wall_s, user_s, sys_s;
} run;

static void usage(FILE *f)
{
    fprintf(f, "usage: fbwire-cpu [--port N]... [--json FILE] -- COMMAND [ARGS...]\n"
               "  runs COMMAND; prints its CPU time (user+system, children included) and, for each\n"
               "  --port, the CPU time the local server listening on that TCP port spent meanwhile\n");
}

static int parse_args(run *r, int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "fbwire-cpu: %s needs a value\n", argv[i]);
            return -1;
        }
        if (!strcmp(argv[i], "--port")) {
            char *end;
            long p = strtol(argv[++i], &end, 10);
            if (*end || p < 1 || p > 65535 || r->nsrv == MAX_PORTS) {
                fprintf(stderr, "fbwire-cpu: --port takes a TCP port (at most %d of them), got \"%s\"\n",
                        MAX_PORTS, argv[i]);
                return -1;
            }
            r->srv[r->nsrv++].cpu.port = (unsigned)p;
        } else if (!strcmp(argv[i], "--json")) {
            r->json = argv[++i];
        } else {
            fprintf(stderr, "fbwire-cpu: unknown option %s\n", argv[i]);
            return -1;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return -1;
    }
    r->argv = argv + i;
    return 0;
}

static void servers_before(run *r)
{
    for (int i = 0; i < r->nsrv; i++) {
        server *s = &r->srv[i];
        s->ok = srvcpu_find_port(&s->cpu, s->cpu.port, NULL) == FBW_OK &&
                srvcpu_read(&s->cpu, &s->before, NULL) == FBW_OK;
        s->children_before = s->cpu.children;
    }
}

/* The second reading, once the server has as many processes as before or SETTLE_MS have passed. */
static void servers_after(run *r)
{
    uint64_t t0 = now_ns();
    for (int i = 0; i < r->nsrv; i++) {
        server *s = &r->srv[i];
        while (s->ok) {
            s->ok = srvcpu_read(&s->cpu, &s->after, NULL) == FBW_OK && s->after >= s->before;
            if (s->cpu.children <= s->children_before || now_ns() - t0 >= SETTLE_MS * 1000000ull)
                break;
            nanosleep(&(struct timespec){0, 5000000}, NULL);
        }
    }
}

/* Run the command; SIGINT and SIGQUIT reach it (same process group), we only wait, like time(1). */
static int run_command(run *r)
{
    uint64_t t0 = now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "fbwire-cpu: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execvp(r->argv[0], r->argv);
        fprintf(stderr, "fbwire-cpu: cannot run %s: %s\n", r->argv[0], strerror(errno));
        _exit(127);
    }
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    struct rusage ru;
    pid_t w;
    while ((w = wait4(pid, &r->status, 0, &ru)) < 0 && errno == EINTR)
        ;
    if (w < 0) {
        fprintf(stderr, "fbwire-cpu: wait: %s\n", strerror(errno));
        return -1;
    }
    r->wall_s = (double)(now_ns() - t0) / 1e9;
    r->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    r->sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    return 0;
}

static void print_text(const run *r)
{
    fprintf(stderr, "fbwire-cpu: wall %.3f s, client CPU %.3f s (user %.3f s, system %.3f s)\n",
            r->wall_s, r->user_s + r->sys_s, r->user_s, r->sys_s);
    for (int i = 0; i < r->nsrv; i++) {
        const server *s = &r->srv[i];
        if (s->ok)
            fprintf(stderr, "fbwire-cpu: server port %u: pid %d (+%d live processes): CPU %.3f s\n",
                    s->cpu.port, s->cpu.pid, s->cpu.children, (double)(s->after - s->before) / 1e9);
        else
            fprintf(stderr, "fbwire-cpu: server port %u: CPU not available: %s\n", s->cpu.port,
                    s->cpu.why[0] ? s->cpu.why : "reading failed");
    }
}

#ifdef FBW_HAVE_JANSSON
static int write_json(const run *r)
{
    json_t *servers = json_array();
    for (int i = 0; i < r->nsrv; i++) {
        const server *s = &r->srv[i];
        json_t *o = json_pack("{s:I, s:b}", "port", (json_int_t)s->cpu.port, "available", s->ok);
        if (s->ok) {
            json_object_set_new(o, "pid", json_integer(s->cpu.pid));
            json_object_set_new(o, "live_children", json_integer(s->cpu.children));
            json_object_set_new(o, "cpu_s", json_real((double)(s->after - s->before) / 1e9));
        } else {
            json_object_set_new(o, "why", json_string(s->cpu.why[0] ? s->cpu.why : "reading failed"));
        }
        json_array_append_new(servers, o);
    }
    long hz = sysconf(_SC_CLK_TCK);
    json_t *root = json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:o}", "tool", "fbwire-cpu",
                             "wall_s", r->wall_s, "client_cpu_s", r->user_s + r->sys_s,
                             "client_user_s", r->user_s, "client_sys_s", r->sys_s,
                             "server_cpu_resolution_s", hz > 0 ? 1.0 / (double)hz : 0.01,
                             "servers", servers);
    if (WIFEXITED(r->status))
        json_object_set_new(root, "exit_status", json_integer(WEXITSTATUS(r->status)));
    else
        json_object_set_new(root, "signal", json_integer(WTERMSIG(r->status)));
    int rc = json_dump_file(root, r->json, JSON_INDENT(2));
    json_decref(root);
    if (rc != 0)
        fprintf(stderr, "fbwire-cpu: cannot write %s\n", r->json);
    return rc;
}
#else
static int write_json(const run *r)
{
    fprintf(stderr, "fbwire-cpu: built without jansson, cannot write %s\n", r->json);
    return -1;
}
#endif

int main(int argc, char **argv)
{
    run r;
    memset(&r, 0, sizeof r);
    if (parse_args(&r, argc, argv) != 0)
        return 2;
    servers_before(&r);
    if (run_command(&r) != 0)
        return 2;
    servers_after(&r);
    print_text(&r);
    if (r.json && write_json(&r) != 0)
        return 2;
    if (WIFSIGNALED(r.status))
        return 128 + WTERMSIG(r.status);
    return WEXITSTATUS(r.status);
}
