/*
 * primitives_at.c -- compute_at and reverse_compute_at: a block's loop nest
 * moves under a loop of the block it is connected to through one buffer X,
 * and computes per iteration of that loop only the region of X that the
 * iteration touches (conventions as in primitives_block.c; helpers
 * block_util.c; outputs and refusals docs/schedule.md).
 *
 * The two are one algorithm seen from either end. The moved block b and the
 * other block o share X; L is an ancestor of o:
 *
 *   compute_at(b, L)          b produces X, o consumes it; b's nest goes to
 *                             the start of L's body; the region is what o
 *                             reads per iteration of L.
 *   reverse_compute_at(b, L)  o produces X, b consumes it; b's nest goes to
 *                             the end of L's body; the region is what o
 *                             writes per iteration of L.
 *
 * Steps (each a function that refuses or fills its part of `at`): find b,
 * X and o; place (b's perfect nest an item of a sequence, L inside an item
 * after it, or before it for reverse); movable (the nest rectangular, b
 * bound to its own loops, nothing between the two positions touching what
 * the move reorders); region (o's index of X with its iteration variables
 * replaced by their bindings, per dim a point or `base + j` for one loop j
 * between L and o, or a sum of such loops scaled to tile an interval,
 * `(j1 * 16 + j2)`: derive_dim; for compute_at, splits' clamped tails read
 * at their constant bounds, the region a superset cut to b's own range in
 * build); dims (b's index of X per dim a constant or
 * a spatial iteration variable bound to a loop of its own nest); build (the
 * nest again, its loops along X's dims replaced by the region's).
 */
#include "schedule/block_util.h"
#include "schedule/trace.h"

#include <string.h>

typedef struct at {
    mt_sched *s;
    mt_arena *a;
    const mt_tfunc *f;
    const char *P;              /* the primitive's name, for messages */
    bool reverse;               /* reverse_compute_at: b consumes X */
    const char *name;           /* the moved block's */
    mt_tvar *loop;              /* the target loop's variable ... */
    const mt_tstmt *L;          /* ... and the loop */
    mt_blk_stmts path;          /* body .. b */
    const mt_tstmt *b;          /* the moved block */
    mt_tbuffer *X;              /* the buffer b and o share */
    mt_texpr *const *bidx;      /* b's index of X (its store's, or its loads') */
    const mt_tstmt *o;          /* the other block */
    const mt_tstmt **others;    /* compute_at: every block touching X but b (o the first) */
    int nothers;
    bool shared;                /* compute_at: X written there too, or several blocks: iterations must not overlap */
    mt_blk_stmts opath;         /* body .. o */
    int il;                     /* L's index in opath */
    int k;                      /* path[k .. len-2]: b's loop nest */
    const mt_tstmt *seq;        /* the sequence holding the nest and the target */
    int in, it;                 /* indices in seq of the nest and of the target's ancestor */
    int iq;                     /* seq's index in opath: opath[iq + 1 .. il] are L's item down to L */
    bool whole;                 /* reverse: a reduce variable of b reads a whole dim of X (at_dims) */
    bool defined;               /* reverse: X is defined otherwise too (written before L, or by b in place) */
    int nl;                     /* loops in the nest ... */
    const mt_tstmt **nest;      /* ... outermost first */
    mt_texpr **rmin, **rext;    /* per dim of X: the region one iteration of L touches */
    bool *rover;                /* per dim of X: that region a superset (compute_at only) */
    int *dl;                    /* per dim of X: the nest loop b walks it along (-1: constant) */
    int *iter_dim;              /* per iter var of b: the dim it indexes (-1: none) */
} at;

/* ---- shared steps ------------------------------------------------------------------ */

/* e as base + sum coef[t] * var[t] (var[t] loops of inner, coef[t] > 0
 * constants, base free of them: a subexpression free of them is kept whole
 * in base); false when it is not of that form (at most MAX_TERMS loop
 * terms). */
enum { MAX_TERMS = 16 };
typedef struct lin {
    mt_texpr *base;
    const mt_tvar *var[MAX_TERMS];
    int64_t coef[MAX_TERMS];
    int n;
} lin;

typedef struct inner_vars {
    mt_tvar *const *iv;
    int n;
} inner_vars;

static bool uses_inner(const mt_texpr *e, void *ctx) {
    const inner_vars *v = ctx;
    return mt_blk_first_use(e, v->iv, v->n) != NULL;
}

static bool linearize(mt_arena *a, mt_texpr *e, mt_tvar *const *iv, int niv, lin *l) {
    mt_arith_term t[4 * MAX_TERMS];
    inner_vars v = {iv, niv};
    int n = mt_arith_terms(e, uses_inner, &v, t, 4 * MAX_TERMS);
    if (n < 0) return false;
    for (int i = 0; i < n; i++) {
        if (!uses_inner(t[i].e, &v)) {
            mt_texpr *x = t[i].coef == 1 ? t[i].e : mt_arith_mul(a, t[i].e, mt_te_i64(a, t[i].coef));
            l->base = l->base ? mt_arith_add(a, l->base, x) : x;
        } else if (t[i].e->kind == TE_VAR && l->n < MAX_TERMS) {
            l->var[l->n] = t[i].e->var, l->coef[l->n++] = t[i].coef;
        } else {
            return false;
        }
    }
    return true;
}

/* The extent of inner loop l for the region: its own, or, when it
 * depends on other loops between L and the block (a split's clamped tail,
 * T.min(16, 1000 - (j1 * 2 + j2) * 16)) and *over may be set, its
 * constant bound, *over then true: the region covers what the block
 * touches and possibly more. */
static const mt_texpr *extent_for(mt_arena *a, const mt_tstmt *l, mt_tvar *const *iv, int n, bool *over) {
    int64_t c;
    if (!mt_blk_first_use(l->extent, iv, n)) return l->extent;
    if (!over || !mt_arith_const_bound(l->extent, &c)) return NULL;
    *over = true;
    return mt_te_i64(a, c);
}

/* The region [min, min + ext) of one dim of X that one iteration of the
 * target loop touches at index e (in loop variables); inner are the loops
 * between the target loop and the other block. e is base + sum c_t * v_t
 * over distinct loops v_t that tile an interval: sorted by c_t, the first
 * is 1 and each next c_t is the one before times its loop's (constant)
 * extent; the last loop's extent may be any (a split's clamped tail):
 * (j0 * 16 + j1) * 16 + j2 under j0 touches [j0 * 256, + 16 * 16). With
 * over non-NULL a loop's extent that depends on the others may be read as
 * its constant bound (extent_for; the region then a superset). */
