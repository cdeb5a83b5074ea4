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
        /* rows 4 at a time (the chunks and vectors divide the columns) */
        {R_SUM, MT_FLOAT32, 0, 64, 4096, false},  {R_SUM, MT_FLOAT32, 2, 12, 8192, false},
        {R_MAX, MT_FLOAT32, 0, 8, 65536, false},  {R_SUM, MT_FLOAT64, 0, 20, 1024, false},
        {R_SUM, MT_INT32, 0, 16, 2048, false},    {R_MEAN, MT_FLOAT32, 0, 36, 3072, false},
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
    /* 256 rows of 65536: chunks of 4096 columns (dividing them; not 6144),
     * 4 rows at a time, the same sums as row by row: bit for bit the
     * sequential float sum */
    ccase r4 = {R_SUM, MT_FLOAT32, 0, 256, 65536, false};
    k = compile_ok(source(&r4));
    t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(t, "_init in range(4096)"));
    assert_non_null(strstr(t, "T.unroll(4)"));
    int64_t sh[2] = {256, 65536};
    mt_tensor *x = mt_tensor_create(MT_FLOAT32, 2, sh), *out = NULL;
    float *xv = mt_tensor_data(x);
    for (int64_t i = 0; i < 256 * 65536; i++) xv[i] = (float)rnd();
    mt_diag d;
    assert_int_equal(test_kernel_run(k, &x, 1, &out, 1, &d), MT_OK);
    for (int64_t j = 0; j < 65536; j += 97) {
        float acc = 0.0f;
        for (int64_t r = 0; r < 256; r++) acc += xv[r * 65536 + j];
        if (((const float *)mt_tensor_data(out))[j] != acc) fail_msg("column %lld: not the sequential sum", (long long)j);
    }
    mt_tensor_release(x), mt_tensor_release(out);
    mt_kernel_release(k);
    /* max and min: 4 rows at a time where the target has more than one
     * core (row by row, each thread streamed one short run a row), row by
     * row on one; exact either way */
    static const rop mm[] = {R_MAX, R_MIN};
    for (int i = 0; i < 2; i++) {
        ccase m4 = {mm[i], MT_FLOAT32, 0, 256, 4096, false};
        k = compile_ok(source(&m4));
        t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        const char *p = strstr(t, "-cores=");
        int cores = 0;
        assert_non_null(p);
        assert_int_equal(sscanf(p, "-cores=%d", &cores), 1);
        if ((cores > 1) != (strstr(t, "T.unroll(4)") != NULL))
            fail_msg("%s with %d cores: %s 4 rows at a time:\n%s", op_name(mm[i]), cores, cores > 1 ? "want" : "do not want", t);
        check(&m4, k);
        mt_kernel_release(k);
    }
    /* a reduction over the last axis is the row rule's, one over (0, 2) the fallback's */
    k = compile_ok("def f(x: Tensor((8, 9, 10), \"float32\")):\n    return sum(x, axis=(0, 2))\n");
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "_init in range("));
    mt_kernel_release(k);
}

/* The chunk of columns: 4 KiB of output, or more -- up to half of L1 --
 * while every core still gets a chunk (a row of a chunk is one contiguous
 * run of x; runs of a page or less kept the prefetcher from reaching
 * STREAM's rate). Read from the target the kernel was compiled for. */
static void test_chunk_from_target(void **s) {
    skip_if_gpu_target("checks the CPU rule's loop IR");
    ccase c = {R_SUM, MT_FLOAT32, 0, 64, 4096, false};
    mt_kernel *k = compile_ok(source(&c));
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED), *p;
    int cores = 0;
    long l1k = 0;
    assert_non_null(p = strstr(t, "-cores="));
    assert_int_equal(sscanf(p, "-cores=%d", &cores), 1);
    assert_non_null(p = strstr(t, "-l1d="));
    assert_int_equal(sscanf(p, "-l1d=%ldK", &l1k), 1);
    long bytes = 4096L * 4 / cores, most = l1k * 1024 / 2;
    if (bytes > most) bytes = most;
    if (bytes < 4096) bytes = 4096;
    char want[64];
    snprintf(want, sizeof want, "_init in range(%ld)", bytes / 4);
    if (!strstr(t, want)) fail_msg("want a chunk of %ld columns (%s):\n%s", bytes / 4, want, t);
    check(&c, k);
    mt_kernel_release(k);
    /* 1024 x 401 columns (401 a prime): no divisor of them is half as wide
     * as half of L1, so neither max nor sum narrows its chunk to one (4 KiB
     * rows ran 20-30 % slower), and the sum keeps one row at a time */
    static const char *const wide[] = {"max", "sum"};
    for (int i = 0; i < 2; i++) {
        char src[160];
        snprintf(src, sizeof src, "def f(x: Tensor((64, 410624), \"float32\")):\n    return %s(x, axis=0)\n", wide[i]);
        k = compile_ok(src);
        t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        snprintf(want, sizeof want, "_init in range(T.min(%ld, ", most / 4);
        if (!strstr(t, want)) fail_msg("%s: want a chunk of %ld columns (%s):\n%s", wide[i], most / 4, want, t);
        assert_null(strstr(t, "T.unroll("));
        mt_kernel_release(k);
    }
}

