/*
 * test_tir_simplify.c -- one case per simplify rule, before/after text, and
 * the folding constructors of tir/arith.h.
 */
#include "tir/tir_test.h"
#include "passes/tir/tir_passes.h"
#include "tir/arith.h"

static mt_tbuffer *OUT;

/* The simplified form of e, printed (e is stored into OUT[0] by a function
 * that simplify runs on). */
static const char *simp(mt_texpr *e) {
    if (!OUT) OUT = buf1("o", 4);
    mt_tfunc *f = mt_tfunc_new(A, "f");
    mt_tfunc_add_param(A, f, OUT, NULL);
    f->body = st(OUT, e, I(0));
    mt_tfunc *g = mt_tir_simplify(A, f);
    assert_int_equal(g->body->kind, TS_STORE);
    return mt_texpr_print(A, g->body->value);
}

static const char *simp_stmt(mt_tstmt *s) {
    mt_tfunc *f = mt_tfunc_new(A, "f");
    f->body = s;
    return mt_tstmt_print(A, mt_tir_simplify(A, f)->body);
}

static mt_texpr *i32(int64_t v) { return mt_te_int(A, MT_INT32, v); }
static mt_texpr *f64(double v) { return mt_te_float(A, MT_FLOAT64, v); }
static mt_texpr *T_(void) { return mt_te_int(A, MT_BOOL, 1); }
static mt_texpr *F_(void) { return mt_te_int(A, MT_BOOL, 0); }

static void test_fold_int(void **state) {
    TIR_GUARD();
    OUT = NULL;
    ASSERT_TEXT(simp(add(I(2), mul(I(3), I(4)))), "14");
    ASSERT_TEXT(simp(sub(I(2), I(5))), "-3");
    ASSERT_TEXT(simp(bin(TE_MIN, I(2), I(-5))), "-5");
    ASSERT_TEXT(simp(bin(TE_MAX, I(2), I(-5))), "2");
    /* Wraparound in the dtype's width. */
    ASSERT_TEXT(simp(add(i32(2147483647), i32(1))), "T.int32(-2147483648)");
    ASSERT_TEXT(simp(mul(i32(65536), i32(65536))), "T.int32(0)");
    ASSERT_TEXT(simp(sub(i32(-2147483648), i32(1))), "T.int32(2147483647)");
    ASSERT_TEXT(simp(add(mt_te_int(A, MT_INT8, 127), mt_te_int(A, MT_INT8, 1))), "T.int8(-128)");
    ASSERT_TEXT(simp(add(mt_te_int(A, MT_UINT8, 250), mt_te_int(A, MT_UINT8, 10))), "T.uint8(4)");
    ASSERT_TEXT(simp(sub(mt_te_int(A, MT_UINT8, 0), mt_te_int(A, MT_UINT8, 1))), "T.uint8(255)");
    ASSERT_TEXT(simp(add(I(INT64_MAX), I(1))), "-9223372036854775808");
    ASSERT_TEXT(simp(mt_te_unary(A, TE_NEG, i32(-2147483648))), "T.int32(-2147483648)");
    /* Python floor division and modulo; C truncation for TE_DIV. */
    ASSERT_TEXT(simp(bin(TE_FLOORDIV, I(-7), I(2))), "-4");
    ASSERT_TEXT(simp(bin(TE_FLOORMOD, I(-7), I(2))), "1");
    ASSERT_TEXT(simp(bin(TE_FLOORDIV, I(7), I(-2))), "-4");
    ASSERT_TEXT(simp(bin(TE_FLOORMOD, I(7), I(-2))), "-1");
    ASSERT_TEXT(simp(bin(TE_FLOORDIV, I(-8), I(2))), "-4");
    ASSERT_TEXT(simp(bin(TE_FLOORMOD, I(-8), I(2))), "0");
    ASSERT_TEXT(simp(bin(TE_FLOORDIV, I(7), I(2))), "3");
    ASSERT_TEXT(simp(bin(TE_DIV, I(-7), I(2))), "-3");
    ASSERT_TEXT(simp(bin(TE_FLOORMOD, i32(-7), i32(3))), "T.int32(2)");
    ASSERT_TEXT(simp(bin(TE_FLOORDIV, I(INT64_MIN), I(-1))), "-9223372036854775808");
    ASSERT_TEXT(simp(bin(TE_FLOORMOD, I(INT64_MIN), I(-1))), "0");
    ASSERT_TEXT(simp(bin(TE_DIV, i32(-2147483648), i32(-1))), "T.int32(-2147483648)");
    /* Division by zero is left for run time. */
    ASSERT_TEXT(simp(bin(TE_FLOORDIV, I(7), I(0))), "7 // 0");
    ASSERT_TEXT(simp(bin(TE_FLOORMOD, I(7), I(0))), "7 % 0");
    ASSERT_TEXT(simp(bin(TE_DIV, I(7), I(0))), "T.truncdiv(7, 0)");
    ASSERT_TEXT(simp(bin(TE_FLOORDIV, I(7), sub(I(2), I(2)))), "7 // 0");
    TIR_GUARD_END();
}

