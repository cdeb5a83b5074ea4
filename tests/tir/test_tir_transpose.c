/*
 * test_tir_transpose.c -- the transpose_tiles pass (passes/tir/transpose_tiles.c):
 *
 *  - what it takes: a loop of N iterations storing one N-lane vector per
 *    iteration from loads a row apart (float32 in 16, 8 and 4 lanes,
 *    float64 and int32), with arithmetic, a contiguous load beside the
 *    transposed one, two transposed loads, a stride that is a symbolic
 *    dim; the result verifies and holds N row loads and N log2 N shuffles;
 *  - tiles clamped at the edges (splits that do not divide): the whole
 *    ones rewritten behind a test of the clamps, the kernel's values;
 *  - bodies of several statements: two stores of one transposed load, the
 *    lets and stores of a reduction over rows in the lanes (each copy's
 *    lets their own), verified and computing what the loops do;
 *  - what it leaves alone: a base that steps by 2, a stride that uses the
 *    loop variable, three transposed loads, an extent other than the lanes,
 *    a loop that does not start at 0, a body with an if or a loop, a load
 *    of the stored buffer (in place), a base that reads memory the body
 *    stores or uses a let of the body, a CUDA target;
 *  - what the kernels compute, through mt_jit_compile (which runs the pass),
 *    against C loops of the same function, element by element (exact: the
 *    pass moves values, and the arithmetic is the same per element).
 */
#include "tir/tir_test.h"

#include <stdlib.h>

#include "frontend/parser.h"
#include "passes/tir/tir_passes.h"
#include "target/target.h"
#include "test_util.h"
#include "tir/from_ast.h"
#include "tir/verify.h"

/* A tile loop over a: (R, C) row-major, into c: (C, R), of N x N tiles:
 *   c[y, x] = a[x, y] OP, where OP may read b (shaped as c) at the store's
 * index or d (shaped as a) at the load's. */
typedef struct tcase {
    const char *dt;  /* "float32", "float64", "int32" */
    int r, cols, n;  /* a is r x cols; n lanes */
    const char *op;  /* what follows the transposed load in the value, or "" */
    bool b, d;       /* the kernel takes b, d */
} tcase;

static const char *src_of(const tcase *t) {
    const char *dt = t->dt;
    int R = t->r, C = t->cols, N = t->n;
    const char *load = mt_arena_printf(A, "a[T.Ramp(j0 * %d + j1 * %d + i, %d, %d)]", N * C, N, C, N);
    const char *bl = mt_arena_printf(A, "b[T.Ramp((j1 * %d + i) * %d + j0 * %d, 1, %d)]", N, R, N, N);
    const char *dl = mt_arena_printf(A, "d[T.Ramp(j0 * %d + j1 * %d + i, %d, %d)]", N * C, N, C, N);
    const char *op = t->op;
    char *value = mt_arena_printf(A, "%s%s", load, op);
    /* the op names the other operands as B and D */
    for (char *p; (p = strchr(value, 'B')) || (p = strchr(value, 'D'));)
        value = mt_arena_printf(A, "%.*s%s%s", (int)(p - value), value, *p == 'B' ? bl : dl, p + 1);
    return mt_arena_printf(A,
                           "@T.prim_func\n"
                           "def k(a: T.Buffer((%d,), \"%s\"),%s%s c: T.Buffer((%d,), \"%s\")):\n"
                           "    for j0, j1 in T.grid(%d, %d):\n"
                           "        for i in range(%d):\n"
                           "            c[T.Ramp((j1 * %d + i) * %d + j0 * %d, 1, %d)] = %s\n",
                           R * C, dt, t->b ? mt_arena_printf(A, " b: T.Buffer((%d,), \"%s\"),", R * C, dt) : "",
                           t->d ? mt_arena_printf(A, " d: T.Buffer((%d,), \"%s\"),", R * C, dt) : "", R * C, dt,
                           R / N, C / N, N, N, R, N, N, value);
}

