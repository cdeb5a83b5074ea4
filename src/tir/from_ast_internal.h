/*
 * from_ast_internal.h -- what the files of the `@T.prim_func` -> TIR walk
 * share (tir/from_ast.h is its interface):
 *
 *   from_ast.c         the entry points, functions and their parameters;
 *                      T calls and their arguments; the scope of names
 *   from_ast_expr.c    expressions: weak literals and dtypes, operators,
 *                      loads, the T intrinsics
 *   from_ast_buffer.c  buffers (shapes, T.Buffer, T.alloc_buffer) and the
 *                      bounds proofs over the enclosing loops
 *   from_ast_block.c   blocks: T.axis.*, T.init, T.where, T.reads /
 *                      T.writes, and the regions a block does not state
 *   from_ast_stmt.c    statements: loops, stores, if, lets and
 *                      allocations, T.launch, T.check_bounds, T.evaluate
 *
 * Every function here takes the function being built (fctx) and reports a
 * mistake through mt_fail at the place it was written.
 */
#ifndef MT_TIR_FROM_AST_INTERNAL_H
#define MT_TIR_FROM_AST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "support/common.h"
#include "support/nameset.h"
#include "tir/arith.h"
#include "tir/from_ast.h"

/* What a source name stands for: exactly one of the three. */
typedef struct sym {
    const char *name;
    mt_tvar *var;
    mt_tbuffer *buf;
    mt_texpr *value;
    int prev;         /* 1 + the index of the entry of the same name it shadows (0: none) */
    int lanes;        /* var: the lanes of its value (a vector let or parameter); 0 or 1: scalar */
} sym;

/* An enclosing loop (for T.axis.remap and the bounds check). */
typedef struct loop_info {
    mt_tvar *var;
    mt_texpr *min, *extent;
    bool exact; /* var takes every value of [min, min + extent), both constants
                 * (a loop with constant bounds; a block variable bound to such
                 * a loop over its whole domain) */
    bool iter;  /* a block's iteration variable, not a loop's */
} loop_info;

typedef struct built {
    const mt_ast *def;
    mt_tfunc *f;      /* NULL while it is being built */
} built;

/* One module's loop functions being built (launch callees by name). */
typedef struct session {
    mt_arena *a;
    const mt_ast *module;
    MT_VEC(built) done;
} session;

/* One function being built. */
typedef struct fctx {
    session *s;
    mt_arena *a;
    mt_tfunc *f;
    const mt_tir_symbind *binds;
    int nbinds;
    MT_VEC(sym) scope;
    mt_nameset heads; /* name -> 1 + the index of its latest entry in scope */
    MT_VEC(loop_info) loops;
    int sealed;       /* the loops of loops[0..sealed) are out of reach: the innermost block's
                       * regions, init and body see them only through its iteration variables */
    MT_VEC(mt_tvar *) let_vars;      /* every let so far, and its value: */
    MT_VEC(mt_texpr *) let_values;   /* what the footprint of a T.wmma_* operand substitutes */
    MT_VEC(mt_tstmt *) thread_loops; /* made so far: their variables are shared by name and tag */
    bool in_params;   /* a name not in scope in a param shape is a symbolic dim */
    int guarded;      /* inside an if or a block with T.where */
    bool hint;        /* inside T.prefetch: an address, not an access (not bounds-checked) */
    const mt_ast *stmt_call; /* the call a T.evaluate or expression statement evaluates */
    int depth;
} fctx;

/* An expression being typed: weak when it is a literal without a dtype. */
typedef struct val {
    mt_texpr *e;
    bool weak;
} val;

/* ---- T calls, arguments, names (from_ast.c) ------------------------------- */
/* The spelling of an operator token (the frontend's table is not linked
 * into this layer). */
const char *mt_fa_op_str(mt_tok_kind k);
/* The depth guard around each statement and expression. */
void mt_fa_enter(fctx *c, mt_loc loc);
void mt_fa_leave(fctx *c);
/* The T function a call calls ("exp" for T.exp(...)), or NULL. */
const char *mt_fa_t_call(fctx *c, const mt_ast *e);
bool mt_fa_is_t_call(fctx *c, const mt_ast *e, const char *fn);
/* The keyword argument `name` of call, or NULL. */
const mt_ast *mt_fa_keyword(const mt_ast *call, const char *name);
/* Keywords of call other than the allowed ones (NULL-terminated) fail. */
void mt_fa_only_keywords(const mt_ast *call, const char *fn, const char *const *allowed);
/* call takes between lo and hi positional arguments. */
void mt_fa_arity(const mt_ast *call, const char *fn, int lo, int hi);
/* A string literal argument: its text. */
const char *mt_fa_string_arg(const mt_ast *e, const char *what);
mt_dtype mt_fa_dtype_arg(fctx *c, const mt_ast *e);
/* The latest entry of name in scope, or NULL. */
const sym *mt_fa_lookup(const fctx *c, const char *name);
/* v, named at loc, is not a loop variable out of reach of the block (fctx.sealed). */
void mt_fa_check_reach(const fctx *c, const mt_tvar *v, mt_loc loc);
/* ... nor does e use one. */
void mt_fa_check_reach_expr(const fctx *c, const mt_texpr *e, mt_loc loc);
void mt_fa_push_sym(fctx *c, const char *name, mt_tvar *v, mt_tbuffer *b, mt_texpr *value);
/* Drops scope[n..): the names pushed there go out of scope. */
void mt_fa_scope_truncate(fctx *c, int n);
/* e, which must name a buffer (what: the place, for the message). */
mt_tbuffer *mt_fa_buffer_named(fctx *c, const mt_ast *e, const char *what);
/* The symbolic dim `name` (made on first sight, or as the caller bound it). */
mt_texpr *mt_fa_sym_dim(fctx *c, const char *name, mt_loc loc);
/* def's function: built once per session when unbound (launch callees). */
mt_tfunc *mt_fa_build_def(session *s, const mt_ast *def, const mt_tir_symbind *binds, int nbinds);

