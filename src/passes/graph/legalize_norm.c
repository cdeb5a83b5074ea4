/*
 * legalize_norm.c -- loop functions of softmax, log_softmax and layer_norm.
 *
 * Each is one loop function of several loop nests, each around one block,
 * talking through intermediate buffers (function allocs). Every nest walks
 * x's dims in x's order, the normalized dims as reduce variables in the
 * reducing blocks.
 *
 * softmax(x, axis) -- numerically stable: exp never sees a positive argument.
 *   m = max over the axis            block "softmax_max"  (init -inf)
 *   s = sum over the axis exp(x - m) block "softmax_sum"  (init 0)
 *   out = exp(x - m) / s             block "softmax_norm" (spatial)
 * log_softmax has the same two reductions and `out = (x - m) - log(s)`.
 * m has x's dims without the axis and x's dtype (a max is exact); s and the
 * arithmetic are float32 for float16 x (codegen computes float16 in float32
 * anyway; s is stored in float32 so that the sum is not rounded to half at
 * every step), else x's dtype. The max uses T.max (maxnum, which skips NaN);
 * a NaN in a row still makes its sum, and so the whole row, NaN, as in
 * PyTorch. A row of all -inf gives NaN (PyTorch does the same). exp is
 * computed twice per element (sum and output) rather than stored: no second
 * full-size buffer.
 *
 * layer_norm(x, gamma, beta, eps) over the trailing r = gamma.ndim dims of x,
 * with the statistics in float32 (float64 for float64 x), two-pass variance
 * (biased, as PyTorch), blocks:
 *   s = sum x                        "layer_norm_sum"  (reduce, init 0)
 *   s = s / n                        "layer_norm_mean" (in place: the mean)
 *   q = sum (x - s)^2                "layer_norm_var"  (reduce, init 0)
 *   q = 1 / sqrt(q / n + eps)        "layer_norm_rstd" (in place)
 *   out = (x - s) * q * gamma + beta "layer_norm_out"
 * where n is the number of normalized elements. The in-place steps keep the
 * statistics out of inline_producers' reach (a buffer written twice is not a
 * producer), so sqrt and the divisions run once per row, not per element.
 * Multiplying by 1/sqrt instead of dividing costs one extra rounding.
 *
 * Empty axes: softmax over an empty axis and layer_norm over empty trailing
 * dims have empty outputs; the statistics they would read are never read.
 */
#include <math.h>
#include <string.h>

#include "passes/graph/graph_passes.h"
#include "support/common.h"

/* A nest over the first n of the extents (dims with red[d] are reduce
 * variables); v receives the block variables. */
static void nest_over(mt_nest *ns, mt_arena *a, mt_texpr *const *ext, int n, const bool *red,
                      mt_texpr **v) {
    mt_nest_init(ns, a);
    for (int k = 0; k < n; k++)
        v[k] = mt_nest_axis(ns, ext[k], red && red[k] ? MT_ITER_REDUCE : MT_ITER_SPATIAL);
}

/* The nest around a block storing value to buf[idx] (with init when given). */
static mt_tstmt *build(mt_nest *ns, const char *name, mt_tbuffer *buf, mt_texpr *const *idx,
                       mt_texpr *init, mt_texpr *value) {
    mt_arena *a = ns->a;
    mt_nest_write(ns, buf, idx);
    return mt_nest_build(ns, name, init ? mt_ts_store(a, buf, idx, buf->ndim, init) : NULL,
                         mt_ts_store(a, buf, idx, buf->ndim, value));
}

static mt_texpr *call1(mt_arena *a, mt_intrin fn, mt_texpr *x) { return mt_te_call(a, fn, &x, 1); }

/* ---- softmax, log_softmax ---------------------------------------------------- */

