/*
 * minitriton.h -- the one public header of libminitriton.
 *
 * minitriton JIT-compiles kernels written in a Python subset (docs/language.md)
 * to native code through LLVM and runs them on the host program's buffers.
 *
 *     mt_context *ctx = mt_context_create(NULL);
 *     mt_diag diag;
 *     mt_kernel *k = mt_jit_compile(ctx, source, NULL, &diag);
 *     if (!k) { fputs(diag.text, stderr); ... }
 *     mt_tensor *out = NULL;
 *     mt_status st = mt_kernel_run(k, args, nargs, &out, 1, &diag);
 *
 * Every handle is opaque. Every function that can fail returns a status (or
 * NULL) and, where a mt_diag is passed, a GCC-style diagnostic. The library
 * never prints, exits or aborts.
 *
 * Threads: a context may be shared by several threads that compile and run at
 * once; a kernel may be run from several threads at once; a tensor must not be
 * written by one thread while another uses it (docs/api.md).
 */
#ifndef MINITRITON_H
#define MINITRITON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MT_BUILDING_LIBRARY)
#define MT_API __attribute__((visibility("default")))
#else
#define MT_API
#endif

#define MT_VERSION_MAJOR 0
#define MT_VERSION_MINOR 1
#define MT_VERSION_PATCH 0
#define MT_VERSION_STRING "0.1.0"

/* Largest tensor rank the library accepts. */
#define MT_MAX_RANK 8

/* ---- status codes --------------------------------------------------------
 * X(NAME, text). MT_OK is 0; everything else is an error. User errors (bad
 * source, bad arguments) are separate from MT_ERR_INTERNAL (a bug in
 * minitriton: please report it with the diagnostic). */
#define MT_STATUS_LIST(X)                                            \
    X(MT_OK, "ok")                                                   \
    X(MT_ERR_SYNTAX, "syntax error")                                 \
    X(MT_ERR_NAME, "name error")                                     \
    X(MT_ERR_TYPE, "type error")                                     \
    X(MT_ERR_SHAPE, "shape error")                                   \
    X(MT_ERR_UNSUPPORTED, "unsupported construct")                   \
    X(MT_ERR_INVALID_ARG, "invalid argument")                        \
    X(MT_ERR_RUNTIME, "runtime error")                               \
    X(MT_ERR_NOMEM, "out of memory")                                 \
    X(MT_ERR_LIMIT, "limit exceeded")                                \
    X(MT_ERR_IO, "i/o error")                                        \
    X(MT_ERR_UNAVAILABLE, "not available")                           \
    X(MT_ERR_INTERNAL, "internal compiler error")

typedef enum mt_status {
#define MT_X_(name, text) name,
    MT_STATUS_LIST(MT_X_)
#undef MT_X_
    MT_STATUS_COUNT_
} mt_status;

/* ---- element types -------------------------------------------------------
 * X(NAME, "python name", size in bytes). bfloat16 (8 exponent bits, 7
 * mantissa bits: float32's upper half) comes last so that the values of
 * the others stay what they were. */
#define MT_DTYPE_LIST(X)          \
    X(MT_BOOL, "bool", 1)         \
    X(MT_INT8, "int8", 1)         \
    X(MT_UINT8, "uint8", 1)       \
    X(MT_INT32, "int32", 4)       \
    X(MT_INT64, "int64", 8)       \
    X(MT_FLOAT16, "float16", 2)   \
    X(MT_FLOAT32, "float32", 4)   \
    X(MT_FLOAT64, "float64", 8)   \
    X(MT_BFLOAT16, "bfloat16", 2)

typedef enum mt_dtype {
#define MT_X_(name, text, size) name,
    MT_DTYPE_LIST(MT_X_)
#undef MT_X_
    MT_DTYPE_COUNT_
} mt_dtype;

/* ---- stages that mt_kernel_dump can show ---------------------------------
 * X(NAME, "mtc --emit name"). */
