/*
 * builder_expr.c -- expressions of graph functions, AST to bindings.
 *
 * Each expression node is checked as it is built (names, arity, dtypes,
 * broadcasting), so a diagnostic points at the exact operator or call that
 * is wrong. Literals become weak scalar constants (graph.h); the op's rule
 * settles their dtype against the other operand.
 */
#include <string.h>

#include "graph/builder_internal.h"
#include "support/common.h"

mt_gvar *mt_b_emit(builder *b, mt_op_id id, mt_gvar **args, int nargs, const mt_gattrs *attrs,
                   mt_loc loc, const char *name) {
    const mt_op_def *op = mt_op_get(id);
    mt_gtype t = mt_op_infer(b->arena, op, args, nargs, attrs, loc);
    mt_gvar *out = mt_gvar_new(b->arena, name ? mt_b_fresh_name(b, name) : mt_b_temp_name(b), &t, loc);
    mt_gblock_add(b->arena, b->block, mt_gbinding_op(b->arena, out, op, args, nargs, attrs, loc));
    return out;
}

static const char *spelling(mt_tok_kind k) { return mt_tok_kind_str(k); }

static mt_gvar *binop(builder *b, const mt_ast *e, const char *name) {
    mt_op_id id;
    switch (e->op) {
    case TK_PLUS: id = MT_OP_ADD; break;
    case TK_MINUS: id = MT_OP_SUBTRACT; break;
    case TK_STAR: id = MT_OP_MULTIPLY; break;
    case TK_SLASH: id = MT_OP_DIVIDE; break;
    case TK_DSLASH: case TK_PERCENT: case TK_DSTAR: case TK_AT:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "operator '%s' is not supported yet", spelling(e->op));
    default:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "operator '%s' is not supported on tensors", spelling(e->op));
    }
    mt_gvar *args[2] = {mt_b_expr(b, e->lhs), mt_b_expr(b, e->rhs)};
    return mt_b_emit(b, id, args, 2, NULL, e->loc, name);
}

static mt_gvar *unary(builder *b, const mt_ast *e, const char *name) {
    if (e->op == TK_PLUS) return mt_b_expr(b, e->lhs);
    if (e->op != TK_MINUS)
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "operator '%s' is not supported yet", spelling(e->op));
    mt_gvar *x = mt_b_expr(b, e->lhs);
    if (x->is_const) { /* fold -literal: it stays a constant (and weak) */
        if (mt_dtype_is_float(x->type.dtype))
            return mt_gvar_const_float(b->arena, x->type.dtype, -x->fconst, x->weak, e->loc);
        return mt_gvar_const_int(b->arena, x->type.dtype, -x->iconst, x->weak, e->loc);
    }
    return mt_b_emit(b, MT_OP_NEGATIVE, &x, 1, NULL, e->loc, name);
}

static mt_gvar *call(builder *b, const mt_ast *e, const char *name) {
    const mt_ast *callee = e->lhs;
    if (callee->kind != AST_NAME)
        mt_fail(MT_ERR_UNSUPPORTED, callee->loc, "only calls of library functions by name are supported yet");
    const char *fname = callee->name;
    mt_gvar *v = mt_b_library_call(b, e, fname, name);
    if (v) return v;
    if (mt_b_find_def(b, fname))
        mt_fail(MT_ERR_UNSUPPORTED, callee->loc, "calling function '%s' is not supported yet", fname);
    if (mt_b_is_planned_function(fname))
        mt_fail(MT_ERR_UNSUPPORTED, callee->loc, "library function '%s' is not supported yet", fname);
    mt_fail(MT_ERR_NAME, callee->loc, "unknown function '%s'", fname);
}

mt_gvar *mt_b_expr_named(builder *b, const mt_ast *e, const char *name) {
    switch (e->kind) {
    case AST_NAME: {
        mt_gvar *v = mt_b_lookup(b, e->name);
        if (v) return v;
        const mt_op_def *op = mt_op_lookup(e->name);
        if ((op && op->signature) || mt_b_is_planned_function(e->name))
            mt_fail(MT_ERR_TYPE, e->loc, "'%s' is a function; call it with arguments", e->name);
        mt_fail(MT_ERR_NAME, e->loc, "unknown name '%s'", e->name);
    }
    case AST_INT:
        return mt_gvar_const_int(b->arena, MT_INT32, e->ival, true, e->loc);
    case AST_FLOAT:
        return mt_gvar_const_float(b->arena, MT_FLOAT32, e->fval, true, e->loc);
    case AST_BOOL:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "bool literals are not supported in tensor expressions yet");
    case AST_STR:
        mt_fail(MT_ERR_TYPE, e->loc, "a string is not a tensor value");
    case AST_NONE:
        mt_fail(MT_ERR_TYPE, e->loc, "None is not a tensor value");
    case AST_BINOP:
        return binop(b, e, name);
    case AST_UNARY:
        return unary(b, e, name);
    case AST_CALL:
        return call(b, e, name);
    case AST_TUPLE:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "tuple values are only allowed in 'return' and tuple assignment");
    case AST_COMPARE:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "comparisons are not supported yet");
    case AST_BOOLOP:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "'%s' is not supported yet", spelling(e->op));
    case AST_IFEXP:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "conditional expressions are not supported yet");
    case AST_ATTR:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "attribute '.%s' is not supported yet", e->name);
    case AST_SUBSCRIPT:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "indexing and slicing are not supported yet");
    default:
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "this expression is not supported in kernels");
    }
}

mt_gvar *mt_b_expr(builder *b, const mt_ast *e) { return mt_b_expr_named(b, e, NULL); }
