/*
 * rule_reduce_prims.c -- the row-reduction rule's schedule of one
 * reduction over the row as a trace of schedule primitives.
 *
 * When. The matched stages (rule_reduce_match.c) are one RED -- sum,
 * max, min (legalize's NaN-propagating form too) over the last axis,
 * keepdims or not, an elementwise producer fused in -- then only ROW
 * stages (mean's division), as legalized (not the swapped nest of
 * rule_reduce_inner.c), of a constant row length N >= the lanes (the rows
 * M may be symbolic: a batch; chunks of a constant count of rows then),
 * row by row (block_rows 1, which such a function gets: blocks need more
 * than one pass). Everything else (softmax's exps stored once, layer_norm,
 * several passes, symbolic shapes) is the lowered form of rule_reduce.c,
 * one `apply_rule` step when printed.
 *
 * What. The lowered form's algorithm: per row, U accumulators of VL lanes
 * (the rule's knobs accumulators and lanes) over the row, folded into one
 * value; the rows in parallel chunks of the rule's size:
 *
 *     r0, r1, r2 = split(r, [None, U, VL])
 *     rfactor(b, [r1, r2])              partial results b_rf[o.., U, VL]
 *     reverse_compute_at(b, o)          their combination, per row (o
 *     compute_at(<b>_rf_init, o)        the innermost outer loop); their
 *     reverse_compute_at(row stage, o)  zeros; mean = sum / N
 *     row = fuse(o..)
 *     row0, row1 = split(row, [None, rows per chunk]); parallel(row0)
 *     unroll(r1); vectorize(r2)         U independent vector chains
 *     (zeros: unroll, vectorize)
 *     fuse the combination's loops, decompose_reduction, vectorize
 *
 * compact_buffers makes the partial results one U x VL local per row
 * (registers after SROA); the vectorized combination folds them in a tree
 * (vectorize.c); partition_tails peels a last partial block of U x VL and
 * its partial vector, as the lowered form's single vectors and tail.
 * Measured against the lowered form (in-process alternation, Zen 5, 2
 * threads, 2026-11-29): sum, max, mean over rows of 7 to 4096 within 2 % or faster
 * (docs/schedule.md, "The row-reduction rule").
 */
#include "schedule/block_util.h"
#include "schedule/primitives.h"
#include "schedule/rule_reduce.h"

/* The innermost `want` loops around block `name` (block_util.h). */
static bool loops_of(mt_sched *s, const char *name, mt_tvar **out, int want) {
    return mt_blk_last_loops(s, "reduce rule", name, out, want);
}

/* The function's blocks are exactly the stages, one RED then ROWs. */
static bool fits(rr *c, const mt_tfunc *f, const char **names) {
    int64_t n;
    if (c->ns < 1 || c->nst < 1 || c->nst > RR_MAXST || c->st[0].kind != ST_RED || c->st[0].also || c->block != 1 ||
        mt_rr_prefetch(c) || !mt_te_is_const_int(c->N, &n) || mt_rr_chunk_rows(c) < 0)
        return false;
    for (int i = 1; i < c->nst; i++)
        if (c->st[i].kind != ST_ROW) return false;
    mt_blk_stmts blocks = mt_blk_blocks_under(c->a, f->body);
    if (blocks.len != c->nst) return false;
    for (int i = 0; i < blocks.len; i++) {
        const mt_tstmt *b = blocks.data[i];
        if (b->body->kind != TS_STORE || b->body->buf != c->st[i].buf || !b->name) return false;
        names[i] = b->name;
    }
    return n >= mt_rr_lanes(c, c->st[0].buf->dtype);
}

/* The partial results' zeros and combination: their lanes vectorized, the
 * rest unrolled (a few vectors: they stay registers). */
static bool fill(mt_sched *s, const char *name, int n) {
    mt_tvar *l[2];
    if (!loops_of(s, name, l, n)) return false;
    return (n == 1 || mt_sched_unroll(s, l[0])) && mt_sched_vectorize(s, l[n - 1]);
}

static bool combination(mt_sched *s, const char *name, int n) {
    mt_tvar *l[2], *c;
    if (!loops_of(s, name, l, n)) return false;
    c = l[0];
    if (n == 2 && !mt_sched_fuse(s, l[0], l[1], &c)) return false;
    return mt_sched_decompose_reduction(s, name, c) && mt_sched_vectorize(s, c);
}

static bool schedule(mt_sched *s, rr *c, const char *const *names, int vl, int U, int64_t chunk) {
    mt_arena *a = s->arena;
    const char *red = names[0];
    mt_tvar *l[MT_MAX_RANK + 1], *row, *t, *r1 = NULL, *r2, *named[2];
    if (!loops_of(s, red, l, c->ns + 1)) return false;
    if (!mt_sched_split(s, l[c->ns], mt_te_i64(a, vl), &t, &r2)) return false;
    if (U > 1 && !mt_sched_split(s, t, mt_te_i64(a, U), NULL, &r1)) return false;
    int n = 0;
    if (r1) named[n++] = r1;
    named[n++] = r2;
    if (!mt_sched_rfactor(s, red, named, n)) return false;
    /* per row, under the innermost outer loop; rfactor put the zeros of
     * the partial results first */
    const char *zeros = mt_blk_bname(mt_blk_blocks_under(a, s->func->body).data[0]);
    mt_tvar *o = l[c->ns - 1];
    if (!mt_sched_reverse_compute_at(s, red, o) || !mt_sched_compute_at(s, zeros, o)) return false;
    for (int i = 1; i < c->nst; i++)
        if (!mt_sched_reverse_compute_at(s, names[i], o)) return false;
    /* the rows as one loop (after rfactor, which wants each spatial
     * variable bound to a loop of its own) */
    row = l[0];
    for (int k = 1; k < c->ns; k++)
        if (!mt_sched_fuse(s, row, l[k], &row)) return false;
    mt_tvar *c0;
    if (chunk > 0 && (!mt_sched_split(s, row, mt_te_i64(a, chunk), &c0, NULL) || !mt_sched_parallel(s, c0)))
        return false;
    if ((r1 && !mt_sched_unroll(s, r1)) || !mt_sched_vectorize(s, r2)) return false;
    return fill(s, zeros, n) && combination(s, red, n);
}

mt_tfunc *mt_rr_primitives(rr *c) {
    const char *names[RR_MAXST];
    if (!fits(c, c->f, names)) return NULL;
    int vl = mt_rr_lanes(c, c->st[0].buf->dtype);
    int U = mt_rr_accumulators(c, vl);
    mt_sched s;
    mt_sched_init(&s, c->a, c->f);
    return schedule(&s, c, names, vl, U, mt_rr_chunk_rows(c)) ? s.func : NULL;
}
