/*
 * primitives_cache.c -- cache_read, and cache_write of a block that is not
 * a reduction (a reduction's local accumulator is primitives_reduction.c,
 * which hands the other cases here). Conventions as in primitives_block.c,
 * helpers block_util.c, outputs and refusals docs/schedule.md.
 *
 * Both add a buffer C of the original's shape and dtype, in the scope
 * asked for, to the function's allocations, and a copy block over the
 * whole shape (TVM's names: the block and the buffer are `<buffer>_<scope>`,
 * the loops ax0, ax1, ...; a name the function has already gets a suffix,
 * `<buffer>_<scope>_1`, ..., so that a name means one buffer):
 *
 *   cache_read(b, X, scope)   the copy C[v] = X[v] is an item of the
 *                             function's top-level sequence: right after
 *                             the last item that writes X, or first when
 *                             none does; b reads C instead of X.
 *   cache_write(b, scope)     b stores C instead of its buffer B; the copy
 *                             B[v] = C[v] is the item right after b's.
 *
 * The copy computes the whole buffer; compute_at (cache_read) or
 * reverse_compute_at (cache_write) then moves it under a loop so that it
 * copies the tile one iteration uses. On the CPU the scope is a marker
 * only (every scope is ordinary memory).
 */
#include "schedule/block_util.h"
#include "schedule/trace.h"

#include <string.h>

static const char *scope_name(mt_scope sc) {
    return sc == MT_SCOPE_SHARED ? "shared" : sc == MT_SCOPE_LOCAL ? "local" : "global";
}

/* ---- building -------------------------------------------------------------------- */

/* for ax0, ..: with T.block(name): dst[v] = src[v] (same shape). */
static mt_tstmt *copy_nest(mt_arena *a, const char *name, mt_tbuffer *src, mt_tbuffer *dst) {
    int n = src->ndim;
    mt_tvar **ax = MT_NEW_ARRAY(a, mt_tvar *, n + 1), **v = MT_NEW_ARRAY(a, mt_tvar *, n + 1);
    for (int d = 0; d < n; d++) {
        ax[d] = mt_tvar_new(a, mt_arena_printf(a, "ax%d", d), MT_INT64);
        v[d] = mt_tvar_new(a, mt_arena_printf(a, "v%d", d), MT_INT64);
    }
    mt_tstmt *b = mt_ts_block(a, name);
    b->iters = MT_NEW_ARRAY(a, mt_titer, n + 1);
    b->iter_values = mt_blk_var_exprs(a, ax, n);
    b->niters = n;
    for (int d = 0; d < n; d++) b->iters[d] = (mt_titer){v[d], src->shape[d], MT_ITER_SPATIAL};
    mt_texpr **idx = mt_blk_var_exprs(a, v, n);
    b->body = mt_ts_store(a, dst, idx, n, mt_te_load(a, src, idx, n));
    b->reads = MT_NEW_ARRAY(a, mt_tregion, 1);
    b->reads[0] = mt_blk_point_region(a, src, idx);
    b->nreads = 1;
    b->writes = MT_NEW_ARRAY(a, mt_tregion, 1);
    b->writes[0] = mt_blk_point_region(a, dst, idx);
    b->nwrites = 1;
    mt_tstmt *nest = b;
    for (int d = n - 1; d >= 0; d--)
        nest = mt_ts_for(a, ax[d], mt_te_i64(a, 0), src->shape[d], MT_FOR_SERIAL, nest);
    return nest;
}

/* A buffer like B in scope sc, named <B>_<scope> (<B>_<scope>_1, ... when f
 * has that name already). */
static mt_tbuffer *cache_buffer(mt_arena *a, const mt_tfunc *f, const mt_tbuffer *B, mt_scope sc) {
    const char *name = mt_blk_fresh_buffer_name(a, f, mt_arena_printf(a, "%s_%s", B->name, scope_name(sc)));
    mt_tbuffer *c = mt_tbuffer_new(a, name, B->dtype, B->ndim, B->shape);
    c->scope = sc;
    return c;
}

/* The function's top-level items (the body itself when not a sequence). */
static int top_items(const mt_tfunc *f, mt_tstmt *const **items) {
    if (f->body->kind == TS_SEQ) {
        *items = f->body->stmts;
        return f->body->nstmts;
    }
    *items = &((mt_tfunc *)f)->body;
    return 1;
}

/* s->func with x inserted at top-level position at and cache added to
 * the allocations. */
