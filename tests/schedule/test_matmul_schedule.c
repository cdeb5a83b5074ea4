/*
 * test_matmul_schedule.c -- the matmul schedule rule (src/schedule/rule_matmul.c)
 * through the public API.
 *
 * Numerics: every kernel is checked against a double-precision reference with
 * the bound of tests/ops/test_ops_nn.c, |got - want| <= rel * |want| + acc *
 * scale, scale = sum_k |a_ik * b_kj| (+ |bias|), acc = (K + 1) * u, rel = 2u
 * (u = 6e-8 for float32, 1.2e-16 for float64; float16 results add 2^-11).
 * The shapes reach every path of the rule: exact tiles, row tails (a tile of
 * M % 8 rows, or one row at a time for a symbolic M), column tails (narrower
 * vectors for a constant N, a padded sliver stored through tmp for a symbolic
 * N), small M (B read in place) and large M (B packed), K blocked (K > 1024,
 * partial sums in the output) or not, batches, epilogues, prologues and a
 * transposed B. Structure: the scheduled loop IR holds the tiled nest.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

#include "pipeline.h"
#include "support/diag.h"
#include "target/target.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double rnd(void) { /* uniform in [-1, 1) */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

static uint16_t f2h(float f) { /* round to nearest even; values here are normal and small */
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, absx = x & 0x7fffffffu;
    if (absx < 0x38800000u) return (uint16_t)sign; /* |f| < 2^-14: flush (not generated) */
    uint32_t e = (absx >> 23) - 127 + 15, mant = absx & 0x7fffffu;
    uint32_t h = (e << 10) | (mant >> 13), rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

static float h2f(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) return sign ? -(float)m / 16777216.0f : (float)m / 16777216.0f;
    uint32_t x = sign | ((e - 15 + 127) << 23) | (m << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static double get(const mt_tensor *t, int64_t i) {
    const void *p = mt_tensor_data(t);
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT16: return h2f(((const uint16_t *)p)[i]);
    case MT_FLOAT32: return ((const float *)p)[i];
    case MT_FLOAT64: return ((const double *)p)[i];
    default: fail_msg("dtype not handled in the test");
    }
    return 0;
}

static mt_tensor *rand_tensor(mt_dtype dt, int ndim, const int64_t *dims) {
    mt_tensor *t = mt_tensor_create(dt, ndim, dims);
    assert_non_null(t);
    void *p = mt_tensor_data(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++) {
        double v = rnd() * 2;
        if (dt == MT_FLOAT16) ((uint16_t *)p)[i] = f2h((float)v);
        else if (dt == MT_FLOAT32) ((float *)p)[i] = (float)v;
        else ((double *)p)[i] = v;
    }
    return t;
}

/* ---- one case ------------------------------------------------------------------ */

typedef enum {
    EPI_NONE, EPI_BIAS_RELU, EPI_RELU_OUT2, EPI_PRO_RELU_BIAS,
    /* f(a @ b + c) with math that codegen expands (the rule's epilogue loop) */
    EPI_BIAS_GELU, EPI_BIAS_SIGMOID, EPI_BIAS_TANH, EPI_BIAS_EXP, EPI_BIAS_CHAIN,
    EPI_GELU_OUT2 /* y = a @ b; y, gelu(y) */
} epi_kind;

static bool has_bias(epi_kind e) { return e == EPI_BIAS_RELU || (e >= EPI_BIAS_GELU && e <= EPI_BIAS_CHAIN); }

/* The source expression of f(y) for y = "a @ b + c". */
static const char *epi_expr(epi_kind e) {
    switch (e) {
    case EPI_BIAS_RELU: return "relu(a @ b + c)";
    case EPI_BIAS_GELU: return "gelu(a @ b + c)";
    case EPI_BIAS_SIGMOID: return "sigmoid(a @ b + c)";
    case EPI_BIAS_TANH: return "tanh(a @ b + c)";
    case EPI_BIAS_EXP: return "exp(a @ b + c)";
    case EPI_BIAS_CHAIN: return "tanh(a @ b + c) * 2.0 + 1.0";
    default: return NULL;
    }
}

/* f(s) in double and a bound of |f'| on [s - d, s + d]. */
static double epi_f(epi_kind e, double s, double d, double *lip) {
    switch (e) {
    case EPI_BIAS_RELU: *lip = 1; return fmax(s, 0);
    case EPI_BIAS_GELU:
    case EPI_GELU_OUT2: *lip = 1.13; return 0.5 * s * (1 + erf(s / sqrt(2.0)));
    case EPI_BIAS_SIGMOID: *lip = 0.25; return 1 / (1 + exp(-s));
    case EPI_BIAS_TANH: *lip = 1; return tanh(s);
    case EPI_BIAS_EXP: *lip = exp(s + d); return exp(s);
    case EPI_BIAS_CHAIN: *lip = 2; return tanh(s) * 2 + 1;
    default: *lip = 1; return s;
    }
}

/* a: (batch_a..., m, k); b: (batch_b..., k, n), or (n, k) when b_t (the source
 * says b.T); batch_a / batch_b are 1 or nb (broadcast). Optional bias c: (n,)
 * or for EPI_PRO_RELU_BIAS (k,) inside the prologue relu(a + c0) and (n,) after. */
typedef struct mcase {
    const char *src;
    mt_dtype dt;
    int nbatch_dims;
    int64_t batch[2];
    bool a_batched, b_batched, b_t;
    int64_t m, k, n;
    epi_kind epi;
    bool sym;          /* source has symbolic dims: pass sizes at run time */
    int64_t row_step;  /* check every row_step-th row (1: all) */
    bool a_t;          /* a is (k, m) and the source says a.T (EPI_NONE only) */
} mcase;

static void run_case(const mcase *c, mt_kernel *k) {
    int64_t nb = 1;
    for (int d = 0; d < c->nbatch_dims; d++) nb *= c->batch[d];
    int64_t sa[4], sb[4], sc[1] = {c->n}, sc0[1] = {c->k};
    int ra = 0, rb = 0;
    bool b_t = c->b_t || c->epi == EPI_PRO_RELU_BIAS;
    if (c->a_batched)
        for (int d = 0; d < c->nbatch_dims; d++) sa[ra++] = c->batch[d];
    sa[ra++] = c->a_t ? c->k : c->m;
    sa[ra++] = c->a_t ? c->m : c->k;
    if (c->b_batched)
        for (int d = 0; d < c->nbatch_dims; d++) sb[rb++] = c->batch[d];
    sb[rb++] = b_t ? c->n : c->k;
    sb[rb++] = b_t ? c->k : c->n;
    mt_tensor *args[4];
    int nargs = 0;
    args[nargs++] = rand_tensor(c->dt, ra, sa);
    if (c->epi == EPI_PRO_RELU_BIAS) args[nargs++] = rand_tensor(c->dt, 1, sc0);
    args[nargs++] = rand_tensor(c->dt, rb, sb);
    if (has_bias(c->epi) || c->epi == EPI_PRO_RELU_BIAS) args[nargs++] = rand_tensor(c->dt, 1, sc);
    const mt_tensor *A = args[0], *B = args[c->epi == EPI_PRO_RELU_BIAS ? 2 : 1];
    const mt_tensor *C0 = c->epi == EPI_PRO_RELU_BIAS ? args[1] : NULL;
    const mt_tensor *C = has_bias(c->epi) ? args[2] : c->epi == EPI_PRO_RELU_BIAS ? args[3] : NULL;
    int nres = c->epi == EPI_RELU_OUT2 || c->epi == EPI_GELU_OUT2 ? 2 : 1;
    mt_tensor *res[2] = {NULL, NULL};
    mt_diag d;
    if (test_kernel_run(k, args, nargs, res, nres, &d) != MT_OK) fail_msg("%s: run failed: %s", c->src, d.text);
    double u = c->dt == MT_FLOAT64 ? 1.2e-16 : 6e-8;
    double rel = 2 * u + (c->dt == MT_FLOAT16 ? 1.0 / 2048 : 0), acc = (double)(c->k + 1) * u;
    for (int64_t bt = 0; bt < nb; bt++)
        for (int64_t i = 0; i < c->m; i += c->row_step)
            for (int64_t j = 0; j < c->n; j++) {
                double s = 0, sc_ = 0;
                for (int64_t kk = 0; kk < c->k; kk++) {
                    int64_t ao = (c->a_batched ? bt : 0) * c->m * c->k;
                    double x = get(A, ao + (c->a_t ? kk * c->m + i : i * c->k + kk));
                    if (C0) x = fmax(x + get(C0, kk), 0);
                    int64_t bo = (c->b_batched ? bt : 0) * c->k * c->n;
                    double y = get(B, bo + (b_t ? j * c->k + kk : kk * c->n + j));
                    s += x * y;
                    sc_ += fabs(x * y);
                }
                if (C) {
                    s += get(C, j);
                    sc_ += fabs(get(C, j));
                }
                int64_t o = (bt * c->m + i) * c->n + j;
                for (int r = 0; r < nres; r++) {
                    /* the matmul's bound; through an epilogue f, its Lipschitz
                     * bound times that plus f's own error (the vector math is
                     * within 1 ulp, a few more roundings around it; the
                     * absolute term covers gelu's 1 + erf cancellation) */
                    double lim = rel * fabs(s) + acc * sc_, want = s, got = get(res[r], o);
                    if (has_bias(c->epi) || r == 1) {
                        double lip;
                        epi_kind e = r == 1 && c->epi == EPI_RELU_OUT2 ? EPI_BIAS_RELU : c->epi;
                        want = epi_f(e, s, lim, &lip);
                        if (e != EPI_BIAS_RELU) lim = lip * lim + 8 * u * (fabs(want) + fabs(s) + 1);
                    }
                    if (!(fabs(got - want) <= lim))
                        fail_msg("%s (m %lld k %lld n %lld) result %d batch %lld [%lld, %lld]: got %.9g, "
                                 "want %.9g (limit %.3g)",
                                 c->src, (long long)c->m, (long long)c->k, (long long)c->n, r, (long long)bt,
                                 (long long)i, (long long)j, got, want, lim);
                }
            }
    for (int r = 0; r < nres; r++) mt_tensor_release(res[r]);
    for (int i = 0; i < nargs; i++) mt_tensor_release(args[i]);
}

static const char *dt_str(mt_dtype dt) { return mt_dtype_str(dt); }

/* The source of a constant-shape case. */
static void case_src(char *buf, size_t n, const mcase *c) {
    char ba[64] = "", bb[64] = "";
    size_t la = 0, lb = 0;
    for (int d = 0; d < c->nbatch_dims; d++) {
        if (c->a_batched) la += (size_t)snprintf(ba + la, sizeof ba - la, "%lld, ", (long long)c->batch[d]);
        if (c->b_batched) lb += (size_t)snprintf(bb + lb, sizeof bb - lb, "%lld, ", (long long)c->batch[d]);
    }
    const char *t = dt_str(c->dt);
    long long m = c->m, k = c->k, nn = c->n;
    switch (c->epi) {
    case EPI_NONE:
        snprintf(buf, n,
                 "def f(a: Tensor((%s%lld, %lld), \"%s\"), b: Tensor((%s%lld, %lld), \"%s\")):\n"
                 "    return %s @ %s\n",
                 ba, c->a_t ? k : m, c->a_t ? m : k, t, bb, c->b_t ? nn : k, c->b_t ? k : nn, t,
                 !c->a_t ? "a" : c->nbatch_dims && c->a_batched ? "transpose(a, (0, 2, 1))" : "a.T",
                 c->b_t ? "b.T" : "b");
        break;
    case EPI_BIAS_RELU:
    case EPI_BIAS_GELU:
    case EPI_BIAS_SIGMOID:
    case EPI_BIAS_TANH:
    case EPI_BIAS_EXP:
    case EPI_BIAS_CHAIN:
        snprintf(buf, n,
                 "def f(a: Tensor((%s%lld, %lld), \"%s\"), b: Tensor((%s%lld, %lld), \"%s\"),\n"
                 "      c: Tensor((%lld,), \"%s\")):\n"
                 "    return %s\n",
                 ba, m, k, t, bb, k, nn, t, nn, t, epi_expr(c->epi));
        break;
    case EPI_RELU_OUT2:
    case EPI_GELU_OUT2:
        snprintf(buf, n,
                 "def f(a: Tensor((%lld, %lld), \"%s\"), b: Tensor((%lld, %lld), \"%s\")):\n"
                 "    y = a @ b\n    return y, %s(y)\n",
                 m, k, t, k, nn, t, c->epi == EPI_RELU_OUT2 ? "relu" : "gelu");
        break;
    case EPI_PRO_RELU_BIAS:
        snprintf(buf, n,
                 "def f(a: Tensor((%lld, %lld), \"%s\"), c0: Tensor((%lld,), \"%s\"),\n"
                 "      b: Tensor((%lld, %lld), \"%s\"), c: Tensor((%lld,), \"%s\")):\n"
                 "    return relu(a + c0) @ b.T + c\n",
                 m, k, t, k, t, nn, k, t, nn, t);
        break;
    }
}

/* Compiles, checks that the rule rewrote the kernel doing the matmul, runs. */
static void check_case(const mcase *c) {
    char src[1024];
    case_src(src, sizeof src, c);
    mt_kernel *k = compile_ok(src);
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(t);
    if (c->m > 0 && c->n > 0 && c->k > 0 && !strstr(t, "T.fma(") && !strstr(t, "T.wmma_mma(")) /* tensor cores: float16 on the GPU */
        fail_msg("the matmul rule did not apply to:\n%s\n%s", src, t);
    mcase cc = *c;
    cc.src = src;
    run_case(&cc, k);
    mt_kernel_release(k);
}

#define F32 MT_FLOAT32
#define SHAPE(m, k, n) 0, {0, 0}, false, false, false, m, k, n

static void test_shapes(void **st) {
    static const mcase cases[] = {
        {NULL, F32, SHAPE(1, 1, 1), EPI_NONE, false, 1},
        {NULL, F32, SHAPE(7, 5, 3), EPI_NONE, false, 1},
        {NULL, F32, SHAPE(8, 16, 32), EPI_NONE, false, 1},    /* one exact tile, B in place */
        {NULL, F32, SHAPE(64, 16, 64), EPI_NONE, false, 1},   /* exact tiles, B packed */
        {NULL, F32, SHAPE(33, 17, 65), EPI_NONE, false, 1},   /* row and column tails, packed */
        {NULL, F32, SHAPE(31, 17, 65), EPI_NONE, false, 1},   /* the same, B in place */
        {NULL, F32, SHAPE(9, 40, 16), EPI_NONE, false, 1},    /* one vector wide */
        {NULL, F32, SHAPE(40, 40, 17), EPI_NONE, false, 1},   /* a 1-lane tail */
        {NULL, F32, SHAPE(128, 784, 10), EPI_NONE, false, 1}, /* the MLP's last layer */
        {NULL, F32, SHAPE(600, 70, 1100), EPI_NONE, false, 7}, /* several column blocks */
        {NULL, F32, SHAPE(37, 1100, 45), EPI_NONE, false, 1}, /* K blocked, partial sums in C */
        {NULL, F32, SHAPE(5, 1100, 45), EPI_NONE, false, 1},  /* long K, B in place */
        {NULL, MT_FLOAT64, SHAPE(33, 17, 21), EPI_NONE, false, 1},
        {NULL, MT_FLOAT64, SHAPE(4, 9, 5), EPI_NONE, false, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

/* The choices from the shape (src/schedule/matmul_defaults.c), numerics
 * against the double reference on odd shapes: tile heights from M (32: 8
 * tiles of 4 on AVX2; 47, 33: taller tiles and a tail), K blocked with
 * partial sums in the output, no threads for small work (32^3, the batched
 * 64 x (32x32 @ 32x32)), B_pack within the target's L2 (512 KiB on Zen 3:
 * 128 columns at K = 1024, where 1 MiB gave 256). */
static const char *sched_text(mt_arena *a, const char *src, const mt_target_desc *t);
static int count_of(const char *t, const char *what);

static void test_defaults_from_shape(void **st) {
    (void)st;
    static const mcase cases[] = {
        {NULL, F32, SHAPE(32, 32, 32), EPI_NONE, false, 1},
        {NULL, F32, SHAPE(47, 1100, 515), EPI_BIAS_RELU, false, 1},
        {NULL, F32, SHAPE(33, 257, 100), EPI_NONE, false, 1},
        {NULL, MT_FLOAT64, SHAPE(32, 70, 33), EPI_NONE, false, 1},
        {NULL, F32, 1, {64, 0}, true, true, false, 32, 32, 32, EPI_NONE, false, 1},
        {NULL, F32, 1, {3, 0}, true, true, false, 32, 33, 17, EPI_BIAS_RELU, false, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
    if (test_gpu_target()) return;
    mt_target_desc avx2;
    mt_target_host_cpu(&avx2, "znver3", "+avx,+avx2", 2);
    avx2.l2_bytes = 512 * 1024;
    mt_arena *a = mt_arena_create();
    /* the lowered form (primitives=0), then the same choices as primitives
     * (whole tiles: rule_matmul_prims.c; tests/schedule/test_matmul_prims.c) */
    static const char lowered[] = "\n@T.schedule(\"matmul\")\ndef s(sch):\n"
                                  "    sch.apply_rule(\"schedule_matmul\", primitives=0)\n";
    char src[512];
    const char *mm32 = "def f(a: Tensor((32, 32), \"float32\"), b: Tensor((32, 32), \"float32\")):\n"
                       "    return a @ b\n";
    snprintf(src, sizeof src, "%s%s", mm32, lowered);
    const char *t = sched_text(a, src, &avx2);
    if (strstr(t, "T.launch(") || !strstr(t, "acc = T.alloc_buffer((64,)") || strstr(t, "acc = T.alloc_buffer((96,)"))
        fail_msg("expected 8 tiles of 4 rows on the calling thread:\n%s", t);
    t = sched_text(a, "def f(a: Tensor((144, 32), \"float32\"), b: Tensor((32, 32), \"float32\")):\n"
                      "    return a @ b\n", &avx2); /* more than a few rows: primitives */
    if (strstr(t, "T.launch(") || !strstr(t, "T.unroll(6)") || !strstr(t, "b_global"))
        fail_msg("primitives: expected tiles of 6 rows on the calling thread:\n%s", t);
    const char *mm256 = "def f(a: Tensor((256, 1024), \"float32\"), b: Tensor((1024, 1024), \"float32\")):\n"
                        "    return a @ b\n";
    snprintf(src, sizeof src, "%s%s", mm256, lowered);
    t = sched_text(a, src, &avx2);
    if (count_of(t, "T.launch(") != 2 || !strstr(t, "B_pack = T.alloc_buffer((131072,)"))
        fail_msg("expected the threads and a 512 KiB B_pack:\n%s", t);
    t = sched_text(a, "def f(a: Tensor((264, 1024), \"float32\"), b: Tensor((1024, 1024), \"float32\")):\n"
                      "    return a @ b\n", &avx2); /* 44 tiles of 6 rows */
    if (count_of(t, "T.launch(") != 2 || !strstr(t, "b_global = T.alloc_buffer((131072,)"))
        fail_msg("primitives: expected the threads and a 512 KiB packed block:\n%s", t);
    mt_arena_destroy(a);
}

/* Few rows of a row-major B (matmul_defaults.c, mm_cols_parallel): column
 * blocks across threads, each packed by its thread, K blocked, in one
 * parallel region; column tails inside and across blocks, K blocks whose
 * rows are not a multiple of pack_rows, a shared B under a batch, float64. */
static void test_few_rows_columns(void **st) {
    (void)st;
    static const mcase cases[] = {
        {NULL, F32, SHAPE(16, 300, 1000), EPI_BIAS_RELU, false, 1},
        {NULL, F32, SHAPE(40, 1001, 4097), EPI_NONE, false, 3},
        {NULL, F32, SHAPE(100, 257, 70), EPI_BIAS_RELU, false, 1},
        {NULL, F32, 1, {3, 0}, true, false, false, 20, 65, 300, EPI_NONE, false, 1},
        {NULL, MT_FLOAT64, SHAPE(24, 130, 513), EPI_NONE, false, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_case(&cases[i]);
        if (test_gpu_target()) continue;
        char src[1024];
        case_src(src, sizeof src, &cases[i]);
        mt_kernel *k = compile_ok(src);
        const char *sch = mt_kernel_dump(k, MT_STAGE_SCHEDULE), *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        /* with threads, one region: the items' loop */
        if (strstr(sch, "parallel=1") && (!strstr(sch, "par_cols=1") || count_of(t, "T.launch(") != 1))
            fail_msg("expected the column blocks across threads in one region:\n%s\n%s", sch, t);
        mt_kernel_release(k);
    }
    /* knobs prefetch (K one block: each item's row tiles prefetch the next
     * item's block of B) and pack_b (0: B read in place), and the values
     * stay (defaults 0 and 1 here; 1 and 0 for the conv rule's 1x1 layers:
     * test_ops_conv) */
    if (test_gpu_target()) return;
    for (int q = 0; q < 4; q++) { /* prefetch off / on, B copied / read in place (pack_b) */
        int on = q % 2, packed = q < 2;
        mcase c = {NULL, F32, SHAPE(24, 200, 1000), EPI_NONE, false, 1};
        char src[1024];
        case_src(src, sizeof src, &c);
        size_t len = strlen(src);
        snprintf(src + len, sizeof src - len,
                 "\n@T.schedule(\"matmul\")\ndef s(sch):\n    sch.apply_rule(\"schedule_matmul\", par_cols=1, prefetch=%d, pack_b=%d)\n",
                 on, packed);
        mt_kernel *k = compile_ok(src);
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        const char *pf = strstr(t, "T.prefetch(b[");
        if ((pf && strstr(pf, "(it + 1)")) != (on == 1) || (strstr(t, "B_pack") != NULL) != packed)
            fail_msg("prefetch=%d pack_b=%d:\n%s", on, packed, t);
        c.src = src;
        run_case(&c, k);
        mt_kernel_release(k);
    }
    /* a block of 2^20 columns (in range for a tuning log) over 100000 of N:
     * a k step's 391 lines in a loop, not 391 statements (the compile took
     * minutes), and the tiles past K's 16 rows prefetch nothing */
    mt_kernel *k = compile_ok("def f(a: Tensor((8, 16), \"float32\"), b: Tensor((16, 100000), \"float32\")):\n"
                              "    return a @ b\n\n@T.schedule(\"matmul\")\ndef s(sch):\n"
                              "    sch.apply_rule(\"schedule_matmul\", kc=16, nc=1048576, par_cols=1, few_rows=0, prefetch=1)\n");
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    if (count_of(t, "T.prefetch(") != 1 || !strstr(t, "in range(391):") || !strstr(t, " < 16:"))
        fail_msg("nc = 2^20, prefetch=1:\n%s", t);
    mt_kernel_release(k);
}

static void test_large(void **st) {
    mcase c = {NULL, F32, SHAPE(1024, 1024, 1024), EPI_NONE, false, 61};
    check_case(&c);
}

static void test_batched(void **st) {
    static const mcase cases[] = {
        /* (2, 3, 33, 17) @ (17, 40): B shared by every batch */
        {NULL, F32, 2, {2, 3}, true, false, false, 33, 17, 40, EPI_NONE, false, 1},
        /* (4, 33, 65) @ (4, 65, 17) */
        {NULL, F32, 1, {4, 0}, true, true, false, 33, 65, 17, EPI_NONE, false, 1},
        /* (5, 7) @ (3, 7, 9): A broadcast */
        {NULL, F32, 1, {3, 0}, false, true, false, 5, 7, 9, EPI_NONE, false, 1},
        {NULL, F32, 1, {2, 0}, true, true, false, 40, 30, 50, EPI_BIAS_RELU, false, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

static void test_epilogues(void **st) {
    static const mcase cases[] = {
        {NULL, F32, SHAPE(33, 17, 65), EPI_BIAS_RELU, false, 1},
        {NULL, F32, SHAPE(70, 1100, 45), EPI_BIAS_RELU, false, 1}, /* partials in the output */
        {NULL, F32, SHAPE(9, 1100, 45), EPI_BIAS_RELU, false, 1},
        {NULL, F32, SHAPE(64, 64, 64), EPI_BIAS_RELU, false, 1},
        {NULL, F32, SHAPE(33, 17, 40), EPI_RELU_OUT2, false, 1},   /* y and relu(y) */
        {NULL, F32, SHAPE(40, 1100, 20), EPI_RELU_OUT2, false, 1},
        {NULL, F32, SHAPE(64, 128, 10), EPI_PRO_RELU_BIAS, false, 1}, /* prologue, B^T packed */
        {NULL, F32, SHAPE(3, 128, 10), EPI_PRO_RELU_BIAS, false, 1},
        {NULL, F32, SHAPE(7, 5, 3), EPI_NONE, false, 1},
        {NULL, MT_FLOAT64, SHAPE(33, 40, 50), EPI_BIAS_RELU, false, 1},
        {NULL, MT_FLOAT16, SHAPE(33, 40, 50), EPI_NONE, false, 1}, /* float32 acc, cast epilogue */
        {NULL, MT_FLOAT16, SHAPE(20, 1100, 33), EPI_NONE, false, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

/* Epilogues with math that codegen expands, which the rule runs in a loop
 * over the tile's vectors: every path (row and column tails of every width,
 * B in place and packed, K blocked, float64, two outputs). */
static void test_epilogue_math(void **st) {
    static const epi_kind kinds[] = {EPI_BIAS_GELU, EPI_BIAS_SIGMOID, EPI_BIAS_TANH, EPI_BIAS_EXP,
                                     EPI_BIAS_CHAIN};
    static const int64_t shapes[][3] = {
        {33, 17, 65}, /* row tail, a 1-lane column tail, packed */
        {31, 17, 65}, /* the same, B in place */
        {64, 32, 128}, /* the shape */
        {9, 40, 16},  /* one vector wide */
        {40, 40, 20}, /* a 4-lane column tail */
        {1, 7, 3},
    };
    for (size_t e = 0; e < sizeof kinds / sizeof kinds[0]; e++) {
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            mcase c = {NULL, F32, SHAPE(shapes[i][0], shapes[i][1], shapes[i][2]), kinds[e], false, 1};
            check_case(&c);
        }
        mcase d = {NULL, MT_FLOAT64, SHAPE(33, 17, 21), kinds[e], false, 1};
        check_case(&d);
        if (kinds[e] != EPI_BIAS_EXP) { /* K blocked: partials in the output (exp would overflow) */
            mcase kb = {NULL, F32, SHAPE(70, 1100, 45), kinds[e], false, 3};
            check_case(&kb);
        }
    }
    static const mcase two[] = {
        {NULL, F32, SHAPE(33, 17, 40), EPI_GELU_OUT2, false, 1}, /* y and gelu(y) */
        {NULL, F32, SHAPE(40, 1100, 20), EPI_GELU_OUT2, false, 1},
        {NULL, F32, SHAPE(5, 30, 70), EPI_GELU_OUT2, false, 1},
    };
    for (size_t i = 0; i < sizeof two / sizeof two[0]; i++) check_case(&two[i]);

    /* symbolic m (B in place below 16 rows, packed above; one-row tiles) and
     * all dims symbolic (padded column slivers, stored through tmp) */
    const char *srcs[2] = {
        "def f(a: Tensor((\"m\", 40), \"float32\"), b: Tensor((40, 70), \"float32\"),\n"
        "      c: Tensor((70,), \"float32\")):\n"
        "    return gelu(a @ b + c)\n",
        "def f(a: Tensor((\"m\", \"k\"), \"float32\"), b: Tensor((\"k\", \"n\"), \"float32\"),\n"
        "      c: Tensor((\"n\",), \"float32\")):\n"
        "    return gelu(a @ b + c)\n"};
    static const int64_t sizes[][3] = {{1, 40, 70}, {7, 40, 70}, {31, 40, 70}, {33, 40, 70}, {59, 40, 70}};
    static const int64_t all[][3] = {{1, 1, 1}, {3, 5, 7}, {33, 17, 65}, {4, 0, 3}, {37, 1100, 45}, {64, 64, 64}};
    for (int q = 0; q < 2; q++) {
        mt_kernel *k = compile_ok(srcs[q]);
        assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.fma("));
        int n = q ? (int)(sizeof all / sizeof all[0]) : (int)(sizeof sizes / sizeof sizes[0]);
        for (int i = 0; i < n; i++) {
            const int64_t *z = q ? all[i] : sizes[i];
            mcase c = {srcs[q], F32, SHAPE(z[0], z[1], z[2]), EPI_BIAS_GELU, true, 1};
            run_case(&c, k);
        }
        mt_kernel_release(k);
    }
}

static void test_transposed_b(void **st) {
    mcase c = {NULL, F32, SHAPE(33, 17, 40), EPI_NONE, false, 1};
    c.b_t = true;
    check_case(&c);
    /* B read along k: full slivers packed as vl x vl squares transposed in
     * registers (T.Shuffle), whatever M; the K % vl rows left (K = 40, 45)
     * and the narrow last sliver (N = 70) element by element; a symbolic
     * K too */
    static const int64_t m[][3] = {{300, 70, 40}, {40, 70, 40}, {13, 33, 45}, {64, 64, 64}};
    for (int i = 0; i < 4; i++) {
        mcase d = {NULL, F32, SHAPE(m[i][0], m[i][1], m[i][2]), EPI_NONE, false, 1};
        d.b_t = true;
        check_case(&d);
        if (test_gpu_target()) continue;
        char src[1024];
        case_src(src, sizeof src, &d);
        mt_kernel *k = compile_ok(src);
        if (!strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.Shuffle(["))
            fail_msg("M = %d: B not packed in transposed squares:\n%s", (int)m[i][0],
                     mt_kernel_dump(k, MT_STAGE_TIR_SCHED));
        mt_kernel_release(k);
    }
    /* a B constant along k (every k of a column one value): the squares'
     * rows are broadcasts, vectors where the shuffles use them (a scalar
     * let used as 16 lanes, refused by the verifier) */
    mt_kernel *kb = compile_ok("def f(a: Tensor((40, 33), \"float32\"), z: Tensor((64, 2), \"float32\")):\n"
                               "    return a @ broadcast_to(z[:, 0:1], (64, 33)).T\n");
    if (!test_gpu_target()) assert_non_null(strstr(mt_kernel_dump(kb, MT_STAGE_TIR_SCHED), "T.Broadcast(z["));
    int64_t sa[2] = {40, 33}, szz[2] = {64, 2};
    mt_tensor *ab[2] = {mt_tensor_create(MT_FLOAT32, 2, sa), mt_tensor_create(MT_FLOAT32, 2, szz)}, *o = NULL;
    float *pa = mt_tensor_data(ab[0]), *pz = mt_tensor_data(ab[1]);
    for (int i = 0; i < 40 * 33; i++) pa[i] = (float)(i % 13) * 0.25f - 1.5f;
    for (int i = 0; i < 64 * 2; i++) pz[i] = (float)(i % 7) * 0.5f - 1.0f;
    mt_diag dg;
    assert_int_equal(test_kernel_run(kb, ab, 2, &o, 1, &dg), MT_OK);
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 64; j++) {
            double want = 0, mag = 0;
            for (int q = 0; q < 33; q++) want += (double)pa[i * 33 + q] * pz[j * 2], mag += fabs(pa[i * 33 + q] * pz[j * 2]);
            float got = ((float *)mt_tensor_data(o))[i * 64 + j];
            if (fabs(got - want) > 1e-5 * (mag + 1)) fail_msg("(%d, %d): %g, want %g", i, j, got, want);
        }
    mt_tensor_release(ab[0]), mt_tensor_release(ab[1]), mt_tensor_release(o);
    mt_kernel_release(kb);
    const char *sym = "def f(a: Tensor((\"m\", \"k\"), \"float32\"), b: Tensor((\"n\", \"k\"), \"float32\")):\n"
                      "    return a @ b.T\n";
    mt_kernel *k = compile_ok(sym);
    static const int64_t sz[][3] = {{300, 70, 40}, {20, 100, 129}, {17, 32, 16}, {3, 5, 7}};
    for (int i = 0; i < 4; i++) {
        mcase d = {sym, F32, SHAPE(sz[i][0], sz[i][1], sz[i][2]), EPI_NONE, true, 1};
        d.b_t = true;
        run_case(&d, k);
    }
    mt_kernel_release(k);
}

/* a.T @ b and a.T @ b.T: A is read along i, so it is packed whole once a
 * call (a constant shape: A_pack, [row block][k][row], knob pack_a), or
 * each row block packs its sliver (a symbolic shape, pack_a=0), with one
 * vector load per k, instead of the tiles walking a's rows, K * 4 bytes
 * apart, once per column sliver. */
static void test_transposed_a(void **st) {
    static const int64_t sizes[][3] = {{33, 17, 40}, {8, 16, 32}, {65, 9, 100}, {70, 1100, 45}, {1, 3, 2},
                                       {40, 257, 33}};
    for (int bt = 0; bt < 2; bt++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            mcase c = {NULL, F32, SHAPE(sizes[i][0], sizes[i][1], sizes[i][2]), EPI_NONE, false, 1};
            c.a_t = true, c.b_t = bt;
            check_case(&c);
            c.dt = MT_FLOAT64;
            check_case(&c);
        }
    mt_kernel *k = compile_ok("def f(a: Tensor((64, 64), \"float32\"), b: Tensor((64, 64), \"float32\")):\n"
                              "    return a.T @ b\n");
    if (!test_gpu_target()) {
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        assert_non_null(strstr(t, "A_pack[T.Ramp("));
        assert_non_null(strstr(t, "A_pack = T.alloc_buffer((4096,), \"float32\")\n")); /* whole, not per block */
        assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "pack_a=1"));
    }
    mt_kernel_release(k);
    /* the knob both ways: per row block for a.T (K blocked, row and K
     * tails), whole for a plain A (then its rows are gathered k by k) */
    static const char *const knobbed[] = {
        "def f(a: Tensor((1100, 70), \"float32\"), b: Tensor((1100, 45), \"float32\")):\n"
        "    return a.T @ b\n"
        "@T.schedule(\"fused_transpose_matmul\")\ndef s(sch):\n"
        "    sch.apply_rule(\"schedule_matmul\", pack_a=0)\n",
        "def f(a: Tensor((70, 1100), \"float32\"), b: Tensor((1100, 45), \"float32\")):\n"
        "    return a @ b\n"
        "@T.schedule(\"matmul\")\ndef s(sch):\n"
        "    sch.apply_rule(\"schedule_matmul\", pack_a=1)\n",
    };
    /* a batch of transposed A, each packed whole per batch index (M tail,
     * K tail) or (K > 2 kc) a K block at a time, B shared or not */
    static const mcase bat[] = {
        {NULL, F32, 1, {3, 0}, true, false, false, 37, 21, 50, EPI_NONE, false, 1, true},
        {NULL, F32, 1, {2, 0}, true, true, false, 40, 1100, 33, EPI_NONE, false, 1, true},
    };
    for (size_t i = 0; i < sizeof bat / sizeof bat[0]; i++) check_case(&bat[i]);
    /* A over 32 MiB: packed a K block at a time (the K blocks outermost),
     * the last block one row deep, a row tail */
    char src[1024];
    mcase big = {NULL, F32, SHAPE(2048, 4097, 40), EPI_NONE, false, 7};
    big.a_t = true;
    case_src(src, sizeof src, &big);
    k = compile_ok(src);
    if (!test_gpu_target()) {
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        if (!strstr(t, "A_pack = T.alloc_buffer((1048576,), \"float32\")\n") || !strstr(t, "for pc in range(9):"))
            fail_msg("expected A packed a K block at a time:\n%s", t);
    }
    big.src = src;
    run_case(&big, k);
    mt_kernel_release(k);
    for (int i = 0; i < 2 && !test_gpu_target(); i++) { /* the CPU rule's knob */
        k = compile_ok(knobbed[i]);
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        bool whole = strstr(t, "A_pack = T.alloc_buffer((77000,), \"float32\")\n") != NULL;
        if (whole != (i == 1)) fail_msg("pack_a=%d not followed:\n%s", i, t);
        mcase c = {knobbed[i], F32, SHAPE(70, 1100, 45), EPI_NONE, false, 1};
        c.a_t = i == 0;
        run_case(&c, k);
        mt_kernel_release(k);
    }
    k = compile_ok("def f(a: Tensor((\"k\", \"m\"), \"float32\"), b: Tensor((\"n\", \"k\"), \"float32\")):\n"
                   "    return a.T @ b.T\n");
    static const int64_t sym[][3] = {{1, 1, 1}, {33, 17, 65}, {40, 3, 70}, {4, 0, 3}, {0, 3, 2}, {37, 1100, 45}};
    for (size_t i = 0; i < sizeof sym / sizeof sym[0]; i++) {
        mcase c = {"a.T @ b.T, symbolic", F32, SHAPE(sym[i][0], sym[i][1], sym[i][2]), EPI_NONE, true, 1};
        c.a_t = true, c.b_t = true;
        run_case(&c, k);
    }
    mt_kernel_release(k);
}

/* ("n", 784) @ (784, 128) + c, relu: B in place below 16 rows, packed above. */
static void test_symbolic_m(void **st) {
    mt_kernel *k = compile_ok("def f(a: Tensor((\"n\", 784), \"float32\"), b: Tensor((784, 128), \"float32\"),\n"
                              "      c: Tensor((128,), \"float32\")):\n"
                              "    return relu(a @ b + c)\n");
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    if (test_gpu_target()) { /* gpu_matmul.c: tiles in shared memory */
        assert_non_null(strstr(t, "A_tile"));
    } else { /* the skinny rule for few rows, else B packed */
        assert_non_null(strstr(t, "if n < 16:"));
        assert_non_null(strstr(t, "B_pack"));
    }
    static const int64_t ns[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 259};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        mcase c = {"symbolic m", F32, SHAPE(ns[i], 784, 128), EPI_BIAS_RELU, true, 1};
        run_case(&c, k);
    }
    mt_kernel_release(k);

    /* the same shape with a transposed, prologue-fused B (the MLP's layer 2) */
    k = compile_ok("def f(a: Tensor((\"n\", 128), \"float32\"), c0: Tensor((128,), \"float32\"),\n"
                   "      b: Tensor((10, 128), \"float32\"), c: Tensor((10,), \"float32\")):\n"
                   "    return relu(a + c0) @ b.T + c\n");
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.fma("));
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        mcase c = {"symbolic m, prologue", F32, SHAPE(ns[i], 128, 10), EPI_PRO_RELU_BIAS, true, 1};
        run_case(&c, k);
    }
    mt_kernel_release(k);
}

/* m, k, n all symbolic: padded column slivers, K blocked when k > 1024. */
static void test_symbolic_all(void **st) {
    static const int64_t sizes[][3] = {{1, 1, 1}, {3, 5, 7},    {8, 16, 32},   {33, 17, 65}, {40, 3, 70},
                                       {4, 0, 3}, {0, 3, 2},    {37, 1100, 45}, {64, 64, 64}, {2, 2100, 33},
                                       {70, 40, 1030}};
    const char *srcs[2] = {
        "def f(a: Tensor((\"m\", \"k\"), \"float32\"), b: Tensor((\"k\", \"n\"), \"float32\")):\n"
        "    return a @ b\n",
        "def f(a: Tensor((\"m\", \"k\"), \"float32\"), b: Tensor((\"k\", \"n\"), \"float32\"),\n"
        "      c: Tensor((\"n\",), \"float32\")):\n"
        "    return relu(a @ b + c)\n"};
    for (int s = 0; s < 2; s++) {
        mt_kernel *k = compile_ok(srcs[s]);
        assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.fma("));
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            mcase c = {srcs[s], F32, SHAPE(sizes[i][0], sizes[i][1], sizes[i][2]),
                       s ? EPI_BIAS_RELU : EPI_NONE, true, 1};
            run_case(&c, k);
        }
        mt_kernel_release(k);
    }
    /* float16 with a symbolic k: no output of the accumulator's dtype, so K
     * is not blocked and B's packed block is k deep */
    mt_kernel *k = compile_ok("def f(a: Tensor((40, \"k\"), \"float16\"), b: Tensor((\"k\", 20), \"float16\")):\n"
                              "    return a @ b\n");
    for (size_t i = 0; i < 3; i++) {
        static const int64_t ks[] = {0, 5, 1100};
        mcase c = {"float16, symbolic k", MT_FLOAT16, SHAPE(40, ks[i], 20), EPI_NONE, true, 1};
        run_case(&c, k);
    }
    mt_kernel_release(k);
}

/* A symbolic k under a one-op epilogue: legalize's fill for an empty K
 * and the matmul are one member of the fused group, whose statements
 * fuse_tir once nested in the group's sequence, hiding the matmul from the
 * rule (the kernel ran as the source's triple loop). Each form is
 * scheduled by the rule and computes the reference, k = 0 included. */
static void test_symbolic_k_epilogue(void **st) {
    (void)st;
    static const struct { const char *expr; double mul, add; bool relu, bias; } forms[] = {
        {"a @ b + 1.0", 1, 1, false, false}, {"a @ b * 2.0", 2, 0, false, false},
        {"relu(a @ b)", 1, 0, true, false},  {"a @ b + c", 1, 0, false, true}};
    static const int64_t ks[] = {0, 1, 37, 1100};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        char src[256];
        snprintf(src, sizeof src,
                 "def f(a: Tensor((13, \"k\"), \"float32\"), b: Tensor((\"k\", 40), \"float32\"),\n"
                 "      c: Tensor((40,), \"float32\")):\n    return %s\n",
                 forms[f].expr);
        mt_kernel *k = compile_ok(src);
        if (!strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.fma("))
            fail_msg("the matmul rule did not apply to:\n%s", src);
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
            int64_t sa[2] = {13, ks[i]}, sb[2] = {ks[i], 40}, sc[1] = {40};
            mt_tensor *args[3] = {rand_tensor(MT_FLOAT32, 2, sa), rand_tensor(MT_FLOAT32, 2, sb),
                                  rand_tensor(MT_FLOAT32, 1, sc)},
                      *res = NULL;
            mt_diag d;
            if (test_kernel_run(k, args, mt_kernel_num_params(k), &res, 1, &d) != MT_OK) fail_msg("%s: %s", src, d.text);
            for (int r = 0; r < 13; r++)
                for (int j = 0; j < 40; j++) {
                    double s = 0, scale = 0;
                    for (int64_t q = 0; q < ks[i]; q++) {
                        double x = get(args[0], r * ks[i] + q) * get(args[1], q * 40 + j);
                        s += x;
                        scale += fabs(x);
                    }
                    if (forms[f].bias) {
                        s += get(args[2], j);
                        scale += fabs(get(args[2], j));
                    }
                    double want = s * forms[f].mul + forms[f].add;
                    if (forms[f].relu) want = fmax(want, 0);
                    double got = get(res, r * 40 + j), lim = 2 * (double)(ks[i] + 2) * 6e-8 * (scale + 1) * forms[f].mul;
                    if (!(fabs(got - want) <= lim))
                        fail_msg("%s, k = %lld, [%d, %d]: got %.9g, want %.9g", forms[f].expr, (long long)ks[i], r,
                                 j, got, want);
                }
            mt_tensor_release(res);
            for (int a = 0; a < 3; a++) mt_tensor_release(args[a]);
        }
        mt_kernel_release(k);
    }
}

static const char *MM_BIAS_RELU =
    "def f(a: Tensor((1024, 1024), \"float32\"), w: Tensor((1024, 1024), \"float32\"),\n"
    "      c: Tensor((1024,), \"float32\")):\n"
    "    return relu(a @ w + c)\n";

/* The "tir-sched" text of src compiled for target t (no code generated). */
static const char *sched_text(mt_arena *a, const char *src, const mt_target_desc *t) {
    mt_errframe fr;
    if (!MT_TRY(&fr)) {
        mt_err_pop(&fr);
        fail_msg("pipeline failed: %s", fr.msg);
    }
    mt_compiled c;
    mt_pipeline_targets targets = {t, NULL};
    mt_pipeline_run(a, src, strlen(src), NULL, &targets, &c);
    mt_err_pop(&fr);
    return mt_pipeline_dump(a, &c, MT_STAGE_TIR_SCHED);
}

/* The scheduled loop IR of relu(a @ w + c) at 1024^3 in the lowered form
 * (primitives=0; the default is the trace of primitives,
 * test_matmul_prims.c): B packed by column
 * blocks of 256 (1024 x 256 floats, 1 MiB) eight rows of B at a time, row
 * blocks of 8 across threads (each parallel loop a parallel body the kernel
 * launches), a 16-register
 * accumulator fed by broadcasts and FMAs, the epilogue on the registers as
 * they are stored. */
static void test_tir_structure(void **st) {
    (void)st;
    skip_if_gpu_target("the CPU rule's loop IR");
    static const char *const want[] = {
        "    B_pack = T.alloc_buffer((262144,), \"float32\")\n"
        "    for jc in range(4):\n"
        "        T.launch(\"fused_matmul_add_relu_par0\", B_pack, w, jc, grid=(128,))\n"
        "        T.launch(\"fused_matmul_add_relu_par1\", a, B_pack, c, jc, lv2, grid=(128,))\n",
        "def fused_matmul_add_relu_par0(begin: T.int64, end: T.int64, B_pack: T.Buffer((262144,), "
        "\"float32\"), w: T.Buffer((1048576,), \"float32\"), jc: T.int64):\n"
        "    T.func_attr({\"kind\": \"parallel_body\", \"target\": \"cpu -mcpu=",
        "\"})\n"
        "    for kq in range(begin, end):\n"
        "        for jr in range(8):\n"
        "            B_pack[T.Ramp(jr * 32768 + kq * 8 * 32, 1, 16)] = w[T.Ramp(kq * 8 * 1024 + (jc * 256 + jr * 32), 1, 16)]\n",
        "    for io in range(begin, end):\n"
        "        for jr in range(8):\n"
        "            acc = T.alloc_buffer((256,), \"float32\", scope=\"local\")\n"
        "            acc[T.Ramp(0, 1, 16)] = T.Broadcast(0.0, 16)\n",
        "                aik_7 = a[(io * 8 + 7) * 1024 + kk]\n"
        "                bkj = B_pack[T.Ramp(jr * 32768 + kk * 32, 1, 16)]\n"
        "                bkj_1 = B_pack[T.Ramp(jr * 32768 + (kk * 32 + 16), 1, 16)]\n"
        "                acc[T.Ramp(0, 1, 16)] = T.fma(aik, bkj, acc[T.Ramp(0, 1, 16)])\n",
        "                acc[T.Ramp(240, 1, 16)] = T.fma(aik_7, bkj_1, acc[T.Ramp(240, 1, 16)])\n"
        "            m = acc[T.Ramp(0, 1, 16)]\n"
        "            e = T.max(m + c[T.Ramp(jc * 256 + jr * 32, 1, 16)], 0.0)\n"
        "            lv2[T.Ramp(io * 8 * 1024 + (jc * 256 + jr * 32), 1, 16)] = e\n",
    };
    mt_arena *a = mt_arena_create();
    char src[1024];
    snprintf(src, sizeof src, "%s\n@T.schedule(\"fused_matmul_add_relu\")\ndef s(sch):\n"
             "    sch.apply_rule(\"schedule_matmul\", primitives=0)\n", MM_BIAS_RELU);
    const char *t = sched_text(a, src, mt_target_default_cpu()); /* AVX-512 facts */
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(t, want[i])) fail_msg("scheduled TIR lacks:\n%s\n--- got ---\n%s", want[i], t);
    /* no intermediate of the matmul is left */
    assert_null(strstr(t, "T.alloc_buffer((1048576,)"));
    mt_arena_destroy(a);
}

/* The tile follows the target's registers: on an AVX2 machine (16 ymm of
 * 8 float32) 6 rows of 2 x 8 lanes, 12 accumulators, instead of AVX-512's
 * 8 rows of 2 x 16. 1024 rows are 170 tiles of 6 and a tail of 4: as
 * primitives the tail is the split loop's last iteration, peeled
 * (partition_tails), a tile of 4 rows; in the lowered form a tile of its
 * own. */
static void test_tile_from_target(void **st) {
    (void)st;
    skip_if_gpu_target("the CPU's register tiles");
    mt_target_desc avx2;
    mt_target_host_cpu(&avx2, "znver3", "+avx,+avx2", 2);
    mt_arena *a = mt_arena_create();
    const char *p = sched_text(a, MM_BIAS_RELU, &avx2);
    static const char *const prims[] = {
        "for i0_1 in T.unroll(6):", "for i0_1 in T.unroll(4):", "lv = T.alloc_buffer((96,), \"float32\")",
        "T.Ramp(i0_1 * 16 + i2_0_1 * 8, 1, 8)", "-vector-bytes=32",
    };
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (!strstr(p, prims[i])) fail_msg("scheduled TIR lacks:\n%s\n--- got ---\n%s", prims[i], p);
    assert_null(strstr(p, ", 16)]"));
    char src[1024];
    snprintf(src, sizeof src, "%s\n@T.schedule(\"fused_matmul_add_relu\")\ndef s(sch):\n"
             "    sch.apply_rule(\"schedule_matmul\", primitives=0)\n", MM_BIAS_RELU);
    const char *t = sched_text(a, src, &avx2);
    static const char *const want[] = {
        "acc = T.alloc_buffer((96,), \"float32\", scope=\"local\")",
        "acc[T.Ramp(0, 1, 8)] = T.Broadcast(0.0, 8)",
        "aik_5 = a[(io * 6 + 5) * 1024 + kk]",
        "acc[T.Ramp(88, 1, 8)] = T.fma(aik_5, bkj_1, acc[T.Ramp(88, 1, 8)])",
        "-vector-bytes=32",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(t, want[i])) fail_msg("scheduled TIR lacks:\n%s\n--- got ---\n%s", want[i], t);
    assert_null(strstr(t, "aik_6"));
    assert_null(strstr(t, ", 16)]"));
    mt_arena_destroy(a);
}

static int count_of(const char *t, const char *what) {
    int n = 0;
    for (const char *p = strstr(t, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

static char *epi_src(char *buf, size_t cap, const char *f, int64_t m, int64_t k, int64_t n) {
    snprintf(buf, cap,
             "def f(a: Tensor((%lld, %lld), \"float32\"), w: Tensor((%lld, %lld), \"float32\"),\n"
             "      c: Tensor((%lld,), \"float32\")):\n"
             "    return %s\n",
             (long long)m, (long long)k, (long long)k, (long long)n, (long long)n, f);
    return buf;
}

/* The regression of issue 17, structurally: an epilogue with expanded math
 * is emitted once per vector width of each tile instance (a tile per
 * row-tail height and column-tail width), not once per accumulator register
 * (MR x 2: 16 erfs with AVX-512, 12 with AVX2, before). The counts are the
 * same for both targets although their tiles have 8 and 6 rows. Few rows
 * (the skinny rule): one pass over the sums, a vector and a tail copy. */
static void test_epilogue_once(void **st) {
    (void)st;
    skip_if_gpu_target("the CPU rule's epilogue copies");
    mt_target_desc avx2;
    mt_target_host_cpu(&avx2, "znver3", "+avx,+avx2", 2);
    const mt_target_desc *targets[2] = {mt_target_default_cpu(), &avx2};
    static const struct {
        const char *f, *call;
        int64_t m, k, n;
        int want; /* copies of the call in the scheduled TIR */
    } cases[] = {
        {"gelu(a @ w + c)", "T.erf(", 48, 32, 128, 1},     /* exact tiles on both targets */
        {"gelu(a @ w + c)", "T.erf(", 48, 1024, 1024, 1},
        {"sigmoid(a @ w + c)", "T.sigmoid(", 48, 32, 128, 1},
        {"tanh(a @ w + c) * 2.0 + 1.0", "T.tanh(", 48, 32, 128, 1},
        {"exp(a @ w + c)", "T.exp(", 48, 32, 128, 1},
        {"gelu(a @ w + c)", "T.erf(", 70, 40, 100, 4},     /* row and column tails: 4 tiles */
        {"gelu(a @ w + c)", "T.erf(", 24, 40, 96, 1},      /* few rows, packed: blocks a page wide */
        {"gelu(a @ w + c)", "T.erf(", 12, 40, 96, 1},      /* fewer: rule_gemv.c, its pass over raw */
        {"gelu(a @ w + c)", "T.erf(", 1, 40, 100, 2},      /* ... with a column tail */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int t = 0; t < 2; t++) {
            char src[512];
            mt_arena *a = mt_arena_create();
            const char *tir = sched_text(a, epi_src(src, sizeof src, cases[i].f, cases[i].m, cases[i].k, cases[i].n),
                                         targets[t]);
            int got = count_of(tir, cases[i].call);
            const char *marker = cases[i].m < 16 ? "raw" : "acc_out"; /* the skinny rule's or the tile's */
            if (got != cases[i].want || !strstr(tir, marker))
                fail_msg("%s (%lld x %lld x %lld, target %d): %d copies of %s (want %d)\n%s", cases[i].f,
                         (long long)cases[i].m, (long long)cases[i].k, (long long)cases[i].n, t, got,
                         cases[i].call, cases[i].want, tir);
            mt_arena_destroy(a);
        }
    /* symbolic shapes: both variants (B in place, packed), one-row tiles,
     * padded slivers: still a handful, not MR x 2 per tile */
    mt_arena *a = mt_arena_create();
    const char *tir = sched_text(a,
                                 "def f(a: Tensor((\"m\", \"k\"), \"float32\"), w: Tensor((\"k\", \"n\"), \"float32\"),\n"
                                 "      c: Tensor((\"n\",), \"float32\")):\n"
                                 "    return gelu(a @ w + c)\n",
                                 mt_target_default_cpu());
    int got = count_of(tir, "T.erf(");
    if (got > 8) fail_msg("symbolic gelu: %d copies of T.erf\n%s", got, tir);
    /* a cheap epilogue stays on the registers, unrolled (no copy of the tile) */
    char src[512];
    tir = sched_text(a, epi_src(src, sizeof src, "relu(a @ w + c) * 2.0", 48, 32, 128), mt_target_default_cpu());
    assert_null(strstr(tir, "acc_out"));
    assert_int_equal(count_of(tir, "T.max("), 16);
    mt_arena_destroy(a);
}

/* The epilogue loop must not cost the micro-kernel its registers. LLVM
 * hoists the math's constants out of all loops; when the epilogue loop was
 * nested deeper than the k loop (a row loop around a vector loop), the
 * register allocator spilled the accumulators instead of those constants
 * (gelu at 1024^3 ran 4x slower). So, in the x86 assembly: every loop of
 * one block that does FMAs and stores nothing but to the stack (the
 * micro-kernel's k loop; the epilogue loop stores its results) has no
 * stack operand at all -- or, with gpr_ok, none with a vector register:
 * with symbolic strides and AVX-512's 8-row tiles, the 8 row addresses of
 * A read in place (address arithmetic on general registers) outnumber the
 * free registers and LLVM reloads a few from the stack, which is not the
 * accumulators (1024^3 gelu(a @ w + c), one thread, `mtc --bench 30` on
 * a Zen 5 beside a fuzzer: symbolic 9.4-9.5 ms, constant 9.2 ms). */
static bool is_store_to_memory(const char *line, bool *stack) {
    const char *c = NULL; /* the last operand: after the last comma outside parentheses */
    int depth = 0;
    for (const char *q = line; *q; q++) {
        if (*q == '(') depth++;
        else if (*q == ')') depth--;
        else if (*q == ',' && depth == 0) c = q;
    }
    if (!c || !strstr(line, "mov") || !strchr(c, '(')) return false;
    *stack = strstr(c, "(%rsp)") != NULL;
    return true;
}

static bool vector_operand(const char *line) {
    return strstr(line, "%xmm") || strstr(line, "%ymm") || strstr(line, "%zmm");
}

static void check_kloop_no_stack(const char *what, const char *s, bool gpr_ok) {
    int loops = 0;
    const char *p = s;
    while (p && *p) {
        /* a block: a label line ".LBB..:" up to the next label */
        const char *lab = strstr(p, "\n.LBB");
        if (!lab) break;
        lab++;
        const char *colon = strchr(lab, ':'), *nl = strchr(lab, '\n');
        if (!colon || !nl || colon > nl) { p = lab; continue; }
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(colon - lab), lab);
        const char *end = strstr(nl, "\n.LBB");
        if (!end) end = nl + strlen(nl);
        int fma = 0, stack = 0; /* in the block up to its back edge */
        bool back = false, real_store = false;
        for (const char *l = nl + 1; l < end;) {
            const char *e = memchr(l, '\n', (size_t)(end - l));
            size_t len = e ? (size_t)(e - l) : (size_t)(end - l);
            char line[256];
            snprintf(line, sizeof line, "%.*s", (int)(len < 255 ? len : 255), l);
            bool st = false;
            if (strstr(line, "vfmadd")) fma++;
            if (strstr(line, "(%rsp)") && (!gpr_ok || vector_operand(line))) stack++;
            if (is_store_to_memory(line, &st) && !st) real_store = true;
            if (line[0] == '\t' && line[1] == 'j' && strstr(line, name)) {
                back = true; /* the loop's body ends at its back edge */
                break;
            }
            l += len + 1;
        }
        if (back && fma >= 4 && !real_store) {
            loops++;
            if (stack) fail_msg("%s: the k loop %s reads or writes the stack %d times:\n%.*s", what, name, stack,
                                (int)(end - lab), lab);
        }
        p = end;
    }
    if (loops == 0) fail_msg("%s: no k loop found in the assembly:\n%s", what, s);
}

static void test_epilogue_no_spill(void **st) {
    (void)st;
    skip_if_gpu_target("x86 assembly");
    char src[512];
    static const struct {
        const char *f;
        int64_t m, k, n;
    } cs[] = {
        {"gelu(a @ w + c)", 256, 256, 256},   {"tanh(a @ w + c) * 2.0 + 1.0", 256, 256, 256},
        {"a @ w + c", 256, 256, 256},         {"sigmoid(a @ w + c)", 256, 256, 256},
        {"exp(a @ w + c)", 256, 256, 256},    {"gelu(a @ w + c)", 64, 32, 128},
        {"gelu(a @ w + c)", 70, 40, 100},     {"gelu(a @ w + c)", 40, 64, 96},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const char *what = epi_src(src, sizeof src, cs[i].f, cs[i].m, cs[i].k, cs[i].n);
        mt_kernel *k = compile_ok(what);
        const char *s = mt_kernel_dump(k, MT_STAGE_ASM);
        assert_non_null(s);
        if (strstr(s, "vfmadd231ps")) check_kloop_no_stack(what, s, false); /* x86 with FMA */
        mt_kernel_release(k);
    }
    const char *sym = "def f(a: Tensor((\"m\", \"k\"), \"float32\"), w: Tensor((\"k\", \"n\"), \"float32\"),\n"
                      "      c: Tensor((\"n\",), \"float32\")):\n"
                      "    return gelu(a @ w + c)\n";
    mt_kernel *k = compile_ok(sym);
    const char *s = mt_kernel_dump(k, MT_STAGE_ASM);
    if (strstr(s, "vfmadd231ps")) check_kloop_no_stack(sym, s, true);
    mt_kernel_release(k);
}

/* What the rule leaves alone. */
static void test_not_applied(void **st) {
    static const char *const srcs[] = {
        "def f(a: Tensor((8, 8), \"int32\"), b: Tensor((8, 8), \"int32\")):\n    return a @ b\n",
        "def f(a: Tensor((8,), \"float32\"), b: Tensor((8, 4), \"float32\")):\n    return a @ b\n",
        "def f(a: Tensor((8, 4), \"float32\"), b: Tensor((4,), \"float32\")):\n    return a @ b\n",
        "def f(x: Tensor((4, 8), \"float32\")):\n    return softmax(x, axis=1)\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        mt_kernel *k = compile_ok(srcs[i]);
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        if (strstr(t, "T.fma(")) fail_msg("the rule rewrote:\n%s\n%s", srcs[i], t);
        mt_kernel_release(k);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),        cmocka_unit_test(test_large),
        cmocka_unit_test(test_batched),       cmocka_unit_test(test_epilogues),
        cmocka_unit_test(test_epilogue_math),
        cmocka_unit_test(test_transposed_b),  cmocka_unit_test(test_transposed_a),
        cmocka_unit_test(test_symbolic_m),
        cmocka_unit_test(test_symbolic_all),  cmocka_unit_test(test_symbolic_k_epilogue),  cmocka_unit_test(test_tir_structure),
        cmocka_unit_test(test_tile_from_target),
        cmocka_unit_test(test_epilogue_once),
        cmocka_unit_test(test_epilogue_no_spill),
        cmocka_unit_test(test_not_applied),   cmocka_unit_test(test_defaults_from_shape),
        cmocka_unit_test(test_few_rows_columns),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
