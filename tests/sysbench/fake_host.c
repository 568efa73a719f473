/* SPDX-License-Identifier: MIT */
/* fake_host.c - a program that looks like sysbench from the outside (the exported symbols
 * the plug-in checks) but is not 1.0.20: abi-refusal.sh preloads the plug-in into it and
 * expects a clear refusal on stderr while the program itself runs normally.
 * FAKE_LUA_OK: the embedded-Lua sizes match 1.0.20 but the built-in drivers do not. */
#include <stddef.h>
#include <stdio.h>

#define EXPORT __attribute__((visibility("default"), used))

EXPORT int register_driver_pgsql(void *list) { (void)list; return 0; }
EXPORT int register_driver_mysql(void *list) { (void)list; return 0; }
EXPORT void log_text(int prio, const char *fmt, ...) { (void)prio; (void)fmt; }
EXPORT char *sb_get_value_string(const char *n) { (void)n; return NULL; }
EXPORT int sb_get_value_int(const char *n) { (void)n; return 0; }
EXPORT int sb_get_value_flag(const char *n) { (void)n; return 0; }
EXPORT int sb_register_arg_set(void *set) { (void)set; return 0; }
EXPORT void *db_create(const char *n) { (void)n; return NULL; }
EXPORT int db_bulk_insert_init(void *c, const char *q, size_t l) { (void)c; (void)q; (void)l; return 1; }
EXPORT char db_globals[24];
EXPORT int sb_globals[16];
#ifdef FAKE_LUA_OK
EXPORT size_t sysbench_sql_lua_len = 14203, sysbench_lua_len = 5463, sysbench_cmdline_lua_len = 6310;
#else
EXPORT size_t sysbench_sql_lua_len = 15000, sysbench_lua_len = 5463, sysbench_cmdline_lua_len = 6310;
#endif

int main(void)
{
    puts("fake host ran");
    return 0;
}
