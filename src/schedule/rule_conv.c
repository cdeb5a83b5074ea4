/*
 * rule_conv.c -- the CPU schedule of conv2d (NCHW, OIHW) and its
 * elementwise epilogue: a direct convolution with register tiles over
 * output channels x output width.
 *
 * What it matches. A loop function (block form, after inline_producers)
 * that is exactly the conv2d nest of legalize_conv.c followed by zero or
 * more elementwise epilogue nests (bias, relu, a residual: what matmul's
 * rule takes, matmul_common.c):
 *
 *     for n, o, oh, c, kh, kw, ow:    C[n, o, oh, ow] += X * w[o, c, kh, kw]    (init 0)
 *     X = x[n, g(o) + c, oh * sh + kh * dh - ph, ow * sw + kw * dw - pw]
 *
 * x and w parameters of C's float dtype (float32/float64) with constant
 * dims (the batch may be symbolic); g(o) = o // (O / G) * (C / G) the first
 * channel of o's group; on a padded axis the load is clamped and selected
 * with the in-bounds test (legalize_conv.c's form, checked term by term: the
 * index's linear form gives stride, dilation and padding, the clamp must be
 * to [0, size - 1] and the select's condition exactly the two bounds of each
 * guarded axis, its other arm 0).
 *
 * The algorithm. The output is computed row by row: one work item is an
 * output row (n, oh) (a chunk of one, below), and items run in parallel.
 * Within a row, tiles of MR output channels x NR = 2 vectors of output
 * columns live in MR * 2 vector registers (6 x 16 float32 with AVX2, 8 x 32
 * with AVX-512: the matmul rule's tile, read from the target). For each
 * input channel c of the group and each (kh, kw) the tile loads 2 vectors
 * of the input row at its 2 * vl columns, broadcasts MR weights
 * w[o0 + ii, c, kh, kw] (one base address, constant offsets) and does
 * 2 * MR fused multiply-adds: the weights are the "A" of a matmul, the
 * input row the "B", C * KH * KW its depth. Tiles never cross a group
 * (the input vectors are shared by the tile's rows); a group of fewer
 * than MR channels (depthwise) takes tiles of that height.
 *
 *  - Pointwise layers (1x1, no padding, one group, any stride) are not
 *    direct convolutions here: per image they are the matmul
 *    C[n] (O x OH*OW) = w (O x C) @ x[n] (C x OH*OW), and go to the
 *    matmul rule (gen_pointwise below). Every buffer whose last two dims
 *    are the output plane (x with a stride of 1, C, the epilogue outputs,
 *    a residual) is seen through a view with one dim of OH * OW there:
 *    the same memory in the same order, so the flat buffers the matmul
 *    rule emits are the function's own. The epilogues are rewritten over
 *    the merged index j (a viewed buffer read at [.., oh, ow] is read at
 *    [.., j]; any other oh, ow is j // OW, j % OW), and a strided x is
 *    read at [n, c, j // OW * sh, j % OW * sw], which the matmul rule's
 *    packing of B gathers. The matmul rule then packs B (the input) in
 *    blocks, and with a small A (the weights within a quarter of L2) runs
 *    one parallel loop over (image, 64-column block), each item packing
 *    its own block (rule_matmul.c, gen_wide). Why here and not by
 *    legalizing conv2d into reshape + matmul in the graph layer: the fused
 *    epilogue (bias (O, 1, 1), relu, a residual (N, O, OH, OW)) indexes
 *    the 4-d output, so the graph rewrite would have to reshape every
 *    operand of the epilogue too or the fusion breaks, and the GPU rules
 *    and goldens would see a different graph; the views are ~130 lines in
 *    this rule, CPU only (the graph rewrite was not built, so not
 *    measured: both would end in the same matmul schedule). Measured against the direct path this replaced
 *    (chunks of 64 columns, input copied per 16-column block: xcol, still
 *    used by grouped pointwise layers): ResNet's 1x1 256 -> 64 at 56 x 56,
 *    one thread, 0.72-0.80 of oneDNN at batch 1 and 0.73-0.83 at batch 32,
 *    against 0.61-0.75 and 0.60-0.67 (docs/performance.md, "conv2d").
 *  - Rows read in place. Without padding and with a unit column stride the
 *    row is read straight from x (T.Ramp over the columns: one unaligned
 *    vector load). Grouped pointwise layers (1x1, stride 1, no padding,
 *    G > 1) go further: the output plane is one row of OH * OW columns
 *    (x's plane is contiguous too), cut into chunks of CHUNK columns that
 *    run in parallel -- so a 56 x 56 plane is 196 tiles of 16, not 56 rows
 *    with a half-empty tail each; each column block's C input rows are
 *    copied together first (xcol), so that they do not share a few L1
 *    sets. That needs an epilogue that reads (oh, ow) only as the last two
 *    indices of buffers of the output plane's shape.
 *  - Rows packed (win_pack, window_common.c). Otherwise each work item
 *    first copies the KH input rows it needs, for all channels, into a
 *    local buffer (xp, C * KH rows),
 *    zero-padded, and split by column phase for a column stride s: padded
 *    column j * s + q goes to q * Wq + j, so that output columns ow.. read
 *    xp at ow + (kw * dw) // s in phase (kw * dw) % s, unit-stride again.
 *    Rows above or below the input are zeros. The copy is KH times the
 *    input, against C * KH * KW * O multiply-adds per output row: 1-2 %
 *    of the work for a 3x3 layer, and with stride 1 a plain loop LLVM
 *    vectorizes.
 *  - Order. Within a row, column blocks of NR are the outer loop and the
 *    channel tiles the inner one: a block's input stays in L1 while the
 *    weights stream through it from L2.
 *  - Tails. Output channels: a last tile of O/G % MR rows. Columns: a last
 *    tile of OW % NR columns, one full vector and a narrower one (T.Ramp
 *    with fewer lanes: exact, no masks), as the matmul rule's.
 *  - Epilogue: applied to the accumulators as they are stored (the matmul
 *    rule's mm_final_stores: o is a scalar, ow a T.Ramp, so a bias b[o] is
 *    one broadcast load, a residual r[n, o, oh, ow] a vector load).
 *
 * Numerics: each output sums c, kh, kw in increasing order (the order of
 * the unscheduled loop) with fused multiply-adds: one rounding per step.
 *
 * What it leaves to the default schedule: float16, a prologue fused in
 * front (X not a plain load of a parameter), any other shape of function.
 * The output is in the lowered form (flat buffers, one index per access),
 * as the matmul rule's.
 */
