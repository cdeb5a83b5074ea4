/*
 * gpu_reduce.c -- the GPU schedule of reductions over the innermost axis
 * (softmax, log_softmax, layer_norm, sum / mean / max / min over axis -1)
 * and of the row-wise work around them: one block per row.
 *
 * It matches what the CPU's row rule matches (rule_reduce_match.c: stages
 * RED, ROW and ELT over outer axes O and a row of length N, see
 * rule_reduce.c) and emits one kernel, in lowered form:
 *
 *     for row in T.thread_binding(M, thread="blockIdx.x"):      M = prod(O)
 *         red0 = T.alloc_buffer((T,), scope="shared")     one per RED stage
 *         rv0 = T.alloc_buffer((1,), scope="shared")      one per ROW stage
 *         for tx in T.thread_binding(T, thread="threadIdx.x"):   RED: partials
 *             acc[0] = I if tx == 0 else identity
 *             for jj in range(ceildiv(N, T)):
 *                 if jj * T + tx < N:  acc[0] = F(acc[0], E(row, jj * T + tx))
 *             red0[tx] = acc[0]
 *         for tx in T.thread_binding(T, thread="threadIdx.x"):   tree, T/2 .. 1
 *             if tx < 128: red0[tx] = F(red0[tx], red0[tx + 128])
 *         ...
 *         for tx in ...:                                 ROW: one thread
 *             if tx == 0: rv0[0] = E(row)
 *         for tx in ...:                                 ELT: the epilogue
 *             for jj in range(ceildiv(N, T)):
 *                 if jj * T + tx < N:  Y[row, jj * T + tx] = E(row, jj * T + tx)
 *
 * Each statement at the block level is a phase (tir.h), so every thread
 * sees the partials, the tree's levels and the per-row values of the
 * phases before it. A per-row value is red<k>[0] once its tree is done
 * (thread 0's partial started from the stage's init I, so the tree's
 * result is F over I and every element, as the serial code computes); a
 * per-row output (sum(x, axis=-1), keepdims or not) is stored by thread 0
 * in a last phase. Element j of the row is always handled by thread
 * j % T, so an ELT stage that reads a row stored by an earlier stage reads
 * what its own thread stored.
 *
 * Knobs: T, the threads per block, a power of two from 32 to 512 (at most
 * the target's max_threads_per_block): N / 4 rounded down to a power of
 * two, so that each thread handles about four elements or more (256 for a
 * symbolic N). Consecutive threads read consecutive elements (coalesced).
 *
 * Numerics. The sum is reassociated: T strided partial sums combined in a
 * tree, an error bound of about (N / T + log2 T) u sum |e_i|, smaller than
 * the serial (N - 1) u sum |e_i|. max / min are exact in any order.
 */
#include "schedule/gpu_rules.h"

#include <math.h>

#include "schedule/rule_reduce.h"

enum { MIN_THREADS = 32, MAX_THREADS = 512, PER_THREAD = 4, SYMBOLIC_THREADS = 256 };

typedef MT_VEC(mt_tstmt *) svec;

typedef struct gr {
    rr *c;
    int threads;
    mt_tvar *tx;             /* the thread index of the phase being built */
} gr;

static mt_texpr *I(gr *g, int64_t v) { return mt_te_i64(g->c->a, v); }
static mt_texpr *V(gr *g, mt_tvar *v) { return mt_te_var(g->c->a, v); }
static mt_texpr *bin(gr *g, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) {
    return mt_arith_bin(g->c->a, k, x, y);
}
static mt_texpr *ld(gr *g, mt_tbuffer *b, mt_texpr *ix) { return mt_te_load(g->c->a, b, &ix, 1); }
static mt_tstmt *st(gr *g, mt_tbuffer *b, mt_texpr *ix, mt_texpr *v) {
    return mt_ts_store(g->c->a, b, &ix, 1, v);
}
static void push(gr *g, svec *v, mt_tstmt *s) { MT_VEC_PUSH(g->c->a, v, s); }

static mt_tbuffer *scoped(gr *g, const char *name, int64_t n, mt_dtype dt, mt_scope scope) {
    mt_texpr *e = I(g, n);
    mt_tbuffer *b = mt_tbuffer_new(g->c->a, name, dt, 1, &e);
    b->scope = scope;
    return b;
}

/* A phase: body run by every thread of the block (g->tx its index). */
static mt_tstmt *phase(gr *g, mt_tstmt *body) {
    mt_tstmt *l = mt_ts_for(g->c->a, g->tx, I(g, 0), I(g, g->threads), MT_FOR_THREAD, body);
    l->thread_tag = "threadIdx.x";
    return l;
}

