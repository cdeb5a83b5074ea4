/*
 * test_fullreduce.c -- the full-reduction rule (src/schedule/
 * rule_fullreduce.c): reductions over every axis and over several axes
 * including the last, against a plain double reference, on odd, symbolic
 * and empty shapes, float32, float64 and int32, with contexts of 1, 2 and
 * 3 threads; and the structure of the scheduled loop IR (partials in a
 * buffer `<out>_rf`, a parallel loop over chunks when there are several,
 * vector steps).
 *
 * Tolerance: the rule reassociates a sum (partials per chunk and lane,
 * each summed in order, then combined in order), so a float sum is checked
 * against the bound of any summation order of n terms,
 * |got - ref| <= (n + 2) u sum |x| (u = 2^-24 float32, 2^-53 float64;
 * mean: the same divided by n); max, min and integer sums are exact.
 */
#include <math.h>
#include <stdbool.h>

#include "test_util.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double rnd(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

typedef enum { R_SUM, R_MAX, R_MIN, R_MEAN } rop;

/* x of shape dims[0..nd), reduced over the axes in red (a bit per axis;
 * all bits: `op(x)` without axis). */
typedef struct fcase {
    rop op;
    mt_dtype dt;
    int nd;
    int64_t dims[4];
    unsigned red;
    bool sym;
} fcase;

static const char *op_name(rop op) {
    return op == R_SUM ? "sum" : op == R_MAX ? "max" : op == R_MIN ? "min" : "mean";
}

static char *source(const fcase *c) {
    static char buf[512];
    char shape[128] = "(", axes[64] = "";
    static const char *names[] = {"\"A\"", "\"B\"", "\"C\"", "\"D\""};
    for (int d = 0; d < c->nd; d++) {
        char one[32];
        if (c->sym) snprintf(one, sizeof one, "%s%s", d ? ", " : "", names[d]);
        else snprintf(one, sizeof one, "%s%lld", d ? ", " : "", (long long)c->dims[d]);
        strcat(shape, one);
    }
    strcat(shape, c->nd == 1 ? ",)" : ")");
    if (c->red != (1u << c->nd) - 1) {
        int n = 0;
        strcat(axes, ", axis=(");
        for (int d = 0; d < c->nd; d++)
            if (c->red >> d & 1) {
                char one[16];
                snprintf(one, sizeof one, "%s%d", n++ ? ", " : "", d);
                strcat(axes, one);
            }
        strcat(axes, n == 1 ? ",)" : ")");
    }
    snprintf(buf, sizeof buf, "def f(x: Tensor(%s, \"%s\")):\n    return %s(x%s)\n", shape,
             mt_dtype_str(c->dt), op_name(c->op), axes);
    return buf;
}

static double get(const mt_tensor *t, int64_t i) {
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT32: return ((const float *)mt_tensor_data(t))[i];
    case MT_FLOAT64: return ((const double *)mt_tensor_data(t))[i];
    default: return ((const int32_t *)mt_tensor_data(t))[i];
    }
}

