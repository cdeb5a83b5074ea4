/*
 * primitives_race.c -- whether the iterations of a loop touch disjoint
 * elements of what is written under it: the data side of parallel and
 * bind (their iterations run at once, in no order) in a user's schedule.
 * The default rules' schedules, printed by --emit schedule, replay through
 * it (test_default_rule_traces, CPU and cuda).
 *
 * independent() (primitives.c) checks each block alone: a spatial variable
 * driven by the loop, no reduce variable driven by it. That says nothing
 * about two blocks under the loop (one writes X[i + 1, j], the other reads
 * X[i, j + 1]: iteration i reads what iteration i - 1 wrote), nor about a
 * block whose index mixes the loop with inner loops (compute_at's
 * producer writing X[i + j] for j < 16: neighbouring iterations overlap).
 *
 * The rule here, for loop L: every buffer written under L (and not
 * allocated inside it) has a dimension d that separates L's iterations:
 * each access to the buffer under L (stores and loads, block variables
 * replaced by their bindings) indexes d as c * L + g + o, with
 *   - the same constant c != 0 in every access,
 *   - g a sum of terms in loops inside L, whose ranges are known,
 *   - o the same expression in every access, of variables bound outside L
 *     (fixed while L runs),
 * and the values of g over all the accesses spanning less than |c|. Then
 * an element with a given index d is touched by one iteration of L only:
 * c * L1 + g1 + o == c * L2 + g2 + o forces |c| * |L1 - L2| == |g2 - g1| < |c|.
 * A buffer that is scratch of each iteration -- the function allocates
 * it, only L's body touches it, each iteration's first access a store
 * filling a box that every later access (a load) stays in -- is one per
 * iteration once compact_buffers has run (cache_read then compute_at):
 * it needs no separating dimension.
 *
 * The row-major flattened index may take d's place (a fused loop's
 * variable split into f // n and f % n: the pair is f again), and so may
 * a run of dimensions that splits one index z the way fuse does (struct
 * run): z // K and z % K, K a positive constant or the extent of the
 * dimensions z % K indexes (split_divisor), each
 * half itself such a run or one dimension -- fuse(i, j, k) indexes
 * ((f // K) // N, (f // K) % N, f % K), which is f. Every access must
 * split the same way (the same points, K and order): the split is then
 * one-to-one, so equal elements mean equal z. Divisions and remainders by
 * a constant m that divides c and every term of o are read too: (c * L +
 * g + o) // m is (c / m) * L + g // m + o / m (a pack's panel index j // 32
 * of its block's columns j0 * 512 + pj0 * 32 + pj1 splits the pack among
 * the iterations of pj0). A let's variable is read as
 * its value (TIR's lets are immutable, and the variables of the value are
 * the same wherever the let's variable is in scope). A loop inside L of unknown range
 * (range(n)) is in no term's range and not fixed; a term read as fixed
 * may load only what nothing under L writes and no iteration owns
 * (fixed_loads_hold). The digits reading (below) takes the indices of a
 * fused loop cut into chunks, x = f0 * 64 + f1 read as x // 4 % 256 and
 * x // 1024: each index a positional sum of digits of x and inner loops,
 * the digits tiling x, x giving back L. Sufficient, not
 * necessary: an index this cannot read (a product of two loops, a load)
 * is refused, saying which buffer.
 */
#include "passes/tir/tir_passes.h"
#include "schedule/block_util.h"
#include "schedule/primitives.h"
#include "schedule/trace.h"

#include <stdlib.h>
#include <string.h>

#include "tir/arith.h"

enum { MAX_TERMS = 32 };

/* One access's dimension d in the form above (ok false: not in it; c may
 * be 0 there, a dimension that does not separate). */
typedef struct dim_form {
    bool ok;
    int64_t c;
    mt_range g;
    mt_texpr *o; /* NULL: 0 */
} dim_form;

/* Dimensions [s, e) of one access read as one index z: one dimension's
 * index, or z // K in [s, k) and z % K in [k, e) (mod_first: the other
 * way round), each half a run itself. */
typedef struct run {
    mt_texpr *z; /* NULL: the dimensions are not such a split */
    int k;
    const mt_texpr *K;
    bool mod_first;
    dim_form f;
} run;

typedef struct access {
    const mt_tbuffer *buf;
    const mt_tstmt *block;
    bool write;
    int n;          /* the buffer's dimensions */
    run *runs;      /* [s * (n + 1) + e] for 0 <= s < e <= n */
    dim_form flat;  /* the row-major flattened index (constant extents) */
    bool by_digits;   /* its indices give back L through digits (digits_give_l) */
} access;

