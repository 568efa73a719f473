/* SPDX-License-Identifier: MIT */
/* crypt.c - "fbwire-bench crypt": what wire encryption and compression cost the client.
 *
 * For every cipher (none, Arc4, ChaCha, ChaCha64) with and without zlib, on a fresh connection per run:
 *   fetch  one SELECT returning --rows rows (sysbench-like: INTEGER id, INTEGER k, CHAR(120) c,
 *          CHAR(60) pad, OCTETS so the wire carries 188 data bytes), made by the server (no table);
 *   point  --points single-row SELECTs by id with one prepared statement (one round trip each).
 * Reports rows/s and client CPU per row (getrusage user+sys of the whole process / rows), median of
 * --runs runs; the runs interleave the setups so drift in the machine hits them alike. A cipher the
 * server does not offer is shown as n/a. Connection setup is outside the timed part. */
#include "bench.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 100 /* main.c caps --runs at this */
#define NSETUPS 8 /* 4 ciphers x zlib off/on */

static const char *const CIPHERS[4] = {NULL, "Arc4", "ChaCha", "ChaCha64"};

/* The columns of one row, computed from the derived column t.id in both statements, so a point
 * select returns exactly the row the fetch returns for that id. */
#define ROW_COLS                                                                                   \
    "t.id, CAST(BIN_AND(HASH(t.id), 1048575) AS INTEGER) AS k, "                                   \
    "CAST(RPAD('', 120, HASH(t.id) || '-' || HASH(t.id * 3) || '-') AS CHAR(120) CHARACTER SET OCTETS) AS c, " \
    "CAST(RPAD('', 60, HASH(t.id * 7) || '-') AS CHAR(60) CHARACTER SET OCTETS) AS pad "

#define FETCH_SQL                                                                                   \
    "WITH RECURSIVE r(n) AS (SELECT 0 FROM RDB$DATABASE UNION ALL SELECT n + 1 FROM r WHERE n < 999), " \
    "t(id) AS (SELECT a.n * 1000 + b.n FROM r a CROSS JOIN r b WHERE a.n < %d) "                    \
    "SELECT " ROW_COLS "FROM t WHERE t.id < %d"

#define POINT_SQL "SELECT " ROW_COLS "FROM (SELECT CAST(? AS INTEGER) AS id FROM RDB$DATABASE) t"

typedef struct crypt_state {
    int rows;   /* rows of the fetch workload */
    int points; /* point selects */
} crypt_state;

/* What one run of one setup measured. */
typedef struct sample {
    double fetch_rps, fetch_cpu_us, fetch_wire;
    double point_rps, point_cpu_us, point_wire;
} sample;

typedef struct setup_result {
    const char *cipher; /* NULL: none */
    int compress;
    int unsupported;    /* the server does not offer the cipher */
    int nruns;
    sample *s;          /* runs entries */
} setup_result;

static void crypt_init(void *state)
{
    crypt_state *st = state;
    st->rows = 100000;
    st->points = 10000;
}

static int crypt_option(void *state, const char *name, const char *value)
{
    crypt_state *st = state;
    int *dst = !strcmp(name, "--rows") ? &st->rows : !strcmp(name, "--points") ? &st->points : NULL;
    if (!dst)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end || v < 1 || v > 1000000) {
        fprintf(stderr, "fbwire-bench: %s must be a number from 1 to 1000000, got \"%s\"\n", name, value);
        return -1;
    }
    *dst = (int)v;
    return 1;
}

static uint64_t wire_bytes(fbw_client *cl)
{
    const fbw_stats *s = fbw_conn_stats(fbw_client_conn(cl));
    return s->wire_bytes_sent + s->wire_bytes_received;
}

