/*
 * test_tir_passes.c -- before/after golden text for inline_producers,
 * lower_blocks, compact_buffers, flatten_buffers, partition, partition_tails and
 * remove_unit_loops, and the passes in
 * pipeline order (tir_cse has its own tests: test_tir_cse.c).
 */
#include "tir/tir_test.h"

#include <stdint.h>
#include "passes/registry.h"
#include "passes/tir/tir_passes.h"

static mt_tfunc *func3(const char *name, mt_tbuffer *p0, mt_tbuffer *p1, mt_tbuffer *p2) {
    mt_tfunc *f = mt_tfunc_new(A, name);
    mt_tfunc_add_param(A, f, p0, NULL);
    if (p1) mt_tfunc_add_param(A, f, p1, NULL);
    if (p2) mt_tfunc_add_param(A, f, p2, NULL);
    f->num_outputs = 1;
    return f;
}

static void add_alloc(mt_tfunc *f, mt_tbuffer *b) {
    mt_tbuffer **na = MT_NEW_ARRAY(A, mt_tbuffer *, f->nallocs + 1);
    if (f->nallocs) memcpy(na, f->allocs, sizeof(mt_tbuffer *) * (size_t)f->nallocs);
    na[f->nallocs++] = b;
    f->allocs = na;
}

/* t = a + b; out = t + a, as fusion leaves it. */
static mt_tfunc *fused_add_add(void) {
    mt_tbuffer *a = buf2("a", 2, 3), *b = buf2("b", 2, 3), *out = buf2("out", 2, 3);
    mt_tbuffer *t = buf2("t", 2, 3);
    mt_tfunc *f = func3("fused_add_add", a, b, out);
    add_alloc(f, t);
    nest n1, n2;
    nest_init(&n1, "SS", I(2), I(3));
    n1.reads[n1.nreads++] = point(a, n1.v[0], n1.v[1]);
    n1.reads[n1.nreads++] = point(b, n1.v[0], n1.v[1]);
    n1.writes[n1.nwrites++] = point(t, n1.v[0], n1.v[1]);
    mt_tstmt *s1 = nest_build(
        &n1, "add", st(t, add(ld(a, n1.v[0], n1.v[1]), ld(b, n1.v[0], n1.v[1])), n1.v[0], n1.v[1]));
    nest_init(&n2, "SS", I(2), I(3));
    n2.reads[n2.nreads++] = point(t, n2.v[0], n2.v[1]);
    n2.reads[n2.nreads++] = point(a, n2.v[0], n2.v[1]);
    n2.writes[n2.nwrites++] = point(out, n2.v[0], n2.v[1]);
    mt_tstmt *s2 = nest_build(
        &n2, "add_1", st(out, add(ld(t, n2.v[0], n2.v[1]), ld(a, n2.v[0], n2.v[1])), n2.v[0], n2.v[1]));
    f->body = seq2(s1, s2);
    return f;
}

static const char *FUSED_BEFORE =
    "@T.prim_func\n"
    "def fused_add_add(a: T.Buffer((2, 3), \"float32\"), b: T.Buffer((2, 3), \"float32\"), out: T.Buffer((2, 3), \"float32\")):\n"
    "    t = T.alloc_buffer((2, 3), \"float32\")\n"
    "    for i0, i1 in T.grid(2, 3):\n"
    "        with T.block(\"add\"):\n"
    "            v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
    "            T.reads(a[v0, v1], b[v0, v1])\n"
    "            T.writes(t[v0, v1])\n"
    "            t[v0, v1] = a[v0, v1] + b[v0, v1]\n"
    "    for i0_1, i1_1 in T.grid(2, 3):\n"
    "        with T.block(\"add_1\"):\n"
    "            v0_1, v1_1 = T.axis.remap(\"SS\", [i0_1, i1_1])\n"
    "            T.reads(t[v0_1, v1_1], a[v0_1, v1_1])\n"
    "            T.writes(out[v0_1, v1_1])\n"
    "            out[v0_1, v1_1] = t[v0_1, v1_1] + a[v0_1, v1_1]\n";

static const char *FUSED_INLINED =
    "@T.prim_func\n"
    "def fused_add_add(a: T.Buffer((2, 3), \"float32\"), b: T.Buffer((2, 3), \"float32\"), out: T.Buffer((2, 3), \"float32\")):\n"
    "    for i0, i1 in T.grid(2, 3):\n"
    "        with T.block(\"add_1\"):\n"
    "            v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
    "            T.reads(a[v0, v1], b[v0, v1])\n"
    "            T.writes(out[v0, v1])\n"
    "            out[v0, v1] = a[v0, v1] + b[v0, v1] + a[v0, v1]\n";

static void test_inline_fused_add_add(void **state) {
    TIR_GUARD();
    mt_tfunc *f = fused_add_add();
    ASSERT_TEXT(mt_tfunc_print(A, f), FUSED_BEFORE);
    mt_tfunc *g = mt_tir_inline_producers(A, f);
    ASSERT_TEXT(mt_tfunc_print(A, g), FUSED_INLINED);
    assert_int_equal(g->nallocs, 0);
    ASSERT_TEXT(mt_tfunc_print(A, f), FUSED_BEFORE); /* the input is untouched */
    assert_ptr_equal(mt_tir_inline_producers(A, g), g); /* nothing left to do */
    TIR_GUARD_END();
}

/* t1 = a * 2; t2 = exp(t1^T); out = t2 + t1: a chain, a transposed access,
 * and two uses of one producer. */
