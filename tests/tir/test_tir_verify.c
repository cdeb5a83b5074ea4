/*
 * test_tir_verify.c -- the TIR verifier (src/tir/verify.c) and source places.
 *
 *  - well-formed functions pass: a hand-written reduction in block form, the
 *    same after lower_blocks (lowered) and flatten_buffers (flat), and after
 *    the rest of the TIR passes, vectorize included;
 *  - hand-broken functions fail, each with the expected message fragment,
 *    the function's name, the source place of the nearest statement that has
 *    one, and the statement printed (not when it has missing parts: the
 *    printer cannot print those, and the verifier must not crash on them);
 *  - source places: every statement of every loop function the compiler
 *    makes from the golden kernels has one, before and after the TIR
 *    passes, and a fused function's blocks keep their own ops' lines.
 */
#include "tir/tir_test.h"

#include <stdlib.h>

#include "passes/tir/tir_passes.h"
#include "pipeline.h"
#include "passes/registry.h"
#include "tir/verify.h"

/* ---- a well-formed function ---------------------------------------------------- */

/* sum_rows(a: (4, 8), out: (4,)) in block form: the loops at 2:5, the block
 * at 3:9, its init at 4:13 and its body (the update) at 5:13. */
typedef struct sumf {
    mt_tfunc *f;
    mt_tbuffer *a, *out;
    mt_tstmt *loop_i, *loop_k, *block, *init, *update;
    mt_tvar *i, *k, *vi, *vk;
} sumf;

static sumf sum_rows(void) {
    sumf s;
    s.a = buf2("a", 4, 8);
    s.out = buf1("out", 4);
    s.f = mt_tfunc_new(A, "sum_rows");
    s.f->loc = mt_loc_make(1, 1);
    mt_tfunc_add_param(A, s.f, s.a, NULL);
    mt_tfunc_add_param(A, s.f, s.out, NULL);
    s.f->num_outputs = 1;
    nest n;
    nest_init(&n, "SR", I(4), I(8));
    s.i = n.loop[0], s.k = n.loop[1], s.vi = n.it[0], s.vk = n.it[1];
    mt_texpr *rmin[2] = {n.v[0], I(0)}, *rext[2] = {I(1), I(8)};
    n.reads[n.nreads++] = region(s.a, rmin, rext);
    n.writes[n.nwrites++] = point(s.out, n.v[0]);
    n.init = s.init = mt_ts_at(st(s.out, F(0.0), n.v[0]), mt_loc_make(4, 13));
    s.update = mt_ts_at(st(s.out, add(ld(s.out, n.v[0]), ld(s.a, n.v[0], n.v[1])), n.v[0]),
                        mt_loc_make(5, 13));
    s.block = mt_ts_at(nest_block(&n, "sum", s.update), mt_loc_make(3, 9));
    s.loop_k = mt_ts_at(mt_ts_for(A, s.k, I(0), I(8), MT_FOR_SERIAL, s.block), mt_loc_make(2, 5));
    s.loop_i = mt_ts_at(mt_ts_for(A, s.i, I(0), I(4), MT_FOR_SERIAL, s.loop_k), mt_loc_make(2, 5));
    s.f->body = s.loop_i;
    return s;
}

/* The verifier's message for f, which must fail, containing each of the
 * fragments (NULL-terminated). */
static const char *rejects(const mt_tfunc *f, mt_tir_form form, ...) {
    const char *msg = mt_tir_verify(A, f, form);
    if (!msg) fail_msg("the verifier accepted a broken function:\n%s", mt_tfunc_print(A, f));
    va_list ap;
    va_start(ap, form);
    for (const char *frag; (frag = va_arg(ap, const char *));)
        if (!strstr(msg, frag)) fail_msg("'%s' not in the message:\n%s", frag, msg);
    va_end(ap);
    return msg;
}

static void accepts(const mt_tfunc *f, mt_tir_form form) {
    const char *msg = mt_tir_verify(A, f, form);
    if (msg) fail_msg("rejected in the %s form: %s\n%s", mt_tir_form_str(form), msg, mt_tfunc_print(A, f));
}

/* A copy of the update store with another value / indices. */
static mt_tstmt *store_with(const sumf *s, mt_tbuffer *b, mt_texpr *const *idx, int n, mt_texpr *v) {
    mt_tstmt *c = mt_ts_copy(A, s->update);
    c->buf = b;
    c->idx = (mt_texpr **)idx;
    c->nidx = n;
    c->value = v;
    return c;
}

