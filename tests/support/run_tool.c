/* SPDX-License-Identifier: MIT */
/* run_tool.c - popen a tool with quoted arguments, stderr through a temporary file. */
#include "run_tool.h"

#include "servers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CMD_MAX 16384

/* Append ' quoted' to cmd (single quotes; an embedded ' becomes '\''). */
static void add_arg(char *cmd, const char *arg)
{
    size_t n = strlen(cmd);
    cr_assert_lt(n + 4 * strlen(arg) + 4, CMD_MAX, "command too long");
    cmd[n++] = ' ';
    cmd[n++] = '\'';
    for (const char *p = arg; *p; p++) {
        if (*p == '\'') {
            memcpy(cmd + n, "'\\''", 4);
            n += 4;
        } else {
            cmd[n++] = *p;
        }
    }
    cmd[n++] = '\'';
    cmd[n] = 0;
}

static char *read_all(FILE *f, size_t max)
{
    char *buf = malloc(max + 1);
    cr_assert_not_null(buf);
    size_t n = fread(buf, 1, max, f);
    buf[n] = 0;
    return buf;
}

fbw_run fbw_run_tool(const char *program, const char *const *argv, const char *stdin_path,
                     size_t out_max)
{
    cr_assert_eq(access(program, X_OK), 0, "%s is not built: build the tools first", program);
    char errpath[] = "/tmp/fbwire-tool-err-XXXXXX";
    int efd = mkstemp(errpath);
    cr_assert(efd >= 0);
    char *cmd = malloc(CMD_MAX);
    cr_assert_not_null(cmd);
    snprintf(cmd, CMD_MAX, "exec env -u ISC_USER -u ISC_PASSWORD");
    add_arg(cmd, program);
    for (int i = 0; argv[i]; i++)
        add_arg(cmd, argv[i]);
    size_t n = strlen(cmd);
    snprintf(cmd + n, CMD_MAX - n, " 2>'%s' <'%s'", errpath, stdin_path ? stdin_path : "/dev/null");
    fbw_run r;
    double t0 = fbw_servers_now();
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "popen failed");
    r.out = read_all(p, out_max);
    int st = pclose(p);
    r.seconds = fbw_servers_now() - t0;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    FILE *e = fdopen(efd, "r");
    cr_assert_not_null(e);
    r.err = read_all(e, out_max);
    fclose(e);
    unlink(errpath);
    free(cmd);
    return r;
}

void fbw_run_free(fbw_run *r)
{
    free(r->out);
    free(r->err);
}
