/*
 * default_cpu.c -- the default CPU schedule rules.
 *
 * Today there is one rule, the fallback: leave the loops serial and in
 * order. It is always correct, and because buffer parameters are `noalias`
 * and loops are canonical, LLVM's loop vectorizer already vectorizes the
 * innermost loop of elementwise kernels to the native width.
 *
 * Issue #4 adds, in order before the fallback: elementwise/injective (one
 * flat parallel loop, vectorized, tails partitioned), row reductions (rows
 * across threads, vectorized with several accumulators), and matmul with
 * its epilogue (register-tiled micro-kernel, cache blocking, packing).
 */
#include "schedule/schedule.h"

mt_tfunc *mt_schedule_default_cpu(mt_arena *a, mt_tfunc *f) {
    (void)a;
    return f;
}
