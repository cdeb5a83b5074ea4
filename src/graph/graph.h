/*
 * graph.h -- the graph IR (Relax-like).
 *
 * A graph function takes tensors and returns tensors. Its body is a list of
 * blocks; a dataflow block is a list of bindings `var = call`, each binding a
 * fresh SSA variable (rebinding a name in the source makes out, out_1, ...).
 * A call is one of:
 *
 *   - an op of the registry (graph/ops.def), e.g. `R.add(a, b)`;
 *   - `R.call_tir(cls.f, (args), out_sinfo=...)`: a loop function of the
 *     module (tir.h) called in destination-passing style; after legalization
 *     every binding is one of these. A call_tir may have several outputs.
 *
 * Arguments are variables or scalar constants (`R.const(2, "int32")`): a
 * constant is a rank-0 "weak" value that takes its dtype from the other
 * operand; legalization inlines it into the loop function as an immediate.
 *
 * Types: a tensor type is a dtype and a shape whose dims are constants or
 * named symbols (`"n"`); the same symbol means the same size everywhere in
 * the function and is bound by the arguments at run time.
 *
 * The printer (graph/printer.c) writes TVMScript-style text:
 *
 *   @R.function
 *   def add(a: R.Tensor((2, 3), dtype="float32"), b: R.Tensor((2, 3), dtype="float32")):
 *       with R.dataflow():
 *           out = R.add(a, b)
 *           out_1 = R.add(out, a)
 *           R.output(out_1)
 *       return out_1
 */
#ifndef MT_GRAPH_GRAPH_H
#define MT_GRAPH_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "minitriton.h"
#include "support/arena.h"
#include "support/diag.h"
#include "support/nameset.h"
#include "support/ptrmap.h"
#include "tir/tir.h"

/* One dimension: a constant size, or a named symbol when sym != NULL. */
typedef struct mt_dim {
    int64_t value;   /* the size; -1 when symbolic */
    const char *sym; /* the symbol's name, or NULL */
} mt_dim;

/* The type of a tensor value. */
typedef struct mt_gtype {
    mt_dtype dtype;
    int ndim;
    mt_dim dims[MT_MAX_RANK];
    mt_device device; /* where the value lives; {0, 0}: the program's default
                       * device (the target's). Set by realize_devices; printed
                       * as vdevice="test:0" when not the default. */
} mt_gtype;

/* A value: parameter, bound variable or constant. */
typedef struct mt_gvar {
    const char *name;  /* SSA name as printed: out, out_1, ... */
    mt_gtype type;
    mt_loc loc;        /* where it was defined in the source */
    bool is_const;     /* a scalar constant (rank 0): */
    bool weak;         /*   a literal without a dtype of its own */
    double fconst;     /*   value when the dtype is a float */
    int64_t iconst;    /*   value otherwise */
    int id;            /* creation order in the function */
    bool temp;         /* named by the compiler (lv, lv1, ...), not the user */
    bool bound;        /* an entry parameter bound at compile time (mt_gbound) */
    const struct mt_ast *expr; /* a temp's source expression, quoted in messages */
} mt_gvar;

/* Op patterns, ordered by how freely an op fuses (TVM's OpPatternKind). */
#define MT_PATTERN_LIST(X)                                                   \
    X(MT_PAT_ELEMWISE, "elemwise")   /* out[i] = f(in[i]) */                 \
    X(MT_PAT_BROADCAST, "broadcast") /* elemwise with broadcast inputs */    \
    X(MT_PAT_INJECTIVE, "injective") /* each out elem from one input elem */ \
    X(MT_PAT_REDUCTION, "reduction")                                         \
    X(MT_PAT_OUT_EWISE_FUSABLE, "out_ewise_fusable") /* matmul: takes an     \
                                                        elemwise epilogue */ \
    X(MT_PAT_OPAQUE, "opaque")

typedef enum mt_op_pattern {
#define MT_X_(k, s) k,
    MT_PATTERN_LIST(MT_X_)
#undef MT_X_
    MT_PAT_COUNT_
} mt_op_pattern;
const char *mt_pattern_str(mt_op_pattern p);

