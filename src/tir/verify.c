/*
 * verify.c -- the TIR verifier (see verify.h; docs/tir.md lists the rules).
 *
 * One walk over the function, statements top-down, keeping what is in
 * scope:
 *
 *  - variables: the scalar params and the symbolic dims for the whole
 *    function, a loop's variable in its body, a let's in its body, a
 *    block's iteration variables in its predicate, regions, init and body
 *    (not in its iter values: those are evaluated outside). A variable
 *    used where it is not in scope, or bound again where it already is,
 *    is an error; binding the same variable in two sibling scopes is fine.
 *  - buffers: the buffer params and f->allocs for the whole function, a
 *    block's allocations in the block, a TS_ALLOC's buffer in its body.
 *    Every load, store and region must name one of them.
 *
 * Expressions are checked bottom-up where they occur: operands present,
 * dtypes and lanes that agree (a vector meets a scalar, never a vector of
 * another width), integer indices, bool conditions, intrinsic arity,
 * T.Ramp and T.Broadcast of scalars.
 *
 * The first failure is kept and the walk stops. The message says what is
 * wrong, the function, the source place of the innermost statement (or
 * enclosing statement, or the function) that has one, and that statement
 * printed (its first lines). A statement with missing parts or an unknown
 * kind is not printed: the printer assumes well-formed nodes, and the
 * verifier must never fail itself on what it is given.
 */
#include "tir/verify.h"

#include <stdlib.h>
#include <string.h>

#include "support/common.h"
#include "support/ptrmap.h"
#include "support/strbuf.h"

enum { PRINT_LINES = 6, PRINT_CHARS = 400 };

typedef struct vctx {
    mt_arena *a;
    const mt_tfunc *f;
    mt_tir_form form;
    MT_VEC(const mt_tvar *) vars;    /* in scope, innermost last */
    MT_VEC(const mt_tbuffer *) bufs; /* in scope, innermost last */
    MT_VEC(const mt_tvar *) loops;   /* loop variables in scope, innermost last ... */
    int sealed;                      /* ... the first this many hidden by the innermost block */
    mt_ptrmap depth;                 /* variable or buffer -> times it is in vars or bufs */
    mt_ptrmap let_lanes;             /* let variable -> the lanes of its value (its last let) */
    const mt_tstmt *at;              /* the statement being checked (NULL: the function) */
    mt_loc loc;                      /* the nearest source place known */
    bool shape_only;                 /* only missing parts and unknown kinds fail */
    const char *err;                 /* the first failure, or NULL */
    /* where a T.shfl_xor may be (see "Warp shuffles" below): */
    bool gpu;                        /* f is a GPU kernel, or a function of a CUDA target */
    int warp;                        /* threads per warp */
    const mt_tstmt *phase;           /* the outermost threadIdx loop around c->at, or NULL */
    const char *diverged;            /* what lies between it and c->at that not every lane may
                                        reach together ("an if", ...), or NULL */
    const mt_texpr *shfl_ok;         /* the stored value being checked, when its store is
                                        where a shuffle may be */
    /* where a wmma intrinsic may be ("Tensor-core tiles" below): */
    const char *warp_div;            /* what lies between the phase and c->at that not every
                                        lane may reach together (an if, ...), or NULL */
    const mt_texpr *evaluated;       /* the value of the T.evaluate being checked */
    bool wmma_arg;                   /* checking a wmma intrinsic's address argument */
} vctx;

static void failv(vctx *c, bool shape, const char *fmt, va_list ap) {
    if (c->err || (c->shape_only && !shape)) return;
    c->err = mt_arena_vprintf(c->a, fmt, ap);
}

