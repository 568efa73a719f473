/* SPDX-License-Identifier: MIT */
/* replay_json.c - the replay report as JSON (replay_report.h), built with jansson; its keys and
 * values are docs/fbwire-pcap-replay.schema.json's. Every builder returns a new reference or NULL
 * when out of memory; a NULL part makes its parent NULL (json_pack's "o" takes the reference
 * either way), so a report is whole or not written at all. */
#include "replay_report.h"

#include "jsonout.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define JI(v) ((json_int_t)(v))

/* Append v to *a; on failure *a is released and set to NULL (v too). */
static void push(json_t **a, json_t *v)
{
    if (*a && v && json_array_append_new(*a, v) == 0)
        return;
    json_decref(v);
    json_decref(*a);
    *a = NULL;
}

/* Set key of *o to v; on failure as push. */
static void set(json_t **o, const char *key, json_t *v)
{
    if (*o && v && json_object_set_new(*o, key, v) == 0)
        return;
    json_decref(v);
    json_decref(*o);
    *o = NULL;
}

/* ---- --list ---- */

static json_t *params_json(const pcaptool_step *s)
{
    json_t *a = json_array();
    for (uint16_t k = 0; k < s->nparams; k++) {
        const pcaptool_param *pa = &s->params[k];
        push(&a,
             pa->is_null || !pa->text ? json_null() : pcaptool_json_bytes(pa->text, pa->len, 0));
    }
    return a;
}

/* The keys of a step's kind (added to o). */
static void step_detail(json_t **o, const pcaptool_step *s)
{
    if (s->kind == PCAPTOOL_STEP_START) {
        set(o, "tpb", pcaptool_json_hex(s->data, s->len));
    } else if (s->kind == PCAPTOOL_STEP_PREPARE || s->kind == PCAPTOOL_STEP_IMMEDIATE) {
        set(o, "sql", pcaptool_json_bytes(s->data, s->len, 0));
    } else if (s->kind == PCAPTOOL_STEP_EXECUTE) {
        set(o, "params", params_json(s));
        set(o, "inline_blob_size", json_integer(JI(s->inline_blob_size))); /* 0: none */
        set(o, "scrollable", json_boolean(s->scrollable));
    } else if (s->kind == PCAPTOOL_STEP_FETCH) {
        set(o, "op_fetch", json_integer(JI(s->fetches)));
    } else if (s->kind == PCAPTOOL_STEP_FETCH_SCROLL) {
        const char *move = pcaptool_fetch_op_name(s->fetch_op);
        set(o, "fetch", move ? json_string(move) : json_integer(JI(s->fetch_op)));
        set(o, "pos", json_integer(JI(s->fetch_pos)));
        set(o, "rows", json_integer(JI(s->result.rows)));
    } else if (s->kind == PCAPTOOL_STEP_COUNT_CURSOR) {
        set(o, "count", json_integer(JI(s->result.rows)));
    } else if (s->kind == PCAPTOOL_STEP_BLOB) {
        set(o, "bytes", json_integer(JI(s->len)));
        set(o, "cancelled", json_boolean(s->cancelled));
    } else if (s->kind == PCAPTOOL_STEP_BLOB_READ) {
        json_t *r = json_pack("{s:I,s:I,s:I,s:I,s:I,s:b}", "from_step", JI(s->read_exec), "row",
                              JI(s->read_row + 1), "col", JI(s->read_col + 1u), "requests",
                              JI(s->nacts), "bytes", JI(s->result.rows), "to_end", s->result.eof);
        if (!r || !*o || json_object_update(*o, r))
            set(o, "from_step", NULL);
        json_decref(r);
    } else if (s->kind >= PCAPTOOL_STEP_INFO_SQL && s->kind <= PCAPTOOL_STEP_INFO_TRANSACTION) {
        set(o, "items", pcaptool_json_hex(s->data, s->len));
        set(o, "buffer", json_integer(JI(s->info_buflen)));
    }
    if (s->kind == PCAPTOOL_STEP_IMMEDIATE && s->imm2) {
        set(o, "params", params_json(s));
        set(o, "output", json_integer(JI(s->out_n)));
        set(o, "inline_blob_size", json_integer(JI(s->inline_blob_size))); /* 0: none */
    }
}

