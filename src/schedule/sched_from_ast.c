/*
 * sched_from_ast.c -- runs a `@T.schedule` function of the source on a
 * loop function (sched_from_ast.h).
 *
 * The schedule's body is straight-line Python: assignments (to a name or a
 * tuple of names), calls of `sch.<primitive>(...)`, `pass` and a docstring.
 * Values are loops and blocks (handles of user_sched.h), integers, strings,
 * None and lists/tuples of them; `x[i]` indexes a list. Each call is
 * checked (its arguments by name or position, their kinds) and run through
 * user_sched.h; a refusal fails at the primitive's name with the reason
 * ("parallel: loop 'k' drives reduce variable 'vk' ...").
 */
#include "schedule/sched_from_ast.h"

#include <string.h>

#include "schedule/knobs.h"
#include "schedule/user_sched.h"
#include "support/common.h"

typedef enum { V_NONE, V_INT, V_STR, V_LOOP, V_BLOCK, V_LIST, V_SCH, V_LAMBDA, V_NKINDS } vkind;

typedef struct value value;
struct value {
    vkind kind;
    int64_t i;          /* INT; LOOP and BLOCK: the handle */
    const char *s;      /* STR */
    value *items;       /* LIST */
    int n;
    const mt_ast *fn;   /* LAMBDA */
};

typedef struct binding {
    const char *name;
    value v;
} binding;

typedef struct interp {
    mt_arena *a;
    mt_usched u;
    MT_VEC(binding) env;
    const char *target; /* the function as the decorator names it (get_block's func_name=) */
} interp;

static const char *kind_name(vkind k) {
    static const char *const names[] = {[V_NONE] = "None",   [V_INT] = "an integer", [V_STR] = "a string",
                                        [V_LOOP] = "a loop",  [V_BLOCK] = "a block",  [V_LIST] = "a list",
                                        [V_SCH] = "the schedule", [V_LAMBDA] = "a lambda"};
    _Static_assert(sizeof names / sizeof names[0] == V_NKINDS, "a name for every kind of value");
    return names[k];
}

/* ---- names ------------------------------------------------------------------ */

static void bind(interp *in, const char *name, value v) {
    for (int i = 0; i < in->env.len; i++)
        if (strcmp(in->env.data[i].name, name) == 0) {
            in->env.data[i].v = v;
            return;
        }
    binding b = {name, v};
    MT_VEC_PUSH(in->a, &in->env, b);
}

static value lookup(interp *in, const mt_ast *n) {
    for (int i = 0; i < in->env.len; i++)
        if (strcmp(in->env.data[i].name, n->name) == 0) return in->env.data[i].v;
    mt_fail(MT_ERR_NAME, n->loc, "name '%s' is not defined in this schedule", n->name);
}

/* ---- expressions -------------------------------------------------------------- */

static value eval(interp *in, const mt_ast *e);

static value list_of(interp *in, const mt_ast *e) {
    value v = {V_LIST, 0, NULL, MT_NEW_ARRAY(in->a, value, e->items.len + 1), e->items.len};
    for (int i = 0; i < e->items.len; i++) v.items[i] = eval(in, e->items.data[i]);
    return v;
}

static value subscript(interp *in, const mt_ast *e) {
    value l = eval(in, e->lhs), k = eval(in, e->rhs);
    if (l.kind != V_LIST) mt_fail(MT_ERR_TYPE, e->loc, "%s cannot be indexed", kind_name(l.kind));
    if (k.kind != V_INT) mt_fail(MT_ERR_TYPE, e->rhs->loc, "a list index is an integer, not %s", kind_name(k.kind));
    int64_t i = k.i < 0 ? k.i + l.n : k.i;
    if (i < 0 || i >= l.n)
        mt_fail(MT_ERR_INVALID_ARG, e->rhs->loc, "index %lld is out of range for a list of %d", (long long)k.i, l.n);
    return l.items[i];
}

