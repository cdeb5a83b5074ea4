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
 * Expressions are typed as they are built. A literal is weak (as in the
 * graph language): it takes the dtype of the other operand (`x[i] * 2`
 * multiplies float32 by 2.0); two weak literals are int64, or float32 when
 * one is a float. Operands of two different dtypes are an error that names
 * both. `-3` and `-1.5` are immediates (the printer writes negative
 * immediates so).
 *
 * Statements. `x = e` is a let whose body is the rest of the statements
 * at its level; `x = T.alloc_buffer(...)` likewise scopes an allocation
 * (TS_ALLOC), except at the top of a function with blocks (its
 * function-level allocations, f->allocs) and in a block's header (the
 * block's). `for` over range, T.grid, T.serial, T.parallel, T.vectorized,
 * T.unroll and T.thread_binding make loops (T.grid a nest); `with
 * T.block(name):` reads its header -- T.axis.spatial/reduce/remap, T.where,
 * T.reads, T.writes, T.alloc_buffer, `with T.init():`, in any order --
 * until the first other statement, which starts its body. Regions a block
 * does not state are inferred from its accesses: each store is a written
 * region and each load a read one (loads of buffers it writes excluded),
 * a dim indexed by a variable bound inside the block covering the whole
 * dim, any other dim the point it indexes.
 *
 * Checking. What the walk sees is reported where it was written: unknown
 * names, arity, dtypes, rank of an index, an index that is provably out
 * of bounds (a constant, or a loop variable whose whole range is outside
 * the dim, outside any if or T.where). The finished function is run
 * through the TIR verifier (block form, the widest); whatever it refuses
 * is reported at the statement it names.
 */
#include "tir/from_ast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support/common.h"
#include "support/nameset.h"
#include "tir/arith.h"
#include "tir/verify.h"

enum { MAX_DEPTH = 200, MAX_LETS = 1 << 14 };

/* What a source name stands for: exactly one of the three. */
typedef struct sym {
    const char *name;
    mt_tvar *var;
    mt_tbuffer *buf;
    mt_texpr *value;
    int prev;         /* 1 + the index of the entry of the same name it shadows (0: none) */
} sym;

/* An enclosing loop (for T.axis.remap and the bounds check). */
typedef struct loop_info {
    mt_tvar *var;
    mt_texpr *min, *extent;
    bool exact; /* var takes every value of [min, min + extent), both constants
                 * (a loop with constant bounds; a block variable bound to such
                 * a loop over its whole domain) */
} loop_info;

typedef struct built {
    const mt_ast *def;
    mt_tfunc *f;      /* NULL while it is being built */
} built;

/* One module's loop functions being built (launch callees by name). */
typedef struct session {
    mt_arena *a;
    const mt_ast *module;
    MT_VEC(built) done;
} session;

/* One function being built. */
typedef struct fctx {
    session *s;
    mt_arena *a;
    mt_tfunc *f;
    const mt_tir_symbind *binds;
    int nbinds;
    MT_VEC(sym) scope;
    mt_nameset heads; /* name -> 1 + the index of its latest entry in scope */
    MT_VEC(loop_info) loops;
    MT_VEC(mt_tvar *) let_vars;      /* every let so far, and its value: */
    MT_VEC(mt_texpr *) let_values;   /* what the footprint of a T.wmma_* operand substitutes */
    MT_VEC(mt_tstmt *) thread_loops; /* made so far: their variables are shared by name and tag */
    bool in_params;   /* a name not in scope in a param shape is a symbolic dim */
    int guarded;      /* inside an if or a block with T.where */
    int depth;
} fctx;

/* An expression being typed: weak when it is a literal without a dtype. */
typedef struct val {
    mt_texpr *e;
    bool weak;
} val;

static mt_tfunc *build_def(session *s, const mt_ast *def, const mt_tir_symbind *binds, int nbinds);
static val expr(fctx *c, const mt_ast *e);
static mt_tstmt *stmts(fctx *c, const mt_ast_list *l, int from);

/* ---- helpers -------------------------------------------------------------- */

/* The spelling of an operator token (the frontend's table is not linked
 * into this layer). */
