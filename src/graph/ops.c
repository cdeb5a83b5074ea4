/*
 * ops.c -- the op registry (rows from graph/ops.def), the shared helpers of
 * the shape/dtype rules, and the rules of the elementwise ops.
 *
 * Broadcasting follows NumPy: shapes are aligned at their last dim; two dims
 * agree when equal or when one is 1; the result takes the larger. A symbolic
 * dim agrees with itself and with 1, nothing else (its size is unknown until
 * the kernel runs).
 *
 * Dtypes: the tensor operands of an op must have the same dtype (no implicit
 * promotion; the user writes astype). A weak literal takes the tensor
 * operand's dtype: `x * 2` keeps x's dtype; a float literal with an integer
 * tensor is an error. Two literals: int with int is int32, anything with a
 * float is float32.
 */
#include <stdint.h>
#include <string.h>

#include "frontend/ast.h"
#include "graph/infer.h"
#include "support/common.h"

static const struct {
    mt_op_def def;
    mt_infer_fn infer;
} table[] = {
#define MT_EWISE(id, name, sig, pattern, infer, compute) {{MT_OP_##id, name, sig, pattern, true}, infer},
#define MT_OP(id, name, sig, pattern, infer, legalize) {{MT_OP_##id, name, sig, pattern, false}, infer},
#include "graph/ops.def"
};

const mt_op_def *mt_op_get(mt_op_id id) {
    MT_ASSERT((unsigned)id < MT_OP_COUNT_);
    return &table[id].def;
}

const mt_op_def *mt_op_lookup(const char *name) {
    for (int i = 0; i < MT_OP_COUNT_; i++)
        if (strcmp(table[i].def.name, name) == 0) return &table[i].def;
    return NULL;
}

const char *mt_pattern_str(mt_op_pattern p) {
    static const char *names[] = {
#define MT_X_(k, s) s,
        MT_PATTERN_LIST(MT_X_)
#undef MT_X_
    };
    return (unsigned)p < MT_PAT_COUNT_ ? names[p] : "?";
}

mt_gtype mt_op_infer(mt_arena *a, const mt_op_def *op, mt_gvar **args, int nargs,
                     const mt_gattrs *attrs, mt_loc loc) {
    static const mt_gattrs none;
    mt_infer_ctx c = {a, op, args, nargs, attrs ? attrs : &none, loc};
    return table[op->id].infer(&c);
}

/* ---- shared helpers --------------------------------------------------------- */

const char *mt_describe_value(mt_arena *a, const mt_gvar *v) {
    if (v->is_const)
        return v->weak ? "a literal"
                       : mt_arena_printf(a, "%s %s constant", mt_dtype_is_int(v->type.dtype) ? "an" : "a",
                                         mt_dtype_str(v->type.dtype));
    if (v->temp && v->expr) return mt_arena_printf(a, "'%s'", mt_ast_unparse(a, v->expr, 60));
    return mt_arena_printf(a, "'%s'", v->name);
}

mt_gvar *mt_settle_const(mt_infer_ctx *c, mt_gvar *v, mt_dtype dt, const mt_gvar *other) {
    if (!v->is_const || !v->weak) return v;
    bool lit_float = mt_dtype_is_float(v->type.dtype);
    if (lit_float && !mt_dtype_is_float(dt))
        mt_fail(MT_ERR_TYPE, v->loc.line ? v->loc : c->loc,
                "float literal used with %s tensor %s in '%s'; convert with astype first",
                mt_dtype_str(dt), mt_describe_value(c->arena, other), c->op->name);
    if (dt == MT_BOOL) return mt_gvar_const_int(c->arena, dt, v->iconst != 0, false, v->loc);
    if (lit_float) return mt_gvar_const_float(c->arena, dt, v->fconst, false, v->loc);
    if (mt_dtype_is_float(dt)) return mt_gvar_const_float(c->arena, dt, (double)v->iconst, false, v->loc);
    /* NumPy (NEP 50) raises OverflowError for a Python int that the array's
     * dtype cannot hold; wrapping it (200 as int8 is -56) would compute with
     * another number than the one written */
    int64_t lo = mt_dtype_min(dt), hi = mt_dtype_max(dt);
    if (v->iconst < lo || v->iconst > hi)
        mt_fail(MT_ERR_TYPE, v->loc.line ? v->loc : c->loc,
                "integer literal %lld is out of range for %s tensor %s in '%s' (%lld to %lld); "
                "convert the tensor with astype first",
                (long long)v->iconst, mt_dtype_str(dt), mt_describe_value(c->arena, other), c->op->name,
                (long long)lo, (long long)hi);
    return mt_gvar_const_int(c->arena, dt, v->iconst, false, v->loc);
}

