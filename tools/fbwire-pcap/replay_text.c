/* SPDX-License-Identifier: MIT */
/* replay_text.c - the replay report as text (replay_report.h): per connection its steps (--list)
 * or what its replay did (failures, figures against the capture's, steps per kind, result
 * differences), then the fan-out copies, the totals and the load (statements by fingerprint,
 * results, wall time). */
#include "replay_report.h"

#include "stmt.h"

#include <inttypes.h>
#include <string.h>

/* Text output goes into fbw_bufs (base/buf.h); an append that runs out of memory loses its text. */
#define put(b, s) ((void)fbw_buf_puts((b), (s)))
#define putf(b, ...) ((void)fbw_buf_printf((b), __VA_ARGS__))

static void quote(fbw_buf *b, const void *p, size_t n)
{
    pcaptool_quote(b, p, n, 0);
}

/* ---- --list ---- */

static int quoted_type(uint16_t type)
{
    switch (type) {
    case FBW_SQL_SHORT:
    case FBW_SQL_LONG:
    case FBW_SQL_INT64:
    case FBW_SQL_INT128:
    case FBW_SQL_FLOAT:
    case FBW_SQL_DOUBLE:
    case FBW_SQL_D_FLOAT:
    case FBW_SQL_DEC16:
    case FBW_SQL_DEC34:
    case FBW_SQL_BOOLEAN:
        return 0;
    default:
        return 1;
    }
}

/* Parameters in canonical text: numbers and booleans bare, everything else quoted, NULL. */
static void params_text(fbw_buf *b, const pcaptool_step *s)
{
    put(b, " params=(");
    for (uint16_t i = 0; i < s->nparams; i++) {
        const pcaptool_param *pa = &s->params[i];
        put(b, i ? ", " : "");
        if (pa->is_null || !pa->text)
            put(b, "NULL");
        else if (quoted_type(pa->col.type))
            quote(b, pa->text, pa->len);
        else
            fbw_buf_append(b, pa->text, pa->len);
    }
    put(b, ")");
}

static void hex(fbw_buf *b, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        putf(b, "%02x", p[i]);
}

static void step_detail(fbw_buf *b, const pcaptool_step *s)
{
    switch (s->kind) {
    case PCAPTOOL_STEP_START:
        put(b, " tpb=");
        if (s->len)
            hex(b, s->data, s->len);
        else
            put(b, "default");
        break;
    case PCAPTOOL_STEP_PREPARE:
    case PCAPTOOL_STEP_IMMEDIATE:
        put(b, " ");
        quote(b, s->data, s->len);
        break;
    case PCAPTOOL_STEP_EXECUTE:
        if (s->inline_blob_size) /* asked for inline blobs (protocol 19) */
            putf(b, " inline_blob_size=%" PRIu32, s->inline_blob_size);
        if (s->scrollable) /* its cursor opened scrollable (protocol 18) */
            put(b, " cursor=scrollable");
        if (s->nparams)
            params_text(b, s);
        break;
    case PCAPTOOL_STEP_FETCH:
        putf(b, " op_fetch=%" PRIu32, s->fetches);
        break;
    case PCAPTOOL_STEP_FETCH_SCROLL:
        if (pcaptool_fetch_op_name(s->fetch_op))
            putf(b, " fetch=\"%s\"", pcaptool_fetch_op_name(s->fetch_op));
        else
            putf(b, " fetch_op=%u", (unsigned)s->fetch_op);
        if (s->fetch_op == FBW_FETCH_ABSOLUTE || s->fetch_op == FBW_FETCH_RELATIVE)
            putf(b, " pos=%" PRId32, s->fetch_pos);
        putf(b, " rows=%" PRId64, s->result.rows);
        break;
    case PCAPTOOL_STEP_COUNT_CURSOR:
        putf(b, " count=%" PRId64, s->result.rows);
        break;
    case PCAPTOOL_STEP_BLOB:
        putf(b, " bytes=%zu%s", s->len, s->cancelled ? " cancelled" : "");
        break;
    case PCAPTOOL_STEP_BLOB_READ:
        if (s->read_exec)
            putf(b, " from step %zu row %" PRIu32 " col %u", s->read_exec, s->read_row + 1,
                 s->read_col + 1u);
        putf(b, " requests=%zu bytes=%" PRId64 "%s", s->nacts, s->result.rows,
             s->result.eof ? " (to its end)" : "");
        break;
    case PCAPTOOL_STEP_INFO_SQL:
    case PCAPTOOL_STEP_INFO_DATABASE:
    case PCAPTOOL_STEP_INFO_TRANSACTION:
        put(b, " items=");
        hex(b, s->data, s->len);
        putf(b, " buffer=%" PRIu32, s->info_buflen);
        break;
    default:
        break;
    }
}