static const char *op_str(mt_tok_kind k) {
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

static void enter(fctx *c, mt_loc loc) {
    if (++c->depth > MAX_DEPTH)
        mt_fail(MT_ERR_LIMIT, loc, "loop function nests more than %d levels deep", MAX_DEPTH);
}

static void leave(fctx *c) { c->depth--; }

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
static const char *t_call(fctx *c, const mt_ast *e) {
    return e && e->kind == AST_CALL ? t_attr(c, e->lhs) : NULL;
}

static bool is_t_call(fctx *c, const mt_ast *e, const char *fn) {
    const char *n = t_call(c, e);
    return n && strcmp(n, fn) == 0;
}

static const mt_ast *keyword(const mt_ast *call, const char *name) {
    for (int i = 0; i < call->kw.len; i++)
        if (strcmp(call->kw.data[i]->name, name) == 0) return call->kw.data[i]->lhs;
    return NULL;
}

/* "T." before a T function's name; nothing before range. */
static const char *prefix(const char *fn) { return strcmp(fn, "range") == 0 ? "" : "T."; }

/* Keywords of call other than the allowed ones (NULL-terminated) fail. */
static void only_keywords(const mt_ast *call, const char *fn, const char *const *allowed) {
    for (int i = 0; i < call->kw.len; i++) {
        const mt_ast *k = call->kw.data[i];
        bool ok = false;
        for (int j = 0; allowed && allowed[j] && !ok; j++) ok = strcmp(allowed[j], k->name) == 0;
        if (!ok)
            mt_fail(MT_ERR_TYPE, k->loc, "%s%s() got an unexpected keyword argument '%s'", prefix(fn), fn, k->name);
    }
}

/* call takes between lo and hi positional arguments. */
static void arity(const mt_ast *call, const char *fn, int lo, int hi) {
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
static const char *string_arg(const mt_ast *e, const char *what) {
    if (e->kind != AST_STR) mt_fail(MT_ERR_TYPE, e->loc, "%s must be a string literal", what);
    return e->str;
}

static mt_dtype dtype_arg(fctx *c, const mt_ast *e) {
    return dtype_named(c, string_arg(e, "a dtype"), e->loc, NULL);
}

/* ---- scope ---------------------------------------------------------------- */

/* The scope is a stack with, per name, a chain from its latest entry down
 * through the ones it shadows: a lookup is one hash probe (a dump of
 * thousands of lets stays linear). */
static const sym *lookup(const fctx *c, const char *name) {
    int i = mt_nameset_get(&c->heads, name) - 1;
    return i >= 0 ? &c->scope.data[i] : NULL;
}

static void push_sym(fctx *c, const char *name, mt_tvar *v, mt_tbuffer *b, mt_texpr *value) {
    sym s = {name, v, b, value, mt_nameset_get(&c->heads, name)};
    MT_VEC_PUSH(c->a, &c->scope, s);
    mt_nameset_put(c->a, &c->heads, name, c->scope.len);
}

/* Drops scope[n..): the names pushed there go out of scope. */
static void scope_truncate(fctx *c, int n) {
    for (int i = c->scope.len - 1; i >= n; i--)
        mt_nameset_put(c->a, &c->heads, c->scope.data[i].name, c->scope.data[i].prev);
    if (n < c->scope.len) c->scope.len = n;
}

static mt_tbuffer *buffer_named(fctx *c, const mt_ast *e, const char *what) {
    if (e->kind != AST_NAME) mt_fail(MT_ERR_TYPE, e->loc, "%s must be a buffer name", what);
    const sym *s = lookup(c, e->name);
    if (!s) mt_fail(MT_ERR_NAME, e->loc, "unknown name '%s'", e->name);
    if (!s->buf) mt_fail(MT_ERR_TYPE, e->loc, "'%s' is not a buffer", e->name);
    return s->buf;
}

/* The symbolic dim `name` (made on first sight, or as the caller bound it). */
static mt_texpr *sym_dim(fctx *c, const char *name, mt_loc loc) {
    const sym *s = lookup(c, name);
    if (s && s->buf) mt_fail(MT_ERR_TYPE, loc, "'%s' is a buffer, not a dim", name);
    if (s) return s->var ? mt_te_var(c->a, s->var) : s->value;
    for (int i = 0; i < c->nbinds; i++) {
        const mt_tir_symbind *b = &c->binds[i];
        if (strcmp(b->name, name) != 0) continue;
        if (!b->sym) {
            mt_texpr *v = mt_te_i64(c->a, b->value);
            push_sym(c, name, NULL, NULL, v);
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
    push_sym(c, v->name, v, NULL, NULL);
    for (int i = 0; i < c->nbinds; i++) /* a renamed dim answers to its source name too */
        if (c->binds[i].sym == name) push_sym(c, c->binds[i].name, v, NULL, NULL);
    return mt_te_var(c->a, v);
}

/* ---- literals and dtypes -------------------------------------------------- */

static val strong(mt_texpr *e) {
    val v = {e, false};
    return v;
}

/* A weak literal given dtype dt. */
static mt_texpr *literal_as(fctx *c, mt_texpr *lit, mt_dtype dt, mt_loc loc) {
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
static mt_texpr *settle(fctx *c, val v, mt_loc loc) {
    if (!v.weak) return v.e;
    return literal_as(c, v.e, v.e->kind == TE_FLOAT ? MT_FLOAT32 : MT_INT64, loc);
}

/* v for a place of dtype dt: a weak literal converts, else dtypes must agree. */
static mt_texpr *as_dtype(fctx *c, val v, mt_dtype dt, mt_loc loc, const char *what) {
    if (v.weak) return literal_as(c, v.e, dt, loc);
    if (v.e->dtype != dt)
        mt_fail(MT_ERR_TYPE, loc, "%s is %s, expected %s", what, mt_dtype_str(v.e->dtype), mt_dtype_str(dt));
    return v.e;
}

/* Gives two operands one dtype (a weak one takes the other's). */
static void unify(fctx *c, val *x, val *y, mt_loc loc, const char *op) {
    if (x->weak && y->weak) {
        bool fl = x->e->kind == TE_FLOAT || y->e->kind == TE_FLOAT;
        mt_dtype dt = fl ? MT_FLOAT32 : MT_INT64;
        x->e = literal_as(c, x->e, dt, loc);
        y->e = literal_as(c, y->e, dt, loc);
    } else if (x->weak) {
        x->e = literal_as(c, x->e, y->e->dtype, loc);
    } else if (y->weak) {
        y->e = literal_as(c, y->e, x->e->dtype, loc);
    }
    x->weak = y->weak = false;
    if (x->e->dtype != y->e->dtype)
        mt_fail(MT_ERR_TYPE, loc, "operands of '%s' have different dtypes: %s and %s; convert one with T.Cast",
                op, mt_dtype_str(x->e->dtype), mt_dtype_str(y->e->dtype));
}

static mt_texpr *int_expr(fctx *c, const mt_ast *e, const char *what) {
    val v = expr(c, e);
    if (v.weak && v.e->kind == TE_INT) return mt_te_i64(c->a, v.e->ival);
    if (v.weak || !mt_dtype_is_int(v.e->dtype))
        mt_fail(MT_ERR_TYPE, e->loc, "%s must be an integer, got %s", what,
                v.weak ? "a float literal" : mt_dtype_str(v.e->dtype));
    return v.e;
}

/* Loop bounds, extents, dims: int64. */
static mt_texpr *i64_expr(fctx *c, const mt_ast *e, const char *what) {
    mt_texpr *x = int_expr(c, e, what);
    if (x->dtype != MT_INT64)
        mt_fail(MT_ERR_TYPE, e->loc, "%s must be int64, got %s; convert with T.Cast(\"int64\", ...)", what,
                mt_dtype_str(x->dtype));
    return x;
}

static mt_texpr *bool_expr(fctx *c, const mt_ast *e, const char *what) {
    val v = expr(c, e);
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
    const sym *s = lookup(c, e->name);
    if (!s && c->in_params) return strong(sym_dim(c, e->name, e->loc));
    if (!s) mt_fail(MT_ERR_NAME, e->loc, "unknown name '%s'", e->name);
    if (s->buf) mt_fail(MT_ERR_TYPE, e->loc, "buffer '%s' used as a value; index it: %s[...]", e->name, e->name);
    return strong(s->var ? mt_te_var(c->a, s->var) : s->value);
}

static const loop_info *loop_of(const fctx *c, const mt_tvar *v);

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
static void unproven(fctx *c, mt_loc loc) {
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
        const loop_info *l = loop_of(c, e->var);
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
static void check_bound(fctx *c, const mt_tbuffer *b, int d, const mt_texpr *ix, mt_loc loc) {
    int64_t dim, k;
    if (!mt_te_is_const_int(b->shape[d], &dim)) return;
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
        unproven(c, loc); /* the check_bounds pass checks it at run time */
        return;
    }
    mt_fail(MT_ERR_SHAPE, loc, "index '%s' ranges over [%lld, %lld), out of bounds for dim %d of '%s' (size %lld)",
            ix->kind == TE_VAR ? ix->var->name : mt_texpr_print(c->a, ix), (long long)r.lo, (long long)r.hi + 1, d,
            b->name, (long long)dim);
}

/* The indices of b[...] (a tuple, `()` for rank 0, or one expression). */
static mt_texpr **indices(fctx *c, const mt_tbuffer *b, const mt_ast *sub, int *n) {
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
        out[i] = int_expr(c, e, "an index");
        check_bound(c, b, i, out[i], e->loc);
    }
    *n = k;
    return out;
}

/* subscript: NAME '[' indices ']' */
static mt_texpr *load(fctx *c, const mt_ast *e) {
    mt_tbuffer *b = buffer_named(c, e->lhs, "an indexed value");
    int n;
    mt_texpr **ix = indices(c, b, e, &n);
    mt_texpr *ld = mt_te_load(c->a, b, ix, n);
    ld->loc = e->lhs->loc; /* the buffer's name */
    return ld;
}

static mt_texpr_kind binop_kind(fctx *c, const mt_ast *e, mt_dtype dt) {
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
                op_str(e->op), e->op == TK_DSTAR ? "; use T.pow" : "");
    }
}

/* binop: expr op expr */
static val binop(fctx *c, const mt_ast *e) {
    const char *op = op_str(e->op);
    if (e->op != TK_PLUS && e->op != TK_MINUS && e->op != TK_STAR && e->op != TK_SLASH &&
        e->op != TK_DSLASH && e->op != TK_PERCENT)
        binop_kind(c, e, MT_FLOAT32); /* fails */
    val x = expr(c, e->lhs), y = expr(c, e->rhs);
    unify(c, &x, &y, e->loc, op);
    mt_texpr_kind k = binop_kind(c, e, x.e->dtype);
    if (x.e->dtype == MT_BOOL) mt_fail(MT_ERR_TYPE, e->loc, "arithmetic '%s' on bool operands", op);
    return strong(mt_te_bin(c->a, k, x.e, y.e));
}

/* unary: ('-' | '+' | 'not') expr */
static val unary(fctx *c, const mt_ast *e) {
    val x = expr(c, e->lhs);
    if (e->op == TK_PLUS) return x;
    if (e->op == TK_NOT) {
        if (x.weak || x.e->dtype != MT_BOOL) mt_fail(MT_ERR_TYPE, e->loc, "'not' of a non-bool operand");
        return strong(mt_te_unary(c->a, TE_NOT, x.e));
    }
    if (e->op != TK_MINUS)
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "operator '%s' is not supported in loop functions", op_str(e->op));
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
    return strong(mt_te_unary(c->a, TE_NEG, v));
}

/* boolop: expr ('and' | 'or') expr ... */
static val boolop(fctx *c, const mt_ast *e) {
    mt_texpr_kind k = e->op == TK_AND ? TE_AND : TE_OR;
    const char *what = e->op == TK_AND ? "an operand of 'and'" : "an operand of 'or'";
    mt_texpr *r = bool_expr(c, e->items.data[0], what);
    for (int i = 1; i < e->items.len; i++) r = mt_te_bin(c->a, k, r, bool_expr(c, e->items.data[i], what));
    return strong(r);
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
                op_str(e->cmp_ops[0]));
    val x = expr(c, e->lhs), y = expr(c, e->items.data[0]);
    unify(c, &x, &y, e->loc, op_str(e->cmp_ops[0]));
    return strong(mt_te_bin(c->a, ops[i].k, x.e, y.e));
}

static mt_texpr *select_of(fctx *c, const mt_ast *at, const mt_ast *cond, const mt_ast *a, const mt_ast *b) {
    mt_texpr *cd = bool_expr(c, cond, "a condition");
    val x = expr(c, a), y = expr(c, b);
    unify(c, &x, &y, at->loc, "T.Select");
    return mt_te_select(c->a, cd, x.e, y.e);
}

/* T.float32(x) / T.int32(3) / T.float32("inf"): an immediate, or a cast. */
static val dtype_call(fctx *c, const mt_ast *e, const char *fn, mt_dtype dt) {
    arity(e, fn, 1, 1);
    only_keywords(e, fn, NULL);
    const mt_ast *x = e->items.data[0];
    if (x->kind == AST_STR) {
        double v = strcmp(x->str, "inf") == 0 ? INFINITY : strcmp(x->str, "-inf") == 0 ? -INFINITY
                 : strcmp(x->str, "nan") == 0 ? NAN : 0;
        if (!mt_dtype_is_float(dt) || v == 0)
            mt_fail(MT_ERR_TYPE, x->loc, "T.%s(\"%s\"): only float dtypes take \"inf\", \"-inf\" or \"nan\"", fn, x->str);
        return strong(mt_te_float(c->a, dt, v));
    }
    val v = expr(c, x);
    if (v.weak) return strong(literal_as(c, v.e, dt, x->loc));
    if (x->kind == AST_BOOL) return strong(dt == MT_BOOL ? v.e : mt_te_cast(c->a, dt, v.e));
    return strong(mt_te_cast(c->a, dt, v.e));
}

