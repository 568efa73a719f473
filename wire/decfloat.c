/* SPDX-License-Identifier: MIT */
/* decfloat.c - IEEE 754-2008 decimal64/decimal128 in the densely packed decimal (DPD) encoding,
 * to and from text. Firebird stores DECFLOAT with IBM's decNumber (decDouble/decQuad, DPD) and
 * xdr_dec64/xdr_dec128 send the 64/128-bit word big-endian (src/common/xdr.cpp). No Debian
 * package converts DPD, hence this file. Layout (IEEE 754-2008 §3.5):
 *   sign(1) combination(5) exponent continuation(8|12) coefficient continuation(50|110)
 * The coefficient continuation is 5|11 declets of 10 bits, each holding 3 decimal digits. */
#include "value.h"

#include <string.h>

typedef struct decfmt {
    size_t nbytes;
    unsigned ecbits;  /* exponent continuation bits */
    unsigned digits;  /* precision */
    int bias;         /* exponent of the coefficient's last digit = biased - bias */
    int emax_exp;     /* largest exponent of the last digit: emax - digits + 1 */
} decfmt;

static const decfmt DEC64 = {8, 8, 16, 398, 369};
static const decfmt DEC128 = {16, 12, 34, 6176, 6111};

enum { K_FINITE, K_INF, K_NAN, K_SNAN };

/* A decoded number: value = coef * 10^exp; coef as digit values, most significant first. */
typedef struct decnum {
    int sign;
    int kind;
    unsigned nd;        /* digits in coef (precision of the format; leading zeros allowed) */
    uint8_t coef[34];
    int exp;
} decnum;

/* Bit k of a big-endian number (k = 0 is the least significant). */
static unsigned get_bits(const uint8_t *be, size_t nbytes, unsigned lsb, unsigned count)
{
    unsigned v = 0;
    for (unsigned i = count; i-- > 0;) {
        unsigned k = lsb + i;
        v = v << 1 | (be[nbytes - 1 - k / 8] >> (k % 8) & 1u);
    }
    return v;
}

static void set_bits(uint8_t *be, size_t nbytes, unsigned lsb, unsigned count, unsigned v)
{
    for (unsigned i = 0; i < count; i++) {
        unsigned k = lsb + i;
        if (v >> i & 1u)
            be[nbytes - 1 - k / 8] |= (uint8_t)(1u << (k % 8));
    }
}

/* One declet to its three digits (IEEE 754-2008 table 3.3). Non-canonical declets decode as the
 * standard says (the "don't care" bits are ignored). */
static void declet_decode(unsigned d, uint8_t out[3])
{
    unsigned b0 = d & 1, b4 = d >> 4 & 1, b7 = d >> 7 & 1;
    unsigned hi3 = d >> 7 & 7, mid3 = d >> 4 & 7, lo3 = d & 7;
    unsigned b98 = d >> 8 & 3, b65 = d >> 5 & 3;
    unsigned d2, d1, d0;
    if (!(d >> 3 & 1)) {
        d2 = hi3, d1 = mid3, d0 = lo3;
    } else {
        switch (d >> 1 & 3) {
        case 0: d2 = hi3, d1 = mid3, d0 = 8 + b0; break;
        case 1: d2 = hi3, d1 = 8 + b4, d0 = b65 << 1 | b0; break;
        case 2: d2 = 8 + b7, d1 = mid3, d0 = b98 << 1 | b0; break;
        default:
            switch (b65) {
            case 0: d2 = 8 + b7, d1 = 8 + b4, d0 = b98 << 1 | b0; break;
            case 1: d2 = 8 + b7, d1 = b98 << 1 | b4, d0 = 8 + b0; break;
            case 2: d2 = hi3, d1 = 8 + b4, d0 = 8 + b0; break;
            default: d2 = 8 + b7, d1 = 8 + b4, d0 = 8 + b0; break;
            }
        }
    }
    out[0] = (uint8_t)d2, out[1] = (uint8_t)d1, out[2] = (uint8_t)d0;
}

