/*
 * primitives_layout.c -- transform_layout: a buffer the function allocates
 * stored in another layout (TVM's primitive of that name). The packed B of
 * a matmul kept as 16-column panels, each K deep and contiguous, is
 *
 *   sch.transform_layout(pack, "b_global", lambda k, j: (j // 16, k, j % 16))
 *
 * Conventions as in primitives_block.c, outputs and refusals in
 * docs/schedule.md ("transform_layout").
 *
 * The map must be one-to-one, or two elements would share a place. Each
 * output may use one parameter only, so the map is one-to-one when, for
 * each parameter, the outputs that use it take distinct values over its
 * dim; that is checked by enumerating the dim (a constant of at most 2^20),
 * which is exact for any form the outputs take (no algebra on // and %).
 * The same pass gives the new buffer's extents: one past the largest value
 * of each output.
 */
#include "schedule/block_util.h"
#include "schedule/trace.h"

#include <string.h>

#include "support/common.h"
#include "support/strbuf.h"

#define TL_P "transform_layout"

enum { MAX_DIM = 1 << 20, MAX_BOX_BITS = 1 << 24, MAX_OUTS = 8, MAX_GROWTH = 64 };

/* The buffer named `name` among b's read and write regions, or NULL. */
static mt_tbuffer *region_buffer(const mt_tstmt *b, const char *name) {
    for (int i = 0; i < b->nreads; i++)
        if (strcmp(b->reads[i].buf->name, name) == 0) return b->reads[i].buf;
    for (int i = 0; i < b->nwrites; i++)
        if (strcmp(b->writes[i].buf->name, name) == 0) return b->writes[i].buf;
    return NULL;
}

static int param_of(const mt_index_map *m, const mt_tvar *v) {
    for (int i = 0; i < m->nparams; i++)
        if (m->params[i] == v) return i;
    return -1;
}

/* e is built from integers, the map's parameters, +, -, *, unary - and //
 * or % by a positive constant. */
static bool form_ok(const mt_texpr *e, const mt_index_map *m) {
    int64_t c;
    if (e->lanes != 1) return false;
    switch (e->kind) {
    case TE_INT: return mt_dtype_is_int(e->dtype);
    case TE_VAR: return param_of(m, e->var) >= 0;
    case TE_NEG: return form_ok(e->a, m);
    case TE_ADD: case TE_SUB: case TE_MUL: return form_ok(e->a, m) && form_ok(e->b, m);
    case TE_FLOORDIV: case TE_FLOORMOD: return form_ok(e->a, m) && mt_te_is_const_int(e->b, &c) && c > 0;
    default: return false;
    }
}

/* The one parameter e uses; -1 for none, -2 for several. */
static int the_param(const mt_texpr *e, const mt_index_map *m) {
    int p = -1;
    for (int i = 0; i < m->nparams; i++)
        if (mt_texpr_uses_var(e, m->params[i])) p = p == -1 ? i : -2;
    return p;
}

/* e (form_ok, one parameter) at parameter value x; false on overflow. */
static bool value_at(const mt_texpr *e, int64_t x, int64_t *out) {
    int64_t a, b;
    switch (e->kind) {
    case TE_INT: *out = e->ival; return true;
    case TE_VAR: *out = x; return true;
    case TE_NEG:
        if (!value_at(e->a, x, &a) || a == INT64_MIN) return false;
        *out = -a;
        return true;
    default: break;
    }
    if (!value_at(e->a, x, &a) || !value_at(e->b, x, &b)) return false;
    switch (e->kind) {
    case TE_ADD: return !__builtin_add_overflow(a, b, out);
    case TE_SUB: return !__builtin_sub_overflow(a, b, out);
    case TE_MUL: return !__builtin_mul_overflow(a, b, out);
    case TE_FLOORDIV: *out = a / b - (a % b != 0 && a < 0); return true; /* b > 0 */
    case TE_FLOORMOD: *out = a % b + (a % b < 0 ? b : 0); return true;
    default: return false;
    }
}

/* ---- checking the map ----------------------------------------------------------- */

