/* SPDX-License-Identifier: MIT */
/* report.c - fbwire-link's exit summary: text on stderr and the --json file. */
#include "loop.h"

#include <errno.h>
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

static void json_dir(FILE *f, const char *name, uint64_t bytes, uint64_t chunks, uint64_t writes)
{
    fprintf(f, "\"%s\":{\"bytes\":%llu,\"chunks\":%llu,\"writes\":%llu}", name,
            (unsigned long long)bytes, (unsigned long long)chunks, (unsigned long long)writes);
}

/* Every string written is made here or is an address in numeric form: nothing to escape. */
int fbl_report_json(const fbl_opts *o, const fbl_summary *s, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "fbwire-link: %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f,
            "{\"tool\":\"fbwire-link\",\"delay_ns\":{\"up\":%llu,\"down\":%llu},\"jitter_ns\":%llu,"
            "\"rate_bps\":{\"up\":%llu,\"down\":%llu},\"seed\":%llu,\n",
            (unsigned long long)o->line[0].delay_ns, (unsigned long long)o->line[1].delay_ns,
            (unsigned long long)o->line[0].jitter_ns, (unsigned long long)o->line[0].rate_bps,
            (unsigned long long)o->line[1].rate_bps, (unsigned long long)o->seed);
    fprintf(f, " \"cpu\":{\"user_s\":%.6f,\"sys_s\":%.6f,\"wall_s\":%.6f,\"us_per_chunk\":%.3f},\n",
            s->user_s, s->sys_s, s->wall_s, cpu_per_chunk_us(s));
    fprintf(f, " \"late_us\":{\"p50\":%u,\"p99\":%u,\"max\":%.1f},\n", fbl_late_us(s, 0.5),
            fbl_late_us(s, 0.99), (double)s->late_max_ns / 1e3);
    fprintf(f, " \"spin\":{\"auto\":%s,\"max_us\":%.1f,\"lead_us\":%.1f},\n",
            o->spin_auto ? "true" : "false", (double)o->spin_ns / 1e3, (double)s->lead_ns / 1e3);
    fprintf(f, " \"connections\":%llu,\"max_open\":%llu,\"refused\":%llu,\"faults\":%llu,",
            (unsigned long long)s->conns, (unsigned long long)s->max_open,
            (unsigned long long)s->refused, (unsigned long long)s->faults);
    json_dir(f, "up", s->bytes[0], s->chunks[0], s->writes[0]);
    fputc(',', f);
    json_dir(f, "down", s->bytes[1], s->chunks[1], s->writes[1]);
    fprintf(f, ",\n \"per_connection\":[");
    for (size_t i = 0; i < s->nconn; i++) {
        const fbl_conn_stats *c = &s->conn[i];
        fprintf(f, "%s\n  {\"conn\":%u,\"client\":\"%s\",", i ? "," : "", c->id, c->client);
        json_dir(f, "up", c->bytes[0], c->chunks[0], c->writes[0]);
        fputc(',', f);
        json_dir(f, "down", c->bytes[1], c->chunks[1], c->writes[1]);
        fprintf(f,
                ",\"dropped\":{\"up\":%llu,\"down\":%llu},\"faults\":%u,\"seconds\":%.6f,\"end\":"
                "\"%s\"}",
                (unsigned long long)c->dropped[0], (unsigned long long)c->dropped[1], c->faults,
                c->seconds, c->end);
    }
    fprintf(f, "]}\n");
    return fclose(f) ? -1 : 0;
}

void fbl_summary_free(fbl_summary *s)
{
    free(s->conn);
    s->conn = NULL;
    s->nconn = s->cap = 0;
}
