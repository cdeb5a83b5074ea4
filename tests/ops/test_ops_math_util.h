/*
 * test_ops_math_util.h -- what the math op tests share: a deterministic
 * random source, tensors from double (or int64) values in any dtype, float16
 * bit conversions, reading elements back, NumPy broadcast indexing and the
 * comparison of results with a reference.
 *
 * float16 tensors hold IEEE half bits (uint16); f2h rounds a double to the
 * nearest half (ties to even, overflow to inf), which is also what the
 * compiler's float16 stores do, so a reference rounded with f2h is exact.
 *
 * check_vals compares element i of a result with want[i]: a NaN wants a NaN,
 * an infinity the same infinity; tol == 0 wants the very value, including
 * the sign of a zero; tol > 0 allows |got - want| <= tol * max(1, |want|)
 * (relative, with an absolute floor of tol near zero).
 */
#ifndef MT_TEST_OPS_MATH_UTIL_H
#define MT_TEST_OPS_MATH_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

typedef struct shape {
    int ndim;
    int64_t dims[4];
} shape;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

__attribute__((unused)) static bool is_float_dt(mt_dtype dt) {
    return dt == MT_FLOAT16 || dt == MT_BFLOAT16 || dt == MT_FLOAT32 || dt == MT_FLOAT64;
}

/* Uniform in [-1, 1). */
__attribute__((unused)) static double rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

/* Uniform integer in [lo, hi] (any range, in unsigned arithmetic). */
__attribute__((unused)) static int64_t rnd_int(int64_t lo, int64_t hi) {
    rnd();
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1; /* 0: the whole int64 range */
    uint64_t r = rng_state * 0x2545F4914F6CDD1Dull;
    return (int64_t)((uint64_t)lo + (span ? r % span : r));
}

static int64_t numel(const shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) n *= s->dims[i];
    return n;
}

/* "(2, 3)", "(7,)", "()" as kernel source. */
__attribute__((unused)) static void shape_src(char *buf, size_t cap, const shape *s) {
    size_t n = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < s->ndim; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)s->dims[i]);
    snprintf(buf + n, cap - n, s->ndim == 1 ? ",)" : ")");
}

/* ---- float16 ------------------------------------------------------------- */

static uint16_t f2h(double d) {
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    if (isnan(d)) return 0x7e00;
    double a = fabs(d);
    if (a >= 65520.0) return sign | 0x7c00; /* 65520 is the tie above 65504: to even, inf */
    if (a < 0x1p-14) return sign | (uint16_t)nearbyint(a * 0x1p24); /* subnormal; 1024 = min normal */
    int e;
    frexp(a, &e);
    int E = e - 1;                             /* a = 1.f * 2^E */
    double q = nearbyint(ldexp(a, 10 - E));    /* [1024, 2048] */
    if (q == 2048) {
        q = 1024;
        E++;
    }
    if (E > 15) return sign | 0x7c00;
    return sign | (uint16_t)((E + 15) << 10) | (uint16_t)((int)q - 1024);
}

static double h2d(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h >> 15 ? -v : v;
}

/* ---- bfloat16 (float32's upper 16 bits) ----------------------------------- */

static double b2d(uint16_t b) { return test_bf16_value(b); }
static uint16_t f2b(double d) { return test_bf16_round(d); }

/* d rounded to the nearest value of float dtype dt. */
__attribute__((unused)) static double round_to(mt_dtype dt, double d) {
    if (dt == MT_FLOAT32) return (float)d;
    if (dt == MT_FLOAT16) return h2d(f2h(d));
    if (dt == MT_BFLOAT16) return b2d(f2b(d));
    return d;
}

/* ---- tensors ------------------------------------------------------------- */

static void put(mt_tensor *t, int64_t i, double v) {
    void *p = mt_tensor_data(t);
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT32: ((float *)p)[i] = (float)v; break;
    case MT_FLOAT64: ((double *)p)[i] = v; break;
    case MT_FLOAT16: ((uint16_t *)p)[i] = f2h(v); break;
    case MT_BFLOAT16: ((uint16_t *)p)[i] = f2b(v); break;
    case MT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case MT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case MT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case MT_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case MT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: fail_msg("dtype not handled in the test");
    }
}

__attribute__((unused)) static double tget(const mt_tensor *t, int64_t i) {
    const void *p = mt_tensor_data(t);
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT32: return ((const float *)p)[i];
    case MT_FLOAT64: return ((const double *)p)[i];
    case MT_FLOAT16: return h2d(((const uint16_t *)p)[i]);
    case MT_BFLOAT16: return b2d(((const uint16_t *)p)[i]);
    case MT_INT8: return ((const int8_t *)p)[i];
    case MT_UINT8: return ((const uint8_t *)p)[i];
    case MT_INT32: return ((const int32_t *)p)[i];
    case MT_INT64: return (double)((const int64_t *)p)[i];
    case MT_BOOL: return ((const uint8_t *)p)[i];
    default: fail_msg("dtype not handled in the test");
    }
    return 0;
}