static bool derive_dim(mt_arena *a, mt_texpr *e, const mt_blk_stmts *inner, bool *used, mt_texpr **min,
                       mt_texpr **ext, bool *over) {
    int n = inner->len;
    mt_tvar **iv = MT_NEW_ARRAY(a, mt_tvar *, n + 1);
    for (int j = 0; j < n; j++) iv[j] = inner->data[j]->var;
    lin l = {0};
    if (!linearize(a, e, iv, n, &l)) return false;
    const mt_tstmt *loop[MAX_TERMS];
    const mt_texpr *lext[MAX_TERMS];
    for (int t = 0; t < l.n; t++) {
        int j = 0;
        while (j < n && inner->data[j]->var != l.var[t]) j++;
        if (j == n || used[j] || mt_blk_first_use(inner->data[j]->min, iv, n) ||
            !(lext[t] = extent_for(a, inner->data[j], iv, n, over)))
            return false;
        used[j] = true;
        loop[t] = inner->data[j];
    }
    for (int t = 1; t < l.n; t++) /* by coefficient, smallest first (few terms) */
        for (int u = t; u > 0 && l.coef[u] < l.coef[u - 1]; u--) {
            int64_t c = l.coef[u];
            const mt_tstmt *x = loop[u];
            const mt_texpr *y = lext[u];
            l.coef[u] = l.coef[u - 1], loop[u] = loop[u - 1], lext[u] = lext[u - 1];
            l.coef[u - 1] = c, loop[u - 1] = x, lext[u - 1] = y;
        }
    *min = l.base ? l.base : mt_te_i64(a, 0);
    *ext = mt_te_i64(a, 1);
    for (int t = 0; t < l.n; t++) {
        int64_t want = 1, e_t;
        if (t > 0 && (!mt_te_is_const_int(lext[t - 1], &e_t) || __builtin_mul_overflow(l.coef[t - 1], e_t, &want)))
            return false;
        if (l.coef[t] != want) return false;
        mt_texpr *c = mt_te_i64(a, l.coef[t]), *x = (mt_texpr *)lext[t];
        *min = mt_arith_add(a, *min, l.coef[t] == 1 ? loop[t]->min : mt_arith_mul(a, c, loop[t]->min));
        *ext = l.coef[t] == 1 ? x : mt_arith_mul(a, c, x);
    }
    /* a superset already: the last loop's bound too (T.min(2, 7 - j0 * 2)
     * -> 2), so that the region, cut to the block's range, is T.min(32, ..),
     * which compact_buffers reads as a box of 32 */
    int64_t cb, span;
    if (over && *over && l.n > 0 && mt_arith_const_bound(lext[l.n - 1], &cb) &&
        !__builtin_mul_overflow(l.coef[l.n - 1], cb, &span))
        *ext = mt_te_i64(a, span);
    return true;
}

/* Block c reads buf only at the element it stores (an update of its own
 * element, or no read of buf). */
static bool reads_own_of(mt_arena *a, const mt_tstmt *c, const mt_tbuffer *buf) {
    const mt_tstmt *st = c->body;
    mt_blk_exprs cl = mt_blk_loads_in(a, st, NULL, buf);
    for (int i = 0; i < cl.len; i++)
        if (st->kind != TS_STORE || !mt_blk_same_index(cl.data[i]->args, st->idx, st->nidx)) return false;
    return true;
}

static bool reads_own(const at *ca, const mt_tstmt *c) { return reads_own_of(ca->a, c, ca->X); }

/* The first access in seq's items [from, to] that writes one of bufs or
 * touches (reads or writes) one of touched, but for block o's of X (the
 * producer of what a reverse_compute_at moves, which may update X in
 * place: mean's X = X / N). */
static const mt_blk_access *between(const at *ca, int from, int to, const mt_blk_bufs *bufs,
                                    const mt_blk_bufs *touched) {
    for (int i = from; i <= to; i++) {
        mt_blk_accesses acc = mt_blk_scan(ca->a, ca->seq->stmts[i], NULL, NULL);
        for (int k = 0; k < acc.len; k++) {
            const mt_blk_access *x = &acc.data[k];
            if (ca->reverse && x->block == ca->o && x->buf == ca->X && reads_own(ca, ca->o)) continue;
            if ((x->write && mt_blk_buf_in(bufs, x->buf)) || mt_blk_buf_in(touched, x->buf)) return x;
        }
    }
    return NULL;
}

/* b's loop nest (path[k .. len-2]) and the sequence it shares with the
 * statement holding L, after it (compute_at) or before it (reverse); L
 * serial. */
static bool at_place(at *ca) {
    const mt_blk_stmts *path = &ca->path;
    int k = path->len - 1;
    while (k > 0 && path->data[k - 1]->kind == TS_FOR && path->data[k - 1]->body == path->data[k]) k--;
    const mt_tstmt *seq = k > 0 ? path->data[k - 1] : NULL;
    int iq = seq ? mt_blk_index_in(&ca->opath, seq) : -1;
    ca->iq = iq;
    ca->in = ca->it = -1;
    for (int i = 0; iq >= 0 && i < seq->nstmts; i++) {
        if (seq->stmts[i] == path->data[k]) ca->in = i;
        if (seq->stmts[i] == ca->opath.data[iq + 1]) ca->it = i;
    }
    bool order = ca->reverse ? ca->it < ca->in : ca->it > ca->in;
    if (!seq || seq->kind != TS_SEQ || iq < 0 || ca->il <= iq || ca->in < 0 || ca->it < 0 || !order)
        return mt_sched_refuse(ca->s, "%s: loop '%s' does not come %s the loop nest of block '%s' in "
                                      "the same sequence", ca->P, ca->loop->name,
                               ca->reverse ? "before" : "after", ca->name);
    if (ca->L->for_kind != MT_FOR_SERIAL && ca->L->for_kind != MT_FOR_UNROLLED)
        return mt_sched_refuse(ca->s, "%s: loop '%s' is not serial", ca->P, ca->loop->name);
    ca->k = k;
    ca->seq = seq;
    ca->nl = path->len - 1 - k;
    ca->nest = path->data + k;
    return true;
}

/* The buffers b reads other than X. */
static mt_blk_bufs inputs_of(at *ca) {
    mt_blk_bufs inputs = {0};
    mt_blk_exprs pl = mt_blk_loads_in(ca->a, ca->b->body, NULL, NULL);
    mt_blk_exprs pl2 = mt_blk_loads_in(ca->a, ca->b->init, NULL, NULL);
    for (int i = 0; i < pl2.len; i++) MT_VEC_PUSH(ca->a, &pl, pl2.data[i]);
    for (int i = 0; i < pl.len; i++)
        if (pl.data[i]->buf != ca->X && !mt_blk_buf_in(&inputs, pl.data[i]->buf))
            MT_VEC_PUSH(ca->a, &inputs, pl.data[i]->buf);
    return inputs;
}

/* The nest is rectangular, b is bound to its own loops only, and nothing
 * between the nest and L writes what b reads (nor, for reverse, touches
 * what b writes: b now runs earlier). */