/* Three digits to their canonical declet. */
static unsigned declet_encode(const uint8_t in[3])
{
    unsigned d2 = in[0], d1 = in[1], d0 = in[2];
    unsigned l2 = d2 >= 8, l1 = d1 >= 8, l0 = d0 >= 8;
    unsigned c = d2 & 1, f = d1 & 1, i = d0 & 1;
    switch (l2 << 2 | l1 << 1 | l0) {
    case 0: return d2 << 7 | d1 << 4 | d0;
    case 1: return d2 << 7 | d1 << 4 | 0x8 | i;
    case 2: return d2 << 7 | (d0 >> 1 & 3) << 5 | f << 4 | 0xA | i;
    case 4: return (d0 >> 1 & 3) << 8 | c << 7 | d1 << 4 | 0xC | i;
    case 6: return (d0 >> 1 & 3) << 8 | c << 7 | f << 4 | 0xE | i;
    case 5: return (d1 >> 1 & 3) << 8 | c << 7 | 1u << 5 | f << 4 | 0xE | i;
    case 3: return d2 << 7 | 2u << 5 | f << 4 | 0xE | i;
    default: return c << 7 | 3u << 5 | f << 4 | 0xE | i;
    }
}

static void unpack(const decfmt *fmt, const uint8_t *be, decnum *d)
{
    unsigned total = (unsigned)fmt->nbytes * 8;
    unsigned ndeclets = (fmt->digits - 1) / 3;
    unsigned g = get_bits(be, fmt->nbytes, total - 6, 5);
    unsigned econt = get_bits(be, fmt->nbytes, ndeclets * 10, fmt->ecbits);
    unsigned emsb, msd;
    memset(d, 0, sizeof *d);
    d->sign = be[0] >> 7;
    d->nd = fmt->digits;
    if ((g >> 3) != 3) {
        emsb = g >> 3, msd = g & 7;
        d->kind = K_FINITE;
    } else if ((g >> 1) != 0xF) {
        emsb = g >> 1 & 3, msd = 8 + (g & 1);
        d->kind = K_FINITE;
    } else {
        /* 11110 infinity; 11111 NaN, signalling when the next bit is set. The NaN payload is the
         * coefficient continuation (leading digit 0). */
        d->kind = !(g & 1) ? K_INF : (econt >> (fmt->ecbits - 1) & 1) ? K_SNAN : K_NAN;
        emsb = 0, msd = 0;
    }
    d->exp = (int)(emsb << fmt->ecbits | econt) - fmt->bias;
    d->coef[0] = (uint8_t)msd;
    for (unsigned k = 0; k < ndeclets; k++)
        declet_decode(get_bits(be, fmt->nbytes, (ndeclets - 1 - k) * 10, 10), &d->coef[1 + 3 * k]);
}

/* d must be canonical: nd == digits, exp in range (finite), coef[0] = 0 for NaN payloads. */
static void pack(const decfmt *fmt, const decnum *d, uint8_t *be)
{
    unsigned total = (unsigned)fmt->nbytes * 8;
    unsigned ndeclets = (fmt->digits - 1) / 3;
    memset(be, 0, fmt->nbytes);
    if (d->sign)
        be[0] |= 0x80;
    if (d->kind == K_INF) {
        set_bits(be, fmt->nbytes, total - 6, 5, 0x1E);
        return;
    }
    if (d->kind == K_FINITE) {
        unsigned biased = (unsigned)(d->exp + fmt->bias);
        unsigned emsb = biased >> fmt->ecbits, msd = d->coef[0];
        unsigned g = msd < 8 ? emsb << 3 | msd : 0x18 | emsb << 1 | (msd & 1);
        set_bits(be, fmt->nbytes, total - 6, 5, g);
        set_bits(be, fmt->nbytes, ndeclets * 10, fmt->ecbits, biased);
    } else {
        set_bits(be, fmt->nbytes, total - 6, 5, 0x1F);
        if (d->kind == K_SNAN)
            set_bits(be, fmt->nbytes, total - 7, 1, 1);
    }
    for (unsigned k = 0; k < ndeclets; k++)
        set_bits(be, fmt->nbytes, (ndeclets - 1 - k) * 10, 10,
                 declet_encode(&d->coef[1 + 3 * k]));
}

