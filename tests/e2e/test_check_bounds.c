/*
 * test_check_bounds.c -- run-time bounds checks of hand-written loop
 * functions (mt_compile_options.check_bounds, passes/tir/check_bounds.c).
 *
 * Kernels whose indices depend on a run-time scalar, on a symbolic dim or
 * on loaded values read or write outside their buffers: with the option
 * the run fails with MT_ERR_RUNTIME and a message naming the buffer, the
 * index, the shape and the place, and the guard words around every buffer
 * (they live inside one larger array) are untouched. In-bounds runs give
 * the plain C loops' values; proven accesses get no check; a provable
 * out-of-bounds access is still a compile error; a prefetch's element is
 * not an access (its index's loads are); a real GPU refuses the option and
 * the emulated one honours it.
 */
#include <stdlib.h>

#include "test_util.h"

enum { GUARD = 16 };
static const float SENTINEL = -12345.0f;

/* A float32 buffer of n elements between GUARD sentinel words on each side. */
typedef struct guarded {
    float *mem;    /* GUARD + n + GUARD */
    int64_t n;
    mt_tensor *t;  /* wraps mem + GUARD */
} guarded;

static guarded guarded_new(int ndim, const int64_t *shape) {
    guarded g;
    g.n = 1;
    for (int i = 0; i < ndim; i++) g.n *= shape[i];
    g.mem = malloc(sizeof(float) * (size_t)(g.n + 2 * GUARD));
    for (int64_t i = 0; i < g.n + 2 * GUARD; i++) g.mem[i] = SENTINEL;
    for (int64_t i = 0; i < g.n; i++) g.mem[GUARD + i] = (float)i;
    g.t = mt_tensor_wrap(g.mem + GUARD, MT_FLOAT32, ndim, shape, NULL);
    return g;
}

static float *data(guarded *g) { return g->mem + GUARD; }

static void assert_guards(const guarded *g) {
    for (int i = 0; i < GUARD; i++) {
        assert_true(g->mem[i] == SENTINEL);
        assert_true(g->mem[GUARD + g->n + i] == SENTINEL);
    }
}

static void guarded_free(guarded *g) {
    mt_tensor_release(g->t);
    free(g->mem);
}

static mt_tensor *scalar_i64(int64_t v) {
    mt_tensor *t = mt_tensor_create(MT_INT64, 0, NULL);
    *(int64_t *)mt_tensor_data(t) = v;
    return t;
}

static mt_kernel *compile_checked(const char *src, int check) {
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.filename = "check.py";
    o.check_bounds = check;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &d);
    if (!k) fail_msg("compile failed:\n%s", d.text);
    return k;
}

static void assert_oob(mt_status st, const mt_diag *d, const char *message, int line, int col) {
    assert_int_equal(st, MT_ERR_RUNTIME);
    assert_int_equal(d->status, MT_ERR_RUNTIME);
    assert_string_equal(d->message, message);
    assert_int_equal(d->line, line);
    assert_int_equal(d->col, col);
    char place[64];
    snprintf(place, sizeof place, "check.py:%d:%d: error: ", line, col);
    if (!strstr(d->text, place)) fail_msg("no '%s' in:\n%s", place, d->text);
}

/* ---- a load at an offset read at run time ---------------------------------- */

static const char shift_src[] =
    "@T.prim_func\n"
    "def shift(x: T.Buffer((\"n\",), \"float32\"), w: T.Buffer((\"m\",), \"float32\"),\n"
    "          k: T.Buffer((), \"int64\"), y: T.Buffer((\"m\",), \"float32\")):\n"
    "    for i in range(m):\n"
    "        y[i] = x[i + k[()]] + w[i]\n";

static mt_status run_shift(mt_kernel *k, int64_t off, guarded *x, guarded *w, guarded *y, mt_diag *d) {
    mt_tensor *kt = scalar_i64(off);
    mt_tensor *args[3] = {x->t, w->t, kt};
    mt_tensor *res[1] = {y->t};
    mt_status st = mt_kernel_run(k, args, 3, res, 1, d);
    mt_tensor_release(kt);
    return st;
}

static void test_load_runtime_offset(void **state) {
    (void)state;
    mt_kernel *k = compile_checked(shift_src, 1);
    int64_t n = 10, m = 8;
    guarded x = guarded_new(1, &n), w = guarded_new(1, &m), y = guarded_new(1, &m);
    mt_diag d;
    assert_int_equal(run_shift(k, 2, &x, &w, &y, &d), MT_OK); /* x[2..9]: the last element */
    for (int i = 0; i < m; i++) assert_true(data(&y)[i] == (float)(i + 2) + (float)i);
    for (int64_t off = 3; off <= 4; off++) {
        mt_status st = run_shift(k, off, &x, &w, &y, &d);
        char want[128];
        snprintf(want, sizeof want, "out-of-bounds load from 'x': index (%lld,) is outside its shape (10,)",
                 (long long)(m - 1 + off));
        assert_oob(st, &d, want, 5, 16);
    }
    assert_oob(run_shift(k, -1, &x, &w, &y, &d), &d,
               "out-of-bounds load from 'x': index (-1,) is outside its shape (10,)", 5, 16);
    assert_guards(&x), assert_guards(&w), assert_guards(&y);
    /* the same kernel still runs after a failed run */
    assert_int_equal(run_shift(k, 0, &x, &w, &y, &d), MT_OK);
    for (int i = 0; i < m; i++) assert_true(data(&y)[i] == (float)(2 * i));
    guarded_free(&x), guarded_free(&w), guarded_free(&y);
    mt_kernel_release(k);
}

