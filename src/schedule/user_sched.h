/*
 * user_sched.h -- schedules written by users: the primitives behind handles.
 *
 * A user schedule (`@T.schedule` in a source, schedule/from_ast.c; or the C
 * API's mt_sch_* calls from a compile callback, api_schedule.c) names
 * blocks and loops by handles, small integers this object hands out:
 *
 *   block handle  the name of a block, followed when a primitive renames it
 *                 (decompose_reduction makes "C" into "C_update": every
 *                 handle of "C" then names "C_update");
 *   loop handle   a loop variable; a primitive that replaces the loop (split,
 *                 fuse) leaves the handle naming a loop that no longer
 *                 exists, and using it is an error that says which step
 *                 replaced it.
 *
 * Every operation checks its arguments, runs the primitive
 * (schedule/primitives.h) and on success appends the step to the trace, the
 * schedule as `@T.schedule` text that replays it (`mtc --emit schedule`).
 * On failure it returns false with the reason in u->error ("parallel: loop
 * 'k' drives reduce variable 'vk' of block 'C': ...") and leaves the function as it was.
 */
#ifndef MT_SCHEDULE_USER_SCHED_H
#define MT_SCHEDULE_USER_SCHED_H

#include "schedule/primitives.h"
#include "support/strbuf.h"

typedef struct mt_usched_loop {
    mt_tvar *var;
    const char *name;     /* in the trace */
} mt_usched_loop;

typedef struct mt_usched_block {
    const char *block;    /* the block's name in the function, as it is now */
    const char *name;     /* in the trace */
} mt_usched_block;

typedef struct mt_usched_gone {
    const mt_tvar *var;   /* a loop a step replaced */
    const char *by;       /* "split (step 3)" */
} mt_usched_gone;

typedef struct mt_usched {
    mt_sched s;
    MT_VEC(mt_usched_loop) loops;
    MT_VEC(mt_usched_block) blocks;
    MT_VEC(mt_usched_gone) gone;
    MT_VEC(const char *) names; /* every name the trace has used */
    mt_sb trace;                /* the steps, one per line, indented 4 */
    int nsteps;
    const char *error;          /* the last failure's reason */
    const char *lowered;        /* the rule apply_rule ran (the function is in lowered
                                 * form: no primitive applies after it), or NULL */
} mt_usched;

void mt_usched_init(mt_usched *u, mt_arena *a, mt_tfunc *f);

/* The trace as a schedule function, ready to paste back: for kernel
 * `func` (a string: the kernel as `--emit tir` shows it) or, by_name, for
 * the loop function `func` of the source as written:
 *   @T.schedule("func")
 *   def schedule_func(sch):
 *       b_C = sch.get_block("C")
 *       ...                                                              */
const char *mt_usched_text(mt_usched *u, const char *func, bool by_name);

/* The primitives. Handles in and out are ints; out arrays hold at most
 * MT_USCHED_MAX entries. A factor of 0 in split is `None` (inferred). */
#define MT_USCHED_MAX 16
bool mt_usched_get_block(mt_usched *u, const char *name, int *block);
bool mt_usched_get_loops(mt_usched *u, int block, int *loops, int *n);
bool mt_usched_split(mt_usched *u, int loop, const int64_t *factors, int n, int *out);
bool mt_usched_fuse(mt_usched *u, const int *loops, int n, int *out);
bool mt_usched_reorder(mt_usched *u, const int *loops, int n);
bool mt_usched_parallel(mt_usched *u, int loop);
bool mt_usched_vectorize(mt_usched *u, int loop);
bool mt_usched_unroll(mt_usched *u, int loop);
bool mt_usched_bind(mt_usched *u, int loop, const char *tag);
bool mt_usched_compute_at(mt_usched *u, int block, int loop);
bool mt_usched_compute_inline(mt_usched *u, int block);
bool mt_usched_use_fma(mt_usched *u, int block);
bool mt_usched_reverse_compute_at(mt_usched *u, int block, int loop);
bool mt_usched_reverse_compute_inline(mt_usched *u, int block);
bool mt_usched_cache_read(mt_usched *u, int block, int index, const char *scope, int *out);
bool mt_usched_cache_write(mt_usched *u, int block, int index, const char *scope, int *out);
bool mt_usched_decompose_reduction(mt_usched *u, int block, int loop, int *init);
bool mt_usched_rfactor(mt_usched *u, const int *loops, int n, int *rf);
/* The buffer by name, or (buffer NULL) the block's read ('r') or write
 * ('w') region `index`. */
bool mt_usched_transform_layout(mt_usched *u, int block, const char *buffer, char rw, int index,
                                const mt_index_map *map);
/* A default CPU rule with knobs (given: the values; given->rule ignored):
 * user_rule.c. */
struct mt_knobs;
bool mt_usched_apply_rule(mt_usched *u, const char *rule, const struct mt_knobs *given);

/* A handle's name in the trace, for messages ("?" when out of range). */
const char *mt_usched_loop_name(const mt_usched *u, int loop);
const char *mt_usched_block_name(const mt_usched *u, int block);

/* For printing a recorded trace (trace_text.c): handles without applying. */
int mt_usched_loop_handle(mt_usched *u, mt_tvar *v);
int mt_usched_find_loop(const mt_usched *u, const mt_tvar *v); /* -1: none */
int mt_usched_block_handle(mt_usched *u, const char *block);
int mt_usched_find_block(const mt_usched *u, const char *block); /* -1: none */
void mt_usched_rename_block(mt_usched *u, const char *from, const char *to);
void mt_usched_line(mt_usched *u, const char *text);            /* one step of the trace */
const char *mt_usched_loop_list(mt_usched *u, const int *h, int n); /* "i, j" */

#endif
