/*
 * rule_matmul.c -- the CPU schedule of a matmul and its elementwise epilogue.
 *
 * What it matches. A loop function (block form, after inline_producers) that
 * is exactly
 *
 *     [if K == 0: C = 0]                        legalize's fill for a symbolic K
 *     for b.., i, k, j:  C[b.., i, j] += X(b.., i, k) * Y(b.., k, j)     (init 0)
 *     for b.., i, j:     E1[b.., i, j] = f1(C[b.., i, j], E0.., inputs)  (epilogues)
 *
 * with C float32 or float64; X and Y any expressions of their indices (plain
 * loads, casts from float16, a prologue fused in front such as relu(x + b),
 * a transposed operand); each epilogue elementwise over C's shape, reading C
 * and earlier epilogue outputs only at [b.., i, j] and anything else (biases,
 * residuals) anywhere. C and the E's may be function allocations (they
 * disappear: values stay in registers) or outputs.
 *
 * The algorithm is GotoBLAS's (K. Goto and R. van de Geijn, "Anatomy of
 * high-performance matrix multiplication", ACM TOMS 34(3), 2008), in the
 * layered form of BLIS (F. Van Zee and R. van de Geijn, ACM TOMS 41(3),
 * 2015): a register-tiled micro-kernel inside cache blocking and packing.
 *
 *  - Micro-kernel. A tile of MR = 8 rows by NR = 32 columns of C lives in
 *    MR * NR / 16 = 16 zmm registers. For each k it loads two vectors of B's
 *    row k and broadcasts MR values of A's column k: 16 FMAs for 10 loads,
 *    with 16 independent accumulation chains to cover the FMA latency
 *    (4 cycles x 2 FMA pipes on Zen 5). In TIR the tile is a local buffer
 *    `acc` accessed only at constant offsets as T.Ramp vectors, and the
 *    FMAs are explicit T.fma calls on vectors: LLVM's SROA turns acc into
 *    registers and each T.fma is one vfmadd231ps. Nothing depends on the
 *    loop vectorizer or on FMA contraction (codegen is strict IEEE).
 *  - Packing and blocking. For each column block of up to NC = 512 columns
 *    (and, when K > 1024 and an output can hold partial sums, each K block
 *    of KC = 512), B's block is copied into B_pack as NR-wide slivers, each
 *    contiguous over k: the micro-kernel streams one sliver (KC x 128 bytes)
 *    from L2 while the 8 x KC sliver of A it multiplies stays in L1 across
 *    the slivers of the block. Blocks are narrowed so that B_pack stays
 *    within 1 MiB (L2) whenever its depth is a constant. The copy is
 *    parallel over slivers; row blocks of MR rows run in parallel after it
 *    (each writes its own rows of C).
 *  - K blocks. Later K blocks start from the partial sums stored by earlier
 *    ones in C, or in the first epilogue output of C's dtype when C is an
 *    intermediate; the epilogue runs on the last block only. With no such
 *    output (a float16 result), K is not blocked.
 *  - Epilogue. Applied to the accumulator registers as they are stored: the
 *    epilogue expressions are evaluated on 16-lane vectors (j becomes
 *    T.Ramp(j, 1, 16)), so relu(a @ w + c) costs one vector load of c and a
 *    max per stored vector and the matmul's result never goes to memory.
 *  - Small M (a constant M < 32, or a symbolic M below 32 at run time): B is
 *    read in place, no packing to amortize; column slivers run in parallel,
 *    all rows of a sliver inside it. Needs a constant N and Y loadable as
 *    unit-stride vectors along j.
 *  - Tails, exact and without masked memory operations. Rows: M % MR rows
 *    take one tile of that height (constant M) or a loop of one-row tiles.
 *    Columns, constant N: the last sliver is N % NR wide, vectors of 16 and
 *    one narrower (T.Ramp(j, 1, 10) is a <10 x float> access). Columns,
 *    symbolic N: the last sliver is packed with zeros past N and computed in
 *    full; its partial sums go in and its results out through a small local
 *    buffer, element by element for j < N.
 *
 * Numerics: each element still sums k in increasing order, with fused
 * multiply-adds (one rounding per step instead of two).
 *
 * The output is in the lowered form (no blocks; flat buffers, one index per
 * access), built directly: flatten_buffers would turn a[i, T.Ramp(j, 1, 16)]
 * into i * N + T.Ramp(j, 1, 16), which codegen scalarizes; here the ramp
 * takes the whole offset, T.Ramp(i * N + j, 1, 16), one vector access.
 * lower_blocks, flatten_buffers and simplify then leave it as it is.
 */
#include <string.h>

#include "schedule/schedule.h"
#include "support/common.h"

enum { MM_MAXS = MT_MAX_RANK, MM_MAXE = 8, MM_MAXV = 8, MM_MAXR = 16 };

/* The tile and block sizes; docs/schedule.md has the measurements behind them. */
typedef struct mm_tune {
    int mr;         /* rows of the register tile: values of A broadcast per k */
    int nv;         /* vector registers per tile row: NR = nv * lanes */
    int kc;         /* depth of a K block when K is blocked (K > 2 * kc) */
    int nc;         /* columns of a packed block of B (N blocking) */
    int pack_min_m; /* from this many rows on, B is packed */
} mm_tune;

static const mm_tune tune = {8, 2, 512, 512, 32};

/* ---- the matched function ------------------------------------------------------ */

typedef struct epi {
    mt_tvar *iv[MM_MAXS]; /* the nest's block iter vars, positionally the matmul's */
    mt_tbuffer *out;
    mt_texpr *value;
} epi;

typedef struct fbuf {
    mt_tbuffer *old, *flat;
    mt_texpr *stride[MM_MAXS];
} fbuf;

