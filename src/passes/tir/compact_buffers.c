/*
 * compact_buffers.c -- a buffer that each execution of a statement fills
 * and then only reads (or updates in place) becomes a buffer of the size
 * of the box it fills.
 *
 *     b_global = T.alloc_buffer((1024, 1024))        for i2_0 in T.parallel(64):
 *     for i2_0 in T.parallel(64):                        b_global = T.alloc_buffer((1024, 16))
 *         for ax0, ax1 in T.grid(1024, 16):       ->     for ax0, ax1 in T.grid(1024, 16):
 *             b_global[ax0, i2_0 * 16 + ax1] = b[..]          b_global[ax0, ax1] = b[..]
 *         for i0_0 in range(171): ...                    for i0_0 in range(171): ...
 *             .. b_global[i1, i2_0 * 16 + i2_1] ..           .. b_global[i1, i2_1] ..
 *
 * That is what `cache_read` then `compute_at` leave (docs/schedule.md): the
 * copy keeps the whole shape of what it copies, one region of it filled per
 * iteration. Compacted, the region is contiguous (a matmul's packed panel
 * of B, read as vectors along k), each thread of a parallel loop has its
 * own, and it is small enough for the stack and the caches. This is TVM's
 * CompactBufferAllocation for the case a schedule makes.
 *
 * When: for an allocation X (of constant shape, or of a run-time size
 * when the box is constant: per row of a symbolic batch; on a GPU, below), the
 * statement P holding every access to X (going down from the allocation
 * through loops, lets, other allocations and sequences with a single item
 * that touches X; a sequence's nested sequences count as its items) is a
 * sequence (the loops and lets passed on the way read no X) whose first
 * item touching X, W, is a perfect nest of loops from 0 around one store
 * X[o_0 + r_0, ..] whose value does not read X: each index a part o_d
 * free of the variables bound inside P and of loads, plus r_d, one of the
 * nest's variables or the digits of a split of them (v1 * e0 + v0 for
 * loops of constant extents e1, e0: coefficients 1, e0, e0 * e1, ..., a
 * box extent of their product; or v * c + u for the two loops of a split
 * of a run-time extent R, v over (R + c - 1) // c and u over T.min(c, R -
 * v * c): a box extent R, split_pair), every nest variable in exactly one
 * index, each loop's extent a constant or (a variable alone in its index)
 * a split's clamped T.min(c, ..) free of P's variables and of loads; and
 * every later item loads (or stores: a reduction's update after its
 * init, W) X only at indices o_d + r_d with the same parts o_d (or o_d
 * plus a constant c, a stencil's X[i + 1]: then r_d + c stands for r_d)
 * and r_d (of variables bound inside P) within [0, extent_d): over the
 * ranges of the loops inside P for a constant extent, else r_d the
 * variable of a loop from 0 with that same extent, or, for an extent
 * T.min(c, shape_d - o_d) (the box runs to the end of X's dim:
 * compute_at's region of a copy under splits with tails), within [0, c)
 * over the ranges. Then each execution of P writes the
 * whole box [o_d, o_d + extent_d) before it reads anything of X, and
 * touches nothing outside it: X becomes a buffer of the box's shape (the
 * constant bound c of a clamped extent), indexed by r_d, allocated where X
 * was when every loop between is serial or unrolled and the target is the
 * CPU (once: a copy under a serial loop over column blocks would be
 * malloc'd and freed per block), else around P (under a parallel loop,
 * each iteration its own). Anything else is left as it was. Indices of X
 * through // and % (a transform_layout) are first simplified with the
 * ranges of the loops around them, which turns (j0 * 16 + j1) // 16 into
 * j0.
 *
 * On a GPU target only allocations of scope shared, a schedule's
 * cache_read(.., "shared"), which would otherwise be global memory passed
 * to the kernel: P may lie under blockIdx loops but no threadIdx loop (a
 * block's threads share its shared memory, so P runs once per block), W's
 * loops may be thread loops (the block's threads write the box together;
 * the barrier between phases orders that before the reads), and a box as
 * large as X still moves (into the block: a __shared__ array), up to the
 * 48 KiB of static shared memory.
 * Runs on the lowered form, before flatten_buffers.
 */
#include "passes/tir/tir_passes.h"

#include <stdint.h>
#include <string.h>

