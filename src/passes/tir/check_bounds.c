/*
 * check_bounds.c -- run-time bounds checks for hand-written loop functions
 * (mt_compile_options.check_bounds, `mtc --check-bounds`).
 *
 * A loop function the user wrote (@T.prim_func, mt_tfunc.hand_written) can
 * index anything; the front end refuses an access only when it is provably
 * out of bounds (tir/from_ast_buffer.c). This pass, the first TIR pass, runs on
 * such functions in block form and gives every load and store it cannot
 * prove in bounds a T.check_bounds statement (TS_CHECK, tir.h): when its
 * condition is false the kernel stops, and mt_kernel_run fails with
 * MT_ERR_RUNTIME naming the buffer, the index, the shape and the place of
 * the access (runtime/parallel.h, codegen/llvm.c). Functions the compiler
 * made from graph ops are left alone: their shapes are proven. The element
 * of a T.prefetch is an address, not an access (it never faults): only the
 * loads in its indices are checked.
 *
 * Ranges. For an access at some point of the function, the context is the
 * stack of statements around it: loops, lets, blocks (their iteration
 * variables bound to values of the loops) and ifs. The index of each dim is
 * carried outward through that stack as an inclusive range [lo, hi] of
 * expressions: a let or an iteration variable is replaced by its value; a
 * loop variable v over [min, min + extent) by min or by min + extent - 1,
 * whichever end gives the least (for lo) or the greatest (for hi) value,
 * which is exact when the expression is monotone in v (mono() below: sums,
 * differences, products by constants or by non-negative invariants, floor
 * division by a positive constant, min, max, widening casts). A loop in
 * which it is not monotone, a let or iteration value that loads, a loop
 * whose bounds load, or a loop whose extent depends on a loop already
 * passed (its iterations might be empty for some values), or a loop that
 * stores into a buffer the range loads (an index `x[i + k[0]]` is carried
 * out of loops that do not write k), or the allocation of a buffer the
 * range loads (the check would read it out of its scope) ends the walk.
 *
 * Proof. Carried through the whole stack (ifs and T.where included: a range
 * over more iterations than run is still a bound), a range with
 * 0 <= lo and hi < dim provable -- the difference, as a linear form of
 * atoms, has a non-negative constant and non-negative coefficients of
 * atoms known to be non-negative (symbolic dims, products and sums of
 * them) -- or with constant bounds inside a constant dim (tir/arith.h's
 * interval arithmetic) needs no check at all. A hand-written elementwise
 * loop or matmul over its buffers' own (symbolic) dims is proven.
 *
 * Hoisting. An access that is not proven is checked once, as far out as
 * its range can be carried without passing an if, a T.where or a block's
 * init (an access there may be guarded by them: its range outside them
 * could be out of bounds when the access never is): the check goes in
 * front of the outermost statement passed, with the condition
 *
 *     ext_1 <= 0 or ... or (0 <= lo_0 and hi_0 < dim_0 and ...)
 *
 * over the extents of the loops passed that might be empty (the access
 * then does not run). So a loop `for i in range(m): y[i + k] = ...` costs
 * one test before the loop, not one per iteration. A check that could not
 * be carried out of anything sits in front of the statement holding the
 * access. It reports, per dim, the index value (lo when lo < 0, else hi:
 * for a hoisted check, the extreme value the loops reach, which is an
 * index the loops would access); it fires before the loop it was hoisted
 * from runs, instead of at the offending iteration (the outputs of a
 * stopped kernel are undefined either way). Identical checks at one place
 * are made once. Indices that are vectors (T.Ramp with a constant stride,
 * T.Broadcast) are checked over their lanes; other vector indices are not
 * checked.
 */
#include <string.h>

#include "passes/tir/tir_passes.h"
#include "support/common.h"
#include "tir/arith.h"

enum { MAX_TERMS = 16, MAX_DIMS = 16 };

/* ---- linear forms: the proof ------------------------------------------------ */

typedef struct lin {
    const mt_texpr *atom[MAX_TERMS];
    int64_t coef[MAX_TERMS];
    int n;
    int64_t k;
    bool ok; /* false: overflowed or too many atoms */
} lin;

