/*
 * builder_expr.c -- expressions of graph functions, AST to bindings.
 *
 * Each expression node is checked as it is built (names, arity, dtypes,
 * broadcasting), so a diagnostic points at the exact operator or call that is
 * wrong. Literals become weak scalar constants (graph.h); the op's rule
 * settles their dtype against the other operand. An op whose arguments are all
 * constants is folded now (graph/fold.c), which is what lets `x.shape[0] > 16`
 * decide an `if` at compile time.
 *
 * Operators map to registry ops by name: + - * / // % ** @ to add subtract
 * multiply divide floor_divide floor_mod power matmul; comparisons to less,
 * less_equal, ...; `not`/`and`/`or` on bools to logical_not/and/or; `x if c
 * else y` to where (or to one arm when c is a constant). Attributes: x.T,
 * x.shape[i], x.ndim, x.dtype (only inside astype), x.astype(dtype).
 * Subscripts: x[1:3, :, ::2] and integer indices are strided_slice.
 */
#include <string.h>

#include "graph/builder_internal.h"
#include "support/common.h"

enum { MAX_ARGS = 16 };

static const char *spelling(mt_tok_kind k) { return mt_tok_kind_str(k); }

/* An op by name, or "not supported yet" at loc when the registry lacks it. */
static mt_op_id need_op(const char *name, const char *what, mt_loc loc) {
    const mt_op_def *op = mt_op_lookup(name);
    if (!op) mt_fail(MT_ERR_UNSUPPORTED, loc, "%s is not supported yet", what);
    return op->id;
}

/* A weak rank-0 run-time value (a loop variable) meeting a tensor of another
 * dtype takes that dtype, as a literal would. */
static void settle_weak_values(builder *b, mt_gvar **args, int nargs, mt_loc loc) {
    for (int i = 0; i < nargs; i++) {
        mt_gvar *v = args[i];
        if (!v || v->is_const || !v->weak || v->type.ndim != 0) continue;
        for (int j = 0; j < nargs; j++) {
            mt_gvar *o = args[j];
            if (j == i || !o || (o->is_const && o->weak) || o->type.dtype == v->type.dtype) continue;
            mt_gattrs *at = MT_NEW(b->arena, mt_gattrs);
            at->has_dtype = true;
            at->dtype = o->type.dtype;
            args[i] = mt_b_emit(b, need_op("astype", "astype", loc), &v, 1, at, loc, NULL);
            break;
        }
    }
}

mt_gvar *mt_b_emit(builder *b, mt_op_id id, mt_gvar **args, int nargs, const mt_gattrs *attrs,
                   mt_loc loc, const char *name) {
    const mt_op_def *op = mt_op_get(id);
    if (nargs > 1) settle_weak_values(b, args, nargs, loc);
    bool all_weak = nargs > 0;
    for (int i = 0; i < nargs; i++) all_weak &= args[i]->is_const && args[i]->weak;
    mt_gtype t = mt_op_infer(b->arena, op, args, nargs, attrs, loc);
    mt_gtype_check_size(b->arena, &t, loc);
    mt_gvar *folded;
    if (mt_fold_scalar(b->arena, op, args, nargs, &t, loc, &folded)) {
        /* literals in, a literal out: 2 * 3 stays weak */
        if (all_weak && folded->type.dtype != MT_BOOL) folded->weak = true;
        return folded;
    }
    mt_gvar *out = mt_gvar_new(b->arena, name ? mt_b_fresh_name(b, name) : mt_b_temp_name(b), &t, loc);
    out->temp = !name;
    mt_gbinding *bd = mt_gbinding_op(b->arena, out, op, args, nargs, attrs, loc);
    bd->device = b->device;
    mt_b_add_binding(b, bd, loc);
    return out;
}