typedef struct mm {
    mt_arena *a;
    mt_tfunc *f;
    mt_dtype dt;              /* accumulation dtype, C's */
    int vl;                   /* lanes of a 512-bit register */
    int ns;                   /* spatial dims of C: batch..., i, j */
    mt_tvar *sv[MM_MAXS];     /* the matmul block's spatial iter vars, in C's order */
    mt_texpr *ext[MM_MAXS];   /* their extents: M = ext[ns - 2], N = ext[ns - 1] */
    mt_tvar *kv;              /* the reduce iter var */
    mt_texpr *K;
    mt_texpr *X, *Y;          /* C += X(i, k) * Y(k, j) */
    mt_tbuffer *C;
    epi ep[MM_MAXE];
    int nep;
    MT_VEC(fbuf) fb;
    mt_texpr *bv[MM_MAXS];    /* batch indices while generating */
    mt_tbuffer *P;            /* holds partial sums across K blocks (NULL: none) */
    bool y_vec;               /* Y(k, j..j+15) is unit-stride vector loads */
    mt_tbuffer *bp;           /* the packed block of B */
    mt_texpr *kcap;           /* its depth */
    int64_t kcblk, ncblk;     /* K and N block sizes */
    bool split;               /* K is blocked */
} mm;

/* ---- small helpers ---------------------------------------------------------------- */

static bool cst(const mt_texpr *e, int64_t *v) { return mt_te_is_const_int(e, v); }
static mt_texpr *I(mm *c, int64_t v) { return mt_te_i64(c->a, v); }
static mt_texpr *V(mm *c, mt_tvar *v) { return mt_te_var(c->a, v); }
/* A variable bound to a vector by a let. */
static mt_texpr *Vl(mm *c, mt_tvar *v, int lanes) {
    mt_texpr *e = mt_te_var(c->a, v);
    e->lanes = lanes;
    return e;
}
static mt_tvar *ivar(mm *c, const char *name) { return mt_tvar_new(c->a, name, MT_INT64); }

/* Integer index arithmetic that folds constants and keeps a T.Ramp outermost
 * (x + Ramp(b, s, n) is Ramp(x + b, s, n)), so that an access whose last
 * index walks j is a unit-stride vector access after flattening. */
static mt_texpr *ix_add(mm *c, mt_texpr *x, mt_texpr *y) {
    mt_arena *a = c->a;
    if (x->kind == TE_RAMP && y->lanes == 1) return mt_te_ramp(a, ix_add(c, x->a, y), x->b, x->lanes);
    if (y->kind == TE_RAMP && x->lanes == 1) return mt_te_ramp(a, ix_add(c, x, y->a), y->b, y->lanes);
    if (x->kind == TE_RAMP && y->kind == TE_RAMP && x->lanes == y->lanes)
        return mt_te_ramp(a, ix_add(c, x->a, y->a), ix_add(c, x->b, y->b), x->lanes);
    int64_t cx, cy, c1;
    bool kx = cst(x, &cx), ky = cst(y, &cy);
    if (kx && ky) return I(c, (int64_t)((uint64_t)cx + (uint64_t)cy));
    if (kx && cx == 0) return y;
    if (ky && cy == 0) return x;
    if (ky && x->kind == TE_ADD && cst(x->b, &c1)) return ix_add(c, x->a, I(c, c1 + cy));
    return mt_te_bin(a, TE_ADD, x, y);
}

static mt_texpr *ix_mul(mm *c, mt_texpr *x, mt_texpr *y) {
    mt_arena *a = c->a;
    if (x->kind == TE_RAMP && y->lanes == 1)
        return mt_te_ramp(a, ix_mul(c, x->a, y), ix_mul(c, x->b, y), x->lanes);
    if (y->kind == TE_RAMP && x->lanes == 1) return ix_mul(c, y, x);
    int64_t cx, cy;
    bool kx = cst(x, &cx), ky = cst(y, &cy);
    if (kx && ky) return I(c, (int64_t)((uint64_t)cx * (uint64_t)cy));
    if ((kx && cx == 0) || (ky && cy == 0)) return I(c, 0);
    if (kx && cx == 1) return y;
    if (ky && cy == 1) return x;
    return mt_te_bin(a, TE_MUL, x, y);
}

static mt_texpr *ix_sub(mm *c, mt_texpr *x, mt_texpr *y) {
    int64_t cy;
    if (cst(y, &cy)) return ix_add(c, x, I(c, -cy));
    if (x->kind == TE_RAMP && y->lanes == 1) return mt_te_ramp(c->a, ix_sub(c, x->a, y), x->b, x->lanes);
    if (y->kind == TE_RAMP && x->lanes == 1)
        return mt_te_ramp(c->a, ix_sub(c, x, y->a), ix_mul(c, y->b, I(c, -1)), y->lanes);
    int64_t cx;
    if (cst(x, &cx) && x->lanes == 1 && cst(y, &cy)) return I(c, cx - cy);
    return mt_te_bin(c->a, TE_SUB, x, y);
}

static mt_texpr *ix_bin(mm *c, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) {
    int64_t cx, cy;
    if (cst(x, &cx) && cst(y, &cy)) {
        switch (k) {
        case TE_MIN: return I(c, cx < cy ? cx : cy);
        case TE_MAX: return I(c, cx > cy ? cx : cy);
        case TE_FLOORDIV:
            if (cy > 0) return I(c, cx >= 0 ? cx / cy : -((-cx + cy - 1) / cy));
            break;
        case TE_FLOORMOD:
            if (cy > 0) return I(c, ((cx % cy) + cy) % cy);
            break;
        default: break;
        }
    }
    if (k == TE_FLOORDIV && cst(y, &cy) && cy == 1) return x;
    return mt_te_bin(c->a, k, x, y);
}

static mt_texpr *ceildiv(mm *c, mt_texpr *x, int64_t d) {
    return ix_bin(c, TE_FLOORDIV, ix_add(c, x, I(c, d - 1)), I(c, d));
}

/* Rewrites an index expression with the ramp rules of ix_add and ix_mul. */
static mt_texpr *norm(mm *c, mt_texpr *e) {
    if (e->lanes == 1) return e;
    switch (e->kind) {
    case TE_ADD: return ix_add(c, norm(c, e->a), norm(c, e->b));
    case TE_SUB: return ix_sub(c, norm(c, e->a), norm(c, e->b));
    case TE_MUL: return ix_mul(c, norm(c, e->a), norm(c, e->b));
    default: return e;
    }
}

static mt_texpr *vramp(mm *c, mt_texpr *base, int lanes) {
    return lanes == 1 ? base : mt_te_ramp(c->a, base, I(c, 1), lanes);
}

static mt_texpr *fzero(mm *c, int lanes) {
    mt_texpr *z = mt_te_float(c->a, c->dt, 0.0);
    return lanes == 1 ? z : mt_te_broadcast(c->a, z, lanes);
}

