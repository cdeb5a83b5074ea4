/*
 * matmul_common.c -- the matcher and the code-building helpers of the
 * matmul rules (rule_matmul.c, rule_matvec.c, rule_gemv.c) and of the
 * conv rule's epilogue (rule_conv.c); matmul_internal.h lists them.
 * What is matched is described at the top of rule_matmul.c.
 */
#include <string.h>

#include "schedule/matmul_internal.h"

/* ---- small helpers ---------------------------------------------------------------- */

mt_texpr *mm_I(mm *c, int64_t v) { return mt_te_i64(c->a, v); }
mt_texpr *mm_V(mm *c, mt_tvar *v) { return mt_te_var(c->a, v); }
/* A variable bound to a vector by a let. */
mt_texpr *mm_Vl(mm *c, mt_tvar *v, int lanes) {
    mt_texpr *e = mt_te_var(c->a, v);
    e->lanes = lanes;
    return e;
}
mt_tvar *mm_ivar(mm *c, const char *name) { return mt_tvar_new(c->a, name, MT_INT64); }

/* Index arithmetic (constant folding, T.Ramp kept outermost) and flat
 * buffers are lowered.c's, through c->lw, over tir/arith.h. */

mt_texpr *mm_ceildiv(mm *c, mt_texpr *x, int64_t d) {
    return mt_arith_bin(c->a, TE_FLOORDIV, mt_lw_add(&c->lw, x, mm_I(c, d - 1)), mm_I(c, d));
}

mt_texpr *mm_fzero(mm *c, int lanes) {
    mt_texpr *z = mt_te_float(c->a, c->dt, 0.0);
    return lanes == 1 ? z : mt_te_broadcast(c->a, z, lanes);
}

void mm_push(mm *c, svec *v, mt_tstmt *s) { MT_VEC_PUSH(c->a, v, s); }
mt_tstmt *mm_seq(mm *c, svec *v) { return mt_ts_seq(c->a, v->data, v->len); }
mt_tstmt *mm_seq2(mm *c, mt_tstmt *x, mt_tstmt *y) {
    mt_tstmt *s[2] = {x, y};
    return mt_ts_seq(c->a, s, 2);
}
mt_tstmt *mm_loop(mm *c, mt_tvar *v, mt_texpr *ext, mt_for_kind k, mt_tstmt *body) {
    return mt_ts_for(c->a, v, mm_I(c, 0), ext, k, body);
}
mt_texpr *mm_lt(mm *c, mt_texpr *x, mt_texpr *y) { return mt_te_bin(c->a, TE_LT, x, y); }
mt_texpr *mm_le(mm *c, mt_texpr *x, mt_texpr *y) { return mt_te_bin(c->a, TE_LE, x, y); }
mt_texpr *mm_eq(mm *c, mt_texpr *x, mt_texpr *y) { return mt_te_bin(c->a, TE_EQ, x, y); }

mt_tbuffer *mm_local_buf(mm *c, const char *name, mt_texpr *extent, mt_dtype dt) {
    mt_tbuffer *b = mt_tbuffer_new(c->a, name, dt, 1, &extent);
    b->scope = MT_SCOPE_LOCAL;
    return b;
}

/* ---- facts about expressions ---------------------------------------------------- */

/* Every load of buf in e is at exactly [iv[0], ..., iv[n-1]]. */
typedef struct at_ctx {
    const mt_tbuffer *buf;
    mt_tvar *const *iv;
    int n;
    bool ok;
} at_ctx;

static void at_expr(mt_tvisitor *v, const mt_texpr *e) {
    at_ctx *c = v->ctx;
    if (e->kind == TE_LOAD && e->buf == c->buf) {
        if (e->nargs != c->n) c->ok = false;
        for (int d = 0; d < e->nargs && c->ok; d++)
            if (e->args[d]->kind != TE_VAR || e->args[d]->var != c->iv[d]) c->ok = false;
        return;
    }
    mt_tvisit_expr_children(v, e);
}

