/*
 * primitives_block.c -- compute_inline, compute_at, cache_write (local
 * accumulation) and decompose_reduction: the primitives that move, merge or
 * split blocks rather than loops.
 *
 * They follow primitives.c: find what is named, check every precondition and
 * refuse with a reason (s->error, s->func untouched), otherwise build new
 * nodes and put them in place (mt_sched_replace rebuilds only the ancestors).
 * Blocks are named by their name; a name no block or several blocks carry is
 * a refusal (names come from the schedule writer, unlike loop variables).
 *
 * Tools shared by the four:
 *  - find_block: the block and the path of statements from the body to it;
 *  - scan: every store and load of the function in program order, each with
 *    its innermost block and whether it lies inside the target block, after
 *    it, or inside a loop around it (what the dependence checks need);
 *  - drop: the body without one statement, loops (and other wrappers) left
 *    empty by its removal dropped too.
 * See docs/schedule.md "Primitives" for each one's output and refusals.
 */
#include "schedule/primitives.h"

#include <string.h>

#include "passes/tir/inline_subst.h"

typedef MT_VEC(const mt_tstmt *) stmtvec;
typedef MT_VEC(const mt_texpr *) exprvec;
typedef MT_VEC(mt_tbuffer *) bufvec;

static const char *bname(const mt_tstmt *b) { return b && b->name ? b->name : "?"; }

static bool is_const(const mt_texpr *e, int64_t want) {
    int64_t v;
    return mt_te_is_const_int(e, &v) && v == want;
}

static bool is_alloc(const mt_tfunc *f, const mt_tbuffer *b) {
    for (int i = 0; i < f->nallocs; i++)
        if (f->allocs[i] == b) return true;
    return false;
}

static bool buf_in(const bufvec *v, const mt_tbuffer *b) {
    for (int i = 0; i < v->len; i++)
        if (v->data[i] == b) return true;
    return false;
}

/* ---- finding a block and the path to it ----------------------------------- */

typedef struct finder {
    mt_arena *a;
    const char *name;     /* by name, or */
    const mt_tstmt *want; /* by pointer */
    stmtvec stack, path;  /* path: root .. found statement */
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

static bool find_block(mt_sched *s, const char *prim, const char *name, stmtvec *path) {
    finder f = {s->arena, name, NULL, {0}, {0}, 0};
    if (!name) mt_ice("schedule: no block name given");
    find_rec(&f, s->func->body);
    if (f.count == 0) return mt_sched_refuse(s, "%s: no block named '%s'", prim, name);
    if (f.count > 1)
        return mt_sched_refuse(s, "%s: %d blocks are named '%s'", prim, f.count, name);
    *path = f.path;
    return true;
}

static stmtvec path_to(mt_arena *a, const mt_tstmt *root, const mt_tstmt *want) {
    finder f = {a, NULL, want, {0}, {0}, 0};
    find_rec(&f, root);
    return f.path;
}

static int index_in(const stmtvec *p, const mt_tstmt *s) {
    for (int i = 0; i < p->len; i++)
        if (p->data[i] == s) return i;
    return -1;
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
static const mt_tvar *first_use(const mt_texpr *e, mt_tvar *const *vars, int n) {
    if (!e || n == 0) return NULL;
    vscan s = {{vscan_expr, NULL, NULL}, vars, n, NULL, NULL, 0, NULL};
    mt_tvisit_expr(&s.v, e);
    return s.hit;
}

/* The first of vars that statement st uses, or NULL. */
static const mt_tvar *stmt_use(const mt_tstmt *st, mt_tvar *const *vars, int n) {
    if (!st || n == 0) return NULL;
    vscan s = {{vscan_expr, NULL, NULL}, vars, n, NULL, NULL, 0, NULL};
    mt_tvisit_stmt(&s.v, st);
    return s.hit;
}

/* The first variable of e that is neither one of ok nor a sym var or scalar
 * param of f, or NULL. */
static const mt_tvar *foreign_var(const mt_texpr *e, mt_tvar *const *ok, int nok,
                                  const mt_tfunc *f) {
    if (!e) return NULL;
    vscan s = {{vscan_expr, NULL, NULL}, NULL, 0, f, ok, nok, NULL};
    mt_tvisit_expr(&s.v, e);
    return s.hit;
}

/* The variables of a block's iterators of one kind. */
static int iter_vars(mt_arena *a, const mt_tstmt *b, mt_iter_kind kind, mt_tvar ***out) {
    *out = MT_NEW_ARRAY(a, mt_tvar *, b->niters + 1);
    int n = 0;
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == kind) (*out)[n++] = b->iters[i].var;
    return n;
}

/* Does loop l's variable occur in an iter value of kind `kind` of b? */
static bool loop_binds(const mt_tstmt *b, const mt_tstmt *l, mt_iter_kind kind) {
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == kind && first_use(b->iter_values[i], &l->var, 1)) return true;
    return false;
}

/* ---- loads ----------------------------------------------------------------- */

typedef struct lscan {
    mt_tvisitor v;
    mt_arena *a;
    const mt_tbuffer *buf; /* loads of this buffer, or of any (NULL) */
    exprvec loads;
} lscan;

