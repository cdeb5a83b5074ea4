/*
 * gpu_rules.h -- the default schedule rules of CUDA targets, in the order
 * registry.c tries them (as TVM's dlight does for Relax): the matmul of
 * few rows (gpu_gemv.c), the matmul (gpu_matmul.c), the row reduction (gpu_reduce.c), argmax / argmin
 * over rows (gpu_argreduce.c), then the fallback
 * (gpu_default.c). Each takes a block-form loop function and returns it scheduled in the GPU kernel
 * form (tir.h, "GPU kernels"), or unchanged when it does not apply (a
 * function of another target, or one an earlier rule scheduled).
 */
#ifndef MT_SCHEDULE_GPU_RULES_H
#define MT_SCHEDULE_GPU_RULES_H

#include "tir/tir.h"

/* A matmul of at most 4 rows and its epilogue: sums split across threads. */
mt_tfunc *mt_schedule_gpu_gemv(mt_arena *a, mt_tfunc *f);

/* A matmul and its epilogue: shared-memory tiles, a register tile per thread. */
mt_tfunc *mt_schedule_gpu_matmul(mt_arena *a, mt_tfunc *f);

/* Softmax, layer_norm, reductions over the last axis: a block per row. */
mt_tfunc *mt_schedule_gpu_reduce(mt_arena *a, mt_tfunc *f);

/* The row rules' shapes (gpu_reduce.c), for rows of N over outer extents
 * O[0..ns): the threads of a block per row, and the lanes per row of a
 * warp per row (blocks of MT_GPU_ROW_WARP_BLOCK threads), or 0 when a
 * block per row it is. */
enum { MT_GPU_ROW_WARP_BLOCK = 128, MT_GPU_ROW_MAX_PER = 32 };
int mt_gpu_row_threads(const mt_texpr *N, const mt_target_desc *t);
int mt_gpu_row_group(const mt_texpr *N, mt_texpr *const *O, int ns, const mt_target_desc *t);

/* argmax / argmin over the last axis: a block or a warp per row, (value,
 * index) pairs through shuffles. */
mt_tfunc *mt_schedule_gpu_argreduce(mt_arena *a, mt_tfunc *f);

/* Everything else: each nest a kernel over its independent loops. */
mt_tfunc *mt_schedule_gpu_fallback(mt_arena *a, mt_tfunc *f);

#endif
