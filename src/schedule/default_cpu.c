/*
 * default_cpu.c -- the default CPU schedule rules.
 *
 * Rules are tried per loop nest (each top-level statement of the function's
 * body), first match wins: the elementwise/injective rule below, the
 * column-reduction rule (rule_colreduce.c: reductions over outer axes), and
 * the fallback, which leaves the nest as it is (always correct; LLVM's loop
 * vectorizer takes the innermost loop because buffer parameters are
 * noalias).
 *
 * Matmul and row reductions have rules of their own, which run before this
 * one as pipeline passes (src/pipeline.c): schedule_matmul (rule_matmul.c:
 * float32/float64 matmuls, batched or not, with their elementwise
 * epilogues; rule_matvec.c for few rows times a transposed B) and
 * schedule_reduce (rule_reduce.c: reductions over the innermost axis with
 * their row-wise stages, softmax and layer_norm among them). They emit the
 * lowered form, which has no blocks and so matches nothing here. A nest
 * with a reduction that reaches this file is one those rules do not take
 * (an integer matmul, a reduction over an outer axis, ...), and it gets the
 * fallback.
 *
 * The injective rule. It matches a perfect nest of serial loops from 0 around
 * exactly one block whose iteration variables are all spatial and bound one
 * to one, in order, to the loops (what legalization, fusion and
 * inline_producers make of an elementwise or broadcast chain), with no init,
 * whose body is one or more stores `B[v0, ..., vk] = value` with exactly the
 * iteration variables as indices (so no two iterations write the same
 * element), to distinct buffers that the block does not read.
 *
 *  1. Fusion. The nest is split into a prefix of loops and a suffix that is
 *     fused into one flat inner loop. The suffix [j, k] is the longest one
 *     such that every access of the block is either invariant in the suffix
 *     variables or ends with exactly those variables, in order, over dims
 *     equal to the (constant) loop extents, e.g. `a[v0, v1]` and `c[v0, 0]`
 *     but not `b[v1]` for j = 0. Then `(f // c) * c + f % c` in the
 *     flattened indices simplifies back to f and the inner loop stays
 *     affine, hence vectorizable: an elementwise nest becomes one flat loop,
 *     a row broadcast keeps its row loop outside. Loop extents inside the
 *     suffix after its first loop must be constants (the simplifier proves
 *     the identity only for constant divisors). The prefix, if any, is fused
 *     into one outer loop too (its indices are loop invariants).
 *  2. Parallel chunks. The outer loop (the flat loop, or the fused prefix
 *     when there is one) is split into chunks of G elements of output, G =
 *     64 KiB / element size (rows of the prefix: ceil(G / inner extent)),
 *     and the chunk loop is made parallel. The tail is the split's clamped
 *     last chunk.
 *  3. Vectors. The innermost loop (the flat loop, or the inner part of its
 *     split) is marked `vectorized` when every access in it is contiguous
 *     in its variable or invariant (always for a fused suffix, step 1; a
 *     single inner loop is checked: a transpose's strided reads are left
 *     to LLVM's cost model, not forced into gathers), so the vectorize pass
 *     (passes/tir/vectorize.c) turns it into 64-byte vector steps and a
 *     scalar tail; what that pass cannot take (other dtypes, the variable
 *     used as a value) stays a loop for LLVM's vectorizer. A single inner
 *     loop whose indices are its variable up to constant clamps, under a
 *     T.Select on it against a constant (concat along the last axis), is
 *     vectorized too: the partition TIR pass cuts it at that point and each
 *     part is a contiguous copy (clamped_inner). A nest
 *     with constant extents and at most one chunk stays serial; with
 *     symbolic extents the chunk count is computed at run time and the
 *     runtime runs a single chunk inline, without waking threads.
 *  4. Transposes. When some load's last index is the variable of another
 *     loop p than the innermost (it reads along p, the store writes along
 *     the innermost loop), steps 1-3 would use one element of every cache
 *     line read. Instead p and the innermost loop are split by a cache line
 *     of elements, the two inner parts moved innermost, p's outer part
 *     moved inside the other loops outside the tile (the reads continue
 *     their rows from tile to tile), the tile's inner loop vectorized (a
 *     row loaded along the input, a strided T.Ramp, and stored whole, so it
 *     can stream), and the loops outside the tile fused into parallel
 *     chunks (schedule_transposed): each tile reads and writes whole lines.
 *
 * The chunk count is not tied to the thread count: mt_parallel_for gives
 * each thread one contiguous range of chunks, so many chunks cost a few
 * nanoseconds each (a loop trip) and balance better than few, and the
 * compiled code and its dumps do not depend on the context's num_threads.
 * The 64 KiB floor keeps the fork/join (microseconds) small next to the work
 * of a chunk (about 1.6 us of memory traffic per 64 KiB at 40 GB/s).
 */
