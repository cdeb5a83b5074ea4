/*
 * infer_shape.c -- shape rules of the shape ops: reshape, transpose,
 * expand_dims, squeeze, broadcast_to, concat, strided_slice (graph/ops_shape.def).
 *
 * All of them move elements without computing on them, so the dtype is the
 * input's and the work is in the dims. The rules follow NumPy, and what they
 * cannot decide at compile time they refuse with a message that names the
 * value and shows the shapes involved.
 *
 * Symbolic dims. A dim kept as it is keeps its symbol (transpose,
 * expand_dims, squeeze of other dims, broadcast_to onto the same symbol, a
 * full slice `:`). reshape compares sizes as products "constant * symbols":
 * both sides must have the same multiset of symbols and the same constant,
 * and a -1 takes what is left over, which must be a constant or exactly one
 * symbol (x of shape (n, 4) reshaped to (-1, 4) gives (n, 4); to (-1,) it
 * would need a dim n*4, which a type cannot hold, so that is an error).
 * Slicing a symbolic dim other than with `:` and concatenating along one are
 * "not supported yet": their sizes would be expressions of the symbols.
 *
 * Slices follow Python's slice.indices: bounds are clamped, negative bounds
 * count from the end, negative steps walk backwards, and an empty result is
 * allowed. An integer index must be in range (after adding the size to a
 * negative one) and drops its dim. mt_slice_indices below is the one
 * definition of that arithmetic; the legalizer (passes/graph/legalize_shape.c)
 * calls it too.
 */
#include <string.h>

#include "graph/infer.h"
#include "support/common.h"

/* The single tensor operand of a shape op. A literal alone becomes a
 * constant of its own dtype (int32 or float32). */
static mt_gvar *operand(mt_infer_ctx *c) {
    mt_check_arity(c, 1);
    mt_gvar *x = c->args[0];
    if (x->is_const && x->weak) c->args[0] = x = mt_settle_const(c, x, x->type.dtype, x);
    return x;
}

static bool is_one(mt_dim d) { return !d.sym && d.value == 1; }

/* "(1, 2)": axes as written, for messages. */
static const char *axes_str(mt_arena *a, const mt_gattrs *at) {
    mt_gtype t = mt_gtype_scalar(MT_INT64);
    t.ndim = at->naxes;
    for (int i = 0; i < at->naxes; i++) t.dims[i].value = at->axes[i];
    return mt_shape_str(a, &t);
}

/* "(2, -1, n)": the shape attribute as written. */
static const char *attr_shape_str(mt_arena *a, const mt_gattrs *at) {
    mt_gtype t = mt_gtype_scalar(MT_INT64);
    t.ndim = at->nshape;
    for (int i = 0; i < at->nshape; i++) t.dims[i] = at->shape[i];
    return mt_shape_str(a, &t);
}

/* ---- sizes as products of a constant and symbols ------------------------- */

typedef struct size {
    int64_t k;                     /* the constant factor */
    const char *syms[MT_MAX_RANK]; /* the symbolic factors, sorted by name */
    int nsyms;
} size;

static void size_mul(mt_infer_ctx *c, size *s, mt_dim d) {
    if (!d.sym) {
        if (!mt_mul_ok(s->k, d.value, &s->k))
            mt_fail(MT_ERR_LIMIT, c->loc, "the number of elements overflows in '%s'", c->op->name);
        return;
    }
    int i = s->nsyms++;
    while (i > 0 && strcmp(s->syms[i - 1], d.sym) > 0) {
        s->syms[i] = s->syms[i - 1];
        i--;
    }
    s->syms[i] = d.sym;
}

static size size_of(mt_infer_ctx *c, const mt_dim *dims, int n) {
    size s = {1, {0}, 0};
    for (int i = 0; i < n; i++) size_mul(c, &s, dims[i]);
    return s;
}

static bool size_equal(const size *x, const size *y) {
    if (x->k != y->k || x->nsyms != y->nsyms) return false;
    for (int i = 0; i < x->nsyms; i++)
        if (strcmp(x->syms[i], y->syms[i]) != 0) return false;
    return true;
}

