/*
 * from_ast_block.c -- the blocks of a `@T.prim_func` (see from_ast.h; the
 * files of the walk: from_ast_internal.h).
 *
 * `with T.block(name):` reads its header -- T.axis.spatial/reduce/remap,
 * T.where, T.reads, T.writes, T.alloc_buffer (the block's allocations),
 * `with T.init():`, in any order -- until the first other statement, which
 * starts its body. The iteration variables named so far come into scope
 * at the first header statement that is not a T.axis.* (and at the body);
 * each is an enclosing "loop" over its domain for the bounds proofs, exact
 * when it is bound to a whole loop from 0, else its binding must stay in
 * its domain or the function is marked unproven (from_ast_buffer.c).
 *
 * Regions a block does not state are inferred from its accesses: each
 * store is a written region and each load a read one (loads of buffers it
 * writes excluded), a dim indexed by a variable bound inside the block
 * covering the whole dim, any other dim the point it indexes.
 */
#include <string.h>

#include "support/common.h"
#include "tir/from_ast_internal.h"

/* ---- regions -------------------------------------------------------------- */

/* lo:hi as (min, extent): `lo:lo + n` gives n, constants fold. */
void mt_fa_slice_range(fctx *c, const mt_ast *s, const mt_tbuffer *b, int d, mt_texpr **min, mt_texpr **ext) {
    if (s->cond) mt_fail(MT_ERR_TYPE, s->loc, "a region has no step");
    mt_texpr *lo = s->lhs ? mt_fa_int_expr(c, s->lhs, "a region bound") : mt_te_i64(c->a, 0);
    mt_texpr *hi = s->rhs ? mt_fa_int_expr(c, s->rhs, "a region bound") : b->shape[d];
    int64_t x, y;
    *min = lo;
    int64_t n;
    if (mt_te_is_const_int(lo, &x) && mt_te_is_const_int(hi, &y)) {
        if (__builtin_sub_overflow(y, x, &n))
            mt_fail(MT_ERR_SHAPE, s->loc, "region %lld:%lld: its size does not fit in int64", (long long)x,
                    (long long)y);
        *ext = mt_te_i64(c->a, n);
    }
    else if (mt_te_is_const_int(lo, &x) && x == 0) *ext = hi;
    else if (hi->kind == TE_ADD && mt_texpr_equal(hi->a, lo)) *ext = hi->b;
    else if (lo->dtype != hi->dtype) mt_fail(MT_ERR_TYPE, s->loc, "region bounds of two dtypes");
    else *ext = mt_te_bin(c->a, TE_SUB, hi, lo);
}

/* region: NAME '[' (index | lo ':' hi), ... ']' */
static mt_tregion region(fctx *c, const mt_ast *e) {
    if (e->kind != AST_SUBSCRIPT) mt_fail(MT_ERR_TYPE, e->loc, "a region is a buffer subscript: A[i, 0:n]");
    mt_tregion r;
    r.buf = mt_fa_buffer_named(c, e->lhs, "a region");
    const mt_ast *ix = e->rhs;
    const mt_ast_list *items = ix->kind == AST_TUPLE ? &ix->items : NULL;
    int k = items ? items->len : 1;
    if (k != r.buf->ndim)
        mt_fail(MT_ERR_SHAPE, e->loc, "buffer '%s' has %d dim%s, indexed with %d", r.buf->name, r.buf->ndim,
                r.buf->ndim == 1 ? "" : "s", k);
    r.min = MT_NEW_ARRAY(c->a, mt_texpr *, k > 0 ? k : 1);
    r.extent = MT_NEW_ARRAY(c->a, mt_texpr *, k > 0 ? k : 1);
    for (int d = 0; d < k; d++) {
        const mt_ast *x = items ? items->data[d] : ix;
        if (x->kind == AST_SLICE) {
            mt_fa_slice_range(c, x, r.buf, d, &r.min[d], &r.extent[d]);
        } else {
            r.min[d] = mt_fa_int_expr(c, x, "an index");
            r.extent[d] = mt_te_i64(c->a, 1);
        }
    }
    return r;
}

static void regions(fctx *c, const mt_ast *call, mt_tregion **out, int *n) {
    mt_fa_only_keywords(call, mt_fa_t_call(c, call), NULL);
    *n = call->items.len;
    *out = MT_NEW_ARRAY(c->a, mt_tregion, *n > 0 ? *n : 1);
    for (int i = 0; i < *n; i++) {
        const mt_ast *e = call->items.data[i];
        if (e->kind == AST_LIST || e->kind == AST_TUPLE) { /* T.reads([A[i], B[j]]) */
            *n = e->items.len + i;
            mt_tregion *g = MT_NEW_ARRAY(c->a, mt_tregion, *n > 0 ? *n : 1);
            memcpy(g, *out, sizeof *g * (size_t)i);
            for (int j = 0; j < e->items.len; j++) g[i + j] = region(c, e->items.data[j]);
            *out = g;
            if (call->items.len > 1) mt_fail(MT_ERR_TYPE, call->loc, "regions are one list or several arguments, not both");
            return;
        }
        (*out)[i] = region(c, e);
    }
}

