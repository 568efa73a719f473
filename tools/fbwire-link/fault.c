/* SPDX-License-Identifier: MIT */
/* fault.c - the fault schedule of fbwire-link: rule parser and per-connection triggers (fault.h).
 */
#include "fault.h"
#include "units.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* "client-writes:40" and friends. */
static int parse_after(const char *v, fbl_rule *r)
{
    static const struct {
        const char *name;
        fbl_counter counter;
        int side;
    } names[] = {{"client-writes:", FBL_CNT_WRITES, FBL_UP},
                 {"server-writes:", FBL_CNT_WRITES, FBL_DOWN},
                 {"client-bytes:", FBL_CNT_BYTES, FBL_UP},
                 {"server-bytes:", FBL_CNT_BYTES, FBL_DOWN}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i].name);
        if (strncmp(v, names[i].name, n))
            continue;
        const char *p = v + n;
        if (fbl_parse_scaled(&p, 1, &r->after) || *p || strchr(v + n, '.'))
            return -1;
        r->counter = names[i].counter;
        r->side = names[i].side;
        return 0;
    }
    return -1;
}

static int parse_dir(const char *v, int *dir)
{
    if (!strcmp(v, "up"))
        *dir = FBL_UP;
    else if (!strcmp(v, "down"))
        *dir = FBL_DOWN;
    else if (!strcmp(v, "both"))
        *dir = FBL_BOTH;
    else
        return -1;
    return 0;
}

/* One word of a rule. `seen` collects what was given, to refuse repeats and conflicts. */
enum { SEEN_CONN = 1, SEEN_TRIGGER = 2, SEEN_DIR = 4, SEEN_ACTION = 8 };

static int parse_word(const char *w, fbl_rule *r, int *seen, char *err, size_t errlen)
{
    const char *eq = strchr(w, '=');
    size_t klen = eq ? (size_t)(eq - w) : strlen(w);
    const char *v = eq ? eq + 1 : "";
    int bit = 0, bad = 0;
    if (klen == 4 && !strncmp(w, "conn", 4) && eq) {
        uint64_t n;
        const char *p = v;
        bit = SEEN_CONN;
        bad = fbl_parse_scaled(&p, 1, &n) || *p || strchr(v, '.') || n < 1 || n > UINT32_MAX;
        r->conn = bad ? 0 : (uint32_t)n;
    } else if (klen == 5 && !strncmp(w, "after", 5) && eq) {
        bit = SEEN_TRIGGER;
        bad = parse_after(v, r);
    } else if (klen == 4 && !strncmp(w, "prob", 4) && eq) {
        bit = SEEN_TRIGGER;
        r->counter = FBL_CNT_PROB;
        r->side = FBL_BOTH;
        bad = fbl_parse_prob(v, &r->prob_ppb);
    } else if (klen == 3 && !strncmp(w, "dir", 3) && eq) {
        bit = SEEN_DIR;
        bad = parse_dir(v, &r->dir);
    } else if (!strcmp(w, "reset") || !strcmp(w, "shutdown")) {
        bit = SEEN_ACTION;
        r->action = w[0] == 'r' ? FBL_RESET : FBL_SHUTDOWN;
    } else if (klen == 5 && !strncmp(w, "stall", 5) && eq) {
        bit = SEEN_ACTION;
        r->action = FBL_STALL;
        if (!strcmp(v, "hold"))
            r->stall_ns = FBL_NEVER;
        else
            bad = fbl_parse_duration(v, &r->stall_ns);
    } else {
        return fail(err, errlen,
                    "unknown word \"%.40s\" (conn=, after=, prob=, dir=, reset, shutdown, stall=)",
                    w);
    }
    if (bad)
        return fail(err, errlen, "bad value in \"%.60s\"", w);
    if (*seen & bit)
        return fail(err, errlen, "\"%.40s\": given twice (or after= with prob=, or two actions)",
                    w);
    *seen |= bit;
    return 0;
}