static const tcase TAKEN[] = {
    {"float32", 64, 48, 16, "", false, false},
    {"float32", 32, 32, 8, "", false, false},
    {"float32", 12, 20, 4, "", false, false},
    {"float64", 16, 24, 8, "", false, false},
    {"int32", 32, 16, 16, "", false, false},
    {"float32", 32, 48, 16, " * 2.0 + B", true, false},
    {"float32", 48, 32, 16, " - D * 3.0", false, true},
    {"int32", 16, 32, 16, " + D + B", true, true},
    {"float64", 24, 16, 8, " * D", false, true},
};

static mt_tfunc *parse_one(const char *src) {
    mt_ast *m = mt_parse(A, src, strlen(src), NULL);
    int n;
    mt_tfunc **fs = mt_tir_from_module(A, m, &n);
    assert_int_equal(n, 1);
    return fs[0];
}

static int count(const char *text, const char *needle) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

static int log2i(int n) {
    int l = 0;
    while ((1 << l) < n) l++;
    return l;
}

static void test_taken(void **state) {
    (void)state;
    TIR_GUARD();
    for (size_t i = 0; i < sizeof TAKEN / sizeof TAKEN[0]; i++) {
        const tcase *t = &TAKEN[i];
        mt_tfunc *g = mt_tir_transpose_tiles(A, parse_one(src_of(t)));
        const char *text = mt_tfunc_print(A, g), *err = mt_tir_verify(A, g, MT_TIR_FLAT);
        if (err) fail_msg("case %zu: the verifier refuses the result: %s\n%s", i, err, text);
        int loads = 1 + t->d;
        if (count(text, "T.Shuffle") != loads * t->n * log2i(t->n) || count(text, "tile_row") < loads * t->n)
            fail_msg("case %zu: %d x %d shuffles and %d row loads expected:\n%s", i, t->n, log2i(t->n), t->n, text);
        if (count(text, "for i in") != 0) fail_msg("case %zu: the tile loop is still there:\n%s", i, text);
    }
    TIR_GUARD_END();
}

/* A body of lets and stores (two stores of one transposed load; the steps
 * of a reduction over rows in the lanes, into a local buffer): taken, the
 * lets of each copy bound to variables of their own. */
static const char *const TWO_STORES =
    "@T.prim_func\n"
    "def k(a: T.Buffer((4096,), \"int32\"), c: T.Buffer((4096,), \"int32\"), e: T.Buffer((4096,), \"int32\")):\n"
    "    for j in range(4):\n"
    "        for i in range(16):\n"
    "            c[T.Ramp(j * 1024 + i * 64, 1, 16)] = a[T.Ramp(j * 16 + i, 64, 16)]\n"
    "            e[T.Ramp(j * 1024 + i * 64, 1, 16)] = a[T.Ramp(j * 16 + i, 64, 16)] * 2\n";

static const char *const ROW_SUMS = /* c[r] = sum of a[r, j]^2 + j: rows of 16 in lanes */
    "@T.prim_func\n"
    "def k(a: T.Buffer((4096,), \"int32\"), c: T.Buffer((256,), \"int32\")):\n"
    "    acc = T.alloc_buffer((16,), \"int32\", scope=\"local\")\n"
    "    for rb in range(16):\n"
    "        acc[T.Ramp(0, 1, 16)] = T.Broadcast(T.int32(0), 16)\n"
    "        for j in range(16):\n"
    "            x = a[T.Ramp(rb * 256 + j, 16, 16)]\n"
    "            acc[T.Ramp(0, 1, 16)] = acc[T.Ramp(0, 1, 16)] + x * x + T.Cast(\"int32\", j)\n"
    "        c[T.Ramp(rb * 16, 1, 16)] = acc[T.Ramp(0, 1, 16)]\n";

