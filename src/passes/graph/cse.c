/*
 * cse.c -- common subexpression elimination over op bindings.
 *
 * Two bindings in one dataflow block that apply the same op to the same
 * arguments (the same values, or equal constants) with equal attributes
 * compute the same value, since ops are pure: the later one's uses are
 * redirected to the earlier one (dead_code then removes it). `exp(x) +
 * exp(x)` computes exp once. Blocks are independent: a value from a branch
 * is not reused outside it. Candidates are found through a hash of the op
 * and the arguments, so the pass is linear in the bindings, not quadratic.
 */
#include <stdint.h>
#include <string.h>

#include "passes/graph/graph_passes.h"
#include "support/common.h"

typedef struct cse_ctx {
    mt_arena *arena;
    mt_gfunc *func;
    mt_gsubst subst; /* later binding's value -> the equal earlier one */
} cse_ctx;

static bool same_arg(const mt_gvar *x, const mt_gvar *y) {
    if (x == y) return true;
    if (!x->is_const || !y->is_const || x->type.dtype != y->type.dtype || x->weak != y->weak) return false;
    return x->iconst == y->iconst && (x->fconst == y->fconst || (x->fconst != x->fconst && y->fconst != y->fconst));
}

static bool same_call(const mt_gbinding *x, const mt_gbinding *y) {
    if (x->kind != MT_CALL_OP || y->kind != MT_CALL_OP || x->op != y->op || x->nargs != y->nargs ||
        x->nouts != 1 || y->nouts != 1 || !mt_device_equal(x->device, y->device))
        return false;
    for (int i = 0; i < x->nargs; i++)
        if (!same_arg(x->args[i], y->args[i])) return false;
    return mt_gattrs_equal(x->attrs, y->attrs);
}

/* A hash of what same_call compares, but the attributes: equal calls hash
 * alike (constants by value, 0.0 and -0.0 alike, every NaN alike). */
static uint64_t call_hash(const mt_gbinding *b) {
    uint64_t h = (uint64_t)(uintptr_t)b->op * 0x9e3779b97f4a7c15ull + (uint64_t)b->nargs;
    for (int i = 0; i < b->nargs; i++) {
        const mt_gvar *x = b->args[i];
        uint64_t v = (uint64_t)(uintptr_t)x;
        if (x->is_const) {
            double f = x->fconst != x->fconst ? 0.5 : x->fconst == 0 ? 0.0 : x->fconst;
            uint64_t bits;
            memcpy(&bits, &f, sizeof bits);
            v = (uint64_t)x->iconst * 31 + bits * 17 + (uint64_t)x->type.dtype * 7 + (uint64_t)x->weak;
        }
        h = (h ^ v) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

/* Each binding is compared only with the earlier ones of equal hash, in
 * order, so the first equal one wins as in a pairwise scan, in linear
 * expected time. A binding's args are brought up to date with the
 * replacements found so far before it is hashed (uses come after their
 * definition in program order); the rest of the function is rewritten once
 * at the end. */
static void cse_block(mt_gblock *blk, void *ctx) {
    cse_ctx *c = ctx;
    mt_gfunc *f = c->func;
    int n = blk->nbindings, cap = 64;
    while (cap < 2 * n) cap *= 2;
    uint64_t *hashes = MT_NEW_ARRAY(c->arena, uint64_t, n > 0 ? n : 1);
    int *slot_first = MT_NEW_ARRAY(c->arena, int, cap); /* index + 1 of the first of a hash */
    int *next = MT_NEW_ARRAY(c->arena, int, n > 0 ? n : 1), *tail = MT_NEW_ARRAY(c->arena, int, cap);
    for (int i = 0; i < n; i++) {
        mt_gbinding *b = blk->bindings[i];
        mt_gsubst_binding(&c->subst, b);
        if (b->kind != MT_CALL_OP || b->nouts != 1) continue;
        uint64_t h = hashes[i] = call_hash(b);
        size_t s = (size_t)h & (size_t)(cap - 1);
        while (slot_first[s] && hashes[slot_first[s] - 1] != h) s = (s + 1) & (size_t)(cap - 1);
        for (int j = slot_first[s] - 1; j >= 0; j = next[j] - 1)
            if (same_call(blk->bindings[j], b)) {
                bool returned = false;
                for (int o = 0; o < f->noutputs; o++) returned |= f->outputs[o] == b->outs[0];
                if (!returned) mt_gsubst_add(c->arena, &c->subst, b->outs[0], blk->bindings[j]->outs[0]);
                break;
            }
        if (!slot_first[s])
            slot_first[s] = i + 1;
        else
            next[tail[s] - 1] = i + 1;
        tail[s] = i + 1;
    }
}

mt_gmodule *mt_graph_cse(mt_arena *a, mt_gmodule *m) {
    for (int fi = 0; fi < m->nfuncs; fi++) {
        cse_ctx c = {a, m->funcs[fi], {{0}}};
        mt_gfunc_foreach_bindings(m->funcs[fi], cse_block, &c);
        mt_gfunc_apply_subst(m->funcs[fi], &c.subst);
    }
    return m;
}
