/*
 * test_ops_nn.c -- reductions, matmul, softmax, log_softmax and layer_norm
 * through the public API, against plain C references computed in double
 * (integers: in wrapping 64-bit arithmetic, truncated to the dtype).
 *
 * Every float check is |got - want| <= rel * |want| + acc * scale, where
 * scale is the sum of the magnitudes that went into the value (sum |x| for a
 * sum, sum |a_ik * b_kj| for a matmul entry): with n terms, naive
 * accumulation in a type of unit roundoff u errs by at most about n * u *
 * scale (Higham), so the bounds below are rigorous, not tuned:
 *   sum, mean, matmul  float32: acc = (n + 1) * 6e-8, float64: (n + 1) * 1.2e-16,
 *                      float16 (float32 accumulator, one rounding to half at
 *                      the end): acc as float32 plus rel = 2^-11
 *   prod               rel = (n + 1) * 1.2e-7 (float32), (n + 1) * 2.3e-16 (float64)
 *   max min argmax argmin, every integer op: exact
 *   softmax            rel = (n + 8) * 1.2e-7 (float32; n terms in the sum, a few
 *                      roundings in exp and the division), float64 (n + 8) *
 *                      2.3e-16, float16 rel 2^-10 + abs 1e-4; plus an
 *                      absolute 1e-30 (float32) for results that underflow;
 *                      rows sum to 1 within (n + 8) * 2.4e-7 (float32)
 *   log_softmax        absolute (n + 8) * 1.2e-7 * max(1, |want|) (float32)
 *   layer_norm         float32: rel 1e-5 + abs 1e-5 (values O(1) after
 *                      normalization; a few roundings in mean, variance,
 *                      rsqrt and the affine step); float64: 1e-12
 *   bfloat16           as float16 with its unit roundoff 2^-8 for 2^-11
 *                      (sum, mean, matmul: rel 2^-8; softmax rel 2^-7 + abs
 *                      1e-3; layer_norm 8e-3): a float32 accumulator, one
 *                      rounding to 8 significant bits at the end
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

/* ---- data ---------------------------------------------------------------- */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double rnd(void) { /* uniform in [-2, 2) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / (double)(1ull << 53) * 4.0 - 2.0;
}

/* IEEE binary16 <-> float, round to nearest even. */
static uint16_t f2h(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
    if (absx >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to inf */
    if (absx < 0x38800000u) {                                    /* subnormal half */
        float af;
        memcpy(&af, &absx, 4);
        float scaled = af * 16777216.0f; /* 2^24: half subnormal units */
        uint32_t m = (uint32_t)scaled;
        float rem = scaled - (float)m;
        if (rem > 0.5f || (rem == 0.5f && (m & 1))) m++;
        return (uint16_t)(sign | m);
    }
    uint32_t e = (absx >> 23) - 127 + 15, mant = absx & 0x7fffffu;
    uint32_t h = (e << 10) | (mant >> 13), rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

static float h2f(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    float f;
    if (e == 0) {
        f = (float)m / 16777216.0f;
        return sign ? -f : f;
    }
    uint32_t x = e == 31 ? (sign | 0x7f800000u | (m << 13)) : (sign | ((e - 15 + 127) << 23) | (m << 13));
    memcpy(&f, &x, 4);
    return f;
}

/* bfloat16 <-> float: the upper 16 bits, round to nearest even (finite inputs). */
static uint16_t f2b(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static float b2f(uint16_t b) {
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* The unit roundoff of a 16-bit float dtype (0 for the others). */
static double u16(mt_dtype dt) { return dt == MT_FLOAT16 ? 1.0 / 2048 : dt == MT_BFLOAT16 ? 1.0 / 256 : 0; }

static double get(const mt_tensor *t, int64_t i) {
    const void *p = mt_tensor_data(t);
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT16: return h2f(((const uint16_t *)p)[i]);
    case MT_BFLOAT16: return b2f(((const uint16_t *)p)[i]);
    case MT_FLOAT32: return ((const float *)p)[i];
    case MT_FLOAT64: return ((const double *)p)[i];
    case MT_INT8: return ((const int8_t *)p)[i];
    case MT_UINT8: return ((const uint8_t *)p)[i];
    case MT_INT32: return ((const int32_t *)p)[i];
    case MT_INT64: return (double)((const int64_t *)p)[i];
    default: fail_msg("dtype not handled in the test");
    }
    return 0;
}

static int64_t geti(const mt_tensor *t, int64_t i) {
    const void *p = mt_tensor_data(t);
    switch (mt_tensor_dtype(t)) {
    case MT_INT8: return ((const int8_t *)p)[i];
    case MT_UINT8: return ((const uint8_t *)p)[i];
    case MT_INT32: return ((const int32_t *)p)[i];
    case MT_INT64: return ((const int64_t *)p)[i];
    default: fail_msg("not an integer tensor");
    }
    return 0;
}

static void set(mt_tensor *t, int64_t i, double v) {
    void *p = mt_tensor_data(t);
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT16: ((uint16_t *)p)[i] = f2h((float)v); break;
    case MT_BFLOAT16: ((uint16_t *)p)[i] = f2b((float)v); break;
    case MT_FLOAT32: ((float *)p)[i] = (float)v; break;
    case MT_FLOAT64: ((double *)p)[i] = v; break;
    case MT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case MT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case MT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case MT_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: fail_msg("dtype not handled in the test");
    }
}

static bool is_float(mt_dtype dt) {
    return dt == MT_FLOAT16 || dt == MT_BFLOAT16 || dt == MT_FLOAT32 || dt == MT_FLOAT64;
}

/* A tensor of random values: floats in [lo, hi), integers in [-1000, 1000). */
static mt_tensor *rand_tensor(mt_dtype dt, int ndim, const int64_t *dims, double lo, double hi) {
    mt_tensor *t = mt_tensor_create(dt, ndim, dims);
    assert_non_null(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++) {
        double u = (rnd() + 2) / 4;
        set(t, i, is_float(dt) ? lo + u * (hi - lo) : floor(u * 2000) - 1000);
    }
    return t;
}

static mt_tensor *filled(mt_dtype dt, int ndim, const int64_t *dims, double v) {
    mt_tensor *t = mt_tensor_create(dt, ndim, dims);
    assert_non_null(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++) set(t, i, v);
    return t;
}

static const char *shape_src(char *buf, int ndim, const int64_t *dims) {
    size_t n = (size_t)sprintf(buf, "(");
    for (int i = 0; i < ndim; i++) n += (size_t)sprintf(buf + n, "%s%lld", i ? ", " : "", (long long)dims[i]);
    sprintf(buf + n, ndim == 1 ? ",)" : ")");
    return buf;
}

static mt_tensor *run1(mt_kernel *k, mt_tensor *const *args, int nargs) {
    mt_tensor *out = NULL;
    mt_diag d;
    if (test_kernel_run(k, args, nargs, &out, 1, &d) != MT_OK) fail_msg("run failed: %s", d.text);
    return out;
}

static void assert_shape(const mt_tensor *t, int ndim, const int64_t *dims) {
    assert_int_equal(mt_tensor_ndim(t), ndim);
    for (int d = 0; d < ndim; d++)
        if (mt_tensor_shape(t)[d] != dims[d])
            fail_msg("dim %d: got %lld, want %lld", d, (long long)mt_tensor_shape(t)[d], (long long)dims[d]);
}

/* |got - want| <= rel * |want| + acc * scale (scale NULL: 1); NaN matches
 * NaN, infinities match exactly. */
static void check(const mt_tensor *got, const double *want, const double *scale, int64_t n, double rel,
                  double acc, const char *what) {
    for (int64_t i = 0; i < n; i++) {
        double g = get(got, i), w = want[i];
        if (isnan(w) && isnan(g)) continue;
        if (isinf(w) && g == w) continue;
        double lim = rel * fabs(w) + acc * (scale ? scale[i] : 1.0);
        if (!(fabs(g - w) <= lim))
            fail_msg("%s: element %lld: got %.9g, want %.9g (limit %.3g)", what, (long long)i, g, w, lim);
    }
}

/* ---- reductions -------------------------------------------------------------- */

typedef enum rop { SUM, MEAN, MAX, MIN, PROD, ARGMAX, ARGMIN } rop;
static const char *const rop_name[] = {"sum", "mean", "max", "min", "prod", "argmax", "argmin"};

static mt_dtype result_dtype(rop op, mt_dtype dt) {
    if (op == ARGMAX || op == ARGMIN) return MT_INT64;
    if (op == MEAN && !is_float(dt)) return MT_FLOAT32;
    return dt;
}

/* The reference: want (and scale = the same reduction of |x| for sums) per
 * output element, in output order (keepdims does not change it). Floats in
 * double with NaN propagation as NumPy; integers wrap in the dtype. */
static void ref_reduce(rop op, const mt_tensor *x, const bool *red, double *want, double *scale,
                       int64_t nout, int64_t *nred_out) {
    int nd = mt_tensor_ndim(x);
    const int64_t *dims = mt_tensor_shape(x);
    mt_dtype dt = mt_tensor_dtype(x);
    int64_t nred = 1;
    for (int d = 0; d < nd; d++)
        if (red[d]) nred *= dims[d];
    *nred_out = nred;
    uint64_t *iacc = calloc((size_t)(nout ? nout : 1), sizeof(uint64_t));
    int64_t *seen = calloc((size_t)(nout ? nout : 1), sizeof(int64_t));
    for (int64_t o = 0; o < nout; o++) {
        scale[o] = 0;
        switch (op) {
        case SUM: case MEAN: want[o] = 0; iacc[o] = 0; break;
        case PROD: want[o] = 1; iacc[o] = 1; break;
        case MAX: want[o] = -INFINITY; break;
        case MIN: want[o] = INFINITY; break;
        default: want[o] = 0; break;
        }
    }
    double *best = calloc((size_t)(nout ? nout : 1), sizeof(double));
    int64_t n = mt_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        int64_t rem = i, o = 0, ostride = 1, r = 0, rstride = 1;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t id = rem % dims[d];
            rem /= dims[d];
            if (red[d]) {
                r += id * rstride;
                rstride *= dims[d];
            } else {
                o += id * ostride;
                ostride *= dims[d];
            }
        }
        double v = get(x, i);
        int64_t iv = is_float(dt) ? 0 : geti(x, i);
        bool first = seen[o]++ == 0;
        switch (op) {
        case SUM: case MEAN:
            want[o] += v;
            iacc[o] += (uint64_t)iv;
            scale[o] += fabs(v);
            break;
        case PROD:
            want[o] *= v;
            iacc[o] *= (uint64_t)iv;
            break;
        case MAX:
            if (v > want[o] || isnan(v)) want[o] = isnan(want[o]) ? want[o] : v;
            break;
        case MIN:
            if (v < want[o] || isnan(v)) want[o] = isnan(want[o]) ? want[o] : v;
            break;
        case ARGMAX: case ARGMIN: {
            /* elements of one output come in increasing r: first wins ties */
            bool better = first || (op == ARGMAX ? v > best[o] : v < best[o]) || (isnan(v) && !isnan(best[o]));
            if (better) {
                best[o] = v;
                want[o] = (double)r;
            }
            break;
        }
        }
    }
    for (int64_t o = 0; o < nout; o++) {
        if (!is_float(dt) && (op == SUM || op == PROD || op == MEAN)) {
            int64_t w = (int64_t)iacc[o];
            if (op == MEAN) {
                want[o] = nred ? want[o] / (double)nred : NAN;
                continue;
            }
            want[o] = dt == MT_INT32 ? (double)(int32_t)(uint32_t)w
                    : dt == MT_INT8 ? (double)(int8_t)(uint8_t)w
                    : dt == MT_UINT8 ? (double)(uint8_t)w : (double)w;
        } else if (op == MEAN) {
            want[o] = nred ? want[o] / (double)nred : NAN;
            scale[o] = nred ? scale[o] / (double)nred : 0;
        }
        if (!is_float(dt) && (op == MAX || op == MIN) && seen[o] == 0) {
            want[o] = op == MAX ? (dt == MT_INT32 ? INT32_MIN : 0) : (dt == MT_INT32 ? INT32_MAX : 0);
        }
    }
    free(iacc);
    free(seen);
    free(best);
}

/* Tolerances by op and dtype (see the top of the file). */
static void reduce_tol(rop op, mt_dtype dt, int64_t nred, double *rel, double *acc) {
    double u = dt == MT_FLOAT64 ? 1.2e-16 : 6e-8;
    *rel = 0;
    *acc = 0;
    if (!is_float(dt) || op == MAX || op == MIN || op == ARGMAX || op == ARGMIN) {
        if (op == MEAN) *rel = 1.2e-7; /* exact double sum, one rounding to float32 */
        return;
    }
    if (op == PROD) {
        *rel = (double)(nred + 1) * 2 * u + u16(dt);
        return;
    }
    *acc = (double)(nred + 1) * u;
    *rel = u16(dt) ? u16(dt) : 2 * u;
}

/* One case: op(x, axis=..., keepdims=...) on a random tensor. axes: NULL for
 * None; axis_src as written in the source. */
static void reduce_case(rop op, mt_dtype dt, int nd, const int64_t *dims, const char *axis_src,
                        const int *axes, int naxes, bool keep) {
    char sh[128], src[512], args[128] = "";
    if (axis_src) snprintf(args, sizeof args, ", axis=%s", axis_src);
    if (keep) strcat(args, ", keepdims=True");
    snprintf(src, sizeof src, "def f(x: Tensor(%s, \"%s\")):\n    y = %s(x%s)\n    return y\n",
             shape_src(sh, nd, dims), mt_dtype_str(dt), rop_name[op], args);
    bool red[8];
    for (int d = 0; d < nd; d++) red[d] = axes == NULL;
    for (int i = 0; axes && i < naxes; i++) red[axes[i] < 0 ? axes[i] + nd : axes[i]] = true;
    int64_t odims[8];
    int ond = 0;
    for (int d = 0; d < nd; d++)
        if (!red[d])
            odims[ond++] = dims[d];
        else if (keep)
            odims[ond++] = 1;

    mt_kernel *k = compile_ok(src);
    assert_int_equal(mt_kernel_result_dtype(k, 0), result_dtype(op, dt));
    /* products of many terms stay finite with values near 1 */
    mt_tensor *x = op == PROD ? rand_tensor(dt, nd, dims, 0.9, 1.1) : rand_tensor(dt, nd, dims, -2, 2);
    if (op == PROD && !is_float(dt))
        for (int64_t i = 0; i < mt_tensor_numel(x); i++) set(x, i, (double)(geti(x, i) % 5));
    mt_tensor *out = run1(k, &x, 1);
    assert_shape(out, ond, odims);
    int64_t nout = mt_tensor_numel(out), nred;
    double *want = malloc(sizeof(double) * (size_t)(nout + 1)), *scale = malloc(sizeof(double) * (size_t)(nout + 1));
    ref_reduce(op, x, red, want, scale, nout, &nred);
    double rel, acc;
    reduce_tol(op, dt, nred, &rel, &acc);
    check(out, want, scale, nout, rel, acc, src);
    free(want);
    free(scale);
    mt_tensor_release(out);
    mt_tensor_release(x);
    mt_kernel_release(k);
}

typedef struct rshape {
    int nd;
    int64_t dims[4];
} rshape;

static const rshape rshapes[] = {
    {0, {0}},       {1, {1}},        {1, {17}},          {1, {1000}},
    {2, {1, 1}},    {2, {3, 5}},     {2, {31, 33}},      {3, {2, 3, 4}},
    {4, {2, 1, 3, 5}},
};

/* Every axis form on every shape: None, each axis, -1, a tuple of the first
 * and last, the empty tuple, and keepdims with None and with -1. argmax and
 * argmin take no tuples. */
static void reduce_all_forms(rop op, mt_dtype dt) {
    bool arg = op == ARGMAX || op == ARGMIN;
    for (size_t si = 0; si < sizeof rshapes / sizeof rshapes[0]; si++) {
        const rshape *s = &rshapes[si];
        reduce_case(op, dt, s->nd, s->dims, NULL, NULL, 0, false);
        reduce_case(op, dt, s->nd, s->dims, "None", NULL, 0, true);
        if (s->nd == 0) continue;
        for (int d = 0; d < s->nd; d++) {
            char a[16];
            snprintf(a, sizeof a, "%d", d);
            reduce_case(op, dt, s->nd, s->dims, a, &d, 1, false);
        }
        int m1 = -1;
        reduce_case(op, dt, s->nd, s->dims, "-1", &m1, 1, false);
        reduce_case(op, dt, s->nd, s->dims, "-1", &m1, 1, true);
        if (!arg && s->nd >= 2) {
            int ax[2] = {0, -1};
            reduce_case(op, dt, s->nd, s->dims, "(0, -1)", ax, 2, false);
            reduce_case(op, dt, s->nd, s->dims, "(0, -1)", ax, 2, true);
        }
        if (!arg) {
            int one = s->nd - 1;
            reduce_case(op, dt, s->nd, s->dims, "()", &one, 0, false);
            char t[16];
            snprintf(t, sizeof t, "(%d,)", one);
            reduce_case(op, dt, s->nd, s->dims, t, &one, 1, false);
        }
    }
}

static void test_sum_f32(void **st) { reduce_all_forms(SUM, MT_FLOAT32); }
static void test_mean_f32(void **st) { reduce_all_forms(MEAN, MT_FLOAT32); }
static void test_max_f32(void **st) { reduce_all_forms(MAX, MT_FLOAT32); }
static void test_min_f32(void **st) { reduce_all_forms(MIN, MT_FLOAT32); }
static void test_prod_f32(void **st) { reduce_all_forms(PROD, MT_FLOAT32); }
static void test_argmax_f32(void **st) { reduce_all_forms(ARGMAX, MT_FLOAT32); }
static void test_argmin_f32(void **st) { reduce_all_forms(ARGMIN, MT_FLOAT32); }
static void test_sum_f64(void **st) { reduce_all_forms(SUM, MT_FLOAT64); }
static void test_mean_f64(void **st) { reduce_all_forms(MEAN, MT_FLOAT64); }
static void test_max_f64(void **st) { reduce_all_forms(MAX, MT_FLOAT64); }
static void test_prod_f64(void **st) { reduce_all_forms(PROD, MT_FLOAT64); }
static void test_sum_f16(void **st) { reduce_all_forms(SUM, MT_FLOAT16); }
static void test_sum_bf16(void **st) { reduce_all_forms(SUM, MT_BFLOAT16); }
static void test_mean_bf16(void **st) { reduce_all_forms(MEAN, MT_BFLOAT16); }
static void test_max_bf16(void **st) { reduce_all_forms(MAX, MT_BFLOAT16); }
static void test_mean_f16(void **st) { reduce_all_forms(MEAN, MT_FLOAT16); }
static void test_sum_i32(void **st) { reduce_all_forms(SUM, MT_INT32); }
static void test_max_i32(void **st) { reduce_all_forms(MAX, MT_INT32); }
static void test_min_i32(void **st) { reduce_all_forms(MIN, MT_INT32); }
static void test_argmax_i32(void **st) { reduce_all_forms(ARGMAX, MT_INT32); }
static void test_mean_i32(void **st) { reduce_all_forms(MEAN, MT_INT32); }
static void test_prod_i32(void **st) { reduce_all_forms(PROD, MT_INT32); }

/* One kernel with a symbolic dim, reduced or kept, run at several sizes
 * including 0 (an empty reduction: the identity is written). */
static void test_reduce_symbolic(void **st) {
    for (int op = SUM; op <= ARGMIN; op++) {
        for (int axis = 0; axis < 2; axis++) {
            for (int keep = 0; keep < 2; keep++) {
                char src[256];
                snprintf(src, sizeof src,
                         "def f(x: Tensor((\"n\", 5), \"float32\")):\n    y = %s(x, axis=%d%s)\n    return y\n",
                         rop_name[op], axis, keep ? ", keepdims=True" : "");
                mt_kernel *k = compile_ok(src);
                static const int64_t ns[] = {1, 7, 33, 0, 2};
                for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
                    int64_t dims[2] = {ns[ni], 5};
                    mt_tensor *x = rand_tensor(MT_FLOAT32, 2, dims, -2, 2);
                    int64_t odims[2];
                    int ond = 0;
                    if (axis == 1) odims[ond++] = ns[ni];
                    if (keep) odims[ond++] = 1;
                    if (axis == 0) odims[ond++] = 5;
                    /* the result slot is pre-filled so that a missing write shows */
                    mt_tensor *out = filled(result_dtype((rop)op, MT_FLOAT32), ond, odims, 12345);
                    mt_diag d;
                    if (test_kernel_run(k, &x, 1, &out, 1, &d) != MT_OK) fail_msg("%s", d.text);
                    bool red[2] = {axis == 0, axis == 1};
                    int64_t nout = mt_tensor_numel(out), nred;
                    double want[40], scale[40];
                    ref_reduce((rop)op, x, red, want, scale, nout, &nred);
                    double rel, acc;
                    reduce_tol((rop)op, MT_FLOAT32, nred, &rel, &acc);
                    check(out, want, scale, nout, rel, acc, src);
                    if (ns[ni] == 0 && axis == 0) { /* the identities */
                        double id = op == SUM ? 0 : op == PROD ? 1 : op == MAX ? -INFINITY
                                  : op == MIN ? INFINITY : 0;
                        for (int i = 0; i < 5; i++) {
                            if (op == MEAN) assert_true(isnan(get(out, i)));
                            else assert_true(get(out, i) == id);
                        }
                    }
                    mt_tensor_release(out);
                    mt_tensor_release(x);
                }
                mt_kernel_release(k);
            }
        }
    }
}

