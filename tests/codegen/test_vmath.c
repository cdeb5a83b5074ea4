/*
 * test_vmath.c -- the inline float32 exp, log, tanh, sigmoid and erf of
 * src/codegen/llvm_math.c, through the public API: a kernel `y = f(x)` over
 * a symbolic length runs on large inputs and every result is compared with
 * glibc's double-precision function, the error measured in ulps of the
 * float32 result (of the float16 result for the float16 kernels).
 *
 * Inputs: dense linear sweeps over each function's interesting range,
 * log-spaced magnitudes down to the subnormals, every float next to the
 * overflow/underflow thresholds, a sample of all 2^32 bit patterns (every
 * 4093rd, so NaNs with payloads, subnormals and every exponent), and the
 * special values 0, -0, +-inf, NaN, FLT_MIN, FLT_MAX, the smallest subnormal.
 *
 * Bounds asserted (docs/codegen.md has the exhaustive figures): 1 ulp for
 * each function in float32 on a machine with FMA (the maxima over all 2^32
 * inputs are 0.78 to 0.89 ulp), 2 ulp without; float16, over all 65536 inputs: the correctly rounded
 * half, or within 0.5 half-ulp + 2^-10 of the true value (the float32 result
 * may sit on the other side of a rounding boundary). Special values are
 * exact, signs of zeros included, in vector lanes and in the scalar tail.
 * Each function runs on the default schedule's vectors, on scalars and on
 * vectors of 4 and 8 lanes (a schedule callback): on an AVX-512 host the
 * exponential's vectors take the table method and its scalars the
 * portable polynomial, and both must meet the bound. Also checked: `exp(a)
 * * b + 1` is a call-free loop of 16-lane vectors (zmm, with the table
 * method's vpermps and vscalefps) on an AVX-512 host, and the other four
 * functions and both gelus call nothing either.
 */
#include <float.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>

#include "ops/test_ops_math_util.h"

typedef double (*ref_fn)(double);

static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }

enum fn { F_EXP, F_LOG, F_TANH, F_SIGMOID, F_ERF, NFN };
static const char *const fn_src[NFN] = {"exp(x)", "log(x)", "tanh(x)", "sigmoid(x)", "erf(x)"};
static const ref_fn fn_ref[NFN] = {exp, log, tanh, r_sigmoid, erf};

/* ---- inputs ------------------------------------------------------------------- */

typedef struct fvec {
    float *v;
    int64_t n, cap;
} fvec;

static void push(fvec *a, float x) {
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 1 << 16;
        a->v = realloc(a->v, sizeof(float) * (size_t)a->cap);
        assert_non_null(a->v);
    }
    a->v[a->n++] = x;
}

static void linear(fvec *a, double lo, double hi, int64_t count) {
    for (int64_t i = 0; i < count; i++) push(a, (float)(lo + (hi - lo) * (double)i / (double)(count - 1)));
}

/* count magnitudes log-spaced in [lo, hi], with both signs when asked */
static void logspace(fvec *a, double lo, double hi, int64_t count, bool both) {
    double l0 = log(lo), l1 = log(hi);
    for (int64_t i = 0; i < count; i++) {
        float x = (float)exp(l0 + (l1 - l0) * (double)i / (double)(count - 1));
        push(a, x);
        if (both) push(a, -x);
    }
}

/* the k floats on each side of c, and c */
static void around(fvec *a, float c, int k) {
    float lo = c, hi = c;
    push(a, c);
    for (int i = 0; i < k; i++) {
        lo = nextafterf(lo, -INFINITY);
        hi = nextafterf(hi, INFINITY);
        push(a, lo);
        push(a, hi);
    }
}

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static void specials(fvec *a) {
    static const float s[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1.0f, -1.0f,
                              FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX, 0x1p-149f, -0x1p-149f,
                              0x1.fffffcp-127f, -0x1.fffffcp-127f, 0.5f, -0.5f, 2.0f, -2.0f};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) push(a, s[i]);
    push(a, from_bits(0x7f800001u)); /* signalling NaN, payloads */
    push(a, from_bits(0xffc12345u));
    for (uint64_t u = 0; u < (1ull << 32); u += 4093) push(a, from_bits((uint32_t)u));
}