/* s's function with the block body replaced (block, loops and function copied). */
static mt_tfunc *with_update(const sumf *s, mt_tstmt *update) {
    mt_tstmt *b = mt_ts_copy(A, s->block);
    b->body = update;
    mt_tstmt *lk = mt_ts_copy(A, s->loop_k);
    lk->body = b;
    mt_tstmt *li = mt_ts_copy(A, s->loop_i);
    li->body = lk;
    return mt_tfunc_with_body(A, s->f, li);
}

/* ---- accepted ------------------------------------------------------------------ */

static void test_accepts_each_form(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    accepts(s.f, MT_TIR_BLOCK);
    rejects(s.f, MT_TIR_LOWERED, "block 'sum' in the lowered form", "at 3:9", NULL);
    mt_tfunc *low = mt_tir_lower_blocks(A, s.f);
    accepts(low, MT_TIR_LOWERED);
    accepts(low, MT_TIR_BLOCK); /* the forms nest */
    rejects(low, MT_TIR_FLAT, "buffer parameter 'a' has 2 dims in the flat form", "function 'sum_rows'",
            "at 1:1", NULL);
    mt_tfunc *flat = mt_tir_flatten_buffers(A, low);
    accepts(flat, MT_TIR_FLAT);
    static const char *rest[] = {"simplify", "vectorize", "remove_unit_loops", "simplify", "tir_cse"};
    for (int i = 0; i < 5; i++) {
        flat = mt_pass_find(rest[i])->tir(A, flat);
        accepts(flat, MT_TIR_FLAT);
    }
    TIR_GUARD_END();
}

/* out[i] = a[i] * 2.0 in a `vectorized` loop of 37 and a symbolic n:
 * vectorize's ramps, broadcasts and tail loops are well formed. */
static void test_accepts_vectorized(void **state) {
    TIR_GUARD();
    mt_tvar *n = ivar("n");
    mt_texpr *dim = V(n);
    for (int sym = 0; sym < 2; sym++) {
        mt_tbuffer *a = mt_tbuffer_new(A, "a", MT_FLOAT32, 1, sym ? &dim : (mt_texpr *[]){I(37)});
        mt_tbuffer *out = mt_tbuffer_new(A, "out", MT_FLOAT32, 1, a->shape);
        mt_tfunc *f = mt_tfunc_new(A, "scale");
        mt_tfunc_add_param(A, f, a, NULL);
        mt_tfunc_add_param(A, f, out, NULL);
        f->num_outputs = 1;
        if (sym) f->sym_vars = MT_NEW_ARRAY(A, mt_tvar *, 1), f->sym_vars[0] = n, f->nsym = 1;
        mt_tvar *i = ivar("i");
        f->body = mt_ts_for(A, i, I(0), a->shape[0], MT_FOR_VECTORIZED,
                            st(out, mul(ld(a, V(i)), F(2.0)), V(i)));
        accepts(f, MT_TIR_FLAT);
        mt_tfunc *g = mt_tir_vectorize(A, f);
        assert_ptr_not_equal(g, f);
        assert_non_null(strstr(mt_tfunc_print(A, g), "T.Ramp"));
        accepts(g, MT_TIR_FLAT);
        accepts(mt_tir_simplify(A, mt_tir_remove_unit_loops(A, g)), MT_TIR_FLAT);
    }
    TIR_GUARD_END();
}

/* ---- rejected: scopes ---------------------------------------------------------- */

static void test_rejects_var_out_of_scope(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    /* the loop variable k of another (sibling) loop */
    mt_tvar *j = ivar("j");
    mt_texpr *idx[1] = {V(j)};
    mt_tfunc *f = with_update(&s, store_with(&s, s.out, idx, 1, F(1.0)));
    const char *msg = rejects(f, MT_TIR_BLOCK, "variable 'j' is used outside the scope that defines it",
                              "in function 'sum_rows' at 5:13 (block form), in:", NULL);
    assert_non_null(strstr(msg, "\n    out[j] = 1.0")); /* the statement, printed */
    /* an iteration variable in its own block's iter values */
    mt_tstmt *b = mt_ts_copy(A, s.block);
    b->iter_values = MT_NEW_ARRAY(A, mt_texpr *, 2);
    b->iter_values[0] = V(s.vi), b->iter_values[1] = V(s.k);
    mt_tstmt *lk = mt_ts_copy(A, s.loop_k);
    lk->body = b;
    mt_tstmt *li = mt_ts_copy(A, s.loop_i);
    li->body = lk;
    rejects(mt_tfunc_with_body(A, s.f, li), MT_TIR_BLOCK, "variable 'v0' is used outside", "at 3:9", NULL);
    TIR_GUARD_END();
}

