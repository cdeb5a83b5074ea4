/*
 * test_rule_reduce.c -- the row-reduction schedule rule (src/schedule/
 * rule_reduce.c) through the public API.
 *
 * Numerics: each kernel against a plain double reference. The rule
 * reassociates the reduction (4 x VL strided partial sums, combined
 * pairwise), whose error bound is about (N / (4 VL) + log2(4 VL) + 2) u
 * sum |e_i|; the tests allow g = (N / (4 VL) + 12) u per unit of
 * sum |e_i| (u = 2^-24 float32, 2^-53 float64; VL = 16 float32, 8
 * float64), plus 4 u for each exp / log / rsqrt of the element. max and min
 * must be exact. Per op:
 *   sum                |got - ref| <= g' S,  S = sum |x|  (mean: S / N)
 *   sum(exp(x) * y)    |got - ref| <= g' sum |exp(x) y|
 *   max, min           got == ref
 *   softmax            |got - ref| <= 2 g' ref
 *   log_softmax        |got - ref| <= 2 g' (1 + |x - max| + |log s|)
 *   layer_norm         |got - ref| <= 4 g' (|ref - b| + |b| + rstd |gamma| mean|x|)
 *   rms norm           |got - ref| <= 4 g' |ref|
 * with g' = g + 4u. Shapes: rows a multiple of 16 or not, one row, rows
 * shorter than 16, 1-d inputs (no outer axis), 3-d inputs (two outer axes), symbolic row count and row
 * length (several sizes through one kernel, zero rows included), float64.
 * Structure: the scheduled loop IR carries the rule's marker, a parallel
 * loop for large inputs and T.Ramp vector accesses; functions the rule does
 * not do exactly (a reduction over a non-innermost axis) keep the default
 * schedule.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

static uint64_t rng = 0x243F6A8885A308D3ull;
static double rnd(void) { /* uniform in [-1, 1) */
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0;
}

typedef enum { OP_SUM, OP_MEAN_KD, OP_MAX, OP_MIN_KD, OP_SUMEXPMUL, OP_SOFTMAX, OP_LOGSOFTMAX, OP_LAYERNORM, OP_RMS } op_kind;

static const char *op_body(op_kind op) {
    switch (op) {
    case OP_SUM: return "    return sum(x, axis=-1)\n";
    case OP_MEAN_KD: return "    return mean(x, axis=-1, keepdims=True)\n";
    case OP_MAX: return "    return max(x, axis=-1)\n";
    case OP_MIN_KD: return "    return min(x, axis=-1, keepdims=True)\n";
    case OP_SUMEXPMUL: return "    return sum(exp(x) * y, axis=-1)\n";
    case OP_SOFTMAX: return "    return softmax(x, axis=-1)\n";
    case OP_LOGSOFTMAX: return "    return log_softmax(x, axis=-1)\n";
    case OP_LAYERNORM: return "    return layer_norm(x, g, b)\n";
    case OP_RMS: return "    return x * rsqrt(mean(x * x, axis=-1, keepdims=True) + 1e-6) * g\n";
    }
    return NULL;
}

/* A (rows.., n) input; sym: every dim symbolic ("R0", .., "N"). */
typedef struct rcase {
    op_kind op;
    mt_dtype dt;
    int nouter;
    int64_t outer[2];
    int64_t n;
    bool sym;
} rcase;

static char *source(const rcase *c) {
    static char buf[1024], shape[128], row[64];
    const char *dt = mt_dtype_str(c->dt);
    int p = snprintf(shape, sizeof shape, "(");
    for (int d = 0; d < c->nouter; d++)
        p += c->sym ? snprintf(shape + p, sizeof shape - (size_t)p, "\"R%d\", ", d)
                    : snprintf(shape + p, sizeof shape - (size_t)p, "%lld, ", (long long)c->outer[d]);
    const char *close = c->nouter ? ")" : ",)";
    if (c->sym) snprintf(shape + p, sizeof shape - (size_t)p, "\"N\"%s", close);
    else snprintf(shape + p, sizeof shape - (size_t)p, "%lld%s", (long long)c->n, close);
    if (c->sym) snprintf(row, sizeof row, "(\"N\",)");
    else snprintf(row, sizeof row, "(%lld,)", (long long)c->n);
    int q = snprintf(buf, sizeof buf, "def f(x: Tensor(%s, \"%s\")", shape, dt);
    if (c->op == OP_SUMEXPMUL) q += snprintf(buf + q, sizeof buf - (size_t)q, ", y: Tensor(%s, \"%s\")", shape, dt);
    if (c->op == OP_LAYERNORM || c->op == OP_RMS)
        q += snprintf(buf + q, sizeof buf - (size_t)q, ", g: Tensor(%s, \"%s\")", row, dt);
    if (c->op == OP_LAYERNORM) q += snprintf(buf + q, sizeof buf - (size_t)q, ", b: Tensor(%s, \"%s\")", row, dt);
    snprintf(buf + q, sizeof buf - (size_t)q, "):\n%s", op_body(c->op));
    return buf;
}