static void test_fold_float(void **state) {
    TIR_GUARD();
    OUT = NULL;
    ASSERT_TEXT(simp(add(F(1.5), F(2.25))), "3.75");
    ASSERT_TEXT(simp(add(F(0.1), F(0.2))), "0.300000012"); /* rounded to float32 */
    ASSERT_TEXT(simp(add(f64(0.1), f64(0.2))), "T.float64(0.30000000000000004)");
    ASSERT_TEXT(simp(bin(TE_DIV, F(1), F(4))), "0.25");
    ASSERT_TEXT(simp(bin(TE_DIV, F(1), F(0))), "1.0 / 0.0");
    ASSERT_TEXT(simp(bin(TE_FLOORDIV, F(-7), F(2))), "-4.0");
    ASSERT_TEXT(simp(bin(TE_FLOORMOD, F(-7), F(2))), "1.0");
    ASSERT_TEXT(simp(bin(TE_FLOORMOD, F(7), F(-2))), "-1.0");
    ASSERT_TEXT(simp(bin(TE_MAX, F(1), F(-2))), "1.0");
    ASSERT_TEXT(simp(bin(TE_MIN, F(0), F(-0.0))), "T.min(0.0, -0.0)");
    ASSERT_TEXT(simp(mt_te_unary(A, TE_NEG, F(2))), "-2.0");
    mt_texpr *h = mt_te_float(A, MT_FLOAT16, 1);
    ASSERT_TEXT(simp(add(h, mt_te_float(A, MT_FLOAT16, 2))), "T.float16(1.0) + T.float16(2.0)");
    TIR_GUARD_END();
}

static void test_fold_compare_logic_select(void **state) {
    TIR_GUARD();
    OUT = NULL;
    mt_tvar *x = ivar("x");
    mt_texpr *c = bin(TE_LT, V(x), I(4));
    ASSERT_TEXT(simp(bin(TE_LT, I(3), I(4))), "True");
    ASSERT_TEXT(simp(bin(TE_GE, I(3), I(4))), "False");
    ASSERT_TEXT(simp(bin(TE_EQ, F(2), F(2))), "True");
    ASSERT_TEXT(simp(bin(TE_NE, F(NAN), F(NAN))), "True");
    ASSERT_TEXT(simp(bin(TE_AND, T_(), c)), "x < 4");
    ASSERT_TEXT(simp(bin(TE_AND, c, F_())), "False");
    ASSERT_TEXT(simp(bin(TE_OR, F_(), c)), "x < 4");
    ASSERT_TEXT(simp(bin(TE_OR, c, T_())), "True");
    ASSERT_TEXT(simp(mt_te_unary(A, TE_NOT, T_())), "False");
    ASSERT_TEXT(simp(mt_te_unary(A, TE_NOT, mt_te_unary(A, TE_NOT, c))), "x < 4");
    ASSERT_TEXT(simp(mt_te_select(A, T_(), V(x), I(0))), "x");
    ASSERT_TEXT(simp(mt_te_select(A, bin(TE_GT, I(1), I(2)), V(x), I(0))), "0");
    ASSERT_TEXT(simp(mt_te_select(A, c, V(x), V(x))), "x");
    ASSERT_TEXT(simp(mt_te_select(A, c, V(x), I(0))), "T.Select(x < 4, x, 0)");
    TIR_GUARD_END();
}

