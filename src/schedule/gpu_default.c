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
 *  0. A reduction with few outputs (a sum of everything, column sums of a
 *     narrow matrix) would run one thread per output, each over all of its
 *     elements: `sum(a)` of 16M floats on one thread. Its reduce loops are
 *     fused into one loop r and split by P, and rfactor gives each of the
 *     P inner iterations a partial result of its own: P threads per output,
 *     partial ri summing elements ri, ri + P, ri + 2P, ... (consecutive
 *     threads read consecutive elements), then a reduction of the P
 *     partials, split the same way while it is long:
 *
 *         sum(a), a (4096, 4096):                 three kernels (and the fills
 *         lv_rf[ri]   += a[ro * 131072 + ri]       of lv_rf, lv_rf_1 with 0)
 *         lv_rf_1[ri] += lv_rf[ro * 8192 + ri]
 *         lv[0]       += lv_rf_1[ri]              (512 partials, one thread)
 *
 *     P is the largest power of two that gives every partial at least
 *     MIN_PER elements and the outputs together at most a thread per
 *     SM x max threads per block of the target, at least a warp; for a
 *     symbolic number of elements at most a block's worth (1024); the
 *     partials are cyclic where a count from P / 2 to P divides the
 *     length, else chunks of consecutive elements (split_partials). A
 *     reduction of at most SERIAL_MAX elements per output, or with a
 *     symbolic number of outputs, is not split. A float sum is
 *     reassociated (as the CPU's rules do); max and min are exact.
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
 *                     out[(i_0_0 * 4 + i_0_1) * 256 + i_1] = ...
 *
 *     When every access walks the nest contiguously (each loaded and
 *     stored buffer indexed by exactly the nest's variables, in order, or
 *     by none of them) over 4- or 8-byte elements, each thread takes 16
 *     bytes of consecutive elements instead, a `vectorized` loop of 4 (2
 *     for 8-byte elements) that the vectorize pass makes one vector step
 *     and CUDA C one float4 (double2, ...) load per input and one store
 *     where the addresses are aligned (codegen/cuda_c_mem.c):
 *
 *         for i_0_0 in T.thread_binding(16384, thread="blockIdx.x"):
 *             for i_0_1 in T.thread_binding(256, thread="threadIdx.x"):
 *                 for i_1 in T.vectorized(4):
 *                     out[i_0_0 * 1024 + i_0_1 * 4 + i_1] = ...
 *
 *     Each reduction in a thread accumulates in a register and stores its
 *     output once (cache_write, local).
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

#include "schedule/block_util.h"
#include "schedule/primitives.h"
#include "support/common.h"
#include "tir/arith.h"

enum { THREADS = 256, PER_THREAD = 4, VECTOR_BYTES = 16, MAX_NEST = MT_MAX_RANK + 8, SERIAL_MAX = 1024, MIN_PER = 16,
       MAX_SPLITS = 64 };

/* ---- facts ------------------------------------------------------------------ */

typedef struct finder {
    bool (*want)(const mt_tstmt *);
    bool found;
} finder;

static void find_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    finder *f = v->ctx;
    if (f->want(s)) f->found = true;
    else if (!f->found) mt_tvisit_stmt_children(v, s);
}

/* Does s hold a statement that want picks? */
static bool holds(const mt_tstmt *s, bool (*want)(const mt_tstmt *)) {
    finder f = {want, false};
    mt_tvisitor v = {mt_tvisit_no_expr, find_stmt, &f};
    mt_tvisit_stmt(&v, s);
    return f.found;
}

static bool is_block(const mt_tstmt *s) { return s->kind == TS_BLOCK; }

/* A loop the user bound to a GPU index: what holds one is scheduled as
 * written (wrapping it in a block of one thread would launch one). */
static bool is_bound_loop(const mt_tstmt *s) { return s->kind == TS_FOR && s->for_kind == MT_FOR_THREAD; }

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

/* Each reduction under loop accumulates in a register and stores its
 * output once (cache_write, local), instead of updating global memory at
 * every step; a reduction that cache_write does not take stays as it is. */
