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
#include <time.h>

#include "cache.h"
#include "codegen/codegen.h"
#include "minitriton.h"
#include "pipeline.h"
#include "runtime/executor.h"
#include "runtime/memplan.h"
#include "runtime/parallel.h"
#include "runtime/pool.h"
#include "runtime/tensor.h"
#include "support/arena.h"
#include "support/diag.h"
#include "support/ptrmap.h"

struct mt_context {
    atomic_int refs;      /* the host's, plus one per live kernel */
    mt_backend *backend;  /* code generation for target cpu (codegen.h) */
    int num_threads;
    mt_cache *cache;      /* compiled kernels; closed when the host destroys ctx */
    mt_pool *pool;        /* run buffers (runtime/pool.h); closed when ctx is freed */
    mt_thread_pool *threads; /* parallel loops' workers (runtime/parallel.h); joined when ctx is freed */
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
    mt_codegen_out code;      /* the backend's module, and what its lazy dumps are made from */
    pthread_mutex_t lock;     /* guards the lazy backend dumps (LLVM, ASM) */
    mt_plan plan;
    mt_gvar **params;         /* parameter names, types, places */
    mt_gvar **results;
    mt_compile_times times;
};

/* ---- context --------------------------------------------------------------- */

mt_context *mt_context_create(const mt_context_options *opts) {
    mt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    char err[256];
    ctx->backend = mt_backend_llvm_cpu_create(err, sizeof err);
    int entries = opts && opts->cache_entries ? opts->cache_entries : MT_CACHE_DEFAULT_ENTRIES;
    ctx->cache = ctx->backend ? mt_cache_create(entries) : NULL;
    ctx->pool = ctx->cache ? mt_pool_create(0) : NULL;
    ctx->num_threads = opts && opts->num_threads > 0 ? opts->num_threads : 0;
    ctx->threads = ctx->pool ? mt_thread_pool_create(ctx->num_threads) : NULL;
    if (!ctx->threads) {
        if (ctx->pool) mt_pool_close(ctx->pool);
        if (ctx->cache) mt_cache_destroy(ctx->cache);
        if (ctx->backend) ctx->backend->destroy(ctx->backend);
        free(ctx);
        return NULL;
    }
    atomic_init(&ctx->refs, 1);
    return ctx;
}

static void context_unref(mt_context *ctx) {
    if (atomic_fetch_sub(&ctx->refs, 1) == 1) {
        mt_cache_destroy(ctx->cache);
        ctx->backend->destroy(ctx->backend);
        mt_pool_close(ctx->pool);
        mt_thread_pool_destroy(ctx->threads);
        free(ctx);
    }
}

/* The cache's entries hold kernels, which hold the context: closing the
 * cache here breaks that cycle, so the context is freed with the last kernel
 * the host still holds. */