#include <string.h>

#include "schedule/knobs.h"
#include "schedule/window_internal.h"

/* The rule's name for its knobs (schedule/knobs.h). */
#define CONV_RULE "schedule_conv"

enum { CHUNK = 64 }; /* columns of a pointwise work item: 4 tiles of 16 (AVX2); 64 measured
                        * faster than 128 and 256 at 1x1 256->64 56x56 (docs/schedule.md) */

typedef struct cv {
    mm m;                      /* C, epilogues, flat buffers, index helpers (matmul_internal.h) */
    win wn;                    /* the input window: x, its dims, stride, padding, dilation (window_internal.h) */
    mt_tbuffer *x, *w;
    mt_tvar *rc, *rkh, *rkw;   /* the reduce iter vars: channel in group, kernel row, column */
    int64_t C, H, W, O, cg, og, G, KH, KW, OH, OW;
    int64_t s[2], p[2], d[2];  /* stride, padding, dilation (h, w): wn's */
    bool packed;               /* rows copied into xp (padding, or a column stride) */
    bool flat;                 /* pointwise: the plane is one row */
    int mr, nv;                /* tile: mr output channels x nv vectors (knobs mr, nv) */
    bool par;                  /* rows across threads (knob parallel) */
    int pf, pack_b;            /* pointwise through the matmul rule: its knobs prefetch and
                                * pack_b as chosen (-1: that path not taken, or not printed) */
    /* while generating */
    mt_texpr *n, *oh;          /* the work item's batch index and row */
    mt_tbuffer *xp;            /* the packed rows (packed) */
    mt_tbuffer *xcol;          /* pointwise: the column block's input, [C][NR] */
} cv;

/* ---- matching ------------------------------------------------------------------------- */

/* The channel index: c (one group) or o // og * cg + c. */
static bool match_channel(cv *v, const mt_texpr *e) {
    if (e->kind == TE_VAR) return e->var == v->rc && v->G == 1;
    int64_t og, cg;
    const mt_texpr *m = e->kind == TE_ADD ? e->a : NULL;
    if (!m || e->b->kind != TE_VAR || e->b->var != v->rc || m->kind != TE_MUL ||
        !mt_te_is_const_int(m->b, &cg) || m->a->kind != TE_FLOORDIV || !mt_te_is_const_int(m->a->b, &og) ||
        m->a->a->kind != TE_VAR || m->a->a->var != v->m.sv[1])
        return false;
    return cg == v->cg && og == v->og;
}

static bool const_dims(const mt_tbuffer *b, int from, int64_t *out) {
    for (int d = from; d < b->ndim; d++)
        if (!mt_te_is_const_int(b->shape[d], &out[d])) return false;
    return true;
}

/* The x load (maybe under the select with 0.0) and the dims, strides,
 * paddings (window_common.c). */
static bool match_input(cv *v, const mt_texpr *X) {
    int64_t wd[4], cd[4];
    if (!const_dims(v->w, 0, wd) || !const_dims(v->m.C, 1, cd)) return false;
    v->O = wd[0], v->cg = wd[1], v->KH = wd[2], v->KW = wd[3];
    v->OH = cd[2], v->OW = cd[3];
    win *wn = &v->wn;
    wn->OH = v->OH, wn->OW = v->OW, wn->KH = v->KH, wn->KW = v->KW;
    mt_tvar *others[3] = {v->m.sv[0], v->m.sv[1], v->rc};
    if (!win_match(wn, X, v->m.sv[2], v->rkh, v->m.sv[3], v->rkw, others, 3)) return false;
    if (wn->fill && (wn->fill->kind != TE_FLOAT || wn->fill->fval != 0.0)) return false;
    v->x = wn->x;
    v->C = wn->C, v->H = wn->H, v->W = wn->W;
    memcpy(v->s, wn->s, sizeof v->s);
    memcpy(v->p, wn->p, sizeof v->p);
    memcpy(v->d, wn->d, sizeof v->d);
    const mt_texpr *ld = wn->load;
    if (v->x->dtype != v->m.dt || !mm_is_param(&v->m, v->x) || !mt_texpr_equal(v->x->shape[0], v->m.C->shape[0]))
        return false;
    /* no output channels or an empty window: nothing for the rule to tile
     * (its row tiles divide by the channels of a group) */
    if (cd[1] != v->O || v->O < 1 || v->KH < 1 || v->KW < 1 || v->cg < 1 || v->C % v->cg) return false;
    v->G = v->C / v->cg;
    if (v->O % v->G) return false;
    v->og = v->O / v->G;
    return ld->args[0]->kind == TE_VAR && ld->args[0]->var == v->m.sv[0] && match_channel(v, ld->args[1]);
}

