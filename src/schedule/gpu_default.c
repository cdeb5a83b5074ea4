/*
 * gpu_default.c -- the GPU's fallback schedule: every loop nest a kernel,
 * its independent loops spread over blocks and threads.
 *
 * The last CUDA rule (registry.c), in the spirit of dlight's Fallback: it
 * takes any block-form function the rules before it left alone (a function
 * they scheduled is in lowered form and has no blocks) and makes each
 * top-level statement of its body one kernel (tir.h, "GPU kernels"), so
 * that every program runs on the GPU, correctly if not always fast:
 *
 *  1. The perfect loop nest at the top of the statement is reordered so
 *     that its independent loops (no block under them reduces over their
 *     variable: mt_sched_bind's precondition, as for parallel) come first,
 *     each moved outward past reduce loops (a matmul's i, k, j becomes
 *     i, j, k: each output element is one thread's serial sum).
 *  2. Those leading independent loops are fused into one loop over all
 *     output elements, split by THREADS, and bound: the outer part to
 *     blockIdx.x, the inner to threadIdx.x, a guard `if tx < extent` for
 *     the last block:
 *
 *         for i_j_fused_0 in T.thread_binding(T.ceildiv(n * 64, 256), thread="blockIdx.x"):
 *             for i_j_fused_1 in T.thread_binding(256, thread="threadIdx.x"):
 *                 if i_j_fused_1 < T.min(256, n * 64 - i_j_fused_0 * 256):
 *                     ... one output element, its reduce loops serial ...
 *
 *     A nest of fewer than THREADS iterations (constant) gets one block of
 *     exactly that many threads. A large elementwise nest (no reduce loop,
 *     a constant extent that THREADS * PER_THREAD divides, at least 2 * PER_THREAD *
 *     THREADS per SM) gives each thread PER_THREAD elements, THREADS apart,
 *     in an unrolled loop: a block covers THREADS * PER_THREAD consecutive
 *     elements, and each thread has PER_THREAD loads in flight:
 *
 *         for i_0_0 in T.thread_binding(65536, thread="blockIdx.x"):
 *             for i_1 in T.thread_binding(256, thread="threadIdx.x"):
 *                 for i_0_1 in T.unroll(4):
 *                     out[(i_0_0 * 4 + i_0_1) * 256 + i_1] = ... Each reduction in a thread accumulates in
 *     a register and stores its output once (cache_write, local).
 *  3. A statement with no independent leading loop (a reduction to one
 *     value, legalize's `if n == 0` guard, a rank-0 store) runs on one
 *     thread of one block.
 *
 * The nests of one function stay in order, one kernel each; the buffers
 * they pass each other are the function's allocations (global memory,
 * allocated by the host). Knob: THREADS = 256 per block (at most the
 * target's max_threads_per_block). Grid: blockIdx.x reaches 2^31 - 1
 * blocks, 5.5e11 elements at 256 threads, past any GPU's memory, so no
 * grid-stride loop is needed.
 */
#include "schedule/gpu_rules.h"
#include "schedule/trace.h"

#include <string.h>

#include "schedule/primitives.h"
#include "support/common.h"
#include "tir/arith.h"

enum { THREADS = 256, PER_THREAD = 4, MAX_NEST = MT_MAX_RANK + 8 };

/* ---- facts ------------------------------------------------------------------ */

static void find_block(mt_tvisitor *v, const mt_tstmt *s) {
    if (s->kind == TS_BLOCK) *(bool *)v->ctx = true;
    else if (!*(bool *)v->ctx) mt_tvisit_stmt_children(v, s);
}

static void skip_expr(mt_tvisitor *v, const mt_texpr *e) { (void)v, (void)e; }

static bool has_blocks(const mt_tstmt *s) {
    bool found = false;
    mt_tvisitor v = {skip_expr, find_block, &found};
    mt_tvisit_stmt(&v, s);
    return found;
}

/* The variables of the perfect loop nest at the top of item, outermost
 * first; returns how many. */
static int nest_of(const mt_sched *s, mt_tvar *top, mt_tvar **vars) {
    int n = 0;
    const mt_tstmt *l = mt_sched_get_loop(s, top);
    while (n < MAX_NEST) {
        vars[n++] = l->var;
        if (l->body->kind != TS_FOR || l->body->for_kind != MT_FOR_SERIAL) break;
        l = l->body;
    }
    return n;
}

/* The names of the reduction blocks under s (with a reduce variable). */
typedef struct red_blocks {
    mt_arena *a;
    MT_VEC(const char *) names;
} red_blocks;

static void red_block(mt_tvisitor *v, const mt_tstmt *s) {
    red_blocks *r = v->ctx;
    if (s->kind == TS_BLOCK && s->name)
        for (int i = 0; i < s->niters; i++)
            if (s->iters[i].kind == MT_ITER_REDUCE) {
                MT_VEC_PUSH(r->a, &r->names, s->name);
                break;
            }
    mt_tvisit_stmt_children(v, s);
}

/* Each reduction under loop accumulates in a register and stores its
 * output once (cache_write, local), instead of updating global memory at
 * every step; a reduction that cache_write does not take stays as it is. */
static void accumulate_locally(mt_sched *s, mt_tvar *loop) {
    red_blocks r = {s->arena, {0}};
    mt_tvisitor v = {skip_expr, red_block, &r};
    mt_tvisit_stmt(&v, mt_sched_get_loop(s, loop));
    for (int i = 0; i < r.names.len; i++) {
        mt_sched t = *s;
        if (mt_sched_cache_write(&t, r.names.data[i], MT_SCOPE_LOCAL, NULL)) *s = t;
    }
}