static mt_tensor *rand_tensor(mt_dtype dt, int ndim, const int64_t *dims, double scale) {
    mt_tensor *t = mt_tensor_create(dt, ndim, dims);
    assert_non_null(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++) {
        double v = rnd() * scale;
        if (dt == MT_FLOAT32) ((float *)mt_tensor_data(t))[i] = (float)v;
        else ((double *)mt_tensor_data(t))[i] = v;
    }
    return t;
}

static double get(const mt_tensor *t, int64_t i) {
    return mt_tensor_dtype(t) == MT_FLOAT32 ? ((const float *)mt_tensor_data(t))[i]
                                             : ((const double *)mt_tensor_data(t))[i];
}

static bool row_out(op_kind op) { return op >= OP_SOFTMAX; }

/* Runs kernel k on a case of the given sizes and checks every element. */
static void run_check(mt_kernel *k, const rcase *c) {
    int64_t dims[3], rows = 1, n = c->n, gdim[1] = {c->n};
    for (int d = 0; d < c->nouter; d++) dims[d] = c->outer[d], rows *= c->outer[d];
    dims[c->nouter] = n;
    mt_tensor *args[3];
    int na = 0;
    args[na++] = rand_tensor(c->dt, c->nouter + 1, dims, 4.0);
    if (c->op == OP_SUMEXPMUL) args[na++] = rand_tensor(c->dt, c->nouter + 1, dims, 1.0);
    if (c->op == OP_LAYERNORM || c->op == OP_RMS) args[na++] = rand_tensor(c->dt, 1, gdim, 2.0);
    if (c->op == OP_LAYERNORM) args[na++] = rand_tensor(c->dt, 1, gdim, 1.0);
    mt_tensor *res = NULL;
    mt_diag dg;
    if (mt_kernel_run(k, args, na, &res, 1, &dg) != MT_OK) fail_msg("run failed: %s", dg.text);
    assert_int_equal(mt_tensor_numel(res), row_out(c->op) ? rows * n : rows);
    int vl = c->dt == MT_FLOAT32 ? 16 : 8;
    double u = c->dt == MT_FLOAT32 ? 0x1p-24 : 0x1p-53;
    double g = ((double)n / (4 * vl) + 12) * u + 4 * u;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t o = r * n;
        double s = 0, sa = 0, mx = -INFINITY, mn = INFINITY, se = 0;
        for (int64_t j = 0; j < n; j++) {
            double x = get(args[0], o + j);
            s += x;
            sa += fabs(x);
            mx = fmax(mx, x);
            mn = fmin(mn, x);
        }
        double want, tol;
        switch (c->op) {
        case OP_SUM:
        case OP_MEAN_KD:
            want = c->op == OP_SUM ? s : s / (double)n;
            tol = g * (c->op == OP_SUM ? sa : sa / (double)n);
            if (fabs(get(res, r) - want) > tol) fail_msg("row %lld: %.17g vs %.17g", (long long)r, get(res, r), want);
            continue;
        case OP_MAX:
        case OP_MIN_KD:
            want = c->op == OP_MAX ? mx : mn;
            if (get(res, r) != want) fail_msg("row %lld: %.17g vs %.17g", (long long)r, get(res, r), want);
            continue;
        case OP_SUMEXPMUL:
            want = 0, tol = 0;
            for (int64_t j = 0; j < n; j++) {
                double t = exp(get(args[0], o + j)) * get(args[1], o + j);
                want += t;
                tol += fabs(t);
            }
            if (fabs(get(res, r) - want) > g * tol)
                fail_msg("row %lld: %.17g vs %.17g", (long long)r, get(res, r), want);
            continue;
        default: break;
        }
        for (int64_t j = 0; j < n; j++) se += exp(get(args[0], o + j) - mx);
        double mean = s / (double)n, var = 0, ms = 0;
        for (int64_t j = 0; j < n; j++) {
            double d = get(args[0], o + j) - mean;
            var += d * d;
            ms += get(args[0], o + j) * get(args[0], o + j);
        }
        double rstd = 1 / sqrt(var / (double)n + 1e-5), rms = 1 / sqrt(ms / (double)n + 1e-6);
        for (int64_t j = 0; j < n; j++) {
            double x = get(args[0], o + j);
            switch (c->op) {
            case OP_SOFTMAX:
                want = exp(x - mx) / se;
                tol = 2 * g * want;
                break;
            case OP_LOGSOFTMAX:
                want = x - mx - log(se);
                tol = 2 * g * (1 + fabs(x - mx) + fabs(log(se)));
                break;
            case OP_LAYERNORM: {
                double gm = get(args[1], j), b = get(args[2], j);
                want = (x - mean) * rstd * gm + b;
                tol = 4 * g * (fabs(want - b) + fabs(b) + rstd * fabs(gm) * sa / (double)n);
                break;
            }
            default:
                want = x * rms * get(args[1], j);
                tol = 4 * g * fabs(want) + 1e-300;
                break;
            }
            double got = get(res, o + j);
            if (!(fabs(got - want) <= tol))
                fail_msg("%s row %lld col %lld: %.17g vs %.17g (tol %.3g)", op_body(c->op), (long long)r,
                         (long long)j, got, want, tol);
        }
    }
    for (int i = 0; i < na; i++) mt_tensor_release(args[i]);
    mt_tensor_release(res);
}

