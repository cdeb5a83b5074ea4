/*
 * test_tir_visitor.c -- visitor order, mutator identity, substitution and
 * structural equality.
 */
#include "tir/tir_test.h"

typedef struct counts {
    int vars, loads, stmts, blocks;
} counts;

static void count_expr(mt_tvisitor *v, const mt_texpr *e) {
    counts *c = v->ctx;
    if (e->kind == TE_VAR) c->vars++;
    if (e->kind == TE_LOAD) c->loads++;
    mt_tvisit_expr_children(v, e);
}

static void count_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    counts *c = v->ctx;
    c->stmts++;
    if (s->kind == TS_BLOCK) c->blocks++;
    mt_tvisit_stmt_children(v, s);
}

/* for i0, i1: block sum (SR) with init and a where. */
static mt_tstmt *reduction(nest *n, mt_tbuffer **pa, mt_tbuffer **pout) {
    mt_tbuffer *a = buf2("a", 4, 8), *out = buf1("out", 4);
    nest_init(n, "SR", I(4), I(8));
    mt_texpr *mins[2] = {n->v[0], I(0)}, *exts[2] = {I(1), I(8)};
    n->reads[n->nreads++] = region(a, mins, exts);
    n->writes[n->nwrites++] = point(out, n->v[0]);
    n->init = st(out, F(0), n->v[0]);
    mt_tstmt *blk = nest_block(n, "sum", st(out, add(ld(out, n->v[0]), ld(a, n->v[0], n->v[1])), n->v[0]));
    blk->predicate = bin(TE_LT, V(n->loop[1]), I(8));
    *pa = a;
    *pout = out;
    return nest_loops(n, blk);
}

static void test_visitor_walks_block_fields(void **state) {
    TIR_GUARD();
    nest n;
    mt_tbuffer *a, *out;
    mt_tstmt *s = reduction(&n, &a, &out);
    counts c = {0};
    mt_tvisitor v = {count_expr, count_stmt, &c};
    mt_tvisit_stmt(&v, s);
    /* vars: 2 iter values + 1 predicate + read region v0 + write region v0
     * + init v0 + body (v0 store, v0 load out, v0 v1 load a) */
    assert_int_equal(c.vars, 2 + 1 + 1 + 1 + 1 + 4);
    assert_int_equal(c.loads, 2);
    assert_int_equal(c.blocks, 1);
    assert_int_equal(c.stmts, 2 /* loops */ + 1 /* block */ + 1 /* init */ + 1 /* body */);
    /* NULL hooks walk everything without crashing. */
    mt_tvisitor plain = {NULL, NULL, NULL};
    mt_tvisit_stmt(&plain, s);
    TIR_GUARD_END();
}

static mt_texpr *id_expr(mt_tmutator *m, mt_texpr *e) { return mt_tmutate_expr_children(m, e); }

static void test_mutator_identity(void **state) {
    TIR_GUARD();
    nest n;
    mt_tbuffer *a, *out;
    mt_tstmt *s = reduction(&n, &a, &out);
    mt_tmutator m = {A, NULL, NULL, NULL};
    assert_ptr_equal(mt_tmutate_stmt(&m, s), s);
    mt_tmutator m2 = {A, id_expr, NULL, NULL};
    assert_ptr_equal(mt_tmutate_stmt(&m2, s), s);
    mt_texpr *sel = mt_te_select(A, bin(TE_LT, V(n.it[0]), I(2)), F(1), ld(a, I(0), I(1)));
    assert_ptr_equal(mt_tmutate_expr(&m, sel), sel);
    mt_tvar *x = ivar("x");
    mt_tstmt *lowered = mt_ts_alloc(
        A, a,
        mt_ts_let(A, x, I(3),
                  mt_ts_if(A, bin(TE_EQ, V(x), I(3)), mt_ts_eval(A, V(x)), st(out, F(2), V(x)))));
    assert_ptr_equal(mt_tmutate_stmt(&m, lowered), lowered);
    assert_ptr_equal(mt_tsubst_stmt(A, lowered, &n.it[0], &n.v[1], 1), lowered);
    TIR_GUARD_END();
}

/* Replacing one leaf rebuilds exactly the path to it. */
static mt_texpr *swap_float(mt_tmutator *m, mt_texpr *e) {
    if (e->kind == TE_FLOAT) return F(e->fval + 1);
    return mt_tmutate_expr_children(m, e);
}