void mt_b_add_binding(builder *b, mt_gbinding *bd, mt_loc loc) {
    if (++b->nbindings > MT_MAX_BINDINGS)
        mt_fail(MT_ERR_LIMIT, loc, "kernel too large: more than %d operations after unrolling",
                MT_MAX_BINDINGS);
    if (!b->block) {
        b->block = mt_gblock_new(b->arena, MT_GBLOCK_BINDINGS, loc);
        mt_gbody_add(b->arena, b->body, b->block);
    }
    mt_gblock_add(b->arena, b->block, bd);
}

/* ---- operators ---------------------------------------------------------------- */

static const char *binop_name(mt_tok_kind k) {
    switch (k) {
    case TK_PLUS: return "add";
    case TK_MINUS: return "subtract";
    case TK_STAR: return "multiply";
    case TK_SLASH: return "divide";
    case TK_DSLASH: return "floor_divide";
    case TK_PERCENT: return "floor_mod";
    case TK_DSTAR: return "power";
    case TK_AT: return "matmul";
    default: return NULL;
    }
}

static mt_gvar *binop(builder *b, const mt_ast *e, const char *name) {
    const char *op = binop_name(e->op);
    if (!op)
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "operator '%s' is not supported on tensors", spelling(e->op));
    mt_op_id id = need_op(op, mt_arena_printf(b->arena, "operator '%s'", spelling(e->op)), e->loc);
    mt_gvar *args[2] = {mt_b_expr(b, e->lhs), mt_b_expr(b, e->rhs)};
    return mt_b_emit(b, id, args, 2, NULL, e->loc, name);
}

/* x as a bool: itself when bool, else x != 0. */
static mt_gvar *truth(builder *b, mt_gvar *x, mt_loc loc) {
    if (x->type.dtype == MT_BOOL) return x;
    mt_gvar *args[2] = {x, mt_gvar_const_int(b->arena, MT_INT32, 0, true, loc)};
    return mt_b_emit(b, need_op("not_equal", "operator '!='", loc), args, 2, NULL, loc, NULL);
}

static mt_gvar *unary(builder *b, const mt_ast *e, const char *name) {
    mt_gvar *x = mt_b_expr(b, e->lhs);
    switch (e->op) {
    case TK_PLUS: return x;
    case TK_MINUS:
        if (x->is_const) { /* -literal stays a constant (and weak) */
            if (mt_dtype_is_float(x->type.dtype))
                return mt_gvar_const_float(b->arena, x->type.dtype, -x->fconst, x->weak, e->loc);
            return mt_gvar_const_int(b->arena, x->type.dtype, (int64_t)(0 - (uint64_t)x->iconst), x->weak, e->loc);
        }
        return mt_b_emit(b, MT_OP_NEGATIVE, &x, 1, NULL, e->loc, name);
    case TK_NOT: {
        mt_gvar *t = truth(b, x, e->loc);
        return mt_b_emit(b, need_op("logical_not", "'not'", e->loc), &t, 1, NULL, e->loc, name);
    }
    default:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "operator '%s' is not supported on tensors", spelling(e->op));
    }
}

static const char *compare_name(mt_tok_kind k) {
    switch (k) {
    case TK_LT: return "less";
    case TK_LE: return "less_equal";
    case TK_GT: return "greater";
    case TK_GE: return "greater_equal";
    case TK_EQ: return "equal";
    case TK_NE: return "not_equal";
    default: return NULL;
    }
}