typedef struct race {
    mt_arena *a;
    const mt_tstmt *L;
    const char *tag;                     /* the thread tag L has or gets, or NULL */
    mt_bounds in;                        /* the loops inside L around the statement */
    MT_VEC(const mt_tbuffer *) fixed;    /* buffers loaded in index terms read as fixed while L
                                          * runs: they must be (fixed_loads_hold) */
    MT_VEC(const mt_tvar *) unbounded;   /* ... and those of them whose range is not known
                                          * (range(n), a bound that loads): their variables are
                                          * in no term's range, and not fixed while L runs */
    MT_VEC(const mt_tbuffer *) local;    /* allocated inside L */
    MT_VEC(access) acc;
    const mt_tstmt *block;               /* the innermost block around it */
    MT_VEC(mt_tvar *) bv;                /* block and let variables in scope ... */
    MT_VEC(mt_texpr *) bval;             /* ... and their bindings, values */
} race;

static bool inner_var(const race *r, const mt_texpr *e) {
    for (int i = 0; i < r->in.n; i++)
        if (r->in.vars[i].var != r->L->var && mt_texpr_uses_var(e, r->in.vars[i].var)) return true;
    return false;
}

static dim_form form_of(race *r, mt_texpr *e);
static bool digits_give_l(race *r, mt_texpr *const *idx, int nd);
static bool own_storage(const race *r, const mt_tbuffer *b);

/* A term read as fixed while L runs: the buffers it loads are noted, and
 * must not change while L runs (fixed_loads_hold). */
static void note_fixed(race *r, const mt_texpr *e) {
    mt_blk_exprs l = mt_blk_loads_in(r->a, NULL, e, NULL);
    for (int i = 0; i < l.len; i++) MT_VEC_PUSH(r->a, &r->fixed, l.data[i]->buf);
}

static bool unbounded_var(const race *r, const mt_texpr *e) {
    for (int i = 0; i < r->unbounded.len; i++)
        if (mt_texpr_uses_var(e, r->unbounded.data[i])) return true;
    return false;
}

static int64_t floor_div(int64_t a, int64_t m) { return a >= 0 ? a / m : -((-a + m - 1) / m); }

/* o / m when every term of o (variables fixed while L runs, and
 * constants) is a multiple of m; else NULL. */
static mt_texpr *exact_quotient(race *r, mt_texpr *o, int64_t m) {
    mt_arith_term t[MAX_TERMS];
    int n = mt_arith_terms(o, NULL, NULL, t, MAX_TERMS);
    mt_texpr *q = NULL;
    for (int i = 0; i < n; i++) {
        int64_t v, p;
        mt_texpr *term;
        if (mt_te_is_const_int(t[i].e, &v)) {
            if (__builtin_mul_overflow(v, t[i].coef, &p) || p % m != 0) return NULL;
            term = mt_te_int(r->a, t[i].e->dtype, p / m);
        } else if (t[i].coef % m == 0) {
            term = t[i].coef / m == 1 ? t[i].e : mt_arith_mul(r->a, t[i].e, mt_te_int(r->a, t[i].e->dtype, t[i].coef / m));
        } else {
            return NULL;
        }
        q = q ? mt_arith_add(r->a, q, term) : term;
    }
    return n > 0 ? q : NULL;
}

/* x // m or x % m (m > 0 a constant) with x = c * L + g + o, m dividing c
 * and o (a block's region offset, j0 * 512, under a pack split into
 * panels of 32): (c / m) * L + g // m + o / m, and g % m (free of L). ok
 * false otherwise. */
static dim_form divmod_form(race *r, const mt_texpr *x) {
    dim_form bad = {false, 0, {0, 0}, NULL};
    int64_t m;
    if ((x->kind != TE_FLOORDIV && x->kind != TE_FLOORMOD) || !mt_te_is_const_int(x->b, &m) || m <= 0) return bad;
    dim_form f = form_of(r, x->a);
    mt_texpr *oq = NULL;
    if (!f.ok || f.c % m != 0 || (f.o && !(oq = exact_quotient(r, f.o, m)))) return bad;
    if (x->kind == TE_FLOORDIV) return (dim_form){true, f.c / m, {floor_div(f.g.lo, m), floor_div(f.g.hi, m)}, oq};
    bool one_period = f.g.lo >= 0 && f.g.hi < m;
    return (dim_form){true, 0, one_period ? f.g : (mt_range){0, m - 1}, NULL};
}

/* k * m * (x // m) + k * (x % m) is k * x: the pair a fused loop's
 * variable splits into, and a row-major flattening puts back. */
/* Is y % m the same as x % m: y is x, or x % M with m dividing M? */
static bool same_mod(const mt_texpr *y, const mt_texpr *x, int64_t m) {
    int64_t M;
    if (mt_texpr_equal(y, x)) return true;
    return x->kind == TE_FLOORMOD && mt_te_is_const_int(x->b, &M) && M % m == 0 && mt_texpr_equal(x->a, y);
}

