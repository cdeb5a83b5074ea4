/*
 * test_bfloat16.c -- the bfloat16 dtype end to end, through the public API:
 * on the CPU, and (registered twice, tests/e2e.cmake) under target cuda
 * emulated, where the GPU's conversions must give the same bits.
 *
 * Conversions, bit for bit, against a reference written here from the
 * definition (not the library's code): the nearest bfloat16 of the exact
 * value, ties to even, found by bisection over the bit patterns; |x| at or
 * past 2^128 - 2^119 (the midpoint between the largest finite and 2^128)
 * gives inf; every NaN gives the canonical NaN 0x7fff (CUDA's cvt.rn.bf16).
 *
 *   float32 -> bfloat16    ties both ways, subnormals, overflow, NaN, inf,
 *                          -0, and random bit patterns of every exponent
 *   float64 -> bfloat16    rounded once (a value just above a bfloat16 tie
 *                          that float32 would round onto the tie), tiny,
 *                          huge, random
 *   int32/int64 -> bf16    rounded once (2^24 + 2^16 + 1: float32 alone
 *                          would make a tie), the extremes
 *   float16 -> bfloat16    every float16
 *   bfloat16 -> float32, float64, float16 and int32: every bfloat16 (exact
 *                          widening; float16 rounded to nearest even; int32
 *                          truncated and saturated, NaN -> 0)
 *
 * Numerics against a plain double reference at sizes 1, 7, 1000 and 4097
 * (inputs exact bfloat16 values): an elementwise chain, a row sum, softmax
 * and a matmul. A bfloat16 result is computed in float32 and rounded once,
 * so it is within half a bfloat16 ulp (2^-8 relative: 8 significant bits)
 * of the float32 value; the bounds below add float32's error (and that of
 * the math functions, a few ulp of float32) to that.
 *
 * The language: a literal keeps bfloat16 (and is rounded to it), float16
 * and bfloat16 operands do not mix (an error naming both), the dtype
 * prints and parses. The CPU's LLVM code converts with integer instructions
 * (no libcall, no `bfloat` type).
 */
#include <math.h>
#include <stdbool.h>

#include "test_util.h"

/* ---- the reference --------------------------------------------------------- */

static double bf_value(uint16_t h) { return test_bf16_value(h); }

/* The nearest bfloat16 of d, ties to even (test_util.h). */
static uint16_t ref_bf16(double d) { return test_bf16_round(d); }

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float f32_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- running ----------------------------------------------------------------- */

static mt_tensor *vec(mt_dtype dt, int64_t n, const void *data) {
    int64_t shape[1] = {n};
    mt_tensor *t = mt_tensor_create(dt, 1, shape);
    assert_non_null(t);
    if (n) memcpy(mt_tensor_data(t), data, (size_t)n * mt_dtype_size(dt));
    return t;
}

/* out = f(x) for a one-parameter kernel src; the result (release it). */
static mt_tensor *run1(const char *src, mt_tensor *x) {
    mt_kernel *k = compile_ok(src);
    mt_tensor *out = NULL;
    mt_diag d;
    if (test_kernel_run(k, &x, 1, &out, 1, &d) != MT_OK) fail_msg("%s: %s", src, d.text);
    mt_kernel_release(k);
    return out;
}

/* x (n values of dtype from) cast to bfloat16; the bits. */
static const uint16_t *to_bf16(const char *from, mt_dtype dt, int64_t n, const void *x, mt_tensor **keep) {
    char src[160];
    snprintf(src, sizeof src, "def f(x: Tensor((\"n\",), \"%s\")):\n    return x.astype(\"bfloat16\")\n", from);
    mt_tensor *in = vec(dt, n, x);
    mt_tensor *out = run1(src, in);
    mt_tensor_release(in);
    assert_int_equal(mt_tensor_dtype(out), MT_BFLOAT16);
    *keep = out;
    return mt_tensor_data(out);
}