static json_t *step_json(size_t i, const pcaptool_step *s)
{
    json_t *o =
        json_pack("{s:I,s:s,s:i,s:i,s:I}", "step", JI(i + 1), "kind", pcaptool_step_name(s->kind),
                  "stmt", s->stmt, "tx", s->tx, "packet", JI(s->packet));
    step_detail(&o, s);
    set(&o, "problem", pcaptool_json_str(s->problem));
    return o;
}

/* {"compiled": N, "why": "...", "listed": [{"packet", "blr_bytes", "messages"}, ...]} */
static json_t *requests_json(const rp_conn_report *c)
{
    json_t *listed = json_array();
    for (size_t i = 0; i < c->nrequests; i++)
        push(&listed, json_pack("{s:I, s:I, s:I}", "packet", JI(c->requests[i].packet),
                                "blr_bytes", JI(c->requests[i].blr_bytes), "messages",
                                JI(c->requests[i].messages)));
    if (!listed)
        return NULL;
    return json_pack("{s:I, s:s, s:o}", "compiled", JI(c->requests_total), "why", PCAPTOOL_WL_REQUEST_WHY,
                     "listed", listed);
}

static json_t *not_replayed_json(const uint64_t *not_replayed)
{
    json_t *o = json_object();
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        char nb[24];
        if (not_replayed[op])
            set(&o, fbw_op_name(op, nb, sizeof nb), json_integer(JI(not_replayed[op])));
    }
    return o;
}

/* ---- figures ---- */

static json_t *stats_json(const fbw_stats *s)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I}", "round_trips", JI(s->round_trips), "packets_sent",
                     JI(s->packets_sent), "packets_received", JI(s->packets_received), "bytes_sent",
                     JI(s->bytes_sent), "bytes_received", JI(s->bytes_received));
}

static json_t *ratio_one(uint64_t cap, uint64_t rep)
{
    return cap ? pcaptool_json_fixed((double)rep / (double)cap, 4) : json_null();
}

/* The replay's figures over the capture's (null when nothing was replayed). */
static json_t *ratio_json(const fbw_stats *cap, const fbw_stats *rep, int replayed)
{
    if (!replayed)
        return json_null();
    return json_pack("{s:o,s:o,s:o,s:o,s:o}", "round_trips",
                     ratio_one(cap->round_trips, rep->round_trips), "packets_sent",
                     ratio_one(cap->packets_sent, rep->packets_sent), "packets_received",
                     ratio_one(cap->packets_received, rep->packets_received), "bytes_sent",
                     ratio_one(cap->bytes_sent, rep->bytes_sent), "bytes_received",
                     ratio_one(cap->bytes_received, rep->bytes_received));
}

static json_t *kinds_json(const rp_kind_count *k)
{
    json_t *o = json_object();
    for (int i = 0; i < PCAPTOOL_STEP_KINDS; i++)
        if (k[i].steps)
            set(&o, pcaptool_step_name(i),
                json_pack("{s:I,s:I,s:I}", "count", JI(k[i].steps), "failed", JI(k[i].failed),
                          "round_trips", JI(k[i].round_trips)));
    return o;
}

/* ---- failures and differences ---- */

static json_t *failures_json(const rp_tally *t)
{
    json_t *a = json_array();
    for (size_t i = 0; t && i < t->nfail; i++) {
        const rp_failure *f = &t->fail[i];
        push(&a, json_pack("{s:I,s:s,s:i,s:i,s:o,s:o}", "step", JI(f->step), "kind",
                           pcaptool_step_name(f->kind), "stmt", f->stmt, "tx", f->tx, "message",
                           pcaptool_json_str(f->message), "sqlstate",
                           pcaptool_json_str(f->sqlstate[0] ? f->sqlstate : NULL)));
    }
    return a;
}

static json_t *result_json(const pcaptool_result *r)
{
    char hash[17];
    snprintf(hash, sizeof hash, "%016" PRIx64, r->hash);
    return json_pack("{s:I,s:s,s:I}", "rows", JI(r->rows), "hash", hash, "affected",
                     JI(r->affected));
}

static json_t *differences_json(const rp_tally *t)
{
    json_t *a = json_array();
    for (size_t k = 0; k < t->ndiffs; k++) {
        const rp_diff *d = &t->diffs[k];
        push(&a, json_pack("{s:I,s:s,s:i,s:o,s:o,s:o}", "step", JI(d->step), "kind",
                           pcaptool_step_name(d->kind), "stmt", d->stmt, "sql",
                           pcaptool_json_str(d->sql), "capture", result_json(&d->cap), "replay",
                           result_json(&d->rep)));
    }
    return a;
}

