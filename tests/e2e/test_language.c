/*
 * test_language.c -- the graph-level language end to end: control flow
 * (if/elif/else, for, assert, with), calls of graph functions, operators,
 * attributes and subscripts, scalar parameters, the MLP of the MLC course.
 *
 * Numerics are against plain C loops; float tolerances are stated where used.
 */
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

static mt_tensor *vec_f32(const float *v, int64_t n) {
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, 1, &n);
    memcpy(mt_tensor_data(t), v, sizeof(float) * (size_t)n);
    return t;
}

static mt_tensor *scalar(mt_dtype dt, double v) {
    mt_tensor *t = mt_tensor_create(dt, 0, NULL);
    switch (dt) {
    case MT_BOOL: *(uint8_t *)mt_tensor_data(t) = v != 0; break;
    case MT_INT32: *(int32_t *)mt_tensor_data(t) = (int32_t)v; break;
    case MT_INT64: *(int64_t *)mt_tensor_data(t) = (int64_t)v; break;
    case MT_FLOAT32: *(float *)mt_tensor_data(t) = (float)v; break;
    case MT_FLOAT64: *(double *)mt_tensor_data(t) = v; break;
    default: fail_msg("dtype not handled");
    }
    return t;
}

static const float *F(const mt_tensor *t) { return mt_tensor_data(t); }

/* Runs k on args (released after), returns result 0 (caller releases). */
static mt_tensor *run1(mt_kernel *k, mt_tensor **args, int nargs) {
    mt_tensor *out = NULL;
    mt_diag d;
    if (mt_kernel_run(k, args, nargs, &out, 1, &d) != MT_OK) fail_msg("run failed:\n%s", d.text);
    for (int i = 0; i < nargs; i++) mt_tensor_release(args[i]);
    return out;
}

static void test_if_else_runtime(void **s) {
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((4,), \"float32\"), flag: bool):\n"
        "    if flag:\n"
        "        y = x * 2\n"
        "    else:\n"
        "        y = x + 1\n"
        "    return y\n");
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_GRAPH), "if flag:"));
    float xv[4] = {1, 2, 3, -4};
    for (int flag = 0; flag < 2; flag++) {
        mt_tensor *args[2] = {vec_f32(xv, 4), scalar(MT_BOOL, flag)};
        mt_tensor *y = run1(k, args, 2);
        for (int i = 0; i < 4; i++) assert_true(F(y)[i] == (flag ? xv[i] * 2 : xv[i] + 1));
        mt_tensor_release(y);
    }
    mt_kernel_release(k);
}

static void test_if_without_else_and_elif(void **s) {
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((3,), \"float32\"), alpha: float32):\n"
        "    y = x\n"
        "    if alpha > 0.5:\n"
        "        y = y * alpha\n"
        "    return y\n");
    float xv[3] = {1, -2, 4};
    float alphas[2] = {0.25f, 3.0f};
    for (int a = 0; a < 2; a++) {
        mt_tensor *args[2] = {vec_f32(xv, 3), scalar(MT_FLOAT32, alphas[a])};
        mt_tensor *y = run1(k, args, 2);
        for (int i = 0; i < 3; i++) assert_true(F(y)[i] == (alphas[a] > 0.5f ? xv[i] * alphas[a] : xv[i]));
        mt_tensor_release(y);
    }
    mt_kernel_release(k);

    k = compile_ok(
        "def f(x: Tensor((2,), \"float32\"), k: int32):\n"
        "    if k == 0:\n"
        "        y = x + 10\n"
        "    elif k == 1:\n"
        "        y = x + 20\n"
        "    elif k < 0 and k > -5:\n"
        "        y = x + 30\n"
        "    else:\n"
        "        y = x + 40\n"
        "    return y\n");
    int ks[5] = {0, 1, -3, -7, 9};
    float want[5] = {10, 20, 30, 40, 40};
    float xs[2] = {1, 2};
    for (int i = 0; i < 5; i++) {
        mt_tensor *args[2] = {vec_f32(xs, 2), scalar(MT_INT32, ks[i])};
        mt_tensor *y = run1(k, args, 2);
        assert_true(F(y)[0] == 1 + want[i]);
        assert_true(F(y)[1] == 2 + want[i]);
        mt_tensor_release(y);
    }
    mt_kernel_release(k);
}

