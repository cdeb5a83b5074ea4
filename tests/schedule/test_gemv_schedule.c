/*
 * test_gemv_schedule.c -- x @ w with few rows and w (K, N) row-major
 * (src/schedule/rule_gemv.c), through the public API.
 *
 * Numerics: against a plain C reference in double with |got - want| <= 2u *
 * |want| + (K + 1) * u * sum_k |x_k * w_k| (+ |bias|), u = 6e-8 (float32)
 * or 1.2e-16 (float64): the bound of a dot product summed in any order. The
 * skinny schedule sums each element in increasing k within a part of K and
 * the parts in order (a two-level sum when K is split across threads), so
 * the bound of any order is the one that applies.
 * Shapes: M = 1, 2, 3, 5, 16 by K, N in {1, 7, 257, 1000, 4097} (odd, no
 * multiple of a vector or a tile), with and without a bias + relu epilogue,
 * float32 and float64; symbolic M (the schedule below 16 rows at run time,
 * B packed from 32 on), symbolic M, K and N including zero sizes; a batch
 * dim; several outputs; contexts of 1, 2 and 3 threads (the target's cores
 * decide the split of K). Structure: which schedule the scheduled TIR holds
 * (the rule's buffers sums and reg, no B_pack), the split of K across the
 * cores for a GEMV whose bands do not divide among them, no threads for a
 * small one.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
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

/* Element [i, j] of relu(x @ w + b) (bias) or x @ w, batch index bi, against
 * the double reference; x (.., m, k), w (.., k, n) (wb: w has the batch dim). */
static void check_elem(const mt_tensor *x, const mt_tensor *w, const mt_tensor *b, const mt_tensor *res, mt_dtype dt,
                       int64_t bi, bool wb, int64_t m, int64_t k, int64_t n, int64_t i, int64_t j, const char *what) {
    double s = 0, sc = 0, u = unit(dt);
    int64_t xo = bi * m * k, wo = wb ? bi * k * n : 0;
    for (int64_t q = 0; q < k; q++) {
        double p = get(x, xo + i * k + q) * get(w, wo + q * n + j);
        s += p;
        sc += fabs(p);
    }
    if (b) {
        s = fmax(s + get(b, j), 0);
        sc += fabs(get(b, j));
    }
    double got = get(res, (bi * m + i) * n + j), lim = 2 * u * fabs(s) + (double)(k + 1) * u * sc;
    if (!(fabs(got - s) <= lim))
        fail_msg("%s (m %lld k %lld n %lld) [%lld, %lld, %lld]: got %.17g, want %.17g (limit %.3g)", what,
                 (long long)m, (long long)k, (long long)n, (long long)bi, (long long)i, (long long)j, got, s, lim);
}

/* Runs relu(x @ w + b) or x @ w on random data and checks every element
 * (or, for large outputs, every row at a spread of columns and the last). */
static void run_xw(mt_kernel *kn, mt_dtype dt, int64_t m, int64_t k, int64_t n, bool bias, const char *what) {
    int64_t sx[2] = {m, k}, sw[2] = {k, n}, sb[1] = {n};
    mt_tensor *args[3] = {rand_tensor(dt, 2, sx), rand_tensor(dt, 2, sw), bias ? rand_tensor(dt, 1, sb) : NULL};
    int nargs = bias ? 3 : 2;
    mt_tensor *res = NULL;
    mt_diag d;
    if (mt_kernel_run(kn, args, nargs, &res, 1, &d) != MT_OK) fail_msg("%s: run failed: %s", what, d.text);
    int64_t step = m * k * n > 20000000 ? 37 : 1;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j += step) check_elem(args[0], args[1], args[2], res, dt, 0, false, m, k, n, i, j, what);
        if (n > 0) check_elem(args[0], args[1], args[2], res, dt, 0, false, m, k, n, i, n - 1, what);
    }
    mt_tensor_release(res);
    for (int i = 0; i < nargs; i++) mt_tensor_release(args[i]);
}

static const char *xw_src(char *buf, size_t cap, mt_dtype dt, const char *m, const char *k, const char *n, bool bias) {
    const char *t = mt_dtype_str(dt);
    if (bias)
        snprintf(buf, cap,
                 "def f(x: Tensor((%s, %s), \"%s\"), w: Tensor((%s, %s), \"%s\"), b: Tensor((%s,), \"%s\")):\n"
                 "    return relu(x @ w + b)\n",
                 m, k, t, k, n, t, n, t);
    else
        snprintf(buf, cap, "def f(x: Tensor((%s, %s), \"%s\"), w: Tensor((%s, %s), \"%s\")):\n    return x @ w\n", m,
                 k, t, k, n, t);
    return buf;
}

