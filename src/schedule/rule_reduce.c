/*
 * rule_reduce.c -- the CPU schedule of reductions over the innermost axis
 * (softmax, log_softmax, layer_norm, sum / mean / max / min over axis -1)
 * and of the row-wise work around them.
 *
 * What it matches. A loop function (block form, after inline_producers)
 * made only of stages over the same outer (spatial) axes O = (o0, ..)
 * and, for some, one inner axis r of extent N (the row):
 *
 *   RED  for o.., r:  B[o..] = F(B[o..], E(o.., r))      init B[o..] = I
 *        F one of  acc + e,  T.max/T.min(acc, e),  or legalize's
 *        NaN-propagating max/min  T.Select(e > acc or e != e, e, acc);
 *   ROW  for o..:     B[o..] = E(o..)                    (mean = sum / N)
 *   ELT  for o.., r:  Y[o.., r] = E(o.., r)              (the epilogue)
 *
 * in any number and order, plus legalize's guard for an empty symbolic row
 * (`if N == 0: B[o..] = I`, which the rule subsumes). B is a per-row value:
 * a function allocation (it becomes a scalar local) or an output of shape
 * O or (O.., 1) (keepdims; stored once per row). Y is an output of shape
 * (O.., N). E reads the inputs anywhere, per-row values at [o..] and rows
 * written by earlier stages at [o.., r]; nothing else written. B and the
 * accumulation are float32 or float64. Everything else is left to the
 * other rules.
 *
 * What it emits (in lowered form, like rule_matmul.c): one loop over the
 * rows -- T.parallel over chunks of rows of at least ~64 KiB each, a plain
 * loop when the whole function is smaller -- and in it, per row, the stages
 * in order, each a pass over the row:
 *
 *  - RED: U = 4 independent accumulators of VL = the target's vector step /
 *    sizeof lanes (mt_target_lanes: 16 float32, 8 float64) in a local buffer, so that SROA keeps them in
 *    zmm registers; the row is read as T.Ramp vectors, U of them per
 *    step, then single vectors, then a scalar tail (into its own scalar
 *    accumulator) for N % VL; then the U accumulators are combined, the VL
 *    lanes folded in a tree (VL/2, VL/4, .. 1 lanes), and the result is
 *    F(I, folded, tail). Symbolic N works the same (the loop extents are
 *    expressions).
 *  - ROW: a scalar in a one-element local buffer per per-row value.
 *  - ELT: T.Ramp vector stores and a scalar tail. The last pass of a row
 *    (an ELT stage after others) may prefetch the next row's input, a
 *    T.prefetch per vector step of each buffer the first pass reads along
 *    the row (knob prefetch; the default and why: rule_reduce_defaults.c).
 *
 * A row of 4096 float32 is 16 KiB and stays in L1/L2 between the passes,
 * so only the first pass reads it from memory.
 *
 * Blocks. Row by row, each row is a chain of dependent steps: the lane
 * fold of its max, the exponentials that need it, the fold of their sum,
 * the row's scalar math (a division, log_softmax's log), the last pass. On
 * a short row that chain is longer than the out-of-order window can cover
 * with the next rows' work, and the core waits. With c->block = B > 1
 * (knob block_rows; the default from rule_reduce_defaults.c, mt_rr_block)
 * the rows go B at a time, pass by pass: each pass runs over all B rows
 * (a loop over the block, its rows independent) before the next pass
 * starts, the per-row values in B-element locals, a ROW stage and the
 * per-row outputs in the loop of the pass before them; the last block of
 * a chunk may be partial (its loops run min(B, rows left) times). A ROW
 * stage of per-row values and constants that computes an exponential or a
 * logarithm (the matcher makes one of log_softmax's log of the row sum:
 * rule_reduce_match.c, hoist_row_math) is a T.vectorized loop of its own
 * over the block, which the vectorize pass makes one vector for the block.
 * The numerics are the row-by-row code's: the same operations per row in
 * the same order (a vector exponential of a block may differ from the
 * scalar one by the two methods' rounding, docs/codegen.md; log is one
 * method). softmax over 65536 x 32 on one core: 0.80 -> 0.51 ms,
 * log_softmax 1.28 -> 0.59. Blocks take no prefetch (the next block is
 * many rows ahead).
 *
 * Softmax: the epilogue Y = E / B (or E * B) where B is the sum of the same
 * E (exp(x - max)) computed by an earlier RED: the RED also stores E to Y,
 * and the epilogue becomes Y = Y * (1 / B), so exp runs once per element,
 * the third pass reads Y back from L1, and it multiplies by the reciprocal
 * (computed once per row) instead of dividing (a 16-lane division costs as
 * much as a third of the exp; the result may differ from e / s by one
 * more rounding, as in PyTorch's CPU softmax). (The online softmax -- running max and
 * rescaled sum in one pass -- would save the max pass over an L1-resident
 * row but needs exp twice or a rescale per vector; not needed here.)
 *
 * Numerics. The reduction is reassociated: the sum of N elements is 64 (or
 * 32) strided partial sums, combined pairwise, so its error is bounded by
 * about (N / (U VL) + log2(U VL) + 2) u sum |e_i| (u = 2^-24 for float32),
 * the same order as, and usually much smaller than, the serial (N - 1) u
 * sum |e_i|. max / min are exact in any order (the NaN-propagating form
 * gives NaN if any element is NaN; only the sign of a zero result may come
 * from another zero). Everything else (each element's E, the epilogue) is
 * computed exactly as the serial code does. layer_norm stays the two-pass
 * algorithm legalize writes (mean, then the sum of squared deviations from
 * it), numerically sound; the row is re-read from L1, not from memory.
 */