typedef struct tl {
    mt_sched *s;
    const mt_tbuffer *X;
    const mt_index_map *m;
    int owner[MAX_OUTS];  /* the parameter each output uses */
    int64_t ext[MAX_OUTS]; /* the new buffer's extents */
} tl;

static const char *out_text(const tl *t, int o) { return mt_texpr_print(t->s->arena, t->m->outs[o]); }

/* The outputs' values at parameter p = x into v[] (outputs of p only). */
static bool values(tl *t, int p, int64_t x, int64_t *v) {
    for (int o = 0; o < t->m->nouts; o++) {
        if (t->owner[o] != p) continue;
        if (!value_at(t->m->outs[o], x, &v[o]))
            return mt_sched_refuse(t->s, "%s: output %d of the index map (%s) overflows at %s = %lld", TL_P, o,
                                   out_text(t, o), t->m->params[p]->name, (long long)x);
        if (v[o] < 0)
            return mt_sched_refuse(t->s, "%s: output %d of the index map (%s) is %lld at %s = %lld; a place in a "
                                         "buffer is never negative", TL_P, o, out_text(t, o), (long long)v[o],
                                   t->m->params[p]->name, (long long)x);
    }
    return true;
}

/* The place of p = x in the box of p's outputs (row-major over them). */
static int64_t box_key(const tl *t, int p, const int64_t *v) {
    int64_t k = 0;
    for (int o = 0; o < t->m->nouts; o++)
        if (t->owner[o] == p) k = k * t->ext[o] + v[o];
    return k;
}

/* Over dim p (E elements): the outputs' extents, then no two values of p
 * in one place. */
static bool check_dim(tl *t, int p, int64_t E) {
    int64_t v[MAX_OUTS], box = 1;
    for (int64_t x = 0; x < E; x++) {
        if (!values(t, p, x, v)) return false;
        for (int o = 0; o < t->m->nouts; o++)
            if (t->owner[o] == p && v[o] + 1 > t->ext[o]) t->ext[o] = v[o] + 1;
    }
    for (int o = 0; o < t->m->nouts; o++)
        if (t->owner[o] == p && (__builtin_mul_overflow(box, t->ext[o], &box) || box > MAX_BOX_BITS))
            return mt_sched_refuse(t->s, "%s: the outputs of the index map that use %s span more than %d places; "
                                         "the map cannot be checked", TL_P, t->m->params[p]->name, MAX_BOX_BITS);
    uint8_t *seen = MT_NEW_ARRAY(t->s->arena, uint8_t, (size_t)(box / 8 + 1));
    memset(seen, 0, (size_t)(box / 8 + 1));
    for (int64_t x = 0; x < E; x++) {
        values(t, p, x, v);
        int64_t k = box_key(t, p, v);
        if (seen[k / 8] & (1u << (k % 8))) {
            int64_t y = 0, w[MAX_OUTS];
            while (values(t, p, y, w) && box_key(t, p, w) != k) y++;
            return mt_sched_refuse(t->s, "%s: the index map sends %s = %lld and %s = %lld to the same place; it "
                                         "must be one-to-one", TL_P, t->m->params[p]->name, (long long)y,
                                   t->m->params[p]->name, (long long)x);
        }
        seen[k / 8] |= (uint8_t)(1u << (k % 8));
    }
    return true;
}

/* The new buffer may pad, not balloon: at most MAX_GROWTH times the old
 * one's elements (padding a dim to a multiple of a panel's width is
 * well within that). */
static bool check_size(tl *t) {
    int64_t old = 1, now = 1, most, e;
    for (int d = 0; d < t->X->ndim; d++)
        if (mt_te_is_const_int(t->X->shape[d], &e) && __builtin_mul_overflow(old, e, &old)) old = INT64_MAX;
    if (__builtin_mul_overflow(old > 0 ? old : 1, (int64_t)MAX_GROWTH, &most)) most = INT64_MAX;
    for (int o = 0; o < t->m->nouts; o++)
        if (__builtin_mul_overflow(now, t->ext[o], &now) || now > most)
            return mt_sched_refuse(t->s, "%s: the new layout of '%s' would hold more than %d times its %lld "
                                         "elements", TL_P, t->X->name, MAX_GROWTH, (long long)old);
    return true;
}

