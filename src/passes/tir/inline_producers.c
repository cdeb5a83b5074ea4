/*
 * inline_producers.c -- compute intermediates where they are used.
 *
 * Fusing several graph ops into one loop function gives a sequence of loop
 * nests, one block each, that talk through intermediate buffers (f->allocs):
 *
 *     for i0, i1 in T.grid(2, 3):                for i0, i1 in T.grid(2, 3):
 *         with T.block("add"):                       with T.block("add_1"):
 *             ...                                        ...
 *             t[v0, v1] = a[v0, v1] + b[v0, v1]  ==>     out[v0, v1] = a[v0, v1] + b[v0, v1] + a[v0, v1]
 *     for i0, i1 in T.grid(2, 3):
 *         with T.block("add_1"):
 *             ...
 *             out[v0, v1] = t[v0, v1] + a[v0, v1]
 *
 * A producer (TVM's compute_inline) is a top-level statement that is a loop
 * nest around one block whose body is the single store
 * `B[v0, ..., vk] = expr`, where
 *   - B is an entry of f->allocs, and this store is the only write to B in
 *     the function; no statement before it reads B;
 *   - the block has only spatial iter vars, no init, no predicate, no
 *     alloc_buffers, and the store's indices are exactly its iter vars in
 *     order, with extents equal to B's shape (so the block defines all of B);
 *   - the nest has one loop per iter var, each starting at 0 with the iter
 *     var's extent, and each iter var is bound to its own loop variable (so
 *     every point of the domain is computed exactly once);
 *   - expr does not read B, and no later statement writes a buffer expr
 *     reads (so evaluating expr later, at the consumer, gives the same value).
 * Then every load B[i0, ..., ik] anywhere after the producer becomes
 * expr[v := i], the producer's loop nest is dropped and B leaves f->allocs.
 * In a consumer block's T.reads a region of B is replaced by the producer's
 * read regions mapped through the same substitution: a dim read at the single
 * point v_k maps to the consumer's range of dim k, a dim that does not depend
 * on the iter vars is kept, and anything else widens to the whole dim (a safe
 * over-approximation). Duplicate regions are dropped, first one kept.
 *
 * Statements are processed in program order and each is rewritten with the
 * producers found before it, so chains inline transitively: a producer's own
 * expr already has the earlier producers substituted in. A block that fails a
 * condition stays as it is, and so does its buffer's allocation.
 *
 * The rewrite of the consumers (loads and T.reads) is inline_subst.c, shared
 * with the compute_inline schedule primitive.
 */
#include "passes/tir/inline_subst.h"
#include "passes/tir/tir_passes.h"
#include "tir/arith.h"

typedef MT_VEC(mt_tbuffer *) bufset;
typedef MT_VEC(mt_tstmt *) stmtvec;


/* Buffers a statement reads and writes. */
typedef struct access {
    bufset reads;
    bufset writes;
} access;

static bool set_has(const bufset *s, const mt_tbuffer *b) {
    for (int i = 0; i < s->len; i++)
        if (s->data[i] == b) return true;
    return false;
}

static void set_add(mt_arena *a, bufset *s, mt_tbuffer *b) {
    if (!set_has(s, b)) MT_VEC_PUSH(a, s, b);
}

typedef struct collect_ctx {
    mt_arena *a;
    access *acc;
} collect_ctx;

static void collect_expr(mt_tvisitor *v, const mt_texpr *e) {
    collect_ctx *c = v->ctx;
    if (e->kind == TE_LOAD) set_add(c->a, &c->acc->reads, e->buf);
    mt_tvisit_expr_children(v, e);
}

static void collect_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    collect_ctx *c = v->ctx;
    if (s->kind == TS_STORE) set_add(c->a, &c->acc->writes, s->buf);
    if (s->kind == TS_BLOCK) {
        for (int i = 0; i < s->nreads; i++) set_add(c->a, &c->acc->reads, s->reads[i].buf);
        for (int i = 0; i < s->nwrites; i++) set_add(c->a, &c->acc->writes, s->writes[i].buf);
    }
    mt_tvisit_stmt_children(v, s);
}

static access collect(mt_arena *a, const mt_tstmt *s, const mt_texpr *e) {
    access acc = {{0}, {0}};
    collect_ctx c = {a, &acc};
    mt_tvisitor v = {collect_expr, collect_stmt, &c};
    mt_tvisit_stmt(&v, s);
    mt_tvisit_expr(&v, e);
    return acc;
}

/* ---- finding producers --------------------------------------------------- */

static bool is_alloc(const mt_tfunc *f, const mt_tbuffer *b) {
    for (int i = 0; i < f->nallocs; i++)
        if (f->allocs[i] == b) return true;
    return false;
}

/* Inlining copies a producer's expression into every load of its buffer, so
 * an op that reads an operand several times (maximum, sign, ...) makes chains
 * grow geometrically. A producer whose expression is already this large is
 * kept in its buffer instead: code size stays linear in the chain length. */
