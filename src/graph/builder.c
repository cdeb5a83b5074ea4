/*
 * builder.c -- AST to graph IR.
 *
 * A visitor over the entry function's statements. A symbol table maps source
 * names to graph values; every assignment makes a fresh SSA variable named
 * after its target (out, out_1, out_2, ...), and every sub-expression that
 * makes a value gets a temporary (lv, lv1, ...), as TVM's printer names them.
 *
 * Calls of other graph functions of the source are inlined: the callee's
 * statements are built in a frame of their own, with its parameters bound to
 * the arguments (checked against its annotations, symbolic dims matched), and
 * its return values become the call's value.
 *
 * Literals become weak scalar constants (graph.h); the op's type rule settles
 * their dtype against the other operand. Each expression node is checked when
 * it is built (names, arity, dtypes, broadcasting), so a diagnostic points at
 * the exact operator or call that is wrong. What the language has but this
 * builder does not lower is reported as MT_ERR_UNSUPPORTED at the construct,
 * never silently dropped.
 */
#include "graph/builder_internal.h"

#include <string.h>

#include "support/common.h"
#include "tir/from_ast.h"

/* Library functions of the language (docs/language.md) that the compiler
 * does not build yet, so that a call is "not supported yet" rather than an
 * unknown name; and the two names that are syntax rather than functions
 * (device in `with device(...)`, range in `for ... in range(...)`). Every
 * other library function is an op of the registry (graph/ops.def) or a
 * builder rule (builder_expr.c: linear, neg, *_like). */
static const char *const planned_functions[] = {
    "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "flatten",
    "device", "range",
};

enum { MAX_INLINE_DEPTH = 32, MAX_VALUES = 64 };

/* ---- names ---------------------------------------------------------------- */

/* A fresh SSA name: `base`, else base_1, base_2, ... (the first one free). */
const char *mt_b_fresh_name(builder *b, const char *base) {
    return mt_nameset_fresh(b->arena, &b->used, base);
}

const char *mt_b_temp_name(builder *b) {
    for (;;) {
        const char *n = b->temp_count ? mt_arena_printf(b->arena, "lv%d", b->temp_count)
                                      : mt_arena_strdup(b->arena, "lv");
        b->temp_count++;
        if (!mt_nameset_has(&b->used, n)) {
            mt_nameset_add(b->arena, &b->used, n);
            return n;
        }
    }
}

/* The symbol table is a stack (syms) with, per name, a chain from its
 * latest entry down through the entries it shadows (heads, prev): a lookup
 * is one hash probe, not a scan of every name bound since (a straight-line
 * kernel of 100,000 assignments took 53 s in strcmp). */
int mt_b_lookup(const builder *b, const char *name, int limit) {
    int base = b->frame ? b->frame->syms_base : 0;
    int i = mt_nameset_get(&b->heads, name) - 1;
    while (i >= limit) i = b->syms.data[i].prev - 1;
    return i >= base ? i : -1;
}

void mt_b_syms_truncate(builder *b, int n) {
    for (int i = b->syms.len - 1; i >= n; i--)
        mt_nameset_put(b->arena, &b->heads, b->syms.data[i].name, b->syms.data[i].prev);
    if (n < b->syms.len) b->syms.len = n;
}

static void push_sym(builder *b, const char *name, mt_gvar *v, mt_loc where) {
    mt_symbol s = {name, v, where, mt_nameset_get(&b->heads, name)};
    MT_VEC_PUSH(b->arena, &b->syms, s);
    mt_nameset_put(b->arena, &b->heads, name, b->syms.len);
}

mt_gvar *mt_b_use(builder *b, const char *name, mt_loc loc) {
    int i = mt_b_lookup(b, name, b->syms.len);
    if (i < 0) return NULL;
    const mt_symbol *s = &b->syms.data[i];
    if (!s->value)
        mt_fail(MT_ERR_NAME, loc, "name '%s' is not bound on every path to here (bound at %d:%d)",
                name, s->where.line, s->where.col);
    return s->value;
}

