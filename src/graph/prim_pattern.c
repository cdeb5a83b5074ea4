/*
 * prim_pattern.c -- the op pattern of a loop function of the source, so
 * that fusion can take it (builder_internal.h, mt_prim_func_pattern).
 *
 * TVM derives a PrimFunc's pattern from its TIR; we do for the one shape
 * that fuses safely and needs no bounds check: a perfect nest of loops from
 * 0 around one block (no predicate, no allocation) whose body is one store
 * `out[v0, ..., vk] = value` to the function's one output, indexed by
 * exactly its spatial iteration variables in order over dims equal to their
 * extents, each iteration variable bound to its own loop of the same
 * extent. Then, by the loads of value:
 *
 *   elemwise   every load reads a buffer of out's shape at [v0, ..., vk];
 *   broadcast  every load reads, at a subsequence of [v0, ..., vk] in order,
 *              a buffer whose dims equal those variables' extents;
 *   reduction  the block has reduce variables and an init storing to the
 *              same element, and every load (of the value and the init)
 *              reads each dim at one iteration variable of that dim's extent
 *              (or, for out, at the store's index).
 *
 * Every such access is in bounds by construction. Anything else is opaque
 * (never fused).
 */
#include "graph/builder_internal.h"

#include <string.h>

/* The block at the bottom of a perfect nest of loops from 0, each loop
 * binding one iteration variable of the same extent; NULL otherwise. */
static const mt_tstmt *nest_block(const mt_tstmt *s) {
    const mt_tstmt *loops[16];
    int n = 0;
    while (s && s->kind == TS_FOR && n < 16) {
        int64_t m;
        if (s->for_kind != MT_FOR_SERIAL || !mt_te_is_const_int(s->min, &m) || m != 0) return NULL;
        loops[n++] = s;
        s = s->body;
    }
    if (!s || s->kind != TS_BLOCK || s->predicate || s->nallocs || s->niters != n) return NULL;
    for (int i = 0; i < n; i++) {
        const mt_texpr *v = s->iter_values[i];
        if (v->kind != TE_VAR || v->var != loops[i]->var) return NULL;
        if (!mt_texpr_equal(s->iters[i].extent, loops[i]->extent)) return NULL;
    }
    return s;
}

typedef struct scan {
    const mt_tstmt *block;
    const mt_tbuffer *out;
    bool reduce;
    bool in_init;                      /* scanning the init, which must not read out */
    bool elemwise, broadcast, bounded; /* what every load so far allows */
} scan;

/* The iteration variable e is, or -1. */
static int iter_of(const mt_tstmt *b, const mt_texpr *e) {
    if (e->kind != TE_VAR) return -1;
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].var == e->var) return i;
    return -1;
}

static void check_load(scan *sc, const mt_texpr *e) {
    const mt_tstmt *b = sc->block;
    int last = -1, nsp = 0;
    bool same = true, subseq = true;
    for (int i = 0; i < b->niters; i++) nsp += b->iters[i].kind == MT_ITER_SPATIAL;
    for (int d = 0; d < e->nargs; d++) {
        int it = iter_of(b, e->args[d]);
        if (it < 0 || !mt_texpr_equal(e->buf->shape[d], b->iters[it].extent)) {
            sc->elemwise = sc->broadcast = sc->bounded = false;
            return;
        }
        bool spatial = b->iters[it].kind == MT_ITER_SPATIAL;
        same = same && spatial && it == d;
        subseq = subseq && spatial && it > last;
        last = it;
    }
    if (e->buf == sc->out) { /* only a reduction's accumulator, at the store's index */
        if (!(sc->reduce && !sc->in_init && same && e->nargs == nsp)) sc->bounded = false;
        return;
    }
    sc->elemwise = sc->elemwise && same && e->nargs == nsp;
    sc->broadcast = sc->broadcast && subseq;
}

static void load_expr(mt_tvisitor *v, const mt_texpr *e) {
    if (e->kind == TE_LOAD) check_load(v->ctx, e);
    mt_tvisit_expr_children(v, e);
}

static void no_stmt(mt_tvisitor *v, const mt_tstmt *s) { mt_tvisit_stmt_children(v, s); }

/* store writes out at exactly the spatial iteration variables, in order. */
static bool output_store(const mt_tstmt *b, const mt_tstmt *st, const mt_tbuffer *out) {
    if (!st || st->kind != TS_STORE || st->buf != out || st->nidx != out->ndim) return false;
    int d = 0;
    for (int i = 0; i < b->niters; i++) {
        if (b->iters[i].kind != MT_ITER_SPATIAL) continue;
        if (d >= st->nidx || iter_of(b, st->idx[d]) != i || !mt_texpr_equal(out->shape[d], b->iters[i].extent))
            return false;
        d++;
    }
    return d == st->nidx;
}

mt_op_pattern mt_prim_func_pattern(const mt_tfunc *f) {
    if (f->nallocs || f->num_outputs != 1 || f->nparams < 1) return MT_PAT_OPAQUE;
    const mt_tbuffer *out = f->params[f->nparams - 1].buf;
    const mt_tstmt *b = out ? nest_block(f->body) : NULL;
    if (!b || !output_store(b, b->body, out)) return MT_PAT_OPAQUE;
    bool reduce = false;
    for (int i = 0; i < b->niters; i++) reduce = reduce || b->iters[i].kind == MT_ITER_REDUCE;
    if (reduce != (b->init != NULL) || (b->init && !output_store(b, b->init, out))) return MT_PAT_OPAQUE;
    scan sc = {b, out, reduce, false, true, true, true};
    mt_tvisitor v = {load_expr, no_stmt, &sc};
    mt_tvisit_expr(&v, b->body->value);
    sc.in_init = true;
    if (b->init) mt_tvisit_expr(&v, b->init->value);
    if (!sc.bounded) return MT_PAT_OPAQUE;
    if (reduce) return MT_PAT_REDUCTION;
    return sc.elemwise ? MT_PAT_ELEMWISE : sc.broadcast ? MT_PAT_BROADCAST : MT_PAT_OPAQUE;
}