/* A constant empty dim: identities, also for integers. */
static void test_reduce_empty_const(void **st) {
    static const struct {
        const char *op, *dtype;
        double want;
    } cases[] = {
        {"sum", "float32", 0}, {"prod", "float32", 1}, {"max", "float32", -INFINITY},
        {"min", "float32", INFINITY}, {"argmax", "float32", 0}, {"argmin", "float64", 0},
        {"sum", "int32", 0}, {"prod", "int32", 1}, {"max", "int32", INT32_MIN},
        {"min", "int32", INT32_MAX}, {"max", "int8", INT8_MIN}, {"min", "uint8", 255},
        {"sum", "float16", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[256];
        snprintf(src, sizeof src, "def f(x: Tensor((0, 3), \"%s\")):\n    y = %s(x, axis=0)\n    return y\n",
                 cases[i].dtype, cases[i].op);
        mt_kernel *k = compile_ok(src);
        int64_t dims[2] = {0, 3}, od[1] = {3};
        mt_dtype dt;
        assert_int_equal(mt_dtype_from_str(cases[i].dtype, &dt), 0);
        mt_tensor *x = mt_tensor_create(dt, 2, dims);
        mt_tensor *out = filled(mt_kernel_result_dtype(k, 0), 1, od, 77);
        mt_diag d;
        if (test_kernel_run(k, &x, 1, &out, 1, &d) != MT_OK) fail_msg("%s", d.text);
        for (int j = 0; j < 3; j++)
            if (get(out, j) != cases[i].want) fail_msg("%s: got %g, want %g", src, get(out, j), cases[i].want);
        mt_tensor_release(out);
        mt_tensor_release(x);
        mt_kernel_release(k);
    }
}

/* NaN propagates through max/min; argmax/argmin take the first NaN; ties
 * take the first index; integers wrap. */
static void test_reduce_nan_ties_wrap(void **st) {
    static const struct {
        const char *op;
        double x[5];
        double want;
    } cases[] = {
        {"max", {1, NAN, 3, 2, 0}, NAN},      {"min", {1, 2, NAN, -3, 0}, NAN},
        {"argmax", {1, NAN, 3, NAN, 0}, 1},   {"argmin", {1, 2, -3, NAN, NAN}, 3},
        {"argmax", {3, 1, 3, 2, 3}, 0},       {"argmin", {5, -1, 2, -1, 7}, 1},
        {"argmax", {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY}, 0},
        {"argmin", {INFINITY, 2, INFINITY, 2, 1}, 4},
        {"max", {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY}, -INFINITY},
        {"sum", {1, INFINITY, 2, 3, 4}, INFINITY},
        {"argmax", {NAN, 1, 2, 3, 4}, 0},
    };
    int64_t dims[1] = {5};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[256];
        snprintf(src, sizeof src, "def f(x: Tensor((5,), \"float32\")):\n    y = %s(x)\n    return y\n",
                 cases[i].op);
        mt_kernel *k = compile_ok(src);
        mt_tensor *x = mt_tensor_create(MT_FLOAT32, 1, dims);
        for (int j = 0; j < 5; j++) set(x, j, cases[i].x[j]);
        mt_tensor *out = run1(k, &x, 1);
        assert_int_equal(mt_tensor_ndim(out), 0);
        double g = get(out, 0), w = cases[i].want;
        if (!(g == w || (isnan(g) && isnan(w)))) fail_msg("case %zu (%s): got %g, want %g", i, cases[i].op, g, w);
        mt_tensor_release(out);
        mt_tensor_release(x);
        mt_kernel_release(k);
    }
    /* int32 sums wrap around in int32: 4 * 2^30 == 0, int8 too */
    mt_kernel *k = compile_ok("def f(x: Tensor((4,), \"int32\"), y: Tensor((3,), \"int8\")):\n"
                              "    a = sum(x)\n    b = sum(y)\n    return a, b\n");
    int64_t d4[1] = {4}, d3[1] = {3};
    mt_tensor *args[2] = {filled(MT_INT32, 1, d4, 1 << 30), filled(MT_INT8, 1, d3, 100)};
    mt_tensor *res[2] = {NULL, NULL};
    assert_int_equal(test_kernel_run(k, args, 2, res, 2, NULL), MT_OK);
    assert_int_equal(mt_tensor_dtype(res[0]), MT_INT32);
    assert_int_equal(geti(res[0], 0), 0);
    assert_int_equal(geti(res[1], 0), (int8_t)(uint8_t)300);
    for (int i = 0; i < 2; i++) {
        mt_tensor_release(res[i]);
        mt_tensor_release(args[i]);
    }
    mt_kernel_release(k);
}

