/*
 * gpu_argreduce.c -- the GPU schedule of argmax / argmin over the last
 * axis: a block per row, or a group of a warp's lanes per row for short
 * rows (the shapes of gpu_reduce.c: mt_gpu_row_threads, mt_gpu_row_group;
 * its rows' scaffolding too: mt_gpu_row_outer_*, mt_gpu_warp_rows_*),
 * each thread scanning its strided elements, then (value, index) pairs
 * combined by warp shuffles.
 *
 * It takes what legalize_reduce.c makes of argmax(x, axis=-1) (keepdims or
 * not, x of any rank, an elementwise producer inlined into x's load): one
 * nest over x's dims, the last one reduced, around one block
 *
 *     with T.init(): best[o..] = I; out[o..] = 0
 *     if E > best[o..] or E != E and best[o..] == best[o..]:   (argmin: <)
 *         best[o..] = E; out[o..] = r
 *
 * (with, for a symbolic row length, a fill of out with 0 for empty rows in
 * front: every row's result here is already 0 then). The kernel, for a
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
 * Semantics (the CPU's, NumPy's): the first index of the largest value,
 * or of the first NaN when there is one. A thread's scan keeps the first
 * of its elements. Two partial results over disjoint sets of indices meet
 * by `takes`: the other pair wins when its value is better (greater;
 * argmin: less), or NaN while this one's is not, or when the values tie
 * (equal, or both NaN) and its index is smaller. That is associative and
 * commutative, so any tree gives the serial scan's answer. A thread with
 * no element holds (I, 0), I the op's identity (-inf or the dtype's
 * least): it loses to any element above I, and when every element is I
 * the answer is index 0 on the CPU and here alike.
 */
#include "schedule/gpu_rules.h"

#include <string.h>

#include "schedule/rule_reduce.h"

typedef MT_VEC(mt_tstmt *) svec;

typedef struct ar {
    rr *c;                 /* c->f, c->lw, c->ns, c->O, c->N, c->oval */
    bool is_max;           /* argmax (else argmin) */
    mt_dtype dt;           /* the values' dtype */
    mt_texpr *E;           /* the value at (o.., r), block form */
    mt_tvar *iv[MT_MAX_RANK + 1]; /* the block's iteration variables (last: r) */
    mt_texpr *ident;       /* I */
    mt_tbuffer *out;       /* the int64 result */
    int out_nd;            /* its dims: ns, or ns + 1 (keepdims) */
    /* while generating: */
    int threads, group, warp;
    mt_tvar *tx;
    mt_texpr *lane, *valid;
    mt_tbuffer *bv, *bi, *sv, *si;
    svec cur, phases;
} ar;

/* ---- matching ------------------------------------------------------------------- */

static bool is_var(const mt_texpr *e, const mt_tvar *v) { return e && e->kind == TE_VAR && e->var == v; }

/* The nest: loops over x's dims (min 0) down to one block, its iter
 * values the loop variables in order, only the last one reduced. */
static const mt_tstmt *nest_block(ar *g, const mt_tstmt *s) {
    const mt_tstmt *loops[MT_MAX_RANK + 1];
    int n = 0;
    for (; s->kind == TS_FOR && n <= MT_MAX_RANK; s = s->body) {
        int64_t m;
        if (!mt_te_is_const_int(s->min, &m) || m != 0 || s->for_kind != MT_FOR_SERIAL) return NULL;
        loops[n++] = s;
    }
    if (s->kind != TS_BLOCK || s->niters != n || n < 1 || s->predicate || !s->init) return NULL;
    for (int k = 0; k < n; k++) {
        if (!is_var(s->iter_values[k], loops[k]->var)) return NULL;
        if ((s->iters[k].kind == MT_ITER_REDUCE) != (k == n - 1)) return NULL;
        g->iv[k] = s->iters[k].var;
        if (k < n - 1) g->c->O[k] = loops[k]->extent;
    }
    g->c->ns = n - 1;
    g->c->N = loops[n - 1]->extent;
    return s;
}

/* buf[o.., (0)] with o.. the outer iteration variables. */
static bool at_row(ar *g, mt_tbuffer *b, mt_texpr *const *idx, int n) {
    int64_t z;
    int ns = g->c->ns;
    if (n != b->ndim || (n != ns && n != ns + 1)) return false;
    for (int k = 0; k < ns; k++)
        if (!is_var(idx[k], g->iv[k])) return false;
    return n == ns || (mt_te_is_const_int(idx[ns], &z) && z == 0);
}