static void step_text(fbw_buf *b, size_t i, const pcaptool_step *s)
{
    putf(b, "%5zu %s", i + 1, pcaptool_step_name(s->kind));
    if (s->stmt)
        putf(b, " s%d", s->stmt);
    if (s->tx)
        putf(b, " t%d", s->tx);
    step_detail(b, s);
    if (s->kind == PCAPTOOL_STEP_IMMEDIATE && s->imm2) {
        if (s->nparams)
            params_text(b, s);
        putf(b, " output=%u", s->out_n);
        if (s->inline_blob_size) /* asked for inline blobs (protocol 19) */
            putf(b, " inline_blob_size=%" PRIu32, s->inline_blob_size);
    }
    if (s->problem) {
        put(b, " [not replayable: ");
        put(b, s->problem);
        put(b, "]");
    }
    put(b, "\n");
}

/* BLR requests (gbak, gfix, QLI): one line each, the ones past the listed count in one. */
static void requests_text(fbw_buf *b, const rp_conn_report *c)
{
    for (size_t i = 0; i < c->nrequests; i++)
        putf(b, "request compiled at packet %" PRIu64 " (%zu bytes of BLR, %u messages) [not "
                "replayable: %s]\n", c->requests[i].packet, c->requests[i].blr_bytes,
             c->requests[i].messages, PCAPTOOL_WL_REQUEST_WHY);
    if (c->requests_total > c->nrequests)
        putf(b, "requests compiled and not listed: %zu [not replayable: %s]\n",
             c->requests_total - c->nrequests, PCAPTOOL_WL_REQUEST_WHY);
}

static void not_replayed_text(fbw_buf *b, const uint64_t *not_replayed)
{
    int first = 1;
    for (int op = 0; op <= FBW_OP_MAX; op++) {
        char nb[24];
        if (!not_replayed[op])
            continue;
        put(b, first ? "not replayed:" : ",");
        putf(b, " %s %" PRIu64, fbw_op_name(op, nb, sizeof nb), not_replayed[op]);
        first = 0;
    }
    if (!first)
        put(b, "\n");
}

/* ---- figures ---- */

static void ratio_text(fbw_buf *b, const char *name, const uint64_t *cap, uint64_t rep,
                       int replayed)
{
    if (!cap) { /* a trace's workload: nothing to compare with */
        putf(b, "%-18s %12s", name, "n/a");
        if (replayed)
            putf(b, " %12" PRIu64 "       -\n", rep);
        else
            put(b, "            -       -\n");
        return;
    }
    putf(b, "%-18s %12" PRIu64, name, *cap);
    if (!replayed) {
        put(b, "            -       -\n");
        return;
    }
    putf(b, " %12" PRIu64, rep);
    if (*cap)
        putf(b, " %7.2f\n", (double)rep / (double)*cap);
    else
        put(b, "       -\n");
}

/* cap NULL: a trace's workload, whose figures are not known. */
static void figures_text(fbw_buf *b, const fbw_stats *cap, const fbw_stats *rep, int replayed)
{
    putf(b, "%-18s %12s %12s %7s\n", "", cap ? "capture" : "trace", "fbwire", "ratio");
    ratio_text(b, "round_trips", cap ? &cap->round_trips : NULL, rep->round_trips, replayed);
    ratio_text(b, "packets_sent", cap ? &cap->packets_sent : NULL, rep->packets_sent, replayed);
    ratio_text(b, "packets_received", cap ? &cap->packets_received : NULL, rep->packets_received,
               replayed);
    ratio_text(b, "bytes_sent", cap ? &cap->bytes_sent : NULL, rep->bytes_sent, replayed);
    ratio_text(b, "bytes_received", cap ? &cap->bytes_received : NULL, rep->bytes_received,
               replayed);
}

