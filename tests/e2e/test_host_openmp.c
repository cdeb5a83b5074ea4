/*
 * test_host_openmp.c -- a host that uses OpenMP itself (built with
 * -fopenmp; not in the ThreadSanitizer build, libgomp is not instrumented):
 * kernels of one 2-thread context run from inside the host's parallel
 * regions are right, nothing deadlocks, and the host's OpenMP settings are
 * what they were (the library does not use or configure OpenMP).
 */
#include <omp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "minitriton.h"

static const char *ADD2 =
    "def add2(a: Tensor((\"n\",), \"float32\"), b: Tensor((\"n\",), \"float32\")):\n"
    "    out = a + b\n"
    "    out = out + a\n"
    "    return out\n";

/* Runs k on fresh inputs of n elements; 1 when the result is wrong. */
static int run_check(mt_kernel *k, int64_t n, int seed) {
    mt_tensor *a = mt_tensor_create(MT_FLOAT32, 1, &n), *b = mt_tensor_create(MT_FLOAT32, 1, &n);
    float *av = mt_tensor_data(a), *bv = mt_tensor_data(b);
    for (int64_t i = 0; i < n; i++) {
        av[i] = (float)((i + seed) % 13) - 6;
        bv[i] = (float)((i * 3 + seed) % 7);
    }
    mt_tensor *args[2] = {a, b}, *r = NULL;
    int bad = mt_kernel_run(k, args, 2, &r, 1, NULL) != MT_OK;
    if (!bad) {
        const float *rv = mt_tensor_data(r);
        for (int64_t i = 0; i < n; i++) bad |= rv[i] != (av[i] + bv[i]) + av[i];
        mt_tensor_release(r);
    }
    mt_tensor_release(a), mt_tensor_release(b);
    return bad;
}

static void test_inside_host_regions(void **state) {
    int max_before = omp_get_max_threads(), dyn_before = omp_get_dynamic();
    mt_context_options o = {0};
    o.num_threads = 2;
    mt_context *c = mt_context_create(&o);
    mt_diag d;
    mt_kernel *k = mt_jit_compile(c, ADD2, NULL, &d);
    if (!k) fail_msg("%s", d.text);
    int bad = 0;
    /* four host threads, each running the kernel (the pool serves one at a time) */
#pragma omp parallel num_threads(4) reduction(| : bad)
    for (int rep = 0; rep < 10; rep++) bad |= run_check(k, 150000 + rep * 11, omp_get_thread_num() + rep);
    assert_int_equal(bad, 0);
    /* a worksharing loop whose iterations run kernels, and the kernel outside any region */
#pragma omp parallel for num_threads(3) reduction(| : bad) schedule(dynamic)
    for (int i = 0; i < 12; i++) bad |= run_check(k, 70000 + i, i);
    bad |= run_check(k, 300001, 5);
    assert_int_equal(bad, 0);
    mt_kernel_release(k);
    mt_context_destroy(c);
    assert_int_equal(omp_get_max_threads(), max_before);
    assert_int_equal(omp_get_dynamic(), dyn_before);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inside_host_regions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