static bool at_movable(at *ca) {
    mt_sched *s = ca->s;
    mt_arena *a = ca->a;
    const mt_tstmt *b = ca->b;
    mt_tvar **nv = MT_NEW_ARRAY(a, mt_tvar *, ca->nl + 1);
    for (int j = 0; j < ca->nl; j++) nv[j] = ca->nest[j]->var;
    for (int j = 0; j < ca->nl; j++)
        if (mt_blk_first_use(ca->nest[j]->min, nv, ca->nl) || mt_blk_first_use(ca->nest[j]->extent, nv, ca->nl))
            return mt_sched_refuse(s, "%s: the loops of block '%s' are not a rectangular nest", ca->P,
                                   ca->name);
    for (int i = 0; i < b->niters; i++) {
        const mt_tvar *fv = mt_blk_foreign_var(b->iter_values[i], nv, ca->nl, ca->f);
        if (fv)
            return mt_sched_refuse(s, "%s: block '%s' is bound to '%s', outside its own loop nest",
                                   ca->P, ca->name, fv->name);
    }
    mt_blk_bufs inputs = inputs_of(ca), outs = {0};
    if (ca->reverse) MT_VEC_PUSH(a, &outs, b->body->buf);
    const mt_blk_access *w = ca->reverse ? between(ca, ca->it, ca->in - 1, &inputs, &outs)
                                         : between(ca, ca->in + 1, ca->it, &inputs, &outs);
    if (w && !w->write)
        return mt_sched_refuse(s, "%s: block '%s' reads '%s', which block '%s' writes, between them",
                               ca->P, mt_blk_bname(w->block), w->buf->name, ca->name);
    if (w)
        return mt_sched_refuse(s, "%s: block '%s' writes '%s', which block '%s' %s, between them",
                               ca->P, mt_blk_bname(w->block), w->buf->name, ca->name,
                               mt_blk_buf_in(&inputs, w->buf) ? "reads" : "writes");
    return true;
}

/* The region of X one iteration of L touches (rmin, rext) from o's index
 * idx of X: each dim a point or a loop between L and o plus an offset;
 * not through a let bound inside L (its value changes inside L: the
 * region would read it as fixed). */
typedef struct lets_in {
    mt_texpr *const *idx;
    int n;
    const mt_tvar *hit;
} lets_in;

static void let_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    lets_in *l = v->ctx;
    for (int d = 0; s->kind == TS_LET && !l->hit && d < l->n; d++)
        if (mt_texpr_uses_var(l->idx[d], s->var)) l->hit = s->var;
    mt_tvisit_stmt_children(v, s);
}

static bool at_region(at *ca, mt_texpr *const *idx) {
    lets_in li = {idx, ca->X->ndim, NULL}; /* a let inside the other block itself */
    mt_tvisitor lv = {mt_tvisit_no_expr, let_stmt, &li};
    mt_tvisit_stmt(&lv, ca->o->body);
    if (ca->o->init) mt_tvisit_stmt(&lv, ca->o->init);
    if (li.hit)
        return mt_sched_refuse(ca->s, "%s: block '%s' indexes '%s' through '%s', a let inside it", ca->P,
                               mt_blk_bname(ca->o), ca->X->name, li.hit->name);
    for (int j = ca->il + 1; j < ca->opath.len; j++) {
        const mt_tstmt *t = ca->opath.data[j];
        for (int d = 0; t->kind == TS_LET && d < ca->X->ndim; d++)
            if (mt_texpr_uses_var(idx[d], t->var))
                return mt_sched_refuse(ca->s, "%s: block '%s' indexes '%s' through '%s', a let inside loop '%s'",
                                       ca->P, mt_blk_bname(ca->o), ca->X->name, t->var->name, ca->loop->name);
    }
    mt_arena *a = ca->a;
    const mt_tstmt *o = ca->o;
    mt_tbuffer *X = ca->X;
    mt_blk_stmts inner = {0};
    for (int j = ca->il + 1; j < ca->opath.len - 1; j++)
        if (ca->opath.data[j]->kind == TS_FOR) MT_VEC_PUSH(a, &inner, ca->opath.data[j]);
    bool *used = MT_NEW_ARRAY(a, bool, inner.len + 1);
    ca->rmin = MT_NEW_ARRAY(a, mt_texpr *, X->ndim + 1);
    ca->rext = MT_NEW_ARRAY(a, mt_texpr *, X->ndim + 1);
    ca->rover = MT_NEW_ARRAY(a, bool, X->ndim + 1);
    mt_tvar **ov = MT_NEW_ARRAY(a, mt_tvar *, o->niters + 1);
    for (int i = 0; i < o->niters; i++) ov[i] = o->iters[i].var;
    for (int d = 0; d < X->ndim; d++) {
        mt_texpr *e = mt_tsubst_expr(a, idx[d], ov, o->iter_values, o->niters);
        if (!derive_dim(a, e, &inner, used, &ca->rmin[d], &ca->rext[d], &ca->rover[d]))
            return mt_sched_refuse(ca->s, "%s: cannot derive the region of '%s' that loop '%s' %s "
                                          "from index '%s' of dim %d%s", ca->P, X->name, ca->loop->name,
                                   ca->reverse ? "writes" : "needs", mt_texpr_print(a, e), d,
                                   mt_arith_has_divmod(idx[d]) ? " (an index through // or %, as transform_layout "
                                                            "leaves it: move the block first, then change the "
                                                            "layout)" : "");
    }
    return true;
}

/* Dim d of X accessed by b at a constant c: the region must be that point. */
static bool at_const_dim(at *ca, int d, int64_t c) {
    if (mt_arith_is_const(ca->rmin[d], c) && mt_arith_is_const(ca->rext[d], 1)) return true;
    return mt_sched_refuse(ca->s, "%s: block '%s' %s dim %d of '%s' at %lld only, and loop '%s' %s "
                                  "more", ca->P, ca->name, ca->reverse ? "reads" : "writes", d,
                           ca->X->name, (long long)c, ca->loop->name,
                           ca->reverse ? "writes" : "needs");
}

/* b's side (dl, iter_dim): each dim of X is accessed at a constant or at a
 * spatial iter var bound to a loop of b's own nest over the same range;
 * for compute_at every spatial iter var indexes a dim (b writes each
 * element once). */