#define MT_STAGE_LIST(X)                 \
    X(MT_STAGE_AST, "ast")               \
    X(MT_STAGE_GRAPH, "graph")           \
    X(MT_STAGE_GRAPH_OPT, "graph-opt")   \
    X(MT_STAGE_TIR, "tir")               \
    X(MT_STAGE_TIR_SCHED, "tir-sched")   \
    X(MT_STAGE_LLVM, "llvm")             \
    X(MT_STAGE_ASM, "asm")               \
    X(MT_STAGE_CUDA, "cuda")             \
    X(MT_STAGE_PLAN, "plan") /* the run's memory plan: arena offsets, sizes, lifetimes */ \
    X(MT_STAGE_DOT, "dot")   /* the graph for Graphviz, one cluster per fused group */ \
    X(MT_STAGE_SCHEDULE, "schedule") /* how each kernel was scheduled: a user schedule as \
                                      * @T.schedule text, or the default rule's name */

typedef enum mt_stage {
#define MT_X_(name, text) name,
    MT_STAGE_LIST(MT_X_)
#undef MT_X_
    MT_STAGE_COUNT_
} mt_stage;

typedef enum mt_target { MT_TARGET_CPU = 0, MT_TARGET_CUDA = 1 } mt_target;

/* ---- devices -------------------------------------------------------------
 * Where a tensor's bytes live and where a kernel runs: DLPack's DLDevice
 * (device type and ordinal), with DLPack's type codes. MT_DEVICE_TEST is
 * DLPack's kDLExtDev, which minitriton uses for its test device: host code
 * run against memory kept apart from the host's (tests only; see docs/api.md). */
typedef enum mt_device_type {
    MT_DEVICE_CPU = 1,   /* kDLCPU */
    MT_DEVICE_CUDA = 2,  /* kDLCUDA */
    MT_DEVICE_TEST = 12  /* kDLExtDev */
} mt_device_type;

typedef struct mt_device {
    int32_t type; /* mt_device_type */
    int32_t id;   /* ordinal: cuda:1 is {MT_DEVICE_CUDA, 1} */
} mt_device;

/* ---- diagnostics ---------------------------------------------------------
 * Filled by every call that takes one. On success status is MT_OK and the
 * strings are empty. `text` is the rendered diagnostic, GCC style:
 *
 *     kernel.py:3:12: error: unknown name 'c'
 *         out = a + c
 *                   ^
 *
 * line and col are 1-based; 0 when the error has no place in the source. */
typedef struct mt_diag {
    mt_status status;
    int line;
    int col;
    char message[512]; /* the message alone: "unknown name 'c'" */
    char text[2048];   /* file:line:col: error: message, source line, caret */
} mt_diag;

/* ---- opaque handles ------------------------------------------------------ */
typedef struct mt_context mt_context;
typedef struct mt_kernel mt_kernel;
typedef struct mt_schedule mt_schedule; /* a user schedule in progress (compile callback) */
typedef mt_status (*mt_schedule_fn)(mt_schedule *sch, void *user);
typedef struct mt_tensor mt_tensor;

/* ---- context ------------------------------------------------------------- */
typedef struct mt_context_options {
    int num_threads; /* threads for parallel loops; 0 = one per CPU the process may run on */
    int cache_entries; /* compiled kernels kept for reuse: compiling a source
                        * with options already compiled in this context returns
                        * the same kernel (a new reference); 0 = 256, < 0 = none */
    const char *cache_dir; /* the disk cache of compiled code, shared by processes (docs/api.md,
                            * "The disk cache"): NULL = $MINITRITON_CACHE_DIR ("off" or "":
                            * none), else $XDG_CACHE_HOME/minitriton, else
                            * ~/.cache/minitriton; "" = none; else this directory */
    int64_t cache_max_bytes; /* the disk cache's bound (least recently used entries are
                              * deleted beyond it); 0 = 256 MiB, < 0 = no disk cache */
} mt_context_options;

/* opts may be NULL (defaults). Returns NULL only when out of memory or when
 * LLVM cannot target this machine (see diag when given). */
MT_API mt_context *mt_context_create(const mt_context_options *opts);
MT_API void mt_context_destroy(mt_context *ctx);