static void lscan_expr(mt_tvisitor *v, const mt_texpr *e) {
    lscan *s = (lscan *)v;
    if (e->kind == TE_LOAD && (!s->buf || e->buf == s->buf)) MT_VEC_PUSH(s->a, &s->loads, e);
    mt_tvisit_expr_children(v, e);
}

static exprvec loads_in(mt_arena *a, const mt_tstmt *st, const mt_texpr *e, const mt_tbuffer *b) {
    lscan s = {{lscan_expr, NULL, NULL}, a, b, {0}};
    if (st) mt_tvisit_stmt(&s.v, st);
    if (e) mt_tvisit_expr(&s.v, e);
    return s.loads;
}

static bool same_index(mt_texpr *const *x, mt_texpr *const *y, int n) {
    for (int i = 0; i < n; i++)
        if (!mt_texpr_equal(x[i], y[i])) return false;
    return true;
}

/* ---- accesses in program order ---------------------------------------------- */

typedef struct access {
    const mt_tstmt *block; /* innermost block around it (NULL: none) */
    mt_tbuffer *buf;
    bool write;
    bool inside; /* inside the target */
    bool after;  /* after the target in program order */
    bool around; /* inside a loop around the target */
} access;

typedef struct scanner {
    mt_tvisitor v;
    mt_arena *a;
    const mt_tstmt *target;
    const stmtvec *anc; /* the target's path */
    const mt_tstmt *block;
    bool inside, after;
    int around;
    MT_VEC(access) acc;
} scanner;

static void push_access(scanner *sc, mt_tbuffer *buf, bool write) {
    access x = {sc->block, buf, write, sc->inside, sc->after, sc->around > 0};
    MT_VEC_PUSH(sc->a, &sc->acc, x);
}

static void scan_expr(mt_tvisitor *v, const mt_texpr *e) {
    if (e->kind == TE_LOAD) push_access((scanner *)v, e->buf, false);
    mt_tvisit_expr_children(v, e);
}

static void scan_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    scanner *sc = (scanner *)v;
    bool is_target = s == sc->target;
    bool anc = s->kind == TS_FOR && sc->anc && index_in(sc->anc, s) >= 0;
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

/* Accesses under root, relative to target (whose path from root is anc). */
static scanner scan(mt_arena *a, const mt_tstmt *root, const mt_tstmt *target,
                    const stmtvec *anc) {
    scanner sc = {{scan_expr, scan_stmt, NULL}, a, target, anc, NULL, false, false, 0, {0}};
    if (root) mt_tvisit_stmt(&sc.v, root);
    return sc;
}

/* ---- building ---------------------------------------------------------------- */

/* s without statement t; a loop, let, allocation, block or if left with
 * nothing to run goes too. NULL when nothing is left. */
static mt_tstmt *drop(mt_arena *a, mt_tstmt *s, const mt_tstmt *t) {
    if (!s || s == t) return NULL;
    mt_tstmt *c;
    switch (s->kind) {
    case TS_SEQ: {
        mt_tstmt **out = MT_NEW_ARRAY(a, mt_tstmt *, s->nstmts + 1);
        int n = 0;
        bool changed = false;
        for (int i = 0; i < s->nstmts; i++) {
            mt_tstmt *x = drop(a, s->stmts[i], t);
            changed = changed || x != s->stmts[i];
            if (x) out[n++] = x;
        }
        if (!changed) return s;
        return n ? mt_ts_seq(a, out, n) : NULL;
    }
    case TS_FOR: case TS_LET: case TS_ALLOC: case TS_BLOCK: {
        mt_tstmt *b = drop(a, s->body, t);
        if (b == s->body) return s;
        if (!b) return NULL;
        c = mt_ts_copy(a, s);
        c->body = b;
        return c;
    }
    case TS_IF: {
        mt_tstmt *th = drop(a, s->then_s, t), *el = drop(a, s->else_s, t);
        if (th == s->then_s && el == s->else_s) return s;
        if (!th && !el) return NULL;
        c = mt_ts_copy(a, s);
        c->then_s = th ? th : mt_ts_seq(a, NULL, 0);
        c->else_s = el;
        return c;
    }
    default: return s;
    }
}

/* x followed by the statements of y (flattening y when it is a sequence). */
static mt_tstmt *prepend(mt_arena *a, mt_tstmt *x, mt_tstmt *y) {
    int n = y->kind == TS_SEQ ? y->nstmts : 1;
    mt_tstmt **v = MT_NEW_ARRAY(a, mt_tstmt *, n + 1);
    v[0] = x;
    if (y->kind == TS_SEQ) memcpy(v + 1, y->stmts, sizeof(mt_tstmt *) * (size_t)n);
    else v[1] = y;
    return mt_ts_seq(a, v, n + 1);
}

static mt_texpr *add0(mt_arena *a, mt_texpr *x, mt_texpr *y) {
    if (!x || is_const(x, 0)) return y;
    if (is_const(y, 0)) return x;
    return mt_te_bin(a, TE_ADD, x, y);
}