/* Integer element i exactly (int64 beyond 2^53 included). */
__attribute__((unused)) static int64_t iget(const mt_tensor *t, int64_t i) {
    const void *p = mt_tensor_data(t);
    switch (mt_tensor_dtype(t)) {
    case MT_INT8: return ((const int8_t *)p)[i];
    case MT_UINT8: case MT_BOOL: return ((const uint8_t *)p)[i];
    case MT_INT32: return ((const int32_t *)p)[i];
    case MT_INT64: return ((const int64_t *)p)[i];
    default: fail_msg("iget of a %s tensor", mt_dtype_str(mt_tensor_dtype(t)));
    }
    return 0;
}

/* A tensor of dtype dt holding vals (converted as put() does: ints by C
 * conversion, so the caller passes representable values). */
__attribute__((unused)) static mt_tensor *tensor_of(mt_dtype dt, const shape *s, const double *vals) {
    mt_tensor *t = mt_tensor_create(dt, s->ndim, s->dims);
    assert_non_null(t);
    for (int64_t i = 0; i < numel(s); i++) put(t, i, vals[i]);
    return t;
}

__attribute__((unused)) static mt_tensor *tensor_of_ints(mt_dtype dt, const shape *s, const int64_t *vals) {
    mt_tensor *t = mt_tensor_create(dt, s->ndim, s->dims);
    assert_non_null(t);
    void *p = mt_tensor_data(t);
    for (int64_t i = 0; i < numel(s); i++) {
        switch (dt) {
        case MT_INT8: ((int8_t *)p)[i] = (int8_t)vals[i]; break;
        case MT_UINT8: ((uint8_t *)p)[i] = (uint8_t)vals[i]; break;
        case MT_BOOL: ((uint8_t *)p)[i] = vals[i] != 0; break;
        case MT_INT32: ((int32_t *)p)[i] = (int32_t)vals[i]; break;
        case MT_INT64: ((int64_t *)p)[i] = vals[i]; break;
        default: put(t, i, (double)vals[i]); break;
        }
    }
    return t;
}

/* Element i (row-major) of the broadcast shape `out`, read from x, whose
 * shape aligns with out at the last dim (NumPy). */
__attribute__((unused)) static int64_t bidx(const mt_tensor *x, const shape *out, int64_t i) {
    int xn = mt_tensor_ndim(x);
    const int64_t *xs = mt_tensor_shape(x);
    int64_t idx[4], rem = i;
    for (int d = out->ndim - 1; d >= 0; d--) {
        idx[d] = rem % out->dims[d];
        rem /= out->dims[d];
    }
    int64_t off = 0;
    for (int d = 0; d < xn; d++) off = off * xs[d] + (xs[d] == 1 ? 0 : idx[out->ndim - xn + d]);
    return off;
}

__attribute__((unused)) static void check_vals(const mt_tensor *got, const double *want, int64_t n,
                                               double tol, const char *what) {
    for (int64_t i = 0; i < n; i++) {
        double g = tget(got, i), w = want[i];
        bool ok;
        if (isnan(w)) ok = isnan(g);
        else if (isinf(w) || tol == 0) ok = g == w && signbit(g) == signbit(w);
        else ok = fabs(g - w) <= tol * fmax(1.0, fabs(w));
        if (!ok)
            fail_msg("%s: element %lld: got %.17g, want %.17g (tolerance %g)", what, (long long)i, g, w, tol);
    }
}

__attribute__((unused)) static void check_ints(const mt_tensor *got, const int64_t *want, int64_t n,
                                               const char *what) {
    for (int64_t i = 0; i < n; i++)
        if (iget(got, i) != want[i])
            fail_msg("%s: element %lld: got %lld, want %lld", what, (long long)i,
                     (long long)iget(got, i), (long long)want[i]);
}

/* Runs k on args; asserts success; returns the (single) result. */
__attribute__((unused)) static mt_tensor *run_kernel(mt_kernel *k, mt_tensor **args, int n) {
    mt_tensor *out = NULL;
    mt_diag d;
    mt_status st = test_kernel_run(k, args, n, &out, 1, &d);
    if (st != MT_OK) fail_msg("run failed: %s", d.text);
    return out;
}

/* Compiles src, runs it on args, releases the kernel; returns the result. */
__attribute__((unused)) static mt_tensor *run_src(const char *src, mt_tensor **args, int n) {
    mt_kernel *k = compile_ok(src);
    mt_tensor *out = run_kernel(k, args, n);
    mt_kernel_release(k);
    return out;
}

__attribute__((unused)) static void release_all(mt_tensor **ts, int n) {
    for (int i = 0; i < n; i++) mt_tensor_release(ts[i]);
}

/* Asserts a compile error with this status and message (place not checked). */
__attribute__((unused)) static void expect_error(const char *src, mt_status st, const char *msg) {
    mt_diag d = compile_err(src);
    if (d.status != st || strcmp(d.message, msg) != 0)
        fail_msg("diagnostic differs.\n got  %s: %s\n want %s: %s\nsource:\n%s", mt_status_str(d.status),
                 d.message, mt_status_str(st), msg, src);
}

#endif
