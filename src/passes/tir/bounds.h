/*
 * bounds.h -- integer ranges of expressions, for simplify (bounds.c).
 *
 * simplify knows, for each loop variable in scope, the range it runs over
 * (from the loop's min and extent, themselves possibly expressions of outer
 * variables) and for each let variable the range of its value. From those,
 * mt_bounds_of gives an inclusive range [lo, hi] that an integer expression
 * stays in, and mt_bounds_rewrite uses it to decide what syntax alone
 * cannot: `i // 16` is 0 and `i % 16` is i when 0 <= i < 16, `T.min(i, 20)`
 * is i when i < 16, `i < 16` is True. Ranges are exact interval arithmetic
 * in int64 with overflow checks; a node whose range might leave its dtype
 * (where the generated code would wrap around) gets the dtype's whole range,
 * so no rewrite ever assumes arithmetic that does not happen.
 * An immediate counts as the value codegen gives it (truncated to its
 * dtype: T.int8(200) is -56).
 */
#ifndef MT_PASSES_TIR_BOUNDS_H
#define MT_PASSES_TIR_BOUNDS_H

#include "tir/tir.h"

typedef struct mt_range {
    int64_t lo, hi; /* inclusive */
} mt_range;

/* The variables in scope, innermost last. A zero-filled mt_bounds is empty. */
typedef struct mt_bounds {
    struct mt_bound_var {
        const mt_tvar *var;
        mt_range r;
    } *vars;
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

#endif
