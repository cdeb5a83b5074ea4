/*
 * graph_passes.h -- every graph pass, one per file, one signature:
 *
 *     mt_gmodule *pass(mt_arena *a, mt_gmodule *m);
 *
 * A pass returns the module it was given (changed in place: graph passes
 * rebuild the binding lists, which are cheap) and reports user errors through
 * mt_fail. The pipeline runs them in this order (passes/registry.c).
 *
 *   fold_constant     assumes: op bindings. guarantees: no op binding whose
 *                     arguments are all constants feeds anything (its uses
 *                     read the folded constant), except returned ones.
 *   cse               assumes: op bindings. guarantees: in each dataflow
 *                     block, no two bindings apply the same op to the same
 *                     arguments and attributes (later uses read the first).
 *   realize_devices   assumes: op bindings, placed by `with device` (the
 *                     builder). guarantees: every value has a device
 *                     (mt_gtype.device; {0, 0} the default); a binding reads
 *                     only values on its own device or constants, through
 *                     R.to_vdevice copies inserted before it; merged and
 *                     carried values get their branch/loop values on their
 *                     device (realize_devices.c).
 *   to_dataflow       assumes: built graph. guarantees: every run of pure
 *                     op bindings sits in a dataflow block.
 *   legalize          assumes: op bindings. guarantees: every binding is a
 *                     call_tir of a block-form loop function added to the
 *                     module, with attr "op_pattern"; constant arguments are
 *                     folded into the loop function as immediates.
 *   annotate_pattern  assumes: legalized. guarantees: every loop function has
 *                     an "op_pattern" attr (opaque when unknown).
 *   fuse_ops          assumes: annotated. guarantees: bindings carry fusion
 *                     group ids. A group's bindings run on one device, and
 *                     each member other than the root has all its consumers
 *                     in the group (TVM's post-dominator rule). It is one of:
 *                     elementwise/broadcast/injective calls; such calls
 *                     feeding one reduction (`x - mean(x)`: the reduction is
 *                     the root); a reduction or a matmul (out_ewise_fusable)
 *                     with its elementwise epilogue (matmul + bias + relu);
 *                     and, in front of a matmul group, light calls that only
 *                     it consumes (a transpose or cast of an operand). A
 *                     group never holds two reductions/matmuls; opaque calls
 *                     and copies stay alone.
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

mt_gmodule *mt_graph_fold_constant(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_cse(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_realize_devices(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_to_dataflow(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_legalize(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_annotate_pattern(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_fuse_ops(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_fuse_tir(mt_arena *a, mt_gmodule *m);
mt_gmodule *mt_graph_dead_code(mt_arena *a, mt_gmodule *m);

/* The op pattern recorded on a loop function (attr "op_pattern"). */
mt_op_pattern mt_tfunc_pattern(const mt_tfunc *f);

/* Compute functions of elementwise ops (legalize_elemwise.c), named in the
 * last column of MT_EWISE rows in graph/ops.def: the scalar result from
 * scalar operands (already of the op's operand dtype). */
typedef mt_texpr *(*mt_compute_fn)(mt_arena *a, mt_texpr *const *args, const mt_gattrs *attrs,
                                   mt_dtype out_dtype);
/* Legalizers of the other ops (legalize_*.c), named in MT_OP rows: the
 * block-form loop function computing binding b (params: its tensor args in
 * order, then its outputs). */
typedef mt_tfunc *(*mt_legalize_fn)(mt_arena *a, const mt_gbinding *b);
#define MT_EWISE(id, name, sig, pattern, infer, compute) \
    mt_texpr *compute(mt_arena *a, mt_texpr *const *args, const mt_gattrs *attrs, mt_dtype out_dtype);
#define MT_OP(id, name, sig, pattern, infer, legalize) \
    mt_tfunc *legalize(mt_arena *a, const mt_gbinding *b);
#include "graph/ops.def"

/* A block-form loop function computing b's op elementwise (with NumPy
 * broadcasting) from its inputs into one output. Constant inputs (is_const)
 * become immediates, not buffers. */
mt_tfunc *mt_legalize_elemwise(mt_arena *a, const mt_gbinding *b, mt_compute_fn compute);

/* Helpers for legalizers (legalize_elemwise.c): a loop function named after
 * the op with one buffer param per tensor argument of b, then the outputs;
 * symbolic dims become the function's sym_vars. */
typedef struct mt_legalize_ctx {
    mt_arena *arena;
    mt_tfunc *f;
    mt_tbuffer *in[16];   /* buffer of tensor arg k (NULL for a constant) */
    mt_tbuffer *out[4];   /* buffer of output k */
    const char *sym_names[MT_MAX_RANK * 16];
    mt_tvar *syms[MT_MAX_RANK * 16];
    int nsym;
} mt_legalize_ctx;
void mt_legalize_begin(mt_legalize_ctx *c, mt_arena *a, const mt_gbinding *b);
mt_texpr *mt_legalize_dim(mt_legalize_ctx *c, mt_dim d);
mt_texpr *mt_legalize_const(mt_arena *a, const mt_gvar *v); /* immediate of a constant */
mt_tregion mt_point_region(mt_arena *a, mt_tbuffer *buf, mt_texpr *const *idx);
/* A function-level scratch buffer of the loop function being built. */
mt_tbuffer *mt_legalize_alloc(mt_legalize_ctx *c, const char *name, mt_dtype dt,
                              mt_texpr *const *shape, int ndim);

/* A loop nest around one block, built axis by axis (legalize_elemwise.c):
 *
 *     mt_nest ns; mt_nest_init(&ns, a);
 *     mt_texpr *i = mt_nest_axis(&ns, n, MT_ITER_SPATIAL);  // loop i0, block var v0
 *     mt_texpr *k = mt_nest_axis(&ns, m, MT_ITER_REDUCE);
 *     mt_texpr *x = mt_nest_load(&ns, buf, idx);            // a load, recorded in T.reads
 *     mt_nest_write(&ns, out, oidx);
 *     mt_tstmt *s = mt_nest_build(&ns, "sum", init, body);  // the loops around the block
 */
enum { MT_NEST_MAX_LOOPS = MT_MAX_RANK + 4, MT_NEST_MAX_REGIONS = 16 };
typedef struct mt_nest {
    mt_arena *a;
    int n;                                  /* loops, outermost first */
    mt_tvar *loop[MT_NEST_MAX_LOOPS];
    mt_titer iter[MT_NEST_MAX_LOOPS];       /* the block variable bound to loop[k] */
    mt_tregion reads[MT_NEST_MAX_REGIONS], writes[MT_NEST_MAX_REGIONS];
    int nreads, nwrites;
} mt_nest;
void mt_nest_init(mt_nest *ns, mt_arena *a);
mt_texpr *mt_nest_axis(mt_nest *ns, mt_texpr *extent, mt_iter_kind kind); /* its block var */
void mt_nest_read(mt_nest *ns, mt_tbuffer *buf, mt_texpr *const *idx);  /* buf NULL: nothing */
mt_texpr *mt_nest_load(mt_nest *ns, mt_tbuffer *buf, mt_texpr *const *idx);
void mt_nest_write(mt_nest *ns, mt_tbuffer *buf, mt_texpr *const *idx);
mt_tstmt *mt_nest_build(mt_nest *ns, const char *name, mt_tstmt *init, mt_tstmt *body);

#endif
