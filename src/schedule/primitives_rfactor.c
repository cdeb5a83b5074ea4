/*
 * primitives_rfactor.c -- rfactor: a reduction computed as partial results,
 * one per iteration of some of its loops, then combined (TVM's rfactor,
 * over several loops at once). See primitives.c and block_util.h for the
 * conventions, docs/schedule.md for the output and the refusals.
 *
 * A reduction block b updates one element of B per spatial instance,
 * B[idx] = F(B[idx], E), over its reduce iterations. Its reduce variables
 * are bound to expressions of loops (after fuse and split, e.g.
 * v0 = (c * 4096 + f) * 64 + l). rfactor(b, {c, l}) gives those loops'
 * iterations their own partial results:
 *
 *     B_rf = T.alloc_buffer((<spatial extents..>, C, 64))
 *     for ..: with T.block("b_rf_init"): B_rf[s.., c, l] = I     # fill
 *     for c, f, l in ..:                                         # the nest of b
 *         with T.block("b_rf"):
 *             vs.. = (b's spatial variables, bound as before)
 *             vc, vf, vl = T.axis.remap("SRS", [c, f, l])
 *             B_rf[vs.., vc, vl] = F(B_rf[vs.., vc, vl], E[v0 := (vc * 4096 + vf) * 64 + vl])
 *     for s.., c, l in ..:                                       # combine
 *         with T.block("b"):
 *             vs.. spatial, vc, vl reduce
 *             with T.init(): B[idx] = I
 *             B[idx] = F(B[idx], B_rf[vs.., vc, vl])
 *
 * Every loop whose variable occurs in a reduce binding of b gets a block
 * variable of its own in b_rf, bound to the loop's variable alone: a
 * spatial one for the named loops (their iterations now write different
 * elements of B_rf, so `parallel` and `vectorize` accept them), a reduce
 * one for the others; b's reduce variables are replaced in its body by
 * their bindings written with those variables. B_rf has b's spatial
 * extents then one dim per named loop (the loop's extent, or F when it is
 * split's clamped T.min(F, ..)); when the function has a buffer or a
 * variable named B_rf already, it is B_rf_1 (B_rf_2, ...).
 *
 * B_rf is filled with the init value I before the nest instead of being
 * initialized by b_rf's own init: a clamped loop (a split's tail) leaves
 * some elements of B_rf without any reduce iteration, and those must hold
 * the identity when they are combined. Hence the conditions on F and I:
 * F(acc, e) is acc + e (then I must be 0), T.max, T.min, or legalize's
 * T.Select(e > acc [or e != e], e, acc) and its `<` form (any I: these
 * are idempotent). The partial results are combined in the order of the
 * named loops, so a float sum is reassociated (within the bound of any
 * summation order); max and min are exact (but for which zero of a
 * +0 / -0 tie, or which NaN, is returned).
 *
 * When the reduction has no iteration at all while the named loops have
 * some, B gets I, where the original nest left it unwritten (legalize
 * fills an empty symbolic reduction with I anyway).
 */
#include "schedule/block_util.h"
#include "schedule/trace.h"
#include "tir/combiner.h"

enum { RF_MAX_LOOPS = 64 };

static bool is_zero(const mt_texpr *e) {
    return (e->kind == TE_INT && e->ival == 0) || (e->kind == TE_FLOAT && e->fval == 0.0);
}

/* A function-level bound of loop l's extent: the extent when it uses no
 * loop of the nest (vars[0..n)), else x for T.min(x, ..) or T.min(.., x)
 * with x free of them (split's clamped inner extent), else NULL. */
static mt_texpr *extent_bound(const mt_tstmt *l, mt_tvar *const *vars, int n) {
    mt_texpr *e = l->extent;
    if (!mt_blk_first_use(e, vars, n)) return e;
    if (e->kind == TE_MIN && !mt_blk_first_use(e->a, vars, n)) return e->a;
    if (e->kind == TE_MIN && !mt_blk_first_use(e->b, vars, n)) return e->b;
    return NULL;
}

/* Loop statements for vars[i] in range(ext[i]) around body, outermost first. */
static mt_tstmt *grid(mt_arena *a, mt_tvar *const *vars, mt_texpr *const *ext, int n, mt_tstmt *body) {
    for (int i = n - 1; i >= 0; i--)
        body = mt_ts_for(a, vars[i], mt_te_i64(a, 0), ext[i], MT_FOR_SERIAL, body);
    return body;
}

