/*
 * test_colreduce.c -- the column-reduction rule (src/schedule/
 * rule_colreduce.c): reductions over outer axes, against a plain double
 * reference, on odd and symbolic shapes; and the structure of the
 * scheduled loop IR (an init loop before the reduce loops, vector steps,
 * a parallel loop over chunks when there are several).
 *
 * Tolerance: the rule keeps the source's order of the reduction (it swaps
 * spatial loops with reduce loops, never two reduce loops), so a sum is the
 * sequential float sum: |got - ref| <= R u sum |x| (u = 2^-24 float32,
 * 2^-53 float64); max, min and integer sums exact.
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

/* x of shape (A, R, N) (A = 0: (R, N)), reduced over the R axis. */
typedef struct ccase {
    rop op;
    mt_dtype dt;
    int64_t A, R, N;
    bool sym;
} ccase;

static const char *op_name(rop op) {
    return op == R_SUM ? "sum" : op == R_MAX ? "max" : op == R_MIN ? "min" : "mean";
}

static char *source(const ccase *c) {
    static char buf[512];
    char shape[96];
    if (c->sym) snprintf(shape, sizeof shape, c->A ? "(\"A\", \"R\", \"N\")" : "(\"R\", \"N\")");
    else if (c->A) snprintf(shape, sizeof shape, "(%lld, %lld, %lld)", (long long)c->A, (long long)c->R, (long long)c->N);
    else snprintf(shape, sizeof shape, "(%lld, %lld)", (long long)c->R, (long long)c->N);
    snprintf(buf, sizeof buf, "def f(x: Tensor(%s, \"%s\")):\n    return %s(x, axis=%d)\n", shape,
             mt_dtype_str(c->dt), op_name(c->op), c->A ? 1 : 0);
    return buf;
}

static double get(const mt_tensor *t, int64_t i) {
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT32: return ((const float *)mt_tensor_data(t))[i];
    case MT_FLOAT64: return ((const double *)mt_tensor_data(t))[i];
    default: return ((const int32_t *)mt_tensor_data(t))[i];
    }
}

static void check(const ccase *c, mt_kernel *k) {
    int64_t A = c->A ? c->A : 1, shape[3] = {c->A, c->R, c->N};
    int nd = c->A ? 3 : 2;
    mt_tensor *x = mt_tensor_create(c->dt, nd, c->A ? shape : shape + 1), *out = NULL;
    for (int64_t i = 0; i < mt_tensor_numel(x); i++) {
        double v = rnd();
        if (c->dt == MT_FLOAT32) ((float *)mt_tensor_data(x))[i] = (float)v;
        else if (c->dt == MT_FLOAT64) ((double *)mt_tensor_data(x))[i] = v;
        else ((int32_t *)mt_tensor_data(x))[i] = (int32_t)(v * 1000);
    }
    mt_diag d;
    if (test_kernel_run(k, &x, 1, &out, 1, &d) != MT_OK) fail_msg("%s", d.text);
    double u = c->dt == MT_FLOAT32 ? 0x1p-24 : c->dt == MT_FLOAT64 ? 0x1p-53 : 0;
    for (int64_t a = 0; a < A; a++)
        for (int64_t j = 0; j < c->N; j++) {
            double ref = c->op == R_MAX ? -INFINITY : c->op == R_MIN ? INFINITY : 0, mag = 0;
            for (int64_t r = 0; r < c->R; r++) {
                double v = get(x, (a * c->R + r) * c->N + j);
                ref = c->op == R_MAX ? fmax(ref, v) : c->op == R_MIN ? fmin(ref, v) : ref + v;
                mag += fabs(v);
            }
            if (c->op == R_MEAN) ref /= (double)c->R, mag /= (double)c->R;
            double got = get(out, a * c->N + j), tol = (double)(c->R + 2) * u * mag;
            if (fabs(got - ref) > tol)
                fail_msg("%s: [%lld, %lld] got %.17g, want %.17g (tol %g)", source(c), (long long)a, (long long)j,
                         got, ref, tol);
        }
    mt_tensor_release(out);
    mt_tensor_release(x);
}

static void test_numerics(void **s) {
    static const ccase cases[] = {
        {R_SUM, MT_FLOAT32, 0, 1000, 257, false}, {R_SUM, MT_FLOAT32, 0, 16, 4097, false},
        {R_SUM, MT_FLOAT32, 0, 1, 7, false},      {R_SUM, MT_FLOAT32, 0, 3, 1, false},
        {R_MAX, MT_FLOAT32, 0, 33, 1025, false},  {R_MIN, MT_FLOAT32, 0, 5, 3000, false},
        {R_MEAN, MT_FLOAT32, 0, 64, 100, false},  {R_SUM, MT_FLOAT64, 0, 77, 515, false},
        {R_SUM, MT_INT32, 0, 19, 2049, false},    {R_SUM, MT_FLOAT32, 7, 100, 33, false},
        {R_MAX, MT_FLOAT32, 3, 9, 2000, false},   {R_MEAN, MT_FLOAT64, 2, 50, 17, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mt_kernel *k = compile_ok(source(&cases[i]));
        check(&cases[i], k);
        mt_kernel_release(k);
    }
}

/* One kernel, symbolic dims, several sizes (zero rows and columns too). */
static void test_symbolic(void **s) {
    ccase c = {R_SUM, MT_FLOAT32, 0, 0, 0, true};
    mt_kernel *k2 = compile_ok(source(&c));
    int64_t sizes[][2] = {{1, 1}, {10, 3000}, {0, 5}, {3, 0}, {129, 1024}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        c.R = sizes[i][0], c.N = sizes[i][1];
        check(&c, k2);
    }
    mt_kernel_release(k2);
    ccase c3 = {R_MAX, MT_FLOAT32, 2, 0, 0, true};
    mt_kernel *k3 = compile_ok(source(&c3));
    c3.R = 40, c3.N = 1500;
    check(&c3, k3);
    mt_kernel_release(k3);
}

static void test_structure(void **s) {
    skip_if_gpu_target("checks the CPU rule's loop IR");
    ccase c = {R_SUM, MT_FLOAT32, 0, 16, 65536, false};
    mt_kernel *k = compile_ok(source(&c));
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(t, "T.launch(\"sum_par0\""));     /* 64 chunks: parallel */
    const char *init = strstr(t, "_init in range("), *ramp = strstr(t, "T.Ramp(");
    assert_non_null(init);
    assert_non_null(ramp);
    assert_true(init < ramp);                                   /* init before the update */
    assert_null(strstr(t, "if i0 == 0"));                       /* no branch in the update */
    mt_kernel_release(k);
    /* a reduction over the last axis is the row rule's, one over (0, 2) the fallback's */
    k = compile_ok("def f(x: Tensor((8, 9, 10), \"float32\")):\n    return sum(x, axis=(0, 2))\n");
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "_init in range("));
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numerics),
        cmocka_unit_test(test_symbolic),
        cmocka_unit_test(test_structure),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
