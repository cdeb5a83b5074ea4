/*
 * tir_passes.c -- the table of TIR passes by name (see tir_passes.h).
 *
 * Listed in the order the default pipeline runs them; a pass added to the
 * project is declared in tir_passes.h and gets one line here.
 */
#include "passes/tir/tir_passes.h"

#include <string.h>

const mt_tir_pass mt_tir_passes_by_name[] = {
    {"inline_producers", mt_tir_inline_producers},
    {"lower_blocks", mt_tir_lower_blocks},
    {"flatten_buffers", mt_tir_flatten_buffers},
    {"simplify", mt_tir_simplify},
    {"vectorize", mt_tir_vectorize},
    {"remove_unit_loops", mt_tir_remove_unit_loops},
    {"tir_cse", mt_tir_cse},
};

const int mt_tir_num_passes =
    (int)(sizeof mt_tir_passes_by_name / sizeof mt_tir_passes_by_name[0]);

const mt_tir_pass *mt_tir_pass_find(const char *name) {
    for (int i = 0; i < mt_tir_num_passes; i++)
        if (strcmp(mt_tir_passes_by_name[i].name, name) == 0) return &mt_tir_passes_by_name[i];
    return NULL;
}