/* The skinny schedule: its buffers, no packing of B. */
static bool is_skinny(const char *tir) {
    return strstr(tir, "sums = T.alloc_buffer") && strstr(tir, "reg = T.alloc_buffer") && !strstr(tir, "B_pack");
}

/* Constant shapes: the schedule is chosen; numerics. */
static void test_constant_shapes(void **st) {
    static const int64_t ms[] = {1, 2, 3, 5, 15};
    static const int64_t kn[] = {1, 7, 257, 1000, 4097};
    char src[512], m[32], k[32], n[32];
    int count = 0;
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 5; b++)
            for (size_t q = 0; q < 5; q++) {
                /* the largest ones at the GEMV and one skinny matmul only: time */
                if (kn[a] * kn[b] > 5000000 && ms[q] != 1 && ms[q] != 5) continue;
                mt_dtype dt = (a + b + q) % 4 == 3 ? MT_FLOAT64 : MT_FLOAT32;
                bool bias = (a + b + q) % 2 == 0;
                snprintf(m, sizeof m, "%lld", (long long)ms[q]);
                snprintf(k, sizeof k, "%lld", (long long)kn[a]);
                snprintf(n, sizeof n, "%lld", (long long)kn[b]);
                mt_kernel *kern = compile_ok(xw_src(src, sizeof src, dt, m, k, n, bias));
                const char *tir = mt_kernel_dump(kern, MT_STAGE_TIR_SCHED);
                if (!is_skinny(tir)) fail_msg("expected the skinny schedule:\n%s\n%s", src, tir);
                run_xw(kern, dt, ms[q], kn[a], kn[b], bias, src);
                mt_kernel_release(kern);
                count++;
            }
    assert_true(count > 100);
}

/* Symbolic M: the skinny schedule below 16 rows at run time, packed from 16
 * on, and no code for a full group of 16 rows in it (dead below 16 rows; it
 * was most of the compile time); with the knob few_rows=40, full groups of
 * 16 and the rest; then M, K and N symbolic (band count, split of K and
 * tails at run time), zero sizes included. */
static void test_symbolic(void **st) {
    static const mt_dtype dts[] = {MT_FLOAT32, MT_FLOAT64};
    char src[512];
    for (size_t t = 0; t < 2; t++) {
        mt_kernel *kn = compile_ok(xw_src(src, sizeof src, dts[t], "\"m\"", "257", "70", true));
        const char *tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
        if (!strstr(tir, "if m < 16:") || !strstr(tir, "sums = T.alloc_buffer") || !strstr(tir, "B_pack"))
            fail_msg("expected both schedules behind if m < 16:\n%s", tir);
        if (!test_gpu_target() && strstr(tir, "m // 16"))
            fail_msg("a group of 16 rows in the schedule for fewer than 16:\n%s", tir);
        for (int64_t m = 0; m <= 40; m++) run_xw(kn, dts[t], m, 257, 70, true, src);
        mt_kernel_release(kn);
        char knob[640];
        snprintf(knob, sizeof knob, "%s\n@T.schedule(\"fused_matmul_add_relu\")\ndef s(sch):\n"
                 "    sch.apply_rule(\"schedule_matmul\", few_rows=40)\n", src);
        if (!test_gpu_target()) {
            kn = compile_ok(knob);
            tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
            if (!strstr(tir, "if m < 40:") || !strstr(tir, "m // 16"))
                fail_msg("expected full groups of 16 behind if m < 40:\n%s", tir);
            for (int64_t m = 0; m <= 41; m += 3) run_xw(kn, dts[t], m, 257, 70, true, src);
            mt_kernel_release(kn);
        }
        kn = compile_ok(xw_src(src, sizeof src, dts[t], "\"m\"", "\"k\"", "\"n\"", t == 0));
        static const int64_t sz[][3] = {{1, 1, 1},    {1, 4097, 1000}, {3, 17, 13}, {5, 16, 8},   {1, 0, 5},
                                        {5, 9, 0},    {0, 9, 5},       {16, 7, 257}, {31, 40, 9}, {2, 3000, 70},
                                        {33, 17, 13}, {9, 1000, 33}};
        for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++) run_xw(kn, dts[t], sz[i][0], sz[i][1], sz[i][2], t == 0, src);
        mt_kernel_release(kn);
    }
}