static void test_fold_cast(void **state) {
    TIR_GUARD();
    OUT = NULL;
    ASSERT_TEXT(simp(mt_te_cast(A, MT_INT32, I(3000000000LL))), "T.int32(-1294967296)");
    ASSERT_TEXT(simp(mt_te_cast(A, MT_UINT8, I(-1))), "T.uint8(255)");
    ASSERT_TEXT(simp(mt_te_cast(A, MT_FLOAT32, I(3))), "3.0");
    ASSERT_TEXT(simp(mt_te_cast(A, MT_FLOAT32, I(16777217))), "16777216.0");
    ASSERT_TEXT(simp(mt_te_cast(A, MT_INT32, F(2.7))), "T.int32(2)");
    ASSERT_TEXT(simp(mt_te_cast(A, MT_INT32, F(-2.7))), "T.int32(-2)");
    ASSERT_TEXT(simp(mt_te_cast(A, MT_INT32, F(1e20))), "T.Cast(\"int32\", T.float32(1e+20))");
    ASSERT_TEXT(simp(mt_te_cast(A, MT_UINT8, F(-1))), "T.Cast(\"uint8\", T.float32(-1.0))");
    ASSERT_TEXT(simp(mt_te_cast(A, MT_FLOAT32, f64(0.1))), "0.100000001");
    ASSERT_TEXT(simp(mt_te_cast(A, MT_BOOL, F(0.5))), "True");
    ASSERT_TEXT(simp(mt_te_cast(A, MT_INT64, T_())), "1");
    ASSERT_TEXT(simp(mt_te_cast(A, MT_FLOAT16, F(1))), "T.Cast(\"float16\", T.float32(1.0))");
    TIR_GUARD_END();
}

static void test_identities(void **state) {
    TIR_GUARD();
    OUT = NULL;
    mt_tvar *x = ivar("x");
    mt_tvar *y = mt_tvar_new(A, "y", MT_FLOAT32);
    ASSERT_TEXT(simp(mul(V(x), I(1))), "x");
    ASSERT_TEXT(simp(mul(I(1), V(x))), "x");
    ASSERT_TEXT(simp(add(V(x), I(0))), "x");
    ASSERT_TEXT(simp(add(I(0), V(x))), "x");
    ASSERT_TEXT(simp(sub(V(x), I(0))), "x");
    ASSERT_TEXT(simp(mul(V(x), I(0))), "0");
    ASSERT_TEXT(simp(mul(I(0), V(x))), "0");
    ASSERT_TEXT(simp(bin(TE_FLOORDIV, V(x), I(1))), "x");
    ASSERT_TEXT(simp(bin(TE_DIV, V(x), I(1))), "x");
    ASSERT_TEXT(simp(bin(TE_FLOORMOD, V(x), I(1))), "0");
    ASSERT_TEXT(simp(mt_te_unary(A, TE_NEG, mt_te_unary(A, TE_NEG, V(x)))), "x");
    /* Index arithmetic left over by flattening a unit loop. */
    ASSERT_TEXT(simp(add(mul(I(0), I(3)), V(x))), "x");
    /* Floats: only the IEEE-exact identities. */
    ASSERT_TEXT(simp(mul(V(y), F(1))), "y");
    ASSERT_TEXT(simp(mul(F(1), V(y))), "y");
    ASSERT_TEXT(simp(bin(TE_DIV, V(y), F(1))), "y");
    ASSERT_TEXT(simp(sub(V(y), F(0))), "y");
    ASSERT_TEXT(simp(add(V(y), F(-0.0))), "y");
    ASSERT_TEXT(simp(add(V(y), F(0))), "y + 0.0");
    ASSERT_TEXT(simp(mul(V(y), F(0))), "y * 0.0");
    TIR_GUARD_END();
}

