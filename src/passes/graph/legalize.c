/*
 * legalize.c -- every op binding becomes a call_tir of a loop function.
 *
 * `y = R.add(x, R.const(2))` becomes
 * `y = R.call_tir(cls.add, (x,), out_sinfo=R.Tensor(...))` and the module
 * gains the block-form loop function `add`. Constant arguments are not passed:
 * the loop function has them as immediates. Each op kind has its legalizer;
 * elementwise and broadcast ops share one (legalize_elemwise.c).
 */
#include "passes/graph/graph_passes.h"

static mt_tfunc *legalize_op(mt_arena *a, const mt_gbinding *b) {
    switch (b->op->pattern) {
    case MT_PAT_ELEMWISE:
    case MT_PAT_BROADCAST:
        return mt_legalize_elemwise(a, b->op, b->args, b->nargs, b->outs[0]);
    default:
        mt_ice("no legalizer for op '%s'", b->op->name);
    }
}

mt_gmodule *mt_graph_legalize(mt_arena *a, mt_gmodule *m) {
    for (int fi = 0; fi < m->nfuncs; fi++) {
        mt_gfunc *f = m->funcs[fi];
        for (int bi = 0; bi < f->nblocks; bi++) {
            mt_gblock *blk = f->blocks[bi];
            for (int i = 0; i < blk->nbindings; i++) {
                mt_gbinding *b = blk->bindings[i];
                if (b->kind != MT_CALL_OP) continue;
                mt_tfunc *tf = legalize_op(a, b);
                mt_gmodule_add_tfunc(a, m, tf);
                mt_gvar *targs[8];
                int n = 0;
                for (int k = 0; k < b->nargs; k++)
                    if (!b->args[k]->is_const) targs[n++] = b->args[k];
                mt_gbinding *nb = mt_gbinding_tir(a, b->outs, b->nouts, tf, targs, n, b->loc);
                nb->op = b->op;
                blk->bindings[i] = nb;
            }
        }
    }
    return m;
}
