/*
 * rule_reduce_match.c -- recognizing the row-wise stages of rule_reduce.c.
 *
 * The function body is an optional guard (`if N == 0: B[o..] = I`) and a
 * sequence of perfect loop nests, one block each. The first block with a
 * reduce iter var fixes the outer axes O (its spatial iter vars, in order)
 * and the row length N (its reduce extent); every block must then be over
 * O, optionally followed by one inner iter var: reduce over N (RED),
 * spatial over N (ELT), or spatial of extent 1 writing a per-row value
 * (ROW, the keepdims form of mean's division). Then every load is checked
 * (reads_ok): a per-row value only at [o..] of the same row and after a
 * stage wrote it, a row written by an ELT only at [o.., r] after that
 * stage, anything else only if nothing in the function writes it. Finally
 * the softmax shape (fuse_exp) is recognized.
 */
#include <string.h>

#include "schedule/rule_reduce.h"
#include "tir/combiner.h"

static bool is_param(rr *c, const mt_tbuffer *b) {
    for (int i = 0; i < c->f->nparams; i++)
        if (c->f->params[i].buf == b) return true;
    return false;
}

static bool is_row(rr *c, const mt_tbuffer *b) {
    for (int i = 0; i < c->nrows; i++)
        if (c->rows[i] == b) return true;
    return false;
}

static bool is_var(const mt_texpr *e, const mt_tvar *v) { return e->kind == TE_VAR && e->var == v; }

/* A perfect nest of serial loops from 0 around one block whose iter vars are
 * bound one to one to the loop vars, each over its loop's extent. */
static const mt_tstmt *parse_nest(const mt_tstmt *s) {
    const mt_tstmt *loops[MT_MAX_RANK + 2];
    int nl = 0;
    while (s->kind == TS_FOR) {
        int64_t lo;
        if (nl == MT_MAX_RANK + 2 || s->for_kind != MT_FOR_SERIAL || !mt_te_is_const_int(s->min, &lo) || lo != 0)
            return NULL;
        loops[nl++] = s;
        s = s->body;
    }
    if (s->kind != TS_BLOCK || s->niters != nl || !s->iter_values || s->predicate || s->nallocs || !s->body ||
        s->body->kind != TS_STORE)
        return NULL;
    for (int i = 0; i < s->niters; i++) {
        const mt_texpr *v = s->iter_values[i];
        if (v->kind != TE_VAR) return NULL;
        int found = -1;
        for (int l = 0; l < nl; l++)
            if (loops[l]->var == v->var) found = l;
        if (found < 0 || !mt_texpr_equal(loops[found]->extent, s->iters[i].extent)) return NULL;
        for (int j = 0; j < i; j++)
            if (s->iter_values[j]->var == v->var) return NULL;
    }
    return s;
}

/* buf[idx] is the per-row element of stage s's row: [o..] or [o.., 0]
 * (keepdims; also [o.., r] in a ROW stage, whose r is always 0). */
static bool rowidx_ok(rr *c, const stage *s, const mt_tbuffer *b, mt_texpr *const *idx, int n) {
    if (b->ndim != n || (n != c->ns && n != c->ns + 1)) return false;
    for (int k = 0; k < c->ns; k++)
        if (!is_var(idx[k], s->ov[k]) || !mt_texpr_equal(b->shape[k], c->O[k])) return false;
    if (n == c->ns) return true;
    int64_t v;
    if (!mt_te_is_const_int(b->shape[c->ns], &v) || v != 1) return false;
    return (mt_te_is_const_int(idx[c->ns], &v) && v == 0) || (s->kind == ST_ROW && s->rv && is_var(idx[c->ns], s->rv));
}

static bool row_shape(rr *c, const mt_tbuffer *b) {
    if (b->ndim != c->ns + 1 || !mt_texpr_equal(b->shape[c->ns], c->N)) return false;
    for (int k = 0; k < c->ns; k++)
        if (!mt_texpr_equal(b->shape[k], c->O[k])) return false;
    return true;
}

static bool add_rowval(rr *c, mt_tbuffer *b) {
    if (find_rv(c, b)) return true;
    if (c->nrv == RR_MAXB || is_row(c, b) || (b->dtype != MT_FLOAT32 && b->dtype != MT_FLOAT64)) return false;
    c->rv[c->nrv].buf = b;
    c->rv[c->nrv].param = is_param(c, b);
    c->nrv++;
    return true;
}

/* F(acc, E) of a RED body (tir/combiner.h; s->buf is the body's buffer):
 * fills s->value (E), fk, tmpl. */