static bool loads_at(const mt_texpr *e, const mt_tbuffer *b, mt_tvar *const *iv, int n) {
    at_ctx c = {b, iv, n, true};
    mt_tvisitor v = {at_expr, NULL, &c};
    mt_tvisit_expr(&v, e);
    return c.ok;
}

/* Every vector load in e is a unit-stride ramp (or a broadcast). */
static void vec_expr(mt_tvisitor *v, const mt_texpr *e) {
    if (e->kind == TE_LOAD && e->lanes > 1) {
        const mt_texpr *ix = e->args[0];
        if (!(ix->kind == TE_BROADCAST || (ix->kind == TE_RAMP && mt_arith_is_const(ix->b, 1))))
            *(bool *)v->ctx = false;
    }
    mt_tvisit_expr_children(v, e);
}

bool mm_is_param(mm *c, const mt_tbuffer *b) {
    for (int i = 0; i < c->f->nparams; i++)
        if (c->f->params[i].buf == b) return true;
    return false;
}

/* ---- flattening ------------------------------------------------------------------
 * The rule emits the lowered form directly: flatten_buffers would build
 * `i * N + T.Ramp(j, 1, 16)`, which codegen scalarizes; here the ramp takes the
 * whole offset, `T.Ramp(i * N + j, 1, 16)`, one vector access. */




/* b[batch..., i, j] for a buffer of C's shape. */
static mt_texpr *at_ij(mm *c, mt_tbuffer *b, mt_texpr *i, mt_texpr *j) {
    mt_texpr *idx[MM_MAXS];
    for (int d = 0; d < c->ns - 2; d++) idx[d] = c->bv[d];
    idx[c->ns - 2] = i;
    idx[c->ns - 1] = j;
    return mt_lw_index(&c->lw, b, idx, c->ns);
}

mt_texpr *mm_load_ij(mm *c, mt_tbuffer *b, mt_texpr *i, mt_texpr *j) {
    mt_texpr *ix = at_ij(c, b, i, j);
    return mt_te_load(c->a, mt_lw_flat(&c->lw, b)->flat, &ix, 1);
}

mt_tstmt *mm_store_ij(mm *c, mt_tbuffer *b, mt_texpr *i, mt_texpr *j, mt_texpr *v) {
    mt_texpr *ix = at_ij(c, b, i, j);
    return mt_ts_store(c->a, mt_lw_flat(&c->lw, b)->flat, &ix, 1, v);
}

/* An expression of the block form (block iter vars, n-d loads) in the
 * lowered form: vars[k] := vals[k], loads of rbuf[r] (at the iter vars) :=
 * rval[r], every other load flattened. */
typedef struct lower_ctx {
    mm *c;
    mt_tvar *const *vars;
    mt_texpr *const *vals;
    int n;
    mt_tbuffer *const *rbuf;
    mt_texpr *const *rval;
    int nr;
} lower_ctx;

static mt_texpr *lower_hook(mt_tmutator *m, mt_texpr *e) {
    lower_ctx *l = m->ctx;
    if (e->kind == TE_VAR) {
        for (int i = 0; i < l->n; i++)
            if (e->var == l->vars[i]) return l->vals[i];
        return e;
    }
    if (e->kind == TE_LOAD) {
        for (int r = 0; r < l->nr; r++)
            if (e->buf == l->rbuf[r]) return l->rval[r];
        mt_texpr *idx[MM_MAXS];
        for (int d = 0; d < e->nargs; d++) idx[d] = mt_tmutate_expr(m, e->args[d]);
        return mt_lw_load(&l->c->lw, e->buf, idx, e->nargs);
    }
    return mt_tmutate_expr_children(m, e);
}

static mt_texpr *lower(mm *c, mt_texpr *e, mt_tvar *const *vars, mt_texpr *const *vals, int n,
                       mt_tbuffer *const *rbuf, mt_texpr *const *rval, int nr) {
    lower_ctx l = {c, vars, vals, n, rbuf, rval, nr};
    mt_tmutator m = {c->a, lower_hook, NULL, &l};
    return mt_tmutate_expr(&m, e);
}