static void test_straight_bodies(void **state) {
    (void)state;
    TIR_GUARD();
    const char *srcs[] = {TWO_STORES, ROW_SUMS};
    for (int i = 0; i < 2; i++) {
        mt_tfunc *g = mt_tir_transpose_tiles(A, parse_one(srcs[i]));
        const char *text = mt_tfunc_print(A, g), *err = mt_tir_verify(A, g, MT_TIR_FLAT);
        if (err) fail_msg("case %d: the verifier refuses the result: %s\n%s", i, err, text);
        if (count(text, "T.Shuffle") != 64 || count(text, i ? "for j in" : "for i in") != 0)
            fail_msg("case %d not rewritten:\n%s", i, text);
    }
    TIR_GUARD_END();
    /* their values */
    int64_t n = 4096;
    mt_tensor *a = mt_tensor_create(MT_INT32, 1, &n);
    int32_t *av = mt_tensor_data(a);
    for (int i = 0; i < 4096; i++) av[i] = (i * 7919) % 20011 - 10005;
    mt_kernel *k = compile_ok(TWO_STORES);
    mt_tensor *out[2] = {NULL, NULL};
    mt_diag d;
    if (test_kernel_run(k, &a, 1, out, 2, &d) != MT_OK) fail_msg("%s", d.text);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 16; i++)
            for (int l = 0; l < 16; l++) {
                int32_t want = av[j * 16 + i + 64 * l], *c = mt_tensor_data(out[0]), *e = mt_tensor_data(out[1]);
                if (c[j * 1024 + i * 64 + l] != want || e[j * 1024 + i * 64 + l] != want * 2)
                    fail_msg("two stores: element (%d, %d, %d)", j, i, l);
            }
    mt_tensor_release(out[0]);
    mt_tensor_release(out[1]);
    out[0] = out[1] = NULL;
    mt_kernel_release(k);
    k = compile_ok(ROW_SUMS);
    if (test_kernel_run(k, &a, 1, out, 1, &d) != MT_OK) fail_msg("%s", d.text);
    for (int r = 0; r < 256; r++) {
        int32_t want = 0;
        for (int j = 0; j < 16; j++) want += av[r * 16 + j] * av[r * 16 + j] + j;
        if (((int32_t *)mt_tensor_data(out[0]))[r] != want)
            fail_msg("row sums: row %d is %d, want %d", r, ((int32_t *)mt_tensor_data(out[0]))[r], want);
    }
    mt_tensor_release(out[0]);
    mt_tensor_release(a);
    mt_kernel_release(k);
}

/* Tiles clamped at the edges (a is 40 x 35, c its transpose 35 x 40, by 16 x
 * 16 tiles): the whole tiles rewritten behind an if, the rest as written;
 * the result verifies and the kernel computes the transpose. */
static const char *const CLAMPED =
    "@T.prim_func\n"
    "def k(a: T.Buffer((1400,), \"float32\"), c: T.Buffer((1400,), \"float32\")):\n"
    "    for t0, t1 in T.grid(3, 3):\n"
    "        for i in range(T.min(16, 35 - t1 * 16)):\n"
    "            for v in range(T.max(T.min(16, 40 - t0 * 16), 0) // 16):\n"
    "                c[T.Ramp((t1 * 16 + i) * 40 + t0 * 16 + v * 16, 1, 16)] = a[T.Ramp((t0 * 16 + v * 16) * 35 + t1 * 16 + i, 35, 16)]\n"
    "            for s in range(T.max(T.min(16, 40 - t0 * 16), 0) % 16):\n"
    "                c[(t1 * 16 + i) * 40 + t0 * 16 + s] = a[(t0 * 16 + s) * 35 + t1 * 16 + i]\n";