static bool red_template(rr *c, stage *s, const mt_tstmt *body) {
    mt_tcombiner cb;
    if (body->buf != s->buf || !mt_tcombiner_match(c->a, body, &cb)) return false;
    s->fk = cb.op == TE_ADD ? F_ADD : cb.op == TE_MAX ? F_MAX : F_MIN;
    s->value = cb.e;
    s->tmpl = cb.tmpl;
    s->accv = cb.A;
    s->ev = cb.X;
    return true;
}

static bool classify(rr *c, stage *s, const mt_tstmt *blk) {
    const mt_tstmt *body = blk->body;
    memset(s, 0, sizeof *s);
    if (blk->niters != c->ns && blk->niters != c->ns + 1) return false;
    for (int k = 0; k < c->ns; k++) {
        if (blk->iters[k].kind != MT_ITER_SPATIAL || !mt_texpr_equal(blk->iters[k].extent, c->O[k])) return false;
        s->ov[k] = blk->iters[k].var;
    }
    s->buf = body->buf;
    int64_t one;
    if (blk->niters == c->ns) {
        s->kind = ST_ROW;
    } else {
        const mt_titer *it = &blk->iters[c->ns];
        s->rv = it->var;
        if (it->kind == MT_ITER_REDUCE) {
            if (!mt_texpr_equal(it->extent, c->N)) return false;
            s->kind = ST_RED;
        } else if (!find_rv(c, s->buf) && row_shape(c, s->buf) && mt_texpr_equal(it->extent, c->N)) {
            s->kind = ST_ELT;
        } else if (mt_te_is_const_int(it->extent, &one) && one == 1) {
            s->kind = ST_ROW;
            s->rval = mt_te_i64(c->a, 0);
        } else {
            return false;
        }
    }
    if (s->kind == ST_ELT) {
        if (blk->init || !is_param(c, s->buf) || is_row(c, s->buf) || c->nrows == RR_MAXB ||
            body->nidx != c->ns + 1 || !is_var(body->idx[c->ns], s->rv) || body->value->lanes != 1)
            return false;
        for (int k = 0; k < c->ns; k++)
            if (!is_var(body->idx[k], s->ov[k])) return false;
        s->value = body->value;
        c->rows[c->nrows++] = s->buf;
        return true;
    }
    if (!rowidx_ok(c, s, s->buf, body->idx, body->nidx) || !add_rowval(c, s->buf)) return false;
    if (s->kind == ST_ROW) {
        s->value = body->value;
        return !blk->init && body->value->dtype == s->buf->dtype && body->value->lanes == 1;
    }
    const mt_tstmt *in = blk->init;
    if (!in || in->kind != TS_STORE || in->buf != s->buf || in->nidx != body->nidx) return false;
    for (int d = 0; d < in->nidx; d++)
        if (!mt_texpr_equal(in->idx[d], body->idx[d])) return false;
    s->init = in->value;
    return red_template(c, s, body);
}

/* ---- reads ------------------------------------------------------------------------ */

typedef struct rd_ctx {
    rr *c;
    int at;          /* the stage whose expression this is */
    bool ok;
    bool no_r;       /* the expression may not use r (a RED's init) */
} rd_ctx;

/* The last stage before `before` that writes b, or -1. */
static int writer(rr *c, const mt_tbuffer *b, int before) {
    for (int i = before - 1; i >= 0; i--)
        if (c->st[i].buf == b) return i;
    return -1;
}

static void rd_expr(mt_tvisitor *v, const mt_texpr *e) {
    rd_ctx *r = v->ctx;
    rr *c = r->c;
    const stage *s = &c->st[r->at];
    if (e->kind == TE_VAR && s->rv && e->var == s->rv && r->no_r) r->ok = false;
    if (e->kind == TE_LOAD) {
        if (find_rv(c, e->buf)) {
            if (!rowidx_ok(c, s, e->buf, e->args, e->nargs) || writer(c, e->buf, r->at) < 0) r->ok = false;
            return;
        }
        if (is_row(c, e->buf)) {
            if (!s->rv || s->kind == ST_ROW || writer(c, e->buf, r->at) < 0 || e->nargs != c->ns + 1 ||
                !is_var(e->args[c->ns], s->rv))
                r->ok = false;
            for (int k = 0; k < c->ns && r->ok; k++)
                if (!is_var(e->args[k], s->ov[k])) r->ok = false;
            return;
        }
        if (!is_param(c, e->buf)) r->ok = false; /* an allocation nothing here writes */
    }
    mt_tvisit_expr_children(v, e);
}