/* ---- compilation --------------------------------------------------------- */
typedef struct mt_compile_options {
    const char *filename;  /* shown in diagnostics; default "<source>" */
    const char *entry;     /* entry function; default: the last graph function */
    mt_target target;      /* default MT_TARGET_CPU */
    int opt_level;         /* LLVM optimization level 0..3; default 3 */
    int unroll_threshold;  /* graph-level for-loops up to this count unroll; default 16 */
    const char *dump_after;/* comma-separated pass names to record (mt_kernel_pass_dump) */
    const char *arch;      /* target cuda: "sm_80", "sm_86", "sm_89" or "sm_90"; NULL: the
                            * GPU's, else sm_90. Must be NULL for target cpu. */
    int emulate;           /* target cuda: nonzero runs the GPU kernels on the CPU under the
                            * CUDA execution model (blocks, threads, shared memory, barriers;
                            * GPU memory kept apart from the host's): see docs/gpu.md.
                            * Must be 0 for target cpu. */
    /* Bound parameters (model weights): each names a parameter of the entry
     * function and gives its value, which the kernel copies and keeps; the
     * kernel then no longer takes that parameter (mt_kernel_num_params and
     * the argument list of mt_kernel_run leave it out). The value must be a
     * host tensor of the parameter's dtype and of its shape, which must be
     * fixed (no symbolic dims). A compile with bound parameters is not
     * cached (a kernel holds its own copy of the values). */
    const struct mt_bound_param *params;
    int nparams;
    /* Nonzero: loads and stores of hand-written loop functions (@T.prim_func)
     * that the compiler cannot prove in bounds are checked at run time; an
     * access outside its buffer stops the kernel before it touches memory,
     * and mt_kernel_run returns MT_ERR_RUNTIME naming the buffer, the index,
     * the shape and the access's place (docs/language.md, "Bounds checks").
     * Functions the compiler makes from graph ops are not checked (their
     * shapes are proven). Target cpu, and target cuda with emulate; refused
     * for a real GPU. Default 0. */
    int check_bounds;
    /* A user schedule from C: called for each loop function of the program
     * that no @T.schedule of the source names, before the default rules,
     * with schedule_user. It may apply primitives (mt_schedule_split, ...;
     * see "User schedules" below); a function it changed is left alone by
     * the default rules. A status other than MT_OK fails the compile. A
     * compile with a callback is not kept in the context's cache (the
     * callback's choices are not part of the key); the disk cache, keyed by
     * the scheduled code, still applies. Default NULL. */
    mt_schedule_fn schedule;
    void *schedule_user;
    /* The path of a tuning log (JSON lines, written by mt_tune or mtc
     * --tune) whose knobs the schedule rules use for the kernels it has a
     * record of (docs/schedule.md, "Tuning"); NULL: none. Precedence: a
     * schedule in the source, then the schedule callback, then the log,
     * then the default rule. An
     * unreadable file is MT_ERR_IO; a malformed line MT_ERR_INVALID_ARG at
     * FILE:LINE:COL. The log's content (not its path) is part of the key. */
    const char *tuning_log;
    /* Every other field is part of the compile cache's key (src/cache.c). */
} mt_compile_options;

/* A parameter bound at compile time (mt_compile_options.params). */
typedef struct mt_bound_param {
    const char *name;      /* the entry function's parameter */
    const mt_tensor *value;
} mt_bound_param;

/* Fills opts with the defaults. */
MT_API void mt_compile_options_init(mt_compile_options *opts);

/* Compiles `source` (NUL-terminated). opts may be NULL. On failure returns
 * NULL and fills diag (if non-NULL). The kernel holds a reference on ctx.
 * A source and options this context has compiled before give the kernel
 * made then, from the context's cache (see cache_entries). */
MT_API mt_kernel *mt_jit_compile(mt_context *ctx, const char *source,
                                 const mt_compile_options *opts, mt_diag *diag);

/* Runs the kernel. args[i] is the i-th parameter (a scalar parameter is a
 * rank-0 tensor). results has nresults slots, one per returned value: a slot
 * holding NULL receives a new tensor (release it with mt_tensor_release); a
 * slot holding a tensor is written in place (it must have the result's dtype
 * and shape, and must not alias an argument). diag may be NULL. */
MT_API mt_status mt_kernel_run(mt_kernel *k, mt_tensor *const *args, int nargs,
                               mt_tensor **results, int nresults, mt_diag *diag);