/* ---- expressions (from_ast_expr.c) ---------------------------------------- */
val mt_fa_expr(fctx *c, const mt_ast *e);
val mt_fa_strong(mt_texpr *e);
/* A weak literal given dtype dt. */
mt_texpr *mt_fa_literal_as(fctx *c, mt_texpr *lit, mt_dtype dt, mt_loc loc);
/* v as a value of its own: a weak literal takes int64 or float32. */
mt_texpr *mt_fa_settle(fctx *c, val v, mt_loc loc);
/* v for a place of dtype dt: a weak literal converts, else dtypes must agree. */
mt_texpr *mt_fa_as_dtype(fctx *c, val v, mt_dtype dt, mt_loc loc, const char *what);
/* Gives two operands one dtype (a weak one takes the other's). */
void mt_fa_unify(fctx *c, val *x, val *y, mt_loc loc, const char *op);
/* e as an integer / an int64 (loop bounds, extents, dims) / a bool. */
mt_texpr *mt_fa_int_expr(fctx *c, const mt_ast *e, const char *what);
mt_texpr *mt_fa_i64_expr(fctx *c, const mt_ast *e, const char *what);
mt_texpr *mt_fa_bool_expr(fctx *c, const mt_ast *e, const char *what);
/* The TIR kind of a binary operator e on operands of dtype dt. */
mt_texpr_kind mt_fa_binop_kind(fctx *c, const mt_ast *e, mt_dtype dt);
/* The indices of b[...] (a tuple, `()` for rank 0, or one expression),
 * each bounds-checked. */
mt_texpr **mt_fa_indices(fctx *c, const mt_tbuffer *b, const mt_ast *sub, int *n);

/* ---- buffers and bounds (from_ast_buffer.c) ------------------------------- */
/* T.Buffer(shape, dtype="float32") in a parameter annotation */
mt_tbuffer *mt_fa_buffer_type(fctx *c, const char *name, const mt_ast *call);
/* T.alloc_buffer(shape, dtype="float32", scope="global") */
mt_tbuffer *mt_fa_alloc_buffer(fctx *c, const char *name, const mt_ast *call);
/* The enclosing loop of v (innermost first), or NULL. */
const loop_info *mt_fa_loop_of(const fctx *c, const mt_tvar *v);
/* An access at loc is neither provably in nor out of bounds. */
void mt_fa_unproven(fctx *c, mt_loc loc);
/* The compile-time bounds check of index ix of dim d of b. */
void mt_fa_check_bound(fctx *c, const mt_tbuffer *b, int d, const mt_texpr *ix, mt_loc loc);
/* The elements a T.wmma_* operand reaches lie provably inside its buffer. */
void mt_fa_wmma_footprint(fctx *c, const mt_texpr *op, int64_t span, mt_loc loc, const char *fn);
/* Does a block variable's value stay in its domain [0, dom)? */
bool mt_fa_binding_in_domain(fctx *c, const mt_texpr *val, const mt_texpr *dom);

/* ---- blocks (from_ast_block.c) -------------------------------------------- */
/* lo:hi of dim d of b as (min, extent). */
void mt_fa_slice_range(fctx *c, const mt_ast *s, const mt_tbuffer *b, int d, mt_texpr **min, mt_texpr **ext);
/* with T.block("name"): header statements, then the body */
mt_tstmt *mt_fa_block(fctx *c, const mt_ast *with, const mt_ast *call);

/* ---- statements (from_ast_stmt.c) ----------------------------------------- */
/* stmts: stmt* from l[from] on -- a let or an allocation takes the rest as
 * its body. */
mt_tstmt *mt_fa_stmts(fctx *c, const mt_ast_list *l, int from);
/* Is s `NAME = expr` (a let) or `NAME = T.alloc_buffer(...)`? */
bool mt_fa_is_binding(fctx *c, const mt_ast *s);

#endif