#include <math.h>
#include <string.h>

#include "schedule/knobs.h"
#include "schedule/rule_reduce.h"

#define RULE "schedule_reduce" /* its knobs (knobs.h): accumulators, lanes, parallel, chunk_kib, prefetch */

enum { PF_MAX = 4 }; /* buffers prefetched per vector step of the last pass */

static mt_texpr *I(rr *c, int64_t v) { return mt_te_i64(c->a, v); }
static mt_texpr *V(rr *c, mt_tvar *v) { return mt_te_var(c->a, v); }
static mt_texpr *Vl(rr *c, mt_tvar *v, int lanes) {
    mt_texpr *e = mt_te_var(c->a, v);
    e->lanes = lanes;
    return e;
}
static mt_tvar *ivar(rr *c, const char *n) { return mt_tvar_new(c->a, n, MT_INT64); }
static mt_texpr *add(rr *c, mt_texpr *x, mt_texpr *y) { return mt_lw_add(&c->lw, x, y); }
static mt_texpr *mul(rr *c, mt_texpr *x, mt_texpr *y) { return mt_lw_mul(&c->lw, x, y); }
static mt_texpr *sub(rr *c, mt_texpr *x, mt_texpr *y) { return mt_lw_sub(&c->lw, x, y); }
static mt_texpr *bin(rr *c, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) { return mt_arith_bin(c->a, k, x, y); }
static mt_texpr *ramp(rr *c, mt_texpr *b, int lanes) { return mt_lw_ramp(&c->lw, b, lanes); }

typedef MT_VEC(mt_tstmt *) svec;
static void push(rr *c, svec *v, mt_tstmt *s) { MT_VEC_PUSH(c->a, v, s); }
static mt_tstmt *seq(rr *c, svec *v) { return mt_ts_seq(c->a, v->data, v->len); }
static mt_tstmt *loop(rr *c, mt_tvar *v, mt_texpr *ext, mt_for_kind k, mt_tstmt *body) {
    return mt_ts_for(c->a, v, I(c, 0), ext, k, body);
}
static mt_tbuffer *local(rr *c, const char *name, int64_t n, mt_dtype dt) {
    mt_texpr *e = I(c, n);
    mt_tbuffer *b = mt_tbuffer_new(c->a, name, dt, 1, &e);
    b->scope = MT_SCOPE_LOCAL;
    return b;
}
static mt_texpr *ld(rr *c, mt_tbuffer *b, mt_texpr *ix) { return mt_te_load(c->a, b, &ix, 1); }
/* The current row's element of the per-row values' locals. */
static mt_texpr *RV(rr *c) { return c->rv_ix ? c->rv_ix : I(c, 0); }
static mt_tstmt *st(rr *c, mt_tbuffer *b, mt_texpr *ix, mt_texpr *v) { return mt_ts_store(c->a, b, &ix, 1, v); }