/* Threads per block for rows of n (see the top of the file). */
static int threads_for(const mt_texpr *n, const mt_target_desc *t) {
    int64_t len;
    int cap = t->max_threads_per_block < MAX_THREADS ? t->max_threads_per_block : MAX_THREADS;
    if (!mt_te_is_const_int(n, &len)) return SYMBOLIC_THREADS < cap ? SYMBOLIC_THREADS : cap;
    int th = MIN_THREADS;
    while (th * 2 <= cap && (int64_t)th * 2 * PER_THREAD <= len) th *= 2;
    return th;
}

/* `for jj in range(ceildiv(N, T)): if j < N: body(j)` with j = jj * T + tx;
 * body_at builds the body for an index. The guard goes when T divides N. */
typedef mt_tstmt *(*at_fn)(gr *g, const stage *s, mt_texpr *j, void *ctx);

static mt_tstmt *strided(gr *g, const stage *s, at_fn body_at, void *ctx) {
    rr *c = g->c;
    mt_tvar *jj = mt_tvar_new(c->a, "jj", MT_INT64);
    mt_texpr *T = I(g, g->threads), *N = mt_te_cast(c->a, MT_INT64, c->N);
    mt_texpr *j = bin(g, TE_ADD, bin(g, TE_MUL, V(g, jj), T), V(g, g->tx));
    mt_texpr *steps = bin(g, TE_FLOORDIV, bin(g, TE_ADD, N, I(g, g->threads - 1)), T);
    mt_tstmt *body = body_at(g, s, j, ctx);
    int64_t n;
    if (!mt_te_is_const_int(N, &n) || n % g->threads != 0)
        body = mt_ts_if(c->a, bin(g, TE_LT, j, N), body, NULL);
    return mt_ts_for(c->a, jj, I(g, 0), steps, MT_FOR_SERIAL, body);
}

static mt_texpr *identity(gr *g, const stage *s) {
    double v = s->fk == F_ADD ? 0.0 : s->fk == F_MAX ? -INFINITY : INFINITY;
    return mt_te_float(g->c->a, s->buf->dtype, v);
}

/* ---- RED ------------------------------------------------------------------------- */

/* One element: e = E(j); also[o.., j] = e; acc = F(acc, e). */
static mt_tstmt *red_at(gr *g, const stage *s, mt_texpr *j, void *ctx) {
    rr *c = g->c;
    mt_tbuffer *acc = ctx;
    mt_tvar *ev = mt_tvar_new(c->a, "e", s->buf->dtype);
    svec b = {0};
    if (s->also)
        push(g, &b, st(g, mt_lw_flat(&c->lw, s->also)->flat, mt_rr_row_ix(c, s->also, j), V(g, ev)));
    push(g, &b, st(g, acc, I(g, 0), mt_rr_fapply(c, s, ld(g, acc, I(g, 0)), V(g, ev))));
    return mt_ts_let(c->a, ev, mt_rr_lower(c, s, s->value, j), mt_ts_seq(c->a, b.data, b.len));
}

/* The partials phase and the tree; the result is red[0]. */
static void gen_red(gr *g, const stage *s, mt_tbuffer *red, svec *out) {
    rr *c = g->c;
    mt_tbuffer *acc = scoped(g, "acc", 1, s->buf->dtype, MT_SCOPE_LOCAL);
    mt_texpr *first = bin(g, TE_EQ, V(g, g->tx), I(g, 0));
    mt_texpr *init = mt_te_select(c->a, first, mt_rr_lower(c, s, s->init, I(g, 0)), identity(g, s));
    svec b = {0};
    push(g, &b, st(g, acc, I(g, 0), init));
    push(g, &b, strided(g, s, red_at, acc));
    push(g, &b, st(g, red, V(g, g->tx), ld(g, acc, I(g, 0))));
    push(g, out, phase(g, mt_ts_alloc(c->a, acc, mt_ts_seq(c->a, b.data, b.len))));
    for (int w = g->threads / 2; w >= 1; w /= 2) {
        mt_texpr *x = V(g, g->tx), *y = bin(g, TE_ADD, V(g, g->tx), I(g, w));
        mt_tstmt *step = st(g, red, x, mt_rr_fapply(c, s, ld(g, red, x), ld(g, red, y)));
        push(g, out, phase(g, mt_ts_if(c->a, bin(g, TE_LT, V(g, g->tx), I(g, w)), step, NULL)));
    }
}

/* ---- ROW, ELT, per-row outputs --------------------------------------------------- */

static mt_tstmt *on_thread0(gr *g, mt_tstmt *s) {
    return phase(g, mt_ts_if(g->c->a, bin(g, TE_EQ, V(g, g->tx), I(g, 0)), s, NULL));
}

