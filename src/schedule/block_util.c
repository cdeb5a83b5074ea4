/*
 * block_util.c -- helpers of the block schedule primitives (block_util.h).
 */
#include "schedule/block_util.h"

#include <string.h>

#include "support/nameset.h"
const char *mt_blk_bname(const mt_tstmt *b) { return b && b->name ? b->name : "?"; }

bool mt_blk_is_alloc(const mt_tfunc *f, const mt_tbuffer *b) {
    for (int i = 0; i < f->nallocs; i++)
        if (f->allocs[i] == b) return true;
    return false;
}

bool mt_blk_function_wide(const mt_tfunc *f, const mt_tbuffer *b) {
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].buf == b) return true;
    return mt_blk_is_alloc(f, b);
}

bool mt_blk_buf_in(const mt_blk_bufs *v, const mt_tbuffer *b) {
    for (int i = 0; i < v->len; i++)
        if (v->data[i] == b) return true;
    return false;
}

/* ---- finding a block and the path to it ----------------------------------- */

typedef struct finder {
    mt_arena *a;
    const char *name;     /* by name, or */
    const mt_tstmt *want; /* by pointer */
    mt_blk_stmts stack, path;  /* path: root .. found statement */
    int count;
} finder;

static void find_rec(finder *f, const mt_tstmt *s) {
    if (!s) return;
    MT_VEC_PUSH(f->a, &f->stack, s);
    bool hit = f->want ? s == f->want
                       : s->kind == TS_BLOCK && s->name && strcmp(s->name, f->name) == 0;
    if (hit && f->count++ == 0)
        for (int i = 0; i < f->stack.len; i++) MT_VEC_PUSH(f->a, &f->path, f->stack.data[i]);
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->nstmts; i++) find_rec(f, s->stmts[i]);
        break;
    case TS_IF:
        find_rec(f, s->then_s);
        find_rec(f, s->else_s);
        break;
    case TS_BLOCK: find_rec(f, s->init); /* fall through */
    case TS_FOR: case TS_LET: case TS_ALLOC: find_rec(f, s->body); break;
    default: break;
    }
    f->stack.len--;
}

bool mt_blk_find_block(mt_sched *s, const char *prim, const char *name, mt_blk_stmts *path) {
    finder f = {s->arena, name, NULL, {0}, {0}, 0};
    if (!name) mt_ice("schedule: no block name given");
    find_rec(&f, s->func->body);
    if (f.count == 0) return mt_sched_refuse(s, "%s: no block named '%s'", prim, name);
    if (f.count > 1)
        return mt_sched_refuse(s, "%s: %d blocks are named '%s'", prim, f.count, name);
    *path = f.path;
    return true;
}

bool mt_blk_last_loops(mt_sched *s, const char *prim, const char *name, mt_tvar **out, int want) {
    mt_blk_stmts path;
    if (!mt_blk_find_block(s, prim, name, &path)) return false;
    int got = 0;
    for (int i = path.len - 1; i >= 0 && got < want; i--)
        if (path.data[i]->kind == TS_FOR) out[want - 1 - got++] = path.data[i]->var;
    return got == want;
}

mt_blk_stmts mt_blk_path_to(mt_arena *a, const mt_tstmt *root, const mt_tstmt *want) {
    finder f = {a, NULL, want, {0}, {0}, 0};
    find_rec(&f, root);
    return f.path;
}

typedef struct stmt_list {
    mt_arena *a;
    bool (*want)(const mt_tstmt *);
    mt_blk_stmts list;
} stmt_list;

static void list_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    stmt_list *l = v->ctx;
    if (l->want(s)) MT_VEC_PUSH(l->a, &l->list, s);
    mt_tvisit_stmt_children(v, s);
}

mt_blk_stmts mt_blk_stmts_under(mt_arena *a, const mt_tstmt *root, bool (*want)(const mt_tstmt *)) {
    stmt_list l = {a, want, {0}};
    mt_tvisitor v = {mt_tvisit_no_expr, list_stmt, &l};
    if (root) mt_tvisit_stmt(&v, root);
    return l.list;
}

static bool is_block(const mt_tstmt *s) { return s->kind == TS_BLOCK; }

mt_blk_stmts mt_blk_blocks_under(mt_arena *a, const mt_tstmt *root) { return mt_blk_stmts_under(a, root, is_block); }

mt_tvar *mt_blk_reduce_iter(const mt_tstmt *b) {
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == MT_ITER_REDUCE) return b->iters[i].var;
    return NULL;
}

