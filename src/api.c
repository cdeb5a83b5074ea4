/*
 * api.c -- the public functions, and the error boundary.
 *
 * Every entry point that can fail deep inside the compiler opens an error
 * frame (support/diag.h) and turns what it catches into a status and a
 * rendered diagnostic. A compilation's memory is one arena: on failure it is
 * destroyed whole; on success the kernel keeps it (it holds the dumps, the
 * plan and the parameter types) until the kernel's last reference goes.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "minitriton.h"
#include "pipeline.h"
#include "runtime/executor.h"
#include "runtime/tensor.h"
#include "support/arena.h"
#include "support/diag.h"

struct mt_context {
    atomic_int refs;      /* the host's, plus one per live kernel */
    mt_jit *jit;
    int num_threads;
};

struct mt_kernel {
    atomic_int refs;
    mt_context *ctx;
    mt_arena *arena;          /* everything below lives here */
    const char *name;
    const char *filename;
    const char *source;
    const char *dumps[MT_STAGE_COUNT_];
    const char *unavailable[MT_STAGE_COUNT_]; /* why a stage has no dump */
    mt_pass_dump *pass_dumps;
    int npass_dumps;
    pthread_mutex_t lock;     /* guards the lazy ASM dump */
    mt_jit_module *jm;
    mt_plan plan;
    mt_gvar **params;         /* parameter names, types, places */
    mt_gvar **results;
};

/* ---- context --------------------------------------------------------------- */

mt_context *mt_context_create(const mt_context_options *opts) {
    mt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    char err[256];
    ctx->jit = mt_jit_create(err, sizeof err);
    if (!ctx->jit) {
        free(ctx);
        return NULL;
    }
    atomic_init(&ctx->refs, 1);
    ctx->num_threads = opts && opts->num_threads > 0 ? opts->num_threads : 0;
    return ctx;
}

static void context_unref(mt_context *ctx) {
    if (atomic_fetch_sub(&ctx->refs, 1) == 1) {
        mt_jit_destroy(ctx->jit);
        free(ctx);
    }
}

void mt_context_destroy(mt_context *ctx) {
    if (ctx) context_unref(ctx);
}

void mt_compile_options_init(mt_compile_options *opts) {
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->filename = "<source>";
    opts->target = MT_TARGET_CPU;
    opts->opt_level = 3;
    opts->unroll_threshold = 16;
}

/* ---- compilation ----------------------------------------------------------- */

static void *arena_alloc_cb(void *ctx, size_t n) { return mt_arena_alloc(ctx, n); }

static int value_id(mt_gvar *const *vals, int n, const mt_gvar *v) {
    for (int i = 0; i < n; i++)
        if (vals[i] == v) return i;
    mt_ice("value '%s' has no slot in the plan", v->name);
}

static int sym_id(const mt_plan *p, const char *name) {
    for (int i = 0; i < p->nsyms; i++)
        if (strcmp(p->sym_names[i], name) == 0) return i;
    mt_ice("symbolic dim '%s' is not bound by any parameter", name);
}

static void plan_dims(mt_arena *a, mt_plan *p, mt_plan_value *pv, const mt_gtype *t,
                      bool may_bind) {
    pv->dtype = t->dtype;
    pv->ndim = t->ndim;
    for (int d = 0; d < t->ndim; d++) {
        pv->dims[d].value = t->dims[d].value;
        pv->dims[d].sym = -1;
        if (!t->dims[d].sym) continue;
        int s = -1;
        for (int i = 0; i < p->nsyms; i++)
            if (strcmp(p->sym_names[i], t->dims[d].sym) == 0) s = i;
        if (s < 0) {
            if (!may_bind) s = sym_id(p, t->dims[d].sym); /* reports the ICE */
            const char **nn = MT_NEW_ARRAY(a, const char *, p->nsyms + 1);
            if (p->nsyms) memcpy(nn, p->sym_names, sizeof *nn * (size_t)p->nsyms);
            nn[p->nsyms] = t->dims[d].sym;
            p->sym_names = nn;
            s = p->nsyms++;
        }
        pv->dims[d].sym = s;
    }
}

