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
 * The map must be one-to-one, or two elements would share a place. The
 * parameters fall into groups, two in one group when an output uses both
 * (each alone in the common case: (j // 16, k, j % 16) has groups {k} and
 * {j}); the map is one-to-one when, for each group, its outputs take
 * distinct values over the product of its dims. That is checked by
 * enumerating them (at most 2^22 points per group), which is exact for
 * any form the outputs take (no algebra on // and %). The same pass gives
 * the new buffer's extents: one past the largest value of each output.
 */
#include "schedule/block_util.h"
#include "schedule/trace.h"

#include <string.h>

#include "support/common.h"
#include "support/strbuf.h"

#define TL_P "transform_layout"

enum {
    MAX_POINTS = (1 << 22) / MT_FUZZ_LIMIT_SCALE,
    MAX_BOX_BITS = (1 << 24) / MT_FUZZ_LIMIT_SCALE,
    MAX_OUTS = 8,
    MAX_GROWTH = 64
};

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

/* e (form_ok) with the parameters at xs[]; false on overflow. */
static bool value_at(const mt_texpr *e, const mt_index_map *m, const int64_t *xs, int64_t *out) {
    int64_t a, b;
    switch (e->kind) {
    case TE_INT: *out = e->ival; return true;
    case TE_VAR: *out = xs[param_of(m, e->var)]; return true;
    case TE_NEG:
        if (!value_at(e->a, m, xs, &a) || a == INT64_MIN) return false;
        *out = -a;
        return true;
    default: break;
    }
    if (!value_at(e->a, m, xs, &a) || !value_at(e->b, m, xs, &b)) return false;
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
    int64_t dim[MAX_OUTS];   /* X's dims */
    int group[MAX_OUTS];     /* each parameter's group (a parameter of it) */
    int owner[MAX_OUTS];     /* each output's group */
    int64_t ext[MAX_OUTS];   /* the new buffer's extents */
} tl;

static const char *out_text(const tl *t, int o) { return mt_texpr_print(t->s->arena, t->m->outs[o]); }

static int root(tl *t, int p) { return t->group[p] == p ? p : (t->group[p] = root(t, t->group[p])); }

/* Group g's parameters at point x (0 .. the product of their dims) into xs. */
static void point(const tl *t, int g, int64_t x, int64_t *xs) {
    for (int p = t->m->nparams - 1; p >= 0; p--)
        if (t->group[p] == g) xs[p] = x % t->dim[p], x /= t->dim[p];
}

/* "j" or "i, j": group g's parameters. */
static const char *group_names(const tl *t, int g) {
    const char *names = "";
    for (int p = 0, n = 0; p < t->m->nparams; p++)
        if (t->group[p] == g)
            names = mt_arena_printf(t->s->arena, "%s%s%s", names, n++ ? ", " : "", t->m->params[p]->name);
    return names;
}

/* "j = 3" or "(i, j) = (0, 3)": group g's parameters at xs. */
static const char *point_text(const tl *t, int g, const int64_t *xs) {
    const char *names = "", *vals = "";
    int n = 0;
    for (int p = 0; p < t->m->nparams; p++) {
        if (t->group[p] != g) continue;
        names = mt_arena_printf(t->s->arena, "%s%s%s", names, n ? ", " : "", t->m->params[p]->name);
        vals = mt_arena_printf(t->s->arena, "%s%s%lld", vals, n ? ", " : "", (long long)xs[p]);
        n++;
    }
    return n == 1 ? mt_arena_printf(t->s->arena, "%s = %s", names, vals)
                  : mt_arena_printf(t->s->arena, "(%s) = (%s)", names, vals);
}

/* Group g's outputs at xs into v[]. */
static bool values(tl *t, int g, const int64_t *xs, int64_t *v) {
    for (int o = 0; o < t->m->nouts; o++) {
        if (t->owner[o] != g) continue;
        if (!value_at(t->m->outs[o], t->m, xs, &v[o]))
            return mt_sched_refuse(t->s, "%s: output %d of the index map (%s) overflows at %s", TL_P, o,
                                   out_text(t, o), point_text(t, g, xs));
        if (v[o] < 0)
            return mt_sched_refuse(t->s, "%s: output %d of the index map (%s) is %lld at %s; a place in a buffer is "
                                         "never negative", TL_P, o, out_text(t, o), (long long)v[o],
                                   point_text(t, g, xs));
    }
    return true;
}

/* The place of v in the box of group g's outputs (row-major over them). */
static int64_t box_key(const tl *t, int g, const int64_t *v) {
    int64_t k = 0;
    for (int o = 0; o < t->m->nouts; o++)
        if (t->owner[o] == g) k = k * t->ext[o] + v[o];
    return k;
}

/* Over the n points of group g: the outputs' extents, then no two points
 * in one place. */
static bool check_group(tl *t, int g, int64_t n) {
    int64_t xs[MAX_OUTS] = {0}, v[MAX_OUTS], box = 1;
    for (int64_t x = 0; x < n; x++) {
        point(t, g, x, xs);
        if (!values(t, g, xs, v)) return false;
        for (int o = 0; o < t->m->nouts; o++)
            if (t->owner[o] == g && v[o] + 1 > t->ext[o]) t->ext[o] = v[o] + 1;
    }
    for (int o = 0; o < t->m->nouts; o++)
        if (t->owner[o] == g && (__builtin_mul_overflow(box, t->ext[o], &box) || box > MAX_BOX_BITS))
            return mt_sched_refuse(t->s, "%s: the outputs of the index map that use %s span more than %d places; "
                                         "the map cannot be checked", TL_P, group_names(t, g), MAX_BOX_BITS);
    uint8_t *seen = MT_NEW_ARRAY(t->s->arena, uint8_t, (size_t)(box / 8 + 1));
    memset(seen, 0, (size_t)(box / 8 + 1));
    for (int64_t x = 0; x < n; x++) {
        point(t, g, x, xs);
        values(t, g, xs, v);
        int64_t k = box_key(t, g, v);
        if (seen[k / 8] & (1u << (k % 8))) {
            int64_t y = 0, ys[MAX_OUTS] = {0}, w[MAX_OUTS];
            for (;; y++) {
                point(t, g, y, ys);
                values(t, g, ys, w);
                if (box_key(t, g, w) == k) break;
            }
            return mt_sched_refuse(t->s, "%s: the index map sends %s and %s to the same place; it must be "
                                         "one-to-one", TL_P, point_text(t, g, ys), point_text(t, g, xs));
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

/* Uses of the parameters: used[p] for each, and the groups (union-find
 * over the outputs that use several). */
static bool group_params(tl *t, bool *used) {
    const mt_index_map *m = t->m;
    for (int p = 0; p < m->nparams; p++) t->group[p] = p, used[p] = false;
    for (int o = 0; o < m->nouts; o++) {
        if (!form_ok(m->outs[o], m))
            return mt_sched_refuse(t->s, "%s: output %d of the index map (%s) is not built from its parameters, "
                                         "integers, +, -, * and // or %% by a positive integer", TL_P, o,
                                   out_text(t, o));
        int first = -1;
        for (int p = 0; p < m->nparams; p++) {
            if (!mt_texpr_uses_var(m->outs[o], m->params[p])) continue;
            used[p] = true;
            if (first < 0) first = p;
            else t->group[root(t, p)] = root(t, first);
        }
        if (first < 0)
            return mt_sched_refuse(t->s, "%s: output %d of the index map (%s) uses none of its parameters", TL_P, o,
                                   out_text(t, o));
        t->owner[o] = first;
        t->ext[o] = 1;
    }
    for (int p = 0; p < m->nparams; p++) t->group[p] = root(t, p);
    for (int o = 0; o < m->nouts; o++) t->owner[o] = t->group[t->owner[o]];
    return true;
}

static bool check_map(tl *t) {
    const mt_index_map *m = t->m;
    const mt_tbuffer *X = t->X;
    bool used[MAX_OUTS];
    if (m->nparams != X->ndim)
        return mt_sched_refuse(t->s, "%s: the index map takes %d parameter%s; '%s' has %d dim%s", TL_P, m->nparams,
                               m->nparams == 1 ? "" : "s", X->name, X->ndim, X->ndim == 1 ? "" : "s");
    if (m->nouts < 1 || m->nouts > MAX_OUTS || m->nparams > MAX_OUTS)
        return mt_sched_refuse(t->s, "%s: the index map takes %d and gives %d indices; a layout has 1 to %d dims",
                               TL_P, m->nparams, m->nouts, MAX_OUTS);
    for (int p = 0; p < m->nparams; p++)
        if (!mt_te_is_const_int(X->shape[p], &t->dim[p]))
            return mt_sched_refuse(t->s, "%s: dim %d of '%s' is not a constant", TL_P, p, X->name);
    if (!group_params(t, used)) return false;
    for (int p = 0; p < m->nparams; p++)
        if (!used[p] && t->dim[p] > 1)
            return mt_sched_refuse(t->s, "%s: no output of the index map uses %s: the %lld elements along dim %d "
                                         "of '%s' would share one place", TL_P, m->params[p]->name,
                                   (long long)t->dim[p], p, X->name);
    for (int g = 0; g < m->nparams; g++) {
        int64_t n = 1;
        bool has = false;
        for (int o = 0; o < m->nouts; o++) has |= t->owner[o] == g;
        if (t->group[g] != g || !has) continue;
        for (int p = 0; p < m->nparams; p++)
            if (t->group[p] == g && (__builtin_mul_overflow(n, t->dim[p], &n) || n > MAX_POINTS))
                return mt_sched_refuse(t->s, "%s: the index map is checked point by point, and its outputs that "
                                             "use %s range over more than %d points", TL_P, group_names(t, g),
                                       MAX_POINTS);
        if (!check_group(t, g, n)) return false;
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
        return mt_sched_refuse(s, "%s: '%s' is allocated inside the function's loops or blocks; transform_layout takes a buffer the "
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
