/*
 * gpu_argreduce.c -- the GPU schedule of argmax / argmin over the last
 * axis: a block per row, or a group of a warp's lanes per row for short
 * rows (the shapes of gpu_reduce.c: mt_gpu_row_threads, mt_gpu_row_group;
 * its rows' scaffolding too: mt_gpu_row_outer_*, mt_gpu_warp_rows_*),
 * each thread scanning its strided elements, then (value, index) pairs
 * combined by warp shuffles.
 *
 * It takes what argreduce.h matches. The kernel, for a
 * block per row of T threads (W warps):
 *
 *     for tx in T.thread_binding(T, thread="threadIdx.x"):
 *         bv[0] = I; bi[0] = 0
 *         for jj in range(ceildiv(N, T)):
 *             if j < N:  (j = jj * T + tx)
 *                 e = E(row, j)
 *                 if better(e, bv[0]): bv[0] = e; bi[0] = j     the CPU's test
 *         sv[0] = T.shfl_xor(bv[0], 16, 32); si[0] = T.shfl_xor(bi[0], 16, 32)
 *         if takes(sv[0], si[0], bv[0], bi[0]): bv[0] = sv[0]; bi[0] = si[0]
 *         ... (8, 4, 2, 1), then W values through shared memory as in
 *         gpu_reduce.c, and thread 0 stores bi[0].
 *
 * Semantics: argreduce.h (any tree of the threads' scans meeting by
 * `takes` gives the serial scan's answer).
 */
#include "schedule/gpu_rules.h"

#include <string.h>

#include "schedule/argreduce.h"
#include "schedule/knobs.h"

#define RULE "gpu_argreduce_rows" /* its knobs (knobs.c): threads, warp_rows, as gpu_reduce_rows' */

typedef MT_VEC(mt_tstmt *) svec;

typedef struct ar {
    mt_argred m;           /* the match (argreduce.h) */
    /* while generating: */
    int threads, group, warp;
    mt_tvar *tx;
    mt_texpr *lane, *valid;
    mt_tbuffer *bv, *bi, *sv, *si;
    svec cur, phases;
} ar;

/* ---- the kernel ------------------------------------------------------------------ */

static mt_texpr *I(ar *g, int64_t v) { return mt_te_i64(g->m.c->a, v); }
static mt_texpr *V(ar *g, mt_tvar *v) { return mt_te_var(g->m.c->a, v); }
static mt_texpr *bin(ar *g, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) { return mt_arith_bin(g->m.c->a, k, x, y); }
static mt_texpr *ld0(ar *g, mt_tbuffer *b) { return mt_te_load(g->m.c->a, b, (mt_texpr *[]){I(g, 0)}, 1); }
static mt_tstmt *st(ar *g, mt_tbuffer *b, mt_texpr *ix, mt_texpr *v) { return mt_ts_store(g->m.c->a, b, &ix, 1, v); }
static mt_tstmt *st0(ar *g, mt_tbuffer *b, mt_texpr *v) { return st(g, b, I(g, 0), v); }
static mt_tstmt *seq2(ar *g, mt_tstmt *x, mt_tstmt *y) { return mt_ts_seq(g->m.c->a, (mt_tstmt *[]){x, y}, 2); }
static void emit(ar *g, mt_tstmt *s) { MT_VEC_PUSH(g->m.c->a, &g->cur, s); }

static mt_tbuffer *scoped(ar *g, const char *name, int64_t n, mt_dtype dt, mt_scope scope) {
    mt_texpr *e = I(g, n);
    mt_tbuffer *b = mt_tbuffer_new(g->m.c->a, name, dt, 1, &e);
    b->scope = scope;
    return b;
}

static void cut(ar *g) {
    if (!g->cur.len) return;
    mt_tstmt *l = mt_ts_for(g->m.c->a, g->tx, I(g, 0), I(g, g->threads), MT_FOR_THREAD,
                            mt_ts_seq(g->m.c->a, g->cur.data, g->cur.len));
    l->thread_tag = "threadIdx.x";
    MT_VEC_PUSH(g->m.c->a, &g->phases, l);
    g->cur = (svec){0};
}

