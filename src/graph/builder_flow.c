/*
 * builder_flow.c -- if, for, assert and with in graph functions.
 *
 * Conditions and trip counts known at compile time are decided here: an `if`
 * on a constant builds only the branch taken, a `for` over a constant range of
 * at most unroll_threshold iterations is unrolled (its variable a constant in
 * each copy), an `assert` on a constant is checked now. Only what depends on
 * run-time values (scalar parameters, symbolic dims, computed scalars)
 * becomes control flow in the graph (graph.h: IF, LOOP and ASSERT blocks),
 * which the executor runs.
 *
 * Names across control flow, in SSA form:
 *  - after an if/else, a name bound (or rebound) in a branch gets a merged
 *    value (a phi): each branch ends by copying its value into it; both
 *    values must have the same type. A name bound in only one branch and not
 *    before is "not bound on every path": using it later is an error.
 *  - a loop-carried name (bound before the loop and rebound in its body) is a
 *    fresh value inside the body, set from the value before the loop and,
 *    at the end of each iteration, from the body's new value (same type).
 *    A name first bound inside a loop is not bound on every path after it
 *    (the loop may run zero times).
 */
#include <string.h>

#include "graph/builder_internal.h"
#include "support/common.h"

enum { MAX_NAMES = 256 };

/* Starts a new BINDINGS block on the next emit, in `body`. */
static void enter_body(builder *b, mt_gbody *body) {
    b->body = body;
    b->block = NULL;
}

/* A run-time if, loop or assert: executor instructions and, in unrolled
 * code, copies of them, so each counts as an operation. */
static void add_block(builder *b, mt_gblock *blk) {
    if (++b->nbindings > MT_MAX_BINDINGS)
        mt_fail(MT_ERR_LIMIT, blk->loc, "kernel too large: more than %d operations after unrolling",
                MT_MAX_BINDINGS);
    mt_gbody_add(b->arena, b->body, blk);
    b->block = NULL;
}

/* The names bound in syms[from..) with their last value in that range. */
typedef struct binds {
    const char *names[MAX_NAMES];
    mt_gvar *vals[MAX_NAMES];
    mt_loc where[MAX_NAMES];
    int n;
} binds;

static void collect(const builder *b, int from, binds *out, mt_loc loc) {
    out->n = 0;
    for (int i = from; i < b->syms.len; i++) {
        const mt_symbol *s = &b->syms.data[i];
        int k = 0;
        while (k < out->n && strcmp(out->names[k], s->name) != 0) k++;
        if (k == out->n) {
            if (out->n == MAX_NAMES)
                mt_fail(MT_ERR_LIMIT, loc, "too many names bound in one branch (more than %d)", MAX_NAMES);
            out->names[out->n++] = s->name;
        }
        out->vals[k] = s->value;
        out->where[k] = s->where;
    }
}

static int find(const binds *bs, const char *name) {
    for (int k = 0; k < bs->n; k++)
        if (strcmp(bs->names[k], name) == 0) return k;
    return -1;
}

/* The value of name just before syms[limit), or NULL. */
static mt_gvar *value_before(const builder *b, int limit, const char *name, bool *partial) {
    int i = mt_b_lookup(b, name, limit);
    *partial = i >= 0 && b->syms.data[i].value == NULL;
    return i >= 0 ? b->syms.data[i].value : NULL;
}

static void check_same_type(builder *b, const char *name, const mt_gvar *x, const mt_gvar *y,
                            const char *xs, const char *ys, mt_loc loc) {
    if (mt_gtype_equal(&x->type, &y->type)) return;
    mt_fail(MT_ERR_TYPE, loc, "'%s' is %s %s %s but %s %s %s", name, mt_dtype_str(x->type.dtype),
            mt_shape_str(b->arena, &x->type), xs, mt_dtype_str(y->type.dtype),
            mt_shape_str(b->arena, &y->type), ys);
}

/* A weak constant given a definite dtype (a branch value or loop init). */
static mt_gvar *settled(builder *b, mt_gvar *v, mt_dtype dt) {
    if (!v->is_const) return v;
    if (mt_dtype_is_float(dt)) return mt_gvar_const_float(b->arena, dt, mt_dtype_is_float(v->type.dtype) ? v->fconst : (double)v->iconst, false, v->loc);
    return mt_gvar_const_int(b->arena, dt, mt_dtype_is_float(v->type.dtype) ? mt_f64_to_i64(v->fconst) : v->iconst, false, v->loc);
}

