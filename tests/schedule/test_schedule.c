/*
 * test_schedule.c -- schedule primitives (src/schedule/primitives.c) and the
 * default CPU rule (src/schedule/default_cpu.c): golden text of each step on
 * hand-built block-form functions, the refusals with their reasons, and the
 * numbers: every scheduled function is lowered (lower_blocks,
 * flatten_buffers, simplify, vectorize, remove_unit_loops, simplify), compiled and run
 * against the unscheduled one.
 */
#include "tir/tir_test.h"

#include <stdlib.h>

#include "codegen/cg_util.h"
#include "passes/tir/tir_passes.h"
#include "runtime/parallel.h"
#include "schedule/primitives.h"
#include "schedule/schedule.h"

static mt_jit *jit;

static mt_tfunc *func_of(const char *name, mt_tstmt *body, mt_tbuffer **bufs, int nbufs,
                         mt_tvar **syms, int nsym) {
    mt_tfunc *f = mt_tfunc_new(A, name);
    for (int i = 0; i < nbufs; i++) mt_tfunc_add_param(A, f, bufs[i], NULL);
    f->sym_vars = MT_NEW_ARRAY(A, mt_tvar *, nsym + 1);
    for (int i = 0; i < nsym; i++) f->sym_vars[i] = syms[i];
    f->nsym = nsym;
    f->num_outputs = 1;
    f->body = body;
    return f;
}

/* out[v0, v1] = a[v0, v1] * 2.0 + b[v1] over (E0, E1). */
static mt_tfunc *bias2(mt_texpr *e0, mt_texpr *e1, nest *n, mt_tvar **syms, int nsym) {
    mt_texpr *sa[2] = {e0, e1};
    mt_tbuffer *a = mt_tbuffer_new(A, "a", MT_FLOAT32, 2, sa);
    mt_tbuffer *b = mt_tbuffer_new(A, "b", MT_FLOAT32, 1, &e1);
    mt_tbuffer *o = mt_tbuffer_new(A, "out", MT_FLOAT32, 2, sa);
    nest_init(n, "SS", e0, e1);
    mt_tstmt *s = nest_build(
        n, "bias", st(o, add(mul(ld(a, n->v[0], n->v[1]), F(2.0)), ld(b, n->v[1])), n->v[0], n->v[1]));
    mt_tbuffer *bufs[3] = {a, b, o};
    return func_of("bias", s, bufs, 3, syms, nsym);
}

/* out[v0] = sum over v1 of a[v0, v1] (E0, E1). */
static mt_tfunc *sum_rows(int64_t e0, int64_t e1, nest *n) {
    mt_tbuffer *a = buf2("a", e0, e1), *o = buf1("out", e0);
    nest_init(n, "SR", I(e0), I(e1));
    n->init = st(o, F(0.0), n->v[0]);
    mt_tstmt *s = nest_build(n, "sum", st(o, add(ld(o, n->v[0]), ld(a, n->v[0], n->v[1])), n->v[0]));
    mt_tbuffer *bufs[2] = {a, o};
    return func_of("sum_rows", s, bufs, 2, NULL, 0);
}

/* ---- running ---------------------------------------------------------------- */

static mt_tfunc *lower(mt_tfunc *f) {
    f = mt_tir_lower_blocks(A, f);
    f = mt_tir_flatten_buffers(A, f);
    f = mt_tir_simplify(A, f);
    f = mt_tir_vectorize(A, f);
    f = mt_tir_remove_unit_loops(A, f);
    return mt_tir_simplify(A, f);
}

static mt_thread_pool *pool;

typedef void (*kern3)(float *, float *, float *, int64_t, int64_t);

/* Runs f and g (3 float buffers of the given sizes, up to two sym values)
 * on the same inputs; their outputs (the last buffer) must be identical. */