/* Math intrinsics take float operands. */
static val intrin_call(fctx *c, const mt_ast *e, const char *fn, mt_intrin in) {
    int n = mt_intrin_arity(in);
    arity(e, fn, n, n);
    only_keywords(e, fn, NULL);
    val v[3] = {{NULL, false}, {NULL, false}, {NULL, false}};
    for (int i = 0; i < n; i++) v[i] = expr(c, e->items.data[i]);
    for (int i = 1; i < n; i++) unify(c, &v[0], &v[i], e->loc, fn);
    if (n == 1) v[0].e = settle(c, v[0], e->loc);
    if (!mt_dtype_is_float(v[0].e->dtype))
        mt_fail(MT_ERR_TYPE, e->loc, "T.%s takes float operands, got %s", fn, mt_dtype_str(v[0].e->dtype));
    mt_texpr *args[3];
    for (int i = 0; i < n; i++) args[i] = i ? v[i].e : v[0].e;
    return strong(mt_te_call(c->a, in, args, n));
}

/* T.shfl_xor(value, lane_mask, width): integer literals for the mask and
 * the width (the verifier checks where it stands and their values). */
static val shfl_call(fctx *c, const mt_ast *e, const char *fn) {
    arity(e, fn, 3, 3);
    only_keywords(e, fn, NULL);
    mt_texpr *v = settle(c, expr(c, e->items.data[0]), e->loc);
    int k[2];
    for (int i = 0; i < 2; i++) {
        const mt_ast *x = e->items.data[i + 1];
        if (x->kind != AST_INT || x->ival < 0 || x->ival > 1024)
            mt_fail(MT_ERR_TYPE, x->loc, "T.%s takes integer literals as its lane mask and width", fn);
        k[i] = (int)x->ival;
    }
    return strong(mt_te_shfl_xor(c->a, v, k[0], k[1]));
}

/* T.wmma_*(...): addresses (buffer loads) and values as written, the ldm
 * an integer literal (the verifier checks the rest). */
/* The elements [o, o + span] that a T.wmma_* operand b[...] (flat offset o)
 * reaches -- a fragment's 256, a tile's 16 rows of ldm -- must provably lie
 * in b (constant dims; interval arithmetic over the enclosing loops): the
 * operation touches all of them, and neither the run-time checks nor the
 * verifier see past the first. */
