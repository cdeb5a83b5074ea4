/*
 * sched_from_ast.h -- user schedules written in the source.
 *
 *   @T.schedule(mm)                      # a loop function of the source, or
 *   def schedule_mm(sch):                # @T.schedule("fused_matmul_add"): a kernel of the dumps
 *       i, j, k = sch.get_loops(sch.get_block("C"))
 *       i0, i1 = sch.split(i, factors=[None, 8])
 *       sch.parallel(i0)
 *
 * The pipeline runs a schedule instead of the default rules on the
 * function it names (docs/schedule.md, "User schedules").
 */
#ifndef MT_SCHEDULE_SCHED_FROM_AST_H
#define MT_SCHEDULE_SCHED_FROM_AST_H

#include "frontend/ast.h"
#include "tir/tir.h"

/* The argument of def's @T.schedule(...) decorator (an AST_NAME or an
 * AST_STR), NULL when def is not a schedule; a malformed decorator fails. */
const mt_ast *mt_schedule_decorator_arg(const mt_ast *def);

/* f scheduled by schedule function def; each mistake or refusal fails
 * (mt_fail) at its place in def. *trace (may be NULL) gets the applied
 * steps as schedule text (user_sched.h, mt_usched_text) for the same
 * target: target, the decorator's argument (a loop function's name, which
 * schedules it as written, or a kernel's name as a string). */
mt_tfunc *mt_schedule_from_ast(mt_arena *a, mt_tfunc *f, const mt_ast *def, const mt_ast *target,
                               const char **trace);

/* The index map of an AST_LAMBDA (sch.transform_layout's third argument):
 * its parameters as int64 variables, its body (a tuple, or one expression
 * for a 1-d layout) as outputs; a form other than integers, parameters,
 * +, -, *, //, % and unary - fails (mt_fail) at its place. */
struct mt_index_map;
struct mt_index_map *mt_index_map_from_ast(mt_arena *a, const mt_ast *lambda);

#endif