static void test_rejects_var_bound_twice(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_tstmt *inner = mt_ts_for(A, s.i, I(0), I(2), MT_FOR_SERIAL, s.update); /* no place */
    rejects(with_update(&s, inner), MT_TIR_BLOCK, "loop variable 'i0' is bound again inside its own scope",
            "at 3:9", NULL); /* the block's place: the loop has none */
    /* the same variable in two sibling loops is fine */
    mt_tvar *t = ivar("t");
    mt_tstmt *l1 = mt_ts_for(A, t, I(0), I(2), MT_FOR_SERIAL, s.update);
    mt_tstmt *l2 = mt_ts_for(A, t, I(0), I(3), MT_FOR_SERIAL, s.update);
    accepts(with_update(&s, seq2(l1, l2)), MT_TIR_BLOCK);
    TIR_GUARD_END();
}

/* A block sees the loops around it only through its iteration variables
 * (the primitives move blocks and rewrite only the bindings): an outer
 * loop's variable is refused in its body, init and regions, and allowed in
 * its bindings, its predicate and a loop of its own. */
static void test_rejects_loop_var_in_block(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_texpr *idx[1] = {V(s.i)};
    rejects(with_update(&s, store_with(&s, s.out, idx, 1, F(1.0))), MT_TIR_BLOCK,
            "loop variable 'i0' is used inside a block, which sees the loops around it only through its "
            "iteration variables", "at 5:13", NULL);
    mt_tfunc *f = with_update(&s, s.update);
    mt_tstmt *b = f->body->body->body; /* loop i, loop k, the block */
    b->init = mt_ts_at(st(s.out, F(0.0), V(s.i)), mt_loc_make(4, 13));
    rejects(f, MT_TIR_BLOCK, "loop variable 'i0' is used inside a block", "at 4:13", NULL);
    b->init = s.init;
    mt_texpr *rmin[2] = {V(s.i), I(0)}, *rext[2] = {I(1), I(8)};
    b->reads = MT_NEW_ARRAY(A, mt_tregion, 1);
    b->reads[0] = region(s.a, rmin, rext);
    rejects(f, MT_TIR_BLOCK, "loop variable 'i0' is used inside a block", NULL);
    b->reads = s.block->reads;
    b->predicate = bin(TE_LT, V(s.i), I(3)); /* evaluated among the loops */
    accepts(f, MT_TIR_BLOCK);
    mt_tvar *t = ivar("t"); /* a loop inside the block */
    mt_texpr *tix[1] = {V(t)};
    b->body = mt_ts_for(A, t, I(0), I(4), MT_FOR_SERIAL, store_with(&s, s.out, tix, 1, F(1.0)));
    accepts(f, MT_TIR_BLOCK);
    TIR_GUARD_END();
}

static void test_rejects_unknown_buffer(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_tbuffer *ghost = buf1("ghost", 4);
    mt_texpr *idx[1] = {V(s.vi)};
    rejects(with_update(&s, store_with(&s, s.out, idx, 1, ld(ghost, V(s.vi)))), MT_TIR_BLOCK,
            "load from 'ghost' names a buffer that is neither a parameter nor allocated in scope", NULL);
    /* allocated, but in a sibling scope */
    mt_tstmt *al = mt_ts_alloc(A, ghost, st(ghost, F(1.0), V(s.vi)));
    rejects(with_update(&s, seq2(al, store_with(&s, s.out, idx, 1, ld(ghost, V(s.vi))))), MT_TIR_BLOCK,
            "'ghost' names a buffer that is neither", NULL);
    accepts(with_update(&s, mt_ts_alloc(A, ghost, store_with(&s, s.out, idx, 1, ld(ghost, V(s.vi))))),
            MT_TIR_BLOCK);
    TIR_GUARD_END();
}

