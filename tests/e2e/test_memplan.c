/*
 * test_memplan.c -- the run's memory plan (src/runtime/memplan.c).
 *
 * The placement on its own: random lifetimes and sizes, checking that no two
 * slots whose lifetimes overlap share a byte. Then through the public API:
 * the arena of a chain of equal intermediates holds two of them, not all
 * (read from the "plan" stage); chains, a diamond, run-time loops and if
 * branches, symbolic shapes give the same numbers as a double reference
 * (matmuls of 32x32 or 16x16 float32 with entries in [-1, 1] scaled by
 * 1/size: relative tolerance 1e-4 on the largest entry).
 */
#include <math.h>
#include <stdlib.h>

#include "runtime/memplan.h"
#include "test_util.h"

/* ---- placement ------------------------------------------------------------ */

/* The greedy placement written the plain way (cubic): slots by decreasing
 * size, then start, then id; each at the lowest 64-aligned offset clear of
 * every placed slot it meets in time. mt_memplan_assign must agree. */
static size_t reference_assign(int n, const int *start, const int *end, const size_t *size,
                               size_t *off) {
    int order[64];
    for (int i = 0; i < n; i++) order[i] = i;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            int i = order[a], j = order[b];
            bool jfirst = size[j] != size[i]     ? size[j] > size[i]
                          : start[j] != start[i] ? start[j] < start[i]
                                                 : j < i;
            if (jfirst) order[a] = j, order[b] = i;
        }
    size_t total = 0;
    for (int k = 0; k < n; k++) {
        int i = order[k];
        size_t at = 0;
        for (bool moved = true; moved;) {
            moved = false;
            for (int q = 0; q < k; q++) {
                int j = order[q];
                bool live = start[i] <= end[j] && start[j] <= end[i];
                if (live && at < off[j] + size[j] && off[j] < at + size[i]) {
                    at = off[j] + size[j];
                    moved = true;
                }
            }
        }
        off[i] = at;
        if (at + size[i] > total) total = at + size[i];
    }
    return total;
}

static void test_assign_no_overlap(void **s) {
    (void)s;
    enum { N = 40 };
    int start[N], end[N], scratch[2 * N];
    size_t size[N], off[N];
    unsigned seed = 12345;
    for (int round = 0; round < 200; round++) {
        int n = 1 + round % N;
        size_t sum = 0;
        for (int i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            start[i] = (int)(seed >> 16) % 30;
            seed = seed * 1103515245u + 12345u;
            end[i] = start[i] + (int)(seed >> 16) % 10;
            seed = seed * 1103515245u + 12345u;
            size[i] = mt_memplan_round((seed >> 12) % 100000);
            sum += size[i];
        }
        mt_memplan m = {.n = n, .start = start, .end = end};
        size_t total = mt_memplan_assign(&m, size, off, scratch);
        assert_true(total <= sum);
        size_t maxsize = 0;
        for (int i = 0; i < n; i++) {
            assert_int_equal(off[i] % 64, 0);
            assert_true(off[i] + size[i] <= total);
            if (size[i] > maxsize) maxsize = size[i];
            for (int j = 0; j < i; j++) {
                bool live = start[i] <= end[j] && start[j] <= end[i];
                bool share = off[i] < off[j] + size[j] && off[j] < off[i] + size[i];
                if (live && share)
                    fail_msg("slots %d [%d,%d] and %d [%d,%d] overlap in time and space", i,
                             start[i], end[i], j, start[j], end[j]);
            }
        }
        assert_true(total >= maxsize);
        size_t ref[N];
        assert_int_equal(reference_assign(n, start, end, size, ref), total);
        for (int i = 0; i < n; i++) assert_int_equal(ref[i], off[i]);
    }
    /* disjoint lifetimes of equal size: one slot's worth */
    int s3[3] = {0, 1, 2}, e3[3] = {0, 1, 2};
    size_t z3[3] = {4096, 4096, 4096}, o3[3];
    mt_memplan m3 = {.n = 3, .start = s3, .end = e3};
    assert_int_equal(mt_memplan_assign(&m3, z3, o3, scratch), 4096);
}

