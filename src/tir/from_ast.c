/*
 * from_ast.c -- `@T.prim_func` source to TIR (see from_ast.h).
 *
 * A walk over one AST_FUNCDEF that builds the mt_tfunc its text means, in
 * the syntax the printer writes (tir/printer.c, docs/tir.md §2), so that
 * printing what this builds gives back the printer's text.
 *
 * Names. One scope stack maps source names to what they stand for: a
 * variable (scalar parameter, symbolic dim, loop, block iteration or let
 * variable), a buffer (parameter or T.alloc_buffer), or a value (a
 * symbolic dim the caller bound to a constant). A loop, a block and a let
 * push their names for their body and pop them after, so Python's name
 * resolution and TIR's scopes agree; a name used where nothing binds it is
 * an error at the name.
 *
 * Parameters. Scalar parameters (`n: T.int64`, `v: T.float32x4`) are
 * bound first, then buffers: a buffer's shape may name a scalar parameter
 * whatever their order. A dim written as a string ("n") or a name that is
 * not a scalar parameter (`n * 4`, what the printer writes once buffers
 * are flat) is a symbolic dim, made on first sight in parameter order
 * (the order of mt_tfunc.sym_vars, the calling convention).
 *
 * Files. The walk is split by concern (from_ast_internal.h lists them):
 * this file holds the entry points, functions and parameters, the helpers
 * for T calls and their arguments, and the scope of names; expressions,
 * buffers and the bounds proofs, blocks, and statements have a file each.
 *
 * Checking. What the walk sees is reported where it was written: unknown
 * names, arity, dtypes, rank of an index, an index that is provably out
 * of bounds (a constant, or a loop variable whose whole range is outside
 * the dim, outside any if or T.where). The finished function is run
 * through the TIR verifier (block form, the widest); whatever it refuses
 * is reported at the statement it names.
 */
#include "tir/from_ast.h"

#include <stdlib.h>
#include <string.h>

#include "support/common.h"
#include "support/nameset.h"
#include "tir/from_ast_internal.h"
#include "tir/verify.h"

enum { MAX_DEPTH = 200 };

/* ---- helpers -------------------------------------------------------------- */

/* The spelling of an operator token (the frontend's table is not linked
 * into this layer). */
const char *mt_fa_op_str(mt_tok_kind k) {
    static const struct { mt_tok_kind k; const char *s; } ops[] = {
        {TK_PLUS, "+"}, {TK_MINUS, "-"}, {TK_STAR, "*"}, {TK_SLASH, "/"}, {TK_DSLASH, "//"},
        {TK_PERCENT, "%"}, {TK_DSTAR, "**"}, {TK_AT, "@"}, {TK_LSHIFT, "<<"}, {TK_RSHIFT, ">>"},
        {TK_AMP, "&"}, {TK_PIPE, "|"}, {TK_CARET, "^"}, {TK_TILDE, "~"}, {TK_LT, "<"}, {TK_GT, ">"},
        {TK_LE, "<="}, {TK_GE, ">="}, {TK_EQ, "=="}, {TK_NE, "!="}, {TK_IN, "in"}, {TK_IS, "is"},
        {TK_PLUSEQ, "+="}, {TK_MINUSEQ, "-="}, {TK_STAREQ, "*="}, {TK_SLASHEQ, "/="},
        {TK_DSLASHEQ, "//="}, {TK_PERCENTEQ, "%="}, {TK_DSTAREQ, "**="}, {TK_ATEQ, "@="},
        {TK_AMPEQ, "&="}, {TK_PIPEEQ, "|="}, {TK_CARETEQ, "^="}, {TK_LSHIFTEQ, "<<="},
        {TK_RSHIFTEQ, ">>="}, {TK_NOT, "not"}};
    for (int i = 0; i < MT_ARRAY_LEN(ops); i++)
        if (ops[i].k == k) return ops[i].s;
    return "?";
}

void mt_fa_enter(fctx *c, mt_loc loc) {
    if (++c->depth > MAX_DEPTH)
        mt_fail(MT_ERR_LIMIT, loc, "loop function nests more than %d levels deep", MAX_DEPTH);
}

void mt_fa_leave(fctx *c) { c->depth--; }

