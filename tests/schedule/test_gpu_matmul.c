/*
 * test_gpu_matmul.c -- the GPU matmul rules (src/schedule/gpu_gemv.c, few
 * rows; src/schedule/gpu_matmul.c, shared-memory tiles) through the public
 * API, for target cuda: emulated on the CPU unless MT_TEST_TARGET=cuda
 * (scripts/gpu_check.sh runs it so on a GPU machine).
 *
 * Each case names the rule it must take and runs against a double
 * reference, |got - want| <= 2u |want| + (K + 1) u sum_k |a_ik b_kj| (the
 * bound of test_matmul_schedule.c; u = 6e-8 for float32, 1.2e-16 for
 * float64). The shapes reach both thread layouts of the GEMV rule (B
 * contiguous along j or along k), the three tile sizes of the matmul rule
 * (128, 64 and 32, by how many blocks fill the GPU: test_tile_sizes), a transposed A, edges in every
 * dim, a batch, a symbolic M and an epilogue. The CUDA text of a float32
 * tile kernel reads its shared tiles as float4, and ptxas (when NVRTC is
 * present) reports no spills and at most 128 registers (two blocks per SM).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

typedef enum { XW, XWT, XTW } layout; /* x @ w, x @ w.T, x.T @ w */

typedef struct gcase {
    const char *rule;   /* "gpu_gemv" or "gpu_matmul" */
    mt_dtype dt;
    layout lay;
    int64_t batch;      /* 0: none */
    int64_t m, k, n;
    bool bias_relu;
    bool symbolic_m;
} gcase;

static const char *dts(mt_dtype t) { return t == MT_FLOAT64 ? "float64" : "float32"; }

static void source(char *s, size_t cap, const gcase *c) {
    char xs[96], ws[96], bs[16] = "";
    char m[24];
    if (c->symbolic_m) snprintf(m, sizeof m, "\"m\"");
    else snprintf(m, sizeof m, "%lld", (long long)c->m);
    if (c->batch) snprintf(bs, sizeof bs, "%lld, ", (long long)c->batch);
    if (c->lay == XTW) snprintf(xs, sizeof xs, "(%s%lld, %s)", bs, (long long)c->k, m);
    else snprintf(xs, sizeof xs, "(%s%s, %lld)", bs, m, (long long)c->k);
    if (c->lay == XWT) snprintf(ws, sizeof ws, "(%lld, %lld)", (long long)c->n, (long long)c->k);
    else snprintf(ws, sizeof ws, "(%lld, %lld)", (long long)c->k, (long long)c->n);
    const char *x = c->lay == XTW ? (c->batch ? "x.transpose(0, 2, 1)" : "x.T") : "x";
    const char *w = c->lay == XWT ? "w.T" : "w";
    snprintf(s, cap,
             "def f(x: Tensor(%s, \"%s\"), w: Tensor(%s, \"%s\"), b: Tensor((%lld,), \"%s\")):\n"
             "    return %s%s @ %s%s\n",
             xs, dts(c->dt), ws, dts(c->dt), (long long)c->n, dts(c->dt), c->bias_relu ? "relu(" : "", x,
             w, c->bias_relu ? " + b)" : " + b * 0.0");
}

static double get(const mt_tensor *t, int64_t i) {
    return mt_tensor_dtype(t) == MT_FLOAT64 ? ((const double *)mt_tensor_data(t))[i]
                                            : ((const float *)mt_tensor_data(t))[i];
}

static mt_tensor *random_tensor(mt_dtype dt, int nd, const int64_t *dims) {
    mt_tensor *t = mt_tensor_create(dt, nd, dims);
    assert_non_null(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++) {
        if (dt == MT_FLOAT64) ((double *)mt_tensor_data(t))[i] = rnd();
        else ((float *)mt_tensor_data(t))[i] = (float)rnd();
    }
    return t;
}

/* x[b, i, k] in the case's layout. */
static double xat(const gcase *c, const mt_tensor *x, int64_t b, int64_t i, int64_t k) {
    return c->lay == XTW ? get(x, (b * c->k + k) * c->m + i) : get(x, (b * c->m + i) * c->k + k);
}
static double wat(const gcase *c, const mt_tensor *w, int64_t k, int64_t j) {
    return c->lay == XWT ? get(w, j * c->k + k) : get(w, k * c->n + j);
}