/* The single point buf[idx]. */
static mt_tregion point_region(mt_arena *a, mt_tbuffer *buf, mt_texpr *const *idx) {
    int nd = buf->ndim;
    mt_tregion r = {buf, MT_NEW_ARRAY(a, mt_texpr *, nd + 1), MT_NEW_ARRAY(a, mt_texpr *, nd + 1)};
    for (int d = 0; d < nd; d++) {
        r.min[d] = idx[d];
        r.extent[d] = mt_te_i64(a, 1);
    }
    return r;
}

/* Fresh variables named like vars[0..n). */
static mt_tvar **fresh_vars(mt_arena *a, mt_tvar *const *vars, int n, const char *suffix) {
    mt_tvar **out = MT_NEW_ARRAY(a, mt_tvar *, n + 1);
    for (int i = 0; i < n; i++)
        out[i] = mt_tvar_new(a, mt_arena_printf(a, "%s%s", vars[i]->name, suffix), vars[i]->dtype);
    return out;
}

static mt_texpr **var_exprs(mt_arena *a, mt_tvar *const *vars, int n) {
    mt_texpr **out = MT_NEW_ARRAY(a, mt_texpr *, n + 1);
    for (int i = 0; i < n; i++) out[i] = mt_te_var(a, vars[i]);
    return out;
}

/* A block named `name` with b's spatial iterators under new variables
 * (nsv, in order), bound to b's values with vars[i] := vals[i]. Regions
 * and body are the caller's. */
