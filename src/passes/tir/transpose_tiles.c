/*
 * transpose_tiles.c -- a tile of a transpose as row loads and shuffles.
 *
 * The injective rule cuts a transpose into N x N tiles (N the elements of a
 * vector), and vectorize makes each of a tile's N output rows one vector
 * store whose value loads N elements a row of the input apart:
 *
 *     for i in range(N):
 *         out[T.Ramp(d(i), 1, N)] = a[T.Ramp(b + i, s, N)]
 *
 * Code generation loads such a vector lane by lane (N scalar loads and N
 * inserts per vector: about two instructions per element, which a CPU
 * runs slower than memory delivers the elements). This pass replaces the
 * loop by N contiguous loads of the tile's input rows, a transpose of
 * those N vectors in registers and the N stores:
 *
 *     row_l = a[T.Ramp(b + l * s, 1, N)]                  for l < N
 *     (log2 N rounds of T.Shuffle over pairs of vectors)
 *     out[T.Ramp(d(k), 1, N)] = (the value, with col_k)  for k < N
 *
 * Round p exchanges bit p of the row number with bit p of the lane number:
 * vectors r and r' = r | 2^p (bit p of r clear) become
 *
 *     r  : lane c = r[c]              if bit p of c is clear, else r'[c - 2^p]
 *     r' : lane c = r[c + 2^p]        if bit p of c is clear, else r'[c]
 *
 * two-vector shuffles (one instruction each on AVX-512: vpermt2ps at worst).
 * After log2 N rounds every row bit has traded places with its lane bit:
 * vector k holds lane l = row_l[k], the store's value at i = k. That is
 * N log2 N shuffles and 2N memory operations for N^2 elements.
 *
 * Matched: a serial or unrolled loop from 0 of constant extent N (a power
 * of two from 4 to 16) whose body is straight (sequences, lets and stores:
 * one store of a transposed row, as above, or the steps of a reduction
 * over the rows in the lanes, as the argmax rule's column scan), where
 * each load whose index is a T.Ramp of N lanes and another stride s has a
 * base b + i, b and s invariant (free of i and of the body's lets, reading
 * no memory, which the body might store): the transposed loads, at most two
 * distinct ones (each takes N registers) and none of a buffer the body
 * stores (they move before all its stores). The body is copied N times,
 * k = 0 .. N - 1, with i := k, each transposed load its column k and its
 * lets bound to variables of their own. Anything else is left as it is.
 * CPU targets only; runs after vectorize and simplify.
 */
#include <string.h>

#include "passes/tir/tir_passes.h"
#include "target/target.h"
#include "tir/arith.h"

enum { MAX_N = 16, MAX_LOADS = 2, MAX_LETS = 64 };

typedef struct tile {
    mt_arena *a;
    const mt_tvar *i;                 /* the tile loop's variable */
    int n;                            /* its extent, the vector lanes */
    const mt_texpr *load[MAX_LOADS];  /* the distinct transposed loads */
    int nloads;
    mt_tvar *col[MAX_LOADS][MAX_N];   /* after the transpose: col[t][k] is load t at i = k */
    bool bad;                         /* something the pass does not take */
    const mt_tvar *body_lets[MAX_LETS]; /* every let of the body */
    int nbody_lets;
    const mt_tvar *from[MAX_LETS];    /* while copying the body: its lets in scope ... */
    mt_tvar *to[MAX_LETS];            /* ... and their copies' variables */
    int nmap;
    int k;                            /* the copy being made, and i's value in it */
    mt_texpr *k_expr;
} tile;

/* Whether e is a sum x + i (through additions and subtractions of terms
 * free of i, i added once): *rest = x, NULL when e is i itself. */
static bool plus_var(mt_arena *a, const mt_texpr *e, const mt_tvar *i, mt_texpr **rest) {
    if (e->kind == TE_VAR && e->var == i) {
        *rest = NULL;
        return true;
    }
    if (e->kind != TE_ADD && e->kind != TE_SUB) return false;
    bool left = mt_texpr_uses_var(e->a, i), right = mt_texpr_uses_var(e->b, i);
    mt_texpr *r;
    if (left == right || (right && e->kind == TE_SUB)) return false;
    if (!plus_var(a, left ? e->a : e->b, i, &r)) return false;
    mt_texpr *other = left ? e->b : e->a;
    if (!r) *rest = e->kind == TE_SUB ? mt_arith_unary(a, TE_NEG, other) : other;
    else *rest = left ? mt_arith_bin(a, e->kind, r, other) : mt_arith_add(a, other, r);
    return true;
}