static int merge_divmod(mt_arith_term *t, int n) {
    int64_t m;
    for (bool merged = true; merged;) {
        merged = false;
        for (int i = 0; i < n && !merged; i++) {
            if (t[i].e->kind != TE_FLOORDIV || !mt_te_is_const_int(t[i].e->b, &m) || m <= 0) continue;
            for (int j = 0; j < n; j++) {
                const mt_texpr *y = t[j].e;
                int64_t m2;
                if (j == i || y->kind != TE_FLOORMOD || !mt_te_is_const_int(y->b, &m2) || m2 != m ||
                    !same_mod(y->a, t[i].e->a, m) || t[i].coef % m != 0 || t[i].coef / m != t[j].coef)
                    continue;
                t[i] = (mt_arith_term){t[i].e->a, t[j].coef}; /* (x // m) * m + x % m == x */
                t[j] = t[--n];
                merged = true;
                break;
            }
        }
    }
    return n;
}

/* e (in loop variables) as c * L + g + o. */
static dim_form form_of(race *r, mt_texpr *e) {
    dim_form f = {true, 0, {0, 0}, NULL};
    mt_arith_term t[MAX_TERMS];
    int n = mt_arith_terms(e, NULL, NULL, t, MAX_TERMS);
    if (n < 0) return (dim_form){false, 0, {0, 0}, NULL};
    n = merge_divmod(t, n);
    for (int i = 0; i < n && f.ok; i++) {
        mt_texpr *x = t[i].e;
        dim_form dm;
        if (unbounded_var(r, x)) {
            f.ok = false;
        } else if (x->kind == TE_VAR && x->var == r->L->var) {
            f.c += t[i].coef;
        } else if (mt_texpr_uses_var(x, r->L->var) && ((dm = divmod_form(r, x)).ok ||
                                                     (x->kind == TE_ADD && (dm = form_of(r, x)).ok))) {
            if (dm.o) {
                mt_texpr *o = t[i].coef == 1 ? dm.o : mt_arith_mul(r->a, dm.o, mt_te_int(r->a, dm.o->dtype, t[i].coef));
                f.o = f.o ? mt_arith_add(r->a, f.o, o) : o;
            }
            int64_t c, lo, hi;
            f.ok = !__builtin_mul_overflow(t[i].coef, dm.c, &c) && !__builtin_add_overflow(f.c, c, &f.c) &&
                   !__builtin_mul_overflow(t[i].coef, t[i].coef > 0 ? dm.g.lo : dm.g.hi, &lo) &&
                   !__builtin_mul_overflow(t[i].coef, t[i].coef > 0 ? dm.g.hi : dm.g.lo, &hi) &&
                   !__builtin_add_overflow(f.g.lo, lo, &f.g.lo) && !__builtin_add_overflow(f.g.hi, hi, &f.g.hi);
        } else if (mt_texpr_uses_var(x, r->L->var)) {
            f.ok = false;
        } else if (inner_var(r, x)) {
            mt_range g = mt_bounds_of(&r->in, x);
            int64_t lo, hi;
            f.ok = !__builtin_mul_overflow(t[i].coef, t[i].coef > 0 ? g.lo : g.hi, &lo) &&
                   !__builtin_mul_overflow(t[i].coef, t[i].coef > 0 ? g.hi : g.lo, &hi) &&
                   !__builtin_add_overflow(f.g.lo, lo, &f.g.lo) && !__builtin_add_overflow(f.g.hi, hi, &f.g.hi);
        } else {
            mt_texpr *term = t[i].coef == 1 ? x : mt_arith_mul(r->a, x, mt_te_int(r->a, x->dtype, t[i].coef));
            f.o = f.o ? mt_arith_add(r->a, f.o, term) : term;
            note_fixed(r, x);
        }
    }
    return f;
}

static bool is_local(const race *r, const mt_tbuffer *b) {
    for (int i = 0; i < r->local.len; i++)
        if (r->local.data[i] == b) return true;
    return false;
}

enum { MAX_FACTORS = 16 };

/* e as a product: its constant and its other factors (false: too many). */
static bool factors(const mt_texpr *e, int64_t *c, const mt_texpr **f, int *n) {
    int64_t v;
    if (e->kind == TE_MUL) return factors(e->a, c, f, n) && factors(e->b, c, f, n);
    if (mt_te_is_const_int(e, &v)) return !__builtin_mul_overflow(*c, v, c);
    if (*n == MAX_FACTORS) return false;
    f[(*n)++] = e;
    return true;
}

/* Do x and y multiply the same factors (n * 6 and 6 * n)? */
static bool same_product(const mt_texpr *x, const mt_texpr *y) {
    const mt_texpr *fx[MAX_FACTORS], *fy[MAX_FACTORS];
    int64_t cx = 1, cy = 1;
    int nx = 0, ny = 0;
    if (!factors(x, &cx, fx, &nx) || !factors(y, &cy, fy, &ny) || cx != cy || nx != ny) return false;
    for (int i = 0; i < nx; i++) {
        int j = 0;
        while (j < ny && !mt_texpr_equal(fx[i], fy[j])) j++;
        if (j == ny) return false;
        fy[j] = fy[--ny];
    }
    return true;
}