static const decfmt *fmt_of(size_t nbytes) { return nbytes == 8 ? &DEC64 : &DEC128; }

/* ---- to text ---- */

static size_t put_int(char *p, long v)
{
    char tmp[24];
    size_t n = 0, k = 0;
    unsigned long u = v < 0 ? 0ul - (unsigned long)v : (unsigned long)v;
    if (v < 0)
        p[k++] = '-';
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        p[k++] = tmp[--n];
    return k;
}

size_t fbw_dec_to_text(const uint8_t *be, size_t nbytes, char *out)
{
    decnum d;
    size_t k = 0;
    unpack(fmt_of(nbytes), be, &d);
    if (d.sign)
        out[k++] = '-';
    /* Skip leading zeros of the coefficient, keeping one digit. */
    unsigned first = 0;
    while (first + 1 < d.nd && d.coef[first] == 0)
        first++;
    unsigned len = d.nd - first;
    if (d.kind == K_INF) {
        memcpy(out + k, "Infinity", 8);
        k += 8;
    } else if (d.kind != K_FINITE) {
        if (d.kind == K_SNAN)
            out[k++] = 's';
        memcpy(out + k, "NaN", 3);
        k += 3;
        if (!(len == 1 && d.coef[first] == 0))
            for (unsigned i = first; i < d.nd; i++)
                out[k++] = (char)('0' + d.coef[i]);
    } else {
        long adjusted = (long)d.exp + (long)len - 1;
        if (d.exp <= 0 && adjusted >= -6) {
            /* Plain notation. */
            long point = (long)len + d.exp; /* digits before the decimal point */
            if (point <= 0) {
                out[k++] = '0';
                out[k++] = '.';
                for (long z = point; z < 0; z++)
                    out[k++] = '0';
            }
            for (unsigned i = 0; i < len; i++) {
                if (point > 0 && (long)i == point)
                    out[k++] = '.';
                out[k++] = (char)('0' + d.coef[first + i]);
            }
        } else {
            out[k++] = (char)('0' + d.coef[first]);
            if (len > 1) {
                out[k++] = '.';
                for (unsigned i = 1; i < len; i++)
                    out[k++] = (char)('0' + d.coef[first + i]);
            }
            out[k++] = 'E';
            if (adjusted >= 0)
                out[k++] = '+';
            k += put_int(out + k, adjusted);
        }
    }
    out[k] = '\0';
    return k;
}

/* ---- from text ---- */

static int ieq(const char *s, size_t n, const char *lit)
{
    size_t m = strlen(lit);
    if (n != m)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if (ch != lit[i])
            return 0;
    }
    return 1;
}

static int is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* NaN / sNaN with an optional payload of up to digits-1 digits. */
static int parse_nan(const decfmt *fmt, const char *s, size_t n, decnum *d)
{
    size_t skip = (n >= 4 && ieq(s, 4, "snan")) ? 4 : (n >= 3 && ieq(s, 3, "nan")) ? 3 : 0;
    if (!skip)
        return 0;
    d->kind = skip == 4 ? K_SNAN : K_NAN;
    s += skip, n -= skip;
    while (n > 0 && *s == '0')
        s++, n--;
    if (n > fmt->digits - 1)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return 0;
        d->coef[fmt->digits - n + i] = (uint8_t)(s[i] - '0');
    }
    return 1;
}

/* Add one unit in the last place of coef[0..nd); returns the carry out. */
static int increment(uint8_t *coef, unsigned nd)
{
    for (unsigned i = nd; i-- > 0;) {
        if (coef[i] < 9) {
            coef[i]++;
            return 0;
        }
        coef[i] = 0;
    }
    return 1;
}

/* Finite text: [digits][.digits][E[+-]digits] after the sign. Fills d (right-aligned in the
 * precision, rounded half up once, range-checked). Returns FBW_OK, or a negative code with why.
 * Two passes over the digits: the first finds how many there are, so precision and subnormal
 * rounding happen in one step (rounding twice would round 0.4999 up via 0.5). */
