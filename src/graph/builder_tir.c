/*
 * builder_tir.c -- loop functions of the source in the graph: called from
 * a graph function, or the entry itself.
 *
 * A call `custom_add(a, s)` of a `@T.prim_func` passes its inputs and
 * leaves out its trailing output buffers (destination passing): the
 * compiler allocates them and the call's values are those buffers. The
 * explicit form `R.call_tir(custom_add, (a, s), out_sinfo=Tensor(...))`
 * is the same call, with the outputs' types stated (and checked). Either
 * becomes one MT_CALL_TIR binding; the loop function's "op_pattern" is
 * inferred from its loops (prim_pattern.c: elemwise, broadcast, reduction
 * or opaque, whatever a pasted dump says), so that fusion takes it like
 * the functions legalization makes; one that a schedule of the source
 * names stays opaque (the schedule sees it as written).
 *
 * Each argument is checked against its buffer: dtype, rank, and each
 * dim -- a constant dim must be equal, and a symbolic dim of the loop
 * function binds to the argument's dim (the same name twice must bind to
 * one size). The loop function is then built again from its source with
 * those bindings (tir/from_ast.h, mt_tir_symbind), so its symbolic dims
 * are the caller's (by name: the executor binds dims by name) or
 * constants; calls with the same bindings share one function. Outputs
 * whose dims no input determines are an error.
 *
 * The entry. A loop function as the entry (named by the options, or the
 * source has no graph function) is wrapped in a graph function of the
 * same name: the buffers it stores into are its results, in parameter
 * order, the others its parameters; the loop function's params are
 * reordered to inputs then outputs when they are not in that order
 * already (the calling convention of a call_tir).
 */
#include "graph/builder_internal.h"

#include <string.h>

#include "support/common.h"
#include "tir/from_ast.h"

/* A dim of a buffer as a graph dim; false when it is an expression. */
static bool graph_dim(const mt_texpr *e, mt_dim *out) {
    int64_t v;
    if (mt_te_is_const_int(e, &v)) {
        out->value = v, out->sym = NULL;
        return true;
    }
    if (e->kind != TE_VAR) return false;
    out->value = -1, out->sym = e->var->name;
    return true;
}

/* The graph type of buffer b of loop function def (where: for errors). */
static mt_gtype buffer_type(const mt_tbuffer *b, const char *fn, mt_loc where) {
    mt_gtype t = mt_gtype_scalar(b->dtype);
    t.ndim = b->ndim;
    for (int d = 0; d < b->ndim; d++)
        if (!graph_dim(b->shape[d], &t.dims[d]))
            mt_fail(MT_ERR_UNSUPPORTED, where,
                    "dim %d of buffer '%s' of '%s' is an expression; a called or entry loop function's dims "
                    "are constants or symbolic names",
                    d, b->name, fn);
    return t;
}

static void only_buffers(const mt_ast *def, const mt_tfunc *f) {
    for (int i = 0; i < f->nparams; i++)
        if (!f->params[i].buf)
            mt_fail(MT_ERR_UNSUPPORTED, def->items.data[i]->loc,
                    "scalar parameter '%s' of loop function '%s': a called or entry loop function takes "
                    "buffers only (a scalar is T.Buffer((), dtype))",
                    def->items.data[i]->name, def->name);
}

/* Binds callee dim w to the argument's dim g (binds grows). */
static void bind_dim(builder *b, const mt_ast *at, const char *fn, const char *pname, mt_dim w, mt_dim g,
                     mt_tir_symbind *binds, int *nbinds, const mt_gtype *got, const mt_gtype *want) {
    if (!w.sym) {
        if (!mt_dim_equal(w, g))
            mt_fail(MT_ERR_SHAPE, at->loc, "argument '%s' of '%s' has shape %s, expected %s", pname, fn,
                    mt_shape_str(b->arena, got), mt_shape_str(b->arena, want));
        return;
    }
    for (int k = 0; k < *nbinds; k++) {
        if (strcmp(binds[k].name, w.sym) != 0) continue;
        mt_dim had = {binds[k].sym ? -1 : binds[k].value, binds[k].sym};
        if (!mt_dim_equal(had, g))
            mt_fail(MT_ERR_SHAPE, at->loc, "symbolic dim '%s' of '%s' is bound to two different sizes", w.sym, fn);
        return;
    }
    mt_tir_symbind sb = {w.sym, g.sym ? 0 : g.value, g.sym};
    binds[(*nbinds)++] = sb;
}