#include "schedule/schedule.h"

#include <string.h>

#include "schedule/knobs.h"
#include "schedule/primitives.h"
#include "support/common.h"

enum { CHUNK_BYTES = 64 * 1024, MAX_NEST = MT_MAX_RANK + 8 };

/* ---- matching -------------------------------------------------------------- */

typedef struct access {
    const mt_tbuffer *buf;
    mt_texpr *const *idx;
    int nidx;
    bool load;              /* a load (else a store) */
} access;

typedef struct nest {
    const mt_tstmt *loops[MAX_NEST];
    int n;                  /* loops, outermost first */
    const mt_tstmt *block;
    MT_VEC(access) acc;     /* every load and store of the block */
    const mt_tbuffer *out[MAX_NEST]; /* stored buffers */
    int nout;
} nest;

typedef struct collect {
    mt_arena *a;
    nest *n;
} collect;

static void collect_expr(mt_tvisitor *v, const mt_texpr *e) {
    collect *c = v->ctx;
    if (e->kind == TE_LOAD) {
        access x = {e->buf, e->args, e->nargs, true};
        MT_VEC_PUSH(c->a, &c->n->acc, x);
    }
    mt_tvisit_expr_children(v, e);
}

static bool is_var(const mt_texpr *e, const mt_tvar *v) { return e->kind == TE_VAR && e->var == v; }

typedef struct uses_any {
    const nest *n;
    int from;   /* iteration variables [from, n) */
    bool found;
} uses_any;

static void uses_any_expr(mt_tvisitor *v, const mt_texpr *e) {
    uses_any *u = v->ctx;
    if (u->found) return;
    if (e->kind == TE_VAR)
        for (int d = u->from; d < u->n->n; d++)
            if (e->var == u->n->block->iters[d].var) u->found = true;
    mt_tvisit_expr_children(v, e);
}

/* Does e use iteration variables from..n-1 of the nest? */
static bool uses_iters(const nest *n, int from, const mt_texpr *e) {
    uses_any u = {n, from, false};
    mt_tvisitor v = {uses_any_expr, NULL, &u};
    mt_tvisit_expr(&v, e);
    return u.found;
}

typedef struct uses_loop {
    const nest *n;
    bool found;
} uses_loop;

static void uses_loop_expr(mt_tvisitor *v, const mt_texpr *e) {
    uses_loop *u = v->ctx;
    if (e->kind == TE_VAR)
        for (int d = 0; d < u->n->n; d++)
            if (e->var == u->n->loops[d]->var) u->found = true;
    mt_tvisit_expr_children(v, e);
}

static bool uses_loops(const nest *n, const mt_texpr *e) {
    uses_loop u = {n, false};
    mt_tvisitor v = {uses_loop_expr, NULL, &u};
    mt_tvisit_expr(&v, e);
    return u.found;
}

static bool match_store(mt_arena *a, nest *n, const mt_tstmt *s, mt_tvisitor *cv) {
    const mt_tstmt *b = n->block;
    if (s->kind != TS_STORE || s->nidx != b->niters || n->nout == MAX_NEST) return false;
    for (int d = 0; d < s->nidx; d++)
        if (!is_var(s->idx[d], b->iters[d].var)) return false;
    for (int i = 0; i < n->nout; i++)
        if (n->out[i] == s->buf) return false;
    n->out[n->nout++] = s->buf;
    access x = {s->buf, s->idx, s->nidx, false};
    MT_VEC_PUSH(a, &n->acc, x);
    mt_tvisit_expr(cv, s->value);
    return true;
}

