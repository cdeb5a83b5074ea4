/*
 * arith.c -- constant folding, folding constructors and integer bounds of
 * loop IR expressions (see arith.h for the rules).
 *
 * Folding works one node at a time and only looks at its operands, which
 * callers have folded already (simplify rewrites bottom-up; the builders
 * fold as they build). Constants are folded by fold_int / fold_float /
 * fold_cast, exactly in the dtype; identities by int_identity,
 * bool_identity and float_identity; and the constructors are a fold with
 * the plain node as fallback.
 *
 * Bounds are interval arithmetic over int64 with overflow checks (mt_range
 * is inclusive). fit() is the guard that keeps every rewrite honest: a
 * range that could leave the node's dtype is replaced by the dtype's whole
 * range, because the generated code would wrap around there; and a range
 * that is the whole dtype decides nothing.
 */
#include "tir/arith.h"

#include <math.h>
#include <string.h>

#include "support/common.h"

/* ---- constants ----------------------------------------------------------- */

static bool float_const(const mt_texpr *e, double *v) {
    return e->kind == TE_FLOAT && e->lanes == 1 &&
           (e->dtype == MT_FLOAT32 || e->dtype == MT_FLOAT64) && (*v = e->fval, true);
}

bool mt_arith_is_const(const mt_texpr *e, int64_t want) {
    int64_t v;
    return mt_te_is_const_int(e, &v) && v == want;
}

static mt_texpr *int_imm(mt_arena *a, mt_dtype dt, uint64_t v) {
    return mt_te_int(a, dt, mt_int_wrap(dt, v));
}

static double round_to(mt_dtype dt, double v) { return dt == MT_FLOAT32 ? (double)(float)v : v; }

static bool is_compare(mt_texpr_kind k) { return k >= TE_EQ && k <= TE_GE; }

/* x // y and x % y in Python's sense, wrapped to dt (y != 0). */
static int64_t int_floordiv(mt_dtype dt, int64_t x, int64_t y) {
    if (y == -1) return mt_int_wrap(dt, 0 - (uint64_t)x);
    int64_t q = x / y;
    if (x % y != 0 && ((x < 0) != (y < 0))) q--;
    return mt_int_wrap(dt, (uint64_t)q);
}

static int64_t int_floormod(mt_dtype dt, int64_t x, int64_t y) {
    if (y == -1) return 0;
    int64_t r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return mt_int_wrap(dt, (uint64_t)r);
}

/* x k y on integers of dtype dt; false when it must not be folded. */
static bool fold_int(mt_texpr_kind k, mt_dtype dt, int64_t x, int64_t y, int64_t *out) {
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    if ((k == TE_DIV || k == TE_FLOORDIV || k == TE_FLOORMOD) && y == 0) return false;
    switch (k) {
    case TE_ADD: *out = mt_int_wrap(dt, ux + uy); return true;
    case TE_SUB: *out = mt_int_wrap(dt, ux - uy); return true;
    case TE_MUL: *out = mt_int_wrap(dt, ux * uy); return true;
    case TE_DIV:
        *out = y == -1 ? mt_int_wrap(dt, 0 - ux) : mt_int_wrap(dt, (uint64_t)(x / y));
        return true;
    case TE_FLOORDIV: *out = int_floordiv(dt, x, y); return true;
    case TE_FLOORMOD: *out = int_floormod(dt, x, y); return true;
    case TE_MIN: *out = x < y ? x : y; return true;
    case TE_MAX: *out = x > y ? x : y; return true;
    case TE_EQ: *out = x == y; return true;
    case TE_NE: *out = x != y; return true;
    case TE_LT: *out = x < y; return true;
    case TE_LE: *out = x <= y; return true;
    case TE_GT: *out = x > y; return true;
    case TE_GE: *out = x >= y; return true;
    case TE_AND: *out = x && y; return true;
    case TE_OR: *out = x || y; return true;
    default: return false;
    }
}

