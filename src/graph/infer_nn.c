/*
 * infer_nn.c -- shape/dtype rules of the reductions, matmul, softmax,
 * log_softmax and layer_norm (rows in graph/ops_nn.def).
 *
 * Reductions (sum mean max min prod argmax argmin). `axis` is None (every
 * dim), an int or a tuple of ints, each in [-rank, rank); negative axes count
 * from the end; naming one dim twice is an error (NumPy's rule). A reduced dim
 * is dropped, or kept with size 1 under keepdims=True. A rank-0 tensor has no
 * axis to name, so only axis=None (or the empty tuple) is allowed for it.
 * Dtypes: sum, prod, max and min keep x's dtype (integers accumulate in it and
 * wrap around); mean of an integer tensor is float32; argmax/argmin give int64
 * and take one axis or None. Bool tensors are rejected: NumPy would promote
 * them to integers, we ask for an astype.
 *
 * matmul follows numpy.matmul: (m, k) @ (k, n) -> (m, n); a 1-D left operand
 * is a row vector whose dim is removed from the result, a 1-D right operand a
 * column vector likewise (so vector @ vector is rank 0); operands of rank 3 or
 * more are stacks of matrices whose leading (batch) dims broadcast as in
 * NumPy. The inner dims must be equal: the same constant or the same symbol.
 * Both operands have one dtype, not bool.
 *
 * softmax/log_softmax keep x's shape and dtype (a float dtype) and take one
 * axis. layer_norm(x, gamma, beta) normalizes over the trailing gamma.ndim
 * dims of x; gamma and beta must have exactly those dims and x's dtype.
 *
 * Every error is a user error at the call (c->loc) naming the values and
 * shapes involved.
 */
#include <math.h>
#include <string.h>

#include "graph/infer.h"
#include "support/common.h"

/* x settled: a literal alone becomes an int32/float32 constant. */
static mt_gvar *settle_x(mt_infer_ctx *c, int k) {
    mt_gvar *x = c->args[k];
    if (x->is_const && x->weak) c->args[k] = x = mt_settle_const(c, x, x->type.dtype, x);
    return x;
}

static void reject_bool(mt_infer_ctx *c, const mt_gvar *x) {
    if (x->type.dtype == MT_BOOL)
        mt_fail(MT_ERR_TYPE, c->loc, "'%s' is not defined on bool tensors; convert with astype",
                c->op->name);
}

static void require_float(mt_infer_ctx *c, const mt_gvar *x) {
    if (!mt_dtype_is_float(x->type.dtype))
        mt_fail(MT_ERR_TYPE, c->loc, "'%s' needs a float tensor, but %s is %s; convert with astype",
                c->op->name, mt_describe_value(c->arena, x), mt_dtype_str(x->type.dtype));
}

/* An axis in [-ndim, ndim), normalized; rank 0 has none. */
static int strict_axis(mt_infer_ctx *c, int64_t axis, int ndim) {
    if (axis < -ndim || axis >= ndim)
        mt_fail(MT_ERR_SHAPE, c->loc, "axis %lld is out of range for a tensor of rank %d in '%s'",
                (long long)axis, ndim, c->op->name);
    return (int)(axis < 0 ? axis + ndim : axis);
}

static const char *axes_str(mt_arena *a, const mt_gattrs *at) {
    const char *s = "(";
    for (int i = 0; i < at->naxes; i++)
        s = mt_arena_printf(a, "%s%s%lld", s, i ? ", " : "", (long long)at->axes[i]);
    return mt_arena_printf(a, "%s%s)", s, at->naxes == 1 ? "," : "");
}

