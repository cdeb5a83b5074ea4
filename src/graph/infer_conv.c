/*
 * infer_conv.c -- shape/dtype rules of conv2d, max_pool2d, avg_pool2d and
 * adaptive_avg_pool2d (rows in graph/ops_nn.def). docs/ops_nn.md states
 * their semantics.
 *
 * Layouts are PyTorch's: the input is NCHW (batch, channels, height,
 * width), conv2d's weight OIHW (out channels, in channels per group, kernel
 * height, kernel width). Every window parameter (kernel_size, stride,
 * padding, dilation, output_size) is an int or an (h, w) pair (the builder
 * fills both entries, graph/builder_call.c). The output size along one axis
 * of size n is PyTorch's (floor mode):
 *
 *     out = (n + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
 *
 * which needs the effective kernel, dilation * (kernel - 1) + 1, to fit in
 * the padded input. Channels and spatial dims must be constants (the output
 * size is an expression of them, which a type cannot hold for a symbol);
 * the batch may be a symbol and carries over to the output.
 *
 * Pools take kernel_size, stride (None: kernel_size) and padding, which may
 * be at most half the kernel (PyTorch's rule: every window then holds at
 * least one element of the input). adaptive_avg_pool2d takes output_size
 * only. Dtypes: conv2d and the average pools need float32 or float64 (both
 * operands of conv2d the same); max_pool2d any float dtype.
 *
 * Every error is a user error at the call's '(' (c->loc) naming the values
 * and the shapes involved.
 */
#include "graph/infer.h"
#include "support/common.h"

static const char *const axis_name[2] = {"height", "width"};

/* x settled (a literal becomes a float32 constant: then rank 0, refused). */
static mt_gvar *settle(mt_infer_ctx *c, int k) {
    mt_gvar *x = c->args[k];
    if (x->is_const && x->weak) c->args[k] = x = mt_settle_const(c, x, MT_FLOAT32, x);
    return x;
}

static void require_rank4(mt_infer_ctx *c, const mt_gvar *v, const char *layout) {
    if (v->type.ndim != 4)
        mt_fail(MT_ERR_SHAPE, c->loc, "'%s' needs a 4-D %s, but %s has shape %s", c->op->name, layout,
                mt_describe_value(c->arena, v), mt_shape_str(c->arena, &v->type));
}

/* float32/float64 (float16 and bfloat16 too when half_ok). */
static void require_float(mt_infer_ctx *c, const mt_gvar *v, bool half_ok) {
    mt_dtype dt = v->type.dtype;
    if (!mt_dtype_is_float(dt))
        mt_fail(MT_ERR_TYPE, c->loc, "'%s' needs a float tensor, but %s is %s; convert with astype",
                c->op->name, mt_describe_value(c->arena, v), mt_dtype_str(dt));
    if (mt_dtype_is_half(dt) && !half_ok)
        mt_fail(MT_ERR_UNSUPPORTED, c->loc, "'%s' of %s is not supported yet; convert %s with astype",
                c->op->name, mt_dtype_str(dt), mt_describe_value(c->arena, v));
}

/* Dims from `from` on must be constants. */
static void require_const_dims(mt_infer_ctx *c, const mt_gvar *v, int from) {
    for (int d = from; d < v->type.ndim; d++)
        if (v->type.dims[d].sym)
            mt_fail(MT_ERR_UNSUPPORTED, c->loc,
                    "'%s' needs constant channel and spatial dimensions, but %s has shape %s",
                    c->op->name, mt_describe_value(c->arena, v), mt_shape_str(c->arena, &v->type));
}

static void require_positive(mt_infer_ctx *c, const char *what, const int64_t *v) {
    if (v[0] < 1 || v[1] < 1)
        mt_fail(MT_ERR_SHAPE, c->loc, "%s of '%s' must be positive, got (%lld, %lld)", what, c->op->name,
                (long long)v[0], (long long)v[1]);
}

static void require_padding(mt_infer_ctx *c, const int64_t *p) {
    if (p[0] < 0 || p[1] < 0)
        mt_fail(MT_ERR_SHAPE, c->loc, "padding of '%s' must be non-negative, got (%lld, %lld)", c->op->name,
                (long long)p[0], (long long)p[1]);
}

/* The output size along axis d of x: the window must fit the padded input. */
static int64_t out_size(mt_infer_ctx *c, const mt_gvar *x, int d, int64_t k, int64_t s, int64_t p,
                        int64_t dil) {
    int64_t n = x->type.dims[2 + d].value, eff = dil * (k - 1) + 1;
    if (eff > n + 2 * p)
        mt_fail(MT_ERR_SHAPE, c->loc,
                "the window of '%s' spans %lld along the %s%s, more than the padded input: %s has %lld and padding %lld on each side",
                c->op->name, (long long)eff, axis_name[d],
                dil > 1 ? mt_arena_printf(c->arena, " (kernel %lld, dilation %lld)", (long long)k, (long long)dil) : "",
                mt_describe_value(c->arena, x), (long long)n, (long long)p);
    return (n + 2 * p - eff) / s + 1;
}