/* CPython's float_divmod. */
static void py_divmod(double vx, double wx, double *floordiv, double *mod) {
    double m = fmod(vx, wx);
    double div = (vx - m) / wx;
    if (m != 0.0) {
        if ((wx < 0) != (m < 0)) {
            m += wx;
            div -= 1.0;
        }
    } else {
        m = copysign(0.0, wx);
    }
    double fd;
    if (div != 0.0) {
        fd = floor(div);
        if (div - fd > 0.5) fd += 1.0;
    } else {
        fd = copysign(0.0, vx / wx);
    }
    *floordiv = fd;
    *mod = m;
}

/* Folds x k y on floats: 0 = not folded, 1 = float in *f, 2 = bool in *b. */
static int fold_float(mt_texpr_kind k, mt_dtype dt, double x, double y, double *f, int64_t *b) {
    double q, r;
    switch (k) {
    case TE_ADD: *f = round_to(dt, x + y); return 1;
    case TE_SUB: *f = round_to(dt, x - y); return 1;
    case TE_MUL: *f = round_to(dt, x * y); return 1;
    case TE_DIV:
        if (y == 0.0) return 0;
        *f = round_to(dt, x / y);
        return 1;
    case TE_FLOORDIV: case TE_FLOORMOD:
        if (y == 0.0 || !isfinite(x) || !isfinite(y)) return 0;
        py_divmod(x, y, &q, &r);
        *f = round_to(dt, k == TE_FLOORDIV ? q : r);
        return 1;
    case TE_MIN: case TE_MAX:
        if (isnan(x) || isnan(y) || (x == 0.0 && y == 0.0)) return 0;
        *f = (k == TE_MIN) == (x < y) ? x : y;
        return 1;
    case TE_EQ: *b = x == y; return 2;
    case TE_NE: *b = x != y; return 2;
    case TE_LT: *b = x < y; return 2;
    case TE_LE: *b = x <= y; return 2;
    case TE_GT: *b = x > y; return 2;
    case TE_GE: *b = x >= y; return 2;
    default: return 0;
    }
}

/* A float constant f converted to the integer dtype `to`, or NULL when the
 * truncated value does not fit (C leaves that undefined). */
static mt_texpr *float_to_int(mt_arena *a, mt_dtype to, double f) {
    if (isnan(f)) return NULL;
    double t = trunc(f);
    double lo, hi; /* t must be in [lo, hi) */
    switch (to) {
    case MT_INT8: lo = -128.0, hi = 128.0; break;
    case MT_UINT8: lo = 0.0, hi = 256.0; break;
    case MT_INT32: lo = -2147483648.0, hi = 2147483648.0; break;
    default: lo = -0x1p63, hi = 0x1p63; break;
    }
    if (!(t >= lo && t < hi)) return NULL;
    return mt_te_int(a, to, (int64_t)t);
}

mt_texpr *mt_arith_fold_cast(mt_arena *a, mt_dtype to, const mt_texpr *x) {
    int64_t i;
    double f;
    if (mt_dtype_is_half(to)) return NULL;
    if (mt_te_is_const_int(x, &i)) {
        if (to == MT_BOOL) return mt_te_int(a, to, i != 0);
        if (mt_dtype_is_int(to)) return int_imm(a, to, (uint64_t)i);
        if (to == MT_FLOAT32) return mt_te_float(a, to, (double)(float)i);
        return mt_te_float(a, to, (double)i);
    }
    if (float_const(x, &f)) {
        if (to == MT_BOOL) return mt_te_int(a, to, f != 0.0);
        if (mt_dtype_is_float(to)) return mt_te_float(a, to, round_to(to, f));
        return float_to_int(a, to, f);
    }
    return NULL;
}

/* ---- identities ---------------------------------------------------------- */

static bool is_bits(double v, double want) { return memcmp(&v, &want, sizeof v) == 0; }

/* On bools: `True and x` -> x, `False and x` -> False, and for `or`. */
static mt_texpr *bool_identity(mt_texpr_kind k, mt_texpr *x, mt_texpr *y) {
    int64_t xi, yi;
    bool xc = mt_te_is_const_int(x, &xi), yc = mt_te_is_const_int(y, &yi);
    if (k == TE_AND) {
        if (xc) return xi ? y : x;
        if (yc) return yi ? x : y;
    } else if (k == TE_OR) {
        if (xc) return xi ? x : y;
        if (yc) return yi ? y : x;
    }
    return NULL;
}

