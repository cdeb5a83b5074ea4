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
 *
 * float16 inputs take the tensor cores (WMMA tiles, float32 sums; the rule
 * says "gpu_matmul (tensor cores)"): odd shapes (1, 5, 7, 17, 100, 257 in
 * M, N or K), each tile size, transposed operands, a batch, a symbolic M,
 * bias + relu and bias + gelu epilogues. Inputs are multiples of 2^-10 in
 * [-1, 1] (exact in float16); the result is rounded to float16 after the
 * matmul and after each epilogue op, so the bound adds u16 = 2^-11 of the
 * values rounded. The CUDA text calls the WMMA API, and NVRTC compiles it
 * for sm_80 and sm_90 without spills.
 *
 * bfloat16 inputs take them too (sm_80 on: every arch here): the same
 * shapes with inputs multiples of 2^-7 in [-1, 1] (exact in bfloat16) and
 * u16 = 2^-8 (the result rounded after the matmul and after each
 * epilogue op); fragments of __nv_bfloat16 in the CUDA text.
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
    bool gelu;          /* gelu(x @ w + b) instead */
} gcase;

static const char *dts(mt_dtype t) { return mt_dtype_str(t); }

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
             xs, dts(c->dt), ws, dts(c->dt), (long long)c->n, dts(c->dt),
             c->gelu ? "gelu(" : c->bias_relu ? "relu(" : "", x, w, c->gelu || c->bias_relu ? " + b)" : " + b * 0.0");
}

/* float16 bits of q / 1024, |q| <= 1024 (exact). */
static uint16_t half_of(int q) {
    if (q == 0) return 0;
    uint16_t sign = q < 0 ? 0x8000 : 0;
    int a = q < 0 ? -q : q, e = 0;
    while ((a << e) < 1024) e++; /* a << e in [1024, 2048): the significand */
    return (uint16_t)(sign | (uint16_t)((15 - e) << 10) | (uint16_t)((a << e) - 1024)); /* (a << e) / 1024 * 2^-e */
}

