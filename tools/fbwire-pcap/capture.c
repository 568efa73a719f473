/* SPDX-License-Identifier: MIT */
/* capture.c - frames to TCP segments: libpcap reads the file (pcap or pcapng), this file peels the
 * link, IP and TCP headers, checking every length against the captured bytes. */
#include "pcaptool.h"

#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

/* Link types as libpcap reports them (pcap/dlt.h); spelled out so older headers do not matter. */
enum {
    LT_NULL = 0,
    LT_EN10MB = 1,
    LT_RAW = 12,
    LT_RAW_ALT = 14, /* DLT_RAW on some BSDs */
    LT_RAW_101 = 101,
    LT_LOOP = 108,
    LT_LINUX_SLL = 113,
    LT_IPV4 = 228,
    LT_IPV6 = 229,
    LT_LINUX_SLL2 = 276,
};

#define ETH_IPV4 0x0800
#define ETH_IPV6 0x86DD
#define MAX_VLAN_TAGS 4
#define MAX_V6_EXT 8

/* A bounded view over one frame. */
typedef struct frame {
    const uint8_t *p;
    size_t caplen; /* bytes present */
    size_t len;    /* bytes the frame had on the wire */
} frame;

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Drop n header bytes from the front; 0 when they are not all there. */
static int advance(frame *f, size_t n)
{
    if (f->caplen < n)
        return 0;
    f->p += n;
    f->caplen -= n;
    f->len = f->len >= n ? f->len - n : 0;
    return 1;
}

/* The IP version the link header announces: 4, 6, or 0 for anything else. */
static int link_to_ip(int linktype, frame *f)
{
    uint16_t et;
    uint32_t fam;
    switch (linktype) {
    case LT_EN10MB:
        if (f->caplen < 14)
            return 0;
        et = be16(f->p + 12);
        advance(f, 14);
        for (int i = 0; i < MAX_VLAN_TAGS && (et == 0x8100 || et == 0x88A8 || et == 0x9100); i++) {
            if (f->caplen < 4)
                return 0;
            et = be16(f->p + 2);
            advance(f, 4);
        }
        break;
    case LT_LINUX_SLL:
        if (f->caplen < 16)
            return 0;
        et = be16(f->p + 14);
        advance(f, 16);
        break;
    case LT_LINUX_SLL2:
        if (f->caplen < 20)
            return 0;
        et = be16(f->p);
        advance(f, 20);
        break;
    case LT_NULL:
    case LT_LOOP:
        if (f->caplen < 4)
            return 0;
        /* DLT_NULL is in the capturing host's byte order, DLT_LOOP in network order: accept both.
         */
        fam = be32(f->p);
        if (fam > 0xFFFF)
            fam = (uint32_t)f->p[0] | (uint32_t)f->p[1] << 8 | (uint32_t)f->p[2] << 16 |
                  (uint32_t)f->p[3] << 24;
        advance(f, 4);
        if (fam == 2)
            return 4;
        return (fam == 10 || fam == 24 || fam == 28 || fam == 30) ? 6 : 0;
    case LT_RAW:
    case LT_RAW_ALT:
    case LT_RAW_101:
    case LT_IPV4:
    case LT_IPV6:
        return f->caplen ? f->p[0] >> 4 : 0;
    default:
        return 0;
    }
    return et == ETH_IPV4 ? 4 : et == ETH_IPV6 ? 6 : 0;
}

static int supported_link(int lt)
{
    switch (lt) {
    case LT_NULL:
    case LT_EN10MB:
    case LT_RAW:
    case LT_RAW_ALT:
    case LT_RAW_101:
    case LT_LOOP:
    case LT_LINUX_SLL:
    case LT_IPV4:
    case LT_IPV6:
    case LT_LINUX_SLL2:
        return 1;
    default:
        return 0;
    }
}

/* Clip the frame to the IP payload length (Ethernet pads short frames). announced == 0 means the
 * header did not say (TSO capture, jumbogram): keep what the frame has. */
static void clip(frame *f, size_t announced)
{
    if (announced == 0)
        return;
    if (f->caplen > announced)
        f->caplen = announced;
    f->len = announced;
}

/* Returns 1 with f at the TCP header, 0 to skip the frame, -1 when it is malformed. */
static int ipv4(frame *f, pcaptool_seg *s)
{
    if (f->caplen < 20 || (f->p[0] >> 4) != 4)
        return -1;
    size_t ihl = (size_t)(f->p[0] & 0x0F) * 4;
    size_t total = be16(f->p + 2);
    if (ihl < 20 || f->caplen < ihl || (total && total < ihl))
        return -1;
    if ((be16(f->p + 6) & 0x3FFF) != 0 || f->p[9] != 6) /* fragment, or not TCP */
        return 0;
    s->family = 4;
    memcpy(s->src, f->p + 12, 4);
    memcpy(s->dst, f->p + 16, 4);
    advance(f, ihl);
    clip(f, total ? total - ihl : 0);
    return 1;
}

