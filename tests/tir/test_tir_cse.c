/*
 * test_tir_cse.c -- tir_cse (src/passes/tir/cse.c): what becomes a let,
 * what does not, where the lets go, and its limits. Numerics: every kernel
 * of the suite runs through the pass (the pipeline runs it last); the
 * repeated-producer case is also checked end to end in tests/e2e.
 */
#include "tir/tir_test.h"
#include "passes/tir/tir_passes.h"

static mt_tfunc *func_of(const char *name, mt_tbuffer *const *params, int n, mt_tstmt *body) {
    mt_tfunc *f = mt_tfunc_new(A, name);
    for (int i = 0; i < n; i++) mt_tfunc_add_param(A, f, params[i], NULL);
    f->num_outputs = 1;
    f->body = body;
    return f;
}

static mt_tstmt *loop(mt_tvar *v, int64_t ext, mt_tstmt *body) {
    return mt_ts_for(A, v, I(0), I(ext), MT_FOR_SERIAL, body);
}

static mt_texpr *call1(mt_intrin fn, mt_texpr *x) { return mt_te_call(A, fn, &x, 1); }

static int count_lets(const mt_tstmt *s) {
    int n = 0;
    while (s && s->kind == TS_LET) n++, s = s->body;
    return n;
}

/* out[i] = exp(x[i]) * 2 * (exp(x[i]) * 2) + exp(x[i]) * 2: what inlining
 * a producer with three readers leaves. The copies may be one node shared
 * three times or three equal trees: both become one let. */
static void test_inlined_producer(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 64), *out = buf1("out", 64);
    mt_tvar *i = ivar("i");
    for (int shared = 0; shared < 2; shared++) {
        mt_texpr *t[3];
        for (int k = 0; k < 3; k++)
            t[k] = k && shared ? t[0] : mul(call1(IN_EXP, ld(x, V(i))), F(2.0));
        mt_tbuffer *ps[2] = {x, out};
        mt_tfunc *f = func_of("f", ps, 2, loop(i, 64, st(out, add(mul(t[0], t[1]), t[2]), V(i))));
        mt_tfunc *g = mt_tir_cse(A, f);
        assert_ptr_not_equal(g, f);
        ASSERT_TEXT(mt_tfunc_print(A, g),
                    "@T.prim_func\n"
                    "def f(x: T.Buffer((64,), \"float32\"), out: T.Buffer((64,), \"float32\")):\n"
                    "    for i in range(64):\n"
                    "        cse_v1 = T.exp(x[i]) * 2.0\n"
                    "        out[i] = cse_v1 * cse_v1 + cse_v1\n");
    }
    TIR_GUARD_END();
}

/* Nothing repeated, or only variables, immediates and loads of a variable
 * (fewer than three nodes): the function itself comes back. */
static void test_nothing_to_do(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 64), *out = buf1("out", 64);
    mt_tvar *i = ivar("i");
    mt_tbuffer *ps[2] = {x, out};
    mt_texpr *v = add(mul(ld(x, V(i)), ld(x, V(i))), mt_te_cast(A, MT_FLOAT32, V(i)));
    mt_tfunc *f = func_of("f", ps, 2, loop(i, 64, st(out, v, V(i))));
    assert_ptr_equal(mt_tir_cse(A, f), f);
    TIR_GUARD_END();
}

/* A unit-stride ramp stays in its load and store (codegen makes one vector
 * access of it), and so does index arithmetic that loads nothing (codegen
 * reads indices; LLVM merges repeats of it): the repeated vector load
 * becomes a vector let, `i * 16` stays where it is. */
static void test_ramps_and_indices_stay(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 256), *out = buf1("out", 256);
    mt_tvar *i = ivar("i");
    mt_tbuffer *ps[2] = {x, out};
    mt_texpr *r[3];
    for (int k = 0; k < 3; k++) r[k] = mt_te_ramp(A, mul(V(i), I(16)), I(1), 16);
    mt_texpr *xv = ld(x, r[0]), *xv2 = ld(x, r[1]);
    mt_tfunc *f = func_of("f", ps, 2, loop(i, 16, st(out, mul(xv, xv2), r[2])));
    mt_tfunc *g = mt_tir_cse(A, f);
    ASSERT_TEXT(mt_tfunc_print(A, g),
                "@T.prim_func\n"
                "def f(x: T.Buffer((256,), \"float32\"), out: T.Buffer((256,), \"float32\")):\n"
                "    for i in range(16):\n"
                "        cse_v1 = x[T.Ramp(i * 16, 1, 16)]\n"
                "        out[T.Ramp(i * 16, 1, 16)] = cse_v1 * cse_v1\n");
    const mt_tstmt *body = g->body->body;
    assert_int_equal(body->kind, TS_LET);
    assert_int_equal(body->value->lanes, 16);          /* cse_v1 = a 16-lane load */
    assert_int_equal(body->body->value->a->lanes, 16); /* its uses too */
    /* scalar: out[i * 3 + 1] = (i * 3 + 1) * 2 + (i * 3 + 1): nothing */
    mt_texpr *k3[3];
    for (int k = 0; k < 3; k++) k3[k] = add(mul(V(i), I(3)), I(1));
    mt_tbuffer *o = mt_tbuffer_new_const(A, "o", MT_INT64, 1, (int64_t[]){64});
    mt_tbuffer *ps2[1] = {o};
    mt_tfunc *f2 = func_of("f2", ps2, 1, loop(i, 16, st(o, add(mul(k3[0], I(2)), k3[1]), k3[2])));
    assert_ptr_equal(mt_tir_cse(A, f2), f2);
    TIR_GUARD_END();
}

