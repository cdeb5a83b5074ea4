/*
 * builder_call.c -- calls of library functions, bound by op signatures.
 *
 * Every callable op has a Python-visible signature in graph/ops.def, e.g.
 *
 *     "x, axis:axes=None, keepdims:bool=False"
 *
 * A call is bound to it the way Python binds arguments: positional arguments
 * fill parameters in order, keywords by name; too many, unknown, repeated or
 * missing arguments are errors at the argument. Each bound argument is then
 * converted by its kind: a tensor is built as an expression; the others must
 * be compile-time values (literals, tuples of them) and fill one field of
 * mt_gattrs each:
 *
 *   (none)    tensor                       -> args
 *   tensor?   tensor or None               -> args (absent when None)
 *   tensors   list or tuple of tensors     -> args
 *   axes      int, tuple of ints, or None  -> has_axes, naxes, axes
 *   axis      int                          -> has_axes, naxes = 1, axes[0]
 *   bool      True / False                 -> keepdims
 *   shape     tuple of ints                -> nshape, shape
 *   dtype     "float32", ...               -> has_dtype, dtype
 *   float     number                       -> has_value, value
 *   str       string                       -> str
 *   pair      int or tuple of 2 ints       -> the window field named like the
 *                                             parameter: size (kernel_size,
 *                                             output_size), stride, padding,
 *                                             dilation; None leaves it {0, 0}
 *   int       int                          -> groups, or dims[0] / dims[1]
 *                                             (start_dim / end_dim)
 */
#include <stdlib.h>
#include <string.h>

#include "graph/builder_internal.h"
#include "support/cnum.h"
#include "support/common.h"

enum { MAX_PARAMS = 8, MAX_TENSORS = 16 };

typedef enum kind {
    K_TENSOR, K_OPT_TENSOR, K_TENSORS, K_AXES, K_AXIS, K_BOOL, K_SHAPE, K_DTYPE, K_FLOAT, K_STR, K_PAIR, K_INT
} kind;

typedef struct param {
    char name[32];
    kind kind;
    char dflt[32];   /* default as written ("" = required) */
} param;

static const struct {
    const char *name;
    kind kind;
} kinds[] = {
    {"tensor?", K_OPT_TENSOR}, {"tensors", K_TENSORS}, {"axes", K_AXES}, {"axis", K_AXIS},
    {"bool", K_BOOL}, {"shape", K_SHAPE}, {"dtype", K_DTYPE}, {"float", K_FLOAT}, {"str", K_STR},
    {"pair", K_PAIR}, {"int", K_INT},
};

/* The field of a pair or int parameter, by the parameter's name (a registry
 * string: an unknown name is our bug). */
static int64_t *int_field(const param *p, mt_gattrs *at) {
    static const char *const pairs[] = {"kernel_size", "output_size", "stride", "padding", "dilation"};
    int64_t *const pfields[] = {at->size, at->size, at->stride, at->padding, at->dilation};
    for (int i = 0; i < MT_ARRAY_LEN(pairs); i++)
        if (strcmp(p->name, pairs[i]) == 0) return pfields[i];
    if (strcmp(p->name, "groups") == 0) return &at->groups;
    at->has_dims = true;
    if (strcmp(p->name, "start_dim") == 0) return &at->dims[0];
    if (strcmp(p->name, "end_dim") == 0) return &at->dims[1];
    mt_ice("no attribute field for parameter '%s'", p->name);
}

/* Parses "x, axis:axes=None" (a registry string: malformed is our bug). */
static int parse_signature(const char *sig, param *ps) {
    int n = 0;
    const char *p = sig;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        if (n == MAX_PARAMS) mt_ice("signature '%s' has too many parameters", sig);
        param *q = &ps[n++];
        memset(q, 0, sizeof *q);
        q->kind = K_TENSOR;
        size_t len = strcspn(p, ":=,");
        if (len == 0 || len >= sizeof q->name) mt_ice("bad signature '%s'", sig);
        memcpy(q->name, p, len);
        p += len;
        if (*p == ':') {
            p++;
            size_t kl = strcspn(p, "=,");
            bool found = false;
            for (int k = 0; k < MT_ARRAY_LEN(kinds); k++)
                if (strlen(kinds[k].name) == kl && strncmp(kinds[k].name, p, kl) == 0) {
                    q->kind = kinds[k].kind;
                    found = true;
                }
            if (!found) mt_ice("bad parameter kind in signature '%s'", sig);
            p += kl;
        }
        if (*p == '=') {
            p++;
            size_t dl = strcspn(p, ",");
            if (dl == 0 || dl >= sizeof q->dflt) mt_ice("bad default in signature '%s'", sig);
            memcpy(q->dflt, p, dl);
            p += dl;
        }
    }
    return n;
}

/* A compile-time integer: a literal, or a negated one. */
static bool const_int(const mt_ast *e, int64_t *out) {
    if (e->kind == AST_INT) {
        *out = e->ival;
        return true;
    }
    if (e->kind == AST_UNARY && e->op == TK_MINUS && e->lhs->kind == AST_INT) {
        *out = -e->lhs->ival;
        return true;
    }
    return false;
}

