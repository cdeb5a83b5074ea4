/*
 * partition.c -- an innermost loop whose body branches on its variable is
 * cut at the branch point into loops without the branch.
 *
 *     for i in range(m, m + E):            for i in range(m, P):      # i < P: True
 *         y[i] = T.Select(i < P, a[..],  ->    y[i] = T.Select(i < P, a[..], b[..])
 *                         b[..])           for i_1 in range(E - (P - m)):
 *                                              y[P + i_1] = T.Select(P + i_1 < P, ...)
 *
 * What concat becomes once legalized (`T.Select(v < P, a[.., T.min(v, P -
 * 1)], b[.., T.max(v - P, 0)])`, one select per element and clamped indices)
 * is the case it is for: in each part the ranges of the loop variables
 * decide the condition, so the simplify pass that runs next keeps one arm
 * and drops the clamps, and each part is a plain contiguous copy that the
 * vectorize pass takes (a select between two loads is nothing it can make
 * vector steps of). This is the loop partition of TVM's LoopPartition pass,
 * for conditions of the form below.
 *
 * Which loops: serial or vectorized loops whose body is stores, lets,
 * ifs, evaluations and checks (no loop, allocation or block), with constant
 * min and extent. Which points: P from a comparison `x < c`, `x <= c`, `x >
 * c`, `x >= c` (either side) in a T.Select condition or an if condition of
 * the body, where x is the loop variable plus a constant and c is a
 * constant, with m < P < m + E; the first such point in the body's order.
 * Each part keeps the loop's kind and is partitioned again (a concat of
 * three inputs has two points), up to MAX_PARTS parts per loop. The second
 * part runs from 0 with i := P + i_1 (the vectorize pass takes loops from
 * 0). Nothing is partitioned when no point is found, so a function without
 * such branches is returned as it is.
 *
 * The parts run the iterations in the loop's order and compute what it
 * computed; nothing is assumed about the body beyond what the loop bounds
 * say. Runs on the lowered, flattened form, before the first simplify.
 */
#include "passes/tir/tir_passes.h"

#include <stdint.h>

enum { MAX_PARTS = 8 };

/* e == var + *k for a constant *k (through +, - of constants)? */
static bool offset_of(const mt_texpr *e, const mt_tvar *var, int64_t *k) {
    int64_t c, r;
    if (e->lanes != 1) return false;
    if (e->kind == TE_VAR) {
        *k = 0;
        return e->var == var;
    }
    if (e->kind != TE_ADD && e->kind != TE_SUB) return false;
    if (mt_te_is_const_int(e->b, &c) && offset_of(e->a, var, &r))
        return e->kind == TE_ADD ? !__builtin_add_overflow(r, c, k) : !__builtin_sub_overflow(r, c, k);
    if (e->kind == TE_ADD && mt_te_is_const_int(e->a, &c) && offset_of(e->b, var, &r))
        return !__builtin_add_overflow(r, c, k);
    return false;
}

/* Can var + k wrap around in dtype t for var in [lo, hi)? */
static bool may_wrap(mt_dtype t, int64_t lo, int64_t hi, int64_t k) {
    int64_t a, b;
    if (__builtin_add_overflow(lo, k, &a) || __builtin_add_overflow(hi - 1, k, &b)) return true;
    if (t == MT_INT64) return false;
    return t != MT_INT32 || a < INT32_MIN || b > INT32_MAX;
}

/* The point P at which comparison e changes value over var in [lo, hi):
 * it holds for var < P and not from P on, or the reverse. */
static bool cmp_point(const mt_texpr *e, const mt_tvar *var, int64_t lo, int64_t hi, int64_t *p) {
    int64_t k, c;
    mt_texpr_kind kind = e->kind;
    const mt_texpr *x = e->a, *y = e->b;
    if (kind != TE_LT && kind != TE_LE && kind != TE_GT && kind != TE_GE) return false;
    if (!offset_of(x, var, &k)) { /* c OP x: x OP' c */
        const mt_texpr *t = x;
        x = y, y = t;
        kind = kind == TE_LT ? TE_GT : kind == TE_LE ? TE_GE : kind == TE_GT ? TE_LT : TE_LE;
        if (!offset_of(x, var, &k)) return false;
    }
    if (!mt_te_is_const_int(y, &c) || may_wrap(x->dtype, lo, hi, k)) return false;
    /* var + k < c  <=>  var < c - k;  var + k <= c  <=>  var < c - k + 1
     * (in exact arithmetic: a point that overflows is not taken) */
    if (__builtin_sub_overflow(c, k, p)) return false;
    return kind == TE_LT || kind == TE_GE || !__builtin_add_overflow(*p, 1, p);
}

