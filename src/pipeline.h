/*
 * pipeline.h -- the compiler, source to lowered loop functions, as one list
 * of passes (pipeline.c). Code generation and the executor plan are the API
 * layer's (api.c); this stops where the target-independent work does.
 */
#ifndef MT_PIPELINE_H
#define MT_PIPELINE_H

#include "frontend/ast.h"
#include "graph/graph.h"
#include "schedule/tuning.h"
#include "minitriton.h"
#include "support/arena.h"
#include "target/target.h"

typedef struct mt_pass_dump {
    const char *pass; /* the pass */
    const char *name; /* the pass, or pass#1, pass#2, ... for a pass that ran more than once */
    const char *text;
} mt_pass_dump;

/* What the dumps printed on demand are made from (mt_pipeline_dump): the
 * parsed source and the loop functions at the two stages, as they were then
 * (the functions are copied shallowly; their bodies never change once
 * made): printing them was a large part of the front half's time
 * (docs/robustness.md, "Fuzzing"), for dumps few compiles ask for. */
typedef struct mt_pipeline_lazy {
    const mt_ast *ast;     /* stage "ast" */
    mt_tfunc **tir;        /* stage "tir": after inline_producers */
    int ntir;
    mt_tfunc **sched;      /* stage "tir-sched": each host function followed by the device */
    int nsched;            /* functions it launches, each with its target as an attribute */
} mt_pipeline_lazy;

typedef struct mt_compiled {
    const char *dumps[MT_STAGE_COUNT_]; /* text of each stage (NULL: none, or not printed yet:
                                           mt_pipeline_dump prints the stages in lazy) */
    mt_pipeline_lazy lazy;
    mt_gmodule *module;       /* the optimized graph module */
    mt_gfunc *entry;          /* its entry function */
    mt_tfunc **lowered;       /* lowered[i] is module->tfuncs[i], lowered: the host functions */
    int nlowered;
    mt_tfunc **device;        /* the device functions they launch (split_host_device) */
    int ndevice;
    int *first_device;        /* [nlowered + 1]: lowered[i] launches device[first_device[i]..
                                 first_device[i + 1]) */
    /* Target cuda: the program split for the GPU (host functions launching
     * kernels, tir.h "GPU kernels"), what the CUDA C backend prints. NULL
     * otherwise. With emulate, lowered/device above are the same program
     * emulated on the CPU (emulate_gpu); without, they are NULL (the API
     * compiles gpu_host for the CPU: it launches gpu_device's kernels). */
    mt_tfunc **gpu_host;      /* [nlowered] */
    mt_tfunc **gpu_device;    /* the kernels (and CPU parallel bodies) they launch */
    int ngpu_device;
    mt_workload *workloads;   /* [nworkloads]: each loop function for the CPU, when
                                 mt_pipeline_targets.workloads asks (the tuner) */
    int nworkloads;
    mt_pass_dump *pass_dumps; /* recorded after the passes named in dump_after */
    int npass_dumps;
    double ms_frontend, ms_graph, ms_tir; /* phase times */
} mt_compiled;

/* The targets of a compilation and what its context offers: the host
 * CPU's target, and the GPU's for target cuda (NULL otherwise: then
 * host->test_device makes device("gpu") the test device, whose functions
 * are compiled for the host). With a GPU, the program's default device is
 * the GPU (cuda:0), and emulate asks for the CPU emulation of its kernels.
 * externs are the host functions registered on the context; bound, the
 * entry's parameters given values at compile time. */
typedef struct mt_pipeline_targets {
    const mt_target_desc *host;
    const mt_target_desc *gpu;
    bool emulate;
    const mt_gextern *const *externs;
    int nexterns;
    const mt_gbound *bound; /* the entry's parameters bound at compile time */
    int nbound;
    const mt_tuning_log *tuning; /* knobs for the rules (schedule/tuning.h), or NULL */
    bool workloads;         /* fill mt_compiled.workloads */
} mt_pipeline_targets;

/* Runs every pass up to codegen. Errors go through mt_fail. */
void mt_pipeline_run(mt_arena *a, const char *src, size_t len, const mt_compile_options *opts,
                     const mt_pipeline_targets *targets, mt_compiled *out);

/* The text of stage s of c, printed into a from c->lazy when it was not
 * printed during the compile (c->dumps[s]: then that), or NULL when the
 * compile did not make that stage. The same text whenever it is printed.
 * Errors (out of memory) go through mt_fail. */
const char *mt_pipeline_dump(mt_arena *a, const mt_compiled *c, mt_stage s);

/* Is stage s one that mt_pipeline_dump prints on demand? */
bool mt_pipeline_stage_lazy(mt_stage s);

/* The first name in a comma-separated dump_after list that is neither a pass
 * nor "all" (and its length, at most 64), or NULL when every name is one. */
const char *mt_pipeline_unknown_pass(const char *list, int *len);

#endif
