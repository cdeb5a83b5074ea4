/*
 * to_dataflow.c -- pure bindings go into dataflow blocks.
 *
 * Every binding the language makes today is a pure op call, so each block of
 * bindings is a dataflow block. When control flow arrives (if/for in graph
 * functions), this pass splits blocks at the impure or control statements and
 * keeps those outside the dataflow blocks, as TVM's ToDataflow does.
 */
#include "passes/graph/graph_passes.h"

mt_gmodule *mt_graph_to_dataflow(mt_arena *a, mt_gmodule *m) {
    for (int fi = 0; fi < m->nfuncs; fi++)
        for (int bi = 0; bi < m->funcs[fi]->nblocks; bi++) {
            mt_gblock *blk = m->funcs[fi]->blocks[bi];
            bool pure = true;
            for (int i = 0; i < blk->nbindings; i++)
                if (blk->bindings[i]->kind != MT_CALL_OP && blk->bindings[i]->kind != MT_CALL_TIR)
                    pure = false;
            blk->dataflow = pure;
        }
    return m;
}