static fvec inputs(enum fn f) {
    fvec a = {0};
    specials(&a);
    switch (f) {
    case F_EXP:
        linear(&a, -100, 100, 2000001);
        linear(&a, -1, 1, 200001);
        logspace(&a, 1e-30, 1, 20001, true);
        around(&a, 0x1.62e42ep+6f, 2000);  /* 88.72284: the last finite result */
        around(&a, -0x1.5d589ep+6f, 2000); /* -87.33655: results become subnormal */
        around(&a, -0x1.9fe368p+6f, 2000); /* -103.97208: results become 0 */
        break;
    case F_LOG:
        logspace(&a, 1e-38, 1e38, 2000001, false);
        logspace(&a, 0x1p-149, 1e-38, 200001, false);
        linear(&a, 0.5, 2, 1000001);
        around(&a, 1.0f, 20000);
        around(&a, 0x1.6a09e6p-1f, 2000); /* sqrt(1/2): where the reduction switches */
        break;
    case F_TANH:
        linear(&a, -12, 12, 2000001);
        logspace(&a, 1e-38, 10, 200001, true);
        around(&a, 0.625f, 20000); /* where the polynomial hands over */
        around(&a, -0.625f, 20000);
        break;
    case F_SIGMOID:
        linear(&a, -110, 30, 2000001);
        linear(&a, -4, 4, 200001);
        logspace(&a, 1e-38, 110, 200001, true);
        break;
    case F_ERF:
        linear(&a, -6, 6, 2000001);
        logspace(&a, 1e-38, 6, 200001, true);
        around(&a, 0.921875f, 20000); /* where the polynomial hands over */
        around(&a, -0.921875f, 20000);
        around(&a, 4.0f, 2000); /* the clamp */
        break;
    default: break;
    }
    return a;
}

/* ---- running a kernel ------------------------------------------------------------- */

static mt_kernel *compile_fn(enum fn f, mt_dtype dt) {
    char src[256];
    snprintf(src, sizeof src, "def f(x: Tensor((\"n\",), \"%s\")):\n    y = %s\n    return y\n",
             mt_dtype_str(dt), fn_src[f]);
    return compile_ok(src);
}

/* A schedule of the kernel y = f(x) in steps of *lanes elements, vectors of
 * that many lanes (1: scalars). */
static mt_status lanes_sched(mt_schedule *sch, void *user) {
    int lanes = *(const int *)user, blk, loop, n, parts[2];
    int64_t factors[2] = {0, lanes > 1 ? lanes : 64};
    if (mt_schedule_get_block(sch, mt_schedule_kernel_name(sch), &blk) != MT_OK ||
        mt_schedule_get_loops(sch, blk, &loop, 1, &n) != MT_OK ||
        mt_schedule_split(sch, loop, factors, 2, parts) != MT_OK)
        return MT_ERR_INVALID_ARG;
    return lanes > 1 ? mt_schedule_vectorize(sch, parts[1]) : MT_OK;
}

/* compile_fn with f computed on vectors of `lanes` lanes (1: scalars); 0:
 * the default schedule. On an AVX-512 host the exponential (of exp, tanh,
 * sigmoid, erf) takes a 16-lane table method for vectors and the portable
 * polynomial for scalars (src/codegen/llvm_math.c); narrower vectors are
 * padded to 16 lanes. */
static mt_kernel *compile_fn_lanes(enum fn f, int lanes) {
    if (lanes == 0) return compile_fn(f, MT_FLOAT32);
    char src[256];
    snprintf(src, sizeof src, "def f(x: Tensor((\"n\",), \"float32\")):\n    y = %s\n    return y\n",
             fn_src[f]);
    mt_compile_options o = {0};
    o.schedule = lanes_sched;
    o.schedule_user = &lanes;
    return compile_ok_opts(src, &o);
}