/* "x" when e is `T.x`, "axis.x" when e is `T.axis.x`, else NULL. */
static const char *t_attr(fctx *c, const mt_ast *e) {
    if (!e || e->kind != AST_ATTR) return NULL;
    const mt_ast *o = e->lhs;
    if (o->kind == AST_NAME && strcmp(o->name, "T") == 0) return e->name;
    if (o->kind == AST_ATTR && o->lhs->kind == AST_NAME && strcmp(o->lhs->name, "T") == 0)
        return mt_arena_printf(c->a, "%s.%s", o->name, e->name);
    return NULL;
}

/* The T function a call calls ("exp" for T.exp(...)), or NULL. */
const char *mt_fa_t_call(fctx *c, const mt_ast *e) {
    return e && e->kind == AST_CALL ? t_attr(c, e->lhs) : NULL;
}

bool mt_fa_is_t_call(fctx *c, const mt_ast *e, const char *fn) {
    const char *n = mt_fa_t_call(c, e);
    return n && strcmp(n, fn) == 0;
}

const mt_ast *mt_fa_keyword(const mt_ast *call, const char *name) {
    for (int i = 0; i < call->kw.len; i++)
        if (strcmp(call->kw.data[i]->name, name) == 0) return call->kw.data[i]->lhs;
    return NULL;
}

/* "T." before a T function's name; nothing before range. */
static const char *prefix(const char *fn) { return strcmp(fn, "range") == 0 ? "" : "T."; }

/* Keywords of call other than the allowed ones (NULL-terminated) fail. */
void mt_fa_only_keywords(const mt_ast *call, const char *fn, const char *const *allowed) {
    for (int i = 0; i < call->kw.len; i++) {
        const mt_ast *k = call->kw.data[i];
        bool ok = false;
        for (int j = 0; allowed && allowed[j] && !ok; j++) ok = strcmp(allowed[j], k->name) == 0;
        if (!ok)
            mt_fail(MT_ERR_TYPE, k->loc, "%s%s() got an unexpected keyword argument '%s'", prefix(fn), fn, k->name);
    }
}

/* call takes between lo and hi positional arguments. */
void mt_fa_arity(const mt_ast *call, const char *fn, int lo, int hi) {
    int n = call->items.len;
    if (n >= lo && n <= hi) return;
    if (lo == hi)
        mt_fail(MT_ERR_TYPE, call->loc, "%s%s takes %d argument%s, got %d", prefix(fn), fn, lo,
                lo == 1 ? "" : "s", n);
    mt_fail(MT_ERR_TYPE, call->loc, "%s%s takes %d to %d arguments, got %d", prefix(fn), fn, lo, hi, n);
}

/* A dtype name, with an optional vector suffix ("float32x4") when lanes. */
static mt_dtype dtype_named(fctx *c, const char *name, mt_loc loc, int *lanes) {
    mt_dtype dt;
    if (lanes) *lanes = 1;
    if (mt_dtype_from_str(name, &dt) == 0) return dt;
    const char *x = strrchr(name, 'x');
    if (lanes && x && x[1] >= '1' && x[1] <= '9') {
        char *end;
        long n = strtol(x + 1, &end, 10);
        const char *base = mt_arena_strndup(c->a, name, (size_t)(x - name));
        if (!*end && n >= 2 && n <= 64 && mt_dtype_from_str(base, &dt) == 0) {
            *lanes = (int)n;
            return dt;
        }
    }
    mt_fail(MT_ERR_TYPE, loc, "unknown dtype '%s'", name);
}

/* A string literal argument: its text. */
const char *mt_fa_string_arg(const mt_ast *e, const char *what) {
    if (e->kind != AST_STR) mt_fail(MT_ERR_TYPE, e->loc, "%s must be a string literal", what);
    return e->str;
}

mt_dtype mt_fa_dtype_arg(fctx *c, const mt_ast *e) {
    return dtype_named(c, mt_fa_string_arg(e, "a dtype"), e->loc, NULL);
}

/* ---- scope ---------------------------------------------------------------- */

/* The scope is a stack with, per name, a chain from its latest entry down
 * through the ones it shadows: a lookup is one hash probe (a dump of
 * thousands of lets stays linear). */