static void accumulate_locally(mt_sched *s, mt_tvar *loop) {
    mt_blk_stmts blocks = mt_blk_blocks_under(s->arena, mt_sched_get_loop(s, loop));
    for (int i = 0; i < blocks.len; i++) {
        const mt_tstmt *b = blocks.data[i];
        mt_sched t = *s;
        if (b->name && mt_blk_reduce_iter(b) && mt_sched_cache_write(&t, b->name, MT_SCOPE_LOCAL, NULL)) *s = t;
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

/* The loops of the perfect nest at top (outermost first) and the block
 * inside them, or NULL when there is no such block. */
static const mt_tstmt *nest_block(const mt_tstmt *top, mt_tvar **vars, int *n) {
    *n = 0;
    const mt_tstmt *l = top;
    for (; l->kind == TS_FOR; l = l->body) {
        if (l->for_kind != MT_FOR_SERIAL || *n == MAX_NEST) return NULL;
        vars[(*n)++] = l->var;
    }
    return l->kind == TS_BLOCK ? l : NULL;
}

/* The lanes of a vector step over the nest at loop top, or 0: a
 * perfect nest around one block bound one to one, in order, to its loops,
 * one store, every access walking the fused loops with stride 1 or not
 * using them (mt_blk_contiguous_suffix), every buffer of a dtype the
 * vectorize pass makes vectors of. 16 bytes of the widest of them: float4
 * for float32 and int32, double2 for float64 and int64. */
static int vector_lanes(const mt_sched *s, mt_tvar *top) {
    mt_tvar *vars[MAX_NEST];
    int n;
    const mt_tstmt *b = nest_block(mt_sched_get_loop(s, top), vars, &n);
    if (!b || b->niters != n || b->init || b->nallocs || b->predicate || !mt_blk_contiguous_suffix(b, 0))
        return 0;
    for (int d = 0; d < n; d++)
        if (b->iters[d].kind != MT_ITER_SPATIAL || b->iter_values[d]->kind != TE_VAR ||
            b->iter_values[d]->var != vars[d])
            return 0;
    int widest = 0;
    for (int i = 0; i < b->nreads + b->nwrites; i++) {
        mt_dtype t = (i < b->nreads ? b->reads[i] : b->writes[i - b->nreads]).buf->dtype;
        if (t != MT_FLOAT32 && t != MT_INT32 && t != MT_FLOAT64 && t != MT_INT64) return 0;
        if ((int)mt_dtype_size(t) > widest) widest = (int)mt_dtype_size(t);
    }
    return widest ? VECTOR_BYTES / widest : 0;
}

/* A large contiguous nest (step 2): each thread `lanes` consecutive
 * elements, a vectorized loop that the vectorize pass makes one vector
 * step (in CUDA C a float4 load and store where the address is 16-byte
 * aligned, lane by lane where not: codegen/cuda_c_mem.c). */
static bool vector_per_thread(mt_sched *s, mt_tvar *f, int threads, int lanes) {
    mt_tvar *o, *bx, *tx, *v;
    return mt_sched_split(s, f, mt_te_int(s->arena, f->dtype, lanes), &o, &v) &&
           mt_sched_split(s, o, mt_te_int(s->arena, f->dtype, threads), &bx, &tx) &&
           mt_sched_bind(s, bx, "blockIdx.x", 0) && mt_sched_bind(s, tx, "threadIdx.x", threads) &&
           mt_sched_vectorize(s, v);
}

/* Is the nest at f large: a constant extent that per * threads divides,
 * at least two such blocks' worth per SM? */
static bool large(const mt_sched *s, mt_tvar *f, int threads, int per) {
    int64_t ext, chunk = (int64_t)threads * per;
    return mt_te_is_const_int(mt_sched_get_loop(s, f)->extent, &ext) && ext % chunk == 0 &&
           ext >= chunk * mt_tfunc_target(s->func)->num_sms * 2;
}

/* Fuses the leading independent loops and binds them (step 2); false when
 * there is none. */
static bool bind_spatial(mt_sched *s, mt_tvar *first, int threads) {
    mt_tvar *vars[MAX_NEST];
    int n = nest_of(s, first, vars), k = 0;
    while (k < n && mt_sched_independent(s, vars[k])) k++;
    if (k == 0) return false;
    int lanes = k == n ? vector_lanes(s, first) : 0;
    mt_tvar *f = vars[0];
    for (int i = 1; i < k; i++)
        if (!mt_sched_fuse(s, f, vars[i], &f)) break;
    if (lanes > 1 && large(s, f, threads, lanes)) {
        mt_sched t = *s;
        if (vector_per_thread(&t, f, threads, lanes)) {
            *s = t;
            return true;
        }
    }
    int64_t ext;
    if (k == n && large(s, f, threads, PER_THREAD)) {
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

/* ---- reductions with few outputs (step 0) ------------------------------------------ */

/* The product of the extents of loops [from, to) when they are constants
 * (at most 2^40), else -1. */
static int64_t const_product(mt_sched *s, mt_tvar *const *vars, int from, int to) {
    int64_t p = 1, e;
    for (int i = from; i < to; i++)
        if (!mt_te_is_const_int(mt_sched_get_loop(s, vars[i])->extent, &e) || e < 0 ||
            !mt_mul_ok(p, e, &p) || p > ((int64_t)1 << 40))
            return -1;
    return p;
}

/* How many partial results a reduction of r elements (-1: a symbolic
 * number) into each of `outs` outputs gets: the largest power of two that
 * gives the GPU a thread per partial (sms x max threads per block in all)
 * with at least MIN_PER elements each; for a symbolic r, which may be
 * small, at most a block's worth (max threads per block), so that a short
 * run pays for few idle threads; 0 when the reduction stays one thread per
 * output (r up to SERIAL_MAX, or outputs enough to fill the GPU: fewer
 * than a warp of partials each). */
static int64_t partials(const mt_target_desc *t, int64_t outs, int64_t r) {
    int64_t fill = (int64_t)t->num_sms * t->max_threads_per_block, p = 1;
    if (outs < 1 || (r >= 0 && r <= SERIAL_MAX)) return 0;
    int64_t most = r >= 0 ? r / MIN_PER : t->max_threads_per_block;
    while (p * 2 <= most && p * 2 * outs <= fill) p *= 2;
    return p >= t->warp_size ? p : 0;
}

/* The largest divisor of r in [lo, hi], or 0. */
static int64_t divisor_in(int64_t r, int64_t lo, int64_t hi) {
    for (int64_t d = hi; d >= lo && d > 0; d--)
        if (r % d == 0) return d;
    return 0;
}

/* The loop r (the fused reduce loops) split into about P partials, ri
 * their loop (ro the other): cyclically where a number of partials from
 * P / 2 to P divides r, (ro, ri) with ri inner, partial ri summing
 * elements ri, ri + P, ... (consecutive threads read consecutive
 * elements); else in chunks, (ri, ro) by C = ceildiv(r, P) with ro inner,
 * partial ri summing its own C elements (a clamp on ri's extent would
 * depend on ro, and bind needs ri's extent free of it). */
static bool split_partials(mt_sched *s, mt_tvar *r, int64_t P, bool *cyclic, mt_tvar **ro, mt_tvar **ri) {
    mt_arena *a = s->arena;
    const mt_texpr *ext = mt_sched_get_loop(s, r)->extent;
    int64_t e, d = mt_te_is_const_int(ext, &e) ? divisor_in(e, P / 2, P) : 0;
    *cyclic = d > 0;
    if (*cyclic) return mt_sched_split(s, r, mt_te_i64(a, d), ro, ri);
    mt_texpr *C = mt_te_is_const_int(ext, &e)
                      ? mt_te_i64(a, (e + P - 1) / P)
                      : mt_arith_bin(a, TE_MAX, mt_te_i64(a, 1),
                                     mt_arith_floordiv(a, mt_arith_add(a, (mt_texpr *)ext, mt_te_i64(a, P - 1)),
                                                       mt_te_i64(a, P)));
    return mt_sched_split(s, r, C, ri, ro);
}

/* Splits the reduction of the nest at top when it has few outputs: its
 * independent loops moved outside, the reduce loops fused into one loop r
 * split into P = partials(..) partial results (split_partials), and
 * rfactor over their loop: B_rf[s.., ri], then the P partials of each
 * output are combined, a reduction that this splits again while it is
 * long (once only when its length is symbolic: `split` lists the blocks
 * split so far). Over columns (the input's last axis an output axis) ri
 * goes outside the output loops, so that consecutive threads take
 * consecutive outputs. False when it does not apply (s unchanged). */
static bool split_reduction(mt_sched *s, mt_tvar *top, const char **split, int nsplit) {
    mt_tvar *vars[MAX_NEST];
    int n, k = 0;
    mt_sched t = *s; /* all or nothing */
    const mt_tstmt *b = nest_block(mt_sched_get_loop(&t, top), vars, &n);
    if (!b || !b->init || !b->name) return false;
    bool columns = mt_sched_independent(&t, vars[n - 1]);
    hoist_independent(&t, &top);
    b = nest_block(mt_sched_get_loop(&t, top), vars, &n);
    while (k < n && mt_sched_independent(&t, vars[k])) k++;
    int64_t outs = const_product(&t, vars, 0, k), r = const_product(&t, vars, k, n);
    for (int i = 0; r < 0 && i < nsplit; i++)
        if (strcmp(split[i], b->name) == 0) return false;
    int64_t P = outs > 0 && r != 0 && k < n ? partials(mt_tfunc_target(t.func), outs, r) : 0;
    if (P == 0) return false;
    mt_tvar *f = vars[k], *ro, *ri;
    bool cyclic;
    for (int i = k + 1; i < n; i++)
        if (!mt_sched_fuse(&t, f, vars[i], &f)) return false;
    if (!split_partials(&t, f, P, &cyclic, &ro, &ri)) return false;
    for (int i = k; columns && i >= 0; i--) {
        mt_tvar *outer = i == k ? (cyclic ? ro : NULL) : vars[i];
        if (outer && !mt_sched_reorder(&t, outer, ri)) return false;
    }
    if (!mt_sched_rfactor(&t, b->name, &ri, 1)) return false;
    *s = t;
    return true;
}

/* Step 0 over every nest, until none splits (each split leaves a
 * reduction of at most P elements, P <= r / MIN_PER, or of a symbolic
 * number once). */
static void split_reductions(mt_sched *s) {
    const char *split[MAX_SPLITS];
    int nsplit = 0;
    for (bool again = true; again && nsplit < MAX_SPLITS;) {
        again = false;
        const mt_tstmt *body = s->func->body;
        int nitems = body->kind == TS_SEQ ? body->nstmts : 1;
        for (int i = 0; i < nitems && !again; i++) {
            const mt_tstmt *item = body->kind == TS_SEQ ? body->stmts[i] : body;
            if (item->kind != TS_FOR || item->for_kind != MT_FOR_SERIAL) continue;
            const mt_tstmt *b = nest_block(item, (mt_tvar *[MAX_NEST]){0}, (int[1]){0});
            again = split_reduction(s, item->var, split, nsplit);
            if (again) split[nsplit++] = b->name;
        }
    }
}

/* ---- entry ------------------------------------------------------------------------ */

mt_tfunc *mt_schedule_gpu_fallback(mt_arena *a, mt_tfunc *f) {
    const mt_target_desc *t = mt_tfunc_target(f);
    if (t->kind != MT_TARGET_CUDA || !f->body || !holds(f->body, is_block)) return f;
    int threads = THREADS < t->max_threads_per_block ? THREADS : t->max_threads_per_block;
    mt_sched s;
    mt_sched_init(&s, a, f);
    split_reductions(&s);
    const mt_tstmt *body = s.func->body;
    mt_tstmt *const *items = body->kind == TS_SEQ ? body->stmts : (mt_tstmt *const *)&s.func->body;
    int nitems = body->kind == TS_SEQ ? body->nstmts : 1;
    for (int i = 0; i < nitems; i++) {
        const mt_tstmt *item = items[i];
        if (holds(item, is_bound_loop)) continue;
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