static void same_results(mt_tfunc *f, mt_tfunc *g, int nbufs, const int64_t *len, int64_t s0,
                         int64_t s1) {
    mt_tfunc *fs[2] = {lower(f), lower(g)};
    fs[1]->name = "scheduled";
    mt_codegen_out out;
    cg_compile(jit, A, fs, 2, 3, 2, &out);
    float *bufs[2][3];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < nbufs; i++) {
            bufs[k][i] = malloc(sizeof(float) * (size_t)(len[i] + 1));
            for (int64_t e = 0; e < len[i]; e++) bufs[k][i][e] = (float)((e * 7 + i) % 23) - 5.5f;
        }
    for (int k = 0; k < 2; k++) {
        int prev = mt_parallel_set_num_threads(2);
        if (nbufs == 3)
            ((kern3)out.fn_addrs[k])(bufs[k][0], bufs[k][1], bufs[k][2], s0, s1);
        else
            ((void (*)(float *, float *, int64_t, int64_t))out.fn_addrs[k])(bufs[k][0], bufs[k][1],
                                                                            s0, s1);
        mt_parallel_set_num_threads(prev);
    }
    int last = nbufs - 1;
    assert_memory_equal(bufs[0][last], bufs[1][last], sizeof(float) * (size_t)len[last]);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < nbufs; i++) free(bufs[k][i]);
    mt_jit_module_release(out.module);
}

/* ---- primitives ------------------------------------------------------------- */

static void test_split(void **state) {
    TIR_GUARD();
    nest n;
    mt_tfunc *f = bias2(I(4), I(10), &n, NULL, 0);
    mt_sched s;
    mt_sched_init(&s, A, f);
    mt_tvar *o, *i;
    assert_true(mt_sched_split(&s, n.loop[1], I(4), &o, &i));
    ASSERT_TEXT(mt_tfunc_print(A, s.func),
                "@T.prim_func\n"
                "def bias(a: T.Buffer((4, 10), \"float32\"), b: T.Buffer((10,), \"float32\"), out: T.Buffer((4, 10), \"float32\")):\n"
                "    for i0, i1_0 in T.grid(4, 3):\n"
                "        for i1_1 in range(T.min(4, 10 - i1_0 * 4)):\n"
                "            with T.block(\"bias\"):\n"
                "                v0 = T.axis.spatial(4, i0)\n"
                "                v1 = T.axis.spatial(10, i1_0 * 4 + i1_1)\n"
                "                T.reads()\n"
                "                T.writes()\n"
                "                out[v0, v1] = a[v0, v1] * 2.0 + b[v1]\n");
    int64_t len[3] = {40, 10, 40};
    same_results(f, s.func, 3, len, 0, 0);
    /* divisible: a plain inner extent */
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_split(&s, n.loop[1], I(5), &o, &i));
    assert_int_equal(mt_sched_get_loop(&s, i)->extent->ival, 5);
    assert_int_equal(mt_sched_get_loop(&s, o)->extent->ival, 2);
    same_results(f, s.func, 3, len, 0, 0);
    TIR_GUARD_END();
}

static void test_split_symbolic(void **state) {
    TIR_GUARD();
    nest n;
    mt_tvar *m = ivar("m"), *k = ivar("k");
    mt_tvar *syms[2] = {m, k};
    mt_tfunc *f = bias2(I(3), V(m), &n, syms, 2);
    mt_sched s;
    mt_sched_init(&s, A, f);
    /* a run-time factor: max(1, k) */
    assert_true(mt_sched_split(&s, n.loop[1], bin(TE_MAX, I(1), V(k)), NULL, NULL));
    ASSERT_TEXT(mt_tfunc_print(A, s.func),
                "@T.prim_func\n"
                "def bias(a: T.Buffer((3, \"m\"), \"float32\"), b: T.Buffer((\"m\",), \"float32\"), out: T.Buffer((3, \"m\"), \"float32\")):\n"
                "    for i0, i1_0 in T.grid(3, (m + (T.max(1, k) - 1)) // T.max(1, k)):\n"
                "        for i1_1 in range(T.min(T.max(1, k), m - i1_0 * T.max(1, k))):\n"
                "            with T.block(\"bias\"):\n"
                "                v0 = T.axis.spatial(3, i0)\n"
                "                v1 = T.axis.spatial(m, i1_0 * T.max(1, k) + i1_1)\n"
                "                T.reads()\n"
                "                T.writes()\n"
                "                out[v0, v1] = a[v0, v1] * 2.0 + b[v1]\n");
    for (int64_t M = 0; M <= 11; M += 11)
        for (int64_t K = -1; K <= 5; K += 3) {
            int64_t len[3] = {3 * M, M, 3 * M};
            same_results(f, s.func, 3, len, M, K);
        }
    TIR_GUARD_END();
}

