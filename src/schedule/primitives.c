/*
 * primitives.c -- split, fuse, reorder, parallel, vectorize, unroll.
 *
 * Each primitive is a local rewrite of one loop (or two perfectly nested
 * loops) of s->func:
 *
 *  1. find the loop statement binding the named variable (a visitor; exactly
 *     one loop may bind it);
 *  2. check the preconditions on that statement and its body, returning
 *     false with a reason in s->error when one does not hold;
 *  3. build the replacement: new loop statements around the old body with
 *     the old loop variables substituted (mt_tsubst_stmt, which also rewrites
 *     block iter_values, predicates and regions, so blocks stay valid);
 *  4. put it in place with a mutator that swaps that one statement and
 *     rebuilds only its ancestors, and make s->func a shallow copy of the
 *     function with the new body.
 *
 * Index arithmetic is built with the folding constructors of tir/arith.h
 * (ceildiv of constants, a product of constant extents, `0 + x`), so that a
 * schedule on static shapes prints as plain numbers; everything else is
 * left for simplify. Fused loops bind with floordiv/floormod: f // E_j and f % E_j; after lowering and
 * flattening, `(f // c) * c + f % c` is what simplify collapses back to f
 * (docs/tir.md), which keeps fused elementwise indices affine.
 *
 * Loop kinds: split, fuse and the annotations require serial loops (a loop
 * already parallel or vectorized says how it runs; transforming it further
 * is a rule's mistake, reported as a refusal). New loops are serial.
 */
#include "schedule/primitives.h"
#include "schedule/block_util.h"
#include "schedule/trace.h"

#include <stdarg.h>
#include <string.h>

#include "support/common.h"
#include "tir/arith.h"
#include "tir/combiner.h"

void mt_sched_init(mt_sched *s, mt_arena *a, mt_tfunc *f) {
    s->arena = a;
    s->func = f;
    s->error = NULL;
    s->made = s->renamed = NULL;
    s->user = false;
}

bool mt_sched_refuse(mt_sched *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    s->error = mt_arena_vprintf(s->arena, fmt, ap);
    va_end(ap);
    return false;
}

/* ---- finding and replacing a loop ------------------------------------------ */

typedef struct finder {
    const mt_tvar *var;
    const mt_tstmt *found;
    int count;
} finder;

static void find_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    finder *f = v->ctx;
    if (s->kind == TS_FOR && s->var == f->var) {
        f->found = s;
        f->count++;
    }
    mt_tvisit_stmt_children(v, s);
}

static void skip_expr(mt_tvisitor *v, const mt_texpr *e) { (void)v, (void)e; }

static finder find_loop(const mt_sched *s, const mt_tvar *loop) {
    finder f = {loop, NULL, 0};
    mt_tvisitor v = {skip_expr, find_stmt, &f};
    if (s->func->body) mt_tvisit_stmt(&v, s->func->body);
    return f;
}

int mt_sched_loop_count(const mt_sched *s, const mt_tvar *loop) { return find_loop(s, loop).count; }

const mt_tstmt *mt_sched_get_loop(const mt_sched *s, const mt_tvar *loop) {
    if (!loop) mt_ice("schedule: no loop variable given");
    finder f = find_loop(s, loop);
    if (f.count == 0) mt_ice("schedule: no loop over '%s' in %s", loop->name, s->func->name);
    if (f.count > 1)
        mt_ice("schedule: %d loops over '%s' in %s", f.count, loop->name, s->func->name);
    return f.found;
}

typedef struct replacer {
    const mt_tstmt *old;
    mt_tstmt *repl;
} replacer;

static mt_tstmt *replace_stmt(mt_tmutator *m, mt_tstmt *s) {
    replacer *r = m->ctx;
    if (s == r->old) return r->repl;
    return mt_tmutate_stmt_children(m, s);
}

static mt_texpr *keep_expr(mt_tmutator *m, mt_texpr *e) { return e; }