#include "tir/arith.h"

/* A __shared__ array declared in a kernel (static shared memory) is at most
 * 48 KiB on every CUDA architecture; more needs dynamic shared memory. */
enum { MAX_DIMS = 8, MAX_TERMS = 16, MAX_INNER = 256, STATIC_SHARED_BYTES = 48 * 1024 };

typedef struct compact {
    mt_arena *a;
    const mt_tbuffer *x;
    const mt_tvar *inner[MAX_INNER]; /* variables bound inside P */
    int ninner;
    bool too_many;
    mt_texpr *outer[MAX_DIMS]; /* o_d of the writer (NULL: 0) */
    int64_t ext[MAX_DIMS];     /* the box: a constant bound of the extent of v_d */
    const mt_texpr *ext_expr[MAX_DIMS]; /* that extent: a constant, or T.min(c, ..) */
    bool ok;
    bool gpu;  /* a GPU kernel's shared buffer: the writer's loops may be thread loops */
} compact;

/* ---- what touches X ----------------------------------------------------- */

typedef struct touch {
    const mt_tbuffer *x;
    bool loads, stores;
} touch;

static void touch_expr(mt_tvisitor *v, const mt_texpr *e) {
    touch *t = v->ctx;
    if (e->kind == TE_LOAD && e->buf == t->x) t->loads = true;
    mt_tvisit_expr_children(v, e);
}

static void touch_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    touch *t = v->ctx;
    if (s->kind == TS_STORE && s->buf == t->x) t->stores = true;
    mt_tvisit_stmt_children(v, s);
}

static touch touches(const mt_tstmt *s, const mt_tbuffer *x) {
    touch t = {x, false, false};
    mt_tvisitor v = {touch_expr, touch_stmt, &t};
    mt_tvisit_stmt(&v, s);
    return t;
}

static bool touches_any(const mt_tstmt *s, const mt_tbuffer *x) {
    touch t = touches(s, x);
    return t.loads || t.stores;
}

/* ---- indices: o_d + r_d ------------------------------------------------- */

static void inner_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    compact *c = v->ctx;
    if ((s->kind == TS_FOR || s->kind == TS_LET) && !c->too_many) {
        if (c->ninner == MAX_INNER) c->too_many = true;
        else c->inner[c->ninner++] = s->var;
    }
    mt_tvisit_stmt_children(v, s);
}

static void no_expr(mt_tvisitor *v, const mt_texpr *e) {
    (void)v;
    (void)e;
}

static bool uses_inner(const compact *c, const mt_texpr *e) {
    for (int i = 0; i < c->ninner; i++)
        if (mt_texpr_uses_var(e, c->inner[i])) return true;
    return false;
}

static mt_texpr *plus(mt_arena *a, mt_texpr *s, const mt_arith_term *t) {
    mt_texpr *x = t->coef == 1 ? t->e : mt_te_bin(a, TE_MUL, t->e, mt_te_int(a, t->e->dtype, t->coef));
    return s ? mt_te_bin(a, TE_ADD, s, x) : x;
}

/* idx = *outer + *rest, *outer free of P's variables (NULL: none), both
 * sums of idx's terms with every product by a constant distributed, so that
 * the writer's and a reader's offsets compare equal however their splits
 * nested ((j0 * 16 + j1) * 16 + j2: j0 * 256 + j1 * 16 + j2). */
static bool split_index(compact *c, mt_texpr *idx, mt_texpr **outer, mt_texpr **rest) {
    mt_arith_term t[MAX_TERMS];
    int n = mt_arith_terms(idx, NULL, NULL, t, MAX_TERMS);
    if (n < 0 || idx->lanes != 1) return false;
    *outer = *rest = NULL;
    for (int i = 0; i < n; i++) {
        if (uses_inner(c, t[i].e)) *rest = plus(c->a, *rest, &t[i]);
        else *outer = plus(c->a, *outer, &t[i]);
    }
    if (!*rest) *rest = mt_te_int(c->a, idx->dtype, 0);
    return true;
}

/* ---- the writer W ------------------------------------------------------- */

/* The loop of W that v is, not used yet, or -1. */
static int loop_index(const mt_texpr *v, const mt_tvar *const *vars, int nv, const bool *used) {
    for (int k = 0; k < nv; k++)
        if (v->kind == TE_VAR && v->var == vars[k]) return used[k] ? -1 : k;
    return -1;
}