mt_gtype infer_conv2d(mt_infer_ctx *c) {
    mt_check_arity(c, 2);
    mt_gvar *x = settle(c, 0), *w = settle(c, 1);
    mt_arena *a = c->arena;
    require_rank4(c, x, "input (N, C, H, W)");
    require_rank4(c, w, "weight (O, C / groups, KH, KW)");
    require_float(c, x, false);
    if (w->type.dtype != x->type.dtype)
        mt_fail(MT_ERR_TYPE, c->loc,
                "operands of 'conv2d' have different dtypes: %s is %s but %s is %s; convert one with astype",
                mt_describe_value(a, x), mt_dtype_str(x->type.dtype), mt_describe_value(a, w),
                mt_dtype_str(w->type.dtype));
    require_const_dims(c, x, 1);
    require_const_dims(c, w, 0);
    const mt_gattrs *at = c->attrs;
    require_positive(c, "stride", at->stride);
    require_positive(c, "dilation", at->dilation);
    require_padding(c, at->padding);
    int64_t g = at->groups, cin = x->type.dims[1].value, cout = w->type.dims[0].value;
    if (g < 1) mt_fail(MT_ERR_SHAPE, c->loc, "groups of 'conv2d' must be positive, got %lld", (long long)g);
    if (cin % g || cout % g)
        mt_fail(MT_ERR_SHAPE, c->loc,
                "groups=%lld of 'conv2d' must divide the input channels (%lld, of %s) and the output channels (%lld, of %s)",
                (long long)g, (long long)cin, mt_describe_value(a, x), (long long)cout, mt_describe_value(a, w));
    if (w->type.dims[1].value * g != cin)
        mt_fail(MT_ERR_SHAPE, c->loc,
                "the weight of 'conv2d' must have %lld input channels per group (%lld channels in %lld groups), but %s has shape %s",
                (long long)(cin / g), (long long)cin, (long long)g, mt_describe_value(a, w),
                mt_shape_str(a, &w->type));
    mt_gtype r = x->type;
    r.dims[1] = (mt_dim){cout, NULL};
    for (int d = 0; d < 2; d++)
        r.dims[2 + d] = (mt_dim){out_size(c, x, d, w->type.dims[2 + d].value, at->stride[d], at->padding[d],
                                          at->dilation[d]), NULL};
    return r;
}

/* max_pool2d, avg_pool2d. */
mt_gtype infer_pool2d(mt_infer_ctx *c) {
    mt_check_arity(c, 1);
    mt_gvar *x = settle(c, 0);
    require_rank4(c, x, "input (N, C, H, W)");
    require_float(c, x, c->op->id == MT_OP_MAX_POOL2D);
    require_const_dims(c, x, 2);
    const mt_gattrs *at = c->attrs;
    require_positive(c, "kernel_size", at->size);
    const int64_t *s = at->stride[0] || at->stride[1] ? at->stride : at->size;
    require_positive(c, "stride", s);
    require_padding(c, at->padding);
    for (int d = 0; d < 2; d++)
        if (2 * at->padding[d] > at->size[d])
            mt_fail(MT_ERR_SHAPE, c->loc,
                    "padding of '%s' must be at most half the kernel, but the %s has padding %lld and kernel %lld",
                    c->op->name, axis_name[d], (long long)at->padding[d], (long long)at->size[d]);
    mt_gtype r = x->type;
    for (int d = 0; d < 2; d++)
        r.dims[2 + d] = (mt_dim){out_size(c, x, d, at->size[d], s[d], at->padding[d], 1), NULL};
    return r;
}

mt_gtype infer_adaptive_pool2d(mt_infer_ctx *c) {
    mt_check_arity(c, 1);
    mt_gvar *x = settle(c, 0);
    require_rank4(c, x, "input (N, C, H, W)");
    require_float(c, x, false);
    require_const_dims(c, x, 2);
    require_positive(c, "output_size", c->attrs->size);
    for (int d = 0; d < 2; d++)
        if (x->type.dims[2 + d].value == 0)
            mt_fail(MT_ERR_SHAPE, c->loc, "'%s' needs a non-empty input, but %s has shape %s", c->op->name,
                    mt_describe_value(c->arena, x), mt_shape_str(c->arena, &x->type));
    mt_gtype r = x->type;
    for (int d = 0; d < 2; d++) r.dims[2 + d] = (mt_dim){c->attrs->size[d], NULL};
    return r;
}
