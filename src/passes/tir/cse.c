/*
 * cse.c -- common subexpression elimination in each statement (tir_cse).
 *
 * inline_producers copies a producer's expression into every load of its
 * buffer, so `t = exp(x) * 2; t * t + t` becomes one store that computes
 * `T.exp(x[i]) * 2.0` three times. LLVM would merge the copies again, but
 * only after IR generation and its own passes have paid for each of them,
 * and the tir-sched dump would show work the kernel does not do. This pass
 * computes such an expression once, in a let in front of the statement:
 *
 *     cse_v1 = T.exp(x[i0]) * 2.0
 *     lv2[i0] = cse_v1 * cse_v1 + cse_v1
 *
 * Scope. The expressions of one statement: a store's indices and value, a
 * let's value, an if's condition, an evaluate's value. Within a statement
 * nothing writes memory, so loads are candidates too; every operator
 * evaluates all its operands (`and`/`or` and T.Select included,
 * codegen/llvm_expr.c), so a let evaluates nothing the statement did not.
 * Statements are not merged with each other (a store between two of them
 * may change what a load reads).
 *
 * Candidates. A subexpression of at least three nodes (an operator and its
 * operands; variables, immediates alone do not pay for a let) that occurs at
 * least twice, compared structurally (mt_texpr_equal). T.Ramp is never one:
 * codegen turns a load or store whose index is a unit-stride ramp into one
 * vector access, and a let would hide the ramp from it. Nor is integer or
 * bool arithmetic that loads nothing (index and predicate arithmetic, the
 * ramp's base included): codegen looks into indices (a loop whose stores
 * all index with its variable is not interleaved, index arithmetic gets
 * `nsw`), and LLVM merges repeats of it anyway. The largest candidate is taken first (of equal sizes, the one
 * whose first occurrence comes first in a bottom-up scan: never an order of
 * addresses, so the output is the same in every run), its occurrences
 * replaced by the let's variable, and the statement scanned again, until
 * none is left or MAX_ROUNDS lets were made: each round is linear in the
 * statement's size, and a statement beyond MAX_NODES nodes is left alone.
 * A later (smaller) candidate may occur in an earlier let's value, so each
 * new let goes outside the ones before it.
 *
 * A wmma intrinsic or a prefetch (tir.h) is left alone: its loads name
 * addresses.
 *
 * Assumes the lowered form (no TS_BLOCK): the pipeline runs it last, after
 * simplify (which would substitute lets of a single variable back).
 */
#include <string.h>

#include "passes/tir/tir_passes.h"
#include "support/common.h"

enum { MIN_NODES = 3, MAX_ROUNDS = 32, MAX_NODES = 1 << 14 };

/* The occurrences of one expression in a statement. */
typedef struct occ {
    const mt_texpr *e;
    uint64_t hash;
    int size, count;
    int first; /* order of its first occurrence in the scan (ties go to the earliest) */
} occ;

typedef struct cse_ctx {
    mt_arena *arena;
    occ *slots;      /* open addressing on hash: cap slots in use of alloc */
    int cap, alloc;
    int seen;        /* distinct candidates counted in this scan */
    int made;        /* lets made in this function: cse_v<n> */
    /* the candidate being replaced (round 2 of each scan) */
    const occ *cand;
    mt_texpr *cand_var;
} cse_ctx;

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0x100000001b3ull;
}

static uint64_t node_hash(const mt_texpr *e) {
    uint64_t h = mix((uint64_t)e->kind, (uint64_t)e->dtype * 131 + (uint64_t)e->lanes);
    switch (e->kind) {
    case TE_INT: return mix(h, (uint64_t)e->ival);
    case TE_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &e->fval, sizeof bits);
        return mix(h, bits);
    }
    case TE_VAR: return mix(h, (uint64_t)e->var->id * 2654435761u + (uint64_t)(uintptr_t)e->var);
    case TE_LOAD: return mix(h, (uint64_t)(uintptr_t)e->buf);
    case TE_CALL: return mix(h, (uint64_t)e->intrin);
    case TE_SHUFFLE:
        for (int i = 0; i < e->lanes; i++) h = mix(h, (uint64_t)e->lane[i]);
        return h;
    default: return h;
    }
}

static bool candidate_kind(const mt_texpr *e) {
    return e->kind != TE_INT && e->kind != TE_FLOAT && e->kind != TE_VAR && e->kind != TE_RAMP;
}

