/*
 * rule_gemv.c -- the skinny schedule: few rows times a row-major B.
 *
 * When. The function matched by the matmul rule (rule_matmul.c) with few
 * rows (a constant M < max_m, or a symbolic M below it at run time) and Y
 * loadable as unit-stride vectors along j: x @ w with w (K, N) row-major,
 * the LLM-decode GEMV (M = 1) and the skinny matmuls of small batches. (A
 * B contiguous along k instead, x @ w.T, goes to rule_matvec.c.)
 *
 * Why not the register tile of rule_matmul.c. Its tile walks k with the
 * columns fixed: each step reads 128 bytes of one row of w and jumps N * 4
 * bytes to the next row. With w larger than the caches every step is a new
 * page and a new prefetch stream; the GEMV reached 19 of 44 GB/s. Here w is
 * read the way it lies: KB whole rows at a time, each from left to right.
 *
 * The schedule. The rows of w are cut into P parts and the columns into T
 * bands of NB columns; the P * T chunks (part p, band b; p-major) run in
 * parallel, each thread a contiguous range of them, so with T = 1 a thread
 * streams a contiguous slab of w. A chunk keeps its sums in `sums`, a
 * buffer of G x NB (its rows a cache line longer than NB, so that the rows
 * of one band column do not all fall in one set of the L1 cache), and for
 * each group of up to G = 16 rows of x:
 *
 *     sums = 0
 *     for kb < (rows of the part) / KB:        KB = 4 rows of w per sweep (8 for a group of 4-8 rows in one register tile)
 *         for each tile of NR = 2 registers of columns of the band:
 *             for each register tile of up to RT rows of the group:
 *                 reg = sums[rows, j : j + NR]                (RT x 2 vectors)
 *                 for r < KB:  w_v = w[k0 + r, j + v*vl : +vl]    (2 loads)
 *                              reg[ii, v] = fma(x[i0 + ii, k0 + r], w_v, reg[ii, v])
 *                 sums[rows, j : j + NR] = reg
 *     the rows of the part left (fewer than KB): the same, one row a sweep
 *     P == 1: the epilogue of sums at the store (out = f(sums), vectors)
 *     P > 1:  sums to parts[p, i, band]; after the parallel loop
 *             out[i, j] = f(parts[0, i, j] + ... + parts[P-1, i, j])
 *
 * Each sweep reads KB rows of w, each one sequential stream over the band
 * (the hardware prefetchers follow a few such streams per core); the w
 * vectors of a tile come from memory for the first register tile and from
 * L1 for the others, so w is read from memory once for the G rows.
 *
 * Heavy groups (4 rows or more: 4-16 FMAs per element of w). Their FMAs
 * between two lines of w leave the hardware prefetchers behind, and sums
 * of a whole row's width (in L2) cost a load and a store per KB FMAs, which
 * shared L1's bandwidth with the stream: x @ w, 8 x 4096 by 4096^2, ran at
 * 38 % of STREAM on one thread. So a heavy group's sums fit a third of L1
 * (bands of 512 columns at 8 rows, 48 KiB), and, when w may be larger than
 * L2, the first register tile of a sweep prefetches, for each line it
 * reads, the same line KB rows down: the next sweep's (knobs gemv_nb,
 * gemv_pf), and each core takes its own part of w's rows (P below).
 * Measured (the sweep, 2 threads): 69 -> 98 % of STREAM at 8 x 4096^2,
 * 62 -> 69 % at 8 x 8192^2 (76 % with the parts); one thread 38 -> 75 %
 * and 36 -> 66 %.
 * Groups of 1-2 rows already stream w at the memory's speed; the
 * prefetches cost them 10-15 %, so they keep neither. `reg`
 * is a local buffer at constant offsets (SROA makes it RT x 2 registers:
 * RT x 2 independent FMA chains, as in the matmul rule's micro-kernel), the
 * FMAs go in k-major order, and the sums go to `sums` (L1 or L2) once per
 * KB rows. A constant row count is split into even register tiles (8 rows:
 * 4 + 4, not 6 + 2, whose 2-row tile has too few chains for the FMA
 * latency).
 *
 * Sizes, all from the target: vl = lanes of a register; RT = the rows whose
 * RT x 2 accumulators, 2 vectors of w and a broadcast fit the vector
 * registers (8 with AVX-512, 6 with AVX2); NB = the columns whose G rows of
 * sums fit a third of L1 (heavy groups) or a quarter of L2, spread evenly
 * over the bands; P (knob gemv_parts) = the target's cores when the bands
 * alone do not divide evenly among them (M = 1, N = 4096: T = 1, P = 2, a
 * thread per half of w's rows) and for heavy groups over a w larger than
 * L2 (each thread streams its own slab of rows of w), else 1; w within 64
 * KiB runs on the calling thread. Symbolic N or K: NB is fixed, T computed
 * at run time, P = cores. docs/schedule.md has the measurements.
 *
 * Tails, exact and without masked memory operations: the last band's N %
 * NR columns are one tile of that width (constant N: vectors of vl and one
 * narrower T.Ramp) or single vectors then single columns (symbolic N),
 * each swept a row of w at a time in a loop over the KB rows (tail_tile); the
 * rows of w left after the KB sweeps are single-row sweeps; the rows of x
 * after the full groups are one smaller group (a run-time count when M is
 * symbolic, in register tiles of RT and one-row tiles). A symbolic M that
 * runs this schedule only below mr rows (the matmul rule's `if M < 16`,
 * mm.m_below) has that group alone: the full groups' code would be dead.
 *
 * Numerics: every element sums k in increasing order within a part, with
 * fused multiply-adds, and the P partial sums in order of p: at P = 1 this
 * is the matmul rule's order exactly; with P parts it is a two-level sum,
 * within the bound of any summation order, |err| <= (K + 1) u sum |x w|.
 */