/* Op ids from the registry table. */
typedef enum mt_op_id {
#define MT_EWISE(id, name, sig, pattern, infer, compute) MT_OP_##id,
#define MT_OP(id, name, sig, pattern, infer, legalize) MT_OP_##id,
#include "graph/ops.def"
#undef MT_OP
#undef MT_EWISE
    MT_OP_COUNT_
} mt_op_id;

/* An omitted slice bound (x[:3], x[2:]): Python's None. */
#define MT_SLICE_OMITTED INT64_MIN

/* Python's slice.indices(len) for (begin, end, step), MT_SLICE_OMITTED for a
 * missing bound: the first index and the number of elements (graph/infer_shape.c). */
void mt_slice_indices(int64_t len, int64_t begin, int64_t end, int64_t step, int64_t *start,
                      int64_t *count);

/* The words a string attribute may take (approximate="none" | "tanh" of
 * gelu), parsed by the builder: X(NAME, "word"). */
#define MT_ATTR_MODE_LIST(X) X(MT_MODE_NONE, "none") X(MT_MODE_TANH, "tanh")
typedef enum mt_attr_mode {
#define MT_X_(k, s) k,
    MT_ATTR_MODE_LIST(MT_X_)
#undef MT_X_
    MT_MODE_COUNT_
} mt_attr_mode;
const char *mt_attr_mode_str(mt_attr_mode m);
/* The mode named word[0..len), or -1. */
int mt_attr_mode_from_str(const char *word, size_t len);

/* Attributes of an op call: the non-tensor arguments, one field per kind of
 * parameter in a signature (graph/ops.def). Fields an op does not take stay
 * zero. */
typedef struct mt_gattrs {
    bool has_axes;                 /* axis=... given (false: None, all axes) */
    int naxes;
    int64_t axes[MT_MAX_RANK];     /* axis / axes, as written (may be negative) */
    bool keepdims;
    int nshape;                    /* shape=... (reshape, broadcast_to, zeros) */
    mt_dim shape[MT_MAX_RANK];     /*   a dim; value -1 with no sym: "infer" */
    bool has_dtype;
    mt_dtype dtype;                /* dtype=... (astype, zeros, full) */
    double value;                  /* fill value (full), eps (layer_norm) */
    bool has_value;
    mt_attr_mode mode;             /* a string attribute, parsed: approximate=... (gelu) */
    int nslice;                    /* x[...]: one entry per input dim, as written */
    int64_t begin[MT_MAX_RANK];    /*   start; MT_SLICE_OMITTED when left out */
    int64_t end[MT_MAX_RANK];      /*   stop;  MT_SLICE_OMITTED when left out */
    int64_t step[MT_MAX_RANK];     /*   step (non-zero; 1 when left out) */
    bool squeeze[MT_MAX_RANK];     /*   x[i]: begin = i, step 1, dim dropped */
    /* windows (conv2d, the pools): each an int or a 2-tuple, as (h, w) */
    int64_t size[2];               /* kernel_size / output_size; {0, 0}: not given */
    int64_t stride[2];             /* stride; {0, 0}: None (pools: kernel_size) */
    int64_t padding[2];
    int64_t dilation[2];           /* {0, 0}: not an op that takes it */
    int64_t groups;                /* conv2d; 0: not an op that takes it */
    bool has_dims;                 /* flatten: */
    int64_t dims[2];               /*   start_dim, end_dim, as written */
} mt_gattrs;

/* A registry entry (graph/ops.c). */
typedef struct mt_op_def {
    mt_op_id id;
    const char *name;      /* as printed after "R.": add, exp, ... */
    const char *signature; /* Python-visible parameters, or NULL when the op is
                              reachable only through an operator (ops.def) */
    mt_op_pattern pattern;
    bool elementwise;      /* legalized by the generic elementwise legalizer */
} mt_op_def;

const mt_op_def *mt_op_get(mt_op_id id);
const mt_op_def *mt_op_lookup(const char *name); /* NULL when unknown */

/* What a shape/dtype rule sees. args may be rewritten (weak constants are
 * settled to the dtype they take on). */