static void lin_term(lin *l, const mt_texpr *atom, int64_t c) {
    for (int i = 0; i < l->n; i++)
        if (mt_texpr_equal(l->atom[i], atom)) {
            if (__builtin_add_overflow(l->coef[i], c, &l->coef[i])) l->ok = false;
            return;
        }
    if (l->n == MAX_TERMS) {
        l->ok = false;
        return;
    }
    l->atom[l->n] = atom;
    l->coef[l->n++] = c;
}

/* l += scale * e */
static void lin_add(lin *l, const mt_texpr *e, int64_t scale) {
    int64_t v, s;
    if (!l->ok) return;
    if (mt_te_is_const_int(e, &v)) {
        if (__builtin_mul_overflow(v, scale, &s) || __builtin_add_overflow(l->k, s, &l->k)) l->ok = false;
        return;
    }
    switch (e->kind) {
    case TE_ADD: lin_add(l, e->a, scale), lin_add(l, e->b, scale); return;
    case TE_SUB: lin_add(l, e->a, scale), lin_add(l, e->b, -scale); return;
    case TE_NEG: lin_add(l, e->a, -scale); return;
    case TE_MUL:
        if (mt_te_is_const_int(e->b, &v) && !__builtin_mul_overflow(v, scale, &s)) return lin_add(l, e->a, s);
        if (mt_te_is_const_int(e->a, &v) && !__builtin_mul_overflow(v, scale, &s)) return lin_add(l, e->b, s);
        break;
    case TE_CAST:
        if (mt_dtype_is_int(e->a->dtype) && mt_dtype_size(e->a->dtype) <= mt_dtype_size(e->dtype))
            return lin_add(l, e->a, scale);
        break;
    default: break;
    }
    lin_term(l, e, scale);
}

/* Is e >= 0 whatever the values of its variables? */
static bool known_nonneg(const mt_tfunc *f, const mt_texpr *e) {
    int64_t v;
    if (mt_te_is_const_int(e, &v)) return v >= 0;
    switch (e->kind) {
    case TE_VAR:
        for (int i = 0; i < f->nsym; i++)
            if (f->sym_vars[i] == e->var) return true; /* a dim */
        return false;
    case TE_ADD: case TE_MUL: case TE_MIN: case TE_MAX:
        return known_nonneg(f, e->a) && known_nonneg(f, e->b);
    case TE_FLOORDIV: return known_nonneg(f, e->a) && mt_te_is_const_int(e->b, &v) && v > 0;
    case TE_CAST: return mt_dtype_is_int(e->a->dtype) && known_nonneg(f, e->a);
    default: return false;
    }
}

/* Is x - y + k >= 0 provable? */
static bool prove_ge(const mt_tfunc *f, const mt_texpr *x, const mt_texpr *y, int64_t k) {
    lin l = {.ok = true, .k = k};
    lin_add(&l, x, 1);
    if (y) lin_add(&l, y, -1);
    if (!l.ok || l.k < 0) return false;
    for (int i = 0; i < l.n; i++)
        if (l.coef[i] < 0 || (l.coef[i] > 0 && !known_nonneg(f, l.atom[i]))) return false;
    return true;
}

/* ---- monotony ------------------------------------------------------------------ */

enum { M_FAIL = 2 };

/* 0: e does not use v; 1: non-decreasing in v; -1: non-increasing; M_FAIL:
 * neither is known. */
static int mono(const mt_tfunc *f, const mt_texpr *e, const mt_tvar *v);

static int mono_join(int x, int y) {
    if (x == M_FAIL || y == M_FAIL) return M_FAIL;
    if (x == 0) return y;
    if (y == 0 || x == y) return x;
    return M_FAIL;
}

static int mono_neg(int x) { return x == M_FAIL ? M_FAIL : -x; }

static int mono_mul(const mt_tfunc *f, const mt_texpr *e, const mt_tvar *v) {
    int ma = mono(f, e->a, v), mb = mono(f, e->b, v);
    int64_t c;
    if (ma == 0 && mb == 0) return 0;
    if (ma != 0 && mb != 0) return M_FAIL;
    const mt_texpr *k = ma ? e->b : e->a;
    int m = ma ? ma : mb;
    if (mt_te_is_const_int(k, &c)) return c == 0 ? 0 : c > 0 ? m : mono_neg(m);
    return known_nonneg(f, k) ? m : M_FAIL;
}