static void test_inline_chain_transposed(void **state) {
    TIR_GUARD();
    mt_tbuffer *a = buf2("a", 3, 3), *out = buf2("out", 3, 3);
    mt_tbuffer *t1 = buf2("t1", 3, 3), *t2 = buf2("t2", 3, 3);
    mt_tfunc *f = func3("chain", a, out, NULL);
    add_alloc(f, t1);
    add_alloc(f, t2);
    nest n1, n2, n3;
    nest_init(&n1, "SS", I(3), I(3));
    n1.reads[n1.nreads++] = point(a, n1.v[0], n1.v[1]);
    n1.writes[n1.nwrites++] = point(t1, n1.v[0], n1.v[1]);
    mt_tstmt *s1 = nest_build(&n1, "mul", st(t1, mul(ld(a, n1.v[0], n1.v[1]), F(2)), n1.v[0], n1.v[1]));
    nest_init(&n2, "SS", I(3), I(3));
    n2.reads[n2.nreads++] = point(t1, n2.v[1], n2.v[0]);
    n2.writes[n2.nwrites++] = point(t2, n2.v[0], n2.v[1]);
    mt_texpr *ex = mt_te_call(A, IN_EXP, (mt_texpr *[]){ld(t1, n2.v[1], n2.v[0])}, 1);
    mt_tstmt *s2 = nest_build(&n2, "exp", st(t2, ex, n2.v[0], n2.v[1]));
    nest_init(&n3, "SS", I(3), I(3));
    n3.reads[n3.nreads++] = point(t2, n3.v[0], n3.v[1]);
    n3.reads[n3.nreads++] = point(t1, n3.v[0], n3.v[1]);
    n3.writes[n3.nwrites++] = point(out, n3.v[0], n3.v[1]);
    mt_tstmt *s3 = nest_build(
        &n3, "add", st(out, add(ld(t2, n3.v[0], n3.v[1]), ld(t1, n3.v[0], n3.v[1])), n3.v[0], n3.v[1]));
    mt_tstmt *parts[3] = {s1, s2, s3};
    f->body = mt_ts_seq(A, parts, 3);
    ASSERT_TEXT(mt_tfunc_print(A, mt_tir_inline_producers(A, f)),
                "@T.prim_func\n"
                "def chain(a: T.Buffer((3, 3), \"float32\"), out: T.Buffer((3, 3), \"float32\")):\n"
                "    for i0, i1 in T.grid(3, 3):\n"
                "        with T.block(\"add\"):\n"
                "            v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
                "            T.reads(a[v1, v0], a[v0, v1])\n"
                "            T.writes(out[v0, v1])\n"
                "            out[v0, v1] = T.exp(a[v1, v0] * 2.0) + a[v0, v1] * 2.0\n");
    TIR_GUARD_END();
}

/* s = sum(a, axis=1) is a reduction: it stays, and so does its buffer; the
 * elementwise producer e = exp(a) feeding it is inlined into it. */
static void test_inline_keeps_reduction(void **state) {
    TIR_GUARD();
    mt_tbuffer *a = buf2("a", 4, 8), *out = buf2("out", 4, 8);
    mt_tbuffer *e = buf2("e", 4, 8), *s = buf1("s", 4);
    mt_tfunc *f = func3("softmax_like", a, out, NULL);
    add_alloc(f, e);
    add_alloc(f, s);
    nest n1, n2, n3;
    nest_init(&n1, "SS", I(4), I(8));
    n1.reads[n1.nreads++] = point(a, n1.v[0], n1.v[1]);
    n1.writes[n1.nwrites++] = point(e, n1.v[0], n1.v[1]);
    mt_texpr *ex = mt_te_call(A, IN_EXP, (mt_texpr *[]){ld(a, n1.v[0], n1.v[1])}, 1);
    mt_tstmt *s1 = nest_build(&n1, "exp", st(e, ex, n1.v[0], n1.v[1]));
    nest_init(&n2, "SR", I(4), I(8));
    mt_texpr *mins[2] = {n2.v[0], I(0)}, *exts[2] = {I(1), I(8)};
    n2.reads[n2.nreads++] = region(e, mins, exts);
    n2.writes[n2.nwrites++] = point(s, n2.v[0]);
    n2.init = st(s, F(0), n2.v[0]);
    mt_tstmt *s2 = nest_build(&n2, "sum", st(s, add(ld(s, n2.v[0]), ld(e, n2.v[0], n2.v[1])), n2.v[0]));
    nest_init(&n3, "SS", I(4), I(8));
    n3.reads[n3.nreads++] = point(e, n3.v[0], n3.v[1]);
    n3.reads[n3.nreads++] = point(s, n3.v[0]);
    n3.writes[n3.nwrites++] = point(out, n3.v[0], n3.v[1]);
    mt_tstmt *s3 = nest_build(
        &n3, "div",
        st(out, bin(TE_DIV, ld(e, n3.v[0], n3.v[1]), ld(s, n3.v[0])), n3.v[0], n3.v[1]));
    mt_tstmt *parts[3] = {s1, s2, s3};
    f->body = mt_ts_seq(A, parts, 3);
    ASSERT_TEXT(mt_tfunc_print(A, mt_tir_inline_producers(A, f)),
                "@T.prim_func\n"
                "def softmax_like(a: T.Buffer((4, 8), \"float32\"), out: T.Buffer((4, 8), \"float32\")):\n"
                "    s = T.alloc_buffer((4,), \"float32\")\n"
                "    for i0, i1 in T.grid(4, 8):\n"
                "        with T.block(\"sum\"):\n"
                "            v0, v1 = T.axis.remap(\"SR\", [i0, i1])\n"
                "            T.reads(a[v0, 0:8])\n"
                "            T.writes(s[v0])\n"
                "            with T.init():\n"
                "                s[v0] = 0.0\n"
                "            s[v0] = s[v0] + T.exp(a[v0, v1])\n"
                "    for i0_1, i1_1 in T.grid(4, 8):\n"
                "        with T.block(\"div\"):\n"
                "            v0_1, v1_1 = T.axis.remap(\"SS\", [i0_1, i1_1])\n"
                "            T.reads(a[v0_1, v1_1], s[v0_1])\n"
                "            T.writes(out[v0_1, v1_1])\n"
                "            out[v0_1, v1_1] = T.exp(a[v0_1, v1_1]) / s[v0_1]\n");
    TIR_GUARD_END();
}

/* Not inlined: a producer whose buffer is written twice, and one whose input
 * is overwritten before the consumer runs. */