static mt_kernel *compile_fired(const rcase *c) {
    mt_kernel *k = compile_ok(source(c));
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED), *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    /* the lowered form, or one reduction as a trace (rule_reduce_prims.c) */
    bool lowered = strstr(t, "\"schedule\": \"reduce_rows\"") != NULL;
    bool traced = strstr(how, "the default rule schedule_reduce, as a schedule") && strstr(how, "sch.rfactor(");
    if (!(lowered || traced) || !strstr(t, "T.Ramp("))
        fail_msg("the rule did not fire on\n%s\n%s", source(c), t);
    return k;
}

static void check(const rcase *c) {
    /* a row of one element has no reduce loop left after legalization */
    mt_kernel *k = c->n == 1 ? compile_ok(source(c)) : compile_fired(c);
    run_check(k, c);
    mt_kernel_release(k);
}

static const op_kind all_ops[] = {OP_SUM,     OP_MEAN_KD,    OP_MAX,       OP_MIN_KD, OP_SUMEXPMUL,
                                  OP_SOFTMAX, OP_LOGSOFTMAX, OP_LAYERNORM, OP_RMS};

static void test_shapes(void **st) {
    (void)st;
    static const int64_t shapes[][2] = {{1, 1},  {1, 15},  {3, 16}, {5, 17}, {7, 64},
                                        {2, 65}, {9, 100}, {4, 200}, {3, 4096}, {67, 300}};
    for (size_t o = 0; o < sizeof all_ops / sizeof *all_ops; o++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            rcase c = {all_ops[o], MT_FLOAT32, 1, {shapes[s][0], 0}, shapes[s][1], false};
            check(&c);
        }
}

static void test_float64_1d_3d(void **st) {
    (void)st;
    for (size_t o = 0; o < sizeof all_ops / sizeof *all_ops; o++) {
        rcase c = {all_ops[o], MT_FLOAT64, 1, {6, 0}, 77, false};
        check(&c);
        rcase d = {all_ops[o], MT_FLOAT32, 2, {2, 3}, 40, false};
        check(&d);
        rcase e = {all_ops[o], MT_FLOAT32, 0, {0, 0}, 300, false}; /* one row, no outer axis */
        check(&e);
    }
}

/* One kernel with symbolic dims, run on many sizes (zero rows included). */
static void test_symbolic(void **st) {
    (void)st;
    static const int64_t sizes[][2] = {{1, 1}, {0, 5}, {3, 7}, {2, 16}, {5, 33}, {4, 64}, {3, 130}, {70, 257}};
    for (size_t o = 0; o < sizeof all_ops / sizeof *all_ops; o++) {
        rcase c = {all_ops[o], MT_FLOAT32, 1, {0, 0}, 0, true};
        mt_kernel *k = compile_fired(&c);
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            c.outer[0] = sizes[s][0];
            c.n = sizes[s][1];
            run_check(k, &c);
        }
        mt_kernel_release(k);
    }
}

