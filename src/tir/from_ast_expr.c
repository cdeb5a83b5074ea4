/*
 * from_ast_expr.c -- the expressions of a `@T.prim_func` (see from_ast.h;
 * the files of the walk: from_ast_internal.h).
 *
 * Expressions are typed as they are built. A literal is weak (as in the
 * graph language): it takes the dtype of the other operand (`x[i] * 2`
 * multiplies float32 by 2.0); two weak literals are int64, or float32 when
 * one is a float. Operands of two different dtypes are an error that names
 * both. `-3` and `-1.5` are immediates (the printer writes negative
 * immediates so).
 *
 * Each expression form has a function with its grammar rule above it; a
 * call T.f(...) dispatches on f: a dtype (an immediate or a cast), a math
 * intrinsic, T.shfl_xor, the T.wmma_* operations (whose operands' footprint
 * the bounds proofs check, from_ast_buffer.c), T.prefetch (an element as an
 * address, never bounds-checked), T.min/max/truncdiv/floordiv/
 * floormod, casts, T.Ramp/T.Broadcast and T.Select. A load's indices are
 * bounds-checked as they are built (mt_fa_check_bound).
 */
#include <math.h>
#include <string.h>

#include "support/common.h"
#include "tir/from_ast_internal.h"

/* ---- literals and dtypes -------------------------------------------------- */

val mt_fa_strong(mt_texpr *e) {
    val v = {e, false};
    return v;
}

/* A weak literal given dtype dt. */
mt_texpr *mt_fa_literal_as(fctx *c, mt_texpr *lit, mt_dtype dt, mt_loc loc) {
    if (lit->kind == TE_FLOAT) {
        if (!mt_dtype_is_float(dt))
            mt_fail(MT_ERR_TYPE, loc, "float literal %g used with a %s operand", lit->fval, mt_dtype_str(dt));
        return mt_te_float(c->a, dt, lit->fval);
    }
    if (mt_dtype_is_float(dt)) return mt_te_float(c->a, dt, (double)lit->ival);
    if (dt == MT_BOOL) mt_fail(MT_ERR_TYPE, loc, "integer literal %lld used as a bool", (long long)lit->ival);
    if (lit->ival < mt_dtype_min(dt) || lit->ival > mt_dtype_max(dt))
        mt_fail(MT_ERR_TYPE, loc, "integer literal %lld is out of range for %s", (long long)lit->ival,
                mt_dtype_str(dt));
    return mt_te_int(c->a, dt, lit->ival);
}

/* v as a value of its own: a weak literal takes int64 or float32. */
mt_texpr *mt_fa_settle(fctx *c, val v, mt_loc loc) {
    if (!v.weak) return v.e;
    return mt_fa_literal_as(c, v.e, v.e->kind == TE_FLOAT ? MT_FLOAT32 : MT_INT64, loc);
}

/* v for a place of dtype dt: a weak literal converts, else dtypes must agree. */
mt_texpr *mt_fa_as_dtype(fctx *c, val v, mt_dtype dt, mt_loc loc, const char *what) {
    if (v.weak) return mt_fa_literal_as(c, v.e, dt, loc);
    if (v.e->dtype != dt)
        mt_fail(MT_ERR_TYPE, loc, "%s is %s, expected %s", what, mt_dtype_str(v.e->dtype), mt_dtype_str(dt));
    return v.e;
}

/* Gives two operands one dtype (a weak one takes the other's). */
void mt_fa_unify(fctx *c, val *x, val *y, mt_loc loc, const char *op) {
    if (x->weak && y->weak) {
        bool fl = x->e->kind == TE_FLOAT || y->e->kind == TE_FLOAT;
        mt_dtype dt = fl ? MT_FLOAT32 : MT_INT64;
        x->e = mt_fa_literal_as(c, x->e, dt, loc);
        y->e = mt_fa_literal_as(c, y->e, dt, loc);
    } else if (x->weak) {
        x->e = mt_fa_literal_as(c, x->e, y->e->dtype, loc);
    } else if (y->weak) {
        y->e = mt_fa_literal_as(c, y->e, x->e->dtype, loc);
    }
    x->weak = y->weak = false;
    if (x->e->dtype != y->e->dtype)
        mt_fail(MT_ERR_TYPE, loc, "operands of '%s' have different dtypes: %s and %s; convert one with T.Cast",
                op, mt_dtype_str(x->e->dtype), mt_dtype_str(y->e->dtype));
}

