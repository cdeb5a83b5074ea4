/*
 * mtc_print.c -- mtc's printing of results (mtc.c): NumPy's print() of an
 * array, with the helpers it needs.
 *
 * Printing follows numpy.array2string with its defaults (precision 8,
 * floatmode 'maxprec', linewidth 75, threshold 1000, edgeitems 3), so that
 * `mtc --run` output can be compared with `print(np.array(...))` by eye or by
 * diff (we follow NumPy 2.3 and later). Floats: the values shown decide
 * between positional and scientific notation (scientific when the largest
 * magnitude is >= 1e8 (1e6 for float32, 1e3 for float16 and bfloat16), the
 * smallest nonzero one < 1e-4, or their ratio > 1000); each value is the
 * shortest decimal string that reads back to the same value of its own type
 * (float16, bfloat16, float32 or float64), cut to 8 fractional digits (NumPy
 * has no bfloat16: it prints as float16 does, with its own rounding); then all are padded to a
 * common width. A 0-d result prints like NumPy's str of a scalar ("2.0",
 * "2", "True"). Arrays above 1000 elements show 3 items at each edge of every
 * axis with "..." between.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtc_print.h"

/* ---- a growable string ----------------------------------------------------- */

void sb_grow(sbuf *s, size_t extra) {
    if (s->len + extra + 1 <= s->cap) return;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < s->len + extra + 1) cap *= 2;
    char *p = realloc(s->p, cap);
    if (!p) {
        fputs("mtc: out of memory\n", stderr);
        exit(EXIT_RUNTIME);
    }
    s->p = p;
    s->cap = cap;
}

void sb_putn(sbuf *s, const char *t, size_t n) {
    sb_grow(s, n);
    memcpy(s->p + s->len, t, n);
    s->len += n;
    s->p[s->len] = 0;
}

void sb_puts(sbuf *s, const char *t) { sb_putn(s, t, strlen(t)); }

static void sb_spaces(sbuf *s, int n) {
    for (int i = 0; i < n; i++) sb_putn(s, " ", 1);
}

void sb_free(sbuf *s) {
    free(s->p);
    s->p = NULL;
    s->len = s->cap = 0;
}

const char *sb_str(const sbuf *s) { return s->p ? s->p : ""; }

void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fputs("mtc: out of memory\n", stderr);
        exit(EXIT_RUNTIME);
    }
    return p;
}

/* ---- float16 ------------------------------------------------------------- */

static double half_to_double(uint16_t h) {
    int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v;
    if (exp == 0) v = ldexp(mant, -24);
    else if (exp == 31) v = mant ? NAN : INFINITY;
    else v = ldexp(mant | 0x400, exp - 25);
    return sign ? -v : v;
}

/* Round to nearest even, overflow to infinity. */
uint16_t double_to_half(double d) {
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    uint16_t sign = (uint16_t)((b >> 48) & 0x8000);
    int exp = (int)((b >> 52) & 0x7ff);
    uint64_t mant = b & ((UINT64_C(1) << 52) - 1);
    if (exp == 0x7ff) return sign | 0x7c00 | (mant ? 0x200 : 0);
    if (exp == 0) return sign; /* double subnormals are far below half's range */
    int e = exp - 1023, he, shift;
    uint64_t m = mant | (UINT64_C(1) << 52);
    if (e >= -14) {
        he = e + 15;
        shift = 42;
    } else {
        he = 0;
        shift = 42 + (-14 - e);
    }
    if (he >= 31) return sign | 0x7c00;
    if (shift >= 54) return sign;
    uint64_t q = m >> shift, rem = m & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    if (he == 0) return sign | (uint16_t)q; /* q == 0x400 is the smallest normal */
    if (q >= 0x800) {
        q >>= 1;
        he++;
        if (he >= 31) return sign | 0x7c00;
    }
    return sign | (uint16_t)(he << 10) | (uint16_t)(q & 0x3ff);
}

/* ---- bfloat16: float32's upper 16 bits ----------------------------------- */