static void test_reassociate(void **state) {
    TIR_GUARD();
    OUT = NULL;
    mt_tvar *x = ivar("x");
    ASSERT_TEXT(simp(add(add(V(x), I(3)), I(4))), "x + 7");
    ASSERT_TEXT(simp(sub(add(V(x), I(3)), I(5))), "x - 2");
    ASSERT_TEXT(simp(add(sub(V(x), I(3)), I(3))), "x");
    ASSERT_TEXT(simp(sub(sub(V(x), I(3)), I(4))), "x - 7");
    ASSERT_TEXT(simp(add(add(add(V(x), I(1)), I(1)), I(1))), "x + 3");
    mt_tvar *z = mt_tvar_new(A, "z", MT_INT32);
    ASSERT_TEXT(simp(add(add(V(z), i32(2147483647)), i32(1))), "z + T.int32(-2147483648)");
    ASSERT_TEXT(simp(add(add(V(z), i32(-5)), i32(2))), "z - T.int32(3)");
    TIR_GUARD_END();
}

static void test_statements(void **state) {
    TIR_GUARD();
    mt_tbuffer *o = buf1("o", 4), *a = buf1("a", 4);
    mt_tvar *i = ivar("i"), *x = ivar("x"), *y = mt_tvar_new(A, "y", MT_FLOAT32);
    mt_tstmt *w = st(o, F(1), V(i));
    mt_tstmt *w2 = st(o, F(2), V(i));
    /* ifs with constant conditions */
    ASSERT_TEXT(simp_stmt(mt_ts_if(A, bin(TE_LT, I(1), I(2)), w, w2)), "o[i] = 1.0\n");
    ASSERT_TEXT(simp_stmt(mt_ts_if(A, bin(TE_GT, I(1), I(2)), w, w2)), "o[i] = 2.0\n");
    ASSERT_TEXT(simp_stmt(mt_ts_if(A, bin(TE_GT, I(1), I(2)), w, NULL)), "T.evaluate(0)\n");
    mt_tstmt *empty = mt_ts_seq(A, NULL, 0);
    ASSERT_TEXT(simp_stmt(mt_ts_if(A, bin(TE_LT, V(i), I(2)), empty, w2)),
                "if not i < 2:\n    o[i] = 2.0\n");
    ASSERT_TEXT(simp_stmt(mt_ts_if(A, bin(TE_LT, V(i), I(2)), w, mt_ts_eval(A, I(0)))),
                "if i < 2:\n    o[i] = 1.0\n");
    /* lets: constant, variable, used once, unused, used twice, with a load */
    ASSERT_TEXT(simp_stmt(mt_ts_let(A, x, I(2), st(o, F(1), mul(V(x), add(V(i), I(0)))))),
                "o[2 * i] = 1.0\n");
    ASSERT_TEXT(simp_stmt(mt_ts_let(A, x, V(i), st(o, F(1), add(V(x), V(x))))), "o[i + i] = 1.0\n");
    ASSERT_TEXT(simp_stmt(mt_ts_let(A, x, mul(V(i), I(4)), st(o, F(1), add(V(x), I(1))))),
                "o[i * 4 + 1] = 1.0\n");
    ASSERT_TEXT(simp_stmt(mt_ts_let(A, x, mul(V(i), I(4)), w)), "o[i] = 1.0\n");
    ASSERT_TEXT(simp_stmt(mt_ts_let(A, x, mul(V(i), I(4)), st(o, F(1), add(V(x), V(x))))),
                "x = i * 4\no[x + x] = 1.0\n");
    mt_tstmt *uses_y = seq2(st(a, F(0), I(0)), st(o, V(y), V(i)));
    ASSERT_TEXT(simp_stmt(mt_ts_let(A, y, ld(a, I(0)), uses_y)),
                "y = a[0]\na[0] = 0.0\no[i] = y\n");
    /* loops: zero trips, empty body, non-constant extent kept */
    ASSERT_TEXT(simp_stmt(mt_ts_for(A, i, I(0), sub(I(2), I(2)), MT_FOR_SERIAL, w)), "T.evaluate(0)\n");
    ASSERT_TEXT(simp_stmt(mt_ts_for(A, i, I(0), I(4), MT_FOR_SERIAL, seq2(empty, mt_ts_eval(A, F(0))))),
                "T.evaluate(0)\n");
    ASSERT_TEXT(simp_stmt(mt_ts_for(A, i, I(0), add(V(x), I(0)), MT_FOR_SERIAL, w)),
                "for i in range(x):\n    o[i] = 1.0\n");
    /* sequences: flattened, no-ops dropped */
    mt_tstmt *inner[3] = {w, mt_ts_eval(A, I(0)), seq2(w2, empty)};
    mt_tstmt *outer[3] = {mt_ts_seq(A, inner, 3), empty, mt_ts_eval(A, V(x))};
    mt_tstmt *flat = mt_tir_simplify(A, &(mt_tfunc){.name = "f", .body = mt_ts_seq(A, outer, 3)})->body;
    assert_int_equal(flat->kind, TS_SEQ);
    assert_int_equal(flat->nstmts, 3);
    ASSERT_TEXT(mt_tstmt_print(A, flat), "o[i] = 1.0\no[i] = 2.0\nT.evaluate(x)\n");
    ASSERT_TEXT(simp_stmt(seq2(empty, w)), "o[i] = 1.0\n");
    ASSERT_TEXT(simp_stmt(seq2(empty, mt_ts_alloc(A, a, empty))), "T.evaluate(0)\n");
    TIR_GUARD_END();
}