static void run_case(const gcase *c) {
    char src[768];
    source(src, sizeof src, c);
    mt_kernel *k = compile_ok(src);
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(t);
    char want[64];
    snprintf(want, sizeof want, "\"schedule\": \"%s\"", c->rule);
    if (!strstr(t, want)) fail_msg("expected %s for:\n%s\n%s", c->rule, src, t);
    int64_t nb = c->batch ? c->batch : 1;
    int64_t xd[3], wd[2] = {c->lay == XWT ? c->n : c->k, c->lay == XWT ? c->k : c->n}, bd[1] = {c->n};
    int nd = 0;
    if (c->batch) xd[nd++] = c->batch;
    xd[nd++] = c->lay == XTW ? c->k : c->m;
    xd[nd++] = c->lay == XTW ? c->m : c->k;
    mt_tensor *args[3] = {random_tensor(c->dt, nd, xd), random_tensor(c->dt, 2, wd), random_tensor(c->dt, 1, bd)};
    mt_tensor *out = NULL;
    mt_diag d;
    if (test_kernel_run(k, args, 3, &out, 1, &d) != MT_OK) fail_msg("%s: run failed: %s", src, d.text);
    double u = c->dt == MT_FLOAT64 ? 1.2e-16 : 6e-8;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++) {
                double s = 0, scale = 0;
                for (int64_t kk = 0; kk < c->k; kk++) {
                    double p = xat(c, args[0], b, i, kk) * wat(c, args[1], kk, j);
                    s += p;
                    scale += fabs(p);
                }
                double bias = get(args[2], j);
                double ref = c->bias_relu ? fmax(s + bias, 0.0) : s;
                double got = get(out, (b * c->m + i) * c->n + j);
                double tol = 2 * u * fabs(ref) + (double)(c->k + 1) * u * (scale + fabs(bias));
                if (!(fabs(got - ref) <= tol))
                    fail_msg("%s\nat [%lld, %lld, %lld]: got %.9g, want %.9g (tol %.3g)", src, (long long)b,
                             (long long)i, (long long)j, got, ref, tol);
            }
    for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
    mt_tensor_release(out);
    mt_kernel_release(k);
}

#define F32 MT_FLOAT32
#define F64 MT_FLOAT64