static int mono(const mt_tfunc *f, const mt_texpr *e, const mt_tvar *v) {
    int64_t c;
    if (!mt_texpr_uses_var(e, v)) return 0;
    switch (e->kind) {
    case TE_VAR: return 1;
    case TE_ADD: case TE_MIN: case TE_MAX: return mono_join(mono(f, e->a, v), mono(f, e->b, v));
    case TE_SUB: return mono_join(mono(f, e->a, v), mono_neg(mono(f, e->b, v)));
    case TE_NEG: return mono_neg(mono(f, e->a, v));
    case TE_MUL: return mono_mul(f, e, v);
    case TE_FLOORDIV:
        return mt_te_is_const_int(e->b, &c) && c > 0 ? mono(f, e->a, v) : M_FAIL;
    case TE_CAST:
        return mt_dtype_is_int(e->a->dtype) && mt_dtype_size(e->a->dtype) <= mt_dtype_size(e->dtype)
                   ? mono(f, e->a, v) : M_FAIL;
    default: return M_FAIL;
    }
}

/* ---- the context ------------------------------------------------------------- */

typedef enum cx_kind { CX_LOOP, CX_LET, CX_BLOCK, CX_BARRIER, CX_ALLOC } cx_kind;

/* A statement around the current point. */
typedef struct cx {
    cx_kind kind;
    const mt_tstmt *s;             /* the loop, let, block or allocation (NULL for a barrier) */
    bool barrier;                  /* a block with T.where: checks stay inside it */
    MT_VEC(mt_tstmt *) pending;    /* checks to put in front of s */
} cx;

typedef struct ck {
    mt_arena *a;
    const mt_tfunc *f;
    MT_VEC(cx) stack;
} ck;

/* An index range being carried outward. */
typedef struct range {
    mt_texpr *lo[MAX_DIMS], *hi[MAX_DIMS];
    int n;
    mt_texpr *guards[64];          /* extents of passed loops that might be 0 */
    int nguards;
    mt_texpr *const *dims;         /* the buffer's shape: the check names it as it is */
} range;

static bool has_load(const mt_texpr *e) {
    if (!e) return false;
    if (e->kind == TE_LOAD) return true;
    if (has_load(e->a) || has_load(e->b) || has_load(e->cond)) return true;
    if (e->kind == TE_CALL || e->kind == TE_SHUFFLE)
        for (int i = 0; i < e->nargs; i++)
            if (has_load(e->args[i])) return true;
    return false;
}

typedef struct stores_ctx {
    const mt_texpr *e; /* do stores hit a buffer e loads? */
    bool hit;
} stores_ctx;

static void store_hook(mt_tvisitor *v, const mt_tstmt *s) {
    stores_ctx *sc = v->ctx;
    if (s->kind == TS_STORE && mt_texpr_reads(sc->e, s->buf)) sc->hit = true;
    if (!sc->hit) mt_tvisit_stmt_children(v, s);
}

/* Does body store into a buffer that r's bounds load (so they change in it)? */
static bool range_clobbered(const range *r, const mt_tstmt *body) {
    for (int d = 0; d < r->n; d++) {
        stores_ctx sc[2] = {{r->lo[d], false}, {r->hi[d], false}};
        for (int k = 0; k < 2; k++) {
            if (!has_load(sc[k].e)) continue;
            mt_tvisitor v = {NULL, store_hook, &sc[k]};
            mt_tvisit_stmt(&v, body);
            if (sc[k].hit) return true;
        }
    }
    return false;
}

static bool range_uses(const range *r, const mt_tvar *v) {
    for (int d = 0; d < r->n; d++)
        if (mt_texpr_uses_var(r->lo[d], v) || mt_texpr_uses_var(r->hi[d], v)) return true;
    for (int g = 0; g < r->nguards; g++)
        if (mt_texpr_uses_var(r->guards[g], v)) return true;
    return false;
}

/* Does the buffer's shape use v (a buffer allocated in a loop, a let or a
 * block)? Then the check stays inside v's scope. */
static bool dims_use(const range *r, const mt_tvar *v) {
    for (int d = 0; d < r->n; d++)
        if (mt_texpr_uses_var(r->dims[d], v)) return true;
    return false;
}

