/*
 * rule_colreduce.c -- reductions over outer axes (column reductions), a
 * default CPU rule tried by default_cpu.c on a nest the injective rule does
 * not take.
 *
 * `sum(x, axis=0)` over a (R, N) row-major x legalizes to
 *
 *     for r, j in T.grid(R, N):           # r reduce, j spatial
 *         with T.block("sum"): out[j] += x[r, j]   (init out[j] = 0)
 *
 * whose inner loop walks a row of x contiguously but whose fallback form
 * (the block's init under `if r == 0`) neither vectorizes nor runs on more
 * than one core: 0.3x NumPy at 16 x 65536. The rule matches a perfect nest
 * of serial loops from 0 around one reduction block whose iteration
 * variables are bound one to one, in order, to the loops, shaped
 * [spatial*, reduce+, spatial+] where every access walks the trailing
 * spatial loops contiguously (the block's iteration variables bound to
 * them are its last indices, in order, over dims as long as their extents:
 * mt_blk_contiguous_suffix, shared with the full-reduction rule; so
 * `sum(x.T, axis=0)`, which reads x[j, r], is not taken): `sum(axis=0)` of
 * a matrix or of a 3-D tensor, `sum(axis=1)` of a 3-D tensor, with max, min, mean's sum and
 * the products that legalization makes. Then, with primitives only (each refuses what
 * would change the result, and a refusal leaves the nest to the fallback):
 *
 *   0. fuse the trailing spatial loops into one flat loop j (its accesses
 *      stay affine: the simplifier folds (f // E) * E + f % E back to f);
 *   1. split j into chunks (jo, ji) of CHUNK_BYTES of output, or wider --
 *      up to half the target's L1 -- while every core still gets one
 *      (chunk_elems): a chunk's partial results stay in L1 while the
 *      reduce loops stream the rows under it, each row a contiguous run;
 *   2. reorder jo outside the reduce loops (it swaps a spatial loop with
 *      reduce ones, never two reduce loops, so the order of the reduction
 *      over r is the source's);
 *   3. fuse the outer spatial loops with jo into one loop over independent
 *      chunks, and make it parallel when it has more than one iteration;
 *   4. decompose_reduction: the init becomes its own loop over the chunk,
 *      before the reduce loops, so that the update has no branch;
 *   5. vectorize ji: each reduce step is one vector load, add and store of
 *      the chunk's partial results per vector width.
 *
 *     for c in T.parallel(ceildiv(N, C)):
 *         for ji in range(..): out[c * C + ji] = 0
 *         for r in range(R):
 *             for ji in T.vectorized(..): out[c * C + ji] += x[r, c * C + ji]
 *
 *   When the chunks and vectors divide the columns and ROWS the innermost
 *   reduce loop, ROWS rows at a time instead: split r into (ro, ri) and ji
 *   into (jv, jl), reorder to (ro, jv, ri, jl), unroll ri, vectorize jl.
 *   Each vector of partial results is loaded once, gets ROWS rows added in
 *   order and is stored once (LLVM forwards the unrolled copies' stores to
 *   the next loads), and ROWS rows stream at once: the same sums, in the
 *   same order, as row by row. 256 x 256 x 256 float32, sum(axis=0), on the
 *   Zen 5 VM (mt_sweep): 4.45 -> 1.35 ms on one thread, 1.56 -> 0.93 on two
 *   (row by row the single stream ran at 40 % of STREAM). For such a sum
 *   the chunk is the widest multiple of the vector width within the bounds
 *   below that divides the columns, if one is at least half as wide as
 *   those bounds give (4096 of 65536 rather than 6144; nothing at 1024 x a
 *   large prime, whose 4 KiB rows ran 20-30 % slower). max and min (a
 *   compare and a select per row) take ROWS rows at once only where the
 *   target has more than one core, and never narrow the chunk: on one
 *   thread they ran slower so (4096 x 4096 max: 2.0 -> 3.3 ms, a chain of
 *   ROWS selects per vector), on two faster (3.1 -> 1.6 ms: row by row
 *   each thread streamed one run of 8 KiB a row and ran slower than one
 *   thread alone over whole rows; Zen 5 VM, 2026-11-29).
 *
 * A reduction over the innermost axis is the row rule's (rule_reduce.c);
 * one whose last loop is a reduce loop (sum over axes (0, 2)) is left as
 * it is.
 */
