/*
 * visitor.c -- walking, rewriting, substituting and comparing loop IR.
 *
 * The children of a node, in the order every walk visits them:
 *
 *   expressions  a, b (binary, unary, cast, ramp base/stride, broadcast),
 *                cond before a, b for TE_SELECT, args for TE_LOAD (indices)
 *                and TE_CALL. Buffer shapes are not children: a buffer is an
 *                object referred to, not an expression of the function body.
 *   statements   TS_FOR min, extent, body; TS_STORE indices, value; TS_SEQ
 *                stmts; TS_IF cond, then, else; TS_LET value, body; TS_ALLOC
 *                body; TS_EVAL value; TS_BLOCK iter extents, iter values,
 *                predicate, read regions (min, extent per dim), write regions,
 *                init, body; TS_LAUNCH min, grid x y z, block x y z, shared
 *                bytes (those set), then the value arguments. The callee of a
 *                launch is another function, not a child.
 *
 * The mutator rebuilds bottom-up and copies a node (mt_te_copy / mt_ts_copy)
 * only when one of its children came back as a different pointer, so an
 * unchanged tree is returned as the very same pointer and rewriting shares
 * every untouched subtree. A rebuilt expression recomputes its lanes from its
 * operands the way the constructors do (a substitution of a loop variable by
 * a T.Ramp widens the loads that use it); dtypes are kept as they were.
 *
 * Optional statement children (TS_IF else, TS_BLOCK init) may come back NULL,
 * which removes them; a NULL result for an element of a TS_SEQ drops that
 * element. Required children must not come back NULL.
 *
 * Substitution is a mutator whose expression hook replaces TE_VAR nodes by a
 * linear lookup in the given arrays (substitutions are short: a block's iter
 * vars, one loop var). Structural equality compares kinds, dtypes, lanes,
 * immediates (floats bitwise, so 0.0 and -0.0 differ and NaN equals itself),
 * and variable and buffer pointers.
 */
#include <string.h>

#include "tir/tir.h"

/* ---- visitor ------------------------------------------------------------- */

/* A launch's extents in walking order: min, grid x y z, block x y z, shared
 * bytes (entries may be NULL). */
enum { LAUNCH_EXPRS = 8 };
static void launch_exprs(const mt_tlaunch *l, mt_texpr **ex) {
    ex[0] = l->min;
    for (int d = 0; d < 3; d++) ex[1 + d] = l->grid[d], ex[4 + d] = l->block[d];
    ex[7] = l->shared_bytes;
}

void mt_tvisit_no_expr(mt_tvisitor *v, const mt_texpr *e) { (void)v, (void)e; }

void mt_tvisit_expr(mt_tvisitor *v, const mt_texpr *e) {
    if (!e) return;
    if (v->expr)
        v->expr(v, e);
    else
        mt_tvisit_expr_children(v, e);
}

void mt_tvisit_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    if (!s) return;
    if (v->stmt)
        v->stmt(v, s);
    else
        mt_tvisit_stmt_children(v, s);
}

void mt_tvisit_expr_children(mt_tvisitor *v, const mt_texpr *e) {
    if (e->kind == TE_SELECT) mt_tvisit_expr(v, e->cond);
    mt_tvisit_expr(v, e->a);
    mt_tvisit_expr(v, e->b);
    if (mt_te_has_args(e))
        for (int i = 0; i < e->nargs; i++) mt_tvisit_expr(v, e->args[i]);
}

static void visit_region(mt_tvisitor *v, const mt_tregion *r) {
    for (int d = 0; d < r->buf->ndim; d++) {
        mt_tvisit_expr(v, r->min[d]);
        mt_tvisit_expr(v, r->extent[d]);
    }
}