/* y = f(x) over n elements of dtype dt (element size es). */
static void run_fn(mt_kernel *k, mt_dtype dt, void *xs, void *ys, int64_t n) {
    mt_tensor *x = mt_tensor_wrap(xs, dt, 1, &n, NULL);
    mt_tensor *y = mt_tensor_wrap(ys, dt, 1, &n, NULL);
    assert_non_null(x);
    assert_non_null(y);
    mt_diag d;
    if (mt_kernel_run(k, &x, 1, &y, 1, &d) != MT_OK) fail_msg("run failed: %s", d.text);
    mt_tensor_release(x);
    mt_tensor_release(y);
}

/* ---- errors in ulps ---------------------------------------------------------------- */

/* |got - ref| in ulps of the float32 format at ref; a NaN must match a NaN
 * and an infinity that is the correctly rounded result must be matched
 * exactly; otherwise an infinity counts as 2^128. */
static double ulp_err(float got, double ref) {
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got) ? 0 : INFINITY;
    if (got == (float)ref) return 0;
    double g = isinf(got) ? copysign(0x1p128, got) : got;
    double a = fabs(ref);
    int e;
    frexp(a, &e); /* a in [2^(e-1), 2^e) */
    double ulp = a < 0x1p-126 ? 0x1p-149 : ldexp(1.0, e - 24);
    return fabs(g - ref) / ulp;
}

static void check_f32(enum fn f, double bound, int lanes) {
    fvec a = inputs(f);
    float *y = malloc(sizeof(float) * (size_t)a.n);
    assert_non_null(y);
    mt_kernel *k = compile_fn_lanes(f, lanes);
    run_fn(k, MT_FLOAT32, a.v, y, a.n);
    double worst = 0;
    float at = 0;
    for (int64_t i = 0; i < a.n; i++) {
        double ref = fn_ref[f]((double)a.v[i]);
        double err = ulp_err(y[i], ref);
        if (err > worst) worst = err, at = a.v[i];
        /* a zero result carries the right sign (tanh(-0) = -0, exp(-inf) = +0) */
        if (ref == 0 && y[i] == 0 && !signbit(ref) != !signbit(y[i]))
            fail_msg("%s at x = %a: got %a, want %a", fn_src[f], a.v[i], y[i], ref);
    }
    print_message("float32 %-10s max %.3f ulp at x = %a (%" PRId64 " inputs, %s)\n", fn_src[f], worst,
                  at, a.n, lanes == 0 ? "default schedule" : lanes == 1 ? "scalars" : lanes == 4 ? "4 lanes" : "8 lanes");
    if (worst > bound) {
        double ref = fn_ref[f]((double)at);
        float got = 0;
        for (int64_t i = 0; i < a.n; i++)
            if (to_bits(a.v[i]) == to_bits(at)) got = y[i];
        fail_msg("%s: %.3f ulp > %.3f at x = %a (%.9g): got %a, want %a", fn_src[f], worst, bound,
                 at, at, got, ref);
    }
    mt_kernel_release(k);
    free(y);
    free(a.v);
}

/* 1 ulp where llvm.fmuladd becomes an FMA; without FMA the exact residuals
 * of the correction steps are lost (measured: up to 1.75 ulp, sigmoid). */
static double bound(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("fma") ? 1.0 : 2.0;
}

/* Each function on the default schedule's vectors, on scalars, and on
 * vectors of 4 and 8 lanes. */
static void check_all_widths(enum fn f) {
    static const int widths[] = {0, 1, 4, 8};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) check_f32(f, bound(), widths[i]);
}

static void test_exp_f32(void **st) { check_all_widths(F_EXP); }
static void test_log_f32(void **st) { check_all_widths(F_LOG); }
static void test_tanh_f32(void **st) { check_all_widths(F_TANH); }
static void test_sigmoid_f32(void **st) { check_all_widths(F_SIGMOID); }
static void test_erf_f32(void **st) { check_all_widths(F_ERF); }

/* ---- exact special values ----------------------------------------------------------- */

typedef struct exact_case {
    enum fn f;
    float x, want;
} exact_case;

