/* SPDX-License-Identifier: MIT */
/* preload.c - entry of libfbwire-sysbench.so: verify the host is sysbench 1.0.20, link the
 * fbwire/fbclient drivers into its driver list and hook the Lua script loader.
 *
 * Everything of sysbench is looked up with dlsym at run time; in any other program the
 * constructor finds no sysbench symbols and the library stays passive (the interpositions of
 * interpose.c only forward). Once sysbench 1.0.20 is verified, the constructor subscribes to
 * three of them (sbdrv_ip_set_hooks). Linking (sysbench 1.0.20 src/db_driver.c): the constructor
 * learns &pgsql_driver through the exported register_driver_pgsql(); when db_register() calls
 * pthread_mutex_init on that driver's mutex, our drivers are appended after it, so the same loop
 * registers their options. luaL_newstate is the fallback if that never happened. Each chunk
 * luaL_loadfile loads is wrapped so that, after it ran, lua/fbwire_sysbench.lua (embedded) can
 * supply the Firebird schema.
 * Process-wide state lives in one struct written by the constructor (before main, one thread)
 * and by the linking step (main thread, before any worker exists). */
#define _GNU_SOURCE
#include "interpose.h"
#include "sbdrv.h"

#include <dlfcn.h>
#include <lauxlib.h>
#include <lua.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* lua/fbwire_sysbench.lua, embedded by the build (fbwire_sysbench_lua.c). */
extern const unsigned char sbdrv_sysbench_lua[];
extern const size_t sbdrv_sysbench_lua_len;

typedef struct lua_api {
    int (*gettop)(lua_State *);
    void (*settop)(lua_State *, int);
    void (*pushvalue)(lua_State *, int);
    void (*insert)(lua_State *, int);
    void (*call)(lua_State *, int, int);
    void (*pushcclosure)(lua_State *, lua_CFunction, int);
    void (*pushstring)(lua_State *, const char *);
    void (*getfield)(lua_State *, int, const char *);
    void (*setfield)(lua_State *, int, const char *);
    int (*type)(lua_State *, int);
    int (*error)(lua_State *);
    int (*loadbuffer)(lua_State *, const char *, size_t, const char *);
} lua_api;

typedef struct plugin {
    int active;               /* verified sysbench 1.0.20 */
    int linked;               /* our drivers are in sysbench's list */
    sb_driver *pg;            /* sysbench's static pgsql_driver */
    char *db_globals;
    int (*register_arg_set)(sb_arg *);
    lua_api lua;
} plugin;

static plugin P;

static void refuse(const char *why)
{
    fprintf(stderr, "libfbwire-sysbench: not activating the fbwire/fbclient drivers: %s\n", why);
    P.active = 0;
}

/* ---------------------------------------------------------------- verification */

static void *need(const char *name, int *missing)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    if (p == NULL && *missing == 0) {
        *missing = 1;
        fprintf(stderr, "libfbwire-sysbench: sysbench symbol %s not found\n", name);
    }
    return p;
}

/* Run a register_driver_* function on a scratch list and return the driver it linked. */
static sb_driver *probe_driver(int (*reg)(sb_list_item *), const char *sname)
{
    sb_list_item scratch = {&scratch, &scratch};
    if (reg(&scratch) != 0 || scratch.next_p == &scratch || scratch.next_p != scratch.prev_p)
        return NULL;
    sb_driver *d = sb_driver_of(scratch.next_p);
    d->listitem.next_p = d->listitem.prev_p = &d->listitem; /* no pointer into this stack */
    if (d->sname == NULL || strcmp(d->sname, sname) != 0 || d->ops.init == NULL ||
        d->ops.connect == NULL || d->ops.query == NULL || d->ops.done == NULL)
        return NULL;
    return d;
}