/* A divisor that keeps z -> (z // K, z % K) one-to-one while L runs: a
 * positive constant, or the extent of the dimensions [s, e) that z % K
 * indexes (the product of b's shape there: 0 only for a buffer with no
 * elements, where nothing is stored), fixed while L runs. A divisor that
 * is a loop variable, or a symbolic dim of another buffer (0 at run
 * time: every z // 0 and z % 0 is 0), is not read. */
static bool split_divisor(const race *r, const mt_tbuffer *b, int s, int e, mt_texpr *K) {
    int64_t v;
    if (mt_te_is_const_int(K, &v)) return v > 0;
    if (mt_texpr_uses_var(K, r->L->var) || inner_var(r, K)) return false;
    mt_texpr *extent = b->shape[s];
    for (int d = s + 1; d < e; d++) extent = mt_arith_mul(r->a, extent, b->shape[d]);
    return same_product(K, extent);
}

/* Run [s, e) of x from its shorter runs: the first split point whose
 * halves are z // K and z % K. */
static run merge_run(race *r, const access *x, int s, int e) {
    int w = x->n + 1;
    for (int k = s + 1; k < e && x->n == x->buf->ndim; k++) {
        const mt_texpr *p = x->runs[s * w + k].z, *q = x->runs[k * w + e].z;
        if (!p || !q) continue;
        bool mod_first = p->kind == TE_FLOORMOD;
        const mt_texpr *dv = mod_first ? q : p, *md = mod_first ? p : q;
        if (dv->kind != TE_FLOORDIV || md->kind != TE_FLOORMOD || !mt_texpr_equal(dv->a, md->a) ||
            !mt_texpr_equal(dv->b, md->b) ||
            !split_divisor(r, x->buf, mod_first ? s : k, mod_first ? k : e, dv->b))
            continue;
        return (run){dv->a, k, dv->b, mod_first, form_of(r, dv->a)};
    }
    return (run){NULL, 0, NULL, false, {false, 0, {0, 0}, NULL}};
}

static void record(race *r, const mt_tbuffer *b, mt_texpr *const *idx, int n, bool write) {
    if (is_local(r, b) && own_storage(r, b)) return; /* (a shared buffer under threadIdx is one) */
    int w = n + 1;
    access x = {b, r->block, write, n, MT_NEW_ARRAY(r->a, run, w * w), {false, 0, {0, 0}, NULL}};
    mt_texpr *flat = NULL, **es = MT_NEW_ARRAY(r->a, mt_texpr *, n + 1);
    for (int d = 0; d < n; d++) {
        mt_texpr *e = es[d] = mt_tsubst_expr(r->a, idx[d], r->bv.data, r->bval.data, r->bv.len);
        x.runs[d * w + d + 1] = (run){e, d + 1, NULL, false, form_of(r, e)};
        int64_t ext;
        mt_texpr *e64 = e->dtype == MT_INT64 ? e : mt_te_cast(r->a, MT_INT64, e); /* T.int32(..) indices */
        if (d == 0) flat = e64;
        else if (flat && mt_te_is_const_int(b->shape[d], &ext))
            flat = mt_arith_add(r->a, mt_arith_mul(r->a, flat, mt_te_i64(r->a, ext)), e64);
        else flat = NULL;
    }
    for (int len = 2; len <= n; len++)
        for (int s = 0; s + len <= n; s++) x.runs[s * w + s + len] = merge_run(r, &x, s, s + len);
    if (flat) x.flat = form_of(r, flat);
    x.by_digits = n == b->ndim && digits_give_l(r, es, n);
    MT_VEC_PUSH(r->a, &r->acc, x);
}

static void loads(race *r, mt_texpr *e) {
    if (!e) return;
    mt_blk_exprs l = mt_blk_loads_in(r->a, NULL, e, NULL);
    for (int i = 0; i < l.len; i++) record(r, l.data[i]->buf, l.data[i]->args, l.data[i]->nargs, false);
}

static void walk(race *r, const mt_tstmt *s);

static void walk_block(race *r, const mt_tstmt *s) {
    const mt_tstmt *outer = r->block;
    int mark = r->bv.len;
    for (int i = 0; i < s->niters; i++) loads(r, s->iter_values[i]);
    for (int i = 0; i < s->niters; i++) { /* bindings in loop variables (an outer block's replaced) */
        mt_texpr *v = mt_tsubst_expr(r->a, s->iter_values[i], r->bv.data, r->bval.data, mark);
        MT_VEC_PUSH(r->a, &r->bv, s->iters[i].var);
        MT_VEC_PUSH(r->a, &r->bval, v);
    }
    for (int i = 0; i < s->nallocs; i++) MT_VEC_PUSH(r->a, &r->local, s->allocs[i]);
    r->block = s;
    loads(r, s->predicate);
    walk(r, s->init);
    walk(r, s->body);
    r->block = outer;
    r->bv.len = r->bval.len = mark;
}