/* ---- rejected: accesses and dtypes ----------------------------------------------- */

static void test_rejects_index_count(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_texpr *idx[2] = {V(s.vi), V(s.vk)};
    rejects(with_update(&s, store_with(&s, s.out, idx, 2, F(1.0))), MT_TIR_BLOCK,
            "store to 'out' has 2 indices for 1 dims", "at 5:13", NULL);
    TIR_GUARD_END();
}

static void test_rejects_float_index(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_texpr *idx[1] = {F(1.0)};
    rejects(with_update(&s, store_with(&s, s.out, idx, 1, F(1.0))), MT_TIR_BLOCK,
            "index '1.0' is float32, not an integer", NULL);
    /* flat form: int32 indices are not what codegen takes */
    mt_tfunc *flat = mt_tir_flatten_buffers(A, mt_tir_lower_blocks(A, s.f));
    mt_tbuffer *o1 = flat->params[1].buf;
    mt_tstmt *bad = mt_ts_store(A, o1, (mt_texpr *[]){mt_te_int(A, MT_INT32, 0)}, 1, F(0.0));
    rejects(mt_tfunc_with_body(A, flat, bad), MT_TIR_FLAT, "index 'T.int32(0)' of 'out' is int32 in the flat form",
            NULL);
    TIR_GUARD_END();
}

static void test_rejects_operand_dtypes(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_texpr *e = mt_te_copy(A, add(ld(s.out, V(s.vi)), F(1.0))); /* mt_te_bin would refuse */
    e->b = V(s.vk);
    mt_texpr *idx[1] = {V(s.vi)};
    rejects(with_update(&s, store_with(&s, s.out, idx, 1, e)), MT_TIR_BLOCK,
            "operands of '+' disagree: float32 vs int64", NULL);
    TIR_GUARD_END();
}

static void test_rejects_store_dtype(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_texpr *idx[1] = {V(s.vi)};
    const char *msg = rejects(with_update(&s, store_with(&s, s.out, idx, 1, V(s.vk))), MT_TIR_BLOCK,
                              "store of int64 to 'out' of float32", "at 5:13", NULL);
    assert_non_null(strstr(msg, "out[v0] = v1"));
    TIR_GUARD_END();
}

static void test_rejects_loop_bounds(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_tstmt *l = mt_ts_copy(A, s.loop_i);
    l->extent = mt_te_int(A, MT_INT32, 4);
    rejects(mt_tfunc_with_body(A, s.f, l), MT_TIR_BLOCK, "loop bounds are int64 and int32 (int64 expected)",
            "at 2:5", NULL);
    l = mt_ts_copy(A, s.loop_i);
    l->var = mt_tvar_new(A, "x", MT_FLOAT32);
    rejects(mt_tfunc_with_body(A, s.f, l), MT_TIR_BLOCK, "loop variable 'x' is float32", NULL);
    l = mt_ts_copy(A, s.loop_i);
    l->for_kind = MT_FOR_THREAD;
    rejects(mt_tfunc_with_body(A, s.f, l), MT_TIR_BLOCK, "thread loop without a tag", NULL);
    TIR_GUARD_END();
}

static void test_rejects_conditions(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    rejects(with_update(&s, mt_ts_if(A, V(s.vk), s.update, NULL)), MT_TIR_BLOCK,
            "if condition 'v1' is int64, not bool", NULL);
    mt_texpr *sel = mt_te_copy(A, mt_te_select(A, mt_te_int(A, MT_BOOL, 1), F(1.0), F(2.0)));
    sel->cond = V(s.vi);
    mt_texpr *idx[1] = {V(s.vi)};
    rejects(with_update(&s, store_with(&s, s.out, idx, 1, sel)), MT_TIR_BLOCK,
            "select condition 'v0' is int64, not bool", NULL);
    mt_tstmt *b = mt_ts_copy(A, s.block);
    b->predicate = I(1);
    mt_tstmt *lk = mt_ts_copy(A, s.loop_k);
    lk->body = b;
    rejects(mt_tfunc_with_body(A, s.f, mt_ts_for(A, s.i, I(0), I(4), MT_FOR_SERIAL, lk)), MT_TIR_BLOCK,
            "block predicate '1' is int64, not bool", NULL);
    mt_texpr *not_int = mt_te_copy(A, mt_te_unary(A, TE_NOT, mt_te_int(A, MT_BOOL, 1)));
    not_int->a = V(s.vi);
    rejects(with_update(&s, mt_ts_if(A, not_int, s.update, NULL)), MT_TIR_BLOCK, "'not' of int64", NULL);
    TIR_GUARD_END();
}

