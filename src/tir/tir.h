/*
 * tir.h -- the loop-level IR (TensorIR-like).
 *
 * A loop function (mt_tfunc) takes buffers and computes into some of them with
 * loops, blocks and stores. It is what `@T.prim_func` source means, and what
 * the printer (tir/printer.c) prints, in that same syntax.
 *
 * Two forms share these nodes:
 *
 *  - Block form (after legalization and fusion, before lowering). Work is in
 *    blocks: a TS_BLOCK has iteration variables, each spatial ('S') or reduce
 *    ('R') with a domain [0, extent), bound to expressions of the enclosing
 *    loop variables (its iter_values), an optional init statement run before
 *    the first reduce iteration, the regions it reads and writes, and its body.
 *    Buffers are n-dimensional and indexed with one expression per dim.
 *
 *        for i, j in T.grid(2, 3):
 *            with T.block("add"):
 *                vi, vj = T.axis.remap("SS", [i, j])
 *                out[vi, vj] = a[vi, vj] + b[vi, vj]
 *
 *  - Lowered form (after passes/tir/lower_blocks.c and flatten_buffers.c): no
 *    blocks; every buffer is one-dimensional (flat, row-major) and accessed
 *    with one index. This is what codegen accepts.
 *
 * Loops are `min, extent` (exclusive end), as in Halide and TVM.
 *
 * Host and device. After passes/tir/split_host_device.c a program's lowered
 * functions are of two sorts: host functions, which the executor calls, and
 * device functions, which a host function runs with a TS_LAUNCH statement.
 * A device function says how it is called in its "kind" attribute
 * (T.func_attr({"kind": "parallel_body"})); MT_KIND_PARALLEL_BODY is the
 * CPU's parallel loop body:
 *
 *     def k_par0(begin: T.int64, end: T.int64, <captures>...):
 *         for i in range(begin, end): ...
 *
 * run by `T.launch("k_par0", <captures>..., grid=(n,), min=m)` on chunks
 * [m + b, m + e) of [m, m + n) at once, one call per chunk.
 *
 * GPU kernels. A function compiled for a CUDA target (mt_tfunc_target(f)->kind
 * == MT_TARGET_CUDA) is a host function that launches kernels. Its CUDA
 * schedule (schedule/gpu_*.c) writes each kernel as a nest of loops bound to
 * GPU indices (MT_FOR_THREAD, thread_tag "blockIdx.x" ... "threadIdx.z"),
 * and split_host_device makes each outermost blockIdx loop a device function
 * of kind "cuda_kernel" (MT_KIND_CUDA_KERNEL):
 *
 *     def add_kernel0(a: T.Buffer((n,), "float32"), out: ..., n: T.int64):
 *         T.func_attr({"kind": "cuda_kernel"})
 *         for bx in T.thread_binding(T.ceildiv(n, 256), thread="blockIdx.x"):
 *             for tx in T.thread_binding(256, thread="threadIdx.x"):
 *                 if bx * 256 + tx < n:
 *                     out[bx * 256 + tx] = a[bx * 256 + tx] * 2.0
 *
 * launched by `T.launch("add_kernel0", a, out, n, grid=(T.ceildiv(n, 256),),
 * block=(256,))`. A kernel's params are its captures in launch order:
 * buffers (global memory) and scalars (int64 dims, scalar params in their
 * dtype); it has no sym vars. Its body is, outermost, the loops bound to
 * blockIdx.x (then .y, .z, each directly inside the previous), min 0, each
 * extent the launch's grid dim; inside them anything of the flat lowered
 * form: serial loops, ifs, lets, TS_ALLOC of per-thread (MT_SCOPE_LOCAL) or
 * per-block (MT_SCOPE_SHARED) buffers of constant size, and loops bound to
 * threadIdx.x/y/z, min 0, constant extent equal to the launch's block dim.
 *
 * Phases. An outermost threadIdx loop (one inside no other threadIdx loop)
 * is a phase: every thread of the block runs its body with its own index.
 * What is outside the phases (the blockIdx loops, serial loops around
 * phases, allocations, lets, ifs on values that do not depend on a thread)
 * is run by all threads of a block alike, so it never stores to memory.
 * Phases are separated by barriers: a phase sees every store of the
 * phases before it in the block (CUDA: __syncthreads() after each phase
 * but the kernel's last). Within a phase threads see only their own
 * stores; a warp shuffle (T.shfl_xor, IN_SHFL_XOR) reads another lane's
 * value at the same point of the phase, and stands directly in it (no
 * if or loop around it: every lane of the warp reaches it), and a
 * T.wmma_store's stores are seen by its whole warp after it. A per-thread buffer allocated outside the phases keeps each
 * thread's values from one phase to the next (registers, in CUDA). This
 * is what both the CUDA C backend (codegen/cuda_c.c) and the emulation
 * (passes/tir/emulate_gpu.c: each phase a serial loop over the threads)
 * rely on.
 *
 * Nodes are immutable once built and shared freely; a pass that changes
 * something builds new nodes (the mutator returns the same pointer when
 * nothing changed). Identity of variables and buffers is by pointer.
 *
 * Source places: a statement and a function carry the mt_loc of the source
 * that made them (legalization gives each the graph binding's place, so a
 * fused function's blocks each name their own op's line). mt_ts_copy and
 * the mutator keep it: what a mutator hook returns for a statement gets
 * that statement's place when it has none. A pass that builds further
 * statements in place of one gives them its place (mt_ts_at); a builder
 * that makes a whole nest stamps it once (mt_tstmt_fill_loc). Giving a
 * place to a statement that has none is the one write allowed to a built
 * node: it changes neither meaning nor printing. The printer does not show
 * places; the verifier (tir/verify.h) names them. Expressions carry none,
 * except a load the user wrote (mt_texpr.loc, for run-time bounds checks).
 *
 * Calling convention of a compiled loop function (codegen and executor rely on
 * it):  void name(p0, p1, ..., s0, s1, ...)  where p_i are the params in
 * order -- a buffer param is a pointer to its element type, a scalar param is
 * passed by value in its dtype -- and s_j are the function's sym_vars (the
 * symbolic dims used in buffer shapes) as int64_t, in order. That is a host
 * function's; a device function is called as its kind says (a parallel body:
 * by the runtime, through the backend's trampoline).
 */
