/* SPDX-License-Identifier: MIT */
/* capture.c - loopback captures with tcpdump (see capture.h). */
#include "capture.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int listening(const char *errlog)
{
    char buf[512] = "";
    FILE *f = fopen(errlog, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    return strstr(buf, "listening on") != NULL;
}

pid_t fbw_tcpdump_start(const char *file, const char *filter, const char *errlog)
{
    /* A large buffer: other tests may load the server meanwhile, and a lost segment would make
     * the connection undecodable. */
    char *argv[] = {"tcpdump",        "-i",           "lo", "-s",          "0",
                    "-B",             "65536",        "-U", "--immediate-mode",
                    "-w",             (char *)file,   (char *)filter,      NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, errlog, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, "tcpdump", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    for (int i = 0; i < 200 && !listening(errlog); i++)
        usleep(20000);
    return pid;
}

void fbw_tcpdump_stop(pid_t pid)
{
    usleep(500000);
    kill(pid, SIGINT);
    int st;
    waitpid(pid, &st, 0);
}

int fbw_capture_dir(const char *name, char *out, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(out, size, "%s/fbwire-test-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
    if (n < 0 || (size_t)n >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!mkdtemp(out))
        return -1;
    return chmod(out, 0777);
}
