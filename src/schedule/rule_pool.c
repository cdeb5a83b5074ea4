/*
 * rule_pool.c -- the CPU schedule of max_pool2d and avg_pool2d (NCHW) with
 * their elementwise epilogue.
 *
 * What it matches. A loop function (block form) that is exactly the pool
 * nest of legalize_conv.c, for avg_pool2d its in-place division nest, then
 * zero or more elementwise epilogue nests (matmul_common.c's matcher):
 *
 *     for n, c, oh, kh, kw, ow:  C[n, c, oh, ow] = max(C[...], X)    (init -inf; NaN wins)
 *                            or  C[n, c, oh, ow] = C[...] + X        (init 0)
 *     for n, c, oh, ow:          C[n, c, oh, ow] = C[...] / (KH * KW) (avg)
 *
 * X a window read of a parameter x of C's float dtype (window_common.c:
 * stride, dilation, padding under a select whose other arm is the init).
 *
 * What it makes. Without it the default schedule vectorizes the ow loop
 * with strided, clamped, selected loads (vectors of int64 indices and
 * lane-by-lane loads): 1.3 GB/s for a 3x3 stride-2 max pool. Here one work
 * item is an output row (n, c, oh), run in parallel; when padded or strided
 * it first copies the KH input rows it reads into a local buffer, padded
 * with the init value and split by column phase (win_pack), so every load
 * is one unit-stride vector; then for each vector of output columns it
 * folds the KH x KW window in registers (max with NaN propagation, or a
 * sum and one division) and stores through the epilogue.
 *
 * Numerics: the same fold in the same order (kh, then kw) as the loop
 * function; the average divides once, by KH * KW.
 */
#include <math.h>
#include <string.h>

#include "schedule/window_internal.h"

typedef enum pkind { P_MAX, P_AVG } pkind;

typedef struct pl {
    mm m;            /* C, epilogues, flat buffers (matmul_internal.h) */
    win wn;          /* the window (window_internal.h) */
    pkind kind;
    /* while generating */
    mt_texpr *n, *ch, *oh;
    mt_tbuffer *xp;  /* the packed rows, or NULL */
} pl;

/* ---- matching --------------------------------------------------------------------- */

static bool is_fill(const mt_texpr *e, pkind k) {
    if (!e || e->kind != TE_FLOAT) return false;
    return k == P_MAX ? isinf(e->fval) && e->fval < 0 : e->fval == 0.0;
}

static bool is_acc(const pl *p, const mt_texpr *e) {
    if (e->kind != TE_LOAD || e->buf != p->m.C) return false;
    for (int d = 0; d < 4; d++)
        if (e->args[d]->kind != TE_VAR || e->args[d]->var != p->m.sv[d]) return false;
    return true;
}

/* max: T.Select(X > acc or X != X, X, acc); avg: acc + X. Returns X. */
static const mt_texpr *fold_operand(pl *p, const mt_texpr *v) {
    if (v->kind == TE_ADD && is_acc(p, v->a)) {
        p->kind = P_AVG;
        return v->b;
    }
    if (v->kind != TE_SELECT || !is_acc(p, v->b) || v->cond->kind != TE_OR) return NULL;
    const mt_texpr *X = v->a, *gt = v->cond->a, *ne = v->cond->b;
    if (gt->kind != TE_GT || !mt_texpr_equal(gt->a, X) || !is_acc(p, gt->b) || ne->kind != TE_NE ||
        !mt_texpr_equal(ne->a, X) || !mt_texpr_equal(ne->b, X))
        return NULL;
    p->kind = P_MAX;
    return X;
}