static bool check_map(tl *t) {
    const mt_index_map *m = t->m;
    const mt_tbuffer *X = t->X;
    if (m->nparams != X->ndim)
        return mt_sched_refuse(t->s, "%s: the index map takes %d parameter%s; '%s' has %d dim%s", TL_P, m->nparams,
                               m->nparams == 1 ? "" : "s", X->name, X->ndim, X->ndim == 1 ? "" : "s");
    if (m->nouts < 1 || m->nouts > MAX_OUTS)
        return mt_sched_refuse(t->s, "%s: the index map gives %d outputs; a layout has 1 to %d dims", TL_P, m->nouts,
                               MAX_OUTS);
    for (int o = 0; o < m->nouts; o++) {
        if (!form_ok(m->outs[o], m))
            return mt_sched_refuse(t->s, "%s: output %d of the index map (%s) is not built from its parameters, "
                                         "integers, +, -, * and // or %% by a positive integer", TL_P, o,
                                   out_text(t, o));
        t->owner[o] = the_param(m->outs[o], m);
        if (t->owner[o] < 0)
            return mt_sched_refuse(t->s, "%s: output %d of the index map (%s) uses %s of its parameters; each "
                                         "output uses exactly one", TL_P, o, out_text(t, o),
                                   t->owner[o] == -1 ? "none" : "several");
        t->ext[o] = 1;
    }
    for (int p = 0; p < m->nparams; p++) {
        int64_t E;
        bool used = false;
        if (!mt_te_is_const_int(X->shape[p], &E))
            return mt_sched_refuse(t->s, "%s: dim %d of '%s' is not a constant", TL_P, p, X->name);
        if (E > MAX_DIM)
            return mt_sched_refuse(t->s, "%s: dim %d of '%s' has %lld elements, more than the %d the map is "
                                         "checked over", TL_P, p, X->name, (long long)E, MAX_DIM);
        for (int o = 0; o < m->nouts; o++) used |= t->owner[o] == p;
        if (!used && E > 1)
            return mt_sched_refuse(t->s, "%s: no output of the index map uses %s: the %lld elements along dim %d "
                                         "of '%s' would share one place", TL_P, m->params[p]->name, (long long)E, p,
                                   X->name);
        if (used && !check_dim(t, p, E)) return false;
    }
    return check_size(t);
}

/* ---- rewriting the function --------------------------------------------------------- */

typedef struct relayout {
    const mt_tbuffer *X;
    mt_tbuffer *Y;
    const mt_index_map *m;
} relayout;

static mt_texpr **new_index(mt_arena *a, const relayout *r, mt_texpr *const *idx) {
    const mt_index_map *m = r->m;
    mt_texpr **vals = MT_NEW_ARRAY(a, mt_texpr *, m->nparams + 1), **out = MT_NEW_ARRAY(a, mt_texpr *, m->nouts);
    for (int d = 0; d < m->nparams; d++) vals[d] = mt_te_cast(a, MT_INT64, idx[d]);
    for (int o = 0; o < m->nouts; o++) out[o] = mt_tsubst_expr(a, m->outs[o], m->params, vals, m->nparams);
    return out;
}

static mt_texpr *relayout_expr(mt_tmutator *mu, mt_texpr *e) {
    const relayout *r = mu->ctx;
    mt_texpr *x = mt_tmutate_expr_children(mu, e);
    if (x->kind != TE_LOAD || x->buf != r->X) return x;
    mt_texpr *l = mt_te_load(mu->arena, r->Y, new_index(mu->arena, r, x->args), r->m->nouts);
    l->loc = x->loc;
    return l;
}

