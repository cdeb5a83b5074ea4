/*
 * test_split_host_device.c -- split_host_device (src/passes/tir/
 * split_host_device.c) and the launch statement it makes (tir.h TS_LAUNCH:
 * printer, visitor, mutator): what a parallel body captures and in which
 * order, allocations inside and outside the loop, nested and sibling
 * parallel loops, loops of one or no iteration, vector lets, names, and a
 * function without parallel loops coming back as itself. Codegen of the
 * launches is checked in tests/codegen (test_parallel, test_codegen).
 */
#include "tir/tir_test.h"
#include "passes/tir/tir_passes.h"

static mt_tstmt *loop(mt_tvar *v, mt_texpr *min, mt_texpr *ext, mt_for_kind kind, mt_tstmt *body) {
    return mt_ts_for(A, v, min, ext, kind, body);
}
static mt_tstmt *par(mt_tvar *v, mt_texpr *ext, mt_tstmt *body) {
    return loop(v, I(0), ext, MT_FOR_PARALLEL, body);
}
static mt_texpr *f32(mt_texpr *x) { return mt_te_cast(A, MT_FLOAT32, x); }

static mt_tbuffer *symbuf(const char *name, mt_tvar *n) {
    mt_texpr *nv = V(n);
    return mt_tbuffer_new(A, name, MT_FLOAT32, 1, &nv);
}

/* A function of buffer params bufs[0..nb), then scalar params vars[0..nv),
 * and the sym var n (or none). */
static mt_tfunc *func(const char *name, mt_tbuffer *const *bufs, int nb, mt_tvar *const *vars,
                      int nv, mt_tvar *n, mt_tstmt *body) {
    mt_tfunc *f = mt_tfunc_new(A, name);
    for (int i = 0; i < nb; i++) mt_tfunc_add_param(A, f, bufs[i], NULL);
    for (int i = 0; i < nv; i++) mt_tfunc_add_param(A, f, NULL, vars[i]);
    f->nsym = n ? 1 : 0;
    f->sym_vars = MT_NEW_ARRAY(A, mt_tvar *, 1);
    f->sym_vars[0] = n;
    f->num_outputs = 1;
    f->body = body;
    return f;
}

static mt_tsplit split1(mt_tfunc *f) {
    mt_tsplit sp;
    mt_tir_split_host_device(A, &f, 1, &sp);
    return sp;
}

/* for r in range(2):
 *     s = r * 10
 *     tmp = alloc((4,))                 # outside the parallel loop
 *     for c in T.parallel(n):
 *         loc = alloc((n,))             # inside: sized by the sym var
 *         loc[0] = a[c] * alpha
 *         out[c] = loc[0] + tmp[0] + f32(s) + f32(r)
 *
 * captures, in order of first use: n (loc's shape), a, alpha, out, tmp, s,
 * r; not c, not loc. */