static bool at_dims(at *ca) {
    const mt_tstmt *b = ca->b;
    const char *verb = ca->reverse ? "reads" : "writes";
    ca->dl = MT_NEW_ARRAY(ca->a, int, ca->X->ndim + 1);
    ca->iter_dim = MT_NEW_ARRAY(ca->a, int, b->niters + 1);
    for (int i = 0; i < b->niters; i++) ca->iter_dim[i] = -1;
    for (int d = 0; d < ca->X->ndim; d++) {
        const mt_texpr *x = ca->bidx[d];
        int64_t c;
        ca->dl[d] = -1;
        if (mt_te_is_const_int(x, &c)) {
            if (!at_const_dim(ca, d, c)) return false;
            continue;
        }
        int u = -1;
        for (int i = 0; x->kind == TE_VAR && i < b->niters; i++)
            if (b->iters[i].var == x->var) u = i;
        const mt_texpr *v = u >= 0 ? b->iter_values[u] : NULL;
        for (int j = 0; v && v->kind == TE_VAR && j < ca->nl; j++)
            if (ca->nest[j]->var == v->var) ca->dl[d] = j;
        const mt_tstmt *l = ca->dl[d] >= 0 ? ca->nest[ca->dl[d]] : NULL;
        /* a reduce variable (reverse only): the region its whole range, the
         * reduction then done in one iteration of L (rfactor's combination) */
        bool whole = ca->reverse && u >= 0 && mt_arith_is_const(ca->rmin[d], 0) &&
                     mt_texpr_equal(ca->rext[d], b->iters[u].extent);
        bool ok = l && ca->iter_dim[u] < 0 && (b->iters[u].kind == MT_ITER_SPATIAL || whole) &&
                  mt_arith_is_const(l->min, 0) && mt_texpr_equal(l->extent, b->iters[u].extent);
        ca->whole = ca->whole || (ok && b->iters[u].kind == MT_ITER_REDUCE);
        for (int i = 0; ok && i < b->niters; i++)
            ok = i == u || !mt_blk_first_use(b->iter_values[i], &l->var, 1);
        if (!ok)
            return mt_sched_refuse(ca->s, "%s: block '%s' %s dim %d of '%s' at '%s', not at an "
                                          "iteration variable bound to a loop of its own",
                                   ca->P, ca->name, verb, d, ca->X->name, mt_texpr_print(ca->a, x));
        ca->iter_dim[u] = d;
    }
    for (int i = 0; !ca->reverse && i < b->niters; i++)
        if (b->iters[i].kind == MT_ITER_SPATIAL && ca->iter_dim[i] < 0)
            return mt_sched_refuse(ca->s, "%s: spatial variable '%s' of block '%s' does not index '%s'",
                                   ca->P, b->iters[i].var->name, ca->name, ca->X->name);
    return true;
}

/* Is dim d's region loop v's tile: start v * c, extent c (constants), v
 * from 0? *span: the elements v's iterations cover, v's extent * c (-1:
 * not a constant); *same: v runs over l's own range one element at a time. */
static bool loop_tile(at *ca, int d, const mt_tstmt *v, const mt_tstmt *l, int64_t *span, bool *same) {
    lin t = {0};
    mt_tvar *vv = v->var;
    int64_t r, ev;
    if (v->kind != TS_FOR || !mt_arith_is_const(v->min, 0) || !linearize(ca->a, ca->rmin[d], &vv, 1, &t) || t.base ||
        t.n != 1 || !mt_te_is_const_int(ca->rext[d], &r) || r != t.coef[0])
        return false;
    *same = r == 1 && mt_texpr_equal(v->extent, l->extent);
    *span = mt_te_is_const_int(v->extent, &ev) && ev <= INT64_MAX / r ? ev * r : -1;
    return true;
}

/* Is dim d's region, in every iteration of L and the loops around it,
 * within b's own range [0, l->extent) of that dim? *from0: it never
 * starts below 0. The region is a loop variable V over b's range (one
 * element per iteration), V * c over c elements with V over extent / c
 * iterations, or, by the ranges of the loops, within constant bounds. */
static bool inside(at *ca, int d, const mt_tstmt *l, bool *from0) {
    const mt_texpr *m = ca->rmin[d];
    int64_t c, e, span;
    bool same;
    mt_bounds bd = {0};
    for (int j = 0; j <= ca->il && j < ca->opath.len; j++) {
        const mt_tstmt *v = ca->opath.data[j];
        if (v->kind != TS_FOR) continue;
        mt_bounds_push_loop(ca->a, &bd, v->var, v->min, v->extent);
        if (loop_tile(ca, d, v, l, &span, &same) && (same || (mt_te_is_const_int(l->extent, &e) && span == e)))
            return *from0 = true;
    }
    mt_range rg = mt_bounds_of(&bd, m);
    *from0 = rg.lo >= 0;
    if (!*from0) return false;
    /* clamped already: the extent T.min(x, E - m) (a split's tail, cut to
     * the end); or a point m = rest + V with V's loop over T.min(x, E - rest) */
    const mt_texpr *x = ca->rext[d];
    int64_t dd;
    for (int k = 0; x->kind == TE_MIN && k < 2; k++)
        if (mt_arith_const_diff(k ? x->b : x->a, mt_arith_sub(ca->a, l->extent, (mt_texpr *)m), &dd) && dd <= 0)
            return true;
    for (int j = 0; mt_arith_is_const(ca->rext[d], 1) && j <= ca->il && j < ca->opath.len; j++) {
        const mt_tstmt *v = ca->opath.data[j];
        if (v->kind != TS_FOR || v->extent->kind != TE_MIN || !mt_texpr_uses_var(m, v->var)) continue;
        lin t = {0};
        mt_tvar *vv = v->var;
        if (!linearize(ca->a, (mt_texpr *)m, &vv, 1, &t) || t.n != 1 || t.coef[0] != 1) continue;
        mt_texpr *left = mt_arith_sub(ca->a, l->extent, t.base ? t.base : mt_te_i64(ca->a, 0));
        for (int k = 0; k < 2; k++)
            if (mt_arith_const_diff(k ? v->extent->b : v->extent->a, left, &dd) && dd <= 0) return true;
    }
    return mt_te_is_const_int(l->extent, &e) && mt_arith_const_bound(ca->rext[d], &c) && rg.hi <= e - c;
}

/* L's body with x first (compute_at) or last (reverse). */
static mt_tstmt *with_nest(at *ca, mt_tstmt *x) {
    mt_tstmt *y = ca->L->body;
    if (!ca->reverse) return mt_blk_prepend(ca->a, x, y);
    int n = y->kind == TS_SEQ ? y->nstmts : 1;
    mt_tstmt **v = MT_NEW_ARRAY(ca->a, mt_tstmt *, n + 1);
    if (y->kind == TS_SEQ) memcpy(v, y->stmts, sizeof(mt_tstmt *) * (size_t)n);
    else v[0] = y;
    v[n] = x;
    return mt_ts_at(mt_ts_seq(ca->a, v, n + 1), y->loc);
}

/* The nest again, its loops along X's dims replaced by the region: a loop
 * over rext[d] (the iter var bound to rmin[d] + it), or none for a point. */