static void test_mutator_rebuilds_path(void **state) {
    TIR_GUARD();
    nest n;
    mt_tbuffer *a, *out;
    mt_tstmt *s = reduction(&n, &a, &out);
    mt_tmutator m = {A, swap_float, NULL, NULL};
    mt_tstmt *r = mt_tmutate_stmt(&m, s);
    assert_ptr_not_equal(r, s);
    const mt_tstmt *b0 = s->body->body, *b1 = r->body->body;
    assert_int_equal(b1->kind, TS_BLOCK);
    assert_ptr_not_equal(b0, b1);
    assert_ptr_equal(b0->body, b1->body);         /* untouched: shared */
    assert_ptr_equal(b0->predicate, b1->predicate);
    assert_ptr_not_equal(b0->init, b1->init);     /* 0.0 -> 1.0 */
    assert_true(b1->init->value->fval == 1.0);
    assert_true(s->body->body->init->value->fval == 0.0); /* the input is untouched */
    TIR_GUARD_END();
}

static void test_subst(void **state) {
    TIR_GUARD();
    nest n;
    mt_tbuffer *a, *out;
    mt_tstmt *s = reduction(&n, &a, &out);
    const mt_tstmt *blk = s->body->body;
    mt_tvar *vars[2] = {n.it[0], n.it[1]};
    mt_texpr *vals[2] = {add(V(n.loop[0]), I(1)), I(0)};
    mt_tstmt *r = mt_tsubst_stmt(A, blk->body, vars, vals, 2);
    ASSERT_TEXT(mt_tstmt_print(A, r), "out[i0 + 1] = out[i0 + 1] + a[i0 + 1, 0]\n");
    ASSERT_TEXT(mt_tstmt_print(A, blk->body), "out[v0] = out[v0] + a[v0, v1]\n");
    /* Regions and iter values of a block are substituted too. */
    mt_tvar *loops[1] = {n.loop[1]};
    mt_texpr *zero[1] = {I(5)};
    mt_tstmt *rb = mt_tsubst_stmt(A, (mt_tstmt *)blk, loops, zero, 1);
    assert_true(rb->iter_values[1]->kind == TE_INT && rb->iter_values[1]->ival == 5);
    assert_true(rb->predicate->a->kind == TE_INT);
    /* Ramps widen the expressions that use them. */
    mt_texpr *ramp = mt_te_ramp(A, I(0), I(1), 4);
    mt_texpr *e = mt_tsubst_expr(A, add(ld(out, V(n.loop[0])), F(1)), &n.loop[0], &ramp, 1);
    assert_int_equal(e->lanes, 4);
    assert_int_equal(e->a->lanes, 4);
    TIR_GUARD_END();
}

static void test_equal(void **state) {
    TIR_GUARD();
    mt_tvar *x = ivar("x"), *y = ivar("x");
    mt_tbuffer *b = buf1("b", 4), *c = buf1("b", 4);
    assert_true(mt_texpr_equal(add(V(x), I(1)), add(V(x), I(1))));
    assert_false(mt_texpr_equal(add(V(x), I(1)), add(V(y), I(1))));
    assert_false(mt_texpr_equal(add(V(x), I(1)), add(V(x), I(2))));
    assert_false(mt_texpr_equal(add(V(x), I(1)), sub(V(x), I(1))));
    assert_false(mt_texpr_equal(I(1), mt_te_int(A, MT_INT32, 1)));
    assert_true(mt_texpr_equal(ld(b, V(x)), ld(b, V(x))));
    assert_false(mt_texpr_equal(ld(b, V(x)), ld(c, V(x))));
    assert_false(mt_texpr_equal(F(0.0), F(-0.0)));
    assert_true(mt_texpr_equal(F(NAN), F(NAN)));
    mt_texpr *e1 = mt_te_call(A, IN_EXP, (mt_texpr *[]){F(1)}, 1);
    mt_texpr *e2 = mt_te_call(A, IN_LOG, (mt_texpr *[]){F(1)}, 1);
    assert_false(mt_texpr_equal(e1, e2));
    assert_true(mt_texpr_equal(mt_te_select(A, bin(TE_LT, V(x), I(0)), F(1), F(2)),
                               mt_te_select(A, bin(TE_LT, V(x), I(0)), F(1), F(2))));
    assert_false(mt_texpr_equal(mt_te_select(A, bin(TE_LT, V(x), I(0)), F(1), F(2)),
                                mt_te_select(A, bin(TE_LE, V(x), I(0)), F(1), F(2))));
    assert_false(mt_texpr_equal(mt_te_ramp(A, I(0), I(1), 4), mt_te_ramp(A, I(0), I(1), 8)));
    assert_true(mt_texpr_equal(NULL, NULL));
    assert_false(mt_texpr_equal(I(0), NULL));
    TIR_GUARD_END();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_visitor_walks_block_fields), TIR_TEST(test_mutator_identity),
        TIR_TEST(test_mutator_rebuilds_path),      TIR_TEST(test_subst),
        TIR_TEST(test_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