/* The executor's plan for the entry function. */
static void build_plan(mt_arena *a, mt_kernel *k, const mt_compiled *c, void **fn_addrs) {
    const mt_gfunc *f = c->entry;
    mt_plan *p = &k->plan;
    int nvals = f->nparams;
    for (int bi = 0; bi < f->nblocks; bi++)
        for (int i = 0; i < f->blocks[bi]->nbindings; i++) nvals += f->blocks[bi]->bindings[i]->nouts;
    mt_gvar **vals = MT_NEW_ARRAY(a, mt_gvar *, nvals > 0 ? nvals : 1);
    p->values = MT_NEW_ARRAY(a, mt_plan_value, nvals > 0 ? nvals : 1);
    int n = 0;
    for (int i = 0; i < f->nparams; i++, n++) {
        vals[n] = f->params[i];
        p->values[n].kind = MT_VAL_PARAM;
        p->values[n].param = i;
        p->values[n].name = f->params[i]->name;
        plan_dims(a, p, &p->values[n], &f->params[i]->type, true);
    }
    p->nparams = f->nparams;
    int ncalls = 0;
    for (int bi = 0; bi < f->nblocks; bi++) ncalls += f->blocks[bi]->nbindings;
    p->calls = MT_NEW_ARRAY(a, mt_plan_call, ncalls > 0 ? ncalls : 1);
    for (int bi = 0; bi < f->nblocks; bi++)
        for (int i = 0; i < f->blocks[bi]->nbindings; i++) {
            const mt_gbinding *b = f->blocks[bi]->bindings[i];
            MT_ASSERT(b->kind == MT_CALL_TIR);
            for (int o = 0; o < b->nouts; o++, n++) {
                vals[n] = b->outs[o];
                p->values[n].kind = MT_VAL_TEMP;
                p->values[n].name = b->outs[o]->name;
                plan_dims(a, p, &p->values[n], &b->outs[o]->type, false);
            }
            int ti = -1;
            for (int t = 0; t < c->module->ntfuncs; t++)
                if (c->module->tfuncs[t] == b->callee) ti = t;
            MT_ASSERT(ti >= 0);
            const mt_tfunc *low = c->lowered[ti];
            mt_plan_call *call = &p->calls[p->ncalls++];
            call->fn = fn_addrs[ti];
            call->name = low->name;
            call->nargs = b->nargs + b->nouts;
            call->args = MT_NEW_ARRAY(a, int, call->nargs > 0 ? call->nargs : 1);
            for (int q = 0; q < b->nargs; q++) call->args[q] = value_id(vals, n, b->args[q]);
            for (int q = 0; q < b->nouts; q++) call->args[b->nargs + q] = value_id(vals, n, b->outs[q]);
            call->nsyms = low->nsym;
            call->syms = MT_NEW_ARRAY(a, int, low->nsym > 0 ? low->nsym : 1);
            for (int q = 0; q < low->nsym; q++) call->syms[q] = sym_id(p, low->sym_vars[q]->name);
        }
    p->nvalues = n;
    p->nresults = f->noutputs;
    p->results = MT_NEW_ARRAY(a, int, f->noutputs > 0 ? f->noutputs : 1);
    for (int i = 0; i < f->noutputs; i++) p->results[i] = value_id(vals, n, f->outputs[i]);
    if (mt_plan_prepare(p, arena_alloc_cb, a) != 0) mt_ice("libffi rejected a kernel signature");
}

static void kernel_free(mt_kernel *k) {
    mt_jit_module_release(k->jm);
    pthread_mutex_destroy(&k->lock);
    mt_arena_destroy(k->arena);
    context_unref(k->ctx);
    free(k);
}

