/*
 * to_dataflow.c -- mark the blocks of pure bindings as dataflow blocks.
 *
 * The builder already cuts a function body into blocks at control flow
 * (if, for, assert), so every BINDINGS block holds only op or call_tir
 * bindings, which are pure: each is a dataflow block (printed inside
 * R.dataflow(), and fused as a unit by fuse_ops). Control flow stays outside,
 * as TVM's ToDataflow keeps it.
 */
#include "passes/graph/graph_passes.h"

static void mark(mt_gblock *blk, void *ctx) {
    (void)ctx;
    bool pure = true;
    for (int i = 0; i < blk->nbindings; i++)
        if (blk->bindings[i]->kind != MT_CALL_OP && blk->bindings[i]->kind != MT_CALL_TIR &&
            blk->bindings[i]->kind != MT_CALL_TO_DEVICE &&
            blk->bindings[i]->kind != MT_CALL_EXTERN) /* destination passing: pure here */
            pure = false;
    blk->dataflow = pure;
}

mt_gmodule *mt_graph_to_dataflow(mt_arena *a, mt_gmodule *m) {
    (void)a;
    for (int fi = 0; fi < m->nfuncs; fi++) mt_gfunc_foreach_bindings(m->funcs[fi], mark, NULL);
    return m;
}