/* ---- the stages ---------------------------------------------------------------------- */

/* Lanes of dt: the knob lanes, else the target's step or fewer for a short
 * row (rule_reduce_defaults.c). */
static int lanes_of(const rr *c, mt_dtype dt) { return mt_rr_lanes(c, dt); }

static void push_prefetches(rr *c, svec *b, mt_texpr *r);

/* One step of a RED stage at r: e = E(r); also[r] = e; acc[ix] = F(acc[ix], e).
 * pf: the vector step's first element, where the pass prefetches the next
 * row (NULL: it does not). */
static mt_tstmt *red_step(rr *c, const stage *s, mt_texpr *r, mt_tbuffer *acc, mt_texpr *ix, int lanes,
                          mt_texpr *pf) {
    mt_tvar *ev = mt_tvar_new(c->a, "e", s->buf->dtype);
    mt_texpr *e = Vl(c, ev, lanes);
    svec b = {0};
    if (pf) push_prefetches(c, &b, pf);
    if (s->also) push(c, &b, mt_ts_store(c->a, mt_lw_flat(&c->lw, s->also)->flat,
                                          (mt_texpr *[]){mt_rr_row_ix(c, s->also, r)}, 1, e));
    push(c, &b, st(c, acc, ix, mt_rr_fapply(c, s, ld(c, acc, ix), e)));
    mt_texpr *val = mt_rr_lower(c, s, s->value, r);
    if (val->lanes != lanes) val = mt_te_broadcast(c->a, val, lanes);
    return mt_ts_let(c->a, ev, val, seq(c, &b));
}

static mt_texpr *identity(rr *c, const stage *s, int lanes) {
    double v = s->fk == F_ADD ? 0.0 : s->fk == F_MAX ? -INFINITY : INFINITY;
    mt_texpr *z = mt_te_float(c->a, s->buf->dtype, v);
    return lanes == 1 ? z : mt_te_broadcast(c->a, z, lanes);
}

/* A RED stage's pass; pf: the pass that prefetches the next row. */
static mt_tstmt *gen_red(rr *c, const stage *s, rowval *out, bool pf) {
    mt_dtype dt = s->buf->dtype;
    int vl = lanes_of(c, dt), U = mt_rr_accumulators(c, vl);
    mt_tbuffer *acc = local(c, "acc", (int64_t)U * vl, dt);
    mt_tbuffer *tail = local(c, "acc_tail", 1, dt);
    svec b = {0};
    for (int u = 0; u < U; u++) push(c, &b, st(c, acc, ramp(c, I(c, (int64_t)u * vl), vl), identity(c, s, vl)));
    push(c, &b, st(c, tail, I(c, 0), identity(c, s, 1)));
    /* U vectors per step */
    mt_tvar *vb = ivar(c, "rb");
    svec u4 = {0};
    for (int u = 0; u < U; u++) {
        mt_texpr *at = add(c, mul(c, V(c, vb), I(c, (int64_t)U * vl)), I(c, (int64_t)u * vl));
        push(c, &u4, red_step(c, s, ramp(c, at, vl), acc, ramp(c, I(c, (int64_t)u * vl), vl), vl, pf ? at : NULL));
    }
    mt_texpr *nb = bin(c, TE_FLOORDIV, c->N, I(c, (int64_t)U * vl));
    push(c, &b, loop(c, vb, nb, MT_FOR_SERIAL, seq(c, &u4)));
    /* single vectors */
    mt_texpr *base1 = mul(c, nb, I(c, (int64_t)U * vl));
    mt_texpr *nv = bin(c, TE_FLOORDIV, sub(c, c->N, base1), I(c, vl));
    mt_tvar *vv = ivar(c, "rv");
    int64_t k;
    if (!mt_te_is_const_int(nv, &k) || k > 0) {
        mt_texpr *at = add(c, base1, mul(c, V(c, vv), I(c, vl)));
        push(c, &b, loop(c, vv, nv, MT_FOR_SERIAL, red_step(c, s, ramp(c, at, vl), acc, ramp(c, I(c, 0), vl), vl, pf ? at : NULL)));
    }
    /* the scalar tail */
    mt_texpr *base2 = mul(c, bin(c, TE_FLOORDIV, c->N, I(c, vl)), I(c, vl));
    mt_texpr *nt = sub(c, c->N, base2);
    if (!mt_te_is_const_int(nt, &k) || k > 0) {
        mt_tvar *t = ivar(c, "rt");
        push(c, &b, loop(c, t, nt, MT_FOR_SERIAL, red_step(c, s, add(c, base2, V(c, t)), tail, I(c, 0), 1, NULL)));
    }
    /* combine the accumulators, fold the lanes */
    for (int u = 1; u < U; u++) {
        mt_texpr *x = ramp(c, I(c, 0), vl), *y = ramp(c, I(c, (int64_t)u * vl), vl);
        push(c, &b, st(c, acc, x, mt_rr_fapply(c, s, ld(c, acc, x), ld(c, acc, y))));
    }
    for (int w = vl / 2; w >= 1; w /= 2) {
        mt_texpr *x = ramp(c, I(c, 0), w), *y = ramp(c, I(c, w), w);
        push(c, &b, st(c, acc, x, mt_rr_fapply(c, s, ld(c, acc, x), ld(c, acc, y))));
    }
    mt_texpr *h = mt_rr_fapply(c, s, ld(c, acc, I(c, 0)), ld(c, tail, I(c, 0)));
    push(c, &b, st(c, out->local, RV(c), mt_rr_fapply(c, s, mt_rr_lower(c, s, s->init, I(c, 0)), h)));
    return mt_ts_alloc(c->a, acc, mt_ts_alloc(c->a, tail, seq(c, &b)));
}