typedef MT_VEC(mt_tstmt *) svec;
static void push(mm *c, svec *v, mt_tstmt *s) { MT_VEC_PUSH(c->a, v, s); }
static mt_tstmt *seq(mm *c, svec *v) { return mt_ts_seq(c->a, v->data, v->len); }
static mt_tstmt *seq2(mm *c, mt_tstmt *x, mt_tstmt *y) {
    mt_tstmt *s[2] = {x, y};
    return mt_ts_seq(c->a, s, 2);
}
static mt_tstmt *loop(mm *c, mt_tvar *v, mt_texpr *ext, mt_for_kind k, mt_tstmt *body) {
    return mt_ts_for(c->a, v, I(c, 0), ext, k, body);
}
static mt_texpr *lt(mm *c, mt_texpr *x, mt_texpr *y) { return mt_te_bin(c->a, TE_LT, x, y); }
static mt_texpr *le(mm *c, mt_texpr *x, mt_texpr *y) { return mt_te_bin(c->a, TE_LE, x, y); }
static mt_texpr *eq(mm *c, mt_texpr *x, mt_texpr *y) { return mt_te_bin(c->a, TE_EQ, x, y); }

static mt_tbuffer *local_buf(mm *c, const char *name, mt_texpr *extent, mt_dtype dt) {
    mt_tbuffer *b = mt_tbuffer_new(c->a, name, dt, 1, &extent);
    b->scope = MT_SCOPE_LOCAL;
    return b;
}

/* ---- facts about expressions ---------------------------------------------------- */

typedef struct uses_ctx {
    const mt_tvar *var;
    const mt_tbuffer *buf;
    bool found;
} uses_ctx;

static void uses_expr(mt_tvisitor *v, const mt_texpr *e) {
    uses_ctx *u = v->ctx;
    if ((u->var && e->kind == TE_VAR && e->var == u->var) ||
        (u->buf && e->kind == TE_LOAD && e->buf == u->buf)) {
        u->found = true;
        return;
    }
    mt_tvisit_expr_children(v, e);
}

static bool uses_var(const mt_texpr *e, const mt_tvar *x) {
    uses_ctx u = {x, NULL, false};
    mt_tvisitor v = {uses_expr, NULL, &u};
    mt_tvisit_expr(&v, e);
    return u.found;
}

static bool reads_buf(const mt_texpr *e, const mt_tbuffer *b) {
    uses_ctx u = {NULL, b, false};
    mt_tvisitor v = {uses_expr, NULL, &u};
    mt_tvisit_expr(&v, e);
    return u.found;
}

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
        int64_t s;
        if (!(ix->kind == TE_BROADCAST || (ix->kind == TE_RAMP && cst(ix->b, &s) && s == 1)))
            *(bool *)v->ctx = false;
    }
    mt_tvisit_expr_children(v, e);
}

static bool is_param(mm *c, const mt_tbuffer *b) {
    for (int i = 0; i < c->f->nparams; i++)
        if (c->f->params[i].buf == b) return true;
    return false;
}

/* ---- flattening ------------------------------------------------------------------
 * The rule emits the lowered form directly: flatten_buffers would build
 * `i * N + T.Ramp(j, 1, 16)`, which codegen scalarizes; here the ramp takes the
 * whole offset, `T.Ramp(i * N + j, 1, 16)`, one vector access. */

static fbuf *fb_get(mm *c, mt_tbuffer *b) {
    for (int i = 0; i < c->fb.len; i++)
        if (c->fb.data[i].old == b) return &c->fb.data[i];
    fbuf e;
    memset(&e, 0, sizeof e);
    e.old = b;
    if (b->ndim == 1) {
        e.flat = b;
        e.stride[0] = I(c, 1);
    } else {
        mt_texpr *extent = I(c, 1);
        for (int k = 0; k < b->ndim; k++) extent = ix_mul(c, extent, mt_te_cast(c->a, MT_INT64, b->shape[k]));
        for (int k = b->ndim - 1; k >= 0; k--)
            e.stride[k] = k == b->ndim - 1
                              ? I(c, 1)
                              : ix_mul(c, mt_te_cast(c->a, MT_INT64, b->shape[k + 1]), e.stride[k + 1]);
        e.flat = mt_tbuffer_new(c->a, b->name, b->dtype, 1, &extent);
        e.flat->scope = b->scope;
    }
    MT_VEC_PUSH(c->a, &c->fb, e);
    return &c->fb.data[c->fb.len - 1];
}

static mt_texpr *flat_index(mm *c, const fbuf *e, mt_texpr *const *idx, int n) {
    mt_texpr *sum = I(c, 0);
    for (int k = 0; k < n; k++)
        sum = ix_add(c, sum, ix_mul(c, norm(c, mt_te_cast(c->a, MT_INT64, idx[k])), e->stride[k]));
    return sum;
}

static mt_texpr *flat_load(mm *c, mt_tbuffer *b, mt_texpr *const *idx, int n) {
    fbuf *e = fb_get(c, b);
    mt_texpr *i = flat_index(c, e, idx, n);
    return mt_te_load(c->a, e->flat, &i, 1);
}

/* b[batch..., i, j] for a buffer of C's shape. */
static mt_texpr *at_ij(mm *c, mt_tbuffer *b, mt_texpr *i, mt_texpr *j) {
    mt_texpr *idx[MM_MAXS];
    for (int d = 0; d < c->ns - 2; d++) idx[d] = c->bv[d];
    idx[c->ns - 2] = i;
    idx[c->ns - 1] = j;
    return flat_index(c, fb_get(c, b), idx, c->ns);
}

static mt_texpr *load_ij(mm *c, mt_tbuffer *b, mt_texpr *i, mt_texpr *j) {
    mt_texpr *ix = at_ij(c, b, i, j);
    return mt_te_load(c->a, fb_get(c, b)->flat, &ix, 1);
}

static mt_tstmt *store_ij(mm *c, mt_tbuffer *b, mt_texpr *i, mt_texpr *j, mt_texpr *v) {
    mt_texpr *ix = at_ij(c, b, i, j);
    return mt_ts_store(c->a, fb_get(c, b)->flat, &ix, 1, v);
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
        return flat_load(l->c, e->buf, idx, e->nargs);
    }
    return mt_tmutate_expr_children(m, e);
}