/* w[o, c, kh, kw] with c, kh, kw three distinct reduce vars (found here). */
static bool match_weight(cv *v, const mt_tstmt *blk, const mt_texpr *e) {
    if (e->kind != TE_LOAD || e->buf->ndim != 4 || e->buf->dtype != v->m.dt || !mm_is_param(&v->m, e->buf) ||
        e->args[0]->kind != TE_VAR || e->args[0]->var != v->m.sv[1])
        return false;
    mt_tvar *r[3];
    for (int q = 0; q < 3; q++) {
        const mt_texpr *ix = e->args[1 + q];
        if (ix->kind != TE_VAR) return false;
        bool red = false;
        for (int i = 0; i < blk->niters; i++) red |= blk->iters[i].var == ix->var && blk->iters[i].kind == MT_ITER_REDUCE;
        for (int p = 0; p < q; p++) red &= r[p] != ix->var;
        if (!red) return false;
        r[q] = ix->var;
    }
    v->w = e->buf;
    v->rc = r[0], v->rkh = r[1], v->rkw = r[2];
    return true;
}

static bool match_conv(cv *v, const mt_tstmt *blk) {
    mm *c = &v->m;
    int nred = 0;
    for (int i = 0; i < blk->niters; i++) nred += blk->iters[i].kind == MT_ITER_REDUCE;
    if (blk->niters != 7 || nred != 3 || !blk->init || blk->init->kind != TS_STORE || !blk->body ||
        blk->body->kind != TS_STORE)
        return false;
    const mt_tstmt *init = blk->init, *body = blk->body;
    c->C = init->buf;
    c->dt = c->C->dtype;
    c->ns = 4;
    if ((c->dt != MT_FLOAT32 && c->dt != MT_FLOAT64) || init->nidx != 4 || init->value->kind != TE_FLOAT ||
        init->value->fval != 0.0 || !mm_spatial_index(blk, init->idx, 4, c->sv))
        return false;
    if (body->buf != c->C || body->nidx != 4) return false;
    for (int d = 0; d < 4; d++) {
        if (!mt_texpr_equal(body->idx[d], init->idx[d])) return false;
        c->ext[d] = c->C->shape[d];
    }
    const mt_texpr *val = body->value, *acc, *prod;
    if (val->kind != TE_ADD || val->lanes != 1) return false;
    if (val->a->kind == TE_LOAD && val->a->buf == c->C) acc = val->a, prod = val->b;
    else if (val->b->kind == TE_LOAD && val->b->buf == c->C) acc = val->b, prod = val->a;
    else return false;
    for (int d = 0; d < 4; d++)
        if (acc->args[d]->kind != TE_VAR || acc->args[d]->var != c->sv[d]) return false;
    if (prod->kind != TE_MUL) return false;
    const mt_texpr *X = prod->a, *Y = prod->b;
    if (!match_weight(v, blk, Y)) {
        X = prod->b, Y = prod->a;
        if (!match_weight(v, blk, Y)) return false;
    }
    c->X = (mt_texpr *)X, c->Y = (mt_texpr *)Y;
    if (!match_input(v, X) || v->x == c->C || v->w == c->C) return false;
    /* every iteration variable runs over its whole dim */
    mt_tvar *vars[7] = {c->sv[0], c->sv[1], c->sv[2], c->sv[3], v->rc, v->rkh, v->rkw};
    int64_t want[7] = {-1, v->O, v->OH, v->OW, v->cg, v->KH, v->KW}, e;
    for (int i = 0; i < blk->niters; i++)
        for (int k = 0; k < 7; k++) {
            if (blk->iters[i].var != vars[k]) continue;
            if (k == 0 ? !mt_texpr_equal(blk->iters[i].extent, c->C->shape[0])
                       : !mt_te_is_const_int(blk->iters[i].extent, &e) || e != want[k])
                return false;
        }
    return v->OH >= 1 && v->OW >= 1;
}

/* Pointwise epilogues: every load of another buffer that uses oh or ow has
 * them as its last two indices, over a plane of the output's shape. */
typedef struct flat_ctx {
    cv *v;
    bool ok;
} flat_ctx;