static mt_tstmt *spatial_block(mt_arena *a, const char *name, const mt_tstmt *b,
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

static void set_func_body(mt_sched *s, mt_tstmt *body) {
    mt_tfunc *g = MT_NEW(s->arena, mt_tfunc);
    *g = *s->func;
    g->body = body ? body : mt_ts_seq(s->arena, NULL, 0);
    s->func = g;
}

/* ---- compute_inline ------------------------------------------------------------ */

bool mt_sched_compute_inline(mt_sched *s, const char *name) {
    static const char P[] = "compute_inline";
    mt_arena *a = s->arena;
    const mt_tfunc *f = s->func;
    stmtvec path;
    if (!find_block(s, P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1];
    for (int k = 0; k < b->niters; k++)
        if (b->iters[k].kind == MT_ITER_REDUCE)
            return mt_sched_refuse(s, "%s: block '%s' has reduce variable '%s'", P, name,
                                   b->iters[k].var->name);
    if (b->init) return mt_sched_refuse(s, "%s: block '%s' has an init", P, name);
    if (b->predicate) return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate", P, name);
    if (b->nallocs) return mt_sched_refuse(s, "%s: block '%s' allocates buffers", P, name);
    const mt_tstmt *st = b->body;
    if (st->kind != TS_STORE)
        return mt_sched_refuse(s, "%s: the body of block '%s' is not a single store", P, name);
    mt_tbuffer *buf = st->buf;
    if (!is_alloc(f, buf))
        return mt_sched_refuse(s, "%s: block '%s' writes '%s', which the function does not "
                                  "allocate (a parameter or output)", P, name, buf->name);
    bool exact = st->nidx == b->niters && b->iter_values;
    for (int k = 0; exact && k < st->nidx; k++)
        exact = st->idx[k]->kind == TE_VAR && st->idx[k]->var == b->iters[k].var;
    if (!exact)
        return mt_sched_refuse(s, "%s: the indices of the store in block '%s' are not exactly its "
                                  "iteration variables", P, name);
    for (int k = 0; k < b->niters; k++) {
        const mt_texpr *v = b->iter_values[k];
        bool bound = false;
        for (int j = 0; v->kind == TE_VAR && j < path.len; j++)
            bound = bound || (path.data[j]->kind == TS_FOR && path.data[j]->var == v->var);
        if (!bound)
            return mt_sched_refuse(s, "%s: iteration variable '%s' of block '%s' is not bound to "
                                      "a loop variable", P, b->iters[k].var->name, name);
    }
    mt_tvar **vars = MT_NEW_ARRAY(a, mt_tvar *, b->niters + 1);
    for (int k = 0; k < b->niters; k++) vars[k] = b->iters[k].var;
    if (loads_in(a, NULL, st->value, buf).len)
        return mt_sched_refuse(s, "%s: block '%s' reads '%s', the buffer it writes", P, name,
                               buf->name);
    const mt_tvar *fv = foreign_var(st->value, vars, b->niters, f);
    if (fv)
        return mt_sched_refuse(s, "%s: the value of block '%s' uses '%s', which is not one of its "
                                  "iteration variables", P, name, fv->name);
    bufvec inputs = {0};
    exprvec in_loads = loads_in(a, NULL, st->value, NULL);
    for (int i = 0; i < in_loads.len; i++)
        if (!buf_in(&inputs, in_loads.data[i]->buf)) MT_VEC_PUSH(a, &inputs, in_loads.data[i]->buf);
    scanner sc = scan(a, f->body, b, &path);
    for (int i = 0; i < sc.acc.len; i++) {
        const access *x = &sc.acc.data[i];
        if (x->inside) continue;
        if (x->write && x->buf == buf)
            return mt_sched_refuse(s, "%s: '%s' has another writer, block '%s'", P, buf->name,
                                   bname(x->block));
        if (!x->write && x->buf == buf && !x->after)
            return mt_sched_refuse(s, "%s: block '%s' reads '%s' before block '%s' writes it", P,
                                   bname(x->block), buf->name, name);
        if (x->write && buf_in(&inputs, x->buf) && (x->after || x->around))
            return mt_sched_refuse(s, "%s: block '%s' writes '%s', which block '%s' reads, after "
                                      "it or in a loop around it", P, bname(x->block),
                                   x->buf->name, name);
    }

    mt_inline_def def = {buf, vars, b->niters, st->value, b->reads, b->nreads};
    mt_tstmt *body = drop(a, f->body, b);
    set_func_body(s, body ? mt_inline_apply(a, &def, 1, body) : NULL);
    mt_tfunc *g = s->func;
    g->allocs = MT_NEW_ARRAY(a, mt_tbuffer *, f->nallocs);
    g->nallocs = 0;
    for (int i = 0; i < f->nallocs; i++)
        if (f->allocs[i] != buf) g->allocs[g->nallocs++] = f->allocs[i];
    return true;
}

/* ---- compute_at ------------------------------------------------------------------ */

/* The region [min, min + ext) of one dim of the producer's buffer that one
 * iteration of the target loop reads at index e (in loop variables); inner
 * are the loops between the target loop and the consumer. */
static bool derive_dim(mt_arena *a, mt_texpr *e, const stmtvec *inner, bool *used, mt_texpr **min,
                       mt_texpr **ext) {
    int n = inner->len;
    mt_tvar **iv = MT_NEW_ARRAY(a, mt_tvar *, n + 1);
    for (int j = 0; j < n; j++) iv[j] = inner->data[j]->var;
    if (!first_use(e, iv, n)) {
        *min = e;
        *ext = mt_te_i64(a, 1);
        return true;
    }
    mt_texpr *var = NULL, *base = NULL;
    if (e->kind == TE_VAR) var = e;
    else if (e->kind == TE_ADD && e->a->kind == TE_VAR && !first_use(e->b, iv, n))
        var = e->a, base = e->b;
    else if (e->kind == TE_ADD && e->b->kind == TE_VAR && !first_use(e->a, iv, n))
        var = e->b, base = e->a;
    for (int j = 0; var && j < n; j++) {
        const mt_tstmt *l = inner->data[j];
        if (l->var != var->var) continue;
        if (used[j] || first_use(l->min, iv, n) || first_use(l->extent, iv, n)) return false;
        used[j] = true;
        *min = add0(a, base, l->min);
        *ext = l->extent;
        return true;
    }
    return false;
}

/* Reads of P's inputs written by statements between P's nest and the
 * target loop. */
static const access *written_between(mt_arena *a, const mt_tstmt *seq, int from, int to,
                                     const bufvec *inputs) {
    for (int i = from; i <= to; i++) {
        scanner sc = scan(a, seq->stmts[i], NULL, NULL);
        for (int k = 0; k < sc.acc.len; k++)
            if (sc.acc.data[k].write && buf_in(inputs, sc.acc.data[k].buf)) return &sc.acc.data[k];
    }
    return NULL;
}

bool mt_sched_compute_at(mt_sched *s, const char *name, mt_tvar *loop) {
    static const char P[] = "compute_at";
    mt_arena *a = s->arena;
    const mt_tfunc *f = s->func;
    const mt_tstmt *L = mt_sched_get_loop(s, loop);
    stmtvec path;
    if (!find_block(s, P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1], *st = b->body;
    if (st->kind != TS_STORE ||
        (b->init && (b->init->kind != TS_STORE || b->init->buf != st->buf ||
                     !same_index(b->init->idx, st->idx, st->nidx))))
        return mt_sched_refuse(s, "%s: block '%s' does not write one buffer with one store", P,
                               name);
    mt_tbuffer *X = st->buf;
    if (!is_alloc(f, X))
        return mt_sched_refuse(s, "%s: block '%s' writes '%s', which the function does not "
                                  "allocate (a parameter or output)", P, name, X->name);
    if (index_in(&path, L) >= 0)
        return mt_sched_refuse(s, "%s: block '%s' is already under loop '%s'", P, name,
                               loop->name);
    /* the consumer */
    scanner sc = scan(a, f->body, b, &path);
    const mt_tstmt *C = NULL;
    for (int i = 0; i < sc.acc.len; i++) {
        const access *x = &sc.acc.data[i];
        if (x->inside || x->buf != X) continue;
        if (x->write)
            return mt_sched_refuse(s, "%s: '%s' has another writer, block '%s'", P, X->name,
                                   bname(x->block));
        if (!x->block)
            return mt_sched_refuse(s, "%s: '%s' is read outside a block", P, X->name);
        if (C && C != x->block)
            return mt_sched_refuse(s, "%s: '%s' is read by blocks '%s' and '%s' (compute_at wants "
                                      "one consumer)", P, X->name, bname(C), bname(x->block));
        C = x->block;
    }
    if (!C) return mt_sched_refuse(s, "%s: no block reads '%s'", P, X->name);
    stmtvec cpath = path_to(a, f->body, C);
    int il = index_in(&cpath, L);
    if (il < 0)
        return mt_sched_refuse(s, "%s: loop '%s' is not an ancestor of block '%s'", P, loop->name,
                               bname(C));
    /* the producer's nest: path[k .. len-2] are its loops */
    int k = path.len - 1;
    while (k > 0 && path.data[k - 1]->kind == TS_FOR && path.data[k - 1]->body == path.data[k]) k--;
    const mt_tstmt *seq = k > 0 ? path.data[k - 1] : NULL;
    int iq = seq ? index_in(&cpath, seq) : -1, in = -1, it = -1;
    for (int i = 0; iq >= 0 && i < seq->nstmts; i++) {
        if (seq->stmts[i] == path.data[k]) in = i;
        if (seq->stmts[i] == cpath.data[iq + 1]) it = i;
    }
    if (!seq || seq->kind != TS_SEQ || iq < 0 || il <= iq || in < 0 || it <= in)
        return mt_sched_refuse(s, "%s: loop '%s' does not come after the loop nest of block '%s' "
                                  "in the same sequence", P, loop->name, name);
    if (L->for_kind != MT_FOR_SERIAL && L->for_kind != MT_FOR_UNROLLED)
        return mt_sched_refuse(s, "%s: loop '%s' is not serial", P, loop->name);
    int nl = path.len - 1 - k;
    const mt_tstmt **nest = path.data + k;
    mt_tvar **nv = MT_NEW_ARRAY(a, mt_tvar *, nl + 1);
    for (int j = 0; j < nl; j++) nv[j] = nest[j]->var;
    for (int j = 0; j < nl; j++)
        if (first_use(nest[j]->min, nv, nl) || first_use(nest[j]->extent, nv, nl))
            return mt_sched_refuse(s, "%s: the loops of block '%s' are not a rectangular nest", P,
                                   name);
    for (int i = 0; i < b->niters; i++) {
        const mt_tvar *fv = foreign_var(b->iter_values[i], nv, nl, f);
        if (fv)
            return mt_sched_refuse(s, "%s: block '%s' is bound to '%s', outside its own loop nest",
                                   P, name, fv->name);
    }
    bufvec inputs = {0};
    exprvec pl = loads_in(a, b->body, NULL, NULL), il2 = loads_in(a, b->init, NULL, NULL);
    for (int i = 0; i < il2.len; i++) MT_VEC_PUSH(a, &pl, il2.data[i]);
    for (int i = 0; i < pl.len; i++)
        if (pl.data[i]->buf != X && !buf_in(&inputs, pl.data[i]->buf))
            MT_VEC_PUSH(a, &inputs, pl.data[i]->buf);
    const access *w = written_between(a, seq, in + 1, it, &inputs);
    if (w)
        return mt_sched_refuse(s, "%s: block '%s' writes '%s', which block '%s' reads, between "
                                  "them", P, bname(w->block), w->buf->name, name);
    /* the region one iteration of L reads */
    if (C->predicate)
        return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate: the region it reads is "
                                  "not exact", P, bname(C));
    exprvec cl = loads_in(a, C->body, NULL, X), cl2 = loads_in(a, C->init, NULL, X);
    for (int i = 0; i < cl2.len; i++) MT_VEC_PUSH(a, &cl, cl2.data[i]);
    for (int i = 1; i < cl.len; i++)
        if (!same_index(cl.data[0]->args, cl.data[i]->args, X->ndim))
            return mt_sched_refuse(s, "%s: block '%s' reads '%s' at more than one index", P,
                                   bname(C), X->name);
    stmtvec inner = {0};
    for (int j = il + 1; j < cpath.len - 1; j++)
        if (cpath.data[j]->kind == TS_FOR) MT_VEC_PUSH(a, &inner, cpath.data[j]);
    bool *used = MT_NEW_ARRAY(a, bool, inner.len + 1);
    mt_texpr **rmin = MT_NEW_ARRAY(a, mt_texpr *, X->ndim + 1);
    mt_texpr **rext = MT_NEW_ARRAY(a, mt_texpr *, X->ndim + 1);
    mt_tvar **cv = MT_NEW_ARRAY(a, mt_tvar *, C->niters + 1);
    for (int i = 0; i < C->niters; i++) cv[i] = C->iters[i].var;
    for (int d = 0; d < X->ndim; d++) {
        mt_texpr *e = mt_tsubst_expr(a, cl.data[0]->args[d], cv, C->iter_values, C->niters);
        if (!derive_dim(a, e, &inner, used, &rmin[d], &rext[d]))
            return mt_sched_refuse(s, "%s: cannot derive the region of '%s' that loop '%s' needs "
                                      "from index '%s' of dim %d", P, X->name, loop->name,
                                   mt_texpr_print(a, e), d);
    }
    /* the producer's side: dim d is written at an iter var bound to its own
     * loop nest[dl[d]], or at a constant */
    int *dl = MT_NEW_ARRAY(a, int, X->ndim + 1);
    int *iter_dim = MT_NEW_ARRAY(a, int, b->niters + 1);
    for (int i = 0; i < b->niters; i++) iter_dim[i] = -1;
    for (int d = 0; d < X->ndim; d++) {
        const mt_texpr *x = st->idx[d];
        int64_t c;
        dl[d] = -1;
        if (mt_te_is_const_int(x, &c)) {
            if (!is_const(rmin[d], c) || !is_const(rext[d], 1))
                return mt_sched_refuse(s, "%s: block '%s' writes dim %d of '%s' at %lld only, and "
                                          "loop '%s' needs more", P, name, d, X->name,
                                       (long long)c, loop->name);
            continue;
        }
        int u = -1;
        for (int i = 0; x->kind == TE_VAR && i < b->niters; i++)
            if (b->iters[i].var == x->var) u = i;
        const mt_texpr *v = u >= 0 ? b->iter_values[u] : NULL;
        for (int j = 0; v && v->kind == TE_VAR && j < nl; j++)
            if (nest[j]->var == v->var) dl[d] = j;
        bool ok = dl[d] >= 0 && iter_dim[u] < 0 && b->iters[u].kind == MT_ITER_SPATIAL &&
                  is_const(nest[dl[d]]->min, 0) &&
                  mt_texpr_equal(nest[dl[d]]->extent, b->iters[u].extent);
        for (int i = 0; ok && i < b->niters; i++)
            ok = i == u || !first_use(b->iter_values[i], &nest[dl[d]]->var, 1);
        if (!ok)
            return mt_sched_refuse(s, "%s: block '%s' writes dim %d of '%s' at '%s', not at an "
                                      "iteration variable bound to a loop of its own", P, name, d,
                                   X->name, mt_texpr_print(a, x));
        iter_dim[u] = d;
    }
    for (int i = 0; i < b->niters; i++)
        if (b->iters[i].kind == MT_ITER_SPATIAL && iter_dim[i] < 0)
            return mt_sched_refuse(s, "%s: spatial variable '%s' of block '%s' does not index '%s'",
                                   P, b->iters[i].var->name, name, X->name);

    /* build: the nest with X's loops replaced by the region */
    mt_tstmt *nb = mt_ts_copy(a, b);
    nb->iter_values = MT_NEW_ARRAY(a, mt_texpr *, b->niters + 1);
    memcpy(nb->iter_values, b->iter_values, sizeof(mt_texpr *) * (size_t)b->niters);
    mt_tstmt *body = nb;
    for (int j = nl - 1; j >= 0; j--) {
        int d = -1;
        for (int e = 0; e < X->ndim; e++)
            if (dl[e] == j) d = e;
        if (d < 0) {
            mt_tstmt *c = mt_ts_copy(a, nest[j]);
            c->body = body;
            body = c;
            continue;
        }
        int u = 0;
        while (iter_dim[u] != d) u++;
        if (is_const(rext[d], 1)) {
            nb->iter_values[u] = rmin[d];
            continue;
        }
        nb->iter_values[u] = add0(a, rmin[d], mt_te_var(a, nest[j]->var));
        body = mt_ts_for(a, nest[j]->var, mt_te_i64(a, 0), rext[d], MT_FOR_SERIAL, body);
    }
    set_func_body(s, drop(a, f->body, path.data[k]));
    mt_tstmt *nL = mt_ts_copy(a, L);
    nL->body = prepend(a, body, L->body);
    mt_sched_replace(s, L, nL);
    return true;
}

/* ---- cache_write (local accumulation) ------------------------------------------- */

typedef struct to_acc {
    const mt_tbuffer *buf;
    mt_texpr *acc;
} to_acc;

static mt_texpr *acc_expr(mt_tmutator *m, mt_texpr *e) {
    to_acc *t = m->ctx;
    if (e->kind == TE_LOAD && e->buf == t->buf) return t->acc;
    return mt_tmutate_expr_children(m, e);
}

/* The block's regions with buf's replaced by the scalar acc (once). */
static int swap_regions(mt_arena *a, const mt_tregion *rs, int n, const mt_tbuffer *buf,
                        mt_tbuffer *acc, mt_tregion **out) {
    *out = MT_NEW_ARRAY(a, mt_tregion, n + 1);
    int m = 0;
    bool done = false;
    for (int i = 0; i < n; i++) {
        if (rs[i].buf != buf) {
            (*out)[m++] = rs[i];
        } else if (!done) {
            (*out)[m++] = point_region(a, acc, NULL);
            done = true;
        }
    }
    return m;
}

bool mt_sched_cache_write(mt_sched *s, const char *name, mt_scope scope) {
    static const char P[] = "cache_write";
    mt_arena *a = s->arena;
    if (scope != MT_SCOPE_LOCAL)
        return mt_sched_refuse(s, "%s: only scope local (a scalar accumulator) is supported", P);
    stmtvec path;
    if (!find_block(s, P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1], *st = b->body, *in = b->init;
    mt_tvar **rv, **sv;
    int nr = iter_vars(a, b, MT_ITER_REDUCE, &rv), ns = iter_vars(a, b, MT_ITER_SPATIAL, &sv);
    if (nr == 0)
        return mt_sched_refuse(s, "%s: block '%s' is not a reduction (no reduce variable)", P,
                               name);
    if (!in) return mt_sched_refuse(s, "%s: block '%s' has no init", P, name);
    if (b->predicate) return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate", P, name);
    if (st->kind != TS_STORE || in->kind != TS_STORE || in->buf != st->buf ||
        !same_index(in->idx, st->idx, st->nidx))
        return mt_sched_refuse(s, "%s: block '%s' does not update one element of one buffer with "
                                  "one store and its init", P, name);
    mt_tbuffer *B = st->buf;
    for (int d = 0; d < st->nidx; d++) {
        const mt_tvar *r = first_use(st->idx[d], rv, nr);
        if (r)
            return mt_sched_refuse(s, "%s: the index of '%s' in block '%s' uses reduce variable "
                                      "'%s'", P, B->name, name, r->name);
    }
    exprvec own = loads_in(a, NULL, st->value, B);
    bool same = loads_in(a, NULL, in->value, B).len == 0;
    for (int i = 0; same && i < own.len; i++) same = same_index(own.data[i]->args, st->idx, st->nidx);
    if (!same)
        return mt_sched_refuse(s, "%s: block '%s' reads '%s' at another index than it writes", P,
                               name, B->name);
    /* path[r .. len-2]: the reduce loops, innermost and perfectly nested */
    int r = path.len - 1;
    while (r > 0 && path.data[r - 1]->kind == TS_FOR && path.data[r - 1]->body == path.data[r] &&
           loop_binds(b, path.data[r - 1], MT_ITER_REDUCE) &&
           !loop_binds(b, path.data[r - 1], MT_ITER_SPATIAL))
        r--;
    for (int j = 0; j < r; j++)
        if (path.data[j]->kind == TS_FOR && loop_binds(b, path.data[j], MT_ITER_REDUCE))
            return mt_sched_refuse(s, "%s: the reduce loops of block '%s' are not innermost under "
                                      "its spatial loops (loop '%s')", P, name,
                                   path.data[j]->var->name);

    mt_tbuffer *acc = mt_tbuffer_new(a, mt_arena_printf(a, "%s_local", B->name), B->dtype, 0, NULL);
    acc->scope = MT_SCOPE_LOCAL;
    mt_texpr *ld = mt_te_load(a, acc, NULL, 0);
    to_acc t = {B, ld};
    mt_tmutator m = {a, acc_expr, NULL, &t};
    mt_tstmt *nb = mt_ts_copy(a, b);
    nb->body = mt_ts_store(a, acc, NULL, 0, mt_tmutate_expr(&m, st->value));
    nb->init = mt_ts_store(a, acc, NULL, 0, in->value);
    nb->nreads = swap_regions(a, b->reads, b->nreads, B, acc, &nb->reads);
    nb->nwrites = swap_regions(a, b->writes, b->nwrites, B, acc, &nb->writes);
    mt_tstmt *nest = nb;
    for (int j = path.len - 2; j >= r; j--) {
        mt_tstmt *c = mt_ts_copy(a, path.data[j]);
        c->body = nest;
        nest = c;
    }
    /* the write-back block: B[idx] = acc[()] for the same spatial instance */
    mt_tvar **nsv = fresh_vars(a, sv, ns, "");
    mt_texpr **nse = var_exprs(a, nsv, ns);
    mt_tstmt *wb = spatial_block(a, mt_arena_printf(a, "%s_write_back", name), b, nsv, NULL,
                                 NULL, 0);
    mt_texpr **idx = MT_NEW_ARRAY(a, mt_texpr *, st->nidx + 1);
    for (int d = 0; d < st->nidx; d++) idx[d] = mt_tsubst_expr(a, st->idx[d], sv, nse, ns);
    wb->body = mt_ts_store(a, B, idx, st->nidx, ld);
    wb->reads = MT_NEW_ARRAY(a, mt_tregion, 1);
    wb->reads[0] = point_region(a, acc, NULL);
    wb->nreads = 1;
    wb->writes = MT_NEW_ARRAY(a, mt_tregion, 1);
    wb->writes[0] = point_region(a, B, idx);
    wb->nwrites = 1;
    mt_tstmt *pair[2] = {nest, wb};
    mt_sched_replace(s, path.data[r], mt_ts_alloc(a, acc, mt_ts_seq(a, pair, 2)));
    return true;
}

/* ---- decompose_reduction ---------------------------------------------------------- */

bool mt_sched_decompose_reduction(mt_sched *s, const char *name, mt_tvar *loop) {
    static const char P[] = "decompose_reduction";
    mt_arena *a = s->arena;
    const mt_tstmt *L = mt_sched_get_loop(s, loop);
    stmtvec path;
    if (!find_block(s, P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1];
    mt_tvar **rv, **sv;
    int nr = iter_vars(a, b, MT_ITER_REDUCE, &rv), ns = iter_vars(a, b, MT_ITER_SPATIAL, &sv);
    if (!b->init) return mt_sched_refuse(s, "%s: block '%s' has no init", P, name);
    if (nr == 0)
        return mt_sched_refuse(s, "%s: block '%s' is not a reduction (no reduce variable)", P,
                               name);
    if (b->predicate) return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate", P, name);
    int il = index_in(&path, L);
    if (il < 0)
        return mt_sched_refuse(s, "%s: loop '%s' is not an ancestor of block '%s'", P, loop->name,
                               name);
    const mt_tvar *ru = stmt_use(b->init, rv, nr);
    if (ru)
        return mt_sched_refuse(s, "%s: the init of block '%s' uses reduce variable '%s'", P, name,
                               ru->name);
    for (int j = 0; j < il; j++)
        if (path.data[j]->kind == TS_FOR && loop_binds(b, path.data[j], MT_ITER_REDUCE))
            return mt_sched_refuse(s, "%s: loop '%s' above loop '%s' binds a reduce variable of "
                                      "block '%s'", P, path.data[j]->var->name, loop->name, name);
    stmtvec copied = {0}, others = {0};
    for (int j = il; j < path.len - 1; j++) {
        const mt_tstmt *l = path.data[j];
        if (l->kind == TS_SEQ) continue;
        if (l->kind != TS_FOR)
            return mt_sched_refuse(s, "%s: a statement other than a loop lies between loop '%s' "
                                      "and block '%s'", P, loop->name, name);
        bool bs = loop_binds(b, l, MT_ITER_SPATIAL), br = loop_binds(b, l, MT_ITER_REDUCE);
        if (bs && br)
            return mt_sched_refuse(s, "%s: loop '%s' binds both spatial and reduce variables of "
                                      "block '%s'", P, l->var->name, name);
        MT_VEC_PUSH(a, bs ? &copied : &others, l);
    }
    mt_tvar **ov = MT_NEW_ARRAY(a, mt_tvar *, others.len + 1);
    for (int j = 0; j < others.len; j++) ov[j] = others.data[j]->var;
    for (int j = 0; j < copied.len; j++) {
        const mt_tstmt *l = copied.data[j];
        const mt_tvar *u = first_use(l->min, ov, others.len);
        if (!u) u = first_use(l->extent, ov, others.len);
        if (u)
            return mt_sched_refuse(s, "%s: the bounds of loop '%s' depend on loop '%s'", P,
                                   l->var->name, u->name);
    }
    /* the init block, in copies of the spatial loops */
    int nc = copied.len;
    mt_tvar **cv = MT_NEW_ARRAY(a, mt_tvar *, nc + 1);
    for (int j = 0; j < nc; j++) cv[j] = copied.data[j]->var;
    mt_tvar **ncv = fresh_vars(a, cv, nc, "_init");
    mt_texpr **nce = var_exprs(a, ncv, nc);
    mt_tvar **nsv = fresh_vars(a, sv, ns, "");
    mt_texpr **nse = var_exprs(a, nsv, ns);
    mt_tstmt *ib = spatial_block(a, mt_arena_printf(a, "%s_init", name), b, nsv, cv, nce, nc);
    mt_tstmt *init = mt_tsubst_stmt(a, b->init, sv, nse, ns);
    ib->body = init;
    ib->writes = MT_NEW_ARRAY(a, mt_tregion, b->nwrites + 1);
    ib->nwrites = b->nwrites;
    for (int i = 0; i < b->nwrites; i++) {
        mt_tregion r = b->writes[i];
        int nd = r.buf->ndim;
        mt_tregion c = {r.buf, MT_NEW_ARRAY(a, mt_texpr *, nd + 1),
                        MT_NEW_ARRAY(a, mt_texpr *, nd + 1)};
        for (int d = 0; d < nd; d++) {
            c.min[d] = mt_tsubst_expr(a, r.min[d], sv, nse, ns);
            c.extent[d] = mt_tsubst_expr(a, r.extent[d], sv, nse, ns);
        }
        ib->writes[i] = c;
    }
    exprvec il3 = loads_in(a, init, NULL, NULL);
    ib->reads = MT_NEW_ARRAY(a, mt_tregion, il3.len + 1);
    for (int i = 0; i < il3.len; i++)
        ib->reads[ib->nreads++] = point_region(a, il3.data[i]->buf, il3.data[i]->args);
    mt_tstmt *nest = ib;
    for (int j = nc - 1; j >= 0; j--) {
        const mt_tstmt *l = copied.data[j];
        nest = mt_ts_for(a, ncv[j], mt_tsubst_expr(a, l->min, cv, nce, nc),
                         mt_tsubst_expr(a, l->extent, cv, nce, nc), MT_FOR_SERIAL, nest);
    }
    /* the update block: the same without its init */
    mt_tstmt *ub = mt_ts_copy(a, b);
    ub->init = NULL;
    ub->name = mt_arena_printf(a, "%s_update", name);
    mt_sched_replace(s, b, ub);
    const mt_tstmt *L2 = mt_sched_get_loop(s, loop);
    mt_tstmt *pair[2] = {nest, (mt_tstmt *)L2};
    mt_sched_replace(s, L2, mt_ts_seq(a, pair, 2));
    return true;
}
