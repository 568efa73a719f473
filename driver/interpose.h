/* SPDX-License-Identifier: MIT */
/* interpose.h - what the plug-in's interpositions of libc and LuaJIT symbols (interpose.c) offer
 * the rest of the driver. The sysbench entry (preload.c) subscribes to the three that serve it;
 * the four socket interpositions call the tap's socket side (tap.h) themselves. Until a
 * subscription, and in any program other than sysbench, every interposition only forwards. */
#ifndef FBW_INTERPOSE_H
#define FBW_INTERPOSE_H

#include <lua.h>
#include <pthread.h>

/* What the entry does inside the interposed calls; a NULL member is skipped. */
typedef struct fbw_ip_hooks {
    /* Before the real pthread_mutex_init(m). */
    void (*mutex_init)(pthread_mutex_t *m);
    /* Before the real luaL_newstate(). */
    void (*new_state)(void);
    /* After luaL_loadfile(L, filename) loaded a chunk (it is on top of L's stack). */
    void (*loaded)(lua_State *L, const char *filename);
} fbw_ip_hooks;

/* Subscribe; h has static storage. Call once, before main (the library constructor), while the
 * process has one thread. */
void fbw_ip_set_hooks(const fbw_ip_hooks *h);

/* The real pthread_mutex_init, past the hook. */
int fbw_ip_real_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);

#endif