static void test_inline_refuses(void **state) {
    TIR_GUARD();
    mt_tbuffer *a = buf1("a", 4), *out = buf1("out", 4), *t = buf1("t", 4);
    mt_tfunc *f = func3("twice", a, out, NULL);
    add_alloc(f, t);
    nest n1, n2, n3;
    nest_init(&n1, "S", I(4));
    mt_tstmt *s1 = nest_build(&n1, "p", st(t, ld(a, n1.v[0]), n1.v[0]));
    nest_init(&n2, "S", I(4));
    mt_tstmt *s2 = nest_build(&n2, "q", st(t, add(ld(t, n2.v[0]), F(1)), n2.v[0]));
    nest_init(&n3, "S", I(4));
    mt_tstmt *s3 = nest_build(&n3, "r", st(out, ld(t, n3.v[0]), n3.v[0]));
    mt_tstmt *parts[3] = {s1, s2, s3};
    f->body = mt_ts_seq(A, parts, 3);
    assert_ptr_equal(mt_tir_inline_producers(A, f), f);

    mt_tfunc *g = func3("clobber", a, out, NULL);
    add_alloc(g, t);
    nest m1, m2, m3;
    nest_init(&m1, "S", I(4));
    mt_tstmt *c1 = nest_build(&m1, "p", st(t, ld(a, m1.v[0]), m1.v[0]));
    nest_init(&m2, "S", I(4));
    mt_tstmt *c2 = nest_build(&m2, "w", st(a, F(0), m2.v[0]));
    nest_init(&m3, "S", I(4));
    mt_tstmt *c3 = nest_build(&m3, "r", st(out, ld(t, m3.v[0]), m3.v[0]));
    mt_tstmt *parts2[3] = {c1, c2, c3};
    g->body = mt_ts_seq(A, parts2, 3);
    assert_ptr_equal(mt_tir_inline_producers(A, g), g);

    /* A producer covering only part of its buffer. */
    mt_tfunc *h = func3("partial", a, out, NULL);
    add_alloc(h, t);
    nest k1, k2;
    nest_init(&k1, "S", I(2));
    mt_tstmt *p1 = nest_build(&k1, "p", st(t, ld(a, k1.v[0]), k1.v[0]));
    nest_init(&k2, "S", I(4));
    mt_tstmt *p2 = nest_build(&k2, "r", st(out, ld(t, k2.v[0]), k2.v[0]));
    h->body = seq2(p1, p2);
    assert_ptr_equal(mt_tir_inline_producers(A, h), h);
    TIR_GUARD_END();
}

static void test_lower_elementwise(void **state) {
    TIR_GUARD();
    mt_tfunc *f = mt_tir_inline_producers(A, fused_add_add());
    mt_tfunc *g = mt_tir_lower_blocks(A, f);
    ASSERT_TEXT(mt_tfunc_print(A, g),
                "@T.prim_func\n"
                "def fused_add_add(a: T.Buffer((2, 3), \"float32\"), b: T.Buffer((2, 3), \"float32\"), out: T.Buffer((2, 3), \"float32\")):\n"
                "    for i0, i1 in T.grid(2, 3):\n"
                "        out[i0, i1] = a[i0, i1] + b[i0, i1] + a[i0, i1]\n");
    assert_ptr_equal(mt_tir_lower_blocks(A, g), g);
    TIR_GUARD_END();
}

static mt_tfunc *sum_rows(void) {
    mt_tbuffer *a = buf2("a", 4, 8), *out = buf1("out", 4);
    mt_tfunc *f = func3("sum_rows", a, out, NULL);
    nest n;
    nest_init(&n, "SR", I(4), I(8));
    mt_texpr *mins[2] = {n.v[0], I(0)}, *exts[2] = {I(1), I(8)};
    n.reads[n.nreads++] = region(a, mins, exts);
    n.writes[n.nwrites++] = point(out, n.v[0]);
    n.init = st(out, F(0), n.v[0]);
    f->body = nest_build(&n, "sum", st(out, add(ld(out, n.v[0]), ld(a, n.v[0], n.v[1])), n.v[0]));
    return f;
}

static void test_lower_reduction(void **state) {
    TIR_GUARD();
    mt_tfunc *f = sum_rows();
    ASSERT_TEXT(mt_tfunc_print(A, mt_tir_lower_blocks(A, f)),
                "@T.prim_func\n"
                "def sum_rows(a: T.Buffer((4, 8), \"float32\"), out: T.Buffer((4,), \"float32\")):\n"
                "    for i0, i1 in T.grid(4, 8):\n"
                "        if i1 == 0:\n"
                "            out[i0] = 0.0\n"
                "        out[i0] = out[i0] + a[i0, i1]\n");
    TIR_GUARD_END();
}

/* Split loops bound through expressions, two reduce vars, a predicate, a
 * block allocation and a function-level allocation. */