static void test_rejects_block_iters(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_tstmt *b = mt_ts_copy(A, s.block);
    b->iter_values = NULL;
    mt_tstmt *lk = mt_ts_copy(A, s.loop_k);
    lk->body = b;
    const char *msg = rejects(mt_tfunc_with_body(A, s.f, mt_ts_for(A, s.i, I(0), I(4), MT_FOR_SERIAL, lk)),
                              MT_TIR_BLOCK, "block 'sum' lacks its iteration variables or their values",
                              "at 3:9", NULL);
    assert_null(strstr(msg, "in:")); /* incomplete: not printed */
    b = mt_ts_copy(A, s.block);
    b->iter_values = MT_NEW_ARRAY(A, mt_texpr *, 2);
    b->iter_values[0] = V(s.i), b->iter_values[1] = mt_te_cast(A, MT_INT32, V(s.k));
    lk->body = b;
    rejects(mt_tfunc_with_body(A, s.f, mt_ts_for(A, s.i, I(0), I(4), MT_FOR_SERIAL, lk)), MT_TIR_BLOCK,
            "iteration variable 'v1' of int64 is bound to a int32 value", NULL);
    TIR_GUARD_END();
}

static void test_rejects_intrinsic_arity(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_texpr *x = F(1.0);
    mt_texpr *call = mt_te_copy(A, mt_te_call(A, IN_EXP, &x, 1));
    call->args = (mt_texpr *[]){F(1.0), F(2.0)};
    call->nargs = 2;
    mt_texpr *idx[1] = {V(s.vi)};
    const char *msg = rejects(with_update(&s, store_with(&s, s.out, idx, 1, call)), MT_TIR_BLOCK,
                              "T.exp takes 1 arguments, called with 2", "at 5:13", NULL);
    assert_null(strstr(msg, "in:")); /* the printer trusts arities: not printed */
    TIR_GUARD_END();
}

/* ---- rejected: vectors ------------------------------------------------------------ */

static void test_rejects_lanes(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_tfunc *flat = mt_tir_flatten_buffers(A, mt_tir_lower_blocks(A, s.f));
    mt_tbuffer *a = flat->params[0].buf, *o = flat->params[1].buf;
    mt_texpr *r4 = mt_te_ramp(A, I(0), I(1), 4), *r8 = mt_te_ramp(A, I(0), I(1), 8);
    mt_texpr *sum = mt_te_copy(A, add(ld(a, r4), ld(a, r4)));
    sum->b = ld(a, r8);
    rejects(mt_tfunc_with_body(A, flat, mt_ts_store(A, o, &r4, 1, sum)), MT_TIR_FLAT,
            "operands of '+' have 4 and 8 lanes", NULL);
    rejects(mt_tfunc_with_body(A, flat, mt_ts_store(A, o, &r4, 1, ld(a, r8))), MT_TIR_FLAT,
            "store of 8 lanes at an index of 4", NULL);
    mt_texpr *fr = mt_te_ramp(A, F(0.0), F(1.0), 4);
    rejects(mt_tfunc_with_body(A, flat, mt_ts_store(A, o, &fr, 1, F(0.0))), MT_TIR_FLAT,
            "ramp base '0.0' is float32, not an integer", NULL);
    mt_texpr *bb = mt_te_broadcast(A, ld(a, r4), 4);
    rejects(mt_tfunc_with_body(A, flat, mt_ts_store(A, o, &r4, 1, bb)), MT_TIR_FLAT,
            "T.Broadcast of a vector", NULL);
    /* T.Shuffle: lanes within its vectors, which share a dtype and width */
    static const int rev[4] = {7, 6, 5, 4}, far[4] = {0, 1, 2, 8};
    mt_texpr *sh = mt_te_shuffle(A, ld(a, r4), ld(a, r4), rev, 4);
    accepts(mt_tfunc_with_body(A, flat, mt_ts_store(A, o, &r4, 1, sh)), MT_TIR_FLAT);
    rejects(mt_tfunc_with_body(A, flat, mt_ts_store(A, o, &r4, 1, mt_te_shuffle(A, ld(a, r4), ld(a, r4), far, 4))),
            MT_TIR_FLAT, "T.Shuffle picks lane 8 of 8", NULL);
    rejects(mt_tfunc_with_body(A, flat, mt_ts_store(A, o, &r4, 1, mt_te_shuffle(A, ld(a, r4), ld(a, r8), rev, 4))),
            MT_TIR_FLAT, "T.Shuffle of vectors of 4 and 8 lanes", NULL);
    rejects(mt_tfunc_with_body(A, flat, mt_ts_store(A, o, &r8, 1, mt_te_shuffle(A, ld(a, r4), NULL, rev, 4))),
            MT_TIR_FLAT, "T.Shuffle picks lane 7 of 4", NULL);
    TIR_GUARD_END();
}

