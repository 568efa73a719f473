/* SPDX-License-Identifier: MIT */
/* report_json.c - the report as a JSON document (see report.h, report_int.h); needs jansson. */
#include "report_int.h"

#include "ops.h"

#include <string.h>
#include <strings.h>

#ifdef FBW_HAVE_JANSSON
#include <jansson.h>
#endif

/* ---------------------------------------------------------------- JSON */

#ifdef FBW_HAVE_JANSSON

static json_t *jstr(const char *s) { return s ? json_string(s) : json_null(); }

/* True when the option name (the text before '=') mentions a password. */
static int secret_option(const char *a, size_t name_len)
{
    static const char word[] = "password";
    for (size_t i = 0; i + sizeof word - 1 <= name_len; i++)
        if (strncasecmp(a + i, word, sizeof word - 1) == 0)
            return 1;
    return 0;
}

/* Option text as given, with the value of any password option replaced by "***". */
static json_t *options_json(const sbdrv_rep_run *run)
{
    json_t *arr = json_array();
    for (int i = 0; arr && i < run->argc; i++) {
        const char *a = run->argv[i];
        const char *eq = a ? strchr(a, '=') : NULL;
        if (a && eq && secret_option(a, (size_t)(eq - a)))
            json_array_append_new(arr, json_sprintf("%.*s=***", (int)(eq - a), a));
        else if (a)
            json_array_append_new(arr, json_string(a));
    }
    return arr;
}

static json_t *class_json(int k, const sbdrv_rep_cls *c)
{
    double n = (double)c->executions;
    json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f}",
                     "class", sbdrv_class_id(k), "label", sbdrv_class_label(k),
                     "executions", (json_int_t)c->executions, "round_trips", (json_int_t)c->round_trips,
                     "packets_sent", (json_int_t)c->packets_sent,
                     "packets_received", (json_int_t)c->packets_received,
                     "bytes_sent", (json_int_t)c->bytes_sent, "bytes_received", (json_int_t)c->bytes_received,
                     "wait_ns", (json_int_t)c->wait_ns, "cpu_ns", (json_int_t)c->cpu_ns,
                     "round_trips_per_execution", ratio((double)c->round_trips, n),
                     "packets_per_execution", ratio((double)(c->packets_sent + c->packets_received), n),
                     "bytes_per_execution", ratio((double)(c->bytes_sent + c->bytes_received), n),
                     "wait_mean_ms", ratio((double)c->wait_ns / 1e6, n),
                     "wait_p95_ms", (double)sbdrv_rep_percentile(c, 95) / 1e6,
                     "cpu_us_per_execution", ratio((double)c->cpu_ns / 1e3, n));
    json_object_set_new(o, "cpu_calls", json_integer((json_int_t)sbdrv_cpu_calls(&c->cpu)));
    json_object_set_new(o, "cpu_measured_calls",
                        json_integer((json_int_t)sbdrv_cpu_measured_calls(&c->cpu)));
    return o;
}

static json_t *ops_json(const sbdrv_rep_acc *a)
{
    json_t *arr = json_array();
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        const fbw_op_stats *o = &a->ops.op[op];
        if (o->packets_sent == 0 && o->packets_received == 0)
            continue;
        char name[40];
        json_array_append_new(arr, json_pack("{s:i, s:s, s:I, s:I, s:I, s:I}", "op", op, "name",
                                             fbw_op_name(op, name, sizeof name),
                                             "packets_sent", (json_int_t)o->packets_sent,
                                             "packets_received", (json_int_t)o->packets_received,
                                             "bytes_sent", (json_int_t)o->bytes_sent,
                                             "bytes_received", (json_int_t)o->bytes_received));
    }
    return arr;
}

static json_t *intervals_json(const sbdrv_rep_run *run)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < run->nintervals; i++) {
        const sbdrv_rep_interval *iv = &run->intervals[i];
        json_array_append_new(arr, json_pack("{s:f, s:f, s:I, s:I, s:I, s:I, s:f}", "t", iv->t,
                                             "seconds", iv->seconds, "events", (json_int_t)iv->events,
                                             "round_trips", (json_int_t)iv->round_trips,
                                             "wait_ns", (json_int_t)iv->wait_ns,
                                             "executions", (json_int_t)iv->executions,
                                             "round_trips_per_event",
                                             ratio((double)iv->round_trips, (double)iv->events)));
    }
    return arr;
}

static json_t *tri_json(int v) { return v < 0 ? json_null() : json_boolean(v); }

/* Server CPU: figures when measured, else available false and the reason (never 0 CPU). */
static json_t *server_cpu_json(const sbdrv_rep_run *run, const sbdrv_rep_totals *t)
{
    const sbdrv_rep_server_cpu *sc = &run->server_cpu;
    if (!sc->available)
        return json_pack("{s:b, s:s}", "available", 0, "why", str(sc->why, "not measured"));
    return json_pack("{s:b, s:i, s:i, s:I, s:f, s:f}", "available", 1, "pid", sc->pid,
                     "children", sc->children, "cpu_ns", (json_int_t)sc->cpu_ns,
                     "us_per_event", t->server_us_per_event,
                     "us_per_execution", t->server_us_per_execution);
}