/* How a run goes (mt_kernel_run_with). Initialize with mt_run_options_init. */
typedef struct mt_run_options {
    /* A CUstream (of the GPU's primary context, the one the CUDA runtime
     * uses) on which the run queues its GPU work -- copies and launches --
     * after the work the caller queued there before; NULL: the library's
     * own stream. The run returns when that work is done (it synchronizes
     * the stream), so results are ready when it returns, as with
     * mt_kernel_run. Only for kernels that run on a CUDA GPU: given for
     * another (the CPU, the emulation) it is MT_ERR_INVALID_ARG. */
    void *cuda_stream;
    /* Nonzero, with cuda_stream: the run returns once its GPU work is
     * queued on that stream, without waiting for it (as a CUDA launch
     * does); its GPU results are ready when the stream gets past that work
     * (cuStreamSynchronize, an event), and the arguments must stay alive
     * until then. Every copy between the host and the GPU still waits
     * for the work queued before it: a program that copies (its constants
     * to the GPU, a result to the CPU, a GPU scalar that control flow
     * reads) waits there. A kernel's fault shows at a later call. Without
     * cuda_stream it is MT_ERR_INVALID_ARG. 0: the run returns when its
     * work is done. */
    int no_wait;
} mt_run_options;

/* Fills opts with the defaults (the library's own stream). */
MT_API void mt_run_options_init(mt_run_options *opts);

/* mt_kernel_run with options (NULL: the defaults, which is mt_kernel_run). */
MT_API mt_status mt_kernel_run_with(mt_kernel *k, mt_tensor *const *args, int nargs,
                                    mt_tensor **results, int nresults,
                                    const mt_run_options *opts, mt_diag *diag);

/* The text of one stage, owned by the kernel (valid until it is released).
 * NULL when that stage does not exist for this kernel; then
 * mt_kernel_dump_unavailable() says why. */
MT_API const char *mt_kernel_dump(mt_kernel *k, mt_stage stage);
MT_API const char *mt_kernel_dump_unavailable(mt_kernel *k, mt_stage stage);

/* The IR text recorded after pass `pass` (named in opts->dump_after, or
 * "all"), or NULL. A pass that ran more than once is recorded each time as
 * pass#1, pass#2, ... (simplify#2); its bare name gives its last run. */
MT_API const char *mt_kernel_pass_dump(const mt_kernel *k, const char *pass);
/* The recorded dumps in the order the passes ran: how many, and the i-th's
 * name ("fuse_ops", "simplify#1") and text; NULL when i is out of range. */
MT_API int mt_kernel_num_pass_dumps(const mt_kernel *k);
MT_API const char *mt_kernel_pass_dump_name(const mt_kernel *k, int i);
MT_API const char *mt_kernel_pass_dump_at(const mt_kernel *k, int i);

/* Introspection of parameters and results. A dim of -1 is symbolic: its name
 * is given by mt_kernel_param_dim_name. Index out of range gives -1 / NULL. */
MT_API int mt_kernel_num_params(const mt_kernel *k);
MT_API int mt_kernel_num_results(const mt_kernel *k);
MT_API const char *mt_kernel_param_name(const mt_kernel *k, int i);
MT_API mt_dtype mt_kernel_param_dtype(const mt_kernel *k, int i);
MT_API int mt_kernel_param_ndim(const mt_kernel *k, int i);
MT_API int64_t mt_kernel_param_dim(const mt_kernel *k, int i, int axis);
MT_API const char *mt_kernel_param_dim_name(const mt_kernel *k, int i, int axis);
MT_API mt_dtype mt_kernel_result_dtype(const mt_kernel *k, int i);
MT_API int mt_kernel_result_ndim(const mt_kernel *k, int i);
MT_API int64_t mt_kernel_result_dim(const mt_kernel *k, int i, int axis);
MT_API const char *mt_kernel_name(const mt_kernel *k);

/* The device parameter i (result i) lives on: the CPU, or for target cuda
 * the GPU, {MT_DEVICE_CUDA, 0} (with emulate: the context's emulated GPU,
 * which answers to that name); {0, 0} when i is out of range.
 * mt_kernel_run takes every argument on its parameter's device (another
 * device is an error naming both: no silent copies). */
MT_API mt_device mt_kernel_param_device(const mt_kernel *k, int i);
MT_API mt_device mt_kernel_result_device(const mt_kernel *k, int i);

