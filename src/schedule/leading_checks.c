/*
 * leading_checks.c -- schedule rules and the bounds checks hoisted in front
 * of a loop nest (leading_checks.h).
 *
 * With mt_compile_options.check_bounds, the check_bounds pass leaves a
 * check it cannot prove but can hoist as a T.check_bounds statement in
 * front of the nest, e.g. for `A[vi, vk + s[()]]` with s read at run time:
 *
 *     T.check_bounds(M <= 0 or ... or 0 + s[()] >= 0 and K - 1 + s[()] < KA, ...)
 *     for i, j, k in T.grid(M, N, K): ...
 *
 * The rules match a function's body as a whole, so that statement alone
 * kept the matmul and row-reduction rules from matching (the nest ran as
 * written, 90x slower). Here the checks are set aside while a rule looks at
 * the function, then put back in front of what it made. A rule that emits
 * the lowered form gives the function new, flat parameters: the loads in
 * the checks (s[()]) are rewritten onto them, row-major, the way
 * flatten_buffers would. The checks still run first, before anything of the
 * kernel; only their place relative to the rest is kept.
 */
#include "schedule/leading_checks.h"

#include "schedule/lowered.h"
#include "target/target.h"

static int leading(const mt_tstmt *body) {
    if (!body || body->kind != TS_SEQ) return 0;
    int n = 0;
    while (n < body->nstmts - 1 && body->stmts[n]->kind == TS_CHECK) n++;
    return n;
}

mt_tfunc *mt_checks_peel(mt_arena *a, mt_tfunc *f, mt_tstmt ***checks, int *n) {
    *checks = NULL, *n = 0;
    if (mt_tfunc_target(f)->kind != MT_TARGET_CPU) return f; /* no checks on a GPU */
    int k = leading(f->body);
    if (k == 0) return f;
    const mt_tstmt *b = f->body;
    mt_tfunc *g = MT_NEW(a, mt_tfunc);
    *g = *f;
    g->body = b->nstmts - k == 1 ? b->stmts[k] : mt_ts_at(mt_ts_seq(a, b->stmts + k, b->nstmts - k), b->loc);
    *checks = b->stmts, *n = k;
    return g;
}

typedef struct onto {
    mt_lw lw;
    const mt_tfunc *f, *g;
    bool lost; /* a load of something that is not a parameter of both */
} onto;

/* g's parameter in f's buffer b's place, or NULL. */
static mt_tbuffer *counterpart(const onto *o, const mt_tbuffer *b) {
    for (int i = 0; i < o->f->nparams; i++)
        if (o->f->params[i].buf == b) return o->g->params[i].buf;
    return NULL;
}

static mt_texpr *onto_expr(mt_tmutator *m, mt_texpr *e) {
    onto *o = m->ctx;
    e = mt_tmutate_expr_children(m, e);
    if (e->kind != TE_LOAD) return e;
    mt_tbuffer *to = counterpart(o, e->buf);
    if (!to) {
        o->lost = true;
        return e;
    }
    if (to == e->buf) return e;
    if (to->ndim != 1) {
        o->lost = true;
        return e;
    }
    mt_texpr *i = mt_lw_index(&o->lw, e->buf, e->args, e->nargs);
    return mt_te_load(m->arena, to, &i, 1);
}

/* Do f and g take the same kinds of parameters, in the same order? */
static bool same_params(const mt_tfunc *f, const mt_tfunc *g) {
    if (f->nparams != g->nparams) return false;
    for (int i = 0; i < f->nparams; i++)
        if (!f->params[i].buf != !g->params[i].buf) return false;
    return true;
}

mt_tfunc *mt_checks_restore(mt_arena *a, const mt_tfunc *f, mt_tfunc *g, mt_tstmt *const *checks, int n) {
    if (n == 0) return g;
    if (!same_params(f, g)) return NULL;
    onto o = {{a, {0}}, f, g, false};
    mt_tmutator m = {a, onto_expr, NULL, &o};
    mt_tstmt **items = MT_NEW_ARRAY(a, mt_tstmt *, n + 2);
    for (int i = 0; i < n; i++) items[i] = mt_tmutate_stmt(&m, checks[i]);
    if (o.lost) return NULL;
    items[n] = g->body;
    mt_tfunc *r = MT_NEW(a, mt_tfunc);
    *r = *g;
    r->body = mt_ts_at(mt_ts_seq(a, items, n + 1), f->body->loc);
    return r;
}