#include "schedule/knobs.h"
#include "schedule/matmul_internal.h"

/* The sizes; docs/schedule.md has the measurements behind them. */
typedef struct gv_tune {
    int kb;                /* rows of w per sweep: concurrent row streams; kb lines of a
                            * tile share an L1 set when N * 4 is a multiple of 4 KiB,
                            * so more than 4 evict each other between register tiles */
    int kb1;               /* the same when a group is one register tile of 4 rows or
                            * more: its w vectors are not read again from L1, and each
                            * sweep's sums (from L2 when the band is wide) are loaded
                            * and stored once per kb1 rows of w instead of 4; but kb
                            * when w streams from memory on several cores (below) */
    int stream_l2s;        /* w of at least this many times the cores' L2 in all streams
                            * from memory: with several cores, kb rows a sweep (8 streams
                            * on 2 cores, not 16) measured 4-15 % faster on 2 threads at 6-8
                            * x 4096^2 and 8 x 8192^2, 1-5 % at 4 x 4096^2 and 8 x 4096 x
                            * 11008, -3 to +2 % on one; at 8 x 2048^2 (16 MiB, in L3) 4 %
                            * slower, so not there */
    int nv;                /* vector registers per tile: NR = nv * lanes */
    int mr;                /* rows of x per group (sharing one sweep of w), at most */
    int rt;                /* rows of a register tile, at most */
    int max_m;             /* rows below which this schedule is used */
    int64_t serial_bytes;  /* w of at most this many bytes: no threads */
    int heavy_m;           /* groups of at least this many rows ("heavy": FMAs enough per
                            * byte of w that the stream of w stalls behind them) keep their
                            * sums in L1 and prefetch the next sweep's rows of w */
    int acc_l1_div;        /* heavy: sums within l1d / acc_l1_div */
    int acc_l2_div;        /* else: sums within l2 / acc_l2_div */
} gv_tune;

static const gv_tune gvt = {4, 8, 16, 2, 16, 8, 16, 65536, 4, 3, 4};

typedef struct gv {
    mm *c;
    int nr;               /* tile width, nv * vl */
    int kb;               /* rows of w per sweep (knob gemv_kb) */
    int mr;               /* rows per group */
    int rt;               /* rows per register tile */
    int64_t nb;           /* band width (a multiple of nr) */
    int64_t stride;       /* sums' row stride: nb and a cache line */
    mt_texpr *T;          /* bands */
    int64_t P;            /* parts of K */
    mt_texpr *kp;         /* rows of w per part */
    mt_tbuffer *part;     /* partial sums [P, M, N] (P > 1), else NULL */
    mt_tbuffer *acc;      /* the chunk's sums, "sums": [rows, stride] */
    int pf;               /* rows of w ahead that the first register tile of a sweep
                             prefetches (knob gemv_pf); 0: none */
    int line;             /* elements of a cache line */
    mt_tbuffer *raw;      /* an expensive epilogue (c->epi_loop): the finished sums
                             [M, N], the epilogue then applied in one pass; else NULL */
} gv;

static mt_texpr *ld1(mm *c, mt_tbuffer *b, mt_texpr *ix) { return mt_te_load(c->a, b, &ix, 1); }
static mt_tstmt *st1(mm *c, mt_tbuffer *b, mt_texpr *ix, mt_texpr *v) { return mt_ts_store(c->a, b, &ix, 1, v); }
static mt_texpr *add(mm *c, mt_texpr *x, mt_texpr *y) { return mt_lw_add(&c->lw, x, y); }
static mt_texpr *mul(mm *c, mt_texpr *x, mt_texpr *y) { return mt_lw_mul(&c->lw, x, y); }
static mt_texpr *sub(mm *c, mt_texpr *x, mt_texpr *y) { return mt_lw_sub(&c->lw, x, y); }
static mt_texpr *bin(mm *c, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) { return mt_arith_bin(c->a, k, x, y); }
static mt_texpr *ramp(mm *c, mt_texpr *x, int lanes) { return mt_lw_ramp(&c->lw, x, lanes); }


