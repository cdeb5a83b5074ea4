/*
 * dead_code.c -- drop bindings whose values nobody uses, and loop functions
 * nobody calls.
 *
 * Bindings are pure, so a binding is dead when none of its outputs is used
 * anywhere in the function (other bindings, conditions, branch and loop
 * values, returns: the places mt_gfunc_uses looks at). The uses of every
 * value are counted once per function (mt_gfunc_count_uses); removing a
 * binding takes its arguments' uses off the counts, which can make their
 * producers dead, so the sweep repeats until nothing changes. Each sweep goes
 * backwards through the blocks, which removes a whole dead chain in one sweep
 * in the common case. Counting instead of asking mt_gfunc_uses per binding
 * keeps the pass linear in the bindings (it was quadratic: the largest share
 * of compile time for kernels of thousands of operations).
 */
#include "passes/graph/graph_passes.h"

typedef struct sweep {
    mt_arena *arena;
    mt_ptrmap uses; /* value -> number of places that use it */
    bool changed;
} sweep;

static bool binding_used(const sweep *s, const mt_gbinding *b) {
    for (int k = 0; k < b->nouts; k++)
        if (mt_ptrmap_get(&s->uses, b->outs[k]) > 0) return true;
    return false;
}

static void sweep_block(mt_gblock *blk, void *ctx) {
    sweep *s = ctx;
    int n = blk->nbindings, removed = 0;
    for (int i = n - 1; i >= 0; i--) {
        mt_gbinding *b = blk->bindings[i];
        if (binding_used(s, b)) continue;
        for (int j = 0; j < b->nargs; j++) mt_ptrmap_add(s->arena, &s->uses, b->args[j], -1);
        blk->bindings[i] = NULL;
        removed++;
    }
    if (!removed) return;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (blk->bindings[i]) blk->bindings[k++] = blk->bindings[i];
    blk->nbindings = k;
    s->changed = true;
}

static void mark_calls(mt_gblock *blk, void *ctx) {
    sweep *s = ctx;
    for (int i = 0; i < blk->nbindings; i++)
        if (blk->bindings[i]->callee) mt_ptrmap_add(s->arena, &s->uses, blk->bindings[i]->callee, 1);
}

mt_gmodule *mt_graph_dead_code(mt_arena *a, mt_gmodule *m) {
    for (int fi = 0; fi < m->nfuncs; fi++) {
        sweep s = {a, {0}, true};
        mt_gfunc_count_uses(a, m->funcs[fi], &s.uses);
        while (s.changed) {
            s.changed = false;
            mt_gfunc_foreach_bindings(m->funcs[fi], sweep_block, &s);
        }
    }
    sweep called = {a, {0}, false};
    for (int fi = 0; fi < m->nfuncs; fi++) mt_gfunc_foreach_bindings(m->funcs[fi], mark_calls, &called);
    int n = 0;
    for (int t = 0; t < m->ntfuncs; t++)
        if (mt_ptrmap_get(&called.uses, m->tfuncs[t]) > 0) m->tfuncs[n++] = m->tfuncs[t];
    m->ntfuncs = n;
    return m;
}
