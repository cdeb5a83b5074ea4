/*
 * legalize_reduce.c -- loop functions of sum, mean, max, min, prod, argmax
 * and argmin.
 *
 * A reduction of x over a set of its dims is one loop nest over x's dims in
 * x's order (so the innermost loop walks x contiguously) around one block
 * whose iteration variables are spatial for kept dims and reduce for reduced
 * ones. The block's init writes the identity, its body folds one element in:
 *
 *     for i0, i1 in T.grid(4, 8):                  # sum(x, axis=1)
 *         with T.block("sum"):
 *             v0, v1 = T.axis.remap("SR", [i0, i1])
 *             T.reads(x[v0, v1])
 *             T.writes(out[v0])
 *             with T.init():
 *                 out[v0] = 0.0
 *             out[v0] = out[v0] + x[v0, v1]
 *
 * A reduce loop may sit outside a spatial one (sum over axis 0 is "RS"):
 * lower_blocks runs the init when every reduce variable is 0, which is right
 * for any loop order.
 *
 * The accumulator is the output itself when the op keeps the dtype and needs
 * no final step. Otherwise it is an intermediate buffer of the output's shape
 * (a function alloc) followed by a spatial "epilogue" block:
 *   - float16 sum/prod accumulate in float32, then cast to float16;
 *   - mean accumulates in float32 (float16 input), float64 (integer input,
 *     result float32) or in the output (float32/float64), then divides by
 *     the number of reduced elements;
 *   - argmax/argmin keep the best value in a buffer of x's dtype and the
 *     index in the int64 output; both are written by the one block.
 *
 * Empty reductions. The init runs inside the reduce loops, so when a reduced
 * extent is 0 it never runs. The function therefore starts with a fill of
 * the accumulator with the identity, guarded by `if n == 0 or ...:` over the
 * symbolic reduced extents; a constant zero extent makes the fill
 * unconditional and drops the reduce nest; constant non-zero extents need no
 * fill. Identities: sum/mean 0 (mean then divides 0 by 0: NaN, as NumPy),
 * prod 1, max -inf or the dtype's minimum, min +inf or the dtype's maximum,
 * argmax/argmin index 0 (NumPy raises instead; a kernel cannot).
 *
 * NaN: max/min of floats propagate NaN (NumPy's max): the body is
 * `T.Select(x > acc or x != x, x, acc)`, since T.max is maxnum and would
 * drop it. argmax/argmin return the first NaN's index, as NumPy: a candidate
 * replaces the best when it is strictly better, or is NaN while the best is
 * not; ties keep the first index. Integers accumulate in their own dtype and
 * wrap around (int8 sums wrap at 8 bits; NumPy would widen to int64).
 */
#include <math.h>
#include <string.h>

#include "passes/graph/graph_passes.h"
#include "support/common.h"

typedef enum rkind { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_ARGMAX, R_ARGMIN } rkind;


/* ---- values ----------------------------------------------------------------- */

static mt_texpr *imm(mt_arena *a, mt_dtype dt, double v) {
    return mt_dtype_is_float(dt) ? mt_te_float(a, dt, v) : mt_te_int(a, dt, (int64_t)v);
}

/* The accumulator's starting value. */
static mt_texpr *identity(mt_arena *a, rkind k, mt_dtype dt) {
    bool fl = mt_dtype_is_float(dt);
    switch (k) {
    case R_SUM: case R_MEAN: return imm(a, dt, 0);
    case R_PROD: return imm(a, dt, 1);
    case R_MAX: case R_ARGMAX: return fl ? mt_te_float(a, dt, -INFINITY) : mt_te_int(a, dt, mt_dtype_min(dt));
    case R_MIN: case R_ARGMIN: return fl ? mt_te_float(a, dt, INFINITY) : mt_te_int(a, dt, mt_dtype_max(dt));
    }
    return NULL;
}

/* `acc (op) x` for the folding ops. */
static mt_texpr *fold(mt_arena *a, rkind k, mt_texpr *acc, mt_texpr *x) {
    switch (k) {
    case R_SUM: case R_MEAN: return mt_te_bin(a, TE_ADD, acc, x);
    case R_PROD: return mt_te_bin(a, TE_MUL, acc, x);
    case R_MAX: case R_MIN: {
        bool mx = k == R_MAX;
        if (!mt_dtype_is_float(x->dtype)) return mt_te_bin(a, mx ? TE_MAX : TE_MIN, acc, x);
        mt_texpr *better = mt_te_bin(a, mx ? TE_GT : TE_LT, x, acc);
        mt_texpr *nan = mt_te_bin(a, TE_NE, x, x);
        return mt_te_select(a, mt_te_bin(a, TE_OR, better, nan), x, acc);
    }
    default: mt_ice("not a folding reduction");
    }
}