/* What a walk over the columns of a band does with each tile. */
typedef struct walk {
    gv *g;
    int kind;            /* W_SWEEP, W_OUT, W_REDUCE */
    mt_texpr *k0;        /* sweep: first row of w */
    int krows;           /* sweep: rows of w */
    mt_texpr *i0, *rows; /* the group of rows of x */
    mt_texpr *p;         /* out: the part (P > 1) */
} walk;

enum { W_SWEEP, W_OUT, W_REDUCE };

/* sums' slot for row ii (an expression) of the group, band column jj. */
static mt_texpr *acc_ix(gv *g, mt_texpr *ii, mt_texpr *jj, int off, int lanes) {
    mm *c = g->c;
    return ramp(c, add(c, add(c, mul(c, ii, mm_I(c, g->stride)), jj), mm_I(c, off)), lanes);
}

/* part[p, i, j] */
static mt_texpr *part_ix(gv *g, mt_texpr *p, mt_texpr *i, mt_texpr *j, int lanes) {
    mm *c = g->c;
    mt_texpr *M = c->ext[c->ns - 2], *N = c->ext[c->ns - 1];
    return ramp(c, add(c, mul(c, add(c, mul(c, p, M), i), N), j), lanes);
}

/* For each row ii of the group: body(ii). Unrolled when the count is a
 * constant, else a loop. */
static mt_tstmt *each_row(walk *w, mt_tstmt *(*body)(walk *, mt_texpr *, void *), void *arg) {
    mm *c = w->g->c;
    int64_t r;
    if (mt_te_is_const_int(w->rows, &r)) {
        svec s = {0};
        for (int64_t ii = 0; ii < r; ii++) mm_push(c, &s, body(w, mm_I(c, ii), arg));
        return mm_seq(c, &s);
    }
    mt_tvar *v = mm_ivar(c, "ii");
    return mm_loop(c, v, w->rows, MT_FOR_SERIAL, body(w, mm_V(c, v), arg));
}

typedef struct tile_arg {
    mm_colset cs;
    mt_texpr *j, *jj;  /* global and band column of the tile */
} tile_arg;

/* A finished sum m of out[i, j .. j + l): to raw (an expensive epilogue,
 * applied later in one pass) or through the epilogue to the outputs. */
static mt_tstmt *finish(gv *g, mt_texpr *i, mt_texpr *j, int l, mt_texpr *m) {
    mm *c = g->c;
    if (g->raw) return st1(c, g->raw, part_ix(g, mm_I(c, 0), i, j, l), m);
    return mm_final_stores(c, i, ramp(c, j, l), m);
}

/* The epilogue (P = 1) or the partial sums (P > 1) of one row of x. */
static mt_tstmt *out_row(walk *w, mt_texpr *ii, void *arg) {
    tile_arg *t = arg;
    gv *g = w->g;
    mm *c = g->c;
    mt_texpr *i = add(c, w->i0, ii);
    svec s = {0};
    for (int v = 0; v < t->cs.nv; v++) {
        int l = t->cs.lanes[v];
        mt_texpr *m = ld1(c, g->acc, acc_ix(g, ii, t->jj, t->cs.off[v], l));
        mt_texpr *j = add(c, t->j, mm_I(c, t->cs.off[v]));
        mm_push(c, &s, g->part ? st1(c, g->part, part_ix(g, w->p, i, j, l), m) : finish(g, i, j, l, m));
    }
    return mm_seq(c, &s);
}

/* After the parallel loop: out = f(sum of the parts), one row of x. */
static mt_tstmt *reduce_row(walk *w, mt_texpr *ii, void *arg) {
    tile_arg *t = arg;
    gv *g = w->g;
    mm *c = g->c;
    mt_texpr *i = add(c, w->i0, ii);
    svec s = {0};
    for (int v = 0; v < t->cs.nv; v++) {
        int l = t->cs.lanes[v];
        mt_texpr *j = add(c, t->j, mm_I(c, t->cs.off[v]));
        mt_texpr *m = ld1(c, g->part, part_ix(g, mm_I(c, 0), i, j, l));
        for (int64_t p = 1; p < g->P; p++)
            m = mt_te_bin(c->a, TE_ADD, m, ld1(c, g->part, part_ix(g, mm_I(c, p), i, j, l)));
        mm_push(c, &s, finish(g, i, j, l, m));
    }
    return mm_seq(c, &s);
}

/* An expensive epilogue (gelu's erf, exp, tanh: c->epi_loop) written once
 * per register tile and row would be dozens of copies of its math, most of
 * the compile time; instead the sums go to raw and one pass applies it:
 *     for i in range(M):
 *         for jv in range(N // vl): out[i, jv * vl ..] = f(raw[i, jv * vl ..])
 *         for jt in range(N % vl): out[i, ..] = f(raw[i, ..])
 * two copies of the math. The pass reads M * N sums, small next to w. */
