/* SPDX-License-Identifier: MIT */
/* report_text.c - the text report and the interval line (see report.h, report_int.h). */
#include "report_int.h"

#include "ops.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- text */

static const char *tri(int v) { return v < 0 ? "?" : v ? "on" : "off"; }

static void print_facts(FILE *f, const sbdrv_rep_run *run)
{
    const sbdrv_rep_facts *x = &run->facts;
    char proto[16] = "?";
    if (x->protocol > 0)
        snprintf(proto, sizeof proto, "%d", x->protocol);
    fprintf(f, "    connection:                          Firebird %s, protocol %s, auth %s, wire crypt %s,\n"
               "                                         compression %s, lazy send %s\n",
            str(x->server_version, "?"), proto, str(x->auth_plugin, "?"), str(x->wire_crypt, "?"),
            tri(x->compression), tri(x->lazy_send));
    if (x->note[0])
        fprintf(f, "    note:                                %s\n", x->note);
    if (x->socket_level)
        fprintf(f, "    note:                                wire crypt %s: the tap sees ciphertext, so round trips,\n"
                   "                                         packets (send/recv calls) and bytes are counted at the socket;\n"
                   "                                         op-level detail needs --%s-wire-crypt=disabled\n",
                str(x->wire_crypt, "?"), str(run->driver, "fbclient"));
}

static void print_classes(FILE *f, const sbdrv_rep_acc *a, int socket_level)
{
    fprintf(f, "\n    %-18s %10s %8s %9s %21s %12s %12s %12s\n", "statement class", "execs", "rt/exec",
            socket_level ? "calls/exec" : "pkts/exec", "bytes/exec out/in", "wait mean ms",
            "wait p95 ms", "cpu us/exec");
    sbdrv_rep_cls sum;
    memset(&sum, 0, sizeof sum);
    for (int k = 0; k < SBDRV_CLS_COUNT; k++) {
        const sbdrv_rep_cls *c = &a->cls[k];
        if (c->executions == 0)
            continue;
        double n = (double)c->executions;
        char bytes[32];
        snprintf(bytes, sizeof bytes, "%.0f / %.0f", (double)c->bytes_sent / n,
                 (double)c->bytes_received / n);
        char cpu[16] = "-"; /* a class none of whose calls was timed has no figure */
        if (sbdrv_cpu_measured_calls(&c->cpu) > 0 || sbdrv_cpu_calls(&c->cpu) == 0)
            snprintf(cpu, sizeof cpu, "%.2f", (double)c->cpu_ns / n / 1e3);
        fprintf(f, "    %-18s %10llu %8.3f %9.2f %21s %12.3f %12.3f %12s\n", sbdrv_class_label(k),
                (unsigned long long)c->executions, (double)c->round_trips / n,
                (double)(c->packets_sent + c->packets_received) / n, bytes,
                (double)c->wait_ns / n / 1e6, (double)sbdrv_rep_percentile(c, 95) / 1e6, cpu);
        sum.round_trips += c->round_trips;
        sum.packets_sent += c->packets_sent + c->packets_received;
        sum.bytes_sent += c->bytes_sent;
        sum.bytes_received += c->bytes_received;
    }
    fprintf(f, "    %-18s %10s %8llu %9llu %21s\n", "sum (all classes)",
            socket_level ? "rt, calls:" : "rt, pkts:",
            (unsigned long long)sum.round_trips, (unsigned long long)sum.packets_sent, "");
}

static void print_ops(FILE *f, const sbdrv_rep_acc *a, const sbdrv_rep_run *run)
{
    if (run->facts.socket_level) {
        fprintf(f, "\n    op codes:                            not available (encrypted session)\n");
        return;
    }
    fprintf(f, "\n    %-24s %11s %11s %12s %12s %11s\n", "op code", "pkts sent", "pkts recv",
            "bytes sent", "bytes recv", "sent/event");
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        const fbw_op_stats *o = &a->ops.op[op];
        if (o->packets_sent == 0 && o->packets_received == 0)
            continue;
        char name[40];
        fprintf(f, "    %-24s %11llu %11llu %12llu %12llu %11.3f\n", fbw_op_name(op, name, sizeof name),
                (unsigned long long)o->packets_sent, (unsigned long long)o->packets_received,
                (unsigned long long)o->bytes_sent, (unsigned long long)o->bytes_received,
                ratio((double)o->packets_sent, (double)run->events));
    }
    fprintf(f, "    %-24s %11llu %11llu %12llu %12llu\n", "total",
            (unsigned long long)a->ops.packets_sent, (unsigned long long)a->ops.packets_received,
            (unsigned long long)a->ops.bytes_sent, (unsigned long long)a->ops.bytes_received);
}

