/*
 * combiner.h -- the update of a reduction, B[idx] = F(B[idx], e), read
 * as F and e: what rfactor splits into partial results, and what a
 * vectorized reduction loop folds across lanes (schedule/primitives_rfactor.c,
 * passes/tir/vectorize.c).
 *
 * F is one of acc + e (either order), T.max / T.min (either order), or
 * legalize's NaN-propagating T.Select(e > acc or e != e, e, acc), without
 * the NaN test too, and their `<` forms: each associative and commutative
 * (the sum up to rounding), so partial results may be combined in any
 * order.
 */
#ifndef MT_TIR_COMBINER_H
#define MT_TIR_COMBINER_H

#include "tir/tir.h"

typedef struct mt_tcombiner {
    mt_tvar *A, *X;  /* the template's accumulator and element */
    mt_texpr *tmpl;  /* F(A, X) */
    mt_texpr *e;     /* e, as the store has it */
    bool sum;        /* F is acc + e (its identity 0) */
    mt_texpr_kind op; /* what F computes: TE_ADD, TE_MAX or TE_MIN (a select by its comparison) */
} mt_tcombiner;

/* Whether st's value is F(st->buf[st->idx], e) for one of the F above (a
 * scalar of the buffer's dtype); c then F and e. e may still read the
 * buffer: callers that need it not to check. */
bool mt_tcombiner_match(mt_arena *a, const mt_tstmt *st, mt_tcombiner *c);

/* F(acc, e). */
mt_texpr *mt_tcombiner_apply(mt_arena *a, const mt_tcombiner *c, mt_texpr *acc, mt_texpr *e);

#endif
