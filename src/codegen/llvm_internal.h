/*
 * llvm_internal.h -- what the LLVM IR generator (llvm.c, llvm_expr.c) and the
 * compile driver (compile.c) share. Private to src/codegen.
 *
 * llvm.c owns the module, the functions and the statements; llvm_expr.c owns
 * expressions, conversions between dtypes and memory accesses. Both work on
 * one mt_cg, the state of generating one function of one module. llvm_math.c
 * expands float32 exp, log, tanh, sigmoid and erf into inline IR for them.
 *
 * Values in registers use the "compute type" of a dtype; memory uses the
 * "memory type" (they differ for bool: i1 vs i8, and float16: float vs half).
 * See docs/codegen.md for the mapping.
 *
 * Errors are raised with mt_ice (diag.h); mt_llvm_build_module holds an error
 * frame that disposes the builder and the module before passing them on;
 * the parts made for parallel bodies (mt_cg_split) are left to the
 * caller, which disposes them (compile.c).
 */
#ifndef MT_CODEGEN_LLVM_INTERNAL_H
#define MT_CODEGEN_LLVM_INTERNAL_H

#include <llvm-c/Core.h>

#include "codegen/codegen.h"
#include "support/arena.h"
#include "tir/tir.h"

/* A pointer-keyed map (variables and buffers to LLVM values). Open
 * addressing; unbinding stores NULL and keeps the key so chains stay intact. */
typedef struct mt_cg_slot {
    const void *key; /* mt_tvar* or mt_tbuffer*; NULL = empty */
    LLVMValueRef val; /* NULL = not bound (out of scope) */
} mt_cg_slot;

typedef struct mt_cg_map {
    mt_cg_slot *slots; /* cap entries (arena) */
    int cap;           /* power of two, or 0 before the first put */
    int used;          /* keys stored */
} mt_cg_map;

void mt_cg_map_put(mt_arena *a, mt_cg_map *m, const void *key, LLVMValueRef val);
LLVMValueRef mt_cg_map_get(const mt_cg_map *m, const void *key);

/* A module made for one parallel body (mt_llvm_build_module's `split`), in
 * a context of its own; b is NULL once the body is done. */
typedef struct mt_cg_part {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
} mt_cg_part;

/* Where parallel bodies go when they get modules of their own: the
 * parts made so far (arena array, grown by doubling), and what a new module
 * needs. The caller disposes every part's objects, also after an error. */
typedef struct mt_cg_split {
    mt_cg_part *parts;
    int n, cap;
    const char *mod_name, *triple, *data_layout;
} mt_cg_split;

/* State of generating one function. llvm.c's launches generate the
 * parallel body with a copy of this state (fn, f, entry and the two maps
 * replaced) and restore it afterwards: per-function fields added here must
 * be reset there too (gen_run), and fields bound to a context or module
 * (types, builder, module) made again in set_context/enter_part. */
typedef struct mt_cg {
    mt_arena *arena;        /* scratch for names and maps */
    LLVMContextRef ctx;     /* the module's context */
    LLVMModuleRef mod;      /* the module being filled */
    LLVMBuilderRef b;       /* instruction builder, at the end of the current block */
    LLVMValueRef fn;        /* function being generated */
    LLVMBasicBlockRef entry;/* entry block: static allocas, then a branch to the body */
    const mt_tfunc *f;      /* its loop function */
    mt_cg_map vars;         /* mt_tvar* -> value in its compute type */
    mt_cg_map bufs;         /* mt_tbuffer* -> base pointer */
    int in_index;           /* > 0 while generating a buffer index (int64 math gets nsw) */
    int nlaunch;            /* launches in the current kernel function */
    const char *prefix;     /* of every symbol of the module (process-unique) */
    const mt_tbuffer **stream; /* the kernel's buffers written with streaming stores */
    int nstream;
    bool streamed;          /* the current LLVM function made a streaming store */
    bool x86;               /* the target is x86 (streaming stores and their fence) */
    bool avx512;            /* the machine code may use AVX-512F (the JIT's CPU has it) */
    mt_cg_split *split;     /* non-NULL: each parallel body in a module of its own */
    LLVMValueRef *heaps;    /* the heap buffers live at the current point (freed by a
                             * bounds check that stops the function) ... */
    int nheaps, capheaps;   /* ... how many, and the array's room (per function) */
    LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_half, t_f32, t_f64, t_ptr;
} mt_cg;