static void test_clamped_tiles(void **state) {
    (void)state;
    TIR_GUARD();
    mt_tfunc *g = mt_tir_transpose_tiles(A, parse_one(CLAMPED));
    const char *text = mt_tfunc_print(A, g), *err = mt_tir_verify(A, g, MT_TIR_FLAT);
    if (err) fail_msg("the verifier refuses the result: %s\n%s", err, text);
    if (count(text, "T.Shuffle") != 64 || !strstr(text, "if 35 - t1 * 16 >= 16 and 40 - t0 * 16 >= 16:"))
        fail_msg("the whole tiles not rewritten behind their test:\n%s", text);
    TIR_GUARD_END();
    int64_t n = 1400;
    mt_tensor *a = mt_tensor_create(MT_FLOAT32, 1, &n), *out = NULL;
    for (int i = 0; i < 1400; i++) ((float *)mt_tensor_data(a))[i] = (float)i;
    mt_kernel *k = compile_ok(CLAMPED);
    mt_diag d;
    if (test_kernel_run(k, &a, 1, &out, 1, &d) != MT_OK) fail_msg("%s", d.text);
    for (int y = 0; y < 35; y++)
        for (int x = 0; x < 40; x++)
            if (((float *)mt_tensor_data(out))[y * 40 + x] != (float)(x * 35 + y)) fail_msg("c[%d, %d]", y, x);
    mt_tensor_release(out);
    mt_tensor_release(a);
    mt_kernel_release(k);
}

/* A symbolic stride: a is (n, 64), the kernel its transpose by 16 x 16 tiles. */
static void test_symbolic_stride(void **state) {
    (void)state;
    TIR_GUARD();
    const char *src = "@T.prim_func\n"
                      "def k(a: T.Buffer((n * 64,), \"float32\"), c: T.Buffer((n * 64,), \"float32\")):\n"
                      "    for j0, j1 in T.grid(n // 16, 4):\n"
                      "        for i in range(16):\n"
                      "            c[T.Ramp((j1 * 16 + i) * n + j0 * 16, 1, 16)] = a[T.Ramp(j0 * 1024 + j1 * 16 + i, 64, 16)]\n";
    mt_tfunc *g = mt_tir_transpose_tiles(A, parse_one(src));
    const char *text = mt_tfunc_print(A, g);
    assert_null(mt_tir_verify(A, g, MT_TIR_FLAT));
    assert_int_equal(count(text, "T.Shuffle"), 64);
    TIR_GUARD_END();
}

/* The tile loop as src_of writes it, with its parts replaced. */
static const char *variant(const char *extent, const char *loop_min, const char *store, const char *value) {
    return mt_arena_printf(A,
                           "@T.prim_func\n"
                           "def k(a: T.Buffer((4096,), \"float32\"), b: T.Buffer((4096,), \"float32\"), "
                           "d: T.Buffer((4096,), \"float32\"), c: T.Buffer((4096,), \"float32\")):\n"
                           "    for j in range(4):\n"
                           "        for i in range(%s, %s):\n"
                           "            %s = %s\n",
                           loop_min, extent, store, value);
}