/* A new tensor on device `where`, as k's runs name it (for an emulated
 * kernel, cuda:0 is the emulated GPU), with src's dtype, shape and values
 * (src: on the CPU, or on a device of k's; C-contiguous). *out receives it
 * (release it with mt_tensor_release); it keeps its device alive past k.
 * MT_ERR_UNAVAILABLE when k's runs have no such device. */
MT_API mt_status mt_kernel_tensor_to(mt_kernel *k, const mt_tensor *src, mt_device where,
                                     mt_tensor **out, mt_diag *diag);

MT_API void mt_kernel_retain(mt_kernel *k);
MT_API void mt_kernel_release(mt_kernel *k);

/* ---- autotuning -------------------------------------------------------------
 * mt_tune compiles `source` with opts (target cpu; tuning_log ignored),
 * then, for each kernel (loop function) of the program whose schedule rule
 * has knobs, measures the default schedule and candidate knob values on
 * this machine -- random inputs of the parameters' shapes, the median of
 * several warm runs of the whole program -- and keeps the fastest. The
 * records (one per kernel and target) replace those of the same kernel in
 * the log at opts->log, or are appended; the file is rewritten atomically.
 * A record is never slower than the default: where no candidate beats it,
 * the record has no knobs. Parameters with symbolic dims are
 * MT_ERR_UNSUPPORTED (give the sizes in the source); target cuda is
 * MT_ERR_UNAVAILABLE (tuning must measure on the GPU; not done yet). */
typedef struct mt_tune_result {
    const char *func;      /* the kernel's name in the dumps */
    const char *rule;      /* the schedule rule whose knobs were searched */
    const char *knobs;     /* the chosen values, "mr=4 parallel=0" ("" : the default's) */
    double default_ms;     /* the program's median time with the default schedule */
    double best_ms;        /* ... with the chosen knobs */
    int trials;            /* candidates measured */
} mt_tune_result;

typedef struct mt_tune_options {
    const char *log;       /* the tuning log to update; required */
    int trials;            /* candidates measured per kernel at most; default 64 */
    double seconds;        /* time per kernel at most, compiling included; default 60 */
    /* Called after each kernel is tuned (NULL: nothing); r is valid during the call. */
    void (*report)(void *user, const mt_tune_result *r);
    void *user;
} mt_tune_options;

MT_API void mt_tune_options_init(mt_tune_options *opts);
MT_API mt_status mt_tune(mt_context *ctx, const char *source, const mt_compile_options *opts,
                         const mt_tune_options *tune, mt_diag *diag);

/* ---- compile latency and the compile cache --------------------------------
 * Wall-clock milliseconds of each phase of the compilation that made k. A
 * kernel handed out by the cache reports the compilation that made it. */
typedef struct mt_compile_times {
    double frontend_ms; /* parse, build the graph IR */
    double graph_ms;    /* graph passes and fusion */
    double tir_ms;      /* TIR passes: inline_producers, schedule, lowering */
    double irgen_ms;    /* TIR -> LLVM IR */
    double opt_ms;      /* LLVM optimization at opt_level */
    double jit_ms;      /* machine code generation and linking (ORC JIT) */
    double total_ms;    /* the whole compilation: the above and the rest (plan) */
    int llvm_threads;   /* threads LLVM ran on: each kernel function of the
                         * program and each of its parallel loops' bodies is
                         * optimized and compiled on its own, up to the
                         * context's num_threads at once. With more than
                         * one, opt_ms and jit_ms split the wall time of that
                         * overlapped work in proportion to its CPU time. */
    double cuda_ms;     /* target cuda: printing the kernels' CUDA C */
    double nvrtc_ms;    /* target cuda: NVRTC compiling it to a cubin (0 when emulated) */
    double disk_read_ms;  /* the disk cache: making the key, reading and verifying the entry */
    double disk_write_ms; /* the disk cache: writing the entry after a miss */
    int disk;           /* the disk cache's part: MT_DISK_* */
} mt_compile_times;