#ifndef MT_TIR_TIR_H
#define MT_TIR_TIR_H

#include <stdbool.h>
#include <stdint.h>

#include "minitriton.h"
#include "support/arena.h"
#include "support/diag.h"
#include "target/target.h"

typedef struct mt_texpr mt_texpr;
typedef struct mt_tstmt mt_tstmt;
typedef struct mt_tvar mt_tvar;
typedef struct mt_tbuffer mt_tbuffer;
typedef struct mt_tfunc mt_tfunc;

/* ---- variables ----------------------------------------------------------- */

/* A scalar variable: loop variable, block iteration variable, let-bound
 * value, symbolic dim or scalar parameter. */
struct mt_tvar {
    const char *name; /* as printed; unique names are the printer's concern */
    mt_dtype dtype;   /* loop and index variables are MT_INT64 */
    int id;           /* creation order, for stable printing and hashing */
};

/* ---- buffers ------------------------------------------------------------- */

/* Where a buffer lives. The wmma scopes are a warp's tensor-core fragments
 * (GPU kernels only; see IN_WMMA_FILL ... below): a buffer of n * 256
 * elements holds n 16 x 16 fragments, fragment f at [f * 256, f * 256 +
 * 256), element (r, c) at f * 256 + r * 16 + c -- A's fragments (i, k)
 * float16 or bfloat16, B's (k, j) of the same dtype, the accumulators (i, j) float32. Every lane
 * of the warp holds the warp's fragments (CUDA: nvcuda::wmma::fragment,
 * spread over the lanes' registers); only the wmma intrinsics touch them. */
typedef enum mt_scope {
    MT_SCOPE_GLOBAL, MT_SCOPE_SHARED, MT_SCOPE_LOCAL,
    MT_SCOPE_WMMA_A, MT_SCOPE_WMMA_B, MT_SCOPE_WMMA_ACC,
    MT_SCOPE_COUNT_
} mt_scope;

/* "global", "shared", "local", "wmma.matrix_a", "wmma.matrix_b",
 * "wmma.accumulator"; and back (0, or -1 for another name). */
const char *mt_scope_str(mt_scope s);
int mt_scope_from_str(const char *name, mt_scope *out);
static inline bool mt_scope_is_fragment(mt_scope s) { return s >= MT_SCOPE_WMMA_A && s <= MT_SCOPE_WMMA_ACC; }

/* An n-dimensional array in memory. Compact row-major: element (i0..in-1)
 * lives at offset sum(i_k * prod(shape[k+1..])). */
struct mt_tbuffer {
    const char *name;
    mt_dtype dtype;
    int ndim;          /* 0 for a scalar buffer: accessed as b[()] */
    mt_texpr **shape;  /* ndim extents, MT_INT64 exprs (imm, or sym var) */
    mt_scope scope;
    int id;
};

/* ---- expressions --------------------------------------------------------- */