#include "schedule/schedule.h"

#include <string.h>

#include "schedule/block_util.h"
#include "support/common.h"

enum { CHUNK_BYTES = 4096, MAX_LOOPS = MT_MAX_RANK + 2, ROWS = 4 };

typedef struct colnest {
    const mt_tstmt *loops[MAX_LOOPS];
    int n;
    const mt_tstmt *block;
    int first_r, last_r; /* the reduce loops [first_r, last_r] */
} colnest;

static bool match(const mt_tstmt *s, colnest *c) {
    memset(c, 0, sizeof *c);
    while (s->kind == TS_FOR) {
        int64_t m;
        if (c->n == MAX_LOOPS || s->for_kind != MT_FOR_SERIAL || !mt_te_is_const_int(s->min, &m) || m != 0)
            return false;
        c->loops[c->n++] = s;
        s = s->body;
    }
    if (c->n < 2 || s->kind != TS_BLOCK || !s->init || s->predicate || s->nallocs || s->niters != c->n)
        return false;
    c->block = s;
    c->first_r = -1;
    for (int d = 0; d < c->n; d++) {
        const mt_texpr *iv = s->iter_values[d];
        if (iv->kind != TE_VAR || iv->var != c->loops[d]->var) return false;
        for (int e = 0; e < c->n; e++)
            if (mt_texpr_uses_var(c->loops[d]->extent, c->loops[e]->var)) return false;
        bool red = s->iters[d].kind == MT_ITER_REDUCE;
        if (red && c->first_r >= 0 && c->last_r != d - 1) return false; /* [S*, R+, S+] only */
        if (red && c->first_r < 0) c->first_r = d;
        if (red) c->last_r = d;
    }
    return c->first_r >= 0 && c->last_r < c->n - 1 && mt_blk_contiguous_suffix(s, c->last_r + 1);
}

/* Whether the innermost reduce loop can take ROWS rows at a time (see the
 * top): its extent a constant multiple of ROWS, at least 2 * ROWS; and
 * the update an add (sums), or, with any (max and min: a select), one
 * that is not a sum. */
static bool rows_fit_any(const colnest *c, bool any) {
    const mt_tstmt *st = c->block->body;
    int64_t r;
    return st->kind == TS_STORE && (st->value->kind == TE_ADD || any) &&
           mt_te_is_const_int(c->loops[c->last_r]->extent, &r) && r >= 2 * ROWS && r % ROWS == 0;
}

static bool rows_fit(const colnest *c) { return rows_fit_any(c, false); }

/* The constant width of the fused trailing spatial loops, or 0. */
static int64_t columns(const colnest *c) {
    int64_t n = 1, e;
    for (int d = c->last_r + 1; d < c->n; d++) {
        if (!mt_te_is_const_int(c->loops[d]->extent, &e)) return 0;
        n *= e;
    }
    return n;
}

/* Columns per chunk: CHUNK_BYTES of output, or more -- up to half the
 * target's L1 -- when the columns would still give every core a chunk:
 * each row of a chunk is one contiguous run of x, and a run of a page or
 * less (4 KiB) is where the hardware prefetcher stops (sum(x, axis=0) of
 * 4096 x 4096 float32 ran at 44 % of STREAM with 4 KiB runs). */