static bool const_number(const mt_ast *e, double *out) {
    int64_t i;
    if (const_int(e, &i)) {
        *out = (double)i;
        return true;
    }
    if (e->kind == AST_FLOAT) {
        *out = e->fval;
        return true;
    }
    if (e->kind == AST_UNARY && e->op == TK_MINUS && e->lhs->kind == AST_FLOAT) {
        *out = -e->lhs->fval;
        return true;
    }
    return false;
}

static void set_default(builder *b, const param *p, mt_gattrs *at) {
    const char *d = p->dflt;
    switch (p->kind) {
    case K_AXES: case K_AXIS:
        if (strcmp(d, "None") != 0) {
            at->has_axes = true;
            at->naxes = 1;
            at->axes[0] = strtoll(d, NULL, 10);
        }
        break;
    case K_BOOL: at->keepdims = strcmp(d, "True") == 0; break;
    case K_FLOAT:
        if (strcmp(d, "None") != 0) {
            at->has_value = true;
            at->value = mt_c_strtod(d, NULL);
        }
        break;
    case K_STR:
        if (d[0] == '"') at->mode = (mt_attr_mode)mt_attr_mode_from_str(d + 1, strlen(d) - 2);
        break;
    case K_DTYPE:
        if (d[0] == '"') {
            at->has_dtype = true;
            at->dtype = mt_b_dtype_name(mt_arena_strndup(b->arena, d + 1, strlen(d) - 2), MT_NOLOC);
        }
        break;
    case K_PAIR:
        if (strcmp(d, "None") != 0) {
            int64_t *f = int_field(p, at);
            f[0] = f[1] = strtoll(d, NULL, 10);
        }
        break;
    case K_INT: *int_field(p, at) = strtoll(d, NULL, 10); break;
    default: break; /* tensor? = None: absent */
    }
}

/* An int or a tuple of 2 ints (None when the default is None). */
static void set_pair(const char *fname, const param *p, const mt_ast *e, mt_gattrs *at) {
    int64_t *f = int_field(p, at), v;
    if (e->kind == AST_NONE && strcmp(p->dflt, "None") == 0) return;
    if (const_int(e, &v)) {
        f[0] = f[1] = v;
        return;
    }
    if ((e->kind == AST_TUPLE || e->kind == AST_LIST) && e->items.len == 2 &&
        const_int(e->items.data[0], &f[0]) && const_int(e->items.data[1], &f[1]))
        return;
    mt_fail(MT_ERR_TYPE, e->loc, "'%s' of '%s' must be an integer or a tuple of 2 integers%s", p->name,
            fname, strcmp(p->dflt, "None") == 0 ? " or None" : "");
}

static void set_axes(const char *fname, const param *p, const mt_ast *e, mt_gattrs *at) {
    int64_t v;
    if (p->kind == K_AXES && e->kind == AST_NONE) return;
    if (const_int(e, &v)) {
        at->has_axes = true;
        at->naxes = 1;
        at->axes[0] = v;
        return;
    }
    if (p->kind == K_AXES && (e->kind == AST_TUPLE || e->kind == AST_LIST)) {
        if (e->items.len > MT_MAX_RANK)
            mt_fail(MT_ERR_SHAPE, e->loc, "too many axes for '%s'", fname);
        at->has_axes = true;
        for (int i = 0; i < e->items.len; i++) {
            if (!const_int(e->items.data[i], &v))
                mt_fail(MT_ERR_TYPE, e->items.data[i]->loc, "an axis must be an integer literal");
            at->axes[at->naxes++] = v;
        }
        return;
    }
    mt_fail(MT_ERR_TYPE, e->loc, "'%s' of '%s' must be %s", p->name, fname,
            p->kind == K_AXES ? "an integer, a tuple of integers or None" : "an integer");
}

static void set_shape(builder *b, const char *fname, const param *p, const mt_ast *e, mt_gattrs *at) {
    mt_gtype whole;
    if (mt_b_shape_of(b, e, &whole)) { /* shape=x.shape */
        at->nshape = whole.ndim;
        for (int i = 0; i < whole.ndim; i++) at->shape[i] = whole.dims[i];
        return;
    }
    const mt_ast *const *items = (const mt_ast *const *)&e;
    int n = 1;
    if (e->kind == AST_TUPLE || e->kind == AST_LIST) {
        items = (const mt_ast *const *)e->items.data;
        n = e->items.len;
    }
    if (n > MT_MAX_RANK)
        mt_fail(MT_ERR_LIMIT, e->loc, "tensor rank %d exceeds the limit of %d dimensions", n, MT_MAX_RANK);
    at->nshape = n;
    for (int i = 0; i < n; i++) {
        mt_dim d = mt_b_dim(b, items[i]);
        if (!d.sym && d.value < -1) mt_fail(MT_ERR_SHAPE, items[i]->loc, "dimension must be non-negative");
        at->shape[i] = d;
    }
    (void)fname;
    (void)p;
}