mt_texpr *mt_fa_int_expr(fctx *c, const mt_ast *e, const char *what) {
    val v = mt_fa_expr(c, e);
    if (v.weak && v.e->kind == TE_INT) return mt_te_i64(c->a, v.e->ival);
    if (v.weak || !mt_dtype_is_int(v.e->dtype))
        mt_fail(MT_ERR_TYPE, e->loc, "%s must be an integer, got %s", what,
                v.weak ? "a float literal" : mt_dtype_str(v.e->dtype));
    return v.e;
}

/* Loop bounds, extents, dims: int64. */
mt_texpr *mt_fa_i64_expr(fctx *c, const mt_ast *e, const char *what) {
    mt_texpr *x = mt_fa_int_expr(c, e, what);
    if (x->dtype != MT_INT64)
        mt_fail(MT_ERR_TYPE, e->loc, "%s must be int64, got %s; convert with T.Cast(\"int64\", ...)", what,
                mt_dtype_str(x->dtype));
    return x;
}

mt_texpr *mt_fa_bool_expr(fctx *c, const mt_ast *e, const char *what) {
    val v = mt_fa_expr(c, e);
    if (v.weak || v.e->dtype != MT_BOOL)
        mt_fail(MT_ERR_TYPE, e->loc, "%s must be a bool, got %s", what,
                v.weak ? "a number" : mt_dtype_str(v.e->dtype));
    return v.e;
}

/* A positive int literal (lanes). */
static int lanes_arg(const mt_ast *e) {
    if (e->kind != AST_INT || e->ival < 2 || e->ival > 64)
        mt_fail(MT_ERR_TYPE, e->loc, "lanes must be an integer literal from 2 to 64");
    return (int)e->ival;
}

/* ---- expressions ---------------------------------------------------------- */

/* atom: NAME */
static val name_expr(fctx *c, const mt_ast *e) {
    const sym *s = mt_fa_lookup(c, e->name);
    if (!s && c->in_params) return mt_fa_strong(mt_fa_sym_dim(c, e->name, e->loc));
    if (!s) mt_fail(MT_ERR_NAME, e->loc, "unknown name '%s'", e->name);
    if (s->buf) mt_fail(MT_ERR_TYPE, e->loc, "buffer '%s' used as a value; index it: %s[...]", e->name, e->name);
    if (s->var) mt_fa_check_reach(c, s->var, e->loc);
    if (!s->var) return mt_fa_strong(s->value);
    mt_texpr *v = mt_te_var(c->a, s->var);
    if (s->lanes > 1) v->lanes = s->lanes;
    return mt_fa_strong(v);
}

/* The indices of b[...] (a tuple, `()` for rank 0, or one expression). */
mt_texpr **mt_fa_indices(fctx *c, const mt_tbuffer *b, const mt_ast *sub, int *n) {
    const mt_ast *ix = sub->rhs;
    const mt_ast_list *items = ix->kind == AST_TUPLE ? &ix->items : NULL;
    int k = items ? items->len : 1;
    if (k != b->ndim)
        mt_fail(MT_ERR_SHAPE, sub->loc, "buffer '%s' has %d dim%s, indexed with %d", b->name, b->ndim,
                b->ndim == 1 ? "" : "s", k);
    mt_texpr **out = MT_NEW_ARRAY(c->a, mt_texpr *, k > 0 ? k : 1);
    for (int i = 0; i < k; i++) {
        const mt_ast *e = items ? items->data[i] : ix;
        if (e->kind == AST_SLICE)
            mt_fail(MT_ERR_TYPE, e->loc, "a slice is an index only in T.reads and T.writes");
        bool hint = c->hint; /* b is a prefetch's address; loads in its indices are accesses */
        c->hint = false;
        out[i] = mt_fa_int_expr(c, e, "an index");
        c->hint = hint;
        mt_fa_check_bound(c, b, i, out[i], e->loc);
    }
    *n = k;
    return out;
}

/* subscript: NAME '[' indices ']' */
static mt_texpr *load(fctx *c, const mt_ast *e) {
    mt_tbuffer *b = mt_fa_buffer_named(c, e->lhs, "an indexed value");
    int n;
    mt_texpr **ix = mt_fa_indices(c, b, e, &n);
    mt_texpr *ld = mt_te_load(c->a, b, ix, n);
    ld->loc = e->lhs->loc; /* the buffer's name */
    return ld;
}

