/*
 * test_ops_math_operators.c -- the math ops that operators reach: // and %
 * (floor_divide, floor_mod), ** (power), < <= > >= == != (less, ...,
 * not_equal), `not x` (logical_not; the builder makes a number x != 0
 * first), `x if c else y` (where), `x.astype(dtype)` (astype), and
 * logical_and/logical_or, which take no operator (`and`/`or` are for
 * scalars) and are called by name; through the public API against plain C
 * references.
 *
 * Tolerances: none. Every op here is exact by definition: integer results,
 * bools, selections, and float // and % whose reference emulates the
 * definition in the operand's precision (floor(a / b) and a - floor(a / b) *
 * b, each operation rounded to the dtype as IEEE does; float16 is computed
 * in float32 and rounded to half once at the store). ** on floats: 1e-6
 * (float32, glibc pow < 1 ulp).
 */
#include "ops/test_ops_math_util.h"

static const shape shapes[] = {{1, {1}}, {1, {7}}, {1, {33}}, {1, {1000}}, {2, {3, 5}}, {3, {2, 1, 17}}};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

static const struct {
    shape a, b, out;
} bcast_pairs[] = {
    {{2, {2, 3}}, {1, {3}}, {2, {2, 3}}},
    {{2, {4, 1}}, {2, {1, 5}}, {2, {4, 5}}},
    {{1, {1}}, {1, {33}}, {1, {33}}},
    {{3, {3, 1, 2}}, {2, {4, 1}}, {3, {3, 4, 2}}},
    {{2, {31, 33}}, {2, {31, 1}}, {2, {31, 33}}},
};
#define NPAIRS (sizeof bcast_pairs / sizeof bcast_pairs[0])

/* ---- integer samples ---------------------------------------------------------- */

static void int_limits(mt_dtype dt, int64_t *lo, int64_t *hi) {
    switch (dt) {
    case MT_INT8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case MT_UINT8: *lo = 0, *hi = UINT8_MAX; break;
    case MT_INT32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case MT_BOOL: *lo = 0, *hi = 1; break;
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
    }
}

/* Element i of an integer operand: the dtype's extremes and small divisors
 * first (0, +-1, +-2, +-3, +-7), then random values over the whole range. */
static int64_t int_sample(mt_dtype dt, int64_t i) {
    int64_t lo, hi;
    int_limits(dt, &lo, &hi);
    static const int64_t small[] = {0, 1, -1, 2, -2, 3, -3, 7, -7};
    if (i < 2) return i ? hi : lo;
    if (i - 2 < 9) {
        int64_t v = small[i - 2];
        return v < lo ? -v : v;
    }
    if (i % 3 == 0) return rnd_int(-100 > lo ? -100 : lo, 100);
    if (dt == MT_INT64) return (int64_t)(rnd() * 9.2e18);
    return rnd_int(lo, hi);
}

static int64_t wrap(mt_dtype dt, int64_t v) {
    switch (dt) {
    case MT_INT8: return (int8_t)(uint8_t)(uint64_t)v;
    case MT_UINT8: return (uint8_t)(uint64_t)v;
    case MT_INT32: return (int32_t)(uint32_t)(uint64_t)v;
    default: return v;
    }
}

/* Python's // and % (sign of the divisor); x // 0 == x % 0 == 0; MIN // -1
 * wraps to MIN. */
static int64_t py_floordiv(mt_dtype dt, int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return wrap(dt, (int64_t)(0 - (uint64_t)a));
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) q--;
    return q;
}
static int64_t py_floormod(mt_dtype dt, int64_t a, int64_t b) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

/* ---- // and % ----------------------------------------------------------------- */