/* The outer indices of row number row (as gen_row's lets compute them). */
static void row_indices(rr *c, mt_texpr *row, mt_texpr **o) {
    mt_texpr *inner = I(c, 1);
    for (int k = c->ns - 1; k >= 0; k--) {
        mt_texpr *q = bin(c, TE_FLOORDIV, row, inner);
        o[k] = k == 0 ? q : bin(c, TE_FLOORMOD, q, c->O[k]);
        inner = mul(c, inner, c->O[k]);
    }
}

static bool moves_with_row(const rr *c, const mt_texpr *ix) {
    for (int i = 0; i < 2; i++)
        if (c->rowvars[i] && mt_texpr_uses_var(ix, c->rowvars[i])) return true;
    return false;
}

typedef struct pf_scan {
    rr *c;
    mt_tbuffer *bufs[PF_MAX];
    mt_texpr *loads[PF_MAX];
    int n;
} pf_scan;

static void pf_load(mt_tvisitor *v, const mt_texpr *e) {
    pf_scan *p = v->ctx;
    if (e->kind == TE_LOAD && e->lanes == 1 && e->nargs == 1 && moves_with_row(p->c, e->args[0])) {
        for (int i = 0; i < p->n; i++)
            if (p->bufs[i] == e->buf) return; /* one line per buffer */
        if (p->n == PF_MAX) return;
        p->bufs[p->n] = e->buf, p->loads[p->n++] = (mt_texpr *)e;
        return;
    }
    mt_tvisit_expr_children(v, e);
}

/* Into b: a prefetch of each buffer the memory pass reads along the row,
 * at element r of the next row (the last row: its own), so that the next
 * row is on its way while this one's last pass runs (mt_rr_prefetch). */
static void push_prefetches(rr *c, svec *b, mt_texpr *r) {
    mt_texpr *cur[MT_MAX_RANK];
    memcpy(cur, c->oval, sizeof cur);
    row_indices(c, bin(c, TE_MIN, add(c, c->row, I(c, 1)), sub(c, c->M, I(c, 1))), c->oval);
    const stage *mem = &c->st[mt_rr_memory_stage(c)]; /* (there is one: a prefetching pass follows it) */
    mt_texpr *e = mt_rr_lower(c, mem, mem->value, r);
    memcpy(c->oval, cur, sizeof cur);
    pf_scan p = {.c = c};
    mt_tvisitor v = {pf_load, NULL, &p};
    mt_tvisit_expr(&v, e);
    for (int i = 0; i < p.n; i++) push(c, b, mt_ts_eval(c->a, mt_te_prefetch(c->a, p.loads[i])));
}

