/*
 * test_tir_vectorize.c -- the vectorize pass (src/passes/tir/vectorize.c):
 * what a `vectorized` loop becomes (vector steps of 64 bytes of the widest
 * element, narrower for a short loop, and a scalar tail), and every case
 * it leaves alone. Numerics: the
 * default CPU rule marks elementwise loops, so the whole suite runs through
 * the pass; tests/schedule/test_schedule.c compares vectorized and scalar
 * code bit for bit, with tails of 0 to 15 elements.
 */
#include "tir/tir_test.h"
#include "passes/tir/tir_passes.h"
#include "target/target.h"

static mt_tfunc *func_of(mt_tbuffer *const *params, int n, mt_tstmt *body) {
    mt_tfunc *f = mt_tfunc_new(A, "f");
    for (int i = 0; i < n; i++) mt_tfunc_add_param(A, f, params[i], NULL);
    f->num_outputs = 1;
    f->body = body;
    return f;
}

static mt_tstmt *vloop(mt_tvar *v, int64_t ext, mt_tstmt *body) {
    return mt_ts_for(A, v, I(0), I(ext), MT_FOR_VECTORIZED, body);
}

static mt_tbuffer *bufd(const char *name, mt_dtype dt, int64_t n) {
    mt_texpr *e = I(n);
    return mt_tbuffer_new(A, name, dt, 1, &e);
}

/* out[i] = x[i + 1] * s[3] + 1: 100 float32 -> 6 vectors of 16 and 4 left;
 * s[3] is invariant (a scalar load, splat by code generation). */
static void test_float32_with_tail(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 101), *s = buf1("s", 4), *out = buf1("out", 100);
    mt_tvar *i = ivar("i");
    mt_tbuffer *ps[3] = {x, s, out};
    mt_tstmt *body = st(out, add(mul(ld(x, add(V(i), I(1))), ld(s, I(3))), F(1.0)), V(i));
    mt_tfunc *g = mt_tir_simplify(A, mt_tir_vectorize(A, func_of(ps, 3, vloop(i, 100, body))));
    ASSERT_TEXT(mt_tfunc_print(A, g),
                "@T.prim_func\n"
                "def f(x: T.Buffer((101,), \"float32\"), s: T.Buffer((4,), \"float32\"), out: T.Buffer((100,), \"float32\")):\n"
                "    for i in range(6):\n"
                "        out[T.Ramp(i * 16, 1, 16)] = x[T.Ramp(1 + i * 16, 1, 16)] * s[3] + 1.0\n"
                "    for i_1 in range(4):\n"
                "        out[96 + i_1] = x[96 + i_1 + 1] * s[3] + 1.0\n");
    TIR_GUARD_END();
}

/* float64 and a let: 8 lanes, the let is a vector, no tail for 32. */
static void test_float64_let(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = bufd("x", MT_FLOAT64, 32), *out = bufd("out", MT_FLOAT64, 32);
    mt_tvar *i = ivar("i"), *t = mt_tvar_new(A, "t", MT_FLOAT64);
    mt_tbuffer *ps[2] = {x, out};
    mt_texpr *tv = V(t);
    mt_tstmt *body = mt_ts_let(A, t, ld(x, V(i)), st(out, bin(TE_MUL, tv, tv), V(i)));
    mt_tfunc *g = mt_tir_simplify(A, mt_tir_vectorize(A, func_of(ps, 2, vloop(i, 32, body))));
    ASSERT_TEXT(mt_tfunc_print(A, g),
                "@T.prim_func\n"
                "def f(x: T.Buffer((32,), \"float64\"), out: T.Buffer((32,), \"float64\")):\n"
                "    for i in range(4):\n"
                "        t = x[T.Ramp(i * 8, 1, 8)]\n"
                "        out[T.Ramp(i * 8, 1, 8)] = t * t\n");
    TIR_GUARD_END();
}

/* out[i] = x[i * 3 + 1] over 40: a strided read (a row of a transposed
 * tile) is a T.Ramp of step 3, the store stays contiguous; 2 vectors of 16
 * and a tail of 8. A step beyond 2^24 is left alone. */
