/*
 * lower_blocks.c -- from block form to plain loops.
 *
 * A block is a promise about its iteration space that schedules rely on; once
 * scheduling is done it says nothing codegen needs, so each TS_BLOCK is
 * replaced by what it executes for one binding of its iteration variables:
 *
 *     with T.block("sum"):                      if k == 0:
 *         vi, vk = T.axis.remap("SR", [i, k])       out[i] = 0.0
 *         with T.init():                   ==>  out[i] = out[i] + a[i, k]
 *             out[vi] = 0.0
 *         out[vi] = out[vi] + a[vi, vk]
 *
 *  - Iteration variables are substituted by their bound values everywhere in
 *    the block (body, init, predicate), whatever the values are. No TS_LET is
 *    introduced: keeping the index arithmetic visible in every index is what
 *    simplify, vectorize and the affine analyses of later passes want, and a
 *    repeated subexpression is CSE's job.
 *  - The init runs before the first reduce iteration: when every loop that
 *    a reduce binding uses is at its first iteration. A binding that grows
 *    with its loops from 0 (`k`, `k0 * 8 + k1`, loops from 0) is at 0 just
 *    then: `if r0 == 0 and r1 == 0: init`; any other (`7 - k`, a loop from
 *    4) tests its loops: `if k == 0: init`. Placed before the body in the
 *    same loop iteration. With no reduce variable the init runs
 *    unconditionally before the body.
 *  - A T.where predicate becomes `if pred:` around the init and the body.
 *  - Block alloc_buffers become TS_ALLOC around the lowered block (the first
 *    allocation outermost), function-level f->allocs TS_ALLOC around the whole
 *    body; the result has f->nallocs == 0.
 *  - Reads/writes regions and block names are dropped. What a block becomes
 *    (the ifs, the sequence, the allocations) keeps the block's source
 *    place; the function's allocations take the function's.
 *
 * Nested blocks are lowered bottom-up. Buffers are untouched: multi-dimensional
 * indexing stays until flatten_buffers.
 */
#include "passes/tir/tir_passes.h"

typedef struct lower {
    mt_arena *a;
    MT_VEC(const mt_tstmt *) loops; /* around the statement being lowered, outermost first */
} lower;

/* Does e grow with the loops it uses, from 0 when they are at their first
 * iteration (loops from 0, sums, positive constant multiples)? */
static bool from_zero(const lower *lw, const mt_texpr *e) {
    int64_t c;
    switch (e->kind) {
    case TE_VAR:
        for (int i = 0; i < lw->loops.len; i++)
            if (lw->loops.data[i]->var == e->var) return mt_te_is_const_int(lw->loops.data[i]->min, &c) && c == 0;
        return false;
    case TE_ADD: return from_zero(lw, e->a) && from_zero(lw, e->b);
    case TE_MUL:
        return (mt_te_is_const_int(e->b, &c) && c > 0 && from_zero(lw, e->a)) ||
               (mt_te_is_const_int(e->a, &c) && c > 0 && from_zero(lw, e->b));
    default: return false;
    }
}

typedef struct var_scan {
    const lower *lw;
    bool other; /* a variable that is no loop around the block (a let's) */
} var_scan;

static void scan_var(mt_tvisitor *v, const mt_texpr *e) {
    var_scan *s = v->ctx;
    bool loop = e->kind != TE_VAR;
    for (int i = 0; !loop && i < s->lw->loops.len; i++) loop = s->lw->loops.data[i]->var == e->var;
    s->other = s->other || !loop;
    mt_tvisit_expr_children(v, e);
}

/* binding v at its first value: v == 0, or each loop it uses at its min.
 * A binding through a let (or any variable not a loop around the block)
 * keeps v == 0: the loops behind it are not seen here. */
