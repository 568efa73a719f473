/* SPDX-License-Identifier: MIT */
/* Per-class accounting, histogram, totals, text and JSON of the wire statistics report. */
#include "report.h"

#include "ops.h"

#include <criterion/criterion.h>
#ifdef FBW_HAVE_JANSSON
#include <jansson.h>
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Simulated client: a packet of `op` each way, `rt` round trips, `wait` ns. */
static void traffic(fbw_stats *s, int32_t op, unsigned sent, unsigned recv, unsigned rt, uint64_t wait)
{
    for (unsigned i = 0; i < sent; i++)
        fbw_stats_packet(s, op, 1, 16 + op);
    for (unsigned i = 0; i < rt; i++) {
        fbw_stats_packet(s, FBW_OP_DUMMY, 1, 4); /* something sent before each wait */
        fbw_stats_wait_begin(s);
        fbw_stats_wait_time(s, wait / rt);
    }
    for (unsigned i = 0; i < recv; i++)
        fbw_stats_packet(s, FBW_OP_RESPONSE, 0, 32);
}

static void charge_cpu(sbdrv_rep_conn *c, const fbw_stats *src, int cls, uint64_t cpu_ns)
{
    *sbdrv_rep_conn_now(c) = *src;
    sbdrv_rep_conn_charge(c, cls, cpu_ns);
}

static void charge(sbdrv_rep_conn *c, const fbw_stats *src, int cls)
{
    charge_cpu(c, src, cls, 0);
}

Test(report, buckets)
{
    for (uint64_t v = 0; v < 100000; v = v * 3 / 2 + 1) {
        unsigned b = sbdrv_rep_bucket(v);
        cr_assert_lt(b, SBDRV_REP_HIST);
        cr_expect_geq(sbdrv_rep_bucket_upper(b), v, "v=%llu b=%u", (unsigned long long)v, b);
        if (b > 0)
            cr_expect_lt(sbdrv_rep_bucket_upper(b - 1), v, "v=%llu b=%u", (unsigned long long)v, b);
        /* Buckets are at most 12.5% wide above the exact range. */
        if (v >= 8)
            cr_expect_leq(sbdrv_rep_bucket_upper(b), v + v / 8 + 1);
    }
    cr_expect_eq(sbdrv_rep_bucket(UINT64_MAX), SBDRV_REP_HIST - 1);
    cr_expect_eq(sbdrv_rep_bucket(7), 7);
}

Test(report, percentile)
{
    sbdrv_rep_cls c;
    memset(&c, 0, sizeof c);
    cr_expect_eq(sbdrv_rep_percentile(&c, 95), 0);
    for (uint64_t i = 1; i <= 100; i++) /* waits of 1..100 us */
        c.hist[sbdrv_rep_bucket(i * 1000)]++;
    uint64_t p95 = sbdrv_rep_percentile(&c, 95), p50 = sbdrv_rep_percentile(&c, 50);
    cr_expect(p95 >= 95000 && p95 <= 95000 + 95000 / 8 + 1, "p95 %llu", (unsigned long long)p95);
    cr_expect(p50 >= 50000 && p50 <= 50000 + 50000 / 8 + 1, "p50 %llu", (unsigned long long)p50);
    cr_expect_geq(sbdrv_rep_percentile(&c, 100), 100000);
}