static void flat_expr(mt_tvisitor *vis, const mt_texpr *e) {
    flat_ctx *f = vis->ctx;
    cv *v = f->v;
    if (e->kind == TE_LOAD) {
        int n = e->nargs;
        bool uses = false;
        for (int d = 0; d < n; d++)
            uses |= mt_texpr_uses_var(e->args[d], v->m.sv[2]) || mt_texpr_uses_var(e->args[d], v->m.sv[3]);
        if (!uses) return;
        int64_t h, w;
        for (int d = 0; d < n - 2; d++)
            if (mt_texpr_uses_var(e->args[d], v->m.sv[2]) || mt_texpr_uses_var(e->args[d], v->m.sv[3])) f->ok = false;
        if (n < 2 || e->args[n - 2]->kind != TE_VAR || e->args[n - 2]->var != v->m.sv[2] ||
            e->args[n - 1]->kind != TE_VAR || e->args[n - 1]->var != v->m.sv[3] ||
            !mt_te_is_const_int(e->buf->shape[n - 2], &h) || !mt_te_is_const_int(e->buf->shape[n - 1], &w) ||
            h != v->OH || w != v->OW)
            f->ok = false;
        return;
    }
    mt_tvisit_expr_children(vis, e);
}

static bool epilogue_flat_ok(cv *v) {
    for (int e = 0; e < v->m.nep; e++) {
        /* the epilogue's own iter vars stand for oh, ow: rename by position */
        mt_tvar *keep[2] = {v->m.sv[2], v->m.sv[3]};
        v->m.sv[2] = v->m.ep[e].iv[2], v->m.sv[3] = v->m.ep[e].iv[3];
        flat_ctx f = {v, true};
        mt_tvisitor vis = {flat_expr, NULL, &f};
        mt_tvisit_expr(&vis, v->m.ep[e].value);
        v->m.sv[2] = keep[0], v->m.sv[3] = keep[1];
        if (!f.ok) return false;
    }
    return true;
}

static bool match(cv *v) {
    mm *c = &v->m;
    mt_tfunc *f = c->f;
    if (!f->body) return false;
    mt_tstmt *const *st = f->body->kind == TS_SEQ ? f->body->stmts : &f->body;
    int n = f->body->kind == TS_SEQ ? f->body->nstmts : 1;
    mm_nest ns;
    if (n == 0 || !mm_parse_nest(st[0], &ns) || !match_conv(v, ns.blk)) return false;
    for (int p = 1; p < n; p++)
        if (!mm_parse_nest(st[p], &ns) || !mm_match_epilogue(c, ns.blk)) return false;
    for (int i = 0; i < f->nallocs; i++)
        if (!mm_written(c, f->allocs[i])) return false;
    return true;
}

/* ---- generation ---------------------------------------------------------------------- */

static mt_texpr *I(cv *v, int64_t k) { return mm_I(&v->m, k); }
static mt_texpr *add(cv *v, mt_texpr *x, mt_texpr *y) { return mt_lw_add(&v->m.lw, x, y); }
static mt_texpr *mul(cv *v, mt_texpr *x, int64_t k) { return mt_lw_mul(&v->m.lw, x, I(v, k)); }
static mt_texpr *flat_load(cv *v, mt_tbuffer *b, mt_texpr *ix) {
    return mt_te_load(v->m.a, mt_lw_flat(&v->m.lw, b)->flat, &ix, 1);
}

/* The input at channel ch (of all C), kernel (kh, kw), output columns
 * ow0 + off.. (lanes): from xcol (pointwise), xp (packed rows) or x. */
static mt_texpr *input_at(cv *v, mt_texpr *ch, mt_texpr *kh, int64_t kw, mt_texpr *ow0, int off, int lanes) {
    if (v->xcol) { /* pointwise: the column block's copy, [channel][column] */
        mt_texpr *ix = mt_lw_ramp(&v->m.lw, add(v, mul(v, ch, v->nv * v->m.vl), I(v, off)), lanes);
        return mt_te_load(v->m.a, v->xcol, &ix, 1);
    }
    return win_input(&v->wn, &v->m, v->packed ? v->xp : NULL, v->n, ch, v->oh, kh, kw, ow0, off, lanes);
}

/* One register tile: rows o0.. (mr of them, one group, input channels from
 * c0), columns ow0 + cs. */
