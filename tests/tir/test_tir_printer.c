/*
 * test_tir_printer.c -- golden text of the @T.prim_func printer.
 */
#include "tir/tir_test.h"

/* out = a + b + a over (2, 3), the shape fusion produces. */
static void test_print_elementwise(void **state) {
    TIR_GUARD();
    mt_tbuffer *a = buf2("a", 2, 3), *b = buf2("b", 2, 3), *out = buf2("out", 2, 3);
    nest n;
    nest_init(&n, "SS", I(2), I(3));
    n.reads[n.nreads++] = point(a, n.v[0], n.v[1]);
    n.reads[n.nreads++] = point(b, n.v[0], n.v[1]);
    n.writes[n.nwrites++] = point(out, n.v[0], n.v[1]);
    mt_texpr *val = add(add(ld(a, n.v[0], n.v[1]), ld(b, n.v[0], n.v[1])), ld(a, n.v[0], n.v[1]));
    mt_tfunc *f = mt_tfunc_new(A, "fused_add_add");
    mt_tfunc_add_param(A, f, a, NULL);
    mt_tfunc_add_param(A, f, b, NULL);
    mt_tfunc_add_param(A, f, out, NULL);
    f->num_outputs = 1;
    f->body = nest_build(&n, "add", st(out, val, n.v[0], n.v[1]));
    ASSERT_TEXT(mt_tfunc_print(A, f),
                "@T.prim_func\n"
                "def fused_add_add(a: T.Buffer((2, 3), \"float32\"), b: T.Buffer((2, 3), \"float32\"), out: T.Buffer((2, 3), \"float32\")):\n"
                "    for i0, i1 in T.grid(2, 3):\n"
                "        with T.block(\"add\"):\n"
                "            v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
                "            T.reads(a[v0, v1], b[v0, v1])\n"
                "            T.writes(out[v0, v1])\n"
                "            out[v0, v1] = a[v0, v1] + b[v0, v1] + a[v0, v1]\n");
    TIR_GUARD_END();
}

/* Row sums: a reduce iter var, T.init, a read region over a whole row. */
static void test_print_reduction(void **state) {
    TIR_GUARD();
    mt_tbuffer *a = buf2("a", 4, 8), *out = buf1("out", 4);
    nest n;
    nest_init(&n, "SR", I(4), I(8));
    mt_texpr *mins[2] = {n.v[0], I(0)}, *exts[2] = {I(1), I(8)};
    n.reads[n.nreads++] = region(a, mins, exts);
    n.writes[n.nwrites++] = point(out, n.v[0]);
    n.init = st(out, F(0.0), n.v[0]);
    mt_tfunc *f = mt_tfunc_new(A, "sum_rows");
    mt_tfunc_add_param(A, f, a, NULL);
    mt_tfunc_add_param(A, f, out, NULL);
    f->body = nest_build(&n, "sum", st(out, add(ld(out, n.v[0]), ld(a, n.v[0], n.v[1])), n.v[0]));
    ASSERT_TEXT(mt_tfunc_print(A, f),
                "@T.prim_func\n"
                "def sum_rows(a: T.Buffer((4, 8), \"float32\"), out: T.Buffer((4,), \"float32\")):\n"
                "    for i0, i1 in T.grid(4, 8):\n"
                "        with T.block(\"sum\"):\n"
                "            v0, v1 = T.axis.remap(\"SR\", [i0, i1])\n"
                "            T.reads(a[v0, 0:8])\n"
                "            T.writes(out[v0])\n"
                "            with T.init():\n"
                "                out[v0] = 0.0\n"
                "            out[v0] = out[v0] + a[v0, v1]\n");
    TIR_GUARD_END();
}

/* Symbolic dims, a scalar param, attrs, a fused loop bound by
 * T.axis.spatial, T.where, a parallel and a vectorized loop. */
