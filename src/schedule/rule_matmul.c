/*
 * rule_matmul.c -- the CPU schedule of a matmul and its elementwise epilogue.
 *
 * What it matches. A loop function (block form, after inline_producers) that
 * is exactly
 *
 *     [if K == 0: C = 0]                        legalize's fill for a symbolic K
 *     for b.., i, k, j:  C[b.., i, j] += X(b.., i, k) * Y(b.., k, j)     (init 0)
 *     for b.., i, j:     E1[b.., i, j] = f1(C[b.., i, j], E0.., inputs)  (epilogues)
 *
 * with C float32 or float64; X and Y any expressions of their indices (plain
 * loads, casts from float16, a prologue fused in front such as relu(x + b),
 * a transposed operand); each epilogue elementwise over C's shape, reading C
 * and earlier epilogue outputs only at [b.., i, j] and anything else (biases,
 * residuals) anywhere. C and the E's may be function allocations (they
 * disappear: values stay in registers) or outputs.
 *
 * The algorithm is GotoBLAS's (K. Goto and R. van de Geijn, "Anatomy of
 * high-performance matrix multiplication", ACM TOMS 34(3), 2008), in the
 * layered form of BLIS (F. Van Zee and R. van de Geijn, ACM TOMS 41(3),
 * 2015): a register-tiled micro-kernel inside cache blocking and packing.
 *
 *  - Micro-kernel. A tile of MR rows by NR = 2 registers' width of columns
 *    of C lives in MR * 2 vector registers, both read from the target: with
 *    AVX-512 (32 zmm) MR = 8, NR = 32 float32, 16 accumulators; with AVX2
 *    (16 ymm) MR = 6, NR = 16, 12 accumulators (tile_rows: accumulators, two
 *    B vectors and a broadcast fit the register file). For each k it loads
 *    two vectors of B's row k and broadcasts MR values of A's column k: 16
 *    FMAs for 10 loads with AVX-512, with 16 independent accumulation chains
 *    to cover the FMA latency (4 cycles x 2 FMA pipes on Zen 5). In TIR the tile is a local buffer
 *    `acc` accessed only at constant offsets as T.Ramp vectors, and the
 *    FMAs are explicit T.fma calls on vectors: LLVM's SROA turns acc into
 *    registers and each T.fma is one vfmadd231ps. Nothing depends on the
 *    loop vectorizer or on FMA contraction (codegen is strict IEEE).
 *  - Packing and blocking. For each column block of up to NC = 512 columns
 *    (and, when K > 1024 and an output can hold partial sums, each K block
 *    of KC = 512), B's block is copied into B_pack as NR-wide slivers, each
 *    contiguous over k (a row-major B pack_rows = 8 rows at a time, each
 *    row's columns one run of memory; the sliver-by-sliver copy read a
 *    new page every 64 bytes): the micro-kernel streams one sliver (KC x 128 bytes)
 *    from L2 while the 8 x KC sliver of A it multiplies stays in L1 across
 *    the slivers of the block. Blocks are narrowed so that B_pack stays
 *    within the target's L2 whenever its depth is a constant. The copy is
 *    parallel over slivers; row blocks of MR rows run in parallel after it
 *    (each writes its own rows of C) -- when each region has enough work
 *    for the cores (matmul_defaults.c); else all on the calling thread.
 *  - A transposed (a.T @ b: read along i, not k): packed once per call,
 *    [row block][k][row], whole or a K block at a time (pack_a_all).
 *  - K blocks. Later K blocks start from the partial sums stored by earlier
 *    ones in C, or in the first epilogue output of C's dtype when C is an
 *    intermediate; the epilogue runs on the last block only. With no such
 *    output (a float16 result), K is not blocked.
 *  - Epilogue. Applied to the accumulators as they are stored: the epilogue
 *    expressions are evaluated on register-wide vectors (j becomes
 *    T.Ramp(j, 1, 16) with AVX-512) and the matmul's result never goes to
 *    the output unfinished. A cheap epilogue (relu(a @ w + c): a vector load
 *    of c and a max per vector) is written once per accumulator register,
 *    straight from the registers. One with math that codegen expands into a
 *    long sequence (erf for gelu, exp, tanh, sigmoid: epilogue_cost) would
 *    be MR x 2 copies of it per tile -- 16 erfs with AVX-512, most of the
 *    compile time of gelu(x @ w + b) -- so the registers are copied to a
 *    local tile (acc_out, 1 KiB, in L1) and the epilogue runs in one loop
 *    over its full-width vectors, plus one over the rows for a narrower
 *    column tail: one copy of the math per vector width of each tile. The
 *    loop is a single loop, at the k loop's depth, not rows around vectors:
 *    LLVM hoists the math's constants out of every loop, and when the
 *    epilogue loop was nested deeper than the k loop the register allocator
 *    spilled the accumulators instead of them.
 *  - Few rows (a constant M <= 128, x @ w): few FMAs per element of B, so
 *    the copy dominates; blocks a page of a row of B wide, and with
 *    threads the column blocks across them, each packed by its own thread,
 *    in one parallel region (gen_cols; matmul_defaults.c).
 *  - Small M (a constant M < 16 for x @ w, < 32 for x @ w.T, or a
 *    symbolic M below that at run time): no packing to amortize. With Y
 *    contiguous along j (x @ w, w row-major) the function goes to the
 *    skinny schedule of rule_gemv.c (w streamed
 *    row by row, sums in L1/L2); with Y contiguous along k instead (x @
 *    w.T, the transpose fused in as a prologue) and X along k too, to the
 *    matrix-vector schedule of rule_matvec.c (dot products over k). Other
 *    small-M operands take the packed path below.
 *  - Small A, asked for (the conv rule's pointwise layers, rule_conv.c):
 *    when M * K is within a quarter of L2 and N is constant and at least
 *    128, the column blocks across threads as for few rows, blocks of 64
 *    columns, K whole (gen_wide).
 *  - Tails, exact and without masked memory operations. Rows: M % MR rows
 *    take one tile of that height (constant M) or a loop of one-row tiles.
 *    Columns, constant N: the last sliver is N % NR wide, vectors of 16 and
 *    one narrower (T.Ramp(j, 1, 10) is a <10 x float> access). Columns,
 *    symbolic N: the last sliver is packed with zeros past N and computed in
 *    full; its partial sums go in and its results out through a small local
 *    buffer, element by element for j < N.
 *
 * Numerics: each element still sums k in increasing order, with fused
 * multiply-adds (one rounding per step instead of two).
 *
 * The output is in the lowered form (no blocks; flat buffers, one index per
 * access), built directly: flatten_buffers would turn a[i, T.Ramp(j, 1, 16)]
 * into i * N + T.Ramp(j, 1, 16), which codegen scalarizes; here the ramp
 * takes the whole offset, T.Ramp(i * N + j, 1, 16), one vector access.
 * lower_blocks, flatten_buffers and simplify then leave it as it is.
 */
#include <string.h>

#include "schedule/knobs.h"
#include "schedule/matmul_internal.h"

/* The tile and block sizes; docs/schedule.md has the measurements behind
 * them. Each is the default of a knob (schedule/knobs.h: mr, nv, kc, nc). */
typedef struct mm_tune {
    int mr;         /* rows of the register tile: values of A broadcast per k */
    int nv;         /* vector registers per tile row: NR = nv * lanes */
    int kc;         /* depth of a K block when K is blocked (K > 2 * kc) */
    int nc;         /* columns of a packed block of B (N blocking) */
} mm_tune;

static const mm_tune tune = {8, 2, 512, 512};

/* Rows of the register tile: the knob mr when given; else tune.mr, or
 * fewer so that the MR * nv accumulators, the nv vectors of B and A's
 * broadcast fit the target's vector registers (32 with AVX-512: 8 rows; 16
 * with AVX2: 6 rows), or fewer still where that cuts a constant M into
 * tiles with fewer short ones (matmul_defaults.c). */
static int tile_rows(const mm *c) {
    if (mt_knob_given(c->f, MM_RULE, "mr")) return (int)mt_knob_get(c->f, MM_RULE, "mr", tune.mr);
    int regs = mt_tfunc_target(c->f)->vector_registers;
    int fit = (regs - c->nv - 1) / c->nv;
    return mm_rows_for_m(c, fit < 1 ? 1 : fit < tune.mr ? fit : tune.mr);
}

/* ---- the epilogue's cost -------------------------------------------------------------- */

/* What one vector of the epilogue costs, in about LLVM instructions: one per
 * node, and EPI_CALL more for a call that codegen expands into a long
 * sequence -- exp, log, tanh, sigmoid and erf of float32 are 30-70
 * instructions of inline polynomial (llvm_math.c), sin, cos, pow and the
 * float64 ones a libm call per lane. Above EPI_UNROLL_MAX the epilogue
 * runs in a loop over the tile (epilogue_loop) instead of once per
 * accumulator register: a copy of erf per register made compiling matmul +
 * gelu take 3-5 times as long as the matmul alone (docs/schedule.md, "The
 * epilogue"), while a cheap epilogue (bias, relu, scaling: under 10 nodes)
 * costs little to compile unrolled and so skips the loop's copy of the
 * tile through memory. This is a compile-time knob, not a machine fact. */
enum { EPI_CALL = 40, EPI_UNROLL_MAX = 32 };

static void cost_expr(mt_tvisitor *v, const mt_texpr *e) {
    int *n = v->ctx;
    *n += 1 + (e->kind == TE_CALL && mt_intrin_is_expanded(e->intrin) ? EPI_CALL : 0);
    mt_tvisit_expr_children(v, e);
}

