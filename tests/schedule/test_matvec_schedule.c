/*
 * test_matvec_schedule.c -- x @ w.T with few rows (src/schedule/rule_matvec.c)
 * and the MLP 784-128-10 through the public API.
 *
 * Numerics: against a double reference with |got - want| <= 2u * |want| +
 * (K + 1) * u * sum_k |x_k * w_k| (+ |bias|), u = 6e-8 (float32) or 1.2e-16
 * (float64): the error bound of a dot product summed in any order, which is
 * what the matrix-vector schedule needs (it sums in vl partial sums, then a
 * tree; the result is not the sequential sum). The MLP's bound carries the
 * first layer's bound through relu and the second layer (|relu(a) - relu(b)|
 * <= |a - b|).
 * Shapes: M = 1..40 (below 12 the matvec schedule, from 12 on B packed with
 * a transposing copy) with constant and symbolic M, K and N not multiples of
 * 16 or of the column block (8), float32 and float64; structure: which
 * schedule the scheduled TIR holds and that the MLP is two fused kernels.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double rnd(void) { /* uniform in [-1, 1) */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

static double get(const mt_tensor *t, int64_t i) {
    const void *p = mt_tensor_data(t);
    return mt_tensor_dtype(t) == MT_FLOAT64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

static mt_tensor *rand_tensor(mt_dtype dt, int ndim, const int64_t *dims) {
    mt_tensor *t = mt_tensor_create(dt, ndim, dims);
    assert_non_null(t);
    void *p = mt_tensor_data(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++) {
        double v = rnd();
        if (dt == MT_FLOAT64) ((double *)p)[i] = v;
        else ((float *)p)[i] = (float)v;
    }
    return t;
}

static double unit(mt_dtype dt) { return dt == MT_FLOAT64 ? 1.2e-16 : 6e-8; }

/* relu(x @ w.T + b) (relu when rl) against the reference; x (m, k), w (n, k). */
static void run_xwt(mt_kernel *kn, mt_dtype dt, int64_t m, int64_t k, int64_t n, bool bias, const char *what) {
    int64_t sx[2] = {m, k}, sw[2] = {n, k}, sb[1] = {n};
    mt_tensor *args[3] = {rand_tensor(dt, 2, sx), rand_tensor(dt, 2, sw), bias ? rand_tensor(dt, 1, sb) : NULL};
    int nargs = bias ? 3 : 2;
    mt_tensor *res = NULL;
    mt_diag d;
    if (mt_kernel_run(kn, args, nargs, &res, 1, &d) != MT_OK) fail_msg("%s: run failed: %s", what, d.text);
    double u = unit(dt);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0, sc = 0;
            for (int64_t q = 0; q < k; q++) {
                double p = get(args[0], i * k + q) * get(args[1], j * k + q);
                s += p;
                sc += fabs(p);
            }
            if (bias) {
                s = fmax(s + get(args[2], j), 0);
                sc += fabs(get(args[2], j));
            }
            double got = get(res, i * n + j), lim = 2 * u * fabs(s) + (double)(k + 1) * u * sc;
            if (!(fabs(got - s) <= lim))
                fail_msg("%s (m %lld k %lld n %lld) [%lld, %lld]: got %.17g, want %.17g (limit %.3g)", what,
                         (long long)m, (long long)k, (long long)n, (long long)i, (long long)j, got, s, lim);
        }
    mt_tensor_release(res);
    for (int i = 0; i < nargs; i++) mt_tensor_release(args[i]);
}

static const char *xwt_src(char *buf, size_t n, mt_dtype dt, const char *m, const char *k, const char *nn,
                           bool bias) {
    const char *t = mt_dtype_str(dt);
    if (bias)
        snprintf(buf, n,
                 "def f(x: Tensor((%s, %s), \"%s\"), w: Tensor((%s, %s), \"%s\"), b: Tensor((%s,), \"%s\")):\n"
                 "    return relu(x @ w.T + b)\n",
                 m, k, t, nn, k, t, nn, t);
    else
        snprintf(buf, n, "def f(x: Tensor((%s, %s), \"%s\"), w: Tensor((%s, %s), \"%s\")):\n    return x @ w.T\n",
                 m, k, t, nn, k, t);
    return buf;
}

