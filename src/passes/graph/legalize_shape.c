/*
 * legalize_shape.c -- loop functions of the shape ops (graph/ops_shape.def).
 *
 * Every shape op is a gather: each output element is one input element. So
 * every legalization is one loop nest over the output with one spatial block
 * whose body is the single store
 *
 *     out[v0, ..., vk] = x[f0(v), ..., fm(v)]
 *
 * with the indices exactly the iter vars on the left. That is the form
 * inline_producers substitutes into a consumer (and into which it substitutes
 * a producer), so after fusion a reshape or a transpose costs nothing but its
 * index arithmetic. What differs per op is the index map f:
 *
 *   transpose      x[v_perm^-1]: input dim axes[d] is read at v_d
 *   expand_dims    the output's inserted dims are dropped
 *   squeeze        the removed dims (size 1) are read at 0
 *   broadcast_to   a dim of size 1 is read at 0, leading output dims dropped
 *   strided_slice  start + v * step per sliced dim (Python's slice.indices,
 *                  the same mt_slice_indices the shape rule uses), the index
 *                  itself for an integer subscript
 *   reshape        row-major flatten then unflatten, per group (below)
 *   concat         a select chain over the inputs (below)
 *
 * reshape. The input and output shapes are cut into the shortest runs of
 * dims with equal products (prefix products compared as "constant times a
 * multiset of symbols", so symbolic shapes group too): (2, 3, 4) -> (6, 4)
 * gives the groups (2, 3) -> (6) and (4) -> (4). Within a group the output
 * index is flattened (sum of v_j * stride_j) and unflattened into the input
 * dims (flat // stride_i % d_i; the first dim needs no %, the last no //).
 * A one-to-one group is the plain iter var, so the common reshapes read
 * x[v0 // 3, v0 % 3, v1] rather than dividing the whole flat index. Dims of
 * size 1 are read at 0 and add nothing to a flat index. When the tensor has
 * no elements the body never runs and every index is 0 (no division by 0 is
 * ever built).
 *
 * concat (one loop nest, one block, kept inline-able). Along the axis the
 * output index v selects input k when offset_k <= v < offset_k + n_k:
 *
 *     out[v0, v1] = T.Select(v1 < 3, a[v0, T.min(v1, 2)],
 *                            T.Select(v1 < 5, b[v0, T.max(T.min(v1 - 3, 1), 0)],
 *                                     c[v0, T.max(v1 - 5, 0)]))
 *
 * A select evaluates both sides (tir.h), so every input index is clamped into
 * its input's range: the loads of the inputs not selected stay in bounds.
 * Inputs with no elements along the axis are left out of the chain.
 *
 * Index expressions are folded while they are built (tir/arith.h: constants,
 * +0, *1, //1, %1), so dumps show the index arithmetic that matters.
 */
#include <string.h>

#include "passes/graph/graph_passes.h"
#include "support/common.h"
#include "tir/arith.h"

static mt_texpr *imm(mt_arena *a, int64_t v) { return mt_te_i64(a, v); }

static bool is_one(mt_dim d) { return !d.sym && d.value == 1; }

/* ---- one loop nest over the output, one block ---------------------------------- */

typedef struct nest {
    mt_legalize_ctx c;
    const mt_gbinding *b;
    mt_tstmt *block;
    mt_tvar *loops[MT_MAX_RANK];
    mt_texpr *v[MT_MAX_RANK]; /* the block's iter vars, one per output dim */
    int rank;
} nest;

static void nest_begin(nest *n, mt_arena *a, const mt_gbinding *b) {
    mt_legalize_begin(&n->c, a, b);
    n->b = b;
    mt_tbuffer *out = n->c.out[0];
    int r = n->rank = out->ndim;
    mt_tstmt *blk = n->block = mt_ts_block(a, b->op->name);
    blk->niters = r;
    blk->iters = MT_NEW_ARRAY(a, mt_titer, r > 0 ? r : 1);
    blk->iter_values = MT_NEW_ARRAY(a, mt_texpr *, r > 0 ? r : 1);
    for (int d = 0; d < r; d++) {
        n->loops[d] = mt_tvar_new(a, mt_arena_printf(a, "i%d", d), MT_INT64);
        mt_tvar *v = mt_tvar_new(a, mt_arena_printf(a, "v%d", d), MT_INT64);
        blk->iters[d].var = v;
        blk->iters[d].extent = out->shape[d];
        blk->iters[d].kind = MT_ITER_SPATIAL;
        blk->iter_values[d] = mt_te_var(a, n->loops[d]);
        n->v[d] = mt_te_var(a, v);
    }
    blk->reads = MT_NEW_ARRAY(a, mt_tregion, b->nargs > 0 ? b->nargs : 1);
}