/* Charges across classes and a reconnect: the class table sums to the per-op totals. */
Test(report, classes_sum_to_ops)
{
    sbdrv_rep *r;
    sbdrv_rep_conn *c;
    cr_assert_eq(sbdrv_rep_new(&r), FBW_OK);
    cr_assert_eq(sbdrv_rep_conn_new(r, &c), FBW_OK);
    fbw_stats *s = calloc(1, sizeof *s);
    traffic(s, FBW_OP_ATTACH, 2, 2, 2, 1000);
    charge(c, s, SBDRV_CLS_SESSION);
    for (int i = 0; i < 10; i++) {
        traffic(s, FBW_OP_EXECUTE, 2, 3, 1, 5000);
        charge_cpu(c, s, SBDRV_CLS_POINT_SELECT, 1000u + (uint64_t)i);
    }
    traffic(s, FBW_OP_COMMIT, 1, 1, 1, 7000);
    charge_cpu(c, s, SBDRV_CLS_COMMIT, 777);
    sbdrv_rep_conn_restart(c); /* new attachment: its stats start at zero */
    fbw_stats_reset(s);
    charge(c, s, SBDRV_CLS_SESSION); /* no stats yet: charges nothing */
    traffic(s, FBW_OP_EXECUTE, 1, 1, 3, 3000);
    charge(c, s, SBDRV_CLS_UPDATE_INDEX);

    sbdrv_rep_acc *a = malloc(sizeof *a);
    sbdrv_rep_merge(r, a);
    cr_expect_eq(a->cls[SBDRV_CLS_POINT_SELECT].executions, 10);
    cr_expect_eq(a->cls[SBDRV_CLS_POINT_SELECT].round_trips, 10);
    cr_expect_eq(a->cls[SBDRV_CLS_POINT_SELECT].wait_ns, 50000);
    cr_expect_eq(a->cls[SBDRV_CLS_POINT_SELECT].cpu_ns, 10000 + 45);
    cr_expect_eq(a->cls[SBDRV_CLS_COMMIT].cpu_ns, 777);
    cr_expect_eq(a->cls[SBDRV_CLS_SESSION].cpu_ns, 0);
    cr_expect_eq(a->cls[SBDRV_CLS_POINT_SELECT].packets_sent, 30); /* 2 + the dummy, 10 times */
    cr_expect_eq(a->cls[SBDRV_CLS_UPDATE_INDEX].round_trips, 3);
    cr_expect_eq(a->cls[SBDRV_CLS_SESSION].executions, 2);
    cr_expect_eq(a->ops.op[FBW_OP_EXECUTE].packets_sent, 21);
    uint64_t rt = 0, ps = 0, pr = 0, bs = 0, br = 0, ops_ps = 0, ops_br = 0;
    for (int k = 0; k < SBDRV_CLS_COUNT; k++) {
        rt += a->cls[k].round_trips;
        ps += a->cls[k].packets_sent;
        pr += a->cls[k].packets_received;
        bs += a->cls[k].bytes_sent;
        br += a->cls[k].bytes_received;
    }
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        ops_ps += a->ops.op[op].packets_sent;
        ops_br += a->ops.op[op].bytes_received;
    }
    cr_expect_eq(rt, a->ops.round_trips);
    cr_expect_eq(rt, 2 + 10 + 1 + 3);
    cr_expect_eq(ps, a->ops.packets_sent);
    cr_expect_eq(ps, ops_ps);
    cr_expect_eq(pr, a->ops.packets_received);
    cr_expect_eq(bs, a->ops.bytes_sent);
    cr_expect_eq(br, a->ops.bytes_received);
    cr_expect_eq(br, ops_br);

    sbdrv_rep_run run;
    memset(&run, 0, sizeof run);
    run.events = 5;
    run.duration_s = 2;
    run.threads = 1;
    run.reads = 10;
    sbdrv_rep_totals t;
    sbdrv_rep_totals_of(a, &run, &t);
    cr_expect_eq(t.round_trips, 14); /* statement classes: 10 + 1 + 3 */
    cr_expect_eq(t.round_trips_all, 16);
    cr_expect_float_eq(t.rt_per_event, 14.0 / 5, 1e-9);
    cr_expect_float_eq(t.rt_per_second, 7.0, 1e-9);
    cr_expect_float_eq(t.tps, 2.5, 1e-9);
    cr_expect_float_eq(t.qps, 5.0, 1e-9);
    cr_expect_float_eq(t.wait_share, (50000 + 7000 + 3000) / 1e9 / 2, 1e-12);
    free(a);
    free(s);
    sbdrv_rep_free(r);
}