/* The check is one test in front of the loop, not one per iteration. */
static void test_check_hoisted(void **state) {
    (void)state;
    mt_kernel *k = compile_checked(shift_src, 1);
    const char *tir = mt_kernel_dump(k, MT_STAGE_TIR);
    const char *check = strstr(tir, "T.check_bounds(");
    const char *loop = strstr(tir, "for i in range(m)");
    assert_non_null(check);
    assert_non_null(loop);
    assert_true(check < loop);
    assert_null(strstr(check + 1, "T.check_bounds(")); /* w[i], y[i]: proven */
    assert_non_null(strstr(check, "\"load\", \"x\""));
    mt_kernel_release(k);
    /* without the option: no check */
    k = compile_checked(shift_src, 0);
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR), "T.check_bounds"));
    mt_kernel_release(k);
}

/* A check carried out of a loop takes the loop's ends into everything it
 * names: the extents of the loops it passed (a let's value, m = 7 - i, in
 * the guard `m <= 0 or ...`; it left 'm' outside its scope, an internal
 * error under the verifier). */
static void test_hoist_keeps_scope(void **state) {
    (void)state;
    mt_kernel *k = compile_checked("@T.prim_func\n"
                                   "def f(A: T.Buffer((\"n\",), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
                                   "    for i in range(8):\n"
                                   "        m = 7 - i\n"
                                   "        for j in range(m):\n"
                                   "            B[i] = A[j]\n",
                                   1);
    mt_diag d;
    int64_t n = 7, nb = 8;
    guarded a = guarded_new(1, &n), b = guarded_new(1, &nb);
    mt_tensor *args[1] = {a.t}, *res[1] = {b.t};
    assert_int_equal(mt_kernel_run(k, args, 1, res, 1, &d), MT_OK);
    for (int i = 0; i < 7; i++) assert_true(data(&b)[i] == (float)(6 - i));
    guarded_free(&a);
    n = 6;
    a = guarded_new(1, &n);
    args[0] = a.t;
    assert_oob(mt_kernel_run(k, args, 1, res, 1, &d), &d,
               "out-of-bounds load from 'A': index (6,) is outside its shape (6,)", 6, 20);
    assert_guards(&a), assert_guards(&b);
    guarded_free(&a), guarded_free(&b);
    mt_kernel_release(k);
    /* a buffer shaped by a loop (t of i + 1 elements) is refused: passes
     * substitute loops in statements, not in shapes */
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.check_bounds = 1;
    assert_null(mt_jit_compile(test_ctx,
                               "@T.prim_func\n"
                               "def f(B: T.Buffer((\"n\",), \"float32\"), A: T.Buffer((8,), \"float32\")):\n"
                               "    for i in range(8):\n"
                               "        t = T.alloc_buffer((i + 1,), \"float32\")\n"
                               "        for j in range(n):\n"
                               "            t[j] = B[j]\n"
                               "        A[i] = t[0]\n",
                               &o, &d));
    assert_int_equal(d.status, MT_ERR_TYPE);
    assert_non_null(strstr(d.message, "the shape of 't' uses loop variable 'i'"));
    assert_int_equal(d.line, 4);
    /* an index that loads a buffer allocated inside the loop: the check
     * stays inside the allocation (tests/fuzz/regressions/check_bounds_local_index.py) */
    k = compile_checked("@T.prim_func\n"
                        "def f(X: T.Buffer((16,), \"float32\")):\n"
                        "    for l in range(8):\n"
                        "        t = T.alloc_buffer((1,), \"int64\")\n"
                        "        with T.block(\"a\"):\n"
                        "            vl = T.axis.spatial(8, l)\n"
                        "            X[vl + t[0]] = T.float32(1)\n",
                        1);
    const char *tir = mt_kernel_dump(k, MT_STAGE_TIR);
    const char *al = strstr(tir, "t = T.alloc_buffer"), *ck = strstr(tir, "T.check_bounds(");
    if (!al || !ck || ck < al) fail_msg("the check left t's allocation:\n%s", tir);
    mt_kernel_release(k); /* (not run: t is never written, its value undefined) */
}

/* ---- a check in front of a matmul ------------------------------------------ */

static const char mm_off_src[] =
    "@T.prim_func\n"
    "def mm_off(A: T.Buffer((\"M\", \"KA\"), \"float32\"), B: T.Buffer((\"K\", \"N\"), \"float32\"),\n"
    "           s: T.Buffer((), \"int64\"), C: T.Buffer((\"M\", \"N\"), \"float32\")):\n"
    "    for i, j, k in T.grid(M, N, K):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = 0.0\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk + s[()]] * B[vk, vj]\n";

static mt_status run_mm_off(mt_kernel *k, int64_t off, guarded *a, guarded *b, guarded *c, mt_diag *d) {
    mt_tensor *st = scalar_i64(off);
    mt_tensor *args[3] = {a->t, b->t, st};
    mt_tensor *res[1] = {c->t};
    mt_status r = mt_kernel_run(k, args, 3, res, 1, d);
    mt_tensor_release(st);
    return r;
}

/* The check the pass hoists in front of the nest does not keep the matmul
 * rule from taking it (it was the 90x slow path): the rule's kernel runs,
 * right, with the check in front, which still stops an out-of-bounds run. */