/* A literal reduced: a rank-0 constant; weak literals settle to int32/float32. */
static void test_reduce_literal(void **st) {
    mt_kernel *k = compile_ok("def f(x: Tensor((3,), \"float32\")):\n    y = x + sum(2.5)\n    return y\n");
    int64_t d3[1] = {3};
    mt_tensor *x = filled(MT_FLOAT32, 1, d3, 1);
    mt_tensor *out = run1(k, &x, 1);
    for (int i = 0; i < 3; i++) assert_true(get(out, i) == 3.5);
    mt_tensor_release(out);
    mt_tensor_release(x);
    mt_kernel_release(k);
}

/* The block form of a reduction, as printed (the `tir` stage). */
static void test_reduce_tir(void **st) {
    mt_kernel *k = compile_ok("def f(x: Tensor((4, 8), \"float32\")):\n    y = sum(x, axis=1)\n    return y\n");
    assert_text(mt_kernel_dump(k, MT_STAGE_TIR),
                "@T.prim_func\n"
                "def sum(x: T.Buffer((4, 8), \"float32\"), y: T.Buffer((4,), \"float32\")):\n"
                "    T.func_attr({\"op_pattern\": \"reduction\"})\n"
                "    for i0, i1 in T.grid(4, 8):\n"
                "        with T.block(\"sum\"):\n"
                "            v0, v1 = T.axis.remap(\"SR\", [i0, i1])\n"
                "            T.reads(x[v0, v1])\n"
                "            T.writes(y[v0])\n"
                "            with T.init():\n"
                "                y[v0] = 0.0\n"
                "            y[v0] = y[v0] + x[v0, v1]\n");
    mt_kernel_release(k);
    /* matmul: spatial i, j, reduce k, loops i, k, j */
    k = compile_ok("def f(a: Tensor((7, 5), \"float32\"), b: Tensor((5, 3), \"float32\")):\n"
                   "    y = matmul(a, b)\n    return y\n");
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR);
    assert_non_null(strstr(t, "for i0, i1, i2 in T.grid(7, 5, 3):"));
    assert_non_null(strstr(t, "v0, v1, v2 = T.axis.remap(\"SRS\", [i0, i1, i2])"));
    assert_non_null(strstr(t, "y[v0, v2] = y[v0, v2] + a[v0, v1] * b[v1, v2]"));
    mt_kernel_release(k);
}

