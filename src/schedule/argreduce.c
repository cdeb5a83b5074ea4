/*
 * argreduce.c -- argmax / argmin over the last axis: the match and the
 * comparisons the CPU and GPU rules share (argreduce.h).
 */
#include "schedule/argreduce.h"

/* ---- matching ------------------------------------------------------------------- */

static bool is_var(const mt_texpr *e, const mt_tvar *v) { return e && e->kind == TE_VAR && e->var == v; }

/* The nest: loops over x's dims (min 0) down to one block, its iter
 * values the loop variables in order, only the last one reduced. */
static const mt_tstmt *nest_block(mt_argred *g, const mt_tstmt *s) {
    const mt_tstmt *loops[MT_MAX_RANK + 1];
    int n = 0;
    for (; s->kind == TS_FOR && n <= MT_MAX_RANK; s = s->body) {
        int64_t m;
        if (!mt_te_is_const_int(s->min, &m) || m != 0 || s->for_kind != MT_FOR_SERIAL) return NULL;
        loops[n++] = s;
    }
    if (s->kind != TS_BLOCK || s->niters != n || n < 1 || s->predicate || !s->init) return NULL;
    for (int k = 0; k < n; k++) {
        if (!is_var(s->iter_values[k], loops[k]->var)) return NULL;
        if ((s->iters[k].kind == MT_ITER_REDUCE) != (k == n - 1)) return NULL;
        g->iv[k] = s->iters[k].var;
        if (k < n - 1) g->c->O[k] = loops[k]->extent;
    }
    g->c->ns = n - 1;
    g->c->N = loops[n - 1]->extent;
    return s;
}

/* buf[o.., (0)] with o.. the outer iteration variables. */
static bool at_row(mt_argred *g, mt_tbuffer *b, mt_texpr *const *idx, int n) {
    int64_t z;
    int ns = g->c->ns;
    if (n != b->ndim || (n != ns && n != ns + 1)) return false;
    for (int k = 0; k < ns; k++)
        if (!is_var(idx[k], g->iv[k])) return false;
    return n == ns || (mt_te_is_const_int(idx[ns], &z) && z == 0);
}

static bool store_at_row(mt_argred *g, const mt_tstmt *s, mt_tbuffer **buf) {
    if (s->kind != TS_STORE || !at_row(g, s->buf, s->idx, s->nidx)) return false;
    *buf = s->buf;
    return true;
}

static bool shuffle_dtype(mt_dtype t) {
    return mt_dtype_is_half(t) || t == MT_FLOAT32 || t == MT_FLOAT64 || t == MT_INT32 || t == MT_INT64;
}

/* The block's init and body as legalize_reduce.c writes them. */
static bool match_block(mt_argred *g, const mt_tstmt *b) {
    const mt_tstmt *in = b->init, *up = b->body;
    mt_tbuffer *best, *best2, *out, *out2;
    if (in->kind != TS_SEQ || in->nstmts != 2 || up->kind != TS_IF || up->else_s || up->then_s->kind != TS_SEQ ||
        up->then_s->nstmts != 2)
        return false;
    const mt_tstmt *sb = up->then_s->stmts[0], *so = up->then_s->stmts[1];
    if (!store_at_row(g, in->stmts[0], &best) || !store_at_row(g, in->stmts[1], &out) ||
        !store_at_row(g, sb, &best2) || !store_at_row(g, so, &out2) || best != best2 || out != out2)
        return false;
    int64_t z;
    if (out->dtype != MT_INT64 || !mt_te_is_const_int(in->stmts[1]->value, &z) || z != 0 ||
        !is_var(so->value, g->iv[g->c->ns]) || !shuffle_dtype(best->dtype))
        return false;
    const mt_texpr *cmp = up->cond->kind == TE_OR ? up->cond->a : up->cond;
    if ((cmp->kind != TE_GT && cmp->kind != TE_LT) || !mt_texpr_equal(cmp->a, sb->value) ||
        cmp->b->kind != TE_LOAD || cmp->b->buf != best || mt_texpr_reads(sb->value, best) ||
        mt_texpr_uses_var(sb->value, g->iv[g->c->ns]) == false)
        return false;
    g->is_max = cmp->kind == TE_GT;
    g->dt = best->dtype;
    g->E = sb->value;
    g->ident = in->stmts[0]->value;
    g->out = out;
    g->out_nd = out->ndim;
    return true;
}

/* Every buffer E reads is a parameter (nothing computed inside f). */
static bool reads_params_only(mt_argred *g) {
    const mt_tfunc *f = g->c->f;
    for (int i = 0; i < f->nallocs; i++)
        if (mt_texpr_reads(g->E, f->allocs[i])) return false;
    return true;
}

bool mt_argred_match(mt_argred *g) {
    const mt_tfunc *f = g->c->f;
    const mt_tstmt *s = f->body;
    if (!s || f->num_outputs != 1 || mt_tfunc_get_attr(f, "schedule")) return false;
    if (s->kind == TS_SEQ && s->nstmts == 2 && s->stmts[0]->kind == TS_IF) s = s->stmts[1]; /* the empty fill */
    const mt_tstmt *b = nest_block(g, s);
    return b && match_block(g, b) && g->out == f->params[f->nparams - 1].buf && reads_params_only(g);
}

typedef struct low_ctx {
    mt_argred *g;
    mt_texpr *j;
} low_ctx;