void mt_b_bind(builder *b, const char *name, mt_gvar *v) { push_sym(b, name, v, v ? v->loc : MT_NOLOC); }

void mt_b_bind_at(builder *b, const char *name, mt_gvar *v, mt_loc where) { push_sym(b, name, v, where); }

void mt_b_bind_partial(builder *b, const char *name, mt_loc where) { push_sym(b, name, NULL, where); }

bool mt_b_is_planned_function(const char *name) {
    for (int i = 0; i < MT_ARRAY_LEN(planned_functions); i++)
        if (strcmp(planned_functions[i], name) == 0) return true;
    return false;
}

const mt_ast *mt_b_find_def(const builder *b, const char *name) {
    for (int i = 0; i < b->module->body.len; i++) {
        const mt_ast *s = b->module->body.data[i];
        if (s->kind == AST_FUNCDEF && strcmp(s->name, name) == 0) return s;
    }
    return NULL;
}

mt_op_id mt_b_op(const char *name) {
    const mt_op_def *op = mt_op_lookup(name);
    if (!op) mt_ice("op '%s' is missing from the registry", name);
    return op->id;
}

/* ---- parameter annotations ------------------------------------------------ */

static const mt_ast *keyword_arg(const mt_ast *call, const char *name) {
    for (int i = 0; i < call->kw.len; i++)
        if (strcmp(call->kw.data[i]->name, name) == 0) return call->kw.data[i]->lhs;
    return NULL;
}

static bool is_tensor_ctor(const mt_ast *callee) {
    if (callee->kind == AST_NAME) return strcmp(callee->name, "Tensor") == 0;
    return callee->kind == AST_ATTR && strcmp(callee->name, "Tensor") == 0 &&
           callee->lhs->kind == AST_NAME && strcmp(callee->lhs->name, "R") == 0;
}

mt_dtype mt_b_dtype_name(const char *s, mt_loc loc) {
    mt_dtype dt;
    if (strcmp(s, "float") == 0) return MT_FLOAT32;
    if (strcmp(s, "int") == 0) return MT_INT64;
    if (mt_dtype_from_str(s, &dt) != 0)
        mt_fail(MT_ERR_TYPE, loc,
                "unknown dtype '%s' (expected one of float32, float64, float16, bfloat16, int8, "
                "int32, int64, uint8, bool)",
                s);
    return dt;
}

static void parse_shape(const mt_ast *shape, mt_gtype *t) {
    if (shape->kind != AST_TUPLE && shape->kind != AST_LIST)
        mt_fail(MT_ERR_TYPE, shape->loc, "a tensor shape must be a tuple such as (2, 3) or (\"n\", 784)");
    if (shape->items.len > MT_MAX_RANK)
        mt_fail(MT_ERR_LIMIT, shape->loc, "tensor rank %d exceeds the limit of %d dimensions",
                shape->items.len, MT_MAX_RANK);
    t->ndim = shape->items.len;
    for (int i = 0; i < shape->items.len; i++) {
        const mt_ast *d = shape->items.data[i];
        if (d->kind == AST_INT) {
            if (d->ival < 0) mt_fail(MT_ERR_SHAPE, d->loc, "dimension must be non-negative");
            t->dims[i].value = d->ival;
            t->dims[i].sym = NULL;
        } else if (d->kind == AST_UNARY && d->op == TK_MINUS && d->lhs->kind == AST_INT) {
            mt_fail(MT_ERR_SHAPE, d->loc, "dimension must be non-negative");
        } else if (d->kind == AST_STR) {
            const char *s = d->str;
            bool ok = s[0] && !(s[0] >= '0' && s[0] <= '9');
            for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '_'))
                    ok = false;
            if (!ok)
                mt_fail(MT_ERR_SHAPE, d->loc, "symbolic dimension \"%s\" must be an identifier", s);
            t->dims[i].value = -1;
            t->dims[i].sym = s;
        } else {
            mt_fail(MT_ERR_SHAPE, d->loc,
                    "a dimension must be an integer or a string naming a symbolic size");
        }
    }
}

