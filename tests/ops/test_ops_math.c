/*
 * test_ops_math.c -- the elementwise math library called by name (log,
 * rsqrt, sin, cos, erf, gelu, floor, ceil, round, abs, sign, power, maximum,
 * minimum, where, astype, zeros, ones, full): source -> kernel -> run,
 * compared with a plain C reference computed in double
 * (test_ops_math_operators.c has the ops reached through operators).
 *
 * Tolerances (check_vals: relative, with an absolute floor of the same size
 * near zero):
 *   log sin cos erf rsqrt, float32: 1e-6 (glibc is within 1 ulp = 1.2e-7
 *     relative of the float result; rsqrt rounds twice)
 *   gelu, float32: 2e-6 (erf/tanh plus five roundings; near the cancellation
 *     of 1 + erf(x) for x << 0 the error is absolute, about |x| ulp(1))
 *   every float64 transcendental: 1e-14
 *   float16 (computed in float32, rounded once to half): 1e-3, two half
 *     ulps' worth of the 0.5 ulp rounding; bfloat16 likewise 8e-3 (its unit
 *     roundoff is 2^-8: 8 significant bits)
 *   floor ceil round abs sign maximum minimum where astype, creation and
 *   every integer op: exact (tol 0: also the sign of a zero)
 *   power: float32 1e-6, float64 1e-14 (glibc pow, < 1 ulp); integers exact
 *     while results are within 2^53 (saturating beyond the dtype, checked).
 */
#include "ops/test_ops_math_util.h"

static const shape unary_shapes[] = {
    {1, {1}}, {1, {7}}, {1, {33}}, {1, {1000}}, {2, {1, 1}}, {2, {3, 5}}, {3, {2, 1, 17}}, {2, {31, 33}},
};

/* ---- references ------------------------------------------------------------- */