static void print_server_cpu(FILE *f, const sbdrv_rep_run *run, const sbdrv_rep_totals *t)
{
    const sbdrv_rep_server_cpu *sc = &run->server_cpu;
    if (!sc->available) {
        fprintf(f, "    server CPU:                          not available (%s)\n",
                str(sc->why, "not measured"));
        return;
    }
    fprintf(f, "    server CPU:                          %.2f us per event, %.2f us per statement "
               "(pid %d, %d child processes)\n",
            t->server_us_per_event, t->server_us_per_execution, sc->pid, sc->children);
}

/* How the client CPU figures were taken, so an estimate never reads as a measurement. */
static void print_cpu_method(FILE *f, const sbdrv_rep_run *run, const sbdrv_rep_totals *t)
{
    if (t->cpu_measured_calls == t->cpu_calls)
        fprintf(f, "    client CPU taken:                    thread CPU clock around every call (%s)\n",
                str(run->cpu_method, "every-call"));
    else
        fprintf(f, "    client CPU taken:                    sampled: clock read around %llu of %llu calls\n"
                   "                                         (1 in %u at random), the rest estimated per class\n",
                (unsigned long long)t->cpu_measured_calls, (unsigned long long)t->cpu_calls,
                run->cpu_sample_every ? run->cpu_sample_every : SBDRV_CPU_SAMPLE_EVERY);
}

void sbdrv_rep_print(FILE *f, const sbdrv_rep_acc *a, const sbdrv_rep_run *run)
{
    sbdrv_rep_totals t;
    sbdrv_rep_totals_of(a, run, &t);
    fprintf(f, "Firebird wire statistics (%s driver, autocommit %s):\n", str(run->driver, "?"),
            str(run->autocommit, "?"));
    fprintf(f, "    pipeline:                            %s\n", str(run->pipeline, "off"));
    fprintf(f, "    row format:                          %s\n", str(run->row_format, "described"));
    if (run->client_library)
        fprintf(f, "    client library:                      %s\n", run->client_library);
    print_facts(f, run);
    if (run->facts.unmeasured) { /* zeros here would read as measured figures */
        fprintf(f, "    round trips, packets, bytes:         not available (no wire statistics for this run)\n"
                   "    client CPU in the driver:            %.2f us per event, %.2f us per statement\n",
                t.cpu_us_per_event, t.cpu_us_per_execution);
        print_cpu_method(f, run, &t);
        fputc('\n', f);
        return;
    }
    fprintf(f, "    round trips per event:               %.3f\n", t.rt_per_event);
    if (run->facts.socket_level) /* op_transaction is inside the ciphertext */
        fprintf(f, "    round trips per transaction:         not available (encrypted session)\n");
    else
        fprintf(f, "    round trips per transaction:         %.3f (%llu transactions started)\n",
                t.rt_per_transaction, (unsigned long long)t.transactions);
    fprintf(f, "    round trips per second:              %.2f\n", t.rt_per_second);
    fprintf(f, "    time waiting on the server:          %.1f%% of thread time\n", t.wait_share * 100);
    fprintf(f, "    round trips (statements / all):      %llu / %llu\n",
            (unsigned long long)t.round_trips, (unsigned long long)t.round_trips_all);
    fprintf(f, "    client CPU in the driver:            %.2f us per event, %.2f us per statement\n",
            t.cpu_us_per_event, t.cpu_us_per_execution);
    print_cpu_method(f, run, &t);
    fprintf(f, "    statements per round trip:           %.2f\n", t.statements_per_round_trip);
    print_server_cpu(f, run, &t);
    print_classes(f, a, run->facts.socket_level);
    print_ops(f, a, run);
    fputc('\n', f);
}

void sbdrv_rep_interval_line(char *buf, size_t cap, const char *driver, const sbdrv_rep_interval *iv,
                           unsigned threads)
{
    double secs = iv->seconds > 0 ? iv->seconds : 1;
    snprintf(buf, cap, "[ %.0fs ] %s wire: rt/event: %.3f rt/s: %.2f wait: %.1f%%", iv->t,
             str(driver, "?"), ratio((double)iv->round_trips, (double)iv->events),
             (double)iv->round_trips / secs,
             100.0 * ratio((double)iv->wait_ns / 1e9, secs * (threads ? threads : 1)));
}
