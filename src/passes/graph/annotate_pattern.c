/*
 * annotate_pattern.c -- every loop function gets an "op_pattern" attr.
 *
 * Legalized ops carry the pattern of their registry entry. A loop function
 * that arrives without one (written by the user) is opaque: fusion leaves it
 * alone. (TVM derives the pattern from the TIR itself; we will when user loop
 * functions are lowered.) Also home of the tiny attr helpers.
 */
#include <string.h>

#include "passes/graph/graph_passes.h"

const char *mt_tfunc_get_attr(const mt_tfunc *f, const char *key) {
    for (int i = 0; i < f->nattrs; i++)
        if (strcmp(f->attrs[i].key, key) == 0) return f->attrs[i].value;
    return NULL;
}

void mt_tfunc_set_attr(mt_arena *a, mt_tfunc *f, const char *key, const char *value) {
    for (int i = 0; i < f->nattrs; i++)
        if (strcmp(f->attrs[i].key, key) == 0) {
            f->attrs[i].value = mt_arena_strdup(a, value);
            return;
        }
    mt_tattr *na = MT_NEW_ARRAY(a, mt_tattr, f->nattrs + 1);
    if (f->nattrs) memcpy(na, f->attrs, sizeof(mt_tattr) * (size_t)f->nattrs);
    na[f->nattrs].key = mt_arena_strdup(a, key);
    na[f->nattrs].value = mt_arena_strdup(a, value);
    f->attrs = na;
    f->nattrs++;
}

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
