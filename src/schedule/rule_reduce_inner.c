/*
 * rule_reduce_inner.c -- a reduction along the input's contiguous axis
 * written with its reduce loop outside, put in the row rule's form.
 *
 * sum(x.T, axis=0) legalizes to
 *
 *     for i0, i1 in T.grid(N, M):          # i0 reduces, i1 is spatial
 *         lv[v1] = lv[v1] + x[v1, v0]
 *
 * which reads x across rows in the inner loop; it is the row sum of x with
 * the loops swapped. When every load that uses a reduce variable has it as
 * its last index, and only there, the reduce loops are moved inside the
 * spatial ones (reorder, one neighbour swap at a time) so that the row rule
 * (rule_reduce.c) can take the nest. Each output element still sums its
 * terms in the same order. A reduction over an outer axis of its input
 * (sum(x, axis=0)) is left to the column rule (rule_colreduce.c).
 */
#include "schedule/rule_reduce.h"

#include "schedule/block_util.h"
#include "schedule/primitives.h"

typedef struct nest {
    const mt_tstmt *loops[MT_MAX_RANK + 1];
    int n;
    const mt_tstmt *block;
} nest;

static bool perfect_nest(const mt_tstmt *s, nest *n) {
    n->n = 0;
    while (s && s->kind == TS_FOR && n->n < MT_MAX_RANK) {
        n->loops[n->n++] = s;
        s = s->body;
    }
    if (!s || s->kind != TS_BLOCK || !s->init || s->niters != n->n) return false;
    for (int d = 0; d < n->n; d++)
        if (s->iter_values[d]->kind != TE_VAR || s->iter_values[d]->var != n->loops[d]->var) return false;
    n->block = s;
    return true;
}

/* Is v used by one of idx[0..n)? */
static bool uses(mt_texpr *const *idx, int n, const mt_tvar *v) {
    for (int d = 0; d < n; d++)
        if (mt_texpr_uses_var(idx[d], v)) return true;
    return false;
}

/* Every load of the block that uses the reduce variable r has it as its
 * last index and nowhere else; at least one does. */
static bool contiguous_in(mt_arena *a, const nest *n, const mt_tvar *r) {
    mt_blk_exprs loads = mt_blk_loads_in(a, n->block->body, NULL, NULL);
    int hits = 0;
    for (int i = 0; i < loads.len; i++) {
        const mt_texpr *l = loads.data[i];
        if (l->nargs == 0 || !uses(l->args, l->nargs, r)) continue;
        const mt_texpr *last = l->args[l->nargs - 1];
        if (last->kind != TE_VAR || last->var != r || uses(l->args, l->nargs - 1, r)) return false;
        hits++;
    }
    return hits > 0;
}

mt_tfunc *mt_reduce_inner(mt_arena *a, mt_tfunc *f) {
    nest n;
    if (!f->body || !perfect_nest(f->body, &n)) return NULL;
    const mt_titer *it = n.block->iters;
    int nr = 0;
    while (nr < n.n && it[nr].kind == MT_ITER_REDUCE) nr++;
    if (nr != 1 || nr == n.n) return NULL; /* one reduce loop, outermost */
    for (int d = nr; d < n.n; d++)
        if (it[d].kind != MT_ITER_SPATIAL) return NULL;
    if (!contiguous_in(a, &n, it[0].var)) return NULL;
    mt_sched s;
    mt_sched_init(&s, a, f);
    for (int d = 1; d < n.n; d++)
        if (!mt_sched_reorder(&s, n.loops[0]->var, n.loops[d]->var)) return NULL;
    /* the block's iteration variables in the loops' new order too: the
     * row rule reads a block's spatial variables first */
    mt_tstmt *b = mt_ts_copy(a, n.block);
    b->iters = MT_NEW_ARRAY(a, mt_titer, n.n + 1);
    b->iter_values = MT_NEW_ARRAY(a, mt_texpr *, n.n + 1);
    for (int d = 0; d < n.n; d++) {
        int from = d == n.n - 1 ? 0 : d + 1;
        b->iters[d] = n.block->iters[from];
        b->iter_values[d] = n.block->iter_values[from];
    }
    mt_sched_replace(&s, n.block, b);
    return s.func;
}