typedef double (*ref1)(double);
static double r_rsqrt(double x) { return 1 / sqrt(x); }
static double r_round(double x) { return nearbyint(x); } /* default mode: half to even */
static double r_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : x == 0 ? 0.0 : x; } /* NumPy's */
static double r_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }
static double r_gelu_tanh(double x) {
    return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

enum gen { G_ANY, G_POS, G_HALVES };
static double gen_value(enum gen g, int64_t i) {
    switch (g) {
    case G_ANY: return 4 * rnd();
    case G_POS: return 0.01 + 4 * (rnd() + 1);
    case G_HALVES: return i % 2 ? (double)rnd_int(-20, 20) / 2 : 10 * rnd(); /* ties, and the rest */
    }
    return 0;
}

/* y = expr(x) on every shape, compared with ref. */
static void unary_case(const char *expr, mt_dtype dt, enum gen g, ref1 ref, double tol) {
    for (size_t si = 0; si < sizeof unary_shapes / sizeof unary_shapes[0]; si++) {
        const shape *s = &unary_shapes[si];
        char sh[64], src[512];
        shape_src(sh, sizeof sh, s);
        snprintf(src, sizeof src, "def f(x: Tensor(%s, \"%s\")):\n    y = %s\n    return y\n", sh,
                 mt_dtype_str(dt), expr);
        int64_t n = numel(s);
        double *vals = malloc(sizeof(double) * (size_t)n), *want = malloc(sizeof(double) * (size_t)n);
        for (int64_t i = 0; i < n; i++) vals[i] = gen_value(g, i);
        mt_tensor *x = tensor_of(dt, s, vals);
        mt_tensor *y = run_src(src, &x, 1);
        assert_int_equal(mt_tensor_dtype(y), dt);
        assert_int_equal(mt_tensor_ndim(y), s->ndim);
        for (int64_t i = 0; i < n; i++) want[i] = ref(tget(x, i));
        check_vals(y, want, n, tol, src);
        free(vals);
        free(want);
        mt_tensor_release(x);
        mt_tensor_release(y);
    }
}

static void test_log(void **st) {
    unary_case("log(x)", MT_FLOAT32, G_POS, log, 1e-6);
    unary_case("log(x)", MT_FLOAT64, G_POS, log, 1e-14);
    unary_case("log(x)", MT_FLOAT16, G_POS, log, 1e-3);
    unary_case("log(x)", MT_BFLOAT16, G_POS, log, 8e-3);
}
static void test_rsqrt(void **st) {
    unary_case("rsqrt(x)", MT_FLOAT32, G_POS, r_rsqrt, 1e-6);
    unary_case("rsqrt(x)", MT_FLOAT64, G_POS, r_rsqrt, 1e-14);
}
static void test_sin_cos(void **st) {
    unary_case("sin(x)", MT_FLOAT32, G_ANY, sin, 1e-6);
    unary_case("sin(x)", MT_FLOAT64, G_ANY, sin, 1e-14);
    unary_case("cos(x)", MT_FLOAT32, G_ANY, cos, 1e-6);
    unary_case("cos(x)", MT_FLOAT64, G_ANY, cos, 1e-14);
    unary_case("cos(x)", MT_FLOAT16, G_ANY, cos, 1e-3);
    unary_case("cos(x)", MT_BFLOAT16, G_ANY, cos, 8e-3);
}
static void test_erf(void **st) {
    unary_case("erf(x)", MT_FLOAT32, G_ANY, erf, 1e-6);
    unary_case("erf(x)", MT_FLOAT64, G_ANY, erf, 1e-14);
}
static void test_gelu(void **st) {
    unary_case("gelu(x)", MT_FLOAT32, G_ANY, r_gelu, 2e-6);
    unary_case("gelu(x, approximate=\"none\")", MT_FLOAT64, G_ANY, r_gelu, 1e-14);
    unary_case("gelu(x)", MT_FLOAT16, G_ANY, r_gelu, 1e-3);
    unary_case("gelu(x, approximate=\"tanh\")", MT_FLOAT32, G_ANY, r_gelu_tanh, 2e-6);
    unary_case("gelu(x, \"tanh\")", MT_FLOAT64, G_ANY, r_gelu_tanh, 1e-14);
    unary_case("gelu(x, approximate=\"tanh\")", MT_FLOAT16, G_ANY, r_gelu_tanh, 1e-3);
    unary_case("gelu(x)", MT_BFLOAT16, G_ANY, r_gelu, 8e-3);
}
static void test_floor_ceil_round(void **st) {
    static const mt_dtype dts[] = {MT_FLOAT32, MT_FLOAT64, MT_FLOAT16, MT_BFLOAT16};
    for (int i = 0; i < 4; i++) {
        unary_case("floor(x)", dts[i], G_HALVES, floor, 0);
        unary_case("ceil(x)", dts[i], G_HALVES, ceil, 0);
        unary_case("round(x)", dts[i], G_HALVES, r_round, 0);
    }
}
static void test_abs_sign_float(void **st) {
    static const mt_dtype dts[] = {MT_FLOAT32, MT_FLOAT64, MT_FLOAT16, MT_BFLOAT16};
    for (int i = 0; i < 4; i++) {
        unary_case("abs(x)", dts[i], G_ANY, fabs, 0);
        unary_case("sign(x)", dts[i], G_HALVES, r_sign, 0);
    }
}

/* Special values: zeros of both signs, ties, tiny and huge, inf, NaN. The
 * reference is C's (log(0) = -inf, log(-1) = NaN, rsqrt(-0.0) = -inf, ...). */
static void edge_case(const char *expr, mt_dtype dt, ref1 ref, double tol, bool huge) {
    static const double vals[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997,
                                  1e-30, -1e-30, 3e38, -3e38, INFINITY, -INFINITY, NAN};
    double v[18], want[18];
    int n = 0;
    for (int i = 0; i < 18; i++) /* without huge: no +-3e38 (sin/cos of those test argument reduction) */
        if (huge || fabs(vals[i]) != 3e38) v[n++] = vals[i];
    shape s = {1, {n}};
    char src[256];
    snprintf(src, sizeof src, "def f(x: Tensor((%d,), \"%s\")):\n    y = %s\n    return y\n", n,
             mt_dtype_str(dt), expr);
    mt_tensor *x = tensor_of(dt, &s, v);
    mt_tensor *y = run_src(src, &x, 1);
    for (int i = 0; i < n; i++) want[i] = round_to(dt, ref(tget(x, i)));
    check_vals(y, want, n, tol, src);
    mt_tensor_release(x);
    mt_tensor_release(y);
}

static void test_unary_edges(void **st) {
    static const mt_dtype dts[] = {MT_FLOAT32, MT_FLOAT64};
    for (int i = 0; i < 2; i++) {
        double t = dts[i] == MT_FLOAT32 ? 1e-6 : 1e-14;
        edge_case("log(x)", dts[i], log, t, true);
        edge_case("rsqrt(x)", dts[i], r_rsqrt, t, true);
        edge_case("sin(x)", dts[i], sin, t, false);
        edge_case("cos(x)", dts[i], cos, t, false);
        edge_case("erf(x)", dts[i], erf, t, true);
        edge_case("gelu(x)", dts[i], r_gelu, t, true);
        edge_case("gelu(x, approximate=\"tanh\")", dts[i], r_gelu_tanh, t, true);
        edge_case("floor(x)", dts[i], floor, 0, true);
        edge_case("ceil(x)", dts[i], ceil, 0, true);
        edge_case("round(x)", dts[i], r_round, 0, true);
        edge_case("abs(x)", dts[i], fabs, 0, true);
        edge_case("sign(x)", dts[i], r_sign, 0, true);
    }
    edge_case("round(x)", MT_FLOAT16, r_round, 0, false);
    edge_case("sign(x)", MT_FLOAT16, r_sign, 0, false);

    /* spot checks of the decisions, independent of the C reference */
    double in[6] = {2.5, -0.5, 0.49999997, -0.0, NAN, -3.5};
    shape s6 = {1, {6}};
    mt_tensor *x = tensor_of(MT_FLOAT32, &s6, in);
    mt_tensor *y = run_src("def f(x: Tensor((6,), \"float32\")):\n    return round(x)\n", &x, 1);
    const float *r = mt_tensor_data(y);
    assert_true(r[0] == 2.0f && r[2] == 0.0f && r[5] == -4.0f);
    assert_true(r[1] == 0.0f && signbit(r[1])); /* -0.5 rounds to -0 */
    mt_tensor_release(y);
    y = run_src("def f(x: Tensor((6,), \"float32\")):\n    return sign(x)\n", &x, 1);
    r = mt_tensor_data(y);
    assert_true(r[3] == 0.0f && !signbit(r[3])); /* sign(-0.0) is +0.0 */
    assert_true(isnan(r[4]));                    /* sign(NaN) is NaN */
    assert_true(r[5] == -1.0f);
    mt_tensor_release(y);
    mt_tensor_release(x);
}

/* ---- integer abs and sign --------------------------------------------------- */

static const int64_t int_samples[] = {
    0, 1, -1, 2, -7, 100, 127, -128, 128, 200, 255, 256, -129, 30000, 65535, 2147483647,
    -2147483647 - 1, 2147483648LL, 123456789012LL, INT64_MAX, INT64_MIN, -5, 42, -42,
};

static bool fits(mt_dtype dt, int64_t v) {
    switch (dt) {
    case MT_INT8: return v >= INT8_MIN && v <= INT8_MAX;
    case MT_UINT8: return v >= 0 && v <= UINT8_MAX;
    case MT_INT32: return v >= INT32_MIN && v <= INT32_MAX;
    case MT_BOOL: return v == 0 || v == 1;
    default: return true;
    }
}

/* The samples of int_samples that dt holds, then random ones; returns n. */
static int int_values(mt_dtype dt, int64_t *out, int cap) {
    int n = 0;
    for (size_t i = 0; i < sizeof int_samples / sizeof int_samples[0]; i++)
        if (fits(dt, int_samples[i])) out[n++] = int_samples[i];
    while (n < cap) {
        int64_t v = dt == MT_UINT8 ? rnd_int(0, 255) : dt == MT_INT8 ? rnd_int(-128, 127) : rnd_int(-1000000, 1000000);
        out[n++] = v;
    }
    return n;
}

static int64_t wrap(mt_dtype dt, int64_t v) { /* two's complement, like the generated code */
    switch (dt) {
    case MT_INT8: return (int8_t)(uint8_t)(uint64_t)v;
    case MT_UINT8: return (uint8_t)(uint64_t)v;
    case MT_INT32: return (int32_t)(uint32_t)(uint64_t)v;
    default: return v;
    }
}

static void test_abs_sign_int(void **st) {
    static const mt_dtype dts[] = {MT_INT8, MT_UINT8, MT_INT32, MT_INT64};
    for (int di = 0; di < 4; di++) {
        mt_dtype dt = dts[di];
        int64_t v[41], wa[41], ws[41];
        int n = int_values(dt, v, 41);
        shape s = {1, {n}};
        for (int i = 0; i < n; i++) {
            /* abs(MIN) wraps to MIN (llvm.abs without poison), as NumPy */
            wa[i] = v[i] < 0 ? wrap(dt, (int64_t)(0 - (uint64_t)v[i])) : v[i];
            ws[i] = (v[i] > 0) - (v[i] < 0);
        }
        char src[256];
        mt_tensor *x = tensor_of_ints(dt, &s, v);
        snprintf(src, sizeof src, "def f(x: Tensor((%d,), \"%s\")):\n    return abs(x)\n", n, mt_dtype_str(dt));
        mt_tensor *y = run_src(src, &x, 1);
        assert_int_equal(mt_tensor_dtype(y), dt);
        check_ints(y, wa, n, src);
        mt_tensor_release(y);
        snprintf(src, sizeof src, "def f(x: Tensor((%d,), \"%s\")):\n    return sign(x)\n", n, mt_dtype_str(dt));
        y = run_src(src, &x, 1);
        assert_int_equal(mt_tensor_dtype(y), dt);
        check_ints(y, ws, n, src);
        mt_tensor_release(y);
        mt_tensor_release(x);
    }
}

/* ---- power ------------------------------------------------------------------ */

static const struct {
    shape a, b, out;
} bcast_pairs[] = {
    {{1, {7}}, {1, {7}}, {1, {7}}},
    {{2, {2, 3}}, {1, {3}}, {2, {2, 3}}},
    {{2, {4, 1}}, {2, {1, 5}}, {2, {4, 5}}},
    {{1, {1}}, {1, {33}}, {1, {33}}},
    {{3, {3, 1, 2}}, {2, {4, 1}}, {3, {3, 4, 2}}},
    {{1, {1000}}, {1, {1}}, {1, {1000}}},
    {{2, {31, 33}}, {2, {31, 1}}, {2, {31, 33}}},
};
#define NPAIRS (sizeof bcast_pairs / sizeof bcast_pairs[0])

typedef double (*ref2)(double, double);

/* out = expr(a, b) on every broadcasting pair; a and b drawn by ga/gb. */
static void binary_case(const char *expr, mt_dtype dt, double (*ga)(void), double (*gb)(void), ref2 ref,
                        double tol) {
    for (size_t pi = 0; pi < NPAIRS; pi++) {
        const shape *sa = &bcast_pairs[pi].a, *sb = &bcast_pairs[pi].b, *so = &bcast_pairs[pi].out;
        char sha[64], shb[64], src[512];
        shape_src(sha, sizeof sha, sa);
        shape_src(shb, sizeof shb, sb);
        snprintf(src, sizeof src, "def f(a: Tensor(%s, \"%s\"), b: Tensor(%s, \"%s\")):\n    out = %s\n    return out\n",
                 sha, mt_dtype_str(dt), shb, mt_dtype_str(dt), expr);
        int64_t na = numel(sa), nb = numel(sb), no = numel(so);
        double *va = malloc(sizeof(double) * (size_t)na), *vb = malloc(sizeof(double) * (size_t)nb);
        double *want = malloc(sizeof(double) * (size_t)no);
        for (int64_t i = 0; i < na; i++) va[i] = ga();
        for (int64_t i = 0; i < nb; i++) vb[i] = gb();
        mt_tensor *args[2] = {tensor_of(dt, sa, va), tensor_of(dt, sb, vb)};
        mt_tensor *out = run_src(src, args, 2);
        assert_int_equal(mt_tensor_ndim(out), so->ndim);
        for (int d = 0; d < so->ndim; d++) assert_int_equal(mt_tensor_shape(out)[d], so->dims[d]);
        for (int64_t i = 0; i < no; i++)
            want[i] = ref(tget(args[0], bidx(args[0], so, i)), tget(args[1], bidx(args[1], so, i)));
        check_vals(out, want, no, tol, src);
        free(va);
        free(vb);
        free(want);
        release_all(args, 2);
        mt_tensor_release(out);
    }
}

static double g_pos_base(void) { return 0.1 + 2 * (rnd() + 1); }
static double g_exp(void) { return 3 * rnd(); }

static void test_power_float(void **st) {
    binary_case("power(a, b)", MT_FLOAT32, g_pos_base, g_exp, pow, 1e-6);
    binary_case("power(a, b)", MT_FLOAT64, g_pos_base, g_exp, pow, 1e-14);
    binary_case("power(a, b)", MT_FLOAT16, g_pos_base, g_exp, pow, 1e-3);

    /* negative bases, zero, inf and NaN: C's pow */
    static const double base[] = {-2, -2, -8, 0, 0, -0.0, 0, 1, NAN, INFINITY, -INFINITY, 2, 0.5, 10};
    static const double expo[] = {3, 0.5, 1.0 / 3, 0, -1, -1, 2, NAN, 0, -1, 3, INFINITY, -INFINITY, 38};
    shape s = {1, {14}};
    double want[14];
    mt_tensor *args[2] = {tensor_of(MT_FLOAT32, &s, base), tensor_of(MT_FLOAT32, &s, expo)};
    mt_tensor *out = run_src("def f(a: Tensor((14,), \"float32\"), b: Tensor((14,), \"float32\")):\n"
                             "    return power(a, b)\n", args, 2);
    for (int i = 0; i < 14; i++) want[i] = (float)pow(tget(args[0], i), tget(args[1], i));
    check_vals(out, want, 14, 1e-6, "power edges");
    release_all(args, 2);
    mt_tensor_release(out);

    /* weak literals on either side take the tensor's dtype */
    double xv[5] = {0.25, 1, 2, 3, 9};
    shape s5 = {1, {5}};
    mt_tensor *x = tensor_of(MT_FLOAT64, &s5, xv);
    out = run_src("def f(x: Tensor((5,), \"float64\")):\n    return power(x, 2) + power(2, x) + power(x, 0.5)\n", &x, 1);
    assert_int_equal(mt_tensor_dtype(out), MT_FLOAT64);
    for (int i = 0; i < 5; i++) want[i] = xv[i] * xv[i] + pow(2, xv[i]) + sqrt(xv[i]);
    check_vals(out, want, 5, 1e-14, "power with literals");
    mt_tensor_release(out);
    mt_tensor_release(x);
}

/* Integer power by repeated multiplication in int64 (exact for the ranges used). */
static int64_t ipow(int64_t b, int64_t e) {
    int64_t r = 1;
    while (e-- > 0) r *= b;
    return r;
}

static void int_power_case(mt_dtype dt, int64_t blo, int64_t bhi, int64_t emax) {
    enum { N = 300 };
    int64_t b[N], e[N], want[N];
    for (int i = 0; i < N; i++) {
        b[i] = rnd_int(blo, bhi);
        e[i] = rnd_int(0, emax);
        want[i] = ipow(b[i], e[i]);
    }
    shape s = {1, {N}};
    char src[256];
    snprintf(src, sizeof src, "def f(a: Tensor((%d,), \"%s\"), b: Tensor((%d,), \"%s\")):\n    return power(a, b)\n",
             N, mt_dtype_str(dt), N, mt_dtype_str(dt));
    mt_tensor *args[2] = {tensor_of_ints(dt, &s, b), tensor_of_ints(dt, &s, e)};
    mt_tensor *out = run_src(src, args, 2);
    assert_int_equal(mt_tensor_dtype(out), dt);
    check_ints(out, want, N, src);
    release_all(args, 2);
    mt_tensor_release(out);
}

/* Fixed cases of one dtype: base, exponent, expected. */
static void int_power_fixed(mt_dtype dt, const int64_t (*cases)[3], int n) {
    int64_t b[16], e[16], want[16];
    for (int i = 0; i < n; i++) b[i] = cases[i][0], e[i] = cases[i][1], want[i] = cases[i][2];
    shape s = {1, {n}};
    char src[256];
    snprintf(src, sizeof src, "def f(a: Tensor((%d,), \"%s\"), b: Tensor((%d,), \"%s\")):\n    return power(a, b)\n",
             n, mt_dtype_str(dt), n, mt_dtype_str(dt));
    mt_tensor *args[2] = {tensor_of_ints(dt, &s, b), tensor_of_ints(dt, &s, e)};
    mt_tensor *out = run_src(src, args, 2);
    check_ints(out, want, n, src);
    release_all(args, 2);
    mt_tensor_release(out);
}

static void test_power_int(void **st) {
    int_power_case(MT_INT32, -12, 12, 8);   /* |r| <= 12^8 < 2^31 */
    int_power_case(MT_INT8, -5, 5, 3);      /* |r| <= 125 */
    int_power_case(MT_UINT8, 0, 15, 2);     /* r <= 225 */
    int_power_case(MT_INT64, -30, 30, 10);  /* |r| <= 30^10 < 2^53 */

    /* negative exponents: the exact value truncated toward zero, 0 for 0 */
    static const int64_t neg32[][3] = {
        {2, -1, 0}, {1, -5, 1}, {-1, -3, -1}, {-1, -2, 1}, {0, -1, 0}, {-2, -1, 0}, {0, 0, 1}, {7, 0, 1},
        {0, 3, 0}, {-7, 1, -7},
        /* beyond the dtype: saturation, not wrapping */
        {2, 31, INT32_MAX}, {-2, 31, INT32_MIN}, {-3, 21, INT32_MIN}, {3, 40, INT32_MAX}, {2, 30, 1 << 30},
    };
    int_power_fixed(MT_INT32, neg32, 15);
    static const int64_t i8[][3] = {{2, 7, 127}, {-2, 7, -128}, {2, 6, 64}, {-1, -1, -1}, {0, -3, 0}, {3, 5, 127}};
    int_power_fixed(MT_INT8, i8, 6);
    static const int64_t u8[][3] = {{2, 8, 255}, {2, 7, 128}, {255, 1, 255}, {0, 0, 1}, {16, 2, 255}};
    int_power_fixed(MT_UINT8, u8, 5);
    static const int64_t i64[][3] = {
        {3, 33, 5559060566555523LL}, /* just under 2^53: exact */
        {2, 62, 4611686018427387904LL}, {-2, 63, INT64_MIN}, {3, 40, INT64_MAX}, {-3, 41, INT64_MIN},
        {1, -9, 1}, {0, -9, 0}, {10, 15, 1000000000000000LL},
    };
    int_power_fixed(MT_INT64, i64, 8);
}

/* ---- maximum, minimum ----------------------------------------------------------- */

/* NumPy's definitions: NaN propagates; ties give the first operand. */
static double r_maximum(double x, double y) { return (x >= y || isnan(x)) ? x : y; }
static double r_minimum(double x, double y) { return (x <= y || isnan(x)) ? x : y; }

/* Mostly random, with exact ties, zeros of both signs, infinities and NaNs. */
static double g_special(void) {
    static const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0};
    double u = rnd();
    if (u < -0.6) return sp[rnd_int(0, 6)];
    return (double)(int64_t)(u * 8) / 4; /* coarse grid: many ties */
}

