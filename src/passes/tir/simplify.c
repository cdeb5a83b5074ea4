/*
 * simplify.c -- constant folding, algebraic identities and dead statements.
 *
 * Expressions are rewritten bottom-up by a mutator: children first, then the
 * node itself by `rewrite`, which only ever looks one or two levels down
 * (children are already simple). Only scalar nodes (lanes == 1) are touched.
 *
 * Constant folding and the identities are tir/arith.c's (mt_arith_fold and
 * friends; arith.h states the rules): folding is exact in the node's dtype
 * (integers wrap, // and % follow Python, division by zero, float16 and
 * T.min/T.max of NaN or two zeros are not folded), identities are x+0,
 * x*1, int x*0, x//1, x%1, not not x, - -x, select(True, a, b),
 * select(c, a, a), `True and x` and the IEEE-exact float ones.
 *
 * On top of that, this file adds integer reassociation
 * (x + c1) + c2 -> x + (c1 + c2) (also with -), written `x - c` when the
 * constant is negative, and, in int64 sums, (x // c) * c + x % c -> x for a
 * constant c != 0, also nested (see merge_divmod: what fused loops leave in
 * flattened indices).
 *
 * Bounds (mt_bounds, tir/arith.c): the range of each loop variable in scope (from its
 * loop's min and extent) and of each let variable (from its value) decides
 * integer floordiv, floormod, min, max and comparisons that syntax cannot:
 * `i // 16` -> 0 and `i % 16` -> i for 0 <= i < 16, `T.min(i, 20)` -> i,
 * `i < 16` -> True (and an if on it keeps one branch), and in int64
 * (q * c + r) // c -> q, (q * c + r) % c -> r when 0 <= r < c (what fuse then
 * split leave). Ranges never assume arithmetic that would wrap around in the
 * node's dtype.
 *
 * Statements (handled top-down so that dead parts are never simplified):
 *  - a loop whose extent folds to <= 0, or whose body is a no-op, is removed;
 *  - an if with a constant condition is replaced by its live branch; an empty
 *    else is dropped and an empty then turns into `if not c: else`;
 *  - a let is substituted into its body and dropped when its value is a
 *    constant or a variable, when its variable is never used, or when it is
 *    used once and its value loads nothing (substituting a load could move it
 *    past a store to the same buffer);
 *  - sequences are flattened (nested sequences spliced in) and no-op
 *    statements dropped: empty sequences and T.evaluate of a constant. An
 *    empty sequence is the canonical no-op; a sequence of one statement is
 *    that statement.
 */
#include "passes/tir/tir_passes.h"
#include "support/common.h"
#include "tir/arith.h"

/* ---- expression rewriting ------------------------------------------------ */

/* p + c in dtype dt, as `p - (-c)` when c is negative, `p` when c is 0. */
static mt_texpr *add_const(mt_arena *a, mt_texpr *p, int64_t c) {
    mt_dtype dt = p->dtype;
    c = mt_int_wrap(dt, (uint64_t)c);
    if (c == 0) return p;
    int64_t neg = mt_int_wrap(dt, 0 - (uint64_t)c);
    if (c < 0 && neg > 0) return mt_te_bin(a, TE_SUB, p, mt_te_int(a, dt, neg));
    return mt_te_bin(a, TE_ADD, p, mt_te_int(a, dt, c));
}

/* ---- (x // c) * c + x % c -> x ------------------------------------------
 * An int64 sum is read as terms coef * atom (through +, -, unary - and
 * multiplication by constants); a pair of terms k*c * (x // c) and k * (x % c)
 * with the same x and constant c != 0 is k * x (floor division and modulo
 * make x == c * (x // c) + x % c exact, also in wrapping arithmetic), and x
 * is read as terms again, so nested pairs from fusing several loops
 * ((y // 4) // 3 * 12 + (y // 4) % 3 * 4 + y % 4) collapse to y. The sum is
 * rebuilt only when a pair merged. */

enum { MAX_TERMS = 32 };

typedef struct term {
    uint64_t coef;  /* wrapping */
    mt_texpr *atom; /* NULL: the constant term */
} term;

