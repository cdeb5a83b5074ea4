/*
 * rule_fullreduce.c -- reductions whose innermost loop is a reduce loop and
 * that the row rule does not take: over every axis (`sum(a)`, `max(a)`,
 * `mean(a)`), over several axes including the last (`sum(a, axis=(0, 2))`,
 * `sum(a, axis=(1, 2))`); a default CPU rule tried by default_cpu.c after
 * the injective and column rules.
 *
 * The fallback runs such a nest as one serial chain of scalar operations
 * (a float sum cannot be vectorized without reassociating it): `sum(a)` of
 * 4096 x 4096 at 0.34x NumPy, 18 % of STREAM. The rule gives each thread
 * and each vector lane partial results of its own (rfactor), then combines
 * them. It matches a perfect nest of serial loops from 0 around one
 * reduction block whose iteration variables are bound one to one, in
 * order, to the loops, whose last loop is a reduce loop walked
 * contiguously by every access (its variable is the last index), and
 * schedules it with primitives only (a refusal leaves the nest to the
 * fallback, unchanged):
 *
 *   1. the spatial loops move outside the reduce loops (reorder swaps a
 *      spatial loop with a reduce loop, never two reduce loops);
 *   2. the trailing reduce loops that every access walks contiguously are
 *      fused into one flat loop r, split into (ro, ri) with ri = LANES
 *      elements (4 vector steps: 4 independent accumulators per lane); a
 *      constant r of at most LANES is not split;
 *   3. the loops that become parallel chunks:
 *      - with few or no outputs ("reduce" mode: no spatial loop, or
 *        constant spatial extents under 8 x cores), the outer reduce loops
 *        and ro are fused into one loop q and split into at most
 *        MAX_CHUNKS chunks (c, q2) of at least CHUNK_BYTES of input;
 *        rfactor over (c, ri): a partial result per chunk and lane,
 *        B_rf[s.., c, ri];
 *      - with many outputs ("spatial" mode), rfactor over ri only
 *        (B_rf[s.., ri]); then the spatial loops are fused and split into
 *        chunks (sc, si) of rows whose input per outer reduce iteration is
 *        SPATIAL_BYTES, si moved inside the outer reduce loops (a chunk
 *        streams contiguous blocks of the input while its partials stay in
 *        L1, as the column rule does);
 *   4. the chunk loop is parallel (when it may have more than one
 *      iteration), ri is vectorized: as an unrolled loop of single vector
 *      steps when it has a constant multiple of them, so that LLVM keeps
 *      the partials in registers across the loop around it.
 *
 *     sum(a), a (4096, 4096) float32, LANES = 64:
 *     for c in T.parallel(64):                       # 1 MiB of a each
 *         for q2, ri in T.grid(4096, 64):            # ri: 4 vector steps, unrolled
 *             lv_rf[c, ri] = lv_rf[c, ri] + a[(c * 4096 + q2) * 64 + ri]
 *     for c, ri in T.grid(64, 64): lv[()] = lv[()] + lv_rf[c, ri]   # in order
 *
 * (plus the fill of lv_rf with 0 before). A float sum is reassociated:
 * every partial result sums its elements in order, and the partials are
 * added in order of (chunk, lane), so the error is within the bound of
 * any summation order, (n - 1) u sum |x|, and in fact of about
 * (n / (chunks x LANES) + chunks x LANES) u sum |x|. max and min are
 * exact. A reduction over the innermost axis alone is the row rule's
 * (rule_reduce.c), one ending in a spatial loop the column rule's.
 */
#include "schedule/schedule.h"

#include <string.h>

#include "schedule/block_util.h"
#include "support/common.h"

enum {
    MAX_LOOPS = MT_MAX_RANK + 2,
    ACCUMULATORS = 4,             /* vector steps per lane group */
    CHUNK_BYTES = 64 * 1024,      /* reduce mode: the least input per chunk */
    MAX_CHUNKS = 64,              /* reduce mode: the most chunks (partials per lane) */
    SPATIAL_BYTES = 16 * 1024,    /* spatial mode: a chunk's input per outer reduce iteration */
    SPATIAL_PER_CORE = 8,         /* spatial mode from this many outputs per core */
};

typedef struct fnest {
    const mt_tstmt *loops[MAX_LOOPS];
    int n;
    const mt_tstmt *block;
    int t; /* the trailing contiguous reduce loops [t, n) */
} fnest;

static bool is_reduce(const fnest *c, int d) { return c->block->iters[d].kind == MT_ITER_REDUCE; }

