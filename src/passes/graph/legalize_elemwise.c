/*
 * legalize_elemwise.c -- the loop function of an elementwise/broadcast op,
 * and the helpers every legalizer shares.
 *
 * For out = op(x, y) with out of rank r, the loop function is one loop nest
 * over out's dims with one spatial block:
 *
 *     for i0, i1 in T.grid(2, 3):
 *         with T.block("add"):
 *             v0, v1 = T.axis.remap("SS", [i0, i1])
 *             out[v0, v1] = x[v0, v1] + y[v1]
 *
 * Broadcasting is in the indices: operands are aligned at their last dim; an
 * operand dim of constant size 1 against a larger output dim is indexed 0;
 * missing leading dims are dropped. Symbolic dims become int64 variables of
 * the function (its sym_vars), one per name.
 *
 * The scalar expression of each op is its compute function (below), named in
 * the registry table graph/ops.def.
 */
#include <string.h>

#include "passes/graph/graph_passes.h"
#include "support/common.h"

/* ---- compute functions ---------------------------------------------------- */

#define COMPUTE(name) \
    mt_texpr *name(mt_arena *a, mt_texpr *const *x, const mt_gattrs *attrs, mt_dtype dt)

COMPUTE(compute_add) { return mt_te_bin(a, TE_ADD, x[0], x[1]); }
COMPUTE(compute_subtract) { return mt_te_bin(a, TE_SUB, x[0], x[1]); }
COMPUTE(compute_multiply) { return mt_te_bin(a, TE_MUL, x[0], x[1]); }
/* true division: integers divide as out_dtype (float32) */
COMPUTE(compute_divide) { return mt_te_bin(a, TE_DIV, mt_te_cast(a, dt, x[0]), mt_te_cast(a, dt, x[1])); }
COMPUTE(compute_negative) { return mt_te_unary(a, TE_NEG, x[0]); }

static mt_texpr *call1(mt_arena *a, mt_intrin fn, mt_texpr *x) { return mt_te_call(a, fn, &x, 1); }

COMPUTE(compute_exp) { return call1(a, IN_EXP, x[0]); }
COMPUTE(compute_sigmoid) { return call1(a, IN_SIGMOID, x[0]); }
COMPUTE(compute_tanh) { return call1(a, IN_TANH, x[0]); }
COMPUTE(compute_sqrt) { return call1(a, IN_SQRT, x[0]); }

COMPUTE(compute_relu) {
    mt_texpr *zero = mt_dtype_is_float(dt) ? mt_te_float(a, dt, 0.0) : mt_te_int(a, dt, 0);
    return mt_te_bin(a, TE_MAX, x[0], zero);
}

/* ---- shared helpers --------------------------------------------------------- */

mt_texpr *mt_legalize_dim(mt_legalize_ctx *c, mt_dim d) {
    mt_arena *a = c->arena;
    if (!d.sym) return mt_te_i64(a, d.value);
    for (int i = 0; i < c->nsym; i++)
        if (strcmp(c->sym_names[i], d.sym) == 0) return mt_te_var(a, c->syms[i]);
    if (c->nsym == MT_ARRAY_LEN(c->syms)) mt_ice("too many symbolic dims");
    mt_tvar *v = mt_tvar_new(a, d.sym, MT_INT64);
    c->sym_names[c->nsym] = d.sym;
    c->syms[c->nsym++] = v;
    mt_tfunc *f = c->f;
    mt_tvar **nv = MT_NEW_ARRAY(a, mt_tvar *, f->nsym + 1);
    if (f->nsym) memcpy(nv, f->sym_vars, sizeof(mt_tvar *) * (size_t)f->nsym);
    nv[f->nsym++] = v;
    f->sym_vars = nv;
    return mt_te_var(a, v);
}

static mt_tbuffer *param_buffer(mt_legalize_ctx *c, const mt_gvar *v) {
    mt_texpr *shape[MT_MAX_RANK];
    for (int i = 0; i < v->type.ndim; i++) shape[i] = mt_legalize_dim(c, v->type.dims[i]);
    mt_tbuffer *buf = mt_tbuffer_new(c->arena, v->name, v->type.dtype, v->type.ndim, shape);
    mt_tfunc_add_param(c->arena, c->f, buf, NULL);
    return buf;
}