/* A block over vars (kinds[i], extents ext[i]) bound to the loop variables lv. */
static mt_tstmt *grid_block(mt_arena *a, const char *name, mt_tvar *const *vars, mt_tvar *const *lv,
                            mt_texpr *const *ext, const mt_iter_kind *kinds, int n) {
    mt_tstmt *b = mt_ts_block(a, name);
    b->iters = MT_NEW_ARRAY(a, mt_titer, n + 1);
    b->iter_values = MT_NEW_ARRAY(a, mt_texpr *, n + 1);
    for (int i = 0; i < n; i++) {
        b->iters[i] = (mt_titer){vars[i], ext[i], kinds[i]};
        b->iter_values[i] = mt_te_var(a, lv[i]);
    }
    b->niters = n;
    return b;
}

static mt_tregion *one_region(mt_arena *a, mt_tbuffer *buf, mt_texpr *const *idx) {
    mt_tregion *r = MT_NEW_ARRAY(a, mt_tregion, 1);
    r[0] = mt_blk_point_region(a, buf, idx);
    return r;
}

bool mt_sched_rfactor_do(mt_sched *s, const char *name, mt_tvar *const *loops, int nloops) {
    static const char P[] = "rfactor";
    mt_arena *a = s->arena;
    mt_blk_stmts path;
    if (!mt_blk_find_block(s, P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1], *st = b->body, *in = b->init;
    mt_tvar **rv, **sv;
    int nr = mt_blk_iter_vars(a, b, MT_ITER_REDUCE, &rv), ns = mt_blk_iter_vars(a, b, MT_ITER_SPATIAL, &sv);
    if (nloops <= 0 || nloops > RF_MAX_LOOPS)
        return mt_sched_refuse(s, "%s: %d loops named (1 to %d)", P, nloops, RF_MAX_LOOPS);
    if (nr == 0)
        return mt_sched_refuse(s, "%s: block '%s' is not a reduction (no reduce variable)", P, name);
    if (!in) return mt_sched_refuse(s, "%s: block '%s' has no init", P, name);
    if (b->predicate) return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate", P, name);
    if (b->nallocs) return mt_sched_refuse(s, "%s: block '%s' allocates buffers", P, name);
    const mt_tstmt *rep = mt_blk_unbinding_loop(&path, 0, b);
    if (rep)
        return mt_sched_refuse(s, "%s: loop '%s' binds no variable of block '%s': it repeats the "
                                  "reduction, each time from its init", P, rep->var->name, name);
    if (st->kind != TS_STORE || in->kind != TS_STORE || in->buf != st->buf ||
        !mt_blk_same_index(in->idx, st->idx, st->nidx))
        return mt_sched_refuse(s, "%s: block '%s' does not update one element of one buffer with "
                                  "one store and its init", P, name);
    mt_tbuffer *B = st->buf;
    for (int d = 0; d < st->nidx; d++) {
        const mt_tvar *r = mt_blk_first_use(st->idx[d], rv, nr);
        if (r)
            return mt_sched_refuse(s, "%s: the index of '%s' in block '%s' uses reduce variable "
                                      "'%s'", P, B->name, name, r->name);
    }
    mt_tcombiner cb;
    if (!mt_tcombiner_match(a, st, &cb) || mt_texpr_reads(cb.e, B))
        return mt_sched_refuse(s, "%s: block '%s' is not B = F(B, e) with F +, T.max, T.min or a "
                                  "NaN-propagating max or min select, e not reading '%s'", P, name,
                               B->name);
    if (mt_texpr_reads(in->value, B) || mt_blk_first_use(in->value, rv, nr))
        return mt_sched_refuse(s, "%s: the init of block '%s' reads '%s' or uses a reduce variable",
                               P, name, B->name);
    if (cb.sum && !is_zero(in->value))
        return mt_sched_refuse(s, "%s: the init of block '%s' is not 0, the identity of its sum", P,
                               name);
    /* the perfect loop nest of b: path[top .. len-2] */
    const mt_tstmt *body = s->func->body;
    int top = body->kind == TS_SEQ ? 1 : 0;
    for (int j = top; j < path.len - 1; j++)
        if (path.data[j]->kind != TS_FOR || path.data[j]->body != path.data[j + 1])
            return mt_sched_refuse(s, "%s: block '%s' is not alone in a perfect loop nest of the "
                                      "function's body", P, name);
    int nl = path.len - 1 - top;
    const mt_tstmt **L = (const mt_tstmt **)path.data + top;
    mt_tvar **lvars = MT_NEW_ARRAY(a, mt_tvar *, nl + 1);
    for (int j = 0; j < nl; j++) lvars[j] = L[j]->var;
    /* the named loops */
    int *rfpos = MT_NEW_ARRAY(a, int, nloops);
    for (int k = 0; k < nloops; k++) {
        rfpos[k] = -1;
        for (int j = 0; j < nl; j++)
            if (lvars[j] == loops[k]) rfpos[k] = j;
        if (rfpos[k] < 0)
            return mt_sched_refuse(s, "%s: loop '%s' is not an ancestor of block '%s'", P,
                                   loops[k]->name, name);
        for (int q = 0; q < k; q++)
            if (loops[q] == loops[k])
                return mt_sched_refuse(s, "%s: loop '%s' is named twice", P, loops[k]->name);
        if (L[rfpos[k]]->for_kind != MT_FOR_SERIAL)
            return mt_sched_refuse(s, "%s: loop '%s' is not serial", P, loops[k]->name);
        if (!mt_blk_loop_binds(b, L[rfpos[k]], MT_ITER_REDUCE))
            return mt_sched_refuse(s, "%s: loop '%s' binds no reduce variable of block '%s'", P,
                                   loops[k]->name, name);
    }
    /* the spatial variables: each bound to a loop over its whole domain */
    mt_tvar **sbind = MT_NEW_ARRAY(a, mt_tvar *, ns + 1); /* that loop's variable */
    for (int i = 0, k = 0; i < b->niters; i++) {
        if (b->iters[i].kind != MT_ITER_SPATIAL) continue;
        const mt_texpr *iv = b->iter_values[i];
        int j = -1;
        for (int q = 0; iv->kind == TE_VAR && q < nl; q++)
            if (lvars[q] == iv->var) j = q;
        if (j < 0 || !mt_arith_is_const(L[j]->min, 0) || !mt_texpr_equal(L[j]->extent, b->iters[i].extent))
            return mt_sched_refuse(s, "%s: spatial variable '%s' of block '%s' is not bound to a "
                                      "loop over its whole domain", P, sv[k]->name, name);
        sbind[k++] = iv->var;
    }
    /* the loops of reduce bindings: a block variable each */
    int nrl = 0;
    mt_tvar **rl_old = MT_NEW_ARRAY(a, mt_tvar *, nl + 1), **rl_new = MT_NEW_ARRAY(a, mt_tvar *, nl + 1);
    mt_texpr **rl_new_e = MT_NEW_ARRAY(a, mt_texpr *, nl + 1), **rl_ext = MT_NEW_ARRAY(a, mt_texpr *, nl + 1);
    bool *rl_rf = MT_NEW_ARRAY(a, bool, nl + 1);
    for (int j = 0; j < nl; j++) {
        if (!mt_blk_loop_binds(b, L[j], MT_ITER_REDUCE)) continue;
        if (mt_blk_loop_binds(b, L[j], MT_ITER_SPATIAL))
            return mt_sched_refuse(s, "%s: loop '%s' binds both spatial and reduce variables of "
                                      "block '%s'", P, lvars[j]->name, name);
        if (!mt_arith_is_const(L[j]->min, 0))
            return mt_sched_refuse(s, "%s: loop '%s' does not start at 0", P, lvars[j]->name);
        mt_texpr *ext = extent_bound(L[j], lvars, nl);
        if (!ext)
            return mt_sched_refuse(s, "%s: the extent of loop '%s' depends on other loops and has "
                                      "no bound free of them", P, lvars[j]->name);
        rl_old[nrl] = lvars[j];
        rl_new[nrl] = mt_tvar_new(a, mt_arena_printf(a, "v%s", lvars[j]->name), lvars[j]->dtype);
        rl_new_e[nrl] = mt_te_var(a, rl_new[nrl]);
        rl_ext[nrl] = ext;
        rl_rf[nrl] = false;
        for (int k = 0; k < nloops; k++) rl_rf[nrl] = rl_rf[nrl] || rfpos[k] == j;
        nrl++;
    }
    /* B_rf: b's spatial extents, then the named loops' extents (in the order named) */
    int nd = ns + nloops;
    mt_texpr **shape = MT_NEW_ARRAY(a, mt_texpr *, nd + 1);
    mt_tvar **rfv = MT_NEW_ARRAY(a, mt_tvar *, nloops + 1); /* b_rf's variable of each named loop */
    for (int i = 0, k = 0; i < b->niters; i++)
        if (b->iters[i].kind == MT_ITER_SPATIAL) shape[k++] = b->iters[i].extent;
    for (int k = 0; k < nloops; k++)
        for (int q = 0; q < nrl; q++)
            if (rl_old[q] == loops[k]) shape[ns + k] = rl_ext[q], rfv[k] = rl_new[q];
    const char *brfname = mt_blk_fresh_buffer_name(a, s->func, mt_arena_printf(a, "%s_rf", B->name));
    mt_tbuffer *Brf = mt_tbuffer_new(a, brfname, B->dtype, nd, shape);

    /* b_rf: b's spatial variables as they are, then the loops' variables */
    mt_texpr **rvals = MT_NEW_ARRAY(a, mt_texpr *, nr + 1); /* b's reduce variables, rewritten */
    for (int i = 0, k = 0; i < b->niters; i++)
        if (b->iters[i].kind == MT_ITER_REDUCE)
            rvals[k++] = mt_tsubst_expr(a, b->iter_values[i], rl_old, rl_new_e, nrl);
    const char *rfname = mt_blk_fresh_block_name(a, s->func, mt_arena_printf(a, "%s_rf", name));
    mt_tstmt *rb = mt_ts_block(a, rfname);
    rb->iters = MT_NEW_ARRAY(a, mt_titer, ns + nrl + 1);
    rb->iter_values = MT_NEW_ARRAY(a, mt_texpr *, ns + nrl + 1);
    mt_texpr **rf_idx = MT_NEW_ARRAY(a, mt_texpr *, nd + 1);
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == MT_ITER_SPATIAL) {
            rf_idx[rb->niters] = mt_te_var(a, b->iters[i].var);
            rb->iters[rb->niters] = b->iters[i];
            rb->iter_values[rb->niters++] = b->iter_values[i];
        }
    for (int q = 0; q < nrl; q++) {
        rb->iters[rb->niters] = (mt_titer){rl_new[q], rl_ext[q], rl_rf[q] ? MT_ITER_SPATIAL : MT_ITER_REDUCE};
        rb->iter_values[rb->niters++] = mt_te_var(a, rl_old[q]);
    }
    for (int k = 0; k < nloops; k++) rf_idx[ns + k] = mt_te_var(a, rfv[k]);
    mt_texpr *e = mt_tsubst_expr(a, cb.e, rv, rvals, nr);
    rb->body = mt_ts_store(a, Brf, rf_idx, nd, mt_tcombiner_apply(a, &cb, mt_te_load(a, Brf, rf_idx, nd), e));
    rb->reads = MT_NEW_ARRAY(a, mt_tregion, b->nreads + 2);
    for (int i = 0; i < b->nreads; i++) {
        mt_tregion r = b->reads[i];
        if (r.buf == B) continue;
        int n = r.buf->ndim;
        mt_tregion c = {r.buf, MT_NEW_ARRAY(a, mt_texpr *, n + 1), MT_NEW_ARRAY(a, mt_texpr *, n + 1)};
        for (int d = 0; d < n; d++) {
            c.min[d] = mt_tsubst_expr(a, r.min[d], rv, rvals, nr);
            c.extent[d] = mt_tsubst_expr(a, r.extent[d], rv, rvals, nr);
        }
        rb->reads[rb->nreads++] = c;
    }
    rb->reads[rb->nreads++] = mt_blk_point_region(a, Brf, rf_idx);
    rb->writes = one_region(a, Brf, rf_idx);
    rb->nwrites = 1;
    mt_tstmt *nest = rb;
    for (int j = nl - 1; j >= 0; j--) {
        mt_tstmt *c = mt_ts_copy(a, L[j]);
        c->body = nest;
        nest = c;
    }

    /* the fill: B_rf[...] = I */
    mt_tvar **fl = MT_NEW_ARRAY(a, mt_tvar *, nd + 1), **fv = MT_NEW_ARRAY(a, mt_tvar *, nd + 1);
    mt_iter_kind *fk = MT_NEW_ARRAY(a, mt_iter_kind, nd + 1);
    for (int d = 0; d < nd; d++) {
        const char *base = d < ns ? sbind[d]->name : loops[d - ns]->name;
        fl[d] = mt_tvar_new(a, mt_arena_printf(a, "%s_rf_init", base), MT_INT64);
        fv[d] = mt_tvar_new(a, mt_arena_printf(a, "v%s_rf_init", base), MT_INT64);
        fk[d] = MT_ITER_SPATIAL;
    }
    mt_texpr **fve = mt_blk_var_exprs(a, fv, nd);
    mt_tstmt *fb = grid_block(a, mt_blk_fresh_block_name(a, s->func, mt_arena_printf(a, "%s_rf_init", name)),
                              fv, fl, shape, fk, nd);
    fb->body = mt_ts_store(a, Brf, fve, nd, mt_tsubst_expr(a, in->value, sv, fve, ns));
    fb->writes = one_region(a, Brf, fve);
    fb->nwrites = 1;
    mt_blk_exprs fload = mt_blk_loads_in(a, fb->body, NULL, NULL);
    fb->reads = MT_NEW_ARRAY(a, mt_tregion, fload.len + 1);
    for (int i = 0; i < fload.len; i++)
        fb->reads[fb->nreads++] = mt_blk_point_region(a, fload.data[i]->buf, fload.data[i]->args);
    mt_tstmt *fill = grid(a, fl, shape, nd, fb);

    /* the combination: B[idx] = F(B[idx], B_rf[s.., r..]) */
    mt_tvar **wl = MT_NEW_ARRAY(a, mt_tvar *, nd + 1), **wv = MT_NEW_ARRAY(a, mt_tvar *, nd + 1);
    mt_iter_kind *wk = MT_NEW_ARRAY(a, mt_iter_kind, nd + 1);
    for (int d = 0; d < nd; d++) {
        const char *base = d < ns ? sbind[d]->name : loops[d - ns]->name;
        wl[d] = mt_tvar_new(a, mt_arena_printf(a, "%s_rf", base), MT_INT64);
        wv[d] = mt_tvar_new(a, mt_arena_printf(a, "v%s_rf", base), MT_INT64);
        wk[d] = d < ns ? MT_ITER_SPATIAL : MT_ITER_REDUCE;
    }
    mt_texpr **wve = mt_blk_var_exprs(a, wv, nd);
    mt_tstmt *wb = grid_block(a, name, wv, wl, shape, wk, nd);
    mt_texpr **widx = MT_NEW_ARRAY(a, mt_texpr *, st->nidx + 1);
    for (int d = 0; d < st->nidx; d++) widx[d] = mt_tsubst_expr(a, st->idx[d], sv, wve, ns);
    mt_texpr *wacc = mt_te_load(a, B, widx, st->nidx);
    wb->init = mt_ts_store(a, B, widx, st->nidx, mt_tsubst_expr(a, in->value, sv, wve, ns));
    wb->body = mt_ts_store(a, B, widx, st->nidx, mt_tcombiner_apply(a, &cb, wacc, mt_te_load(a, Brf, wve, nd)));
    wb->reads = one_region(a, Brf, wve);
    wb->nreads = 1;
    wb->writes = one_region(a, B, widx);
    wb->nwrites = 1;
    mt_tstmt *comb = grid(a, wl, shape, nd, wb);

    /* in the function's body: fill, nest, combination where the nest was */
    const mt_tstmt *old = path.data[top];
    mt_tstmt **items;
    int n = 0;
    if (top == 1) {
        items = MT_NEW_ARRAY(a, mt_tstmt *, body->nstmts + 3);
        for (int i = 0; i < body->nstmts; i++) {
            if (body->stmts[i] != old) {
                items[n++] = body->stmts[i];
                continue;
            }
            items[n++] = fill, items[n++] = nest, items[n++] = comb;
        }
    } else {
        items = MT_NEW_ARRAY(a, mt_tstmt *, 3);
        items[n++] = fill, items[n++] = nest, items[n++] = comb;
    }
    mt_tstmt *nbody = mt_ts_seq(a, items, n);
    mt_tstmt_fill_loc(nbody, old->loc);
    mt_blk_set_func_body(s, mt_ts_at(nbody, body->loc));
    mt_tfunc *g = s->func;
    mt_tbuffer **al = MT_NEW_ARRAY(a, mt_tbuffer *, g->nallocs + 1);
    for (int i = 0; i < g->nallocs; i++) al[i] = g->allocs[i];
    al[g->nallocs] = Brf;
    g->allocs = al;
    g->nallocs++;
    s->made = rfname;
    return true;
}
