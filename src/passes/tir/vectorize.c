/*
 * vectorize.c -- `vectorized` loops become vector code.
 *
 *     for i in T.vectorized(n):          for vo in range(n // L):
 *         y[b + i] = f(x[b + i], s[c])      y[T.Ramp(b + vo * L, 1, L)] = f(x[T.Ramp(..)], s[c])
 *                                   ->   for t in range(n % L):
 *                                            y[b + (n // L * L + t)] = f(x[..], s[c])
 *
 * L = the target's vector step in bytes (mt_target_step_bytes: the widest
 * register, at least a 64-byte cache line) / the widest element the loop
 * loads or stores, halved while it exceeds a constant bound of the extent, down
 * to 16 bytes (a tile of 8 float32 columns, `range(8)` or a split's
 * `T.min(8, ..)`, is one 8-lane step; 6 a 4-lane step and 2 scalars; 3
 * stays scalar). The scalar tail is the loop partition of the split: no
 * predicate inside the vector loop. Until this pass, `vectorized` was only
 * a hint to LLVM's loop vectorizer; making the vectors in TIR lets the
 * dumps show them and lets code generation choose how each store is made
 * (a !nontemporal store needs to see a full vector: llvm_stream.c).
 *
 * What it takes (anything else stays a `vectorized` loop for LLVM):
 *  - an innermost loop from 0 whose body is stores, lets and sequences;
 *  - buffers of float32, float64, int32 or int64, and for a GPU target
 *    float16 and bfloat16 too (the tensor-core matmul's 16-byte copies of
 *    8 elements: gpu_matmul.c; the CPU leaves 16-bit loops to LLVM);
 *  - the loop variable only inside load and store indices, each index
 *    `b + s * i` with b free of i and of the loop's lets, and s = 1 (contiguous: a T.Ramp) or 0
 *    (invariant: a scalar load, broadcast where used), or, for a load,
 *    another constant |s| <= 2^24 (strided: T.Ramp(b + vo * L * s, s, L),
 *    a row of a transposed tile, which code generation loads lane by
 *    lane); stores contiguous;
 *  - a buffer the loop both loads and stores is loaded only at the index
 *    it is stored at (each lane reads its own element before writing it),
 *    and all stores to one buffer use one index (lanes would otherwise
 *    overwrite each other's elements in another order than the loop).
 * The iterations are independent (mt_sched_vectorize checked that when it
 * marked the loop), so running L of them at once, in lanes, is the same.
 */
#include "passes/tir/tir_passes.h"

#include <string.h>

#include "support/common.h"
#include "tir/arith.h"
#include "tir/combiner.h"

enum { MAX_VLETS = 64, MIN_VECTOR_BYTES = 16 /* the narrowest SIMD register */, MAX_UNROLLED_VECTORS = 16 };

/* The largest step |s| of an index b + s * i (a strided load reads lanes s
 * elements apart: a row of a transposed tile; larger ones are left alone,
 * so that s * i cannot come near overflowing). */
#define MAX_STRIDE ((int64_t)1 << 24)

typedef struct vec {
    mt_arena *a;
    const mt_tvar *i;    /* the loop variable */
    mt_texpr *base;      /* vo * L: the first iteration of the vector step */
    int L;
    bool ok;             /* analysis: still vectorizable */
    bool narrow;         /* float16 and bfloat16 buffers too (a GPU target) */
    int widest;          /* analysis: the widest element (bytes) */
    const mt_tstmt *stores[64];
    int nstores;
    const mt_tvar *vlets[MAX_VLETS]; /* lets bound to vectors */
    int nvlets;
    const mt_tvar *lets[MAX_VLETS];  /* analysis: every let bound in the loop */
    int nlets;
} vec;

static bool uses_i(const vec *v, const mt_texpr *e) { return mt_texpr_uses_var(e, v->i); }

