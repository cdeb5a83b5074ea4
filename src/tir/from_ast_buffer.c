/*
 * from_ast_buffer.c -- the buffers of a `@T.prim_func` and the bounds
 * proofs over its enclosing loops (see from_ast.h; the files of the walk:
 * from_ast_internal.h).
 *
 * Buffers. A shape is a tuple of int64 dims; in a parameter a dim may be a
 * string or a name that is not a scalar parameter: a symbolic dim
 * (mt_fa_sym_dim). T.Buffer annotates a parameter, T.alloc_buffer makes an
 * allocation (where it stands decides whose: from_ast_stmt.c, _block.c).
 *
 * Bounds. Each index is checked where it is written (mt_fa_check_bound):
 * a constant outside its dim is an error, and so is a loop or block
 * variable expression whose range over the enclosing loops (interval
 * arithmetic, tir/arith.h, from the loops' min and extent in fctx.loops)
 * is provably outside it: attained at both ends (exact_affine) and
 * leaving the dim, or wholly outside it. Where the range is only an
 * over-approximation, the function is marked unproven and checked at run
 * time. The same ranges prove that a T.wmma_* operand's footprint lies in
 * its buffer and that a block variable's value stays in its domain.
 */
#include <string.h>

#include "support/common.h"
#include "tir/from_ast_internal.h"

/* ---- buffers -------------------------------------------------------------- */

/* shape: '(' dim, ... ')' | dim -- a dim is an int64 expression or, in a
 * parameter, a string naming a symbolic dim. */
static mt_texpr **shape_of(fctx *c, const mt_ast *e, int *ndim) {
    const mt_ast_list *items = e->kind == AST_TUPLE || e->kind == AST_LIST ? &e->items : NULL;
    int n = items ? items->len : 1;
    if (n > MT_MAX_RANK) mt_fail(MT_ERR_LIMIT, e->loc, "a buffer has at most %d dims", MT_MAX_RANK);
    mt_texpr **dims = MT_NEW_ARRAY(c->a, mt_texpr *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        const mt_ast *d = items ? items->data[i] : e;
        if (d->kind == AST_STR && c->in_params) dims[i] = mt_fa_sym_dim(c, d->str, d->loc);
        else dims[i] = mt_fa_i64_expr(c, d, "a dim");
        int64_t k;
        if (mt_te_is_const_int(dims[i], &k) && k < 0) mt_fail(MT_ERR_SHAPE, d->loc, "a dim is negative (%lld)", (long long)k);
    }
    *ndim = n;
    return dims;
}

/* The positional-or-keyword argument i / name of a call, or NULL. */
static const mt_ast *arg_at(const mt_ast *call, int i, const char *name) {
    if (i < call->items.len) {
        if (mt_fa_keyword(call, name)) mt_fail(MT_ERR_TYPE, call->loc, "argument '%s' given twice", name);
        return call->items.data[i];
    }
    return mt_fa_keyword(call, name);
}

/* T.Buffer(shape, dtype="float32") in a parameter annotation */
mt_tbuffer *mt_fa_buffer_type(fctx *c, const char *name, const mt_ast *call) {
    static const char *const kws[] = {"shape", "dtype", NULL};
    mt_fa_only_keywords(call, "Buffer", kws);
    if (call->items.len > 2) mt_fa_arity(call, "Buffer", 1, 2);
    const mt_ast *sh = arg_at(call, 0, "shape"), *dt = arg_at(call, 1, "dtype");
    if (!sh) mt_fail(MT_ERR_TYPE, call->loc, "T.Buffer needs a shape");
    int n;
    c->in_params = true;
    mt_texpr **dims = shape_of(c, sh, &n);
    c->in_params = false;
    return mt_tbuffer_new(c->a, name, dt ? mt_fa_dtype_arg(c, dt) : MT_FLOAT32, n, dims);
}

