/*
 * rule_argreduce.c -- the CPU schedule of argmax / argmin over the last
 * axis (what argreduce.h matches), part of the row rule's pass
 * (schedule_reduce; its knobs lanes, accumulators, parallel, chunk_kib):
 * the rows as the row rule's (mt_rr_rows: chunks of rows across threads),
 * each row scanned in vectors of L lanes, U sets of L lanes each keeping
 * its best (value, index) pair:
 *
 *     bv[0:U*L] = I; bi[0:U*L] = 0
 *     for rb in range(N // (U * L)):  for u in range(U):
 *         e = E(row, j) with j = (rb * U + u) * L + [0, 1, .., L-1]
 *         m = not(e <= bv[u]) and bv[u] == bv[u]         (argmin: >=)
 *         bv[u] = select(m, e, bv[u]); bi[u] = select(m, j, bi[u])
 *     the single vectors left, into set 0
 *     (tv, ti) = (I, 0), then the N % L elements left scanned into it
 *     the sets met into set 0, then its halves down to lane 0 (vector
 *     selects by `takes`, no branch); lane 0 and (tv, ti) met; out[row] = ti
 *
 * Each lane scans its elements in increasing order, so by argreduce.h the
 * pairs met by `takes` in any tree give the serial scan's answer (the
 * first index of the largest value, or of the first NaN). `m` is
 * argreduce.h's `better` in two compares and an and. The indices are
 * int32 beside 4-byte values when the row length is a constant under
 * 2^31 (masks of one width: int64 indices beside float32 made LLVM repack
 * every mask, 57 instructions a step of 16 against 19), else int64. U: 2
 * (two sets of 16 float32 and their indices are 8 AVX2 registers) or the
 * vectors of a shorter row. Rows under SERIAL_BELOW elements (a constant
 * length, lanes not given) are scanned one element at a time instead.
 *
 * Measured (2026-11-27, one thread, `mtc --random --bench`, against the
 * nest as written, which ran on one thread with a compare and a branch per
 * element and best and the index through memory): 4096 x 4096 float32
 * 15.5 -> 7.9 ms (NumPy 5.8-6.4 ms in the same minutes: both near our
 * max(x, axis=-1)'s 6.4-7.2), 2 threads 19.4 -> 4.8 ms; 65536 rows of 3,
 * 10, 16, 20, 64, 100, 1000: 2.3, 2.5, 2.0, 1.9, 2.4, 1.7, 3.8 times as fast.
 *
 * Short rows in the lanes (knob block_rows; below, "rows in the lanes"):
 * rows of a multiple of L up to 64 elements go L at a time, a lane per
 * row, the columns in order (65536 x 16 float32: 0.60 -> 0.16 ms on one
 * thread, 2026-11-29).
 *
 * Values of float32, float64, int32 and int64 (float16 and bfloat16 keep
 * the nest as written: their compares would convert every lane). L: the
 * row rule's lanes for the values' dtype (the knob lanes; else the
 * target's step, or fewer for a short row: rule_reduce_defaults.c).
 */
#include "schedule/argreduce.h"
#include "schedule/knobs.h"

#define RULE "schedule_reduce"

/* Sets of pairs by default (knob accumulators), at most: two sets of 16
 * float32 values and int32 indices are 8 AVX2 registers; four spilled. */
enum { ACC = 2 };

/* Rows shorter than this are scanned serially (each row still one item of
 * the parallel chunks): meeting the lanes' pairs costs a compare and a
 * branch per lane, more than the row itself when it is short. */
enum { SERIAL_BELOW = 16 };

typedef struct cg {
    mt_argred m;
    int L, U;             /* lanes of a vector; vectors a step (sets of pairs) */
    bool serial;          /* rows under SERIAL_BELOW: scanned one element at a time */
    mt_dtype it;          /* the lanes' indices: int32 beside 4-byte values of a row under 2^31, else int64 */
    mt_tbuffer *bv, *bi, *tv, *ti;
    mt_tbuffer *rv, *ri;  /* rows in the lanes: each lane's best value and index */
    int64_t ncols;        /* ... and the row length */
} cg;

typedef MT_VEC(mt_tstmt *) svec;

static mt_texpr *I(rr *c, int64_t v) { return mt_te_i64(c->a, v); }
static mt_tstmt *st(rr *c, mt_tbuffer *b, mt_texpr *ix, mt_texpr *v) { return mt_ts_store(c->a, b, &ix, 1, v); }
static mt_texpr *ld(rr *c, mt_tbuffer *b, mt_texpr *ix) { return mt_te_load(c->a, b, &ix, 1); }
static mt_tstmt *seq2(rr *c, mt_tstmt *x, mt_tstmt *y) { return mt_ts_seq(c->a, (mt_tstmt *[]){x, y}, 2); }