const mt_tstmt *mt_blk_unbinding_loop(const mt_blk_stmts *path, int from, const mt_tstmt *b) {
    for (int j = from; j < path->len; j++) {
        const mt_tstmt *l = path->data[j];
        if (l->kind == TS_FOR && !mt_blk_loop_binds(b, l, MT_ITER_SPATIAL) && !mt_blk_loop_binds(b, l, MT_ITER_REDUCE))
            return l;
    }
    return NULL;
}

int mt_blk_index_in(const mt_blk_stmts *p, const mt_tstmt *s) {
    for (int i = 0; i < p->len; i++)
        if (p->data[i] == s) return i;
    return -1;
}

const mt_tstmt *mt_blk_let_binding(const mt_blk_stmts *path, int from, const mt_tstmt *b) {
    for (int j = from; j < path->len - 1; j++)
        for (int i = 0; path->data[j]->kind == TS_LET && i < b->niters; i++)
            if (mt_texpr_uses_var(b->iter_values[i], path->data[j]->var)) return path->data[j];
    return NULL;
}

/* ---- variables ------------------------------------------------------------- */

typedef struct vscan {
    mt_tvisitor v;
    mt_tvar *const *vars; /* looking for one of these, or (vars == NULL) ... */
    int n;
    const mt_tfunc *f;    /* ... for one that is not one of ok[] nor f's */
    mt_tvar *const *ok;
    int nok;
    const mt_tvar *hit;
} vscan;

static bool in_vars(mt_tvar *const *vs, int n, const mt_tvar *v) {
    for (int i = 0; i < n; i++)
        if (vs[i] == v) return true;
    return false;
}

static bool func_var(const mt_tfunc *f, const mt_tvar *v) {
    if (in_vars(f->sym_vars, f->nsym, v)) return true;
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].var == v) return true;
    return false;
}

static void vscan_expr(mt_tvisitor *v, const mt_texpr *e) {
    vscan *s = (vscan *)v;
    if (s->hit) return;
    if (e->kind == TE_VAR) {
        bool bad = s->vars ? in_vars(s->vars, s->n, e->var)
                           : !in_vars(s->ok, s->nok, e->var) && !func_var(s->f, e->var);
        if (bad) s->hit = e->var;
    }
    mt_tvisit_expr_children(v, e);
}

/* The first of vars that e uses, or NULL. */
const mt_tvar *mt_blk_first_use(const mt_texpr *e, mt_tvar *const *vars, int n) {
    if (!e || n == 0) return NULL;
    vscan s = {{vscan_expr, NULL, NULL}, vars, n, NULL, NULL, 0, NULL};
    mt_tvisit_expr(&s.v, e);
    return s.hit;
}

/* The first of vars that statement st uses, or NULL. */
const mt_tvar *mt_blk_stmt_use(const mt_tstmt *st, mt_tvar *const *vars, int n) {
    if (!st || n == 0) return NULL;
    vscan s = {{vscan_expr, NULL, NULL}, vars, n, NULL, NULL, 0, NULL};
    mt_tvisit_stmt(&s.v, st);
    return s.hit;
}

/* The first variable of e that is neither one of ok nor a sym var or scalar
 * param of f, or NULL. */
const mt_tvar *mt_blk_foreign_var(const mt_texpr *e, mt_tvar *const *ok, int nok,
                                  const mt_tfunc *f) {
    if (!e) return NULL;
    vscan s = {{vscan_expr, NULL, NULL}, NULL, 0, f, ok, nok, NULL};
    mt_tvisit_expr(&s.v, e);
    return s.hit;
}

/* The variables of a block's iterators of one kind. */
int mt_blk_iter_vars(mt_arena *a, const mt_tstmt *b, mt_iter_kind kind, mt_tvar ***out) {
    *out = MT_NEW_ARRAY(a, mt_tvar *, b->niters + 1);
    int n = 0;
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == kind) (*out)[n++] = b->iters[i].var;
    return n;
}

/* Does loop l's variable occur in an iter value of kind `kind` of b? */
bool mt_blk_loop_binds(const mt_tstmt *b, const mt_tstmt *l, mt_iter_kind kind) {
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == kind && mt_blk_first_use(b->iter_values[i], &l->var, 1)) return true;
    return false;
}

/* ---- loads ----------------------------------------------------------------- */

typedef struct lscan {
    mt_tvisitor v;
    mt_arena *a;
    const mt_tbuffer *buf; /* loads of this buffer, or of any (NULL) */
    mt_blk_exprs loads;
} lscan;