void mt_legalize_begin(mt_legalize_ctx *c, mt_arena *a, const mt_gbinding *b) {
    memset(c, 0, sizeof *c);
    c->arena = a;
    c->f = mt_tfunc_new(a, b->op->name);
    if (b->nargs > MT_ARRAY_LEN(c->in) || b->nouts > MT_ARRAY_LEN(c->out))
        mt_fail(MT_ERR_LIMIT, b->loc, "too many arguments to '%s'", b->op->name);
    for (int k = 0; k < b->nargs; k++)
        if (!b->args[k]->is_const) c->in[k] = param_buffer(c, b->args[k]);
    for (int k = 0; k < b->nouts; k++) c->out[k] = param_buffer(c, b->outs[k]);
    c->f->num_outputs = b->nouts;
    mt_tfunc_set_attr(a, c->f, "op_pattern", mt_pattern_str(b->op->pattern));
}

mt_texpr *mt_legalize_const(mt_arena *a, const mt_gvar *v) {
    if (mt_dtype_is_float(v->type.dtype)) return mt_te_float(a, v->type.dtype, v->fconst);
    return mt_te_int(a, v->type.dtype, v->iconst);
}

mt_tregion mt_point_region(mt_arena *a, mt_tbuffer *buf, mt_texpr *const *idx) {
    mt_tregion r;
    r.buf = buf;
    int n = buf->ndim > 0 ? buf->ndim : 1;
    r.min = MT_NEW_ARRAY(a, mt_texpr *, n);
    r.extent = MT_NEW_ARRAY(a, mt_texpr *, n);
    for (int i = 0; i < buf->ndim; i++) {
        r.min[i] = idx[i];
        r.extent[i] = mt_te_i64(a, 1);
    }
    return r;
}

mt_tbuffer *mt_legalize_alloc(mt_legalize_ctx *c, const char *name, mt_dtype dt,
                              mt_texpr *const *shape, int ndim) {
    mt_tfunc *f = c->f;
    mt_tbuffer *b = mt_tbuffer_new(c->arena, name, dt, ndim, shape);
    mt_tbuffer **na = MT_NEW_ARRAY(c->arena, mt_tbuffer *, f->nallocs + 1);
    if (f->nallocs) memcpy(na, f->allocs, sizeof(mt_tbuffer *) * (size_t)f->nallocs);
    na[f->nallocs++] = b;
    f->allocs = na;
    return b;
}

/* ---- the nest builder ------------------------------------------------------------ */

void mt_nest_init(mt_nest *ns, mt_arena *a) {
    memset(ns, 0, sizeof *ns);
    ns->a = a;
}

mt_texpr *mt_nest_axis(mt_nest *ns, mt_texpr *extent, mt_iter_kind kind) {
    if (ns->n == MT_NEST_MAX_LOOPS) mt_ice("too many loops in one nest");
    int k = ns->n++;
    ns->loop[k] = mt_tvar_new(ns->a, mt_arena_printf(ns->a, "i%d", k), MT_INT64);
    ns->iter[k].var = mt_tvar_new(ns->a, mt_arena_printf(ns->a, "v%d", k), MT_INT64);
    ns->iter[k].extent = extent;
    ns->iter[k].kind = kind;
    return mt_te_var(ns->a, ns->iter[k].var);
}

static bool same_point(const mt_tregion *r, const mt_tbuffer *buf, mt_texpr *const *idx) {
    if (r->buf != buf) return false;
    for (int d = 0; d < buf->ndim; d++)
        if (!mt_texpr_equal(r->min[d], idx[d])) return false;
    return true;
}

void mt_nest_read(mt_nest *ns, mt_tbuffer *buf, mt_texpr *const *idx) {
    if (!buf) return; /* a constant operand */
    for (int i = 0; i < ns->nreads; i++)
        if (same_point(&ns->reads[i], buf, idx)) return;
    if (ns->nreads == MT_NEST_MAX_REGIONS) mt_ice("too many read regions");
    ns->reads[ns->nreads++] = mt_point_region(ns->a, buf, idx);
}