static value call(interp *in, const mt_ast *e);

static value eval(interp *in, const mt_ast *e) {
    switch (e->kind) {
    case AST_NAME: return lookup(in, e);
    case AST_INT: return (value){V_INT, e->ival, NULL, NULL, 0};
    case AST_STR: return (value){V_STR, 0, e->str, NULL, 0};
    case AST_NONE: return (value){V_NONE, 0, NULL, NULL, 0};
    case AST_LIST:
    case AST_TUPLE: return list_of(in, e);
    case AST_SUBSCRIPT: return subscript(in, e);
    case AST_CALL: return call(in, e);
    case AST_LAMBDA: return (value){V_LAMBDA, 0, NULL, NULL, 0, e};
    case AST_UNARY:
        if (e->op == TK_MINUS && e->lhs->kind == AST_INT) return (value){V_INT, -e->lhs->ival, NULL, NULL, 0};
        break;
    default: break;
    }
    mt_fail(MT_ERR_UNSUPPORTED, e->loc, "a schedule's values are loops, blocks, integers, strings, None, "
                                        "lists of them and index maps (lambda); this expression is none of those");
}

/* ---- arguments ----------------------------------------------------------------- */

#define MAX_ARGS 4

typedef struct prim_spec prim_spec;
typedef value (*prim_fn)(interp *in, const mt_ast *call, const prim_spec *p, value *args, const mt_ast **at);

struct prim_spec {
    const char *name;
    const char *params[MAX_ARGS]; /* NULL-terminated; "*" takes the rest (loops) */
    int required;                 /* how many must be given */
    prim_fn fn;
};

/* call's arguments into args[] by position and keyword; at[i] is where
 * argument i was written (NULL: not given). */
static void bind_args(const mt_ast *call, const prim_spec *p, interp *in, value *args, const mt_ast **at) {
    int np = 0;
    while (np < MAX_ARGS && p->params[np]) np++;
    bool star = np && strcmp(p->params[np - 1], "*") == 0;
    for (int i = 0; i < MAX_ARGS; i++) args[i] = (value){V_NONE, 0, NULL, NULL, 0}, at[i] = NULL;
    if (star) { /* sch.fuse(i, j, k): the arguments are one list */
        if (call->kw.len) mt_fail(MT_ERR_TYPE, call->kw.data[0]->loc, "sch.%s() takes no keyword arguments", p->name);
        args[0] = list_of(in, call), at[0] = call;
        if (call->items.len == 1 && args[0].items[0].kind == V_LIST) args[0] = args[0].items[0];
        return;
    }
    if (call->items.len > np)
        mt_fail(MT_ERR_TYPE, call->items.data[np]->loc, "sch.%s() takes %d argument%s, got %d", p->name, np,
                np == 1 ? "" : "s", call->items.len);
    for (int i = 0; i < call->items.len; i++) args[i] = eval(in, call->items.data[i]), at[i] = call->items.data[i];
    for (int k = 0; k < call->kw.len; k++) {
        const mt_ast *kw = call->kw.data[k];
        int j = 0;
        while (j < np && strcmp(p->params[j], kw->name) != 0) j++;
        if (j == np) mt_fail(MT_ERR_TYPE, kw->loc, "sch.%s() got an unexpected keyword argument '%s'", p->name, kw->name);
        if (at[j]) mt_fail(MT_ERR_TYPE, kw->loc, "sch.%s() got argument '%s' twice", p->name, kw->name);
        args[j] = eval(in, kw->lhs), at[j] = kw->lhs;
    }
    for (int j = 0; j < p->required; j++)
        if (!at[j]) mt_fail(MT_ERR_TYPE, call->loc, "sch.%s() is missing argument '%s'", p->name, p->params[j]);
}

static int64_t want(const value *v, vkind k, const mt_ast *at, const char *prim, const char *what) {
    if (v->kind != k) mt_fail(MT_ERR_TYPE, at->loc, "sch.%s(): %s must be %s, not %s", prim, what, kind_name(k), kind_name(v->kind));
    return v->i;
}