static double bf16_to_double(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Round to nearest even, once (float32 rounded to odd first), NaN as 0x7fff:
 * the library's conversion (src/support/common.h). */
uint16_t double_to_bf16(double d) {
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (d != d) return 0x7fff;
    double back = (double)f;
    if (back != d) {
        if ((d > 0 && back > d) || (d < 0 && back < d)) u--;
        u |= 1u;
    }
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* d rounded to the 16-bit float dt (float16 or bfloat16). */
static double round16(mt_dtype dt, double d) {
    return dt == MT_BFLOAT16 ? bf16_to_double(double_to_bf16(d)) : half_to_double(double_to_half(d));
}

/* ---- NumPy-style printing ----------------------------------------------- */

/* One element as double (floats), int64 (ints and bools) or uint8. */
static const char *elem_ptr(const mt_tensor *t, const int64_t *idx) {
    const int64_t *st = mt_tensor_strides(t);
    int64_t off = 0;
    for (int i = 0; i < mt_tensor_ndim(t); i++) off += idx[i] * st[i];
    return (const char *)mt_tensor_data(t) + off * (int64_t)mt_dtype_size(mt_tensor_dtype(t));
}

static double load_float(mt_dtype dt, const char *p) {
    if (dt == MT_FLOAT16 || dt == MT_BFLOAT16) {
        uint16_t h;
        memcpy(&h, p, 2);
        return dt == MT_FLOAT16 ? half_to_double(h) : bf16_to_double(h);
    }
    if (dt == MT_FLOAT32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    double d;
    memcpy(&d, p, 8);
    return d;
}

static int64_t load_int(mt_dtype dt, const char *p) {
    switch (dt) {
    case MT_BOOL: return *(const uint8_t *)p != 0;
    case MT_INT8: return *(const int8_t *)p;
    case MT_UINT8: return *(const uint8_t *)p;
    case MT_INT32: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    default: {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

static bool is_float(mt_dtype dt) {
    return dt == MT_FLOAT16 || dt == MT_BFLOAT16 || dt == MT_FLOAT32 || dt == MT_FLOAT64;
}

/* Does the decimal text s read back as x in type dt? */
static bool reads_back(const char *s, double x, mt_dtype dt) {
    if (dt == MT_FLOAT32) return (double)strtof(s, NULL) == x;
    double v = strtod(s, NULL);
    if (dt == MT_FLOAT16 || dt == MT_BFLOAT16) return round16(dt, v) == x;
    return v == x;
}

/* Digits and exponent of a "%.*e" string: "1.2345e-05" gives "12345", -5. */
static void split_e(const char *buf, char *digits, int *exp10) {
    size_t n = 0;
    const char *p = buf;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9') digits[n++] = *p;
    while (n > 1 && digits[n - 1] == '0') n--;
    digits[n] = 0;
    *exp10 = *p == 'e' ? atoi(p + 1) : 0;
}

/* The shortest digits d0 d1 ... with x = d0.d1... * 10^exp10 that read back
 * as x in type dt. x is finite and >= 0. digits holds >= 32 bytes. */
static void shortest(double x, mt_dtype dt, char *digits, int *exp10) {
    if (x == 0) {
        strcpy(digits, "0");
        *exp10 = 0;
        return;
    }
    char buf[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (reads_back(buf, x, dt)) break;
    }
    split_e(buf, digits, exp10);
}

/* Positional text of |x| split at the point: "12", "5" for 12.5. At most
 * maxfrac fractional digits (-1: no limit); trailing zeros trimmed. */
static void positional(double x, mt_dtype dt, int maxfrac, char *ip, char *fp) {
    char d[32];
    int e;
    shortest(fabs(x), dt, d, &e);
    int n = (int)strlen(d);
    int nfrac = n - 1 - e;
    if (maxfrac >= 0 && nfrac > maxfrac) {
        char buf[400];
        snprintf(buf, sizeof buf, "%.*f", maxfrac, fabs(x));
        char *dot = strchr(buf, '.');
        *dot = 0;
        strcpy(ip, buf);
        strcpy(fp, dot + 1);
    } else if (e >= 0) {
        int k = 0;
        for (int i = 0; i <= e; i++) ip[k++] = i < n ? d[i] : '0';
        ip[k] = 0;
        strcpy(fp, e + 1 < n ? d + e + 1 : "");
    } else {
        strcpy(ip, "0");
        int k = 0;
        for (int i = 0; i < -e - 1; i++) fp[k++] = '0';
        strcpy(fp + k, d);
    }
    size_t fl = strlen(fp);
    while (fl > 0 && fp[fl - 1] == '0') fp[--fl] = 0;
}

/* Scientific text of |x|: mantissa digits (first, rest) and exponent, with at
 * most maxfrac digits after the first (-1: no limit). */
static void scientific(double x, mt_dtype dt, int maxfrac, char *digits, int *exp10) {
    shortest(fabs(x), dt, digits, exp10);
    if (maxfrac >= 0 && (int)strlen(digits) - 1 > maxfrac) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.*e", maxfrac, fabs(x));
        split_e(buf, digits, exp10);
    }
}

/* How every element of one array is formatted (numpy's FloatingFormat,
 * IntegerFormat, BoolFormat). */
typedef struct fmt {
    mt_dtype dtype;  /* element type */
    bool exp_format; /* floats: scientific notation */
    int pad_left;    /* floats: width of the integer part; ints: whole width */
    int pad_right;   /* floats: width of the fractional part (positional) */
    int precision;   /* floats, scientific: mantissa fractional digits */
    int exp_size;    /* floats, scientific: exponent digits */
} fmt;

/* The elements shown (the edges of each axis when summarizing), in order. */
typedef struct shown {
    const mt_tensor *t; /* the array */
    bool summarize;     /* more than 1000 elements */
    int64_t idx[MT_MAX_RANK];
    const char **elems; /* pointers to the shown elements */
    size_t n, cap;      /* count, allocated */
} shown;

enum { EDGE = 3, THRESHOLD = 1000, LINEWIDTH = 75 };

static void collect(shown *s, int axis) {
    const mt_tensor *t = s->t;
    if (axis == mt_tensor_ndim(t)) {
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 64;
            s->elems = realloc(s->elems, s->cap * sizeof *s->elems);
            if (!s->elems) exit(EXIT_RUNTIME);
        }
        s->elems[s->n++] = elem_ptr(t, s->idx);
        return;
    }
    int64_t len = mt_tensor_shape(t)[axis];
    bool summ = s->summarize && 2 * EDGE < len;
    for (int64_t i = 0; i < len; i++) {
        if (summ && i == EDGE) i = len - EDGE;
        s->idx[axis] = i;
        collect(s, axis + 1);
    }
}

static void float_fill(fmt *f, shown *s) {
    mt_dtype dt = f->dtype;
    double maxv = 0, minv = INFINITY;
    bool any_finite = false, any_nonfinite = false, neg_inf = false;
    for (size_t i = 0; i < s->n; i++) {
        double v = load_float(dt, s->elems[i]);
        if (!isfinite(v)) {
            any_nonfinite = true;
            if (isinf(v) && v < 0) neg_inf = true;
            continue;
        }
        any_finite = true;
        double a = fabs(v);
        if (a == 0) continue;
        if (a > maxv) maxv = a;
        if (a < minv) minv = a;
    }
    if (maxv > 0) {
        /* NumPy compares in the array's own type (NEP 50: the Python floats
         * are weak), and since 2.3 caps positional notation at 10^precision
         * of the type (3 digits for float16, 6 for float32, 8 at most). */
        bool small, spread, big;
        if (dt == MT_FLOAT64) {
            big = maxv >= 1e8;
            small = minv < 1e-4;
            spread = maxv / minv > 1000.;
        } else {
            float mx = (float)maxv, mn = (float)minv, ratio = mx / mn;
            bool h16 = dt == MT_FLOAT16 || dt == MT_BFLOAT16;
            big = mx >= (h16 ? 1e3f : 1e6f);
            if (h16) {
                small = minv < round16(dt, 1e-4);
                spread = round16(dt, ratio) > 1000.;
            } else {
                small = mn < 1e-4f;
                spread = ratio > 1000.f;
            }
        }
        f->exp_format = big || small || spread;
    }
    f->pad_left = f->pad_right = 0;
    f->precision = 0;
    f->exp_size = -1;
    if (any_finite) {
        for (size_t i = 0; i < s->n; i++) {
            double v = load_float(dt, s->elems[i]);
            if (!isfinite(v)) continue;
            int neg = signbit(v) ? 1 : 0;
            if (f->exp_format) {
                char d[32];
                int e;
                scientific(v, dt, 8, d, &e);
                int fl = (int)strlen(d) - 1;
                char es[16];
                int el = snprintf(es, sizeof es, "%d", e < 0 ? -e : e);
                if (el < 2) el = 2;
                if (fl > f->precision) f->precision = fl;
                if (el > f->exp_size) f->exp_size = el;
                if (1 + neg > f->pad_left) f->pad_left = 1 + neg;
            } else {
                char ip[400], fp[400];
                positional(v, dt, 8, ip, fp);
                int il = (int)strlen(ip) + neg, fl = (int)strlen(fp);
                if (il > f->pad_left) f->pad_left = il;
                if (fl > f->pad_right) f->pad_right = fl;
            }
        }
        if (f->exp_format) f->pad_right = f->exp_size + 2 + f->precision;
    }
    if (any_nonfinite) {
        int offset = f->pad_right + 1;
        if (3 - offset > f->pad_left) f->pad_left = 3 - offset;
        if (3 + neg_inf - offset > f->pad_left) f->pad_left = 3 + neg_inf - offset;
    }
}

static void fmt_fill(fmt *f, shown *s) {
    memset(f, 0, sizeof *f);
    f->dtype = mt_tensor_dtype(s->t);
    if (is_float(f->dtype)) {
        float_fill(f, s);
    } else if (f->dtype != MT_BOOL) {
        for (size_t i = 0; i < s->n; i++) {
            char b[32];
            int l = snprintf(b, sizeof b, "%lld", (long long)load_int(f->dtype, s->elems[i]));
            if (l > f->pad_left) f->pad_left = l;
        }
    }
}

static void format_elem(const fmt *f, const char *p, sbuf *out) {
    mt_dtype dt = f->dtype;
    char b[512];
    if (dt == MT_BOOL) {
        sb_puts(out, *p ? " True" : "False");
        return;
    }
    if (!is_float(dt)) {
        snprintf(b, sizeof b, "%*lld", f->pad_left, (long long)load_int(dt, p));
        sb_puts(out, b);
        return;
    }
    double v = load_float(dt, p);
    if (!isfinite(v)) {
        const char *r = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
        sb_spaces(out, f->pad_left + f->pad_right + 1 - (int)strlen(r));
        sb_puts(out, r);
        return;
    }
    const char *sign = signbit(v) ? "-" : "";
    if (f->exp_format) {
        char d[32];
        int e;
        scientific(v, dt, 8, d, &e);
        /* A value with fewer digits than the widest is continued with the
         * digits of its exact binary value (Dragon4 with min_digits), not
         * with zeros. */
        if ((int)strlen(d) - 1 < f->precision) {
            char buf[64];
            snprintf(buf, sizeof buf, "%.*e", f->precision, fabs(v));
            split_e(buf, d, &e);
        }
        sb_spaces(out, f->pad_left - 1 - (int)strlen(sign));
        sb_puts(out, sign);
        sb_putn(out, d, 1);
        sb_puts(out, ".");
        sb_puts(out, d + 1);
        for (int i = (int)strlen(d) - 1; i < f->precision; i++) sb_puts(out, "0");
        snprintf(b, sizeof b, "e%c%0*d", e < 0 ? '-' : '+', f->exp_size, e < 0 ? -e : e);
        sb_puts(out, b);
    } else {
        char ip[400], fp[400];
        positional(v, dt, 8, ip, fp);
        sb_spaces(out, f->pad_left - (int)strlen(ip) - (int)strlen(sign));
        sb_puts(out, sign);
        sb_puts(out, ip);
        sb_puts(out, ".");
        sb_puts(out, fp);
        sb_spaces(out, f->pad_right - (int)strlen(fp));
    }
}

/* numpy's _extendLine: append word to line, wrapping first if it would not fit. */
static void extend_line(sbuf *s, sbuf *line, const char *word, int width, int hang) {
    bool wrap = (int)(line->len + strlen(word)) > width && (int)line->len > hang;
    if (wrap) {
        size_t n = line->len;
        while (n > 0 && line->p[n - 1] == ' ') n--;
        sb_putn(s, line->p, n);
        sb_puts(s, "\n");
        line->len = 0;
        if (line->p) line->p[0] = 0;
        sb_spaces(line, hang);
    }
    sb_puts(line, word);
}

typedef struct printer {
    const mt_tensor *t; /* the array */
    fmt f;              /* element format */
    bool summarize;     /* more than THRESHOLD elements */
    int64_t idx[MT_MAX_RANK];
} printer;

/* numpy's _formatArray recurser: the text of the sub-array at idx[0..axis),
 * lines after the first indented by `hang` spaces, at most `width` wide. */
static void recurse(printer *pr, int axis, int hang, int width, sbuf *out) {
    const mt_tensor *t = pr->t;
    int nd = mt_tensor_ndim(t);
    int64_t len = mt_tensor_shape(t)[axis];
    bool summ = pr->summarize && 2 * EDGE < len;
    int64_t lead = summ ? EDGE : 0, trail = summ ? EDGE : len;
    sbuf s = {0};
    if (nd - axis == 1) {
        int ew = width - 1; /* room for ']' */
        sbuf line = {0}, word = {0};
        sb_spaces(&line, hang);
        for (int64_t k = 0; k < lead + trail; k++) {
            bool last = k == lead + trail - 1;
            pr->idx[axis] = k < lead ? k : len - (lead + trail - k);
            word.len = 0;
            format_elem(&pr->f, elem_ptr(t, pr->idx), &word);
            extend_line(&s, &line, sb_str(&word), ew, hang);
            if (!last) sb_puts(&line, " ");
            if (summ && k == lead - 1) {
                extend_line(&s, &line, "...", ew, hang);
                sb_puts(&line, " ");
            }
        }
        sb_puts(&s, sb_str(&line));
        sb_free(&line);
        sb_free(&word);
    } else {
        int nl = nd - axis - 1; /* newlines between rows */
        for (int64_t k = 0; k < lead + trail; k++) {
            bool last = k == lead + trail - 1;
            pr->idx[axis] = k < lead ? k : len - (lead + trail - k);
            sb_spaces(&s, hang);
            recurse(pr, axis + 1, hang + 1, width - 1, &s);
            if (!last)
                for (int i = 0; i < nl; i++) sb_puts(&s, "\n");
            if (summ && k == lead - 1) {
                sb_spaces(&s, hang);
                sb_puts(&s, "...");
                for (int i = 0; i < nl; i++) sb_puts(&s, "\n");
            }
        }
    }
    sb_puts(out, "[");
    sb_puts(out, sb_str(&s) + (s.len >= (size_t)hang ? (size_t)hang : s.len));
    sb_puts(out, "]");
    sb_free(&s);
}

/* NumPy's (2.x) str() of a scalar: positional (one zero kept after the
 * point) from 1e-4 (compared exactly) up to 1e3 for float16, 1e6 for float32,
 * 1e16 for float64; else scientific without trailing zeros. */
static void format_scalar(const mt_tensor *t, sbuf *out) {
    mt_dtype dt = mt_tensor_dtype(t);
    const char *p = mt_tensor_data(t);
    char b[512];
    if (dt == MT_BOOL) {
        sb_puts(out, *p ? "True" : "False");
        return;
    }
    if (!is_float(dt)) {
        snprintf(b, sizeof b, "%lld", (long long)load_int(dt, p));
        sb_puts(out, b);
        return;
    }
    double v = load_float(dt, p), a = fabs(v);
    if (isnan(v)) {
        sb_puts(out, "nan");
    } else if (isinf(v)) {
        sb_puts(out, v < 0 ? "-inf" : "inf");
    } else if (a == 0 || (a < (dt == MT_FLOAT16 || dt == MT_BFLOAT16 ? 1e3 : dt == MT_FLOAT32 ? 1e6 : 1e16) &&
                          a >= 1e-4)) {
        char ip[400], fp[400];
        positional(v, dt, -1, ip, fp);
        sb_puts(out, signbit(v) ? "-" : "");
        sb_puts(out, ip);
        sb_puts(out, ".");
        sb_puts(out, *fp ? fp : "0");
    } else {
        char d[32];
        int e;
        scientific(v, dt, -1, d, &e);
        snprintf(b, sizeof b, "%s%c%s%se%c%02d", signbit(v) ? "-" : "", d[0], d[1] ? "." : "",
                 d + 1, e < 0 ? '-' : '+', e < 0 ? -e : e);
        sb_puts(out, b);
    }
}

/* The text print(np.array(...)) would give for t, without the newline. */
void format_array(const mt_tensor *t, sbuf *out) {
    if (mt_tensor_ndim(t) == 0) {
        format_scalar(t, out);
        return;
    }
    int64_t numel = mt_tensor_numel(t);
    if (numel == 0) {
        sb_puts(out, "[]");
        return;
    }
    shown s = {.t = t, .summarize = numel > THRESHOLD};
    collect(&s, 0);
    printer pr = {.t = t, .summarize = s.summarize};
    fmt_fill(&pr.f, &s);
    free(s.elems);
    recurse(&pr, 0, 1, LINEWIDTH, out);
}