typedef struct mt_infer_ctx {
    mt_arena *arena;
    const mt_op_def *op;
    mt_gvar **args;
    int nargs;
    const mt_gattrs *attrs; /* never NULL */
    mt_loc loc;             /* where errors point */
} mt_infer_ctx;
typedef mt_gtype (*mt_infer_fn)(mt_infer_ctx *c);

/* The result type of op applied to args (graph/ops.c): checks arity, dtypes,
 * shapes and attributes, and reports user errors at loc. attrs may be NULL. */
mt_gtype mt_op_infer(mt_arena *a, const mt_op_def *op, mt_gvar **args, int nargs,
                     const mt_gattrs *attrs, mt_loc loc);

typedef enum mt_call_kind {
    MT_CALL_OP,
    MT_CALL_TIR,
    MT_CALL_TO_DEVICE, /* outs[0] = args[0] copied to `device`: R.to_vdevice(x, "test:0") */
    MT_CALL_EXTERN     /* a host function: R.call_dps_packed("name", (args), out_sinfo=...) */
} mt_call_kind;

/* A parameter of the entry function bound at compile time to a value of
 * this type (mt_compile_options.params): the kernel supplies it itself. */
typedef struct mt_gbound {
    const char *name;
    mt_gtype type;
} mt_gbound;

/* A host function the program may call (mt_context_register_extern): run
 * as int fn(DLTensor *in_0, ..., DLTensor *out_0, ...), destination
 * passing; 0 means success. */
typedef struct mt_gextern {
    const char *name;
    void *fn;
    int nin, nout;
    const mt_dtype *dtypes; /* inputs then outputs */
    const int *ndims;       /* inputs then outputs; -1: any rank */
} mt_gextern;

/* `outs = call(args)`. */
typedef struct mt_gbinding {
    mt_gvar **outs;      /* usually one */
    int nouts;
    mt_call_kind kind;
    const mt_op_def *op; /* MT_CALL_OP; kept on the call_tir that legalizes it */
    mt_tfunc *callee;    /* MT_CALL_TIR */
    const mt_gextern *ext; /* MT_CALL_EXTERN */
    mt_gvar **args;
    int nargs;
    const mt_gattrs *attrs; /* MT_CALL_OP: non-tensor arguments, or NULL */
    mt_loc loc;          /* the source expression that made it */
    int group;           /* fuse_ops: fusion group id; -1 before / alone */
    mt_device device;    /* where it runs (TO_DEVICE: the destination); {0, 0}:
                          * the default device. Set by the builder inside
                          * `with device(...)` */
} mt_gbinding;

/* A block of a function body. Bodies are trees of blocks:
 *
 *   MT_GBLOCK_BINDINGS  bindings in order; `dataflow` when all are pure op or
 *                       call_tir bindings (printed inside R.dataflow())
 *   MT_GBLOCK_IF        `if cond: then_body else: else_body` on a rank-0 bool
 *                       value; each branch ends by copying its values of the
 *                       names bound after the if into `merged` (phis)
 *   MT_GBLOCK_LOOP      `for ivar in range(start, stop, step)`: ivar is a
 *                       rank-0 int64 value; carried[k] holds a loop-carried
 *                       name: set to carried_init[k] before the loop and to
 *                       carried_next[k] at the end of each iteration
 *   MT_GBLOCK_ASSERT    fails the run with `message` unless cond is true
 *
 * Runtime control flow exists only when a condition or a trip count is not
 * known at compile time: the builder folds the rest. */
typedef enum mt_gblock_kind {
    MT_GBLOCK_BINDINGS, MT_GBLOCK_IF, MT_GBLOCK_LOOP, MT_GBLOCK_ASSERT
} mt_gblock_kind;

typedef struct mt_gblock mt_gblock;

typedef struct mt_gbody {
    mt_gblock **blocks;
    int nblocks;
} mt_gbody;