static void int_floor_case(mt_dtype dt, const char *op) {
    bool div = strcmp(op, "//") == 0;
    for (size_t si = 0; si < NSHAPES; si++) {
        const shape *s = &shapes[si];
        int64_t n = numel(s);
        /* every pair of the first 11 samples, then random pairs */
        int64_t *a = malloc(sizeof(int64_t) * (size_t)n), *b = malloc(sizeof(int64_t) * (size_t)n);
        int64_t *want = malloc(sizeof(int64_t) * (size_t)n);
        for (int64_t i = 0; i < n; i++) {
            a[i] = i < 121 ? int_sample(dt, i / 11) : int_sample(dt, i);
            b[i] = i < 121 ? int_sample(dt, i % 11) : int_sample(dt, i * 7 + 1);
            want[i] = div ? py_floordiv(dt, a[i], b[i]) : py_floormod(dt, a[i], b[i]);
        }
        char sh[64], src[512];
        shape_src(sh, sizeof sh, s);
        snprintf(src, sizeof src, "def f(a: Tensor(%s, \"%s\"), b: Tensor(%s, \"%s\")):\n    out = a %s b\n    return out\n",
                 sh, mt_dtype_str(dt), sh, mt_dtype_str(dt), op);
        mt_tensor *args[2] = {tensor_of_ints(dt, s, a), tensor_of_ints(dt, s, b)};
        mt_tensor *out = run_src(src, args, 2);
        assert_int_equal(mt_tensor_dtype(out), dt);
        check_ints(out, want, n, src);
        free(a);
        free(b);
        free(want);
        release_all(args, 2);
        mt_tensor_release(out);
    }
}

static void test_floordiv_floormod_int(void **st) {
    static const mt_dtype dts[] = {MT_INT8, MT_UINT8, MT_INT32, MT_INT64};
    for (int i = 0; i < 4; i++) {
        int_floor_case(dts[i], "//");
        int_floor_case(dts[i], "%");
    }
    /* the Python table, spelled out */
    int64_t a[8] = {-7, -7, 7, 7, 0, 5, -128, -128}, b[8] = {2, -2, -2, 2, 3, 0, -1, 0};
    int64_t wq[8] = {-4, 3, -4, 3, 0, 0, -128, 0}, wr[8] = {1, -1, -1, 1, 0, 0, 0, 0};
    shape s = {1, {8}};
    mt_tensor *args[2] = {tensor_of_ints(MT_INT8, &s, a), tensor_of_ints(MT_INT8, &s, b)};
    mt_tensor *q = run_src("def f(a: Tensor((8,), \"int8\"), b: Tensor((8,), \"int8\")):\n    return a // b\n", args, 2);
    mt_tensor *r = run_src("def f(a: Tensor((8,), \"int8\"), b: Tensor((8,), \"int8\")):\n    return a % b\n", args, 2);
    check_ints(q, wq, 8, "int8 //");
    check_ints(r, wr, 8, "int8 %");
    release_all(args, 2);
    mt_tensor_release(q);
    mt_tensor_release(r);
}

/* floor(a / b) and a - floor(a / b) * b with each operation rounded to dt. */
static double ref_floordiv(mt_dtype dt, double a, double b) { return floor(round_to(dt == MT_FLOAT16 ? MT_FLOAT32 : dt, a / b)); }
static double ref_floormod(mt_dtype dt, double a, double b) {
    mt_dtype c = dt == MT_FLOAT16 ? MT_FLOAT32 : dt; /* float16 computes in float32 */
    double q = ref_floordiv(dt, a, b);
    return round_to(c, a - round_to(c, q * b));
}

static double g_float_operand(void) {
    static const double sp[] = {0.0, -0.0, 1.0, -1.0, 0.1, 3.0, -3.0, INFINITY, -INFINITY, NAN, 7.5, -7.5, 2.0};
    double u = rnd();
    if (u < -0.5) return sp[rnd_int(0, 12)];
    return 20 * rnd();
}