static void at_build(at *ca) {
    mt_arena *a = ca->a;
    const mt_tstmt *b = ca->b;
    mt_tstmt *nb = mt_ts_copy(a, b);
    nb->iter_values = MT_NEW_ARRAY(a, mt_texpr *, b->niters + 1);
    memcpy(nb->iter_values, b->iter_values, sizeof(mt_texpr *) * (size_t)b->niters);
    mt_tstmt *body = nb;
    for (int j = ca->nl - 1; j >= 0; j--) {
        const mt_tstmt *l = ca->nest[j];
        int d = -1;
        for (int e = 0; e < ca->X->ndim; e++)
            if (ca->dl[e] == j) d = e;
        if (d < 0) {
            mt_tstmt *c = mt_ts_copy(a, l);
            c->body = body;
            body = c;
            continue;
        }
        int u = 0;
        while (ca->iter_dim[u] != d) u++;
        /* b runs only its own instances, [0, l->extent) of this dim: a
         * region beyond it (a consumer reading more than b writes, a
         * producer writing more than the consumer reads) is cut, a point
         * beyond it guarded */
        bool from0, in = inside(ca, d, l, &from0);
        mt_texpr *m = ca->rmin[d], *ext = ca->rext[d];
        if (mt_arith_is_const(ext, 1)) {
            nb->iter_values[u] = m;
            if (in) continue;
            mt_texpr *ok = mt_te_bin(a, TE_LT, m, l->extent);
            if (!from0) ok = mt_te_bin(a, TE_AND, mt_te_bin(a, TE_GE, m, mt_te_i64(a, 0)), ok);
            nb->predicate = nb->predicate ? mt_te_bin(a, TE_AND, nb->predicate, ok) : ok;
            continue;
        }
        mt_texpr *lo = from0 ? m : mt_arith_bin(a, TE_MAX, m, mt_te_i64(a, 0));
        nb->iter_values[u] = mt_arith_add(a, lo, mt_te_var(a, l->var));
        if (!from0) /* [max(m, 0), min(m + ext, extent)) */
            ext = mt_arith_sub(a, mt_arith_bin(a, TE_MIN, mt_arith_add(a, m, ext), l->extent), lo);
        else if (!in || ca->rover[d] || ca->shared) /* a superset, or several consumers': within b's own range */
            ext = mt_arith_bin(a, TE_MIN, ext, mt_arith_sub(a, l->extent, m));
        body = mt_ts_at(mt_ts_for(a, l->var, mt_te_i64(a, 0), ext, MT_FOR_SERIAL, body), l->loc);
    }
    mt_blk_set_func_body(ca->s, mt_blk_drop(a, ca->f->body, ca->path.data[ca->k]));
    mt_tstmt *nL = mt_ts_copy(a, ca->L);
    nL->body = with_nest(ca, body);
    mt_sched_replace(ca->s, ca->L, nL);
}

/* b's loads of X (body and init) at one index: it is *idx. */
static bool one_index(at *ca, const mt_tstmt *c, mt_texpr *const **idx) {
    mt_blk_exprs cl = mt_blk_loads_in(ca->a, c->body, NULL, ca->X);
    mt_blk_exprs cl2 = mt_blk_loads_in(ca->a, c->init, NULL, ca->X);
    for (int i = 0; i < cl2.len; i++) MT_VEC_PUSH(ca->a, &cl, cl2.data[i]);
    if (cl.len == 0) /* its only access is a prefetch: an address, not a region it reads */
        return mt_sched_refuse(ca->s, "%s: block '%s' only prefetches '%s', it does not read it", ca->P,
                               mt_blk_bname(c), ca->X->name);
    for (int i = 1; i < cl.len; i++)
        if (!mt_blk_same_index(cl.data[0]->args, cl.data[i]->args, ca->X->ndim))
            return mt_sched_refuse(ca->s, "%s: block '%s' reads '%s' at more than one index", ca->P,
                                   mt_blk_bname(c), ca->X->name);
    *idx = cl.data[0]->args;
    return true;
}

/* Block c's body (and init) is one store to one element. */
static bool one_store(const mt_tstmt *c) {
    const mt_tstmt *st = c->body;
    return st->kind == TS_STORE &&
           (!c->init || (c->init->kind == TS_STORE && c->init->buf == st->buf &&
                         mt_blk_same_index(c->init->idx, st->idx, st->nidx)));
}

/* ---- compute_at ------------------------------------------------------------------ */

/* The block moved has no T.where: its predicate is written with the loops
 * it leaves, which the move replaces (it would test the new ones). */
static bool unpredicated(at *ca, const mt_tstmt *b) {
    if (!b->predicate) return true;
    return mt_sched_refuse(ca->s, "%s: block '%s' has a T.where predicate, which moving it would "
                                  "not keep", ca->P, mt_blk_bname(b));
}

/* The other block's bindings do not go through a let inside L: the
 * region is derived from the loops between L and the block alone. */
static bool no_inner_let(at *ca) {
    const mt_tstmt *p = mt_blk_let_binding(&ca->opath, ca->il + 1, ca->o);
    if (!p) return true;
    return mt_sched_refuse(ca->s, "%s: block '%s' is bound through '%s', a let inside loop '%s'", ca->P,
                           mt_blk_bname(ca->o), p->var->name, ca->loop->name);
}

/* The producer: a block writing one buffer the function allocates, with
 * one store (and an init storing at the same index), not under L yet. */
static bool ca_producer(at *ca) {
    mt_sched *s = ca->s;
    if (!mt_blk_find_block(s, ca->P, ca->name, &ca->path)) return false;
    const mt_tstmt *b = ca->b = ca->path.data[ca->path.len - 1];
    if (!one_store(b))
        return mt_sched_refuse(s, "%s: block '%s' does not write one buffer with one store", ca->P,
                               ca->name);
    if (!unpredicated(ca, b)) return false;
    ca->X = b->body->buf;
    ca->bidx = b->body->idx;
    /* a reduction reads its own element, from its init: computed again, the
     * same; any other read of X (a recurrence, an update without init) is not */
    if (mt_texpr_reads(b->body->value, ca->X) && (!b->init || !reads_own(ca, b)))
        return mt_sched_refuse(s, "%s: block '%s' reads '%s', the buffer it writes, %s", ca->P, ca->name,
                               ca->X->name, !reads_own(ca, b) ? "at another element (a recurrence: the region would "
                                                                "be computed in the consumer's order)"
                                                              : "without an init (computed again, it would add up "
                                                                "again)");
    if (!mt_blk_is_alloc(ca->f, ca->X))
        return mt_sched_refuse(s, "%s: block '%s' writes '%s', which the function does not "
                                  "allocate (a parameter or output)", ca->P, ca->name, ca->X->name);
    if (mt_blk_index_in(&ca->path, ca->L) >= 0)
        return mt_sched_refuse(s, "%s: block '%s' is already under loop '%s'", ca->P, ca->name,
                               ca->loop->name);
    return true;
}

/* o, its path and L's place in it. */
static bool set_other(at *ca, const mt_tstmt *o) {
    ca->o = o;
    ca->opath = mt_blk_path_to(ca->a, ca->f->body, o);
    ca->il = mt_blk_index_in(&ca->opath, ca->L);
    return true;
}

/* The consumers: the blocks that read X and any that also write it
 * (rfactor's fill before the partial results' update and their
 * combination; b reads no X: ca_producer), every one under L. With one reader and no other
 * writer, b's region may be computed again in each iteration; else the
 * regions of the iterations of L must not overlap (ca_disjoint). */