static const char *verify(sbdrv_sb_host *host)
{
    int missing = 0;
    int (*reg_pg)(sb_list_item *);
    int (*reg_my)(sb_list_item *);
    *(void **)&reg_pg = need("register_driver_pgsql", &missing);
    *(void **)&reg_my = need("register_driver_mysql", &missing);
    *(void **)&host->log_text = need("log_text", &missing);
    *(void **)&host->get_string = need("sb_get_value_string", &missing);
    *(void **)&host->get_int = need("sb_get_value_int", &missing);
    *(void **)&host->get_flag = need("sb_get_value_flag", &missing);
    *(void **)&P.register_arg_set = need("sb_register_arg_set", &missing);
    host->db_globals = need("db_globals", &missing);
    host->sb_error = need("sb_globals", &missing);
    const size_t *sql_len = need("sysbench_sql_lua_len", &missing);
    const size_t *main_len = need("sysbench_lua_len", &missing);
    const size_t *cmd_len = need("sysbench_cmdline_lua_len", &missing);
    (void)need("db_create", &missing);
    (void)need("db_bulk_insert_init", &missing);
    if (missing)
        return "the sysbench executable lacks expected symbols";
    if (*sql_len != SB_SQL_LUA_LEN || *main_len != SB_MAIN_LUA_LEN ||
        *cmd_len != SB_CMDLINE_LUA_LEN)
        return "this is not sysbench 1.0.20 (its embedded Lua differs); only the 1.0.20 "
               "driver ABI is supported";
    sb_driver *my = probe_driver(reg_my, "mysql");
    P.pg = probe_driver(reg_pg, "pgsql");
    if (my == NULL || P.pg == NULL)
        return "sysbench's built-in drivers do not have the 1.0.20 layout";
    if (my->ops.reconnect == NULL || P.pg->ops.reconnect != NULL)
        return "sysbench's built-in driver ops do not match the 1.0.20 table";
    P.db_globals = (char *)host->db_globals;
    return NULL;
}

static const char *resolve_lua(lua_api *l)
{
    int missing = 0;
    *(void **)&l->gettop = need("lua_gettop", &missing);
    *(void **)&l->settop = need("lua_settop", &missing);
    *(void **)&l->pushvalue = need("lua_pushvalue", &missing);
    *(void **)&l->insert = need("lua_insert", &missing);
    *(void **)&l->call = need("lua_call", &missing);
    *(void **)&l->pushcclosure = need("lua_pushcclosure", &missing);
    *(void **)&l->pushstring = need("lua_pushstring", &missing);
    *(void **)&l->getfield = need("lua_getfield", &missing);
    *(void **)&l->setfield = need("lua_setfield", &missing);
    *(void **)&l->type = need("lua_type", &missing);
    *(void **)&l->error = need("lua_error", &missing);
    *(void **)&l->loadbuffer = need("luaL_loadbuffer", &missing);
    return missing ? "LuaJIT entry points not found" : NULL;
}

/* What the constructor subscribes to (interpose.h); defined with the linking and the Lua hook. */
static void on_mutex_init(pthread_mutex_t *m);
static void on_new_state(void);
static void on_loaded(lua_State *L, const char *filename);
static const sbdrv_ip_hooks HOOKS = {on_mutex_init, on_new_state, on_loaded};

__attribute__((constructor)) static void sbdrv_preload_init(void)
{
    if (dlsym(RTLD_DEFAULT, "register_driver_pgsql") == NULL)
        return; /* not sysbench: stay passive */
    sbdrv_sb_host host;
    memset(&host, 0, sizeof host);
    const char *why = verify(&host);
    if (why == NULL)
        why = resolve_lua(&P.lua);
    if (why != NULL) {
        refuse(why);
        return;
    }
    sbdrv_setup(&host);
    P.active = 1;
    sbdrv_ip_set_hooks(&HOOKS);
}

/* ---------------------------------------------------------------- linking the drivers */

static void add_tail(sb_list_item *head, sb_list_item *it)
{
    it->next_p = head;
    it->prev_p = head->prev_p;
    head->prev_p->next_p = it;
    head->prev_p = it;
}