/* ---- llvm_expr.c ---- */
LLVMTypeRef mt_cg_type(mt_cg *g, mt_dtype t);     /* compute type (scalar) */
LLVMTypeRef mt_cg_mem_type(mt_cg *g, mt_dtype t); /* memory type (scalar) */
LLVMTypeRef mt_cg_vec_type(LLVMTypeRef elem, int lanes); /* elem when lanes == 1 */
int mt_cg_lanes(LLVMValueRef v);
LLVMValueRef mt_cg_splat(mt_cg *g, LLVMValueRef v, int lanes);
LLVMValueRef mt_cg_expr(mt_cg *g, const mt_texpr *e);
/* A bfloat16 element (i16, memory type) as the float it computes in. */
LLVMValueRef mt_cg_bf16_to_float(mt_cg *g, LLVMValueRef v);
/* v (compute type of `from`) converted to `to`. */
LLVMValueRef mt_cg_cast(mt_cg *g, LLVMValueRef v, mt_dtype from, mt_dtype to);
/* buf[idx] = v, where v is in the compute type of vdtype; nidx is 0 or 1. */
void mt_cg_store(mt_cg *g, const mt_tbuffer *buf, mt_texpr *const *idx, int nidx,
                 LLVMValueRef v, mt_dtype vdtype);
/* T.prefetch(buf[i]) (the call e): llvm.prefetch of the element's address;
 * nothing when its argument is no longer a load. */
void mt_cg_prefetch(mt_cg *g, const mt_texpr *e);
/* Declaration of llvm.<name> overloaded on types[0..n). */
LLVMValueRef mt_cg_intrinsic(mt_cg *g, const char *name, LLVMTypeRef *types, int n,
                             LLVMTypeRef *fnty);

/* ---- llvm_stream.c ---- */
/* Decides which of f's buffers stream (g->stream). */
void mt_cg_stream_plan(mt_cg *g, const mt_tfunc *f);
/* *ptr = v as a streaming store when buf streams and v is `bytes` bytes, a
 * multiple of 64 (true); otherwise emits nothing (false). */
bool mt_cg_stream_store(mt_cg *g, const mt_tbuffer *buf, LLVMValueRef ptr, LLVMValueRef v,
                        int bytes);
/* An sfence when the current function made streaming stores. */
void mt_cg_stream_fence(mt_cg *g);

/* ---- llvm_math.c ---- */
/* Inline, vectorizable float32 implementations (x: float or a vector of
 * float); accuracy in docs/codegen.md. */
LLVMValueRef mt_cg_math_exp(mt_cg *g, LLVMValueRef x);
LLVMValueRef mt_cg_math_log(mt_cg *g, LLVMValueRef x);
LLVMValueRef mt_cg_math_tanh(mt_cg *g, LLVMValueRef x);
LLVMValueRef mt_cg_math_sigmoid(mt_cg *g, LLVMValueRef x);
LLVMValueRef mt_cg_math_erf(mt_cg *g, LLVMValueRef x);

/* ---- llvm.c ---- */
/* Builds, in ctx, a verified module holding one function per funcs[i]
 * (host functions), named prefix + funcs[i]->name, and the parallel bodies
 * they launch (prefix + name + ".body" and prefix + name, internal), for
 * the given triple, CPU features ("+avx512f,...", the JIT's: which
 * instructions the code may use) and data layout. With split (zeroed, or holding earlier
 * parts) each parallel body (its .body function external) goes into a
 * verified module of its own in split->parts, which the kernel's module
 * declares and calls. On error the module is disposed and the error raised
 * (mt_ice); the parts made stay in split for the caller to dispose. */
LLVMModuleRef mt_llvm_build_module(mt_arena *a, LLVMContextRef ctx, const char *mod_name,
                                   const char *prefix, const char *triple, const char *features,
                                   const char *data_layout, mt_tfunc *const *funcs, int n,
                                   mt_cg_split *split);

/* Raises unless every function in->device is a parallel body launched
 * exactly once by the functions in->host and in->device, and every launch
 * runs one of them. */
void mt_llvm_check_launches(mt_arena *a, const mt_codegen_in *in);

#endif
