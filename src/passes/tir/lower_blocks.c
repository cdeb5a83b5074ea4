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
 *  - The init runs when every reduce iteration variable is at its first
 *    iteration, i.e. when each reduce binding equals 0 (the domain is
 *    [0, extent)): `if r0 == 0 and r1 == 0: init`, placed before the body in
 *    the same loop iteration. With no reduce variable the init runs
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
            mt_texpr *v = s->iter_values[i];
            mt_texpr *eq = mt_te_bin(a, TE_EQ, v, mt_te_int(a, v->dtype, 0));
            first = first ? mt_te_bin(a, TE_AND, first, eq) : eq;
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
    return mt_tmutate_stmt_children(m, s);
}

mt_tfunc *mt_tir_lower_blocks(mt_arena *a, mt_tfunc *f) {
    mt_tmutator m = {a, keep_expr, lower_stmt, NULL};
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