static mt_texpr *int_identity(mt_arena *a, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) {
    switch (k) {
    case TE_ADD:
        if (mt_arith_is_const(y, 0)) return x;
        if (mt_arith_is_const(x, 0)) return y;
        return NULL;
    case TE_SUB: return mt_arith_is_const(y, 0) ? x : NULL;
    case TE_MUL:
        if (mt_arith_is_const(y, 1)) return x;
        if (mt_arith_is_const(x, 1)) return y;
        if (mt_arith_is_const(y, 0) || mt_arith_is_const(x, 0)) return mt_te_int(a, x->dtype, 0);
        return NULL;
    case TE_DIV: case TE_FLOORDIV: return mt_arith_is_const(y, 1) ? x : NULL;
    case TE_FLOORMOD: return mt_arith_is_const(y, 1) ? mt_te_int(a, x->dtype, 0) : NULL;
    default: return NULL;
    }
}

/* The IEEE-exact ones only. */
static mt_texpr *float_identity(mt_texpr_kind k, mt_texpr *x, mt_texpr *y) {
    bool xk = x->kind == TE_FLOAT, yk = y->kind == TE_FLOAT;
    switch (k) {
    case TE_MUL:
        if (yk && y->fval == 1.0) return x;
        if (xk && x->fval == 1.0) return y;
        return NULL;
    case TE_DIV: return yk && y->fval == 1.0 ? x : NULL;
    case TE_SUB: return yk && is_bits(y->fval, 0.0) ? x : NULL;
    case TE_ADD:
        if (yk && is_bits(y->fval, -0.0)) return x;
        if (xk && is_bits(x->fval, -0.0)) return y;
        return NULL;
    default: return NULL;
    }
}

/* ---- folding ------------------------------------------------------------- */

static mt_texpr *fold_consts(mt_arena *a, mt_texpr_kind k, const mt_texpr *x, const mt_texpr *y,
                             bool *both) {
    int64_t xi, yi, r;
    double xf, yf, f;
    mt_dtype dt = x->dtype;
    *both = true;
    if (mt_te_is_const_int(x, &xi) && mt_te_is_const_int(y, &yi))
        return fold_int(k, dt, xi, yi, &r) ? mt_te_int(a, is_compare(k) ? MT_BOOL : dt, r) : NULL;
    if (float_const(x, &xf) && float_const(y, &yf)) {
        switch (fold_float(k, dt, xf, yf, &f, &r)) {
        case 1: return mt_te_float(a, dt, f);
        case 2: return mt_te_int(a, MT_BOOL, r);
        default: return NULL;
        }
    }
    *both = false;
    return NULL;
}

mt_texpr *mt_arith_fold(mt_arena *a, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) {
    if (x->dtype != y->dtype) return NULL;
    bool both;
    mt_texpr *r = fold_consts(a, k, x, y, &both);
    if (both) return r; /* two constants that must not be folded stay */
    mt_dtype dt = x->dtype;
    if (dt == MT_BOOL) r = bool_identity(k, x, y);
    else if (mt_dtype_is_int(dt)) r = int_identity(a, k, x, y);
    else if (mt_dtype_is_float(dt)) r = float_identity(k, x, y);
    /* `v + 0` with v a vector is v; `v * 0` is no scalar 0 */
    int lanes = x->lanes > y->lanes ? x->lanes : y->lanes;
    return r && r->lanes == lanes ? r : NULL;
}

mt_texpr *mt_arith_fold_unary(mt_arena *a, mt_texpr_kind k, mt_texpr *x) {
    int64_t i;
    double f;
    if (x->lanes != 1) return NULL;
    if (k == TE_NOT) {
        if (mt_te_is_const_int(x, &i)) return mt_te_int(a, MT_BOOL, !i);
        return x->kind == TE_NOT ? x->a : NULL;
    }
    if (k != TE_NEG) return NULL;
    if (mt_te_is_const_int(x, &i) && x->dtype != MT_BOOL) return int_imm(a, x->dtype, 0 - (uint64_t)i);
    if (float_const(x, &f)) return mt_te_float(a, x->dtype, -f);
    return x->kind == TE_NEG ? x->a : NULL;
}