/* The dtype the reduction accumulates in. */
static mt_dtype acc_dtype(rkind k, mt_dtype xdt) {
    switch (k) {
    case R_SUM: case R_PROD: return mt_dtype_is_half(xdt) ? MT_FLOAT32 : xdt;
    case R_MEAN: return mt_dtype_is_half(xdt) ? MT_FLOAT32 : mt_dtype_is_float(xdt) ? xdt : MT_FLOAT64;
    default: return xdt;
    }
}

/* `e0 == 0 or e1 == 0 ...` over the extents that are not constants; NULL
 * when none can be 0; *always when one is the constant 0. */
static mt_texpr *empty_cond(mt_arena *a, mt_texpr *const *ext, int n, bool *always) {
    mt_texpr *cond = NULL;
    *always = false;
    for (int i = 0; i < n; i++) {
        int64_t v;
        if (mt_te_is_const_int(ext[i], &v)) {
            if (v == 0) *always = true;
            continue;
        }
        mt_texpr *eq = mt_te_bin(a, TE_EQ, ext[i], mt_te_i64(a, 0));
        cond = cond ? mt_te_bin(a, TE_OR, cond, eq) : eq;
    }
    return cond;
}

/* The product of extents (folded when constant). */
static mt_texpr *count(mt_arena *a, mt_texpr *const *ext, int n) {
    int64_t k = 1, v;
    mt_texpr *sym = NULL;
    for (int i = 0; i < n; i++) {
        if (mt_te_is_const_int(ext[i], &v))
            k *= v;
        else
            sym = sym ? mt_te_bin(a, TE_MUL, sym, ext[i]) : ext[i];
    }
    if (!sym) return mt_te_i64(a, k);
    return k == 1 ? sym : mt_te_bin(a, TE_MUL, sym, mt_te_i64(a, k));
}

/* `for ...: with T.block(name): buf[w] = fill` over all of buf, one
 * spatial variable per dim. */
static mt_tstmt *fill_nest(mt_arena *a, const char *name, mt_tbuffer *buf, mt_texpr *fill) {
    mt_nest ns;
    mt_nest_init(&ns, a);
    mt_texpr *w[MT_MAX_RANK];
    for (int d = 0; d < buf->ndim; d++) w[d] = mt_nest_axis(&ns, buf->shape[d], MT_ITER_SPATIAL);
    mt_nest_write(&ns, buf, w);
    return mt_nest_build(&ns, name, NULL, mt_ts_store(a, buf, w, buf->ndim, fill));
}

/* ---- the legalizer ------------------------------------------------------------- */