static mt_tstmt *epilogue_pass(gv *g, mt_tstmt *before) {
    mm *c = g->c;
    int vl = c->vl;
    mt_texpr *M = c->ext[c->ns - 2], *N = c->ext[c->ns - 1];
    mt_tvar *i = mm_ivar(c, "i"), *jv = mm_ivar(c, "jv"), *jt = mm_ivar(c, "jt");
    mt_texpr *nv = bin(c, TE_FLOORDIV, N, mm_I(c, vl)), *base = mul(c, nv, mm_I(c, vl));
    mt_texpr *jvec = mul(c, mm_V(c, jv), mm_I(c, vl)), *jtail = add(c, base, mm_V(c, jt));
    mt_tstmt *vec = mm_loop(c, jv, nv, MT_FOR_SERIAL,
                            mm_final_stores(c, mm_V(c, i), ramp(c, jvec, vl),
                                            ld1(c, g->raw, part_ix(g, mm_I(c, 0), mm_V(c, i), jvec, vl))));
    mt_tstmt *tail = mm_loop(c, jt, bin(c, TE_FLOORMOD, N, mm_I(c, vl)), MT_FOR_SERIAL,
                             mm_final_stores(c, mm_V(c, i), jtail,
                                             ld1(c, g->raw, part_ix(g, mm_I(c, 0), mm_V(c, i), jtail, 1))));
    mt_tstmt *pass = mm_loop(c, i, M, MT_FOR_SERIAL, mm_seq2(c, vec, tail));
    return mt_ts_alloc(c->a, g->raw, mm_seq2(c, before, pass));
}

/* Into s: a prefetch of each cache line of the tile in row k + g->pf of w
 * (past w's last row it names memory past the buffer, which a prefetch
 * may). w is a plain load, under casts at most (gemv_body checked). */
static void push_prefetches(gv *g, svec *s, const tile_arg *t, mt_texpr *k) {
    mm *c = g->c;
    int line = g->line;
    for (int off = 0; off < t->cs.width; off += line) {
        mt_texpr *at = add(c, t->j, mm_I(c, off));
        mt_texpr *y = mm_prefetchable(c, mm_operand(c, c->Y, NULL, at, add(c, k, mm_I(c, g->pf))), &line);
        mm_push(c, s, mt_ts_eval(c->a, mt_te_prefetch(c->a, y)));
    }
}

/* Sweep, rows [ii0, ii0 + mr) of the group (ii0 an expression, mr a
 * constant): a register tile. reg (mr x nv vectors, constant offsets, so
 * SROA makes it registers) is loaded from sums, gets krows steps of
 *     w_v = w[k, j + off_v]  (nv vector loads)
 *     reg[ii, v] = fma(x[i0 + ii, k], w_v, reg[ii, v])   (mr broadcasts, mr * nv FMAs)
 * in k-major order (mr * nv independent chains), and is stored back. */
static mt_tstmt *reg_tile(walk *w, const tile_arg *t, mt_texpr *ii0, int mr) {
    gv *g = w->g;
    mm *c = g->c;
    mt_arena *a = c->a;
    const mm_colset *cs = &t->cs;
    int vl = c->vl;
    mt_tbuffer *reg = mm_local_buf(c, "reg", mm_I(c, (int64_t)mr * cs->nv * vl), c->dt);
    svec s = {0};
#define SLOT(ii, v) ramp(c, mm_I(c, (int64_t)((ii) * cs->nv + (v)) * vl), cs->lanes[v])
    for (int ii = 0; ii < mr; ii++)
        for (int v = 0; v < cs->nv; v++)
            mm_push(c, &s, st1(c, reg, SLOT(ii, v), ld1(c, g->acc, acc_ix(g, add(c, ii0, mm_I(c, ii)), t->jj, cs->off[v], cs->lanes[v]))));
    /* the tile that reads w from memory prefetches ahead: the first of a
     * constant group, every one of a symbolic group (the others' are hits) */
    int64_t at;
    bool pf = g->pf > 0 && !(mt_te_is_const_int(ii0, &at) && at > 0);
    for (int r = 0; r < w->krows; r++) {
        mt_texpr *k = add(c, w->k0, mm_I(c, r));
        if (pf) push_prefetches(g, &s, t, k);
        mt_tvar *wv[MM_MAXV];
        svec f = {0};
        for (int v = 0; v < cs->nv; v++) wv[v] = mt_tvar_new(a, "w", c->dt);
        for (int ii = 0; ii < mr; ii++) {
            mt_tvar *xb = mt_tvar_new(a, "xb", c->dt);
            svec q = {0};
            for (int v = 0; v < cs->nv; v++) {
                mt_texpr *args[3] = {mm_V(c, xb), mm_Vl(c, wv[v], cs->lanes[v]), ld1(c, reg, SLOT(ii, v))};
                mm_push(c, &q, st1(c, reg, SLOT(ii, v), mt_te_call(a, IN_FMA, args, 3)));
            }
            mt_texpr *i = add(c, w->i0, add(c, ii0, mm_I(c, ii)));
            mm_push(c, &f, mt_ts_let(a, xb, mm_operand(c, c->X, i, NULL, k), mm_seq(c, &q)));
        }
        mt_tstmt *body = mm_seq(c, &f);
        for (int v = cs->nv - 1; v >= 0; v--)
            body = mt_ts_let(a, wv[v], mm_operand(c, c->Y, NULL, ramp(c, add(c, t->j, mm_I(c, cs->off[v])), cs->lanes[v]), k), body);
        mm_push(c, &s, body);
    }
    for (int ii = 0; ii < mr; ii++)
        for (int v = 0; v < cs->nv; v++)
            mm_push(c, &s, st1(c, g->acc, acc_ix(g, add(c, ii0, mm_I(c, ii)), t->jj, cs->off[v], cs->lanes[v]), ld1(c, reg, SLOT(ii, v))));
#undef SLOT
    return mt_ts_alloc(a, reg, mm_seq(c, &s));
}