static void lscan_expr(mt_tvisitor *v, const mt_texpr *e) {
    lscan *s = (lscan *)v;
    const mt_texpr *x = mt_te_prefetched(e);
    if (x) { /* an address, not a read: only its indices' loads */
        mt_tvisit_expr_children(v, x);
        return;
    }
    if (e->kind == TE_LOAD && (!s->buf || e->buf == s->buf)) MT_VEC_PUSH(s->a, &s->loads, e);
    mt_tvisit_expr_children(v, e);
}

mt_blk_exprs mt_blk_loads_in(mt_arena *a, const mt_tstmt *st, const mt_texpr *e, const mt_tbuffer *b) {
    lscan s = {{lscan_expr, NULL, NULL}, a, b, {0}};
    if (st) mt_tvisit_stmt(&s.v, st);
    if (e) mt_tvisit_expr(&s.v, e);
    return s.loads;
}

bool mt_blk_same_index(mt_texpr *const *x, mt_texpr *const *y, int n) {
    for (int i = 0; i < n; i++)
        if (!mt_texpr_equal(x[i], y[i])) return false;
    return true;
}

bool mt_blk_bijection(const mt_tstmt *b, const mt_tbuffer *X, mt_texpr *const *idx) {
    if (X->ndim != b->niters) return false;
    uint64_t seen = 0;
    for (int d = 0; d < X->ndim; d++) {
        int u = -1;
        for (int i = 0; idx[d]->kind == TE_VAR && i < b->niters && i < 64; i++)
            if (b->iters[i].var == idx[d]->var) u = i;
        if (u < 0 || (seen >> u & 1) || !mt_texpr_equal(b->iters[u].extent, X->shape[d])) return false;
        seen |= 1ull << u;
    }
    return true;
}

/* ---- building ---------------------------------------------------------------- */

/* s without statement t; a loop, let, allocation, block or if left with
 * nothing to run goes too. NULL when nothing is left. */
mt_tstmt *mt_blk_drop(mt_arena *a, mt_tstmt *s, const mt_tstmt *t) {
    if (!s || s == t) return NULL;
    mt_tstmt *c;
    switch (s->kind) {
    case TS_SEQ: {
        mt_tstmt **out = MT_NEW_ARRAY(a, mt_tstmt *, s->nstmts + 1);
        int n = 0;
        bool changed = false;
        for (int i = 0; i < s->nstmts; i++) {
            mt_tstmt *x = mt_blk_drop(a, s->stmts[i], t);
            changed = changed || x != s->stmts[i];
            if (x) out[n++] = x;
        }
        if (!changed) return s;
        return n ? mt_ts_at(mt_ts_seq(a, out, n), s->loc) : NULL;
    }
    case TS_FOR: case TS_LET: case TS_ALLOC: case TS_BLOCK: {
        mt_tstmt *b = mt_blk_drop(a, s->body, t);
        if (b == s->body) return s;
        if (!b) return NULL;
        c = mt_ts_copy(a, s);
        c->body = b;
        return c;
    }
    case TS_IF: {
        mt_tstmt *th = mt_blk_drop(a, s->then_s, t), *el = mt_blk_drop(a, s->else_s, t);
        if (th == s->then_s && el == s->else_s) return s;
        if (!th && !el) return NULL;
        c = mt_ts_copy(a, s);
        c->then_s = th ? th : mt_ts_at(mt_ts_seq(a, NULL, 0), s->loc);
        c->else_s = el;
        return c;
    }
    default: return s;
    }
}

/* x followed by the statements of y (flattening y when it is a sequence). */
mt_tstmt *mt_blk_prepend(mt_arena *a, mt_tstmt *x, mt_tstmt *y) {
    int n = y->kind == TS_SEQ ? y->nstmts : 1;
    mt_tstmt **v = MT_NEW_ARRAY(a, mt_tstmt *, n + 1);
    v[0] = x;
    if (y->kind == TS_SEQ) memcpy(v + 1, y->stmts, sizeof(mt_tstmt *) * (size_t)n);
    else v[1] = y;
    return mt_ts_at(mt_ts_seq(a, v, n + 1), y->loc);
}

/* The single point buf[idx]. */
mt_tregion mt_blk_point_region(mt_arena *a, mt_tbuffer *buf, mt_texpr *const *idx) {
    int nd = buf->ndim;
    mt_tregion r = {buf, MT_NEW_ARRAY(a, mt_texpr *, nd + 1), MT_NEW_ARRAY(a, mt_texpr *, nd + 1)};
    for (int d = 0; d < nd; d++) {
        r.min[d] = idx[d];
        r.extent[d] = mt_te_i64(a, 1);
    }
    return r;
}

