/* SPDX-License-Identifier: MIT */
/* stats.c - round-trip accounting from packet and wait events. */
#include "stats.h"

#include <string.h>

void fbw_stats_reset(fbw_stats *s) { memset(s, 0, sizeof *s); }

void fbw_stats_packet(fbw_stats *s, int32_t op, int sent, uint64_t bytes)
{
    fbw_op_stats *o = (op >= 0 && op <= FBW_OP_MAX) ? &s->op[op] : NULL;
    if (sent) {
        s->packets_sent++;
        s->bytes_sent += bytes;
        s->sent_since_wait = 1;
        if (o) {
            o->packets_sent++;
            o->bytes_sent += bytes;
        }
    } else {
        s->packets_received++;
        s->bytes_received += bytes;
        if (o) {
            o->packets_received++;
            o->bytes_received += bytes;
        }
    }
}

void fbw_stats_wire(fbw_stats *s, int sent, uint64_t bytes)
{
    if (sent)
        s->wire_bytes_sent += bytes;
    else
        s->wire_bytes_received += bytes;
}

int fbw_stats_wait_begin(fbw_stats *s)
{
    s->waits++;
    if (!s->sent_since_wait)
        return 0;
    s->sent_since_wait = 0;
    s->round_trips++;
    return 1;
}

void fbw_stats_wait_time(fbw_stats *s, uint64_t ns) { s->wait_ns += ns; }

void fbw_stats_turn(fbw_stats *s, fbw_turn *t, int from_client, uint64_t bytes, uint64_t ts_ns)
{
    if (from_client) {
        t->last_client_ts = ts_ns;
        t->last_from_client = 1;
        s->sent_since_wait = 1;
        s->wire_chunks_sent++;
    } else {
        if (t->last_from_client) {
            fbw_stats_wait_begin(s);
            if (ts_ns > t->last_client_ts)
                fbw_stats_wait_time(s, ts_ns - t->last_client_ts);
            t->last_from_client = 0;
        }
        s->wire_chunks_received++;
    }
    fbw_stats_wire(s, from_client, bytes);
}

#define ADD(f) a->f += b->f
void fbw_stats_add(fbw_stats *a, const fbw_stats *b)
{
    for (int i = 0; i <= FBW_OP_MAX; i++) {
        ADD(op[i].packets_sent);
        ADD(op[i].packets_received);
        ADD(op[i].bytes_sent);
        ADD(op[i].bytes_received);
    }
    ADD(packets_sent);
    ADD(packets_received);
    ADD(bytes_sent);
    ADD(bytes_received);
    ADD(wire_bytes_sent);
    ADD(wire_bytes_received);
    ADD(wire_chunks_sent);
    ADD(wire_chunks_received);
    ADD(round_trips);
    ADD(waits);
    ADD(wait_ns);
}
#undef ADD

#define SUB(f) d->f = a->f - b->f
void fbw_stats_diff(fbw_stats *d, const fbw_stats *a, const fbw_stats *b)
{
    for (int i = 0; i <= FBW_OP_MAX; i++) {
        SUB(op[i].packets_sent);
        SUB(op[i].packets_received);
        SUB(op[i].bytes_sent);
        SUB(op[i].bytes_received);
    }
    SUB(packets_sent);
    SUB(packets_received);
    SUB(bytes_sent);
    SUB(bytes_received);
    SUB(wire_bytes_sent);
    SUB(wire_bytes_received);
    SUB(wire_chunks_sent);
    SUB(wire_chunks_received);
    SUB(round_trips);
    SUB(waits);
    SUB(wait_ns);
    d->sent_since_wait = a->sent_since_wait;
}
#undef SUB
