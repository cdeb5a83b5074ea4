/*
 * test_parallel_e2e.c -- scheduled, parallel kernels through the public API:
 * exact results on sizes that are not multiples of the chunk or vector size,
 * with 1, 2 and 3 threads; two contexts with different thread counts used
 * from two host threads at once; pooled results that outlive their context.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "minitriton.h"

static const int64_t sizes[] = {1, 7, 1000, 4097, (1 << 20) + 3};

static const char *ADD2 =
    "def add2(a: Tensor((\"n\",), \"float32\"), b: Tensor((\"n\",), \"float32\")):\n"
    "    out = a + b\n"
    "    out = out + a\n"
    "    return out\n";

static const char *EXPMUL =
    "def expmul(a: Tensor((\"n\",), \"float32\"), b: Tensor((\"n\",), \"float32\")):\n"
    "    return exp(a) * b + 1.0\n";

static const char *BIAS =
    "def bias(x: Tensor((\"n\", 784), \"float32\"), b: Tensor((784,), \"float32\")):\n"
    "    return x * 2.0 + b\n";

static const char *STATIC3 =
    "def st3(x: Tensor((3, 5, 7001), \"float32\"), y: Tensor((3, 5, 7001), \"float32\")):\n"
    "    return x * y - x\n";

static mt_tensor *vec(int64_t n, int seed) {
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, 1, &n);
    float *d = mt_tensor_data(t);
    for (int64_t i = 0; i < n; i++) d[i] = (float)((i * 31 + seed) % 101) * 0.03125f - 1.5f;
    return t;
}

static mt_context *ctx_with(int threads) {
    mt_context_options o = {0};
    o.num_threads = threads;
    mt_context *c = mt_context_create(&o);
    assert_non_null(c);
    return c;
}

static mt_kernel *compile_in(mt_context *c, const char *src) {
    mt_diag d;
    mt_kernel *k = mt_jit_compile(c, src, NULL, &d);
    if (!k) fail_msg("compile failed:\n%s", d.text);
    return k;
}

static mt_tensor *run2(mt_kernel *k, mt_tensor *a, mt_tensor *b) {
    mt_tensor *args[2] = {a, b}, *res = NULL;
    mt_diag d;
    if (mt_kernel_run(k, args, 2, &res, 1, &d) != MT_OK) fail_msg("run failed: %s", d.text);
    return res;
}

static void test_add_chain_sizes(void **state) {
    for (int th = 1; th <= 3; th++) {
        mt_context *c = ctx_with(th);
        mt_kernel *k = compile_in(c, ADD2);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            mt_tensor *a = vec(sizes[s], 1), *b = vec(sizes[s], 2);
            mt_tensor *r = run2(k, a, b);
            const float *av = mt_tensor_data(a), *bv = mt_tensor_data(b), *rv = mt_tensor_data(r);
            for (int64_t i = 0; i < sizes[s]; i++) assert_true(rv[i] == (av[i] + bv[i]) + av[i]);
            mt_tensor_release(a), mt_tensor_release(b), mt_tensor_release(r);
        }
        mt_kernel_release(k);
        mt_context_destroy(c);
    }
}

static void test_expmul_sizes(void **state) {
    mt_context *c = ctx_with(2);
    mt_kernel *k = compile_in(c, EXPMUL);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        mt_tensor *a = vec(sizes[s], 3), *b = vec(sizes[s], 4);
        mt_tensor *r = run2(k, a, b);
        const float *av = mt_tensor_data(a), *bv = mt_tensor_data(b), *rv = mt_tensor_data(r);
        for (int64_t i = 0; i < sizes[s]; i++) {
            double want = exp((double)av[i]) * bv[i] + 1.0;
            assert_true(fabs(rv[i] - want) <= 1e-5 * fmax(1.0, fabs(want)));
        }
        mt_tensor_release(a), mt_tensor_release(b), mt_tensor_release(r);
    }
    mt_kernel_release(k);
    mt_context_destroy(c);
}

static void test_broadcast_rows(void **state) {
    mt_context *c = ctx_with(2);
    mt_kernel *k = compile_in(c, BIAS);
    static const int64_t rows[] = {1, 7, 21, 100, 333};
    for (size_t s = 0; s < sizeof rows / sizeof rows[0]; s++) {
        int64_t shape[2] = {rows[s], 784}, bn = 784;
        mt_tensor *x = mt_tensor_create(MT_FLOAT32, 2, shape), *b = vec(bn, 5);
        float *xv = mt_tensor_data(x);
        for (int64_t i = 0; i < rows[s] * 784; i++) xv[i] = (float)(i % 977) * 0.25f;
        mt_tensor *r = run2(k, x, b);
        const float *bv = mt_tensor_data(b), *rv = mt_tensor_data(r);
        for (int64_t i = 0; i < rows[s] * 784; i++) assert_true(rv[i] == xv[i] * 2.0f + bv[i % 784]);
        mt_tensor_release(x), mt_tensor_release(b), mt_tensor_release(r);
    }
    /* the row loop is chunked and parallel, the row itself stays the inner loop */
    const char *sched = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(sched, "grid=((n + 20) // 21,))"));
    mt_kernel_release(k);
    mt_context_destroy(c);
}