/* A condition on a constant shape is decided at compile time: no if remains. */
static void test_if_on_shape(void **s) {
    const char *src =
        "def f(x: Tensor((%s,), \"float32\")):\n"
        "    if x.shape[0] > 16:\n"
        "        y = x * 2\n"
        "    else:\n"
        "        y = x * 3\n"
        "    return y\n";
    char buf[512];
    snprintf(buf, sizeof buf, src, "32");
    mt_kernel *k = compile_ok(buf);
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_GRAPH), "if "));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_GRAPH), "R.const(2.0"));
    mt_kernel_release(k);
    /* symbolic: decided at run time */
    snprintf(buf, sizeof buf, src, "\"n\"");
    k = compile_ok(buf);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_GRAPH), "if "));
    int64_t ns[2] = {4, 20};
    for (int i = 0; i < 2; i++) {
        float *xv = calloc((size_t)ns[i], sizeof(float));
        for (int j = 0; j < ns[i]; j++) xv[j] = (float)j;
        mt_tensor *x = vec_f32(xv, ns[i]);
        mt_tensor *y = run1(k, &x, 1);
        for (int j = 0; j < ns[i]; j++) assert_true(F(y)[j] == xv[j] * (ns[i] > 16 ? 2 : 3));
        mt_tensor_release(y);
        free(xv);
    }
    mt_kernel_release(k);
}

/* The same loop below and above the unroll threshold: unrolled (no loop in
 * the graph) and a loop in the executor; the same result either way. */
static void test_for_unroll_threshold(void **s) {
    const char *src =
        "def f(x: Tensor((5,), \"float32\")):\n"
        "    acc = x\n"
        "    for i in range(%d):\n"
        "        acc = acc * 0.5 + x * i\n"
        "    return acc\n";
    int counts[2] = {4, 40};
    for (int c = 0; c < 2; c++) {
        char buf[512];
        snprintf(buf, sizeof buf, src, counts[c]);
        mt_kernel *k = compile_ok(buf);
        const char *g = mt_kernel_dump(k, MT_STAGE_GRAPH);
        if (counts[c] <= 16)
            assert_null(strstr(g, "R.range"));
        else
            assert_non_null(strstr(g, "for i in R.range(R.const(0, \"int64\"), R.const(40, \"int64\"), R.const(1, \"int64\")):"));
        float xv[5] = {1, -1, 0.5f, 2, 3};
        mt_tensor *x = vec_f32(xv, 5);
        mt_tensor *y = run1(k, &x, 1);
        for (int j = 0; j < 5; j++) {
            float acc = xv[j];
            for (int i = 0; i < counts[c]; i++) acc = acc * 0.5f + xv[j] * (float)i;
            assert_true(fabsf(F(y)[j] - acc) <= 1e-5f * fmaxf(1, fabsf(acc)));
        }
        mt_tensor_release(y);
        mt_kernel_release(k);
    }
    /* unroll_threshold is a compile option */
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.unroll_threshold = 0;
    char buf[512];
    snprintf(buf, sizeof buf, src, 2);
    mt_kernel *k = compile_ok_opts(buf, &o);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_GRAPH), "R.range"));
    mt_kernel_release(k);
}

/* A run-time trip count, a negative step, a loop-carried swap, and a loop
 * that runs zero times. */
static void test_for_runtime(void **s) {
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((3,), \"float32\"), y: Tensor((3,), \"float32\"), n: int64):\n"
        "    a = x\n"
        "    b = y\n"
        "    for i in range(n, 0, -1):\n"
        "        a, b = b, a + b\n"
        "    return a, b\n");
    float xv[3] = {0, 1, 2}, yv[3] = {1, 1, 1};
    int64_t ns[3] = {0, 1, 10};
    for (int t = 0; t < 3; t++) {
        mt_tensor *args[3] = {vec_f32(xv, 3), vec_f32(yv, 3), scalar(MT_INT64, (double)ns[t])};
        mt_tensor *res[2] = {NULL, NULL};
        mt_diag d;
        assert_int_equal(mt_kernel_run(k, args, 3, res, 2, &d), MT_OK);
        for (int j = 0; j < 3; j++) {
            float a = xv[j], b = yv[j];
            for (int64_t i = ns[t]; i > 0; i--) {
                float na = b, nb = a + b;
                a = na;
                b = nb;
            }
            assert_true(F(res[0])[j] == a);
            assert_true(F(res[1])[j] == b);
        }
        for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
        mt_tensor_release(res[0]);
        mt_tensor_release(res[1]);
    }
    mt_kernel_release(k);
}