/* An already simple function comes back as the same pointer. */
/* The value of e stored at o[0] inside `for i in range(lo, lo + ext)` (and
 * a loop j in range(4) around it), simplified and printed. */
static const char *simp_in_loop(mt_tvar *i, int64_t lo, mt_texpr *ext, mt_tvar *j, mt_texpr *e) {
    if (!OUT) OUT = buf1("o", 4);
    mt_tfunc *f = mt_tfunc_new(A, "f");
    mt_tfunc_add_param(A, f, OUT, NULL);
    mt_tstmt *body = mt_ts_for(A, i, I(lo), ext, MT_FOR_SERIAL, st(OUT, e, I(0)));
    f->body = mt_ts_for(A, j, I(0), I(4), MT_FOR_SERIAL, body);
    mt_tfunc *g = mt_tir_simplify(A, f);
    const mt_tstmt *s = g->body;
    while (s->kind == TS_FOR) s = s->body;
    if (s->kind != TS_STORE) return mt_tstmt_print(A, s);
    return mt_texpr_print(A, s->value);
}

/* Ranges of loop and let variables decide floordiv, floormod, min, max and
 * comparisons (the bounds of tir/arith.c), and never when the arithmetic
 * could wrap. */
static void test_bounds(void **state) {
    TIR_GUARD();
    OUT = NULL;
    mt_tvar *i = ivar("i"), *j = ivar("j");
    mt_texpr *x = V(i);
    ASSERT_TEXT(simp_in_loop(i, 0, I(16), j, bin(TE_FLOORDIV, x, I(16))), "0");
    ASSERT_TEXT(simp_in_loop(i, 16, I(16), j, bin(TE_FLOORDIV, x, I(16))), "1");
    ASSERT_TEXT(simp_in_loop(i, 0, I(16), j, bin(TE_FLOORMOD, x, I(16))), "i");
    ASSERT_TEXT(simp_in_loop(i, 0, I(17), j, bin(TE_FLOORMOD, x, I(16))), "i % 16");
    ASSERT_TEXT(simp_in_loop(i, 0, I(16), j, bin(TE_FLOORDIV, x, I(8))), "i // 8");
    ASSERT_TEXT(simp_in_loop(i, 0, I(16), j, bin(TE_MIN, x, I(20))), "i");
    ASSERT_TEXT(simp_in_loop(i, 0, I(16), j, bin(TE_MIN, I(15), x)), "i");
    ASSERT_TEXT(simp_in_loop(i, 0, I(16), j, bin(TE_MAX, x, I(15))), "15");
    ASSERT_TEXT(simp_in_loop(i, 0, I(16), j, bin(TE_MIN, x, I(10))), "T.min(i, 10)");
    ASSERT_TEXT(simp_in_loop(i, 0, I(16), j, bin(TE_LT, x, I(16))), "True");
    ASSERT_TEXT(simp_in_loop(i, 0, I(16), j, bin(TE_GE, x, I(16))), "False");
    ASSERT_TEXT(simp_in_loop(i, 0, I(16), j, bin(TE_EQ, x, I(-1))), "False");
    ASSERT_TEXT(simp_in_loop(i, 0, I(16), j, bin(TE_LT, x, I(15))), "i < 15");
    /* ranges through arithmetic: j * 4 + i with j < 4, i < 4 is < 16 */
    ASSERT_TEXT(simp_in_loop(i, 0, I(4), j, bin(TE_LT, add(mul(V(j), I(4)), x), I(16))), "True");
    /* fuse then split: (j * 4 + i) // 4 -> j and % 4 -> i when i < 4 */
    ASSERT_TEXT(simp_in_loop(i, 0, I(4), j, bin(TE_FLOORDIV, add(mul(V(j), I(4)), x), I(4))), "j");
    ASSERT_TEXT(simp_in_loop(i, 0, I(4), j, bin(TE_FLOORMOD, add(mul(V(j), I(4)), x), I(4))), "i");
    ASSERT_TEXT(simp_in_loop(i, 0, I(5), j, bin(TE_FLOORMOD, add(mul(V(j), I(4)), x), I(4))),
                "(j * 4 + i) % 4");
    /* an extent that is an expression of an outer variable: i < 4 - j <= 4 */
    ASSERT_TEXT(simp_in_loop(i, 0, sub(I(4), V(j)), j, bin(TE_LT, x, I(4))), "True");
    /* an if that the ranges decide keeps one branch */
    mt_tstmt *guarded = mt_ts_if(A, bin(TE_LT, x, I(16)), st(buf1("o", 4), F(1.0), x), NULL);
    mt_tstmt *loop = mt_ts_for(A, i, I(0), I(16), MT_FOR_SERIAL, guarded);
    ASSERT_TEXT(simp_stmt(loop), "for i in range(16):\n    o[i] = 1.0\n");
    /* a let's range is its value's */
    mt_tvar *t = ivar("t");
    mt_tstmt *let = mt_ts_let(A, t, add(x, I(2)),
                              seq2(st(OUT, bin(TE_FLOORDIV, V(t), I(32)), V(t)),
                                   st(OUT, V(t), V(t))));
    ASSERT_TEXT(simp_stmt(mt_ts_for(A, i, I(0), I(16), MT_FOR_SERIAL, let)),
                "for i in range(16):\n    t = i + 2\n    o[t] = 0\n    o[t] = t\n");
    /* no range for a variable that no loop or let binds */
    ASSERT_TEXT(simp(bin(TE_FLOORMOD, V(ivar("n")), I(16))), "n % 16");
    /* int32 arithmetic that could wrap: i * 100000 for i < 100000 does not
     * fit in int32, so nothing is assumed about it */
    mt_tvar *k = mt_tvar_new(A, "k", MT_INT32);
    mt_texpr *big = bin(TE_LT, mul(V(k), i32(100000)), i32(0));
    ASSERT_TEXT(simp_stmt(mt_ts_for(A, k, i32(0), i32(100000), MT_FOR_SERIAL,
                                    st(OUT, mt_te_cast(A, MT_FLOAT32, big), I(0)))),
                "for k in range(T.int32(100000)):\n    o[0] = T.Cast(\"float32\", k * T.int32(100000) < T.int32(0))\n");
    /* an immediate outside its dtype is what codegen makes of it (truncated):
     * T.int32(2^32 + 4) is 4, so k < it is not decided for k in [0, 16),
     * and T.int32(2^32 + 20) is 20, so k < it is True */
    ASSERT_TEXT(simp_stmt(mt_ts_for(A, k, i32(0), i32(16), MT_FOR_SERIAL,
                                    st(OUT, mt_te_cast(A, MT_FLOAT32,
                                                       bin(TE_LT, V(k), i32(4294967300LL))),
                                       I(0)))),
                "for k in range(T.int32(16)):\n    o[0] = T.Cast(\"float32\", k < T.int32(4294967300))\n");
    ASSERT_TEXT(simp_stmt(mt_ts_for(A, k, i32(0), i32(16), MT_FOR_SERIAL,
                                    st(OUT, mt_te_cast(A, MT_FLOAT32,
                                                       bin(TE_LT, V(k), i32(4294967316LL))),
                                       I(0)))),
                "for k in range(T.int32(16)):\n    o[0] = 1.0\n");
    /* and as a divisor: k // T.int32(2^32 + 4) is k // 4, not 0 */
    ASSERT_TEXT(simp_stmt(mt_ts_for(A, k, i32(0), i32(16), MT_FOR_SERIAL,
                                    st(OUT, mt_te_cast(A, MT_FLOAT32,
                                                       bin(TE_FLOORDIV, V(k), i32(4294967300LL))),
                                       I(0)))),
                "for k in range(T.int32(16)):\n    o[0] = T.Cast(\"float32\", k // T.int32(4294967300))\n");
    TIR_GUARD_END();
}