mt_texpr *mt_arith_fold_select(mt_texpr *c, mt_texpr *x, mt_texpr *y) {
    int64_t i;
    if (x->lanes != 1 || y->lanes != 1) return NULL;
    if (mt_te_is_const_int(c, &i)) return i ? x : y;
    return mt_texpr_equal(x, y) ? x : NULL;
}

mt_texpr *mt_arith_bin(mt_arena *a, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) {
    mt_texpr *r = mt_arith_fold(a, k, x, y);
    return r ? r : mt_te_bin(a, k, x, y);
}

mt_texpr *mt_arith_unary(mt_arena *a, mt_texpr_kind k, mt_texpr *x) {
    mt_texpr *r = mt_arith_fold_unary(a, k, x);
    return r ? r : mt_te_unary(a, k, x);
}

mt_texpr *mt_arith_lane(mt_arena *a, const mt_texpr *e, int k, mt_lane_leaf leaf, void *ctx) {
    if (e->lanes == 1 && e->kind != TE_SHUFFLE) return (mt_texpr *)e;
    if (leaf && (e->kind == TE_LOAD || e->kind == TE_VAR)) {
        mt_texpr *r = leaf(ctx, e, k);
        if (r) return r;
    }
    switch (e->kind) {
    case TE_RAMP:
        return mt_arith_add(a, e->a, mt_arith_mul(a, e->b, mt_te_int(a, e->b->dtype, k)));
    case TE_BROADCAST: return e->a;
    case TE_SHUFFLE: { /* a one-lane shuffle is its lane in every lane */
        int w = e->args[0]->lanes, l = e->lane[e->lanes == 1 ? 0 : k];
        return mt_arith_lane(a, e->args[l / w], l % w, leaf, ctx);
    }
    case TE_VAR: mt_ice("arith: lane %d of vector variable '%s' asked with nothing bound to it", k, e->var->name);
    default: break;
    }
    mt_texpr *c = mt_te_copy(a, e);
    c->lanes = 1;
    if (e->a) c->a = mt_arith_lane(a, e->a, k, leaf, ctx);
    if (e->b) c->b = mt_arith_lane(a, e->b, k, leaf, ctx);
    if (e->cond) c->cond = mt_arith_lane(a, e->cond, k, leaf, ctx);
    if (e->nargs) {
        c->args = MT_NEW_ARRAY(a, mt_texpr *, e->nargs);
        for (int i = 0; i < e->nargs; i++) c->args[i] = mt_arith_lane(a, e->args[i], k, leaf, ctx);
    }
    return c;
}

mt_texpr *mt_arith_add(mt_arena *a, mt_texpr *x, mt_texpr *y) { return mt_arith_bin(a, TE_ADD, x, y); }
mt_texpr *mt_arith_sub(mt_arena *a, mt_texpr *x, mt_texpr *y) { return mt_arith_bin(a, TE_SUB, x, y); }
mt_texpr *mt_arith_mul(mt_arena *a, mt_texpr *x, mt_texpr *y) { return mt_arith_bin(a, TE_MUL, x, y); }
mt_texpr *mt_arith_floordiv(mt_arena *a, mt_texpr *x, mt_texpr *y) {
    return mt_arith_bin(a, TE_FLOORDIV, x, y);
}
mt_texpr *mt_arith_floormod(mt_arena *a, mt_texpr *x, mt_texpr *y) {
    return mt_arith_bin(a, TE_FLOORMOD, x, y);
}

/* ---- bounds -------------------------------------------------------------- */

static bool is_intlike(mt_dtype dt) { return mt_dtype_is_int(dt) || dt == MT_BOOL; }

/* The values of dtype dt (int64's for anything else). */
static mt_range whole(mt_dtype dt) { return (mt_range){mt_dtype_min(dt), mt_dtype_max(dt)}; }