static void count(cse_ctx *c, const mt_texpr *e, uint64_t h, int size) {
    if (size < MIN_NODES || !candidate_kind(e)) return;
    int s = (int)(h & (uint64_t)(c->cap - 1));
    while (c->slots[s].e) {
        occ *o = &c->slots[s];
        if (o->hash == h && o->size == size && mt_texpr_equal(o->e, e)) {
            o->count++;
            return;
        }
        s = (s + 1) & (c->cap - 1);
    }
    c->slots[s] = (occ){e, h, size, 1, c->seen++};
}

/* Hash and size of e, counting every candidate in it (when counting);
 * *loads: whether e reads memory. Integer and bool arithmetic that reads
 * nothing is index and predicate arithmetic: codegen looks into indices
 * (a loop whose stores all index with its variable gets no interleaving;
 * index arithmetic gets `nsw`) and LLVM merges repeats of it anyway, so it
 * stays where it is. */
static uint64_t scan(cse_ctx *c, const mt_texpr *e, int *size, bool *loads, bool counting) {
    uint64_t h = node_hash(e);
    int n = 1;
    bool ld = e->kind == TE_LOAD;
    const mt_texpr *kids[3] = {e->a, e->b, e->cond};
    for (int i = 0; i < 3; i++)
        if (kids[i]) {
            int k;
            bool kl;
            h = mix(h, scan(c, kids[i], &k, &kl, counting));
            n += k;
            ld |= kl;
        }
    for (int i = 0; i < e->nargs; i++) {
        int k;
        bool kl;
        h = mix(h, scan(c, e->args[i], &k, &kl, counting));
        n += k;
        ld |= kl;
    }
    *size = n;
    *loads = ld;
    if (counting && (ld || !(mt_dtype_is_int(e->dtype) || e->dtype == MT_BOOL))) count(c, e, h, n);
    return h;
}

/* e with every occurrence of the candidate replaced by its variable; *h and
 * *size describe the original e (bottom-up: a match has no proper subtree
 * equal to itself). */
static mt_texpr *replace(cse_ctx *c, mt_texpr *e, uint64_t *h, int *size) {
    uint64_t hh = node_hash(e);
    int n = 1;
    mt_texpr *kids[3] = {e->a, e->b, e->cond}, *nk[3] = {0};
    bool changed = false;
    for (int i = 0; i < 3; i++)
        if (kids[i]) {
            uint64_t kh;
            int k;
            nk[i] = replace(c, kids[i], &kh, &k);
            hh = mix(hh, kh);
            n += k;
            changed |= nk[i] != kids[i];
        }
    mt_texpr **nargs = NULL;
    for (int i = 0; i < e->nargs; i++) {
        uint64_t kh;
        int k;
        mt_texpr *r = replace(c, e->args[i], &kh, &k);
        hh = mix(hh, kh);
        n += k;
        if (r != e->args[i] && !nargs) {
            nargs = MT_NEW_ARRAY(c->arena, mt_texpr *, e->nargs);
            memcpy(nargs, e->args, sizeof *nargs * (size_t)e->nargs);
        }
        if (nargs) nargs[i] = r;
    }
    *h = hh;
    *size = n;
    if (hh == c->cand->hash && n == c->cand->size && mt_texpr_equal(e, c->cand->e)) return c->cand_var;
    if (!changed && !nargs) return e;
    mt_texpr *r = mt_te_copy(c->arena, e);
    r->a = nk[0] ? nk[0] : e->a;
    r->b = nk[1] ? nk[1] : e->b;
    r->cond = nk[2] ? nk[2] : e->cond;
    if (nargs) r->args = nargs;
    return r;
}

/* The expressions of statement s itself (not of its sub-statements), in
 * out; their number (0 when s has none or is out of range). */
static int stmt_exprs(const mt_tstmt *s, mt_texpr **out) {
    switch (s->kind) {
    case TS_STORE:
        if (s->nidx > MT_MAX_RANK) return 0;
        for (int i = 0; i < s->nidx; i++) out[i] = s->idx[i];
        out[s->nidx] = s->value;
        return s->nidx + 1;
    case TS_EVAL:
        if (mt_tstmt_takes_addresses(s)) return 0; /* its loads are addresses: never a let's value */
        out[0] = s->value;
        return 1;
    case TS_LET: out[0] = s->value; return 1;
    case TS_IF: out[0] = s->cond; return 1;
    default: return 0;
    }
}

/* A copy of s with the expressions ex (as stmt_exprs lists them). */
static mt_tstmt *with_exprs(mt_arena *a, const mt_tstmt *s, mt_texpr *const *ex) {
    mt_tstmt *r = mt_ts_copy(a, s);
    switch (s->kind) {
    case TS_STORE:
        r->idx = MT_NEW_ARRAY(a, mt_texpr *, s->nidx > 0 ? s->nidx : 1);
        for (int i = 0; i < s->nidx; i++) r->idx[i] = ex[i];
        r->value = ex[s->nidx];
        break;
    case TS_IF: r->cond = ex[0]; break;
    default: r->value = ex[0]; break;
    }
    return r;
}