static bool match(const mt_tstmt *s, fnest *c) {
    memset(c, 0, sizeof *c);
    while (s->kind == TS_FOR) {
        int64_t m;
        if (c->n == MAX_LOOPS || s->for_kind != MT_FOR_SERIAL || !mt_te_is_const_int(s->min, &m) || m != 0)
            return false;
        c->loops[c->n++] = s;
        s = s->body;
    }
    if (c->n < 1 || s->kind != TS_BLOCK || !s->init || s->predicate || s->nallocs || s->niters != c->n)
        return false;
    c->block = s;
    for (int d = 0; d < c->n; d++) {
        const mt_texpr *bv = s->iter_values[d];
        if (bv->kind != TE_VAR || bv->var != c->loops[d]->var) return false;
        for (int e = 0; e < c->n; e++)
            if (mt_texpr_uses_var(c->loops[d]->extent, c->loops[e]->var)) return false;
    }
    if (!is_reduce(c, c->n - 1) || !mt_blk_contiguous_suffix(c->block, c->n - 1)) return false;
    c->t = c->n - 1;
    while (c->t > 0 && is_reduce(c, c->t - 1) && mt_blk_contiguous_suffix(c->block, c->t - 1)) c->t--;
    return true;
}

static int64_t ceildiv(int64_t x, int64_t y) { return (x + y - 1) / y; }

/* The loop over v's extent (an int64 expression). */
static mt_texpr *extent_of(const mt_sched *s, mt_tvar *v) {
    return mt_te_cast(s->arena, MT_INT64, mt_sched_get_loop(s, v)->extent);
}

/* The lanes: vectorized; when their count is a constant multiple of a
 * vector step, as an unrolled loop of single vector steps, so that the
 * partials' addresses are constants in the loop around it (LLVM keeps
 * them in registers across it). */
static bool lanes_loop(mt_sched *s, mt_tvar *ri, int vl) {
    int64_t e;
    mt_tvar *o, *i;
    if (mt_te_is_const_int(mt_sched_get_loop(s, ri)->extent, &e) && e > vl && e % vl == 0 &&
        mt_sched_split(s, ri, mt_te_i64(s->arena, vl), &o, &i))
        return mt_sched_unroll(s, o) && mt_sched_vectorize(s, i);
    return mt_sched_vectorize(s, ri);
}