/* W's loops: variable, extent, its constant bound, and for the two
 * loops of a split of a run-time extent R by c (split_pair) the outer
 * one's index in `outer_of` of the inner one (-1: not such an inner). */
typedef struct wloops {
    const mt_tvar *vars[MAX_DIMS * 2];
    const mt_texpr *extents[MAX_DIMS * 2];
    int64_t exts[MAX_DIMS * 2];
    int outer_of[MAX_DIMS * 2];
    const mt_texpr *pair_r[MAX_DIMS * 2]; /* for such an inner loop: R ... */
    int64_t pair_c[MAX_DIMS * 2];         /* ... and c */
    int n;
} wloops;

/* Is e (R + c - 1) // c, with c a positive constant? Sets *r, *c. */
static bool ceil_div(const mt_texpr *e, const mt_texpr **r, int64_t *c) {
    int64_t m;
    if (e->kind != TE_FLOORDIV || !mt_te_is_const_int(e->b, c) || *c < 1 || e->a->kind != TE_ADD ||
        !mt_te_is_const_int(e->a->b, &m) || m != *c - 1)
        return false;
    *r = e->a->a;
    return true;
}

/* Loop k's extent is T.min(c, R - v * c), v an earlier loop of W whose
 * extent is (R + c - 1) // c (or that constant): the two split R into
 * tiles of c, the last clamped, and v * c + (loop k) covers [0, R)
 * exactly. Returns v's index and sets w's pair_r, pair_c of k; or -1. */
static int split_pair(const compact *c, wloops *w, int k) {
    int64_t cc, c2, e, n;
    const mt_texpr *r, *r2;
    if (!mt_arith_min_const(w->extents[k], &cc, &r) || r->kind != TE_SUB || r->b->kind != TE_MUL ||
        r->b->a->kind != TE_VAR || !mt_te_is_const_int(r->b->b, &c2) || c2 != cc || uses_inner(c, r->a))
        return -1;
    for (int v = 0; v < k; v++) {
        if (w->vars[v] != r->b->a->var) continue;
        bool pair = (ceil_div(w->extents[v], &r2, &c2) && c2 == cc && mt_texpr_equal(r2, r->a)) ||
                    (mt_te_is_const_int(r->a, &e) && mt_te_is_const_int(w->extents[v], &n) && e >= 1 &&
                     n == (e + cc - 1) / cc); /* R a constant: the outer extent folded */
        if (!pair) continue;
        w->pair_r[k] = r->a, w->pair_c[k] = cc;
        return v;
    }
    return -1;
}

/* rest, W's part of index d: one of its loops, or the digits of a split
 * (v_1 * e_0 + v_0 for loops of constant extents e_1, e_0: in general the
 * coefficients, smallest first, 1 and each the one before times its
 * loop's extent), which cover [0, the product) with no gap: the box's
 * extent in d; or v * c + u for a split_pair (v, u) of R: [0, R), R
 * clamped (T.min(c', ..)) as a split's tail is. Marks the loops used. */
static bool digits(compact *c, int d, mt_texpr *rest, const wloops *w, bool *used) {
    const mt_tvar *const *vars = w->vars;
    const mt_texpr *const *extents = w->extents;
    int nv = w->n;
    int k = loop_index(rest, vars, nv, used);
    if (k >= 0) { /* one loop: its extent, clamped or not */
        used[k] = true;
        c->ext[d] = w->exts[k];
        c->ext_expr[d] = extents[k];
        return w->outer_of[k] < 0;
    }
    mt_arith_term t[MAX_TERMS];
    int n = mt_arith_terms(rest, NULL, NULL, t, MAX_TERMS);
    if (n < 2) return false;
    for (int i = 1; i < n; i++) /* by coefficient (few terms) */
        for (int j = i; j > 0 && t[j].coef < t[j - 1].coef; j--) {
            mt_arith_term x = t[j];
            t[j] = t[j - 1], t[j - 1] = x;
        }
    int64_t span = 1, e;
    int u = loop_index(t[0].e, vars, nv, used), v = n == 2 ? loop_index(t[1].e, vars, nv, used) : -1;
    if (u >= 0 && v >= 0 && t[0].coef == 1 && w->outer_of[u] == v) { /* split_pair */
        if (t[1].coef != w->pair_c[u] || !mt_arith_const_bound(w->pair_r[u], &c->ext[d]) || c->ext[d] < 1)
            return false;
        used[u] = used[v] = true;
        c->ext_expr[d] = w->pair_r[u];
        return true;
    }
    for (int i = 0; i < n; i++) {
        k = loop_index(t[i].e, vars, nv, used);
        if (k < 0 || t[i].coef != span || !mt_te_is_const_int(extents[k], &e) || e > INT64_MAX / span) return false;
        used[k] = true;
        span *= e;
    }
    c->ext[d] = span;
    c->ext_expr[d] = mt_te_int(c->a, MT_INT64, span);
    return true;
}