static void test_lower_general(void **state) {
    TIR_GUARD();
    mt_tbuffer *a = mt_tbuffer_new_const(A, "a", MT_FLOAT32, 3, (int64_t[]){5, 4, 4});
    mt_tbuffer *out = buf1("out", 5), *acc = buf1("acc", 1), *g = buf1("g", 5);
    acc->scope = MT_SCOPE_LOCAL;
    mt_tfunc *f = func3("sum2", a, out, NULL);
    add_alloc(f, g);
    mt_tvar *io = ivar("io"), *ii = ivar("ii"), *j = ivar("j"), *k = ivar("k");
    mt_tvar *vi = ivar("vi"), *vj = ivar("vj"), *vk = ivar("vk");
    mt_texpr *iv = add(mul(V(io), I(2)), V(ii));
    mt_tstmt *b = mt_ts_block(A, "sum2");
    b->niters = 3;
    b->iters = MT_NEW_ARRAY(A, mt_titer, 3);
    b->iters[0] = (mt_titer){vi, I(5), MT_ITER_SPATIAL};
    b->iters[1] = (mt_titer){vj, I(4), MT_ITER_REDUCE};
    b->iters[2] = (mt_titer){vk, I(4), MT_ITER_REDUCE};
    b->iter_values = MT_NEW_ARRAY(A, mt_texpr *, 3);
    b->iter_values[0] = iv;
    b->iter_values[1] = V(j);
    b->iter_values[2] = V(k);
    b->predicate = bin(TE_LT, iv, I(5));
    b->allocs = MT_NEW_ARRAY(A, mt_tbuffer *, 1);
    b->allocs[0] = acc;
    b->nallocs = 1;
    b->init = st(out, F(0), V(vi));
    mt_tstmt *body[2] = {st(acc, ld(a, V(vi), V(vj), V(vk)), I(0)),
                         st(out, add(ld(out, V(vi)), ld(acc, I(0))), V(vi))};
    b->body = mt_ts_seq(A, body, 2);
    mt_tstmt *s = mt_ts_for(A, k, I(0), I(4), MT_FOR_SERIAL, b);
    s = mt_ts_for(A, j, I(0), I(4), MT_FOR_SERIAL, s);
    s = mt_ts_for(A, ii, I(0), I(2), MT_FOR_SERIAL, s);
    f->body = mt_ts_for(A, io, I(0), I(3), MT_FOR_PARALLEL, s);
    ASSERT_TEXT(mt_tfunc_print(A, mt_tir_lower_blocks(A, f)),
                "@T.prim_func\n"
                "def sum2(a: T.Buffer((5, 4, 4), \"float32\"), out: T.Buffer((5,), \"float32\")):\n"
                "    g = T.alloc_buffer((5,), \"float32\")\n"
                "    for io in T.parallel(3):\n"
                "        for ii, j, k in T.grid(2, 4, 4):\n"
                "            acc = T.alloc_buffer((1,), \"float32\", scope=\"local\")\n"
                "            if io * 2 + ii < 5:\n"
                "                if j == 0 and k == 0:\n"
                "                    out[io * 2 + ii] = 0.0\n"
                "                acc[0] = a[io * 2 + ii, j, k]\n"
                "                out[io * 2 + ii] = out[io * 2 + ii] + acc[0]\n");
    TIR_GUARD_END();
}

/* ---- flatten_buffers ----------------------------------------------------- */

static void test_flatten_2d_3d(void **state) {
    TIR_GUARD();
    mt_tbuffer *a = mt_tbuffer_new_const(A, "a", MT_FLOAT32, 3, (int64_t[]){2, 3, 4});
    mt_tbuffer *o = buf2("o", 2, 12), *v = buf1("v", 24);
    mt_tbuffer *tmp = mt_tbuffer_new_const(A, "tmp", MT_FLOAT32, 2, (int64_t[]){3, 4});
    mt_tfunc *f = func3("flat", a, v, o);
    mt_tvar *i = ivar("i"), *j = ivar("j"), *k = ivar("k");
    mt_tstmt *s = st(tmp, ld(a, V(i), V(j), V(k)), V(j), V(k));
    s = seq2(s, st(o, add(ld(tmp, V(j), V(k)), ld(v, add(mul(V(i), I(12)), V(k)))), V(i),
                   add(mul(V(j), I(4)), V(k))));
    s = mt_ts_for(A, k, I(0), I(4), MT_FOR_SERIAL, s);
    s = mt_ts_for(A, j, I(0), I(3), MT_FOR_SERIAL, s);
    s = mt_ts_for(A, i, I(0), I(2), MT_FOR_SERIAL, mt_ts_alloc(A, tmp, s));
    f->body = s;
    mt_tfunc *g = mt_tir_flatten_buffers(A, f);
    ASSERT_TEXT(mt_tfunc_print(A, g),
                "@T.prim_func\n"
                "def flat(a: T.Buffer((24,), \"float32\"), v: T.Buffer((24,), \"float32\"), o: T.Buffer((24,), \"float32\")):\n"
                "    for i in range(2):\n"
                "        tmp = T.alloc_buffer((12,), \"float32\")\n"
                "        for j, k in T.grid(3, 4):\n"
                "            tmp[j * 4 + k] = a[i * 12 + j * 4 + k]\n"
                "            o[i * 12 + (j * 4 + k)] = tmp[j * 4 + k] + v[i * 12 + k]\n");
    assert_ptr_equal(g->params[1].buf, v);      /* already 1-d: kept */
    assert_ptr_not_equal(g->params[0].buf, a);
    const mt_tstmt *alloc = g->body->body;
    assert_int_equal(alloc->kind, TS_ALLOC);
    assert_ptr_equal(alloc->buf, alloc->body->body->body->stmts[0]->buf);
    assert_ptr_equal(mt_tir_flatten_buffers(A, g), g);
    TIR_GUARD_END();
}

static void test_flatten_symbolic_rank0(void **state) {
    TIR_GUARD();
    mt_tvar *nv = ivar("n");
    mt_texpr *xs[2] = {V(nv), I(784)}, *ys[3] = {I(2), I(3), V(nv)};
    mt_tbuffer *x = mt_tbuffer_new(A, "x", MT_FLOAT32, 2, xs);
    mt_tbuffer *y = mt_tbuffer_new(A, "y", MT_FLOAT32, 3, ys);
    mt_tbuffer *s = mt_tbuffer_new(A, "s", MT_FLOAT32, 0, NULL);
    mt_tfunc *f = func3("sym", x, y, s);
    f->sym_vars = &nv;
    f->nsym = 1;
    mt_tvar *i = ivar("i"), *j = ivar("j");
    mt_tstmt *b = seq2(mt_ts_store(A, s, NULL, 0, add(ld(s), ld(x, V(i), V(j)))),
                       st(y, ld(s), I(1), I(2), V(i)));
    b = mt_ts_for(A, j, I(0), I(784), MT_FOR_SERIAL, b);
    f->body = mt_ts_for(A, i, I(0), V(nv), MT_FOR_SERIAL, b);
    ASSERT_TEXT(mt_tfunc_print(A, mt_tir_flatten_buffers(A, f)),
                "@T.prim_func\n"
                "def sym(x: T.Buffer((n * 784,), \"float32\"), y: T.Buffer((6 * n,), \"float32\"), s: T.Buffer((1,), \"float32\")):\n"
                "    for i, j in T.grid(n, 784):\n"
                "        s[0] = s[0] + x[i * 784 + j]\n"
                "        y[3 * n + 2 * n + i] = s[0]\n");
    TIR_GUARD_END();
}