/* Steps per kind; after a replay also how many failed and the round trips fbwire spent on them. */
static void kinds_text(fbw_buf *b, const rp_kind_count *k, int replayed)
{
    if (replayed)
        putf(b, "%-18s %12s %12s %12s\n", "step", "count", "failed", "round_trips");
    else
        putf(b, "%-18s %12s\n", "step", "count");
    for (int i = 0; i < PCAPTOOL_STEP_KINDS; i++) {
        if (!k[i].steps)
            continue;
        putf(b, "%-18s %12" PRIu64, pcaptool_step_name(i), k[i].steps);
        if (replayed)
            putf(b, " %12" PRIu64 " %12" PRIu64, k[i].failed, k[i].round_trips);
        put(b, "\n");
    }
}

/* ---- failures and differences ---- */

static void failure_text(fbw_buf *b, const rp_failure *f)
{
    putf(b, "failed: step %zu %s", f->step, pcaptool_step_name(f->kind));
    if (f->stmt)
        putf(b, " s%d", f->stmt);
    if (f->tx)
        putf(b, " t%d", f->tx);
    put(b, ": ");
    quote(b, f->message, strlen(f->message));
    if (f->sqlstate[0])
        putf(b, " [SQLSTATE %s]", f->sqlstate);
    put(b, "\n");
}

static void side_text(fbw_buf *b, const char *who, const pcaptool_result *r, int rows)
{
    putf(b, "%s ", who);
    if (rows)
        putf(b, "%" PRId64 " rows (hash %016" PRIx64 "%s)", r->rows, r->hash,
             r->unknown ? ", format unknown" : "");
    else
        putf(b, "%" PRId64 " affected", r->affected);
}

static void difference_text(fbw_buf *b, const rp_diff *d)
{
    int rows = d->cap.rows >= 0;
    if (d->kind == PCAPTOOL_STEP_BLOB_READ) {
        putf(b,
             "different: step %zu blob_read (row %" PRIu32 " col %u of step %zu): capture %" PRId64
             " bytes%s (hash %016" PRIx64 "), replay %" PRId64 " bytes (hash %016" PRIx64 ")\n",
             d->step, d->read_row + 1, d->read_col + 1u, d->read_exec, d->cap.rows,
             d->cap.eof ? "" : " read of it", d->cap.hash, d->rep.rows, d->rep.hash);
        return;
    }
    putf(b, "different: step %zu %s s%d ", d->step, pcaptool_step_name(d->kind), d->stmt);
    if (d->sql)
        quote(b, d->sql, strlen(d->sql));
    put(b, ": ");
    side_text(b, "capture", &d->cap, rows);
    put(b, ", ");
    side_text(b, "replay", &d->rep, rows);
    put(b, "\n");
}

static void differences_text(fbw_buf *b, const rp_tally *t)
{
    for (size_t k = 0; k < t->ndiffs; k++)
        difference_text(b, &t->diffs[k]);
    if (t->more_diffs)
        putf(b, "different: %zu more (--json lists all)\n", t->more_diffs);
}

/* ---- connections ---- */

static void conn_header(const rp_report *m, fbw_buf *b, const pcaptool_report_conn *ci)
{
    putf(b, "connection %d: %s -> %s\n", ci->id, ci->client, ci->server);
    if (ci->open_at_end && !ci->problem)
        put(b, "note: the capture ended before this connection did: its workload is what the "
               "capture holds\n");
    if (ci->encrypted)
        putf(b, "error: the capture is encrypted (wire crypt %s): its SQL cannot be read; %s\n",
             ci->encrypted,
             m->list ? "the steps below are only those before op_crypt"
                     : "nothing of this connection was replayed");
    else if (ci->problem)
        putf(b, "error: the capture cannot be decoded to its end (%s); %s\n", ci->problem,
             m->list ? "the steps below are only those decoded before it"
                     : "nothing of this connection was replayed");
}