mt_texpr_kind mt_fa_binop_kind(fctx *c, const mt_ast *e, mt_dtype dt) {
    switch (e->op) {
    case TK_PLUS: return TE_ADD;
    case TK_MINUS: return TE_SUB;
    case TK_STAR: return TE_MUL;
    case TK_DSLASH: return TE_FLOORDIV;
    case TK_PERCENT: return TE_FLOORMOD;
    case TK_SLASH:
        if (!mt_dtype_is_float(dt))
            mt_fail(MT_ERR_TYPE, e->loc, "'/' of %s operands; use '//' (floor) or T.truncdiv", mt_dtype_str(dt));
        return TE_DIV;
    default:
        (void)c;
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "operator '%s' is not supported in loop functions%s",
                mt_fa_op_str(e->op), e->op == TK_DSTAR ? "; use T.pow" : "");
    }
}

/* binop: expr op expr */
static val binop(fctx *c, const mt_ast *e) {
    const char *op = mt_fa_op_str(e->op);
    if (e->op != TK_PLUS && e->op != TK_MINUS && e->op != TK_STAR && e->op != TK_SLASH &&
        e->op != TK_DSLASH && e->op != TK_PERCENT)
        mt_fa_binop_kind(c, e, MT_FLOAT32); /* fails */
    val x = mt_fa_expr(c, e->lhs), y = mt_fa_expr(c, e->rhs);
    mt_fa_unify(c, &x, &y, e->loc, op);
    mt_texpr_kind k = mt_fa_binop_kind(c, e, x.e->dtype);
    if (x.e->dtype == MT_BOOL) mt_fail(MT_ERR_TYPE, e->loc, "arithmetic '%s' on bool operands", op);
    return mt_fa_strong(mt_te_bin(c->a, k, x.e, y.e));
}

/* unary: ('-' | '+' | 'not') expr */
static val unary(fctx *c, const mt_ast *e) {
    val x = mt_fa_expr(c, e->lhs);
    if (e->op == TK_PLUS) return x;
    if (e->op == TK_NOT) {
        if (x.weak || x.e->dtype != MT_BOOL) mt_fail(MT_ERR_TYPE, e->loc, "'not' of a non-bool operand");
        return mt_fa_strong(mt_te_unary(c->a, TE_NOT, x.e));
    }
    if (e->op != TK_MINUS)
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "operator '%s' is not supported in loop functions", mt_fa_op_str(e->op));
    mt_texpr *v = x.e;
    if (x.weak && v->kind == TE_INT && v->ival != INT64_MIN) { /* a negative literal */
        val r = {mt_te_int(c->a, v->dtype, -v->ival), x.weak};
        return r;
    }
    if (x.weak && v->kind == TE_FLOAT) {
        val r = {mt_te_float(c->a, v->dtype, -v->fval), true};
        return r;
    }
    if (v->dtype == MT_BOOL) mt_fail(MT_ERR_TYPE, e->loc, "arithmetic negation of a bool");
    return mt_fa_strong(mt_te_unary(c->a, TE_NEG, v));
}

/* boolop: expr ('and' | 'or') expr ... */
static val boolop(fctx *c, const mt_ast *e) {
    mt_texpr_kind k = e->op == TK_AND ? TE_AND : TE_OR;
    const char *what = e->op == TK_AND ? "an operand of 'and'" : "an operand of 'or'";
    mt_texpr *r = mt_fa_bool_expr(c, e->items.data[0], what);
    for (int i = 1; i < e->items.len; i++) r = mt_te_bin(c->a, k, r, mt_fa_bool_expr(c, e->items.data[i], what));
    return mt_fa_strong(r);
}