static mt_tfunc *legalize_reduction(mt_arena *a, const mt_gbinding *b, rkind kind) {
    mt_legalize_ctx c;
    mt_legalize_begin(&c, a, b);
    const char *op = b->op->name;
    const mt_gvar *x = b->args[0];
    const mt_gattrs *at = b->attrs;
    mt_tbuffer *xb = c.in[0], *out = c.out[0];
    int nd = x->type.ndim;
    mt_dtype xdt = x->type.dtype, odt = b->outs[0]->type.dtype;
    bool arg = kind == R_ARGMAX || kind == R_ARGMIN;

    bool reduced[MT_MAX_RANK];
    for (int d = 0; d < nd; d++) reduced[d] = !at || !at->has_axes;
    if (at && at->has_axes)
        for (int i = 0; i < at->naxes; i++)
            reduced[at->axes[i] < 0 ? at->axes[i] + nd : at->axes[i]] = true;
    bool keep = at && at->keepdims;

    /* the accumulator: the output, or an intermediate of the output's shape */
    mt_dtype adt = arg ? xdt : acc_dtype(kind, xdt);
    mt_tbuffer *acc = out;
    if (arg || adt != odt) {
        acc = mt_tbuffer_new(a, arg ? "best" : "acc", adt, out->ndim, out->shape);
        c.f->allocs = MT_NEW(a, mt_tbuffer *);
        c.f->allocs[0] = acc;
        c.f->nallocs = 1;
    }

    /* the reduce nest over x's dims, in x's order */
    mt_nest ns;
    mt_nest_init(&ns, a);
    mt_texpr *v[MT_MAX_RANK], *oidx[MT_MAX_RANK], *rext[MT_MAX_RANK];
    int no = 0, nr = 0;
    mt_texpr *flat = NULL; /* argmax/argmin: row-major index over the reduced dims */
    for (int d = 0; d < nd; d++) {
        mt_texpr *ext = xb->shape[d];
        v[d] = mt_nest_axis(&ns, ext, reduced[d] ? MT_ITER_REDUCE : MT_ITER_SPATIAL);
        if (!reduced[d]) {
            oidx[no++] = v[d];
            continue;
        }
        if (keep) oidx[no++] = mt_te_i64(a, 0);
        rext[nr++] = ext;
        flat = flat ? mt_te_bin(a, TE_ADD, mt_te_bin(a, TE_MUL, flat, ext), v[d]) : v[d];
    }
    mt_texpr *xv = xb ? mt_te_load(a, xb, v, nd) : mt_legalize_const(a, x);
    mt_nest_read(&ns, xb, v);

    mt_tstmt *init, *body;
    mt_texpr *accv = mt_te_load(a, acc, oidx, no);
    if (arg) {
        mt_texpr *better = mt_te_bin(a, kind == R_ARGMAX ? TE_GT : TE_LT, xv, accv);
        if (mt_dtype_is_float(xdt)) {
            mt_texpr *nan = mt_te_bin(a, TE_AND, mt_te_bin(a, TE_NE, xv, xv), mt_te_bin(a, TE_EQ, accv, accv));
            better = mt_te_bin(a, TE_OR, better, nan);
        }
        mt_tstmt *up[2] = {mt_ts_store(a, acc, oidx, no, xv),
                           mt_ts_store(a, out, oidx, no, flat ? flat : mt_te_i64(a, 0))};
        body = mt_ts_if(a, better, mt_ts_seq(a, up, 2), NULL);
        mt_tstmt *in[2] = {mt_ts_store(a, acc, oidx, no, identity(a, kind, xdt)),
                           mt_ts_store(a, out, oidx, no, mt_te_i64(a, 0))};
        init = mt_ts_seq(a, in, 2);
        mt_nest_write(&ns, acc, oidx);
        mt_nest_write(&ns, out, oidx);
    } else {
        init = mt_ts_store(a, acc, oidx, no, identity(a, kind, adt));
        body = mt_ts_store(a, acc, oidx, no, fold(a, kind, accv, mt_te_cast(a, adt, xv)));
        mt_nest_write(&ns, acc, oidx);
    }

    mt_tstmt *stmts[3];
    int n = 0;
    bool always;
    mt_texpr *empty = empty_cond(a, rext, nr, &always);
    if (always || empty) {
        const char *name = mt_arena_printf(a, "%s_empty", op);
        mt_tstmt *fill = arg ? fill_nest(a, name, out, mt_te_i64(a, 0))
                             : fill_nest(a, name, acc, identity(a, kind, adt));
        stmts[n++] = always ? fill : mt_ts_if(a, empty, fill, NULL);
    }
    if (!always) stmts[n++] = mt_nest_build(&ns, op, init, body);

    /* epilogue: out = cast(acc), or acc / count (none for a mean over nothing) */
    int64_t cnt;
    bool cnt_const = mt_te_is_const_int(count(a, rext, nr), &cnt);
    if (!arg && (acc != out || (kind == R_MEAN && !(cnt_const && cnt == 1)))) {
        mt_nest ep;
        mt_nest_init(&ep, a);
        mt_texpr *w[MT_MAX_RANK];
        for (int d = 0; d < out->ndim; d++) w[d] = mt_nest_axis(&ep, out->shape[d], MT_ITER_SPATIAL);
        mt_texpr *val = mt_te_load(a, acc, w, out->ndim);
        if (kind == R_MEAN) {
            mt_texpr *div = cnt_const ? mt_te_float(a, adt, (double)cnt) : mt_te_cast(a, adt, count(a, rext, nr));
            val = mt_te_bin(a, TE_DIV, val, div);
        }
        mt_nest_read(&ep, acc, w);
        mt_nest_write(&ep, out, w);
        stmts[n++] = mt_nest_build(&ep, mt_arena_printf(a, "%s_out", op), NULL,
                                mt_ts_store(a, out, w, out->ndim, mt_te_cast(a, odt, val)));
    }
    c.f->body = mt_ts_seq(a, stmts, n);
    return c.f;
}

mt_tfunc *legalize_sum(mt_arena *a, const mt_gbinding *b) { return legalize_reduction(a, b, R_SUM); }
mt_tfunc *legalize_mean(mt_arena *a, const mt_gbinding *b) { return legalize_reduction(a, b, R_MEAN); }
mt_tfunc *legalize_max(mt_arena *a, const mt_gbinding *b) { return legalize_reduction(a, b, R_MAX); }
mt_tfunc *legalize_min(mt_arena *a, const mt_gbinding *b) { return legalize_reduction(a, b, R_MIN); }
mt_tfunc *legalize_prod(mt_arena *a, const mt_gbinding *b) { return legalize_reduction(a, b, R_PROD); }
mt_tfunc *legalize_argmax(mt_arena *a, const mt_gbinding *b) { return legalize_reduction(a, b, R_ARGMAX); }
mt_tfunc *legalize_argmin(mt_arena *a, const mt_gbinding *b) { return legalize_reduction(a, b, R_ARGMIN); }