static void test_maximum_minimum_float(void **st) {
    static const mt_dtype dts[] = {MT_FLOAT32, MT_FLOAT64, MT_FLOAT16, MT_BFLOAT16};
    for (int i = 0; i < 4; i++) {
        binary_case("maximum(a, b)", dts[i], g_special, g_special, r_maximum, 0);
        binary_case("minimum(a, b)", dts[i], g_special, g_special, r_minimum, 0);
    }
    /* the decisions themselves */
    static const double xa[] = {NAN, 1, -0.0, 0.0, NAN, INFINITY, -INFINITY};
    static const double xb[] = {1, NAN, 0.0, -0.0, NAN, NAN, 5};
    shape s = {1, {7}};
    mt_tensor *args[2] = {tensor_of(MT_FLOAT32, &s, xa), tensor_of(MT_FLOAT32, &s, xb)};
    mt_tensor *mx = run_src("def f(a: Tensor((7,), \"float32\"), b: Tensor((7,), \"float32\")):\n"
                            "    return maximum(a, b)\n", args, 2);
    mt_tensor *mn = run_src("def f(a: Tensor((7,), \"float32\"), b: Tensor((7,), \"float32\")):\n"
                            "    return minimum(a, b)\n", args, 2);
    const float *p = mt_tensor_data(mx), *q = mt_tensor_data(mn);
    assert_true(isnan(p[0]) && isnan(p[1]) && isnan(p[4]) && isnan(p[5]));
    assert_true(isnan(q[0]) && isnan(q[1]) && isnan(q[4]) && isnan(q[5]));
    assert_true(p[2] == 0 && signbit(p[2]));  /* maximum(-0.0, 0.0): the first */
    assert_true(p[3] == 0 && !signbit(p[3])); /* maximum(0.0, -0.0): the first */
    assert_true(q[2] == 0 && signbit(q[2]));
    assert_true(p[6] == 5 && q[6] == -INFINITY);
    release_all(args, 2);
    mt_tensor_release(mx);
    mt_tensor_release(mn);

    /* literals: maximum(x, 0.0) is relu; minimum(6, x) clamps */
    double xv[6] = {-3, -0.5, 0, 2, 7, 100};
    shape s6 = {1, {6}};
    mt_tensor *x = tensor_of(MT_FLOAT32, &s6, xv);
    mt_tensor *y = run_src("def f(x: Tensor((6,), \"float32\")):\n    return minimum(6, maximum(x, 0.0))\n", &x, 1);
    double want[6] = {0, 0, 0, 2, 6, 6};
    check_vals(y, want, 6, 0, "relu6");
    mt_tensor_release(y);
    mt_tensor_release(x);
}