static int epilogue_cost(const mm *c) {
    int n = 0;
    mt_tvisitor v = {cost_expr, NULL, &n};
    for (int e = 0; e < c->nep; e++) mt_tvisit_expr(&v, c->ep[e].value);
    return n;
}

/* ---- the register tile ------------------------------------------------------------- */


typedef struct tile {
    int mr;
    mm_colset cs;
    mt_texpr *i0, *j0, *k0, *kc;
    mt_tbuffer *bp;           /* packed B, or NULL: Y is loaded in place */
    mt_texpr *bp_base;
    mt_texpr *first, *last;   /* first / last K block (NULL: K is not blocked) */
    bool masked;              /* j0 + width may pass N: through tmp when it does */
    mt_tbuffer *ap;           /* packed A sliver [kk][ii], or NULL: X in place */
    mt_texpr *ap_base;        /* where the tile's sliver starts in ap (NULL: 0) */
    const struct panel *nx;   /* the block whose share this tile prefetches (prefetch_step), or NULL */
    mt_texpr *nx_tile;        /* which share: the tile's number in its item */
} tile;

static mt_tstmt *prefetch_step(mm *c, const tile *t, mt_texpr *kk);

/* Accumulator slot (ii, v): a vector at a constant offset, so that SROA
 * turns the whole buffer into registers. */
static mt_texpr *slot(mm *c, const tile *t, int ii, int v) {
    return mt_lw_ramp(&c->lw, mm_I(c, (int64_t)ii * t->cs.nv * c->vl + t->cs.off[v]), t->cs.lanes[v]);
}

static mt_texpr *acc_ld(mm *c, mt_tbuffer *acc, mt_texpr *ix) { return mt_te_load(c->a, acc, &ix, 1); }
static mt_tstmt *acc_st(mm *c, mt_tbuffer *acc, mt_texpr *ix, mt_texpr *v) {
    return mt_ts_store(c->a, acc, &ix, 1, v);
}

/* The tile through tmp when it passes N (symbolic N: a padded sliver):
 * init: tmp = 0, tmp[ii, jj] = P[i0 + ii, j0 + jj] for j0 + jj < N, acc = tmp;
 * store: tmp = acc, then element by element for j0 + jj < N. */
static mt_tstmt *via_tmp(mm *c, const tile *t, mt_tbuffer *acc, bool init) {
    int row = t->cs.nv * c->vl;
    mt_tbuffer *tmp = mm_local_buf(c, "tmp", mm_I(c, (int64_t)t->mr * row), c->dt);
    mt_tvar *r = mm_ivar(c, "ii"), *q = mm_ivar(c, "jj");
    mt_texpr *i = mt_lw_add(&c->lw, t->i0, mm_V(c, r)), *j = mt_lw_add(&c->lw, t->j0, mm_V(c, q));
    mt_texpr *tix = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, mm_V(c, r), mm_I(c, row)), mm_V(c, q));
    mt_tstmt *el;
    if (init) {
        el = acc_st(c, tmp, tix, mm_load_ij(c, c->P, i, j));
    } else {
        mt_texpr *m = acc_ld(c, tmp, tix);
        el = mm_final_stores(c, i, j, m);
        if (t->last) el = mt_ts_if(c->a, t->last, el, mm_store_ij(c, c->P, i, j, m));
    }
    mt_tstmt *each = mm_loop(c, r, mm_I(c, t->mr), MT_FOR_SERIAL,
                          mm_loop(c, q, mt_lw_sub(&c->lw, c->ext[c->ns - 1], t->j0), MT_FOR_SERIAL, el));
    svec s = {0}, back = {0};
    for (int ii = 0; ii < t->mr; ii++)
        for (int v = 0; v < t->cs.nv; v++) {
            mt_texpr *sl = slot(c, t, ii, v);
            mm_push(c, &s, acc_st(c, tmp, sl, init ? mm_fzero(c, t->cs.lanes[v]) : acc_ld(c, acc, sl)));
            if (init) mm_push(c, &back, acc_st(c, acc, sl, acc_ld(c, tmp, sl)));
        }
    mm_push(c, &s, each);
    for (int k = 0; k < back.len; k++) mm_push(c, &s, back.data[k]);
    return mt_ts_alloc(c->a, tmp, mm_seq(c, &s));
}

/* acc = 0, or in a later K block the partial sums from P. */
static mt_tstmt *tile_init(mm *c, const tile *t, mt_tbuffer *acc) {
    svec z = {0}, ld = {0};
    for (int ii = 0; ii < t->mr; ii++)
        for (int v = 0; v < t->cs.nv; v++) {
            mt_texpr *sl = slot(c, t, ii, v);
            mm_push(c, &z, acc_st(c, acc, sl, mm_fzero(c, t->cs.lanes[v])));
            if (t->first) {
                mt_texpr *j = mt_lw_ramp(&c->lw, mt_lw_add(&c->lw, t->j0, mm_I(c, t->cs.off[v])), t->cs.lanes[v]);
                mm_push(c, &ld, acc_st(c, acc, sl, mm_load_ij(c, c->P, mt_lw_add(&c->lw, t->i0, mm_I(c, ii)), j)));
            }
        }
    if (!t->first) return mm_seq(c, &z);
    mt_tstmt *loads = mm_seq(c, &ld);
    if (t->masked)
        loads = mt_ts_if(c->a, mm_le(c, mt_lw_add(&c->lw, t->j0, mm_I(c, t->cs.width)), c->ext[c->ns - 1]), loads,
                         via_tmp(c, t, acc, true));
    return mt_ts_if(c->a, t->first, mm_seq(c, &z), loads);
}

/* The epilogue in a loop over the tile (c->epi_loop). The accumulators are
 * copied to acc_out, a local tile (acc itself is still read only at constant
 * offsets, so it stays in registers), then, with nfull full-width vectors
 * per row (row = nv * vl elements):
 *
 *     for q in range(mr * nfull):                  # row q // nfull, vector q % nfull
 *         m = acc_out[T.Ramp(q // nfull * row + q % nfull * vl, 1, vl)]
 *         ...epilogue..., stored at (i0 + q // nfull, T.Ramp(j0 + q % nfull * vl, 1, vl))
 *     for ii in range(mr):                         # only for a narrower column tail
 *         m = acc_out[T.Ramp(ii * row + off, 1, lanes)]
 *         ...
 *
 * (simplify folds the first index to q * vl when the row has no tail): one
 * copy of the epilogue per vector width, whatever MR and NR are. The loops
 * stay loops (codegen marks a loop whose body computes on vectors
 * llvm.loop.unroll.disable) and are single loops, at the depth of the k
 * loop: LLVM's machine LICM hoists the epilogue's constants (30-odd vectors
 * for erf) out of all loops to the function's entry, and the register
 * allocator weighs a value by how deep its uses are: with the epilogue's
 * uses one loop deeper than the k loop it kept the constants in registers
 * and spilled the accumulators (gelu at 1024^3 ran 4x slower;
 * test_epilogue_no_spill). */
static mt_tstmt *epilogue_loop(mm *c, const tile *t, mt_tbuffer *acc) {
    int nv = t->cs.nv, row = nv * c->vl, nfull = 0;
    while (nfull < nv && t->cs.lanes[nfull] == c->vl) nfull++;
    mt_tbuffer *out = mm_local_buf(c, "acc_out", mm_I(c, (int64_t)t->mr * row), c->dt);
    svec s = {0};
    for (int ii = 0; ii < t->mr; ii++)
        for (int v = 0; v < nv; v++) {
            mt_texpr *sl = slot(c, t, ii, v);
            mm_push(c, &s, acc_st(c, out, sl, acc_ld(c, acc, sl)));
        }
    if (nfull > 0) { /* q = ii * nfull + vj over the full-width vectors */
        int64_t nq = (int64_t)t->mr * nfull;
        mt_tvar *q = nq > 1 ? mm_ivar(c, "q") : NULL;
        mt_texpr *qv = q ? mm_V(c, q) : mm_I(c, 0);
        mt_texpr *r = nfull > 1 ? mt_arith_bin(c->a, TE_FLOORDIV, qv, mm_I(c, nfull)) : qv;
        mt_texpr *vj = nfull > 1 ? mt_arith_bin(c->a, TE_FLOORMOD, qv, mm_I(c, nfull)) : mm_I(c, 0);
        mt_texpr *qo = mt_lw_mul(&c->lw, vj, mm_I(c, c->vl));
        mt_texpr *ix = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, r, mm_I(c, row)), qo);
        mt_texpr *m = acc_ld(c, out, mt_lw_ramp(&c->lw, ix, c->vl));
        mt_tstmt *st = mm_final_stores(c, mt_lw_add(&c->lw, t->i0, r),
                                       mt_lw_ramp(&c->lw, mt_lw_add(&c->lw, t->j0, qo), c->vl), m);
        mm_push(c, &s, q ? mm_loop(c, q, mm_I(c, nq), MT_FOR_SERIAL, st) : st);
    }
    for (int v = nfull; v < nv; v++) { /* the narrower last vector of each row */
        mt_tvar *r = t->mr > 1 ? mm_ivar(c, "ii") : NULL;
        mt_texpr *ri = r ? mm_V(c, r) : mm_I(c, 0), *o = mm_I(c, t->cs.off[v]);
        mt_texpr *ix = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, ri, mm_I(c, row)), o);
        mt_texpr *m = acc_ld(c, out, mt_lw_ramp(&c->lw, ix, t->cs.lanes[v]));
        mt_texpr *j = mt_lw_ramp(&c->lw, mt_lw_add(&c->lw, t->j0, o), t->cs.lanes[v]);
        mt_tstmt *st = mm_final_stores(c, mt_lw_add(&c->lw, t->i0, ri), j, m);
        mm_push(c, &s, r ? mm_loop(c, r, mm_I(c, t->mr), MT_FOR_SERIAL, st) : st);
    }
    return mt_ts_alloc(c->a, out, mm_seq(c, &s));
}

