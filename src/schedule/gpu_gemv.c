/*
 * gpu_gemv.c -- the GPU schedule of a matmul with few rows (a constant M
 * of at most MAX_M: a matrix-vector product, a decode step, an MLP on one
 * sample) and its epilogue.
 *
 * It matches what the matmul rules match (matmul_common.c). With so few
 * rows there is nothing to reuse from shared memory: the work is reading
 * B once, at the memory's speed, and the sums over k are split across the
 * threads of a block. A block of T = 256 threads computes JT columns of
 * all M rows; its threads form KS k-slices of JT columns (T = KS * JT),
 * and the slice s of column c sums k = s, s + KS, s + 2 KS, ...:
 *
 *     for bx in T.thread_binding(ceildiv(N, JT), thread="blockIdx.x"):
 *         red = T.alloc_buffer((KS * M * JT,), scope="shared")
 *         for tx in T.thread_binding(T, thread="threadIdx.x"):   partial sums
 *             acc[0 .. M) = 0
 *             for kk in range(ceildiv(K, KS)):
 *                 if k < K and j < N:  acc[m] += X(m, k) * Y(k, j)  for each m
 *             red[s, m, c] = acc[m]
 *         for tx in ...:  if s < KS / 2: red[s, m, c] += red[s + KS / 2, m, c]
 *         ...             (a tree over the slices, log2 KS phases)
 *         for tx in ...:  if s == 0 and j < N: the epilogue of (m, j) from red[0, m, c]
 *
 * The thread layout follows B's contiguous axis, so that a warp reads 128
 * consecutive bytes of B per step:
 *
 *  - B contiguous along j (x @ w, w row-major): JT = 32 columns, KS = 8;
 *    consecutive threads take consecutive columns (c = tx % JT), and every
 *    thread of a warp reads the same X(m, k) (one broadcast load).
 *  - B contiguous along k (x @ w.T): KS = 32, JT = 8; consecutive threads
 *    take consecutive k (s = tx % KS), each warp one column's dot product.
 *
 * Knobs (sch.apply_rule("gpu_gemv", ...), tuning): threads (T, a power of
 * two within the target's limit) and slices (KS, a power of two, at most
 * T); JT = T / KS. Any values give the same sums up to their order.
 *
 * Numerics: a sum is reassociated (KS strided partial sums, then a tree),
 * with fused multiply-adds: an error bound of about (K / KS + log2 KS) u
 * sum |x_k y_k|, below the serial sum's (K - 1) u sum |x_k y_k|.
 */
#include "schedule/gpu_rules.h"

#include "schedule/knobs.h"
#include "schedule/matmul_internal.h"
#include "tir/arith.h"

enum { MAX_M = 4, THREADS = 256, WARP = 32, SLICES_ALONG_J = 8 }; /* the defaults of threads, slices */

#define RULE "gpu_gemv" /* its knobs (knobs.c): threads, slices */

typedef struct gv {
    mm *c;
    int64_t m;               /* rows */
    int threads;             /* of a block (knob threads) */
    int ks, jt;              /* k-slices (knob slices) and columns per block */
    bool along_k;            /* consecutive threads take consecutive k */
    int width;               /* the tree step being built: slices s < width add s + width */
    mt_tvar *tx;
    mt_texpr *j0;            /* the block's first column */
    mt_tbuffer *red;
} gv;

static mt_texpr *I(gv *g, int64_t v) { return mm_I(g->c, v); }
static mt_texpr *V(gv *g, mt_tvar *v) { return mm_V(g->c, v); }
static mt_texpr *bin(gv *g, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) {
    return mt_arith_bin(g->c->a, k, x, y);
}
static mt_texpr *i64(gv *g, mt_texpr *e) { return mm_i64(g->c, e); }
static mt_texpr *ld(gv *g, mt_tbuffer *b, mt_texpr *ix) { return mt_te_load(g->c->a, b, &ix, 1); }
static mt_tstmt *st(gv *g, mt_tbuffer *b, mt_texpr *ix, mt_texpr *v) {
    return mt_ts_store(g->c->a, b, &ix, 1, v);
}
static mt_tstmt *unrolled(gv *g, mt_tvar *v, int64_t n, mt_tstmt *body) {
    return mm_loop(g->c, v, I(g, n), n > 1 ? MT_FOR_UNROLLED : MT_FOR_SERIAL, body);
}
static mt_texpr *N_(gv *g) { return i64(g, g->c->ext[g->c->ns - 1]); }
static mt_texpr *K_(gv *g) { return i64(g, g->c->K); }

