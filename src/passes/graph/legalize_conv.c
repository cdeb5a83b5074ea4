/*
 * legalize_conv.c -- loop functions of conv2d, max_pool2d, avg_pool2d and
 * adaptive_avg_pool2d (NCHW; shape rules in graph/infer_conv.c).
 *
 * conv2d is one block: spatial n, o, oh, ow, reduce c, kh, kw, init 0,
 *
 *     out[n, o, oh, ow] += x[n, g(o) + c, ih, iw] * w[o, c, kh, kw]
 *     ih = oh * sh + kh * dh - ph,  iw = ow * sw + kw * dw - pw
 *
 * with g(o) = o // (O / groups) * (C / groups), the first input channel of
 * o's group (left out when groups == 1). Loops are nested n, o, oh, c, kh,
 * kw, ow: the innermost walks a row of the input and of the output (as
 * matmul's i, k, j). Zero padding reads the input at clamped indices and
 * selects 0 outside it (a select evaluates both arms, so the load must stay
 * in bounds):
 *
 *     T.Select(0 <= ih and ih < H, x[n, c, T.min(T.max(ih, 0), H - 1), iw], 0.0)
 *
 * only for an axis with padding (without, every index is in range by the
 * output size rule). The CPU rule (schedule/rule_conv.c) matches exactly
 * this form.
 *
 * max_pool2d is the same nest without c and w, init -inf, folding with
 * NumPy's max (NaN propagates, as legalize_reduce.c); padding selects
 * -inf. avg_pool2d sums (padding selects 0) and a second block
 * `avg_pool2d_div` divides by kh * kw in place: padded elements count, as
 * PyTorch's count_include_pad=True (its default). adaptive_avg_pool2d
 * gives output cell i the rows floor(i * H / OH) .. ceil((i + 1) * H / OH)
 * (PyTorch's bins, which may overlap): the reduce loops run over the widest
 * bin and, when bins differ in size, select 0 past a cell's own; the
 * division by the cell's element count is a second block.
 */
#include <math.h>

#include "passes/graph/graph_passes.h"
#include "support/common.h"
#include "tir/arith.h"

static mt_texpr *I(mt_arena *a, int64_t v) { return mt_te_i64(a, v); }

/* o * s + k * d - p, folded. */
static mt_texpr *window_index(mt_arena *a, mt_texpr *o, mt_texpr *k, int64_t s, int64_t d, int64_t p) {
    mt_texpr *e = mt_arith_add(a, mt_arith_mul(a, o, I(a, s)), mt_arith_mul(a, k, I(a, d)));
    return p ? mt_arith_sub(a, e, I(a, p)) : e;
}

static int64_t dim_of(const mt_tbuffer *b, int d) {
    int64_t v = 0;
    if (!mt_te_is_const_int(b->shape[d], &v)) mt_ice("a window dimension is not a constant");
    return v;
}

/* A window read: x[n, ch, ih, iw], with the out-of-range test `*inb` (NULL
 * when none is needed) and clamped indices on the padded axes. */
typedef struct window {
    mt_texpr *idx[4];
    mt_texpr *inb;
} window;

static window window_at(mt_arena *a, const mt_tbuffer *x, mt_texpr *n, mt_texpr *ch, mt_texpr *const *pos,
                        const int64_t *pad) {
    window w = {{n, ch, pos[0], pos[1]}, NULL};
    for (int d = 0; d < 2; d++) {
        if (!pad[d]) continue;
        int64_t size = dim_of(x, 2 + d);
        mt_texpr *in = mt_te_bin(a, TE_AND, mt_te_bin(a, TE_LE, I(a, 0), pos[d]),
                                 mt_te_bin(a, TE_LT, pos[d], I(a, size)));
        w.inb = w.inb ? mt_te_bin(a, TE_AND, w.inb, in) : in;
        w.idx[2 + d] = mt_te_bin(a, TE_MIN, mt_te_bin(a, TE_MAX, pos[d], I(a, 0)), I(a, size - 1));
    }
    return w;
}