static void test_gemv(void **st) {
    (void)st;
    static const gcase cases[] = {
        {"gpu_gemv", F32, XW, 0, 1, 784, 128, true, false},  /* the MLP's first layer, one sample */
        {"gpu_gemv", F32, XW, 0, 1, 37, 45, false, false},   /* column edge, K not a multiple of 8 */
        {"gpu_gemv", F32, XW, 0, 4, 300, 70, true, false},
        {"gpu_gemv", F32, XWT, 0, 1, 100, 13, true, false},  /* dot products along k */
        {"gpu_gemv", F32, XWT, 0, 3, 33, 9, false, false},
        {"gpu_gemv", F64, XW, 0, 2, 50, 33, false, false},
        {"gpu_gemv", F32, XW, 2, 3, 20, 40, true, false},    /* batched */
        {"gpu_gemv", F32, XW, 0, 1, 1, 1, false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
}

static void test_tiles(void **st) {
    (void)st;
    static const gcase cases[] = {
        {"gpu_matmul", F32, XW, 0, 5, 7, 3, false, false},       /* one partial tile */
        {"gpu_matmul", F32, XW, 0, 67, 33, 130, true, false},    /* 64-tiles, edges in every dim */
        {"gpu_matmul", F32, XWT, 0, 65, 40, 70, true, false},    /* B copied along k */
        {"gpu_matmul", F32, XTW, 0, 70, 19, 66, false, false},   /* A copied along i */
        {"gpu_matmul", F64, XW, 0, 33, 17, 21, false, false},
        {"gpu_matmul", F32, XW, 3, 40, 24, 50, true, false},     /* batched: blockIdx.z */
        {"gpu_matmul", F32, XW, 0, 1400, 24, 1600, false, false}, /* 132+ blocks: 128-tiles */
        {"gpu_matmul", F32, XW, 0, 1100, 24, 1100, false, false}, /* 264+ blocks of 64 */
        {"gpu_matmul", F32, XW, 0, 45, 64, 60, true, true},      /* symbolic m (run at 45) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
}

/* The tile follows the grid: 128 when its blocks fill the 132 SMs of
 * sm_90, 64 when those make two per SM, else 32. */
static void test_tile_sizes(void **st) {
    (void)st;
    static const struct { int64_t m, n; const char *tile; } cs[] = {
        {1400, 1600, "A_tile = T.alloc_buffer((1056,)"},  /* 8 x (128 + 4) */
        {1100, 1100, "A_tile = T.alloc_buffer((1088,)"},  /* 16 x (64 + 4) */
        {4096, 128, "A_tile = T.alloc_buffer((1152,)"},   /* 32 x (32 + 4): the MLP's layer */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        char src[256];
        snprintf(src, sizeof src, "def f(a: Tensor((%lld, 64), \"float32\"), b: Tensor((64, %lld), \"float32\")):\n"
                                  "    return a @ b\n", (long long)cs[i].m, (long long)cs[i].n);
        mt_kernel *k = compile_ok(src);
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        if (!strstr(t, cs[i].tile)) fail_msg("%s: expected %s in\n%s", src, cs[i].tile, t);
        mt_kernel_release(k);
    }
}

/* A grid's y and z stop at 65535 blocks: every block of both rules is
 * numbered along blockIdx.x (up to 2^31 - 1), however large the batch. */
static void test_grid_in_x(void **st) {
    (void)st;
    static const char *const srcs[] = {
        "def f(a: Tensor((70000, 2, 8), \"float32\"), w: Tensor((8, 16), \"float32\")):\n    return a @ w\n",
        "def f(a: Tensor((70000, 16, 16), \"float32\"), w: Tensor((70000, 16, 16), \"float32\")):\n"
        "    return a @ w\n",
    };
    for (size_t i = 0; i < 2; i++) {
        mt_kernel *k = compile_ok(srcs[i]);
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        if (strstr(t, "blockIdx.y") || strstr(t, "blockIdx.z") || !strstr(t, "grid=(70000,)"))
            fail_msg("%s: expected one grid dim of 70000 blocks:\n%s", srcs[i], t);
        mt_kernel_release(k);
    }
}

/* The float32 tile kernel's text: float4 reads of the shared tiles; no
 * spills in ptxas's report when NVRTC compiled it. */
static void test_cuda_text(void **st) {
    (void)st;
    mt_compile_options o; /* not emulated: NVRTC compiles it when present, GPU or not */
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, "def f(a: Tensor((2048, 512), \"float32\"), b: Tensor((512, 2048), \"float32\")):\n"
                                            "    return a @ b\n", &o, &d);
    if (!k) fail_msg("%s", d.text);
    const char *s = mt_kernel_dump(k, MT_STAGE_CUDA);
    assert_non_null(s);
    assert_non_null(strstr(s, "const float4 vec = *(const float4 *)&A_tile["));
    assert_non_null(strstr(s, "__shared__ __align__(16) float B_tile[1056];")); /* 8 x (128 + 4) */
    const char *rep = strstr(s, "// ptxas");
    if (rep) {
        assert_non_null(strstr(rep, " 0 bytes spill stores"));
        const char *regs = strstr(rep, "matmul_kernel0: ");
        assert_non_null(regs);
        assert_true(atoi(regs + strlen("matmul_kernel0: ")) <= 128); /* two blocks of 256 per SM */
        assert_non_null(strstr(s, "__launch_bounds__(256, 2)"));
    }
    else print_message("no ptxas report (NVRTC absent): spills not checked\n");
    mt_kernel_release(k);
}

int main(void) {
    const char *t = getenv("MT_TEST_TARGET");
    if (!t || !*t || strcmp(t, "cpu") == 0) setenv("MT_TEST_TARGET", "cuda-emulate", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemv),
        cmocka_unit_test(test_tiles),
        cmocka_unit_test(test_tile_sizes),
        cmocka_unit_test(test_grid_in_x),
        cmocka_unit_test(test_cuda_text),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