/* What the disk cache did for a compilation (mt_compile_times.disk). */
enum {
    MT_DISK_OFF = 0,      /* not used: off, or this code's names were in use in the context */
    MT_DISK_HIT = 1,      /* the machine code came from the disk: LLVM did not run */
    MT_DISK_MISS = 2,     /* compiled, and written to the disk */
    MT_DISK_UNSAVED = 3,  /* compiled; writing it failed (unwritable directory, full disk) */
};

/* Fills *out. MT_ERR_INVALID_ARG when k or out is NULL. */
MT_API mt_status mt_kernel_compile_times(const mt_kernel *k, mt_compile_times *out);

typedef struct mt_cache_stats {
    int64_t hits;      /* mt_jit_compile calls answered from the cache */
    int64_t misses;    /* calls that compiled (successfully or not) */
    int64_t evictions; /* kernels dropped to make room (least recently used) */
    int entries;       /* kernels held now */
    int capacity;      /* most kernels held; 0 when the cache is off */
} mt_cache_stats;

/* Counters of ctx's compile cache. MT_ERR_INVALID_ARG when ctx or out is NULL. */
MT_API mt_status mt_context_cache_stats(mt_context *ctx, mt_cache_stats *out);

typedef struct mt_disk_cache_stats {
    int64_t hits;      /* compilations whose machine code came from the disk */
    int64_t misses;    /* lookups that found no usable entry (corrupt ones included) */
    int64_t writes;    /* entries written */
    int64_t errors;    /* reads or writes that failed (I/O, no space, no permission) */
    int64_t corrupt;   /* entries that did not verify (truncated, damaged, another format) */
    int64_t evictions; /* entries this context deleted to stay under the bound */
    const char *dir;   /* the directory (owned by ctx); NULL when the disk cache is off */
    int64_t max_bytes; /* the bound */
} mt_disk_cache_stats;

/* Counters of ctx's disk cache since the context was made. MT_ERR_INVALID_ARG
 * when ctx or out is NULL. */
MT_API mt_status mt_context_disk_cache_stats(mt_context *ctx, mt_disk_cache_stats *out);

/* ---- tensors -------------------------------------------------------------
 * A tensor is an n-d array: dtype, shape, strides (in elements) and data.
 * Created tensors own 64-byte aligned, zero-filled, C-contiguous memory;
 * wrapped tensors borrow the host's memory (the host keeps it alive). Both are
 * reference counted: release drops one reference. */
MT_API mt_tensor *mt_tensor_create(mt_dtype dtype, int ndim, const int64_t *shape);
MT_API mt_tensor *mt_tensor_wrap(void *data, mt_dtype dtype, int ndim,
                                 const int64_t *shape, const int64_t *strides);
MT_API void mt_tensor_retain(mt_tensor *t);
MT_API void mt_tensor_release(mt_tensor *t);
MT_API void *mt_tensor_data(const mt_tensor *t);
MT_API mt_dtype mt_tensor_dtype(const mt_tensor *t);
MT_API int mt_tensor_ndim(const mt_tensor *t);
MT_API const int64_t *mt_tensor_shape(const mt_tensor *t);
MT_API const int64_t *mt_tensor_strides(const mt_tensor *t);
MT_API int64_t mt_tensor_numel(const mt_tensor *t);
/* Where the tensor's bytes live: {MT_DEVICE_CPU, 0} for every tensor the
 * functions above make; {0, 0} for NULL. */
MT_API mt_device mt_tensor_device(const mt_tensor *t);

/* ---- host functions ---------------------------------------------------------
 * A C function the host program registers on a context, which kernels then
 * call by name in destination-passing style:
 *
 *     y = call_dps_packed("my_norm", (x, w), out_sinfo=Tensor(("n", 64), "float32"))
 *
 * It is called through libffi as
 *
 *     int fn(DLTensor *in_0, ..., DLTensor *out_0, ...)
 *
 * (<dlpack/dlpack.h>), with the inputs then the outputs, which the library
 * allocated with out_sinfo's shapes; it writes the outputs and returns 0,
 * anything else failing the run (MT_ERR_RUNTIME naming it). The tensors are
 * on the device the call is placed on (host memory by default; device
 * memory inside `with device("gpu")`, after that device finished the work
 * before the call); fn runs on the thread calling mt_kernel_run and must
 * not keep the pointers. The registration gives each input's and output's
 * dtype and rank (ndim -1: any); compiles check calls against it, with a
 * diagnostic on the call for an unknown name, a wrong number of inputs or
 * outputs, or a wrong dtype or rank. A name (letters, digits, '_', '.';
 * at most 64) is registered once per context and cannot be replaced or
 * removed; at most MT_MAX_EXTERNS per context, MT_MAX_EXTERN_ARGS values
 * per function. A call whose results are unused may be dropped as dead
 * code, like any op; two equal calls are not merged. */
