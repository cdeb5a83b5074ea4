/*
 * primitives_block.c -- compute_inline and compute_at: the primitives that
 * move or merge blocks rather than loops (cache_write and
 * decompose_reduction, which split reductions, are primitives_reduction.c;
 * the helpers all four share are block_util.c).
 *
 * They follow primitives.c: find what is named, check every precondition and
 * refuse with a reason (s->error, s->func untouched), otherwise build new
 * nodes and put them in place (mt_sched_replace rebuilds only the ancestors).
 * Blocks are named by their name; a name no block or several blocks carry is
 * a refusal (names come from the schedule writer, unlike loop variables).
 *
 * Tools: mt_blk_find_block gives the block and the path of statements from
 * the body to it; scan (here) lists every store and load of the function in
 * program order, each with its innermost block and whether it lies inside
 * the target block, after it, or inside a loop around it (what the
 * dependence checks need); mt_blk_drop removes one statement and the loops
 * (and other wrappers) its removal leaves empty.
 * See docs/schedule.md "Primitives" for each one's output and refusals.
 */
#include "schedule/block_util.h"

#include <string.h>

#include "passes/tir/inline_subst.h"

/* ---- accesses in program order ---------------------------------------------- */

typedef struct access {
    const mt_tstmt *block; /* innermost block around it (NULL: none) */
    mt_tbuffer *buf;
    bool write;
    bool inside; /* inside the target */
    bool after;  /* after the target in program order */
    bool around; /* inside a loop around the target */
} access;

typedef struct scanner {
    mt_tvisitor v;
    mt_arena *a;
    const mt_tstmt *target;
    const mt_blk_stmts *anc; /* the target's path */
    const mt_tstmt *block;
    bool inside, after;
    int around;
    MT_VEC(access) acc;
} scanner;

static void push_access(scanner *sc, mt_tbuffer *buf, bool write) {
    access x = {sc->block, buf, write, sc->inside, sc->after, sc->around > 0};
    MT_VEC_PUSH(sc->a, &sc->acc, x);
}

static void scan_expr(mt_tvisitor *v, const mt_texpr *e) {
    if (e->kind == TE_LOAD) push_access((scanner *)v, e->buf, false);
    mt_tvisit_expr_children(v, e);
}

static void scan_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    scanner *sc = (scanner *)v;
    bool is_target = s == sc->target;
    bool anc = s->kind == TS_FOR && sc->anc && mt_blk_index_in(sc->anc, s) >= 0;
    const mt_tstmt *saved = sc->block;
    if (s->kind == TS_BLOCK) sc->block = s;
    if (is_target) sc->inside = true;
    if (anc) sc->around++;
    if (s->kind == TS_STORE) push_access(sc, s->buf, true);
    mt_tvisit_stmt_children(v, s);
    if (anc) sc->around--;
    if (is_target) sc->inside = false, sc->after = true;
    sc->block = saved;
}

/* Accesses under root, relative to target (whose path from root is anc). */
static scanner scan(mt_arena *a, const mt_tstmt *root, const mt_tstmt *target,
                    const mt_blk_stmts *anc) {
    scanner sc = {{scan_expr, scan_stmt, NULL}, a, target, anc, NULL, false, false, 0, {0}};
    if (root) mt_tvisit_stmt(&sc.v, root);
    return sc;
}

/* ---- compute_inline ------------------------------------------------------------ */