static bool schedule(mt_sched *s, const fnest *c) {
    mt_arena *a = s->arena;
    const mt_tstmt *st = c->block->body;
    const mt_target_desc *tg = mt_tfunc_target(s->func);
    int64_t es = (int64_t)mt_dtype_size(st->buf->dtype);
    if (es <= 0) es = 1;
    int64_t lanes = ACCUMULATORS * (int64_t)mt_target_lanes(tg, st->buf->dtype);
    int cores = tg->cores > 0 ? tg->cores : 1;
    const char *name = c->block->name;

    /* a row reduction (spatial loops, then only the flat row) with short
     * rows is left alone: partials per lane would add a pass over B_rf as
     * large as the input (the row rule, which runs first, takes the float
     * ones) */
    bool row = c->t > 0;
    for (int d = 0; d < c->t; d++) row = row && !is_reduce(c, d);
    int64_t re = 1;
    for (int d = c->t; d < c->n; d++) {
        int64_t e;
        if (!mt_te_is_const_int(c->loops[d]->extent, &e)) re = -1;
        else if (re > 0) re *= e;
    }
    if (row && re >= 0 && re < 2 * lanes) return false;

    /* 1. spatial loops outside, in order; then the outer reduce loops */
    mt_tvar *sp[MAX_LOOPS], *rout[MAX_LOOPS];
    int nsp = 0, nrout = 0;
    bool sp_const = true;
    int64_t sp_total = 1;
    for (int d = 0; d < c->t; d++) {
        mt_tvar *v = c->loops[d]->var;
        if (is_reduce(c, d)) {
            rout[nrout++] = v;
            continue;
        }
        for (int k = nrout - 1; k >= 0; k--) /* v moves out past the reduce loops above it */
            if (!mt_sched_reorder(s, rout[k], v)) return false;
        sp[nsp++] = v;
        int64_t e;
        if (mt_te_is_const_int(c->loops[d]->extent, &e)) sp_total *= e;
        else sp_const = false;
    }

    /* 2. the trailing reduce loops: one flat loop r, then lanes */
    mt_tvar *r = c->loops[c->t]->var, *ro = NULL, *ri;
    for (int d = c->t + 1; d < c->n; d++)
        if (!mt_sched_fuse(s, r, c->loops[d]->var, &r)) return false;
    mt_texpr *Ee = extent_of(s, r); /* elements of one flat row */
    int64_t E = 0;
    bool e_const = mt_te_is_const_int(Ee, &E);
    if (e_const && E <= 0) return false; /* no elements: nothing to split (and E divides below) */
    if (e_const && E <= lanes) {
        ri = r;
    } else if (!mt_sched_split(s, r, mt_te_i64(a, lanes), &ro, &ri)) {
        return false;
    }

    /* 3. the chunks */
    bool spatial = nsp > 0 && (!sp_const || sp_total >= (int64_t)SPATIAL_PER_CORE * cores);
    mt_tvar *par;
    if (!spatial) {
        mt_tvar *q[MAX_LOOPS + 1], *cv, *rf[2];
        int nq = 0;
        for (int k = 0; k < nrout; k++) q[nq++] = rout[k];
        if (ro) q[nq++] = ro;
        if (nq == 0) { /* nothing to chunk: partials per lane only */
            rf[0] = ri;
            return mt_sched_rfactor(s, name, rf, 1) && lanes_loop(s, ri, (int)(lanes / ACCUMULATORS));
        }
        mt_tvar *qv = q[0];
        for (int k = 1; k < nq; k++)
            if (!mt_sched_fuse(s, qv, q[k], &qv)) return false;
        int64_t per_iter = ro ? lanes : E; /* elements of one iteration of qv */
        mt_texpr *qext = extent_of(s, qv), *per_chunk;
        int64_t qe;
        if (mt_te_is_const_int(qext, &qe)) {
            int64_t chunks = ceildiv(qe * per_iter * es, CHUNK_BYTES);
            chunks = chunks < 1 ? 1 : chunks > MAX_CHUNKS ? MAX_CHUNKS : chunks;
            per_chunk = mt_te_i64(a, qe <= 0 ? 1 : ceildiv(qe, chunks));
        } else { /* T.max(least, ceildiv(qext, MAX_CHUNKS)) */
            mt_texpr *least = mt_te_i64(a, ceildiv(CHUNK_BYTES, per_iter * es));
            mt_texpr *spread = mt_te_bin(a, TE_FLOORDIV, mt_te_bin(a, TE_ADD, qext, mt_te_i64(a, MAX_CHUNKS - 1)),
                                         mt_te_i64(a, MAX_CHUNKS));
            per_chunk = mt_te_bin(a, TE_MAX, least, spread);
        }
        if (!mt_sched_split(s, qv, per_chunk, &cv, NULL)) return false;
        rf[0] = cv, rf[1] = ri;
        if (!mt_sched_rfactor(s, name, rf, 2)) return false;
        par = cv;
    } else {
        if (!mt_sched_rfactor(s, name, &ri, 1)) return false;
        mt_tvar *f = sp[0], *sc, *si;
        for (int k = 1; k < nsp; k++)
            if (!mt_sched_fuse(s, f, sp[k], &f)) return false;
        /* rows per chunk: SPATIAL_BYTES of input per outer reduce iteration,
         * but at least 4 chunks per core when there are that many rows */
        mt_texpr *rows;
        int64_t fe;
        if (e_const) {
            int64_t want = ceildiv(SPATIAL_BYTES, E * es);
            if (mt_te_is_const_int(extent_of(s, f), &fe) && want > fe / (4 * cores)) want = fe / (4 * cores);
            rows = mt_te_i64(a, want < 1 ? 1 : want);
        } else { /* T.max(1, (SPATIAL_BYTES / es) // E) */
            rows = mt_te_bin(a, TE_MAX, mt_te_i64(a, 1),
                             mt_te_bin(a, TE_FLOORDIV, mt_te_i64(a, SPATIAL_BYTES / es), Ee));
        }
        if (!mt_sched_split(s, f, rows, &sc, &si)) return false;
        for (int k = 0; k < nrout; k++)
            if (!mt_sched_reorder(s, si, rout[k])) return false;
        par = sc;
    }

    /* 4. threads and vectors */
    int64_t pe;
    if (!mt_te_is_const_int(mt_sched_get_loop(s, par)->extent, &pe) || pe > 1)
        if (!mt_sched_parallel(s, par)) return false;
    return lanes_loop(s, ri, mt_target_lanes(tg, st->buf->dtype));
}

bool mt_schedule_fullreduce_nest(mt_sched *s, const mt_tstmt *nest) {
    fnest c;
    if (!match(nest, &c)) return false;
    mt_sched trial = *s; /* all or nothing: a refused step leaves s as it was */
    if (!schedule(&trial, &c)) return false;
    *s = trial;
    return true;
}