static mt_tstmt *phase(gv *g, mt_tstmt *body) {
    mt_tstmt *l = mt_ts_for(g->c->a, g->tx, I(g, 0), I(g, g->threads), MT_FOR_THREAD, body);
    l->thread_tag = "threadIdx.x";
    return l;
}

/* The thread's slice and column, bound around body (make_body gets them). */
typedef mt_tstmt *(*slice_body)(gv *g, mt_texpr *s, mt_texpr *col);

static mt_tstmt *with_slice(gv *g, slice_body make_body) {
    mt_tvar *s = mm_ivar(g->c, "s"), *col = mm_ivar(g->c, "col");
    mt_texpr *t = V(g, g->tx);
    mt_texpr *sv = g->along_k ? bin(g, TE_FLOORMOD, t, I(g, g->ks)) : bin(g, TE_FLOORDIV, t, I(g, g->jt));
    mt_texpr *cv = g->along_k ? bin(g, TE_FLOORDIV, t, I(g, g->ks)) : bin(g, TE_FLOORMOD, t, I(g, g->jt));
    mt_tstmt *body = make_body(g, V(g, s), V(g, col));
    return phase(g, mt_ts_let(g->c->a, s, sv, mt_ts_let(g->c->a, col, cv, body)));
}

/* red[s, m, c] */
static mt_texpr *red_ix(gv *g, mt_texpr *s, mt_texpr *m, mt_texpr *col) {
    mt_texpr *sm = bin(g, TE_ADD, bin(g, TE_MUL, s, I(g, g->m)), m);
    return bin(g, TE_ADD, bin(g, TE_MUL, sm, I(g, g->jt)), col);
}

/* What column col's thread of a slice computes: j < N (NULL: always). */
static mt_texpr *column_ok(gv *g, mt_texpr *j) {
    int64_t n;
    if (mt_te_is_const_int(N_(g), &n) && n % g->jt == 0) return NULL;
    return bin(g, TE_LT, j, N_(g));
}

static mt_tstmt *partials(gv *g, mt_texpr *s, mt_texpr *col) {
    mm *c = g->c;
    mt_tbuffer *acc = mm_local_buf(c, "acc", I(g, g->m), c->dt);
    mt_tvar *kk = mm_ivar(c, "kk"), *m = mm_ivar(c, "m"), *m2 = mm_ivar(c, "m"), *m3 = mm_ivar(c, "m");
    mt_texpr *j = bin(g, TE_ADD, g->j0, col);
    mt_texpr *k = bin(g, TE_ADD, bin(g, TE_MUL, V(g, kk), I(g, g->ks)), s);
    mt_texpr *args[3] = {mm_operand(c, c->X, V(g, m2), NULL, k), mm_operand(c, c->Y, NULL, j, k),
                         ld(g, acc, V(g, m2))};
    mt_tstmt *fma = unrolled(g, m2, g->m, st(g, acc, V(g, m2), mt_te_call(c->a, IN_FMA, args, 3)));
    mt_texpr *ok = bin(g, TE_LT, k, K_(g)), *jok = column_ok(g, j);
    if (jok) ok = bin(g, TE_AND, ok, jok);
    mt_tstmt *loop = mm_loop(c, kk, mm_ceildiv(c, K_(g), g->ks), MT_FOR_SERIAL, mt_ts_if(c->a, ok, fma, NULL));
    mt_tstmt *body[3] = {unrolled(g, m, g->m, st(g, acc, V(g, m), mm_fzero(c, 1))), loop,
                         unrolled(g, m3, g->m, st(g, g->red, red_ix(g, s, V(g, m3), col), ld(g, acc, V(g, m3))))};
    return mt_ts_alloc(c->a, acc, mt_ts_seq(c->a, body, 3));
}