static mt_tbuffer *local(rr *c, const char *name, int64_t n, mt_dtype dt) {
    mt_texpr *e = I(c, n);
    mt_tbuffer *b = mt_tbuffer_new(c->a, name, dt, 1, &e);
    b->scope = MT_SCOPE_LOCAL;
    return b;
}

static mt_texpr *splat(rr *c, mt_texpr *x, int lanes) { return lanes == 1 ? x : mt_te_broadcast(c->a, x, lanes); }

/* One vector step: the elements j (a T.Ramp of L lanes) against lanes
 * [at, at + L) of the pairs. */
static mt_tstmt *lane_step(cg *k, rr *c, mt_texpr *j, int64_t at) {
    int L = k->L;
    mt_tvar *ev = mt_tvar_new(c->a, "e", k->m.dt), *mv = mt_tvar_new(c->a, "m", MT_BOOL);
    mt_texpr *e = mt_te_var(c->a, ev), *m = mt_te_var(c->a, mv);
    e->lanes = m->lanes = L;
    mt_texpr *lanes = mt_lw_ramp(&c->lw, I(c, at), L);
    /* the indices in the lanes' type: a ramp of it, not a conversion of each lane */
    mt_texpr *jt = k->it == MT_INT64 ? j
                   : L == 1 ? mt_te_cast(c->a, k->it, j)
                            : mt_te_ramp(c->a, mt_te_cast(c->a, k->it, j->a), mt_te_cast(c->a, k->it, j->b), L);
    mt_texpr *val = mt_argred_value(&k->m, j);
    if (val->lanes != L) val = splat(c, val, L); /* E does not read the row */
    mt_tstmt *up = seq2(c, st(c, k->bv, lanes, mt_te_select(c->a, m, e, ld(c, k->bv, lanes))),
                        st(c, k->bi, lanes, mt_te_select(c->a, m, jt, ld(c, k->bi, lanes))));
    return mt_ts_let(c->a, ev, val, mt_ts_let(c->a, mv, mt_argred_better(&k->m, e, ld(c, k->bv, lanes)), up));
}

/* The lanes' scan: U vectors a step, U independent sets of L pairs (the
 * compare-and-select chain of one set is a few cycles a step), then the
 * single vectors left into the first set. */
static mt_tstmt *scan_vectors(cg *k, rr *c) {
    int L = k->L, U = k->U;
    mt_texpr *N = mt_te_cast(c->a, MT_INT64, c->N);
    mt_tvar *rb = mt_tvar_new(c->a, "rb", MT_INT64), *rv = mt_tvar_new(c->a, "rv", MT_INT64);
    svec s = {0}, u4 = {0};
    for (int u = 0; u < U; u++) {
        mt_texpr *j0 = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, mt_te_var(c->a, rb), I(c, (int64_t)U * L)), I(c, (int64_t)u * L));
        MT_VEC_PUSH(c->a, &u4, lane_step(k, c, mt_lw_ramp(&c->lw, j0, L), (int64_t)u * L));
    }
    mt_texpr *nb = mt_arith_bin(c->a, TE_FLOORDIV, N, I(c, (int64_t)U * L));
    MT_VEC_PUSH(c->a, &s, mt_ts_for(c->a, rb, I(c, 0), nb, MT_FOR_SERIAL, mt_ts_seq(c->a, u4.data, u4.len)));
    if (U > 1) {
        mt_texpr *base = mt_lw_mul(&c->lw, nb, I(c, (int64_t)U * L));
        mt_texpr *nv = mt_arith_bin(c->a, TE_FLOORDIV, mt_lw_sub(&c->lw, N, base), I(c, L));
        int64_t z;
        if (!mt_te_is_const_int(nv, &z) || z > 0) {
            mt_texpr *j0 = mt_lw_add(&c->lw, base, mt_lw_mul(&c->lw, mt_te_var(c->a, rv), I(c, L)));
            MT_VEC_PUSH(c->a, &s, mt_ts_for(c->a, rv, I(c, 0), nv, MT_FOR_SERIAL, lane_step(k, c, mt_lw_ramp(&c->lw, j0, L), 0)));
        }
    }
    return mt_ts_seq(c->a, s.data, s.len);
}