static void test_fuse_reorder(void **state) {
    TIR_GUARD();
    nest n;
    mt_tfunc *f = bias2(I(4), I(6), &n, NULL, 0);
    mt_sched s;
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_reorder(&s, n.loop[0], n.loop[1]));
    ASSERT_TEXT(mt_tfunc_print(A, s.func),
                "@T.prim_func\n"
                "def bias(a: T.Buffer((4, 6), \"float32\"), b: T.Buffer((6,), \"float32\"), out: T.Buffer((4, 6), \"float32\")):\n"
                "    for i1, i0 in T.grid(6, 4):\n"
                "        with T.block(\"bias\"):\n"
                "            v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
                "            T.reads()\n"
                "            T.writes()\n"
                "            out[v0, v1] = a[v0, v1] * 2.0 + b[v1]\n");
    int64_t len[3] = {24, 6, 24};
    same_results(f, s.func, 3, len, 0, 0);
    mt_tvar *fused;
    assert_true(mt_sched_fuse(&s, n.loop[1], n.loop[0], &fused));
    ASSERT_TEXT(mt_tfunc_print(A, s.func),
                "@T.prim_func\n"
                "def bias(a: T.Buffer((4, 6), \"float32\"), b: T.Buffer((6,), \"float32\"), out: T.Buffer((4, 6), \"float32\")):\n"
                "    for i1_i0_fused in range(24):\n"
                "        with T.block(\"bias\"):\n"
                "            v0 = T.axis.spatial(4, i1_i0_fused % 4)\n"
                "            v1 = T.axis.spatial(6, i1_i0_fused // 4)\n"
                "            T.reads()\n"
                "            T.writes()\n"
                "            out[v0, v1] = a[v0, v1] * 2.0 + b[v1]\n");
    same_results(f, s.func, 3, len, 0, 0);
    TIR_GUARD_END();
}

/* Fusing the loops of an elementwise nest, lowering and simplifying gives
 * one flat loop with the plain index. */
static void test_fuse_flat_index(void **state) {
    TIR_GUARD();
    mt_tbuffer *a = mt_tbuffer_new_const(A, "a", MT_FLOAT32, 3, (int64_t[]){2, 3, 4});
    mt_tbuffer *o = mt_tbuffer_new_const(A, "out", MT_FLOAT32, 3, (int64_t[]){2, 3, 4});
    nest n;
    nest_init(&n, "SSS", I(2), I(3), I(4));
    mt_tstmt *body = nest_build(&n, "neg",
                                st(o, mul(ld(a, n.v[0], n.v[1], n.v[2]), F(-1.0)), n.v[0], n.v[1], n.v[2]));
    mt_tbuffer *bufs[2] = {a, o};
    mt_tfunc *f = func_of("neg", body, bufs, 2, NULL, 0);
    mt_sched s;
    mt_sched_init(&s, A, f);
    mt_tvar *v;
    assert_true(mt_sched_fuse(&s, n.loop[0], n.loop[1], &v));
    assert_true(mt_sched_fuse(&s, v, n.loop[2], &v));
    ASSERT_TEXT(mt_tfunc_print(A, lower(s.func)),
                "@T.prim_func\n"
                "def neg(a: T.Buffer((24,), \"float32\"), out: T.Buffer((24,), \"float32\")):\n"
                "    for i0_i1_i2_fused in range(24):\n"
                "        out[i0_i1_i2_fused] = a[i0_i1_i2_fused] * -1.0\n");
    int64_t len[2] = {24, 24};
    same_results(f, s.func, 2, len, 0, 0);
    TIR_GUARD_END();
}