/* A load at a T.Ramp of a stride other than 1: transposed when its base is
 * b + i and its stride free of i. */
static bool strided_load(const tile *t, const mt_texpr *e) {
    if (e->kind != TE_LOAD || e->nargs != 1 || e->args[0]->kind != TE_RAMP) return false;
    return !mt_arith_is_const(e->args[0]->b, 1);
}

/* Whether e has the same value in every iteration but for i: it reads no
 * memory (the body may store what it reads) and uses no let of the body. */
static bool invariant(const tile *t, const mt_texpr *e) {
    if (mt_texpr_reads_memory(e)) return false;
    for (int k = 0; k < t->nbody_lets; k++)
        if (mt_texpr_uses_var(e, t->body_lets[k])) return false;
    return true;
}

static bool transposable(const tile *t, const mt_texpr *e) {
    const mt_texpr *ix = e->args[0];
    mt_texpr *rest;
    return e->lanes == t->n && !mt_texpr_uses_var(ix->b, t->i) && invariant(t, ix->a) && invariant(t, ix->b) &&
           plus_var(t->a, ix->a, t->i, &rest);
}

/* The transposed loads of e (visitor hook; t->bad when a strided load of
 * i is not one). */
static void collect_hook(mt_tvisitor *v, const mt_texpr *e) {
    tile *t = v->ctx;
    if (t->bad) return;
    if (!strided_load(t, e)) {
        mt_tvisit_expr_children(v, e);
        return;
    }
    if (!transposable(t, e)) {
        t->bad = mt_texpr_uses_var(e, t->i);
        return;
    }
    for (int k = 0; k < t->nloads; k++)
        if (mt_texpr_equal(t->load[k], e)) return;
    if (t->nloads == MAX_LOADS) t->bad = true;
    else t->load[t->nloads++] = e;
}

static void collect(tile *t, const mt_texpr *e) {
    mt_tvisitor v = {collect_hook, NULL, t};
    mt_tvisit_expr(&v, e);
}

static mt_texpr *var_ref(mt_arena *a, mt_tvar *v, int lanes) {
    mt_texpr *e = mt_te_var(a, v);
    e->lanes = lanes;
    return e;
}

/* The lets of the row loads and the shuffle rounds (see the file comment),
 * in order: rewrite binds them around the body's copies. */
typedef struct chain {
    mt_tvar *var[MAX_LOADS * MAX_N * 6]; /* rows + log2(16) rounds of 16, per load */
    mt_texpr *val[MAX_LOADS * MAX_N * 6];
    int n;
} chain;

static mt_tvar *bind(tile *t, chain *c, const char *name, mt_texpr *val) {
    mt_tvar *v = mt_tvar_new(t->a, name, val->dtype);
    c->var[c->n] = v;
    c->val[c->n++] = val;
    return v;
}

static void transpose(tile *t, chain *c, int which) {
    const mt_texpr *ld = t->load[which], *ix = ld->args[0];
    mt_texpr *base;
    plus_var(t->a, ix->a, t->i, &base);
    mt_tvar *v[MAX_N];
    for (int l = 0; l < t->n; l++) { /* row l of the tile: lane i is at base + l * s + i */
        mt_texpr *at = mt_arith_mul(t->a, (mt_texpr *)ix->b, mt_te_int(t->a, ix->b->dtype, l));
        if (base) at = mt_arith_add(t->a, base, at);
        mt_texpr *one = mt_te_int(t->a, ix->b->dtype, 1);
        mt_texpr *row = mt_te_load(t->a, ld->buf, (mt_texpr *[]){mt_te_ramp(t->a, at, one, t->n)}, 1);
        row->loc = ld->loc;
        v[l] = bind(t, c, "tile_row", row);
    }
    for (int p = 1; p < t->n; p <<= 1) {
        int lo[MAX_N], hi[MAX_N];
        for (int c2 = 0; c2 < t->n; c2++) {
            lo[c2] = c2 & p ? t->n + c2 - p : c2;
            hi[c2] = c2 & p ? t->n + c2 : c2 + p;
        }
        for (int r = 0; r < t->n; r++) {
            if (r & p) continue;
            mt_texpr *x = var_ref(t->a, v[r], t->n), *y = var_ref(t->a, v[r | p], t->n);
            v[r] = bind(t, c, "tile_t", mt_te_shuffle(t->a, x, y, lo, t->n));
            v[r | p] = bind(t, c, "tile_t", mt_te_shuffle(t->a, x, y, hi, t->n));
        }
    }
    memcpy(t->col[which], v, sizeof v);
}

