/*
 * builder.c -- AST to graph IR.
 *
 * A visitor over the entry function's statements. A symbol table maps source
 * names to graph values; every assignment makes a fresh SSA variable named
 * after its target (out, out_1, out_2, ...), and every sub-expression that
 * makes a value gets a temporary (lv, lv1, ...), as TVM's printer names them.
 *
 * Literals become weak scalar constants (graph.h); the op's type rule settles
 * their dtype against the other operand. Each expression node is checked when
 * it is built (names, arity, dtypes, broadcasting), so a diagnostic points at
 * the exact operator or call that is wrong.
 *
 * What the language has but this builder does not lower yet is reported as
 * MT_ERR_UNSUPPORTED at the construct, never silently dropped.
 */
#include "graph/builder_internal.h"

#include <string.h>

#include "support/common.h"

/* Source names the builder knows as library functions it does not lower yet
 * (DSL.md §1), so that they are "not supported yet" rather than unknown. */
static const char *const planned_functions[] = {
    "log", "rsqrt", "sin", "cos", "gelu", "abs", "neg", "floor", "ceil", "round", "sign",
    "erf", "maximum", "minimum", "power", "where", "sum", "mean", "max", "min", "prod",
    "argmax", "argmin", "matmul", "linear", "softmax", "log_softmax", "layer_norm",
    "reshape", "transpose", "expand_dims", "squeeze", "broadcast_to", "concat", "zeros",
    "ones", "full", "zeros_like", "ones_like", "full_like", "device", "range",
};

/* ---- names ---------------------------------------------------------------- */

static bool name_used(builder *b, const char *n) {
    for (int i = 0; i < b->used.len; i++)
        if (strcmp(b->used.data[i], n) == 0) return true;
    return false;
}

/* A fresh SSA name: `base`, else base_1, base_2, ... */
const char *mt_b_fresh_name(builder *b, const char *base) {
    const char *n = base;
    for (int k = 1; name_used(b, n); k++) n = mt_arena_printf(b->arena, "%s_%d", base, k);
    MT_VEC_PUSH(b->arena, &b->used, n);
    return n;
}

const char *mt_b_temp_name(builder *b) {
    for (;;) {
        const char *n = b->temp_count ? mt_arena_printf(b->arena, "lv%d", b->temp_count)
                                      : mt_arena_strdup(b->arena, "lv");
        b->temp_count++;
        if (!name_used(b, n)) {
            MT_VEC_PUSH(b->arena, &b->used, n);
            return n;
        }
    }
}

mt_gvar *mt_b_lookup(builder *b, const char *name) {
    for (int i = b->syms.len - 1; i >= 0; i--)
        if (strcmp(b->syms.data[i].name, name) == 0) return b->syms.data[i].value;
    return NULL;
}

void mt_b_bind(builder *b, const char *name, mt_gvar *v) {
    mt_symbol s = {name, v};
    MT_VEC_PUSH(b->arena, &b->syms, s);
}

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
                "unknown dtype '%s' (expected one of float32, float64, float16, int8, int32, "
                "int64, uint8, bool)",
                s);
    return dt;
}

