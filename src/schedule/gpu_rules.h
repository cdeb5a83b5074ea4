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
/* The knob threads of rule for f (a power of two), within the target's
 * bounds for a block per row (whole warps, at most a warp's lanes of
 * warps); else dflt. */
int mt_gpu_row_knob_threads(const mt_tfunc *f, const char *rule, const mt_target_desc *t, int dflt);
int mt_gpu_row_group(const mt_texpr *N, mt_texpr *const *O, int ns, const mt_target_desc *t);

/* The rows of the row rules (gpu_reduce.c, gpu_argreduce.c; rr of
 * rule_reduce.h): a row's linear index `row` and its outer indices ov[0..
 * c->ns), which c->oval names (the row itself when ns is 1), bound around
 * body by lets from the row. */
struct rr;
void mt_gpu_row_outer_vars(struct rr *c, mt_tvar *row, mt_tvar **ov);
mt_tstmt *mt_gpu_row_outer_lets(struct rr *c, mt_tvar *row, mt_tvar **ov, mt_tstmt *body);

/* A warp per row, its scaffolding: M rows, `group` lanes a row, blocks of
 * `threads` threads tx (R = threads / group rows a block). begin makes the
 * variables and sets c->oval; the caller builds the row's statements with
 * lane (the thread's lane in its row) and valid (its row exists); phase
 * binds row, its outer indices and lane around them from bx and tx (the
 * kernel's one phase, to go in the caller's threadIdx.x loop); loop is
 * `for bx in T.thread_binding(ceildiv(M, R), thread="blockIdx.x"): body`. */
typedef struct mt_gpu_warp_rows {
    struct rr *c;
    mt_tvar *tx, *bx, *row, *lane_var, *ov[MT_MAX_RANK];
    int64_t R;
    int group;
    mt_texpr *M;
    mt_texpr *lane, *valid; /* for the row's statements */
} mt_gpu_warp_rows;
void mt_gpu_warp_rows_begin(mt_gpu_warp_rows *w, struct rr *c, mt_tvar *tx, int threads, int group, mt_texpr *M);
mt_tstmt *mt_gpu_warp_rows_phase(mt_gpu_warp_rows *w, mt_tstmt *const *stmts, int n);
mt_tstmt *mt_gpu_warp_rows_loop(mt_gpu_warp_rows *w, mt_tstmt *body);

/* argmax / argmin over the last axis: a block or a warp per row, (value,
 * index) pairs through shuffles. */
mt_tfunc *mt_schedule_gpu_argreduce(mt_arena *a, mt_tfunc *f);

/* Everything else: each nest a kernel over its independent loops. */
mt_tfunc *mt_schedule_gpu_fallback(mt_arena *a, mt_tfunc *f);

#endif