typedef struct terms {
    term t[MAX_TERMS];
    int n;
    bool full; /* too many terms: give up */
} terms;

static void add_term(terms *ts, uint64_t coef, mt_texpr *atom) {
    for (int i = 0; i < ts->n; i++)
        if (atom ? ts->t[i].atom && mt_texpr_equal(ts->t[i].atom, atom) : !ts->t[i].atom) {
            ts->t[i].coef += coef;
            return;
        }
    if (ts->n == MAX_TERMS) {
        ts->full = true;
        return;
    }
    ts->t[ts->n].coef = coef;
    ts->t[ts->n++].atom = atom;
}

static void expand(terms *ts, mt_texpr *e, uint64_t k) {
    int64_t c;
    switch (e->kind) {
    case TE_INT: add_term(ts, k * (uint64_t)e->ival, NULL); return;
    case TE_ADD: expand(ts, e->a, k), expand(ts, e->b, k); return;
    case TE_SUB: expand(ts, e->a, k), expand(ts, e->b, 0 - k); return;
    case TE_NEG: expand(ts, e->a, 0 - k); return;
    case TE_MUL:
        if (mt_te_is_const_int(e->b, &c)) {
            expand(ts, e->a, k * (uint64_t)c);
            return;
        }
        if (mt_te_is_const_int(e->a, &c)) {
            expand(ts, e->b, k * (uint64_t)c);
            return;
        }
        break;
    default: break;
    }
    add_term(ts, k, e);
}

/* One merge; false when there is none. */
static bool merge_pair(terms *ts) {
    int64_t c, c2;
    for (int i = 0; i < ts->n; i++) {
        mt_texpr *d = ts->t[i].atom;
        if (!d || d->kind != TE_FLOORDIV || !mt_te_is_const_int(d->b, &c) || c == 0 || ts->t[i].coef == 0)
            continue;
        for (int j = 0; j < ts->n; j++) {
            mt_texpr *m = ts->t[j].atom;
            if (!m || m->kind != TE_FLOORMOD || !mt_te_is_const_int(m->b, &c2) || c2 != c ||
                ts->t[i].coef != ts->t[j].coef * (uint64_t)c || !mt_texpr_equal(m->a, d->a))
                continue;
            uint64_t k = ts->t[j].coef;
            ts->t[i].coef = ts->t[j].coef = 0;
            expand(ts, d->a, k);
            return true;
        }
    }
    return false;
}

/* The int64 sum of ts's terms (zero coefficients dropped). */
static mt_texpr *rebuild(mt_arena *a, const terms *ts) {
    mt_texpr *acc = NULL;
    uint64_t cst = 0;
    for (int i = 0; i < ts->n; i++) {
        const term *t = &ts->t[i];
        if (!t->atom) {
            cst += t->coef;
            continue;
        }
        if (t->coef == 0) continue;
        bool neg = (int64_t)t->coef < 0 && t->coef != (uint64_t)INT64_MIN;
        uint64_t mag = neg ? 0 - t->coef : t->coef;
        mt_texpr *p = mag == 1 ? t->atom : mt_te_bin(a, TE_MUL, t->atom, mt_te_int(a, MT_INT64, (int64_t)mag));
        if (!acc) acc = neg ? mt_te_unary(a, TE_NEG, p) : p;
        else acc = mt_te_bin(a, neg ? TE_SUB : TE_ADD, acc, p);
    }
    if (!acc) return mt_te_int(a, MT_INT64, (int64_t)cst);
    return add_const(a, acc, (int64_t)cst);
}

static mt_texpr *merge_divmod(mt_arena *a, mt_texpr *e) {
    if (e->dtype != MT_INT64) return e;
    terms ts;
    ts.n = 0;
    ts.full = false;
    expand(&ts, e, 1);
    bool merged = false;
    while (!ts.full && merge_pair(&ts)) merged = true;
    if (!merged || ts.full) return e;
    return rebuild(a, &ts);
}

