/*
 * arith.h -- arithmetic on loop IR expressions: constant folding, folding
 * constructors and integer bounds (tir/arith.c).
 *
 * Every place that builds or rewrites index arithmetic goes through here, so
 * that `x + 0`, `3 * 4` or `i // 1` mean the same thing in flatten_buffers,
 * the schedule primitives, the rules that emit lowered code, legalization
 * and simplify.
 *
 * Folding is exact in the node's dtype, the way the generated code computes:
 *  - integers wrap around in their width (int8, uint8, int32, int64; the
 *    arithmetic is done on uint64_t and truncated, so INT32_MAX + 1 folds to
 *    INT32_MIN). TE_DIV truncates, TE_FLOORDIV / TE_FLOORMOD follow Python
 *    (-7 // 2 == -4, -7 % 2 == 1). Division or modulo by zero is never
 *    folded: it is left for run time to do whatever the target does.
 *  - float32 results are rounded to float after computing in double; float64
 *    is computed as is; float16 and bfloat16 are never folded (the host has no exact half
 *    arithmetic). Float // and % use CPython's float_divmod. T.min/T.max are
 *    not folded on NaN or on two zeros (the sign of a zero result depends on
 *    the target instruction).
 *  - casts of constants: int to int wraps, to bool is != 0, int to float
 *    rounds once; float to int truncates when the result fits the dtype (else
 *    it is left alone, as C would make it undefined).
 *
 * Identities (mt_arith_fold): integer x+0, 0+x, x-0, x*1, 1*x, x*0, 0*x,
 * x/1, x//1 -> x, x%1 -> 0; `True and x` -> x and the like on bools; for
 * floats only the IEEE-exact ones: x*1.0, 1.0*x, x/1.0, x-0.0, x+(-0.0),
 * (-0.0)+x (x+0.0 is kept: it turns -0.0 into 0.0). Unary: constants, not
 * not x, - -x; selects on a constant condition or with equal arms.
 * Constants are scalars; an identity applies to a vector operand only when
 * it keeps the result's lanes (`v + 0` is v, `v * 0` is left alone).
 *
 * The folding constructors (mt_arith_bin, mt_arith_add, ...) build the node
 * only when folding gives nothing; they never reassociate (simplify does,
 * and a builder that wants more, like schedule/lowered.c, adds it on top).
 *
 * Bounds: for each loop variable in scope, the range it runs over (from its
 * loop's min and extent, themselves possibly expressions of outer
 * variables) and for each let variable the range of its value. From those,
 * mt_bounds_of gives an inclusive range [lo, hi] that an integer expression
 * stays in, and mt_bounds_rewrite uses it to decide what syntax alone
 * cannot: `i // 16` is 0 and `i % 16` is i when 0 <= i < 16, `T.min(i, 20)`
 * is i when i < 16, `i < 16` is True. Ranges are exact interval arithmetic
 * in int64 with overflow checks; a node whose range might leave its dtype
 * (where the generated code would wrap around) gets the dtype's whole range,
 * so no rewrite ever assumes arithmetic that does not happen. An immediate
 * counts as the value codegen gives it (truncated to its dtype: T.int8(200)
 * is -56).
 */
#ifndef MT_TIR_ARITH_H
#define MT_TIR_ARITH_H

#include "tir/tir.h"

/* ---- folding ------------------------------------------------------------- */

/* Is e the scalar integer (or bool) immediate `want`? */
bool mt_arith_is_const(const mt_texpr *e, int64_t want);

/* x k y (k a binary kind) folded to a constant or an operand by the rules
 * above; NULL when none applies (or the dtypes differ). May return x or y
 * themselves. */
mt_texpr *mt_arith_fold(mt_arena *a, mt_texpr_kind k, mt_texpr *x, mt_texpr *y);
/* k x (TE_NOT or TE_NEG) folded: a constant, or y for `not not y` and
 * `- -y`; NULL when nothing applies. */
mt_texpr *mt_arith_fold_unary(mt_arena *a, mt_texpr_kind k, mt_texpr *x);
/* T.Select(c, x, y) folded: an arm when c is constant or the arms are
 * structurally equal; NULL otherwise. */
mt_texpr *mt_arith_fold_select(mt_texpr *c, mt_texpr *x, mt_texpr *y);
/* T.Cast(to, x) of a scalar constant x; NULL when x is no constant or the
 * cast must not be folded. */
mt_texpr *mt_arith_fold_cast(mt_arena *a, mt_dtype to, const mt_texpr *x);

/* Folding constructors: the folded node when mt_arith_fold gives one, else
 * the plain node (mt_te_bin / mt_te_unary: operands must agree). */