/* The element of the window, or `fill` outside the input. */
static mt_texpr *window_load(mt_nest *ns, mt_tbuffer *x, const window *w, mt_texpr *fill) {
    mt_texpr *v = mt_nest_load(ns, x, w->idx);
    return w->inb ? mt_te_select(ns->a, w->inb, v, fill) : v;
}

static mt_tstmt *reduce_block(mt_nest *ns, const char *name, mt_tbuffer *out, mt_texpr *const *oidx,
                              mt_texpr *init, mt_texpr *value) {
    mt_arena *a = ns->a;
    mt_nest_write(ns, out, oidx);
    return mt_nest_build(ns, name, mt_ts_store(a, out, oidx, 4, init), mt_ts_store(a, out, oidx, 4, value));
}

/* out[n, c, i, j] = out[...] / den(i, j) over the output: the average. */
static mt_tstmt *divide(mt_arena *a, const char *name, mt_tbuffer *out, mt_texpr *(*den)(mt_arena *, mt_texpr *const *, void *),
                        void *ctx) {
    mt_nest ns;
    mt_nest_init(&ns, a);
    mt_texpr *v[4];
    for (int d = 0; d < 4; d++) v[d] = mt_nest_axis(&ns, out->shape[d], MT_ITER_SPATIAL);
    mt_texpr *cur = mt_nest_load(&ns, out, v);
    mt_nest_write(&ns, out, v);
    mt_texpr *val = mt_te_bin(a, TE_DIV, cur, mt_te_cast(a, out->dtype, den(a, v, ctx)));
    return mt_nest_build(&ns, name, NULL, mt_ts_store(a, out, v, 4, val));
}

/* ---- conv2d ------------------------------------------------------------------ */

mt_tfunc *legalize_conv2d(mt_arena *a, const mt_gbinding *b) {
    mt_legalize_ctx c;
    mt_legalize_begin(&c, a, b);
    const mt_gattrs *at = b->attrs;
    mt_tbuffer *x = c.in[0], *w = c.in[1], *out = c.out[0];
    int64_t cpg = dim_of(w, 1), opg = dim_of(out, 1) / at->groups;
    mt_nest ns;
    mt_nest_init(&ns, a);
    mt_texpr *n = mt_nest_axis(&ns, out->shape[0], MT_ITER_SPATIAL);
    mt_texpr *o = mt_nest_axis(&ns, out->shape[1], MT_ITER_SPATIAL);
    mt_texpr *oh = mt_nest_axis(&ns, out->shape[2], MT_ITER_SPATIAL);
    mt_texpr *ch = mt_nest_axis(&ns, w->shape[1], MT_ITER_REDUCE);
    mt_texpr *kh = mt_nest_axis(&ns, w->shape[2], MT_ITER_REDUCE);
    mt_texpr *kw = mt_nest_axis(&ns, w->shape[3], MT_ITER_REDUCE);
    mt_texpr *ow = mt_nest_axis(&ns, out->shape[3], MT_ITER_SPATIAL);
    mt_texpr *xc = ch;
    if (at->groups > 1)
        xc = mt_arith_add(a, mt_arith_mul(a, mt_arith_bin(a, TE_FLOORDIV, o, I(a, opg)), I(a, cpg)), ch);
    mt_texpr *pos[2] = {window_index(a, oh, kh, at->stride[0], at->dilation[0], at->padding[0]),
                        window_index(a, ow, kw, at->stride[1], at->dilation[1], at->padding[1])};
    window win = window_at(a, x, n, xc, pos, at->padding);
    mt_texpr *xv = window_load(&ns, x, &win, mt_te_float(a, x->dtype, 0.0));
    mt_texpr *widx[4] = {o, ch, kh, kw};
    mt_texpr *wv = mt_nest_load(&ns, w, widx);
    mt_texpr *oidx[4] = {n, o, oh, ow};
    mt_texpr *sum = mt_te_bin(a, TE_ADD, mt_te_load(a, out, oidx, 4), mt_te_bin(a, TE_MUL, xv, wv));
    c.f->body = reduce_block(&ns, "conv2d", out, oidx, mt_te_float(a, out->dtype, 0.0), sum);
    return c.f;
}