/* Element idx of argument k: a load, recorded in the block's reads, or the
 * immediate of a constant argument. */
static mt_texpr *nest_read(nest *n, int k, mt_texpr *const *idx) {
    mt_arena *a = n->c.arena;
    mt_tbuffer *buf = n->c.in[k];
    if (!buf) return mt_legalize_const(a, n->b->args[k]);
    mt_tstmt *blk = n->block;
    blk->reads[blk->nreads++] = mt_point_region(a, buf, idx);
    return mt_te_load(a, buf, idx, buf->ndim);
}

static mt_tfunc *nest_end(nest *n, mt_texpr *value) {
    mt_arena *a = n->c.arena;
    mt_tbuffer *out = n->c.out[0];
    mt_tstmt *blk = n->block;
    blk->body = mt_ts_store(a, out, n->v, n->rank, value);
    blk->writes = MT_NEW(a, mt_tregion);
    blk->writes[0] = mt_point_region(a, out, n->v);
    blk->nwrites = 1;
    mt_tstmt *s = blk;
    for (int d = n->rank - 1; d >= 0; d--)
        s = mt_ts_for(a, n->loops[d], imm(a, 0), out->shape[d], MT_FOR_SERIAL, s);
    n->c.f->body = s;
    return n->c.f;
}

/* The whole op for a single input read at idx. */
static mt_tfunc *gather(nest *n, mt_texpr *const *idx) { return nest_end(n, nest_read(n, 0, idx)); }

static int norm_axis(int64_t axis, int ndim) { return (int)(axis < 0 ? axis + ndim : axis); }

/* ---- transpose, expand_dims, squeeze, broadcast_to ----------------------------- */

mt_tfunc *legalize_transpose(mt_arena *a, const mt_gbinding *b) {
    nest n;
    nest_begin(&n, a, b);
    const mt_gattrs *at = b->attrs;
    int r = n.rank;
    mt_texpr *idx[MT_MAX_RANK];
    for (int d = 0; d < r; d++) {
        int src = at && at->has_axes ? norm_axis(at->axes[d], r) : r - 1 - d;
        idx[src] = n.v[d];
    }
    return gather(&n, idx);
}

mt_tfunc *legalize_expand_dims(mt_arena *a, const mt_gbinding *b) {
    nest n;
    nest_begin(&n, a, b);
    const mt_gattrs *at = b->attrs;
    bool added[MT_MAX_RANK] = {false};
    for (int i = 0; i < at->naxes; i++) added[norm_axis(at->axes[i], n.rank)] = true;
    mt_texpr *idx[MT_MAX_RANK];
    for (int d = 0, k = 0; d < n.rank; d++)
        if (!added[d]) idx[k++] = n.v[d];
    return gather(&n, idx);
}

mt_tfunc *legalize_squeeze(mt_arena *a, const mt_gbinding *b) {
    nest n;
    nest_begin(&n, a, b);
    const mt_gattrs *at = b->attrs;
    const mt_gtype *t = &b->args[0]->type;
    bool drop[MT_MAX_RANK] = {false};
    for (int d = 0; d < t->ndim; d++) drop[d] = !(at && at->has_axes) && is_one(t->dims[d]);
    if (at && at->has_axes && t->ndim > 0)
        for (int i = 0; i < at->naxes; i++) drop[norm_axis(at->axes[i], t->ndim)] = true;
    mt_texpr *idx[MT_MAX_RANK];
    for (int d = 0, od = 0; d < t->ndim; d++) idx[d] = drop[d] ? imm(a, 0) : n.v[od++];
    return gather(&n, idx);
}