static bool ca_consumer(at *ca) {
    mt_sched *s = ca->s;
    const char *X = ca->X->name;
    mt_blk_accesses acc = mt_blk_scan(ca->a, ca->f->body, ca->b, &ca->path);
    mt_blk_stmts blocks = {0};
    for (int i = 0; i < acc.len; i++) {
        const mt_blk_access *x = &acc.data[i];
        if (x->inside || x->buf != ca->X) continue;
        if (!x->block) return mt_sched_refuse(s, "%s: '%s' is %s outside a block", ca->P, X, x->write ? "written" : "read");
        ca->shared = ca->shared || x->write;
        bool seen = false;
        for (int k = 0; k < blocks.len; k++) seen = seen || blocks.data[k] == x->block;
        if (!seen) MT_VEC_PUSH(ca->a, &blocks, x->block);
    }
    if (!blocks.len) return mt_sched_refuse(s, "%s: no block reads '%s'", ca->P, X);
    ca->shared = ca->shared || blocks.len > 1;
    ca->others = (const mt_tstmt **)blocks.data;
    ca->nothers = blocks.len;
    for (int k = 0; k < blocks.len; k++) {
        mt_blk_stmts p = mt_blk_path_to(ca->a, ca->f->body, blocks.data[k]);
        if (mt_blk_index_in(&p, ca->L) < 0)
            return mt_sched_refuse(s, "%s: loop '%s' is not an ancestor of block '%s'%s", ca->P, ca->loop->name,
                                   mt_blk_bname(blocks.data[k]),
                                   blocks.len > 1 ? mt_arena_printf(ca->a, ", which touches '%s' too", X) : "");
    }
    return set_other(ca, blocks.data[0]);
}

/* Merges the region of X at one more index (rmin, rext, rover of its own)
 * into ca's: the same extent and a min a constant apart in each dim (a
 * stencil's x[i], x[i + 1], x[i + 2]), the hull of the two; a superset
 * (rover) where they leave a gap. *lo, *hi: the offsets so far from the
 * first index's min. */
static bool merge_region(at *ca, mt_texpr **rmin, mt_texpr **rext, const bool *rover, int64_t *lo, int64_t *hi,
                         mt_texpr *const *first_min) {
    for (int d = 0; d < ca->X->ndim; d++) {
        int64_t off, e;
        if (!mt_texpr_equal(rext[d], ca->rext[d]) || !mt_arith_const_diff(rmin[d], first_min[d], &off))
            return mt_sched_refuse(ca->s, "%s: block '%s' reads '%s' at indices whose regions along dim %d "
                                          "are not the same interval shifted by a constant ('%s' and '%s')",
                                   ca->P, mt_blk_bname(ca->o), ca->X->name, d, mt_texpr_print(ca->a, first_min[d]),
                                   mt_texpr_print(ca->a, rmin[d]));
        int64_t nlo = off < lo[d] ? off : lo[d], nhi = off > hi[d] ? off : hi[d];
        /* translates of one interval of e leave no gap when each is within e of the hull */
        bool gap = !mt_te_is_const_int(rext[d], &e) || (off < lo[d] && lo[d] - off > e) || (off > hi[d] && off - hi[d] > e);
        ca->rover[d] = ca->rover[d] || rover[d] || gap;
        lo[d] = nlo, hi[d] = nhi;
    }
    return true;
}

/* The regions of X that the iterations of L touch do not overlap, nor do
 * those of the loops around L in its item of seq (each iteration of all
 * of them runs the moved block once): every such loop is among the loops
 * of some dim's start, base + sum c_k * v_k, whose terms are a mixed radix
 * -- |c| sorted, the first at least the region's extent E (its constant
 * bound), each next at least the one before times that loop's extent
 * bound -- so that two iterations differing in those loops start at least
 * E apart (`i0 * 4 + i1` over a split, a tile `j0 * 16`, a row `r`);
 * exact: not a superset along that dim. (Then moving b to the start of
 * each iteration writes each element just before its first access, as
 * before; no later iteration touches it again.) */
static bool apart(at *ca, bool exact) {
    mt_tvar *vars[MAX_TERMS];
    const mt_tstmt *loops[MAX_TERMS];
    bool vouched[MAX_TERMS] = {false};
    int nv = 0;
    for (int j = ca->iq + 1; j <= ca->il && j < ca->opath.len; j++)
        if (ca->opath.data[j]->kind == TS_FOR) {
            if (nv == MAX_TERMS) return false;
            loops[nv] = ca->opath.data[j];
            vars[nv++] = ca->opath.data[j]->var;
        }
    for (int d = 0; d < ca->X->ndim; d++) {
        int64_t e, step[MAX_TERMS], ext[MAX_TERMS];
        int who[MAX_TERMS];
        lin t = {0};
        /* a let bound between the item and L may change with those loops: its
         * term is not the fixed base the radix reads it as */
        bool let = false;
        for (int j = ca->iq + 1; j <= ca->il && j < ca->opath.len; j++)
            let = let || (ca->opath.data[j]->kind == TS_LET && mt_texpr_uses_var(ca->rmin[d], ca->opath.data[j]->var));
        if (let || (exact && ca->rover[d]) || !mt_arith_const_bound(ca->rext[d], &e) || e <= 0 ||
            !linearize(ca->a, ca->rmin[d], vars, nv, &t) || t.n == 0)
            continue;
        bool ok = true;
        for (int k = 0; ok && k < t.n; k++) {
            who[k] = 0;
            while (vars[who[k]] != t.var[k]) who[k]++;
            step[k] = t.coef[k] < 0 ? -t.coef[k] : t.coef[k];
            ok = step[k] > 0;
            if (!mt_arith_const_bound(loops[who[k]]->extent, &ext[k]) || ext[k] <= 0)
                ext[k] = -1; /* no bound: only the largest step may go unbounded */
        }
        for (int k = 1; ok && k < t.n; k++) /* by step, smallest first (few terms) */
            for (int q = k; q > 0 && step[q] < step[q - 1]; q--) {
                int64_t s0 = step[q], x0 = ext[q];
                int w0 = who[q];
                step[q] = step[q - 1], ext[q] = ext[q - 1], who[q] = who[q - 1];
                step[q - 1] = s0, ext[q - 1] = x0, who[q - 1] = w0;
            }
        ok = ok && step[0] >= e;
        for (int k = 1; ok && k < t.n; k++) ok = ext[k - 1] > 0 && step[k] / ext[k - 1] >= step[k - 1];
        for (int k = 0; ok && k < t.n; k++) vouched[who[k]] = true;
    }
    for (int q = 0; q < nv; q++)
        if (!vouched[q]) return false;
    return true;
}

static bool ca_disjoint(at *ca) {
    if (apart(ca, false)) return true;
    return mt_sched_refuse(ca->s, "%s: '%s' is %s, and the regions of it that the iterations of loop '%s' "
                                  "(or of the loops around it) touch may overlap", ca->P, ca->X->name,
                           ca->nothers > 1 ? mt_arena_printf(ca->a, "touched by blocks '%s' and '%s'",
                                                             mt_blk_bname(ca->others[0]), mt_blk_bname(ca->others[1]))
                                           : mt_arena_printf(ca->a, "written by block '%s' too", mt_blk_bname(ca->others[0])),
                           ca->loop->name);
}

