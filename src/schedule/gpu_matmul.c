/*
 * gpu_matmul.c -- the GPU schedule of a matmul and its elementwise
 * epilogue: tiles of A and B staged in shared memory, a tile of C in each
 * thread's registers.
 *
 * It matches what the CPU's matmul rule matches (matmul_common.c, described
 * at the top of rule_matmul.c: C[b.., i, j] += X(b.., i, k) * Y(b.., k, j)
 * with its epilogues, X and Y any expressions) and emits one kernel, in
 * lowered form. A block computes a BM x BN tile of C with T threads, each
 * thread a TM x TN sub-tile held in `acc` (registers):
 *
 *     for b in T.thread_binding(ceildiv(N, BN) * ceildiv(M, BM) * batch, thread="blockIdx.x"):
 *         bn = b % ceildiv(N, BN); bm = b // ceildiv(N, BN) % ...; batch indices
 *         As = T.alloc_buffer((BK * (BM + 4),), scope="shared")     A's tile, k-major
 *         Bs = T.alloc_buffer((BK * (BN + 4),), scope="shared")     B's tile, k-major
 *         acc = T.alloc_buffer((TM * TN,), scope="local")
 *         for tx in T.thread_binding(T, thread="threadIdx.x"):  acc[:] = 0
 *         for k0 in range(ceildiv(K, BK)):
 *             for tx in ...:   each thread copies BM*BK/T elements of A's
 *                              tile and BN*BK/T of B's (0 past M, N or K)
 *             for tx in ...:   for kk in unroll(BK): TM values of As, TN of
 *                              Bs into registers, TM*TN fused multiply-adds
 *         for tx in ...:       the epilogue at each element, stored where
 *                              i < M and j < N
 *
 * Each statement at the block level is a phase (tir.h, "GPU kernels"):
 * the copy and the products are separated by barriers, so the classic
 * two-barrier loop. The details that make it fast:
 *
 *  - Register tile. A thread's TM rows are groups of 4 consecutive rows
 *    spaced BM / (TM / 4) apart (and the same for its TN columns): the 4
 *    values of a group are 16 aligned bytes of shared memory, one 128-bit
 *    load (the compiler merges them), and the 16 threads of a half-warp
 *    that share a row read 16 consecutive groups, with no bank conflict.
 *    Per k, a thread loads TM + TN values and does TM * TN FMAs (8 x 8: 16
 *    loads, 64 FMAs).
 *  - Coalesced copies. The copy of A's tile walks A's contiguous axis:
 *    along k for a row-major A (consecutive threads read consecutive k),
 *    along i for a transposed one (a.T @ b); likewise B along j or k. The
 *    contiguous axis is found by lowering the operand at a 4-wide ramp of
 *    the index (as the CPU rule does for y_vec). The tiles are stored
 *    k-major with rows padded by 4 elements, so that the copy's stores of
 *    one warp fall into distinct banks whichever way it walks.
 *  - Sizes (the knob tile when given), always 256 threads: BM = BN = 128, BK = 8, TM = TN = 8 when that
 *    makes at least one block per SM; else BM = BN = 64, BK = 16, TM = TN =
 *    4 when that makes a block for at least 3/4 of the SMs; else BM = BN =
 *    32, BK = 32, TM = TN = 2. A 2 x 2 register tile reads shared memory
 *    once per product, so a thread of 64 does twice the work per read: on an
 *    H200 the MLP's 4096 x 784 @ 784 x 128 (128 blocks of 64 for 132 SMs, or
 *    512 of 32) took 49 us a run with tile 64 and 78 with tile 32
 *    (mtc --tune, 2026-11-28). A symbolic dim counts as 4096.
 *  - Occupancy. Two blocks per SM for float32 (the kernel asks for it:
 *    min_blocks_per_sm, at most 128 registers a thread), so that one
 *    block's products run while the other waits at a barrier.
 *  - Edges. Elements past M, N or K are copied as zeros, so the products
 *    need no guard; the stores are guarded by i < M and j < N. A guard
 *    known to hold (a constant dim that the tile divides) is left out.
 *
 * Split-K (choose_split). When the grid of tiles leaves at least half the
 * target's SMs idle, a SIMT kernel of constant M, N and K without a batch
 * takes K in S splits (knob split_k; else SMs / blocks, at most
 * MAX_SPLITS, each split at least MIN_SPLIT_STEPS steps of BK): the grid
 * gets S times the blocks (the split its slowest index), block s runs
 * steps [s * per, (s + 1) * per) of the loop above (copies tested against
 * K when the splits overshoot it) and stores its tile's sums to C_part[s]
 * (a function-level buffer, S x M x N: the host allocates it), and a
 * second kernel, a thread per element of C, adds the S sums in order and
 * applies the epilogue (gen_split_sum). Splits add SMs, not blocks per
 * SM: on an H200 the MLP's 4096 x 784 @ 784 x 128 (128 blocks of 64 for
 * 132 SMs) took 34 + 4 us in 2 splits against 39 us unsplit (ncu,
 * 2026-11-28), so a grid that fills more than half the SMs is not split.
 *
 * Numerics: each element sums k in increasing order with fused
 * multiply-adds, as the CPU rule does: the same results as the CPU up to
 * the order of the epilogue's math (the GPU's expf, erff, ...); with
 * split-K, each split's sum in order, then the splits' in order.
 *
 * Tensor cores. When the target has them (mma_m/n/k = 16: the WMMA tile
 * of float16 inputs with float32 sums) and both operands are float16
 * values widened to float32 -- or both bfloat16 values, where the target
 * says its tensor cores take them (mma_bf16) -- warps take the threads'
 * place: the block's
 * 8 (or 4) warps each own a grid of fm x fn 16 x 16 accumulator fragments
 * (T.wmma_*, tir.h), the shared tiles hold the 16-bit inputs (rows padded by 8:
 * ldm 16-byte aligned, ldmatrix phases in distinct banks), BK = 32, and
 * per 16 of k a warp loads fm fragments of A (column-major from the
 * k-major tile) and fn of B, then does fm x fn mma_syncs. A copy that
 * walks a contiguous axis of constant length 8 divides takes chunks of 8
 * elements, 16 bytes (copy_vec: one 128-bit load where the tensor is
 * aligned, mt_load_half8; B's chunks one 128-bit store into its tile).
 * The copies, the
 * double buffering, the zeros past the edges and the grid are the SIMT
 * kernel's. The epilogue goes through a 16 x 16 float32 staging tile per
 * warp (the WMMA API does not say which lane holds which element), the
 * lanes taking two rows of 16 at a time. Tiles: 128 (8 warps of 64 x 32),
 * 64 (4 of 32 x 32), 32 (4 of 16 x 16), by the same count of blocks as
 * above. Why WMMA and not inline mma.sync PTX: opaque fragments let the
 * emulation model a fragment as the warp's whole tile (no lane layout to
 * reproduce), the text stays readable, and it compiles for every arch
 * here (ldmatrix + mma.m16n8k16 underneath). On an H200: correct, and
 * 0.19 of cuBLAS for a float16 4096^3 (docs/performance.md).
 */