/* Constant shapes: the schedule by M, numerics. */
static void test_constant_shapes(void **st) {
    /* (K, N); whole blocks of 8 columns and K of a vector or more take the
     * primitives (K tails of 4, 1, 8; float64: 4, 1, 0) */
    static const int64_t shapes[][2] = {{17, 13}, {100, 33}, {5, 3}, {784, 10}, {16, 8}, {100, 32}, {33, 16}, {1000, 64}};
    static const int64_t ms[] = {1, 2, 7, 11, 12, 13, 31, 32, 40};
    static const mt_dtype dts[] = {MT_FLOAT32, MT_FLOAT64};
    char src[512], k[32], nn[32], m[32];
    for (size_t t = 0; t < 2; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t q = 0; q < sizeof ms / sizeof ms[0]; q++) {
                snprintf(m, sizeof m, "%lld", (long long)ms[q]);
                snprintf(k, sizeof k, "%lld", (long long)shapes[s][0]);
                snprintf(nn, sizeof nn, "%lld", (long long)shapes[s][1]);
                bool bias = (s + q) % 2 == 0;
                mt_kernel *kn = compile_ok(xwt_src(src, sizeof src, dts[t], m, k, nn, bias));
                const char *tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
                bool packed = strstr(tir, "B_pack") != NULL, mv = !packed && strstr(tir, "T.fma(") != NULL;
                if (ms[q] < 12 ? !mv || packed : mv || !packed)
                    fail_msg("m = %lld: expected the %s schedule:\n%s\n%s", (long long)ms[q],
                             ms[q] < 12 ? "matvec" : "packed", src, tir);
                bool prims = ms[q] < 12 && shapes[s][1] % 8 == 0 && shapes[s][0] >= 16;
                if (prims != (strstr(mt_kernel_dump(kn, MT_STAGE_SCHEDULE), "sch.rfactor(") != NULL))
                    fail_msg("m = %lld: expected %s:\n%s\n%s", (long long)ms[q], prims ? "primitives" : "no rfactor",
                             src, mt_kernel_dump(kn, MT_STAGE_SCHEDULE));
                /* the transpose is fused: no kernel writes w.T */
                if (strstr(mt_kernel_dump(kn, MT_STAGE_GRAPH_OPT), "cls.transpose"))
                    fail_msg("transpose not fused:\n%s", src);
                run_xwt(kn, dts[t], ms[q], shapes[s][0], shapes[s][1], bias, src);
                mt_kernel_release(kn);
            }
}

/* Symbolic M (matvec below 12 at run time, packed above), then everything
 * symbolic (column tail of one-column blocks, K tail by a loop, chunk count
 * at run time). */
static void test_symbolic(void **st) {
    static const mt_dtype dts[] = {MT_FLOAT32, MT_FLOAT64};
    char src[512];
    for (size_t t = 0; t < 2; t++) {
        mt_kernel *kn = compile_ok(xwt_src(src, sizeof src, dts[t], "\"m\"", "37", "21", true));
        assert_non_null(strstr(mt_kernel_dump(kn, MT_STAGE_TIR_SCHED), "if m < 12:"));
        for (int64_t m = 1; m <= 40; m++) run_xwt(kn, dts[t], m, 37, 21, true, src);
        mt_kernel_release(kn);
        kn = compile_ok(xwt_src(src, sizeof src, dts[t], "\"m\"", "\"k\"", "\"n\"", false));
        static const int64_t sz[][3] = {{1, 1, 1}, {1, 784, 128}, {3, 17, 13}, {7, 16, 8},  {1, 0, 5},
                                        {5, 9, 0}, {31, 40, 9},   {2, 3000, 70}, {33, 17, 13}};
        for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++) run_xwt(kn, dts[t], sz[i][0], sz[i][1], sz[i][2], false, src);
        mt_kernel_release(kn);
    }
}

/* A batch dim: (3, m, 19) @ transpose((3, 11, 19), (0, 2, 1)), every batch
 * index against the reference, matvec (m = 5) and packed (m = 40). */