void mt_sched_replace(mt_sched *s, const mt_tstmt *old, mt_tstmt *repl) {
    replacer r = {old, repl};
    mt_tstmt_fill_loc(repl, old->loc); /* what a primitive builds is where old was */
    mt_tmutator m = {s->arena, keep_expr, replace_stmt, &r};
    mt_tfunc *g = MT_NEW(s->arena, mt_tfunc);
    *g = *s->func;
    g->body = mt_tmutate_stmt(&m, s->func->body);
    s->func = g;
}

/* ---- facts ----------------------------------------------------------------- */

static const char *kind_name(mt_for_kind k) {
    switch (k) {
    case MT_FOR_SERIAL: return "serial";
    case MT_FOR_PARALLEL: return "parallel";
    case MT_FOR_VECTORIZED: return "vectorized";
    case MT_FOR_UNROLLED: return "unrolled";
    default: return "thread-bound";
    }
}

static bool need_serial(mt_sched *s, const char *prim, const mt_tstmt *l) {
    if (l->for_kind == MT_FOR_SERIAL) return true;
    return mt_sched_refuse(s, "%s: loop '%s' is already %s", prim, l->var->name, kind_name(l->for_kind));
}

/* Perfectly nested pair: inner is outer's body, and inner's bounds do not
 * depend on outer's variable. */
static bool nested_pair(mt_sched *s, const char *prim, const mt_tstmt *o, const mt_tstmt *i) {
    if (o->body != i)
        return mt_sched_refuse(s, "%s: loop '%s' is not the whole body of loop '%s' (they must be perfectly nested)",
                      prim, i->var->name, o->var->name);
    if (mt_texpr_uses_var(i->min, o->var) || mt_texpr_uses_var(i->extent, o->var))
        return mt_sched_refuse(s, "%s: the bounds of loop '%s' depend on '%s'", prim, i->var->name,
                      o->var->name);
    return true;
}

/* Does a block under s bind a reduce variable to an expression of var, or
 * bind no spatial variable to one (a block moved under the loop by
 * compute_at, computing the same elements in every iteration)? A store
 * outside any block is reported through *bare. */
typedef struct red_check {
    const mt_tvar *var;
    const mt_tstmt *block;   /* the offending block */
    const mt_tvar *iter;     /* its reduce variable (NULL: no spatial one uses var) */
    bool bare;               /* a store outside a block */
    int depth;               /* blocks entered */
} red_check;

static void red_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    red_check *r = v->ctx;
    if (r->block || r->bare) return;
    if (s->kind == TS_STORE && r->depth == 0) {
        r->bare = true;
        return;
    }
    if (s->kind == TS_BLOCK) {
        for (int i = 0; i < s->niters; i++)
            if (s->iters[i].kind == MT_ITER_REDUCE && mt_texpr_uses_var(s->iter_values[i], r->var)) {
                r->block = s;
                r->iter = s->iters[i].var;
                return;
            }
        bool driven = false;
        for (int i = 0; i < s->niters; i++)
            driven = driven || (s->iters[i].kind == MT_ITER_SPATIAL && mt_texpr_uses_var(s->iter_values[i], r->var));
        if (!driven) {
            r->block = s;
            return;
        }
        r->depth++;
        mt_tvisit_stmt_children(v, s);
        r->depth--;
        return;
    }
    mt_tvisit_stmt_children(v, s);
}

static bool independent(mt_sched *s, const char *prim, const mt_tstmt *l) {
    red_check r = {l->var, NULL, NULL, false, 0};
    mt_tvisitor v = {skip_expr, red_stmt, &r};
    mt_tvisit_stmt(&v, l->body);
    if (r.bare)
        return mt_sched_refuse(s, "%s: loop '%s' holds a store outside a block (lowered form): its "
                         "iterations cannot be shown independent", prim, l->var->name);
    if (r.block && !r.iter)
        return mt_sched_refuse(s, "%s: no spatial variable of block '%s' depends on loop '%s': its "
                                  "iterations write the same elements", prim,
                               r.block->name ? r.block->name : "?", l->var->name);
    if (r.block)
        return mt_sched_refuse(s, "%s: loop '%s' drives reduce variable '%s' of block '%s': its "
                         "iterations update the same elements", prim, l->var->name,
                      r.iter->name, r.block->name ? r.block->name : "?");
    return true;
}