/* What a compiled loop function may not hold (a dump's device-side parts):
 * T.launch (split_host_device makes launches, with the device functions
 * codegen compiles alongside), and loops bound to GPU indices where it runs
 * on the CPU. */
typedef struct compilable {
    bool cpu;
    const mt_tstmt *bad;
} compilable;

static void find_uncompilable(mt_tvisitor *v, const mt_tstmt *s) {
    compilable *c = v->ctx;
    if (!c->bad && (s->kind == TS_LAUNCH || (s->kind == TS_FOR && s->for_kind == MT_FOR_THREAD && c->cpu))) c->bad = s;
    mt_tvisit_stmt_children(v, s);
}

static void check_compilable(builder *b, const mt_tfunc *f, mt_device where) {
    mt_device d = where.type ? where : b->opts ? b->opts->default_device : where;
    compilable c = {d.type == MT_DEVICE_CPU, NULL};
    mt_tvisitor v = {NULL, find_uncompilable, &c};
    mt_tvisit_stmt(&v, f->body);
    if (!c.bad) return;
    if (c.bad->kind == TS_LAUNCH)
        mt_fail(MT_ERR_UNSUPPORTED, c.bad->loc,
                "T.launch in a compiled loop function: launches are made by the compiler (the tir-sched dump); "
                "compile the launched function itself");
    mt_fail(MT_ERR_UNSUPPORTED, c.bad->loc,
            "a loop bound to %s runs on a GPU, but loop function '%s' runs on the CPU", c.bad->thread_tag, f->name);
}

/* A key for the bindings, to share functions between calls. */
static const char *binds_key(builder *b, const mt_ast *def, const mt_tir_symbind *binds, int n) {
    const char *k = mt_arena_printf(b->arena, "%p", (const void *)def);
    for (int i = 0; i < n; i++)
        k = binds[i].sym ? mt_arena_printf(b->arena, "%s;%s=%s", k, binds[i].name, binds[i].sym)
                         : mt_arena_printf(b->arena, "%s;%s=%lld", k, binds[i].name, (long long)binds[i].value);
    return k;
}

/* Does a schedule of the source (@T.schedule(def) or by its name) name def? */
static bool scheduled(const mt_ast *module, const mt_ast *def) {
    for (int i = 0; i < module->body.len; i++) {
        const mt_ast *d = module->body.data[i];
        const mt_ast *arg = d->kind == AST_FUNCDEF ? mt_ast_decorator_arg(d, "schedule") : NULL;
        if (arg && ((arg->kind == AST_NAME && !strcmp(arg->name, def->name)) ||
                    (arg->kind == AST_STR && !strcmp(arg->str, def->name))))
            return true;
    }
    return false;
}

static mt_tfunc *specialized(builder *b, const mt_ast *def, const mt_tir_symbind *binds, int n) {
    const char *key = binds_key(b, def, binds, n);
    for (int i = 0; i < b->prims.len; i++)
        if (!strcmp(b->prim_keys.data[i], key)) return b->prims.data[i];
    mt_tfunc *f = mt_tir_from_ast(b->arena, b->module, def, binds, n);
    /* whatever a pasted dump said: the pattern is inferred (a function a
     * schedule names stays as written: opaque) */
    mt_op_pattern p = scheduled(b->module, def) ? MT_PAT_OPAQUE : mt_prim_func_pattern(f);
    mt_tfunc_set_attr(b->arena, f, "op_pattern", mt_pattern_str(p));
    MT_VEC_PUSH(b->arena, &b->prims, f);
    MT_VEC_PUSH(b->arena, &b->prim_keys, key);
    return f;
}

