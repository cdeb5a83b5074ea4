/*
 * test_argreduce.c -- argmax / argmin over the last axis through the
 * public API: the CPU rule (src/schedule/rule_argreduce.c: a best (value,
 * index) pair per vector lane, the lanes and the tail met at the end) and,
 * under the emulated GPU target, gpu_argreduce.c.
 *
 * Numerics: exact. Every result is compared with a serial scan in C that
 * keeps the first index of the largest (argmin: smallest) value, or of the
 * first NaN (NumPy's rule). The values are drawn from a few integers so
 * that every row has ties across lanes and between the lanes and the
 * tail, with NaN, -inf/+inf and signed zeros mixed in; rows of lengths
 * around the vector widths (1 to 1025), several dtypes, 1-d / 3-d inputs,
 * keepdims, a producer fused in front, a symbolic row length.
 * Structure (CPU): the rule's marker, vector selects, a parallel loop for
 * large inputs, and the knob lanes in its printed schedule; short rows in
 * the lanes of a block (knob block_rows), and where they are not.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint32_t next(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

/* Few distinct values, so that ties are everywhere; special values on
 * request (floats only). */
static double draw(bool special) {
    uint32_t r = next() % 100;
    if (special) {
        if (r < 2) return NAN;
        if (r < 4) return -INFINITY;
        if (r < 6) return INFINITY;
        if (r < 8) return -0.0;
    }
    return (double)((int)(next() % 7) - 3);
}

static void put(mt_tensor *t, int64_t i, double v) {
    void *p = mt_tensor_data(t);
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT32: ((float *)p)[i] = (float)v; break;
    case MT_FLOAT64: ((double *)p)[i] = v; break;
    case MT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    default: ((int64_t *)p)[i] = (int64_t)v; break;
    }
}

static double at(const mt_tensor *t, int64_t i) {
    const void *p = mt_tensor_data(t);
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT32: return ((const float *)p)[i];
    case MT_FLOAT64: return ((const double *)p)[i];
    case MT_INT32: return ((const int32_t *)p)[i];
    default: return (double)((const int64_t *)p)[i];
    }
}

/* The serial scan over n values of row r. */
static int64_t ref_scan(const double *row, int64_t n, bool is_max) {
    int64_t best = 0;
    for (int64_t j = 1; j < n; j++) {
        double b = row[best], x = row[j];
        if (isnan(b)) break;
        if (isnan(x) || (is_max ? x > b : x < b)) best = j;
    }
    return best;
}

typedef struct acase {
    const char *dt;      /* "float32", ... */
    mt_dtype dtype;
    int nd;              /* 1..3 */
    int64_t dims[3];
    bool is_max, keepdims, special, fused;
} acase;

/* x (and y when fused: argmax(x - 2 * y)) filled, the kernel run, every row checked. */
static void run_case(mt_kernel *k, const acase *c) {
    int64_t n = c->dims[c->nd - 1], rows = 1;
    for (int d = 0; d < c->nd - 1; d++) rows *= c->dims[d];
    mt_tensor *x = mt_tensor_create(c->dtype, c->nd, c->dims), *y = mt_tensor_create(c->dtype, c->nd, c->dims);
    double *row = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < rows * n; i++) {
        put(x, i, draw(c->special));
        put(y, i, (double)(next() % 2));
    }
    mt_tensor *args[2] = {x, y}, *out = NULL;
    mt_diag d;
    if (test_kernel_run(k, args, c->fused ? 2 : 1, &out, 1, &d) != MT_OK) fail_msg("run: %s", d.text);
    assert_int_equal(mt_tensor_numel(out), rows);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < n; j++) {
            double xv = at(x, r * n + j);
            row[j] = c->fused ? xv - 2.0 * at(y, r * n + j) : xv;
        }
        int64_t want = ref_scan(row, n, c->is_max), got = (int64_t)at(out, r);
        if (got != want)
            fail_msg("%s %s, row length %lld, row %lld: got %lld (%g), want %lld (%g)", c->is_max ? "argmax" : "argmin",
                     c->dt, (long long)n, (long long)r, (long long)got, row[got >= 0 && got < n ? got : 0],
                     (long long)want, row[want]);
    }
    free(row);
    mt_tensor_release(out), mt_tensor_release(x), mt_tensor_release(y);
}

static void source(char *buf, size_t cap, const acase *c) {
    char shape[96];
    size_t l = 0;
    for (int d = 0; d < c->nd; d++) l += (size_t)snprintf(shape + l, sizeof shape - l, d ? ", %lld" : "%lld", (long long)c->dims[d]);
    if (c->nd == 1) snprintf(shape + l, sizeof shape - l, ",");
    const char *op = c->is_max ? "argmax" : "argmin", *kd = c->keepdims ? ", keepdims=True" : "";
    if (c->fused)
        snprintf(buf, cap,
                 "def f(x: Tensor((%s), \"%s\"), y: Tensor((%s), \"%s\")):\n    return %s(x - 2.0 * y, axis=-1%s)\n",
                 shape, c->dt, shape, c->dt, op, kd);
    else
        snprintf(buf, cap, "def f(x: Tensor((%s), \"%s\")):\n    return %s(x, axis=-1%s)\n", shape, c->dt, op, kd);
}

