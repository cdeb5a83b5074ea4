/*
 * fuse_ops.c -- group bindings that will become one kernel.
 *
 * The bindings of a dataflow block form a DAG. We walk it from the last
 * binding to the first; a binding P (one output) joins the group G of its
 * consumers when every consumer of P is in that one group -- P then has no
 * use outside G: the post-dominator condition of TVM's FuseOps -- and the
 * patterns allow it. Two phases, so that a matmul keeps its epilogue:
 *
 * Phase 1, epilogues (and everything without a matmul):
 *   - P elementwise/broadcast/injective joins a group whose root (its last
 *     binding) is elementwise/broadcast/injective, or a reduction: producers
 *     fuse into the reduction that consumes them (sum(x * x) reads x once);
 *     but never a group that holds a matmul -- there P would be the
 *     matmul's prologue, and if P is another matmul's epilogue (relu(x @ w0
 *     + b0) @ w1.T) that matmul could then not join P (one matmul a group);
 *   - P a reduction or out-elementwise-fusable op (matmul) joins a group whose
 *     root is elementwise/broadcast/injective and that holds no other such
 *     op: the reduction's or matmul's elementwise consumers run in the same
 *     kernel (matmul + bias + relu; x - mean(x)), the reduced value staying
 *     in a small local buffer;
 *   - opaque ops are barriers; a group has at most MAX_GROUP members.
 * Phase 2, prologues: a group of light bindings only whose root's consumers
 *   all lie in one group holding a matmul joins that group: transpose(w)
 *   or a cast in front of x @ w (the matmul then reads w[j, k] in place), a
 *   bias computed for the epilogue. A group holding a matmul or a reduction
 *   never joins another, so a matmul is never fused behind another matmul's
 *   epilogue (TVM: one out-elementwise-fusable op per group).
 * In both phases a binding computed once from bound parameters
 * (mt_gfunc_bound_values: a weight's transpose, scale or cast) and one that
 * runs at every call never share a group: the first kind runs once, before
 * the first call (planner/planner.c), and its result is read like a weight.
 *
 * P may also be a function output: the fused kernel then writes it as a
 * second output. Because each group is closed under "all consumers inside",
 * its root is its last binding and every other member's value is used only
 * inside the group or returned; fuse_tir relies on that to put the fused
 * call at the root's place. The TIR pass inline_producers then inlines the
 * elementwise members into their consumers, reductions included.
 */
#include "passes/graph/graph_passes.h"
#include "support/common.h"

enum { MAX_GROUP = 64 };

static bool light(mt_op_pattern p) { return p <= MT_PAT_INJECTIVE; }
static bool heavy(mt_op_pattern p) { return p == MT_PAT_REDUCTION || p == MT_PAT_OUT_EWISE_FUSABLE; }

/* The consumers of each value in a block: `head` maps a value to 1 + the
 * first entry of its list in `edges` (binding index, 1 + next entry). A
 * binding that reads a value twice is listed once. Asking each binding's
 * consumers by scanning the rest of the block would be quadratic. */
typedef struct consumers {
    mt_ptrmap head;
    int *binding, *next;
    int n;
} consumers;

static void find_consumers(mt_arena *a, const mt_gblock *blk, consumers *c) {
    int nargs = 0;
    for (int j = 0; j < blk->nbindings; j++) nargs += blk->bindings[j]->nargs;
    c->binding = MT_NEW_ARRAY(a, int, nargs > 0 ? nargs : 1);
    c->next = MT_NEW_ARRAY(a, int, nargs > 0 ? nargs : 1);
    for (int j = 0; j < blk->nbindings; j++) {
        const mt_gbinding *b = blk->bindings[j];
        for (int k = 0; k < b->nargs; k++) {
            bool seen = false;
            for (int q = 0; q < k; q++) seen |= b->args[q] == b->args[k];
            if (seen) continue;
            int first = mt_ptrmap_get(&c->head, b->args[k]);
            c->binding[c->n] = j;
            c->next[c->n] = first;
            c->n++;
            mt_ptrmap_add(a, &c->head, b->args[k], c->n - first); /* head becomes c->n */
        }
    }
}

/* The group holding every consumer of p's value, or -1 (none, several, or
 * one that runs on another device than p: a group is one kernel). */
static int sole_group(const consumers *c, const mt_gblock *blk, const int *group,
                      const mt_gbinding *p) {
    int g = -1;
    for (int e = mt_ptrmap_get(&c->head, p->outs[0]); e; e = c->next[e - 1]) {
        int j = c->binding[e - 1];
        if (g < 0) g = group[j];
        else if (group[j] != g) return -1;
    }
    if (g >= 0 && !mt_device_equal(blk->bindings[g]->device, p->device)) return -1;
    return g;
}

typedef struct walk {
    mt_arena *a;
    mt_ptrmap uses; /* uses of each value in the function */
    mt_ptrmap bound_vals, bound; /* bindings computed once from bound parameters */
} walk;