/* The injective nest at s, or false. */
static bool match_nest(mt_arena *a, const mt_tstmt *s, nest *n) {
    memset(n, 0, sizeof *n);
    while (s->kind == TS_FOR) {
        int64_t m;
        if (n->n == MAX_NEST || s->for_kind != MT_FOR_SERIAL || !mt_te_is_const_int(s->min, &m) ||
            m != 0)
            return false;
        n->loops[n->n++] = s;
        s = s->body;
    }
    if (n->n == 0 || s->kind != TS_BLOCK) return false;
    n->block = s;
    const mt_tstmt *b = s;
    if (b->niters != n->n || b->init || b->nallocs) return false;
    for (int d = 0; d < n->n; d++) {
        if (b->iters[d].kind != MT_ITER_SPATIAL || !is_var(b->iter_values[d], n->loops[d]->var))
            return false;
        if (uses_loops(n, n->loops[d]->extent)) return false;
    }
    collect c = {a, n};
    mt_tvisitor cv = {collect_expr, NULL, &c};
    if (b->predicate) mt_tvisit_expr(&cv, b->predicate);
    if (b->body->kind == TS_SEQ) {
        if (b->body->nstmts == 0) return false;
        for (int i = 0; i < b->body->nstmts; i++)
            if (!match_store(a, n, b->body->stmts[i], &cv)) return false;
    } else if (!match_store(a, n, b->body, &cv)) {
        return false;
    }
    /* no iteration may read what another one writes */
    for (int i = 0; i < n->acc.len; i++)
        for (int o = 0; o < n->nout; o++)
            if (n->acc.data[i].load && n->acc.data[i].buf == n->out[o]) return false;
    return true;
}

/* Can loops [j, n) be fused into one loop with affine flattened accesses? */
static bool fusable_suffix(const nest *n, int j) {
    int len = n->n - j;
    if (len == 1) return true;
    int64_t ext[MAX_NEST];
    for (int d = j + 1; d < n->n; d++)
        if (!mt_te_is_const_int(n->loops[d]->extent, &ext[d])) return false;
    for (int i = 0; i < n->acc.len; i++) {
        const access *x = &n->acc.data[i];
        bool used = false;
        for (int d = 0; d < x->nidx; d++) used = used || uses_iters(n, j, x->idx[d]);
        if (!used) continue;
        if (x->nidx < len) return false;
        int lead = x->nidx - len;
        for (int d = 0; d < lead; d++)
            if (uses_iters(n, j, x->idx[d])) return false;
        for (int t = 0; t < len; t++) {
            if (!is_var(x->idx[lead + t], n->block->iters[j + t].var)) return false;
            int64_t dim;
            if (t > 0 && (!mt_te_is_const_int(x->buf->shape[lead + t], &dim) || dim != ext[j + t]))
                return false;
        }
    }
    return true;
}

/* Is every access contiguous in the innermost loop of the fused suffix
 * [j, n), or free of it? A suffix of two or more loops is (fusable_suffix);
 * a single loop is when its variable is only ever the last index. */
static bool contiguous_inner(const nest *n, int j) {
    if (n->n - j > 1) return true;
    const mt_tvar *v = n->block->iters[n->n - 1].var;
    for (int i = 0; i < n->acc.len; i++) {
        const access *x = &n->acc.data[i];
        for (int d = 0; d < x->nidx; d++) {
            if (d == x->nidx - 1 && is_var(x->idx[d], v)) continue;
            if (uses_iters(n, n->n - 1, x->idx[d])) return false;
        }
    }
    return true;
}

/* e is v plus a constant, clamped by constants (T.min(v, 2047), T.max(v -
 * 2048, 0): what concat reads each input at). */
static bool clamped_var(const mt_texpr *e, const mt_tvar *v) {
    int64_t c;
    if (is_var(e, v)) return true;
    if ((e->kind == TE_ADD || e->kind == TE_SUB) && mt_te_is_const_int(e->b, &c)) return clamped_var(e->a, v);
    if (e->kind == TE_MIN || e->kind == TE_MAX) {
        if (mt_te_is_const_int(e->b, &c)) return clamped_var(e->a, v);
        if (mt_te_is_const_int(e->a, &c)) return clamped_var(e->b, v);
    }
    return false;
}