static void test_batched(void **st) {
    static const int64_t ms[] = {5, 40};
    for (size_t q = 0; q < 2; q++) {
        char src[512];
        snprintf(src, sizeof src,
                 "def f(x: Tensor((3, %lld, 19), \"float32\"), w: Tensor((3, 11, 19), \"float32\")):\n"
                 "    return x @ transpose(w, (0, 2, 1))\n",
                 (long long)ms[q]);
        mt_kernel *kn = compile_ok(src);
        const char *t = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
        if (!strstr(t, "T.fma(") || (ms[q] < 12) == (strstr(t, "B_pack") != NULL))
            fail_msg("unexpected schedule:\n%s", t);
        int64_t m = ms[q], sx[3] = {3, m, 19}, sw[3] = {3, 11, 19};
        mt_tensor *args[2] = {rand_tensor(MT_FLOAT32, 3, sx), rand_tensor(MT_FLOAT32, 3, sw)};
        mt_tensor *res = NULL;
        mt_diag d;
        if (mt_kernel_run(kn, args, 2, &res, 1, &d) != MT_OK) fail_msg("run failed: %s", d.text);
        double u = unit(MT_FLOAT32);
        for (int64_t b = 0; b < 3; b++)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < 11; j++) {
                    double s = 0, sc = 0;
                    for (int64_t k = 0; k < 19; k++) {
                        double p = get(args[0], (b * m + i) * 19 + k) * get(args[1], (b * 11 + j) * 19 + k);
                        s += p;
                        sc += fabs(p);
                    }
                    double got = get(res, (b * m + i) * 11 + j);
                    if (!(fabs(got - s) <= 2 * u * fabs(s) + 20 * u * sc))
                        fail_msg("batch %lld [%lld, %lld]: got %.9g, want %.9g", (long long)b, (long long)i,
                                 (long long)j, got, s);
                }
        mt_tensor_release(res);
        mt_tensor_release(args[0]);
        mt_tensor_release(args[1]);
        mt_kernel_release(kn);
    }
}

/* A 400 KB layer runs in parallel chunks; a 5 KB one does not. The
 * first (whole blocks of 8 columns) as primitives (rule_matmul_prims.c):
 * 8 partial sums of 16 lanes per block, x's vector shared by the 8 FMAs,
 * C of a block an 8-element local under the epilogue; the same with
 * primitives=0 is the lowered form. */
static void test_structure(void **st) {
    char src[1024];
    mt_kernel *kn = compile_ok(xwt_src(src, sizeof src, MT_FLOAT32, "1", "784", "128", true));
    const char *t = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED), *how = mt_kernel_dump(kn, MT_STAGE_SCHEDULE);
    if (!strstr(t, "grid=(6,))") || !strstr(t, "\"parallel_body\"") || !strstr(t, "T.fma(x[T.Ramp(") ||
        !strstr(t, "T.alloc_buffer((8,), \"float32\")") || !strstr(how, "sch.rfactor(") || strstr(how, "apply_rule"))
        fail_msg("unexpected schedule:\n%s\n%s", how, t);
    mt_kernel_release(kn);
    size_t n = strlen(src);
    snprintf(src + n, sizeof src - n, "\n@T.schedule(\"fused_transpose_matmul_add_relu\")\ndef s(sch):\n"
                                      "    sch.apply_rule(\"schedule_matmul\", primitives=0)\n");
    kn = compile_ok(src);
    t = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
    if (!strstr(t, "grid=(6,))") || !strstr(t, "for ch in range(begin, end):") ||
        !strstr(t, "T.fma(xv, w[T.Ramp("))
        fail_msg("unexpected schedule:\n%s", t);
    mt_kernel_release(kn);
    src[n] = 0;
    kn = compile_ok(xwt_src(src, sizeof src, MT_FLOAT32, "1", "128", "10", true));
    t = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
    if (strstr(t, "T.launch") || !strstr(t, "xv = ")) fail_msg("unexpected schedule:\n%s", t);
    mt_kernel_release(kn);
}

/* ---- the MLP ----------------------------------------------------------------------- */

static const char *mlp_src(char *buf, size_t n, const char *batch) {
    snprintf(buf, n,
             "def mlp(x: Tensor((%s, 784), \"float32\"), w0: Tensor((128, 784), \"float32\"),\n"
             "        b0: Tensor((128,), \"float32\"), w1: Tensor((10, 128), \"float32\"),\n"
             "        b1: Tensor((10,), \"float32\")):\n"
             "    h = relu(x @ w0.T + b0)\n"
             "    return h @ w1.T + b1\n",
             batch);
    return buf;
}

