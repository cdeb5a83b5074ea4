/*
 * combiner.c -- a reduction's update read as F and e (combiner.h).
 */
#include "tir/combiner.h"

bool mt_tcombiner_match(mt_arena *a, const mt_tstmt *st, mt_tcombiner *c) {
    const mt_texpr *v = st->value;
    mt_texpr acc = {0};
    acc.kind = TE_LOAD;
    acc.dtype = st->buf->dtype;
    acc.lanes = 1;
    acc.buf = st->buf;
    acc.args = st->idx;
    acc.nargs = st->nidx;
    if (v->dtype != st->buf->dtype || v->lanes != 1) return false;
    c->A = mt_tvar_new(a, "acc", v->dtype);
    c->X = mt_tvar_new(a, "e", v->dtype);
    mt_texpr *A = mt_te_var(a, c->A), *X = mt_te_var(a, c->X);
    c->sum = v->kind == TE_ADD;
    c->op = v->kind;
    if (v->kind == TE_ADD || v->kind == TE_MAX || v->kind == TE_MIN) {
        if (mt_texpr_equal(v->a, &acc)) c->e = v->b, c->tmpl = mt_te_bin(a, v->kind, A, X);
        else if (mt_texpr_equal(v->b, &acc)) c->e = v->a, c->tmpl = mt_te_bin(a, v->kind, X, A);
        else return false;
        return true;
    }
    /* T.Select(e > acc or e != e, e, acc), or without the NaN test, or with < */
    if (v->kind != TE_SELECT || !mt_texpr_equal(v->b, &acc)) return false;
    mt_texpr *e = v->a, *cond = v->cond, *cmp = cond;
    bool nan = false;
    if (cond->kind == TE_OR) {
        const mt_texpr *ne = cond->b;
        if (ne->kind != TE_NE || !mt_texpr_equal(ne->a, e) || !mt_texpr_equal(ne->b, e)) return false;
        cmp = cond->a;
        nan = true;
    }
    if ((cmp->kind != TE_GT && cmp->kind != TE_LT) || !mt_texpr_equal(cmp->a, e) ||
        !mt_texpr_equal(cmp->b, &acc))
        return false;
    c->op = cmp->kind == TE_GT ? TE_MAX : TE_MIN;
    mt_texpr *t = mt_te_bin(a, cmp->kind, X, A);
    if (nan) t = mt_te_bin(a, TE_OR, t, mt_te_bin(a, TE_NE, X, X));
    c->tmpl = mt_te_select(a, t, X, A);
    c->e = e;
    return true;
}

mt_texpr *mt_tcombiner_apply(mt_arena *a, const mt_tcombiner *c, mt_texpr *acc, mt_texpr *e) {
    mt_tvar *vars[2] = {c->A, c->X};
    mt_texpr *vals[2] = {acc, e};
    return mt_tsubst_expr(a, c->tmpl, vars, vals, 2);
}