static void test_flatten_rejects_blocks(void **state) {
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        mt_tir_flatten_buffers(A, sum_rows());
        mt_err_pop(&fr);
        fail_msg("flatten_buffers accepted a block");
    } else {
        mt_err_pop(&fr);
        assert_int_equal(fr.status, MT_ERR_INTERNAL);
        assert_non_null(strstr(fr.msg, "lower_blocks"));
    }
}

/* ---- remove_unit_loops --------------------------------------------------- */

static void test_remove_unit_loops(void **state) {
    TIR_GUARD();
    mt_tbuffer *o = buf2("o", 4, 1);
    mt_tfunc *f = func3("unit", o, NULL, NULL);
    mt_tvar *i = ivar("i"), *j = ivar("j"), *k = ivar("k"), *t = ivar("tx");
    mt_tstmt *s = st(o, F(1), add(V(i), V(k)), V(j));
    s = mt_ts_for(A, k, I(3), I(1), MT_FOR_VECTORIZED, s);
    s = mt_ts_for(A, j, I(0), I(1), MT_FOR_SERIAL, s);
    s = mt_ts_for(A, i, I(0), I(1), MT_FOR_SERIAL, s);
    s = mt_ts_for(A, t, I(0), I(1), MT_FOR_THREAD, s);
    s->thread_tag = "threadIdx.x";
    f->body = s;
    mt_tfunc *g = mt_tir_remove_unit_loops(A, f);
    ASSERT_TEXT(mt_tfunc_print(A, g),
                "@T.prim_func\n"
                "def unit(o: T.Buffer((4, 1), \"float32\")):\n"
                "    for tx in T.thread_binding(1, thread=\"threadIdx.x\"):\n"
                "        o[0 + 3, 0] = 1.0\n");
    ASSERT_TEXT(mt_tfunc_print(A, mt_tir_simplify(A, g)),
                "@T.prim_func\n"
                "def unit(o: T.Buffer((4, 1), \"float32\")):\n"
                "    for tx in T.thread_binding(1, thread=\"threadIdx.x\"):\n"
                "        o[3, 0] = 1.0\n");
    assert_ptr_equal(mt_tir_remove_unit_loops(A, g), g);
    TIR_GUARD_END();
}

/* ---- partition ------------------------------------------------------------ */

/* out[r, i] = concat of x (r, 20), y (r, 30) and z (r, 14) along i, as
 * legalize writes it: two selects on i, clamped indices. partition cuts
 * the inner loop at 20 and 50; simplify then keeps one arm per part and
 * drops the clamps: three plain copies. */
static void test_partition_concat(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf2("x", 3, 20), *y = buf2("y", 3, 30), *z = buf2("z", 3, 14), *o = buf2("o", 3, 64);
    mt_tfunc *f = func3("concat", x, y, z);
    mt_tfunc_add_param(A, f, o, NULL);
    mt_tvar *r = ivar("r"), *i = ivar("i");
    mt_texpr *vi = V(i);
    mt_texpr *vx = ld(x, V(r), bin(TE_MIN, vi, I(19)));
    mt_texpr *vy = ld(y, V(r), bin(TE_MAX, bin(TE_MIN, sub(vi, I(20)), I(29)), I(0)));
    mt_texpr *vz = ld(z, V(r), bin(TE_MAX, sub(vi, I(50)), I(0)));
    mt_texpr *val = mt_te_select(A, bin(TE_LT, vi, I(20)), vx,
                                 mt_te_select(A, bin(TE_LT, vi, I(50)), vy, vz));
    mt_tstmt *s = mt_ts_for(A, i, I(0), I(64), MT_FOR_VECTORIZED, st(o, val, V(r), vi));
    f->body = mt_ts_for(A, r, I(0), I(3), MT_FOR_SERIAL, s);
    f->num_outputs = 1;
    mt_tfunc *g = mt_tir_simplify(A, mt_tir_partition(A, mt_tir_flatten_buffers(A, f)));
    ASSERT_TEXT(mt_tfunc_print(A, g),
                "@T.prim_func\n"
                "def concat(x: T.Buffer((60,), \"float32\"), y: T.Buffer((90,), \"float32\"), z: T.Buffer((42,), \"float32\"), o: T.Buffer((192,), \"float32\")):\n"
                "    for r in range(3):\n"
                "        for i in T.vectorized(20):\n"
                "            o[r * 64 + i] = x[r * 20 + i]\n"
                "        for i_1 in T.vectorized(30):\n"
                "            o[r * 64 + (20 + i_1)] = y[r * 30 + (20 + i_1 - 20)]\n"
                "        for i_2 in T.vectorized(14):\n"
                "            o[r * 64 + (20 + (30 + i_2))] = z[r * 14 + (20 + (30 + i_2) - 50)]\n");
    /* a loop with an inner loop, a condition on another variable, a
     * point outside the range, a parallel loop, a comparison whose
     * `j + k` would wrap around: left alone */
    mt_tvar *j = ivar("j");
    mt_texpr *wrap = bin(TE_LT, add(V(j), I(INT64_MAX - 10)), I(INT64_MAX)); /* point 10 */
    mt_tstmt *cases[4] = {
        mt_ts_for(A, r, I(0), I(3), MT_FOR_SERIAL,
                  mt_ts_for(A, j, I(0), I(64), MT_FOR_SERIAL, st(o, mt_te_select(A, bin(TE_LT, V(r), I(1)), F(1), F(2)), V(r), V(j)))),
        mt_ts_for(A, j, I(0), I(64), MT_FOR_SERIAL, st(o, mt_te_select(A, bin(TE_LT, V(j), I(64)), F(1), F(2)), I(0), V(j))),
        mt_ts_for(A, j, I(0), I(64), MT_FOR_PARALLEL, st(o, mt_te_select(A, bin(TE_LT, V(j), I(9)), F(1), F(2)), I(0), V(j))),
        mt_ts_for(A, j, I(0), I(64), MT_FOR_SERIAL, st(o, mt_te_select(A, wrap, F(1), F(2)), I(0), V(j))),
    };
    for (int c = 0; c < 4; c++) {
        mt_tfunc *h = func3("same", o, NULL, NULL);
        h->body = cases[c];
        h = mt_tir_flatten_buffers(A, h);
        if (mt_tir_partition(A, h) != h) fail_msg("case %d was partitioned", c);
    }
    TIR_GUARD_END();
}