typedef struct worker {
    sbdrv_rep *r;
    int n;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    sbdrv_rep_conn *c;
    fbw_stats *s = calloc(1, sizeof *s);
    cr_assert_eq(sbdrv_rep_conn_new(w->r, &c), FBW_OK);
    for (int i = 0; i < w->n; i++) {
        traffic(s, FBW_OP_EXECUTE, 1, 1, 1, 100);
        charge(c, s, i % 2 ? SBDRV_CLS_INSERT : SBDRV_CLS_DELETE);
    }
    free(s);
    return NULL;
}

/* Connections charge from their own threads while the live totals are read. */
Test(report, threads_and_live_totals)
{
    sbdrv_rep *r;
    cr_assert_eq(sbdrv_rep_new(&r), FBW_OK);
    pthread_t th[4];
    worker w = {r, 20000};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, work, &w), 0);
    sbdrv_rep_live live;
    uint64_t last = 0;
    for (int i = 0; i < 50; i++) { /* running totals never go back */
        sbdrv_rep_live_sum(r, &live);
        cr_expect_geq(live.round_trips, last);
        last = live.round_trips;
        usleep(100);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    sbdrv_rep_live_sum(r, &live);
    cr_expect_eq(live.round_trips, 80000);
    cr_expect_eq(live.executions, 80000);
    cr_expect_eq(sbdrv_rep_connections(r), 4);
    sbdrv_rep_acc *a = malloc(sizeof *a);
    sbdrv_rep_merge(r, a);
    cr_expect_eq(a->cls[SBDRV_CLS_INSERT].executions + a->cls[SBDRV_CLS_DELETE].executions, 80000);
    cr_expect_eq(a->ops.op[FBW_OP_EXECUTE].packets_sent, 80000);
    free(a);
    sbdrv_rep_free(r);
}

static sbdrv_rep_acc *sample(sbdrv_rep_run *run, char **argv)
{
    sbdrv_rep *r;
    sbdrv_rep_conn *c;
    cr_assert_eq(sbdrv_rep_new(&r), FBW_OK);
    cr_assert_eq(sbdrv_rep_conn_new(r, &c), FBW_OK);
    fbw_stats *s = calloc(1, sizeof *s);
    for (int i = 0; i < 4; i++) {
        traffic(s, FBW_OP_EXECUTE, 1, 1, 1, 200000);
        charge_cpu(c, s, SBDRV_CLS_POINT_SELECT, 3000);
    }
    traffic(s, FBW_OP_TRANSACTION, 1, 1, 1, 100000);
    charge_cpu(c, s, SBDRV_CLS_BEGIN, 1000);
    sbdrv_rep_acc *a = malloc(sizeof *a);
    sbdrv_rep_merge(r, a);
    sbdrv_rep_free(r);
    free(s);
    memset(run, 0, sizeof *run);
    run->driver = "fbclient";
    run->autocommit = "shared";
    run->script = "oltp_point_select";
    run->command = "run";
    run->sysbench_version = "1.0.20";
    run->argc = 4;
    run->argv = argv;
    run->threads = 2;
    run->duration_s = 1;
    run->events = 4;
    run->reads = 4;
    sbdrv_rep_facts_init(&run->facts);
    strcpy(run->facts.server_version, "4.0.5");
    run->facts.protocol = 17;
    strcpy(run->facts.auth_plugin, "Srp256");
    strcpy(run->facts.wire_crypt, "none");
    run->facts.lazy_send = 1;
    return a;
}