static void test_captures(void **state) {
    TIR_GUARD();
    mt_tvar *n = ivar("n"), *r = ivar("r"), *s = ivar("s"), *c = ivar("c");
    mt_tvar *alpha = mt_tvar_new(A, "alpha", MT_FLOAT32);
    mt_tbuffer *a = symbuf("a", n), *out = symbuf("out", n), *loc = symbuf("loc", n);
    mt_tbuffer *tmp = buf1("tmp", 4);
    mt_texpr *v = add(add(add(ld(loc, I(0)), ld(tmp, I(0))), f32(V(s))), f32(V(r)));
    mt_tstmt *body = mt_ts_alloc(A, loc, seq2(st(loc, mul(ld(a, V(c)), V(alpha)), I(0)),
                                               st(out, v, V(c))));
    mt_tstmt *outer = loop(r, I(0), I(2), MT_FOR_SERIAL,
                           mt_ts_let(A, s, mul(V(r), I(10)), mt_ts_alloc(A, tmp, par(c, V(n), body))));
    mt_tbuffer *bufs[2] = {a, out};
    mt_tfunc *f = func("k", bufs, 2, &alpha, 1, n, outer);
    mt_tsplit sp = split1(f);
    assert_ptr_not_equal(sp.host[0], f);
    assert_int_equal(sp.ndevice, 1);
    assert_int_equal(sp.first_device[0], 0);
    assert_int_equal(sp.first_device[1], 1);
    ASSERT_TEXT(mt_tfunc_print(A, sp.host[0]),
                "@T.prim_func\n"
                "def k(a: T.Buffer((\"n\",), \"float32\"), out: T.Buffer((\"n\",), \"float32\"), alpha: T.float32):\n"
                "    for r in range(2):\n"
                "        s = r * 10\n"
                "        tmp = T.alloc_buffer((4,), \"float32\")\n"
                "        T.launch(\"k_par0\", n, a, alpha, out, tmp, s, r, grid=(n,))\n");
    ASSERT_TEXT(mt_tfunc_print(A, sp.device[0]),
                "@T.prim_func\n"
                "def k_par0(begin: T.int64, end: T.int64, n: T.int64, a: T.Buffer((\"n\",), \"float32\"), alpha: T.float32, out: T.Buffer((\"n\",), \"float32\"), tmp: T.Buffer((4,), \"float32\"), s: T.int64, r: T.int64):\n"
                "    T.func_attr({\"kind\": \"parallel_body\"})\n"
                "    for c in range(begin, end):\n"
                "        loc = T.alloc_buffer((n,), \"float32\")\n"
                "        loc[0] = a[c] * alpha\n"
                "        out[c] = loc[0] + tmp[0] + T.Cast(\"float32\", s) + T.Cast(\"float32\", r)\n");
    /* the device function shares the host's objects and the loop body */
    const mt_tfunc *d = sp.device[0];
    assert_string_equal(mt_tfunc_get_attr(d, MT_ATTR_KIND), MT_KIND_PARALLEL_BODY);
    assert_ptr_equal(d->params[3].buf, a);
    assert_ptr_equal(d->params[2].var, n);
    assert_ptr_equal(d->body->var, c);
    assert_ptr_equal(d->body->body, body);
    assert_int_equal(d->body->for_kind, MT_FOR_SERIAL);
    assert_int_equal(d->nsym, 0);
    /* the original is untouched */
    assert_int_equal(f->body->body->body->body->kind, TS_FOR);
    TIR_GUARD_END();
}

/* Two parallel loops in one function, the first with a parallel loop
 * nested in it (serial in the device function), the second from min 3:
 * k_par0 and k_par1, launched in order; a loop of 0 and one of 1 iteration
 * are not launched (serial), a parallel loop inside the 1-iteration one is. */
static void test_nested_and_siblings(void **state) {
    TIR_GUARD();
    mt_tvar *i = ivar("i"), *j = ivar("j"), *p = ivar("p"), *u = ivar("u"), *z = ivar("z"),
            *q = ivar("q");
    mt_tbuffer *o = buf2("o", 8, 8), *w = buf1("w", 16);
    mt_tstmt *first = par(i, I(8), par(j, I(8), st(o, f32(add(V(i), V(j))), V(i), V(j))));
    mt_tstmt *second = loop(p, I(3), I(13), MT_FOR_PARALLEL, st(w, F(1.0), V(p)));
    mt_tstmt *empty = par(z, I(0), st(w, F(2.0), V(z)));
    mt_tstmt *one = par(u, I(1), par(q, I(16), st(w, f32(add(V(u), V(q))), V(q))));
    mt_tstmt *all[4] = {first, second, empty, one};
    mt_tbuffer *bufs[2] = {o, w};
    mt_tfunc *f = func("k", bufs, 2, NULL, 0, NULL, mt_ts_seq(A, all, 4));
    mt_tsplit sp = split1(f);
    assert_int_equal(sp.ndevice, 3);
    ASSERT_TEXT(mt_tfunc_print(A, sp.host[0]),
                "@T.prim_func\n"
                "def k(o: T.Buffer((8, 8), \"float32\"), w: T.Buffer((16,), \"float32\")):\n"
                "    T.launch(\"k_par0\", o, grid=(8,))\n"
                "    T.launch(\"k_par1\", w, grid=(13,), min=3)\n"
                "    for z in range(0):\n"
                "        w[z] = 2.0\n"
                "    for u in range(1):\n"
                "        T.launch(\"k_par2\", w, u, grid=(16,))\n");
    ASSERT_TEXT(mt_tfunc_print(A, sp.device[0]),
                "@T.prim_func\n"
                "def k_par0(begin: T.int64, end: T.int64, o: T.Buffer((8, 8), \"float32\")):\n"
                "    T.func_attr({\"kind\": \"parallel_body\"})\n"
                "    for i in range(begin, end):\n"
                "        for j in range(8):\n"
                "            o[i, j] = T.Cast(\"float32\", i + j)\n");
    ASSERT_TEXT(mt_tfunc_print(A, sp.device[1]),
                "@T.prim_func\n"
                "def k_par1(begin: T.int64, end: T.int64, w: T.Buffer((16,), \"float32\")):\n"
                "    T.func_attr({\"kind\": \"parallel_body\"})\n"
                "    for p in range(begin, end):\n"
                "        w[p] = 1.0\n");
    assert_string_equal(sp.device[2]->name, "k_par2");
    /* the launch: callee, extent and min are the loop's own nodes */
    const mt_tstmt *l = sp.host[0]->body->stmts[1];
    assert_int_equal(l->kind, TS_LAUNCH);
    assert_ptr_equal(l->launch->callee, sp.device[1]);
    assert_ptr_equal(l->launch->grid[0], second->extent);
    assert_ptr_equal(l->launch->min, second->min);
    assert_null(l->launch->block[0]);
    assert_null(l->launch->shared_bytes);
    TIR_GUARD_END();
}