/* ---- transposed views (issue #17) -------------------------------------------------------- */

/* Every vector access in the scheduled loop IR is contiguous (T.Ramp of
 * stride 1) and no vectorized loop was left that the vectorize pass could
 * not take (it takes only contiguous or invariant accesses). */
static void assert_contiguous_vectors(const char *t) {
    assert_null(strstr(t, "T.vectorized("));
    for (const char *r = strstr(t, "T.Ramp("); r; r = strstr(r + 1, "T.Ramp(")) {
        int depth = 0;
        const char *p = r + 7; /* to the comma after the base */
        for (; *p && !(depth == 0 && *p == ','); p++) depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
        if (strncmp(p, ", 1, ", 5) != 0) fail_msg("a strided vector access: %.60s", r);
    }
}

/* sum over axis 0 of transpose(x, perm), x float32 of shape sh (3-D; a
 * 2-D x when sh[0] == 0), against a double reference: out is the sum over
 * x's axis perm[0] of the others in order. */
static void check_transposed(const int64_t *sh, const int *perm) {
    int nd = sh[0] ? 3 : 2;
    const int64_t *shape = sh[0] ? sh : sh + 1;
    char src[256];
    if (nd == 2) snprintf(src, sizeof src, "def f(x: Tensor((%lld, %lld), \"float32\")):\n"
                                           "    return sum(x.T, axis=0)\n",
                          (long long)shape[0], (long long)shape[1]);
    else snprintf(src, sizeof src, "def f(x: Tensor((%lld, %lld, %lld), \"float32\")):\n"
                                   "    return sum(transpose(x, axes=(%d, %d, %d)), axis=0)\n",
                  (long long)shape[0], (long long)shape[1], (long long)shape[2], perm[0], perm[1], perm[2]);
    mt_kernel *k = compile_ok(src);
    if (!test_gpu_target()) assert_contiguous_vectors(mt_kernel_dump(k, MT_STAGE_TIR_SCHED));
    /* reducing x's last (contiguous) axis: a row reduction with its loops
     * put in order (rule_reduce_inner.c) */
    bool rows = perm[0] == nd - 1 || (nd == 2);
    if (!test_gpu_target() && rows && !strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "schedule_reduce"))
        fail_msg("%s: not a row reduction:\n%s", src, mt_kernel_dump(k, MT_STAGE_SCHEDULE));
    mt_tensor *x = mt_tensor_create(MT_FLOAT32, nd, shape), *out = NULL;
    float *xd = mt_tensor_data(x);
    for (int64_t i = 0; i < mt_tensor_numel(x); i++) xd[i] = (float)rnd();
    mt_diag d;
    if (test_kernel_run(k, &x, 1, &out, 1, &d) != MT_OK) fail_msg("%s", d.text);
    /* out[o1, o2] (o2 only in 3-D) = sum over r of x at (r, o1, o2) permuted back */
    int64_t R = shape[perm[0]], O1 = shape[perm[1]], O2 = nd == 3 ? shape[perm[2]] : 1;
    const float *od = mt_tensor_data(out);
    for (int64_t o1 = 0; o1 < O1; o1++)
        for (int64_t o2 = 0; o2 < O2; o2++) {
            double ref = 0, mag = 0;
            for (int64_t r = 0; r < R; r++) {
                int64_t at[3] = {0, 0, 0}, lin = 0;
                at[perm[0]] = r, at[perm[1]] = o1;
                if (nd == 3) at[perm[2]] = o2;
                for (int q = 0; q < nd; q++) lin = lin * shape[q] + at[q];
                ref += xd[lin], mag += fabs(xd[lin]);
            }
            double got = od[o1 * O2 + o2], tol = (double)(R + 2) * 0x1p-24 * mag;
            if (fabs(got - ref) > tol)
                fail_msg("%s: [%lld, %lld] got %.9g, want %.9g", src, (long long)o1, (long long)o2, got, ref);
        }
    mt_tensor_release(out);
    mt_tensor_release(x);
    mt_kernel_release(k);
}

/* sum(x.T, axis=0) reads x[j, r]: its inner spatial loop walks x with the
 * stride of a row, which the column rule must not take as contiguous (it
 * used to, comparing loop variables with indices written in block
 * variables); it is x's row sum, which the row rule takes once its loops
 * are swapped. Likewise over transposed 3-D views. */
static void test_transposed(void **s) {
    static const int64_t shapes[][4] = {{0, 37, 129}, {0, 1000, 33}, {0, 3, 4097},
                                        {5, 7, 131}, {9, 300, 17}, {3, 65, 1025}};
    static const int perms[][3] = {{1, 0, 2}, {2, 0, 1}, {1, 2, 0}, {0, 2, 1}};
    for (int i = 0; i < 3; i++) check_transposed(shapes[i], perms[0]);
    for (int i = 3; i < 6; i++)
        for (int p = 0; p < 4; p++) check_transposed(shapes[i], perms[p]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numerics),
        cmocka_unit_test(test_symbolic),
        cmocka_unit_test(test_structure),
        cmocka_unit_test(test_chunk_from_target),
        cmocka_unit_test(test_transposed),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
