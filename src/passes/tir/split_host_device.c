/*
 * split_host_device.c -- host functions launch device functions (TVM's
 * split_host_device); on the CPU, each parallel loop becomes a function of
 * its own.
 *
 * The last TIR pass. Before it, a lowered function runs its parallel loops
 * inline; after it, the functions of a program are of two sorts (tir.h):
 * host functions, which the executor calls, and device functions, which a
 * host function runs with a TS_LAUNCH statement. A backend only prints or
 * compiles what it is given: the LLVM backend no longer finds out what a
 * loop body uses, and a GPU backend will get its kernels the same way.
 *
 * The outermost parallel loop of a host function
 *
 *     for c in T.parallel(m, m + n):
 *         out[c] = a[c] * alpha
 *
 * becomes the device function
 *
 *     @T.prim_func
 *     def k_par0(begin: T.int64, end: T.int64, out: T.Buffer(...),
 *                a: T.Buffer(...), alpha: T.float32):
 *         T.func_attr({"kind": "parallel_body"})
 *         for c in range(begin, end):
 *             out[c] = a[c] * alpha
 *
 * and, in its place in the host,
 *
 *     T.launch("k_par0", out, a, alpha, grid=(n,), min=m)
 *
 * which runs k_par0 on chunks [m + b, m + e) covering [m, m + n) at once.
 * The loop in the device function is `for c in range(begin, end - begin)`:
 * min begin, extent end - begin (the printer shows `range(begin, end)`).
 * Parallel loops nested in the outlined one become serial loops (the
 * runtime would run them serially anyway); a parallel loop of constant
 * extent 0 or 1 is not worth a launch and becomes a serial loop too, its
 * body searched for parallel loops of its own.
 *
 * Captures. The arguments are what the loop body uses that is bound outside
 * it: buffers (params, and allocations of the host around the loop) with
 * the variables of their shapes (an allocation inside the body is sized by
 * them), sym vars, scalar params, and the enclosing loop and let variables.
 * A walk of the host keeps the variables and buffers bound at each point
 * (a count per object: params, sym vars and function-level allocations for
 * the whole body; loops, lets and TS_ALLOC for their bodies); a visitor of
 * the loop body then takes, in order of first use, every variable or
 * buffer that is bound there. The device function's params are the very
 * same variable and buffer objects (identity is by pointer, and nodes are
 * shared), so the loop body moves over unchanged. A captured let of a
 * vector value (after vectorize) gives a vector param (mt_tparam.lanes) and
 * a vector argument. A buffer's shape may name a sym var that is captured
 * as a scalar param: device functions have no sym vars of their own.
 *
 * Names are `<host>_par<k>`, k counting the host's launches from 0, made
 * unique among all the program's functions with a `_1`, `_2`... suffix.
 */
#include <string.h>

#include "passes/tir/tir_passes.h"
#include "support/common.h"
#include "support/nameset.h"
#include "support/ptrmap.h"

typedef struct split {
    mt_arena *a;
    mt_nameset names;             /* every function name of the program */
    MT_VEC(mt_tfunc *) device;    /* device functions made, in launch order */
    const mt_tfunc *host;         /* the function being split */
    int nlaunch;                  /* its launches so far */
    mt_ptrmap bound;              /* var or buffer -> bindings in scope here (> 0: bound) */
    mt_ptrmap lanes;              /* let var -> lanes of its value, when a vector */
} split;

/* ---- captures ---------------------------------------------------------------- */

typedef struct captures {
    split *sp;
    mt_ptrmap seen;               /* every var and buffer met in the body */
    MT_VEC(mt_targ) args;         /* the captures, in order of first use */
} captures;

static void capture_var(captures *c, const mt_texpr *e) {
    if (mt_ptrmap_get(&c->seen, e->var)) return;
    mt_ptrmap_add(c->sp->a, &c->seen, e->var, 1);
    if (mt_ptrmap_get(&c->sp->bound, e->var) <= 0) return; /* bound inside the body */
    mt_texpr *ref = mt_te_var(c->sp->a, e->var);
    int lanes = mt_ptrmap_get(&c->sp->lanes, e->var);
    if (lanes > 1) ref->lanes = lanes;
    mt_targ arg = {NULL, ref};
    MT_VEC_PUSH(c->sp->a, &c->args, arg);
}

static void capture_buf(mt_tvisitor *v, mt_tbuffer *buf) {
    captures *c = v->ctx;
    if (mt_ptrmap_get(&c->seen, buf)) return;
    mt_ptrmap_add(c->sp->a, &c->seen, buf, 1);
    if (mt_ptrmap_get(&c->sp->bound, buf) > 0) {
        mt_targ arg = {buf, NULL};
        MT_VEC_PUSH(c->sp->a, &c->args, arg);
    }
    for (int d = 0; d < buf->ndim; d++) mt_tvisit_expr(v, buf->shape[d]); /* allocation sizes */
}

