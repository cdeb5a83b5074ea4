/*
 * from_ast_stmt.c -- the statements of a `@T.prim_func` (see from_ast.h;
 * the files of the walk: from_ast_internal.h).
 *
 * `x = e` is a let whose body is the rest of the statements at its level;
 * `x = T.alloc_buffer(...)` likewise scopes an allocation (TS_ALLOC),
 * except at the top of a function with blocks (its function-level
 * allocations, f->allocs, from_ast.c) and in a block's header (the
 * block's, from_ast_block.c). `for` over range, T.grid, T.serial,
 * T.parallel, T.vectorized, T.unroll and T.thread_binding make loops
 * (T.grid a nest); sibling T.thread_binding loops of one name and tag share
 * their variable (the phases of a GPU kernel). A store may be augmented
 * (`+=`); T.launch, T.check_bounds, T.evaluate and T.prefetch are expression
 * statements; `with T.block(...)` is a block.
 */
#include <string.h>

#include "support/common.h"
#include "tir/from_ast_internal.h"

enum { MAX_LETS = 1 << 14 };

/* ---- statements ----------------------------------------------------------- */

/* The loop kind and bounds of range(...) / T.serial(...) / T.parallel(...)
 * / T.vectorized(...) / T.unroll(...) / T.thread_binding(..., thread=...) */
