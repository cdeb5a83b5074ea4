/*
 * legalize_math.c -- scalar computes of the math, comparison, logic, select,
 * cast and creation ops (graph/ops_math.def). The generic elementwise
 * legalizer (legalize_elemwise.c) wraps each in one loop nest over the
 * output, with broadcast indices; operands arrive already in the op's operand
 * dtype and the result is cast to the output dtype after.
 *
 * Semantics, where C, NumPy and LLVM differ (docs/codegen.md has the
 * codegen side):
 *
 *   floor_divide   Python floor division: ints `-7 // 2 == -4`; floats
 *                  floor(a / b) (NumPy's float // uses fmod and can differ by
 *                  one at exact multiples, e.g. 1 // 0.1: NumPy 9, here 10).
 *   floor_mod      Python modulo, the sign of the divisor; floats a - floor(a
 *                  / b) * b. Integer division and modulo by 0 give 0 (NumPy's
 *                  result, without its warning); floats follow IEEE (x // 0
 *                  is +-inf or NaN, x % 0 is NaN).
 *   power          floats: pow (glibc, < 1 ulp). Integers: computed in
 *                  float64, rounded to the nearest integer (CUDA's pow is
 *                  within 2 ulp, not exact: 3 ** 1 could truncate to 2)
 *                  and converted back (saturating): exact whenever
 *                  the base and the true result are within 2^53 in
 *                  magnitude, so every in-range int8/uint8/int32 result and
 *                  int64 results up to 2^53; beyond the dtype's range the
 *                  result saturates to its min/max where NumPy wraps. A
 *                  negative exponent (NumPy: an error) gives the exact value
 *                  truncated toward zero: 1 for a base of 1, +-1 for -1, 0
 *                  otherwise, and 0 for a base of 0 (like division by 0).
 *   maximum,       NaN propagates, as NumPy's maximum/minimum (not
 *   minimum        fmax/fmin): if either operand is NaN the result is NaN;
 *                  on ties (also -0.0 vs 0.0) the first operand, as NumPy.
 *                  Written as selects over ordered compares, so the first
 *                  operand is read twice and the second four times (a fused
 *                  chain through the first operand duplicates its producer
 *                  expression per read; LLVM's CSE merges the copies).
 *                  Integers: plain min/max.
 *   sign           -1, 0 or 1 in the input dtype; sign(+-0.0) is +0.0 and
 *                  sign(NaN) is NaN, as NumPy.
 *   round          half to even (2.5 -> 2, -0.5 -> -0), as NumPy.
 *   gelu           "none": 0.5 x (1 + erf(x / sqrt 2)); "tanh": 0.5 x (1 +
 *                  tanh(sqrt(2/pi) (x + 0.044715 x^3))). float16 input is
 *                  computed in float32 (constants in float16 would lose
 *                  three digits) and rounded once at the end.
 *   comparisons    IEEE: a NaN operand makes == < <= > >= false and !=
 *                  true.
 *   astype         a cast: float -> int saturates, NaN -> 0; anything ->
 *                  bool is `!= 0` (NaN -> True); int -> int wraps.
 *   zeros/ones/    the constant in the output dtype (infer_full has checked
 *   full           that an integer dtype holds the value exactly).
 */
#include "passes/graph/graph_passes.h"
#include "support/common.h"

#define COMPUTE(name) \
    mt_texpr *name(mt_arena *a, mt_texpr *const *x, const mt_gattrs *attrs, mt_dtype dt)

static mt_texpr *call1(mt_arena *a, mt_intrin fn, mt_texpr *v) { return mt_te_call(a, fn, &v, 1); }

/* The constant v in dtype t. */
static mt_texpr *imm(mt_arena *a, mt_dtype t, double v) {
    if (mt_dtype_is_float(t)) return mt_te_float(a, t, v);
    if (t == MT_BOOL) return mt_te_int(a, t, v != 0);
    return mt_te_int(a, t, (int64_t)v);
}

static mt_texpr *bin(mt_arena *a, mt_texpr_kind k, mt_texpr *x, mt_texpr *y) { return mt_te_bin(a, k, x, y); }

/* ---- unary float ---------------------------------------------------------- */

COMPUTE(compute_log) { return call1(a, IN_LOG, x[0]); }
COMPUTE(compute_rsqrt) { return call1(a, IN_RSQRT, x[0]); }
COMPUTE(compute_sin) { return call1(a, IN_SIN, x[0]); }
COMPUTE(compute_cos) { return call1(a, IN_COS, x[0]); }
COMPUTE(compute_erf) { return call1(a, IN_ERF, x[0]); }
COMPUTE(compute_floor) { return call1(a, IN_FLOOR, x[0]); }
COMPUTE(compute_ceil) { return call1(a, IN_CEIL, x[0]); }
COMPUTE(compute_round) { return call1(a, IN_ROUND, x[0]); }