/* ---- if -------------------------------------------------------------------- */

void mt_b_if(builder *b, const mt_ast *s) {
    mt_gvar *cond = mt_b_cond(b, s->cond, "if");
    if (cond->is_const) { /* decided now: build the branch taken, in this scope */
        b->flow_depth++;
        mt_b_stmts(b, cond->iconst ? &s->body : &s->orelse);
        b->flow_depth--;
        return;
    }
    mt_gblock *blk = mt_gblock_new(b->arena, MT_GBLOCK_IF, s->loc);
    blk->cond = cond;
    add_block(b, blk);
    mt_gbody *outer = b->body;
    int base = b->syms.len;
    binds tb, eb;

    b->flow_depth++;
    enter_body(b, &blk->then_body);
    mt_b_stmts(b, &s->body);
    collect(b, base, &tb, s->loc);
    mt_b_syms_truncate(b, base);
    enter_body(b, &blk->else_body);
    mt_b_stmts(b, &s->orelse);
    collect(b, base, &eb, s->loc);
    mt_b_syms_truncate(b, base);
    b->flow_depth--;
    enter_body(b, outer);

    /* merge: every name bound in either branch */
    const char *names[2 * MAX_NAMES];
    int nn = 0;
    for (int k = 0; k < tb.n; k++) names[nn++] = tb.names[k];
    for (int k = 0; k < eb.n; k++)
        if (find(&tb, eb.names[k]) < 0) names[nn++] = eb.names[k];
    blk->merged = MT_NEW_ARRAY(b->arena, mt_gvar *, nn > 0 ? nn : 1);
    blk->then_vals = MT_NEW_ARRAY(b->arena, mt_gvar *, nn > 0 ? nn : 1);
    blk->else_vals = MT_NEW_ARRAY(b->arena, mt_gvar *, nn > 0 ? nn : 1);
    for (int i = 0; i < nn; i++) {
        const char *name = names[i];
        int ti = find(&tb, name), ei = find(&eb, name);
        bool partial;
        mt_gvar *before = value_before(b, base, name, &partial);
        mt_gvar *tv = ti >= 0 ? tb.vals[ti] : before, *ev = ei >= 0 ? eb.vals[ei] : before;
        if (!tv || !ev) { /* bound on one path only */
            mt_loc where = ti >= 0 ? tb.where[ti] : eb.where[ei];
            mt_b_bind_partial(b, name, where);
            continue;
        }
        if (tv == ev) { /* the same value either way */
            mt_b_bind(b, name, tv);
            continue;
        }
        mt_dtype dt = !tv->is_const || !tv->weak ? tv->type.dtype : ev->type.dtype;
        tv = settled(b, tv, dt);
        ev = settled(b, ev, dt);
        check_same_type(b, name, tv, ev, "after the if-branch", "after the else-branch", s->loc);
        mt_gvar *m = mt_gvar_new(b->arena, mt_b_fresh_name(b, name), &tv->type, s->loc);
        blk->merged[blk->nmerged] = m;
        blk->then_vals[blk->nmerged] = tv;
        blk->else_vals[blk->nmerged] = ev;
        blk->nmerged++;
        mt_b_bind(b, name, m);
    }
}

/* ---- for ------------------------------------------------------------------- */

/* Names assigned anywhere in stmts (targets of =, op=, for). */
static void assigned_names(const mt_ast_list *stmts, const char **out, int *n, mt_loc loc);

static void add_name(const char *name, const char **out, int *n, mt_loc loc) {
    for (int i = 0; i < *n; i++)
        if (strcmp(out[i], name) == 0) return;
    if (*n == MAX_NAMES)
        mt_fail(MT_ERR_LIMIT, loc, "too many names assigned in one loop (more than %d)", MAX_NAMES);
    out[(*n)++] = name;
}

static void target_names(const mt_ast *t, const char **out, int *n, mt_loc loc) {
    if (t->kind == AST_NAME) add_name(t->name, out, n, loc);
    if (t->kind == AST_TUPLE || t->kind == AST_LIST)
        for (int i = 0; i < t->items.len; i++) target_names(t->items.data[i], out, n, loc);
}