/* ---- max_pool2d, avg_pool2d ---------------------------------------------------- */

/* The pooling nest n, c, oh, kh, kw, ow over out; the window's element (or
 * fill outside the input) in *xv. */
static void pool_nest(mt_nest *ns, const mt_gattrs *at, mt_tbuffer *x, mt_tbuffer *out, mt_texpr *fill,
                      mt_texpr **oidx, mt_texpr **xv) {
    mt_arena *a = ns->a;
    const int64_t *s = at->stride[0] || at->stride[1] ? at->stride : at->size;
    mt_texpr *n = mt_nest_axis(ns, out->shape[0], MT_ITER_SPATIAL);
    mt_texpr *ch = mt_nest_axis(ns, out->shape[1], MT_ITER_SPATIAL);
    mt_texpr *oh = mt_nest_axis(ns, out->shape[2], MT_ITER_SPATIAL);
    mt_texpr *kh = mt_nest_axis(ns, I(a, at->size[0]), MT_ITER_REDUCE);
    mt_texpr *kw = mt_nest_axis(ns, I(a, at->size[1]), MT_ITER_REDUCE);
    mt_texpr *ow = mt_nest_axis(ns, out->shape[3], MT_ITER_SPATIAL);
    mt_texpr *pos[2] = {window_index(a, oh, kh, s[0], 1, at->padding[0]),
                        window_index(a, ow, kw, s[1], 1, at->padding[1])};
    window win = window_at(a, x, n, ch, pos, at->padding);
    *xv = window_load(ns, x, &win, fill);
    oidx[0] = n, oidx[1] = ch, oidx[2] = oh, oidx[3] = ow;
}

mt_tfunc *legalize_max_pool2d(mt_arena *a, const mt_gbinding *b) {
    mt_legalize_ctx c;
    mt_legalize_begin(&c, a, b);
    mt_tbuffer *out = c.out[0];
    mt_texpr *ninf = mt_te_float(a, out->dtype, -INFINITY), *oidx[4], *xv;
    mt_nest ns;
    mt_nest_init(&ns, a);
    pool_nest(&ns, b->attrs, c.in[0], out, ninf, oidx, &xv);
    mt_texpr *acc = mt_te_load(a, out, oidx, 4);
    mt_texpr *take = mt_te_bin(a, TE_OR, mt_te_bin(a, TE_GT, xv, acc), mt_te_bin(a, TE_NE, xv, xv));
    c.f->body = reduce_block(&ns, "max_pool2d", out, oidx, ninf, mt_te_select(a, take, xv, acc));
    return c.f;
}

static mt_texpr *window_count(mt_arena *a, mt_texpr *const *v, void *ctx) {
    (void)v;
    const int64_t *size = ctx;
    return I(a, size[0] * size[1]);
}

mt_tfunc *legalize_avg_pool2d(mt_arena *a, const mt_gbinding *b) {
    mt_legalize_ctx c;
    mt_legalize_begin(&c, a, b);
    mt_tbuffer *out = c.out[0];
    mt_texpr *zero = mt_te_float(a, out->dtype, 0.0), *oidx[4], *xv;
    mt_nest ns;
    mt_nest_init(&ns, a);
    pool_nest(&ns, b->attrs, c.in[0], out, zero, oidx, &xv);
    mt_texpr *sum = mt_te_bin(a, TE_ADD, mt_te_load(a, out, oidx, 4), xv);
    mt_tstmt *st[2] = {reduce_block(&ns, "avg_pool2d", out, oidx, zero, sum),
                       divide(a, "avg_pool2d_div", out, window_count, (void *)b->attrs->size)};
    c.f->body = mt_ts_seq(a, st, 2);
    return c.f;
}

/* ---- adaptive_avg_pool2d ---------------------------------------------------------- */

/* The bins of output cell i along an axis of n in m cells: rows
 * floor(i * n / m) .. ceil((i + 1) * n / m). */
static mt_texpr *bin_start(mt_arena *a, mt_texpr *i, int64_t n, int64_t m) {
    return mt_arith_bin(a, TE_FLOORDIV, mt_arith_mul(a, i, I(a, n)), I(a, m));
}