/* Emits outs = call_tir(f, args) at loc. */
static void emit_call(builder *b, mt_tfunc *f, mt_gvar **args, int nargs, mt_gvar **outs, int nouts, mt_loc loc) {
    if (++b->nbindings > MT_MAX_BINDINGS)
        mt_fail(MT_ERR_LIMIT, loc, "kernel too large: more than %d operations after unrolling", MT_MAX_BINDINGS);
    if (!b->block) {
        b->block = mt_gblock_new(b->arena, MT_GBLOCK_BINDINGS, loc);
        mt_gbody_add(b->arena, b->body, b->block);
    }
    mt_gbinding *bd = mt_gbinding_tir(b->arena, outs, nouts, f, args, nargs, loc);
    bd->device = b->device;
    mt_gblock_add(b->arena, b->block, bd);
}

/* The function def specialized for args (checked), and its outputs' types. */
static mt_tfunc *check_call(builder *b, const mt_ast *call, const mt_ast *const *arg_ast, const mt_ast *def,
                            mt_gvar **args, int nargs, mt_gtype *out_types, int *nouts) {
    mt_tfunc *g = mt_tir_from_ast(b->arena, b->module, def, NULL, 0);
    only_buffers(def, g);
    int np = g->nparams;
    if (nargs >= np)
        mt_fail(MT_ERR_TYPE, call->loc,
                "'%s' has %d buffer parameters: pass its inputs and leave out its outputs (the trailing "
                "buffers it stores into), got %d arguments",
                def->name, np, nargs);
    mt_tir_symbind binds[MT_MAX_RANK * 64];
    int nb = 0;
    for (int i = 0; i < nargs; i++) {
        const mt_tbuffer *p = g->params[i].buf;
        const mt_ast *at = arg_ast[i];
        mt_gtype want = buffer_type(p, def->name, def->items.data[i]->loc), *got = &args[i]->type;
        if (mt_tfunc_stores_into(g, p))
            mt_fail(MT_ERR_TYPE, at->loc,
                    "'%s' stores into '%s', so it is an output: leave it out of the call (tensors are immutable)",
                    def->name, p->name);
        if (args[i]->is_const)
            mt_fail(MT_ERR_TYPE, at->loc, "argument '%s' of '%s' must be a tensor, not a constant", p->name, def->name);
        if (got->dtype != want.dtype || got->ndim != want.ndim)
            mt_fail(MT_ERR_TYPE, at->loc, "argument '%s' of '%s' must be %s, got %s %s", p->name, def->name,
                    mt_gtype_str(b->arena, &want), mt_dtype_str(got->dtype), mt_shape_str(b->arena, got));
        if (nb + want.ndim > MT_ARRAY_LEN(binds)) mt_fail(MT_ERR_LIMIT, at->loc, "too many symbolic dims");
        for (int d = 0; d < want.ndim; d++)
            bind_dim(b, at, def->name, p->name, want.dims[d], got->dims[d], binds, &nb, got, &want);
    }
    for (int i = nargs; i < np; i++)
        if (!mt_tfunc_stores_into(g, g->params[i].buf))
            mt_fail(MT_ERR_TYPE, call->loc,
                    "'%s' is called with %d inputs, so '%s' would be an output, but '%s' never stores into it",
                    def->name, nargs, g->params[i].buf->name, def->name);
    mt_tfunc *f = specialized(b, def, binds, nb);
    *nouts = np - nargs;
    for (int i = nargs; i < np; i++) {
        const mt_tbuffer *o = f->params[i].buf;
        out_types[i - nargs] = buffer_type(o, def->name, def->items.data[i]->loc);
        for (int d = 0; d < o->ndim; d++) {
            const char *s = out_types[i - nargs].dims[d].sym;
            bool bound = !s;
            for (int k = 0; k < nb && !bound; k++) bound = binds[k].sym && !strcmp(binds[k].sym, s);
            if (!bound)
                mt_fail(MT_ERR_SHAPE, call->loc, "output '%s' of '%s' has the symbolic dim '%s', which no input determines",
                        o->name, def->name, s);
        }
    }
    return f;
}