static void test_maximum_minimum_int(void **st) {
    static const mt_dtype dts[] = {MT_INT8, MT_UINT8, MT_INT32, MT_INT64};
    for (int di = 0; di < 4; di++) {
        mt_dtype dt = dts[di];
        int64_t a[40], b[40], wmax[40], wmin[40];
        int n = int_values(dt, a, 40);
        for (int i = 0; i < n; i++) b[i] = a[(i * 7 + 3) % n];
        for (int i = 0; i < n; i++) wmax[i] = a[i] > b[i] ? a[i] : b[i], wmin[i] = a[i] < b[i] ? a[i] : b[i];
        shape s = {1, {n}};
        char src[256];
        mt_tensor *args[2] = {tensor_of_ints(dt, &s, a), tensor_of_ints(dt, &s, b)};
        snprintf(src, sizeof src, "def f(a: Tensor((%d,), \"%s\"), b: Tensor((%d,), \"%s\")):\n    return maximum(a, b)\n",
                 n, mt_dtype_str(dt), n, mt_dtype_str(dt));
        mt_tensor *out = run_src(src, args, 2);
        check_ints(out, wmax, n, src);
        mt_tensor_release(out);
        snprintf(src, sizeof src, "def f(a: Tensor((%d,), \"%s\"), b: Tensor((%d,), \"%s\")):\n    return minimum(a, b)\n",
                 n, mt_dtype_str(dt), n, mt_dtype_str(dt));
        out = run_src(src, args, 2);
        check_ints(out, wmin, n, src);
        mt_tensor_release(out);
        release_all(args, 2);
    }
}