static void test_print_symbolic(void **state) {
    TIR_GUARD();
    mt_tvar *nv = ivar("n");
    mt_texpr *xs[2] = {V(nv), I(784)};
    mt_tbuffer *x = mt_tbuffer_new(A, "x", MT_FLOAT32, 2, xs);
    mt_tbuffer *y = mt_tbuffer_new(A, "y", MT_FLOAT32, 2, xs);
    mt_tvar *alpha = mt_tvar_new(A, "alpha", MT_FLOAT32);
    mt_tfunc *f = mt_tfunc_new(A, "scale");
    mt_tfunc_add_param(A, f, x, NULL);
    mt_tfunc_add_param(A, f, NULL, alpha);
    mt_tfunc_add_param(A, f, y, NULL);
    f->num_outputs = 1;
    f->sym_vars = MT_NEW_ARRAY(A, mt_tvar *, 1);
    f->sym_vars[0] = nv;
    f->nsym = 1;
    f->attrs = MT_NEW_ARRAY(A, mt_tattr, 2);
    f->attrs[0] = (mt_tattr){"global_symbol", "scale"};
    f->attrs[1] = (mt_tattr){"tir.noalias", "True"};
    f->nattrs = 2;

    mt_tvar *io = ivar("i_o"), *ii = ivar("i_i"), *j = ivar("j");
    mt_tvar *v0 = ivar("v0"), *v1 = ivar("v1");
    mt_texpr *fused = add(mul(V(io), I(4)), V(ii));
    mt_tstmt *blk = mt_ts_block(A, "scale");
    blk->niters = 2;
    blk->iters = MT_NEW_ARRAY(A, mt_titer, 2);
    blk->iters[0] = (mt_titer){v0, V(nv), MT_ITER_SPATIAL};
    blk->iters[1] = (mt_titer){v1, I(784), MT_ITER_SPATIAL};
    blk->iter_values = MT_NEW_ARRAY(A, mt_texpr *, 2);
    blk->iter_values[0] = fused;
    blk->iter_values[1] = V(j);
    blk->predicate = bin(TE_LT, fused, V(nv));
    blk->reads = MT_NEW_ARRAY(A, mt_tregion, 1);
    blk->reads[0] = point(x, V(v0), V(v1));
    blk->nreads = 1;
    blk->writes = MT_NEW_ARRAY(A, mt_tregion, 1);
    blk->writes[0] = point(y, V(v0), V(v1));
    blk->nwrites = 1;
    blk->body = st(y, mul(ld(x, V(v0), V(v1)), V(alpha)), V(v0), V(v1));
    mt_texpr *outer = bin(TE_FLOORDIV, add(V(nv), I(3)), I(4));
    mt_tstmt *s = mt_ts_for(A, j, I(0), I(784), MT_FOR_VECTORIZED, blk);
    s = mt_ts_for(A, ii, I(0), I(4), MT_FOR_SERIAL, s);
    f->body = mt_ts_for(A, io, I(0), outer, MT_FOR_PARALLEL, s);
    ASSERT_TEXT(mt_tfunc_print(A, f),
                "@T.prim_func\n"
                "def scale(x: T.Buffer((\"n\", 784), \"float32\"), alpha: T.float32, y: T.Buffer((\"n\", 784), \"float32\")):\n"
                "    T.func_attr({\"global_symbol\": \"scale\", \"tir.noalias\": \"True\"})\n"
                "    for i_o in T.parallel((n + 3) // 4):\n"
                "        for i_i in range(4):\n"
                "            for j in T.vectorized(784):\n"
                "                with T.block(\"scale\"):\n"
                "                    v0 = T.axis.spatial(n, i_o * 4 + i_i)\n"
                "                    v1 = T.axis.spatial(784, j)\n"
                "                    T.where(i_o * 4 + i_i < n)\n"
                "                    T.reads(x[v0, v1])\n"
                "                    T.writes(y[v0, v1])\n"
                "                    y[v0, v1] = x[v0, v1] * alpha\n");
    TIR_GUARD_END();
}

