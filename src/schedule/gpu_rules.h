/*
 * gpu_rules.h -- the default schedule rules of CUDA targets, in the order
 * registry.c tries them (as TVM's dlight does for Relax): the row
 * reduction (gpu_reduce.c), then the fallback (gpu_default.c). Each takes
 * a block-form loop function and returns it scheduled in the GPU kernel
 * form (tir.h, "GPU kernels"), or unchanged when it does not apply (a
 * function of another target, or one an earlier rule scheduled).
 */
#ifndef MT_SCHEDULE_GPU_RULES_H
#define MT_SCHEDULE_GPU_RULES_H

#include "tir/tir.h"

/* Softmax, layer_norm, reductions over the last axis: a block per row. */
mt_tfunc *mt_schedule_gpu_reduce(mt_arena *a, mt_tfunc *f);

/* Everything else: each nest a kernel over its independent loops. */
mt_tfunc *mt_schedule_gpu_fallback(mt_arena *a, mt_tfunc *f);

#endif