static bool match_pool(pl *p, const mt_tstmt *blk) {
    mm *c = &p->m;
    mt_tvar *red[2];
    int nred = 0;
    for (int i = 0; i < blk->niters; i++)
        if (blk->iters[i].kind == MT_ITER_REDUCE && nred < 2) red[nred++] = blk->iters[i].var;
    if (blk->niters != 6 || nred != 2 || !blk->init || blk->init->kind != TS_STORE || !blk->body ||
        blk->body->kind != TS_STORE)
        return false;
    const mt_tstmt *init = blk->init, *body = blk->body;
    c->C = init->buf;
    c->dt = c->C->dtype;
    c->ns = 4;
    int64_t cd[4];
    if (!mt_dtype_is_float(c->dt) || mt_dtype_is_half(c->dt) || init->nidx != 4 ||
        !mm_spatial_index(blk, init->idx, 4, c->sv) || body->buf != c->C || body->nidx != 4)
        return false;
    for (int d = 0; d < 4; d++) {
        if (!mt_texpr_equal(body->idx[d], init->idx[d])) return false;
        c->ext[d] = c->C->shape[d];
        if (d && !mt_te_is_const_int(c->C->shape[d], &cd[d])) return false;
        for (int i = 0; i < blk->niters; i++) /* the spatial loops run over C's whole dims */
            if (blk->iters[i].var == c->sv[d] && !mt_texpr_equal(blk->iters[i].extent, c->C->shape[d]))
                return false;
    }
    const mt_texpr *X = fold_operand(p, body->value);
    if (!X || !is_fill(init->value, p->kind)) return false;
    win *w = &p->wn;
    w->OH = cd[2], w->OW = cd[3];
    /* the kernel: the reduce vars' extents, kh the one in the height index */
    int64_t e0, e1;
    const mt_texpr *x0 = NULL, *x1 = NULL;
    for (int i = 0; i < blk->niters; i++) {
        if (blk->iters[i].var == red[0]) x0 = blk->iters[i].extent;
        if (blk->iters[i].var == red[1]) x1 = blk->iters[i].extent;
    }
    if (!mt_te_is_const_int(x0, &e0) || !mt_te_is_const_int(x1, &e1)) return false;
    mt_tvar *others[2] = {c->sv[0], c->sv[1]};
    w->KH = e0, w->KW = e1;
    if (!win_match(w, X, c->sv[2], red[0], c->sv[3], red[1], others, 2)) {
        w->KH = e1, w->KW = e0;
        if (!win_match(w, X, c->sv[2], red[1], c->sv[3], red[0], others, 2)) return false;
    }
    if (w->fill && !is_fill(w->fill, p->kind)) return false;
    const mt_texpr *ld = w->load;
    c->X = c->Y = (mt_texpr *)X;
    return w->x->dtype == c->dt && mm_is_param(c, w->x) && w->x != c->C && w->d[0] == 1 && w->d[1] == 1 &&
           mt_texpr_equal(w->x->shape[0], c->C->shape[0]) && w->C == cd[1] && ld->args[0]->kind == TE_VAR &&
           ld->args[0]->var == c->sv[0] && ld->args[1]->kind == TE_VAR && ld->args[1]->var == c->sv[1];
}

/* C[v] = C[v] / T.Cast(KH * KW) over C's shape (avg_pool2d_div). */
static bool match_div(pl *p, const mt_tstmt *blk) {
    const mt_tstmt *st = blk->body;
    if (blk->niters != 4 || blk->init || !st || st->kind != TS_STORE || st->buf != p->m.C) return false;
    for (int d = 0; d < 4; d++)
        if (blk->iters[d].kind != MT_ITER_SPATIAL || st->idx[d]->kind != TE_VAR ||
            st->idx[d]->var != blk->iters[d].var || !mt_texpr_equal(blk->iters[d].extent, p->m.C->shape[d]))
            return false;
    const mt_texpr *v = st->value, *den;
    int64_t k;
    if (v->kind != TE_DIV || v->a->kind != TE_LOAD || v->a->buf != p->m.C) return false;
    for (int d = 0; d < 4; d++)
        if (v->a->args[d]->kind != TE_VAR || v->a->args[d]->var != blk->iters[d].var) return false;
    den = v->b;
    if (den->kind == TE_CAST) den = den->a;
    if (den->kind == TE_FLOAT) return den->fval == (double)(p->wn.KH * p->wn.KW);
    return mt_te_is_const_int(den, &k) && k == p->wn.KH * p->wn.KW;
}

static bool match(pl *p) {
    mm *c = &p->m;
    mt_tfunc *f = c->f;
    if (!f->body) return false;
    mt_tstmt *const *st = f->body->kind == TS_SEQ ? f->body->stmts : &f->body;
    int n = f->body->kind == TS_SEQ ? f->body->nstmts : 1, q = 1;
    mm_nest ns;
    if (n == 0 || !mm_parse_nest(st[0], &ns) || !match_pool(p, ns.blk)) return false;
    if (p->kind == P_AVG && (n < 2 || !mm_parse_nest(st[q++], &ns) || !match_div(p, ns.blk))) return false;
    for (; q < n; q++)
        if (!mm_parse_nest(st[q], &ns) || !mm_match_epilogue(c, ns.blk)) return false;
    for (int i = 0; i < f->nallocs; i++)
        if (!mm_written(c, f->allocs[i])) return false;
    return true;
}

/* ---- generation ------------------------------------------------------------------- */

static mt_texpr *fill_value(pl *p, int lanes) {
    mt_texpr *f = mt_te_float(p->m.a, p->m.dt, p->kind == P_MAX ? -INFINITY : 0.0);
    return lanes == 1 ? f : mt_te_broadcast(p->m.a, f, lanes);
}

/* One vector of output columns ow0 + off.. (lanes): the window folded in
 * acc, then the final stores. */
