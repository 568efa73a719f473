/* SPDX-License-Identifier: MIT */
/* status.c - status vector framing and interpretation (see status.h; classes: errclass.c).
 *
 * Wire layout and the set of valid argument types follow src/remote/protocol.cpp
 * xdr_status_vector: any other type makes Firebird itself drop the packet, so it is a framing
 * error here too. Text follows src/yvalve/gds.cpp safe_interpret + common/classes/MsgPrint.cpp:
 * the string/number arguments after a code fill @1..@9 of its template, "@@" is a literal '@'. */
#include "status.h"

#include "msgs.h"

#include <stdio.h>
#include <string.h>

#define MAX_ARGS 9 /* templates use @1..@9 */

/* ---- framing ---------------------------------------------------------------------------- */

static int is_string_type(uint32_t t)
{
    return t == FBW_ARG_STRING || t == FBW_ARG_INTERPRETED || t == FBW_ARG_SQL_STATE;
}

static int is_number_type(uint32_t t)
{
    return t == FBW_ARG_GDS || t == FBW_ARG_NUMBER || t == FBW_ARG_UNIX || t == FBW_ARG_NEXT_MACH ||
           t == FBW_ARG_WIN32 || t == FBW_ARG_WARNING;
}

enum { WHY_NONE, WHY_TYPE, WHY_STRING, WHY_COUNT };

/* Turn a framing failure into a message with the offending value and offset. */
static void describe(fbw_err *err, const fbw_rd *r, int why, uint32_t value, size_t at)
{
    if (!err || r->rc == FBW_OK || r->rc == FBW_AGAIN)
        return;
    if (why == WHY_TYPE)
        fbw_err_set(err, r->rc, "status arg type %u unknown at offset %zu", value, at);
    else if (why == WHY_STRING)
        fbw_err_set(err, r->rc, "status string length %u over %u at offset %zu", value,
                    FBW_STATUS_MAX_STRING, at);
    else if (why == WHY_COUNT)
        fbw_err_set(err, r->rc, "status vector longer than %d entries at offset %zu",
                    FBW_STATUS_MAX_ENTRIES, at);
    else
        fbw_err_set(err, r->rc, "status vector: %s at offset %zu", r->what ? r->what : "malformed",
                    at);
    err->offset = at;
}

fbw_bytes fbw_status_frame_ex(fbw_rd *r, fbw_err *err)
{
    fbw_bytes v = {NULL, 0};
    const uint8_t *start = r->p;
    size_t at = fbw_rd_offset(r);
    uint32_t value = 0;
    int why = WHY_NONE;
    for (int n = 0; r->rc == FBW_OK; n++) {
        at = fbw_rd_offset(r);
        if (n == FBW_STATUS_MAX_ENTRIES) {
            why = WHY_COUNT;
            fbw_rd_fail(r, FBW_E_PROTO, "status vector too long");
            break;
        }
        uint32_t type = fbw_xdr_u32(r);
        if (r->rc != FBW_OK)
            break;
        if (type == FBW_ARG_END) {
            v.p = start;
            v.n = (size_t)(r->p - start);
            return v;
        }
        if (is_string_type(type)) {
            fbw_rd peek = *r; /* read the length again only to name it in the message */
            value = fbw_xdr_u32(&peek);
            if ((value & 0xFFFF0000u) == 0xFFFF0000u)
                value &= 0xFFFF; /* sign-extended 16-bit length, as fbw_xdr_bytes reads it */
            at = fbw_rd_offset(r);
            (void)fbw_xdr_bytes(r, FBW_STATUS_MAX_STRING);
            why = WHY_STRING;
        } else if (is_number_type(type)) {
            (void)fbw_xdr_u32(r);
        } else {
            value = type;
            why = WHY_TYPE;
            fbw_rd_fail(r, FBW_E_PROTO, "status arg type unknown");
        }
        if (r->rc == FBW_OK)
            why = WHY_NONE;
    }
    if (why == WHY_STRING && value <= FBW_STATUS_MAX_STRING)
        why = WHY_NONE; /* a shortfall, not an overlong string */
    describe(err, r, why, value, at);
    return v;
}

