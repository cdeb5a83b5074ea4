/*
 * tir.c -- constructors and small facts of the loop IR (see tir.h).
 */
#include "tir/tir.h"

#include <string.h>

static int next_id(void) {
    /* Ids only order printing within one function; a per-thread counter keeps
     * compilations on different threads independent. */
    static _Thread_local int counter;
    return ++counter;
}

mt_tvar *mt_tvar_new(mt_arena *a, const char *name, mt_dtype dtype) {
    mt_tvar *v = MT_NEW(a, mt_tvar);
    v->name = mt_arena_strdup(a, name);
    v->dtype = dtype;
    v->id = next_id();
    return v;
}

mt_tbuffer *mt_tbuffer_new(mt_arena *a, const char *name, mt_dtype dtype, int ndim,
                           mt_texpr *const *shape) {
    mt_tbuffer *b = MT_NEW(a, mt_tbuffer);
    b->name = mt_arena_strdup(a, name);
    b->dtype = dtype;
    b->ndim = ndim;
    b->shape = MT_NEW_ARRAY(a, mt_texpr *, ndim > 0 ? ndim : 1);
    for (int i = 0; i < ndim; i++) b->shape[i] = shape[i];
    b->scope = MT_SCOPE_GLOBAL;
    b->id = next_id();
    return b;
}

mt_tbuffer *mt_tbuffer_new_const(mt_arena *a, const char *name, mt_dtype dtype, int ndim,
                                 const int64_t *shape) {
    mt_texpr *dims[MT_MAX_RANK];
    MT_ASSERT(ndim <= MT_MAX_RANK);
    for (int i = 0; i < ndim; i++) dims[i] = mt_te_i64(a, shape[i]);
    return mt_tbuffer_new(a, name, dtype, ndim, dims);
}

static mt_texpr *node(mt_arena *a, mt_texpr_kind kind, mt_dtype dtype) {
    mt_texpr *e = MT_NEW(a, mt_texpr);
    e->kind = kind;
    e->dtype = dtype;
    e->lanes = 1;
    return e;
}

mt_texpr *mt_te_int(mt_arena *a, mt_dtype dtype, int64_t v) {
    mt_texpr *e = node(a, TE_INT, dtype);
    e->ival = v;
    return e;
}

mt_texpr *mt_te_i64(mt_arena *a, int64_t v) { return mt_te_int(a, MT_INT64, v); }

mt_texpr *mt_te_float(mt_arena *a, mt_dtype dtype, double v) {
    mt_texpr *e = node(a, TE_FLOAT, dtype);
    e->fval = v;
    return e;
}

mt_texpr *mt_te_var(mt_arena *a, mt_tvar *v) {
    mt_texpr *e = node(a, TE_VAR, v->dtype);
    e->var = v;
    return e;
}

mt_texpr *mt_te_load(mt_arena *a, mt_tbuffer *buf, mt_texpr *const *idx, int nidx) {
    mt_texpr *e = node(a, TE_LOAD, buf->dtype);
    e->buf = buf;
    e->nargs = nidx;
    e->args = MT_NEW_ARRAY(a, mt_texpr *, nidx > 0 ? nidx : 1);
    for (int i = 0; i < nidx; i++) {
        e->args[i] = idx[i];
        if (idx[i]->lanes > e->lanes) e->lanes = idx[i]->lanes;
    }
    return e;
}

static bool is_compare(mt_texpr_kind k) { return k >= TE_EQ && k <= TE_GE; }

mt_texpr *mt_te_bin(mt_arena *a, mt_texpr_kind kind, mt_texpr *x, mt_texpr *y) {
    MT_ASSERT(kind >= TE_ADD && kind <= TE_OR);
    if (x->dtype != y->dtype)
        mt_ice("operands of '%s' disagree: %s vs %s", mt_texpr_kind_str(kind),
               mt_dtype_str(x->dtype), mt_dtype_str(y->dtype));
    mt_texpr *e = node(a, kind, is_compare(kind) ? MT_BOOL : x->dtype);
    e->a = x;
    e->b = y;
    e->lanes = x->lanes > y->lanes ? x->lanes : y->lanes;
    return e;
}

mt_texpr *mt_te_unary(mt_arena *a, mt_texpr_kind kind, mt_texpr *x) {
    MT_ASSERT(kind == TE_NOT || kind == TE_NEG);
    mt_texpr *e = node(a, kind, kind == TE_NOT ? MT_BOOL : x->dtype);
    e->a = x;
    e->lanes = x->lanes;
    return e;
}