/* A list of loops (at most MT_USCHED_MAX) into h[]. */
static int loop_list(const value *v, const mt_ast *at, const char *prim, int *h) {
    if (v->kind == V_LOOP) {
        h[0] = (int)v->i;
        return 1;
    }
    if (v->kind != V_LIST) mt_fail(MT_ERR_TYPE, at->loc, "sch.%s() takes loops, not %s", prim, kind_name(v->kind));
    if (v->n > MT_USCHED_MAX) mt_fail(MT_ERR_LIMIT, at->loc, "sch.%s() takes at most %d loops", prim, MT_USCHED_MAX);
    for (int i = 0; i < v->n; i++) h[i] = (int)want(&v->items[i], V_LOOP, at, prim, "each argument");
    return v->n;
}

static value none(void) { return (value){V_NONE, 0, NULL, NULL, 0}; }
static value handle(vkind k, int h) { return (value){k, h, NULL, NULL, 0}; }

static value handles(interp *in, vkind k, const int *h, int n) {
    value v = {V_LIST, 0, NULL, MT_NEW_ARRAY(in->a, value, n + 1), n};
    for (int i = 0; i < n; i++) v.items[i] = handle(k, h[i]);
    return v;
}

/* The primitive's place: its name after the dot. */
static mt_loc prim_loc(const mt_ast *call) {
    mt_loc l = call->lhs->loc;
    l.col++;
    return l;
}

/* A refusal of the primitive fails at its name. */
static void check(bool ok, interp *in, const mt_ast *call) {
    if (!ok) mt_fail(MT_ERR_INVALID_ARG, prim_loc(call), "%s", in->u.error);
}

/* ---- the primitives ------------------------------------------------------------- */

static value p_get_block(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    want(&args[0], V_STR, at[0], p->name, "the block's name");
    const char *name = args[0].s;
    if (at[1] && (args[1].kind != V_STR || strcmp(args[1].s, in->target) != 0))
        mt_fail(MT_ERR_INVALID_ARG, at[1]->loc, "sch.get_block(): this schedule is for '%s'", in->target);
    int b;
    check(mt_usched_get_block(&in->u, name, &b), in, c);
    return handle(V_BLOCK, b);
}

static value p_get_loops(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    int h[MT_USCHED_MAX], n;
    check(mt_usched_get_loops(&in->u, (int)want(&args[0], V_BLOCK, at[0], p->name, "its argument"), h, &n), in, c);
    return handles(in, V_LOOP, h, n);
}

static value p_split(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    int loop = (int)want(&args[0], V_LOOP, at[0], p->name, "the first argument");
    const value *f = &args[1];
    if (f->kind != V_LIST) mt_fail(MT_ERR_TYPE, at[1]->loc, "sch.split(): factors is a list like [None, 8]");
    if (f->n > MT_USCHED_MAX) mt_fail(MT_ERR_LIMIT, at[1]->loc, "sch.split(): at most %d factors", MT_USCHED_MAX);
    int64_t fs[MT_USCHED_MAX];
    for (int i = 0; i < f->n; i++) {
        if (f->items[i].kind == V_NONE) fs[i] = 0;
        else if (f->items[i].kind == V_INT && f->items[i].i > 0) fs[i] = f->items[i].i;
        else mt_fail(MT_ERR_INVALID_ARG, at[1]->loc, "sch.split(): each factor is a positive integer or None");
    }
    int out[MT_USCHED_MAX];
    check(mt_usched_split(&in->u, loop, fs, f->n, out), in, c);
    return handles(in, V_LOOP, out, f->n);
}

static value p_fuse(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    int h[MT_USCHED_MAX], out, n = loop_list(&args[0], at[0], p->name, h);
    check(mt_usched_fuse(&in->u, h, n, &out), in, c);
    return handle(V_LOOP, out);
}