/* compare: expr cmp expr (one operator: chains are not accepted) */
static val compare(fctx *c, const mt_ast *e) {
    if (e->items.len != 1)
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "chained comparisons are not supported in loop functions; use 'and'");
    static const struct { mt_tok_kind tk; mt_texpr_kind k; } ops[] = {
        {TK_LT, TE_LT}, {TK_LE, TE_LE}, {TK_GT, TE_GT}, {TK_GE, TE_GE}, {TK_EQ, TE_EQ}, {TK_NE, TE_NE}};
    int i = 0;
    while (i < MT_ARRAY_LEN(ops) && ops[i].tk != e->cmp_ops[0]) i++;
    if (i == MT_ARRAY_LEN(ops) || (e->cmp_neg && e->cmp_neg[0]))
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "operator '%s' is not supported in loop functions",
                mt_fa_op_str(e->cmp_ops[0]));
    val x = mt_fa_expr(c, e->lhs), y = mt_fa_expr(c, e->items.data[0]);
    mt_fa_unify(c, &x, &y, e->loc, mt_fa_op_str(e->cmp_ops[0]));
    return mt_fa_strong(mt_te_bin(c->a, ops[i].k, x.e, y.e));
}

static mt_texpr *select_of(fctx *c, const mt_ast *at, const mt_ast *cond, const mt_ast *a, const mt_ast *b) {
    mt_texpr *cd = mt_fa_bool_expr(c, cond, "a condition");
    val x = mt_fa_expr(c, a), y = mt_fa_expr(c, b);
    mt_fa_unify(c, &x, &y, at->loc, "T.Select");
    return mt_te_select(c->a, cd, x.e, y.e);
}

/* T.float32(x) / T.int32(3) / T.float32("inf"): an immediate, or a cast. */
static val dtype_call(fctx *c, const mt_ast *e, const char *fn, mt_dtype dt) {
    mt_fa_arity(e, fn, 1, 1);
    mt_fa_only_keywords(e, fn, NULL);
    const mt_ast *x = e->items.data[0];
    if (x->kind == AST_STR) {
        double v = strcmp(x->str, "inf") == 0 ? INFINITY : strcmp(x->str, "-inf") == 0 ? -INFINITY
                 : strcmp(x->str, "nan") == 0 ? NAN : 0;
        if (!mt_dtype_is_float(dt) || v == 0)
            mt_fail(MT_ERR_TYPE, x->loc, "T.%s(\"%s\"): only float dtypes take \"inf\", \"-inf\" or \"nan\"", fn, x->str);
        return mt_fa_strong(mt_te_float(c->a, dt, v));
    }
    val v = mt_fa_expr(c, x);
    if (v.weak) return mt_fa_strong(mt_fa_literal_as(c, v.e, dt, x->loc));
    if (x->kind == AST_BOOL) return mt_fa_strong(dt == MT_BOOL ? v.e : mt_te_cast(c->a, dt, v.e));
    return mt_fa_strong(mt_te_cast(c->a, dt, v.e));
}

/* Math intrinsics take float operands. */
static val intrin_call(fctx *c, const mt_ast *e, const char *fn, mt_intrin in) {
    int n = mt_intrin_arity(in);
    mt_fa_arity(e, fn, n, n);
    mt_fa_only_keywords(e, fn, NULL);
    val v[3] = {{NULL, false}, {NULL, false}, {NULL, false}};
    for (int i = 0; i < n; i++) v[i] = mt_fa_expr(c, e->items.data[i]);
    for (int i = 1; i < n; i++) mt_fa_unify(c, &v[0], &v[i], e->loc, fn);
    if (n == 1) v[0].e = mt_fa_settle(c, v[0], e->loc);
    if (!mt_dtype_is_float(v[0].e->dtype))
        mt_fail(MT_ERR_TYPE, e->loc, "T.%s takes float operands, got %s", fn, mt_dtype_str(v[0].e->dtype));
    mt_texpr *args[3];
    for (int i = 0; i < n; i++) args[i] = i ? v[i].e : v[0].e;
    return mt_fa_strong(mt_te_call(c->a, in, args, n));
}

/* T.shfl_xor(value, lane_mask, width): integer literals for the mask and
 * the width (the verifier checks where it stands and their values). */
static val shfl_call(fctx *c, const mt_ast *e, const char *fn) {
    mt_fa_arity(e, fn, 3, 3);
    mt_fa_only_keywords(e, fn, NULL);
    mt_texpr *v = mt_fa_settle(c, mt_fa_expr(c, e->items.data[0]), e->loc);
    int k[2];
    for (int i = 0; i < 2; i++) {
        const mt_ast *x = e->items.data[i + 1];
        if (x->kind != AST_INT || x->ival < 0 || x->ival > 1024)
            mt_fail(MT_ERR_TYPE, x->loc, "T.%s takes integer literals as its lane mask and width", fn);
        k[i] = (int)x->ival;
    }
    return mt_fa_strong(mt_te_shfl_xor(c->a, v, k[0], k[1]));
}