/* e in copy t->k of the body (mutator hook): each transposed load its
 * column k, i := k, the body's lets their copies'. */
static mt_texpr *at_k_hook(mt_tmutator *m, mt_texpr *e) {
    tile *t = m->ctx;
    for (int w = 0; w < t->nloads; w++)
        if (mt_texpr_equal(t->load[w], e)) return var_ref(t->a, t->col[w][t->k], t->n);
    if (e->kind != TE_VAR) return mt_tmutate_expr_children(m, e);
    if (e->var == t->i) return t->k_expr;
    for (int j = t->nmap - 1; j >= 0; j--)
        if (t->from[j] == e->var) return var_ref(t->a, t->to[j], e->lanes);
    return e;
}

static mt_texpr *at_k(tile *t, const mt_texpr *e) {
    mt_tmutator m = {t->a, at_k_hook, NULL, t};
    return mt_tmutate_expr(&m, (mt_texpr *)e);
}

/* Copy k of the body (straight: sequences, lets, stores), its lets bound
 * to variables of their own. */
static mt_tstmt *copy_k(tile *t, const mt_tstmt *s) {
    mt_arena *a = t->a;
    switch (s->kind) {
    case TS_SEQ: {
        mt_tstmt **out = MT_NEW_ARRAY(a, mt_tstmt *, s->nstmts > 0 ? s->nstmts : 1);
        for (int j = 0; j < s->nstmts; j++) out[j] = copy_k(t, s->stmts[j]);
        return mt_ts_at(mt_ts_seq(a, out, s->nstmts), s->loc);
    }
    case TS_LET: {
        mt_texpr *v = at_k(t, s->value);
        t->from[t->nmap] = s->var;
        mt_tvar *x = t->to[t->nmap++] = mt_tvar_new(a, s->var->name, s->var->dtype);
        mt_tstmt *body = copy_k(t, s->body);
        t->nmap--;
        return mt_ts_at(mt_ts_let(a, x, v, body), s->loc);
    }
    default: { /* TS_STORE (straight) */
        mt_texpr **idx = MT_NEW_ARRAY(a, mt_texpr *, s->nidx > 0 ? s->nidx : 1);
        for (int j = 0; j < s->nidx; j++) idx[j] = at_k(t, s->idx[j]);
        return mt_ts_at(mt_ts_store(a, s->buf, idx, s->nidx, at_k(t, s->value)), s->loc);
    }
    }
}

/* Whether s is straight (sequences, lets, stores, at most MAX_LETS lets
 * in all), recording its lets (lets_of, first) or collecting its
 * transposed loads (straight); stores of their buffers spoil it (checked
 * once all are known: stores_loaded). */
static bool lets_of(tile *t, const mt_tstmt *s) {
    switch (s->kind) {
    case TS_SEQ:
        for (int j = 0; j < s->nstmts; j++)
            if (!lets_of(t, s->stmts[j])) return false;
        return true;
    case TS_LET:
        if (t->nbody_lets == MAX_LETS) return false;
        t->body_lets[t->nbody_lets++] = s->var;
        return lets_of(t, s->body);
    case TS_STORE: return true;
    default: return false;
    }
}