/* Statements are not merged: a load repeated in two stores is loaded by each
 * (the first store may change it). Lets, if conditions and evaluates are
 * statements like stores. */
static void test_per_statement(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 64), *out = buf1("out", 64);
    mt_tvar *i = ivar("i"), *t = mt_tvar_new(A, "t", MT_FLOAT32);
    mt_tbuffer *ps[2] = {x, out};
    mt_texpr *x1 = add(ld(x, V(i)), F(1.0));
    mt_tstmt *s1 = st(x, mul(x1, x1), V(i));
    mt_tstmt *s2 = st(out, x1, V(i));
    mt_texpr *c = bin(TE_LT, add(V(t), F(1.0)), mul(add(V(t), F(1.0)), F(3.0)));
    mt_tstmt *s3 = mt_ts_if(A, c, st(out, V(t), V(i)), NULL);
    mt_tstmt *body = mt_ts_let(A, t, mul(x1, x1), seq2(s3, seq2(s1, s2)));
    mt_tfunc *f = func_of("f", ps, 2, loop(i, 64, body));
    ASSERT_TEXT(mt_tfunc_print(A, mt_tir_cse(A, f)),
                "@T.prim_func\n"
                "def f(x: T.Buffer((64,), \"float32\"), out: T.Buffer((64,), \"float32\")):\n"
                "    for i in range(64):\n"
                "        cse_v1 = x[i] + 1.0\n"
                "        t = cse_v1 * cse_v1\n"
                "        cse_v2 = t + 1.0\n"
                "        if cse_v2 < cse_v2 * 3.0:\n"
                "            out[i] = t\n"
                "        cse_v3 = x[i] + 1.0\n"
                "        x[i] = cse_v3 * cse_v3\n"
                "        out[i] = x[i] + 1.0\n");
    TIR_GUARD_END();
}

/* At most 32 lets per statement: 40 different repeated subexpressions leave
 * 8 as they were, and the statement still computes the same thing. */
static void test_round_limit(void **state) {
    TIR_GUARD();
    mt_tbuffer *x = buf1("x", 64), *out = buf1("out", 64);
    mt_tvar *i = ivar("i");
    mt_tbuffer *ps[2] = {x, out};
    mt_texpr *sum = F(0.0);
    for (int k = 1; k <= 40; k++) {
        mt_texpr *term = add(ld(x, V(i)), F(k));
        sum = add(sum, mul(term, term));
    }
    mt_tfunc *f = func_of("f", ps, 2, loop(i, 64, st(out, sum, V(i))));
    mt_tfunc *g = mt_tir_cse(A, f);
    assert_int_equal(count_lets(g->body->body), 32);
    TIR_GUARD_END();
}

/* Candidates of equal size are taken in the order of their first
 * occurrence, whatever the addresses of the buffers in them (which the
 * hash mixes in): the same function, built again with buffers elsewhere in
 * memory, gets the same lets. It once took them in the order of the hash
 * table's slots, and mtc printed different lets from run to run. */
static void test_equal_sizes_in_order(void **state) {
    TIR_GUARD();
    mt_tvar *i = ivar("i");
    for (int rep = 0; rep < 40; rep++) {
        mt_tbuffer *ps[4] = {buf1("x", 64), buf1("y", 64), buf1("z", 64), buf1("out", 64)};
        mt_texpr *sum = NULL;
        for (int k = 0; k < 3; k++) {
            mt_texpr *t = call1(IN_EXP, mul(ld(ps[k], V(i)), F(2.0)));
            sum = sum ? add(sum, mul(t, t)) : mul(t, t);
        }
        mt_tfunc *f = func_of("f", ps, 4, loop(i, 64, st(ps[3], sum, V(i))));
        ASSERT_TEXT(mt_tfunc_print(A, mt_tir_cse(A, f)),
                    "@T.prim_func\n"
                    "def f(x: T.Buffer((64,), \"float32\"), y: T.Buffer((64,), \"float32\"), "
                    "z: T.Buffer((64,), \"float32\"), out: T.Buffer((64,), \"float32\")):\n"
                    "    for i in range(64):\n"
                    "        cse_v1 = T.exp(z[i] * 2.0)\n"
                    "        cse_v2 = T.exp(y[i] * 2.0)\n"
                    "        cse_v3 = T.exp(x[i] * 2.0)\n"
                    "        out[i] = cse_v3 * cse_v3 + cse_v2 * cse_v2 + cse_v1 * cse_v1\n");
    }
    TIR_GUARD_END();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_inlined_producer), TIR_TEST(test_nothing_to_do), TIR_TEST(test_ramps_and_indices_stay),
        TIR_TEST(test_per_statement),    TIR_TEST(test_round_limit),
        TIR_TEST(test_equal_sizes_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
