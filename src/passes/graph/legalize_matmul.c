/*
 * legalize_matmul.c -- the loop function of matmul.
 *
 * out[b.., i, j] = sum_k a[b.., i, k] * b[b.., k, j] is one block with a
 * spatial variable per batch dim, spatial i and j, and reduce k, init 0:
 *
 *     for i0, i1, i2 in T.grid(7, 5, 3):
 *         with T.block("matmul"):
 *             v0, v1, v2 = T.axis.remap("SRS", [i0, i1, i2])
 *             T.reads(a[v0, v1], b[v1, v2])
 *             T.writes(out[v0, v2])
 *             with T.init():
 *                 out[v0, v2] = 0.0
 *             out[v0, v2] = out[v0, v2] + a[v0, v1] * b[v1, v2]
 *
 * The loops are nested batch.., i, k, j: with the reduce loop outside j, the
 * innermost loop walks a row of b and a row of out contiguously and carries
 * no dependence, so the fallback schedule's vectorizer can use it (the i, j,
 * k order would make the inner loop a strict floating-point reduction over
 * a column of b). lower_blocks runs the init at k == 0, for every j.
 *
 * NumPy's 1-D cases drop a variable: a 1-D a has no i (a[k]), a 1-D b no j
 * (b[k]). Batch dims are aligned at the right with the output's; an operand's
 * batch dim of constant size 1 is read at index 0 (broadcast), a missing one
 * is not indexed.
 *
 * float16 accumulates in a float32 intermediate of the output's shape, then a
 * spatial block casts it; integers accumulate in their dtype and wrap. When
 * the inner extent k is symbolic, a guarded fill `if k == 0: out = 0` comes
 * first (the init, inside the k loop, would not run); a constant k of 0 is
 * just the fill.
 */
#include <string.h>

#include "passes/graph/graph_passes.h"
#include "support/common.h"

/* The nest around a block with the given regions, init and body. */
static mt_tstmt *build(mt_nest *ns, const char *name, mt_tregion *reads, int nreads, mt_tregion *writes,
                       int nwrites, mt_tstmt *init, mt_tstmt *body) {
    for (int i = 0; i < nreads; i++) ns->reads[ns->nreads++] = reads[i];
    for (int i = 0; i < nwrites; i++) ns->writes[ns->nwrites++] = writes[i];
    return mt_nest_build(ns, name, init, body);
}

/* A spatial nest over all of buf storing value(w) (src == NULL: the constant
 * fill) or cast(src[w]). */
static mt_tstmt *whole(mt_arena *a, const char *name, mt_tbuffer *buf, mt_texpr *fill, mt_tbuffer *src) {
    mt_nest ns;
    mt_nest_init(&ns, a);
    mt_texpr *w[MT_MAX_RANK];
    for (int d = 0; d < buf->ndim; d++) w[d] = mt_nest_axis(&ns, buf->shape[d], MT_ITER_SPATIAL);
    mt_tregion rd = src ? mt_point_region(a, src, w) : (mt_tregion){0};
    mt_tregion wr = mt_point_region(a, buf, w);
    mt_texpr *val = src ? mt_te_cast(a, buf->dtype, mt_te_load(a, src, w, buf->ndim)) : fill;
    return build(&ns, name, &rd, src ? 1 : 0, &wr, 1, NULL, mt_ts_store(a, buf, w, buf->ndim, val));
}

mt_tfunc *legalize_matmul(mt_arena *a, const mt_gbinding *b) {
    mt_legalize_ctx c;
    mt_legalize_begin(&c, a, b);
    mt_tbuffer *A = c.in[0], *B = c.in[1], *out = c.out[0];
    int ra = A->ndim, rb = B->ndim, ro = out->ndim;
    bool has_i = ra >= 2, has_j = rb >= 2;
    int nb = ro - (has_i ? 1 : 0) - (has_j ? 1 : 0); /* batch dims of the output */
    mt_dtype odt = out->dtype;
    mt_dtype adt = mt_dtype_is_half(odt) ? MT_FLOAT32 : odt;

    mt_tbuffer *acc = out;
    if (adt != odt) {
        acc = mt_legalize_alloc(&c, "acc", adt, out->shape, ro);
    }

    mt_nest ns;
    mt_nest_init(&ns, a);
    mt_texpr *oidx[MT_MAX_RANK + 2], *aidx[MT_MAX_RANK], *bidx[MT_MAX_RANK];
    int no = 0;
    mt_texpr *bv[MT_MAX_RANK];
    for (int d = 0; d < nb; d++) oidx[no++] = bv[d] = mt_nest_axis(&ns, out->shape[d], MT_ITER_SPATIAL);
    mt_texpr *i = has_i ? mt_nest_axis(&ns, A->shape[ra - 2], MT_ITER_SPATIAL) : NULL;
    mt_texpr *kext = A->shape[ra - 1];
    mt_texpr *k = mt_nest_axis(&ns, kext, MT_ITER_REDUCE);
    mt_texpr *j = has_j ? mt_nest_axis(&ns, B->shape[rb - 1], MT_ITER_SPATIAL) : NULL;
    if (i) oidx[no++] = i;
    if (j) oidx[no++] = j;

    /* operand indices: batch dims aligned at the right of the output's */
    int bat = has_i ? ra - 2 : 0, bbt = has_j ? rb - 2 : 0;
    for (int d = 0; d < bat; d++) {
        int64_t one;
        aidx[d] = mt_te_is_const_int(A->shape[d], &one) && one == 1 ? mt_te_i64(a, 0) : bv[nb - bat + d];
    }
    for (int d = 0; d < bbt; d++) {
        int64_t one;
        bidx[d] = mt_te_is_const_int(B->shape[d], &one) && one == 1 ? mt_te_i64(a, 0) : bv[nb - bbt + d];
    }
    int na = bat, nbb = bbt;
    if (i) aidx[na++] = i;
    aidx[na++] = k;
    bidx[nbb++] = k;
    if (j) bidx[nbb++] = j;

    mt_texpr *prod = mt_te_bin(a, TE_MUL, mt_te_cast(a, adt, mt_te_load(a, A, aidx, na)),
                               mt_te_cast(a, adt, mt_te_load(a, B, bidx, nbb)));
    mt_texpr *zero = mt_dtype_is_float(adt) ? mt_te_float(a, adt, 0.0) : mt_te_int(a, adt, 0);
    mt_tstmt *init = mt_ts_store(a, acc, oidx, no, zero);
    mt_tstmt *body = mt_ts_store(a, acc, oidx, no, mt_te_bin(a, TE_ADD, mt_te_load(a, acc, oidx, no), prod));
    mt_tregion reads[2] = {mt_point_region(a, A, aidx), mt_point_region(a, B, bidx)};
    mt_tregion wr = mt_point_region(a, acc, oidx);

    mt_tstmt *stmts[3];
    int n = 0;
    int64_t kc;
    bool kconst = mt_te_is_const_int(kext, &kc);
    if (!kconst || kc == 0) {
        mt_tstmt *fill = whole(a, "matmul_empty", acc, zero, NULL);
        stmts[n++] = kconst ? fill : mt_ts_if(a, mt_te_bin(a, TE_EQ, kext, mt_te_i64(a, 0)), fill, NULL);
    }
    if (!kconst || kc != 0) stmts[n++] = build(&ns, "matmul", reads, 2, &wr, 1, init, body);
    if (acc != out) stmts[n++] = whole(a, "matmul_out", out, NULL, acc);
    c.f->body = mt_ts_seq(a, stmts, n);
    return c.f;
}
