/*
 * test_run_path.c -- the executor's kernel calls (src/runtime/executor.c):
 * kernels with 2 to 17 parameters, so both the direct call (up to 12
 * parameters) and the libffi call (more) run, with and without symbolic
 * dims; and the run tables past the on-stack size (more than 32 values).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "minitriton.h"

/* def s(a0: T, ..., a{k-1}: T): return a0 + a1 * 2 + a2 * 3 + ...  with T
 * symbolic ("n",) or fixed (37,). Integer-valued floats: the sums are exact
 * in any order. */
static char *source(int k, bool sym) {
    size_t cap = 4096;
    char *s = malloc(cap);
    int n = snprintf(s, cap, "def s(");
    for (int i = 0; i < k; i++)
        n += snprintf(s + n, cap - (size_t)n, "%sa%d: Tensor((%s,), \"float32\")", i ? ", " : "", i,
                      sym ? "\"n\"" : "37");
    n += snprintf(s + n, cap - (size_t)n, "):\n    return a0");
    for (int i = 1; i < k; i++) n += snprintf(s + n, cap - (size_t)n, " + a%d * %d.0", i, i + 1);
    snprintf(s + n, cap - (size_t)n, "\n");
    return s;
}

static void check_sum(mt_context *c, int k, bool sym, int64_t len) {
    char *src = source(k, sym);
    mt_diag d;
    mt_kernel *kern = mt_jit_compile(c, src, NULL, &d);
    if (!kern) fail_msg("compile failed:\n%s\n%s", src, d.text);
    mt_tensor *args[32];
    for (int i = 0; i < k; i++) {
        args[i] = mt_tensor_create(MT_FLOAT32, 1, &len);
        float *p = mt_tensor_data(args[i]);
        for (int64_t e = 0; e < len; e++) p[e] = (float)((e + i * 3) % 11) - 5;
    }
    mt_tensor *out = mt_tensor_create(MT_FLOAT32, 1, &len), *r = out;
    assert_int_equal(mt_kernel_run(kern, args, k, &r, 1, &d), MT_OK);
    const float *o = mt_tensor_data(out);
    for (int64_t e = 0; e < len; e++) {
        float want = 0;
        for (int i = 0; i < k; i++) want += (float)(i + 1) * (float)((e + i * 3) % 11 - 5);
        if (o[e] != want) fail_msg("k=%d sym=%d e=%lld: %g, want %g", k, sym, (long long)e, o[e], want);
    }
    /* a wrong argument is still refused, whichever call path */
    mt_tensor *keep = args[k - 1];
    int64_t bad = len + 1;
    args[k - 1] = mt_tensor_create(MT_FLOAT32, 1, &bad);
    r = out;
    assert_int_equal(mt_kernel_run(kern, args, k, &r, 1, &d), MT_ERR_INVALID_ARG);
    mt_tensor_release(args[k - 1]);
    args[k - 1] = keep;
    for (int i = 0; i < k; i++) mt_tensor_release(args[i]);
    mt_tensor_release(out);
    mt_kernel_release(kern);
    free(src);
}

static void test_param_counts(void **state) {
    mt_context *c = mt_context_create(NULL);
    assert_non_null(c);
    for (int k = 1; k <= 16; k++) {
        check_sum(c, k, false, 37);
        check_sum(c, k, true, 1 + k * 5);
    }
    mt_context_destroy(c);
}

/* More than 32 values (params, intermediates, results): the run's tables
 * come from the heap instead of the stack. A chain of matmuls keeps each
 * product as an intermediate (matmul does not fuse into matmul). */
static void test_many_values(void **state) {
    mt_context *c = mt_context_create(NULL);
    char src[4096];
    int n = snprintf(src, sizeof src, "def chain(a: Tensor((2, 2), \"float32\")):\n    x = a\n");
    for (int i = 0; i < 40; i++) n += snprintf(src + n, sizeof src - (size_t)n, "    x = x @ a\n");
    snprintf(src + n, sizeof src - (size_t)n, "    return x\n");
    mt_diag d;
    mt_kernel *k = mt_jit_compile(c, src, NULL, &d);
    if (!k) fail_msg("compile failed: %s", d.text);
    int64_t shape[2] = {2, 2};
    mt_tensor *a = mt_tensor_create(MT_FLOAT32, 2, shape), *r = NULL;
    float *av = mt_tensor_data(a);
    av[0] = 1, av[1] = 1, av[2] = 0, av[3] = 1; /* [[1, 1], [0, 1]]^41 = [[1, 41], [0, 1]] */
    assert_int_equal(mt_kernel_run(k, &a, 1, &r, 1, &d), MT_OK);
    const float *rv = mt_tensor_data(r);
    assert_true(rv[0] == 1 && rv[1] == 41 && rv[2] == 0 && rv[3] == 1);
    mt_tensor_release(r);
    mt_tensor_release(a);
    mt_kernel_release(k);
    mt_context_destroy(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_param_counts),
        cmocka_unit_test(test_many_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