static mt_texpr *lower(mm *c, mt_texpr *e, mt_tvar *const *vars, mt_texpr *const *vals, int n,
                       mt_tbuffer *const *rbuf, mt_texpr *const *rval, int nr) {
    lower_ctx l = {c, vars, vals, n, rbuf, rval, nr};
    mt_tmutator m = {c->a, lower_hook, NULL, &l};
    return mt_tmutate_expr(&m, e);
}

/* An operand at (batch, i, k) or (batch, k, j). */
static mt_texpr *operand(mm *c, mt_texpr *e, mt_texpr *i, mt_texpr *j, mt_texpr *k) {
    mt_tvar *vars[MM_MAXS + 1];
    mt_texpr *vals[MM_MAXS + 1];
    int n = 0;
    for (int d = 0; d < c->ns - 2; d++) vars[n] = c->sv[d], vals[n++] = c->bv[d];
    vars[n] = c->sv[c->ns - 2], vals[n++] = i ? i : I(c, 0);
    vars[n] = c->sv[c->ns - 1], vals[n++] = j ? j : I(c, 0);
    vars[n] = c->kv, vals[n++] = k;
    return lower(c, e, vars, vals, n, NULL, NULL, 0);
}

/* ---- matching ---------------------------------------------------------------------- */

typedef struct nest {
    int nloops;
    mt_tstmt *blk;
} nest;

/* A perfect nest of serial loops from 0 around one block whose iter vars are
 * bound one to one to the loop vars, each over its loop's extent. */