static int64_t chunk_elems(mt_sched *s, const colnest *c, int64_t es) {
    const mt_target_desc *tg = mt_tfunc_target(s->func);
    int64_t n = columns(c), e, cores = tg->cores > 1 ? tg->cores : 1, most = tg->l1d_bytes / 2;
    if (n <= 0) return CHUNK_BYTES / es; /* symbolic (or no) columns */
    for (int d = 0; d < c->first_r; d++) /* outer spatial loops: chunks too */
        if (mt_te_is_const_int(c->loops[d]->extent, &e) && e > 0) cores = (cores + e - 1) / e;
    int64_t bytes = n * es / cores;
    if (bytes > most) bytes = most;
    if (bytes < CHUNK_BYTES) bytes = CHUNK_BYTES;
    int64_t vl = mt_target_lanes(tg, c->block->body->buf->dtype), want = bytes / es;
    if (rows_fit(c)) /* rows at once: a divisor of the columns, so that the splits are exact */
        for (int64_t w = want / vl * vl; vl > 1 && w * es >= CHUNK_BYTES && 2 * w >= want && w >= vl; w -= vl)
            if (n % w == 0) return w;
    return want;
}

/* ROWS rows of the innermost reduce loop at a time (see the top), when
 * they and the chunk's vectors divide its extents: whether it was done
 * (false: s is to be dropped). */
static bool rows_at_once(mt_sched *s, const colnest *c, mt_tvar *ji, int64_t chunk, int64_t ncols) {
    mt_arena *a = s->arena;
    const mt_target_desc *tg = mt_tfunc_target(s->func);
    int64_t vl = mt_target_lanes(tg, c->block->body->buf->dtype);
    if (vl < 2 || chunk % vl || ncols <= 0 || ncols % chunk || !rows_fit_any(c, tg->cores > 1)) return false;
    mt_tvar *ro, *ri, *jv, *jl;
    return mt_sched_split(s, c->loops[c->last_r]->var, mt_te_i64(a, ROWS), &ro, &ri) &&
           mt_sched_split(s, ji, mt_te_i64(a, vl), &jv, &jl) && mt_sched_reorder(s, ri, jv) &&
           mt_sched_unroll(s, ri) && mt_sched_vectorize(s, jl);
}

static bool schedule(mt_sched *s, const colnest *c) {
    mt_arena *a = s->arena;
    const mt_tstmt *st = c->block->body;
    int64_t es = (int64_t)mt_dtype_size(st->buf->dtype);
    mt_tvar *j = c->loops[c->last_r + 1]->var, *jo, *ji, *par;
    for (int d = c->last_r + 2; d < c->n; d++) /* the trailing spatial loops: one flat loop */
        if (!mt_sched_fuse(s, j, c->loops[d]->var, &j)) return false;
    int64_t chunk = chunk_elems(s, c, es > 0 ? es : 1);
    if (!mt_sched_split(s, j, mt_te_i64(a, chunk), &jo, &ji)) return false;
    for (int d = c->last_r; d >= c->first_r; d--)
        if (!mt_sched_reorder(s, c->loops[d]->var, jo)) return false;
    par = jo;
    if (c->first_r > 0) {
        mt_tvar *outer = c->loops[0]->var;
        for (int d = 1; d < c->first_r; d++)
            if (!mt_sched_fuse(s, outer, c->loops[d]->var, &outer)) return false;
        if (!mt_sched_fuse(s, outer, jo, &par)) return false;
    }
    if (!mt_sched_decompose_reduction(s, c->block->name, c->loops[c->first_r]->var)) return false;
    int64_t ext;
    const mt_tstmt *pl = mt_sched_get_loop(s, par);
    if (!mt_te_is_const_int(pl->extent, &ext) || ext > 1) mt_sched_parallel(s, par);
    mt_sched trial = *s; /* rows at once, or the plain vector loop */
    if (rows_at_once(&trial, c, ji, chunk, columns(c))) {
        *s = trial;
        return true;
    }
    mt_sched_vectorize(s, ji);
    return true;
}

bool mt_schedule_colreduce_nest(mt_sched *s, const mt_tstmt *nest) {
    colnest c;
    if (!match(nest, &c)) return false;
    mt_sched trial = *s; /* all or nothing: a refused step leaves s as it was */
    if (!schedule(&trial, &c)) return false;
    *s = trial;
    return true;
}