/* The reduced dims of x (reduced[d]), checking the axes. */
static void reduced_dims(mt_infer_ctx *c, const mt_gvar *x, bool *reduced) {
    const mt_gattrs *at = c->attrs;
    int nd = x->type.ndim;
    for (int d = 0; d < nd; d++) reduced[d] = !at->has_axes;
    if (!at->has_axes) return;
    for (int i = 0; i < at->naxes; i++) {
        int d = strict_axis(c, at->axes[i], nd);
        if (reduced[d])
            mt_fail(MT_ERR_SHAPE, c->loc, "duplicate axis %d in '%s' (axis=%s for a tensor of rank %d)",
                    d, c->op->name, axes_str(c->arena, at), nd);
        reduced[d] = true;
    }
}

static mt_gtype reduced_type(mt_infer_ctx *c, const mt_gvar *x, mt_dtype dt) {
    bool reduced[MT_MAX_RANK];
    reduced_dims(c, x, reduced);
    mt_gtype r = mt_gtype_scalar(dt);
    for (int d = 0; d < x->type.ndim; d++) {
        if (!reduced[d])
            r.dims[r.ndim++] = x->type.dims[d];
        else if (c->attrs->keepdims)
            r.dims[r.ndim++] = (mt_dim){1, NULL};
    }
    return r;
}

/* sum, max, min, prod: x's dtype. */
mt_gtype infer_reduce(mt_infer_ctx *c) {
    mt_check_arity(c, 1);
    mt_gvar *x = settle_x(c, 0);
    reject_bool(c, x);
    return reduced_type(c, x, x->type.dtype);
}

/* mean: x's dtype for floats, float32 for integers. */
mt_gtype infer_mean(mt_infer_ctx *c) {
    mt_check_arity(c, 1);
    mt_gvar *x = settle_x(c, 0);
    reject_bool(c, x);
    return reduced_type(c, x, mt_dtype_is_float(x->type.dtype) ? x->type.dtype : MT_FLOAT32);
}

/* argmax, argmin: one axis or None; int64. */
mt_gtype infer_argreduce(mt_infer_ctx *c) {
    mt_check_arity(c, 1);
    mt_gvar *x = settle_x(c, 0);
    reject_bool(c, x);
    if (c->attrs->has_axes && c->attrs->naxes != 1)
        mt_fail(MT_ERR_TYPE, c->loc, "'axis' of '%s' must be an integer or None, not a tuple of %d",
                c->op->name, c->attrs->naxes);
    return reduced_type(c, x, MT_INT64);
}

/* ---- matmul ------------------------------------------------------------------ */

static const char *dim_str(mt_arena *a, mt_dim d) {
    return d.sym ? d.sym : mt_arena_printf(a, "%lld", (long long)d.value);
}

mt_gtype infer_matmul(mt_infer_ctx *c) {
    mt_check_arity(c, 2);
    mt_dtype dt = mt_unify_dtypes(c, 0, 1);
    const mt_gvar *x = c->args[0], *y = c->args[1];
    const mt_gtype *ta = &x->type, *tb = &y->type;
    for (int k = 0; k < 2; k++) {
        const mt_gvar *v = c->args[k];
        if (v->type.ndim == 0)
            mt_fail(MT_ERR_SHAPE, c->loc, "'matmul' needs operands of rank 1 or more, but %s has rank 0",
                    mt_describe_value(c->arena, v));
    }
    reject_bool(c, x);
    mt_dim ka = ta->dims[ta->ndim - 1];
    mt_dim kb = tb->dims[tb->ndim >= 2 ? tb->ndim - 2 : 0];
    if (!mt_dim_equal(ka, kb))
        mt_fail(MT_ERR_SHAPE, c->loc,
                "inner dimensions of 'matmul' do not match: %s has shape %s and %s has shape %s (%s vs %s)",
                mt_describe_value(c->arena, x), mt_shape_str(c->arena, ta),
                mt_describe_value(c->arena, y), mt_shape_str(c->arena, tb), dim_str(c->arena, ka),
                dim_str(c->arena, kb));

    /* batch dims: all but the last two of each operand, broadcast */
    int ba = ta->ndim > 2 ? ta->ndim - 2 : 0, bb = tb->ndim > 2 ? tb->ndim - 2 : 0;
    int nb = ba > bb ? ba : bb;
    mt_gtype r = mt_gtype_scalar(dt);
    for (int i = 0; i < nb; i++) {
        int ia = ba - nb + i, ib = bb - nb + i;
        mt_dim one = {1, NULL};
        mt_dim da = ia >= 0 ? ta->dims[ia] : one, db = ib >= 0 ? tb->dims[ib] : one;
        if (mt_dim_equal(da, db) || (!db.sym && db.value == 1))
            r.dims[r.ndim++] = da;
        else if (!da.sym && da.value == 1)
            r.dims[r.ndim++] = db;
        else
            mt_fail(MT_ERR_SHAPE, c->loc,
                    "cannot broadcast the batch dimensions of 'matmul': %s has shape %s and %s has shape %s",
                    mt_describe_value(c->arena, x), mt_shape_str(c->arena, ta),
                    mt_describe_value(c->arena, y), mt_shape_str(c->arena, tb));
    }
    if (ta->ndim >= 2) r.dims[r.ndim++] = ta->dims[ta->ndim - 2];
    if (tb->ndim >= 2) r.dims[r.ndim++] = tb->dims[tb->ndim - 1];
    return r;
}