static mt_tfunc *legalize_softmax_like(mt_arena *a, const mt_gbinding *b, bool log) {
    mt_legalize_ctx c;
    mt_legalize_begin(&c, a, b);
    const char *op = b->op->name;
    mt_tbuffer *x = c.in[0], *out = c.out[0];
    int nd = x->ndim;
    int64_t ax0 = b->attrs && b->attrs->naxes ? b->attrs->axes[0] : -1;
    int ax = (int)(ax0 < 0 ? ax0 + nd : ax0);
    mt_dtype dt = x->dtype, adt = mt_dtype_is_half(dt) ? MT_FLOAT32 : dt;

    /* m and s: x's dims without the axis */
    mt_texpr *rshape[MT_MAX_RANK];
    int nr = 0;
    for (int d = 0; d < nd; d++)
        if (d != ax) rshape[nr++] = x->shape[d];
    mt_tbuffer *m = mt_legalize_alloc(&c, "m", dt, rshape, nr);
    mt_tbuffer *s = mt_legalize_alloc(&c, "s", adt, rshape, nr);
    bool red[MT_MAX_RANK] = {0};
    red[ax] = true;

    mt_tstmt *stmts[3];
    mt_nest ns;
    mt_texpr *v[MT_MAX_RANK];
    mt_texpr *ridx[MT_MAX_RANK];

    nest_over(&ns, a, x->shape, nd, red, v);
    for (int d = 0, k = 0; d < nd; d++)
        if (d != ax) ridx[k++] = v[d];
    mt_texpr *xv = mt_nest_load(&ns, x, v);
    stmts[0] = build(&ns, mt_arena_printf(a, "%s_max", op), m, ridx, mt_te_float(a, dt, -INFINITY),
                     mt_te_bin(a, TE_MAX, mt_te_load(a, m, ridx, nr), xv));

    nest_over(&ns, a, x->shape, nd, red, v);
    for (int d = 0, k = 0; d < nd; d++)
        if (d != ax) ridx[k++] = v[d];
    xv = mt_te_cast(a, adt, mt_nest_load(&ns, x, v));
    mt_texpr *sh = mt_te_bin(a, TE_SUB, xv, mt_te_cast(a, adt, mt_nest_load(&ns, m, ridx)));
    stmts[1] = build(&ns, mt_arena_printf(a, "%s_sum", op), s, ridx, mt_te_float(a, adt, 0.0),
                     mt_te_bin(a, TE_ADD, mt_te_load(a, s, ridx, nr), call1(a, IN_EXP, sh)));

    nest_over(&ns, a, x->shape, nd, NULL, v);
    for (int d = 0, k = 0; d < nd; d++)
        if (d != ax) ridx[k++] = v[d];
    xv = mt_te_cast(a, adt, mt_nest_load(&ns, x, v));
    sh = mt_te_bin(a, TE_SUB, xv, mt_te_cast(a, adt, mt_nest_load(&ns, m, ridx)));
    mt_texpr *sv = mt_nest_load(&ns, s, ridx);
    mt_texpr *val = log ? mt_te_bin(a, TE_SUB, sh, call1(a, IN_LOG, sv))
                        : mt_te_bin(a, TE_DIV, call1(a, IN_EXP, sh), sv);
    stmts[2] = build(&ns, mt_arena_printf(a, "%s_norm", op), out, v, NULL, mt_te_cast(a, dt, val));

    c.f->body = mt_ts_seq(a, stmts, 3);
    return c.f;
}

mt_tfunc *legalize_softmax(mt_arena *a, const mt_gbinding *b) { return legalize_softmax_like(a, b, false); }
mt_tfunc *legalize_log_softmax(mt_arena *a, const mt_gbinding *b) { return legalize_softmax_like(a, b, true); }

/* ---- layer_norm ------------------------------------------------------------- */