/* The N % L elements left, scanned into (tv, ti). */
static mt_tstmt *scan_tail(cg *k, rr *c) {
    mt_texpr *N = mt_te_cast(c->a, MT_INT64, c->N);
    mt_texpr *base = k->serial ? I(c, 0) : mt_lw_mul(&c->lw, mt_arith_bin(c->a, TE_FLOORDIV, N, I(c, k->L)), I(c, k->L));
    mt_texpr *left = mt_lw_sub(&c->lw, N, base);
    int64_t z;
    if (mt_te_is_const_int(left, &z) && z == 0) return NULL;
    mt_tvar *t = mt_tvar_new(c->a, "rt", MT_INT64), *ev = mt_tvar_new(c->a, "e", k->m.dt);
    mt_texpr *j = mt_lw_add(&c->lw, base, mt_te_var(c->a, t)), *e = mt_te_var(c->a, ev);
    mt_tstmt *take = seq2(c, st(c, k->tv, I(c, 0), e), st(c, k->ti, I(c, 0), j));
    mt_tstmt *up = mt_ts_if(c->a, mt_argred_better(&k->m, e, ld(c, k->tv, I(c, 0))), take, NULL);
    return mt_ts_for(c->a, t, I(c, 0), left, MT_FOR_SERIAL, mt_ts_let(c->a, ev, mt_argred_value(&k->m, j), up));
}

/* Pairs [from, from + w) meet pairs [0, w) in place, lane by lane: the
 * other pair is taken where argreduce.h's `takes` says so. */
static mt_tstmt *meet(cg *k, rr *c, int64_t from, int w) {
    mt_texpr *x = mt_lw_ramp(&c->lw, I(c, from), w), *y = mt_lw_ramp(&c->lw, I(c, 0), w);
    mt_tvar *mv = mt_tvar_new(c->a, "t", MT_BOOL);
    mt_texpr *m = mt_te_var(c->a, mv);
    m->lanes = w;
    mt_texpr *t = mt_argred_takes(&k->m, ld(c, k->bv, x), ld(c, k->bi, x), ld(c, k->bv, y), ld(c, k->bi, y));
    mt_tstmt *up = seq2(c, st(c, k->bv, y, mt_te_select(c->a, m, ld(c, k->bv, x), ld(c, k->bv, y))),
                        st(c, k->bi, y, mt_te_select(c->a, m, ld(c, k->bi, x), ld(c, k->bi, y))));
    return mt_ts_let(c->a, mv, t, up);
}

/* The lanes' pairs met in a tree of vector steps (the U sets into the
 * first, then halves of it down to lane 0: no branch), then lane 0 and
 * the tail's pair into (tv, ti). */
static mt_tstmt *combine(cg *k, rr *c) {
    svec s = {0};
    for (int u = 1; u < k->U; u++) MT_VEC_PUSH(c->a, &s, meet(k, c, (int64_t)u * k->L, k->L));
    for (int w = k->L / 2; w >= 1; w /= 2) MT_VEC_PUSH(c->a, &s, meet(k, c, w, w));
    mt_texpr *xv = ld(c, k->bv, I(c, 0)), *xi = mt_te_cast(c->a, MT_INT64, ld(c, k->bi, I(c, 0)));
    mt_texpr *t = mt_argred_takes(&k->m, xv, xi, ld(c, k->tv, I(c, 0)), ld(c, k->ti, I(c, 0)));
    mt_tstmt *take = seq2(c, st(c, k->tv, I(c, 0), xv), st(c, k->ti, I(c, 0), xi));
    MT_VEC_PUSH(c->a, &s, mt_ts_if(c->a, t, take, NULL));
    return mt_ts_seq(c->a, s.data, s.len);
}

static mt_tstmt *row_end(cg *k, rr *c, svec *s);

static mt_tstmt *arg_row(rr *c, void *ctx) {
    cg *k = ctx;
    mt_arena *a = c->a;
    int L = k->L;
    mt_texpr *ident = mt_te_cast(a, k->m.dt, k->m.ident);
    svec s = {0};
    if (k->serial) { /* a short row: the serial scan, no lanes to meet */
        MT_VEC_PUSH(a, &s, st(c, k->tv, I(c, 0), ident));
        MT_VEC_PUSH(a, &s, st(c, k->ti, I(c, 0), I(c, 0)));
        mt_tstmt *all = scan_tail(k, c);
        if (all) MT_VEC_PUSH(a, &s, all);
        return row_end(k, c, &s);
    }
    for (int u = 0; u < k->U; u++) {
        mt_texpr *lanes = mt_lw_ramp(&c->lw, I(c, (int64_t)u * L), L);
        MT_VEC_PUSH(a, &s, st(c, k->bv, lanes, splat(c, ident, L)));
        MT_VEC_PUSH(a, &s, st(c, k->bi, lanes, splat(c, mt_te_cast(a, k->it, I(c, 0)), L)));
    }
    MT_VEC_PUSH(a, &s, scan_vectors(k, c));
    MT_VEC_PUSH(a, &s, st(c, k->tv, I(c, 0), ident));
    MT_VEC_PUSH(a, &s, st(c, k->ti, I(c, 0), I(c, 0)));
    mt_tstmt *tail = scan_tail(k, c);
    if (tail) MT_VEC_PUSH(a, &s, tail);
    MT_VEC_PUSH(a, &s, combine(k, c));
    return row_end(k, c, &s);
}

