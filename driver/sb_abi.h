/* SPDX-License-Identifier: MIT */
/* sb_abi.h - the DB-driver ABI of sysbench 1.0.20 (Debian 12 binary), declared independently.
 *
 * Layouts follow sysbench 1.0.20's src/db_driver.h (checked against the Debian 12 binary) and are
 * pinned with static asserts, so a wrong field breaks the build instead of the benchmark. Only
 * x86_64/LP64 is supported. This header declares types only: symbols of the sysbench executable
 * are never referenced directly (they are looked up at run time by preload.c), so the plug-in
 * stays loadable into other programs.
 * Master (1.1.0) is NOT compatible: its drv_ops_t has 20 entries. */
#ifndef SBDRV_SB_ABI_H
#define SBDRV_SB_ABI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if !defined(__x86_64__) || !defined(__LP64__)
#error "the sysbench 1.0.20 ABI is only declared for x86_64 LP64"
#endif

typedef enum { SB_DB_ERROR_NONE = 0, SB_DB_ERROR_IGNORABLE = 1, SB_DB_ERROR_FATAL = 2 } sb_db_error;

typedef enum {
    SB_CNT_OTHER = 0, SB_CNT_READ = 1, SB_CNT_WRITE = 2, SB_CNT_EVENT = 3,
    SB_CNT_ERROR = 4, SB_CNT_RECONNECT = 5, SB_CNT_MAX = 6
} sb_counter_type;

typedef enum {
    SB_TYPE_NONE = 0, SB_TYPE_TINYINT, SB_TYPE_SMALLINT, SB_TYPE_INT, SB_TYPE_BIGINT,
    SB_TYPE_FLOAT, SB_TYPE_DOUBLE, SB_TYPE_TIME, SB_TYPE_DATE, SB_TYPE_DATETIME,
    SB_TYPE_TIMESTAMP, SB_TYPE_CHAR, SB_TYPE_VARCHAR
} sb_bind_type;

typedef enum { SB_CONN_READY = 0, SB_CONN_RESULT_SET = 1, SB_CONN_INVALID = 2 } sb_conn_state;
typedef enum { SB_PS_MODE_AUTO = 0, SB_PS_MODE_DISABLE = 1 } sb_ps_mode;

typedef enum {
    SB_ARG_TYPE_NULL = 0, SB_ARG_TYPE_BOOL, SB_ARG_TYPE_INT, SB_ARG_TYPE_SIZE, SB_ARG_TYPE_DOUBLE,
    SB_ARG_TYPE_STRING, SB_ARG_TYPE_LIST, SB_ARG_TYPE_FILE, SB_ARG_TYPE_MAX
} sb_arg_type;

/* Intrusive circular list; an empty head points to itself. */
typedef struct sb_list_item {
    struct sb_list_item *next_p;
    struct sb_list_item *prev_p;
} sb_list_item;

typedef struct sb_arg {
    const char *name;  /* without "--"; '-' and '_' are equivalent */
    const char *desc;
    const char *value; /* default, as text, or NULL */
    sb_arg_type type;
    bool (*validate)(const char *name, const char *value);
} sb_arg;

typedef struct sb_drv_caps {
    char multi_rows_insert, prepared_statements, auto_increment, needs_commit, serial, unsigned_int;
} sb_drv_caps;

typedef struct sb_bind {
    sb_bind_type type;
    void *buffer;
    unsigned long *data_len; /* may be NULL */
    unsigned long max_len;
    char *is_null;           /* may be NULL */
} sb_bind;

typedef struct sb_time { unsigned int year, month, day, hour, minute, second; } sb_time;

typedef struct sb_value {
    uint32_t len;
    const char *ptr; /* NULL = SQL NULL */
} sb_value;

typedef struct sb_row {
    void *ptr;         /* free for the driver */
    sb_value *values;  /* allocated by sysbench, nfields entries */
} sb_row;

struct sb_stmt;

typedef struct sb_result {
    sb_counter_type counter; /* set by the driver on every query/execute */
    uint32_t nrows;
    uint32_t nfields;
    struct sb_stmt *statement;
    void *ptr;               /* driver's result handle */
    sb_row row;
} sb_result;

struct sb_driver;

typedef struct sb_conn {
    sb_db_error error;
    int sql_errno;
    const char *sql_state;   /* non-NULL on error, owned by the driver */
    const char *sql_errmsg;  /* non-NULL on error, owned by the driver */
    struct sb_driver *driver;
    void *ptr;               /* driver's connection data */
    sb_result rs;
    sb_conn_state state;
    int thread_id;
    unsigned int bulk_cnt, bulk_buflen;
    char *bulk_buffer;
    unsigned int bulk_ptr, bulk_values, bulk_commit_cnt, bulk_commit_max;
} sb_conn;