#include "schedule/gpu_rules.h"

#include "schedule/matmul_internal.h"
#include "tir/arith.h"

#define GPU_MM_RULE "gpu_matmul" /* its knob (knobs.h): tile */

enum { PAD = 4, TC_PAD = 8, TC_BK = 32, FRAG = 16, GROUP = 4, ASSUMED_DIM = 4096, MAX_SPLITS = 8, MIN_SPLIT_STEPS = 8,
       SUM_THREADS = 256 };

typedef struct gm {
    mm *c;
    int bm, bn, bk, tm, tn, threads;
    bool tc;                 /* tensor cores: warp tiles of WMMA fragments */
    mt_dtype tile_dt;        /* the shared tiles' dtype: c->dt, or float16 / bfloat16 (tc) */
    int pad;                 /* elements that pad each row of a shared tile */
    int warp, warps_n;       /* tc: threads per warp, warps along N */
    int fm, fn;              /* tc: fragments per warp along M and N */
    mt_tbuffer *afrag, *bfrag, *stage; /* tc: A's and B's fragments, the epilogue's staging */
    bool x_along_i;          /* A's tile is copied along i (else along k) */
    bool y_along_k;          /* B's tile is copied along k (else along j) */
    mt_tvar *tx;             /* the thread index of every phase */
    mt_texpr *i0, *j0;       /* the tile's origin: rows, columns */
    mt_tbuffer *as, *bs, *acc;
    int splits, per;         /* split-K: S splits of per steps of BK each (S = 1: none) */
    int64_t sm, sn;          /* split-K: M and N (constants where it splits) */
    bool k_guard;            /* the copies test k < K (the splits overshoot K) */
    mt_tvar *sv;             /* split-K: the block's split */
    mt_tbuffer *part;        /* split-K: the splits' partial sums, S x M x N (global) */
} gm;

/* ---- expressions ------------------------------------------------------------------ */

static mt_texpr *I(gm *g, int64_t v) { return mm_I(g->c, v); }
static mt_texpr *V(gm *g, mt_tvar *v) { return mm_V(g->c, v); }
static mt_texpr *bin(gm *g, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) {
    return mt_arith_bin(g->c->a, k, x, y);
}
static mt_texpr *i64(gm *g, mt_texpr *e) { return mm_i64(g->c, e); }
static mt_texpr *ld(gm *g, mt_tbuffer *b, mt_texpr *ix) { return mt_te_load(g->c->a, b, &ix, 1); }
static mt_tstmt *st(gm *g, mt_tbuffer *b, mt_texpr *ix, mt_texpr *v) {
    return mt_ts_store(g->c->a, b, &ix, 1, v);
}
static mt_tstmt *unrolled(gm *g, mt_tvar *v, int n, mt_tstmt *body) {
    return mm_loop(g->c, v, I(g, n), n > 1 ? MT_FOR_UNROLLED : MT_FOR_SERIAL, body);
}

static mt_texpr *M_(gm *g) { return i64(g, g->c->ext[g->c->ns - 2]); }
static mt_texpr *N_(gm *g) { return i64(g, g->c->ext[g->c->ns - 1]); }
static mt_texpr *K_(gm *g) { return i64(g, g->c->K); }

/* x < bound, or NULL when it always holds: x's tile origin is a multiple of
 * tile, and a constant bound is too. */
static mt_texpr *below(gm *g, mt_texpr *x, mt_texpr *bound, int tile) {
    int64_t b;
    if (mt_te_is_const_int(bound, &b) && b % tile == 0) return NULL;
    return bin(g, TE_LT, x, bound);
}

static mt_texpr *both(gm *g, mt_texpr *x, mt_texpr *y) {
    return !x ? y : !y ? x : bin(g, TE_AND, x, y);
}

/* The offset of register-tile index r (0 .. t) in a tile of `tile`, for a
 * thread at position p of the tile/t threads along it (top of the file). */
static mt_texpr *spread(gm *g, mt_texpr *r, mt_texpr *p, int tile, int t) {
    int grp = t < GROUP ? t : GROUP;
    mt_texpr *outer = bin(g, TE_MUL, bin(g, TE_FLOORDIV, r, I(g, grp)), I(g, tile / (t / grp)));
    mt_texpr *inner = bin(g, TE_ADD, bin(g, TE_MUL, p, I(g, grp)), bin(g, TE_FLOORMOD, r, I(g, grp)));
    return bin(g, TE_ADD, outer, inner);
}

/* ---- phases ----------------------------------------------------------------------- */

static mt_tstmt *phase(gm *g, mt_tstmt *body) {
    mt_tstmt *l = mt_ts_for(g->c->a, g->tx, I(g, 0), I(g, g->threads), MT_FOR_THREAD, body);
    l->thread_tag = "threadIdx.x";
    return l;
}

