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
 */
#include "passes/tir/tir_passes.h"

typedef MT_VEC(mt_tbuffer *) bufset;
typedef MT_VEC(mt_tstmt *) stmtvec;

/* One inlined producer: B[vars] = value. */
typedef struct producer {
    mt_tbuffer *buf;     /* B */
    mt_tvar **vars;      /* the producer block's iter vars, one per dim of B */
    int nvars;
    mt_texpr *value;     /* expr over vars, earlier producers substituted */
    mt_tregion *reads;   /* the producer block's read regions, over vars */
    int nreads;
} producer;

typedef struct inl_ctx {
    MT_VEC(producer) prods;
} inl_ctx;

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

typedef struct var_find {
    mt_tvar *const *vars;
    int n;
    bool found;
} var_find;

static void find_hook(mt_tvisitor *v, const mt_texpr *e) {
    var_find *f = v->ctx;
    if (e->kind == TE_VAR)
        for (int i = 0; i < f->n; i++)
            if (f->vars[i] == e->var) f->found = true;
    mt_tvisit_expr_children(v, e);
}

static bool uses_any(const mt_texpr *e, mt_tvar *const *vars, int n) {
    var_find f = {vars, n, false};
    mt_tvisitor v = {find_hook, NULL, &f};
    mt_tvisit_expr(&v, e);
    return f.found;
}

static bool is_const(const mt_texpr *e, int64_t want) {
    int64_t v;
    return mt_te_is_const_int(e, &v) && v == want;
}

/* ---- substitution into consumers ----------------------------------------- */

static const producer *find_producer(const inl_ctx *c, const mt_tbuffer *b) {
    for (int i = 0; i < c->prods.len; i++)
        if (c->prods.data[i].buf == b) return &c->prods.data[i];
    return NULL;
}

static bool region_equal(const mt_tregion *x, const mt_tregion *y) {
    if (x->buf != y->buf) return false;
    for (int d = 0; d < x->buf->ndim; d++)
        if (!mt_texpr_equal(x->min[d], y->min[d]) || !mt_texpr_equal(x->extent[d], y->extent[d]))
            return false;
    return true;
}

/* Producer read region r seen from a consumer region c of the producer's
 * buffer. */
static mt_tregion map_region(mt_arena *a, const producer *p, const mt_tregion *r,
                             const mt_tregion *c) {
    int nd = r->buf->ndim;
    mt_tregion out = {r->buf, MT_NEW_ARRAY(a, mt_texpr *, nd > 0 ? nd : 1),
                      MT_NEW_ARRAY(a, mt_texpr *, nd > 0 ? nd : 1)};
    bool points = true;
    for (int k = 0; k < p->nvars; k++) points = points && is_const(c->extent[k], 1);
    for (int d = 0; d < nd; d++) {
        mt_texpr *m = r->min[d], *e = r->extent[d];
        int k = -1;
        if (m->kind == TE_VAR && is_const(e, 1))
            for (int j = 0; j < p->nvars; j++)
                if (p->vars[j] == m->var) k = j;
        if (k >= 0) {
            out.min[d] = c->min[k];
            out.extent[d] = c->extent[k];
        } else if (!uses_any(m, p->vars, p->nvars) && !uses_any(e, p->vars, p->nvars)) {
            out.min[d] = m;
            out.extent[d] = e;
        } else if (points) {
            out.min[d] = mt_tsubst_expr(a, m, p->vars, c->min, p->nvars);
            out.extent[d] = mt_tsubst_expr(a, e, p->vars, c->min, p->nvars);
        } else {
            out.min[d] = mt_te_i64(a, 0);
            out.extent[d] = r->buf->shape[d];
        }
    }
    return out;
}

typedef MT_VEC(mt_tregion) regionvec;

static void push_region(mt_arena *a, regionvec *v, mt_tregion r) {
    for (int i = 0; i < v->len; i++)
        if (region_equal(&v->data[i], &r)) return;
    MT_VEC_PUSH(a, v, r);
}

/* The block's reads with regions of inlined buffers replaced; NULL when none
 * named an inlined buffer. */
static regionvec *fix_reads(mt_arena *a, const inl_ctx *c, const mt_tstmt *blk) {
    bool any = false;
    for (int i = 0; i < blk->nreads; i++) any = any || find_producer(c, blk->reads[i].buf);
    if (!any) return NULL;
    regionvec *out = MT_NEW(a, regionvec);
    for (int i = 0; i < blk->nreads; i++) {
        const mt_tregion *r = &blk->reads[i];
        const producer *p = find_producer(c, r->buf);
        if (!p) {
            push_region(a, out, *r);
            continue;
        }
        for (int j = 0; j < p->nreads; j++) push_region(a, out, map_region(a, p, &p->reads[j], r));
    }
    return out;
}

static mt_texpr *inl_expr(mt_tmutator *m, mt_texpr *e) {
    mt_texpr *r = mt_tmutate_expr_children(m, e);
    if (r->kind != TE_LOAD) return r;
    const producer *p = find_producer(m->ctx, r->buf);
    if (!p) return r;
    if (r->nargs != p->nvars) mt_ice("load of '%s' has %d indices", r->buf->name, r->nargs);
    return mt_tsubst_expr(m->arena, p->value, p->vars, r->args, p->nvars);
}

static mt_tstmt *inl_stmt(mt_tmutator *m, mt_tstmt *s) {
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    if (r->kind != TS_BLOCK) return r;
    regionvec *reads = fix_reads(m->arena, m->ctx, r);
    if (!reads) return r;
    mt_tstmt *c = r == s ? mt_ts_copy(m->arena, r) : r;
    c->reads = reads->data;
    c->nreads = reads->len;
    return c;
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
                        const access *acc, producer *p) {
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
        if (l < 0 || loop_used[l] || !is_const(loops[l]->min, 0) ||
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

static void flatten_seq(mt_arena *a, mt_tstmt *s, stmtvec *out) {
    if (s->kind != TS_SEQ) {
        MT_VEC_PUSH(a, out, s);
        return;
    }
    for (int i = 0; i < s->nstmts; i++) flatten_seq(a, s->stmts[i], out);
}

mt_tfunc *mt_tir_inline_producers(mt_arena *a, mt_tfunc *f) {
    if (f->nallocs == 0 || !f->body) return f;
    stmtvec items = {0};
    flatten_seq(a, f->body, &items);
    int n = items.len;
    access *acc = MT_NEW_ARRAY(a, access, n);
    for (int i = 0; i < n; i++) acc[i] = collect(a, items.data[i], NULL);

    inl_ctx c = {{0}};
    mt_tmutator m = {a, inl_expr, inl_stmt, &c};
    stmtvec kept = {0};
    for (int i = 0; i < n; i++) {
        mt_tstmt *s = c.prods.len ? mt_tmutate_stmt(&m, items.data[i]) : items.data[i];
        producer p;
        if (as_producer(a, f, s, i, n, acc, &p))
            MT_VEC_PUSH(a, &c.prods, p);
        else
            MT_VEC_PUSH(a, &kept, s);
    }
    if (c.prods.len == 0) return f;

    mt_tfunc *g = MT_NEW(a, mt_tfunc);
    *g = *f;
    g->body = mt_ts_seq(a, kept.data, kept.len);
    g->allocs = MT_NEW_ARRAY(a, mt_tbuffer *, f->nallocs);
    g->nallocs = 0;
    for (int i = 0; i < f->nallocs; i++)
        if (!find_producer(&c, f->allocs[i])) g->allocs[g->nallocs++] = f->allocs[i];
    return g;
}