/* T.alloc_buffer(shape, dtype="float32", scope="global") */
mt_tbuffer *mt_fa_alloc_buffer(fctx *c, const char *name, const mt_ast *call) {
    static const char *const kws[] = {"shape", "dtype", "scope", NULL};
    mt_fa_only_keywords(call, "alloc_buffer", kws);
    if (call->items.len > 3) mt_fa_arity(call, "alloc_buffer", 1, 3);
    const mt_ast *sh = arg_at(call, 0, "shape"), *dt = arg_at(call, 1, "dtype"), *sc = arg_at(call, 2, "scope");
    if (!sh) mt_fail(MT_ERR_TYPE, call->loc, "T.alloc_buffer needs a shape");
    int n;
    mt_texpr **dims = shape_of(c, sh, &n);
    for (int d = 0; d < n; d++) { /* one shape wherever it is allocated (as in TVM) */
        mt_texpr *e = dims[d];
        for (int i = c->let_vars.len - 1; i >= 0; i--) /* lets, latest first */
            e = mt_tsubst_expr(c->a, e, c->let_vars.data + i, c->let_values.data + i, 1);
        for (int i = 0; i < c->loops.len; i++)
            if (mt_texpr_uses_var(e, c->loops.data[i].var))
                mt_fail(MT_ERR_TYPE, sh->loc,
                        "the shape of '%s' uses %s variable '%s': a buffer has one shape for every "
                        "iteration (use the largest, a constant or a symbolic dim)", name,
                        c->loops.data[i].iter ? "iteration" : "loop", c->loops.data[i].var->name);
    }
    mt_tbuffer *b = mt_tbuffer_new(c->a, name, dt ? mt_fa_dtype_arg(c, dt) : MT_FLOAT32, n, dims);
    if (sc) {
        const char *s = mt_fa_string_arg(sc, "scope");
        if (mt_scope_from_str(s, &b->scope) != 0)
            mt_fail(MT_ERR_TYPE, sc->loc,
                    "unknown scope '%s' (expected \"global\", \"shared\", \"local\", \"wmma.matrix_a\", "
                    "\"wmma.matrix_b\" or \"wmma.accumulator\")", s);
    }
    return b;
}

/* ---- bounds proofs -------------------------------------------------------- */

const loop_info *mt_fa_loop_of(const fctx *c, const mt_tvar *v) {
    for (int i = c->loops.len - 1; i >= 0; i--)
        if (c->loops.data[i].var == v) return &c->loops.data[i];
    return NULL;
}

static _Noreturn void out_of_reach(const mt_tvar *v, mt_loc loc) {
    mt_fail(MT_ERR_NAME, loc,
            "loop variable '%s' is used inside a block, which sees the loops around it only through its "
            "iteration variables (bind one with T.axis.spatial, T.axis.reduce or T.axis.remap)",
            v->name);
}

void mt_fa_check_reach(const fctx *c, const mt_tvar *v, mt_loc loc) {
    const loop_info *l = mt_fa_loop_of(c, v);
    if (l && !l->iter && l - c->loops.data < c->sealed) out_of_reach(v, loc);
}

void mt_fa_check_reach_expr(const fctx *c, const mt_texpr *e, mt_loc loc) {
    for (int i = 0; i < c->sealed; i++)
        if (!c->loops.data[i].iter && mt_texpr_uses_var(e, c->loops.data[i].var))
            out_of_reach(c->loops.data[i].var, loc);
}

/* The range of e over the enclosing loops (interval arithmetic, tir/arith.h). */
static mt_range range_over_loops(fctx *c, const mt_texpr *e) {
    mt_bounds bd;
    memset(&bd, 0, sizeof bd);
    for (int i = 0; i < c->loops.len; i++)
        mt_bounds_push_loop(c->a, &bd, c->loops.data[i].var, c->loops.data[i].min, c->loops.data[i].extent);
    return mt_bounds_of(&bd, e);
}

/* An access at loc is neither provably in nor out of bounds (the first
 * such place is kept for the GPU's refusal, pipeline.c). */
void mt_fa_unproven(fctx *c, mt_loc loc) {
    if (!c->f->unproven) c->f->unproven_at = loc;
    c->f->unproven = true;
}

/* Is e affine in distinct exact variables (loop_info.exact), c0 + sum of
 * c_k * v_k, possibly floor-divided by positive constants? Then its
 * interval (mt_bounds_of) is attained at both ends. */
static bool exact_affine(const fctx *c, const mt_texpr *e, const mt_tvar **seen, int *n) {
    int64_t k;
    if (mt_te_is_const_int(e, &k)) return true;
    switch (e->kind) {
    case TE_VAR: {
        const loop_info *l = mt_fa_loop_of(c, e->var);
        if (!l || !l->exact || *n == 16) return false;
        for (int i = 0; i < *n; i++)
            if (seen[i] == e->var) return false;
        seen[(*n)++] = e->var;
        return true;
    }
    case TE_ADD: case TE_SUB: return exact_affine(c, e->a, seen, n) && exact_affine(c, e->b, seen, n);
    case TE_MUL:
        if (mt_te_is_const_int(e->a, &k)) return exact_affine(c, e->b, seen, n);
        return mt_te_is_const_int(e->b, &k) && exact_affine(c, e->a, seen, n);
    case TE_FLOORDIV: /* monotone: the ends of its operand's range give its own */
        return mt_te_is_const_int(e->b, &k) && k > 0 && exact_affine(c, e->a, seen, n);
    case TE_NEG: case TE_CAST: return exact_affine(c, e->a, seen, n);
    default: return false;
    }
}