/* W: loops from 0 of constant bounded extent (free of P's variables)
 * around X[o_d + r_d] = value, r_d a loop of W or the digits of a split
 * of them (digits). */
static bool writer(compact *c, const mt_tstmt *w) {
    wloops l = {.n = 0};
    int ndim = c->x->ndim;
    int64_t m, e;
    for (; w->kind == TS_FOR; w = w->body) {
        if (l.n == MAX_DIMS * 2 || (w->for_kind == MT_FOR_THREAD && !c->gpu) || !mt_te_is_const_int(w->min, &m) ||
            m != 0 || mt_texpr_reads_memory(w->extent))
            return false;
        int k = l.n++;
        l.vars[k] = w->var, l.extents[k] = w->extent, l.outer_of[k] = -1;
        const mt_texpr *r;
        if (!uses_inner(c, w->extent) && mt_arith_const_bound(w->extent, &e) && e >= 1) {
            l.exts[k] = e;
        } else if (!uses_inner(c, w->extent) && ceil_div(w->extent, &r, &m) && mt_arith_const_bound(r, &e) && e >= 1) {
            l.exts[k] = (e + m - 1) / m; /* the outer loop of a split_pair */
        } else if ((l.outer_of[k] = split_pair(c, &l, k)) >= 0) {
            mt_arith_const_bound(w->extent, &l.exts[k]);
        } else {
            return false;
        }
    }
    if (w->kind != TS_STORE || w->buf != c->x || w->nidx != ndim || touches(w, c->x).loads) return false;
    bool used[MAX_DIMS * 2] = {false};
    for (int d = 0; d < ndim; d++) {
        mt_texpr *rest;
        if (!split_index(c, w->idx[d], &c->outer[d], &rest) ||
            (c->outer[d] && mt_texpr_reads_memory(c->outer[d])))
            return false; /* a load could differ between the writer and a reader */
        int64_t zero;
        if (mt_te_is_const_int(rest, &zero) && zero == 0) {
            c->ext[d] = 1;
            c->ext_expr[d] = mt_te_int(c->a, MT_INT64, 1);
            continue;
        }
        if (!digits(c, d, rest, &l, used)) return false;
    }
    for (int k = 0; k < l.n; k++) /* a loop that indexes nothing could run 0 times */
        if (!used[k]) return false;
    return true;
}

/* ---- the readers -------------------------------------------------------- */

typedef struct reader {
    compact *c;
    mt_bounds b;
    const mt_tstmt *loops[MAX_INNER]; /* the loops around the visit, innermost last */
    int nloops;
} reader;

/* Is the box's extent in dim d T.min(e, shape_d - o_d): the box runs to
 * the end of X's dim (a split's last tile cut there, compute_at's region
 * of a copy)? Then every element of [o_d, o_d + e) within X is written. */
static bool to_end(const compact *c, int d, int64_t *e) {
    const mt_texpr *r;
    if (!mt_arith_min_const(c->ext_expr[d], e, &r) || r->kind != TE_SUB || !c->outer[d] ||
        !mt_texpr_equal(r->a, c->x->shape[d]))
        return false;
    int64_t z;
    return mt_arith_const_diff(r->b, c->outer[d], &z) && z == 0;
}

/* Does r + off stay in the box's extent in dim d? Over the ranges when
 * the extent is a constant, or when it runs to the end of the dim
 * (to_end: an index within X and below the bound is inside it); else
 * (off 0) r must be the variable of a loop from 0 with the writer's
 * extent itself (the same expression of variables outside P, so the same
 * value in one execution of P). */