mt_dtype mt_unify_dtypes(mt_infer_ctx *c, int i, int j) {
    mt_gvar *x = c->args[i], *y = c->args[j];
    bool wx = x->is_const && x->weak, wy = y->is_const && y->weak;
    mt_dtype dt;
    if (wx && wy)
        dt = mt_dtype_is_float(x->type.dtype) || mt_dtype_is_float(y->type.dtype) ? MT_FLOAT32 : MT_INT32;
    else if (wx)
        dt = y->type.dtype;
    else if (wy)
        dt = x->type.dtype;
    else if (x->type.dtype != y->type.dtype)
        mt_fail(MT_ERR_TYPE, c->loc,
                "operands of '%s' have different dtypes: %s is %s but %s is %s; convert one with astype",
                c->op->name, mt_describe_value(c->arena, x), mt_dtype_str(x->type.dtype),
                mt_describe_value(c->arena, y), mt_dtype_str(y->type.dtype));
    else
        dt = x->type.dtype;
    c->args[i] = mt_settle_const(c, x, dt, y);
    c->args[j] = mt_settle_const(c, y, dt, x);
    return dt;
}

mt_gtype mt_broadcast_types(mt_infer_ctx *c, const mt_gvar *x, const mt_gvar *y) {
    const mt_gtype *tx = &x->type, *ty = &y->type;
    mt_gtype r = mt_gtype_scalar(tx->dtype);
    r.ndim = tx->ndim > ty->ndim ? tx->ndim : ty->ndim;
    for (int i = 0; i < r.ndim; i++) {
        int ix = tx->ndim - r.ndim + i, iy = ty->ndim - r.ndim + i;
        mt_dim one = {1, NULL};
        mt_dim dx = ix >= 0 ? tx->dims[ix] : one, dy = iy >= 0 ? ty->dims[iy] : one;
        if (mt_dim_equal(dx, dy) || (!dy.sym && dy.value == 1)) {
            r.dims[i] = dx;
        } else if (!dx.sym && dx.value == 1) {
            r.dims[i] = dy;
        } else {
            mt_fail(MT_ERR_SHAPE, c->loc,
                    "cannot broadcast shapes %s and %s in '%s' (operands %s and %s)",
                    mt_shape_str(c->arena, tx), mt_shape_str(c->arena, ty), c->op->name,
                    mt_describe_value(c->arena, x), mt_describe_value(c->arena, y));
        }
    }
    return r;
}

int mt_norm_axis(mt_infer_ctx *c, int64_t axis, int ndim) {
    if (axis < -ndim || axis >= (ndim > 0 ? ndim : 1) || (ndim == 0 && axis != 0 && axis != -1))
        mt_fail(MT_ERR_SHAPE, c->loc, "axis %lld is out of range for a tensor of rank %d in '%s'",
                (long long)axis, ndim, c->op->name);
    return (int)(axis < 0 ? axis + ndim : axis);
}

void mt_check_arity(mt_infer_ctx *c, int n) {
    if (c->nargs != n)
        mt_fail(MT_ERR_TYPE, c->loc, "'%s' takes %d tensor argument%s, got %d", c->op->name, n,
                n == 1 ? "" : "s", c->nargs);
}

/* ---- elementwise rules ------------------------------------------------------ */

static mt_gvar *settle_alone(mt_infer_ctx *c) {
    mt_gvar *x = c->args[0];
    if (x->is_const && x->weak) /* a literal alone: int32 or float32 */
        c->args[0] = x = mt_settle_const(c, x, x->type.dtype, x);
    return x;
}

mt_gtype infer_unary_float(mt_infer_ctx *c) {
    mt_check_arity(c, 1);
    mt_gvar *x = settle_alone(c);
    if (!mt_dtype_is_float(x->type.dtype))
        mt_fail(MT_ERR_TYPE, c->loc, "'%s' needs a float tensor, but %s is %s; convert with astype",
                c->op->name, mt_describe_value(c->arena, x), mt_dtype_str(x->type.dtype));
    return x->type;
}

mt_gtype infer_unary_signed(mt_infer_ctx *c) {
    mt_check_arity(c, 1);
    mt_gvar *x = settle_alone(c);
    if (x->type.dtype == MT_BOOL)
        mt_fail(MT_ERR_TYPE, c->loc, "'%s' is not defined on bool tensors; convert with astype",
                c->op->name);
    return x->type;
}

mt_gtype infer_binary_arith(mt_infer_ctx *c) {
    mt_check_arity(c, 2);
    mt_dtype dt = mt_unify_dtypes(c, 0, 1);
    if (dt == MT_BOOL)
        mt_fail(MT_ERR_TYPE, c->loc, "'%s' is not defined on bool tensors; convert with astype",
                c->op->name);
    mt_gtype r = mt_broadcast_types(c, c->args[0], c->args[1]);
    r.dtype = dt;
    return r;
}

/* True division: integers divide to float32 (as in PyTorch). */
mt_gtype infer_true_divide(mt_infer_ctx *c) {
    mt_gtype r = infer_binary_arith(c);
    if (!mt_dtype_is_float(r.dtype)) r.dtype = MT_FLOAT32;
    return r;
}

/* shape_dim(x, axis): the size of dim axis of x, as a rank-0 int64. */
mt_gtype infer_shape_dim(mt_infer_ctx *c) {
    mt_check_arity(c, 1);
    if (!c->attrs->has_axes || c->attrs->naxes != 1) mt_ice("shape_dim needs one axis");
    mt_norm_axis(c, c->attrs->axes[0], c->args[0]->type.ndim);
    return mt_gtype_scalar(MT_INT64);
}