/* Counts the candidates of ex[0..n) and vals[0..nv) in a table sized for
 * them; false when they are too large to look at. *nodes: 0 in the first
 * round, then a bound on their size that the round before left (each round
 * replaces c >= 2 occurrences of s >= 3 nodes by a variable and adds one
 * let of s nodes, so the total shrinks): only the first round walks the
 * expressions once more to size the table. */
static bool count_all(cse_ctx *c, mt_texpr *const *ex, int n, mt_texpr *const *vals, int nv, int *nodes_io) {
    int nodes = *nodes_io, size;
    bool ld;
    if (!nodes) {
        for (int i = 0; i < n; i++) scan(c, ex[i], &size, &ld, false), nodes += size;
        for (int i = 0; i < nv; i++) scan(c, vals[i], &size, &ld, false), nodes += size;
        *nodes_io = nodes;
    }
    if (nodes > MAX_NODES) return false;
    int cap = 16;
    while (cap < 2 * nodes) cap *= 2;
    if (cap > c->alloc) {
        c->slots = MT_NEW_ARRAY(c->arena, occ, cap);
        c->alloc = cap;
    }
    c->cap = cap;
    c->seen = 0;
    memset(c->slots, 0, sizeof *c->slots * (size_t)cap);
    for (int i = 0; i < n; i++) scan(c, ex[i], &size, &ld, true);
    for (int i = 0; i < nv; i++) scan(c, vals[i], &size, &ld, true);
    return true;
}

/* The lets that compute the repeated subexpressions of s's own
 * expressions once (lets[0] innermost), and s with those replaced (s itself
 * when there are none): their number. */
static int cse_stmt(cse_ctx *c, mt_tstmt **s, mt_tvar **lets, mt_texpr **vals) {
    mt_texpr *ex[MT_MAX_RANK + 1];
    int n = stmt_exprs(*s, ex), nlets = 0, nodes = 0;
    while (n && nlets < MAX_ROUNDS && count_all(c, ex, n, vals, nlets, &nodes)) {
        const occ *best = NULL;
        for (int i = 0; i < c->cap; i++) {
            const occ *o = &c->slots[i];
            /* the hash (of variable and buffer addresses) orders the slots:
             * a tie goes to the first occurrence, not the first slot, so the
             * lets come out the same in every run */
            if (o->e && o->count >= 2 &&
                (!best || o->size > best->size || (o->size == best->size && o->first < best->first)))
                best = o;
        }
        if (!best) break;
        occ cand = *best;
        mt_tvar *v = mt_tvar_new(c->arena, "cse_v", cand.e->dtype);
        mt_texpr *ref = mt_te_var(c->arena, v);
        ref->lanes = cand.e->lanes;
        c->cand = &cand;
        c->cand_var = ref;
        uint64_t h;
        int size;
        for (int i = 0; i < n; i++) ex[i] = replace(c, ex[i], &h, &size);
        for (int i = 0; i < nlets; i++) vals[i] = replace(c, vals[i], &h, &size);
        lets[nlets] = v;
        vals[nlets++] = (mt_texpr *)cand.e;
    }
    if (nlets) *s = with_exprs(c->arena, *s, ex);
    return nlets;
}

/* A statement's own expressions first, then its sub-statements: the lets
 * are numbered in program order. */
static mt_tstmt *cse_visit(mt_tmutator *m, mt_tstmt *s) {
    cse_ctx *c = m->ctx;
    mt_tvar *lets[MAX_ROUNDS];
    mt_texpr *vals[MAX_ROUNDS];
    int nlets = cse_stmt(c, &s, lets, vals);
    for (int i = nlets - 1; i >= 0; i--) /* outermost first */
        lets[i]->name = mt_arena_printf(c->arena, "cse_v%d", ++c->made);
    s = mt_tmutate_stmt_children(m, s);
    for (int i = 0; i < nlets; i++) s = mt_ts_at(mt_ts_let(c->arena, lets[i], vals[i], s), s->loc);
    return s;
}

static mt_texpr *keep_expr(mt_tmutator *m, mt_texpr *e) { return e; }

mt_tfunc *mt_tir_cse(mt_arena *a, mt_tfunc *f) {
    if (!f->body) return f;
    cse_ctx c = {.arena = a};
    mt_tmutator m = {a, keep_expr, cse_visit, &c};
    mt_tstmt *body = mt_tmutate_stmt(&m, f->body);
    return mt_tfunc_with_body(a, f, body);
}