void mt_tvisit_stmt_children(mt_tvisitor *v, const mt_tstmt *s) {
    switch (s->kind) {
    case TS_FOR:
        mt_tvisit_expr(v, s->min);
        mt_tvisit_expr(v, s->extent);
        mt_tvisit_stmt(v, s->body);
        break;
    case TS_BLOCK:
        for (int i = 0; i < s->niters; i++) mt_tvisit_expr(v, s->iters[i].extent);
        if (s->iter_values)
            for (int i = 0; i < s->niters; i++) mt_tvisit_expr(v, s->iter_values[i]);
        mt_tvisit_expr(v, s->predicate);
        for (int i = 0; i < s->nreads; i++) visit_region(v, &s->reads[i]);
        for (int i = 0; i < s->nwrites; i++) visit_region(v, &s->writes[i]);
        mt_tvisit_stmt(v, s->init);
        mt_tvisit_stmt(v, s->body);
        break;
    case TS_STORE:
        for (int i = 0; i < s->nidx; i++) mt_tvisit_expr(v, s->idx[i]);
        mt_tvisit_expr(v, s->value);
        break;
    case TS_SEQ:
        for (int i = 0; i < s->nstmts; i++) mt_tvisit_stmt(v, s->stmts[i]);
        break;
    case TS_IF:
        mt_tvisit_expr(v, s->cond);
        mt_tvisit_stmt(v, s->then_s);
        mt_tvisit_stmt(v, s->else_s);
        break;
    case TS_LET:
        mt_tvisit_expr(v, s->value);
        mt_tvisit_stmt(v, s->body);
        break;
    case TS_ALLOC: mt_tvisit_stmt(v, s->body); break;
    case TS_EVAL: mt_tvisit_expr(v, s->value); break;
    case TS_CHECK:
        mt_tvisit_expr(v, s->cond);
        for (int i = 0; i < s->nidx; i++) mt_tvisit_expr(v, s->idx[i]);
        for (int i = 0; i < s->nidx; i++) mt_tvisit_expr(v, s->dims[i]);
        break;
    case TS_LAUNCH: {
        mt_texpr *ex[LAUNCH_EXPRS];
        launch_exprs(s->launch, ex);
        for (int i = 0; i < LAUNCH_EXPRS; i++) mt_tvisit_expr(v, ex[i]);
        for (int i = 0; i < s->launch->nargs; i++) mt_tvisit_expr(v, s->launch->args[i].value);
        break;
    }
    default: mt_ice("visitor: unknown statement kind %d", (int)s->kind);
    }
}

/* ---- mutator ------------------------------------------------------------- */

mt_texpr *mt_tmutate_expr(mt_tmutator *m, mt_texpr *e) {
    if (!e) return NULL;
    return m->expr ? m->expr(m, e) : mt_tmutate_expr_children(m, e);
}

mt_tstmt *mt_tmutate_stmt(mt_tmutator *m, mt_tstmt *s) {
    if (!s) return NULL;
    if (!m->stmt) return mt_tmutate_stmt_children(m, s); /* copies keep s->loc */
    return mt_ts_at(m->stmt(m, s), s->loc); /* what replaces s says where s was */
}

static int max_lanes(const mt_texpr *e) {
    int l = 1;
    if (e->a && e->a->lanes > l) l = e->a->lanes;
    if (e->b && e->b->lanes > l) l = e->b->lanes;
    if (e->cond && e->cond->lanes > l) l = e->cond->lanes;
    if (e->kind == TE_LOAD || e->kind == TE_CALL)
        for (int i = 0; i < e->nargs; i++)
            if (e->args[i]->lanes > l) l = e->args[i]->lanes;
    return l;
}

/* New array of n mutated expressions, or NULL when none changed. */
static mt_texpr **mutate_array(mt_tmutator *m, mt_texpr *const *xs, int n) {
    mt_texpr **out = NULL;
    for (int i = 0; i < n; i++) {
        mt_texpr *x = mt_tmutate_expr(m, xs[i]);
        if (x != xs[i] && !out) {
            out = MT_NEW_ARRAY(m->arena, mt_texpr *, n);
            memcpy(out, xs, sizeof(mt_texpr *) * (size_t)i);
        }
        if (out) out[i] = x;
    }
    return out;
}

mt_texpr *mt_tmutate_expr_children(mt_tmutator *m, mt_texpr *e) {
    mt_texpr *cond = e->kind == TE_SELECT ? mt_tmutate_expr(m, e->cond) : e->cond;
    mt_texpr *x = mt_tmutate_expr(m, e->a);
    mt_texpr *y = mt_tmutate_expr(m, e->b);
    mt_texpr **args = NULL;
    if (mt_te_has_args(e)) args = mutate_array(m, e->args, e->nargs);
    if (cond == e->cond && x == e->a && y == e->b && !args) return e;
    mt_texpr *c = mt_te_copy(m->arena, e);
    c->cond = cond;
    c->a = x;
    c->b = y;
    if (args) c->args = args;
    switch (c->kind) {
    case TE_INT: case TE_FLOAT: case TE_VAR: case TE_RAMP: case TE_BROADCAST: case TE_SHUFFLE: break;
    default: c->lanes = max_lanes(c);
    }
    return c;
}

