/*
 * annotate_pattern.c -- every loop function gets an "op_pattern" attr.
 *
 * Legalized ops carry the pattern of their registry entry. A loop function
 * that arrives without one (written by the user) is opaque: fusion leaves it
 * alone. (TVM derives the pattern from the TIR itself; we will when user loop
 * functions are lowered.) The attr helpers are the loop IR's (tir.h).
 */
#include <string.h>

#include "passes/graph/graph_passes.h"

mt_op_pattern mt_tfunc_pattern(const mt_tfunc *f) {
    const char *p = mt_tfunc_get_attr(f, "op_pattern");
    if (p)
        for (int i = 0; i < MT_PAT_COUNT_; i++)
            if (strcmp(mt_pattern_str((mt_op_pattern)i), p) == 0) return (mt_op_pattern)i;
    return MT_PAT_OPAQUE;
}

mt_gmodule *mt_graph_annotate_pattern(mt_arena *a, mt_gmodule *m) {
    for (int i = 0; i < m->ntfuncs; i++)
        if (!mt_tfunc_get_attr(m->tfuncs[i], "op_pattern"))
            mt_tfunc_set_attr(a, m->tfuncs[i], "op_pattern", mt_pattern_str(MT_PAT_OPAQUE));
    return m;
}