/* T.prefetch: the whole value of a T.evaluate, of one element's address;
 * a prefetch of a value that is no longer a load (a producer inlined into
 * it) is accepted and printed (code generation drops it). */
static void test_prefetch(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_tfunc *flat = mt_tir_flatten_buffers(A, mt_tir_lower_blocks(A, s.f));
    mt_tbuffer *a = flat->params[0].buf, *o = flat->params[1].buf;
    mt_texpr *i0 = I(0), *r4 = mt_te_ramp(A, I(0), I(1), 4);
    mt_tstmt *pf = mt_ts_eval(A, mt_te_prefetch(A, ld(a, I(40))));
    accepts(mt_tfunc_with_body(A, flat, mt_ts_seq(A, (mt_tstmt *[]){pf, mt_ts_store(A, o, &i0, 1, F(0.0))}, 2)),
            MT_TIR_FLAT);
    assert_non_null(strstr(mt_tfunc_print(A, mt_tfunc_with_body(A, flat, pf)), "T.evaluate(T.prefetch(a[40]))"));
    accepts(mt_tfunc_with_body(A, flat, mt_ts_eval(A, mt_te_prefetch(A, add(ld(a, I(1)), F(1.0))))), MT_TIR_FLAT);
    rejects(mt_tfunc_with_body(A, flat, mt_ts_eval(A, mt_te_prefetch(A, ld(a, r4)))), MT_TIR_FLAT,
            "T.prefetch of a 4-lane value (one element's address expected)", NULL);
    mt_texpr *as_value = mt_te_cast(A, MT_FLOAT32, mt_te_prefetch(A, ld(a, I(0))));
    rejects(mt_tfunc_with_body(A, flat, mt_ts_store(A, o, &i0, 1, as_value)), MT_TIR_FLAT,
            "T.prefetch that is not the whole value of a T.evaluate", NULL);
    mt_texpr *wide = mt_te_copy(A, mt_te_prefetch(A, ld(a, I(0))));
    wide->dtype = MT_FLOAT32;
    rejects(mt_tfunc_with_body(A, flat, mt_ts_eval(A, wide)), MT_TIR_FLAT, "T.prefetch typed float32 (int32 expected)",
            NULL);
    TIR_GUARD_END();
}

/* ---- rejected: the function ---------------------------------------------------------- */

static void test_rejects_function_fields(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_tfunc *f = mt_tfunc_with_body(A, s.f, mt_ts_copy(A, s.f->body));
    f->num_outputs = 3;
    rejects(f, MT_TIR_BLOCK, "3 outputs of 2 buffer parameters", "function 'sum_rows' at 1:1", NULL);
    f = mt_tfunc_with_body(A, s.f, mt_ts_copy(A, s.f->body));
    f->body = NULL;
    rejects(f, MT_TIR_BLOCK, "function without a name or a body", NULL);
    f = mt_tfunc_with_body(A, s.f, mt_ts_copy(A, s.f->body));
    f->allocs = (mt_tbuffer *[]){buf1("t", 4)};
    f->nallocs = 1;
    accepts(f, MT_TIR_BLOCK);
    rejects(f, MT_TIR_LOWERED, "1 function-level allocations in the lowered form", NULL);
    mt_tfunc_add_param(A, f, s.a, NULL); /* the same buffer twice */
    rejects(f, MT_TIR_BLOCK, "buffer parameter 'a' is already in scope", NULL);
    TIR_GUARD_END();
}

