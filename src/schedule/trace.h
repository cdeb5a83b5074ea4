/*
 * trace.h -- what a schedule did, kept on the function it made.
 *
 * Every primitive of primitives.h that succeeds appends a step to the
 * trace of the function it returns (mt_tfunc.trace, a list from the
 * newest step back): its name, its arguments, what it made, and the
 * function before it (from which a printer names the loops it used). A
 * rule made of primitives therefore leaves the trace of its choices on
 * the function, and trace_text.c prints it as a `@T.schedule` that
 * replays them (the "schedule" dump). A rule that also rewrites loops
 * itself marks the trace (mt_sched_trace_note), and the printed schedule
 * says what it cannot replay.
 *
 * The primitives' implementations are the *_do functions; the public
 * mt_sched_* of primitives.h are primitives_trace.c's wrappers that record.
 */
#ifndef MT_SCHEDULE_TRACE_H
#define MT_SCHEDULE_TRACE_H

#include "schedule/primitives.h"

#define MT_STEP_MAX_LOOPS 64

typedef struct mt_sched_step mt_sched_step;
struct mt_sched_step {
    const mt_sched_step *prev; /* the step before, or NULL */
    const char *prim;          /* "split", ..., or NULL for a note */
    const char *note;          /* a rewrite outside the primitives (not replayable) */
    const mt_tfunc *before;    /* the function the step was applied to */
    mt_tvar *loops[MT_STEP_MAX_LOOPS]; /* loop arguments */
    int nloops;
    const char *block;         /* block argument */
    const char *str;           /* bind's tag; cache_read's buffer; decompose_reduction's update block */
    mt_scope scope;            /* cache_read, cache_write */
    mt_texpr *factor;          /* split */
    int64_t threads;           /* bind */
    mt_tvar *outs[2];          /* split: outer, inner; fuse: fused */
    int nouts;
    const char *made;          /* a block the step made (cache, init, rf) */
    const mt_index_map *map;   /* transform_layout (str: the buffer) */
};

/* The step list of f oldest first into out (at most max); the count. */
int mt_sched_trace_steps(const mt_tfunc *f, const mt_sched_step **out, int max);

/* Marks s->func's trace: a rule rewrote loops outside the primitives. */
void mt_sched_trace_note(mt_sched *s, const char *what);

/* f's trace as a @T.schedule function for f, or NULL when f has none.
 * *replayable (may be NULL) says whether every step could be written. */
const char *mt_sched_trace_text(mt_arena *a, const mt_tfunc *f, bool *replayable);

/* ---- the implementations (primitives*.c) --------------------------------- */
bool mt_sched_split_do(mt_sched *s, mt_tvar *loop, mt_texpr *factor, mt_tvar **outer, mt_tvar **inner);
bool mt_sched_fuse_do(mt_sched *s, mt_tvar *outer, mt_tvar *inner, mt_tvar **fused);
bool mt_sched_reorder_do(mt_sched *s, mt_tvar *outer, mt_tvar *inner);
bool mt_sched_parallel_do(mt_sched *s, mt_tvar *loop);
bool mt_sched_vectorize_do(mt_sched *s, mt_tvar *loop);
bool mt_sched_unroll_do(mt_sched *s, mt_tvar *loop);
bool mt_sched_bind_do(mt_sched *s, mt_tvar *loop, const char *tag, int64_t threads);
bool mt_sched_compute_inline_do(mt_sched *s, const char *block);
bool mt_sched_use_fma_do(mt_sched *s, const char *block);
bool mt_sched_compute_at_do(mt_sched *s, const char *block, mt_tvar *loop);
bool mt_sched_reverse_compute_inline_do(mt_sched *s, const char *block);
bool mt_sched_reverse_compute_at_do(mt_sched *s, const char *block, mt_tvar *loop);
bool mt_sched_cache_read_do(mt_sched *s, const char *block, const char *buffer, mt_scope scope,
                            const char **cache_block);
bool mt_sched_cache_write_do(mt_sched *s, const char *block, mt_scope scope, const char **cache_block);
bool mt_sched_decompose_reduction_do(mt_sched *s, const char *block, mt_tvar *loop);
bool mt_sched_transform_layout_do(mt_sched *s, const char *block, const char *buffer, const mt_index_map *map);
bool mt_sched_rfactor_do(mt_sched *s, const char *block, mt_tvar *const *loops, int nloops);

#endif