mt_texpr *mt_te_select(mt_arena *a, mt_texpr *cond, mt_texpr *x, mt_texpr *y) {
    MT_ASSERT(cond->dtype == MT_BOOL);
    if (x->dtype != y->dtype)
        mt_ice("select arms disagree: %s vs %s", mt_dtype_str(x->dtype), mt_dtype_str(y->dtype));
    mt_texpr *e = node(a, TE_SELECT, x->dtype);
    e->cond = cond;
    e->a = x;
    e->b = y;
    e->lanes = x->lanes > y->lanes ? x->lanes : y->lanes;
    return e;
}

mt_texpr *mt_te_cast(mt_arena *a, mt_dtype dtype, mt_texpr *x) {
    if (x->dtype == dtype) return x;
    mt_texpr *e = node(a, TE_CAST, dtype);
    e->a = x;
    e->lanes = x->lanes;
    return e;
}

mt_texpr *mt_te_call(mt_arena *a, mt_intrin fn, mt_texpr *const *args, int nargs) {
    MT_ASSERT(nargs == mt_intrin_arity(fn) && nargs > 0);
    mt_texpr *e = node(a, TE_CALL, args[0]->dtype);
    e->intrin = fn;
    e->nargs = nargs;
    e->args = MT_NEW_ARRAY(a, mt_texpr *, nargs);
    for (int i = 0; i < nargs; i++) {
        e->args[i] = args[i];
        if (args[i]->lanes > e->lanes) e->lanes = args[i]->lanes;
    }
    return e;
}

mt_texpr *mt_te_shfl_xor(mt_arena *a, mt_texpr *value, int lane_mask, int width) {
    mt_texpr *args[3] = {value, mt_te_int(a, MT_INT32, lane_mask), mt_te_int(a, MT_INT32, width)};
    return mt_te_call(a, IN_SHFL_XOR, args, 3);
}

mt_texpr *mt_te_prefetch(mt_arena *a, mt_texpr *load) {
    mt_texpr *e = mt_te_call(a, IN_PREFETCH, &load, 1);
    e->dtype = MT_INT32;
    e->lanes = 1;
    return e;
}

mt_texpr *mt_te_wmma(mt_arena *a, mt_intrin fn, mt_texpr *x, mt_texpr *y, mt_texpr *z) {
    mt_texpr *args[3] = {x, y, z};
    mt_texpr *e = mt_te_call(a, fn, args, mt_intrin_arity(fn));
    e->dtype = MT_INT32;
    return e;
}

static const char *const scope_names[MT_SCOPE_COUNT_] = {
    "global", "shared", "local", "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"};

const char *mt_scope_str(mt_scope s) { return (unsigned)s < MT_SCOPE_COUNT_ ? scope_names[s] : "?"; }

int mt_scope_from_str(const char *name, mt_scope *out) {
    for (int i = 0; i < MT_SCOPE_COUNT_; i++)
        if (strcmp(scope_names[i], name) == 0) {
            *out = (mt_scope)i;
            return 0;
        }
    return -1;
}

mt_texpr *mt_te_ramp(mt_arena *a, mt_texpr *base, mt_texpr *stride, int lanes) {
    mt_texpr *e = node(a, TE_RAMP, base->dtype);
    e->a = base;
    e->b = stride;
    e->lanes = lanes;
    return e;
}

mt_texpr *mt_te_broadcast(mt_arena *a, mt_texpr *x, int lanes) {
    mt_texpr *e = node(a, TE_BROADCAST, x->dtype);
    e->a = x;
    e->lanes = lanes;
    return e;
}

mt_texpr *mt_te_shuffle(mt_arena *a, mt_texpr *x, mt_texpr *y, const int *lane, int lanes) {
    MT_ASSERT(x && lanes > 0);
    mt_texpr *e = node(a, TE_SHUFFLE, x->dtype);
    e->nargs = y ? 2 : 1;
    e->args = MT_NEW_ARRAY(a, mt_texpr *, e->nargs);
    e->args[0] = x;
    if (y) e->args[1] = y;
    int *l = MT_NEW_ARRAY(a, int, lanes);
    memcpy(l, lane, sizeof(int) * (size_t)lanes);
    e->lane = l;
    e->lanes = lanes;
    return e;
}

mt_texpr *mt_te_copy(mt_arena *a, const mt_texpr *e) {
    mt_texpr *c = MT_NEW(a, mt_texpr);
    *c = *e;
    return c;
}

static mt_tstmt *snode(mt_arena *a, mt_tstmt_kind kind) {
    mt_tstmt *s = MT_NEW(a, mt_tstmt);
    s->kind = kind;
    return s;
}