static bool inside(reader *r, int d, const mt_texpr *rest, int64_t off) {
    compact *c = r->c;
    int64_t e, m;
    if (mt_te_is_const_int(c->ext_expr[d], &e) || to_end(c, d, &e)) {
        mt_range rg = mt_bounds_of(&r->b, rest);
        return rg.lo > INT64_MIN + 1 && rg.hi < INT64_MAX - 1 && off > -e && off < e && rg.lo + off >= 0 &&
               rg.hi + off < e;
    }
    if (rest->kind != TE_VAR || off != 0) return false;
    for (int i = r->nloops - 1; i >= 0; i--)
        if (r->loops[i]->var == rest->var)
            return mt_te_is_const_int(r->loops[i]->min, &m) && m == 0 &&
                   mt_texpr_equal(r->loops[i]->extent, c->ext_expr[d]);
    return false;
}

/* An access X[idx]: within the box, at the writer's outer parts (plus a
 * constant: a stencil's X[i + 1] beside the writer's X[i]). */
static void in_box(reader *r, mt_texpr *const *idx) {
    compact *c = r->c;
    for (int d = 0; d < c->x->ndim && c->ok; d++) {
        mt_texpr *o, *rest;
        int64_t off;
        if (!split_index(c, idx[d], &o, &rest) || !mt_arith_const_diff(o, c->outer[d], &off)) {
            c->ok = false;
            break;
        }
        c->ok = inside(r, d, rest, off);
    }
}

static void read_expr(mt_tvisitor *v, const mt_texpr *e) {
    reader *r = v->ctx;
    if (r->c->ok && e->kind == TE_LOAD && e->buf == r->c->x) in_box(r, e->args);
    mt_tvisit_expr_children(v, e);
}

/* A later item may also store into the box (a reduction's update after
 * its init, the writer): each execution of P still writes X before it
 * reads it, and nothing outside P sees X. */
static void read_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    reader *r = v->ctx;
    if (!r->c->ok) return;
    if (s->kind == TS_STORE && s->buf == r->c->x) {
        if (s->nidx != r->c->x->ndim) r->c->ok = false;
        else in_box(r, s->idx);
        if (!r->c->ok) return;
    }
    bool pushed = false;
    if (s->kind == TS_FOR) {
        v->expr(v, s->min);
        v->expr(v, s->extent);
        if (r->nloops == MAX_INNER) {
            r->c->ok = false;
            return;
        }
        pushed = mt_bounds_push_loop(r->c->a, &r->b, s->var, s->min, s->extent);
        r->loops[r->nloops++] = s;
        mt_tvisit_stmt(v, s->body);
        r->nloops--;
    } else if (s->kind == TS_LET) {
        v->expr(v, s->value);
        mt_bounds_push(r->c->a, &r->b, s->var, mt_bounds_of(&r->b, s->value));
        pushed = true;
        mt_tvisit_stmt(v, s->body);
    } else {
        mt_tvisit_stmt_children(v, s);
    }
    if (pushed) mt_bounds_pop(&r->b);
}

/* ---- the rewrite -------------------------------------------------------- */

typedef struct rewrite {
    compact *c;
    mt_tbuffer *y;
} rewrite;

static mt_texpr **new_idx(rewrite *w, mt_texpr *const *idx) {
    mt_texpr **out = MT_NEW_ARRAY(w->c->a, mt_texpr *, w->c->x->ndim);
    for (int d = 0; d < w->c->x->ndim; d++) {
        mt_texpr *o;
        int64_t off = 0;
        split_index(w->c, idx[d], &o, &out[d]);
        mt_arith_const_diff(o, w->c->outer[d], &off); /* held for every access (in_box) */
        if (off) out[d] = mt_te_bin(w->c->a, TE_ADD, out[d], mt_te_int(w->c->a, out[d]->dtype, off));
    }
    return out;
}

static mt_texpr *rw_expr(mt_tmutator *m, mt_texpr *e) {
    rewrite *w = m->ctx;
    mt_texpr *r = mt_tmutate_expr_children(m, e);
    if (r->kind != TE_LOAD || r->buf != w->c->x) return r;
    mt_texpr *l = mt_te_load(m->arena, w->y, new_idx(w, r->args), w->c->x->ndim);
    l->loc = r->loc;
    return l;
}