static mt_texpr *bin_size(mt_arena *a, mt_texpr *i, int64_t n, int64_t m) {
    mt_texpr *end = mt_arith_bin(a, TE_FLOORDIV, mt_arith_add(a, mt_arith_mul(a, i, I(a, n)), I(a, n + m - 1)),
                                 I(a, m));
    return mt_arith_sub(a, end, bin_start(a, i, n, m));
}

static int64_t widest_bin(int64_t n, int64_t m, bool *uniform) {
    int64_t widest = 0, first = -1;
    *uniform = true;
    for (int64_t i = 0; i < m; i++) {
        int64_t s = i * n / m, e = ((i + 1) * n + m - 1) / m;
        if (first < 0) first = e - s;
        if (e - s != first) *uniform = false;
        if (e - s > widest) widest = e - s;
    }
    return widest;
}

typedef struct bins {
    int64_t n[2], m[2];
} bins;

static mt_texpr *bin_count(mt_arena *a, mt_texpr *const *v, void *ctx) {
    const bins *bn = ctx;
    return mt_arith_mul(a, bin_size(a, v[2], bn->n[0], bn->m[0]), bin_size(a, v[3], bn->n[1], bn->m[1]));
}

mt_tfunc *legalize_adaptive_avg_pool2d(mt_arena *a, const mt_gbinding *b) {
    mt_legalize_ctx c;
    mt_legalize_begin(&c, a, b);
    mt_tbuffer *x = c.in[0], *out = c.out[0];
    bins *bn = MT_NEW(a, bins);
    int64_t wide[2];
    bool uniform[2];
    for (int d = 0; d < 2; d++) {
        bn->n[d] = dim_of(x, 2 + d);
        bn->m[d] = dim_of(out, 2 + d);
        wide[d] = widest_bin(bn->n[d], bn->m[d], &uniform[d]);
    }
    mt_nest ns;
    mt_nest_init(&ns, a);
    mt_texpr *n = mt_nest_axis(&ns, out->shape[0], MT_ITER_SPATIAL);
    mt_texpr *ch = mt_nest_axis(&ns, out->shape[1], MT_ITER_SPATIAL);
    mt_texpr *i = mt_nest_axis(&ns, out->shape[2], MT_ITER_SPATIAL);
    mt_texpr *kh = mt_nest_axis(&ns, I(a, wide[0]), MT_ITER_REDUCE);
    mt_texpr *kw = mt_nest_axis(&ns, I(a, wide[1]), MT_ITER_REDUCE);
    mt_texpr *j = mt_nest_axis(&ns, out->shape[3], MT_ITER_SPATIAL);
    mt_texpr *cell[2] = {i, j}, *k[2] = {kh, kw}, *idx[4] = {n, ch, NULL, NULL}, *inb = NULL;
    for (int d = 0; d < 2; d++) {
        mt_texpr *pos = mt_arith_add(a, bin_start(a, cell[d], bn->n[d], bn->m[d]), k[d]);
        idx[2 + d] = pos;
        if (uniform[d]) continue;
        mt_texpr *in = mt_te_bin(a, TE_LT, k[d], bin_size(a, cell[d], bn->n[d], bn->m[d]));
        inb = inb ? mt_te_bin(a, TE_AND, inb, in) : in;
        idx[2 + d] = mt_te_bin(a, TE_MIN, pos, I(a, bn->n[d] - 1));
    }
    mt_texpr *zero = mt_te_float(a, out->dtype, 0.0);
    mt_texpr *xv = mt_nest_load(&ns, x, idx);
    if (inb) xv = mt_te_select(a, inb, xv, zero);
    mt_texpr *oidx[4] = {n, ch, i, j};
    mt_texpr *sum = mt_te_bin(a, TE_ADD, mt_te_load(a, out, oidx, 4), xv);
    mt_tstmt *st[2] = {reduce_block(&ns, "adaptive_avg_pool2d", out, oidx, zero, sum),
                       divide(a, "adaptive_avg_pool2d_div", out, bin_count, bn)};
    c.f->body = mt_ts_seq(a, st, 2);
    return c.f;
}