static void test_assert(void **s) {
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((\"n\",), \"float32\"), scale: float32):\n"
        "    assert scale > 0, \"scale must be positive\"\n"
        "    assert x.shape[0] >= 2\n"
        "    return x * scale\n");
    float xv[3] = {1, 2, 3};
    mt_tensor *args[2] = {vec_f32(xv, 3), scalar(MT_FLOAT32, 2)};
    mt_tensor *y = run1(k, args, 2);
    assert_true(F(y)[2] == 6);
    mt_tensor_release(y);

    mt_tensor *bad[2] = {vec_f32(xv, 3), scalar(MT_FLOAT32, -1)};
    mt_tensor *out = NULL;
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, bad, 2, &out, 1, &d), MT_ERR_RUNTIME);
    assert_string_equal(d.message, "assertion failed: scale must be positive");
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 5);
    assert_null(out);
    mt_tensor_release(bad[0]);
    mt_tensor_release(bad[1]);

    mt_tensor *short_x[2] = {vec_f32(xv, 1), scalar(MT_FLOAT32, 1)};
    assert_int_equal(mt_kernel_run(k, short_x, 2, &out, 1, &d), MT_ERR_RUNTIME);
    assert_string_equal(d.message, "assertion failed");
    assert_int_equal(d.line, 3);
    mt_tensor_release(short_x[0]);
    mt_tensor_release(short_x[1]);
    mt_kernel_release(k);

    /* a constant assertion is checked at compile time */
    mt_diag e = compile_err("def f(x: Tensor((3,), \"float32\")):\n    assert x.shape[0] == 4, \"need 4\"\n    return x\n");
    assert_int_equal(e.status, MT_ERR_SHAPE);
    assert_string_equal(e.message, "assertion is always false: need 4");
}

/* Graph functions call each other (inlined), with several results. */
static void test_calls(void **s) {
    mt_kernel *k = compile_ok(
        "def scale(v: Tensor((\"m\",), \"float32\"), by: float32):\n"
        "    return v * by\n"
        "\n"
        "def split(v: Tensor((\"m\",), \"float32\")):\n"
        "    return v + 1, v - 1\n"
        "\n"
        "def main(x: Tensor((4,), \"float32\")):\n"
        "    \"\"\"uses both helpers\"\"\"\n"
        "    hi, lo = split(scale(x, 2.0))\n"
        "    return hi * lo\n");
    assert_string_equal(mt_kernel_name(k), "main");
    float xv[4] = {0, 1, 2, 3};
    mt_tensor *x = vec_f32(xv, 4);
    mt_tensor *y = run1(k, &x, 1);
    for (int i = 0; i < 4; i++) assert_true(F(y)[i] == (xv[i] * 2 + 1) * (xv[i] * 2 - 1));
    mt_tensor_release(y);
    mt_kernel_release(k);

    mt_compile_options o;
    mt_compile_options_init(&o);
    o.entry = "split";
    k = compile_ok_opts(
        "def split(v: Tensor((\"m\",), \"float32\")):\n    return v + 1, v - 1\n"
        "def main(x: Tensor((4,), \"float32\")):\n    return x\n", &o);
    assert_int_equal(mt_kernel_num_results(k), 2);
    mt_kernel_release(k);
}

static void test_operators(void **s) {
    mt_kernel *k = compile_ok(
        "def f(a: Tensor((6,), \"int32\"), b: Tensor((6,), \"int32\")):\n"
        "    return a // b, a % b, a ** 2, -a, (a < b) == (b > a)\n");
    int32_t av[6] = {7, -7, 7, -7, 0, 5}, bv[6] = {2, 2, -2, -2, 3, 5};
    int64_t n = 6;
    mt_tensor *args[2] = {mt_tensor_wrap(av, MT_INT32, 1, &n, NULL), mt_tensor_wrap(bv, MT_INT32, 1, &n, NULL)};
    mt_tensor *res[5] = {0};
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args, 2, res, 5, &d), MT_OK);
    int32_t fd[6] = {3, -4, -4, 3, 0, 1}, fm[6] = {1, 1, -1, -1, 0, 0};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(((int32_t *)mt_tensor_data(res[0]))[i], fd[i]);
        assert_int_equal(((int32_t *)mt_tensor_data(res[1]))[i], fm[i]);
        assert_int_equal(((int32_t *)mt_tensor_data(res[2]))[i], av[i] * av[i]);
        assert_int_equal(((int32_t *)mt_tensor_data(res[3]))[i], -av[i]);
        assert_int_equal(((uint8_t *)mt_tensor_data(res[4]))[i], 1);
    }
    assert_int_equal(mt_tensor_dtype(res[4]), MT_BOOL);
    for (int i = 0; i < 5; i++) mt_tensor_release(res[i]);
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_kernel_release(k);

    /* x if c else y, comparisons giving bool tensors, not */
    k = compile_ok(
        "def f(x: Tensor((4,), \"float32\"), y: Tensor((4,), \"float32\")):\n"
        "    big = x > y\n"
        "    return x if big else y, not big\n");
    float xv[4] = {1, 5, -2, 3}, yv[4] = {2, 4, -3, 3};
    mt_tensor *a2[2] = {vec_f32(xv, 4), vec_f32(yv, 4)};
    mt_tensor *r2[2] = {0};
    assert_int_equal(mt_kernel_run(k, a2, 2, r2, 2, &d), MT_OK);
    for (int i = 0; i < 4; i++) {
        assert_true(F(r2[0])[i] == fmaxf(xv[i], yv[i]));
        assert_int_equal(((uint8_t *)mt_tensor_data(r2[1]))[i], !(xv[i] > yv[i]));
    }
    mt_tensor_release(r2[0]);
    mt_tensor_release(r2[1]);
    mt_tensor_release(a2[0]);
    mt_tensor_release(a2[1]);
    mt_kernel_release(k);
}