bool mt_sched_compute_inline(mt_sched *s, const char *name) {
    static const char P[] = "compute_inline";
    mt_arena *a = s->arena;
    const mt_tfunc *f = s->func;
    mt_blk_stmts path;
    if (!mt_blk_find_block(s, P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1];
    for (int k = 0; k < b->niters; k++)
        if (b->iters[k].kind == MT_ITER_REDUCE)
            return mt_sched_refuse(s, "%s: block '%s' has reduce variable '%s'", P, name,
                                   b->iters[k].var->name);
    if (b->init) return mt_sched_refuse(s, "%s: block '%s' has an init", P, name);
    if (b->predicate) return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate", P, name);
    if (b->nallocs) return mt_sched_refuse(s, "%s: block '%s' allocates buffers", P, name);
    const mt_tstmt *st = b->body;
    if (st->kind != TS_STORE)
        return mt_sched_refuse(s, "%s: the body of block '%s' is not a single store", P, name);
    mt_tbuffer *buf = st->buf;
    if (!mt_blk_is_alloc(f, buf))
        return mt_sched_refuse(s, "%s: block '%s' writes '%s', which the function does not "
                                  "allocate (a parameter or output)", P, name, buf->name);
    bool exact = st->nidx == b->niters && b->iter_values;
    for (int k = 0; exact && k < st->nidx; k++)
        exact = st->idx[k]->kind == TE_VAR && st->idx[k]->var == b->iters[k].var;
    if (!exact)
        return mt_sched_refuse(s, "%s: the indices of the store in block '%s' are not exactly its "
                                  "iteration variables", P, name);
    for (int k = 0; k < b->niters; k++) {
        const mt_texpr *v = b->iter_values[k];
        bool bound = false;
        for (int j = 0; v->kind == TE_VAR && j < path.len; j++)
            bound = bound || (path.data[j]->kind == TS_FOR && path.data[j]->var == v->var);
        if (!bound)
            return mt_sched_refuse(s, "%s: iteration variable '%s' of block '%s' is not bound to "
                                      "a loop variable", P, b->iters[k].var->name, name);
    }
    mt_tvar **vars = MT_NEW_ARRAY(a, mt_tvar *, b->niters + 1);
    for (int k = 0; k < b->niters; k++) vars[k] = b->iters[k].var;
    if (mt_blk_loads_in(a, NULL, st->value, buf).len)
        return mt_sched_refuse(s, "%s: block '%s' reads '%s', the buffer it writes", P, name,
                               buf->name);
    const mt_tvar *fv = mt_blk_foreign_var(st->value, vars, b->niters, f);
    if (fv)
        return mt_sched_refuse(s, "%s: the value of block '%s' uses '%s', which is not one of its "
                                  "iteration variables", P, name, fv->name);
    mt_blk_bufs inputs = {0};
    mt_blk_exprs in_loads = mt_blk_loads_in(a, NULL, st->value, NULL);
    for (int i = 0; i < in_loads.len; i++)
        if (!mt_blk_buf_in(&inputs, in_loads.data[i]->buf)) MT_VEC_PUSH(a, &inputs, in_loads.data[i]->buf);
    scanner sc = scan(a, f->body, b, &path);
    for (int i = 0; i < sc.acc.len; i++) {
        const access *x = &sc.acc.data[i];
        if (x->inside) continue;
        if (x->write && x->buf == buf)
            return mt_sched_refuse(s, "%s: '%s' has another writer, block '%s'", P, buf->name,
                                   mt_blk_bname(x->block));
        if (!x->write && x->buf == buf && !x->after)
            return mt_sched_refuse(s, "%s: block '%s' reads '%s' before block '%s' writes it", P,
                                   mt_blk_bname(x->block), buf->name, name);
        if (x->write && mt_blk_buf_in(&inputs, x->buf) && (x->after || x->around))
            return mt_sched_refuse(s, "%s: block '%s' writes '%s', which block '%s' reads, after "
                                      "it or in a loop around it", P, mt_blk_bname(x->block),
                                   x->buf->name, name);
    }

    mt_inline_def def = {buf, vars, b->niters, st->value, b->reads, b->nreads};
    mt_tstmt *body = mt_blk_drop(a, f->body, b);
    mt_blk_set_func_body(s, body ? mt_inline_apply(a, &def, 1, body) : NULL);
    mt_tfunc *g = s->func;
    g->allocs = MT_NEW_ARRAY(a, mt_tbuffer *, f->nallocs);
    g->nallocs = 0;
    for (int i = 0; i < f->nallocs; i++)
        if (f->allocs[i] != buf) g->allocs[g->nallocs++] = f->allocs[i];
    return true;
}

/* ---- compute_at ------------------------------------------------------------------ */

/* What compute_at finds, step by step (each step a function that refuses or
 * fills its part). */
typedef struct compute_at {
    mt_sched *s;
    mt_arena *a;
    const mt_tfunc *f;
    const char *name;           /* the producer block's */
    mt_tvar *loop;              /* the target loop's variable ... */
    const mt_tstmt *L;          /* ... and the loop */
    mt_blk_stmts path;          /* body .. producer block b */
    const mt_tstmt *b, *st;     /* the producer block and its store */
    mt_tbuffer *X;              /* what it writes */
    const mt_tstmt *C;          /* the one consumer block */
    mt_blk_stmts cpath;         /* body .. C */
    int il;                     /* L's index in cpath */
    int k;                      /* path[k .. len-2]: the producer's loop nest */
    const mt_tstmt *seq;        /* the sequence holding the nest and the target */
    int in, it;                 /* indices in seq of the nest and of the target's ancestor */
    int nl;                     /* loops in the nest ... */
    const mt_tstmt **nest;      /* ... outermost first */
    mt_texpr **rmin, **rext;    /* per dim of X: the region one iteration of L reads */
    int *dl;                    /* per dim of X: the nest loop it is written along (-1: constant) */
    int *iter_dim;              /* per iter var of b: the dim it indexes (-1: none) */
} compute_at;

#define CA_P "compute_at"

/* The region [min, min + ext) of one dim of the producer's buffer that one
 * iteration of the target loop reads at index e (in loop variables); inner
 * are the loops between the target loop and the consumer. */
static bool derive_dim(mt_arena *a, mt_texpr *e, const mt_blk_stmts *inner, bool *used, mt_texpr **min,
                       mt_texpr **ext) {
    int n = inner->len;
    mt_tvar **iv = MT_NEW_ARRAY(a, mt_tvar *, n + 1);
    for (int j = 0; j < n; j++) iv[j] = inner->data[j]->var;
    if (!mt_blk_first_use(e, iv, n)) {
        *min = e;
        *ext = mt_te_i64(a, 1);
        return true;
    }
    mt_texpr *var = NULL, *base = NULL;
    if (e->kind == TE_VAR) var = e;
    else if (e->kind == TE_ADD && e->a->kind == TE_VAR && !mt_blk_first_use(e->b, iv, n))
        var = e->a, base = e->b;
    else if (e->kind == TE_ADD && e->b->kind == TE_VAR && !mt_blk_first_use(e->a, iv, n))
        var = e->b, base = e->a;
    for (int j = 0; var && j < n; j++) {
        const mt_tstmt *l = inner->data[j];
        if (l->var != var->var) continue;
        if (used[j] || mt_blk_first_use(l->min, iv, n) || mt_blk_first_use(l->extent, iv, n)) return false;
        used[j] = true;
        *min = base ? mt_arith_add(a, base, l->min) : l->min;
        *ext = l->extent;
        return true;
    }
    return false;
}

/* Reads of P's inputs written by statements between P's nest and the
 * target loop. */
static const access *written_between(mt_arena *a, const mt_tstmt *seq, int from, int to,
                                     const mt_blk_bufs *inputs) {
    for (int i = from; i <= to; i++) {
        scanner sc = scan(a, seq->stmts[i], NULL, NULL);
        for (int k = 0; k < sc.acc.len; k++)
            if (sc.acc.data[k].write && mt_blk_buf_in(inputs, sc.acc.data[k].buf)) return &sc.acc.data[k];
    }
    return NULL;
}

/* The producer: a block writing one buffer the function allocates, with
 * one store (and an init storing at the same index), not under L yet. */
static bool ca_producer(compute_at *ca) {
    mt_sched *s = ca->s;
    if (!mt_blk_find_block(s, CA_P, ca->name, &ca->path)) return false;
    const mt_tstmt *b = ca->b = ca->path.data[ca->path.len - 1], *st = ca->st = b->body;
    if (st->kind != TS_STORE ||
        (b->init && (b->init->kind != TS_STORE || b->init->buf != st->buf ||
                     !mt_blk_same_index(b->init->idx, st->idx, st->nidx))))
        return mt_sched_refuse(s, "%s: block '%s' does not write one buffer with one store", CA_P,
                               ca->name);
    ca->X = st->buf;
    if (!mt_blk_is_alloc(ca->f, ca->X))
        return mt_sched_refuse(s, "%s: block '%s' writes '%s', which the function does not "
                                  "allocate (a parameter or output)", CA_P, ca->name, ca->X->name);
    if (mt_blk_index_in(&ca->path, ca->L) >= 0)
        return mt_sched_refuse(s, "%s: block '%s' is already under loop '%s'", CA_P, ca->name,
                               ca->loop->name);
    return true;
}

/* The consumer: the one block that reads X (nothing else writes it), with
 * L among its loops. */
static bool ca_consumer(compute_at *ca) {
    mt_sched *s = ca->s;
    const char *X = ca->X->name;
    scanner sc = scan(ca->a, ca->f->body, ca->b, &ca->path);
    const mt_tstmt *C = NULL;
    for (int i = 0; i < sc.acc.len; i++) {
        const access *x = &sc.acc.data[i];
        if (x->inside || x->buf != ca->X) continue;
        if (x->write)
            return mt_sched_refuse(s, "%s: '%s' has another writer, block '%s'", CA_P, X,
                                   mt_blk_bname(x->block));
        if (!x->block) return mt_sched_refuse(s, "%s: '%s' is read outside a block", CA_P, X);
        if (C && C != x->block)
            return mt_sched_refuse(s, "%s: '%s' is read by blocks '%s' and '%s' (compute_at wants "
                                      "one consumer)", CA_P, X, mt_blk_bname(C), mt_blk_bname(x->block));
        C = x->block;
    }
    if (!C) return mt_sched_refuse(s, "%s: no block reads '%s'", CA_P, X);
    ca->C = C;
    ca->cpath = mt_blk_path_to(ca->a, ca->f->body, C);
    ca->il = mt_blk_index_in(&ca->cpath, ca->L);
    if (ca->il < 0)
        return mt_sched_refuse(s, "%s: loop '%s' is not an ancestor of block '%s'", CA_P,
                               ca->loop->name, mt_blk_bname(C));
    return true;
}

/* The producer's loop nest (path[k .. len-2]) and the sequence it shares
 * with a later statement holding L; L serial. */
static bool ca_place(compute_at *ca) {
    const mt_blk_stmts *path = &ca->path;
    int k = path->len - 1;
    while (k > 0 && path->data[k - 1]->kind == TS_FOR && path->data[k - 1]->body == path->data[k]) k--;
    const mt_tstmt *seq = k > 0 ? path->data[k - 1] : NULL;
    int iq = seq ? mt_blk_index_in(&ca->cpath, seq) : -1;
    ca->in = ca->it = -1;
    for (int i = 0; iq >= 0 && i < seq->nstmts; i++) {
        if (seq->stmts[i] == path->data[k]) ca->in = i;
        if (seq->stmts[i] == ca->cpath.data[iq + 1]) ca->it = i;
    }
    if (!seq || seq->kind != TS_SEQ || iq < 0 || ca->il <= iq || ca->in < 0 || ca->it <= ca->in)
        return mt_sched_refuse(ca->s, "%s: loop '%s' does not come after the loop nest of block '%s' "
                                      "in the same sequence", CA_P, ca->loop->name, ca->name);
    if (ca->L->for_kind != MT_FOR_SERIAL && ca->L->for_kind != MT_FOR_UNROLLED)
        return mt_sched_refuse(ca->s, "%s: loop '%s' is not serial", CA_P, ca->loop->name);
    ca->k = k;
    ca->seq = seq;
    ca->nl = path->len - 1 - k;
    ca->nest = path->data + k;
    return true;
}

/* The nest is rectangular, b is bound to its own loops only, and nothing
 * between the nest and L writes what b reads. */
static bool ca_movable(compute_at *ca) {
    mt_sched *s = ca->s;
    mt_arena *a = ca->a;
    const mt_tstmt *b = ca->b;
    mt_tvar **nv = MT_NEW_ARRAY(a, mt_tvar *, ca->nl + 1);
    for (int j = 0; j < ca->nl; j++) nv[j] = ca->nest[j]->var;
    for (int j = 0; j < ca->nl; j++)
        if (mt_blk_first_use(ca->nest[j]->min, nv, ca->nl) || mt_blk_first_use(ca->nest[j]->extent, nv, ca->nl))
            return mt_sched_refuse(s, "%s: the loops of block '%s' are not a rectangular nest", CA_P,
                                   ca->name);
    for (int i = 0; i < b->niters; i++) {
        const mt_tvar *fv = mt_blk_foreign_var(b->iter_values[i], nv, ca->nl, ca->f);
        if (fv)
            return mt_sched_refuse(s, "%s: block '%s' is bound to '%s', outside its own loop nest",
                                   CA_P, ca->name, fv->name);
    }
    mt_blk_bufs inputs = {0};
    mt_blk_exprs pl = mt_blk_loads_in(a, b->body, NULL, NULL), pl2 = mt_blk_loads_in(a, b->init, NULL, NULL);
    for (int i = 0; i < pl2.len; i++) MT_VEC_PUSH(a, &pl, pl2.data[i]);
    for (int i = 0; i < pl.len; i++)
        if (pl.data[i]->buf != ca->X && !mt_blk_buf_in(&inputs, pl.data[i]->buf))
            MT_VEC_PUSH(a, &inputs, pl.data[i]->buf);
    const access *w = written_between(a, ca->seq, ca->in + 1, ca->it, &inputs);
    if (w)
        return mt_sched_refuse(s, "%s: block '%s' writes '%s', which block '%s' reads, between "
                                  "them", CA_P, mt_blk_bname(w->block), w->buf->name, ca->name);
    return true;
}

/* The region of X one iteration of L reads (rmin, rext): C reads X at one
 * index, each dim a point or a loop between L and C plus an offset. */
static bool ca_region(compute_at *ca) {
    mt_sched *s = ca->s;
    mt_arena *a = ca->a;
    const mt_tstmt *C = ca->C;
    mt_tbuffer *X = ca->X;
    if (C->predicate)
        return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate: the region it reads is "
                                  "not exact", CA_P, mt_blk_bname(C));
    mt_blk_exprs cl = mt_blk_loads_in(a, C->body, NULL, X), cl2 = mt_blk_loads_in(a, C->init, NULL, X);
    for (int i = 0; i < cl2.len; i++) MT_VEC_PUSH(a, &cl, cl2.data[i]);
    for (int i = 1; i < cl.len; i++)
        if (!mt_blk_same_index(cl.data[0]->args, cl.data[i]->args, X->ndim))
            return mt_sched_refuse(s, "%s: block '%s' reads '%s' at more than one index", CA_P,
                                   mt_blk_bname(C), X->name);
    mt_blk_stmts inner = {0};
    for (int j = ca->il + 1; j < ca->cpath.len - 1; j++)
        if (ca->cpath.data[j]->kind == TS_FOR) MT_VEC_PUSH(a, &inner, ca->cpath.data[j]);
    bool *used = MT_NEW_ARRAY(a, bool, inner.len + 1);
    ca->rmin = MT_NEW_ARRAY(a, mt_texpr *, X->ndim + 1);
    ca->rext = MT_NEW_ARRAY(a, mt_texpr *, X->ndim + 1);
    mt_tvar **cv = MT_NEW_ARRAY(a, mt_tvar *, C->niters + 1);
    for (int i = 0; i < C->niters; i++) cv[i] = C->iters[i].var;
    for (int d = 0; d < X->ndim; d++) {
        mt_texpr *e = mt_tsubst_expr(a, cl.data[0]->args[d], cv, C->iter_values, C->niters);
        if (!derive_dim(a, e, &inner, used, &ca->rmin[d], &ca->rext[d]))
            return mt_sched_refuse(s, "%s: cannot derive the region of '%s' that loop '%s' needs "
                                      "from index '%s' of dim %d", CA_P, X->name, ca->loop->name,
                                   mt_texpr_print(a, e), d);
    }
    return true;
}