/* Tensor(shape=..., dtype=...), Tensor((...), "dtype"), or a scalar dtype
 * name (a rank-0 tensor). */
static mt_gtype parse_annotation(mt_arena *a, const mt_ast *param) {
    const mt_ast *ann = param->lhs;
    mt_gtype t = mt_gtype_scalar(MT_FLOAT32);
    if (!ann)
        mt_fail(MT_ERR_TYPE, param->loc, "parameter '%s' needs a type annotation", param->name);
    if (ann->kind == AST_NAME) {
        t.dtype = mt_b_dtype_name(ann->name, ann->loc);
        return t;
    }
    if (ann->kind != AST_CALL || !is_tensor_ctor(ann->lhs))
        mt_fail(MT_ERR_TYPE, ann->loc,
                "annotation of '%s' must be Tensor(shape, dtype) or a scalar type such as float32",
                param->name);
    for (int i = 0; i < ann->kw.len; i++) {
        const char *k = ann->kw.data[i]->name;
        if (strcmp(k, "shape") != 0 && strcmp(k, "dtype") != 0)
            mt_fail(MT_ERR_TYPE, ann->kw.data[i]->loc,
                    "Tensor() got an unexpected keyword argument '%s'", k);
    }
    if (ann->items.len > 2)
        mt_fail(MT_ERR_TYPE, ann->loc, "Tensor() takes a shape and a dtype, got %d arguments",
                ann->items.len);
    const mt_ast *shape = ann->items.len > 0 ? ann->items.data[0] : NULL;
    const mt_ast *dtype = ann->items.len > 1 ? ann->items.data[1] : NULL;
    const mt_ast *kshape = keyword_arg(ann, "shape"), *kdtype = keyword_arg(ann, "dtype");
    if ((shape && kshape) || (dtype && kdtype))
        mt_fail(MT_ERR_TYPE, ann->loc, "Tensor() got the same argument twice");
    shape = shape ? shape : kshape;
    dtype = dtype ? dtype : kdtype;
    if (!shape) mt_fail(MT_ERR_TYPE, ann->loc, "Tensor() needs a shape");
    if (!dtype) mt_fail(MT_ERR_TYPE, ann->loc, "Tensor() needs a dtype, e.g. dtype=\"float32\"");
    if (dtype->kind != AST_STR)
        mt_fail(MT_ERR_TYPE, dtype->loc, "dtype must be a string such as \"float32\"");
    t.dtype = mt_b_dtype_name(dtype->str, dtype->loc);
    if (strcmp(dtype->str, "float") == 0 || strcmp(dtype->str, "int") == 0)
        mt_fail(MT_ERR_TYPE, dtype->loc, "unknown dtype '%s' (write \"%s\")", dtype->str,
                strcmp(dtype->str, "float") == 0 ? "float32" : "int64");
    parse_shape(shape, &t);
    mt_gtype_check_size(a, &t, shape->loc);
    return t;
}

mt_gtype mt_b_annotation(builder *b, const mt_ast *ann, const char *what) {
    mt_ast p;
    memset(&p, 0, sizeof p);
    p.kind = AST_PARAM, p.loc = ann->loc, p.name = what, p.lhs = (mt_ast *)ann;
    return parse_annotation(b->arena, &p);
}

mt_gtype mt_b_sinfo(builder *b, const mt_ast *ann) { return mt_b_annotation(b, ann, "out_sinfo"); }

/* ---- statements ----------------------------------------------------------- */

static const char *stmt_keyword(mt_ast_kind k) {
    switch (k) {
    case AST_BREAK: return "break";
    case AST_CONTINUE: return "continue";
    default: return "this statement";
    }
}