mt_texpr *mt_nest_load(mt_nest *ns, mt_tbuffer *buf, mt_texpr *const *idx) {
    mt_nest_read(ns, buf, idx);
    return mt_te_load(ns->a, buf, idx, buf->ndim);
}

void mt_nest_write(mt_nest *ns, mt_tbuffer *buf, mt_texpr *const *idx) {
    if (ns->nwrites == MT_NEST_MAX_REGIONS) mt_ice("too many write regions");
    ns->writes[ns->nwrites++] = mt_point_region(ns->a, buf, idx);
}

mt_tstmt *mt_nest_build(mt_nest *ns, const char *name, mt_tstmt *init, mt_tstmt *body) {
    mt_arena *a = ns->a;
    mt_tstmt *blk = mt_ts_block(a, name);
    int n = ns->n;
    blk->niters = n;
    blk->iters = MT_NEW_ARRAY(a, mt_titer, n > 0 ? n : 1);
    blk->iter_values = MT_NEW_ARRAY(a, mt_texpr *, n > 0 ? n : 1);
    for (int k = 0; k < n; k++) {
        blk->iters[k] = ns->iter[k];
        blk->iter_values[k] = mt_te_var(a, ns->loop[k]);
    }
    blk->reads = MT_NEW_ARRAY(a, mt_tregion, ns->nreads > 0 ? ns->nreads : 1);
    memcpy(blk->reads, ns->reads, sizeof(mt_tregion) * (size_t)ns->nreads);
    blk->nreads = ns->nreads;
    blk->writes = MT_NEW_ARRAY(a, mt_tregion, ns->nwrites > 0 ? ns->nwrites : 1);
    memcpy(blk->writes, ns->writes, sizeof(mt_tregion) * (size_t)ns->nwrites);
    blk->nwrites = ns->nwrites;
    blk->init = init;
    blk->body = body;
    mt_tstmt *s = blk;
    for (int k = n - 1; k >= 0; k--)
        s = mt_ts_for(a, ns->loop[k], mt_te_i64(a, 0), ns->iter[k].extent, MT_FOR_SERIAL, s);
    return s;
}

/* ---- the elementwise loop function -------------------------------------------- */

mt_tfunc *mt_legalize_elemwise(mt_arena *a, const mt_gbinding *b, mt_compute_fn compute) {
    mt_legalize_ctx c;
    mt_legalize_begin(&c, a, b);
    const mt_gvar *out = b->outs[0];
    mt_tbuffer *out_buf = c.out[0];
    int r = out->type.ndim;
    mt_nest ns;
    mt_nest_init(&ns, a);
    mt_texpr *vidx[MT_MAX_RANK];
    for (int d = 0; d < r; d++) vidx[d] = mt_nest_axis(&ns, out_buf->shape[d], MT_ITER_SPATIAL);

    mt_texpr *operands[16];
    for (int k = 0; k < b->nargs; k++) {
        if (!c.in[k]) {
            operands[k] = mt_legalize_const(a, b->args[k]);
            continue;
        }
        const mt_gtype *t = &b->args[k]->type;
        mt_texpr *idx[MT_MAX_RANK];
        for (int d = 0; d < t->ndim; d++) {
            int od = r - t->ndim + d;
            mt_dim dd = t->dims[d], odim = out->type.dims[od];
            bool bcast = !dd.sym && dd.value == 1 && !(!odim.sym && odim.value == 1);
            idx[d] = bcast ? mt_te_i64(a, 0) : vidx[od];
        }
        operands[k] = mt_nest_load(&ns, c.in[k], idx);
    }
    static const mt_gattrs none;
    mt_texpr *value = compute(a, operands, b->attrs ? b->attrs : &none, out->type.dtype);
    value = mt_te_cast(a, out->type.dtype, value);
    mt_nest_write(&ns, out_buf, vidx);
    c.f->body = mt_nest_build(&ns, b->op->name, NULL, mt_ts_store(a, out_buf, vidx, r, value));
    return c.f;
}