static void test_attributes_and_slices(void **s) {
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((3, 4), \"float32\")):\n"
        "    t = x.T\n"
        "    r = t[1:3, ::2]\n"
        "    row = x[-1]\n"
        "    return r * x.ndim, row.astype(\"int32\"), zeros_like(row) + x.shape[1]\n");
    float xv[12];
    for (int i = 0; i < 12; i++) xv[i] = (float)i;
    int64_t sh[2] = {3, 4};
    mt_tensor *x = mt_tensor_wrap(xv, MT_FLOAT32, 2, sh, NULL);
    mt_tensor *res[3] = {0};
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, &x, 1, res, 3, &d), MT_OK);
    /* t = x.T is 4x3; t[1:3, ::2] = rows 1..2, cols 0 and 2 -> 2x2 */
    assert_int_equal(mt_tensor_ndim(res[0]), 2);
    assert_int_equal(mt_tensor_shape(res[0])[0], 2);
    assert_int_equal(mt_tensor_shape(res[0])[1], 2);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) assert_true(F(res[0])[i * 2 + j] == xv[(j * 2) * 4 + (i + 1)] * 2);
    for (int j = 0; j < 4; j++) {
        assert_int_equal(((int32_t *)mt_tensor_data(res[1]))[j], (int32_t)xv[8 + j]);
        assert_true(F(res[2])[j] == 4.0f);
    }
    for (int i = 0; i < 3; i++) mt_tensor_release(res[i]);
    mt_tensor_release(x);
    mt_kernel_release(k);
}

static void test_device_cpu(void **s) {
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((2,), \"float32\")):\n"
        "    with device(\"cpu\"):\n"
        "        y = x + 1\n"
        "    return y\n");
    mt_kernel_release(k);
    mt_diag d = compile_err(
        "def f(x: Tensor((2,), \"float32\")):\n"
        "    with device(\"gpu\"):\n"
        "        y = x + 1\n"
        "    return y\n");
    assert_int_equal(d.status, MT_ERR_UNSUPPORTED);
    assert_string_equal(d.message, "device(\"gpu\") needs a GPU in the compilation: the target is cpu, "
                                   "and the CUDA backend is not available yet");
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 17); /* on the string */
    d = compile_err("def f(x: Tensor((2,), \"float32\")):\n"
                    "    with device(\"tpu\"):\n"
                    "        y = x + 1\n"
                    "    return y\n");
    assert_int_equal(d.status, MT_ERR_TYPE);
    assert_string_equal(d.message, "unknown device \"tpu\" (expected \"cpu\", \"gpu\", \"cuda\" or \"cuda:N\")");
}

static void test_names_on_some_paths(void **s) {
    mt_diag d = compile_err(
        "def f(x: Tensor((2,), \"float32\"), c: bool):\n"
        "    if c:\n"
        "        y = x + 1\n"
        "    return y\n");
    assert_int_equal(d.status, MT_ERR_NAME);
    assert_int_equal(d.line, 4);
    assert_int_equal(d.col, 12);
    assert_string_equal(d.message, "name 'y' is not bound on every path to here (bound at 3:9)");
    d = compile_err(
        "def f(x: Tensor((2,), \"float32\"), c: bool):\n"
        "    if c:\n"
        "        y = x + 1\n"
        "    else:\n"
        "        y = x.astype(\"int32\")\n"
        "    return y\n");
    assert_int_equal(d.status, MT_ERR_TYPE);
    assert_string_equal(d.message,
                        "'y' is float32 (2,) after the if-branch but int32 (2,) after the else-branch");
}