static void wmma_footprint(fctx *c, const mt_texpr *op, int64_t span, mt_loc loc, const char *fn) {
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

static val wmma_call(fctx *c, const mt_ast *e, const char *fn, mt_intrin in) {
    int n = mt_intrin_arity(in);
    arity(e, fn, n, n);
    only_keywords(e, fn, NULL);
    mt_texpr *args[3] = {NULL, NULL, NULL};
    for (int i = 0; i < n; i++) {
        const mt_ast *x = e->items.data[i];
        bool ldm = i == 2 && in != IN_WMMA_MMA;
        if (ldm && (x->kind != AST_INT || x->ival < 0 || x->ival > (1 << 20)))
            mt_fail(MT_ERR_TYPE, x->loc, "T.%s takes an integer literal as its leading dimension", fn);
        args[i] = ldm ? mt_te_int(c->a, MT_INT32, x->ival)
                      : in == IN_WMMA_FILL && i == 1 ? settle(c, expr(c, x), x->loc) : expr(c, x).e;
    }
    if (in == IN_WMMA_FILL) args[1] = mt_te_cast(c->a, MT_FLOAT32, args[1]);
    /* fragments: 256 elements; tiles (load_a/b's source, store's destination): 16 rows of ldm */
    int64_t ldm = 0;
    if (args[2] && in != IN_WMMA_MMA) mt_te_is_const_int(args[2], &ldm);
    for (int i = 0; i < n; i++) {
        bool tile = (i == 1 && (in == IN_WMMA_LOAD_A || in == IN_WMMA_LOAD_B)) || (i == 0 && in == IN_WMMA_STORE);
        bool frag = !tile && !(i == 2 && in != IN_WMMA_MMA) && !(i == 1 && in == IN_WMMA_FILL);
        if (tile || frag) wmma_footprint(c, args[i], tile ? 15 * ldm + 15 : 255, e->items.data[i]->loc, fn);
    }
    return strong(mt_te_wmma(c->a, in, args[0], args[1], args[2]));
}

/* T.min / T.max / T.truncdiv / T.floordiv / T.floormod (a, b) */
static val binary_call(fctx *c, const mt_ast *e, const char *fn, mt_texpr_kind k) {
    arity(e, fn, 2, 2);
    only_keywords(e, fn, NULL);
    val x = expr(c, e->items.data[0]), y = expr(c, e->items.data[1]);
    unify(c, &x, &y, e->loc, fn);
    if (k == TE_DIV && !mt_dtype_is_int(x.e->dtype))
        mt_fail(MT_ERR_TYPE, e->loc, "T.truncdiv takes integer operands, got %s", mt_dtype_str(x.e->dtype));
    if (x.e->dtype == MT_BOOL) mt_fail(MT_ERR_TYPE, e->loc, "T.%s of bool operands", fn);
    return strong(mt_te_bin(c->a, k, x.e, y.e));
}

/* T.Cast("float32", x) and T.cast(x, "float32") */
static val cast_call(fctx *c, const mt_ast *e, const char *fn) {
    arity(e, fn, 2, 2);
    only_keywords(e, fn, NULL);
    bool tvm = strcmp(fn, "Cast") == 0;
    mt_dtype dt = dtype_arg(c, e->items.data[tvm ? 0 : 1]);
    const mt_ast *x = e->items.data[tvm ? 1 : 0];
    val v = expr(c, x);
    if (v.weak) return strong(literal_as(c, v.e, dt, x->loc));
    if (v.e->dtype == dt) { /* kept, as written (mt_te_cast would drop it) */
        mt_texpr *k = mt_te_cast(c->a, dt == MT_INT64 ? MT_INT32 : MT_INT64, v.e);
        k->dtype = dt;
        return strong(k);
    }
    return strong(mt_te_cast(c->a, dt, v.e));
}

/* T.Ramp(base, stride, lanes) / T.Broadcast(value, lanes) */
static val vector_call(fctx *c, const mt_ast *e, const char *fn) {
    bool ramp = strcmp(fn, "Ramp") == 0;
    arity(e, fn, ramp ? 3 : 2, ramp ? 3 : 2);
    only_keywords(e, fn, NULL);
    int lanes = lanes_arg(e->items.data[ramp ? 2 : 1]);
    if (!ramp) return strong(mt_te_broadcast(c->a, settle(c, expr(c, e->items.data[0]), e->loc), lanes));
    val b = expr(c, e->items.data[0]), s = expr(c, e->items.data[1]);
    unify(c, &b, &s, e->loc, fn);
    if (!mt_dtype_is_int(b.e->dtype)) mt_fail(MT_ERR_TYPE, e->loc, "T.Ramp of %s", mt_dtype_str(b.e->dtype));
    return strong(mt_te_ramp(c->a, b.e, s.e, lanes));
}

/* call: 'T' '.' NAME '(' args ')' */
static val call_expr(fctx *c, const mt_ast *e) {
    const char *fn = t_call(c, e);
    if (!fn) {
        const char *n = e->lhs->kind == AST_NAME ? e->lhs->name : "this";
        mt_fail(MT_ERR_NAME, e->loc, "unknown function '%s' in a loop function (functions here are T.exp, T.max, ...)", n);
    }
    mt_dtype dt;
    mt_intrin in;
    if (mt_dtype_from_str(fn, &dt) == 0) return dtype_call(c, e, fn, dt);
    if (mt_intrin_from_name(fn, &in) == 0)
        return in == IN_SHFL_XOR ? shfl_call(c, e, fn)
               : mt_intrin_is_wmma(in) ? wmma_call(c, e, fn, in) : intrin_call(c, e, fn, in);
    if (!strcmp(fn, "Cast") || !strcmp(fn, "cast")) return cast_call(c, e, fn);
    if (!strcmp(fn, "min")) return binary_call(c, e, fn, TE_MIN);
    if (!strcmp(fn, "max")) return binary_call(c, e, fn, TE_MAX);
    if (!strcmp(fn, "truncdiv")) return binary_call(c, e, fn, TE_DIV);
    if (!strcmp(fn, "floordiv")) return binary_call(c, e, fn, TE_FLOORDIV);
    if (!strcmp(fn, "floormod")) return binary_call(c, e, fn, TE_FLOORMOD);
    if (!strcmp(fn, "Ramp") || !strcmp(fn, "Broadcast")) return vector_call(c, e, fn);
    if (!strcmp(fn, "Select") || !strcmp(fn, "if_then_else")) {
        arity(e, fn, 3, 3);
        only_keywords(e, fn, NULL);
        return strong(select_of(c, e, e->items.data[0], e->items.data[1], e->items.data[2]));
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
static val expr(fctx *c, const mt_ast *e) {
    enter(c, e->loc);
    val v = {NULL, false};
    switch (e->kind) {
    case AST_NAME: v = name_expr(c, e); break;
    case AST_INT: v.e = mt_te_i64(c->a, e->ival), v.weak = true; break;
    case AST_FLOAT: v.e = mt_te_float(c->a, MT_FLOAT64, e->fval), v.weak = true; break;
    case AST_BOOL: v = strong(mt_te_int(c->a, MT_BOOL, e->ival)); break;
    case AST_BINOP: v = binop(c, e); break;
    case AST_UNARY: v = unary(c, e); break;
    case AST_BOOLOP: v = boolop(c, e); break;
    case AST_COMPARE: v = compare(c, e); break;
    case AST_IFEXP: v = strong(select_of(c, e, e->cond, e->lhs, e->rhs)); break;
    case AST_SUBSCRIPT: v = strong(load(c, e)); break;
    case AST_CALL: v = call_expr(c, e); break;
    case AST_STR: mt_fail(MT_ERR_TYPE, e->loc, "a string is not a value in a loop function");
    default: mt_fail(MT_ERR_UNSUPPORTED, e->loc, "this expression is not supported in loop functions");
    }
    leave(c);
    return v;
}

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
        if (d->kind == AST_STR && c->in_params) dims[i] = sym_dim(c, d->str, d->loc);
        else dims[i] = i64_expr(c, d, "a dim");
        int64_t k;
        if (mt_te_is_const_int(dims[i], &k) && k < 0) mt_fail(MT_ERR_SHAPE, d->loc, "a dim is negative (%lld)", (long long)k);
    }
    *ndim = n;
    return dims;
}

/* The positional-or-keyword argument i / name of a call, or NULL. */
static const mt_ast *arg_at(const mt_ast *call, int i, const char *name) {
    if (i < call->items.len) {
        if (keyword(call, name)) mt_fail(MT_ERR_TYPE, call->loc, "argument '%s' given twice", name);
        return call->items.data[i];
    }
    return keyword(call, name);
}

/* T.Buffer(shape, dtype="float32") in a parameter annotation */
static mt_tbuffer *buffer_type(fctx *c, const char *name, const mt_ast *call) {
    static const char *const kws[] = {"shape", "dtype", NULL};
    only_keywords(call, "Buffer", kws);
    if (call->items.len > 2) arity(call, "Buffer", 1, 2);
    const mt_ast *sh = arg_at(call, 0, "shape"), *dt = arg_at(call, 1, "dtype");
    if (!sh) mt_fail(MT_ERR_TYPE, call->loc, "T.Buffer needs a shape");
    int n;
    c->in_params = true;
    mt_texpr **dims = shape_of(c, sh, &n);
    c->in_params = false;
    return mt_tbuffer_new(c->a, name, dt ? dtype_arg(c, dt) : MT_FLOAT32, n, dims);
}

/* T.alloc_buffer(shape, dtype="float32", scope="global") */
static mt_tbuffer *alloc_buffer(fctx *c, const char *name, const mt_ast *call) {
    static const char *const kws[] = {"shape", "dtype", "scope", NULL};
    only_keywords(call, "alloc_buffer", kws);
    if (call->items.len > 3) arity(call, "alloc_buffer", 1, 3);
    const mt_ast *sh = arg_at(call, 0, "shape"), *dt = arg_at(call, 1, "dtype"), *sc = arg_at(call, 2, "scope");
    if (!sh) mt_fail(MT_ERR_TYPE, call->loc, "T.alloc_buffer needs a shape");
    int n;
    mt_texpr **dims = shape_of(c, sh, &n);
    mt_tbuffer *b = mt_tbuffer_new(c->a, name, dt ? dtype_arg(c, dt) : MT_FLOAT32, n, dims);
    if (sc) {
        const char *s = string_arg(sc, "scope");
        if (mt_scope_from_str(s, &b->scope) != 0)
            mt_fail(MT_ERR_TYPE, sc->loc,
                    "unknown scope '%s' (expected \"global\", \"shared\", \"local\", \"wmma.matrix_a\", "
                    "\"wmma.matrix_b\" or \"wmma.accumulator\")", s);
    }
    return b;
}

/* ---- regions -------------------------------------------------------------- */

/* lo:hi as (min, extent): `lo:lo + n` gives n, constants fold. */
static void slice_range(fctx *c, const mt_ast *s, const mt_tbuffer *b, int d, mt_texpr **min, mt_texpr **ext) {
    if (s->cond) mt_fail(MT_ERR_TYPE, s->loc, "a region has no step");
    mt_texpr *lo = s->lhs ? int_expr(c, s->lhs, "a region bound") : mt_te_i64(c->a, 0);
    mt_texpr *hi = s->rhs ? int_expr(c, s->rhs, "a region bound") : b->shape[d];
    int64_t x, y;
    *min = lo;
    if (mt_te_is_const_int(lo, &x) && mt_te_is_const_int(hi, &y)) *ext = mt_te_i64(c->a, y - x);
    else if (mt_te_is_const_int(lo, &x) && x == 0) *ext = hi;
    else if (hi->kind == TE_ADD && mt_texpr_equal(hi->a, lo)) *ext = hi->b;
    else if (lo->dtype != hi->dtype) mt_fail(MT_ERR_TYPE, s->loc, "region bounds of two dtypes");
    else *ext = mt_te_bin(c->a, TE_SUB, hi, lo);
}

/* region: NAME '[' (index | lo ':' hi), ... ']' */
static mt_tregion region(fctx *c, const mt_ast *e) {
    if (e->kind != AST_SUBSCRIPT) mt_fail(MT_ERR_TYPE, e->loc, "a region is a buffer subscript: A[i, 0:n]");
    mt_tregion r;
    r.buf = buffer_named(c, e->lhs, "a region");
    const mt_ast *ix = e->rhs;
    const mt_ast_list *items = ix->kind == AST_TUPLE ? &ix->items : NULL;
    int k = items ? items->len : 1;
    if (k != r.buf->ndim)
        mt_fail(MT_ERR_SHAPE, e->loc, "buffer '%s' has %d dim%s, indexed with %d", r.buf->name, r.buf->ndim,
                r.buf->ndim == 1 ? "" : "s", k);
    r.min = MT_NEW_ARRAY(c->a, mt_texpr *, k > 0 ? k : 1);
    r.extent = MT_NEW_ARRAY(c->a, mt_texpr *, k > 0 ? k : 1);
    for (int d = 0; d < k; d++) {
        const mt_ast *x = items ? items->data[d] : ix;
        if (x->kind == AST_SLICE) {
            slice_range(c, x, r.buf, d, &r.min[d], &r.extent[d]);
        } else {
            r.min[d] = int_expr(c, x, "an index");
            r.extent[d] = mt_te_i64(c->a, 1);
        }
    }
    return r;
}

static void regions(fctx *c, const mt_ast *call, mt_tregion **out, int *n) {
    only_keywords(call, t_call(c, call), NULL);
    *n = call->items.len;
    *out = MT_NEW_ARRAY(c->a, mt_tregion, *n > 0 ? *n : 1);
    for (int i = 0; i < *n; i++) {
        const mt_ast *e = call->items.data[i];
        if (e->kind == AST_LIST || e->kind == AST_TUPLE) { /* T.reads([A[i], B[j]]) */
            *n = e->items.len + i;
            mt_tregion *g = MT_NEW_ARRAY(c->a, mt_tregion, *n > 0 ? *n : 1);
            memcpy(g, *out, sizeof *g * (size_t)i);
            for (int j = 0; j < e->items.len; j++) g[i + j] = region(c, e->items.data[j]);
            *out = g;
            if (call->items.len > 1) mt_fail(MT_ERR_TYPE, call->loc, "regions are one list or several arguments, not both");
            return;
        }
        (*out)[i] = region(c, e);
    }
}

/* Inference of the regions a block does not state (see the top). */
typedef struct infer {
    mt_arena *a;
    MT_VEC(mt_tregion) reads, writes;
    MT_VEC(const mt_tvar *) inner; /* vars bound inside the block */
} infer;

static bool uses_inner(const infer *in, const mt_texpr *e) {
    for (int i = 0; i < in->inner.len; i++)
        if (mt_texpr_uses_var(e, in->inner.data[i])) return true;
    return false;
}

static bool region_equal(const mt_tregion *x, const mt_tregion *y) {
    if (x->buf != y->buf) return false;
    for (int d = 0; d < x->buf->ndim; d++)
        if (!mt_texpr_equal(x->min[d], y->min[d]) || !mt_texpr_equal(x->extent[d], y->extent[d])) return false;
    return true;
}

static void add_access(infer *in, bool write, mt_tbuffer *b, mt_texpr *const *idx) {
    mt_tregion r = {b, MT_NEW_ARRAY(in->a, mt_texpr *, b->ndim + 1), MT_NEW_ARRAY(in->a, mt_texpr *, b->ndim + 1)};
    for (int d = 0; d < b->ndim; d++) {
        bool whole = uses_inner(in, idx[d]) || idx[d]->lanes > 1;
        r.min[d] = whole ? mt_te_i64(in->a, 0) : idx[d];
        r.extent[d] = whole ? b->shape[d] : mt_te_i64(in->a, 1);
    }
    if (write) {
        for (int i = 0; i < in->writes.len; i++) if (region_equal(&in->writes.data[i], &r)) return;
        MT_VEC_PUSH(in->a, &in->writes, r);
    } else {
        for (int i = 0; i < in->reads.len; i++) if (region_equal(&in->reads.data[i], &r)) return;
        MT_VEC_PUSH(in->a, &in->reads, r);
    }
}

static void infer_expr(mt_tvisitor *v, const mt_texpr *e) {
    if (e->kind == TE_LOAD) add_access(v->ctx, false, e->buf, e->args);
    mt_tvisit_expr_children(v, e);
}

static void infer_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    infer *in = v->ctx;
    if (s->kind == TS_BLOCK) return; /* a nested block states its own */
    if (s->kind == TS_FOR || s->kind == TS_LET) MT_VEC_PUSH(in->a, &in->inner, s->var);
    if (s->kind == TS_STORE) add_access(in, true, s->buf, s->idx);
    mt_tvisit_stmt_children(v, s);
}

