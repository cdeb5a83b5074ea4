/*
 * builder.h -- the AST visitor that builds the graph IR.
 */
#ifndef MT_GRAPH_BUILDER_H
#define MT_GRAPH_BUILDER_H

#include "frontend/ast.h"
#include "graph/graph.h"

typedef struct mt_build_options {
    const char *entry;    /* entry function name; NULL = the last graph function */
    int unroll_threshold; /* graph-level for-loops up to this count unroll */
    mt_device default_device; /* the target's device: where ops outside `with device` run */
    mt_device gpu_device; /* what device("gpu") / "cuda" mean; type 0: no GPU in
                           * this compilation (such a with is refused) */
    const mt_gextern *const *externs; /* the host functions call_dps_packed may name */
    int nexterns;
    const mt_gbound *bound; /* the entry's parameters bound at compile time */
    int nbound;
} mt_build_options;

/* Builds the entry graph function (and what it calls) of an AST_MODULE.
 * Names, types and shapes are checked here; errors go through mt_fail with
 * the place of the offending expression. */
mt_gmodule *mt_build_graph(mt_arena *a, const mt_ast *module, const mt_build_options *opts);

#endif