static void check_target(const mt_ast *t) {
    if (t->kind == AST_NAME) return;
    if (t->kind == AST_SUBSCRIPT || t->kind == AST_ATTR)
        mt_fail(MT_ERR_UNSUPPORTED, t->loc,
                "tensors are immutable values in graph functions; assign to a name instead");
    mt_fail(MT_ERR_SYNTAX, t->loc, "cannot assign to this expression");
}

/* targets = value, for one target (a name or a tuple of names). */
static void assign_target(builder *b, const mt_ast *target, const mt_ast *value) {
    if (target->kind == AST_TUPLE || target->kind == AST_LIST) {
        int n = target->items.len;
        if (n > MAX_VALUES)
            mt_fail(MT_ERR_LIMIT, target->loc, "too many names in one assignment (more than %d)",
                    MAX_VALUES);
        const char *names[MAX_VALUES] = {NULL}; /* more values than names: temporaries */
        for (int i = 0; i < n; i++) {
            check_target(target->items.data[i]);
            names[i] = target->items.data[i]->name;
        }
        mt_gvar *vals[MAX_VALUES];
        int got = mt_b_values(b, value, vals, MAX_VALUES, names);
        if (got != n)
            mt_fail(MT_ERR_TYPE, target->loc, "cannot unpack %d value%s into %d names", got,
                    got == 1 ? "" : "s", n);
        for (int i = 0; i < n; i++) mt_b_bind_at(b, names[i], vals[i], target->items.data[i]->loc);
        return;
    }
    check_target(target);
    mt_b_bind_at(b, target->name, mt_b_expr_named(b, value, target->name), target->loc);
}

static void build_assign(builder *b, const mt_ast *s) {
    /* a = b = expr: the value is built once, every target binds it */
    assign_target(b, s->items.data[0], s->rhs);
    for (int t = 1; t < s->items.len; t++) {
        const mt_ast *first = s->items.data[0], *target = s->items.data[t];
        if (first->kind != AST_NAME || target->kind != AST_NAME)
            mt_fail(MT_ERR_UNSUPPORTED, target->loc, "chained assignment works with names only");
        mt_b_bind_at(b, target->name, mt_b_use(b, first->name, first->loc), target->loc);
    }
}

static void build_augassign(builder *b, const mt_ast *s) {
    check_target(s->lhs);
    mt_gvar *old = mt_b_use(b, s->lhs->name, s->lhs->loc);
    if (!old) mt_fail(MT_ERR_NAME, s->lhs->loc, "unknown name '%s'", s->lhs->name);
    const char *op;
    switch (s->op) {
    case TK_PLUSEQ: op = "add"; break;
    case TK_MINUSEQ: op = "subtract"; break;
    case TK_STAREQ: op = "multiply"; break;
    case TK_SLASHEQ: op = "divide"; break;
    case TK_DSLASHEQ: op = "floor_divide"; break;
    case TK_PERCENTEQ: op = "floor_mod"; break;
    case TK_DSTAREQ: op = "power"; break;
    case TK_ATEQ: op = "matmul"; break;
    default:
        mt_fail(MT_ERR_UNSUPPORTED, s->loc, "operator '%s' is not supported on tensors",
                mt_tok_kind_str(s->op));
    }
    if (!mt_op_lookup(op))
        mt_fail(MT_ERR_UNSUPPORTED, s->loc, "operator '%s' is not supported yet", mt_tok_kind_str(s->op));
    mt_gvar *args[2] = {old, mt_b_expr(b, s->rhs)};
    mt_b_bind_at(b, s->lhs->name, mt_b_emit(b, mt_b_op(op), args, 2, NULL, s->loc, s->lhs->name), s->lhs->loc);
}