static void test_strided_load(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 121), *out = buf1("out", 40);
    mt_tvar *i = ivar("i");
    mt_tbuffer *ps[2] = {x, out};
    mt_tstmt *body = st(out, ld(x, add(mul(V(i), I(3)), I(1))), V(i));
    mt_tfunc *g = mt_tir_simplify(A, mt_tir_vectorize(A, func_of(ps, 2, vloop(i, 40, body))));
    ASSERT_TEXT(mt_tfunc_print(A, g),
                "@T.prim_func\n"
                "def f(x: T.Buffer((121,), \"float32\"), out: T.Buffer((40,), \"float32\")):\n"
                "    for i in range(2):\n"
                "        out[T.Ramp(i * 16, 1, 16)] = x[T.Ramp(1 + i * 16 * 3, 3, 16)]\n"
                "    for i_1 in range(8):\n"
                "        out[32 + i_1] = x[(32 + i_1) * 3 + 1]\n");
    mt_tvar *j = ivar("j");
    mt_tfunc *f = func_of(ps, 2, vloop(j, 40, st(out, ld(x, mul(V(j), I((int64_t)1 << 25))), V(j))));
    assert_ptr_equal(mt_tir_vectorize(A, f), f);
    TIR_GUARD_END();
}

/* Loops the pass must leave exactly as they are. */
static void test_left_alone(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 256), *out = buf1("out", 256);
    mt_tbuffer *ps[2] = {x, out};
    mt_tvar *i = ivar("i");
    mt_tstmt *cases[7];
    /* the variable as a value */
    cases[0] = vloop(i, 64, st(out, mt_te_cast(A, MT_FLOAT32, V(i)), V(i)));
    /* a strided write (a scatter) */
    cases[1] = vloop(i, 64, st(out, ld(x, V(i)), mul(V(i), I(2))));
    /* the same element for every lane */
    cases[2] = vloop(i, 64, st(out, ld(x, V(i)), I(0)));
    /* a stored buffer read at another element */
    cases[3] = vloop(i, 64, st(out, ld(out, add(V(i), I(1))), V(i)));
    /* not innermost */
    mt_tvar *j = ivar("j");
    cases[4] = vloop(i, 4, mt_ts_for(A, j, I(0), I(16), MT_FOR_SERIAL,
                                     st(out, ld(x, add(mul(V(i), I(16)), V(j))), add(mul(V(i), I(16)), V(j)))));
    /* a serial loop */
    cases[5] = mt_ts_for(A, i, I(0), I(64), MT_FOR_SERIAL, st(out, ld(x, V(i)), V(i)));
    /* two elements of one buffer per iteration (lane k's second store and
     * lane k + 1's first hit the same element) */
    cases[6] = vloop(i, 64, seq2(st(out, ld(x, V(i)), V(i)), st(out, F(0.0), add(V(i), I(1)))));
    for (int c = 0; c < 7; c++) {
        mt_tfunc *f = func_of(ps, 2, cases[c]);
        if (mt_tir_vectorize(A, f) != f) fail_msg("case %d was rewritten", c);
    }
    /* int8 buffers: not taken (LLVM's vectorizer gets them) */
    mt_tbuffer *b8 = bufd("b", MT_INT8, 64), *o8 = bufd("o", MT_INT8, 64);
    mt_tbuffer *p8[2] = {b8, o8};
    mt_tfunc *f = func_of(p8, 2, vloop(i, 64, st(o8, ld(b8, V(i)), V(i))));
    assert_ptr_equal(mt_tir_vectorize(A, f), f);
    TIR_GUARD_END();
}

/* An index through a let bound in the loop: j = idx[i] is a vector, so x[j]
 * is a gather and out[j + i] a scatter; neither is `b + i` with b free of
 * i. Rewriting x[j] as an invariant (scalar) load gave a load whose index
 * is a vector with one lane. */
