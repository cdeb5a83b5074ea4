/*
 * fold.c -- evaluating an op on scalar constants at compile time.
 *
 * Used by the builder (so that `x.shape[0] > 16` with a constant dim is a
 * constant, and an `if` on it is decided at compile time) and by the graph
 * pass fold_constant. The arithmetic is the kernels' arithmetic: integers
 * wrap to their dtype, floor division and modulo follow Python, integer
 * division by zero gives 0 (as the generated code does), floats are IEEE in
 * double and rounded to the dtype (float32 through a float).
 */
#include <math.h>
#include <string.h>

#include "graph/graph.h"
#include "support/common.h"


static double round_float(mt_dtype dt, double v) { return dt == MT_FLOAT32 ? (double)(float)v : v; }

static int64_t floordiv(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (a == INT64_MIN && b == -1) return INT64_MIN;
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static int64_t floormod(int64_t a, int64_t b) {
    if (b == 0 || (a == INT64_MIN && b == -1)) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

static bool named(const mt_op_def *op, const char *name) { return strcmp(op->name, name) == 0; }

bool mt_fold_scalar(mt_arena *a, const mt_op_def *op, mt_gvar *const *args, int nargs,
                    const mt_gtype *out, mt_loc loc, mt_gvar **result) {
    if (out->ndim != 0 || nargs < 1 || nargs > 2) return false;
    for (int i = 0; i < nargs; i++)
        if (!args[i]->is_const) return false;
    if (mt_dtype_is_half(out->dtype)) return false; /* rounding to 16 bits is the kernels' job */
    bool weak = true;
    for (int i = 0; i < nargs; i++) weak &= args[i]->weak;
    mt_dtype in = args[0]->type.dtype;
    bool fin = mt_dtype_is_float(in);
    double x = args[0]->fconst, y = nargs > 1 ? args[1]->fconst : 0;
    int64_t i = args[0]->iconst, j = nargs > 1 ? args[1]->iconst : 0;
    if (!fin) {
        x = (double)i;
        y = (double)j;
    }
    int cmp = -2; /* comparisons: -1 less, 0 equal, 1 greater, 2 unordered */
    if (nargs == 2) cmp = fin ? (x < y ? -1 : x > y ? 1 : x == y ? 0 : 2) : (i < j ? -1 : i > j);
    double f = 0;
    int64_t r = 0;
    bool is_bool = out->dtype == MT_BOOL;
    if (named(op, "add")) f = x + y, r = (int64_t)((uint64_t)i + (uint64_t)j);
    else if (named(op, "subtract")) f = x - y, r = (int64_t)((uint64_t)i - (uint64_t)j);
    else if (named(op, "multiply")) f = x * y, r = (int64_t)((uint64_t)i * (uint64_t)j);
    else if (named(op, "divide")) f = x / y;
    else if (named(op, "floor_divide")) f = floor(x / y), r = floordiv(i, j);
    else if (named(op, "floor_mod")) f = x - floor(x / y) * y, r = floormod(i, j);
    else if (named(op, "negative")) f = -x, r = (int64_t)(0 - (uint64_t)i);
    /* NaN propagates and ties keep the first operand, as the kernels do */
    else if (named(op, "maximum")) f = (x >= y || isnan(x)) ? x : y, r = i >= j ? i : j;
    else if (named(op, "minimum")) f = (x <= y || isnan(x)) ? x : y, r = i <= j ? i : j;
    else if (named(op, "equal")) r = cmp == 0;
    else if (named(op, "not_equal")) r = cmp != 0;
    else if (named(op, "less")) r = cmp == -1;
    else if (named(op, "less_equal")) r = cmp == -1 || cmp == 0;
    else if (named(op, "greater")) r = cmp == 1;
    else if (named(op, "greater_equal")) r = cmp == 1 || cmp == 0;
    else if (named(op, "logical_and")) r = (fin ? x != 0 : i != 0) && (fin ? y != 0 : j != 0);
    else if (named(op, "logical_or")) r = (fin ? x != 0 : i != 0) || (fin ? y != 0 : j != 0);
    else if (named(op, "logical_not")) r = fin ? x == 0 : i == 0;
    else return false;
    (void)loc;
    if (is_bool) {
        *result = mt_gvar_const_int(a, MT_BOOL, r != 0, false, loc);
    } else if (mt_dtype_is_float(out->dtype)) {
        if (!fin && !named(op, "divide")) f = (double)r; /* int op, float result: never */
        *result = mt_gvar_const_float(a, out->dtype, round_float(out->dtype, f), weak, loc);
    } else {
        *result = mt_gvar_const_int(a, out->dtype, mt_int_wrap(out->dtype, (uint64_t)r), weak, loc);
    }
    return true;
}