int fbl_rule_parse(const char *text, fbl_rule *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->dir = -1;
    size_t len = strnlen(text, FBL_RULE_MAX_TEXT + 1);
    if (len > FBL_RULE_MAX_TEXT)
        return fail(err, errlen, "fault rule longer than %d characters", FBL_RULE_MAX_TEXT);
    char buf[FBL_RULE_MAX_TEXT + 1];
    memcpy(buf, text, len);
    buf[len] = 0;
    int seen = 0;
    for (char *p = buf; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        char *w = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (*p)
            *p++ = 0;
        if (parse_word(w, r, &seen, err, errlen))
            return -1;
    }
    if (!(seen & SEEN_TRIGGER))
        return fail(err, errlen, "a fault rule needs after=COUNTER:N or prob=P");
    if (!(seen & SEEN_ACTION))
        return fail(err, errlen, "a fault rule needs an action: reset, shutdown or stall=T");
    return 0;
}

void fbl_rule_format(const fbl_rule *r, char *out, size_t outlen)
{
    static const char *const dirs[] = {"up", "down", "both"};
    char conn[24] = "", trig[48], dir[16] = "", act[40];
    if (r->conn)
        snprintf(conn, sizeof conn, "conn=%u ", r->conn);
    if (r->counter == FBL_CNT_PROB)
        snprintf(trig, sizeof trig, "prob=%u.%09u", r->prob_ppb / 1000000000u,
                 r->prob_ppb % 1000000000u);
    else
        snprintf(trig, sizeof trig, "after=%s-%s:%llu", r->side == FBL_UP ? "client" : "server",
                 r->counter == FBL_CNT_WRITES ? "writes" : "bytes", (unsigned long long)r->after);
    if (r->dir >= 0)
        snprintf(dir, sizeof dir, " dir=%s", dirs[r->dir]);
    if (r->action == FBL_STALL && r->stall_ns == FBL_NEVER)
        snprintf(act, sizeof act, "stall=hold");
    else if (r->action == FBL_STALL)
        snprintf(act, sizeof act, "stall=%lluns", (unsigned long long)r->stall_ns);
    else
        snprintf(act, sizeof act, "%s", r->action == FBL_RESET ? "reset" : "shutdown");
    snprintf(out, outlen, "%s%s%s %s", conn, trig, dir, act);
}

void fbl_faults_init(fbl_faults *f, uint32_t conn, uint64_t seed)
{
    memset(f, 0, sizeof *f);
    f->conn = conn;
    f->rng = seed;
}

static int applies(const fbl_faults *f, const fbl_rule *r, int i)
{
    return !f->fired[i] && (!r->conn || r->conn == f->conn);
}

size_t fbl_faults_bytes(fbl_faults *f, const fbl_sched *s, int side, size_t len, int *hit)
{
    size_t pass = len;
    *hit = -1;
    for (int i = 0; i < s->n; i++) {
        const fbl_rule *r = &s->rule[i];
        if (!applies(f, r, i) || r->counter != FBL_CNT_BYTES || r->side != side)
            continue;
        uint64_t left = r->after > f->bytes[side] ? r->after - f->bytes[side] : 0;
        if (left <= pass && (*hit < 0 || left < pass)) {
            pass = (size_t)left;
            *hit = i;
        }
    }
    f->bytes[side] += pass;
    if (*hit >= 0)
        f->fired[*hit] = 1;
    return pass;
}

int fbl_faults_chunk(fbl_faults *f, const fbl_sched *s, int side, int *hits)
{
    int n = 0;
    f->writes[side]++;
    for (int i = 0; i < s->n; i++) {
        const fbl_rule *r = &s->rule[i];
        if (!applies(f, r, i))
            continue;
        if (r->counter == FBL_CNT_WRITES && r->side == side && f->writes[side] >= r->after) {
            f->fired[i] = 1;
            hits[n++] = i;
        } else if (r->counter == FBL_CNT_PROB &&
                   (r->dir < 0 || r->dir == FBL_BOTH || r->dir == side)) {
            /* Drawn for every chunk whether or not it fires, so one rule's outcome never shifts
             * another's: a seed gives the same faults at the same chunks. */
            if (fbl_rand(&f->rng) % 1000000000u < r->prob_ppb)
                hits[n++] = i;
        }
    }
    return n;
}

int fbl_rule_dir(const fbl_rule *r, int side)
{
    if (r->dir >= 0 && r->counter != FBL_CNT_PROB)
        return r->dir;
    return side;
}
