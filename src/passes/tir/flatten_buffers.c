/*
 * flatten_buffers.c -- every buffer becomes one-dimensional.
 *
 * Codegen addresses memory with one offset per access, so this pass turns an
 * n-d buffer of shape (d0, ..., dn-1) into a 1-d buffer of extent
 * d0 * ... * dn-1 and every access b[i0, ..., in-1] into the row-major
 * b[i0 * s0 + ... + in-1], with strides s_k = d(k+1) * ... * d(n-1):
 *
 *     out[v0, v1] = a[v0, v1]    (2, 3)      ==>  out[v0 * 3 + v1] = a[v0 * 3 + v1]
 *     x[v0, v1]                  ("n", 784)  ==>  x[v0 * 784 + v1]     extent n * 784
 *     s[()]                      ()          ==>  s[0]                 extent 1
 *
 * Products and sums are folded as they are built (mt_arith_mul/add:
 * constants multiplied, factors of 1 and terms of 0 dropped), so constant shapes give constant
 * strides and extents without running simplify; symbolic dims give
 * expressions (`v0 * (3 * n)`). Indices are cast to int64 when they are not.
 *
 * Each old buffer maps to exactly one new buffer (same name, dtype, scope),
 * looked up in a small table built on first sight: params, f->allocs and
 * TS_ALLOC buffers all go through it, so a param and every access to it agree.
 * Buffers that are already 1-D are kept (and their accesses untouched).
 *
 * Assumes the lowered form: a TS_BLOCK is an internal error (its regions would
 * need flattening too, and nothing runs this pass before lower_blocks).
 */
#include "passes/tir/tir_passes.h"
#include "tir/arith.h"

typedef struct flat_ent {
    mt_tbuffer *old;     /* the n-d buffer */
    mt_tbuffer *flat;    /* its 1-d replacement */
    mt_texpr **strides;  /* old->ndim row-major strides (int64 exprs) */
} flat_ent;

typedef struct flat_ctx {
    MT_VEC(flat_ent) map;
} flat_ctx;

static mt_texpr *as_i64(mt_arena *a, mt_texpr *e) { return mt_te_cast(a, MT_INT64, e); }

/* The entry for b, made on first sight; NULL when b is already 1-d. */
static flat_ent *entry(mt_arena *a, flat_ctx *fc, mt_tbuffer *b) {
    if (b->ndim == 1) return NULL;
    for (int i = 0; i < fc->map.len; i++)
        if (fc->map.data[i].old == b) return &fc->map.data[i];
    flat_ent e;
    e.old = b;
    e.strides = MT_NEW_ARRAY(a, mt_texpr *, b->ndim > 0 ? b->ndim : 1);
    mt_texpr *extent = mt_te_i64(a, 1);
    for (int k = 0; k < b->ndim; k++) extent = mt_arith_mul(a, extent, as_i64(a, b->shape[k]));
    for (int k = b->ndim - 1; k >= 0; k--)
        e.strides[k] = k == b->ndim - 1 ? mt_te_i64(a, 1)
                                         : mt_arith_mul(a, as_i64(a, b->shape[k + 1]), e.strides[k + 1]);
    e.flat = mt_tbuffer_new(a, b->name, b->dtype, 1, &extent);
    e.flat->scope = b->scope;
    MT_VEC_PUSH(a, &fc->map, e);
    return &fc->map.data[fc->map.len - 1];
}

static mt_texpr *linear(mt_arena *a, const flat_ent *e, mt_texpr *const *idx, int n) {
    if (n != e->old->ndim)
        mt_ice("access to '%s' has %d indices for %d dims", e->old->name, n, e->old->ndim);
    mt_texpr *sum = mt_te_i64(a, 0);
    for (int k = 0; k < n; k++) sum = mt_arith_add(a, sum, mt_arith_mul(a, as_i64(a, idx[k]), e->strides[k]));
    return sum;
}

/* The index of an access to a buffer that is 1-d already, as int64. */
static mt_texpr *wide_index(mt_arena *a, mt_texpr *const *idx, int n) {
    return n == 1 && idx[0]->dtype != MT_INT64 ? as_i64(a, idx[0]) : NULL;
}

static mt_texpr *flat_expr(mt_tmutator *m, mt_texpr *e) {
    mt_texpr *r = mt_tmutate_expr_children(m, e);
    if (r->kind != TE_LOAD) return r;
    flat_ent *ent = entry(m->arena, m->ctx, r->buf);
    mt_texpr *w = ent ? NULL : wide_index(m->arena, r->args, r->nargs);
    if (w) {
        mt_texpr *c = mt_te_load(m->arena, r->buf, &w, 1);
        c->loc = r->loc;
        return c;
    }
    if (!ent) return r;
    mt_texpr *i = linear(m->arena, ent, r->args, r->nargs);
    return mt_te_load(m->arena, ent->flat, &i, 1);
}

static mt_tstmt *flat_stmt(mt_tmutator *m, mt_tstmt *s) {
    if (s->kind == TS_BLOCK)
        mt_ice("flatten_buffers: block '%s' left (run lower_blocks first)", s->name);
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    if (r->kind != TS_STORE && r->kind != TS_ALLOC) return r;
    flat_ent *ent = entry(m->arena, m->ctx, r->buf);
    mt_texpr *w = ent || r->kind != TS_STORE ? NULL : wide_index(m->arena, r->idx, r->nidx);
    if (w) return mt_ts_at(mt_ts_store(m->arena, r->buf, &w, 1, r->value), r->loc);
    if (!ent) return r;
    if (r->kind == TS_ALLOC) return mt_ts_alloc(m->arena, ent->flat, r->body);
    mt_texpr *i = linear(m->arena, ent, r->idx, r->nidx);
    return mt_ts_store(m->arena, ent->flat, &i, 1, r->value);
}

mt_tfunc *mt_tir_flatten_buffers(mt_arena *a, mt_tfunc *f) {
    flat_ctx fc = {{0}};
    bool changed = false;
    mt_tparam *params = MT_NEW_ARRAY(a, mt_tparam, f->nparams > 0 ? f->nparams : 1);
    for (int i = 0; i < f->nparams; i++) {
        params[i] = f->params[i];
        flat_ent *e = params[i].buf ? entry(a, &fc, params[i].buf) : NULL;
        if (e) {
            params[i].buf = e->flat;
            changed = true;
        }
    }
    mt_tbuffer **allocs = MT_NEW_ARRAY(a, mt_tbuffer *, f->nallocs > 0 ? f->nallocs : 1);
    for (int i = 0; i < f->nallocs; i++) {
        flat_ent *e = entry(a, &fc, f->allocs[i]);
        allocs[i] = e ? e->flat : f->allocs[i];
        changed |= e != NULL;
    }
    mt_tmutator m = {a, flat_expr, flat_stmt, &fc};
    mt_tstmt *body = f->body ? mt_tmutate_stmt(&m, f->body) : NULL;
    if (!changed && body == f->body) return f;
    mt_tfunc *g = MT_NEW(a, mt_tfunc);
    *g = *f;
    g->params = params;
    g->allocs = allocs;
    g->body = body;
    return g;
}
