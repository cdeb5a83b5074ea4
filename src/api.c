/*
 * api.c -- the public functions, and the error boundary.
 *
 * Every entry point that can fail deep inside the compiler opens an error
 * frame (support/diag.h) and turns what it catches into a status and a
 * rendered diagnostic. A compilation's memory is one arena: on failure it is
 * destroyed whole; on success the kernel keeps it (it holds the dumps, the
 * plan and the parameter types) until the kernel's last reference goes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_internal.h"
#include "cache.h"
#include "codegen/codegen.h"
#include "codegen/cuda_c.h"
#include "codegen/nvrtc.h"
#include "minitriton.h"
#include "pipeline.h"
#include "planner/planner.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/memplan.h"
#include "runtime/parallel.h"
#include "runtime/pool.h"
#include "runtime/tensor.h"
#include "support/arena.h"
#include "support/diag.h"
#include "support/blake2s.h"
#include "support/diskcache.h"
#include "support/strbuf.h"

struct mt_context {
    atomic_int refs;      /* the host's, plus one per live kernel */
    mt_backend *backend;  /* code generation for target cpu (codegen.h) */
    int num_threads;
    mt_cache *cache;      /* compiled kernels; closed when the host destroys ctx */
    mt_diskcache *disk;   /* compiled code on disk, shared by processes; NULL when off */
    mt_pool *pool;        /* run buffers (runtime/pool.h); closed when ctx is freed */
    mt_dev *cpu;          /* the CPU device over pool (runtime/device.h); released with ctx */
    mt_dev *test;         /* the test device (mt_context_create_testing), or NULL */
    mt_dev *emulated;     /* the emulated GPU, made for the first emulated run (emu_lock) */
    mt_dev *cuda;         /* the GPU (cuda:0), opened by the first GPU run (emu_lock) */
    char cuda_err[256];   /* why it could not be opened */
    pthread_mutex_t emu_lock;
    mt_thread_pool *threads; /* parallel loops' workers (runtime/parallel.h); joined when ctx is freed */
    mt_target_desc host;  /* the host CPU's target: kernels on the CPU (and the test device) */
    char host_str[256];   /* its text, in every cache key */
    mt_gextern *externs[MT_MAX_EXTERNS]; /* host functions, never changed once registered */
    int nexterns;
    pthread_mutex_t ext_lock; /* nexterns */
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
    mt_compiled front;        /* what the pipeline's stages printed on demand are made from */
    mt_codegen_out code;      /* the backend's module, and what its lazy dumps are made from */
    pthread_mutex_t lock;     /* guards the lazy dumps (the pipeline's; LLVM, ASM) */
    mt_plan plan;
    const char *no_run;       /* why the kernel cannot run here (NULL: it can) */
    bool emulated;            /* its GPU is the context's emulated GPU */
    bool gpu_program;         /* target cuda, not emulated: host code launching kernels */
    /* A GPU program (not emulated): its kernels' cubin and names, and the
     * module loaded on the context's GPU at the first run (lock). */
    void *cubin;
    size_t cubin_size;
    int nkernels;
    const char **kernel_names;
    void **kernel_fns;
    struct mt_dev_module *module;
    mt_gvar **params;         /* the entry's parameter names, types, places */
    int npublic;              /* parameters the caller passes: those not bound */
    int *public_param;        /* [npublic] their indices in params */
    int nentry;               /* the entry's parameters (plan.nparams adds the hoisted values) */
    mt_tensor **bound;        /* [nentry] a bound parameter's value, else NULL */
    bool bound_placed;        /* bound[] moved to their parameters' devices (k->lock) */
    mt_plan once;             /* what is computed once from the bound values (planner.h) */
    mt_tensor **hoisted;      /* [once.nresults] its results, from the first run on (k->lock) */
    mt_gvar **results;
    mt_compile_times times;
    mt_workload *workloads;   /* its loop functions, when compiled for the tuner */
    int nworkloads;
};

/* ---- context --------------------------------------------------------------- */

mt_context *mt_context_create(const mt_context_options *opts) {
    return mt_context_create_testing(opts, false);
}

mt_context *mt_context_create_testing(const mt_context_options *opts, bool test_device) {
    mt_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    char err[256];
    ctx->backend = mt_backend_llvm_cpu_create(err, sizeof err);
    int entries = opts && opts->cache_entries ? opts->cache_entries : MT_CACHE_DEFAULT_ENTRIES;
    ctx->cache = ctx->backend ? mt_cache_create(entries) : NULL;
    ctx->pool = ctx->cache ? mt_pool_create(0) : NULL;
    ctx->num_threads = opts && opts->num_threads > 0 ? opts->num_threads : 0;
    ctx->cpu = ctx->pool ? mt_dev_cpu_create(ctx->pool) : NULL;
    ctx->threads = ctx->cpu ? mt_thread_pool_create(ctx->num_threads) : NULL;
    mt_dev_err derr;
    if (ctx->threads && test_device && !(ctx->test = mt_dev_test_create(0, &derr))) {
        mt_thread_pool_destroy(ctx->threads);
        ctx->threads = NULL;
    }
    if (!ctx->threads) {
        mt_dev_release(ctx->cpu);
        if (ctx->pool) mt_pool_close(ctx->pool);
        if (ctx->cache) mt_cache_destroy(ctx->cache);
        if (ctx->backend) ctx->backend->destroy(ctx->backend);
        free(ctx);
        return NULL;
    }
    if (!opts || opts->cache_max_bytes >= 0) { /* no directory, no memory: simply no disk cache */
        char *dir = mt_diskcache_resolve_dir(opts ? opts->cache_dir : NULL);
        ctx->disk = dir ? mt_diskcache_open(dir, opts ? opts->cache_max_bytes : 0) : NULL;
        free(dir);
    }
    int cores = ctx->num_threads > 0 ? ctx->num_threads : mt_parallel_num_cpus();
    ctx->backend->describe(ctx->backend, &ctx->host, cores);
    ctx->host.test_device = test_device;
    mt_target_str(&ctx->host, ctx->host_str, sizeof ctx->host_str);
    pthread_mutex_init(&ctx->emu_lock, NULL);
    pthread_mutex_init(&ctx->ext_lock, NULL);
    atomic_init(&ctx->refs, 1);
    return ctx;
}

struct mt_dev *mt_context_test_device(mt_context *ctx) { return ctx ? ctx->test : NULL; }

/* ---- host functions ---------------------------------------------------------- */

static bool extern_name_ok(const char *s) {
    if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
    size_t n = 0;
    for (; *s; s++, n++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '.'))
            return false;
    return n <= 64;
}