static void check_ctx(const fcase *c, mt_kernel *k) {
    int64_t n = 1, nout = 1, nred = 1;
    for (int d = 0; d < c->nd; d++) {
        n *= c->dims[d];
        if (c->red >> d & 1) nred *= c->dims[d];
        else nout *= c->dims[d];
    }
    mt_tensor *x = mt_tensor_create(c->dt, c->nd, c->dims), *out = NULL;
    for (int64_t i = 0; i < n; i++) {
        double v = rnd();
        if (c->dt == MT_FLOAT32) ((float *)mt_tensor_data(x))[i] = (float)v;
        else if (c->dt == MT_FLOAT64) ((double *)mt_tensor_data(x))[i] = v;
        else ((int32_t *)mt_tensor_data(x))[i] = (int32_t)(v * 1000);
    }
    mt_diag d;
    if (test_kernel_run(k, &x, 1, &out, 1, &d) != MT_OK) fail_msg("%s", d.text);
    assert_int_equal(mt_tensor_numel(out), nout);
    double *ref = malloc(sizeof(double) * (size_t)(nout + 1)), *mag = calloc((size_t)nout + 1, sizeof(double));
    double init = c->op == R_MAX ? -INFINITY : c->op == R_MIN ? INFINITY : 0;
    for (int64_t o = 0; o < nout; o++) ref[o] = init;
    for (int64_t i = 0; i < n; i++) { /* the output element of input element i */
        int64_t rest = i, o = 0, stride = 1;
        for (int dd = c->nd - 1; dd >= 0; dd--) {
            int64_t ix = rest % c->dims[dd];
            rest /= c->dims[dd];
            if (!(c->red >> dd & 1)) o += ix * stride, stride *= c->dims[dd];
        }
        double v = get(x, i);
        ref[o] = c->op == R_MAX ? fmax(ref[o], v) : c->op == R_MIN ? fmin(ref[o], v) : ref[o] + v;
        mag[o] += fabs(v);
    }
    double u = c->dt == MT_FLOAT32 ? 0x1p-24 : c->dt == MT_FLOAT64 ? 0x1p-53 : 0;
    for (int64_t o = 0; o < nout; o++) {
        double want = ref[o], tol = (double)(nred + 2) * u * mag[o];
        if (c->op == R_MEAN) want /= (double)nred, tol /= (double)nred;
        if (c->op == R_MEAN && nred == 0) continue; /* 0 / 0 */
        double got = get(out, o);
        if (!(fabs(got - want) <= tol) && !(got == want))
            fail_msg("%s (dims %lld %lld %lld %lld): [%lld] got %.17g, want %.17g (tol %g)", source(c),
                     (long long)c->dims[0], (long long)c->dims[1], (long long)c->dims[2],
                     (long long)c->dims[3], (long long)o, got, want, tol);
    }
    free(ref);
    free(mag);
    mt_tensor_release(out);
    mt_tensor_release(x);
}

static void run_case(const fcase *c) {
    mt_kernel *k = compile_ok(source(c));
    check_ctx(c, k);
    mt_kernel_release(k);
}

#define ALL 15u