/* The thread's row and column positions in the tile, bound around body. */
typedef struct pos { mt_tvar *row, *col; } pos;

static mt_tstmt *with_pos(gm *g, pos *p, mt_tstmt *body) {
    mt_texpr *across = I(g, g->bn / g->tn);
    body = mt_ts_let(g->c->a, p->col, bin(g, TE_FLOORMOD, V(g, g->tx), across), body);
    return mt_ts_let(g->c->a, p->row, bin(g, TE_FLOORDIV, V(g, g->tx), across), body);
}

static pos new_pos(gm *g) { return (pos){mm_ivar(g->c, "trow"), mm_ivar(g->c, "tcol")}; }


/* How an operand's tile is copied: chunk e = l * T + tx of the tile
 * (l < per / vec) is vec consecutive elements (x, kk + v) (along k) or
 * (x + v, kk) (along x), x along the operand's rows (columns), kk along k;
 * along_x: consecutive threads take consecutive chunks along x (else
 * along kk). The copy goes through registers (reg): fetched from memory
 * one step ahead, stashed into shared memory at the start of the step. */
typedef mt_texpr *(*operand_at)(gm *g, mt_texpr *x, mt_texpr *k);

typedef struct tile_copy {
    mt_tbuffer *tile, *reg;
    int len;                 /* BM or BN */
    bool along_x;
    mt_texpr *x0, *bound;    /* the tile's first row (column) and M (N) */
    operand_at at;
    int vec;                 /* elements per chunk (copy_vec) */
} tile_copy;

/* A float16 or bfloat16 value widened to float32 (an operand the tensor
 * cores take): its 16-bit dtype, else MT_DTYPE_COUNT_. */
static mt_dtype widened_16(const mt_texpr *e) {
    bool w = e->kind == TE_CAST && e->dtype == MT_FLOAT32 && mt_dtype_is_half(e->a->dtype) && e->lanes == 1;
    return w ? e->a->dtype : MT_DTYPE_COUNT_;
}

/* The operand as the tiles hold it: its 16-bit value for tensor cores. */
static mt_texpr *in_tile(gm *g, mt_texpr *e) { return g->tc && widened_16(e) == g->tile_dt ? e->a : e; }

static mt_texpr *a_at(gm *g, mt_texpr *i, mt_texpr *k) { return in_tile(g, mm_operand(g->c, g->c->X, i, NULL, k)); }
static mt_texpr *b_at(gm *g, mt_texpr *j, mt_texpr *k) { return in_tile(g, mm_operand(g->c, g->c->Y, NULL, j, k)); }

static int per_thread(gm *g, const tile_copy *t) { return t->len * g->bk / g->threads; }

/* The walked extent (len or BK) counts w = extent / vec chunks and T is a
 * multiple of w, so l only adds l * (T / w) to the other index: x = tx %
 * w * vec, kk = l * (T / w) + tx / w (along x), or x = l * (T / w) + tx /
 * w, kk = tx % w * vec (the chunk's first element). Written so, each
 * thread's elements are one address plus constant offsets. */
static void element(gm *g, const tile_copy *t, mt_tvar *l, mt_texpr **x, mt_texpr **kk) {
    int w = (t->along_x ? t->len : g->bk) / t->vec;
    mt_texpr *in = bin(g, TE_MUL, bin(g, TE_FLOORMOD, V(g, g->tx), I(g, w)), I(g, t->vec));
    mt_texpr *across = bin(g, TE_ADD, bin(g, TE_MUL, V(g, l), I(g, g->threads / w)),
                           bin(g, TE_FLOORDIV, V(g, g->tx), I(g, w)));
    *x = t->along_x ? in : across;
    *kk = t->along_x ? across : in;
}

/* A chunk's element v: (x + v, kk) or (x, kk + v); body in a vectorized
 * loop over v (none for chunks of one). */
typedef struct lane { mt_tvar *v; mt_texpr *off; } lane;

static lane new_lane(gm *g, const tile_copy *t) {
    mt_tvar *v = mm_ivar(g->c, "v");
    return (lane){v, t->vec > 1 ? V(g, v) : I(g, 0)};
}

static mt_tstmt *over_lanes(gm *g, const tile_copy *t, lane ln, mt_tstmt *body) {
    return t->vec > 1 ? mm_loop(g->c, ln.v, I(g, t->vec), MT_FOR_VECTORIZED, body) : body;
}

/* reg[l * vec + v] = the operand at the chunk's element v, zero past the
 * edges (each chunk wholly inside or outside: copy_vec). */
static mt_tstmt *fetch(gm *g, const tile_copy *t, mt_texpr *k0) {
    mt_tvar *l = mm_ivar(g->c, "l");
    lane ln = new_lane(g, t);
    mt_texpr *x, *kk;
    element(g, t, l, &x, &kk);
    mt_texpr *gx = bin(g, TE_ADD, t->x0, x), *gk = bin(g, TE_ADD, k0, kk);
    mt_texpr *kok = g->k_guard ? bin(g, TE_LT, gk, K_(g)) : below(g, gk, K_(g), g->bk);
    mt_texpr *ok = both(g, below(g, gx, t->bound, t->len), kok);
    mt_texpr *ri = bin(g, TE_ADD, bin(g, TE_MUL, V(g, l), I(g, t->vec)), ln.off);
    mt_texpr *at = t->along_x ? t->at(g, bin(g, TE_ADD, gx, ln.off), gk) : t->at(g, gx, bin(g, TE_ADD, gk, ln.off));
    mt_tstmt *s = over_lanes(g, t, ln, st(g, t->reg, ri, at));
    if (ok) {
        lane z = new_lane(g, t);
        mt_texpr *zi = bin(g, TE_ADD, bin(g, TE_MUL, V(g, l), I(g, t->vec)), z.off);
        s = mt_ts_if(g->c->a, ok, s, over_lanes(g, t, z, st(g, t->reg, zi, mt_te_float(g->c->a, g->tile_dt, 0.0))));
    }
    return unrolled(g, l, per_thread(g, t) / t->vec, s);
}