/* The indices at which block c touches X: its loads (body and init) and,
 * for a writer, its stores. */
static mt_blk_exprs touches(at *ca, const mt_tstmt *c) {
    mt_blk_exprs cl = mt_blk_loads_in(ca->a, c->body, NULL, ca->X), cl2 = mt_blk_loads_in(ca->a, c->init, NULL, ca->X);
    for (int i = 0; i < cl2.len; i++) MT_VEC_PUSH(ca->a, &cl, cl2.data[i]);
    const mt_tstmt *st[2] = {c->body, c->init};
    for (int k = 0; k < 2; k++)
        if (st[k] && st[k]->kind == TS_STORE && st[k]->buf == ca->X)
            MT_VEC_PUSH(ca->a, &cl, mt_te_load(ca->a, ca->X, st[k]->idx, st[k]->nidx));
    return cl;
}

/* The region the consumers touch, none with a predicate: at the one index
 * of X, or the hull of the regions at several (merge_region). */
static bool ca_region(at *ca) {
    int n = ca->X->ndim;
    mt_texpr *const *first_idx = NULL;
    mt_texpr **first = NULL, **rmin = NULL, **rext = NULL;
    bool *rover = NULL;
    int64_t *lo = MT_NEW_ARRAY(ca->a, int64_t, n + 1), *hi = MT_NEW_ARRAY(ca->a, int64_t, n + 1);
    for (int k = 0; k < ca->nothers; k++) {
        const mt_tstmt *c = ca->others[k];
        set_other(ca, c);
        if (c->predicate)
            return mt_sched_refuse(ca->s, "%s: block '%s' has a T.where predicate: the region it %s "
                                          "is not exact", ca->P, mt_blk_bname(c), ca->shared ? "touches" : "reads");
        mt_blk_exprs cl = touches(ca, c);
        if (cl.len == 0) /* its only access is a prefetch: an address, not a region it reads */
            return mt_sched_refuse(ca->s, "%s: block '%s' only prefetches '%s', it does not read it", ca->P,
                                   mt_blk_bname(c), ca->X->name);
        if (!no_inner_let(ca)) return false;
        for (int i = 0; i < cl.len; i++) {
            if (first_idx && mt_blk_same_index(first_idx, cl.data[i]->args, n) && k == 0) continue;
            if (!at_region(ca, cl.data[i]->args)) return false; /* into fresh arrays */
            if (!first_idx) {
                first_idx = cl.data[i]->args;
                first = rmin = ca->rmin, rext = ca->rext, rover = ca->rover;
                continue;
            }
            mt_texpr **mi = ca->rmin, **ei = ca->rext;
            bool *oi = ca->rover;
            ca->rmin = rmin, ca->rext = rext, ca->rover = rover;
            if (!merge_region(ca, mi, ei, oi, lo, hi, first)) return false;
        }
    }
    for (int d = 0; d < n; d++)
        if (lo[d] != hi[d]) {
            ca->rmin[d] = mt_arith_add(ca->a, first[d], mt_te_i64(ca->a, lo[d]));
            ca->rext[d] = mt_arith_add(ca->a, ca->rext[d], mt_te_i64(ca->a, hi[d] - lo[d]));
        }
    return !ca->shared || ca_disjoint(ca);
}

bool mt_sched_compute_at_do(mt_sched *s, const char *name, mt_tvar *loop) {
    at ca = {.s = s, .a = s->arena, .f = s->func, .P = "compute_at", .name = name, .loop = loop};
    ca.L = mt_sched_get_loop(s, loop);
    if (!ca_producer(&ca) || !ca_consumer(&ca) || !at_place(&ca) || !at_movable(&ca) || !ca_region(&ca) ||
        !at_dims(&ca))
        return false;
    at_build(&ca);
    return true;
}

/* ---- reverse_compute_at -------------------------------------------------------------- */

/* The consumer b: one store (and its init), not under L, reading exactly
 * one buffer X that a block under L writes; that block is the producer o,
 * X's only writer. */
static bool rca_consumer(at *ca) {
    mt_sched *s = ca->s;
    mt_arena *a = ca->a;
    if (!mt_blk_find_block(s, ca->P, ca->name, &ca->path)) return false;
    const mt_tstmt *b = ca->b = ca->path.data[ca->path.len - 1];
    if (!one_store(b))
        return mt_sched_refuse(s, "%s: block '%s' does not write one buffer with one store", ca->P,
                               ca->name);
    if (!unpredicated(ca, b)) return false;
    if (mt_blk_index_in(&ca->path, ca->L) >= 0)
        return mt_sched_refuse(s, "%s: block '%s' is already under loop '%s'", ca->P, ca->name,
                               ca->loop->name);
    mt_blk_accesses under = mt_blk_scan(a, ca->L, NULL, NULL);
    mt_blk_exprs loads = mt_blk_loads_in(a, b->body, NULL, NULL);
    for (int i = 0; i < loads.len; i++) {
        mt_tbuffer *B = loads.data[i]->buf;
        for (int k = 0; k < under.len && B != ca->X; k++) {
            if (!under.data[k].write || under.data[k].buf != B) continue;
            if (ca->X)
                return mt_sched_refuse(s, "%s: block '%s' reads '%s' and '%s', both written under "
                                          "loop '%s' (one producer wanted)", ca->P, ca->name,
                                       ca->X->name, B->name, ca->loop->name);
            ca->X = B;
            ca->o = under.data[k].block;
        }
    }
    if (!ca->X)
        return mt_sched_refuse(s, "%s: block '%s' reads nothing that is written under loop '%s'",
                               ca->P, ca->name, ca->loop->name);
    return true;
}

/* The producer o: X's only writer, a block with one store and no
 * predicate, whose reduce loops (if any) are all inside L: the region is
 * final at the end of each iteration of L. */
static bool rca_producer(at *ca) {
    mt_sched *s = ca->s;
    const char *X = ca->X->name;
    const mt_tstmt *o = ca->o;
    if (!o || !one_store(o) || o->body->buf != ca->X)
        return mt_sched_refuse(s, "%s: the producer of '%s', block '%s', does not write it with one "
                                  "store", ca->P, X, mt_blk_bname(o));
    if (o->predicate)
        return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate: the region it writes is "
                                  "not exact", ca->P, mt_blk_bname(o));
    ca->opath = mt_blk_path_to(ca->a, ca->f->body, o);
    ca->il = mt_blk_index_in(&ca->opath, ca->L);
    for (int j = 0; j <= ca->il; j++)
        if (ca->opath.data[j]->kind == TS_FOR && mt_blk_loop_binds(o, ca->opath.data[j], MT_ITER_REDUCE))
            return mt_sched_refuse(s, "%s: loop '%s' binds a reduce variable of block '%s': '%s' is "
                                      "final only after it", ca->P, ca->opath.data[j]->var->name,
                                   mt_blk_bname(o), X);
    return true;
}