struct mt_gblock {
    mt_gblock_kind kind;
    bool dataflow;           /* BINDINGS: pure bindings only */
    mt_gbinding **bindings;  /* BINDINGS */
    int nbindings;
    mt_gvar *cond;           /* IF, ASSERT: rank-0 bool */
    mt_gbody then_body, else_body; /* IF */
    mt_gvar **merged;        /* IF: values defined by the if */
    mt_gvar **then_vals, **else_vals; /* IF: what each branch gives merged[k] */
    int nmerged;
    mt_gvar *ivar;           /* LOOP: the loop variable (rank-0 int64) */
    mt_gvar *start, *stop, *step; /* LOOP: rank-0 int64 values or constants */
    mt_gbody body;           /* LOOP */
    mt_gvar **carried, **carried_init, **carried_next; /* LOOP */
    int ncarried;
    const char *message;     /* ASSERT */
    mt_loc loc;              /* the statement (if/for/assert) */
};

typedef struct mt_gfunc {
    const char *name;
    mt_gvar **params;
    int nparams;
    mt_gbody body;       /* the blocks of the function, in order */
    mt_gvar **outputs;   /* returned values, in order */
    int noutputs;
    mt_loc loc;
} mt_gfunc;

/* The whole program: graph functions and the loop functions they call. */
typedef struct mt_gmodule {
    mt_device default_device; /* where values with device {0, 0} live: the target's */
    mt_gfunc **funcs;
    int nfuncs;
    mt_tfunc **tfuncs;
    int ntfuncs;
    mt_nameset tfunc_names;   /* names of tfuncs[0..ntfuncs), kept by add_tfunc */
    int tfunc_names_for;      /* ntfuncs when tfunc_names was last in step */
} mt_gmodule;

/* ---- construction (graph/graph.c) ---------------------------------------- */
mt_gmodule *mt_gmodule_new(mt_arena *a);
void mt_gmodule_add_func(mt_arena *a, mt_gmodule *m, mt_gfunc *f);
/* Adds a loop function; renames it (name_1, ...) if the name is taken. */
void mt_gmodule_add_tfunc(mt_arena *a, mt_gmodule *m, mt_tfunc *f);
mt_gfunc *mt_gfunc_new(mt_arena *a, const char *name, mt_loc loc);
mt_gvar *mt_gvar_new(mt_arena *a, const char *name, const mt_gtype *type, mt_loc loc);
mt_gvar *mt_gvar_const_int(mt_arena *a, mt_dtype dtype, int64_t v, bool weak, mt_loc loc);
mt_gvar *mt_gvar_const_float(mt_arena *a, mt_dtype dtype, double v, bool weak, mt_loc loc);
mt_gblock *mt_gblock_new(mt_arena *a, mt_gblock_kind kind, mt_loc loc);
void mt_gblock_add(mt_arena *a, mt_gblock *b, mt_gbinding *bd);
void mt_gbody_add(mt_arena *a, mt_gbody *body, mt_gblock *blk);

/* Is v used anywhere in f (args, conditions, branch values, loop bounds and
 * carried values, outputs) outside the BINDINGS block `skip` (may be NULL)? */
bool mt_gfunc_uses(const mt_gfunc *f, const mt_gblock *skip, const mt_gvar *v);

/* Adds to uses[v], for every value v, the number of places f uses it: the
 * places mt_gfunc_uses looks at, all of them, in one walk. A pass that asks
 * about many values builds this once instead of calling mt_gfunc_uses for
 * each (which is linear in f, so quadratic over a pass). */
void mt_gfunc_count_uses(mt_arena *a, const mt_gfunc *f, mt_ptrmap *uses);
/* The bindings of f computable once from its bound parameters (values given
 * at compile time, mt_gvar.bound): those of the top-level bindings blocks
 * (which run once per call, in order) whose inputs are bound parameters,
 * scalar constants or outputs of such bindings, at least one not a scalar
 * constant; never a host function. *vals maps each of their outputs, and
 * *bindings each of them, to 1. Both empty when no parameter is bound. */
void mt_gfunc_bound_values(mt_arena *a, const mt_gfunc *f, mt_ptrmap *vals, mt_ptrmap *bindings);