/* X(kind, printed operator or name). Binary kinds use a, b; unary use a. */
#define MT_TEXPR_LIST(X)                                                    \
    X(TE_INT, "int")          /* ival: integer or bool immediate */         \
    X(TE_FLOAT, "float")      /* fval: floating immediate */                \
    X(TE_VAR, "var")          /* var */                                     \
    X(TE_LOAD, "load")        /* buf[idx0, ..., idx(n-1)] */                \
    X(TE_ADD, "+") X(TE_SUB, "-") X(TE_MUL, "*")                            \
    X(TE_DIV, "/")            /* float division; integer: truncating */     \
    X(TE_FLOORDIV, "//")      /* Python floor division */                   \
    X(TE_FLOORMOD, "%")       /* Python modulo (sign of divisor) */         \
    X(TE_MIN, "T.min") X(TE_MAX, "T.max")                                   \
    X(TE_EQ, "==") X(TE_NE, "!=") X(TE_LT, "<") X(TE_LE, "<=")              \
    X(TE_GT, ">") X(TE_GE, ">=")   /* compare: result dtype MT_BOOL */      \
    X(TE_AND, "and") X(TE_OR, "or") /* on bool */                           \
    X(TE_NOT, "not")          /* a: bool */                                 \
    X(TE_NEG, "-")            /* a: arithmetic negation */                  \
    X(TE_SELECT, "T.Select")  /* cond ? a : b, both evaluated */            \
    X(TE_CAST, "T.Cast")      /* a converted to dtype */                    \
    X(TE_CALL, "call")        /* intrin(args...) */                         \
    X(TE_RAMP, "T.Ramp")      /* vector [a, a+b, ..., a+(lanes-1)b] */      \
    X(TE_BROADCAST, "T.Broadcast") /* vector of lanes copies of a */          \
    X(TE_SHUFFLE, "T.Shuffle") /* lanes picked from the concatenation of args */

typedef enum mt_texpr_kind {
#define MT_X_(k, s) k,
    MT_TEXPR_LIST(MT_X_)
#undef MT_X_
    TE_COUNT_
} mt_texpr_kind;

/* Intrinsics: X(kind, name as in T.<name>, arity). The math ones (before
 * IN_MATH_COUNT_) take float operands of the call's dtype. Then the GPU's:
 *
 *   T.shfl_xor(value, lane_mask, width)   (IN_SHFL_XOR) the value of
 *       `value` in the lane (lane ^ lane_mask) of this thread's warp, as
 *       CUDA's __shfl_xor_sync over the full warp. Typed like value (float16,
 *       bfloat16, float32, float64, int32, int64); lane_mask and width
 *       are int32 immediates, width a power of two of at most the warp size,
 *       lane_mask a power of two below width. Every lane of the warp must
 *       reach it together, so it is valid only as the whole value of a store
 *       directly in a phase of a GPU kernel: under the phase's threadIdx.x
 *       loop (whose extent the warp size divides) through sequences and
 *       lets only -- no if, no loop, no allocation between -- and value
 *       holds no other shuffle
 *       (tir/verify.c; docs/tir.md, "Warp shuffles").
 *
 * Tensor-core tiles (CUDA's WMMA API, m16n16k16, float16 or bfloat16 inputs
 * -- one dtype per intrinsic; bfloat16 where the target's mma_bf16 says so --
 * float32 accumulation), each the whole value of a T.evaluate; their arguments
 * are addresses: `buf[off]` (a TE_LOAD) names element off of buf, and a
 * fragment is named by its first element (`acc[f * 256]`, off a multiple
 * of 256). ldm is an int32 immediate, the leading dimension in elements.
 *
 *   T.wmma_fill(acc[f], v)            every element of accumulator f = v (float32)
 *   T.wmma_load_a(a[f], src[o], ldm)  A's fragment f: (i, k) = src[o + k * ldm + i]
 *                                     (column-major; src a shared buffer of a's dtype)
 *   T.wmma_load_b(b[f], src[o], ldm)  B's fragment f: (k, j) = src[o + k * ldm + j]
 *   T.wmma_mma(acc[f], a[g], b[h])    acc_f(i, j) += sum over k of a_g(i, k) b_h(k, j),
 *                                     products exact, sums in float32
 *   T.wmma_store(dst[o], acc[f], ldm) dst[o + i * ldm + j] = acc_f(i, j) (float32
 *                                     shared dst); a warp barrier on both sides:
 *                                     every lane of the warp sees these stores
 *                                     after it, in the same phase
 *
 * A warp executes each together, so like a shuffle every lane of the warp
 * must reach it: directly in a phase of a GPU kernel whose extent the warp
 * divides, through sequences, lets, allocations and loops of constant
 * bounds only (no if). Memory it reads was stored in an earlier phase (or
 * by the warp's own wmma_store). Typed int32 (evaluated for effect).
 *
 *   T.prefetch(buf[i])   a hint: bring the cache line that holds element i
 *                        of buf toward the core (LLVM's llvm.prefetch, for a
 *                        read, into L2 and up). It reads nothing and changes
 *                        nothing: an address outside buf is harmless (never
 *                        checked, never a fault), and a target without the
 *                        instruction (CUDA C) drops it. The whole value of a
 *                        T.evaluate, typed int32; its argument a load with
 *                        scalar indices as written, though passes may turn
 *                        it into another expression (a producer inlined),
 *                        which code generation then drops too. */