/* The final values (epilogue applied) after the last K block, the partial
 * sums to P after the others. */
static mt_tstmt *tile_store(mm *c, const tile *t, mt_tbuffer *acc) {
    svec fin = {0}, part = {0};
    for (int ii = 0; ii < t->mr; ii++)
        for (int v = 0; v < t->cs.nv; v++) {
            mt_texpr *i = mt_lw_add(&c->lw, t->i0, mm_I(c, ii));
            mt_texpr *j = mt_lw_ramp(&c->lw, mt_lw_add(&c->lw, t->j0, mm_I(c, t->cs.off[v])), t->cs.lanes[v]);
            mt_texpr *m = acc_ld(c, acc, slot(c, t, ii, v));
            if (!c->epi_loop) mm_push(c, &fin, mm_final_stores(c, i, j, m));
            if (t->last) mm_push(c, &part, mm_store_ij(c, c->P, i, j, m));
        }
    mt_tstmt *f = c->epi_loop ? epilogue_loop(c, t, acc) : mm_seq(c, &fin);
    mt_tstmt *vec = t->last ? mt_ts_if(c->a, t->last, f, mm_seq(c, &part)) : f;
    if (!t->masked) return vec;
    return mt_ts_if(c->a, mm_le(c, mt_lw_add(&c->lw, t->j0, mm_I(c, t->cs.width)), c->ext[c->ns - 1]), vec,
                    via_tmp(c, t, acc, false));
}

/* One register tile: acc (mr x width) = 0 or the partial sums; for each k
 * of the block, mr broadcasts of X times nv vectors of B; then the stores. */
static mt_tstmt *gen_tile(mm *c, const tile *t) {
    mt_arena *a = c->a;
    int nv = t->cs.nv;
    mt_tbuffer *acc = mm_local_buf(c, "acc", mm_I(c, (int64_t)t->mr * nv * c->vl), c->dt);
    mt_tvar *kk = mm_ivar(c, "kk");
    mt_texpr *k = mt_lw_add(&c->lw, t->k0, mm_V(c, kk));
    mt_tvar *av[MM_MAXR], *bw[MM_MAXV];
    svec fm = {0};
    for (int ii = 0; ii < t->mr; ii++) av[ii] = mt_tvar_new(a, "aik", c->dt);
    for (int v = 0; v < nv; v++) bw[v] = mt_tvar_new(a, "bkj", c->dt);
    for (int ii = 0; ii < t->mr; ii++)
        for (int v = 0; v < nv; v++) {
            mt_texpr *s = slot(c, t, ii, v);
            mt_texpr *args[3] = {mm_V(c, av[ii]), mm_Vl(c, bw[v], t->cs.lanes[v]), acc_ld(c, acc, s)};
            mm_push(c, &fm, acc_st(c, acc, s, mt_te_call(a, IN_FMA, args, 3)));
        }
    mt_tstmt *body = mm_seq(c, &fm);
    for (int v = nv - 1; v >= 0; v--) {
        mt_texpr *bval;
        if (t->bp) {
            mt_texpr *ix = mt_lw_add(&c->lw, t->bp_base,
                                  mt_lw_add(&c->lw, mt_lw_mul(&c->lw, mm_V(c, kk), mm_I(c, t->cs.width)), mm_I(c, t->cs.off[v])));
            ix = mt_lw_ramp(&c->lw, ix, t->cs.lanes[v]);
            bval = mt_te_load(a, t->bp, &ix, 1);
        } else {
            bval = mm_operand(c, c->Y, NULL,
                           mt_lw_ramp(&c->lw, mt_lw_add(&c->lw, t->j0, mm_I(c, t->cs.off[v])), t->cs.lanes[v]), k);
        }
        body = mt_ts_let(a, bw[v], bval, body);
    }
    for (int ii = t->mr - 1; ii >= 0; ii--) {
        mt_texpr *aval;
        if (t->ap) {
            mt_texpr *ix = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, mm_V(c, kk), mm_I(c, t->mr)), mm_I(c, ii));
            if (t->ap_base) ix = mt_lw_add(&c->lw, t->ap_base, ix);
            aval = mt_te_load(a, t->ap, &ix, 1);
        } else {
            aval = mm_operand(c, c->X, mt_lw_add(&c->lw, t->i0, mm_I(c, ii)), NULL, k);
        }
        body = mt_ts_let(a, av[ii], aval, body);
    }
    mt_tstmt *pf = t->nx ? prefetch_step(c, t, mm_V(c, kk)) : NULL;
    mt_tstmt *kloop = mm_loop(c, kk, t->kc, MT_FOR_SERIAL, pf ? mm_seq2(c, pf, body) : body);
    svec s = {0};
    mm_push(c, &s, tile_init(c, t, acc));
    mm_push(c, &s, kloop);
    mm_push(c, &s, tile_store(c, t, acc));
    return mt_ts_alloc(a, acc, mm_seq(c, &s));
}

/* ---- packing ------------------------------------------------------------------------ */

/* A B read along k (x @ w.T) is a transpose: w's rows are the slivers'
 * columns. Full slivers are copied vl rows of the block at a time, as
 * vl x vl squares: vl vectors loaded along w's rows (one per column j,
 * each a contiguous run of k), transposed in registers by log2(vl) rounds
 * of two-vector shuffles (round b swaps bit b of the row with bit b of the
 * lane: vl shuffles a round), and stored as vl rows of the sliver. What is
 * left (the last K % vl rows, a sliver narrower than NR or padded) is
 * copied element by element; LLVM vectorizes that copy with gathers. The
 * squares run at about twice the speed of a plain copy; the gathers, whose
 * vl columns are rows of w a multiple of 4 KiB apart (one set of the L1
 * cache), were 5-6 times slower than the squares (1024 x 1024, one thread:
 * 0.9 ms against 0.16; docs/schedule.md). */
static bool pack_squares(mm *c, mm_colset cs) {
    if (!c->y_kvec || c->y_vec || c->vl < 2 || c->vl > 64 || (c->vl & (c->vl - 1))) return false;
    for (int v = 0; v < cs.nv; v++)
        if (cs.lanes[v] != c->vl) return false;
    return true;
}

/* Round b of the transpose of the vl vectors in x (their variables): lane
 * l of the new x[p] (bit b of p clear) and x[p | h], h = 1 << b, from
 * x[p] ++ x[p | h]: (bit b of l ? vl : 0) + l with bit b cleared, and set. */
static void square_round(mm *c, mt_tvar **x, int b, svec *lets) {
    int vl = c->vl, h = 1 << b, lo[64], hi[64];
    for (int l = 0; l < vl; l++) {
        int from = (l & h) ? vl : 0;
        lo[l] = from + (l & ~h);
        hi[l] = from + (l | h);
    }
    for (int p = 0; p < vl; p++) {
        if (p & h) continue;
        mt_tvar *a = mt_tvar_new(c->a, "sq", c->dt), *z = mt_tvar_new(c->a, "sq", c->dt);
        mt_texpr *xp = mm_Vl(c, x[p], vl), *xq = mm_Vl(c, x[p | h], vl);
        mm_push(c, lets, mt_ts_let(c->a, a, mt_te_shuffle(c->a, xp, xq, lo, vl), NULL));
        mm_push(c, lets, mt_ts_let(c->a, z, mt_te_shuffle(c->a, xp, xq, hi, vl), NULL));
        x[p] = a, x[p | h] = z;
    }
}

/* Nests the lets of s (each with a NULL body) around body, in order. */
static mt_tstmt *nest_lets(svec *s, mt_tstmt *body) {
    for (int i = s->len - 1; i >= 0; i--) {
        s->data[i]->body = body;
        body = s->data[i];
    }
    return body;
}

/* Rows [kv, kv + vl) of a full sliver: vl x vl squares, one per vector of
 * its columns, in a loop over them (one copy of the square's code: each
 * copy is vl loads, vl log2(vl) shuffles and vl stores to compile). */
static mt_tstmt *pack_square_rows(mm *c, mt_tbuffer *bp, mt_texpr *base, mt_texpr *j0, mm_colset cs,
                                  mt_texpr *k0, mt_texpr *kv) {
    int vl = c->vl;
    mt_texpr *k = mt_lw_ramp(&c->lw, mt_lw_add(&c->lw, k0, kv), vl);
    mt_tvar *sv = mm_ivar(c, "sv"), *x[64];
    mt_texpr *off = mt_lw_mul(&c->lw, mm_V(c, sv), mm_I(c, vl)); /* full slivers: cs.off[v] = v * vl */
    svec lets = {0};
    for (int r = 0; r < vl; r++) {
        x[r] = mt_tvar_new(c->a, "wr", c->dt);
        mt_texpr *j = mt_lw_add(&c->lw, mt_lw_add(&c->lw, j0, off), mm_I(c, r));
        mt_texpr *y = mm_operand(c, c->Y, NULL, j, k); /* a B constant along k: a scalar */
        mm_push(c, &lets, mt_ts_let(c->a, x[r], y->lanes == 1 ? mt_te_broadcast(c->a, y, vl) : y, NULL));
    }
    for (int b = 0; (1 << b) < vl; b++) square_round(c, x, b, &lets);
    svec st = {0};
    for (int t = 0; t < vl; t++) {
        mt_texpr *row = mt_lw_add(&c->lw, base, mt_lw_mul(&c->lw, mt_lw_add(&c->lw, kv, mm_I(c, t)), mm_I(c, cs.width)));
        mt_texpr *ix = mt_lw_ramp(&c->lw, mt_lw_add(&c->lw, row, off), vl);
        mm_push(c, &st, mt_ts_store(c->a, bp, &ix, 1, mm_Vl(c, x[t], vl)));
    }
    return mm_loop(c, sv, mm_I(c, cs.nv), MT_FOR_SERIAL, nest_lets(&lets, mm_seq(c, &st)));
}