static void test_unchanged_is_same(void **state) {
    TIR_GUARD();
    mt_tbuffer *o = buf2("o", 4, 4);
    nest n;
    nest_init(&n, "SS", I(4), I(4));
    n.writes[n.nwrites++] = point(o, n.v[0], n.v[1]);
    mt_tfunc *f = mt_tfunc_new(A, "f");
    mt_tfunc_add_param(A, f, o, NULL);
    f->body = nest_build(&n, "b", st(o, mt_te_cast(A, MT_FLOAT32, add(n.v[0], n.v[1])), n.v[0], n.v[1]));
    assert_ptr_equal(mt_tir_simplify(A, f), f);
    /* Blocks are simplified inside too. */
    n.nwrites = 0;
    f->body = nest_build(&n, "b", st(o, F(1), add(n.v[0], I(0)), n.v[1]));
    ASSERT_TEXT(mt_tfunc_print(A, mt_tir_simplify(A, f)),
                "@T.prim_func\n"
                "def f(o: T.Buffer((4, 4), \"float32\")):\n"
                "    for i0, i1 in T.grid(4, 4):\n"
                "        with T.block(\"b\"):\n"
                "            v0, v1 = T.axis.remap(\"SS\", [i0, i1])\n"
                "            T.reads()\n"
                "            T.writes()\n"
                "            o[v0, v1] = 1.0\n");
    TIR_GUARD_END();
}