/* Several outputs in one function: the softmax, a stage reading it back
 * (exp still once per element), and a per-row sum. */
static void test_multi_output(void **st) {
    (void)st;
    static const int64_t shapes[][2] = {{5, 37}, {33, 2000}};
    for (size_t s = 0; s < 2; s++) {
        int64_t R = shapes[s][0], n = shapes[s][1];
        char src[512];
        snprintf(src, sizeof src,
                 "def f(x: Tensor((%lld, %lld), \"float32\")):\n"
                 "    a = softmax(x, axis=-1)\n"
                 "    return a, a * 2.0 + x, sum(x * x, axis=-1)\n",
                 (long long)R, (long long)n);
        mt_kernel *k = compile_ok(src);
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        assert_non_null(strstr(t, "reduce_rows"));
        int64_t dims[2] = {R, n};
        mt_tensor *x = rand_tensor(MT_FLOAT32, 2, dims, 4.0), *res[3] = {NULL, NULL, NULL};
        mt_diag dg;
        if (mt_kernel_run(k, &x, 1, res, 3, &dg) != MT_OK) fail_msg("run failed: %s", dg.text);
        double g = ((double)n / 64 + 16) * 0x1p-24;
        for (int64_t r = 0; r < R; r++) {
            double mx = -INFINITY, se = 0, sq = 0, sqa = 0;
            for (int64_t j = 0; j < n; j++) mx = fmax(mx, get(x, r * n + j));
            for (int64_t j = 0; j < n; j++) {
                double v = get(x, r * n + j);
                se += exp(v - mx);
                sq += v * v;
                sqa += fabs(v * v);
            }
            for (int64_t j = 0; j < n; j++) {
                double v = get(x, r * n + j), a = exp(v - mx) / se;
                assert_true(fabs(get(res[0], r * n + j) - a) <= 2 * g * a);
                assert_true(fabs(get(res[1], r * n + j) - (2 * a + v)) <= 4 * g * (2 * a + fabs(v)));
            }
            assert_true(fabs(get(res[2], r) - sq) <= g * sqa);
        }
        for (int i = 0; i < 3; i++) mt_tensor_release(res[i]);
        mt_tensor_release(x);
        mt_kernel_release(k);
    }
}

/* A bool epilogue (64-lane vectors of bool) and a per-row value read by a
 * later per-row stage together with an input. */
static void test_mask_and_row_stage(void **st) {
    (void)st;
    int64_t dims[2] = {9, 70};
    mt_kernel *k = compile_ok("def f(x: Tensor((9, 70), \"float32\")):\n"
                              "    return x == max(x, axis=-1, keepdims=True), sum(x, axis=-1, keepdims=True) + x[:, 0:1]\n");
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "reduce_rows"));
    mt_tensor *x = rand_tensor(MT_FLOAT32, 2, dims, 4.0), *res[2] = {NULL, NULL};
    mt_diag dg;
    if (mt_kernel_run(k, &x, 1, res, 2, &dg) != MT_OK) fail_msg("run failed: %s", dg.text);
    assert_int_equal(mt_tensor_dtype(res[0]), MT_BOOL);
    const uint8_t *m = mt_tensor_data(res[0]);
    for (int64_t r = 0; r < 9; r++) {
        double mx = -INFINITY, s = 0, sa = 0;
        for (int64_t j = 0; j < 70; j++) {
            mx = fmax(mx, get(x, r * 70 + j));
            s += get(x, r * 70 + j);
            sa += fabs(get(x, r * 70 + j));
        }
        for (int64_t j = 0; j < 70; j++) assert_int_equal(m[r * 70 + j] != 0, get(x, r * 70 + j) == mx);
        double want = s + get(x, r * 70);
        assert_true(fabs(get(res[1], r) - want) <= 20 * 0x1p-24 * (sa + fabs(get(x, r * 70))));
    }
    for (int i = 0; i < 2; i++) mt_tensor_release(res[i]);
    mt_tensor_release(x);
    mt_kernel_release(k);
}

/* Large inputs run over rows in parallel; small ones in one plain loop;
 * softmax computes exp once per element (the sum pass stores it). */