static void check_bits(const char *what, int64_t n, const uint16_t *got, const uint16_t *want, const double *in) {
    for (int64_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("%s [%lld] of %.17g (%a): got 0x%04x, want 0x%04x", what, (long long)i, in[i], in[i],
                     got[i], want[i]);
}

/* ---- conversions --------------------------------------------------------------- */

static void test_from_float32(void **st) {
    (void)st;
    static const uint32_t special[] = {
        0x00000000, 0x80000000,             /* +-0 */
        0x3f800000, 0x3f808000, 0x3f818000, /* 1, tie to even down (0x3f80), tie up (0x3f82) */
        0x3f808001, 0x3f807fff,             /* just above / below a tie */
        0x00008000, 0x00018000, 0x00010000, /* subnormal ties: to 0, to 0x0002; exact 0x0001 */
        0x00007fff, 0x007fffff, 0x00800000, /* tiny, largest subnormal (rounds to 0x0080), smallest normal */
        0x7f7fffff, 0x7f7f8000, 0x7f7f7fff, /* overflow to inf; tie at the top (odd: up to inf); stays */
        0x7f800000, 0xff800000,             /* inf */
        0x7fc00000, 0xffc00001, 0x7f800001, /* NaNs, signalling too: all to 0x7fff */
        0xbf808000, 0xc0490fdb,             /* negative tie; -pi */
    };
    enum { N = 4097 };
    static float x[N];
    static double xd[N];
    static uint16_t want[N];
    int ns = (int)(sizeof special / sizeof special[0]);
    for (int i = 0; i < N; i++) {
        uint32_t u = i < ns ? special[i] : (uint32_t)next();
        if (i >= ns && i % 3 == 0) u &= 0x807fffffu; /* a third subnormal or zero */
        x[i] = f32_of(u);
        xd[i] = x[i];
        want[i] = ref_bf16(xd[i]);
    }
    assert_int_equal(want[3], 0x3f80);
    assert_int_equal(want[4], 0x3f82);
    assert_int_equal(want[14], 0x7f80);
    const int sizes[] = {1, 7, 1000, N};
    for (int s = 0; s < 4; s++) {
        mt_tensor *keep;
        const uint16_t *got = to_bf16("float32", MT_FLOAT32, sizes[s], x, &keep);
        check_bits("float32 -> bfloat16", sizes[s], got, want, xd);
        mt_tensor_release(keep);
    }
}

static void test_from_float64(void **st) {
    (void)st;
    enum { N = 1000 };
    static double x[N];
    static uint16_t want[N];
    const double special[] = {
        1 + 0x1p-8 + 0x1p-30,  /* float32 would round it onto the tie 1 + 2^-8 (then down to 1): 1 + 2^-7 */
        -(1 + 0x1p-8 + 0x1p-30),
        1 + 0x1p-8,            /* the tie itself: to even, 1 */
        1 + 0x1p-8 - 0x1p-40,  /* just below: 1 */
        0x1p-140, 0x1p-134, 0x1.8p-134, 0x1p-200, /* subnormal: exact, tie (to 0), above the tie, to 0 */
        3.0e38, 0x1.ffp127, 1e300, -1e300, 0x1p128 - 0x1p119, 0x1p128 - 0x1p119 - 0x1p80, /* overflow and not */
        INFINITY, -INFINITY, NAN, 0.0, -0.0, 0.1, -1.0 / 3,
    };
    int ns = (int)(sizeof special / sizeof special[0]);
    for (int i = 0; i < N; i++) {
        if (i < ns) x[i] = special[i];
        else {
            uint64_t r = next();
            x[i] = ldexp((double)(r >> 11) * 0x1p-53 + 0.5, (int)(r % 260) - 140) * (r & 1 ? -1 : 1);
        }
        want[i] = ref_bf16(x[i]);
    }
    assert_int_equal(want[0], 0x3f81);
    assert_int_equal(want[2], 0x3f80);
    mt_tensor *keep;
    const uint16_t *got = to_bf16("float64", MT_FLOAT64, N, x, &keep);
    check_bits("float64 -> bfloat16", N, got, want, x);
    mt_tensor_release(keep);
}

/* |x| rounded to 8 significant bits, ties to even, exactly (as a double:
 * at most 8 bits times a power of two), with x's sign. */
static double round8(int64_t x) {
    uint64_t a = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
    int p = 63;
    while (p > 0 && !(a >> p)) p--;
    if (p < 8) return (double)x;
    int sh = p - 7;
    uint64_t keep = a >> sh, rem = a & ((UINT64_C(1) << sh) - 1), half = UINT64_C(1) << (sh - 1);
    if (rem > half || (rem == half && (keep & 1))) keep++;
    double v = ldexp((double)keep, sh);
    return x < 0 ? -v : v;
}

static void test_from_ints(void **st) {
    (void)st;
    enum { N = 1000 };
    static int32_t a[N];
    static int64_t b[N];
    static double ad[N], bd[N];
    static uint16_t wa[N], wb[N];
    const int64_t special[] = {0, 1, -1, 255, 257, 511, (1 << 24) + (1 << 16) + 1, -((1 << 24) + (1 << 16) + 1),
                               (1 << 24) + (1 << 16), INT32_MAX, INT32_MIN, 0x01808000,
                               (INT64_C(1) << 40) + (INT64_C(1) << 32) + 1, INT64_MAX, INT64_MIN,
                               INT64_MAX - 1, (INT64_C(1) << 62) + (INT64_C(1) << 54)};
    int ns = (int)(sizeof special / sizeof special[0]);
    for (int i = 0; i < N; i++) {
        uint64_t r = next();
        a[i] = i < ns ? (int32_t)special[i] : (int32_t)((int64_t)r >> (r % 32));
        b[i] = i < ns ? special[i] : (int64_t)r >> (r % 64);
        ad[i] = a[i];
        bd[i] = (double)b[i];
        wa[i] = ref_bf16(round8(a[i]));
        wb[i] = ref_bf16(round8(b[i]));
    }
    assert_int_equal(ref_bf16(round8((1 << 24) + (1 << 16) + 1)), 0x4b81); /* 2^24 + 2^17: rounded once */
    assert_int_equal(wb[12], ref_bf16(0x1p40 + 0x1p33));
    mt_tensor *keep;
    const uint16_t *got = to_bf16("int32", MT_INT32, N, a, &keep);
    check_bits("int32 -> bfloat16", N, got, wa, ad);
    mt_tensor_release(keep);
    got = to_bf16("int64", MT_INT64, N, b, &keep);
    check_bits("int64 -> bfloat16", N, got, wb, bd);
    mt_tensor_release(keep);
}

static void test_from_float16(void **st) {
    (void)st;
    enum { N = 65536 };
    static uint16_t h[N], want[N];
    static double hd[N];
    for (int i = 0; i < N; i++) {
        h[i] = (uint16_t)i;
        _Float16 v;
        memcpy(&v, &h[i], 2);
        hd[i] = (double)v;
        want[i] = ref_bf16(hd[i]);
    }
    mt_tensor *keep;
    const uint16_t *got = to_bf16("float16", MT_FLOAT16, N, h, &keep);
    check_bits("float16 -> bfloat16", N, got, want, hd);
    mt_tensor_release(keep);
}

/* Every bfloat16 to float32 (exact), float64, float16 and int32. */
static void test_from_bf16(void **st) {
    (void)st;
    enum { N = 65536 };
    static uint16_t h[N];
    for (int i = 0; i < N; i++) h[i] = (uint16_t)i;
    mt_tensor *in = vec(MT_BFLOAT16, N, h);
    static const char *const to[] = {"float32", "float64", "float16", "int32"};
    for (int t = 0; t < 4; t++) {
        char src[160];
        snprintf(src, sizeof src, "def f(x: Tensor((\"n\",), \"bfloat16\")):\n    return x.astype(\"%s\")\n", to[t]);
        mt_tensor *out = run1(src, in);
        const void *o = mt_tensor_data(out);
        for (int i = 0; i < N; i++) {
            double v = bf_value(h[i]);
            bool ok;
            if (t == 0) ok = isnan(v) ? isnan(((const float *)o)[i]) : f32_bits(((const float *)o)[i]) == (uint32_t)h[i] << 16;
            else if (t == 1) ok = isnan(v) ? isnan(((const double *)o)[i]) : ((const double *)o)[i] == v && signbit(((const double *)o)[i]) == signbit(v);
            else if (t == 2) {
                _Float16 w = (_Float16)v, g;
                memcpy(&g, (const uint16_t *)o + i, 2);
                ok = isnan(v) ? g != g : memcmp(&g, &w, 2) == 0;
            } else {
                int32_t want = isnan(v) ? 0 : v >= 0x1p31 ? INT32_MAX : v <= -0x1p31 ? INT32_MIN : (int32_t)v;
                ok = ((const int32_t *)o)[i] == want;
            }
            if (!ok) fail_msg("bfloat16 0x%04x (%g) -> %s is wrong", h[i], v, to[t]);
        }
        mt_tensor_release(out);
    }
    mt_tensor_release(in);
}

/* ---- numerics ---------------------------------------------------------------------- */

/* n exact bfloat16 values in [-lim, lim). */
static mt_tensor *random_bf16(int64_t n, double lim) {
    int64_t shape[1] = {n};
    mt_tensor *t = mt_tensor_create(MT_BFLOAT16, 1, shape);
    uint16_t *p = mt_tensor_data(t);
    for (int64_t i = 0; i < n; i++) p[i] = ref_bf16(((double)(next() >> 11) * 0x1p-53 * 2 - 1) * lim);
    return t;
}

static double at(const mt_tensor *t, int64_t i) {
    assert_int_equal(mt_tensor_dtype(t), MT_BFLOAT16);
    return bf_value(((const uint16_t *)mt_tensor_data(t))[i]);
}

static const double U = 0x1p-8; /* half a bfloat16 ulp, relative: the unit roundoff of 8 significant bits */

static void test_elementwise(void **st) {
    (void)st;
    const int sizes[] = {1, 7, 1000, 4097};
    mt_kernel *k = compile_ok("def f(x: Tensor((\"n\",), \"bfloat16\"), y: Tensor((\"n\",), \"bfloat16\")):\n"
                              "    return exp(x) * y + x * 0.1 - tanh(y) / 3.0\n");
    for (int s = 0; s < 4; s++) {
        int64_t n = sizes[s];
        mt_tensor *a[2] = {random_bf16(n, 4), random_bf16(n, 2)}, *out = NULL;
        mt_diag d;
        if (test_kernel_run(k, a, 2, &out, 1, &d) != MT_OK) fail_msg("%s", d.text);
        for (int64_t i = 0; i < n; i++) {
            double x = at(a[0], i), y = at(a[1], i);
            /* the literals are bfloat16 immediates: 0.1 and 3.0 as bfloat16 hold them */
            double terms = fabs(exp(x) * y) + fabs(x * 0.1) + fabs(tanh(y) / 3.0);
            double ref = exp(x) * y + x * bf_value(ref_bf16(0.1)) - tanh(y) / 3.0;
            double tol = U * fabs(ref) + 1e-6 * terms;
            double got = at(out, i);
            if (!(fabs(got - ref) <= tol))
                fail_msg("n=%lld [%lld]: x=%g y=%g: got %.9g, want %.9g (tol %.3g)", (long long)n, (long long)i, x,
                         y, got, ref, tol);
        }
        mt_tensor_release(a[0]);
        mt_tensor_release(a[1]);
        mt_tensor_release(out);
    }
    mt_kernel_release(k);
}

/* Row sums (accumulated in float32) and softmax of 3 rows. */
static void test_reductions(void **st) {
    (void)st;
    const int sizes[] = {1, 7, 1000, 4097};
    mt_kernel *ks = compile_ok("def f(x: Tensor((3, \"n\"), \"bfloat16\")):\n    return sum(x, axis=1)\n");
    mt_kernel *km = compile_ok("def f(x: Tensor((3, \"n\"), \"bfloat16\")):\n    return softmax(x, axis=-1)\n");
    for (int s = 0; s < 4; s++) {
        int64_t n = sizes[s], shape[2] = {3, n};
        mt_tensor *flat = random_bf16(3 * n, 3);
        mt_tensor *x = mt_tensor_create(MT_BFLOAT16, 2, shape);
        memcpy(mt_tensor_data(x), mt_tensor_data(flat), (size_t)(3 * n) * 2);
        mt_tensor *sum = NULL, *sm = NULL;
        mt_diag d;
        if (test_kernel_run(ks, &x, 1, &sum, 1, &d) != MT_OK) fail_msg("%s", d.text);
        if (test_kernel_run(km, &x, 1, &sm, 1, &d) != MT_OK) fail_msg("%s", d.text);
        for (int64_t r = 0; r < 3; r++) {
            double ref = 0, abs_sum = 0, mx = -INFINITY, z = 0;
            for (int64_t j = 0; j < n; j++) {
                double v = at(flat, r * n + j);
                ref += v, abs_sum += fabs(v), mx = fmax(mx, v);
            }
            for (int64_t j = 0; j < n; j++) z += exp(at(flat, r * n + j) - mx);
            double got = at(sum, r), tol = U * fabs(ref) + (double)n * 0x1p-24 * abs_sum;
            if (!(fabs(got - ref) <= tol))
                fail_msg("sum n=%lld row %lld: got %.9g, want %.9g (tol %.3g)", (long long)n, (long long)r, got, ref, tol);
            for (int64_t j = 0; j < n; j++) {
                double p = exp(at(flat, r * n + j) - mx) / z, g = at(sm, r * n + j);
                if (!(fabs(g - p) <= U * p + 1e-5 * p + 1e-30))
                    fail_msg("softmax n=%lld [%lld, %lld]: got %.9g, want %.9g", (long long)n, (long long)r,
                             (long long)j, g, p);
            }
        }
        mt_tensor_release(flat);
        mt_tensor_release(x);
        mt_tensor_release(sum);
        mt_tensor_release(sm);
    }
    mt_kernel_release(ks);
    mt_kernel_release(km);
}

/* relu(a @ b + bias) of bfloat16 (on the GPU: the tensor cores), m x 40 x n. */
static void test_matmul(void **st) {
    (void)st;
    const int ms[] = {1, 7, 1000, 4097};
    mt_kernel *k = compile_ok("def f(a: Tensor((\"m\", 40), \"bfloat16\"), b: Tensor((40, 9), \"bfloat16\"), "
                              "c: Tensor((9,), \"bfloat16\")):\n    return relu(a @ b + c)\n");
    for (int s = 0; s < 4; s++) {
        int64_t m = ms[s], sa[2] = {m, 40}, sb[2] = {40, 9};
        mt_tensor *fa = random_bf16(m * 40, 1), *fb = random_bf16(360, 1), *c = random_bf16(9, 1);
        mt_tensor *a = mt_tensor_create(MT_BFLOAT16, 2, sa), *b = mt_tensor_create(MT_BFLOAT16, 2, sb);
        memcpy(mt_tensor_data(a), mt_tensor_data(fa), (size_t)(m * 40) * 2);
        memcpy(mt_tensor_data(b), mt_tensor_data(fb), 720);
        mt_tensor *args[3] = {a, b, c}, *out = NULL;
        mt_diag d;
        if (test_kernel_run(k, args, 3, &out, 1, &d) != MT_OK) fail_msg("%s", d.text);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < 9; j++) {
                double acc = 0, scale = 0;
                for (int64_t q = 0; q < 40; q++) {
                    double p = at(fa, i * 40 + q) * at(fb, q * 9 + j);
                    acc += p, scale += fabs(p);
                }
                /* the matmul's bfloat16 result, then + c (rounded), then relu */
                double mm = acc, t = mm + at(c, j), ref = fmax(t, 0);
                double tol = U * (fabs(mm) + 2 * fabs(t)) + 41 * 0x1p-24 * (scale + fabs(at(c, j)));
                double got = at(out, i * 9 + j);
                if (!(fabs(got - ref) <= tol))
                    fail_msg("m=%lld [%lld, %lld]: got %.9g, want %.9g (tol %.3g)", (long long)m, (long long)i,
                             (long long)j, got, ref, tol);
            }
        mt_tensor_release(fa), mt_tensor_release(fb), mt_tensor_release(a), mt_tensor_release(b);
        mt_tensor_release(c), mt_tensor_release(out);
    }
    mt_kernel_release(k);
}