/* tile[kk * (len + pad) + x] = reg[l * vec + v], at the chunk's element v. */
static mt_tstmt *stash(gm *g, const tile_copy *t) {
    mt_tvar *l = mm_ivar(g->c, "l");
    lane ln = new_lane(g, t);
    mt_texpr *x, *kk;
    element(g, t, l, &x, &kk);
    if (t->along_x) x = bin(g, TE_ADD, x, ln.off);
    else kk = bin(g, TE_ADD, kk, ln.off);
    mt_texpr *ix = bin(g, TE_ADD, bin(g, TE_MUL, kk, I(g, t->len + g->pad)), x);
    mt_texpr *ri = bin(g, TE_ADD, bin(g, TE_MUL, V(g, l), I(g, t->vec)), ln.off);
    return unrolled(g, l, per_thread(g, t) / t->vec, over_lanes(g, t, ln, st(g, t->tile, ix, ld(g, t->reg, ri))));
}

/* Elements per chunk of a tensor-core tile's copy: 16 bytes (8 float16 or
 * bfloat16, one 128-bit load where the tensor is aligned: mt_load_half8)
 * when the copy walks a contiguous axis of the operand whose length is a
 * constant multiple of 8 -- every chunk then wholly inside or outside the
 * operand, and 16-byte aligned wherever the tensor's start is -- else 1.
 * The SIMT kernel copies one element at a time (its fetches are float32 of
 * 4 bytes, tuned so; vector copies there are not measured). */
static int copy_vec(gm *g, const tile_copy *t, bool contiguous) {
    enum { VEC = 16 / 2 };
    int64_t n;
    int walk = t->along_x ? t->len : g->bk;
    mt_texpr *bound = t->along_x ? t->bound : K_(g);
    if (!g->tc || !contiguous || !mt_te_is_const_int(bound, &n) || n % VEC != 0) return 1;
    int w = walk / VEC;
    return walk % VEC == 0 && per_thread(g, t) % VEC == 0 && g->threads % w == 0 ? VEC : 1;
}

/* acc = 0, and the first step's copies fetched. */
static mt_tstmt *init_phase(gm *g, const tile_copy *ta, const tile_copy *tb, mt_texpr *k0) {
    mt_tvar *r = mm_ivar(g->c, "r");
    mt_tstmt *body[3] = {unrolled(g, r, g->tm * g->tn, st(g, g->acc, V(g, r), mm_fzero(g->c, 1))),
                         fetch(g, ta, k0), fetch(g, tb, k0)};
    return phase(g, mt_ts_seq(g->c->a, body, 3));
}

/* reg[0 .. t) = tile[kk, the thread's t rows (or columns) at position p]:
 * groups of 4 float32 as vector copies (aligned: the tile's row length,
 * the groups' spacing and p * 4 are multiples of 4), else one by one. */
static mt_tstmt *load_regs(gm *g, mt_tbuffer *reg, mt_tbuffer *tile, mt_texpr *kk, mt_texpr *p,
                           int len, int t) {
    mm *c = g->c;
    mt_texpr *row = bin(g, TE_MUL, kk, I(g, len + PAD));
    mt_tvar *q = mm_ivar(c, "q");
    if (c->dt != MT_FLOAT32 || t % GROUP != 0) {
        mt_texpr *at = bin(g, TE_ADD, row, spread(g, V(g, q), p, len, t));
        return unrolled(g, q, t, st(g, reg, V(g, q), ld(g, tile, at)));
    }
    mt_texpr *q4 = bin(g, TE_MUL, V(g, q), I(g, GROUP));
    mt_texpr *at = mt_lw_ramp(&c->lw, bin(g, TE_ADD, row, spread(g, q4, p, len, t)), GROUP);
    mt_tstmt *copy = st(g, reg, mt_lw_ramp(&c->lw, q4, GROUP), ld(g, tile, at));
    return unrolled(g, q, t / GROUP, copy);
}

/* first; then for kk: ar = As[kk, rows], br = Bs[kk, cols], acc += ar x br. */
static mt_tstmt *product_phase(gm *g, mt_tstmt *first) {
    mm *c = g->c;
    pos p = new_pos(g);
    mt_tbuffer *ar = mm_local_buf(c, "a_reg", I(g, g->tm), c->dt);
    mt_tbuffer *br = mm_local_buf(c, "b_reg", I(g, g->tn), c->dt);
    mt_tvar *kk = mm_ivar(c, "kk");
    mt_tstmt *la = load_regs(g, ar, g->as, V(g, kk), V(g, p.row), g->bm, g->tm);
    mt_tstmt *lb = load_regs(g, br, g->bs, V(g, kk), V(g, p.col), g->bn, g->tn);
    mt_tvar *i2 = mm_ivar(c, "i"), *j2 = mm_ivar(c, "j");
    mt_texpr *r = bin(g, TE_ADD, bin(g, TE_MUL, V(g, i2), I(g, g->tn)), V(g, j2));
    mt_texpr *args[3] = {ld(g, ar, V(g, i2)), ld(g, br, V(g, j2)), ld(g, g->acc, r)};
    mt_tstmt *fma = st(g, g->acc, r, mt_te_call(c->a, IN_FMA, args, 3));
    mt_tstmt *body[3] = {la, lb, unrolled(g, i2, g->tm, unrolled(g, j2, g->tn, fma))};
    mt_tstmt *loop = unrolled(g, kk, g->bk, mt_ts_seq(c->a, body, 3));
    loop = mt_ts_alloc(c->a, ar, mt_ts_alloc(c->a, br, loop));
    return phase(g, mm_seq2(c, first, with_pos(g, &p, loop)));
}