static void assigned_names(const mt_ast_list *stmts, const char **out, int *n, mt_loc loc) {
    for (int i = 0; i < stmts->len; i++) {
        const mt_ast *s = stmts->data[i];
        switch (s->kind) {
        case AST_ASSIGN:
            for (int t = 0; t < s->items.len; t++) target_names(s->items.data[t], out, n, loc);
            break;
        case AST_AUGASSIGN: target_names(s->lhs, out, n, loc); break;
        case AST_FOR:
            target_names(s->lhs, out, n, loc);
            assigned_names(&s->body, out, n, loc);
            break;
        case AST_IF:
            assigned_names(&s->body, out, n, loc);
            assigned_names(&s->orelse, out, n, loc);
            break;
        case AST_WITH: assigned_names(&s->body, out, n, loc); break;
        default: break;
        }
    }
}

/* A range() bound: a constant int, or a rank-0 integer value. */
static mt_gvar *range_arg(builder *b, const mt_ast *e) {
    mt_gvar *v = mt_b_expr(b, e);
    if (v->type.ndim != 0 || !mt_dtype_is_int(v->type.dtype))
        mt_fail(MT_ERR_TYPE, e->loc, "range() takes integers, got %s %s", mt_dtype_str(v->type.dtype),
                mt_shape_str(b->arena, &v->type));
    return v;
}

static mt_gvar *int64_value(builder *b, mt_gvar *v, mt_loc loc) {
    if (v->is_const) return mt_gvar_const_int(b->arena, MT_INT64, v->iconst, false, loc);
    if (v->type.dtype == MT_INT64) return v;
    mt_gattrs *at = MT_NEW(b->arena, mt_gattrs);
    at->has_dtype = true;
    at->dtype = MT_INT64;
    return mt_b_emit(b, mt_b_op("astype"), &v, 1, at, loc, NULL);
}

/* Keeps one entry per name in syms[base..): at the place where the name first
 * appears there, with its latest value. Lookups (from the end), collect()
 * and value_before() see the same names, values and order as before, but an
 * unrolled loop no longer grows the table by its body's bindings on every
 * trip (which made every lookup of an outer name linear in the trips). */
static void compact_syms(builder *b, int base) {
    int end = b->syms.len;
    if (end <= base) return;
    mt_b_syms_truncate(b, base);
    /* in place: entry i is read before anything is written at i or above
     * (the table only shrinks), and runs once per unrolled trip, so it must
     * not allocate */
    for (int i = base; i < end; i++) {
        mt_symbol s = b->syms.data[i];
        int k = mt_b_lookup(b, s.name, b->syms.len);
        if (k >= base) { /* already here: the latest value, at the first place */
            b->syms.data[k].value = s.value;
            b->syms.data[k].where = s.where;
        } else {
            mt_b_bind_at(b, s.name, s.value, s.where);
        }
    }
}

/* The body `trips` times, the variable start, start + step, ... (every one of
 * them between start and stop, so none overflows). */
static void unrolled(builder *b, const mt_ast *s, int64_t start, int64_t step, int64_t trips) {
    b->flow_depth++;
    int base = b->syms.len;
    for (int64_t k = 0; k < trips; k++) {
        int64_t i = (int64_t)((uint64_t)start + (uint64_t)k * (uint64_t)step);
        mt_b_bind(b, s->lhs->name, mt_gvar_const_int(b->arena, MT_INT64, i, true, s->lhs->loc));
        mt_b_stmts(b, &s->body);
        compact_syms(b, base);
    }
    b->flow_depth--;
}