/* A rank-0 buffer, a loop not starting at 0, a thread binding, unroll. */
static void test_print_rank0_and_loops(void **state) {
    TIR_GUARD();
    mt_tbuffer *s = mt_tbuffer_new(A, "s", MT_INT32, 0, NULL);
    mt_tbuffer *a = mt_tbuffer_new_const(A, "a", MT_INT32, 1, (int64_t[]){16});
    mt_tfunc *f = mt_tfunc_new(A, "total");
    mt_tfunc_add_param(A, f, a, NULL);
    mt_tfunc_add_param(A, f, s, NULL);
    mt_tvar *t = ivar("tx"), *i = ivar("i"), *k = ivar("k");
    mt_tstmt *body = mt_ts_store(A, s, NULL, 0, bin(TE_ADD, ld(s), ld(a, add(V(i), V(k)))));
    body = mt_ts_for(A, k, I(0), I(2), MT_FOR_UNROLLED, body);
    body = mt_ts_for(A, i, I(2), I(14), MT_FOR_SERIAL, body);
    mt_tstmt *init = mt_ts_store(A, s, NULL, 0, mt_te_int(A, MT_INT32, 0));
    body = seq2(init, body);
    body = mt_ts_for(A, t, I(0), I(1), MT_FOR_THREAD, body);
    body->thread_tag = "threadIdx.x";
    f->body = body;
    ASSERT_TEXT(mt_tfunc_print(A, f),
                "@T.prim_func\n"
                "def total(a: T.Buffer((16,), \"int32\"), s: T.Buffer((), \"int32\")):\n"
                "    for tx in T.thread_binding(1, thread=\"threadIdx.x\"):\n"
                "        s[()] = T.int32(0)\n"
                "        for i in range(2, 16):\n"
                "            for k in T.unroll(2):\n"
                "                s[()] = s[()] + a[i + k]\n");
    TIR_GUARD_END();
}

/* The lowered form: allocations, lets, ifs, evaluate, casts, intrinsics. */
static void test_print_lowered(void **state) {
    TIR_GUARD();
    mt_tbuffer *a = buf1("a", 6), *out = buf1("out", 6);
    mt_tbuffer *tmp = buf1("tmp", 6);
    tmp->scope = MT_SCOPE_LOCAL;
    mt_tfunc *f = mt_tfunc_new(A, "lowered");
    mt_tfunc_add_param(A, f, a, NULL);
    mt_tfunc_add_param(A, f, out, NULL);
    mt_tvar *i = ivar("i"), *x = mt_tvar_new(A, "x", MT_FLOAT32);
    mt_texpr *e = mt_te_call(A, IN_EXP, (mt_texpr *[]){ld(a, V(i))}, 1);
    mt_tstmt *then_s = st(tmp, V(x), V(i));
    mt_texpr *d = mt_te_cast(A, MT_FLOAT32, mt_te_cast(A, MT_FLOAT64, V(x)));
    mt_tstmt *else_s =
        st(tmp, mt_te_select(A, bin(TE_GT, V(x), F(0.5)), d, F(-1.0)), V(i));
    mt_tstmt *ifs = mt_ts_if(A, bin(TE_LT, V(i), I(3)), then_s, else_s);
    mt_tstmt *loop1 = mt_ts_for(A, i, I(0), I(6), MT_FOR_SERIAL, mt_ts_let(A, x, e, ifs));
    mt_tvar *j = ivar("j");
    mt_texpr *mx = bin(TE_MAX, ld(tmp, V(j)), mt_te_float(A, MT_FLOAT32, 1e-5));
    mt_tstmt *loop2 = mt_ts_for(A, j, I(0), I(6), MT_FOR_SERIAL, st(out, mx, V(j)));
    mt_tstmt *ev = mt_ts_eval(A, mt_te_int(A, MT_INT32, 0));
    mt_tstmt *parts[3] = {loop1, loop2, ev};
    f->body = mt_ts_alloc(A, tmp, mt_ts_seq(A, parts, 3));
    ASSERT_TEXT(mt_tfunc_print(A, f),
                "@T.prim_func\n"
                "def lowered(a: T.Buffer((6,), \"float32\"), out: T.Buffer((6,), \"float32\")):\n"
                "    tmp = T.alloc_buffer((6,), \"float32\", scope=\"local\")\n"
                "    for i in range(6):\n"
                "        x = T.exp(a[i])\n"
                "        if i < 3:\n"
                "            tmp[i] = x\n"
                "        else:\n"
                "            tmp[i] = T.Select(x > 0.5, T.Cast(\"float32\", T.Cast(\"float64\", x)), -1.0)\n"
                "    for j in range(6):\n"
                "        out[j] = T.max(tmp[j], 1e-05)\n"
                "    T.evaluate(T.int32(0))\n");
    TIR_GUARD_END();
}