/* An ELT stage's pass; pf: the pass that prefetches the next row. */
static mt_tstmt *gen_elt(rr *c, const stage *s, bool pf) {
    int vl = lanes_of(c, s->buf->dtype);
    mt_tbuffer *fb = mt_lw_flat(&c->lw, s->buf)->flat;
    svec b = {0};
    mt_texpr *nv = bin(c, TE_FLOORDIV, c->N, I(c, vl));
    int64_t k;
    if (!mt_te_is_const_int(nv, &k) || k > 0) {
        mt_tvar *v = ivar(c, "rv");
        mt_texpr *r = ramp(c, mul(c, V(c, v), I(c, vl)), vl);
        svec body = {0};
        if (pf) push_prefetches(c, &body, mul(c, V(c, v), I(c, vl)));
        push(c, &body, mt_ts_store(c->a, fb, (mt_texpr *[]){mt_rr_row_ix(c, s->buf, r)}, 1, mt_rr_lower(c, s, s->value, r)));
        push(c, &b, loop(c, v, nv, MT_FOR_SERIAL, seq(c, &body)));
    }
    mt_texpr *base = mul(c, nv, I(c, vl));
    mt_texpr *nt = sub(c, c->N, base);
    if (!mt_te_is_const_int(nt, &k) || k > 0) {
        mt_tvar *t = ivar(c, "rt");
        mt_texpr *r = add(c, base, V(c, t));
        mt_tstmt *body = mt_ts_store(c->a, fb, (mt_texpr *[]){mt_rr_row_ix(c, s->buf, r)}, 1, mt_rr_lower(c, s, s->value, r));
        push(c, &b, loop(c, t, nt, MT_FOR_SERIAL, body));
    }
    return seq(c, &b);
}

/* The stage whose pass prefetches the next row: the first pass over the row
 * after the one that reads it from memory, so that the next row has the
 * longest time to arrive (softmax: the pass of the exps, not the short one
 * that scales them). -1: none. */
static int pf_stage(const rr *c) { return mt_rr_prefetch(c) ? mt_rr_prefetch_stage(c) : -1; }

/* Stage i's statements for the current row (c->oval set). */
static mt_tstmt *stage_stmt(rr *c, int i, int pf) {
    const stage *s = &c->st[i];
    if (s->kind == ST_RED) return gen_red(c, s, find_rv(c, s->buf), i == pf);
    if (s->kind == ST_ELT) return gen_elt(c, s, i == pf);
    return st(c, find_rv(c, s->buf)->local, RV(c), mt_rr_lower(c, s, s->value, NULL));
}

/* The current row's per-row values that are outputs, stored. */
static mt_tstmt *outputs_stmt(rr *c) {
    svec b = {0};
    for (int i = 0; i < c->nrv; i++) {
        rowval *v = &c->rv[i];
        if (!v->param) continue;
        mt_texpr *idx[MT_MAX_RANK + 1];
        for (int k = 0; k < c->ns; k++) idx[k] = c->oval[k];
        if (v->buf->ndim == c->ns + 1) idx[c->ns] = I(c, 0);
        push(c, &b, mt_lw_store(&c->lw, v->buf, idx, v->buf->ndim, ld(c, v->local, RV(c))));
    }
    return seq(c, &b);
}

/* body inside the allocations of the per-row values' locals. */
static mt_tstmt *with_locals(rr *c, mt_tstmt *body) {
    for (int i = c->nrv - 1; i >= 0; i--) body = mt_ts_alloc(c->a, c->rv[i].local, body);
    return body;
}

/* One row (c->oval set): the stages in order, then the per-row outputs. */
static mt_tstmt *stages_row(rr *c, void *ctx) {
    (void)ctx;
    svec b = {0};
    int pf = pf_stage(c);
    for (int i = 0; i < c->nst; i++) push(c, &b, stage_stmt(c, i, pf));
    push(c, &b, outputs_stmt(c));
    return with_locals(c, seq(c, &b));
}

static mt_tstmt *gen_row(rr *c, mt_texpr *row, mt_rr_row_fn fn, void *ctx);

/* One step of a block for the current row: stages [from, to), then the
 * per-row outputs when out. */
typedef struct block_part {
    int from, to;
    bool out;
    bool vec; /* a ROW stage of per-row values and constants: one vector loop over the block */
} block_part;

