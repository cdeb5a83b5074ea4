/*
 * ops.c -- the op registry (rows from graph/ops.def) and the shape/dtype rules.
 *
 * Broadcasting follows NumPy: shapes are aligned at their last dim; two dims
 * agree when equal or when one is 1; the result takes the larger. A symbolic
 * dim agrees with itself and with 1, nothing else (its size is unknown until
 * the kernel runs).
 *
 * Dtypes: the two tensor operands of a binary op must have the same dtype
 * (no implicit promotion; the user writes astype). A weak literal takes the
 * tensor operand's dtype: `x * 2` keeps x's dtype; a float literal with an
 * integer tensor is an error. Two literals: int with int is int32, anything
 * with a float is float32.
 */
#include <string.h>

#include "graph/graph.h"
#include "support/common.h"

enum infer_rule { BINARY_ARITH, UNARY_SAME, UNARY_FLOAT, TRUE_DIV };

static const struct {
    mt_op_def def;
    enum infer_rule rule;
} table[] = {
#define MT_OP(id, name, arity, pattern, infer, compute) {{MT_OP_##id, name, arity, pattern}, infer},
#include "graph/ops.def"
#undef MT_OP
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

static const char *describe(mt_arena *a, const mt_gvar *v) {
    if (v->is_const) return v->weak ? "a literal" : mt_arena_printf(a, "a %s constant", mt_dtype_str(v->type.dtype));
    return mt_arena_printf(a, "'%s'", v->name);
}

/* A weak constant re-made with dtype `dt`. */
static mt_gvar *settle_const(mt_arena *a, const mt_op_def *op, mt_gvar *c, mt_dtype dt,
                             const mt_gvar *other, mt_loc loc) {
    if (!c->is_const || !c->weak) return c;
    bool lit_float = mt_dtype_is_float(c->type.dtype);
    if (lit_float && !mt_dtype_is_float(dt))
        mt_fail(MT_ERR_TYPE, c->loc.line ? c->loc : loc,
                "float literal used with %s tensor %s in '%s'; convert with astype first",
                mt_dtype_str(dt), describe(a, other), op->name);
    if (lit_float) return mt_gvar_const_float(a, dt, c->fconst, false, c->loc);
    if (mt_dtype_is_float(dt)) return mt_gvar_const_float(a, dt, (double)c->iconst, false, c->loc);
    return mt_gvar_const_int(a, dt, c->iconst, false, c->loc);
}

static mt_gtype broadcast(mt_arena *a, const mt_op_def *op, const mt_gvar *x, const mt_gvar *y,
                          mt_loc loc) {
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
            mt_fail(MT_ERR_SHAPE, loc,
                    "cannot broadcast shapes %s and %s in '%s' (operands %s and %s)",
                    mt_shape_str(a, tx), mt_shape_str(a, ty), op->name, describe(a, x),
                    describe(a, y));
        }
    }
    return r;
}

mt_gtype mt_op_infer(mt_arena *a, const mt_op_def *op, mt_gvar **args, int nargs, mt_loc loc) {
    if (nargs != op->arity)
        mt_fail(MT_ERR_TYPE, loc, "'%s' takes %d argument%s, got %d", op->name, op->arity,
                op->arity == 1 ? "" : "s", nargs);
    enum infer_rule rule = table[op->id].rule;
    if (rule == UNARY_SAME || rule == UNARY_FLOAT) {
        mt_gvar *x = args[0];
        if (x->is_const && x->weak) /* a literal alone: int32 or float32 */
            args[0] = x = settle_const(a, op, x, x->type.dtype, x, loc);
        if (rule == UNARY_FLOAT && !mt_dtype_is_float(x->type.dtype))
            mt_fail(MT_ERR_TYPE, loc, "'%s' needs a float tensor, but %s is %s; convert with astype",
                    op->name, describe(a, x), mt_dtype_str(x->type.dtype));
        if (x->type.dtype == MT_BOOL && op->id != MT_OP_RELU)
            mt_fail(MT_ERR_TYPE, loc, "'%s' is not defined on bool tensors", op->name);
        return x->type;
    }

    /* binary */
    mt_gvar *x = args[0], *y = args[1];
    bool wx = x->is_const && x->weak, wy = y->is_const && y->weak;
    mt_dtype dt;
    if (wx && wy)
        dt = mt_dtype_is_float(x->type.dtype) || mt_dtype_is_float(y->type.dtype) ? MT_FLOAT32 : MT_INT32;
    else if (wx)
        dt = y->type.dtype;
    else if (wy)
        dt = x->type.dtype;
    else if (x->type.dtype != y->type.dtype)
        mt_fail(MT_ERR_TYPE, loc,
                "operands of '%s' have different dtypes: %s is %s but %s is %s; convert one with astype",
                op->name, describe(a, x), mt_dtype_str(x->type.dtype), describe(a, y),
                mt_dtype_str(y->type.dtype));
    else
        dt = x->type.dtype;
    if (dt == MT_BOOL)
        mt_fail(MT_ERR_TYPE, loc, "'%s' is not defined on bool tensors; convert with astype", op->name);
    args[0] = x = settle_const(a, op, x, dt, y, loc);
    args[1] = y = settle_const(a, op, y, dt, x, loc);
    mt_gtype r = broadcast(a, op, x, y, loc);
    r.dtype = dt;
    if (rule == TRUE_DIV && !mt_dtype_is_float(dt)) r.dtype = MT_FLOAT32;
    return r;
}
