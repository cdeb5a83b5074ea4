/*
 * graph.c -- constructors and type helpers of the graph IR (see graph.h).
 */
#include "graph/graph.h"

#include <string.h>

#include "support/common.h"
#include "support/strbuf.h"

mt_gmodule *mt_gmodule_new(mt_arena *a) { return MT_NEW(a, mt_gmodule); }

/* Appends grow the arrays geometrically: an array of n entries made by GROW
 * has room for the next power of two >= n, and is reallocated (to twice that)
 * only when n is a power of two, so that building n bindings costs O(n) and
 * not O(n^2) copies. Code that shrinks these arrays in place keeps that true;
 * an array replaced by one of exactly n entries must not be grown again. */
#define GROW(a, arr, n, T)                                              \
    do {                                                                \
        if ((n) == 0 || ((n) & ((n) - 1)) == 0) {                       \
            T *grown_ = MT_NEW_ARRAY((a), T, (n) ? 2 * (size_t)(n) : 1); \
            if (n) memcpy(grown_, (arr), sizeof(T) * (size_t)(n));      \
            (arr) = grown_;                                             \
        }                                                               \
    } while (0)

void mt_gmodule_add_func(mt_arena *a, mt_gmodule *m, mt_gfunc *f) {
    GROW(a, m->funcs, m->nfuncs, mt_gfunc *);
    m->funcs[m->nfuncs++] = f;
}

/* The name set follows tfuncs; a pass that removed some (dead_code compacts
 * the array in place) leaves a different count, and the set is rebuilt. */
void mt_gmodule_add_tfunc(mt_arena *a, mt_gmodule *m, mt_tfunc *f) {
    if (m->tfunc_names_for != m->ntfuncs) {
        memset(&m->tfunc_names, 0, sizeof m->tfunc_names);
        for (int i = 0; i < m->ntfuncs; i++) mt_nameset_add(a, &m->tfunc_names, m->tfuncs[i]->name);
    }
    f->name = mt_nameset_fresh(a, &m->tfunc_names, f->name);
    GROW(a, m->tfuncs, m->ntfuncs, mt_tfunc *);
    m->tfuncs[m->ntfuncs++] = f;
    m->tfunc_names_for = m->ntfuncs;
}

mt_gfunc *mt_gfunc_new(mt_arena *a, const char *name, mt_loc loc) {
    mt_gfunc *f = MT_NEW(a, mt_gfunc);
    f->name = mt_arena_strdup(a, name);
    f->loc = loc;
    return f;
}

mt_gvar *mt_gvar_new(mt_arena *a, const char *name, const mt_gtype *type, mt_loc loc) {
    static _Thread_local int counter;
    mt_gvar *v = MT_NEW(a, mt_gvar);
    v->name = mt_arena_strdup(a, name);
    v->type = *type;
    v->loc = loc;
    v->id = ++counter;
    return v;
}

mt_gvar *mt_gvar_const_int(mt_arena *a, mt_dtype dtype, int64_t v, bool weak, mt_loc loc) {
    mt_gtype t = mt_gtype_scalar(dtype);
    mt_gvar *c = mt_gvar_new(a, "const", &t, loc);
    c->is_const = true;
    c->weak = weak;
    c->iconst = v;
    c->fconst = (double)v;
    return c;
}

mt_gvar *mt_gvar_const_float(mt_arena *a, mt_dtype dtype, double v, bool weak, mt_loc loc) {
    mt_gtype t = mt_gtype_scalar(dtype);
    mt_gvar *c = mt_gvar_new(a, "const", &t, loc);
    c->is_const = true;
    c->weak = weak;
    c->fconst = v;
    c->iconst = mt_f64_to_i64(v);
    return c;
}

mt_gblock *mt_gblock_new(mt_arena *a, mt_gblock_kind kind, mt_loc loc) {
    mt_gblock *b = MT_NEW(a, mt_gblock);
    b->kind = kind;
    b->dataflow = kind == MT_GBLOCK_BINDINGS;
    b->loc = loc;
    return b;
}

