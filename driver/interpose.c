/* SPDX-License-Identifier: MIT */
/* interpose.c - every libc and LuaJIT symbol the plug-in interposes, in one place.
 *
 * libfbwire-sysbench.so is LD_PRELOADed into sysbench, so a function it exports under the name of
 * a libc or LuaJIT function is the one the whole process calls. Each one here calls the next
 * definition (dlsym RTLD_NEXT, resolved once and kept in an atomic slot, as any thread may be
 * first) and adds only what is said below; errno is kept across what it adds, so the caller sees
 * the real call's outcome. In any other program, and in sysbench until the entry subscribed
 * (interpose.h), they only forward.
 *
 *   pthread_mutex_init  sysbench 1.0.20 has no way for a plug-in to add a driver: its list lives
 *                       in db_driver.c, and db_register() calls pthread_mutex_init on the mutex
 *                       of each driver it finds there. When it reaches pgsql_driver's mutex, the
 *                       entry (preload.c) appends the fbwire and fbclient drivers after it, so
 *                       the same loop registers their options and mutexes.
 *   luaL_newstate       the fallback for when that hook never fired: the entry links the drivers
 *                       and registers their options and mutexes itself, still before the test's
 *                       options are parsed.
 *   luaL_loadfile       sysbench loads its test scripts with it; the entry wraps each loaded
 *                       chunk so that, after it ran, the embedded lua/fbwire_sysbench.lua
 *                       supplies the Firebird schema to sysbench's upstream scripts.
 *   connect             a TCP socket connected by a thread that armed the tap (around
 *                       libfbclient's attach, which gives no access to its socket) is adopted by
 *                       the tap (tap.c), so fbclient's traffic is counted by the same decoder and
 *                       rule as fbwire's. EINPROGRESS counts as connected. The tap subscribes
 *                       when a thread first arms it; until then these four only forward.
 *   send, recv          the bytes an adopted socket moved go to its tap (copied; decoded when the
 *                       accounting asks). recv with MSG_PEEK feeds nothing: the bytes will be
 *                       read again.
 *   close               the tap lets go of the descriptor before the number can be reused.
 *
 * Nothing here calls into the driver by name: the entry and the tap subscribe (interpose.h). So
 * the driver's own calls of these functions (report.c's pthread_mutex_init, wire/sock.c's send and
 * recv) pass through without making a circle. */
#define _GNU_SOURCE
#include "interpose.h"

#include <dlfcn.h>
#include <errno.h>
#include <lauxlib.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static const sbdrv_ip_hooks *_Atomic HOOKS;
static const sbdrv_ip_socket_hooks *_Atomic SOCKET_HOOKS;

static void *_Atomic REAL_MUTEX_INIT, *_Atomic REAL_NEWSTATE, *_Atomic REAL_LOADFILE;
static void *_Atomic REAL_CONNECT, *_Atomic REAL_SEND, *_Atomic REAL_RECV, *_Atomic REAL_CLOSE;

/* The next definition of name, looked up once. */
static void *real(void *_Atomic *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_acquire);
    if (f == NULL) {
        f = dlsym(RTLD_NEXT, name);
        atomic_store_explicit(slot, f, memory_order_release);
    }
    return f;
}

static const sbdrv_ip_hooks *hooks(void)
{
    return atomic_load_explicit(&HOOKS, memory_order_acquire);
}

void sbdrv_ip_set_hooks(const sbdrv_ip_hooks *h)
{
    atomic_store_explicit(&HOOKS, h, memory_order_release);
}

static const sbdrv_ip_socket_hooks *socket_hooks(void)
{
    return atomic_load_explicit(&SOCKET_HOOKS, memory_order_acquire);
}

void sbdrv_ip_set_socket_hooks(const sbdrv_ip_socket_hooks *h)
{
    atomic_store_explicit(&SOCKET_HOOKS, h, memory_order_release);
}

int sbdrv_ip_real_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    int (*f)(pthread_mutex_t *, const pthread_mutexattr_t *);
    *(void **)&f = real(&REAL_MUTEX_INIT, "pthread_mutex_init");
    return f(m, a);
}

/* ---------------------------------------------------------------- sysbench: the entry's hooks */

EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    const sbdrv_ip_hooks *h = hooks();
    if (h && h->mutex_init)
        h->mutex_init(m);
    return sbdrv_ip_real_mutex_init(m, a);
}

EXPORT lua_State *luaL_newstate(void)
{
    lua_State *(*f)(void);
    *(void **)&f = real(&REAL_NEWSTATE, "luaL_newstate");
    const sbdrv_ip_hooks *h = hooks();
    if (h && h->new_state)
        h->new_state();
    return f ? f() : NULL;
}

EXPORT int luaL_loadfile(lua_State *L, const char *filename)
{
    int (*f)(lua_State *, const char *);
    *(void **)&f = real(&REAL_LOADFILE, "luaL_loadfile");
    if (f == NULL)
        return LUA_ERRFILE;
    int rc = f(L, filename);
    const sbdrv_ip_hooks *h = hooks();
    if (rc == 0 && h && h->loaded)
        h->loaded(L, filename);
    return rc;
}

/* ---------------------------------------------------------------- libfbclient: the tap */

EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    int (*f)(int, const struct sockaddr *, socklen_t);
    *(void **)&f = real(&REAL_CONNECT, "connect");
    int rc = f(fd, addr, len);
    const sbdrv_ip_socket_hooks *h = socket_hooks();
    if (h && addr && (addr->sa_family == AF_INET || addr->sa_family == AF_INET6) &&
        (rc == 0 || errno == EINPROGRESS)) {
        int keep = errno;
        h->connected(fd);
        errno = keep;
    }
    return rc;
}

/* What a send (from_client 1) or recv (0) of k bytes moved, to the tap watching fd, if any. */
static void moved(int fd, int from_client, const void *buf, ssize_t k)
{
    const sbdrv_ip_socket_hooks *h = socket_hooks();
    struct sbdrv_tap *t = k > 0 && h ? h->watched(fd) : NULL;
    if (t) {
        int keep = errno;
        h->moved(t, from_client, buf, (size_t)k);
        errno = keep;
    }
}

EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    ssize_t (*f)(int, const void *, size_t, int);
    *(void **)&f = real(&REAL_SEND, "send");
    ssize_t k = f(fd, buf, n, flags);
    moved(fd, 1, buf, k);
    return k;
}

EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    ssize_t (*f)(int, void *, size_t, int);
    *(void **)&f = real(&REAL_RECV, "recv");
    ssize_t k = f(fd, buf, n, flags);
    if (!(flags & MSG_PEEK))
        moved(fd, 0, buf, k);
    return k;
}

EXPORT int close(int fd)
{
    int (*f)(int);
    *(void **)&f = real(&REAL_CLOSE, "close");
    const sbdrv_ip_socket_hooks *h = socket_hooks();
    struct sbdrv_tap *t = h ? h->watched(fd) : NULL;
    if (t)
        h->closing(t);
    return f(fd);
}