/* Inference of the regions a block does not state (see the top). */
typedef struct infer {
    mt_arena *a;
    MT_VEC(mt_tregion) reads, writes;
    MT_VEC(const mt_tvar *) inner; /* vars bound inside the block */
} infer;

static bool uses_inner(const infer *in, const mt_texpr *e) {
    for (int i = 0; i < in->inner.len; i++)
        if (mt_texpr_uses_var(e, in->inner.data[i])) return true;
    return false;
}

static bool region_equal(const mt_tregion *x, const mt_tregion *y) {
    if (x->buf != y->buf) return false;
    for (int d = 0; d < x->buf->ndim; d++)
        if (!mt_texpr_equal(x->min[d], y->min[d]) || !mt_texpr_equal(x->extent[d], y->extent[d])) return false;
    return true;
}

static void add_access(infer *in, bool write, mt_tbuffer *b, mt_texpr *const *idx) {
    mt_tregion r = {b, MT_NEW_ARRAY(in->a, mt_texpr *, b->ndim + 1), MT_NEW_ARRAY(in->a, mt_texpr *, b->ndim + 1)};
    for (int d = 0; d < b->ndim; d++) {
        bool whole = uses_inner(in, idx[d]) || idx[d]->lanes > 1;
        r.min[d] = whole ? mt_te_i64(in->a, 0) : idx[d];
        r.extent[d] = whole ? b->shape[d] : mt_te_i64(in->a, 1);
    }
    if (write) {
        for (int i = 0; i < in->writes.len; i++) if (region_equal(&in->writes.data[i], &r)) return;
        MT_VEC_PUSH(in->a, &in->writes, r);
    } else {
        for (int i = 0; i < in->reads.len; i++) if (region_equal(&in->reads.data[i], &r)) return;
        MT_VEC_PUSH(in->a, &in->reads, r);
    }
}

static void infer_expr(mt_tvisitor *v, const mt_texpr *e) {
    const mt_texpr *x = mt_te_prefetched(e);
    if (x) { /* an address, not a read: only its indices' loads */
        mt_tvisit_expr_children(v, x);
        return;
    }
    if (e->kind == TE_LOAD) add_access(v->ctx, false, e->buf, e->args);
    mt_tvisit_expr_children(v, e);
}

static void infer_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    infer *in = v->ctx;
    if (s->kind == TS_BLOCK) return; /* a nested block states its own */
    if (s->kind == TS_FOR || s->kind == TS_LET) MT_VEC_PUSH(in->a, &in->inner, s->var);
    if (s->kind == TS_STORE) add_access(in, true, s->buf, s->idx);
    mt_tvisit_stmt_children(v, s);
}

static void infer_regions(fctx *c, mt_tstmt *b, bool reads, bool writes) {
    infer in;
    memset(&in, 0, sizeof in);
    in.a = c->a;
    mt_tvisitor v = {infer_expr, infer_stmt, &in};
    if (b->init) mt_tvisit_stmt(&v, b->init);
    mt_tvisit_stmt(&v, b->body);
    if (writes) {
        b->writes = in.writes.data;
        b->nwrites = in.writes.len;
    }
    if (!reads) return;
    MT_VEC(mt_tregion) rs = {0};
    for (int i = 0; i < in.reads.len; i++) {
        bool written = false;
        for (int j = 0; j < b->nwrites && !written; j++) written = b->writes[j].buf == in.reads.data[i].buf;
        if (!written) MT_VEC_PUSH(c->a, &rs, in.reads.data[i]);
    }
    b->reads = rs.data;
    b->nreads = rs.len;
}

/* ---- blocks --------------------------------------------------------------- */

typedef struct block_hdr {
    MT_VEC(mt_titer) iters;
    MT_VEC(mt_texpr *) values;
    MT_VEC(mt_loc) locs;      /* where each variable is named */
    MT_VEC(mt_tbuffer *) allocs;
    bool has_reads, has_writes;
    int lmark;                /* c->loops.len at the block: the loops around it */
} block_hdr;

/* From here on the loops around the block are out of reach (extents,
 * regions, init, body; not the bindings and T.where, which are evaluated
 * among them; allocations refuse every loop variable themselves); returns
 * what to restore. */
static int seal(fctx *c, const block_hdr *h) {
    int was = c->sealed;
    c->sealed = h->lmark;
    return was;
}