void mt_gbody_add(mt_arena *a, mt_gbody *body, mt_gblock *blk) {
    GROW(a, body->blocks, body->nblocks, mt_gblock *);
    body->blocks[body->nblocks++] = blk;
}

static void foreach_in(mt_gbody *body, void (*fn)(mt_gblock *, void *), void *ctx) {
    for (int i = 0; i < body->nblocks; i++) {
        mt_gblock *b = body->blocks[i];
        switch (b->kind) {
        case MT_GBLOCK_BINDINGS: fn(b, ctx); break;
        case MT_GBLOCK_IF:
            foreach_in(&b->then_body, fn, ctx);
            foreach_in(&b->else_body, fn, ctx);
            break;
        case MT_GBLOCK_LOOP: foreach_in(&b->body, fn, ctx); break;
        case MT_GBLOCK_ASSERT: break;
        }
    }
}

static bool in_vars(mt_gvar *const *vs, int n, const mt_gvar *v) {
    for (int i = 0; i < n; i++)
        if (vs[i] == v) return true;
    return false;
}

static bool body_uses(const mt_gbody *body, const mt_gblock *skip, const mt_gvar *v) {
    for (int i = 0; i < body->nblocks; i++) {
        const mt_gblock *b = body->blocks[i];
        switch (b->kind) {
        case MT_GBLOCK_BINDINGS:
            if (b == skip) break;
            for (int j = 0; j < b->nbindings; j++)
                if (in_vars(b->bindings[j]->args, b->bindings[j]->nargs, v)) return true;
            break;
        case MT_GBLOCK_IF:
            if (b->cond == v || in_vars(b->then_vals, b->nmerged, v) ||
                in_vars(b->else_vals, b->nmerged, v) || body_uses(&b->then_body, skip, v) ||
                body_uses(&b->else_body, skip, v))
                return true;
            break;
        case MT_GBLOCK_LOOP:
            if (b->start == v || b->stop == v || b->step == v ||
                in_vars(b->carried_init, b->ncarried, v) || in_vars(b->carried_next, b->ncarried, v) ||
                body_uses(&b->body, skip, v))
                return true;
            break;
        case MT_GBLOCK_ASSERT:
            if (b->cond == v) return true;
            break;
        }
    }
    return false;
}

bool mt_gfunc_uses(const mt_gfunc *f, const mt_gblock *skip, const mt_gvar *v) {
    return in_vars(f->outputs, f->noutputs, v) || body_uses(&f->body, skip, v);
}

/* Every place body_uses looks at, counted. */
static void count_vars(mt_arena *a, mt_ptrmap *u, mt_gvar *const *vs, int n) {
    for (int i = 0; i < n; i++)
        if (vs[i]) mt_ptrmap_add(a, u, vs[i], 1);
}

static void count_body(mt_arena *a, mt_ptrmap *u, const mt_gbody *body) {
    for (int i = 0; i < body->nblocks; i++) {
        const mt_gblock *b = body->blocks[i];
        switch (b->kind) {
        case MT_GBLOCK_BINDINGS:
            for (int j = 0; j < b->nbindings; j++)
                count_vars(a, u, b->bindings[j]->args, b->bindings[j]->nargs);
            break;
        case MT_GBLOCK_IF:
            count_vars(a, u, &b->cond, 1);
            count_vars(a, u, b->then_vals, b->nmerged);
            count_vars(a, u, b->else_vals, b->nmerged);
            count_body(a, u, &b->then_body);
            count_body(a, u, &b->else_body);
            break;
        case MT_GBLOCK_LOOP:
            count_vars(a, u, &b->start, 1);
            count_vars(a, u, &b->stop, 1);
            count_vars(a, u, &b->step, 1);
            count_vars(a, u, b->carried_init, b->ncarried);
            count_vars(a, u, b->carried_next, b->ncarried);
            count_body(a, u, &b->body);
            break;
        case MT_GBLOCK_ASSERT: count_vars(a, u, &b->cond, 1); break;
        }
    }
}