static void walk(race *r, const mt_tstmt *s) {
    if (!s) return;
    switch (s->kind) {
    case TS_SEQ:
        for (int i = 0; i < s->nstmts; i++) walk(r, s->stmts[i]);
        return;
    case TS_FOR: {
        loads(r, s->min), loads(r, s->extent);
        bool pushed = mt_bounds_push_loop(r->a, &r->in, s->var, s->min, s->extent);
        if (!pushed) MT_VEC_PUSH(r->a, &r->unbounded, s->var);
        walk(r, s->body);
        if (pushed) mt_bounds_pop(&r->in);
        else r->unbounded.len--;
        return;
    }
    case TS_LET: { /* the variable read as its value (in scope, immutable: the same value) */
        loads(r, s->value);
        int mark = r->bv.len;
        MT_VEC_PUSH(r->a, &r->bv, s->var);
        MT_VEC_PUSH(r->a, &r->bval, mt_tsubst_expr(r->a, s->value, r->bv.data, r->bval.data, mark));
        walk(r, s->body);
        r->bv.len = r->bval.len = mark;
        return;
    }
    case TS_ALLOC:
        MT_VEC_PUSH(r->a, &r->local, s->buf);
        walk(r, s->body);
        return;
    case TS_IF: loads(r, s->cond), walk(r, s->then_s), walk(r, s->else_s); return;
    case TS_BLOCK: walk_block(r, s); return;
    case TS_STORE:
        loads(r, s->value);
        for (int d = 0; d < s->nidx; d++) loads(r, s->idx[d]);
        record(r, s->buf, s->idx, s->nidx, true);
        return;
    case TS_EVAL:
        if (!mt_te_prefetched(s->value)) loads(r, s->value);
        return;
    default: return;
    }
}

/* Do runs [s, e) of x and y split their index the same way? */
static bool same_split(const access *x, const access *y, int s, int e) {
    int w = x->n + 1;
    const run *p = &x->runs[s * w + e], *q = &y->runs[s * w + e];
    if (e == s + 1) return true;
    return p->k == q->k && p->mod_first == q->mod_first && mt_texpr_equal(p->K, q->K) &&
           same_split(x, y, s, p->k) && same_split(x, y, p->k, e);
}

/* Candidate `which` of access x: run [s, e) for which = s * (n + 1) + e,
 * the flattened index for which = -1; NULL when x does not have it. */
static const dim_form *candidate(const access *x, const access *first, int which) {
    if (which < 0) return &x->flat;
    int w = x->n + 1, s = which / w, e = which % w;
    if (!x->runs[which].z || (first && !same_split(x, first, s, e))) return NULL;
    return &x->runs[which].f;
}

/* Does candidate `which` separate L's iterations for every access to b? */
static bool separates(const race *r, const mt_tbuffer *b, int which) {
    const dim_form *first = NULL;
    const access *fx = NULL;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int i = 0; i < r->acc.len; i++) {
        const access *x = &r->acc.data[i];
        if (x->buf != b) continue;
        if (x->n != b->ndim) return false;
        const dim_form *f = candidate(x, fx, which);
        if (!f || !f->ok || f->c == 0) return false;
        if (!first) first = f, fx = x;
        if (f->c != first->c || !(f->o ? first->o && mt_texpr_equal(f->o, first->o) : !first->o)) return false;
        lo = f->g.lo < lo ? f->g.lo : lo;
        hi = f->g.hi > hi ? f->g.hi : hi;
    }
    int64_t width, c = first->c < 0 ? -first->c : first->c;
    return !__builtin_sub_overflow(hi, lo, &width) && width < c;
}

static int accesses_of(mt_arena *a, const mt_tstmt *root, const mt_tbuffer *b) {
    mt_blk_accesses acc = mt_blk_scan(a, root, NULL, NULL);
    int n = 0;
    for (int i = 0; i < acc.len; i++) n += acc.data[i].buf == b;
    return n;
}

/* Does each iteration of L get storage of its own for b once
 * compact_buffers allocates b inside L? On the CPU, yes; for a GPU thread
 * index only per-thread (local) storage, for a block index per-thread or
 * per-block (shared) storage: a global buffer stays one for all. */
static bool own_storage(const race *r, const mt_tbuffer *b) {
    if (!r->tag) return true;
    if (!strncmp(r->tag, "threadIdx.", 10)) return b->scope == MT_SCOPE_LOCAL;
    return b->scope == MT_SCOPE_LOCAL || b->scope == MT_SCOPE_SHARED;
}

/* An allocation of a buffer named `name` inside a loop over `var`. */
typedef struct alloc_in {
    const mt_tvar *var;
    const char *name;
    int inside; /* loops over var around the visit */
    bool found;
} alloc_in;

static void no_expr(mt_tvisitor *v, const mt_texpr *e) {
    (void)v;
    (void)e;
}

static void alloc_in_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    alloc_in *f = v->ctx;
    int in = s->kind == TS_FOR && s->var == f->var;
    if (f->inside && s->kind == TS_ALLOC && !strcmp(s->buf->name, f->name)) f->found = true;
    f->inside += in;
    mt_tvisit_stmt_children(v, s);
    f->inside -= in;
}

