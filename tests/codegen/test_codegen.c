/*
 * test_codegen.c -- src/codegen: lowered TIR through LLVM and the ORC JIT.
 *
 * Each test builds lowered TIR by hand with the tir.c constructors (flat 1-D
 * buffers, one index), compiles it with mt_codegen_cpu, calls the result
 * through a cast function pointer (calling convention of tir.h: buffer
 * pointers, scalars by value, then one int64 per sym var) and compares with a
 * plain C reference. Buffers are malloc'd at their exact size so ASan sees any
 * access past the end.
 *
 * Tolerances: arithmetic, casts, float16 and the exactly rounded intrinsics
 * (sqrt, abs, floor, ceil, round, fma) must match bit for bit. The libm-backed
 * ones (exp, log, sin, cos, tanh, erf, pow, and rsqrt/sigmoid built from them)
 * are allowed 2 ulp of the glibc result (in practice they call the same glibc
 * functions and match exactly).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/cg_util.h"
#include "support/common.h"


static mt_jit *jit;
static mt_arena *A;
static double ms_create;

/* ---- TIR building helpers ---------------------------------------------------- */

static mt_texpr *I(int64_t v) { return mt_te_i64(A, v); }
static mt_texpr *V(mt_tvar *v) { return mt_te_var(A, v); }
static mt_texpr *F32(double v) { return mt_te_float(A, MT_FLOAT32, v); }
static mt_texpr *ld(mt_tbuffer *b, mt_texpr *i) { return mt_te_load(A, b, &i, i ? 1 : 0); }
static mt_tstmt *st(mt_tbuffer *b, mt_texpr *i, mt_texpr *v) {
    return mt_ts_store(A, b, &i, i ? 1 : 0, v);
}
static mt_texpr *bin(mt_texpr_kind k, mt_texpr *x, mt_texpr *y) { return mt_te_bin(A, k, x, y); }
static mt_texpr *call1(mt_intrin fn, mt_texpr *x) { return mt_te_call(A, fn, &x, 1); }
static mt_tbuffer *buf1(const char *name, mt_dtype t, mt_texpr *n) {
    return mt_tbuffer_new(A, name, t, 1, &n);
}
static mt_tvar *var(const char *name, mt_dtype t) { return mt_tvar_new(A, name, t); }
static mt_tstmt *loop_k(mt_tvar *i, mt_texpr *ext, mt_for_kind k, mt_tstmt *body) {
    return mt_ts_for(A, i, I(0), ext, k, body);
}
static mt_tstmt *loop(mt_tvar *i, mt_texpr *ext, mt_tstmt *body) {
    return loop_k(i, ext, MT_FOR_SERIAL, body);
}
static mt_tstmt *seq(int n, ...) {
    mt_tstmt **s = MT_NEW_ARRAY(A, mt_tstmt *, n);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) s[i] = va_arg(ap, mt_tstmt *);
    va_end(ap);
    return mt_ts_seq(A, s, n);
}
/* A function with the given buffer params (NULL-terminated) and sym vars. */
static mt_tfunc *func(const char *name, mt_tstmt *body, mt_tbuffer **bufs, mt_tvar **syms,
                      int nsym) {
    mt_tfunc *f = mt_tfunc_new(A, name);
    for (int i = 0; bufs && bufs[i]; i++) mt_tfunc_add_param(A, f, bufs[i], NULL);
    f->sym_vars = MT_NEW_ARRAY(A, mt_tvar *, nsym > 0 ? nsym : 1);
    for (int i = 0; i < nsym; i++) f->sym_vars[i] = syms[i];
    f->nsym = nsym;
    f->num_outputs = 1;
    f->body = body;
    return f;
}

/* Compiles fs[0..n) at opt level `opt`; fails the test on an error. */
static mt_codegen_out compile_n(mt_tfunc **fs, int n, int opt) {
    mt_codegen_out out;
    memset(&out, 0, sizeof out);
    mt_errframe f;
    if (MT_TRY(&f)) {
        cg_compile(jit, A, fs, n, opt, 2, &out);
        mt_err_pop(&f);
    } else {
        mt_err_pop(&f);
        fail_msg("%s", f.msg);
    }
    char err[256];
    const char *ir = mt_jit_ir_text(A, cg_parts(&out), out.nparts, err, sizeof err);
    if (!ir) fail_msg("%s", err);
    /* DUMPIR=<text> prints the IR of every module that contains <text>. */
    if (getenv("DUMPIR") && strstr(ir, getenv("DUMPIR"))) fputs(ir, stderr);
    assert_non_null(out.module);
    for (int i = 0; i < n; i++) assert_non_null(out.fn_addrs[i]);
    return out;
}
static mt_codegen_out compile1(mt_tfunc *f) { return compile_n(&f, 1, 3); }

/* Compiles expecting failure; returns the status, message in msg. */
static mt_status compile_fail(mt_tfunc *fn, char *msg, size_t len) {
    mt_codegen_out out;
    mt_codegen_in in = cg_split(A, &fn, 1, 3, 2);
    mt_status st = cg_try(jit, A, &in, &out, msg, len);
    if (st == MT_OK) mt_jit_module_release(out.module);
    return st;
}

static bool close_ulp(double got, double ref, double eps, double ulps) {
    if (isnan(ref)) return isnan(got);
    if (isinf(ref)) return got == ref;
    return fabs(got - ref) <= ulps * eps * fmax(fabs(ref), 1e-30) + 1e-37;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    assert_non_null(p);
    return p;
}

/* ---- fixtures ---------------------------------------------------------------- */