COMPUTE(compute_gelu) {
    mt_dtype t = mt_dtype_is_half(x[0]->dtype) ? MT_FLOAT32 : x[0]->dtype;
    mt_texpr *v = mt_te_cast(a, t, x[0]);
    mt_texpr *inner;
    if (attrs->mode == MT_MODE_TANH) {
        const double c0 = 0.7978845608028654;  /* sqrt(2 / pi) */
        const double c1 = c0 * 0.044715;
        mt_texpr *poly = bin(a, TE_ADD, imm(a, t, c0), bin(a, TE_MUL, imm(a, t, c1), bin(a, TE_MUL, v, v)));
        inner = call1(a, IN_TANH, bin(a, TE_MUL, v, poly));
    } else {
        inner = call1(a, IN_ERF, bin(a, TE_MUL, v, imm(a, t, 0.70710678118654752440)));
    }
    mt_texpr *half_x = bin(a, TE_MUL, imm(a, t, 0.5), v);
    return bin(a, TE_MUL, half_x, bin(a, TE_ADD, imm(a, t, 1.0), inner));
}

/* ---- unary numeric ---------------------------------------------------------- */

COMPUTE(compute_abs) { return call1(a, IN_ABS, x[0]); }

COMPUTE(compute_sign) {
    mt_texpr *v = x[0];
    mt_dtype t = v->dtype;
    mt_texpr *zero = imm(a, t, 0), *one = imm(a, t, 1);
    if (!mt_dtype_is_signed_int(t) && !mt_dtype_is_float(t)) /* bool, uint8 */
        return mt_te_select(a, bin(a, TE_GT, v, zero), one, zero);
    /* floats: +-0 + 0.0 is +0.0 and NaN + 0.0 is NaN */
    mt_texpr *rest = mt_dtype_is_float(t) ? bin(a, TE_ADD, v, zero) : zero;
    return mt_te_select(a, bin(a, TE_GT, v, zero), one,
                        mt_te_select(a, bin(a, TE_LT, v, zero), imm(a, t, -1), rest));
}

/* ---- binary arithmetic ------------------------------------------------------ */

COMPUTE(compute_floor_divide) { return bin(a, TE_FLOORDIV, x[0], x[1]); }
COMPUTE(compute_floor_mod) { return bin(a, TE_FLOORMOD, x[0], x[1]); }

COMPUTE(compute_power) {
    mt_dtype t = x[0]->dtype;
    if (mt_dtype_is_float(t)) return mt_te_call(a, IN_POW, x, 2);
    mt_texpr *args[2] = {mt_te_cast(a, MT_FLOAT64, x[0]), mt_te_cast(a, MT_FLOAT64, x[1])};
    mt_texpr *pw = mt_te_call(a, IN_POW, args, 2);
    mt_texpr *p = mt_te_cast(a, t, mt_te_call(a, IN_ROUND, &pw, 1));
    if (!mt_dtype_is_signed_int(t)) return p;
    /* 0 ** -k is inf in float64; it is 0 here, like integer division by 0 */
    mt_texpr *zero = imm(a, t, 0);
    mt_texpr *pole = bin(a, TE_AND, bin(a, TE_LT, x[1], zero), bin(a, TE_EQ, x[0], zero));
    return mt_te_select(a, pole, zero, p);
}

/* y if (x < y or y is NaN) else x: NaN in either gives NaN, ties give x */
COMPUTE(compute_maximum) {
    if (!mt_dtype_is_float(x[0]->dtype)) return bin(a, TE_MAX, x[0], x[1]);
    mt_texpr *take_y = bin(a, TE_OR, bin(a, TE_LT, x[0], x[1]), bin(a, TE_NE, x[1], x[1]));
    return mt_te_select(a, take_y, x[1], x[0]);
}

COMPUTE(compute_minimum) {
    if (!mt_dtype_is_float(x[0]->dtype)) return bin(a, TE_MIN, x[0], x[1]);
    mt_texpr *take_y = bin(a, TE_OR, bin(a, TE_LT, x[1], x[0]), bin(a, TE_NE, x[1], x[1]));
    return mt_te_select(a, take_y, x[1], x[0]);
}

/* ---- comparisons and logic ---------------------------------------------------- */

COMPUTE(compute_equal) { return bin(a, TE_EQ, x[0], x[1]); }
COMPUTE(compute_not_equal) { return bin(a, TE_NE, x[0], x[1]); }
COMPUTE(compute_less) { return bin(a, TE_LT, x[0], x[1]); }
COMPUTE(compute_less_equal) { return bin(a, TE_LE, x[0], x[1]); }
COMPUTE(compute_greater) { return bin(a, TE_GT, x[0], x[1]); }
COMPUTE(compute_greater_equal) { return bin(a, TE_GE, x[0], x[1]); }
COMPUTE(compute_logical_and) { return bin(a, TE_AND, x[0], x[1]); }
COMPUTE(compute_logical_or) { return bin(a, TE_OR, x[0], x[1]); }
COMPUTE(compute_logical_not) { return mt_te_unary(a, TE_NOT, x[0]); }

/* ---- select, cast, creation ---------------------------------------------------- */

COMPUTE(compute_where) { return mt_te_select(a, x[0], x[1], x[2]); }
COMPUTE(compute_astype) { return mt_te_cast(a, dt, x[0]); }
COMPUTE(compute_zeros) { return imm(a, dt, 0); }
COMPUTE(compute_ones) { return imm(a, dt, 1); }
COMPUTE(compute_full) { return imm(a, dt, attrs->value); }