/* ---- where -------------------------------------------------------------------------- */

static const struct {
    shape c, x, y, out;
} where_cases[] = {
    {{2, {4, 1}}, {2, {1, 5}}, {1, {5}}, {2, {4, 5}}},
    {{3, {2, 1, 3}}, {2, {4, 1}}, {1, {1}}, {3, {2, 4, 3}}},
    {{1, {7}}, {1, {7}}, {1, {7}}, {1, {7}}},
    {{1, {1}}, {1, {33}}, {2, {1, 33}}, {2, {1, 33}}},
    {{1, {1000}}, {1, {1000}}, {1, {1}}, {1, {1000}}},
    {{2, {3, 1}}, {1, {1}}, {2, {1, 17}}, {2, {3, 17}}},
};

static void where_case(mt_dtype dt) {
    for (size_t ci = 0; ci < sizeof where_cases / sizeof where_cases[0]; ci++) {
        const shape *sc = &where_cases[ci].c, *sx = &where_cases[ci].x, *sy = &where_cases[ci].y;
        const shape *so = &where_cases[ci].out;
        char shc[64], shx[64], shy[64], src[512];
        shape_src(shc, sizeof shc, sc);
        shape_src(shx, sizeof shx, sx);
        shape_src(shy, sizeof shy, sy);
        const char *d = mt_dtype_str(dt);
        snprintf(src, sizeof src,
                 "def f(c: Tensor(%s, \"bool\"), x: Tensor(%s, \"%s\"), y: Tensor(%s, \"%s\")):\n"
                 "    return where(c, x, y)\n", shc, shx, d, shy, d);
        int64_t nc = numel(sc), nx = numel(sx), ny = numel(sy), no = numel(so);
        int64_t *vc = malloc(sizeof(int64_t) * (size_t)nc), *vx = malloc(sizeof(int64_t) * (size_t)nx);
        int64_t *vy = malloc(sizeof(int64_t) * (size_t)ny), *want = malloc(sizeof(int64_t) * (size_t)no);
        double *wantf = malloc(sizeof(double) * (size_t)no);
        for (int64_t i = 0; i < nc; i++) vc[i] = rnd() < 0;
        for (int64_t i = 0; i < nx; i++) vx[i] = rnd_int(-100, 100) * (dt == MT_INT64 ? 100000000000LL : 1);
        for (int64_t i = 0; i < ny; i++) vy[i] = rnd_int(-100, 100) * (dt == MT_INT64 ? 100000000000LL : 1);
        mt_tensor *args[3] = {tensor_of_ints(MT_BOOL, sc, vc), tensor_of_ints(dt, sx, vx), tensor_of_ints(dt, sy, vy)};
        mt_tensor *out = run_src(src, args, 3);
        assert_int_equal(mt_tensor_dtype(out), dt);
        assert_int_equal(mt_tensor_ndim(out), so->ndim);
        for (int k = 0; k < so->ndim; k++) assert_int_equal(mt_tensor_shape(out)[k], so->dims[k]);
        for (int64_t i = 0; i < no; i++) {
            bool c = vc[bidx(args[0], so, i)];
            want[i] = c ? vx[bidx(args[1], so, i)] : vy[bidx(args[2], so, i)];
            wantf[i] = (double)want[i];
        }
        if (is_float_dt(dt)) check_vals(out, wantf, no, 0, src);
        else check_ints(out, want, no, src);
        free(vc);
        free(vx);
        free(vy);
        free(want);
        free(wantf);
        release_all(args, 3);
        mt_tensor_release(out);
    }
}