/* ---- the language ------------------------------------------------------------------- */

static void test_language(void **st) {
    (void)st;
    mt_diag d = compile_err("def f(a: Tensor((4,), \"bfloat16\"), b: Tensor((4,), \"float16\")):\n    return a + b\n");
    assert_int_equal(d.status, MT_ERR_TYPE);
    if (!strstr(d.message, "'a' is bfloat16 but 'b' is float16")) fail_msg("%s", d.message);
    /* a weak literal takes bfloat16; a scalar parameter of bfloat16 */
    mt_kernel *k = compile_ok("def f(a: Tensor((3,), \"bfloat16\"), s: bfloat16):\n    return a * 2 + s\n");
    const char *g = mt_kernel_dump(k, MT_STAGE_GRAPH);
    if (!g || !strstr(g, "bfloat16")) fail_msg("%s", g ? g : "(no graph)");
    uint16_t av[3] = {ref_bf16(1.5), ref_bf16(-3), ref_bf16(1e30)}, sv = ref_bf16(0.25);
    int64_t sh[1] = {3};
    mt_tensor *a = mt_tensor_create(MT_BFLOAT16, 1, sh), *s = mt_tensor_create(MT_BFLOAT16, 0, NULL), *out = NULL;
    memcpy(mt_tensor_data(a), av, 6);
    memcpy(mt_tensor_data(s), &sv, 2);
    mt_tensor *args[2] = {a, s};
    if (test_kernel_run(k, args, 2, &out, 1, &d) != MT_OK) fail_msg("%s", d.text);
    assert_int_equal(mt_tensor_dtype(out), MT_BFLOAT16);
    assert_true(at(out, 0) == 3.25 && at(out, 1) == -5.75);
    assert_int_equal(((const uint16_t *)mt_tensor_data(out))[2], ref_bf16(2e30 + 0.25));
    mt_tensor_release(a), mt_tensor_release(s), mt_tensor_release(out);
    mt_kernel_release(k);
    if (!test_gpu_target()) { /* the CPU's conversion: integer instructions, no libcall */
        k = compile_ok("def f(a: Tensor((\"n\",), \"float32\")):\n    return a.astype(\"bfloat16\")\n");
        const char *ll = mt_kernel_dump(k, MT_STAGE_LLVM);
        assert_non_null(ll);
        if (strstr(ll, "bfloat") || strstr(ll, "truncsfbf2")) fail_msg("%s", ll);
        assert_non_null(strstr(ll, "i16"));
        mt_kernel_release(k);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_float32), cmocka_unit_test(test_from_float64), cmocka_unit_test(test_from_ints),
        cmocka_unit_test(test_from_float16), cmocka_unit_test(test_from_bf16),    cmocka_unit_test(test_elementwise),
        cmocka_unit_test(test_reductions),   cmocka_unit_test(test_matmul),       cmocka_unit_test(test_language),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