Test(report, text)
{
    char *argv[] = {"x", "--fbclient-password=secret", "--threads=2", "run"};
    sbdrv_rep_run run;
    sbdrv_rep_acc *a = sample(&run, argv);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sbdrv_rep_print(f, a, &run);
    fclose(f);
    cr_expect(strstr(text, "Firebird wire statistics (fbclient driver, autocommit shared):"));
    cr_expect(strstr(text, "Firebird 4.0.5, protocol 17, auth Srp256, wire crypt none"));
    cr_expect(strstr(text, "compression ?, lazy send on"));
    cr_expect(strstr(text, "round trips per event:               1.250"), "%s", text);
    cr_expect(strstr(text, "(1 transactions started)"));
    /* 4 x 3 us + 1 us of CPU over 4 events and 5 executions */
    cr_expect(strstr(text, "client CPU in the driver:            3.25 us per event, 2.60 us per statement"),
              "%s", text);
    cr_expect(strstr(text, "point select                4    1.000"), "%s", text);
    cr_expect(strstr(text, "pipeline:                            off"), "%s", text);
    /* 5 executions, 5 statement round trips; no server figures: said so, never 0 */
    cr_expect(strstr(text, "statements per round trip:           1.00"), "%s", text);
    cr_expect(strstr(text, "server CPU:                          not available (not measured)"), "%s", text);
    cr_expect(strstr(text, "op_transaction"));
    cr_expect(strstr(text, "op_execute"));
    cr_expect_null(strstr(text, "secret"));
    cr_expect_null(strstr(text, "update index"), "classes without executions are left out");
    free(text);
    /* a measured server: 40 us over 4 events and 5 statements */
    run.pipeline = "transaction";
    run.server_cpu.available = 1;
    run.server_cpu.pid = 1234;
    run.server_cpu.children = 2;
    run.server_cpu.cpu_ns = 40000;
    f = open_memstream(&text, &len);
    sbdrv_rep_print(f, a, &run);
    fclose(f);
    cr_expect(strstr(text, "pipeline:                            transaction"), "%s", text);
    cr_expect(strstr(text, "server CPU:                          10.00 us per event, 8.00 us per statement "
                           "(pid 1234, 2 child processes)"), "%s", text);
    free(text);
    char line[200];
    sbdrv_rep_interval iv = {10, 1, 100, 250, 500000000, 300};
    sbdrv_rep_interval_line(line, sizeof line, "fbwire", &iv, 2);
    cr_expect_str_eq(line, "[ 10s ] fbwire wire: rt/event: 2.500 rt/s: 250.00 wait: 25.0%");
    free(a);
}

static char *render(const sbdrv_rep_acc *a, const sbdrv_rep_run *run)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sbdrv_rep_print(f, a, run);
    fclose(f);
    return text;
}

/* An encrypted fbclient session is counted at the socket: what is measured is printed, what is
 * not (op codes, transactions) says so instead of 0. */
Test(report, socket_level)
{
    char *argv[] = {"x", "--threads=2", "--time=1", "run"}; /* sample() reads 4 */
    sbdrv_rep_run run;
    sbdrv_rep_acc *a = sample(&run, argv);
    strcpy(run.facts.wire_crypt, "Arc4");
    run.facts.socket_level = 1;
    char *text = render(a, &run);
    cr_expect(strstr(text, "wire crypt Arc4: the tap sees ciphertext"), "%s", text);
    cr_expect(strstr(text, "op-level detail needs --fbclient-wire-crypt=disabled"), "%s", text);
    cr_expect(strstr(text, "round trips per event:               1.250"), "%s", text);
    cr_expect(strstr(text, "round trips per transaction:         not available"), "%s", text);
    cr_expect(strstr(text, "calls/exec"), "%s", text);
    cr_expect(strstr(text, "op codes:                            not available"), "%s", text);
    cr_expect_null(strstr(text, "op_execute"), "no op table: %s", text);
    cr_expect_null(strstr(text, "transactions started"), "%s", text);
    free(text);
    free(a);
}

/* No source of statistics at all: no figure but the client CPU. */
Test(report, unmeasured)
{
    char *argv[] = {"x", "--threads=2", "--time=1", "run"}; /* sample() reads 4 */
    sbdrv_rep_run run;
    sbdrv_rep_acc *a = sample(&run, argv);
    run.facts.unmeasured = 1;
    char *text = render(a, &run);
    cr_expect(strstr(text, "round trips, packets, bytes:         not available"), "%s", text);
    cr_expect_null(strstr(text, "round trips per event"), "%s", text);
    cr_expect_null(strstr(text, "statement class"), "%s", text);
    cr_expect(strstr(text, "client CPU in the driver:            3.25 us per event"), "%s", text);
    free(text);
    free(a);
}