/* Does compact_buffers, run on the function as it is now, give b a tile
 * of its own per iteration of L (its allocation inside L)? The lowering
 * that follows the schedule, done on a copy: the one answer that is
 * exact. (A later step that changes it is checked again: still_disjoint.) */
static bool compacted_inside(race *r, mt_sched *s, const mt_tbuffer *b) {
    mt_tfunc *now = s->func;
    if (r->L->for_kind == MT_FOR_SERIAL) { /* L as parallel is about to make it (a serial L keeps b outside) */
        mt_tstmt *p = mt_ts_copy(r->a, r->L);
        p->for_kind = MT_FOR_PARALLEL;
        mt_sched_replace(s, r->L, p);
    }
    mt_tfunc *g = mt_tir_compact_buffers(r->a, mt_tir_lower_blocks(r->a, s->func));
    s->func = now;
    alloc_in f = {r->L->var, b->name, 0, false};
    mt_tvisitor v = {no_expr, alloc_in_stmt, &f};
    mt_tvisit_stmt(&v, g->body);
    return f.found;
}

/* Is b a scratch buffer of each iteration (what compact_buffers then
 * allocates inside L, one per thread)? The function allocates it, in
 * storage each iteration has its own of, nothing outside L touches it,
 * and in each iteration one store writes it first, every later access a
 * load inside the box that store fills: per dimension the same c and o,
 * the load's g within the store's; or o plus a constant k (a stencil's
 * taps, x[i + 1] beside x[i]) and g + k within, when compact_buffers does
 * make b a tile per iteration (compacted_inside: the halos of
 * neighbouring iterations overlap, so in one shared b they would race). */
static bool iteration_scratch(race *r, mt_sched *s, const mt_tbuffer *b) {
    if (!mt_blk_is_alloc(s->func, (mt_tbuffer *)b) || !own_storage(r, b) ||
        accesses_of(r->a, s->func->body, b) != accesses_of(r->a, r->L, b))
        return false;
    const access *w = NULL;
    bool shifted = false;
    for (int i = 0; i < r->acc.len; i++) {
        const access *x = &r->acc.data[i];
        if (x->buf != b) continue;
        if (!w) {
            if (!x->write) return false;
            w = x;
            continue;
        }
        if (x->write || x->n != b->ndim || w->n != b->ndim) return false;
        for (int d = 0; d < b->ndim; d++) {
            int one = d * (b->ndim + 1) + d + 1;
            const dim_form *f = &x->runs[one].f, *g = &w->runs[one].f;
            int64_t k = 0, lo, hi;
            bool same = f->o ? g->o && mt_texpr_equal(f->o, g->o) : !g->o;
            if (!same && !mt_arith_const_diff(f->o, g->o, &k)) return false;
            shifted = shifted || k != 0;
            if (!f->ok || !g->ok || f->c != g->c || __builtin_add_overflow(f->g.lo, k, &lo) ||
                __builtin_add_overflow(f->g.hi, k, &hi) || lo < g->g.lo || hi > g->g.hi)
                return false;
        }
    }
    return w != NULL && (!shifted || compacted_inside(r, s, b));
}

static void scan_loop(race *r, mt_sched *s, const mt_tstmt *L, const char *tag) {
    memset(r, 0, sizeof *r);
    r->a = s->arena;
    r->L = L;
    r->tag = tag ? tag : L->for_kind == MT_FOR_THREAD ? L->thread_tag : NULL;
    bool pushed = mt_bounds_push_loop(r->a, &r->in, L->var, L->min, L->extent); /* for inner bounds like a split's */
    walk(r, L->body);                                                         /* T.min(16384, n - L * 16384) */
    if (pushed) mt_bounds_pop(&r->in);
}

/* ---- digits: the indices of a fused loop cut into chunks ------------------- */

/* One term of an index read as a digit: w * ((x // A) % B) (B 0: no %), x
 * the same expression in every digit; or w * v for an inner term v in
 * [lo, lo + span]. */
typedef struct digit {
    int64_t w, A, B, span;
    bool of_x;
} digit;

enum { MAX_DIGITS = 16 };

/* An inner term w * e as a digit of its range's span (false: overflow). */
static bool inner_digit(const race *r, const mt_texpr *e, int64_t w, digit *d) {
    mt_range g = mt_bounds_of(&r->in, e);
    int64_t span;
    if (__builtin_sub_overflow(g.hi, g.lo, &span)) return false;
    *d = (digit){w, 0, 0, span, false};
    return true;
}

static int by_a(const void *x, const void *y) {
    const digit *a = x, *b = y;
    return (a->A > b->A) - (a->A < b->A);
}

static int by_weight(const void *x, const void *y) {
    const digit *a = x, *b = y;
    return (a->w > b->w) - (a->w < b->w);
}