/* ---- matmul -------------------------------------------------------------------- */

/* NumPy matmul in double (integers: wrapping int64, truncated to int32). */
static void ref_matmul(const mt_tensor *A, const mt_tensor *B, double *want, double *scale) {
    int ra = mt_tensor_ndim(A), rb = mt_tensor_ndim(B);
    const int64_t *sa = mt_tensor_shape(A), *sb = mt_tensor_shape(B);
    int64_t m = ra >= 2 ? sa[ra - 2] : 1, kk = sa[ra - 1], n = rb >= 2 ? sb[rb - 1] : 1;
    int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0, nb = ba > bb ? ba : bb;
    int64_t bd[8], nbatch = 1;
    for (int i = 0; i < nb; i++) {
        int ia = ba - nb + i, ib = bb - nb + i;
        int64_t da = ia >= 0 ? sa[ia] : 1, db = ib >= 0 ? sb[ib] : 1;
        bd[i] = da > db ? da : db;
        nbatch *= bd[i];
    }
    bool integer = !is_float(mt_tensor_dtype(A));
    for (int64_t bt = 0; bt < nbatch; bt++) {
        /* batch offsets of A and B, with broadcasting */
        int64_t rem = bt, offa = 0, offb = 0, stra = m * kk, strb = kk * n;
        for (int i = nb - 1; i >= 0; i--) {
            int64_t id = rem % bd[i];
            rem /= bd[i];
            int ia = ba - nb + i, ib = bb - nb + i;
            if (ia >= 0) {
                offa += (sa[ia] == 1 ? 0 : id) * stra;
                stra *= sa[ia];
            }
            if (ib >= 0) {
                offb += (sb[ib] == 1 ? 0 : id) * strb;
                strb *= sb[ib];
            }
        }
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0, sc = 0;
                uint64_t is = 0;
                for (int64_t k = 0; k < kk; k++) {
                    int64_t ai = offa + i * kk + k, bi = offb + k * n + j;
                    if (integer) is += (uint64_t)geti(A, ai) * (uint64_t)geti(B, bi);
                    double p = get(A, ai) * get(B, bi);
                    s += p;
                    sc += fabs(p);
                }
                int64_t o = (bt * m + i) * n + j;
                want[o] = integer ? (double)(int32_t)(uint32_t)is : s;
                scale[o] = sc;
            }
    }
}

