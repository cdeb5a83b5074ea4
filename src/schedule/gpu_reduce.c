/*
 * gpu_reduce.c -- the GPU schedule of reductions over the innermost axis
 * (softmax, log_softmax, layer_norm, sum / mean / max / min over axis -1)
 * and of the row-wise work around them: a block per row, or for short
 * rows a group of lanes of one warp per row; the trees are warp shuffles.
 *
 * It matches what the CPU's row rule matches (rule_reduce_match.c: stages
 * RED, ROW and ELT over outer axes O and a row of length N, see
 * rule_reduce.c) and emits one kernel, in lowered form. A block per row
 * (T threads, W = T / 32 warps), for softmax:
 *
 *     for row in T.thread_binding(M, thread="blockIdx.x"):      M = prod(O)
 *         red0 = T.alloc_buffer((W,), scope="shared")     one per RED stage
 *         rv0 = T.alloc_buffer((1,), scope="local")       a per-row value, per thread
 *         for tx in T.thread_binding(T, thread="threadIdx.x"):   phase 1
 *             rv0[0] = I if tx == 0 else identity               RED: partials
 *             for jj in range(ceildiv(N, T)):
 *                 if jj * T + tx < N:  rv0[0] = F(rv0[0], E(row, jj * T + tx))
 *             shfl[0] = T.shfl_xor(rv0[0], 16, 32)               the warp's tree:
 *             rv0[0] = F(rv0[0], shfl[0])                        5 steps, no barrier
 *             ...                                                (8, 4, 2, 1)
 *             if tx % 32 == 0: red0[tx // 32] = rv0[0]           a value per warp
 *         for tx in T.thread_binding(T, thread="threadIdx.x"):   phase 2 (a barrier before)
 *             rv0[0] = red0[tx % W]                              every warp finishes
 *             shfl[0] = T.shfl_xor(rv0[0], W / 2, 32) ...        the tree over W values
 *             ... the next stages: rv1 partials, their warp tree, red1
 *         for tx in ...:                                         phase 3
 *             ... rv1 from red1; ELT: the epilogue
 *             for jj in range(ceildiv(N, T)):
 *                 if jj * T + tx < N:  Y[row, jj * T + tx] = E(row, jj * T + tx)
 *
 * Every thread ends a reduction with the row's value in its own register
 * (a butterfly gives it to every lane, and every warp finishes the tree
 * over the W warp values itself from shared memory instead of one warp
 * doing it and broadcasting: one barrier a reduction, not two). ROW stages
 * are computed by every thread in its registers, per-row outputs stored by
 * thread 0. Element j of the row is always handled by the same thread, so
 * an ELT stage that reads what an earlier stage stored reads its own
 * stores: only a reduction's exchange between warps needs a barrier, and
 * softmax is 3 phases (2 barriers); with T = 32 one.
 *
 * A warp per row. When N is a constant that fits a warp's registers (at
 * most 32 elements per lane, MAX_PER) and the rows give enough warps to
 * fill the GPU (at least ROW_WARPS_PER_SM warps per SM, a symbolic M
 * counting as SYMBOLIC_ROWS), a group of G lanes of one warp takes a row
 * (G = N / 4 rounded down to a power of two, at most the warp size: 32
 * for N >= 128) and a block of WARP_BLOCK threads takes WARP_BLOCK / G
 * rows: one phase, no barrier, the trees shuffles of width G. The last
 * block's groups past M compute nothing: every statement that touches
 * memory is under `if row < M` (the shuffles are not, and shuffle the
 * identity).
 *
 *     for bx in T.thread_binding(ceildiv(M, R), thread="blockIdx.x"):
 *         for tx in T.thread_binding(128, thread="threadIdx.x"):
 *             row = bx * R + tx // G
 *             lane = tx % G
 *             ... as above with lane for tx, G for T, width G
 *
 * The row in registers. When N is a constant of at most MAX_PER elements
 * per lane, each thread first loads its elements of the row's inputs into
 * per-thread buffers (x_row, allocated outside the phases, so they live
 * in registers across them), the strided loops are unrolled (jj constant)
 * and read them there; a value a RED stage also stores (softmax's exp(x -
 * max)) is kept there too, and stored to memory only when no later stage
 * rewrites that output: x is read once.
 *
 * Sizes: T, the threads per block of a block per row, a power of two from
 * 32 to 512 (at most the target's max_threads_per_block): N / 4 rounded
 * down to a power of two, so that each thread handles about four elements
 * or more (256 for a symbolic N). Consecutive threads read consecutive
 * elements (coalesced). The warp size and the SM count are the target's.
 * Knobs (knobs.h): `threads` gives T (clamped to whole warps and the
 * target's limit), `warp_rows` 0 keeps every row on a block.
 *
 * Numerics. The sum is reassociated: G strided partial sums per row
 * combined in a butterfly (log2 G levels), then W warp sums (log2 W): an
 * error bound of about (N / T + log2 T) u sum |e_i|, smaller than the
 * serial (N - 1) u sum |e_i|. max / min are exact in any order. Every
 * lane computes the same tree of the same values (a + b is b + a), so the
 * threads agree on the row's value.
 */