/* e = b + s * i with b free of i and s a constant: *b (NULL: 0), *s. */
static bool linear(vec *v, mt_texpr *e, mt_texpr **b, int64_t *s) {
    if (!uses_i(v, e)) {
        *b = e;
        *s = 0;
        return true;
    }
    if (e->kind == TE_VAR) { /* the loop variable itself */
        *b = NULL;
        *s = 1;
        return true;
    }
    mt_texpr *b1, *b2;
    int64_t s1, s2, c;
    switch (e->kind) {
    case TE_ADD:
    case TE_SUB:
        if (!linear(v, e->a, &b1, &s1) || !linear(v, e->b, &b2, &s2)) return false;
        if (e->kind == TE_SUB) s2 = -s2;
        *s = s1 + s2;
        *b = !b2 ? b1 : !b1 && e->kind == TE_ADD ? b2 : mt_te_bin(v->a, e->kind, b1 ? b1 : mt_te_i64(v->a, 0), b2);
        return true;
    case TE_MUL:
        if (mt_te_is_const_int(e->b, &c) && linear(v, e->a, &b1, &s1)) {
        } else if (mt_te_is_const_int(e->a, &c) && linear(v, e->b, &b1, &s1)) {
        } else {
            return false;
        }
        if (c < -MAX_STRIDE || c > MAX_STRIDE || s1 * c < -MAX_STRIDE || s1 * c > MAX_STRIDE)
            return false;
        *s = s1 * c;
        *b = b1 ? mt_te_bin(v->a, TE_MUL, b1, mt_te_i64(v->a, c)) : NULL;
        return true;
    default: return false;
    }
}

/* An index of the loop's form: linear in i with step 1 (contiguous), 0
 * (invariant) or, for a load, any other constant step (strided: lanes s
 * elements apart, what a transposed tile reads), and free of the loop's
 * lets (j = idx[i] may be a vector: x[j] is a gather). */
static bool index_ok(vec *v, mt_texpr *e, bool store) {
    mt_texpr *b;
    int64_t s;
    if (!linear(v, e, &b, &s) || (store && s != 1)) return false;
    for (int k = 0; k < v->nlets; k++)
        if (mt_texpr_uses_var(e, v->lets[k])) return false;
    return true;
}

static bool dtype_ok(mt_dtype t) {
    return t == MT_FLOAT32 || t == MT_FLOAT64 || t == MT_INT32 || t == MT_INT64;
}

static void see_buffer(vec *v, const mt_tbuffer *b) {
    if (!dtype_ok(b->dtype) && !(v->narrow && mt_dtype_is_half(b->dtype))) v->ok = false;
    int w = (int)mt_dtype_size(b->dtype);
    if (w > v->widest) v->widest = w;
}

/* ---- analysis ---------------------------------------------------------------- */

static void check_expr(mt_tvisitor *t, const mt_texpr *e) {
    vec *v = t->ctx;
    if (!v->ok) return;
    if (e->lanes != 1) { /* already vector code */
        v->ok = false;
        return;
    }
    if (e->kind == TE_LOAD) {
        see_buffer(v, e->buf);
        if (e->nargs != 1 || !index_ok(v, e->args[0], false)) v->ok = false;
        for (int k = 0; k < v->nstores && v->ok; k++) /* loads of a stored buffer: its own element */
            if (v->stores[k]->buf == e->buf && !mt_texpr_equal(v->stores[k]->idx[0], e->args[0]))
                v->ok = false;
        return; /* the index is checked; it may use i */
    }
    if (e->kind == TE_VAR && e->var == v->i) { /* i outside an index */
        v->ok = false;
        return;
    }
    mt_tvisit_expr_children(t, e);
}

static void collect_stores(vec *v, const mt_tstmt *s) {
    if (!v->ok) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int k = 0; k < s->nstmts; k++) collect_stores(v, s->stmts[k]);
        break;
    case TS_LET: collect_stores(v, s->body); break;
    case TS_STORE:
        for (int k = 0; k < v->nstores; k++) /* one element per buffer and iteration */
            if (v->stores[k]->buf == s->buf && !mt_texpr_equal(v->stores[k]->idx[0], s->idx[0]))
                v->ok = false;
        if (v->nstores == 64) v->ok = false;
        else v->stores[v->nstores++] = s;
        break;
    default: v->ok = false;
    }
}