typedef struct sb_stmt {
    sb_conn *connection;
    char *query;               /* free()d by sysbench in db_close when non-NULL */
    sb_bind *bound_param;      /* free()d by sysbench in db_close when non-NULL */
    unsigned int bound_param_len;
    sb_bind *bound_res;
    sb_bind *bound_res_len;    /* sic: a pointer in 1.0.20 */
    char emulated;
    sb_counter_type counter;   /* driver-private in 1.0.20 */
    void *ptr;                 /* driver's statement data */
} sb_stmt;

typedef struct sb_drv_ops {
    int (*init)(void);
    int (*thread_init)(int thread_id);
    int (*describe)(sb_drv_caps *caps);
    int (*connect)(sb_conn *con);
    int (*disconnect)(sb_conn *con);
    int (*reconnect)(sb_conn *con);
    int (*prepare)(sb_stmt *stmt, const char *query, size_t len);
    int (*bind_param)(sb_stmt *stmt, sb_bind *params, size_t n);
    int (*bind_result)(sb_stmt *stmt, sb_bind *results, size_t n);
    sb_db_error (*execute)(sb_stmt *stmt, sb_result *rs);
    int (*fetch)(sb_result *rs);
    int (*fetch_row)(sb_result *rs, sb_row *row);
    int (*free_results)(sb_result *rs);
    int (*close)(sb_stmt *stmt);
    sb_db_error (*query)(sb_conn *con, const char *query, size_t len, sb_result *rs);
    int (*thread_done)(int thread_id);
    int (*done)(void);
} sb_drv_ops;

typedef struct sb_driver {
    const char *sname;  /* --db-driver= name, also Lua drv:name() */
    const char *lname;
    sb_arg *args;
    sb_drv_ops ops;
    sb_list_item listitem;
    bool initialized;
    pthread_mutex_t mutex;
} sb_driver;

typedef struct sb_db_globals {
    sb_ps_mode ps_mode;
    char *driver;
    unsigned char debug;
} sb_db_globals;

/* Offsets checked against the disassembly of the Debian 12 sysbench binary. */
_Static_assert(sizeof(sb_list_item) == 16, "sb_list_item");
_Static_assert(sizeof(sb_arg) == 40 && offsetof(sb_arg, validate) == 32, "sb_arg");
_Static_assert(sizeof(sb_drv_caps) == 6, "drv_caps_t");
_Static_assert(sizeof(sb_bind) == 40 && offsetof(sb_bind, is_null) == 32, "db_bind_t");
_Static_assert(sizeof(sb_time) == 24, "db_time_t");
_Static_assert(sizeof(sb_value) == 16 && offsetof(sb_value, ptr) == 8, "db_value_t");
_Static_assert(sizeof(sb_row) == 16, "db_row_t");
_Static_assert(sizeof(sb_result) == 48 && offsetof(sb_result, statement) == 16 &&
               offsetof(sb_result, ptr) == 24 && offsetof(sb_result, row) == 32, "db_result_t");
_Static_assert(sizeof(sb_conn) == 128 && offsetof(sb_conn, ptr) == 0x20 &&
               offsetof(sb_conn, rs) == 0x28 && offsetof(sb_conn, state) == 0x58 &&
               offsetof(sb_conn, thread_id) == 0x5c && offsetof(sb_conn, bulk_buffer) == 0x68 &&
               offsetof(sb_conn, bulk_commit_max) == 0x7c, "db_conn_t");
_Static_assert(sizeof(sb_stmt) == 64 && offsetof(sb_stmt, emulated) == 0x30 &&
               offsetof(sb_stmt, counter) == 0x34 && offsetof(sb_stmt, ptr) == 0x38, "db_stmt_t");
_Static_assert(sizeof(sb_drv_ops) == 17 * sizeof(void *), "drv_ops_t has 17 entries in 1.0.20");
_Static_assert(offsetof(sb_driver, ops) == 0x18 && offsetof(sb_driver, listitem) == 0xa0 &&
               offsetof(sb_driver, initialized) == 0xb0 && offsetof(sb_driver, mutex) == 0xb8 &&
               sizeof(sb_driver) == 224, "db_driver_t");
_Static_assert(offsetof(sb_driver, ops) + offsetof(sb_drv_ops, query) == 0x88 &&
               offsetof(sb_driver, ops) + offsetof(sb_drv_ops, done) == 0x98, "op offsets");
_Static_assert(sizeof(sb_db_globals) == 24, "db_globals_t");

/* Build-specific facts of the Debian binary, checked at run time before anything is linked. */
#define SB_DRIVER_LIST_HEAD_OFFSET 0x30 /* static `drivers` list head = &db_globals + 0x30 */
#define SB_SQL_LUA_LEN 14203            /* sysbench_sql_lua_len of 1.0.20 */
#define SB_MAIN_LUA_LEN 5463            /* sysbench_lua_len of 1.0.20 */
#define SB_CMDLINE_LUA_LEN 6310         /* sysbench_cmdline_lua_len of 1.0.20 */

/* From a list item to the driver that holds it. */
static inline sb_driver *sb_driver_of(sb_list_item *it)
{
    return (sb_driver *)(void *)((char *)it - offsetof(sb_driver, listitem));
}

#endif
