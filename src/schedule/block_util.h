/*
 * block_util.h -- what the block schedule primitives share
 * (primitives_block.c: compute_inline, reverse_compute_inline;
 * primitives_at.c: compute_at, reverse_compute_at; primitives_cache.c:
 * cache_read, cache_write; primitives_reduction.c: cache_write's local
 * accumulation, decompose_reduction; primitives_rfactor.c) and the
 * reduction rules (the contiguity check): finding a named block and the path of
 * statements to it, variable and load queries, and builders. Internal to
 * src/schedule.
 */
#ifndef MT_SCHEDULE_BLOCK_UTIL_H
#define MT_SCHEDULE_BLOCK_UTIL_H

#include "schedule/primitives.h"
#include "tir/arith.h"

typedef MT_VEC(const mt_tstmt *) mt_blk_stmts;
typedef MT_VEC(const mt_texpr *) mt_blk_exprs;
typedef MT_VEC(mt_tbuffer *) mt_blk_bufs;

/* A block's name for messages ("?" for none). */
const char *mt_blk_bname(const mt_tstmt *b);


/* b is one of f->allocs. */
bool mt_blk_is_alloc(const mt_tfunc *f, const mt_tbuffer *b);

/* b is a buffer parameter of f or one of f->allocs: in scope everywhere
 * in f (a copy nest at f's top level may name it). */
bool mt_blk_function_wide(const mt_tfunc *f, const mt_tbuffer *b);

/* b is in v. */
bool mt_blk_buf_in(const mt_blk_bufs *v, const mt_tbuffer *b);

/* The block named `name` in s->func and the statements from the body down
 * to it (path->data[len - 1] is the block); refuses (prim: no block named
 * .. / N blocks are named ..) unless exactly one block has the name. */
bool mt_blk_find_block(mt_sched *s, const char *prim, const char *name, mt_blk_stmts *path);

/* The innermost `want` loops around block `name`, outermost first, into
 * out (for a rule's trace: the loops a primitive just made); false when
 * the block has fewer (or does not exist: prim's refusal). */
bool mt_blk_last_loops(mt_sched *s, const char *prim, const char *name, mt_tvar **out, int want);

/* The first loop of path[from ..] (the block b last) that binds none of b's
 * variables, or NULL. Around a reduction such a loop repeats it: the init
 * (run where the reduce loops start) starts it over at each iteration, so
 * only the last counts -- what decompose_reduction, rfactor and reorder
 * would change. */
const mt_tstmt *mt_blk_unbinding_loop(const mt_blk_stmts *path, int from, const mt_tstmt *b);

/* Do L's iterations touch disjoint elements of everything written under it
 * but the buffers in excused (NULL: none) (primitives_race.c)? Refuses
 * (prim: ...) when that is not shown. tag: the thread tag L is being
 * bound to (NULL: L's own, if any; a parallel loop has none). */
bool mt_sched_iterations_disjoint(mt_sched *s, const char *prim, const mt_tstmt *L, const char *tag,
                                  const mt_blk_bufs *excused);

/* The buffers written under L that mt_sched_iterations_disjoint cannot
 * show split among its iterations. */
mt_blk_bufs mt_sched_unshown_buffers(mt_sched *s, const mt_tstmt *L);

/* The statements under root (root too) for which want is true, in print
 * order; the blocks under root. */
mt_blk_stmts mt_blk_stmts_under(mt_arena *a, const mt_tstmt *root, bool (*want)(const mt_tstmt *));
mt_blk_stmts mt_blk_blocks_under(mt_arena *a, const mt_tstmt *root);

/* The first reduce variable of block b, or NULL. */
mt_tvar *mt_blk_reduce_iter(const mt_tstmt *b);

/* The statements from root down to want (empty when want is not under root). */
mt_blk_stmts mt_blk_path_to(mt_arena *a, const mt_tstmt *root, const mt_tstmt *want);

/* The position of s in p, or -1. */
int mt_blk_index_in(const mt_blk_stmts *p, const mt_tstmt *s);

/* The first let of path[from .. len - 1) whose variable b's bindings use,
 * or NULL: such a block's loops cannot be read from its bindings. */
const mt_tstmt *mt_blk_let_binding(const mt_blk_stmts *path, int from, const mt_tstmt *b);

/* The first of vars that e uses, or NULL. */
const mt_tvar *mt_blk_first_use(const mt_texpr *e, mt_tvar *const *vars, int n);

/* The first of vars that statement st uses, or NULL. */
const mt_tvar *mt_blk_stmt_use(const mt_tstmt *st, mt_tvar *const *vars, int n);

/* The first variable of e that is neither one of ok nor a sym var or scalar
 * param of f, or NULL. */
const mt_tvar *mt_blk_foreign_var(const mt_texpr *e, mt_tvar *const *ok, int nok,
                                  const mt_tfunc *f);

