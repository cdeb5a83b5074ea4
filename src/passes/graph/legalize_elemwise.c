/*
 * legalize_elemwise.c -- the loop function of an elementwise/broadcast op.
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

mt_texpr *compute_add(mt_arena *a, mt_texpr *const *x, mt_dtype dt) { return mt_te_bin(a, TE_ADD, x[0], x[1]); }
mt_texpr *compute_subtract(mt_arena *a, mt_texpr *const *x, mt_dtype dt) { return mt_te_bin(a, TE_SUB, x[0], x[1]); }
mt_texpr *compute_multiply(mt_arena *a, mt_texpr *const *x, mt_dtype dt) { return mt_te_bin(a, TE_MUL, x[0], x[1]); }

mt_texpr *compute_divide(mt_arena *a, mt_texpr *const *x, mt_dtype dt) {
    /* true division: integers divide as out_dtype (float32) */
    return mt_te_bin(a, TE_DIV, mt_te_cast(a, dt, x[0]), mt_te_cast(a, dt, x[1]));
}

mt_texpr *compute_negative(mt_arena *a, mt_texpr *const *x, mt_dtype dt) { return mt_te_unary(a, TE_NEG, x[0]); }

static mt_texpr *call1(mt_arena *a, mt_intrin fn, mt_texpr *x) { return mt_te_call(a, fn, &x, 1); }

mt_texpr *compute_exp(mt_arena *a, mt_texpr *const *x, mt_dtype dt) { return call1(a, IN_EXP, x[0]); }
mt_texpr *compute_sigmoid(mt_arena *a, mt_texpr *const *x, mt_dtype dt) { return call1(a, IN_SIGMOID, x[0]); }
mt_texpr *compute_tanh(mt_arena *a, mt_texpr *const *x, mt_dtype dt) { return call1(a, IN_TANH, x[0]); }
mt_texpr *compute_sqrt(mt_arena *a, mt_texpr *const *x, mt_dtype dt) { return call1(a, IN_SQRT, x[0]); }

mt_texpr *compute_relu(mt_arena *a, mt_texpr *const *x, mt_dtype dt) {
    mt_texpr *zero = mt_dtype_is_float(dt) ? mt_te_float(a, dt, 0.0) : mt_te_int(a, dt, 0);
    return mt_te_bin(a, TE_MAX, x[0], zero);
}

static const mt_compute_fn computes[] = {
#define MT_OP(id, name, arity, pattern, infer, compute) compute,
#include "graph/ops.def"
#undef MT_OP
};

/* ---- the loop function ---------------------------------------------------- */

typedef struct symtab {
    const char *names[MT_MAX_RANK * 8];
    mt_tvar *vars[MT_MAX_RANK * 8];
    int n;
} symtab;

static mt_texpr *dim_expr(mt_arena *a, symtab *st, mt_tfunc *f, mt_dim d) {
    if (!d.sym) return mt_te_i64(a, d.value);
    for (int i = 0; i < st->n; i++)
        if (strcmp(st->names[i], d.sym) == 0) return mt_te_var(a, st->vars[i]);
    MT_ASSERT(st->n < MT_ARRAY_LEN(st->vars));
    mt_tvar *v = mt_tvar_new(a, d.sym, MT_INT64);
    st->names[st->n] = d.sym;
    st->vars[st->n++] = v;
    mt_tvar **nv = MT_NEW_ARRAY(a, mt_tvar *, f->nsym + 1);
    if (f->nsym) memcpy(nv, f->sym_vars, sizeof(mt_tvar *) * (size_t)f->nsym);
    nv[f->nsym++] = v;
    f->sym_vars = nv;
    return mt_te_var(a, v);
}

static mt_tbuffer *param_buffer(mt_arena *a, symtab *st, mt_tfunc *f, const mt_gvar *v) {
    mt_texpr *shape[MT_MAX_RANK];
    for (int i = 0; i < v->type.ndim; i++) shape[i] = dim_expr(a, st, f, v->type.dims[i]);
    mt_tbuffer *buf = mt_tbuffer_new(a, v->name, v->type.dtype, v->type.ndim, shape);
    mt_tfunc_add_param(a, f, buf, NULL);
    return buf;
}