/* Sizes come from run-time dims: four live slots of 2^62 bytes each (the
 * largest the executor accepts per value) sum to 2^64. The arena's size must
 * not wrap to a small number (it did: 0, and the kernels wrote past it). */
static void test_assign_overflow(void **s) {
    (void)s;
    int start[4] = {0, 0, 0, 0}, end[4] = {3, 3, 3, 3}, scratch[8];
    size_t big = (size_t)1 << 62, size[4] = {big, big, big, big}, off[4];
    mt_memplan m = {.n = 4, .start = start, .end = end};
    assert_true(mt_memplan_assign(&m, size, off, scratch) == SIZE_MAX);
    /* three fit: 3 * 2^62 */
    m.n = 3;
    assert_true(mt_memplan_assign(&m, size, off, scratch) == 3 * big);
    /* disjoint lifetimes share: four of them take one slot */
    int s4[4] = {0, 1, 2, 3}, e4[4] = {0, 1, 2, 3};
    mt_memplan d = {.n = 4, .start = s4, .end = e4};
    assert_true(mt_memplan_assign(&d, size, off, scratch) == big);
    /* one slot at the very top of size_t */
    size_t top[1] = {SIZE_MAX - 63};
    mt_memplan one = {.n = 1, .start = start, .end = end};
    assert_true(mt_memplan_assign(&one, top, off, scratch) == SIZE_MAX - 63);
}

/* ---- through the API ------------------------------------------------------ */

/* "# arena: A bytes (one buffer per value: U bytes)" from the plan stage. */
static void arena_of(mt_kernel *k, long long *arena, long long *unplanned) {
    const char *t = mt_kernel_dump(k, MT_STAGE_PLAN);
    assert_non_null(t);
    const char *a = strstr(t, "# arena: ");
    assert_non_null(a);
    if (sscanf(a, "# arena: %lld bytes (one buffer per value: %lld bytes)", arena, unplanned) != 2)
        fail_msg("no static arena in:\n%s", t);
}

static unsigned rng = 1;
static mt_tensor *mat(int64_t r, int64_t c, double scale) {
    int64_t shape[2] = {r, c};
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, 2, shape);
    float *p = mt_tensor_data(t);
    for (int64_t i = 0; i < r * c; i++) {
        rng = rng * 1103515245u + 12345u;
        p[i] = (float)((double)((rng >> 8) & 0xffff) / 32768.0 - 1.0) * (float)scale;
    }
    return t;
}

static mt_tensor *scalar_i64(int64_t v) {
    mt_tensor *t = mt_tensor_create(MT_INT64, 0, NULL);
    *(int64_t *)mt_tensor_data(t) = v;
    return t;
}

/* c = a @ b on doubles (n x k times k x m). */
static void dmm(const double *a, const double *b, double *c, int n, int k, int m) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            double acc = 0;
            for (int q = 0; q < k; q++) acc += a[i * k + q] * b[q * m + j];
            c[i * m + j] = acc;
        }
}

static double *to_d(const mt_tensor *t) {
    int64_t n = mt_tensor_numel(t);
    double *d = malloc(sizeof(double) * (size_t)(n ? n : 1));
    const float *p = mt_tensor_data(t);
    for (int64_t i = 0; i < n; i++) d[i] = p[i];
    return d;
}

static void assert_close(const mt_tensor *got, const double *want, int64_t n) {
    double scale = 1e-30;
    for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(want[i]));
    const float *g = mt_tensor_data(got);
    for (int64_t i = 0; i < n; i++)
        if (fabs(g[i] - want[i]) > 1e-4 * scale)
            fail_msg("element %lld: got %.9g, want %.9g", (long long)i, g[i], want[i]);
}

static mt_tensor *run(mt_kernel *k, mt_tensor **args, int nargs) {
    mt_tensor *out = NULL;
    mt_diag d;
    if (mt_kernel_run(k, args, nargs, &out, 1, &d) != MT_OK) fail_msg("run failed:\n%s", d.text);
    return out;
}

/* x @ w six times: five 32x32 intermediates, each dead once the next is
 * made, so the arena holds two of them. */