/* The variables of a block's iterators of one kind. */
int mt_blk_iter_vars(mt_arena *a, const mt_tstmt *b, mt_iter_kind kind, mt_tvar ***out);

/* Does loop l's variable occur in an iter value of kind `kind` of b? */
bool mt_blk_loop_binds(const mt_tstmt *b, const mt_tstmt *l, mt_iter_kind kind);

/* The loads of b (of any buffer when b is NULL) in st and e (either may
 * be NULL), in visiting order; a T.prefetch's element is an address, not a
 * load (the loads in its indices are). */
mt_blk_exprs mt_blk_loads_in(mt_arena *a, const mt_tstmt *st, const mt_texpr *e,
                             const mt_tbuffer *b);

/* idx (b's index of X) is a bijection onto X: each dim a different
 * iteration variable of b over the whole dim (its extent X's dim), every
 * variable of b used. */
bool mt_blk_bijection(const mt_tstmt *b, const mt_tbuffer *X, mt_texpr *const *idx);

/* Indices x and y (n each) are structurally equal. */
bool mt_blk_same_index(mt_texpr *const *x, mt_texpr *const *y, int n);

/* s without statement t; a loop, let, allocation, block or if left with
 * nothing to run goes too. NULL when nothing is left. */
mt_tstmt *mt_blk_drop(mt_arena *a, mt_tstmt *s, const mt_tstmt *t);

/* x followed by the statements of y (flattening y when it is a sequence). */
mt_tstmt *mt_blk_prepend(mt_arena *a, mt_tstmt *x, mt_tstmt *y);

/* The single point buf[idx]. */
mt_tregion mt_blk_point_region(mt_arena *a, mt_tbuffer *buf, mt_texpr *const *idx);

/* base, or base_1, base_2, ...: the first name no block of f carries. */
const char *mt_blk_fresh_block_name(mt_arena *a, const mt_tfunc *f, const char *base);

/* base, or base_1, base_2, ...: the first name that no buffer and no
 * variable of f carries (they share one namespace when printed), for a
 * buffer a primitive adds (cache_read/_write's <buf>_<scope>, rfactor's
 * <buf>_rf). */
const char *mt_blk_fresh_buffer_name(mt_arena *a, const mt_tfunc *f, const char *base);

/* Fresh variables named like vars[0..n). */
mt_tvar **mt_blk_fresh_vars(mt_arena *a, mt_tvar *const *vars, int n, const char *suffix);

/* TE_VAR expressions of vars[0..n). */
mt_texpr **mt_blk_var_exprs(mt_arena *a, mt_tvar *const *vars, int n);

/* A block named `name` with b's spatial iterators under new variables
 * (nsv, in order), bound to b's values with vars[i] := vals[i]. Regions
 * and body are the caller's. */
mt_tstmt *mt_blk_spatial_block(mt_arena *a, const char *name, const mt_tstmt *b,
                               mt_tvar *const *nsv, mt_tvar *const *vars, mt_texpr *const *vals,
                               int n);

/* s->func becomes a copy of itself with this body (NULL: empty). */
void mt_blk_set_func_body(mt_sched *s, mt_tstmt *body);

/* ---- accesses in program order ------------------------------------------ */

/* One store or load of a function, relative to a target statement. */
typedef struct mt_blk_access {
    const mt_tstmt *block; /* innermost block around it (NULL: none) */
    mt_tbuffer *buf;
    bool write;
    bool inside; /* inside the target */
    bool after;  /* after the target in program order */
    bool around; /* inside a loop around the target */
} mt_blk_access;

typedef MT_VEC(mt_blk_access) mt_blk_accesses;

/* Every store and load under root, in program order, relative to target
 * (NULL: none) whose path from root is anc (NULL: none). Two scans of one
 * root list the same accesses in the same order. */
mt_blk_accesses mt_blk_scan(mt_arena *a, const mt_tstmt *root, const mt_tstmt *target,
                            const mt_blk_stmts *anc);

/* cache_write of a block without reduce variable (primitives_cache.c; the
 * entry is mt_sched_cache_write). */
bool mt_blk_cache_write_copy(mt_sched *s, const char *name, mt_scope scope, const char **cache_block);

/* ---- for the reduction rules -------------------------------------------- */

/* Do b's accesses (its store, the loads of its value) walk its iteration
 * variables [from, niters) contiguously? Each access either uses none of
 * them, or has them as its last indices, in order, exactly (a plain
 * variable each), no other index using them, and every dim after the first
 * of those a constant equal to its variable's (constant) extent: then the
 * variables fused are one flat index walking the buffer with stride 1. False
 * when b's body is not a single store. In block terms: the loops the
 * variables are bound to do not matter. */
bool mt_blk_contiguous_suffix(const mt_tstmt *b, int from);

#endif