static void matmul_case(mt_dtype dt, int ra, const int64_t *sa, int rb, const int64_t *sb, int ro,
                        const int64_t *so) {
    char s1[128], s2[128], src[512];
    snprintf(src, sizeof src,
             "def f(a: Tensor(%s, \"%s\"), b: Tensor(%s, \"%s\")):\n    y = matmul(a, b)\n    return y\n",
             shape_src(s1, ra, sa), mt_dtype_str(dt), shape_src(s2, rb, sb), mt_dtype_str(dt));
    mt_kernel *k = compile_ok(src);
    mt_tensor *args[2] = {rand_tensor(dt, ra, sa, -2, 2), rand_tensor(dt, rb, sb, -2, 2)};
    mt_tensor *out = run1(k, args, 2);
    assert_shape(out, ro, so);
    int64_t n = mt_tensor_numel(out);
    double *want = malloc(sizeof(double) * (size_t)(n + 1)), *scale = malloc(sizeof(double) * (size_t)(n + 1));
    ref_matmul(args[0], args[1], want, scale);
    int64_t kk = sa[ra - 1];
    double u = dt == MT_FLOAT64 ? 1.2e-16 : 6e-8;
    double rel = u16(dt) ? u16(dt) : 2 * u, acc = is_float(dt) ? (double)(kk + 1) * u : 0;
    if (!is_float(dt)) rel = 0;
    check(out, want, scale, n, rel, acc, src);
    free(want);
    free(scale);
    mt_tensor_release(out);
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_kernel_release(k);
}

typedef struct mcase {
    int ra;
    int64_t sa[4];
    int rb;
    int64_t sb[4];
    int ro;
    int64_t so[4];
} mcase;

static const mcase mcases[] = {
    {2, {1, 784}, 2, {784, 128}, 2, {1, 128}},
    {2, {7, 5}, 2, {5, 3}, 2, {7, 3}},
    {2, {1, 1}, 2, {1, 1}, 2, {1, 1}},
    {2, {17, 31}, 2, {31, 19}, 2, {17, 19}},
    {1, {5}, 2, {5, 3}, 1, {3}},                       /* vector @ matrix */
    {2, {7, 5}, 1, {5}, 1, {7}},                       /* matrix @ vector */
    {1, {33}, 1, {33}, 0, {0}},                        /* vector @ vector: rank 0 */
    {1, {5}, 3, {2, 5, 3}, 2, {2, 3}},                 /* vector @ stack */
    {4, {2, 3, 4, 5}, 1, {5}, 3, {2, 3, 4}},           /* stack @ vector */
    {4, {2, 3, 4, 5}, 2, {5, 6}, 4, {2, 3, 4, 6}},     /* batched */
    {4, {2, 1, 4, 5}, 3, {3, 5, 6}, 4, {2, 3, 4, 6}},  /* broadcast batch */
    {3, {1, 4, 5}, 3, {3, 5, 2}, 3, {3, 4, 2}},
};