mt_texpr *mm_prefetchable(mm *c, mt_texpr *e, int *line) {
    while (e->kind == TE_CAST) e = e->a;
    if (e->kind != TE_LOAD || e->lanes != 1) return NULL;
    int n = mt_tfunc_target(c->f)->cache_line_bytes / (int)mt_dtype_size(e->buf->dtype);
    *line = n > 0 ? n : 1;
    return e;
}

/* An operand at (batch, i, k) or (batch, k, j). */
mt_texpr *mm_operand(mm *c, mt_texpr *e, mt_texpr *i, mt_texpr *j, mt_texpr *k) {
    mt_tvar *vars[MM_MAXS + 1];
    mt_texpr *vals[MM_MAXS + 1];
    int n = 0;
    for (int d = 0; d < c->ns - 2; d++) vars[n] = c->sv[d], vals[n++] = c->bv[d];
    vars[n] = c->sv[c->ns - 2], vals[n++] = i ? i : mm_I(c, 0);
    vars[n] = c->sv[c->ns - 1], vals[n++] = j ? j : mm_I(c, 0);
    vars[n] = c->kv, vals[n++] = k;
    return lower(c, e, vars, vals, n, NULL, NULL, 0);
}

/* ---- matching ---------------------------------------------------------------------- */

/* A perfect nest of serial loops from 0 around one block whose iter vars are
 * bound one to one to the loop vars, each over its loop's extent. */
bool mm_parse_nest(mt_tstmt *s, mm_nest *n) {
    const mt_tstmt *loops[MM_MAXS + 2];
    n->nloops = 0;
    while (s->kind == TS_FOR) {
        int64_t lo;
        if (n->nloops == MM_MAXS + 2 || s->for_kind != MT_FOR_SERIAL || !mt_te_is_const_int(s->min, &lo) || lo != 0)
            return false;
        loops[n->nloops++] = s;
        s = s->body;
    }
    if (s->kind != TS_BLOCK || s->niters != n->nloops || !s->iter_values || s->predicate ||
        s->nallocs)
        return false;
    for (int i = 0; i < s->niters; i++) {
        const mt_texpr *v = s->iter_values[i];
        if (v->kind != TE_VAR) return false;
        int found = -1;
        for (int l = 0; l < n->nloops; l++)
            if (loops[l]->var == v->var) found = l;
        if (found < 0 || !mt_texpr_equal(loops[found]->extent, s->iters[i].extent)) return false;
        for (int j = 0; j < i; j++)
            if (s->iter_values[j]->var == v->var) return false;
    }
    n->blk = s;
    return true;
}

static bool is_fzero(const mt_texpr *e) { return e->kind == TE_FLOAT && e->fval == 0.0; }

/* idx is exactly the block's spatial iter vars, each once; fills sv. */
bool mm_spatial_index(const mt_tstmt *blk, mt_texpr *const *idx, int n, mt_tvar **sv) {
    int nsp = 0;
    for (int i = 0; i < blk->niters; i++) nsp += blk->iters[i].kind == MT_ITER_SPATIAL;
    if (n != nsp) return false;
    for (int d = 0; d < n; d++) {
        if (idx[d]->kind != TE_VAR) return false;
        bool ok = false;
        for (int i = 0; i < blk->niters; i++)
            if (blk->iters[i].var == idx[d]->var && blk->iters[i].kind == MT_ITER_SPATIAL) ok = true;
        for (int e = 0; e < d; e++)
            if (sv[e] == idx[d]->var) ok = false;
        if (!ok) return false;
        sv[d] = idx[d]->var;
    }
    return true;
}

static mt_texpr *iter_extent(const mt_tstmt *blk, const mt_tvar *v) {
    for (int i = 0; i < blk->niters; i++)
        if (blk->iters[i].var == v) return blk->iters[i].extent;
    return NULL;
}

static bool same_shape(mm *c, const mt_tbuffer *b) {
    if (b->ndim != c->ns) return false;
    for (int d = 0; d < c->ns; d++)
        if (!mt_texpr_equal(b->shape[d], c->ext[d])) return false;
    return true;
}

