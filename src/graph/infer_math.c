/*
 * infer_math.c -- shape/dtype rules of the math, comparison, logic, select,
 * cast and creation ops (graph/ops_math.def).
 *
 * The unary float ops, abs/sign and the binary arithmetic ops share the rules
 * of graph/ops.c (infer_unary_float, infer_unary_signed, infer_binary_arith);
 * this file has the rest:
 *
 *   comparisons    operands unified like arithmetic (weak literals take the
 *                  tensor's dtype, two tensor dtypes must agree), NumPy
 *                  broadcasting, result bool. == and != accept bool
 *                  operands; the orderings < <= > >= do not.
 *   logic          bool tensors only; an int literal settles to bool (0 is
 *                  False, anything else True).
 *   where          condition bool; x and y unified; the three shapes
 *                  broadcast together (broadcast_n below: NumPy's rule for n
 *                  operands, one dim at a time from the last).
 *   astype         x's shape with the requested dtype.
 *   zeros/ones/    no tensor arguments: the type is the `shape` and `dtype`
 *   full           attributes. -1 ("infer", which reshape accepts) has no
 *                  meaning here; symbolic dims are kept as written and bound
 *                  at run time like any other. full's value must be exactly
 *                  representable in an integer dtype (2.5 or 300 for uint8 is
 *                  an error rather than a silent truncation or wrap); any
 *                  value is fine for float dtypes (rounded to the dtype) and
 *                  for bool (non-zero is True).
 *
 * Errors are MT_ERR_TYPE for dtypes and attributes and MT_ERR_SHAPE for
 * shapes, reported at the operator or call (c->loc).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/infer.h"
#include "support/common.h"
#include "support/cnum.h"
#include "support/strbuf.h"

static bool is_weak(const mt_gvar *v) { return v->is_const && v->weak; }

/* A weak int literal where a bool is wanted becomes a bool constant. */
static void settle_to_bool(mt_infer_ctx *c, int i) {
    mt_gvar *v = c->args[i];
    if (is_weak(v) && !mt_dtype_is_float(v->type.dtype))
        c->args[i] = mt_settle_const(c, v, MT_BOOL, v);
}

/* NumPy broadcasting of n operands' shapes (dtype of the result: the
 * first's). Dims agree when equal or when one is the constant 1; a symbolic
 * dim agrees with itself and with 1. */
static mt_gtype broadcast_n(mt_infer_ctx *c, mt_gvar *const *vs, int n) {
    mt_gtype r = mt_gtype_scalar(vs[0]->type.dtype);
    for (int k = 0; k < n; k++)
        if (vs[k]->type.ndim > r.ndim) r.ndim = vs[k]->type.ndim;
    const mt_dim one = {1, NULL};
    for (int i = 0; i < r.ndim; i++) {
        mt_dim d = one;
        for (int k = 0; k < n; k++) {
            const mt_gtype *t = &vs[k]->type;
            int j = t->ndim - r.ndim + i;
            mt_dim dk = j >= 0 ? t->dims[j] : one;
            if (mt_dim_equal(d, dk) || (!dk.sym && dk.value == 1)) continue;
            if (!d.sym && d.value == 1) {
                d = dk;
                continue;
            }
            mt_sb shapes, names;
            mt_sb_init(&shapes, c->arena);
            mt_sb_init(&names, c->arena);
            for (int m = 0; m < n; m++) {
                const char *sep = m == 0 ? "" : m == n - 1 ? " and " : ", ";
                mt_sb_printf(&shapes, "%s%s", sep, mt_shape_str(c->arena, &vs[m]->type));
                mt_sb_printf(&names, "%s%s", sep, mt_describe_value(c->arena, vs[m]));
            }
            mt_fail(MT_ERR_SHAPE, c->loc, "cannot broadcast shapes %s in '%s' (operands %s)",
                    mt_sb_str(&shapes), c->op->name, mt_sb_str(&names));
        }
        r.dims[i] = d;
    }
    return r;
}

/* ---- gelu ------------------------------------------------------------------- */

/* approximate= was checked by the builder (none or tanh) */
mt_gtype infer_gelu(mt_infer_ctx *c) { return infer_unary_float(c); }

/* ---- comparisons ------------------------------------------------------------ */

static mt_gtype compare(mt_infer_ctx *c, bool allow_bool) {
    mt_check_arity(c, 2);
    mt_dtype dt = mt_unify_dtypes(c, 0, 1);
    if (dt == MT_BOOL && !allow_bool)
        mt_fail(MT_ERR_TYPE, c->loc, "'%s' is not defined on bool tensors; convert with astype",
                c->op->name);
    mt_gtype r = mt_broadcast_types(c, c->args[0], c->args[1]);
    r.dtype = MT_BOOL;
    return r;
}