static mt_texpr *low_hook(mt_tmutator *m, mt_texpr *e) {
    low_ctx *l = m->ctx;
    rr *c = l->g->c;
    if (e->kind == TE_VAR) {
        for (int k = 0; k < c->ns; k++)
            if (e->var == l->g->iv[k]) return c->oval[k];
        return e->var == l->g->iv[c->ns] ? l->j : e;
    }
    if (e->kind != TE_LOAD) return mt_tmutate_expr_children(m, e);
    mt_texpr *idx[MT_MAX_RANK + 1];
    for (int d = 0; d < e->nargs; d++) idx[d] = mt_tmutate_expr(m, e->args[d]);
    return mt_lw_load(&c->lw, e->buf, idx, e->nargs);
}

/* E at (row, j), lowered to flat loads (argreduce.h). */
mt_texpr *mt_argred_value(mt_argred *g, mt_texpr *j) {
    low_ctx l = {g, j};
    mt_tmutator m = {g->c->a, low_hook, NULL, &l};
    return mt_tmutate_expr(&m, g->E);
}

/* E of rows first .. first + lanes - 1 (a vector, row r in lane r -
 * first) at column j (a scalar); c->ns == 1. A load whose indices are
 * exactly (row, column) of a buffer whose last dim is the row's: a T.Ramp
 * down the column; one whose indices do not use the row: a scalar (met by
 * the vectors around it); anything else that uses the row: NULL. */
typedef struct rows_ctx {
    mt_argred *g;
    mt_texpr *first, *j;
    int lanes;
    bool bad;
} rows_ctx;

static mt_texpr *rows_hook(mt_tmutator *m, mt_texpr *e) {
    rows_ctx *l = m->ctx;
    mt_argred *g = l->g;
    rr *c = g->c;
    if (e->kind == TE_VAR) {
        if (e->var == g->iv[0]) l->bad = true;
        return e->var == g->iv[1] ? l->j : e;
    }
    if (e->kind != TE_LOAD) return mt_tmutate_expr_children(m, e);
    bool row = false;
    for (int d = 0; d < e->nargs; d++) row = row || mt_texpr_uses_var(e->args[d], g->iv[0]);
    if (!row) {
        mt_texpr *idx[MT_MAX_RANK + 1];
        for (int d = 0; d < e->nargs; d++) idx[d] = mt_tmutate_expr(m, e->args[d]);
        return mt_lw_load(&c->lw, e->buf, idx, e->nargs);
    }
    const mt_texpr *r = e->nargs == 2 ? e->args[0] : NULL, *col = e->nargs == 2 ? e->args[1] : NULL;
    if (!r || r->kind != TE_VAR || r->var != g->iv[0] || col->kind != TE_VAR || col->var != g->iv[1]) {
        l->bad = true;
        return e;
    }
    mt_texpr *at = mt_lw_load(&c->lw, e->buf, (mt_texpr *[]){l->first, l->j}, 2);
    mt_texpr *stride = mt_te_cast(c->a, MT_INT64, e->buf->shape[1]);
    mt_texpr *ix = mt_te_ramp(c->a, at->args[0], stride, l->lanes);
    mt_texpr *v = mt_te_load(c->a, at->buf, &ix, 1);
    v->loc = at->loc;
    return v;
}

mt_texpr *mt_argred_value_rows(mt_argred *g, mt_texpr *first, int lanes, mt_texpr *j) {
    if (g->c->ns != 1) return NULL;
    rows_ctx l = {g, first, j, lanes, false};
    mt_tmutator m = {g->c->a, rows_hook, NULL, &l};
    mt_texpr *v = mt_tmutate_expr(&m, g->E);
    return l.bad || v->lanes != lanes ? NULL : v;
}

static mt_texpr *isnan_(mt_argred *g, mt_texpr *x) { return mt_te_bin(g->c->a, TE_NE, x, x); }

/* argreduce.h. Written not(x <= y) and y == y (argmin: >=): a NaN x is
 * better than a number y, nothing is better than a NaN y, else x > y --
 * the same as x > y or (x != x and y == y) in two compares and an and,
 * which the CPU rule's vector scan runs once per element. */
mt_texpr *mt_argred_better(mt_argred *g, mt_texpr *x, mt_texpr *y) {
    mt_arena *a = g->c->a;
    if (!mt_dtype_is_float(g->dt)) return mt_te_bin(a, g->is_max ? TE_GT : TE_LT, x, y);
    mt_texpr *worse = mt_te_unary(a, TE_NOT, mt_te_bin(a, g->is_max ? TE_LE : TE_GE, x, y));
    return mt_te_bin(a, TE_AND, worse, mt_te_bin(a, TE_EQ, y, y));
}

/* argreduce.h. */
mt_texpr *mt_argred_takes(mt_argred *g, mt_texpr *xv, mt_texpr *xi, mt_texpr *yv, mt_texpr *yi) {
    mt_arena *a = g->c->a;
    mt_texpr *tie = mt_te_bin(a, TE_EQ, xv, yv);
    if (mt_dtype_is_float(g->dt)) tie = mt_te_bin(a, TE_OR, tie, mt_te_bin(a, TE_AND, isnan_(g, xv), isnan_(g, yv)));
    return mt_te_bin(a, TE_OR, mt_argred_better(g, xv, yv), mt_te_bin(a, TE_AND, tie, mt_te_bin(a, TE_LT, xi, yi)));
}