/* ---- connections ---- */

static json_t *steps_json(const rp_conn_report *c)
{
    json_t *a = json_array();
    for (size_t i = 0; i < c->nsteps; i++)
        push(&a, step_json(i, &c->steps[i]));
    return a;
}

static json_t *conn_json(const rp_report *m, const rp_conn_report *c)
{
    const pcaptool_report_conn *ci = c->ci;
    json_t *o = json_pack("{s:i,s:o,s:o,s:o,s:o,s:b}", "id", ci->id, "client",
                          pcaptool_json_str(ci->client), "server", pcaptool_json_str(ci->server),
                          "encrypted", pcaptool_json_str(ci->encrypted), "problem",
                          pcaptool_json_str(ci->problem), "open_at_end", ci->open_at_end);
    if (m->list) {
        set(&o, "steps", steps_json(c));
    } else {
        set(&o, "replayed", json_boolean(c->replayed));
        set(&o, "error", pcaptool_json_str(c->error));
        set(&o, "failures", failures_json(c->tally));
        set(&o, "replay", c->replayed ? stats_json(c->replay) : json_null());
        set(&o, "ratio", m->from_trace ? json_null() : ratio_json(ci->stats, c->replay, c->replayed));
        set(&o, "late_replies", json_integer(JI(c->late)));
    }
    set(&o, "capture", m->from_trace ? json_null() : stats_json(ci->stats));
    set(&o, "step_counts", kinds_json(c->kinds));
    set(&o, "blr_requests", requests_json(c));
    set(&o, "not_replayed", not_replayed_json(c->not_replayed));
    if (c->run && c->tally)
        set(&o, "differences", differences_json(c->tally));
    return o;
}

static json_t *copy_json(const rp_conn_report *c)
{
    return json_pack("{s:i,s:i,s:I,s:I,s:o,s:o,s:o}", "id", c->id, "copy", c->copy, "steps",
                     JI(c->steps_total), "failed", JI(c->failed_total), "error",
                     pcaptool_json_str(c->error), "failures", failures_json(c->tally),
                     "differences", differences_json(c->tally));
}

/* ---- totals and load ---- */

static json_t *totals_json(const rp_report *m)
{
    const rp_totals *t = &m->t;
    json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:o}", "connections", JI(t->conns), "replayed",
                          JI(t->replayed), "steps", JI(t->steps), "failed", JI(t->failed),
                          "capture", m->from_trace ? json_null() : stats_json(&t->capture));
    if (!m->list) {
        set(&o, "replay", stats_json(&t->replay));
        set(&o, "ratio", m->from_trace ? json_null()
                                       : ratio_json(&t->capture, &t->replay, t->replayed > 0));
    }
    set(&o, "step_counts", kinds_json(t->kinds));
    return o;
}

static json_t *load_json(const rp_report *m)
{
    const rp_load *l = &m->load;
    return json_pack("{s:s,s:f,s:I,s:o,s:o,s:{s:I,s:I,s:I,s:b},s:o}", "pace",
                     l->pace_none ? "none" : "original", "speed", l->speed, "connections",
                     JI(l->connections), "wall_s", pcaptool_json_fixed(l->wall_s, 6), "capture_s",
                     pcaptool_json_fixed(l->capture_s, 6), "results", "compared", JI(m->t.compared),
                     "matched", JI(m->t.matched), "different", JI(m->t.different), "ignored",
                     l->results_ignore, "statements", pcaptool_fpstats_json(l->f));
}

json_t *rp_report_json(const rp_report *m)
{
    json_t *conns = json_array();
    for (size_t i = 0; i < m->nconns; i++)
        push(&conns, conn_json(m, &m->conns[i]));
    json_t *o = json_pack("{s:s,s:o,s:o,s:o}", "mode", m->list ? "list" : "replay", "database",
                          pcaptool_json_str(m->list ? NULL : m->database), "truncated",
                          pcaptool_json_str(m->truncated), "connections", conns);
    if (m->has_load) {
        json_t *copies = json_array();
        for (size_t i = 0; i < m->ncopies; i++)
            push(&copies, copy_json(&m->copies[i]));
        set(&o, "copies", copies);
    }
    set(&o, "total", totals_json(m));
    if (m->has_load)
        set(&o, "load", load_json(m));
    return o;
}