/* A batch dim on both operands, and w shared by the batch (broadcast). */
static void test_batched(void **st) {
    for (int wb = 0; wb < 2; wb++) {
        char src[512];
        snprintf(src, sizeof src,
                 "def f(x: Tensor((3, 5, 300), \"float32\"), w: Tensor((%s300, 77), \"float32\")):\n"
                 "    return x @ w\n",
                 wb ? "3, " : "");
        mt_kernel *kn = compile_ok(src);
        if (!is_skinny(mt_kernel_dump(kn, MT_STAGE_TIR_SCHED)))
            fail_msg("expected the skinny schedule:\n%s", mt_kernel_dump(kn, MT_STAGE_TIR_SCHED));
        int64_t sx[3] = {3, 5, 300}, sw[3] = {3, 300, 77};
        mt_tensor *args[2] = {rand_tensor(MT_FLOAT32, 3, sx), rand_tensor(MT_FLOAT32, wb ? 3 : 2, wb ? sw : sw + 1)};
        mt_tensor *res = NULL;
        mt_diag d;
        if (mt_kernel_run(kn, args, 2, &res, 1, &d) != MT_OK) fail_msg("run failed: %s", d.text);
        for (int64_t b = 0; b < 3; b++)
            for (int64_t i = 0; i < 5; i++)
                for (int64_t j = 0; j < 77; j++) check_elem(args[0], args[1], NULL, res, MT_FLOAT32, b, wb, 5, 300, 77, i, j, src);
        mt_tensor_release(res);
        mt_tensor_release(args[0]);
        mt_tensor_release(args[1]);
        mt_kernel_release(kn);
    }
}

/* Two outputs (y and relu(y + b)) and a residual read in the epilogue. */
static void test_epilogues(void **st) {
    const char *src = "def f(x: Tensor((3, 1000), \"float32\"), w: Tensor((1000, 257), \"float32\"),\n"
                      "      b: Tensor((257,), \"float32\"), r: Tensor((3, 257), \"float32\")):\n"
                      "    y = x @ w\n"
                      "    return y, relu(y + b) * r\n";
    mt_kernel *kn = compile_ok(src);
    if (!is_skinny(mt_kernel_dump(kn, MT_STAGE_TIR_SCHED)))
        fail_msg("expected the skinny schedule:\n%s", mt_kernel_dump(kn, MT_STAGE_TIR_SCHED));
    int64_t sx[2] = {3, 1000}, sw[2] = {1000, 257}, sb[1] = {257}, sr[2] = {3, 257};
    mt_tensor *args[4] = {rand_tensor(MT_FLOAT32, 2, sx), rand_tensor(MT_FLOAT32, 2, sw),
                          rand_tensor(MT_FLOAT32, 1, sb), rand_tensor(MT_FLOAT32, 2, sr)};
    mt_tensor *res[2] = {NULL, NULL};
    mt_diag d;
    if (mt_kernel_run(kn, args, 4, res, 2, &d) != MT_OK) fail_msg("run failed: %s", d.text);
    double u = unit(MT_FLOAT32);
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 257; j++) {
            check_elem(args[0], args[1], NULL, res[0], MT_FLOAT32, 0, false, 3, 1000, 257, i, j, src);
            double s = 0, sc = 0;
            for (int64_t q = 0; q < 1000; q++) {
                double p = get(args[0], i * 1000 + q) * get(args[1], q * 257 + j);
                s += p;
                sc += fabs(p);
            }
            double rr = get(args[3], i * 257 + j), want = fmax(s + get(args[2], j), 0) * rr;
            double lim = (1001 * u * (sc + fabs(get(args[2], j))) + 4 * u * fabs(want)) * fabs(rr) + 4 * u * fabs(want);
            double got = get(res[1], i * 257 + j);
            if (!(fabs(got - want) <= lim)) fail_msg("[%lld, %lld]: got %.9g, want %.9g", (long long)i, (long long)j, got, want);
        }
    mt_tensor_release(res[0]);
    mt_tensor_release(res[1]);
    for (int i = 0; i < 4; i++) mt_tensor_release(args[i]);
    mt_kernel_release(kn);
}