#ifdef FBW_HAVE_JANSSON
/* What is not measured is null in JSON, and counted_at says how the rest was counted. */
static json_t *json_of(const sbdrv_rep_acc *a, const sbdrv_rep_run *run)
{
    char path[] = "/tmp/test_report_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    fbw_err e;
    fbw_err_clear(&e);
    cr_assert_eq(sbdrv_rep_write_json(path, a, run, &e), FBW_OK, "%s", e.msg);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    unlink(path);
    cr_assert_not_null(doc, "%s", je.text);
    return doc;
}

Test(report, json_counted_at)
{
    char *argv[] = {"x", "--threads=2", "--time=1", "run"}; /* sample() reads 4 */
    sbdrv_rep_run run;
    sbdrv_rep_acc *a = sample(&run, argv);
    json_t *doc = json_of(a, &run);
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(doc, "connection"), "counted_at")), "packets");
    json_decref(doc);
    run.facts.socket_level = 1;
    doc = json_of(a, &run);
    json_t *tot = json_object_get(doc, "totals");
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(doc, "connection"), "counted_at")), "socket");
    cr_expect(json_is_null(json_object_get(tot, "transactions")));
    cr_expect(json_is_null(json_object_get(tot, "round_trips_per_transaction")));
    cr_expect_float_eq(json_real_value(json_object_get(doc, "round_trips_per_event")), 1.25, 1e-9);
    json_decref(doc);
    run.facts.socket_level = 0;
    run.facts.unmeasured = 1;
    doc = json_of(a, &run);
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(doc, "connection"), "counted_at")), "none");
    cr_expect(json_is_null(json_object_get(doc, "round_trips_per_event")));
    json_decref(doc);
    free(a);
}

