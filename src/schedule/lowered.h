/*
 * lowered.h -- building the lowered form (flat buffers, vector accesses)
 * directly from a schedule rule.
 *
 * A rule that emits lowered TIR itself (rule_reduce.c, the matmul rules) needs index
 * arithmetic that folds constants and keeps a T.Ramp outermost
 * (x + T.Ramp(b, s, n) is T.Ramp(x + b, s, n)), so that an access whose last
 * index walks the vectorized variable is one unit-stride vector access after
 * flattening, and a table from each n-d buffer to its flat one.
 */
#ifndef MT_SCHEDULE_LOWERED_H
#define MT_SCHEDULE_LOWERED_H

#include "support/common.h"
#include "tir/arith.h"
#include "tir/tir.h"

typedef struct mt_lw_fbuf {
    mt_tbuffer *old, *flat;
    mt_texpr *stride[MT_MAX_RANK];
} mt_lw_fbuf;

typedef struct mt_lw {
    mt_arena *a;
    MT_VEC(mt_lw_fbuf) fb; /* n-d buffer -> flat buffer */
} mt_lw;

mt_texpr *mt_lw_i(mt_lw *c, int64_t v);                 /* int64 immediate */
mt_texpr *mt_lw_add(mt_lw *c, mt_texpr *x, mt_texpr *y); /* folding, ramp outermost */
mt_texpr *mt_lw_mul(mt_lw *c, mt_texpr *x, mt_texpr *y);
mt_texpr *mt_lw_sub(mt_lw *c, mt_texpr *x, mt_texpr *y);
mt_texpr *mt_lw_norm(mt_lw *c, mt_texpr *e); /* an index with the ramp rules */
mt_texpr *mt_lw_ramp(mt_lw *c, mt_texpr *base, int lanes); /* base itself if lanes == 1 */

/* The flat buffer of b (b itself when one-dimensional), made on first use. */
mt_lw_fbuf *mt_lw_flat(mt_lw *c, mt_tbuffer *b);
/* The flat offset of b[idx...] (n == b->ndim). */
mt_texpr *mt_lw_index(mt_lw *c, mt_tbuffer *b, mt_texpr *const *idx, int n);
mt_texpr *mt_lw_load(mt_lw *c, mt_tbuffer *b, mt_texpr *const *idx, int n);
mt_tstmt *mt_lw_store(mt_lw *c, mt_tbuffer *b, mt_texpr *const *idx, int n, mt_texpr *v);

#endif
