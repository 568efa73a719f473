/* SPDX-License-Identifier: MIT */
/* srvcpu.c - find a local server's process from its TCP port and read its CPU time (/proc). */
#include "srvcpu.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_LISTEN_INODES 16 /* one port: a few sockets (IPv4, IPv6, SO_REUSEPORT) */
#define MAX_HOLDERS 64       /* processes sharing one listening socket (pre-forked servers) */

/* One process as /proc/PID/stat shows it: what the CPU sum and the process tree need. */
typedef struct proc_stat {
    int pid;
    int ppid;
    unsigned long long ticks;  /* utime + stime + cutime + cstime */
    unsigned long long reaped; /* cutime + cstime: grows when the process reaps a child */
    unsigned long long start;  /* starttime: tells a restarted server from the one found */
} proc_stat;

/* Record why the figure is not available, in s->why and in err. Returns code. */
static int fail(srvcpu *s, fbw_err *err, int code, const char *fmt, ...) FBW_PRINTF(4, 5);
static int fail(srvcpu *s, fbw_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
    return fbw_err_set(err, code, "server CPU not available: %s", s->why);
}

static int is_number(const char *name)
{
    if (!*name)
        return 0;
    for (; *name; name++)
        if (*name < '0' || *name > '9')
            return 0;
    return 1;
}

/* Parse one /proc/PID/stat line. The command name may hold spaces and parentheses, so the fields
 * are counted from the last ')'. Returns 0 or -1 (malformed). */
static int parse_stat(const char *line, proc_stat *p)
{
    const char *rp = strrchr(line, ')');
    if (!rp || rp[1] != ' ')
        return -1;
    p->pid = atoi(line);
    const char *f = rp + 2; /* field 3, state */
    unsigned long long v[20];
    int n = 0;
    for (int field = 3; field <= 22 && *f; field++) {
        char *end;
        if (field == 3) { /* a single character */
            f++;
        } else {
            errno = 0;
            long long x = strtoll(f, &end, 10);
            if (end == f || errno)
                return -1;
            v[n++] = (unsigned long long)(x < 0 ? 0 : x); /* ppid of init is 0; no negatives used */
            f = end;
        }
        while (*f == ' ')
            f++;
    }
    if (n < 19) /* fields 4..22 */
        return -1;
    p->ppid = (int)v[0];                       /* field 4 */
    p->reaped = v[12] + v[13];                 /* fields 16, 17 */
    p->ticks = v[10] + v[11] + p->reaped;      /* fields 14..17 */
    p->start = v[18];                          /* field 22 */
    return 0;
}