typedef struct has_loop {
    bool found;
} has_loop;

static void loop_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    has_loop *h = v->ctx;
    if (s->kind == TS_FOR) h->found = true;
    if (!h->found) mt_tvisit_stmt_children(v, s);
}

static mt_tvar *new_var(mt_arena *a, const mt_tvar *like, const char *name) {
    return mt_tvar_new(a, name, like->dtype);
}

/* ---- primitives ------------------------------------------------------------ */

bool mt_sched_split_do(mt_sched *s, mt_tvar *loop, mt_texpr *factor, mt_tvar **outer,
                    mt_tvar **inner) {
    mt_arena *a = s->arena;
    const mt_tstmt *l = mt_sched_get_loop(s, loop);
    if (!need_serial(s, "split", l)) return false;
    if (!factor || !mt_dtype_is_int(factor->dtype) || factor->lanes != 1)
        return mt_sched_refuse(s, "split: the factor of loop '%s' is not an integer", loop->name);
    int64_t fc, ec;
    bool fconst = mt_te_is_const_int(factor, &fc), econst = mt_te_is_const_int(l->extent, &ec);
    if (fconst && fc <= 0)
        return mt_sched_refuse(s, "split: factor %lld of loop '%s' is not positive", (long long)fc,
                      loop->name);
    if (mt_texpr_uses_var(factor, loop))
        return mt_sched_refuse(s, "split: the factor of loop '%s' uses the loop's variable", loop->name);
    mt_dtype dt = loop->dtype;
    if (factor->dtype != dt) factor = mt_te_cast(a, dt, factor);
    mt_tvar *vo = new_var(a, loop, mt_arena_printf(a, "%s_0", loop->name));
    mt_tvar *vi = new_var(a, loop, mt_arena_printf(a, "%s_1", loop->name));
    mt_texpr *ext = l->extent, *one = mt_te_int(a, dt, 1);
    mt_texpr *oext, *iext;
    if (fconst && econst) {
        oext = mt_te_int(a, dt, ec <= 0 ? 0 : (ec + fc - 1) / fc);
        iext = (ec % fc == 0 || ec <= fc) ? mt_te_int(a, dt, ec < fc ? ec : fc) : NULL;
    } else {
        oext = mt_arith_floordiv(a, mt_arith_add(a, ext, mt_arith_sub(a, factor, one)), factor);
        iext = NULL;
    }
    if (!iext)
        iext = mt_te_bin(a, TE_MIN, factor,
                         mt_arith_sub(a, ext, mt_arith_mul(a, mt_te_var(a, vo), factor)));
    mt_texpr *val = mt_arith_add(
        a, l->min, mt_arith_add(a, mt_arith_mul(a, mt_te_var(a, vo), factor), mt_te_var(a, vi)));
    mt_tstmt *body = mt_tsubst_stmt(a, l->body, &loop, &val, 1);
    mt_tstmt *in = mt_ts_at(mt_ts_for(a, vi, mt_te_int(a, dt, 0), iext, MT_FOR_SERIAL, body), l->loc);
    mt_sched_replace(s, l, mt_ts_for(a, vo, mt_te_int(a, dt, 0), oext, MT_FOR_SERIAL, in));
    if (outer) *outer = vo;
    if (inner) *inner = vi;
    return true;
}

/* "i0_fused" + "i1" -> "i0_i1_fused" */
static const char *fused_name(mt_arena *a, const char *o, const char *i) {
    size_t n = strlen(o);
    if (n > 6 && strcmp(o + n - 6, "_fused") == 0)
        return mt_arena_printf(a, "%.*s_%s_fused", (int)(n - 6), o, i);
    return mt_arena_printf(a, "%s_%s_fused", o, i);
}