static void test_left_alone(void **state) {
    (void)state;
    TIR_GUARD();
    const char *st = "c[T.Ramp(j * 1024 + i * 64, 1, 16)]";
    const char *srcs[] = {
        variant("16", "0", st, "a[T.Ramp(j * 16 + i * 2, 64, 16)]"),            /* base steps by 2 */
        variant("16", "0", st, "a[T.Ramp(j * 16 + i, 64 + i, 16)]"),            /* stride uses i */
        variant("16", "0", st, "a[T.Ramp(j * 16 + i, 64, 16)] + b[T.Ramp(j * 16 + i, 64, 16)] + "
                               "d[T.Ramp(j * 16 + i, 64, 16)]"),                /* three loads */
        variant("8", "0", st, "a[T.Ramp(j * 16 + i, 64, 16)]"),                 /* extent 8, 16 lanes */
        variant("17", "1", st, "a[T.Ramp(j * 16 + i - 1, 64, 16)]"),            /* from 1 */
        variant("16", "0", st, "a[T.Ramp(j * 16 + i, 64, 16)] + a[T.Ramp(j * 16 + i, 1, 16)]"), /* ok */
    };
    for (int i = 0; i < 6; i++) {
        mt_tfunc *f = parse_one(srcs[i]), *g = mt_tir_transpose_tiles(A, f);
        int shuffles = count(mt_tfunc_print(A, g), "T.Shuffle");
        if (i < 5 && g->body != f->body) fail_msg("case %d was rewritten:\n%s", i, mt_tfunc_print(A, g));
        if (i == 5 && shuffles != 64) fail_msg("the last case (a contiguous load beside) was not rewritten");
    }
    static const char *const untouched[] = {
        /* a body that is not straight: an if, a loop */
        "@T.prim_func\n"
        "def k(a: T.Buffer((4096,), \"float32\"), c: T.Buffer((4096,), \"float32\"), n: T.int64):\n"
        "    for i in range(16):\n"
        "        if i < n:\n"
        "            c[T.Ramp(i * 64, 1, 16)] = a[T.Ramp(i, 64, 16)]\n",
        "@T.prim_func\n"
        "def k(a: T.Buffer((4096,), \"float32\"), c: T.Buffer((4096,), \"float32\")):\n"
        "    for i in range(16):\n"
        "        for j in range(2):\n"
        "            c[T.Ramp(i * 64 + j * 16, 1, 16)] = a[T.Ramp(i, 64, 16)]\n",
        /* a base that reads a buffer the body stores, one that uses a let
         * of the body (review findings: wrong values, an internal error) */
        "@T.prim_func\n"
        "def k(x: T.Buffer((128,), \"float32\"), o: T.Buffer((4,), \"int64\"), q: T.Buffer((1,), \"int64\"), "
        "y: T.Buffer((16,), \"float32\")):\n"
        "    for i in range(4):\n"
        "        q[0] = o[i]\n"
        "        y[T.Ramp(i * 4, 1, 4)] = x[T.Ramp(i + q[0], 16, 4)]\n",
        "@T.prim_func\n"
        "def k(x: T.Buffer((128,), \"float32\"), o: T.Buffer((4,), \"int64\"), y: T.Buffer((16,), \"float32\")):\n"
        "    for i in range(4):\n"
        "        b = o[i]\n"
        "        y[T.Ramp(i * 4, 1, 4)] = x[T.Ramp(b + i, 16, 4)]\n",
        /* clamped tiles whose inner clamp uses the tile's variable or reads
         * memory (review findings: an internal error, a wrong result) */
        "@T.prim_func\n"
        "def k(a: T.Buffer((4096,), \"float32\"), c: T.Buffer((4096,), \"float32\")):\n"
        "    for i in range(16):\n"
        "        for v in range(T.max(T.min(16, 20 - i), 0) // 16):\n"
        "            c[T.Ramp(i * 64 + v * 16, 1, 16)] = a[T.Ramp(v * 1024 + i, 64, 16)]\n"
        "        for s in range(T.max(T.min(16, 20 - i), 0) % 16):\n"
        "            c[i * 64 + s] = a[s * 64 + i]\n",
        "@T.prim_func\n"
        "def k(a: T.Buffer((4096,), \"float32\"), m: T.Buffer((1,), \"int64\"), c: T.Buffer((4096,), \"float32\")):\n"
        "    for i in range(16):\n"
        "        for v in range(T.min(16, m[0]) // 16):\n"
        "            c[T.Ramp(i * 64 + v * 16, 1, 16)] = a[T.Ramp(v * 1024 + i, 64, 16)]\n"
        "            m[0] = T.int64(0)\n",
        /* in place: the loads would move before stores that may change them */
        "@T.prim_func\n"
        "def k(a: T.Buffer((4096,), \"float32\")):\n"
        "    for i in range(16):\n"
        "        a[T.Ramp(i * 64, 1, 16)] = a[T.Ramp(i, 64, 16)]\n",
    };
    mt_tfunc *f;
    for (size_t i = 0; i < sizeof untouched / sizeof untouched[0]; i++) {
        f = parse_one(untouched[i]);
        if (mt_tir_transpose_tiles(A, f)->body != f->body) fail_msg("rewritten:\n%s", untouched[i]);
    }
    /* a CUDA target */
    const char *cuda = "@T.prim_func\n"
                       "def k(a: T.Buffer((4096,), \"float32\"), c: T.Buffer((4096,), \"float32\")):\n"
                       "    for i in range(16):\n"
                       "        c[T.Ramp(i * 64, 1, 16)] = a[T.Ramp(i, 64, 16)]\n";
    f = parse_one(cuda);
    static mt_target_desc gpu;
    assert_true(mt_target_cuda(&gpu, "sm_90"));
    f->target = &gpu;
    assert_ptr_equal(mt_tir_transpose_tiles(A, f)->body, f->body);
    TIR_GUARD_END();
}