#define MT_INTRIN_LIST(X)                                                     \
    X(IN_EXP, "exp", 1) X(IN_LOG, "log", 1) X(IN_SQRT, "sqrt", 1)             \
    X(IN_RSQRT, "rsqrt", 1) X(IN_SIN, "sin", 1) X(IN_COS, "cos", 1)           \
    X(IN_TANH, "tanh", 1) X(IN_SIGMOID, "sigmoid", 1) X(IN_ERF, "erf", 1)     \
    X(IN_ABS, "abs", 1) X(IN_FLOOR, "floor", 1) X(IN_CEIL, "ceil", 1)         \
    X(IN_ROUND, "round", 1) X(IN_POW, "pow", 2) X(IN_FMA, "fma", 3)           \
    X(IN_SHFL_XOR, "shfl_xor", 3)                                             \
    X(IN_WMMA_FILL, "wmma_fill", 2) X(IN_WMMA_LOAD_A, "wmma_load_a", 3)       \
    X(IN_WMMA_LOAD_B, "wmma_load_b", 3) X(IN_WMMA_MMA, "wmma_mma", 3)         \
    X(IN_WMMA_STORE, "wmma_store", 3) X(IN_PREFETCH, "prefetch", 1)

typedef enum mt_intrin {
#define MT_X_(k, s, n) k,
    MT_INTRIN_LIST(MT_X_)
#undef MT_X_
    IN_COUNT_
} mt_intrin;

#define IN_MATH_COUNT_ IN_SHFL_XOR /* the math intrinsics are those before it */
static inline bool mt_intrin_is_wmma(mt_intrin in) { return in >= IN_WMMA_FILL && in <= IN_WMMA_STORE; }
/* The math the CPU code expands per use: an inline polynomial of dozens of
 * instructions (exp, log, tanh, sigmoid, erf: codegen/llvm_math.c) or a
 * libm call per lane (sin, cos, pow). */
static inline bool mt_intrin_is_expanded(mt_intrin in) {
    return in == IN_EXP || in == IN_LOG || in == IN_TANH || in == IN_SIGMOID || in == IN_ERF || in == IN_SIN ||
           in == IN_COS || in == IN_POW;
}
enum { MT_WMMA_FRAG = 256 }; /* elements of a 16 x 16 fragment */

struct mt_texpr {
    mt_texpr_kind kind;
    mt_dtype dtype;    /* element type of the result */
    int lanes;         /* 1 = scalar; > 1 a vector (after vectorize) */
    int64_t ival;      /* TE_INT */
    double fval;       /* TE_FLOAT */
    mt_tvar *var;      /* TE_VAR */
    mt_texpr *a, *b;   /* operands; TE_RAMP: base a, stride b */
    mt_texpr *cond;    /* TE_SELECT */
    mt_tbuffer *buf;   /* TE_LOAD */
    mt_texpr **args;   /* TE_LOAD: indices (nargs = buf->ndim); TE_CALL: args;
                        * TE_SHUFFLE: the vectors (1 or 2, one dtype and width) */
    int nargs;
    mt_intrin intrin;  /* TE_CALL */
    const int *lane;   /* TE_SHUFFLE: lane i of the result is lane lane[i] of
                        * args[0] ++ args[1] (lanes of them; shared, never changed) */
    mt_loc loc;        /* TE_LOAD: where the user wrote the subscript (line 0:
                        * unknown or compiler-made); kept by copies, for the
                        * run-time bounds checks (passes/tir/check_bounds.c) */
};

/* ---- statements ---------------------------------------------------------- */

/* An argument of a launch: a buffer, or a scalar (or vector) value. */
typedef struct mt_targ {
    mt_tbuffer *buf;  /* a buffer argument, or */
    mt_texpr *value;  /* a value argument (exactly one of the two is set) */
} mt_targ;

/* What a TS_LAUNCH runs, and over what. The arguments match the callee's
 * params after those its kind implies (parallel_body: begin and end). A
 * GPU kernel's launch fills grid and block; a CPU parallel body's, grid[0]
 * and min. Extents are int64 expressions of the host function. */
typedef struct mt_tlaunch {
    mt_tfunc *callee;        /* the device function */
    mt_targ *args;           /* nargs arguments, in the callee's param order */
    int nargs;
    mt_texpr *grid[3];       /* grid extents x, y, z (NULL: 1); parallel_body: iterations */
    mt_texpr *block[3];      /* threads per block x, y, z (NULL: 1; GPU kernels) */
    mt_texpr *shared_bytes;  /* dynamic shared memory per block (NULL: none; GPU kernels) */
    mt_texpr *min;           /* parallel_body: the first iteration (NULL: 0) */
} mt_tlaunch;

