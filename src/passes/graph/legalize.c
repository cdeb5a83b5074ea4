/*
 * legalize.c -- every op binding becomes a call_tir of a loop function.
 *
 * `y = R.add(x, R.const(2))` becomes
 * `y = R.call_tir(cls.add, (x,), out_sinfo=R.Tensor(...))` and the module
 * gains the block-form loop function `add`. Constant arguments are not passed:
 * the loop function has them as immediates. The legalizer of each op is named
 * in graph/ops.def: elementwise ops share one (legalize_elemwise.c), the
 * others have their own. The loop function and each of its statements get
 * the binding's source place (tir.h), so that errors in later passes can
 * name the line that wrote the op.
 */
#include "passes/graph/graph_passes.h"

static const struct {
    mt_compute_fn compute;
    mt_legalize_fn legalize;
} legalizers[] = {
#define MT_EWISE(id, name, sig, pattern, infer, compute) {compute, NULL},
#define MT_OP(id, name, sig, pattern, infer, legalize) {NULL, legalize},
#include "graph/ops.def"
};

static mt_tfunc *legalize_op(mt_arena *a, const mt_gbinding *b) {
    if (legalizers[b->op->id].compute) return mt_legalize_elemwise(a, b, legalizers[b->op->id].compute);
    return legalizers[b->op->id].legalize(a, b);
}

typedef struct walk {
    mt_arena *arena;
    mt_gmodule *module;
} walk;

static void legalize_block(mt_gblock *blk, void *ctx) {
    walk *w = ctx;
    mt_arena *a = w->arena;
    for (int i = 0; i < blk->nbindings; i++) {
        mt_gbinding *b = blk->bindings[i];
        if (b->kind != MT_CALL_OP) continue;
        mt_tfunc *tf = legalize_op(a, b);
        tf->loc = b->loc;
        mt_tstmt_fill_loc(tf->body, b->loc);
        mt_gmodule_add_tfunc(a, w->module, tf);
        mt_gvar **targs = MT_NEW_ARRAY(a, mt_gvar *, b->nargs > 0 ? b->nargs : 1);
        int n = 0;
        for (int k = 0; k < b->nargs; k++)
            if (!b->args[k]->is_const) targs[n++] = b->args[k];
        mt_gbinding *nb = mt_gbinding_tir(a, b->outs, b->nouts, tf, targs, n, b->loc);
        nb->op = b->op;
        nb->attrs = b->attrs;
        nb->device = b->device;
        blk->bindings[i] = nb;
    }
}

mt_gmodule *mt_graph_legalize(mt_arena *a, mt_gmodule *m) {
    walk w = {a, m};
    for (int fi = 0; fi < m->nfuncs; fi++) mt_gfunc_foreach_bindings(m->funcs[fi], legalize_block, &w);
    return m;
}