Test(report, json)
{
    char *argv[] = {"x", "--fbclient-password=secret", "--FBCLIENT-PASSWORD=hunter2", "run"};
    sbdrv_rep_run run;
    sbdrv_rep_acc *a = sample(&run, argv);
    sbdrv_rep_interval iv[2] = {{1, 1, 2, 3, 4, 5}, {2, 1, 6, 6, 8, 9}};
    run.intervals = iv;
    run.nintervals = 2;
    char path[] = "/tmp/test_report_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    fbw_err e;
    fbw_err_clear(&e);
    cr_assert_eq(sbdrv_rep_write_json(path, a, &run, &e), FBW_OK, "%s", e.msg);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    cr_assert_not_null(doc, "%s", je.text);
    cr_expect_str_eq(json_string_value(json_object_get(doc, "format")), "fbwire-report/1");
    cr_expect_str_eq(json_string_value(json_object_get(doc, "driver")), "fbclient");
    cr_expect_str_eq(json_string_value(json_object_get(doc, "server_version")), "4.0.5");
    cr_expect_eq(json_integer_value(json_object_get(doc, "protocol")), 17);
    cr_expect_float_eq(json_real_value(json_object_get(doc, "round_trips_per_event")), 1.25, 1e-9);
    cr_expect_float_eq(json_real_value(json_object_get(doc, "tps")), 4.0, 1e-9);
    json_t *conn = json_object_get(doc, "connection");
    cr_expect(json_is_null(json_object_get(conn, "compression")));
    cr_expect(json_is_true(json_object_get(conn, "lazy_send")));
    json_t *classes = json_object_get(doc, "classes");
    cr_assert_eq(json_array_size(classes), 2);
    json_t *ps = json_array_get(classes, 0);
    cr_expect_str_eq(json_string_value(json_object_get(ps, "class")), "point_select");
    cr_expect_eq(json_integer_value(json_object_get(ps, "executions")), 4);
    cr_expect_float_eq(json_real_value(json_object_get(ps, "round_trips_per_execution")), 1.0, 1e-9);
    cr_expect_float_eq(json_real_value(json_object_get(ps, "wait_mean_ms")), 0.2, 1e-9);
    cr_expect_eq(json_integer_value(json_object_get(ps, "cpu_ns")), 12000);
    cr_expect_float_eq(json_real_value(json_object_get(ps, "cpu_us_per_execution")), 3.0, 1e-9);
    json_t *tot = json_object_get(doc, "totals");
    cr_expect_eq(json_integer_value(json_object_get(tot, "cpu_ns")), 13000);
    cr_expect_float_eq(json_real_value(json_object_get(tot, "cpu_us_per_event")), 3.25, 1e-9);
    json_t *opts = json_object_get(json_object_get(doc, "run"), "options");
    cr_expect_str_eq(json_string_value(json_array_get(opts, 0)), "x");
    cr_expect_str_eq(json_string_value(json_array_get(opts, 1)), "--fbclient-password=***");
    cr_expect_str_eq(json_string_value(json_array_get(opts, 2)), "--FBCLIENT-PASSWORD=***");
    cr_expect_str_eq(json_string_value(json_array_get(opts, 3)), "run");
    cr_expect_eq(json_array_size(json_object_get(doc, "intervals")), 2);
    cr_expect_eq(json_integer_value(json_object_get(json_object_get(doc, "totals"), "transactions")), 1);
    cr_expect_float_eq(json_real_value(json_object_get(tot, "statements_per_round_trip")), 1.0, 1e-9);
    cr_expect_str_eq(json_string_value(json_object_get(conn, "pipeline")), "off");
    json_t *sc = json_object_get(doc, "server_cpu");
    cr_expect(json_is_false(json_object_get(sc, "available")));
    cr_expect_str_eq(json_string_value(json_object_get(sc, "why")), "not measured");
    cr_expect_null(json_object_get(sc, "cpu_ns"), "no figure when not measured");
    json_decref(doc);
    run.server_cpu.available = 1;
    run.server_cpu.pid = 99;
    run.server_cpu.cpu_ns = 40000;
    cr_assert_eq(sbdrv_rep_write_json(path, a, &run, &e), FBW_OK, "%s", e.msg);
    doc = json_load_file(path, 0, &je);
    cr_assert_not_null(doc, "%s", je.text);
    sc = json_object_get(doc, "server_cpu");
    cr_expect(json_is_true(json_object_get(sc, "available")));
    cr_expect_eq(json_integer_value(json_object_get(sc, "cpu_ns")), 40000);
    cr_expect_float_eq(json_real_value(json_object_get(sc, "us_per_event")), 10.0, 1e-9);
    cr_expect_float_eq(json_real_value(json_object_get(sc, "us_per_execution")), 8.0, 1e-9);
    json_decref(doc);
    FILE *f = fopen(path, "r");
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    cr_expect_null(strstr(buf, "secret"));
    cr_expect_null(strstr(buf, "hunter2"));
    unlink(path);
    cr_expect_eq(sbdrv_rep_write_json("/nonexistent/dir/x.json", a, &run, &e), FBW_E_IO);
    free(a);
}
#endif

/* The statement path reads the source's live stats without copying them: a NULL source charges
 * no traffic, the totals are charged exactly on every call, and the per-op table (copied only
 * now and then) is complete after sbdrv_rep_conn_snapshot. */
