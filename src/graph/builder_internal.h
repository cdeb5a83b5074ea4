/*
 * builder_internal.h -- what the files of the AST -> graph builder share:
 *
 *   builder.c       functions (the entry, and inlined calls), parameters,
 *                   simple statements, names
 *   builder_flow.c  if / for / assert / with
 *   builder_expr.c  expressions, operators, attributes, subscripts
 *   builder_call.c  calls of library functions, bound by op signatures
 */
#ifndef MT_GRAPH_BUILDER_INTERNAL_H
#define MT_GRAPH_BUILDER_INTERNAL_H

#include "graph/builder.h"
#include "support/common.h"
#include "support/nameset.h"

/* A source name in scope. value NULL: bound on some paths only (at `where`),
 * so a use is an error. */
typedef struct mt_symbol {
    const char *name;
    mt_gvar *value;
    mt_loc where;
    int prev;            /* 1 + the index of the entry it shadows (0: none) */
} mt_symbol;

/* A function being built: the entry, or a graph function being inlined. */
typedef struct mt_frame {
    const mt_ast *def;
    mt_gvar **returns;   /* what its `return` gave (NULL before) */
    const char **return_names; /* the source names returned, or NULL each */
    int nreturns;
    int syms_base;       /* its names start here in the symbol table */
    struct mt_frame *caller;
} mt_frame;

typedef struct builder {
    mt_arena *arena;
    const mt_ast *module;
    const mt_build_options *opts;
    mt_gfunc *func;            /* the entry function being built */
    mt_frame *frame;           /* the innermost function being built */
    int inline_depth;
    mt_gbody *body;            /* where blocks go (the function, a branch, a loop) */
    mt_gblock *block;          /* its open BINDINGS block, or NULL */
    MT_VEC(mt_symbol) syms;    /* source name -> current value; later shadows earlier */
    mt_nameset heads;          /* name -> 1 + the index of its latest entry in syms */
    mt_nameset used;           /* SSA names handed out */
    int temp_count;
    int flow_depth;            /* if/for nesting, for the return rule */
    int nbindings;             /* op bindings and run-time blocks so far (MT_MAX_BINDINGS) */
    int work;                  /* statements and expressions built so far (MT_MAX_BUILD_WORK) */
    mt_device device;          /* where ops built now run: the innermost `with device`,
                                * {0, 0} for the default device */
    MT_VEC(mt_tfunc *) prims;  /* loop functions of the source called (builder_tir.c) ... */
    MT_VEC(const char *) prim_keys; /* ... and the symbolic-dim bindings each was built for */
} builder;

/* The size limits below are divided by MT_FUZZ_LIMIT_SCALE in a fuzzing
 * build (support/common.h). */

/* The most op bindings one compilation may build. Unrolled loops multiply
 * (three nested `for _ in range(16)` make 4,096 copies of their body), so
 * the builder stops there with MT_ERR_LIMIT rather than letting a small
 * source grow without bound. What sets the number is LLVM: every loop
 * function costs a few ms to optimize and emit, and 2048 separate matmuls
 * already take about ten seconds (docs/robustness.md). */
enum { MT_MAX_BINDINGS = 2048 / MT_FUZZ_LIMIT_SCALE };

/* The most statements and expressions one compilation may build, counting
 * each again for every unrolled copy and inlined call. Bodies that fold to
 * constants emit no bindings, so the binding limit alone let six nested
 * `for _ in range(16)` around `x = 1 + 2` build 16 million statements (a
 * hang, and gigabytes of arena). 2**20 is about 0.3 s in a release build and
 * a hundred times what a kernel at MT_MAX_BINDINGS needs. */
enum { MT_MAX_BUILD_WORK = (1 << 20) / MT_FUZZ_LIMIT_SCALE };

/* Counts one statement or expression against MT_MAX_BUILD_WORK. */
void mt_b_work(builder *b, mt_loc loc);

/* The most parameters an entry function may have, and the most distinct
 * symbolic dims among them (the executor binds them in a fixed table of 64,
 * runtime/executor.c MAX_SYMS). */
enum { MT_MAX_PARAMS = 1024, MT_MAX_SYMBOLS = 64 };

/* ---- names (builder.c) ---------------------------------------------------- */
const char *mt_b_fresh_name(builder *b, const char *base);
const char *mt_b_temp_name(builder *b);
/* The value of name at loc: NULL when unknown; an error when the name is
 * bound on some paths only. */