/* s, then out[row] = ti, in the row's locals. */
static mt_tstmt *row_end(cg *k, rr *c, svec *s) {
    mt_arena *a = c->a;
    mt_texpr *idx[MT_MAX_RANK + 1];
    for (int d = 0; d < c->ns; d++) idx[d] = c->oval[d];
    idx[c->ns] = I(c, 0);
    MT_VEC_PUSH(a, s, mt_lw_store(&c->lw, k->m.out, idx, k->m.out_nd, ld(c, k->ti, I(c, 0))));
    mt_tstmt *body = mt_ts_seq(a, s->data, s->len);
    mt_tbuffer *bs[4] = {k->bv, k->bi, k->tv, k->ti};
    for (int i = 3; i >= 0; i--)
        if (!k->serial || i >= 2) body = mt_ts_alloc(a, bs[i], body);
    return body;
}

/* ---- rows in the lanes -----------------------------------------------------------
 * Short rows (N a multiple of L up to COLUMNS_MAX elements) go L at a time,
 * row first + l in lane l: the columns in order, each one vector step
 *
 *     e = E(first .. first + L - 1, j)            (a T.Ramp down column j)
 *     m = better(e, bv); bv = select(m, e, bv); bi = select(m, j, bi)
 *
 * so each lane is the serial scan of its row (no pairs to meet), and the
 * L results are one vector store. The columns go L at a time in a loop of
 * L steps that transpose_tiles turns into L row loads and a transpose in
 * registers. A partial block (the last of a chunk) goes row by row. */
enum { COLUMNS_MAX = 64 };

static mt_tstmt *column_step(cg *k, rr *c, mt_texpr *first, mt_texpr *j) {
    int L = k->L;
    mt_texpr *lanes = mt_lw_ramp(&c->lw, I(c, 0), L);
    mt_tvar *ev = mt_tvar_new(c->a, "e", k->m.dt), *mv = mt_tvar_new(c->a, "m", MT_BOOL);
    mt_texpr *e = mt_te_var(c->a, ev), *m = mt_te_var(c->a, mv);
    e->lanes = m->lanes = L;
    mt_texpr *val = mt_argred_value_rows(&k->m, first, L, j);
    mt_texpr *jt = splat(c, mt_te_cast(c->a, k->it, j), L);
    mt_tstmt *up = seq2(c, st(c, k->rv, lanes, mt_te_select(c->a, m, e, ld(c, k->rv, lanes))),
                        st(c, k->ri, lanes, mt_te_select(c->a, m, jt, ld(c, k->ri, lanes))));
    return mt_ts_let(c->a, ev, val, mt_ts_let(c->a, mv, mt_argred_better(&k->m, e, ld(c, k->rv, lanes)), up));
}

static mt_tstmt *column_scan(cg *k, rr *c, mt_texpr *first) {
    int L = k->L;
    mt_texpr *lanes = mt_lw_ramp(&c->lw, I(c, 0), L);
    mt_tvar *jo = mt_tvar_new(c->a, "jo", MT_INT64), *ji = mt_tvar_new(c->a, "ji", MT_INT64);
    mt_texpr *j = mt_lw_add(&c->lw, mt_lw_mul(&c->lw, mt_te_var(c->a, jo), I(c, L)), mt_te_var(c->a, ji));
    mt_tstmt *inner = mt_ts_for(c->a, ji, I(c, 0), I(c, L), MT_FOR_SERIAL, column_step(k, c, first, j));
    mt_tstmt *cols = mt_ts_for(c->a, jo, I(c, 0), I(c, k->ncols / L), MT_FOR_SERIAL, inner);
    /* the block's results: rows first .. first + L - 1 of out, one index
     * (one outer dim: out is (M,) or, keepdims, (M, 1); either way row r is
     * element r) */
    mt_texpr *out = mt_lw_ramp(&c->lw, first, L);
    mt_tstmt *body[] = {
        st(c, k->rv, lanes, splat(c, mt_te_cast(c->a, k->m.dt, k->m.ident), L)),
        st(c, k->ri, lanes, splat(c, mt_te_cast(c->a, k->it, I(c, 0)), L)),
        cols,
        mt_lw_store(&c->lw, k->m.out, &out, 1, mt_te_cast(c->a, MT_INT64, ld(c, k->ri, lanes))),
    };
    return mt_ts_alloc(c->a, k->rv, mt_ts_alloc(c->a, k->ri, mt_ts_seq(c->a, body, 4)));
}

