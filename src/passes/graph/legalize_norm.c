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

enum { MAX_LOOPS = MT_MAX_RANK, MAX_REGIONS = 6 };

/* One loop nest over x's dims (or a prefix of them) around one block. */
typedef struct nest {
    mt_arena *a;
    int n;
    mt_tvar *loop[MAX_LOOPS];
    mt_titer iter[MAX_LOOPS];
    mt_texpr *v[MAX_LOOPS];
    mt_tregion reads[MAX_REGIONS];
    int nreads;
} nest;

/* Loops over the first n of the extents; dims with red[d] are reduce vars. */
static void nest_init(nest *ns, mt_arena *a, mt_texpr *const *ext, int n, const bool *red) {
    memset(ns, 0, sizeof *ns);
    ns->a = a;
    ns->n = n;
    for (int k = 0; k < n; k++) {
        ns->loop[k] = mt_tvar_new(a, mt_arena_printf(a, "i%d", k), MT_INT64);
        ns->iter[k].var = mt_tvar_new(a, mt_arena_printf(a, "v%d", k), MT_INT64);
        ns->iter[k].extent = ext[k];
        ns->iter[k].kind = red && red[k] ? MT_ITER_REDUCE : MT_ITER_SPATIAL;
        ns->v[k] = mt_te_var(a, ns->iter[k].var);
    }
}

/* buf[idx], recorded as read (once per buffer). */
static mt_texpr *rd(nest *ns, mt_tbuffer *buf, mt_texpr *const *idx) {
    bool seen = false;
    for (int i = 0; i < ns->nreads; i++) seen |= ns->reads[i].buf == buf;
    if (!seen) {
        if (ns->nreads == MAX_REGIONS) mt_ice("too many read regions");
        ns->reads[ns->nreads++] = mt_point_region(ns->a, buf, idx);
    }
    return mt_te_load(ns->a, buf, idx, buf->ndim);
}

/* The nest around a block storing value to buf[idx] (with init when given). */
static mt_tstmt *build(nest *ns, const char *name, mt_tbuffer *buf, mt_texpr *const *idx,
                       mt_texpr *init, mt_texpr *value) {
    mt_arena *a = ns->a;
    mt_tstmt *blk = mt_ts_block(a, name);
    int n = ns->n;
    blk->niters = n;
    blk->iters = MT_NEW_ARRAY(a, mt_titer, n > 0 ? n : 1);
    blk->iter_values = MT_NEW_ARRAY(a, mt_texpr *, n > 0 ? n : 1);
    for (int k = 0; k < n; k++) {
        blk->iters[k] = ns->iter[k];
        blk->iter_values[k] = mt_te_var(a, ns->loop[k]);
    }
    blk->reads = MT_NEW_ARRAY(a, mt_tregion, ns->nreads > 0 ? ns->nreads : 1);
    memcpy(blk->reads, ns->reads, sizeof(mt_tregion) * (size_t)ns->nreads);
    blk->nreads = ns->nreads;
    blk->writes = MT_NEW(a, mt_tregion);
    blk->writes[0] = mt_point_region(a, buf, idx);
    blk->nwrites = 1;
    blk->init = init ? mt_ts_store(a, buf, idx, buf->ndim, init) : NULL;
    blk->body = mt_ts_store(a, buf, idx, buf->ndim, value);
    mt_tstmt *s = blk;
    for (int k = n - 1; k >= 0; k--)
        s = mt_ts_for(a, ns->loop[k], mt_te_i64(a, 0), ns->iter[k].extent, MT_FOR_SERIAL, s);
    return s;
}