static void capture_expr(mt_tvisitor *v, const mt_texpr *e) {
    if (e->kind == TE_VAR) capture_var(v->ctx, e);
    if (e->kind == TE_LOAD) capture_buf(v, e->buf);
    mt_tvisit_expr_children(v, e);
}

static void capture_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    if (s->kind == TS_STORE || s->kind == TS_ALLOC) capture_buf(v, s->buf);
    mt_tvisit_stmt_children(v, s);
}

/* ---- the device function ------------------------------------------------------ */

static mt_tstmt *serial_stmt(mt_tmutator *m, mt_tstmt *s) {
    s = mt_tmutate_stmt_children(m, s);
    if (s->kind != TS_FOR || s->for_kind != MT_FOR_PARALLEL) return s;
    mt_tstmt *c = mt_ts_copy(m->arena, s);
    c->for_kind = MT_FOR_SERIAL;
    return c;
}

/* body with every parallel loop made serial (body itself when it has none). */
static mt_tstmt *serialize(mt_arena *a, mt_tstmt *body) {
    mt_tmutator m = {a, NULL, serial_stmt, NULL};
    return mt_tmutate_stmt(&m, body);
}

/* k_par<N>(begin, end, captures...) running loop s over [begin, end). */
static mt_tfunc *device_func(split *sp, const mt_tstmt *s, const mt_targ *caps, int ncaps) {
    mt_arena *a = sp->a;
    const char *base = mt_arena_printf(a, "%s_par%d", sp->host->name, sp->nlaunch++);
    mt_tfunc *d = mt_tfunc_new(a, mt_nameset_fresh(a, &sp->names, base));
    d->target = sp->host->target; /* it runs where its host does */
    d->loc = s->loc;
    mt_tvar *begin = mt_tvar_new(a, "begin", MT_INT64), *end = mt_tvar_new(a, "end", MT_INT64);
    mt_tfunc_add_param(a, d, NULL, begin);
    mt_tfunc_add_param(a, d, NULL, end);
    for (int i = 0; i < ncaps; i++) {
        mt_tfunc_add_param(a, d, caps[i].buf, caps[i].buf ? NULL : caps[i].value->var);
        if (caps[i].value) d->params[d->nparams - 1].lanes = caps[i].value->lanes;
    }
    mt_texpr *b = mt_te_var(a, begin);
    d->body = mt_ts_for(a, s->var, b, mt_te_bin(a, TE_SUB, mt_te_var(a, end), b), MT_FOR_SERIAL,
                        serialize(a, s->body));
    mt_tfunc_set_attr(a, d, MT_ATTR_KIND, MT_KIND_PARALLEL_BODY);
    return d;
}

/* The launch that replaces parallel loop s (its device function made). */
static mt_tstmt *outline(split *sp, const mt_tstmt *s) {
    captures c;
    memset(&c, 0, sizeof c);
    c.sp = sp;
    mt_tvisitor v = {capture_expr, capture_stmt, &c};
    mt_tvisit_stmt(&v, s->body);
    mt_tfunc *d = device_func(sp, s, c.args.data, c.args.len);
    MT_VEC_PUSH(sp->a, &sp->device, d);
    mt_tstmt *l = mt_ts_launch(sp->a, d, c.args.data, c.args.len);
    l->launch->grid[0] = s->extent;
    l->launch->min = s->min;
    return l;
}

/* ---- GPU kernels ------------------------------------------------------------------ */

/* Is s a loop bound to a GPU index whose tag starts with prefix? */
static bool bound_to(const mt_tstmt *s, const char *prefix) {
    return s->kind == TS_FOR && s->for_kind == MT_FOR_THREAD && s->thread_tag &&
           strncmp(s->thread_tag, prefix, strlen(prefix)) == 0;
}

typedef struct block_dims {
    mt_texpr *dim[3]; /* the extent of the threadIdx.x, .y, .z loops */
} block_dims;

static void dims_stmt(mt_tvisitor *v, const mt_tstmt *s) {
    block_dims *b = v->ctx;
    if (bound_to(s, "threadIdx.")) {
        int d = s->thread_tag[10] - 'x';
        int64_t now, e;
        /* the widest of the phases bound to the same tag (a copy into shared
         * memory over 8 threads, the compute over 48): the narrower ones are
         * guarded (codegen's thread_guard) */
        if (d >= 0 && d < 3 &&
            (!b->dim[d] || (mt_te_is_const_int(b->dim[d], &now) && mt_te_is_const_int(s->extent, &e) && e > now)))
            b->dim[d] = s->extent;
    }
    mt_tvisit_stmt_children(v, s);
}


/* The launch that replaces blockIdx loop s: kernel <host>_kernel<k>(captures)
 * whose body is s itself (tir.h, "GPU kernels"). */