/* ---- partition_tails ------------------------------------------------------ */

/* for o in range(outer): for i in T.unroll(min(6, n - o * 6)): out[o * 6 + i] = 1 */
static mt_tstmt *tile_loop(mt_tbuffer *out, mt_tvar *o, mt_tvar *i, int64_t outer, int64_t n,
                           mt_for_kind inner_kind, mt_for_kind outer_kind) {
    mt_texpr *ext = bin(TE_MIN, I(6), sub(I(n), mul(V(o), I(6))));
    mt_tstmt *in = mt_ts_for(A, i, I(0), ext, inner_kind, st(out, F(1), add(mul(V(o), I(6)), V(i))));
    return mt_ts_for(A, o, I(0), I(outer), outer_kind, in);
}

/* 1024 rows in tiles of 6: the last tile (4 rows) is peeled, and simplify
 * gives every other tile the constant extent 6. */
static void test_partition_tails(void **state) {
    TIR_GUARD();
    mt_tbuffer *out = buf1("out", 1024);
    mt_tvar *o = ivar("o"), *i = ivar("i");
    mt_tfunc *f = func3("tiles", out, NULL, NULL);
    f->body = tile_loop(out, o, i, 171, 1024, MT_FOR_UNROLLED, MT_FOR_SERIAL);
    mt_tfunc *g = mt_tir_simplify(A, mt_tir_partition_tails(A, mt_tir_flatten_buffers(A, f)));
    ASSERT_TEXT(mt_tfunc_print(A, g),
                "@T.prim_func\n"
                "def tiles(out: T.Buffer((1024,), \"float32\")):\n"
                "    for o in range(170):\n"
                "        for i in T.unroll(6):\n"
                "            out[o * 6 + i] = 1.0\n"
                "    for i_1 in T.unroll(4):\n"
                "        out[1020 + i_1] = 1.0\n");
    /* a parallel outer loop is peeled the same way */
    f->body = tile_loop(out, o, i, 171, 1024, MT_FOR_UNROLLED, MT_FOR_PARALLEL);
    g = mt_tir_simplify(A, mt_tir_partition_tails(A, mt_tir_flatten_buffers(A, f)));
    assert_non_null(strstr(mt_tfunc_print(A, g), "    for o in T.parallel(170):\n"));
    /* a vectorized tile of 6 too */
    f->body = tile_loop(out, o, i, 171, 1024, MT_FOR_VECTORIZED, MT_FOR_SERIAL);
    g = mt_tir_simplify(A, mt_tir_partition_tails(A, mt_tir_flatten_buffers(A, f)));
    assert_non_null(strstr(mt_tfunc_print(A, g), "    for i_1 in T.vectorized(4):\n"));
    /* left alone: a vectorized clamp longer than 64 (a parallel chunk),
     * tiles that divide the rows (1020 = 6 * 170), a vectorized outer
     * loop, an extent that also depends on another loop's variable */
    mt_texpr *chunk = bin(TE_MIN, I(100), sub(I(1024), mul(V(o), I(100))));
    mt_tstmt *chunks = mt_ts_for(A, o, I(0), I(11), MT_FOR_PARALLEL,
                                 mt_ts_for(A, i, I(0), chunk, MT_FOR_VECTORIZED,
                                           st(out, F(1), add(mul(V(o), I(100)), V(i)))));
    mt_tvar *r = ivar("r");
    mt_texpr *ext2 = bin(TE_MIN, I(6), sub(add(I(1024), V(r)), mul(V(o), I(6))));
    mt_tstmt *dep = mt_ts_for(A, o, I(0), I(171), MT_FOR_SERIAL,
                              mt_ts_for(A, i, I(0), ext2, MT_FOR_UNROLLED, st(out, F(1), V(i))));
    mt_tstmt *cases[4] = {
        chunks,
        tile_loop(out, o, i, 170, 1020, MT_FOR_UNROLLED, MT_FOR_SERIAL),
        tile_loop(out, o, i, 171, 1024, MT_FOR_UNROLLED, MT_FOR_VECTORIZED),
        mt_ts_for(A, r, I(0), I(2), MT_FOR_SERIAL, dep),
    };
    for (int c = 0; c < 4; c++) {
        mt_tfunc *h = func3("same", out, NULL, NULL);
        h->body = cases[c];
        h = mt_tir_flatten_buffers(A, h);
        if (mt_tir_partition_tails(A, h) != h) fail_msg("case %d was peeled", c);
    }
    TIR_GUARD_END();
}

/* A tail inside the peeled iteration (1000 elements in blocks of 4 x 16:
 * the last block has 2 whole vectors and 8 elements): the peeled copy's
 * loops have constant extents, so its own last vector is peeled too. */
