/*
 * partition_tails.c -- the last iteration of a loop whose split left a
 * partial tile is peeled off, so that the tile's unrolled and vectorized
 * loops have a constant extent everywhere else.
 *
 *     for i_0 in range(171):                  for i_0 in range(170):
 *         for i_1 in T.unroll(T.min(6,   ->       for i_1 in T.unroll(T.min(6, 1024 - i_0 * 6)):
 *                        1024 - i_0 * 6)):            C[i_0 * 6 + i_1, ..] = ..
 *             C[i_0 * 6 + i_1, ..] = ..           for i_1_1 in T.unroll(T.min(6, 1024 - 170 * 6)):
 *                                                     C[170 * 6 + i_1_1, ..] = ..
 *
 * `split` by a factor that does not divide the extent gives its inner loop
 * the extent `T.min(factor, extent - outer * factor)`, and LLVM unrolls
 * fully only loops of constant extent: a schedule that cut 1024 rows into
 * tiles of 6 and unrolled them (a register tile) got a rolled loop, its
 * accumulators in memory, for every tile, not just the last. A vectorized
 * loop with a clamped extent becomes a loop of `extent // L` vector steps
 * and a scalar loop (the vectorize pass), run-time trip counts around each
 * vector of a tile: 1000 columns in panels of 16 ran at a quarter of the
 * speed of 1008. In the first part the ranges of the loop decide each
 * T.min (the simplify pass that follows folds it to the factor), and in
 * the peeled iteration it is a constant: both get the code of a full tile,
 * the tail its own smaller one. This is the tail half of TVM's
 * LoopPartition.
 *
 * Which loops: on a CPU target, a serial, parallel or unrolled loop with
 * constant min m and extent N >= 2 whose body holds an unrolled loop, or a
 * vectorized loop with c <= MAX_VECTOR, with an extent T.min(c, R) or
 * T.min(R, c), c a constant, R an integer expression of this loop's
 * variable (and constants) that is at least c for every iteration but the
 * last and less than c in the last. Such a loop becomes [m, m + N - 1) and
 * its body with the variable set to m + N - 1, its loop and let variables
 * and its allocations fresh ones. Bodies larger than MAX_NODES statements
 * (the peeled copy doubles them) are left alone. The iterations run in the
 * same order and compute the same; nothing else changes. Runs on the
 * lowered, flattened form before the first simplify.
 */
#include "passes/tir/tir_passes.h"

#include <stdint.h>

#include "support/common.h"
#include "tir/arith.h"

/* MAX_VECTOR: a vectorized loop is peeled for only when its clamp is at
 * most this many elements (a register tile's columns; a parallel chunk of
 * thousands, whose tail the vectorize pass handles at no measurable cost,
 * keeps its last iteration on the threads). */
enum { MAX_NODES = 4096, MAX_VECTOR = 64 };

typedef struct tails {
    mt_arena *a;
    const mt_tvar *var;
    int64_t first, last; /* the loop's first and last iteration */
    int nodes;
    bool found;
} tails;

/* R's range with var in [lo, hi]. */
static mt_range range_with(tails *t, const mt_texpr *r, int64_t lo, int64_t hi) {
    mt_bounds b = {0};
    mt_bounds_push(t->a, &b, t->var, (mt_range){lo, hi});
    return mt_bounds_of(&b, r);
}

/* Extent min(c, R) or min(R, c) that is c before the last iteration and
 * less than c in it (c at most `most`)? */
static bool tail_extent(tails *t, const mt_texpr *e, int64_t most) {
    int64_t c;
    const mt_texpr *r;
    if (e->lanes != 1 || !mt_dtype_is_int(e->dtype) || !mt_arith_min_const(e, &c, &r)) return false;
    if (c > most || !mt_texpr_uses_var(r, t->var)) return false;
    mt_range before = range_with(t, r, t->first, t->last - 1);
    mt_range at_last = range_with(t, r, t->last, t->last);
    return before.lo >= c && at_last.hi < c;
}

static void find_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    tails *t = v->ctx;
    t->nodes++;
    if (s->kind == TS_FOR && !t->found &&
        ((s->for_kind == MT_FOR_UNROLLED && tail_extent(t, s->extent, INT64_MAX)) ||
         (s->for_kind == MT_FOR_VECTORIZED && tail_extent(t, s->extent, MAX_VECTOR))))
        t->found = true;
    if (t->nodes <= MAX_NODES) mt_tvisit_stmt_children(v, s);
}