static void float_floor_case(mt_dtype dt, const char *op) {
    bool div = strcmp(op, "//") == 0;
    for (size_t pi = 0; pi < NPAIRS; pi++) {
        const shape *sa = &bcast_pairs[pi].a, *sb = &bcast_pairs[pi].b, *so = &bcast_pairs[pi].out;
        int64_t na = numel(sa), nb = numel(sb), no = numel(so);
        double *va = malloc(sizeof(double) * (size_t)na), *vb = malloc(sizeof(double) * (size_t)nb);
        double *want = malloc(sizeof(double) * (size_t)no);
        for (int64_t i = 0; i < na; i++) va[i] = g_float_operand();
        for (int64_t i = 0; i < nb; i++) vb[i] = g_float_operand();
        char sha[64], shb[64], src[512];
        shape_src(sha, sizeof sha, sa);
        shape_src(shb, sizeof shb, sb);
        snprintf(src, sizeof src, "def f(a: Tensor(%s, \"%s\"), b: Tensor(%s, \"%s\")):\n    out = a %s b\n    return out\n",
                 sha, mt_dtype_str(dt), shb, mt_dtype_str(dt), op);
        mt_tensor *args[2] = {tensor_of(dt, sa, va), tensor_of(dt, sb, vb)};
        mt_tensor *out = run_src(src, args, 2);
        assert_int_equal(mt_tensor_ndim(out), so->ndim);
        for (int64_t i = 0; i < no; i++) {
            double x = tget(args[0], bidx(args[0], so, i)), y = tget(args[1], bidx(args[1], so, i));
            want[i] = round_to(dt, div ? ref_floordiv(dt, x, y) : ref_floormod(dt, x, y));
        }
        check_vals(out, want, no, 0, src);
        free(va);
        free(vb);
        free(want);
        release_all(args, 2);
        mt_tensor_release(out);
    }
}

static void test_floordiv_floormod_float(void **st) {
    static const mt_dtype dts[] = {MT_FLOAT32, MT_FLOAT64, MT_FLOAT16};
    for (int i = 0; i < 3; i++) {
        float_floor_case(dts[i], "//");
        float_floor_case(dts[i], "%");
    }
    /* Python's signs, and IEEE at 0: 1 // 0 = inf, 1 % 0 = NaN */
    double a[6] = {-7.5, 7.5, -7.5, 7.5, 1, 1}, b[6] = {2, -2, -2, 2, 0, 0};
    double wq[6] = {-4, -4, 3, 3, INFINITY, INFINITY}, wr[6] = {0.5, -0.5, -1.5, 1.5, NAN, NAN};
    shape s = {1, {6}};
    mt_tensor *args[2] = {tensor_of(MT_FLOAT64, &s, a), tensor_of(MT_FLOAT64, &s, b)};
    mt_tensor *q = run_src("def f(a: Tensor((6,), \"float64\"), b: Tensor((6,), \"float64\")):\n    return a // b\n", args, 2);
    mt_tensor *r = run_src("def f(a: Tensor((6,), \"float64\"), b: Tensor((6,), \"float64\")):\n    return a % b\n", args, 2);
    check_vals(q, wq, 6, 0, "float64 //");
    check_vals(r, wr, 6, 0, "float64 %");
    release_all(args, 2);
    mt_tensor_release(q);
    mt_tensor_release(r);
}

/* Literals on either side take the tensor's dtype. */
static void test_floor_ops_literals(void **st) {
    int64_t a[6] = {-7, -1, 0, 5, 9, 100};
    shape s = {1, {6}};
    mt_tensor *x = tensor_of_ints(MT_INT32, &s, a);
    mt_tensor *out = run_src("def f(a: Tensor((6,), \"int32\")):\n    return a // 3 + 7 % a * 100 + a % -4 * 10000\n", &x, 1);
    int64_t want[6];
    for (int i = 0; i < 6; i++)
        want[i] = py_floordiv(MT_INT32, a[i], 3) + py_floormod(MT_INT32, 7, a[i]) * 100 +
                  py_floormod(MT_INT32, a[i], -4) * 10000;
    check_ints(out, want, 6, "literals");
    mt_tensor_release(out);
    mt_tensor_release(x);
}

/* ---- ** ------------------------------------------------------------------------- */