/* Contexts of 1, 2 and 3 threads (the target's cores: K split into that
 * many parts when the bands do not divide among them): the GEMV and an odd
 * skinny shape, each against the reference; the structure at 2 cores: a
 * parallel loop over (part, band) chunks and the sum of the parts after it;
 * at 1 core no split. */
static void test_threads(void **st) {
    if (test_gpu_target()) skip();
    for (int threads = 1; threads <= 3; threads++) {
        mt_context_options co = {0};
        co.num_threads = threads;
        mt_context *ctx = mt_context_create(&co);
        assert_non_null(ctx);
        mt_context *saved = test_ctx;
        test_ctx = ctx;
        char src[512];
        mt_kernel *kn = compile_ok(xw_src(src, sizeof src, MT_FLOAT32, "1", "4096", "1000", true));
        const char *tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
        bool split = strstr(tir, "parts = T.alloc_buffer") != NULL;
        if (!is_skinny(tir) || split != (threads > 1) || (threads > 1 && !strstr(tir, "T.launch(")))
            fail_msg("%d threads: unexpected schedule:\n%s", threads, tir);
        run_xw(kn, MT_FLOAT32, 1, 4096, 1000, true, src);
        mt_kernel_release(kn);
        kn = compile_ok(xw_src(src, sizeof src, MT_FLOAT32, "5", "1001", "4097", false));
        run_xw(kn, MT_FLOAT32, 5, 1001, 4097, false, src);
        mt_kernel_release(kn);
        test_ctx = saved;
        mt_context_destroy(ctx);
    }
}

/* The target's L1 data cache in bytes, from the scheduled TIR's target
 * attribute ("-l1d=48K"). */
static int64_t tir_l1d(const char *tir) {
    const char *p = strstr(tir, "-l1d=");
    assert_non_null(p);
    char *end;
    int64_t v = strtoll(p + 5, &end, 10);
    return *end == 'K' ? v << 10 : *end == 'M' ? v << 20 : v;
}

/* The elements of the sums buffer (`sums = T.alloc_buffer((n,), ...`). */
static int64_t sums_elems(const char *tir) {
    const char *p = strstr(tir, "sums = T.alloc_buffer((");
    assert_non_null(p);
    return strtoll(p + strlen("sums = T.alloc_buffer(("), NULL, 10);
}

/* x @ w, 8 x 1000 by 1000 x 4100, with the matmul rule's knobs given. */
static const char *knob_src(char *buf, size_t cap, const char *knobs) {
    snprintf(buf, cap,
             "def f(x: Tensor((8, 1000), \"float32\"), w: Tensor((1000, 4100), \"float32\")):\n"
             "    return x @ w\n\n@T.schedule(\"matmul\")\ndef s(sch):\n"
             "    sch.apply_rule(\"schedule_matmul\", %s)\n",
             knobs);
    return buf;
}

/* Groups of 4 rows or more ("heavy": 4-8 FMAs per element of w, which
 * stall the stream of w without help) keep their sums within a third of L1
 * and prefetch the next sweep's rows of w; groups of 1-2 rows do neither
 * (they stream w at the memory's speed as they are). The knobs gemv_nb and
 * gemv_pf set both; the printed schedule gives them back. Numerics of the
 * banded, prefetching kernels at odd shapes are test_constant_shapes' 5 and
 * 15 rows; here a wide w with a column tail in its last band. */