/* Distinct objects with one name get _1, _2 in order of appearance; names
 * that are not identifiers or that are reserved are not handed out. */
static void test_print_unique_names(void **state) {
    TIR_GUARD();
    mt_tbuffer *a = buf1("a", 4), *a2 = buf1("a", 4), *t = buf1("T", 4);
    mt_tfunc *f = mt_tfunc_new(A, "names");
    mt_tfunc_add_param(A, f, a, NULL);
    mt_tfunc_add_param(A, f, a2, NULL);
    mt_tfunc_add_param(A, f, t, NULL);
    mt_tvar *i1 = ivar("i"), *i2 = ivar("i"), *i3 = ivar("i_1"), *kw = ivar("for");
    mt_tvar *odd = ivar("x.y");
    mt_tstmt *l1 = mt_ts_for(A, i1, I(0), I(4), MT_FOR_SERIAL, st(a, ld(a2, V(i1)), V(i1)));
    mt_tstmt *l2 = mt_ts_for(A, i2, I(0), I(4), MT_FOR_SERIAL, st(t, ld(a, V(i2)), V(i2)));
    mt_tstmt *l3 = mt_ts_for(A, i3, I(0), I(4), MT_FOR_SERIAL,
                             mt_ts_let(A, kw, V(i3), mt_ts_let(A, odd, V(kw), st(a2, F(1), V(odd)))));
    mt_tstmt *parts[3] = {l1, l2, l3};
    f->body = mt_ts_seq(A, parts, 3);
    ASSERT_TEXT(mt_tfunc_print(A, f),
                "@T.prim_func\n"
                "def names(a: T.Buffer((4,), \"float32\"), a_1: T.Buffer((4,), \"float32\"), T_1: T.Buffer((4,), \"float32\")):\n"
                "    for i in range(4):\n"
                "        a[i] = a_1[i]\n"
                "    for i_1 in range(4):\n"
                "        T_1[i_1] = a[i_1]\n"
                "    for i_1_1 in range(4):\n"
                "        for_1 = i_1_1\n"
                "        x_y = for_1\n"
                "        a_1[x_y] = 1.0\n");
    TIR_GUARD_END();
}

/* Many objects of one name: each new one resumes the suffix search where
 * the last one stopped. Probing _1, _2, ... from 1 for each made printing n
 * of them quadratic (20,000 loops of one variable name: 2 * 10^8 probes;
 * the matmul rule's micro-kernels have hundreds of `xb`s). */
static void test_print_many_names(void **state) {
    TIR_GUARD();
    enum { N = 20000 };
    mt_tbuffer *a = buf1("a", 4);
    mt_tfunc *f = mt_tfunc_new(A, "many");
    mt_tfunc_add_param(A, f, a, NULL);
    mt_tstmt **loops = MT_NEW_ARRAY(A, mt_tstmt *, N);
    for (int k = 0; k < N; k++) {
        mt_tvar *x = ivar(k == 0 ? "xb_3" : "xb"); /* first, a name that looks like a suffix */
        loops[k] = mt_ts_for(A, x, I(0), I(4), MT_FOR_SERIAL, st(a, F(1), V(x)));
    }
    f->body = mt_ts_seq(A, loops, N);
    const char *text = mt_tfunc_print(A, f);
    assert_non_null(strstr(text, ":\n    for xb_3 in range(4):\n        a[xb_3] = 1.0\n"
                                 "    for xb in range(4):\n"));
    assert_non_null(strstr(text, "    for xb_2 in range(4):\n        a[xb_2] = 1.0\n"
                                 "    for xb_4 in range(4):\n")); /* xb_3 was taken */
    assert_non_null(strstr(text, "    for xb_19999 in range(4):\n        a[xb_19999] = 1.0\n"));
    assert_null(strstr(text, "xb_20000"));
    TIR_GUARD_END();
}

