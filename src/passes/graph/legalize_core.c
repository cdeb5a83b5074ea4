/*
 * legalize_core.c -- legalizers of the core ops that are not elementwise.
 *
 * shape_dim(x, axis) writes the size of one dim of x (a symbolic dim: the
 * loop function gets it as its sym var) into a rank-0 int64:
 *
 *     def shape_dim(x: T.Buffer(("n", 4), "float32"), lv: T.Buffer((), "int64")):
 *         with T.block("shape_dim"):
 *             lv[()] = n
 */
#include "passes/graph/graph_passes.h"

mt_tfunc *legalize_shape_dim(mt_arena *a, const mt_gbinding *b) {
    mt_legalize_ctx c;
    mt_legalize_begin(&c, a, b);
    int nd = b->args[0]->type.ndim;
    int64_t axis = b->attrs->axes[0];
    if (axis < 0) axis += nd;
    mt_tstmt *block = mt_ts_block(a, "shape_dim");
    block->body = mt_ts_store(a, c.out[0], NULL, 0, c.in[0]->shape[axis]);
    block->writes = MT_NEW(a, mt_tregion);
    block->writes[0] = mt_point_region(a, c.out[0], NULL);
    block->nwrites = 1;
    c.f->body = block;
    return c.f;
}