static bool straight(tile *t, const mt_tstmt *s, int depth) {
    switch (s->kind) {
    case TS_SEQ:
        for (int j = 0; j < s->nstmts; j++)
            if (!straight(t, s->stmts[j], depth)) return false;
        return true;
    case TS_LET:
        collect(t, s->value);
        return depth < MAX_LETS && straight(t, s->body, depth + 1);
    case TS_STORE:
        for (int j = 0; j < s->nidx; j++) collect(t, s->idx[j]);
        collect(t, s->value);
        return true;
    default: return false;
    }
}

/* Whether s stores into a buffer a transposed load reads (the loads move
 * before every store of the loop). */
static bool stores_loaded(const tile *t, const mt_tstmt *s) {
    switch (s->kind) {
    case TS_SEQ:
        for (int j = 0; j < s->nstmts; j++)
            if (stores_loaded(t, s->stmts[j])) return true;
        return false;
    case TS_LET: return stores_loaded(t, s->body);
    default:
        for (int w = 0; w < t->nloads; w++)
            if (t->load[w]->buf == s->buf) return true;
        return false;
    }
}

static bool pow2_lanes(int64_t n) { return n >= 4 && n <= MAX_N && (n & (n - 1)) == 0; }

static bool matches(const mt_tstmt *s, int64_t *n) {
    if (s->kind != TS_FOR || (s->for_kind != MT_FOR_SERIAL && s->for_kind != MT_FOR_UNROLLED)) return false;
    return mt_arith_is_const(s->min, 0) && mt_te_is_const_int(s->extent, n) && pow2_lanes(*n);
}

static mt_tstmt *rewrite(mt_arena *a, const mt_tstmt *s) {
    int64_t n;
    if (!matches(s, &n)) return NULL;
    tile t = {.a = a, .i = s->var, .n = (int)n};
    if (!lets_of(&t, s->body) || !straight(&t, s->body, 0) || t.bad || t.nloads == 0 || stores_loaded(&t, s->body))
        return NULL;
    chain c = {.n = 0};
    for (int w = 0; w < t.nloads; w++) transpose(&t, &c, w);
    mt_tstmt *copies[MAX_N];
    for (t.k = 0; t.k < t.n; t.k++) {
        t.k_expr = mt_te_int(a, s->var->dtype, t.k);
        copies[t.k] = copy_k(&t, s->body);
    }
    mt_tstmt *body = mt_ts_seq_flat(a, copies, t.n);
    for (int j = c.n - 1; j >= 0; j--) body = mt_ts_let(a, c.var[j], c.val[j], body);
    return mt_ts_at(body, s->loc);
}

/* ---- tiles clamped at the edges -------------------------------------------------
 * Splits that do not divide their loops leave the tile loop of extent
 * T.min(N, A) and, inside it, the vector loop of extent X // N with its
 * scalar tail of X % N, X = T.max(T.min(N, B), 0) (vectorize's split of a
 * clamped loop):
 *
 *     for i in range(T.min(N, A)):
 *         for v in range(X // N): S(v)
 *         for t in range(X % N): S'(t)
 *
 * Where A >= N and B >= N that is N iterations of S(0) and no tail, which
 * rewrite may take; the tile then becomes
 *
 *     if A >= N and B >= N: (the rewritten full tile)
 *     else: (the loop as it was)
 *
 * so that every whole tile of a transpose whose sizes are not multiples of
 * N is rewritten too. Either clamp may be absent (a constant extent N; a
 * body that is S itself). B must be free of i and read no memory (the test
 * runs once, before the loop, and also where the loop runs no iteration). */

/* X's B when X is T.max(T.min(N, B), 0) or T.min(N, B), else NULL. */
static mt_texpr *clamp_of(const mt_texpr *x, int64_t n) {
    if (x->kind == TE_MAX && mt_arith_is_const(x->b, 0)) x = x->a;
    if (x->kind != TE_MIN) return NULL;
    if (mt_arith_is_const(x->a, n)) return x->b;
    return mt_arith_is_const(x->b, n) ? x->a : NULL;
}

/* The vector loop's body with v := 0 and its clamp *b, when s is that
 * loop (alone or with its tail); else s itself, *b NULL. */