static void test_let_in_index(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 256), *out = buf1("out", 256), *idx = bufd("idx", MT_INT64, 256);
    mt_tbuffer *ps[3] = {x, idx, out};
    for (int c = 0; c < 2; c++) {
        mt_tvar *i = ivar("i"), *j = ivar("j");
        mt_tstmt *use = c == 0 ? st(out, ld(x, V(j)), V(i)) : st(out, F(1.0), add(V(j), V(i)));
        mt_tfunc *f = func_of(ps, 3, vloop(i, 64, mt_ts_let(A, j, ld(idx, V(i)), use)));
        if (mt_tir_vectorize(A, f) != f) fail_msg("case %d was rewritten", c);
    }
    TIR_GUARD_END();
}

typedef struct var_scan {
    const mt_tvar *var;
    bool found;
} var_scan;

static void scan_var(mt_tvisitor *t, const mt_texpr *e) {
    var_scan *vs = t->ctx;
    if (e->kind == TE_VAR && e->var == vs->var) vs->found = true;
    mt_tvisit_expr_children(t, e);
}

static bool stmt_uses_var(const mt_tstmt *s, const mt_tvar *x) {
    var_scan vs = {x, false};
    mt_tvisitor t = {scan_var, NULL, &vs};
    mt_tvisit_stmt(&t, s);
    return vs.found;
}

/* An index with i in it but step 0 (x[i - i], x[i * 0]): the vector loop
 * must not keep the old variable, which it no longer binds. */
static void test_step_zero_uses_i(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 64), *out = buf1("out", 64);
    mt_tbuffer *ps[2] = {x, out};
    for (int c = 0; c < 2; c++) {
        mt_tvar *i = ivar("i");
        mt_texpr *idx = c == 0 ? sub(V(i), V(i)) : mul(V(i), I(0));
        mt_tfunc *f = func_of(ps, 2, vloop(i, 64, st(out, ld(x, idx), V(i))));
        mt_tfunc *g = mt_tir_vectorize(A, f);
        if (g != f && stmt_uses_var(g->body, i)) fail_msg("case %d: the vector loop uses the old variable", c);
    }
    TIR_GUARD_END();
}

/* In-place: a buffer read and written at the same element is fine. */
static void test_in_place(void **state) {
    TIR_GUARD();
    mt_tbuffer *out = buf1("out", 32);
    mt_tbuffer *ps[1] = {out};
    mt_tvar *i = ivar("i");
    mt_tfunc *f = func_of(ps, 1, vloop(i, 32, st(out, mul(ld(out, V(i)), F(2.0)), V(i))));
    ASSERT_TEXT(mt_tfunc_print(A, mt_tir_simplify(A, mt_tir_vectorize(A, f))),
                "@T.prim_func\n"
                "def f(out: T.Buffer((32,), \"float32\")):\n"
                "    for i in range(2):\n"
                "        out[T.Ramp(i * 16, 1, 16)] = out[T.Ramp(i * 16, 1, 16)] * 2.0\n");
    TIR_GUARD_END();
}

/* Iterations a loop nest runs, counting loops with constant extents (a
 * negative extent runs none); -1 when an extent is not a constant. */
static int64_t trips(const mt_tstmt *s) {
    int64_t n = 0, e, k;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->nstmts; i++) {
            if ((k = trips(s->stmts[i])) < 0) return -1;
            n += k;
        }
        return n;
    case TS_FOR:
        if (!mt_te_is_const_int(s->extent, &e) || (k = trips(s->body)) < 0) return -1;
        return e > 0 ? e * k : 0;
    default: return 1;
    }
}

/* A loop with a negative extent runs no iteration, as before the pass: the
 * tail must not run n % L of them (-3 % 16 = 13 stores at -16 .. -4). */
static void test_negative_extent(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 64), *out = buf1("out", 64);
    mt_tbuffer *ps[2] = {x, out};
    int64_t exts[4] = {-3, -16, -17, 0};
    for (int c = 0; c < 4; c++) {
        mt_tvar *i = ivar("i");
        mt_tfunc *f = func_of(ps, 2, vloop(i, exts[c], st(out, ld(x, V(i)), V(i))));
        mt_tfunc *g = mt_tir_simplify(A, mt_tir_vectorize(A, f));
        int64_t n = trips(g->body);
        if (n != 0) fail_msg("extent %lld: %lld iterations", (long long)exts[c], (long long)n);
    }
    TIR_GUARD_END();
}