static void check_stmt(vec *v, const mt_tstmt *s) {
    mt_tvisitor t = {check_expr, NULL, v};
    switch (s->kind) {
    case TS_SEQ:
        for (int k = 0; k < s->nstmts && v->ok; k++) check_stmt(v, s->stmts[k]);
        break;
    case TS_LET:
        mt_tvisit_expr(&t, s->value);
        v->lets[v->nlets++] = s->var; /* at most MAX_VLETS: counted */
        check_stmt(v, s->body);
        break;
    case TS_STORE: {
        see_buffer(v, s->buf);
        if (s->nidx != 1 || !index_ok(v, s->idx[0], true)) {
            v->ok = false;
            return;
        }
        mt_tvisit_expr(&t, s->value);
        break;
    }
    default: v->ok = false;
    }
}

/* ---- rewriting --------------------------------------------------------------- */

static bool vector_let(const vec *v, const mt_tvar *x) {
    for (int k = 0; k < v->nvlets; k++)
        if (v->vlets[k] == x) return true;
    return false;
}

/* The index b + s * i at lane granularity: T.Ramp(b + vo * L * s, s, L)
 * (T.Ramp(b + vo * L, 1, L) when contiguous), or b. */
static mt_texpr *vec_index(vec *v, mt_texpr *idx) {
    mt_texpr *b = NULL;
    int64_t s = 0;
    linear(v, idx, &b, &s); /* checked */
    if (s == 0) /* b, not idx: i - i has i, which the vector loop does not bind */
        return !uses_i(v, idx) ? idx : b ? b : mt_te_i64(v->a, 0);
    mt_texpr *first = s == 1 ? v->base : mt_te_bin(v->a, TE_MUL, v->base, mt_te_i64(v->a, s));
    mt_texpr *start = b ? mt_te_bin(v->a, TE_ADD, b, first) : first;
    return mt_te_ramp(v->a, start, mt_te_i64(v->a, s), v->L);
}

static mt_texpr *vec_expr(mt_tmutator *m, mt_texpr *e) {
    vec *v = m->ctx;
    if (e->kind == TE_LOAD) {
        mt_texpr *idx = vec_index(v, e->args[0]);
        return idx == e->args[0] ? e : mt_te_load(v->a, e->buf, &idx, 1);
    }
    if (e->kind == TE_VAR && vector_let(v, e->var)) {
        mt_texpr *c = mt_te_copy(v->a, e);
        c->lanes = v->L;
        return c;
    }
    return mt_tmutate_expr_children(m, e);
}

static mt_tstmt *vec_stmt(vec *v, mt_tstmt *s) {
    mt_tmutator m = {v->a, vec_expr, NULL, v};
    switch (s->kind) {
    case TS_SEQ: {
        mt_tstmt **out = MT_NEW_ARRAY(v->a, mt_tstmt *, s->nstmts > 0 ? s->nstmts : 1);
        for (int k = 0; k < s->nstmts; k++) out[k] = vec_stmt(v, s->stmts[k]);
        return mt_ts_at(mt_ts_seq(v->a, out, s->nstmts), s->loc);
    }
    case TS_LET: {
        mt_texpr *val = mt_tmutate_expr(&m, s->value);
        if (val->lanes > 1) v->vlets[v->nvlets++] = s->var; /* at most MAX_VLETS: counted */
        return mt_ts_at(mt_ts_let(v->a, s->var, val, vec_stmt(v, s->body)), s->loc);
    }
    default: { /* TS_STORE */
        mt_texpr *idx = vec_index(v, s->idx[0]);
        return mt_ts_at(mt_ts_store(v->a, s->buf, &idx, 1, mt_tmutate_expr(&m, s->value)), s->loc);
    }
    }
}

static int count_lets(const mt_tstmt *s) {
    if (s->kind == TS_SEQ) {
        int n = 0;
        for (int k = 0; k < s->nstmts; k++) n += count_lets(s->stmts[k]);
        return n;
    }
    return s->kind == TS_LET ? 1 + count_lets(s->body) : 0;
}