static void parse_shape(builder *b, const mt_ast *shape, mt_gtype *t) {
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
static mt_gtype parse_annotation(builder *b, const mt_ast *param) {
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
    parse_shape(b, shape, &t);
    return t;
}

/* ---- statements ----------------------------------------------------------- */

static const char *stmt_keyword(mt_ast_kind k) {
    switch (k) {
    case AST_IF: return "if";
    case AST_FOR: return "for";
    case AST_WHILE: return "while";
    case AST_WITH: return "with";
    case AST_ASSERT: return "assert";
    case AST_BREAK: return "break";
    case AST_CONTINUE: return "continue";
    case AST_FUNCDEF: return "def";
    default: return "this statement";
    }
}

static void assign_name(builder *b, const mt_ast *target, const mt_ast *value) {
    mt_gvar *v = mt_b_expr_named(b, value, target->name);
    mt_b_bind(b, target->name, v);
}

static void build_assign(builder *b, const mt_ast *s) {
    for (int t = 0; t < s->items.len; t++) {
        const mt_ast *target = s->items.data[t];
        if (target->kind == AST_NAME) {
            if (t == 0) {
                assign_name(b, target, s->rhs);
            } else { /* a = b = expr: later targets share the value */
                mt_b_bind(b, target->name, mt_b_lookup(b, s->items.data[0]->name));
            }
        } else if (target->kind == AST_TUPLE || target->kind == AST_LIST) {
            if (s->rhs->kind != AST_TUPLE)
                mt_fail(MT_ERR_UNSUPPORTED, target->loc,
                        "unpacking the result of an expression is not supported yet");
            if (s->rhs->items.len != target->items.len)
                mt_fail(MT_ERR_TYPE, target->loc, "cannot unpack %d values into %d names",
                        s->rhs->items.len, target->items.len);
            mt_gvar *vals[64];
            if (target->items.len > 64)
                mt_fail(MT_ERR_LIMIT, target->loc, "too many names in one assignment");
            for (int i = 0; i < target->items.len; i++) {
                const mt_ast *ti = target->items.data[i];
                if (ti->kind != AST_NAME)
                    mt_fail(MT_ERR_SYNTAX, ti->loc, "only names can be assigned to");
                vals[i] = mt_b_expr_named(b, s->rhs->items.data[i], ti->name);
            }
            for (int i = 0; i < target->items.len; i++)
                mt_b_bind(b, target->items.data[i]->name, vals[i]);
        } else if (target->kind == AST_SUBSCRIPT || target->kind == AST_ATTR) {
            mt_fail(MT_ERR_UNSUPPORTED, target->loc,
                    "tensors are immutable values in graph functions; assign to a name instead");
        } else {
            mt_fail(MT_ERR_SYNTAX, target->loc, "cannot assign to this expression");
        }
    }
}

static void build_augassign(builder *b, const mt_ast *s) {
    if (s->lhs->kind != AST_NAME)
        mt_fail(MT_ERR_UNSUPPORTED, s->lhs->loc,
                "tensors are immutable values in graph functions; assign to a name instead");
    mt_gvar *old = mt_b_lookup(b, s->lhs->name);
    if (!old) mt_fail(MT_ERR_NAME, s->lhs->loc, "unknown name '%s'", s->lhs->name);
    mt_op_id id;
    switch (s->op) {
    case TK_PLUSEQ: id = MT_OP_ADD; break;
    case TK_MINUSEQ: id = MT_OP_SUBTRACT; break;
    case TK_STAREQ: id = MT_OP_MULTIPLY; break;
    case TK_SLASHEQ: id = MT_OP_DIVIDE; break;
    default:
        mt_fail(MT_ERR_UNSUPPORTED, s->loc, "operator '%s' is not supported yet", mt_tok_kind_str(s->op));
    }
    mt_gvar *args[2] = {old, mt_b_expr(b, s->rhs)};
    mt_b_bind(b, s->lhs->name, mt_b_emit(b, id, args, 2, NULL, s->loc, s->lhs->name));
}

static void build_return(builder *b, const mt_ast *s) {
    if (!s->lhs) mt_fail(MT_ERR_TYPE, s->loc, "a kernel must return a value");
    const mt_ast *const *items = (const mt_ast *const *)&s->lhs;
    int n = 1;
    if (s->lhs->kind == AST_TUPLE) {
        items = (const mt_ast *const *)s->lhs->items.data;
        n = s->lhs->items.len;
        if (n == 0) mt_fail(MT_ERR_TYPE, s->lhs->loc, "a kernel must return at least one value");
    }
    mt_gfunc *f = b->func;
    f->outputs = MT_NEW_ARRAY(b->arena, mt_gvar *, n);
    f->noutputs = n;
    for (int i = 0; i < n; i++) {
        mt_gvar *v = mt_b_expr(b, items[i]);
        if (v->is_const)
            mt_fail(MT_ERR_UNSUPPORTED, items[i]->loc,
                    "returning a constant is not supported yet; compute it from a parameter");
        f->outputs[i] = v;
    }
}

static void build_body(builder *b, const mt_ast_list *body) {
    for (int i = 0; i < body->len; i++) {
        const mt_ast *s = body->data[i];
        if (b->func->outputs)
            mt_fail(MT_ERR_SYNTAX, s->loc, "code after 'return' is not allowed");
        switch (s->kind) {
        case AST_ASSIGN: build_assign(b, s); break;
        case AST_AUGASSIGN: build_augassign(b, s); break;
        case AST_RETURN: build_return(b, s); break;
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
            mt_fail(MT_ERR_UNSUPPORTED, s->loc, "'%s' statements are not supported yet",
                    stmt_keyword(s->kind));
        }
    }
}

/* ---- functions ------------------------------------------------------------ */

static bool is_prim_func(const mt_ast *def) {
    for (int i = 0; i < def->kw.len; i++) {
        const mt_ast *d = def->kw.data[i];
        if (d->kind == AST_ATTR && strcmp(d->name, "prim_func") == 0) return true;
    }
    return false;
}

static mt_gfunc *build_function(builder *b, const mt_ast *def) {
    for (int i = 0; i < def->kw.len; i++)
        if (!is_prim_func(def))
            mt_fail(MT_ERR_UNSUPPORTED, def->kw.data[i]->loc, "unknown decorator on a graph function");
    mt_gfunc *f = mt_gfunc_new(b->arena, def->name, def->loc);
    b->func = f;
    f->params = MT_NEW_ARRAY(b->arena, mt_gvar *, def->items.len ? def->items.len : 1);
    for (int i = 0; i < def->items.len; i++) {
        const mt_ast *p = def->items.data[i];
        if (p->rhs) mt_fail(MT_ERR_UNSUPPORTED, p->rhs->loc, "default parameter values are not supported");
        if (mt_b_lookup(b, p->name)) mt_fail(MT_ERR_NAME, p->loc, "duplicate parameter '%s'", p->name);
        mt_gtype t = parse_annotation(b, p);
        mt_gvar *v = mt_gvar_new(b->arena, mt_b_fresh_name(b, p->name), &t, p->loc);
        f->params[f->nparams++] = v;
        mt_b_bind(b, p->name, v);
    }
    b->block = mt_gblock_new(b->arena, true);
    f->blocks = MT_NEW_ARRAY(b->arena, mt_gblock *, 1);
    f->blocks[0] = b->block;
    f->nblocks = 1;
    build_body(b, &def->body);
    if (!f->outputs)
        mt_fail(MT_ERR_TYPE, def->loc, "function '%s' does not return a value", def->name);
    return f;
}

mt_gmodule *mt_build_graph(mt_arena *a, const mt_ast *module, const mt_build_options *opts) {
    builder b;
    memset(&b, 0, sizeof b);
    b.arena = a;
    b.module = module;
    b.opts = opts;
    const mt_ast *entry = NULL;
    for (int i = 0; i < module->body.len; i++) {
        const mt_ast *s = module->body.data[i];
        if (s->kind == AST_FUNCDEF) {
            if (opts && opts->entry ? strcmp(s->name, opts->entry) == 0 : !is_prim_func(s)) entry = s;
            continue;
        }
        if (s->kind == AST_EXPR_STMT && s->lhs->kind == AST_STR) continue; /* module docstring */
        if (s->kind == AST_PASS) continue;
        if (s->kind == AST_UNSUPPORTED)
            mt_fail(MT_ERR_UNSUPPORTED, s->loc, "'%s' is not supported in minitriton kernels", s->name);
        mt_fail(MT_ERR_SYNTAX, s->loc, "only function definitions are allowed at the top level");
    }
    if (!entry) {
        if (opts && opts->entry) mt_fail(MT_ERR_NAME, MT_NOLOC, "entry function '%s' not found", opts->entry);
        mt_fail(MT_ERR_NAME, mt_loc_make(1, 1), "no graph function to compile: the source defines no 'def'");
    }
    if (is_prim_func(entry))
        mt_fail(MT_ERR_UNSUPPORTED, entry->loc,
                "loop functions (@T.prim_func) as the entry are not supported yet");
    mt_gmodule *m = mt_gmodule_new(a);
    mt_gmodule_add_func(a, m, build_function(&b, entry));
    return m;
}