/* T.wmma_*(...): addresses (buffer loads) and values as written, the ldm
 * an integer literal (the verifier checks the rest). */
static val wmma_call(fctx *c, const mt_ast *e, const char *fn, mt_intrin in) {
    int n = mt_intrin_arity(in);
    mt_fa_arity(e, fn, n, n);
    mt_fa_only_keywords(e, fn, NULL);
    mt_texpr *args[3] = {NULL, NULL, NULL};
    for (int i = 0; i < n; i++) {
        const mt_ast *x = e->items.data[i];
        bool ldm = i == 2 && in != IN_WMMA_MMA;
        if (ldm && (x->kind != AST_INT || x->ival < 0 || x->ival > (1 << 20)))
            mt_fail(MT_ERR_TYPE, x->loc, "T.%s takes an integer literal as its leading dimension", fn);
        args[i] = ldm ? mt_te_int(c->a, MT_INT32, x->ival)
                      : in == IN_WMMA_FILL && i == 1 ? mt_fa_settle(c, mt_fa_expr(c, x), x->loc) : mt_fa_expr(c, x).e;
    }
    if (in == IN_WMMA_FILL) args[1] = mt_te_cast(c->a, MT_FLOAT32, args[1]);
    /* fragments: 256 elements; tiles (load_a/b's source, store's destination): 16 rows of ldm */
    int64_t ldm = 0;
    if (args[2] && in != IN_WMMA_MMA) mt_te_is_const_int(args[2], &ldm);
    for (int i = 0; i < n; i++) {
        bool tile = (i == 1 && (in == IN_WMMA_LOAD_A || in == IN_WMMA_LOAD_B)) || (i == 0 && in == IN_WMMA_STORE);
        bool frag = !tile && !(i == 2 && in != IN_WMMA_MMA) && !(i == 1 && in == IN_WMMA_FILL);
        if (tile || frag) mt_fa_wmma_footprint(c, args[i], tile ? 15 * ldm + 15 : 255, e->items.data[i]->loc, fn);
    }
    return mt_fa_strong(mt_te_wmma(c->a, in, args[0], args[1], args[2]));
}

/* T.prefetch(buf[i, ..]): an element of a buffer, as an address (no
 * bounds check: a prefetch reads nothing; the verifier checks its place). */
static val prefetch_call(fctx *c, const mt_ast *e, const char *fn) {
    if (e != c->stmt_call)
        mt_fail(MT_ERR_TYPE, e->loc, "T.%s is a statement (T.%s(buf[i]) on its own line), not a value", fn, fn);
    c->stmt_call = NULL;
    mt_fa_arity(e, fn, 1, 1);
    mt_fa_only_keywords(e, fn, NULL);
    const mt_ast *x = e->items.data[0];
    bool hint = c->hint;
    c->hint = true;
    mt_texpr *v = mt_fa_expr(c, x).e;
    c->hint = hint;
    if (v->kind != TE_LOAD || v->lanes != 1)
        mt_fail(MT_ERR_TYPE, x->loc, "T.%s takes one element of a buffer (buf[i, ...]), not %s", fn,
                v->kind == TE_LOAD ? "a vector of them" : "a value");
    return mt_fa_strong(mt_te_prefetch(c->a, v));
}

/* T.min / T.max / T.truncdiv / T.floordiv / T.floormod (a, b) */
static val binary_call(fctx *c, const mt_ast *e, const char *fn, mt_texpr_kind k) {
    mt_fa_arity(e, fn, 2, 2);
    mt_fa_only_keywords(e, fn, NULL);
    val x = mt_fa_expr(c, e->items.data[0]), y = mt_fa_expr(c, e->items.data[1]);
    mt_fa_unify(c, &x, &y, e->loc, fn);
    if (k == TE_DIV && !mt_dtype_is_int(x.e->dtype))
        mt_fail(MT_ERR_TYPE, e->loc, "T.truncdiv takes integer operands, got %s", mt_dtype_str(x.e->dtype));
    if (x.e->dtype == MT_BOOL) mt_fail(MT_ERR_TYPE, e->loc, "T.%s of bool operands", fn);
    return mt_fa_strong(mt_te_bin(c->a, k, x.e, y.e));
}