/* (q * c + r) // c -> q and (q * c + r) % c -> r in int64, for a constant
 * c > 0, when the bounds put r in [0, c): what fusing two loops and then
 * splitting the fused one by the inner extent leaves
 * ((fo * 4 + fi) // 4 with 0 <= fi < 4 is fo). The terms whose coefficient
 * c divides make q (coefficients divided), the others r. The sum as written
 * must not wrap (its range is known); then q and r are exact, and computing
 * them with wrap-around gives the same values. */
static mt_texpr *divmod_by_bounds(mt_arena *a, const mt_bounds *b, mt_texpr *e) {
    int64_t c;
    if (e->dtype != MT_INT64 || e->lanes != 1 || (e->kind != TE_FLOORDIV && e->kind != TE_FLOORMOD) ||
        !mt_te_is_const_int(e->b, &c) || c <= 0)
        return e;
    mt_range whole = mt_bounds_of(b, e->a);
    if (whole.lo == INT64_MIN && whole.hi == INT64_MAX) return e;
    terms ts, q, r;
    ts.n = q.n = r.n = 0;
    ts.full = q.full = r.full = false;
    expand(&ts, e->a, 1);
    if (ts.full) return e;
    for (int i = 0; i < ts.n; i++) {
        int64_t k = (int64_t)ts.t[i].coef;
        if (k != INT64_MIN && k % c == 0) add_term(&q, (uint64_t)(k / c), ts.t[i].atom);
        else add_term(&r, ts.t[i].coef, ts.t[i].atom);
    }
    if (q.n == 0) return e; /* nothing divides: the plain range rules decide */
    mt_texpr *rem = rebuild(a, &r);
    mt_range rr = mt_bounds_of(b, rem);
    if (rr.lo < 0 || rr.hi >= c) return e;
    return e->kind == TE_FLOORDIV ? rebuild(a, &q) : rem;
}

/* Constants and identities are arith's; what is left here is integer
 * reassociation and the (x // c) * c + x % c merge. */
static mt_texpr *rewrite_bin(mt_arena *a, mt_texpr *e) {
    mt_texpr *x = e->a, *y = e->b, *r = mt_arith_fold(a, e->kind, x, y);
    int64_t yi, c1;
    if (r) return r;
    if (x->lanes != 1 || y->lanes != 1 || !mt_dtype_is_int(x->dtype)) return e;
    bool yc = mt_te_is_const_int(y, &yi);
    switch (e->kind) {
    case TE_ADD:
        if (yc && (x->kind == TE_ADD || x->kind == TE_SUB) && mt_te_is_const_int(x->b, &c1))
            return add_const(a, x->a,
                             x->kind == TE_ADD ? (int64_t)((uint64_t)c1 + (uint64_t)yi)
                                               : (int64_t)((uint64_t)yi - (uint64_t)c1));
        return merge_divmod(a, e);
    case TE_SUB:
        if (yc && (x->kind == TE_ADD || x->kind == TE_SUB) && mt_te_is_const_int(x->b, &c1))
            return add_const(a, x->a,
                             x->kind == TE_ADD ? (int64_t)((uint64_t)c1 - (uint64_t)yi)
                                               : (int64_t)(0 - (uint64_t)c1 - (uint64_t)yi));
        return merge_divmod(a, e);
    default: return e;
    }
}

static mt_texpr *rewrite(mt_arena *a, mt_texpr *e) {
    mt_texpr *r = NULL;
    if (e->lanes != 1) return e;
    switch (e->kind) {
    case TE_ADD: case TE_SUB: case TE_MUL: case TE_DIV: case TE_FLOORDIV: case TE_FLOORMOD:
    case TE_MIN: case TE_MAX: case TE_EQ: case TE_NE: case TE_LT: case TE_LE: case TE_GT:
    case TE_GE: case TE_AND: case TE_OR:
        return rewrite_bin(a, e);
    case TE_NOT: case TE_NEG: r = mt_arith_fold_unary(a, e->kind, e->a); break;
    case TE_SELECT: r = mt_arith_fold_select(e->cond, e->a, e->b); break;
    case TE_CAST: r = mt_arith_fold_cast(a, e->dtype, e->a); break;
    default: break;
    }
    return r ? r : e;
}

