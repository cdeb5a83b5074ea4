/*
 * planner.c -- the graph function, compiled, becomes the executor's plan
 * (planner.h).
 *
 * The value table starts with the parameters in order; every other value
 * (intermediates, constants, loop variables, merged and carried values)
 * gets an id on first sight. Each bindings block gives its calls in order:
 * a call_tir is a kernel call (the lowered function's address, the value
 * ids of its inputs then its outputs, the symbolic dims its signature
 * takes); an R.to_vdevice copy is a copy instruction between the two
 * values. Control flow is flattened to jumps:
 *
 *   if c: T else: E      JUMP_IF_NOT c -> else; T; merged <- then values;
 *                        JUMP -> end; else: E; merged <- else values; end:
 *   for i in range(a, b, s):
 *                        carried <- init; i <- a;
 *                        test: LOOP_TEST i, b, s -> end; body;
 *                        carried <- next; LOOP_STEP i, s; JUMP -> test; end:
 *   assert c, msg        ASSERT c
 *
 * The moves into merged and carried values are parallel copies (emit_copies):
 * a source that is also a destination is saved first, so `a, b = b, a` in
 * a loop swaps. Symbolic dims are numbered in order of first appearance in
 * the parameters, which bind them at run time. Finally mt_plan_prepare
 * plans the arena of intermediates (runtime/memplan.h).
 */
#include "planner/planner.h"

#include <string.h>

#include "support/diag.h"

static void *arena_alloc_cb(void *ctx, size_t n) { return mt_arena_alloc(ctx, n); }

static int sym_id(const mt_plan *p, const char *name) {
    for (int i = 0; i < p->nsyms; i++)
        if (strcmp(p->sym_names[i], name) == 0) return i;
    return -1;
}

typedef struct planner {
    mt_arena *arena;
    mt_plan *plan;
    const mt_gmodule *m;
    mt_tfunc *const *lowered;   /* lowered[i]: m->tfuncs[i] as compiled */
    void *const *fn_addrs;      /* fn_addrs[i]: its address */
    mt_ptrmap ids;              /* graph value -> value id + 1 */
    MT_VEC(mt_plan_value) pvals;
    MT_VEC(mt_plan_call) calls;
    MT_VEC(mt_instr) code;
    const mt_ptrmap *skip;      /* bindings left out (computed once: the `once` plan) */
} planner;

/* Where a value of type t (or a binding placed on d) lives: {0, 0} is the
 * module's default device. */
static mt_device device_of(const planner *pl, mt_device d) {
    return d.type ? d : pl->m->default_device;
}

static void plan_dims(planner *pl, mt_plan_value *pv, const mt_gtype *t, bool may_bind) {
    mt_plan *p = pl->plan;
    pv->device = device_of(pl, t->device);
    pv->dtype = t->dtype;
    pv->ndim = t->ndim;
    for (int d = 0; d < t->ndim; d++) {
        pv->dims[d].value = t->dims[d].value;
        pv->dims[d].sym = -1;
        if (!t->dims[d].sym) continue;
        int s = sym_id(p, t->dims[d].sym);
        if (s < 0) {
            if (!may_bind) mt_ice("symbolic dim '%s' is not bound by any parameter", t->dims[d].sym);
            const char **nn = MT_NEW_ARRAY(pl->arena, const char *, p->nsyms + 1);
            if (p->nsyms) memcpy(nn, p->sym_names, sizeof *nn * (size_t)p->nsyms);
            nn[p->nsyms] = t->dims[d].sym;
            p->sym_names = nn;
            s = p->nsyms++;
        }
        pv->dims[d].sym = s;
    }
}

/* The value id of v, adding it to the table on first sight. */
static int value_of(planner *pl, mt_gvar *v) {
    int id = mt_ptrmap_get(&pl->ids, v);
    if (id > 0) return id - 1;
    mt_plan_value pv;
    memset(&pv, 0, sizeof pv);
    pv.kind = v->is_const ? MT_VAL_CONST : MT_VAL_TEMP;
    pv.name = v->name;
    pv.fconst = v->fconst;
    pv.iconst = v->iconst;
    plan_dims(pl, &pv, &v->type, false);
    MT_VEC_PUSH(pl->arena, &pl->pvals, pv);
    mt_ptrmap_add(pl->arena, &pl->ids, v, pl->pvals.len);
    return pl->pvals.len - 1;
}