typedef struct find {
    const mt_tvar *var;
    int64_t lo, hi; /* the loop's range [lo, hi) */
    int64_t point;
    bool found;
} find;

static void see_cond(find *f, const mt_texpr *c) {
    int64_t p;
    if (!f->found && cmp_point(c, f->var, f->lo, f->hi, &p) && p > f->lo && p < f->hi) {
        f->point = p;
        f->found = true;
    }
}

static void find_expr(mt_tvisitor *v, const mt_texpr *e) {
    find *f = v->ctx;
    if (f->found) return;
    if (e->kind == TE_SELECT) see_cond(f, e->cond);
    mt_tvisit_expr_children(v, e);
}

static void find_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    if (s->kind == TS_IF) see_cond(v->ctx, s->cond);
    mt_tvisit_stmt_children(v, s);
}

/* A body the pass copies: stores, lets, ifs, evaluations, checks and
 * sequences of them (no loop, allocation, block or launch). */
static bool plain_body(const mt_tstmt *s) {
    switch (s->kind) {
    case TS_STORE:
    case TS_EVAL:
    case TS_CHECK: return true;
    case TS_SEQ:
        for (int i = 0; i < s->nstmts; i++)
            if (!plain_body(s->stmts[i])) return false;
        return true;
    case TS_IF: return plain_body(s->then_s) && (!s->else_s || plain_body(s->else_s));
    case TS_LET: return plain_body(s->body);
    default: return false;
    }
}

/* Loop l cut at its first point, each part cut again while *parts <
 * MAX_PARTS; NULL when l has no point. */
static mt_tstmt *partition(mt_arena *a, const mt_tstmt *l, int *parts) {
    int64_t m, e;
    if (*parts >= MAX_PARTS) return NULL;
    find f = {l->var, 0, 0, 0, false};
    if (!mt_te_is_const_int(l->min, &m) || !mt_te_is_const_int(l->extent, &e)) return NULL;
    f.lo = m, f.hi = m + e;
    mt_tvisitor v = {find_expr, find_stmt, &f};
    mt_tvisit_stmt(&v, l->body);
    if (!f.found) return NULL;
    ++*parts;
    mt_tvar *v2 = mt_tvar_new(a, l->var->name, l->var->dtype);
    mt_texpr *at = mt_te_bin(a, TE_ADD, mt_te_int(a, l->var->dtype, f.point), mt_te_var(a, v2));
    mt_tvar *var = l->var;
    mt_tstmt *first = mt_ts_at(mt_ts_for(a, var, l->min, mt_te_int(a, l->extent->dtype, f.point - m),
                                         l->for_kind, l->body),
                               l->loc);
    mt_tstmt *second = mt_ts_at(mt_ts_for(a, v2, mt_te_int(a, l->min->dtype, 0),
                                          mt_te_int(a, l->extent->dtype, m + e - f.point), l->for_kind,
                                          mt_tsubst_stmt(a, l->body, &var, &at, 1)),
                                l->loc);
    mt_tstmt *p1 = partition(a, first, parts);
    mt_tstmt *p2 = partition(a, second, parts);
    mt_tstmt *both[2] = {p1 ? p1 : first, p2 ? p2 : second};
    return mt_ts_at(mt_ts_seq(a, both, 2), l->loc);
}

static mt_tstmt *part_stmt(mt_tmutator *m, mt_tstmt *s) {
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    if (r->kind != TS_FOR) return r;
    if ((r->for_kind != MT_FOR_SERIAL && r->for_kind != MT_FOR_VECTORIZED) || !plain_body(r->body))
        return r;
    int parts = 1;
    mt_tstmt *p = partition(m->arena, r, &parts);
    return p ? p : r;
}

/* Expressions hold no statements: no need to walk them. */
static mt_texpr *keep_expr(mt_tmutator *m, mt_texpr *e) {
    (void)m;
    return e;
}

mt_tfunc *mt_tir_partition(mt_arena *a, mt_tfunc *f) {
    if (!f->body) return f;
    mt_tmutator m = {a, keep_expr, part_stmt, NULL};
    mt_tstmt *body = mt_tmutate_stmt(&m, f->body);
    return body == f->body ? f : mt_tfunc_with_body(a, f, body);
}