static void infer_regions(fctx *c, mt_tstmt *b, bool reads, bool writes) {
    infer in;
    memset(&in, 0, sizeof in);
    in.a = c->a;
    mt_tvisitor v = {infer_expr, infer_stmt, &in};
    if (b->init) mt_tvisit_stmt(&v, b->init);
    mt_tvisit_stmt(&v, b->body);
    if (writes) {
        b->writes = in.writes.data;
        b->nwrites = in.writes.len;
    }
    if (!reads) return;
    MT_VEC(mt_tregion) rs = {0};
    for (int i = 0; i < in.reads.len; i++) {
        bool written = false;
        for (int j = 0; j < b->nwrites && !written; j++) written = b->writes[j].buf == in.reads.data[i].buf;
        if (!written) MT_VEC_PUSH(c->a, &rs, in.reads.data[i]);
    }
    b->reads = rs.data;
    b->nreads = rs.len;
}

/* ---- blocks --------------------------------------------------------------- */

typedef struct block_hdr {
    MT_VEC(mt_titer) iters;
    MT_VEC(mt_texpr *) values;
    MT_VEC(mt_loc) locs;      /* where each variable is named */
    MT_VEC(mt_tbuffer *) allocs;
    bool has_reads, has_writes;
} block_hdr;

static void add_iter(fctx *c, block_hdr *h, const mt_ast *target, mt_iter_kind k, mt_texpr *ext, mt_texpr *value) {
    if (target->kind != AST_NAME) mt_fail(MT_ERR_SYNTAX, target->loc, "an iteration variable must be a name");
    mt_titer it = {mt_tvar_new(c->a, target->name, MT_INT64), ext, k};
    MT_VEC_PUSH(c->a, &h->iters, it);
    MT_VEC_PUSH(c->a, &h->values, value);
    MT_VEC_PUSH(c->a, &h->locs, target->loc);
}

/* NAME '=' T.axis.spatial(extent, value) | T.axis.reduce(extent, value) */
static void axis_one(fctx *c, block_hdr *h, const mt_ast *s, const char *fn) {
    mt_iter_kind k = !strcmp(fn, "axis.spatial") ? MT_ITER_SPATIAL : MT_ITER_REDUCE;
    const mt_ast *call = s->rhs;
    arity(call, fn, 2, 2);
    only_keywords(call, fn, NULL);
    mt_texpr *ext = i64_expr(c, call->items.data[0], "an iteration extent");
    mt_texpr *value = i64_expr(c, call->items.data[1], "an iteration value");
    add_iter(c, h, s->items.data[0], k, ext, value);
}

static const loop_info *loop_of(const fctx *c, const mt_tvar *v) {
    for (int i = c->loops.len - 1; i >= 0; i--)
        if (c->loops.data[i].var == v) return &c->loops.data[i];
    return NULL;
}

/* NAME, ... '=' T.axis.remap("SR", [loop_var, ...]) */
static void axis_remap(fctx *c, block_hdr *h, const mt_ast *s) {
    const mt_ast *call = s->rhs, *t = s->items.data[0];
    arity(call, "axis.remap", 2, 2);
    only_keywords(call, "axis.remap", NULL);
    const char *kinds = string_arg(call->items.data[0], "the kinds of T.axis.remap");
    const mt_ast *vals = call->items.data[1];
    if (vals->kind != AST_LIST && vals->kind != AST_TUPLE)
        mt_fail(MT_ERR_TYPE, vals->loc, "T.axis.remap takes a list of loop variables");
    int n = vals->items.len, nt = t->kind == AST_TUPLE ? t->items.len : 1;
    if ((int)strlen(kinds) != n || nt != n)
        mt_fail(MT_ERR_TYPE, call->loc, "T.axis.remap: %d kinds, %d loop variables and %d names must agree",
                (int)strlen(kinds), n, nt);
    for (int i = 0; i < n; i++) {
        if (kinds[i] != 'S' && kinds[i] != 'R')
            mt_fail(MT_ERR_TYPE, call->items.data[0]->loc, "unknown axis kind '%c' in T.axis.remap (expected 'S' or 'R')", kinds[i]);
        const mt_ast *v = vals->items.data[i];
        const sym *sy = v->kind == AST_NAME ? lookup(c, v->name) : NULL;
        const loop_info *l = sy && sy->var ? loop_of(c, sy->var) : NULL;
        int64_t lo;
        if (!l) mt_fail(MT_ERR_TYPE, v->loc, "T.axis.remap takes variables of enclosing loops");
        if (!mt_te_is_const_int(l->min, &lo) || lo != 0)
            mt_fail(MT_ERR_TYPE, v->loc, "T.axis.remap needs a loop from 0; use T.axis.spatial(extent, value)");
        add_iter(c, h, t->kind == AST_TUPLE ? t->items.data[i] : t, kinds[i] == 'S' ? MT_ITER_SPATIAL : MT_ITER_REDUCE,
                 l->extent, mt_te_var(c->a, l->var));
    }
}

/* Does the value bound to a block variable stay inside its declared domain
 * [0, dom) over the enclosing loops? Indices of the variable are checked
 * over the domain; a value outside it (T.axis.spatial(60, i0 * 16 + i1)
 * over 4 x 16) would reach what those checks did not cover. */
static bool binding_in_domain(fctx *c, const mt_texpr *val, const mt_texpr *dom) {
    int64_t d;
    if (!mt_te_is_const_int(dom, &d)) return false;
    mt_range r = range_over_loops(c, val);
    return r.lo >= 0 && r.hi < d;
}

/* The iteration variables so far come into scope (once each). */
static void bind_iters(fctx *c, block_hdr *h, int *bound) {
    for (; *bound < h->iters.len; (*bound)++) {
        mt_tvar *v = h->iters.data[*bound].var;
        const mt_texpr *val = h->values.data[*bound];
        const loop_info *l = val->kind == TE_VAR ? loop_of(c, val->var) : NULL;
        int64_t lo, ext, dom;
        bool exact = l && l->exact && mt_te_is_const_int(l->min, &lo) && lo == 0 &&
                     mt_te_is_const_int(l->extent, &ext) &&
                     mt_te_is_const_int(h->iters.data[*bound].extent, &dom) && ext == dom;
        if (!exact && !binding_in_domain(c, val, h->iters.data[*bound].extent))
            unproven(c, h->locs.data[*bound]); /* its accesses are proven over the domain, not over the
                               * values: the check pass substitutes the values */
        push_sym(c, v->name, v, NULL, NULL);
        loop_info li = {v, mt_te_i64(c->a, 0), h->iters.data[*bound].extent, exact};
        MT_VEC_PUSH(c->a, &c->loops, li);
    }
}

/* One header statement of a block; false when s starts the body. */
static bool block_header_stmt(fctx *c, mt_tstmt *b, block_hdr *h, const mt_ast *s, int *bound) {
    const char *fn = s->kind == AST_ASSIGN ? t_call(c, s->rhs) : s->kind == AST_EXPR_STMT ? t_call(c, s->lhs) : NULL;
    if (s->kind == AST_WITH && s->items.len == 1 && is_t_call(c, s->items.data[0]->lhs, "init")) {
        if (b->init) mt_fail(MT_ERR_SYNTAX, s->loc, "a block has one T.init()");
        bind_iters(c, h, bound);
        arity(s->items.data[0]->lhs, "init", 0, 0);
        b->init = stmts(c, &s->body, 0);
        return true;
    }
    if (!fn) return false;
    if (s->kind == AST_ASSIGN && s->items.len == 1) {
        if (!strcmp(fn, "axis.spatial") || !strcmp(fn, "axis.reduce")) axis_one(c, h, s, fn);
        else if (!strcmp(fn, "axis.remap")) axis_remap(c, h, s);
        else if (!strncmp(fn, "axis.", 5))
            mt_fail(MT_ERR_NAME, s->rhs->loc, "unknown axis kind 'T.%s' (expected T.axis.spatial, T.axis.reduce or T.axis.remap)", fn);
        else if (!strcmp(fn, "alloc_buffer") && s->items.data[0]->kind == AST_NAME) {
            bind_iters(c, h, bound);
            mt_tbuffer *nb = alloc_buffer(c, s->items.data[0]->name, s->rhs);
            MT_VEC_PUSH(c->a, &h->allocs, nb);
            push_sym(c, nb->name, NULL, nb, NULL);
        } else return false;
        return true;
    }
    if (s->kind != AST_EXPR_STMT) return false;
    bind_iters(c, h, bound);
    if (!strcmp(fn, "where")) {
        arity(s->lhs, "where", 1, 1);
        if (b->predicate) mt_fail(MT_ERR_SYNTAX, s->loc, "a block has one T.where");
        b->predicate = bool_expr(c, s->lhs->items.data[0], "T.where's condition");
        c->guarded++;
    } else if (!strcmp(fn, "reads")) {
        regions(c, s->lhs, &b->reads, &b->nreads);
        h->has_reads = true;
    } else if (!strcmp(fn, "writes")) {
        regions(c, s->lhs, &b->writes, &b->nwrites);
        h->has_writes = true;
    } else {
        return false;
    }
    return true;
}