/* Split-K: the index of split sp's partial sum of C[i, j]: (sp * M + i) * N + j. */
static mt_texpr *part_at(gm *g, mt_texpr *sp, mt_texpr *i, mt_texpr *j) {
    return bin(g, TE_ADD, bin(g, TE_MUL, bin(g, TE_ADD, bin(g, TE_MUL, sp, M_(g)), i), N_(g)), j);
}

/* The epilogue of each element of the thread's sub-tile (split-K: its
 * partial sum, the epilogue after the splits are added). */
static mt_tstmt *store_phase(gm *g) {
    mm *c = g->c;
    pos p = new_pos(g);
    mt_tvar *i = mm_ivar(c, "i"), *j = mm_ivar(c, "j");
    mt_texpr *gi = bin(g, TE_ADD, g->i0, spread(g, V(g, i), V(g, p.row), g->bm, g->tm));
    mt_texpr *gj = bin(g, TE_ADD, g->j0, spread(g, V(g, j), V(g, p.col), g->bn, g->tn));
    mt_texpr *r = bin(g, TE_ADD, bin(g, TE_MUL, V(g, i), I(g, g->tn)), V(g, j));
    mt_tstmt *s = g->splits > 1 ? st(g, g->part, part_at(g, V(g, g->sv), gi, gj), ld(g, g->acc, r))
                                : mm_final_stores(c, gi, gj, ld(g, g->acc, r));
    mt_texpr *ok = both(g, below(g, gi, M_(g), g->bm), below(g, gj, N_(g), g->bn));
    if (ok) s = mt_ts_if(c->a, ok, s, NULL);
    return phase(g, with_pos(g, &p, unrolled(g, i, g->tm, unrolled(g, j, g->tn, s))));
}

/* ---- tensor cores ------------------------------------------------------------------- */

/* Fragment f of b, and the address of b's element at off (tir.h, T.wmma_*). */
static mt_texpr *frag(gm *g, mt_tbuffer *b, mt_texpr *f) { return ld(g, b, bin(g, TE_MUL, f, I(g, MT_WMMA_FRAG))); }
static mt_tstmt *wmma(gm *g, mt_intrin in, mt_texpr *x, mt_texpr *y, mt_texpr *z) {
    return mt_ts_eval(g->c->a, mt_te_wmma(g->c->a, in, x, y, z));
}
static mt_texpr *ldm(gm *g, int len) { return mt_te_int(g->c->a, MT_INT32, len); }

/* The warp's place in the block tile: rows wr * fm * 16, columns wc * fn * 16. */
typedef struct wpos { mt_tvar *wr, *wc; } wpos;

static mt_tstmt *with_wpos(gm *g, wpos *p, mt_tstmt *body) {
    mt_texpr *w = bin(g, TE_FLOORDIV, V(g, g->tx), I(g, g->warp));
    body = mt_ts_let(g->c->a, p->wc, bin(g, TE_FLOORMOD, w, I(g, g->warps_n)), body);
    return mt_ts_let(g->c->a, p->wr, bin(g, TE_FLOORDIV, w, I(g, g->warps_n)), body);
}

static wpos new_wpos(gm *g) { return (wpos){mm_ivar(g->c, "wr"), mm_ivar(g->c, "wc")}; }

/* The warp's first row (column) of fragment q: w * n * 16 + q * 16. */
static mt_texpr *frag_origin(gm *g, mt_tvar *w, int n, mt_texpr *q) {
    return bin(g, TE_ADD, bin(g, TE_MUL, V(g, w), I(g, n * FRAG)), bin(g, TE_MUL, q, I(g, FRAG)));
}

/* Each accumulator = 0, and the first step's copies fetched. */
static mt_tstmt *tc_init_phase(gm *g, const tile_copy *ta, const tile_copy *tb) {
    mt_tvar *r = mm_ivar(g->c, "r");
    mt_tstmt *fill = wmma(g, IN_WMMA_FILL, frag(g, g->acc, V(g, r)), mt_te_float(g->c->a, MT_FLOAT32, 0.0), NULL);
    mt_tstmt *body[3] = {unrolled(g, r, g->fm * g->fn, fill), fetch(g, ta, I(g, 0)), fetch(g, tb, I(g, 0))};
    return phase(g, mt_ts_seq(g->c->a, body, 3));
}

/* Fragments q < n of a tile (A's or B's) at k-row kk * 16, the warp's w. */
static mt_tstmt *tc_load(gm *g, mt_intrin in, mt_tbuffer *f, mt_tbuffer *tile, int len, mt_tvar *kk,
                         mt_tvar *w, int n) {
    mt_tvar *q = mm_ivar(g->c, "q");
    mt_texpr *row = bin(g, TE_MUL, V(g, kk), I(g, FRAG * (len + g->pad)));
    mt_texpr *at = ld(g, tile, bin(g, TE_ADD, row, frag_origin(g, w, n, V(g, q))));
    return unrolled(g, q, n, wmma(g, in, frag(g, f, V(g, q)), at, ldm(g, len + g->pad)));
}

/* first; then per 16 of k: the warp's fm fragments of A and fn of B from
 * the shared tiles, fm x fn tensor-core products into the accumulators. */
static mt_tstmt *tc_product_phase(gm *g, mt_tstmt *first) {
    mm *c = g->c;
    wpos p = new_wpos(g);
    mt_tvar *kk = mm_ivar(c, "kk"), *i = mm_ivar(c, "i"), *j = mm_ivar(c, "j");
    mt_texpr *r = bin(g, TE_ADD, bin(g, TE_MUL, V(g, i), I(g, g->fn)), V(g, j));
    mt_tstmt *mma = wmma(g, IN_WMMA_MMA, frag(g, g->acc, r), frag(g, g->afrag, V(g, i)), frag(g, g->bfrag, V(g, j)));
    mt_tstmt *body[3] = {tc_load(g, IN_WMMA_LOAD_A, g->afrag, g->as, g->bm, kk, p.wr, g->fm),
                         tc_load(g, IN_WMMA_LOAD_B, g->bfrag, g->bs, g->bn, kk, p.wc, g->fn),
                         unrolled(g, i, g->fm, unrolled(g, j, g->fn, mma))};
    mt_tstmt *loop = unrolled(g, kk, g->bk / FRAG, mt_ts_seq(c->a, body, 3));
    return phase(g, mm_seq2(c, first, with_wpos(g, &p, loop)));
}

