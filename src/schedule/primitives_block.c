/*
 * primitives_block.c -- compute_inline and reverse_compute_inline: the
 * primitives that merge a block into its readers or its producer
 * (compute_at and reverse_compute_at, which move blocks, are
 * primitives_at.c; cache_read and cache_write primitives_cache.c and
 * primitives_reduction.c; decompose_reduction primitives_reduction.c; the
 * helpers they share are block_util.c).
 *
 * They follow primitives.c: find what is named, check every precondition and
 * refuse with a reason (s->error, s->func untouched), otherwise build new
 * nodes and put them in place (mt_sched_replace rebuilds only the ancestors).
 * Blocks are named by their name; a name no block or several blocks carry is
 * a refusal (names come from the schedule writer, unlike loop variables).
 *
 * Tools: mt_blk_find_block gives the block and the path of statements from
 * the body to it; mt_blk_scan lists every store and load of the function in
 * program order, each with its innermost block and whether it lies inside
 * the target block, after it, or inside a loop around it (what the
 * dependence checks need); mt_blk_drop removes one statement and the loops
 * (and other wrappers) its removal leaves empty.
 * See docs/schedule.md "Primitives" for each one's output and refusals.
 */
#include "schedule/block_util.h"
#include "schedule/trace.h"

#include <string.h>

#include "passes/tir/inline_subst.h"

/* ---- compute_inline ------------------------------------------------------------ */