/* Python precedence decides parentheses. */
static void test_print_precedence(void **state) {
    TIR_GUARD();
    mt_tvar *av = ivar("a"), *bv = ivar("b"), *cv = ivar("c");
    mt_texpr *a = V(av), *b = V(bv), *c = V(cv);
    ASSERT_TEXT(mt_texpr_print(A, mul(add(a, b), c)), "(a + b) * c");
    ASSERT_TEXT(mt_texpr_print(A, add(a, mul(b, c))), "a + b * c");
    ASSERT_TEXT(mt_texpr_print(A, sub(sub(a, b), c)), "a - b - c");
    ASSERT_TEXT(mt_texpr_print(A, sub(a, sub(b, c))), "a - (b - c)");
    ASSERT_TEXT(mt_texpr_print(A, add(a, add(b, c))), "a + (b + c)");
    ASSERT_TEXT(mt_texpr_print(A, bin(TE_FLOORDIV, a, mul(b, c))), "a // (b * c)");
    ASSERT_TEXT(mt_texpr_print(A, bin(TE_FLOORMOD, mul(a, b), c)), "a * b % c");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_unary(A, TE_NEG, add(a, b))), "-(a + b)");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_unary(A, TE_NEG, mt_te_unary(A, TE_NEG, a))), "-(-a)");
    ASSERT_TEXT(mt_texpr_print(A, mul(a, I(-3))), "a * -3");
    ASSERT_TEXT(mt_texpr_print(A, mul(I(-3), a)), "-3 * a");
    ASSERT_TEXT(mt_texpr_print(A, bin(TE_DIV, a, b)), "T.truncdiv(a, b)");
    mt_texpr *lt = bin(TE_LT, a, b), *ge = bin(TE_GE, b, c);
    ASSERT_TEXT(mt_texpr_print(A, bin(TE_AND, lt, ge)), "a < b and b >= c");
    ASSERT_TEXT(mt_texpr_print(A, bin(TE_EQ, lt, ge)), "(a < b) == (b >= c)");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_unary(A, TE_NOT, bin(TE_OR, lt, ge))),
                "not (a < b or b >= c)");
    ASSERT_TEXT(mt_texpr_print(A, bin(TE_OR, bin(TE_AND, lt, ge), lt)), "a < b and b >= c or a < b");
    ASSERT_TEXT(mt_texpr_print(A, bin(TE_AND, lt, bin(TE_OR, ge, lt))), "a < b and (b >= c or a < b)");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_unary(A, TE_NOT, mt_te_unary(A, TE_NOT, lt))), "not not a < b");
    ASSERT_TEXT(mt_texpr_print(A, bin(TE_MIN, add(a, b), c)), "T.min(a + b, c)");
    TIR_GUARD_END();
}