/* One tile of the walk: cs wide at global column j, band column jj. */
static mt_tstmt *tile(walk *w, mm_colset cs, mt_texpr *j, mt_texpr *jj) {
    gv *g = w->g;
    mm *c = g->c;
    tile_arg t = {cs, j, jj};
    if (w->kind == W_OUT) return each_row(w, out_row, &t);
    if (w->kind == W_REDUCE) return each_row(w, reduce_row, &t);
    /* sweep: the group's rows in register tiles of at most g->rt rows; a
     * constant count split evenly (8 rows: 4 + 4 rather than 6 + 2, whose
     * 2-row tile has too few independent chains to cover the FMA latency),
     * a symbolic one in tiles of rt and one-row tiles for the rest */
    int rt = g->rt;
    int64_t r;
    svec s = {0};
    if (mt_te_is_const_int(w->rows, &r)) {
        int64_t n = (r + rt - 1) / rt, at = 0;
        for (int64_t q = 0; q < n; q++) {
            int64_t h = r / n + (q < r % n ? 1 : 0);
            mm_push(c, &s, reg_tile(w, &t, mm_I(c, at), (int)h));
            at += h;
        }
        return mm_seq(c, &s);
    }
    mt_tvar *sb = mm_ivar(c, "ib");
    mm_push(c, &s, mm_loop(c, sb, bin(c, TE_FLOORDIV, w->rows, mm_I(c, rt)), MT_FOR_SERIAL,
                           reg_tile(w, &t, mul(c, mm_V(c, sb), mm_I(c, rt)), rt)));
    mt_texpr *base = mul(c, bin(c, TE_FLOORDIV, w->rows, mm_I(c, rt)), mm_I(c, rt));
    mt_tvar *ir = mm_ivar(c, "ir");
    mm_push(c, &s, mm_loop(c, ir, bin(c, TE_FLOORMOD, w->rows, mm_I(c, rt)), MT_FOR_SERIAL,
                           reg_tile(w, &t, add(c, base, mm_V(c, ir)), 1)));
    return mm_seq(c, &s);
}

/* A tile of the columns left over (narrower than NR): in a sweep of KB
 * rows of w, a loop of KB one-row sweeps rather than KB unrolled steps. The
 * tail is a small share of the work, and its unrolled copy of the register
 * tile was as much code as the full tiles' (x @ w, 8 x 787 x 130: 36 ->
 * 31 ms to compile, the same run time). */
static mt_tstmt *tail_tile(walk *w, mm_colset cs, mt_texpr *j, mt_texpr *jj) {
    if (w->kind != W_SWEEP || w->krows == 1) return tile(w, cs, j, jj);
    mm *c = w->g->c;
    mt_tvar *kr = mm_ivar(c, "kr");
    walk one = *w;
    one.k0 = add(c, w->k0, mm_V(c, kr));
    one.krows = 1;
    return mm_loop(c, kr, mm_I(c, w->krows), MT_FOR_SERIAL, tile(&one, cs, j, jj));
}

/* Every tile of the columns [j0, j0 + width) (band column 0 at j0): full
 * tiles of NR, then the width % NR left -- one tile of that width when it
 * is the constant tail (last: the band that has it), else single vectors
 * then single columns (tail_tile). */
