/* SPDX-License-Identifier: MIT */
/* trace.c - Firebird trace text into events (trace.h): a record is cut at the next header, its
 * context lines read by their indent, its body (statement id, SQL after the dash rule, plan after
 * the caret rule, parameters, records fetched, the perf line) by what each line starts with. */
#include "trace.h"

#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Every name the trace plug-in writes in a header (Firebird 3 to 5), and what it means here. */
static const struct {
    const char *name;
    int kind;
} names[] = {
    {"ATTACH_DATABASE", PCAPTOOL_TRACE_ATTACH},
    {"CREATE_DATABASE", PCAPTOOL_TRACE_OTHER},
    {"DROP_DATABASE", PCAPTOOL_TRACE_OTHER},
    {"DETACH_DATABASE", PCAPTOOL_TRACE_DETACH},
    {"START_TRANSACTION", PCAPTOOL_TRACE_START},
    {"COMMIT_TRANSACTION", PCAPTOOL_TRACE_COMMIT},
    {"COMMIT_RETAINING", PCAPTOOL_TRACE_COMMIT_RETAINING},
    {"ROLLBACK_TRANSACTION", PCAPTOOL_TRACE_ROLLBACK},
    {"ROLLBACK_RETAINING", PCAPTOOL_TRACE_ROLLBACK_RETAINING},
    {"PREPARE_STATEMENT", PCAPTOOL_TRACE_PREPARE},
    {"EXECUTE_STATEMENT_START", PCAPTOOL_TRACE_EXEC_START},
    {"EXECUTE_STATEMENT_FINISH", PCAPTOOL_TRACE_EXEC_FINISH},
    {"FREE_STATEMENT", PCAPTOOL_TRACE_FREE},
    {"CLOSE_CURSOR", PCAPTOOL_TRACE_CLOSE},
    {"EXECUTE_STATEMENT_RESTART", PCAPTOOL_TRACE_OTHER},
    {"SET_CONTEXT", PCAPTOOL_TRACE_OTHER},
    {"EXECUTE_PROCEDURE_START", PCAPTOOL_TRACE_OTHER},
    {"EXECUTE_PROCEDURE_FINISH", PCAPTOOL_TRACE_OTHER},
    {"EXECUTE_FUNCTION_START", PCAPTOOL_TRACE_OTHER},
    {"EXECUTE_FUNCTION_FINISH", PCAPTOOL_TRACE_OTHER},
    {"EXECUTE_TRIGGER_START", PCAPTOOL_TRACE_OTHER},
    {"EXECUTE_TRIGGER_FINISH", PCAPTOOL_TRACE_OTHER},
    {"COMPILE_BLR", PCAPTOOL_TRACE_OTHER},
    {"EXECUTE_BLR", PCAPTOOL_TRACE_OTHER},
    {"EXECUTE_DYN", PCAPTOOL_TRACE_OTHER},
    {"ATTACH_SERVICE", PCAPTOOL_TRACE_OTHER},
    {"DETACH_SERVICE", PCAPTOOL_TRACE_OTHER},
    {"START_SERVICE", PCAPTOOL_TRACE_OTHER},
    {"QUERY_SERVICE", PCAPTOOL_TRACE_OTHER},
    {"SWEEP_START", PCAPTOOL_TRACE_OTHER},
    {"SWEEP_PROGRESS", PCAPTOOL_TRACE_OTHER},
    {"SWEEP_FINISH", PCAPTOOL_TRACE_OTHER},
    {"SWEEP_FAILED", PCAPTOOL_TRACE_OTHER},
    {"TRACE_INIT", PCAPTOOL_TRACE_OTHER},
    {"TRACE_FINI", PCAPTOOL_TRACE_OTHER},
    {"PRIVILEGES_CHANGE", PCAPTOOL_TRACE_OTHER},
    {"COMPILE_PROCEDURE", PCAPTOOL_TRACE_OTHER},
    {"COMPILE_FUNCTION", PCAPTOOL_TRACE_OTHER},
    {"COMPILE_TRIGGER", PCAPTOOL_TRACE_OTHER},
};

#define RULE_LEN 79 /* the dash rule before SQL text and the caret rule before a plan */

int pcaptool_trace_kind_of(const char *name)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(names[i].name, name))
            return names[i].kind;
    /* errors and warnings name the API call: "ERROR AT JStatement::execute" */
    if (!strncmp(name, "ERROR AT ", 9) || !strncmp(name, "WARNING AT ", 11))
        return PCAPTOOL_TRACE_OTHER;
    return -1;
}