/* A fresh slot of v's type (a temporary for parallel copies). */
static int scratch_like(planner *pl, mt_gvar *v) {
    mt_gvar *t = mt_gvar_new(pl->arena, mt_arena_printf(pl->arena, "%s_tmp", v->name), &v->type, v->loc);
    return value_of(pl, t);
}

static int emit(planner *pl, mt_instr_kind kind, int a, int b, int c) {
    mt_instr in;
    memset(&in, 0, sizeof in);
    in.kind = kind;
    in.a = a;
    in.b = b;
    in.c = c;
    MT_VEC_PUSH(pl->arena, &pl->code, in);
    return pl->code.len - 1;
}

/* dst[k] <- src[k] for all k at once: sources that are also destinations
 * are saved first, so `a, b = b, a` in a loop swaps. */
static void emit_copies(planner *pl, mt_gvar *const *dst, mt_gvar *const *src, int n) {
    int *from = MT_NEW_ARRAY(pl->arena, int, n > 0 ? n : 1);
    for (int k = 0; k < n; k++) {
        from[k] = value_of(pl, src[k]);
        for (int j = 0; j < n; j++)
            if (src[k] == dst[j] && j != k) {
                int t = scratch_like(pl, src[k]);
                emit(pl, MT_I_COPY, t, from[k], 0);
                from[k] = t;
                break;
            }
    }
    for (int k = 0; k < n; k++)
        if (src[k] != dst[k]) emit(pl, MT_I_COPY, value_of(pl, dst[k]), from[k], 0);
}

static void plan_body(planner *pl, const mt_gbody *body);

/* A host function: called through libffi with a DLTensor per value. */
static void plan_extern(planner *pl, const mt_gbinding *b) {
    mt_plan_call call;
    memset(&call, 0, sizeof call);
    call.fn = b->ext->fn;
    call.name = b->ext->name;
    call.is_extern = true;
    call.device = device_of(pl, b->device);
    call.nargs = b->nargs + b->nouts;
    call.args = MT_NEW_ARRAY(pl->arena, int, call.nargs > 0 ? call.nargs : 1);
    for (int q = 0; q < b->nargs; q++) call.args[q] = value_of(pl, b->args[q]);
    for (int q = 0; q < b->nouts; q++) call.args[b->nargs + q] = value_of(pl, b->outs[q]);
    MT_VEC_PUSH(pl->arena, &pl->calls, call);
    emit(pl, MT_I_CALL, pl->calls.len - 1, 0, 0);
}

static void plan_call(planner *pl, const mt_gbinding *b) {
    if (b->kind == MT_CALL_TO_DEVICE) { /* a copy across devices */
        emit(pl, MT_I_COPY, value_of(pl, b->outs[0]), value_of(pl, b->args[0]), 0);
        return;
    }
    if (b->kind == MT_CALL_EXTERN) {
        plan_extern(pl, b);
        return;
    }
    MT_ASSERT(b->kind == MT_CALL_TIR);
    int ti = -1;
    for (int t = 0; t < pl->m->ntfuncs; t++)
        if (pl->m->tfuncs[t] == b->callee) ti = t;
    MT_ASSERT(ti >= 0);
    const mt_tfunc *low = pl->lowered[ti];
    mt_plan_call call;
    memset(&call, 0, sizeof call);
    call.fn = pl->fn_addrs[ti];
    call.name = low->name;
    call.device = device_of(pl, b->device);
    call.nargs = b->nargs + b->nouts;
    call.args = MT_NEW_ARRAY(pl->arena, int, call.nargs > 0 ? call.nargs : 1);
    for (int q = 0; q < b->nargs; q++) call.args[q] = value_of(pl, b->args[q]);
    for (int q = 0; q < b->nouts; q++) call.args[b->nargs + q] = value_of(pl, b->outs[q]);
    call.nsyms = low->nsym;
    call.syms = MT_NEW_ARRAY(pl->arena, int, low->nsym > 0 ? low->nsym : 1);
    for (int q = 0; q < low->nsym; q++) {
        call.syms[q] = sym_id(pl->plan, low->sym_vars[q]->name);
        if (call.syms[q] < 0) mt_ice("symbolic dim '%s' is not bound", low->sym_vars[q]->name);
    }
    MT_VEC_PUSH(pl->arena, &pl->calls, call);
    emit(pl, MT_I_CALL, pl->calls.len - 1, 0, 0);
}