bool mt_sched_fuse_do(mt_sched *s, mt_tvar *outer, mt_tvar *inner, mt_tvar **fused) {
    mt_arena *a = s->arena;
    const mt_tstmt *o = mt_sched_get_loop(s, outer), *i = mt_sched_get_loop(s, inner);
    if (!need_serial(s, "fuse", o) || !need_serial(s, "fuse", i) ||
        !nested_pair(s, "fuse", o, i))
        return false;
    if (outer->dtype != inner->dtype)
        return mt_sched_refuse(s, "fuse: loops '%s' and '%s' have different dtypes", outer->name,
                      inner->name);
    mt_dtype dt = outer->dtype;
    mt_tvar *f = new_var(a, outer, fused_name(a, outer->name, inner->name));
    mt_texpr *fv = mt_te_var(a, f);
    mt_tvar *vars[2] = {outer, inner};
    mt_texpr *vals[2] = {mt_arith_add(a, o->min, mt_arith_floordiv(a, fv, i->extent)),
                         mt_arith_add(a, i->min, mt_arith_floormod(a, fv, i->extent))};
    mt_tstmt *body = mt_tsubst_stmt(a, i->body, vars, vals, 2);
    mt_sched_replace(s, o, mt_ts_for(a, f, mt_te_int(a, dt, 0), mt_arith_mul(a, o->extent, i->extent),
                                     MT_FOR_SERIAL, body));
    if (fused) *fused = f;
    return true;
}

/* What reorder of perfectly nested o and i (i innermost of the two) must
 * keep: a vectorized loop innermost; each reduction under them bound by
 * both (a loop binding none of its variables repeats it from its init:
 * mt_blk_unbinding_loop); and no two blocks under them sharing a buffer
 * one of them writes (the new order interleaves their instances
 * differently, and no dependence analysis here shows that harmless). */
static bool reorder_keeps(mt_sched *s, const mt_tstmt *o, const mt_tstmt *i) {
    const mt_tstmt *bound = o->for_kind == MT_FOR_THREAD ? o : i->for_kind == MT_FOR_THREAD ? i : NULL;
    if (bound) /* bind checked its nesting where it stood */
        return mt_sched_refuse(s, "reorder: loop '%s' is bound to %s: a bound loop keeps its place", bound->var->name,
                               bound->thread_tag ? bound->thread_tag : "a GPU index");
    if (i->for_kind == MT_FOR_VECTORIZED)
        return mt_sched_refuse(s, "reorder: loop '%s' is vectorized: it must stay innermost", i->var->name);
    mt_blk_stmts blocks = mt_blk_blocks_under(s->arena, i->body);
    for (int k = 0; k < blocks.len; k++) {
        const mt_tstmt *b = blocks.data[k];
        bool red = b->init || mt_blk_reduce_iter(b);
        const mt_tstmt *pair[2] = {o, i};
        for (int q = 0; red && q < 2; q++)
            if (!mt_blk_loop_binds(b, pair[q], MT_ITER_SPATIAL) && !mt_blk_loop_binds(b, pair[q], MT_ITER_REDUCE))
                return mt_sched_refuse(s, "reorder: loop '%s' binds no variable of block '%s': it repeats the "
                                          "reduction, each time from its init", pair[q]->var->name, mt_blk_bname(b));
    }
    if (blocks.len < 2) return true;
    mt_blk_accesses acc = mt_blk_scan(s->arena, i->body, NULL, NULL);
    for (int x = 0; x < acc.len; x++)
        for (int y = 0; acc.data[x].write && y < acc.len; y++)
            if (acc.data[y].buf == acc.data[x].buf && acc.data[y].block != acc.data[x].block)
                return mt_sched_refuse(s, "reorder: blocks '%s' and '%s' under loops '%s' and '%s' share '%s', "
                                          "which '%s' writes: the new order could change what they see",
                                       mt_blk_bname(acc.data[x].block), mt_blk_bname(acc.data[y].block),
                                       o->var->name, i->var->name, acc.data[x].buf->name,
                                       mt_blk_bname(acc.data[x].block));
    return true;
}