mt_tstmt *mt_ts_for(mt_arena *a, mt_tvar *var, mt_texpr *min, mt_texpr *extent,
                    mt_for_kind kind, mt_tstmt *body) {
    mt_tstmt *s = snode(a, TS_FOR);
    s->var = var;
    s->min = min;
    s->extent = extent;
    s->for_kind = kind;
    s->body = body;
    return s;
}

mt_tstmt *mt_ts_store(mt_arena *a, mt_tbuffer *buf, mt_texpr *const *idx, int nidx,
                      mt_texpr *value) {
    mt_tstmt *s = snode(a, TS_STORE);
    s->buf = buf;
    s->nidx = nidx;
    s->idx = MT_NEW_ARRAY(a, mt_texpr *, nidx > 0 ? nidx : 1);
    for (int i = 0; i < nidx; i++) s->idx[i] = idx[i];
    s->value = value;
    return s;
}

mt_tstmt *mt_ts_seq(mt_arena *a, mt_tstmt *const *stmts, int n) {
    if (n == 1) return stmts[0];
    mt_tstmt *s = snode(a, TS_SEQ);
    s->nstmts = n;
    s->stmts = MT_NEW_ARRAY(a, mt_tstmt *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) s->stmts[i] = stmts[i];
    return s;
}

typedef MT_VEC(mt_tstmt *) stmt_vec;

static void splice(mt_arena *a, mt_tstmt *s, stmt_vec *out) {
    if (s->kind != TS_SEQ) {
        MT_VEC_PUSH(a, out, s);
        return;
    }
    for (int i = 0; i < s->nstmts; i++) splice(a, mt_ts_at(s->stmts[i], s->loc), out);
}

mt_tstmt *mt_ts_seq_flat(mt_arena *a, mt_tstmt *const *stmts, int n) {
    stmt_vec v = {0};
    for (int i = 0; i < n; i++) splice(a, stmts[i], &v);
    return mt_ts_seq(a, v.data, v.len);
}

mt_tstmt *mt_ts_if(mt_arena *a, mt_texpr *cond, mt_tstmt *then_s, mt_tstmt *else_s) {
    mt_tstmt *s = snode(a, TS_IF);
    s->cond = cond;
    s->then_s = then_s;
    s->else_s = else_s;
    return s;
}

mt_tstmt *mt_ts_let(mt_arena *a, mt_tvar *var, mt_texpr *value, mt_tstmt *body) {
    mt_tstmt *s = snode(a, TS_LET);
    s->var = var;
    s->value = value;
    s->body = body;
    return s;
}

mt_tstmt *mt_ts_alloc(mt_arena *a, mt_tbuffer *buf, mt_tstmt *body) {
    mt_tstmt *s = snode(a, TS_ALLOC);
    s->buf = buf;
    s->body = body;
    return s;
}

mt_tstmt *mt_ts_eval(mt_arena *a, mt_texpr *value) {
    mt_tstmt *s = snode(a, TS_EVAL);
    s->value = value;
    return s;
}

mt_tstmt *mt_ts_check(mt_arena *a, mt_texpr *cond, bool store, const char *name,
                      mt_texpr *const *idx, mt_texpr *const *dims, int n) {
    mt_tstmt *s = snode(a, TS_CHECK);
    s->cond = cond;
    s->check_store = store;
    s->name = mt_arena_strdup(a, name);
    s->nidx = n;
    s->idx = MT_NEW_ARRAY(a, mt_texpr *, n > 0 ? n : 1);
    s->dims = MT_NEW_ARRAY(a, mt_texpr *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) s->idx[i] = idx[i], s->dims[i] = dims[i];
    return s;
}

mt_tstmt *mt_ts_block(mt_arena *a, const char *name) {
    mt_tstmt *s = snode(a, TS_BLOCK);
    s->name = mt_arena_strdup(a, name);
    return s;
}

mt_tstmt *mt_ts_launch(mt_arena *a, mt_tfunc *callee, const mt_targ *args, int nargs) {
    MT_ASSERT(callee && nargs >= 0);
    mt_tstmt *s = snode(a, TS_LAUNCH);
    mt_tlaunch *l = MT_NEW(a, mt_tlaunch);
    l->callee = callee;
    l->nargs = nargs;
    l->args = MT_NEW_ARRAY(a, mt_targ, nargs > 0 ? nargs : 1);
    for (int i = 0; i < nargs; i++) {
        MT_ASSERT((args[i].buf != NULL) != (args[i].value != NULL));
        l->args[i] = args[i];
    }
    s->launch = l;
    return s;
}