static mt_tregion *mutate_regions(mt_tmutator *m, mt_tregion *rs, int n) {
    mt_tregion *out = NULL;
    for (int i = 0; i < n; i++) {
        int nd = rs[i].buf->ndim;
        mt_texpr **mins = mutate_array(m, rs[i].min, nd);
        mt_texpr **exts = mutate_array(m, rs[i].extent, nd);
        if ((mins || exts) && !out) {
            out = MT_NEW_ARRAY(m->arena, mt_tregion, n);
            memcpy(out, rs, sizeof(mt_tregion) * (size_t)n);
        }
        if (mins) out[i].min = mins;
        if (exts) out[i].extent = exts;
    }
    return out;
}

static mt_tstmt *must(mt_tstmt *s, const char *what) {
    if (!s) mt_ice("mutator: %s became NULL", what);
    return s;
}

static mt_tstmt *mutate_block(mt_tmutator *m, mt_tstmt *s) {
    mt_titer *iters = NULL;
    for (int i = 0; i < s->niters; i++) {
        mt_texpr *ext = mt_tmutate_expr(m, s->iters[i].extent);
        if (ext != s->iters[i].extent && !iters) {
            iters = MT_NEW_ARRAY(m->arena, mt_titer, s->niters);
            memcpy(iters, s->iters, sizeof(mt_titer) * (size_t)s->niters);
        }
        if (iters) iters[i].extent = ext;
    }
    mt_texpr **values = s->iter_values ? mutate_array(m, s->iter_values, s->niters) : NULL;
    mt_texpr *pred = mt_tmutate_expr(m, s->predicate);
    mt_tregion *reads = mutate_regions(m, s->reads, s->nreads);
    mt_tregion *writes = mutate_regions(m, s->writes, s->nwrites);
    mt_tstmt *init = mt_tmutate_stmt(m, s->init);
    mt_tstmt *body = must(mt_tmutate_stmt(m, s->body), "block body");
    if (!iters && !values && pred == s->predicate && !reads && !writes && init == s->init &&
        body == s->body)
        return s;
    mt_tstmt *c = mt_ts_copy(m->arena, s);
    if (iters) c->iters = iters;
    if (values) c->iter_values = values;
    c->predicate = pred;
    if (reads) c->reads = reads;
    if (writes) c->writes = writes;
    c->init = init;
    c->body = body;
    return c;
}

/* A launch with its extents and value arguments mutated (s itself when none
 * changed). */
static mt_tstmt *mutate_launch(mt_tmutator *m, mt_tstmt *s) {
    const mt_tlaunch *l = s->launch;
    mt_texpr *ex[LAUNCH_EXPRS], *nex[LAUNCH_EXPRS];
    launch_exprs(l, ex);
    bool changed = false;
    for (int i = 0; i < LAUNCH_EXPRS; i++) {
        nex[i] = mt_tmutate_expr(m, ex[i]);
        changed |= nex[i] != ex[i];
    }
    mt_targ *args = NULL;
    for (int i = 0; i < l->nargs; i++) {
        mt_texpr *x = mt_tmutate_expr(m, l->args[i].value);
        if (x != l->args[i].value && !args) {
            args = MT_NEW_ARRAY(m->arena, mt_targ, l->nargs);
            memcpy(args, l->args, sizeof(mt_targ) * (size_t)l->nargs);
        }
        if (args) args[i].value = x;
    }
    if (!changed && !args) return s;
    mt_tlaunch *nl = MT_NEW(m->arena, mt_tlaunch);
    *nl = *l;
    if (args) nl->args = args;
    nl->min = nex[0];
    for (int d = 0; d < 3; d++) nl->grid[d] = nex[1 + d], nl->block[d] = nex[4 + d];
    nl->shared_bytes = nex[7];
    mt_tstmt *c = mt_ts_copy(m->arena, s);
    c->launch = nl;
    return c;
}