void pcaptool_trace_init(pcaptool_trace *t)
{
    memset(t, 0, sizeof *t);
}

static void event_free(pcaptool_trace_event *e)
{
    free(e->db);
    free(e->user);
    free(e->remote);
    free(e->process);
    free(e->tra_opts);
    free(e->sql);
    for (uint16_t i = 0; i < e->nparams; i++) {
        free(e->params[i].type);
        free(e->params[i].text);
    }
    free(e->params);
}

void pcaptool_trace_free(pcaptool_trace *t)
{
    for (size_t i = 0; i < t->n; i++)
        event_free(&t->ev[i]);
    free(t->ev);
    memset(t, 0, sizeof *t);
}

static int fail(pcaptool_trace *t, size_t line, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(t->err, sizeof t->err, "trace line %zu: %s", line, what);
    return FBW_E_PROTO;
}

/* ---- lines ---- */

typedef struct span {
    const char *p;
    size_t n;
} span;

static int starts(span s, const char *lit)
{
    size_t k = strlen(lit);
    return s.n >= k && !memcmp(s.p, lit, k);
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Digits at s.p[*i..] into *v (at most 18 of them: no overflow); 0 when there are none. */
static int digits(span s, size_t *i, int64_t *v)
{
    size_t b = *i;
    int64_t x = 0;
    while (*i < s.n && is_digit(s.p[*i]) && *i - b < 18)
        x = x * 10 + (s.p[(*i)++] - '0');
    if (*i == b || (*i < s.n && is_digit(s.p[*i])))
        return 0;
    *v = x;
    return 1;
}

static char *dup_span(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

/* A fixed-width number of n digits at p. */
static int fixed(const char *p, int n, int *v)
{
    int x = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit(p[i]))
            return 0;
        x = x * 10 + (p[i] - '0');
    }
    *v = x;
    return 1;
}

/* "YYYY-MM-DDTHH:MM:SS.FFFF (PID:0xADDR) NAME": the time and where NAME begins, else 0. The
 * server writes its local time; only differences between records matter here. */
static int header(span s, uint64_t *ts, size_t *name_at)
{
    int y, mo, d, h, mi, se, frac;
    if (s.n < 30 || s.p[4] != '-' || s.p[7] != '-' || s.p[10] != 'T' || s.p[13] != ':' ||
        s.p[16] != ':' || s.p[19] != '.' || s.p[24] != ' ' || s.p[25] != '(')
        return 0;
    if (!fixed(s.p, 4, &y) || !fixed(s.p + 5, 2, &mo) || !fixed(s.p + 8, 2, &d) ||
        !fixed(s.p + 11, 2, &h) || !fixed(s.p + 14, 2, &mi) || !fixed(s.p + 17, 2, &se) ||
        !fixed(s.p + 20, 4, &frac))
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return 0;
    size_t i = 26;
    int64_t pid;
    if (!digits(s, &i, &pid) || i + 3 > s.n || s.p[i] != ':')
        return 0;
    i++;
    if (s.p[i] == '0' && s.p[i + 1] == 'x') /* "0x7f40..."; "(nil)" is not written for events */
        i += 2;
    size_t hex = i;
    while (i < s.n && ((s.p[i] >= '0' && s.p[i] <= '9') || (s.p[i] >= 'a' && s.p[i] <= 'f') ||
                       (s.p[i] >= 'A' && s.p[i] <= 'F')))
        i++;
    if (i == hex || i + 2 >= s.n || s.p[i] != ')' || s.p[i + 1] != ' ')
        return 0;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = se;
    time_t secs = timegm(&tm);
    if (secs < 0)
        return 0;
    *ts = (uint64_t)secs * 1000000000u + (uint64_t)frac * 100000u;
    *name_at = i + 2;
    return 1;
}

/* ---- one record ---- */

typedef struct rec {
    span *l; /* its lines (without their newline) */
    size_t n;
    size_t first; /* line number of l[0] */
} rec;