static mt_tstmt *block_step(rr *c, void *ctx) {
    const block_part *p = ctx;
    svec b = {0};
    for (int i = p->from; i < p->to; i++) push(c, &b, stage_stmt(c, i, -1));
    if (p->out) push(c, &b, outputs_stmt(c));
    return seq(c, &b);
}

/* Rows [first, first + rows), rows <= c->block, pass by pass
 * (rule_reduce_defaults.c, mt_rr_block): each pass over every row of the
 * block before the next pass, the per-row values in elements of their
 * locals. A ROW stage goes with the pass before it and the per-row outputs
 * with the last: per row, no loop of their own (a scalar loop that LLVM's
 * vectorizer would take, at a cost in compile time); but a ROW stage of
 * per-row values computing an expanded function (exp, log, ...: tir.h) is a
 * T.vectorized loop of its own, one vector for the block. */
static mt_tstmt *stages_block(rr *c, mt_texpr *first, mt_texpr *rows, void *ctx) {
    (void)ctx;
    block_part parts[RR_MAXST + 1];
    int np = 0;
    for (int i = 0; i < c->nst; i++) {
        const stage *s = &c->st[i];
        bool call = false;
        bool vec = s->kind == ST_ROW && mt_rr_row_only(c, s->value, &call) && call;
        if (np == 0 || s->kind != ST_ROW || vec || parts[np - 1].vec) parts[np++] = (block_part){i, i + 1, false, vec};
        else parts[np - 1].to = i + 1;
    }
    bool any_out = false;
    for (int i = 0; i < c->nrv; i++) any_out = any_out || c->rv[i].param;
    if (any_out && parts[np - 1].vec) parts[np++] = (block_part){c->nst, c->nst, false, false};
    parts[np - 1].out = !parts[np - 1].vec;
    svec b = {0};
    for (int p = 0; p < np; p++) {
        mt_tvar *bi = ivar(c, "bi");
        c->rv_ix = V(c, bi);
        if (parts[p].vec) { /* no row index needed: the vectorize pass makes it vectors */
            const stage *s = &c->st[parts[p].from];
            mt_tstmt *one = st(c, find_rv(c, s->buf)->local, V(c, bi), mt_rr_lower(c, s, s->value, NULL));
            push(c, &b, loop(c, bi, rows, MT_FOR_VECTORIZED, one));
            continue;
        }
        push(c, &b, loop(c, bi, rows, MT_FOR_SERIAL, gen_row(c, add(c, first, V(c, bi)), block_step, &parts[p])));
    }
    c->rv_ix = NULL;
    return with_locals(c, seq(c, &b));
}

/* Row number row: its outer indices (c->oval, lets of row's // and %),
 * then fn's statements. */
static mt_tstmt *gen_row(rr *c, mt_texpr *row, mt_rr_row_fn fn, void *ctx) {
    mt_tvar *ov[MT_MAX_RANK];
    mt_texpr *ovexpr[MT_MAX_RANK];
    row_indices(c, row, ovexpr);
    for (int k = c->ns - 1; k >= 0; k--) {
        ov[k] = ivar(c, "o");
        c->oval[k] = c->ns == 1 ? row : V(c, ov[k]);
    }
    c->row = row;
    mt_tstmt *body = fn(c, ctx);
    if (c->ns > 1)
        for (int k = c->ns - 1; k >= 0; k--) body = mt_ts_let(c->a, ov[k], ovexpr[k], body);
    return body;
}

mt_tstmt *mt_rr_row(rr *c, mt_texpr *row, mt_rr_row_fn fn, void *ctx) { return gen_row(c, row, fn, ctx); }

/* Rows [first, first + cnt): in blocks of c->block rows (blk; the last
 * block may be partial), else one by one (fn). */
static mt_tstmt *rows_of(rr *c, mt_tvar *ri, mt_texpr *first, mt_texpr *cnt, mt_rr_row_fn fn,
                         mt_rr_block_fn blk, void *ctx) {
    if (!blk || c->block <= 1) return loop(c, ri, cnt, MT_FOR_SERIAL, gen_row(c, add(c, first, V(c, ri)), fn, ctx));
    mt_tvar *q = ivar(c, "blk");
    mt_texpr *B = I(c, c->block), *at = mul(c, V(c, q), B);
    int64_t cc;
    bool whole = mt_te_is_const_int(cnt, &cc) && cc % c->block == 0; /* else the last block is partial */
    mt_texpr *rows = whole ? B : bin(c, TE_MIN, B, sub(c, cnt, at));
    mt_texpr *nb = bin(c, TE_FLOORDIV, add(c, cnt, I(c, c->block - 1)), B);
    return loop(c, q, nb, MT_FOR_SERIAL, blk(c, add(c, first, at), rows, ctx));
}