static void test_where(void **st) {
    where_case(MT_FLOAT32);
    where_case(MT_INT64);
    where_case(MT_FLOAT16);
    where_case(MT_INT8);

    /* literal arms take the other arm's dtype; NaN passes through untouched */
    double xv[4] = {1.5, NAN, -2, 4};
    int64_t cv[4] = {1, 1, 0, 1};
    shape s = {1, {4}};
    mt_tensor *args[2] = {tensor_of_ints(MT_BOOL, &s, cv), tensor_of(MT_FLOAT64, &s, xv)};
    mt_tensor *out = run_src("def f(c: Tensor((4,), \"bool\"), x: Tensor((4,), \"float64\")):\n"
                             "    return where(c, x, 0) + where(c, 1, x)\n", args, 2);
    assert_int_equal(mt_tensor_dtype(out), MT_FLOAT64);
    double want[4] = {2.5, NAN, -2, 5};
    check_vals(out, want, 4, 0, "where with literals");
    mt_tensor_release(out);
    release_all(args, 2);
}

/* ---- astype ------------------------------------------------------------------------- */

static const mt_dtype all_dtypes[] = {MT_FLOAT32, MT_FLOAT64, MT_FLOAT16, MT_INT8,
                                      MT_INT32, MT_INT64, MT_UINT8, MT_BOOL, MT_BFLOAT16};

static const double float_samples[] = {
    0.0, -0.0, 0.1, 1.5, -1.5, 2.5, -2.7, 0.99, -0.99, 127.9, 128, -128.5, -129, 255.5, 256, 300, -300,
    65504, 65519, 65520, 1e10, -1e10, 3e9, -3e9, 2147483520.0, 9.3e18, -9.3e18, 1e20, -1e20,
    INFINITY, -INFINITY, NAN,
};

static void int_limits(mt_dtype dt, int64_t *lo, int64_t *hi) {
    switch (dt) {
    case MT_INT8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case MT_UINT8: *lo = 0, *hi = UINT8_MAX; break;
    case MT_INT32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
    }
}

/* Float -> int: toward zero, saturating at the dtype's limits, NaN -> 0. */
static int64_t sat(mt_dtype dt, double v) {
    int64_t lo, hi;
    int_limits(dt, &lo, &hi);
    if (isnan(v)) return 0;
    if (v <= (double)lo) return lo;
    if (v >= (double)hi) return hi; /* (double)INT64_MAX is 2^63, already out of range */
    return (int64_t)trunc(v);
}

static void astype_case(mt_dtype from, mt_dtype to) {
    enum { CAP = 48 };
    double fv[CAP];
    int64_t iv[CAP];
    int n = 0;
    bool from_float = is_float_dt(from);
    if (from_float) {
        for (size_t i = 0; i < sizeof float_samples / sizeof float_samples[0]; i++) fv[n++] = float_samples[i];
    } else {
        for (size_t i = 0; i < sizeof int_samples / sizeof int_samples[0] && n < CAP; i++)
            if (fits(from, int_samples[i])) iv[n++] = int_samples[i];
    }
    shape s = {1, {n}};
    mt_tensor *x = from_float ? tensor_of(from, &s, fv) : tensor_of_ints(from, &s, iv);
    char src[256];
    snprintf(src, sizeof src, "def f(x: Tensor((%d,), \"%s\")):\n    y = astype(x, \"%s\")\n    return y\n", n,
             mt_dtype_str(from), mt_dtype_str(to));
    mt_tensor *y = run_src(src, &x, 1);
    assert_int_equal(mt_tensor_dtype(y), to);
    double wf[CAP];
    int64_t wi[CAP];
    for (int i = 0; i < n; i++) {
        double d = from_float ? tget(x, i) : 0; /* the stored (rounded) value */
        int64_t k = from_float ? 0 : iget(x, i);
        if (to == MT_BOOL) wi[i] = from_float ? d != 0 : k != 0; /* NaN != 0: True */
        else if (is_float_dt(to)) wf[i] = from_float ? round_to(to, d) : round_to(to, (double)k);
        else wi[i] = from_float ? sat(to, d) : wrap(to, k);
    }
    if (to == MT_FLOAT32 && !from_float) /* int64 -> float32 rounds once, as C does */
        for (int i = 0; i < n; i++) wf[i] = (float)iget(x, i);
    if (is_float_dt(to)) check_vals(y, wf, n, 0, src);
    else check_ints(y, wi, n, src);
    mt_tensor_release(x);
    mt_tensor_release(y);
}

