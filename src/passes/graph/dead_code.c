/*
 * dead_code.c -- drop bindings whose values nobody uses, and loop functions
 * nobody calls.
 *
 * Bindings are pure, so one backward sweep per block decides liveness: a
 * binding is live when one of its outputs is returned or used by a live
 * binding after it. (Blocks are visited last to first for the same reason.)
 */
#include "passes/graph/graph_passes.h"

static bool is_live(const mt_gfunc *f, mt_gvar *const *live, int nlive, const mt_gbinding *b) {
    for (int k = 0; k < b->nouts; k++) {
        for (int i = 0; i < f->noutputs; i++)
            if (f->outputs[i] == b->outs[k]) return true;
        for (int i = 0; i < nlive; i++)
            if (live[i] == b->outs[k]) return true;
    }
    return false;
}

mt_gmodule *mt_graph_dead_code(mt_arena *a, mt_gmodule *m) {
    for (int fi = 0; fi < m->nfuncs; fi++) {
        mt_gfunc *f = m->funcs[fi];
        MT_VEC(mt_gvar *) live = {0}; /* values used by live bindings */
        for (int bi = f->nblocks - 1; bi >= 0; bi--) {
            mt_gblock *blk = f->blocks[bi];
            bool *keep = MT_NEW_ARRAY(a, bool, blk->nbindings > 0 ? blk->nbindings : 1);
            for (int i = blk->nbindings - 1; i >= 0; i--) {
                mt_gbinding *b = blk->bindings[i];
                keep[i] = is_live(f, live.data, live.len, b);
                if (keep[i])
                    for (int k = 0; k < b->nargs; k++) MT_VEC_PUSH(a, &live, b->args[k]);
            }
            int n = 0;
            for (int i = 0; i < blk->nbindings; i++)
                if (keep[i]) blk->bindings[n++] = blk->bindings[i];
            blk->nbindings = n;
        }
    }
    /* loop functions still called */
    int n = 0;
    for (int t = 0; t < m->ntfuncs; t++) {
        bool called = false;
        for (int fi = 0; fi < m->nfuncs && !called; fi++)
            for (int bi = 0; bi < m->funcs[fi]->nblocks && !called; bi++)
                for (int i = 0; i < m->funcs[fi]->blocks[bi]->nbindings; i++)
                    if (m->funcs[fi]->blocks[bi]->bindings[i]->callee == m->tfuncs[t]) called = true;
        if (called) m->tfuncs[n++] = m->tfuncs[t];
    }
    m->ntfuncs = n;
    return m;
}