/* Read /proc/PID/stat. Returns 0, or -1 with errno set (ENOENT: the process is gone). */
static int read_stat(int pid, proc_stat *p)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    if (!ok || parse_stat(line, p) != 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* Inodes of the sockets listening on `port` in one /proc/net/tcp* table; appended to ino[]. */
static void listen_inodes(const char *table, unsigned port, unsigned long *ino, int *n)
{
    FILE *f = fopen(table, "r");
    if (!f)
        return; /* no IPv6 in this kernel: nothing listens there */
    char line[512];
    if (!fgets(line, sizeof line, f)) { /* header */
        fclose(f);
        return;
    }
    while (fgets(line, sizeof line, f) && *n < MAX_LISTEN_INODES) {
        char local[64];
        unsigned st;
        unsigned long inode;
        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
        if (sscanf(line, " %*s %63s %*s %x %*s %*s %*s %*s %*s %lu", local, &st, &inode) != 3)
            continue;
        const char *colon = strrchr(local, ':');
        if (!colon || st != 0x0A || inode == 0)
            continue;
        if (strtoul(colon + 1, NULL, 16) == port)
            ino[(*n)++] = inode;
    }
    fclose(f);
}

/* Whether /proc/PID/fd holds one of the inodes. *denied is set when the directory is unreadable. */
static int holds_socket(const char *pid, const unsigned long *ino, int nino, int *denied)
{
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/fd", pid);
    DIR *d = opendir(path);
    if (!d) {
        if (errno == EACCES || errno == EPERM)
            *denied = 1;
        return 0;
    }
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        char link[600], target[64];
        if (!is_number(e->d_name))
            continue;
        snprintf(link, sizeof link, "%s/%s", path, e->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = 0;
        unsigned long v;
        if (sscanf(target, "socket:[%lu]", &v) != 1)
            continue;
        for (int i = 0; i < nino; i++)
            if (ino[i] == v)
                found = 1;
    }
    closedir(d);
    return found;
}

/* Of the processes sharing the listening socket (children inherit it across fork), the server is
 * the one whose parent is not among them. */
static int topmost(const int *pids, int n)
{
    for (int i = 0; i < n; i++) {
        proc_stat p;
        if (read_stat(pids[i], &p) != 0)
            continue;
        int parent_holds = 0;
        for (int j = 0; j < n; j++)
            if (pids[j] == p.ppid)
                parent_holds = 1;
        if (!parent_holds)
            return pids[i];
    }
    return n ? pids[0] : 0;
}

int srvcpu_find_port(srvcpu *s, unsigned port, fbw_err *err)
{
    memset(s, 0, sizeof *s);
    s->port = port;
    unsigned long ino[MAX_LISTEN_INODES];
    int nino = 0;
    listen_inodes("/proc/net/tcp", port, ino, &nino);
    listen_inodes("/proc/net/tcp6", port, ino, &nino);
    if (nino == 0)
        return fail(s, err, FBW_E_UNSUPPORTED,
                    "no process of this machine (network namespace) listens on port %u", port);
    DIR *d = opendir("/proc");
    if (!d)
        return fail(s, err, FBW_E_IO, "cannot read /proc: %s", strerror(errno));
    int pids[MAX_HOLDERS], n = 0, denied = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < MAX_HOLDERS)
        if (is_number(e->d_name) && holds_socket(e->d_name, ino, nino, &denied))
            pids[n++] = atoi(e->d_name);
    closedir(d);
    if (n == 0)
        return fail(s, err, FBW_E_IO,
                    "%s port %u", denied ? "no permission to see which process listens on"
                                             : "no process found holding the socket of",
                    port);
    s->pid = topmost(pids, n);
    proc_stat p;
    if (read_stat(s->pid, &p) != 0)
        return fail(s, err, FBW_E_IO, "the process %d listening on port %u has gone", s->pid, port);
    s->start = p.start;
    return FBW_OK;
}

/* Whether an IPv4 address (network order) is loopback. */
static int v4_loopback(const struct in_addr *a) { return (ntohl(a->s_addr) >> 24) == 127; }

/* Whether the address equals one of this machine's interface addresses. */
static int own_interface(const struct sockaddr *sa)
{
    struct ifaddrs *list, *i;
    if (getifaddrs(&list) != 0)
        return 0;
    int found = 0;
    for (i = list; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != sa->sa_family)
            continue;
        if (sa->sa_family == AF_INET)
            found = !memcmp(&((const struct sockaddr_in *)i->ifa_addr)->sin_addr,
                            &((const struct sockaddr_in *)sa)->sin_addr, sizeof(struct in_addr));
        else
            found = !memcmp(&((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
                            &((const struct sockaddr_in6 *)sa)->sin6_addr, sizeof(struct in6_addr));
    }
    freeifaddrs(list);
    return found;
}

int srvcpu_addr_is_local(const void *addr, size_t len)
{
    const struct sockaddr *sa = addr;
    if (len >= sizeof(struct sockaddr_in) && sa->sa_family == AF_INET) {
        if (v4_loopback(&((const struct sockaddr_in *)addr)->sin_addr))
            return 1;
    } else if (len >= sizeof(struct sockaddr_in6) && sa->sa_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)addr)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a6))
            return 1;
        if (IN6_IS_ADDR_V4MAPPED(a6)) {
            struct in_addr v4;
            memcpy(&v4, &a6->s6_addr[12], sizeof v4);
            if (v4_loopback(&v4))
                return 1;
        }
    } else {
        return 0;
    }
    return own_interface(sa);
}

int srvcpu_find_peer(srvcpu *s, int fd, fbw_err *err)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    memset(s, 0, sizeof *s);
    if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0)
        return fail(s, err, FBW_E_IO, "the connection has no peer address: %s", strerror(errno));
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port;
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
    } else if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
    } else {
        return fail(s, err, FBW_E_UNSUPPORTED, "the connection is not TCP/IP (family %d)", ss.ss_family);
    }
    if (!srvcpu_addr_is_local(&ss, len))
        return fail(s, err, FBW_E_UNSUPPORTED, "server %s port %u is not on this machine", host, port);
    return srvcpu_find_port(s, port, err);
}