static bool is_whole(mt_range r, mt_dtype dt) {
    mt_range w = whole(dt);
    return r.lo <= w.lo && r.hi >= w.hi;
}

/* r when it fits dt, else dt's whole range (the code would wrap around). */
static mt_range fit(mt_range r, mt_dtype dt) {
    mt_range w = whole(dt);
    return r.lo >= w.lo && r.hi <= w.hi && r.lo <= r.hi ? r : w;
}

/* The value of the immediate e as the generated code has it: codegen emits
 * an integer immediate truncated to its dtype's width and a bool one as
 * != 0, so T.int8(200) is -56 and T.uint8(300) is 44 (a weak literal takes
 * its operand's dtype unchecked: `x < 200` on int8 is `x < T.int8(200)`). */
static bool bounds_const(const mt_texpr *e, int64_t *c) {
    if (!mt_te_is_const_int(e, c)) return false;
    *c = mt_int_wrap(e->dtype, (uint64_t)*c);
    return true;
}

static int64_t fdiv(int64_t x, int64_t c) { return int_floordiv(MT_INT64, x, c); } /* c > 0 */

void mt_bounds_push(mt_arena *a, mt_bounds *b, const mt_tvar *var, mt_range r) {
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        struct mt_bound_var *v = MT_NEW_ARRAY(a, struct mt_bound_var, cap);
        for (int i = 0; i < b->n; i++) v[i] = b->vars[i];
        b->vars = v, b->cap = cap;
    }
    b->vars[b->n].var = var;
    b->vars[b->n++].r = r;
}

void mt_bounds_pop(mt_bounds *b) {
    if (b->n > 0) b->n--;
}

bool mt_bounds_push_loop(mt_arena *a, mt_bounds *b, const mt_tvar *var, const mt_texpr *min,
                         const mt_texpr *extent) {
    if (!is_intlike(var->dtype)) return false;
    mt_range m = mt_bounds_of(b, min), e = mt_bounds_of(b, extent);
    int64_t hi;
    if (is_whole(m, min->dtype) || is_whole(e, extent->dtype) || e.hi < 1 ||
        __builtin_add_overflow(m.hi, e.hi - 1, &hi))
        return false;
    mt_bounds_push(a, b, var, fit((mt_range){m.lo, hi}, var->dtype));
    return true;
}

static mt_range mul_range(mt_range x, mt_range y, mt_dtype dt) {
    int64_t p[4];
    if (__builtin_mul_overflow(x.lo, y.lo, &p[0]) || __builtin_mul_overflow(x.lo, y.hi, &p[1]) ||
        __builtin_mul_overflow(x.hi, y.lo, &p[2]) || __builtin_mul_overflow(x.hi, y.hi, &p[3]))
        return whole(dt);
    mt_range r = {p[0], p[0]};
    for (int i = 1; i < 4; i++) {
        if (p[i] < r.lo) r.lo = p[i];
        if (p[i] > r.hi) r.hi = p[i];
    }
    return fit(r, dt);
}