static void test_structure(void **st) {
    (void)st;
    rcase big = {OP_SOFTMAX, MT_FLOAT32, 1, {256, 0}, 1024, false};
    mt_kernel *k = compile_fired(&big);
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(t, "T.launch(")); /* the parallel row loop, outlined */
    assert_non_null(strstr(t, "\"kind\": \"parallel_body\""));
    int nexp = 0; /* one per accumulator of the sum pass; none in the others */
    for (const char *p = strstr(t, "T.exp("); p; p = strstr(p + 1, "T.exp(")) nexp++;
    assert_int_equal(nexp, 4);
    mt_kernel_release(k);
    rcase small = {OP_SUM, MT_FLOAT32, 1, {4, 0}, 100, false};
    k = compile_fired(&small);
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.launch("));
    mt_kernel_release(k);
}

static int count_str(const char *t, const char *what) {
    int n = 0;
    for (const char *p = strstr(t, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

/* The sizes from the shape (src/schedule/rule_reduce_defaults.c): rows
 * shorter than one unrolled step in narrower vectors (a row of 7: one
 * vector of 4 and one accumulator, on AVX2 and AVX-512 alike), small
 * functions in more, even chunks; every op on odd short rows and odd row
 * counts against the double reference. */
static void test_defaults_from_shape(void **st) {
    (void)st;
    rcase r7 = {OP_SOFTMAX, MT_FLOAT32, 1, {8193, 0}, 7, false};
    mt_kernel *k = compile_fired(&r7);
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    if (!test_gpu_target()) {
        /* in blocks of 16 rows, the last one partial (8193 = 512 x 16 + 1) */
        if (!strstr(t, "acc = T.alloc_buffer((4,)") || !strstr(t, "T.Ramp(") || count_str(t, "T.exp(") != 2 ||
            !strstr(t, "for bi in range(T.min(16, "))
            fail_msg("expected 4 lanes, one accumulator (a vector exp and a 3-element scalar loop), in blocks of 16 "
                     "rows:\n%s", t);
        assert_non_null(strstr(t, "T.launch(")); /* 224 KiB: chunks of 8 KiB or more, 8 per core */
    }
    run_check(k, &r7);
    mt_kernel_release(k);
    static const int64_t shapes[][2] = {{16384, 3}, {8191, 7}, {1000, 12}, {3001, 20}, {257, 33}, {65, 63}};
    for (size_t o = 0; o < sizeof all_ops / sizeof *all_ops; o++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            rcase c = {all_ops[o], MT_FLOAT32, 1, {shapes[s][0], 0}, shapes[s][1], false};
            check(&c);
            if (o % 3 == 0) {
                c.dt = MT_FLOAT64;
                check(&c);
            }
        }
}

/* The kernel of c with the rule's prefetch knob forced to pf. */
static mt_kernel *compile_prefetch(const rcase *c, const char *fn, int pf) {
    char src[2048];
    snprintf(src, sizeof src, "%s\n@T.schedule(\"%s\")\ndef s(sch):\n    sch.apply_rule(\"schedule_reduce\", prefetch=%d)\n",
             source(c), fn, pf);
    return compile_ok(src);
}

/* The second pass over a row (the first that finds it in cache) prefetches
 * the next row's input (rule_reduce.c, pf_stage; rule_reduce_defaults.c,
 * mt_rr_prefetch): rows of 1000 float32 in an input larger than any L2, one
 * prefetch of x per vector step (g and b do not move with the row): in the
 * second pass's four unrolled steps and its loop of single vectors, none in
 * the last pass; not rows of 100 in a small input; the knob forces it either
 * way, with the same numerics, the last row (which prefetches itself) and
 * two outer axes included. */

/* The prefetches of t, all of them in its second reduction pass (after the
 * first pass's scalar tail `for rt`, before the third pass `for rv_2`). */
static void assert_second_pass_prefetches(const char *t) {
    const char *pass2 = strstr(t, "for rt in"), *first = strstr(t, "T.prefetch("), *last = first;
    for (const char *p = first; p; p = strstr(p + 1, "T.prefetch(")) last = p;
    const char *pass3 = pass2 ? strstr(pass2, "for rv_2 in") : NULL;
    if (count_str(t, "T.prefetch(") != 5 || !pass2 || !pass3 || first < pass2 || last > pass3)
        fail_msg("expected 5 prefetches of x's next row, in the second pass:\n%s", t);
}
static void test_prefetch(void **st) {
    (void)st;
    if (test_gpu_target()) {
        print_message("skipped under target cuda: the CPU row rule's prefetch\n");
        skip();
    }
    rcase big = {OP_LAYERNORM, MT_FLOAT32, 1, {2048, 0}, 1000, false};
    mt_kernel *k = compile_fired(&big);
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_second_pass_prefetches(t);
    assert_non_null(strstr(t, "T.evaluate(T.prefetch(x[T.min("));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "prefetch=1"));
    run_check(k, &big);
    mt_kernel_release(k);
    k = compile_prefetch(&big, "layer_norm", 0);
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.prefetch("));
    mt_kernel_release(k);
    rcase small = {OP_LAYERNORM, MT_FLOAT32, 1, {37, 0}, 100, false};
    k = compile_fired(&small);
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.prefetch("));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "prefetch=0"));
    mt_kernel_release(k);
    k = compile_prefetch(&small, "layer_norm", 1);
    assert_second_pass_prefetches(mt_kernel_dump(k, MT_STAGE_TIR_SCHED));
    run_check(k, &small);
    mt_kernel_release(k);
    rcase three = {OP_SOFTMAX, MT_FLOAT32, 2, {5, 7}, 100, false};
    k = compile_prefetch(&three, "softmax", 1);
    assert_second_pass_prefetches(mt_kernel_dump(k, MT_STAGE_TIR_SCHED));
    run_check(k, &three);
    mt_kernel_release(k);
    /* rows of 256 KiB: log_softmax's second pass (exps, nothing stored)
     * prefetches; layer_norm's (a sum of squares) and softmax's (which
     * stores the exps) do not */
    static const op_kind long_rows[] = {OP_LOGSOFTMAX, OP_LAYERNORM, OP_SOFTMAX};
    for (int i = 0; i < 3; i++) {
        rcase c = {long_rows[i], MT_FLOAT32, 1, {32, 0}, 65536, false};
        k = compile_fired(&c);
        const char *want = i == 0 ? "prefetch=1" : "prefetch=0";
        if (!strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), want))
            fail_msg("%s over rows of 65536: expected %s\n%s", i == 0 ? "log_softmax" : i == 1 ? "layer_norm" : "softmax",
                     want, mt_kernel_dump(k, MT_STAGE_SCHEDULE));
        mt_kernel_release(k);
    }
    /* a per-row stage first (t = b * 2): the pass that reads x from memory
     * is the sum, and the next pass prefetches x's next row, not b */
    k = compile_ok("@T.prim_func\n"
                   "def rowfirst(x: T.Buffer((4096, 1000), \"float32\"), b: T.Buffer((4096,), \"float32\"),\n"
                   "             t: T.Buffer((4096,), \"float32\"), z: T.Buffer((4096, 1000), \"float32\")):\n"
                   "    s = T.alloc_buffer((4096,), \"float32\")\n"
                   "    for i in T.grid(4096):\n"
                   "        with T.block(\"t\"):\n"
                   "            vi = T.axis.remap(\"S\", [i])\n"
                   "            t[vi] = b[vi] * T.float32(2)\n"
                   "    for i, r in T.grid(4096, 1000):\n"
                   "        with T.block(\"s\"):\n"
                   "            vi, vr = T.axis.remap(\"SR\", [i, r])\n"
                   "            with T.init():\n"
                   "                s[vi] = T.float32(0)\n"
                   "            s[vi] = s[vi] + x[vi, vr]\n"
                   "    for i, r in T.grid(4096, 1000):\n"
                   "        with T.block(\"e1\"):\n"
                   "            vi, vr = T.axis.remap(\"SS\", [i, r])\n"
                   "            z[vi, vr] = x[vi, vr] * s[vi] + t[vi]\n");
    t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    if (!strstr(t, "T.prefetch(x[") || strstr(t, "T.prefetch(b["))
        fail_msg("expected the prefetch of x's next row (not b's) after the sum pass:\n%s", t);
    mt_kernel_release(k);
    rcase one_pass = {OP_SUM, MT_FLOAT32, 1, {2048, 0}, 1000, false}; /* nothing after the pass that reads x */
    k = compile_fired(&one_pass);
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.prefetch("));
    mt_kernel_release(k);
}

/* Blocks of rows (rule_reduce.c, stages_block): short rows go pass by pass
 * over 16 rows, the per-row values in 16-element locals, the last block of
 * a chunk partial; a symbolic row count (0 to 1000 rows) and every op; the
 * knob block_rows=1 gives the row-by-row code, block_rows=4 blocks of 4
 * (float64 too). */
static void test_blocks(void **st) {
    (void)st;
    if (test_gpu_target()) {
        print_message("skipped under target cuda: the CPU row rule's blocks\n");
        skip();
    }
    static const int64_t ms[] = {0, 1, 15, 16, 17, 40, 1000};
    for (size_t o = 0; o < sizeof all_ops / sizeof *all_ops; o++) {
        rcase c = {all_ops[o], MT_FLOAT32, 1, {7, 0}, 20, false};
        char src[2048], *p;
        snprintf(src, sizeof src, "%s", source(&c));
        while ((p = strstr(src, "(7, 20)"))) memcpy(p, "(M, 20)", 7); /* "M" below */
        char sym[2100];
        int q = 0;
        for (const char *s = src; *s; s++) q += *s == 'M' && s[1] == ',' ? snprintf(sym + q, sizeof sym - (size_t)q, "\"m\"") : snprintf(sym + q, sizeof sym - (size_t)q, "%c", *s);
        mt_kernel *k = compile_fired(&c);
        mt_kernel_release(k);
        k = compile_ok(sym);
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        bool multi = c.op >= OP_SOFTMAX; /* the others are one pass over the row: nothing to gain */
        if (multi != (strstr(t, "for bi in range(T.min(16, ") != NULL || strstr(t, "for bi in range(16):") != NULL))
            fail_msg("%s: expected %s:\n%s", sym, multi ? "blocks of 16 rows" : "no blocks", t);
        /* log_softmax's log of the row sum: one vector for the block */
        if (c.op == OP_LOGSOFTMAX && !strstr(t, "T.log("))
            fail_msg("expected a log:\n%s", t);
        if (c.op == OP_LOGSOFTMAX && !strstr(t, ", 1, 16)] = T.log("))
            fail_msg("expected the block's logs as one vector:\n%s", t);
        for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
            c.outer[0] = ms[i];
            run_check(k, &c);
        }
        mt_kernel_release(k);
    }
    static const char *const knobs[] = {"block_rows=1", "block_rows=4"};
    for (int i = 0; i < 2; i++)
        for (int f64 = 0; f64 < 2; f64++) {
            rcase c = {OP_LAYERNORM, f64 ? MT_FLOAT64 : MT_FLOAT32, 2, {5, 7}, 40, false};
            char src[2048];
            snprintf(src, sizeof src, "%s\n@T.schedule(\"layer_norm\")\ndef s(sch):\n    sch.apply_rule(\"schedule_reduce\", %s)\n",
                     source(&c), knobs[i]);
            mt_kernel *k = compile_ok(src);
            const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
            /* (35 rows: 8 whole blocks and a partial one, which the vectorized
             * per-row stage's loop may have peeled) */
            bool four = strstr(t, "for bi in range(T.min(4, 35 - blk * 4)):") || strstr(t, "for bi in range(4):");
            if ((i == 1) != four || (i == 0) != (strstr(t, "for bi") == NULL))
                fail_msg("%s: unexpected blocks:\n%s", knobs[i], t);
            assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), knobs[i]));
            run_check(k, &c);
            mt_kernel_release(k);
        }
}

