/*
 * fuse_ops.c -- group bindings that will become one kernel.
 *
 * The bindings of a dataflow block form a DAG. We walk it from the last
 * binding to the first; a binding P joins the group of its consumers when
 *
 *   - P is elementwise, broadcast or injective, with one output;
 *   - every consumer of P is in one and the same group G (P then post-
 *     dominates nothing outside G: this is the post-dominator condition of
 *     TVM's FuseOps, restricted to what our patterns can fuse today);
 *   - G's root (its last binding) is elementwise, broadcast or injective;
 *   - G has fewer than MAX_GROUP members.
 *
 * P may also be a function output: the fused kernel then writes it as a
 * second output. Because each group is closed under "all consumers inside",
 * its root is its last binding and every other member's value is used only
 * inside the group or returned; fuse_tir relies on that to put the fused
 * call at the root's place.
 *
 * Issue #4 extends the conditions: a reduction's elementwise producers and
 * consumers, and matmul with its epilogue.
 */
#include "passes/graph/graph_passes.h"

enum { MAX_GROUP = 64 };

static bool fusable(mt_op_pattern p) { return p <= MT_PAT_INJECTIVE; }

static bool uses(const mt_gbinding *b, const mt_gvar *v) {
    for (int k = 0; k < b->nargs; k++)
        if (b->args[k] == v) return true;
    return false;
}

static void fuse_block(mt_gblock *blk, void *ctx) {
    mt_arena *a = ctx;
    int n = blk->nbindings;
    if (n == 0 || !blk->dataflow) return;
    int *group = MT_NEW_ARRAY(a, int, n); /* index of the group's root */
    int *size = MT_NEW_ARRAY(a, int, n);
    for (int i = 0; i < n; i++) {
        group[i] = i;
        size[i] = 1;
    }
    for (int i = n - 1; i >= 0; i--) {
        const mt_gbinding *p = blk->bindings[i];
        if (p->kind != MT_CALL_TIR || p->nouts != 1 || !fusable(mt_tfunc_pattern(p->callee)))
            continue;
        int g = -1;
        bool ok = true;
        for (int j = i + 1; j < n && ok; j++) {
            if (!uses(blk->bindings[j], p->outs[0])) continue;
            if (g < 0)
                g = group[j];
            else if (group[j] != g)
                ok = false;
        }
        if (!ok || g < 0) continue;
        const mt_gbinding *root = blk->bindings[g];
        if (root->kind != MT_CALL_TIR || !fusable(mt_tfunc_pattern(root->callee))) continue;
        if (size[g] >= MAX_GROUP) continue;
        group[i] = g;
        size[g]++;
    }
    /* number the groups with more than one member in order of their roots */
    int *id = MT_NEW_ARRAY(a, int, n);
    int next = 0;
    for (int i = 0; i < n; i++) id[i] = (group[i] == i && size[i] > 1) ? next++ : -1;
    for (int i = 0; i < n; i++) blk->bindings[i]->group = id[group[i]];
}

mt_gmodule *mt_graph_fuse_ops(mt_arena *a, mt_gmodule *m) {
    for (int fi = 0; fi < m->nfuncs; fi++) mt_gfunc_foreach_bindings(m->funcs[fi], fuse_block, a);
    return m;
}