/* "\t<db> (ATT_n, USER:ROLE, CHARSET, REMOTE)" */
static int attachment_line(pcaptool_trace_event *e, span s)
{
    const char *open = NULL;
    for (size_t i = 1; i + 5 < s.n; i++)
        if (!memcmp(s.p + i, " (ATT_", 6))
            open = s.p + i;
    if (!open || s.p[s.n - 1] != ')')
        return 0;
    span in = {open + 6, (size_t)(s.p + s.n - 1 - (open + 6))};
    size_t i = 0;
    if (!digits(in, &i, &e->att) || i + 2 > in.n || in.p[i] != ',')
        return -1;
    const char *user = in.p + i + 2, *end = in.p + in.n;
    const char *comma = memchr(user, ',', (size_t)(end - user));
    const char *last = NULL;
    for (const char *q = user; q + 1 < end; q++)
        if (q[0] == ',' && q[1] == ' ')
            last = q;
    if (!comma || !last)
        return -1;
    e->db = dup_span(s.p + 1, (size_t)(open - s.p - 1));
    e->user = dup_span(user, (size_t)(comma - user));
    e->remote = dup_span(last + 2, (size_t)(end - last - 2));
    return e->db && e->user && e->remote ? 1 : -2;
}

/* "\t\t(TRA_n, OPTIONS)" */
static int transaction_line(pcaptool_trace_event *e, span s)
{
    if (!starts(s, "\t\t(TRA_") || s.p[s.n - 1] != ')')
        return 0;
    size_t i = 7;
    if (!digits(s, &i, &e->tra))
        return -1;
    const char *o = s.p + i, *end = s.p + s.n - 1;
    if (o < end && o[0] == ',')
        o += o + 1 < end && o[1] == ' ' ? 2 : 1;
    if (end - o > 5 && !memcmp(o, "INIT_", 5)) { /* a read consistency restart's first id */
        span rest = {o, (size_t)(end - o)};
        size_t k = 5;
        int64_t init;
        if (digits(rest, &k, &init) && k + 2 <= rest.n && rest.p[k] == ',')
            o += k + 2;
    }
    e->tra_opts = dup_span(o, (size_t)(end - o));
    return e->tra_opts ? 1 : -2;
}

static int is_rule(span s, char c)
{
    if (s.n != RULE_LEN)
        return 0;
    for (size_t i = 0; i < s.n; i++)
        if (s.p[i] != c)
            return 0;
    return 1;
}

/* "paramN = TYPE, VALUE": 1 and where the value starts, else 0. */
static int param_head(span s, size_t *type_at)
{
    if (!starts(s, "param"))
        return 0;
    size_t i = 5;
    int64_t k;
    if (!digits(s, &i, &k) || i + 3 > s.n || memcmp(s.p + i, " = ", 3))
        return 0;
    *type_at = i + 3;
    return 1;
}

/* "N records fetched" */
static int records_line(span s, int64_t *v)
{
    size_t i = 0;
    return digits(s, &i, v) && s.n - i == 16 && !memcmp(s.p + i, " records fetched", 16);
}

/* The perf line: spaces, "N ms", then optional counters. */
static int ms_line(span s, int64_t *v)
{
    size_t i = 0;
    while (i < s.n && s.p[i] == ' ')
        i++;
    if (!i || !digits(s, &i, v))
        return 0;
    return s.n - i >= 3 && !memcmp(s.p + i, " ms", 3) && (s.n - i == 3 || s.p[i + 3] == ',');
}

/* One parameter from its line(s): lines b..e-1 (a value may hold newlines). */
static int add_param(pcaptool_trace *t, pcaptool_trace_event *e, const rec *r, size_t b, size_t e_)
{
    size_t type_at;
    (void)param_head(r->l[b], &type_at);
    /* the text of the lines joined with '\n' */
    const char *p = r->l[b].p + type_at;
    const char *end = r->l[e_ - 1].p + r->l[e_ - 1].n; /* lines are consecutive in the input */
    const char *comma = NULL;
    for (const char *q = p; q + 1 < end; q++)
        if (q[0] == ',' && q[1] == ' ') {
            comma = q;
            break;
        }
    if (!comma)
        return fail(t, r->first + b, "a parameter without its type and value");
    if (e->nparams == UINT16_MAX)
        return fail(t, r->first + b, "more than %u parameters", UINT16_MAX);
    pcaptool_trace_param *np = realloc(e->params, (e->nparams + 1u) * sizeof *np);
    if (!np)
        return FBW_E_NOMEM;
    e->params = np;
    pcaptool_trace_param *pa = &np[e->nparams];
    memset(pa, 0, sizeof *pa);
    const char *v = comma + 2;
    size_t vn = (size_t)(end - v);
    /* Firebird 3 and later quote it too: "<NULL>" (a text value spelled so reads as NULL) */
    if ((vn == 6 && !memcmp(v, "<NULL>", 6)) || (vn == 8 && !memcmp(v, "\"<NULL>\"", 8))) {
        pa->is_null = 1;
    } else if (vn >= 2 && v[0] == '"' && v[vn - 1] == '"') {
        pa->text = dup_span(v + 1, vn - 2); /* the server does not escape quotes inside */
        pa->len = vn - 2;
        if (!pa->text)
            return FBW_E_NOMEM;
    } else {
        return fail(t, r->first + b, "a parameter value neither quoted nor <NULL>");
    }
    pa->type = dup_span(p, (size_t)(comma - p));
    e->nparams++;
    return pa->type ? FBW_OK : FBW_E_NOMEM;
}