mt_range mt_bounds_of(const mt_bounds *b, const mt_texpr *e) {
    mt_dtype dt = e->dtype;
    if (e->lanes != 1 || !is_intlike(dt)) return whole(MT_INT64);
    mt_range x, y, r;
    int64_t c;
    switch (e->kind) {
    case TE_INT: return bounds_const(e, &c) ? (mt_range){c, c} : whole(dt);
    case TE_VAR:
        for (int i = b->n - 1; i >= 0; i--)
            if (b->vars[i].var == e->var) return b->vars[i].r;
        return whole(dt);
    case TE_ADD:
        x = mt_bounds_of(b, e->a), y = mt_bounds_of(b, e->b);
        if (__builtin_add_overflow(x.lo, y.lo, &r.lo) || __builtin_add_overflow(x.hi, y.hi, &r.hi))
            return whole(dt);
        return fit(r, dt);
    case TE_SUB:
        x = mt_bounds_of(b, e->a), y = mt_bounds_of(b, e->b);
        if (__builtin_sub_overflow(x.lo, y.hi, &r.lo) || __builtin_sub_overflow(x.hi, y.lo, &r.hi))
            return whole(dt);
        return fit(r, dt);
    case TE_MUL: return mul_range(mt_bounds_of(b, e->a), mt_bounds_of(b, e->b), dt);
    case TE_FLOORDIV:
        if (!bounds_const(e->b, &c) || c <= 0) return whole(dt);
        x = mt_bounds_of(b, e->a);
        return fit((mt_range){fdiv(x.lo, c), fdiv(x.hi, c)}, dt);
    case TE_FLOORMOD:
        if (!bounds_const(e->b, &c) || c <= 0) return whole(dt);
        x = mt_bounds_of(b, e->a);
        int64_t k;
        if (fdiv(x.lo, c) == fdiv(x.hi, c) && !__builtin_mul_overflow(fdiv(x.lo, c), c, &k))
            return (mt_range){x.lo - k, x.hi - k}; /* both in [0, c) */
        return fit((mt_range){0, c - 1}, dt);
    case TE_MIN:
    case TE_MAX: {
        x = mt_bounds_of(b, e->a), y = mt_bounds_of(b, e->b);
        bool mn = e->kind == TE_MIN;
        r.lo = mn ? (x.lo < y.lo ? x.lo : y.lo) : (x.lo > y.lo ? x.lo : y.lo);
        r.hi = mn ? (x.hi < y.hi ? x.hi : y.hi) : (x.hi > y.hi ? x.hi : y.hi);
        return r;
    }
    case TE_CAST:
        if (!is_intlike(e->a->dtype)) return whole(dt);
        return fit(mt_bounds_of(b, e->a), dt);
    case TE_SELECT:
        x = mt_bounds_of(b, e->a), y = mt_bounds_of(b, e->b);
        return (mt_range){x.lo < y.lo ? x.lo : y.lo, x.hi > y.hi ? x.hi : y.hi};
    default: return whole(dt);
    }
}

static mt_texpr *truth(mt_arena *a, bool v) { return mt_te_int(a, MT_BOOL, v); }

mt_texpr *mt_bounds_rewrite(mt_arena *a, const mt_bounds *b, mt_texpr *e) {
    if (e->lanes != 1 || !e->a || !e->b || e->a->lanes != 1 || e->b->lanes != 1 ||
        !mt_dtype_is_int(e->a->dtype) || !mt_dtype_is_int(e->b->dtype))
        return e;
    int64_t c;
    switch (e->kind) {
    case TE_FLOORDIV: {
        if (!bounds_const(e->b, &c) || c <= 0) return e;
        mt_range x = mt_bounds_of(b, e->a);
        if (is_whole(x, e->a->dtype) || fdiv(x.lo, c) != fdiv(x.hi, c)) return e;
        return mt_te_int(a, e->dtype, fdiv(x.lo, c));
    }
    case TE_FLOORMOD: {
        if (!bounds_const(e->b, &c) || c <= 0) return e;
        mt_range x = mt_bounds_of(b, e->a);
        return x.lo >= 0 && x.hi < c ? e->a : e;
    }
    default: break;
    }
    mt_range x = mt_bounds_of(b, e->a), y = mt_bounds_of(b, e->b);
    if (is_whole(x, e->a->dtype) && is_whole(y, e->b->dtype)) return e;
    switch (e->kind) {
    case TE_MIN:
        if (x.hi <= y.lo) return e->a;
        if (y.hi <= x.lo) return e->b;
        return e;
    case TE_MAX:
        if (x.lo >= y.hi) return e->a;
        if (y.lo >= x.hi) return e->b;
        return e;
    case TE_LT:
        if (x.hi < y.lo) return truth(a, true);
        if (x.lo >= y.hi) return truth(a, false);
        return e;
    case TE_LE:
        if (x.hi <= y.lo) return truth(a, true);
        if (x.lo > y.hi) return truth(a, false);
        return e;
    case TE_GT:
        if (x.lo > y.hi) return truth(a, true);
        if (x.hi <= y.lo) return truth(a, false);
        return e;
    case TE_GE:
        if (x.lo >= y.hi) return truth(a, true);
        if (x.hi < y.lo) return truth(a, false);
        return e;
    case TE_EQ:
        if (x.hi < y.lo || y.hi < x.lo) return truth(a, false);
        return e;
    case TE_NE:
        if (x.hi < y.lo || y.hi < x.lo) return truth(a, true);
        return e;
    default: return e;
    }
}