/* The epilogue: each accumulator through the warp's 16 x 16 staging
 * tile, whose elements the lanes then take 32 at a time (two rows of
 * 16: coalesced stores), the epilogue at each, stored where i < M, j < N. */
static mt_tstmt *tc_store_phase(gm *g) {
    mm *c = g->c;
    wpos p = new_wpos(g);
    mt_tvar *i = mm_ivar(c, "i"), *j = mm_ivar(c, "j"), *e = mm_ivar(c, "e");
    mt_tvar *lane = mm_ivar(c, "lane"), *sw = mm_ivar(c, "stage0");
    int rows = g->warp / FRAG; /* rows of the staging tile per pass of the warp */
    mt_texpr *row = bin(g, TE_ADD, bin(g, TE_MUL, V(g, e), I(g, rows)), bin(g, TE_FLOORDIV, V(g, lane), I(g, FRAG)));
    mt_texpr *col = bin(g, TE_FLOORMOD, V(g, lane), I(g, FRAG));
    mt_texpr *gi = bin(g, TE_ADD, g->i0, bin(g, TE_ADD, frag_origin(g, p.wr, g->fm, V(g, i)), row));
    mt_texpr *gj = bin(g, TE_ADD, g->j0, bin(g, TE_ADD, frag_origin(g, p.wc, g->fn, V(g, j)), col));
    mt_texpr *at = bin(g, TE_ADD, V(g, sw), bin(g, TE_ADD, bin(g, TE_MUL, row, I(g, FRAG)), col));
    mt_tstmt *s = mm_final_stores(c, gi, gj, ld(g, g->stage, at));
    mt_texpr *ok = both(g, below(g, gi, M_(g), g->bm), below(g, gj, N_(g), g->bn));
    if (ok) s = mt_ts_if(c->a, ok, s, NULL);
    mt_texpr *r = bin(g, TE_ADD, bin(g, TE_MUL, V(g, i), I(g, g->fn)), V(g, j));
    mt_tstmt *put = wmma(g, IN_WMMA_STORE, ld(g, g->stage, V(g, sw)), frag(g, g->acc, r), ldm(g, FRAG));
    mt_tstmt *each = mm_seq2(c, put, unrolled(g, e, MT_WMMA_FRAG / g->warp, s));
    mt_tstmt *body = unrolled(g, i, g->fm, unrolled(g, j, g->fn, each));
    mt_texpr *w = bin(g, TE_FLOORDIV, V(g, g->tx), I(g, g->warp));
    body = mt_ts_let(c->a, sw, bin(g, TE_MUL, w, I(g, MT_WMMA_FRAG)), body);
    body = mt_ts_let(c->a, lane, bin(g, TE_FLOORMOD, V(g, g->tx), I(g, g->warp)), body);
    return phase(g, with_wpos(g, &p, body));
}

static mt_tbuffer *fragments(gm *g, const char *name, int n, mt_scope scope) {
    mt_dtype dt = scope == MT_SCOPE_WMMA_ACC ? MT_FLOAT32 : g->tile_dt;
    mt_tbuffer *b = mm_local_buf(g->c, name, I(g, (int64_t)n * MT_WMMA_FRAG), dt);
    b->scope = scope;
    return b;
}

/* ---- the kernel --------------------------------------------------------------------- */

static mt_tbuffer *shared(gm *g, const char *name, int len) {
    mt_tbuffer *b = mm_local_buf(g->c, name, I(g, (int64_t)g->bk * (len + g->pad)), g->tile_dt);
    b->scope = MT_SCOPE_SHARED;
    return b;
}

/* The tile's phases, inside the block's buffers: the copies of step k0 + 1
 * are fetched into registers while step k0's products run, then stashed
 * into the shared tiles at the start of the next step. */
static mt_tstmt *gen_tile(gm *g) {
    mm *c = g->c;
    tile_copy ta = {g->as, mm_local_buf(c, "A_next", I(g, g->bm * g->bk / g->threads), g->tile_dt), g->bm,
                    g->x_along_i, g->i0, M_(g), a_at, 1};
    tile_copy tb = {g->bs, mm_local_buf(c, "B_next", I(g, g->bn * g->bk / g->threads), g->tile_dt), g->bn,
                    !g->y_along_k, g->j0, N_(g), b_at, 1};
    ta.vec = copy_vec(g, &ta, mm_operand_contiguous(c, false, !ta.along_x));
    tb.vec = copy_vec(g, &tb, mm_operand_contiguous(c, true, !tb.along_x));
    mt_tvar *k0 = mm_ivar(c, "k0");
    mt_texpr *steps = g->splits > 1 ? I(g, g->per) : mm_ceildiv(c, K_(g), g->bk);
    mt_texpr *kb = g->splits > 1 ? bin(g, TE_MUL, V(g, g->sv), I(g, (int64_t)g->per * g->bk)) : I(g, 0);
    mt_texpr *k1 = bin(g, TE_ADD, V(g, k0), I(g, 1));
    mt_texpr *next = bin(g, TE_ADD, kb, bin(g, TE_MUL, k1, I(g, g->bk)));
    mt_tstmt *ahead = mt_ts_if(c->a, bin(g, TE_LT, k1, steps),
                               mm_seq2(c, fetch(g, &ta, next), fetch(g, &tb, next)), NULL);
    mt_tstmt *stash_phase = phase(g, mm_seq2(c, stash(g, &ta), stash(g, &tb)));
    mt_tstmt *step = mm_seq2(c, stash_phase, g->tc ? tc_product_phase(g, ahead) : product_phase(g, ahead));
    mt_tstmt *body[3] = {g->tc ? tc_init_phase(g, &ta, &tb) : init_phase(g, &ta, &tb, kb),
                         mm_loop(c, k0, steps, MT_FOR_SERIAL, step), g->tc ? tc_store_phase(g) : store_phase(g)};
    mt_tstmt *s = mt_ts_seq(c->a, body, 3);
    if (g->tc) s = mt_ts_alloc(c->a, g->afrag, mt_ts_alloc(c->a, g->bfrag, s));
    s = mt_ts_alloc(c->a, g->acc, mt_ts_alloc(c->a, ta.reg, mt_ts_alloc(c->a, tb.reg, s)));
    if (g->tc) s = mt_ts_alloc(c->a, g->stage, s);
    return mt_ts_alloc(c->a, g->as, mt_ts_alloc(c->a, g->bs, s));
}