mt_gtype infer_compare_eq(mt_infer_ctx *c) { return compare(c, true); }
mt_gtype infer_compare_order(mt_infer_ctx *c) { return compare(c, false); }

/* ---- logic ------------------------------------------------------------------ */

static void require_bool(mt_infer_ctx *c, const mt_gvar *v, const char *what) {
    if (v->type.dtype != MT_BOOL)
        mt_fail(MT_ERR_TYPE, c->loc, "'%s' needs %s, but %s is %s", c->op->name, what,
                mt_describe_value(c->arena, v), mt_dtype_str(v->type.dtype));
}

mt_gtype infer_logical_binary(mt_infer_ctx *c) {
    mt_check_arity(c, 2);
    for (int i = 0; i < 2; i++)
        if (!is_weak(c->args[i])) require_bool(c, c->args[i], "bool tensors");
    settle_to_bool(c, 0);
    settle_to_bool(c, 1);
    for (int i = 0; i < 2; i++) require_bool(c, c->args[i], "bool tensors");
    mt_gtype r = mt_broadcast_types(c, c->args[0], c->args[1]);
    r.dtype = MT_BOOL;
    return r;
}

mt_gtype infer_logical_not(mt_infer_ctx *c) {
    mt_check_arity(c, 1);
    settle_to_bool(c, 0);
    require_bool(c, c->args[0], "a bool tensor");
    return c->args[0]->type;
}

/* ---- where ------------------------------------------------------------------ */

mt_gtype infer_where(mt_infer_ctx *c) {
    mt_check_arity(c, 3);
    settle_to_bool(c, 0);
    const mt_gvar *cond = c->args[0];
    if (cond->type.dtype != MT_BOOL)
        mt_fail(MT_ERR_TYPE, c->loc, "condition of 'where' must be a bool tensor, but %s is %s",
                mt_describe_value(c->arena, cond), mt_dtype_str(cond->type.dtype));
    mt_dtype dt = mt_unify_dtypes(c, 1, 2);
    mt_gtype r = broadcast_n(c, c->args, 3);
    r.dtype = dt;
    return r;
}

/* ---- astype ----------------------------------------------------------------- */

mt_gtype infer_astype(mt_infer_ctx *c) {
    mt_check_arity(c, 1);
    mt_gvar *x = c->args[0];
    if (is_weak(x)) c->args[0] = x = mt_settle_const(c, x, x->type.dtype, x);
    if (!c->attrs->has_dtype) mt_ice("astype without a dtype");
    mt_gtype r = x->type;
    r.dtype = c->attrs->dtype;
    return r;
}

/* ---- creation --------------------------------------------------------------- */

mt_gtype infer_creation(mt_infer_ctx *c) {
    mt_check_arity(c, 0);
    const mt_gattrs *at = c->attrs;
    if (!at->has_dtype) mt_ice("'%s' without a dtype", c->op->name);
    mt_gtype r = mt_gtype_scalar(at->dtype);
    r.ndim = at->nshape;
    for (int i = 0; i < at->nshape; i++) {
        mt_dim d = at->shape[i];
        if (!d.sym && d.value < 0)
            mt_fail(MT_ERR_SHAPE, c->loc, "%s: dimension %lld is not allowed", c->op->name,
                    (long long)d.value);
        r.dims[i] = d;
    }
    return r;
}

/* Whether v converts to integer dtype dt without loss. */
static bool int_representable(double v, mt_dtype dt) {
    if (v != trunc(v)) return false; /* also NaN and the infinities */
    switch (dt) {
    case MT_INT8: return v >= -128 && v <= 127;
    case MT_UINT8: return v >= 0 && v <= 255;
    case MT_INT32: return v >= -2147483648.0 && v <= 2147483647.0;
    case MT_INT64: return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
    default: return true;
    }
}

/* v as the user would write it: 300, -1, 2.5, 0.1, 1e+20. */
static const char *shortest(mt_arena *a, double v) {
    char buf[32];
    if (v == trunc(v) && fabs(v) < 1e16) return mt_arena_printf(a, "%.0f", v);
    for (int p = 1; p < 17; p++) {
        mt_c_snprintf(buf, sizeof buf, "%.*g", p, v);
        if (mt_c_strtod(buf, NULL) == v) return mt_arena_strdup(a, buf);
    }
    return mt_arena_printf(a, "%.17g", v);
}

mt_gtype infer_full(mt_infer_ctx *c) {
    mt_gtype r = infer_creation(c);
    const mt_gattrs *at = c->attrs;
    if (!at->has_value) mt_ice("'full' without a fill value");
    if (mt_dtype_is_int(r.dtype) && !int_representable(at->value, r.dtype))
        mt_fail(MT_ERR_TYPE, c->loc, "fill value %s of 'full' is not representable as %s",
                shortest(c->arena, at->value), mt_dtype_str(r.dtype));
    return r;
}