/* a < b < c is (a < b) and (b < c), with b built once. */
static mt_gvar *compare(builder *b, const mt_ast *e, const char *name) {
    mt_gvar *left = mt_b_expr(b, e->lhs), *result = NULL;
    for (int i = 0; i < e->items.len; i++) {
        const char *op = compare_name(e->cmp_ops[i]);
        if (!op)
            mt_fail(MT_ERR_UNSUPPORTED, e->loc, "operator '%s' is not supported in kernels",
                    e->cmp_ops[i] == TK_IN ? "in" : "is");
        mt_gvar *right = mt_b_expr(b, e->items.data[i]);
        mt_gvar *args[2] = {left, right};
        bool last = i + 1 == e->items.len && !result;
        mt_gvar *c = mt_b_emit(b, need_op(op, mt_arena_printf(b->arena, "operator '%s'", spelling(e->cmp_ops[i])), e->loc),
                               args, 2, NULL, e->loc, last ? name : NULL);
        if (result) {
            mt_gvar *both[2] = {result, c};
            c = mt_b_emit(b, need_op("logical_and", "'and'", e->loc), both, 2, NULL, e->loc,
                          i + 1 == e->items.len ? name : NULL);
        }
        result = c;
        left = right;
    }
    return result;
}

/* and / or: on scalars (constants fold with Python's short-circuit result
 * when every operand is a constant). */
static mt_gvar *boolop(builder *b, const mt_ast *e, const char *name) {
    const char *op = e->op == TK_AND ? "logical_and" : "logical_or";
    mt_gvar *acc = NULL;
    for (int i = 0; i < e->items.len; i++) {
        mt_gvar *x = mt_b_expr(b, e->items.data[i]);
        if (x->type.ndim != 0)
            mt_fail(MT_ERR_TYPE, e->items.data[i]->loc,
                    "'%s' takes scalars, got a tensor of shape %s; use logical_and/logical_or on tensors",
                    spelling(e->op), mt_shape_str(b->arena, &x->type));
        x = truth(b, x, e->items.data[i]->loc);
        if (!acc) {
            acc = x;
            continue;
        }
        mt_gvar *args[2] = {acc, x};
        acc = mt_b_emit(b, need_op(op, mt_arena_printf(b->arena, "'%s'", spelling(e->op)), e->loc), args, 2,
                        NULL, e->loc, i + 1 == e->items.len ? name : NULL);
    }
    return acc;
}

static mt_gvar *ifexp(builder *b, const mt_ast *e, const char *name) {
    mt_gvar *c = mt_b_expr(b, e->cond);
    if (c->is_const) return mt_b_expr_named(b, c->iconst || c->fconst != 0 ? e->lhs : e->rhs, name);
    c = truth(b, c, e->cond->loc);
    mt_gvar *args[3] = {c, mt_b_expr(b, e->lhs), mt_b_expr(b, e->rhs)};
    return mt_b_emit(b, need_op("where", "'x if c else y'", e->loc), args, 3, NULL, e->loc, name);
}

/* ---- attributes and subscripts ------------------------------------------------ */

bool mt_b_shape_of(builder *b, const mt_ast *e, mt_gtype *out) {
    if (e->kind != AST_ATTR || strcmp(e->name, "shape") != 0) return false;
    mt_gvar *x = mt_b_expr(b, e->lhs);
    *out = x->type;
    return true;
}

/* x.shape[i] as a dim, when e is that. */
static bool shape_index(builder *b, const mt_ast *e, mt_gvar **x, int *axis) {
    if (e->kind != AST_SUBSCRIPT || e->lhs->kind != AST_ATTR || strcmp(e->lhs->name, "shape") != 0)
        return false;
    *x = mt_b_expr(b, e->lhs->lhs);
    mt_gvar *i = mt_b_expr(b, e->rhs);
    if (!i->is_const || mt_dtype_is_float(i->type.dtype))
        mt_fail(MT_ERR_TYPE, e->rhs->loc, "a shape index must be an integer constant");
    int nd = (*x)->type.ndim;
    if (i->iconst < -nd || i->iconst >= nd)
        mt_fail(MT_ERR_SHAPE, e->rhs->loc, "shape index %lld is out of range for a tensor of rank %d",
                (long long)i->iconst, nd);
    *axis = (int)(i->iconst < 0 ? i->iconst + nd : i->iconst);
    return true;
}