static bool parse_nest(mt_tstmt *s, nest *n) {
    const mt_tstmt *loops[MM_MAXS + 2];
    n->nloops = 0;
    while (s->kind == TS_FOR) {
        int64_t lo;
        if (n->nloops == MM_MAXS + 2 || s->for_kind != MT_FOR_SERIAL || !cst(s->min, &lo) || lo != 0)
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
static bool spatial_index(const mt_tstmt *blk, mt_texpr *const *idx, int n, mt_tvar **sv) {
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
static bool written(mm *c, const mt_tbuffer *b) {
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
    c->vl = 64 / (int)mt_dtype_size(c->dt);
    c->ns = init->nidx;
    if (c->ns < 2 || !is_fzero(init->value) || !spatial_index(blk, init->idx, init->nidx, c->sv))
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
    if (uses_var(c->X, j) || uses_var(c->Y, i)) {
        mt_texpr *t = c->X;
        c->X = c->Y, c->Y = t;
    }
    if (uses_var(c->X, j) || uses_var(c->Y, i) || reads_buf(prod, c->C)) return false;
    return same_shape(c, c->C);
}

static bool match_epilogue(mm *c, const mt_tstmt *blk) {
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
    if (written(c, e->out) || !same_shape(c, e->out) || e->value->lanes != 1) return false;
    if (reads_buf(c->X, e->out) || reads_buf(c->Y, e->out)) return false;
    if (!loads_at(e->value, c->C, e->iv, c->ns) || reads_buf(e->value, e->out)) return false;
    for (int p = 0; p < c->nep; p++)
        if (!loads_at(e->value, c->ep[p].out, e->iv, c->ns)) return false;
    c->nep++;
    return true;
}

/* if ...: C[...] = 0 (legalize's fill for a symbolic K; the rule writes all
 * of C whatever K is, zeros included). */
static bool match_guard(mm *c, const mt_tstmt *s) {
    nest n;
    if (s->kind != TS_IF || s->else_s || !parse_nest(s->then_s, &n)) return false;
    const mt_tstmt *b = n.blk->body;
    return !n.blk->init && b && b->kind == TS_STORE && b->buf == c->C && is_fzero(b->value);
}

static bool match(mm *c) {
    mt_tfunc *f = c->f;
    if (!f->body) return false;
    mt_tstmt *const *st = f->body->kind == TS_SEQ ? f->body->stmts : &f->body;
    int n = f->body->kind == TS_SEQ ? f->body->nstmts : 1, p = 0;
    const mt_tstmt *guard = NULL;
    if (p < n && st[p]->kind == TS_IF) guard = st[p++];
    nest ns;
    if (p == n || !parse_nest(st[p++], &ns) || !match_matmul(c, ns.blk)) return false;
    if (guard && !match_guard(c, guard)) return false;
    for (; p < n; p++)
        if (!parse_nest(st[p], &ns) || !match_epilogue(c, ns.blk)) return false;
    for (int i = 0; i < f->nallocs; i++)
        if (!written(c, f->allocs[i])) return false;
    return true;
}

/* ---- the register tile ------------------------------------------------------------- */

/* The columns of a tile: nv vectors, lanes[v] wide at offset off[v]. */
typedef struct cols {
    int nv, width, lanes[MM_MAXV], off[MM_MAXV];
} cols;

static cols mk_cols(int width, int vl) {
    cols s;
    memset(&s, 0, sizeof s);
    s.width = width;
    for (int o = 0; o < width && s.nv < MM_MAXV; o += vl) {
        s.off[s.nv] = o;
        s.lanes[s.nv] = width - o < vl ? width - o : vl;
        s.nv++;
    }
    return s;
}

typedef struct tile {
    int mr;
    cols cs;
    mt_texpr *i0, *j0, *k0, *kc;
    mt_tbuffer *bp;           /* packed B, or NULL: Y is loaded in place */
    mt_texpr *bp_base;
    mt_texpr *first, *last;   /* first / last K block (NULL: K is not blocked) */
    bool masked;              /* j0 + width may pass N: through tmp when it does */
    mt_tbuffer *ap;           /* packed A sliver [kk][ii], or NULL: X in place */
} tile;

/* Accumulator slot (ii, v): a vector at a constant offset, so that SROA
 * turns the whole buffer into registers. */
static mt_texpr *slot(mm *c, const tile *t, int ii, int v) {
    return vramp(c, I(c, (int64_t)ii * t->cs.nv * c->vl + t->cs.off[v]), t->cs.lanes[v]);
}

static mt_texpr *acc_ld(mm *c, mt_tbuffer *acc, mt_texpr *ix) { return mt_te_load(c->a, acc, &ix, 1); }
static mt_tstmt *acc_st(mm *c, mt_tbuffer *acc, mt_texpr *ix, mt_texpr *v) {
    return mt_ts_store(c->a, acc, &ix, 1, v);
}

/* The final values of elements (i, j) whose matmul value is mval: C when it
 * is a parameter, then each epilogue in order, each bound by a let so that
 * later ones read it. */
static mt_tstmt *final_stores(mm *c, mt_texpr *i, mt_texpr *j, mt_texpr *mval) {
    mt_arena *a = c->a;
    mt_tvar *mv = mt_tvar_new(a, "m", c->dt);
    mt_tbuffer *rbuf[MM_MAXE + 1];
    mt_texpr *rval[MM_MAXE + 1], *val[MM_MAXE], *vals[MM_MAXS];
    rbuf[0] = c->C;
    rval[0] = Vl(c, mv, mval->lanes);
    for (int d = 0; d < c->ns - 2; d++) vals[d] = c->bv[d];
    vals[c->ns - 2] = i;
    vals[c->ns - 1] = j;
    for (int e = 0; e < c->nep; e++) {
        val[e] = lower(c, c->ep[e].value, c->ep[e].iv, vals, c->ns, rbuf, rval, e + 1);
        rbuf[e + 1] = c->ep[e].out;
        rval[e + 1] = Vl(c, mt_tvar_new(a, "e", val[e]->dtype), val[e]->lanes);
    }
    mt_tstmt *rest = mt_ts_seq(a, NULL, 0);
    for (int e = c->nep - 1; e >= 0; e--) {
        if (is_param(c, c->ep[e].out)) rest = seq2(c, store_ij(c, c->ep[e].out, i, j, rval[e + 1]), rest);
        rest = mt_ts_let(a, rval[e + 1]->var, val[e], rest);
    }
    if (is_param(c, c->C)) rest = seq2(c, store_ij(c, c->C, i, j, rval[0]), rest);
    return mt_ts_let(a, mv, mval, rest);
}

/* The tile through tmp when it passes N (symbolic N: a padded sliver):
 * init: tmp = 0, tmp[ii, jj] = P[i0 + ii, j0 + jj] for j0 + jj < N, acc = tmp;
 * store: tmp = acc, then element by element for j0 + jj < N. */
static mt_tstmt *via_tmp(mm *c, const tile *t, mt_tbuffer *acc, bool init) {
    int row = t->cs.nv * c->vl;
    mt_tbuffer *tmp = local_buf(c, "tmp", I(c, (int64_t)t->mr * row), c->dt);
    mt_tvar *r = ivar(c, "ii"), *q = ivar(c, "jj");
    mt_texpr *i = ix_add(c, t->i0, V(c, r)), *j = ix_add(c, t->j0, V(c, q));
    mt_texpr *tix = ix_add(c, ix_mul(c, V(c, r), I(c, row)), V(c, q));
    mt_tstmt *el;
    if (init) {
        el = acc_st(c, tmp, tix, load_ij(c, c->P, i, j));
    } else {
        mt_texpr *m = acc_ld(c, tmp, tix);
        el = final_stores(c, i, j, m);
        if (t->last) el = mt_ts_if(c->a, t->last, el, store_ij(c, c->P, i, j, m));
    }
    mt_tstmt *each = loop(c, r, I(c, t->mr), MT_FOR_SERIAL,
                          loop(c, q, ix_sub(c, c->ext[c->ns - 1], t->j0), MT_FOR_SERIAL, el));
    svec s = {0}, back = {0};
    for (int ii = 0; ii < t->mr; ii++)
        for (int v = 0; v < t->cs.nv; v++) {
            mt_texpr *sl = slot(c, t, ii, v);
            push(c, &s, acc_st(c, tmp, sl, init ? fzero(c, t->cs.lanes[v]) : acc_ld(c, acc, sl)));
            if (init) push(c, &back, acc_st(c, acc, sl, acc_ld(c, tmp, sl)));
        }
    push(c, &s, each);
    for (int k = 0; k < back.len; k++) push(c, &s, back.data[k]);
    return mt_ts_alloc(c->a, tmp, seq(c, &s));
}

/* acc = 0, or in a later K block the partial sums from P. */
static mt_tstmt *tile_init(mm *c, const tile *t, mt_tbuffer *acc) {
    svec z = {0}, ld = {0};
    for (int ii = 0; ii < t->mr; ii++)
        for (int v = 0; v < t->cs.nv; v++) {
            mt_texpr *sl = slot(c, t, ii, v);
            push(c, &z, acc_st(c, acc, sl, fzero(c, t->cs.lanes[v])));
            if (t->first) {
                mt_texpr *j = vramp(c, ix_add(c, t->j0, I(c, t->cs.off[v])), t->cs.lanes[v]);
                push(c, &ld, acc_st(c, acc, sl, load_ij(c, c->P, ix_add(c, t->i0, I(c, ii)), j)));
            }
        }
    if (!t->first) return seq(c, &z);
    mt_tstmt *loads = seq(c, &ld);
    if (t->masked)
        loads = mt_ts_if(c->a, le(c, ix_add(c, t->j0, I(c, t->cs.width)), c->ext[c->ns - 1]), loads,
                         via_tmp(c, t, acc, true));
    return mt_ts_if(c->a, t->first, seq(c, &z), loads);
}

/* The final values (epilogue applied) after the last K block, the partial
 * sums to P after the others. */
static mt_tstmt *tile_store(mm *c, const tile *t, mt_tbuffer *acc) {
    svec fin = {0}, part = {0};
    for (int ii = 0; ii < t->mr; ii++)
        for (int v = 0; v < t->cs.nv; v++) {
            mt_texpr *i = ix_add(c, t->i0, I(c, ii));
            mt_texpr *j = vramp(c, ix_add(c, t->j0, I(c, t->cs.off[v])), t->cs.lanes[v]);
            mt_texpr *m = acc_ld(c, acc, slot(c, t, ii, v));
            push(c, &fin, final_stores(c, i, j, m));
            if (t->last) push(c, &part, store_ij(c, c->P, i, j, m));
        }
    mt_tstmt *vec = t->last ? mt_ts_if(c->a, t->last, seq(c, &fin), seq(c, &part)) : seq(c, &fin);
    if (!t->masked) return vec;
    return mt_ts_if(c->a, le(c, ix_add(c, t->j0, I(c, t->cs.width)), c->ext[c->ns - 1]), vec,
                    via_tmp(c, t, acc, false));
}

/* One register tile: acc (mr x width) = 0 or the partial sums; for each k
 * of the block, mr broadcasts of X times nv vectors of B; then the stores. */
static mt_tstmt *gen_tile(mm *c, const tile *t) {
    mt_arena *a = c->a;
    int nv = t->cs.nv;
    mt_tbuffer *acc = local_buf(c, "acc", I(c, (int64_t)t->mr * nv * c->vl), c->dt);
    mt_tvar *kk = ivar(c, "kk");
    mt_texpr *k = ix_add(c, t->k0, V(c, kk));
    mt_tvar *av[MM_MAXR], *bw[MM_MAXV];
    svec fm = {0};
    for (int ii = 0; ii < t->mr; ii++) av[ii] = mt_tvar_new(a, "aik", c->dt);
    for (int v = 0; v < nv; v++) bw[v] = mt_tvar_new(a, "bkj", c->dt);
    for (int ii = 0; ii < t->mr; ii++)
        for (int v = 0; v < nv; v++) {
            mt_texpr *s = slot(c, t, ii, v);
            mt_texpr *args[3] = {V(c, av[ii]), Vl(c, bw[v], t->cs.lanes[v]), acc_ld(c, acc, s)};
            push(c, &fm, acc_st(c, acc, s, mt_te_call(a, IN_FMA, args, 3)));
        }
    mt_tstmt *body = seq(c, &fm);
    for (int v = nv - 1; v >= 0; v--) {
        mt_texpr *bval;
        if (t->bp) {
            mt_texpr *ix = ix_add(c, t->bp_base,
                                  ix_add(c, ix_mul(c, V(c, kk), I(c, t->cs.width)), I(c, t->cs.off[v])));
            ix = vramp(c, ix, t->cs.lanes[v]);
            bval = mt_te_load(a, t->bp, &ix, 1);
        } else {
            bval = operand(c, c->Y, NULL,
                           vramp(c, ix_add(c, t->j0, I(c, t->cs.off[v])), t->cs.lanes[v]), k);
        }
        body = mt_ts_let(a, bw[v], bval, body);
    }
    for (int ii = t->mr - 1; ii >= 0; ii--) {
        mt_texpr *aval;
        if (t->ap) {
            mt_texpr *ix = ix_add(c, ix_mul(c, V(c, kk), I(c, t->mr)), I(c, ii));
            aval = mt_te_load(a, t->ap, &ix, 1);
        } else {
            aval = operand(c, c->X, ix_add(c, t->i0, I(c, ii)), NULL, k);
        }
        body = mt_ts_let(a, av[ii], aval, body);
    }
    mt_tstmt *kloop = loop(c, kk, t->kc, MT_FOR_SERIAL, body);
    svec s = {0};
    push(c, &s, tile_init(c, t, acc));
    push(c, &s, kloop);
    push(c, &s, tile_store(c, t, acc));
    return mt_ts_alloc(a, acc, seq(c, &s));
}

/* ---- packing ------------------------------------------------------------------------ */

/* B[k0:k0+kc, j0:j0+width] into bp[base + kk * width + jj]; padded: columns
 * at or past N are zeros. */
static mt_tstmt *gen_pack(mm *c, mt_tbuffer *bp, mt_texpr *base, mt_texpr *j0, cols cs, bool padded,
                          mt_texpr *k0, mt_texpr *kc) {
    mt_arena *a = c->a;
    mt_tvar *kk = ivar(c, "kk");
    mt_texpr *k = ix_add(c, k0, V(c, kk));
    mt_texpr *row = ix_add(c, base, ix_mul(c, V(c, kk), I(c, cs.width)));
    if (!padded && c->y_vec) {
        svec s = {0};
        for (int v = 0; v < cs.nv; v++) {
            mt_texpr *ix = vramp(c, ix_add(c, row, I(c, cs.off[v])), cs.lanes[v]);
            mt_texpr *val = operand(c, c->Y, NULL, vramp(c, ix_add(c, j0, I(c, cs.off[v])), cs.lanes[v]), k);
            push(c, &s, mt_ts_store(a, bp, &ix, 1, val));
        }
        return loop(c, kk, kc, MT_FOR_SERIAL, seq(c, &s));
    }
    mt_tvar *jj = ivar(c, "jj");
    mt_texpr *j = ix_add(c, j0, V(c, jj)), *val;
    if (padded) {
        mt_texpr *N = c->ext[c->ns - 1];
        mt_texpr *jc = ix_bin(c, TE_MIN, j, ix_sub(c, N, I(c, 1)));
        val = mt_te_select(a, lt(c, j, N), operand(c, c->Y, NULL, jc, k), fzero(c, 1));
    } else {
        val = operand(c, c->Y, NULL, j, k);
    }
    mt_texpr *ix = ix_add(c, row, V(c, jj));
    mt_tstmt *st = mt_ts_store(a, bp, &ix, 1, val);
    return loop(c, jj, I(c, cs.width), MT_FOR_SERIAL, loop(c, kk, kc, MT_FOR_SERIAL, st));
}

/* ---- the loop nests ------------------------------------------------------------------ */

enum { SL_FULL, SL_EXACT, SL_PADDED };

/* What the slivers of one column block share. */
typedef struct panel {
    mt_texpr *jc0;            /* first column of the block */
    mt_texpr *ncols;          /* its width */
    mt_texpr *k0, *kc, *first, *last;
    mt_tbuffer *bp;           /* NULL: direct */
    mt_texpr *kcap;           /* bp depth */
    mt_tbuffer *ap;           /* the current row block's packed A, or NULL */
} panel;

static mt_tstmt *sliver(mm *c, const panel *p, mt_texpr *jr, int kind, bool pack, int mr, mt_texpr *i0) {
    int nr = tune.nv * c->vl;
    int64_t Nc = 0;
    cst(c->ext[c->ns - 1], &Nc);
    cols cs = mk_cols(kind == SL_EXACT ? (int)(Nc % nr) : nr, c->vl);
    mt_texpr *j0 = ix_add(c, p->jc0, ix_mul(c, jr, I(c, nr)));
    mt_texpr *base = p->bp ? ix_mul(c, jr, ix_mul(c, p->kcap, I(c, nr))) : NULL;
    if (pack) return gen_pack(c, p->bp, base, j0, cs, kind == SL_PADDED, p->k0, p->kc);
    tile t = {mr, cs, i0, j0, p->k0, p->kc, p->bp, base, p->first, p->last, kind == SL_PADDED, p->ap};
    return gen_tile(c, &t);
}

/* The sliver jr of a column block, full or the tail. */
static mt_tstmt *sliver_switch(mm *c, const panel *p, mt_texpr *jr, bool pack, int mr, mt_texpr *i0) {
    int nr = tune.nv * c->vl;
    int64_t Nc;
    if (cst(c->ext[c->ns - 1], &Nc)) {
        if (Nc % nr == 0) return sliver(c, p, jr, SL_FULL, pack, mr, i0);
        return mt_ts_if(c->a, lt(c, jr, ix_bin(c, TE_FLOORDIV, p->ncols, I(c, nr))),
                        sliver(c, p, jr, SL_FULL, pack, mr, i0), sliver(c, p, jr, SL_EXACT, pack, mr, i0));
    }
    /* symbolic N: a padded sliver computes like a full one; one tile does
     * both, its loads and stores test j0 + NR <= N */
    if (!pack) return sliver(c, p, jr, SL_PADDED, pack, mr, i0);
    mt_texpr *j0 = ix_add(c, p->jc0, ix_mul(c, jr, I(c, nr)));
    return mt_ts_if(c->a, le(c, ix_add(c, j0, I(c, nr)), c->ext[c->ns - 1]),
                    sliver(c, p, jr, SL_FULL, pack, mr, i0), sliver(c, p, jr, SL_PADDED, pack, mr, i0));
}

/* Rows [i0, i0 + mr): the sliver jr, or (jr NULL) every sliver of the block. */
static mt_tstmt *row_tiles(mm *c, const panel *p, mt_texpr *jr, int mr, mt_texpr *i0) {
    if (jr) return sliver_switch(c, p, jr, false, mr, i0);
    mt_tvar *v = ivar(c, "jr");
    int64_t kcap;
    if (c->X->kind == TE_LOAD || !cst(p->kcap, &kcap) || kcap * mr * (int64_t)mt_dtype_size(c->dt) > 65536)
        return loop(c, v, ceildiv(c, p->ncols, tune.nv * c->vl), MT_FOR_SERIAL,
                    sliver_switch(c, p, V(c, v), false, mr, i0));
    /* the A sliver once for all column slivers: [kk][ii], mr values per k */
    panel q = *p;
    q.ap = local_buf(c, "A_pack", I(c, kcap * mr), c->dt);
    mt_tvar *kk = ivar(c, "kk");
    svec s = {0};
    for (int ii = 0; ii < mr; ii++) {
        mt_texpr *ix = ix_add(c, ix_mul(c, V(c, kk), I(c, mr)), I(c, ii));
        mt_texpr *val = operand(c, c->X, ix_add(c, i0, I(c, ii)), NULL, ix_add(c, p->k0, V(c, kk)));
        push(c, &s, mt_ts_store(c->a, q.ap, &ix, 1, val));
    }
    mt_tstmt *pk = loop(c, kk, p->kc, MT_FOR_SERIAL, seq(c, &s));
    mt_tstmt *tiles = loop(c, v, ceildiv(c, p->ncols, tune.nv * c->vl), MT_FOR_SERIAL,
                           sliver_switch(c, &q, V(c, v), false, mr, i0));
    return mt_ts_alloc(c->a, q.ap, seq2(c, pk, tiles));
}

/* All rows: blocks of MR (across threads when par), then the M % MR left,
 * as one tile of that height (M constant) or one row at a time. */
static mt_tstmt *rows(mm *c, const panel *p, mt_texpr *jr, bool par) {
    int MR = tune.mr;
    mt_texpr *M = c->ext[c->ns - 2];
    mt_tvar *io = ivar(c, "io");
    svec s = {0};
    push(c, &s, loop(c, io, ix_bin(c, TE_FLOORDIV, M, I(c, MR)), par ? MT_FOR_PARALLEL : MT_FOR_SERIAL,
                     row_tiles(c, p, jr, MR, ix_mul(c, V(c, io), I(c, MR)))));
    int64_t Mc;
    if (cst(M, &Mc)) {
        if (Mc % MR) push(c, &s, row_tiles(c, p, jr, (int)(Mc % MR), I(c, Mc - Mc % MR)));
    } else {
        mt_tvar *ir = ivar(c, "ir");
        mt_texpr *base = ix_mul(c, ix_bin(c, TE_FLOORDIV, M, I(c, MR)), I(c, MR));
        push(c, &s, loop(c, ir, ix_bin(c, TE_FLOORMOD, M, I(c, MR)), MT_FOR_SERIAL,
                         row_tiles(c, p, jr, 1, ix_add(c, base, V(c, ir)))));
    }
    return seq(c, &s);
}

static mt_tstmt *wrap_batch(mm *c, mt_tstmt *(*gen)(mm *)) {
    mt_tvar *bvar[MM_MAXS];
    for (int d = 0; d < c->ns - 2; d++) {
        bvar[d] = ivar(c, "bi");
        c->bv[d] = V(c, bvar[d]);
    }
    mt_tstmt *s = gen(c);
    for (int d = c->ns - 3; d >= 0; d--) s = loop(c, bvar[d], c->ext[d], MT_FOR_SERIAL, s);
    return s;
}

/* Small M: B read in place (no packing to amortize), column slivers across
 * threads, all rows of a sliver inside, so that the sliver stays in L2. */
static mt_tstmt *direct_body(mm *c) {
    panel p = {I(c, 0), c->ext[c->ns - 1], I(c, 0), c->K, NULL, NULL, NULL, NULL, NULL};
    mt_tvar *jr = ivar(c, "jr");
    return loop(c, jr, ceildiv(c, c->ext[c->ns - 1], tune.nv * c->vl), MT_FOR_PARALLEL,
                rows(c, &p, V(c, jr), false));
}

/* Large M: the GotoBLAS loops. For each column block (nc wide) and K block
 * (kc deep), pack that block of B into bp, then all row blocks in parallel. */
static mt_tstmt *packed_body(mm *c) {
    int nr = tune.nv * c->vl;
    mt_texpr *N = c->ext[c->ns - 1], *K = c->K;
    int64_t Nc;
    bool one_jc = cst(N, &Nc) && Nc <= c->ncblk;
    mt_tvar *jc = ivar(c, "jc"), *pc = ivar(c, "pc"), *jr = ivar(c, "jr");
    panel p;
    p.jc0 = one_jc ? I(c, 0) : ix_mul(c, V(c, jc), I(c, c->ncblk));
    p.ncols = one_jc ? N : ix_bin(c, TE_MIN, I(c, c->ncblk), ix_sub(c, N, p.jc0));
    int64_t Kc;
    if (cst(N, &Nc) && Nc % c->ncblk == 0) p.ncols = I(c, c->ncblk);
    mt_texpr *npc = NULL;
    if (c->split) {
        npc = ix_bin(c, TE_MAX, I(c, 1), ceildiv(c, K, c->kcblk));
        p.k0 = ix_mul(c, V(c, pc), I(c, c->kcblk));
        p.kc = cst(K, &Kc) && Kc % c->kcblk == 0 ? I(c, c->kcblk)
                                                  : ix_bin(c, TE_MIN, I(c, c->kcblk), ix_sub(c, K, p.k0));
        p.first = eq(c, V(c, pc), I(c, 0));
        p.last = eq(c, V(c, pc), ix_sub(c, npc, I(c, 1)));
    } else {
        p.k0 = I(c, 0);
        p.kc = K;
        p.first = p.last = NULL;
    }
    p.bp = c->bp;
    p.kcap = c->kcap;
    p.ap = NULL;
    mt_tstmt *pack = loop(c, jr, ceildiv(c, p.ncols, nr), MT_FOR_PARALLEL,
                          sliver_switch(c, &p, V(c, jr), true, 0, NULL));
    mt_tstmt *body = seq2(c, pack, rows(c, &p, NULL, true));
    if (c->split) body = loop(c, pc, npc, MT_FOR_SERIAL, body);
    if (!one_jc) body = loop(c, jc, ceildiv(c, N, c->ncblk), MT_FOR_SERIAL, body);
    return body;
}

static mt_tstmt *gen_packed(mm *c) {
    int nr = tune.nv * c->vl;
    mt_texpr *N = c->ext[c->ns - 1], *K = c->K, *ncap;
    int64_t Nc, Kc;
    c->kcblk = tune.kc;
    c->ncblk = tune.nc;
    if (cst(K, &Kc) && Kc <= 2 * c->kcblk) {
        c->split = false;
        c->kcap = I(c, Kc > 0 ? Kc : 1);
    } else if (c->P) {
        c->split = true;
        c->kcap = I(c, c->kcblk);
    } else {
        c->split = false;
        c->kcap = K;
    }
    /* the packed block within 1 MiB (L2) when its depth is known */
    int64_t kcap;
    if (cst(c->kcap, &kcap)) {
        int64_t fit = ((int64_t)1 << 20) / (int64_t)mt_dtype_size(c->dt) / kcap / nr * nr;
        if (fit < c->ncblk) c->ncblk = fit > nr ? fit : nr;
    }
    ncap = I(c, cst(N, &Nc) && Nc <= c->ncblk ? (Nc + nr - 1) / nr * nr : c->ncblk);
    c->bp = local_buf(c, "B_pack", ix_mul(c, c->kcap, ncap), c->dt);
    c->bp->scope = MT_SCOPE_GLOBAL;
    return mt_ts_alloc(c->a, c->bp, wrap_batch(c, packed_body));
}

/* ---- entry ----------------------------------------------------------------------------- */

mt_tfunc *mt_schedule_matmul_cpu(mt_arena *a, mt_tfunc *f, int *applied) {
    if (applied) *applied = 0;
    mm *c = MT_NEW(a, mm);
    c->a = a;
    c->f = f;
    if (!match(c)) return f;

    /* partial sums across K blocks live in C, or in an output of C's dtype */
    if (is_param(c, c->C)) c->P = c->C;
    for (int e = 0; e < c->nep && !c->P; e++)
        if (is_param(c, c->ep[e].out) && c->ep[e].out->dtype == c->dt) c->P = c->ep[e].out;

    /* params first, so that they are flattened in order */
    mt_tparam *params = MT_NEW_ARRAY(a, mt_tparam, f->nparams > 0 ? f->nparams : 1);
    for (int i = 0; i < f->nparams; i++) {
        params[i] = f->params[i];
        if (params[i].buf) params[i].buf = fb_get(c, params[i].buf)->flat;
    }

    /* can Y be read as vectors along j? */
    {
        mt_tvar *j0 = ivar(c, "j0"), *k = ivar(c, "k");
        for (int d = 0; d < c->ns - 2; d++) c->bv[d] = V(c, ivar(c, "b"));
        mt_texpr *y = operand(c, c->Y, NULL, vramp(c, V(c, j0), c->vl), V(c, k));
        bool ok = true;
        mt_tvisitor v = {vec_expr, NULL, &ok};
        mt_tvisit_expr(&v, y);
        c->y_vec = ok;
    }

    mt_texpr *M = c->ext[c->ns - 2], *N = c->ext[c->ns - 1];
    int64_t Mc, Nc;
    bool direct_ok = c->y_vec && cst(N, &Nc);
    mt_tstmt *body;
    if (!direct_ok) body = gen_packed(c);
    else if (cst(M, &Mc)) body = Mc < tune.pack_min_m ? wrap_batch(c, direct_body) : gen_packed(c);
    else {
        mt_tstmt *d = wrap_batch(c, direct_body);
        body = mt_ts_if(a, lt(c, M, I(c, tune.pack_min_m)), d, gen_packed(c));
    }

    mt_tfunc *g = MT_NEW(a, mt_tfunc);
    *g = *f;
    g->params = params;
    g->allocs = NULL;
    g->nallocs = 0;
    g->body = body;
    if (applied) *applied = 1;
    return g;
}

mt_tfunc *mt_schedule_matmul_pass(mt_arena *a, mt_tfunc *f) {
    return mt_schedule_matmul_cpu(a, f, NULL);
}