static int run_fetch(fbw_client *cl, const crypt_state *st, sample *out, fbw_err *err)
{
    char sql[1024];
    snprintf(sql, sizeof sql, FETCH_SQL, (st->rows + 999) / 1000, st->rows);
    benchtool_stmt b;
    uint64_t rows = 0;
    int rc = benchtool_prepare(&b, cl, sql, err);
    if (rc == FBW_OK) {
        uint64_t w0 = wire_bytes(cl), t0 = benchtool_wall_ns(), c0 = benchtool_cpu_ns();
        rc = benchtool_exec(&b, NULL, &rows, err);
        uint64_t c1 = benchtool_cpu_ns(), t1 = benchtool_wall_ns(), w1 = wire_bytes(cl);
        if (rc == FBW_OK && rows != (uint64_t)st->rows)
            rc = fbw_err_set(err, FBW_E_PROTO, "fetch returned %llu rows, expected %d",
                             (unsigned long long)rows, st->rows);
        if (rc == FBW_OK) {
            out->fetch_rps = (double)rows * 1e9 / (double)(t1 - t0);
            out->fetch_cpu_us = (double)(c1 - c0) / 1e3 / (double)rows;
            out->fetch_wire = (double)(w1 - w0) / (double)rows;
        }
    }
    if (b.s || b.tx) {
        int frc = benchtool_finish(&b, err);
        rc = rc ? rc : frc;
    }
    return rc;
}

static int run_points(fbw_client *cl, const crypt_state *st, sample *out, fbw_err *err)
{
    benchtool_stmt b;
    int rc = benchtool_prepare(&b, cl, POINT_SQL, err);
    const fbw_msgfmt *in = rc == FBW_OK ? fbw_stmt_input(b.s) : NULL;
    if (rc == FBW_OK && (in->n != 1 || (in->cols[0].type != FBW_SQL_LONG && in->cols[0].type != FBW_SQL_INT64)))
        rc = fbw_err_set(err, FBW_E_PROTO, "point select: expected one integer parameter");
    if (rc == FBW_OK) {
        fbw_value p;
        memset(&p, 0, sizeof p);
        p.type = in->cols[0].type;
        uint64_t total = 0, w0 = wire_bytes(cl), t0 = benchtool_wall_ns(), c0 = benchtool_cpu_ns();
        for (int i = 0; i < st->points && rc == FBW_OK; i++) {
            uint64_t rows = 0;
            p.u.i64 = (int64_t)i * 7919 % st->rows;
            rc = benchtool_exec(&b, &p, &rows, err);
            total += rows;
        }
        uint64_t c1 = benchtool_cpu_ns(), t1 = benchtool_wall_ns(), w1 = wire_bytes(cl);
        if (rc == FBW_OK && total != (uint64_t)st->points)
            rc = fbw_err_set(err, FBW_E_PROTO, "point selects returned %llu rows, expected %d",
                             (unsigned long long)total, st->points);
        if (rc == FBW_OK) {
            out->point_rps = (double)total * 1e9 / (double)(t1 - t0);
            out->point_cpu_us = (double)(c1 - c0) / 1e3 / (double)total;
            out->point_wire = (double)(w1 - w0) / (double)total;
        }
    }
    if (b.s || b.tx) {
        int frc = benchtool_finish(&b, err);
        rc = rc ? rc : frc;
    }
    return rc;
}

/* One run of one setup on a fresh connection. The first connection also reads the server version. */
static int run_setup(const benchtool_opts *o, const crypt_state *st, setup_result *r, char *version,
                     size_t vsize, fbw_err *err)
{
    fbw_client *cl = NULL;
    int rc = benchtool_connect(o, r->cipher, r->compress, &cl, err);
    if (rc == FBW_E_CRYPT && r->cipher) {
        r->unsupported = 1; /* required + not offered: the client refused before attaching */
        return FBW_OK;
    }
    if (rc == FBW_OK && !version[0]) {
        const fbw_conn_info *in = fbw_conn_get_info(fbw_client_conn(cl));
        rc = fbw_conn_query_version(fbw_client_conn(cl));
        if (rc == FBW_OK)
            rc = fbw_client_wait(cl);
        snprintf(version, vsize, "%s, protocol %d", in->server_version, in->protocol);
        /* warm-up (untimed): let the server compile and cache what the runs use */
        sample warm;
        if (rc == FBW_OK)
            rc = run_fetch(cl, st, &warm, err);
    }
    sample *s = &r->s[r->nruns];
    if (rc == FBW_OK)
        rc = run_fetch(cl, st, s, err);
    if (rc == FBW_OK)
        rc = run_points(cl, st, s, err);
    if (rc == FBW_OK)
        r->nruns++;
    else if (cl && err->code == FBW_OK)
        *err = *fbw_client_error(cl);
    int crc = fbw_client_close(cl);
    return rc ? rc : crc;
}

