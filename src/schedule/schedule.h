/*
 * schedule.h -- choosing how a loop function's loops run.
 *
 * A default rule per target looks at a block-form loop function (after
 * fusion and inlining) and rewrites its loops: tiling, parallel, vectorize.
 * Rules are tried in order, first match wins (as TVM's dlight does).
 */
#ifndef MT_SCHEDULE_SCHEDULE_H
#define MT_SCHEDULE_SCHEDULE_H

#include "tir/tir.h"

/* The default CPU schedule. Returns f itself when no rule applies. */
mt_tfunc *mt_schedule_default_cpu(mt_arena *a, mt_tfunc *f);

#endif