/* ---- the form of index expressions ---------------------------------------- */

static int terms(mt_texpr *e, int64_t scale, bool (*open)(const mt_texpr *, void *), void *ctx,
                 mt_arith_term *t, int n, int max) {
    int64_t k, s;
    if (n < 0) return n;
    bool by_b = e->kind == TE_MUL && mt_te_is_const_int(e->b, &k) && k > 0;
    if (!open || open(e, ctx)) {
        if (e->kind == TE_ADD) {
            n = terms(e->a, scale, open, ctx, t, n, max);
            return terms(e->b, scale, open, ctx, t, n, max);
        }
        bool by_a = !by_b && e->kind == TE_MUL && mt_te_is_const_int(e->a, &k) && k > 0;
        if ((by_a || by_b) && !__builtin_mul_overflow(scale, k, &s))
            return terms(by_b ? e->a : e->b, s, open, ctx, t, n, max);
    }
    if (n == max) return -1;
    t[n] = (mt_arith_term){e, scale};
    return n + 1;
}

int mt_arith_terms(mt_texpr *e, bool (*open)(const mt_texpr *, void *), void *ctx, mt_arith_term *t,
                   int max) {
    return terms(e, 1, open, ctx, t, 0, max);
}

bool mt_arith_has_divmod(const mt_texpr *e) {
    if (e->kind == TE_FLOORDIV || e->kind == TE_FLOORMOD) return true;
    return (e->a && mt_arith_has_divmod(e->a)) || (e->b && mt_arith_has_divmod(e->b));
}

bool mt_arith_min_const(const mt_texpr *e, int64_t *c, const mt_texpr **r) {
    if (e->kind != TE_MIN) return false;
    if (mt_te_is_const_int(e->a, c)) *r = e->b;
    else if (mt_te_is_const_int(e->b, c)) *r = e->a;
    else return false;
    return true;
}

bool mt_arith_const_bound(const mt_texpr *e, int64_t *c) {
    const mt_texpr *r;
    return mt_te_is_const_int(e, c) || mt_arith_min_const(e, c, &r);
}

/* e's terms: the constant ones added up into *k, the others into t (at
 * most max); the count, or -1. */
enum { DIFF_TERMS = 16 };

static int terms_and_const(mt_texpr *e, mt_arith_term *t, int max, int64_t *k) {
    mt_arith_term all[DIFF_TERMS];
    int n = e ? mt_arith_terms(e, NULL, NULL, all, DIFF_TERMS) : 0, m = 0;
    *k = 0;
    for (int i = 0; i < n; i++) {
        int64_t v, p;
        if (!mt_te_is_const_int(all[i].e, &v)) {
            if (m == max) return -1;
            t[m++] = all[i];
        } else if (__builtin_mul_overflow(v, all[i].coef, &p) || __builtin_add_overflow(*k, p, k)) {
            return -1;
        }
    }
    return n < 0 ? -1 : m;
}

bool mt_arith_const_diff(mt_texpr *x, mt_texpr *y, int64_t *d) {
    mt_arith_term tx[DIFF_TERMS], ty[DIFF_TERMS];
    int64_t kx, ky;
    int nx = terms_and_const(x, tx, DIFF_TERMS, &kx), ny = terms_and_const(y, ty, DIFF_TERMS, &ky);
    if (nx < 0 || nx != ny || __builtin_sub_overflow(kx, ky, d)) return false;
    bool used[DIFF_TERMS] = {false};
    for (int i = 0; i < nx; i++) {
        int j = 0;
        while (j < ny && (used[j] || ty[j].coef != tx[i].coef || !mt_texpr_equal(ty[j].e, tx[i].e))) j++;
        if (j == ny) return false;
        used[j] = true;
    }
    return true;
}