static void test_chain(void **s) {
    (void)s;
    mt_kernel *k = compile_ok(
        "def chain(x: Tensor((32, 32), \"float32\"), w: Tensor((32, 32), \"float32\")):\n"
        "    a = x @ w\n    b = a @ w\n    c = b @ w\n    d = c @ w\n    e = d @ w\n"
        "    return e @ w\n");
    long long arena, unplanned;
    arena_of(k, &arena, &unplanned);
    assert_int_equal(unplanned, 5 * 4096);
    assert_int_equal(arena, 2 * 4096);
    for (int rep = 0; rep < 3; rep++) {
        mt_tensor *args[2] = {mat(32, 32, 1), mat(32, 32, 1.0 / 32)};
        double *x = to_d(args[0]), *w = to_d(args[1]), *t = malloc(sizeof(double) * 1024);
        for (int i = 0; i < 6; i++) {
            dmm(x, w, t, 32, 32, 32);
            memcpy(x, t, sizeof(double) * 1024);
        }
        mt_tensor *out = run(k, args, 2);
        assert_close(out, x, 1024);
        free(x), free(w), free(t);
        mt_tensor_release(out);
        mt_tensor_release(args[0]);
        mt_tensor_release(args[1]);
    }
    mt_kernel_release(k);
}

/* a is read by two later kernels: it stays live until the second. */
static void test_diamond(void **s) {
    (void)s;
    mt_kernel *k = compile_ok(
        "def diamond(x: Tensor((32, 32), \"float32\"), w: Tensor((32, 32), \"float32\")):\n"
        "    a = x @ w\n    b = a @ w\n    c = a @ x\n    d = b @ c\n    e = d @ w\n"
        "    return e @ w\n");
    long long arena, unplanned;
    arena_of(k, &arena, &unplanned);
    assert_int_equal(unplanned, 5 * 4096);
    assert_int_equal(arena, 3 * 4096); /* a, b, c all live at c's kernel */
    mt_tensor *args[2] = {mat(32, 32, 1.0 / 8), mat(32, 32, 1.0 / 32)};
    double *x = to_d(args[0]), *w = to_d(args[1]);
    double *a = malloc(sizeof(double) * 1024 * 5), *b = a + 1024, *c = b + 1024, *d = c + 1024,
           *e = d + 1024;
    dmm(x, w, a, 32, 32, 32);
    dmm(a, w, b, 32, 32, 32);
    dmm(a, x, c, 32, 32, 32);
    dmm(b, c, d, 32, 32, 32);
    dmm(d, w, e, 32, 32, 32);
    dmm(e, w, a, 32, 32, 32);
    mt_tensor *out = run(k, args, 2);
    assert_close(out, a, 1024);
    free(x), free(w), free(a);
    mt_tensor_release(out);
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_kernel_release(k);
}

/* A run-time loop: `before` is last named at the top of the body, but the
 * next iteration reads it again, so the body's later temporaries must not
 * take its place (they would without widening to the loop). */
static void test_loop(void **s) {
    (void)s;
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((16, 16), \"float32\"), w: Tensor((16, 16), \"float32\"), n: int64):\n"
        "    before = x @ w\n"
        "    acc = x\n"
        "    for i in range(n):\n"
        "        t = acc @ before\n"
        "        u = t @ w\n"
        "        v = u @ w\n"
        "        acc = v + x\n"
        "    after = acc @ w\n"
        "    return after @ w\n");
    for (int64_t n = 0; n < 4; n++) {
        mt_tensor *args[3] = {mat(16, 16, 1.0 / 4), mat(16, 16, 1.0 / 16), scalar_i64(n)};
        double *x = to_d(args[0]), *w = to_d(args[1]);
        double acc[256], t[256], u[256], v[256], before[256], after[256], want[256];
        dmm(x, w, before, 16, 16, 16);
        memcpy(acc, x, sizeof acc);
        for (int64_t i = 0; i < n; i++) {
            dmm(acc, before, t, 16, 16, 16);
            dmm(t, w, u, 16, 16, 16);
            dmm(u, w, v, 16, 16, 16);
            for (int j = 0; j < 256; j++) acc[j] = v[j] + x[j];
        }
        dmm(acc, w, after, 16, 16, 16);
        dmm(after, w, want, 16, 16, 16);
        mt_tensor *out = run(k, args, 3);
        assert_close(out, want, 256);
        free(x), free(w);
        mt_tensor_release(out);
        for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
    }
    mt_kernel_release(k);
}