static void range_subst(mt_arena *a, range *r, mt_tvar *const *vars, mt_texpr *const *vals, int n) {
    for (int d = 0; d < r->n; d++) {
        r->lo[d] = mt_tsubst_expr(a, r->lo[d], vars, vals, n);
        r->hi[d] = mt_tsubst_expr(a, r->hi[d], vars, vals, n);
    }
    for (int g = 0; g < r->nguards; g++) r->guards[g] = mt_tsubst_expr(a, r->guards[g], vars, vals, n);
}

/* Carries r out of the let or block e; false when it cannot. */
static bool pass_binding(ck *c, const cx *e, range *r) {
    const mt_tstmt *s = e->s;
    if (range_clobbered(r, s->body) || (s->kind == TS_BLOCK && s->init && range_clobbered(r, s->init)))
        return false;
    if (e->kind == CX_LET) {
        if (dims_use(r, s->var)) return false;
        if (!range_uses(r, s->var)) return true;
        if (has_load(s->value)) return false;
        range_subst(c->a, r, (mt_tvar *const *)&s->var, (mt_texpr *const *)&s->value, 1);
        return true;
    }
    for (int i = 0; i < s->niters; i++)
        if (dims_use(r, s->iters[i].var) || (range_uses(r, s->iters[i].var) && has_load(s->iter_values[i])))
            return false;
    mt_tvar **vars = MT_NEW_ARRAY(c->a, mt_tvar *, s->niters > 0 ? s->niters : 1);
    for (int i = 0; i < s->niters; i++) vars[i] = s->iters[i].var;
    range_subst(c->a, r, vars, s->iter_values, s->niters);
    return true;
}

/* Carries r out of loop s (see the top); false when it cannot. For a
 * proof, the loops that might be empty do not matter. */
static bool pass_loop(ck *c, const mt_tstmt *s, range *r, bool prove) {
    int64_t ext;
    if (has_load(s->min) || has_load(s->extent) || dims_use(r, s->var) || range_clobbered(r, s->body))
        return false;
    for (int g = 0; !prove && g < r->nguards; g++)
        if (mt_texpr_uses_var(r->guards[g], s->var)) return false;
    mt_texpr *last = mt_arith_sub(c->a, mt_arith_add(c->a, s->min, s->extent), mt_te_i64(c->a, 1));
    for (int d = 0; d < r->n; d++) {
        int ml = mono(c->f, r->lo[d], s->var), mh = mono(c->f, r->hi[d], s->var);
        if (ml == M_FAIL || mh == M_FAIL) return false;
    }
    for (int d = 0; d < r->n; d++) {
        int ml = mono(c->f, r->lo[d], s->var), mh = mono(c->f, r->hi[d], s->var);
        /* mono 0 with the variable still in the bound (`i * 0`): its value
         * does not matter, but the variable must not leave its loop */
        mt_texpr *lo_at = ml >= 0 ? s->min : last, *hi_at = mh >= 0 ? last : s->min;
        r->lo[d] = mt_tsubst_expr(c->a, r->lo[d], (mt_tvar *const *)&s->var, &lo_at, 1);
        r->hi[d] = mt_tsubst_expr(c->a, r->hi[d], (mt_tvar *const *)&s->var, &hi_at, 1);
    }
    if (!prove && !(mt_te_is_const_int(s->extent, &ext) && ext > 0)) {
        if (r->nguards == MT_ARRAY_LEN(r->guards)) return false;
        r->guards[r->nguards++] = s->extent;
    }
    return true;
}

/* Carries r out of the allocation e: not when its bounds load the buffer
 * allocated there (`x[l + t[0]]` with t allocated in the loop over l: the
 * check in front of the loop would read a t out of scope). */
static bool pass_alloc(const cx *e, const range *r) {
    const mt_tbuffer *b = e->s->buf;
    for (int d = 0; d < r->n; d++)
        if (mt_texpr_reads(r->lo[d], b) || mt_texpr_reads(r->hi[d], b)) return false;
    for (int g = 0; g < r->nguards; g++)
        if (mt_texpr_reads(r->guards[g], b)) return false;
    return true;
}