mt_texpr *mt_arith_bin(mt_arena *a, mt_texpr_kind k, mt_texpr *x, mt_texpr *y);
mt_texpr *mt_arith_unary(mt_arena *a, mt_texpr_kind k, mt_texpr *x);
mt_texpr *mt_arith_add(mt_arena *a, mt_texpr *x, mt_texpr *y);
mt_texpr *mt_arith_sub(mt_arena *a, mt_texpr *x, mt_texpr *y);
mt_texpr *mt_arith_mul(mt_arena *a, mt_texpr *x, mt_texpr *y);
mt_texpr *mt_arith_floordiv(mt_arena *a, mt_texpr *x, mt_texpr *y);
mt_texpr *mt_arith_floormod(mt_arena *a, mt_texpr *x, mt_texpr *y);

/* ---- lanes ---------------------------------------------------------------- */

/* Asked for lane k of a vector load or vector variable e: the scalar
 * expression standing for it, or NULL (a load then reads lane k of its
 * index; a vector variable has no default). */
typedef mt_texpr *(*mt_lane_leaf)(void *ctx, const mt_texpr *e, int k);

/* Lane k (0 <= k < e->lanes) of e as a scalar expression: T.Ramp(b, s, n)
 * is b + s * k (folded), T.Broadcast(x) is x, a load or an operation
 * applies to lane k of its operands; leaf (may be NULL) is asked first for
 * each vector load and vector variable. A scalar e is itself. */
mt_texpr *mt_arith_lane(mt_arena *a, const mt_texpr *e, int k, mt_lane_leaf leaf, void *ctx);

/* ---- bounds -------------------------------------------------------------- */

typedef struct mt_range {
    int64_t lo, hi; /* inclusive */
} mt_range;

/* The variables in scope, innermost last. A zero-filled mt_bounds is empty. */
typedef struct mt_bounds {
    struct mt_bound_var {
        const mt_tvar *var; /* a loop or let variable */
        mt_range r;         /* the values it takes */
    } *vars;                /* n of them, cap allocated (arena) */
    int n, cap;
} mt_bounds;

/* Pushes var (an integer variable) with the range [lo, hi]. */
void mt_bounds_push(mt_arena *a, mt_bounds *b, const mt_tvar *var, mt_range r);
void mt_bounds_pop(mt_bounds *b);

/* Pushes the variable of a loop over [min, min + extent) when the range of
 * min and extent is known and extent >= 1 is possible; returns whether it
 * pushed (then the caller pops after the body). */
bool mt_bounds_push_loop(mt_arena *a, mt_bounds *b, const mt_tvar *var, const mt_texpr *min,
                         const mt_texpr *extent);

/* The range of a scalar integer (or bool) expression; the dtype's whole
 * range when nothing better is known. */
mt_range mt_bounds_of(const mt_bounds *b, const mt_texpr *e);

/* e (a scalar floordiv, floormod, min, max or comparison of integers whose
 * children are already simplified) rewritten when the ranges of its
 * operands decide it; e itself otherwise. */
mt_texpr *mt_bounds_rewrite(mt_arena *a, const mt_bounds *b, mt_texpr *e);

/* ---- the form of index expressions ---------------------------------------- */

/* One term coef * e of a sum. */
typedef struct mt_arith_term {
    mt_texpr *e;
    int64_t coef;
} mt_arith_term;

/* e as a sum of terms, products by positive integer constants moved into
 * the coefficients: (j0 * 16 + j1) * 16 + j2 -> j0 * 256 + j1 * 16 + j2 * 1.
 * A subexpression for which open(sub, ctx) is false stays one term, whole
 * (open NULL: every sum and product by a constant is opened; a product whose
 * coefficient would overflow is a term). The terms go to t in the order of
 * the source, left first; returns how many, or -1 when there are more than
 * max. */
int mt_arith_terms(mt_texpr *e, bool (*open)(const mt_texpr *sub, void *ctx), void *ctx,
                   mt_arith_term *t, int max);

/* Does e use // or % anywhere (an index transform_layout rewrote)? */
bool mt_arith_has_divmod(const mt_texpr *e);

/* Is e T.min(c, r) or T.min(r, c) with c an integer constant (c taken from
 * the first operand when both are)? Sets *c and *r. */
bool mt_arith_min_const(const mt_texpr *e, int64_t *c, const mt_texpr **r);

/* Is x - y the integer constant *d by their forms: sums (mt_arith_terms,
 * every product by a constant distributed) of the same non-constant terms
 * and different constants (i0 * 16 + j + 2 and (i0 * 4) * 4 + j: 2)? A
 * NULL operand is 0. False when not, or past 16 terms. */
bool mt_arith_const_diff(mt_texpr *x, mt_texpr *y, int64_t *d);

/* A constant that e never exceeds by its form: e itself when it is an
 * integer constant, c of T.min(c, ..) or T.min(.., c) (the inner extent of
 * a split). False when there is none. */
bool mt_arith_const_bound(const mt_texpr *e, int64_t *c);

#endif