bool mt_sched_reorder_do(mt_sched *s, mt_tvar *outer, mt_tvar *inner) {
    mt_arena *a = s->arena;
    const mt_tstmt *o = mt_sched_get_loop(s, outer), *i = mt_sched_get_loop(s, inner);
    if (!nested_pair(s, "reorder", o, i) || !reorder_keeps(s, o, i)) return false;
    mt_tstmt *no = mt_ts_at(mt_ts_for(a, o->var, o->min, o->extent, o->for_kind, i->body), o->loc);
    no->thread_tag = o->thread_tag;
    mt_tstmt *ni = mt_ts_at(mt_ts_for(a, i->var, i->min, i->extent, i->for_kind, no), i->loc);
    ni->thread_tag = i->thread_tag;
    mt_sched_replace(s, o, ni);
    return true;
}

static void annotate(mt_sched *s, const mt_tstmt *l, mt_for_kind kind) {
    mt_tstmt *n = mt_ts_copy(s->arena, l);
    n->for_kind = kind;
    mt_sched_replace(s, l, n);
}

bool mt_sched_independent(mt_sched *s, mt_tvar *loop) {
    return independent(s, "independent", mt_sched_get_loop(s, loop));
}

bool mt_sched_parallel_do(mt_sched *s, mt_tvar *loop) {
    const mt_tstmt *l = mt_sched_get_loop(s, loop);
    if (!need_serial(s, "parallel", l) || !independent(s, "parallel", l) ||
        (s->user && !mt_sched_iterations_disjoint(s, "parallel", l, NULL, NULL)))
        return false;
    annotate(s, l, MT_FOR_PARALLEL);
    return true;
}

/* Whether l folds a reduction across lanes (a vectorized reduce loop): its
 * body one block, without init or predicate, whose variables bound to l
 * are all reduce ones, updating one element B[idx] = F(B[idx], e) with F
 * a combiner (tir/combiner.h), e not reading B, idx free of reduce
 * variables. The vectorize pass folds e's lanes in a tree, reassociating F.
 * *init: the block would be one but for its init. */
static bool lane_reduction(mt_arena *a, const mt_tstmt *l, bool *init) {
    const mt_tstmt *b = l->body, *st = b->body;
    mt_tcombiner cb;
    *init = false;
    if (b->kind != TS_BLOCK || b->predicate || b->nallocs || st->kind != TS_STORE) return false;
    bool red = false;
    for (int i = 0; i < b->niters; i++) {
        if (!mt_texpr_uses_var(b->iter_values[i], l->var)) continue;
        if (b->iters[i].kind != MT_ITER_REDUCE) return false;
        red = true;
    }
    mt_tvar **rv;
    int nr = mt_blk_iter_vars(a, b, MT_ITER_REDUCE, &rv);
    for (int d = 0; d < st->nidx; d++)
        if (mt_blk_first_use(st->idx[d], rv, nr)) return false;
    if (!red || !mt_tcombiner_match(a, st, &cb) || mt_texpr_reads(cb.e, st->buf)) return false;
    *init = b->init != NULL;
    return !b->init;
}

bool mt_sched_vectorize_do(mt_sched *s, mt_tvar *loop) {
    const mt_tstmt *l = mt_sched_get_loop(s, loop);
    if (!need_serial(s, "vectorize", l)) return false;
    has_loop h = {false};
    mt_tvisitor v = {skip_expr, loop_stmt, &h};
    mt_tvisit_stmt(&v, l->body);
    if (h.found) return mt_sched_refuse(s, "vectorize: loop '%s' is not innermost", loop->name);
    bool init;
    if (lane_reduction(s->arena, l, &init)) {
        annotate(s, l, MT_FOR_VECTORIZED);
        return true;
    }
    if (init)
        return mt_sched_refuse(s, "vectorize: block '%s' reduces over loop '%s' with its init inside: "
                                  "decompose_reduction first", mt_blk_bname(l->body), loop->name);
    if (!independent(s, "vectorize", l)) return false;
    annotate(s, l, MT_FOR_VECTORIZED);
    return true;
}

/* The iterations an unrolled loop may copy its body into, counting the
 * unrolled loops inside it: code generation makes each a copy. */
enum { MAX_UNROLLED = 4096 };

typedef struct unrolled_in { int64_t n; } unrolled_in;

