/* SPDX-License-Identifier: MIT */
/* sdl.c - the element of an array slice, from its SDL (slice description language), as the remote
 * layer needs it to put the slice on the wire (src/common/sdl.cpp SDL_info, sdl_desc;
 * src/remote/protocol.cpp xdr_slice): the declarations at the head of the SDL name the relation,
 * the field and the element's type; the subscript program after them is not read. */
#include "msg.h"

#include <string.h>

enum {
    SDL_VERSION1 = 1,
    SDL_RELATION = 2,
    SDL_RID = 3,
    SDL_FIELD = 4,
    SDL_FID = 5,
    SDL_STRUCT = 6,
    SDL_SCHEMA = 37,
};

/* BLR type codes an element may have (Firebird's blr.h) */
enum {
    T_SHORT = 7, T_LONG = 8, T_QUAD = 9, T_FLOAT = 10, T_D_FLOAT = 11, T_SQL_DATE = 12,
    T_SQL_TIME = 13, T_TEXT = 14, T_TEXT2 = 15, T_INT64 = 16, T_BOOL = 23, T_DEC64 = 24,
    T_DEC128 = 25, T_INT128 = 26, T_DOUBLE = 27, T_SQL_TIME_TZ = 28, T_TIMESTAMP_TZ = 29,
    T_EX_TIME_TZ = 30, T_EX_TIMESTAMP_TZ = 31, T_TIMESTAMP = 35, T_VARYING = 37, T_VARYING2 = 38,
    T_CSTRING = 40, T_CSTRING2 = 41,
};

typedef struct sdl_in {
    const uint8_t *p;
    size_t n, i;
    fbw_err *err;
    int rc;
} sdl_in;

static unsigned get1(sdl_in *in)
{
    if (in->rc != FBW_OK)
        return 0;
    if (in->i >= in->n) {
        in->rc = fbw_err_set(in->err, FBW_E_BADVALUE, "SDL not understood at offset %zu: truncated",
                             in->i);
        return 0;
    }
    return in->p[in->i++];
}

static unsigned get2(sdl_in *in)
{
    unsigned lo = get1(in);
    return lo | get1(in) << 8;
}

static void skip(sdl_in *in, size_t k)
{
    if (in->rc == FBW_OK && in->n - in->i < k)
        in->rc = fbw_err_set(in->err, FBW_E_BADVALUE, "SDL not understood at offset %zu: truncated",
                             in->i);
    else if (in->rc == FBW_OK)
        in->i += k;
}

static int fail(sdl_in *in, size_t at, const char *what, unsigned byte)
{
    if (in->rc == FBW_OK)
        in->rc = fbw_err_set(in->err, FBW_E_BADVALUE, "SDL not understood at offset %zu: %s %u",
                             at, what, byte);
    return in->rc;
}

/* One element type (sdl_desc). Text elements: CHAR of their length; every string form with a count
 * (cstring, varying) is sent as a C string of dsc_length bytes: a count and at most dsc_length - 1
 * bytes, which is a VARCHAR of dsc_length - 1. */