/* The folding constructors of tir/arith.h build what simplify would leave,
 * and never fold a vector operand into a scalar. */
static void test_arith_constructors(void **state) {
    TIR_GUARD();
    mt_tvar *i = ivar("i");
    mt_texpr *x = V(i);
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_add(A, I(3), I(4))), "7");
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_add(A, x, I(0))), "i");
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_sub(A, x, I(0))), "i");
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_sub(A, I(0), x)), "0 - i");
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_mul(A, I(0), x)), "0");
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_mul(A, x, I(1))), "i");
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_floordiv(A, I(-7), I(2))), "-4");
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_floormod(A, I(-7), I(2))), "1");
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_floordiv(A, x, I(0))), "i // 0"); /* never folded */
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_floormod(A, x, I(1))), "0");
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_add(A, i32(2147483647), i32(1))), "T.int32(-2147483648)");
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_bin(A, TE_MIN, I(3), I(-2))), "-2");
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_bin(A, TE_LT, I(3), I(-2))), "False");
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_unary(A, TE_NOT, mt_arith_unary(A, TE_NOT, bin(TE_LT, x, I(2))))),
                "i < 2");
    /* no reassociation: that is simplify's */
    ASSERT_TEXT(mt_texpr_print(A, mt_arith_add(A, add(x, I(1)), I(2))), "i + 1 + 2");
    /* a vector keeps its lanes: v + 0 is v, v * 0 is no scalar 0 */
    mt_texpr *v = mt_te_ramp(A, x, I(1), 4);
    assert_ptr_equal(mt_arith_add(A, v, I(0)), v);
    mt_texpr *z = mt_arith_mul(A, v, I(0));
    assert_int_equal(z->kind, TE_MUL);
    assert_int_equal(z->lanes, 4);
    assert_null(mt_arith_fold(A, TE_ADD, x, i32(1))); /* dtypes differ: not folded */
    assert_true(mt_arith_is_const(I(5), 5));
    assert_false(mt_arith_is_const(I(5), 4));
    assert_false(mt_arith_is_const(x, 5));
    TIR_GUARD_END();
}

static bool uses_j(const mt_texpr *e, void *ctx) { return mt_texpr_uses_var(e, ctx); }

/* The form of index expressions (tir/arith.h): sums split into terms with
 * products by constants distributed, a subexpression kept whole where
 * `open` says so; "a constant or T.min(c, ..)"; // or % anywhere. */