static bool store_at_row(ar *g, const mt_tstmt *s, mt_tbuffer **buf) {
    if (s->kind != TS_STORE || !at_row(g, s->buf, s->idx, s->nidx)) return false;
    *buf = s->buf;
    return true;
}

static bool shuffle_dtype(mt_dtype t) {
    return mt_dtype_is_half(t) || t == MT_FLOAT32 || t == MT_FLOAT64 || t == MT_INT32 || t == MT_INT64;
}

/* The block's init and body as legalize_reduce.c writes them. */
static bool match_block(ar *g, const mt_tstmt *b) {
    const mt_tstmt *in = b->init, *up = b->body;
    mt_tbuffer *best, *best2, *out, *out2;
    if (in->kind != TS_SEQ || in->nstmts != 2 || up->kind != TS_IF || up->else_s || up->then_s->kind != TS_SEQ ||
        up->then_s->nstmts != 2)
        return false;
    const mt_tstmt *sb = up->then_s->stmts[0], *so = up->then_s->stmts[1];
    if (!store_at_row(g, in->stmts[0], &best) || !store_at_row(g, in->stmts[1], &out) ||
        !store_at_row(g, sb, &best2) || !store_at_row(g, so, &out2) || best != best2 || out != out2)
        return false;
    int64_t z;
    if (out->dtype != MT_INT64 || !mt_te_is_const_int(in->stmts[1]->value, &z) || z != 0 ||
        !is_var(so->value, g->iv[g->c->ns]) || !shuffle_dtype(best->dtype))
        return false;
    const mt_texpr *cmp = up->cond->kind == TE_OR ? up->cond->a : up->cond;
    if ((cmp->kind != TE_GT && cmp->kind != TE_LT) || !mt_texpr_equal(cmp->a, sb->value) ||
        cmp->b->kind != TE_LOAD || cmp->b->buf != best || mt_texpr_reads(sb->value, best) ||
        mt_texpr_uses_var(sb->value, g->iv[g->c->ns]) == false)
        return false;
    g->is_max = cmp->kind == TE_GT;
    g->dt = best->dtype;
    g->E = sb->value;
    g->ident = in->stmts[0]->value;
    g->out = out;
    g->out_nd = out->ndim;
    return true;
}

/* Every buffer E reads is a parameter (nothing computed inside f). */
static bool reads_params_only(ar *g) {
    const mt_tfunc *f = g->c->f;
    for (int i = 0; i < f->nallocs; i++)
        if (mt_texpr_reads(g->E, f->allocs[i])) return false;
    return true;
}

static bool match(ar *g) {
    const mt_tfunc *f = g->c->f;
    const mt_tstmt *s = f->body;
    if (!s || f->num_outputs != 1 || mt_tfunc_get_attr(f, "schedule")) return false;
    if (s->kind == TS_SEQ && s->nstmts == 2 && s->stmts[0]->kind == TS_IF) s = s->stmts[1]; /* the empty fill */
    const mt_tstmt *b = nest_block(g, s);
    return b && match_block(g, b) && g->out == f->params[f->nparams - 1].buf && reads_params_only(g);
}

/* ---- the kernel ------------------------------------------------------------------ */

static mt_texpr *I(ar *g, int64_t v) { return mt_te_i64(g->c->a, v); }
static mt_texpr *V(ar *g, mt_tvar *v) { return mt_te_var(g->c->a, v); }
static mt_texpr *bin(ar *g, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) { return mt_arith_bin(g->c->a, k, x, y); }
static mt_texpr *ld0(ar *g, mt_tbuffer *b) { return mt_te_load(g->c->a, b, (mt_texpr *[]){I(g, 0)}, 1); }
static mt_tstmt *st(ar *g, mt_tbuffer *b, mt_texpr *ix, mt_texpr *v) { return mt_ts_store(g->c->a, b, &ix, 1, v); }
static mt_tstmt *st0(ar *g, mt_tbuffer *b, mt_texpr *v) { return st(g, b, I(g, 0), v); }
static mt_tstmt *seq2(ar *g, mt_tstmt *x, mt_tstmt *y) { return mt_ts_seq(g->c->a, (mt_tstmt *[]){x, y}, 2); }
static void emit(ar *g, mt_tstmt *s) { MT_VEC_PUSH(g->c->a, &g->cur, s); }

static mt_tbuffer *scoped(ar *g, const char *name, int64_t n, mt_dtype dt, mt_scope scope) {
    mt_texpr *e = I(g, n);
    mt_tbuffer *b = mt_tbuffer_new(g->c->a, name, dt, 1, &e);
    b->scope = scope;
    return b;
}