static mt_tstmt *rw_stmt(mt_tmutator *m, mt_tstmt *s) {
    rewrite *w = m->ctx;
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    if (r->kind != TS_STORE || r->buf != w->c->x) return r;
    return mt_ts_store(m->arena, w->y, new_idx(w, r->idx), w->c->x->ndim, r->value);
}

/* ---- indices through // and % ------------------------------------------- */

typedef struct divmod_seen {
    const mt_tbuffer *x;
    bool found;
} divmod_seen;

static void divmod_expr(mt_tvisitor *v, const mt_texpr *e) {
    divmod_seen *d = v->ctx;
    if (e->kind == TE_LOAD && e->buf == d->x)
        for (int i = 0; i < e->nargs; i++) d->found |= mt_arith_has_divmod(e->args[i]);
    mt_tvisit_expr_children(v, e);
}

static void divmod_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    divmod_seen *d = v->ctx;
    if (s->kind == TS_STORE && s->buf == d->x)
        for (int i = 0; i < s->nidx; i++) d->found |= mt_arith_has_divmod(s->idx[i]);
    mt_tvisit_stmt_children(v, s);
}

/* A buffer that transform_layout gave another layout is indexed through //
 * and % of the loops (j // 16, j % 16 with j = j0 * 16 + j1), which
 * simplify reduces to the loops themselves (j0, j1) given their ranges:
 * P simplified when it indexes X so; P itself otherwise. */
static mt_tstmt *plain_indices(mt_arena *a, const mt_tbuffer *x, const mt_bounds *b, mt_tstmt *p) {
    divmod_seen d = {x, false};
    mt_tvisitor v = {divmod_expr, divmod_stmt, &d};
    mt_tvisit_stmt(&v, p);
    return d.found ? mt_tir_simplify_stmt(a, b, p) : p;
}

/* Where P lies: on a GPU; every loop from X's allocation down to P serial
 * (or unrolled) -- then the compacted buffer Y is allocated where X was,
 * once, not around each execution of P (a cache_read's copy under a
 * serial loop over column blocks would be malloc'd and freed per block). */
typedef struct place {
    bool gpu;
    bool serial;
    mt_tbuffer *hoisted; /* Y, when allocated where X was */
} place;

/* P with X compacted and allocated around it (or, on the CPU with
 * w->serial, where X was: w->hoisted), or NULL; b: the ranges of the loops
 * and lets around P. */
static mt_tstmt *compact_at(mt_arena *a, const mt_tbuffer *x, mt_tstmt *p, const mt_bounds *b, place *w) {
    bool gpu = w->gpu;
    p = plain_indices(a, x, b, p);
    if (p->kind != TS_SEQ) return NULL;
    p = mt_ts_at(mt_ts_seq_flat(a, p->stmts, p->nstmts), p->loc); /* a sequence's sequences are its items */
    if (p->kind != TS_SEQ) return NULL;
    compact c = {.a = a, .x = x, .ok = true, .gpu = gpu};
    mt_tvisitor iv = {no_expr, inner_stmt, &c};
    mt_tvisit_stmt(&iv, p);
    if (c.too_many) return NULL;
    int k = 0;
    while (k < p->nstmts && !touches_any(p->stmts[k], x)) k++;
    if (k == p->nstmts || !writer(&c, p->stmts[k])) return NULL;
    reader r = {&c, {0}};
    mt_tvisitor rv = {read_expr, read_stmt, &r};
    for (int i = k + 1; i < p->nstmts && c.ok; i++) mt_tvisit_stmt(&rv, p->stmts[i]);
    int64_t old = 1, now = 1;
    bool sized = true; /* X of constant shape (else of a run-time size: the constant box is the gain) */
    for (int d = 0; d < x->ndim; d++) {
        int64_t e;
        if (!mt_te_is_const_int(x->shape[d], &e)) sized = false;
        else if (old <= INT64_MAX / (e > 0 ? e : 1)) old *= e;
        now *= c.ext[d];
    }
    if (!c.ok || (sized && (now > old || (now == old && !gpu)))) return NULL; /* on a GPU, moving it into the block is the gain */
    if (gpu && now * (int64_t)mt_dtype_size(x->dtype) > STATIC_SHARED_BYTES) return NULL;
    mt_tbuffer *y = mt_tbuffer_new_const(a, x->name, x->dtype, x->ndim, c.ext);
    y->scope = x->scope;
    rewrite rw = {&c, y};
    mt_tmutator m = {a, rw_expr, rw_stmt, &rw};
    mt_tstmt *q = mt_tmutate_stmt(&m, p);
    if (!gpu && w->serial) {
        w->hoisted = y;
        return q;
    }
    return mt_ts_at(mt_ts_alloc(a, y, q), p->loc);
}