mt_gvar *mt_b_use(builder *b, const char *name, mt_loc loc);
void mt_b_bind(builder *b, const char *name, mt_gvar *v);
void mt_b_bind_at(builder *b, const char *name, mt_gvar *v, mt_loc where); /* where: the target */
void mt_b_bind_partial(builder *b, const char *name, mt_loc where);
/* The index in syms of the latest entry of name below `limit` (and at or
 * above the current function's base), or -1. O(1) for limit = syms.len. */
int mt_b_lookup(const builder *b, const char *name, int limit);
/* Drops syms[n..): the names bound there go out of scope. */
void mt_b_syms_truncate(builder *b, int n);
const mt_ast *mt_b_find_def(const builder *b, const char *name);
bool mt_b_is_planned_function(const char *name);
mt_dtype mt_b_dtype_name(const char *s, mt_loc loc);
mt_op_id mt_b_op(const char *name); /* a registry op by name (ICE when missing) */

/* ---- statements (builder.c, builder_flow.c) ------------------------------- */
void mt_b_stmts(builder *b, const mt_ast_list *body);
void mt_b_if(builder *b, const mt_ast *s);
void mt_b_for(builder *b, const mt_ast *s);
void mt_b_assert(builder *b, const mt_ast *s);
void mt_b_with(builder *b, const mt_ast *s);
/* Calls a graph function of the source, inlined: its return values. */
int mt_b_inline_call(builder *b, const mt_ast *call, const mt_ast *def, mt_gvar **out, int max);

/* The type an out_sinfo=Tensor(shape, dtype) gives (builder.c). */
mt_gtype mt_b_sinfo(builder *b, const mt_ast *ann);
/* Appends a binding to the current block (a new one when none is open). */
void mt_b_add_binding(builder *b, mt_gbinding *bd, mt_loc loc);
/* call_dps_packed("name", (inputs), out_sinfo=...): its outputs in out[0..)
 * (named names[k] when given), their count (builder_extern.c). */
int mt_b_extern_call(builder *b, const mt_ast *call, mt_gvar **out, int max, const char *const *names);
/* ---- loop functions of the source (builder_tir.c) ------------------------- */
/* custom_add(a, s): a call of a loop function, its trailing output buffers
 * left out; its results (the outputs) in out. */
int mt_b_call_prim(builder *b, const mt_ast *call, const mt_ast *def, mt_gvar **out, int max);
/* R.call_tir(f, (args...), out_sinfo=...): the same, outputs' types stated. */
int mt_b_call_tir(builder *b, const mt_ast *call, mt_gvar **out, int max);
bool mt_b_is_call_tir(const mt_ast *e);
/* The graph function that calls loop function def as the entry. */
mt_gfunc *mt_b_prim_entry(builder *b, const mt_ast *def);
/* A tensor annotation written in source (Tensor(shape, dtype)); what
 * names it in messages. */
mt_gtype mt_b_annotation(builder *b, const mt_ast *ann, const char *what);

/* ---- expressions (builder_expr.c) ----------------------------------------- */
mt_gvar *mt_b_expr(builder *b, const mt_ast *e);
/* Builds e; a binding it makes is named `name` (NULL: a temporary). */
mt_gvar *mt_b_expr_named(builder *b, const mt_ast *e, const char *name);
/* Builds e that may give several values (a tuple, a call of a graph function
 * returning a tuple): their number, at most max. */
int mt_b_values(builder *b, const mt_ast *e, mt_gvar **out, int max, const char *const *names);
/* Emits `name = op(args, attrs)` after checking it with the op's rule; folds
 * it to a constant when every argument is one. */
mt_gvar *mt_b_emit(builder *b, mt_op_id id, mt_gvar **args, int nargs, const mt_gattrs *attrs,
                   mt_loc loc, const char *name);
/* A scalar condition: a rank-0 bool value (constant or computed). */
mt_gvar *mt_b_cond(builder *b, const mt_ast *e, const char *what);
/* A dimension given in source: an int literal, a string, x.shape[i], or an
 * expression folding to an int. */
mt_dim mt_b_dim(builder *b, const mt_ast *e);
/* The dims of x.shape written in source as `x.shape` (true), or false. */
bool mt_b_shape_of(builder *b, const mt_ast *e, mt_gtype *out);

/* ---- calls (builder_call.c) ----------------------------------------------- */
/* A call of a library function by name, or NULL when `fname` is not one. */
mt_gvar *mt_b_library_call(builder *b, const mt_ast *call, const char *fname, const char *name);

/* The op pattern of a loop function of the source (prim_pattern.c):
 * elemwise, broadcast or reduction for the one nest shape that fuses safely
 * and is in bounds by construction, else opaque. */
mt_op_pattern mt_prim_func_pattern(const mt_tfunc *f);

#endif