static mt_tbuffer *alloc(mt_legalize_ctx *c, const char *name, mt_dtype dt, mt_texpr *const *shape,
                         int ndim) {
    mt_tfunc *f = c->f;
    mt_tbuffer *b = mt_tbuffer_new(c->arena, name, dt, ndim, shape);
    mt_tbuffer **na = MT_NEW_ARRAY(c->arena, mt_tbuffer *, f->nallocs + 1);
    if (f->nallocs) memcpy(na, f->allocs, sizeof(mt_tbuffer *) * (size_t)f->nallocs);
    na[f->nallocs++] = b;
    f->allocs = na;
    return b;
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
    mt_dtype dt = x->dtype, adt = dt == MT_FLOAT16 ? MT_FLOAT32 : dt;

    /* m and s: x's dims without the axis */
    mt_texpr *rshape[MT_MAX_RANK];
    int nr = 0;
    for (int d = 0; d < nd; d++)
        if (d != ax) rshape[nr++] = x->shape[d];
    mt_tbuffer *m = alloc(&c, "m", dt, rshape, nr);
    mt_tbuffer *s = alloc(&c, "s", adt, rshape, nr);
    bool red[MT_MAX_RANK] = {0};
    red[ax] = true;

    mt_tstmt *stmts[3];
    nest ns;
    mt_texpr *ridx[MT_MAX_RANK];

    nest_init(&ns, a, x->shape, nd, red);
    for (int d = 0, k = 0; d < nd; d++)
        if (d != ax) ridx[k++] = ns.v[d];
    mt_texpr *xv = rd(&ns, x, ns.v);
    stmts[0] = build(&ns, mt_arena_printf(a, "%s_max", op), m, ridx, mt_te_float(a, dt, -INFINITY),
                     mt_te_bin(a, TE_MAX, mt_te_load(a, m, ridx, nr), xv));

    nest_init(&ns, a, x->shape, nd, red);
    for (int d = 0, k = 0; d < nd; d++)
        if (d != ax) ridx[k++] = ns.v[d];
    xv = mt_te_cast(a, adt, rd(&ns, x, ns.v));
    mt_texpr *sh = mt_te_bin(a, TE_SUB, xv, mt_te_cast(a, adt, rd(&ns, m, ridx)));
    stmts[1] = build(&ns, mt_arena_printf(a, "%s_sum", op), s, ridx, mt_te_float(a, adt, 0.0),
                     mt_te_bin(a, TE_ADD, mt_te_load(a, s, ridx, nr), call1(a, IN_EXP, sh)));

    nest_init(&ns, a, x->shape, nd, NULL);
    for (int d = 0, k = 0; d < nd; d++)
        if (d != ax) ridx[k++] = ns.v[d];
    xv = mt_te_cast(a, adt, rd(&ns, x, ns.v));
    sh = mt_te_bin(a, TE_SUB, xv, mt_te_cast(a, adt, rd(&ns, m, ridx)));
    mt_texpr *sv = rd(&ns, s, ridx);
    mt_texpr *val = log ? mt_te_bin(a, TE_SUB, sh, call1(a, IN_LOG, sv))
                        : mt_te_bin(a, TE_DIV, call1(a, IN_EXP, sh), sv);
    stmts[2] = build(&ns, mt_arena_printf(a, "%s_norm", op), out, ns.v, NULL, mt_te_cast(a, dt, val));

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

    mt_tbuffer *s = alloc(&c, "mean", adt, x->shape, no);
    mt_tbuffer *q = alloc(&c, "rstd", adt, x->shape, no);
    bool red[MT_MAX_RANK] = {0};
    for (int d = no; d < nd; d++) red[d] = true;

    /* n: the number of normalized elements, as adt */
    int64_t kc = 1, v;
    mt_texpr *nsym = NULL;
    for (int d = no; d < nd; d++) {
        if (mt_te_is_const_int(x->shape[d], &v))
            kc *= v;
        else
            nsym = nsym ? mt_te_bin(a, TE_MUL, nsym, x->shape[d]) : x->shape[d];
    }
    mt_texpr *n = nsym ? mt_te_cast(a, adt, kc == 1 ? nsym : mt_te_bin(a, TE_MUL, nsym, mt_te_i64(a, kc)))
                       : mt_te_float(a, adt, (double)kc);
    mt_texpr *zero = mt_te_float(a, adt, 0.0);

    mt_tstmt *stmts[5];
    nest ns;

    nest_init(&ns, a, x->shape, nd, red);
    mt_texpr *xv = mt_te_cast(a, adt, rd(&ns, x, ns.v));
    stmts[0] = build(&ns, "layer_norm_sum", s, ns.v, zero,
                     mt_te_bin(a, TE_ADD, mt_te_load(a, s, ns.v, no), xv));

    nest_init(&ns, a, x->shape, no, NULL);
    stmts[1] = build(&ns, "layer_norm_mean", s, ns.v, NULL, mt_te_bin(a, TE_DIV, rd(&ns, s, ns.v), n));

    nest_init(&ns, a, x->shape, nd, red);
    xv = mt_te_cast(a, adt, rd(&ns, x, ns.v));
    mt_texpr *dv = mt_te_bin(a, TE_SUB, xv, rd(&ns, s, ns.v));
    stmts[2] = build(&ns, "layer_norm_var", q, ns.v, zero,
                     mt_te_bin(a, TE_ADD, mt_te_load(a, q, ns.v, no), mt_te_bin(a, TE_MUL, dv, dv)));

    nest_init(&ns, a, x->shape, no, NULL);
    mt_texpr *var = mt_te_bin(a, TE_DIV, rd(&ns, q, ns.v), n);
    mt_texpr *sd = call1(a, IN_SQRT, mt_te_bin(a, TE_ADD, var, mt_te_float(a, adt, eps)));
    stmts[3] = build(&ns, "layer_norm_rstd", q, ns.v, NULL, mt_te_bin(a, TE_DIV, mt_te_float(a, adt, 1.0), sd));

    nest_init(&ns, a, x->shape, nd, NULL);
    xv = mt_te_cast(a, adt, rd(&ns, x, ns.v));
    mt_texpr *mv = rd(&ns, s, ns.v), *rv = rd(&ns, q, ns.v);
    mt_texpr *norm = mt_te_bin(a, TE_MUL, mt_te_bin(a, TE_SUB, xv, mv), rv);
    mt_texpr *gv = mt_te_cast(a, adt, rd(&ns, g, ns.v + no));
    mt_texpr *bv = mt_te_cast(a, adt, rd(&ns, be, ns.v + no));
    mt_texpr *val = mt_te_bin(a, TE_ADD, mt_te_bin(a, TE_MUL, norm, gv), bv);
    stmts[4] = build(&ns, "layer_norm_out", out, ns.v, NULL, mt_te_cast(a, dt, val));

    c.f->body = mt_ts_seq(a, stmts, 5);
    return c.f;
}