/* The body after the context lines, from line i. */
static int body(pcaptool_trace *t, pcaptool_trace_event *e, const rec *r, size_t i)
{
    for (; i < r->n && r->l[i].n == 0; i++)
        ;
    if (i < r->n && starts(r->l[i], "Statement ")) {
        size_t k = 10;
        span s = r->l[i];
        /* "Statement N:", or "Statement N, <unknown, bug?>:" when the plug-in lost it */
        if (!digits(s, &k, &e->stmt) || s.p[s.n - 1] != ':' || (k + 1 != s.n && s.p[k] != ','))
            return fail(t, r->first + i, "a statement line without its number");
        i++;
    }
    if (i < r->n && is_rule(r->l[i], '-')) {
        size_t b = ++i;
        int64_t v;
        size_t ta;
        /* the SQL runs to a caret rule, a blank line before parameters, the records or the
         * perf line, or the record's end (its text may hold blank lines) */
        for (; i < r->n; i++) {
            span s = r->l[i];
            if (is_rule(s, '^') || records_line(s, &v) || ms_line(s, &v))
                break;
            if (s.n == 0 && i + 1 < r->n && param_head(r->l[i + 1], &ta))
                break;
        }
        size_t e_ = i;
        while (e_ > b && r->l[e_ - 1].n == 0)
            e_--;
        const char *sp = b < r->n ? r->l[b].p : "";
        size_t sn = e_ > b ? (size_t)(r->l[e_ - 1].p + r->l[e_ - 1].n - sp) : 0;
        if (!(e->sql = dup_span(sp, sn)))
            return FBW_E_NOMEM;
        if (i < r->n && is_rule(r->l[i], '^')) /* the plan: to the next blank line */
            for (i++; i < r->n && r->l[i].n != 0; i++)
                ;
    }
    for (; i < r->n; i++) {
        span s = r->l[i];
        size_t ta;
        if (s.n == 0)
            continue;
        if (param_head(s, &ta)) {
            size_t b = i;
            while (i + 1 < r->n && r->l[i + 1].n && !param_head(r->l[i + 1], &ta) &&
                   !records_line(r->l[i + 1], &e->records))
                i++;
            int rc = add_param(t, e, r, b, i + 1);
            if (rc)
                return rc;
        } else if (records_line(s, &e->records) || ms_line(s, &e->ms)) {
            continue;
        } else if (starts(s, "Table ") || starts(s, "*****") || starts(s, "Procedure ") ||
                   starts(s, "Trigger ") || starts(s, "Function ")) {
            break; /* per-table counters (print_perf) and routine lines close the record */
        }
        /* other lines (service queries, sweep counters, error texts) are not needed */
    }
    return FBW_OK;
}