static mt_tstmt *gen_pack_elems(mm *c, mt_tbuffer *bp, mt_texpr *base, mt_texpr *j0, mm_colset cs, bool padded,
                                mt_texpr *k0, mt_texpr *kc, mt_texpr *krow);

/* The rest of a B read along k (the K % vl rows, a narrow sliver) as rows
 * gathered lane by lane rather than scalars, from GATHER_ROWS rows of A on
 * or an M known only at run time: scalars are what LLVM's loop-load-elim
 * and SLP passes spend 80-140 ms compiling when they are many (the MLP's
 * x @ w0.T at K = 784 compiled in 98 ms instead of 34), and under 1/256 of
 * the work there. */
enum { GATHER_ROWS = 256 };

static bool pack_gathered(mm *c) {
    int64_t M;
    return c->y_kvec && (!mt_te_is_const_int(c->ext[c->ns - 2], &M) || M >= GATHER_ROWS);
}

/* A full sliver of a B read along k: the squares, then the K % vl rows
 * left one by one. */
static mt_tstmt *gen_pack_squares(mm *c, mt_tbuffer *bp, mt_texpr *base, mt_texpr *j0, mm_colset cs,
                                  mt_texpr *k0, mt_texpr *kc) {
    int vl = c->vl;
    mt_tvar *kq = mm_ivar(c, "kq"), *kt = mm_ivar(c, "kt");
    mt_texpr *nq = mt_arith_bin(c->a, TE_FLOORDIV, kc, mm_I(c, vl));
    mt_tstmt *sq = mm_loop(c, kq, nq, MT_FOR_SERIAL,
                           pack_square_rows(c, bp, base, j0, cs, k0, mt_lw_mul(&c->lw, mm_V(c, kq), mm_I(c, vl))));
    int64_t kcc;
    if (mt_te_is_const_int(kc, &kcc) && kcc % vl == 0) return sq;
    mt_texpr *krow = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, nq, mm_I(c, vl)), mm_V(c, kt));
    mt_tstmt *rest = gen_pack_elems(c, bp, base, j0, cs, false, k0, kc, krow);
    return mm_seq2(c, sq, mm_loop(c, kt, mt_arith_bin(c->a, TE_FLOORMOD, kc, mm_I(c, vl)), MT_FOR_SERIAL, rest));
}

/* B[k0:k0+kc, j0:j0+width] into bp[base + kk * width + jj]; padded: columns
 * at or past N are zeros. With row given, only that row kk of the block
 * (no loop over k: the caller's loop, packed_body's row order). */
static mt_tstmt *gen_pack(mm *c, mt_tbuffer *bp, mt_texpr *base, mt_texpr *j0, mm_colset cs, bool padded,
                          mt_texpr *k0, mt_texpr *kc, mt_texpr *krow) {
    if (!padded && !krow && pack_squares(c, cs)) return gen_pack_squares(c, bp, base, j0, cs, k0, kc);
    return gen_pack_elems(c, bp, base, j0, cs, padded, k0, kc, krow);
}

static mt_tstmt *gen_pack_elems(mm *c, mt_tbuffer *bp, mt_texpr *base, mt_texpr *j0, mm_colset cs, bool padded,
                                mt_texpr *k0, mt_texpr *kc, mt_texpr *krow) {
    mt_arena *a = c->a;
    mt_tvar *kk = krow ? NULL : mm_ivar(c, "kk");
    mt_texpr *kv = krow ? krow : mm_V(c, kk);
    mt_texpr *k = mt_lw_add(&c->lw, k0, kv);
    mt_texpr *row = mt_lw_add(&c->lw, base, mt_lw_mul(&c->lw, kv, mm_I(c, cs.width)));
    if (!padded && (c->y_vec || pack_gathered(c))) {
        svec s = {0};
        for (int v = 0; v < cs.nv; v++) {
            mt_texpr *ix = mt_lw_ramp(&c->lw, mt_lw_add(&c->lw, row, mm_I(c, cs.off[v])), cs.lanes[v]);
            mt_texpr *val = mm_operand(c, c->Y, NULL, mt_lw_ramp(&c->lw, mt_lw_add(&c->lw, j0, mm_I(c, cs.off[v])), cs.lanes[v]), k);
            mm_push(c, &s, mt_ts_store(a, bp, &ix, 1, val));
        }
        return krow ? mm_seq(c, &s) : mm_loop(c, kk, kc, MT_FOR_SERIAL, mm_seq(c, &s));
    }
    mt_tvar *jj = mm_ivar(c, "jj");
    mt_texpr *j = mt_lw_add(&c->lw, j0, mm_V(c, jj)), *val;
    if (padded) {
        mt_texpr *N = c->ext[c->ns - 1];
        mt_texpr *jc = mt_arith_bin(c->a, TE_MIN, j, mt_lw_sub(&c->lw, N, mm_I(c, 1)));
        val = mt_te_select(a, mm_lt(c, j, N), mm_operand(c, c->Y, NULL, jc, k), mm_fzero(c, 1));
    } else {
        val = mm_operand(c, c->Y, NULL, j, k);
    }
    mt_texpr *ix = mt_lw_add(&c->lw, row, mm_V(c, jj));
    mt_tstmt *st = mt_ts_store(a, bp, &ix, 1, val);
    if (krow) return mm_loop(c, jj, mm_I(c, cs.width), MT_FOR_SERIAL, st);
    return mm_loop(c, kk, kc, MT_FOR_SERIAL, mm_loop(c, jj, mm_I(c, cs.width), MT_FOR_SERIAL, st));
}

/* ---- the loop nests ------------------------------------------------------------------ */

enum { SL_FULL, SL_EXACT, SL_PADDED };

/* What the slivers of one column block share. */
typedef struct panel {
    mt_texpr *jc0;            /* first column of the block */
    mt_texpr *ncols;          /* its width */
    mt_texpr *k0, *kc, *first, *last;
    mt_tbuffer *bp;           /* NULL: direct */
    mt_texpr *kcap;           /* bp depth */
    mt_tbuffer *ap;           /* the current row block's packed A, or NULL */
    mt_texpr *ap_base;        /* where that block starts in ap (NULL: 0) */
    mt_texpr *krow;           /* packing: the one row of the block to pack, or NULL: all */
    mt_texpr *nx_j0;          /* the next item's first column, whose block of B each row
                               * tile prefetches a share of (gen_cols); NULL: none */
    int64_t nx_rows;          /* rows of that block per row tile */
    bool nx_past;             /* some full row tiles' rows all lie past K */
    int64_t nx_cols;          /* its width (at most) */
} panel;

static mt_tstmt *sliver(mm *c, const panel *p, mt_texpr *jr, int kind, bool pack, int mr, mt_texpr *i0) {
    int nr = c->nv * c->vl;
    int64_t Nc = 0;
    mt_te_is_const_int(c->ext[c->ns - 1], &Nc);
    mm_colset cs = mm_cols(kind == SL_EXACT ? (int)(Nc % nr) : nr, c->vl);
    mt_texpr *j0 = mt_lw_add(&c->lw, p->jc0, mt_lw_mul(&c->lw, jr, mm_I(c, nr)));
    mt_texpr *base = p->bp ? mt_lw_mul(&c->lw, jr, mt_lw_mul(&c->lw, p->kcap, mm_I(c, nr))) : NULL;
    if (pack) return gen_pack(c, p->bp, base, j0, cs, kind == SL_PADDED, p->k0, p->kc, p->krow);
    tile t = {mr, cs, i0, j0, p->k0, p->kc, p->bp, base, p->first, p->last, kind == SL_PADDED, p->ap, p->ap_base,
              NULL, NULL};
    if (p->nx_j0 && mr == tile_rows(c)) { /* full row tiles share the next block */
        t.nx = p;
        t.nx_tile = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, mt_arith_bin(c->a, TE_FLOORDIV, i0, mm_I(c, mr)),
                                                mm_ceildiv(c, p->ncols, nr)), jr);
    }
    return gen_tile(c, &t);
}

/* The sliver jr of a column block, full or the tail. */
static mt_tstmt *sliver_switch(mm *c, const panel *p, mt_texpr *jr, bool pack, int mr, mt_texpr *i0) {
    int nr = c->nv * c->vl;
    int64_t Nc;
    if (mt_te_is_const_int(c->ext[c->ns - 1], &Nc)) {
        if (Nc % nr == 0) return sliver(c, p, jr, SL_FULL, pack, mr, i0);
        return mt_ts_if(c->a, mm_lt(c, jr, mt_arith_bin(c->a, TE_FLOORDIV, p->ncols, mm_I(c, nr))),
                        sliver(c, p, jr, SL_FULL, pack, mr, i0), sliver(c, p, jr, SL_EXACT, pack, mr, i0));
    }
    /* symbolic N: a padded sliver computes like a full one; one tile does
     * both, its loads and stores test j0 + NR <= N */
    if (!pack) return sliver(c, p, jr, SL_PADDED, pack, mr, i0);
    mt_texpr *j0 = mt_lw_add(&c->lw, p->jc0, mt_lw_mul(&c->lw, jr, mm_I(c, nr)));
    return mt_ts_if(c->a, mm_le(c, mt_lw_add(&c->lw, j0, mm_I(c, nr)), c->ext[c->ns - 1]),
                    sliver(c, p, jr, SL_FULL, pack, mr, i0), sliver(c, p, jr, SL_PADDED, pack, mr, i0));
}