static int call_prim(builder *b, const mt_ast *call, const mt_ast *const *arg_ast, int nargs, const mt_ast *def,
                     const mt_ast *sinfo, mt_gvar **out, int max) {
    mt_gvar **args = MT_NEW_ARRAY(b->arena, mt_gvar *, nargs > 0 ? nargs : 1);
    for (int i = 0; i < nargs; i++) args[i] = mt_b_expr(b, arg_ast[i]);
    mt_gtype types[64];
    int nouts;
    mt_tfunc *f = check_call(b, call, arg_ast, def, args, nargs, types, &nouts);
    check_compilable(b, f, b->device);
    if (nouts > max || nouts > MT_ARRAY_LEN(types)) mt_fail(MT_ERR_LIMIT, call->loc, "too many results");
    if (sinfo) {
        const mt_ast_list *l = sinfo->kind == AST_LIST || sinfo->kind == AST_TUPLE ? &sinfo->items : NULL;
        int n = l ? l->len : 1;
        if (n != nouts)
            mt_fail(MT_ERR_TYPE, sinfo->loc, "out_sinfo gives %d output%s, '%s' has %d", n, n == 1 ? "" : "s",
                    def->name, nouts);
        for (int i = 0; i < n; i++) {
            const mt_ast *s = l ? l->data[i] : sinfo;
            mt_gtype t = mt_b_annotation(b, s, "out_sinfo");
            if (!mt_gtype_equal(&t, &types[i]))
                mt_fail(MT_ERR_SHAPE, s->loc, "out_sinfo says %s, but output '%s' of '%s' is %s",
                        mt_gtype_str(b->arena, &t), f->params[nargs + i].buf->name, def->name,
                        mt_gtype_str(b->arena, &types[i]));
        }
    }
    for (int i = 0; i < nouts; i++) out[i] = mt_gvar_new(b->arena, mt_b_temp_name(b), &types[i], call->loc);
    emit_call(b, f, args, nargs, out, nouts, call->loc);
    return nouts;
}

int mt_b_call_prim(builder *b, const mt_ast *call, const mt_ast *def, mt_gvar **out, int max) {
    if (call->kw.len)
        mt_fail(MT_ERR_UNSUPPORTED, call->kw.data[0]->loc, "keyword arguments to loop functions are not supported");
    return call_prim(b, call, (const mt_ast *const *)call->items.data, call->items.len, def, NULL, out, max);
}

/* R.call_tir(f, (args...), out_sinfo=Tensor(...) | [Tensor(...), ...]) */
int mt_b_call_tir(builder *b, const mt_ast *call, mt_gvar **out, int max) {
    for (int i = 0; i < call->kw.len; i++)
        if (strcmp(call->kw.data[i]->name, "out_sinfo") != 0)
            mt_fail(MT_ERR_TYPE, call->kw.data[i]->loc, "R.call_tir() got an unexpected keyword argument '%s'",
                    call->kw.data[i]->name);
    if (call->items.len != 2 || call->kw.len != 1)
        mt_fail(MT_ERR_TYPE, call->loc, "R.call_tir takes a loop function, a tuple of arguments and out_sinfo=");
    const mt_ast *fn = call->items.data[0], *tup = call->items.data[1];
    const mt_ast *def = fn->kind == AST_NAME ? mt_b_find_def(b, fn->name) : NULL;
    if (!def || !mt_ast_is_prim_func(def))
        mt_fail(MT_ERR_TYPE, fn->loc, "R.call_tir calls a loop function (@T.prim_func) of the source");
    bool many = tup->kind == AST_TUPLE || tup->kind == AST_LIST;
    const mt_ast *const *items = many ? (const mt_ast *const *)tup->items.data : &tup;
    return call_prim(b, call, items, many ? tup->items.len : 1, def, call->kw.data[0]->lhs, out, max);
}