static mt_tstmt *gen_tile(cv *v, mt_texpr *o0, mt_texpr *c0, int mr, mt_texpr *ow0, mm_colset cs) {
    mm *c = &v->m;
    mt_arena *a = c->a;
    int row = cs.nv * c->vl;
    mt_tbuffer *acc = mm_local_buf(c, "acc", I(v, (int64_t)mr * row), c->dt);
    mt_tvar *ci = mm_ivar(c, "ci"), *kh = mm_ivar(c, "kh");
    svec init = {0}, steps = {0}, fin = {0};
    for (int ii = 0; ii < mr; ii++)
        for (int q = 0; q < cs.nv; q++) {
            mt_texpr *sl = mt_lw_ramp(&c->lw, I(v, (int64_t)ii * row + cs.off[q]), cs.lanes[q]);
            mm_push(c, &init, mt_ts_store(a, acc, &sl, 1, mm_fzero(c, cs.lanes[q])));
        }
    mt_texpr *ch = add(v, c0, mm_V(c, ci));
    for (int64_t kw = 0; kw < v->KW; kw++) {
        mt_tvar *xv[MM_MAXV], *wv[MM_MAXR];
        svec fm = {0};
        for (int q = 0; q < cs.nv; q++) xv[q] = mt_tvar_new(a, "xv", c->dt);
        for (int ii = 0; ii < mr; ii++) wv[ii] = mt_tvar_new(a, "wk", c->dt);
        for (int ii = 0; ii < mr; ii++)
            for (int q = 0; q < cs.nv; q++) {
                mt_texpr *sl = mt_lw_ramp(&c->lw, I(v, (int64_t)ii * row + cs.off[q]), cs.lanes[q]);
                mt_texpr *args[3] = {mm_V(c, wv[ii]), mm_Vl(c, xv[q], cs.lanes[q]), mt_te_load(a, acc, &sl, 1)};
                mm_push(c, &fm, mt_ts_store(a, acc, &sl, 1, mt_te_call(a, IN_FMA, args, 3)));
            }
        mt_tstmt *body = mm_seq(c, &fm);
        for (int ii = mr - 1; ii >= 0; ii--) {
            mt_texpr *o = add(v, o0, I(v, ii));
            mt_texpr *wi = add(v, mul(v, add(v, mul(v, add(v, mul(v, o, v->cg), mm_V(c, ci)), v->KH), mm_V(c, kh)), v->KW),
                               I(v, kw));
            body = mt_ts_let(a, wv[ii], flat_load(v, v->w, wi), body);
        }
        for (int q = cs.nv - 1; q >= 0; q--)
            body = mt_ts_let(a, xv[q], input_at(v, ch, mm_V(c, kh), kw, ow0, cs.off[q], cs.lanes[q]), body);
        mm_push(c, &steps, body);
    }
    mt_tstmt *k = mm_loop(c, ci, I(v, v->cg), MT_FOR_SERIAL, mm_loop(c, kh, I(v, v->KH), MT_FOR_SERIAL, mm_seq(c, &steps)));
    for (int ii = 0; ii < mr; ii++)
        for (int q = 0; q < cs.nv; q++) {
            mt_texpr *sl = mt_lw_ramp(&c->lw, I(v, (int64_t)ii * row + cs.off[q]), cs.lanes[q]);
            mt_texpr *ow = mt_lw_ramp(&c->lw, add(v, ow0, I(v, cs.off[q])), cs.lanes[q]);
            c->bv[1] = add(v, o0, I(v, ii));
            mm_push(c, &fin, mm_final_stores(c, v->flat ? I(v, 0) : v->oh, ow, mt_te_load(a, acc, &sl, 1)));
        }
    mt_tstmt *s[3] = {mm_seq(c, &init), k, mm_seq(c, &fin)};
    return mt_ts_alloc(a, acc, mt_ts_seq(a, s, 3));
}

/* The tiles of one column block (columns ow0 + cs) over all output
 * channels: per group, tiles of mr rows and a tail tile of og % mr. */
static mt_tstmt *gen_rows(cv *v, mt_texpr *ow0, mm_colset cs) {
    mm *c = &v->m;
    mt_tvar *g = v->G > 1 ? mm_ivar(c, "g") : NULL;
    mt_texpr *gi = g ? mm_V(c, g) : I(v, 0);
    mt_texpr *obase = mul(v, gi, v->og), *c0 = mul(v, gi, v->cg);
    int mr = v->mr < v->og ? v->mr : (int)v->og;
    int64_t nfull = v->og / mr, tail = v->og % mr;
    svec s = {0};
    mt_tvar *ot = mm_ivar(c, "ot");
    mm_push(c, &s, mm_loop(c, ot, I(v, nfull), MT_FOR_SERIAL,
                           gen_tile(v, add(v, obase, mul(v, mm_V(c, ot), mr)), c0, mr, ow0, cs)));
    if (tail) mm_push(c, &s, gen_tile(v, add(v, obase, I(v, nfull * mr)), c0, (int)tail, ow0, cs));
    mt_tstmt *body = mm_seq(c, &s);
    return g ? mm_loop(c, g, I(v, v->G), MT_FOR_SERIAL, body) : body;
}

/* One work item: the columns [cb, cb + width) (a constant width) in
 * blocks of NR, then the tail block, each over all output channels. The
 * column block is the outer loop: its input (C * KH * KW * NR values,
 * 14 KiB for 64 channels 3x3 float32) stays in L1 while the weights
 * stream from L2 through it. */
static mt_tstmt *gen_block(cv *v, mt_texpr *ow0, mm_colset cs) {
    if (!v->flat) return gen_rows(v, ow0, cs);
    mm *c = &v->m;
    mt_arena *a = c->a;
    int nr = v->nv * c->vl;
    mt_tvar *ch = mm_ivar(c, "pc"), *j = mm_ivar(c, "pj");
    v->xcol = mm_local_buf(c, "xcol", I(v, v->C * nr), c->dt);
    mt_texpr *di = add(v, mul(v, mm_V(c, ch), nr), mm_V(c, j));
    mt_texpr *si = add(v, add(v, mul(v, add(v, mul(v, v->n, v->C), mm_V(c, ch)), v->OH * v->OW), ow0), mm_V(c, j));
    mt_tstmt *copy = mm_loop(c, ch, I(v, v->C), MT_FOR_SERIAL,
                             mm_loop(c, j, I(v, cs.width), MT_FOR_SERIAL, mt_ts_store(a, v->xcol, &di, 1, flat_load(v, v->x, si))));
    mt_tstmt *body = mt_ts_alloc(a, v->xcol, mm_seq2(c, copy, gen_rows(v, ow0, cs)));
    v->xcol = NULL;
    return body;
}

