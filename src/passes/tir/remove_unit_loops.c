/*
 * remove_unit_loops.c -- loops that run once become their body.
 *
 * A TS_FOR whose extent is the integer constant 1 runs its body once with
 * var == min, so it is replaced by the body with every use of var substituted
 * by min. The walk is bottom-up (inner loops first); substitution cannot
 * create new constant-1 extents that this pass would then miss, except through
 * arithmetic like `i + 1` with i := 0, which is simplify's job (the pipeline
 * runs simplify after this pass).
 *
 * Thread-bound loops (MT_FOR_THREAD) are kept even with extent 1: they carry
 * the launch configuration for the GPU backend. Vectorized, unrolled and
 * parallel loops of extent 1 are removed like serial ones. Block iteration
 * values and regions that use the variable are substituted too, so the pass is
 * valid in block form as well.
 */
#include "passes/tir/tir_passes.h"

static mt_tstmt *unit_stmt(mt_tmutator *m, mt_tstmt *s) {
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    int64_t ext;
    if (r->kind == TS_FOR && r->for_kind != MT_FOR_THREAD && mt_te_is_const_int(r->extent, &ext) &&
        ext == 1)
        return mt_tsubst_stmt(m->arena, r->body, &r->var, &r->min, 1);
    return r;
}

/* Expressions hold no statements: no need to walk them. */
static mt_texpr *keep_expr(mt_tmutator *m, mt_texpr *e) { return e; }

mt_tfunc *mt_tir_remove_unit_loops(mt_arena *a, mt_tfunc *f) {
    if (!f->body) return f;
    mt_tmutator m = {a, keep_expr, unit_stmt, NULL};
    mt_tstmt *body = mt_tmutate_stmt(&m, f->body);
    return mt_tfunc_with_body(a, f, body);
}