/* The ranges of the loop and let variables in scope (tir/arith.h). */
static mt_bounds *bounds_of(mt_tmutator *m) { return m->ctx; }

static mt_texpr *simp_expr(mt_tmutator *m, mt_texpr *e) {
    mt_texpr *r = rewrite(m->arena, mt_tmutate_expr_children(m, e));
    switch (r->kind) {
    case TE_FLOORDIV: case TE_FLOORMOD:
        r = divmod_by_bounds(m->arena, bounds_of(m), r);
        if (r->kind != TE_FLOORDIV && r->kind != TE_FLOORMOD) return rewrite(m->arena, r);
        return mt_bounds_rewrite(m->arena, bounds_of(m), r);
    case TE_MIN: case TE_MAX: case TE_EQ: case TE_NE: case TE_LT: case TE_LE: case TE_GT: case TE_GE:
        return mt_bounds_rewrite(m->arena, bounds_of(m), r);
    default: return r;
    }
}

/* ---- statements ---------------------------------------------------------- */

static bool is_noop(const mt_tstmt *s) {
    return !s || (s->kind == TS_SEQ && s->nstmts == 0) ||
           (s->kind == TS_EVAL && (s->value->kind == TE_INT || s->value->kind == TE_FLOAT));
}

static mt_tstmt *noop(mt_arena *a) { return mt_ts_seq(a, NULL, 0); }

typedef struct use_count {
    const mt_tvar *var;
    int uses;
    bool loads;
} use_count;

static void count_hook(mt_tvisitor *v, const mt_texpr *e) {
    use_count *u = v->ctx;
    if (e->kind == TE_VAR && e->var == u->var) u->uses++;
    if (e->kind == TE_LOAD) u->loads = true;
    mt_tvisit_expr_children(v, e);
}

static int count_uses(const mt_tstmt *s, const mt_tvar *var) {
    use_count u = {var, 0, false};
    mt_tvisitor v = {count_hook, NULL, &u};
    mt_tvisit_stmt(&v, s);
    return u.uses;
}

static bool has_load(const mt_texpr *e) {
    use_count u = {NULL, 0, false};
    mt_tvisitor v = {count_hook, NULL, &u};
    mt_tvisit_expr(&v, e);
    return u.loads;
}

static mt_tstmt *simp_let(mt_tmutator *m, mt_tstmt *s) {
    mt_texpr *val = mt_tmutate_expr(m, s->value);
    bool trivial = val->kind == TE_INT || val->kind == TE_FLOAT || val->kind == TE_VAR;
    int uses = trivial ? 0 : count_uses(s->body, s->var);
    if (trivial || (uses == 1 && !has_load(val)))
        return mt_tmutate_stmt(m, mt_tsubst_stmt(m->arena, s->body, &s->var, &val, 1));
    if (uses == 0) return mt_tmutate_stmt(m, s->body);
    /* the value's range is the variable's when codegen converts nothing */
    mt_range r = s->var->dtype == val->dtype ? mt_bounds_of(bounds_of(m), val)
                                              : mt_bounds_of(bounds_of(m), mt_te_var(m->arena, s->var));
    mt_bounds_push(m->arena, bounds_of(m), s->var, r);
    mt_tstmt *body = mt_tmutate_stmt(m, s->body);
    mt_bounds_pop(bounds_of(m));
    if (is_noop(body)) return body;
    if (val == s->value && body == s->body) return s;
    return mt_ts_let(m->arena, s->var, val, body);
}

static mt_tstmt *simp_seq(mt_tmutator *m, mt_tstmt *s) {
    MT_VEC(mt_tstmt *) out = {0};
    bool changed = false;
    for (int i = 0; i < s->nstmts; i++) {
        mt_tstmt *c = mt_tmutate_stmt(m, s->stmts[i]);
        if (c != s->stmts[i]) changed = true;
        if (c && c->kind == TS_SEQ) {
            changed = true;
            for (int j = 0; j < c->nstmts; j++) MT_VEC_PUSH(m->arena, &out, c->stmts[j]);
        } else if (is_noop(c)) {
            changed = true;
        } else {
            MT_VEC_PUSH(m->arena, &out, c);
        }
    }
    if (!changed) return s;
    if (out.len == 0) return noop(m->arena);
    return mt_ts_seq(m->arena, out.data, out.len);
}