/* ---- softmax, layer_norm ----------------------------------------------------- */

mt_gtype infer_softmax(mt_infer_ctx *c) {
    mt_check_arity(c, 1);
    mt_gvar *x = settle_x(c, 0);
    require_float(c, x);
    strict_axis(c, c->attrs->naxes ? c->attrs->axes[0] : -1, x->type.ndim);
    return x->type;
}

/* Does t equal the trailing dims of x? */
static bool is_trailing(const mt_gtype *x, const mt_gtype *t) {
    if (t->ndim > x->ndim) return false;
    for (int i = 0; i < t->ndim; i++)
        if (!mt_dim_equal(x->dims[x->ndim - t->ndim + i], t->dims[i])) return false;
    return true;
}

mt_gtype infer_layer_norm(mt_infer_ctx *c) {
    mt_check_arity(c, 3);
    mt_gvar *x = settle_x(c, 0);
    require_float(c, x);
    for (int k = 1; k < 3; k++) {
        mt_gvar *v = c->args[k] = mt_settle_const(c, c->args[k], x->type.dtype, x);
        if (v->type.dtype != x->type.dtype)
            mt_fail(MT_ERR_TYPE, c->loc,
                    "operands of 'layer_norm' have different dtypes: %s is %s but %s is %s; convert one with astype",
                    mt_describe_value(c->arena, x), mt_dtype_str(x->type.dtype),
                    mt_describe_value(c->arena, v), mt_dtype_str(v->type.dtype));
    }
    const mt_gvar *g = c->args[1], *b = c->args[2];
    if (g->type.ndim == 0 || !is_trailing(&x->type, &g->type))
        mt_fail(MT_ERR_SHAPE, c->loc,
                "gamma of 'layer_norm' must have the trailing dimensions of x (at least one): %s has shape %s and %s has shape %s",
                mt_describe_value(c->arena, g), mt_shape_str(c->arena, &g->type),
                mt_describe_value(c->arena, x), mt_shape_str(c->arena, &x->type));
    if (!mt_gtype_equal(&g->type, &b->type))
        mt_fail(MT_ERR_SHAPE, c->loc,
                "beta of 'layer_norm' must have the shape of gamma: %s has shape %s and %s has shape %s",
                mt_describe_value(c->arena, b), mt_shape_str(c->arena, &b->type),
                mt_describe_value(c->arena, g), mt_shape_str(c->arena, &g->type));
    double eps = c->attrs->has_value ? c->attrs->value : 1e-5;
    if (!(eps >= 0) || isinf(eps))
        mt_fail(MT_ERR_TYPE, c->loc, "eps of 'layer_norm' must be a finite number >= 0, got %g", eps);
    return x->type;
}