/* The thread's scan of its elements j = jj * G + lane, in increasing order. */
static mt_tstmt *scan(ar *g) {
    rr *c = g->m.c;
    mt_tvar *jj = mt_tvar_new(c->a, "jj", MT_INT64), *ev = mt_tvar_new(c->a, "e", g->m.dt);
    mt_texpr *G = I(g, g->group), *N = mt_te_cast(c->a, MT_INT64, c->N);
    mt_texpr *j = bin(g, TE_ADD, bin(g, TE_MUL, V(g, jj), G), g->lane);
    mt_tstmt *take = seq2(g, st0(g, g->bv, V(g, ev)), st0(g, g->bi, j));
    mt_tstmt *up = mt_ts_if(c->a, mt_argred_better(&g->m, V(g, ev), ld0(g, g->bv)), take, NULL);
    mt_tstmt *body = mt_ts_let(c->a, ev, mt_argred_value(&g->m, j), up);
    int64_t n;
    if (!mt_te_is_const_int(N, &n) || n % g->group != 0) body = mt_ts_if(c->a, bin(g, TE_LT, j, N), body, NULL);
    mt_texpr *steps = bin(g, TE_FLOORDIV, bin(g, TE_ADD, N, I(g, g->group - 1)), G);
    mt_tstmt *l = mt_ts_for(c->a, jj, I(g, 0), steps, MT_FOR_SERIAL, body);
    return g->valid ? mt_ts_if(c->a, g->valid, l, NULL) : l;
}

/* The butterfly over masks from .. 1 of the given width on (bv, bi). */
static void butterfly(ar *g, int from, int width) {
    mt_arena *a = g->m.c->a;
    for (int m = from; m >= 1; m /= 2) {
        emit(g, st0(g, g->sv, mt_te_shfl_xor(a, ld0(g, g->bv), m, width)));
        emit(g, st0(g, g->si, mt_te_shfl_xor(a, ld0(g, g->bi), m, width)));
        mt_texpr *t = mt_argred_takes(&g->m, ld0(g, g->sv), ld0(g, g->si), ld0(g, g->bv), ld0(g, g->bi));
        emit(g, mt_ts_if(a, t, seq2(g, st0(g, g->bv, ld0(g, g->sv)), st0(g, g->bi, ld0(g, g->si))), NULL));
    }
}

/* A block per row of W > 1 warps: the warps' pairs through shared memory. */
static void across_warps(ar *g, mt_tbuffer *wv, mt_tbuffer *wi) {
    int W = g->threads / g->warp;
    mt_texpr *w = bin(g, TE_FLOORDIV, V(g, g->tx), I(g, g->warp));
    mt_texpr *first = bin(g, TE_EQ, bin(g, TE_FLOORMOD, V(g, g->tx), I(g, g->warp)), I(g, 0));
    emit(g, mt_ts_if(g->m.c->a, first, seq2(g, st(g, wv, w, ld0(g, g->bv)), st(g, wi, w, ld0(g, g->bi))), NULL));
    cut(g);
    mt_texpr *k = bin(g, TE_FLOORMOD, V(g, g->tx), I(g, W));
    emit(g, st0(g, g->bv, mt_te_load(g->m.c->a, wv, &k, 1)));
    emit(g, st0(g, g->bi, mt_te_load(g->m.c->a, wi, &k, 1)));
    butterfly(g, W / 2, g->warp);
}

/* The statements of a row (c->oval set); the row's first lane stores the index. */
static void gen_row(ar *g, mt_tbuffer *wv, mt_tbuffer *wi) {
    rr *c = g->m.c;
    emit(g, st0(g, g->bv, mt_te_cast(c->a, g->m.dt, g->m.ident)));
    emit(g, st0(g, g->bi, I(g, 0)));
    emit(g, scan(g));
    int width = g->group < g->warp ? g->group : g->warp;
    butterfly(g, width / 2, width);
    if (wv) across_warps(g, wv, wi);
    mt_texpr *idx[MT_MAX_RANK + 1];
    for (int k = 0; k < c->ns; k++) idx[k] = c->oval[k];
    idx[c->ns] = I(g, 0);
    mt_texpr *first = bin(g, TE_EQ, g->lane, I(g, 0));
    if (g->valid) first = mt_te_bin(c->a, TE_AND, g->valid, first);
    emit(g, mt_ts_if(c->a, first, mt_lw_store(&c->lw, g->m.out, idx, g->m.out_nd, ld0(g, g->bi)), NULL));
}