/* "6", "n", "4*n*m". */
static const char *size_str(mt_arena *a, const size *s) {
    const char *r = s->nsyms && s->k == 1 ? "" : mt_arena_printf(a, "%lld", (long long)s->k);
    for (int i = 0; i < s->nsyms; i++) r = mt_arena_printf(a, "%s%s%s", r, *r ? "*" : "", s->syms[i]);
    return r;
}

/* ---- reshape --------------------------------------------------------------- */

mt_gtype infer_reshape(mt_infer_ctx *c) {
    mt_gvar *x = operand(c);
    const mt_gattrs *at = c->attrs;
    mt_arena *a = c->arena;
    mt_gtype r = x->type;
    r.ndim = at->nshape;
    size have = size_of(c, x->type.dims, x->type.ndim), want = {1, {0}, 0};
    int infer_at = -1;
    for (int i = 0; i < at->nshape; i++) {
        mt_dim d = at->shape[i];
        if (!d.sym && d.value == -1) {
            if (infer_at >= 0)
                mt_fail(MT_ERR_SHAPE, c->loc, "only one dimension can be -1 in 'reshape', but the shape is %s",
                        attr_shape_str(a, at));
            infer_at = i;
            continue;
        }
        if (!d.sym && d.value < 0)
            mt_fail(MT_ERR_SHAPE, c->loc, "dimension %lld in the shape of 'reshape' is negative",
                    (long long)d.value);
        size_mul(c, &want, d);
        r.dims[i] = d;
    }
    const char *what = mt_describe_value(a, x);
    if (infer_at < 0) {
        if (!size_equal(&have, &want))
            mt_fail(MT_ERR_SHAPE, c->loc, "cannot reshape %s of shape %s into shape %s (%s elements into %s)",
                    what, mt_shape_str(a, &x->type), attr_shape_str(a, at), size_str(a, &have),
                    size_str(a, &want));
        return r;
    }
    if (want.k == 0)
        mt_fail(MT_ERR_SHAPE, c->loc,
                "cannot infer the -1 in shape %s of 'reshape': the other dimensions have 0 elements",
                attr_shape_str(a, at));
    /* what is left of `have` after taking out `want`: the -1 */
    size left = have;
    bool fits = have.k % want.k == 0;
    left.k = have.k / want.k;
    for (int i = 0; i < want.nsyms && fits; i++) {
        int j = 0;
        while (j < left.nsyms && strcmp(left.syms[j], want.syms[i]) != 0) j++;
        if (j == left.nsyms) {
            fits = false;
            break;
        }
        memmove(&left.syms[j], &left.syms[j + 1], sizeof left.syms[0] * (size_t)(left.nsyms - j - 1));
        left.nsyms--;
    }
    if (!fits)
        mt_fail(MT_ERR_SHAPE, c->loc, "cannot reshape %s of shape %s into shape %s (%s elements into a multiple of %s)",
                what, mt_shape_str(a, &x->type), attr_shape_str(a, at), size_str(a, &have),
                size_str(a, &want));
    mt_dim d = {left.k, NULL};
    if (left.k != 0 && left.nsyms == 1 && left.k == 1) {
        d.value = -1;
        d.sym = left.syms[0];
    } else if (left.k != 0 && left.nsyms > 0) {
        mt_fail(MT_ERR_SHAPE, c->loc,
                "cannot reshape %s of shape %s into shape %s: the -1 would be %s, which is not a single dimension",
                what, mt_shape_str(a, &x->type), attr_shape_str(a, at), size_str(a, &left));
    }
    r.dims[infer_at] = d;
    return r;
}

/* ---- flatten ---------------------------------------------------------------
 * torch.flatten: dims start_dim..end_dim (inclusive, negative counting from
 * the end) become one; a rank-0 tensor is taken as rank 1. The merged size
 * must be a single dim: a constant, or one symbol times constants of 1. */