static void fuse_block(mt_gblock *blk, void *ctx) {
    walk *w = ctx;
    mt_arena *a = w->a;
    int n = blk->nbindings;
    if (n == 0 || !blk->dataflow) return;
    int *group = MT_NEW_ARRAY(a, int, n); /* index of the group's root */
    int *size = MT_NEW_ARRAY(a, int, n);
    bool *has_heavy = MT_NEW_ARRAY(a, bool, n); /* by root: holds a reduction/matmul */
    bool *has_mm = MT_NEW_ARRAY(a, bool, n);    /* by root: holds a matmul */
    bool *once = MT_NEW_ARRAY(a, bool, n);      /* computed once from bound parameters: never
                                                   grouped with what runs at every call */
    consumers cons = {{0}, NULL, NULL, 0};
    find_consumers(a, blk, &cons);
    for (int i = 0; i < n; i++) {
        group[i] = i;
        size[i] = 1;
        const mt_gbinding *b = blk->bindings[i];
        has_heavy[i] = b->kind == MT_CALL_TIR && heavy(mt_tfunc_pattern(b->callee));
        has_mm[i] = b->kind == MT_CALL_TIR && mt_tfunc_pattern(b->callee) == MT_PAT_OUT_EWISE_FUSABLE;
        once[i] = mt_ptrmap_get(&w->bound, b) != 0;
    }
    /* phase 1: epilogues. A light binding never joins a group that holds a
     * matmul here, so that a matmul's elementwise consumers stay its own
     * epilogue instead of becoming the next matmul's prologue. */
    for (int i = n - 1; i >= 0; i--) {
        const mt_gbinding *p = blk->bindings[i];
        if (p->kind != MT_CALL_TIR || p->nouts != 1) continue;
        mt_op_pattern pp = mt_tfunc_pattern(p->callee);
        if (!light(pp) && !heavy(pp)) continue;
        int g = sole_group(&cons, blk, group, p);
        if (g < 0 || size[g] >= MAX_GROUP || once[i] != once[g]) continue;
        const mt_gbinding *root = blk->bindings[g];
        if (root->kind != MT_CALL_TIR) continue;
        mt_op_pattern rp = mt_tfunc_pattern(root->callee);
        bool join = light(pp) ? ((light(rp) || rp == MT_PAT_REDUCTION) && !has_mm[g])
                              : (light(rp) && !has_heavy[g]);
        if (!join) continue;
        group[i] = g;
        size[g]++;
        if (heavy(pp)) has_heavy[g] = true;
        if (pp == MT_PAT_OUT_EWISE_FUSABLE) has_mm[g] = true;
    }
    /* phase 2: prologues. A group of light bindings only whose root's
     * consumers all lie in one group holding a matmul joins that group
     * (transpose(w) or a cast in front of x @ w; a bias computation feeding
     * the epilogue). Groups holding a matmul or a reduction never merge, so
     * one group never holds two matmuls or a matmul behind another's
     * epilogue. Roots from last to first: a merged group's members follow
     * `merged` to their final root. */
    int *merged = MT_NEW_ARRAY(a, int, n);
    for (int i = 0; i < n; i++) merged[i] = i;
    /* a group whose value is used after the block (returned) stays apart:
     * the matmul rule matches no function writing its prologue as well */
    mt_ptrmap inside = {0};
    for (int j = 0; j < n; j++)
        for (int k = 0; k < blk->bindings[j]->nargs; k++) {
            const mt_gvar *v = blk->bindings[j]->args[k];
            mt_ptrmap_add(a, &inside, v, 1);
        }
    bool *escapes = MT_NEW_ARRAY(a, bool, n); /* by phase-1 root */
    for (int j = 0; j < n; j++)
        for (int k = 0; k < blk->bindings[j]->nouts; k++) {
            const mt_gvar *v = blk->bindings[j]->outs[k];
            if (mt_ptrmap_get(&w->uses, v) > mt_ptrmap_get(&inside, v)) escapes[group[j]] = true;
        }
    for (int i = n - 1; i >= 0; i--) {
        const mt_gbinding *p = blk->bindings[i];
        if (group[i] != i || has_heavy[i] || escapes[i] || p->kind != MT_CALL_TIR || p->nouts != 1 ||
            !light(mt_tfunc_pattern(p->callee)))
            continue;
        int g = sole_group(&cons, blk, group, p);
        if (g < 0) continue;
        while (merged[g] != g) g = merged[g];
        if (!has_mm[g] || size[g] + size[i] > MAX_GROUP || once[i] != once[g]) continue;
        merged[i] = g;
        size[g] += size[i];
    }
    for (int i = 0; i < n; i++) {
        int g = group[i];
        while (merged[g] != g) g = merged[g];
        group[i] = g;
    }
    /* number the groups with more than one member in order of their roots */
    int *id = MT_NEW_ARRAY(a, int, n);
    int next = 0;
    for (int i = 0; i < n; i++) id[i] = (group[i] == i && size[i] > 1) ? next++ : -1;
    for (int i = 0; i < n; i++) blk->bindings[i]->group = id[group[i]];
}

mt_gmodule *mt_graph_fuse_ops(mt_arena *a, mt_gmodule *m) {
    for (int fi = 0; fi < m->nfuncs; fi++) {
        walk w = {a, {0}, {0}, {0}};
        mt_gfunc_count_uses(a, m->funcs[fi], &w.uses);
        mt_gfunc_bound_values(a, m->funcs[fi], &w.bound_vals, &w.bound);
        mt_gfunc_foreach_bindings(m->funcs[fi], fuse_block, &w);
    }
    return m;
}