static void test_specials(void **st) {
    static const exact_case cases[] = {
        {F_EXP, 0.0f, 1.0f},           {F_EXP, -0.0f, 1.0f},          {F_EXP, INFINITY, INFINITY},
        {F_EXP, -INFINITY, 0.0f},      {F_EXP, NAN, NAN},             {F_EXP, 100.0f, INFINITY},
        {F_EXP, FLT_MAX, INFINITY},    {F_EXP, -200.0f, 0.0f},        {F_EXP, -FLT_MAX, 0.0f},
        {F_EXP, 0x1p-149f, 1.0f},      {F_EXP, -0x1.9fe368p+6f, 0x1p-149f},
        {F_EXP, -0x1.9fe36ap+6f, 0.0f}, {F_EXP, 0x1.62e43p+6f, INFINITY}, /* as glibc's */
        {F_LOG, 1.0f, 0.0f},           {F_LOG, 0.0f, -INFINITY},      {F_LOG, -0.0f, -INFINITY},
        {F_LOG, -1.0f, NAN},           {F_LOG, -0x1p-149f, NAN},      {F_LOG, INFINITY, INFINITY},
        {F_LOG, -INFINITY, NAN},       {F_LOG, NAN, NAN},             {F_LOG, 2.0f, 0x1.62e43p-1f},
        {F_TANH, 0.0f, 0.0f},          {F_TANH, -0.0f, -0.0f},        {F_TANH, INFINITY, 1.0f},
        {F_TANH, -INFINITY, -1.0f},    {F_TANH, 20.0f, 1.0f},         {F_TANH, -20.0f, -1.0f},
        {F_TANH, FLT_MAX, 1.0f},       {F_TANH, NAN, NAN},            {F_TANH, 0x1p-149f, 0x1p-149f},
        {F_TANH, -0x1p-130f, -0x1p-130f},
        {F_SIGMOID, 0.0f, 0.5f},       {F_SIGMOID, -0.0f, 0.5f},      {F_SIGMOID, INFINITY, 1.0f},
        {F_SIGMOID, -INFINITY, 0.0f},  {F_SIGMOID, NAN, NAN},         {F_SIGMOID, 100.0f, 1.0f},
        {F_SIGMOID, -FLT_MAX, 0.0f},   {F_SIGMOID, FLT_MAX, 1.0f},    {F_SIGMOID, -200.0f, 0.0f},
        {F_ERF, 0.0f, 0.0f},           {F_ERF, -0.0f, -0.0f},         {F_ERF, INFINITY, 1.0f},
        {F_ERF, -INFINITY, -1.0f},     {F_ERF, 4.0f, 1.0f},           {F_ERF, -10.0f, -1.0f},
        {F_ERF, NAN, NAN},             {F_ERF, FLT_MAX, 1.0f},
    };
    enum { N = sizeof cases / sizeof cases[0], REP = 4 };
    for (int f = 0; f < NFN; f++) {
        /* the cases REP times over: the first copies fill vectors, the
         * last ones the scalar tail (fewer than 16 cases per function) */
        float xs[N * REP], ys[N * REP];
        int n = 0;
        for (int r = 0; r < REP; r++)
            for (int i = 0; i < N; i++)
                if (cases[i].f == (enum fn)f) xs[n++] = cases[i].x;
        mt_kernel *k = compile_fn((enum fn)f, MT_FLOAT32);
        run_fn(k, MT_FLOAT32, xs, ys, n);
        n = 0;
        for (int r = 0; r < REP; r++)
            for (int i = 0; i < N; i++) {
                if (cases[i].f != (enum fn)f) continue;
                float got = ys[n++], want = cases[i].want;
                bool ok = isnan(want) ? isnan(got) : to_bits(got) == to_bits(want);
                if (!ok)
                    fail_msg("%s at x = %a (element %d): got %a, want %a", fn_src[f], cases[i].x, n - 1, got,
                             want);
            }
        mt_kernel_release(k);
    }
    /* sigmoid keeps the subnormal tail that 1 / (1 + exp(-x)) would flush */
    float x = -100.0f, y;
    mt_kernel *k = compile_fn(F_SIGMOID, MT_FLOAT32);
    run_fn(k, MT_FLOAT32, &x, &y, 1);
    assert_true(ulp_err(y, r_sigmoid(-100.0)) <= 1.0 && y > 0);
    mt_kernel_release(k);
}