/* Immediates of every dtype. */
static void test_print_immediates(void **state) {
    TIR_GUARD();
    ASSERT_TEXT(mt_texpr_print(A, F(1.5)), "1.5");
    ASSERT_TEXT(mt_texpr_print(A, F(2)), "2.0");
    ASSERT_TEXT(mt_texpr_print(A, F(-0.0)), "-0.0");
    ASSERT_TEXT(mt_texpr_print(A, F((float)0.1)), "0.100000001");
    ASSERT_TEXT(mt_texpr_print(A, F(1e20)), "1e+20");
    ASSERT_TEXT(mt_texpr_print(A, F(1e30f)), "1.00000002e+30");
    ASSERT_TEXT(mt_texpr_print(A, F(HUGE_VAL)), "T.float32(\"inf\")");
    ASSERT_TEXT(mt_texpr_print(A, F(-HUGE_VAL)), "T.float32(\"-inf\")");
    ASSERT_TEXT(mt_texpr_print(A, F(NAN)), "T.float32(\"nan\")");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_float(A, MT_FLOAT64, 0.1)), "T.float64(0.1)");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_float(A, MT_FLOAT64, 1.0 / 3)),
                "T.float64(0.3333333333333333)");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_float(A, MT_FLOAT64, 3)), "T.float64(3.0)");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_float(A, MT_FLOAT16, 0.5)), "T.float16(0.5)");
    ASSERT_TEXT(mt_texpr_print(A, I(-9)), "-9");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_int(A, MT_INT32, -9)), "T.int32(-9)");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_int(A, MT_UINT8, 255)), "T.uint8(255)");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_int(A, MT_INT8, 7)), "T.int8(7)");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_int(A, MT_BOOL, 1)), "True");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_int(A, MT_BOOL, 0)), "False");
    ASSERT_TEXT(mt_texpr_print(A, mul(F(-1.5), F(2))), "-1.5 * 2.0");
    ASSERT_TEXT(mt_texpr_print(A, bin(TE_DIV, F(1), F(3))), "1.0 / 3.0");
    mt_texpr *r = mt_te_ramp(A, I(0), I(1), 4);
    ASSERT_TEXT(mt_texpr_print(A, r), "T.Ramp(0, 1, 4)");
    ASSERT_TEXT(mt_texpr_print(A, mt_te_broadcast(A, F(1), 4)), "T.Broadcast(1.0, 4)");
    mt_texpr *fma_args[3] = {F(1), F(2), F(3)};
    ASSERT_TEXT(mt_texpr_print(A, mt_te_call(A, IN_FMA, fma_args, 3)), "T.fma(1.0, 2.0, 3.0)");
    TIR_GUARD_END();
}

/* A grid stops where an inner extent uses an outer grid variable, and at a
 * loop that does not start at 0. */
static void test_print_grid_rules(void **state) {
    TIR_GUARD();
    mt_tbuffer *o = buf2("o", 4, 4);
    mt_tvar *i = ivar("i"), *j = ivar("j"), *k = ivar("k"), *l = ivar("l");
    mt_tstmt *s = st(o, F(0), V(k), V(l));
    s = mt_ts_for(A, l, I(0), add(V(k), I(1)), MT_FOR_SERIAL, s);
    s = mt_ts_for(A, k, I(0), I(4), MT_FOR_SERIAL, s);
    s = mt_ts_for(A, j, I(1), I(2), MT_FOR_SERIAL, s);
    s = mt_ts_for(A, i, I(0), I(2), MT_FOR_SERIAL, s);
    ASSERT_TEXT(mt_tstmt_print(A, s),
                "for i in range(2):\n"
                "    for j in range(1, 3):\n"
                "        for k in range(4):\n"
                "            for l in range(k + 1):\n"
                "                o[k, l] = 0.0\n");
    mt_tstmt *g = mt_ts_for(A, l, I(0), I(3), MT_FOR_SERIAL, st(o, F(0), V(k), V(l)));
    g = mt_ts_for(A, k, I(0), I(4), MT_FOR_SERIAL, g);
    g = mt_ts_for(A, i, V(j), I(4), MT_FOR_SERIAL, g);
    ASSERT_TEXT(mt_tstmt_print(A, g),
                "for i in range(j, j + 4):\n"
                "    for k, l in T.grid(4, 3):\n"
                "        o[k, l] = 0.0\n");
    ASSERT_TEXT(mt_tstmt_print(A, mt_ts_seq(A, NULL, 0)), "T.evaluate(0)\n");
    TIR_GUARD_END();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_print_elementwise),     TIR_TEST(test_print_reduction),
        TIR_TEST(test_print_symbolic),        TIR_TEST(test_print_rank0_and_loops),
        TIR_TEST(test_print_lowered),         TIR_TEST(test_print_unique_names),
        TIR_TEST(test_print_precedence),      TIR_TEST(test_print_immediates),
        TIR_TEST(test_print_grid_rules),      TIR_TEST(test_print_many_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