static mt_tstmt *walk_cols(walk *w, mt_texpr *j0, mt_texpr *width, mt_texpr *last) {
    gv *g = w->g;
    mm *c = g->c;
    int nr = g->nr, vl = c->vl;
    svec s = {0};
    mt_tvar *jt = mm_ivar(c, "jt");
    mt_texpr *jj = mul(c, mm_V(c, jt), mm_I(c, nr));
    mm_push(c, &s, mm_loop(c, jt, bin(c, TE_FLOORDIV, width, mm_I(c, nr)), MT_FOR_SERIAL,
                           tile(w, mm_cols(nr, vl), add(c, j0, jj), jj)));
    mt_texpr *full = mul(c, bin(c, TE_FLOORDIV, width, mm_I(c, nr)), mm_I(c, nr));
    int64_t Nc;
    if (mt_te_is_const_int(c->ext[c->ns - 1], &Nc)) {
        int rem = (int)(Nc % nr);
        if (rem) {
            mt_tstmt *tl = tail_tile(w, mm_cols(rem, vl), add(c, j0, full), full);
            mm_push(c, &s, last ? mt_ts_if(c->a, last, tl, NULL) : tl);
        }
    } else {
        mt_texpr *rem = bin(c, TE_FLOORMOD, width, mm_I(c, nr));
        mt_tvar *jv = mm_ivar(c, "jv"), *js = mm_ivar(c, "js");
        mt_texpr *jjv = add(c, full, mul(c, mm_V(c, jv), mm_I(c, vl)));
        mm_push(c, &s, mm_loop(c, jv, bin(c, TE_FLOORDIV, rem, mm_I(c, vl)), MT_FOR_SERIAL,
                               tail_tile(w, mm_cols(vl, vl), add(c, j0, jjv), jjv)));
        mt_texpr *jjs = add(c, add(c, full, mul(c, bin(c, TE_FLOORDIV, rem, mm_I(c, vl)), mm_I(c, vl))), mm_V(c, js));
        mm_push(c, &s, mm_loop(c, js, bin(c, TE_FLOORMOD, rem, mm_I(c, vl)), MT_FOR_SERIAL,
                               tail_tile(w, mm_cols(1, vl), add(c, j0, jjs), jjs)));
    }
    return mm_seq(c, &s);
}

/* One group of rows [i0, i0 + rows) in the chunk (part p: rows [kp0, kp0 +
 * kpn) of w; band: columns [j0, j0 + nbw)). */
static mt_tstmt *group(gv *g, mt_texpr *i0, mt_texpr *rows, mt_texpr *p, mt_texpr *kp0, mt_texpr *kpn,
                       mt_texpr *j0, mt_texpr *nbw, mt_texpr *last) {
    mm *c = g->c;
    int vl = c->vl, KB = g->kb;
    svec s = {0};
    /* sums = 0 over the group's rows */
    mt_tvar *z = mm_ivar(c, "z");
    mm_push(c, &s, mm_loop(c, z, mul(c, rows, mm_I(c, g->stride / vl)), MT_FOR_SERIAL,
                           st1(c, g->acc, ramp(c, mul(c, mm_V(c, z), mm_I(c, vl)), vl), mm_fzero(c, vl))));
    /* KB rows of w per sweep */
    mt_tvar *kb = mm_ivar(c, "kb");
    walk w = {g, W_SWEEP, add(c, kp0, mul(c, mm_V(c, kb), mm_I(c, KB))), KB, i0, rows, p};
    mm_push(c, &s, mm_loop(c, kb, bin(c, TE_FLOORDIV, kpn, mm_I(c, KB)), MT_FOR_SERIAL, walk_cols(&w, j0, nbw, last)));
    /* the rows left, one per sweep */
    int64_t kc;
    if (!mt_te_is_const_int(kpn, &kc) || kc % KB) {
        mt_tvar *kt = mm_ivar(c, "kt");
        mt_texpr *kfull = mul(c, bin(c, TE_FLOORDIV, kpn, mm_I(c, KB)), mm_I(c, KB));
        walk w1 = {g, W_SWEEP, add(c, add(c, kp0, kfull), mm_V(c, kt)), 1, i0, rows, p};
        mm_push(c, &s, mm_loop(c, kt, bin(c, TE_FLOORMOD, kpn, mm_I(c, KB)), MT_FOR_SERIAL, walk_cols(&w1, j0, nbw, last)));
    }
    walk wo = {g, W_OUT, NULL, 0, i0, rows, p};
    mm_push(c, &s, walk_cols(&wo, j0, nbw, last));
    return mm_seq(c, &s);
}