/* No parallel loop: each function comes back as itself, no device
 * function; a function without a body too. Several functions: each host's
 * device functions are listed after the previous host's. */
static void test_no_parallel_loop(void **state) {
    TIR_GUARD();
    mt_tvar *i = ivar("i"), *j = ivar("j");
    mt_tbuffer *o = buf1("o", 4);
    mt_tfunc *serial = func("s", &o, 1, NULL, 0, NULL,
                            loop(i, I(0), I(4), MT_FOR_VECTORIZED, st(o, F(0.0), V(i))));
    mt_tfunc *bodiless = func("nothing", &o, 1, NULL, 0, NULL, NULL);
    mt_tfunc *withpar = func("p", &o, 1, NULL, 0, NULL, par(j, I(4), st(o, F(1.0), V(j))));
    mt_tfunc *fs[4] = {serial, withpar, bodiless, serial};
    mt_tsplit sp;
    mt_tir_split_host_device(A, fs, 4, &sp);
    assert_ptr_equal(sp.host[0], serial);
    assert_ptr_not_equal(sp.host[1], withpar);
    assert_ptr_equal(sp.host[2], bodiless);
    assert_ptr_equal(sp.host[3], serial);
    assert_int_equal(sp.ndevice, 1);
    static const int first[5] = {0, 0, 1, 1, 1};
    for (int k = 0; k < 5; k++) assert_int_equal(sp.first_device[k], first[k]);
    assert_string_equal(sp.device[0]->name, "p_par0");
    mt_tsplit none;
    mt_tir_split_host_device(A, NULL, 0, &none);
    assert_int_equal(none.ndevice, 0);
    assert_int_equal(none.first_device[0], 0);
    TIR_GUARD_END();
}

/* A let of a vector value (after vectorize) captured: a vector param and a
 * vector argument; a scalar let beside it stays scalar. */
static void test_vector_let(void **state) {
    TIR_GUARD();
    mt_tvar *c = ivar("c"), *vv = mt_tvar_new(A, "vv", MT_FLOAT32), *sc = ivar("sc");
    mt_tbuffer *o = buf1("o", 64);
    mt_texpr *vref = V(vv);
    vref->lanes = 4;
    mt_texpr *idx = mt_te_ramp(A, add(mul(V(c), I(4)), V(sc)), I(1), 4);
    mt_tstmt *pl = par(c, I(16), mt_ts_store(A, o, &idx, 1, vref));
    mt_tstmt *body = mt_ts_let(A, sc, I(0), mt_ts_let(A, vv, mt_te_broadcast(A, F(2.0), 4), pl));
    mt_tsplit sp = split1(func("v", &o, 1, NULL, 0, NULL, body));
    const mt_tfunc *d = sp.device[0];
    assert_int_equal(d->nparams, 5);
    assert_ptr_equal(d->params[3].var, sc);
    assert_true(d->params[3].lanes <= 1);
    assert_ptr_equal(d->params[4].var, vv);
    assert_int_equal(d->params[4].lanes, 4);
    const mt_tlaunch *l = sp.host[0]->body->body->body->launch;
    assert_int_equal(l->nargs, 3);
    assert_int_equal(l->args[2].value->lanes, 4);
    assert_int_equal(l->args[1].value->lanes, 1);
    assert_non_null(strstr(mt_tfunc_print(A, d),
                           "(begin: T.int64, end: T.int64, o: T.Buffer((64,), \"float32\"), "
                           "sc: T.int64, vv: T.float32x4):\n"));
    TIR_GUARD_END();
}