bool mt_sched_compute_inline_do(mt_sched *s, const char *name) {
    static const char P[] = "compute_inline";
    mt_arena *a = s->arena;
    const mt_tfunc *f = s->func;
    mt_blk_stmts path;
    if (!mt_blk_find_block(s, P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1];
    const mt_tvar *rv = mt_blk_reduce_iter(b);
    if (rv) return mt_sched_refuse(s, "%s: block '%s' has reduce variable '%s'", P, name, rv->name);
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
    mt_blk_accesses acc = mt_blk_scan(a, f->body, b, &path);
    for (int i = 0; i < acc.len; i++) {
        const mt_blk_access *x = &acc.data[i];
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

/* ---- reverse_compute_inline -------------------------------------------------------- */

/* What reverse_compute_inline finds: the consumer c, Y[h] = g reading X at
 * a permutation of its iteration variables, and X's producer p. */
typedef struct rci {
    mt_sched *s;
    mt_arena *a;
    const mt_tfunc *f;
    const char *name;     /* c's */
    mt_blk_stmts path;    /* body .. c */
    const mt_tstmt *c, *p;
    mt_tbuffer *X, *Y;
    mt_texpr *const *cidx; /* c's index of X */
    mt_blk_bufs inputs;    /* what c reads, but X */
} rci;

#define RCI_P "reverse_compute_inline"

/* c's loads: Y not among them; X the one buffer the function allocates
 * (at cidx), inputs the others. */
static bool rci_reads(rci *r, const mt_blk_exprs *loads) {
    const char *name = r->name;
    for (int i = 0; i < loads->len; i++) {
        mt_tbuffer *B = loads->data[i]->buf;
        if (B == r->Y)
            return mt_sched_refuse(r->s, "%s: block '%s' reads '%s', the buffer it writes", RCI_P,
                                   name, B->name);
        if (B == r->X || mt_blk_buf_in(&r->inputs, B)) continue;
        if (!mt_blk_is_alloc(r->f, B)) {
            MT_VEC_PUSH(r->a, &r->inputs, B);
        } else if (r->X) {
            return mt_sched_refuse(r->s, "%s: block '%s' reads '%s' and '%s', both allocated by "
                                         "the function (one producer wanted)", RCI_P, name,
                                   r->X->name, B->name);
        } else {
            r->X = B;
            r->cidx = loads->data[i]->args;
        }
    }
    if (!r->X)
        return mt_sched_refuse(r->s, "%s: block '%s' reads no buffer the function allocates (no "
                                     "producer to inline into)", RCI_P, name);
    return true;
}

/* c reads X at one index, a bijection, and uses only its own variables. */
static bool rci_index(rci *r, const mt_blk_exprs *loads) {
    const mt_tstmt *c = r->c;
    const char *name = r->name;
    for (int i = 0; i < loads->len; i++)
        if (loads->data[i]->buf == r->X && !mt_blk_same_index(loads->data[i]->args, r->cidx, r->X->ndim))
            return mt_sched_refuse(r->s, "%s: block '%s' reads '%s' at more than one index", RCI_P,
                                   name, r->X->name);
    if (!mt_blk_bijection(c, r->X, r->cidx))
        return mt_sched_refuse(r->s, "%s: block '%s' reads '%s' at '%s', not at its iteration "
                                     "variables in some order over the whole buffer (not a "
                                     "bijection)", RCI_P, name, r->X->name,
                               mt_texpr_print(r->a, mt_te_load(r->a, r->X, r->cidx, r->X->ndim)));
    mt_tvar **cv = MT_NEW_ARRAY(r->a, mt_tvar *, c->niters + 1);
    for (int k = 0; k < c->niters; k++) cv[k] = c->iters[k].var;
    const mt_tvar *fv = mt_blk_foreign_var(c->body->value, cv, c->niters, r->f);
    for (int d = 0; !fv && d < c->body->nidx; d++) fv = mt_blk_foreign_var(c->body->idx[d], cv, c->niters, r->f);
    if (fv)
        return mt_sched_refuse(r->s, "%s: block '%s' uses '%s', which is not one of its iteration "
                                     "variables", RCI_P, name, fv->name);
    return true;
}

/* The consumer: a single store of a spatial block, reading one buffer the
 * function allocates at one index, a bijection. */
/* The loop of the path whose variable is v, or NULL. */
static const mt_tstmt *path_loop(const mt_blk_stmts *path, const mt_tvar *v) {
    for (int j = 0; j < path->len; j++)
        if (path->data[j]->kind == TS_FOR && path->data[j]->var == v) return path->data[j];
    return NULL;
}

/* c's instances cover its whole domain, the region of Y the producer's
 * values go to: no `if` around it, and the loops its bindings use, each
 * from 0, run as many iterations as the domain has points (constants), or
 * each binding is one such loop over exactly its variable's extent. */
static bool rci_covers(rci *r) {
    const mt_tstmt *c = r->c;
    int64_t points = 1, iters = 1, e;
    bool trivial = true;
    for (int j = 0; j + 1 < r->path.len; j++) {
        const mt_tstmt *p = r->path.data[j];
        if (p->kind == TS_IF)
            return mt_sched_refuse(r->s, "%s: block '%s' is under an if: it may not store all of '%s'",
                                   RCI_P, r->name, r->Y->name);
        bool used = false;
        for (int k = 0; p->kind == TS_FOR && k < c->niters; k++) used = used || mt_texpr_uses_var(c->iter_values[k], p->var);
        if (!used) continue;
        if (!mt_te_is_const_int(p->min, &e) || e != 0)
            return mt_sched_refuse(r->s, "%s: loop '%s' of block '%s' does not start at 0", RCI_P, p->var->name, r->name);
        iters = iters >= 0 && mt_te_is_const_int(p->extent, &e) ? iters * e : -1;
    }
    for (int k = 0; k < c->niters; k++) {
        const mt_texpr *v = c->iter_values[k];
        const mt_tstmt *l = v->kind == TE_VAR ? path_loop(&r->path, v->var) : NULL;
        trivial = trivial && l && mt_texpr_equal(l->extent, c->iters[k].extent);
        for (int q = 0; trivial && q < k; q++) trivial = !mt_texpr_equal(c->iter_values[q], v); /* one loop each */
        points = points >= 0 && mt_te_is_const_int(c->iters[k].extent, &e) ? points * e : -1;
    }
    if (trivial || (points >= 0 && iters == points)) return true;
    return mt_sched_refuse(r->s, "%s: the loops of block '%s' do not run over all of its domain", RCI_P, r->name);
}

static bool rci_consumer(rci *r) {
    mt_sched *s = r->s;
    const char *name = r->name;
    if (!mt_blk_find_block(s, RCI_P, name, &r->path)) return false;
    const mt_tstmt *c = r->c = r->path.data[r->path.len - 1];
    const mt_tvar *rv = mt_blk_reduce_iter(c);
    if (rv) return mt_sched_refuse(s, "%s: block '%s' has reduce variable '%s'", RCI_P, name, rv->name);
    if (c->init) return mt_sched_refuse(s, "%s: block '%s' has an init", RCI_P, name);
    if (c->predicate) return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate", RCI_P, name);
    if (c->nallocs) return mt_sched_refuse(s, "%s: block '%s' allocates buffers", RCI_P, name);
    if (c->body->kind != TS_STORE)
        return mt_sched_refuse(s, "%s: the body of block '%s' is not a single store", RCI_P, name);
    r->Y = c->body->buf;
    if (!rci_covers(r)) return false;
    mt_blk_exprs loads = mt_blk_loads_in(r->a, NULL, c->body->value, NULL);
    return rci_reads(r, &loads) && rci_index(r, &loads);
}

/* The producer: X's only writer, a spatial block storing all of X once,
 * before c; X read by c only. */
static bool rci_producer(rci *r) {
    mt_sched *s = r->s;
    const char *X = r->X->name;
    mt_blk_accesses acc = mt_blk_scan(r->a, r->f->body, r->c, &r->path);
    for (int i = 0; i < acc.len; i++) {
        const mt_blk_access *x = &acc.data[i];
        if (x->inside || x->buf != r->X || !x->write) continue;
        if (!x->block || (r->p && r->p != x->block))
            return mt_sched_refuse(s, "%s: '%s' has more than one writer (blocks '%s' and '%s')",
                                   RCI_P, X, mt_blk_bname(r->p), mt_blk_bname(x->block));
        if (x->after)
            return mt_sched_refuse(s, "%s: block '%s' reads '%s' before block '%s' writes it",
                                   RCI_P, r->name, X, mt_blk_bname(x->block));
        r->p = x->block;
    }
    const mt_tstmt *p = r->p;
    if (!p) return mt_sched_refuse(s, "%s: no block writes '%s'", RCI_P, X);
    const char *pn = mt_blk_bname(p);
    if (mt_blk_reduce_iter(p) || p->init)
        return mt_sched_refuse(s, "%s: the producer of '%s', block '%s', is a reduction: its "
                                  "values are final only after its last reduce iteration",
                               RCI_P, X, pn);
    if (p->predicate)
        return mt_sched_refuse(s, "%s: the producer of '%s', block '%s', has a T.where predicate",
                               RCI_P, X, pn);
    for (int i = 0; i < acc.len; i++)
        if (!acc.data[i].inside && acc.data[i].buf == r->X && !acc.data[i].write)
            return mt_sched_refuse(s, "%s: '%s' is read by block '%s' too", RCI_P, X,
                                   mt_blk_bname(acc.data[i].block));
    if (p->body->kind != TS_STORE)
        return mt_sched_refuse(s, "%s: the body of block '%s', the producer of '%s', is not a "
                                  "single store", RCI_P, pn, X);
    if (!mt_blk_bijection(p, r->X, p->body->idx))
        return mt_sched_refuse(s, "%s: the producer of '%s', block '%s', does not write it at its "
                                  "iteration variables in some order over the whole buffer",
                               RCI_P, X, pn);
    return true;
}

/* Between p and c (after p and not after c in program order, or in a loop
 * around p), nothing writes what c reads or touches what c writes: c's
 * value is now computed, and Y written, where p runs. */
static bool rci_between(rci *r) {
    mt_blk_stmts ppath = mt_blk_path_to(r->a, r->f->body, r->p);
    mt_blk_accesses ap = mt_blk_scan(r->a, r->f->body, r->p, &ppath);
    mt_blk_accesses ac = mt_blk_scan(r->a, r->f->body, r->c, &r->path);
    for (int i = 0; i < ap.len; i++) {
        const mt_blk_access *x = &ap.data[i];
        bool btw = (x->after && !ac.data[i].after) || x->around;
        if (x->inside || ac.data[i].inside || !btw) continue;
        if (x->buf == r->Y)
            return mt_sched_refuse(r->s, "%s: block '%s' %s '%s', which block '%s' writes, between "
                                         "blocks '%s' and '%s'", RCI_P, mt_blk_bname(x->block),
                                   x->write ? "writes" : "reads", r->Y->name, r->name,
                                   mt_blk_bname(r->p), r->name);
        if (x->write && mt_blk_buf_in(&r->inputs, x->buf))
            return mt_sched_refuse(r->s, "%s: block '%s' writes '%s', which block '%s' reads, "
                                         "between blocks '%s' and '%s'", RCI_P, mt_blk_bname(x->block),
                                   x->buf->name, r->name, mt_blk_bname(r->p), r->name);
    }
    return true;
}

typedef struct to_value {
    const mt_tbuffer *buf;
    mt_texpr *value;
} to_value;

static mt_texpr *value_expr(mt_tmutator *m, mt_texpr *e) {
    to_value *t = m->ctx;
    if (e->kind == TE_LOAD && e->buf == t->buf) return t->value;
    return mt_tmutate_expr_children(m, e);
}

/* Is r one of rs[0..n)? */
static bool has_region(const mt_tregion *rs, int n, const mt_tregion *r) {
    for (int i = 0; i < n; i++)
        if (rs[i].buf == r->buf && mt_blk_same_index(rs[i].min, r->min, r->buf->ndim) &&
            mt_blk_same_index(rs[i].extent, r->extent, r->buf->ndim))
            return true;
    return false;
}

/* rs without X's regions, then more (mapped through vars := vals), without
 * repeats. */
static int merge_regions(mt_arena *a, const mt_tregion *rs, int n, const mt_tbuffer *X,
                         const mt_tregion *more, int nmore, mt_tvar *const *vars,
                         mt_texpr *const *vals, int nv, mt_tregion **out) {
    *out = MT_NEW_ARRAY(a, mt_tregion, n + nmore + 1);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (rs[i].buf != X) (*out)[m++] = rs[i];
    for (int i = 0; i < nmore; i++) {
        if (more[i].buf == X) continue;
        int nd = more[i].buf->ndim;
        mt_tregion c = {more[i].buf, MT_NEW_ARRAY(a, mt_texpr *, nd + 1), MT_NEW_ARRAY(a, mt_texpr *, nd + 1)};
        for (int d = 0; d < nd; d++) {
            c.min[d] = mt_tsubst_expr(a, more[i].min[d], vars, vals, nv);
            c.extent[d] = mt_tsubst_expr(a, more[i].extent[d], vars, vals, nv);
        }
        if (!has_region(*out, m, &c)) (*out)[m++] = c;
    }
    return m;
}

/* p stores Y[h'] = g' where ' is c's variables replaced by p's index of X
 * and c's loads of X by p's value; c, its emptied loops and X go. */
static void rci_build(rci *r) {
    mt_arena *a = r->a;
    const mt_tstmt *c = r->c, *p = r->p;
    int n = r->X->ndim;
    mt_tvar **cv = MT_NEW_ARRAY(a, mt_tvar *, n + 1);
    for (int d = 0; d < n; d++) cv[d] = r->cidx[d]->var;
    mt_texpr *const *pi = p->body->idx;
    const mt_tstmt *st = c->body;
    mt_texpr **h = MT_NEW_ARRAY(a, mt_texpr *, st->nidx + 1);
    for (int d = 0; d < st->nidx; d++) h[d] = mt_tsubst_expr(a, st->idx[d], cv, pi, n);
    to_value t = {r->X, p->body->value};
    mt_tmutator m = {a, value_expr, NULL, &t};
    mt_texpr *g = mt_tmutate_expr(&m, mt_tsubst_expr(a, st->value, cv, pi, n));
    mt_tstmt *np = mt_ts_copy(a, p);
    np->body = mt_ts_at(mt_ts_store(a, r->Y, h, st->nidx, g), p->body->loc);
    np->nreads = merge_regions(a, p->reads, p->nreads, r->X, c->reads, c->nreads, cv, pi, n, &np->reads);
    mt_tregion w = mt_blk_point_region(a, r->Y, h);
    np->nwrites = merge_regions(a, p->writes, p->nwrites, r->X, &w, 1, NULL, NULL, 0, &np->writes);
    mt_sched_replace(r->s, p, np);
    const mt_tfunc *f = r->s->func;
    mt_blk_set_func_body(r->s, mt_blk_drop(a, f->body, c));
    mt_tfunc *g2 = r->s->func;
    g2->allocs = MT_NEW_ARRAY(a, mt_tbuffer *, f->nallocs + 1);
    g2->nallocs = 0;
    for (int i = 0; i < f->nallocs; i++)
        if (f->allocs[i] != r->X) g2->allocs[g2->nallocs++] = f->allocs[i];
}

bool mt_sched_reverse_compute_inline_do(mt_sched *s, const char *name) {
    rci r = {.s = s, .a = s->arena, .f = s->func, .name = name};
    if (!rci_consumer(&r) || !rci_producer(&r) || !rci_between(&r)) return false;
    rci_build(&r);
    return true;
}