mt_dim mt_b_dim(builder *b, const mt_ast *e) {
    mt_dim d = {-1, NULL};
    mt_gvar *x;
    int axis;
    if (e->kind == AST_STR) { /* a symbolic dim: it must be some parameter's size */
        d.sym = e->str;
        for (int p = 0; p < b->func->nparams; p++)
            for (int k = 0; k < b->func->params[p]->type.ndim; k++)
                if (mt_dim_equal(b->func->params[p]->type.dims[k], d)) return d;
        mt_fail(MT_ERR_SHAPE, e->loc, "symbolic dim \"%s\" is not the size of any parameter", e->str);
    }
    if (shape_index(b, e, &x, &axis)) return x->type.dims[axis];
    mt_gvar *v = mt_b_expr(b, e);
    if (!v->is_const || mt_dtype_is_float(v->type.dtype))
        mt_fail(MT_ERR_TYPE, e->loc, "a dimension must be an integer known at compile time or x.shape[i]");
    d.value = v->iconst;
    return d;
}

static mt_gvar *attribute(builder *b, const mt_ast *e, const char *name) {
    const char *attr = e->name;
    if (strcmp(attr, "T") == 0) {
        mt_gvar *x = mt_b_expr(b, e->lhs);
        return mt_b_emit(b, need_op("transpose", "x.T", e->loc), &x, 1, NULL, e->loc, name);
    }
    if (strcmp(attr, "ndim") == 0) {
        mt_gvar *x = mt_b_expr(b, e->lhs);
        return mt_gvar_const_int(b->arena, MT_INT64, x->type.ndim, true, e->loc);
    }
    if (strcmp(attr, "shape") == 0)
        mt_fail(MT_ERR_TYPE, e->loc, "x.shape is a tuple of dims: index it (x.shape[0]) or pass it as a shape");
    if (strcmp(attr, "dtype") == 0)
        mt_fail(MT_ERR_TYPE, e->loc, "x.dtype can only be passed to astype() or as a dtype argument");
    mt_fail(MT_ERR_TYPE, e->loc, "tensors have no attribute '%s' (known: T, shape, ndim, dtype, astype)", attr);
}

/* The run-time value of a symbolic dim: a rank-0 int64 from a kernel. */
static mt_gvar *dim_value(builder *b, mt_gvar *x, int axis, mt_loc loc, const char *name) {
    mt_dim d = x->type.dims[axis];
    if (!d.sym) return mt_gvar_const_int(b->arena, MT_INT64, d.value, true, loc);
    mt_gattrs *at = MT_NEW(b->arena, mt_gattrs);
    at->has_axes = true;
    at->naxes = 1;
    at->axes[0] = axis;
    mt_gvar *v = mt_b_emit(b, MT_OP_SHAPE_DIM, &x, 1, at, loc, name);
    v->weak = true; /* like a literal, it takes the other operand's dtype */
    return v;
}

static int64_t slice_bound(builder *b, const mt_ast *e) {
    if (!e) return MT_SLICE_OMITTED;
    mt_gvar *v = mt_b_expr(b, e);
    if (!v->is_const || mt_dtype_is_float(v->type.dtype))
        mt_fail(MT_ERR_TYPE, e->loc, "slice bounds must be integers known at compile time");
    return v->iconst;
}

