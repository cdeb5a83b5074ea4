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
 * the program, launching each kernel through the device it runs on
 * (runtime/device.h) with its natural C signature (tir.h: buffer pointers,
 * then int64 symbolic dims).
 *
 * Devices. Every value has the device its bytes live on and every call the
 * device it runs on (a zeroed field is the CPU, so plans made before
 * devices existed still run). The planner puts the copies in: a call's
 * buffers must all live on the call's device (mt_plan_prepare refuses a
 * plan where one does not: a missing copy), and MT_I_COPY between values
 * on different devices is the cross-device copy. Control flow may test
 * values on any device (they are read through it).
 */
#ifndef MT_RUNTIME_EXECUTOR_H
#define MT_RUNTIME_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include "minitriton.h"
#include "runtime/device.h"

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
    mt_device device;    /* where its bytes live ({0, 0}: the CPU) */
    int dev;             /* set by mt_plan_prepare: the index of device in mt_plan.devices */
} mt_plan_value;

typedef struct mt_plan_call {
    void *fn;            /* the kernel: its address (host code), or the handle its device's
                            module gave (mt_dev_ops.function) */
    const char *name;    /* for messages */
    int nargs;
    int *args;           /* value ids: inputs then outputs, all on `device` */
    int nsyms;
    int *syms;           /* symbol ids passed after the buffers */
    mt_device device;    /* where it runs ({0, 0}: the CPU) */
    mt_dev_dims dims;    /* grid and block (devices that run host code ignore them) */
    int dev;             /* set by mt_plan_prepare: the index of device in mt_plan.devices */
    bool is_extern;      /* a host function (mt_context_register_extern): fn is called on
                            the host as int fn(DLTensor *args...), whatever the device */
    void *cif;           /* set by mt_plan_prepare: the host call's ffi_cif */
    void **arg_types;    /* set by mt_plan_prepare: ffi_type* per argument */
} mt_plan_call;

/* One instruction of the plan's program. */
typedef enum mt_instr_kind {
    MT_I_CALL,        /* calls[a] */
    MT_I_COPY,        /* value a <- value b (same dtype and shape; across devices when
                         their devices differ: host to device, device to host, or
                         between two devices through the host) */
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
    struct mt_memplan *mem; /* set by mt_plan_prepare: the arenas' plan (runtime/memplan.h);
                               NULL: a block per value */
    int ndevices;        /* set by mt_plan_prepare: the devices the plan names ... */
    mt_device *devices;  /* ... each once; devices[0] is the CPU, named or not */
} mt_plan;

/* Errors of a run (and of mt_plan_prepare): which parameter or result was
 * wrong (-1 when none). */
typedef struct mt_run_error {
    int param;
    int result;
    int line, col;       /* a failed assertion's place, 0 otherwise */
    char msg[512];
} mt_run_error;

/* Checks the plan's devices (at most MT_PLAN_MAX_DEVICES; every call's
 * buffers on the call's device; the CPU is cpu:0), numbers them (the dev
 * fields, p->devices), prepares the host call interface of every call and
 * plans the run's arenas (p->mem, runtime/memplan.h: one per device).
 * Memory for them comes from the same allocator as the plan's arrays (the
 * caller's arena): alloc(ctx, n) returns zeroed memory. Returns MT_OK, or
 * a status with err->msg (err may be NULL): MT_ERR_INTERNAL for a plan the
 * planner got wrong (a missing copy: "kernel 'f' runs on cpu but its
 * argument 'x' is on test:0"), MT_ERR_LIMIT, MT_ERR_NOMEM. */
enum { MT_PLAN_MAX_DEVICES = 8 };
mt_status mt_plan_prepare(mt_plan *p, void *(*alloc)(void *ctx, size_t n), void *ctx,
                          mt_run_error *err);

/* What a run takes from its context. */
typedef struct mt_run_env {
    mt_dev *cpu;          /* the CPU device: its intermediates and new results come from it
                             (its pool); NULL: the heap (mt_dev_cpu_heap) */
    /* The instance of any other device the plan names, once per run and
     * device (e.g. mt_dev_list_find over a mt_dev_list; it may create the
     * device on first use). NULL: the CPU is the only device. */
    mt_status (*find_device)(void *ctx, mt_device where, mt_dev **out, mt_dev_err *e);
    void *find_ctx;       /* find_device's ctx */
    struct mt_thread_pool *threads; /* runs the kernels' parallel loops (NULL: serially) */
    int num_threads;      /* threads for the kernels' parallel loops (0 = the pool's size) */
    /* A GPU program (target cuda, not emulated): its calls are host code
     * that launches these GPU kernels (the program's module as loaded on
     * its GPU, runtime/gpu_launch.h), handed to every launch
     * (mt_dev_launch.host_code, .kernels). */
    bool gpu_program;
    int ngpu_kernels;
    const char *const *gpu_kernel_names;
    void *const *gpu_kernels;
    /* The run ends without waiting for the devices other than the CPU: their
     * work stays queued (mt_run_options.no_wait; a copy still waits). */
    bool no_wait;
} mt_run_env;

/* Runs the plan (see mt_kernel_run for the contract of args/results): each
 * argument must be on its parameter's device and each caller-provided
 * result on its value's device (nothing is copied implicitly); new results
 * are made on their value's device. env may be NULL (the heap CPU device,
 * no other device, default thread count). */
mt_status mt_plan_run(const mt_plan *p, const mt_run_env *env, mt_tensor *const *args, int nargs,
                      mt_tensor **results, int nresults, mt_run_error *err);

#endif
