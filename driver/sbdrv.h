/* SPDX-License-Identifier: MIT */
/* sbdrv.h - the sysbench drivers `fbwire` and `fbclient`: drv_ops over a backend (backend.h).
 *
 * sbdrv.c and its parts (sbdrv_int.h) implement every 1.0.20 driver op once, generic over the
 * backend: options, SQL dialect (dialect.h), emulated prepared statements (--db-ps-mode=disable),
 * transactions, buffered results, counters, error classes and reconnects. It does not find or link itself into
 * sysbench: preload.c resolves sysbench's symbols, hands them over with sbdrv_setup() and
 * links the driver objects returned by sbdrv_sysbench_driver() into sysbench's driver list. */
#ifndef SBDRV_H
#define SBDRV_H

#include "sb_abi.h"

/* Functions and data of the running sysbench executable, looked up with dlsym. */
typedef struct sbdrv_sb_host {
    void (*log_text)(int prio, const char *fmt, ...);
    char *(*get_string)(const char *name);
    int (*get_int)(const char *name);
    int (*get_flag)(const char *name);
    sb_db_globals *db_globals;
    const volatile int *sb_error; /* sb_globals.error: non-zero once any thread failed */
} sbdrv_sb_host;

/* sysbench log priorities (log_text). */
enum { SBDRV_SB_LOG_FATAL = 0, SBDRV_SB_LOG_ALERT = 1, SBDRV_SB_LOG_WARNING = 2,
       SBDRV_SB_LOG_NOTICE = 3, SBDRV_SB_LOG_INFO = 4, SBDRV_SB_LOG_DEBUG = 5 };

enum { SBDRV_FBWIRE = 0, SBDRV_FBCLIENT = 1, SBDRV_COUNT = 2 };

/* Record the host table (copied). Call once, before any driver is linked into sysbench. */
void sbdrv_setup(const sbdrv_sb_host *host);
/* The driver object `which` (SBDRV_*), with static storage: sysbench links it into its
 * list and writes its listitem, initialized and mutex fields. */
sb_driver *sbdrv_sysbench_driver(int which);

#endif
