/*
 * test_bound.c -- bound parameters (mt_compile_options.params): a kernel
 * compiled with model weights given at compile time takes only the other
 * arguments, computes what the unbound kernel computes, keeps its own copy
 * of the values, and refuses every malformed binding with a message (at the
 * parameter's annotation when the source is at fault). What only the bound
 * values determine is computed once. Under
 * MT_TEST_TARGET=cuda-emulate the bound values move to the emulated GPU on
 * the first run.
 */
#include "test_util.h"

static const char *MLP =
    "def mlp(x: Tensor((\"n\", 8), \"float32\"), w0: Tensor((8, 16), \"float32\"), b0: Tensor((16,), \"float32\"),\n"
    "        w1: Tensor((16, 4), \"float32\")):\n"
    "    h = relu(x @ w0 + b0)\n"
    "    return softmax(h @ w1, axis=-1)\n";

static mt_tensor *filled(mt_dtype dt, int ndim, const int64_t *shape, int seed) {
    mt_tensor *t = mt_tensor_create(dt, ndim, shape);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++)
        ((float *)mt_tensor_data(t))[i] = (float)((i * 37 + seed * 11) % 17) / 8.0f - 1.0f;
    return t;
}

static mt_kernel *compile_bound(const char *src, mt_bound_param *ps, int n, mt_diag *d) {
    mt_compile_options o = test_target_options(NULL);
    o.params = ps;
    o.nparams = n;
    return mt_jit_compile(test_ctx, src, &o, d);
}

static void test_mlp_bound_matches_unbound(void **s) {
    int64_t w0s[2] = {8, 16}, b0s[1] = {16}, w1s[2] = {16, 4};
    mt_tensor *w0 = filled(MT_FLOAT32, 2, w0s, 1), *b0 = filled(MT_FLOAT32, 1, b0s, 2),
              *w1 = filled(MT_FLOAT32, 2, w1s, 3);
    mt_bound_param ps[3] = {{"w1", w1}, {"w0", w0}, {"b0", b0}}; /* any order */
    mt_diag d;
    mt_kernel *kb = compile_bound(MLP, ps, 3, &d), *ku = compile_ok(MLP);
    if (!kb) fail_msg("%s", d.text);
    assert_int_equal(mt_kernel_num_params(kb), 1);
    assert_string_equal(mt_kernel_param_name(kb, 0), "x");
    assert_int_equal(mt_kernel_param_dim(kb, 0, 0), -1);
    assert_null(mt_kernel_param_name(kb, 1));
    assert_non_null(strstr(mt_kernel_dump(kb, MT_STAGE_GRAPH), "    # bound at compile time: w0, b0, w1\n"));
    /* the kernel's own copy: the caller may change or free its tensors */
    mt_tensor *w0_copy = filled(MT_FLOAT32, 2, w0s, 1);
    ((float *)mt_tensor_data(w0))[0] = 1000.0f;
    int64_t sizes[3] = {1, 5, 300};
    for (int c = 0; c < 3; c++) {
        int64_t xs[2] = {sizes[c], 8};
        mt_tensor *x = filled(MT_FLOAT32, 2, xs, 4 + c), *rb = NULL, *ru = NULL;
        mt_tensor *all[4] = {x, w0_copy, b0, w1};
        assert_int_equal(test_kernel_run(kb, &x, 1, &rb, 1, &d), MT_OK);
        assert_int_equal(test_kernel_run(ku, all, 4, &ru, 1, &d), MT_OK);
        for (int64_t i = 0; i < sizes[c] * 4; i++)
            assert_float_equal(((float *)mt_tensor_data(rb))[i], ((float *)mt_tensor_data(ru))[i], 1e-6);
        mt_tensor_release(rb);
        mt_tensor_release(ru);
        mt_tensor_release(x);
    }
    mt_tensor_release(w0);
    mt_tensor_release(w0_copy);
    mt_tensor_release(b0);
    mt_tensor_release(w1);
    mt_kernel_release(kb);
    mt_kernel_release(ku);
}

/* What only the bound values determine runs once, on the first run, and
 * its result is kept: (w * 2).T @ s + 1 is one kernel outside the per-call
 * program (the plan says so), returned and used like a weight. */