#define MT_MAX_EXTERNS 64
#define MT_MAX_EXTERN_ARGS 32
typedef struct mt_extern_arg {
    mt_dtype dtype;
    int ndim; /* -1: any rank */
} mt_extern_arg;
MT_API mt_status mt_context_register_extern(mt_context *ctx, const char *name, void *fn,
                                            const mt_extern_arg *inputs, int ninputs,
                                            const mt_extern_arg *outputs, int noutputs,
                                            mt_diag *diag);

/* ---- DLPack ---------------------------------------------------------------
 * Tensors shared with other frameworks (NumPy, PyTorch, CuPy, ...) through
 * DLPack's managed tensors, without copying. Include <dlpack/dlpack.h>
 * (Debian's libdlpack-dev; DLPack 1.0's header for the versioned struct)
 * to fill or read them; this header only names the structs.
 *
 * Import: on success the new tensor owns src and calls src's deleter when
 * its last reference is released (mt_tensor_release); on failure NULL is
 * returned with the reason in diag and src stays the caller's (call its
 * deleter). Taken: CPU memory (kDLCPU, and kDLCUDAHost: pinned host memory)
 * and CUDA device memory (kDLCUDA, kDLCUDAManaged; the GPU must be present:
 * the tensor holds the device, MT_ERR_UNAVAILABLE otherwise); dtypes bool,
 * int8, uint8, int32, int64, float16, float32, float64, bfloat16 with one lane;
 * byte_offset (the data must be aligned to its element size); strides (in
 * elements; NULL means C-contiguous): any are taken, but kernels run only on
 * C-contiguous tensors and refuse others when run. A versioned tensor must
 * be DLPack 1.x; one flagged read-only can be a kernel's argument but not
 * a result slot it writes. The producer's work on the memory must be
 * finished (synchronized) before a kernel reads it.
 *
 * Export: a managed tensor over t's memory holding a reference on t; its
 * deleter (call it exactly once) releases that reference. Device and dtype
 * are t's (minitriton's device codes are DLPack's); shape and strides are
 * always given. NULL with diag on a NULL t or when memory runs out. */
struct DLManagedTensor;
struct DLManagedTensorVersioned;
MT_API mt_tensor *mt_tensor_from_dlpack(struct DLManagedTensor *src, mt_diag *diag);
MT_API mt_tensor *mt_tensor_from_dlpack_versioned(struct DLManagedTensorVersioned *src,
                                                  mt_diag *diag);
MT_API struct DLManagedTensor *mt_tensor_to_dlpack(mt_tensor *t, mt_diag *diag);
MT_API struct DLManagedTensorVersioned *mt_tensor_to_dlpack_versioned(mt_tensor *t, mt_diag *diag);

/* ---- names and versions -------------------------------------------------- */
MT_API const char *mt_status_str(mt_status st);
MT_API const char *mt_dtype_str(mt_dtype dt);     /* "float32", ... */
MT_API size_t mt_dtype_size(mt_dtype dt);          /* bytes per element */
MT_API int mt_dtype_from_str(const char *name, mt_dtype *out); /* 0 ok, -1 unknown */
MT_API const char *mt_stage_str(mt_stage st);     /* "graph-opt", ... */
MT_API int mt_stage_from_str(const char *name, mt_stage *out);
MT_API const char *mt_version(void);

/* ---- User schedules from C ---------------------------------------------------
 * Inside an mt_compile_options.schedule callback, the primitives of
 * @T.schedule (docs/schedule.md, "User schedules") on the kernel the
 * callback was given, which is valid only during the call. Blocks and loops
 * are named by handles (ints) that these functions hand out. Each returns
 * MT_OK, or MT_ERR_INVALID_ARG with the function unchanged and the reason
 * in mt_schedule_error ("parallel: loop 'k' drives reduce variable 'vk' of block 'C': ..."): a
 * primitive that would change the result is refused, never applied. */
