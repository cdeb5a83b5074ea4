/*
 * primitives_reduction.c -- cache_write (local accumulation of a reduction;
 * other blocks go to primitives_cache.c) and
 * decompose_reduction: the block primitives that split a reduction block
 * (see primitives_block.c for the conventions, block_util.h for the
 * helpers, docs/schedule.md for the outputs and refusals).
 */
#include "schedule/block_util.h"
#include "schedule/trace.h"

/* ---- cache_write (local accumulation) ------------------------------------------- */

typedef struct to_acc {
    const mt_tbuffer *buf;
    mt_texpr *acc;
} to_acc;

static mt_texpr *acc_expr(mt_tmutator *m, mt_texpr *e) {
    to_acc *t = m->ctx;
    if (e->kind == TE_LOAD && e->buf == t->buf) return t->acc;
    return mt_tmutate_expr_children(m, e);
}

/* The block's regions with buf's replaced by the scalar acc (once). */
static int swap_regions(mt_arena *a, const mt_tregion *rs, int n, const mt_tbuffer *buf,
                        mt_tbuffer *acc, mt_tregion **out) {
    *out = MT_NEW_ARRAY(a, mt_tregion, n + 1);
    int m = 0;
    bool done = false;
    for (int i = 0; i < n; i++) {
        if (rs[i].buf != buf) {
            (*out)[m++] = rs[i];
        } else if (!done) {
            (*out)[m++] = mt_blk_point_region(a, acc, NULL);
            done = true;
        }
    }
    return m;
}

/* The write-back wb, run only when the reduce loops path[r .. len-2] run
 * at least once: with no reduce iteration the block never wrote its buffer
 * (and the accumulator was never initialized). */
static mt_tstmt *write_back_if_ran(mt_arena *a, const mt_blk_stmts *path, int r, mt_tstmt *wb) {
    mt_texpr *ran = NULL;
    for (int j = r; j <= path->len - 2; j++) {
        const mt_tstmt *l = path->data[j];
        int64_t c;
        if (mt_te_is_const_int(l->extent, &c) && c > 0) continue;
        mt_texpr *pos = mt_te_bin(a, TE_GT, l->extent, mt_te_int(a, l->extent->dtype, 0));
        ran = ran ? mt_te_bin(a, TE_AND, ran, pos) : pos;
    }
    return ran ? mt_ts_if(a, ran, wb, NULL) : wb;
}