/* Statement s (inside X's allocation) with P compacted, or NULL: down
 * through loops, lets, other allocations and the one item of a sequence
 * that touches X; b:
 * the ranges of the loops and lets passed. */
static mt_tstmt *descend(mt_arena *a, const mt_tbuffer *x, mt_tstmt *s, mt_bounds *b, place *w) {
    mt_tstmt *inner = NULL, *r;
    bool pushed;
    switch (s->kind) {
    case TS_FOR:
    case TS_LET: /* bound outside P: must not read X, whose allocation moves into P */
        if (s->kind == TS_FOR && s->for_kind == MT_FOR_THREAD && strncmp(s->thread_tag, "threadIdx", 9) == 0)
            return NULL; /* P would run per thread, and a block's threads share its shared memory */
        if ((s->kind == TS_FOR && (mt_texpr_reads(s->min, x) || mt_texpr_reads(s->extent, x))) ||
            (s->kind == TS_LET && mt_texpr_reads(s->value, x)))
            return NULL;
        pushed = s->kind == TS_FOR ? mt_bounds_push_loop(a, b, s->var, s->min, s->extent)
                                   : (mt_bounds_push(a, b, s->var, mt_bounds_of(b, s->value)), true);
        bool serial = w->serial;
        if (s->kind == TS_FOR && s->for_kind != MT_FOR_SERIAL && s->for_kind != MT_FOR_UNROLLED) w->serial = false;
        inner = descend(a, x, s->body, b, w);
        w->serial = serial;
        if (pushed) mt_bounds_pop(b);
        if (!inner) return NULL;
        r = mt_ts_copy(a, s);
        r->body = inner;
        return r;
    case TS_ALLOC: /* another buffer's: X's allocation moves inside it */
        if (s->buf == x || !(inner = descend(a, x, s->body, b, w))) return NULL;
        r = mt_ts_copy(a, s);
        r->body = inner;
        return r;
    case TS_SEQ: {
        int hit = -1, n = 0;
        for (int i = 0; i < s->nstmts; i++)
            if (touches_any(s->stmts[i], x)) hit = i, n++;
        if (n != 1) return compact_at(a, x, s, b, w);
        if (!(inner = descend(a, x, s->stmts[hit], b, w))) return NULL;
        r = mt_ts_copy(a, s);
        r->stmts = MT_NEW_ARRAY(a, mt_tstmt *, s->nstmts);
        memcpy(r->stmts, s->stmts, sizeof(mt_tstmt *) * (size_t)s->nstmts);
        r->stmts[hit] = inner;
        return r;
    }
    default: return NULL;
    }
}

static mt_tstmt *alloc_stmt(mt_tmutator *m, mt_tstmt *s) {
    bool gpu = *(const bool *)m->ctx;
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    if (r->kind != TS_ALLOC || r->buf->ndim < 1 || r->buf->ndim > MAX_DIMS ||
        (gpu && r->buf->scope != MT_SCOPE_SHARED))
        return r;
    mt_bounds b = {0};
    place w = {gpu, true, NULL};
    mt_tstmt *body = descend(m->arena, r->buf, r->body, &b, &w);
    if (!body) return r;
    return w.hoisted ? mt_ts_at(mt_ts_alloc(m->arena, w.hoisted, body), r->loc) : body;
}

static mt_texpr *keep_expr(mt_tmutator *m, mt_texpr *e) {
    (void)m;
    return e;
}

mt_tfunc *mt_tir_compact_buffers(mt_arena *a, mt_tfunc *f) {
    if (!f->body) return f;
    bool gpu = mt_tfunc_target(f)->kind == MT_TARGET_CUDA;
    mt_tmutator m = {a, keep_expr, alloc_stmt, &gpu};
    mt_tstmt *body = mt_tmutate_stmt(&m, f->body);
    return body == f->body ? f : mt_tfunc_with_body(a, f, body);
}