static void test_check_before_matmul(void **state) {
    (void)state;
    if (test_gpu_target()) {
        print_message("skipped under target cuda: the CPU matmul rule\n");
        skip();
    }
    mt_kernel *k = compile_checked(mm_off_src, 1);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_SCHEDULE), "# mm_off: the default rule schedule_matmul"));
    const char *code = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(code, "T.check_bounds("));
    int64_t m = 37, ka = 70, kk = 65, n = 41;
    int64_t sa[2] = {m, ka}, sb[2] = {kk, n}, sc[2] = {m, n};
    guarded a = guarded_new(2, sa), b = guarded_new(2, sb), c = guarded_new(2, sc);
    for (int64_t i = 0; i < a.n; i++) data(&a)[i] = (float)(i % 7) - 3.0f;
    for (int64_t i = 0; i < b.n; i++) data(&b)[i] = (float)(i % 5) - 2.0f;
    mt_diag d;
    for (int64_t off = 0; off <= ka - kk; off++) {
        assert_int_equal(run_mm_off(k, off, &a, &b, &c, &d), MT_OK);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double ref = 0;
                for (int64_t q = 0; q < kk; q++) ref += (double)data(&a)[i * ka + q + off] * data(&b)[q * n + j];
                assert_true(data(&c)[i * n + j] == (float)ref); /* small integers: exact */
            }
    }
    mt_status st = run_mm_off(k, ka - kk + 1, &a, &b, &c, &d);
    assert_int_equal(st, MT_ERR_RUNTIME);
    assert_non_null(strstr(d.message, "out-of-bounds load from 'A'"));
    assert_guards(&a), assert_guards(&b), assert_guards(&c);
    guarded_free(&a), guarded_free(&b), guarded_free(&c);
    mt_kernel_release(k);
}

/* ---- unproven accesses are checked without the option ------------------------ */

/* x[i // 2 + i % 3] over x of 4 for i < 10: interval arithmetic says [0, 6]
 * (not provably out: it compiles), and i = 9 reads x[4]. Without
 * check_bounds the function is still checked (mt_tfunc.unproven): the run
 * stops with MT_ERR_RUNTIME instead of reading past x. */
static void test_unproven_checked_by_default(void **state) {
    (void)state;
    mt_kernel *k = compile_checked("@T.prim_func\n"
                                   "def f(x: T.Buffer((4,), \"float32\"), y: T.Buffer((10,), \"float32\")):\n"
                                   "    for i in range(10):\n"
                                   "        y[i] = x[i // 2 + i % 3]\n",
                                   0);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR), "T.check_bounds("));
    int64_t four = 4, ten = 10;
    guarded x = guarded_new(1, &four), y = guarded_new(1, &ten);
    mt_tensor *args[1] = {x.t};
    mt_tensor *res[1] = {y.t};
    mt_diag d;
    mt_status st = mt_kernel_run(k, args, 1, res, 1, &d);
    assert_int_equal(st, MT_ERR_RUNTIME);
    assert_non_null(strstr(d.message, "out-of-bounds load from 'x'"));
    assert_guards(&x), assert_guards(&y);
    guarded_free(&x), guarded_free(&y);
    mt_kernel_release(k);
}

/* A block variable whose bound value leaves its declared domain: the
 * accesses are proven over the domain [0, 60), but i0 * 16 + i1 reaches 63.
 * The function is checked at run time without the option too. */
static void test_binding_outside_domain(void **state) {
    (void)state;
    mt_kernel *k = compile_checked("@T.prim_func\n"
                                   "def f(x: T.Buffer((60,), \"float32\"), y: T.Buffer((60,), \"float32\")):\n"
                                   "    for i0, i1 in T.grid(4, 16):\n"
                                   "        with T.block(\"b\"):\n"
                                   "            vi = T.axis.spatial(60, i0 * 16 + i1)\n"
                                   "            y[vi] = x[vi]\n",
                                   0);
    int64_t sixty = 60;
    guarded x = guarded_new(1, &sixty), y = guarded_new(1, &sixty);
    mt_tensor *args[1] = {x.t};
    mt_tensor *res[1] = {y.t};
    mt_diag d;
    mt_status st = mt_kernel_run(k, args, 1, res, 1, &d);
    assert_int_equal(st, MT_ERR_RUNTIME);
    assert_non_null(strstr(d.message, "index (63,) is outside its shape (60,)"));
    assert_guards(&x), assert_guards(&y);
    guarded_free(&x), guarded_free(&y);
    mt_kernel_release(k);
}

/* ---- a store past a symbolic dim ----------------------------------------------- */