static void add_iter(fctx *c, block_hdr *h, const mt_ast *target, mt_iter_kind k, mt_texpr *ext, mt_texpr *value) {
    if (target->kind != AST_NAME) mt_fail(MT_ERR_SYNTAX, target->loc, "an iteration variable must be a name");
    mt_titer it = {mt_tvar_new(c->a, target->name, MT_INT64), ext, k};
    MT_VEC_PUSH(c->a, &h->iters, it);
    MT_VEC_PUSH(c->a, &h->values, value);
    MT_VEC_PUSH(c->a, &h->locs, target->loc);
}

/* NAME '=' T.axis.spatial(extent, value) | T.axis.reduce(extent, value) */
static void axis_one(fctx *c, block_hdr *h, const mt_ast *s, const char *fn) {
    mt_iter_kind k = !strcmp(fn, "axis.spatial") ? MT_ITER_SPATIAL : MT_ITER_REDUCE;
    const mt_ast *call = s->rhs;
    mt_fa_arity(call, fn, 2, 2);
    mt_fa_only_keywords(call, fn, NULL);
    int was = seal(c, h); /* the domain is the block's own: copies of it go under other loops */
    mt_texpr *ext = mt_fa_i64_expr(c, call->items.data[0], "an iteration extent");
    c->sealed = was;
    mt_texpr *value = mt_fa_i64_expr(c, call->items.data[1], "an iteration value");
    add_iter(c, h, s->items.data[0], k, ext, value);
}

/* NAME, ... '=' T.axis.remap("SR", [loop_var, ...]) */
static void axis_remap(fctx *c, block_hdr *h, const mt_ast *s) {
    const mt_ast *call = s->rhs, *t = s->items.data[0];
    mt_fa_arity(call, "axis.remap", 2, 2);
    mt_fa_only_keywords(call, "axis.remap", NULL);
    const char *kinds = mt_fa_string_arg(call->items.data[0], "the kinds of T.axis.remap");
    const mt_ast *vals = call->items.data[1];
    if (vals->kind != AST_LIST && vals->kind != AST_TUPLE)
        mt_fail(MT_ERR_TYPE, vals->loc, "T.axis.remap takes a list of loop variables");
    int n = vals->items.len, nt = t->kind == AST_TUPLE ? t->items.len : 1;
    if ((int)strlen(kinds) != n || nt != n)
        mt_fail(MT_ERR_TYPE, call->loc, "T.axis.remap: %d kinds, %d loop variables and %d names must agree",
                (int)strlen(kinds), n, nt);
    for (int i = 0; i < n; i++) {
        if (kinds[i] != 'S' && kinds[i] != 'R')
            mt_fail(MT_ERR_TYPE, call->items.data[0]->loc, "unknown axis kind '%c' in T.axis.remap (expected 'S' or 'R')", kinds[i]);
        const mt_ast *v = vals->items.data[i];
        const sym *sy = v->kind == AST_NAME ? mt_fa_lookup(c, v->name) : NULL;
        const loop_info *l = sy && sy->var ? mt_fa_loop_of(c, sy->var) : NULL;
        int64_t lo;
        if (!l) mt_fail(MT_ERR_TYPE, v->loc, "T.axis.remap takes variables of enclosing loops");
        mt_fa_check_reach(c, l->var, v->loc);
        int was = seal(c, h); /* the loop's extent becomes the block's domain */
        mt_fa_check_reach_expr(c, l->extent, v->loc);
        c->sealed = was;
        if (!mt_te_is_const_int(l->min, &lo) || lo != 0)
            mt_fail(MT_ERR_TYPE, v->loc, "T.axis.remap needs a loop from 0; use T.axis.spatial(extent, value)");
        add_iter(c, h, t->kind == AST_TUPLE ? t->items.data[i] : t, kinds[i] == 'S' ? MT_ITER_SPATIAL : MT_ITER_REDUCE,
                 l->extent, mt_te_var(c->a, l->var));
    }
}

/* The iteration variables so far come into scope (once each). */
static void bind_iters(fctx *c, block_hdr *h, int *bound) {
    for (; *bound < h->iters.len; (*bound)++) {
        mt_tvar *v = h->iters.data[*bound].var;
        const mt_texpr *val = h->values.data[*bound];
        const loop_info *l = val->kind == TE_VAR ? mt_fa_loop_of(c, val->var) : NULL;
        int64_t lo, ext, dom;
        bool exact = l && l->exact && mt_te_is_const_int(l->min, &lo) && lo == 0 &&
                     mt_te_is_const_int(l->extent, &ext) &&
                     mt_te_is_const_int(h->iters.data[*bound].extent, &dom) && ext == dom;
        if (!exact && !mt_fa_binding_in_domain(c, val, h->iters.data[*bound].extent))
            mt_fa_unproven(c, h->locs.data[*bound]); /* its accesses are proven over the domain, not over the
                               * values: the check pass substitutes the values */
        mt_fa_push_sym(c, v->name, v, NULL, NULL);
        loop_info li = {v, mt_te_i64(c->a, 0), h->iters.data[*bound].extent, exact, true};
        MT_VEC_PUSH(c->a, &c->loops, li);
    }
}