static void fail(vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(vctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    failv(c, false, fmt, ap);
    va_end(ap);
}

/* Missing parts or an unknown kind: what the printer cannot print. */
static void fail_shape(vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_shape(vctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    failv(c, true, fmt, ap);
    va_end(ap);
}

static const char *vname(const mt_tvar *v) { return v->name ? v->name : "?"; }
static const char *bname(const mt_tbuffer *b) { return b->name ? b->name : "?"; }

/* ---- scope ---------------------------------------------------------------- */

/* A lookup is one probe of c->depth, not a scan of the scope: the lets of
 * an unrolled micro-kernel nest dozens deep, and every use of a variable
 * was checked against all of them. */
static bool var_in_scope(const vctx *c, const mt_tvar *v) { return mt_ptrmap_get(&c->depth, v) > 0; }

/* Leaves the scopes entered since vars had nv entries and bufs nb. */
static void pop_scope(vctx *c, int nv, int nb) {
    for (int i = nv; i < c->vars.len; i++) mt_ptrmap_add(c->a, &c->depth, c->vars.data[i], -1);
    for (int i = nb; i < c->bufs.len; i++) mt_ptrmap_add(c->a, &c->depth, c->bufs.data[i], -1);
    c->vars.len = nv, c->bufs.len = nb;
}

/* A block's regions, init and body see the loops around it only through
 * its iteration variables (TVM's rule too): the primitives move and copy
 * blocks under other loops, and only the bindings follow. Hides the loop
 * variables loops[0..n) (shows those hidden before, when n is smaller);
 * returns what was hidden before. */
static int seal(vctx *c, int n) {
    int was = c->sealed;
    for (int i = was; i < n; i++) mt_ptrmap_add(c->a, &c->depth, c->loops.data[i], -1);
    for (int i = n; i < was; i++) mt_ptrmap_add(c->a, &c->depth, c->loops.data[i], 1);
    c->sealed = n;
    return was;
}

static bool hidden_loop(const vctx *c, const mt_tvar *v) {
    for (int i = 0; i < c->sealed; i++)
        if (c->loops.data[i] == v) return true;
    return false;
}

static void bind_var(vctx *c, const mt_tvar *v, const char *what) {
    if (!v) {
        fail_shape(c, "%s has no variable", what);
        return;
    }
    if (var_in_scope(c, v) || hidden_loop(c, v))
        fail(c, "%s '%s' is bound again inside its own scope", what, vname(v));
    MT_VEC_PUSH(c->a, &c->vars, v);
    mt_ptrmap_add(c->a, &c->depth, v, 1);
}

static bool buf_in_scope(const vctx *c, const mt_tbuffer *b) { return mt_ptrmap_get(&c->depth, b) > 0; }

/* ---- expressions ---------------------------------------------------------- */

static void check_expr(vctx *c, const mt_texpr *e, const char *what);

static bool is_intlike(mt_dtype dt) { return mt_dtype_is_int(dt) || dt == MT_BOOL; }
static bool is_compare(mt_texpr_kind k) { return k >= TE_EQ && k <= TE_GE; }
static int max2(int x, int y) { return x > y ? x : y; }

/* An index or extent: a scalar (or, for an index, vector) integer. */
static void check_int(vctx *c, const mt_texpr *e, const char *what, bool vector_ok) {
    check_expr(c, e, what);
    if (c->err) return;
    if (!mt_dtype_is_int(e->dtype))
        fail(c, "%s '%s' is %s, not an integer", what, mt_texpr_print(c->a, e), mt_dtype_str(e->dtype));
    else if (!vector_ok && e->lanes != 1)
        fail(c, "%s '%s' is a vector of %d lanes", what, mt_texpr_print(c->a, e), e->lanes);
}

static void check_bool(vctx *c, const mt_texpr *e, const char *what) {
    check_expr(c, e, what);
    if (!c->err && e->dtype != MT_BOOL)
        fail(c, "%s '%s' is %s, not bool", what, mt_texpr_print(c->a, e), mt_dtype_str(e->dtype));
}

/* buf[idx...]: the buffer in scope, one index per dim (one int64 index
 * when flat), integer indices. */
static void check_access(vctx *c, const mt_tbuffer *b, mt_texpr *const *idx, int n, const char *what) {
    if (!b || !b->name || (unsigned)b->dtype >= MT_DTYPE_COUNT_) {
        fail_shape(c, "%s names no buffer, or one without a name or dtype", what);
        return;
    }
    if (!buf_in_scope(c, b))
        fail(c, "%s '%s' names a buffer that is neither a parameter nor allocated in scope", what,
             bname(b));
    else if (n != b->ndim)
        fail(c, "%s '%s' has %d indices for %d dims", what, bname(b), n, b->ndim);
    for (int i = 0; !c->err && i < n; i++) {
        if (!idx || !idx[i]) {
            fail_shape(c, "%s '%s' has no index %d", what, bname(b), i);
            return;
        }
        check_int(c, idx[i], "index", true);
        if (!c->err && c->form == MT_TIR_FLAT && idx[i]->dtype != MT_INT64)
            fail(c, "index '%s' of '%s' is %s in the flat form (int64 expected)",
                 mt_texpr_print(c->a, idx[i]), bname(b), mt_dtype_str(idx[i]->dtype));
    }
}

static void check_binary(vctx *c, const mt_texpr *e) {
    const char *op = mt_texpr_kind_str(e->kind);
    if (!e->a || !e->b) {
        fail_shape(c, "operator '%s' lacks an operand", op);
        return;
    }
    check_expr(c, e->a, "operand");
    check_expr(c, e->b, "operand");
    if (c->err) return;
    if (e->a->dtype != e->b->dtype)
        fail(c, "operands of '%s' disagree: %s vs %s", op, mt_dtype_str(e->a->dtype),
             mt_dtype_str(e->b->dtype));
    else if (e->a->lanes != e->b->lanes && e->a->lanes != 1 && e->b->lanes != 1)
        fail(c, "operands of '%s' have %d and %d lanes", op, e->a->lanes, e->b->lanes);
    else if ((e->kind == TE_AND || e->kind == TE_OR) && e->a->dtype != MT_BOOL)
        fail(c, "operands of '%s' are %s, not bool", op, mt_dtype_str(e->a->dtype));
    else if (e->dtype != (is_compare(e->kind) ? MT_BOOL : e->a->dtype))
        fail(c, "'%s' of %s operands is typed %s", op, mt_dtype_str(e->a->dtype), mt_dtype_str(e->dtype));
    else if (e->lanes != max2(e->a->lanes, e->b->lanes))
        fail(c, "'%s' has %d lanes, its operands %d and %d", op, e->lanes, e->a->lanes, e->b->lanes);
}

static void check_unary(vctx *c, const mt_texpr *e) {
    const char *op = mt_texpr_kind_str(e->kind);
    if (!e->a) {
        fail_shape(c, "'%s' has no operand", op);
        return;
    }
    check_expr(c, e->a, "operand");
    if (c->err) return;
    if (e->kind == TE_NOT && e->a->dtype != MT_BOOL)
        fail(c, "'not' of %s (bool expected)", mt_dtype_str(e->a->dtype));
    else if (e->kind == TE_NEG && e->a->dtype == MT_BOOL)
        fail(c, "arithmetic negation of a bool");
    else if (e->kind != TE_CAST && e->dtype != (e->kind == TE_NOT ? MT_BOOL : e->a->dtype))
        fail(c, "'%s' of %s is typed %s", op, mt_dtype_str(e->a->dtype), mt_dtype_str(e->dtype));
    else if (e->lanes != e->a->lanes)
        fail(c, "'%s' has %d lanes, its operand %d", op, e->lanes, e->a->lanes);
}

static void check_select(vctx *c, const mt_texpr *e) {
    if (!e->cond || !e->a || !e->b) {
        fail_shape(c, "T.Select lacks an operand");
        return;
    }
    check_bool(c, e->cond, "select condition");
    check_expr(c, e->a, "select arm");
    check_expr(c, e->b, "select arm");
    if (c->err) return;
    /* a vector condition may pick between scalar arms (codegen splats them) */
    int lanes = max2(e->cond->lanes, max2(e->a->lanes, e->b->lanes));
    if (e->a->dtype != e->b->dtype || e->dtype != e->a->dtype)
        fail(c, "select arms disagree: %s vs %s", mt_dtype_str(e->a->dtype), mt_dtype_str(e->b->dtype));
    else if ((e->a->lanes != 1 && e->a->lanes != lanes) || (e->b->lanes != 1 && e->b->lanes != lanes) ||
             (e->cond->lanes != 1 && e->cond->lanes != lanes) || e->lanes != lanes)
        fail(c, "select lanes disagree: condition %d, arms %d and %d, result %d", e->cond->lanes,
             e->a->lanes, e->b->lanes, e->lanes);
}

/* ---- warp shuffles ----------------------------------------------------------
 * T.shfl_xor(value, lane_mask, width) reads another lane's value, so every
 * lane of the warp must reach it at once (CUDA's full-warp mask): it may
 * only be the whole value of a store directly in a phase (the outermost
 * threadIdx.x loop, whose constant extent the warp size divides), reached
 * through sequences and lets only -- nothing that some lanes could skip
 * or repeat, and nothing the emulation (emulate_gpu.c) could not split
 * the phase at. */

static bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

static bool shuffle_dtype(mt_dtype t) {
    return mt_dtype_is_half(t) || t == MT_FLOAT32 || t == MT_FLOAT64 || t == MT_INT32 || t == MT_INT64;
}

/* Where the shuffle e is: a GPU kernel's phase, nothing divergent between. */
static void check_shuffle_place(vctx *c, const mt_texpr *e) {
    int64_t ext;
    if (!c->gpu)
        fail(c, "T.shfl_xor outside a GPU kernel (the function is compiled for the %s)",
             mt_tfunc_target(c->f)->kind == MT_TARGET_CUDA ? "GPU" : "CPU");
    else if (!c->phase)
        fail(c, "T.shfl_xor outside the phases of its kernel (not under a threadIdx loop)");
    else if (strcmp(c->phase->thread_tag, "threadIdx.x") != 0 || !mt_te_is_const_int(c->phase->extent, &ext) ||
             ext % c->warp != 0)
        fail(c, "T.shfl_xor in a phase that is not a threadIdx.x loop whose constant extent is a multiple of "
                "the warp (%d)", c->warp);
    else if (c->diverged)
        fail(c, "T.shfl_xor under %s inside its phase: every lane of the warp must reach it together", c->diverged);
    else if (c->shfl_ok != e)
        fail(c, "T.shfl_xor that is not the whole value of a store");
}

static void check_shuffle(vctx *c, const mt_texpr *e) {
    const mt_texpr *m = e->args[1], *w = e->args[2];
    if (m->kind != TE_INT || w->kind != TE_INT || m->dtype != MT_INT32 || w->dtype != MT_INT32)
        fail(c, "T.shfl_xor takes int32 immediates as its lane mask and width");
    else if (!pow2(w->ival) || w->ival > c->warp)
        fail(c, "T.shfl_xor of width %lld (a power of two of at most %d expected)", (long long)w->ival, c->warp);
    else if (!pow2(m->ival) || m->ival >= w->ival)
        fail(c, "T.shfl_xor of lane mask %lld (a power of two below the width %lld expected)",
             (long long)m->ival, (long long)w->ival);
    else if (!shuffle_dtype(e->dtype) || e->args[0]->dtype != e->dtype || e->lanes != 1)
        fail(c, "T.shfl_xor of a %s value (float16, bfloat16, float32, float64, int32 or int64 expected)",
             mt_dtype_str(e->args[0]->dtype));
    else check_shuffle_place(c, e);
}

/* ---- tensor-core tiles -------------------------------------------------------
 * The wmma intrinsics (tir.h) are executed by a warp together, so like a
 * shuffle every lane must reach them: the whole value of a T.evaluate in
 * a phase of a GPU kernel (a threadIdx.x loop whose constant extent the
 * warp divides), through sequences, lets, allocations and loops of
 * constant bounds only. Their arguments are addresses of the right scope
 * and dtype, fragments at multiples of 256, the ldm an immediate that
 * keeps each row 16-byte aligned. The inputs are float16 or bfloat16
 * (bfloat16 where the target has its tensor cores: mma_bf16), one dtype
 * per intrinsic: a load's tile and fragment, an mma's a and b. */

typedef struct wmma_arg { mt_scope scope; mt_dtype dt; } wmma_arg;
#define WMMA_IN MT_DTYPE_COUNT_ /* wmma_arg.dt: float16 or bfloat16 */

/* The address each argument must be (scope GLOBAL: a float32 value). */
static const wmma_arg *wmma_args(mt_intrin in) {
    static const wmma_arg fill[] = {{MT_SCOPE_WMMA_ACC, MT_FLOAT32}, {MT_SCOPE_GLOBAL, MT_FLOAT32}};
    static const wmma_arg la[] = {{MT_SCOPE_WMMA_A, WMMA_IN}, {MT_SCOPE_SHARED, WMMA_IN}};
    static const wmma_arg lb[] = {{MT_SCOPE_WMMA_B, WMMA_IN}, {MT_SCOPE_SHARED, WMMA_IN}};
    static const wmma_arg mma[] = {{MT_SCOPE_WMMA_ACC, MT_FLOAT32}, {MT_SCOPE_WMMA_A, WMMA_IN},
                                   {MT_SCOPE_WMMA_B, WMMA_IN}};
    static const wmma_arg st[] = {{MT_SCOPE_SHARED, MT_FLOAT32}, {MT_SCOPE_WMMA_ACC, MT_FLOAT32}};
    return in == IN_WMMA_FILL ? fill : in == IN_WMMA_LOAD_A ? la : in == IN_WMMA_LOAD_B ? lb
           : in == IN_WMMA_MMA ? mma : st;
}

static void check_wmma_place(vctx *c, const mt_texpr *e) {
    const char *fn = mt_intrin_name(e->intrin);
    int64_t ext;
    if (!c->gpu) fail(c, "T.%s outside a GPU kernel", fn);
    else if (!c->phase) fail(c, "T.%s outside the phases of its kernel (not under a threadIdx loop)", fn);
    else if (strcmp(c->phase->thread_tag, "threadIdx.x") != 0 || !mt_te_is_const_int(c->phase->extent, &ext) ||
             ext % c->warp != 0)
        fail(c, "T.%s in a phase that is not a threadIdx.x loop whose constant extent is a multiple of the "
                "warp (%d)", fn, c->warp);
    else if (c->warp_div)
        fail(c, "T.%s under %s inside its phase: every lane of the warp must reach it together", fn, c->warp_div);
    else if (c->evaluated != e)
        fail(c, "T.%s that is not the whole value of a T.evaluate", fn);
}

/* Argument i of e: an address of its scope and dtype (or a float32 value). */
static void check_wmma_arg(vctx *c, const mt_texpr *e, int i, const wmma_arg *w) {
    const char *fn = mt_intrin_name(e->intrin);
    const mt_texpr *x = e->args[i];
    if (w->scope == MT_SCOPE_GLOBAL) {
        check_expr(c, x, "argument");
        if (!c->err && (x->dtype != MT_FLOAT32 || x->lanes != 1 || mt_texpr_reads_memory(x)))
            fail(c, "T.%s fills with a float32 value that reads no memory", fn);
        return;
    }
    if (x->kind != TE_LOAD || x->nargs != 1 || x->lanes != 1) {
        fail(c, "argument %d of T.%s is not an address (a flat buffer's element: buf[offset])", i, fn);
        return;
    }
    c->wmma_arg = true;
    check_expr(c, x, "argument");
    c->wmma_arg = false;
    int64_t off;
    if (c->err) return;
    bool dt_ok = w->dt == WMMA_IN ? mt_dtype_is_half(x->buf->dtype) : x->buf->dtype == w->dt;
    if (x->buf->scope != w->scope || !dt_ok)
        fail(c, "argument %d of T.%s is '%s' (%s, %s): a %s buffer of %s expected", i, fn, bname(x->buf),
             mt_scope_str(x->buf->scope), mt_dtype_str(x->buf->dtype), mt_scope_str(w->scope),
             w->dt == WMMA_IN ? "float16 or bfloat16" : mt_dtype_str(w->dt));
    else if (mt_scope_is_fragment(w->scope) && mt_te_is_const_int(x->args[0], &off) && off % MT_WMMA_FRAG != 0)
        fail(c, "argument %d of T.%s names element %lld of '%s', not the first of a fragment (a multiple of 256)",
             i, fn, (long long)off, bname(x->buf));
}

static void check_wmma(vctx *c, const mt_texpr *e) {
    const char *fn = mt_intrin_name(e->intrin);
    if (e->nargs != mt_intrin_arity(e->intrin) || !e->args) {
        fail_shape(c, "T.%s takes %d arguments, called with %d", fn, mt_intrin_arity(e->intrin), e->nargs);
        return;
    }
    for (int i = 0; i < e->nargs; i++)
        if (!e->args[i]) {
            fail_shape(c, "T.%s lacks argument %d", fn, i);
            return;
        }
    const wmma_arg *w = wmma_args(e->intrin);
    int naddr = e->intrin == IN_WMMA_MMA ? 3 : 2;
    for (int i = 0; !c->err && i < naddr; i++) check_wmma_arg(c, e, i, &w[i]);
    if (c->err) return;
    int in0 = e->intrin == IN_WMMA_MMA ? 1 : 0; /* the two inputs of one dtype */
    const mt_tbuffer *x = e->args[in0]->kind == TE_LOAD ? e->args[in0]->buf : NULL; /* (checked unless */
    const mt_tbuffer *y = e->args[in0 + 1]->kind == TE_LOAD ? e->args[in0 + 1]->buf : NULL; /* shape_only) */
    if (e->intrin != IN_WMMA_FILL && e->intrin != IN_WMMA_STORE && x && y && x->dtype != y->dtype) {
        fail(c, "T.%s of '%s' (%s) and '%s' (%s): the tensor cores take one input dtype", fn, bname(x),
             mt_dtype_str(x->dtype), bname(y), mt_dtype_str(y->dtype));
        return;
    }
    if (naddr == 2 && e->nargs == 3) {
        const mt_texpr *ldm = e->args[2];
        int64_t unit = e->intrin == IN_WMMA_STORE ? 4 : 8;
        if (ldm->kind != TE_INT || ldm->dtype != MT_INT32 || ldm->ival < 16 || ldm->ival % unit != 0)
            fail(c, "T.%s's leading dimension is not an int32 immediate of at least 16, a multiple of %lld", fn,
                 (long long)unit);
    }
    if (!c->err && (e->dtype != MT_INT32 || e->lanes != 1)) fail(c, "T.%s typed %s (int32 expected)", fn,
                                                                  mt_dtype_str(e->dtype));
    if (!c->err) check_wmma_place(c, e);
}

/* T.prefetch(x): one element's address (any scalar expression once passes
 * have rewritten it; code generation prefetches only a load), the whole
 * value of a T.evaluate. */
static void check_prefetch(vctx *c, const mt_texpr *e) {
    if (e->nargs != 1 || !e->args || !e->args[0]) {
        fail_shape(c, "T.prefetch takes 1 argument, called with %d", e->nargs);
        return;
    }
    const mt_texpr *x = e->args[0];
    check_expr(c, x, "argument");
    if (c->err) return;
    if (x->lanes != 1) fail(c, "T.prefetch of a %d-lane value (one element's address expected)", x->lanes);
    else if (e->dtype != MT_INT32 || e->lanes != 1) fail(c, "T.prefetch typed %s (int32 expected)", mt_dtype_str(e->dtype));
    else if (c->evaluated != e) fail(c, "T.prefetch that is not the whole value of a T.evaluate");
}

static void check_call(vctx *c, const mt_texpr *e) {
    if (mt_intrin_is_wmma(e->intrin)) {
        check_wmma(c, e);
        return;
    }
    if (e->intrin == IN_PREFETCH) {
        check_prefetch(c, e);
        return;
    }
    if (e->intrin == IN_SHFL_XOR && e->nargs == 3 && e->args && e->args[0] && e->args[1] && e->args[2]) {
        if (mt_texpr_has_shuffle(e->args[0])) fail(c, "T.shfl_xor of a value that holds another shuffle");
        check_expr(c, e->args[0], "argument");
        check_expr(c, e->args[1], "argument");
        check_expr(c, e->args[2], "argument");
        if (!c->err) check_shuffle(c, e);
        return;
    }
    if ((unsigned)e->intrin >= IN_COUNT_) {
        fail_shape(c, "call of unknown intrinsic %d", (int)e->intrin);
        return;
    }
    const char *fn = mt_intrin_name(e->intrin);
    if (e->nargs != mt_intrin_arity(e->intrin) || (e->nargs > 0 && !e->args)) {
        fail_shape(c, "T.%s takes %d arguments, called with %d", fn, mt_intrin_arity(e->intrin), e->nargs);
        return;
    }
    int lanes = 1;
    for (int i = 0; !c->err && i < e->nargs; i++) {
        if (!e->args[i]) {
            fail_shape(c, "T.%s lacks argument %d", fn, i);
            return;
        }
        check_expr(c, e->args[i], "argument");
        if (!c->err && e->args[i]->dtype != e->dtype)
            fail(c, "argument %d of T.%s is %s, the call %s", i, fn, mt_dtype_str(e->args[i]->dtype),
                 mt_dtype_str(e->dtype));
        if (!c->err) lanes = max2(lanes, e->args[i]->lanes);
    }
    if (!c->err && e->lanes != lanes) fail(c, "T.%s has %d lanes, its arguments %d", fn, e->lanes, lanes);
}

/* T.Ramp(base, stride, lanes) and T.Broadcast(value, lanes). */
static void check_vector(vctx *c, const mt_texpr *e) {
    bool ramp = e->kind == TE_RAMP;
    if (!e->a || (ramp && !e->b)) {
        fail_shape(c, "%s lacks an operand", ramp ? "T.Ramp" : "T.Broadcast");
        return;
    }
    if (ramp) {
        check_int(c, e->a, "ramp base", false);
        check_int(c, e->b, "ramp stride", false);
        if (!c->err && (e->a->dtype != e->b->dtype || e->dtype != e->a->dtype))
            fail(c, "T.Ramp of %s with a %s stride", mt_dtype_str(e->a->dtype), mt_dtype_str(e->b->dtype));
    } else {
        check_expr(c, e->a, "broadcast value");
        if (!c->err && (e->a->lanes != 1 || e->dtype != e->a->dtype))
            fail(c, "T.Broadcast of a vector or of another dtype");
    }
    if (!c->err && e->lanes < 2) fail(c, "%s of %d lanes", ramp ? "T.Ramp" : "T.Broadcast", e->lanes);
}

/* T.Shuffle([x, y], lanes): one or two vectors of the shuffle's dtype and
 * one width, every lane picked within them. */
static void check_lane_shuffle(vctx *c, const mt_texpr *e) {
    if (e->nargs < 1 || e->nargs > 2 || !e->args || !e->lane) {
        fail_shape(c, "T.Shuffle of %d vectors (1 or 2)", e->nargs);
        return;
    }
    for (int i = 0; !c->err && i < e->nargs; i++) {
        check_expr(c, e->args[i], "shuffled vector");
        if (!c->err && e->args[i]->dtype != e->dtype)
            fail(c, "T.Shuffle of a %s vector into %s", mt_dtype_str(e->args[i]->dtype), mt_dtype_str(e->dtype));
        else if (!c->err && (e->args[i]->lanes < 2 || e->args[i]->lanes != e->args[0]->lanes))
            fail(c, "T.Shuffle of vectors of %d and %d lanes (one width, at least 2)", e->args[0]->lanes,
                 e->args[i]->lanes);
    }
    int n = c->err ? 0 : e->nargs * e->args[0]->lanes;
    for (int i = 0; !c->err && i < e->lanes; i++)
        if (e->lane[i] < 0 || e->lane[i] >= n) fail(c, "T.Shuffle picks lane %d of %d", e->lane[i], n);
}

/* Immediates, variables and loads. */
static void check_leaf(vctx *c, const mt_texpr *e) {
    switch (e->kind) {
    case TE_INT:
        if (!is_intlike(e->dtype)) fail(c, "integer immediate of dtype %s", mt_dtype_str(e->dtype));
        break;
    case TE_FLOAT:
        if (!mt_dtype_is_float(e->dtype)) fail(c, "float immediate of dtype %s", mt_dtype_str(e->dtype));
        break;
    case TE_VAR:
        if (!e->var || !e->var->name) fail_shape(c, "variable reference without a (named) variable");
        else if (!var_in_scope(c, e->var) && hidden_loop(c, e->var))
            fail(c, "loop variable '%s' is used inside a block, which sees the loops around it only through "
                    "its iteration variables", vname(e->var));
        else if (!var_in_scope(c, e->var))
            fail(c, "variable '%s' is used outside the scope that defines it", vname(e->var));
        else if (e->dtype != e->var->dtype)
            fail(c, "use of '%s' typed %s, the variable is %s", vname(e->var), mt_dtype_str(e->dtype),
                 mt_dtype_str(e->var->dtype));
        else if (e->lanes > 1 && mt_ptrmap_get(&c->let_lanes, e->var) > 0 &&
                 e->lanes != mt_ptrmap_get(&c->let_lanes, e->var))
            fail(c, "use of '%s' as %d lanes, its value has %d", vname(e->var), e->lanes,
                 mt_ptrmap_get(&c->let_lanes, e->var));
        break;
    default: /* TE_LOAD */
        check_access(c, e->buf, e->args, e->nargs, "load from");
        if (!c->err && mt_scope_is_fragment(e->buf->scope) && !c->wmma_arg)
            fail(c, "load from fragment '%s' outside a wmma intrinsic", bname(e->buf));
        if (!c->err && e->dtype != e->buf->dtype)
            fail(c, "load from '%s' typed %s, the buffer is %s", bname(e->buf), mt_dtype_str(e->dtype),
                 mt_dtype_str(e->buf->dtype));
        int lanes = 1;
        for (int i = 0; !c->err && i < e->nargs; i++) lanes = max2(lanes, e->args[i]->lanes);
        if (!c->err && e->lanes != lanes) fail(c, "load has %d lanes, its index %d", e->lanes, lanes);
    }
}

static void check_expr(vctx *c, const mt_texpr *e, const char *what) {
    if (c->err) return;
    if (!e) {
        fail_shape(c, "missing %s", what);
        return;
    }
    if ((unsigned)e->kind >= TE_COUNT_ || (unsigned)e->dtype >= MT_DTYPE_COUNT_) {
        fail_shape(c, "%s of unknown kind %d or dtype %d", what, (int)e->kind, (int)e->dtype);
        return;
    }
    if (e->lanes < 1) fail(c, "%s '%s' has %d lanes", what, mt_texpr_kind_str(e->kind), e->lanes);
    switch (e->kind) {
    case TE_INT: case TE_FLOAT: case TE_VAR: case TE_LOAD: check_leaf(c, e); break;
    case TE_NOT: case TE_NEG: case TE_CAST: check_unary(c, e); break;
    case TE_SELECT: check_select(c, e); break;
    case TE_CALL: check_call(c, e); break;
    case TE_RAMP: case TE_BROADCAST: check_vector(c, e); break;
    case TE_SHUFFLE: check_lane_shuffle(c, e); break;
    default: check_binary(c, e); break;
    }
}

/* ---- statements ----------------------------------------------------------- */

static void check_stmt(vctx *c, const mt_tstmt *s);

/* A buffer that comes into scope (param, allocation): its shape is
 * integer expressions of what is in scope; flat: one dim. */
static void declare_buf(vctx *c, const mt_tbuffer *b, const char *what) {
    if (c->err) return;
    if (!b || !b->name || b->ndim < 0 || (b->ndim > 0 && !b->shape) ||
        (unsigned)b->dtype >= MT_DTYPE_COUNT_) {
        fail_shape(c, "%s is missing or incomplete (name, shape or dtype)", what);
        return;
    }
    for (int d = 0; !c->err && d < b->ndim; d++) check_int(c, b->shape[d], "buffer dim", false);
    if (!c->err && c->form == MT_TIR_FLAT && b->ndim != 1)
        fail(c, "%s '%s' has %d dims in the flat form", what, b->name, b->ndim);
    if (!c->err && buf_in_scope(c, b))
        fail(c, "%s '%s' is already in scope", what, b->name);
    MT_VEC_PUSH(c->a, &c->bufs, b);
    mt_ptrmap_add(c->a, &c->depth, b, 1);
}

static void check_for(vctx *c, const mt_tstmt *s) {
    check_int(c, s->min, "loop min", false);
    check_int(c, s->extent, "loop extent", false);
    if (!c->err && (s->min->dtype != MT_INT64 || s->extent->dtype != MT_INT64))
        fail(c, "loop bounds are %s and %s (int64 expected)", mt_dtype_str(s->min->dtype),
             mt_dtype_str(s->extent->dtype));
    if (!c->err && (unsigned)s->for_kind > MT_FOR_THREAD) fail_shape(c, "loop of unknown kind");
    if (!c->err && s->for_kind == MT_FOR_THREAD && !s->thread_tag) fail(c, "thread loop without a tag");
    int nv = c->vars.len, nl = c->loops.len;
    bind_var(c, s->var, "loop variable");
    MT_VEC_PUSH(c->a, &c->loops, s->var);
    if (!c->err && !mt_dtype_is_int(s->var->dtype))
        fail(c, "loop variable '%s' is %s", vname(s->var), mt_dtype_str(s->var->dtype));
    const mt_tstmt *phase = c->phase;
    const char *div = c->diverged;
    bool thread = s->for_kind == MT_FOR_THREAD && s->thread_tag && !strncmp(s->thread_tag, "threadIdx.", 10);
    const char *wdiv = c->warp_div;
    int64_t lo, ext;
    bool uniform = !thread && mt_te_is_const_int(s->min, &lo) && mt_te_is_const_int(s->extent, &ext);
    if (thread && !phase) c->phase = s;
    else if (phase) c->diverged = thread ? "a nested threadIdx loop" : "a loop";
    if (phase && !uniform && !wdiv) c->warp_div = thread ? "a nested threadIdx loop" : "a loop of variable bounds";
    check_stmt(c, s->body);
    pop_scope(c, nv, c->bufs.len);
    c->loops.len = nl;
    c->phase = phase, c->diverged = div, c->warp_div = wdiv;
}

static void check_store(vctx *c, const mt_tstmt *s) {
    check_access(c, s->buf, s->idx, s->nidx, "store to");
    if (!c->err && mt_scope_is_fragment(s->buf->scope))
        fail(c, "store to fragment '%s' outside a wmma intrinsic", bname(s->buf));
    c->shfl_ok = s->value;
    check_expr(c, s->value, "stored value");
    c->shfl_ok = NULL;
    if (c->err) return;
    if (s->value->dtype != s->buf->dtype)
        fail(c, "store of %s to '%s' of %s", mt_dtype_str(s->value->dtype), bname(s->buf),
             mt_dtype_str(s->buf->dtype));
    int lanes = 1;
    for (int i = 0; i < s->nidx; i++) lanes = max2(lanes, s->idx[i]->lanes);
    if (!c->err && s->value->lanes != 1 && s->value->lanes != lanes)
        fail(c, "store of %d lanes at an index of %d", s->value->lanes, lanes);
}

static void check_seq(vctx *c, const mt_tstmt *s) {
    if (s->nstmts < 0 || (s->nstmts > 0 && !s->stmts)) {
        fail_shape(c, "sequence without its statements");
        return;
    }
    for (int i = 0; !c->err && i < s->nstmts; i++) {
        if (!s->stmts[i]) fail_shape(c, "sequence with a missing statement %d", i);
        else check_stmt(c, s->stmts[i]);
    }
}

static void check_let(vctx *c, const mt_tstmt *s) {
    check_expr(c, s->value, "let value");
    int nv = c->vars.len;
    bind_var(c, s->var, "let variable");
    if (!c->err) mt_ptrmap_add(c->a, &c->let_lanes, s->var, s->value->lanes - mt_ptrmap_get(&c->let_lanes, s->var));
    if (!c->err && s->value->dtype != s->var->dtype)
        fail(c, "let '%s' of %s bound to a %s value", vname(s->var), mt_dtype_str(s->var->dtype),
             mt_dtype_str(s->value->dtype));
    check_stmt(c, s->body);
    pop_scope(c, nv, c->bufs.len);
}

/* A fragment: in a GPU kernel outside its phases (the warp's registers,
 * kept from phase to phase), whole fragments of its scope's dtype. */
static void check_fragment(vctx *c, const mt_tbuffer *b) {
    int64_t n;
    bool acc = b->scope == MT_SCOPE_WMMA_ACC;
    const mt_target_desc *t = mt_tfunc_target(c->f);
    if (!c->gpu || c->phase)
        fail(c, "fragment '%s' allocated %s", bname(b), c->gpu ? "inside a phase" : "outside a GPU kernel");
    else if (b->ndim != 1 || !mt_te_is_const_int(b->shape[0], &n) || n <= 0 || n % MT_WMMA_FRAG != 0)
        fail(c, "fragment '%s' is not a flat buffer of whole fragments (a constant multiple of 256)", bname(b));
    else if (acc ? b->dtype != MT_FLOAT32 : !mt_dtype_is_half(b->dtype))
        fail(c, "fragment '%s' of scope %s is %s (%s expected)", bname(b), mt_scope_str(b->scope),
             mt_dtype_str(b->dtype), acc ? "float32" : "float16 or bfloat16");
    else if (b->dtype == MT_BFLOAT16 && t->kind == MT_TARGET_CUDA && !t->mma_bf16)
        fail(c, "fragment '%s' of bfloat16: the target (sm_%d) has no bfloat16 tensor cores (sm_80 on)",
             bname(b), t->sm);
}

static void check_alloc(vctx *c, const mt_tstmt *s) {
    int nb = c->bufs.len;
    declare_buf(c, s->buf, "allocated buffer");
    for (int d = 0; !c->err && d < s->buf->ndim; d++) /* passes substitute loops in statements, not shapes */
        for (int i = 0; !c->err && i < c->loops.len; i++)
            if (mt_texpr_uses_var(s->buf->shape[d], c->loops.data[i]))
                fail(c, "the shape of '%s' uses loop variable '%s'", bname(s->buf), vname(c->loops.data[i]));
    if (!c->err && mt_scope_is_fragment(s->buf->scope)) check_fragment(c, s->buf);
    const char *div = c->diverged;
    if (c->phase && !div) c->diverged = "an allocation";
    check_stmt(c, s->body);
    pop_scope(c, c->vars.len, nb);
    c->diverged = div;
}

/* T.launch (split_host_device): a callee, each argument a buffer in scope
 * or a scalar expression, integer extents. */
static void check_launch(vctx *c, const mt_tstmt *s) {
    const mt_tlaunch *l = s->launch;
    if (!l || !l->callee || l->nargs < 0 || (l->nargs > 0 && !l->args)) {
        fail_shape(c, "launch without its callee or arguments");
        return;
    }
    for (int i = 0; !c->err && i < l->nargs; i++) {
        const mt_targ *g = &l->args[i];
        if ((g->buf != NULL) == (g->value != NULL))
            fail_shape(c, "launch argument %d is not exactly one of a buffer and a value", i);
        else if (g->buf && !buf_in_scope(c, g->buf))
            fail(c, "launch of '%s' passes buffer '%s', which is not in scope", l->callee->name,
                 bname(g->buf));
        else if (g->value)
            check_expr(c, g->value, "launch argument");
    }
    for (int d = 0; !c->err && d < 3; d++) {
        if (l->grid[d]) check_int(c, l->grid[d], "launch grid extent", false);
        if (!c->err && l->block[d]) check_int(c, l->block[d], "launch block extent", false);
    }
    if (!c->err && l->shared_bytes) check_int(c, l->shared_bytes, "launch shared bytes", false);
    if (!c->err && l->min) check_int(c, l->min, "launch min", false);
}

/* T.check_bounds: a scalar bool condition, int64 scalar indices and dims
 * (the reported values), a buffer name. */
static void check_check(vctx *c, const mt_tstmt *s) {
    if (!s->name || s->nidx < 0 || (s->nidx > 0 && (!s->idx || !s->dims)) || !s->cond) {
        fail_shape(c, "bounds check without a condition, a buffer name or its values");
        return;
    }
    check_bool(c, s->cond, "bounds check condition");
    if (!c->err && s->cond->lanes != 1) fail(c, "bounds check condition of %d lanes", s->cond->lanes);
    for (int i = 0; !c->err && i < s->nidx; i++) {
        check_int(c, s->idx[i], "bounds check index", false);
        check_int(c, s->dims[i], "bounds check dim", false);
        if (!c->err && (s->idx[i]->dtype != MT_INT64 || s->dims[i]->dtype != MT_INT64))
            fail(c, "bounds check value of '%s' is not int64", s->name);
    }
}

static void check_if(vctx *c, const mt_tstmt *s) {
    check_bool(c, s->cond, "if condition");
    if (!c->err && s->cond->lanes != 1) fail(c, "if condition of %d lanes", s->cond->lanes);
    const char *div = c->diverged;
    const char *wdiv = c->warp_div;
    if (c->phase && !div) c->diverged = "an if";
    if (c->phase && !wdiv) c->warp_div = "an if";
    check_stmt(c, s->then_s);
    if (s->else_s) check_stmt(c, s->else_s);
    c->diverged = div, c->warp_div = wdiv;
}

static void check_region(vctx *c, const mt_tregion *r, const char *what) {
    if (!r->buf || !r->buf->name || (r->buf->ndim > 0 && (!r->min || !r->extent))) {
        fail_shape(c, "%s region without a buffer or bounds", what);
        return;
    }
    if (!buf_in_scope(c, r->buf))
        fail(c, "%s region of '%s', a buffer that is neither a parameter nor allocated in scope", what,
             bname(r->buf));
    for (int d = 0; !c->err && d < r->buf->ndim; d++) {
        check_int(c, r->min[d], "region min", false);
        check_int(c, r->extent[d], "region extent", false);
    }
}

/* The iteration variables: extents and bound values in the enclosing
 * scope, then the variables themselves in scope. */
static void bind_iters(vctx *c, const mt_tstmt *s) {
    if (s->niters < 0 || (s->niters > 0 && (!s->iters || !s->iter_values))) {
        fail_shape(c, "block '%s' lacks its iteration variables or their values", s->name);
        return;
    }
    for (int i = 0; !c->err && i < s->niters; i++) {
        const mt_titer *it = &s->iters[i];
        int was = seal(c, c->loops.len); /* the domain is the block's own */
        check_int(c, it->extent, "iteration extent", false);
        seal(c, was);
        check_int(c, s->iter_values[i], "iteration value", false);
        if (!c->err && (!it->var || (unsigned)it->kind > MT_ITER_REDUCE))
            fail_shape(c, "block '%s' has an incomplete iteration variable %d", s->name, i);
        else if (!c->err && s->iter_values[i]->dtype != it->var->dtype)
            fail(c, "iteration variable '%s' of %s is bound to a %s value", vname(it->var),
                 mt_dtype_str(it->var->dtype), mt_dtype_str(s->iter_values[i]->dtype));
    }
    for (int i = 0; !c->err && i < s->niters; i++) bind_var(c, s->iters[i].var, "iteration variable");
}

static void check_block(vctx *c, const mt_tstmt *s) {
    if (!s->name || s->nreads < 0 || s->nwrites < 0 || s->nallocs < 0 ||
        (s->nreads && !s->reads) || (s->nwrites && !s->writes) || (s->nallocs && !s->allocs)) {
        fail_shape(c, "block without a name or its regions");
        return;
    }
    if (c->form != MT_TIR_BLOCK) fail(c, "block '%s' in the %s form", s->name, mt_tir_form_str(c->form));
    int nv = c->vars.len, nb = c->bufs.len;
    const char *div = c->diverged;
    const char *wdiv = c->warp_div;
    if (c->phase && !div) c->diverged = "a block";
    if (c->phase && !wdiv) c->warp_div = "a block";
    bind_iters(c, s);
    if (s->predicate) check_bool(c, s->predicate, "block predicate");
    int sealed = seal(c, c->loops.len);
    for (int i = 0; i < s->nallocs; i++) {
        declare_buf(c, s->allocs[i], "block allocation");
        if (!c->err && mt_scope_is_fragment(s->allocs[i]->scope)) /* no wmma intrinsic may use it */
            fail(c, "fragment '%s' allocated in block '%s'", bname(s->allocs[i]), s->name);
        for (int d = 0; !c->err && d < s->allocs[i]->ndim; d++) /* lower_blocks keeps one shape */
            for (int k = 0; !c->err && k < s->niters; k++)
                if (mt_texpr_uses_var(s->allocs[i]->shape[d], s->iters[k].var))
                    fail(c, "the shape of block allocation '%s' uses iteration variable '%s'",
                         bname(s->allocs[i]), vname(s->iters[k].var));
    }
    for (int i = 0; !c->err && i < s->nreads; i++) check_region(c, &s->reads[i], "read");
    for (int i = 0; !c->err && i < s->nwrites; i++) check_region(c, &s->writes[i], "write");
    if (s->init) check_stmt(c, s->init);
    check_stmt(c, s->body);
    seal(c, sealed);
    pop_scope(c, nv, nb);
    c->diverged = div, c->warp_div = wdiv;
}

/* The statements a statement of kind k must hold, named for messages. */
static const char *missing_child(const mt_tstmt *s) {
    switch (s->kind) {
    case TS_FOR: return s->body ? NULL : "loop without a body";
    case TS_BLOCK: return s->body ? NULL : "block without a body";
    case TS_LET: return s->body ? NULL : "let without a body";
    case TS_ALLOC: return s->body ? NULL : "allocation without a body";
    case TS_IF: return s->then_s ? NULL : "if without a then branch";
    default: return NULL;
    }
}

static void check_stmt(vctx *c, const mt_tstmt *s) {
    if (c->err) return;
    const mt_tstmt *at = c->at;
    mt_loc loc = c->loc;
    c->at = s;
    if (s->loc.line) c->loc = s->loc;
    const char *missing = missing_child(s);
    if (missing) {
        fail_shape(c, "%s", missing);
        return;
    }
    switch (s->kind) {
    case TS_FOR: check_for(c, s); break;
    case TS_BLOCK: check_block(c, s); break;
    case TS_STORE: check_store(c, s); break;
    case TS_SEQ: check_seq(c, s); break;
    case TS_IF: check_if(c, s); break;
    case TS_LET: check_let(c, s); break;
    case TS_ALLOC: check_alloc(c, s); break;
    case TS_EVAL:
        c->evaluated = s->value;
        check_expr(c, s->value, "evaluated value");
        c->evaluated = NULL;
        break;
    case TS_LAUNCH: check_launch(c, s); break;
    case TS_CHECK: check_check(c, s); break;
    default: fail_shape(c, "statement of unknown kind %d", (int)s->kind);
    }
    if (c->err) return; /* keep the place of the failure */
    c->at = at;
    c->loc = loc;
}

/* ---- functions ------------------------------------------------------------ */

/* Params and symbolic dims in scope; buffer shapes may use any of them. */
static void check_params(vctx *c, const mt_tfunc *f) {
    int nbufs = 0;
    if (f->nparams < 0 || (f->nparams > 0 && !f->params) || f->nsym < 0 || (f->nsym > 0 && !f->sym_vars)) {
        fail_shape(c, "parameters or symbolic dims missing");
        return;
    }
    for (int i = 0; !c->err && i < f->nsym; i++) bind_var(c, f->sym_vars[i], "symbolic dim");
    for (int i = 0; !c->err && i < f->nparams; i++) {
        const mt_tparam *p = &f->params[i];
        if ((p->buf != NULL) == (p->var != NULL))
            fail_shape(c, "parameter %d is not exactly one of a buffer and a scalar", i);
        else if (p->var) bind_var(c, p->var, "scalar parameter");
        else nbufs++;
    }
    for (int i = 0; !c->err && i < f->nparams; i++)
        if (f->params[i].buf) declare_buf(c, f->params[i].buf, "buffer parameter");
    if (!c->err && (f->num_outputs < 0 || f->num_outputs > nbufs))
        fail(c, "%d outputs of %d buffer parameters", f->num_outputs, nbufs);
}

/* Is f a GPU kernel (its target, or as a parsed dump says: a
 * "cuda_kernel" or a "target" attribute of cuda), and its warp size (the
 * target's, or the attribute's "-warp=", else 32). */
static void gpu_facts(vctx *c, const mt_tfunc *f) {
    const mt_target_desc *t = mt_tfunc_target(f);
    const char *kind = mt_tfunc_get_attr(f, MT_ATTR_KIND), *tgt = mt_tfunc_get_attr(f, "target");
    c->gpu = t->kind == MT_TARGET_CUDA || (kind && !strcmp(kind, MT_KIND_CUDA_KERNEL)) ||
             (tgt && !strncmp(tgt, "cuda", 4));
    const char *w = tgt ? strstr(tgt, "-warp=") : NULL;
    c->warp = t->kind == MT_TARGET_CUDA && t->warp_size > 0 ? t->warp_size : w && atoi(w + 6) > 0 ? atoi(w + 6) : 32;
}

/* Can c->at be printed? The walk stopped at the failure, so the rest of
 * the statement is unchecked: walk it again looking only for missing parts
 * (the scope as it was; other failures do not count). */
static bool printable(const vctx *c) {
    if (!c->at) return false;
    vctx t = *c;
    t.err = NULL;
    t.shape_only = true;
    t.at = NULL;
    check_stmt(&t, c->at);
    return !t.err;
}

static const char *message(vctx *c) {
    mt_sb sb;
    mt_sb_init(&sb, c->a);
    mt_sb_printf(&sb, "%s, in function '%s'", c->err, c->f && c->f->name ? c->f->name : "?");
    if (c->loc.line) mt_sb_printf(&sb, " at %d:%d", c->loc.line, c->loc.col);
    mt_sb_printf(&sb, " (%s form)", mt_tir_form_str(c->form));
    if (!printable(c)) return mt_sb_str(&sb);
    mt_sb_puts(&sb, ", in:");
    const char *p = mt_tstmt_print(c->a, c->at);
    for (int line = 0; *p && line < PRINT_LINES; line++) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (sb.len + n > PRINT_CHARS) {
            mt_sb_puts(&sb, "\n    ...");
            break;
        }
        mt_sb_puts(&sb, "\n    ");
        mt_sb_putn(&sb, p, n);
        p += n + (e != NULL);
        if (*p && line == PRINT_LINES - 1) mt_sb_puts(&sb, "\n    ...");
    }
    return mt_sb_str(&sb);
}

const char *mt_tir_verify_ex(mt_arena *a, const mt_tfunc *f, mt_tir_form form, const char **what,
                             mt_loc *loc) {
    vctx c = {.a = a, .f = f, .form = form};
    *what = NULL;
    *loc = MT_NOLOC;
    if (!f || !f->name || !f->body) {
        c.err = "function without a name or a body";
        *what = c.err;
        return message(&c);
    }
    c.loc = f->loc;
    gpu_facts(&c, f);
    check_params(&c, f);
    if (!c.err && form != MT_TIR_BLOCK && f->nallocs != 0)
        fail(&c, "%d function-level allocations in the %s form", f->nallocs, mt_tir_form_str(form));
    if (!c.err && f->nallocs > 0 && !f->allocs) fail_shape(&c, "function allocations missing");
    for (int i = 0; !c.err && i < f->nallocs; i++) declare_buf(&c, f->allocs[i], "function allocation");
    if (!c.err) check_stmt(&c, f->body);
    if (!c.err) return NULL;
    *what = c.err;
    *loc = c.loc;
    return message(&c);
}

const char *mt_tir_verify(mt_arena *a, const mt_tfunc *f, mt_tir_form form) {
    const char *what;
    mt_loc loc;
    return mt_tir_verify_ex(a, f, form, &what, &loc);
}

const char *mt_tir_form_str(mt_tir_form form) {
    switch (form) {
    case MT_TIR_BLOCK: return "block";
    case MT_TIR_LOWERED: return "lowered";
    case MT_TIR_FLAT: return "flat";
    }
    return "?";
}