static void build_return(builder *b, const mt_ast *s) {
    if (b->flow_depth > 0)
        mt_fail(MT_ERR_UNSUPPORTED, s->loc,
                "'return' inside 'if' or 'for' is not supported; assign to a name and return it at the end");
    if (!s->lhs) mt_fail(MT_ERR_TYPE, s->loc, "a kernel must return a value");
    mt_gvar *vals[MAX_VALUES];
    int n = mt_b_values(b, s->lhs, vals, MAX_VALUES, NULL);
    if (n == 0) mt_fail(MT_ERR_TYPE, s->lhs->loc, "a kernel must return at least one value");
    b->frame->returns = MT_NEW_ARRAY(b->arena, mt_gvar *, n);
    b->frame->return_names = MT_NEW_ARRAY(b->arena, const char *, n);
    b->frame->nreturns = n;
    for (int i = 0; i < n; i++) {
        b->frame->returns[i] = vals[i];
        const mt_ast *item = s->lhs->kind == AST_TUPLE ? s->lhs->items.data[i] : s->lhs;
        if (item->kind == AST_NAME) b->frame->return_names[i] = item->name;
    }
}

void mt_b_work(builder *b, mt_loc loc) {
    if (++b->work > MT_MAX_BUILD_WORK)
        mt_fail(MT_ERR_LIMIT, loc,
                "kernel too large: more than %d statements and expressions to build after unrolling",
                MT_MAX_BUILD_WORK);
}

void mt_b_stmts(builder *b, const mt_ast_list *body) {
    for (int i = 0; i < body->len; i++) {
        const mt_ast *s = body->data[i];
        mt_b_work(b, s->loc);
        if (b->frame->returns) mt_fail(MT_ERR_SYNTAX, s->loc, "code after 'return' is not allowed");
        switch (s->kind) {
        case AST_ASSIGN: build_assign(b, s); break;
        case AST_AUGASSIGN: build_augassign(b, s); break;
        case AST_RETURN: build_return(b, s); break;
        case AST_IF: mt_b_if(b, s); break;
        case AST_FOR: mt_b_for(b, s); break;
        case AST_ASSERT: mt_b_assert(b, s); break;
        case AST_WITH: mt_b_with(b, s); break;
        case AST_PASS: break;
        case AST_EXPR_STMT:
            if (s->lhs->kind == AST_STR) break; /* a stray string: a comment */
            mt_fail(MT_ERR_SYNTAX, s->loc,
                    "expression statement has no effect; assign its value to a name or return it");
        case AST_UNSUPPORTED:
            mt_fail(MT_ERR_UNSUPPORTED, s->loc, "'%s' is not supported in minitriton kernels", s->name);
        case AST_WHILE:
            mt_fail(MT_ERR_UNSUPPORTED, s->loc, "'while' loops are not supported; use 'for i in range(n)'");
        case AST_FUNCDEF:
            mt_fail(MT_ERR_UNSUPPORTED, s->loc, "nested function definitions are not supported");
        default:
            mt_fail(MT_ERR_UNSUPPORTED, s->loc, "'%s' is not supported in minitriton kernels",
                    stmt_keyword(s->kind));
        }
    }
}

/* ---- functions ------------------------------------------------------------ */

static bool is_prim_func(const mt_ast *def) { return mt_ast_is_prim_func(def); }

static void check_decorators(const mt_ast *def) {
    if (def->kw.len)
        mt_fail(MT_ERR_UNSUPPORTED, def->kw.data[0]->loc, "unknown decorator on a graph function");
}

/* Runs def's body in a new frame whose names start empty. */
static void build_frame(builder *b, mt_frame *fr, const mt_ast *def) {
    fr->def = def;
    fr->caller = b->frame;
    b->frame = fr;
    int saved_flow = b->flow_depth;
    b->flow_depth = 0;
    mt_b_stmts(b, &def->body);
    b->flow_depth = saved_flow;
    if (!fr->returns) mt_fail(MT_ERR_TYPE, def->loc, "function '%s' does not return a value", def->name);
    b->frame = fr->caller;
}

/* Matches an argument's type against a callee's parameter annotation; the
 * callee's symbolic dims bind to the caller's dims by name (map). */