/* A's rows [i0, i0 + mr) at k into buf[dst + ii]: one vector when X is
 * contiguous along i (a transposed A), else mr values. */
static void a_store(mm *c, svec *s, mt_tbuffer *buf, mt_texpr *dst, mt_texpr *i0, int mr, mt_texpr *k) {
    mt_texpr *vec = mr > 1 ? mm_operand(c, c->X, mt_lw_ramp(&c->lw, i0, mr), NULL, k) : NULL;
    if (vec && mm_vec_loads(vec)) {
        mt_texpr *ix = mt_lw_ramp(&c->lw, dst, mr);
        mm_push(c, s, mt_ts_store(c->a, buf, &ix, 1, vec));
        return;
    }
    for (int ii = 0; ii < mr; ii++) {
        mt_texpr *ix = mt_lw_add(&c->lw, dst, mm_I(c, ii));
        mm_push(c, s, mt_ts_store(c->a, buf, &ix, 1, mm_operand(c, c->X, mt_lw_add(&c->lw, i0, mm_I(c, ii)), NULL, k)));
    }
}

enum { PF_UNROLL = 8 }; /* prefetches of a k step written out, at most (prefetch_step) */

/* The next item's block of B (gen_cols), prefetched while this one's
 * tiles run. Full row tile t of the item (rows i0 .. i0 + mr at sliver jr:
 * t = i0 / mr * slivers + jr) takes rows [t * R, t * R + R) of that block
 * (R = p->nx_rows; the last tiles' rows may lie past K, past B even, which
 * a prefetch may name), L lines in all, and prefetches them spread over
 * the kc steps of its k loop: step kk the lines q = (kk * P + u) * L /
 * (kc * P), u < P = ceil(L / kc) -- one line a step when L <= kc, a line
 * again now and then.
 *
 * Why. Packing a block reads K runs of a few lines, a page apart, which
 * the hardware prefetchers do not follow: the copy waited on memory for
 * every run (1x1 conv 256 -> 64, 56 x 56, batch 32: a quarter of the time,
 * against a twelfth at batch 1, whose input stays in the caches). And the
 * prefetches all at once, before the tile's k loop (64 lines a tile there),
 * held up the tile until the core's misses in flight drained: the same
 * layer went from 0.75 to 0.89 of oneDNN's time with the prefetches spread
 * (docs/schedule.md, "Pointwise layers"). */
static mt_tstmt *prefetch_step(mm *c, const tile *t, mt_texpr *kk) {
    const panel *p = t->nx;
    int line = 0;
    mt_texpr *saved[MM_MAXS];
    memcpy(saved, c->bv, sizeof saved);
    memcpy(c->bv, c->nx_bv, sizeof saved);
    mt_texpr *probe = mm_prefetchable(c, mm_operand(c, c->Y, NULL, p->nx_j0, mm_I(c, 0)), &line);
    int64_t kc;
    svec s = {0};
    if (probe && mt_te_is_const_int(t->kc, &kc) && kc > 0) {
        int64_t lines = (p->nx_cols + line - 1) / line, L = p->nx_rows * lines, P = (L + kc - 1) / kc;
        mt_texpr *first = mt_lw_mul(&c->lw, t->nx_tile, mm_I(c, p->nx_rows));
        bool unroll = P <= PF_UNROLL;
        mt_tvar *pu = mm_ivar(c, "pu");
        for (int64_t u = 0; u < (unroll ? P : 1); u++) {
            mt_texpr *slot = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, kk, mm_I(c, P)), unroll ? mm_I(c, u) : mm_V(c, pu));
            mt_texpr *q = mt_arith_bin(c->a, TE_FLOORDIV, mt_lw_mul(&c->lw, slot, mm_I(c, L)), mm_I(c, kc * P));
            mt_texpr *row = mt_lw_add(&c->lw, first, mt_arith_bin(c->a, TE_FLOORDIV, q, mm_I(c, lines)));
            row = mt_arith_bin(c->a, TE_MIN, row, mt_lw_sub(&c->lw, c->K, mm_I(c, 1))); /* a tile past K's rows: the last */
            mt_texpr *col = mt_lw_add(&c->lw, p->nx_j0, mt_lw_mul(&c->lw, mt_arith_bin(c->a, TE_FLOORMOD, q, mm_I(c, lines)), mm_I(c, line)));
            mt_texpr *y = mm_prefetchable(c, mm_operand(c, c->Y, NULL, col, row), &line);
            if (y) mm_push(c, &s, mt_ts_eval(c->a, mt_te_prefetch(c->a, y)));
        }
        if (!unroll && s.len) {
            mt_tstmt *one = mm_seq(c, &s);
            s.len = 0;
            mm_push(c, &s, mm_loop(c, pu, mm_I(c, P), MT_FOR_SERIAL, one));
        }
        if (p->nx_past && s.len) { /* the tiles past K's rows: none */
            mt_tstmt *all = mm_seq(c, &s);
            s.len = 0;
            mm_push(c, &s, mt_ts_if(c->a, mm_lt(c, first, c->K), all, NULL));
        }
    }
    memcpy(c->bv, saved, sizeof saved);
    return s.len ? mm_seq(c, &s) : NULL;
}


/* Rows [i0, i0 + mr): the sliver jr, or (jr NULL) every sliver of the block. */
static mt_tstmt *row_tiles(mm *c, const panel *p, mt_texpr *jr, int mr, mt_texpr *i0) {
    panel q = *p;
    if (c->ap_all) { /* A packed once (pack_a_all): the block's rows at i0 * depth, [k][ii] */
        q.ap = c->ap_all;
        q.ap_base = mt_lw_mul(&c->lw, i0, c->ap_depth);
        if (!c->ap_blocked) q.ap_base = mt_lw_add(&c->lw, q.ap_base, mt_lw_mul(&c->lw, p->k0, mm_I(c, mr)));
    }
    if (jr) return sliver_switch(c, &q, jr, false, mr, i0);
    mt_tvar *v = mm_ivar(c, "jr");
    int64_t kcap;
    if (c->ap_all || (c->X->kind == TE_LOAD && c->x_kvec) || !mt_te_is_const_int(p->kcap, &kcap) ||
        kcap * mr * (int64_t)mt_dtype_size(c->dt) > 65536)
        return mm_loop(c, v, mm_ceildiv(c, p->ncols, c->nv * c->vl), MT_FOR_SERIAL,
                    sliver_switch(c, &q, mm_V(c, v), false, mr, i0));
    /* the A sliver once for all column slivers: [kk][ii], mr values per k */
    q.ap = mm_local_buf(c, "A_pack", mm_I(c, kcap * mr), c->dt);
    mt_tvar *kk = mm_ivar(c, "kk");
    svec s = {0};
    a_store(c, &s, q.ap, mt_lw_mul(&c->lw, mm_V(c, kk), mm_I(c, mr)), i0, mr, mt_lw_add(&c->lw, p->k0, mm_V(c, kk)));
    mt_tstmt *pk = mm_loop(c, kk, p->kc, MT_FOR_SERIAL, mm_seq(c, &s));
    mt_tstmt *tiles = mm_loop(c, v, mm_ceildiv(c, p->ncols, c->nv * c->vl), MT_FOR_SERIAL,
                           sliver_switch(c, &q, mm_V(c, v), false, mr, i0));
    return mt_ts_alloc(c->a, q.ap, mm_seq2(c, pk, tiles));
}

/* A read across its rows (a transposed A: a.T @ b) packed once per call
 * (per batch index) into c->ap_all, whole or, when that is too large and K
 * is blocked, one K block at a time (c->ap_depth deep, the K block loop
 * then outside the column blocks'): row block io (MR rows) at io * MR *
 * depth as [k][ii], the M % MR rows after the last block the same way.
 * Each k is one row of the transposed A: KR of them at a time, across
 * threads, the row blocks inside, so that the copy reads KR runs of memory
 * in order and writes each block's KR * MR values together. Packed per row
 * block and column block instead (row_tiles' A_pack), every k of the
 * sliver was a line of another page, read again for every column block:
 * a.T @ b at 1024^3 ran at 0.74 of OpenBLAS on one thread. */
enum { AP_ROWS = 8, AP_ALL_MAX = 32 << 20 }; /* k rows copied together; bytes of ap_all at most (default) */

/* Rows k0 + kk of A, every row block, into ap_all at depth kk. */
static mt_tstmt *pack_a_rows(mm *c, mt_texpr *k0, mt_texpr *kk, int64_t M, int MR) {
    mt_tvar *io = mm_ivar(c, "io");
    svec s = {0}, t = {0};
    mt_texpr *k = mt_lw_add(&c->lw, k0, kk);
    mt_texpr *i0 = mt_lw_mul(&c->lw, mm_V(c, io), mm_I(c, MR));
    mt_texpr *dst = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, i0, c->ap_depth), mt_lw_mul(&c->lw, kk, mm_I(c, MR)));
    a_store(c, &s, c->ap_all, dst, i0, MR, k);
    mm_push(c, &t, mm_loop(c, io, mm_I(c, M / MR), MT_FOR_SERIAL, mm_seq(c, &s)));
    if (M % MR) {
        int mt = (int)(M % MR);
        mt_texpr *it = mm_I(c, M - mt);
        dst = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, it, c->ap_depth), mt_lw_mul(&c->lw, kk, mm_I(c, mt)));
        a_store(c, &t, c->ap_all, dst, it, mt, k);
    }
    return mm_seq(c, &t);
}

