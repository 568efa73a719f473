/* SPDX-License-Identifier: MIT */
/* test_pcap_cut.c - `fbwire-pcap stats` on captures that start in the middle of a session: every
 * recorded capture (pcap/ and the fuzz_capture seeds) is cut at many frames, and at each cut once
 * more with the first frame's payload starting 6 bytes late (inside a packet). For every cut the
 * round trips `stats` counts equal the turnarounds `turns` counts (+-1); for every clear,
 * uncompressed capture the session is recognised (op_connect, or locked on mid-session) whenever
 * three turnarounds remain, and the round trips it lists after locking on are exactly the last ones
 * of the whole capture (the first may be partial). Uses only the files in the tree (no server). */
#include "run_tool.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOOL FBWIRE_BINARY_DIR "/tools/fbwire-pcap"
#define OUT_MAX (4u << 20)
#define MAX_RECS 4096
#define MAX_TRIPS 1024
#define CUTS_PER_CAPTURE 30
#define MID_PACKET 6 /* bytes the first frame's payload loses in the second cut of each frame */

typedef struct rec {
    uint8_t *p; /* 16-byte record header + frame */
    size_t n;
} rec;

typedef struct capfile {
    uint8_t head[24];
    int swap; /* the file's byte order is not ours */
    uint32_t linktype;
    rec r[MAX_RECS];
    size_t n;
    uint8_t *data;
} capfile;

static uint32_t rd32(const capfile *c, const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return c->swap ? __builtin_bswap32(v) : v;
}

static void wr32(const capfile *c, uint8_t *p, uint32_t v)
{
    v = c->swap ? __builtin_bswap32(v) : v;
    memcpy(p, &v, 4);
}

/* Classic pcap only (the pcapng seeds have pcap twins). 0 when the file is not one. */
static int load(const char *path, capfile *c)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    c->data = malloc((size_t)size);
    cr_assert(c->data);
    cr_assert_eq(fread(c->data, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    if (size < 24)
        return 0;
    uint32_t magic;
    memcpy(&magic, c->data, 4);
    if (magic == 0xa1b2c3d4 || magic == 0xa1b23c4d)
        c->swap = 0;
    else if (magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1)
        c->swap = 1;
    else
        return 0;
    memcpy(c->head, c->data, 24);
    c->linktype = rd32(c, c->data + 20);
    for (size_t o = 24; o + 16 <= (size_t)size && c->n < MAX_RECS;) {
        size_t cl = rd32(c, c->data + o + 8);
        cr_assert_leq(o + 16 + cl, (size_t)size, "%s: truncated record", path);
        c->r[c->n++] = (rec){c->data + o, 16 + cl};
        o += 16 + cl;
    }
    return 1;
}

static size_t ip_offset(uint32_t linktype)
{
    switch (linktype) {
    case 1: return 14;   /* Ethernet */
    case 113: return 16; /* Linux cooked */
    case 276: return 20; /* Linux cooked v2 */
    case 0: case 108: return 4;
    default: return 0;   /* raw IP */
    }
}

/* Write records [k, n) to path; skip > 0 drops that many payload bytes of the first frame (its
 * IP length and TCP sequence number adjusted, as if the capture began there). */
static void write_cut(const capfile *c, size_t k, size_t skip, const char *path)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    fwrite(c->head, 1, 24, f);
    for (size_t i = k; i < c->n; i++) {
        uint8_t *buf = malloc(c->r[i].n);
        cr_assert(buf);
        memcpy(buf, c->r[i].p, c->r[i].n);
        size_t len = c->r[i].n;
        uint8_t *fr = buf + 16;
        size_t ip = ip_offset(c->linktype), caplen = len - 16;
        if (i == k && skip && caplen > ip + 40) {
            int v6 = fr[ip] >> 4 == 6;
            size_t ihl = v6 ? 40 : (size_t)(fr[ip] & 0x0F) * 4;
            size_t th = ip + ihl, pay = th + (size_t)(fr[th + 12] >> 4) * 4;
            size_t s = caplen > pay ? (caplen - pay < skip ? caplen - pay : skip) : 0;
            if (s) {
                memmove(fr + pay, fr + pay + s, caplen - pay - s);
                size_t lf = v6 ? ip + 4 : ip + 2;
                unsigned iplen = (unsigned)(fr[lf] << 8 | fr[lf + 1]) - (unsigned)s;
                fr[lf] = (uint8_t)(iplen >> 8);
                fr[lf + 1] = (uint8_t)iplen;
                uint32_t seq = (uint32_t)fr[th + 4] << 24 | (uint32_t)fr[th + 5] << 16 |
                               (uint32_t)fr[th + 6] << 8 | fr[th + 7];
                seq += (uint32_t)s;
                for (int b = 0; b < 4; b++)
                    fr[th + 4 + b] = (uint8_t)(seq >> (24 - 8 * b));
                wr32(c, buf + 8, (uint32_t)(caplen - s));
                wr32(c, buf + 12, rd32(c, buf + 12) - (uint32_t)s);
                len -= s;
            }
        }
        fwrite(buf, 1, len, f);
        free(buf);
    }
    fclose(f);
}

static long long json_num(const char *doc, const char *section, const char *key)
{
    const char *s = strstr(doc, section);
    cr_assert(s, "no %s in %.300s", section, doc);
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *v = strstr(s, k);
    cr_assert(v, "no %s after %s in %.300s", key, section, doc);
    return strtoll(v + strlen(k), NULL, 10);
}