static json_t *document(const sbdrv_rep_acc *a, const sbdrv_rep_run *run)
{
    sbdrv_rep_totals t;
    sbdrv_rep_totals_of(a, run, &t);
    const sbdrv_rep_facts *x = &run->facts;
    json_t *classes = json_array();
    for (int k = 0; k < SBDRV_CLS_COUNT; k++)
        if (a->cls[k].executions)
            json_array_append_new(classes, class_json(k, &a->cls[k]));
    json_t *runj = json_pack("{s:o, s:o, s:o, s:o, s:i, s:f, s:I, s:{s:I, s:I, s:I, s:I}, s:I, s:I, s:f, s:f}",
                             "sysbench_version", jstr(run->sysbench_version), "script", jstr(run->script),
                             "command", jstr(run->command), "options", options_json(run),
                             "threads", (int)run->threads, "duration_s", run->duration_s,
                             "events", (json_int_t)run->events, "queries",
                             "read", (json_int_t)run->reads, "write", (json_int_t)run->writes,
                             "other", (json_int_t)run->other,
                             "total", (json_int_t)(run->reads + run->writes + run->other),
                             "errors", (json_int_t)run->errors, "reconnects", (json_int_t)run->reconnects,
                             "tps", t.tps, "qps", t.qps);
    json_t *conn = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s}",
                             "server_version", x->server_version[0] ? json_string(x->server_version) : json_null(),
                             "protocol", x->protocol > 0 ? json_integer(x->protocol) : json_null(),
                             "auth_plugin", x->auth_plugin[0] ? json_string(x->auth_plugin) : json_null(),
                             "wire_crypt", x->wire_crypt[0] ? json_string(x->wire_crypt) : json_null(),
                             "compression", tri_json(x->compression), "lazy_send", tri_json(x->lazy_send),
                             "autocommit", jstr(run->autocommit), "isolation", jstr(run->isolation),
                             "pipeline", json_string(str(run->pipeline, "off")),
                             "row_format", json_string(str(run->row_format, "described")),
                             "client_library", run->client_library ? json_string(run->client_library) : json_null(),
                             "note", x->note[0] ? json_string(x->note) : json_null(),
                             "counted_at", x->unmeasured ? "none" : x->socket_level ? "socket" : "packets");
    int sock = x->socket_level; /* op_transaction is inside the ciphertext then */
    json_t *tot = json_pack("{s:I, s:I, s:I, s:I, s:I, s:o, s:f, s:o, s:f, s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I}",
                            "round_trips", (json_int_t)t.round_trips,
                            "round_trips_all", (json_int_t)t.round_trips_all,
                            "executions", (json_int_t)t.executions, "wait_ns", (json_int_t)t.wait_ns,
                            "cpu_ns", (json_int_t)t.cpu_ns,
                            "transactions", sock ? json_null() : json_integer((json_int_t)t.transactions),
                            "round_trips_per_event", t.rt_per_event,
                            "round_trips_per_transaction",
                            sock ? json_null() : json_real(t.rt_per_transaction),
                            "round_trips_per_second", t.rt_per_second, "wait_share", t.wait_share,
                            "cpu_us_per_event", t.cpu_us_per_event,
                            "cpu_us_per_execution", t.cpu_us_per_execution,
                            "packets_sent", (json_int_t)a->ops.packets_sent,
                            "packets_received", (json_int_t)a->ops.packets_received,
                            "bytes_sent", (json_int_t)a->ops.bytes_sent,
                            "bytes_received", (json_int_t)a->ops.bytes_received,
                            "wire_bytes_sent", (json_int_t)a->ops.wire_bytes_sent,
                            "wire_bytes_received", (json_int_t)a->ops.wire_bytes_received);
    json_object_set_new(tot, "statements_per_round_trip", json_real(t.statements_per_round_trip));
    json_object_set_new(tot, "cpu_method", json_string(str(run->cpu_method, "every-call")));
    json_object_set_new(tot, "cpu_sample_every",
                        json_integer(run->cpu_sample_every ? run->cpu_sample_every : 1));
    json_object_set_new(tot, "cpu_calls", json_integer((json_int_t)t.cpu_calls));
    json_object_set_new(tot, "cpu_measured_calls", json_integer((json_int_t)t.cpu_measured_calls));
    return json_pack("{s:s, s:o, s:o, s:o, s:o, s:f, s:f, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                     "format", "fbwire-report/1", "driver", jstr(run->driver),
                     "server_version", x->server_version[0] ? json_string(x->server_version) : json_null(),
                     "protocol", x->protocol > 0 ? json_integer(x->protocol) : json_null(),
                     "round_trips_per_event", x->unmeasured ? json_null() : json_real(t.rt_per_event),
                     "tps", t.tps, "qps", t.qps,
                     "run", runj, "connection", conn, "totals", tot,
                     "server_cpu", server_cpu_json(run, &t), "classes", classes,
                     "ops", ops_json(a), "intervals", intervals_json(run));
}

int sbdrv_rep_write_json(const char *path, const sbdrv_rep_acc *a, const sbdrv_rep_run *run, fbw_err *err)
{
    json_t *doc = document(a, run);
    if (!doc)
        return fbw_err_set(err, FBW_E_NOMEM, "report: cannot build the JSON document");
    int rc = json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(doc);
    return rc == 0 ? FBW_OK : fbw_err_set(err, FBW_E_IO, "report: cannot write %s", path);
}

#else

int sbdrv_rep_write_json(const char *path, const sbdrv_rep_acc *a, const sbdrv_rep_run *run, fbw_err *err)
{
    (void)a;
    (void)run;
    return fbw_err_set(err, FBW_E_UNSUPPORTED, "report: built without jansson, cannot write %s", path);
}

#endif
