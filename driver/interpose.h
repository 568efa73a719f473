/* SPDX-License-Identifier: MIT */
/* interpose.h - what the plug-in's interpositions of libc and LuaJIT symbols (interpose.c) offer
 * the rest of the driver: two subscriptions. The sysbench entry (preload.c) subscribes to the
 * three calls that serve it, the tap (tap.c) to the four socket calls. Until a subscription, and
 * in any program other than sysbench, every interposition only forwards. interpose.c calls
 * nothing of the driver by name, so it sits below everything that calls libc. */
#ifndef SBDRV_INTERPOSE_H
#define SBDRV_INTERPOSE_H

#include <lua.h>
#include <pthread.h>
#include <stddef.h>

struct sbdrv_tap;

/* What the entry does inside the interposed calls; a NULL member is skipped. */
typedef struct sbdrv_ip_hooks {
    /* Before the real pthread_mutex_init(m). */
    void (*mutex_init)(pthread_mutex_t *m);
    /* Before the real luaL_newstate(). */
    void (*new_state)(void);
    /* After luaL_loadfile(L, filename) loaded a chunk (it is on top of L's stack). */
    void (*loaded)(lua_State *L, const char *filename);
} sbdrv_ip_hooks;

/* Subscribe; h has static storage. Call once, before main (the library constructor), while the
 * process has one thread. */
void sbdrv_ip_set_hooks(const sbdrv_ip_hooks *h);

/* What the tap does inside the socket calls. The interpositions keep errno across connected
 * and moved, so the caller sees the real call's outcome. */
typedef struct sbdrv_ip_socket_hooks {
    /* connect(fd) to an AF_INET/AF_INET6 address succeeded or began (EINPROGRESS). */
    void (*connected)(int fd);
    /* The tap watching fd, or NULL (the common case: the socket is not one to watch). */
    struct sbdrv_tap *(*watched)(int fd);
    /* A send (from_client 1) or recv (0; never a MSG_PEEK) moved n > 0 bytes on t's socket. */
    void (*moved)(struct sbdrv_tap *t, int from_client, const void *p, size_t n);
    /* t's socket is about to be closed. */
    void (*closing)(struct sbdrv_tap *t);
} sbdrv_ip_socket_hooks;

/* Subscribe the tap; h has static storage. Call once, before the first socket is to be watched
 * (the tap does it when a thread first arms). */
void sbdrv_ip_set_socket_hooks(const sbdrv_ip_socket_hooks *h);

/* The real pthread_mutex_init, past the hook. */
int sbdrv_ip_real_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);

#endif