static mt_tstmt *simp_stmt(mt_tmutator *m, mt_tstmt *s) {
    mt_arena *a = m->arena;
    int64_t c;
    switch (s->kind) {
    case TS_FOR: {
        mt_texpr *ext = mt_tmutate_expr(m, s->extent);
        if (mt_te_is_const_int(ext, &c) && c <= 0) return noop(a);
        mt_texpr *mn = mt_tmutate_expr(m, s->min);
        bool pushed = mt_bounds_push_loop(a, bounds_of(m), s->var, mn, ext);
        mt_tstmt *body = mt_tmutate_stmt(m, s->body);
        if (pushed) mt_bounds_pop(bounds_of(m));
        if (is_noop(body)) return noop(a);
        if (ext == s->extent && mn == s->min && body == s->body) return s;
        mt_tstmt *r = mt_ts_copy(a, s);
        r->min = mn;
        r->extent = ext;
        r->body = body;
        return r;
    }
    case TS_IF: {
        mt_texpr *cond = mt_tmutate_expr(m, s->cond);
        if (mt_te_is_const_int(cond, &c)) {
            if (c) return mt_tmutate_stmt(m, s->then_s);
            return s->else_s ? mt_tmutate_stmt(m, s->else_s) : noop(a);
        }
        mt_tstmt *then_s = mt_tmutate_stmt(m, s->then_s);
        mt_tstmt *else_s = mt_tmutate_stmt(m, s->else_s);
        if (else_s && is_noop(else_s)) else_s = NULL;
        if (is_noop(then_s)) {
            if (!else_s) return noop(a);
            return mt_ts_if(a, mt_arith_unary(a, TE_NOT, cond), else_s, NULL);
        }
        if (cond == s->cond && then_s == s->then_s && else_s == s->else_s) return s;
        return mt_ts_if(a, cond, then_s, else_s);
    }
    case TS_LET: return simp_let(m, s);
    case TS_SEQ: return simp_seq(m, s);
    case TS_ALLOC: {
        mt_tstmt *body = mt_tmutate_stmt(m, s->body);
        if (is_noop(body)) return noop(a);
        return body == s->body ? s : mt_ts_alloc(a, s->buf, body);
    }
    case TS_EVAL: {
        if (is_noop(s)) return s;
        mt_texpr *val = mt_tmutate_expr(m, s->value);
        if (val->kind == TE_INT || val->kind == TE_FLOAT) return noop(a);
        if (val->kind == TE_CALL && val->intrin == IN_PREFETCH && val->args[0]->kind != TE_LOAD)
            return noop(a); /* no longer an element (its producer was inlined): nothing to prefetch */
        return val == s->value ? s : mt_ts_eval(a, val);
    }
    case TS_CHECK: { /* a check whose condition folds to True is gone */
        mt_tstmt *c = mt_tmutate_stmt_children(m, s);
        return mt_arith_is_const(c->cond, 1) ? noop(a) : c;
    }
    default: return mt_tmutate_stmt_children(m, s);
    }
}

mt_tstmt *mt_tir_simplify_stmt(mt_arena *a, const mt_bounds *outer, mt_tstmt *s) {
    mt_bounds bounds = {0};
    for (int i = 0; i < outer->n; i++) mt_bounds_push(a, &bounds, outer->vars[i].var, outer->vars[i].r);
    mt_tmutator m = {a, simp_expr, simp_stmt, &bounds};
    return mt_tmutate_stmt(&m, s);
}

mt_tfunc *mt_tir_simplify(mt_arena *a, mt_tfunc *f) {
    if (!f->body) return f;
    mt_bounds bounds = {0};
    mt_tmutator m = {a, simp_expr, simp_stmt, &bounds};
    mt_tstmt *body = mt_tmutate_stmt(&m, f->body);
    return mt_tfunc_with_body(a, f, body);
}