static void test_power_operator(void **st) {
    double xv[7] = {0.5, 1, 1.5, 2, 3, 10, 0.01};
    shape s = {1, {7}};
    mt_tensor *x = tensor_of(MT_FLOAT32, &s, xv);
    mt_tensor *out = run_src("def f(x: Tensor((7,), \"float32\")):\n    return x ** 2 + 2 ** x - x ** -0.5\n", &x, 1);
    double want[7];
    for (int i = 0; i < 7; i++) want[i] = xv[i] * xv[i] + pow(2, xv[i]) - pow(xv[i], -0.5);
    check_vals(out, want, 7, 1e-6, "float **");
    mt_tensor_release(out);
    mt_tensor_release(x);

    int64_t a[6] = {-3, -2, 0, 2, 5, 11}, b[6] = {3, 4, 0, 10, 3, 2}, w[6] = {-27, 16, 1, 1024, 125, 121};
    s.dims[0] = 6;
    mt_tensor *ia = tensor_of_ints(MT_INT32, &s, a), *ib = tensor_of_ints(MT_INT32, &s, b);
    mt_tensor *iargs[2] = {ia, ib};
    out = run_src("def f(a: Tensor((6,), \"int32\"), b: Tensor((6,), \"int32\")):\n    return a ** b\n", iargs, 2);
    assert_int_equal(mt_tensor_dtype(out), MT_INT32);
    check_ints(out, w, 6, "int **");
    mt_tensor_release(out);
    release_all(iargs, 2);
}

/* ---- comparisons ---------------------------------------------------------------- */

static const char *const cmp_ops[] = {"<", "<=", ">", ">=", "==", "!="};

static bool cmp_f(int op, double x, double y) {
    switch (op) {
    case 0: return x < y;
    case 1: return x <= y;
    case 2: return x > y;
    case 3: return x >= y;
    case 4: return x == y;
    default: return x != y; /* true on NaN */
    }
}
static bool cmp_i(int op, int64_t x, int64_t y) {
    switch (op) {
    case 0: return x < y;
    case 1: return x <= y;
    case 2: return x > y;
    case 3: return x >= y;
    case 4: return x == y;
    default: return x != y;
    }
}

static double g_cmp_float(void) {
    static const double sp[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0};
    double u = rnd();
    if (u < -0.6) return sp[rnd_int(0, 6)];
    return (double)(int64_t)(u * 8) / 4;
}

static void compare_case(mt_dtype dt, int op) {
    bool fl = is_float_dt(dt);
    for (size_t pi = 0; pi < NPAIRS; pi++) {
        const shape *sa = &bcast_pairs[pi].a, *sb = &bcast_pairs[pi].b, *so = &bcast_pairs[pi].out;
        int64_t na = numel(sa), nb = numel(sb), no = numel(so);
        int64_t *ia = malloc(sizeof(int64_t) * (size_t)na), *ib = malloc(sizeof(int64_t) * (size_t)nb);
        double *fa = malloc(sizeof(double) * (size_t)na), *fb = malloc(sizeof(double) * (size_t)nb);
        int64_t *want = malloc(sizeof(int64_t) * (size_t)no);
        for (int64_t i = 0; i < na; i++) fa[i] = g_cmp_float(), ia[i] = dt == MT_BOOL ? rnd() < 0 : fl ? 0 : int_sample(dt, i % 13);
        for (int64_t i = 0; i < nb; i++) fb[i] = g_cmp_float(), ib[i] = dt == MT_BOOL ? rnd() < 0 : fl ? 0 : int_sample(dt, (i * 5) % 13);
        char sha[64], shb[64], src[512];
        shape_src(sha, sizeof sha, sa);
        shape_src(shb, sizeof shb, sb);
        snprintf(src, sizeof src, "def f(a: Tensor(%s, \"%s\"), b: Tensor(%s, \"%s\")):\n    out = a %s b\n    return out\n",
                 sha, mt_dtype_str(dt), shb, mt_dtype_str(dt), cmp_ops[op]);
        mt_tensor *args[2] = {fl ? tensor_of(dt, sa, fa) : tensor_of_ints(dt, sa, ia),
                              fl ? tensor_of(dt, sb, fb) : tensor_of_ints(dt, sb, ib)};
        mt_tensor *out = run_src(src, args, 2);
        assert_int_equal(mt_tensor_dtype(out), MT_BOOL);
        assert_int_equal(mt_tensor_ndim(out), so->ndim);
        for (int64_t i = 0; i < no; i++) {
            int64_t ja = bidx(args[0], so, i), jb = bidx(args[1], so, i);
            want[i] = fl ? cmp_f(op, tget(args[0], ja), tget(args[1], jb)) : cmp_i(op, iget(args[0], ja), iget(args[1], jb));
        }
        check_ints(out, want, no, src);
        free(ia);
        free(ib);
        free(fa);
        free(fb);
        free(want);
        release_all(args, 2);
        mt_tensor_release(out);
    }
}