const sym *mt_fa_lookup(const fctx *c, const char *name) {
    int i = mt_nameset_get(&c->heads, name) - 1;
    return i >= 0 ? &c->scope.data[i] : NULL;
}

void mt_fa_push_sym(fctx *c, const char *name, mt_tvar *v, mt_tbuffer *b, mt_texpr *value) {
    sym s = {name, v, b, value, mt_nameset_get(&c->heads, name), 1};
    MT_VEC_PUSH(c->a, &c->scope, s);
    mt_nameset_put(c->a, &c->heads, name, c->scope.len);
}

/* Drops scope[n..): the names pushed there go out of scope. */
void mt_fa_scope_truncate(fctx *c, int n) {
    for (int i = c->scope.len - 1; i >= n; i--)
        mt_nameset_put(c->a, &c->heads, c->scope.data[i].name, c->scope.data[i].prev);
    if (n < c->scope.len) c->scope.len = n;
}

mt_tbuffer *mt_fa_buffer_named(fctx *c, const mt_ast *e, const char *what) {
    if (e->kind != AST_NAME) mt_fail(MT_ERR_TYPE, e->loc, "%s must be a buffer name", what);
    const sym *s = mt_fa_lookup(c, e->name);
    if (!s) mt_fail(MT_ERR_NAME, e->loc, "unknown name '%s'", e->name);
    if (!s->buf) mt_fail(MT_ERR_TYPE, e->loc, "'%s' is not a buffer", e->name);
    return s->buf;
}

/* The symbolic dim `name` (made on first sight, or as the caller bound it). */
mt_texpr *mt_fa_sym_dim(fctx *c, const char *name, mt_loc loc) {
    const sym *s = mt_fa_lookup(c, name);
    if (s && s->buf) mt_fail(MT_ERR_TYPE, loc, "'%s' is a buffer, not a dim", name);
    if (s) return s->var ? mt_te_var(c->a, s->var) : s->value;
    for (int i = 0; i < c->nbinds; i++) {
        const mt_tir_symbind *b = &c->binds[i];
        if (strcmp(b->name, name) != 0) continue;
        if (!b->sym) {
            mt_texpr *v = mt_te_i64(c->a, b->value);
            mt_fa_push_sym(c, name, NULL, NULL, v);
            return v;
        }
        name = b->sym;
        break;
    }
    mt_tvar *v = mt_tvar_new(c->a, name, MT_INT64);
    mt_tvar **ns = MT_NEW_ARRAY(c->a, mt_tvar *, c->f->nsym + 1);
    if (c->f->nsym) memcpy(ns, c->f->sym_vars, sizeof *ns * (size_t)c->f->nsym);
    ns[c->f->nsym++] = v;
    c->f->sym_vars = ns;
    mt_fa_push_sym(c, v->name, v, NULL, NULL);
    for (int i = 0; i < c->nbinds; i++) /* a renamed dim answers to its source name too */
        if (c->binds[i].sym == name) mt_fa_push_sym(c, c->binds[i].name, v, NULL, NULL);
    return mt_te_var(c->a, v);
}

/* ---- functions ------------------------------------------------------------ */

bool mt_ast_is_prim_func(const mt_ast *def) { return mt_ast_has_decorator(def, "prim_func"); }

/* T.func_attr({"key": "value", ...}) */
static void func_attr(fctx *c, const mt_ast *call) {
    mt_fa_arity(call, "func_attr", 1, 1);
    mt_fa_only_keywords(call, "func_attr", NULL);
    const mt_ast *d = call->items.data[0];
    if (d->kind != AST_DICT) mt_fail(MT_ERR_TYPE, d->loc, "T.func_attr takes a dict of strings");
    for (int i = 0; i < d->items.len; i++) {
        const char *k = mt_fa_string_arg(d->items.data[i], "an attribute key");
        const char *v = mt_fa_string_arg(d->kw.data[i], "an attribute value");
        mt_tfunc_set_attr(c->a, c->f, k, v);
    }
}