/* The ops of each listed round trip ("   3: > op_a < op_b" without its number). */
static size_t trips(const char *doc, char out[][200], size_t max)
{
    const char *t = strstr(doc, "\"trips\":[");
    size_t n = 0;
    if (!t)
        return 0;
    t += 9;
    while (*t == '"' && n < max) {
        const char *end = strchr(t + 1, '"');
        const char *colon = memchr(t, ':', (size_t)(end - t));
        cr_assert(end && colon);
        snprintf(out[n++], 200, "%.*s", (int)(end - colon), colon);
        t = end + 1;
        if (*t == ',')
            t++;
    }
    return n;
}

static fbw_run tool(const char *cmd, const char *file)
{
    const char *argv[] = {cmd,    file,   "--json", "--port", "3050", "--port", "3051", "--port",
                          "3052", "--port", "3053", cmd[0] == 's' ? "--trips" : NULL, NULL};
    return fbw_run_tool(TOOL, argv, NULL, OUT_MAX);
}

typedef struct totals {
    int cuts, compared, recognised, locked, encrypted;
    long long trips, trips_matched;
} totals;

static char (*full_trips)[200], (*cut_trips)[200];

static void cut_capture(const char *path, const char *tmpfile, totals *t)
{
    capfile *c = malloc(sizeof *c);
    cr_assert(c);
    if (!load(path, c)) {
        free(c->data);
        free(c);
        return;
    }
    fbw_run full = tool("stats", path);
    int clear = strstr(full.out, "\"wire_crypt\":\"none\"") && strstr(full.out, "\"compression\":\"none\"") &&
                full.status == 0;
    size_t nfull = trips(full.out, full_trips, MAX_TRIPS);
    size_t step = c->n / CUTS_PER_CAPTURE + 1;
    for (size_t k = 1; k + 1 < c->n; k += step)
        for (size_t skip = 0; skip <= MID_PACKET; skip += MID_PACKET) {
            write_cut(c, k, skip, tmpfile);
            fbw_run st = tool("stats", tmpfile), tu = tool("turns", tmpfile);
            cr_assert_lt(st.status, 2, "%s cut %zu+%zu: stats exit %d: %s", path, k, skip,
                         st.status, st.err);
            cr_assert_lt(tu.status, 2, "%s cut %zu+%zu: turns: %s", path, k, skip, tu.err);
            t->cuts++;
            long long turns = json_num(tu.out, "\"totals\":{", "round_trips");
            if (!strstr(st.out, "\"wire_crypt\":\"none\"") && strstr(st.out, "\"id\":")) {
                t->encrypted++; /* stops at op_crypt without a key: nothing to compare */
            } else {
                long long rt = json_num(st.out, "\"total\":{", "round_trips");
                cr_expect(rt >= turns - 1 && rt <= turns + 1,
                          "%s cut at frame %zu (+%zu bytes): %lld round trips, %lld turnarounds",
                          path, k + 1, skip, rt, turns);
                t->compared++;
            }
            if (clear && turns >= 3) {
                int conn = strstr(st.out, "\"recognised\":\"op_connect\"") != NULL;
                int mid = strstr(st.out, "\"recognised\":\"mid-session\"") != NULL;
                cr_expect(conn || mid, "%s cut at frame %zu (+%zu bytes): not recognised: %.500s",
                          path, k + 1, skip, st.out);
                t->recognised += conn || mid;
                t->locked += mid;
                size_t n = trips(st.out, cut_trips, MAX_TRIPS), same = 0;
                for (size_t i = 0; i < n && i < nfull; i++)
                    same += !strcmp(cut_trips[n - 1 - i], full_trips[nfull - 1 - i]);
                cr_expect_geq(same + 1, n,
                              "%s cut at frame %zu (+%zu bytes): %zu of %zu round trips differ "
                              "from the whole capture's",
                              path, k + 1, skip, n - same, n);
                t->trips += (long long)n;
                t->trips_matched += (long long)same;
            }
            fbw_run_free(&st);
            fbw_run_free(&tu);
        }
    fbw_run_free(&full);
    free(c->data);
    free(c);
}

static void cut_dir(const char *dir, const char *tmpfile, totals *t, int skip_twins)
{
    DIR *d = opendir(dir);
    cr_assert(d, "%s", dir);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".pcap"))
            continue;
        char path[1024], twin[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(twin, sizeof twin, "%s/pcap/%s", FBWIRE_SOURCE_DIR, e->d_name);
        if (skip_twins && access(twin, F_OK) == 0)
            continue; /* a seed that is a copy of a recorded capture: cut once */
        cut_capture(path, tmpfile, t);
    }
    closedir(d);
}

Test(pcap_cut, round_trips_equal_turns_at_every_cut)
{
    char tmpfile[] = "/tmp/fbw_cut_XXXXXX";
    int fd = mkstemp(tmpfile);
    cr_assert_geq(fd, 0);
    close(fd);
    full_trips = calloc(MAX_TRIPS, sizeof *full_trips);
    cut_trips = calloc(MAX_TRIPS, sizeof *cut_trips);
    cr_assert(full_trips && cut_trips);
    totals t = {0};
    cut_dir(FBWIRE_SOURCE_DIR "/pcap", tmpfile, &t, 0);
    cut_dir(FBWIRE_SOURCE_DIR "/tests/fuzz/corpus/fuzz_capture", tmpfile, &t, 1);
    unlink(tmpfile);
    printf("cut points: %d (%d compared, %d before op_crypt without a key); recognised at %d "
           "(%d locked on mid-session); round trips after lock-on equal to the whole capture's: "
           "%lld of %lld\n",
           t.cuts, t.compared, t.encrypted, t.recognised, t.locked, t.trips_matched, t.trips);
    cr_assert_gt(t.cuts, 400, "too few cut points: the captures are missing?");
    cr_assert_gt(t.locked, 100);
    free(full_trips);
    free(cut_trips);
}