Test(report, live_source)
{
    sbdrv_rep *r;
    sbdrv_rep_conn *c;
    cr_assert_eq(sbdrv_rep_new(&r), FBW_OK);
    cr_assert_eq(sbdrv_rep_conn_new(r, &c), FBW_OK);
    fbw_stats *s = calloc(1, sizeof *s);
    traffic(s, FBW_OP_EXECUTE, 1, 1, 1, 1000);
    sbdrv_rep_conn_charge_src(c, s, SBDRV_CLS_POINT_SELECT, 1, SBDRV_CPU_READ, 10);
    for (int i = 0; i < 3; i++)
        sbdrv_rep_conn_charge_src(c, NULL, SBDRV_CLS_SESSION, 1, SBDRV_CPU_UNTIMED, 0);
    traffic(s, FBW_OP_EXECUTE, 1, 1, 2, 3000);
    sbdrv_rep_conn_charge_src(c, s, SBDRV_CLS_UPDATE_INDEX, 1, SBDRV_CPU_READ, 10);
    for (int i = 0; i < 600; i++) { /* past the per-op table's copy interval */
        traffic(s, FBW_OP_FETCH, 1, 1, 1, 500);
        sbdrv_rep_conn_charge_src(c, s, SBDRV_CLS_POINT_SELECT, 1, SBDRV_CPU_SKIP, 0);
    }
    sbdrv_rep_acc *a = malloc(sizeof *a);
    sbdrv_rep_merge(r, a);
    cr_expect_eq(a->cls[SBDRV_CLS_SESSION].round_trips, 0);
    cr_expect_eq(a->cls[SBDRV_CLS_SESSION].packets_sent, 0);
    cr_expect_eq(a->cls[SBDRV_CLS_SESSION].executions, 3);
    cr_expect_eq(a->cls[SBDRV_CLS_UPDATE_INDEX].round_trips, 2);
    cr_expect_eq(a->cls[SBDRV_CLS_UPDATE_INDEX].wait_ns, 3000);
    cr_expect_eq(a->cls[SBDRV_CLS_POINT_SELECT].round_trips, 601);
    cr_expect_eq(a->cls[SBDRV_CLS_POINT_SELECT].wait_ns, 1000 + 600 * 500);
    cr_expect_eq(a->ops.round_trips, 603, "the totals are current on every charge");
    cr_expect_eq(a->ops.packets_sent, s->packets_sent);
    cr_expect_lt(a->ops.op[FBW_OP_FETCH].packets_sent, 600, "the per-op table lags until a snapshot");
    sbdrv_rep_conn_snapshot(c, s);
    sbdrv_rep_merge(r, a);
    cr_expect_eq(a->ops.op[FBW_OP_FETCH].packets_sent, 600);
    cr_expect_eq(a->ops.op[FBW_OP_EXECUTE].packets_sent, 2);
    cr_expect_eq(a->cls[SBDRV_CLS_POINT_SELECT].round_trips, 601, "a snapshot charges nothing");
    sbdrv_rep_conn_restart(c); /* detach: the next attachment starts from zero */
    fbw_stats_reset(s);
    traffic(s, FBW_OP_EXECUTE, 1, 1, 1, 100);
    sbdrv_rep_conn_charge_src(c, s, SBDRV_CLS_POINT_SELECT, 1, SBDRV_CPU_READ, 10);
    sbdrv_rep_merge(r, a);
    cr_expect_eq(a->cls[SBDRV_CLS_POINT_SELECT].round_trips, 602);
    cr_expect_eq(a->ops.round_trips, 604);
    cr_expect_eq(a->ops.op[FBW_OP_FETCH].packets_sent, 600);
    free(a);
    free(s);
    sbdrv_rep_free(r);
}

/* Sampled client CPU: read (warm-up), sampled and skipped calls of one class give its estimate;
 * the totals, the text and the JSON say how many calls were timed. */
static sbdrv_rep_acc *sampled_acc(void)
{
    sbdrv_rep *r;
    sbdrv_rep_conn *c;
    cr_assert_eq(sbdrv_rep_new(&r), FBW_OK);
    cr_assert_eq(sbdrv_rep_conn_new(r, &c), FBW_OK);
    fbw_stats *s = calloc(1, sizeof *s);
    for (int i = 0; i < 18; i++) {
        traffic(s, FBW_OP_EXECUTE, 1, 1, 1, 1000);
        sbdrv_cpu_how how = i < 2 ? SBDRV_CPU_READ : i % 4 == 0 ? SBDRV_CPU_SAMPLE : SBDRV_CPU_SKIP;
        sbdrv_rep_conn_charge_src(c, s, SBDRV_CLS_POINT_SELECT, 1, how, how == SBDRV_CPU_READ ? 1000 : 500);
    }
    traffic(s, FBW_OP_EXECUTE, 1, 1, 1, 1000); /* a pipelined result read later: no execution */
    sbdrv_rep_conn_charge_src(c, s, SBDRV_CLS_POINT_SELECT, 0, SBDRV_CPU_SKIP, 0);
    sbdrv_rep_acc *a = malloc(sizeof *a);
    sbdrv_rep_merge(r, a);
    sbdrv_rep_free(r);
    free(s);
    return a;
}