static void plan_block(planner *pl, const mt_gblock *b) {
    switch (b->kind) {
    case MT_GBLOCK_BINDINGS:
        for (int i = 0; i < b->nbindings; i++)
            if (!pl->skip || !mt_ptrmap_get(pl->skip, b->bindings[i])) plan_call(pl, b->bindings[i]);
        break;
    case MT_GBLOCK_IF: {
        int jelse = emit(pl, MT_I_JUMP_IF_NOT, value_of(pl, b->cond), 0, 0);
        plan_body(pl, &b->then_body);
        emit_copies(pl, b->merged, b->then_vals, b->nmerged);
        int jend = emit(pl, MT_I_JUMP, 0, 0, 0);
        pl->code.data[jelse].target = pl->code.len;
        plan_body(pl, &b->else_body);
        emit_copies(pl, b->merged, b->else_vals, b->nmerged);
        pl->code.data[jend].target = pl->code.len;
        break;
    }
    case MT_GBLOCK_LOOP: {
        emit_copies(pl, b->carried, b->carried_init, b->ncarried);
        int iv = value_of(pl, b->ivar), step = value_of(pl, b->step);
        emit(pl, MT_I_COPY, iv, value_of(pl, b->start), 0);
        int test = emit(pl, MT_I_LOOP_TEST, iv, value_of(pl, b->stop), step);
        pl->code.data[test].line = b->loc.line;
        pl->code.data[test].col = b->loc.col;
        plan_body(pl, &b->body);
        emit_copies(pl, b->carried, b->carried_next, b->ncarried);
        emit(pl, MT_I_LOOP_STEP, iv, 0, step);
        int back = emit(pl, MT_I_JUMP, 0, 0, 0);
        pl->code.data[back].target = test;
        pl->code.data[test].target = pl->code.len;
        break;
    }
    case MT_GBLOCK_ASSERT: {
        int at = emit(pl, MT_I_ASSERT, value_of(pl, b->cond), 0, 0);
        pl->code.data[at].message = b->message;
        pl->code.data[at].line = b->loc.line;
        pl->code.data[at].col = b->loc.col;
        break;
    }
    }
}

static void plan_body(planner *pl, const mt_gbody *body) {
    for (int i = 0; i < body->nblocks; i++) plan_block(pl, body->blocks[i]);
}

static void planner_init(planner *pl, mt_arena *a, mt_plan *p, const mt_gmodule *m, mt_tfunc *const *lowered,
                         void *const *fn_addrs) {
    memset(pl, 0, sizeof *pl);
    memset(p, 0, sizeof *p);
    pl->arena = a;
    pl->plan = p;
    pl->m = m;
    pl->lowered = lowered;
    pl->fn_addrs = fn_addrs;
}

/* Value v as the plan's parameter number `param` (the next value id). */
static void add_param(planner *pl, mt_gvar *v, int param) {
    mt_plan_value pv;
    memset(&pv, 0, sizeof pv);
    pv.kind = MT_VAL_PARAM;
    pv.param = param;
    pv.name = v->name;
    plan_dims(pl, &pv, &v->type, true);
    MT_VEC_PUSH(pl->arena, &pl->pvals, pv);
    if (!mt_ptrmap_get(&pl->ids, v)) mt_ptrmap_add(pl->arena, &pl->ids, v, pl->pvals.len);
}