static void element(sdl_in *in, fbw_col *c)
{
    size_t at = in->i;
    unsigned code = get1(in);
    memset(c, 0, sizeof *c);
    c->nullable = 1;
    unsigned len;
    switch (code) {
    case T_TEXT: case T_TEXT2:
        c->type = FBW_SQL_TEXT;
        c->charset = code == T_TEXT ? FBW_CS_DYNAMIC : (uint16_t)get2(in);
        len = get2(in);
        if (in->rc == FBW_OK && len == 0)
            fail(in, at, "zero-length text element, type", code);
        c->length = (uint16_t)len;
        return;
    case T_CSTRING: case T_CSTRING2: case T_VARYING: case T_VARYING2: {
        int varying = code == T_VARYING || code == T_VARYING2;
        c->type = FBW_SQL_VARYING;
        c->charset = code == T_CSTRING || code == T_VARYING ? FBW_CS_DYNAMIC : (uint16_t)get2(in);
        len = get2(in);
        unsigned dsc = len + (varying ? 2u : 0u); /* the C string's size, its NUL included */
        if (in->rc == FBW_OK && (len == 0 || dsc > 0xFFFF))
            fail(in, at, "bad string element length, type", code);
        c->length = (uint16_t)(dsc ? dsc - 1 : 0);
        return;
    }
    case T_SHORT: c->type = FBW_SQL_SHORT; break;
    case T_LONG: c->type = FBW_SQL_LONG; break;
    case T_INT64: c->type = FBW_SQL_INT64; break;
    case T_INT128: c->type = FBW_SQL_INT128; break;
    case T_QUAD: c->type = FBW_SQL_QUAD; break;
    case T_FLOAT: c->type = FBW_SQL_FLOAT; break;
    case T_DOUBLE: case T_D_FLOAT: c->type = FBW_SQL_DOUBLE; break;
    case T_DEC64: c->type = FBW_SQL_DEC16; break;
    case T_DEC128: c->type = FBW_SQL_DEC34; break;
    case T_TIMESTAMP: c->type = FBW_SQL_TIMESTAMP; break;
    case T_TIMESTAMP_TZ: c->type = FBW_SQL_TIMESTAMP_TZ; break;
    case T_EX_TIMESTAMP_TZ: c->type = FBW_SQL_TIMESTAMP_TZ_EX; break;
    case T_SQL_DATE: c->type = FBW_SQL_TYPE_DATE; break;
    case T_SQL_TIME: c->type = FBW_SQL_TYPE_TIME; break;
    case T_SQL_TIME_TZ: c->type = FBW_SQL_TIME_TZ; break;
    case T_EX_TIME_TZ: c->type = FBW_SQL_TIME_TZ_EX; break;
    case T_BOOL: c->type = FBW_SQL_BOOLEAN; break;
    default:
        fail(in, at, "element type byte", code);
        return;
    }
    if (c->type == FBW_SQL_SHORT || c->type == FBW_SQL_LONG || c->type == FBW_SQL_INT64 ||
        c->type == FBW_SQL_INT128 || c->type == FBW_SQL_QUAD)
        c->scale = (int16_t)(int8_t)(uint8_t)get1(in);
    c->length = (uint16_t)fbw_msg_native_size(c);
}

int fbw_sdl_element(const uint8_t *sdl, size_t n, fbw_col *elem, fbw_err *err)
{
    sdl_in in = {sdl, n, 0, err, FBW_OK};
    int have = 0;
    if (get1(&in) != SDL_VERSION1 && in.rc == FBW_OK)
        return fail(&in, 0, "version byte", sdl[0]);
    while (in.rc == FBW_OK) {
        size_t at = in.i;
        if (at == in.n) /* nothing but declarations: SDL_info stops here too */
            break;
        unsigned op = get1(&in);
        if (op == SDL_STRUCT) {
            unsigned count = get1(&in);
            if (in.rc == FBW_OK && count != 1)
                return fail(&in, at + 1, "struct of elements other than 1:", count);
            element(&in, elem);
            have = in.rc == FBW_OK;
        } else if (op == SDL_FID || op == SDL_RID) {
            (void)get2(&in);
        } else if (op == SDL_FIELD || op == SDL_RELATION || op == SDL_SCHEMA) {
            skip(&in, get1(&in));
        } else {
            break; /* the subscript program: not needed for the element */
        }
    }
    if (in.rc == FBW_OK && !have)
        return fbw_err_set(err, FBW_E_BADVALUE, "SDL not understood: no element type (isc_sdl_struct)");
    return in.rc;
}

size_t fbw_slice_stride(const fbw_col *c)
{
    if (c->type == FBW_SQL_VARYING) /* a C string: the count's maximum + its NUL */
        return (size_t)c->length + 1;
    return fbw_msg_native_size(c);
}