static void matmul_all(mt_dtype dt) {
    for (size_t i = 0; i < sizeof mcases / sizeof mcases[0]; i++) {
        const mcase *c = &mcases[i];
        matmul_case(dt, c->ra, c->sa, c->rb, c->sb, c->ro, c->so);
    }
}

static void test_matmul_f32(void **st) { matmul_all(MT_FLOAT32); }
static void test_matmul_f64(void **st) { matmul_all(MT_FLOAT64); }
static void test_matmul_i32(void **st) { matmul_all(MT_INT32); }
static void test_matmul_f16(void **st) { matmul_all(MT_FLOAT16); }
static void test_matmul_bf16(void **st) { matmul_all(MT_BFLOAT16); }

/* Symbolic m, k, n from one kernel; k == 0 gives zeros. */
static void test_matmul_symbolic(void **st) {
    mt_kernel *k = compile_ok("def f(a: Tensor((\"m\", \"k\"), \"float32\"), b: Tensor((\"k\", \"n\"), \"float32\")):\n"
                              "    y = matmul(a, b)\n    return y\n");
    static const int64_t sizes[][3] = {{1, 784, 128}, {3, 5, 7}, {16, 16, 16}, {4, 0, 3}, {0, 3, 2}, {2, 1, 1}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int64_t sa[2] = {sizes[i][0], sizes[i][1]}, sb[2] = {sizes[i][1], sizes[i][2]},
                so[2] = {sizes[i][0], sizes[i][2]};
        mt_tensor *args[2] = {rand_tensor(MT_FLOAT32, 2, sa, -2, 2), rand_tensor(MT_FLOAT32, 2, sb, -2, 2)};
        mt_tensor *out = filled(MT_FLOAT32, 2, so, 12345);
        mt_diag d;
        if (test_kernel_run(k, args, 2, &out, 1, &d) != MT_OK) fail_msg("%s", d.text);
        int64_t n = mt_tensor_numel(out);
        double *want = malloc(sizeof(double) * (size_t)(n + 1)), *scale = malloc(sizeof(double) * (size_t)(n + 1));
        ref_matmul(args[0], args[1], want, scale);
        check(out, want, scale, n, 1.2e-7, (double)(sizes[i][1] + 1) * 6e-8, "symbolic matmul");
        free(want);
        free(scale);
        mt_tensor_release(out);
        mt_tensor_release(args[0]);
        mt_tensor_release(args[1]);
    }
    mt_kernel_release(k);
}

/* ---- softmax, log_softmax --------------------------------------------------------- */

static void ref_softmax(const mt_tensor *x, int axis, bool log_, double *want) {
    int nd = mt_tensor_ndim(x);
    const int64_t *dims = mt_tensor_shape(x);
    int64_t outer = 1, inner = 1, n = dims[axis];
    for (int d = 0; d < axis; d++) outer *= dims[d];
    for (int d = axis + 1; d < nd; d++) inner *= dims[d];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double m = -INFINITY, s = 0;
            for (int64_t k = 0; k < n; k++) m = fmax(m, get(x, (o * n + k) * inner + i));
            for (int64_t k = 0; k < n; k++) s += exp(get(x, (o * n + k) * inner + i) - m);
            for (int64_t k = 0; k < n; k++) {
                double v = get(x, (o * n + k) * inner + i) - m;
                want[(o * n + k) * inner + i] = log_ ? v - log(s) : exp(v) / s;
            }
        }
}

static void softmax_case(bool log_, mt_dtype dt, int nd, const int64_t *dims, int axis, const char *axis_src,
                         double scale_x) {
    char sh[128], src[512], args[64] = "";
    if (axis_src) snprintf(args, sizeof args, ", axis=%s", axis_src);
    snprintf(src, sizeof src, "def f(x: Tensor(%s, \"%s\")):\n    y = %s(x%s)\n    return y\n",
             shape_src(sh, nd, dims), mt_dtype_str(dt), log_ ? "log_softmax" : "softmax", args);
    mt_kernel *k = compile_ok(src);
    mt_tensor *x = rand_tensor(dt, nd, dims, -2 * scale_x, 2 * scale_x);
    mt_tensor *out = run1(k, &x, 1);
    assert_shape(out, nd, dims);
    int64_t n = mt_tensor_numel(out), len = dims[axis];
    double *want = malloc(sizeof(double) * (size_t)(n + 1));
    ref_softmax(x, axis, log_, want);
    double u = dt == MT_FLOAT64 ? 2.3e-16 : 1.2e-7;
    if (log_) {
        for (int64_t i = 0; i < n; i++) {
            double lim = (dt == MT_FLOAT16 ? 2e-3 : (double)(len + 8) * u) * fmax(1, fabs(want[i]));
            if (!(fabs(get(out, i) - want[i]) <= lim))
                fail_msg("%s: element %lld: got %.9g, want %.9g", src, (long long)i, get(out, i), want[i]);
        }
    } else if (dt == MT_FLOAT16) {
        check(out, want, NULL, n, 1.0 / 1024, 1e-4, src);
    } else if (dt == MT_BFLOAT16) {
        check(out, want, NULL, n, 1.0 / 128, 1e-3, src);
    } else {
        check(out, want, NULL, n, (double)(len + 8) * u, dt == MT_FLOAT32 ? 1e-30 : 1e-300, src);
        /* the normalized axis sums to 1 */
        int64_t inner = 1;
        for (int d = axis + 1; d < nd; d++) inner *= dims[d];
        for (int64_t o = 0; o < n / (len ? len : 1) / inner; o++)
            for (int64_t i = 0; i < inner; i++) {
                double s = 0;
                for (int64_t kk = 0; kk < len; kk++) s += get(out, (o * len + kk) * inner + i);
                if (!(fabs(s - 1) <= (double)(len + 8) * 2 * u)) fail_msg("%s: sum %.9g", src, s);
            }
    }
    free(want);
    mt_tensor_release(out);
    mt_tensor_release(x);
    mt_kernel_release(k);
}