/* Chunk ch: part p = ch / T, band b = ch % T; its groups of rows. */
static mt_tstmt *chunk(gv *g, mt_texpr *ch) {
    mm *c = g->c;
    mt_texpr *M = c->ext[c->ns - 2], *N = c->ext[c->ns - 1], *K = c->K;
    int64_t Tc;
    bool one_band = mt_te_is_const_int(g->T, &Tc) && Tc == 1;
    mt_texpr *p = g->P == 1 ? mm_I(c, 0) : one_band ? ch : bin(c, TE_FLOORDIV, ch, g->T);
    mt_texpr *b = one_band ? mm_I(c, 0) : g->P == 1 ? ch : bin(c, TE_FLOORMOD, ch, g->T);
    mt_texpr *kp0 = mul(c, p, g->kp);
    mt_texpr *kpn = g->P == 1 ? K : bin(c, TE_MAX, mm_I(c, 0), bin(c, TE_MIN, g->kp, sub(c, K, kp0)));
    mt_texpr *j0 = mul(c, b, mm_I(c, g->nb));
    mt_texpr *nbw = one_band ? N : bin(c, TE_MIN, mm_I(c, g->nb), sub(c, N, j0));
    mt_texpr *last = one_band ? NULL : mm_eq(c, b, sub(c, g->T, mm_I(c, 1)));
    int mr = g->mr;
    svec s = {0};
    int64_t Mc;
    mt_tvar *gi = mm_ivar(c, "g");
    mt_texpr *i0 = mul(c, mm_V(c, gi), mm_I(c, mr));
    mt_texpr *ng = bin(c, TE_FLOORDIV, M, mm_I(c, mr));
    /* a symbolic M known to be below mr has no full group: the group's code
     * would be dead, and it is most of the compile time */
    bool no_full = !mt_te_is_const_int(M, &Mc) && c->m_below > 0 && c->m_below <= mr;
    if (no_full) { /* the rows from 0: M % mr, which is M, and tells LLVM it is below mr */
        mt_texpr *rows = bin(c, TE_FLOORMOD, M, mm_I(c, mr));
        mm_push(c, &s, mt_ts_if(c->a, mm_lt(c, mm_I(c, 0), rows), group(g, mm_I(c, 0), rows, p, kp0, kpn, j0, nbw, last), NULL));
        return mt_ts_alloc(c->a, g->acc, mm_seq(c, &s));
    }
    mm_push(c, &s, mm_loop(c, gi, ng, MT_FOR_SERIAL, group(g, i0, mm_I(c, mr), p, kp0, kpn, j0, nbw, last)));
    mt_texpr *it = mul(c, ng, mm_I(c, mr));
    if (mt_te_is_const_int(M, &Mc)) {
        if (Mc % mr) mm_push(c, &s, group(g, it, mm_I(c, Mc % mr), p, kp0, kpn, j0, nbw, last));
    } else {
        mt_texpr *rem = bin(c, TE_FLOORMOD, M, mm_I(c, mr));
        mm_push(c, &s, mt_ts_if(c->a, mm_lt(c, mm_I(c, 0), rem), group(g, it, rem, p, kp0, kpn, j0, nbw, last), NULL));
    }
    return mt_ts_alloc(c->a, g->acc, mm_seq(c, &s));
}