static mt_tstmt *tree_step(gv *g, mt_texpr *s, mt_texpr *col) {
    mm *c = g->c;
    mt_tvar *m = mm_ivar(c, "m");
    mt_texpr *to = red_ix(g, s, V(g, m), col);
    mt_texpr *from = red_ix(g, bin(g, TE_ADD, s, I(g, g->width)), V(g, m), col);
    mt_tstmt *add = unrolled(g, m, g->m, st(g, g->red, to, bin(g, TE_ADD, ld(g, g->red, to), ld(g, g->red, from))));
    return mt_ts_if(c->a, bin(g, TE_LT, s, I(g, g->width)), add, NULL);
}

static mt_tstmt *final_stores(gv *g, mt_texpr *s, mt_texpr *col) {
    mm *c = g->c;
    mt_tvar *m = mm_ivar(c, "m");
    mt_texpr *j = bin(g, TE_ADD, g->j0, col);
    mt_tstmt *store = mm_final_stores(c, V(g, m), j, ld(g, g->red, red_ix(g, I(g, 0), V(g, m), col)));
    mt_texpr *ok = bin(g, TE_EQ, s, I(g, 0)), *jok = column_ok(g, j);
    if (jok) ok = bin(g, TE_AND, ok, jok);
    return mt_ts_if(c->a, ok, unrolled(g, m, g->m, store), NULL);
}

static mt_tstmt *gen_block(gv *g) {
    mm *c = g->c;
    MT_VEC(mt_tstmt *) b = {0};
    MT_VEC_PUSH(c->a, &b, with_slice(g, partials));
    for (int w = g->ks / 2; w >= 1; w /= 2) {
        g->width = w;
        MT_VEC_PUSH(c->a, &b, with_slice(g, tree_step));
    }
    MT_VEC_PUSH(c->a, &b, with_slice(g, final_stores));
    return mt_ts_alloc(c->a, g->red, mt_ts_seq(c->a, b.data, b.len));
}

/* blockIdx.x over column groups and the batch. */
static mt_tstmt *gen_grid(gv *g) {
    mm *c = g->c;
    mt_tvar *bx = mm_ivar(c, "bx");
    mt_texpr *count = mm_ceildiv(c, N_(g), g->jt);
    mm_batch_vars(c);
    g->j0 = bin(g, TE_MUL, V(g, bx), I(g, g->jt));
    return mm_grid(c, &bx, &count, 1, gen_block(g));
}

mt_tfunc *mt_schedule_gpu_gemv(mt_arena *a, mt_tfunc *f) {
    const mt_target_desc *t = mt_tfunc_target(f);
    if (t->kind != MT_TARGET_CUDA) return f;
    mm *c = MT_NEW(a, mm);
    c->a = c->lw.a = a;
    c->f = f;
    int64_t m;
    if (!mm_match(c) || !mt_te_is_const_int(c->ext[c->ns - 2], &m) || m < 1 || m > MAX_M) return f;
    gv g = {.c = c, .m = m, .tx = mm_ivar(c, "tx")};
    g.along_k = mm_operand_contiguous(c, true, true) && !mm_operand_contiguous(c, true, false);
    /* the block and its slices: powers of two (the knobs' ranges), the
     * block within the target's limit, the slices within the block */
    int64_t most = t->max_threads_per_block > 0 ? t->max_threads_per_block : THREADS;
    g.threads = (int)mt_knob_get(f, RULE, "threads", THREADS);
    while (g.threads > most) g.threads /= 2;
    g.ks = (int)mt_knob_get(f, RULE, "slices", g.along_k ? WARP : SLICES_ALONG_J);
    if (g.ks > g.threads) g.ks = g.threads;
    g.jt = g.threads / g.ks;
    mt_texpr *rn = I(&g, g.ks * m * g.jt);
    g.red = mt_tbuffer_new(a, "red", c->dt, 1, &rn);
    g.red->scope = MT_SCOPE_SHARED;

    mt_tfunc *h = mm_scheduled(c, gen_grid(&g), "gpu_gemv");
    mt_knobs k = {0};
    k.rule = RULE;
    mt_knobs_set(&k, "threads", g.threads);
    mt_knobs_set(&k, "slices", g.ks);
    return mt_knobs_chose(a, mt_knobs_mark(a, h, f, RULE), &k);
}
