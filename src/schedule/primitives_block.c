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

bool mt_sched_compute_at(mt_sched *s, const char *name, mt_tvar *loop) {
    static const char P[] = "compute_at";
    mt_arena *a = s->arena;
    const mt_tfunc *f = s->func;
    const mt_tstmt *L = mt_sched_get_loop(s, loop);
    mt_blk_stmts path;
    if (!mt_blk_find_block(s, P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1], *st = b->body;
    if (st->kind != TS_STORE ||
        (b->init && (b->init->kind != TS_STORE || b->init->buf != st->buf ||
                     !mt_blk_same_index(b->init->idx, st->idx, st->nidx))))
        return mt_sched_refuse(s, "%s: block '%s' does not write one buffer with one store", P,
                               name);
    mt_tbuffer *X = st->buf;
    if (!mt_blk_is_alloc(f, X))
        return mt_sched_refuse(s, "%s: block '%s' writes '%s', which the function does not "
                                  "allocate (a parameter or output)", P, name, X->name);
    if (mt_blk_index_in(&path, L) >= 0)
        return mt_sched_refuse(s, "%s: block '%s' is already under loop '%s'", P, name,
                               loop->name);
    /* the consumer */
    scanner sc = scan(a, f->body, b, &path);
    const mt_tstmt *C = NULL;
    for (int i = 0; i < sc.acc.len; i++) {
        const access *x = &sc.acc.data[i];
        if (x->inside || x->buf != X) continue;
        if (x->write)
            return mt_sched_refuse(s, "%s: '%s' has another writer, block '%s'", P, X->name,
                                   mt_blk_bname(x->block));
        if (!x->block)
            return mt_sched_refuse(s, "%s: '%s' is read outside a block", P, X->name);
        if (C && C != x->block)
            return mt_sched_refuse(s, "%s: '%s' is read by blocks '%s' and '%s' (compute_at wants "
                                      "one consumer)", P, X->name, mt_blk_bname(C), mt_blk_bname(x->block));
        C = x->block;
    }
    if (!C) return mt_sched_refuse(s, "%s: no block reads '%s'", P, X->name);
    mt_blk_stmts cpath = mt_blk_path_to(a, f->body, C);
    int il = mt_blk_index_in(&cpath, L);
    if (il < 0)
        return mt_sched_refuse(s, "%s: loop '%s' is not an ancestor of block '%s'", P, loop->name,
                               mt_blk_bname(C));
    /* the producer's nest: path[k .. len-2] are its loops */
    int k = path.len - 1;
    while (k > 0 && path.data[k - 1]->kind == TS_FOR && path.data[k - 1]->body == path.data[k]) k--;
    const mt_tstmt *seq = k > 0 ? path.data[k - 1] : NULL;
    int iq = seq ? mt_blk_index_in(&cpath, seq) : -1, in = -1, it = -1;
    for (int i = 0; iq >= 0 && i < seq->nstmts; i++) {
        if (seq->stmts[i] == path.data[k]) in = i;
        if (seq->stmts[i] == cpath.data[iq + 1]) it = i;
    }
    if (!seq || seq->kind != TS_SEQ || iq < 0 || il <= iq || in < 0 || it <= in)
        return mt_sched_refuse(s, "%s: loop '%s' does not come after the loop nest of block '%s' "
                                  "in the same sequence", P, loop->name, name);
    if (L->for_kind != MT_FOR_SERIAL && L->for_kind != MT_FOR_UNROLLED)
        return mt_sched_refuse(s, "%s: loop '%s' is not serial", P, loop->name);
    int nl = path.len - 1 - k;
    const mt_tstmt **nest = path.data + k;
    mt_tvar **nv = MT_NEW_ARRAY(a, mt_tvar *, nl + 1);
    for (int j = 0; j < nl; j++) nv[j] = nest[j]->var;
    for (int j = 0; j < nl; j++)
        if (mt_blk_first_use(nest[j]->min, nv, nl) || mt_blk_first_use(nest[j]->extent, nv, nl))
            return mt_sched_refuse(s, "%s: the loops of block '%s' are not a rectangular nest", P,
                                   name);
    for (int i = 0; i < b->niters; i++) {
        const mt_tvar *fv = mt_blk_foreign_var(b->iter_values[i], nv, nl, f);
        if (fv)
            return mt_sched_refuse(s, "%s: block '%s' is bound to '%s', outside its own loop nest",
                                   P, name, fv->name);
    }
    mt_blk_bufs inputs = {0};
    mt_blk_exprs pl = mt_blk_loads_in(a, b->body, NULL, NULL), il2 = mt_blk_loads_in(a, b->init, NULL, NULL);
    for (int i = 0; i < il2.len; i++) MT_VEC_PUSH(a, &pl, il2.data[i]);
    for (int i = 0; i < pl.len; i++)
        if (pl.data[i]->buf != X && !mt_blk_buf_in(&inputs, pl.data[i]->buf))
            MT_VEC_PUSH(a, &inputs, pl.data[i]->buf);
    const access *w = written_between(a, seq, in + 1, it, &inputs);
    if (w)
        return mt_sched_refuse(s, "%s: block '%s' writes '%s', which block '%s' reads, between "
                                  "them", P, mt_blk_bname(w->block), w->buf->name, name);
    /* the region one iteration of L reads */
    if (C->predicate)
        return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate: the region it reads is "
                                  "not exact", P, mt_blk_bname(C));
    mt_blk_exprs cl = mt_blk_loads_in(a, C->body, NULL, X), cl2 = mt_blk_loads_in(a, C->init, NULL, X);
    for (int i = 0; i < cl2.len; i++) MT_VEC_PUSH(a, &cl, cl2.data[i]);
    for (int i = 1; i < cl.len; i++)
        if (!mt_blk_same_index(cl.data[0]->args, cl.data[i]->args, X->ndim))
            return mt_sched_refuse(s, "%s: block '%s' reads '%s' at more than one index", P,
                                   mt_blk_bname(C), X->name);
    mt_blk_stmts inner = {0};
    for (int j = il + 1; j < cpath.len - 1; j++)
        if (cpath.data[j]->kind == TS_FOR) MT_VEC_PUSH(a, &inner, cpath.data[j]);
    bool *used = MT_NEW_ARRAY(a, bool, inner.len + 1);
    mt_texpr **rmin = MT_NEW_ARRAY(a, mt_texpr *, X->ndim + 1);
    mt_texpr **rext = MT_NEW_ARRAY(a, mt_texpr *, X->ndim + 1);
    mt_tvar **cv = MT_NEW_ARRAY(a, mt_tvar *, C->niters + 1);
    for (int i = 0; i < C->niters; i++) cv[i] = C->iters[i].var;
    for (int d = 0; d < X->ndim; d++) {
        mt_texpr *e = mt_tsubst_expr(a, cl.data[0]->args[d], cv, C->iter_values, C->niters);
        if (!derive_dim(a, e, &inner, used, &rmin[d], &rext[d]))
            return mt_sched_refuse(s, "%s: cannot derive the region of '%s' that loop '%s' needs "
                                      "from index '%s' of dim %d", P, X->name, loop->name,
                                   mt_texpr_print(a, e), d);
    }
    /* the producer's side: dim d is written at an iter var bound to its own
     * loop nest[dl[d]], or at a constant */
    int *dl = MT_NEW_ARRAY(a, int, X->ndim + 1);
    int *iter_dim = MT_NEW_ARRAY(a, int, b->niters + 1);
    for (int i = 0; i < b->niters; i++) iter_dim[i] = -1;
    for (int d = 0; d < X->ndim; d++) {
        const mt_texpr *x = st->idx[d];
        int64_t c;
        dl[d] = -1;
        if (mt_te_is_const_int(x, &c)) {
            if (!mt_arith_is_const(rmin[d], c) || !mt_arith_is_const(rext[d], 1))
                return mt_sched_refuse(s, "%s: block '%s' writes dim %d of '%s' at %lld only, and "
                                          "loop '%s' needs more", P, name, d, X->name,
                                       (long long)c, loop->name);
            continue;
        }
        int u = -1;
        for (int i = 0; x->kind == TE_VAR && i < b->niters; i++)
            if (b->iters[i].var == x->var) u = i;
        const mt_texpr *v = u >= 0 ? b->iter_values[u] : NULL;
        for (int j = 0; v && v->kind == TE_VAR && j < nl; j++)
            if (nest[j]->var == v->var) dl[d] = j;
        bool ok = dl[d] >= 0 && iter_dim[u] < 0 && b->iters[u].kind == MT_ITER_SPATIAL &&
                  mt_arith_is_const(nest[dl[d]]->min, 0) &&
                  mt_texpr_equal(nest[dl[d]]->extent, b->iters[u].extent);
        for (int i = 0; ok && i < b->niters; i++)
            ok = i == u || !mt_blk_first_use(b->iter_values[i], &nest[dl[d]]->var, 1);
        if (!ok)
            return mt_sched_refuse(s, "%s: block '%s' writes dim %d of '%s' at '%s', not at an "
                                      "iteration variable bound to a loop of its own", P, name, d,
                                   X->name, mt_texpr_print(a, x));
        iter_dim[u] = d;
    }
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == MT_ITER_SPATIAL && iter_dim[i] < 0)
            return mt_sched_refuse(s, "%s: spatial variable '%s' of block '%s' does not index '%s'",
                                   P, b->iters[i].var->name, name, X->name);

    /* build: the nest with X's loops replaced by the region */
    mt_tstmt *nb = mt_ts_copy(a, b);
    nb->iter_values = MT_NEW_ARRAY(a, mt_texpr *, b->niters + 1);
    memcpy(nb->iter_values, b->iter_values, sizeof(mt_texpr *) * (size_t)b->niters);
    mt_tstmt *body = nb;
    for (int j = nl - 1; j >= 0; j--) {
        int d = -1;
        for (int e = 0; e < X->ndim; e++)
            if (dl[e] == j) d = e;
        if (d < 0) {
            mt_tstmt *c = mt_ts_copy(a, nest[j]);
            c->body = body;
            body = c;
            continue;
        }
        int u = 0;
        while (iter_dim[u] != d) u++;
        if (mt_arith_is_const(rext[d], 1)) {
            nb->iter_values[u] = rmin[d];
            continue;
        }
        nb->iter_values[u] = mt_arith_add(a, rmin[d], mt_te_var(a, nest[j]->var));
        body = mt_ts_for(a, nest[j]->var, mt_te_i64(a, 0), rext[d], MT_FOR_SERIAL, body);
    }
    mt_blk_set_func_body(s, mt_blk_drop(a, f->body, path.data[k]));
    mt_tstmt *nL = mt_ts_copy(a, L);
    nL->body = mt_blk_prepend(a, body, L->body);
    mt_sched_replace(s, L, nL);
    return true;
}