static void conn_replay_text(const rp_report *m, fbw_buf *b, const rp_conn_report *c)
{
    if (c->replayed)
        putf(b, "replayed on %s\n", m->database);
    if (c->error)
        putf(b, "error: %s\n", c->error);
    for (size_t i = 0; c->tally && i < c->tally->nfail; i++)
        failure_text(b, &c->tally->fail[i]);
    if (c->tally && c->tally->more_fail)
        putf(b, "failed: %zu more steps (the first %d are listed)\n", c->tally->more_fail,
             RP_MAX_FAILURES_KEPT);
    if (c->late)
        putf(b,
             "note: %" PRIu64 " replies came after their step was handed on to the replay "
             "(streaming window): not in the capture's results, so not compared\n",
             c->late);
    figures_text(b, m->from_trace ? NULL : c->ci->stats, c->replay, c->replayed);
    kinds_text(b, c->kinds, c->replayed);
}

static void conn_text(const rp_report *m, fbw_buf *b, const rp_conn_report *c)
{
    conn_header(m, b, c->ci);
    if (m->list) {
        for (size_t i = 0; i < c->nsteps; i++)
            step_text(b, i, &c->steps[i]);
        kinds_text(b, c->kinds, 0);
    } else {
        conn_replay_text(m, b, c);
    }
    not_replayed_text(b, c->not_replayed);
    requests_text(b, c);
    if (c->run && c->tally)
        differences_text(b, c->tally);
}

static void copy_text(fbw_buf *b, const rp_conn_report *c)
{
    putf(b, "\nconnection %d copy %d: %" PRIu64 " steps, %" PRIu64 " failed\n", c->id, c->copy,
         c->steps_total, c->failed_total);
    if (c->error)
        putf(b, "error: %s\n", c->error);
    for (size_t k = 0; k < c->tally->nfail && k < RP_MAX_DIFFS_SHOWN; k++)
        failure_text(b, &c->tally->fail[k]);
    differences_text(b, c->tally);
}

/* ---- totals and load ---- */

static void totals_text(const rp_report *m, fbw_buf *b)
{
    const rp_totals *t = &m->t;
    putf(b, "\ntotal: %zu connection%s, %zu replayed, %" PRIu64 " steps, %" PRIu64 " failed\n",
         t->conns, t->conns == 1 ? "" : "s", t->replayed, t->steps, t->failed);
    if (!m->list)
        figures_text(b, m->from_trace ? NULL : &t->capture, &t->replay, t->replayed > 0);
    kinds_text(b, t->kinds, t->replayed > 0);
}

static void load_text(const rp_report *m, fbw_buf *b)
{
    const rp_load *l = &m->load;
    putf(b, "\nstatements by fingerprint (latency in ms, request to last reply; rt: round trips "
            "per execution; results: matched/compared)\n");
    pcaptool_fpstats_text(l->f, b, 40);
    putf(b, "\nresults: %" PRIu64 " compared, %" PRIu64 " matched, %" PRIu64 " different%s\n",
         m->t.compared, m->t.matched, m->t.different,
         l->results_ignore ? " (--results ignore)" : "");
    putf(b, "wall time: %.3f s replay, %.3f s capture (ratio %.3f), pace %s", l->wall_s,
         l->capture_s, l->capture_s > 0 ? l->wall_s / l->capture_s : 0.0,
         l->pace_none ? "none" : "original");
    if (!l->pace_none)
        putf(b, ", speed %g", l->speed);
    putf(b, ", %zu connections\n", l->connections);
}

/* Write b out and empty it: the report goes out a connection at a time. */
static int flush(fbw_buf *b, FILE *out)
{
    int rc = 0;
    if (fbw_buf_avail(b) && fwrite(fbw_buf_head(b), 1, fbw_buf_avail(b), out) != fbw_buf_avail(b))
        rc = -1;
    fbw_buf_free(b);
    fbw_buf_init(b);
    return rc;
}

int rp_report_text(const rp_report *m, FILE *out)
{
    fbw_buf b;
    fbw_buf_init(&b);
    int rc = 0;
    for (size_t i = 0; i < m->nconns; i++) {
        put(&b, i ? "\n" : "");
        conn_text(m, &b, &m->conns[i]);
        rc |= flush(&b, out);
    }
    for (size_t i = 0; i < m->ncopies; i++)
        copy_text(&b, &m->copies[i]);
    totals_text(m, &b);
    if (m->has_load)
        load_text(m, &b);
    return rc | flush(&b, out);
}