static void unrolled_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    unrolled_in *u = v->ctx;
    int64_t e;
    if (s->kind == TS_FOR && s->for_kind == MT_FOR_UNROLLED && mt_te_is_const_int(s->extent, &e) && e > 1)
        u->n = e > MAX_UNROLLED || u->n > MAX_UNROLLED / e ? MAX_UNROLLED + 1 : u->n * e; /* no overflow */
    mt_tvisit_stmt_children(v, s);
}

bool mt_sched_unroll_do(mt_sched *s, mt_tvar *loop) {
    const mt_tstmt *l = mt_sched_get_loop(s, loop);
    if (!need_serial(s, "unroll", l)) return false;
    int64_t e;
    unrolled_in u = {1};
    mt_tvisitor v = {mt_tvisit_no_expr, unrolled_stmt, &u};
    mt_tvisit_stmt(&v, l->body);
    if (mt_te_is_const_int(l->extent, &e) && (e > MAX_UNROLLED || u.n > MAX_UNROLLED / (e > 0 ? e : 1)))
        return mt_sched_refuse(s, "unroll: loop '%s' would copy its body more than %d times (split it first)",
                               loop->name, MAX_UNROLLED);
    annotate(s, l, MT_FOR_UNROLLED);
    return true;
}

/* Is e at most n for sure: a constant <= n, or T.min(c, ..) / T.min(.., c)
 * with a constant c <= n (what split's clamped inner extent is)? */
static bool at_most(const mt_texpr *e, int64_t n) {
    int64_t c;
    if (mt_te_is_const_int(e, &c)) return c <= n;
    if (e->kind != TE_MIN) return false;
    return (mt_te_is_const_int(e->a, &c) && c <= n) || (mt_te_is_const_int(e->b, &c) && c <= n);
}

typedef struct bound_in {
    const char *tag;   /* a loop bound to this tag, */
    bool block;        /* or (block) to any blockIdx */
    const mt_tstmt *hit;
} bound_in;

static void bound_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    bound_in *b = v->ctx;
    if (b->hit) return;
    if (s->kind == TS_FOR && s->for_kind == MT_FOR_THREAD && s->thread_tag &&
        (!strcmp(s->thread_tag, b->tag) || (b->block && !strncmp(s->thread_tag, "blockIdx.", 9)))) {
        b->hit = s;
        return;
    }
    mt_tvisit_stmt_children(v, s);
}

/* A GPU kernel's loops (tir.h, "GPU kernels"): block indices outside
 * thread indices, each tag once on a path from the body to a statement. */
static bool bind_nesting(mt_sched *s, const mt_tstmt *l, const char *tag, bool thread) {
    mt_blk_stmts path = mt_blk_path_to(s->arena, s->func->body, l);
    for (int i = 0; i < path.len; i++) {
        const mt_tstmt *p = path.data[i];
        if (p == l || p->kind != TS_FOR || p->for_kind != MT_FOR_THREAD || !p->thread_tag) continue;
        if (!strcmp(p->thread_tag, tag))
            return mt_sched_refuse(s, "bind: loop '%s' is inside loop '%s', which is bound to %s already",
                                   l->var->name, p->var->name, tag);
        if (!thread && !strncmp(p->thread_tag, "threadIdx.", 10))
            return mt_sched_refuse(s, "bind: loop '%s' is inside loop '%s', bound to %s: a block index "
                                      "cannot be inside a thread index", l->var->name, p->var->name, p->thread_tag);
    }
    bound_in b = {tag, thread, NULL};
    mt_tvisitor v = {mt_tvisit_no_expr, bound_stmt, &b};
    mt_tvisit_stmt(&v, l->body);
    if (b.hit)
        return mt_sched_refuse(s, "bind: loop '%s' holds loop '%s', bound to %s: %s", l->var->name,
                               b.hit->var->name, b.hit->thread_tag,
                               !strcmp(b.hit->thread_tag, tag) ? "a tag binds one loop of a path"
                                                               : "a block index cannot be inside a thread index");
    return true;
}

/* Finds the top-level item of the function's body holding loop l, and in
 * it the widest constant extent bound to each threadIdx tag (the launch's
 * block: split_host_device.c). */