static void test_astype_all_pairs(void **st) {
    int n = (int)(sizeof all_dtypes / sizeof all_dtypes[0]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) astype_case(all_dtypes[i], all_dtypes[j]);
}

/* float64 -> float16 rounds once: 1 + 2^-11 + 2^-30 is just above a tie of
 * half, so it rounds up; through float32 it would become the tie and round
 * to even (down). Then casts inside a fused chain. */
static void test_astype_chain(void **st) {
    double xv[3] = {1 + 0x1p-11 + 0x1p-30, -2.75, 1e6};
    shape s = {1, {3}};
    mt_tensor *x = tensor_of(MT_FLOAT64, &s, xv);
    mt_tensor *y = run_src("def f(x: Tensor((3,), \"float64\")):\n    y = astype(x, \"float16\")\n    return y\n", &x, 1);
    const uint16_t *h = mt_tensor_data(y);
    assert_int_equal(h[0], 0x3c01); /* up: a single rounding from float64 */
    assert_int_equal(h[1], f2h(-2.75));
    assert_int_equal(h[2], 0x7c00); /* overflow: inf */
    mt_tensor_release(y);
    y = run_src("def f(x: Tensor((3,), \"float64\")):\n    y = astype(astype(x * 2, \"int32\"), \"float32\") + 0.5\n    return y\n", &x, 1);
    double want[3] = {2.5, -4.5, 2000000.5}; /* -5.5 truncates toward zero to -5 */
    check_vals(y, want, 3, 0, "astype chain");
    mt_tensor_release(y);
    mt_tensor_release(x);
}

/* ---- creation -------------------------------------------------------------------------- */

static void expect_filled(const char *src, mt_dtype dt, const shape *s, double v) {
    mt_tensor *y = run_src(src, NULL, 0);
    assert_int_equal(mt_tensor_dtype(y), dt);
    assert_int_equal(mt_tensor_ndim(y), s->ndim);
    for (int d = 0; d < s->ndim; d++) assert_int_equal(mt_tensor_shape(y)[d], s->dims[d]);
    int64_t n = numel(s);
    double *want = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) want[i] = v;
    check_vals(y, want, n, 0, src);
    free(want);
    mt_tensor_release(y);
}

static void test_creation(void **st) {
    shape s23 = {2, {2, 3}}, s4 = {1, {4}}, s312 = {3, {3, 1, 2}}, s0 = {0, {0}}, s33 = {1, {33}};
    expect_filled("def f():\n    return zeros((2, 3))\n", MT_FLOAT32, &s23, 0.0);
    expect_filled("def f():\n    return zeros((4,), \"int64\")\n", MT_INT64, &s4, 0);
    expect_filled("def f():\n    return zeros(shape=(4,), dtype=\"bool\")\n", MT_BOOL, &s4, 0);
    expect_filled("def f():\n    return ones((3, 1, 2), \"uint8\")\n", MT_UINT8, &s312, 1);
    expect_filled("def f():\n    return ones(())\n", MT_FLOAT32, &s0, 1);
    expect_filled("def f():\n    return ones((33,), dtype=\"float16\")\n", MT_FLOAT16, &s33, 1);
    expect_filled("def f():\n    return full((2, 3), 2.5)\n", MT_FLOAT32, &s23, 2.5);
    expect_filled("def f():\n    return full((4,), -3, \"int8\")\n", MT_INT8, &s4, -3);
    expect_filled("def f():\n    return full((4,), 0.1, \"float64\")\n", MT_FLOAT64, &s4, 0.1);
    expect_filled("def f():\n    return full((4,), 0.1, \"float16\")\n", MT_FLOAT16, &s4, h2d(0x2e66));
    expect_filled("def f():\n    return full((4,), 0.1, \"bfloat16\")\n", MT_BFLOAT16, &s4, b2d(0x3dcd));
    expect_filled("def f():\n    return ones((33,), dtype=\"bfloat16\")\n", MT_BFLOAT16, &s33, 1);
    expect_filled("def f():\n    return full((4,), 1e40, \"float32\")\n", MT_FLOAT32, &s4, INFINITY);
    expect_filled("def f():\n    return full((4,), 7, \"bool\")\n", MT_BOOL, &s4, 1);
    expect_filled("def f():\n    return full((4,), -2.0, \"int64\")\n", MT_INT64, &s4, -2);
    expect_filled("def f():\n    return full((4,), 255, \"uint8\")\n", MT_UINT8, &s4, 255);
    expect_filled("def f():\n    return full(fill_value=-0.0, shape=(4,))\n", MT_FLOAT32, &s4, -0.0);

    /* full int64 beyond 2^53 is exact only if representable: 2^62 is */
    mt_tensor *y = run_src("def f():\n    return full((2,), 4611686018427387904, \"int64\")\n", NULL, 0);
    assert_true(((int64_t *)mt_tensor_data(y))[1] == 4611686018427387904LL);
    mt_tensor_release(y);

    /* fused with a parameter, and symbolic dims bound by the parameter */
    double xv[21];
    for (int i = 0; i < 21; i++) xv[i] = i - 10;
    shape s73 = {2, {7, 3}};
    mt_tensor *x = tensor_of(MT_FLOAT32, &s73, xv);
    mt_kernel *k = compile_ok("def f(x: Tensor((\"n\", 3), \"float32\")):\n"
                              "    y = x * full((\"n\", 3), 2.0) + ones((3,)) - zeros((\"n\", 1))\n    return y\n");
    y = run_kernel(k, &x, 1);
    double want[21];
    for (int i = 0; i < 21; i++) want[i] = 2 * xv[i] + 1;
    check_vals(y, want, 21, 0, "creation fused");
    mt_tensor_release(y);
    mt_kernel_release(k);
    k = compile_ok("def f(x: Tensor((\"n\", 3), \"float32\")):\n    return zeros((\"n\",), \"int32\")\n");
    y = run_kernel(k, &x, 1);
    assert_int_equal(mt_tensor_ndim(y), 1);
    assert_int_equal(mt_tensor_shape(y)[0], 7);
    for (int i = 0; i < 7; i++) assert_int_equal(((int32_t *)mt_tensor_data(y))[i], 0);
    mt_tensor_release(y);
    mt_kernel_release(k);
    mt_tensor_release(x);
}

