/*
 * executor.h -- runs a compiled graph function.
 *
 * The compiler lowers a graph function to a plan: a table of values (the
 * parameters, constants, intermediates) and a short program of instructions:
 * kernel calls (each naming the values it reads and writes and the symbolic
 * dims it needs), copies, jumps on rank-0 bool values, loop tests and steps
 * on rank-0 integer values, and run-time assertions. The executor knows
 * nothing of the IRs: it checks the arguments against the parameter types,
 * binds symbolic dims, allocates what the caller does not provide, and runs
 * the program, calling each kernel with its natural C signature (tir.h:
 * buffer pointers, then int64 symbolic dims): directly when the ABI allows
 * (executor.c, call_direct), else through libffi.
 */
#ifndef MT_RUNTIME_EXECUTOR_H
#define MT_RUNTIME_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include "minitriton.h"

/* A dim of a value's shape: value >= 0, or the symbol with index sym. */
typedef struct mt_plan_dim {
    int64_t value;
    int sym; /* -1 when constant */
} mt_plan_dim;

typedef enum mt_value_kind { MT_VAL_PARAM, MT_VAL_TEMP, MT_VAL_CONST } mt_value_kind;

typedef struct mt_plan_value {
    mt_value_kind kind;
    int param;           /* MT_VAL_PARAM: its index */
    mt_dtype dtype;
    int ndim;
    mt_plan_dim dims[MT_MAX_RANK];
    const char *name;    /* for messages */
    double fconst;       /* MT_VAL_CONST (rank 0): the value, by dtype */
    int64_t iconst;
} mt_plan_value;

typedef struct mt_plan_call {
    void *fn;            /* the kernel's address */
    const char *name;    /* for messages */
    int nargs;
    int *args;           /* value ids: inputs then outputs */
    int nsyms;
    int *syms;           /* symbol ids passed after the buffers */
    void *cif;           /* prepared ffi_cif (owned by the plan) */
    void **arg_types;    /* ffi_type* per argument */
} mt_plan_call;

/* One instruction of the plan's program. */
typedef enum mt_instr_kind {
    MT_I_CALL,        /* calls[a] */
    MT_I_COPY,        /* value a <- value b (same dtype and shape) */
    MT_I_JUMP,        /* go to target */
    MT_I_JUMP_IF_NOT, /* unless rank-0 value a is true, go to target */
    MT_I_LOOP_TEST,   /* unless a < b (c > 0) or a > b (c < 0), go to target */
    MT_I_LOOP_STEP,   /* a += c (rank-0 integers) */
    MT_I_ASSERT,      /* unless value a is true, fail with message at line:col */
} mt_instr_kind;

typedef struct mt_instr {
    mt_instr_kind kind;
    int a, b, c;         /* value ids (MT_I_CALL: a is the call index) */
    int target;          /* jump target: an instruction index */
    const char *message; /* MT_I_ASSERT */
    int line, col;       /* MT_I_ASSERT: the assert statement */
} mt_instr;

typedef struct mt_plan {
    int nvalues;
    mt_plan_value *values;
    int nparams;         /* values 0..nparams-1 are the params, in order */
    int nresults;
    int *results;        /* value id per result */
    int nsyms;
    const char **sym_names;
    int ncalls;
    mt_plan_call *calls;
    int ninstrs;
    mt_instr *instrs;    /* the program: runs from 0 to ninstrs */
    struct mt_memplan *mem; /* the arena plan (runtime/memplan.h); NULL: a pool block per value */
} mt_plan;

/* Prepares the ffi call interfaces of every call and plans the run's arena
 * (p->mem, runtime/memplan.h). Memory for them comes from the same allocator
 * as the plan's arrays (the caller's arena): alloc(ctx, n) returns zeroed
 * memory. Returns 0, or -1 if libffi refuses a signature or alloc fails. */
int mt_plan_prepare(mt_plan *p, void *(*alloc)(void *ctx, size_t n), void *ctx);

/* Errors of a run: which parameter or result was wrong (-1 when none). */
typedef struct mt_run_error {
    int param;
    int result;
    int line, col;       /* a failed assertion's place, 0 otherwise */
    char msg[512];
} mt_run_error;

/* What a run takes from its context. */
typedef struct mt_run_env {
    struct mt_pool *pool; /* intermediates and new results come from it (NULL: the heap) */
    struct mt_thread_pool *threads; /* runs the kernels' parallel loops (NULL: serially) */
    int num_threads;      /* threads for the kernels' parallel loops (0 = the pool's size) */
} mt_run_env;

/* Runs the plan (see mt_kernel_run for the contract of args/results). env
 * may be NULL (heap allocations, default thread count). */
mt_status mt_plan_run(const mt_plan *p, const mt_run_env *env, mt_tensor *const *args, int nargs,
                      mt_tensor **results, int nresults, mt_run_error *err);

#endif