/* One header statement of a block; false when s starts the body. */
static bool block_header_stmt(fctx *c, mt_tstmt *b, block_hdr *h, const mt_ast *s, int *bound) {
    const char *fn = s->kind == AST_ASSIGN ? mt_fa_t_call(c, s->rhs) : s->kind == AST_EXPR_STMT ? mt_fa_t_call(c, s->lhs) : NULL;
    if (s->kind == AST_WITH && s->items.len == 1 && mt_fa_is_t_call(c, s->items.data[0]->lhs, "init")) {
        if (b->init) mt_fail(MT_ERR_SYNTAX, s->loc, "a block has one T.init()");
        bind_iters(c, h, bound);
        mt_fa_arity(s->items.data[0]->lhs, "init", 0, 0);
        int was = seal(c, h);
        b->init = mt_fa_stmts(c, &s->body, 0);
        c->sealed = was;
        return true;
    }
    if (!fn) return false;
    if (s->kind == AST_ASSIGN && s->items.len == 1) {
        if (!strcmp(fn, "axis.spatial") || !strcmp(fn, "axis.reduce")) axis_one(c, h, s, fn);
        else if (!strcmp(fn, "axis.remap")) axis_remap(c, h, s);
        else if (!strncmp(fn, "axis.", 5))
            mt_fail(MT_ERR_NAME, s->rhs->loc, "unknown axis kind 'T.%s' (expected T.axis.spatial, T.axis.reduce or T.axis.remap)", fn);
        else if (!strcmp(fn, "alloc_buffer") && s->items.data[0]->kind == AST_NAME) {
            bind_iters(c, h, bound);
            mt_tbuffer *nb = mt_fa_alloc_buffer(c, s->items.data[0]->name, s->rhs); /* refuses any loop variable */
            if (mt_scope_is_fragment(nb->scope))
                mt_fail(MT_ERR_TYPE, s->rhs->loc,
                        "fragment '%s' (scope %s) is allocated in a block; the T.wmma_* intrinsics that use "
                        "fragments run outside blocks, so allocate it in the kernel, outside its phases",
                        nb->name, mt_scope_str(nb->scope));
            MT_VEC_PUSH(c->a, &h->allocs, nb);
            mt_fa_push_sym(c, nb->name, NULL, nb, NULL);
        } else return false;
        return true;
    }
    if (s->kind != AST_EXPR_STMT) return false;
    bind_iters(c, h, bound);
    if (!strcmp(fn, "where")) {
        mt_fa_arity(s->lhs, "where", 1, 1);
        if (b->predicate) mt_fail(MT_ERR_SYNTAX, s->loc, "a block has one T.where");
        b->predicate = mt_fa_bool_expr(c, s->lhs->items.data[0], "T.where's condition");
        c->guarded++;
    } else if (!strcmp(fn, "reads") || !strcmp(fn, "writes")) {
        bool rd = fn[0] == 'r';
        int was = seal(c, h);
        regions(c, s->lhs, rd ? &b->reads : &b->writes, rd ? &b->nreads : &b->nwrites);
        c->sealed = was;
        *(rd ? &h->has_reads : &h->has_writes) = true;
    } else {
        return false;
    }
    return true;
}

/* with T.block("name"): header statements, then the body */
mt_tstmt *mt_fa_block(fctx *c, const mt_ast *with, const mt_ast *call) {
    mt_fa_only_keywords(call, "block", NULL);
    mt_fa_arity(call, "block", 0, 1);
    const char *name = call->items.len ? mt_fa_string_arg(call->items.data[0], "a block's name") : "";
    mt_tstmt *b = mt_ts_block(c->a, name);
    b->loc = with->loc;
    int mark = c->scope.len, lmark = c->loops.len, guarded = c->guarded, bound = 0, i = 0;
    block_hdr h;
    memset(&h, 0, sizeof h);
    h.lmark = lmark;
    while (i < with->body.len && block_header_stmt(c, b, &h, with->body.data[i], &bound)) i++;
    bind_iters(c, &h, &bound);
    int sealed = seal(c, &h);
    b->body = mt_fa_stmts(c, &with->body, i);
    c->sealed = sealed;
    b->iters = h.iters.data;
    b->iter_values = h.values.data;
    b->niters = h.iters.len;
    b->allocs = h.allocs.data;
    b->nallocs = h.allocs.len;
    if (!h.has_reads || !h.has_writes) infer_regions(c, b, !h.has_reads, !h.has_writes);
    mt_fa_scope_truncate(c, mark);
    c->loops.len = lmark;
    c->guarded = guarded;
    return b;
}