/* if/else on a run-time flag: each branch's temporaries, and the merged
 * value read after the if. */
static void test_if(void **s) {
    (void)s;
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((16, 16), \"float32\"), w: Tensor((16, 16), \"float32\"), n: int64):\n"
        "    a = x @ w\n"
        "    if n > 0:\n"
        "        t = a @ w\n"
        "        y = t @ w\n"
        "    else:\n"
        "        t = a @ x\n"
        "        y = t @ x\n"
        "    z = y @ a\n"
        "    return z @ w\n");
    for (int64_t n = 0; n < 2; n++) {
        mt_tensor *args[3] = {mat(16, 16, 1.0 / 4), mat(16, 16, 1.0 / 16), scalar_i64(n)};
        double *x = to_d(args[0]), *w = to_d(args[1]);
        double a[256], t[256], y[256], z[256], want[256];
        dmm(x, w, a, 16, 16, 16);
        dmm(a, n > 0 ? w : x, t, 16, 16, 16);
        dmm(t, n > 0 ? w : x, y, 16, 16, 16);
        dmm(y, a, z, 16, 16, 16);
        dmm(z, w, want, 16, 16, 16);
        mt_tensor *out = run(k, args, 3);
        assert_close(out, want, 256);
        free(x), free(w);
        mt_tensor_release(out);
        for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
    }
    mt_kernel_release(k);
}

/* Symbolic rows: planned per run, at each run's size; the caller-provided
 * result is never in the arena. */