/* All rows: chunks of at least ~64 KiB across threads, or one plain loop
 * (rule_reduce.h). */
mt_tstmt *mt_rr_rows(rr *c, mt_rr_row_fn fn, void *ctx) { return mt_rr_rows_blocked(c, fn, NULL, ctx); }

/* The rows (int64), the bytes of a chunk and the widest per-row value
 * (es), the elements of a chunk (per), and whether the rows run as one
 * plain loop: not parallel, or all of them within one chunk. */
typedef struct chunking {
    int64_t bytes, es, per;
} chunking;

static mt_texpr *all_rows(rr *c, chunking *ck, bool *plain) {
    mt_texpr *M = I(c, 1);
    for (int k = 0; k < c->ns; k++) M = mul(c, M, mt_te_cast(c->a, MT_INT64, c->O[k]));
    int64_t Mc, Nc;
    ck->bytes = mt_knob_get(c->f, RULE, "chunk_kib", 64) * 1024;
    ck->es = 4; /* elements of a chunk: 64 KiB of the widest per-row value */
    for (int i = 0; i < c->nrv; i++)
        if ((int64_t)mt_dtype_size(c->rv[i].buf->dtype) > ck->es) ck->es = (int64_t)mt_dtype_size(c->rv[i].buf->dtype);
    ck->per = ck->bytes / ck->es > 0 ? ck->bytes / ck->es : 1;
    bool known = mt_te_is_const_int(M, &Mc) && mt_te_is_const_int(c->N, &Nc);
    if (known && Nc < 1) Nc = 1;
    *plain = !mt_knob_get(c->f, RULE, "parallel", 1) || (known && Mc * Nc <= ck->per);
    return M;
}

/* Rows per parallel chunk for constant M and N, spread evenly over the
 * chunks, whole blocks of B rows. */
static int64_t chunk_rows(rr *c, int64_t Mc, int64_t Nc, const chunking *ck, int64_t B) {
    int64_t pc = mt_rr_chunk_elems(c, ck->bytes, ck->es, Mc * Nc);
    int64_t r = pc > 0 && Nc < pc ? pc / Nc : 1, nch = (Mc + r - 1) / r;
    int64_t want = (Mc + nch - 1) / nch;
    return want >= B ? (want + B - 1) / B * B : want;
}

/* Rows per chunk for a constant N (Nc >= 1): spread evenly for a constant
 * M, else a chunk's worth of elements. */
static int64_t const_chunk(rr *c, mt_texpr *M, int64_t Nc, const chunking *ck, int64_t B) {
    int64_t Mc;
    if (mt_te_is_const_int(M, &Mc)) return chunk_rows(c, Mc, Nc, ck, B);
    return Nc >= ck->per ? 1 : ck->per / Nc;
}

int64_t mt_rr_chunk_rows(rr *c) {
    chunking ck;
    int64_t Nc;
    bool plain;
    mt_texpr *M = all_rows(c, &ck, &plain);
    if (plain) return 0;
    if (!mt_te_is_const_int(c->N, &Nc)) return -1;
    return const_chunk(c, M, Nc < 1 ? 1 : Nc, &ck, 1);
}