/* Carries r out of context entry e (any kind); false when it cannot. */
static bool pass_entry(ck *c, const cx *e, range *r, bool prove) {
    switch (e->kind) {
    case CX_BARRIER: return prove;
    case CX_ALLOC: return pass_alloc(e, r);
    case CX_LET: return pass_binding(c, e, r);
    case CX_BLOCK: return (prove || !e->barrier) && pass_binding(c, e, r);
    case CX_LOOP: return pass_loop(c, e->s, r, prove);
    }
    return false;
}

/* ---- one access ------------------------------------------------------------------ */

/* The scalar int64 range of index x over its lanes; false for a vector
 * index other than T.Ramp with a constant stride and T.Broadcast. */
static bool lane_range(mt_arena *a, mt_texpr *x, mt_texpr **lo, mt_texpr **hi) {
    int64_t st;
    if (x->lanes > 1 && x->kind == TE_BROADCAST) x = x->a;
    if (x->lanes > 1) {
        if (x->kind != TE_RAMP || !mt_te_is_const_int(x->b, &st)) return false;
        mt_texpr *b = mt_te_cast(a, MT_INT64, x->a);
        mt_texpr *end = mt_arith_add(a, b, mt_te_i64(a, st * (x->lanes - 1)));
        *lo = st >= 0 ? b : end;
        *hi = st >= 0 ? end : b;
        return true;
    }
    *lo = *hi = mt_te_cast(a, MT_INT64, x);
    return true;
}

/* The constant-range proof (tir/arith.h) of dim d over every loop around. */
static bool proven_by_ranges(ck *c, const mt_texpr *ix, const mt_texpr *dim) {
    int64_t size;
    if (!mt_te_is_const_int(dim, &size)) return false;
    mt_bounds bd = {0};
    for (int j = 0; j < c->stack.len; j++) {
        const cx *e = &c->stack.data[j];
        if (e->kind == CX_LOOP) mt_bounds_push_loop(c->a, &bd, e->s->var, e->s->min, e->s->extent);
    }
    mt_range r = mt_bounds_of(&bd, ix);
    return r.lo >= 0 && r.hi < size && r.lo <= r.hi;
}

/* 0 <= lo and hi < dim for every dim of r, by linear forms. */
static bool linear_proof(ck *c, const range *r, mt_texpr *const *dims) {
    for (int d = 0; d < r->n; d++)
        if (!prove_ge(c->f, r->lo[d], NULL, 0) || !prove_ge(c->f, dims[d], r->hi[d], -1)) return false;
    return true;
}

/* Is every dim of the access in bounds, by the proofs above? */
static bool proven(ck *c, const range *r0, mt_texpr *const *dims) {
    range r = *r0;
    bool all = true;
    for (int j = c->stack.len - 1; all && j >= 0; j--) all = pass_entry(c, &c->stack.data[j], &r, true);
    if (all && linear_proof(c, &r, dims)) return true;
    range s = *r0; /* constant ranges: through lets and blocks, then over all loops */
    for (int j = c->stack.len - 1; j >= 0; j--) {
        const cx *e = &c->stack.data[j];
        if (e->kind == CX_ALLOC ? !pass_alloc(e, &s)
                                : e->kind != CX_LOOP && e->kind != CX_BARRIER && !pass_binding(c, e, &s))
            return false;
    }
    for (int d = 0; d < s.n; d++)
        if (!proven_by_ranges(c, s.lo[d], dims[d]) || !proven_by_ranges(c, s.hi[d], dims[d])) return false;
    return true;
}

static mt_texpr *cmp(ck *c, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) { return mt_arith_bin(c->a, k, x, y); }

static mt_texpr *both(ck *c, mt_texpr *x, mt_texpr *y) { return x ? mt_arith_bin(c->a, TE_AND, x, y) : y; }