static void softmax_all(bool log_, mt_dtype dt) {
    static const rshape shapes[] = {
        {1, {1}}, {1, {1000}}, {2, {1, 1}}, {2, {3, 5}}, {2, {31, 33}}, {3, {2, 3, 4}}, {4, {2, 1, 3, 17}},
    };
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const rshape *s = &shapes[si];
        softmax_case(log_, dt, s->nd, s->dims, s->nd - 1, NULL, 1);
        for (int d = 0; d < s->nd; d++) {
            char a[16];
            snprintf(a, sizeof a, "%d", d);
            softmax_case(log_, dt, s->nd, s->dims, d, a, 1);
        }
        softmax_case(log_, dt, s->nd, s->dims, s->nd == 1 ? 0 : s->nd - 2, s->nd == 1 ? "-1" : "-2", 1);
    }
    /* large inputs: stability (no overflow in exp) */
    if (!u16(dt)) {
        int64_t dims[2] = {4, 9};
        softmax_case(log_, dt, 2, dims, 1, NULL, 400);
    }
}

static void test_softmax_f32(void **st) { softmax_all(false, MT_FLOAT32); }
static void test_softmax_f64(void **st) { softmax_all(false, MT_FLOAT64); }
static void test_softmax_f16(void **st) { softmax_all(false, MT_FLOAT16); }
static void test_softmax_bf16(void **st) { softmax_all(false, MT_BFLOAT16); }
static void test_log_softmax_f32(void **st) { softmax_all(true, MT_FLOAT32); }
static void test_log_softmax_f64(void **st) { softmax_all(true, MT_FLOAT64); }

static void test_softmax_symbolic(void **st) {
    mt_kernel *k = compile_ok("def f(x: Tensor((\"n\", 17), \"float32\")):\n    y = softmax(x, axis=0)\n    return y\n");
    static const int64_t ns[] = {1, 4, 100, 0};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        int64_t dims[2] = {ns[i], 17};
        mt_tensor *x = rand_tensor(MT_FLOAT32, 2, dims, -2, 2);
        mt_tensor *out = run1(k, &x, 1);
        assert_shape(out, 2, dims);
        double *want = malloc(sizeof(double) * (size_t)(ns[i] * 17 + 1));
        ref_softmax(x, 0, false, want);
        check(out, want, NULL, ns[i] * 17, (double)(ns[i] + 8) * 1.2e-7, 1e-300, "symbolic softmax");
        free(want);
        mt_tensor_release(out);
        mt_tensor_release(x);
    }
    mt_kernel_release(k);
}

/* ---- layer_norm ------------------------------------------------------------------ */

static void ref_layer_norm(const mt_tensor *x, const mt_tensor *g, const mt_tensor *b, double eps, double *want) {
    int64_t inner = mt_tensor_numel(g), n = mt_tensor_numel(x), outer = inner ? n / inner : 0;
    for (int64_t o = 0; o < outer; o++) {
        double m = 0, v = 0;
        for (int64_t i = 0; i < inner; i++) m += get(x, o * inner + i);
        m /= (double)inner;
        for (int64_t i = 0; i < inner; i++) v += (get(x, o * inner + i) - m) * (get(x, o * inner + i) - m);
        v /= (double)inner;
        for (int64_t i = 0; i < inner; i++)
            want[o * inner + i] = (get(x, o * inner + i) - m) / sqrt(v + eps) * get(g, i) + get(b, i);
    }
}