static void test_comparisons(void **st) {
    static const mt_dtype dts[] = {MT_FLOAT32, MT_FLOAT64, MT_FLOAT16, MT_INT8, MT_UINT8, MT_INT32, MT_INT64};
    for (int d = 0; d < 7; d++)
        for (int op = 0; op < 6; op++) compare_case(dts[d], op);
    compare_case(MT_BOOL, 4);
    compare_case(MT_BOOL, 5);
}

/* Literals settle to the tensor's dtype: uint8 200 > 100 is unsigned; an int
 * literal against bool is True/False. */
static void test_compare_literals(void **st) {
    int64_t u[4] = {0, 100, 200, 255};
    shape s = {1, {4}};
    mt_tensor *x = tensor_of_ints(MT_UINT8, &s, u);
    mt_tensor *out = run_src("def f(x: Tensor((4,), \"uint8\")):\n    return x > 100\n", &x, 1);
    int64_t w1[4] = {0, 0, 1, 1};
    check_ints(out, w1, 4, "uint8 > 100");
    mt_tensor_release(out);
    mt_tensor_release(x);

    int64_t m[4] = {1, 0, 0, 1};
    x = tensor_of_ints(MT_BOOL, &s, m);
    out = run_src("def f(m: Tensor((4,), \"bool\")):\n    return m == 1\n", &x, 1);
    check_ints(out, m, 4, "bool == 1");
    mt_tensor_release(out);
    mt_tensor_release(x);

    double f[4] = {-1, 0, 0.5, NAN};
    x = tensor_of(MT_FLOAT32, &s, f);
    out = run_src("def f(x: Tensor((4,), \"float32\")):\n    return 0 < x\n", &x, 1);
    int64_t w2[4] = {0, 0, 1, 0};
    check_ints(out, w2, 4, "0 < x");
    mt_tensor_release(out);
    mt_tensor_release(x);
}

/* ---- not, if-else, astype ------------------------------------------------------ */

static void test_logical_not(void **st) {
    int64_t m[5] = {1, 0, 0, 1, 1}, w[5] = {0, 1, 1, 0, 0};
    shape s = {1, {5}};
    mt_tensor *x = tensor_of_ints(MT_BOOL, &s, m);
    mt_tensor *out = run_src("def f(m: Tensor((5,), \"bool\")):\n    return not m\n", &x, 1);
    assert_int_equal(mt_tensor_dtype(out), MT_BOOL);
    check_ints(out, w, 5, "not m");
    mt_tensor_release(out);
    out = run_src("def f(m: Tensor((5,), \"bool\")):\n    return logical_not(m)\n", &x, 1);
    check_ints(out, w, 5, "logical_not(m)");
    mt_tensor_release(out);
    mt_tensor_release(x);

    /* not of a number is `== 0` (Python truth: NaN is true, so not NaN is False) */
    double v[5] = {-1, 2, NAN, 0, -0.0};
    x = tensor_of(MT_FLOAT64, &s, v);
    out = run_src("def f(x: Tensor((5,), \"float64\")):\n    return not (x > 0)\n", &x, 1);
    int64_t w2[5] = {1, 0, 1, 1, 1};
    check_ints(out, w2, 5, "not (x > 0)");
    mt_tensor_release(out);
    out = run_src("def f(x: Tensor((5,), \"float64\")):\n    return not x\n", &x, 1);
    int64_t w3[5] = {0, 0, 0, 1, 1};
    check_ints(out, w3, 5, "not x");
    mt_tensor_release(out);
    mt_tensor_release(x);
}

/* logical_and / logical_or by name (`and`/`or` take scalars), broadcasting,
 * an int literal settling to bool. */