static mt_gvar *subscript(builder *b, const mt_ast *e, const char *name) {
    mt_gvar *x;
    int axis;
    if (shape_index(b, e, &x, &axis)) return dim_value(b, x, axis, e->loc, name);
    x = mt_b_expr(b, e->lhs);
    const mt_ast *idx = e->rhs;
    const mt_ast *const *items = (const mt_ast *const *)&idx;
    int n = 1;
    if (idx->kind == AST_TUPLE) {
        items = (const mt_ast *const *)idx->items.data;
        n = idx->items.len;
    }
    if (n > x->type.ndim)
        mt_fail(MT_ERR_SHAPE, idx->loc, "too many indices for a tensor of rank %d", x->type.ndim);
    mt_gattrs *at = MT_NEW(b->arena, mt_gattrs);
    at->nslice = n;
    for (int d = 0; d < n; d++) {
        const mt_ast *it = items[d];
        if (it->kind == AST_SLICE) {
            at->begin[d] = slice_bound(b, it->lhs);
            at->end[d] = slice_bound(b, it->rhs);
            int64_t step = it->cond ? slice_bound(b, it->cond) : 1;
            if (step == 0) mt_fail(MT_ERR_SHAPE, it->cond->loc, "slice step must not be zero");
            at->step[d] = step;
        } else if (it->kind == AST_NONE || it->kind == AST_ELLIPSIS) {
            mt_fail(MT_ERR_UNSUPPORTED, it->loc, "None and ... in indices are not supported yet");
        } else {
            mt_gvar *v = mt_b_expr(b, it);
            if (!v->is_const || mt_dtype_is_float(v->type.dtype))
                mt_fail(MT_ERR_UNSUPPORTED, it->loc,
                        "indexing with a tensor is not supported; indices must be integers known at compile time");
            at->begin[d] = v->iconst;
            at->end[d] = MT_SLICE_OMITTED;
            at->step[d] = 1;
            at->squeeze[d] = true;
        }
    }
    return mt_b_emit(b, need_op("strided_slice", "slicing", e->loc), &x, 1, at, e->loc, name);
}

/* ---- calls ---------------------------------------------------------------------- */

static mt_gvar *astype_method(builder *b, const mt_ast *e, const char *name) {
    mt_gvar *x = mt_b_expr(b, e->lhs->lhs);
    if (e->items.len + e->kw.len != 1)
        mt_fail(MT_ERR_TYPE, e->loc, "astype() takes one dtype argument");
    const mt_ast *d = e->items.len ? e->items.data[0] : e->kw.data[0]->lhs;
    if (e->kw.len && strcmp(e->kw.data[0]->name, "dtype") != 0)
        mt_fail(MT_ERR_TYPE, e->kw.data[0]->loc, "astype() got an unexpected keyword argument '%s'", e->kw.data[0]->name);
    mt_gattrs *at = MT_NEW(b->arena, mt_gattrs);
    at->has_dtype = true;
    if (d->kind == AST_STR) {
        at->dtype = mt_b_dtype_name(d->str, d->loc);
    } else if (d->kind == AST_ATTR && strcmp(d->name, "dtype") == 0) {
        at->dtype = mt_b_expr(b, d->lhs)->type.dtype;
    } else {
        mt_fail(MT_ERR_TYPE, d->loc, "astype() takes a dtype name such as \"float16\" or x.dtype");
    }
    return mt_b_emit(b, need_op("astype", "astype", e->loc), &x, 1, at, e->loc, name);
}

/* linear(x, w, b=None) = x @ w.T (+ b) */
static mt_gvar *linear(builder *b, const mt_ast *e, const char *name) {
    int n = e->items.len;
    const mt_ast *xa = n > 0 ? e->items.data[0] : NULL, *wa = n > 1 ? e->items.data[1] : NULL,
                 *ba = n > 2 ? e->items.data[2] : NULL;
    if (n > 3) mt_fail(MT_ERR_TYPE, e->items.data[3]->loc, "'linear' takes at most 3 arguments, got %d", n);
    for (int k = 0; k < e->kw.len; k++) {
        const mt_ast *kw = e->kw.data[k];
        const mt_ast **slot = strcmp(kw->name, "x") == 0 ? &xa : strcmp(kw->name, "w") == 0 ? &wa
                             : strcmp(kw->name, "b") == 0 ? &ba : NULL;
        if (!slot) mt_fail(MT_ERR_TYPE, kw->loc, "'linear' got an unexpected keyword argument '%s'", kw->name);
        if (*slot) mt_fail(MT_ERR_TYPE, kw->loc, "'linear' got multiple values for argument '%s'", kw->name);
        *slot = kw->lhs;
    }
    if (!xa || !wa) mt_fail(MT_ERR_TYPE, e->loc, "'linear' missing required argument '%s'", xa ? "w" : "x");
    mt_gvar *x = mt_b_expr(b, xa), *w = mt_b_expr(b, wa);
    mt_gvar *wt = mt_b_emit(b, need_op("transpose", "linear", e->loc), &w, 1, NULL, e->loc, NULL);
    mt_gvar *mm[2] = {x, wt};
    bool bias = ba && ba->kind != AST_NONE;
    mt_gvar *y = mt_b_emit(b, need_op("matmul", "linear", e->loc), mm, 2, NULL, e->loc, bias ? NULL : name);
    if (!bias) return y;
    mt_gvar *add[2] = {y, mt_b_expr(b, ba)};
    return mt_b_emit(b, MT_OP_ADD, add, 2, NULL, e->loc, name);
}