/* Dim d of X written at a constant c: the region must be that point. */
static bool ca_const_dim(compute_at *ca, int d, int64_t c) {
    if (mt_arith_is_const(ca->rmin[d], c) && mt_arith_is_const(ca->rext[d], 1)) return true;
    return mt_sched_refuse(ca->s, "%s: block '%s' writes dim %d of '%s' at %lld only, and loop '%s' "
                                  "needs more", CA_P, ca->name, d, ca->X->name, (long long)c,
                           ca->loop->name);
}

/* The producer's side (dl, iter_dim): each dim of X is written at a
 * constant or at a spatial iter var bound to a loop of b's own nest over
 * the same range, and every spatial iter var indexes a dim. */
static bool ca_producer_dims(compute_at *ca) {
    const mt_tstmt *b = ca->b;
    ca->dl = MT_NEW_ARRAY(ca->a, int, ca->X->ndim + 1);
    ca->iter_dim = MT_NEW_ARRAY(ca->a, int, b->niters + 1);
    for (int i = 0; i < b->niters; i++) ca->iter_dim[i] = -1;
    for (int d = 0; d < ca->X->ndim; d++) {
        const mt_texpr *x = ca->st->idx[d];
        int64_t c;
        ca->dl[d] = -1;
        if (mt_te_is_const_int(x, &c)) {
            if (!ca_const_dim(ca, d, c)) return false;
            continue;
        }
        int u = -1;
        for (int i = 0; x->kind == TE_VAR && i < b->niters; i++)
            if (b->iters[i].var == x->var) u = i;
        const mt_texpr *v = u >= 0 ? b->iter_values[u] : NULL;
        for (int j = 0; v && v->kind == TE_VAR && j < ca->nl; j++)
            if (ca->nest[j]->var == v->var) ca->dl[d] = j;
        const mt_tstmt *l = ca->dl[d] >= 0 ? ca->nest[ca->dl[d]] : NULL;
        bool ok = l && ca->iter_dim[u] < 0 && b->iters[u].kind == MT_ITER_SPATIAL &&
                  mt_arith_is_const(l->min, 0) && mt_texpr_equal(l->extent, b->iters[u].extent);
        for (int i = 0; ok && i < b->niters; i++)
            ok = i == u || !mt_blk_first_use(b->iter_values[i], &l->var, 1);
        if (!ok)
            return mt_sched_refuse(ca->s, "%s: block '%s' writes dim %d of '%s' at '%s', not at an "
                                          "iteration variable bound to a loop of its own", CA_P,
                                   ca->name, d, ca->X->name, mt_texpr_print(ca->a, x));
        ca->iter_dim[u] = d;
    }
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == MT_ITER_SPATIAL && ca->iter_dim[i] < 0)
            return mt_sched_refuse(ca->s, "%s: spatial variable '%s' of block '%s' does not index '%s'",
                                   CA_P, b->iters[i].var->name, ca->name, ca->X->name);
    return true;
}