static void insert_top(mt_sched *s, int at, mt_tstmt *x, mt_tbuffer *cache) {
    mt_arena *a = s->arena;
    const mt_tfunc *f = s->func;
    mt_tstmt *const *items;
    int n = top_items(f, &items);
    mt_tstmt **v = MT_NEW_ARRAY(a, mt_tstmt *, n + 2);
    if (at > 0) memcpy(v, items, sizeof(mt_tstmt *) * (size_t)at);
    v[at] = x;
    if (n > at) memcpy(v + at + 1, items + at, sizeof(mt_tstmt *) * (size_t)(n - at));
    mt_blk_set_func_body(s, mt_ts_at(mt_ts_seq(a, v, n + 1), f->body->loc));
    mt_tfunc *g = s->func;
    g->allocs = MT_NEW_ARRAY(a, mt_tbuffer *, f->nallocs + 2);
    if (f->nallocs) /* a function without allocations may have allocs NULL */
        memcpy(g->allocs, f->allocs, sizeof(mt_tbuffer *) * (size_t)f->nallocs);
    g->allocs[g->nallocs++] = cache;
}

/* The top-level item holding statement st (path: body .. st). */
static int top_index(const mt_tfunc *f, const mt_blk_stmts *path) {
    mt_tstmt *const *items;
    int n = top_items(f, &items);
    for (int i = 0; i < n; i++)
        if (mt_blk_index_in(path, items[i]) >= 0) return i;
    return 0;
}

/* Regions rs with from's renamed to to. */
static mt_tregion *swap_regions(mt_arena *a, const mt_tregion *rs, int n, const mt_tbuffer *from,
                                mt_tbuffer *to) {
    mt_tregion *out = MT_NEW_ARRAY(a, mt_tregion, n + 1);
    for (int i = 0; i < n; i++) {
        out[i] = rs[i];
        if (rs[i].buf == from) out[i].buf = to;
    }
    return out;
}

/* ---- cache_read ----------------------------------------------------------------------- */

#define CR_P "cache_read"

/* The buffer named `buffer` that b loads (body, init, predicate), or NULL. */
static mt_tbuffer *read_buffer(mt_arena *a, const mt_tstmt *b, const char *buffer) {
    mt_blk_exprs loads = mt_blk_loads_in(a, b->body, b->predicate, NULL);
    mt_blk_exprs il = mt_blk_loads_in(a, b->init, NULL, NULL);
    for (int i = 0; i < il.len; i++) MT_VEC_PUSH(a, &loads, il.data[i]);
    for (int i = 0; i < loads.len; i++)
        if (strcmp(loads.data[i]->buf->name, buffer) == 0) return loads.data[i]->buf;
    return NULL;
}

/* *at: the top-level position for the copy of X that b (with this path)
 * reads: after the last item writing X, which must come before b's. */
static bool copy_place(mt_sched *s, const mt_tstmt *b, const mt_blk_stmts *path, mt_tbuffer *X, int *at) {
    mt_tstmt *const *items;
    int n = top_items(s->func, &items), top = top_index(s->func, path);
    const char *name = mt_blk_bname(b);
    *at = 0;
    for (int i = 0; i < n; i++) {
        mt_blk_accesses ai = mt_blk_scan(s->arena, items[i], NULL, NULL);
        for (int k = 0; k < ai.len; k++) {
            const mt_tstmt *w = ai.data[k].block;
            if (!ai.data[k].write || ai.data[k].buf != X) continue;
            if (w == b)
                return mt_sched_refuse(s, "%s: block '%s' writes '%s' itself (a copy would not see "
                                          "its updates)", CR_P, name, X->name);
            if (i >= top)
                return mt_sched_refuse(s, "%s: block '%s' writes '%s' %s block '%s' (a copy made "
                                          "before it would not hold what it reads)", CR_P,
                                       mt_blk_bname(w), X->name,
                                       i == top ? "in the same loop nest as" : "after", name);
            *at = i + 1;
        }
    }
    return true;
}