static mt_tstmt *elt_at(gr *g, const stage *s, mt_texpr *j, void *ctx) {
    (void)ctx;
    rr *c = g->c;
    mt_tbuffer *fb = mt_lw_flat(&c->lw, s->buf)->flat;
    return st(g, fb, mt_rr_row_ix(c, s->buf, j), mt_rr_lower(c, s, s->value, j));
}

static mt_tstmt *row_outputs(gr *g) {
    rr *c = g->c;
    svec b = {0};
    for (int i = 0; i < c->nrv; i++) {
        rowval *v = &c->rv[i];
        if (!v->param) continue;
        mt_texpr *idx[MT_MAX_RANK + 1];
        for (int k = 0; k < c->ns; k++) idx[k] = c->oval[k];
        if (v->buf->ndim == c->ns + 1) idx[c->ns] = I(g, 0);
        push(g, &b, mt_lw_store(&c->lw, v->buf, idx, v->buf->ndim, ld(g, v->local, I(g, 0))));
    }
    return b.len ? on_thread0(g, mt_ts_seq(c->a, b.data, b.len)) : NULL;
}

/* ---- the kernel -------------------------------------------------------------------- */

/* The phases of one row (c->oval set), wrapped in their shared buffers. */
static mt_tstmt *gen_row(gr *g) {
    rr *c = g->c;
    svec b = {0};
    for (int i = 0; i < c->nst; i++) {
        const stage *s = &c->st[i];
        rowval *v = s->kind == ST_ELT ? NULL : find_rv(c, s->buf);
        if (s->kind == ST_RED) gen_red(g, s, v->local, &b);
        else if (s->kind == ST_ELT) push(g, &b, phase(g, strided(g, s, elt_at, NULL)));
        else push(g, &b, on_thread0(g, st(g, v->local, I(g, 0), mt_rr_lower(c, s, s->value, NULL))));
    }
    mt_tstmt *out = row_outputs(g);
    if (out) push(g, &b, out);
    mt_tstmt *body = mt_ts_seq(c->a, b.data, b.len);
    for (int i = c->nrv - 1; i >= 0; i--) body = mt_ts_alloc(c->a, c->rv[i].local, body);
    return body;
}

/* for row in blockIdx.x: the outer indices of the row, then its phases. */
static mt_tstmt *gen_rows(gr *g) {
    rr *c = g->c;
    mt_tvar *row = mt_tvar_new(c->a, "row", MT_INT64), *ov[MT_MAX_RANK];
    mt_texpr *M = I(g, 1), *ovexpr[MT_MAX_RANK], *inner = I(g, 1);
    for (int k = 0; k < c->ns; k++) M = bin(g, TE_MUL, M, mt_te_cast(c->a, MT_INT64, c->O[k]));
    for (int k = c->ns - 1; k >= 0; k--) {
        mt_texpr *q = bin(g, TE_FLOORDIV, V(g, row), inner);
        ovexpr[k] = k == 0 ? q : bin(g, TE_FLOORMOD, q, mt_te_cast(c->a, MT_INT64, c->O[k]));
        inner = bin(g, TE_MUL, inner, mt_te_cast(c->a, MT_INT64, c->O[k]));
        ov[k] = mt_tvar_new(c->a, "o", MT_INT64);
        c->oval[k] = c->ns == 1 ? V(g, row) : V(g, ov[k]);
    }
    mt_tstmt *body = gen_row(g);
    if (c->ns > 1)
        for (int k = c->ns - 1; k >= 0; k--) body = mt_ts_let(c->a, ov[k], ovexpr[k], body);
    mt_tstmt *l = mt_ts_for(c->a, row, I(g, 0), M, MT_FOR_THREAD, body);
    l->thread_tag = "blockIdx.x";
    return l;
}

mt_tfunc *mt_schedule_gpu_reduce(mt_arena *a, mt_tfunc *f) {
    const mt_target_desc *t = mt_tfunc_target(f);
    if (t->kind != MT_TARGET_CUDA) return f;
    rr *c = MT_NEW(a, rr);
    c->a = c->lw.a = a;
    c->f = f;
    if (!mt_reduce_match(c)) return f;
    gr g = {c, threads_for(c->N, t), mt_tvar_new(a, "tx", MT_INT64)};
    for (int i = 0; i < c->nrv; i++) {
        rowval *v = &c->rv[i];
        bool red = false;
        for (int s = 0; s < c->nst; s++) red = red || (c->st[s].kind == ST_RED && c->st[s].buf == v->buf);
        v->local = scoped(&g, v->buf->name, red ? g.threads : 1, v->buf->dtype, MT_SCOPE_SHARED);
    }
    mt_tfunc *h = mt_rr_function(c, gen_rows(&g), "gpu_reduce_rows");
    return h;
}