static void test_partition_tails_nested(void **state) {
    TIR_GUARD();
    mt_tbuffer *out = buf1("out", 1000);
    mt_tvar *o = ivar("o"), *k = ivar("k"), *l = ivar("l");
    mt_texpr *blk = add(mul(V(o), I(4)), V(k));
    mt_tstmt *vec = mt_ts_for(A, l, I(0), bin(TE_MIN, I(16), sub(I(1000), mul(blk, I(16)))), MT_FOR_VECTORIZED,
                              st(out, F(1), add(mul(blk, I(16)), V(l))));
    mt_tstmt *un = mt_ts_for(A, k, I(0), bin(TE_MIN, I(4), sub(I(63), mul(V(o), I(4)))), MT_FOR_UNROLLED, vec);
    mt_tfunc *f = func3("blocks", out, NULL, NULL);
    f->body = mt_ts_for(A, o, I(0), I(16), MT_FOR_SERIAL, un);
    const char *t = mt_tfunc_print(A, mt_tir_simplify(A, mt_tir_partition_tails(A, mt_tir_flatten_buffers(A, f))));
    if (!strstr(t, "    for o in range(15):\n        for k in T.unroll(4):\n            for l in T.vectorized(16):\n") ||
        !strstr(t, "T.unroll(2):\n        for l_1 in T.vectorized(16):\n") || !strstr(t, "    for l_2 in T.vectorized(8):\n"))
        fail_msg("unexpected:\n%s", t);
    TIR_GUARD_END();
}

/* ---- compact_buffers -------------------------------------------------------- */

/* What cache_read + compute_at leave: for j in range(4): copy a 8 x 16
 * panel of b into the whole-size p, then read it back. compact_buffers
 * makes p one panel allocated inside the loop, indexed from 0. */
static mt_tstmt *panel_loop(mt_tbuffer *p, mt_tbuffer *b, mt_tbuffer *o, int64_t read_cols) {
    mt_tvar *j = ivar("j"), *r = ivar("r"), *cl = ivar("c"), *r2 = ivar("r2"), *c2 = ivar("c2");
    mt_texpr *col = add(mul(V(j), I(16)), V(cl));
    mt_tstmt *copy = mt_ts_for(A, r, I(0), I(8), MT_FOR_SERIAL,
                               mt_ts_for(A, cl, I(0), I(16), MT_FOR_SERIAL,
                                         st(p, ld(b, V(r), col), V(r), col)));
    mt_texpr *col2 = add(mul(V(j), I(16)), V(c2));
    mt_tstmt *use = mt_ts_for(A, r2, I(0), I(8), MT_FOR_SERIAL,
                              mt_ts_for(A, c2, I(0), I(read_cols), MT_FOR_SERIAL,
                                        st(o, ld(p, V(r2), col2), V(r2), col2)));
    return mt_ts_for(A, j, I(0), I(4), MT_FOR_PARALLEL, seq2(copy, use));
}

static void test_compact_buffers(void **state) {
    TIR_GUARD();
    mt_tbuffer *b = buf2("b", 8, 64), *o = buf2("o", 8, 64), *p = buf2("p", 8, 64);
    mt_tfunc *f = func3("panels", b, o, NULL);
    f->body = mt_ts_alloc(A, p, panel_loop(p, b, o, 16));
    mt_tfunc *g = mt_tir_compact_buffers(A, f);
    ASSERT_TEXT(mt_tfunc_print(A, g),
                "@T.prim_func\n"
                "def panels(b: T.Buffer((8, 64), \"float32\"), o: T.Buffer((8, 64), \"float32\")):\n"
                "    for j in T.parallel(4):\n"
                "        p = T.alloc_buffer((8, 16), \"float32\")\n"
                "        for r, c in T.grid(8, 16):\n"
                "            p[r, c] = b[r, j * 16 + c]\n"
                "        for r2, c2 in T.grid(8, 16):\n"
                "            o[r2, j * 16 + c2] = p[r2, c2]\n");
    /* left alone: a read past the panel (17 columns), a second writer */
    f->body = mt_ts_alloc(A, p, panel_loop(p, b, o, 17));
    assert_ptr_equal(mt_tir_compact_buffers(A, f), f);
    mt_tstmt *two = panel_loop(p, b, o, 16);
    mt_tstmt *again = mt_ts_for(A, ivar("z"), I(0), I(8), MT_FOR_SERIAL, st(p, F(0), I(0), I(0)));
    mt_tstmt *items[3] = {two->body->stmts[0], again, two->body->stmts[1]};
    mt_tstmt *body3 = mt_ts_seq(A, items, 3);
    f->body = mt_ts_alloc(A, p, mt_ts_for(A, two->var, I(0), I(4), MT_FOR_SERIAL, body3));
    assert_ptr_equal(mt_tir_compact_buffers(A, f), f);
    TIR_GUARD_END();
}

/* Panels of 16 of a 60-column b, the last one 12 wide: the copy runs
 * T.min(16, end - j * 16) columns, the reader all 16 under a guard.
 * With end = 60 (the end of p's dim) every column of p the reader can
 * reach is copied: compacted to 8 x 16. With end = 50 the reader may
 * reach columns the copy skipped: left alone. */
static mt_tstmt *tail_panels(mt_tbuffer *p, mt_tbuffer *b, mt_tbuffer *o, int64_t end) {
    mt_tvar *j = ivar("j"), *r = ivar("r"), *cl = ivar("c"), *r2 = ivar("r2"), *c2 = ivar("c2");
    mt_texpr *col = add(mul(V(j), I(16)), V(cl)), *col2 = add(mul(V(j), I(16)), V(c2));
    mt_texpr *w = bin(TE_MIN, I(16), sub(I(end), mul(V(j), I(16))));
    mt_tstmt *copy = mt_ts_for(A, r, I(0), I(8), MT_FOR_SERIAL,
                               mt_ts_for(A, cl, I(0), w, MT_FOR_SERIAL, st(p, ld(b, V(r), col), V(r), col)));
    mt_tstmt *use = mt_ts_for(A, r2, I(0), I(8), MT_FOR_SERIAL,
                              mt_ts_for(A, c2, I(0), I(16), MT_FOR_SERIAL,
                                        mt_ts_if(A, bin(TE_LT, col2, I(60)),
                                                 st(o, ld(p, V(r2), col2), V(r2), col2), NULL)));
    return mt_ts_for(A, j, I(0), I(4), MT_FOR_SERIAL, seq2(copy, use));
}