static void test_annotations(void **state) {
    TIR_GUARD();
    nest n;
    mt_tfunc *f = bias2(I(4), I(6), &n, NULL, 0);
    mt_sched s;
    mt_sched_init(&s, A, f);
    assert_false(mt_sched_vectorize(&s, n.loop[0]));
    assert_string_equal(s.error, "vectorize: loop 'i0' is not innermost");
    assert_true(mt_sched_parallel(&s, n.loop[0]));
    assert_true(mt_sched_vectorize(&s, n.loop[1]));
    assert_false(mt_sched_unroll(&s, n.loop[1]));
    assert_string_equal(s.error, "unroll: loop 'i1' is already vectorized");
    assert_false(mt_sched_split(&s, n.loop[0], I(2), NULL, NULL));
    assert_string_equal(s.error, "split: loop 'i0' is already parallel");
    ASSERT_TEXT(mt_tfunc_print(A, s.func),
                "@T.prim_func\n"
                "def bias(a: T.Buffer((4, 6), \"float32\"), b: T.Buffer((6,), \"float32\"), out: T.Buffer((4, 6), \"float32\")):\n"
                "    for i0 in T.parallel(4):\n"
                "        for i1 in T.vectorized(6):\n"
                "            with T.block(\"bias\"):\n"
                "                v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
                "                T.reads()\n"
                "                T.writes()\n"
                "                out[v0, v1] = a[v0, v1] * 2.0 + b[v1]\n");
    int64_t len[3] = {24, 6, 24};
    same_results(f, s.func, 3, len, 0, 0);
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_unroll(&s, n.loop[0]));
    same_results(f, s.func, 3, len, 0, 0);
    TIR_GUARD_END();
}

static void test_refusals(void **state) {
    TIR_GUARD();
    nest n;
    mt_tfunc *f = sum_rows(5, 7, &n);
    mt_sched s;
    mt_sched_init(&s, A, f);
    assert_false(mt_sched_parallel(&s, n.loop[1]));
    assert_string_equal(s.error, "parallel: loop 'i1' drives reduce variable 'v1' of block 'sum': "
                                 "its iterations update the same elements");
    assert_false(mt_sched_vectorize(&s, n.loop[1]));
    assert_false(mt_sched_fuse(&s, n.loop[1], n.loop[0], NULL));
    assert_string_equal(s.error, "fuse: loop 'i0' is not the whole body of loop 'i1' (they must be "
                                 "perfectly nested)");
    assert_false(mt_sched_split(&s, n.loop[0], I(0), NULL, NULL));
    assert_string_equal(s.error, "split: factor 0 of loop 'i0' is not positive");
    assert_false(mt_sched_split(&s, n.loop[0], V(n.loop[0]), NULL, NULL));
    assert_true(s.func == f); /* refusals change nothing */
    /* rows are independent; reordering keeps each row's summation order */
    assert_true(mt_sched_parallel(&s, n.loop[0]));
    int64_t len[2] = {35, 5};
    same_results(f, s.func, 2, len, 0, 0);
    mt_sched_init(&s, A, f);
    assert_true(mt_sched_reorder(&s, n.loop[0], n.loop[1]));
    same_results(f, s.func, 2, len, 0, 0);
    /* the lowered form has no blocks to vouch for independence */
    mt_tfunc *low = lower(f);
    mt_sched_init(&s, A, low);
    const mt_tstmt *outer = low->body;
    assert_int_equal(outer->kind, TS_FOR);
    assert_false(mt_sched_parallel(&s, outer->var));
    TIR_GUARD_END();
}

/* simplify's (x // c) * c + x % c -> x, which fused indices rely on: each
 * case is also evaluated for x in [-20, 20] before and after. */