mt_tstmt *mt_ts_copy(mt_arena *a, const mt_tstmt *s) {
    mt_tstmt *c = MT_NEW(a, mt_tstmt);
    *c = *s;
    return c;
}

mt_tstmt *mt_ts_at(mt_tstmt *s, mt_loc loc) {
    if (s && s->loc.line == 0 && loc.line != 0) s->loc = loc;
    return s;
}

void mt_tstmt_fill_loc(mt_tstmt *s, mt_loc loc) {
    if (!s) return;
    mt_ts_at(s, loc);
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->nstmts; i++) mt_tstmt_fill_loc(s->stmts[i], loc);
        break;
    case TS_IF:
        mt_tstmt_fill_loc(s->then_s, loc);
        mt_tstmt_fill_loc(s->else_s, loc);
        break;
    case TS_BLOCK:
        mt_tstmt_fill_loc(s->init, loc);
        mt_tstmt_fill_loc(s->body, loc);
        break;
    case TS_FOR: case TS_LET: case TS_ALLOC: mt_tstmt_fill_loc(s->body, loc); break;
    default: break;
    }
}

mt_tfunc *mt_tfunc_new(mt_arena *a, const char *name) {
    mt_tfunc *f = MT_NEW(a, mt_tfunc);
    f->name = mt_arena_strdup(a, name);
    return f;
}

mt_tfunc *mt_tfunc_with_body(mt_arena *a, mt_tfunc *f, mt_tstmt *body) {
    if (body == f->body) return f;
    mt_tfunc *g = MT_NEW(a, mt_tfunc);
    *g = *f;
    g->body = body;
    return g;
}

void mt_tfunc_add_param(mt_arena *a, mt_tfunc *f, mt_tbuffer *buf, mt_tvar *var) {
    MT_ASSERT((buf != NULL) != (var != NULL));
    mt_tparam *np = MT_NEW_ARRAY(a, mt_tparam, f->nparams + 1);
    if (f->nparams) memcpy(np, f->params, sizeof(mt_tparam) * (size_t)f->nparams);
    np[f->nparams].buf = buf;
    np[f->nparams].var = var;
    f->params = np;
    f->nparams++;
}

const char *mt_tfunc_get_attr(const mt_tfunc *f, const char *key) {
    for (int i = 0; i < f->nattrs; i++)
        if (strcmp(f->attrs[i].key, key) == 0) return f->attrs[i].value;
    return NULL;
}

void mt_tfunc_set_attr(mt_arena *a, mt_tfunc *f, const char *key, const char *value) {
    for (int i = 0; i < f->nattrs; i++)
        if (strcmp(f->attrs[i].key, key) == 0) {
            f->attrs[i].value = mt_arena_strdup(a, value);
            return;
        }
    mt_tattr *na = MT_NEW_ARRAY(a, mt_tattr, f->nattrs + 1);
    if (f->nattrs) memcpy(na, f->attrs, sizeof(mt_tattr) * (size_t)f->nattrs);
    na[f->nattrs].key = mt_arena_strdup(a, key);
    na[f->nattrs].value = mt_arena_strdup(a, value);
    f->attrs = na;
    f->nattrs++;
}

bool mt_te_is_const_int(const mt_texpr *e, int64_t *value) {
    if (e->kind != TE_INT || e->lanes != 1) return false;
    if (value) *value = e->ival;
    return true;
}

const char *mt_texpr_kind_str(mt_texpr_kind k) {
    static const char *names[] = {
#define MT_X_(k, s) s,
        MT_TEXPR_LIST(MT_X_)
#undef MT_X_
    };
    return (unsigned)k < TE_COUNT_ ? names[k] : "?";
}

static const struct {
    const char *name;
    int arity;
} intrins[] = {
#define MT_X_(k, s, n) {s, n},
    MT_INTRIN_LIST(MT_X_)
#undef MT_X_
};

const char *mt_intrin_name(mt_intrin fn) {
    return (unsigned)fn < IN_COUNT_ ? intrins[fn].name : "?";
}

int mt_intrin_arity(mt_intrin fn) { return (unsigned)fn < IN_COUNT_ ? intrins[fn].arity : 0; }

int mt_intrin_from_name(const char *name, mt_intrin *out) {
    for (int i = 0; i < IN_COUNT_; i++)
        if (strcmp(intrins[i].name, name) == 0) {
            *out = (mt_intrin)i;
            return 0;
        }
    return -1;
}

const mt_target_desc *mt_tfunc_target(const mt_tfunc *f) {
    return f && f->target ? f->target : mt_target_default_cpu();
}