/* Fresh variables named like vars[0..n). */
mt_tvar **mt_blk_fresh_vars(mt_arena *a, mt_tvar *const *vars, int n, const char *suffix) {
    mt_tvar **out = MT_NEW_ARRAY(a, mt_tvar *, n + 1);
    for (int i = 0; i < n; i++)
        out[i] = mt_tvar_new(a, mt_arena_printf(a, "%s%s", vars[i]->name, suffix), vars[i]->dtype);
    return out;
}

mt_texpr **mt_blk_var_exprs(mt_arena *a, mt_tvar *const *vars, int n) {
    mt_texpr **out = MT_NEW_ARRAY(a, mt_texpr *, n + 1);
    for (int i = 0; i < n; i++) out[i] = mt_te_var(a, vars[i]);
    return out;
}

/* A block named `name` with b's spatial iterators under new variables
 * (nsv, in order), bound to b's values with vars[i] := vals[i]. Regions
 * and body are the caller's. */
mt_tstmt *mt_blk_spatial_block(mt_arena *a, const char *name, const mt_tstmt *b,
                               mt_tvar *const *nsv, mt_tvar *const *vars, mt_texpr *const *vals,
                               int n) {
    mt_tstmt *nb = mt_ts_block(a, name);
    nb->iters = MT_NEW_ARRAY(a, mt_titer, b->niters + 1);
    nb->iter_values = MT_NEW_ARRAY(a, mt_texpr *, b->niters + 1);
    for (int i = 0; i < b->niters; i++) {
        if (b->iters[i].kind != MT_ITER_SPATIAL) continue;
        int j = nb->niters++;
        nb->iters[j] = b->iters[i];
        nb->iters[j].var = nsv[j];
        nb->iter_values[j] = mt_tsubst_expr(a, b->iter_values[i], vars, vals, n);
    }
    return nb;
}

void mt_blk_set_func_body(mt_sched *s, mt_tstmt *body) {
    mt_tfunc *g = MT_NEW(s->arena, mt_tfunc);
    *g = *s->func;
    g->body = body ? body : mt_ts_at(mt_ts_seq(s->arena, NULL, 0), g->loc);
    s->func = g;
}


/* ---- accesses in program order ---------------------------------------------- */

typedef struct scanner {
    mt_tvisitor v;
    mt_arena *a;
    const mt_tstmt *target;
    const mt_blk_stmts *anc; /* the target's path */
    const mt_tstmt *block;
    bool inside, after;
    int around;
    mt_blk_accesses acc;
} scanner;

static void push_access(scanner *sc, mt_tbuffer *buf, bool write) {
    mt_blk_access x = {sc->block, buf, write, sc->inside, sc->after, sc->around > 0};
    MT_VEC_PUSH(sc->a, &sc->acc, x);
}

static void scan_expr(mt_tvisitor *v, const mt_texpr *e) {
    if (e->kind == TE_LOAD) push_access((scanner *)v, e->buf, false);
    mt_tvisit_expr_children(v, e);
}

static void scan_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    scanner *sc = (scanner *)v;
    bool is_target = s == sc->target;
    bool anc = s->kind == TS_FOR && sc->anc && mt_blk_index_in(sc->anc, s) >= 0;
    const mt_tstmt *saved = sc->block;
    if (s->kind == TS_BLOCK) sc->block = s;
    if (is_target) sc->inside = true;
    if (anc) sc->around++;
    if (s->kind == TS_STORE) push_access(sc, s->buf, true);
    mt_tvisit_stmt_children(v, s);
    if (anc) sc->around--;
    if (is_target) sc->inside = false, sc->after = true;
    sc->block = saved;
}

mt_blk_accesses mt_blk_scan(mt_arena *a, const mt_tstmt *root, const mt_tstmt *target,
                            const mt_blk_stmts *anc) {
    scanner sc = {{scan_expr, scan_stmt, NULL}, a, target, anc, NULL, false, false, 0, {0}};
    if (root) mt_tvisit_stmt(&sc.v, root);
    return sc.acc;
}

/* ---- contiguity (the reduction rules) ------------------------------------------ */

typedef struct suffix_check {
    const mt_tstmt *b;
    int from; /* the iteration variables [from, niters) */
    bool ok;
} suffix_check;

/* Does index expression e use one of the variables [from, niters)? */
static bool uses_suffix(const suffix_check *k, const mt_texpr *e) {
    for (int t = k->from; t < k->b->niters; t++)
        if (mt_texpr_uses_var(e, k->b->iters[t].var)) return true;
    return false;
}