/* One row of the MLP against the reference. */
static void check_mlp_row(mt_tensor *const *args, const mt_tensor *res, int64_t batch, int64_t r) {
    double u = unit(MT_FLOAT32), h[128], herr[128];
    for (int j = 0; j < 128; j++) {
        double s = get(args[2], j), sc = fabs(s);
        for (int q = 0; q < 784; q++) {
            double p = get(args[0], r * 784 + q) * get(args[1], j * 784 + q);
            s += p;
            sc += fabs(p);
        }
        h[j] = fmax(s, 0);
        herr[j] = 2 * u * fabs(s) + 785 * u * sc; /* bound on |h_got - h| */
    }
    for (int j = 0; j < 10; j++) {
        double s = get(args[4], j), sc = fabs(s), prop = 0;
        for (int q = 0; q < 128; q++) {
            double w = get(args[3], j * 128 + q);
            s += h[q] * w;
            sc += fabs(h[q] * w) + herr[q] * fabs(w);
            prop += herr[q] * fabs(w);
        }
        double got = get(res, r * 10 + j), lim = prop + 2 * u * fabs(s) + 129 * u * sc;
        if (!(fabs(got - s) <= lim))
            fail_msg("MLP batch %lld row %lld out %d: got %.9g, want %.9g (limit %.3g)", (long long)batch,
                     (long long)r, j, got, s, lim);
    }
}

/* Rows 0, step, 2 step, ... and the last. */
static void run_mlp(mt_kernel *kn, int64_t batch, int64_t step) {
    int64_t sx[2] = {batch, 784}, sw0[2] = {128, 784}, sb0[1] = {128}, sw1[2] = {10, 128}, sb1[1] = {10};
    mt_tensor *args[5] = {rand_tensor(MT_FLOAT32, 2, sx), rand_tensor(MT_FLOAT32, 2, sw0),
                          rand_tensor(MT_FLOAT32, 1, sb0), rand_tensor(MT_FLOAT32, 2, sw1),
                          rand_tensor(MT_FLOAT32, 1, sb1)};
    mt_tensor *res = NULL;
    mt_diag d;
    if (mt_kernel_run(kn, args, 5, &res, 1, &d) != MT_OK) fail_msg("MLP batch %lld: %s", (long long)batch, d.text);
    for (int64_t r = 0; r < batch; r += step) check_mlp_row(args, res, batch, r);
    check_mlp_row(args, res, batch, batch - 1);
    mt_tensor_release(res);
    for (int i = 0; i < 5; i++) mt_tensor_release(args[i]);
}

static void test_mlp(void **st) {
    char src[1024], b[32];
    static const int64_t batches[] = {1, 7, 33, 4096};
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
        snprintf(b, sizeof b, "%lld", (long long)batches[i]);
        mt_kernel *kn = compile_ok(mlp_src(src, sizeof src, b));
        run_mlp(kn, batches[i], batches[i] > 100 ? 97 : 1);
        mt_kernel_release(kn);
    }
    mt_kernel *kn = compile_ok(mlp_src(src, sizeof src, "\"batch\""));
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) run_mlp(kn, batches[i], batches[i] > 100 ? 97 : 1);
    mt_kernel_release(kn);
}

/* Two kernels: each matmul with its transposed weights as prologue and its
 * bias (and relu) as epilogue. */
static void test_mlp_fusion(void **st) {
    char src[1024];
    mt_kernel *kn = compile_ok(mlp_src(src, sizeof src, "1"));
    const char *g = mt_kernel_dump(kn, MT_STAGE_GRAPH_OPT);
    int calls = 0;
    for (const char *p = g; (p = strstr(p, "R.call_tir(")) != NULL; p++) calls++;
    if (calls != 2 || !strstr(g, "R.call_tir(cls.fused_transpose_matmul_add_relu, (w0, x, b0)") ||
        !strstr(g, "R.call_tir(cls.fused_transpose_matmul_add, (w1, h, b1)"))
        fail_msg("expected two fused kernels:\n%s", g);
    mt_kernel_release(kn);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant_shapes), cmocka_unit_test(test_symbolic),
        cmocka_unit_test(test_batched),         cmocka_unit_test(test_structure),
        cmocka_unit_test(test_mlp),
        cmocka_unit_test(test_mlp_fusion),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