mt_kernel *mt_jit_compile(mt_context *ctx, const char *source, const mt_compile_options *opts,
                          mt_diag *diag) {
    mt_diag_clear(diag);
    mt_compile_options defaults;
    mt_compile_options_init(&defaults);
    if (!opts) opts = &defaults;
    const char *file = opts->filename ? opts->filename : "<source>";
    if (!ctx || !source) {
        mt_diag_set(diag, MT_ERR_INVALID_ARG, file, NULL, MT_NOLOC,
                    !ctx ? "mt_jit_compile: context is NULL" : "mt_jit_compile: source is NULL");
        return NULL;
    }
    if (opts->opt_level < 0 || opts->opt_level > 3) {
        mt_diag_set(diag, MT_ERR_INVALID_ARG, file, NULL, MT_NOLOC,
                    "mt_jit_compile: opt_level must be 0..3");
        return NULL;
    }
    mt_kernel *k = calloc(1, sizeof *k);
    mt_arena *a = mt_arena_create();
    if (!k || !a) {
        free(k);
        mt_arena_destroy(a);
        mt_diag_set(diag, MT_ERR_NOMEM, file, NULL, MT_NOLOC, "out of memory");
        return NULL;
    }
    k->arena = a;
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        size_t len = strlen(source);
        k->source = mt_arena_strndup(a, source, len);
        k->filename = mt_arena_strdup(a, file);
        if (opts->target == MT_TARGET_CUDA)
            mt_fail_noloc(MT_ERR_UNAVAILABLE, "target cuda is not available yet; use target cpu");
        mt_compiled c;
        mt_pipeline_run(a, k->source, len, opts, &c);
        mt_codegen_out cg;
        memset(&cg, 0, sizeof cg);
        mt_codegen_cpu(ctx->jit, a, c.lowered, c.nlowered, opts->opt_level, &cg);
        k->jm = cg.module;
        for (int s = 0; s < MT_STAGE_COUNT_; s++) k->dumps[s] = c.dumps[s];
        k->dumps[MT_STAGE_LLVM] = cg.llvm_ir;
        k->unavailable[MT_STAGE_CUDA] = "the CUDA backend is not implemented yet (kernel compiled for target cpu)";
        k->pass_dumps = c.pass_dumps;
        k->npass_dumps = c.npass_dumps;
        k->name = c.entry->name;
        k->params = c.entry->params;
        k->results = c.entry->outputs;
        build_plan(a, k, &c, cg.fn_addrs);
        mt_err_pop(&fr);
    } else {
        mt_err_pop(&fr);
        mt_diag_from_frame(diag, &fr, file, source);
        mt_jit_module_release(k->jm);
        mt_arena_destroy(a);
        free(k);
        return NULL;
    }
    pthread_mutex_init(&k->lock, NULL);
    atomic_init(&k->refs, 1);
    atomic_fetch_add(&ctx->refs, 1);
    k->ctx = ctx;
    return k;
}

/* ---- running --------------------------------------------------------------- */

mt_status mt_kernel_run(mt_kernel *k, mt_tensor *const *args, int nargs, mt_tensor **results,
                        int nresults, mt_diag *diag) {
    mt_diag_clear(diag);
    if (!k) {
        mt_diag_set(diag, MT_ERR_INVALID_ARG, NULL, NULL, MT_NOLOC, "mt_kernel_run: kernel is NULL");
        return MT_ERR_INVALID_ARG;
    }
    mt_run_error err;
    mt_status st = mt_plan_run(&k->plan, args, nargs, results, nresults, &err);
    if (st != MT_OK) {
        mt_loc loc = MT_NOLOC;
        if (err.param >= 0 && err.param < k->plan.nparams) loc = k->params[err.param]->loc;
        mt_diag_set(diag, st, k->filename, k->source, loc, err.msg);
    }
    return st;
}

/* ---- dumps and introspection --------------------------------------------- */