mt_gtype infer_flatten(mt_infer_ctx *c) {
    mt_gvar *x = operand(c);
    mt_arena *a = c->arena;
    int n = x->type.ndim > 0 ? x->type.ndim : 1;
    int64_t sd[2];
    for (int k = 0; k < 2; k++) {
        sd[k] = c->attrs->dims[k];
        if (sd[k] < -n || sd[k] >= n)
            mt_fail(MT_ERR_SHAPE, c->loc, "%s %lld of 'flatten' is out of range for a tensor of rank %d",
                    k ? "end_dim" : "start_dim", (long long)sd[k], x->type.ndim);
        if (sd[k] < 0) sd[k] += n;
    }
    if (sd[0] > sd[1])
        mt_fail(MT_ERR_SHAPE, c->loc, "start_dim of 'flatten' (%lld) comes after end_dim (%lld) for a tensor of rank %d",
                (long long)c->attrs->dims[0], (long long)c->attrs->dims[1], x->type.ndim);
    mt_gtype r = x->type;
    if (x->type.ndim == 0) {
        r.ndim = 1;
        r.dims[0] = (mt_dim){1, NULL};
        return r;
    }
    size merged = size_of(c, &x->type.dims[sd[0]], (int)(sd[1] - sd[0] + 1));
    mt_dim d = {merged.k, NULL};
    if (merged.nsyms == 1 && merged.k == 1) d = (mt_dim){-1, merged.syms[0]};
    else if (merged.nsyms > 0 && merged.k != 0)
        mt_fail(MT_ERR_SHAPE, c->loc,
                "cannot flatten dims %lld..%lld of %s of shape %s: the result would have %s elements, which is not a single dimension",
                (long long)sd[0], (long long)sd[1], mt_describe_value(a, x), mt_shape_str(a, &x->type),
                size_str(a, &merged));
    r.ndim = 0;
    for (int i = 0; i < x->type.ndim; i++) {
        if (i > sd[0] && i <= sd[1]) continue;
        r.dims[r.ndim++] = i == sd[0] ? d : x->type.dims[i];
    }
    return r;
}

/* ---- transpose ------------------------------------------------------------- */

mt_gtype infer_transpose(mt_infer_ctx *c) {
    mt_gvar *x = operand(c);
    const mt_gattrs *at = c->attrs;
    int n = x->type.ndim;
    mt_gtype r = x->type;
    if (!at->has_axes) {
        for (int d = 0; d < n; d++) r.dims[d] = x->type.dims[n - 1 - d];
        return r;
    }
    bool seen[MT_MAX_RANK] = {false}, perm = at->naxes == n;
    int ax[MT_MAX_RANK];
    for (int d = 0; d < at->naxes && perm; d++) {
        ax[d] = mt_norm_axis(c, at->axes[d], n);
        perm = !seen[ax[d]];
        seen[ax[d]] = true;
    }
    if (!perm)
        mt_fail(MT_ERR_SHAPE, c->loc, "axes %s of 'transpose' are not a permutation of the %d dims of %s",
                axes_str(c->arena, at), n, mt_describe_value(c->arena, x));
    for (int d = 0; d < n; d++) r.dims[d] = x->type.dims[ax[d]];
    return r;
}

/* ---- expand_dims, squeeze --------------------------------------------------- */

mt_gtype infer_expand_dims(mt_infer_ctx *c) {
    mt_gvar *x = operand(c);
    const mt_gattrs *at = c->attrs;
    if (!at->has_axes) mt_fail(MT_ERR_TYPE, c->loc, "'expand_dims' needs an axis (an integer or a tuple), not None");
    int rank = x->type.ndim + at->naxes;
    if (rank > MT_MAX_RANK)
        mt_fail(MT_ERR_LIMIT, c->loc, "tensor rank %d exceeds the limit of %d dimensions", rank, MT_MAX_RANK);
    bool added[MT_MAX_RANK] = {false};
    for (int i = 0; i < at->naxes; i++) {
        int d = mt_norm_axis(c, at->axes[i], rank);
        if (added[d]) mt_fail(MT_ERR_SHAPE, c->loc, "repeated axis %d in 'expand_dims'", d);
        added[d] = true;
    }
    mt_gtype r = x->type;
    r.ndim = rank;
    for (int d = 0, k = 0; d < rank; d++) {
        mt_dim one = {1, NULL};
        r.dims[d] = added[d] ? one : x->type.dims[k++];
    }
    return r;
}