/* ---- every float32 input (opt-in) ----------------------------------------------------
 * MT_VMATH_EXHAUSTIVE=1 runs each function on all 2^32 bit patterns, in
 * chunks of 2^24 on two threads (a few minutes per function), and asserts
 * the bound; this is how the figures in docs/codegen.md were measured. */

typedef struct sweep {
    mt_kernel *k;
    enum fn f;
    int first, step; /* chunks first, first + step, ... < 256 */
    double worst;
    float at;
} sweep;

static void *sweep_thread(void *arg) {
    sweep *w = arg;
    int64_t n = 1 << 24;
    float *xs = malloc(sizeof(float) * (size_t)n), *ys = malloc(sizeof(float) * (size_t)n);
    if (!xs || !ys) abort();
    for (int c = w->first; c < 256; c += w->step) {
        for (int64_t i = 0; i < n; i++) xs[i] = from_bits(((uint32_t)c << 24) | (uint32_t)i);
        mt_tensor *x = mt_tensor_wrap(xs, MT_FLOAT32, 1, &n, NULL);
        mt_tensor *y = mt_tensor_wrap(ys, MT_FLOAT32, 1, &n, NULL);
        if (mt_kernel_run(w->k, &x, 1, &y, 1, NULL) != MT_OK) abort();
        mt_tensor_release(x);
        mt_tensor_release(y);
        for (int64_t i = 0; i < n; i++) {
            double err = ulp_err(ys[i], fn_ref[w->f]((double)xs[i]));
            if (err > w->worst) w->worst = err, w->at = xs[i];
        }
    }
    free(xs);
    free(ys);
    return NULL;
}

static void test_exhaustive(void **st) {
    const char *env = getenv("MT_VMATH_EXHAUSTIVE");
    if (!env || !*env || *env == '0') skip();
    for (int f = 0; f < NFN; f++) {
        mt_kernel *k = compile_fn((enum fn)f, MT_FLOAT32);
        sweep w[2] = {{k, (enum fn)f, 0, 2, 0, 0}, {k, (enum fn)f, 1, 2, 0, 0}};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, sweep_thread, &w[1]), 0);
        sweep_thread(&w[0]);
        pthread_join(t, NULL);
        if (w[1].worst > w[0].worst) w[0] = w[1];
        print_message("all float32 %-10s max %.3f ulp at x = %a\n", fn_src[f], w[0].worst, w[0].at);
        if (w[0].worst > bound()) fail_msg("%s: %.3f ulp at x = %a", fn_src[f], w[0].worst, w[0].at);
        mt_kernel_release(k);
    }
}

/* ---- float16: every input --------------------------------------------------------- */

static void test_f16_all(void **st) {
    enum { N = 65536 };
    uint16_t *xs = malloc(sizeof(uint16_t) * N), *ys = malloc(sizeof(uint16_t) * N);
    assert_non_null(xs);
    assert_non_null(ys);
    for (int i = 0; i < N; i++) xs[i] = (uint16_t)i;
    for (int f = 0; f < NFN; f++) {
        mt_kernel *k = compile_fn((enum fn)f, MT_FLOAT16);
        run_fn(k, MT_FLOAT16, xs, ys, N);
        for (int i = 0; i < N; i++) {
            double ref = fn_ref[f](h2d(xs[i])), got = h2d(ys[i]);
            uint16_t want = f2h(ref);
            if (ys[i] == want || (isnan(got) && isnan(ref))) continue;
            double a = fabs(ref);
            int e;
            frexp(a, &e);
            double ulp = a < 0x1p-14 ? 0x1p-24 : ldexp(1.0, e - 11);
            if (!isnan(ref) && !isinf(got) && fabs(got - ref) <= (0.5 + 0x1p-10) * ulp) continue;
            fail_msg("float16 %s at x = %a: got %a (0x%04x), want %a (0x%04x)", fn_src[f],
                     h2d(xs[i]), got, ys[i], h2d(want), want);
        }
        mt_kernel_release(k);
    }
    free(xs);
    free(ys);
}

