/*
 * rule_matvec.c -- the matrix-vector schedule: few rows times a transposed B.
 *
 * When. The function matched by the matmul rule (rule_matmul.c) with few
 * rows (a constant M < max_m, or a symbolic M below it at run time), and
 * both operands contiguous along k: X(i, k) and Y(k, j) are unit-stride
 * vector loads when k walks a T.Ramp, while Y is not along j. That is
 * x @ w.T with w (N, K) row-major, the layers of an MLP: each output
 * element is the dot product of two contiguous K-vectors. (Y contiguous
 * along j is the matmul rule's own small-M path.)
 *
 * The schedule. Columns in blocks of JB = 8; for each block and each row i:
 *
 *     acc[r] = 0 (vl lanes, r < JB)                   JB vector registers
 *     for kb < K / vl:  xv = X(i, kb*vl : +vl)
 *                       acc[r] = fma(xv, Y(kb*vl : +vl, j0 + r), acc[r])
 *     s[r] = horizontal sum of acc[r]                 a halving tree
 *     for k in the K % vl left:  s[r] = fma(X(i, k), Y(k, j0 + r), s[r])
 *     store the epilogue of s[r] at (i, j0 + r)
 *
 * Per k step: one vector of X shared by JB rows of w, JB loads of w and JB
 * independent FMA chains (JB = 8 covers the 4-cycle FMA latency of two
 * pipes). The JB rows of w (JB * K elements) stay in L1 across the rows i.
 * The N % JB columns left are one block that wide (constant N) or blocks of
 * one column (symbolic N). Nothing is packed: w is read in place, once.
 *
 * Threads. Column blocks are grouped into chunks of at least chunk_bytes of
 * w (64 KiB); the chunks run in parallel when there are two or more (so a
 * 784 x 128 float32 layer, 400 KB, runs as 7 chunks; a 128 x 10 one, 5 KB,
 * stays on the calling thread: waking threads costs more than it saves).
 * With symbolic N or K the chunk count is computed at run time (the
 * runtime runs a parallel loop of one iteration inline).
 *
 * Numerics: reassociated. Each dot product is summed in vl partial sums
 * (lane l takes k = l mod vl), then the lanes in a tree, then the tail in
 * order; products are fused (fma). The error bound is that of any order,
 * |err| <= (K + 1) * u * sum_k |x_k * w_k|; tests/schedule checks it.
 */
#include "schedule/matmul_internal.h"

typedef struct mv_tune {
    int jb;              /* columns per block: independent accumulators */
    int64_t chunk_bytes; /* bytes of w per parallel chunk, at least */
    int max_m;           /* rows below which the matrix-vector schedule is used */
} mv_tune;

static const mv_tune mvt = {8, 65536, 12};

static mt_texpr *slot(mm *c, int r, int lanes) { return mt_lw_ramp(&c->lw, mm_I(c, (int64_t)r * c->vl), lanes); }
static mt_texpr *ld(mm *c, mt_tbuffer *b, mt_texpr *ix) { return mt_te_load(c->a, b, &ix, 1); }
static mt_tstmt *st(mm *c, mt_tbuffer *b, mt_texpr *ix, mt_texpr *v) { return mt_ts_store(c->a, b, &ix, 1, v); }

static mt_texpr *fma3(mm *c, mt_texpr *x, mt_texpr *y, mt_texpr *z) {
    mt_texpr *args[3] = {x, y, z};
    return mt_te_call(c->a, IN_FMA, args, 3);
}