/* One blockIdx.x over the column tiles (fastest), the row tiles and the batch. */
static mt_tstmt *gen_grid(gm *g) {
    mm *c = g->c;
    mt_tvar *tile[3] = {mm_ivar(c, "bn"), mm_ivar(c, "bm"), g->sv}; /* along N fastest; split-K slowest */
    mt_texpr *count[3] = {mm_ceildiv(c, N_(g), g->bn), mm_ceildiv(c, M_(g), g->bm), I(g, g->splits)};
    mm_batch_vars(c);
    g->i0 = bin(g, TE_MUL, V(g, tile[1]), I(g, g->bm));
    g->j0 = bin(g, TE_MUL, V(g, tile[0]), I(g, g->bn));
    return mm_grid(c, tile, count, g->splits > 1 ? 3 : 2, gen_tile(g));
}

/* Split-K's second kernel: a thread per element of C, the splits' partial
 * sums added in split order, then the epilogue (mm_final_stores). */
static mt_tstmt *gen_split_sum(gm *g) {
    mm *c = g->c;
    mt_tvar *b = mm_ivar(c, "blk"), *tx = mm_ivar(c, "tx"), *e = mm_ivar(c, "e");
    mt_tvar *i = mm_ivar(c, "i"), *j = mm_ivar(c, "j");
    int64_t m = g->sm, n = g->sn;
    mt_texpr *sum = ld(g, g->part, part_at(g, I(g, 0), V(g, i), V(g, j)));
    for (int sp = 1; sp < g->splits; sp++)
        sum = bin(g, TE_ADD, sum, ld(g, g->part, part_at(g, I(g, sp), V(g, i), V(g, j))));
    mt_tstmt *body = mm_final_stores(c, V(g, i), V(g, j), sum);
    body = mt_ts_let(c->a, j, bin(g, TE_FLOORMOD, V(g, e), I(g, n)), body);
    body = mt_ts_let(c->a, i, bin(g, TE_FLOORDIV, V(g, e), I(g, n)), body);
    if (m * n % SUM_THREADS) body = mt_ts_if(c->a, bin(g, TE_LT, V(g, e), I(g, m * n)), body, NULL);
    body = mt_ts_let(c->a, e, bin(g, TE_ADD, bin(g, TE_MUL, V(g, b), I(g, SUM_THREADS)), V(g, tx)), body);
    mt_tstmt *l = mt_ts_for(c->a, tx, I(g, 0), I(g, SUM_THREADS), MT_FOR_THREAD, body);
    l->thread_tag = "threadIdx.x";
    l = mt_ts_for(c->a, b, I(g, 0), I(g, (m * n + SUM_THREADS - 1) / SUM_THREADS), MT_FOR_THREAD, l);
    l->thread_tag = "blockIdx.x";
    return l;
}

/* ---- choices ------------------------------------------------------------------------ */

static int64_t dim_or_assumed(const mt_texpr *e) {
    int64_t v;
    return mt_te_is_const_int(e, &v) ? v : ASSUMED_DIM;
}

/* Blocks of a grid of tile x tile tiles. */
static int64_t blocks_of(mm *c, int64_t tile) {
    int64_t b = ((dim_or_assumed(c->ext[c->ns - 2]) + tile - 1) / tile) *
                ((dim_or_assumed(c->ext[c->ns - 1]) + tile - 1) / tile);
    for (int d = 0; d < c->ns - 2; d++) b *= dim_or_assumed(c->ext[d]);
    return b;
}

/* Which of the tiles 128, 64, 32 (index 0, 1, 2): the knob tile, else the
 * largest whose grid keeps the SMs busy: at least one block per SM for
 * 128; for 64, quarters_64 / 4 blocks per SM (SIMT: 3, a block for 3/4 of
 * the SMs, top of the file; tensor cores: 8, two per SM, unmeasured). */
static int tile_index(mm *c, const mt_target_desc *t, int largest, int quarters_64) {
    int64_t k = mt_knob_get(c->f, GPU_MM_RULE, "tile", 0);
    if (k) return k >= largest ? 0 : k >= largest / 2 ? 1 : 2;
    if (blocks_of(c, largest) >= t->num_sms) return 0;
    return 4 * blocks_of(c, largest / 2) >= quarters_64 * (int64_t)t->num_sms ? 1 : 2;
}

/* The largest tile whose grid keeps the SMs busy (top of the file). */
static void choose_tiles(gm *g, const mt_target_desc *t) {
    static const struct { int tile, bk, reg, min_blocks_per_sm; } sizes[] = {
        {128, 8, 8, 1}, {64, 16, 4, 2}, {32, 32, 2, 0}};
    int i = tile_index(g->c, t, sizes[0].tile, 3);
    g->bm = g->bn = sizes[i].tile;
    g->bk = sizes[i].bk;
    g->tm = g->tn = sizes[i].reg;
    g->threads = (g->bm / g->tm) * (g->bn / g->tn);
}