static void test_store_symbolic_dim(void **state) {
    (void)state;
    static const char src[] =
        "@T.prim_func\n"
        "def pad(x: T.Buffer((\"n\",), \"float32\"), w: T.Buffer((\"m\",), \"float32\"),\n"
        "        y: T.Buffer((\"m\",), \"float32\")):\n"
        "    for i in range(n):\n"
        "        y[i + 2] = x[i] + w[i + 2]\n";
    mt_kernel *k = compile_checked(src, 1);
    int64_t n = 6, m = 8;
    guarded x = guarded_new(1, &n), w = guarded_new(1, &m), y = guarded_new(1, &m);
    mt_tensor *args[2] = {x.t, w.t};
    mt_tensor *res[1] = {y.t};
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args, 2, res, 1, &d), MT_OK);
    for (int i = 0; i < n; i++) assert_true(data(&y)[i + 2] == (float)i + (float)(i + 2));
    guarded_free(&x);
    n = 7; /* y[2 + 6] = y[8]: one past the end (w[8] too: the load is reported first) */
    x = guarded_new(1, &n);
    args[0] = x.t;
    for (int i = 0; i < m; i++) data(&y)[i] = 7.0f;
    assert_oob(mt_kernel_run(k, args, 2, res, 1, &d), &d,
               "out-of-bounds load from 'w': index (8,) is outside its shape (8,)", 5, 27);
    for (int i = 0; i < m; i++) assert_true(data(&y)[i] == 7.0f); /* stopped before the loop */
    assert_guards(&x), assert_guards(&w), assert_guards(&y);
    guarded_free(&x), guarded_free(&w), guarded_free(&y);
    mt_kernel_release(k);
}

static void test_store_reported(void **state) {
    (void)state;
    static const char src[] =
        "@T.prim_func\n"
        "def put(x: T.Buffer((\"n\",), \"float32\"), k: T.Buffer((), \"int64\"),\n"
        "        y: T.Buffer((\"n\",), \"float32\")):\n"
        "    for i in range(n):\n"
        "        y[i] = x[i]\n"
        "    y[k[()]] = -1.0\n";
    mt_kernel *k = compile_checked(src, 1);
    int64_t n = 5;
    guarded x = guarded_new(1, &n), y = guarded_new(1, &n);
    mt_tensor *kt = scalar_i64(5);
    mt_tensor *args[2] = {x.t, kt};
    mt_tensor *res[1] = {y.t};
    mt_diag d;
    assert_oob(mt_kernel_run(k, args, 2, res, 1, &d), &d,
               "out-of-bounds store to 'y': index (5,) is outside its shape (5,)", 6, 5);
    assert_guards(&x), assert_guards(&y);
    for (int i = 0; i < n; i++) assert_true(data(&y)[i] == (float)i); /* the loop ran before */
    *(int64_t *)mt_tensor_data(kt) = 4;
    assert_int_equal(mt_kernel_run(k, args, 2, res, 1, &d), MT_OK);
    assert_true(data(&y)[4] == -1.0f);
    mt_tensor_release(kt);
    guarded_free(&x), guarded_free(&y);
    mt_kernel_release(k);
}

/* ---- two dims, blocks ------------------------------------------------------------ */

static void test_two_dims_block(void **state) {
    (void)state;
    static const char src[] =
        "@T.prim_func\n"
        "def tr(x: T.Buffer((\"r\", \"c\"), \"float32\"), s: T.Buffer((), \"int64\"),\n"
        "       y: T.Buffer((\"r\", \"c\"), \"float32\")):\n"
        "    for i, j in T.grid(r, c):\n"
        "        with T.block(\"t\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            y[vi, vj] = x[vi, vj + s[()]]\n";
    mt_kernel *k = compile_checked(src, 1);
    int64_t shape[2] = {3, 4};
    guarded x = guarded_new(2, shape), y = guarded_new(2, shape);
    mt_tensor *st = scalar_i64(1);
    mt_tensor *args[2] = {x.t, st};
    mt_tensor *res[1] = {y.t};
    mt_diag d;
    assert_oob(mt_kernel_run(k, args, 2, res, 1, &d), &d,
               "out-of-bounds load from 'x': index (2, 4) is outside its shape (3, 4)", 7, 25);
    *(int64_t *)mt_tensor_data(st) = 0;
    assert_int_equal(mt_kernel_run(k, args, 2, res, 1, &d), MT_OK);
    for (int i = 0; i < 12; i++) assert_true(data(&y)[i] == (float)i);
    assert_guards(&x), assert_guards(&y);
    mt_tensor_release(st);
    guarded_free(&x), guarded_free(&y);
    mt_kernel_release(k);
}

/* ---- a gather in a parallel loop: checked per iteration, chunks stop ----------- */

static const char gather_src[] =
    "@T.prim_func\n"
    "def gather(x: T.Buffer((\"n\",), \"float32\"), idx: T.Buffer((\"m\",), \"int64\"),\n"
    "           y: T.Buffer((\"m\",), \"float32\")):\n"
    "    for i in T.parallel(m):\n"
    "        y[i] = x[idx[i]]\n";

static void test_parallel_gather(void **state) {
    (void)state;
    mt_kernel *k = compile_checked(gather_src, 1);
    int64_t n = 1000, m = 1 << 16;
    guarded x = guarded_new(1, &n), y = guarded_new(1, &m);
    mt_tensor *it = mt_tensor_create(MT_INT64, 1, &m);
    int64_t *ix = mt_tensor_data(it);
    for (int64_t i = 0; i < m; i++) ix[i] = (i * 7) % n;
    mt_tensor *args[2] = {x.t, it};
    mt_tensor *res[1] = {y.t};
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args, 2, res, 1, &d), MT_OK);
    for (int64_t i = 0; i < m; i++) assert_true(data(&y)[i] == (float)((i * 7) % n));
    ix[m / 2 + 3] = n + GUARD / 2; /* inside the guard words */
    assert_oob(mt_kernel_run(k, args, 2, res, 1, &d), &d,
               "out-of-bounds load from 'x': index (1008,) is outside its shape (1000,)", 5, 16);
    ix[m / 2 + 3] = 0;
    ix[m - 1] = -3;
    assert_oob(mt_kernel_run(k, args, 2, res, 1, &d), &d,
               "out-of-bounds load from 'x': index (-3,) is outside its shape (1000,)", 5, 16);
    assert_guards(&x), assert_guards(&y);
    mt_tensor_release(it);
    guarded_free(&x), guarded_free(&y);
    mt_kernel_release(k);
}