/* The rows [k0, k0 + kc) of A into ap_all. */
static mt_tstmt *pack_a_all(mm *c, mt_texpr *k0, mt_texpr *kc) {
    int64_t M;
    mt_te_is_const_int(c->ext[c->ns - 2], &M);
    int MR = tile_rows(c);
    mt_tvar *kq = mm_ivar(c, "kq"), *kt = mm_ivar(c, "kt");
    mt_texpr *groups = mt_arith_bin(c->a, TE_FLOORDIV, kc, mm_I(c, AP_ROWS));
    svec s = {0};
    for (int r = 0; r < AP_ROWS; r++)
        mm_push(c, &s, pack_a_rows(c, k0, mt_lw_add(&c->lw, mt_lw_mul(&c->lw, mm_V(c, kq), mm_I(c, AP_ROWS)), mm_I(c, r)), M, MR));
    svec b = {0};
    mm_push(c, &b, mm_loop(c, kq, groups, c->par ? MT_FOR_PARALLEL : MT_FOR_SERIAL, mm_seq(c, &s)));
    int64_t kcc;
    if (!mt_te_is_const_int(kc, &kcc) || kcc % AP_ROWS) {
        mt_texpr *kk = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, groups, mm_I(c, AP_ROWS)), mm_V(c, kt));
        mm_push(c, &b, mm_loop(c, kt, mt_arith_bin(c->a, TE_FLOORMOD, kc, mm_I(c, AP_ROWS)), MT_FOR_SERIAL,
                               pack_a_rows(c, k0, kk, M, MR)));
    }
    return mm_seq(c, &b);
}

/* Pack A once per call (knob pack_a)? By default when A is read across its
 * rows (contiguous along i, not k) and M and K are constants; whole when
 * that is at most AP_ALL_MAX bytes, else a K block at a time when K is
 * blocked and a block is at most that (else not: row_tiles' A_pack). The
 * knob also takes any other A. Sets c->ap_all, ap_depth, ap_blocked. */
static void choose_pack_a(mm *c) {
    int64_t M, K, size = (int64_t)mt_dtype_size(c->dt);
    if (!mt_te_is_const_int(c->ext[c->ns - 2], &M) || !mt_te_is_const_int(c->K, &K) || M <= 0 || K <= 0) return;
    bool across = !c->x_kvec && mm_operand_contiguous(c, false, false);
    bool blocked = M * K * size > AP_ALL_MAX;
    if (blocked && !c->split) return;
    int64_t depth = blocked ? c->kcblk : K;
    bool dflt = across && M * depth * size <= AP_ALL_MAX;
    bool on = mt_knob_get(c->f, MM_RULE, "pack_a", dflt) != 0;
    if (across || mt_knob_given(c->f, MM_RULE, "pack_a")) mt_knobs_set(&c->chosen, "pack_a", on);
    if (!on) return;
    c->ap_blocked = blocked;
    c->ap_depth = mm_I(c, depth);
    c->ap_all = mm_local_buf(c, "A_pack", mm_I(c, M * depth), c->dt);
    c->ap_all->scope = MT_SCOPE_GLOBAL;
}

/* All rows: blocks of MR (across threads when par), then the M % MR left,
 * as one tile of that height (M constant) or one row at a time. */
static mt_tstmt *rows(mm *c, const panel *p, mt_texpr *jr, bool par) {
    int MR = tile_rows(c);
    mt_texpr *M = c->ext[c->ns - 2];
    mt_tvar *io = mm_ivar(c, "io");
    svec s = {0};
    mm_push(c, &s, mm_loop(c, io, mt_arith_bin(c->a, TE_FLOORDIV, M, mm_I(c, MR)),
                           par && c->par ? MT_FOR_PARALLEL : MT_FOR_SERIAL,
                           row_tiles(c, p, jr, MR, mt_lw_mul(&c->lw, mm_V(c, io), mm_I(c, MR)))));
    int64_t Mc;
    if (mt_te_is_const_int(M, &Mc)) {
        if (Mc % MR) mm_push(c, &s, row_tiles(c, p, jr, (int)(Mc % MR), mm_I(c, Mc - Mc % MR)));
    } else {
        mt_tvar *ir = mm_ivar(c, "ir");
        mt_texpr *base = mt_lw_mul(&c->lw, mt_arith_bin(c->a, TE_FLOORDIV, M, mm_I(c, MR)), mm_I(c, MR));
        mm_push(c, &s, mm_loop(c, ir, mt_arith_bin(c->a, TE_FLOORMOD, M, mm_I(c, MR)), MT_FOR_SERIAL,
                         row_tiles(c, p, jr, 1, mt_lw_add(&c->lw, base, mm_V(c, ir)))));
    }
    return mm_seq(c, &s);
}

/* The copy of a block of B into bp. A B read as vectors along j (row-major)
 * is copied row by row of the block, rows across threads: each row's
 * ncols columns are one run of memory, read in order, and go to the
 * slivers' rows. Sliver by sliver, each k a different row, every read was a
 * new page: a 4096 x 4096 B packed at 2.4 GB/s. A gathered B (not vector
 * loads) keeps the sliver order, whose reads are then the contiguous ones. */
enum { PACK_ROWS = 8 }; /* the default of pack_rows */

static mt_tstmt *pack_block(mm *c, panel *p, mt_tvar *jr, bool threads) {
    int nr = c->nv * c->vl;
    mt_for_kind par = threads ? MT_FOR_PARALLEL : MT_FOR_SERIAL;
    mt_texpr *slivers = mm_ceildiv(c, p->ncols, nr);
    if (!c->y_vec) return mm_loop(c, jr, slivers, par, sliver_switch(c, p, mm_V(c, jr), true, 0, NULL));
    /* kr rows at a time: kr streams in flight */
    int kr = c->pack_rows;
    mt_tvar *kq = mm_ivar(c, "kq");
    svec s = {0};
    for (int r = 0; r < kr; r++) {
        panel q = *p;
        q.krow = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, mm_V(c, kq), mm_I(c, kr)), mm_I(c, r));
        mm_push(c, &s, sliver_switch(c, &q, mm_V(c, jr), true, 0, NULL));
    }
    mt_texpr *groups = mt_arith_bin(c->a, TE_FLOORDIV, p->kc, mm_I(c, kr));
    mt_tstmt *body = mm_loop(c, kq, groups, par, mm_loop(c, jr, slivers, MT_FOR_SERIAL, mm_seq(c, &s)));
    int64_t kc;
    if (mt_te_is_const_int(p->kc, &kc) && kc % kr == 0) return body;
    /* the rows left */
    mt_tvar *kt = mm_ivar(c, "kt"), *jt = mm_ivar(c, "jr");
    panel q = *p;
    q.krow = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, groups, mm_I(c, kr)), mm_V(c, kt));
    mt_tstmt *tail = mm_loop(c, jt, slivers, MT_FOR_SERIAL, sliver_switch(c, &q, mm_V(c, jt), true, 0, NULL));
    return mm_seq2(c, body, mm_loop(c, kt, mt_arith_bin(c->a, TE_FLOORMOD, p->kc, mm_I(c, kr)), MT_FOR_SERIAL, tail));
}

/* The K block pc of p (c->split), or all of K: p's k0, kc, first, last;
 * the block count (NULL: not split). */
static mt_texpr *panel_k(mm *c, panel *p, mt_tvar *pc) {
    mt_texpr *K = c->K;
    int64_t Kc;
    p->kcap = c->kcap;
    if (!c->split) {
        p->k0 = mm_I(c, 0);
        p->kc = K;
        p->first = p->last = NULL;
        return NULL;
    }
    mt_texpr *npc = mt_arith_bin(c->a, TE_MAX, mm_I(c, 1), mm_ceildiv(c, K, c->kcblk));
    p->k0 = mt_lw_mul(&c->lw, mm_V(c, pc), mm_I(c, c->kcblk));
    p->kc = mt_te_is_const_int(K, &Kc) && Kc % c->kcblk == 0
                ? mm_I(c, c->kcblk)
                : mt_arith_bin(c->a, TE_MIN, mm_I(c, c->kcblk), mt_lw_sub(&c->lw, K, p->k0));
    p->first = mm_eq(c, mm_V(c, pc), mm_I(c, 0));
    p->last = mm_eq(c, mm_V(c, pc), mt_lw_sub(&c->lw, npc, mm_I(c, 1)));
    return npc;
}

/* Large M: the GotoBLAS loops. For each column block (nc wide) and K block
 * (kc deep), pack that block of B into bp, then all row blocks in parallel. */