typedef struct tag_extents {
    const mt_tstmt *l;
    bool found;
    int64_t dim[3];
} tag_extents;

static void tag_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    tag_extents *t = v->ctx;
    int64_t e;
    if (s == t->l) t->found = true;
    if (s->kind == TS_FOR && s->for_kind == MT_FOR_THREAD && s->thread_tag &&
        strncmp(s->thread_tag, "threadIdx.", 10) == 0 && mt_te_is_const_int(s->extent, &e)) {
        int d = s->thread_tag[10] - 'x';
        if (d >= 0 && d < 3 && e > t->dim[d]) t->dim[d] = e;
    }
    mt_tvisit_stmt_children(v, s);
}

/* Binding l to threadIdx tag with `threads` keeps the kernel's block (the
 * widest loop of each tag, multiplied) within the target's threads. */
static bool block_fits(mt_sched *s, const mt_tstmt *l, const char *tag, int64_t threads) {
    const mt_tstmt *body = s->func->body;
    int n = body->kind == TS_SEQ ? body->nstmts : 1;
    int64_t most = mt_tfunc_target(s->func)->max_threads_per_block;
    for (int i = 0; i < n && most > 0; i++) {
        tag_extents t = {l, false, {1, 1, 1}};
        mt_tvisitor v = {skip_expr, tag_stmt, &t};
        mt_tvisit_stmt(&v, body->kind == TS_SEQ ? body->stmts[i] : body);
        if (!t.found) continue;
        int d = tag[10] - 'x';
        if (d >= 0 && d < 3 && threads > t.dim[d]) t.dim[d] = threads;
        if (t.dim[0] * t.dim[1] * t.dim[2] <= most) return true;
        return mt_sched_refuse(s, "bind: the kernel's blocks would have %lld x %lld x %lld threads (the widest "
                                  "loop bound to each of threadIdx.x, y, z), more than the target's %lld",
                               (long long)t.dim[0], (long long)t.dim[1], (long long)t.dim[2], (long long)most);
    }
    return true;
}

bool mt_sched_bind_do(mt_sched *s, mt_tvar *loop, const char *tag, int64_t threads) {
    mt_arena *a = s->arena;
    const mt_tstmt *l = mt_sched_get_loop(s, loop);
    if (!need_serial(s, "bind", l) || !independent(s, "bind", l) ||
        (s->user && !mt_sched_iterations_disjoint(s, "bind", l, tag, NULL)))
        return false;
    int64_t m;
    if (!mt_te_is_const_int(l->min, &m) || m != 0)
        return mt_sched_refuse(s, "bind: loop '%s' does not start at 0", loop->name);
    bool thread = strncmp(tag, "threadIdx.", 10) == 0;
    if (!thread && strncmp(tag, "blockIdx.", 9) != 0)
        return mt_sched_refuse(s, "bind: unknown thread tag '%s'", tag);
    if (!bind_nesting(s, l, tag, thread)) return false;
    int64_t ext;
    mt_tstmt *n;
    if (thread && !block_fits(s, l, tag, mt_te_is_const_int(l->extent, &ext) && ext > threads ? ext : threads))
        return false;
    if (!thread || (mt_te_is_const_int(l->extent, &ext) && ext == threads)) {
        n = mt_ts_copy(a, l);
    } else {
        if (threads <= 0 || !at_most(l->extent, threads))
            return mt_sched_refuse(s, "bind: loop '%s' may run more than %lld iterations",
                                   loop->name, (long long)threads);
        mt_texpr *guard = mt_te_bin(a, TE_LT, mt_te_var(a, loop), l->extent);
        mt_tstmt *body = mt_ts_at(mt_ts_if(a, guard, l->body, NULL), l->loc);
        n = mt_ts_at(mt_ts_for(a, loop, l->min, mt_te_int(a, loop->dtype, threads), MT_FOR_SERIAL, body),
                     l->loc);
    }
    n->for_kind = MT_FOR_THREAD;
    n->thread_tag = mt_arena_strdup(a, tag);
    mt_sched_replace(s, l, n);
    return true;
}