/* An index whose load hides in a T.Shuffle is read from memory the loop
 * writes: its check stays in the loop (it was hoisted before the loop,
 * past the stores that change it, and the run read x[80..140] unchecked). */
static void test_shuffle_index_not_hoisted(void **state) {
    (void)state;
    mt_kernel *k = compile_checked("@T.prim_func\n"
                                   "def f(x: T.Buffer((64,), \"float32\"), k: T.Buffer((2,), \"int64\"),\n"
                                   "      s: T.Buffer((8,), \"float32\")):\n"
                                   "    for i in range(8):\n"
                                   "        k[0] = i * 20\n"
                                   "        s[i] = x[T.Shuffle([k[T.Ramp(0, 1, 2)]], [0])]\n",
                                   1);
    const char *tir = mt_kernel_dump(k, MT_STAGE_TIR);
    const char *loop = strstr(tir, "for i in range(8)"), *check = strstr(tir, "T.check_bounds(");
    assert_non_null(loop);
    assert_non_null(check);
    assert_true(check > loop);
    int64_t n = 64, two = 2, eight = 8;
    guarded x = guarded_new(1, &n), kk = guarded_new(1, &two), s = guarded_new(1, &eight);
    mt_tensor *kt = mt_tensor_create(MT_INT64, 1, &two); /* k and s: the results */
    mt_tensor *args[1] = {x.t};
    mt_tensor *res[2] = {kt, s.t};
    mt_diag d;
    assert_oob(mt_kernel_run(k, args, 1, res, 2, &d), &d,
               "out-of-bounds load from 'x': index (80,) is outside its shape (64,)", 6, 16);
    for (int i = 0; i < 4; i++) assert_true(data(&s)[i] == (float)(i * 20));
    assert_guards(&x), assert_guards(&s);
    mt_tensor_release(kt);
    guarded_free(&x), guarded_free(&kk), guarded_free(&s);
    mt_kernel_release(k);
}

/* A store through an index read from memory, in a parallel loop. */
static void test_parallel_scatter(void **state) {
    (void)state;
    static const char src[] =
        "@T.prim_func\n"
        "def scatter(x: T.Buffer((\"m\",), \"float32\"), idx: T.Buffer((\"m\",), \"int64\"),\n"
        "            w: T.Buffer((\"n\",), \"float32\"), y: T.Buffer((\"n\",), \"float32\")):\n"
        "    for i in T.parallel(m):\n"
        "        y[idx[i]] = x[i] + w[idx[i] % n]\n";
    mt_kernel *k = compile_checked(src, 1);
    int64_t n = 4096, m = 4096;
    guarded x = guarded_new(1, &m), w = guarded_new(1, &n), y = guarded_new(1, &n);
    mt_tensor *it = mt_tensor_create(MT_INT64, 1, &m);
    int64_t *ix = mt_tensor_data(it);
    for (int64_t i = 0; i < m; i++) ix[i] = m - 1 - i;
    ix[100] = n; /* one past the end */
    mt_tensor *args[3] = {x.t, it, w.t};
    mt_tensor *res[1] = {y.t};
    mt_diag d;
    assert_oob(mt_kernel_run(k, args, 3, res, 1, &d), &d,
               "out-of-bounds store to 'y': index (4096,) is outside its shape (4096,)", 5, 9);
    assert_guards(&x), assert_guards(&w), assert_guards(&y);
    mt_tensor_release(it);
    guarded_free(&x), guarded_free(&w), guarded_free(&y);
    mt_kernel_release(k);
}

/* ---- a heap scratch buffer is freed when the kernel stops (ASan: no leak) ---- */

static void test_stop_frees_scratch(void **state) {
    (void)state;
    static const char src[] =
        "@T.prim_func\n"
        "def scratch(x: T.Buffer((\"n\",), \"float32\"), k: T.Buffer((), \"int64\"),\n"
        "            y: T.Buffer((\"n\",), \"float32\")):\n"
        "    t = T.alloc_buffer((n,), \"float32\")\n"
        "    for i in range(n):\n"
        "        t[i] = x[i] * 2.0\n"
        "    for i in range(n):\n"
        "        y[i] = t[i] + x[k[()]]\n";
    mt_kernel *k = compile_checked(src, 1);
    int64_t n = 64;
    guarded x = guarded_new(1, &n), y = guarded_new(1, &n);
    mt_tensor *kt = scalar_i64(n);
    mt_tensor *args[2] = {x.t, kt};
    mt_tensor *res[1] = {y.t};
    mt_diag d;
    assert_oob(mt_kernel_run(k, args, 2, res, 1, &d), &d,
               "out-of-bounds load from 'x': index (64,) is outside its shape (64,)", 8, 23);
    *(int64_t *)mt_tensor_data(kt) = 1;
    assert_int_equal(mt_kernel_run(k, args, 2, res, 1, &d), MT_OK);
    for (int i = 0; i < n; i++) assert_true(data(&y)[i] == 2.0f * (float)i + 1.0f);
    assert_guards(&x), assert_guards(&y);
    mt_tensor_release(kt);
    guarded_free(&x), guarded_free(&y);
    mt_kernel_release(k);
}