/* Short loops take the widest vector they fill, down to 16 bytes: 8
 * float32 one 8-lane step; a split's T.min(8, ..) 8 lanes with a tail; 6
 * a 4-lane step and two scalars; 3 stays scalar. */
static void test_short_loops(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 64), *out = buf1("out", 64);
    mt_tbuffer *ps[2] = {x, out};
    mt_tvar *i = ivar("i");
    mt_tstmt *body = st(out, mul(ld(x, V(i)), F(2.0)), V(i));
    mt_tfunc *g = mt_tir_simplify(A, mt_tir_vectorize(A, func_of(ps, 2, vloop(i, 8, body))));
    assert_non_null(strstr(mt_tfunc_print(A, g), "    for i in range(1):\n        out[T.Ramp(i * 8, 1, 8)] = x[T.Ramp(i * 8, 1, 8)] * 2.0\n"));
    g = mt_tir_simplify(A, mt_tir_vectorize(A, func_of(ps, 2, vloop(i, 6, body))));
    ASSERT_TEXT(mt_tfunc_print(A, g),
                "@T.prim_func\n"
                "def f(x: T.Buffer((64,), \"float32\"), out: T.Buffer((64,), \"float32\")):\n"
                "    for i in range(1):\n"
                "        out[T.Ramp(i * 4, 1, 4)] = x[T.Ramp(i * 4, 1, 4)] * 2.0\n"
                "    for i_1 in range(2):\n"
                "        out[4 + i_1] = x[4 + i_1] * 2.0\n");
    mt_tfunc *f3 = func_of(ps, 2, vloop(i, 3, body));
    assert_null(strstr(mt_tfunc_print(A, mt_tir_vectorize(A, f3)), "T.Ramp"));
    mt_tvar *o = ivar("o");
    mt_texpr *ext = bin(TE_MIN, I(8), sub(I(60), mul(V(o), I(8))));
    mt_tstmt *in = mt_ts_for(A, i, I(0), ext, MT_FOR_VECTORIZED,
                             st(out, mul(ld(x, add(mul(V(o), I(8)), V(i))), F(2.0)), add(mul(V(o), I(8)), V(i))));
    g = mt_tir_vectorize(A, func_of(ps, 2, mt_ts_for(A, o, I(0), I(8), MT_FOR_SERIAL, in)));
    assert_non_null(strstr(mt_tfunc_print(A, g), "T.Ramp(o * 8 + i * 8, 1, 8)"));
    TIR_GUARD_END();
}

/* A loop folding into one element (a vectorized reduce loop): a local of
 * 16 lanes takes the first vector and F of the next ones (unrolled: a few
 * of them), is folded in a tree of 8, 4, 2, 1 lanes into the element, and
 * the tail is scalar; with a symbolic extent the vectors are under
 * `if n // 16 > 0`; a max starts its lanes from the element itself. Not taken: e reading the element's buffer, e free of
 * i, an F that is not a combiner, a GPU target. */