mt_tfunc *legalize_broadcast_to(mt_arena *a, const mt_gbinding *b) {
    nest n;
    nest_begin(&n, a, b);
    const mt_gtype *t = &b->args[0]->type;
    mt_texpr *idx[MT_MAX_RANK];
    for (int d = 0; d < t->ndim; d++)
        idx[d] = is_one(t->dims[d]) ? imm(a, 0) : n.v[n.rank - t->ndim + d];
    return gather(&n, idx);
}

/* ---- strided_slice ----------------------------------------------------------- */

mt_tfunc *legalize_strided_slice(mt_arena *a, const mt_gbinding *b) {
    nest n;
    nest_begin(&n, a, b);
    const mt_gattrs *at = b->attrs;
    const mt_gtype *t = &b->args[0]->type;
    int nslice = at ? at->nslice : 0;
    mt_texpr *idx[MT_MAX_RANK];
    for (int d = 0, od = 0; d < t->ndim; d++) {
        mt_dim dim = t->dims[d];
        if (d >= nslice || dim.sym) { /* a symbolic dim is only ever sliced with ':' */
            idx[d] = n.v[od++];
            continue;
        }
        if (at->squeeze[d]) {
            idx[d] = imm(a, at->begin[d] < 0 ? at->begin[d] + dim.value : at->begin[d]);
            continue;
        }
        int64_t step = at->step[d] == MT_SLICE_OMITTED ? 1 : at->step[d], start, count;
        mt_slice_indices(dim.value, at->begin[d], at->end[d], step, &start, &count);
        mt_texpr *v = n.v[od++];
        idx[d] = step > 0 ? mt_arith_add(a, mt_arith_mul(a, v, imm(a, step)), imm(a, start))
                          : mt_arith_sub(a, imm(a, start), mt_arith_mul(a, v, imm(a, -step)));
    }
    return gather(&n, idx);
}

/* ---- reshape ------------------------------------------------------------------ */

/* A product of dims: a constant times a multiset of symbols (sorted). */
typedef struct prod {
    int64_t k;
    const char *syms[MT_MAX_RANK];
    int nsyms;
} prod;

static void prod_mul(prod *p, mt_dim d) {
    if (!d.sym) {
        p->k *= d.value; /* the shape rule checked the total for overflow */
        return;
    }
    int i = p->nsyms++;
    while (i > 0 && strcmp(p->syms[i - 1], d.sym) > 0) {
        p->syms[i] = p->syms[i - 1];
        i--;
    }
    p->syms[i] = d.sym;
}

static bool prod_equal(const prod *x, const prod *y) {
    if (x->k != y->k || x->nsyms != y->nsyms) return false;
    for (int i = 0; i < x->nsyms; i++)
        if (strcmp(x->syms[i], y->syms[i]) != 0) return false;
    return true;
}

/* pre[i] = the product of dims[0..i), for i in 0..n. */
static void prefix_products(const mt_gtype *t, prod *pre) {
    pre[0].k = 1;
    pre[0].nsyms = 0;
    for (int i = 0; i < t->ndim; i++) {
        pre[i + 1] = pre[i];
        prod_mul(&pre[i + 1], t->dims[i]);
    }
}

/* Input indices idx[a0..a1) for the group of input dims [a0, a1) that holds
 * the same elements as output dims [b0, b1). */
static void reshape_group(nest *n, const mt_gtype *ti, int a0, int a1, int b0, int b1, mt_texpr **idx) {
    mt_arena *a = n->c.arena;
    mt_tbuffer *in = n->c.in[0], *out = n->c.out[0];
    const mt_gtype *to = &n->b->outs[0]->type;
    if (a1 - a0 == 1 && b1 - b0 == 1) {
        idx[a0] = n->v[b0];
        return;
    }
    mt_texpr *flat = imm(a, 0), *stride = imm(a, 1);
    mt_texpr *terms[MT_MAX_RANK];
    for (int j = b1 - 1; j >= b0; j--) {
        terms[j] = is_one(to->dims[j]) ? imm(a, 0) : mt_arith_mul(a, n->v[j], stride);
        stride = mt_arith_mul(a, out->shape[j], stride);
    }
    for (int j = b0; j < b1; j++) flat = mt_arith_add(a, flat, terms[j]);
    int first = a0;
    while (first < a1 && is_one(ti->dims[first])) first++;
    stride = imm(a, 1);
    for (int i = a1 - 1; i >= a0; i--) {
        if (is_one(ti->dims[i])) {
            idx[i] = imm(a, 0);
            continue;
        }
        mt_texpr *e = mt_arith_floordiv(a, flat, stride);
        idx[i] = i == first ? e : mt_arith_floormod(a, e, in->shape[i]);
        stride = mt_arith_mul(a, in->shape[i], stride);
    }
}

