/*
 * inline_subst.h -- substituting a producer's value into its consumers.
 *
 * Shared by the inline_producers pass (every pure spatial producer of a fused
 * function) and the compute_inline schedule primitive (one named block).
 * Both decide *what* may be inlined themselves; this only does the rewrite.
 */
#ifndef MT_PASSES_TIR_INLINE_SUBST_H
#define MT_PASSES_TIR_INLINE_SUBST_H

#include "tir/tir.h"

/* B[vars] = value: the definition of buffer B by a producer block whose
 * iteration variables are vars (one per dim of B) and whose T.reads are
 * reads (regions over vars). */
typedef struct mt_inline_def {
    mt_tbuffer *buf;
    mt_tvar **vars;
    int nvars;
    mt_texpr *value;
    mt_tregion *reads;
    int nreads;
} mt_inline_def;

/* The definition of b among defs[0..n), or NULL. */
const mt_inline_def *mt_inline_find(const mt_inline_def *defs, int n, const mt_tbuffer *b);

/* s with every load B[i0, ..., ik] of a defined buffer replaced by
 * value[vars := i] (in definition order, so a later definition's value may
 * use an earlier buffer only if it was substituted already), and in every
 * block's T.reads a region of B replaced by the definition's read regions
 * mapped through the same substitution: a dim read at the single point v_k
 * maps to the block's range of dim k, a dim that does not depend on vars is
 * kept, and anything else widens to the whole dim (a safe
 * over-approximation). Duplicate regions are dropped, first one kept.
 * Returns s itself when n == 0 or nothing changed. */
mt_tstmt *mt_inline_apply(mt_arena *a, const mt_inline_def *defs, int n, mt_tstmt *s);

#endif