static mt_texpr *at_first(const lower *lw, mt_texpr *v) {
    mt_arena *a = lw->a;
    var_scan vs = {lw, false};
    mt_tvisitor vv = {scan_var, NULL, &vs};
    mt_tvisit_expr(&vv, v);
    if (vs.other || from_zero(lw, v)) return mt_te_bin(a, TE_EQ, v, mt_te_int(a, v->dtype, 0));
    mt_texpr *c = NULL;
    for (int i = 0; i < lw->loops.len; i++) {
        const mt_tstmt *l = lw->loops.data[i];
        if (!mt_texpr_uses_var(v, l->var)) continue;
        mt_texpr *eq = mt_te_bin(a, TE_EQ, mt_te_var(a, l->var), l->min);
        c = c ? mt_te_bin(a, TE_AND, c, eq) : eq;
    }
    return c;
}

static mt_tstmt *lower_block(mt_tmutator *m, mt_tstmt *s) {
    mt_arena *a = m->arena;
    mt_tstmt *body = mt_tmutate_stmt(m, s->body);
    mt_tstmt *init = mt_tmutate_stmt(m, s->init);
    if (s->niters > 0 && !s->iter_values) mt_ice("block '%s' has no iter values", s->name);
    mt_tvar **vars = MT_NEW_ARRAY(a, mt_tvar *, s->niters > 0 ? s->niters : 1);
    for (int i = 0; i < s->niters; i++) vars[i] = s->iters[i].var;
    body = mt_tsubst_stmt(a, body, vars, s->iter_values, s->niters);
    init = mt_tsubst_stmt(a, init, vars, s->iter_values, s->niters);
    mt_texpr *pred = mt_tsubst_expr(a, s->predicate, vars, s->iter_values, s->niters);
    if (init) {
        mt_texpr *first = NULL;
        for (int i = 0; i < s->niters; i++) {
            if (s->iters[i].kind != MT_ITER_REDUCE) continue;
            mt_texpr *eq = at_first(m->ctx, s->iter_values[i]);
            if (eq) first = first ? mt_te_bin(a, TE_AND, first, eq) : eq;
        }
        mt_tstmt *pair[2] = {first ? mt_ts_at(mt_ts_if(a, first, init, NULL), s->loc) : init, body};
        body = mt_ts_at(mt_ts_seq(a, pair, 2), s->loc);
    }
    if (pred) body = mt_ts_at(mt_ts_if(a, pred, body, NULL), s->loc);
    for (int i = s->nallocs - 1; i >= 0; i--) body = mt_ts_at(mt_ts_alloc(a, s->allocs[i], body), s->loc);
    return body;
}

/* Expressions hold no blocks: no need to walk them. */
static mt_texpr *keep_expr(mt_tmutator *m, mt_texpr *e) { return e; }

static mt_tstmt *lower_stmt(mt_tmutator *m, mt_tstmt *s) {
    if (s->kind == TS_BLOCK) return lower_block(m, s);
    lower *lw = m->ctx;
    if (s->kind == TS_FOR) MT_VEC_PUSH(lw->a, &lw->loops, s);
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    if (s->kind == TS_FOR) lw->loops.len--;
    return r;
}

mt_tfunc *mt_tir_lower_blocks(mt_arena *a, mt_tfunc *f) {
    lower lw = {a, {0}};
    mt_tmutator m = {a, keep_expr, lower_stmt, &lw};
    mt_tstmt *body = f->body ? mt_tmutate_stmt(&m, f->body) : NULL;
    if (body == f->body && f->nallocs == 0) return f;
    if (!body) body = mt_ts_at(mt_ts_seq(a, NULL, 0), f->loc);
    for (int i = f->nallocs - 1; i >= 0; i--) body = mt_ts_at(mt_ts_alloc(a, f->allocs[i], body), f->loc);
    mt_tfunc *g = MT_NEW(a, mt_tfunc);
    *g = *f;
    g->body = body;
    g->allocs = NULL;
    g->nallocs = 0;
    return g;
}