static mt_status check_extern_args(const mt_extern_arg *args, int n, const char *what, mt_diag *diag) {
    for (int i = 0; i < n; i++) {
        if ((unsigned)args[i].dtype >= MT_DTYPE_COUNT_ || args[i].ndim < -1 || args[i].ndim > MT_MAX_RANK) {
            char msg[128];
            snprintf(msg, sizeof msg, "mt_context_register_extern: %s %d has dtype %d and rank %d", what, i,
                     (int)args[i].dtype, args[i].ndim);
            mt_diag_set(diag, MT_ERR_INVALID_ARG, NULL, NULL, MT_NOLOC, msg);
            return MT_ERR_INVALID_ARG;
        }
    }
    return MT_OK;
}

static mt_status register_fail(mt_diag *diag, mt_status st, const char *msg, const char *name) {
    char text[256];
    snprintf(text, sizeof text, "mt_context_register_extern: %s%s%.64s%s", msg, name ? " '" : "",
             name ? name : "", name ? "'" : "");
    mt_diag_set(diag, st, NULL, NULL, MT_NOLOC, text);
    return st;
}

/* One allocation: the record, its dtypes and ranks, its name. */
static mt_gextern *new_extern(const char *name, void *fn, const mt_extern_arg *in, int nin,
                              const mt_extern_arg *out, int nout) {
    int n = nin + nout;
    size_t len = strlen(name) + 1;
    mt_gextern *e = malloc(sizeof *e + sizeof(mt_dtype) * (size_t)n + sizeof(int) * (size_t)n + len);
    if (!e) return NULL;
    mt_dtype *dt = (mt_dtype *)(e + 1);
    int *nd = (int *)(dt + n);
    char *nm = (char *)(nd + n);
    for (int i = 0; i < n; i++) {
        const mt_extern_arg *x = i < nin ? &in[i] : &out[i - nin];
        dt[i] = x->dtype;
        nd[i] = x->ndim;
    }
    memcpy(nm, name, len);
    *e = (mt_gextern){nm, fn, nin, nout, dt, nd};
    return e;
}

mt_status mt_context_register_extern(mt_context *ctx, const char *name, void *fn, const mt_extern_arg *inputs,
                                     int ninputs, const mt_extern_arg *outputs, int noutputs, mt_diag *diag) {
    mt_diag_clear(diag);
    if (!ctx || !fn) return register_fail(diag, MT_ERR_INVALID_ARG, "context and fn must not be NULL", NULL);
    if (!extern_name_ok(name))
        return register_fail(diag, MT_ERR_INVALID_ARG,
                             "a name is letters, digits, '_' and '.', not starting with a digit, at most 64:",
                             name ? name : "(null)");
    if (ninputs < 0 || noutputs < 1 || ninputs + noutputs > MT_MAX_EXTERN_ARGS ||
        (ninputs && !inputs) || !outputs)
        return register_fail(diag, MT_ERR_INVALID_ARG, "it needs 0 or more inputs and 1 or more outputs, "
                             "at most 32 in all, for", name);
    mt_status st = check_extern_args(inputs, ninputs, "input", diag);
    if (st == MT_OK) st = check_extern_args(outputs, noutputs, "output", diag);
    if (st != MT_OK) return st;
    pthread_mutex_lock(&ctx->ext_lock);
    st = MT_OK;
    for (int i = 0; i < ctx->nexterns && st == MT_OK; i++)
        if (strcmp(ctx->externs[i]->name, name) == 0)
            st = register_fail(diag, MT_ERR_INVALID_ARG, "a host function is already registered as", name);
    if (st == MT_OK && ctx->nexterns == MT_MAX_EXTERNS)
        st = register_fail(diag, MT_ERR_LIMIT, "the context has the most host functions it takes (64); not", name);
    mt_gextern *e = st == MT_OK ? new_extern(name, fn, inputs, ninputs, outputs, noutputs) : NULL;
    if (st == MT_OK && !e) st = register_fail(diag, MT_ERR_NOMEM, "out of memory registering", name);
    if (e) ctx->externs[ctx->nexterns++] = e;
    pthread_mutex_unlock(&ctx->ext_lock);
    return st;
}

/* The host functions registered now, for one compilation. */
static int snapshot_externs(mt_context *ctx, mt_arena *a, const mt_gextern *const **out) {
    pthread_mutex_lock(&ctx->ext_lock);
    int n = ctx->nexterns;
    const mt_gextern **copy = MT_NEW_ARRAY(a, const mt_gextern *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) copy[i] = ctx->externs[i];
    pthread_mutex_unlock(&ctx->ext_lock);
    *out = copy;
    return n;
}