/* The check of range r (carried out of the entries above level) against dims. */
static mt_tstmt *make_check(ck *c, const range *r, mt_texpr *const *dims, const char *name,
                            bool store, mt_loc loc) {
    mt_arena *a = c->a;
    mt_texpr *zero = mt_te_i64(a, 0), *ok = NULL;
    mt_texpr **rep = MT_NEW_ARRAY(a, mt_texpr *, r->n > 0 ? r->n : 1);
    for (int d = 0; d < r->n; d++) { /* the sides not proven */
        bool lo_ok = prove_ge(c->f, r->lo[d], NULL, 0), hi_ok = prove_ge(c->f, dims[d], r->hi[d], -1);
        if (!lo_ok) ok = both(c, ok, cmp(c, TE_GE, r->lo[d], zero));
        if (!hi_ok) ok = both(c, ok, cmp(c, TE_LT, r->hi[d], dims[d]));
        rep[d] = lo_ok || mt_texpr_equal(r->lo[d], r->hi[d]) ? r->hi[d]
                 : hi_ok ? r->lo[d]
                         : mt_te_select(a, cmp(c, TE_LT, r->lo[d], zero), r->lo[d], r->hi[d]);
    }
    if (!ok) ok = mt_te_int(a, MT_BOOL, 1);
    for (int g = 0; g < r->nguards; g++)
        ok = mt_arith_bin(a, TE_OR, cmp(c, TE_LE, r->guards[g], zero), ok);
    mt_tstmt *s = mt_ts_check(a, ok, store, name, rep, dims, r->n);
    s->loc = loc;
    return s;
}

/* Appends check s to list unless an identical one is there. */
static void add_unique(mt_arena *a, void *vec, mt_tstmt *s) {
    MT_VEC(mt_tstmt *) *list = vec;
    for (int i = 0; i < list->len; i++) {
        const mt_tstmt *t = list->data[i];
        if (t->check_store == s->check_store && strcmp(t->name, s->name) == 0 && t->nidx == s->nidx &&
            mt_texpr_equal(t->cond, s->cond))
            return;
    }
    MT_VEC_PUSH(a, list, s);
}

typedef MT_VEC(mt_tstmt *) stmt_vec;

/* Checks the access buf[idx] at the current point: nothing when proven,
 * else a check at the outermost level it can be carried to (own: the
 * checks in front of the current statement). */
static void access(ck *c, const mt_tbuffer *buf, mt_texpr *const *idx, int n, bool store, mt_loc loc,
                   stmt_vec *own) {
    range r;
    memset(&r, 0, sizeof r);
    if (n == 0 || n > MAX_DIMS) return;
    r.n = n;
    r.dims = buf->shape;
    for (int d = 0; d < n; d++)
        if (!lane_range(c->a, idx[d], &r.lo[d], &r.hi[d])) return;
    if (proven(c, &r, buf->shape)) return;
    bool int64 = true;
    for (int d = 0; d < n; d++) int64 &= idx[d]->dtype == MT_INT64;
    int level = c->stack.len;
    for (int j = c->stack.len - 1; int64 && j >= 0; j--) {
        range t = r;
        if (!pass_entry(c, &c->stack.data[j], &t, false)) break;
        r = t;
        level = j;
    }
    mt_tstmt *s = make_check(c, &r, buf->shape, buf->name, store, loc);
    if (level == c->stack.len) add_unique(c->a, own, s);
    else add_unique(c->a, &c->stack.data[level].pending, s);
}

/* ---- the walk ------------------------------------------------------------------- */

typedef struct loads_ctx {
    ck *c;
    stmt_vec *own;
    mt_loc at;
} loads_ctx;

static void load_hook(mt_tvisitor *v, const mt_texpr *e) {
    mt_tvisit_expr_children(v, e); /* indices' loads first */
    if (e->kind != TE_LOAD) return;
    loads_ctx *lc = v->ctx;
    access(lc->c, e->buf, e->args, e->nargs, false, e->loc.line ? e->loc : lc->at, lc->own);
}

/* The loads of e, checked in front of the current statement (or further out). */
static void check_loads(ck *c, const mt_texpr *e, mt_loc at, stmt_vec *own) {
    if (!e) return;
    loads_ctx lc = {c, own, at};
    mt_tvisitor v = {load_hook, NULL, &lc};
    mt_tvisit_expr(&v, e);
}