static void test_symbolic(void **s) {
    (void)s;
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((\"n\", 32), \"float32\"), w: Tensor((32, 32), \"float32\")):\n"
        "    a = x @ w\n    b = a @ w\n    c = b @ w\n    out = c @ w\n    return out\n");
    const char *plan = mt_kernel_dump(k, MT_STAGE_PLAN);
    assert_non_null(strstr(plan, "planned per run"));
    assert_null(strstr(plan, "\n  out "));
    static const int64_t ns[] = {1, 7, 100, 0, 33};
    for (size_t r = 0; r < sizeof ns / sizeof ns[0]; r++) {
        int n = (int)ns[r];
        mt_tensor *args[2] = {mat(n, 32, 1), mat(32, 32, 1.0 / 32)};
        double *x = to_d(args[0]), *w = to_d(args[1]);
        double *t = malloc(sizeof(double) * 32 * (size_t)(n ? n : 1));
        for (int i = 0; i < 4; i++) {
            dmm(x, w, t, n, 32, 32);
            memcpy(x, t, sizeof(double) * 32 * (size_t)n);
        }
        int64_t shape[2] = {n, 32};
        mt_tensor *out = mt_tensor_create(MT_FLOAT32, 2, shape); /* the caller's slot */
        mt_diag d;
        if (mt_kernel_run(k, args, 2, &out, 1, &d) != MT_OK) fail_msg("run failed:\n%s", d.text);
        assert_close(out, x, (int64_t)n * 32);
        free(x), free(w), free(t);
        mt_tensor_release(out);
        mt_tensor_release(args[0]);
        mt_tensor_release(args[1]);
    }
    mt_kernel_release(k);
}

/* Run-time dims that make the intermediates enormous while the arguments
 * hold no data (k = 0): the run fails with MT_ERR_NOMEM, nothing is written,
 * and a normal run afterwards is fine. n = 2^58 gives four live values of
 * 2^62 bytes (the arena would pass 2^64); n = 2^59 one value past 2^62. */
static void test_huge_symbolic(void **s) {
    (void)s;
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((\"n\", \"k\"), \"float32\"), w: Tensor((\"k\", 4), \"float32\"),\n"
        "      v: Tensor((4, 4), \"float32\")):\n"
        "    a = x @ w\n    b = a @ v\n    c = b @ v\n    d = c @ v\n"
        "    return sum(a @ v + b @ v + c @ v + d @ v)\n");
    static const int64_t ns[] = {(int64_t)1 << 58, (int64_t)1 << 59, ((int64_t)1 << 58) + 1,
                                 (int64_t)1 << 60};
    for (size_t r = 0; r < sizeof ns / sizeof ns[0]; r++) {
        int64_t xs[2] = {ns[r], 0}, ws[2] = {0, 4}, vs[2] = {4, 4};
        mt_tensor *args[3] = {mt_tensor_create(MT_FLOAT32, 2, xs), mt_tensor_create(MT_FLOAT32, 2, ws),
                              mt_tensor_create(MT_FLOAT32, 2, vs)};
        mt_tensor *out = NULL;
        mt_diag d;
        mt_status st = mt_kernel_run(k, args, 3, &out, 1, &d);
        if (st != MT_ERR_NOMEM) fail_msg("n = %lld: status %d: %s", (long long)ns[r], st, d.text);
        assert_null(out);
        for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
    }
    /* and an ordinary run: x (3, 2) of ones, w ones, v identity: every
     * intermediate is 2 per entry, the sum 4 * (3 * 4 * 2) = 96 */
    int64_t xs[2] = {3, 2}, ws[2] = {2, 4}, vs[2] = {4, 4};
    mt_tensor *args[3] = {mt_tensor_create(MT_FLOAT32, 2, xs), mt_tensor_create(MT_FLOAT32, 2, ws),
                          mt_tensor_create(MT_FLOAT32, 2, vs)};
    for (int i = 0; i < 6; i++) ((float *)mt_tensor_data(args[0]))[i] = 1;
    for (int i = 0; i < 8; i++) ((float *)mt_tensor_data(args[1]))[i] = 1;
    for (int i = 0; i < 4; i++) ((float *)mt_tensor_data(args[2]))[i * 5] = 1;
    mt_tensor *out = run(k, args, 3);
    assert_float_equal(*(float *)mt_tensor_data(out), 96.0, 1e-3);
    mt_tensor_release(out);
    for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
    mt_kernel_release(k);
}

/* More values than the executor keeps on its stack (32): its tables and the
 * per-run placement come from the heap. 40 symbolic-size steps. */
static void test_long_symbolic_chain(void **s) {
    (void)s;
    enum { STEPS = 40 };
    char src[4096];
    size_t len = (size_t)snprintf(src, sizeof src,
                                  "def f(x: Tensor((\"n\", 8), \"float32\"), w: Tensor((8, 8), \"float32\")):\n"
                                  "    a0 = x @ w\n");
    for (int i = 1; i < STEPS; i++)
        len += (size_t)snprintf(src + len, sizeof src - len, "    a%d = a%d @ w\n", i, i - 1);
    snprintf(src + len, sizeof src - len, "    return a%d\n", STEPS - 1);
    mt_kernel *k = compile_ok(src);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_PLAN), "39 values"));
    for (int n = 1; n < 20; n += 9) {
        mt_tensor *args[2] = {mat(n, 8, 1), mat(8, 8, 1.0 / 4)};
        double *x = to_d(args[0]), *w = to_d(args[1]), t[8 * 20];
        for (int i = 0; i < STEPS; i++) {
            dmm(x, w, t, n, 8, 8);
            memcpy(x, t, sizeof(double) * 8 * (size_t)n);
        }
        mt_tensor *out = run(k, args, 2);
        assert_close(out, x, (int64_t)n * 8);
        free(x), free(w);
        mt_tensor_release(out);
        mt_tensor_release(args[0]);
        mt_tensor_release(args[1]);
    }
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_assign_no_overlap), cmocka_unit_test(test_assign_overflow),
        cmocka_unit_test(test_chain),
        cmocka_unit_test(test_diamond),           cmocka_unit_test(test_loop),
        cmocka_unit_test(test_if),                cmocka_unit_test(test_symbolic),
        cmocka_unit_test(test_long_symbolic_chain), cmocka_unit_test(test_huge_symbolic),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