static const mt_tstmt *vector_step(mt_arena *a, const mt_tstmt *s, int64_t n, mt_texpr **b) {
    const mt_tstmt *v = s, *tail = NULL;
    *b = NULL;
    if (s->kind == TS_SEQ && s->nstmts == 2) v = s->stmts[0], tail = s->stmts[1];
    if (v->kind != TS_FOR || v->extent->kind != TE_FLOORDIV || !mt_arith_is_const(v->extent->b, n) ||
        !mt_arith_is_const(v->min, 0))
        return tail ? NULL : s;
    mt_texpr *x = v->extent->a;
    if (tail && (tail->kind != TS_FOR || tail->extent->kind != TE_FLOORMOD || !mt_texpr_equal(tail->extent->a, x) ||
                 !mt_arith_is_const(tail->extent->b, n)))
        return NULL;
    if (!(*b = clamp_of(x, n))) return NULL;
    mt_texpr *zero = mt_te_int(a, v->var->dtype, 0);
    return mt_tsubst_stmt(a, v->body, (mt_tvar *const *)&v->var, &zero, 1);
}

static mt_texpr *at_least(mt_arena *a, mt_texpr *x, int64_t n) {
    return mt_te_bin(a, TE_GE, x, mt_te_int(a, x->dtype, n));
}

static mt_tstmt *unclamp(mt_arena *a, const mt_tstmt *s) {
    if (s->kind != TS_FOR || s->for_kind != MT_FOR_SERIAL || !mt_arith_is_const(s->min, 0)) return NULL;
    mt_texpr *clamp_a = NULL, *clamp_b;
    int64_t n = 0;
    const mt_texpr *e = s->extent;
    if (e->kind == TE_MIN) {
        const mt_texpr *c = mt_te_is_const_int(e->a, &n) ? e->a : e->b;
        if (!mt_te_is_const_int(c, &n)) return NULL;
        clamp_a = c == e->a ? e->b : e->a;
    } else if (!mt_te_is_const_int(e, &n)) {
        return NULL;
    }
    if (!pow2_lanes(n)) return NULL;
    const mt_tstmt *step = vector_step(a, s->body, n, &clamp_b);
    if (!step || (!clamp_a && !clamp_b)) return NULL;
    /* the test of B moves out of the loop and runs even where it runs no
     * iteration: B must be the same in every iteration and harmless to
     * evaluate (review findings: i in B, an internal error; B reading
     * memory the body stores, a wrong result; B reading memory that only
     * iterations that never run could reach, a fault) */
    if (clamp_b && (mt_texpr_uses_var(clamp_b, s->var) || mt_texpr_reads_memory(clamp_b))) return NULL;
    mt_tstmt *full = mt_ts_at(mt_ts_for(a, s->var, s->min, mt_te_int(a, s->extent->dtype, n), MT_FOR_SERIAL,
                                        (mt_tstmt *)step), s->loc);
    mt_tstmt *r = rewrite(a, full);
    if (!r) return NULL;
    mt_texpr *cond = clamp_a ? at_least(a, clamp_a, n) : NULL;
    if (clamp_b) cond = cond ? mt_te_bin(a, TE_AND, cond, at_least(a, clamp_b, n)) : at_least(a, clamp_b, n);
    return mt_ts_at(mt_ts_if(a, cond, r, (mt_tstmt *)s), s->loc);
}

static mt_tstmt *tile_stmt(mt_tmutator *m, mt_tstmt *s) {
    mt_tstmt *r = rewrite(m->arena, s);
    if (!r) r = unclamp(m->arena, s);
    return r ? r : mt_tmutate_stmt_children(m, s);
}

/* Expressions hold no statements: no need to walk them. */
static mt_texpr *keep_expr(mt_tmutator *m, mt_texpr *e) { return e; }

mt_tfunc *mt_tir_transpose_tiles(mt_arena *a, mt_tfunc *f) {
    if (!f->body || mt_tfunc_target(f)->kind != MT_TARGET_CPU) return f;
    mt_tmutator m = {a, keep_expr, tile_stmt, NULL};
    return mt_tfunc_with_body(a, f, mt_tmutate_stmt(&m, f->body));
}