typedef enum mt_for_kind {
    MT_FOR_SERIAL, MT_FOR_PARALLEL, MT_FOR_VECTORIZED, MT_FOR_UNROLLED, MT_FOR_THREAD
} mt_for_kind;

typedef enum mt_iter_kind { MT_ITER_SPATIAL, MT_ITER_REDUCE } mt_iter_kind;

/* A block iteration variable: var ranges over [0, extent). */
typedef struct mt_titer {
    mt_tvar *var;
    mt_texpr *extent;
    mt_iter_kind kind;
} mt_titer;

/* A rectangular buffer region: dim k covers [min[k], min[k] + extent[k]). */
typedef struct mt_tregion {
    mt_tbuffer *buf;
    mt_texpr **min;
    mt_texpr **extent;
} mt_tregion;

#define MT_TSTMT_LIST(X)                                                     \
    X(TS_FOR)     /* for var in range(min, min + extent): body */            \
    X(TS_BLOCK)   /* with T.block(name): iter vars, init, body */            \
    X(TS_STORE)   /* buf[idx...] = value */                                  \
    X(TS_SEQ)     /* stmts in order */                                       \
    X(TS_IF)      /* if cond: then_s else: else_s (may be NULL) */           \
    X(TS_LET)     /* var = value; body (scalar, immutable) */                \
    X(TS_ALLOC)   /* buffer allocated for the extent of body */              \
    X(TS_EVAL)    /* evaluate value for its effect */                        \
    X(TS_LAUNCH)  /* run a device function: launch (callee, args, extents) */ \
    X(TS_CHECK)   /* if not cond: stop the kernel, reporting an out-of-bounds access */

typedef enum mt_tstmt_kind {
#define MT_X_(k) k,
    MT_TSTMT_LIST(MT_X_)
#undef MT_X_
    TS_COUNT_
} mt_tstmt_kind;

struct mt_tstmt {
    mt_tstmt_kind kind;
    mt_loc loc;              /* where the user wrote it (line 0: unknown) */
    /* TS_FOR */
    mt_tvar *var;            /* also TS_LET */
    mt_texpr *min, *extent;
    mt_for_kind for_kind;
    const char *thread_tag;  /* MT_FOR_THREAD: "threadIdx.x", ... */
    mt_tstmt *body;          /* FOR, BLOCK, LET, ALLOC */
    /* TS_STORE */
    mt_tbuffer *buf;         /* also TS_ALLOC */
    mt_texpr **idx;
    int nidx;
    mt_texpr *value;         /* STORE, LET, EVAL */
    /* TS_SEQ */
    mt_tstmt **stmts;
    int nstmts;
    /* TS_IF */
    mt_texpr *cond;
    mt_tstmt *then_s, *else_s;
    /* TS_BLOCK */
    const char *name;
    mt_titer *iters;         /* niters iteration variables ... */
    mt_texpr **iter_values;  /* ... and the value each is bound to */
    int niters;
    mt_texpr *predicate;     /* T.where(...) or NULL */
    mt_tregion *reads, *writes;
    int nreads, nwrites;
    mt_tstmt *init;          /* with T.init(): or NULL */
    mt_tbuffer **allocs;     /* T.alloc_buffer inside the block */
    int nallocs;
    /* TS_LAUNCH */
    mt_tlaunch *launch;      /* what it runs (its own node: shared, immutable) */
    /* TS_CHECK: `T.check_bounds(cond, "load"|"store", "name", (idx...), (dims...))`.
     * When cond (bool) is false, the kernel stops: the access of buffer
     * `name` (a load, or a store when check_store) at loc, with the index
     * values idx[0..nidx) against the dims dims[0..nidx) (int64 each), is
     * reported (MT_ERR_RUNTIME from mt_kernel_run) and nothing after it runs.
     * Uses cond, name, idx, nidx and: */
    mt_texpr **dims;         /* the buffer's dims as the user declared them */
    bool check_store;        /* the access is a store */
};

/* ---- functions ----------------------------------------------------------- */

typedef struct mt_tparam {
    mt_tbuffer *buf; /* a buffer param, or */
    mt_tvar *var;    /* a scalar param (exactly one of the two is set) */
    int lanes;       /* var: > 1 a vector of that many lanes (a parallel body's
                        capture of a vector let); 0 or 1 a scalar */
} mt_tparam;

typedef struct mt_tattr {
    const char *key, *value; /* T.func_attr({"key": "value"}) */
} mt_tattr;

/* The "kind" attribute of a device function (absent on host functions). */
#define MT_ATTR_KIND "kind"
#define MT_KIND_PARALLEL_BODY "parallel_body" /* CPU: (begin, end, captures...) */
#define MT_KIND_CUDA_KERNEL "cuda_kernel"     /* GPU: (captures...), see "GPU kernels" */
/* A GPU schedule's occupancy request: blocks of its kernels that must fit
 * on one SM at once ("2"); the CUDA C caps registers to match
 * (__launch_bounds__(threads, 2)). split_host_device copies it from the
 * host function to each kernel. */