/* Missing parts anywhere are reported, never crashed on, and the statement
 * is printed only when it can be. */
static void test_rejects_missing_parts(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_texpr *idx[1] = {V(s.vi)};
    const char *msg = rejects(with_update(&s, store_with(&s, s.out, idx, 1, NULL)), MT_TIR_BLOCK,
                              "missing stored value", "at 5:13", NULL);
    assert_null(strstr(msg, "in:"));
    mt_tstmt *l = mt_ts_copy(A, s.loop_i);
    l->body = NULL;
    rejects(mt_tfunc_with_body(A, s.f, l), MT_TIR_BLOCK, "loop without a body", NULL);
    /* a failure in the loop's extent while its body is incomplete: the loop
     * cannot be printed either */
    l = mt_ts_copy(A, s.loop_i);
    l->extent = V(ivar("m"));
    l->body = with_update(&s, store_with(&s, s.out, idx, 1, NULL))->body;
    msg = rejects(mt_tfunc_with_body(A, s.f, l), MT_TIR_BLOCK, "variable 'm' is used outside", "at 2:5",
                  NULL);
    assert_null(strstr(msg, "in:"));
    mt_texpr *e = mt_te_copy(A, add(V(s.vk), I(1)));
    e->a = NULL;
    rejects(with_update(&s, mt_ts_eval(A, e)), MT_TIR_BLOCK, "operator '+' lacks an operand", NULL);
    mt_tstmt *u = mt_ts_copy(A, s.update);
    u->kind = (mt_tstmt_kind)99;
    rejects(with_update(&s, u), MT_TIR_BLOCK, "statement of unknown kind 99", NULL);
    TIR_GUARD_END();
}

/* The place named is the innermost statement's that has one, else an
 * enclosing one's, else the function's; long statements are cut. */
static void test_message_places(void **state) {
    TIR_GUARD();
    sumf s = sum_rows();
    mt_texpr *idx[1] = {V(s.vi)};
    mt_tstmt *u = store_with(&s, s.out, idx, 1, V(s.vk));
    u->loc = MT_NOLOC;
    rejects(with_update(&s, u), MT_TIR_BLOCK, "at 3:9", NULL);
    mt_tfunc *f = mt_tfunc_new(A, "bare");
    mt_tfunc_add_param(A, f, s.out, NULL);
    f->body = mt_ts_store(A, s.out, (mt_texpr *[]){I(0)}, 1, I(0));
    const char *msg = rejects(f, MT_TIR_BLOCK, "store of int64 to 'out' of float32, in function 'bare' (block form)",
                              NULL);
    assert_null(strstr(msg, " at "));
    /* a long statement: its first lines, then "..." */
    mt_tstmt *many[12];
    for (int i = 0; i < 12; i++) many[i] = s.update;
    many[11] = store_with(&s, s.out, idx, 1, V(s.vk));
    mt_tstmt *l = mt_ts_at(mt_ts_for(A, ivar("r"), I(0), I(2), MT_FOR_SERIAL, mt_ts_seq(A, many, 12)),
                           mt_loc_make(7, 3));
    mt_tstmt *b = mt_ts_copy(A, l);
    b->extent = mt_te_cast(A, MT_INT32, V(s.vk));
    msg = rejects(with_update(&s, b), MT_TIR_BLOCK, "loop bounds are int64 and int32", "at 7:3", "\n    ...",
                  NULL);
    assert_true(strlen(msg) < 700);
    TIR_GUARD_END();
}

/* ---- source places through the compiler ------------------------------------------ */

static int count_lines(const char *src) {
    int n = 1;
    for (const char *p = src; *p; p++) n += *p == '\n';
    return n;
}

/* Every statement of s has a place on a line of the source. */
static void all_placed(const mt_tstmt *s, int nlines, const char *fname, const char *file) {
    if (!s) return;
    if (s->loc.line < 1 || s->loc.line > nlines)
        fail_msg("%s: a statement of '%s' has no place (%d:%d):\n%s", file, fname, s->loc.line, s->loc.col,
                 mt_tstmt_print(A, s));
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->nstmts; i++) all_placed(s->stmts[i], nlines, fname, file);
        break;
    case TS_IF:
        all_placed(s->then_s, nlines, fname, file);
        all_placed(s->else_s, nlines, fname, file);
        break;
    case TS_BLOCK: all_placed(s->init, nlines, fname, file); /* fall through */
    default: all_placed(s->body, nlines, fname, file);
    }
}