/* Replacements old -> new of the uses of values (args, conditions, branch
 * and loop values, outputs) found by a pass that walks a function in program
 * order and applied in one more walk: linear, where rewriting f at each
 * replacement would be quadratic. During the walk, mt_gsubst_binding makes a
 * binding's args current before the pass looks at them (so a replacement
 * can enable the next: y = f(x); z = f(x); g(y) and g(z) become equal);
 * mt_gfunc_apply_subst then rewrites every use in f. A new value must not
 * itself be replaced later (it is a constant or defined earlier). A
 * zero-filled mt_gsubst is empty. */
typedef struct mt_gsubst {
    mt_ptrmap at; /* old -> index + 1 into to */
    mt_gvar **to;
    int n, cap;
} mt_gsubst;
void mt_gsubst_add(mt_arena *a, mt_gsubst *s, const mt_gvar *old, mt_gvar *new_);
mt_gvar *mt_gsubst_lookup(const mt_gsubst *s, mt_gvar *v); /* v itself when not replaced */
void mt_gsubst_binding(const mt_gsubst *s, mt_gbinding *b);
void mt_gfunc_apply_subst(mt_gfunc *f, const mt_gsubst *s);
bool mt_gattrs_equal(const mt_gattrs *x, const mt_gattrs *y); /* NULL = no attrs */

/* Calls fn on every BINDINGS block of f, depth first, in program order. */
void mt_gfunc_foreach_bindings(mt_gfunc *f, void (*fn)(mt_gblock *blk, void *ctx), void *ctx);
mt_gbinding *mt_gbinding_op(mt_arena *a, mt_gvar *out, const mt_op_def *op,
                            mt_gvar *const *args, int nargs, const mt_gattrs *attrs,
                            mt_loc loc);
/* out = args[0] on device dst (out's type says dst too). */
mt_gbinding *mt_gbinding_to_device(mt_arena *a, mt_gvar *out, mt_gvar *src, mt_device dst, mt_loc loc);
mt_gbinding *mt_gbinding_extern(mt_arena *a, mt_gvar *const *outs, int nouts, const mt_gextern *ext,
                                mt_gvar *const *args, int nargs, mt_loc loc);
mt_gbinding *mt_gbinding_tir(mt_arena *a, mt_gvar *const *outs, int nouts, mt_tfunc *callee,
                             mt_gvar *const *args, int nargs, mt_loc loc);

/* Evaluates op on scalar constant args at compile time (graph/fold.c): true
 * and *result (a constant of type out) when op is foldable and every arg is
 * a constant. */
bool mt_fold_scalar(mt_arena *a, const mt_op_def *op, mt_gvar *const *args, int nargs,
                    const mt_gtype *out, mt_loc loc, mt_gvar **result);

/* ---- types ---------------------------------------------------------------- */
mt_gtype mt_gtype_scalar(mt_dtype dtype);
bool mt_gtype_equal(const mt_gtype *x, const mt_gtype *y);
bool mt_dim_equal(mt_dim x, mt_dim y);
/* "R.Tensor((2, "n"), dtype="float32")" */
const char *mt_gtype_str(mt_arena *a, const mt_gtype *t);
/* "(2, n)" for messages */
const char *mt_shape_str(mt_arena *a, const mt_gtype *t);

/* The largest tensor the compiler accepts: 2**48 bytes, the address space
 * of an x86-64 or AArch64 process. Within it, every element count, byte size
 * and index expression the later stages form (offsets, tile bounds) stays far
 * from int64 overflow. */
#define MT_MAX_TENSOR_BYTES ((int64_t)1 << 48)
/* Fails with MT_ERR_LIMIT at loc when the non-zero constant dims of t
 * (symbolic dims count as 1) make a tensor larger than MT_MAX_TENSOR_BYTES. */
void mt_gtype_check_size(mt_arena *a, const mt_gtype *t, mt_loc loc);

/* ---- printing (graph/printer.c) ------------------------------------------ */
const char *mt_gfunc_print(mt_arena *a, const mt_gfunc *f);
/* Every graph function, then (with_tir) every loop function. */
const char *mt_gmodule_print(mt_arena *a, const mt_gmodule *m, bool with_tir);
/* The graph functions as one Graphviz digraph, each fusion group (after
 * fuse_ops) a cluster (graph/dot.c). */
const char *mt_gmodule_dot(mt_arena *a, const mt_gmodule *m);

#endif