static bool reads_ok(rr *c, int at, const mt_texpr *e, bool no_r) {
    rd_ctx r = {c, at, true, no_r};
    mt_tvisitor v = {rd_expr, NULL, &r};
    mt_tvisit_expr(&v, e);
    return r.ok;
}

static bool stage_reads(const stage *s, const mt_tbuffer *b) {
    return mt_texpr_reads(s->value, b) || mt_texpr_reads(s->init, b);
}

/* ---- softmax: exp once ---------------------------------------------------------------- */

static mt_texpr *canon(rr *c, const stage *s, mt_texpr *e, mt_tvar *const *cv) {
    mt_tvar *vars[MT_MAX_RANK + 1];
    mt_texpr *vals[MT_MAX_RANK + 1];
    int n = 0;
    for (int k = 0; k < c->ns; k++) vars[n] = s->ov[k], vals[n++] = mt_te_var(c->a, cv[k]);
    if (s->rv) vars[n] = s->rv, vals[n++] = mt_te_var(c->a, cv[c->ns]);
    return mt_tsubst_expr(c->a, e, vars, vals, n);
}

/* ELT k: Y = A / B or A * B, B the sum of A computed by an earlier RED j,
 * and nothing A reads changes in between: j also stores A to Y and k
 * becomes Y = Y * (1 / B) (the reciprocal once per row; a multiply per
 * element instead of a division, at most one more rounding). */
static void fuse_exp(rr *c, int k) {
    stage *y = &c->st[k];
    mt_texpr *v = y->value;
    if ((v->kind != TE_DIV && v->kind != TE_MUL) || v->b->kind != TE_LOAD || !find_rv(c, v->b->buf)) return;
    int j = writer(c, v->b->buf, k);
    if (j < 0 || c->st[j].kind != ST_RED || c->st[j].fk != F_ADD || c->st[j].also ||
        c->st[j].buf->dtype != y->buf->dtype || v->a->dtype != y->buf->dtype)
        return;
    mt_tvar *cv[MT_MAX_RANK + 1];
    for (int d = 0; d <= c->ns; d++) cv[d] = mt_tvar_new(c->a, "c", MT_INT64);
    if (!mt_texpr_equal(canon(c, y, v->a, cv), canon(c, &c->st[j], c->st[j].value, cv))) return;
    for (int i = j; i < k; i++)
        if (mt_texpr_reads(v->a, c->st[i].buf)) return;
    for (int i = j + 1; i < k; i++) /* later stages read Y's final values */
        if (stage_reads(&c->st[i], y->buf)) return;
    c->st[j].also = y->buf;
    mt_texpr *idx[MT_MAX_RANK + 1];
    for (int d = 0; d < c->ns; d++) idx[d] = mt_te_var(c->a, y->ov[d]);
    idx[c->ns] = mt_te_var(c->a, y->rv);
    mt_texpr *sc = v->b;
    if (v->kind == TE_DIV) sc = mt_te_bin(c->a, TE_DIV, mt_te_float(c->a, v->b->dtype, 1.0), v->b);
    y->value = mt_te_bin(c->a, TE_MUL, mt_te_load(c->a, y->buf, idx, c->ns + 1), sc);
}

/* ---- per-row math of the ELT stages ------------------------------------------------------- */

typedef struct rowonly {
    rr *c;
    bool ok, call; /* only per-row values and constants; a transcendental among them */
} rowonly;

static void rowonly_expr(mt_tvisitor *v, const mt_texpr *e) {
    rowonly *r = v->ctx;
    if (!r->ok) return;
    switch (e->kind) {
    case TE_LOAD: r->ok = find_rv(r->c, e->buf) != NULL; return; /* (its indices are the row's) */
    case TE_VAR: case TE_RAMP: case TE_BROADCAST: case TE_SHUFFLE: r->ok = false; return;
    case TE_CALL:
        if (mt_intrin_is_expanded(e->intrin)) r->call = true;
        else if (e->intrin >= IN_MATH_COUNT_)
            r->ok = false;
        break;
    default: break;
    }
    mt_tvisit_expr_children(v, e);
}

/* e reads only per-row values and constants (then *call: it computes a
 * transcendental of them). */
bool mt_rr_row_only(rr *c, const mt_texpr *e, bool *call) {
    rowonly r = {c, true, false};
    mt_tvisitor v = {rowonly_expr, NULL, &r};
    mt_tvisit_expr(&v, e);
    if (call) *call = r.call;
    return r.ok;
}

typedef struct hoist {
    rr *c;
    int k; /* the ELT stage */
} hoist;