static void match_param(builder *b, const mt_ast *call, const mt_ast *param, const mt_gtype *want,
                        const mt_gvar *arg, const char **sym_from, mt_dim *sym_to, int *nsym) {
    const mt_gtype *got = &arg->type;
    const char *fn = call->lhs->name;
    if (arg->is_const && arg->weak && want->ndim == 0) return; /* a literal for a scalar param */
    if (got->dtype != want->dtype || got->ndim != want->ndim)
        mt_fail(MT_ERR_TYPE, call->loc, "argument '%s' of '%s' must be %s, got %s %s", param->name,
                fn, mt_gtype_str(b->arena, want), mt_dtype_str(got->dtype), mt_shape_str(b->arena, got));
    for (int d = 0; d < want->ndim; d++) {
        mt_dim w = want->dims[d], g = got->dims[d];
        if (!w.sym) {
            if (!mt_dim_equal(w, g))
                mt_fail(MT_ERR_SHAPE, call->loc, "argument '%s' of '%s' has shape %s, expected %s",
                        param->name, fn, mt_shape_str(b->arena, got), mt_shape_str(b->arena, want));
            continue;
        }
        int k = 0;
        while (k < *nsym && strcmp(sym_from[k], w.sym) != 0) k++;
        if (k == *nsym) {
            sym_from[k] = w.sym;
            sym_to[k] = g;
            (*nsym)++;
        } else if (!mt_dim_equal(sym_to[k], g)) {
            mt_fail(MT_ERR_SHAPE, call->loc, "symbolic dim '%s' of '%s' is bound to two different sizes",
                    w.sym, fn);
        }
    }
}

int mt_b_inline_call(builder *b, const mt_ast *call, const mt_ast *def, mt_gvar **out, int max) {
    if (is_prim_func(def)) return mt_b_call_prim(b, call, def, out, max);
    check_decorators(def);
    if (b->inline_depth >= MAX_INLINE_DEPTH)
        mt_fail(MT_ERR_LIMIT, call->loc, "calls nest more than %d deep (recursion is not supported)",
                MAX_INLINE_DEPTH);
    int np = def->items.len;
    if (call->kw.len)
        mt_fail(MT_ERR_UNSUPPORTED, call->kw.data[0]->loc, "keyword arguments to graph functions are not supported yet");
    if (call->items.len != np)
        mt_fail(MT_ERR_TYPE, call->loc, "'%s' takes %d argument%s, got %d", def->name, np,
                np == 1 ? "" : "s", call->items.len);
    mt_gvar **args = MT_NEW_ARRAY(b->arena, mt_gvar *, np > 0 ? np : 1);
    const char *sym_from[MT_MAX_RANK * 16];
    mt_dim sym_to[MT_MAX_RANK * 16];
    int nsym = 0;
    for (int i = 0; i < np; i++) {
        const mt_ast *p = def->items.data[i];
        args[i] = mt_b_expr(b, call->items.data[i]);
        if (p->rhs) mt_fail(MT_ERR_UNSUPPORTED, p->rhs->loc, "default parameter values are not supported");
        mt_gtype want = parse_annotation(b->arena, p);
        if (nsym + want.ndim > MT_ARRAY_LEN(sym_from)) mt_fail(MT_ERR_LIMIT, call->loc, "too many symbolic dims");
        match_param(b, call, p, &want, args[i], sym_from, sym_to, &nsym);
    }
    mt_frame fr;
    memset(&fr, 0, sizeof fr);
    fr.syms_base = b->syms.len;
    for (int i = 0; i < np; i++) mt_b_bind(b, def->items.data[i]->name, args[i]);
    b->inline_depth++;
    build_frame(b, &fr, def);
    b->inline_depth--;
    mt_b_syms_truncate(b, fr.syms_base); /* the callee's names go out of scope */
    if (fr.nreturns > max) mt_fail(MT_ERR_LIMIT, call->loc, "too many return values");
    for (int i = 0; i < fr.nreturns; i++) out[i] = fr.returns[i];
    return fr.nreturns;
}