static value p_reorder(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    int h[MT_USCHED_MAX], n = loop_list(&args[0], at[0], p->name, h);
    check(mt_usched_reorder(&in->u, h, n), in, c);
    return none();
}

static value p_annotate(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    int loop = (int)want(&args[0], V_LOOP, at[0], p->name, "its argument");
    bool ok = p->name[0] == 'p'   ? mt_usched_parallel(&in->u, loop)
              : p->name[0] == 'v' ? mt_usched_vectorize(&in->u, loop)
                                  : mt_usched_unroll(&in->u, loop);
    check(ok, in, c);
    return none();
}

static value p_bind(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    int loop = (int)want(&args[0], V_LOOP, at[0], p->name, "the first argument");
    want(&args[1], V_STR, at[1], p->name, "thread_axis");
    check(mt_usched_bind(&in->u, loop, args[1].s), in, c);
    return none();
}

static value p_compute_at(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    int b = (int)want(&args[0], V_BLOCK, at[0], p->name, "the first argument");
    int loop = (int)want(&args[1], V_LOOP, at[1], p->name, "the second argument");
    check(mt_usched_compute_at(&in->u, b, loop), in, c);
    return none();
}

static value p_compute_inline(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    check(mt_usched_compute_inline(&in->u, (int)want(&args[0], V_BLOCK, at[0], p->name, "its argument")), in, c);
    return none();
}

static value p_cache(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    int b = (int)want(&args[0], V_BLOCK, at[0], p->name, "the first argument");
    int idx = (int)want(&args[1], V_INT, at[1], p->name, "the buffer's index");
    want(&args[2], V_STR, at[2], p->name, "storage_scope");
    int out;
    bool rd = p->name[6] == 'r';
    check(rd ? mt_usched_cache_read(&in->u, b, idx, args[2].s, &out)
             : mt_usched_cache_write(&in->u, b, idx, args[2].s, &out), in, c);
    return handle(V_BLOCK, out);
}

static value p_reverse_at(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    int b = (int)want(&args[0], V_BLOCK, at[0], p->name, "the first argument");
    int loop = (int)want(&args[1], V_LOOP, at[1], p->name, "the second argument");
    check(mt_usched_reverse_compute_at(&in->u, b, loop), in, c);
    return none();
}

static value p_reverse_inline(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    check(mt_usched_reverse_compute_inline(&in->u, (int)want(&args[0], V_BLOCK, at[0], p->name, "its argument")),
          in, c);
    return none();
}

static value p_decompose(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    int b = (int)want(&args[0], V_BLOCK, at[0], p->name, "the first argument");
    int loop = (int)want(&args[1], V_LOOP, at[1], p->name, "the second argument");
    int init;
    check(mt_usched_decompose_reduction(&in->u, b, loop, &init), in, c);
    return handle(V_BLOCK, init);
}

static value p_rfactor(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    int h[MT_USCHED_MAX], rf, n = loop_list(&args[0], at[0], p->name, h);
    check(mt_usched_rfactor(&in->u, h, n, &rf), in, c);
    return handle(V_BLOCK, rf);
}
static value p_use_fma(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    check(mt_usched_use_fma(&in->u, (int)want(&args[0], V_BLOCK, at[0], p->name, "its argument")), in, c);
    return none();
}

/* ---- transform_layout ------------------------------------------------------------ */