static void check(const acase *c) {
    char src[512];
    source(src, sizeof src, c);
    mt_kernel *k = compile_ok(src);
    if (!test_gpu_target()) {
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
        if (!strstr(t, "\"schedule\": \"argreduce_rows\"")) fail_msg("the rule did not apply:\n%s\n%s", src, t);
    }
    run_case(k, c);
    mt_kernel_release(k);
}

static const char *dt_name(mt_dtype t) { return mt_dtype_str(t); }

/* Row lengths around the vector widths, both ops, every dtype. */
static void test_lengths_dtypes(void **st) {
    (void)st;
    static const int64_t ns[] = {1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 48, 64, 100, 1000, 1025};
    static const mt_dtype dts[] = {MT_FLOAT32, MT_FLOAT64, MT_INT32, MT_INT64};
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
            for (int mx = 0; mx < 2; mx++) {
                bool fl = dts[t] == MT_FLOAT32 || dts[t] == MT_FLOAT64;
                acase c = {dt_name(dts[t]), dts[t], 2, {37, ns[i], 0}, mx, false, fl, false};
                check(&c);
            }
}

/* No outer axis, two outer axes with keepdims, a producer fused in front. */
static void test_ranks_keepdims_fused(void **st) {
    (void)st;
    acase one = {"float32", MT_FLOAT32, 1, {1000, 0, 0}, true, false, true, false};
    check(&one);
    acase three = {"float32", MT_FLOAT32, 3, {3, 5, 70}, false, true, true, false};
    check(&three);
    acase fused = {"float32", MT_FLOAT32, 2, {64, 130, 0}, true, false, false, true};
    check(&fused);
    acase big = {"float32", MT_FLOAT32, 2, {4096, 257, 0}, true, false, true, false}; /* parallel chunks */
    check(&big);
}

/* Rows of every NaN / -inf pattern at the lane boundaries: all -inf (index
 * 0), the only NaN in the tail, the first NaN in a later lane than a
 * second one, the max in the tail and, earlier, in a lane. */
static void test_special_rows(void **st) {
    (void)st;
    enum { N = 37 };
    static const struct {
        int nan1, nan2, maxat1, maxat2;
        bool ninf;
        int64_t want;
    } rows[] = {
        {-1, -1, -1, -1, true, 0}, {35, -1, -1, -1, false, 35}, {20, 9, -1, -1, false, 9},
        {-1, -1, 36, 5, false, 5}, {-1, -1, 33, -1, false, 33}, {0, 36, -1, -1, false, 0},
    };
    int nr = (int)(sizeof rows / sizeof rows[0]);
    mt_kernel *k = compile_ok("def f(x: Tensor((6, 37), \"float32\")):\n    return argmax(x, axis=-1)\n");
    int64_t dims[2] = {nr, N};
    mt_tensor *x = mt_tensor_create(MT_FLOAT32, 2, dims), *out = NULL;
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < N; j++) {
            double v = rows[r].ninf ? -INFINITY : (double)(j % 5);
            if (j == rows[r].nan1 || j == rows[r].nan2) v = NAN;
            if (j == rows[r].maxat1 || j == rows[r].maxat2) v = 100;
            put(x, r * N + j, v);
        }
    mt_diag d;
    if (test_kernel_run(k, &x, 1, &out, 1, &d) != MT_OK) fail_msg("run: %s", d.text);
    for (int r = 0; r < nr; r++)
        if ((int64_t)at(out, r) != rows[r].want) fail_msg("row %d: got %lld, want %lld", r, (long long)at(out, r), (long long)rows[r].want);
    mt_tensor_release(out), mt_tensor_release(x);
    mt_kernel_release(k);
}

/* One kernel for every row length: ("n",) symbolic. */
static void test_symbolic(void **st) {
    (void)st;
    mt_kernel *k = compile_ok("def f(x: Tensor((9, \"n\"), \"float32\")):\n    return argmin(x, axis=-1)\n");
    static const int64_t ns[] = {0, 1, 2, 15, 16, 17, 100, 1031}; /* 0: every index 0 (docs/ops_nn.md) */
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        acase c = {"float32", MT_FLOAT32, 2, {9, ns[i], 0}, false, false, true, false};
        run_case(k, &c);
    }
    mt_kernel_release(k);
}

/* CPU: vector selects, a parallel loop for a large input, the lanes
 * printed and taken back (lanes=4: other code, the same results). */