static int record(pcaptool_trace *t, const rec *r)
{
    uint64_t ts;
    size_t at;
    if (!header(r->l[0], &ts, &at))
        return fail(t, r->first, "not a trace event header");
    span s = r->l[0];
    pcaptool_trace_event e;
    memset(&e, 0, sizeof e);
    e.att = e.tra = e.records = e.ms = -1;
    e.ts_ns = ts;
    e.line = r->first;
    const char *nm = s.p + at;
    size_t nn = s.n - at;
    if (nn > 7 && !memcmp(nm, "FAILED ", 7)) {
        e.failed = 1;
        nm += 7, nn -= 7;
    } else if (nn > 13 && !memcmp(nm, "UNAUTHORIZED ", 13)) {
        e.failed = 1;
        nm += 13, nn -= 13;
    }
    if (nn == 0 || nn >= sizeof e.name)
        return fail(t, r->first, "an event name of %zu bytes", nn);
    memcpy(e.name, nm, nn);
    e.name[nn] = 0;
    e.kind = pcaptool_trace_kind_of(e.name);
    if (e.kind < 0)
        return fail(t, r->first, "an event Firebird's trace does not write: %.60s", e.name);
    size_t i = 1;
    int rc = FBW_OK;
    for (; i < r->n && rc == FBW_OK; i++) {
        span l = r->l[i];
        if (l.n >= 2 && l.p[0] == '\t' && l.p[1] == '\t') {
            if (e.tra_opts) {
                rc = fail(t, r->first + i, "a second transaction line in one record");
                break;
            }
            int k = transaction_line(&e, l);
            if (k < 0)
                rc = k == -2 ? FBW_E_NOMEM : fail(t, r->first + i, "a transaction line without TRA_n");
        } else if (l.n >= 1 && l.p[0] == '\t') {
            int k = e.db ? 0 : attachment_line(&e, l);
            if (k < 0)
                rc = k == -2 ? FBW_E_NOMEM : fail(t, r->first + i, "an attachment line without ATT_n");
            else if (k == 0 && e.db && !e.process)
                rc = (e.process = dup_span(l.p + 1, l.n - 1)) ? FBW_OK : FBW_E_NOMEM;
        } else {
            break;
        }
    }
    if (rc == FBW_OK)
        rc = body(t, &e, r, i);
    if (rc == FBW_OK && t->n == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 64;
        pcaptool_trace_event *ne = realloc(t->ev, c * sizeof *ne);
        if (!ne)
            rc = FBW_E_NOMEM;
        else
            t->ev = ne, t->cap = c;
    }
    if (rc != FBW_OK) {
        if (rc == FBW_E_NOMEM)
            snprintf(t->err, sizeof t->err, "trace line %zu: out of memory", r->first);
        event_free(&e);
        return rc;
    }
    t->ev[t->n++] = e;
    return FBW_OK;
}

/* ---- records out of the text ---- */

static int is_header_line(span s)
{
    uint64_t ts;
    size_t at;
    return header(s, &ts, &at);
}

/* The session manager's own line before the first event. */
static int session_line(span s)
{
    if (!starts(s, "Trace session ID "))
        return 0;
    size_t i = 17;
    int64_t v;
    return digits(s, &i, &v) && s.n - i == 8 && !memcmp(s.p + i, " started", 8);
}

int pcaptool_trace_feed(pcaptool_trace *t, const char *text, size_t len, int final, size_t *used)
{
    *used = 0;
    if (t->err[0])
        return FBW_E_PROTO;
    span *l = NULL;
    size_t nl = 0, cap = 0, pos = 0;
    int rc = FBW_OK;
    /* the lines of the text; a last line without its newline only when the input ends */
    while (pos < len) {
        const char *nlc = memchr(text + pos, '\n', len - pos);
        if (!nlc && !final)
            break;
        size_t n = nlc ? (size_t)(nlc - (text + pos)) : len - pos;
        if (nl == cap) {
            size_t c = cap ? cap * 2 : 256;
            span *x = realloc(l, c * sizeof *x);
            if (!x) {
                free(l);
                snprintf(t->err, sizeof t->err, "out of memory");
                return FBW_E_NOMEM;
            }
            l = x, cap = c;
        }
        l[nl].p = text + pos;
        l[nl].n = n && text[pos + n - 1] == '\r' ? n - 1 : n;
        nl++;
        pos += n + (nlc ? 1 : 0);
    }
    size_t i = 0, done_bytes = 0;
    /* before the first record: the manager's line and blank lines only */
    while (!t->started && i < nl && !is_header_line(l[i])) {
        if (l[i].n && !session_line(l[i])) {
            rc = fail(t, t->lines + i + 1, "not a trace event header");
            break;
        }
        i++;
    }
    if (rc == FBW_OK)
        done_bytes = i < nl ? (size_t)(l[i].p - text) : pos;
    size_t lines_done = i;
    while (rc == FBW_OK && i < nl) {
        /* a record: its header to the blank line before the next header */
        size_t e = i + 1;
        while (e < nl && !(is_header_line(l[e]) && l[e - 1].n == 0))
            e++;
        if (e == nl && !final)
            break; /* more of it may still come */
        t->started = 1;
        size_t end = e;
        if (end == nl && (end - i < 2 || l[end - 1].n != 0)) {
            rc = fail(t, t->lines + i + 1, "the input ends inside this %s record",
                      is_header_line(l[i]) ? "event" : "text");
            break;
        }
        rec r = {l + i, end - i, t->lines + i + 1};
        rc = record(t, &r);
        if (rc != FBW_OK)
            break;
        i = e;
        lines_done = i;
        done_bytes = i < nl ? (size_t)(l[i].p - text) : pos;
    }
    t->lines += lines_done;
    free(l);
    *used = done_bytes;
    return rc;
}
