/* SPDX-License-Identifier: MIT */
/* report.c - fbwire-link's exit summary: text on stderr and the --json file. */
#include "loop.h"

#include <stdlib.h>
#include <string.h>

static double cpu_per_chunk_us(const fbl_summary *s)
{
    uint64_t chunks = s->chunks[0] + s->chunks[1];
    return chunks ? (s->user_s + s->sys_s - s->setup_cpu_s) * 1e6 / (double)chunks : 0;
}

unsigned fbl_late_us(const fbl_summary *s, double q)
{
    uint64_t n = 0, seen = 0;
    for (int i = 0; i < FBL_LATE_BUCKETS; i++)
        n += s->late_hist[i];
    if (!n)
        return 0;
    uint64_t rank = (uint64_t)(q * (double)(n - 1)); /* 0-based rank of the quantile */
    for (unsigned i = 0; i < FBL_LATE_BUCKETS; i++) {
        seen += s->late_hist[i];
        if (seen > rank)
            return i;
    }
    return FBL_LATE_BUCKETS - 1;
}

void fbl_report_text(const fbl_opts *o, const fbl_summary *s, FILE *f)
{
    fprintf(f,
            "fbwire-link: %llu connection(s) (at most %llu at once, %llu refused), %llu fault(s) "
            "injected\n",
            (unsigned long long)s->conns, (unsigned long long)s->max_open,
            (unsigned long long)s->refused, (unsigned long long)s->faults);
    for (int d = 0; d < 2; d++)
        fprintf(f, "fbwire-link: %-4s %llu bytes in %llu chunks, written in %llu writes\n",
                d ? "down" : "up", (unsigned long long)s->bytes[d],
                (unsigned long long)s->chunks[d], (unsigned long long)s->writes[d]);
    fprintf(f, "fbwire-link: CPU %.3f s user + %.3f s system in %.3f s; %.2f us per chunk\n",
            s->user_s, s->sys_s, s->wall_s, cpu_per_chunk_us(s));
    fprintf(f,
            "fbwire-link: chunks written after their due time by: median %u us, p99 %u us, max "
            "%.0f us\n",
            fbl_late_us(s, 0.5), fbl_late_us(s, 0.99), (double)s->late_max_ns / 1e3);
    fprintf(f, "fbwire-link: wakes %.0f us before a due time (%s)\n", (double)s->lead_ns / 1e3,
            o->spin_auto ? "--spin auto: learnt" : "--spin");
    if (o->quiet)
        return;
    for (size_t i = 0; i < s->nconn; i++) {
        const fbl_conn_stats *c = &s->conn[i];
        fprintf(
            f,
            "fbwire-link: conn %u %s: up %llu B/%llu chunks, down %llu B/%llu chunks, %u fault(s), "
            "%.3f s, %s\n",
            c->id, c->client, (unsigned long long)c->bytes[0], (unsigned long long)c->chunks[0],
            (unsigned long long)c->bytes[1], (unsigned long long)c->chunks[1], c->faults,
            c->seconds, c->end);
    }
    if (s->conns > s->nconn)
        fprintf(f, "fbwire-link: (%llu more connections counted in the totals only)\n",
                (unsigned long long)(s->conns - s->nconn));
}

static json_t *dir_json(uint64_t bytes, uint64_t chunks, uint64_t writes)
{
    return json_pack("{s:I,s:I,s:I}", "bytes", (json_int_t)bytes, "chunks", (json_int_t)chunks,
                     "writes", (json_int_t)writes);
}

static json_t *conn_json(const fbl_conn_stats *c)
{
    return json_pack("{s:i,s:s,s:o,s:o,s:{s:I,s:I},s:i,s:f,s:s}", "conn", (int)c->id, "client",
                     c->client, "up", dir_json(c->bytes[0], c->chunks[0], c->writes[0]), "down",
                     dir_json(c->bytes[1], c->chunks[1], c->writes[1]), "dropped", "up",
                     (json_int_t)c->dropped[0], "down", (json_int_t)c->dropped[1], "faults",
                     (int)c->faults, "seconds", c->seconds, "end", c->end);
}

int fbl_json_file(json_t *doc, const char *path)
{
    if (!doc) {
        fprintf(stderr, "fbwire-link: %s: out of memory\n", path);
        return -1;
    }
    int rc = json_dump_file(doc, path, JSON_COMPACT | JSON_REAL_PRECISION(10));
    json_decref(doc);
    if (rc)
        fprintf(stderr, "fbwire-link: %s: cannot write it\n", path);
    return rc ? -1 : 0;
}

int fbl_report_json(const fbl_opts *o, const fbl_summary *s, const char *path)
{
    json_t *conns = json_array();
    for (size_t i = 0; conns && i < s->nconn; i++) {
        json_t *c = conn_json(&s->conn[i]);
        if (!c || json_array_append_new(conns, c)) {
            json_decref(conns);
            conns = NULL;
        }
    }
    json_t *doc = json_pack(
        "{s:s,s:{s:I,s:I},s:I,s:{s:I,s:I},s:I,s:{s:f,s:f,s:f,s:f},s:{s:i,s:i,s:f},"
        "s:{s:b,s:f,s:f},s:I,s:I,s:I,s:I,s:o,s:o,s:o}",
        "tool", "fbwire-link", "delay_ns", "up", (json_int_t)o->line[0].delay_ns, "down",
        (json_int_t)o->line[1].delay_ns, "jitter_ns", (json_int_t)o->line[0].jitter_ns, "rate_bps",
        "up", (json_int_t)o->line[0].rate_bps, "down", (json_int_t)o->line[1].rate_bps, "seed",
        (json_int_t)o->seed, "cpu", "user_s", s->user_s, "sys_s", s->sys_s, "wall_s", s->wall_s,
        "us_per_chunk", cpu_per_chunk_us(s), "late_us", "p50", (int)fbl_late_us(s, 0.5), "p99",
        (int)fbl_late_us(s, 0.99), "max", (double)s->late_max_ns / 1e3, "spin", "auto",
        o->spin_auto, "max_us", (double)o->spin_ns / 1e3, "lead_us", (double)s->lead_ns / 1e3,
        "connections", (json_int_t)s->conns, "max_open", (json_int_t)s->max_open, "refused",
        (json_int_t)s->refused, "faults", (json_int_t)s->faults, "up",
        dir_json(s->bytes[0], s->chunks[0], s->writes[0]), "down",
        dir_json(s->bytes[1], s->chunks[1], s->writes[1]), "per_connection", conns);
    return fbl_json_file(doc, path);
}

void fbl_summary_free(fbl_summary *s)
{
    free(s->conn);
    s->conn = NULL;
    s->nconn = s->cap = 0;
}