MT_API const char *mt_schedule_kernel_name(const mt_schedule *sch);
MT_API const char *mt_schedule_error(const mt_schedule *sch); /* the last refusal, or NULL */
/* The schedule applied so far as @T.schedule text (valid during the call). */
MT_API const char *mt_schedule_trace(mt_schedule *sch);
MT_API mt_status mt_schedule_get_block(mt_schedule *sch, const char *name, int *block);
/* The loops around a block, outermost first: at most max into loops, *n set. */
MT_API mt_status mt_schedule_get_loops(mt_schedule *sch, int block, int *loops, int max, int *n);
/* nfactors (2..16) factors, one of them 0 (None: inferred); out gets nfactors loops. */
MT_API mt_status mt_schedule_split(mt_schedule *sch, int loop, const int64_t *factors, int nfactors,
                                   int *out);
MT_API mt_status mt_schedule_fuse(mt_schedule *sch, const int *loops, int n, int *fused);
MT_API mt_status mt_schedule_reorder(mt_schedule *sch, const int *loops, int n);
MT_API mt_status mt_schedule_parallel(mt_schedule *sch, int loop);
MT_API mt_status mt_schedule_vectorize(mt_schedule *sch, int loop);
MT_API mt_status mt_schedule_unroll(mt_schedule *sch, int loop);
/* thread_axis: "blockIdx.x" .. "blockIdx.z", "threadIdx.x" .. "threadIdx.z" (GPU kernels). */
MT_API mt_status mt_schedule_bind(mt_schedule *sch, int loop, const char *thread_axis);
MT_API mt_status mt_schedule_compute_at(mt_schedule *sch, int block, int loop);
MT_API mt_status mt_schedule_compute_inline(mt_schedule *sch, int block);
MT_API mt_status mt_schedule_reverse_compute_at(mt_schedule *sch, int block, int loop);
MT_API mt_status mt_schedule_reverse_compute_inline(mt_schedule *sch, int block);
/* Every float32/float64 x + a * b in the block's body becomes one fused
 * multiply-add, T.fma(a, b, x), rounded once. */
MT_API mt_status mt_schedule_use_fma(mt_schedule *sch, int block);
/* index: which of the block's read (T.reads order) / written buffers; scope
 * "global", "shared" or "local"; *out: the block that copies the cache
 * (cache_write of a reduction into "local": <block>_write_back, which
 * stores the accumulator). */
MT_API mt_status mt_schedule_cache_read(mt_schedule *sch, int block, int index, const char *scope,
                                        int *out);
MT_API mt_status mt_schedule_cache_write(mt_schedule *sch, int block, int index, const char *scope,
                                         int *out);
/* The buffer (by name) that the block reads or writes, which the kernel
 * allocates (a cache_read's or cache_write's copy), stored in the layout of
 * index_map, a lambda as a schedule writes it: "lambda k, j: (j // 16, k,
 * j % 16)" keeps element [k, j] at [j // 16, k, j % 16] (docs/schedule.md,
 * "transform_layout"). A malformed map is refused like any step. */
MT_API mt_status mt_schedule_transform_layout(mt_schedule *sch, int block, const char *buffer,
                                              const char *index_map);
MT_API mt_status mt_schedule_decompose_reduction(mt_schedule *sch, int block, int loop, int *init);
/* Partial results per iteration of loops[0..n); *rf: the block computing them. */
MT_API mt_status mt_schedule_rfactor(mt_schedule *sch, const int *loops, int n, int *rf);
/* A default CPU rule with knobs ("schedule_matmul", "schedule_reduce",
 * "schedule") on the kernel as scheduled so far, with nknobs knobs given
 * by name (the rest the rule's own choices; docs/schedule.md, "Knobs");
 * the kernel is then in lowered form: no primitive applies after it. */
MT_API mt_status mt_schedule_apply_rule(mt_schedule *sch, const char *rule, const char *const *knob_names,
                                        const int64_t *knob_values, int nknobs);

#ifdef __cplusplus
}
#endif
#endif /* MINITRITON_H */