/* Row i, columns [j0, j0 + w): the dot products and their epilogue. */
static mt_tstmt *block(mm *c, mt_texpr *i, mt_texpr *j0, int w) {
    mt_arena *a = c->a;
    int vl = c->vl;
    mt_texpr *K = c->K;
    mt_tbuffer *acc = mm_local_buf(c, "acc", mm_I(c, (int64_t)w * vl), c->dt);
    svec s = {0};
    for (int r = 0; r < w; r++) mm_push(c, &s, st(c, acc, slot(c, r, vl), mm_fzero(c, vl)));

    /* the vector part: K / vl steps */
    mt_tvar *kb = mm_ivar(c, "kb");
    mt_tvar *xv = mt_tvar_new(a, "xv", c->dt);
    mt_texpr *k = mt_lw_ramp(&c->lw, mt_lw_mul(&c->lw, mm_V(c, kb), mm_I(c, vl)), vl);
    svec f = {0};
    for (int r = 0; r < w; r++) {
        mt_texpr *y = mm_operand(c, c->Y, NULL, mt_lw_add(&c->lw, j0, mm_I(c, r)), k);
        mm_push(c, &f, st(c, acc, slot(c, r, vl), fma3(c, mm_Vl(c, xv, vl), y, ld(c, acc, slot(c, r, vl)))));
    }
    mt_tstmt *body = mt_ts_let(a, xv, mm_operand(c, c->X, i, NULL, k), mm_seq(c, &f));
    mm_push(c, &s, mm_loop(c, kb, mt_arith_bin(c->a, TE_FLOORDIV, K, mm_I(c, vl)), MT_FOR_SERIAL, body));

    /* the lanes: acc[r][0:h] += acc[r][h:2h], h = vl/2 .. 1 */
    for (int r = 0; r < w; r++)
        for (int h = vl / 2; h >= 1; h /= 2) {
            mt_texpr *lo = mt_lw_ramp(&c->lw, mm_I(c, (int64_t)r * vl), h);
            mt_texpr *hi = mt_lw_ramp(&c->lw, mm_I(c, (int64_t)r * vl + h), h);
            mm_push(c, &s, st(c, acc, lo, mt_te_bin(a, TE_ADD, ld(c, acc, lo), ld(c, acc, hi))));
        }

    /* the K % vl left, in order */
    int64_t Kc;
    if (!mt_te_is_const_int(K, &Kc) || Kc % vl) {
        mt_tvar *kt = mm_ivar(c, "kt"), *xs = mt_tvar_new(a, "xs", c->dt);
        mt_texpr *kfull = mt_lw_mul(&c->lw, mt_arith_bin(c->a, TE_FLOORDIV, K, mm_I(c, vl)), mm_I(c, vl));
        mt_texpr *kk = mt_lw_add(&c->lw, kfull, mm_V(c, kt));
        svec t = {0};
        for (int r = 0; r < w; r++) {
            mt_texpr *y = mm_operand(c, c->Y, NULL, mt_lw_add(&c->lw, j0, mm_I(c, r)), kk);
            mm_push(c, &t, st(c, acc, slot(c, r, 1), fma3(c, mm_V(c, xs), y, ld(c, acc, slot(c, r, 1)))));
        }
        mt_tstmt *tb = mt_ts_let(a, xs, mm_operand(c, c->X, i, NULL, kk), mm_seq(c, &t));
        mm_push(c, &s, mm_loop(c, kt, mt_arith_bin(c->a, TE_FLOORMOD, K, mm_I(c, vl)), MT_FOR_SERIAL, tb));
    }

    for (int r = 0; r < w; r++)
        mm_push(c, &s, mm_final_stores(c, i, mt_lw_add(&c->lw, j0, mm_I(c, r)), ld(c, acc, slot(c, r, 1))));
    return mt_ts_alloc(a, acc, mm_seq(c, &s));
}

/* Every row for the columns [j0, j0 + w). */
static mt_tstmt *all_rows(mm *c, mt_texpr *j0, int w) {
    mt_tvar *i = mm_ivar(c, "i");
    return mm_loop(c, i, c->ext[c->ns - 2], MT_FOR_SERIAL, block(c, mm_V(c, i), j0, w));
}

int mm_matvec_jb(void) { return mvt.jb; }

int64_t mm_matvec_chunk(int64_t N, int64_t K, int64_t es, int64_t *nch) {
    int64_t blk = (int64_t)mvt.jb * (K > 0 ? K : 1) * es;
    int64_t b = (mvt.chunk_bytes + blk - 1) / blk;
    *nch = (N / mvt.jb + b - 1) / b;
    return b;
}