/* The accesses of s's own expressions (not of the statements in it). */
static void own_accesses(ck *c, const mt_tstmt *s, stmt_vec *own) {
    switch (s->kind) {
    case TS_FOR: check_loads(c, s->min, s->loc, own), check_loads(c, s->extent, s->loc, own); break;
    case TS_LET: check_loads(c, s->value, s->loc, own); break;
    case TS_EVAL: {
        const mt_texpr *x = mt_te_prefetched(s->value); /* an address: only its indices' loads are read */
        if (!x) check_loads(c, s->value, s->loc, own);
        for (int i = 0; x && i < x->nargs; i++) check_loads(c, x->args[i], s->loc, own);
        break;
    }
    case TS_IF: check_loads(c, s->cond, s->loc, own); break;
    case TS_BLOCK:
        for (int i = 0; i < s->niters; i++) check_loads(c, s->iter_values[i], s->loc, own);
        break;
    case TS_STORE:
        for (int i = 0; i < s->nidx; i++) check_loads(c, s->idx[i], s->loc, own);
        check_loads(c, s->value, s->loc, own);
        access(c, s->buf, s->idx, s->nidx, true, s->loc, own);
        break;
    default: break;
    }
}

static mt_tstmt *walk(ck *c, mt_tstmt *s);

/* Walks child under a new context entry; the entry's pending checks go to *pending. */
static mt_tstmt *walk_in(ck *c, cx_kind k, const mt_tstmt *s, bool barrier, mt_tstmt *child,
                         stmt_vec *pending) {
    if (!child) return NULL;
    cx e;
    memset(&e, 0, sizeof e);
    e.kind = k, e.s = s, e.barrier = barrier;
    MT_VEC_PUSH(c->a, &c->stack, e);
    mt_tstmt *r = walk(c, child);
    cx *top = &c->stack.data[c->stack.len - 1];
    for (int i = 0; pending && i < top->pending.len; i++) add_unique(c->a, pending, top->pending.data[i]);
    c->stack.len--;
    return r;
}

/* s with its children walked; the checks hoisted to s's front go to *front. */
static mt_tstmt *walk_children(ck *c, mt_tstmt *s, stmt_vec *front) {
    mt_tstmt *n;
    switch (s->kind) {
    case TS_SEQ: {
        mt_tstmt **xs = MT_NEW_ARRAY(c->a, mt_tstmt *, s->nstmts > 0 ? s->nstmts : 1);
        for (int i = 0; i < s->nstmts; i++) xs[i] = walk(c, s->stmts[i]);
        /* flat: a statement with checks in front comes back as a sequence,
         * and the rules match a function's top-level statements */
        return mt_ts_seq_flat(c->a, xs, s->nstmts);
    }
    case TS_FOR: case TS_LET: case TS_BLOCK: case TS_ALLOC: case TS_IF: break;
    default: return s;
    }
    n = mt_ts_copy(c->a, s);
    if (s->kind == TS_FOR) n->body = walk_in(c, CX_LOOP, s, false, s->body, front);
    else if (s->kind == TS_LET) n->body = walk_in(c, CX_LET, s, false, s->body, front);
    else if (s->kind == TS_ALLOC) n->body = walk_in(c, CX_ALLOC, s, false, s->body, front);
    else if (s->kind == TS_IF) {
        n->then_s = walk_in(c, CX_BARRIER, NULL, true, s->then_s, NULL);
        n->else_s = walk_in(c, CX_BARRIER, NULL, true, s->else_s, NULL);
    } else {
        bool pred = s->predicate != NULL;
        n->init = s->init ? walk_in(c, CX_BLOCK, s, true, s->init, NULL) : NULL;
        n->body = walk_in(c, CX_BLOCK, s, pred, s->body, front);
    }
    return n;
}

static mt_tstmt *walk(ck *c, mt_tstmt *s) {
    stmt_vec own = {0};
    own_accesses(c, s, &own);
    mt_tstmt *n = walk_children(c, s, &own);
    if (own.len == 0) return n;
    MT_VEC_PUSH(c->a, &own, n);
    return mt_ts_at(mt_ts_seq_flat(c->a, own.data, own.len), s->loc);
}

mt_tfunc *mt_tir_check_bounds(mt_arena *a, mt_tfunc *f) {
    if (!f->hand_written || !f->body) return f;
    ck c;
    memset(&c, 0, sizeof c);
    c.a = a, c.f = f;
    return mt_tfunc_with_body(a, f, walk(&c, f->body));
}