/* T.Cast("float32", x) and T.cast(x, "float32") */
static val cast_call(fctx *c, const mt_ast *e, const char *fn) {
    mt_fa_arity(e, fn, 2, 2);
    mt_fa_only_keywords(e, fn, NULL);
    bool tvm = strcmp(fn, "Cast") == 0;
    mt_dtype dt = mt_fa_dtype_arg(c, e->items.data[tvm ? 0 : 1]);
    const mt_ast *x = e->items.data[tvm ? 1 : 0];
    val v = mt_fa_expr(c, x);
    if (v.weak) return mt_fa_strong(mt_fa_literal_as(c, v.e, dt, x->loc));
    if (v.e->dtype == dt) { /* kept, as written (mt_te_cast would drop it) */
        mt_texpr *k = mt_te_cast(c->a, dt == MT_INT64 ? MT_INT32 : MT_INT64, v.e);
        k->dtype = dt;
        return mt_fa_strong(k);
    }
    return mt_fa_strong(mt_te_cast(c->a, dt, v.e));
}

/* T.Ramp(base, stride, lanes) / T.Broadcast(value, lanes) */
static val vector_call(fctx *c, const mt_ast *e, const char *fn) {
    bool ramp = strcmp(fn, "Ramp") == 0;
    mt_fa_arity(e, fn, ramp ? 3 : 2, ramp ? 3 : 2);
    mt_fa_only_keywords(e, fn, NULL);
    int lanes = lanes_arg(e->items.data[ramp ? 2 : 1]);
    if (!ramp) return mt_fa_strong(mt_te_broadcast(c->a, mt_fa_settle(c, mt_fa_expr(c, e->items.data[0]), e->loc), lanes));
    val b = mt_fa_expr(c, e->items.data[0]), s = mt_fa_expr(c, e->items.data[1]);
    mt_fa_unify(c, &b, &s, e->loc, fn);
    if (!mt_dtype_is_int(b.e->dtype)) mt_fail(MT_ERR_TYPE, e->loc, "T.Ramp of %s", mt_dtype_str(b.e->dtype));
    return mt_fa_strong(mt_te_ramp(c->a, b.e, s.e, lanes));
}

/* T.Shuffle([x, y], [lane, ...]): one or two vectors of one dtype and
 * width, and the lanes picked from their concatenation (integer literals). */
static val shuffle_call(fctx *c, const mt_ast *e, const char *fn) {
    mt_fa_arity(e, fn, 2, 2);
    mt_fa_only_keywords(e, fn, NULL);
    const mt_ast *vs = e->items.data[0], *ls = e->items.data[1];
    if (vs->kind != AST_LIST || vs->items.len < 1 || vs->items.len > 2)
        mt_fail(MT_ERR_SYNTAX, vs->loc, "T.Shuffle takes a list of one or two vectors");
    if (ls->kind != AST_LIST || ls->items.len < 1 || ls->items.len > 64)
        mt_fail(MT_ERR_SYNTAX, ls->loc, "T.Shuffle takes a list of 1 to 64 lanes");
    mt_texpr *v[2] = {NULL, NULL};
    for (int i = 0; i < (int)vs->items.len; i++) {
        const mt_ast *x = vs->items.data[i];
        v[i] = mt_fa_expr(c, x).e;
        if (v[i]->lanes < 2) mt_fail(MT_ERR_TYPE, x->loc, "T.Shuffle of a scalar (a vector of 2 lanes or more)");
        if (i && (v[i]->dtype != v[0]->dtype || v[i]->lanes != v[0]->lanes))
            mt_fail(MT_ERR_TYPE, x->loc, "T.Shuffle of a %s x %d and a %s x %d vector (one dtype and width)",
                    mt_dtype_str(v[0]->dtype), v[0]->lanes, mt_dtype_str(v[i]->dtype), v[i]->lanes);
    }
    int n = (int)vs->items.len * v[0]->lanes, lane[64];
    for (int i = 0; i < (int)ls->items.len; i++) {
        const mt_ast *l = ls->items.data[i];
        if (l->kind != AST_INT || l->ival < 0 || l->ival >= n)
            mt_fail(MT_ERR_TYPE, l->loc, "a lane of T.Shuffle is an integer literal from 0 to %d", n - 1);
        lane[i] = (int)l->ival;
    }
    return mt_fa_strong(mt_te_shuffle(c->a, v[0], v[1], lane, (int)ls->items.len));
}