fbw_bytes fbw_status_frame(fbw_rd *r)
{
    return fbw_status_frame_ex(r, NULL);
}

/* ---- walking a framed vector ---------------------------------------------------------- */

typedef struct entry {
    uint32_t type;
    uint32_t num; /* number types */
    fbw_bytes s;  /* string types */
} entry;

/* Next entry of a vector already validated by fbw_status_frame; 0 at isc_arg_end. */
static int next_entry(fbw_rd *r, entry *e)
{
    e->type = fbw_xdr_u32(r);
    e->num = 0;
    e->s.p = NULL;
    e->s.n = 0;
    if (r->rc != FBW_OK || e->type == FBW_ARG_END)
        return 0;
    if (is_string_type(e->type))
        e->s = fbw_xdr_bytes(r, FBW_STATUS_MAX_STRING);
    else
        e->num = fbw_xdr_u32(r);
    return r->rc == FBW_OK;
}

int fbw_status_is_success(fbw_bytes vec)
{
    fbw_rd r;
    entry e;
    fbw_rd_init(&r, vec.p, vec.n, FBW_E_PROTO);
    while (next_entry(&r, &e)) {
        if (e.type == FBW_ARG_SQL_STATE)
            continue;
        return e.type == FBW_ARG_WARNING || (e.type == FBW_ARG_GDS && e.num == 0);
    }
    return 1;
}

/* ---- bounded text -------------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t cap; /* including the NUL */
    size_t len;
    int full;
} sbuf;

static void sb_init(sbuf *b, char *p, size_t cap)
{
    b->p = p;
    b->cap = cap;
    b->len = 0;
    b->full = 0;
    p[0] = '\0';
}

/* Append bytes; NUL bytes from the peer become '?' so the text stays one C string. When the
 * buffer fills, the tail becomes "..." and later appends are dropped. */
static void sb_put(sbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n && !b->full; i++) {
        if (b->len + 1 >= b->cap) {
            b->full = 1;
            memcpy(b->p + b->cap - 4, "...", 4);
            return;
        }
        b->p[b->len++] = s[i] ? s[i] : '?';
    }
    if (!b->full)
        b->p[b->len] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

static void sb_num(sbuf *b, long long v)
{
    char t[24];
    int n = snprintf(t, sizeof t, "%lld", v);
    sb_put(b, t, (size_t)n);
}

/* ---- rendering ----------------------------------------------------------------------- */

typedef struct item {
    uint32_t type; /* FBW_ARG_GDS/WARNING/INTERPRETED/UNIX/..., FBW_ARG_END when none */
    uint32_t code;
    fbw_bytes text; /* isc_arg_interpreted */
    int nargs;
    entry args[MAX_ARGS];
} item;

static void put_arg(sbuf *b, const entry *a)
{
    if (a->type == FBW_ARG_NUMBER)
        sb_num(b, (int32_t)a->num);
    else
        sb_put(b, (const char *)a->s.p, a->s.n);
}

static void render_template(sbuf *b, const char *t, const item *it)
{
    for (; *t; t++) {
        if (t[0] != '@' || !t[1]) {
            sb_put(b, t, 1);
        } else if (t[1] == '@') {
            sb_put(b, "@", 1);
            t++;
        } else if (t[1] >= '1' && t[1] <= '9') {
            int k = t[1] - '0';
            if (k <= it->nargs)
                put_arg(b, &it->args[k - 1]);
            else {
                sb_str(b, "<missing arg #");
                sb_num(b, k);
                sb_str(b, ">");
            }
            t++;
        } else {
            sb_put(b, t, 1);
        }
    }
}