static mt_texpr *map_expr(mt_arena *a, const mt_ast *e, const mt_index_map *m) {
    static const struct { mt_tok_kind op; mt_texpr_kind k; } ops[] = {
        {TK_PLUS, TE_ADD}, {TK_MINUS, TE_SUB}, {TK_STAR, TE_MUL}, {TK_DSLASH, TE_FLOORDIV}, {TK_PERCENT, TE_FLOORMOD},
    };
    switch (e->kind) {
    case AST_INT: return mt_te_i64(a, e->ival);
    case AST_NAME:
        for (int i = 0; i < m->nparams; i++)
            if (strcmp(m->params[i]->name, e->name) == 0) return mt_te_var(a, m->params[i]);
        mt_fail(MT_ERR_NAME, e->loc, "name '%s' is not a parameter of the index map", e->name);
    case AST_UNARY:
        if (e->op == TK_PLUS) return map_expr(a, e->lhs, m);
        if (e->op == TK_MINUS) return mt_te_unary(a, TE_NEG, map_expr(a, e->lhs, m));
        break;
    case AST_BINOP:
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
            if (ops[i].op == e->op) return mt_te_bin(a, ops[i].k, map_expr(a, e->lhs, m), map_expr(a, e->rhs, m));
        break;
    default: break;
    }
    mt_fail(MT_ERR_UNSUPPORTED, e->loc, "an index map is built from its parameters, integers, +, -, *, // and %%");
}

mt_index_map *mt_index_map_from_ast(mt_arena *a, const mt_ast *lambda) {
    mt_index_map *m = MT_NEW(a, mt_index_map);
    const mt_ast *body = lambda->lhs;
    bool tuple = body->kind == AST_TUPLE;
    m->nparams = lambda->items.len;
    m->params = MT_NEW_ARRAY(a, mt_tvar *, m->nparams + 1);
    for (int i = 0; i < m->nparams; i++) m->params[i] = mt_tvar_new(a, lambda->items.data[i]->name, MT_INT64);
    m->nouts = tuple ? body->items.len : 1;
    if (m->nouts == 0) mt_fail(MT_ERR_TYPE, body->loc, "an index map gives at least one index");
    m->outs = MT_NEW_ARRAY(a, mt_texpr *, m->nouts);
    for (int o = 0; o < m->nouts; o++) m->outs[o] = map_expr(a, tuple ? body->items.data[o] : body, m);
    return m;
}

/* The buffer argument: a name, or ("read" | "write", index). */
static void layout_buffer(const value *v, const mt_ast *at, const char **name, char *rw, int *index) {
    if (v->kind == V_STR) {
        *name = v->s;
        return;
    }
    if (v->kind != V_LIST || v->n != 2 || v->items[0].kind != V_STR || v->items[1].kind != V_INT ||
        (strcmp(v->items[0].s, "read") != 0 && strcmp(v->items[0].s, "write") != 0))
        mt_fail(MT_ERR_TYPE, at->loc, "sch.transform_layout(): buffer is a buffer's name or (\"read\", i) / "
                                      "(\"write\", i), not %s", kind_name(v->kind));
    *name = NULL;
    *rw = v->items[0].s[0];
    *index = (int)v->items[1].i;
}

static value p_transform_layout(interp *in, const mt_ast *c, const prim_spec *p, value *args, const mt_ast **at) {
    int b = (int)want(&args[0], V_BLOCK, at[0], p->name, "the first argument");
    const char *name;
    char rw = 'r';
    int index = 0;
    layout_buffer(&args[1], at[1], &name, &rw, &index);
    if (args[2].kind != V_LAMBDA)
        mt_fail(MT_ERR_TYPE, at[2]->loc, "sch.transform_layout(): index_map is a lambda, like lambda i, j: "
                                         "(j // 16, i, j %% 16), not %s", kind_name(args[2].kind));
    mt_index_map *m = mt_index_map_from_ast(in->a, args[2].fn);
    check(mt_usched_transform_layout(&in->u, b, name, rw, index, m), in, c);
    return none();
}