enum { MAX_INLINE_NODES = 256 };

typedef struct sizer {
    mt_tvisitor v;
    int nodes;
} sizer;

static void count_node(mt_tvisitor *v, const mt_texpr *e) {
    sizer *s = (sizer *)v;
    if (++s->nodes > MAX_INLINE_NODES) return; /* big enough: stop walking */
    mt_tvisit_expr_children(v, e);
}

static bool too_big(const mt_texpr *e) {
    sizer s = {{count_node, NULL, NULL}, 0};
    mt_tvisit_expr(&s.v, e);
    return s.nodes > MAX_INLINE_NODES;
}

/* Whether stmt (the i-th of n, already rewritten) is a producer; fills p. */
static bool as_producer(mt_arena *a, const mt_tfunc *f, mt_tstmt *stmt, int i, int n,
                        const access *acc, mt_inline_def *p) {
    const mt_tstmt *loops[MT_MAX_RANK];
    int nloops = 0;
    const mt_tstmt *s = stmt;
    while (s->kind == TS_FOR) {
        if (nloops == MT_MAX_RANK) return false;
        loops[nloops++] = s;
        s = s->body;
    }
    if (s->kind != TS_BLOCK || s->init || s->predicate || s->nallocs) return false;
    const mt_tstmt *st = s->body;
    if (st->kind != TS_STORE || !is_alloc(f, st->buf)) return false;
    mt_tbuffer *b = st->buf;
    if (s->niters != b->ndim || st->nidx != b->ndim || nloops != b->ndim || !s->iter_values)
        return false;
    bool loop_used[MT_MAX_RANK] = {false};
    for (int k = 0; k < s->niters; k++) {
        const mt_titer *it = &s->iters[k];
        if (it->kind != MT_ITER_SPATIAL || !mt_texpr_equal(it->extent, b->shape[k])) return false;
        if (st->idx[k]->kind != TE_VAR || st->idx[k]->var != it->var) return false;
        const mt_texpr *v = s->iter_values[k];
        if (v->kind != TE_VAR) return false;
        int l = -1;
        for (int j = 0; j < nloops; j++)
            if (loops[j]->var == v->var) l = j;
        if (l < 0 || loop_used[l] || !mt_arith_is_const(loops[l]->min, 0) ||
            !mt_texpr_equal(loops[l]->extent, it->extent))
            return false;
        loop_used[l] = true;
    }
    for (int k = 0; k < s->nwrites; k++)
        if (s->writes[k].buf != b) return false;
    if (too_big(st->value)) return false;
    access own = collect(a, NULL, st->value);
    if (set_has(&own.reads, b)) return false;
    for (int j = 0; j < n; j++) {
        if (j != i && set_has(&acc[j].writes, b)) return false;
        if (j < i && set_has(&acc[j].reads, b)) return false;
        if (j > i)
            for (int r = 0; r < own.reads.len; r++)
                if (set_has(&acc[j].writes, own.reads.data[r])) return false;
    }
    p->buf = b;
    p->nvars = s->niters;
    p->vars = MT_NEW_ARRAY(a, mt_tvar *, s->niters);
    for (int k = 0; k < s->niters; k++) p->vars[k] = s->iters[k].var;
    p->value = st->value;
    p->reads = s->reads;
    p->nreads = s->nreads;
    return true;
}

mt_tfunc *mt_tir_inline_producers(mt_arena *a, mt_tfunc *f) {
    if (f->nallocs == 0 || !f->body) return f;
    mt_tstmt *flat = mt_ts_seq_flat(a, &f->body, 1);
    mt_tstmt *const *items = flat->kind == TS_SEQ ? flat->stmts : &flat;
    int n = flat->kind == TS_SEQ ? flat->nstmts : 1;
    access *acc = MT_NEW_ARRAY(a, access, n);
    for (int i = 0; i < n; i++) acc[i] = collect(a, items[i], NULL);

    MT_VEC(mt_inline_def) prods = {0};
    stmtvec kept = {0};
    for (int i = 0; i < n; i++) {
        mt_tstmt *s = mt_inline_apply(a, prods.data, prods.len, items[i]);
        mt_inline_def p;
        if (as_producer(a, f, s, i, n, acc, &p))
            MT_VEC_PUSH(a, &prods, p);
        else
            MT_VEC_PUSH(a, &kept, s);
    }
    if (prods.len == 0) return f;

    mt_tfunc *g = MT_NEW(a, mt_tfunc);
    *g = *f;
    g->body = mt_ts_at(mt_ts_seq(a, kept.data, kept.len), f->body->loc);
    g->allocs = MT_NEW_ARRAY(a, mt_tbuffer *, f->nallocs);
    g->nallocs = 0;
    for (int i = 0; i < f->nallocs; i++)
        if (!mt_inline_find(prods.data, prods.len, f->allocs[i])) g->allocs[g->nallocs++] = f->allocs[i];
    return g;
}
