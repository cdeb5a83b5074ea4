/*
 * cse.c -- common subexpression elimination over op bindings.
 *
 * Two bindings in one dataflow block that apply the same op to the same
 * arguments (the same values, or equal constants) with equal attributes
 * compute the same value, since ops are pure: the later one's uses are
 * redirected to the earlier one (dead_code then removes it). `exp(x) +
 * exp(x)` computes exp once. Blocks are independent: a value from a branch
 * is not reused outside it.
 */
#include "passes/graph/graph_passes.h"

static bool same_arg(const mt_gvar *x, const mt_gvar *y) {
    if (x == y) return true;
    if (!x->is_const || !y->is_const || x->type.dtype != y->type.dtype || x->weak != y->weak) return false;
    return x->iconst == y->iconst && (x->fconst == y->fconst || (x->fconst != x->fconst && y->fconst != y->fconst));
}

static bool same_call(const mt_gbinding *x, const mt_gbinding *y) {
    if (x->kind != MT_CALL_OP || y->kind != MT_CALL_OP || x->op != y->op || x->nargs != y->nargs ||
        x->nouts != 1 || y->nouts != 1)
        return false;
    for (int i = 0; i < x->nargs; i++)
        if (!same_arg(x->args[i], y->args[i])) return false;
    return mt_gattrs_equal(x->attrs, y->attrs);
}

static void cse_block(mt_gblock *blk, void *ctx) {
    mt_gfunc *f = ctx;
    for (int i = 0; i < blk->nbindings; i++)
        for (int j = 0; j < i; j++)
            if (same_call(blk->bindings[j], blk->bindings[i])) {
                bool returned = false;
                for (int o = 0; o < f->noutputs; o++) returned |= f->outputs[o] == blk->bindings[i]->outs[0];
                if (!returned) mt_gfunc_replace_uses(f, blk->bindings[i]->outs[0], blk->bindings[j]->outs[0]);
                break;
            }
}

mt_gmodule *mt_graph_cse(mt_arena *a, mt_gmodule *m) {
    (void)a;
    for (int fi = 0; fi < m->nfuncs; fi++) mt_gfunc_foreach_bindings(m->funcs[fi], cse_block, m->funcs[fi]);
    return m;
}
