/*
 * primitives.h -- schedule primitives on block-form loop functions.
 *
 * A schedule is a sequence of loop transformations on one function. Each
 * primitive names loops by their loop variables (mt_tvar pointers, stable
 * across steps), checks its preconditions, and either replaces s->func by
 * the transformed function (sharing every untouched node) and returns true,
 * or leaves it alone, sets s->error to the reason and returns false, so that
 * a rule can try a step and fall back. Naming a variable that no loop of the
 * function binds (or that two loops bind) is a compiler bug: mt_ice.
 *
 * Every primitive preserves the function's meaning. They rely on what a
 * block promises: its spatial iteration variables index independent
 * instances of the block, its reduce variables a reduction. See
 * docs/schedule.md for each one's exact output.
 *
 *   split(i, F)        for i in range(m, m + E)  ->
 *                        for i_0 in range(ceildiv(E, F)):
 *                          for i_1 in range(min(F, E - i_0 * F)):  i := m + i_0 * F + i_1
 *                      The tail is handled by clamping the inner extent (no
 *                      predicate in the body, no second loop): the last outer
 *                      iteration runs the remainder. When F divides E (both
 *                      constants) the inner extent is plain F.
 *   fuse(i, j)         two perfectly nested loops -> one loop i_j_fused over
 *                      E_i * E_j with i := m_i + f // E_j, j := m_j + f % E_j.
 *   reorder(i, j)      two perfectly nested loops swap places.
 *   parallel(i)        i runs its iterations on threads (MT_FOR_PARALLEL).
 *   vectorize(i)       i is an innermost loop the vectorizer must take.
 *   unroll(i)          i is unrolled (fully when its extent is a constant).
 */
#ifndef MT_SCHEDULE_PRIMITIVES_H
#define MT_SCHEDULE_PRIMITIVES_H

#include <stdbool.h>

#include "tir/tir.h"

typedef struct mt_sched {
    mt_arena *arena;   /* new nodes */
    mt_tfunc *func;    /* the function as scheduled so far */
    const char *error; /* why the last primitive that failed refused (arena text) */
} mt_sched;

void mt_sched_init(mt_sched *s, mt_arena *a, mt_tfunc *f);

/* The loop statement over `loop` in s->func (mt_ice when there is none). */
const mt_tstmt *mt_sched_get_loop(const mt_sched *s, const mt_tvar *loop);

/* factor: an integer expression, a positive constant or an expression the
 * caller knows to be positive at run time (e.g. T.max(1, ...)); it must not
 * use the loop's own variable. On success *outer and *inner (either may be
 * NULL) are the new loops' variables. Preconditions: the loop is serial. */
bool mt_sched_split(mt_sched *s, mt_tvar *loop, mt_texpr *factor, mt_tvar **outer,
                    mt_tvar **inner);

/* Preconditions: inner is exactly outer's body, both serial, inner's bounds
 * do not use outer's variable. *fused (may be NULL) gets the new variable. */
bool mt_sched_fuse(mt_sched *s, mt_tvar *outer, mt_tvar *inner, mt_tvar **fused);

/* Preconditions: inner is exactly outer's body, inner's bounds do not use
 * outer's variable. Loop kinds travel with their loops. Swapping two reduce
 * loops changes the order of a floating-point reduction. */
bool mt_sched_reorder(mt_sched *s, mt_tvar *outer, mt_tvar *inner);

/* Preconditions: the loop is serial; every store under it is inside a block;
 * no block under it binds a reduce variable to an expression of the loop's
 * variable (its iterations would update the same element). */
bool mt_sched_parallel(mt_sched *s, mt_tvar *loop);

/* Preconditions: the loop is serial and innermost (no loop in its body), and
 * binds no reduce variable (as for parallel). */
bool mt_sched_vectorize(mt_sched *s, mt_tvar *loop);

/* Preconditions: the loop is serial. */
bool mt_sched_unroll(mt_sched *s, mt_tvar *loop);

#endif