typedef struct find_select {
    const mt_tvar *v;
    bool found;
} find_select;

static void find_select_expr(mt_tvisitor *t, const mt_texpr *e) {
    find_select *f = t->ctx;
    int64_t c;
    if (e->kind == TE_SELECT && (e->cond->kind == TE_LT || e->cond->kind == TE_GE) &&
        is_var(e->cond->a, f->v) && mt_te_is_const_int(e->cond->b, &c))
        f->found = true;
    mt_tvisit_expr_children(t, e);
}

/* A single inner loop whose accesses are contiguous but for clamps, under a
 * T.Select on its variable against a constant (concat along the last
 * axis): the partition TIR pass cuts the loop at that point, and in each
 * part the select and the clamps fold away, leaving contiguous copies. */
static bool clamped_inner(const nest *n, int j) {
    int64_t e;
    /* the partition pass cuts loops of constant extent only */
    if (n->n - j != 1 || !mt_te_is_const_int(n->loops[n->n - 1]->extent, &e)) return false;
    const mt_tvar *v = n->block->iters[n->n - 1].var;
    for (int i = 0; i < n->acc.len; i++) {
        const access *x = &n->acc.data[i];
        for (int d = 0; d < x->nidx; d++) {
            if (d == x->nidx - 1 && clamped_var(x->idx[d], v)) continue;
            if (uses_iters(n, n->n - 1, x->idx[d])) return false;
        }
    }
    find_select f = {v, false};
    mt_tvisitor t = {find_select_expr, NULL, &f};
    mt_tvisit_stmt(&t, n->block->body);
    return f.found;
}

/* ---- the rule -------------------------------------------------------------- */

/* Fuses loops [from, to) of the nest into one; returns its variable. */
static mt_tvar *fuse_range(mt_sched *s, const nest *n, int from, int to) {
    mt_tvar *v = n->loops[from]->var;
    for (int d = from + 1; d < to; d++)
        if (!mt_sched_fuse(s, v, n->loops[d]->var, &v)) return NULL;
    return v;
}

/* ---- transposes --------------------------------------------------------------- */

/* The loop (< n - 1) whose variable is the last index of a load, when the
 * innermost loop's is not: that load is contiguous along another loop than
 * the store (a transpose). -1 when there is none. */
static int transposed_loop(const nest *n) {
    const mt_tvar *inner = n->block->iters[n->n - 1].var;
    for (int i = 0; i < n->acc.len; i++) {
        const access *x = &n->acc.data[i];
        if (!x->load || x->nidx == 0 || is_var(x->idx[x->nidx - 1], inner)) continue;
        for (int d = 0; d < n->n - 1; d++)
            if (is_var(x->idx[x->nidx - 1], n->block->iters[d].var)) return d;
    }
    return -1;
}

static bool at_least(const mt_tstmt *loop, int64_t t) {
    int64_t e;
    return !mt_te_is_const_int(loop->extent, &e) || e >= t;
}

/* The dtypes the vectorize pass makes vector steps of; a tile of others
 * stays scalar (a forced LLVM vectorizer would gather). */
static bool vector_dtypes(const nest *n) {
    for (int i = 0; i < n->acc.len; i++) {
        mt_dtype t = n->acc.data[i].buf->dtype;
        if (t != MT_FLOAT32 && t != MT_FLOAT64 && t != MT_INT32 && t != MT_INT64) return false;
    }
    return true;
}

/* Tiles per band (tile_transpose): the knob transpose_band, a band's width
 * along the input rows in bytes of the output's elements, over a tile's
 * (0: no bands). */
static int64_t band_tiles(const mt_sched *s, const nest *n, int64_t t) {
    int64_t es = (int64_t)mt_dtype_size(n->out[0]->dtype);
    int64_t bytes = mt_knob_get(s->func, "schedule", "transpose_band", 256);
    return bytes / (t * es);
}

