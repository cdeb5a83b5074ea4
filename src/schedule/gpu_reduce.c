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
 *         for tx in T.thread_binding(T, thread="threadIdx.x"):   tree, fan-in 16
 *             if tx < T / 16: red0[tx] = F(red0[tx], red0[tx + T/16], ..., red0[tx + 15 T/16])
 *         ...
 *         for tx in ...:                                 ROW: one thread
 *             if tx == 0: rv0[0] = E(row)
 *         for tx in ...:                                 ELT: the epilogue
 *             for jj in range(ceildiv(N, T)):
 *                 if jj * T + tx < N:  Y[row, jj * T + tx] = E(row, jj * T + tx)
 *
 * The row in registers. When N is a constant of at most 32 elements per
 * thread, a first phase loads each thread's elements of the row's inputs
 * into per-thread buffers (x_row, allocated outside the phases, so they
 * live in registers across them), the strided loops are unrolled (jj
 * constant) and read them there; a value a RED stage also stores
 * (softmax's exp(x - max)) is kept there too, and stored to memory only
 * when no later stage rewrites that output: x is read once.
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
 * tree of fan-in 16, an error bound of about (N / T + 16 log16 T) u sum
 * |e_i|, smaller than the serial (N - 1) u sum |e_i|. max / min are exact
 * in any order.
 */
#include "schedule/gpu_rules.h"

#include <math.h>

#include "schedule/rule_reduce.h"

enum { MIN_THREADS = 32, MAX_THREADS = 512, PER_THREAD = 4, SYMBOLIC_THREADS = 256, FAN_IN = 16,
       MAX_PER = 32, CACHE_REGS = 64 };

typedef MT_VEC(mt_tstmt *) svec;

typedef struct gr {
    rr *c;
    int threads;
    mt_tvar *tx;             /* the thread index of the phase being built */
    int per;                 /* elements of a row per thread when the row is cached, else 0 */
    int ncache;              /* the cached inputs: */
    mt_tbuffer *corig[RR_MAXB];  /* the input (n-d) */
    mt_tbuffer *cflat[RR_MAXB];  /* its flat buffer, as loads name it */
    mt_tbuffer *cache[RR_MAXB];  /* the thread's elements of the row (registers) */
    bool input[RR_MAXB];         /* an input, loaded first (else a RED stage's `also`) */
    bool keep[RR_MAXB];          /* an `also` stored to memory too (no ELT stage rewrites it) */
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

/* ---- the row in registers ------------------------------------------------------ */

typedef struct cache_ctx {
    gr *g;
    bool red;              /* the body of a RED stage (else an ELT stage's) */
    mt_texpr *j, *jj;
    mt_texpr *ix[RR_MAXB]; /* the index of element j of each cached input */
} cache_ctx;

/* A store of a cached `also` at element j goes to the cache, and to memory
 * too unless it is a RED stage's and a later stage rewrites it. */
static mt_tstmt *cached_store(mt_tmutator *m, mt_tstmt *s) {
    cache_ctx *x = m->ctx;
    gr *g = x->g;
    if (s->kind == TS_STORE && s->nidx == 1)
        for (int k = 0; k < g->ncache; k++)
            if (s->buf == g->cflat[k] && mt_texpr_equal(s->idx[0], x->ix[k])) {
                mt_tstmt *to = st(g, g->cache[k], x->jj, mt_tmutate_expr(m, s->value));
                if (x->red && !g->keep[k]) return to;
                mt_tstmt *both[2] = {to, st(g, s->buf, s->idx[0], ld(g, g->cache[k], x->jj))};
                return mt_ts_seq(g->c->a, both, 2);
            }
    return mt_tmutate_stmt_children(m, s);
}

static mt_texpr *cached_load(mt_tmutator *m, mt_texpr *e) {
    cache_ctx *x = m->ctx;
    if (e->kind == TE_LOAD && e->nargs == 1)
        for (int k = 0; k < x->g->ncache; k++)
            if (e->buf == x->g->cflat[k] && mt_texpr_equal(e->args[0], x->ix[k]))
                return ld(x->g, x->g->cache[k], x->jj);
    return mt_tmutate_expr_children(m, e);
}

/* body (of stage s) with every load of a cached buffer at element j read
 * from the cache, and every store to one also made there. */
static mt_tstmt *from_cache(gr *g, const stage *s, mt_tstmt *body, mt_texpr *j, mt_texpr *jj) {
    cache_ctx x = {g, s->kind == ST_RED, j, jj, {0}};
    for (int k = 0; k < g->ncache; k++) x.ix[k] = mt_rr_row_ix(g->c, g->corig[k], j);
    mt_tmutator m = {g->c->a, cached_load, cached_store, &x};
    return mt_tmutate_stmt(&m, body);
}

/* `for jj in range(ceildiv(N, T)): if j < N: body(j)` with j = jj * T + tx;
 * body_at builds the body for an index. The guard goes when T divides N.
 * With the row cached the loop is unrolled (jj constant: the cache stays
 * in registers) and the body reads the cached inputs from there. */
static mt_tstmt *strided(gr *g, const stage *s, at_fn body_at, void *ctx) {
    rr *c = g->c;
    mt_tvar *jj = mt_tvar_new(c->a, "jj", MT_INT64);
    mt_texpr *T = I(g, g->threads), *N = mt_te_cast(c->a, MT_INT64, c->N);
    mt_texpr *j = bin(g, TE_ADD, bin(g, TE_MUL, V(g, jj), T), V(g, g->tx));
    mt_texpr *steps = bin(g, TE_FLOORDIV, bin(g, TE_ADD, N, I(g, g->threads - 1)), T);
    mt_tstmt *body = body_at(g, s, j, ctx);
    if (g->per) body = from_cache(g, s, body, j, V(g, jj));
    int64_t n;
    if (!mt_te_is_const_int(N, &n) || n % g->threads != 0)
        body = mt_ts_if(c->a, bin(g, TE_LT, j, N), body, NULL);
    return mt_ts_for(c->a, jj, I(g, 0), steps, g->per ? MT_FOR_UNROLLED : MT_FOR_SERIAL, body);
}

/* The first phase of a row with a cache: each thread loads its elements. */
static mt_tstmt *load_at(gr *g, const stage *s, mt_texpr *j, void *ctx) {
    (void)s;
    mt_texpr *jj = ctx;
    svec b = {0};
    for (int k = 0; k < g->ncache; k++)
        if (g->input[k])
            push(g, &b, st(g, g->cache[k], jj, ld(g, g->cflat[k], mt_rr_row_ix(g->c, g->corig[k], j))));
    return mt_ts_seq(g->c->a, b.data, b.len);
}

static mt_tstmt *load_phase(gr *g) {
    /* strided's own jj is the cache's index: build the loop here the same way */
    rr *c = g->c;
    mt_tvar *jj = mt_tvar_new(c->a, "jj", MT_INT64);
    mt_texpr *T = I(g, g->threads), *N = mt_te_cast(c->a, MT_INT64, c->N);
    mt_texpr *j = bin(g, TE_ADD, bin(g, TE_MUL, V(g, jj), T), V(g, g->tx));
    mt_tstmt *body = load_at(g, NULL, j, V(g, jj));
    int64_t n;
    if (!mt_te_is_const_int(N, &n) || n % g->threads != 0)
        body = mt_ts_if(c->a, bin(g, TE_LT, j, N), body, NULL);
    return phase(g, mt_ts_for(c->a, jj, I(g, 0), I(g, g->per), MT_FOR_UNROLLED, body));
}

/* Is b written by a stage (an output, or a stage's `also`)? */
static bool written_by_stage(rr *c, const mt_tbuffer *b) {
    for (int i = 0; i < c->nst; i++)
        if (c->st[i].buf == b || c->st[i].also == b) return true;
    return false;
}

/* Caches b: per elements per thread. */
static void add_cache(gr *g, mt_tbuffer *b, int per, bool input, bool keep) {
    int k = g->ncache++;
    g->corig[k] = b;
    g->cflat[k] = mt_lw_flat(&g->c->lw, b)->flat;
    g->cache[k] = scoped(g, mt_arena_printf(g->c->a, "%s_row", b->name), per, b->dtype, MT_SCOPE_LOCAL);
    g->input[k] = input;
    g->keep[k] = keep;
}

/* Is b rewritten by an ELT stage after stage i? */
static bool rewritten_after(rr *c, int i, const mt_tbuffer *b) {
    for (int k = i + 1; k < c->nst; k++)
        if (c->st[k].kind == ST_ELT && c->st[k].buf == b) return true;
    return false;
}

/* The row is cached when N is a constant of at most MAX_PER elements per
 * thread: what a RED stage also stores (softmax's exp(x - max)), which then
 * goes to memory only when no later stage rewrites it, and the input
 * parameters of the row's shape that no stage writes, as many as fit in
 * CACHE_REGS registers a thread (the rest are read from memory). */
static void choose_cache(gr *g) {
    rr *c = g->c;
    int64_t n;
    if (!mt_te_is_const_int(c->N, &n) || (n + g->threads - 1) / g->threads > MAX_PER) return;
    int per = (int)((n + g->threads - 1) / g->threads), most = CACHE_REGS / per;
    most = most < RR_MAXB ? most : RR_MAXB;
    for (int i = 0; i < c->nst && g->ncache < most; i++)
        if (c->st[i].kind == ST_RED && c->st[i].also)
            add_cache(g, c->st[i].also, per, false, !rewritten_after(c, i, c->st[i].also));
    for (int i = 0; i < c->f->nparams && g->ncache < most; i++) {
        mt_tbuffer *b = c->f->params[i].buf;
        if (!b || b->ndim != c->ns + 1 || written_by_stage(c, b) || find_rv(c, b)) continue;
        if (!mt_texpr_equal(b->shape[c->ns], c->N)) continue;
        bool row = true;
        for (int k = 0; k < c->ns && row; k++) row = mt_texpr_equal(b->shape[k], c->O[k]);
        if (row) add_cache(g, b, per, true, false);
    }
    if (g->ncache) g->per = per;
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

/* red[tx] = F(red[tx], red[tx + w], ..., red[tx + (fan - 1) w]), each
 * partial result bound by a let (F may use its operands twice: max's NaN
 * test, so a nested expression would grow as 2^fan). */
static mt_tstmt *tree_step(gr *g, const stage *s, mt_tbuffer *red, int fan, int w) {
    rr *c = g->c;
    mt_texpr *x = V(g, g->tx);
    mt_tvar *v[FAN_IN];
    for (int i = 0; i < fan; i++) v[i] = mt_tvar_new(c->a, "p", s->buf->dtype);
    mt_tstmt *body = st(g, red, x, V(g, v[fan - 1]));
    for (int i = fan - 1; i >= 1; i--) {
        mt_texpr *y = ld(g, red, bin(g, TE_ADD, x, I(g, (int64_t)i * w)));
        body = mt_ts_let(c->a, v[i], mt_rr_fapply(c, s, V(g, v[i - 1]), y), body);
    }
    return mt_ts_let(c->a, v[0], ld(g, red, x), body);
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
    for (int w = g->threads; w > 1;) {
        int fan = w < FAN_IN ? w : FAN_IN;
        w /= fan;
        push(g, out, phase(g, mt_ts_if(c->a, bin(g, TE_LT, V(g, g->tx), I(g, w)), tree_step(g, s, red, fan, w), NULL)));
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
    if (g->per) push(g, &b, load_phase(g));
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
    for (int k = g->ncache - 1; k >= 0; k--) body = mt_ts_alloc(c->a, g->cache[k], body);
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
    gr g = {c, threads_for(c->N, t), mt_tvar_new(a, "tx", MT_INT64), 0, 0, {0}, {0}, {0}, {0}, {0}};
    choose_cache(&g);
    for (int i = 0; i < c->nrv; i++) {
        rowval *v = &c->rv[i];
        bool red = false;
        for (int s = 0; s < c->nst; s++) red = red || (c->st[s].kind == ST_RED && c->st[s].buf == v->buf);
        v->local = scoped(&g, v->buf->name, red ? g.threads : 1, v->buf->dtype, MT_SCOPE_SHARED);
    }
    mt_tfunc *h = mt_rr_function(c, gen_rows(&g), "gpu_reduce_rows");
    return h;
}