/* The loop rewritten, or NULL to leave it. */
static mt_tstmt *vectorize_loop(mt_arena *a, const mt_tstmt *l, const mt_target_desc *target) {
    int64_t min;
    if (!mt_te_is_const_int(l->min, &min) || min != 0 || count_lets(l->body) > MAX_VLETS) return NULL;
    vec v;
    memset(&v, 0, sizeof v);
    v.a = a;
    v.i = l->var;
    v.ok = true;
    v.narrow = target->kind == MT_TARGET_CUDA;
    collect_stores(&v, l->body);
    if (v.ok) check_stmt(&v, l->body);
    if (!v.ok || v.widest == 0) return NULL;
    v.L = mt_target_step_bytes(target) / v.widest;
    mt_texpr *n = mt_te_cast(a, MT_INT64, l->extent);
    int64_t cn;
    bool cst = mt_te_is_const_int(n, &cn) && cn >= 0;
    int64_t most; /* what the extent never exceeds: a constant, or the inner loop of a split */
    if (mt_arith_const_bound(l->extent, &most) && most >= 0 && most < v.L) { /* a short loop: the widest vector it fills, from 16 bytes */
        int L = v.L;
        while (L > most) L /= 2;
        if (L * v.widest >= MIN_VECTOR_BYTES) v.L = L;
    }
    if (v.L < 2) return NULL;
    mt_texpr *L = mt_te_i64(a, v.L);
    if (!cst) /* a negative extent runs no iteration (n % L would) */
        n = mt_te_bin(a, TE_MAX, n, mt_te_i64(a, 0));
    /* constant extents fold here, so remove_unit_loops (next) sees 1-trip loops */
    mt_texpr *nv = cst ? mt_te_i64(a, cn / v.L) : mt_te_bin(a, TE_FLOORDIV, n, L);
    mt_texpr *nt = cst ? mt_te_i64(a, cn % v.L) : mt_te_bin(a, TE_FLOORMOD, n, L);
    mt_tvar *vo = mt_tvar_new(a, l->var->name, MT_INT64);
    v.base = mt_te_bin(a, TE_MUL, mt_te_var(a, vo), L);
    mt_tstmt *body = vec_stmt(&v, l->body);
    mt_tstmt *parts[2];
    parts[0] = mt_ts_at(mt_ts_for(a, vo, mt_te_i64(a, 0), nv, MT_FOR_SERIAL, body), l->loc);
    /* the tail: i = n // L * L + t, scalar */
    mt_tvar *t = mt_tvar_new(a, l->var->name, MT_INT64);
    mt_texpr *first = cst ? mt_te_i64(a, cn / v.L * v.L) : mt_te_bin(a, TE_MUL, nv, L);
    mt_texpr *i = cst && cn < v.L ? mt_te_var(a, t) : mt_te_bin(a, TE_ADD, first, mt_te_var(a, t));
    mt_tstmt *tail = mt_tsubst_stmt(a, l->body, &l->var, &i, 1);
    parts[1] = mt_ts_at(mt_ts_for(a, t, mt_te_i64(a, 0), nt, MT_FOR_SERIAL, tail), l->loc);
    if (cst && cn % v.L == 0) return parts[0];
    if (cst && cn < v.L) return parts[1];
    return mt_ts_at(mt_ts_seq(a, parts, 2), l->loc);
}

/* ---- reductions -------------------------------------------------------------- */

/* A loop whose body is one store B[j] = F(B[j], e) with j free of i, F a
 * combiner (tir/combiner.h) and e not reading B folds e over its
 * iterations (a vectorized reduce loop: mt_sched_vectorize). Vectorized,
 * CPU only:
 *
 *     acc[T.Ramp(0, 1, L)] = e(lanes 0 .. L-1)          # nv = n // L vectors
 *     for vo in range(1, nv): acc[R] = F(acc[R], e(lanes vo * L ..))
 *     (max, min, selects: acc starts as B[j] in every lane, vo from 0)
 *     acc[0:L/2] = F(acc[0:L/2], acc[L/2:L]) .. down to 1 lane
 *     B[j] = F(B[j], acc[0])
 *     for t in range(n % L): B[j] = F(B[j], e(nv * L + t))
 *
 * acc a local buffer of L lanes (registers after SROA); the vector part
 * under `if nv > 0` when n is not a constant. F is applied in another order
 * than the loop's (a float sum rounds differently; max and min are exact). */