/* Regions of X become all of Y. */
static mt_tregion *whole_regions(mt_arena *a, const relayout *r, const mt_tregion *rs, int n) {
    mt_tregion *out = MT_NEW_ARRAY(a, mt_tregion, n + 1);
    for (int i = 0; i < n; i++) {
        out[i] = rs[i];
        if (rs[i].buf != r->X) continue;
        out[i].buf = r->Y;
        out[i].min = MT_NEW_ARRAY(a, mt_texpr *, r->Y->ndim);
        out[i].extent = MT_NEW_ARRAY(a, mt_texpr *, r->Y->ndim);
        for (int d = 0; d < r->Y->ndim; d++) out[i].min[d] = mt_te_i64(a, 0), out[i].extent[d] = r->Y->shape[d];
    }
    return out;
}

static mt_tstmt *relayout_stmt(mt_tmutator *mu, mt_tstmt *s) {
    const relayout *r = mu->ctx;
    mt_tstmt *x = mt_tmutate_stmt_children(mu, s);
    if (x->kind == TS_STORE && x->buf == r->X) {
        mt_tstmt *n = mt_ts_copy(mu->arena, x);
        n->buf = r->Y;
        n->idx = new_index(mu->arena, r, x->idx);
        n->nidx = r->m->nouts;
        return n;
    }
    if (x->kind == TS_BLOCK && (region_buffer(x, r->X->name) == r->X)) {
        mt_tstmt *n = mt_ts_copy(mu->arena, x);
        n->reads = whole_regions(mu->arena, r, x->reads, x->nreads);
        n->writes = whole_regions(mu->arena, r, x->writes, x->nwrites);
        return n;
    }
    return x;
}

bool mt_sched_transform_layout_do(mt_sched *s, const char *block, const char *buffer, const mt_index_map *map) {
    mt_arena *a = s->arena;
    const mt_tfunc *f = s->func;
    mt_blk_stmts path;
    if (!mt_blk_find_block(s, TL_P, block, &path)) return false;
    mt_tbuffer *X = region_buffer(path.data[path.len - 1], buffer);
    if (!X)
        return mt_sched_refuse(s, "%s: block '%s' does not read or write a buffer named '%s'", TL_P, block, buffer);
    if (!mt_blk_is_alloc(f, X)) {
        for (int i = 0; i < f->nparams; i++)
            if (f->params[i].buf == X)
                return mt_sched_refuse(s, "%s: '%s' is a parameter of '%s', whose layout is its caller's; "
                                          "transform_layout takes a buffer the function allocates (a "
                                          "cache_read's or cache_write's copy, a T.alloc_buffer)", TL_P, X->name,
                                       f->name);
        return mt_sched_refuse(s, "%s: '%s' is allocated inside a block; transform_layout takes a buffer the "
                                  "function allocates at its top", TL_P, X->name);
    }
    tl t = {.s = s, .X = X, .m = map};
    if (!check_map(&t)) return false;
    mt_texpr **shape = MT_NEW_ARRAY(a, mt_texpr *, map->nouts);
    for (int o = 0; o < map->nouts; o++) shape[o] = mt_te_i64(a, t.ext[o]);
    mt_tbuffer *Y = mt_tbuffer_new(a, X->name, X->dtype, map->nouts, shape);
    Y->scope = X->scope;
    relayout r = {X, Y, map};
    mt_tmutator mu = {a, relayout_expr, relayout_stmt, &r};
    mt_blk_set_func_body(s, mt_tmutate_stmt(&mu, f->body));
    mt_tfunc *g = s->func;
    g->allocs = MT_NEW_ARRAY(a, mt_tbuffer *, f->nallocs);
    for (int i = 0; i < f->nallocs; i++) g->allocs[i] = f->allocs[i] == X ? Y : f->allocs[i];
    return true;
}

const char *mt_index_map_text(mt_arena *a, const mt_index_map *m) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    mt_sb_puts(&sb, m->nparams ? "lambda " : "lambda");
    for (int i = 0; i < m->nparams; i++) mt_sb_printf(&sb, "%s%s", i ? ", " : "", m->params[i]->name);
    mt_sb_puts(&sb, m->nouts == 1 ? ": " : ": (");
    for (int o = 0; o < m->nouts; o++) mt_sb_printf(&sb, "%s%s", o ? ", " : "", mt_texpr_print(a, m->outs[o]));
    if (m->nouts != 1) mt_sb_putc(&sb, ')');
    return mt_sb_str(&sb);
}