static bool suffix_access(const suffix_check *k, const mt_tbuffer *buf, mt_texpr *const *idx, int nidx) {
    const mt_tstmt *b = k->b;
    int len = b->niters - k->from, lead = nidx - len;
    bool used = false;
    for (int d = 0; d < nidx && !used; d++) used = uses_suffix(k, idx[d]);
    if (!used) return true;
    if (lead < 0) return false;
    for (int d = 0; d < lead; d++)
        if (uses_suffix(k, idx[d])) return false;
    for (int t = 0; t < len; t++) {
        const mt_texpr *e = idx[lead + t];
        const mt_titer *it = &b->iters[k->from + t];
        int64_t dim, ext;
        if (e->kind != TE_VAR || e->var != it->var) return false;
        if (t > 0 && (!mt_te_is_const_int(buf->shape[lead + t], &dim) ||
                      !mt_te_is_const_int(it->extent, &ext) || dim != ext))
            return false;
    }
    return true;
}

static void suffix_load(mt_tvisitor *vis, const mt_texpr *e) {
    suffix_check *k = vis->ctx;
    if (e->kind == TE_LOAD && !suffix_access(k, e->buf, e->args, e->nargs)) k->ok = false;
    mt_tvisit_expr_children(vis, e);
}

bool mt_blk_contiguous_suffix(const mt_tstmt *b, int from) {
    const mt_tstmt *st = b->body;
    suffix_check k = {b, from, true};
    if (st->kind != TS_STORE || !suffix_access(&k, st->buf, st->idx, st->nidx)) return false;
    mt_tvisitor vis = {suffix_load, NULL, &k};
    mt_tvisit_expr(&vis, st->value);
    return k.ok;
}

/* ---- fresh block names ----------------------------------------------------------- */

typedef struct name_scan {
    mt_tvisitor v;
    const char *name;
    bool hit;
} name_scan;

static void name_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    name_scan *n = (name_scan *)v;
    if (s->kind == TS_BLOCK && s->name && strcmp(s->name, n->name) == 0) n->hit = true;
    mt_tvisit_stmt_children(v, s);
}

const char *mt_blk_fresh_block_name(mt_arena *a, const mt_tfunc *f, const char *base) {
    const char *name = base;
    for (int k = 1;; k++) {
        name_scan n = {{mt_tvisit_no_expr, name_stmt, NULL}, name, false};
        if (f->body) mt_tvisit_stmt(&n.v, f->body);
        if (!n.hit) return name;
        name = mt_arena_printf(a, "%s_%d", base, k);
    }
}

/* ---- fresh buffer names ---------------------------------------------------------- */

/* The names of f's buffers and variables: one namespace when printed
 * (tir/printer.c), so a new buffer avoids both. */
typedef struct taken_names {
    mt_arena *a;
    mt_nameset set;
} taken_names;

static void take_buf(taken_names *t, const mt_tbuffer *b) {
    if (b && b->name) mt_nameset_add(t->a, &t->set, b->name);
}

static void take_var(taken_names *t, const mt_tvar *v) {
    if (v && v->name) mt_nameset_add(t->a, &t->set, v->name);
}

static void taken_expr(mt_tvisitor *v, const mt_texpr *e) {
    taken_names *t = v->ctx;
    if (e->kind == TE_LOAD) take_buf(t, e->buf);
    if (e->kind == TE_VAR) take_var(t, e->var);
    mt_tvisit_expr_children(v, e);
}

static void taken_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    taken_names *t = v->ctx;
    if (s->kind == TS_STORE || s->kind == TS_ALLOC) take_buf(t, s->buf);
    if (s->kind == TS_FOR || s->kind == TS_LET) take_var(t, s->var);
    if (s->kind == TS_BLOCK) {
        for (int i = 0; i < s->nallocs; i++) take_buf(t, s->allocs[i]);
        for (int i = 0; i < s->niters; i++) take_var(t, s->iters[i].var);
    }
    if (s->kind == TS_LAUNCH)
        for (int i = 0; i < s->launch->nargs; i++) take_buf(t, s->launch->args[i].buf);
    mt_tvisit_stmt_children(v, s);
}

const char *mt_blk_fresh_buffer_name(mt_arena *a, const mt_tfunc *f, const char *base) {
    taken_names t = {a, {0}};
    for (int i = 0; i < f->nparams; i++) {
        take_buf(&t, f->params[i].buf);
        take_var(&t, f->params[i].var);
    }
    for (int i = 0; i < f->nsym; i++) take_var(&t, f->sym_vars[i]);
    for (int i = 0; i < f->nallocs; i++) take_buf(&t, f->allocs[i]);
    mt_tvisitor v = {taken_expr, taken_stmt, &t};
    if (f->body) mt_tvisit_stmt(&v, f->body);
    return mt_nameset_fresh(a, &t.set, base);
}