mt_tstmt *mt_tmutate_stmt_children(mt_tmutator *m, mt_tstmt *s) {
    mt_tstmt *c;
    switch (s->kind) {
    case TS_FOR: {
        mt_texpr *mn = mt_tmutate_expr(m, s->min);
        mt_texpr *ext = mt_tmutate_expr(m, s->extent);
        mt_tstmt *body = must(mt_tmutate_stmt(m, s->body), "loop body");
        if (mn == s->min && ext == s->extent && body == s->body) return s;
        c = mt_ts_copy(m->arena, s);
        c->min = mn;
        c->extent = ext;
        c->body = body;
        return c;
    }
    case TS_BLOCK: return mutate_block(m, s);
    case TS_STORE: {
        mt_texpr **idx = mutate_array(m, s->idx, s->nidx);
        mt_texpr *val = mt_tmutate_expr(m, s->value);
        if (!idx && val == s->value) return s;
        c = mt_ts_copy(m->arena, s);
        if (idx) c->idx = idx;
        c->value = val;
        return c;
    }
    case TS_SEQ: {
        mt_tstmt **out = NULL;
        int n = 0;
        for (int i = 0; i < s->nstmts; i++) {
            mt_tstmt *x = mt_tmutate_stmt(m, s->stmts[i]);
            if (x != s->stmts[i] && !out) {
                out = MT_NEW_ARRAY(m->arena, mt_tstmt *, s->nstmts);
                memcpy(out, s->stmts, sizeof(mt_tstmt *) * (size_t)i);
                n = i;
            }
            if (out && x) out[n++] = x;
        }
        if (!out) return s;
        c = mt_ts_copy(m->arena, s);
        c->stmts = out;
        c->nstmts = n;
        return c;
    }
    case TS_IF: {
        mt_texpr *cond = mt_tmutate_expr(m, s->cond);
        mt_tstmt *then_s = must(mt_tmutate_stmt(m, s->then_s), "then branch");
        mt_tstmt *else_s = mt_tmutate_stmt(m, s->else_s);
        if (cond == s->cond && then_s == s->then_s && else_s == s->else_s) return s;
        c = mt_ts_copy(m->arena, s);
        c->cond = cond;
        c->then_s = then_s;
        c->else_s = else_s;
        return c;
    }
    case TS_LET: {
        mt_texpr *val = mt_tmutate_expr(m, s->value);
        mt_tstmt *body = must(mt_tmutate_stmt(m, s->body), "let body");
        if (val == s->value && body == s->body) return s;
        c = mt_ts_copy(m->arena, s);
        c->value = val;
        c->body = body;
        return c;
    }
    case TS_ALLOC: {
        mt_tstmt *body = must(mt_tmutate_stmt(m, s->body), "allocation body");
        if (body == s->body) return s;
        c = mt_ts_copy(m->arena, s);
        c->body = body;
        return c;
    }
    case TS_EVAL: {
        mt_texpr *val = mt_tmutate_expr(m, s->value);
        if (val == s->value) return s;
        c = mt_ts_copy(m->arena, s);
        c->value = val;
        return c;
    }
    case TS_CHECK: {
        mt_texpr *cond = mt_tmutate_expr(m, s->cond);
        mt_texpr **idx = mutate_array(m, s->idx, s->nidx);
        mt_texpr **dims = mutate_array(m, s->dims, s->nidx);
        if (cond == s->cond && !idx && !dims) return s;
        c = mt_ts_copy(m->arena, s);
        c->cond = cond;
        if (idx) c->idx = idx;
        if (dims) c->dims = dims;
        return c;
    }
    case TS_LAUNCH: return mutate_launch(m, s);
    default: mt_ice("mutator: unknown statement kind %d", (int)s->kind);
    }
}

/* ---- substitution -------------------------------------------------------- */

typedef struct subst_ctx {
    mt_tvar *const *vars;
    mt_texpr *const *values;
    int n;
} subst_ctx;

