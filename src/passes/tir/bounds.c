/*
 * bounds.c -- integer ranges of expressions and the rewrites they decide
 * (see bounds.h; simplify.c calls them).
 */
#include "passes/tir/bounds.h"

#include <stdint.h>

#include "support/common.h"

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
static bool const_int(const mt_texpr *e, int64_t *c) {
    if (!mt_te_is_const_int(e, c)) return false;
    *c = mt_int_wrap(e->dtype, (uint64_t)*c);
    return true;
}

static int64_t fdiv(int64_t x, int64_t c) { /* c > 0 */
    int64_t q = x / c;
    return q - (x % c != 0 && x < 0);
}

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
    case TE_INT: return const_int(e, &c) ? (mt_range){c, c} : whole(dt);
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
        if (!const_int(e->b, &c) || c <= 0) return whole(dt);
        x = mt_bounds_of(b, e->a);
        return fit((mt_range){fdiv(x.lo, c), fdiv(x.hi, c)}, dt);
    case TE_FLOORMOD:
        if (!const_int(e->b, &c) || c <= 0) return whole(dt);
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
        if (!const_int(e->b, &c) || c <= 0) return e;
        mt_range x = mt_bounds_of(b, e->a);
        if (is_whole(x, e->a->dtype) || fdiv(x.lo, c) != fdiv(x.hi, c)) return e;
        return mt_te_int(a, e->dtype, fdiv(x.lo, c));
    }
    case TE_FLOORMOD: {
        if (!const_int(e->b, &c) || c <= 0) return e;
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