static mt_tstmt *packed_body(mm *c) {
    mt_texpr *N = c->ext[c->ns - 1];
    int64_t Nc;
    bool one_jc = mt_te_is_const_int(N, &Nc) && Nc <= c->ncblk;
    mt_tvar *jc = mm_ivar(c, "jc"), *pc = mm_ivar(c, "pc"), *jr = mm_ivar(c, "jr");
    panel p;
    p.jc0 = one_jc ? mm_I(c, 0) : mt_lw_mul(&c->lw, mm_V(c, jc), mm_I(c, c->ncblk));
    p.ncols = one_jc ? N : mt_arith_bin(c->a, TE_MIN, mm_I(c, c->ncblk), mt_lw_sub(&c->lw, N, p.jc0));
    if (mt_te_is_const_int(N, &Nc) && Nc % c->ncblk == 0) p.ncols = mm_I(c, c->ncblk);
    mt_texpr *npc = panel_k(c, &p, pc);
    p.bp = c->bp;
    p.ap = NULL;
    p.krow = NULL;
    p.ap_base = NULL;
    p.nx_j0 = NULL;
    p.nx_past = false;
    mt_tstmt *body = mm_seq2(c, pack_block(c, &p, jr, c->par), rows(c, &p, NULL, true));
    if (c->ap_blocked) { /* A a K block at a time: the K blocks outermost */
        if (!one_jc) body = mm_loop(c, jc, mm_ceildiv(c, N, c->ncblk), MT_FOR_SERIAL, body);
        return mm_loop(c, pc, npc, MT_FOR_SERIAL, mm_seq2(c, pack_a_all(c, p.k0, p.kc), body));
    }
    if (npc) body = mm_loop(c, pc, npc, MT_FOR_SERIAL, body);
    if (!one_jc) body = mm_loop(c, jc, mm_ceildiv(c, N, c->ncblk), MT_FOR_SERIAL, body);
    if (c->ap_all) body = mm_seq2(c, pack_a_all(c, mm_I(c, 0), c->K), body);
    return body;
}

/* ---- column blocks across threads ----------------------------------------------------- */

/* When A is small, the work is cut into column blocks (and batch indices):
 * one parallel loop over them, each item packing its block of B into a
 * buffer of its own and running every row tile over it, K block by K
 * block. One parallel region per call instead of two per column block,
 * K block and batch index, no row tail left to one thread, and each
 * thread's working set is its own block (in its own L2) and A. Two uses:
 *  - asked for (the conv rule's pointwise layers, c->wide): M * K within
 *    a quarter of L2 (the weights of a 1x1 convolution, 64 x 256), blocks
 *    of WIDE_COLS (32, 64 and 128 columns measured alike on one thread, 1x1
 *    256 -> 64 at 56 x 56; 64 gives 49 items per image there), K whole;
 *    each item's row tiles prefetch the next item's block (prefetch_step;
 *    knob prefetch): batch 32 at 56 x 56, 1x1 64 -> 256 7.0 -> 6.4 ms and
 *    256 -> 64 9.0 -> 8.8 ms on 2 threads;
 *  - few rows (matmul_defaults.c, mm_cols_parallel): blocks as wide as
 *    mm_cols_width makes them (a page of a row of B, fewer so that every
 *    core gets as many), K blocked as the packed path's. */
enum { WIDE_COLS = 64 };

static bool wide_fits(mm *c) {
    int64_t M, K, N;
    int64_t l2 = mt_tfunc_target(c->f)->l2_bytes;
    return c->wide && c->par && mt_te_is_const_int(c->ext[c->ns - 2], &M) && mt_te_is_const_int(c->K, &K) &&
           mt_te_is_const_int(c->ext[c->ns - 1], &N) && K > 0 && N >= 2 * WIDE_COLS &&
           M * K * (int64_t)mt_dtype_size(c->dt) * 4 <= (l2 > 0 ? l2 : 1 << 20);
}

/* One item: the columns [blk * ncw, + width) of the batch c->bv, every K
 * block. */
static mt_tstmt *cols_item(mm *c, mt_texpr *blk, int64_t ncw, mt_texpr *width, mt_texpr *nx_blk, bool pack) {
    panel p;
    mt_tvar *pc = mm_ivar(c, "pc"), *jr = mm_ivar(c, "jr");
    p.jc0 = mt_lw_mul(&c->lw, blk, mm_I(c, ncw));
    p.ncols = width;
    mt_texpr *npc = panel_k(c, &p, pc);
    p.ap = NULL;
    p.ap_base = NULL;
    p.krow = NULL;
    p.nx_j0 = NULL;
    p.nx_past = false;
    int64_t M, K;
    if (nx_blk) { /* (can_prefetch_next) */
        mt_te_is_const_int(c->ext[c->ns - 2], &M);
        mt_te_is_const_int(c->K, &K);
        int64_t tiles = M / tile_rows(c) * ((ncw + c->nv * c->vl - 1) / (c->nv * c->vl));
        p.nx_j0 = mt_lw_mul(&c->lw, nx_blk, mm_I(c, ncw));
        p.nx_rows = (K + tiles - 1) / tiles;
        p.nx_past = (tiles - 1) * p.nx_rows >= K;
        int64_t N;
        p.nx_cols = mt_te_is_const_int(c->ext[c->ns - 1], &N) && N < ncw ? N : ncw;
    }
    p.bp = pack ? mm_local_buf(c, "B_pack", mt_lw_mul(&c->lw, p.kcap, mm_I(c, ncw)), c->dt) : NULL;
    mt_tstmt *body = pack ? mm_seq2(c, pack_block(c, &p, jr, false), rows(c, &p, NULL, false)) : rows(c, &p, NULL, false);
    if (npc) body = mm_loop(c, pc, npc, MT_FOR_SERIAL, body);
    return pack ? mt_ts_alloc(c->a, p.bp, body) : body;
}

/* Can gen_cols' items prefetch the next one's block of B (prefetch_step)?
 * When B is read as vectors along its rows (a run of lines per row of the
 * block), K is one block, and M and K are constants with at least one full
 * row tile (the tiles that share the prefetches). */
static bool can_prefetch_next(mm *c) {
    int64_t M, K;
    return c->y_vec && !c->split && mt_te_is_const_int(c->ext[c->ns - 2], &M) && mt_te_is_const_int(c->K, &K) &&
           M >= tile_rows(c) && K > 0;
}

/* Item `it` of gen_cols' loop taken apart: its batch indices into bv, its
 * column block (of nblk) returned, the block fastest. */
static mt_texpr *item_indices(mm *c, mt_texpr *it, mt_texpr *nblk, mt_texpr **bv) {
    mt_texpr *rest = it;
    mt_texpr *blk = mt_arith_bin(c->a, TE_FLOORMOD, rest, nblk);
    rest = mt_arith_bin(c->a, TE_FLOORDIV, rest, nblk);
    for (int d = c->ns - 3; d >= 0; d--) {
        bv[d] = d == 0 ? rest : mt_arith_bin(c->a, TE_FLOORMOD, rest, c->ext[d]);
        rest = mt_arith_bin(c->a, TE_FLOORDIV, rest, c->ext[d]);
    }
    return blk;
}

/* The parallel loop over (batch.., column block): the batch indices and
 * the block taken apart from the item number, the block fastest; the last
 * block N % ncw wide, the same code with its width at run time. N is a
 * constant. */
static mt_tstmt *gen_cols(mm *c, int64_t ncw) {
    int64_t N;
    mt_te_is_const_int(c->ext[c->ns - 1], &N);
    int64_t nb = (N + ncw - 1) / ncw;
    mt_tvar *it = mm_ivar(c, "it");
    mt_texpr *nblk = mm_I(c, nb), *items = nblk;
    mt_texpr *blk = item_indices(c, mm_V(c, it), nblk, c->bv);
    for (int d = c->ns - 3; d >= 0; d--) items = mt_lw_mul(&c->lw, items, c->ext[d]);
    /* the next item's block of B prefetched during this one's tiles (knob
     * prefetch; the next item of the last one lies past B, which a
     * prefetch may name) */
    mt_texpr *nx_blk = NULL;
    if (can_prefetch_next(c)) {
        bool on = mt_knob_get(c->f, MM_RULE, "prefetch", c->wide) != 0;
        mt_knobs_set(&c->chosen, "prefetch", on);
        if (on) nx_blk = item_indices(c, mt_lw_add(&c->lw, mm_V(c, it), mm_I(c, 1)), nblk, c->nx_bv);
    }
    /* the last block narrower: one item's code for all, its width at run
     * time (two copies of the packing and the full tiles took a fifth of
     * the compile of x @ w with x 64 x 787 and w 787 x 130) */
    mt_texpr *width = N % ncw ? mt_arith_bin(c->a, TE_MIN, mm_I(c, ncw), mt_lw_sub(&c->lw, mm_I(c, N), mt_lw_mul(&c->lw, blk, mm_I(c, ncw))))
                              : mm_I(c, ncw);
    /* B read in place, without the copy (knob pack_b=0): the default for
     * the conv rule's small A when the next item's block is prefetched --
     * the tiles then read their block from L2, as they would the copy, and
     * the copy's stores and second read are saved (1x1 conv 256 -> 64 at
     * 56 x 56, batch 1: 0.88 -> 0.97 of oneDNN). A B along j only. */
    bool pack = true;
    if (c->y_vec) {
        pack = mt_knob_get(c->f, MM_RULE, "pack_b", !(c->wide && nx_blk)) != 0;
        if (c->wide || mt_knob_given(c->f, MM_RULE, "pack_b")) mt_knobs_set(&c->chosen, "pack_b", pack);
    }
    mt_tstmt *body = cols_item(c, blk, ncw, width, nx_blk, pack);
    return mm_loop(c, it, items, c->par ? MT_FOR_PARALLEL : MT_FOR_SERIAL, body);
}

/* The conv rule's small A: K whole, blocks of WIDE_COLS. */
static mt_tstmt *gen_wide(mm *c) {
    int nr = c->nv * c->vl;
    c->split = false;
    c->kcap = c->K;
    return gen_cols(c, WIDE_COLS / nr * nr > 0 ? WIDE_COLS / nr * nr : nr);
}