/* Is b written by the function (C or an epilogue's output)? */
bool mm_written(mm *c, const mt_tbuffer *b) {
    if (b == c->C) return true;
    for (int e = 0; e < c->nep; e++)
        if (c->ep[e].out == b) return true;
    return false;
}

static bool match_matmul(mm *c, const mt_tstmt *blk) {
    int nred = 0;
    for (int i = 0; i < blk->niters; i++)
        if (blk->iters[i].kind == MT_ITER_REDUCE) {
            nred++;
            c->kv = blk->iters[i].var;
            c->K = blk->iters[i].extent;
        }
    if (nred != 1 || !blk->init || blk->init->kind != TS_STORE || !blk->body ||
        blk->body->kind != TS_STORE)
        return false;
    const mt_tstmt *init = blk->init, *body = blk->body;
    c->C = init->buf;
    c->dt = c->C->dtype;
    if (c->dt != MT_FLOAT32 && c->dt != MT_FLOAT64) return false;
    c->vl = mt_target_register_lanes(mt_tfunc_target(c->f), c->dt); /* a register per vector */
    c->ns = init->nidx;
    if (c->ns < 2 || !is_fzero(init->value) || !mm_spatial_index(blk, init->idx, init->nidx, c->sv))
        return false;
    if (body->buf != c->C || body->nidx != c->ns) return false;
    for (int d = 0; d < c->ns; d++) {
        if (!mt_texpr_equal(body->idx[d], init->idx[d])) return false;
        c->ext[d] = iter_extent(blk, c->sv[d]);
    }
    const mt_texpr *v = body->value, *acc, *prod;
    if (v->kind != TE_ADD || v->dtype != c->dt || v->lanes != 1) return false;
    if (v->a->kind == TE_LOAD && v->a->buf == c->C) acc = v->a, prod = v->b;
    else if (v->b->kind == TE_LOAD && v->b->buf == c->C) acc = v->b, prod = v->a;
    else return false;
    if (!loads_at(acc, c->C, c->sv, c->ns) || prod->kind != TE_MUL) return false;
    mt_tvar *i = c->sv[c->ns - 2], *j = c->sv[c->ns - 1];
    c->X = prod->a, c->Y = prod->b;
    if (mt_texpr_uses_var(c->X, j) || mt_texpr_uses_var(c->Y, i)) {
        mt_texpr *t = c->X;
        c->X = c->Y, c->Y = t;
    }
    if (mt_texpr_uses_var(c->X, j) || mt_texpr_uses_var(c->Y, i) || mt_texpr_reads(prod, c->C)) return false;
    return same_shape(c, c->C);
}

bool mm_match_epilogue(mm *c, const mt_tstmt *blk) {
    if (blk->niters != c->ns || blk->init || !blk->body || blk->body->kind != TS_STORE ||
        c->nep == MM_MAXE)
        return false;
    epi *e = &c->ep[c->nep];
    const mt_tstmt *st = blk->body;
    if (st->nidx != c->ns) return false;
    for (int d = 0; d < c->ns; d++) {
        if (blk->iters[d].kind != MT_ITER_SPATIAL || !mt_texpr_equal(blk->iters[d].extent, c->ext[d]) ||
            st->idx[d]->kind != TE_VAR || st->idx[d]->var != blk->iters[d].var)
            return false;
        e->iv[d] = blk->iters[d].var;
    }
    e->out = st->buf;
    e->value = st->value;
    if (mm_written(c, e->out) || !same_shape(c, e->out) || e->value->lanes != 1) return false;
    if (mt_texpr_reads(c->X, e->out) || mt_texpr_reads(c->Y, e->out)) return false;
    if (!loads_at(e->value, c->C, e->iv, c->ns) || mt_texpr_reads(e->value, e->out)) return false;
    for (int p = 0; p < c->nep; p++)
        if (!loads_at(e->value, c->ep[p].out, e->iv, c->ns)) return false;
    c->nep++;
    return true;
}