static void test_arith_form(void **state) {
    TIR_GUARD();
    mt_tvar *i = ivar("i"), *j = ivar("j"), *k = ivar("k");
    mt_arith_term t[8];
    /* ((j * 16 + k) * 4 + i * 2) * 3: j * 192, k * 12, i * 6 */
    mt_texpr *e = mul(add(mul(add(mul(V(j), I(16)), V(k)), I(4)), mul(I(2), V(i))), I(3));
    assert_int_equal(mt_arith_terms(e, NULL, NULL, t, 8), 3);
    assert_ptr_equal(t[0].e->var, j), assert_int_equal(t[0].coef, 192);
    assert_ptr_equal(t[1].e->var, k), assert_int_equal(t[1].coef, 12);
    assert_ptr_equal(t[2].e->var, i), assert_int_equal(t[2].coef, 6);
    assert_int_equal(mt_arith_terms(e, NULL, NULL, t, 2), -1); /* more than max */
    /* opened only where j is: (i * 2 + k) * 5 stays one term */
    e = add(mul(add(mul(V(i), I(2)), V(k)), I(5)), mul(V(j), I(7)));
    assert_int_equal(mt_arith_terms(e, uses_j, j, t, 8), 2);
    ASSERT_TEXT(mt_texpr_print(A, t[0].e), "(i * 2 + k) * 5");
    assert_int_equal(t[0].coef, 1);
    assert_ptr_equal(t[1].e->var, j), assert_int_equal(t[1].coef, 7);
    /* a product by 0, by a negative constant, or whose coefficient would
     * overflow is a term as it stands */
    e = add(mul(V(i), I(-2)), mul(mul(V(j), I(INT64_MAX / 2)), I(4)));
    assert_int_equal(mt_arith_terms(e, NULL, NULL, t, 8), 2);
    ASSERT_TEXT(mt_texpr_print(A, t[0].e), "i * -2");
    assert_int_equal(t[1].coef, 4);
    int64_t c;
    const mt_texpr *r;
    assert_true(mt_arith_const_bound(I(16), &c)), assert_int_equal(c, 16);
    assert_true(mt_arith_const_bound(bin(TE_MIN, I(16), sub(I(100), V(i))), &c)), assert_int_equal(c, 16);
    assert_true(mt_arith_min_const(bin(TE_MIN, V(i), I(8)), &c, &r)), assert_int_equal(c, 8);
    assert_ptr_equal(r->var, i);
    assert_false(mt_arith_const_bound(V(i), &c));
    assert_false(mt_arith_const_bound(bin(TE_MAX, V(i), I(8)), &c));
    assert_true(mt_arith_has_divmod(add(V(i), bin(TE_FLOORMOD, V(j), I(16)))));
    assert_false(mt_arith_has_divmod(add(V(i), mul(V(j), I(16)))));
    /* constant differences: (j * 4) * 4 + k + 2 - (j * 16 + k) = 2; NULL is 0 */
    int64_t d;
    assert_true(mt_arith_const_diff(add(add(mul(mul(V(j), I(4)), I(4)), V(k)), I(2)), add(mul(V(j), I(16)), V(k)), &d));
    assert_int_equal(d, 2);
    assert_true(mt_arith_const_diff(I(5), NULL, &d)), assert_int_equal(d, 5);
    assert_true(mt_arith_const_diff(add(V(i), I(1)), add(V(i), I(3)), &d)), assert_int_equal(d, -2);
    assert_false(mt_arith_const_diff(add(V(i), I(1)), add(V(j), I(1)), &d));
    assert_false(mt_arith_const_diff(mul(V(i), I(2)), mul(V(i), I(3)), &d));
    assert_false(mt_arith_const_diff(add(V(i), V(j)), V(i), &d));
    TIR_GUARD_END();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_arith_constructors),
        TIR_TEST(test_arith_form),
        TIR_TEST(test_fold_int),      TIR_TEST(test_fold_float),
        TIR_TEST(test_fold_compare_logic_select), TIR_TEST(test_fold_cast),
        TIR_TEST(test_identities),    TIR_TEST(test_reassociate),
        TIR_TEST(test_statements),    TIR_TEST(test_unchanged_is_same),
        TIR_TEST(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