enum { MAX_PACK_BYTES = 64 << 20 }; /* B's packed block at most (given kc and nc clamped) */

/* The blocks of B (kcblk, ncblk, split, kcap) for the packed path, or
 * (cols) for column blocks across threads. */
static void choose_blocks(mm *c, bool cols) {
    int nr = c->nv * c->vl;
    mt_texpr *K = c->K;
    int64_t Kc;
    c->kcblk = tune.kc;
    c->ncblk = tune.nc;
    /* few rows: K deeper than a block is blocked, so that the block keeps
     * its width (the packed path's K up to 2 kc is one block) */
    int64_t whole = mm_few_rows_blocks(c, cols, &c->kcblk, &c->ncblk) ? 1 : 2;
    c->kcblk = mt_knob_get(c->f, MM_RULE, "kc", c->kcblk);
    c->ncblk = mt_knob_get(c->f, MM_RULE, "nc", c->ncblk);
    if (mt_te_is_const_int(K, &Kc) && Kc <= whole * c->kcblk) {
        c->split = false;
        c->kcap = mm_I(c, Kc > 0 ? Kc : 1);
    } else if (c->P) {
        c->split = true;
        c->kcap = mm_I(c, c->kcblk);
    } else {
        c->split = false;
        c->kcap = K;
    }
    /* the packed block within the target's L2 when its depth is known */
    int64_t kcap;
    if (mt_te_is_const_int(c->kcap, &kcap) && !mt_knob_given(c->f, MM_RULE, "nc")) {
        int64_t fit = mm_pack_budget(c) / (int64_t)mt_dtype_size(c->dt) / kcap / nr * nr;
        if (fit < c->ncblk) c->ncblk = fit > nr ? fit : nr;
    }
    /* a packed block of at most MAX_PACK_BYTES whatever the knobs say: with a
     * symbolic K or N the block is kc x nc (kc = nc = 2^20 from a tuning log
     * asked for 4 TiB of scratch, and every run failed) */
    int64_t most = MAX_PACK_BYTES / (int64_t)mt_dtype_size(c->dt);
    if (c->kcblk > most / nr) c->kcblk = most / nr;
    if (c->ncblk > most / c->kcblk) c->ncblk = most / c->kcblk;
    /* whole slivers in a block (a given nc, or nv other than 2) */
    c->ncblk = c->ncblk < nr ? nr : c->ncblk / nr * nr;
}

static mt_tstmt *gen_packed(mm *c) {
    int nr = c->nv * c->vl;
    mt_texpr *N = c->ext[c->ns - 1], *ncap;
    int64_t Nc;
    choose_blocks(c, false);
    c->par = mm_packed_parallel(c); /* threads only for regions worth a fork */
    c->cols = mm_cols_parallel(c);  /* few rows on several threads: one region */
    if (c->cols) choose_blocks(c, true);
    mt_knobs_set(&c->chosen, "mr", tile_rows(c));
    mt_knobs_set(&c->chosen, "nv", c->nv);
    mt_knobs_set(&c->chosen, "kc", c->kcblk);
    mt_knobs_set(&c->chosen, "nc", c->ncblk);
    mt_knobs_set(&c->chosen, "parallel", c->par);
    if (c->y_vec) mt_knobs_set(&c->chosen, "pack_rows", c->pack_rows);
    mt_knobs_set(&c->chosen, "par_cols", c->cols);
    if (c->cols) return gen_cols(c, c->ncblk);
    choose_pack_a(c);
    if (!mt_knob_get(c->f, MM_RULE, "primitives", 1)) mt_knobs_set(&c->chosen, "primitives", 0);
    else if ((c->prims = mm_packed_primitives(c, tile_rows(c)))) return NULL; /* rule_matmul_prims.c */
    ncap = mm_I(c, mt_te_is_const_int(N, &Nc) && Nc <= c->ncblk ? (Nc + nr - 1) / nr * nr : c->ncblk);
    c->bp = mm_local_buf(c, "B_pack", mt_lw_mul(&c->lw, c->kcap, ncap), c->dt);
    c->bp->scope = MT_SCOPE_GLOBAL;
    mt_tstmt *body = mt_ts_alloc(c->a, c->bp, mm_wrap_batch(c, packed_body));
    return c->ap_all ? mt_ts_alloc(c->a, c->ap_all, body) : body;
}

/* ---- entry ----------------------------------------------------------------------------- */

/* The few-rows schedule of a constant M; the matrix-vector one as
 * primitives where they say it (knob primitives; rule_matmul_prims.c),
 * then NULL with c->prims set. */
static mt_tstmt *gen_few_rows(mm *c, mt_tstmt *(*gen_few)(mm *)) {
    if (gen_few == mm_gen_matvec) {
        if (!mt_knob_get(c->f, MM_RULE, "primitives", 1)) mt_knobs_set(&c->chosen, "primitives", 0);
        else if ((c->prims = mm_matvec_primitives(c))) return NULL;
    }
    return gen_few(c);
}

/* The schedule of a matched matmul (mm_match's, or the conv rule's view
 * of a pointwise convolution: rule_conv.c). */
mt_tfunc *mm_schedule_cpu(mm *c) {
    mt_arena *a = c->a;
    mt_tfunc *f = c->f;
    c->epi_loop = epilogue_cost(c) > EPI_UNROLL_MAX;
    c->nv = (int)mt_knob_get(f, MM_RULE, "nv", tune.nv);
    c->par = mt_knob_get(f, MM_RULE, "parallel", 1) != 0;
    c->pack_rows = (int)mt_knob_get(f, MM_RULE, "pack_rows", PACK_ROWS);

    /* partial sums across K blocks live in C, or in an output of C's dtype */
    if (mm_is_param(c, c->C)) c->P = c->C;
    for (int e = 0; e < c->nep && !c->P; e++)
        if (mm_is_param(c, c->ep[e].out) && c->ep[e].out->dtype == c->dt) c->P = c->ep[e].out;

    /* params first, so that they are flattened in order */
    mt_tparam *params = MT_NEW_ARRAY(a, mt_tparam, f->nparams > 0 ? f->nparams : 1);
    for (int i = 0; i < f->nparams; i++) {
        params[i] = f->params[i];
        if (params[i].buf) params[i].buf = mt_lw_flat(&c->lw, params[i].buf)->flat;
    }

    /* can Y be read as vectors along j, X along k? */
    {
        mt_tvar *i0 = mm_ivar(c, "i0"), *j0 = mm_ivar(c, "j0"), *k = mm_ivar(c, "k");
        for (int d = 0; d < c->ns - 2; d++) c->bv[d] = mm_V(c, mm_ivar(c, "b"));
        mt_texpr *y = mm_operand(c, c->Y, NULL, mt_lw_ramp(&c->lw, mm_V(c, j0), c->vl), mm_V(c, k));
        c->y_vec = mm_vec_loads(y);
        y = mm_operand(c, c->Y, NULL, mm_V(c, j0), mt_lw_ramp(&c->lw, mm_V(c, k), c->vl));
        c->y_kvec = mm_vec_loads(y);
        mt_texpr *x = mm_operand(c, c->X, mm_V(c, i0), NULL, mt_lw_ramp(&c->lw, mm_V(c, k), c->vl));
        c->x_kvec = mm_vec_loads(x);
    }

    mt_texpr *M = c->ext[c->ns - 2];
    int64_t Mc;
    mt_tstmt *body;
    int few = 0; /* the schedule for few rows, when one fits: its row limit */
    mt_tstmt *(*gen_few)(mm *) = NULL;
    if (mm_matvec_fits(c)) few = mm_matvec_max_m(), gen_few = mm_gen_matvec; /* x @ w.T: rule_matvec.c */
    else if (mm_gemv_fits(c)) few = mm_gemv_max_m(), gen_few = mm_gen_gemv;   /* x @ w: rule_gemv.c */
    few = (int)mt_knob_get(f, MM_RULE, "few_rows", few);
    if (wide_fits(c)) body = gen_wide(c);
    else if (!gen_few || few <= 0) body = gen_packed(c);
    else if (mt_te_is_const_int(M, &Mc)) body = Mc < few ? gen_few_rows(c, gen_few) : gen_packed(c);
    else {
        c->m_below = few;
        mt_tstmt *small = gen_few(c);
        c->m_below = 0;
        body = mt_ts_if(a, mm_lt(c, M, mm_I(c, few)), small, gen_packed(c));
    }

    c->chosen.rule = MM_RULE;
    if (c->prims) return mt_knobs_chose(a, mt_knobs_mark(a, c->prims, f, MM_RULE), &c->chosen);
    mt_tfunc *g = MT_NEW(a, mt_tfunc);
    *g = *f;
    g->params = params;
    g->allocs = NULL;
    g->nallocs = 0;
    g->body = body;
    mt_tstmt_fill_loc(body, f->loc); /* all of it is new */
    return mt_knobs_chose(a, mt_knobs_mark(a, g, f, MM_RULE), &c->chosen);
}

mt_tfunc *mt_schedule_matmul_cpu(mt_arena *a, mt_tfunc *f, int *applied) {
    if (applied) *applied = 0;
    mm *c = MT_NEW(a, mm);
    c->a = c->lw.a = a;
    c->f = f;
    c->own = true;
    if (!mm_match(c)) return f;
    mt_tfunc *g = mm_schedule_cpu(c);
    if (applied) *applied = 1;
    return g;
}

mt_tfunc *mt_schedule_matmul_pass(mt_arena *a, mt_tfunc *f) {
    return mt_schedule_matmul_cpu(a, f, NULL);
}