/* One work item: the columns [cb, cb + width) (a constant width) in
 * blocks of NR, then the tail block, each over all output channels. The
 * column block is the outer loop: its input (C * KH * KW * NR values,
 * 14 KiB for 64 channels 3x3 float32) stays in L1 while the weights
 * stream from L2 through it. A pointwise block's input is C rows a plane
 * apart in x: it is copied into xcol first (contiguous, so that its C
 * lines do not fall into a few L1 sets: 56 x 56 float32 planes are 196
 * lines apart, and 256 of them would share 16 sets). */
static mt_tstmt *gen_channels(cv *v, mt_texpr *cb, int64_t width) {
    mm *c = &v->m;
    int nr = v->nv * c->vl;
    svec s = {0};
    int64_t nfull = width / nr, tail = width % nr;
    if (nfull > 0) {
        mt_tvar *wt = mm_ivar(c, "wt");
        mt_texpr *ow0 = add(v, cb, mul(v, mm_V(c, wt), nr));
        mm_push(c, &s, mm_loop(c, wt, I(v, nfull), MT_FOR_SERIAL, gen_block(v, ow0, mm_cols(nr, c->vl))));
    }
    if (tail) mm_push(c, &s, gen_block(v, add(v, cb, I(v, nfull * nr)), mm_cols((int)tail, c->vl)));
    return mm_seq(c, &s);
}

static mt_tstmt *gen(cv *v) {
    mm *c = &v->m;
    mt_arena *a = c->a;
    int64_t rows = v->flat ? 1 : v->OH, width = v->flat ? v->OH * v->OW : v->OW;
    int64_t nr = v->nv * c->vl;
    int64_t chunk = v->flat && width > CHUNK ? CHUNK / nr * nr : width;
    int64_t nchunks = (width + chunk - 1) / chunk, last = width - (nchunks - 1) * chunk;
    mt_tvar *it = mm_ivar(c, "it");
    mt_texpr *iv = mm_V(c, it), *per = I(v, rows * nchunks);
    v->n = mt_arith_bin(a, TE_FLOORDIV, iv, per);
    mt_texpr *rest = mt_arith_bin(a, TE_FLOORMOD, iv, per);
    v->oh = mt_arith_bin(a, TE_FLOORDIV, rest, I(v, nchunks));
    mt_texpr *chi = mt_arith_bin(a, TE_FLOORMOD, rest, I(v, nchunks));
    if (v->flat) v->oh = I(v, 0);
    c->bv[0] = v->n;
    if (v->packed) {
        win_pack_layout(&v->wn);
        v->xp = mm_local_buf(c, "xp", I(v, v->C * v->KH * v->wn.wp), c->dt);
    }
    mt_tstmt *body;
    mt_texpr *cb = mul(v, chi, chunk);
    if (nchunks == 1 || last == chunk) {
        body = gen_channels(v, cb, chunk);
    } else {
        mt_texpr *is_last = mm_eq(c, chi, I(v, nchunks - 1));
        body = mt_ts_if(a, is_last, gen_channels(v, cb, last), gen_channels(v, cb, chunk));
    }
    if (v->packed)
        body = mt_ts_alloc(a, v->xp, mm_seq2(c, win_pack(&v->wn, c, v->xp, v->n, I(v, 0), v->C, v->oh, mm_fzero(c, 1)),
                                             body));
    mt_texpr *items = mt_lw_mul(&c->lw, c->ext[0], per);
    return mm_loop(c, it, items, v->par ? MT_FOR_PARALLEL : MT_FOR_SERIAL, body);
}

/* ---- pointwise: the matmul rule ----------------------------------------------------------- */

/* A 1x1 convolution without padding or groups (any stride). */
static bool pointwise(const cv *v) {
    return v->KH == 1 && v->KW == 1 && v->p[0] == 0 && v->p[1] == 0 && v->G == 1;
}

/* The buffers whose last two dims are the output plane (OH x OW), each
 * seen through a view with one dim of OH * OW there: the same memory in
 * the same order, so that x[n] and C[n] are matrices of C and O rows. */
typedef struct pw {
    cv *v;
    mt_tbuffer **old, **view;
    int nb;
    mt_tvar *oh, *ow, *j;      /* while rewriting one nest: its plane indices, and their merge */
} pw;

static mt_tbuffer *view_of(const pw *p, const mt_tbuffer *b) {
    for (int i = 0; i < p->nb; i++)
        if (p->old[i] == b) return p->view[i];
    return NULL;
}