/* b writes X where it reads it (mean's X = X / N): moved with its read. */
static bool in_place(at *ca) {
    mt_blk_exprs cl = mt_blk_loads_in(ca->a, ca->b->body, NULL, ca->X);
    return cl.len > 0 && !ca->b->init && reads_own(ca, ca->b);
}

/* The regions of the iterations of L (and of the loops around it) cover
 * b's whole range in each dim b walks: a dim's region is b's range itself
 * (from 0, as long), or a loop V's tile, V * c over c elements with V
 * over at least extent / c iterations. (b runs only over the regions: an
 * element outside them would lose its consumer.) */
static bool region_covers(at *ca) {
    const mt_tstmt *used[MT_MAX_RANK] = {0}; /* each loop vouches for one dim */
    int nused = 0;
    for (int d = 0; d < ca->X->ndim; d++) {
        if (ca->dl[d] < 0) continue;
        const mt_tstmt *l = ca->nest[ca->dl[d]];
        int64_t e, r, span;
        bool same, ok = mt_arith_is_const(ca->rmin[d], 0) &&
                        (mt_texpr_equal(ca->rext[d], l->extent) ||
                         (mt_te_is_const_int(l->extent, &e) && mt_te_is_const_int(ca->rext[d], &r) && r >= e));
        for (int j = ca->iq + 1; !ok && j <= ca->il && j < ca->opath.len; j++) {
            const mt_tstmt *v = ca->opath.data[j];
            bool taken = false;
            for (int q = 0; q < nused; q++) taken = taken || used[q] == v;
            ok = !taken && nused < MT_MAX_RANK && loop_tile(ca, d, v, l, &span, &same) &&
                 (same || (mt_te_is_const_int(l->extent, &e) && span >= e));
            if (ok) used[nused++] = v;
        }
        if (!ok) return false;
    }
    return true;
}

/* X's other writers all come before L's loop, in the sequence that holds
 * both (rfactor's fill of its partial results), or are b itself updating
 * in place: b, at the end of an iteration of L, reads what they wrote and
 * the producer then updated, as it did after the loop. */
static bool rca_earlier_writers(at *ca) {
    mt_blk_accesses acc = mt_blk_scan(ca->a, ca->f->body, NULL, NULL);
    bool others = ca->b->body->buf == ca->X;
    for (int i = 0; i < acc.len; i++) {
        const mt_blk_access *x = &acc.data[i];
        if (!x->write || x->buf != ca->X || x->block == ca->o || (x->block == ca->b && in_place(ca))) continue;
        others = true;
        int item = -1;
        if (x->block) {
            mt_blk_stmts p = mt_blk_path_to(ca->a, ca->f->body, x->block);
            int q = mt_blk_index_in(&p, ca->seq);
            for (int k = 0; q >= 0 && k < ca->seq->nstmts; k++)
                if (ca->seq->stmts[k] == p.data[q + 1]) item = k;
        }
        if (item < 0 || item >= ca->it)
            return mt_sched_refuse(ca->s, "%s: '%s' has another writer than block '%s': block '%s'%s", ca->P,
                                   ca->X->name, mt_blk_bname(ca->o), mt_blk_bname(x->block),
                                   item < 0 ? "" : mt_arena_printf(ca->a, ", not before loop '%s'", ca->loop->name));
    }
    ca->defined = others;
    return true;
}

/* The region the producer writes per iteration of L; b reads X at one
 * index. */
static bool rca_region(at *ca) {
    mt_texpr *const *idx = NULL;
    if (!one_index(ca, ca->b, &idx)) return false;
    ca->bidx = idx;
    if (!at_region(ca, ca->o->body->idx)) return false;
    bool over = false;
    for (int d = 0; d < ca->X->ndim; d++) over = over || ca->rover[d];
    /* an update in place must run once per element: the iterations' regions apart */
    if (ca->b->body->buf == ca->X && !apart(ca, false))
        return mt_sched_refuse(ca->s, "%s: block '%s' updates '%s' in place, and the regions of it that the "
                                      "iterations of loop '%s' (or of the loops around it) write may overlap", ca->P,
                               ca->name, ca->X->name, ca->loop->name);
    if (!over || apart(ca, true)) return true;
    return mt_sched_refuse(ca->s, "%s: the loops of block '%s' under loop '%s' have extents that depend on "
                                  "each other (a split's clamped tail), and no dim of '%s' tells the "
                                  "iterations of loop '%s' (and of the loops around it) apart: the region it writes is not exact",
                           ca->P, mt_blk_bname(ca->o), ca->loop->name, ca->X->name, ca->loop->name);
}

bool mt_sched_reverse_compute_at_do(mt_sched *s, const char *name, mt_tvar *loop) {
    at ca = {.s = s, .a = s->arena, .f = s->func, .P = "reverse_compute_at", .reverse = true,
             .name = name, .loop = loop};
    ca.L = mt_sched_get_loop(s, loop);
    if (!rca_consumer(&ca) || !rca_producer(&ca) || !at_place(&ca) || !rca_earlier_writers(&ca) || !at_movable(&ca) ||
        !no_inner_let(&ca) || !rca_region(&ca) || !at_dims(&ca))
        return false;
    /* a reduction over a whole dim, now per iteration: only once per element */
    if (ca.whole && !apart(&ca, true))
        return mt_sched_refuse(s, "%s: block '%s' reduces over all of '%s' in each iteration of loop '%s' "
                                  "(or of the loops around it): the iterations' regions may overlap", ca.P, name,
                               ca.X->name, loop->name);
    /* b runs only over what p writes: with X's elements defined otherwise,
     * p's regions must cover b's range, or b would skip some it used to read */
    if (ca.defined && !region_covers(&ca))
        return mt_sched_refuse(s, "%s: the regions of '%s' that block '%s' writes under loop '%s' do not cover "
                                  "what block '%s' reads, and %s", ca.P, ca.X->name, mt_blk_bname(ca.o),
                               loop->name, name,
                               ca.b->body->buf == ca.X ? mt_arena_printf(ca.a, "block '%s' updates it in place", name)
                                                       : "another block writes it before");
    /* b reading its own output elsewhere (a recurrence) would run in another order */
    const mt_tstmt *st = ca.b->body;
    if (st->buf != ca.X && !reads_own_of(ca.a, ca.b, st->buf))
        return mt_sched_refuse(s, "%s: block '%s' reads '%s', the buffer it writes, at another element (a "
                                  "recurrence: it would run in the producer's order)", ca.P, name, st->buf->name);
    /* b updating its own output (B = B + ..., no init) must run once per element */
    if (st->buf != ca.X && !ca.b->init && mt_texpr_reads(st->value, st->buf) && !apart(&ca, false))
        return mt_sched_refuse(s, "%s: block '%s' updates '%s', and the regions of '%s' that the iterations of "
                                  "loop '%s' (or of the loops around it) write may overlap: it would run again",
                               ca.P, name, st->buf->name, ca.X->name, loop->name);
    at_build(&ca);
    return true;
}