/* with T.block("name"): header statements, then the body */
static mt_tstmt *block(fctx *c, const mt_ast *with, const mt_ast *call) {
    only_keywords(call, "block", NULL);
    arity(call, "block", 0, 1);
    const char *name = call->items.len ? string_arg(call->items.data[0], "a block's name") : "";
    mt_tstmt *b = mt_ts_block(c->a, name);
    b->loc = with->loc;
    int mark = c->scope.len, lmark = c->loops.len, guarded = c->guarded, bound = 0, i = 0;
    block_hdr h;
    memset(&h, 0, sizeof h);
    while (i < with->body.len && block_header_stmt(c, b, &h, with->body.data[i], &bound)) i++;
    bind_iters(c, &h, &bound);
    b->body = stmts(c, &with->body, i);
    b->iters = h.iters.data;
    b->iter_values = h.values.data;
    b->niters = h.iters.len;
    b->allocs = h.allocs.data;
    b->nallocs = h.allocs.len;
    if (!h.has_reads || !h.has_writes) infer_regions(c, b, !h.has_reads, !h.has_writes);
    scope_truncate(c, mark);
    c->loops.len = lmark;
    c->guarded = guarded;
    return b;
}

/* ---- statements ----------------------------------------------------------- */

/* The loop kind and bounds of range(...) / T.serial(...) / T.parallel(...)
 * / T.vectorized(...) / T.unroll(...) / T.thread_binding(..., thread=...) */