void mt_gfunc_count_uses(mt_arena *a, const mt_gfunc *f, mt_ptrmap *uses) {
    count_vars(a, uses, f->outputs, f->noutputs);
    count_body(a, uses, &f->body);
}

static bool from_bound(const mt_ptrmap *vals, const mt_gbinding *b) {
    if (b->kind == MT_CALL_EXTERN) return false;
    bool some = false;
    for (int i = 0; i < b->nargs; i++) {
        if (mt_ptrmap_get(vals, b->args[i])) some = true;
        else if (!b->args[i]->is_const) return false;
    }
    return some;
}

void mt_gfunc_bound_values(mt_arena *a, const mt_gfunc *f, mt_ptrmap *vals, mt_ptrmap *bindings) {
    memset(vals, 0, sizeof *vals);
    memset(bindings, 0, sizeof *bindings);
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i]->bound) mt_ptrmap_add(a, vals, f->params[i], 1);
    if (!vals->len) return;
    for (int k = 0; k < f->body.nblocks; k++) {
        const mt_gblock *blk = f->body.blocks[k];
        if (blk->kind != MT_GBLOCK_BINDINGS) continue;
        for (int j = 0; j < blk->nbindings; j++) {
            const mt_gbinding *b = blk->bindings[j];
            if (!from_bound(vals, b)) continue;
            mt_ptrmap_add(a, bindings, b, 1);
            for (int o = 0; o < b->nouts; o++)
                if (!mt_ptrmap_get(vals, b->outs[o])) mt_ptrmap_add(a, vals, b->outs[o], 1);
        }
    }
}

void mt_gfunc_foreach_bindings(mt_gfunc *f, void (*fn)(mt_gblock *blk, void *ctx), void *ctx) {
    foreach_in(&f->body, fn, ctx);
}

void mt_gblock_add(mt_arena *a, mt_gblock *b, mt_gbinding *bd) {
    GROW(a, b->bindings, b->nbindings, mt_gbinding *);
    b->bindings[b->nbindings++] = bd;
}

static mt_gvar **copy_vars(mt_arena *a, mt_gvar *const *vs, int n) {
    mt_gvar **r = MT_NEW_ARRAY(a, mt_gvar *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) r[i] = vs[i];
    return r;
}

/* A binding of kind: outs = call(args), ungrouped, on the default device. */
static mt_gbinding *new_binding(mt_arena *a, mt_call_kind kind, mt_gvar *const *outs, int nouts,
                                mt_gvar *const *args, int nargs, mt_loc loc) {
    mt_gbinding *b = MT_NEW(a, mt_gbinding);
    b->kind = kind;
    b->outs = copy_vars(a, outs, nouts);
    b->nouts = nouts;
    b->args = copy_vars(a, args, nargs);
    b->nargs = nargs;
    b->loc = loc;
    b->group = -1;
    return b;
}

mt_gbinding *mt_gbinding_op(mt_arena *a, mt_gvar *out, const mt_op_def *op,
                            mt_gvar *const *args, int nargs, const mt_gattrs *attrs,
                            mt_loc loc) {
    mt_gbinding *b = new_binding(a, MT_CALL_OP, &out, 1, args, nargs, loc);
    b->op = op;
    b->attrs = attrs;
    return b;
}

mt_gbinding *mt_gbinding_tir(mt_arena *a, mt_gvar *const *outs, int nouts, mt_tfunc *callee,
                             mt_gvar *const *args, int nargs, mt_loc loc) {
    mt_gbinding *b = new_binding(a, MT_CALL_TIR, outs, nouts, args, nargs, loc);
    b->callee = callee;
    return b;
}

mt_gbinding *mt_gbinding_to_device(mt_arena *a, mt_gvar *out, mt_gvar *src, mt_device dst, mt_loc loc) {
    mt_gbinding *b = new_binding(a, MT_CALL_TO_DEVICE, &out, 1, &src, 1, loc);
    b->device = dst;
    return b;
}