/* relu(data @ w0.T + b0) @ w1.T + b1, as in the MLC course. */
static void mlp_reference(const float *x, int64_t n, const float *w0, const float *b0,
                          const float *w1, const float *b1, double *out) {
    double h[128];
    for (int64_t r = 0; r < n; r++) {
        for (int j = 0; j < 128; j++) {
            double acc = b0[j];
            for (int k = 0; k < 784; k++) acc += (double)x[r * 784 + k] * w0[j * 784 + k];
            h[j] = acc > 0 ? acc : 0;
        }
        for (int j = 0; j < 10; j++) {
            double acc = b1[j];
            for (int k = 0; k < 128; k++) acc += h[k] * w1[j * 128 + k];
            out[r * 10 + j] = acc;
        }
    }
}

static float *random_floats(int64_t n, float scale) {
    float *v = malloc(sizeof(float) * (size_t)n);
    uint32_t s = 12345u + (uint32_t)n;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = ((float)(s >> 8) / 16777216.0f * 2 - 1) * scale;
    }
    return v;
}

static void check_mlp(mt_kernel *k, int64_t n) {
    float *x = random_floats(n * 784, 1), *w0 = random_floats(128 * 784, 0.05f), *b0 = random_floats(128, 0.1f);
    float *w1 = random_floats(10 * 128, 0.1f), *b1 = random_floats(10, 0.1f);
    int64_t sx[2] = {n, 784}, sw0[2] = {128, 784}, sb0[1] = {128}, sw1[2] = {10, 128}, sb1[1] = {10};
    mt_tensor *args[5] = {mt_tensor_wrap(x, MT_FLOAT32, 2, sx, NULL), mt_tensor_wrap(w0, MT_FLOAT32, 2, sw0, NULL),
                          mt_tensor_wrap(b0, MT_FLOAT32, 1, sb0, NULL), mt_tensor_wrap(w1, MT_FLOAT32, 2, sw1, NULL),
                          mt_tensor_wrap(b1, MT_FLOAT32, 1, sb1, NULL)};
    mt_tensor *out = run1(k, args, 5);
    assert_int_equal(mt_tensor_shape(out)[0], n);
    assert_int_equal(mt_tensor_shape(out)[1], 10);
    double *want = malloc(sizeof(double) * (size_t)(n * 10));
    mlp_reference(x, n, w0, b0, w1, b1, want);
    /* float32 dot products of length 784 and 128 in any summation order:
     * relative 1e-4 with an absolute floor of 1e-4 */
    for (int64_t i = 0; i < n * 10; i++) {
        double g = F(out)[i];
        if (fabs(g - want[i]) > 1e-4 * fmax(1, fabs(want[i])))
            fail_msg("mlp n=%lld element %lld: got %.7g want %.7g", (long long)n, (long long)i, g, want[i]);
    }
    free(want);
    mt_tensor_release(out);
    free(x), free(w0), free(b0), free(w1), free(b1);
}

static void test_mlp(void **s) {
    const char *fixed =
        "def mlp(data: Tensor((1, 784), \"float32\"), w0: Tensor((128, 784), \"float32\"),\n"
        "        b0: Tensor((128,), \"float32\"), w1: Tensor((10, 128), \"float32\"),\n"
        "        b1: Tensor((10,), \"float32\")):\n"
        "    return relu(data @ w0.T + b0) @ w1.T + b1\n";
    mt_kernel *k = compile_ok(fixed);
    check_mlp(k, 1);
    mt_kernel_release(k);

    const char *symbolic =
        "def mlp(data: Tensor((\"n\", 784), \"float32\"), w0: Tensor((128, 784), \"float32\"),\n"
        "        b0: Tensor((128,), \"float32\"), w1: Tensor((10, 128), \"float32\"),\n"
        "        b1: Tensor((10,), \"float32\")):\n"
        "    lv0 = linear(data, w0, b0)\n"
        "    return linear(relu(lv0), w1, b1)\n";
    k = compile_ok(symbolic);
    check_mlp(k, 1);
    check_mlp(k, 7);
    check_mlp(k, 4096);
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_if_else_runtime),   cmocka_unit_test(test_if_without_else_and_elif),
        cmocka_unit_test(test_if_on_shape),       cmocka_unit_test(test_for_unroll_threshold),
        cmocka_unit_test(test_for_runtime),       cmocka_unit_test(test_assert),
        cmocka_unit_test(test_calls),             cmocka_unit_test(test_operators),
        cmocka_unit_test(test_attributes_and_slices), cmocka_unit_test(test_device_cpu),
        cmocka_unit_test(test_names_on_some_paths), cmocka_unit_test(test_mlp),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
