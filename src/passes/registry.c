/*
 * registry.c -- the pass list (registry.h). A pass added to the project is
 * declared in its layer's header (graph_passes.h, tir_passes.h,
 * schedule.h) and gets one line here.
 */
#include "passes/registry.h"

#include <string.h>

#include "passes/tir/tir_passes.h"
#include "schedule/gpu_rules.h"
#include "schedule/schedule.h"

#define GRAPH(n, f) {n, MT_PASS_GRAPH, f, NULL, MT_TIR_BLOCK}
#define TIR(n, f) {n, MT_PASS_TIR, NULL, f, MT_TIR_BLOCK}
#define TIR_TO(n, f, form) {n, MT_PASS_TIR, NULL, f, form}
#define TIR_CHECKS(n, f) {n, MT_PASS_TIR, NULL, f, MT_TIR_BLOCK, true}

const mt_pass mt_passes[] = {
    GRAPH("fold_constant", mt_graph_fold_constant),
    GRAPH("cse", mt_graph_cse),
    GRAPH("dead_code", mt_graph_dead_code),
    GRAPH("realize_devices", mt_graph_realize_devices),
    GRAPH("to_dataflow", mt_graph_to_dataflow),
    GRAPH("legalize", mt_graph_legalize),
    GRAPH("annotate_pattern", mt_graph_annotate_pattern),
    GRAPH("fuse_ops", mt_graph_fuse_ops),
    GRAPH("fuse_tir", mt_graph_fuse_tir),
    GRAPH("dead_code", mt_graph_dead_code),
    TIR_CHECKS("check_bounds", mt_tir_check_bounds),
    TIR("inline_producers", mt_tir_inline_producers),
    {"schedule rules", MT_PASS_RULES, NULL, NULL, MT_TIR_BLOCK},
    TIR_TO("lower_blocks", mt_tir_lower_blocks, MT_TIR_LOWERED),
    TIR("compact_buffers", mt_tir_compact_buffers),
    TIR_TO("flatten_buffers", mt_tir_flatten_buffers, MT_TIR_FLAT),
    TIR("partition", mt_tir_partition),
    TIR("partition_tails", mt_tir_partition_tails),
    TIR("simplify", mt_tir_simplify),
    TIR("vectorize", mt_tir_vectorize),
    TIR("remove_unit_loops", mt_tir_remove_unit_loops),
    TIR("simplify", mt_tir_simplify),
    TIR("transpose_tiles", mt_tir_transpose_tiles),
    TIR("tir_cse", mt_tir_cse),
    /* all of a program's functions at once: the pipeline calls it itself */
    {"split_host_device", MT_PASS_SPLIT, NULL, NULL, MT_TIR_FLAT},
};
const int mt_npasses = (int)(sizeof mt_passes / sizeof mt_passes[0]);

static const mt_pass cpu_rules[] = {
    TIR("schedule_matmul", mt_schedule_matmul_pass),
    TIR("schedule_conv", mt_schedule_conv_pass),
    TIR("schedule_pool", mt_schedule_pool_pass),
    TIR("schedule_reduce", mt_schedule_reduce_pass),
    TIR("schedule", mt_schedule_default_cpu),
};

static const mt_pass cuda_rules[] = {
    TIR("gpu_gemv", mt_schedule_gpu_gemv),
    TIR("gpu_matmul", mt_schedule_gpu_matmul),
    TIR("gpu_reduce_rows", mt_schedule_gpu_reduce),
    TIR("gpu_argreduce_rows", mt_schedule_gpu_argreduce),
    TIR("gpu_fallback", mt_schedule_gpu_fallback),
};

const mt_pass *mt_target_rules(mt_target kind, int *n) {
    if (kind == MT_TARGET_CPU) {
        *n = (int)(sizeof cpu_rules / sizeof cpu_rules[0]);
        return cpu_rules;
    }
    *n = (int)(sizeof cuda_rules / sizeof cuda_rules[0]);
    return cuda_rules;
}

static bool is(const char *pass, const char *name, size_t len) {
    return strlen(pass) == len && strncmp(pass, name, len) == 0;
}

static const mt_pass *find(const char *name, size_t len) {
    for (int i = 0; i < mt_npasses; i++)
        if (mt_passes[i].kind != MT_PASS_RULES && is(mt_passes[i].name, name, len)) return &mt_passes[i];
    static const mt_target kinds[] = {MT_TARGET_CPU, MT_TARGET_CUDA};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int n;
        const mt_pass *rules = mt_target_rules(kinds[k], &n);
        for (int i = 0; i < n; i++)
            if (is(rules[i].name, name, len)) return &rules[i];
    }
    return NULL;
}

const mt_pass *mt_pass_find(const char *name) { return name ? find(name, strlen(name)) : NULL; }

bool mt_pass_name_known(const char *name, size_t len) {
    return is("parse", name, len) || is("build", name, len) || find(name, len) != NULL;
}