/* zeros_like(x, dtype=None), ones_like(x, dtype=None), full_like(x, fill_value, dtype=None) */
static mt_gvar *like(builder *b, const mt_ast *e, const char *fname, const char *name) {
    bool full = strcmp(fname, "full_like") == 0;
    int want = full ? 2 : 1;
    const mt_ast *xa = NULL, *va = NULL, *da = NULL;
    for (int i = 0; i < e->items.len; i++) {
        if (i == 0) xa = e->items.data[i];
        else if (full && i == 1) va = e->items.data[i];
        else if (i == want) da = e->items.data[i];
        else mt_fail(MT_ERR_TYPE, e->items.data[i]->loc, "'%s' takes at most %d arguments", fname, want + 1);
    }
    for (int k = 0; k < e->kw.len; k++) {
        const mt_ast *kw = e->kw.data[k];
        if (strcmp(kw->name, "dtype") == 0) da = kw->lhs;
        else if (full && strcmp(kw->name, "fill_value") == 0) va = kw->lhs;
        else mt_fail(MT_ERR_TYPE, kw->loc, "'%s' got an unexpected keyword argument '%s'", fname, kw->name);
    }
    if (!xa || (full && !va))
        mt_fail(MT_ERR_TYPE, e->loc, "'%s' missing required argument '%s'", fname, xa ? "fill_value" : "x");
    mt_gvar *x = mt_b_expr(b, xa);
    mt_gattrs *at = MT_NEW(b->arena, mt_gattrs);
    at->nshape = x->type.ndim;
    for (int d = 0; d < x->type.ndim; d++) at->shape[d] = x->type.dims[d];
    at->has_dtype = true;
    at->dtype = x->type.dtype;
    if (da && da->kind != AST_NONE) {
        if (da->kind != AST_STR) mt_fail(MT_ERR_TYPE, da->loc, "dtype must be a string such as \"float32\"");
        at->dtype = mt_b_dtype_name(da->str, da->loc);
    }
    at->has_value = true;
    at->value = strcmp(fname, "ones_like") == 0 ? 1.0 : 0.0;
    if (va) {
        mt_gvar *v = mt_b_expr(b, va);
        if (!v->is_const) mt_fail(MT_ERR_TYPE, va->loc, "fill_value must be a number known at compile time");
        at->value = mt_dtype_is_float(v->type.dtype) ? v->fconst : (double)v->iconst;
    }
    return mt_b_emit(b, need_op("full", fname, e->loc), NULL, 0, at, e->loc, name);
}

static _Noreturn void no_lambda(const mt_ast *e) {
    mt_fail(MT_ERR_UNSUPPORTED, e->loc, "lambda expressions are only allowed as a schedule's index map "
                                        "(sch.transform_layout)");
}