/* A transpose (transposed_loop p): loops p and the innermost one are split
 * by T, a cache line of elements, and the two inner parts moved innermost,
 * p's first: every T x T tile reads T lines and writes T lines whole, where
 * the nest as written read one element of each line it brought in (a
 * line was used again only after a whole plane). The tile's inner loop is
 * vectorized: each output row of the tile is one vector, loaded along p
 * (a strided T.Ramp, which transpose_tiles turns into T row loads and
 * shuffles in registers) and stored whole, so that a large output
 * streams past the caches (docs/codegen.md). p's outer part is moved inside
 * the other loops outside the tile: consecutive tiles continue the rows
 * they read, so the reads run through memory in order and the hardware
 * prefetcher follows them, while the writes, whole lines that stream, may
 * go anywhere. When a row holds more tiles than a band (256 bytes of it:
 * the knob transpose_band) and their count is a multiple of it, p's tiles
 * go by bands: a band's tiles all the way down the other axis, then the
 * next band. Without bands, a row of tiles writes one line to each of
 * T x tiles output lines, each in a page of its own once the rows pass
 * 4 KiB (4096 x 4096 float32: 4096 pages for every 16 input rows, more
 * than the TLBs hold); a band writes to 64 lines (float32) and comes back
 * to each for its next line after 256 bytes of each of 16 input rows.
 * Measured on 4096 x 4096, 2048 x 8192, 8192 x 2048 and the transposes of
 * 256^3 and 64 x 1024^2 (one thread): bands of 256 or 512 bytes take
 * 0.65-0.9 of the time without, larger bands gain less; transpose(a, (1, 2, 0))
 * of 256^3, whose reads are the scattered side, is the exception (1.05).
 * The loops outside the tile are fused and run in parallel chunks of about
 * `grain` elements. */
static bool tile_transpose(mt_sched *s, const nest *n, int p, int64_t t, int64_t grain, bool serial) {
    int last = n->n - 1;
    mt_arena *a = s->arena;
    mt_tvar *po, *pi, *lo, *li;
    if (!mt_sched_split(s, n->loops[p]->var, mt_te_i64(a, t), &po, &pi)) return false;
    if (!mt_sched_split(s, n->loops[last]->var, mt_te_i64(a, t), &lo, &li)) return false;
    /* pi inward past the loops between it and lo, and past lo; then po
     * inward past the same loops */
    for (int d = p + 1; d < last; d++)
        if (!mt_sched_reorder(s, pi, n->loops[d]->var)) return false;
    if (!mt_sched_reorder(s, pi, lo)) return false;
    for (int d = p + 1; d < last; d++)
        if (!mt_sched_reorder(s, po, n->loops[d]->var)) return false;
    if (!mt_sched_reorder(s, po, lo)) return false;
    mt_tvar *outer = NULL, *band = NULL;
    int64_t tiles, b = band_tiles(s, n, t);
    if (b > 1 && mt_te_is_const_int(mt_sched_get_loop(s, po)->extent, &tiles) && tiles > b && tiles % b == 0) {
        if (!mt_sched_split(s, po, mt_te_i64(a, b), &band, &po)) return false;
        if (!mt_sched_reorder(s, lo, band)) return false;
    }
    for (int d = 0; d < last; d++) {
        if (d == p) continue;
        if (!outer) outer = n->loops[d]->var;
        else if (!mt_sched_fuse(s, outer, n->loops[d]->var, &outer)) return false;
    }
    if (band && outer && !mt_sched_fuse(s, outer, band, &outer)) return false;
    if (band && !outer) outer = band;
    if (outer && !mt_sched_fuse(s, outer, lo, &outer)) return false;
    if (!mt_sched_fuse(s, outer ? outer : lo, po, &outer)) return false;
    if (vector_dtypes(n)) mt_sched_vectorize(s, li);
    int64_t per = grain / (t * t) > 1 ? grain / (t * t) : 1, ext;
    const mt_tstmt *ol = mt_sched_get_loop(s, outer);
    if (serial || (mt_te_is_const_int(ol->extent, &ext) && ext <= per)) return true;
    mt_tvar *chunks;
    if (per > 1 && !mt_sched_split(s, outer, mt_te_i64(a, per), &chunks, NULL)) return true;
    mt_sched_parallel(s, per > 1 ? chunks : outer);
    return true;
}