/* ---- generated code ------------------------------------------------------------------ */

/* The text (LLVM IR or asm) names no libm function of these and no
 * llvm.exp/llvm.log intrinsic (which the x86 backend would scalarize into
 * libm calls). A call through a register still names its target in the
 * `movabsq $expf, %rax` before it. */
static void assert_no_math_calls(const char *text, const char *what) {
    static const char *const names[] = {"expf", "logf", "tanhf", "erff", "@llvm.exp.",
                                        "@llvm.log.", "@exp(", "@log(", "@tanh(", "@erf("};
    for (size_t j = 0; j < sizeof names / sizeof names[0]; j++)
        if (strstr(text, names[j])) fail_msg("%s: the code refers to %s:\n%s", what, names[j], text);
}

static void test_vectorized(void **st) {
    mt_kernel *k = compile_ok(
        "def f(a: Tensor((\"n\",), \"float32\"), b: Tensor((\"n\",), \"float32\")):\n"
        "    out = exp(a) * b + 1\n    return out\n");
    const char *ir = mt_kernel_dump(k, MT_STAGE_LLVM), *as = mt_kernel_dump(k, MT_STAGE_ASM);
    assert_non_null(ir);
    assert_non_null(as);
    assert_no_math_calls(ir, "exp(a) * b + 1");
    assert_no_math_calls(as, "exp(a) * b + 1");
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        assert_non_null(strstr(ir, "<16 x float>"));
        /* the main loop: 16 lanes, the exp's FMAs, the product and the store in zmm */
        assert_non_null(strstr(as, "vfmadd213ps\t%zmm"));
        assert_non_null(strstr(as, "vmovups\t%zmm"));
        /* exp's table method: 2^(j/16) looked up in registers, 2^n applied by vscalefps */
        assert_non_null(strstr(as, "vpermps"));
        assert_non_null(strstr(as, "vscalefps"));
    } else if (__builtin_cpu_supports("avx2")) {
        assert_non_null(strstr(ir, "<8 x float>"));
    }
    mt_kernel_release(k);
    for (int f = 0; f < NFN; f++) {
        k = compile_fn((enum fn)f, MT_FLOAT32);
        ir = mt_kernel_dump(k, MT_STAGE_LLVM);
        as = mt_kernel_dump(k, MT_STAGE_ASM);
        assert_no_math_calls(ir, fn_src[f]);
        assert_no_math_calls(as, fn_src[f]);
        if (__builtin_cpu_supports("avx512f")) assert_non_null(strstr(ir, "<16 x float>"));
        mt_kernel_release(k);
    }
    /* gelu is composed from erf or tanh (legalize_math.c), so it vectorizes too */
    static const char *const gelus[] = {"gelu(x)", "gelu(x, approximate=\"tanh\")"};
    for (int i = 0; i < 2; i++) {
        char src[256];
        snprintf(src, sizeof src, "def f(x: Tensor((\"n\",), \"float32\")):\n    y = %s\n    return y\n",
                 gelus[i]);
        k = compile_ok(src);
        ir = mt_kernel_dump(k, MT_STAGE_LLVM);
        as = mt_kernel_dump(k, MT_STAGE_ASM);
        assert_no_math_calls(ir, gelus[i]);
        assert_no_math_calls(as, gelus[i]);
        if (__builtin_cpu_supports("avx512f")) assert_non_null(strstr(ir, "<16 x float>"));
        mt_kernel_release(k);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectorized),  cmocka_unit_test(test_specials),
        cmocka_unit_test(test_exp_f32),     cmocka_unit_test(test_log_f32),
        cmocka_unit_test(test_tanh_f32),    cmocka_unit_test(test_sigmoid_f32),
        cmocka_unit_test(test_erf_f32),     cmocka_unit_test(test_f16_all),
        cmocka_unit_test(test_exhaustive),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