Test(report, sampled_cpu)
{
    sbdrv_rep_acc *a = sampled_acc();
    const sbdrv_rep_cls *ps = &a->cls[SBDRV_CLS_POINT_SELECT];
    /* 2 read (1000 each), 4 sampled (500 each: i = 4, 8, 12, 16), 13 skipped at the sample's
     * mean 500 */
    cr_expect_eq(ps->executions, 18);
    cr_expect_eq(sbdrv_cpu_calls(&ps->cpu), 19);
    cr_expect_eq(sbdrv_cpu_measured_calls(&ps->cpu), 6);
    cr_expect_eq(ps->cpu_ns, 2000 + 2000 + 13 * 500);
    sbdrv_rep_run run;
    memset(&run, 0, sizeof run);
    run.events = 18;
    run.duration_s = 1;
    run.threads = 1;
    run.cpu_method = "sampled";
    run.cpu_sample_every = 16;
    sbdrv_rep_totals t;
    sbdrv_rep_totals_of(a, &run, &t);
    cr_expect_eq(t.cpu_ns, 10500);
    cr_expect_eq(t.cpu_calls, 19);
    cr_expect_eq(t.cpu_measured_calls, 6);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sbdrv_rep_print(f, a, &run);
    fclose(f);
    cr_expect(strstr(text, "client CPU taken:                    sampled: clock read around 6 of 19 calls\n"
                           "                                         (1 in 16 at random), the rest estimated per class"),
              "%s", text);
    free(text);
    free(a);
}

Test(report, every_call_cpu_text)
{
    sbdrv_rep *r;
    sbdrv_rep_conn *c;
    cr_assert_eq(sbdrv_rep_new(&r), FBW_OK);
    cr_assert_eq(sbdrv_rep_conn_new(r, &c), FBW_OK);
    fbw_stats *s = calloc(1, sizeof *s);
    traffic(s, FBW_OP_EXECUTE, 1, 1, 1, 1000);
    charge_cpu(c, s, SBDRV_CLS_POINT_SELECT, 700);
    sbdrv_rep_acc *a = malloc(sizeof *a);
    sbdrv_rep_merge(r, a);
    sbdrv_rep_run run;
    memset(&run, 0, sizeof run);
    run.events = 1;
    run.cpu_method = "every-call";
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    sbdrv_rep_print(f, a, &run);
    fclose(f);
    cr_expect(strstr(text, "client CPU taken:                    thread CPU clock around every call (every-call)"),
              "%s", text);
    cr_expect_null(strstr(text, "estimated"));
    free(text);
    free(a);
    free(s);
    sbdrv_rep_free(r);
}

#ifdef FBW_HAVE_JANSSON
Test(report, sampled_cpu_json)
{
    sbdrv_rep_acc *a = sampled_acc();
    sbdrv_rep_run run;
    memset(&run, 0, sizeof run);
    run.events = 18;
    run.duration_s = 1;
    run.threads = 1;
    run.cpu_method = "sampled";
    run.cpu_sample_every = 16;
    char path[] = "/tmp/test_report_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    fbw_err e;
    fbw_err_clear(&e);
    cr_assert_eq(sbdrv_rep_write_json(path, a, &run, &e), FBW_OK, "%s", e.msg);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    unlink(path);
    cr_assert_not_null(doc, "%s", je.text);
    json_t *ps = json_array_get(json_object_get(doc, "classes"), 0);
    cr_expect_eq(json_integer_value(json_object_get(ps, "cpu_ns")), 10500);
    cr_expect_eq(json_integer_value(json_object_get(ps, "cpu_calls")), 19);
    cr_expect_eq(json_integer_value(json_object_get(ps, "cpu_measured_calls")), 6);
    json_t *tot = json_object_get(doc, "totals");
    cr_expect_str_eq(json_string_value(json_object_get(tot, "cpu_method")), "sampled");
    cr_expect_eq(json_integer_value(json_object_get(tot, "cpu_sample_every")), 16);
    cr_expect_eq(json_integer_value(json_object_get(tot, "cpu_calls")), 19);
    cr_expect_eq(json_integer_value(json_object_get(tot, "cpu_measured_calls")), 6);
    json_decref(doc);
    free(a);
}
#endif