/* The nest again, its loops along X's dims replaced by the region: a loop
 * over rext[d] (the iter var bound to rmin[d] + it), or none for a point. */
static void ca_build(compute_at *ca) {
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
        if (mt_arith_is_const(ca->rext[d], 1)) {
            nb->iter_values[u] = ca->rmin[d];
            continue;
        }
        nb->iter_values[u] = mt_arith_add(a, ca->rmin[d], mt_te_var(a, l->var));
        body = mt_ts_at(mt_ts_for(a, l->var, mt_te_i64(a, 0), ca->rext[d], MT_FOR_SERIAL, body), l->loc);
    }
    mt_blk_set_func_body(ca->s, mt_blk_drop(a, ca->f->body, ca->path.data[ca->k]));
    mt_tstmt *nL = mt_ts_copy(a, ca->L);
    nL->body = mt_blk_prepend(a, body, ca->L->body);
    mt_sched_replace(ca->s, ca->L, nL);
}

bool mt_sched_compute_at(mt_sched *s, const char *name, mt_tvar *loop) {
    compute_at ca = {.s = s, .a = s->arena, .f = s->func, .name = name, .loop = loop};
    ca.L = mt_sched_get_loop(s, loop);
    if (!ca_producer(&ca) || !ca_consumer(&ca) || !ca_place(&ca) || !ca_movable(&ca) ||
        !ca_region(&ca) || !ca_producer_dims(&ca))
        return false;
    ca_build(&ca);
    return true;
}