bool mt_b_is_call_tir(const mt_ast *e) {
    return e->kind == AST_CALL && e->lhs->kind == AST_ATTR && !strcmp(e->lhs->name, "call_tir") &&
           e->lhs->lhs->kind == AST_NAME && !strcmp(e->lhs->lhs->name, "R");
}

/* ---- the entry ------------------------------------------------------------ */

/* f with params reordered: the inputs, then the outputs (written[i]). */
static mt_tfunc *inputs_first(builder *b, mt_tfunc *f, const bool *written) {
    mt_tfunc *g = MT_NEW(b->arena, mt_tfunc);
    *g = *f;
    g->params = MT_NEW_ARRAY(b->arena, mt_tparam, f->nparams);
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < f->nparams; i++)
            if (written[i] == (pass == 1)) g->params[k++] = f->params[i];
    return g;
}

mt_gfunc *mt_b_prim_entry(builder *b, const mt_ast *def) {
    mt_tfunc *f = mt_tir_from_ast(b->arena, b->module, def, NULL, 0);
    only_buffers(def, f);
    check_compilable(b, f, b->device);
    if (f->nparams > MT_MAX_PARAMS) mt_fail(MT_ERR_LIMIT, def->loc, "too many parameters (more than %d)", MT_MAX_PARAMS);
    bool *written = MT_NEW_ARRAY(b->arena, bool, f->nparams + 1);
    int nout = 0;
    for (int i = 0; i < f->nparams; i++) nout += written[i] = mt_tfunc_stores_into(f, f->params[i].buf);
    if (!nout) mt_fail(MT_ERR_TYPE, def->loc, "loop function '%s' stores into none of its buffers: it has no results", def->name);
    f = inputs_first(b, f, written);
    f->num_outputs = nout;
    mt_gfunc *g = mt_gfunc_new(b->arena, def->name, def->loc);
    int nin = f->nparams - nout;
    g->params = MT_NEW_ARRAY(b->arena, mt_gvar *, nin > 0 ? nin : 1);
    g->outputs = MT_NEW_ARRAY(b->arena, mt_gvar *, nout);
    g->noutputs = nout;
    for (int i = 0; i < f->nparams; i++) {
        const mt_tbuffer *p = f->params[i].buf;
        int src = 0;
        while (strcmp(def->items.data[src]->name, p->name) != 0) src++;
        mt_gtype t = buffer_type(p, def->name, def->items.data[src]->loc);
        mt_gvar *v = mt_gvar_new(b->arena, mt_b_fresh_name(b, p->name), &t, def->items.data[src]->loc);
        if (i < nin) g->params[g->nparams++] = v;
        else g->outputs[i - nin] = v;
    }
    for (int i = 0; i < nout; i++) /* an output's symbolic dims come from the inputs */
        for (int d = 0; d < g->outputs[i]->type.ndim; d++) {
            const char *s = g->outputs[i]->type.dims[d].sym;
            bool bound = !s;
            for (int k = 0; k < nin && !bound; k++)
                for (int e = 0; e < g->params[k]->type.ndim && !bound; e++)
                    bound = g->params[k]->type.dims[e].sym && !strcmp(g->params[k]->type.dims[e].sym, s);
            if (!bound)
                mt_fail(MT_ERR_SHAPE, g->outputs[i]->loc, "output '%s' has the symbolic dim '%s', which no input determines",
                        g->outputs[i]->name, s);
        }
    b->func = g;
    b->body = &g->body;
    b->block = NULL;
    MT_VEC_PUSH(b->arena, &b->prims, f);
    MT_VEC_PUSH(b->arena, &b->prim_keys, "");
    emit_call(b, f, g->params, nin, g->outputs, nout, def->loc);
    return g;
}