static void render_item(sbuf *b, const item *it)
{
    const fbw_msg *m;
    if (b->len > 0)
        sb_str(b, "\n-");
    switch (it->type) {
    case FBW_ARG_INTERPRETED:
        sb_put(b, (const char *)it->text.p, it->text.n);
        return;
    case FBW_ARG_UNIX:
        sb_str(b, "unix error ");
        break;
    case FBW_ARG_WIN32:
        sb_str(b, "Win32 error ");
        break;
    case FBW_ARG_NEXT_MACH:
        sb_str(b, "next/mach error ");
        break;
    default:
        m = fbw_msg_find(it->code);
        if (m) {
            render_template(b, m->text, it);
            return;
        }
        sb_str(b, "gds code ");
        break;
    }
    sb_num(b, it->type == FBW_ARG_GDS || it->type == FBW_ARG_WARNING ? (long long)it->code
                                                                     : (int32_t)it->code);
    for (int i = 0; i < it->nargs; i++) {
        sb_str(b, i == 0 ? ": " : ", ");
        put_arg(b, &it->args[i]);
    }
}

/* ---- interpretation ------------------------------------------------------------------ */

typedef struct decoder {
    int success;
    int in_warnings; /* a warning item was seen: later free-standing items are warnings too */
    fbw_err *err;
    fbw_warnings *warn;
    sbuf emsg, wmsg;
    char state[6];   /* per-code SQLSTATE so far */
    int state_final; /* a specific (non-general) state was found */
} decoder;

static int general_state(const char *s)
{
    return !strcmp(s, "22000") || !strcmp(s, "42000") || !strcmp(s, "HY000");
}

/* gds.cpp fb_sqlstate step 2: the first specific state of the chain wins; general ones only
 * hold the place; isc_random and isc_sqlerr say nothing about the state. */
static void note_state(decoder *d, uint32_t code)
{
    if (d->state_final || code == FBW_ISC_RANDOM || code == FBW_ISC_SQLERR)
        return;
    const fbw_msg *m = fbw_msg_find(code);
    if (!m || !strcmp(m->sqlstate, "00000"))
        return;
    memcpy(d->state, m->sqlstate, sizeof d->state);
    d->state_final = !general_state(m->sqlstate);
}

static void flush(decoder *d, const item *it)
{
    if (it->type == FBW_ARG_END)
        return;
    int warning = d->success || d->in_warnings || it->type == FBW_ARG_WARNING;
    if (!warning) {
        if (it->type == FBW_ARG_GDS) {
            if (d->err->ngds < FBW_ERR_GDS_MAX)
                d->err->gds[d->err->ngds++] = it->code;
            note_state(d, it->code);
        }
        render_item(&d->emsg, it);
        return;
    }
    if (!d->warn)
        return;
    if (it->type == FBW_ARG_WARNING && d->warn->n < FBW_WARNINGS_MAX)
        d->warn->code[d->warn->n++] = it->code;
    render_item(&d->wmsg, it);
}

/* Start a new item of type t (flushing the previous one). */
static void begin(decoder *d, item *it, const entry *e)
{
    flush(d, it);
    memset(it, 0, sizeof *it);
    it->type = e->type;
    it->code = e->num;
    it->text = e->s;
    if (e->type == FBW_ARG_WARNING)
        d->in_warnings = 1;
    if (e->type == FBW_ARG_GDS && e->num == 0)
        it->type = FBW_ARG_END; /* the success marker is not an item */
}

static void walk(decoder *d, fbw_bytes vec, char *sql_state)
{
    fbw_rd r;
    entry e;
    item it;
    memset(&it, 0, sizeof it);
    it.type = FBW_ARG_END;
    fbw_rd_init(&r, vec.p, vec.n, FBW_E_PROTO);
    while (next_entry(&r, &e)) {
        switch (e.type) {
        case FBW_ARG_STRING:
        case FBW_ARG_NUMBER:
            if (it.type != FBW_ARG_END && it.nargs < MAX_ARGS)
                it.args[it.nargs++] = e;
            break;
        case FBW_ARG_SQL_STATE:
            /* gds.cpp fb_sqlstate step 1: an explicit state wins (first one); it must be
             * exactly 5 characters to be one. */
            if (!sql_state[0] && e.s.n == 5 && !memchr(e.s.p, 0, 5)) {
                memcpy(sql_state, e.s.p, 5);
                sql_state[5] = '\0';
            }
            break;
        default:
            begin(d, &it, &e);
            break;
        }
    }
    flush(d, &it);
}