void mt_context_destroy(mt_context *ctx) {
    if (!ctx) return;
    mt_cache_close(ctx->cache);
    context_unref(ctx);
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

static int sym_id(const mt_plan *p, const char *name) {
    for (int i = 0; i < p->nsyms; i++)
        if (strcmp(p->sym_names[i], name) == 0) return i;
    return -1;
}

/* Builds the executor's plan for the entry function: the value table (params
 * first), the kernel calls, and the program that runs them (control flow
 * flattened to jumps). */
typedef struct planner {
    mt_arena *arena;
    mt_plan *plan;
    const mt_compiled *c;
    void **fn_addrs;
    mt_ptrmap ids;              /* graph value -> value id + 1 */
    MT_VEC(mt_plan_value) pvals;
    MT_VEC(mt_plan_call) calls;
    MT_VEC(mt_instr) code;
} planner;

static void plan_dims(planner *pl, mt_plan_value *pv, const mt_gtype *t, bool may_bind) {
    mt_plan *p = pl->plan;
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

static void plan_call(planner *pl, const mt_gbinding *b) {
    MT_ASSERT(b->kind == MT_CALL_TIR);
    const mt_compiled *c = pl->c;
    int ti = -1;
    for (int t = 0; t < c->module->ntfuncs; t++)
        if (c->module->tfuncs[t] == b->callee) ti = t;
    MT_ASSERT(ti >= 0);
    const mt_tfunc *low = c->lowered[ti];
    mt_plan_call call;
    memset(&call, 0, sizeof call);
    call.fn = pl->fn_addrs[ti];
    call.name = low->name;
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
        for (int i = 0; i < b->nbindings; i++) plan_call(pl, b->bindings[i]);
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

static void build_plan(mt_arena *a, mt_kernel *k, const mt_compiled *c, void **fn_addrs) {
    const mt_gfunc *f = c->entry;
    planner pl;
    memset(&pl, 0, sizeof pl);
    pl.arena = a;
    pl.plan = &k->plan;
    pl.c = c;
    pl.fn_addrs = fn_addrs;
    for (int i = 0; i < f->nparams; i++) {
        mt_plan_value pv;
        memset(&pv, 0, sizeof pv);
        pv.kind = MT_VAL_PARAM;
        pv.param = i;
        pv.name = f->params[i]->name;
        plan_dims(&pl, &pv, &f->params[i]->type, true);
        MT_VEC_PUSH(a, &pl.pvals, pv);
        if (!mt_ptrmap_get(&pl.ids, f->params[i])) mt_ptrmap_add(a, &pl.ids, f->params[i], pl.pvals.len);
    }
    plan_body(&pl, &f->body);
    mt_plan *p = &k->plan;
    p->nparams = f->nparams;
    p->nresults = f->noutputs;
    p->results = MT_NEW_ARRAY(a, int, f->noutputs > 0 ? f->noutputs : 1);
    for (int i = 0; i < f->noutputs; i++) p->results[i] = value_of(&pl, f->outputs[i]);
    p->values = pl.pvals.data;
    p->nvalues = pl.pvals.len;
    p->calls = pl.calls.data;
    p->ncalls = pl.calls.len;
    p->instrs = pl.code.data;
    p->ninstrs = pl.code.len;
    if (mt_plan_prepare(p, arena_alloc_cb, a) != 0)
        mt_ice("the run plan could not be prepared (a kernel signature the call path rejects, or no memory for the memory plan)");
}

static void kernel_free(mt_kernel *k) {
    k->ctx->backend->release(k->ctx->backend, k->code.module);
    pthread_mutex_destroy(&k->lock);
    mt_arena_destroy(k->arena);
    context_unref(k->ctx);
    free(k);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static mt_kernel *compile_uncached(mt_context *ctx, const char *source,
                                   const mt_compile_options *opts, const char *file,
                                   mt_diag *diag);

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
    if (opts->target != MT_TARGET_CPU && opts->target != MT_TARGET_CUDA) {
        mt_diag_set(diag, MT_ERR_INVALID_ARG, file, NULL, MT_NOLOC,
                    "mt_jit_compile: target must be MT_TARGET_CPU or MT_TARGET_CUDA");
        return NULL;
    }
    int badlen;
    const char *bad = mt_pipeline_unknown_pass(opts->dump_after, &badlen);
    if (bad) {
        char msg[160];
        snprintf(msg, sizeof msg, "mt_jit_compile: dump_after names no pass: '%.*s'", badlen, bad);
        mt_diag_set(diag, MT_ERR_INVALID_ARG, file, NULL, MT_NOLOC, msg);
        return NULL;
    }
    /* Without memory for a key the compilation simply bypasses the cache. */
    mt_cache_key key;
    bool keyed = mt_cache_key_init(&key, source, opts) == 0;
    mt_kernel *k = keyed ? mt_cache_lookup(ctx->cache, &key) : NULL;
    if (!k) {
        double t0 = now_ms();
        k = compile_uncached(ctx, source, opts, file, diag);
        if (k) k->times.total_ms = now_ms() - t0;
        if (k && keyed) k = mt_cache_insert(ctx->cache, &key, k);
    }
    mt_cache_key_free(&key);
    return k;
}

static mt_kernel *compile_uncached(mt_context *ctx, const char *source,
                                   const mt_compile_options *opts, const char *file,
                                   mt_diag *diag) {
    mt_kernel *volatile k = calloc(1, sizeof *k); /* read after a longjmp */
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
        /* the backend works on the kernel functions on as many threads as
         * the context runs parallel loops on */
        int threads = ctx->num_threads > 0 ? ctx->num_threads : mt_parallel_num_cpus();
        mt_codegen_in in = {c.lowered, c.nlowered, c.device, c.ndevice, opts->opt_level, threads};
        ctx->backend->compile(ctx->backend, a, &in, &k->code);
        const mt_codegen_out cg = k->code;
        for (int s = 0; s < MT_STAGE_COUNT_; s++) k->dumps[s] = c.dumps[s];
        k->unavailable[MT_STAGE_CUDA] = "the CUDA backend is not implemented yet (kernel compiled for target cpu)";
        k->pass_dumps = c.pass_dumps;
        k->npass_dumps = c.npass_dumps;
        k->name = c.entry->name;
        k->params = c.entry->params;
        k->results = c.entry->outputs;
        k->times = (mt_compile_times){c.ms_frontend, c.ms_graph, c.ms_tir, cg.ms_irgen,
                                      cg.ms_opt, cg.ms_jit, 0, cg.threads};
        build_plan(a, k, &c, cg.fn_addrs);
        k->dumps[MT_STAGE_PLAN] = mt_memplan_print(k->plan.mem, &k->plan, arena_alloc_cb, a);
        mt_err_pop(&fr);
    } else {
        mt_err_pop(&fr);
        mt_diag_from_frame(diag, &fr, file, source);
        ctx->backend->release(ctx->backend, k->code.module);
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
    mt_run_env env = {k->ctx->pool, k->ctx->threads, k->ctx->num_threads};
    mt_status st = mt_plan_run(&k->plan, &env, args, nargs, results, nresults, &err);
    if (st != MT_OK) {
        mt_loc loc = MT_NOLOC;
        if (err.param >= 0 && err.param < k->plan.nparams) loc = k->params[err.param]->loc;
        if (err.line > 0) loc = mt_loc_make(err.line, err.col);
        mt_diag_set(diag, st, k->filename, k->source, loc, err.msg);
    }
    return st;
}

/* ---- dumps and introspection --------------------------------------------- */

/* Makes a dump of the backend's (LLVM, ASM) from its module, once (k->lock
 * held). */
static void lazy_dump(mt_kernel *k, mt_stage stage) {
    if (k->dumps[stage] || k->unavailable[stage] || !k->code.dump_src) return;
    char err[512] = "";
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        mt_backend *be = k->ctx->backend;
        k->dumps[stage] = be->dump(be, k->arena, &k->code, stage, err, sizeof err);
        if (!k->dumps[stage])
            k->unavailable[stage] = mt_arena_printf(
                k->arena, "%s: %s", stage == MT_STAGE_LLVM ? "LLVM IR" : "assembly", err);
        mt_err_pop(&fr);
    } else {
        mt_err_pop(&fr);
        k->unavailable[stage] = "the dump could not be produced (out of memory)";
    }
}

const char *mt_kernel_dump(mt_kernel *k, mt_stage stage) {
    if (!k || (unsigned)stage >= MT_STAGE_COUNT_) return NULL;
    if (k->ctx->backend->dumps & 1u << stage) {
        pthread_mutex_lock(&k->lock);
        lazy_dump(k, stage);
        const char *d = k->dumps[stage];
        pthread_mutex_unlock(&k->lock);
        return d;
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

mt_status mt_kernel_compile_times(const mt_kernel *k, mt_compile_times *out) {
    if (!k || !out) return MT_ERR_INVALID_ARG;
    *out = k->times;
    return MT_OK;
}

mt_status mt_context_cache_stats(mt_context *ctx, mt_cache_stats *out) {
    if (!ctx || !out) return MT_ERR_INVALID_ARG;
    mt_cache_get_stats(ctx->cache, out);
    return MT_OK;
}

void mt_kernel_retain(mt_kernel *k) {
    if (k) atomic_fetch_add(&k->refs, 1);
}

void mt_kernel_release(mt_kernel *k) {
    if (k && atomic_fetch_sub(&k->refs, 1) == 1) kernel_free(k);
}
