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

/* The matmul rule (rule_matmul.c): a float32/float64 matmul nest, optionally
 * batched and followed by elementwise epilogue nests, becomes a register-tiled
 * micro-kernel with B packing and K/N cache blocking, already in lowered form.
 * Returns f itself (and *applied = 0) when the function is not such a nest. */
mt_tfunc *mt_schedule_matmul_cpu(mt_arena *a, mt_tfunc *f, int *applied);

/* The same as a pipeline pass ("schedule_matmul", before "schedule"). */
mt_tfunc *mt_schedule_matmul_pass(mt_arena *a, mt_tfunc *f);

/* The row-reduction rule (rule_reduce.c): reductions over the innermost
 * axis (softmax, layer_norm, sum/mean/max over axis -1) with the per-row
 * and elementwise stages around them become one loop over rows (parallel
 * in chunks), each reduction vectorized with several accumulators, already
 * in lowered form. Returns f itself (and *applied = 0) when the function is
 * not such row-wise work. */
mt_tfunc *mt_schedule_reduce_cpu(mt_arena *a, mt_tfunc *f, int *applied);

/* The same as a pipeline pass ("schedule_reduce", before "schedule"). */
mt_tfunc *mt_schedule_reduce_pass(mt_arena *a, mt_tfunc *f);

/* The conv2d rule (rule_conv.c): a float32/float64 conv2d nest (NCHW,
 * OIHW, as legalize_conv.c writes it) and its elementwise epilogue become a
 * direct convolution with register tiles over output channels x output
 * width, rows packed when padded or strided, already in lowered form.
 * Returns f itself (and *applied = 0) when the function is not such a nest. */
mt_tfunc *mt_schedule_conv_cpu(mt_arena *a, mt_tfunc *f, int *applied);

/* The same as a pipeline pass ("schedule_conv", before "schedule"). */
mt_tfunc *mt_schedule_conv_pass(mt_arena *a, mt_tfunc *f);

/* The pool rule (rule_pool.c): a max_pool2d or avg_pool2d nest (as
 * legalize_conv.c writes it) and its elementwise epilogue become one
 * parallel loop over output rows, input rows packed when padded or
 * strided, each vector of outputs folded in registers; lowered form.
 * Returns f itself (and *applied = 0) when the function is not such a nest. */
mt_tfunc *mt_schedule_pool_cpu(mt_arena *a, mt_tfunc *f, int *applied);

/* The same as a pipeline pass ("schedule_pool", before "schedule"). */
mt_tfunc *mt_schedule_pool_pass(mt_arena *a, mt_tfunc *f);

#endif