#define MT_ATTR_MIN_BLOCKS "min_blocks_per_sm"

struct mt_tfunc {
    const char *name;
    mt_loc loc;           /* where the user wrote it (line 0: unknown) */
    mt_tparam *params;
    int nparams;
    int num_outputs;      /* the last num_outputs buffer params are written */
    mt_tvar **sym_vars;   /* symbolic dims used in param shapes (int64) */
    int nsym;
    mt_tstmt *body;
    mt_tattr *attrs;
    int nattrs;
    mt_tbuffer **allocs;  /* function-level T.alloc_buffer (block form) */
    int nallocs;
    bool hand_written;    /* written by the user (@T.prim_func), not made by the
                           * compiler from graph ops: what check_bounds checks */
    bool unproven;        /* hand-written with an access the front end could
                           * neither prove in nor out of its buffer's constant
                           * dims: checked at run time even without the option */
    mt_loc unproven_at;   /* the first such access */
    const mt_target_desc *target; /* what it is compiled for (set by the pipeline
                                   * before scheduling; NULL: see mt_tfunc_target) */
    const struct mt_sched_step *trace; /* the schedule primitives that made it, newest
                                        * first (schedule/trace.h), or NULL */
    const struct mt_knobs *knobs; /* values for its schedule rule's knobs (from a
                                   * tuning log or the tuner; schedule/knobs.h), or
                                   * NULL: the rule's own choices. Not printed. */
    const struct mt_knobs *chosen; /* the knob values the rule that wrote it in lowered
                                    * form chose (given or its own), which given back
                                    * make the same code; NULL: none. Not printed. */
};

/* ---- construction (tir/tir.c) --------------------------------------------
 * All take the arena first and never return NULL. */
mt_tvar *mt_tvar_new(mt_arena *a, const char *name, mt_dtype dtype);
mt_tbuffer *mt_tbuffer_new(mt_arena *a, const char *name, mt_dtype dtype, int ndim,
                           mt_texpr *const *shape);
mt_tbuffer *mt_tbuffer_new_const(mt_arena *a, const char *name, mt_dtype dtype, int ndim,
                                 const int64_t *shape);

mt_texpr *mt_te_int(mt_arena *a, mt_dtype dtype, int64_t v);
mt_texpr *mt_te_i64(mt_arena *a, int64_t v); /* MT_INT64 immediate */
mt_texpr *mt_te_float(mt_arena *a, mt_dtype dtype, double v);
mt_texpr *mt_te_var(mt_arena *a, mt_tvar *v);
mt_texpr *mt_te_load(mt_arena *a, mt_tbuffer *buf, mt_texpr *const *idx, int nidx);
/* Binary node; dtype is a's (bool for comparisons); operands must agree. */
mt_texpr *mt_te_bin(mt_arena *a, mt_texpr_kind kind, mt_texpr *x, mt_texpr *y);
mt_texpr *mt_te_unary(mt_arena *a, mt_texpr_kind kind, mt_texpr *x); /* TE_NOT, TE_NEG */
mt_texpr *mt_te_select(mt_arena *a, mt_texpr *cond, mt_texpr *x, mt_texpr *y);
mt_texpr *mt_te_cast(mt_arena *a, mt_dtype dtype, mt_texpr *x); /* x itself if same dtype */
mt_texpr *mt_te_call(mt_arena *a, mt_intrin fn, mt_texpr *const *args, int nargs);
/* T.shfl_xor(value, lane_mask, width) (see MT_INTRIN_LIST). */
mt_texpr *mt_te_shfl_xor(mt_arena *a, mt_texpr *value, int lane_mask, int width);
/* Does e / s (NULL: no) hold a T.shfl_xor anywhere? Does e load anything? */
bool mt_texpr_has_shuffle(const mt_texpr *e);
bool mt_tstmt_has_shuffle(const mt_tstmt *s);
bool mt_texpr_reads_memory(const mt_texpr *e);
/* A tensor-core intrinsic (see MT_INTRIN_LIST), typed int32. */
mt_texpr *mt_te_wmma(mt_arena *a, mt_intrin fn, mt_texpr *x, mt_texpr *y, mt_texpr *z);
/* Is s a T.evaluate of a wmma intrinsic? Does s hold one anywhere? */
bool mt_tstmt_is_wmma(const mt_tstmt *s);
bool mt_tstmt_has_wmma(const mt_tstmt *s);
/* T.prefetch(load), typed int32 (see MT_INTRIN_LIST). Is s a T.evaluate of
 * one? Is s a T.evaluate whose loads name addresses (a wmma intrinsic or a
 * prefetch), which no pass may turn into values? */