static double median_of(const setup_result *r, size_t field)
{
    double v[MAX_RUNS];
    for (int i = 0; i < r->nruns; i++)
        memcpy(&v[i], (const char *)&r->s[i] + field, sizeof v[i]);
    return benchtool_median(v, r->nruns);
}

static void print_table(const benchtool_opts *o, const crypt_state *st, const setup_result *res,
                        const char *version)
{
    printf("fbwire-bench crypt: %s; median of %d runs\n", version, o->runs);
    printf("  fetch: one SELECT of %d rows (INTEGER, INTEGER, CHAR(120), CHAR(60) OCTETS; made by the server)\n",
           st->rows);
    printf("  point: %d single-row SELECTs by id, prepared once, one round trip each\n", st->points);
    printf("  CPU: getrusage user+sys of this process per row; wire B: bytes sent+received per row\n\n");
    printf("%-9s %-4s | %12s %11s %10s | %12s %11s %10s\n", "crypt", "zlib", "fetch rows/s",
           "CPU us/row", "wire B/row", "point sel/s", "CPU us/sel", "wire B/sel");
    for (int i = 0; i < NSETUPS; i++) {
        const setup_result *r = &res[i];
        printf("%-9s %-4s | ", r->cipher ? r->cipher : "none", r->compress ? "on" : "off");
        if (r->unsupported || r->nruns == 0) {
            printf("n/a (%s)\n", r->unsupported ? "the server does not offer this cipher" : "no run");
            continue;
        }
        printf("%12.0f %11.3f %10.1f | %12.0f %11.2f %10.1f\n", median_of(r, offsetof(sample, fetch_rps)),
               median_of(r, offsetof(sample, fetch_cpu_us)), median_of(r, offsetof(sample, fetch_wire)),
               median_of(r, offsetof(sample, point_rps)), median_of(r, offsetof(sample, point_cpu_us)),
               median_of(r, offsetof(sample, point_wire)));
    }
}

static int crypt_run(const benchtool_opts *o, void *state)
{
    const crypt_state *st = state;
    setup_result res[NSETUPS];
    sample *samples = calloc((size_t)NSETUPS * (size_t)o->runs, sizeof *samples);
    if (!samples) {
        fprintf(stderr, "fbwire-bench: out of memory\n");
        return 1;
    }
    for (int i = 0; i < NSETUPS; i++)
        res[i] = (setup_result){CIPHERS[i % 4], i / 4, 0, 0, samples + (size_t)i * (size_t)o->runs};
    char version[320] = "";
    int status = 0;
    for (int run = 0; run < o->runs && status == 0; run++)
        for (int i = 0; i < NSETUPS && status == 0; i++) {
            if (res[i].unsupported)
                continue;
            fbw_err err;
            fbw_err_clear(&err);
            if (run_setup(o, st, &res[i], version, sizeof version, &err) != FBW_OK) {
                char what[64];
                snprintf(what, sizeof what, "%s%s, run %d", res[i].cipher ? res[i].cipher : "none",
                         res[i].compress ? " + zlib" : "", run + 1);
                benchtool_print_error(what, &err);
                status = 1;
            }
        }
    if (status == 0)
        print_table(o, st, res, version);
    free(samples);
    return status;
}

const benchtool_mode benchtool_mode_crypt = {
    .name = "crypt",
    .summary = "fetch and point-select throughput and client CPU per wire cipher, with and without zlib",
    .options_help = "  --rows N         rows of the fetch workload (default 100000)\n"
                    "  --points N       point SELECTs (default 10000)\n",
    .state_size = sizeof(crypt_state),
    .init = crypt_init,
    .option = crypt_option,
    .run = crypt_run,
};