static void test_static_3d(void **state) {
    mt_context *c = ctx_with(2);
    mt_kernel *k = compile_in(c, STATIC3);
    const char *sched = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    /* 105015 elements: 7 chunks of 16384, one flat index */
    assert_non_null(strstr(sched, "grid=(7,))"));
    assert_non_null(strstr(sched, "T.min(16384, 105015 - i0_i1_i2_fused_0 * 16384)"));
    int64_t shape[3] = {3, 5, 7001};
    mt_tensor *x = mt_tensor_create(MT_FLOAT32, 3, shape), *y = mt_tensor_create(MT_FLOAT32, 3, shape);
    float *xv = mt_tensor_data(x), *yv = mt_tensor_data(y);
    for (int64_t i = 0; i < 105015; i++) xv[i] = (float)(i % 89) - 40, yv[i] = (float)(i % 7) * 0.5f;
    mt_tensor *r = run2(k, x, y);
    const float *rv = mt_tensor_data(r);
    for (int64_t i = 0; i < 105015; i++) assert_true(rv[i] == xv[i] * yv[i] - xv[i]);
    mt_tensor_release(x), mt_tensor_release(y), mt_tensor_release(r);
    mt_kernel_release(k);
    mt_context_destroy(c);
}

/* Results come from the context's pool: they stay valid after the kernel and
 * the context are gone, and released results are reused by the next run. */
static void test_pooled_results(void **state) {
    mt_context *c = ctx_with(2);
    mt_kernel *k = compile_in(c, ADD2);
    int64_t n = (1 << 20) + 3;
    mt_tensor *a = vec(n, 6), *b = vec(n, 7);
    void *prev = NULL;
    for (int rep = 0; rep < 5; rep++) {
        mt_tensor *r = run2(k, a, b);
        if (rep > 0) assert_ptr_equal(mt_tensor_data(r), prev); /* the same block again */
        prev = mt_tensor_data(r);
        const float *av = mt_tensor_data(a), *bv = mt_tensor_data(b), *rv = mt_tensor_data(r);
        for (int64_t i = 0; i < n; i += 997) assert_true(rv[i] == (av[i] + bv[i]) + av[i]);
        mt_tensor_release(r);
    }
    mt_tensor *keep = run2(k, a, b);
    mt_kernel_release(k);
    mt_context_destroy(c);
    const float *av = mt_tensor_data(a), *bv = mt_tensor_data(b), *rv = mt_tensor_data(keep);
    for (int64_t i = 0; i < n; i++) assert_true(rv[i] == (av[i] + bv[i]) + av[i]);
    mt_tensor_release(keep);
    mt_tensor_release(a), mt_tensor_release(b);
}

/* Two contexts with different thread counts, each run from its own host
 * thread at the same time. */
typedef struct job {
    mt_kernel *k;
    int bad;
} job;

static void *job_main(void *j_) {
    job *j = j_;
    for (int rep = 0; rep < 20; rep++) {
        int64_t n = 300000 + rep * 17;
        mt_tensor *a = vec(n, rep), *b = vec(n, rep + 1);
        mt_tensor *args[2] = {a, b}, *r = NULL;
        if (mt_kernel_run(j->k, args, 2, &r, 1, NULL) != MT_OK) {
            j->bad = 1;
        } else {
            const float *av = mt_tensor_data(a), *bv = mt_tensor_data(b), *rv = mt_tensor_data(r);
            for (int64_t i = 0; i < n; i++)
                if (rv[i] != (av[i] + bv[i]) + av[i]) j->bad = 1;
        }
        mt_tensor_release(a), mt_tensor_release(b), mt_tensor_release(r);
    }
    return NULL;
}

static void test_two_contexts(void **state) {
    mt_context *c1 = ctx_with(1), *c2 = ctx_with(3);
    job j1 = {compile_in(c1, ADD2), 0}, j2 = {compile_in(c2, ADD2), 0};
    pthread_t t1, t2;
    assert_int_equal(pthread_create(&t1, NULL, job_main, &j1), 0);
    assert_int_equal(pthread_create(&t2, NULL, job_main, &j2), 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    assert_int_equal(j1.bad, 0);
    assert_int_equal(j2.bad, 0);
    mt_kernel_release(j1.k), mt_kernel_release(j2.k);
    mt_context_destroy(c1), mt_context_destroy(c2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_chain_sizes),
        cmocka_unit_test(test_expmul_sizes),
        cmocka_unit_test(test_broadcast_rows),
        cmocka_unit_test(test_static_3d),
        cmocka_unit_test(test_pooled_results),
        cmocka_unit_test(test_two_contexts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