mt_gvar *mt_b_library_call(builder *b, const mt_ast *call, const char *fname, const char *name) {
    const mt_op_def *op = mt_op_lookup(fname);
    if (!op || !op->signature) return NULL;
    param ps[MAX_PARAMS];
    int np = parse_signature(op->signature, ps);
    const mt_ast *bound[MAX_PARAMS] = {0};

    for (int i = 0; i < call->items.len; i++) {
        const mt_ast *arg = call->items.data[i];
        if (arg->kind == AST_STARRED)
            mt_fail(MT_ERR_UNSUPPORTED, arg->loc, "'*' arguments are not supported");
        if (i >= np) {
            bool optional = false;
            for (int k = 0; k < np; k++) optional |= ps[k].dflt[0] != 0;
            mt_fail(MT_ERR_TYPE, arg->loc, "'%s' takes %s%d argument%s, got %d", fname,
                    optional ? "at most " : "", np, np == 1 ? "" : "s", call->items.len);
        }
        bound[i] = arg;
    }
    for (int k = 0; k < call->kw.len; k++) {
        const mt_ast *kw = call->kw.data[k];
        int i = 0;
        while (i < np && strcmp(ps[i].name, kw->name) != 0) i++;
        if (i == np)
            mt_fail(MT_ERR_TYPE, kw->loc, "'%s' got an unexpected keyword argument '%s'", fname, kw->name);
        if (bound[i])
            mt_fail(MT_ERR_TYPE, kw->loc, "'%s' got multiple values for argument '%s'", fname, kw->name);
        bound[i] = kw->lhs;
    }

    mt_gattrs *at = MT_NEW(b->arena, mt_gattrs);
    mt_gvar *args[MAX_TENSORS];
    int nargs = 0;
    for (int i = 0; i < np; i++) {
        const param *p = &ps[i];
        const mt_ast *e = bound[i];
        if (!e) {
            if (!p->dflt[0])
                mt_fail(MT_ERR_TYPE, call->loc, "'%s' missing required argument '%s'", fname, p->name);
            set_default(b, p, at);
            continue;
        }
        switch (p->kind) {
        case K_TENSOR:
            if (nargs == MAX_TENSORS)
                mt_fail(MT_ERR_LIMIT, e->loc, "too many tensor arguments (more than %d)", MAX_TENSORS);
            args[nargs++] = mt_b_expr(b, e);
            break;
        case K_OPT_TENSOR:
            if (e->kind == AST_NONE) break;
            if (nargs == MAX_TENSORS)
                mt_fail(MT_ERR_LIMIT, e->loc, "too many tensor arguments (more than %d)", MAX_TENSORS);
            args[nargs++] = mt_b_expr(b, e);
            break;
        case K_TENSORS:
            if (e->kind != AST_TUPLE && e->kind != AST_LIST)
                mt_fail(MT_ERR_TYPE, e->loc, "'%s' of '%s' must be a list of tensors", p->name, fname);
            for (int j = 0; j < e->items.len; j++) {
                if (nargs == MAX_TENSORS)
                    mt_fail(MT_ERR_LIMIT, e->items.data[j]->loc, "too many tensor arguments (more than %d)",
                            MAX_TENSORS);
                args[nargs++] = mt_b_expr(b, e->items.data[j]);
            }
            break;
        case K_AXES:
        case K_AXIS:
            set_axes(fname, p, e, at);
            break;
        case K_BOOL:
            if (e->kind != AST_BOOL)
                mt_fail(MT_ERR_TYPE, e->loc, "'%s' of '%s' must be True or False", p->name, fname);
            at->keepdims = e->ival != 0;
            break;
        case K_SHAPE:
            set_shape(b, fname, p, e, at);
            break;
        case K_DTYPE:
            if (e->kind != AST_STR)
                mt_fail(MT_ERR_TYPE, e->loc, "'%s' of '%s' must be a dtype name such as \"float32\"", p->name, fname);
            at->has_dtype = true;
            at->dtype = mt_b_dtype_name(e->str, e->loc);
            break;
        case K_FLOAT:
            if (!const_number(e, &at->value))
                mt_fail(MT_ERR_TYPE, e->loc, "'%s' of '%s' must be a number", p->name, fname);
            at->has_value = true;
            break;
        case K_STR:
            if (e->kind != AST_STR)
                mt_fail(MT_ERR_TYPE, e->loc, "'%s' of '%s' must be a string", p->name, fname);
            int mode = mt_attr_mode_from_str(e->str, strlen(e->str));
            if (mode < 0) /* the words of MT_ATTR_MODE_LIST; gelu's are all of them */
                mt_fail(MT_ERR_TYPE, e->loc, "'%s' of '%s' must be \"none\" or \"tanh\", got \"%s\"",
                        p->name, fname, e->str);
            at->mode = (mt_attr_mode)mode;
            break;
        case K_PAIR:
            set_pair(fname, p, e, at);
            break;
        case K_INT:
            if (!const_int(e, int_field(p, at)))
                mt_fail(MT_ERR_TYPE, e->loc, "'%s' of '%s' must be an integer", p->name, fname);
            break;
        }
    }
    return mt_b_emit(b, op->id, args, nargs, at, call->loc, name);
}