static mt_texpr *const_expr(mt_arena *a, const mt_gvar *c) {
    if (mt_dtype_is_float(c->type.dtype)) return mt_te_float(a, c->type.dtype, c->fconst);
    return mt_te_int(a, c->type.dtype, c->iconst);
}

static mt_tregion point_region(mt_arena *a, mt_tbuffer *buf, mt_texpr **idx) {
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

mt_tfunc *mt_legalize_elemwise(mt_arena *a, const mt_op_def *op, mt_gvar *const *args,
                               int nargs, const mt_gvar *out) {
    mt_tfunc *f = mt_tfunc_new(a, op->name);
    symtab st;
    st.n = 0;
    int r = out->type.ndim;

    mt_tbuffer *in_bufs[8] = {0};
    MT_ASSERT(nargs <= 8);
    for (int k = 0; k < nargs; k++)
        if (!args[k]->is_const) in_bufs[k] = param_buffer(a, &st, f, args[k]);
    mt_tbuffer *out_buf = param_buffer(a, &st, f, out);
    f->num_outputs = 1;

    /* loops i_d and block iteration variables v_d over the output's dims */
    mt_tvar *loops[MT_MAX_RANK];
    mt_texpr *vidx[MT_MAX_RANK];
    mt_tstmt *block = mt_ts_block(a, op->name);
    block->niters = r;
    block->iters = MT_NEW_ARRAY(a, mt_titer, r > 0 ? r : 1);
    block->iter_values = MT_NEW_ARRAY(a, mt_texpr *, r > 0 ? r : 1);
    for (int d = 0; d < r; d++) {
        loops[d] = mt_tvar_new(a, mt_arena_printf(a, "i%d", d), MT_INT64);
        mt_tvar *v = mt_tvar_new(a, mt_arena_printf(a, "v%d", d), MT_INT64);
        block->iters[d].var = v;
        block->iters[d].extent = out_buf->shape[d];
        block->iters[d].kind = MT_ITER_SPATIAL;
        block->iter_values[d] = mt_te_var(a, loops[d]);
        vidx[d] = mt_te_var(a, v);
    }

    mt_texpr *operands[8];
    block->reads = MT_NEW_ARRAY(a, mt_tregion, nargs > 0 ? nargs : 1);
    for (int k = 0; k < nargs; k++) {
        if (!in_bufs[k]) {
            operands[k] = const_expr(a, args[k]);
            continue;
        }
        const mt_gtype *t = &args[k]->type;
        mt_texpr *idx[MT_MAX_RANK];
        for (int d = 0; d < t->ndim; d++) {
            int od = r - t->ndim + d;
            mt_dim dd = t->dims[d], odim = out->type.dims[od];
            bool bcast = !dd.sym && dd.value == 1 && !(!odim.sym && odim.value == 1);
            idx[d] = bcast ? mt_te_i64(a, 0) : vidx[od];
        }
        operands[k] = mt_te_load(a, in_bufs[k], idx, t->ndim);
        block->reads[block->nreads++] = point_region(a, in_bufs[k], idx);
    }
    mt_texpr *value = computes[op->id](a, operands, out->type.dtype);
    value = mt_te_cast(a, out->type.dtype, value);
    block->body = mt_ts_store(a, out_buf, vidx, r, value);
    block->writes = MT_NEW(a, mt_tregion);
    block->writes[0] = point_region(a, out_buf, vidx);
    block->nwrites = 1;

    mt_tstmt *s = block;
    for (int d = r - 1; d >= 0; d--)
        s = mt_ts_for(a, loops[d], mt_te_i64(a, 0), out_buf->shape[d], MT_FOR_SERIAL, s);
    f->body = s;
    mt_tfunc_set_attr(a, f, "op_pattern", mt_pattern_str(op->pattern));
    return f;
}