static void test_structure_knobs(void **st) {
    (void)st;
    skip_if_gpu_target("the CPU rule's structure");
    const char *src = "def f(x: Tensor((4096, 1000), \"float32\")):\n    return argmax(x, axis=-1)\n";
    mt_kernel *k = compile_ok(src);
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED), *how = mt_kernel_dump(k, MT_STAGE_SCHEDULE);
    assert_non_null(strstr(t, "T.Select("));
    assert_non_null(strstr(t, "T.launch("));
    assert_non_null(strstr(how, "sch.apply_rule(\"schedule_reduce\", accumulators=2, lanes="));
    assert_non_null(strstr(t, "T.Cast(\"int32\", rb * ")); /* int32 indices beside float32 */
    mt_kernel_release(k);
    /* a short row: the serial scan, no lanes */
    k = compile_ok("def f(x: Tensor((4096, 10), \"float32\")):\n    return argmax(x, axis=-1)\n");
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "T.Select("));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "sch.apply_rule(\"schedule_reduce\", parallel=1)"));
    mt_kernel_release(k);
    char with[512];
    snprintf(with, sizeof with,
             "def f(x: Tensor((40, 1000), \"float32\")):\n    return argmax(x, axis=-1)\n"
             "@T.schedule(\"argmax\")\ndef s(sch):\n    sch.apply_rule(\"schedule_reduce\", lanes=4, parallel=0)\n");
    k = compile_ok(with);
    t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(t, "x[T.Ramp(row * 1000 + rb * 8, 1, 4)]")); /* two sets of 4 lanes */
    assert_null(strstr(t, "T.launch("));
    acase c = {"float32", MT_FLOAT32, 2, {40, 1000, 0}, true, false, true, false};
    run_case(k, &c);
    mt_kernel_release(k);
}

/* Short rows in the lanes (rows of 16 to 64, a multiple of the lanes):
 * a block of rows whose columns transpose_tiles loads as rows and
 * shuffles, the knob block_rows printed; block_rows=1 gives the row by
 * row scan and the same results; a producer that broadcasts a row vector
 * (its loads do not use the row) and 4096 rows (parallel chunks of whole
 * blocks) keep the path; three dims and rows of 128 do not take it. */
static void test_rows_in_lanes(void **st) {
    (void)st;
    skip_if_gpu_target("the CPU rule's structure");
    mt_kernel *k = compile_ok("def f(x: Tensor((4096, 32), \"float32\")):\n    return argmax(x, axis=-1)\n");
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    if (!strstr(t, "best_rows") || !strstr(t, "T.Shuffle(") || !strstr(t, "T.launch("))
        fail_msg("not rows in the lanes:\n%s", t);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "block_rows=16"));
    acase c = {"float32", MT_FLOAT32, 2, {4096, 32, 0}, true, false, true, false};
    run_case(k, &c);
    mt_kernel_release(k);
    k = compile_ok("def f(x: Tensor((100, 32), \"float32\")):\n    return argmax(x, axis=-1)\n"
                   "@T.schedule(\"argmax\")\ndef s(sch):\n    sch.apply_rule(\"schedule_reduce\", block_rows=1)\n");
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "best_rows"));
    acase c1 = {"float32", MT_FLOAT32, 2, {100, 32, 0}, true, false, true, false};
    run_case(k, &c1);
    mt_kernel_release(k);
    /* argmin(x + b), b a row vector: its load is a scalar per column */
    k = compile_ok("def f(x: Tensor((45, 16), \"float32\"), b: Tensor((16,), \"float32\")):\n"
                   "    return argmin(x + b, axis=-1)\n");
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "best_rows"));
    int64_t dx[2] = {45, 16}, db = 16;
    mt_tensor *args[2] = {mt_tensor_create(MT_FLOAT32, 2, dx), mt_tensor_create(MT_FLOAT32, 1, &db)}, *out = NULL;
    for (int i = 0; i < 45 * 16; i++) put(args[0], i, draw(true));
    for (int j = 0; j < 16; j++) put(args[1], j, (double)(j % 3));
    mt_diag d;
    if (test_kernel_run(k, args, 2, &out, 1, &d) != MT_OK) fail_msg("run: %s", d.text);
    for (int r = 0; r < 45; r++) {
        double row[16];
        for (int j = 0; j < 16; j++) row[j] = (double)((float)at(args[0], r * 16 + j) + (float)at(args[1], j));
        if ((int64_t)at(out, r) != ref_scan(row, 16, false)) fail_msg("argmin(x + b), row %d", r);
    }
    mt_tensor_release(out), mt_tensor_release(args[0]), mt_tensor_release(args[1]);
    mt_kernel_release(k);
    static const char *const not_taken[] = {
        "def f(x: Tensor((8, 20, 16), \"float32\")):\n    return argmax(x, axis=-1)\n",
        "def f(x: Tensor((64, 128), \"float32\")):\n    return argmax(x, axis=-1)\n",
    };
    for (int i = 0; i < 2; i++) {
        k = compile_ok(not_taken[i]);
        if (strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "best_rows")) fail_msg("rows in the lanes for:\n%s", not_taken[i]);
        mt_kernel_release(k);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lengths_dtypes), cmocka_unit_test(test_ranks_keepdims_fused),
        cmocka_unit_test(test_special_rows),   cmocka_unit_test(test_symbolic),
        cmocka_unit_test(test_structure_knobs), cmocka_unit_test(test_rows_in_lanes),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