/* ---- the kernel of one statement ----------------------------------------------- */

/* Moves independent loops outward past reduce loops (step 1). */
static void hoist_independent(mt_sched *s, mt_tvar **first) {
    mt_tvar *vars[MAX_NEST];
    for (bool moved = true; moved;) {
        moved = false;
        int n = nest_of(s, *first, vars);
        for (int i = 0; i + 1 < n && !moved; i++) {
            if (mt_sched_independent(s, vars[i]) || !mt_sched_independent(s, vars[i + 1])) continue;
            mt_sched t = *s;
            if (!mt_sched_reorder(&t, vars[i], vars[i + 1])) continue;
            *s = t;
            if (i == 0) *first = vars[1];
            moved = true;
        }
    }
}

/* One block of one thread around statement old (step 3). */
static void single_thread(mt_sched *s, const mt_tstmt *old) {
    mt_arena *a = s->arena;
    mt_tvar *bx = mt_tvar_new(a, "bx", MT_INT64), *tx = mt_tvar_new(a, "tx", MT_INT64);
    mt_tstmt *in = mt_ts_at(mt_ts_for(a, tx, mt_te_i64(a, 0), mt_te_i64(a, 1), MT_FOR_THREAD,
                                      (mt_tstmt *)old), old->loc);
    in->thread_tag = "threadIdx.x";
    mt_tstmt *out = mt_ts_at(mt_ts_for(a, bx, mt_te_i64(a, 0), mt_te_i64(a, 1), MT_FOR_THREAD, in),
                             old->loc);
    out->thread_tag = "blockIdx.x";
    mt_sched_replace(s, old, out);
    mt_sched_trace_note(s, "a statement without loops runs on one thread of one block");
}

/* A large elementwise nest (step 2b): PER_THREAD elements per thread,
 * THREADS apart, so that a block covers THREADS * PER_THREAD consecutive
 * elements and each thread has that many loads in flight (the unrolled
 * loop's loads go ahead of its stores: the buffers are __restrict__). */
static bool several_per_thread(mt_sched *s, mt_tvar *f, int threads) {
    mt_tvar *o, *tx, *bx, *v;
    return mt_sched_split(s, f, mt_te_int(s->arena, f->dtype, threads), &o, &tx) &&
           mt_sched_split(s, o, mt_te_int(s->arena, f->dtype, PER_THREAD), &bx, &v) &&
           mt_sched_reorder(s, v, tx) && mt_sched_bind(s, bx, "blockIdx.x", 0) &&
           mt_sched_bind(s, tx, "threadIdx.x", threads) && mt_sched_unroll(s, v);
}

/* Fuses the leading independent loops and binds them (step 2); false when
 * there is none. */
static bool bind_spatial(mt_sched *s, mt_tvar *first, int threads) {
    mt_tvar *vars[MAX_NEST];
    int n = nest_of(s, first, vars), k = 0;
    while (k < n && mt_sched_independent(s, vars[k])) k++;
    if (k == 0) return false;
    mt_tvar *f = vars[0];
    for (int i = 1; i < k; i++)
        if (!mt_sched_fuse(s, f, vars[i], &f)) break;
    int64_t ext;
    if (k == n && mt_te_is_const_int(mt_sched_get_loop(s, f)->extent, &ext) &&
        ext % ((int64_t)threads * PER_THREAD) == 0 &&
        ext >= (int64_t)threads * PER_THREAD * mt_tfunc_target(s->func)->num_sms * 2) {
        mt_sched t = *s;
        if (several_per_thread(&t, f, threads)) {
            *s = t;
            return true;
        }
    }
    if (mt_te_is_const_int(mt_sched_get_loop(s, f)->extent, &ext) && ext < threads)
        threads = ext > 0 ? (int)ext : 1;
    mt_tvar *bx, *tx;
    if (!mt_sched_split(s, f, mt_te_int(s->arena, f->dtype, threads), &bx, &tx)) return false;
    if (!mt_sched_bind(s, bx, "blockIdx.x", 0) || !mt_sched_bind(s, tx, "threadIdx.x", threads))
        return false;
    accumulate_locally(s, tx);
    return true;
}

/* ---- entry ------------------------------------------------------------------------ */

mt_tfunc *mt_schedule_gpu_fallback(mt_arena *a, mt_tfunc *f) {
    const mt_target_desc *t = mt_tfunc_target(f);
    if (t->kind != MT_TARGET_CUDA || !f->body || !has_blocks(f->body)) return f;
    int threads = THREADS < t->max_threads_per_block ? THREADS : t->max_threads_per_block;
    mt_tstmt *const *items = f->body->kind == TS_SEQ ? f->body->stmts : &f->body;
    int nitems = f->body->kind == TS_SEQ ? f->body->nstmts : 1;
    mt_sched s;
    mt_sched_init(&s, a, f);
    for (int i = 0; i < nitems; i++) {
        const mt_tstmt *item = items[i];
        if (item->kind == TS_FOR && item->for_kind == MT_FOR_SERIAL) {
            mt_tvar *first = item->var;
            hoist_independent(&s, &first);
            mt_sched trial = s;
            if (bind_spatial(&trial, first, threads)) {
                s = trial;
                continue;
            }
            item = mt_sched_get_loop(&s, first);
        }
        single_thread(&s, item);
    }
    mt_tfunc *g = s.func;
    if (g == f) return f;
    mt_tfunc_set_attr(a, g, "schedule", "gpu_fallback");
    return g;
}