const char *mt_kernel_dump(mt_kernel *k, mt_stage stage) {
    if (!k || (unsigned)stage >= MT_STAGE_COUNT_) return NULL;
    if (stage == MT_STAGE_ASM) {
        pthread_mutex_lock(&k->lock);
        if (!k->dumps[MT_STAGE_ASM] && !k->unavailable[MT_STAGE_ASM] && k->dumps[MT_STAGE_LLVM]) {
            char err[512] = "";
            mt_errframe fr;
            if (MT_TRY(&fr)) {
                k->dumps[MT_STAGE_ASM] =
                    mt_jit_emit_asm(k->ctx->jit, k->arena, k->dumps[MT_STAGE_LLVM], err, sizeof err);
                if (!k->dumps[MT_STAGE_ASM])
                    k->unavailable[MT_STAGE_ASM] = mt_arena_printf(k->arena, "assembly: %s", err);
                mt_err_pop(&fr);
            } else {
                mt_err_pop(&fr);
                k->unavailable[MT_STAGE_ASM] = "assembly could not be produced (out of memory)";
            }
        }
        pthread_mutex_unlock(&k->lock);
    }
    return k->dumps[stage];
}

const char *mt_kernel_dump_unavailable(mt_kernel *k, mt_stage stage) {
    if (!k) return "no kernel";
    if ((unsigned)stage >= MT_STAGE_COUNT_) return "unknown stage";
    if (mt_kernel_dump(k, stage)) return NULL;
    return k->unavailable[stage] ? k->unavailable[stage] : "this stage was not produced";
}

const char *mt_kernel_pass_dump(const mt_kernel *k, const char *pass) {
    if (!k || !pass) return NULL;
    const char *last = NULL; /* a pass that runs twice: its last run */
    for (int i = 0; i < k->npass_dumps; i++)
        if (strcmp(k->pass_dumps[i].pass, pass) == 0) last = k->pass_dumps[i].text;
    return last;
}

int mt_kernel_num_params(const mt_kernel *k) { return k ? k->plan.nparams : -1; }
int mt_kernel_num_results(const mt_kernel *k) { return k ? k->plan.nresults : -1; }
const char *mt_kernel_name(const mt_kernel *k) { return k ? k->name : NULL; }

static const mt_gvar *param_at(const mt_kernel *k, int i) {
    return k && i >= 0 && i < k->plan.nparams ? k->params[i] : NULL;
}
static const mt_gvar *result_at(const mt_kernel *k, int i) {
    return k && i >= 0 && i < k->plan.nresults ? k->results[i] : NULL;
}

const char *mt_kernel_param_name(const mt_kernel *k, int i) {
    const mt_gvar *v = param_at(k, i);
    return v ? v->name : NULL;
}
mt_dtype mt_kernel_param_dtype(const mt_kernel *k, int i) {
    const mt_gvar *v = param_at(k, i);
    return v ? v->type.dtype : (mt_dtype)-1;
}
int mt_kernel_param_ndim(const mt_kernel *k, int i) {
    const mt_gvar *v = param_at(k, i);
    return v ? v->type.ndim : -1;
}
int64_t mt_kernel_param_dim(const mt_kernel *k, int i, int axis) {
    const mt_gvar *v = param_at(k, i);
    if (!v || axis < 0 || axis >= v->type.ndim) return -1;
    return v->type.dims[axis].sym ? -1 : v->type.dims[axis].value;
}
const char *mt_kernel_param_dim_name(const mt_kernel *k, int i, int axis) {
    const mt_gvar *v = param_at(k, i);
    if (!v || axis < 0 || axis >= v->type.ndim) return NULL;
    return v->type.dims[axis].sym;
}
mt_dtype mt_kernel_result_dtype(const mt_kernel *k, int i) {
    const mt_gvar *v = result_at(k, i);
    return v ? v->type.dtype : (mt_dtype)-1;
}
int mt_kernel_result_ndim(const mt_kernel *k, int i) {
    const mt_gvar *v = result_at(k, i);
    return v ? v->type.ndim : -1;
}
int64_t mt_kernel_result_dim(const mt_kernel *k, int i, int axis) {
    const mt_gvar *v = result_at(k, i);
    if (!v || axis < 0 || axis >= v->type.ndim) return -1;
    return v->type.dims[axis].sym ? -1 : v->type.dims[axis].value;
}

void mt_kernel_retain(mt_kernel *k) {
    if (k) atomic_fetch_add(&k->refs, 1);
}

void mt_kernel_release(mt_kernel *k) {
    if (k && atomic_fetch_sub(&k->refs, 1) == 1) kernel_free(k);
}