static void test_full(void **s) {
    static const fcase cases[] = {
        {R_SUM, MT_FLOAT32, 2, {1000, 257}, 3, false},  {R_SUM, MT_FLOAT32, 2, {3, 5}, 3, false},
        {R_SUM, MT_FLOAT32, 1, {4097}, 1, false},       {R_SUM, MT_FLOAT32, 2, {1, 1}, 3, false},
        {R_MAX, MT_FLOAT32, 2, {513, 129}, 3, false},   {R_MIN, MT_FLOAT32, 3, {7, 9, 1001}, 7, false},
        {R_MEAN, MT_FLOAT32, 2, {640, 99}, 3, false},   {R_SUM, MT_FLOAT64, 2, {77, 515}, 3, false},
        {R_SUM, MT_INT32, 2, {19, 2049}, 3, false},     {R_MAX, MT_FLOAT64, 1, {100000}, 1, false},
        {R_SUM, MT_FLOAT32, 3, {64, 100, 33}, 7, false}, {R_SUM, MT_FLOAT32, 1, {2000003}, 1, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_case(&cases[i]);
}

static void test_axes(void **s) {
    static const fcase cases[] = {
        {R_SUM, MT_FLOAT32, 3, {7, 100, 33}, 5, false},   /* (0, 2): spatial chunks */
        {R_SUM, MT_FLOAT32, 3, {64, 9, 1000}, 5, false},  /* (0, 2): 9 outputs, reduce chunks */
        {R_MAX, MT_FLOAT32, 3, {33, 257, 65}, 5, false},
        {R_MEAN, MT_FLOAT64, 3, {5, 300, 129}, 5, false},
        {R_SUM, MT_FLOAT32, 3, {5, 40, 300}, 6, false},   /* (1, 2) */
        {R_SUM, MT_FLOAT32, 3, {2, 300, 500}, 6, false},  /* (1, 2) of 2: reduce chunks */
        {R_MIN, MT_FLOAT32, 4, {3, 4, 5, 70}, 11, false}, /* (0, 1, 3) */
        {R_SUM, MT_INT32, 3, {8, 50, 77}, 5, false},
        {R_SUM, MT_FLOAT32, 3, {16, 256, 256}, 5, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_case(&cases[i]);
}

/* One kernel, symbolic dims, several sizes (zero sizes too). */
static void test_symbolic(void **s) {
    fcase c = {R_SUM, MT_FLOAT32, 2, {0}, 3, true};
    mt_kernel *k = compile_ok(source(&c));
    int64_t sizes[][2] = {{1, 1}, {10, 3000}, {0, 5}, {3, 0}, {129, 1023}, {2000, 700}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        c.dims[0] = sizes[i][0], c.dims[1] = sizes[i][1];
        check_ctx(&c, k);
    }
    mt_kernel_release(k);
    fcase m = {R_MAX, MT_FLOAT32, 3, {0}, 5, true};
    k = compile_ok(source(&m));
    int64_t sizes3[][3] = {{1, 1, 1}, {7, 100, 33}, {0, 4, 5}, {3, 0, 5}, {3, 4, 0}, {40, 600, 70}};
    for (size_t i = 0; i < sizeof sizes3 / sizeof *sizes3; i++) {
        memcpy(m.dims, sizes3[i], sizeof sizes3[i]);
        check_ctx(&m, k);
    }
    mt_kernel_release(k);
    fcase e = {R_SUM, MT_FLOAT64, 3, {0}, 5, true};
    k = compile_ok(source(&e));
    for (size_t i = 0; i < sizeof sizes3 / sizeof *sizes3; i++) {
        memcpy(e.dims, sizes3[i], sizeof sizes3[i]);
        check_ctx(&e, k);
    }
    mt_kernel_release(k);
}

/* The same kernels on contexts of 1 and 3 threads. */
static void test_threads(void **s) {
    mt_context *saved = test_ctx;
    for (int t = 1; t <= 3; t += 2) {
        mt_context_options o = {0};
        o.num_threads = t;
        test_ctx = mt_context_create(&o);
        assert_non_null(test_ctx);
        fcase a = {R_SUM, MT_FLOAT32, 2, {1000, 1001}, 3, false};
        fcase b = {R_SUM, MT_FLOAT32, 3, {9, 200, 301}, 5, false};
        run_case(&a);
        run_case(&b);
        mt_context_destroy(test_ctx);
    }
    test_ctx = saved;
}

static void test_structure(void **s) {
    skip_if_gpu_target("checks the CPU rule's loop IR");
    fcase c = {R_SUM, MT_FLOAT32, 2, {4096, 4096}, 3, false};
    mt_kernel *k = compile_ok(source(&c));
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(t, "lv_rf = T.alloc_buffer((4096,)"));  /* 64 chunks x 64 lanes */
    assert_non_null(strstr(t, "T.launch(\"sum_par0\", lv_rf, x, grid=(64,))"));
    assert_non_null(strstr(t, "lv_rf[T.Ramp("));
    mt_kernel_release(k);
    fcase d = {R_SUM, MT_FLOAT32, 3, {256, 256, 256}, 5, false};
    k = compile_ok(source(&d));
    t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(t, "lv_rf = T.alloc_buffer((16384,)")); /* 256 outputs x 64 lanes */
    assert_non_null(strstr(t, "T.launch(\"sum_par0\""));
    mt_kernel_release(k);
    /* small: one chunk, no thread */
    fcase e = {R_SUM, MT_FLOAT32, 2, {3, 50}, 3, false};
    k = compile_ok(source(&e));
    t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(t, "lv_rf"));
    assert_null(strstr(t, "T.launch"));
    mt_kernel_release(k);
    /* short rows of an integer sum over the last axis: left to the fallback */
    k = compile_ok("def f(x: Tensor((1000, 8), \"int32\")):\n    return sum(x, axis=1)\n");
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "_rf"));
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_axes),
        cmocka_unit_test(test_symbolic),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_structure),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