/* e as (x // A) % B, nested divisions multiplied: ((x // 4) // 16) % 4. */
static const mt_texpr *as_digit(const mt_texpr *e, int64_t *A, int64_t *B) {
    int64_t v;
    *A = 1, *B = 0;
    if (e->kind == TE_FLOORMOD && mt_te_is_const_int(e->b, &v) && v > 0) *B = v, e = e->a;
    while (e->kind == TE_FLOORDIV && mt_te_is_const_int(e->b, &v) && v > 0)
        if (__builtin_mul_overflow(*A, v, A)) return NULL;
        else e = e->a;
    return e;
}

/* The terms of one index e as digits of one x (*x: the same in every
 * dimension) and inner terms, appended to d from *n; false when a term is
 * neither (one using L otherwise, an inner variable of unknown range, too
 * many). Terms fixed while L runs are left out: every access has them
 * alike. */
static bool read_digits(race *r, mt_texpr *e, digit *d, int *n, const mt_texpr **x) {
    mt_arith_term t[MAX_TERMS];
    int nt = mt_arith_terms(e, NULL, NULL, t, MAX_TERMS);
    if (nt < 0) return false;
    for (int i = 0; i < nt; i++) {
        const mt_texpr *te = t[i].e;
        int64_t w = t[i].coef < 0 ? -t[i].coef : t[i].coef, A, B;
        if (unbounded_var(r, te)) return false;
        if (mt_texpr_uses_var(te, r->L->var)) {
            const mt_texpr *base = as_digit(te, &A, &B);
            if (!base || (*x && !mt_texpr_equal(base, *x)) || *n == MAX_DIGITS) return false;
            *x = base;
            d[(*n)++] = (digit){w, A, B, B ? B - 1 : -1, true};
        } else if (inner_var(r, te)) {
            if (*n == MAX_DIGITS || !inner_digit(r, te, w, &d[(*n)++])) return false;
        } else {
            note_fixed(r, te);
        }
    }
    return true;
}

static bool positional(digit *d, int n);

/* Does x (fixed terms aside, the same in both iterations compared) give
 * back L: its terms L and inner loops, positional (f0 * 64 + f1 with f1
 * below 64; t + 256 * u + 1024 * b of a GPU thread t)? */
static bool x_gives_l(race *r, const mt_texpr *x) {
    mt_arith_term t[MAX_TERMS];
    digit d[MAX_DIGITS];
    int nt = mt_arith_terms((mt_texpr *)x, NULL, NULL, t, MAX_TERMS), n = 0;
    bool has_l = false;
    if (nt < 0 || nt > MAX_DIGITS) return false;
    for (int i = 0; i < nt; i++) {
        const mt_texpr *e = t[i].e;
        int64_t w = t[i].coef < 0 ? -t[i].coef : t[i].coef, ext, span = -1;
        if (unbounded_var(r, e)) return false;
        if (e->kind == TE_VAR && e->var == r->L->var) {
            if (has_l) return false;
            has_l = true;
            if (mt_te_is_const_int(r->L->extent, &ext) && ext > 0) span = ext - 1;
            d[n++] = (digit){w, 0, 0, span, true};
        } else if (mt_texpr_uses_var(e, r->L->var)) {
            return false;
        } else if (inner_var(r, e)) {
            if (!inner_digit(r, e, w, &d[n++])) return false;
        } else {
            note_fixed(r, e);
        }
    }
    return has_l && positional(d, n);
}

/* x gives back L, and the digits of x tile it (sorted by A: 1, then each A
 * the one before times its B, the last without %). *top: the last digit's
 * largest value when x is c * L + g with L from 0 over a constant extent,
 * g in [0, c); else -1 (unknown). */
static bool digits_tile_x(race *r, digit *d, int n, const mt_texpr *x, int64_t *top) {
    if (!x_gives_l(r, x)) return false;
    qsort(d, (size_t)n, sizeof *d, by_a);
    dim_form f = form_of(r, (mt_texpr *)x);
    int64_t want = 1, ext, end, lo;
    *top = -1;
    bool known = f.ok && !f.o && f.c > 0 && f.g.lo >= 0 && f.g.hi < f.c && mt_te_is_const_int(r->L->min, &lo) &&
                 lo == 0 && mt_te_is_const_int(r->L->extent, &ext) && ext > 0;
    for (int i = 0; i < n; i++) {
        if (d[i].A != want) return false;
        if (!d[i].B) {
            if (i != n - 1) return false;
            if (known && !__builtin_mul_overflow(f.c, ext, &end)) *top = (end - 1) / d[i].A;
            return true;
        }
        if (__builtin_mul_overflow(want, d[i].B, &want)) return false;
    }
    return false;
}

/* Each weight above the most that the lighter terms sum to: the index
 * gives back every term's value, as a number gives back its digits. */