mt_tfunc *legalize_reshape(mt_arena *a, const mt_gbinding *b) {
    nest n;
    nest_begin(&n, a, b);
    const mt_gtype *ti = &b->args[0]->type, *to = &b->outs[0]->type;
    mt_texpr *idx[MT_MAX_RANK];
    bool empty = false;
    for (int j = 0; j < to->ndim; j++) empty = empty || (!to->dims[j].sym && to->dims[j].value == 0);
    if (empty || !n.c.in[0]) {
        for (int i = 0; i < ti->ndim; i++) idx[i] = imm(a, 0);
        return gather(&n, idx);
    }
    prod pin[MT_MAX_RANK + 1], pout[MT_MAX_RANK + 1];
    prefix_products(ti, pin);
    prefix_products(to, pout);
    /* from boundary (a0, b0), the next boundary (a1, b1) with equal prefix
     * products and the fewest dims in between; (ndim, ndim) always is one */
    int a0 = 0, b0 = 0;
    while (a0 < ti->ndim || b0 < to->ndim) {
        int a1 = ti->ndim, b1 = to->ndim;
        for (int s = a0 + b0 + 1; s < a1 + b1; s++) {
            bool found = false;
            for (int i = a0; i <= ti->ndim && i <= s - b0 && !found; i++) {
                int j = s - i;
                if (j > to->ndim) continue;
                if (prod_equal(&pin[i], &pout[j])) {
                    a1 = i;
                    b1 = j;
                    found = true;
                }
            }
            if (found) break;
        }
        reshape_group(&n, ti, a0, a1, b0, b1, idx);
        a0 = a1;
        b0 = b1;
    }
    return gather(&n, idx);
}

/* flatten is a reshape into the shape its rule gave (graph/infer_shape.c). */
mt_tfunc *legalize_flatten(mt_arena *a, const mt_gbinding *b) { return legalize_reshape(a, b); }

/* ---- concat -------------------------------------------------------------------- */

mt_tfunc *legalize_concat(mt_arena *a, const mt_gbinding *b) {
    nest n;
    nest_begin(&n, a, b);
    const mt_gattrs *at = b->attrs;
    int axis = norm_axis(at && at->has_axes ? at->axes[0] : 0, n.rank);
    mt_texpr *idx[MT_MAX_RANK];
    memcpy(idx, n.v, sizeof idx[0] * (size_t)n.rank);
    if (b->nargs == 1) return gather(&n, idx);

    /* the inputs with elements along the axis, and where each starts */
    int ks[16], nk = 0;
    int64_t offset[16], len[16], off = 0;
    for (int k = 0; k < b->nargs; k++) {
        int64_t l = b->args[k]->type.dims[axis].value;
        if (l > 0) {
            ks[nk] = k;
            offset[nk] = off;
            len[nk++] = l;
        }
        off += l;
    }
    if (nk == 0) return gather(&n, idx); /* no elements: the body never runs */
    mt_texpr *v = n.v[axis], *loads[16], *value;
    for (int i = 0; i < nk; i++) {
        mt_texpr *e = mt_arith_sub(a, v, imm(a, offset[i]));
        if (i < nk - 1) e = mt_te_bin(a, TE_MIN, e, imm(a, len[i] - 1));
        if (i > 0) e = mt_te_bin(a, TE_MAX, e, imm(a, 0));
        idx[axis] = e;
        loads[i] = nest_read(&n, ks[i], idx);
    }
    value = loads[nk - 1];
    for (int i = nk - 2; i >= 0; i--)
        value = mt_te_select(a, mt_te_bin(a, TE_LT, v, imm(a, offset[i] + len[i])), loads[i], value);
    return nest_end(&n, value);
}