static void test_logical_and_or(void **st) {
    int64_t a[8] = {0, 0, 1, 1, 0, 1, 1, 0}, b[4] = {0, 1, 0, 1};
    shape sa = {2, {2, 4}}, sb = {1, {4}};
    mt_tensor *args[2] = {tensor_of_ints(MT_BOOL, &sa, a), tensor_of_ints(MT_BOOL, &sb, b)};
    mt_tensor *o1 = run_src("def f(a: Tensor((2, 4), \"bool\"), b: Tensor((4,), \"bool\")):\n"
                            "    return logical_and(a, b)\n", args, 2);
    mt_tensor *o2 = run_src("def f(a: Tensor((2, 4), \"bool\"), b: Tensor((4,), \"bool\")):\n"
                            "    return logical_or(b, a)\n", args, 2);
    mt_tensor *o3 = run_src("def f(a: Tensor((2, 4), \"bool\"), b: Tensor((4,), \"bool\")):\n"
                            "    return logical_or(logical_and(a, 1), logical_and(b, 0))\n", args, 2);
    int64_t wand[8], wor[8];
    for (int i = 0; i < 8; i++) wand[i] = a[i] && b[i % 4], wor[i] = a[i] || b[i % 4];
    assert_int_equal(mt_tensor_dtype(o1), MT_BOOL);
    assert_int_equal(mt_tensor_ndim(o1), 2);
    check_ints(o1, wand, 8, "logical_and");
    check_ints(o2, wor, 8, "logical_or");
    check_ints(o3, a, 8, "logical ops with literals");
    mt_tensor_release(o1);
    mt_tensor_release(o2);
    mt_tensor_release(o3);
    release_all(args, 2);

    /* a chain of comparisons is their logical_and */
    double v[6] = {-1, 0, 0.5, 1, 2, NAN};
    shape s6 = {1, {6}};
    mt_tensor *x = tensor_of(MT_FLOAT32, &s6, v);
    mt_tensor *out = run_src("def f(x: Tensor((6,), \"float32\")):\n    return 0 <= x < 1\n", &x, 1);
    int64_t w[6] = {0, 1, 1, 0, 0, 0};
    check_ints(out, w, 6, "0 <= x < 1");
    mt_tensor_release(out);
    mt_tensor_release(x);
}

static void test_ifexp(void **st) {
    /* (4, 1) condition, (1, 5) and (5,) arms */
    double a[5], b[5];
    int64_t c[4] = {1, 0, 1, 0};
    for (int i = 0; i < 5; i++) a[i] = i + 0.5, b[i] = -i - 100;
    shape sc = {2, {4, 1}}, sa = {2, {1, 5}}, sb = {1, {5}};
    mt_tensor *args[3] = {tensor_of_ints(MT_BOOL, &sc, c), tensor_of(MT_FLOAT32, &sa, a), tensor_of(MT_FLOAT32, &sb, b)};
    mt_tensor *out = run_src("def f(c: Tensor((4, 1), \"bool\"), a: Tensor((1, 5), \"float32\"), b: Tensor((5,), \"float32\")):\n"
                             "    return a if c else b\n", args, 3);
    assert_int_equal(mt_tensor_ndim(out), 2);
    double want[20];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 5; j++) want[i * 5 + j] = c[i] ? a[j] : b[j];
    check_vals(out, want, 20, 0, "a if c else b");
    mt_tensor_release(out);
    release_all(args, 3);

    /* relu written with a comparison and a literal arm */
    double x[6] = {-2, -0.0, 0, 1.5, NAN, 7};
    shape s6 = {1, {6}};
    mt_tensor *t = tensor_of(MT_FLOAT32, &s6, x);
    out = run_src("def f(x: Tensor((6,), \"float32\")):\n    return x if x > 0 else 0.0\n", &t, 1);
    double w[6] = {0, 0, 0, 1.5, 0, 7};
    check_vals(out, w, 6, 0, "x if x > 0 else 0.0");
    mt_tensor_release(out);

    /* a numeric condition means c != 0 (NaN counts as true) */
    out = run_src("def f(x: Tensor((6,), \"float32\")):\n    return 1.0 if x else -1.0 * x\n", &t, 1);
    double w2[6] = {1, 0, -0.0, 1, 1, 1};
    check_vals(out, w2, 6, 0, "1.0 if x else -1.0 * x");
    mt_tensor_release(out);
    mt_tensor_release(t);
}