/* Statements hold the extents: no need to walk expressions. */
static void skip_expr(mt_tvisitor *v, const mt_texpr *e) {
    (void)v;
    (void)e;
}

static mt_texpr *keep_expr(mt_tmutator *m, mt_texpr *e) {
    (void)m;
    return e;
}

/* The peeled copy binds variables and allocates buffers of its own (each
 * is bound once in a function: the printed text must parse back to the
 * same function). */
static mt_tstmt *fresh_stmt(mt_tmutator *m, mt_tstmt *s) {
    if (s->kind == TS_ALLOC) {
        const mt_tbuffer *b = s->buf;
        mt_tbuffer *nb = mt_tbuffer_new(m->arena, b->name, b->dtype, b->ndim, b->shape);
        nb->scope = b->scope;
        mt_tstmt *r = mt_ts_copy(m->arena, s);
        r->buf = nb;
        r->body = mt_tmutate_stmt(m, mt_tsubst_buffer_stmt(m->arena, s->body, b, nb));
        return r;
    }
    if (s->kind != TS_FOR && s->kind != TS_LET) return mt_tmutate_stmt_children(m, s);
    mt_tvar *nv = mt_tvar_new(m->arena, s->var->name, s->var->dtype);
    mt_texpr *use = mt_te_var(m->arena, nv);
    mt_tstmt *r = mt_ts_copy(m->arena, s);
    r->var = nv;
    r->body = mt_tmutate_stmt(m, mt_tsubst_stmt(m->arena, s->body, &s->var, &use, 1));
    return r;
}

/* e's value when it is a constant, folded or not (T.min(4, 7 - 1 * 4) in
 * a peeled copy, before simplify). */
static bool const_value(const mt_texpr *e, int64_t *v) {
    if (mt_te_is_const_int(e, v)) return true;
    if (e->lanes != 1 || !mt_dtype_is_int(e->dtype)) return false;
    mt_bounds b = {0};
    mt_range r = mt_bounds_of(&b, e);
    if (r.lo != r.hi || r.lo == INT64_MIN || r.lo == INT64_MAX) return false;
    *v = r.lo;
    return true;
}

/* Loop l with its last iteration peeled, or NULL when it has no such tail. */
static mt_tstmt *peel(mt_arena *a, const mt_tstmt *l) {
    int64_t m, n;
    if (l->for_kind != MT_FOR_SERIAL && l->for_kind != MT_FOR_PARALLEL &&
        l->for_kind != MT_FOR_UNROLLED)
        return NULL;
    if (!const_value(l->min, &m) || !const_value(l->extent, &n) || n < 2 ||
        __builtin_add_overflow(m, n - 1, &n))
        return NULL;
    tails t = {a, l->var, m, n, 0, false};
    mt_tvisitor v = {skip_expr, find_stmt, &t};
    mt_tvisit_stmt(&v, l->body);
    if (!t.found || t.nodes > MAX_NODES) return NULL;
    mt_tvar *var = l->var;
    mt_texpr *at = mt_te_int(a, var->dtype, t.last);
    mt_tmutator fresh = {a, keep_expr, fresh_stmt, NULL};
    mt_tstmt *parts[2] = {
        mt_ts_at(mt_ts_for(a, var, l->min, mt_te_int(a, l->extent->dtype, t.last - m), l->for_kind,
                           l->body),
                 l->loc),
        mt_tmutate_stmt(&fresh, mt_tsubst_stmt(a, l->body, &var, &at, 1))};
    return mt_ts_at(mt_ts_seq(a, parts, 2), l->loc);
}

/* Inner loops first: a tile split twice is peeled at both levels. */
static mt_tstmt *peel_stmt(mt_tmutator *m, mt_tstmt *s) {
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    if (r->kind != TS_FOR) return r;
    mt_tstmt *p = peel(m->arena, r);
    if (!p) return r;
    /* the peeled iteration's own tails (a tile's last column block in its
     * last row block): its loops' extents are constants now */
    p->stmts[1] = mt_tmutate_stmt(m, p->stmts[1]);
    return p;
}

mt_tfunc *mt_tir_partition_tails(mt_arena *a, mt_tfunc *f) {
    if (!f->body || mt_tfunc_target(f)->kind != MT_TARGET_CPU) return f;
    mt_tmutator m = {a, keep_expr, peel_stmt, NULL};
    mt_tstmt *body = mt_tmutate_stmt(&m, f->body);
    return body == f->body ? f : mt_tfunc_with_body(a, f, body);
}