static mt_gvar *materialize(builder *b, mt_gvar *v, const char *name, mt_loc loc) {
    /* a constant result becomes a rank-0 tensor made by a kernel */
    const mt_op_def *full = mt_op_lookup("full");
    if (!full)
        mt_fail(MT_ERR_UNSUPPORTED, loc, "returning a constant is not supported yet; compute it from a parameter");
    mt_gattrs *at = MT_NEW(b->arena, mt_gattrs);
    at->has_value = true;
    at->value = mt_dtype_is_float(v->type.dtype) ? v->fconst : (double)v->iconst;
    at->has_dtype = true;
    at->dtype = v->type.dtype;
    return mt_b_emit(b, full->id, NULL, 0, at, loc, name);
}

/* Whether parameter p is bound at compile time; its value must have the
 * type the annotation says, which must be fixed (an error at the
 * annotation otherwise). */
static bool check_bound(builder *b, const mt_ast *p, const mt_gtype *t) {
    const mt_gbound *bd = NULL;
    for (int i = 0; b->opts && i < b->opts->nbound && !bd; i++)
        if (strcmp(b->opts->bound[i].name, p->name) == 0) bd = &b->opts->bound[i];
    if (!bd) return false;
    mt_loc at = !p->lhs ? p->loc : p->lhs->kind == AST_CALL ? p->lhs->lhs->loc : p->lhs->loc; /* Tensor */
    for (int d = 0; d < t->ndim; d++)
        if (t->dims[d].sym)
            mt_fail(MT_ERR_SHAPE, at, "parameter '%s' is bound to a value but its dim %d is symbolic (\"%s\"); "
                    "a bound parameter's shape must be fixed", p->name, d, t->dims[d].sym);
    bool same = bd->type.dtype == t->dtype && bd->type.ndim == t->ndim;
    for (int d = 0; same && d < t->ndim; d++) same = bd->type.dims[d].value == t->dims[d].value;
    if (!same)
        mt_fail(MT_ERR_TYPE, at, "parameter '%s' is %s %s but the value bound to it is %s %s", p->name,
                mt_dtype_str(t->dtype), mt_shape_str(b->arena, t), mt_dtype_str(bd->type.dtype),
                mt_shape_str(b->arena, &bd->type));
    return true;
}

/* Every bound name is a parameter of the entry. */
static void check_bound_names(builder *b, const mt_ast *def) {
    for (int i = 0; b->opts && i < b->opts->nbound; i++) {
        bool found = false;
        for (int j = 0; j < def->items.len && !found; j++) found = strcmp(def->items.data[j]->name, b->opts->bound[i].name) == 0;
        if (!found)
            mt_fail(MT_ERR_NAME, def->loc, "a value is bound to '%s', which is no parameter of '%s'",
                    b->opts->bound[i].name, def->name);
    }
}