static mt_for_kind loop_iter(fctx *c, const mt_ast *it, mt_texpr **min, mt_texpr **ext, const char **tag) {
    const char *fn = mt_fa_t_call(c, it);
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
    mt_fa_only_keywords(it, name, kind == MT_FOR_THREAD ? thread_kw : NULL);
    if (range && it->items.len == 3) {
        const mt_ast *st = it->items.data[2];
        if (st->kind != AST_INT || st->ival != 1) mt_fail(MT_ERR_UNSUPPORTED, st->loc, "a loop's step must be 1");
    } else {
        mt_fa_arity(it, name, 1, 2);
    }
    mt_texpr *a = mt_fa_i64_expr(c, it->items.data[0], "a loop bound");
    if (it->items.len == 1) {
        *min = mt_te_i64(c->a, 0), *ext = a;
    } else {
        mt_ast sl;
        memset(&sl, 0, sizeof sl);
        sl.kind = AST_SLICE, sl.loc = it->loc, sl.lhs = it->items.data[0], sl.rhs = it->items.data[1];
        mt_tbuffer dummy = {0};
        mt_fa_slice_range(c, &sl, &dummy, 0, min, ext);
        if ((*ext)->dtype != MT_INT64) mt_fail(MT_ERR_TYPE, it->items.data[1]->loc, "a loop bound must be int64");
    }
    *tag = NULL;
    if (kind == MT_FOR_THREAD) {
        static const char *const tags[] = {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"};
        const mt_ast *t = mt_fa_keyword(it, "thread");
        if (!t) mt_fail(MT_ERR_TYPE, it->loc, "T.thread_binding needs thread=\"threadIdx.x\" (or blockIdx.x, ...)");
        const char *s = mt_fa_string_arg(t, "thread=");
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
        if (!strcmp(l->thread_tag, tag) && !strcmp(l->var->name, name) && !mt_fa_loop_of(c, l->var)) return l->var;
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
    if (mt_fa_is_t_call(c, it, "grid")) {
        mt_fa_only_keywords(it, "grid", NULL);
        if (it->items.len != n || n > MT_ARRAY_LEN(mins))
            mt_fail(MT_ERR_TYPE, it->loc, "T.grid has %d extents for %d loop variables", it->items.len, n);
        for (int i = 0; i < n; i++) {
            mins[i] = mt_te_i64(c->a, 0);
            exts[i] = mt_fa_i64_expr(c, it->items.data[i], "a loop extent");
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
        mt_fa_push_sym(c, v->name, vars[i], NULL, NULL);
        int64_t k;
        loop_info li = {vars[i], mins[i], exts[i],
                        mt_te_is_const_int(mins[i], &k) && mt_te_is_const_int(exts[i], &k)};
        MT_VEC_PUSH(c->a, &c->loops, li);
    }
    mt_tstmt *body = mt_fa_stmts(c, &s->body, 0);
    mt_fa_scope_truncate(c, mark);
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
        const sym *s = mt_fa_lookup(c, target->name);
        if (s && s->buf)
            mt_fail(MT_ERR_TYPE, target->loc, "cannot assign to buffer '%s'; store into an element: %s[...] = ...",
                    target->name, target->name);
        mt_fail(MT_ERR_TYPE, target->loc, "'%s' is not a buffer: only buffer elements can be updated", target->name);
    }
    if (target->kind != AST_SUBSCRIPT) mt_fail(MT_ERR_SYNTAX, target->loc, "only buffer elements can be stored into");
    if (target->lhs->kind == AST_NAME) {
        const sym *s = mt_fa_lookup(c, target->lhs->name);
        if (s && !s->buf)
            mt_fail(MT_ERR_TYPE, target->lhs->loc, "'%s' is not a buffer: only buffers can be stored into", target->lhs->name);
    }
    mt_tbuffer *b = mt_fa_buffer_named(c, target->lhs, "a store target");
    int n;
    mt_texpr **ix = mt_fa_indices(c, b, target, &n);
    val v = mt_fa_expr(c, value);
    if (aug != TK_ASSIGN) {
        static const struct { mt_tok_kind t; mt_tok_kind op; } ops[] = {
            {TK_PLUSEQ, TK_PLUS}, {TK_MINUSEQ, TK_MINUS}, {TK_STAREQ, TK_STAR},
            {TK_SLASHEQ, TK_SLASH}, {TK_DSLASHEQ, TK_DSLASH}, {TK_PERCENTEQ, TK_PERCENT}};
        int k = 0;
        while (k < MT_ARRAY_LEN(ops) && ops[k].t != aug) k++;
        if (k == MT_ARRAY_LEN(ops))
            mt_fail(MT_ERR_UNSUPPORTED, loc, "operator '%s' is not supported in loop functions", mt_fa_op_str(aug));
        val old = mt_fa_strong(mt_te_load(c->a, b, ix, n));
        mt_fa_unify(c, &old, &v, loc, mt_fa_op_str(ops[k].op));
        mt_ast fake;
        memset(&fake, 0, sizeof fake);
        fake.op = ops[k].op, fake.loc = loc;
        v = mt_fa_strong(mt_te_bin(c->a, mt_fa_binop_kind(c, &fake, b->dtype), old.e, v.e));
    }
    mt_texpr *x = mt_fa_as_dtype(c, v, b->dtype, value->loc, mt_arena_printf(c->a, "the value stored into '%s'", b->name));
    mt_tstmt *st = mt_ts_store(c->a, b, ix, n, x);
    st->loc = loc;
    return st;
}

/* if expr: body [else: body] */
static mt_tstmt *if_stmt(fctx *c, const mt_ast *s) {
    mt_texpr *cond = mt_fa_bool_expr(c, s->cond, "an if condition");
    c->guarded++;
    mt_tstmt *then_s = mt_fa_stmts(c, &s->body, 0);
    mt_tstmt *else_s = s->orelse.len ? mt_fa_stmts(c, &s->orelse, 0) : NULL;
    c->guarded--;
    mt_tstmt *r = mt_ts_if(c->a, cond, then_s, else_s);
    r->loc = s->loc;
    return r;
}

/* T.launch("callee", args..., grid=(...), block=(...), shared=e, min=e) */
static mt_tstmt *launch(fctx *c, const mt_ast *call) {
    static const char *const kws[] = {"grid", "block", "shared", "min", NULL};
    mt_fa_only_keywords(call, "launch", kws);
    if (call->items.len < 1) mt_fa_arity(call, "launch", 1, 64);
    const mt_ast *nm = call->items.data[0];
    const char *name = mt_fa_string_arg(nm, "the launched function");
    const mt_ast *def = NULL;
    for (int i = 0; i < c->s->module->body.len && !def; i++) {
        const mt_ast *d = c->s->module->body.data[i];
        if (d->kind == AST_FUNCDEF && !strcmp(d->name, name) && mt_ast_is_prim_func(d)) def = d;
    }
    if (!def) mt_fail(MT_ERR_NAME, nm->loc, "T.launch of '%s': no loop function of that name", name);
    mt_tfunc *callee = mt_fa_build_def(c->s, def, NULL, 0);
    int n = call->items.len - 1;
    mt_targ *args = MT_NEW_ARRAY(c->a, mt_targ, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        const mt_ast *e = call->items.data[i + 1];
        const sym *s = e->kind == AST_NAME ? mt_fa_lookup(c, e->name) : NULL;
        if (s && s->buf) args[i].buf = s->buf;
        else args[i].value = mt_fa_settle(c, mt_fa_expr(c, e), e->loc);
    }
    mt_tstmt *st = mt_ts_launch(c->a, callee, args, n);
    st->loc = call->loc;
    const char *keys[2] = {"grid", "block"};
    for (int k = 0; k < 2; k++) {
        const mt_ast *t = mt_fa_keyword(call, keys[k]);
        if (!t) continue;
        const mt_ast_list *items = t->kind == AST_TUPLE ? &t->items : NULL;
        int m = items ? items->len : 1;
        if (m > 3) mt_fail(MT_ERR_TYPE, t->loc, "%s= has at most 3 extents", keys[k]);
        for (int d = 0; d < m; d++)
            (k ? st->launch->block : st->launch->grid)[d] = mt_fa_i64_expr(c, items ? items->data[d] : t, "a launch extent");
    }
    if (mt_fa_keyword(call, "shared")) st->launch->shared_bytes = mt_fa_i64_expr(c, mt_fa_keyword(call, "shared"), "shared=");
    if (mt_fa_keyword(call, "min")) st->launch->min = mt_fa_i64_expr(c, mt_fa_keyword(call, "min"), "min=");
    return st;
}

/* The int64 values of a tuple `(a, b)` (`()`, `(a,)`) of T.check_bounds. */
static mt_texpr **i64_tuple(fctx *c, const mt_ast *e, const char *what, int *n) {
    if (e->kind != AST_TUPLE)
        mt_fail(MT_ERR_TYPE, e->loc, "T.check_bounds takes its indices and dims as tuples: (i,), (n,)");
    *n = e->items.len;
    mt_texpr **out = MT_NEW_ARRAY(c->a, mt_texpr *, *n > 0 ? *n : 1);
    for (int i = 0; i < *n; i++) out[i] = mt_fa_i64_expr(c, e->items.data[i], what);
    return out;
}

/* T.check_bounds(cond, "load"|"store", "name", (idx...), (dims...)): a
 * run-time bounds check (what the check_bounds pass inserts). */
static mt_tstmt *check_stmt(fctx *c, const mt_ast *call, mt_loc loc) {
    mt_fa_arity(call, "check_bounds", 5, 5);
    mt_fa_only_keywords(call, "check_bounds", NULL);
    mt_ast *const *x = call->items.data;
    mt_texpr *cond = mt_fa_bool_expr(c, x[0], "a bounds check's condition");
    const char *kind = mt_fa_string_arg(x[1], "T.check_bounds' access kind");
    if (strcmp(kind, "load") != 0 && strcmp(kind, "store") != 0)
        mt_fail(MT_ERR_TYPE, x[1]->loc, "T.check_bounds' access kind must be \"load\" or \"store\"");
    const char *name = mt_fa_string_arg(x[2], "T.check_bounds' buffer name");
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

/* An expression statement: T.evaluate(e), T.prefetch(x), T.launch(...),
 * T.check_bounds(...). */
static mt_tstmt *expr_stmt(fctx *c, const mt_ast *s) {
    const mt_ast *e = s->lhs;
    const char *fn = mt_fa_t_call(c, e);
    if (e->kind == AST_STR) return NULL; /* a docstring-like string */
    if (fn && !strcmp(fn, "launch")) return launch(c, e);
    if (fn && !strcmp(fn, "check_bounds")) return check_stmt(c, e, s->loc);
    if (fn && (!strcmp(fn, "evaluate") || !strcmp(fn, "prefetch"))) { /* T.prefetch(x): T.evaluate(T.prefetch(x)) */
        bool pf = fn[0] == 'p';
        if (!pf) {
            mt_fa_arity(e, "evaluate", 1, 1);
            mt_fa_only_keywords(e, "evaluate", NULL);
        }
        c->stmt_call = pf ? e : e->items.data[0];
        mt_texpr *v = mt_fa_settle(c, mt_fa_expr(c, c->stmt_call), e->loc);
        c->stmt_call = NULL;
        if (v->kind == TE_INT) return mt_ts_seq(c->a, NULL, 0);
        mt_tstmt *st = mt_ts_eval(c->a, v);
        st->loc = s->loc;
        return st;
    }
    if (fn && (!strcmp(fn, "reads") || !strcmp(fn, "writes") || !strcmp(fn, "where")))
        mt_fail(MT_ERR_SYNTAX, e->loc, "T.%s belongs in the header of a block, before its body", fn);
    if (fn && !strcmp(fn, "func_attr"))
        mt_fail(MT_ERR_SYNTAX, e->loc, "T.func_attr must be the first statement of a loop function");
    if (e->kind == AST_CALL && !fn) (void)mt_fa_expr(c, e); /* reports the unknown function */
    mt_fail(MT_ERR_SYNTAX, s->loc, "expression statement has no effect; store its value into a buffer");
}

/* with T.block(...): ... (T.init only inside a block's header) */
static mt_tstmt *with_stmt(fctx *c, const mt_ast *s) {
    if (s->items.len != 1) mt_fail(MT_ERR_UNSUPPORTED, s->loc, "one context per 'with' in a loop function");
    const mt_ast *item = s->items.data[0];
    if (item->rhs) mt_fail(MT_ERR_UNSUPPORTED, item->rhs->loc, "'with ... as' is not supported in loop functions");
    if (mt_fa_is_t_call(c, item->lhs, "block")) return mt_fa_block(c, s, item->lhs);
    if (mt_fa_is_t_call(c, item->lhs, "init"))
        mt_fail(MT_ERR_SYNTAX, item->lhs->loc, "T.init() is only allowed in the header of a block");
    mt_fail(MT_ERR_UNSUPPORTED, item->lhs->loc, "only 'with T.block(...)' is supported in loop functions");
}

bool mt_fa_is_binding(fctx *c, const mt_ast *s) {
    return s->kind == AST_ASSIGN && s->items.len == 1 && s->items.data[0]->kind == AST_NAME &&
           !(s->rhs->kind == AST_CALL && mt_fa_t_call(c, s->rhs) && !strncmp(mt_fa_t_call(c, s->rhs), "axis.", 5));
}

/* NAME '=' expr, or NAME '=' T.alloc_buffer(...): a let or an allocation
 * whose body (filled by stmts) is the statements after it; its name stays
 * in scope until stmts is done with its list. */
static mt_tstmt *binding(fctx *c, const mt_ast *s) {
    const char *name = s->items.data[0]->name;
    const sym *old = mt_fa_lookup(c, name);
    if (old && old->buf)
        mt_fail(MT_ERR_TYPE, s->items.data[0]->loc, "cannot assign to buffer '%s'; store into an element: %s[...] = ...",
                name, name);
    mt_tstmt *r;
    if (mt_fa_is_t_call(c, s->rhs, "alloc_buffer")) {
        mt_tbuffer *b = mt_fa_alloc_buffer(c, name, s->rhs);
        mt_fa_push_sym(c, name, NULL, b, NULL);
        r = mt_ts_alloc(c->a, b, NULL);
    } else {
        mt_texpr *v = mt_fa_settle(c, mt_fa_expr(c, s->rhs), s->rhs->loc);
        mt_tvar *var = mt_tvar_new(c->a, name, v->dtype);
        mt_fa_push_sym(c, name, var, NULL, NULL);
        c->scope.data[c->scope.len - 1].lanes = v->lanes; /* a vector let: its uses are vectors */
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
        const char *fn = mt_fa_t_call(c, s->rhs);
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
mt_tstmt *mt_fa_stmts(fctx *c, const mt_ast_list *l, int from) {
    MT_VEC(mt_tstmt *) out = {0};
    mt_tstmt *result = NULL, **hole = &result;
    int mark = c->scope.len, nlets = 0;
    for (int i = from; i < l->len; i++) {
        const mt_ast *s = l->data[i];
        mt_fa_enter(c, s->loc);
        bool bind = mt_fa_is_binding(c, s);
        mt_tstmt *t = bind ? binding(c, s) : stmt(c, s);
        mt_fa_leave(c);
        if (t) MT_VEC_PUSH(c->a, &out, t);
        if (!bind) continue;
        if (++nlets > MAX_LETS)
            mt_fail(MT_ERR_LIMIT, s->loc, "more than %d lets and allocations in a row", MAX_LETS);
        *hole = mt_ts_seq(c->a, out.data, out.len);
        hole = &t->body;
        memset(&out, 0, sizeof out);
    }
    *hole = mt_ts_seq(c->a, out.data, out.len);
    mt_fa_scope_truncate(c, mark);
    return result;
}