mt_gtype infer_squeeze(mt_infer_ctx *c) {
    mt_gvar *x = operand(c);
    const mt_gattrs *at = c->attrs;
    int n = x->type.ndim;
    bool drop[MT_MAX_RANK] = {false};
    if (!at->has_axes) {
        for (int d = 0; d < n; d++) drop[d] = is_one(x->type.dims[d]);
    } else {
        for (int i = 0; i < at->naxes; i++) {
            int d = mt_norm_axis(c, at->axes[i], n);
            if (n == 0) continue; /* NumPy: axis 0 / -1 of a rank-0 value is allowed */
            if (drop[d]) mt_fail(MT_ERR_SHAPE, c->loc, "repeated axis %d in 'squeeze'", d);
            mt_dim dd = x->type.dims[d];
            if (!is_one(dd)) {
                const char *sz = dd.sym ? dd.sym : mt_arena_printf(c->arena, "%lld", (long long)dd.value);
                mt_fail(MT_ERR_SHAPE, c->loc, "cannot squeeze axis %d of %s (shape %s): its size is %s, not 1",
                        d, mt_describe_value(c->arena, x), mt_shape_str(c->arena, &x->type), sz);
            }
            drop[d] = true;
        }
    }
    mt_gtype r = x->type;
    r.ndim = 0;
    for (int d = 0; d < n; d++)
        if (!drop[d]) r.dims[r.ndim++] = x->type.dims[d];
    return r;
}

/* ---- broadcast_to ---------------------------------------------------------- */

mt_gtype infer_broadcast_to(mt_infer_ctx *c) {
    mt_gvar *x = operand(c);
    const mt_gattrs *at = c->attrs;
    mt_arena *a = c->arena;
    const mt_gtype *t = &x->type;
    mt_gtype r = *t;
    r.ndim = at->nshape;
    for (int i = 0; i < at->nshape; i++) {
        if (!at->shape[i].sym && at->shape[i].value < 0)
            mt_fail(MT_ERR_SHAPE, c->loc, "the shape %s of 'broadcast_to' has a negative dimension",
                    attr_shape_str(a, at));
        r.dims[i] = at->shape[i];
    }
    if (t->ndim > r.ndim)
        mt_fail(MT_ERR_SHAPE, c->loc, "cannot broadcast %s of shape %s to shape %s, which has fewer dimensions",
                mt_describe_value(a, x), mt_shape_str(a, t), attr_shape_str(a, at));
    for (int d = 0; d < t->ndim; d++) {
        int od = r.ndim - t->ndim + d;
        mt_dim xd = t->dims[d], td = r.dims[od];
        if (mt_dim_equal(xd, td) || is_one(xd)) continue;
        mt_fail(MT_ERR_SHAPE, c->loc,
                "cannot broadcast %s of shape %s to shape %s: dimension %d has size %s, which is neither %s nor 1",
                mt_describe_value(a, x), mt_shape_str(a, t), attr_shape_str(a, at), d,
                xd.sym ? xd.sym : mt_arena_printf(a, "%lld", (long long)xd.value),
                td.sym ? td.sym : mt_arena_printf(a, "%lld", (long long)td.value));
    }
    return r;
}

/* ---- concat ---------------------------------------------------------------- */

mt_gtype infer_concat(mt_infer_ctx *c) {
    mt_arena *a = c->arena;
    if (c->nargs == 0) mt_fail(MT_ERR_TYPE, c->loc, "'concat' needs at least one tensor");
    for (int k = 0; k < c->nargs; k++)
        if (c->args[k]->is_const)
            mt_fail(MT_ERR_TYPE, c->loc, "'concat' joins tensors, but argument %d is %s", k + 1,
                    mt_describe_value(a, c->args[k]));
    const mt_gvar *x0 = c->args[0];
    const mt_gtype *t0 = &x0->type;
    if (t0->ndim == 0)
        mt_fail(MT_ERR_SHAPE, c->loc, "'concat' cannot join rank-0 values (%s)", mt_describe_value(a, x0));
    int axis = mt_norm_axis(c, c->attrs->has_axes ? c->attrs->axes[0] : 0, t0->ndim);
    mt_gtype r = *t0;
    for (int k = 1; k < c->nargs; k++) {
        const mt_gvar *x = c->args[k];
        const mt_gtype *t = &x->type;
        if (t->dtype != t0->dtype)
            mt_fail(MT_ERR_TYPE, c->loc,
                    "tensors in 'concat' have different dtypes: %s is %s but %s is %s; convert one with astype",
                    mt_describe_value(a, x0), mt_dtype_str(t0->dtype), mt_describe_value(a, x),
                    mt_dtype_str(t->dtype));
        if (t->ndim != t0->ndim)
            mt_fail(MT_ERR_SHAPE, c->loc, "tensors in 'concat' have different ranks: %s has rank %d but %s has rank %d",
                    mt_describe_value(a, x0), t0->ndim, mt_describe_value(a, x), t->ndim);
        for (int d = 0; d < t->ndim; d++)
            if (d != axis && !mt_dim_equal(t->dims[d], t0->dims[d]))
                mt_fail(MT_ERR_SHAPE, c->loc,
                        "cannot concatenate %s of shape %s and %s of shape %s along axis %d: dimension %d differs",
                        mt_describe_value(a, x0), mt_shape_str(a, t0), mt_describe_value(a, x),
                        mt_shape_str(a, t), axis, d);
    }
    if (c->nargs == 1) return r;
    int64_t total = 0;
    for (int k = 0; k < c->nargs; k++) {
        mt_dim d = c->args[k]->type.dims[axis];
        if (d.sym)
            mt_fail(MT_ERR_UNSUPPORTED, c->loc,
                    "concatenating along a symbolic dimension is not supported yet (dimension %d of %s is %s)",
                    axis, mt_describe_value(a, c->args[k]), d.sym);
        if (__builtin_add_overflow(total, d.value, &total))
            mt_fail(MT_ERR_LIMIT, c->loc, "the number of elements overflows in 'concat'");
    }
    r.dims[axis].value = total;
    return r;
}

