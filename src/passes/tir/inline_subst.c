/*
 * inline_subst.c -- replace loads of defined buffers by their definitions
 * (see inline_subst.h). Used by passes/tir/inline_producers.c and the
 * compute_inline schedule primitive (schedule/primitives_block.c).
 */
#include "passes/tir/inline_subst.h"

#include "tir/arith.h"

typedef struct var_find {
    mt_tvar *const *vars;
    int n;
    bool found;
} var_find;

static void find_hook(mt_tvisitor *v, const mt_texpr *e) {
    var_find *f = v->ctx;
    if (e->kind == TE_VAR)
        for (int i = 0; i < f->n; i++)
            if (f->vars[i] == e->var) f->found = true;
    mt_tvisit_expr_children(v, e);
}

static bool uses_any(const mt_texpr *e, mt_tvar *const *vars, int n) {
    var_find f = {vars, n, false};
    mt_tvisitor v = {find_hook, NULL, &f};
    mt_tvisit_expr(&v, e);
    return f.found;
}

typedef struct defs_ctx {
    const mt_inline_def *defs;
    int n;
} defs_ctx;

const mt_inline_def *mt_inline_find(const mt_inline_def *defs, int n, const mt_tbuffer *b) {
    for (int i = 0; i < n; i++)
        if (defs[i].buf == b) return &defs[i];
    return NULL;
}

static bool region_equal(const mt_tregion *x, const mt_tregion *y) {
    if (x->buf != y->buf) return false;
    for (int d = 0; d < x->buf->ndim; d++)
        if (!mt_texpr_equal(x->min[d], y->min[d]) || !mt_texpr_equal(x->extent[d], y->extent[d]))
            return false;
    return true;
}

/* Producer read region r seen from a consumer region c of the producer's
 * buffer. */
static mt_tregion map_region(mt_arena *a, const mt_inline_def *p, const mt_tregion *r,
                             const mt_tregion *c) {
    int nd = r->buf->ndim;
    mt_tregion out = {r->buf, MT_NEW_ARRAY(a, mt_texpr *, nd > 0 ? nd : 1),
                      MT_NEW_ARRAY(a, mt_texpr *, nd > 0 ? nd : 1)};
    bool points = true;
    for (int k = 0; k < p->nvars; k++) points = points && mt_arith_is_const(c->extent[k], 1);
    for (int d = 0; d < nd; d++) {
        mt_texpr *m = r->min[d], *e = r->extent[d];
        int k = -1;
        if (m->kind == TE_VAR && mt_arith_is_const(e, 1))
            for (int j = 0; j < p->nvars; j++)
                if (p->vars[j] == m->var) k = j;
        if (k >= 0) {
            out.min[d] = c->min[k];
            out.extent[d] = c->extent[k];
        } else if (!uses_any(m, p->vars, p->nvars) && !uses_any(e, p->vars, p->nvars)) {
            out.min[d] = m;
            out.extent[d] = e;
        } else if (points) {
            out.min[d] = mt_tsubst_expr(a, m, p->vars, c->min, p->nvars);
            out.extent[d] = mt_tsubst_expr(a, e, p->vars, c->min, p->nvars);
        } else {
            out.min[d] = mt_te_i64(a, 0);
            out.extent[d] = r->buf->shape[d];
        }
    }
    return out;
}

typedef MT_VEC(mt_tregion) regionvec;

static void push_region(mt_arena *a, regionvec *v, mt_tregion r) {
    for (int i = 0; i < v->len; i++)
        if (region_equal(&v->data[i], &r)) return;
    MT_VEC_PUSH(a, v, r);
}

/* The block's reads with regions of inlined buffers replaced; NULL when none
 * named an inlined buffer. */
static regionvec *fix_reads(mt_arena *a, const defs_ctx *c, const mt_tstmt *blk) {
    bool any = false;
    for (int i = 0; i < blk->nreads; i++) any = any || mt_inline_find(c->defs, c->n, blk->reads[i].buf);
    if (!any) return NULL;
    regionvec *out = MT_NEW(a, regionvec);
    for (int i = 0; i < blk->nreads; i++) {
        const mt_tregion *r = &blk->reads[i];
        const mt_inline_def *p = mt_inline_find(c->defs, c->n, r->buf);
        if (!p) {
            push_region(a, out, *r);
            continue;
        }
        for (int j = 0; j < p->nreads; j++) push_region(a, out, map_region(a, p, &p->reads[j], r));
    }
    return out;
}

static mt_texpr *inl_expr(mt_tmutator *m, mt_texpr *e) {
    mt_texpr *r = mt_tmutate_expr_children(m, e);
    if (r->kind != TE_LOAD) return r;
    const defs_ctx *c = m->ctx;
    const mt_inline_def *p = mt_inline_find(c->defs, c->n, r->buf);
    if (!p) return r;
    if (r->nargs != p->nvars) mt_ice("load of '%s' has %d indices", r->buf->name, r->nargs);
    return mt_tsubst_expr(m->arena, p->value, p->vars, r->args, p->nvars);
}

static mt_tstmt *inl_stmt(mt_tmutator *m, mt_tstmt *s) {
    const mt_texpr *x = s->kind == TS_EVAL ? mt_te_prefetched(s->value) : NULL;
    const defs_ctx *d = m->ctx; /* a prefetch of a buffer that goes: nothing to prefetch */
    if (x && mt_inline_find(d->defs, d->n, x->buf)) return mt_ts_seq(m->arena, NULL, 0); /* (its loads: reads) */
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    if (r->kind != TS_BLOCK) return r;
    regionvec *reads = fix_reads(m->arena, m->ctx, r);
    if (!reads) return r;
    mt_tstmt *c = r == s ? mt_ts_copy(m->arena, r) : r;
    c->reads = reads->data;
    c->nreads = reads->len;
    return c;
}

mt_tstmt *mt_inline_apply(mt_arena *a, const mt_inline_def *defs, int n, mt_tstmt *s) {
    if (n == 0 || !s) return s;
    defs_ctx c = {defs, n};
    mt_tmutator m = {a, inl_expr, inl_stmt, &c};
    return mt_tmutate_stmt(&m, s);
}