/* ---- what is proven needs no check -------------------------------------------- */

static void test_proven_no_checks(void **state) {
    (void)state;
    static const char *const srcs[] = {
        /* elementwise over symbolic dims */
        "@T.prim_func\n"
        "def ew(x: T.Buffer((\"n\",), \"float32\"), y: T.Buffer((\"n\",), \"float32\"),\n"
        "       z: T.Buffer((\"n\",), \"float32\")):\n"
        "    for i in T.parallel(n):\n"
        "        z[i] = x[i] + y[i]\n",
        /* matmul over symbolic dims */
        "@T.prim_func\n"
        "def mm(A: T.Buffer((\"M\", \"K\"), \"float32\"), B: T.Buffer((\"K\", \"N\"), \"float32\"),\n"
        "       C: T.Buffer((\"M\", \"N\"), \"float32\")):\n"
        "    for i, j, k in T.grid(M, N, K):\n"
        "        with T.block(\"C\"):\n"
        "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
        "            with T.init():\n"
        "                C[vi, vj] = 0.0\n"
        "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
        /* a stencil guarded by constant bounds, a flattened 2-D index */
        "@T.prim_func\n"
        "def st(x: T.Buffer((16,), \"float32\"), y: T.Buffer((4, 4), \"float32\"),\n"
        "       z: T.Buffer((14,), \"float32\")):\n"
        "    for i in range(14):\n"
        "        z[i] = x[i] + x[i + 2] + y[i // 4, i % 4]\n",
        "@T.prim_func\n"
        "def fl(x: T.Buffer((\"r\", \"c\"), \"float32\"), y: T.Buffer((\"r\", \"c\"), \"float32\")):\n"
        "    for i in range(r):\n"
        "        for j in range(c):\n"
        "            y[i, j] = x[r - 1 - i, c - 1 - j]\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        mt_kernel *k = compile_checked(srcs[i], 1);
        const char *tir = mt_kernel_dump(k, MT_STAGE_TIR);
        if (strstr(tir, "T.check_bounds")) fail_msg("a check in:\n%s", tir);
        mt_kernel_release(k);
    }
}

/* ---- graph functions are not checked ------------------------------------------ */

static void test_graph_functions_unchecked(void **state) {
    (void)state;
    static const char src[] =
        "@T.prim_func\n"
        "def twice(x: T.Buffer((\"n\",), \"float32\"), k: T.Buffer((), \"int64\"),\n"
        "          y: T.Buffer((\"n\",), \"float32\")):\n"
        "    for i in range(n):\n"
        "        y[i] = x[(i + k[()]) % n] * 2.0\n"
        "\n"
        "def main(a: Tensor((\"n\",), \"float32\"), k: Tensor((), \"int64\")):\n"
        "    b = a + 1.0\n"
        "    return twice(b, k) * a\n";
    mt_kernel *k = compile_checked(src, 1);
    const char *tir = mt_kernel_dump(k, MT_STAGE_TIR);
    /* (i + k) % n is in [0, n) when n > 0: floormod is in bounds, but only
     * when the divisor is the dim; it is checked (not proven) here */
    const char *fn = strstr(tir, "def twice");
    assert_non_null(fn);
    const char *next = strstr(fn + 1, "@T.prim_func");
    const char *chk = strstr(tir, "T.check_bounds");
    assert_non_null(chk);
    assert_true(chk > fn && (!next || chk < next)); /* only in the hand-written one */
    int64_t n = 6;
    mt_tensor *a = mt_tensor_create(MT_FLOAT32, 1, &n), *kt = scalar_i64(3), *out = NULL;
    float *ap = mt_tensor_data(a);
    for (int i = 0; i < n; i++) ap[i] = (float)i;
    mt_tensor *args[2] = {a, kt};
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args, 2, &out, 1, &d), MT_OK);
    const float *o = mt_tensor_data(out);
    for (int i = 0; i < n; i++) assert_true(o[i] == 2.0f * ((float)((i + 3) % n) + 1.0f) * (float)i);
    mt_tensor_release(out), mt_tensor_release(a), mt_tensor_release(kt);
    mt_kernel_release(k);
}

/* ---- the compile-time proof still refuses provable cases ------------------------ */

static void test_provable_still_compile_error(void **state) {
    (void)state;
    static const char src[] =
        "@T.prim_func\n"
        "def f(x: T.Buffer((4,), \"float32\"), y: T.Buffer((4,), \"float32\")):\n"
        "    for i in range(4):\n"
        "        y[i] = x[i + 1]\n";
    for (int check = 0; check <= 1; check++) {
        mt_compile_options o;
        mt_compile_options_init(&o);
        o.filename = "check.py";
        o.check_bounds = check;
        mt_diag d;
        mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &d);
        assert_null(k);
        assert_int_equal(d.status, MT_ERR_SHAPE);
        assert_int_equal(d.line, 4);
        assert_int_equal(d.col, 20);
        assert_string_equal(d.message,
                            "index 'i + 1' ranges over [1, 5), out of bounds for dim 0 of 'x' (size 4)");
    }
}

/* ---- prefetches ------------------------------------------------------------------ */

