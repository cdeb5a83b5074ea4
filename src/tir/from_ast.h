/*
 * from_ast.h -- loop functions written in the source (`@T.prim_func`) made
 * into TIR (tir/from_ast.c; the walk's files by concern: from_ast_internal.h).
 *
 * The syntax is the one the TIR printer writes (docs/language.md, "Loop
 * functions"; docs/tir.md §2), so a dump parses back to a function that
 * prints the same text. Every mistake is a user error through mt_fail at
 * the place it was written; a function is checked by the TIR verifier
 * before it is returned.
 *
 * This file reads the AST's structs only (frontend/ast.h), never calls into
 * the frontend, so the TIR layer links alone.
 */
#ifndef MT_TIR_FROM_AST_H
#define MT_TIR_FROM_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "frontend/ast.h"
#include "tir/tir.h"

/* A symbolic dim of a loop function's buffers bound by its caller: the
 * dim named `name` is the constant `value` (sym NULL) or the caller's
 * symbolic dim `sym`. */
typedef struct mt_tir_symbind {
    const char *name;
    int64_t value;
    const char *sym;
} mt_tir_symbind;

/* Is def (an AST_FUNCDEF) decorated with @T.prim_func? */
bool mt_ast_is_prim_func(const mt_ast *def);

/* The loop function def of module (T.launch callees are looked up among
 * the module's loop functions and built too), its symbolic dims replaced
 * as binds say (NULL, 0: none). Errors go through mt_fail. */
mt_tfunc *mt_tir_from_ast(mt_arena *a, const mt_ast *module, const mt_ast *def,
                          const mt_tir_symbind *binds, int nbinds);

/* Does f store into buffer b (a store, or a launch passing it)? */
bool mt_tfunc_stores_into(const mt_tfunc *f, const mt_tbuffer *b);

/* Every loop function of module, in source order (a launched function is
 * built once); *n their count. */
mt_tfunc **mt_tir_from_module(mt_arena *a, const mt_ast *module, int *n);

#endif