/* b's view when b holds planes of the output's size, else b. */
static mt_tbuffer *make_view(pw *p, mt_tbuffer *b) {
    cv *v = p->v;
    int64_t h, w;
    int n = b->ndim;
    if (n < 2 || !mt_te_is_const_int(b->shape[n - 2], &h) || !mt_te_is_const_int(b->shape[n - 1], &w) ||
        h != v->OH || w != v->OW)
        return b;
    mt_texpr *shape[MT_MAX_RANK];
    for (int d = 0; d < n - 2; d++) shape[d] = b->shape[d];
    shape[n - 2] = I(v, v->OH * v->OW);
    mt_tbuffer *vb = mt_tbuffer_new(v->m.a, b->name, b->dtype, n - 1, shape);
    vb->scope = b->scope;
    p->old[p->nb] = b, p->view[p->nb++] = vb;
    return vb;
}

static bool is_var(const mt_texpr *e, const mt_tvar *x) { return e->kind == TE_VAR && e->var == x; }

/* An expression over (oh, ow) in terms of j = oh * OW + ow: a viewed
 * buffer read at [.., oh, ow] is read at [.., j]; any other use of oh, ow
 * is j // OW, j % OW. */
static mt_texpr *pw_hook(mt_tmutator *m, mt_texpr *e) {
    pw *p = m->ctx;
    mt_arena *a = m->arena;
    mt_texpr *ow = I(p->v, p->v->OW);
    if (e->kind == TE_VAR && (e->var == p->oh || e->var == p->ow))
        return mt_arith_bin(a, e->var == p->oh ? TE_FLOORDIV : TE_FLOORMOD, mt_te_var(a, p->j), ow);
    mt_tbuffer *vb = e->kind == TE_LOAD ? view_of(p, e->buf) : NULL;
    if (!vb) return mt_tmutate_expr_children(m, e);
    int n = e->nargs;
    mt_texpr *idx[MT_MAX_RANK];
    for (int d = 0; d < n - 2; d++) idx[d] = mt_tmutate_expr(m, e->args[d]);
    if (is_var(e->args[n - 2], p->oh) && is_var(e->args[n - 1], p->ow))
        idx[n - 2] = mt_te_var(a, p->j);
    else
        idx[n - 2] = mt_arith_add(a, mt_arith_mul(a, mt_tmutate_expr(m, e->args[n - 2]), ow),
                                  mt_tmutate_expr(m, e->args[n - 1]));
    return mt_te_load(a, vb, idx, n - 1);
}

static mt_texpr *pw_rewrite(pw *p, mt_tvar *oh, mt_tvar *ow, mt_tvar *j, mt_texpr *e) {
    p->oh = oh, p->ow = ow, p->j = j;
    mt_tmutator m = {p->v->m.a, pw_hook, NULL, p};
    return mt_tmutate_expr(&m, e);
}

/* f with every plane-shaped buffer (params and allocations) viewed. */
static mt_tfunc *pw_func(pw *p) {
    mt_arena *a = p->v->m.a;
    const mt_tfunc *f = p->v->m.f;
    int cap = f->nparams + f->nallocs + 1;
    p->old = MT_NEW_ARRAY(a, mt_tbuffer *, cap);
    p->view = MT_NEW_ARRAY(a, mt_tbuffer *, cap);
    mt_tfunc *h = MT_NEW(a, mt_tfunc);
    *h = *f;
    h->params = MT_NEW_ARRAY(a, mt_tparam, f->nparams > 0 ? f->nparams : 1);
    h->allocs = MT_NEW_ARRAY(a, mt_tbuffer *, f->nallocs > 0 ? f->nallocs : 1);
    for (int i = 0; i < f->nparams; i++) {
        h->params[i] = f->params[i];
        if (f->params[i].buf) h->params[i].buf = make_view(p, f->params[i].buf);
    }
    for (int i = 0; i < f->nallocs; i++) h->allocs[i] = make_view(p, f->allocs[i]);
    return h;
}

/* Per image the matmul C[n] (O x OH*OW) = w (O x C) @ x[n] (C x OH*OW),
 * read through the views (x's only with a stride of 1: with another x is
 * read at [n, c, j // OW * sh, j % OW * sw], which the matmul rule's
 * packing of B gathers), the epilogues rewritten over j, and the matmul
 * rule's schedule of it. */