/* All processes' stat lines (thread-group leaders only: /proc lists no threads at top level). */
static proc_stat *all_procs(int *n)
{
    *n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return NULL;
    size_t cap = 256;
    proc_stat *v = malloc(cap * sizeof *v);
    struct dirent *e;
    while (v && (e = readdir(d)) != NULL) {
        if (!is_number(e->d_name))
            continue;
        if ((size_t)*n == cap) {
            proc_stat *nv = realloc(v, 2 * cap * sizeof *v);
            if (!nv) {
                free(v);
                v = NULL;
                break;
            }
            v = nv;
            cap *= 2;
        }
        if (read_stat(atoi(e->d_name), &v[*n]) == 0)
            (*n)++;
    }
    closedir(d);
    return v;
}

/* Mark root and its live descendants in in[] (n entries); returns how many descendants. */
static int mark_tree(const proc_stat *v, int n, int root, char *in)
{
    int count = 0;
    for (int i = 0; i < n; i++)
        in[i] = v[i].pid == root;
    /* Mark children of marked processes until nothing changes: the tree is shallow. */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < n; i++) {
            if (in[i])
                continue;
            int parent_in = 0;
            for (int j = 0; j < n && !parent_in; j++)
                parent_in = in[j] && v[j].pid == v[i].ppid;
            if (parent_in) {
                in[i] = 1;
                changed = 1;
                count++;
            }
        }
    }
    return count;
}

/* Whether the tree read in one pass over /proc is a snapshot. The pass reads the processes one by
 * one, so a child reaped between the reading of its parent and its own is in neither the live
 * processes nor the parent's reaped total (its CPU lost: a PostgreSQL run once measured 0 s), and
 * one reaped between its own reading and its parent's is in both. Either way a member of the tree
 * has gone or a member's reaped total has grown when it is read again after the pass. */
static int tree_unchanged(const proc_stat *v, int n, const char *in)
{
    for (int i = 0; i < n; i++) {
        proc_stat again;
        if (in[i] && (read_stat(v[i].pid, &again) != 0 || again.start != v[i].start ||
                      again.reaped != v[i].reaped))
            return 0;
    }
    return 1;
}

#define SNAPSHOT_TRIES 50 /* passes, 1 ms apart, before giving up: processes end only so fast */

/* One pass over /proc: the tree's ticks and live descendants. Returns 1 when the pass was a
 * snapshot, 0 when a process of the tree ended during it (read again), or an error. */
static int read_tree(srvcpu *s, unsigned long long *ticks, int *count, fbw_err *err)
{
    int n;
    proc_stat *v = all_procs(&n);
    char *in = v ? calloc((size_t)n + 1, 1) : NULL;
    if (!in) {
        free(v);
        return fail(s, err, FBW_E_IO, "cannot read /proc: %s", strerror(errno));
    }
    const proc_stat *self = NULL;
    for (int i = 0; i < n; i++)
        if (v[i].pid == s->pid)
            self = &v[i];
    int rc;
    if (!self || self->start != s->start) {
        rc = fail(s, err, FBW_E_IO, "the server process %d has %s", s->pid,
                  self ? "been replaced (the server restarted)" : "gone");
    } else {
        *count = mark_tree(v, n, s->pid, in);
        *ticks = 0;
        for (int i = 0; i < n; i++)
            if (in[i])
                *ticks += v[i].ticks;
        rc = tree_unchanged(v, n, in);
    }
    free(in);
    free(v);
    return rc;
}

int srvcpu_read(srvcpu *s, uint64_t *cpu_ns, fbw_err *err)
{
    *cpu_ns = 0;
    if (s->pid <= 0)
        return fbw_err_set(err, FBW_E_USAGE, "server CPU: no server process found (%s)",
                           s->why[0] ? s->why : "srvcpu_find_* not called");
    for (int try = 0; try < SNAPSHOT_TRIES; try++) {
        unsigned long long ticks = 0;
        int count = 0, rc = read_tree(s, &ticks, &count, err);
        if (rc < 0)
            return rc;
        if (rc == 0) { /* a child ended during the pass: read it all again */
            nanosleep(&(struct timespec){0, 1000000}, NULL);
            continue;
        }
        s->children = count;
        long hz = sysconf(_SC_CLK_TCK);
        if (hz <= 0)
            hz = 100;
        *cpu_ns = (uint64_t)(ticks * (1000000000ull / (unsigned long long)hz));
        return FBW_OK;
    }
    return fail(s, err, FBW_E_IO, "the server's processes kept ending while being read (%d tries)",
                SNAPSHOT_TRIES);
}