static void test_compact_to_end(void **state) {
    TIR_GUARD();
    mt_tbuffer *b = buf2("b", 8, 60), *o = buf2("o", 8, 60), *p = buf2("p", 8, 60);
    mt_tfunc *f = func3("tails", b, o, NULL);
    f->body = mt_ts_alloc(A, p, tail_panels(p, b, o, 60));
    mt_tfunc *g = mt_tir_compact_buffers(A, f);
    const char *t = mt_tfunc_print(A, g);
    if (!strstr(t, "p = T.alloc_buffer((8, 16), \"float32\")") || !strstr(t, "p[r, c] = b[r, j * 16 + c]"))
        fail_msg("not compacted:\n%s", t);
    f->body = mt_ts_alloc(A, p, tail_panels(p, b, o, 50));
    assert_ptr_equal(mt_tir_compact_buffers(A, f), f);
    TIR_GUARD_END();
}

/* A K block of T.min(16, 40 - k0 * 16) rows copied 4 at a time: the
 * rows r0 * 4 + r1, r0 < (R + 3) // 4, r1 < T.min(4, R - r0 * 4), cover
 * [0, R) (a split of the clamped extent R): compacted to 16 rows. With
 * r1 clamped by another extent (R2) the pair does not cover [0, R):
 * left alone. */
static mt_tstmt *block_rows(mt_tbuffer *p, mt_tbuffer *b, mt_tbuffer *o, int64_t inner_end) {
    mt_tvar *k0 = ivar("k0"), *r0 = ivar("r0"), *r1 = ivar("r1"), *c = ivar("c"), *k = ivar("k"), *c2 = ivar("c2");
    mt_texpr *R = bin(TE_MIN, I(16), sub(I(40), mul(V(k0), I(16))));
    mt_texpr *R2 = bin(TE_MIN, I(16), sub(I(inner_end), mul(V(k0), I(16))));
    mt_texpr *row = add(mul(V(k0), I(16)), add(mul(V(r0), I(4)), V(r1)));
    mt_tstmt *copy = mt_ts_for(
        A, r0, I(0), bin(TE_FLOORDIV, add(R, I(3)), I(4)), MT_FOR_SERIAL,
        mt_ts_for(A, r1, I(0), bin(TE_MIN, I(4), sub(R2, mul(V(r0), I(4)))), MT_FOR_SERIAL,
                  mt_ts_for(A, c, I(0), I(8), MT_FOR_SERIAL, st(p, ld(b, row, V(c)), row, V(c)))));
    mt_texpr *row2 = add(mul(V(k0), I(16)), V(k));
    mt_tstmt *use = mt_ts_for(A, k, I(0), R, MT_FOR_SERIAL,
                              mt_ts_for(A, c2, I(0), I(8), MT_FOR_SERIAL, st(o, ld(p, row2, V(c2)), row2, V(c2))));
    return mt_ts_for(A, k0, I(0), I(3), MT_FOR_SERIAL, seq2(copy, use));
}

static void test_compact_split_pair(void **state) {
    TIR_GUARD();
    mt_tbuffer *b = buf2("b", 40, 8), *o = buf2("o", 40, 8), *p = buf2("p", 40, 8);
    mt_tfunc *f = func3("rows", b, o, NULL);
    f->body = mt_ts_alloc(A, p, block_rows(p, b, o, 40));
    const char *t = mt_tfunc_print(A, mt_tir_compact_buffers(A, f));
    if (!strstr(t, "p = T.alloc_buffer((16, 8), \"float32\")") || !strstr(t, "p[r0 * 4 + r1, c] = "))
        fail_msg("not compacted:\n%s", t);
    f->body = mt_ts_alloc(A, p, block_rows(p, b, o, 41));
    assert_ptr_equal(mt_tir_compact_buffers(A, f), f);
    TIR_GUARD_END();
}

/* ---- the passes in pipeline order ---------------------------------------- */

static void test_pipeline_by_name(void **state) {
    TIR_GUARD();
    static const char *order[] = {"inline_producers", "lower_blocks", "flatten_buffers",
                                  "simplify", "remove_unit_loops", "simplify", "tir_cse"};
    mt_tfunc *f = fused_add_add();
    for (int i = 0; i < (int)(sizeof order / sizeof order[0]); i++) {
        const mt_pass *p = mt_pass_find(order[i]);
        assert_non_null(p);
        assert_int_equal(p->kind, MT_PASS_TIR);
        f = p->tir(A, f);
    }
    ASSERT_TEXT(mt_tfunc_print(A, f),
                "@T.prim_func\n"
                "def fused_add_add(a: T.Buffer((6,), \"float32\"), b: T.Buffer((6,), \"float32\"), out: T.Buffer((6,), \"float32\")):\n"
                "    for i0, i1 in T.grid(2, 3):\n"
                "        cse_v1 = a[i0 * 3 + i1]\n"
                "        out[i0 * 3 + i1] = cse_v1 + b[i0 * 3 + i1] + cse_v1\n");
    assert_null(mt_pass_find("no_such_pass"));
    assert_non_null(mt_pass_find("schedule_matmul")); /* a CPU rule */
    assert_int_equal(mt_pass_find("fuse_ops")->kind, MT_PASS_GRAPH);
    TIR_GUARD_END();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_inline_fused_add_add),  TIR_TEST(test_inline_chain_transposed),
        TIR_TEST(test_inline_keeps_reduction), TIR_TEST(test_inline_refuses),
        TIR_TEST(test_lower_elementwise),     TIR_TEST(test_lower_reduction),
        TIR_TEST(test_lower_general),         TIR_TEST(test_flatten_2d_3d),
        TIR_TEST(test_flatten_symbolic_rank0), TIR_TEST(test_flatten_rejects_blocks),
        TIR_TEST(test_remove_unit_loops),     TIR_TEST(test_partition_concat),
        TIR_TEST(test_partition_tails), TIR_TEST(test_partition_tails_nested),      TIR_TEST(test_compact_buffers), TIR_TEST(test_compact_to_end), TIR_TEST(test_compact_split_pair),
        TIR_TEST(test_pipeline_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