mt_tstmt *mt_rr_rows_blocked(rr *c, mt_rr_row_fn fn, mt_rr_block_fn blk, void *ctx) {
    chunking ck;
    int64_t Mc, Nc;
    bool plain;
    mt_texpr *M = all_rows(c, &ck, &plain), *N = mt_te_cast(c->a, MT_INT64, c->N);
    mt_tvar *row = ivar(c, "row");
    c->M = M;
    c->rowvars[0] = row, c->rowvars[1] = NULL;
    if (plain) return rows_of(c, row, I(c, 0), M, fn, blk, ctx);
    mt_texpr *rb = mt_te_is_const_int(N, &Nc)
                       ? I(c, const_chunk(c, M, Nc < 1 ? 1 : Nc, &ck, blk && c->block > 1 ? c->block : 1))
                       : bin(c, TE_MAX, I(c, 1), bin(c, TE_FLOORDIV, I(c, ck.per), bin(c, TE_MAX, N, I(c, 1))));
    mt_tvar *ch = ivar(c, "chunk"), *ri = ivar(c, "ri");
    c->rowvars[0] = ch, c->rowvars[1] = ri;
    mt_texpr *first = mul(c, V(c, ch), rb);
    mt_texpr *nch = bin(c, TE_FLOORDIV, sub(c, add(c, M, rb), I(c, 1)), rb);
    int64_t rbc;
    bool whole = mt_te_is_const_int(M, &Mc) && mt_te_is_const_int(rb, &rbc) && Mc % rbc == 0;
    mt_texpr *cnt = whole ? rb : bin(c, TE_MIN, rb, sub(c, M, first));
    return loop(c, ch, nch, MT_FOR_PARALLEL, rows_of(c, ri, first, cnt, fn, blk, ctx));
}

/* ---- entry ------------------------------------------------------------------------------ */

/* The knob values the rule used, for mt_tfunc.chosen: lanes and
 * accumulators when every stage has one dtype (given back, a value applies
 * to all), parallel, and chunk_kib when given (else computed per shape). */
static const mt_knobs *chosen(rr *c) {
    mt_knobs *k = MT_NEW(c->a, mt_knobs);
    k->rule = RULE;
    bool one = true;
    for (int i = 1; i < c->nst; i++) one = one && c->st[i].buf->dtype == c->st[0].buf->dtype;
    if (one && c->nst > 0) {
        int vl = lanes_of(c, c->st[0].buf->dtype);
        mt_knobs_set(k, "lanes", vl);
        mt_knobs_set(k, "accumulators", mt_rr_accumulators(c, vl));
    }
    mt_knobs_set(k, "parallel", mt_knob_get(c->f, RULE, "parallel", 1));
    mt_knobs_set(k, "prefetch", mt_rr_prefetch(c));
    mt_knobs_set(k, "block_rows", c->block);
    if (!mt_knob_get(c->f, RULE, "primitives", 1)) mt_knobs_set(k, "primitives", 0);
    if (mt_knob_given(c->f, RULE, "chunk_kib")) mt_knobs_set(k, "chunk_kib", mt_knob_get(c->f, RULE, "chunk_kib", 64));
    return k;
}

/* The matched stages of f, or NULL. */
static rr *matched(mt_arena *a, mt_tfunc *f) {
    rr *c = MT_NEW(a, rr);
    c->a = c->lw.a = a;
    c->f = f;
    return mt_reduce_match(c) ? c : NULL;
}

mt_tfunc *mt_schedule_reduce_cpu(mt_arena *a, mt_tfunc *f, int *applied) {
    if (applied) *applied = 0;
    rr *c = matched(a, f);
    if (!c) { /* the same with its reduce loop put inside (sum(x.T, axis=0)) */
        mt_tfunc *inner = mt_reduce_inner(a, f);
        c = inner ? matched(a, inner) : NULL;
    }
    if (!c) { /* argmax / argmin */
        mt_tfunc *g = mt_argreduce_cpu(a, f);
        if (g != f && applied) *applied = 1;
        return g;
    }
    c->block = mt_rr_block(c);
    mt_tfunc *g;
    if (c->f == f && mt_knob_get(f, RULE, "primitives", 1) && (g = mt_rr_primitives(c))) { /* rule_reduce_prims.c */
        if (applied) *applied = 1;
        return mt_knobs_chose(a, mt_knobs_mark(a, g, f, RULE), chosen(c));
    }
    for (int i = 0; i < c->nrv; i++) {
        rowval *v = &c->rv[i];
        v->local = local(c, v->buf->name, c->block, v->buf->dtype);
    }
    g = mt_rr_function(c, mt_rr_rows_blocked(c, stages_row, stages_block, NULL), "reduce_rows");
    if (applied) *applied = 1;
    return mt_knobs_chose(a, mt_knobs_mark(a, g, f, RULE), chosen(c));
}

mt_tfunc *mt_schedule_reduce_pass(mt_arena *a, mt_tfunc *f) { return mt_schedule_reduce_cpu(a, f, NULL); }