static mt_tstmt *matvec_body(mm *c) {
    int JB = mvt.jb;
    mt_texpr *N = c->ext[c->ns - 1], *K = c->K;
    mt_texpr *nb = mt_arith_bin(c->a, TE_FLOORDIV, N, mm_I(c, JB)); /* full blocks */
    int64_t es = (int64_t)mt_dtype_size(c->dt), Nc, Kc;
    bool known = mt_te_is_const_int(N, &Nc) && mt_te_is_const_int(K, &Kc);

    /* blocks per chunk, chunks */
    mt_texpr *bpc, *nch;
    if (known) {
        int64_t n;
        bpc = mm_I(c, mm_matvec_chunk(Nc, Kc, es, &n));
        nch = mm_I(c, n);
    } else {
        mt_texpr *blk = mt_lw_mul(&c->lw, mt_arith_bin(c->a, TE_MAX, K, mm_I(c, 1)), mm_I(c, (int64_t)JB * es));
        bpc = mt_arith_bin(c->a, TE_MAX, mm_I(c, 1), mt_arith_bin(c->a, TE_FLOORDIV, mm_I(c, mvt.chunk_bytes), blk));
        mt_texpr *q = mt_lw_add(&c->lw, nb, mt_lw_sub(&c->lw, bpc, mm_I(c, 1)));
        nch = mt_arith_bin(c->a, TE_FLOORDIV, q, bpc);
    }
    mt_tvar *ch = mm_ivar(c, "ch"), *t = mm_ivar(c, "jb");
    mt_texpr *b0 = mt_lw_mul(&c->lw, mm_V(c, ch), bpc);
    mt_texpr *cnt = mt_arith_bin(c->a, TE_MIN, bpc, mt_lw_sub(&c->lw, nb, b0));
    mt_texpr *j0 = mt_lw_mul(&c->lw, mt_lw_add(&c->lw, b0, mm_V(c, t)), mm_I(c, JB));
    mt_tstmt *inner = mm_loop(c, t, cnt, MT_FOR_SERIAL, all_rows(c, j0, JB));
    svec s = {0};
    mm_push(c, &s, mm_loop(c, ch, nch, c->par ? MT_FOR_PARALLEL : MT_FOR_SERIAL, inner));

    /* the N % JB columns left */
    mt_texpr *jt0 = mt_lw_mul(&c->lw, nb, mm_I(c, JB));
    if (mt_te_is_const_int(N, &Nc)) {
        if (Nc % JB) mm_push(c, &s, all_rows(c, jt0, (int)(Nc % JB)));
    } else {
        mt_tvar *jt = mm_ivar(c, "jt");
        mm_push(c, &s, mm_loop(c, jt, mt_arith_bin(c->a, TE_FLOORMOD, N, mm_I(c, JB)), MT_FOR_SERIAL,
                               all_rows(c, mt_lw_add(&c->lw, jt0, mm_V(c, jt)), 1)));
    }
    return mm_seq(c, &s);
}

/* Does the matched function fit (see the top)? */
bool mm_matvec_fits(mm *c) {
    if (c->y_vec) return false;
    mt_tvar *i = mm_ivar(c, "i"), *j = mm_ivar(c, "j"), *k0 = mm_ivar(c, "k");
    for (int d = 0; d < c->ns - 2; d++) c->bv[d] = mm_V(c, mm_ivar(c, "b"));
    mt_texpr *k = mt_lw_ramp(&c->lw, mm_V(c, k0), c->vl);
    mt_texpr *x = mm_operand(c, c->X, mm_V(c, i), NULL, k);
    mt_texpr *y = mm_operand(c, c->Y, NULL, mm_V(c, j), k);
    return mm_vec_loads(x) && mm_vec_loads(y);
}

int mm_matvec_max_m(void) { return mvt.max_m; }

mt_tstmt *mm_gen_matvec(mm *c) { return mm_wrap_batch(c, matvec_body); }