static mt_texpr *subst_hook(mt_tmutator *m, mt_texpr *e) {
    const subst_ctx *sc = m->ctx;
    if (e->kind == TE_VAR) {
        for (int i = 0; i < sc->n; i++)
            if (sc->vars[i] == e->var) return sc->values[i];
        return e;
    }
    return mt_tmutate_expr_children(m, e);
}

mt_texpr *mt_tsubst_expr(mt_arena *a, mt_texpr *e, mt_tvar *const *vars,
                         mt_texpr *const *values, int n) {
    if (n == 0 || !e) return e;
    subst_ctx sc = {vars, values, n};
    mt_tmutator m = {a, subst_hook, NULL, &sc};
    return mt_tmutate_expr(&m, e);
}

mt_tstmt *mt_tsubst_stmt(mt_arena *a, mt_tstmt *s, mt_tvar *const *vars,
                         mt_texpr *const *values, int n) {
    if (n == 0 || !s) return s;
    subst_ctx sc = {vars, values, n};
    mt_tmutator m = {a, subst_hook, NULL, &sc};
    return mt_tmutate_stmt(&m, s);
}

typedef struct swap_ctx {
    const mt_tbuffer *from;
    mt_tbuffer *to;
} swap_ctx;

static mt_texpr *swap_expr(mt_tmutator *m, mt_texpr *e) {
    const swap_ctx *w = m->ctx;
    mt_texpr *r = mt_tmutate_expr_children(m, e);
    if (r->kind != TE_LOAD || r->buf != w->from) return r;
    mt_texpr *l = mt_te_load(m->arena, w->to, r->args, r->nargs);
    l->loc = r->loc;
    return l;
}

static mt_tstmt *swap_stmt(mt_tmutator *m, mt_tstmt *s) {
    const swap_ctx *w = m->ctx;
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    if (r->kind != TS_STORE || r->buf != w->from) return r;
    mt_tstmt *n = mt_ts_copy(m->arena, r);
    n->buf = w->to;
    return n;
}

mt_texpr *mt_tsubst_buffer_expr(mt_arena *a, mt_texpr *e, const mt_tbuffer *from, mt_tbuffer *to) {
    if (!e) return e;
    swap_ctx w = {from, to};
    mt_tmutator m = {a, swap_expr, swap_stmt, &w};
    return mt_tmutate_expr(&m, e);
}

mt_tstmt *mt_tsubst_buffer_stmt(mt_arena *a, mt_tstmt *s, const mt_tbuffer *from, mt_tbuffer *to) {
    if (!s) return s;
    swap_ctx w = {from, to};
    mt_tmutator m = {a, swap_expr, swap_stmt, &w};
    return mt_tmutate_stmt(&m, s);
}

/* ---- equality ------------------------------------------------------------ */

bool mt_texpr_equal(const mt_texpr *x, const mt_texpr *y) {
    if (x == y) return true;
    if (!x || !y) return false;
    if (x->kind != y->kind || x->dtype != y->dtype || x->lanes != y->lanes) return false;
    switch (x->kind) {
    case TE_INT: return x->ival == y->ival;
    case TE_FLOAT: return memcmp(&x->fval, &y->fval, sizeof(double)) == 0;
    case TE_VAR: return x->var == y->var;
    case TE_LOAD:
        if (x->buf != y->buf) return false;
        break;
    case TE_CALL:
        if (x->intrin != y->intrin) return false;
        break;
    case TE_SHUFFLE:
        if (memcmp(x->lane, y->lane, sizeof(int) * (size_t)x->lanes) != 0) return false;
        break;
    default: break;
    }
    if (x->nargs != y->nargs && mt_te_has_args(x)) return false;
    if (mt_te_has_args(x))
        for (int i = 0; i < x->nargs; i++)
            if (!mt_texpr_equal(x->args[i], y->args[i])) return false;
    return mt_texpr_equal(x->cond, y->cond) && mt_texpr_equal(x->a, y->a) &&
           mt_texpr_equal(x->b, y->b);
}

/* ---- queries ------------------------------------------------------------ */

typedef struct uses_ctx {
    const mt_tvar *var;
    const mt_tbuffer *buf;
    bool found;
} uses_ctx;

static void uses_expr(mt_tvisitor *v, const mt_texpr *e) {
    uses_ctx *u = v->ctx;
    if (u->found) return;
    if ((u->var && e->kind == TE_VAR && e->var == u->var) ||
        (u->buf && e->kind == TE_LOAD && e->buf == u->buf)) {
        u->found = true;
        return;
    }
    mt_tvisit_expr_children(v, e);
}