static mt_tstmt *outline_kernel(split *sp, const mt_tstmt *s) {
    mt_arena *a = sp->a;
    captures c;
    memset(&c, 0, sizeof c);
    c.sp = sp;
    mt_tvisitor v = {capture_expr, capture_stmt, &c};
    mt_tvisit_stmt(&v, s);
    const char *base = mt_arena_printf(a, "%s_kernel%d", sp->host->name, sp->nlaunch++);
    mt_tfunc *d = mt_tfunc_new(a, mt_nameset_fresh(a, &sp->names, base));
    d->target = sp->host->target;
    d->loc = s->loc;
    for (int i = 0; i < c.args.len; i++)
        mt_tfunc_add_param(a, d, c.args.data[i].buf, c.args.data[i].buf ? NULL : c.args.data[i].value->var);
    d->body = (mt_tstmt *)s;
    mt_tfunc_set_attr(a, d, MT_ATTR_KIND, MT_KIND_CUDA_KERNEL);
    const char *minb = mt_tfunc_get_attr(sp->host, MT_ATTR_MIN_BLOCKS);
    if (minb) mt_tfunc_set_attr(a, d, MT_ATTR_MIN_BLOCKS, minb);
    MT_VEC_PUSH(a, &sp->device, d);
    mt_tstmt *l = mt_ts_launch(a, d, c.args.data, c.args.len);
    const mt_tstmt *g = s;
    for (int k = 0; k < 3 && bound_to(g, "blockIdx."); k++, g = g->body) l->launch->grid[k] = g->extent;
    block_dims b = {{NULL, NULL, NULL}};
    mt_tvisitor dv = {mt_tvisit_no_expr, dims_stmt, &b};
    mt_tvisit_stmt(&dv, s);
    for (int k = 0; k < 3; k++) l->launch->block[k] = b.dim[k];
    return mt_ts_at(l, s->loc);
}

/* ---- the host ------------------------------------------------------------------ */

static void bind(split *sp, const void *key, int delta) { mt_ptrmap_add(sp->a, &sp->bound, key, delta); }

/* A loop, let or allocation with its body split, key bound inside it. */
static mt_tstmt *split_scoped(mt_tmutator *m, mt_tstmt *s, const void *key) {
    split *sp = m->ctx;
    bind(sp, key, 1);
    mt_tstmt *r = mt_tmutate_stmt_children(m, s);
    bind(sp, key, -1);
    return r;
}

static mt_tstmt *split_stmt(mt_tmutator *m, mt_tstmt *s) {
    split *sp = m->ctx;
    switch (s->kind) {
    case TS_FOR: {
        int64_t n;
        bool tiny = mt_te_is_const_int(s->extent, &n) && n <= 1;
        if (s->for_kind == MT_FOR_PARALLEL && !tiny) return outline(sp, s);
        if (bound_to(s, "blockIdx.") || bound_to(s, "threadIdx.")) /* a thread loop outside any */
            return outline_kernel(sp, s);                              /* block loop: one block */
        mt_tstmt *r = split_scoped(m, s, s->var);
        if (s->for_kind != MT_FOR_PARALLEL) return r;
        if (r == s) r = mt_ts_copy(m->arena, s);
        r->for_kind = MT_FOR_SERIAL; /* 0 or 1 iteration: no launch */
        return r;
    }
    case TS_LET: {
        int lanes = s->value->lanes > 1 ? s->value->lanes : 0;
        int had = mt_ptrmap_get(&sp->lanes, s->var);
        if (lanes != had) mt_ptrmap_add(sp->a, &sp->lanes, s->var, lanes - had);
        return split_scoped(m, s, s->var);
    }
    case TS_ALLOC: return split_scoped(m, s, s->buf);
    default: return mt_tmutate_stmt_children(m, s);
    }
}

/* f with its parallel loops launched (f itself when it has none). */
static mt_tfunc *split_func(split *sp, mt_tfunc *f) {
    if (!f->body) return f;
    sp->host = f;
    sp->nlaunch = 0;
    memset(&sp->bound, 0, sizeof sp->bound);
    for (int i = 0; i < f->nparams; i++)
        bind(sp, f->params[i].buf ? (const void *)f->params[i].buf : f->params[i].var, 1);
    for (int i = 0; i < f->nsym; i++) bind(sp, f->sym_vars[i], 1);
    for (int i = 0; i < f->nallocs; i++) bind(sp, f->allocs[i], 1);
    mt_tmutator m = {sp->a, NULL, split_stmt, sp};
    return mt_tfunc_with_body(sp->a, f, mt_tmutate_stmt(&m, f->body));
}

void mt_tir_split_host_device(mt_arena *a, mt_tfunc *const *funcs, int n, mt_tsplit *out) {
    split sp;
    memset(&sp, 0, sizeof sp);
    sp.a = a;
    for (int i = 0; i < n; i++) mt_nameset_add(a, &sp.names, funcs[i]->name);
    out->host = MT_NEW_ARRAY(a, mt_tfunc *, n > 0 ? n : 1);
    out->first_device = MT_NEW_ARRAY(a, int, n + 1);
    for (int i = 0; i < n; i++) {
        out->first_device[i] = sp.device.len;
        out->host[i] = split_func(&sp, funcs[i]);
    }
    out->first_device[n] = sp.device.len;
    out->device = sp.device.data;
    out->ndevice = sp.device.len;
}
