/*
 * lowered.c -- index arithmetic and flattening for rules that emit the
 * lowered form directly (see lowered.h).
 *
 * flatten_buffers would turn a[i, T.Ramp(j, 1, 16)] into
 * i * N + T.Ramp(j, 1, 16), which codegen scalarizes; here the ramp takes
 * the whole offset, T.Ramp(i * N + j, 1, 16), one vector access.
 *
 * The scalar folding is tir/arith.h's; this file adds the ramp rules,
 * `(x + c1) + c2 -> x + (c1 + c2)` and `x - c` as `x + (-c)`.
 */
#include "schedule/lowered.h"

#include <string.h>

mt_texpr *mt_lw_i(mt_lw *c, int64_t v) { return mt_te_i64(c->a, v); }

mt_texpr *mt_lw_add(mt_lw *c, mt_texpr *x, mt_texpr *y) {
    mt_arena *a = c->a;
    if (x->kind == TE_RAMP && y->lanes == 1) return mt_te_ramp(a, mt_lw_add(c, x->a, y), x->b, x->lanes);
    if (y->kind == TE_RAMP && x->lanes == 1) return mt_te_ramp(a, mt_lw_add(c, x, y->a), y->b, y->lanes);
    if (x->kind == TE_RAMP && y->kind == TE_RAMP && x->lanes == y->lanes)
        return mt_te_ramp(a, mt_lw_add(c, x->a, y->a), mt_lw_add(c, x->b, y->b), x->lanes);
    mt_texpr *r = mt_arith_fold(a, TE_ADD, x, y);
    int64_t cy, c1;
    if (r) return r;
    if (mt_te_is_const_int(y, &cy) && x->kind == TE_ADD && mt_te_is_const_int(x->b, &c1))
        return mt_lw_add(c, x->a, mt_lw_i(c, c1 + cy));
    return mt_te_bin(a, TE_ADD, x, y);
}

mt_texpr *mt_lw_mul(mt_lw *c, mt_texpr *x, mt_texpr *y) {
    mt_arena *a = c->a;
    if (x->kind == TE_RAMP && y->lanes == 1)
        return mt_te_ramp(a, mt_lw_mul(c, x->a, y), mt_lw_mul(c, x->b, y), x->lanes);
    if (y->kind == TE_RAMP && x->lanes == 1) return mt_lw_mul(c, y, x);
    return mt_arith_mul(a, x, y);
}

mt_texpr *mt_lw_sub(mt_lw *c, mt_texpr *x, mt_texpr *y) {
    int64_t cy;
    if (mt_te_is_const_int(y, &cy)) return mt_lw_add(c, x, mt_lw_i(c, -cy));
    if (x->kind == TE_RAMP && y->lanes == 1) return mt_te_ramp(c->a, mt_lw_sub(c, x->a, y), x->b, x->lanes);
    if (y->kind == TE_RAMP && x->lanes == 1)
        return mt_te_ramp(c->a, mt_lw_sub(c, x, y->a), mt_lw_mul(c, y->b, mt_lw_i(c, -1)), y->lanes);
    if (mt_texpr_equal(x, y)) return mt_lw_i(c, 0);
    return mt_te_bin(c->a, TE_SUB, x, y);
}

mt_texpr *mt_lw_norm(mt_lw *c, mt_texpr *e) {
    if (e->lanes == 1) return e;
    switch (e->kind) {
    case TE_ADD: return mt_lw_add(c, mt_lw_norm(c, e->a), mt_lw_norm(c, e->b));
    case TE_SUB: return mt_lw_sub(c, mt_lw_norm(c, e->a), mt_lw_norm(c, e->b));
    case TE_MUL: return mt_lw_mul(c, mt_lw_norm(c, e->a), mt_lw_norm(c, e->b));
    default: return e;
    }
}

mt_texpr *mt_lw_ramp(mt_lw *c, mt_texpr *base, int lanes) {
    return lanes == 1 ? base : mt_te_ramp(c->a, base, mt_lw_i(c, 1), lanes);
}

mt_lw_fbuf *mt_lw_flat(mt_lw *c, mt_tbuffer *b) {
    for (int i = 0; i < c->fb.len; i++)
        if (c->fb.data[i].old == b) return &c->fb.data[i];
    mt_lw_fbuf e;
    memset(&e, 0, sizeof e);
    e.old = b;
    if (b->ndim == 1) {
        e.flat = b;
        e.stride[0] = mt_lw_i(c, 1);
    } else {
        mt_texpr *extent = mt_lw_i(c, 1);
        for (int k = 0; k < b->ndim; k++) extent = mt_lw_mul(c, extent, mt_te_cast(c->a, MT_INT64, b->shape[k]));
        for (int k = b->ndim - 1; k >= 0; k--)
            e.stride[k] = k == b->ndim - 1
                              ? mt_lw_i(c, 1)
                              : mt_lw_mul(c, mt_te_cast(c->a, MT_INT64, b->shape[k + 1]), e.stride[k + 1]);
        e.flat = mt_tbuffer_new(c->a, b->name, b->dtype, 1, &extent);
        e.flat->scope = b->scope;
    }
    MT_VEC_PUSH(c->a, &c->fb, e);
    return &c->fb.data[c->fb.len - 1];
}

mt_texpr *mt_lw_index(mt_lw *c, mt_tbuffer *b, mt_texpr *const *idx, int n) {
    mt_lw_fbuf *e = mt_lw_flat(c, b);
    mt_texpr *sum = mt_lw_i(c, 0);
    for (int k = 0; k < n; k++)
        sum = mt_lw_add(c, sum, mt_lw_mul(c, mt_lw_norm(c, mt_te_cast(c->a, MT_INT64, idx[k])), e->stride[k]));
    return sum;
}

mt_texpr *mt_lw_load(mt_lw *c, mt_tbuffer *b, mt_texpr *const *idx, int n) {
    mt_texpr *i = mt_lw_index(c, b, idx, n);
    return mt_te_load(c->a, mt_lw_flat(c, b)->flat, &i, 1);
}

mt_tstmt *mt_lw_store(mt_lw *c, mt_tbuffer *b, mt_texpr *const *idx, int n, mt_texpr *v) {
    mt_texpr *i = mt_lw_index(c, b, idx, n);
    return mt_ts_store(c->a, mt_lw_flat(c, b)->flat, &i, 1, v);
}