static mt_gfunc *build_function(builder *b, const mt_ast *def) {
    check_decorators(def);
    mt_gfunc *f = mt_gfunc_new(b->arena, def->name, def->loc);
    b->func = f;
    b->body = &f->body;
    b->block = NULL;
    if (def->items.len > MT_MAX_PARAMS)
        mt_fail(MT_ERR_LIMIT, def->items.data[MT_MAX_PARAMS]->loc,
                "too many parameters (more than %d)", MT_MAX_PARAMS);
    f->params = MT_NEW_ARRAY(b->arena, mt_gvar *, def->items.len ? def->items.len : 1);
    const char *syms[MT_MAX_SYMBOLS];
    int nsyms = 0;
    for (int i = 0; i < def->items.len; i++) {
        const mt_ast *p = def->items.data[i];
        if (p->rhs) mt_fail(MT_ERR_UNSUPPORTED, p->rhs->loc, "default parameter values are not supported");
        for (int j = 0; j < i; j++)
            if (strcmp(def->items.data[j]->name, p->name) == 0)
                mt_fail(MT_ERR_NAME, p->loc, "duplicate parameter '%s'", p->name);
        mt_gtype t = parse_annotation(b->arena, p);
        for (int d = 0; d < t.ndim; d++) { /* the executor binds at most MT_MAX_SYMBOLS */
            if (!t.dims[d].sym) continue;
            int k = 0;
            while (k < nsyms && strcmp(syms[k], t.dims[d].sym) != 0) k++;
            if (k < nsyms) continue;
            if (nsyms == MT_MAX_SYMBOLS)
                mt_fail(MT_ERR_LIMIT, p->loc, "too many symbolic dims in the parameters (more than %d)",
                        MT_MAX_SYMBOLS);
            syms[nsyms++] = t.dims[d].sym;
        }
        mt_gvar *v = mt_gvar_new(b->arena, mt_b_fresh_name(b, p->name), &t, p->loc);
        v->bound = check_bound(b, p, &t);
        f->params[f->nparams++] = v;
        mt_b_bind(b, p->name, v);
    }
    mt_frame fr;
    memset(&fr, 0, sizeof fr);
    build_frame(b, &fr, def);
    f->outputs = MT_NEW_ARRAY(b->arena, mt_gvar *, fr.nreturns);
    f->noutputs = fr.nreturns;
    for (int i = 0; i < fr.nreturns; i++)
        f->outputs[i] = fr.returns[i]->is_const
                            ? materialize(b, fr.returns[i], fr.return_names[i], def->loc)
                            : fr.returns[i];
    return f;
}

mt_gmodule *mt_build_graph(mt_arena *a, const mt_ast *module, const mt_build_options *opts) {
    builder b;
    memset(&b, 0, sizeof b);
    b.arena = a;
    b.module = module;
    b.opts = opts;
    const mt_ast *entry = NULL, *last_prim = NULL;
    for (int i = 0; i < module->body.len; i++) {
        const mt_ast *s = module->body.data[i];
        if (s->kind == AST_FUNCDEF && mt_ast_has_decorator(s, "schedule")) {
            if (opts && opts->entry && strcmp(s->name, opts->entry) == 0)
                mt_fail(MT_ERR_NAME, s->loc, "'%s' is a schedule (@T.schedule), not a function to compile", s->name);
            continue; /* applied by the pipeline to the function it names */
        }
        if (s->kind == AST_FUNCDEF) {
            if (opts && opts->entry ? strcmp(s->name, opts->entry) == 0 : !is_prim_func(s)) entry = s;
            if (is_prim_func(s)) last_prim = s;
            continue;
        }
        if (s->kind == AST_EXPR_STMT && s->lhs->kind == AST_STR) continue; /* module docstring */
        if (s->kind == AST_PASS) continue;
        if (s->kind == AST_UNSUPPORTED)
            mt_fail(MT_ERR_UNSUPPORTED, s->loc, "'%s' is not supported in minitriton kernels", s->name);
        mt_fail(MT_ERR_SYNTAX, s->loc, "only function definitions are allowed at the top level");
    }
    if (!entry && !(opts && opts->entry)) entry = last_prim; /* a source of loop functions only */
    if (!entry) {
        if (opts && opts->entry) mt_fail(MT_ERR_NAME, MT_NOLOC, "entry function '%s' not found", opts->entry);
        mt_fail(MT_ERR_NAME, mt_loc_make(1, 1), "no graph function to compile: the source defines no 'def'");
    }
    if (is_prim_func(entry) && opts && opts->nbound)
        mt_fail(MT_ERR_UNSUPPORTED, entry->loc,
                "bound parameters are for graph functions; '%s' is a loop function", entry->name);
    check_bound_names(&b, entry);
    mt_gmodule *m = mt_gmodule_new(a);
    mt_gmodule_add_func(a, m, is_prim_func(entry) ? mt_b_prim_entry(&b, entry) : build_function(&b, entry));
    for (int i = 0; i < b.prims.len; i++) mt_gmodule_add_tfunc(a, m, b.prims.data[i]);
    int nchecked; /* every loop function of the source is checked, called or not */
    (void)mt_tir_from_module(a, module, &nchecked);
    return m;
}