mt_texpr *mt_te_prefetch(mt_arena *a, mt_texpr *load);
bool mt_tstmt_is_prefetch(const mt_tstmt *s);
bool mt_tstmt_takes_addresses(const mt_tstmt *s);
/* The element e prefetches when e is T.prefetch(load), else NULL. It is an
 * address, not a read: only the loads in its indices are accesses
 * (mt_tvisit_expr_children(v, x) visits just those). */
const mt_texpr *mt_te_prefetched(const mt_texpr *e);
mt_texpr *mt_te_ramp(mt_arena *a, mt_texpr *base, mt_texpr *stride, int lanes);
mt_texpr *mt_te_broadcast(mt_arena *a, mt_texpr *x, int lanes);
/* T.Shuffle([x, y], lane): lane i of the result is lane lane[i] of x ++ y
 * (y NULL: of x alone); x and y of one dtype and width; the lanes are
 * copied. As TVM's tir.Shuffle and LLVM's shufflevector. */
mt_texpr *mt_te_shuffle(mt_arena *a, mt_texpr *x, mt_texpr *y, const int *lane, int lanes);
/* Whether e's args are children (TE_LOAD, TE_CALL, TE_SHUFFLE). */
static inline bool mt_te_has_args(const mt_texpr *e) {
    return e->kind == TE_LOAD || e->kind == TE_CALL || e->kind == TE_SHUFFLE;
}
mt_texpr *mt_te_copy(mt_arena *a, const mt_texpr *e); /* shallow copy, to modify */

mt_tstmt *mt_ts_for(mt_arena *a, mt_tvar *var, mt_texpr *min, mt_texpr *extent,
                    mt_for_kind kind, mt_tstmt *body);
mt_tstmt *mt_ts_store(mt_arena *a, mt_tbuffer *buf, mt_texpr *const *idx, int nidx,
                      mt_texpr *value);
mt_tstmt *mt_ts_seq(mt_arena *a, mt_tstmt *const *stmts, int n); /* n == 1: that stmt */
/* stmts in order, nested sequences spliced in (a statement without a place
 * takes its sequence's); n == 1 and no sequence: that stmt. */
mt_tstmt *mt_ts_seq_flat(mt_arena *a, mt_tstmt *const *stmts, int n);
mt_tstmt *mt_ts_if(mt_arena *a, mt_texpr *cond, mt_tstmt *then_s, mt_tstmt *else_s);
mt_tstmt *mt_ts_let(mt_arena *a, mt_tvar *var, mt_texpr *value, mt_tstmt *body);
mt_tstmt *mt_ts_alloc(mt_arena *a, mt_tbuffer *buf, mt_tstmt *body);
mt_tstmt *mt_ts_eval(mt_arena *a, mt_texpr *value);
/* A bounds check (TS_CHECK) of n index values against n dims (arrays copied). */
mt_tstmt *mt_ts_check(mt_arena *a, mt_texpr *cond, bool store, const char *name,
                      mt_texpr *const *idx, mt_texpr *const *dims, int n);
mt_tstmt *mt_ts_block(mt_arena *a, const char *name); /* fill the block fields after */
/* A launch of callee with args[0..nargs) (copied); fill the extents after. */
mt_tstmt *mt_ts_launch(mt_arena *a, mt_tfunc *callee, const mt_targ *args, int nargs);
mt_tstmt *mt_ts_copy(mt_arena *a, const mt_tstmt *s);  /* shallow copy (loc too), to modify */
/* s (NULL: NULL) with the source place loc when it has none yet (and loc
 * is one); a place it has is kept. For a statement a pass has just built
 * in place of one with a place: mt_ts_at(mt_ts_for(...), old->loc). */
mt_tstmt *mt_ts_at(mt_tstmt *s, mt_loc loc);
/* Gives every statement of s (the whole tree, block init and body
 * included) that has no place yet the place loc: for a builder that has
 * just made s (legalization, a rule emitting a loop nest); statements it
 * shares from elsewhere already have theirs. */
void mt_tstmt_fill_loc(mt_tstmt *s, mt_loc loc);

mt_tfunc *mt_tfunc_new(mt_arena *a, const char *name);
/* f itself when body is f's body, else a copy of f with that body (what a
 * pass that rewrites statements returns). */
mt_tfunc *mt_tfunc_with_body(mt_arena *a, mt_tfunc *f, mt_tstmt *body);
void mt_tfunc_add_param(mt_arena *a, mt_tfunc *f, mt_tbuffer *buf, mt_tvar *var);
/* The value of attr key, or NULL; setting replaces the value of a key f has
 * (f's attrs array is its own: functions are built before they are shared). */
const char *mt_tfunc_get_attr(const mt_tfunc *f, const char *key);
void mt_tfunc_set_attr(mt_arena *a, mt_tfunc *f, const char *key, const char *value);

/* The target f is compiled for: f->target, or mt_target_default_cpu() when
 * it has none. Passes and rules read machine facts only from here. */