mt_gbinding *mt_gbinding_extern(mt_arena *a, mt_gvar *const *outs, int nouts, const mt_gextern *ext,
                                mt_gvar *const *args, int nargs, mt_loc loc) {
    mt_gbinding *b = new_binding(a, MT_CALL_EXTERN, outs, nouts, args, nargs, loc);
    b->ext = ext;
    return b;
}

mt_gtype mt_gtype_scalar(mt_dtype dtype) {
    mt_gtype t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    return t;
}

bool mt_dim_equal(mt_dim x, mt_dim y) {
    if (x.sym || y.sym) return x.sym && y.sym && strcmp(x.sym, y.sym) == 0;
    return x.value == y.value;
}

bool mt_gtype_equal(const mt_gtype *x, const mt_gtype *y) {
    if (x->dtype != y->dtype || x->ndim != y->ndim || !mt_device_equal(x->device, y->device))
        return false;
    for (int i = 0; i < x->ndim; i++)
        if (!mt_dim_equal(x->dims[i], y->dims[i])) return false;
    return true;
}

static void put_shape(mt_sb *sb, const mt_gtype *t, bool quote_syms) {
    mt_sb_putc(sb, '(');
    for (int i = 0; i < t->ndim; i++) {
        if (i) mt_sb_puts(sb, ", ");
        if (t->dims[i].sym)
            mt_sb_printf(sb, quote_syms ? "\"%s\"" : "%s", t->dims[i].sym);
        else
            mt_sb_printf(sb, "%lld", (long long)t->dims[i].value);
    }
    if (t->ndim == 1) mt_sb_putc(sb, ',');
    mt_sb_putc(sb, ')');
}

const char *mt_gtype_str(mt_arena *a, const mt_gtype *t) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    mt_sb_puts(&sb, "R.Tensor(");
    put_shape(&sb, t, true);
    mt_sb_printf(&sb, ", dtype=\"%s\"", mt_dtype_str(t->dtype));
    if (t->device.type) {
        char dev[32];
        mt_sb_printf(&sb, ", vdevice=\"%s\"", mt_device_name(t->device, dev, sizeof dev));
    }
    mt_sb_putc(&sb, ')');
    return mt_sb_str(&sb);
}

const char *mt_shape_str(mt_arena *a, const mt_gtype *t) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    put_shape(&sb, t, false);
    return mt_sb_str(&sb);
}

void mt_gtype_check_size(mt_arena *a, const mt_gtype *t, mt_loc loc) {
    /* Zero dims are skipped: an empty (0, 2**40, 2**40) still has strides
     * that are products of the other dims. */
    int64_t bytes = (int64_t)mt_dtype_size(t->dtype);
    bool ok = true;
    for (int d = 0; d < t->ndim && ok; d++)
        if (!t->dims[d].sym && t->dims[d].value > 0)
            ok = !__builtin_mul_overflow(bytes, t->dims[d].value, &bytes);
    if (!ok || bytes > MT_MAX_TENSOR_BYTES)
        mt_fail(MT_ERR_LIMIT, loc, "a tensor of shape %s and dtype %s is too large (more than 2**48 bytes)",
                mt_shape_str(a, t), mt_dtype_str(t->dtype));
}

/* ---- rewriting ---------------------------------------------------------------- */

/* Every var slot a function has (args, conditions, branch and loop values,
 * outputs) passes through map(); a binding's outs are definitions, not uses. */
typedef mt_gvar *(*var_map)(const void *ctx, mt_gvar *v);

static void map_in(mt_gvar **vs, int n, var_map map, const void *ctx) {
    for (int i = 0; i < n; i++) vs[i] = map(ctx, vs[i]);
}

static void map_one(mt_gvar **v, var_map map, const void *ctx) {
    if (*v) *v = map(ctx, *v);
}