static void context_unref(mt_context *ctx) {
    if (atomic_fetch_sub(&ctx->refs, 1) == 1) {
        mt_cache_destroy(ctx->cache);
        ctx->backend->destroy(ctx->backend);
        mt_dev_release(ctx->cpu);
        mt_dev_release(ctx->test);
        mt_dev_release(ctx->emulated);
        mt_dev_release(ctx->cuda);
        pthread_mutex_destroy(&ctx->emu_lock);
        pthread_mutex_destroy(&ctx->ext_lock);
        for (int i = 0; i < ctx->nexterns; i++) free(ctx->externs[i]);
        mt_pool_close(ctx->pool);
        mt_thread_pool_destroy(ctx->threads);
        mt_diskcache_close(ctx->disk);
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

static void kernel_free(mt_kernel *k) {
    for (int i = 0; k->bound && i < k->nentry; i++) mt_tensor_release(k->bound[i]);
    for (int i = 0; k->hoisted && i < k->once.nresults; i++) mt_tensor_release(k->hoisted[i]);
    free(k->hoisted);
    k->ctx->backend->release(k->ctx->backend, k->code.module);
    if (k->module) k->ctx->cuda->ops->unload(k->ctx->cuda, k->module);
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

/* What a compilation takes besides the source and options: a tuning log
 * (its text, read and checked), and whether the tuner wants the workloads. */
typedef struct tuning_in {
    const char *text, *file;
    bool workloads;
} tuning_in;

static mt_kernel *compile_uncached(mt_context *ctx, const char *source,
                                   const mt_compile_options *opts, const char *file,
                                   const mt_cache_key *key, const tuning_in *tu, mt_diag *diag);
static bool check_bound_params(const mt_compile_options *opts, const char *file, mt_diag *diag);

static mt_status real_gpu(mt_context *ctx, mt_dev **out, mt_dev_err *e);

/* "sm_90" for the context's GPU when there is one and the compiler knows its
 * arch (target/target.c); false otherwise (then sm_90 is the default). */
static bool present_arch(mt_context *ctx, char *buf, size_t cap) {
    mt_dev *gpu;
    mt_dev_err e = {""};
    mt_target_desc t;
    if (real_gpu(ctx, &gpu, &e) != MT_OK) return false;
    snprintf(buf, cap, "sm_%d", mt_dev_cuda_sm(gpu));
    return mt_target_cuda(&t, buf);
}

/* Reads the tuning log at path into *text (malloc'd). */
static bool read_log(const char *path, char **text, mt_diag *diag) {
    FILE *fp = fopen(path, "rb");
    mt_sb sb;
    mt_arena *a = mt_arena_create();
    if (!a) {
        if (fp) fclose(fp);
        mt_diag_set(diag, MT_ERR_NOMEM, path, NULL, MT_NOLOC, "out of memory");
        return false;
    }
    if (!fp) {
        char msg[300];
        snprintf(msg, sizeof msg, "cannot read tuning log: %s", strerror(errno));
        mt_diag_set(diag, MT_ERR_IO, path, NULL, MT_NOLOC, msg);
        mt_arena_destroy(a);
        return false;
    }
    mt_sb_init(&sb, a);
    char buf[4096];
    size_t n;
    while (sb.len <= MT_MAX_TUNING_LOG_BYTES && (n = fread(buf, 1, sizeof buf, fp)) > 0) mt_sb_putn(&sb, buf, n);
    fclose(fp);
    if (sb.len > MT_MAX_TUNING_LOG_BYTES) {
        mt_diag_set(diag, MT_ERR_INVALID_ARG, path, NULL, MT_NOLOC, "tuning log: larger than 256 MiB");
        mt_arena_destroy(a);
        return false;
    }
    if (!mt_tuning_no_nul(mt_sb_str(&sb), sb.len, path, diag)) {
        mt_arena_destroy(a);
        return false;
    }
    *text = strdup(mt_sb_str(&sb));
    mt_arena_destroy(a);
    if (!*text) mt_diag_set(diag, MT_ERR_NOMEM, path, NULL, MT_NOLOC, "out of memory");
    return *text != NULL;
}

bool mt_tuning_no_nul(const char *text, size_t n, const char *file, mt_diag *diag) {
    const char *z = memchr(text, 0, n);
    if (!z) return true;
    int line = 1, col = 1;
    for (const char *p = text; p < z; p++) line += *p == '\n', col = *p == '\n' ? 1 : col + 1;
    mt_diag_set(diag, MT_ERR_INVALID_ARG, file, text, mt_loc_make(line, col), "tuning log: a NUL byte");
    return false;
}

/* Checks a tuning log's text: false with diag at FILE:LINE:COL. */
bool mt_tuning_check(const char *text, const char *file, mt_diag *diag) {
    mt_arena *a = mt_arena_create();
    if (!a) {
        mt_diag_set(diag, MT_ERR_NOMEM, file, NULL, MT_NOLOC, "out of memory");
        return false;
    }
    mt_tuning_log log;
    mt_tuning_error err;
    bool ok = mt_tuning_parse(a, text, file, &log, &err);
    if (!ok) mt_diag_set(diag, MT_ERR_INVALID_ARG, file, text, mt_loc_make(err.line, err.col), err.msg);
    mt_arena_destroy(a);
    return ok;
}

mt_kernel *mt_jit_compile(mt_context *ctx, const char *source, const mt_compile_options *opts,
                          mt_diag *diag) {
    mt_diag_clear(diag);
    if (!opts || !opts->tuning_log) return mt_jit_compile_tuning(ctx, source, opts, NULL, NULL, 0, diag);
    char *text;
    if (!read_log(opts->tuning_log, &text, diag)) return NULL;
    mt_kernel *k = mt_jit_compile_tuning(ctx, source, opts, text, opts->tuning_log, 0, diag);
    free(text);
    return k;
}

mt_kernel *mt_jit_compile_tuning(mt_context *ctx, const char *source, const mt_compile_options *opts,
                                 const char *log_text, const char *log_file, int flags, mt_diag *diag) {
    mt_diag_clear(diag);
    mt_compile_options defaults;
    mt_compile_options_init(&defaults);
    if (!opts) opts = &defaults;
    const char *file = opts->filename ? opts->filename : "<source>";
    tuning_in tu = {log_text, log_file, (flags & MT_COMPILE_WORKLOADS) != 0};
    if (log_text && !mt_tuning_check(log_text, log_file, diag)) return NULL;
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
    if (opts->emulate && opts->target != MT_TARGET_CUDA) {
        mt_diag_set(diag, MT_ERR_INVALID_ARG, file, NULL, MT_NOLOC,
                    "mt_jit_compile: emulate is for target cuda; leave it 0 for target cpu");
        return NULL;
    }
    if (opts->check_bounds && opts->target == MT_TARGET_CUDA && !opts->emulate) {
        mt_diag_set(diag, MT_ERR_UNSUPPORTED, file, NULL, MT_NOLOC,
                    "mt_jit_compile: check_bounds is not supported on a GPU (target cuda without "
                    "emulate); check the kernel under emulate, which runs it on the CPU");
        return NULL;
    }
    if (opts->arch && opts->target != MT_TARGET_CUDA) {
        mt_diag_set(diag, MT_ERR_INVALID_ARG, file, NULL, MT_NOLOC,
                    "mt_jit_compile: arch is for target cuda; leave it NULL for target cpu");
        return NULL;
    }
    mt_target_desc gpu;
    if (opts->target == MT_TARGET_CUDA && !mt_target_cuda(&gpu, opts->arch)) {
        char msg[160];
        snprintf(msg, sizeof msg, "mt_jit_compile: unknown arch '%.40s' (known: %s)", opts->arch,
                 mt_target_cuda_archs());
        mt_diag_set(diag, MT_ERR_INVALID_ARG, file, NULL, MT_NOLOC, msg);
        return NULL;
    }
    /* target cuda without an arch: the present GPU's, when it is one we know */
    mt_compile_options resolved;
    char arch[16];
    if (opts->target == MT_TARGET_CUDA && !opts->arch && !opts->emulate && present_arch(ctx, arch, sizeof arch)) {
        resolved = *opts;
        resolved.arch = arch;
        opts = &resolved;
    }
    int badlen;
    const char *bad = mt_pipeline_unknown_pass(opts->dump_after, &badlen);
    if (bad) {
        char msg[160];
        snprintf(msg, sizeof msg, "mt_jit_compile: dump_after names no pass: '%.*s'", badlen, bad);
        mt_diag_set(diag, MT_ERR_INVALID_ARG, file, NULL, MT_NOLOC, msg);
        return NULL;
    }
    if (!check_bound_params(opts, file, diag)) return NULL;
    /* Without memory for a key the compilation simply bypasses the cache; so
     * does one with bound parameters (the kernel holds their values) or a
     * schedule callback (its choices are not in the key; the disk cache's
     * key has the scheduled code). */
    mt_cache_key key;
    memset(&key, 0, sizeof key);
    bool keyed = opts->nparams == 0 && !opts->schedule && !(flags & MT_COMPILE_UNCACHED) &&
                 mt_cache_key_init(&key, source, opts, ctx->host_str, log_text) == 0;
    mt_kernel *k = keyed ? mt_cache_lookup(ctx->cache, &key) : NULL;
    if (!k) {
        /* The disk cache's part of the key: the same without the options
         * that cannot change code (the filename, the pass dumps), so that a
         * program compiled from another path still hits. */
        mt_cache_key dkey = {0};
        mt_compile_options dopts = *opts;
        dopts.filename = NULL;
        dopts.dump_after = NULL;
        dopts.tuning_log = NULL; /* its text is keyed */
        bool dkeyed = ctx->disk && opts->nparams == 0 && /* bound values: not cached either */
                      !(flags & MT_COMPILE_UNCACHED) &&
                      mt_cache_key_init(&dkey, source, &dopts, ctx->host_str, log_text) == 0;
        double t0 = now_ms();
        k = compile_uncached(ctx, source, opts, file, dkeyed ? &dkey : NULL, &tu, diag);
        mt_cache_key_free(&dkey);
        if (k) k->times.total_ms = now_ms() - t0;
        if (k && keyed) k = mt_cache_insert(ctx->cache, &key, k);
    }
    mt_cache_key_free(&key);
    return k;
}

/* The GPU's target for target cuda (in a: the functions point at it), else
 * NULL. The arch was checked by mt_jit_compile. */
static const mt_target_desc *gpu_target(mt_arena *a, const mt_compile_options *opts) {
    if (opts->target != MT_TARGET_CUDA) return NULL;
    mt_target_desc *t = MT_NEW(a, mt_target_desc);
    mt_target_cuda(t, opts->arch);
    return t;
}

/* The names of the program's GPU kernels, in the order of the CUDA C. */
static void kernel_names(mt_kernel *k, const mt_compiled *c) {
    k->kernel_names = MT_NEW_ARRAY(k->arena, const char *, c->ngpu_device > 0 ? c->ngpu_device : 1);
    k->nkernels = 0;
    for (int i = 0; i < c->ngpu_device; i++) {
        const char *kind = mt_tfunc_get_attr(c->gpu_device[i], MT_ATTR_KIND);
        if (kind && strcmp(kind, MT_KIND_CUDA_KERNEL) == 0)
            k->kernel_names[k->nkernels++] = c->gpu_device[i]->name;
    }
    k->kernel_fns = MT_NEW_ARRAY(k->arena, void *, k->nkernels > 0 ? k->nkernels : 1);
}

/* ptxas's report (registers, spills, shared memory per kernel) as comment
 * lines after the CUDA C. */
static const char *with_ptxas(mt_arena *a, const char *cuda, const mt_nvrtc_out *o, int sm) {
    mt_sb sb;
    mt_sb_init(&sb, a);
    mt_sb_puts(&sb, cuda);
    mt_sb_printf(&sb, "\n// ptxas (NVRTC %d.%d, sm_%d, %.1f ms):\n", mt_nvrtc_version() / 1000,
                 mt_nvrtc_version() % 1000 / 10, sm, o->ms);
    for (int i = 0; i < o->nkernels; i++) {
        const mt_nvrtc_kernel_info *ki = &o->kernels[i];
        mt_sb_printf(&sb, "//   %s: %d registers, %d bytes spill stores, %d bytes spill loads, "
                          "%d bytes shared, %d bytes stack\n",
                     ki->name, ki->registers, ki->spill_store_bytes, ki->spill_load_bytes,
                     ki->shared_bytes, ki->stack_bytes);
    }
    return mt_sb_str(&sb);
}

/* The disk cache's key of a program's cubin: the CUDA C NVRTC compiles, the
 * arch, NVRTC's version and this library's build (which fixes the options
 * it passes). */
static void cubin_key(const char *cuda, int sm, uint8_t key[MT_DISKCACHE_KEY_BYTES]) {
    uint8_t self[32];
    int32_t facts[2] = {sm, mt_nvrtc_version()};
    mt_diskcache_self_id(self);
    mt_blake2s s;
    mt_blake2s_init(&s);
    mt_blake2s_update(&s, "minitriton cubin 1", 18);
    mt_blake2s_update(&s, self, sizeof self);
    mt_blake2s_update(&s, facts, sizeof facts);
    mt_blake2s_update(&s, cuda, strlen(cuda));
    mt_blake2s_final(&s, key);
}

/* The cubin (and the CUDA dump with ptxas's report) from the disk cache:
 * NVRTC does not run (k->times.nvrtc_ms stays 0). */
static bool cubin_from_disk(mt_kernel *k, mt_compiled *c, mt_diskcache *disk,
                            const uint8_t key[MT_DISKCACHE_KEY_BYTES]) {
    mt_diskcache_entry e;
    if (!disk || !mt_diskcache_get(disk, key, &e)) return false;
    bool ok = e.nblobs == 2 && e.blobs[0].len > 0 && e.blobs[1].len > 0 &&
              ((const char *)e.blobs[1].data)[e.blobs[1].len - 1] == 0;
    if (ok) {
        k->cubin = mt_arena_alloc(k->arena, e.blobs[0].len);
        memcpy(k->cubin, e.blobs[0].data, e.blobs[0].len);
        k->cubin_size = e.blobs[0].len;
        c->dumps[MT_STAGE_CUDA] = mt_arena_strdup(k->arena, e.blobs[1].data);
    } else {
        mt_diskcache_count_error(disk);
        mt_diskcache_remove(disk, key);
    }
    mt_diskcache_entry_free(&e);
    return ok;
}

/* A GPU program, not emulated: its host functions (compiled by the LLVM
 * backend like any host code: their launches call the runtime,
 * runtime/gpu_launch.h) and its kernels' CUDA C, compiled by NVRTC when it
 * is there; without NVRTC the kernel compiles (its dumps are made) but
 * cannot run. */
static void gpu_kernels(mt_kernel *k, mt_compiled *c, const mt_target_desc *gpu, mt_diskcache *disk) {
    mt_arena *a = k->arena;
    kernel_names(k, c);
    double t0 = now_ms();
    const char *cuda = mt_cuda_c_emit(a, c->gpu_host, c->nlowered, c->gpu_device, c->ngpu_device);
    k->times.cuda_ms = now_ms() - t0;
    c->dumps[MT_STAGE_CUDA] = cuda;
    char why[256];
    if (k->nkernels == 0) return;
    if (!mt_nvrtc_available(why, sizeof why)) {
        k->no_run = mt_arena_printf(a, "cannot run on the GPU: %s", why);
        return;
    }
    uint8_t key[MT_DISKCACHE_KEY_BYTES];
    cubin_key(cuda, gpu->sm, key);
    if (cubin_from_disk(k, c, disk, key)) return;
    mt_nvrtc_out o;
    char err[512];
    t0 = now_ms();
    mt_status st = mt_nvrtc_compile(cuda, k->name ? k->name : "kernel.cu", gpu->sm, &o, err, sizeof err);
    k->times.nvrtc_ms = now_ms() - t0;
    if (st != MT_OK) mt_fail_noloc(st, "NVRTC: %s", err);
    k->cubin = mt_arena_alloc(a, o.size);
    memcpy(k->cubin, o.image, o.size);
    k->cubin_size = o.size;
    c->dumps[MT_STAGE_CUDA] = with_ptxas(a, cuda, &o, gpu->sm);
    mt_nvrtc_out_free(&o);
    if (disk) { /* the cubin and the dump with ptxas's report */
        const char *dump = c->dumps[MT_STAGE_CUDA];
        mt_diskcache_blob blobs[2] = {{k->cubin, k->cubin_size}, {dump, strlen(dump) + 1}};
        mt_diskcache_put(disk, key, blobs, 2);
    }
}

/* The CUDA C of a GPU program. */
static void gpu_dumps(mt_kernel *k, mt_compiled *c, const mt_target_desc *gpu) {
    if (!gpu) {
        k->unavailable[MT_STAGE_CUDA] = "the kernel is compiled for target cpu (no CUDA C)";
        return;
    }
    if (k->dumps[MT_STAGE_CUDA]) return;
    double t0 = now_ms();
    k->dumps[MT_STAGE_CUDA] =
        mt_cuda_c_emit(k->arena, c->gpu_host, c->nlowered, c->gpu_device, c->ngpu_device);
    k->times.cuda_ms = now_ms() - t0;
}

/* ---- bound parameters ------------------------------------------------------ */

/* opts->params are well formed: names given once, host tensors with data. */
static bool check_bound_params(const mt_compile_options *opts, const char *file, mt_diag *diag) {
    const char *why = NULL, *name = "";
    if (opts->nparams < 0 || (opts->nparams > 0 && !opts->params)) why = "params is NULL or nparams negative";
    for (int i = 0; !why && i < opts->nparams; i++) {
        const mt_bound_param *bp = &opts->params[i];
        name = bp->name ? bp->name : "";
        if (!bp->name || !bp->value) why = "a bound parameter needs a name and a value";
        for (int j = 0; !why && j < i; j++)
            if (strcmp(opts->params[j].name, bp->name) == 0) why = "this parameter is bound twice";
        if (!why && (bp->value->dev || bp->value->device.type != MT_DEVICE_CPU))
            why = "a bound value must be a host tensor (copy it to the host first)";
        if (!why && !mt_tensor_is_contiguous(bp->value)) why = "a bound value must be C-contiguous";
        if (!why && bp->value->nbytes > 0 && !bp->value->data) why = "a bound value has no data";
    }
    if (!why) return true;
    char msg[256];
    snprintf(msg, sizeof msg, "mt_jit_compile: params: %s%s%.64s%s", why, *name ? " ('" : "", name,
             *name ? "')" : "");
    mt_diag_set(diag, MT_ERR_INVALID_ARG, file, NULL, MT_NOLOC, msg);
    return false;
}

/* The types of the bound values, for the builder's checks. */
static int bound_types(mt_arena *a, const mt_compile_options *opts, const mt_gbound **out) {
    mt_gbound *b = MT_NEW_ARRAY(a, mt_gbound, opts->nparams > 0 ? opts->nparams : 1);
    for (int i = 0; i < opts->nparams; i++) {
        const mt_tensor *t = opts->params[i].value;
        b[i].name = mt_arena_strdup(a, opts->params[i].name);
        b[i].type = mt_gtype_scalar(t->dtype);
        b[i].type.ndim = t->ndim;
        for (int d = 0; d < t->ndim; d++) b[i].type.dims[d].value = t->shape[d];
    }
    *out = b;
    return opts->nparams;
}

static const mt_tensor *bound_value(const mt_compile_options *opts, const char *name) {
    for (int i = 0; i < opts->nparams; i++)
        if (strcmp(opts->params[i].name, name) == 0) return opts->params[i].value;
    return NULL;
}

/* The kernel's own copies of its bound values, and the parameters the
 * caller still passes. */
static void keep_bound(mt_kernel *k, const mt_gfunc *entry, const mt_compile_options *opts) {
    int n = entry->nparams;
    k->public_param = MT_NEW_ARRAY(k->arena, int, n > 0 ? n : 1);
    k->npublic = 0;
    if (opts->nparams > 0) k->bound = MT_NEW_ARRAY(k->arena, mt_tensor *, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        const mt_gvar *v = entry->params[i];
        const mt_tensor *src = v->bound ? bound_value(opts, v->name) : NULL;
        if (!src) {
            k->public_param[k->npublic++] = i;
            continue;
        }
        mt_tensor *t = mt_tensor_create(src->dtype, src->ndim, src->shape);
        if (!t) {
            for (int j = 0; j < i; j++) mt_tensor_release(k->bound[j]);
            k->bound = NULL;
            mt_fail(MT_ERR_NOMEM, MT_NOLOC, "out of memory copying bound parameter '%s'", v->name);
        }
        if (src->nbytes) memcpy(t->data, src->data, src->nbytes);
        k->bound[i] = t;
    }
}

/* The plan dump, with what runs once from the bound values. */
static const char *with_once(mt_arena *a, const char *plan, const mt_plan *once) {
    if (once->ninstrs == 0) return plan;
    mt_sb sb;
    mt_sb_init(&sb, a);
    mt_sb_puts(&sb, plan);
    mt_sb_printf(&sb, "# computed once, on the first run, from the bound parameters (%d value%s kept):",
                 once->nresults, once->nresults == 1 ? "" : "s");
    for (int i = 0; i < once->ncalls; i++) mt_sb_printf(&sb, " %s", once->calls[i].name);
    mt_sb_putc(&sb, '\n');
    return mt_sb_str(&sb);
}

/* The bound values on their parameters' devices (the first run moves them;
 * k->lock held). */
static mt_status place_bound(mt_kernel *k, mt_dev_err *e);

/* The tuning log of tu parsed into a (checked before: it parses). */
static const mt_tuning_log *parse_log(mt_arena *a, const tuning_in *tu) {
    if (!tu->text) return NULL;
    mt_tuning_log *log = MT_NEW(a, mt_tuning_log);
    mt_tuning_error err;
    if (!mt_tuning_parse(a, tu->text, tu->file, log, &err)) mt_ice("tuning log changed: %s", err.msg);
    return log;
}

static mt_kernel *compile_uncached(mt_context *ctx, const char *source,
                                   const mt_compile_options *opts, const char *file,
                                   const mt_cache_key *key, const tuning_in *tu, mt_diag *diag) {
    mt_kernel *volatile k = calloc(1, sizeof *k); /* read after a longjmp */
    mt_arena *a = mt_arena_create();
    if (!k || !a) {
        free(k);
        mt_arena_destroy(a);
        mt_diag_set(diag, MT_ERR_NOMEM, file, NULL, MT_NOLOC, "out of memory");
        return NULL;
    }
    k->arena = a;
    mt_arena *volatile la = tu->text ? mt_arena_create() : NULL; /* the log's, freed after the pipeline */
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        if (tu->text && !la) mt_fail_noloc(MT_ERR_NOMEM, "out of memory");
        size_t len = strlen(source);
        k->source = mt_arena_strndup(a, source, len);
        k->filename = mt_arena_strdup(a, file);
        mt_compiled c;
        mt_pipeline_targets targets = {&ctx->host, gpu_target(a, opts), opts->emulate != 0, NULL, 0, NULL, 0};
        targets.nexterns = snapshot_externs(ctx, a, &targets.externs);
        targets.nbound = bound_types(a, opts, &targets.bound);
        targets.tuning = parse_log(la, tu);
        targets.workloads = tu->workloads;
        mt_pipeline_run(a, k->source, len, opts, &targets, &c);
        mt_arena_destroy(la); /* the rules copied what they took (mt_tuning_apply) */
        la = NULL;
        k->workloads = c.workloads;
        k->nworkloads = c.nworkloads;
        k->gpu_program = targets.gpu && !targets.emulate;
        if (k->gpu_program) { /* the host side of the GPU split is what runs here */
            c.lowered = c.gpu_host;
            c.device = c.gpu_device;
            c.ndevice = c.ngpu_device;
        }
        /* the backend works on the kernel functions on as many threads as
         * the context runs parallel loops on */
        int threads = ctx->num_threads > 0 ? ctx->num_threads : mt_parallel_num_cpus();
        mt_codegen_in in = {c.lowered, c.nlowered, c.device, c.ndevice, opts->opt_level, threads};
        /* the disk cache's key has the source, the options that can change
         * code and the target text on top of what codegen hashes
         * (docs/api.md) */
        if (key) {
            in.disk = ctx->disk;
            in.salt = key->bytes;
            in.salt_len = key->len;
            /* the tir-sched dump prints exactly the functions codegen gets,
             * except for an emulated GPU (lowered once more after it) */
            if (!targets.emulate) {
                c.dumps[MT_STAGE_TIR_SCHED] = mt_pipeline_dump(a, &c, MT_STAGE_TIR_SCHED);
                in.tir_text = c.dumps[MT_STAGE_TIR_SCHED];
            }
        }
        ctx->backend->compile(ctx->backend, a, &in, &k->code);
        const mt_codegen_out cg = k->code;
        if (k->gpu_program) gpu_kernels(k, &c, targets.gpu, ctx->disk);
        for (int s = 0; s < MT_STAGE_COUNT_; s++) k->dumps[s] = c.dumps[s];
        k->front.lazy = c.lazy;
        gpu_dumps(k, &c, targets.gpu);
        k->emulated = targets.emulate;
        k->pass_dumps = c.pass_dumps;
        k->npass_dumps = c.npass_dumps;
        k->name = c.entry->name;
        k->params = c.entry->params;
        k->results = c.entry->outputs;
        double cuda_ms = k->times.cuda_ms, nvrtc_ms = k->times.nvrtc_ms;
        k->times = (mt_compile_times){c.ms_frontend, c.ms_graph, c.ms_tir, cg.ms_irgen, cg.ms_opt,
                                      cg.ms_jit, 0, cg.threads, cuda_ms, nvrtc_ms,
                                      cg.ms_disk_read, cg.ms_disk_write, (int)cg.disk};
        mt_plan_build(a, c.module, c.entry, c.lowered, cg.fn_addrs, &k->plan, &k->once);
        k->nentry = c.entry->nparams;
        k->dumps[MT_STAGE_PLAN] = with_once(a, mt_memplan_print(k->plan.mem, &k->plan, arena_alloc_cb, a),
                                            &k->once);
        keep_bound(k, c.entry, opts);
        mt_err_pop(&fr);
    } else {
        mt_err_pop(&fr);
        mt_arena_destroy(la);
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

/* The devices a run may name besides the CPU: the test device, in a
 * context made for the tests (the CUDA device comes with the GPU runtime). */
/* The context's emulated GPU, made on first use. */
static mt_dev *emulated_gpu(mt_context *ctx, mt_dev_err *e) {
    pthread_mutex_lock(&ctx->emu_lock);
    if (!ctx->emulated) ctx->emulated = mt_dev_emulated_gpu_create(0, e);
    mt_dev *d = ctx->emulated;
    pthread_mutex_unlock(&ctx->emu_lock);
    return d;
}

/* The context's GPU, opened on first use (the failure kept for later). */
static mt_status real_gpu(mt_context *ctx, mt_dev **out, mt_dev_err *e) {
    pthread_mutex_lock(&ctx->emu_lock);
    mt_status st = MT_OK;
    if (!ctx->cuda && !ctx->cuda_err[0]) {
        mt_dev_err oe = {""};
        st = mt_dev_cuda_open(0, &ctx->cuda, &oe);
        if (st != MT_OK) snprintf(ctx->cuda_err, sizeof ctx->cuda_err, "%s", oe.msg[0] ? oe.msg : "no GPU");
    }
    *out = ctx->cuda;
    pthread_mutex_unlock(&ctx->emu_lock);
    if (!*out) return mt_dev_fail(e, MT_ERR_UNAVAILABLE, "cuda:0: %s", ctx->cuda_err);
    return MT_OK;
}

/* k's kernels loaded on the GPU (once; k->lock). */
static mt_status load_kernels(mt_kernel *k, mt_dev_err *e) {
    mt_dev *d;
    mt_status st = real_gpu(k->ctx, &d, e);
    if (st != MT_OK) return st;
    pthread_mutex_lock(&k->lock);
    if (!k->module) {
        mt_dev_image img = {.format = MT_IMAGE_CUBIN, .data = k->cubin, .size = k->cubin_size};
        mt_dev_module *m = NULL;
        st = d->ops->load(d, &img, &m, e);
        for (int i = 0; i < k->nkernels && st == MT_OK; i++)
            st = d->ops->function(d, m, k->kernel_names[i], &k->kernel_fns[i], e);
        if (st == MT_OK) k->module = m;
        else if (m) d->ops->unload(d, m);
    }
    pthread_mutex_unlock(&k->lock);
    return st;
}

static mt_status find_device(void *c, mt_device where, mt_dev **out, mt_dev_err *e) {
    const mt_kernel *k = c;
    mt_context *ctx = k->ctx;
    if (ctx->test && where.type == MT_DEVICE_TEST && where.id == 0) {
        *out = ctx->test;
        return MT_OK;
    }
    if (k->emulated && where.type == MT_DEVICE_CUDA && where.id == 0) {
        *out = emulated_gpu(ctx, e);
        return *out ? MT_OK : MT_ERR_NOMEM;
    }
    if (where.type == MT_DEVICE_CUDA && where.id == 0) return real_gpu(ctx, out, e);
    char name[32];
    return mt_dev_fail(e, MT_ERR_UNAVAILABLE, "device %s is not available in this context",
                       mt_device_str(where, name, sizeof name));
}

static mt_device value_device(const mt_kernel *k, int id);
static mt_status device_of(mt_kernel *k, mt_device where, mt_dev **out, mt_dev_err *e);

static mt_status place_bound(mt_kernel *k, mt_dev_err *e) {
    if (k->bound_placed) return MT_OK;
    for (int i = 0; i < k->nentry; i++) {
        mt_device want = value_device(k, i);
        if (!k->bound[i] || want.type == MT_DEVICE_CPU) continue;
        mt_dev *d;
        mt_status st = device_of(k, want, &d, e);
        mt_tensor *t = st == MT_OK ? mt_tensor_create_on(d, k->bound[i]->dtype, k->bound[i]->ndim,
                                                         k->bound[i]->shape)
                                   : NULL;
        if (st == MT_OK && !t) st = mt_dev_fail(e, MT_ERR_NOMEM, "cannot allocate bound parameter '%s' on the device",
                                                k->params[i]->name);
        if (st == MT_OK) st = mt_tensor_copy(t, k->bound[i], e);
        if (st != MT_OK) {
            mt_tensor_release(t);
            return st;
        }
        mt_tensor_release(k->bound[i]);
        k->bound[i] = t;
    }
    k->bound_placed = true;
    return MT_OK;
}

/* The values computed once from the bound ones (k->once), on the first
 * run (k->lock held, bound values placed). Always waited for, no_wait or
 * not: once published, later runs on any stream (or thread) read them with
 * nothing ordering them after this run's stream. */
static mt_status compute_once(mt_kernel *k, const mt_run_env *run_env, mt_run_error *err) {
    if (k->hoisted || k->once.ninstrs == 0) return MT_OK;
    mt_run_env env = *run_env;
    env.no_wait = false;
    mt_tensor *in[64], **ins = k->once.nparams <= 64 ? in : malloc(sizeof *ins * (size_t)k->once.nparams);
    mt_tensor **out = calloc((size_t)(k->once.nresults > 0 ? k->once.nresults : 1), sizeof *out);
    if (!ins || !out) {
        if (ins != in) free(ins);
        free(out);
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return MT_ERR_NOMEM;
    }
    for (int i = 0, j = 0; i < k->nentry; i++)
        if (k->bound[i]) ins[j++] = k->bound[i];
    mt_status st = mt_plan_run(&k->once, &env, ins, k->once.nparams, out, k->once.nresults, err);
    if (ins != in) free(ins);
    if (st != MT_OK) {
        free(out);
        return st;
    }
    k->hoisted = out;
    return MT_OK;
}

/* The full argument list of a kernel with bound parameters: the caller's
 * arguments with the kernel's values in the bound places, then the values
 * computed once (in stack when it holds them, else a new array in *out). */
static mt_status with_bound(mt_kernel *k, const mt_run_env *env, mt_tensor *const *args, int nargs,
                            mt_tensor **stack, int cap, mt_tensor ***out, mt_diag *diag) {
    if (nargs != k->npublic) {
        char msg[128];
        snprintf(msg, sizeof msg, "the kernel takes %d argument%s (%d more are bound), got %d", k->npublic,
                 k->npublic == 1 ? "" : "s", k->nentry - k->npublic, nargs);
        mt_diag_set(diag, MT_ERR_INVALID_ARG, k->filename, NULL, MT_NOLOC, msg);
        return MT_ERR_INVALID_ARG;
    }
    if (nargs > 0 && !args) {
        mt_diag_set(diag, MT_ERR_INVALID_ARG, k->filename, NULL, MT_NOLOC, "mt_kernel_run: args is NULL");
        return MT_ERR_INVALID_ARG;
    }
    mt_dev_err e = {""};
    mt_run_error err;
    memset(&err, 0, sizeof err);
    pthread_mutex_lock(&k->lock);
    mt_status st = place_bound(k, &e);
    if (st != MT_OK) snprintf(err.msg, sizeof err.msg, "%s", e.msg);
    if (st == MT_OK) st = compute_once(k, env, &err);
    pthread_mutex_unlock(&k->lock);
    if (st != MT_OK) {
        char msg[600];
        snprintf(msg, sizeof msg, "bound parameters: %s", err.msg);
        mt_diag_set(diag, st, k->filename, NULL, MT_NOLOC, msg);
        return st;
    }
    int n = k->plan.nparams;
    mt_tensor **full = n <= cap ? stack : malloc(sizeof *full * (size_t)n);
    if (!full) {
        mt_diag_set(diag, MT_ERR_NOMEM, k->filename, NULL, MT_NOLOC, "out of memory");
        return MT_ERR_NOMEM;
    }
    for (int i = 0, j = 0; i < k->nentry; i++) full[i] = k->bound[i] ? k->bound[i] : args[j++];
    for (int i = k->nentry; i < n; i++) full[i] = k->hoisted[i - k->nentry];
    *out = full;
    return MT_OK;
}

void mt_run_options_init(mt_run_options *opts) {
    if (opts) memset(opts, 0, sizeof *opts);
}

mt_status mt_kernel_run(mt_kernel *k, mt_tensor *const *args, int nargs, mt_tensor **results,
                        int nresults, mt_diag *diag) {
    return mt_kernel_run_with(k, args, nargs, results, nresults, NULL, diag);
}

static mt_status run(mt_kernel *k, mt_tensor *const *args, int nargs, mt_tensor **results,
                     int nresults, bool wait, mt_diag *diag);

mt_status mt_kernel_run_with(mt_kernel *k, mt_tensor *const *args, int nargs, mt_tensor **results,
                             int nresults, const mt_run_options *opts, mt_diag *diag) {
    mt_diag_clear(diag);
    if (!k) {
        mt_diag_set(diag, MT_ERR_INVALID_ARG, NULL, NULL, MT_NOLOC, "mt_kernel_run: kernel is NULL");
        return MT_ERR_INVALID_ARG;
    }
    if (k->no_run) {
        mt_diag_set(diag, MT_ERR_UNAVAILABLE, k->filename, NULL, MT_NOLOC, k->no_run);
        return MT_ERR_UNAVAILABLE;
    }
    void *stream = opts ? opts->cuda_stream : NULL;
    if (stream && !k->gpu_program) {
        mt_diag_set(diag, MT_ERR_INVALID_ARG, k->filename, NULL, MT_NOLOC,
                    k->emulated ? "mt_kernel_run_with: a CUDA stream given for a kernel that runs "
                                  "no CUDA GPU (target cuda, emulated)"
                                : "mt_kernel_run_with: a CUDA stream given for a kernel that runs "
                                  "no CUDA GPU (target cpu)");
        return MT_ERR_INVALID_ARG;
    }
    if (opts && opts->no_wait && !stream) {
        mt_diag_set(diag, MT_ERR_INVALID_ARG, k->filename, NULL, MT_NOLOC,
                    "mt_kernel_run_with: no_wait needs a cuda_stream (the caller waits on its own stream)");
        return MT_ERR_INVALID_ARG;
    }
    mt_dev_cuda_run saved = mt_dev_cuda_run_begin(stream); /* NULL: the library's, even when nested */
    mt_status st = run(k, args, nargs, results, nresults, !(opts && opts->no_wait), diag);
    mt_dev_cuda_run_end(saved);
    return st;
}

static mt_status run(mt_kernel *k, mt_tensor *const *args, int nargs, mt_tensor **results,
                     int nresults, bool wait, mt_diag *diag) {
    mt_run_error err;
    mt_run_env env = {.cpu = k->ctx->cpu, .find_device = find_device, .find_ctx = k,
                      .threads = k->ctx->threads,
                      .num_threads = k->ctx->num_threads};
    env.gpu_program = k->gpu_program;
    env.no_wait = !wait;
    if (k->cubin) {
        mt_dev_err e = {""};
        mt_status st = load_kernels(k, &e);
        if (st != MT_OK) {
            mt_diag_set(diag, st, k->filename, NULL, MT_NOLOC, e.msg);
            return st;
        }
        env.ngpu_kernels = k->nkernels;
        env.gpu_kernel_names = k->kernel_names;
        env.gpu_kernels = k->kernel_fns;
    }
    mt_tensor *stack[16], **full = NULL;
    mt_status st = k->bound ? with_bound(k, &env, args, nargs, stack, 16, &full, diag) : MT_OK;
    if (st != MT_OK) return st;
    if (full) args = full, nargs = k->plan.nparams;
    st = mt_plan_run(&k->plan, &env, args, nargs, results, nresults, &err);
    if (full && full != stack) free(full);
    if (st == MT_OK && wait && k->gpu_program && k->ctx->cuda) { /* a run returns when its GPU work is done */
        mt_dev_err e = {""};
        st = k->ctx->cuda->ops->sync(k->ctx->cuda, &e);
        if (st != MT_OK) snprintf(err.msg, sizeof err.msg, "cuda:0: %s", e.msg);
        err.param = err.result = -1, err.line = 0;
    }
    if (st != MT_OK) {
        mt_loc loc = MT_NOLOC;
        if (err.param >= 0 && err.param < k->nentry) loc = k->params[err.param]->loc;
        if (err.line > 0) loc = mt_loc_make(err.line, err.col);
        mt_diag_set(diag, st, k->filename, k->source, loc, err.msg);
    }
    return st;
}

/* ---- dumps and introspection --------------------------------------------- */

/* Makes a dump printed on demand, once (k->lock held): one of the
 * pipeline's stages (mt_pipeline_dump), or the backend's (LLVM, ASM) from
 * its module. */
static void lazy_dump(mt_kernel *k, mt_stage stage) {
    bool front = mt_pipeline_stage_lazy(stage);
    if (k->dumps[stage] || k->unavailable[stage] || (!front && !k->code.dump_src)) return;
    char err[512] = "";
    mt_errframe fr;
    if (MT_TRY(&fr)) {
        mt_backend *be = k->ctx->backend;
        if (front) {
            k->dumps[stage] = mt_pipeline_dump(k->arena, &k->front, stage);
            mt_err_pop(&fr);
            return;
        }
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
    if ((k->ctx->backend->dumps & 1u << stage) || mt_pipeline_stage_lazy(stage)) {
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
    for (int i = 0; i < k->npass_dumps; i++) {
        if (strcmp(k->pass_dumps[i].name, pass) == 0) return k->pass_dumps[i].text;
        if (strcmp(k->pass_dumps[i].pass, pass) == 0) last = k->pass_dumps[i].text;
    }
    return last;
}

int mt_kernel_num_pass_dumps(const mt_kernel *k) { return k ? k->npass_dumps : 0; }

const char *mt_kernel_pass_dump_name(const mt_kernel *k, int i) {
    return k && i >= 0 && i < k->npass_dumps ? k->pass_dumps[i].name : NULL;
}

const char *mt_kernel_pass_dump_at(const mt_kernel *k, int i) {
    return k && i >= 0 && i < k->npass_dumps ? k->pass_dumps[i].text : NULL;
}

int mt_kernel_num_params(const mt_kernel *k) { return k ? k->npublic : -1; }

int mt_kernel_workloads(const mt_kernel *k, const mt_workload **out) {
    *out = k ? k->workloads : NULL;
    return k ? k->nworkloads : 0;
}
int mt_kernel_num_results(const mt_kernel *k) { return k ? k->plan.nresults : -1; }
const char *mt_kernel_name(const mt_kernel *k) { return k ? k->name : NULL; }

static const mt_gvar *param_at(const mt_kernel *k, int i) {
    return k && i >= 0 && i < k->npublic ? k->params[k->public_param[i]] : NULL;
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

static mt_device value_device(const mt_kernel *k, int id) {
    mt_device d = k->plan.values[id].device;
    return d.type ? d : (mt_device){MT_DEVICE_CPU, 0};
}

mt_device mt_kernel_param_device(const mt_kernel *k, int i) {
    return param_at(k, i) ? value_device(k, k->public_param[i]) : (mt_device){0, 0};
}

mt_device mt_kernel_result_device(const mt_kernel *k, int i) {
    return result_at(k, i) ? value_device(k, k->plan.results[i]) : (mt_device){0, 0};
}

/* The device k's runs call `where` (the CPU included). */
static mt_status device_of(mt_kernel *k, mt_device where, mt_dev **out, mt_dev_err *e) {
    if (mt_device_is_cpu(where)) {
        *out = k->ctx->cpu;
        return MT_OK;
    }
    return find_device(k, where, out, e);
}

mt_status mt_kernel_tensor_to(mt_kernel *k, const mt_tensor *src, mt_device where, mt_tensor **out,
                              mt_diag *diag) {
    mt_diag_clear(diag);
    if (!k || !src || !out) {
        mt_diag_set(diag, MT_ERR_INVALID_ARG, NULL, NULL, MT_NOLOC,
                    "mt_kernel_tensor_to: kernel, tensor and out must not be NULL");
        return MT_ERR_INVALID_ARG;
    }
    *out = NULL;
    mt_dev_err e = {""};
    mt_dev *d;
    mt_status st = device_of(k, where, &d, &e);
    mt_tensor *t = NULL;
    if (st == MT_OK) {
        t = mt_tensor_create_on(d, src->dtype, src->ndim, src->shape);
        st = t ? mt_tensor_copy(t, src, &e) : MT_ERR_NOMEM;
        if (!t) snprintf(e.msg, sizeof e.msg, "cannot allocate the tensor on the device");
    }
    if (st != MT_OK) {
        mt_tensor_release(t);
        mt_diag_set(diag, st, NULL, NULL, MT_NOLOC, e.msg);
        return st;
    }
    *out = t;
    return MT_OK;
}

mt_status mt_kernel_compile_times(const mt_kernel *k, mt_compile_times *out) {
    if (!k || !out) return MT_ERR_INVALID_ARG;
    *out = k->times;
    return MT_OK;
}

mt_status mt_context_disk_cache_stats(mt_context *ctx, mt_disk_cache_stats *out) {
    if (!ctx || !out) return MT_ERR_INVALID_ARG;
    mt_diskcache_counts n;
    mt_diskcache_get_counts(ctx->disk, &n);
    *out = (mt_disk_cache_stats){n.hits, n.misses, n.writes, n.errors, n.corrupt, n.evictions,
                                 mt_diskcache_dir(ctx->disk), mt_diskcache_max_bytes(ctx->disk)};
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