static const prim_spec prims[] = {
    {"get_block", {"name", "func_name"}, 1, p_get_block},
    {"get_loops", {"block"}, 1, p_get_loops},
    {"split", {"loop", "factors"}, 2, p_split},
    {"fuse", {"*"}, 0, p_fuse},
    {"reorder", {"*"}, 0, p_reorder},
    {"parallel", {"loop"}, 1, p_annotate},
    {"vectorize", {"loop"}, 1, p_annotate},
    {"unroll", {"loop"}, 1, p_annotate},
    {"bind", {"loop", "thread_axis"}, 2, p_bind},
    {"compute_at", {"block", "loop"}, 2, p_compute_at},
    {"compute_inline", {"block"}, 1, p_compute_inline},
    {"reverse_compute_at", {"block", "loop"}, 2, p_reverse_at},
    {"reverse_compute_inline", {"block"}, 1, p_reverse_inline},
    {"cache_read", {"block", "read_buffer_index", "storage_scope"}, 3, p_cache},
    {"cache_write", {"block", "write_buffer_index", "storage_scope"}, 3, p_cache},
    {"decompose_reduction", {"block", "loop"}, 2, p_decompose},
    {"rfactor", {"loop"}, 1, p_rfactor},
    {"use_fma", {"block"}, 1, p_use_fma},
    {"transform_layout", {"block", "buffer", "index_map"}, 3, p_transform_layout},
};

/* sch.apply_rule("rule", knob=value, ...): the rule's name, then knobs by
 * keyword (their names are the rule's table's: user_rule.c checks them). */
static value apply_rule(interp *in, const mt_ast *c) {
    if (c->items.len != 1)
        mt_fail(MT_ERR_TYPE, c->items.len ? c->items.data[c->items.len > 1]->loc : c->loc,
                "sch.apply_rule() takes the rule's name, then its knobs by keyword "
                "(sch.apply_rule(\"schedule_matmul\", mr=4))");
    value r = eval(in, c->items.data[0]);
    want(&r, V_STR, c->items.data[0], "apply_rule", "the rule's name");
    mt_knobs k;
    memset(&k, 0, sizeof k);
    k.rule = r.s;
    if (!mt_knob_space(r.s))
        mt_fail(MT_ERR_INVALID_ARG, c->items.data[0]->loc, "apply_rule: no rule named '%s' (the rules with knobs: "
                MT_KNOB_RULES ")", r.s);
    for (int i = 0; i < c->kw.len; i++) {
        const mt_ast *kw = c->kw.data[i];
        value v = eval(in, kw->lhs);
        want(&v, V_INT, kw->lhs, "apply_rule", mt_arena_printf(in->a, "knob '%s'", kw->name));
        mt_knobs one = {r.s, {{kw->name, v.i}}, 1};
        char buf[256];
        const char *bad = mt_knobs_check(&one, buf, sizeof buf);
        if (bad) mt_fail(MT_ERR_INVALID_ARG, kw->loc, "apply_rule: %s", bad);
        for (int j = 0; j < i; j++)
            if (strcmp(c->kw.data[j]->name, kw->name) == 0)
                mt_fail(MT_ERR_TYPE, kw->loc, "sch.apply_rule() got knob '%s' twice", kw->name);
        if (!mt_knobs_set(&k, kw->name, v.i))
            mt_fail(MT_ERR_LIMIT, kw->loc, "sch.apply_rule() takes at most %d knobs", MT_KNOBS_MAX);
    }
    check(mt_usched_apply_rule(&in->u, r.s, &k), in, c);
    return none();
}

static const char *prim_names(mt_arena *a) {
    const char *s = "";
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        s = mt_arena_printf(a, "%s%s%s", s, i ? ", " : "", prims[i].name);
    return mt_arena_printf(a, "%s, apply_rule", s);
}

