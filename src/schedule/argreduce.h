/*
 * argreduce.h -- argmax / argmin over the last axis: what the CPU rule
 * (rule_argreduce.c) and the GPU rule (gpu_argreduce.c) share: the match
 * of what legalize_reduce.c makes of argmax(x, axis=-1) (keepdims or not,
 * x of any rank, an elementwise producer inlined into x's load): one nest
 * over x's dims, the last one reduced, around one block
 *
 *     with T.init(): best[o..] = I; out[o..] = 0
 *     if E > best[o..] or E != E and best[o..] == best[o..]:   (argmin: <)
 *         best[o..] = E; out[o..] = r
 *
 * (with, for a symbolic row length, a fill of out with 0 for empty rows in
 * front: every row's result is 0 then anyway); the value E at a row and
 * column; and the two comparisons that keep the serial scan's answer.
 *
 * Semantics (NumPy's): the first index of the largest value, or of the
 * first NaN when there is one. A scan of some of the elements in
 * increasing order keeps the first of them by `better`. Two partial
 * results over disjoint sets of indices meet by `takes`: the other pair
 * wins when its value is better (greater; argmin: less), or NaN while this
 * one's is not, or when the values tie (equal, or both NaN) and its index
 * is smaller. That is associative and commutative, so any tree of partial
 * scans gives the serial scan's answer. A partial scan of no element
 * holds (I, 0), I the op's identity (-inf or the dtype's least): it loses
 * to any element above I, and when every element is I the answer is
 * index 0, as the serial scan's.
 */
#ifndef MT_SCHEDULE_ARGREDUCE_H
#define MT_SCHEDULE_ARGREDUCE_H

#include "schedule/rule_reduce.h"

typedef struct mt_argred {
    rr *c;                 /* c->f, c->lw, c->ns, c->O, c->N; c->oval while generating */
    bool is_max;           /* argmax (else argmin) */
    mt_dtype dt;           /* the values' dtype */
    mt_texpr *E;           /* the value at (o.., r), block form */
    mt_tvar *iv[MT_MAX_RANK + 1]; /* the block's iteration variables (last: r) */
    mt_texpr *ident;       /* I */
    mt_tbuffer *out;       /* the int64 result */
    int out_nd;            /* its dims: ns, or ns + 1 (keepdims) */
} mt_argred;

/* Fills m (and m->c's ns, O, N) from m->c->f; false when f is not exactly
 * that (or E reads something f computes, or the values' dtype is not one
 * of float16, bfloat16, float32, float64, int32, int64). */
bool mt_argred_match(mt_argred *m);

/* E at (c->oval, j) with flat loads; j a scalar or a T.Ramp (a vector). */
mt_texpr *mt_argred_value(mt_argred *m, mt_texpr *j);

/* E of the rows first .. first + lanes - 1 at column j (a scalar), row
 * first + l in lane l, with flat loads: the loads of (row, column) are
 * T.Ramps down the column. NULL when the function has more than one outer
 * dim or E uses the row otherwise. */
mt_texpr *mt_argred_value_rows(mt_argred *m, mt_texpr *first, int lanes, mt_texpr *j);

/* x better than y: strictly greater (argmin: less), or NaN over a number
 * (as not(x <= y) and y == y: two compares). */
mt_texpr *mt_argred_better(mt_argred *m, mt_texpr *x, mt_texpr *y);

/* (xv, xi) takes the place of (yv, yi): better, or a tie at a smaller index. */
mt_texpr *mt_argred_takes(mt_argred *m, mt_texpr *xv, mt_texpr *xi, mt_texpr *yv, mt_texpr *yi);

#endif