static char *read_file(const char *path) {
    FILE *fp = fopen(path, "rb");
    if (!fp) fail_msg("cannot open %s", path);
    char *buf = MT_NEW_ARRAY(A, char, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, fp);
    fclose(fp);
    buf[n] = 0;
    return buf;
}

static const char *GOLDEN[] = {
    "broadcast", "const_add", "control_flow", "cse_fold", "fuse_mlp", "fuse_reduction", "fused_add",
    "int_div", "multi_output", "multi_output_chain", "rank0", "shape_concat_transpose",
    "shape_reshape_fuse", "shape_symbolic_slice",
};

static void test_places_through_pipeline(void **state) {
    TIR_GUARD();
    setenv("MT_VERIFY_TIR", "1", 1); /* before the first compile: read once */
    for (size_t g = 0; g < sizeof GOLDEN / sizeof GOLDEN[0]; g++) {
        const char *file = mt_arena_printf(A, "tests/golden/%s.py", GOLDEN[g]);
        const char *src = read_file(file);
        mt_compiled c;
        mt_pipeline_targets targets = {mt_target_default_cpu(), NULL};
        mt_pipeline_run(A, src, strlen(src), NULL, &targets, &c);
        int nl = count_lines(src);
        for (int i = 0; i < c.nlowered; i++) {
            const mt_tfunc *bf = c.module->tfuncs[i], *lf = c.lowered[i];
            assert_true(bf->loc.line >= 1 && lf->loc.line == bf->loc.line);
            all_placed(bf->body, nl, bf->name, file);
            all_placed(lf->body, nl, lf->name, file);
            accepts(lf, MT_TIR_FLAT);
        }
    }
    TIR_GUARD_END();
}

/* fused_add.py: `out = a + b` on line 3 and `out = out + a` on line 4 fuse
 * into one function; each block keeps its own line. */
static void test_fused_blocks_keep_their_lines(void **state) {
    TIR_GUARD();
    const char *src = read_file("tests/golden/fused_add.py");
    mt_compiled c;
    mt_pipeline_targets targets = {mt_target_default_cpu(), NULL};
    mt_pipeline_run(A, src, strlen(src), NULL, &targets, &c);
    assert_int_equal(c.module->ntfuncs, 1);
    const mt_tstmt *body = c.module->tfuncs[0]->body;
    assert_int_equal(body->kind, TS_SEQ);
    assert_int_equal(body->nstmts, 2);
    int lines[2];
    for (int i = 0; i < 2; i++) {
        const mt_tstmt *s = body->stmts[i];
        while (s->kind == TS_FOR) s = s->body;
        assert_int_equal(s->kind, TS_BLOCK);
        lines[i] = s->loc.line;
    }
    assert_int_equal(lines[0], 3);
    assert_int_equal(lines[1], 4);
    assert_int_equal(c.module->tfuncs[0]->loc.line, 4); /* the fused binding's */
    TIR_GUARD_END();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TIR_TEST(test_accepts_each_form),        TIR_TEST(test_accepts_vectorized),
        TIR_TEST(test_rejects_var_out_of_scope), TIR_TEST(test_rejects_var_bound_twice),
        TIR_TEST(test_rejects_loop_var_in_block),
        TIR_TEST(test_rejects_unknown_buffer),   TIR_TEST(test_rejects_index_count),
        TIR_TEST(test_rejects_float_index),      TIR_TEST(test_rejects_operand_dtypes),
        TIR_TEST(test_rejects_store_dtype),      TIR_TEST(test_rejects_loop_bounds),
        TIR_TEST(test_rejects_conditions),       TIR_TEST(test_rejects_block_iters),
        TIR_TEST(test_rejects_intrinsic_arity),  TIR_TEST(test_rejects_lanes), TIR_TEST(test_prefetch),
        TIR_TEST(test_rejects_function_fields),  TIR_TEST(test_rejects_missing_parts),
        TIR_TEST(test_message_places),           TIR_TEST(test_places_through_pipeline),
        TIR_TEST(test_fused_blocks_keep_their_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