static mt_tstmt *with_locals(ar *g, mt_tstmt *body) {
    mt_tbuffer *bs[4] = {g->bv, g->bi, g->sv, g->si};
    for (int i = 3; i >= 0; i--) body = mt_ts_alloc(g->m.c->a, bs[i], body);
    return body;
}

static mt_tstmt *block_rows(ar *g, mt_texpr *M) {
    rr *c = g->m.c;
    mt_tvar *row = mt_tvar_new(c->a, "row", MT_INT64), *ov[MT_MAX_RANK];
    mt_gpu_row_outer_vars(c, row, ov);
    g->lane = V(g, g->tx);
    int W = g->threads / g->warp;
    mt_tbuffer *wv = W > 1 ? scoped(g, "best_warps", W, g->m.dt, MT_SCOPE_SHARED) : NULL;
    mt_tbuffer *wi = W > 1 ? scoped(g, "index_warps", W, MT_INT64, MT_SCOPE_SHARED) : NULL;
    gen_row(g, wv, wi);
    cut(g);
    mt_tstmt *body = with_locals(g, mt_ts_seq(c->a, g->phases.data, g->phases.len));
    if (wv) body = mt_ts_alloc(c->a, wv, mt_ts_alloc(c->a, wi, body));
    mt_tstmt *l = mt_ts_for(c->a, row, I(g, 0), M, MT_FOR_THREAD, mt_gpu_row_outer_lets(c, row, ov, body));
    l->thread_tag = "blockIdx.x";
    return l;
}

static mt_tstmt *warp_rows(ar *g, mt_texpr *M) {
    mt_gpu_warp_rows w;
    mt_gpu_warp_rows_begin(&w, g->m.c, g->tx, g->threads, g->group, M);
    g->lane = w.lane, g->valid = w.valid;
    gen_row(g, NULL, NULL);
    mt_tstmt *phase = mt_gpu_warp_rows_phase(&w, g->cur.data, g->cur.len);
    g->cur = (svec){0};
    emit(g, phase);
    cut(g);
    return mt_gpu_warp_rows_loop(&w, with_locals(g, g->phases.data[0]));
}

mt_tfunc *mt_schedule_gpu_argreduce(mt_arena *a, mt_tfunc *f) {
    const mt_target_desc *t = mt_tfunc_target(f);
    if (t->kind != MT_TARGET_CUDA || t->warp_size < 1 || (t->warp_size & (t->warp_size - 1)) ||
        t->max_threads_per_block % t->warp_size)
        return f; /* whole warps of a power of two lanes */
    ar *g = MT_NEW(a, ar);
    g->m.c = MT_NEW(a, rr);
    g->m.c->a = g->m.c->lw.a = a;
    g->m.c->f = f;
    if (!mt_argred_match(&g->m)) return f;
    int group = mt_knob_get(f, RULE, "warp_rows", 1) ? mt_gpu_row_group(g->m.c->N, g->m.c->O, g->m.c->ns, t) : 0;
    g->warp = t->warp_size;
    g->threads = group ? MT_GPU_ROW_WARP_BLOCK : mt_gpu_row_knob_threads(f, RULE, t, mt_gpu_row_threads(g->m.c->N, t));
    g->group = group ? group : g->threads;
    g->tx = mt_tvar_new(a, "tx", MT_INT64);
    g->bv = scoped(g, "best", 1, g->m.dt, MT_SCOPE_LOCAL);
    g->bi = scoped(g, "index", 1, MT_INT64, MT_SCOPE_LOCAL);
    g->sv = scoped(g, "best_shfl", 1, g->m.dt, MT_SCOPE_LOCAL);
    g->si = scoped(g, "index_shfl", 1, MT_INT64, MT_SCOPE_LOCAL);
    mt_texpr *M = I(g, 1);
    for (int k = 0; k < g->m.c->ns; k++) M = bin(g, TE_MUL, M, mt_te_cast(a, MT_INT64, g->m.c->O[k]));
    mt_tstmt *body = group ? warp_rows(g, M) : block_rows(g, M);
    mt_tfunc *h = mt_rr_function(g->m.c, body, group ? "gpu_argreduce_rows (a warp per row)" : "gpu_argreduce_rows");
    mt_knobs chosen = {RULE, {{"warp_rows", group != 0}, {"threads", g->threads}}, group ? 1 : 2};
    return mt_knobs_chose(a, mt_knobs_mark(a, h, f, RULE), &chosen);
}