static mt_gvar *call(builder *b, const mt_ast *e, const char *name) {
    const mt_ast *callee = e->lhs;
    if (callee->kind == AST_ATTR && strcmp(callee->name, "astype") == 0) return astype_method(b, e, name);
    if (mt_b_is_call_tir(e)) {
        mt_gvar *vals[64];
        int n = mt_b_call_tir(b, e, vals, 64);
        if (n != 1) mt_fail(MT_ERR_TYPE, e->loc, "R.call_tir gives %d values here; unpack them (a, b = ...)", n);
        return vals[0];
    }
    if (callee->kind == AST_LAMBDA) no_lambda(callee);
    if (callee->kind != AST_NAME)
        mt_fail(MT_ERR_UNSUPPORTED, callee->loc, "only functions called by name and x.astype() are supported");
    const char *fname = callee->name;
    const mt_ast *def = mt_b_find_def(b, fname);
    if (def) {
        mt_gvar *vals[64];
        int n = mt_b_inline_call(b, e, def, vals, 64);
        if (n != 1)
            mt_fail(MT_ERR_TYPE, e->loc, "'%s' returns %d values; unpack them (a, b = %s(...))", fname, n, fname);
        return vals[0];
    }
    if (strcmp(fname, "linear") == 0) return linear(b, e, name);
    if (strcmp(fname, "call_dps_packed") == 0) {
        mt_gvar *vals[32];
        const char *names[1] = {name};
        int n = mt_b_extern_call(b, e, vals, 32, name ? names : NULL);
        if (n != 1)
            mt_fail(MT_ERR_TYPE, e->loc, "the host function returns %d values; unpack them "
                    "(a, b = call_dps_packed(...))", n);
        return vals[0];
    }
    if (strcmp(fname, "zeros_like") == 0 || strcmp(fname, "ones_like") == 0 || strcmp(fname, "full_like") == 0)
        return like(b, e, fname, name);
    if (strcmp(fname, "neg") == 0) fname = "negative";
    mt_gvar *v = mt_b_library_call(b, e, fname, name);
    if (v) return v;
    if (strcmp(fname, "negative") == 0) {
        if (e->items.len != 1 || e->kw.len) mt_fail(MT_ERR_TYPE, e->loc, "'neg' takes 1 argument");
        mt_gvar *x = mt_b_expr(b, e->items.data[0]);
        return mt_b_emit(b, MT_OP_NEGATIVE, &x, 1, NULL, e->loc, name);
    }
    if (strcmp(fname, "range") == 0)
        mt_fail(MT_ERR_TYPE, e->loc, "range() is only allowed in 'for i in range(...)'");
    if (strcmp(fname, "device") == 0)
        mt_fail(MT_ERR_TYPE, callee->loc, "device() is only allowed in 'with device(...):'");
    if (mt_b_is_planned_function(fname))
        mt_fail(MT_ERR_UNSUPPORTED, callee->loc, "library function '%s' is not supported yet", fname);
    if (mt_b_use(b, fname, callee->loc))
        mt_fail(MT_ERR_TYPE, callee->loc, "'%s' is a value, not a function; it cannot be called", fname);
    mt_fail(MT_ERR_NAME, callee->loc, "unknown function '%s'", fname);
}

/* ---- entry points ---------------------------------------------------------------- */

static mt_gvar *expr_value(builder *b, const mt_ast *e, const char *name);

/* The value of e; a value the compiler names remembers e, so that messages
 * quote what the user wrote ('a * 2.0') instead of its temporary name. */
mt_gvar *mt_b_expr_named(builder *b, const mt_ast *e, const char *name) {
    mt_gvar *v = expr_value(b, e, name);
    if (v->temp && !v->expr) v->expr = e;
    return v;
}