static mt_tstmt *red_tree(vec *v, const mt_tcombiner *cb, mt_tbuffer *acc) {
    mt_arena *a = v->a;
    mt_tstmt **st = MT_NEW_ARRAY(a, mt_tstmt *, 8 * sizeof(int));
    int n = 0;
    for (int w = v->L / 2; w >= 1; w /= 2) {
        mt_texpr *x = w == 1 ? mt_te_i64(a, 0) : mt_te_ramp(a, mt_te_i64(a, 0), mt_te_i64(a, 1), w);
        mt_texpr *y = w == 1 ? mt_te_i64(a, 1) : mt_te_ramp(a, mt_te_i64(a, w), mt_te_i64(a, 1), w);
        st[n++] = mt_ts_store(a, acc, &x, 1, mt_tcombiner_apply(a, cb, mt_te_load(a, acc, &x, 1), mt_te_load(a, acc, &y, 1)));
    }
    return mt_ts_seq(a, st, n);
}

/* e's vector at lanes base .. base + L - 1 of the loop (a broadcast when e
 * does not use i). */
static mt_texpr *red_vector(vec *v, mt_texpr *e, mt_texpr *base) {
    v->base = base;
    mt_tmutator m = {v->a, vec_expr, NULL, v};
    mt_texpr *x = mt_tmutate_expr(&m, e);
    return x->lanes == 1 ? mt_te_broadcast(v->a, x, v->L) : x;
}

static mt_tstmt *red_vectors(vec *v, const mt_tstmt *st, const mt_tcombiner *cb, mt_texpr *nv, const mt_tstmt *l) {
    mt_arena *a = v->a;
    mt_texpr *shape = mt_te_i64(a, v->L);
    mt_tbuffer *acc = mt_tbuffer_new(a, mt_arena_printf(a, "%s_lanes", st->buf->name), st->buf->dtype, 1, &shape);
    acc->scope = MT_SCOPE_LOCAL;
    mt_texpr *R = mt_te_ramp(a, mt_te_i64(a, 0), mt_te_i64(a, 1), v->L), *zero = mt_te_i64(a, 0);
    mt_tstmt *items[4];
    /* a sum's lanes start from its first vector; the others' from the
     * element itself (F idempotent: the plain select `e > acc ? e : acc`
     * skips a NaN e, but a lane started from one would stay NaN) */
    mt_texpr *B0 = mt_te_load(a, st->buf, st->idx, st->nidx);
    int first = cb->sum ? 1 : 0;
    items[0] = mt_ts_store(a, acc, &R, 1, cb->sum ? red_vector(v, cb->e, mt_te_i64(a, 0)) : mt_te_broadcast(a, B0, v->L));
    mt_tvar *vo = mt_tvar_new(a, l->var->name, MT_INT64);
    mt_texpr *next = red_vector(v, cb->e, mt_te_bin(a, TE_MUL, mt_te_var(a, vo), mt_te_i64(a, v->L)));
    mt_tstmt *step = mt_ts_store(a, acc, &R, 1, mt_tcombiner_apply(a, cb, mt_te_load(a, acc, &R, 1), next));
    int64_t c;
    /* a few vectors (partial results of an rfactor): unrolled, so that they stay registers */
    mt_for_kind k = mt_te_is_const_int(nv, &c) && c <= MAX_UNROLLED_VECTORS ? MT_FOR_UNROLLED : MT_FOR_SERIAL;
    items[1] = mt_ts_for(a, vo, mt_te_i64(a, first), mt_arith_sub(a, nv, mt_te_i64(a, first)), k, step);
    items[2] = red_tree(v, cb, acc);
    items[3] = mt_ts_store(a, st->buf, st->idx, st->nidx, mt_tcombiner_apply(a, cb, B0, mt_te_load(a, acc, &zero, 1)));
    mt_tstmt *body = mt_ts_alloc(a, acc, mt_ts_seq(a, items, 4));
    if (mt_te_is_const_int(nv, &c)) return body;
    return mt_ts_if(a, mt_te_bin(a, TE_GT, nv, mt_te_i64(a, 0)), body, NULL);
}