static bool schedule_transposed(mt_sched *s, const nest *n, int64_t grain, bool serial) {
    int p = transposed_loop(n);
    if (p < 0) return false;
    int64_t t = mt_tfunc_target(s->func)->cache_line_bytes / (int64_t)mt_dtype_size(n->out[0]->dtype);
    if (t < 2 || !at_least(n->loops[p], t) || !at_least(n->loops[n->n - 1], t)) return false;
    mt_tfunc *before = s->func;
    if (tile_transpose(s, n, p, t, grain, serial)) return true;
    s->func = before; /* a refusal halfway: the nest as it was */
    return false;
}

static void schedule_injective(mt_sched *s, const nest *n) {
    mt_arena *a = s->arena;
    int64_t es = (int64_t)mt_dtype_size(n->out[0]->dtype);
    int64_t grain = mt_knob_get(s->func, "schedule", "chunk_kib", CHUNK_BYTES / 1024) * 1024 / (es > 0 ? es : 1);
    if (grain < 1) grain = 1;
    bool serial = !mt_knob_get(s->func, "schedule", "parallel", 1);
    int j = n->n - 1;
    while (j > 0 && fusable_suffix(n, j - 1)) j--;
    if (!contiguous_inner(n, j) && schedule_transposed(s, n, grain, serial)) return;
    j = n->n - 1;
    while (j > 0 && fusable_suffix(n, j - 1)) j--;

    mt_tvar *par;        /* the loop to cut into parallel chunks */
    mt_texpr *per_chunk; /* its iterations per chunk */
    bool vec = contiguous_inner(n, j) || clamped_inner(n, j);
    mt_tvar *inner = fuse_range(s, n, j, n->n);
    if (!inner) return;
    if (j == 0) {
        par = inner;
        per_chunk = mt_te_i64(a, grain);
    } else {
        mt_tvar *outer = fuse_range(s, n, 0, j);
        if (!outer) return;
        const mt_tstmt *ol = mt_sched_get_loop(s, outer), *il = mt_sched_get_loop(s, inner);
        int64_t rows, m;
        if (mt_te_is_const_int(ol->extent, &rows) && rows == 1) {
            par = inner; /* one row: chunk the row itself */
            per_chunk = mt_te_i64(a, grain);
        } else {
            par = outer;
            if (mt_te_is_const_int(il->extent, &m))
                per_chunk = mt_te_i64(a, m <= 0 ? 1 : (grain + m - 1) / m);
            else
                per_chunk = mt_te_bin(a, TE_MAX, mt_te_i64(a, 1),
                                      mt_te_bin(a, TE_FLOORDIV, mt_te_i64(a, grain),
                                                mt_te_cast(a, MT_INT64, il->extent)));
        }
    }
    const mt_tstmt *pl = mt_sched_get_loop(s, par);
    int64_t ext, per;
    bool cper = mt_te_is_const_int(per_chunk, &per);
    if (serial || (mt_te_is_const_int(pl->extent, &ext) && cper && ext <= per)) { /* one chunk: serial */
        if (vec) mt_sched_vectorize(s, inner);
        return;
    }
    if (cper && per == 1) {
        mt_sched_parallel(s, par);
        if (vec && par != inner) mt_sched_vectorize(s, inner);
        return;
    }
    mt_tvar *chunks, *rest;
    if (!mt_sched_split(s, par, per_chunk, &chunks, &rest)) return;
    mt_sched_parallel(s, chunks);
    if (vec) mt_sched_vectorize(s, par == inner ? rest : inner);
}

mt_tfunc *mt_schedule_default_cpu(mt_arena *a, mt_tfunc *f) {
    if (!f->body) return f;
    mt_sched s;
    mt_sched_init(&s, a, f);
    const mt_tstmt *body = f->body;
    int count = body->kind == TS_SEQ ? body->nstmts : 1;
    for (int i = 0; i < count; i++) {
        const mt_tstmt *st = body->kind == TS_SEQ ? body->stmts[i] : body;
        nest n;
        if (match_nest(a, st, &n)) schedule_injective(&s, &n);
        else if (!mt_schedule_colreduce_nest(&s, st)) mt_schedule_fullreduce_nest(&s, st);
    }
    return s.func == f ? f : mt_knobs_mark(a, s.func, f, "schedule");
}