static mt_tstmt *gemv_body(mm *c) {
    gv *g = MT_NEW(c->a, gv);
    g->c = c;
    const mt_target_desc *tg = mt_tfunc_target(c->f);
    int vl = c->vl;
    int64_t es = (int64_t)mt_dtype_size(c->dt);
    int gmr = (int)mt_knob_get(c->f, MM_RULE, "gemv_mr", gvt.mr);
    mt_knobs_set(&c->chosen, "gemv_mr", gmr);
    g->nr = gvt.nv * vl;
    mt_texpr *M = c->ext[c->ns - 2], *N = c->ext[c->ns - 1], *K = c->K;
    int64_t Mc, Nc, Kc;
    bool mconst = mt_te_is_const_int(M, &Mc);
    g->mr = mconst && Mc < gmr ? (int)(Mc > 0 ? Mc : 1) : gmr;
    /* the register tile: rt * nv accumulators, nv vectors of w and a broadcast */
    int fit = (tg->vector_registers - gvt.nv - 1) / gvt.nv;
    g->rt = fit < 1 ? 1 : fit < gvt.rt ? fit : gvt.rt;
    bool one_tile = g->mr <= g->rt && g->mr >= 4; /* (1 or 2 rows: 4 measured as good) */
    bool heavy = mconst && g->mr >= gvt.heavy_m; /* (a symbolic M may be 1 at run time) */
    /* the prefetches only for a w that may not fit L2 (its lines come from
     * memory); in a small one they are code LLVM takes time over for nothing
     * (8 x 787 x 130: +3 ms of a 31 ms compile) */
    int64_t Kw, Nw;
    mt_texpr *y0 = mm_prefetchable(c, mm_operand(c, c->Y, NULL, mm_I(c, 0), mm_I(c, 0)), &g->line);
    int64_t wes = y0 ? (int64_t)mt_dtype_size(y0->buf->dtype) : es;
    bool wconst = mt_te_is_const_int(K, &Kw) && mt_te_is_const_int(N, &Nw);
    bool big_w = !wconst || Kw * Nw * wes > tg->l2_bytes;
    int ncores = tg->cores > 0 ? tg->cores : 1;
    bool streams = ncores > 1 && wconst && Kw * Nw * wes >= gvt.stream_l2s * tg->l2_bytes * ncores;
    int KB = g->kb = (int)mt_knob_get(c->f, MM_RULE, "gemv_kb", one_tile && !streams ? gvt.kb1 : gvt.kb);
    mt_knobs_set(&c->chosen, "gemv_kb", KB);
    g->pf = y0 ? (int)mt_knob_get(c->f, MM_RULE, "gemv_pf", heavy && big_w ? KB : 0) : 0; /* (w computed: none) */
    mt_knobs_set(&c->chosen, "gemv_pf", g->pf);

    /* band width: a group's sums within a part of L1 or L2 (knob gemv_nb) */
    int64_t budget = heavy ? tg->l1d_bytes / gvt.acc_l1_div : tg->l2_bytes / gvt.acc_l2_div;
    int64_t nbmax = mt_knob_get(c->f, MM_RULE, "gemv_nb", budget / (g->mr * es));
    /* within the knob's range and a sums buffer of at most 64 MiB (a
     * symbolic N takes the band as it is) */
    int64_t most = ((int64_t)64 << 20) / (g->mr * es);
    if (most > (1 << 20)) most = 1 << 20;
    if (nbmax > most) nbmax = most;
    nbmax = nbmax / g->nr * g->nr;
    if (nbmax < g->nr) nbmax = g->nr;
    mt_knobs_set(&c->chosen, "gemv_nb", nbmax);
    bool nconst = mt_te_is_const_int(N, &Nc), kconst = mt_te_is_const_int(K, &Kc);
    int cores = tg->cores > 0 ? tg->cores : 1;
    int64_t T = 0;
    if (nconst) {
        int64_t n = Nc > 0 ? Nc : 1;
        T = (n + nbmax - 1) / nbmax;
        int64_t per = (n + T - 1) / T;
        g->nb = (per + g->nr - 1) / g->nr * g->nr;
        T = (n + g->nb - 1) / g->nb;
        g->T = mm_I(c, T);
    } else {
        g->nb = nbmax;
        g->T = mm_ceildiv(c, N, g->nb);
    }

    /* parts of K, and whether to run in parallel */
    bool par = true;
    g->P = 1;
    if (nconst && kconst) {
        if (Nc * Kc * es <= gvt.serial_bytes) par = false;
        /* a part of K per core: when the bands do not divide among the
         * cores, and for heavy groups over a large w, where each thread
         * streaming its own slab of rows beat the threads sharing every
         * row (8 x 8192 by 8192^2: 10-15 % faster on 2 threads) */
        else if (cores > 1 && ((heavy && big_w) || (T % cores != 0 && T < 4 * cores))) g->P = cores;
    } else if (cores > 1) {
        g->P = cores;
    }
    g->P = mt_knob_get(c->f, MM_RULE, "gemv_parts", g->P);
    if (kconst && g->P > Kc / KB) g->P = Kc / KB > 1 ? Kc / KB : 1; /* parts of whole sweeps */
    mt_knobs_set(&c->chosen, "gemv_parts", g->P);
    if (g->P > 1) {
        if (kconst) g->kp = mm_I(c, ((Kc + g->P - 1) / g->P + KB - 1) / KB * KB);
        else g->kp = mul(c, mm_ceildiv(c, mm_ceildiv(c, K, g->P), KB), mm_I(c, KB));
    } else {
        g->kp = K;
    }
    /* sums' rows one cache line apart beyond the band, so that the rows of a
     * band column fall in different sets of the L1 cache (a band of 1024
     * float32 would put all of them in one set) */
    int64_t line = tg->cache_line_bytes / es;
    g->stride = g->nb + (line > vl ? line : vl);
    g->acc = mm_local_buf(c, "sums", mm_I(c, g->mr * g->stride), c->dt);
    if (g->P > 1) {
        g->part = mm_local_buf(c, "parts", mul(c, mm_I(c, g->P), mul(c, M, N)), c->dt);
        g->part->scope = MT_SCOPE_GLOBAL;
    }

    if (c->epi_loop) {
        g->raw = mm_local_buf(c, "raw", mul(c, M, N), c->dt);
        g->raw->scope = MT_SCOPE_GLOBAL;
    }
    mt_tvar *ch = mm_ivar(c, "ch");
    mt_texpr *nch = g->P == 1 ? g->T : mul(c, mm_I(c, g->P), g->T);
    int64_t nc1;
    if ((mt_te_is_const_int(nch, &nc1) && nc1 <= 1) || !c->par) par = false;
    mt_tstmt *loop = mm_loop(c, ch, nch, par ? MT_FOR_PARALLEL : MT_FOR_SERIAL, chunk(g, mm_V(c, ch)));
    if (g->P == 1) return g->raw ? epilogue_pass(g, loop) : loop;

    /* P > 1: the partial sums, then their sum and the epilogue */
    mt_tvar *i = mm_ivar(c, "i");
    walk w = {g, W_REDUCE, NULL, 0, mm_V(c, i), mm_I(c, 1), NULL};
    mt_tstmt *red = mm_loop(c, i, M, MT_FOR_SERIAL, walk_cols(&w, mm_I(c, 0), N, NULL));
    mt_tstmt *all = mt_ts_alloc(c->a, g->part, mm_seq2(c, loop, red));
    return g->raw ? epilogue_pass(g, all) : all;
}

/* Does the matched function fit (see the top)? Y along j as vectors
 * (c->y_vec, which the matmul rule's entry works out before asking). */
bool mm_gemv_fits(mm *c) { return c->y_vec; }

int mm_gemv_max_m(void) { return gvt.max_m; }

mt_tstmt *mm_gen_gemv(mm *c) { return mm_wrap_batch(c, gemv_body); }