static bool positional(digit *d, int n) {
    qsort(d, (size_t)n, sizeof *d, by_weight);
    int64_t most = 0, p;
    for (int i = 0; i + 1 < n; i++) {
        if (d[i].w <= most) return false;
        if (d[i].span < 0 || __builtin_mul_overflow(d[i].w, d[i].span, &p) || __builtin_add_overflow(most, p, &most))
            return false;
    }
    return n == 0 || d[n - 1].w > most;
}

/* Do an access's indices idx[0..nd) give back L through the digits of a
 * fused loop split into chunks? Each index gives back the values of its
 * terms (positional), and together they hold every digit of one x = c * L
 * + g, which gives L: transpose's `f = f0 * 64 + f1`, its output indexed
 * [f // 4 % 256 * 16 + i1_1, (f // 1024 * 4 + f % 4) * 16 + i0_1], for
 * any chunk. Read where the access is, with the loops around it. */
static bool digits_give_l(race *r, mt_texpr *const *idx, int nd) {
    enum { MAX_DIMS = 8 };
    digit d[MAX_DIMS][MAX_DIGITS], xs[MAX_DIGITS];
    int n[MAX_DIMS], nx = 0;
    const mt_texpr *x = NULL;
    if (nd > MAX_DIMS) return false;
    for (int k = 0; k < nd; k++) {
        n[k] = 0;
        if (!read_digits(r, idx[k], d[k], &n[k], &x)) return false;
        for (int i = 0; i < n[k]; i++)
            if (d[k][i].of_x) {
                if (nx == MAX_DIGITS) return false;
                xs[nx++] = d[k][i];
            }
    }
    int64_t top;
    if (!x || !digits_tile_x(r, xs, nx, x, &top)) return false;
    for (int k = 0; k < nd; k++) {
        for (int i = 0; i < n[k]; i++)
            if (d[k][i].of_x && !d[k][i].B) d[k][i].span = top;
        if (!positional(d[k], n[k])) return false;
    }
    return true;
}

/* Is b's index the same expressions in every access, which give back L? */
static bool digits_separate(race *r, const mt_tbuffer *b) {
    const access *first = NULL;
    for (int i = 0; i < r->acc.len; i++) {
        const access *x = &r->acc.data[i];
        if (x->buf != b) continue;
        if (!x->by_digits || x->n != b->ndim || (first && x->block != first->block)) return false;
        if (!first) first = x; /* (one block: the same loops, so the same ranges) */
        for (int d = 0; first != x && d < x->n; d++)
            if (!mt_texpr_equal(x->runs[d * (x->n + 1) + d + 1].z, first->runs[d * (x->n + 1) + d + 1].z)) return false;
    }
    return first != NULL;
}

/* Is every buffer loaded in a term read as fixed while L runs fixed: not
 * storage of an iteration's own (allocated inside L) and not written under
 * L? (`t[0]` of a `t` each iteration fills differs between them.) */
static bool fixed_loads_hold(const race *r) {
    for (int i = 0; i < r->fixed.len; i++) {
        if (is_local(r, r->fixed.data[i])) return false;
        for (int j = 0; j < r->acc.len; j++)
            if (r->acc.data[j].write && r->acc.data[j].buf == r->fixed.data[i]) return false;
    }
    return true;
}

/* Is b split among L's iterations (a candidate separates them, or the
 * digits of its indices give L back), or scratch of each? */
static bool shown(race *r, mt_sched *s, const mt_tbuffer *b) {
    int n = b->ndim;
    if (!fixed_loads_hold(r)) return false;
    bool ok = separates(r, b, -1) || digits_separate(r, b);
    for (int c = 0; c < (n + 1) * (n + 1) && !ok; c++) ok = c % (n + 1) > c / (n + 1) && separates(r, b, c);
    return ok || iteration_scratch(r, s, b);
}

bool mt_sched_iterations_disjoint(mt_sched *s, const char *prim, const mt_tstmt *L, const char *tag,
                                  const mt_blk_bufs *excused) {
    race r;
    scan_loop(&r, s, L, tag);
    for (int i = 0; i < r.acc.len; i++) {
        const access *w = &r.acc.data[i];
        if (!w->write || (excused && mt_blk_buf_in(excused, w->buf)) || shown(&r, s, w->buf)) continue;
        return mt_sched_refuse(s, "%s: iterations of loop '%s' may touch the same elements of '%s' "
                                  "(written by block '%s'): no dimension of it is split among them",
                               prim, L->var->name, w->buf->name, mt_blk_bname(w->block));
    }
    return true;
}

mt_blk_bufs mt_sched_unshown_buffers(mt_sched *s, const mt_tstmt *L) {
    race r;
    scan_loop(&r, s, L, NULL);
    mt_blk_bufs out = {0};
    for (int i = 0; i < r.acc.len; i++) {
        mt_tbuffer *b = (mt_tbuffer *)r.acc.data[i].buf;
        if (r.acc.data[i].write && !mt_blk_buf_in(&out, b) && !shown(&r, s, b)) MT_VEC_PUSH(s->arena, &out, b);
    }
    return out;
}
