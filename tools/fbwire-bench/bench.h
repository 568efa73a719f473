/* SPDX-License-Identifier: MIT */
/* bench.h - the parts of fbwire-bench every benchmark mode shares: common options, connecting with a
 * given wire setup, running one prepared statement to the end, clocks (wall and process CPU) and
 * medians. A mode (crypt.c, ...) registers its options and a run function in main.c's table.
 * Nothing here asserts timings or decides what is fast: modes measure and print. */
#ifndef BENCHTOOL_H
#define BENCHTOOL_H

#include "fbwire.h"

#include <stdint.h>
#include <stdio.h>

/* Options every mode takes. */
typedef struct benchtool_opts {
    const char *db;       /* DSN: host[/port]:path */
    const char *user;     /* default $ISC_USER */
    const char *password; /* default $ISC_PASSWORD; never printed */
    int runs;             /* repetitions; modes report the median */
    int timeout_s;        /* per wait for the server */
    const char *keylog;   /* key log file (wire/keylog.h); NULL: $FBWIRE_KEYLOGFILE */
    int row_format;       /* FBW_ROW_FORMAT_* (wire/msg.h), default compact */
} benchtool_opts;

/* One benchmark mode ("fbwire-bench <name> ..."). Mode options all take a value. */
typedef struct benchtool_mode {
    const char *name;
    const char *summary;      /* one line for the usage text */
    const char *options_help; /* the mode's option lines, or "" */
    size_t state_size;        /* bytes of mode state main.c allocates (zeroed) */
    void (*init)(void *state);
    /* Returns 1 when the option was the mode's, 0 when unknown, -1 for a bad value (after printing
     * why to stderr). */
    int (*option)(void *state, const char *name, const char *value);
    /* Returns the process exit status. */
    int (*run)(const benchtool_opts *o, void *state);
} benchtool_mode;

extern const benchtool_mode benchtool_mode_crypt;
extern const benchtool_mode benchtool_mode_pipeline;
extern const benchtool_mode benchtool_mode_accounting;

/* Connect to o->db. plugin: wire-crypt plugin to require, or NULL for encryption disabled. */
int benchtool_connect(const benchtool_opts *o, const char *plugin, int compress, fbw_client **out,
                      fbw_err *err);

/* A statement prepared once in its own read-only transaction, executed many times. */
typedef struct benchtool_stmt {
    fbw_client *cl;
    fbw_tx *tx;
    fbw_stmt *s;
    const char *sql;
    uint64_t sink;           /* decoded bytes, so decoding cannot be skipped */
} benchtool_stmt;

int benchtool_prepare(benchtool_stmt *b, fbw_client *cl, const char *sql, fbw_err *err);
/* Execute with params (NULL when none) and fetch every row, decoding each. *rows gets the count. */
int benchtool_exec(benchtool_stmt *b, const fbw_value *params, uint64_t *rows, fbw_err *err);
/* Free the statement and commit its transaction. */
int benchtool_finish(benchtool_stmt *b, fbw_err *err);

/* Monotonic wall clock and this process's user+system CPU time (getrusage), in nanoseconds. */
uint64_t benchtool_wall_ns(void);
uint64_t benchtool_cpu_ns(void);

/* Median of v[0..n) (sorts v). n > 0. */
double benchtool_median(double *v, int n);

/* Print "fbwire-bench: <what>: <message>" with SQLSTATE and gds code when present. */
void benchtool_print_error(const char *what, const fbw_err *e);

#endif