static mt_for_kind loop_iter(fctx *c, const mt_ast *it, mt_texpr **min, mt_texpr **ext, const char **tag) {
    const char *fn = t_call(c, it);
    bool range = it->kind == AST_CALL && it->lhs->kind == AST_NAME && !strcmp(it->lhs->name, "range");
    static const struct { const char *n; mt_for_kind k; } kinds[] = {
        {"serial", MT_FOR_SERIAL}, {"parallel", MT_FOR_PARALLEL}, {"vectorized", MT_FOR_VECTORIZED},
        {"unroll", MT_FOR_UNROLLED}, {"thread_binding", MT_FOR_THREAD}};
    int k = 0;
    while (fn && k < MT_ARRAY_LEN(kinds) && strcmp(kinds[k].n, fn) != 0) k++;
    if (!range && (!fn || k == MT_ARRAY_LEN(kinds)))
        mt_fail(MT_ERR_UNSUPPORTED, it->loc, "a loop runs over range(...), T.grid(...), T.serial, T.parallel, T.vectorized, T.unroll or T.thread_binding");
    mt_for_kind kind = range ? MT_FOR_SERIAL : kinds[k].k;
    const char *name = range ? "range" : fn;
    static const char *const thread_kw[] = {"thread", NULL};
    only_keywords(it, name, kind == MT_FOR_THREAD ? thread_kw : NULL);
    if (range && it->items.len == 3) {
        const mt_ast *st = it->items.data[2];
        if (st->kind != AST_INT || st->ival != 1) mt_fail(MT_ERR_UNSUPPORTED, st->loc, "a loop's step must be 1");
    } else {
        arity(it, name, 1, 2);
    }
    mt_texpr *a = i64_expr(c, it->items.data[0], "a loop bound");
    if (it->items.len == 1) {
        *min = mt_te_i64(c->a, 0), *ext = a;
    } else {
        mt_ast sl;
        memset(&sl, 0, sizeof sl);
        sl.kind = AST_SLICE, sl.loc = it->loc, sl.lhs = it->items.data[0], sl.rhs = it->items.data[1];
        mt_tbuffer dummy = {0};
        slice_range(c, &sl, &dummy, 0, min, ext);
        if ((*ext)->dtype != MT_INT64) mt_fail(MT_ERR_TYPE, it->items.data[1]->loc, "a loop bound must be int64");
    }
    *tag = NULL;
    if (kind == MT_FOR_THREAD) {
        static const char *const tags[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"};
        const mt_ast *t = keyword(it, "thread");
        if (!t) mt_fail(MT_ERR_TYPE, it->loc, "T.thread_binding needs thread=\"threadIdx.x\" (or blockIdx.x, ...)");
        const char *s = string_arg(t, "thread=");
        int j = 0;
        while (j < MT_ARRAY_LEN(tags) && strcmp(tags[j], s) != 0) j++;
        if (j == MT_ARRAY_LEN(tags))
            mt_fail(MT_ERR_NAME, t->loc, "unknown thread '%s' (expected blockIdx.x/y/z or threadIdx.x/y/z)", s);
        *tag = tags[j];
    }
    return kind;
}

/* The variable of an earlier loop bound to the same thread index under the
 * same name, not enclosing this one: GPU phases (tir.h) are sibling loops
 * over one thread variable. */
static mt_tvar *thread_var(fctx *c, const char *name, const char *tag) {
    for (int i = 0; i < c->thread_loops.len; i++) {
        const mt_tstmt *l = c->thread_loops.data[i];
        if (!strcmp(l->thread_tag, tag) && !strcmp(l->var->name, name) && !loop_of(c, l->var)) return l->var;
    }
    return NULL;
}

/* for NAME, ... in T.grid(e, ...): body  |  for NAME in <loop iter>: body */
static mt_tstmt *for_stmt(fctx *c, const mt_ast *s) {
    if (s->orelse.len) mt_fail(MT_ERR_UNSUPPORTED, s->orelse.data[0]->loc, "'for ... else' is not supported");
    const mt_ast *t = s->lhs, *it = s->rhs;
    int n = t->kind == AST_TUPLE ? t->items.len : 1;
    mt_texpr *mins[MT_MAX_RANK * 4], *exts[MT_MAX_RANK * 4];
    mt_for_kind kinds[MT_MAX_RANK * 4];
    const char *tag = NULL;
    if (is_t_call(c, it, "grid")) {
        only_keywords(it, "grid", NULL);
        if (it->items.len != n || n > MT_ARRAY_LEN(mins))
            mt_fail(MT_ERR_TYPE, it->loc, "T.grid has %d extents for %d loop variables", it->items.len, n);
        for (int i = 0; i < n; i++) {
            mins[i] = mt_te_i64(c->a, 0);
            exts[i] = i64_expr(c, it->items.data[i], "a loop extent");
            kinds[i] = MT_FOR_SERIAL;
        }
    } else {
        if (n != 1) mt_fail(MT_ERR_TYPE, t->loc, "one loop variable here; T.grid(...) makes several");
        kinds[0] = loop_iter(c, it, &mins[0], &exts[0], &tag);
    }
    mt_tvar *vars[MT_MAX_RANK * 4];
    int mark = c->scope.len, lmark = c->loops.len;
    for (int i = 0; i < n; i++) {
        const mt_ast *v = n > 1 ? t->items.data[i] : t;
        if (v->kind != AST_NAME) mt_fail(MT_ERR_SYNTAX, v->loc, "a loop variable must be a name");
        vars[i] = tag ? thread_var(c, v->name, tag) : NULL;
        if (!vars[i]) vars[i] = mt_tvar_new(c->a, v->name, MT_INT64);
        push_sym(c, v->name, vars[i], NULL, NULL);
        int64_t k;
        loop_info li = {vars[i], mins[i], exts[i],
                        mt_te_is_const_int(mins[i], &k) && mt_te_is_const_int(exts[i], &k)};
        MT_VEC_PUSH(c->a, &c->loops, li);
    }
    mt_tstmt *body = stmts(c, &s->body, 0);
    scope_truncate(c, mark);
    c->loops.len = lmark;
    for (int i = n - 1; i >= 0; i--) {
        body = mt_ts_for(c->a, vars[i], mins[i], exts[i], kinds[i], body);
        body->thread_tag = tag;
        body->loc = s->loc;
    }
    if (tag) MT_VEC_PUSH(c->a, &c->thread_loops, body);
    return body;
}

/* store: NAME '[' indices ']' ('=' | op'=') expr */
static mt_tstmt *store(fctx *c, const mt_ast *target, const mt_ast *value, mt_tok_kind aug, mt_loc loc) {
    if (target->kind == AST_NAME) {
        const sym *s = lookup(c, target->name);
        if (s && s->buf)
            mt_fail(MT_ERR_TYPE, target->loc, "cannot assign to buffer '%s'; store into an element: %s[...] = ...",
                    target->name, target->name);
        mt_fail(MT_ERR_TYPE, target->loc, "'%s' is not a buffer: only buffer elements can be updated", target->name);
    }
    if (target->kind != AST_SUBSCRIPT) mt_fail(MT_ERR_SYNTAX, target->loc, "only buffer elements can be stored into");
    if (target->lhs->kind == AST_NAME) {
        const sym *s = lookup(c, target->lhs->name);
        if (s && !s->buf)
            mt_fail(MT_ERR_TYPE, target->lhs->loc, "'%s' is not a buffer: only buffers can be stored into", target->lhs->name);
    }
    mt_tbuffer *b = buffer_named(c, target->lhs, "a store target");
    int n;
    mt_texpr **ix = indices(c, b, target, &n);
    val v = expr(c, value);
    if (aug != TK_ASSIGN) {
        static const struct { mt_tok_kind t; mt_tok_kind op; } ops[] = {
            {TK_PLUSEQ, TK_PLUS}, {TK_MINUSEQ, TK_MINUS}, {TK_STAREQ, TK_STAR},
            {TK_SLASHEQ, TK_SLASH}, {TK_DSLASHEQ, TK_DSLASH}, {TK_PERCENTEQ, TK_PERCENT}};
        int k = 0;
        while (k < MT_ARRAY_LEN(ops) && ops[k].t != aug) k++;
        if (k == MT_ARRAY_LEN(ops))
            mt_fail(MT_ERR_UNSUPPORTED, loc, "operator '%s' is not supported in loop functions", op_str(aug));
        val old = strong(mt_te_load(c->a, b, ix, n));
        unify(c, &old, &v, loc, op_str(ops[k].op));
        mt_ast fake;
        memset(&fake, 0, sizeof fake);
        fake.op = ops[k].op, fake.loc = loc;
        v = strong(mt_te_bin(c->a, binop_kind(c, &fake, b->dtype), old.e, v.e));
    }
    mt_texpr *x = as_dtype(c, v, b->dtype, value->loc, mt_arena_printf(c->a, "the value stored into '%s'", b->name));
    mt_tstmt *st = mt_ts_store(c->a, b, ix, n, x);
    st->loc = loc;
    return st;
}

/* if expr: body [else: body] */
static mt_tstmt *if_stmt(fctx *c, const mt_ast *s) {
    mt_texpr *cond = bool_expr(c, s->cond, "an if condition");
    c->guarded++;
    mt_tstmt *then_s = stmts(c, &s->body, 0);
    mt_tstmt *else_s = s->orelse.len ? stmts(c, &s->orelse, 0) : NULL;
    c->guarded--;
    mt_tstmt *r = mt_ts_if(c->a, cond, then_s, else_s);
    r->loc = s->loc;
    return r;
}

/* T.launch("callee", args..., grid=(...), block=(...), shared=e, min=e) */
static mt_tstmt *launch(fctx *c, const mt_ast *call) {
    static const char *const kws[] = {"grid", "block", "shared", "min", NULL};
    only_keywords(call, "launch", kws);
    if (call->items.len < 1) arity(call, "launch", 1, 64);
    const mt_ast *nm = call->items.data[0];
    const char *name = string_arg(nm, "the launched function");
    const mt_ast *def = NULL;
    for (int i = 0; i < c->s->module->body.len && !def; i++) {
        const mt_ast *d = c->s->module->body.data[i];
        if (d->kind == AST_FUNCDEF && !strcmp(d->name, name) && mt_ast_is_prim_func(d)) def = d;
    }
    if (!def) mt_fail(MT_ERR_NAME, nm->loc, "T.launch of '%s': no loop function of that name", name);
    mt_tfunc *callee = build_def(c->s, def, NULL, 0);
    int n = call->items.len - 1;
    mt_targ *args = MT_NEW_ARRAY(c->a, mt_targ, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        const mt_ast *e = call->items.data[i + 1];
        const sym *s = e->kind == AST_NAME ? lookup(c, e->name) : NULL;
        if (s && s->buf) args[i].buf = s->buf;
        else args[i].value = settle(c, expr(c, e), e->loc);
    }
    mt_tstmt *st = mt_ts_launch(c->a, callee, args, n);
    st->loc = call->loc;
    const char *keys[2] = {"grid", "block"};
    for (int k = 0; k < 2; k++) {
        const mt_ast *t = keyword(call, keys[k]);
        if (!t) continue;
        const mt_ast_list *items = t->kind == AST_TUPLE ? &t->items : NULL;
        int m = items ? items->len : 1;
        if (m > 3) mt_fail(MT_ERR_TYPE, t->loc, "%s= has at most 3 extents", keys[k]);
        for (int d = 0; d < m; d++)
            (k ? st->launch->block : st->launch->grid)[d] = i64_expr(c, items ? items->data[d] : t, "a launch extent");
    }
    if (keyword(call, "shared")) st->launch->shared_bytes = i64_expr(c, keyword(call, "shared"), "shared=");
    if (keyword(call, "min")) st->launch->min = i64_expr(c, keyword(call, "min"), "min=");
    return st;
}

/* The int64 values of a tuple `(a, b)` (`()`, `(a,)`) of T.check_bounds. */
static mt_texpr **i64_tuple(fctx *c, const mt_ast *e, const char *what, int *n) {
    if (e->kind != AST_TUPLE)
        mt_fail(MT_ERR_TYPE, e->loc, "T.check_bounds takes its indices and dims as tuples: (i,), (n,)");
    *n = e->items.len;
    mt_texpr **out = MT_NEW_ARRAY(c->a, mt_texpr *, *n > 0 ? *n : 1);
    for (int i = 0; i < *n; i++) out[i] = i64_expr(c, e->items.data[i], what);
    return out;
}

/* T.check_bounds(cond, "load"|"store", "name", (idx...), (dims...)): a
 * run-time bounds check (what the check_bounds pass inserts). */
static mt_tstmt *check_stmt(fctx *c, const mt_ast *call, mt_loc loc) {
    arity(call, "check_bounds", 5, 5);
    only_keywords(call, "check_bounds", NULL);
    mt_ast *const *x = call->items.data;
    mt_texpr *cond = bool_expr(c, x[0], "a bounds check's condition");
    const char *kind = string_arg(x[1], "T.check_bounds' access kind");
    if (strcmp(kind, "load") != 0 && strcmp(kind, "store") != 0)
        mt_fail(MT_ERR_TYPE, x[1]->loc, "T.check_bounds' access kind must be \"load\" or \"store\"");
    const char *name = string_arg(x[2], "T.check_bounds' buffer name");
    int n, nd;
    mt_texpr **idx = i64_tuple(c, x[3], "an index", &n);
    mt_texpr **dims = i64_tuple(c, x[4], "a dim", &nd);
    if (n != nd)
        mt_fail(MT_ERR_SHAPE, x[4]->loc, "T.check_bounds has %d ind%s and %d dim%s: one dim per index", n,
                n == 1 ? "ex" : "ices", nd, nd == 1 ? "" : "s");
    mt_tstmt *st = mt_ts_check(c->a, cond, kind[0] == 's', name, idx, dims, n);
    st->loc = loc;
    return st;
}

/* An expression statement: T.evaluate(e), T.launch(...), T.check_bounds(...). */
static mt_tstmt *expr_stmt(fctx *c, const mt_ast *s) {
    const mt_ast *e = s->lhs;
    const char *fn = t_call(c, e);
    if (e->kind == AST_STR) return NULL; /* a docstring-like string */
    if (fn && !strcmp(fn, "launch")) return launch(c, e);
    if (fn && !strcmp(fn, "check_bounds")) return check_stmt(c, e, s->loc);
    if (fn && !strcmp(fn, "evaluate")) {
        arity(e, "evaluate", 1, 1);
        only_keywords(e, "evaluate", NULL);
        mt_texpr *v = settle(c, expr(c, e->items.data[0]), e->loc);
        if (v->kind == TE_INT) return mt_ts_seq(c->a, NULL, 0);
        mt_tstmt *st = mt_ts_eval(c->a, v);
        st->loc = s->loc;
        return st;
    }
    if (fn && (!strcmp(fn, "reads") || !strcmp(fn, "writes") || !strcmp(fn, "where")))
        mt_fail(MT_ERR_SYNTAX, e->loc, "T.%s belongs in the header of a block, before its body", fn);
    if (fn && !strcmp(fn, "func_attr"))
        mt_fail(MT_ERR_SYNTAX, e->loc, "T.func_attr must be the first statement of a loop function");
    if (e->kind == AST_CALL && !fn) (void)expr(c, e); /* reports the unknown function */
    mt_fail(MT_ERR_SYNTAX, s->loc, "expression statement has no effect; store its value into a buffer");
}

/* with T.block(...): ... (T.init only inside a block's header) */
static mt_tstmt *with_stmt(fctx *c, const mt_ast *s) {
    if (s->items.len != 1) mt_fail(MT_ERR_UNSUPPORTED, s->loc, "one context per 'with' in a loop function");
    const mt_ast *item = s->items.data[0];
    if (item->rhs) mt_fail(MT_ERR_UNSUPPORTED, item->rhs->loc, "'with ... as' is not supported in loop functions");
    if (is_t_call(c, item->lhs, "block")) return block(c, s, item->lhs);
    if (is_t_call(c, item->lhs, "init"))
        mt_fail(MT_ERR_SYNTAX, item->lhs->loc, "T.init() is only allowed in the header of a block");
    mt_fail(MT_ERR_UNSUPPORTED, item->lhs->loc, "only 'with T.block(...)' is supported in loop functions");
}

static bool is_binding(fctx *c, const mt_ast *s) {
    return s->kind == AST_ASSIGN && s->items.len == 1 && s->items.data[0]->kind == AST_NAME &&
           !(s->rhs->kind == AST_CALL && t_call(c, s->rhs) && !strncmp(t_call(c, s->rhs), "axis.", 5));
}

/* NAME '=' expr, or NAME '=' T.alloc_buffer(...): a let or an allocation
 * whose body (filled by stmts) is the statements after it; its name stays
 * in scope until stmts is done with its list. */
static mt_tstmt *binding(fctx *c, const mt_ast *s) {
    const char *name = s->items.data[0]->name;
    const sym *old = lookup(c, name);
    if (old && old->buf)
        mt_fail(MT_ERR_TYPE, s->items.data[0]->loc, "cannot assign to buffer '%s'; store into an element: %s[...] = ...",
                name, name);
    mt_tstmt *r;
    if (is_t_call(c, s->rhs, "alloc_buffer")) {
        mt_tbuffer *b = alloc_buffer(c, name, s->rhs);
        push_sym(c, name, NULL, b, NULL);
        r = mt_ts_alloc(c->a, b, NULL);
    } else {
        mt_texpr *v = settle(c, expr(c, s->rhs), s->rhs->loc);
        mt_tvar *var = mt_tvar_new(c->a, name, v->dtype);
        push_sym(c, name, var, NULL, NULL);
        MT_VEC_PUSH(c->a, &c->let_vars, var);
        MT_VEC_PUSH(c->a, &c->let_values, v);
        r = mt_ts_let(c->a, var, v, NULL);
    }
    r->loc = s->loc;
    return r;
}

static mt_tstmt *stmt(fctx *c, const mt_ast *s) {
    switch (s->kind) {
    case AST_FOR: return for_stmt(c, s);
    case AST_IF: return if_stmt(c, s);
    case AST_WITH: return with_stmt(c, s);
    case AST_PASS: return NULL;
    case AST_EXPR_STMT: return expr_stmt(c, s);
    case AST_AUGASSIGN: return store(c, s->lhs, s->rhs, s->op, s->loc);
    case AST_ASSIGN: {
        if (s->items.len != 1) mt_fail(MT_ERR_UNSUPPORTED, s->loc, "chained assignment is not supported in loop functions");
        const char *fn = t_call(c, s->rhs);
        if (fn && !strncmp(fn, "axis.", 5))
            mt_fail(MT_ERR_SYNTAX, s->rhs->loc, "T.%s belongs in the header of a block", fn);
        if (s->items.data[0]->kind == AST_TUPLE)
            mt_fail(MT_ERR_UNSUPPORTED, s->loc, "tuple assignment is not supported in loop functions");
        return store(c, s->items.data[0], s->rhs, TK_ASSIGN, s->loc);
    }
    case AST_RETURN:
        mt_fail(MT_ERR_SYNTAX, s->loc, "a loop function returns nothing; it stores into its output buffers");
    case AST_WHILE: mt_fail(MT_ERR_UNSUPPORTED, s->loc, "'while' loops are not supported; use 'for i in range(n)'");
    case AST_FUNCDEF: mt_fail(MT_ERR_UNSUPPORTED, s->loc, "nested function definitions are not supported");
    case AST_UNSUPPORTED: mt_fail(MT_ERR_UNSUPPORTED, s->loc, "'%s' is not supported in minitriton kernels", s->name);
    default: mt_fail(MT_ERR_UNSUPPORTED, s->loc, "this statement is not supported in loop functions");
    }
}

/* stmts: stmt* -- a let or an allocation takes the rest as its body. The
 * chain of lets is built in a loop, not by recursion: a dump may hold
 * thousands of lets in a row. */
static mt_tstmt *stmts(fctx *c, const mt_ast_list *l, int from) {
    MT_VEC(mt_tstmt *) out = {0};
    mt_tstmt *result = NULL, **hole = &result;
    int mark = c->scope.len, nlets = 0;
    for (int i = from; i < l->len; i++) {
        const mt_ast *s = l->data[i];
        enter(c, s->loc);
        bool bind = is_binding(c, s);
        mt_tstmt *t = bind ? binding(c, s) : stmt(c, s);
        leave(c);
        if (t) MT_VEC_PUSH(c->a, &out, t);
        if (!bind) continue;
        if (++nlets > MAX_LETS)
            mt_fail(MT_ERR_LIMIT, s->loc, "more than %d lets and allocations in a row", MAX_LETS);
        *hole = mt_ts_seq(c->a, out.data, out.len);
        hole = &t->body;
        memset(&out, 0, sizeof out);
    }
    *hole = mt_ts_seq(c->a, out.data, out.len);
    scope_truncate(c, mark);
    return result;
}

/* ---- functions ------------------------------------------------------------ */

bool mt_ast_is_prim_func(const mt_ast *def) { return mt_ast_has_decorator(def, "prim_func"); }

/* T.func_attr({"key": "value", ...}) */
static void func_attr(fctx *c, const mt_ast *call) {
    arity(call, "func_attr", 1, 1);
    only_keywords(call, "func_attr", NULL);
    const mt_ast *d = call->items.data[0];
    if (d->kind != AST_DICT) mt_fail(MT_ERR_TYPE, d->loc, "T.func_attr takes a dict of strings");
    for (int i = 0; i < d->items.len; i++) {
        const char *k = string_arg(d->items.data[i], "an attribute key");
        const char *v = string_arg(d->kw.data[i], "an attribute value");
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
    push_sym(c, p->name, v, NULL, NULL);
}

static void check_param(fctx *c, const mt_ast *def, int i) {
    const mt_ast *p = def->items.data[i];
    if (p->rhs) mt_fail(MT_ERR_UNSUPPORTED, p->rhs->loc, "default parameter values are not supported");
    for (int j = 0; j < i; j++)
        if (!strcmp(def->items.data[j]->name, p->name)) mt_fail(MT_ERR_NAME, p->loc, "duplicate parameter '%s'", p->name);
    bool buf = p->lhs && is_t_call(c, p->lhs, "Buffer");
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
        if (!is_t_call(c, p->lhs, "Buffer")) scalar_param(c, p);
    }
    for (int i = 0; i < n; i++) {
        const mt_ast *p = def->items.data[i];
        if (is_t_call(c, p->lhs, "Buffer")) bufs[i] = buffer_type(c, p->name, p->lhs);
    }
    mt_tparam *ps = MT_NEW_ARRAY(c->a, mt_tparam, n > 0 ? n : 1);
    for (int i = 0, s = 0; i < n; i++) {
        if (bufs[i]) ps[i].buf = bufs[i];
        else ps[i] = c->f->params[s++];
    }
    c->f->params = ps;
    c->f->nparams = n;
    for (int i = 0; i < n; i++)
        if (bufs[i]) push_sym(c, bufs[i]->name, NULL, bufs[i], NULL);
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
    if (i < l->len && l->data[i]->kind == AST_EXPR_STMT && is_t_call(c, l->data[i]->lhs, "func_attr"))
        func_attr(c, l->data[i++]->lhs);
    bool blocks = has_block(l);
    MT_VEC(mt_tbuffer *) allocs = {0};
    for (; blocks && i < l->len; i++) {
        const mt_ast *s = l->data[i];
        if (!(is_binding(c, s) && is_t_call(c, s->rhs, "alloc_buffer"))) break;
        mt_tbuffer *b = alloc_buffer(c, s->items.data[0]->name, s->rhs);
        MT_VEC_PUSH(c->a, &allocs, b);
        push_sym(c, b->name, NULL, b, NULL);
    }
    c->f->allocs = allocs.data;
    c->f->nallocs = allocs.len;
    c->f->body = stmts(c, l, i);
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
static mt_tfunc *build_def(session *s, const mt_ast *def, const mt_tir_symbind *binds, int nbinds) {
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
    return build_def(&s, def, binds, nbinds);
}

mt_tfunc **mt_tir_from_module(mt_arena *a, const mt_ast *module, int *n) {
    session s;
    memset(&s, 0, sizeof s);
    s.a = a, s.module = module;
    MT_VEC(mt_tfunc *) fs = {0};
    for (int i = 0; i < module->body.len; i++) {
        const mt_ast *d = module->body.data[i];
        if (d->kind == AST_FUNCDEF && mt_ast_is_prim_func(d)) MT_VEC_PUSH(a, &fs, build_def(&s, d, NULL, 0));
    }
    *n = fs.len;
    return fs.data;
}