static int ipv6(frame *f, pcaptool_seg *s)
{
    if (f->caplen < 40 || (f->p[0] >> 4) != 6)
        return -1;
    size_t plen = be16(f->p + 4);
    uint8_t next = f->p[6];
    s->family = 6;
    memcpy(s->src, f->p + 8, 16);
    memcpy(s->dst, f->p + 24, 16);
    advance(f, 40);
    clip(f, plen);
    for (int i = 0; i < MAX_V6_EXT && (next == 0 || next == 43 || next == 60); i++) {
        if (f->caplen < 8)
            return -1;
        size_t hl = ((size_t)f->p[1] + 1) * 8;
        next = f->p[0];
        if (!advance(f, hl))
            return -1;
    }
    return next == 6 ? 1 : 0; /* fragments (44) and everything else are skipped */
}

static int tcp(frame *f, pcaptool_seg *s)
{
    if (f->caplen < 20)
        return -1;
    size_t doff = (size_t)(f->p[12] >> 4) * 4;
    if (doff < 20 || f->caplen < doff)
        return -1;
    s->sport = be16(f->p);
    s->dport = be16(f->p + 2);
    s->seq = be32(f->p + 4);
    s->ack = be32(f->p + 8);
    s->flags = f->p[13];
    advance(f, doff);
    s->data = f->p;
    s->len = f->caplen;
    s->wire_len = f->len > f->caplen ? f->len : f->caplen;
    return 1;
}

static int one_frame(int linktype, const struct pcap_pkthdr *h, const uint8_t *bytes,
                     pcaptool_seg *s)
{
    frame f = {bytes, h->caplen, h->len > h->caplen ? h->len : h->caplen};
    int v = link_to_ip(linktype, &f);
    int rc = v == 4 ? ipv4(&f, s) : v == 6 ? ipv6(&f, s) : 0;
    return rc == 1 ? tcp(&f, s) : rc;
}

static int read_all(pcap_t *pc, const char *path, pcaptool_seg_fn fn, void *arg,
                    pcaptool_cap_summary *sum, fbw_err *err)
{
    int rc = FBW_OK;
    sum->linktype = pcap_datalink(pc);
    if (!supported_link(sum->linktype)) {
        const char *name = pcap_datalink_val_to_name(sum->linktype);
        rc = fbw_err_set(err, FBW_E_UNSUPPORTED, "%s: link type %d (%s) is not supported", path,
                         sum->linktype, name ? name : "unknown");
        goto done;
    }
    for (;;) {
        struct pcap_pkthdr *h;
        const u_char *bytes;
        int got = pcap_next_ex(pc, &h, &bytes);
        if (got == PCAP_ERROR_BREAK || got == -2)
            break;
        if (got != 1) {
            snprintf(sum->truncated, sizeof sum->truncated, "%s", pcap_geterr(pc));
            break;
        }
        sum->frames++;
        pcaptool_seg s;
        memset(&s, 0, sizeof s);
        s.frame = sum->frames;
        s.ts_ns =
            (uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec; /* nano precision */
        int r = one_frame(sum->linktype, h, bytes, &s);
        if (r < 0)
            sum->malformed++;
        else if (r == 0)
            sum->skipped++;
        else {
            sum->tcp++;
            fn(arg, &s);
        }
    }
done:
    pcap_close(pc);
    return rc;
}

int pcaptool_cap_read(const char *path, pcaptool_seg_fn fn, void *arg, pcaptool_cap_summary *sum,
                      fbw_err *err)
{
    char errbuf[PCAP_ERRBUF_SIZE] = "";
    memset(sum, 0, sizeof *sum);
    pcap_t *pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
    if (!pc)
        return fbw_err_set(err, FBW_E_IO, "%s: %s", path, errbuf);
    return read_all(pc, path, fn, arg, sum, err);
}

int pcaptool_cap_read_file(FILE *f, const char *name, pcaptool_seg_fn fn, void *arg,
                           pcaptool_cap_summary *sum, fbw_err *err)
{
    char errbuf[PCAP_ERRBUF_SIZE] = "";
    memset(sum, 0, sizeof *sum);
    pcap_t *pc = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
    if (!pc) {
        fclose(f);
        return fbw_err_set(err, FBW_E_IO, "%s: %s", name, errbuf);
    }
    return read_all(pc, name, fn, arg, sum, err); /* pcap_close closes f */
}

void pcaptool_cap_endpoint(int family, const uint8_t *addr, uint16_t port, char *buf, size_t size)
{
    char a[INET6_ADDRSTRLEN] = "?";
    inet_ntop(family == 6 ? AF_INET6 : AF_INET, addr, a, sizeof a);
    snprintf(buf, size, family == 6 ? "[%s]:%u" : "%s:%u", a, port);
}