/* Append our drivers to the list that pgsql_driver is in (its head is next after pgsql). */
static int link_drivers(void)
{
    sb_list_item *head = P.pg->listitem.next_p;
    if (head != (sb_list_item *)(void *)(P.db_globals + SB_DRIVER_LIST_HEAD_OFFSET) ||
        head->next_p == head || strcmp(sb_driver_of(head->next_p)->sname, "mysql") != 0) {
        refuse("sysbench's driver list is not where 1.0.20 keeps it");
        return 0;
    }
    for (int i = 0; i < SBDRV_COUNT; i++)
        add_tail(head, &sbdrv_sysbench_driver(i)->listitem);
    __atomic_store_n(&P.linked, 1, __ATOMIC_RELEASE);
    return 1;
}

/* pthread_mutex_init(m) is about to run: when m is pgsql_driver's, db_register() is walking the
 * driver list. */
static void on_mutex_init(pthread_mutex_t *m)
{
    if (P.active && !__atomic_load_n(&P.linked, __ATOMIC_ACQUIRE) && P.pg != NULL &&
        m == &P.pg->mutex)
        (void)link_drivers(); /* db_register's loop then registers options and mutexes */
}

/* luaL_newstate is about to run. Fallback: the mutex hook did not fire. Still before the test
 * options are parsed. */
static void on_new_state(void)
{
    if (P.active && !__atomic_load_n(&P.linked, __ATOMIC_ACQUIRE) && link_drivers()) {
        for (int i = 0; i < SBDRV_COUNT; i++) {
            sb_driver *d = sbdrv_sysbench_driver(i);
            P.register_arg_set(d->args);
            d->initialized = false;
            sbdrv_ip_real_mutex_init(&d->mutex, NULL);
        }
    }
}

/* ---------------------------------------------------------------- Lua hook */

#define MODULE_KEY "fbwire.sysbench"

/* Push the module table of fbwire_sysbench.lua, loading it once per Lua state. */
static void push_module(lua_State *L)
{
    const lua_api *l = &P.lua;
    l->getfield(L, LUA_REGISTRYINDEX, MODULE_KEY);
    if (l->type(L, -1) == LUA_TTABLE)
        return;
    l->settop(L, -2);
    const char *path = getenv("FBWIRE_SYSBENCH_LUA"); /* development override */
    int rc = path && path[0] ? luaL_loadfile(L, path)
                             : l->loadbuffer(L, (const char *)sbdrv_sysbench_lua, sbdrv_sysbench_lua_len,
                                             "=fbwire_sysbench.lua");
    if (rc != 0)
        l->error(L);
    l->call(L, 0, 1);
    l->pushvalue(L, -1);
    l->setfield(L, LUA_REGISTRYINDEX, MODULE_KEY);
}

/* Runs a script chunk (upvalue 1) with the caller's arguments, then the module's
 * after_chunk(filename) (upvalue 2), and returns the chunk's results. */
static int chunk_wrapper(lua_State *L)
{
    const lua_api *l = &P.lua;
    int nargs = l->gettop(L);
    l->pushvalue(L, lua_upvalueindex(1));
    l->insert(L, 1);
    l->call(L, nargs, LUA_MULTRET);
    int nres = l->gettop(L);
    push_module(L);
    l->getfield(L, -1, "after_chunk");
    l->pushvalue(L, lua_upvalueindex(2));
    l->call(L, 1, 0);
    l->settop(L, nres);
    return nres;
}

/* luaL_loadfile(L, filename) loaded a chunk: wrap it (not the development override of
 * push_module, which is the module itself). */
static void on_loaded(lua_State *L, const char *filename)
{
    if (P.active && __atomic_load_n(&P.linked, __ATOMIC_ACQUIRE)) {
        const char *dev = getenv("FBWIRE_SYSBENCH_LUA");
        if (!(dev && filename && strcmp(dev, filename) == 0)) {
            P.lua.pushstring(L, filename ? filename : "stdin");
            P.lua.pushcclosure(L, chunk_wrapper, 2);
        }
    }
}