/* if ...: C[...] = 0 (legalize's fill for a symbolic K; the rule writes all
 * of C whatever K is, zeros included). */
static bool match_guard(mm *c, const mt_tstmt *s) {
    mm_nest n;
    if (s->kind != TS_IF || s->else_s || !mm_parse_nest(s->then_s, &n)) return false;
    const mt_tstmt *b = n.blk->body;
    return !n.blk->init && b && b->kind == TS_STORE && b->buf == c->C && is_fzero(b->value);
}

bool mm_match(mm *c) {
    mt_tfunc *f = c->f;
    if (!f->body) return false;
    mt_tstmt *const *st = f->body->kind == TS_SEQ ? f->body->stmts : &f->body;
    int n = f->body->kind == TS_SEQ ? f->body->nstmts : 1, p = 0;
    const mt_tstmt *guard = NULL;
    if (p < n && st[p]->kind == TS_IF) guard = st[p++];
    mm_nest ns;
    if (p == n || !mm_parse_nest(st[p++], &ns) || !match_matmul(c, ns.blk)) return false;
    if (guard && !match_guard(c, guard)) return false;
    for (; p < n; p++)
        if (!mm_parse_nest(st[p], &ns) || !mm_match_epilogue(c, ns.blk)) return false;
    for (int i = 0; i < f->nallocs; i++)
        if (!mm_written(c, f->allocs[i])) return false;
    return true;
}

/* The final values of elements (i, j) whose matmul value is mval: C when it
 * is a parameter, then each epilogue in order, each bound by a let so that
 * later ones read it. */
mt_tstmt *mm_final_stores(mm *c, mt_texpr *i, mt_texpr *j, mt_texpr *mval) {
    mt_arena *a = c->a;
    mt_tvar *mv = mt_tvar_new(a, "m", c->dt);
    mt_tbuffer *rbuf[MM_MAXE + 1];
    mt_texpr *rval[MM_MAXE + 1], *val[MM_MAXE], *vals[MM_MAXS];
    rbuf[0] = c->C;
    rval[0] = mm_Vl(c, mv, mval->lanes);
    for (int d = 0; d < c->ns - 2; d++) vals[d] = c->bv[d];
    vals[c->ns - 2] = i;
    vals[c->ns - 1] = j;
    for (int e = 0; e < c->nep; e++) {
        val[e] = lower(c, c->ep[e].value, c->ep[e].iv, vals, c->ns, rbuf, rval, e + 1);
        rbuf[e + 1] = c->ep[e].out;
        rval[e + 1] = mm_Vl(c, mt_tvar_new(a, "e", val[e]->dtype), val[e]->lanes);
    }
    mt_tstmt *rest = mt_ts_seq(a, NULL, 0);
    for (int e = c->nep - 1; e >= 0; e--) {
        if (mm_is_param(c, c->ep[e].out)) rest = mm_seq2(c, mm_store_ij(c, c->ep[e].out, i, j, rval[e + 1]), rest);
        rest = mt_ts_let(a, rval[e + 1]->var, val[e], rest);
    }
    if (mm_is_param(c, c->C)) rest = mm_seq2(c, mm_store_ij(c, c->C, i, j, rval[0]), rest);
    return mt_ts_let(a, mv, mval, rest);
}

/* gen for the innermost two dims, inside serial loops over the batch dims
 * (c->bv are their indices). */
mt_tstmt *mm_wrap_batch(mm *c, mt_tstmt *(*gen)(mm *)) {
    mt_tvar *bvar[MM_MAXS];
    for (int d = 0; d < c->ns - 2; d++) {
        bvar[d] = mm_ivar(c, "bi");
        c->bv[d] = mm_V(c, bvar[d]);
    }
    mt_tstmt *s = gen(c);
    for (int d = c->ns - 3; d >= 0; d--) s = mm_loop(c, bvar[d], c->ext[d], MT_FOR_SERIAL, s);
    return s;
}