static void finish(planner *pl, mt_gvar *const *results, int nresults) {
    mt_plan *p = pl->plan;
    p->nresults = nresults;
    p->results = MT_NEW_ARRAY(pl->arena, int, nresults > 0 ? nresults : 1);
    for (int i = 0; i < nresults; i++) p->results[i] = value_of(pl, results[i]);
    p->values = pl->pvals.data;
    p->nvalues = pl->pvals.len;
    p->calls = pl->calls.data;
    p->ncalls = pl->calls.len;
    p->instrs = pl->code.data;
    p->ninstrs = pl->code.len;
    mt_run_error err;
    if (mt_plan_prepare(p, arena_alloc_cb, pl->arena, &err) != MT_OK)
        mt_ice("the run plan could not be prepared: %s", err.msg);
}

/* The values computed once that the rest of f reads (or returns): used
 * more often than the once-bindings use them. */
static int hoisted_values(mt_arena *a, const mt_gfunc *f, const mt_ptrmap *vals, const mt_ptrmap *once,
                          mt_gvar ***out) {
    mt_ptrmap uses = {0}, inside = {0};
    mt_gfunc_count_uses(a, f, &uses);
    MT_VEC(mt_gvar *) hv = {0};
    for (int k = 0; k < f->body.nblocks; k++) {
        const mt_gblock *blk = f->body.blocks[k];
        for (int j = 0; blk->kind == MT_GBLOCK_BINDINGS && j < blk->nbindings; j++)
            if (mt_ptrmap_get(once, blk->bindings[j]))
                for (int q = 0; q < blk->bindings[j]->nargs; q++)
                    mt_ptrmap_add(a, &inside, blk->bindings[j]->args[q], 1);
    }
    for (int k = 0; k < f->body.nblocks; k++) {
        const mt_gblock *blk = f->body.blocks[k];
        for (int j = 0; blk->kind == MT_GBLOCK_BINDINGS && j < blk->nbindings; j++) {
            const mt_gbinding *b = blk->bindings[j];
            if (!mt_ptrmap_get(once, b)) continue;
            for (int o = 0; o < b->nouts; o++)
                if (mt_ptrmap_get(vals, b->outs[o]) &&
                    mt_ptrmap_get(&uses, b->outs[o]) > mt_ptrmap_get(&inside, b->outs[o]))
                    MT_VEC_PUSH(a, &hv, b->outs[o]);
        }
    }
    *out = hv.data;
    return hv.len;
}

/* The plan of the once-bindings: f's bound parameters in, the hoisted
 * values out. */
static void build_once(planner *pl, const mt_gfunc *f, const mt_ptrmap *once, mt_gvar *const *hoisted, int nh) {
    int np = 0;
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i]->bound) add_param(pl, f->params[i], np++);
    pl->plan->nparams = np;
    for (int k = 0; k < f->body.nblocks; k++) {
        const mt_gblock *blk = f->body.blocks[k];
        for (int j = 0; blk->kind == MT_GBLOCK_BINDINGS && j < blk->nbindings; j++)
            if (mt_ptrmap_get(once, blk->bindings[j])) plan_call(pl, blk->bindings[j]);
    }
    finish(pl, hoisted, nh);
}

void mt_plan_build(mt_arena *a, const mt_gmodule *m, const mt_gfunc *f, mt_tfunc *const *lowered,
                   void *const *fn_addrs, mt_plan *p, mt_plan *once) {
    mt_ptrmap vals, once_b;
    mt_gfunc_bound_values(a, f, &vals, &once_b);
    mt_gvar **hoisted = NULL;
    int nh = once_b.len ? hoisted_values(a, f, &vals, &once_b, &hoisted) : 0;
    planner pl;
    planner_init(&pl, a, once, m, lowered, fn_addrs);
    if (nh) build_once(&pl, f, &once_b, hoisted, nh);
    planner_init(&pl, a, p, m, lowered, fn_addrs);
    pl.skip = nh ? &once_b : NULL;
    for (int i = 0; i < f->nparams; i++) add_param(&pl, f->params[i], i);
    for (int k = 0; k < nh; k++) add_param(&pl, hoisted[k], f->nparams + k);
    plan_body(&pl, &f->body);
    p->nparams = f->nparams + nh;
    finish(&pl, f->outputs, f->noutputs);
}