static int parse_finite(const decfmt *fmt, const char *s, size_t n, decnum *d, const char **why)
{
    long total = 0, frac = 0, e = 0;
    int point = 0, seen = 0;
    size_t i = 0;
    for (; i < n; i++) {
        if (s[i] == '.' && !point) {
            point = 1;
        } else if (is_digit(s[i])) {
            seen = 1;
            frac += point;
            total += total > 0 || s[i] != '0'; /* significant digits */
        } else {
            break;
        }
    }
    size_t mend = i;
    if (!seen) {
        *why = "no digits";
        return FBW_E_BADVALUE;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        int esign = 1, edig = 0;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            esign = s[i++] == '-' ? -1 : 1;
        for (; i < n && is_digit(s[i]); i++, edig = 1)
            if (e < 100000000L)
                e = e * 10 + (s[i] - '0');
        if (!edig) {
            *why = "exponent without digits";
            return FBW_E_BADVALUE;
        }
        e *= esign;
    }
    if (i != n) {
        *why = "unexpected character";
        return FBW_E_BADVALUE;
    }
    /* The full coefficient has `total` digits, the last one at 10^low. Keep as many as the
     * precision and the smallest exponent allow. */
    long low = e - frac, emin = -(long)fmt->bias;
    long drop = total - (long)fmt->digits;
    if (emin - low > drop)
        drop = emin - low;
    if (drop < 0)
        drop = 0;
    long keep = total - drop, exp = low + drop, idx = 0;
    uint8_t dig[35];
    unsigned nd = 0;
    int up = 0;
    for (i = 0; i < mend; i++) {
        if (!is_digit(s[i]) || (idx == 0 && s[i] == '0'))
            continue;
        if (idx < keep)
            dig[nd++] = (uint8_t)(s[i] - '0');
        else if (idx == keep)
            up = s[i] >= '5'; /* half up: the first dropped digit decides */
        idx++;
    }
    if (up && nd == 0) {
        dig[nd++] = 1;
    } else if (up && increment(dig, nd)) {
        /* 9..9 became 10..0: one digit more, which fits unless we are at full precision */
        dig[0] = 1;
        if (nd < fmt->digits)
            dig[nd++] = 0;
        else
            exp++;
    }
    if (nd == 0 || (nd == 1 && dig[0] == 0)) {
        nd = 0;
        exp = exp < emin ? emin : exp > fmt->emax_exp ? fmt->emax_exp : exp; /* clamped zero */
    } else if (exp > fmt->emax_exp) {
        /* Fold down: pad with zeros while the coefficient has room, else overflow. */
        long pad = exp - fmt->emax_exp;
        if ((long)nd + pad > (long)fmt->digits) {
            *why = "overflow";
            return FBW_E_BADVALUE;
        }
        memset(dig + nd, 0, (size_t)pad);
        nd += (unsigned)pad;
        exp = fmt->emax_exp;
    }
    d->kind = K_FINITE;
    d->exp = (int)exp;
    memcpy(d->coef + (fmt->digits - nd), dig, nd);
    return FBW_OK;
}

int fbw_dec_from_text(const char *s, size_t n, size_t nbytes, uint8_t *be, fbw_err *err)
{
    const decfmt *fmt = fmt_of(nbytes);
    const char *why = "bad syntax";
    decnum d;
    int rc = FBW_OK;
    memset(&d, 0, sizeof d);
    d.nd = fmt->digits;
    while (n > 0 && *s == ' ')
        s++, n--;
    while (n > 0 && s[n - 1] == ' ')
        n--;
    if (n > 0 && (*s == '+' || *s == '-')) {
        d.sign = *s == '-';
        s++, n--;
    }
    if (ieq(s, n, "inf") || ieq(s, n, "infinity"))
        d.kind = K_INF;
    else if (n > 0 && (*s == 'n' || *s == 'N' || *s == 's' || *s == 'S'))
        rc = parse_nan(fmt, s, n, &d) ? FBW_OK : FBW_E_BADVALUE;
    else
        rc = parse_finite(fmt, s, n, &d, &why);
    if (rc != FBW_OK)
        return fbw_err_set(err, rc, "DECFLOAT(%u): %s in \"%.*s\"", fmt->digits, why,
                           (int)(n > 60 ? 60 : n), s);
    pack(fmt, &d, be);
    return FBW_OK;
}
