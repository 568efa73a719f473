/* SPDX-License-Identifier: MIT */
/* load.c - read a driver report (docs/report.schema.json) or fbwire-pcap stats --json. */
#include "reporttool.h"

#include <jansson.h>
#include <string.h>

static double num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

static void text(json_t *o, const char *key, char *dst, size_t cap)
{
    json_t *v = json_object_get(o, key);
    snprintf(dst, cap, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static void load_driver(json_t *doc, rt_run *r)
{
    json_t *run = json_object_get(doc, "run"), *conn = json_object_get(doc, "connection");
    json_t *tot = json_object_get(doc, "totals");
    text(doc, "driver", r->driver, sizeof r->driver);
    text(doc, "server_version", r->server, sizeof r->server);
    text(conn, "autocommit", r->autocommit, sizeof r->autocommit);
    text(conn, "auth_plugin", r->auth, sizeof r->auth);
    text(run, "script", r->script, sizeof r->script);
    r->protocol = (int)num(doc, "protocol");
    r->threads = (int)num(run, "threads");
    r->tps = num(doc, "tps");
    r->qps = num(doc, "qps");
    r->events = num(run, "events");
    r->duration_s = num(run, "duration_s");
    r->rt_per_event = num(doc, "round_trips_per_event");
    r->has_rte = json_is_number(json_object_get(doc, "round_trips_per_event"));
    r->rt_per_transaction = num(tot, "round_trips_per_transaction");
    r->has_rtt = json_is_number(json_object_get(tot, "round_trips_per_transaction"));
    r->rt_per_second = num(tot, "round_trips_per_second");
    r->wait_share = num(tot, "wait_share");
    r->round_trips = num(tot, "round_trips");
    r->has_cpu = json_object_get(tot, "cpu_ns") != NULL;
    r->cpu_us_per_event = num(tot, "cpu_us_per_event");
    r->cpu_us_per_execution = num(tot, "cpu_us_per_execution");
    text(conn, "pipeline", r->pipeline, sizeof r->pipeline);
    r->stmts_per_rt = num(tot, "statements_per_round_trip");
    json_t *sc = json_object_get(doc, "server_cpu");
    r->has_server_cpu = json_is_true(json_object_get(sc, "available"));
    r->server_us_per_event = num(sc, "us_per_event");
    r->server_us_per_execution = num(sc, "us_per_execution");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(doc, "classes"), i, c) {
        if (r->ncls == RT_MAX_CLASSES)
            break;
        rt_class *k = &r->cls[r->ncls++];
        text(c, "class", k->id, sizeof k->id);
        text(c, "label", k->label, sizeof k->label);
        k->executions = num(c, "executions");
        k->round_trips = num(c, "round_trips");
        k->packets = num(c, "packets_sent") + num(c, "packets_received");
        k->bytes = num(c, "bytes_sent") + num(c, "bytes_received");
        k->wait_mean_ms = num(c, "wait_mean_ms");
        k->wait_p95_ms = num(c, "wait_p95_ms");
    }
    json_array_foreach(json_object_get(doc, "ops"), i, c) {
        if (r->nops == RT_MAX_OPS)
            break;
        rt_op *o = &r->ops[r->nops++];
        text(c, "name", o->name, sizeof o->name);
        o->packets_sent = num(c, "packets_sent");
        o->packets_received = num(c, "packets_received");
        o->bytes_sent = num(c, "bytes_sent");
        o->bytes_received = num(c, "bytes_received");
    }
}

/* fbwire-pcap stats --json: totals over every connection of the capture. */
static void load_capture(json_t *doc, rt_run *r)
{
    json_t *tot = json_object_get(doc, "total");
    r->is_capture = 1;
    snprintf(r->driver, sizeof r->driver, "capture");
    r->round_trips = num(tot, "round_trips");
    r->has_cpu = json_object_get(tot, "cpu_ns") != NULL;
    r->cpu_us_per_event = num(tot, "cpu_us_per_event");
    r->cpu_us_per_execution = num(tot, "cpu_us_per_execution");
    json_t *conns = json_object_get(doc, "connections");
    json_t *first = json_array_get(conns, 0);
    if (first)
        r->protocol = (int)num(first, "protocol");
    r->threads = (int)json_array_size(conns);
    const char *name;
    json_t *o;
    json_object_foreach(json_object_get(tot, "ops"), name, o) {
        if (r->nops == RT_MAX_OPS)
            break;
        rt_op *op = &r->ops[r->nops++];
        snprintf(op->name, sizeof op->name, "%s", name);
        op->packets_sent = num(o, "packets_sent");
        op->packets_received = num(o, "packets_received");
        op->bytes_sent = num(o, "bytes_sent");
        op->bytes_received = num(o, "bytes_received");
    }
}

int rt_load(const char *path, rt_run *out)
{
    json_error_t je;
    memset(out, 0, sizeof *out);
    snprintf(out->file, sizeof out->file, "%s", path);
    json_t *doc = json_load_file(path, 0, &je);
    if (!doc) {
        fprintf(stderr, "fbwire-report: %s:%d: %s\n", path, je.line, je.text);
        return -1;
    }
    int rc = 0;
    json_t *fmt = json_object_get(doc, "format");
    if (json_is_string(fmt) && strcmp(json_string_value(fmt), "fbwire-report/1") == 0) {
        load_driver(doc, out);
    } else if (json_is_object(json_object_get(doc, "total")) &&
               json_is_array(json_object_get(doc, "connections"))) {
        load_capture(doc, out);
    } else {
        fprintf(stderr, "fbwire-report: %s: neither a driver report (format fbwire-report/1) nor "
                        "fbwire-pcap stats --json output\n", path);
        rc = -1;
    }
    json_decref(doc);
    return rc;
}

void rt_run_name(const rt_run *r, char *buf, size_t cap)
{
    if (r->is_capture)
        snprintf(buf, cap, "capture");
    else if (r->autocommit[0])
        snprintf(buf, cap, "%s %s", r->driver, r->autocommit);
    else
        snprintf(buf, cap, "%s", r->driver);
}
