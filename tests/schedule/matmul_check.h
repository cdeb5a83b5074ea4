/*
 * matmul_check.h -- what the user-schedule suites share
 * (test_user_schedule.c, test_transform_layout.c): float32 inputs with a
 * fixed pattern, and a kernel computing a @ b checked against C loops in
 * double (a schedule keeps a reduction's order over k, and T.fma rounds
 * once: 1e-4 of the sum of magnitudes).
 */
#ifndef MT_TESTS_MATMUL_CHECK_H
#define MT_TESTS_MATMUL_CHECK_H

#include <math.h>

#include "test_util.h"

__attribute__((unused)) static mt_tensor *tensor_f32(int ndim, const int64_t *shape, unsigned seed) {
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, ndim, shape);
    float *p = mt_tensor_data(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++)
        p[i] = (float)((i * 7919 + seed * 104729) % 1000) / 250.0f - 2.0f;
    return t;
}

__attribute__((unused)) static const float *F(const mt_tensor *t) { return mt_tensor_data(t); }

/* The kernel's one result on args. */
__attribute__((unused)) static mt_tensor *run1(mt_kernel *k, mt_tensor **args, int nargs) {
    mt_diag d;
    mt_tensor *out = NULL;
    if (test_kernel_run(k, args, nargs, &out, 1, &d) != MT_OK) fail_msg("run failed:\n%s", d.text);
    return out;
}

/* k computes a @ b, a m x kk, b kk x n. */
__attribute__((unused)) static void check_matmul(mt_kernel *k, int m, int n, int kk) {
    int64_t sa[2] = {m, kk}, sb[2] = {kk, n};
    mt_tensor *args[2] = {tensor_f32(2, sa, 1), tensor_f32(2, sb, 2)};
    mt_tensor *c = run1(k, args, 2);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double ref = 0, mag = 0;
            for (int p = 0; p < kk; p++) {
                double t = (double)F(args[0])[i * kk + p] * F(args[1])[p * n + j];
                ref += t, mag += fabs(t);
            }
            double got = F(c)[i * n + j];
            if (fabs(got - ref) > 1e-4 * (mag + 1)) fail_msg("C[%d, %d] = %g, want %g", i, j, got, ref);
        }
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_tensor_release(c);
}

#endif