static mt_tstmt *gen_vector(pl *p, mt_texpr *ow0, int lanes) {
    mm *c = &p->m;
    mt_arena *a = c->a;
    win *w = &p->wn;
    mt_tbuffer *acc = mm_local_buf(c, "acc", mm_I(c, lanes), c->dt);
    mt_texpr *slot = mt_lw_ramp(&c->lw, mm_I(c, 0), lanes);
    mt_tvar *kh = mm_ivar(c, "kh");
    svec steps = {0};
    for (int64_t kw = 0; kw < w->KW; kw++) {
        mt_tvar *xv = mt_tvar_new(a, "xv", c->dt);
        mt_texpr *x = mm_Vl(c, xv, lanes), *cur = mt_te_load(a, acc, &slot, 1), *nv;
        if (p->kind == P_MAX) {
            mt_texpr *take = mt_te_bin(a, TE_OR, mt_te_bin(a, TE_GT, x, cur), mt_te_bin(a, TE_NE, x, x));
            nv = mt_te_select(a, take, x, cur);
        } else {
            nv = mt_te_bin(a, TE_ADD, cur, x);
        }
        mt_texpr *in = win_input(w, c, p->xp, p->n, p->xp ? mm_I(c, 0) : p->ch, p->oh, mm_V(c, kh), kw, ow0, 0, lanes);
        mm_push(c, &steps, mt_ts_let(a, xv, in, mt_ts_store(a, acc, &slot, 1, nv)));
    }
    mt_texpr *m = mt_te_load(a, acc, &slot, 1);
    if (p->kind == P_AVG) m = mt_te_bin(a, TE_DIV, m, mt_te_float(a, c->dt, (double)(w->KH * w->KW)));
    mt_tstmt *s[3] = {mt_ts_store(a, acc, &slot, 1, fill_value(p, lanes)),
                      mm_loop(c, kh, mm_I(c, w->KH), MT_FOR_SERIAL, mm_seq(c, &steps)),
                      mm_final_stores(c, p->oh, mt_lw_ramp(&c->lw, ow0, lanes), m)};
    return mt_ts_alloc(a, acc, mt_ts_seq(a, s, 3));
}

static mt_tstmt *gen(pl *p) {
    mm *c = &p->m;
    mt_arena *a = c->a;
    win *w = &p->wn;
    int64_t C = w->C, OH = w->OH, OW = w->OW;
    mt_tvar *it = mm_ivar(c, "it");
    mt_texpr *iv = mm_V(c, it);
    p->n = mt_arith_bin(a, TE_FLOORDIV, iv, mm_I(c, C * OH));
    p->ch = mt_arith_bin(a, TE_FLOORMOD, mt_arith_bin(a, TE_FLOORDIV, iv, mm_I(c, OH)), mm_I(c, C));
    p->oh = mt_arith_bin(a, TE_FLOORMOD, iv, mm_I(c, OH));
    c->bv[0] = p->n, c->bv[1] = p->ch;
    p->xp = NULL;
    if (win_needs_pack(w)) {
        win_pack_layout(w);
        p->xp = mm_local_buf(c, "xp", mm_I(c, w->KH * w->wp), c->dt);
    }
    svec s = {0};
    int vl = c->vl;
    int64_t nfull = OW / vl, tail = OW % vl;
    if (nfull > 0) {
        mt_tvar *wt = mm_ivar(c, "wt");
        mm_push(c, &s, mm_loop(c, wt, mm_I(c, nfull), MT_FOR_SERIAL,
                               gen_vector(p, mt_lw_mul(&c->lw, mm_V(c, wt), mm_I(c, vl)), vl)));
    }
    if (tail) mm_push(c, &s, gen_vector(p, mm_I(c, nfull * vl), (int)tail));
    mt_tstmt *body = mm_seq(c, &s);
    if (p->xp)
        body = mt_ts_alloc(a, p->xp, mm_seq2(c, win_pack(w, c, p->xp, p->n, p->ch, 1, p->oh, fill_value(p, 1)), body));
    return mm_loop(c, it, mt_lw_mul(&c->lw, c->ext[0], mm_I(c, C * OH)), MT_FOR_PARALLEL, body);
}

/* ---- entry ------------------------------------------------------------------------- */

mt_tfunc *mt_schedule_pool_cpu(mt_arena *a, mt_tfunc *f, int *applied) {
    if (applied) *applied = 0;
    pl *p = MT_NEW(a, pl);
    mm *c = &p->m;
    c->a = c->lw.a = a;
    c->f = f;
    if (!match(p)) return f;
    c->vl = mt_target_register_lanes(mt_tfunc_target(f), c->dt);
    mt_tfunc *g = mm_scheduled(c, gen(p), NULL);
    if (applied) *applied = 1;
    return g;
}

mt_tfunc *mt_schedule_pool_pass(mt_arena *a, mt_tfunc *f) { return mt_schedule_pool_cpu(a, f, NULL); }