static void test_computed_once(void **s) {
    const char *src = "def f(x: Tensor((\"n\", 3), \"float32\"), w: Tensor((2, 3), \"float32\"),\n"
                      "      s: Tensor((2, 2), \"float32\")):\n"
                      "    w2 = (w * 2.0).T @ s + 1.0\n"
                      "    return relu(x @ w2), w2\n";
    int64_t ws[2] = {2, 3}, ss[2] = {2, 2}, xs[2] = {4, 3};
    float wv[6] = {1, 2, 3, 4, 5, 6}, sv[4] = {1, 0, 0, -1};
    mt_tensor *w = mt_tensor_wrap(wv, MT_FLOAT32, 2, ws, NULL), *sm = mt_tensor_wrap(sv, MT_FLOAT32, 2, ss, NULL);
    mt_bound_param ps[2] = {{"w", w}, {"s", sm}};
    mt_diag d;
    mt_kernel *k = compile_bound(src, ps, 2, &d);
    if (!k) fail_msg("%s", d.text);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_PLAN),
                           "# computed once, on the first run, from the bound parameters (1 value kept): "
                           "fused_multiply_transpose_matmul_add\n"));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_GRAPH_OPT), "cls.fused_matmul_relu, (x, w2)"));
    const float w2want[6] = {3, -7, 5, -9, 7, -11};
    for (int rep = 0; rep < 3; rep++) {
        mt_tensor *x = filled(MT_FLOAT32, 2, xs, rep), *r[2] = {NULL, NULL};
        assert_int_equal(test_kernel_run(k, &x, 1, r, 2, &d), MT_OK);
        const float *xv = mt_tensor_data(x), *o = mt_tensor_data(r[0]), *w2 = mt_tensor_data(r[1]);
        for (int i = 0; i < 6; i++) assert_float_equal(w2[i], w2want[i], 0);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 2; j++) {
                double acc = 0;
                for (int q = 0; q < 3; q++) acc += (double)xv[i * 3 + q] * w2want[q * 2 + j];
                assert_float_equal(o[i * 2 + j], acc > 0 ? acc : 0, 1e-5);
            }
        mt_tensor_release(r[0]);
        mt_tensor_release(r[1]);
        mt_tensor_release(x);
    }
    mt_tensor_release(w);
    mt_tensor_release(sm);
    mt_kernel_release(k);
}

static void test_run_argument_count(void **s) {
    int64_t w1s[2] = {16, 4};
    mt_tensor *w1 = filled(MT_FLOAT32, 2, w1s, 3);
    mt_bound_param ps[1] = {{"w1", w1}};
    mt_diag d;
    mt_kernel *k = compile_bound(MLP, ps, 1, &d);
    assert_non_null(k);
    mt_tensor_release(w1);
    assert_int_equal(mt_kernel_num_params(k), 3);
    mt_tensor *out = NULL;
    assert_int_equal(mt_kernel_run(k, NULL, 0, &out, 1, &d), MT_ERR_INVALID_ARG);
    assert_string_equal(d.message, "the kernel takes 3 arguments (1 more are bound), got 0");
    mt_kernel_release(k);
}

static void test_not_cached(void **s) {
    int64_t w1s[2] = {16, 4};
    mt_tensor *w1 = filled(MT_FLOAT32, 2, w1s, 3);
    mt_bound_param ps[1] = {{"w1", w1}};
    mt_diag d;
    mt_kernel *a = compile_bound(MLP, ps, 1, &d), *b = compile_bound(MLP, ps, 1, &d);
    assert_non_null(a);
    assert_true(a != b); /* each compile holds its own values */
    mt_kernel_release(a);
    mt_kernel_release(b);
    mt_tensor_release(w1);
}

static void expect_refused(const char *src, mt_bound_param *ps, int n, mt_status st, int line, int col,
                           const char *msg) {
    mt_diag d;
    mt_kernel *k = compile_bound(src, ps, n, &d);
    if (k || d.status != st || d.line != line || d.col != col || !strstr(d.message, msg))
        fail_msg("got %s %d:%d '%s', want %s %d:%d '%s'", mt_status_str(d.status), d.line, d.col, d.message,
                 mt_status_str(st), line, col, msg);
}

static void test_refusals(void **s) {
    int64_t w0s[2] = {8, 16}, odd[2] = {8, 15};
    mt_tensor *w0 = filled(MT_FLOAT32, 2, w0s, 1), *bad = filled(MT_FLOAT32, 2, odd, 1);
    mt_bound_param wrong_shape[1] = {{"w0", bad}};
    expect_refused(MLP, wrong_shape, 1, MT_ERR_TYPE, 1, 45,
                   "parameter 'w0' is float32 (8, 16) but the value bound to it is float32 (8, 15)");
    mt_bound_param sym[1] = {{"x", w0}};
    expect_refused(MLP, sym, 1, MT_ERR_SHAPE, 1, 12, "parameter 'x' is bound to a value but its dim 0 is symbolic");
    mt_bound_param unknown[1] = {{"w9", w0}};
    expect_refused(MLP, unknown, 1, MT_ERR_NAME, 1, 1, "a value is bound to 'w9', which is no parameter of 'mlp'");
    mt_bound_param twice[2] = {{"w0", w0}, {"w0", w0}};
    expect_refused(MLP, twice, 2, MT_ERR_INVALID_ARG, 0, 0, "this parameter is bound twice ('w0')");
    mt_bound_param null_value[1] = {{"w0", NULL}};
    expect_refused(MLP, null_value, 1, MT_ERR_INVALID_ARG, 0, 0, "a bound parameter needs a name and a value");
    int64_t strides[2] = {1, 8};
    mt_tensor *strided = mt_tensor_wrap(mt_tensor_data(w0), MT_FLOAT32, 2, w0s, strides);
    mt_bound_param not_contiguous[1] = {{"w0", strided}};
    expect_refused(MLP, not_contiguous, 1, MT_ERR_INVALID_ARG, 0, 0, "a bound value must be C-contiguous");
    mt_diag d;
    mt_compile_options o = test_target_options(NULL);
    o.nparams = 1; /* params NULL */
    assert_null(mt_jit_compile(test_ctx, MLP, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    mt_tensor_release(strided);
    mt_tensor_release(w0);
    mt_tensor_release(bad);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mlp_bound_matches_unbound),
        cmocka_unit_test(test_computed_once),
        cmocka_unit_test(test_run_argument_count),
        cmocka_unit_test(test_not_cached),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