/* The reduction loop vectorized, or NULL when it is not one (or not on a CPU). */
static mt_tstmt *vectorize_reduction(mt_arena *a, const mt_tstmt *l, const mt_target_desc *target) {
    const mt_tstmt *st = l->body;
    mt_tcombiner cb;
    int64_t min;
    if (target->kind == MT_TARGET_CUDA || !mt_te_is_const_int(l->min, &min) || min != 0 || st->kind != TS_STORE ||
        st->nidx != 1 || mt_texpr_uses_var(st->idx[0], l->var) || !mt_tcombiner_match(a, st, &cb) ||
        mt_texpr_reads(cb.e, st->buf) || !mt_texpr_uses_var(cb.e, l->var))
        return NULL;
    vec v;
    memset(&v, 0, sizeof v);
    v.a = a;
    v.i = l->var;
    v.ok = true;
    see_buffer(&v, st->buf);
    mt_tvisitor t = {check_expr, NULL, &v};
    mt_tvisit_expr(&t, cb.e);
    if (!v.ok) return NULL;
    v.L = mt_target_step_bytes(target) / v.widest;
    mt_texpr *n = mt_te_cast(a, MT_INT64, l->extent);
    int64_t cn, most;
    bool cst = mt_te_is_const_int(n, &cn);
    /* a short loop (a constant, or a split's clamp T.min(8, ..)): narrower vectors */
    bool short_loop = mt_arith_const_bound(l->extent, &most) && most >= 0;
    while (short_loop && v.L > most && v.L * v.widest > MIN_VECTOR_BYTES) v.L /= 2;
    if (cst && cn < v.L) return NULL; /* no whole vector: the loop as it is */
    mt_texpr *L = mt_te_i64(a, v.L);
    if (!cst) n = mt_te_bin(a, TE_MAX, n, mt_te_i64(a, 0));
    mt_texpr *nv = cst ? mt_te_i64(a, cn / v.L) : mt_te_bin(a, TE_FLOORDIV, n, L);
    mt_tstmt *parts[2];
    parts[0] = mt_ts_at(red_vectors(&v, st, &cb, nv, l), l->loc);
    mt_tvar *tv = mt_tvar_new(a, l->var->name, MT_INT64);
    mt_texpr *i = mt_te_bin(a, TE_ADD, cst ? mt_te_i64(a, cn / v.L * v.L) : mt_te_bin(a, TE_MUL, nv, L), mt_te_var(a, tv));
    mt_texpr *nt = cst ? mt_te_i64(a, cn % v.L) : mt_te_bin(a, TE_FLOORMOD, n, L);
    parts[1] = mt_ts_at(mt_ts_for(a, tv, mt_te_i64(a, 0), nt, MT_FOR_SERIAL, mt_tsubst_stmt(a, l->body, &l->var, &i, 1)), l->loc);
    if (cst && cn % v.L == 0) return parts[0];
    return mt_ts_at(mt_ts_seq(a, parts, 2), l->loc);
}

static mt_tstmt *vec_loops(mt_tmutator *m, mt_tstmt *s) {
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    if (r->kind != TS_FOR || r->for_kind != MT_FOR_VECTORIZED) return r;
    mt_tstmt *v = vectorize_loop(m->arena, r, m->ctx);
    if (!v) v = vectorize_reduction(m->arena, r, m->ctx);
    return v ? v : r;
}

static mt_texpr *keep_expr(mt_tmutator *m, mt_texpr *e) {
    (void)m;
    return e;
}

mt_tfunc *mt_tir_vectorize(mt_arena *a, mt_tfunc *f) {
    if (!f->body) return f;
    mt_tmutator m = {a, keep_expr, vec_loops, (void *)mt_tfunc_target(f)};
    mt_tstmt *body = mt_tmutate_stmt(&m, f->body);
    return body == f->body ? f : mt_tfunc_with_body(a, f, body);
}