/* A scalar parameter's annotation T.int64 / T.float32x4, else NULL. */
static void scalar_param(fctx *c, const mt_ast *p) {
    const char *t = t_attr(c, p->lhs);
    int lanes;
    mt_dtype dt = dtype_named(c, t, p->lhs->loc, &lanes);
    mt_tvar *v = mt_tvar_new(c->a, p->name, dt);
    mt_tfunc_add_param(c->a, c->f, NULL, v);
    c->f->params[c->f->nparams - 1].lanes = lanes;
    mt_fa_push_sym(c, p->name, v, NULL, NULL);
    c->scope.data[c->scope.len - 1].lanes = lanes;
}

static void check_param(fctx *c, const mt_ast *def, int i) {
    const mt_ast *p = def->items.data[i];
    if (p->rhs) mt_fail(MT_ERR_UNSUPPORTED, p->rhs->loc, "default parameter values are not supported");
    for (int j = 0; j < i; j++)
        if (!strcmp(def->items.data[j]->name, p->name)) mt_fail(MT_ERR_NAME, p->loc, "duplicate parameter '%s'", p->name);
    bool buf = p->lhs && mt_fa_is_t_call(c, p->lhs, "Buffer");
    if (!p->lhs || (!buf && !t_attr(c, p->lhs)))
        mt_fail(MT_ERR_TYPE, p->lhs ? p->lhs->loc : p->loc,
                "parameter '%s' of a loop function needs T.Buffer(shape, dtype) or a scalar type such as T.int64", p->name);
}

/* params: scalar params first (shapes may name them), then buffers, each
 * in its place in f->params. */
static void params(fctx *c, const mt_ast *def) {
    int n = def->items.len;
    for (int i = 0; i < n; i++) check_param(c, def, i);
    mt_tbuffer **bufs = MT_NEW_ARRAY(c->a, mt_tbuffer *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        const mt_ast *p = def->items.data[i];
        if (!mt_fa_is_t_call(c, p->lhs, "Buffer")) scalar_param(c, p);
    }
    for (int i = 0; i < n; i++) {
        const mt_ast *p = def->items.data[i];
        if (mt_fa_is_t_call(c, p->lhs, "Buffer")) bufs[i] = mt_fa_buffer_type(c, p->name, p->lhs);
    }
    mt_tparam *ps = MT_NEW_ARRAY(c->a, mt_tparam, n > 0 ? n : 1);
    for (int i = 0, s = 0; i < n; i++) {
        if (bufs[i]) ps[i].buf = bufs[i];
        else ps[i] = c->f->params[s++];
    }
    c->f->params = ps;
    c->f->nparams = n;
    for (int i = 0; i < n; i++)
        if (bufs[i]) mt_fa_push_sym(c, bufs[i]->name, NULL, bufs[i], NULL);
}

typedef struct writes_of {
    const mt_tbuffer *b;
    bool found;
} writes_of;

static void find_store(mt_tvisitor *v, const mt_tstmt *s) {
    writes_of *w = v->ctx;
    if (s->kind == TS_STORE && s->buf == w->b) w->found = true;
    if (s->kind == TS_LAUNCH)
        for (int i = 0; i < s->launch->nargs; i++) w->found |= s->launch->args[i].buf == w->b;
    mt_tvisit_stmt_children(v, s);
}

bool mt_tfunc_stores_into(const mt_tfunc *f, const mt_tbuffer *b) {
    writes_of w = {b, false};
    mt_tvisitor v = {NULL, find_store, &w};
    mt_tvisit_stmt(&v, f->body);
    return w.found;
}

/* The trailing buffer params stored into. */
static int count_outputs(const mt_tfunc *f) {
    int n = 0;
    for (int i = f->nparams - 1; i >= 0; i--) {
        if (!f->params[i].buf) continue;
        if (!mt_tfunc_stores_into(f, f->params[i].buf)) break;
        n++;
    }
    return n;
}

static bool has_block(const mt_ast_list *l) {
    for (int i = 0; i < l->len; i++) {
        const mt_ast *s = l->data[i];
        if (s->kind == AST_WITH && s->items.len == 1 && s->items.data[0]->lhs->kind == AST_CALL) {
            const mt_ast *f = s->items.data[0]->lhs->lhs;
            if (f->kind == AST_ATTR && !strcmp(f->name, "block")) return true;
        }
        if (has_block(&s->body) || has_block(&s->orelse)) return true;
    }
    return false;
}

/* The function's body: T.func_attr, function-level allocations (when it has
 * blocks), then statements. */
