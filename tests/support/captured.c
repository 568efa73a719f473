/* SPDX-License-Identifier: MIT */
/* captured.c - one captured connection cut into turns (see captured.h). */
#include "captured.h"

#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each direction's next expected sequence number, once its SYN (or first segment) was seen. */
typedef struct side {
    int known;
    uint32_t next;
} side;

static int failf(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
    return -1;
}

static unsigned be16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Where the IPv4 header starts for this link type, or -1 when the frame is not IPv4. */
static long ip_offset(int dlt, const uint8_t *p, size_t n)
{
    if (dlt == DLT_EN10MB)
        return n >= 14 && be16(p + 12) == 0x0800 ? 14 : -1;
    if (dlt == DLT_LINUX_SLL)
        return n >= 16 && be16(p + 14) == 0x0800 ? 16 : -1;
    if (dlt == DLT_NULL)
        return n >= 4 && (p[0] == 2 || p[3] == 2) ? 4 : -1;
    return -2;
}

/* Append payload to the turn list: a new turn when the direction changes. */
static int add(fbw_captured *cap, int from_client, const uint8_t *p, size_t n)
{
    if (cap->n == 0 || cap->turns[cap->n - 1].from_client != from_client) {
        fbw_cap_turn *t = realloc(cap->turns, (cap->n + 1) * sizeof *t);
        if (!t)
            return -1;
        cap->turns = t;
        t[cap->n].from_client = from_client;
        fbw_buf_init(&t[cap->n].bytes);
        cap->n++;
    }
    return fbw_buf_append(&cap->turns[cap->n - 1].bytes, p, n) == FBW_OK ? 0 : -1;
}

/* One TCP segment of the connection: payload in order, repeats dropped, a gap refused. */
static int segment(fbw_captured *cap, side *sd, int from_client, const uint8_t *tcp, size_t n,
                   char *msg, size_t size)
{
    size_t hl = (size_t)(tcp[12] >> 4) * 4;
    if (hl < 20 || hl > n)
        return failf(msg, size, "TCP header of %zu bytes in a %zu-byte segment", hl, n);
    uint32_t seq = be32(tcp + 4);
    int syn = tcp[13] & 0x02;
    side *s = &sd[from_client];
    if (syn) {
        s->known = 1;
        s->next = seq + 1;
        return 0;
    }
    const uint8_t *pay = tcp + hl;
    size_t len = n - hl;
    if (len == 0)
        return 0;
    if (!s->known) {
        s->known = 1;
        s->next = seq;
    }
    uint32_t ahead = seq - s->next;
    if (ahead != 0 && ahead < 0x80000000u)
        return failf(msg, size, "gap of %u bytes in the %s stream", ahead,
                     from_client ? "client" : "server");
    uint32_t old = s->next - seq; /* bytes of this segment already taken */
    if (old >= len)
        return 0;
    s->next += (uint32_t)(len - old);
    return add(cap, from_client, pay + old, len - old) ? failf(msg, size, "out of memory") : 0;
}

int fbw_captured_load(const char *file, uint16_t port, fbw_captured *cap, char *msg, size_t size)
{
    memset(cap, 0, sizeof *cap);
    char ebuf[PCAP_ERRBUF_SIZE] = "";
    pcap_t *pc = pcap_open_offline(file, ebuf);
    if (!pc)
        return failf(msg, size, "%s: %s", file, ebuf);
    int dlt = pcap_datalink(pc), rc = 0;
    side sd[2] = {{0, 0}, {0, 0}};
    struct pcap_pkthdr *h;
    const uint8_t *p;
    int got;
    while (rc == 0 && (got = pcap_next_ex(pc, &h, &p)) == 1) {
        size_t n = h->caplen;
        long at = ip_offset(dlt, p, n);
        if (at == -2) {
            rc = failf(msg, size, "%s: link type %d not understood", file, dlt);
            break;
        }
        if (at < 0 || n < (size_t)at + 20 || p[at + 9] != 6) /* not IPv4, or not TCP */
            continue;
        const uint8_t *ip = p + at;
        size_t ihl = (size_t)(ip[0] & 15) * 4, total = be16(ip + 2);
        if (ihl < 20 || total < ihl + 20 || (size_t)at + total > n) {
            rc = failf(msg, size, "%s: IPv4 packet cut short (%zu of %zu bytes)", file,
                       n - (size_t)at, total);
            break;
        }
        const uint8_t *tcp = ip + ihl;
        unsigned sport = be16(tcp), dport = be16(tcp + 2);
        if (sport != port && dport != port)
            continue;
        rc = segment(cap, sd, dport == port, tcp, total - ihl, msg, size);
    }
    if (rc == 0 && got == -1)
        rc = failf(msg, size, "%s: %s", file, pcap_geterr(pc));
    pcap_close(pc);
    if (rc == 0 && cap->n == 0)
        rc = failf(msg, size, "%s: no payload on port %u", file, (unsigned)port);
    if (rc)
        fbw_captured_free(cap);
    return rc;
}

void fbw_captured_free(fbw_captured *cap)
{
    for (size_t i = 0; i < cap->n; i++)
        fbw_buf_free(&cap->turns[i].bytes);
    free(cap->turns);
    cap->turns = NULL;
    cap->n = 0;
}