/* Not the rule's: a reduction over the first axis, a full reduction. */
static void test_not_applied(void **st) {
    (void)st;
    static const char *const srcs[] = {
        "def f(x: Tensor((64, 100), \"float32\")):\n    return sum(x, axis=0)\n",
        "def f(x: Tensor((64, 100), \"int32\")):\n    return sum(x, axis=-1)\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
        mt_kernel *k = compile_ok(srcs[i]);
        assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "reduce_rows"));
        mt_kernel_release(k);
    }
}

/* One reduction over the row as a trace of primitives (rule_reduce_prims.c):
 * the printed schedule is primitives (rfactor, compute_at, a vectorized
 * reduce loop), never an apply_rule step, with row tails of whole vectors,
 * a 4-lane vector and scalars; values against the double reference, as
 * the lowered form's (knob primitives=0, checked too); max over rows with
 * a NaN (in the main vectors or the tail) is NaN there. */
static void test_primitives(void **st) {
    (void)st;
    if (test_gpu_target()) {
        print_message("skipped under target cuda: the CPU rule's trace\n");
        skip();
    }
    static const int64_t shapes[][2] = {{67, 300}, {9, 100}, {1000, 7}, {3, 4096}, {2048, 33}};
    static const op_kind ops[] = {OP_SUM, OP_MEAN_KD, OP_MAX, OP_MIN_KD, OP_SUMEXPMUL};
    static const char *const names[] = {"sum", "mean", "max", "min", "fused_exp_multiply_sum"};
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
        for (size_t q = 0; q < sizeof shapes / sizeof *shapes; q++)
            for (int prims = 1; prims >= 0; prims--) {
                rcase c = {ops[o], q % 2 ? MT_FLOAT64 : MT_FLOAT32, 1, {shapes[q][0], 0}, shapes[q][1], false};
                char src[2048];
                snprintf(src, sizeof src, "%s%s%s%s", source(&c),
                         prims ? "" : "\n@T.schedule(\"", prims ? "" : names[o],
                         prims ? "" : "\")\ndef s(sch):\n    sch.apply_rule(\"schedule_reduce\", primitives=0)\n");
                mt_kernel *k = compile_ok(src);
                const char *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE), *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
                bool traced = strstr(how, "sch.rfactor(") && strstr(how, "sch.compute_at(") && !strstr(how, "apply_rule");
                if (traced != (prims == 1) || (strstr(t, "reduce_rows") != NULL) == (prims == 1))
                    fail_msg("primitives=%d:\n%s\n%s", prims, how, t);
                if (prims && c.n == 100 && c.dt == MT_FLOAT64 && !strstr(t, ", 1, 4)]"))
                    fail_msg("expected a 4-lane vector in the row's tail:\n%s", t);
                run_check(k, &c);
                mt_kernel_release(k);
            }
    /* a symbolic count of rows (a batch), constant rows: chunks of a constant count of rows */
    static const op_kind sym_ops[] = {OP_SUM, OP_MEAN_KD, OP_MAX};
    static const char *const sym_src[] = {
        "def f(x: Tensor((\"r\", 100), \"float32\")):\n    return sum(x, axis=-1)\n",
        "def f(x: Tensor((\"r\", 100), \"float32\")):\n    return mean(x, axis=-1, keepdims=True)\n",
        "def f(x: Tensor((\"r\", 100), \"float32\")):\n    return max(x, axis=-1)\n"};
    for (int o = 0; o < 3; o++) {
        mt_kernel *k = compile_ok(sym_src[o]);
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        if (!strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "sch.rfactor(") || !strstr(t, "_rf = T.alloc_buffer((64,)"))
            fail_msg("expected the trace, partial results a local per row:\n%s", t);
        static const int64_t rows[] = {0, 1, 5, 1000};
        for (int q = 0; q < 4; q++) {
            rcase c = {sym_ops[o], MT_FLOAT32, 1, {rows[q], 0}, 100, false};
            run_check(k, &c);
        }
        mt_kernel_release(k);
    }
    mt_kernel *k = compile_ok("def f(x: Tensor((5, 100), \"float32\")):\n    return max(x, axis=-1)\n");
    int64_t dims[2] = {5, 100};
    mt_tensor *x = rand_tensor(MT_FLOAT32, 2, dims, 4.0), *res = NULL;
    ((float *)mt_tensor_data(x))[1 * 100 + 37] = NAN;
    ((float *)mt_tensor_data(x))[3 * 100 + 98] = NAN;
    mt_diag dg;
    if (mt_kernel_run(k, &x, 1, &res, 1, &dg) != MT_OK) fail_msg("run failed: %s", dg.text);
    for (int64_t r = 0; r < 5; r++) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < 100; j++) mx = isnan(mx) || isnan(get(x, r * 100 + j)) ? NAN : fmax(mx, get(x, r * 100 + j));
        if (r == 1 || r == 3) assert_true(isnan(get(res, r)));
        else assert_true(get(res, r) == mx);
    }
    mt_tensor_release(x);
    mt_tensor_release(res);
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),     cmocka_unit_test(test_float64_1d_3d), cmocka_unit_test(test_symbolic),
        cmocka_unit_test(test_multi_output), cmocka_unit_test(test_mask_and_row_stage), cmocka_unit_test(test_structure), cmocka_unit_test(test_defaults_from_shape), cmocka_unit_test(test_prefetch), cmocka_unit_test(test_blocks), cmocka_unit_test(test_not_applied), cmocka_unit_test(test_primitives),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