mt_tfunc *legalize_layer_norm(mt_arena *a, const mt_gbinding *b) {
    mt_legalize_ctx c;
    mt_legalize_begin(&c, a, b);
    mt_tbuffer *x = c.in[0], *g = c.in[1], *be = c.in[2], *out = c.out[0];
    int nd = x->ndim, r = g->ndim, no = nd - r; /* outer dims, then r normalized ones */
    mt_dtype dt = x->dtype, adt = dt == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32;
    double eps = b->attrs && b->attrs->has_value ? b->attrs->value : 1e-5;

    mt_tbuffer *s = mt_legalize_alloc(&c, "mean", adt, x->shape, no);
    mt_tbuffer *q = mt_legalize_alloc(&c, "rstd", adt, x->shape, no);
    bool red[MT_MAX_RANK] = {0};
    for (int d = no; d < nd; d++) red[d] = true;

    /* n: the number of normalized elements, as adt */
    int64_t kc = 1, dimv;
    mt_texpr *nsym = NULL;
    for (int d = no; d < nd; d++) {
        if (mt_te_is_const_int(x->shape[d], &dimv))
            kc *= dimv;
        else
            nsym = nsym ? mt_te_bin(a, TE_MUL, nsym, x->shape[d]) : x->shape[d];
    }
    mt_texpr *n = nsym ? mt_te_cast(a, adt, kc == 1 ? nsym : mt_te_bin(a, TE_MUL, nsym, mt_te_i64(a, kc)))
                       : mt_te_float(a, adt, (double)kc);
    mt_texpr *zero = mt_te_float(a, adt, 0.0);

    mt_tstmt *stmts[5];
    mt_nest ns;
    mt_texpr *v[MT_MAX_RANK];

    nest_over(&ns, a, x->shape, nd, red, v);
    mt_texpr *xv = mt_te_cast(a, adt, mt_nest_load(&ns, x, v));
    stmts[0] = build(&ns, "layer_norm_sum", s, v, zero,
                     mt_te_bin(a, TE_ADD, mt_te_load(a, s, v, no), xv));

    nest_over(&ns, a, x->shape, no, NULL, v);
    stmts[1] = build(&ns, "layer_norm_mean", s, v, NULL, mt_te_bin(a, TE_DIV, mt_nest_load(&ns, s, v), n));

    nest_over(&ns, a, x->shape, nd, red, v);
    xv = mt_te_cast(a, adt, mt_nest_load(&ns, x, v));
    mt_texpr *dv = mt_te_bin(a, TE_SUB, xv, mt_nest_load(&ns, s, v));
    stmts[2] = build(&ns, "layer_norm_var", q, v, zero,
                     mt_te_bin(a, TE_ADD, mt_te_load(a, q, v, no), mt_te_bin(a, TE_MUL, dv, dv)));

    nest_over(&ns, a, x->shape, no, NULL, v);
    mt_texpr *var = mt_te_bin(a, TE_DIV, mt_nest_load(&ns, q, v), n);
    mt_texpr *sd = call1(a, IN_SQRT, mt_te_bin(a, TE_ADD, var, mt_te_float(a, adt, eps)));
    stmts[3] = build(&ns, "layer_norm_rstd", q, v, NULL, mt_te_bin(a, TE_DIV, mt_te_float(a, adt, 1.0), sd));

    nest_over(&ns, a, x->shape, nd, NULL, v);
    xv = mt_te_cast(a, adt, mt_nest_load(&ns, x, v));
    mt_texpr *mv = mt_nest_load(&ns, s, v), *rv = mt_nest_load(&ns, q, v);
    mt_texpr *norm = mt_te_bin(a, TE_MUL, mt_te_bin(a, TE_SUB, xv, mv), rv);
    mt_texpr *gv = mt_te_cast(a, adt, mt_nest_load(&ns, g, v + no));
    mt_texpr *bv = mt_te_cast(a, adt, mt_nest_load(&ns, be, v + no));
    mt_texpr *val = mt_te_bin(a, TE_ADD, mt_te_bin(a, TE_MUL, norm, gv), bv);
    stmts[4] = build(&ns, "layer_norm_out", out, v, NULL, mt_te_cast(a, dt, val));

    c.f->body = mt_ts_seq(a, stmts, 5);
    return c.f;
}