/* Device names are unique in the program: k's first body is k_par0_1 when
 * a function k_par0 exists; the next is k_par1. */
static void test_unique_names(void **state) {
    TIR_GUARD();
    mt_tvar *i = ivar("i"), *j = ivar("j");
    mt_tbuffer *o = buf1("o", 4);
    mt_tstmt *two = seq2(par(i, I(4), st(o, F(1.0), V(i))), par(j, I(4), st(o, F(2.0), V(j))));
    mt_tfunc *fs[2] = {func("k", &o, 1, NULL, 0, NULL, two), func("k_par0", &o, 1, NULL, 0, NULL, NULL)};
    mt_tsplit sp;
    mt_tir_split_host_device(A, fs, 2, &sp);
    assert_int_equal(sp.ndevice, 2);
    assert_string_equal(sp.device[0]->name, "k_par0_1");
    assert_string_equal(sp.device[1]->name, "k_par1");
    assert_string_equal(sp.host[1]->name, "k_par0");
    TIR_GUARD_END();
}

/* A launch as a node: printed with GPU extents, visited (min, grid, block,
 * shared, then value arguments), substituted (a new launch only when an
 * expression changed). */
typedef struct count_vars {
    int vars;
} count_vars;
static void count_var(mt_tvisitor *v, const mt_texpr *e) {
    if (e->kind == TE_VAR) ((count_vars *)v->ctx)->vars++;
    mt_tvisit_expr_children(v, e);
}

static void test_launch_node(void **state) {
    TIR_GUARD();
    mt_tvar *n = ivar("n"), *m = ivar("m");
    mt_tbuffer *a = buf1("a", 8);
    mt_tfunc *kern = mt_tfunc_new(A, "kern");
    mt_targ args[2] = {{a, NULL}, {NULL, add(V(n), I(1))}};
    mt_tstmt *l = mt_ts_launch(A, kern, args, 2);
    l->launch->grid[0] = I(4);
    l->launch->grid[1] = V(n);
    l->launch->block[0] = I(128);
    l->launch->shared_bytes = mul(V(m), I(4));
    ASSERT_TEXT(mt_tstmt_print(A, l),
                "T.launch(\"kern\", a, n + 1, grid=(4, n), block=(128,), shared=m * 4)\n");
    count_vars cv = {0};
    mt_tvisitor v = {count_var, NULL, &cv};
    mt_tvisit_stmt(&v, l);
    assert_int_equal(cv.vars, 3); /* grid n, shared m, the argument's n */
    mt_tvar *other = ivar("other");
    mt_texpr *seven = I(7);
    assert_ptr_equal(mt_tsubst_stmt(A, l, &other, &seven, 1), l);
    mt_tstmt *r = mt_tsubst_stmt(A, l, &n, &seven, 1);
    assert_ptr_not_equal(r, l);
    assert_ptr_not_equal(r->launch, l->launch);
    ASSERT_TEXT(mt_tstmt_print(A, r),
                "T.launch(\"kern\", a, 7 + 1, grid=(4, 7), block=(128,), shared=m * 4)\n");
    assert_ptr_equal(r->launch->args[0].buf, a);
    assert_ptr_equal(r->launch->shared_bytes, l->launch->shared_bytes);
    ASSERT_TEXT(mt_tstmt_print(A, l),  /* unchanged */
                "T.launch(\"kern\", a, n + 1, grid=(4, n), block=(128,), shared=m * 4)\n");
    TIR_GUARD_END();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_captures),    TIR_TEST(test_nested_and_siblings),
        TIR_TEST(test_no_parallel_loop), TIR_TEST(test_vector_let),
        TIR_TEST(test_unique_names), TIR_TEST(test_launch_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