static mt_tfunc *gen_pointwise(cv *v) {
    mm *s = &v->m;
    mt_arena *a = s->a;
    pw p = {v, NULL, NULL, 0, NULL, NULL, NULL};
    mm *c = MT_NEW(a, mm);
    c->a = c->lw.a = a;
    c->f = pw_func(&p);
    c->dt = s->dt, c->vl = s->vl, c->ns = 3;
    mt_tvar *n = s->sv[0], *o = s->sv[1], *oh = s->sv[2], *ow = s->sv[3], *j = mm_ivar(c, "j");
    c->sv[0] = n, c->sv[1] = o, c->sv[2] = j;
    c->ext[0] = s->ext[0], c->ext[1] = I(v, v->O), c->ext[2] = I(v, v->OH * v->OW);
    c->kv = v->rc, c->K = I(v, v->C);
    mt_texpr *wi[4] = {mm_V(c, o), mm_V(c, v->rc), I(v, 0), I(v, 0)};
    mt_texpr *xi[4] = {mm_V(c, n), mm_V(c, v->rc), v->s[0] == 1 ? mm_V(c, oh) : mul(v, mm_V(c, oh), v->s[0]),
                       v->s[1] == 1 ? mm_V(c, ow) : mul(v, mm_V(c, ow), v->s[1])};
    c->X = pw_rewrite(&p, oh, ow, j, mt_te_load(a, v->w, wi, 4));
    c->Y = pw_rewrite(&p, oh, ow, j, mt_te_load(a, v->x, xi, 4));
    c->C = view_of(&p, s->C);
    for (int e = 0; e < s->nep; e++) {
        epi *d = &c->ep[e];
        const epi *from = &s->ep[e];
        d->iv[0] = from->iv[0], d->iv[1] = from->iv[1], d->iv[2] = mm_ivar(c, "j");
        d->out = view_of(&p, from->out);
        d->value = pw_rewrite(&p, from->iv[2], from->iv[3], d->iv[2], from->value);
    }
    c->nep = s->nep;
    c->wide = true;
    /* the tile and threads given to this rule go to the matmul rule; the
     * values it chose are this rule's choice (chose) */
    static const char *const passed[] = {"mr", "nv", "parallel", "prefetch", "pack_b"};
    mt_knobs *k = MT_NEW(a, mt_knobs);
    k->rule = MM_RULE;
    for (int i = 0; i < 5; i++)
        if (mt_knob_given(s->f, CONV_RULE, passed[i])) mt_knobs_set(k, passed[i], mt_knob_get(s->f, CONV_RULE, passed[i], 0));
    c->f->knobs = k->n ? k : NULL;
    mt_tattr *attrs = c->f->attrs;
    int nattrs = c->f->nattrs;
    mt_tfunc *g = mm_schedule_cpu(c);
    g->attrs = attrs; /* not the matmul rule's "knobs" attribute: chose marks the conv's */
    g->nattrs = nattrs;
    v->mr = (int)mt_knobs_value(g->chosen, "mr", v->mr);
    v->nv = (int)mt_knobs_value(g->chosen, "nv", v->nv);
    v->par = mt_knobs_value(g->chosen, "parallel", v->par) != 0;
    v->pf = (int)mt_knobs_value(g->chosen, "prefetch", -1);
    v->pack_b = (int)mt_knobs_value(g->chosen, "pack_b", -1);
    return g;
}

/* ---- entry ------------------------------------------------------------------------------ */

/* Rows of the register tile: the knob mr, else as the matmul rule's
 * tile_rows, nv vectors wide. */
static int tile_rows(const cv *v) {
    int regs = mt_tfunc_target(v->m.f)->vector_registers;
    int fit = (regs - v->nv - 1) / v->nv;
    return (int)mt_knob_get(v->m.f, CONV_RULE, "mr", fit < 1 ? 1 : fit < 8 ? fit : 8);
}

/* The rule's result: g marked with the knobs f was given, and the values
 * it used (mt_tfunc.chosen: `mtc --emit schedule` prints them as
 * apply_rule("schedule_conv", ...)). */
static mt_tfunc *chose(cv *v, mt_tfunc *g, bool pw) {
    mt_knobs k = {0};
    k.rule = CONV_RULE;
    mt_knobs_set(&k, "mr", v->mr);
    mt_knobs_set(&k, "nv", v->nv);
    mt_knobs_set(&k, "parallel", v->par);
    if (pointwise(v)) mt_knobs_set(&k, "pointwise", pw);
    if (pw && v->pf >= 0) mt_knobs_set(&k, "prefetch", v->pf);
    if (pw && v->pack_b >= 0) mt_knobs_set(&k, "pack_b", v->pack_b);
    return mt_knobs_chose(v->m.a, mt_knobs_mark(v->m.a, g, v->m.f, CONV_RULE), &k);
}

mt_tfunc *mt_schedule_conv_cpu(mt_arena *a, mt_tfunc *f, int *applied) {
    if (applied) *applied = 0;
    cv *v = MT_NEW(a, cv);
    mm *c = &v->m;
    c->a = c->lw.a = a;
    c->f = f;
    if (!match(v)) return f;
    c->vl = mt_target_register_lanes(mt_tfunc_target(f), c->dt);
    v->nv = (int)mt_knob_get(f, CONV_RULE, "nv", 2);
    v->mr = tile_rows(v);
    v->par = mt_knob_get(f, CONV_RULE, "parallel", 1) != 0;
    v->pf = v->pack_b = -1;
    if (applied) *applied = 1;
    if (pointwise(v) && mt_knob_get(f, CONV_RULE, "pointwise", 1)) return chose(v, gen_pointwise(v), true);
    v->packed = win_needs_pack(&v->wn);
    v->flat = !v->packed && v->KH == 1 && v->KW == 1 && v->s[0] == 1 && epilogue_flat_ok(v);
    return chose(v, mm_scheduled(c, gen(v), NULL), false);
}

mt_tfunc *mt_schedule_conv_pass(mt_arena *a, mt_tfunc *f) { return mt_schedule_conv_cpu(a, f, NULL); }