static void test_astype_method(void **st) {
    double v[5] = {-1.5, 0.1, 2.5, 300, NAN};
    shape s = {1, {5}};
    mt_tensor *x = tensor_of(MT_FLOAT32, &s, v);
    mt_tensor *out = run_src("def f(x: Tensor((5,), \"float32\")):\n    return x.astype(\"int8\")\n", &x, 1);
    int64_t w[5] = {-1, 0, 2, 127, 0}; /* toward zero, saturating, NaN -> 0 */
    assert_int_equal(mt_tensor_dtype(out), MT_INT8);
    check_ints(out, w, 5, "astype int8");
    mt_tensor_release(out);
    out = run_src("def f(x: Tensor((5,), \"float32\")):\n    return x.astype(\"float16\").astype(\"float64\")\n", &x, 1);
    double wf[5];
    for (int i = 0; i < 5; i++) wf[i] = h2d(f2h((float)v[i]));
    check_vals(out, wf, 5, 0, "astype float16");
    mt_tensor_release(out);
    mt_tensor_release(x);
}

/* ---- diagnostics ------------------------------------------------------------------ */

static void test_operator_errors(void **st) {
    expect_error("def f(a: Tensor((2,), \"bool\"), b: Tensor((2,), \"bool\")):\n    return a < b\n", MT_ERR_TYPE,
                 "'less' is not defined on bool tensors; convert with astype");
    expect_error("def f(a: Tensor((2,), \"bool\"), b: Tensor((2,), \"bool\")):\n    return a // b\n", MT_ERR_TYPE,
                 "'floor_divide' is not defined on bool tensors; convert with astype");
    expect_error("def f(x: Tensor((2,), \"float32\"), m: Tensor((2,), \"bool\")):\n    return logical_and(m, x)\n",
                 MT_ERR_TYPE, "'logical_and' needs bool tensors, but 'x' is float32");
    expect_error("def f(x: Tensor((2,), \"int8\")):\n    return logical_not(x)\n", MT_ERR_TYPE,
                 "'logical_not' needs a bool tensor, but 'x' is int8");
    expect_error("def f(m: Tensor((2,), \"bool\")):\n    return m ** m\n", MT_ERR_TYPE,
                 "'power' is not defined on bool tensors; convert with astype");
    expect_error("def f(a: Tensor((2,), \"float32\"), b: Tensor((2,), \"float64\")):\n    return a == b\n", MT_ERR_TYPE,
                 "operands of 'equal' have different dtypes: 'a' is float32 but 'b' is float64; convert one with astype");
    expect_error("def f(a: Tensor((2,), \"int32\")):\n    return a % 1.5\n", MT_ERR_TYPE,
                 "float literal used with int32 tensor 'a' in 'floor_mod'; convert with astype first");
    expect_error("def f(x: Tensor((2,), \"float32\"), y: Tensor((2,), \"int32\"), c: Tensor((2,), \"bool\")):\n"
                 "    return x if c else y\n",
                 MT_ERR_TYPE, "operands of 'where' have different dtypes: 'x' is float32 but 'y' is int32; convert one with astype");
    expect_error("def f(a: Tensor((2, 3), \"float32\"), b: Tensor((4,), \"float32\")):\n    return a >= b\n", MT_ERR_SHAPE,
                 "cannot broadcast shapes (2, 3) and (4,) in 'greater_equal' (operands 'a' and 'b')");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floordiv_floormod_int),
        cmocka_unit_test(test_floordiv_floormod_float),
        cmocka_unit_test(test_floor_ops_literals),
        cmocka_unit_test(test_power_operator),
        cmocka_unit_test(test_comparisons),
        cmocka_unit_test(test_compare_literals),
        cmocka_unit_test(test_logical_not),
        cmocka_unit_test(test_logical_and_or),
        cmocka_unit_test(test_ifexp),
        cmocka_unit_test(test_astype_method),
        cmocka_unit_test(test_operator_errors),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