/* call: 'T' '.' NAME '(' args ')' */
static val call_expr(fctx *c, const mt_ast *e) {
    const char *fn = mt_fa_t_call(c, e);
    if (!fn) {
        const char *n = e->lhs->kind == AST_NAME ? e->lhs->name : "this";
        mt_fail(MT_ERR_NAME, e->loc, "unknown function '%s' in a loop function (functions here are T.exp, T.max, ...)", n);
    }
    mt_dtype dt;
    mt_intrin in;
    if (mt_dtype_from_str(fn, &dt) == 0) return dtype_call(c, e, fn, dt);
    if (mt_intrin_from_name(fn, &in) == 0)
        return in == IN_SHFL_XOR ? shfl_call(c, e, fn)
               : in == IN_PREFETCH   ? prefetch_call(c, e, fn)
               : mt_intrin_is_wmma(in) ? wmma_call(c, e, fn, in) : intrin_call(c, e, fn, in);
    if (!strcmp(fn, "Cast") || !strcmp(fn, "cast")) return cast_call(c, e, fn);
    if (!strcmp(fn, "min")) return binary_call(c, e, fn, TE_MIN);
    if (!strcmp(fn, "max")) return binary_call(c, e, fn, TE_MAX);
    if (!strcmp(fn, "truncdiv")) return binary_call(c, e, fn, TE_DIV);
    if (!strcmp(fn, "floordiv")) return binary_call(c, e, fn, TE_FLOORDIV);
    if (!strcmp(fn, "floormod")) return binary_call(c, e, fn, TE_FLOORMOD);
    if (!strcmp(fn, "Ramp") || !strcmp(fn, "Broadcast")) return vector_call(c, e, fn);
    if (!strcmp(fn, "Shuffle")) return shuffle_call(c, e, fn);
    if (!strcmp(fn, "Select") || !strcmp(fn, "if_then_else")) {
        mt_fa_arity(e, fn, 3, 3);
        mt_fa_only_keywords(e, fn, NULL);
        return mt_fa_strong(select_of(c, e, e->items.data[0], e->items.data[1], e->items.data[2]));
    }
    static const char *const stmt_only[] = {"axis.spatial", "axis.reduce", "axis.remap", "alloc_buffer",
                                            "reads", "writes", "where", "block", "init", "launch",
                                            "evaluate", "check_bounds", "func_attr", "grid", "serial", "parallel",
                                            "vectorized", "unroll", "thread_binding", "Buffer"};
    for (int i = 0; i < MT_ARRAY_LEN(stmt_only); i++)
        if (!strcmp(fn, stmt_only[i]))
            mt_fail(MT_ERR_SYNTAX, e->loc, "T.%s is not an expression here", fn);
    mt_fail(MT_ERR_NAME, e->loc, "unknown function 'T.%s'", fn);
}

/* expr: the expression forms above, typed. */
val mt_fa_expr(fctx *c, const mt_ast *e) {
    mt_fa_enter(c, e->loc);
    val v = {NULL, false};
    switch (e->kind) {
    case AST_NAME: v = name_expr(c, e); break;
    case AST_INT: v.e = mt_te_i64(c->a, e->ival), v.weak = true; break;
    case AST_FLOAT: v.e = mt_te_float(c->a, MT_FLOAT64, e->fval), v.weak = true; break;
    case AST_BOOL: v = mt_fa_strong(mt_te_int(c->a, MT_BOOL, e->ival)); break;
    case AST_BINOP: v = binop(c, e); break;
    case AST_UNARY: v = unary(c, e); break;
    case AST_BOOLOP: v = boolop(c, e); break;
    case AST_COMPARE: v = compare(c, e); break;
    case AST_IFEXP: v = mt_fa_strong(select_of(c, e, e->cond, e->lhs, e->rhs)); break;
    case AST_SUBSCRIPT: v = mt_fa_strong(load(c, e)); break;
    case AST_CALL: v = call_expr(c, e); break;
    case AST_STR: mt_fail(MT_ERR_TYPE, e->loc, "a string is not a value in a loop function");
    case AST_LAMBDA:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "lambda expressions are only allowed as a schedule's index map "
                                            "(sch.transform_layout)");
    default: mt_fail(MT_ERR_UNSUPPORTED, e->loc, "this expression is not supported in loop functions");
    }
    mt_fa_leave(c);
    return v;
}

