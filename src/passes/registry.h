/*
 * registry.h -- every pass of the compiler, by name, in pipeline order.
 *
 * One table (registry.c) is the pass list: the graph passes, then the TIR
 * passes, with one slot where the target's schedule rules run. Each target
 * kind has its rule list (first the specific rules, then the fallback, as
 * TVM's dlight tries them). The pipeline (src/pipeline.c) walks the table;
 * dump_after names and the tests find passes here; no other file lists
 * pass names.
 *
 *   graph:  fold_constant cse dead_code realize_devices to_dataflow legalize
 *           annotate_pattern fuse_ops fuse_tir dead_code
 *   TIR:    [check_bounds] inline_producers [the target's rules] lower_blocks flatten_buffers
 *           simplify vectorize remove_unit_loops simplify tir_cse
 *           split_host_device (all functions at once: host and device functions)
 *   rules:  cpu: schedule_matmul schedule_reduce schedule
 *           cuda: gpu_gemv gpu_matmul gpu_reduce_rows gpu_argreduce_rows gpu_fallback
 *
 * check_bounds runs only when mt_compile_options.check_bounds is set
 * (mt_pass.only_check_bounds).
 *
 * "parse" and "build" are the front end's stages, not passes, but
 * dump_after accepts them too (mt_pass_name_known).
 */
#ifndef MT_PASSES_REGISTRY_H
#define MT_PASSES_REGISTRY_H

#include <stdbool.h>

#include "minitriton.h"
#include "passes/graph/graph_passes.h"
#include "tir/tir.h"
#include "tir/verify.h"

typedef mt_tfunc *(*mt_tir_pass_fn)(mt_arena *a, mt_tfunc *f);

typedef enum mt_pass_kind {
    MT_PASS_GRAPH, /* graph: mt_gmodule -> mt_gmodule */
    MT_PASS_TIR,   /* tir: one loop function -> loop function */
    MT_PASS_RULES, /* the slot of the target's schedule rules (no function) */
    MT_PASS_SPLIT, /* split_host_device: all functions at once (tir_passes.h), last */
} mt_pass_kind;

typedef struct mt_pass {
    const char *name;     /* as in dump_after */
    mt_pass_kind kind;
    mt_graph_pass_fn graph;
    mt_tir_pass_fn tir;
    mt_tir_form form;     /* TIR: the form the functions are in after it, at least
                           * (lower_blocks: lowered, flatten_buffers: flat) */
    bool only_check_bounds; /* runs only with mt_compile_options.check_bounds */
} mt_pass;

/* The pipeline, in order; n passes. */
extern const mt_pass mt_passes[];
extern const int mt_npasses;

/* The schedule rules of a target kind, in the order they are tried; *n set. */
const mt_pass *mt_target_rules(mt_target kind, int *n);

/* The pass or rule called `name` (any target), or NULL. */
const mt_pass *mt_pass_find(const char *name);

/* Is name[0..len) a pass, a rule, "parse" or "build"? */
bool mt_pass_name_known(const char *name, size_t len);

#endif