static void map_body(mt_gbody *body, var_map map, const void *ctx) {
    for (int i = 0; i < body->nblocks; i++) {
        mt_gblock *b = body->blocks[i];
        for (int j = 0; j < b->nbindings; j++) map_in(b->bindings[j]->args, b->bindings[j]->nargs, map, ctx);
        map_one(&b->cond, map, ctx);
        map_in(b->then_vals, b->nmerged, map, ctx);
        map_in(b->else_vals, b->nmerged, map, ctx);
        map_one(&b->start, map, ctx);
        map_one(&b->stop, map, ctx);
        map_one(&b->step, map, ctx);
        map_in(b->carried_init, b->ncarried, map, ctx);
        map_in(b->carried_next, b->ncarried, map, ctx);
        map_body(&b->then_body, map, ctx);
        map_body(&b->else_body, map, ctx);
        map_body(&b->body, map, ctx);
    }
}

void mt_gsubst_add(mt_arena *a, mt_gsubst *s, const mt_gvar *old, mt_gvar *new_) {
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        mt_gvar **to = MT_NEW_ARRAY(a, mt_gvar *, cap);
        for (int i = 0; i < s->n; i++) to[i] = s->to[i];
        s->to = to, s->cap = cap;
    }
    s->to[s->n++] = new_;
    mt_ptrmap_add(a, &s->at, old, s->n - mt_ptrmap_get(&s->at, old));
}

static mt_gvar *map_subst(const void *ctx, mt_gvar *v) { return mt_gsubst_lookup(ctx, v); }

mt_gvar *mt_gsubst_lookup(const mt_gsubst *s, mt_gvar *v) {
    int i = s->n ? mt_ptrmap_get(&s->at, v) : 0;
    return i ? s->to[i - 1] : v;
}

void mt_gsubst_binding(const mt_gsubst *s, mt_gbinding *b) {
    if (s->n) map_in(b->args, b->nargs, map_subst, s);
}

void mt_gfunc_apply_subst(mt_gfunc *f, const mt_gsubst *s) {
    if (!s->n) return;
    map_body(&f->body, map_subst, s);
    map_in(f->outputs, f->noutputs, map_subst, s);
}

static bool str_eq(const char *x, const char *y) { return x == y || (x && y && strcmp(x, y) == 0); }

bool mt_gattrs_equal(const mt_gattrs *x, const mt_gattrs *y) {
    static const mt_gattrs none;
    if (!x) x = &none;
    if (!y) y = &none;
    if (x->has_axes != y->has_axes || x->naxes != y->naxes || x->keepdims != y->keepdims ||
        x->nshape != y->nshape || x->has_dtype != y->has_dtype || x->has_value != y->has_value ||
        x->nslice != y->nslice || x->mode != y->mode)
        return false;
    if (x->has_dtype && x->dtype != y->dtype) return false;
    if (x->has_value && !(x->value == y->value || (x->value != x->value && y->value != y->value))) return false;
    for (int i = 0; i < x->naxes; i++)
        if (x->axes[i] != y->axes[i]) return false;
    for (int i = 0; i < x->nshape; i++)
        if (x->shape[i].value != y->shape[i].value || !str_eq(x->shape[i].sym, y->shape[i].sym)) return false;
    for (int i = 0; i < x->nslice; i++)
        if (x->begin[i] != y->begin[i] || x->end[i] != y->end[i] || x->step[i] != y->step[i] ||
            x->squeeze[i] != y->squeeze[i])
            return false;
    for (int i = 0; i < 2; i++)
        if (x->size[i] != y->size[i] || x->stride[i] != y->stride[i] || x->padding[i] != y->padding[i] ||
            x->dilation[i] != y->dilation[i] || x->dims[i] != y->dims[i])
            return false;
    return x->groups == y->groups && x->has_dims == y->has_dims;
}

static const char *const mode_names[] = {
#define MT_X_(k, s) s,
    MT_ATTR_MODE_LIST(MT_X_)
#undef MT_X_
};

const char *mt_attr_mode_str(mt_attr_mode m) {
    return (unsigned)m < MT_MODE_COUNT_ ? mode_names[m] : "?";
}

int mt_attr_mode_from_str(const char *word, size_t len) {
    for (int i = 0; i < MT_MODE_COUNT_; i++)
        if (strlen(mode_names[i]) == len && strncmp(mode_names[i], word, len) == 0) return i;
    return -1;
}