static void test_heavy_groups(void **st) {
    if (test_gpu_target()) skip();
    char src[1024];
    mt_kernel *kn = compile_ok(xw_src(src, sizeof src, MT_FLOAT32, "8", "1000", "4100", false));
    const char *tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
    int64_t l1d = tir_l1d(tir), n = sums_elems(tir);
    if (!is_skinny(tir) || !strstr(tir, "T.prefetch(w[") || n * 4 > l1d / 3 + 8 * 64)
        fail_msg("8 rows: expected the skinny schedule with sums of at most %lld bytes and prefetches of w:\n%s",
                 (long long)(l1d / 3), tir);
    /* the default distance is the sweep's rows (8 with AVX-512, 4 with AVX2) */
    const char *sch = mt_kernel_dump(kn, MT_STAGE_SCHEDULE), *kb = strstr(sch, "gemv_kb="), *pf = strstr(sch, "gemv_pf=");
    if (!kb || !pf || atoi(kb + 8) != atoi(pf + 8) || !strstr(sch, "gemv_nb="))
        fail_msg("8 rows: the printed schedule:\n%s", sch);
    /* w (16 MB) is larger than L2: a part of its rows per core */
    const char *parts = strstr(sch, "gemv_parts="), *cores = strstr(tir, "-cores=");
    assert_non_null(cores);
    if (!parts || atoi(parts + 11) != (atoi(cores + 7) > 1 ? atoi(cores + 7) : 1) ||
        (atoi(parts + 11) > 1) != (strstr(tir, "parts = T.alloc_buffer(") != NULL))
        fail_msg("8 rows: expected a part of K per core:\n%s\n%s", sch, tir);
    run_xw(kn, MT_FLOAT32, 8, 1000, 4100, false, src);
    mt_kernel_release(kn);

    kn = compile_ok(xw_src(src, sizeof src, MT_FLOAT32, "2", "1000", "4100", false));
    tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
    if (!is_skinny(tir) || strstr(tir, "T.prefetch(") || sums_elems(tir) < 2 * 4100)
        fail_msg("2 rows: expected one band of sums and no prefetch:\n%s", tir);
    mt_kernel_release(kn);

    /* the knobs: 256-column bands (8 rows of 256 + a line), no prefetch;
     * prefetches 3 rows ahead */
    kn = compile_ok(knob_src(src, sizeof src, "gemv_nb=256, gemv_pf=0"));
    tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
    if (strstr(tir, "T.prefetch(") || sums_elems(tir) != 8 * (256 + 16)) fail_msg("gemv_nb=256, gemv_pf=0:\n%s", tir);
    run_xw(kn, MT_FLOAT32, 8, 1000, 4100, false, "gemv_nb=256, gemv_pf=0");
    mt_kernel_release(kn);
    kn = compile_ok(knob_src(src, sizeof src, "gemv_kb=8, gemv_pf=3"));
    tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
    if (!strstr(tir, "* 8 + 3) * 4100")) fail_msg("gemv_pf=3: expected prefetches of row k + 3:\n%s", tir);
    run_xw(kn, MT_FLOAT32, 8, 1000, 4100, false, "gemv_pf=3");
    mt_kernel_release(kn);
    /* parts of K: 3 (uneven: 1000 rows in sweeps of 8), one, and more than
     * the sweeps (clamped to them: 125) */
    static const struct { const char *knobs; int parts; } pk[] = {
        {"gemv_parts=3", 3}, {"gemv_parts=1", 1}, {"gemv_parts=64, gemv_kb=16", 62}};
    for (size_t i = 0; i < sizeof pk / sizeof pk[0]; i++) {
        kn = compile_ok(knob_src(src, sizeof src, pk[i].knobs));
        tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
        parts = strstr(tir, "parts = T.alloc_buffer((");
        int64_t n = parts ? strtoll(parts + strlen("parts = T.alloc_buffer(("), NULL, 10) : 0;
        if (pk[i].parts > 1 ? n != (int64_t)pk[i].parts * 8 * 4100 : parts != NULL)
            fail_msg("%s: expected %d parts of 8 x 4100 sums:\n%s", pk[i].knobs, pk[i].parts, tir);
        run_xw(kn, MT_FLOAT32, 8, 1000, 4100, false, pk[i].knobs);
        mt_kernel_release(kn);
    }
    /* a float16 w (read through a cast) is prefetched too */
    kn = compile_ok("def f(x: Tensor((8, 1000), \"float16\"), w: Tensor((1000, 4100), \"float16\")):\n"
                    "    return x @ w\n");
    tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
    if (!is_skinny(tir) || !strstr(tir, "T.prefetch(w[")) fail_msg("float16 w: expected prefetches of w:\n%s", tir);
    mt_kernel_release(kn);
}

/* A small problem (w within 64 KiB) runs on the calling thread. */
static void test_small_serial(void **st) {
    if (test_gpu_target()) skip();
    char src[512];
    mt_kernel *kn = compile_ok(xw_src(src, sizeof src, MT_FLOAT32, "2", "100", "100", true));
    const char *tir = mt_kernel_dump(kn, MT_STAGE_TIR_SCHED);
    if (!is_skinny(tir) || strstr(tir, "T.launch(")) fail_msg("unexpected schedule:\n%s", tir);
    mt_kernel_release(kn);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant_shapes), cmocka_unit_test(test_symbolic), cmocka_unit_test(test_batched),
        cmocka_unit_test(test_epilogues),       cmocka_unit_test(test_threads),  cmocka_unit_test(test_small_serial),
        cmocka_unit_test(test_heavy_groups),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