#include "schedule/gpu_rules.h"

#include <math.h>

#include "schedule/knobs.h"
#include "schedule/rule_reduce.h"

#define GPU_RR_RULE "gpu_reduce_rows" /* its knobs (knobs.h): threads, warp_rows */

enum { MIN_THREADS = 32, MAX_THREADS = 512, PER_THREAD = 4, SYMBOLIC_THREADS = 256, MAX_PER = MT_GPU_ROW_MAX_PER,
       CACHE_REGS = 64, WARP_BLOCK = MT_GPU_ROW_WARP_BLOCK, ROW_WARPS_PER_SM = 8, SYMBOLIC_ROWS = 4096 };

typedef MT_VEC(mt_tstmt *) svec;

typedef struct gr {
    rr *c;
    int threads;             /* T, threads per block */
    int group;               /* lanes per row: T (a block per row) or G (a warp's lanes per row) */
    int warp;                /* the target's warp size */
    mt_tvar *tx;             /* the thread index in the phases */
    mt_texpr *lane;          /* the thread's place in its row's group (tx, or tx % G) */
    mt_texpr *valid;         /* a warp per row: the row exists (row < M); else NULL */
    mt_tbuffer *shfl[MT_DTYPE_COUNT_]; /* a shuffled value, per dtype (a register) */
    svec cur;                /* the statements of the phase being built */
    svec phases;             /* the phases built */
    int per;                 /* elements of a row per thread when the row is cached, else 0 */
    int ncache;              /* the cached inputs: */
    mt_tbuffer *corig[RR_MAXB];  /* the input (n-d) */
    mt_tbuffer *cflat[RR_MAXB];  /* its flat buffer, as loads name it */
    mt_tbuffer *cache[RR_MAXB];  /* the thread's elements of the row (registers) */
    bool input[RR_MAXB];         /* an input, loaded first (else a RED stage's `also`) */
    bool keep[RR_MAXB];          /* an `also` stored to memory too (no ELT stage rewrites it) */
    mt_tbuffer *red[RR_MAXST];   /* a block per row: each RED stage's warp values (shared) */
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
static void emit(gr *g, mt_tstmt *s) { push(g, &g->cur, s); }

static mt_tbuffer *scoped(gr *g, const char *name, int64_t n, mt_dtype dt, mt_scope scope) {
    mt_texpr *e = I(g, n);
    mt_tbuffer *b = mt_tbuffer_new(g->c->a, name, dt, 1, &e);
    b->scope = scope;
    return b;
}

static void global_load(mt_tvisitor *v, const mt_texpr *e) {
    if (e->kind == TE_LOAD && e->buf->scope == MT_SCOPE_GLOBAL) *(bool *)v->ctx = true;
    else mt_tvisit_expr_children(v, e);
}

/* Does e read memory other than registers? */
static bool reads_global(const mt_texpr *e) {
    bool found = false;
    mt_tvisitor v = {global_load, NULL, &found};
    mt_tvisit_expr(&v, e);
    return found;
}

/* s only where the row exists (a warp per row; a block per row: s). */
static mt_tstmt *if_valid(gr *g, mt_tstmt *s) { return g->valid ? mt_ts_if(g->c->a, g->valid, s, NULL) : s; }

/* Ends the phase being built: every thread of the block runs it (g->tx
 * its index); the next phase sees what it stored (a barrier between). */
static void cut(gr *g) {
    if (!g->cur.len) return;
    mt_tstmt *l = mt_ts_for(g->c->a, g->tx, I(g, 0), I(g, g->threads), MT_FOR_THREAD,
                            mt_ts_seq(g->c->a, g->cur.data, g->cur.len));
    l->thread_tag = "threadIdx.x";
    push(g, &g->phases, l);
    g->cur = (svec){0};
}

static int pow2_below(int64_t n, int cap) {
    int p = 1;
    while (p * 2 <= cap && p * 2 <= n) p *= 2;
    return p;
}

int mt_gpu_row_threads(const mt_texpr *n, const mt_target_desc *t) {
    int64_t len;
    int cap = t->max_threads_per_block < MAX_THREADS ? t->max_threads_per_block : MAX_THREADS;
    int least = t->warp_size > MIN_THREADS ? t->warp_size : MIN_THREADS; /* whole warps */
    if (cap > t->warp_size * t->warp_size) cap = t->warp_size * t->warp_size; /* W <= a warp's lanes */
    if (!mt_te_is_const_int(n, &len)) return SYMBOLIC_THREADS < cap ? SYMBOLIC_THREADS : cap;
    int th = pow2_below(len / PER_THREAD, cap);
    return th < least ? least : th;
}

/* gpu_rules.h. */
int mt_gpu_row_knob_threads(const mt_tfunc *f, const char *rule, const mt_target_desc *t, int dflt) {
    int64_t k = mt_knob_get(f, rule, "threads", 0);
    if (!k) return dflt;
    int cap = t->max_threads_per_block < MAX_THREADS ? t->max_threads_per_block : MAX_THREADS;
    if (cap > t->warp_size * t->warp_size) cap = t->warp_size * t->warp_size;
    int least = t->warp_size > MIN_THREADS ? t->warp_size : MIN_THREADS;
    return k < least ? least : k > cap ? pow2_below(cap, cap) : (int)k;
}

int mt_gpu_row_group(const mt_texpr *N, mt_texpr *const *O, int ns, const mt_target_desc *t) {
    int64_t n, m = 1, o;
    if (!mt_te_is_const_int(N, &n) || n > (int64_t)t->warp_size * MAX_PER || t->max_threads_per_block < WARP_BLOCK ||
        WARP_BLOCK % t->warp_size != 0)
        return 0;
    for (int k = 0; k < ns; k++) m *= mt_te_is_const_int(O[k], &o) ? o : SYMBOLIC_ROWS;
    int g = pow2_below(n / PER_THREAD, t->warp_size);
    if (m * g < (int64_t)ROW_WARPS_PER_SM * t->num_sms * t->warp_size) return 0;
    return g;
}

/* ---- rows (gpu_rules.h; also gpu_argreduce.c's) ------------------------------------ */

void mt_gpu_row_outer_vars(rr *c, mt_tvar *row, mt_tvar **ov) {
    for (int k = 0; k < c->ns; k++) {
        ov[k] = mt_tvar_new(c->a, "o", MT_INT64);
        c->oval[k] = mt_te_var(c->a, c->ns == 1 ? row : ov[k]);
    }
}

mt_tstmt *mt_gpu_row_outer_lets(rr *c, mt_tvar *row, mt_tvar **ov, mt_tstmt *body) {
    if (c->ns <= 1) return body;
    mt_texpr *ovexpr[MT_MAX_RANK], *inner = mt_te_i64(c->a, 1);
    for (int k = c->ns - 1; k >= 0; k--) {
        mt_texpr *q = mt_arith_bin(c->a, TE_FLOORDIV, mt_te_var(c->a, row), inner);
        ovexpr[k] = k == 0 ? q : mt_arith_bin(c->a, TE_FLOORMOD, q, mt_te_cast(c->a, MT_INT64, c->O[k]));
        inner = mt_arith_bin(c->a, TE_MUL, inner, mt_te_cast(c->a, MT_INT64, c->O[k]));
    }
    for (int k = c->ns - 1; k >= 0; k--) body = mt_ts_let(c->a, ov[k], ovexpr[k], body);
    return body;
}

void mt_gpu_warp_rows_begin(mt_gpu_warp_rows *w, rr *c, mt_tvar *tx, int threads, int group, mt_texpr *M) {
    w->c = c, w->tx = tx, w->R = threads / group, w->group = group, w->M = M;
    w->bx = mt_tvar_new(c->a, "bx", MT_INT64);
    w->row = mt_tvar_new(c->a, "row", MT_INT64);
    w->lane_var = mt_tvar_new(c->a, "lane", MT_INT64);
    mt_gpu_row_outer_vars(c, w->row, w->ov);
    w->lane = mt_te_var(c->a, w->lane_var);
    w->valid = mt_arith_bin(c->a, TE_LT, mt_te_var(c->a, w->row), M);
}

mt_tstmt *mt_gpu_warp_rows_phase(mt_gpu_warp_rows *w, mt_tstmt *const *stmts, int n) {
    mt_arena *a = w->c->a;
    mt_tstmt *body = mt_gpu_row_outer_lets(w->c, w->row, w->ov, mt_ts_seq(a, stmts, n));
    body = mt_ts_let(a, w->lane_var, mt_arith_bin(a, TE_FLOORMOD, mt_te_var(a, w->tx), mt_te_i64(a, w->group)), body);
    mt_texpr *r = mt_arith_bin(a, TE_ADD, mt_arith_bin(a, TE_MUL, mt_te_var(a, w->bx), mt_te_i64(a, w->R)),
                               mt_arith_bin(a, TE_FLOORDIV, mt_te_var(a, w->tx), mt_te_i64(a, w->group)));
    return mt_ts_let(a, w->row, r, body);
}

mt_tstmt *mt_gpu_warp_rows_loop(mt_gpu_warp_rows *w, mt_tstmt *body) {
    mt_arena *a = w->c->a;
    mt_texpr *blocks = mt_arith_bin(a, TE_FLOORDIV, mt_arith_bin(a, TE_ADD, w->M, mt_te_i64(a, w->R - 1)),
                                    mt_te_i64(a, w->R));
    mt_tstmt *l = mt_ts_for(a, w->bx, mt_te_i64(a, 0), blocks, MT_FOR_THREAD, body);
    l->thread_tag = "blockIdx.x";
    return l;
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
    cache_ctx x = {g, s && s->kind == ST_RED, j, jj, {0}};
    for (int k = 0; k < g->ncache; k++) x.ix[k] = mt_rr_row_ix(g->c, g->corig[k], j);
    mt_tmutator m = {g->c->a, cached_load, cached_store, &x};
    return mt_tmutate_stmt(&m, body);
}

/* `for jj in range(ceildiv(N, G)): if j < N: body(j)` with j = jj * G +
 * lane (G the lanes per row); body_at builds the body for an index. The
 * guard goes when G divides N. With the row cached the loop is unrolled
 * (jj constant: the cache stays in registers) and the body reads the
 * cached inputs from there (load: the body loads the cache itself). */
static mt_tstmt *strided(gr *g, const stage *s, at_fn body_at, void *ctx, bool load) {
    rr *c = g->c;
    mt_tvar *jj = mt_tvar_new(c->a, "jj", MT_INT64);
    mt_texpr *G = I(g, g->group), *N = mt_te_cast(c->a, MT_INT64, c->N);
    mt_texpr *j = bin(g, TE_ADD, bin(g, TE_MUL, V(g, jj), G), g->lane);
    mt_texpr *steps = g->per ? I(g, g->per) : bin(g, TE_FLOORDIV, bin(g, TE_ADD, N, I(g, g->group - 1)), G);
    mt_tstmt *body = body_at(g, s, j, load ? V(g, jj) : ctx);
    if (g->per && !load) body = from_cache(g, s, body, j, V(g, jj));
    int64_t n;
    if (!mt_te_is_const_int(N, &n) || n % g->group != 0)
        body = mt_ts_if(c->a, bin(g, TE_LT, j, N), body, NULL);
    return if_valid(g, mt_ts_for(c->a, jj, I(g, 0), steps, g->per ? MT_FOR_UNROLLED : MT_FOR_SERIAL, body));
}

/* Each thread loads its elements of the cached inputs (the first statements). */
static mt_tstmt *load_at(gr *g, const stage *s, mt_texpr *j, void *ctx) {
    (void)s;
    mt_texpr *jj = ctx;
    svec b = {0};
    for (int k = 0; k < g->ncache; k++)
        if (g->input[k])
            push(g, &b, st(g, g->cache[k], jj, ld(g, g->cflat[k], mt_rr_row_ix(g->c, g->corig[k], j))));
    return mt_ts_seq(g->c->a, b.data, b.len);
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
    if (!mt_te_is_const_int(c->N, &n) || n <= 0 || (n + g->group - 1) / g->group > MAX_PER) return;
    int per = (int)((n + g->group - 1) / g->group), most = CACHE_REGS / per;
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

/* The butterfly over width lanes, masks from `from` down to 1: every lane
 * ends with F over the values of its aligned group of 2 from lanes. */
static void butterfly(gr *g, const stage *s, mt_tbuffer *acc, int from, int width) {
    mt_dtype dt = s->buf->dtype;
    if (!g->shfl[dt]) g->shfl[dt] = scoped(g, "shfl", 1, dt, MT_SCOPE_LOCAL);
    mt_tbuffer *sh = g->shfl[dt];
    for (int m = from; m >= 1; m /= 2) {
        emit(g, st(g, sh, I(g, 0), mt_te_shfl_xor(g->c->a, ld(g, acc, I(g, 0)), m, width)));
        emit(g, st(g, acc, I(g, 0), mt_rr_fapply(g->c, s, ld(g, acc, I(g, 0)), ld(g, sh, I(g, 0)))));
    }
}

/* acc[0] = I on the row's first lane, the identity on the others. */
static void red_init(gr *g, const stage *s, mt_tbuffer *acc) {
    rr *c = g->c;
    mt_texpr *init = mt_rr_lower(c, s, s->init, I(g, 0)), *id = identity(g, s);
    mt_texpr *first = bin(g, TE_EQ, g->lane, I(g, 0));
    if (mt_texpr_equal(init, id)) emit(g, st(g, acc, I(g, 0), id));
    else if (!g->valid) emit(g, st(g, acc, I(g, 0), mt_te_select(c->a, first, init, id)));
    else {
        emit(g, st(g, acc, I(g, 0), id)); /* I may read the row's memory */
        emit(g, mt_ts_if(c->a, mt_te_bin(c->a, TE_AND, g->valid, first), st(g, acc, I(g, 0), init), NULL));
    }
}

/* The partials, the warp's butterfly, and for a block per row of W > 1
 * warps their exchange through shared memory (the one barrier); every
 * thread ends with the row's value in acc (the stage's per-row local). */
static void gen_red(gr *g, int i, mt_tbuffer *acc) {
    const stage *s = &g->c->st[i];
    red_init(g, s, acc);
    emit(g, strided(g, s, red_at, acc, false));
    int width = g->group < g->warp ? g->group : g->warp, W = g->threads / g->warp;
    butterfly(g, s, acc, width / 2, width);
    if (g->valid || W == 1) return;
    mt_texpr *wl = bin(g, TE_FLOORMOD, V(g, g->tx), I(g, g->warp));
    g->red[i] = scoped(g, mt_arena_printf(g->c->a, "%s_warps", s->buf->name), W, s->buf->dtype, MT_SCOPE_SHARED);
    mt_tstmt *put = st(g, g->red[i], bin(g, TE_FLOORDIV, V(g, g->tx), I(g, g->warp)), ld(g, acc, I(g, 0)));
    emit(g, mt_ts_if(g->c->a, bin(g, TE_EQ, wl, I(g, 0)), put, NULL));
    cut(g);
    emit(g, st(g, acc, I(g, 0), ld(g, g->red[i], bin(g, TE_FLOORMOD, V(g, g->tx), I(g, W)))));
    butterfly(g, s, acc, W / 2, g->warp);
}

/* ---- ROW, ELT, per-row outputs --------------------------------------------------- */

static mt_tstmt *elt_at(gr *g, const stage *s, mt_texpr *j, void *ctx) {
    (void)ctx;
    rr *c = g->c;
    mt_tbuffer *fb = mt_lw_flat(&c->lw, s->buf)->flat;
    return st(g, fb, mt_rr_row_ix(c, s->buf, j), mt_rr_lower(c, s, s->value, j));
}

/* The row's first lane stores the per-row outputs. */
static void row_outputs(gr *g) {
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
    if (!b.len) return;
    mt_texpr *first = bin(g, TE_EQ, g->lane, I(g, 0));
    if (g->valid) first = mt_te_bin(c->a, TE_AND, g->valid, first);
    emit(g, mt_ts_if(c->a, first, mt_ts_seq(c->a, b.data, b.len), NULL));
}

/* ---- the kernel -------------------------------------------------------------------- */

/* The statements of one row (c->oval set), cut into phases. */
static void gen_row(gr *g) {
    rr *c = g->c;
    if (g->per) emit(g, strided(g, NULL, load_at, NULL, true));
    for (int i = 0; i < c->nst; i++) {
        const stage *s = &c->st[i];
        rowval *v = s->kind == ST_ELT ? NULL : find_rv(c, s->buf);
        if (s->kind == ST_RED) gen_red(g, i, v->local);
        else if (s->kind == ST_ELT) emit(g, strided(g, s, elt_at, NULL, false));
        else {
            mt_texpr *e = mt_rr_lower(c, s, s->value, NULL);
            mt_tstmt *set = st(g, v->local, I(g, 0), e);
            emit(g, reads_global(e) ? if_valid(g, set) : set); /* registers: any row may */
        }
    }
    row_outputs(g);
}

/* The row's per-thread and shared buffers around body. */
static mt_tstmt *with_buffers(gr *g, mt_tstmt *body) {
    rr *c = g->c;
    for (int i = c->nst - 1; i >= 0; i--)
        if (g->red[i]) body = mt_ts_alloc(c->a, g->red[i], body);
    for (int t = MT_DTYPE_COUNT_ - 1; t >= 0; t--)
        if (g->shfl[t]) body = mt_ts_alloc(c->a, g->shfl[t], body);
    for (int i = c->nrv - 1; i >= 0; i--) body = mt_ts_alloc(c->a, c->rv[i].local, body);
    for (int k = g->ncache - 1; k >= 0; k--) body = mt_ts_alloc(c->a, g->cache[k], body);
    return body;
}

/* for row in blockIdx.x: the outer indices of the row, then its phases. */
static mt_tstmt *block_rows(gr *g, mt_texpr *M) {
    rr *c = g->c;
    mt_tvar *row = mt_tvar_new(c->a, "row", MT_INT64), *ov[MT_MAX_RANK];
    mt_gpu_row_outer_vars(c, row, ov);
    g->lane = V(g, g->tx);
    gen_row(g);
    cut(g);
    mt_tstmt *body = with_buffers(g, mt_ts_seq(c->a, g->phases.data, g->phases.len));
    mt_tstmt *l = mt_ts_for(c->a, row, I(g, 0), M, MT_FOR_THREAD, mt_gpu_row_outer_lets(c, row, ov, body));
    l->thread_tag = "blockIdx.x";
    return l;
}

/* for bx in blockIdx.x: one phase, G lanes a row, WARP_BLOCK / G rows. */
static mt_tstmt *warp_rows(gr *g, mt_texpr *M) {
    mt_gpu_warp_rows w;
    mt_gpu_warp_rows_begin(&w, g->c, g->tx, g->threads, g->group, M);
    g->lane = w.lane, g->valid = w.valid;
    gen_row(g);
    mt_tstmt *phase = mt_gpu_warp_rows_phase(&w, g->cur.data, g->cur.len);
    g->cur = (svec){0};
    emit(g, phase);
    cut(g);
    return mt_gpu_warp_rows_loop(&w, with_buffers(g, g->phases.data[0]));
}

mt_tfunc *mt_schedule_gpu_reduce(mt_arena *a, mt_tfunc *f) {
    const mt_target_desc *t = mt_tfunc_target(f);
    if (t->kind != MT_TARGET_CUDA || t->warp_size < 1 || (t->warp_size & (t->warp_size - 1)) ||
        t->max_threads_per_block % t->warp_size)
        return f; /* whole warps of a power of two lanes */
    rr *c = MT_NEW(a, rr);
    c->a = c->lw.a = a;
    c->f = f;
    if (!mt_reduce_match(c)) return f;
    gr *g = MT_NEW(a, gr);
    int group = mt_knob_get(f, GPU_RR_RULE, "warp_rows", 1) ? mt_gpu_row_group(c->N, c->O, c->ns, t) : 0;
    g->c = c;
    g->warp = t->warp_size;
    g->threads = group ? WARP_BLOCK : mt_gpu_row_knob_threads(f, GPU_RR_RULE, t, mt_gpu_row_threads(c->N, t));
    g->group = group ? group : g->threads;
    g->tx = mt_tvar_new(a, "tx", MT_INT64);
    choose_cache(g);
    for (int i = 0; i < c->nrv; i++)
        c->rv[i].local = scoped(g, c->rv[i].buf->name, 1, c->rv[i].buf->dtype, MT_SCOPE_LOCAL);
    mt_texpr *M = I(g, 1);
    for (int k = 0; k < c->ns; k++) M = bin(g, TE_MUL, M, mt_te_cast(a, MT_INT64, c->O[k]));
    mt_tstmt *body = group ? warp_rows(g, M) : block_rows(g, M);
    mt_tfunc *h = mt_rr_function(c, body, group ? "gpu_reduce_rows (a warp per row)" : "gpu_reduce_rows");
    mt_knobs chosen = {GPU_RR_RULE, {{"warp_rows", group != 0}, {"threads", g->threads}}, group ? 1 : 2};
    return mt_knobs_chose(a, mt_knobs_mark(a, h, f, GPU_RR_RULE), &chosen);
}