void mt_b_for(builder *b, const mt_ast *s) {
    const mt_ast *it = s->rhs;
    if (s->lhs->kind != AST_NAME)
        mt_fail(MT_ERR_UNSUPPORTED, s->lhs->loc, "the loop variable must be a single name");
    if (it->kind != AST_CALL || it->lhs->kind != AST_NAME || strcmp(it->lhs->name, "range") != 0)
        mt_fail(MT_ERR_UNSUPPORTED, it->loc, "only 'for i in range(...)' loops are supported");
    if (it->kw.len) mt_fail(MT_ERR_TYPE, it->kw.data[0]->loc, "range() takes no keyword arguments");
    if (it->items.len < 1 || it->items.len > 3)
        mt_fail(MT_ERR_TYPE, it->loc, "range() takes 1 to 3 arguments, got %d", it->items.len);
    if (s->orelse.len) mt_fail(MT_ERR_UNSUPPORTED, s->orelse.data[0]->loc, "'for ... else' is not supported");

    mt_gvar *a[3];
    for (int i = 0; i < it->items.len; i++) a[i] = range_arg(b, it->items.data[i]);
    mt_gvar *start = it->items.len > 1 ? a[0] : mt_gvar_const_int(b->arena, MT_INT64, 0, true, it->loc);
    mt_gvar *stop = it->items.len > 1 ? a[1] : a[0];
    mt_gvar *step = it->items.len > 2 ? a[2] : mt_gvar_const_int(b->arena, MT_INT64, 1, true, it->loc);
    if (step->is_const && step->iconst == 0)
        mt_fail(MT_ERR_TYPE, it->items.data[2]->loc, "range() step must not be zero");

    int threshold = b->opts && b->opts->unroll_threshold >= 0 ? b->opts->unroll_threshold : 16;
    if (start->is_const && stop->is_const && step->is_const) {
        int64_t lo = start->iconst, hi = stop->iconst, st = step->iconst;
        /* in uint64_t: range(-2**63, 2**63 - 1) must not overflow */
        uint64_t span = st > 0 ? (hi > lo ? (uint64_t)hi - (uint64_t)lo : 0)
                               : (lo > hi ? (uint64_t)lo - (uint64_t)hi : 0);
        uint64_t ustep = st > 0 ? (uint64_t)st : 0 - (uint64_t)st;
        uint64_t trips = span ? (span - 1) / ustep + 1 : 0;
        if (trips <= (uint64_t)threshold) {
            unrolled(b, s, lo, st, (int64_t)trips);
            return;
        }
    }

    /* a loop in the executor */
    mt_gblock *blk = mt_gblock_new(b->arena, MT_GBLOCK_LOOP, s->loc);
    blk->start = int64_value(b, start, it->loc);
    blk->stop = int64_value(b, stop, it->loc);
    blk->step = int64_value(b, step, it->loc);
    mt_gtype i64 = mt_gtype_scalar(MT_INT64);
    blk->ivar = mt_gvar_new(b->arena, mt_b_fresh_name(b, s->lhs->name), &i64, s->lhs->loc);
    blk->ivar->weak = true; /* i in `x * i` takes x's dtype */
    add_block(b, blk);

    const char *names[MAX_NAMES], *cnames[MAX_NAMES];
    int nn = 0;
    assigned_names(&s->body, names, &nn, s->loc);
    blk->carried = MT_NEW_ARRAY(b->arena, mt_gvar *, nn > 0 ? nn : 1);
    blk->carried_init = MT_NEW_ARRAY(b->arena, mt_gvar *, nn > 0 ? nn : 1);
    blk->carried_next = MT_NEW_ARRAY(b->arena, mt_gvar *, nn > 0 ? nn : 1);
    int base = b->syms.len;
    for (int k = 0; k < nn; k++) {
        bool partial;
        mt_gvar *before = value_before(b, base, names[k], &partial);
        if (!before || strcmp(names[k], s->lhs->name) == 0) continue;
        if (before->is_const) /* a literal before the loop: int32 or float32 from now on */
            before = settled(b, before, before->type.dtype);
        mt_gvar *c = mt_gvar_new(b->arena, mt_b_fresh_name(b, names[k]), &before->type, s->loc);
        cnames[blk->ncarried] = names[k];
        blk->carried[blk->ncarried] = c;
        blk->carried_init[blk->ncarried] = before;
        blk->ncarried++;
    }
    for (int k = 0; k < blk->ncarried; k++) mt_b_bind(b, cnames[k], blk->carried[k]);
    mt_b_bind(b, s->lhs->name, blk->ivar);

    mt_gbody *outer = b->body;
    b->flow_depth++;
    enter_body(b, &blk->body);
    mt_b_stmts(b, &s->body);
    b->flow_depth--;
    binds after;
    collect(b, base, &after, s->loc);
    mt_b_syms_truncate(b, base);
    enter_body(b, outer);

    for (int k = 0; k < blk->ncarried; k++) {
        mt_gvar *next = after.vals[find(&after, cnames[k])];
        if (!next)
            mt_fail(MT_ERR_NAME, s->loc, "'%s' is not bound on every path through the loop body", cnames[k]);
        next = settled(b, next, blk->carried[k]->type.dtype);
        check_same_type(b, cnames[k], blk->carried[k], next, "before the loop", "at the end of its body", s->loc);
        blk->carried_next[k] = next;
        mt_b_bind(b, cnames[k], blk->carried[k]); /* after the loop: its last value */
    }
    /* names first bound in the body: the loop may run zero times */
    for (int j = 0; j < after.n; j++) {
        bool carried = false;
        for (int k = 0; k < blk->ncarried; k++) carried |= strcmp(cnames[k], after.names[j]) == 0;
        if (!carried) mt_b_bind_partial(b, after.names[j], after.where[j]);
    }
}