/* A prefetch reads nothing: its element may lie past its buffer (the
 * provable x[i + 4] of a 4-element x compiles, and no check stops the
 * runs), while a load in its index is an access like any other: idx[i + 1]
 * past idx stops the run, and so does a provable one at compile time. */
static void test_prefetch_not_checked(void **state) {
    (void)state;
    static const char pf_src[] =
        "@T.prim_func\n"
        "def pf(x: T.Buffer((4,), \"float32\"), idx: T.Buffer((\"m\",), \"int64\"), y: T.Buffer((\"m\",), \"float32\")):\n"
        "    for i in range(m):\n"
        "        T.prefetch(x[i + 4])\n"
        "        T.evaluate(T.prefetch(x[idx[i] + 1000]))\n"
        "        y[i] = x[idx[i]]\n";
    static const char pf_idx_src[] =
        "@T.prim_func\n"
        "def pf(x: T.Buffer((4,), \"float32\"), idx: T.Buffer((\"m\",), \"int64\"), y: T.Buffer((\"m\",), \"float32\")):\n"
        "    for i in range(m):\n"
        "        T.prefetch(x[idx[i + 1]])\n"
        "        y[i] = x[idx[i]]\n";
    int64_t n = 4, m = 6;
    mt_tensor *it = mt_tensor_create(MT_INT64, 1, &m);
    for (int i = 0; i < m; i++) ((int64_t *)mt_tensor_data(it))[i] = (i * 3) % n;
    guarded x = guarded_new(1, &n), y = guarded_new(1, &m);
    mt_tensor *args[2] = {x.t, it};
    mt_tensor *res[1] = {y.t};
    mt_diag d;
    for (int check = 0; check <= 1; check++) {
        mt_kernel *k = compile_checked(pf_src, check);
        assert_int_equal(mt_kernel_run(k, args, 2, res, 1, &d), MT_OK);
        for (int i = 0; i < m; i++) assert_true(data(&y)[i] == (float)((i * 3) % n));
        if (!test_gpu_target() && !strstr(mt_kernel_dump(k, MT_STAGE_LLVM), "call void @llvm.prefetch"))
            fail_msg("no llvm.prefetch in:\n%s", mt_kernel_dump(k, MT_STAGE_LLVM));
        const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED), *c1 = strstr(t, "T.check_bounds(");
        if (check ? !c1 || strstr(c1 + 1, "T.check_bounds(") || !strstr(c1, "\"x\", (idx[i],)") : c1 != NULL)
            fail_msg("expected %s check, of x[idx[i]] (the prefetches are not checked):\n%s", check ? "one" : "no", t);
        mt_kernel_release(k);
    }
    mt_kernel *k = compile_checked(pf_idx_src, 1);
    assert_oob(mt_kernel_run(k, args, 2, res, 1, &d), &d,
               "out-of-bounds load from 'idx': index (6,) is outside its shape (6,)", 4, 22);
    mt_kernel_release(k);
    assert_guards(&x), assert_guards(&y);
    guarded_free(&x), guarded_free(&y);
    mt_tensor_release(it);
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.filename = "check.py";
    assert_null(mt_jit_compile(test_ctx,
                               "@T.prim_func\n"
                               "def f(x: T.Buffer((4,), \"float32\"), idx: T.Buffer((4,), \"int64\"), y: T.Buffer((4,), \"float32\")):\n"
                               "    for i in range(4):\n"
                               "        T.prefetch(x[idx[i + 1]])\n"
                               "        y[i] = x[i]\n",
                               &o, &d));
    assert_int_equal(d.status, MT_ERR_SHAPE);
    assert_string_equal(d.message, "index 'i + 1' ranges over [1, 5), out of bounds for dim 0 of 'idx' (size 4)");
}

/* A prefetch of a buffer whose producer is inlined is dropped: the
 * producer's value in its place would read idx[j + 1] (past idx at j = 7)
 * for real, and would not parse back. */
static void test_prefetch_inlined_dropped(void **state) {
    (void)state;
    static const char src[] =
        "@T.prim_func\n"
        "def f(a: T.Buffer((8,), \"float32\"), idx: T.Buffer((8,), \"int64\"), y: T.Buffer((8,), \"float32\")):\n"
        "    b = T.alloc_buffer((8,), \"float32\")\n"
        "    for i in range(8):\n"
        "        with T.block(\"p\"):\n"
        "            vi = T.axis.spatial(8, i)\n"
        "            b[vi] = a[idx[vi]] * 2.0\n"
        "    for j in range(8):\n"
        "        with T.block(\"c\"):\n"
        "            vj = T.axis.spatial(8, j)\n"
        "            T.prefetch(b[vj + 1])\n"
        "            y[vj] = b[vj]\n";
    mt_kernel *k = compile_checked(src, 0);
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR);
    if (strstr(t, "T.prefetch(") || strstr(t, "vj + 1")) fail_msg("the prefetch of b was kept:\n%s", t);
    mt_kernel *k2 = compile_checked(t, 0);
    assert_string_equal(mt_kernel_dump(k2, MT_STAGE_TIR), t);
    mt_kernel_release(k2);
    int64_t n = 8;
    mt_tensor *x = mt_tensor_create(MT_FLOAT32, 1, &n), *it = mt_tensor_create(MT_INT64, 1, &n), *out = NULL;
    for (int i = 0; i < 8; i++) ((float *)mt_tensor_data(x))[i] = (float)i, ((int64_t *)mt_tensor_data(it))[i] = 7 - i;
    mt_tensor *args[2] = {x, it};
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args, 2, &out, 1, &d), MT_OK);
    for (int i = 0; i < 8; i++) assert_true(((float *)mt_tensor_data(out))[i] == 2.0f * (float)(7 - i));
    mt_tensor_release(out), mt_tensor_release(x), mt_tensor_release(it);
    mt_kernel_release(k);
}