static void cut(ar *g) {
    if (!g->cur.len) return;
    mt_tstmt *l = mt_ts_for(g->c->a, g->tx, I(g, 0), I(g, g->threads), MT_FOR_THREAD,
                            mt_ts_seq(g->c->a, g->cur.data, g->cur.len));
    l->thread_tag = "threadIdx.x";
    MT_VEC_PUSH(g->c->a, &g->phases, l);
    g->cur = (svec){0};
}

typedef struct low_ctx {
    ar *g;
    mt_texpr *j;
} low_ctx;

static mt_texpr *low_hook(mt_tmutator *m, mt_texpr *e) {
    low_ctx *l = m->ctx;
    rr *c = l->g->c;
    if (e->kind == TE_VAR) {
        for (int k = 0; k < c->ns; k++)
            if (e->var == l->g->iv[k]) return c->oval[k];
        return e->var == l->g->iv[c->ns] ? l->j : e;
    }
    if (e->kind != TE_LOAD) return mt_tmutate_expr_children(m, e);
    mt_texpr *idx[MT_MAX_RANK + 1];
    for (int d = 0; d < e->nargs; d++) idx[d] = mt_tmutate_expr(m, e->args[d]);
    return mt_lw_load(&c->lw, e->buf, idx, e->nargs);
}

/* E at (row, j), lowered to flat loads. */
static mt_texpr *value_at(ar *g, mt_texpr *j) {
    low_ctx l = {g, j};
    mt_tmutator m = {g->c->a, low_hook, NULL, &l};
    return mt_tmutate_expr(&m, g->E);
}

static mt_texpr *isnan_(ar *g, mt_texpr *x) { return mt_te_bin(g->c->a, TE_NE, x, x); }

/* x better than y (the CPU's test: strictly, or NaN over a number). */
static mt_texpr *better(ar *g, mt_texpr *x, mt_texpr *y) {
    mt_arena *a = g->c->a;
    mt_texpr *b = mt_te_bin(a, g->is_max ? TE_GT : TE_LT, x, y);
    if (!mt_dtype_is_float(g->dt)) return b;
    return mt_te_bin(a, TE_OR, b, mt_te_bin(a, TE_AND, isnan_(g, x), mt_te_bin(a, TE_EQ, y, y)));
}

/* (xv, xi) takes the place of (yv, yi): better, or a tie at a smaller index. */
static mt_texpr *takes(ar *g, mt_texpr *xv, mt_texpr *xi, mt_texpr *yv, mt_texpr *yi) {
    mt_arena *a = g->c->a;
    mt_texpr *tie = mt_te_bin(a, TE_EQ, xv, yv);
    if (mt_dtype_is_float(g->dt)) tie = mt_te_bin(a, TE_OR, tie, mt_te_bin(a, TE_AND, isnan_(g, xv), isnan_(g, yv)));
    return mt_te_bin(a, TE_OR, better(g, xv, yv), mt_te_bin(a, TE_AND, tie, mt_te_bin(a, TE_LT, xi, yi)));
}

/* The thread's scan of its elements j = jj * G + lane, in increasing order. */
static mt_tstmt *scan(ar *g) {
    rr *c = g->c;
    mt_tvar *jj = mt_tvar_new(c->a, "jj", MT_INT64), *ev = mt_tvar_new(c->a, "e", g->dt);
    mt_texpr *G = I(g, g->group), *N = mt_te_cast(c->a, MT_INT64, c->N);
    mt_texpr *j = bin(g, TE_ADD, bin(g, TE_MUL, V(g, jj), G), g->lane);
    mt_tstmt *take = seq2(g, st0(g, g->bv, V(g, ev)), st0(g, g->bi, j));
    mt_tstmt *up = mt_ts_if(c->a, better(g, V(g, ev), ld0(g, g->bv)), take, NULL);
    mt_tstmt *body = mt_ts_let(c->a, ev, value_at(g, j), up);
    int64_t n;
    if (!mt_te_is_const_int(N, &n) || n % g->group != 0) body = mt_ts_if(c->a, bin(g, TE_LT, j, N), body, NULL);
    mt_texpr *steps = bin(g, TE_FLOORDIV, bin(g, TE_ADD, N, I(g, g->group - 1)), G);
    mt_tstmt *l = mt_ts_for(c->a, jj, I(g, 0), steps, MT_FOR_SERIAL, body);
    return g->valid ? mt_ts_if(c->a, g->valid, l, NULL) : l;
}