/* ---- graph and fusion ------------------------------------------------------------------ */

/* The ops print under their names and fuse into one kernel. */
static void test_graph_and_fusion(void **st) {
    mt_kernel *k = compile_ok(
        "def f(c: Tensor((4, 8), \"bool\"), a: Tensor((4, 8), \"float32\"), b: Tensor((8,), \"float32\")):\n"
        "    t = maximum(a, b)\n    u = where(c, t, 0.0)\n    v = floor(sin(u) * 4.0) + power(abs(u), 2)\n"
        "    w = astype(round(v), \"int32\")\n    return w\n");
    const char *g = mt_kernel_dump(k, MT_STAGE_GRAPH);
    assert_non_null(g);
    static const char *const names[] = {"R.maximum(", "R.where(", "R.sin(", "R.floor(", "R.abs(", "R.power(",
                                        "R.round(", "R.astype("};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strstr(g, names[i])) fail_msg("%s missing from the graph:\n%s", names[i], g);
    const char *opt = mt_kernel_dump(k, MT_STAGE_GRAPH_OPT);
    assert_non_null(opt);
    const char *first = strstr(opt, "R.call_tir(");
    assert_non_null(first);
    if (strstr(first + 1, "R.call_tir(")) fail_msg("expected one fused kernel:\n%s", opt);

    int64_t cv[32];
    double av[32], bv[8];
    for (int i = 0; i < 32; i++) cv[i] = i % 3 != 0, av[i] = 3 * rnd();
    for (int i = 0; i < 8; i++) bv[i] = 3 * rnd();
    shape sc = {2, {4, 8}}, sb = {1, {8}};
    mt_tensor *args[3] = {tensor_of_ints(MT_BOOL, &sc, cv), tensor_of(MT_FLOAT32, &sc, av), tensor_of(MT_FLOAT32, &sb, bv)};
    mt_tensor *out = run_kernel(k, args, 3);
    assert_int_equal(mt_tensor_dtype(out), MT_INT32);
    for (int i = 0; i < 32; i++) {
        float a = (float)tget(args[1], i), b = (float)tget(args[2], i % 8);
        float u = cv[i] ? (a >= b ? a : b) : 0.0f;
        float v = floorf(sinf(u) * 4.0f) + powf(fabsf(u), 2.0f);
        /* sinf and powf may differ from LLVM's by an ulp; the int result only near .5 ties */
        int32_t want = (int32_t)nearbyintf(v);
        int32_t got = ((int32_t *)mt_tensor_data(out))[i];
        if (got != want && fabsf(v - truncf(v) - 0.5f) > 1e-4f)
            fail_msg("element %d: got %d, want %d", i, got, want);
    }
    release_all(args, 3);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

/* A few diagnostics (the error corpus, tests/errors/corpus/math_*.py, has
 * the places). */
static void test_errors(void **st) {
    expect_error("def f(x: Tensor((2,), \"int32\")):\n    return sin(x)\n", MT_ERR_TYPE,
                 "'sin' needs a float tensor, but 'x' is int32; convert with astype");
    expect_error("def f(x: Tensor((2,), \"float32\")):\n    return gelu(x, approximate=\"exact\")\n", MT_ERR_TYPE,
                 "'approximate' of 'gelu' must be \"none\" or \"tanh\", got \"exact\"");
    expect_error("def f(x: Tensor((2,), \"bool\")):\n    return sign(x)\n", MT_ERR_TYPE,
                 "'sign' is not defined on bool tensors; convert with astype");
    expect_error("def f(c: Tensor((2,), \"int32\"), x: Tensor((2,), \"float32\")):\n    return where(c, x, x)\n",
                 MT_ERR_TYPE, "condition of 'where' must be a bool tensor, but 'c' is int32");
    expect_error("def f(c: Tensor((2, 1), \"bool\"), x: Tensor((3,), \"float32\"), y: Tensor((4, 1), \"float32\")):\n"
                 "    return where(c, x, y)\n",
                 MT_ERR_SHAPE, "cannot broadcast shapes (2, 1), (3,) and (4, 1) in 'where' (operands 'c', 'x' and 'y')");
    expect_error("def f():\n    return ones((2, -1))\n", MT_ERR_SHAPE, "ones: dimension -1 is not allowed");
    expect_error("def f():\n    return full((2,), 0.1, \"int64\")\n", MT_ERR_TYPE,
                 "fill value 0.1 of 'full' is not representable as int64");
    expect_error("def f():\n    return full((2,), -1, \"uint8\")\n", MT_ERR_TYPE,
                 "fill value -1 of 'full' is not representable as uint8");
    expect_error("def f(a: Tensor((2,), \"int32\"), b: Tensor((2,), \"int8\")):\n    return maximum(a, b)\n",
                 MT_ERR_TYPE, "operands of 'maximum' have different dtypes: 'a' is int32 but 'b' is int8; convert one with astype");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log),
        cmocka_unit_test(test_rsqrt),
        cmocka_unit_test(test_sin_cos),
        cmocka_unit_test(test_erf),
        cmocka_unit_test(test_gelu),
        cmocka_unit_test(test_floor_ceil_round),
        cmocka_unit_test(test_abs_sign_float),
        cmocka_unit_test(test_unary_edges),
        cmocka_unit_test(test_abs_sign_int),
        cmocka_unit_test(test_power_float),
        cmocka_unit_test(test_power_int),
        cmocka_unit_test(test_maximum_minimum_float),
        cmocka_unit_test(test_maximum_minimum_int),
        cmocka_unit_test(test_where),
        cmocka_unit_test(test_astype_all_pairs),
        cmocka_unit_test(test_astype_chain),
        cmocka_unit_test(test_creation),
        cmocka_unit_test(test_graph_and_fusion),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