/* Split-K (top of the file): S splits of K when the grid of tiles leaves
 * at least half the SMs idle -- the knob split_k, else SMs / blocks, each
 * split at least MIN_SPLIT_STEPS steps of BK. Not for tensor cores or
 * batches, and only for constant M, N and K. */
static void choose_split(gm *g, const mt_target_desc *t) {
    mm *c = g->c;
    int64_t m, n, k, blocks = blocks_of(c, g->bm);
    g->splits = 1;
    if (g->tc || c->ns != 2 || !mt_te_is_const_int(M_(g), &m) || !mt_te_is_const_int(N_(g), &n) ||
        !mt_te_is_const_int(K_(g), &k))
        return;
    if (blocks <= 0) return; /* an empty C */
    int64_t steps = (k + g->bk - 1) / g->bk;
    int64_t sp = mt_knob_get(c->f, GPU_MM_RULE, "split_k", 2 * blocks <= t->num_sms ? t->num_sms / blocks : 1);
    if (sp > MAX_SPLITS) sp = MAX_SPLITS;
    while (sp > 1 && steps / sp < MIN_SPLIT_STEPS) sp--;
    if (sp < 2) return;
    g->splits = (int)sp;
    g->sm = m;
    g->sn = n;
    g->per = (int)((steps + sp - 1) / sp);
    g->k_guard = (int64_t)g->per * sp * g->bk != k;
    g->sv = mm_ivar(c, "sk");
    mt_texpr *ext = I(g, sp * m * n);
    g->part = mt_tbuffer_new(c->a, "C_part", c->dt, 1, &ext);
}

/* Tensor cores: when the target has the 16 x 16 x 16 float16 tile and both
 * operands are float16 values widened (the sums are float32 either way), or
 * both bfloat16 ones and the target's tensor cores take bfloat16; tiles as
 * for SIMT, by the same count of blocks, each of 8 (or 4) warps. */
static bool choose_tc(gm *g, const mt_target_desc *t) {
    static const struct { int tile, warps, warps_n, min_blocks_per_sm; } sizes[] = {
        {128, 8, 4, 1}, {64, 4, 2, 2}, {32, 4, 2, 0}};
    mm *c = g->c;
    mt_dtype in = widened_16(c->X);
    if (t->mma_m != FRAG || t->mma_n != FRAG || t->mma_k != FRAG || t->warp_size % FRAG != 0 ||
        MT_WMMA_FRAG % t->warp_size != 0 || c->dt != MT_FLOAT32 || in == MT_DTYPE_COUNT_ ||
        widened_16(c->Y) != in || (in == MT_BFLOAT16 && !t->mma_bf16))
        return false;
    int i = tile_index(c, t, sizes[0].tile, 8);
    g->tc = true;
    g->bm = g->bn = sizes[i].tile;
    g->bk = TC_BK;
    g->warp = t->warp_size;
    g->warps_n = sizes[i].warps_n;
    g->threads = sizes[i].warps * g->warp;
    g->fm = g->bm / (sizes[i].warps / g->warps_n) / FRAG;
    g->fn = g->bn / g->warps_n / FRAG;
    g->tile_dt = in;
    g->pad = TC_PAD;
    return true;
}

/* ---- entry ---------------------------------------------------------------------------- */

mt_tfunc *mt_schedule_gpu_matmul(mt_arena *a, mt_tfunc *f) {
    const mt_target_desc *t = mt_tfunc_target(f);
    if (t->kind != MT_TARGET_CUDA) return f;
    mm *c = MT_NEW(a, mm);
    c->a = c->lw.a = a;
    c->f = f;
    if (!mm_match(c)) return f;
    gm g = {.c = c, .tx = mm_ivar(c, "tx"), .tile_dt = c->dt, .pad = PAD};
    if (!choose_tc(&g, t)) choose_tiles(&g, t);
    g.x_along_i = mm_operand_contiguous(c, false, false) && !mm_operand_contiguous(c, false, true);
    g.y_along_k = mm_operand_contiguous(c, true, true) && !mm_operand_contiguous(c, true, false);
    g.as = shared(&g, "A_tile", g.bm);
    g.bs = shared(&g, "B_tile", g.bn);
    if (g.tc) {
        g.acc = fragments(&g, "acc", g.fm * g.fn, MT_SCOPE_WMMA_ACC);
        g.afrag = fragments(&g, "a_frag", g.fm, MT_SCOPE_WMMA_A);
        g.bfrag = fragments(&g, "b_frag", g.fn, MT_SCOPE_WMMA_B);
        g.stage = mm_local_buf(c, "C_stage", I(&g, (int64_t)g.threads / g.warp * MT_WMMA_FRAG), MT_FLOAT32);
        g.stage->scope = MT_SCOPE_SHARED;
    } else {
        g.acc = mm_local_buf(c, "acc", I(&g, (int64_t)g.tm * g.tn), c->dt);
    }

    choose_split(&g, t);
    mt_tstmt *body = gen_grid(&g);
    if (g.splits > 1) body = mm_seq2(c, body, gen_split_sum(&g));
    mt_tfunc *h = mm_scheduled(c, body, g.tc ? "gpu_matmul (tensor cores)" : g.splits > 1 ? "gpu_matmul (split k)" : "gpu_matmul");
    if (g.splits > 1) {
        h->allocs = MT_NEW_ARRAY(a, mt_tbuffer *, 1);
        h->allocs[0] = g.part;
        h->nallocs = 1;
    }
    if (c->dt == MT_FLOAT32 && !g.tc) mt_tfunc_set_attr(a, h, MT_ATTR_MIN_BLOCKS, "2"); /* <= 128 registers */
    mt_knobs chosen = {GPU_MM_RULE, {{"tile", g.bm}, {"split_k", g.splits}}, g.splits > 1 ? 2 : 1};
    return mt_knobs_chose(a, mt_knobs_mark(a, h, f, GPU_MM_RULE), &chosen);
}