int fbw_status_decode(fbw_bytes vec, fbw_err *err, fbw_warnings *warn)
{
    fbw_rd r;
    decoder d;
    char sql_state[6] = "";
    memset(&d, 0, sizeof d);
    fbw_err_clear(err);
    if (warn) {
        memset(warn, 0, sizeof *warn);
        sb_init(&d.wmsg, warn->msg, sizeof warn->msg);
    }
    fbw_rd_init(&r, vec.p, vec.n, FBW_E_PROTO);
    (void)fbw_status_frame_ex(&r, err);
    if (r.rc != FBW_OK)
        return r.rc;
    d.success = fbw_status_is_success(vec);
    d.err = err;
    d.warn = warn;
    sb_init(&d.emsg, err->msg, sizeof err->msg);
    memcpy(d.state, "HY000", sizeof d.state);
    walk(&d, vec, sql_state);
    if (d.success) {
        fbw_err_clear(err);
        return FBW_OK;
    }
    err->code = FBW_E_SERVER;
    memcpy(err->sqlstate, sql_state[0] ? sql_state : d.state, sizeof err->sqlstate);
    if (!err->msg[0])
        snprintf(err->msg, sizeof err->msg, "server error without a message");
    return FBW_E_SERVER;
}

/* ---- SQLCODE ------------------------------------------------------------------------- */

static int table_sqlcode(uint32_t code)
{
    const fbw_msg *m = fbw_msg_find(code);
    return m ? m->sqlcode : -999;
}

int fbw_status_sqlcode_vec(fbw_bytes vec)
{
    fbw_rd r;
    entry e, next;
    uint32_t primary = 0;
    int seen_gds = 0;
    if (fbw_status_is_success(vec))
        return 0;
    fbw_rd_init(&r, vec.p, vec.n, FBW_E_PROTO);
    while (next_entry(&r, &e)) {
        if (e.type != FBW_ARG_GDS)
            continue;
        if (!seen_gds++)
            primary = e.num;
        if (e.num == FBW_ISC_SQLERR) {
            fbw_rd peek = r;
            if (next_entry(&peek, &next) && next.type == FBW_ARG_NUMBER)
                return (int32_t)next.num;
        }
    }
    return seen_gds ? table_sqlcode(primary) : -999;
}

int fbw_status_sqlcode(const fbw_err *err)
{
    if (!err || err->code == FBW_OK)
        return 0;
    if (err->code == FBW_E_EOF || err->code == FBW_E_IO || err->code == FBW_E_TIMEOUT)
        return table_sqlcode(FBW_ISC_NETWORK_ERROR); /* what fbclient reports for a lost link */
    for (int i = 0; i < err->ngds; i++) {
        uint32_t c = err->gds[i];
        if (c == FBW_ISC_DSQL_ERROR || c == FBW_ISC_SQLERR)
            continue;
        int sqlcode = table_sqlcode(c);
        if (sqlcode != -999)
            return sqlcode;
    }
    return -999;
}

/* ---- encoding ------------------------------------------------------------------------ */

void fbw_status_encode(fbw_wr *w, const fbw_status_arg *args, int nargs)
{
    for (int i = 0; i < nargs; i++) {
        fbw_xdr_put_u32(w, (uint32_t)args[i].type);
        if (is_string_type((uint32_t)args[i].type))
            fbw_xdr_put_str(w, args[i].str);
        else
            fbw_xdr_put_u32(w, args[i].num);
    }
    fbw_xdr_put_u32(w, FBW_ARG_END);
}