/* ---- end to end ------------------------------------------------------------------- */

static double get(const mt_tensor *t, int64_t i) {
    const void *p = mt_tensor_data(t);
    switch (mt_tensor_dtype(t)) {
    case MT_FLOAT32: return ((const float *)p)[i];
    case MT_FLOAT64: return ((const double *)p)[i];
    default: return ((const int32_t *)p)[i];
    }
}

static mt_tensor *filled(mt_dtype dt, int64_t n, int salt) {
    mt_tensor *t = mt_tensor_create(dt, 1, &n);
    assert_non_null(t);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = (i * 7919 + salt * 104729) % 20011 - 10005;
        if (dt == MT_FLOAT32) ((float *)mt_tensor_data(t))[i] = (float)v / 64.0f;
        else if (dt == MT_FLOAT64) ((double *)mt_tensor_data(t))[i] = (double)v / 64.0;
        else ((int32_t *)mt_tensor_data(t))[i] = (int32_t)v;
    }
    return t;
}

/* c[y, x] for the case's op (C loops in double; exact for these values). */
static double want(const tcase *t, const mt_tensor *a, const mt_tensor *b, const mt_tensor *d, int y, int x) {
    double av = get(a, (int64_t)x * t->cols + y), bv = b ? get(b, (int64_t)y * t->r + x) : 0;
    double dv = d ? get(d, (int64_t)x * t->cols + y) : 0;
    if (!strcmp(t->op, "")) return av;
    if (!strcmp(t->op, " * 2.0 + B")) return av * 2.0 + bv;
    if (!strcmp(t->op, " - D * 3.0")) return av - dv * 3.0;
    if (!strcmp(t->op, " + D + B")) return av + dv + bv;
    if (!strcmp(t->op, " * D")) return av * dv;
    fail_msg("no reference for op '%s'", t->op);
    return 0;
}

static void test_end_to_end(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof TAKEN / sizeof TAKEN[0]; i++) {
        const tcase *t = &TAKEN[i];
        mt_dtype dt = !strcmp(t->dt, "float32") ? MT_FLOAT32 : !strcmp(t->dt, "float64") ? MT_FLOAT64 : MT_INT32;
        int64_t n = (int64_t)t->r * t->cols;
        mt_kernel *k = compile_ok(src_of(t));
        mt_tensor *args[3], *out = NULL, *b = NULL, *d = NULL;
        int na = 0;
        args[na++] = filled(dt, n, 1);
        if (t->b) args[na++] = b = filled(dt, n, 2);
        if (t->d) args[na++] = d = filled(dt, n, 3);
        mt_diag diag;
        if (test_kernel_run(k, args, na, &out, 1, &diag) != MT_OK) fail_msg("case %zu: %s", i, diag.text);
        for (int y = 0; y < t->cols; y++)
            for (int x = 0; x < t->r; x++) {
                double got = get(out, (int64_t)y * t->r + x), w = want(t, args[0], b, d, y, x);
                if (dt == MT_FLOAT32 ? (float)w != (float)got : w != got)
                    fail_msg("case %zu: c[%d, %d] = %.9g, want %.9g", i, y, x, got, w);
            }
        for (int j = 0; j < na; j++) mt_tensor_release(args[j]);
        mt_tensor_release(out);
        mt_kernel_release(k);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_taken),
        TIR_TEST(test_symbolic_stride),
        cmocka_unit_test_setup_teardown(test_clamped_tiles, tir_setup, tir_teardown),
        TIR_TEST(test_left_alone),
        cmocka_unit_test_setup_teardown(test_straight_bodies, tir_setup, tir_teardown),
        cmocka_unit_test_setup_teardown(test_end_to_end, tir_setup, tir_teardown),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