static void test_simplify_divmod(void **state) {
    TIR_GUARD();
    mt_tvar *x = ivar("x"), *y = ivar("y");
    mt_texpr *X = V(x);
    struct {
        mt_texpr *e;
        const char *want;
    } cases[] = {
        {add(mul(bin(TE_FLOORDIV, X, I(3)), I(3)), bin(TE_FLOORMOD, X, I(3))), "x"},
        {add(mul(bin(TE_FLOORDIV, X, I(-3)), I(-3)), bin(TE_FLOORMOD, X, I(-3))), "x"},
        {add(bin(TE_FLOORMOD, X, I(5)), mul(I(5), bin(TE_FLOORDIV, X, I(5)))), "x"},
        {add(mul(bin(TE_FLOORDIV, X, I(3)), I(6)), mul(bin(TE_FLOORMOD, X, I(3)), I(2))), "x * 2"},
        {add(add(mul(bin(TE_FLOORDIV, bin(TE_FLOORDIV, X, I(4)), I(3)), I(12)),
                 mul(bin(TE_FLOORMOD, bin(TE_FLOORDIV, X, I(4)), I(3)), I(4))),
             bin(TE_FLOORMOD, X, I(4))),
         "x"},
        {sub(add(mul(bin(TE_FLOORDIV, X, I(7)), I(7)), I(5)), sub(I(1), bin(TE_FLOORMOD, X, I(7)))),
         "x + 4"},
        {add(mul(bin(TE_FLOORDIV, X, I(3)), I(3)), bin(TE_FLOORMOD, X, I(4))), "x // 3 * 3 + x % 4"},
        {add(mul(bin(TE_FLOORDIV, X, I(3)), I(2)), bin(TE_FLOORMOD, X, I(3))), "x // 3 * 2 + x % 3"},
        {add(mul(bin(TE_FLOORDIV, X, V(y)), V(y)), bin(TE_FLOORMOD, X, V(y))), "x // y * y + x % y"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mt_tfunc *f = mt_tfunc_new(A, "t");
        mt_tbuffer *o = mt_tbuffer_new_const(A, "o", MT_INT64, 1, (int64_t[]){1});
        mt_texpr *zero = I(0);
        f->body = mt_ts_store(A, o, &zero, 1, cases[i].e);
        mt_tfunc *g = mt_tir_simplify(A, f);
        mt_texpr *after = g->body->value;
        ASSERT_TEXT(mt_texpr_print(A, after), cases[i].want);
        if (i == 8) continue;
        for (int64_t v = -20; v <= 20; v++) {
            mt_texpr *val = I(v);
            mt_texpr *a = mt_tsubst_expr(A, cases[i].e, &x, &val, 1);
            mt_texpr *b = mt_tsubst_expr(A, after, &x, &val, 1);
            mt_tstmt *sa = mt_ts_store(A, o, &zero, 1, a), *sb = mt_ts_store(A, o, &zero, 1, b);
            f->body = sa;
            int64_t ra = mt_tir_simplify(A, f)->body->value->ival;
            f->body = sb;
            int64_t rb = mt_tir_simplify(A, f)->body->value->ival;
            if (ra != rb) fail_msg("case %zu x=%lld: %lld before, %lld after", i, (long long)v, (long long)ra, (long long)rb);
        }
    }
    TIR_GUARD_END();
}

/* ---- the default CPU rule ----------------------------------------------------- */

static void test_rule_elementwise(void **state) {
    TIR_GUARD();
    mt_tvar *m = ivar("m");
    nest n;
    mt_texpr *sh[2] = {V(m), I(8)};
    mt_tbuffer *a = mt_tbuffer_new(A, "a", MT_FLOAT32, 2, sh);
    mt_tbuffer *o = mt_tbuffer_new(A, "out", MT_FLOAT32, 2, sh);
    nest_init(&n, "SS", V(m), I(8));
    mt_tstmt *body = nest_build(&n, "add", st(o, add(ld(a, n.v[0], n.v[1]), F(1.0)), n.v[0], n.v[1]));
    mt_tbuffer *bufs[2] = {a, o};
    mt_tfunc *f = func_of("inc", body, bufs, 2, &m, 1);
    mt_tfunc *g = mt_schedule_default_cpu(A, f);
    ASSERT_TEXT(mt_tfunc_print(A, lower(g)),
                "@T.prim_func\n"
                "def inc(a: T.Buffer((m * 8,), \"float32\"), out: T.Buffer((m * 8,), \"float32\")):\n"
                "    for i0_i1_fused_0 in T.parallel((m * 8 + 16383) // 16384):\n"
                "        for i0_i1_fused_1 in range(T.max(T.min(16384, m * 8 - i0_i1_fused_0 * 16384), 0) // 16):\n"
                "            out[T.Ramp(i0_i1_fused_0 * 16384 + i0_i1_fused_1 * 16, 1, 16)] = a[T.Ramp(i0_i1_fused_0 * 16384 + i0_i1_fused_1 * 16, 1, 16)] + 1.0\n"
                "        for i0_i1_fused_1_1 in range(T.max(T.min(16384, m * 8 - i0_i1_fused_0 * 16384), 0) % 16):\n"
                "            out[i0_i1_fused_0 * 16384 + (T.max(T.min(16384, m * 8 - i0_i1_fused_0 * 16384), 0) // 16 * 16 + i0_i1_fused_1_1)] = a[i0_i1_fused_0 * 16384 + (T.max(T.min(16384, m * 8 - i0_i1_fused_0 * 16384), 0) // 16 * 16 + i0_i1_fused_1_1)] + 1.0\n");
    static const int64_t rows[] = {0, 1, 7, 1000, 4097, (1 << 17) + 3};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int64_t len[2] = {rows[r] * 8, rows[r] * 8};
        same_results(f, g, 2, len, rows[r], 0);
    }
    TIR_GUARD_END();
}

