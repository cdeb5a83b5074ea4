/*
 * dead_code.c -- drop bindings whose values nobody uses, and loop functions
 * nobody calls.
 *
 * Bindings are pure, so a binding is dead when none of its outputs is used
 * anywhere in the function (mt_gfunc_uses: other bindings, conditions, branch
 * and loop values, returns). Removing one can make its inputs dead, so the
 * sweep repeats until nothing changes; each sweep goes backwards through the
 * blocks, which removes a whole dead chain in one sweep in the common case.
 */
#include "passes/graph/graph_passes.h"

typedef struct sweep {
    mt_gfunc *func;
    bool changed;
} sweep;

static bool binding_used(const mt_gfunc *f, const mt_gblock *blk, const mt_gbinding *b) {
    for (int k = 0; k < b->nouts; k++) {
        if (mt_gfunc_uses(f, blk, b->outs[k])) return true;
        for (int i = 0; i < blk->nbindings; i++) /* later uses in the same block */
            for (int j = 0; j < blk->bindings[i]->nargs; j++)
                if (blk->bindings[i]->args[j] == b->outs[k]) return true;
    }
    return false;
}

static void sweep_block(mt_gblock *blk, void *ctx) {
    sweep *s = ctx;
    for (int i = blk->nbindings - 1; i >= 0; i--) {
        if (binding_used(s->func, blk, blk->bindings[i])) continue;
        for (int j = i; j + 1 < blk->nbindings; j++) blk->bindings[j] = blk->bindings[j + 1];
        blk->nbindings--;
        s->changed = true;
    }
}

typedef struct calls {
    const mt_tfunc *callee;
    bool called;
} calls;

static void find_call(mt_gblock *blk, void *ctx) {
    calls *c = ctx;
    for (int i = 0; i < blk->nbindings; i++)
        if (blk->bindings[i]->callee == c->callee) c->called = true;
}

mt_gmodule *mt_graph_dead_code(mt_arena *a, mt_gmodule *m) {
    (void)a;
    for (int fi = 0; fi < m->nfuncs; fi++) {
        sweep s = {m->funcs[fi], true};
        while (s.changed) {
            s.changed = false;
            mt_gfunc_foreach_bindings(m->funcs[fi], sweep_block, &s);
        }
    }
    int n = 0;
    for (int t = 0; t < m->ntfuncs; t++) {
        calls c = {m->tfuncs[t], false};
        for (int fi = 0; fi < m->nfuncs && !c.called; fi++)
            mt_gfunc_foreach_bindings(m->funcs[fi], find_call, &c);
        if (c.called) m->tfuncs[n++] = m->tfuncs[t];
    }
    m->ntfuncs = n;
    return m;
}