/* Every vector load in e is a unit-stride ramp (or a broadcast). */
bool mm_vec_loads(const mt_texpr *e) {
    bool ok = true;
    mt_tvisitor v = {vec_expr, NULL, &ok};
    mt_tvisit_expr(&v, e);
    return ok;
}

mm_colset mm_cols(int width, int vl) {
    mm_colset s;
    memset(&s, 0, sizeof s);
    s.width = width;
    for (int o = 0; o < width && s.nv < MM_MAXV; o += vl) {
        s.off[s.nv] = o;
        s.lanes[s.nv] = width - o < vl ? width - o : vl;
        s.nv++;
    }
    return s;
}

/* Does the operand (X: at (i, k); Y: at (k, j)) read memory contiguously
 * along k (along_k) or along its other index? It is lowered at a 4-wide
 * ramp of that index: every load a unit-stride ramp or a broadcast. */
bool mm_operand_contiguous(mm *c, bool y, bool along_k) {
    for (int d = 0; d < c->ns - 2; d++) c->bv[d] = mm_V(c, mm_ivar(c, "b"));
    mt_texpr *x = mm_V(c, mm_ivar(c, "x")), *k = mm_V(c, mm_ivar(c, "k"));
    if (along_k) k = mt_lw_ramp(&c->lw, k, 4);
    else x = mt_lw_ramp(&c->lw, x, 4);
    mt_texpr *e = y ? mm_operand(c, c->Y, NULL, x, k) : mm_operand(c, c->X, x, NULL, k);
    return mm_vec_loads(e);
}

/* ---- the GPU rules' shared parts ------------------------------------------------ */

mt_texpr *mm_i64(mm *c, mt_texpr *e) { return e->dtype == MT_INT64 ? e : mt_te_cast(c->a, MT_INT64, e); }

void mm_batch_vars(mm *c) {
    for (int d = 0; d < c->ns - 2; d++) c->bv[d] = mm_V(c, mm_ivar(c, "bi"));
}

mt_tstmt *mm_grid(mm *c, mt_tvar *const *tile, mt_texpr *const *count, int n, mt_tstmt *body) {
    mt_tvar *vars[MM_MAXS + 4];
    mt_texpr *ext[MM_MAXS + 4];
    int m = 0;
    for (int i = 0; i < n; i++) vars[m] = tile[i], ext[m++] = count[i];
    for (int d = c->ns - 3; d >= 0; d--) vars[m] = c->bv[d]->var, ext[m++] = mm_i64(c, c->ext[d]);
    mt_tvar *b = mm_ivar(c, "blk");
    mt_texpr *inner = mm_I(c, 1);
    for (int i = 0; i < m; i++) {
        mt_texpr *q = mt_arith_bin(c->a, TE_FLOORDIV, mm_V(c, b), inner);
        body = mt_ts_let(c->a, vars[i], i == m - 1 ? q : mt_arith_bin(c->a, TE_FLOORMOD, q, ext[i]), body);
        inner = mt_arith_bin(c->a, TE_MUL, inner, ext[i]);
    }
    mt_tstmt *l = mt_ts_for(c->a, b, mm_I(c, 0), inner, MT_FOR_THREAD, body);
    l->thread_tag = "blockIdx.x";
    return l;
}

mt_tfunc *mm_scheduled(mm *c, mt_tstmt *body, const char *schedule) {
    const mt_tfunc *f = c->f;
    mt_tparam *params = MT_NEW_ARRAY(c->a, mt_tparam, f->nparams > 0 ? f->nparams : 1);
    for (int i = 0; i < f->nparams; i++) {
        params[i] = f->params[i];
        if (params[i].buf) params[i].buf = mt_lw_flat(&c->lw, params[i].buf)->flat;
    }
    mt_tfunc *h = MT_NEW(c->a, mt_tfunc);
    *h = *f;
    h->params = params;
    h->allocs = NULL;
    h->nallocs = 0;
    h->body = body;
    mt_tstmt_fill_loc(h->body, f->loc); /* all of it is new */
    if (schedule) mt_tfunc_set_attr(c->a, h, "schedule", schedule);
    return h;
}