static void test_reduction(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 256), *s = buf1("s", 4);
    mt_tbuffer *ps[2] = {x, s};
    mt_tvar *i = ivar("i");
    mt_tstmt *body = st(s, add(ld(s, I(1)), ld(x, V(i))), I(1));
    mt_tfunc *g = mt_tir_simplify(A, mt_tir_vectorize(A, func_of(ps, 2, vloop(i, 100, body))));
    ASSERT_TEXT(mt_tfunc_print(A, g),
                "@T.prim_func\n"
                "def f(x: T.Buffer((256,), \"float32\"), s: T.Buffer((4,), \"float32\")):\n"
                "    s_lanes = T.alloc_buffer((16,), \"float32\", scope=\"local\")\n"
                "    s_lanes[T.Ramp(0, 1, 16)] = x[T.Ramp(0, 1, 16)]\n"
                "    for i in T.unroll(1, 6):\n"
                "        s_lanes[T.Ramp(0, 1, 16)] = s_lanes[T.Ramp(0, 1, 16)] + x[T.Ramp(i * 16, 1, 16)]\n"
                "    s_lanes[T.Ramp(0, 1, 8)] = s_lanes[T.Ramp(0, 1, 8)] + s_lanes[T.Ramp(8, 1, 8)]\n"
                "    s_lanes[T.Ramp(0, 1, 4)] = s_lanes[T.Ramp(0, 1, 4)] + s_lanes[T.Ramp(4, 1, 4)]\n"
                "    s_lanes[T.Ramp(0, 1, 2)] = s_lanes[T.Ramp(0, 1, 2)] + s_lanes[T.Ramp(2, 1, 2)]\n"
                "    s_lanes[0] = s_lanes[0] + s_lanes[1]\n"
                "    s[1] = s[1] + s_lanes[0]\n"
                "    for i_1 in range(4):\n"
                "        s[1] = s[1] + x[96 + i_1]\n");
    /* max over a symbolic extent */
    mt_tvar *n = ivar("n");
    mt_tstmt *mx = st(s, bin(TE_MAX, ld(x, V(i)), ld(s, I(0))), I(0));
    g = mt_tir_vectorize(A, func_of(ps, 2, mt_ts_for(A, i, I(0), V(n), MT_FOR_VECTORIZED, mx)));
    const char *t = mt_tfunc_print(A, g);
    if (!strstr(t, "if T.max(n, 0) // 16 > 0:") || !strstr(t, "T.max(x[T.Ramp(i * 16, 1, 16)], s_lanes[T.Ramp(0, 1, 16)])") ||
        !strstr(t, "s_lanes[T.Ramp(0, 1, 16)] = T.Broadcast(s[0], 16)") || !strstr(t, "for i in range(T.max(n, 0) // 16):") ||
        !strstr(t, "for i_1 in range(T.max(n, 0) % 16):"))
        fail_msg("unexpected:\n%s", t);
    /* a split's clamped extent T.min(8, 60 - o * 8): 8 lanes, as the loop's bound */
    mt_tvar *o = ivar("o");
    mt_tstmt *cl = mt_ts_for(A, i, I(0), bin(TE_MIN, I(8), sub(I(60), mul(V(o), I(8)))), MT_FOR_VECTORIZED,
                             st(s, add(ld(s, I(1)), ld(x, add(mul(V(o), I(8)), V(i)))), I(1)));
    t = mt_tfunc_print(A, mt_tir_vectorize(A, func_of(ps, 2, mt_ts_for(A, o, I(0), I(8), MT_FOR_SERIAL, cl))));
    if (!strstr(t, "s_lanes = T.alloc_buffer((8,)") || !strstr(t, "x[T.Ramp(o * 8 + i * 8, 1, 8)]")) fail_msg("unexpected:\n%s", t);
    /* left alone */
    mt_tstmt *cases[3] = {
        st(s, add(ld(s, I(1)), mul(ld(s, I(1)), ld(x, V(i)))), I(1)), /* e reads s */
        st(s, add(ld(s, I(1)), F(1.0)), I(1)),                         /* e free of i */
        st(s, mul(ld(s, I(1)), ld(x, V(i))), I(1)),                    /* a product: not a combiner */
    };
    for (int c = 0; c < 3; c++) {
        mt_tfunc *f = func_of(ps, 2, vloop(i, 64, cases[c]));
        if (mt_tir_vectorize(A, f) != f) fail_msg("case %d was rewritten", c);
    }
    mt_tfunc *f = func_of(ps, 2, vloop(i, 64, body));
    mt_target_desc gpu;
    assert_true(mt_target_cuda(&gpu, "sm_90"));
    f->target = &gpu;
    assert_ptr_equal(mt_tir_vectorize(A, f), f);
    TIR_GUARD_END();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_float32_with_tail),
        TIR_TEST(test_short_loops),
        TIR_TEST(test_float64_let),
        TIR_TEST(test_strided_load),
        TIR_TEST(test_left_alone),
        TIR_TEST(test_in_place),
        TIR_TEST(test_negative_extent),
        TIR_TEST(test_let_in_index),
        TIR_TEST(test_step_zero_uses_i),
        TIR_TEST(test_reduction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
