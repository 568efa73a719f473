/* SPDX-License-Identifier: MIT */
/* stall.c - bounded SIGSTOP of a local stock test server (see stall.h). */
#include "stall.h"

#include "srvcpu.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t held_pid; /* what atexit must resume */

static void resume_at_exit(void)
{
    if (held_pid > 0)
        kill((pid_t)held_pid, SIGCONT);
}

static int shared_port(unsigned port)
{
    const char *keys[] = {"FBW_FB3_PORT", "FBW_FB4_PORT"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = getenv(keys[i]);
        if (v && (unsigned)atoi(v) == port)
            return 1;
    }
    return port == 3050 || port == 3051; /* the shared servers' ports when no env says so */
}

/* The watchdog: stop the server, report, wait for a release signal or max_ms, resume. */
static void watchdog(int pid, int max_ms, int fd)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    setsid();
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0), dup2(null, 1), dup2(null, 2);
        if (null > 2)
            close(null);
    }
    int32_t me = (int32_t)getpid();
    int ok = kill(pid, SIGSTOP) == 0;
    int32_t msg[2] = {ok ? me : -errno, 0};
    if (write(fd, msg, sizeof msg) != (ssize_t)sizeof msg || !ok) {
        kill(pid, SIGCONT);
        _exit(1);
    }
    close(fd);
    struct timespec ts = {max_ms / 1000, (long)(max_ms % 1000) * 1000000L};
    while (sigtimedwait(&set, NULL, &ts) < 0 && errno == EINTR) {
    }
    kill(pid, SIGCONT);
    _exit(0);
}

int fbw_stall_begin(fbw_stall *st, unsigned port, int max_ms, fbw_err *err)
{
    memset(st, 0, sizeof *st);
    if (max_ms < 1 || max_ms > 60000)
        return fbw_err_set(err, FBW_E_USAGE, "stall: max_ms %d out of 1..60000", max_ms);
    if (shared_port(port))
        return fbw_err_set(err, FBW_E_USAGE, "stall: port %u is a shared server: never stopped",
                           port);
    srvcpu srv;
    int rc = srvcpu_find_port(&srv, port, err);
    if (rc)
        return rc;
    static int registered;
    if (!registered++)
        atexit(resume_at_exit);
    int fds[2];
    if (pipe(fds) != 0)
        return fbw_err_set_errno(err, errno, "stall: pipe");
    pid_t mid = fork();
    if (mid < 0) {
        close(fds[0]), close(fds[1]);
        return fbw_err_set_errno(err, errno, "stall: fork");
    }
    if (mid == 0) { /* the middle child exits at once, so the watchdog is nobody's child here */
        close(fds[0]);
        if (fork() == 0)
            watchdog(srv.pid, max_ms, fds[1]);
        _exit(0);
    }
    close(fds[1]);
    waitpid(mid, NULL, 0);
    held_pid = srv.pid;
    int32_t msg[2] = {0, 0};
    struct pollfd p = {.fd = fds[0], .events = POLLIN, .revents = 0};
    ssize_t got = poll(&p, 1, 5000) == 1 ? read(fds[0], msg, sizeof msg) : -1;
    close(fds[0]);
    if (got != (ssize_t)sizeof msg || msg[0] <= 0) {
        kill(srv.pid, SIGCONT);
        held_pid = 0;
        return fbw_err_set(err, FBW_E_IO, "stall: could not stop pid %d on port %u (%s)", srv.pid,
                           port, msg[0] < 0 ? strerror(-msg[0]) : "no word from the watchdog");
    }
    st->server_pid = srv.pid;
    st->watchdog_pid = msg[0];
    return FBW_OK;
}

void fbw_stall_end(fbw_stall *st)
{
    if (st->server_pid > 0)
        kill(st->server_pid, SIGCONT);
    if (st->watchdog_pid > 0)
        kill(st->watchdog_pid, SIGTERM);
    if (held_pid == st->server_pid)
        held_pid = 0;
    st->server_pid = st->watchdog_pid = 0;
}