/* ---- assert and with --------------------------------------------------------- */

void mt_b_assert(builder *b, const mt_ast *s) {
    const char *msg = NULL;
    if (s->rhs) {
        if (s->rhs->kind != AST_STR) mt_fail(MT_ERR_TYPE, s->rhs->loc, "the message of 'assert' must be a string");
        msg = s->rhs->str;
    }
    mt_gvar *cond = mt_b_cond(b, s->cond, "assert");
    if (cond->is_const) {
        if (!cond->iconst)
            mt_fail(MT_ERR_SHAPE, s->loc, "assertion is always false%s%s", msg ? ": " : "", msg ? msg : "");
        return;
    }
    mt_gblock *blk = mt_gblock_new(b->arena, MT_GBLOCK_ASSERT, s->loc);
    blk->cond = cond;
    blk->message = msg;
    add_block(b, blk);
}

/* N of "cuda:N": decimal digits only, no sign, space or leading zero, at
 * most 9 of them (no overflow). */
static bool cuda_index(const char *dev, int *n) {
    if (strncmp(dev, "cuda:", 5) != 0) return false;
    const char *p = dev + 5;
    size_t len = strlen(p);
    if (len == 0 || len > 9 || (p[0] == '0' && len > 1)) return false;
    int v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        v = v * 10 + (*p - '0');
    }
    *n = v;
    return true;
}

/* The device a `device("...")` string names: "cpu", "gpu", "cuda" or
 * "cuda:N"; {0, 0} when it is the default device. */
static mt_device device_named(builder *b, const mt_ast *str) {
    const char *dev = str->str;
    mt_device d = {MT_DEVICE_CPU, 0}, none = {0, 0};
    int n = 0;
    if (strcmp(dev, "cpu") == 0) {
    } else if (strcmp(dev, "gpu") == 0 || strcmp(dev, "cuda") == 0 || cuda_index(dev, &n)) {
        mt_device gpu = b->opts ? b->opts->gpu_device : none;
        if (!gpu.type)
            mt_fail(MT_ERR_UNSUPPORTED, str->loc,
                    "device(\"%s\") needs a GPU in the compilation: the target is cpu, and the CUDA "
                    "backend is not available yet", dev);
        d = (mt_device){gpu.type, n};
    } else {
        mt_fail(MT_ERR_TYPE, str->loc,
                "unknown device \"%s\" (expected \"cpu\", \"gpu\", \"cuda\" or \"cuda:N\")", dev);
    }
    mt_device def = b->opts ? b->opts->default_device : none;
    return mt_device_equal(d, def) ? none : d;
}

/* with device("gpu"): body -- the ops of the body run there (the innermost
 * with wins); realize_devices inserts the copies. */
void mt_b_with(builder *b, const mt_ast *s) {
    mt_device outer = b->device;
    for (int i = 0; i < s->items.len; i++) {
        const mt_ast *item = s->items.data[i], *e = item->lhs;
        bool is_device = e->kind == AST_CALL && e->lhs->kind == AST_NAME && strcmp(e->lhs->name, "device") == 0;
        if (!is_device)
            mt_fail(MT_ERR_UNSUPPORTED, e->loc, "only 'with device(...)' is supported in graph functions");
        if (item->rhs) mt_fail(MT_ERR_UNSUPPORTED, item->rhs->loc, "'with device(...) as' is not supported");
        if (e->items.len != 1 || e->kw.len || e->items.data[0]->kind != AST_STR)
            mt_fail(MT_ERR_TYPE, e->loc, "device() takes one string: \"cpu\", \"gpu\", \"cuda\" or \"cuda:N\"");
        b->device = device_named(b, e->items.data[0]);
    }
    mt_b_stmts(b, &s->body);
    b->device = outer;
}
