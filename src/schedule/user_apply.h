/*
 * user_apply.h -- user schedules applied to a program's loop functions,
 * ahead of the default rules: the source's (`@T.schedule`), then the
 * compile options' callback (mt_compile_options.schedule). A function
 * either takes a user schedule, and the rules leave it alone, or none.
 */
#ifndef MT_SCHEDULE_USER_APPLY_H
#define MT_SCHEDULE_USER_APPLY_H

#include "frontend/ast.h"
#include "minitriton.h"
#include "tir/tir.h"

/* How one function was scheduled (the "schedule" dump). */
typedef struct mt_sched_how {
    const char *origin; /* "the source's schedule", "the schedule callback"; NULL: not a user's */
    const char *text;   /* origin set: the applied schedule, @T.schedule text;
                         * else the default rule that took it, or NULL */
} mt_sched_how;

/* The source's schedules (module: its AST) applied to the functions they
 * name among fs[0..n): fs[i] is replaced and how[i] set. Fails at a
 * schedule naming no kernel, a second schedule for one, and a GPU kernel
 * its schedule leaves without blockIdx/threadIdx bindings. */
void mt_apply_source_schedules(mt_arena *a, const mt_ast *module, mt_tfunc **fs, int n, mt_sched_how *how);

/* Does a schedule of the source name f by name (@T.schedule(mm): f is made
 * from loop function mm)? The pipeline leaves such a function as written:
 * inline_producers does not touch it. (A schedule naming a kernel by
 * string sees it as `--emit tir` shows it.) */
bool mt_source_schedules_name(const mt_ast *module, const mt_tfunc *f);

/* fn called on each function the source's schedules left (how[i].origin
 * NULL); a function it changed is replaced and how[i] set. A status other
 * than MT_OK from fn fails the compile with the last refusal's reason. */
void mt_apply_callback_schedules(mt_arena *a, mt_schedule_fn fn, void *user, mt_tfunc **fs, int n,
                                 mt_sched_how *how);

#endif
