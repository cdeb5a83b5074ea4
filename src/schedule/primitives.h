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
 *   bind(i, tag, T)    i runs on GPU blocks or threads (see mt_sched_bind).
 *
 * Block primitives (primitives_block.c, primitives_at.c,
 * primitives_cache.c, primitives_reduction.c, primitives_rfactor.c) name a
 * block by its name (a refusal when no block or several blocks carry it):
 *
 *   compute_inline(b)  b's value is substituted into every load of the buffer
 *                      it writes; b, its emptied loops and the allocation go.
 *   reverse_compute_inline(c)  c (Y[..] = g(X[v])) is folded into the
 *                      producer of X, which stores Y directly; c, its
 *                      emptied loops and X's allocation go.
 *   compute_at(b, i)   b's loop nest moves to the start of loop i's body and
 *                      computes only the region of its buffer that one
 *                      iteration of i reads.
 *   reverse_compute_at(c, i)  c's loop nest moves to the end of loop i's
 *                      body (i a loop of c's producer) and computes only
 *                      what reads the region one iteration of i wrote.
 *   cache_read(b, X, scope)  a new block copies X into X_<scope>, which b
 *                      reads instead (placed first, or after X's writers).
 *   cache_write(b, local)  a reduction accumulates in a local scalar and
 *                      writes its buffer once after its reduce loops.
 *   cache_write(b, scope)  any other block writes B_<scope>, which a new
 *                      block copies to B right after b's loop nest.
 *   use_fma(b)         every float32/float64 x + a * b in b's body becomes
 *                      T.fma(a, b, x) (rounded once; primitives_fma.c).
 *   transform_layout(b, X, map)  X (allocated by the function) is stored
 *                      at map(index) instead of index (primitives_layout.c).
 *   decompose_reduction(b, i)  b's init becomes a block b_init in a copy of
 *                      the spatial loops, placed before loop i; b becomes
 *                      b_update, without init.
 *   New buffers (X_<scope>, B_<scope>, B_rf) never take a name the function
 *                      already has: B_rf, then B_rf_1, ... (as blocks).
 *   rfactor(b, loops)  b computes partial results into a new buffer B_rf, one
 *                      per iteration of the named loops (which become spatial
 *                      for it), filled with the init first; a new block b
 *                      after the nest combines them into B.
 */
#ifndef MT_SCHEDULE_PRIMITIVES_H
#define MT_SCHEDULE_PRIMITIVES_H

#include <stdbool.h>

#include "tir/tir.h"

typedef struct mt_sched {
    mt_arena *arena;   /* new nodes */
    mt_tfunc *func;    /* the function as scheduled so far */
    const char *error; /* why the last primitive that failed refused (arena text) */
    const char *made;  /* the block the last primitive made (cache_read/_write's copy,
                        * decompose_reduction's init, rfactor's partial block), or NULL */
    const char *renamed; /* the new name of the block it rewrote (decompose_reduction's
                          * update), or NULL. New block names are never a name the
                          * function already has: b_init, then b_init_1, ... */
    bool user;         /* a user's schedule (mt_usched_init): parallel and bind also
                        * refuse what primitives_race.c cannot show race-free; the
                        * default rules make only loops they know are */
} mt_sched;

void mt_sched_init(mt_sched *s, mt_arena *a, mt_tfunc *f);

/* How many loops of s->func bind `loop` (user schedules check a handle
 * with it: 1 is a loop that still exists). */
int mt_sched_loop_count(const mt_sched *s, const mt_tvar *loop);

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

/* Are loop's iterations independent (the condition parallel and bind add
 * to a serial loop; false with the reason in s->error)? Changes no loop. */
bool mt_sched_independent(mt_sched *s, mt_tvar *loop);

/* Preconditions: the loop is serial; every store under it is inside a block;
 * no block under it binds a reduce variable to an expression of the loop's
 * variable (its iterations would update the same element). */
bool mt_sched_parallel(mt_sched *s, mt_tvar *loop);

/* Preconditions: the loop is serial and innermost (no loop in its body), and
 * binds no reduce variable (as for parallel). */
bool mt_sched_vectorize(mt_sched *s, mt_tvar *loop);

/* Preconditions: the loop is serial. */
bool mt_sched_unroll(mt_sched *s, mt_tvar *loop);

/* Binds a loop to a GPU index: tag "blockIdx.x" .. "blockIdx.z" (every
 * iteration a block: the extent becomes the launch's grid dim) or
 * "threadIdx.x" .. "threadIdx.z" (every iteration a thread of the block).
 * A thread loop runs exactly `threads` iterations: one of a smaller extent
 * (split's clamped tail, T.min(F, ..) with F <= threads) becomes
 * `for v in T.thread_binding(threads): if v < extent: body`. Preconditions:
 * the loop is serial, starts at 0, and is independent (as for parallel). */
bool mt_sched_bind(mt_sched *s, mt_tvar *loop, const char *tag, int64_t threads);

/* ---- block primitives ---------------------------------------------------- */

/* Preconditions: the block's body is a single store B[v0, ..., vk] = expr
 * with exactly its iteration variables as indices, each bound to a loop
 * variable; no reduce variable, no init, no predicate; B is allocated by the
 * function (not a parameter or output), has no other writer and is not read
 * before the block nor by expr; expr uses only the iteration variables and
 * function-level variables, and no buffer it reads is written after the
 * block or in a loop around it. */
bool mt_sched_compute_inline(mt_sched *s, const char *block);

/* use_fma(block): needs at least one float32 or float64 x + a * b (either
 * order) in the block's body; its init is left as it is. */
bool mt_sched_use_fma(mt_sched *s, const char *block);

/* (primitives_block.c) The consumer c = `block`: no reduce variable, init,
 * predicate or allocation; its body is a single store Y[h] = g, with h and
 * g using only c's iteration variables and function-level variables, g not
 * reading Y; among the buffers g reads exactly one, X, is allocated by the
 * function, read at one index that is c's iteration variables in some
 * order, each over X's whole dim (a bijection onto X). The producer p:
 * X's only writer (a block), before c, with no reduce variable, init or
 * predicate, its body a single store X[idx] = e with idx likewise a
 * bijection onto X; X is read by c only. Between p and c (after p and not
 * after c in program order, or inside a loop around p) nothing writes a
 * buffer g reads, nor reads or writes Y. Then p stores Y[h[v := idx]] =
 * g[v := idx, X[..] := e] (v: c's variables at X's dims), c and its
 * emptied loops go, and so does X's allocation; p keeps its name. */
bool mt_sched_reverse_compute_inline(mt_sched *s, const char *block);

/* Preconditions: the block writes one buffer X allocated by the function
 * with one store (and its init), indexed per dim by a spatial iteration
 * variable bound to its own loop (min 0, extent the variable's) or by a
 * constant; it is alone in a perfect loop nest that is an item of a sequence
 * and binds only that nest's loops; X has no other writer and exactly one
 * reading block C, with no predicate, reading X at one index; the loop is
 * serial or unrolled, an ancestor of C, not of the block, and inside a later
 * item of the same sequence; nothing from the block's nest up to that item
 * writes a buffer the block reads; each dim of C's index, in loop
 * variables, is free of the loops between the loop and C (a point) or is
 * `base + j` for one such loop j with bounds free of them (a range). */
bool mt_sched_compute_at(mt_sched *s, const char *block, mt_tvar *loop);

/* (primitives_at.c) The mirror of compute_at: `block` (the consumer c)
 * moves to the end of the loop's body. Preconditions: c's body (and init)
 * is a single store to one element; c is not under the loop; of the
 * buffers c's body reads exactly one, X, is written under the loop, by one
 * block p (the producer), X's only writer, whose body (and init) is a
 * single store to X, without predicate, and no loop from the body down to
 * the loop (inclusive) on p's path binds a reduce variable of p (X's
 * region is final at the end of each iteration); c reads X at one index,
 * each dim a constant or a spatial iteration variable bound to a loop of
 * c's own nest over [0, its extent), that loop binding no other variable;
 * c is alone in a perfect, rectangular loop nest that is an item of a
 * sequence, bound to its own loops only, and the loop is serial or
 * unrolled and lies inside an earlier item of the same sequence; nothing
 * from that item up to c's nest writes a buffer c reads (but X) or reads
 * or writes the buffer c writes; each dim of p's index of X, in loop
 * variables, is free of the loops between the loop and p (a point) or is
 * `base + j` for one such loop j with bounds free of them (a range). c's
 * loops along X's dims then run over that region; its other loops (over
 * dims X does not have, reduce loops) stay whole. */
bool mt_sched_reverse_compute_at(mt_sched *s, const char *block, mt_tvar *loop);

/* (primitives_cache.c) A copy of `buffer` (a buffer the block reads, by
 * name) into a new function allocation <buffer>_<scope> of its shape and
 * dtype, made by a new block of that name (or with _1, _2, .. when a block
 * has it) in loops ax0, .. over the whole shape; the block reads the cache
 * instead (body, init, predicate, T.reads). The copy is an item of the
 * top-level sequence: right after the last item that writes the buffer,
 * or first when none does. Preconditions: every statement writing the
 * buffer lies in a top-level item before the block's. *cache_block (may be
 * NULL) gets the copy block's name; compute_at moves it under a loop. */
bool mt_sched_cache_read(mt_sched *s, const char *block, const char *buffer, mt_scope scope,
                         const char **cache_block);

/* (primitives_reduction.c, primitives_cache.c) *cache_block (may be NULL)
 * gets the new block's name.
 * A block with a reduce variable: local accumulation, scope must be
 * MT_SCOPE_LOCAL; without an init (rfactor's partial block) the
 * accumulator starts from B[idx]. Preconditions: body and init (if any)
 * are single stores to the same element B[idx] of one buffer, idx free of
 * reduce variables, the body reading B only at idx and the init not at
 * all; no predicate; the loops binding its reduce variables are the
 * innermost loops around it, perfectly nested, and bind no spatial
 * variable. The new block is <block>_write_back.
 * Any other block: it stores a new function allocation <B>_<scope> of B's
 * shape instead of B, and a new block <B>_<scope> (or with _1, ..) in loops
 * ax0, .. copies all of it to B, as the top-level item right after the
 * block's. Preconditions: no init, no predicate; the body is a single
 * store B[idx] = e with idx the block's iteration variables in some order,
 * each over B's whole dim (the block writes all of B); e does not read B;
 * B has no other writer, and nothing else in the block's top-level item
 * reads it. reverse_compute_at moves the copy under a loop. */
bool mt_sched_cache_write(mt_sched *s, const char *block, mt_scope scope, const char **cache_block);

/* Preconditions: the block has an init and a reduce variable, no
 * predicate; its init uses no reduce variable; the loop is an ancestor of
 * the block and every loop binding a reduce variable is the loop or below
 * it; no loop below it binds both spatial and reduce variables, and the
 * bounds of the spatial ones do not use a reduce loop's variable. */
bool mt_sched_decompose_reduction(mt_sched *s, const char *block, mt_tvar *loop);

/* (primitives_rfactor.c) Preconditions: the block is a reduction (a reduce
 * variable and an init), without predicate or allocations, alone in a
 * perfect loop nest that is the function's body or an item of its
 * top-level sequence; body and init are single stores to the same element
 * B[idx], idx free of reduce variables; the body is B[idx] = F(B[idx], e)
 * with F one of +, T.max, T.min, T.Select(e > acc [or e != e], e, acc) (or
 * `<`), e not reading B, and for + the init is 0; the init reads no B and
 * uses no reduce variable; each spatial variable is bound to a loop over
 * [0, its extent); the named loops (1 to 64, distinct) are serial
 * ancestors of the block binding reduce variables; every loop binding a
 * reduce variable starts at 0, binds no spatial variable, and has an
 * extent free of the nest's loops or clamped T.min(F, ..) by such an F. */
bool mt_sched_rfactor(mt_sched *s, const char *block, mt_tvar *const *loops, int nloops);

/* An index map `lambda p0, .., pn-1: (o0, .., om-1)`: each output an int64
 * expression of the parameters (TIR variables the map owns). */
typedef struct mt_index_map {
    mt_tvar **params;
    int nparams;
    mt_texpr **outs;
    int nouts;
} mt_index_map;

/* (primitives_layout.c) The buffer named `buffer` that the block reads or
 * writes takes the layout of the map: an element that was at index x is at
 * map(x), in a buffer of the map's image's extents (the smallest box
 * holding it). Every load and store of the buffer in the function is
 * rewritten (indices substituted into the map's outputs) and every block
 * region of it covers the new buffer whole. Preconditions: the buffer is
 * one the function allocates (f->allocs), of constant shape; the map has
 * one parameter per dim; each output is built from integers, one
 * parameter, +, -, *, unary - and // or % by a positive constant; every
 * parameter of a dim over 1 is used; over each dim (at most 2^20
 * elements) the outputs using it are >= 0 and take distinct values
 * (checked by enumerating the dim: the map is one-to-one). */
bool mt_sched_transform_layout(mt_sched *s, const char *block, const char *buffer, const mt_index_map *map);

/* The map as a schedule writes it: "lambda k, j: (j // 16, k, j % 16)". */
const char *mt_index_map_text(mt_arena *a, const mt_index_map *m);

/* ---- for primitive implementations -------------------------------------- */

/* Sets s->error to the formatted reason and returns false. */
bool mt_sched_refuse(mt_sched *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s->func with statement old (found by pointer) replaced by repl; only its
 * ancestors are rebuilt. */
void mt_sched_replace(mt_sched *s, const mt_tstmt *old, mt_tstmt *repl);

/* ---- rules made of primitives ------------------------------------------- */

/* The column-reduction rule (rule_colreduce.c) on the loop nest `nest`, a
 * top-level statement of s->func: true when it matched and scheduled it
 * (all its steps applied), false with s unchanged otherwise. */
bool mt_schedule_colreduce_nest(mt_sched *s, const mt_tstmt *nest);

/* The full-reduction rule (rule_fullreduce.c): reductions ending in a reduce
 * loop (over every axis, over several axes with the last), with partial
 * results per chunk and lane (rfactor); the same contract. */
bool mt_schedule_fullreduce_nest(mt_sched *s, const mt_tstmt *nest);

#endif