static value call(interp *in, const mt_ast *e) {
    const mt_ast *f = e->lhs;
    if (f->kind != AST_ATTR || f->lhs->kind != AST_NAME || lookup(in, f->lhs).kind != V_SCH)
        mt_fail(MT_ERR_UNSUPPORTED, e->loc, "a schedule calls only the primitives of its argument (sch.split(...))");
    if (in->u.lowered)
        mt_fail(MT_ERR_INVALID_ARG, prim_loc(e), "%s: rule %s has scheduled the kernel already (apply_rule is "
                "its schedule's last step)", f->name, in->u.lowered);
    if (strcmp(f->name, "apply_rule") == 0) return apply_rule(in, e);
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++) {
        if (strcmp(prims[i].name, f->name) != 0) continue;
        value args[MAX_ARGS];
        const mt_ast *at[MAX_ARGS];
        bind_args(e, &prims[i], in, args, at);
        return prims[i].fn(in, e, &prims[i], args, at);
    }
    mt_fail(MT_ERR_NAME, prim_loc(e), "'%s' is not a schedule primitive (they are: %s)", f->name, prim_names(in->a));
}

/* ---- statements ------------------------------------------------------------------ */

static void assign(interp *in, const mt_ast *target, value v) {
    if (target->kind == AST_NAME) {
        if (v.kind == V_SCH) mt_fail(MT_ERR_TYPE, target->loc, "the schedule cannot be assigned to a name");
        bind(in, target->name, v);
        return;
    }
    if (target->kind != AST_TUPLE && target->kind != AST_LIST)
        mt_fail(MT_ERR_UNSUPPORTED, target->loc, "a schedule assigns to names or tuples of names");
    if (v.kind != V_LIST) mt_fail(MT_ERR_TYPE, target->loc, "cannot unpack %s", kind_name(v.kind));
    if (v.n != target->items.len)
        mt_fail(MT_ERR_TYPE, target->loc, "%d names to unpack %d values into", target->items.len, v.n);
    for (int i = 0; i < v.n; i++) assign(in, target->items.data[i], v.items[i]);
}

static void statement(interp *in, const mt_ast *s) {
    switch (s->kind) {
    case AST_PASS: return;
    case AST_EXPR_STMT: (void)eval(in, s->lhs); return;
    case AST_ASSIGN: {
        value v = eval(in, s->rhs);
        for (int i = 0; i < s->items.len; i++) assign(in, s->items.data[i], v);
        return;
    }
    default:
        mt_fail(MT_ERR_UNSUPPORTED, s->loc, "a schedule is a sequence of assignments and sch.<primitive>(...) "
                                            "calls; this statement is neither");
    }
}

/* ---- the decorator ------------------------------------------------------------------ */

const mt_ast *mt_schedule_decorator_arg(const mt_ast *def) {
    const mt_ast *d = mt_ast_decorator(def, "schedule");
    if (!d) return NULL;
    const mt_ast *arg = mt_ast_decorator_arg(def, "schedule");
    if (!arg) mt_fail(MT_ERR_SYNTAX, d->loc, "@T.schedule takes one argument: a loop function or a kernel's name");
    if (arg->kind != AST_NAME && arg->kind != AST_STR)
        mt_fail(MT_ERR_TYPE, arg->loc, "@T.schedule names a loop function of the source or, as a string, "
                                       "a kernel of the dumps");
    return arg;
}

mt_tfunc *mt_schedule_from_ast(mt_arena *a, mt_tfunc *f, const mt_ast *def, const mt_ast *target,
                               const char **trace) {
    interp in;
    memset(&in, 0, sizeof in);
    in.a = a;
    mt_usched_init(&in.u, a, f);
    /* func_name= names the function as the decorator does: the loop
     * function's name as written (its instances are mm, mm_1, ...), or the
     * kernel's name as a string */
    in.target = !target ? f->name : target->kind == AST_NAME ? target->name : target->str;
    if (def->items.len != 1)
        mt_fail(MT_ERR_TYPE, def->loc, "a schedule function takes one argument (the schedule), not %d", def->items.len);
    bind(&in, def->items.data[0]->name, (value){V_SCH, 0, NULL, NULL, 0});
    for (int i = 0; i < def->body.len; i++) statement(&in, def->body.data[i]);
    bool by_name = target && target->kind == AST_NAME;
    if (trace) *trace = mt_usched_text(&in.u, by_name ? target->name : f->name, by_name);
    return in.u.s.func;
}
