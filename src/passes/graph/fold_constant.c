/*
 * fold_constant.c -- op bindings whose arguments are all constants become
 * constants.
 *
 * Constants are scalars (rank 0), so folding is graph/fold.c's scalar
 * evaluation, the same the builder applies as it builds. What reaches this
 * pass unfolded is what the builder could not fold yet at the time (a value
 * that became constant later, e.g. through an inlined call). A binding that
 * is returned keeps its kernel (a result must be a tensor the kernel writes).
 */
#include "passes/graph/graph_passes.h"

typedef struct walk {
    mt_arena *arena;
    mt_gfunc *func;
    mt_gsubst subst; /* folded binding's value -> its constant */
} walk;

static void fold_block(mt_gblock *blk, void *ctx) {
    walk *w = ctx;
    for (int i = 0; i < blk->nbindings; i++) {
        mt_gbinding *b = blk->bindings[i];
        mt_gsubst_binding(&w->subst, b);
        if (b->kind != MT_CALL_OP || b->nouts != 1) continue;
        bool returned = false;
        for (int o = 0; o < w->func->noutputs; o++) returned |= w->func->outputs[o] == b->outs[0];
        mt_gvar *c;
        if (returned || !mt_fold_scalar(w->arena, b->op, b->args, b->nargs, &b->outs[0]->type, b->loc, &c))
            continue;
        mt_gsubst_add(w->arena, &w->subst, b->outs[0], c);
    }
}

mt_gmodule *mt_graph_fold_constant(mt_arena *a, mt_gmodule *m) {
    for (int fi = 0; fi < m->nfuncs; fi++) {
        walk w = {a, m->funcs[fi], {{0}}};
        mt_gfunc_foreach_bindings(m->funcs[fi], fold_block, &w);
        mt_gfunc_apply_subst(m->funcs[fi], &w.subst);
    }
    return m;
}