/* ---- strided_slice ---------------------------------------------------------- */

void mt_slice_indices(int64_t len, int64_t begin, int64_t end, int64_t step, int64_t *start,
                      int64_t *count) {
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? len : len - 1;
    int64_t b = step > 0 ? lo : hi, e = step > 0 ? hi : lo;
    int64_t *bound[2] = {&b, &e};
    int64_t given[2] = {begin, end};
    for (int i = 0; i < 2; i++) {
        int64_t v = given[i];
        if (v == MT_SLICE_OMITTED) continue;
        if (v < 0) {
            v += len;
            if (v < lo) v = lo;
        } else if (v > hi) {
            v = hi;
        }
        *bound[i] = v;
    }
    *start = b;
    if (step > 0)
        *count = e > b ? (e - b - 1) / step + 1 : 0;
    else
        *count = b > e ? (b - e - 1) / -step + 1 : 0;
}

mt_gtype infer_strided_slice(mt_infer_ctx *c) {
    mt_gvar *x = operand(c);
    const mt_gattrs *at = c->attrs;
    mt_arena *a = c->arena;
    const mt_gtype *t = &x->type;
    if (at->nslice > t->ndim)
        mt_fail(MT_ERR_SHAPE, c->loc, "too many indices for %s of rank %d: %d were given",
                mt_describe_value(a, x), t->ndim, at->nslice);
    mt_gtype r = *t;
    r.ndim = 0;
    for (int d = 0; d < t->ndim; d++) {
        mt_dim dim = t->dims[d];
        if (d >= at->nslice) {
            r.dims[r.ndim++] = dim;
            continue;
        }
        int64_t begin = at->begin[d], end = at->end[d], step = at->step[d];
        if (step == MT_SLICE_OMITTED) step = 1;
        if (step == 0) mt_fail(MT_ERR_SHAPE, c->loc, "slice step cannot be zero");
        if (dim.sym) {
            bool full = !at->squeeze[d] && (begin == MT_SLICE_OMITTED || begin == 0) &&
                        end == MT_SLICE_OMITTED && step == 1;
            if (!full)
                mt_fail(MT_ERR_UNSUPPORTED, c->loc,
                        "slicing a symbolic dimension is not supported yet (dimension %d of %s is %s; only ':' keeps it)",
                        d, mt_describe_value(a, x), dim.sym);
            r.dims[r.ndim++] = dim;
            continue;
        }
        if (at->squeeze[d]) {
            if (begin < -dim.value || begin >= dim.value)
                mt_fail(MT_ERR_SHAPE, c->loc, "index %lld is out of range for dimension %d of %s, of size %lld",
                        (long long)begin, d, mt_describe_value(a, x), (long long)dim.value);
            continue;
        }
        int64_t start, count;
        mt_slice_indices(dim.value, begin, end, step, &start, &count);
        mt_dim od = {count, NULL};
        r.dims[r.ndim++] = od;
    }
    return r;
}