bool mt_sched_cache_read_do(mt_sched *s, const char *name, const char *buffer, mt_scope scope,
                         const char **cache_block) {
    mt_arena *a = s->arena;
    const mt_tfunc *f = s->func;
    mt_blk_stmts path;
    if (!mt_blk_find_block(s, CR_P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1];
    mt_tbuffer *X = read_buffer(a, b, buffer);
    int at;
    if (!X)
        return mt_sched_refuse(s, "%s: block '%s' does not read a buffer named '%s'", CR_P, name,
                               buffer);
    if (!mt_blk_function_wide(f, X))
        return mt_sched_refuse(s, "%s: '%s' is allocated inside the function's loops or blocks; the copy "
                                  "goes at its top level", CR_P, X->name);
    if (!copy_place(s, b, &path, X, &at)) return false;
    mt_tbuffer *C = cache_buffer(a, f, X, scope);
    const char *cname = mt_blk_fresh_block_name(a, f, C->name);
    mt_tstmt *nb = mt_ts_copy(a, b); /* b writes no X: only its loads change */
    nb->body = mt_tsubst_buffer_stmt(a, b->body, X, C);
    nb->init = mt_tsubst_buffer_stmt(a, b->init, X, C);
    nb->predicate = mt_tsubst_buffer_expr(a, b->predicate, X, C);
    nb->reads = swap_regions(a, b->reads, b->nreads, X, C);
    mt_sched_replace(s, b, nb);
    insert_top(s, at, copy_nest(a, cname, X, C), C);
    if (cache_block) *cache_block = cname;
    return true;
}

/* ---- cache_write (a copy block) --------------------------------------------------------- */

#define CW_P "cache_write"

/* b (with the given path) may write a cache of its buffer B: one store of
 * all of B, B not read by b, written by nothing else, and read by nothing
 * else in b's top-level item (index top). */
static bool cw_copyable(mt_sched *s, const mt_tstmt *b, const mt_blk_stmts *path, int top) {
    const char *name = mt_blk_bname(b);
    const mt_tstmt *st = b->body;
    if (b->init) return mt_sched_refuse(s, "%s: block '%s' has an init", CW_P, name);
    if (b->predicate) return mt_sched_refuse(s, "%s: block '%s' has a T.where predicate", CW_P, name);
    if (st->kind != TS_STORE)
        return mt_sched_refuse(s, "%s: the body of block '%s' is not a single store", CW_P, name);
    mt_tbuffer *B = st->buf;
    if (!mt_blk_bijection(b, B, st->idx))
        return mt_sched_refuse(s, "%s: block '%s' does not write all of '%s' (its index is not its "
                                  "iteration variables in some order over the whole buffer)", CW_P,
                               name, B->name);
    if (mt_blk_loads_in(s->arena, st, NULL, B).len)
        return mt_sched_refuse(s, "%s: block '%s' reads '%s', the buffer it writes", CW_P, name,
                               B->name);
    mt_blk_accesses acc = mt_blk_scan(s->arena, s->func->body, b, path);
    for (int i = 0; i < acc.len; i++)
        if (!acc.data[i].inside && acc.data[i].buf == B && acc.data[i].write)
            return mt_sched_refuse(s, "%s: '%s' has another writer, block '%s'", CW_P, B->name,
                                   mt_blk_bname(acc.data[i].block));
    mt_tstmt *const *items;
    top_items(s->func, &items);
    mt_blk_accesses ai = mt_blk_scan(s->arena, items[top], b, path);
    for (int i = 0; i < ai.len; i++)
        if (!ai.data[i].inside && ai.data[i].buf == B)
            return mt_sched_refuse(s, "%s: block '%s' reads '%s' in the same loop nest as block "
                                      "'%s' (before the copy would write it)", CW_P,
                                   mt_blk_bname(ai.data[i].block), B->name, name);
    return true;
}

/* Preconditions in primitives.h (mt_sched_cache_write, not a reduction). */
bool mt_blk_cache_write_copy(mt_sched *s, const char *name, mt_scope scope, const char **cache_block) {
    mt_arena *a = s->arena;
    const mt_tfunc *f = s->func;
    mt_blk_stmts path;
    if (!mt_blk_find_block(s, CW_P, name, &path)) return false;
    const mt_tstmt *b = path.data[path.len - 1], *st = b->body;
    int top = top_index(f, &path);
    if (b->body->kind == TS_STORE && !mt_blk_function_wide(f, b->body->buf))
        return mt_sched_refuse(s, "%s: '%s' is allocated inside the function's loops or blocks; the copy "
                                  "back goes at its top level", CW_P, b->body->buf->name);
    if (!cw_copyable(s, b, &path, top)) return false;
    mt_tbuffer *B = st->buf, *C = cache_buffer(a, f, B, scope);
    const char *cname = mt_blk_fresh_block_name(a, f, C->name);
    mt_tstmt *nb = mt_ts_copy(a, b);
    nb->body = mt_ts_at(mt_ts_store(a, C, st->idx, st->nidx, st->value), st->loc);
    nb->writes = swap_regions(a, b->writes, b->nwrites, B, C);
    mt_sched_replace(s, b, nb);
    insert_top(s, top + 1, copy_nest(a, cname, C, B), C);
    if (cache_block) *cache_block = cname;
    return true;
}