static void test_rule_broadcast(void **state) {
    TIR_GUARD();
    mt_tvar *m = ivar("m");
    nest n;
    mt_tfunc *f = bias2(V(m), I(1000), &n, &m, 1);
    mt_tfunc *g = mt_schedule_default_cpu(A, f);
    /* b[v1] keeps the row loop: rows of 1000 in chunks of 17 rows (>= 64 KiB);
     * a row is 62 vectors of 16 and a tail of 8 */
    ASSERT_TEXT(mt_tfunc_print(A, lower(g)),
                "@T.prim_func\n"
                "def bias(a: T.Buffer((m * 1000,), \"float32\"), b: T.Buffer((1000,), \"float32\"), out: T.Buffer((m * 1000,), \"float32\")):\n"
                "    for i0_0 in T.parallel((m + 16) // 17):\n"
                "        for i0_1 in range(T.min(17, m - i0_0 * 17)):\n"
                "            for i1 in range(62):\n"
                "                out[T.Ramp((i0_0 * 17 + i0_1) * 1000 + i1 * 16, 1, 16)] = a[T.Ramp((i0_0 * 17 + i0_1) * 1000 + i1 * 16, 1, 16)] * 2.0 + b[T.Ramp(i1 * 16, 1, 16)]\n"
                "            for i1_1 in range(8):\n"
                "                out[(i0_0 * 17 + i0_1) * 1000 + (992 + i1_1)] = a[(i0_0 * 17 + i0_1) * 1000 + (992 + i1_1)] * 2.0 + b[992 + i1_1]\n");
    static const int64_t rows[] = {0, 1, 7, 1000};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int64_t len[3] = {rows[r] * 1000, 1000, rows[r] * 1000};
        same_results(f, g, 3, len, rows[r], 0);
    }
    /* small and static: fused (one flat loop), serial */
    f = bias2(I(2), I(3), &n, NULL, 0);
    g = mt_schedule_default_cpu(A, f);
    ASSERT_TEXT(mt_tfunc_print(A, lower(g)),
                "@T.prim_func\n"
                "def bias(a: T.Buffer((6,), \"float32\"), b: T.Buffer((3,), \"float32\"), out: T.Buffer((6,), \"float32\")):\n"
                "    for i0, i1 in T.grid(2, 3):\n"
                "        out[i0 * 3 + i1] = a[i0 * 3 + i1] * 2.0 + b[i1]\n");
    TIR_GUARD_END();
}

static void test_rule_leaves_reductions(void **state) {
    TIR_GUARD();
    nest n;
    mt_tfunc *f = sum_rows(100000, 8, &n);
    assert_true(mt_schedule_default_cpu(A, f) == f);
    TIR_GUARD_END();
}

static int setup(void **state) {
    char err[256];
    jit = mt_jit_create(err, sizeof err);
    pool = mt_thread_pool_create(2); /* parallel loops run on 2 threads */
    mt_parallel_set_pool(pool);
    return jit && pool ? 0 : -1;
}

static int teardown(void **state) {
    mt_jit_destroy(jit);
    mt_parallel_set_pool(NULL);
    mt_thread_pool_destroy(pool);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_split),
        TIR_TEST(test_split_symbolic),
        TIR_TEST(test_fuse_reorder),
        TIR_TEST(test_fuse_flat_index),
        TIR_TEST(test_annotations),
        TIR_TEST(test_refusals),
        TIR_TEST(test_simplify_divmod),
        TIR_TEST(test_rule_elementwise),
        TIR_TEST(test_rule_broadcast),
        TIR_TEST(test_rule_leaves_reductions),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