static bool uses(const mt_texpr *e, const mt_tvar *x, const mt_tbuffer *b) {
    if (!e) return false;
    uses_ctx u = {x, b, false};
    mt_tvisitor v = {uses_expr, NULL, &u};
    mt_tvisit_expr(&v, e);
    return u.found;
}

bool mt_texpr_uses_var(const mt_texpr *e, const mt_tvar *x) { return uses(e, x, NULL); }
bool mt_texpr_reads(const mt_texpr *e, const mt_tbuffer *b) { return uses(e, NULL, b); }

bool mt_tstmt_uses_var(const mt_tstmt *s, const mt_tvar *x) {
    uses_ctx u = {x, NULL, false};
    mt_tvisitor v = {uses_expr, NULL, &u};
    mt_tvisit_stmt(&v, s);
    return u.found;
}

static void find_check(mt_tvisitor *v, const mt_tstmt *s) {
    if (s->kind == TS_CHECK) *(bool *)v->ctx = true;
    else if (!*(bool *)v->ctx) mt_tvisit_stmt_children(v, s);
}

bool mt_tstmt_has_check(const mt_tstmt *s) {
    bool found = false;
    mt_tvisitor v = {NULL, find_check, &found};
    mt_tvisit_stmt(&v, s);
    return found;
}

/* ---- shuffles and loads -------------------------------------------------------- */

typedef struct kind_ctx {
    bool shuffle; /* looking for a T.shfl_xor (else for any load) */
    bool found;
    bool wmma;    /* looking for a wmma intrinsic (overrides shuffle) */
} kind_ctx;

static void kind_expr(mt_tvisitor *v, const mt_texpr *e) {
    kind_ctx *k = v->ctx;
    if (k->found) return;
    bool call = e->kind == TE_CALL;
    if (k->wmma ? call && mt_intrin_is_wmma(e->intrin)
                : k->shuffle ? call && e->intrin == IN_SHFL_XOR : e->kind == TE_LOAD)
        k->found = true;
    else mt_tvisit_expr_children(v, e);
}

static void kind_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    if (!((kind_ctx *)v->ctx)->found) mt_tvisit_stmt_children(v, s);
}

bool mt_texpr_has_shuffle(const mt_texpr *e) {
    kind_ctx k = {true, false};
    mt_tvisitor v = {kind_expr, NULL, &k};
    if (e) mt_tvisit_expr(&v, e);
    return k.found;
}

bool mt_tstmt_has_shuffle(const mt_tstmt *s) {
    kind_ctx k = {true, false};
    mt_tvisitor v = {kind_expr, kind_stmt, &k};
    if (s) mt_tvisit_stmt(&v, s);
    return k.found;
}

bool mt_texpr_reads_memory(const mt_texpr *e) {
    kind_ctx k = {false, false};
    mt_tvisitor v = {kind_expr, NULL, &k};
    if (e) mt_tvisit_expr(&v, e);
    return k.found;
}

bool mt_tstmt_is_wmma(const mt_tstmt *s) {
    return s && s->kind == TS_EVAL && s->value && s->value->kind == TE_CALL && mt_intrin_is_wmma(s->value->intrin);
}

bool mt_tstmt_is_prefetch(const mt_tstmt *s) {
    return s && s->kind == TS_EVAL && s->value && s->value->kind == TE_CALL && s->value->intrin == IN_PREFETCH;
}

const mt_texpr *mt_te_prefetched(const mt_texpr *e) {
    return e && e->kind == TE_CALL && e->intrin == IN_PREFETCH && e->args[0]->kind == TE_LOAD ? e->args[0] : NULL;
}

bool mt_tstmt_takes_addresses(const mt_tstmt *s) { return mt_tstmt_is_wmma(s) || mt_tstmt_is_prefetch(s); }

bool mt_tstmt_has_wmma(const mt_tstmt *s) {
    kind_ctx k = {false, false, true};
    mt_tvisitor v = {kind_expr, kind_stmt, &k};
    if (s) mt_tvisit_stmt(&v, s);
    return k.found;
}