bool mt_sched_cache_write_do(mt_sched *s, const char *name, mt_scope scope, const char **cache_block) {
    static const char P[] = "cache_write";
    mt_arena *a = s->arena;
    mt_blk_stmts path;
    if (!mt_blk_find_block(s, P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1], *st = b->body, *in = b->init;
    mt_tvar **rv, **sv;
    int nr = mt_blk_iter_vars(a, b, MT_ITER_REDUCE, &rv), ns = mt_blk_iter_vars(a, b, MT_ITER_SPATIAL, &sv);
    if (nr == 0) return mt_blk_cache_write_copy(s, name, scope, cache_block);
    if (scope != MT_SCOPE_LOCAL)
        return mt_sched_refuse(s, "%s: block '%s' is a reduction: only scope local (a scalar "
                                  "accumulator) is supported for it", P, name);
    if (b->predicate) return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate", P, name);
    if (st->kind != TS_STORE ||
        (in && (in->kind != TS_STORE || in->buf != st->buf || !mt_blk_same_index(in->idx, st->idx, st->nidx))))
        return mt_sched_refuse(s, "%s: block '%s' does not update one element of one buffer with "
                                  "one store and its init", P, name);
    mt_tbuffer *B = st->buf;
    for (int d = 0; d < st->nidx; d++) {
        const mt_tvar *r = mt_blk_first_use(st->idx[d], rv, nr);
        if (r)
            return mt_sched_refuse(s, "%s: the index of '%s' in block '%s' uses reduce variable "
                                      "'%s'", P, B->name, name, r->name);
    }
    mt_blk_exprs own = mt_blk_loads_in(a, NULL, st->value, B);
    bool same = !in || mt_blk_loads_in(a, NULL, in->value, B).len == 0;
    for (int i = 0; same && i < own.len; i++) same = mt_blk_same_index(own.data[i]->args, st->idx, st->nidx);
    if (!same)
        return mt_sched_refuse(s, "%s: block '%s' reads '%s' at another index than it writes", P,
                               name, B->name);
    /* path[r .. len-2]: the reduce loops, innermost and perfectly nested */
    int r = path.len - 1;
    while (r > 0 && path.data[r - 1]->kind == TS_FOR && path.data[r - 1]->body == path.data[r] &&
           mt_blk_loop_binds(b, path.data[r - 1], MT_ITER_REDUCE) &&
           !mt_blk_loop_binds(b, path.data[r - 1], MT_ITER_SPATIAL))
        r--;
    for (int j = 0; j < r; j++)
        if (path.data[j]->kind == TS_FOR && mt_blk_loop_binds(b, path.data[j], MT_ITER_REDUCE))
            return mt_sched_refuse(s, "%s: the reduce loops of block '%s' are not innermost under "
                                      "its spatial loops (loop '%s')", P, name,
                                   path.data[j]->var->name);

    const char *accname = mt_blk_fresh_buffer_name(a, s->func, mt_arena_printf(a, "%s_local", B->name));
    mt_tbuffer *acc = mt_tbuffer_new(a, accname, B->dtype, 0, NULL);
    acc->scope = MT_SCOPE_LOCAL;
    mt_texpr *ld = mt_te_load(a, acc, NULL, 0);
    to_acc t = {B, ld};
    mt_tmutator m = {a, acc_expr, NULL, &t};
    mt_tstmt *nb = mt_ts_copy(a, b);
    nb->body = mt_ts_store(a, acc, NULL, 0, mt_tmutate_expr(&m, st->value));
    /* without an init (rfactor's partials, filled before) from B's element */
    nb->init = mt_ts_store(a, acc, NULL, 0, in ? in->value : mt_te_load(a, B, st->idx, st->nidx));
    nb->nreads = swap_regions(a, b->reads, b->nreads, B, acc, &nb->reads);
    if (!in) nb->reads[nb->nreads++] = mt_blk_point_region(a, B, st->idx);
    nb->nwrites = swap_regions(a, b->writes, b->nwrites, B, acc, &nb->writes);
    mt_tstmt *nest = nb;
    for (int j = path.len - 2; j >= r; j--) {
        mt_tstmt *c = mt_ts_copy(a, path.data[j]);
        c->body = nest;
        nest = c;
    }
    /* the write-back block: B[idx] = acc[()] for the same spatial instance */
    mt_tvar **nsv = mt_blk_fresh_vars(a, sv, ns, "");
    mt_texpr **nse = mt_blk_var_exprs(a, nsv, ns);
    mt_tstmt *wb = mt_blk_spatial_block(a, mt_blk_fresh_block_name(a, s->func, mt_arena_printf(a, "%s_write_back", name)), b, nsv, NULL,
                                 NULL, 0);
    mt_texpr **idx = MT_NEW_ARRAY(a, mt_texpr *, st->nidx + 1);
    for (int d = 0; d < st->nidx; d++) idx[d] = mt_tsubst_expr(a, st->idx[d], sv, nse, ns);
    wb->body = mt_ts_store(a, B, idx, st->nidx, ld);
    wb->reads = MT_NEW_ARRAY(a, mt_tregion, 1);
    wb->reads[0] = mt_blk_point_region(a, acc, NULL);
    wb->nreads = 1;
    wb->writes = MT_NEW_ARRAY(a, mt_tregion, 1);
    wb->writes[0] = mt_blk_point_region(a, B, idx);
    wb->nwrites = 1;
    mt_tstmt *pair[2] = {nest, write_back_if_ran(a, &path, r, wb)};
    mt_sched_replace(s, path.data[r], mt_ts_alloc(a, acc, mt_ts_seq(a, pair, 2)));
    if (cache_block) *cache_block = wb->name;
    return true;
}

/* ---- decompose_reduction ---------------------------------------------------------- */

/* The init moves before loop L: nothing else under L may write what it
 * reads (it would read the values from before L instead). */
static bool init_inputs_ready(mt_sched *s, const char *P, const mt_tstmt *b, const mt_tstmt *L) {
    mt_blk_exprs in = mt_blk_loads_in(s->arena, b->init, NULL, NULL);
    mt_blk_accesses acc = mt_blk_scan(s->arena, L, NULL, NULL);
    for (int i = 0; i < acc.len; i++) {
        const mt_blk_access *x = &acc.data[i];
        for (int k = 0; x->write && x->block != b && k < in.len; k++)
            if (in.data[k]->buf == x->buf)
                return mt_sched_refuse(s, "%s: the init of block '%s' reads '%s', which block '%s' writes "
                                          "under loop '%s'", P, mt_blk_bname(b), x->buf->name,
                                       mt_blk_bname(x->block), L->var->name);
    }
    return true;
}

/* The loops above L (path[0 .. il)) that bind reduce variables of b, into
 * *above, and *first: each at its first iteration (NULL: none). With
 * such loops (k0 of a K split into blocks, L inside one block) the init
 * nest goes before L under `if k0 == 0:`: each element is started once,
 * before its first update. Refused: such a loop that binds spatial
 * variables too, and a loop between the first of them and L whose bounds
 * use one (the elements under L would not be the same at the first
 * iteration as at later ones). */
static bool reduce_loops_above(mt_sched *s, const char *P, const mt_blk_stmts *path, int il, const mt_tstmt *b,
                               const mt_tvar *loop, mt_blk_stmts *above, mt_texpr **first) {
    mt_arena *a = s->arena;
    for (int j = 0; j < il; j++) {
        const mt_tstmt *l = path->data[j];
        if (l->kind != TS_FOR) continue;
        if (above->len > 0) {
            mt_tvar **rv = MT_NEW_ARRAY(a, mt_tvar *, above->len);
            for (int q = 0; q < above->len; q++) rv[q] = above->data[q]->var;
            const mt_tvar *u = mt_blk_first_use(l->min, rv, above->len);
            if (!u) u = mt_blk_first_use(l->extent, rv, above->len);
            if (u)
                return mt_sched_refuse(s, "%s: the bounds of loop '%s' depend on loop '%s'", P, l->var->name,
                                       u->name);
        }
        if (!mt_blk_loop_binds(b, l, MT_ITER_REDUCE)) continue;
        if (mt_blk_loop_binds(b, l, MT_ITER_SPATIAL))
            return mt_sched_refuse(s, "%s: loop '%s' above loop '%s' binds both spatial and reduce variables of "
                                      "block '%s'", P, l->var->name, loop->name, mt_blk_bname(b));
        MT_VEC_PUSH(a, above, l);
        mt_texpr *at = mt_te_bin(a, TE_EQ, mt_te_var(a, l->var), l->min);
        *first = *first ? mt_te_bin(a, TE_AND, *first, at) : at;
    }
    return true;
}

bool mt_sched_decompose_reduction_do(mt_sched *s, const char *name, mt_tvar *loop) {
    static const char P[] = "decompose_reduction";
    mt_arena *a = s->arena;
    const mt_tstmt *L = mt_sched_get_loop(s, loop);
    mt_blk_stmts path;
    if (!mt_blk_find_block(s, P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1];
    mt_tvar **rv, **sv;
    int nr = mt_blk_iter_vars(a, b, MT_ITER_REDUCE, &rv), ns = mt_blk_iter_vars(a, b, MT_ITER_SPATIAL, &sv);
    if (!b->init) return mt_sched_refuse(s, "%s: block '%s' has no init", P, name);
    if (nr == 0)
        return mt_sched_refuse(s, "%s: block '%s' is not a reduction (no reduce variable)", P,
                               name);
    if (b->predicate) return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate", P, name);
    int il = mt_blk_index_in(&path, L);
    if (il < 0)
        return mt_sched_refuse(s, "%s: loop '%s' is not an ancestor of block '%s'", P, loop->name,
                               name);
    const mt_tvar *ru = mt_blk_stmt_use(b->init, rv, nr);
    if (ru)
        return mt_sched_refuse(s, "%s: the init of block '%s' uses reduce variable '%s'", P, name,
                               ru->name);
    for (int i = 0; i < b->nwrites; i++)
        for (int d = 0; d < b->writes[i].buf->ndim; d++)
            if ((ru = mt_blk_first_use(b->writes[i].min[d], rv, nr)) ||
                (ru = mt_blk_first_use(b->writes[i].extent[d], rv, nr)))
                return mt_sched_refuse(s, "%s: block '%s' writes '%s' at an index of reduce variable "
                                          "'%s': not a reduction the init can start", P, name,
                                       b->writes[i].buf->name, ru->name);
    const mt_tstmt *let = mt_blk_let_binding(&path, 0, b); /* which loops bind it is read from the bindings */
    if (let) return mt_sched_refuse(s, "%s: block '%s' is bound through '%s', a let", P, name, let->var->name);
    mt_blk_stmts above = {0}; /* reduce loops above L: the init runs at their first iteration */
    mt_texpr *first = NULL;
    if (!reduce_loops_above(s, P, &path, il, b, loop, &above, &first)) return false;
    const mt_tstmt *rep = mt_blk_unbinding_loop(&path, above.len ? mt_blk_index_in(&path, above.data[0]) : il, b);
    if (rep)
        return mt_sched_refuse(s, "%s: loop '%s' binds no variable of block '%s': it repeats the "
                                  "reduction, each time from its init", P, rep->var->name, name);
    if (!init_inputs_ready(s, P, b, L)) return false;
    mt_blk_stmts copied = {0}, others = {0};
    for (int j = il; j < path.len - 1; j++) {
        const mt_tstmt *l = path.data[j];
        if (l->kind == TS_SEQ) continue;
        if (l->kind != TS_FOR)
            return mt_sched_refuse(s, "%s: a statement other than a loop lies between loop '%s' "
                                      "and block '%s'", P, loop->name, name);
        bool bs = mt_blk_loop_binds(b, l, MT_ITER_SPATIAL), br = mt_blk_loop_binds(b, l, MT_ITER_REDUCE);
        if (bs && br)
            return mt_sched_refuse(s, "%s: loop '%s' binds both spatial and reduce variables of "
                                      "block '%s'", P, l->var->name, name);
        MT_VEC_PUSH(a, bs ? &copied : &others, l);
    }
    mt_tvar **ov = MT_NEW_ARRAY(a, mt_tvar *, others.len + above.len + 1);
    for (int j = 0; j < others.len; j++) ov[j] = others.data[j]->var;
    for (int j = 0; j < above.len; j++) ov[others.len + j] = above.data[j]->var;
    for (int j = 0; j < copied.len; j++) {
        const mt_tstmt *l = copied.data[j];
        const mt_tvar *u = mt_blk_first_use(l->min, ov, others.len + above.len);
        if (!u) u = mt_blk_first_use(l->extent, ov, others.len + above.len);
        if (u)
            return mt_sched_refuse(s, "%s: the bounds of loop '%s' depend on loop '%s'", P,
                                   l->var->name, u->name);
    }
    /* the init block, in copies of the spatial loops */
    int nc = copied.len;
    mt_tvar **cv = MT_NEW_ARRAY(a, mt_tvar *, nc + 1);
    for (int j = 0; j < nc; j++) cv[j] = copied.data[j]->var;
    mt_tvar **ncv = mt_blk_fresh_vars(a, cv, nc, "_init");
    mt_texpr **nce = mt_blk_var_exprs(a, ncv, nc);
    mt_tvar **nsv = mt_blk_fresh_vars(a, sv, ns, "");
    mt_texpr **nse = mt_blk_var_exprs(a, nsv, ns);
    const char *iname = mt_blk_fresh_block_name(a, s->func, mt_arena_printf(a, "%s_init", name));
    const char *uname = mt_blk_fresh_block_name(a, s->func, mt_arena_printf(a, "%s_update", name));
    mt_tstmt *ib = mt_blk_spatial_block(a, iname, b, nsv, cv, nce, nc);
    mt_tstmt *init = mt_tsubst_stmt(a, b->init, sv, nse, ns);
    ib->body = init;
    ib->writes = MT_NEW_ARRAY(a, mt_tregion, b->nwrites + 1);
    ib->nwrites = b->nwrites;
    for (int i = 0; i < b->nwrites; i++) {
        mt_tregion r = b->writes[i];
        int nd = r.buf->ndim;
        mt_tregion c = {r.buf, MT_NEW_ARRAY(a, mt_texpr *, nd + 1),
                        MT_NEW_ARRAY(a, mt_texpr *, nd + 1)};
        for (int d = 0; d < nd; d++) {
            c.min[d] = mt_tsubst_expr(a, r.min[d], sv, nse, ns);
            c.extent[d] = mt_tsubst_expr(a, r.extent[d], sv, nse, ns);
        }
        ib->writes[i] = c;
    }
    mt_blk_exprs il3 = mt_blk_loads_in(a, init, NULL, NULL);
    ib->reads = MT_NEW_ARRAY(a, mt_tregion, il3.len + 1);
    for (int i = 0; i < il3.len; i++)
        ib->reads[ib->nreads++] = mt_blk_point_region(a, il3.data[i]->buf, il3.data[i]->args);
    mt_tstmt *nest = ib;
    for (int j = nc - 1; j >= 0; j--) {
        const mt_tstmt *l = copied.data[j];
        nest = mt_ts_for(a, ncv[j], mt_tsubst_expr(a, l->min, cv, nce, nc),
                         mt_tsubst_expr(a, l->extent, cv, nce, nc), MT_FOR_SERIAL, nest);
    }
    if (first) nest = mt_ts_if(a, first, nest, NULL); /* once, at the first iteration of those loops */
    /* the update block: the same without its init */
    mt_tstmt *ub = mt_ts_copy(a, b);
    ub->init = NULL;
    ub->name = uname;
    mt_sched_replace(s, b, ub);
    s->made = iname, s->renamed = uname;
    const mt_tstmt *L2 = mt_sched_get_loop(s, loop);
    mt_tstmt *pair[2] = {nest, (mt_tstmt *)L2};
    mt_sched_replace(s, L2, mt_ts_seq(a, pair, 2));
    return true;
}