/* ---- the dump parses back -------------------------------------------------------- */

static void test_dump_round_trip(void **state) {
    (void)state;
    mt_kernel *k = compile_checked(shift_src, 1);
    const char *tir = mt_kernel_dump(k, MT_STAGE_TIR);
    mt_kernel *k2 = compile_checked(tir, 0);
    assert_string_equal(mt_kernel_dump(k2, MT_STAGE_TIR), tir);
    int64_t n = 10, m = 8;
    guarded x = guarded_new(1, &n), w = guarded_new(1, &m), y = guarded_new(1, &m);
    mt_diag d;
    assert_int_equal(run_shift(k2, 3, &x, &w, &y, &d), MT_ERR_RUNTIME);
    assert_string_equal(d.message, "out-of-bounds load from 'x': index (10,) is outside its shape (10,)");
    assert_guards(&x), assert_guards(&y);
    guarded_free(&x), guarded_free(&w), guarded_free(&y);
    mt_kernel_release(k2);
    mt_kernel_release(k);
}

/* ---- targets ----------------------------------------------------------------------- */

static void test_cuda_refused(void **state) {
    (void)state;
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    o.check_bounds = 1;
    mt_diag d;
    assert_null(mt_jit_compile(test_ctx, shift_src, &o, &d));
    assert_int_equal(d.status, MT_ERR_UNSUPPORTED);
    assert_non_null(strstr(d.message, "check_bounds is not supported on a GPU"));
}

/* Without the option, an access the front end could not prove is checked
 * on the CPU; a GPU kernel cannot check, so it is refused at the access. */
static void test_cuda_unproven_refused(void **state) {
    (void)state;
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    o.filename = "check.py";
    mt_diag d;
    assert_null(mt_jit_compile(test_ctx,
                               "@T.prim_func\n"
                               "def f(x: T.Buffer((4,), \"float32\"), y: T.Buffer((10,), \"float32\")):\n"
                               "    for i in range(10):\n"
                               "        y[i] = x[i // 2 + i % 3]\n",
                               &o, &d));
    assert_int_equal(d.status, MT_ERR_UNSUPPORTED);
    assert_non_null(strstr(d.message, "a GPU kernel cannot check it at run time"));
    assert_int_equal(d.line, 4);
    assert_int_equal(d.col, 25); /* the index expression's operator, as for the CPU's errors */
}

static void test_cuda_emulated(void **state) {
    (void)state;
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.filename = "check.py";
    o.target = MT_TARGET_CUDA;
    o.emulate = 1;
    o.check_bounds = 1;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, gather_src, &o, &d);
    if (!k) fail_msg("%s", d.text);
    int64_t n = 100, m = 300;
    mt_tensor *x = mt_tensor_create(MT_FLOAT32, 1, &n), *it = mt_tensor_create(MT_INT64, 1, &m);
    float *xp = mt_tensor_data(x);
    int64_t *ix = mt_tensor_data(it);
    for (int i = 0; i < n; i++) xp[i] = (float)i;
    for (int i = 0; i < m; i++) ix[i] = i % n;
    ix[250] = 100;
    mt_device gpu = {MT_DEVICE_CUDA, 0};
    mt_tensor *gx = NULL, *gi = NULL, *out = NULL;
    assert_int_equal(mt_kernel_tensor_to(k, x, gpu, &gx, &d), MT_OK);
    assert_int_equal(mt_kernel_tensor_to(k, it, gpu, &gi, &d), MT_OK);
    mt_tensor *args[2] = {gx, gi};
    assert_oob(mt_kernel_run(k, args, 2, &out, 1, &d), &d,
               "out-of-bounds load from 'x': index (100,) is outside its shape (100,)", 5, 16);
    mt_tensor_release(gx), mt_tensor_release(gi), mt_tensor_release(x), mt_tensor_release(it);
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_runtime_offset),
        cmocka_unit_test(test_check_hoisted),
        cmocka_unit_test(test_hoist_keeps_scope),
        cmocka_unit_test(test_check_before_matmul),
        cmocka_unit_test(test_unproven_checked_by_default),
        cmocka_unit_test(test_binding_outside_domain),
        cmocka_unit_test(test_store_symbolic_dim),
        cmocka_unit_test(test_store_reported),
        cmocka_unit_test(test_two_dims_block),
        cmocka_unit_test(test_shuffle_index_not_hoisted),
        cmocka_unit_test(test_parallel_gather),
        cmocka_unit_test(test_parallel_scatter),
        cmocka_unit_test(test_stop_frees_scratch),
        cmocka_unit_test(test_proven_no_checks),
        cmocka_unit_test(test_graph_functions_unchecked),
        cmocka_unit_test(test_provable_still_compile_error),
        cmocka_unit_test(test_prefetch_not_checked),
        cmocka_unit_test(test_prefetch_inlined_dropped),
        cmocka_unit_test(test_dump_round_trip),
        cmocka_unit_test(test_cuda_refused),
        cmocka_unit_test(test_cuda_unproven_refused),
        cmocka_unit_test(test_cuda_emulated),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