static void layer_norm_case(mt_dtype dt, int nd, const int64_t *dims, int r, const char *eps_src, double eps) {
    char sx[128], sg[128], src[640], e[64] = "";
    if (eps_src) snprintf(e, sizeof e, ", eps=%s", eps_src);
    const int64_t *gd = dims + nd - r;
    shape_src(sg, r, gd);
    snprintf(src, sizeof src,
             "def f(x: Tensor(%s, \"%s\"), g: Tensor(%s, \"%s\"), b: Tensor(%s, \"%s\")):\n"
             "    y = layer_norm(x, g, b%s)\n    return y\n",
             shape_src(sx, nd, dims), mt_dtype_str(dt), sg, mt_dtype_str(dt), sg, mt_dtype_str(dt), e);
    mt_kernel *k = compile_ok(src);
    mt_tensor *args[3] = {rand_tensor(dt, nd, dims, -3, 5), rand_tensor(dt, r, gd, 0.5, 1.5),
                          rand_tensor(dt, r, gd, -1, 1)};
    mt_tensor *out = run1(k, args, 3);
    assert_shape(out, nd, dims);
    int64_t n = mt_tensor_numel(out);
    double *want = malloc(sizeof(double) * (size_t)(n + 1));
    ref_layer_norm(args[0], args[1], args[2], eps, want);
    double tol = dt == MT_FLOAT64 ? 1e-12 : dt == MT_FLOAT16 ? 4e-3 : dt == MT_BFLOAT16 ? 8e-3 : 1e-5;
    check(out, want, NULL, n, tol, tol, src);
    free(want);
    for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

static void layer_norm_all(mt_dtype dt) {
    static const struct {
        int nd;
        int64_t dims[4];
        int r;
    } cases[] = {
        {2, {4, 16}, 1}, {2, {1, 1}, 1}, {2, {7, 33}, 1}, {3, {2, 3, 5}, 2}, {3, {2, 3, 5}, 3},
        {1, {1000}, 1}, {4, {2, 1, 3, 17}, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        layer_norm_case(dt, cases[i].nd, cases[i].dims, cases[i].r, NULL, 1e-5);
    int64_t d[2] = {3, 8};
    layer_norm_case(dt, 2, d, 1, "0.5", 0.5);
    layer_norm_case(dt, 2, d, 1, "0", 0);
}

static void test_layer_norm_f32(void **st) { layer_norm_all(MT_FLOAT32); }
static void test_layer_norm_f64(void **st) { layer_norm_all(MT_FLOAT64); }
static void test_layer_norm_f16(void **st) { layer_norm_all(MT_FLOAT16); }
static void test_layer_norm_bf16(void **st) { layer_norm_all(MT_BFLOAT16); }

static void test_layer_norm_symbolic(void **st) {
    mt_kernel *k = compile_ok("def f(x: Tensor((\"n\", \"d\"), \"float32\"), g: Tensor((\"d\",), \"float32\"),"
                              " b: Tensor((\"d\",), \"float32\")):\n    y = layer_norm(x, g, b)\n    return y\n");
    static const int64_t sizes[][2] = {{1, 1}, {5, 16}, {3, 100}, {0, 4}, {2, 0}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int64_t dx[2] = {sizes[i][0], sizes[i][1]}, dg[1] = {sizes[i][1]};
        mt_tensor *args[3] = {rand_tensor(MT_FLOAT32, 2, dx, -3, 5), rand_tensor(MT_FLOAT32, 1, dg, 0.5, 1.5),
                              rand_tensor(MT_FLOAT32, 1, dg, -1, 1)};
        mt_tensor *out = run1(k, args, 3);
        int64_t n = mt_tensor_numel(out);
        double *want = malloc(sizeof(double) * (size_t)(n + 1));
        ref_layer_norm(args[0], args[1], args[2], 1e-5, want);
        check(out, want, NULL, n, 1e-5, 1e-5, "symbolic layer_norm");
        free(want);
        for (int j = 0; j < 3; j++) mt_tensor_release(args[j]);
        mt_tensor_release(out);
    }
    mt_kernel_release(k);
}

/* ---- chains ---------------------------------------------------------------------- */

/* p = softmax(x @ w + b), s = sum(p, axis=1) (ones), c = argmax(p, axis=1),
 * z = mean(layer_norm(x @ w, g, b)) */
static void test_chain(void **st) {
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((\"n\", 20), \"float32\"), w: Tensor((20, 10), \"float32\"), b: Tensor((10,), \"float32\"),\n"
        "      g: Tensor((10,), \"float32\")):\n"
        "    h = matmul(x, w)\n"
        "    p = softmax(h + b)\n"
        "    s = sum(p, axis=1)\n"
        "    c = argmax(p, axis=-1)\n"
        "    z = mean(layer_norm(h, g, b), axis=(0, 1), keepdims=True)\n"
        "    return p, s, c, z\n");
    static const int64_t ns[] = {1, 9};
    for (size_t ni = 0; ni < 2; ni++) {
        int64_t n = ns[ni], dx[2] = {n, 20}, dw[2] = {20, 10}, db[1] = {10};
        mt_tensor *args[4] = {rand_tensor(MT_FLOAT32, 2, dx, -1, 1), rand_tensor(MT_FLOAT32, 2, dw, -1, 1),
                              rand_tensor(MT_FLOAT32, 1, db, -1, 1), rand_tensor(MT_FLOAT32, 1, db, 0.5, 1.5)};
        mt_tensor *res[4] = {NULL, NULL, NULL, NULL};
        mt_diag d;
        if (test_kernel_run(k, args, 4, res, 4, &d) != MT_OK) fail_msg("%s", d.text);
        /* reference */
        double h[9 * 10], p[9 * 10], ln[9 * 10];
        for (int64_t i = 0; i < n; i++)
            for (int j = 0; j < 10; j++) {
                double acc = 0;
                for (int kk = 0; kk < 20; kk++) acc += get(args[0], i * 20 + kk) * get(args[1], kk * 10 + j);
                h[i * 10 + j] = acc;
            }
        double zsum = 0;
        for (int64_t i = 0; i < n; i++) {
            double m = -INFINITY, s = 0, mu = 0, var = 0;
            for (int j = 0; j < 10; j++) m = fmax(m, h[i * 10 + j] + get(args[2], j));
            for (int j = 0; j < 10; j++) s += exp(h[i * 10 + j] + get(args[2], j) - m);
            int best = 0;
            for (int j = 0; j < 10; j++) {
                p[i * 10 + j] = exp(h[i * 10 + j] + get(args[2], j) - m) / s;
                if (p[i * 10 + j] > p[i * 10 + best]) best = j;
            }
            assert_true(fabs(get(res[1], i) - 1) <= 4e-6);
            /* argmax of p: compare against the kernel's own p to be robust to near ties */
            int kbest = 0;
            for (int j = 0; j < 10; j++)
                if (get(res[0], i * 10 + j) > get(res[0], i * 10 + kbest)) kbest = j;
            assert_int_equal(geti(res[2], i), kbest);
            assert_true(fabs(p[i * 10 + best] - p[i * 10 + kbest]) <= 1e-5);
            for (int j = 0; j < 10; j++) mu += h[i * 10 + j];
            mu /= 10;
            for (int j = 0; j < 10; j++) var += (h[i * 10 + j] - mu) * (h[i * 10 + j] - mu);
            var /= 10;
            for (int j = 0; j < 10; j++) {
                ln[i * 10 + j] = (h[i * 10 + j] - mu) / sqrt(var + 1e-5) * get(args[3], j) + get(args[2], j);
                zsum += ln[i * 10 + j];
            }
        }
        check(res[0], p, NULL, n * 10, 1e-5, 1e-7, "chain softmax");
        int64_t one[2] = {1, 1};
        assert_shape(res[3], 2, one);
        double zw = zsum / (double)(n * 10);
        check(res[3], &zw, NULL, 1, 0, 2e-5, "chain mean(layer_norm)");
        for (int i = 0; i < 4; i++) {
            mt_tensor_release(res[i]);
            mt_tensor_release(args[i]);
        }
    }
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sum_f32),          cmocka_unit_test(test_mean_f32),
        cmocka_unit_test(test_max_f32),          cmocka_unit_test(test_min_f32),
        cmocka_unit_test(test_prod_f32),         cmocka_unit_test(test_argmax_f32),
        cmocka_unit_test(test_argmin_f32),       cmocka_unit_test(test_sum_f64),
        cmocka_unit_test(test_mean_f64),         cmocka_unit_test(test_max_f64),
        cmocka_unit_test(test_prod_f64),         cmocka_unit_test(test_sum_f16),
        cmocka_unit_test(test_mean_f16),         cmocka_unit_test(test_sum_bf16),
        cmocka_unit_test(test_mean_bf16),        cmocka_unit_test(test_max_bf16),
        cmocka_unit_test(test_matmul_bf16),      cmocka_unit_test(test_softmax_bf16),
        cmocka_unit_test(test_layer_norm_bf16),         cmocka_unit_test(test_sum_i32),
        cmocka_unit_test(test_max_i32),          cmocka_unit_test(test_min_i32),
        cmocka_unit_test(test_argmax_i32),       cmocka_unit_test(test_mean_i32),
        cmocka_unit_test(test_prod_i32),         cmocka_unit_test(test_reduce_symbolic),
        cmocka_unit_test(test_reduce_empty_const), cmocka_unit_test(test_reduce_nan_ties_wrap),
        cmocka_unit_test(test_reduce_literal),   cmocka_unit_test(test_reduce_tir),
        cmocka_unit_test(test_matmul_f32),       cmocka_unit_test(test_matmul_f64),
        cmocka_unit_test(test_matmul_i32),       cmocka_unit_test(test_matmul_f16),
        cmocka_unit_test(test_matmul_symbolic),  cmocka_unit_test(test_softmax_f32),
        cmocka_unit_test(test_softmax_f64),      cmocka_unit_test(test_softmax_f16),
        cmocka_unit_test(test_log_softmax_f32),  cmocka_unit_test(test_log_softmax_f64),
        cmocka_unit_test(test_softmax_symbolic), cmocka_unit_test(test_layer_norm_f32),
        cmocka_unit_test(test_layer_norm_f64),   cmocka_unit_test(test_layer_norm_f16),
        cmocka_unit_test(test_layer_norm_symbolic), cmocka_unit_test(test_chain),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