const mt_target_desc *mt_tfunc_target(const mt_tfunc *f);

/* Facts. */
bool mt_te_is_const_int(const mt_texpr *e, int64_t *value); /* TE_INT? */
const char *mt_texpr_kind_str(mt_texpr_kind k);
const char *mt_intrin_name(mt_intrin fn);
int mt_intrin_arity(mt_intrin fn);
int mt_intrin_from_name(const char *name, mt_intrin *out); /* 0 ok, -1 unknown */

/* ---- printing (tir/printer.c) --------------------------------------------
 * In the @T.prim_func syntax of the language (docs/language.md §2). */
const char *mt_tfunc_print(mt_arena *a, const mt_tfunc *f);
/* The same with every variable and buffer named by order of first
 * appearance ("v", "v_1", ...) and the function named "main": equal for two
 * functions that differ only in names (the tuning log's workload key,
 * schedule/tuning.h). Not meant to be read back. */
const char *mt_tfunc_print_canonical(mt_arena *a, const mt_tfunc *f);
const char *mt_tstmt_print(mt_arena *a, const mt_tstmt *s);
const char *mt_texpr_print(mt_arena *a, const mt_texpr *e);

/* ---- traversal (tir/visitor.c) -------------------------------------------
 * A visitor calls `expr`/`stmt` hooks for every node; a hook that wants the
 * default walk into children calls mt_tvisit_*_children. Hooks left NULL mean
 * "walk the children". The mutator is the same with results: a hook returns
 * the replacement (given the replaced statement's source place when it has
 * none); the default rebuilds a node only when a child changed and
 * otherwise returns the very same pointer. */
typedef struct mt_tvisitor mt_tvisitor;
struct mt_tvisitor {
    void (*expr)(mt_tvisitor *v, const mt_texpr *e);
    void (*stmt)(mt_tvisitor *v, const mt_tstmt *s);
    void *ctx;
};
void mt_tvisit_expr(mt_tvisitor *v, const mt_texpr *e);
void mt_tvisit_stmt(mt_tvisitor *v, const mt_tstmt *s);
void mt_tvisit_expr_children(mt_tvisitor *v, const mt_texpr *e);
/* An expression hook that does not walk into expressions: for walks that
 * look at statements only ({mt_tvisit_no_expr, my_stmt, ctx}). */
void mt_tvisit_no_expr(mt_tvisitor *v, const mt_texpr *e);
void mt_tvisit_stmt_children(mt_tvisitor *v, const mt_tstmt *s);

/* Does e (NULL: no) mention variable x / load from buffer b anywhere? */
bool mt_texpr_uses_var(const mt_texpr *e, const mt_tvar *x);
bool mt_texpr_reads(const mt_texpr *e, const mt_tbuffer *b);
/* Does s (NULL: no) mention variable x in any expression (bounds, indices,
 * values, conditions)? */
bool mt_tstmt_uses_var(const mt_tstmt *s, const mt_tvar *x);
/* Does s (not NULL) hold a bounds check (TS_CHECK) anywhere? */
bool mt_tstmt_has_check(const mt_tstmt *s);

typedef struct mt_tmutator mt_tmutator;
struct mt_tmutator {
    mt_arena *arena;
    mt_texpr *(*expr)(mt_tmutator *m, mt_texpr *e);
    mt_tstmt *(*stmt)(mt_tmutator *m, mt_tstmt *s);
    void *ctx;
};
mt_texpr *mt_tmutate_expr(mt_tmutator *m, mt_texpr *e);
mt_tstmt *mt_tmutate_stmt(mt_tmutator *m, mt_tstmt *s);
mt_texpr *mt_tmutate_expr_children(mt_tmutator *m, mt_texpr *e);
mt_tstmt *mt_tmutate_stmt_children(mt_tmutator *m, mt_tstmt *s);

/* Replace variables: every TE_VAR of vars[i] becomes values[i]. */
mt_texpr *mt_tsubst_expr(mt_arena *a, mt_texpr *e, mt_tvar *const *vars,
                         mt_texpr *const *values, int n);
mt_tstmt *mt_tsubst_stmt(mt_arena *a, mt_tstmt *s, mt_tvar *const *vars,
                         mt_texpr *const *values, int n);

/* Replace a buffer: every load of and store to `from` accesses `to` (same
 * indices; a block's reads/writes regions and allocations are left as
 * they are). */
mt_texpr *mt_tsubst_buffer_expr(mt_arena *a, mt_texpr *e, const mt_tbuffer *from, mt_tbuffer *to);
mt_tstmt *mt_tsubst_buffer_stmt(mt_arena *a, mt_tstmt *s, const mt_tbuffer *from, mt_tbuffer *to);

/* Structural equality of expressions (same kinds, dtypes, values, same
 * variable and buffer pointers). */
bool mt_texpr_equal(const mt_texpr *x, const mt_texpr *y);

#endif