static int group_setup(void **state) {
    char err[256];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    jit = mt_jit_create(err, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms_create = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
    if (!jit) fprintf(stderr, "mt_jit_create: %s\n", err);
    return jit ? 0 : -1;
}
static int group_teardown(void **state) {
    mt_jit_destroy(jit);
    return 0;
}
static int setup(void **state) {
    A = mt_arena_create();
    return A ? 0 : -1;
}
static int teardown(void **state) {
    mt_arena_destroy(A);
    A = NULL;
    return 0;
}

/* ---- tests ------------------------------------------------------------------- */

/* out[i] = a[i] + b[i], i < n. */
static mt_tfunc *make_add(const char *name, mt_dtype t, mt_texpr_kind op) {
    mt_tvar *n = var("n", MT_INT64), *i = var("i", MT_INT64);
    mt_tbuffer *a = buf1("a", t, V(n)), *b = buf1("b", t, V(n)), *o = buf1("out", t, V(n));
    mt_tbuffer *bufs[] = {a, b, o, NULL};
    return func(name, loop(i, V(n), st(o, V(i), bin(op, ld(a, V(i)), ld(b, V(i))))), bufs,
                &n, 1);
}

/* Runs first: records the compile latency of a small kernel for docs/codegen.md. */
static void test_latency(void **state) {
    mt_tfunc *f = make_add("lat", MT_FLOAT32, TE_ADD);
    mt_codegen_out first = compile1(f);
    mt_jit_module_release(first.module);
    enum { N = 15 };
    double ir[N], opt[N], jt[N];
    for (int r = 0; r < N; r++) {
        mt_codegen_out o = compile1(f);
        ir[r] = o.ms_irgen;
        opt[r] = o.ms_opt;
        jt[r] = o.ms_jit;
        mt_jit_module_release(o.module);
    }
    /* medians */
    for (int k = 0; k < 3; k++) {
        double *v = k == 0 ? ir : k == 1 ? opt : jt;
        for (int x = 1; x < N; x++)
            for (int y = x; y > 0 && v[y] < v[y - 1]; y--) {
                double t = v[y];
                v[y] = v[y - 1];
                v[y - 1] = t;
            }
    }
    print_message("latency: jit_create %.2f ms; first compile irgen %.2f opt %.2f jit %.2f "
                  "(total %.2f) ms; warm median irgen %.2f opt %.2f jit %.2f (total %.2f) ms\n",
                  ms_create, first.ms_irgen, first.ms_opt, first.ms_jit,
                  first.ms_irgen + first.ms_opt + first.ms_jit, ir[N / 2], opt[N / 2],
                  jt[N / 2], ir[N / 2] + opt[N / 2] + jt[N / 2]);
}

static void test_add_f32(void **state) {
    typedef void (*fn_t)(const float *, const float *, float *, int64_t);
    static const int64_t sizes[] = {1, 7, 16, 1000, 1023};
    for (int opt = 0; opt <= 3; opt++) {
        mt_codegen_out o = compile_n((mt_tfunc *[]){make_add("add", MT_FLOAT32, TE_ADD)}, 1, opt);
        fn_t fn = (fn_t)o.fn_addrs[0];
        for (int s = 0; s < 5; s++) {
            int64_t n = sizes[s];
            float *a = xmalloc(sizeof(float) * n), *b = xmalloc(sizeof(float) * n);
            float *out = xmalloc(sizeof(float) * n);
            for (int64_t k = 0; k < n; k++) {
                a[k] = (float)k * 0.5f - 3.25f;
                b[k] = 1.0f / (float)(k + 1);
                out[k] = -999.0f;
            }
            fn(a, b, out, n);
            for (int64_t k = 0; k < n; k++) assert_true(out[k] == a[k] + b[k]);
            free(a);
            free(b);
            free(out);
        }
        mt_jit_module_release(o.module);
    }
}

static void test_f64(void **state) {
    typedef void (*fn_t)(const double *, const double *, double *, int64_t);
    static const mt_texpr_kind ops[] = {TE_SUB, TE_MUL, TE_DIV, TE_FLOORDIV, TE_FLOORMOD};
    enum { n = 101 };
    double a[n], b[n], out[n];
    for (int k = 0; k < n; k++) {
        a[k] = (k - 50) * 1.37;
        b[k] = (k % 7 - 3) * 0.75 + 0.1;
    }
    for (int t = 0; t < 5; t++) {
        mt_codegen_out o = compile1(make_add("f64", MT_FLOAT64, ops[t]));
        ((fn_t)o.fn_addrs[0])(a, b, out, n);
        for (int k = 0; k < n; k++) {
            double x = a[k], y = b[k], r;
            switch (ops[t]) {
            case TE_SUB: r = x - y; break;
            case TE_MUL: r = x * y; break;
            case TE_DIV: r = x / y; break;
            case TE_FLOORDIV: r = floor(x / y); break;
            default: r = x - floor(x / y) * y; break;
            }
            assert_true(out[k] == r);
        }
        mt_jit_module_release(o.module);
    }
}

static int32_t py_floordiv(int32_t a, int32_t b) {
    if (b == 0) return 0;
    if (b == -1) return (int32_t)(0u - (uint32_t)a);
    int32_t q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
static int32_t py_floormod(int32_t a, int32_t b) {
    if (b == 0 || b == -1) return 0;
    int32_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static int32_t c_div(int32_t a, int32_t b) {
    if (b == 0) return 0;
    if (b == -1) return (int32_t)(0u - (uint32_t)a);
    return a / b;
}

static void test_int_division(void **state) {
    /* int32 buffers: q = a // b, r = a % b, t = a / b (truncating). */
    mt_tvar *n = var("n", MT_INT64), *i = var("i", MT_INT64);
    mt_tbuffer *a = buf1("a", MT_INT32, V(n)), *b = buf1("b", MT_INT32, V(n));
    mt_tbuffer *q = buf1("q", MT_INT32, V(n)), *r = buf1("r", MT_INT32, V(n));
    mt_tbuffer *t = buf1("t", MT_INT32, V(n));
    mt_texpr *x = ld(a, V(i)), *y = ld(b, V(i));
    mt_tstmt *body = seq(3, st(q, V(i), bin(TE_FLOORDIV, x, y)), st(r, V(i), bin(TE_FLOORMOD, x, y)),
                         st(t, V(i), bin(TE_DIV, x, y)));
    mt_tfunc *f1 = func("idiv", loop(i, V(n), body), (mt_tbuffer *[]){a, b, q, r, t, NULL}, &n, 1);
    /* int64 with constant divisors and uint8: q2[j] = (j - 8) // 3, r2[j] = (j - 8) % 3,
     * u[j] = (uint8)(200 + j) // 7 and % 7 via the same buffer pair. */
    mt_tvar *j = var("j", MT_INT64);
    mt_tbuffer *q2 = buf1("q2", MT_INT64, I(17)), *r2 = buf1("r2", MT_INT64, I(17));
    mt_tbuffer *ud = buf1("ud", MT_UINT8, I(17)), *um = buf1("um", MT_UINT8, I(17));
    mt_texpr *jm8 = bin(TE_SUB, V(j), I(8));
    mt_texpr *u = mt_te_cast(A, MT_UINT8, bin(TE_ADD, V(j), I(200)));
    mt_texpr *u7 = mt_te_int(A, MT_UINT8, 7);
    mt_tstmt *body2 = seq(4, st(q2, V(j), bin(TE_FLOORDIV, jm8, I(3))),
                          st(r2, V(j), bin(TE_FLOORMOD, jm8, I(-3))),
                          st(ud, V(j), bin(TE_FLOORDIV, u, u7)), st(um, V(j), bin(TE_FLOORMOD, u, u7)));
    mt_tfunc *f2 = func("idiv64", loop(j, I(17), body2), (mt_tbuffer *[]){q2, r2, ud, um, NULL},
                        NULL, 0);
    mt_codegen_out o = compile_n((mt_tfunc *[]){f1, f2}, 2, 3);

    static const int32_t av[] = {-7, 7, -7, 7, 0, 5, INT32_MIN, INT32_MIN, 9, -9, 6, -6, 3, -1, 1};
    static const int32_t bv[] = {2, 2, -2, -2, 3, 0, -1, 1, 3, 3, -3, 4, 0, 5, -5};
    enum { N = sizeof av / sizeof av[0] };
    int32_t qo[N], ro[N], to[N];
    ((void (*)(const int32_t *, const int32_t *, int32_t *, int32_t *, int32_t *, int64_t))
         o.fn_addrs[0])(av, bv, qo, ro, to, N);
    /* the cases named in the brief */
    assert_int_equal(qo[0], -4);
    assert_int_equal(ro[0], 1);
    assert_int_equal(qo[3], -4);
    assert_int_equal(ro[3], -1);
    for (int k = 0; k < N; k++) {
        assert_int_equal(qo[k], py_floordiv(av[k], bv[k]));
        assert_int_equal(ro[k], py_floormod(av[k], bv[k]));
        assert_int_equal(to[k], c_div(av[k], bv[k]));
    }
    int64_t q2o[17], r2o[17];
    uint8_t udo[17], umo[17];
    ((void (*)(int64_t *, int64_t *, uint8_t *, uint8_t *))o.fn_addrs[1])(q2o, r2o, udo, umo);
    for (int k = 0; k < 17; k++) {
        int64_t v = k - 8, fq = v / 3 - (v % 3 != 0 && v < 0);
        int64_t fr = v % -3;
        if (fr > 0) fr -= 3;
        assert_int_equal(q2o[k], fq);
        assert_int_equal(r2o[k], fr);
        uint8_t uv = (uint8_t)(200 + k);
        assert_int_equal(udo[k], uv / 7);
        assert_int_equal(umo[k], uv % 7);
    }
    mt_jit_module_release(o.module);
}

static void test_float16(void **state) {
    /* h[i] = a[i] * a[i] + float16(0.1); w[i] = float32(a[i]) * 3 */
    mt_tvar *n = var("n", MT_INT64), *i = var("i", MT_INT64);
    mt_tbuffer *a = buf1("a", MT_FLOAT16, V(n)), *h = buf1("h", MT_FLOAT16, V(n));
    mt_tbuffer *w = buf1("w", MT_FLOAT32, V(n));
    mt_texpr *x = ld(a, V(i));
    mt_tstmt *body =
        seq(2, st(h, V(i), bin(TE_ADD, bin(TE_MUL, x, x), mt_te_float(A, MT_FLOAT16, 0.1))),
            st(w, V(i), bin(TE_MUL, mt_te_cast(A, MT_FLOAT32, x), F32(3))));
    mt_codegen_out o = compile1(func("f16", loop(i, V(n), body), (mt_tbuffer *[]){a, h, w, NULL}, &n, 1));
    assert_non_null(strstr(cg_ir_text(A, &o), "half"));
    enum { N = 77 };
    _Float16 in[N], ho[N];
    float wo[N];
    for (int k = 0; k < N; k++) in[k] = (_Float16)((k - 38) * 0.173f);
    ((void (*)(const _Float16 *, _Float16 *, float *, int64_t))o.fn_addrs[0])(in, ho, wo, N);
    for (int k = 0; k < N; k++) {
        float xf = (float)in[k];
        _Float16 ref = (_Float16)(xf * xf + (float)(_Float16)0.1f);
        assert_true(ho[k] == ref);
        assert_true(wo[k] == xf * 3.0f);
    }
    mt_jit_module_release(o.module);
}

/* ---- intrinsics ---- */

typedef struct intrin_case {
    mt_intrin fn;
    int positive;  /* use the positive input array */
    int exact;     /* bit-exact expected (else 2 ulp) */
} intrin_case;

static const intrin_case intrin_cases[] = {
    {IN_EXP, 0, 0},   {IN_LOG, 1, 0},  {IN_SQRT, 1, 1},  {IN_RSQRT, 1, 0}, {IN_SIN, 0, 0},
    {IN_COS, 0, 0},   {IN_TANH, 0, 0}, {IN_SIGMOID, 0, 0}, {IN_ERF, 0, 0}, {IN_ABS, 0, 1},
    {IN_FLOOR, 0, 1}, {IN_CEIL, 0, 1}, {IN_ROUND, 0, 1}, {IN_POW, 1, 0},  {IN_FMA, 0, 1},
};
enum { NCASES = sizeof intrin_cases / sizeof intrin_cases[0] };

static double ref_intrin(mt_intrin fn, double x, double y, double z, bool f32) {
    if (f32) {
        float xf = (float)x, yf = (float)y, zf = (float)z;
        switch (fn) {
        case IN_EXP: return expf(xf);
        case IN_LOG: return logf(xf);
        case IN_SQRT: return sqrtf(xf);
        case IN_RSQRT: return 1.0f / sqrtf(xf);
        case IN_SIN: return sinf(xf);
        case IN_COS: return cosf(xf);
        case IN_TANH: return tanhf(xf);
        case IN_SIGMOID: return 1.0f / (1.0f + expf(-xf));
        case IN_ERF: return erff(xf);
        case IN_ABS: return fabsf(xf);
        case IN_FLOOR: return floorf(xf);
        case IN_CEIL: return ceilf(xf);
        case IN_ROUND: return roundevenf(xf);
        case IN_POW: return powf(xf, yf);
        case IN_FMA: return fmaf(xf, yf, zf);
        default: return NAN;
        }
    }
    switch (fn) {
    case IN_EXP: return exp(x);
    case IN_LOG: return log(x);
    case IN_SQRT: return sqrt(x);
    case IN_RSQRT: return 1.0 / sqrt(x);
    case IN_SIN: return sin(x);
    case IN_COS: return cos(x);
    case IN_TANH: return tanh(x);
    case IN_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case IN_ERF: return erf(x);
    case IN_ABS: return fabs(x);
    case IN_FLOOR: return floor(x);
    case IN_CEIL: return ceil(x);
    case IN_ROUND: return roundeven(x);
    case IN_POW: return pow(x, y);
    case IN_FMA: return fma(x, y, z);
    default: return NAN;
    }
}

/* out[i] = fn(x[i], y[i], z[i]) for every intrinsic, all in one module. */
static void run_intrinsics(mt_dtype t) {
    bool f32 = t == MT_FLOAT32;
    mt_tfunc *fs[NCASES];
    for (int c = 0; c < NCASES; c++) {
        mt_tvar *n = var("n", MT_INT64), *i = var("i", MT_INT64);
        mt_tbuffer *x = buf1("x", t, V(n)), *y = buf1("y", t, V(n)), *z = buf1("z", t, V(n));
        mt_tbuffer *o = buf1("out", t, V(n));
        mt_texpr *args[3] = {ld(x, V(i)), ld(y, V(i)), ld(z, V(i))};
        mt_intrin fn = intrin_cases[c].fn;
        mt_texpr *e = mt_te_call(A, fn, args, mt_intrin_arity(fn));
        fs[c] = func(mt_arena_printf(A, "in_%s", mt_intrin_name(fn)), loop(i, V(n), st(o, V(i), e)),
                     (mt_tbuffer *[]){x, y, z, o, NULL}, &n, 1);
    }
    mt_codegen_out o = compile_n(fs, NCASES, 3);
    enum { N = 301 };
    size_t es = f32 ? 4 : 8;
    void *xs = xmalloc(es * N), *ps = xmalloc(es * N), *ys = xmalloc(es * N);
    void *zs = xmalloc(es * N), *out = xmalloc(es * N);
    for (int k = 0; k < N; k++) {
        double xv = (k - 150) * 0.0213 + (k % 3) * 0.25, pv = 0.05 + k * 0.031;
        double yv = (k % 11) * 0.37 - 1.5, zv = (k % 5) * 0.9 - 2;
        if (k == 7) xv = 2.5; /* ties for round-half-even */
        if (k == 8) xv = -0.5;
        if (f32) {
            ((float *)xs)[k] = (float)xv, ((float *)ps)[k] = (float)pv;
            ((float *)ys)[k] = (float)yv, ((float *)zs)[k] = (float)zv;
        } else {
            ((double *)xs)[k] = xv, ((double *)ps)[k] = pv;
            ((double *)ys)[k] = yv, ((double *)zs)[k] = zv;
        }
    }
    for (int c = 0; c < NCASES; c++) {
        const intrin_case *ic = &intrin_cases[c];
        void *in = ic->positive ? ps : xs;
        ((void (*)(const void *, const void *, const void *, void *, int64_t))o.fn_addrs[c])(
            in, ys, zs, out, N);
        for (int k = 0; k < N; k++) {
            double xv = f32 ? ((float *)in)[k] : ((double *)in)[k];
            double yv = f32 ? ((float *)ys)[k] : ((double *)ys)[k];
            double zv = f32 ? ((float *)zs)[k] : ((double *)zs)[k];
            double got = f32 ? ((float *)out)[k] : ((double *)out)[k];
            double ref = ref_intrin(ic->fn, xv, yv, zv, f32);
            bool ok = ic->exact ? (got == ref || (isnan(got) && isnan(ref)))
                                : close_ulp(got, ref, f32 ? FLT_EPSILON : DBL_EPSILON, 2);
            if (!ok)
                fail_msg("%s %s(%.9g, %.9g, %.9g) = %.17g, want %.17g", mt_dtype_str(t),
                         mt_intrin_name(ic->fn), xv, yv, zv, got, ref);
        }
    }
    free(xs), free(ps), free(ys), free(zs), free(out);
    mt_jit_module_release(o.module);
}

static void test_intrinsics_f32(void **state) { run_intrinsics(MT_FLOAT32); }
static void test_intrinsics_f64(void **state) { run_intrinsics(MT_FLOAT64); }

static void test_select_compare_bool(void **state) {
    /* lt[i] = a < b; ne[i] = a != b; sel[i] = (a >= b and not m) ? a : b;
     * mx = max(a, b); mn = min(a, b); orr[i] = m or a == b; imx = max(int(a), -1) */
    mt_tvar *n = var("n", MT_INT64), *i = var("i", MT_INT64);
    mt_tbuffer *a = buf1("a", MT_FLOAT32, V(n)), *b = buf1("b", MT_FLOAT32, V(n));
    mt_tbuffer *m = buf1("m", MT_BOOL, V(n)), *lt = buf1("lt", MT_BOOL, V(n));
    mt_tbuffer *ne = buf1("ne", MT_BOOL, V(n)), *sel = buf1("sel", MT_FLOAT32, V(n));
    mt_tbuffer *mx = buf1("mx", MT_FLOAT32, V(n)), *mn = buf1("mn", MT_FLOAT32, V(n));
    mt_tbuffer *orr = buf1("orr", MT_BOOL, V(n)), *imx = buf1("imx", MT_INT32, V(n));
    mt_texpr *x = ld(a, V(i)), *y = ld(b, V(i)), *mm = ld(m, V(i));
    mt_texpr *c = bin(TE_AND, bin(TE_GE, x, y), mt_te_unary(A, TE_NOT, mm));
    mt_tstmt *body = seq(
        7, st(lt, V(i), bin(TE_LT, x, y)), st(ne, V(i), bin(TE_NE, x, y)),
        st(sel, V(i), mt_te_select(A, c, x, y)), st(mx, V(i), bin(TE_MAX, x, y)),
        st(mn, V(i), bin(TE_MIN, x, y)), st(orr, V(i), bin(TE_OR, mm, bin(TE_EQ, x, y))),
        st(imx, V(i), bin(TE_MAX, mt_te_cast(A, MT_INT32, x), mt_te_int(A, MT_INT32, -1))));
    mt_codegen_out o = compile1(func("cmp", loop(i, V(n), body),
                                     (mt_tbuffer *[]){a, b, m, lt, ne, sel, mx, mn, orr, imx, NULL}, &n, 1));
    enum { N = 41 };
    float av[N], bv[N], selo[N], mxo[N], mno[N];
    uint8_t mv[N], lto[N], neo[N], oro[N];
    int32_t imxo[N];
    for (int k = 0; k < N; k++) {
        av[k] = (float)((k * 7) % 13) - 6.0f;
        bv[k] = (float)((k * 5) % 11) - 5.0f;
        mv[k] = (uint8_t)(k % 3 == 0);
    }
    av[3] = NAN;
    bv[5] = NAN;
    memset(lto, 0x55, N);
    ((void (*)(float *, float *, uint8_t *, uint8_t *, uint8_t *, float *, float *, float *,
               uint8_t *, int32_t *, int64_t))o.fn_addrs[0])(av, bv, mv, lto, neo, selo, mxo, mno,
                                                            oro, imxo, N);
    for (int k = 0; k < N; k++) {
        float x = av[k], y = bv[k];
        assert_int_equal(lto[k], x < y);
        assert_int_equal(neo[k], x != y);
        float s = (x >= y && !mv[k]) ? x : y;
        assert_memory_equal(&selo[k], &s, 4);
        float fx = fmaxf(x, y), fn = fminf(x, y);
        assert_memory_equal(&mxo[k], &fx, 4);
        assert_memory_equal(&mno[k], &fn, 4);
        assert_int_equal(oro[k], mv[k] || x == y);
        int32_t xi = isnan(x) ? 0 : (int32_t)x;
        assert_int_equal(imxo[k], xi > -1 ? xi : -1);
    }
    assert_int_equal(neo[3], 1); /* NaN != NaN-free b: true */
    assert_int_equal(lto[3], 0);
    assert_false(isnan(mxo[3])); /* maxnum ignores the NaN */
    mt_jit_module_release(o.module);
}

static void test_let_and_if(void **state) {
    /* out[i] = let t = a[i] * 2 in t + t * t;
     * if i % 2 == 0: alt[i] = a[i] else: alt[i] = -a[i];
     * if a[i] > 0: pos[i] = 1 */
    mt_tvar *n = var("n", MT_INT64), *i = var("i", MT_INT64), *t = var("t", MT_FLOAT32);
    mt_tbuffer *a = buf1("a", MT_FLOAT32, V(n)), *o = buf1("out", MT_FLOAT32, V(n));
    mt_tbuffer *alt = buf1("alt", MT_FLOAT32, V(n)), *pos = buf1("pos", MT_FLOAT32, V(n));
    mt_texpr *x = ld(a, V(i));
    mt_tstmt *let = mt_ts_let(A, t, bin(TE_MUL, x, F32(2)),
                              st(o, V(i), bin(TE_ADD, V(t), bin(TE_MUL, V(t), V(t)))));
    mt_tstmt *ife = mt_ts_if(A, bin(TE_EQ, bin(TE_FLOORMOD, V(i), I(2)), I(0)), st(alt, V(i), x),
                             st(alt, V(i), mt_te_unary(A, TE_NEG, x)));
    mt_tstmt *ifn = mt_ts_if(A, bin(TE_GT, x, F32(0)), st(pos, V(i), F32(1)), NULL);
    mt_codegen_out o2 = compile1(func("letif", loop(i, V(n), seq(3, let, ife, ifn)),
                                      (mt_tbuffer *[]){a, o, alt, pos, NULL}, &n, 1));
    enum { N = 33 };
    float av[N], oo[N], ao[N], po[N];
    for (int k = 0; k < N; k++) {
        av[k] = (k - 16) * 0.3f;
        po[k] = -5.0f;
    }
    ((void (*)(float *, float *, float *, float *, int64_t))o2.fn_addrs[0])(av, oo, ao, po, N);
    for (int k = 0; k < N; k++) {
        float tt = av[k] * 2.0f;
        assert_true(oo[k] == tt + tt * tt);
        assert_true(ao[k] == (k % 2 == 0 ? av[k] : -av[k]));
        assert_true(po[k] == (av[k] > 0 ? 1.0f : -5.0f));
    }
    mt_jit_module_release(o2.module);
}

static void test_alloc(void **state) {
    /* local tmp[16] (stack): tmp[i] = a[i] * 3; out[i] = tmp[15 - i] + 1 (i < 16)
     * heap tmp2[n] (symbolic size: malloc): tmp2[i] = a[i] + 1; out2[i] = tmp2[n - 1 - i]
     * big[20000] float (80 KB > 64 KiB: malloc): big[i] = i; out3[0] = big[19999] */
    mt_tvar *n = var("n", MT_INT64), *i = var("i", MT_INT64), *j = var("j", MT_INT64);
    mt_tvar *k2 = var("k", MT_INT64), *l2 = var("l", MT_INT64), *q = var("q", MT_INT64);
    mt_tbuffer *a = buf1("a", MT_FLOAT32, V(n)), *o = buf1("out", MT_FLOAT32, I(16));
    mt_tbuffer *o2 = buf1("out2", MT_FLOAT32, V(n)), *o3 = buf1("out3", MT_FLOAT32, I(1));
    mt_tbuffer *tmp = buf1("tmp", MT_FLOAT32, I(16)), *tmp2 = buf1("tmp2", MT_FLOAT32, V(n));
    mt_tbuffer *big = buf1("big", MT_FLOAT32, I(20000));
    tmp->scope = MT_SCOPE_LOCAL;
    mt_tstmt *s1 = mt_ts_alloc(
        A, tmp,
        seq(2, loop(i, I(16), st(tmp, V(i), bin(TE_MUL, ld(a, V(i)), F32(3)))),
            loop(j, I(16), st(o, V(j), bin(TE_ADD, ld(tmp, bin(TE_SUB, I(15), V(j))), F32(1))))));
    mt_tstmt *s2 = mt_ts_alloc(
        A, tmp2,
        seq(2, loop(k2, V(n), st(tmp2, V(k2), bin(TE_ADD, ld(a, V(k2)), F32(1)))),
            loop(l2, V(n), st(o2, V(l2), ld(tmp2, bin(TE_SUB, bin(TE_SUB, V(n), I(1)), V(l2)))))));
    mt_tstmt *s3 = mt_ts_alloc(
        A, big,
        seq(2, loop(q, I(20000), st(big, V(q), mt_te_cast(A, MT_FLOAT32, V(q)))),
            st(o3, I(0), ld(big, I(19999)))));
    mt_tfunc *f = func("alloc", seq(3, s1, s2, s3), (mt_tbuffer *[]){a, o, o2, o3, NULL}, &n, 1);
    for (int opt = 0; opt <= 3; opt += 3) {
        mt_codegen_out r = compile_n(&f, 1, opt);
        if (opt == 0) {
            assert_non_null(strstr(cg_ir_text(A, &r), "alloca [16 x float]"));
            assert_non_null(strstr(cg_ir_text(A, &r), "@mt_kernel_malloc")); /* checked malloc */
            assert_non_null(strstr(cg_ir_text(A, &r), "@free"));
        }
        enum { N = 40 };
        float av[N], oo[16], oo2[N], oo3[1];
        for (int k = 0; k < N; k++) av[k] = k * 1.5f - 7;
        ((void (*)(float *, float *, float *, float *, int64_t))r.fn_addrs[0])(av, oo, oo2, oo3, N);
        for (int k = 0; k < 16; k++) assert_true(oo[k] == av[15 - k] * 3 + 1);
        for (int k = 0; k < N; k++) assert_true(oo2[k] == av[N - 1 - k] + 1);
        assert_true(oo3[0] == 19999.0f);
        mt_jit_module_release(r.module);
    }
}

static void test_loop_nest(void **state) {
    /* for i in n (parallel, runs serially): for j in m (vectorized):
     *     out[i * m + j] = a[i * m + j] * 2 + bias[j]
     * and for u in 3 (unrolled): for v in m: o2[u * m + v] = bias[v] * u */
    mt_tvar *n = var("n", MT_INT64), *m = var("m", MT_INT64);
    mt_tvar *i = var("i", MT_INT64), *j = var("j", MT_INT64);
    mt_tvar *u = var("u", MT_INT64), *v = var("v", MT_INT64);
    mt_texpr *nm = bin(TE_MUL, V(n), V(m));
    mt_tbuffer *a = buf1("a", MT_FLOAT32, nm), *bias = buf1("bias", MT_FLOAT32, V(m));
    mt_tbuffer *o = buf1("out", MT_FLOAT32, nm), *o2 = buf1("o2", MT_FLOAT32, bin(TE_MUL, I(3), V(m)));
    mt_texpr *idx = bin(TE_ADD, bin(TE_MUL, V(i), V(m)), V(j));
    mt_tstmt *inner = loop_k(j, V(m), MT_FOR_VECTORIZED,
                             st(o, idx, bin(TE_ADD, bin(TE_MUL, ld(a, idx), F32(2)), ld(bias, V(j)))));
    mt_tstmt *outer = loop_k(i, V(n), MT_FOR_PARALLEL, inner);
    mt_texpr *idx2 = bin(TE_ADD, bin(TE_MUL, V(u), V(m)), V(v));
    mt_tstmt *nest2 = loop_k(u, I(3), MT_FOR_UNROLLED,
                             loop(v, V(m), st(o2, idx2, bin(TE_MUL, ld(bias, V(v)),
                                                             mt_te_cast(A, MT_FLOAT32, V(u))))));
    mt_tfunc *f = func("nest", seq(2, outer, nest2), (mt_tbuffer *[]){a, bias, o, o2, NULL},
                       (mt_tvar *[]){n, m}, 2);
    mt_codegen_out r0 = compile_n(&f, 1, 0); /* the loop hints, before passes consume them */
    assert_non_null(strstr(cg_ir_text(A, &r0), "!\"llvm.loop.vectorize.enable\", i1 true}"));
    assert_non_null(strstr(cg_ir_text(A, &r0), "!{!\"llvm.loop.unroll.full\"}"));
    mt_jit_module_release(r0.module);
    mt_codegen_out r = compile1(f);
    for (int rep = 0; rep < 2; rep++) {
        int64_t N = rep ? 5 : 3, M = rep ? 13 : 67;
        float *av = xmalloc(sizeof(float) * N * M), *bv = xmalloc(sizeof(float) * M);
        float *oo = xmalloc(sizeof(float) * N * M), *oo2 = xmalloc(sizeof(float) * 3 * M);
        for (int64_t k = 0; k < N * M; k++) av[k] = (float)(k % 17) - 4.5f;
        for (int64_t k = 0; k < M; k++) bv[k] = (float)k * 0.25f;
        ((void (*)(float *, float *, float *, float *, int64_t, int64_t))r.fn_addrs[0])(
            av, bv, oo, oo2, N, M);
        for (int64_t x = 0; x < N; x++)
            for (int64_t y = 0; y < M; y++)
                assert_true(oo[x * M + y] == av[x * M + y] * 2 + bv[y]);
        for (int64_t x = 0; x < 3; x++)
            for (int64_t y = 0; y < M; y++) assert_true(oo2[x * M + y] == bv[y] * (float)x);
        free(av), free(bv), free(oo), free(oo2);
    }
    mt_jit_module_release(r.module);
}

/* The unrolling metadata of llvm.c (docs/codegen.md, "Loop metadata"). */
static void test_loop_metadata(void **state) {
    mt_tvar *n = var("n", MT_INT64), *m = var("m", MT_INT64);
    mt_tvar *i = var("i", MT_INT64), *j = var("j", MT_INT64);
    mt_texpr *nm = bin(TE_MUL, V(n), V(m));
    mt_texpr *idx = bin(TE_ADD, bin(TE_MUL, V(i), V(m)), V(j));
    /* an elementwise nest: the outer loop is not unrolled; the inner one has
     * independent iterations (interleave 1) and its vector loop, if any, is
     * not unrolled (followup_vectorized) */
    mt_tbuffer *a = buf1("a", MT_FLOAT32, nm), *o = buf1("out", MT_FLOAT32, nm);
    mt_tfunc *f = func("ew", loop(i, V(n), loop(j, V(m), st(o, idx, bin(TE_ADD, ld(a, idx), F32(1))))),
                       (mt_tbuffer *[]){a, o, NULL}, (mt_tvar *[]){n, m}, 2);
    mt_codegen_out r = compile_n(&f, 1, 0);
    const char *ir = cg_ir_text(A, &r);
    assert_non_null(strstr(ir, "!{!\"llvm.loop.unroll.disable\"}"));
    assert_non_null(strstr(ir, "!{!\"llvm.loop.interleave.count\", i32 1}"));
    assert_non_null(strstr(ir, "!{!\"llvm.loop.vectorize.followup_vectorized\""));
    mt_jit_module_release(r.module);
    /* a reduction into acc[0]: the store does not index with j, so the
     * vectorizer keeps its interleaving */
    mt_tvar *j2 = var("j", MT_INT64);
    mt_tbuffer *x = buf1("x", MT_FLOAT32, V(m)), *acc = buf1("acc", MT_FLOAT32, I(1));
    f = func("red", loop(j2, V(m), st(acc, I(0), bin(TE_ADD, ld(acc, I(0)), ld(x, V(j2))))),
             (mt_tbuffer *[]){x, acc, NULL}, (mt_tvar *[]){m}, 1);
    r = compile_n(&f, 1, 0);
    assert_null(strstr(cg_ir_text(A, &r), "llvm.loop.interleave.count"));
    assert_non_null(strstr(cg_ir_text(A, &r), "llvm.loop.vectorize.followup_vectorized"));
    mt_jit_module_release(r.module);
    /* a loop over explicit vectors (the schedule's own vector code) is not
     * unrolled again: for i in n: o[ramp(8i, 1, 8)] = a[ramp(8i, 1, 8)] */
    mt_tvar *i3 = var("i", MT_INT64);
    mt_texpr *ramp = mt_te_ramp(A, bin(TE_MUL, V(i3), I(8)), I(1), 8);
    mt_tbuffer *va = buf1("a", MT_FLOAT32, bin(TE_MUL, V(n), I(8)));
    mt_tbuffer *vo = buf1("out", MT_FLOAT32, bin(TE_MUL, V(n), I(8)));
    f = func("vec", loop(i3, V(n), st(vo, ramp, ld(va, ramp))), (mt_tbuffer *[]){va, vo, NULL},
             (mt_tvar *[]){n}, 1);
    r = compile_n(&f, 1, 0);
    assert_non_null(strstr(cg_ir_text(A, &r), "!{!\"llvm.loop.unroll.disable\"}"));
    assert_null(strstr(cg_ir_text(A, &r), "followup_vectorized"));
    mt_jit_module_release(r.module);
}

static void test_rank0_and_scalars(void **state) {
    /* out[()] = flag ? s[()] * x + float(k) : -1, with scalar params x, k, flag */
    mt_tbuffer *s = mt_tbuffer_new(A, "s", MT_FLOAT32, 0, NULL);
    mt_tbuffer *o = mt_tbuffer_new(A, "out", MT_FLOAT32, 0, NULL);
    mt_tvar *x = var("x", MT_FLOAT32), *k = var("k", MT_INT32), *flag = var("flag", MT_BOOL);
    mt_texpr *e = bin(TE_ADD, bin(TE_MUL, ld(s, NULL), V(x)), mt_te_cast(A, MT_FLOAT32, V(k)));
    mt_tfunc *f = mt_tfunc_new(A, "rank0");
    mt_tfunc_add_param(A, f, s, NULL);
    mt_tfunc_add_param(A, f, NULL, x);
    mt_tfunc_add_param(A, f, NULL, k);
    mt_tfunc_add_param(A, f, NULL, flag);
    mt_tfunc_add_param(A, f, o, NULL);
    f->num_outputs = 1;
    f->body = st(o, NULL, mt_te_select(A, V(flag), e, F32(-1)));
    mt_codegen_out r = compile1(f);
    typedef void (*fn_t)(const float *, float, int32_t, bool, float *);
    float sv = 2.5f, out = 0;
    ((fn_t)r.fn_addrs[0])(&sv, 3.0f, -4, true, &out);
    assert_true(out == 2.5f * 3.0f - 4.0f);
    ((fn_t)r.fn_addrs[0])(&sv, 3.0f, -4, false, &out);
    assert_true(out == -1.0f);
    mt_jit_module_release(r.module);
}

static void test_vectors(void **state) {
    /* for i in n / 8, R = ramp(8i, 1, 8):
     *   o1[R] = tanh(a[R]) * bcast(2)                      (vector load/store, libm per lane)
     *   o2[R] = a[ramp(n - 1 - 8i, -1, 8)]                 (gather, reversed)
     *   o3[ramp(n - 1 - 8i, -1, 8)] = a[R]                 (scatter)
     *   o4[R] = select(a[R] > bcast(0), a[R], bcast(0))    (vector compare/select)
     *   o5[R] = a[bcast(8i, 8)] + fma(a[R], a[R], bcast(1)) */
    mt_tvar *n = var("n", MT_INT64), *i = var("i", MT_INT64);
    mt_tbuffer *a = buf1("a", MT_FLOAT32, V(n));
    mt_tbuffer *o[5];
    for (int k = 0; k < 5; k++) o[k] = buf1(mt_arena_printf(A, "o%d", k + 1), MT_FLOAT32, V(n));
    mt_texpr *base = bin(TE_MUL, V(i), I(8));
    mt_texpr *R = mt_te_ramp(A, base, I(1), 8);
    mt_texpr *rev = mt_te_ramp(A, bin(TE_SUB, bin(TE_SUB, V(n), I(1)), base), I(-1), 8);
    mt_texpr *ar = ld(a, R);
    mt_texpr *zero = mt_te_broadcast(A, F32(0), 8);
    mt_texpr *fargs[3] = {ar, ar, mt_te_broadcast(A, F32(1), 8)};
    mt_tstmt *body = seq(
        5, st(o[0], R, bin(TE_MUL, call1(IN_TANH, ar), mt_te_broadcast(A, F32(2), 8))),
        st(o[1], R, ld(a, rev)), st(o[2], rev, ar),
        st(o[3], R, mt_te_select(A, bin(TE_GT, ar, zero), ar, zero)),
        st(o[4], R, bin(TE_ADD, ld(a, mt_te_broadcast(A, base, 8)), mt_te_call(A, IN_FMA, fargs, 3))));
    mt_tfunc *f = func("vec", loop(i, bin(TE_FLOORDIV, V(n), I(8)), body),
                       (mt_tbuffer *[]){a, o[0], o[1], o[2], o[3], o[4], NULL}, &n, 1);
    for (int opt = 0; opt <= 3; opt += 3) {
        mt_codegen_out r = compile_n(&f, 1, opt);
        if (opt == 0) assert_non_null(strstr(cg_ir_text(A, &r), "<8 x float>"));
        enum { N = 64 };
        float av[N], oo[5][N];
        for (int k = 0; k < N; k++) av[k] = (k - 30) * 0.11f;
        ((void (*)(float *, float *, float *, float *, float *, float *, int64_t))r.fn_addrs[0])(
            av, oo[0], oo[1], oo[2], oo[3], oo[4], N);
        for (int k = 0; k < N; k++) {
            assert_true(close_ulp(oo[0][k], tanhf(av[k]) * 2.0f, FLT_EPSILON, 2));
            assert_true(oo[1][k] == av[N - 1 - k]);
            assert_true(oo[2][k] == av[N - 1 - k]);
            assert_true(oo[3][k] == (av[k] > 0 ? av[k] : 0.0f));
            assert_true(oo[4][k] == av[k / 8 * 8] + fmaf(av[k], av[k], 1.0f));
        }
        mt_jit_module_release(r.module);
    }
}

static void test_casts(void **state) {
    /* from f (float32): fi = int32(f) (saturating), fu = uint8(f), fb = bool(f);
     * from k (int32): kf = float32(k), kb = int64(bool(k));
     * from s8 (int8) / u8 (uint8): s8i / u8i = int32(.);
     * from d (float64): dh = float16(d), df = float32(d) */
    mt_tvar *n = var("n", MT_INT64), *i = var("i", MT_INT64);
    mt_tbuffer *f = buf1("f", MT_FLOAT32, V(n)), *k = buf1("k", MT_INT32, V(n));
    mt_tbuffer *s8 = buf1("s8", MT_INT8, V(n)), *u8 = buf1("u8", MT_UINT8, V(n));
    mt_tbuffer *d = buf1("d", MT_FLOAT64, V(n));
    mt_tbuffer *fi = buf1("fi", MT_INT32, V(n)), *fu = buf1("fu", MT_UINT8, V(n));
    mt_tbuffer *fb = buf1("fb", MT_BOOL, V(n)), *kf = buf1("kf", MT_FLOAT32, V(n));
    mt_tbuffer *kb = buf1("kb", MT_INT64, V(n)), *s8i = buf1("s8i", MT_INT32, V(n));
    mt_tbuffer *u8i = buf1("u8i", MT_INT32, V(n)), *dh = buf1("dh", MT_FLOAT16, V(n));
    mt_tbuffer *df = buf1("df", MT_FLOAT32, V(n));
    mt_texpr *F = ld(f, V(i)), *K = ld(k, V(i)), *D = ld(d, V(i));
    mt_tstmt *body = seq(
        9, st(fi, V(i), mt_te_cast(A, MT_INT32, F)), st(fu, V(i), mt_te_cast(A, MT_UINT8, F)),
        st(fb, V(i), mt_te_cast(A, MT_BOOL, F)), st(kf, V(i), mt_te_cast(A, MT_FLOAT32, K)),
        st(kb, V(i), mt_te_cast(A, MT_INT64, mt_te_cast(A, MT_BOOL, K))),
        st(s8i, V(i), mt_te_cast(A, MT_INT32, ld(s8, V(i)))),
        st(u8i, V(i), mt_te_cast(A, MT_INT32, ld(u8, V(i)))),
        st(dh, V(i), mt_te_cast(A, MT_FLOAT16, D)), st(df, V(i), mt_te_cast(A, MT_FLOAT32, D)));
    mt_codegen_out r = compile1(func("casts", loop(i, V(n), body),
                                     (mt_tbuffer *[]){f, k, s8, u8, d, fi, fu, fb, kf, kb, s8i, u8i, dh, df, NULL},
                                     &n, 1));
    enum { N = 12 };
    float fv[N] = {2.7f, -2.7f, 1e10f, -1e10f, NAN, 0.0f, -0.0f, 300.0f, -3.0f, 255.5f, 0.5f, 1.0f};
    int32_t kv[N] = {0, 1, -1, 16777217, INT32_MIN, INT32_MAX, 7, -7, 100, 0, 3, 2};
    int8_t sv[N] = {-5, 5, -128, 127, 0, -1, 1, 2, 3, 4, 5, 6};
    uint8_t uv[N] = {250, 5, 128, 255, 0, 1, 2, 3, 4, 5, 6, 7};
    double dv[N] = {0.1, 1.0 / 3, 65504.0, 1e6, -2.5e-8, 1.00048828125 + 1e-12, 0, -1, 2, 3, 4, 5};
    int32_t fio[N], s8io[N], u8io[N];
    uint8_t fuo[N], fbo[N];
    float kfo[N], dfo[N];
    int64_t kbo[N];
    _Float16 dho[N];
    ((void (*)(float *, int32_t *, int8_t *, uint8_t *, double *, int32_t *, uint8_t *, uint8_t *,
               float *, int64_t *, int32_t *, int32_t *, _Float16 *, float *, int64_t))
         r.fn_addrs[0])(fv, kv, sv, uv, dv, fio, fuo, fbo, kfo, kbo, s8io, u8io, dho, dfo, N);
    for (int x = 0; x < N; x++) {
        float v = fv[x];
        int32_t si = isnan(v) ? 0 : v >= 2147483648.0f ? INT32_MAX : v <= -2147483648.0f ? INT32_MIN : (int32_t)v;
        uint8_t ui = isnan(v) || v <= 0 ? 0 : v >= 255.0f ? 255 : (uint8_t)v;
        assert_int_equal(fio[x], si);
        assert_int_equal(fuo[x], ui);
        assert_int_equal(fbo[x], v != 0.0f); /* NaN -> 1 */
        assert_true(kfo[x] == (float)kv[x]);
        assert_int_equal(kbo[x], kv[x] != 0);
        assert_int_equal(s8io[x], sv[x]);
        assert_int_equal(u8io[x], uv[x]);
        _Float16 h = (_Float16)dv[x];
        assert_memory_equal(&dho[x], &h, 2);
        assert_true(dfo[x] == (float)dv[x]);
    }
    mt_jit_module_release(r.module);
}

static void test_two_functions(void **state) {
    mt_tfunc *f1 = make_add("first", MT_FLOAT32, TE_ADD);
    mt_tfunc *f2 = make_add("second", MT_FLOAT32, TE_MUL);
    mt_codegen_out r = compile_n((mt_tfunc *[]){f1, f2}, 2, 3);
    assert_ptr_not_equal(r.fn_addrs[0], r.fn_addrs[1]);
    typedef void (*fn_t)(const float *, const float *, float *, int64_t);
    float a[3] = {1, 2, 3}, b[3] = {4, 5, 6}, o[3];
    ((fn_t)r.fn_addrs[0])(a, b, o, 3);
    assert_true(o[0] == 5 && o[1] == 7 && o[2] == 9);
    ((fn_t)r.fn_addrs[1])(a, b, o, 3);
    assert_true(o[0] == 4 && o[1] == 10 && o[2] == 18);
    mt_jit_module_release(r.module);
}

/* Each kernel function is a module of its own, optimized and compiled on
 * up to `threads` threads (all in one module on one thread): the same code
 * on 1, 3 and 8 threads (more than the functions: one each), the dump links the parts in function order, and
 * an error in any function fails the whole compile without a leak. */
static void test_parallel_compile(void **state) {
    typedef void (*fn_t)(const float *, const float *, float *, int64_t);
    static const char *names[5] = {"pc_add", "pc_sub", "pc_mul", "pc_add2", "pc_sub2"};
    static const mt_texpr_kind ops[5] = {TE_ADD, TE_SUB, TE_MUL, TE_ADD, TE_SUB};
    const int threads[3] = {1, 3, 8};
    mt_tfunc *fs[5];
    for (int i = 0; i < 5; i++) fs[i] = make_add(names[i], MT_FLOAT32, ops[i]);
    for (int t = 0; t < 3; t++) {
        mt_codegen_out r;
        mt_errframe f;
        if (MT_TRY(&f)) {
            cg_compile(jit, A, fs, 5, 3, threads[t], &r);
            mt_err_pop(&f);
        } else {
            mt_err_pop(&f);
            fail_msg("%s", f.msg);
        }
        assert_int_equal(r.threads, threads[t] < 5 ? threads[t] : 5);
        assert_int_equal(r.nparts, threads[t] == 1 ? 1 : 5); /* one module on one thread */
        float a[3] = {1, 2, 3}, b[3] = {4, 5, 7}, o[3];
        for (int i = 0; i < 5; i++) {
            ((fn_t)r.fn_addrs[i])(a, b, o, 3);
            float want = ops[i] == TE_ADD ? 3 + 7 : ops[i] == TE_SUB ? 3 - 7 : 3 * 7;
            assert_true(o[2] == want);
        }
        char err[256];
        const char *ir = mt_jit_ir_text(A, cg_parts(&r), r.nparts, err, sizeof err);
        if (!ir) fail_msg("%s", err);
        const char *at = ir;
        for (int i = 0; i < 5; i++) { /* "define ... @mtN_<name>(", in order */
            char def[64];
            snprintf(def, sizeof def, "_%s(", names[i]);
            const char *p = strstr(at, def);
            assert_non_null(p);
            at = p;
        }
        const char *s = mt_jit_emit_asm(jit, A, cg_parts(&r), r.nparts, err, sizeof err);
        if (!s) fail_msg("%s", err);
        assert_non_null(strstr(s, "pc_sub2"));
        mt_jit_module_release(r.module);
    }
    /* an error in the fourth function, the first three already built */
    mt_tvar *i = var("i", MT_INT64);
    mt_tstmt *blk = mt_ts_block(A, "leftover_in_part");
    blk->body = mt_ts_eval(A, I(0));
    mt_tbuffer *x = buf1("x", MT_FLOAT32, I(4));
    mt_tfunc *bad = func("bad_part", loop(i, I(4), blk), (mt_tbuffer *[]){x, NULL}, NULL, 0);
    mt_tfunc *mixed[5] = {fs[0], fs[1], fs[2], bad, fs[4]};
    mt_codegen_out r;
    mt_errframe f;
    if (MT_TRY(&f)) {
        cg_compile(jit, A, mixed, 5, 3, 3, &r);
        mt_err_pop(&f);
        fail_msg("a function with a block compiled");
    }
    mt_err_pop(&f);
    assert_int_equal(f.status, MT_ERR_INTERNAL);
    assert_non_null(strstr(f.msg, "leftover_in_part"));
}

/* More kernel functions than target machine slots: at most MT_JIT_TMS (8)
 * threads, every function still compiled and correct. */
static void test_many_functions(void **state) {
    typedef void (*fn_t)(const float *, const float *, float *, int64_t);
    enum { NF = 12 };
    static const mt_texpr_kind ops[3] = {TE_ADD, TE_SUB, TE_MUL};
    mt_tfunc *fs[NF];
    for (int i = 0; i < NF; i++)
        fs[i] = make_add(mt_arena_printf(A, "many%d", i), MT_FLOAT32, ops[i % 3]);
    mt_codegen_out r;
    mt_errframe f;
    if (MT_TRY(&f)) {
        cg_compile(jit, A, fs, NF, 3, 16, &r);
        mt_err_pop(&f);
    } else {
        mt_err_pop(&f);
        fail_msg("%s", f.msg);
    }
    assert_int_equal(r.threads, 8);
    assert_int_equal(r.nparts, NF);
    float a[3] = {1, 2, 3}, b[3] = {4, 5, 7}, o[3];
    for (int i = 0; i < NF; i++) {
        ((fn_t)r.fn_addrs[i])(a, b, o, 3);
        assert_true(o[2] == (i % 3 == 0 ? 10.0f : i % 3 == 1 ? -4.0f : 21.0f));
    }
    mt_jit_module_release(r.module);
}

/* The JIT refuses the third object (its symbol is the first's): the two
 * already added are removed with the module's tracker, nothing leaks, and
 * the JIT keeps working. */
static void test_link_failure(void **state) {
    mt_tfunc *fs[3] = {make_add("dup", MT_FLOAT32, TE_ADD), make_add("other", MT_FLOAT32, TE_ADD),
                       make_add("dup", MT_FLOAT32, TE_SUB)};
    mt_codegen_out r;
    mt_errframe f;
    if (MT_TRY(&f)) {
        cg_compile(jit, A, fs, 3, 3, 2, &r);
        mt_err_pop(&f);
        mt_jit_module_release(r.module);
        fail_msg("two functions of one name linked");
    }
    mt_err_pop(&f);
    assert_int_equal(f.status, MT_ERR_INTERNAL);
    assert_non_null(strstr(f.msg, "dup"));
    mt_codegen_out ok = compile_n(fs, 2, 3);
    mt_jit_module_release(ok.module);
}

static void test_two_modules(void **state) {
    typedef void (*fn_t)(const float *, const float *, float *, int64_t);
    /* Same function name in both: the module prefixes keep them apart. */
    mt_codegen_out m1 = compile1(make_add("k", MT_FLOAT32, TE_ADD));
    mt_codegen_out m2 = compile1(make_add("k", MT_FLOAT32, TE_SUB));
    float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, o[4];
    ((fn_t)m1.fn_addrs[0])(a, b, o, 4);
    assert_true(o[3] == 44);
    ((fn_t)m2.fn_addrs[0])(a, b, o, 4);
    assert_true(o[3] == -36);
    mt_jit_module_release(m1.module);
    ((fn_t)m2.fn_addrs[0])(a, b, o, 4);
    assert_true(o[0] == -9 && o[3] == -36);
    mt_codegen_out m3 = compile1(make_add("k", MT_FLOAT32, TE_MUL));
    ((fn_t)m3.fn_addrs[0])(a, b, o, 4);
    assert_true(o[3] == 160);
    ((fn_t)m2.fn_addrs[0])(a, b, o, 4);
    assert_true(o[1] == -18);
    mt_jit_module_release(m3.module);
    mt_jit_module_release(m2.module);
    mt_jit_module_release(NULL);
}

static void test_ir_and_asm(void **state) {
    mt_codegen_out r = compile1(make_add("asm_probe_fn", MT_FLOAT32, TE_ADD));
    assert_non_null(strstr(cg_ir_text(A, &r), "noalias"));
    assert_non_null(strstr(cg_ir_text(A, &r), "asm_probe_fn"));
    char err[256];
    const char *s = mt_jit_emit_asm(jit, A, cg_parts(&r), r.nparts, err, sizeof err);
    if (!s) fail_msg("%s", err);
    assert_non_null(strstr(s, "asm_probe_fn"));
    mt_codegen_bc junk = {"this is not IR", 14};
    err[0] = 0;
    assert_null(mt_jit_emit_asm(jit, A, &junk, 1, err, sizeof err));
    assert_non_null(strstr(err, "bitcode"));
    mt_codegen_bc half = {cg_parts(&r)[0].data, cg_parts(&r)[0].len / 2}; /* truncated */
    err[0] = 0;
    assert_null(mt_jit_ir_text(A, &half, 1, err, sizeof err));
    assert_non_null(strstr(err, "bitcode"));
    /* a bad part after a good one: the error, and nothing leaked */
    mt_codegen_bc two[2] = {cg_parts(&r)[0], junk};
    err[0] = 0;
    assert_null(mt_jit_ir_text(A, two, 2, err, sizeof err));
    assert_non_null(strstr(err, "bitcode"));
    mt_jit_module_release(r.module);
}

static void test_host_cpu(void **state) {
    const char *cpu = mt_jit_cpu_name(jit), *feat = mt_jit_cpu_features(jit);
    assert_non_null(cpu);
    assert_true(strlen(cpu) > 0);
    assert_non_null(feat);
    assert_true(strlen(feat) > 0);
    print_message("host cpu: %s (%s)\n", cpu, strstr(feat, "+avx512f") ? "avx512f" : "no avx512f");
}

static void test_errors(void **state) {
    char msg[512];
    /* a block left in the lowered TIR */
    mt_tvar *i = var("i", MT_INT64);
    mt_tstmt *blk = mt_ts_block(A, "leftover");
    blk->body = mt_ts_eval(A, I(0));
    mt_tbuffer *a = buf1("a", MT_FLOAT32, I(4));
    mt_tfunc *f = func("blk", loop(i, I(4), blk), (mt_tbuffer *[]){a, NULL}, NULL, 0);
    assert_int_equal(compile_fail(f, msg, sizeof msg), MT_ERR_INTERNAL);
    assert_non_null(strstr(msg, "leftover"));
    /* a variable used outside its scope */
    mt_tvar *j = var("j", MT_INT64);
    f = func("unbound", st(a, V(j), F32(1)), (mt_tbuffer *[]){a, NULL}, NULL, 0);
    assert_int_equal(compile_fail(f, msg, sizeof msg), MT_ERR_INTERNAL);
    assert_non_null(strstr(msg, "'j'"));
    /* a buffer that was not flattened */
    mt_texpr *shape2[2] = {I(2), I(2)};
    mt_tbuffer *b2 = mt_tbuffer_new(A, "b2", MT_FLOAT32, 2, shape2);
    mt_texpr *idx2[2] = {I(0), I(1)};
    f = func("unflat", mt_ts_store(A, b2, idx2, 2, F32(1)), (mt_tbuffer *[]){b2, NULL}, NULL, 0);
    assert_int_equal(compile_fail(f, msg, sizeof msg), MT_ERR_INTERNAL);
    assert_non_null(strstr(msg, "flatten"));
    /* a buffer that is neither a param nor allocated */
    mt_tbuffer *ghost = buf1("ghost", MT_FLOAT32, I(1));
    f = func("ghost", st(ghost, I(0), F32(1)), (mt_tbuffer *[]){a, NULL}, NULL, 0);
    assert_int_equal(compile_fail(f, msg, sizeof msg), MT_ERR_INTERNAL);
    /* the JIT still works afterwards */
    mt_codegen_out r = compile1(make_add("after_errors", MT_FLOAT32, TE_ADD));
    mt_jit_module_release(r.module);
}

/* Two threads compile, run and release kernels at the same time (each with
 * its own arena and error frame), each on three threads of its own: the
 * JIT's locks and target machine slots keep them apart. */
static void *compile_worker(void *arg) {
    volatile intptr_t ok = 1; /* set inside MT_TRY */
    for (int rep = 0; rep < 6 && ok; rep++) {
        mt_arena *a = mt_arena_create();
        mt_tvar *n = mt_tvar_new(a, "n", MT_INT64), *i = mt_tvar_new(a, "i", MT_INT64);
        mt_texpr *nv = mt_te_var(a, n), *iv = mt_te_var(a, i);
        mt_tbuffer *x = mt_tbuffer_new(a, "x", MT_FLOAT32, 1, &nv);
        mt_tbuffer *o = mt_tbuffer_new(a, "o", MT_FLOAT32, 1, &nv);
        mt_texpr *e = mt_te_bin(a, TE_ADD, mt_te_load(a, x, &iv, 1),
                                mt_te_float(a, MT_FLOAT32, (double)(intptr_t)arg + rep));
        /* three functions (o = x + c, then 2c, 3c), compiled on three
         * threads: with both workers, six threads hold target machines */
        mt_tfunc *fs[3];
        for (int q = 0; q < 3; q++) {
            mt_tfunc *f = fs[q] = mt_tfunc_new(a, mt_arena_printf(a, "worker%d", q));
            mt_tfunc_add_param(a, f, x, NULL);
            mt_tfunc_add_param(a, f, o, NULL);
            f->sym_vars = MT_NEW_ARRAY(a, mt_tvar *, 1);
            f->sym_vars[0] = n;
            f->nsym = 1;
            mt_texpr *eq = mt_te_bin(a, TE_MUL, e, mt_te_float(a, MT_FLOAT32, q + 1));
            f->body = mt_ts_for(a, i, mt_te_i64(a, 0), nv, MT_FOR_SERIAL,
                                mt_ts_store(a, o, &iv, 1, q ? eq : e));
        }
        mt_codegen_out out;
        mt_errframe fr;
        if (MT_TRY(&fr)) {
            cg_compile(jit, a, fs, 3, 3, 3, &out);
            mt_err_pop(&fr);
            if (out.threads != 3) ok = 0;
            float xs[5] = {1, 2, 3, 4, 5}, os[5];
            for (int q = 0; q < 3; q++) {
                ((void (*)(float *, float *, int64_t))out.fn_addrs[q])(xs, os, 5);
                for (int k = 0; k < 5; k++)
                    if (os[k] != (xs[k] + (float)((intptr_t)arg + rep)) * (q + 1)) ok = 0;
            }
            mt_jit_module_release(out.module);
        } else {
            mt_err_pop(&fr);
            ok = 0;
        }
        mt_arena_destroy(a);
    }
    return (void *)ok;
}

/* n threads run compile_worker at once; each must succeed. */
static void run_compilers(int n) {
    pthread_t t[4];
    assert_true(n <= 4);
    for (intptr_t k = 0; k < n; k++)
        assert_int_equal(pthread_create(&t[k], NULL, compile_worker, (void *)(k * 100)), 0);
    for (int k = 0; k < n; k++) {
        void *ok;
        pthread_join(t[k], &ok);
        assert_true(ok == (void *)1);
    }
}

static void test_threads(void **state) { run_compilers(2); }

/* Four threads compile at once, each on three threads: twelve want the
 * eight target machine slots, so some wait for one. */
static void test_threads_contended(void **state) { run_compilers(4); }

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_latency, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_f32, setup, teardown),
        cmocka_unit_test_setup_teardown(test_f64, setup, teardown),
        cmocka_unit_test_setup_teardown(test_int_division, setup, teardown),
        cmocka_unit_test_setup_teardown(test_float16, setup, teardown),
        cmocka_unit_test_setup_teardown(test_intrinsics_f32, setup, teardown),
        cmocka_unit_test_setup_teardown(test_intrinsics_f64, setup, teardown),
        cmocka_unit_test_setup_teardown(test_select_compare_bool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_let_and_if, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loop_nest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_loop_metadata, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rank0_and_scalars, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vectors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_casts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_functions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parallel_compile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_functions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_link_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_modules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ir_and_asm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_cpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_contended, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