static mt_texpr *hoist_hook(mt_tmutator *m, mt_texpr *e) {
    hoist *h = m->ctx;
    rr *c = h->c;
    bool call;
    if (e->lanes == 1 && (e->dtype == MT_FLOAT32 || e->dtype == MT_FLOAT64) && mt_rr_row_only(c, e, &call) && call &&
        c->nst < RR_MAXST && c->nrv < RR_MAXB) {
        mt_tvar *ov[MT_MAX_RANK];
        memcpy(ov, c->st[h->k].ov, sizeof ov); /* the ELT's, before it moves */
        mt_texpr *shape[MT_MAX_RANK];
        for (int d = 0; d < c->ns; d++) shape[d] = c->O[d];
        mt_tbuffer *b = mt_tbuffer_new(c->a, "row", e->dtype, c->ns, shape);
        c->rv[c->nrv++] = (rowval){b, NULL, false};
        memmove(&c->st[h->k + 1], &c->st[h->k], sizeof c->st[0] * (size_t)(c->nst - h->k));
        c->nst++;
        stage *s = &c->st[h->k];
        memset(s, 0, sizeof *s);
        s->kind = ST_ROW;
        memcpy(s->ov, ov, sizeof s->ov);
        s->buf = b;
        s->value = e;
        h->k++;
        mt_texpr *idx[MT_MAX_RANK];
        for (int d = 0; d < c->ns; d++) idx[d] = mt_te_var(c->a, s->ov[d]);
        return mt_te_load(c->a, b, idx, c->ns);
    }
    return mt_tmutate_expr_children(m, e);
}

/* ELT k's largest subexpressions of per-row values and constants that
 * compute a transcendental (log_softmax's log of the row's sum) become ROW
 * stages of their own in front of it: once per row either way, and in
 * blocks of rows one vector for the block (rule_reduce.c). Returns the
 * ELT's index after the stages put in front. */
static int hoist_row_math(rr *c, int k) {
    hoist h = {c, k};
    mt_tmutator m = {c->a, hoist_hook, NULL, &h};
    mt_texpr *v = mt_tmutate_expr(&m, c->st[k].value);
    c->st[h.k].value = v;
    return h.k;
}

/* ---- the function ------------------------------------------------------------------------ */

/* if ...: B[o..] = I with B reduced later from the same I (legalize's fill
 * of an empty reduction; the rule writes I then anyway). */
static bool guard_ok(rr *c, const mt_tstmt *g) {
    const mt_tstmt *blk;
    if (g->kind != TS_IF || g->else_s || !(blk = parse_nest(g->then_s)) || blk->init ||
        (blk->niters != c->ns && blk->niters != c->ns + 1))
        return false;
    stage s;
    memset(&s, 0, sizeof s);
    s.kind = ST_ROW;
    int64_t one;
    if (blk->niters == c->ns + 1) { /* keepdims: (O.., 1) */
        if (!mt_te_is_const_int(blk->iters[c->ns].extent, &one) || one != 1) return false;
        s.rv = blk->iters[c->ns].var;
    }
    for (int k = 0; k < c->ns; k++) {
        if (!mt_texpr_equal(blk->iters[k].extent, c->O[k])) return false;
        s.ov[k] = blk->iters[k].var;
    }
    const mt_tstmt *b = blk->body;
    if (!rowidx_ok(c, &s, b->buf, b->idx, b->nidx)) return false;
    for (int i = 0; i < c->nst; i++)
        if (c->st[i].buf == b->buf) return c->st[i].kind == ST_RED && mt_texpr_equal(c->st[i].init, b->value);
    return false;
}

bool mt_reduce_match(rr *c) {
    mt_tfunc *f = c->f;
    if (!f->body) return false;
    mt_tstmt *const *sts = f->body->kind == TS_SEQ ? f->body->stmts : &f->body;
    int n = f->body->kind == TS_SEQ ? f->body->nstmts : 1, p = 0;
    const mt_tstmt *guard = NULL;
    if (p < n && sts[p]->kind == TS_IF) guard = sts[p++];
    if (n - p > RR_MAXST) return false;
    const mt_tstmt *blks[RR_MAXST];
    int nb = 0;
    for (; p < n; p++)
        if (!(blks[nb++] = parse_nest(sts[p]))) return false;
    /* the first reduction fixes O and N */
    for (int i = 0; i < nb && !c->N; i++) {
        const mt_tstmt *b = blks[i];
        if (b->niters == 0 || b->niters > MT_MAX_RANK || b->iters[b->niters - 1].kind != MT_ITER_REDUCE) continue;
        c->ns = b->niters - 1;
        for (int k = 0; k < c->ns; k++) c->O[k] = b->iters[k].extent;
        c->N = b->iters[c->ns].extent;
    }
    if (!c->N) return false;
    for (int i = 0; i < nb; i++) {
        if (!classify(c, &c->st[i], blks[i])) return false;
        c->nst++;
    }
    if (guard && !guard_ok(c, guard)) return false;
    for (int i = 0; i < f->nallocs; i++)
        if (!find_rv(c, f->allocs[i])) return false;
    for (int i = 0; i < c->nst; i++) {
        const stage *s = &c->st[i];
        if (!reads_ok(c, i, s->value, false) || (s->init && !reads_ok(c, i, s->init, true))) return false;
        if (s->kind == ST_RED && mt_texpr_reads(s->value, s->buf)) return false;
    }
    for (int i = 0; i < c->nst; i++)
        if (c->st[i].kind == ST_ELT) fuse_exp(c, i);
    for (int i = 0; i < c->nst; i++)
        if (c->st[i].kind == ST_ELT) i = hoist_row_math(c, i);
    return true;
}