/* The bounds check of one index: a constant, or an integer expression of
 * loop and block variables (outside any if or T.where) that is provably
 * out of the dim: its range, by interval arithmetic over the enclosing
 * loops (tir/arith.h), leaves the dim where the range is exact
 * (exact_affine), or lies wholly outside it. An index whose range is only
 * an over-approximation -- a loop clamped to a tail, T.min(16, 60 - i0 *
 * 16), or a block variable declared over more than its loop reaches -- may
 * stay in bounds on every iteration: it compiles, and the function is
 * marked unproven, which has the check_bounds pass check it at run time
 * even without --check-bounds (on the CPU and the emulated GPU). */
void mt_fa_check_bound(fctx *c, const mt_tbuffer *b, int d, const mt_texpr *ix, mt_loc loc) {
    int64_t dim, k;
    if (c->hint || !mt_te_is_const_int(b->shape[d], &dim)) return; /* a prefetch's address may be anywhere */
    if (mt_te_is_const_int(ix, &k)) {
        if (k < 0 || k >= dim)
            mt_fail(MT_ERR_SHAPE, loc, "index %lld is out of bounds for dim %d of '%s' (size %lld)",
                    (long long)k, d, b->name, (long long)dim);
        return;
    }
    if (c->guarded || ix->lanes != 1) return;
    mt_range r = range_over_loops(c, ix);
    if (r.lo <= mt_dtype_min(ix->dtype) || r.hi >= mt_dtype_max(ix->dtype) || r.lo > r.hi) return;
    if (r.lo >= 0 && r.hi < dim) return;
    const mt_tvar *seen[16];
    int nseen = 0;
    if (!exact_affine(c, ix, seen, &nseen) && r.hi >= 0 && r.lo < dim) {
        mt_fa_unproven(c, loc); /* the check_bounds pass checks it at run time */
        return;
    }
    mt_fail(MT_ERR_SHAPE, loc, "index '%s' ranges over [%lld, %lld), out of bounds for dim %d of '%s' (size %lld)",
            ix->kind == TE_VAR ? ix->var->name : mt_texpr_print(c->a, ix), (long long)r.lo, (long long)r.hi + 1, d,
            b->name, (long long)dim);
}

/* The elements [o, o + span] that a T.wmma_* operand b[...] (flat offset o)
 * reaches -- a fragment's 256, a tile's 16 rows of ldm -- must provably lie
 * in b (constant dims; interval arithmetic over the enclosing loops): the
 * operation touches all of them, and neither the run-time checks nor the
 * verifier see past the first. */
void mt_fa_wmma_footprint(fctx *c, const mt_texpr *op, int64_t span, mt_loc loc, const char *fn) {
    if (op->kind != TE_LOAD || c->guarded) return; /* the verifier says what an operand must be,
                                                     * and refuses one under an if */
    const mt_tbuffer *b = op->buf;
    int64_t size = 1, dim;
    mt_texpr *flat = mt_te_i64(c->a, 0);
    for (int d = 0; d < b->ndim; d++) {
        if (!mt_te_is_const_int(b->shape[d], &dim)) {
            size = -1;
            break;
        }
        flat = mt_te_bin(c->a, TE_ADD, mt_te_bin(c->a, TE_MUL, flat, mt_te_i64(c->a, dim)),
                         mt_te_cast(c->a, MT_INT64, op->args[d]));
        size *= dim;
    }
    if (size > 0 && mt_scope_is_fragment(b->scope) && size % 256) return; /* the verifier's */
    for (int i = 0; i < c->let_vars.len; i++) /* lets, latest first: a value uses earlier ones */
        flat = mt_tsubst_expr(c->a, flat, c->let_vars.data + c->let_vars.len - 1 - i,
                              c->let_values.data + c->let_vars.len - 1 - i, 1);
    mt_range r = size > 0 ? range_over_loops(c, flat) : (mt_range){1, 0};
    if (size > 0 && r.lo <= r.hi && r.lo >= 0 && r.hi + span < size) return;
    mt_fail(MT_ERR_SHAPE, loc, "T.%s reaches %lld elements of '%s' from this one: not provably inside it%s", fn,
            (long long)span + 1, b->name, size > 0 ? "" : " (its dims are not constants)");
}

/* Does the value bound to a block variable stay inside its declared domain
 * [0, dom) over the enclosing loops? Indices of the variable are checked
 * over the domain; a value outside it (T.axis.spatial(60, i0 * 16 + i1)
 * over 4 x 16) would reach what those checks did not cover. */
bool mt_fa_binding_in_domain(fctx *c, const mt_texpr *val, const mt_texpr *dom) {
    int64_t d, lo;
    const loop_info *l = val->kind == TE_VAR ? mt_fa_loop_of(c, val->var) : NULL;
    if (l && mt_te_is_const_int(l->min, &lo) && lo == 0 && mt_texpr_equal(l->extent, dom))
        return true; /* a loop from 0 over the domain itself: T.grid(n, ..) under T.axis.remap */
    if (!mt_te_is_const_int(dom, &d)) return false;
    mt_range r = range_over_loops(c, val);
    return r.lo >= 0 && r.hi < d;
}