static void body(fctx *c, const mt_ast *def) {
    const mt_ast_list *l = &def->body;
    int i = 0;
    if (i < l->len && l->data[i]->kind == AST_EXPR_STMT && mt_fa_is_t_call(c, l->data[i]->lhs, "func_attr"))
        func_attr(c, l->data[i++]->lhs);
    bool blocks = has_block(l);
    MT_VEC(mt_tbuffer *) allocs = {0};
    for (; blocks && i < l->len; i++) {
        const mt_ast *s = l->data[i];
        if (!(mt_fa_is_binding(c, s) && mt_fa_is_t_call(c, s->rhs, "alloc_buffer"))) break;
        mt_tbuffer *b = mt_fa_alloc_buffer(c, s->items.data[0]->name, s->rhs);
        MT_VEC_PUSH(c->a, &allocs, b);
        mt_fa_push_sym(c, b->name, NULL, b, NULL);
    }
    c->f->allocs = allocs.data;
    c->f->nallocs = allocs.len;
    c->f->body = mt_fa_stmts(c, l, i);
}

static void check_def(const mt_ast *def) {
    for (int i = 0; i < def->kw.len; i++) {
        const mt_ast *d = def->kw.data[i];
        bool pf = d->kind == AST_ATTR && !strcmp(d->name, "prim_func");
        if (!pf) mt_fail(MT_ERR_UNSUPPORTED, d->loc, "unknown decorator on a loop function");
    }
    if (def->rhs && def->rhs->kind != AST_NONE)
        mt_fail(MT_ERR_TYPE, def->rhs->loc, "a loop function returns nothing ('-> None' at most)");
}

static mt_tfunc *build_new(session *s, const mt_ast *def, const mt_tir_symbind *binds, int nbinds) {
    check_def(def);
    fctx c;
    memset(&c, 0, sizeof c);
    c.s = s, c.a = s->a, c.binds = binds, c.nbinds = nbinds;
    c.f = mt_tfunc_new(s->a, def->name);
    c.f->loc = def->loc;
    c.f->hand_written = true;
    params(&c, def);
    body(&c, def);
    c.f->num_outputs = count_outputs(c.f);
    const char *what;
    mt_loc loc;
    if (mt_tir_verify_ex(s->a, c.f, MT_TIR_BLOCK, &what, &loc))
        mt_fail(MT_ERR_TYPE, loc.line ? loc : def->loc, "ill-formed loop function '%s': %s", def->name, what);
    return c.f;
}

/* def's function: built once per session when unbound (launch callees). */
mt_tfunc *mt_fa_build_def(session *s, const mt_ast *def, const mt_tir_symbind *binds, int nbinds) {
    if (nbinds) return build_new(s, def, binds, nbinds);
    for (int i = 0; i < s->done.len; i++) {
        if (s->done.data[i].def != def) continue;
        if (!s->done.data[i].f) mt_fail(MT_ERR_TYPE, def->loc, "loop function '%s' launches itself", def->name);
        return s->done.data[i].f;
    }
    built b = {def, NULL};
    MT_VEC_PUSH(s->a, &s->done, b);
    int k = s->done.len - 1;
    mt_tfunc *f = build_new(s, def, NULL, 0);
    s->done.data[k].f = f;
    return f;
}

mt_tfunc *mt_tir_from_ast(mt_arena *a, const mt_ast *module, const mt_ast *def,
                          const mt_tir_symbind *binds, int nbinds) {
    session s;
    memset(&s, 0, sizeof s);
    s.a = a, s.module = module;
    return mt_fa_build_def(&s, def, binds, nbinds);
}

mt_tfunc **mt_tir_from_module(mt_arena *a, const mt_ast *module, int *n) {
    session s;
    memset(&s, 0, sizeof s);
    s.a = a, s.module = module;
    MT_VEC(mt_tfunc *) fs = {0};
    for (int i = 0; i < module->body.len; i++) {
        const mt_ast *d = module->body.data[i];
        if (d->kind == AST_FUNCDEF && mt_ast_is_prim_func(d)) MT_VEC_PUSH(a, &fs, mt_fa_build_def(&s, d, NULL, 0));
    }
    *n = fs.len;
    return fs.data;
}