static mt_gvar *expr_value(builder *b, const mt_ast *e, const char *name) {
    mt_b_work(b, e->loc);
    switch (e->kind) {
    case AST_NAME: {
        mt_gvar *v = mt_b_use(b, e->name, e->loc);
        if (v) return v;
        if (strcmp(e->name, "True") == 0 || strcmp(e->name, "False") == 0) break;
        const mt_op_def *op = mt_op_lookup(e->name);
        if ((op && op->signature) || mt_b_is_planned_function(e->name) || mt_b_find_def(b, e->name))
            mt_fail(MT_ERR_TYPE, e->loc, "'%s' is a function; call it with arguments", e->name);
        mt_fail(MT_ERR_NAME, e->loc, "unknown name '%s'", e->name);
    }
    case AST_INT:
        return mt_gvar_const_int(b->arena, MT_INT32, e->ival, true, e->loc);
    case AST_FLOAT:
        return mt_gvar_const_float(b->arena, MT_FLOAT32, e->fval, true, e->loc);
    case AST_BOOL:
        return mt_gvar_const_int(b->arena, MT_BOOL, e->ival != 0, false, e->loc);
    case AST_STR:
        mt_fail(MT_ERR_TYPE, e->loc, "a string is not a tensor value");
    case AST_NONE:
        mt_fail(MT_ERR_TYPE, e->loc, "None is not a tensor value");
    case AST_BINOP: return binop(b, e, name);
    case AST_UNARY: return unary(b, e, name);
    case AST_COMPARE: return compare(b, e, name);
    case AST_BOOLOP: return boolop(b, e, name);
    case AST_IFEXP: return ifexp(b, e, name);
    case AST_CALL: return call(b, e, name);
    case AST_ATTR: return attribute(b, e, name);
    case AST_SUBSCRIPT: return subscript(b, e, name);
    case AST_TUPLE:
        mt_fail(MT_ERR_TYPE, e->loc, "a tuple is not a tensor value; unpack it or return it");
    case AST_LIST:
        mt_fail(MT_ERR_TYPE, e->loc, "a list is not a tensor value");
    case AST_DICT:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "dict literals are not supported in minitriton kernels");
    case AST_STARRED:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "'*' unpacking is not supported in minitriton kernels");
    case AST_ELLIPSIS:
        mt_fail(MT_ERR_TYPE, e->loc, "'...' is only allowed inside a subscript, such as x[..., 0]");
    case AST_LAMBDA: no_lambda(e);
    default:
        break;
    }
    mt_fail(MT_ERR_UNSUPPORTED, e->loc, "this expression is not supported in kernels");
}

mt_gvar *mt_b_expr(builder *b, const mt_ast *e) { return mt_b_expr_named(b, e, NULL); }

int mt_b_values(builder *b, const mt_ast *e, mt_gvar **out, int max, const char *const *names) {
    if (e->kind == AST_TUPLE) {
        if (e->items.len > max) mt_fail(MT_ERR_LIMIT, e->loc, "too many values");
        for (int i = 0; i < e->items.len; i++) out[i] = mt_b_expr_named(b, e->items.data[i], names ? names[i] : NULL);
        return e->items.len;
    }
    if (e->kind == AST_CALL && e->lhs->kind == AST_NAME) {
        const mt_ast *def = mt_b_find_def(b, e->lhs->name);
        if (def) return mt_b_inline_call(b, e, def, out, max);
        if (strcmp(e->lhs->name, "call_dps_packed") == 0) return mt_b_extern_call(b, e, out, max, names);
    }
    if (mt_b_is_call_tir(e)) return mt_b_call_tir(b, e, out, max);
    out[0] = mt_b_expr_named(b, e, names ? names[0] : NULL);
    return 1;
}

mt_gvar *mt_b_cond(builder *b, const mt_ast *e, const char *what) {
    mt_gvar *c = mt_b_expr(b, e);
    if (c->type.ndim != 0)
        mt_fail(MT_ERR_TYPE, e->loc, "the condition of '%s' must be a scalar, got a tensor of shape %s",
                what, mt_shape_str(b->arena, &c->type));
    if (c->is_const) {
        bool v = mt_dtype_is_float(c->type.dtype) ? c->fconst != 0 : c->iconst != 0;
        return mt_gvar_const_int(b->arena, MT_BOOL, v, false, e->loc);
    }
    return truth(b, c, e->loc);
}
