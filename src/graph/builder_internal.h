/*
 * builder_internal.h -- what the files of the AST -> graph builder share
 * (builder.c: functions and statements; builder_expr.c: expressions;
 * builder_call.c: calls bound by op signatures).
 */
#ifndef MT_GRAPH_BUILDER_INTERNAL_H
#define MT_GRAPH_BUILDER_INTERNAL_H

#include "graph/builder.h"

typedef struct mt_symbol {
    const char *name;
    mt_gvar *value;
} mt_symbol;

typedef struct builder {
    mt_arena *arena;
    const mt_ast *module;
    const mt_build_options *opts;
    mt_gfunc *func;
    mt_gblock *block;          /* where bindings go */
    MT_VEC(mt_symbol) syms;    /* source name -> current value */
    MT_VEC(const char *) used; /* SSA names handed out */
    int temp_count;
} builder;

/* names (builder.c) */
const char *mt_b_fresh_name(builder *b, const char *base);
const char *mt_b_temp_name(builder *b);
mt_gvar *mt_b_lookup(builder *b, const char *name);
void mt_b_bind(builder *b, const char *name, mt_gvar *v);
const mt_ast *mt_b_find_def(const builder *b, const char *name);
bool mt_b_is_planned_function(const char *name);
mt_dtype mt_b_dtype_name(const char *s, mt_loc loc);

/* expressions (builder_expr.c) */
mt_gvar *mt_b_expr(builder *b, const mt_ast *e);
/* Builds e; a binding it makes is named `name` (NULL: a temporary). */
mt_gvar *mt_b_expr_named(builder *b, const mt_ast *e, const char *name);
/* Emits `name = op(args, attrs)` after checking it with the op's rule. */
mt_gvar *mt_b_emit(builder *b, mt_op_id id, mt_gvar **args, int nargs, const mt_gattrs *attrs,
                   mt_loc loc, const char *name);

/* calls (builder_call.c): a call of a library function by name, or NULL when
 * `fname` is not one. */
mt_gvar *mt_b_library_call(builder *b, const mt_ast *call, const char *fname, const char *name);

#endif