/* The butterfly over masks from .. 1 of the given width on (bv, bi). */
static void butterfly(ar *g, int from, int width) {
    mt_arena *a = g->c->a;
    for (int m = from; m >= 1; m /= 2) {
        emit(g, st0(g, g->sv, mt_te_shfl_xor(a, ld0(g, g->bv), m, width)));
        emit(g, st0(g, g->si, mt_te_shfl_xor(a, ld0(g, g->bi), m, width)));
        mt_texpr *t = takes(g, ld0(g, g->sv), ld0(g, g->si), ld0(g, g->bv), ld0(g, g->bi));
        emit(g, mt_ts_if(a, t, seq2(g, st0(g, g->bv, ld0(g, g->sv)), st0(g, g->bi, ld0(g, g->si))), NULL));
    }
}

/* A block per row of W > 1 warps: the warps' pairs through shared memory. */
static void across_warps(ar *g, mt_tbuffer *wv, mt_tbuffer *wi) {
    int W = g->threads / g->warp;
    mt_texpr *w = bin(g, TE_FLOORDIV, V(g, g->tx), I(g, g->warp));
    mt_texpr *first = bin(g, TE_EQ, bin(g, TE_FLOORMOD, V(g, g->tx), I(g, g->warp)), I(g, 0));
    emit(g, mt_ts_if(g->c->a, first, seq2(g, st(g, wv, w, ld0(g, g->bv)), st(g, wi, w, ld0(g, g->bi))), NULL));
    cut(g);
    mt_texpr *k = bin(g, TE_FLOORMOD, V(g, g->tx), I(g, W));
    emit(g, st0(g, g->bv, mt_te_load(g->c->a, wv, &k, 1)));
    emit(g, st0(g, g->bi, mt_te_load(g->c->a, wi, &k, 1)));
    butterfly(g, W / 2, g->warp);
}

/* The statements of a row (c->oval set); the row's first lane stores the index. */
static void gen_row(ar *g, mt_tbuffer *wv, mt_tbuffer *wi) {
    rr *c = g->c;
    emit(g, st0(g, g->bv, mt_te_cast(c->a, g->dt, g->ident)));
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
    emit(g, mt_ts_if(c->a, first, mt_lw_store(&c->lw, g->out, idx, g->out_nd, ld0(g, g->bi)), NULL));
}

static mt_tstmt *with_locals(ar *g, mt_tstmt *body) {
    mt_tbuffer *bs[4] = {g->bv, g->bi, g->sv, g->si};
    for (int i = 3; i >= 0; i--) body = mt_ts_alloc(g->c->a, bs[i], body);
    return body;
}

static mt_tstmt *block_rows(ar *g, mt_texpr *M) {
    rr *c = g->c;
    mt_tvar *row = mt_tvar_new(c->a, "row", MT_INT64), *ov[MT_MAX_RANK];
    mt_gpu_row_outer_vars(c, row, ov);
    g->lane = V(g, g->tx);
    int W = g->threads / g->warp;
    mt_tbuffer *wv = W > 1 ? scoped(g, "best_warps", W, g->dt, MT_SCOPE_SHARED) : NULL;
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
    mt_gpu_warp_rows_begin(&w, g->c, g->tx, g->threads, g->group, M);
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
    g->c = MT_NEW(a, rr);
    g->c->a = g->c->lw.a = a;
    g->c->f = f;
    if (!match(g)) return f;
    int group = mt_gpu_row_group(g->c->N, g->c->O, g->c->ns, t);
    g->warp = t->warp_size;
    g->threads = group ? MT_GPU_ROW_WARP_BLOCK : mt_gpu_row_threads(g->c->N, t);
    g->group = group ? group : g->threads;
    g->tx = mt_tvar_new(a, "tx", MT_INT64);
    g->bv = scoped(g, "best", 1, g->dt, MT_SCOPE_LOCAL);
    g->bi = scoped(g, "index", 1, MT_INT64, MT_SCOPE_LOCAL);
    g->sv = scoped(g, "best_shfl", 1, g->dt, MT_SCOPE_LOCAL);
    g->si = scoped(g, "index_shfl", 1, MT_INT64, MT_SCOPE_LOCAL);
    mt_texpr *M = I(g, 1);
    for (int k = 0; k < g->c->ns; k++) M = bin(g, TE_MUL, M, mt_te_cast(a, MT_INT64, g->c->O[k]));
    mt_tstmt *body = group ? warp_rows(g, M) : block_rows(g, M);
    return mt_rr_function(g->c, body, group ? "gpu_argreduce_rows (a warp per row)" : "gpu_argreduce_rows");
}