static mt_tstmt *arg_block(rr *c, mt_texpr *first, mt_texpr *rows, void *ctx) {
    cg *k = ctx;
    int64_t n;
    if (mt_te_is_const_int(rows, &n) && n == k->L) return column_scan(k, c, first);
    mt_tvar *r = mt_tvar_new(c->a, "ri", MT_INT64);
    mt_tstmt *one = mt_rr_row(c, mt_lw_add(&c->lw, first, mt_te_var(c->a, r)), arg_row, k);
    mt_tstmt *each = mt_ts_for(c->a, r, I(c, 0), rows, MT_FOR_SERIAL, one);
    mt_texpr *whole = mt_te_bin(c->a, TE_EQ, rows, I(c, k->L));
    return mt_ts_if(c->a, whole, column_scan(k, c, first), each);
}

/* Whether the rows go L at a time in the lanes (knob block_rows: any
 * value above 1; by default for rows of a multiple of L up to COLUMNS_MAX
 * elements, not scanned serially, of a function with one outer dim whose
 * loads of the row are whole rows). */
static bool rows_in_lanes(cg *k, rr *c) {
    int64_t n;
    if (k->serial || c->ns != 1 || !mt_te_is_const_int(c->N, &n) || n % k->L != 0 || k->L < 4 || k->L > 16) return false;
    if (mt_knob_get(c->f, RULE, "block_rows", n <= COLUMNS_MAX ? k->L : 1) <= 1) return false;
    k->ncols = n;
    return mt_argred_value_rows(&k->m, I(c, 0), k->L, I(c, 0)) != NULL;
}

mt_tfunc *mt_argreduce_cpu(mt_arena *a, mt_tfunc *f) {
    if (mt_tfunc_target(f)->kind != MT_TARGET_CPU) return f;
    cg *k = MT_NEW(a, cg);
    rr *c = k->m.c = MT_NEW(a, rr);
    c->a = c->lw.a = a;
    c->f = f;
    if (!mt_argred_match(&k->m)) return f;
    mt_dtype dt = k->m.dt;
    if (dt != MT_FLOAT32 && dt != MT_FLOAT64 && dt != MT_INT32 && dt != MT_INT64) return f;
    k->L = mt_rr_lanes(c, dt);
    int64_t n;
    k->serial = mt_te_is_const_int(c->N, &n) && n < SERIAL_BELOW && !mt_knob_given(f, RULE, "lanes");
    k->it = mt_dtype_size(dt) == 4 && mt_te_is_const_int(c->N, &n) && n < ((int64_t)1 << 31) ? MT_INT32 : MT_INT64;
    k->U = (int)mt_knob_get(f, RULE, "accumulators", mt_rr_accumulators(c, k->L) < ACC ? mt_rr_accumulators(c, k->L) : ACC);
    k->bv = local(c, "best", (int64_t)k->U * k->L, dt);
    k->bi = local(c, "index", (int64_t)k->U * k->L, k->it);
    k->tv = local(c, "best_tail", 1, dt);
    k->ti = local(c, "index_tail", 1, MT_INT64);
    bool lanes = rows_in_lanes(k, c);
    if (lanes) {
        k->rv = local(c, "best_rows", k->L, dt);
        k->ri = local(c, "index_rows", k->L, k->it);
        c->block = k->L;
    }
    mt_tfunc *g = mt_rr_function(c, mt_rr_rows_blocked(c, arg_row, lanes ? arg_block : NULL, k), "argreduce_rows");
    mt_knobs *ch = MT_NEW(a, mt_knobs);
    ch->rule = RULE;
    if (!k->serial) { /* given back, lanes takes the vector scan even for a short row */
        mt_knobs_set(ch, "lanes", k->L);
        mt_knobs_set(ch, "accumulators", k->U);
    }
    if (lanes) mt_knobs_set(ch, "block_rows", k->L);
    mt_knobs_set(ch, "parallel", mt_knob_get(f, RULE, "parallel", 1));
    if (mt_knob_given(f, RULE, "chunk_kib")) mt_knobs_set(ch, "chunk_kib", mt_knob_get(f, RULE, "chunk_kib", 64));
    return mt_knobs_chose(a, mt_knobs_mark(a, g, f, RULE), ch);
}