/* ---- lowering expressions ---------------------------------------------------------- */

typedef struct low_ctx {
    rr *c;
    const stage *s;
    mt_texpr *r; /* the inner index: a scalar or a T.Ramp */
} low_ctx;

static mt_texpr *low_hook(mt_tmutator *m, mt_texpr *e) {
    low_ctx *l = m->ctx;
    rr *c = l->c;
    if (e->kind == TE_VAR) {
        for (int k = 0; k < c->ns; k++)
            if (e->var == l->s->ov[k]) return c->oval[k];
        if (l->s->rv && e->var == l->s->rv) return l->s->kind == ST_ROW ? l->s->rval : l->r;
        return e;
    }
    if (e->kind == TE_LOAD) {
        rowval *v = find_rv(c, e->buf);
        if (v) return mt_te_load(c->a, v->local, (mt_texpr *[]){c->rv_ix ? c->rv_ix : mt_te_i64(c->a, 0)}, 1);
        mt_texpr *idx[MT_MAX_RANK];
        for (int d = 0; d < e->nargs; d++) idx[d] = mt_tmutate_expr(m, e->args[d]);
        return mt_lw_load(&c->lw, e->buf, idx, e->nargs);
    }
    return mt_tmutate_expr_children(m, e);
}

mt_texpr *mt_rr_lower(rr *c, const stage *s, mt_texpr *e, mt_texpr *r) {
    low_ctx l = {c, s, r};
    mt_tmutator m = {c->a, low_hook, NULL, &l};
    return mt_tmutate_expr(&m, e);
}

/* F(x, y) of a RED stage. */
mt_texpr *mt_rr_fapply(rr *c, const stage *s, mt_texpr *x, mt_texpr *y) {
    mt_tvar *vars[2] = {s->accv, s->ev};
    mt_texpr *vals[2] = {x, y};
    return mt_tsubst_expr(c->a, s->tmpl, vars, vals, 2);
}

/* buf[o.., r] for an ELT output (r a scalar or a T.Ramp). */
mt_texpr *mt_rr_row_ix(rr *c, mt_tbuffer *b, mt_texpr *r) {
    mt_texpr *idx[MT_MAX_RANK + 1];
    for (int k = 0; k < c->ns; k++) idx[k] = c->oval[k];
    idx[c->ns] = r;
    return mt_lw_index(&c->lw, b, idx, c->ns + 1);
}

mt_tfunc *mt_rr_function(rr *c, mt_tstmt *body, const char *schedule) {
    const mt_tfunc *f = c->f;
    mt_tparam *params = MT_NEW_ARRAY(c->a, mt_tparam, f->nparams > 0 ? f->nparams : 1);
    for (int i = 0; i < f->nparams; i++) {
        params[i] = f->params[i];
        if (params[i].buf) params[i].buf = mt_lw_flat(&c->lw, params[i].buf)->flat;
    }
    mt_tfunc *g = MT_NEW(c->a, mt_tfunc);
    *g = *f;
    g->params = params;
    g->allocs = NULL;
    g->nallocs = 0;
    g->body = body;
    g->trace = NULL; /* written directly, not by primitives (a loop order put
                      * right first, rule_reduce_inner.c, is part of the rule) */
    mt_tstmt_fill_loc(g->body, f->loc); /* all of it is new */
    g->attrs = MT_NEW_ARRAY(c->a, mt_tattr, f->nattrs + 1);
    if (f->nattrs) memcpy(g->attrs, f->attrs, sizeof *g->attrs * (size_t)f->nattrs);
    g->attrs[f->nattrs] = (mt_tattr){"schedule", schedule};
    g->nattrs = f->nattrs + 1;
    return g;
}