static double half_value(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

/* bfloat16 bits of q / 128, |q| <= 128 (exact: 8 significant bits). */
static uint16_t bf16_of(int q) {
    float f = (float)q / 128.0f;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

static double bf16_value(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double get(const mt_tensor *t, int64_t i) {
    mt_dtype dt = mt_tensor_dtype(t);
    return dt == MT_FLOAT64    ? ((const double *)mt_tensor_data(t))[i]
           : dt == MT_FLOAT16  ? half_value(((const uint16_t *)mt_tensor_data(t))[i])
           : dt == MT_BFLOAT16 ? bf16_value(((const uint16_t *)mt_tensor_data(t))[i])
                               : ((const float *)mt_tensor_data(t))[i];
}

static mt_tensor *random_tensor(mt_dtype dt, int nd, const int64_t *dims) {
    mt_tensor *t = mt_tensor_create(dt, nd, dims);
    assert_non_null(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++) {
        if (dt == MT_FLOAT64) ((double *)mt_tensor_data(t))[i] = rnd();
        else if (dt == MT_FLOAT16) ((uint16_t *)mt_tensor_data(t))[i] = half_of((int)lround(rnd() * 1024));
        else if (dt == MT_BFLOAT16) ((uint16_t *)mt_tensor_data(t))[i] = bf16_of((int)lround(rnd() * 128));
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
    double u = c->dt == MT_FLOAT64 ? 1.2e-16 : 6e-8, u16 = c->dt == MT_FLOAT16 ? ldexp(1, -11) : c->dt == MT_BFLOAT16 ? ldexp(1, -8) : 0;
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
                double ref = c->gelu ? 0.5 * (s + bias) * (1 + erf((s + bias) / sqrt(2.0)))
                             : c->bias_relu ? fmax(s + bias, 0.0) : s;
                double got = get(out, (b * c->m + i) * c->n + j);
                double tol = 2 * u * fabs(ref) + (double)(c->k + 1) * u * (scale + fabs(bias));
                tol += 2 * u16 * (fabs(ref) + 1.2 * (fabs(s) + fabs(s + bias))); /* float16 roundings */
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
#define F16 MT_FLOAT16
#define BF16 MT_BFLOAT16

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

/* float16 on tensor cores: odd shapes in every dim, each tile size (128:
 * 132+ blocks; 64: 264+ blocks of 64; else 32), copies along each axis, a
 * batch, a symbolic M, epilogues. */
static void test_tensor_cores(void **st) {
    (void)st;
    static const char *const TC = "gpu_matmul (tensor cores)";
    for (int q = -1024; q <= 1024; q++) assert_true(half_value(half_of(q)) == q / 1024.0);
    static const gcase cases[] = {
        {TC, F16, XW, 0, 7, 17, 100, true, false, false},
        {TC, F16, XW, 0, 257, 100, 17, false, false, true},    /* gelu */
        {TC, F16, XW, 0, 5, 1, 1, false, false, false},
        {TC, F16, XW, 0, 100, 257, 7, true, false, false},
        {TC, F16, XWT, 0, 100, 257, 33, true, false, false},   /* B copied along k */
        {TC, F16, XTW, 0, 70, 19, 66, false, false, true},     /* A copied along i */
        {TC, F16, XW, 3, 40, 24, 50, true, false, false},      /* batched */
        {TC, F16, XW, 0, 45, 64, 60, true, true, false},       /* symbolic m (run at 45) */
        {TC, F16, XW, 0, 1400, 24, 1600, false, false, false}, /* 128-tiles */
        {TC, F16, XW, 0, 1100, 40, 1100, true, false, false},  /* 64-tiles */
        {"gpu_gemv", F16, XW, 0, 1, 257, 7, true, false, false}, /* M = 1: the GEMV rule */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
}

/* bfloat16 on tensor cores: the float16 cases' shapes. */
static void test_tensor_cores_bf16(void **st) {
    (void)st;
    static const char *const TC = "gpu_matmul (tensor cores)";
    for (int q = -128; q <= 128; q++) assert_true(bf16_value(bf16_of(q)) == q / 128.0);
    static const gcase cases[] = {
        {TC, BF16, XW, 0, 7, 17, 100, true, false, false},
        {TC, BF16, XW, 0, 257, 100, 17, false, false, true},    /* gelu */
        {TC, BF16, XW, 0, 5, 1, 1, false, false, false},
        {TC, BF16, XWT, 0, 100, 257, 33, true, false, false},   /* B copied along k */
        {TC, BF16, XTW, 0, 70, 19, 66, false, false, true},     /* A copied along i */
        {TC, BF16, XW, 3, 40, 24, 50, true, false, false},      /* batched */
        {TC, BF16, XW, 0, 45, 64, 60, true, true, false},       /* symbolic m (run at 45) */
        {TC, BF16, XW, 0, 1100, 40, 1100, true, false, false},  /* 64-tiles */
        {"gpu_gemv", BF16, XW, 0, 1, 257, 7, true, false, false}, /* M = 1: the GEMV rule */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
}

/* The tile follows the grid: 128 when its blocks fill the 132 SMs of
 * sm_90, 64 when those make a block for 3/4 of them, else 32. */
static void test_tile_sizes(void **st) {
    (void)st;
    static const struct { int64_t m, n; const char *tile; } cs[] = {
        {1400, 1600, "A_tile = T.alloc_buffer((1056,)"},  /* 8 x (128 + 4) */
        {1100, 1100, "A_tile = T.alloc_buffer((1088,)"},  /* 16 x (64 + 4) */
        {4096, 128, "A_tile = T.alloc_buffer((1088,)"},   /* the MLP's layer: 128 blocks of 64 */
        {2048, 128, "A_tile = T.alloc_buffer((1152,)"},   /* 32 x (32 + 4): 64 blocks of 64 would be too few */
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

/* Split-K: grids that leave half the SMs idle sum K in splits (the last
 * one past K), then a second kernel adds them and applies the epilogue;
 * within the reference's tolerance ((K + 1) u sum |x w|). An empty C (M =
 * 0) gets no split and runs. */
static void test_split_k(void **st) {
    (void)st;
    static const gcase cases[] = {
        {"gpu_matmul (split k)", F32, XWT, 0, 512, 1000, 96, true, false}, /* 48 blocks: 2 splits */
        {"gpu_matmul (split k)", F32, XW, 0, 100, 2050, 40, false, false}, /* 8 blocks: 8 splits */
        {"gpu_matmul (split k)", F64, XW, 0, 64, 600, 64, true, false},    /* 4 blocks, 19 steps: 2 */
        {"gpu_matmul", F32, XW, 0, 512, 100, 96, false, false},            /* too few steps to split */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
    mt_kernel *k = compile_ok("def f(a: Tensor((0, 640), \"float32\"), b: Tensor((640, 32), \"float32\")):\n"
                              "    return a @ b\n");
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "split k"));
    int64_t ad[2] = {0, 640}, bd[2] = {640, 32};
    mt_tensor *args[2] = {random_tensor(F32, 2, ad), random_tensor(F32, 2, bd)}, *out = NULL;
    mt_diag d;
    if (test_kernel_run(k, args, 2, &out, 1, &d) != MT_OK) fail_msg("empty C: %s", d.text);
    assert_int_equal(mt_tensor_numel(out), 0);
    mt_tensor_release(out), mt_tensor_release(args[0]), mt_tensor_release(args[1]);
    mt_kernel_release(k);
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

/* The float16 tile kernel's text (128-tiles, bias + relu): the WMMA API on
 * 32-byte aligned shared tiles; NVRTC compiles it for sm_80 and sm_90
 * (when present) and ptxas reports no spills. */
static void test_tensor_core_text(void **st) {
    (void)st;
    static const char *const archs[] = {"sm_80", "sm_90"};
    for (int a = 0; a < 2; a++) {
        mt_compile_options o;
        mt_compile_options_init(&o);
        o.target = MT_TARGET_CUDA;
        o.arch = archs[a];
        mt_diag d;
        mt_kernel *k = mt_jit_compile(test_ctx,
                                      "def f(a: Tensor((4096, 1024), \"float16\"), b: Tensor((1024, 4096), \"float16\"), "
                                      "c: Tensor((4096,), \"float16\")):\n    return relu(a @ b + c)\n", &o, &d);
        if (!k) fail_msg("%s", d.text);
        const char *s = mt_kernel_dump(k, MT_STAGE_CUDA);
        assert_non_null(s);
        static const char *const want[] = {
            "#include <mma.h>", "__shared__ __align__(32) __half A_tile[4352];", /* 32 x (128 + 8) */
            "wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[8];",   /* a warp's 64 x 32 */
            "wmma::mma_sync(acc[i * 2 + j], a_frag[i], b_frag[j], acc[i * 2 + j]);",
            "wmma::store_matrix_sync(&C_stage[stage0], acc[i * 2 + j], 16, wmma::mem_row_major);",
        };
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            if (!strstr(s, want[i])) fail_msg("%s: '%s' is not in\n%s", archs[a], want[i], s);
        const char *rep = strstr(s, "// ptxas");
        if (rep) {
            if (!strstr(rep, archs[a]) || !strstr(rep, " 0 bytes spill stores")) fail_msg("%s", rep);
        } else {
            print_message("no ptxas report (NVRTC absent): spills not checked\n");
        }
        mt_kernel_release(k);
    }
}

/* The bfloat16 tile kernel's text: fragments of __nv_bfloat16 (cuda_bf16.h),
 * float sums; NVRTC compiles it for sm_80 and sm_90 (when present) without
 * spills. */
static void test_tensor_core_text_bf16(void **st) {
    (void)st;
    static const char *const archs[] = {"sm_80", "sm_90"};
    for (int a = 0; a < 2; a++) {
        mt_compile_options o;
        mt_compile_options_init(&o);
        o.target = MT_TARGET_CUDA;
        o.arch = archs[a];
        mt_diag d;
        mt_kernel *k = mt_jit_compile(test_ctx,
                                      "def f(a: Tensor((4096, 1024), \"bfloat16\"), b: Tensor((1024, 4096), \"bfloat16\"), "
                                      "c: Tensor((4096,), \"bfloat16\")):\n    return relu(a @ b + c)\n", &o, &d);
        if (!k) fail_msg("%s", d.text);
        const char *s = mt_kernel_dump(k, MT_STAGE_CUDA);
        assert_non_null(s);
        static const char *const want[] = {
            "#include <cuda_bf16.h>", "#include <mma.h>", "__shared__ __align__(32) __nv_bfloat16 A_tile[4352];",
            "wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::col_major>",
            "wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major>",
            "wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[8];",
            "wmma::mma_sync(acc[i * 2 + j], a_frag[i], b_frag[j], acc[i * 2 + j]);",
            "__float2bfloat16_rn(", "__bfloat162float(",
        };
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            if (!strstr(s, want[i])) fail_msg("%s: '%s' is not in\n%s", archs[a], want[i], s);
        assert_null(strstr(s, "__half"));
        const char *rep = strstr(s, "// ptxas");
        if (rep) {
            if (!strstr(rep, archs[a]) || !strstr(rep, " 0 bytes spill stores")) fail_msg("%s", rep);
        } else {
            print_message("no ptxas report (NVRTC absent): spills not checked\n");
        }
        mt_kernel_release(k);
    }
}

int main(void) {
    const char *t = getenv("MT_TEST_TARGET");
    if (!t || !*t || strcmp(t, "cpu") == 0) setenv("MT_TEST_TARGET", "cuda-emulate", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemv),
        cmocka_unit_test(test_tiles),
        cmocka_unit_test(test_tensor_cores),
        cmocka_unit_test(test_tensor_cores_bf16),
        cmocka_unit_test(test_tile_sizes),
        cmocka_unit_test(test_split_k),
        cmocka_unit_test(test_grid_in_x),
        cmocka_unit_test(test_cuda_text),
        cmocka_unit_test(test_tensor_core_text),
        cmocka_unit_test(test_tensor_core_text_bf16),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
