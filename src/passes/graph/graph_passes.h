/*
 * graph_passes.h -- every graph pass, one per file, one signature:
 *
 *     mt_gmodule *pass(mt_arena *a, mt_gmodule *m);
 *
 * A pass returns the module it was given (changed in place: graph passes
 * rebuild the binding lists, which are cheap) and reports user errors through
 * mt_fail. The pipeline (src/pipeline.c) runs them in this order.
 *
 *   to_dataflow       assumes: built graph. guarantees: every run of pure
 *                     op bindings sits in a dataflow block.
 *   legalize          assumes: op bindings. guarantees: every binding is a
 *                     call_tir of a block-form loop function added to the
 *                     module, with attr "op_pattern"; constant arguments are
 *                     folded into the loop function as immediates.
 *   annotate_pattern  assumes: legalized. guarantees: every loop function has
 *                     an "op_pattern" attr (opaque when unknown).
 *   fuse_ops          assumes: annotated. guarantees: bindings carry fusion
 *                     group ids: a group is a chain/tree of elementwise,
 *                     broadcast and injective calls whose non-root members are
 *                     used only inside the group (or returned).
 *   fuse_tir          assumes: grouped. guarantees: one call_tir per group, to
 *                     a new loop function "fused_<ops>" whose body runs the
 *                     members in order; intermediates are function allocs
 *                     (inlined by the TIR pass inline_producers).
 *   dead_code         guarantees: no binding whose values are unused, no loop
 *                     function that is not called.
 */
#ifndef MT_PASSES_GRAPH_PASSES_H
#define MT_PASSES_GRAPH_PASSES_H

#include "graph/graph.h"

typedef mt_gmodule *(*mt_graph_pass_fn)(mt_arena *a, mt_gmodule *m);

mt_gmodule *mt_graph_to_dataflow(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_legalize(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_annotate_pattern(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_fuse_ops(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_fuse_tir(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_dead_code(mt_arena *a, mt_gmodule *m);

/* The op pattern recorded on a loop function (attr "op_pattern"). */
mt_op_pattern mt_tfunc_pattern(const mt_tfunc *f);
void mt_tfunc_set_attr(mt_arena *a, mt_tfunc *f, const char *key, const char *value);
const char *mt_tfunc_get_attr(const mt_tfunc *f, const char *key);

/* Compute functions of elementwise ops (legalize_elemwise.c), named in the
 * last column of graph/ops.def: the scalar result from scalar operands. */
typedef mt_texpr *(*mt_compute_fn)(mt_arena *a, mt_texpr *const *args, mt_dtype out_dtype);
#define MT_OP(id, name, arity, pattern, infer, compute) \
    mt_texpr *compute(mt_arena *a, mt_texpr *const *args, mt_dtype out_dtype);
#include "graph/ops.def"
#undef MT_OP

/* A block-form loop function computing `op` elementwise (with NumPy
 * broadcasting) from inputs of the given types into one output. Constant
 * inputs (is_const) become immediates, not buffers. */
mt_tfunc *mt_legalize_elemwise(mt_arena *a, const mt_op_def *op, mt_gvar *const *args,
                               int nargs, const mt_gvar *out);

#endif
