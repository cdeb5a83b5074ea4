/*
 * test_extern.c -- host functions (mt_context_register_extern) called from
 * kernels with call_dps_packed: the registration's checks, every compile
 * error placed on the call, runs against a C reference (symbolic sizes,
 * several outputs, inside a loop, fused neighbours), what the function sees
 * (DLTensors: dtype, shape, strides, device), and a function that fails.
 */
#include <dlpack/dlpack.h>

#include "test_util.h"

/* ---- host functions ------------------------------------------------------ */

/* out[i, j] = x[i, j] * w[j] + 100 */
static int scale_rows(DLTensor *x, DLTensor *w, DLTensor *out) {
    int64_t n = x->shape[0], m = x->shape[1];
    const float *xp = x->data, *wp = w->data;
    float *op = out->data;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) op[i * m + j] = xp[i * m + j] * wp[j] + 100.0f;
    return 0;
}

/* pos = max(x, 0), neg = min(x, 0) */
static int split_sign(DLTensor *x, DLTensor *pos, DLTensor *neg) {
    int64_t n = x->shape[0];
    const float *xp = x->data;
    for (int64_t i = 0; i < n; i++) {
        ((float *)pos->data)[i] = xp[i] > 0 ? xp[i] : 0;
        ((float *)neg->data)[i] = xp[i] < 0 ? xp[i] : 0;
    }
    return 0;
}

static int fail7(DLTensor *x, DLTensor *out) { (void)x, (void)out; return 7; }

/* records what it was given */
static DLTensor seen_in, seen_out;
static int64_t seen_shape[2], seen_strides[2];
static int seen_calls;
static int record(DLTensor *x, DLTensor *out) {
    seen_in = *x;
    seen_out = *out;
    for (int i = 0; i < x->ndim && i < 2; i++) seen_shape[i] = x->shape[i], seen_strides[i] = x->strides[i];
    seen_calls++;
    if (x->device.device_type == kDLCPU) /* host memory: copy x + 1 */
        for (int64_t i = 0; i < x->shape[0] * x->shape[1]; i++)
            ((int32_t *)out->data)[i] = ((int32_t *)x->data)[i] + 1;
    return 0;
}

static const mt_extern_arg F2[1] = {{MT_FLOAT32, 2}}, F1[1] = {{MT_FLOAT32, 1}}, I2[1] = {{MT_INT32, 2}};
static const mt_extern_arg F2F1[2] = {{MT_FLOAT32, 2}, {MT_FLOAT32, 1}}, F1F1[2] = {{MT_FLOAT32, 1}, {MT_FLOAT32, 1}};

static int setup(void **state) {
    if (test_setup_ctx(state)) return -1;
    mt_diag d;
    mt_status st = mt_context_register_extern(test_ctx, "scale_rows", (void *)scale_rows, F2F1, 2, F2, 1, &d);
    st |= mt_context_register_extern(test_ctx, "split_sign", (void *)split_sign, F1, 1, F1F1, 2, &d);
    st |= mt_context_register_extern(test_ctx, "fail7", (void *)fail7, F1, 1, F1, 1, &d);
    mt_extern_arg any[1] = {{MT_INT32, -1}};
    st |= mt_context_register_extern(test_ctx, "lib.record", (void *)record, I2, 1, any, 1, &d);
    return st == MT_OK ? 0 : -1;
}

/* ---- registration ------------------------------------------------------------ */

static void test_register_errors(void **s) {
    mt_diag d;
    assert_int_equal(mt_context_register_extern(test_ctx, "scale_rows", (void *)scale_rows, F2F1, 2, F2, 1, &d),
                     MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.message, "already registered as 'scale_rows'"));
    assert_int_equal(mt_context_register_extern(test_ctx, "g", NULL, F1, 1, F1, 1, &d), MT_ERR_INVALID_ARG);
    assert_int_equal(mt_context_register_extern(NULL, "g", (void *)fail7, F1, 1, F1, 1, &d), MT_ERR_INVALID_ARG);
    assert_int_equal(mt_context_register_extern(test_ctx, "9g", (void *)fail7, F1, 1, F1, 1, &d),
                     MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.message, "'9g'"));
    assert_int_equal(mt_context_register_extern(test_ctx, "a b", (void *)fail7, F1, 1, F1, 1, &d),
                     MT_ERR_INVALID_ARG);
    assert_int_equal(mt_context_register_extern(test_ctx, NULL, (void *)fail7, F1, 1, F1, 1, &d),
                     MT_ERR_INVALID_ARG);
    assert_int_equal(mt_context_register_extern(test_ctx, "g", (void *)fail7, F1, 1, F1, 0, &d),
                     MT_ERR_INVALID_ARG);
    assert_int_equal(mt_context_register_extern(test_ctx, "g", (void *)fail7, F1, 40, F1, 1, &d),
                     MT_ERR_INVALID_ARG);
    mt_extern_arg bad[1] = {{(mt_dtype)99, 1}}, deep[1] = {{MT_FLOAT32, 9}};
    assert_int_equal(mt_context_register_extern(test_ctx, "g", (void *)fail7, bad, 1, F1, 1, &d),
                     MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.message, "input 0 has dtype 99"));
    assert_int_equal(mt_context_register_extern(test_ctx, "g", (void *)fail7, F1, 1, deep, 1, &d),
                     MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.message, "output 0"));
    /* at most MT_MAX_EXTERNS per context */
    mt_context *ctx = mt_context_create(NULL);
    for (int i = 0; i < MT_MAX_EXTERNS; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        assert_int_equal(mt_context_register_extern(ctx, name, (void *)fail7, F1, 1, F1, 1, &d), MT_OK);
    }
    assert_int_equal(mt_context_register_extern(ctx, "one_more", (void *)fail7, F1, 1, F1, 1, &d), MT_ERR_LIMIT);
    mt_context_destroy(ctx);
}

/* ---- compile errors, placed on the call ------------------------------------------ */

static void expect_error(const char *body, mt_status st, int line, int col, const char *msg) {
    char src[1024];
    snprintf(src, sizeof src,
             "def f(x: Tensor((\"n\", 4), \"float32\"), w: Tensor((4,), \"float32\"),\n"
             "      v: Tensor((\"n\",), \"float32\")):\n%s", body);
    mt_diag d;
    mt_compile_options o = test_target_options(NULL);
    mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &d);
    if (k || d.status != st || d.line != line || d.col != col || !strstr(d.message, msg))
        fail_msg("for:\n%s\ngot %s %d:%d %s\nwant %s %d:%d ...%s...", src, mt_status_str(d.status), d.line, d.col,
                 d.message, mt_status_str(st), line, col, msg);
    mt_kernel_release(k);
}

static void test_compile_errors(void **s) {
    expect_error("    return call_dps_packed(\"nope\", (x, w), out_sinfo=Tensor((\"n\", 4), \"float32\"))\n",
                 MT_ERR_NAME, 3, 28, "no host function 'nope' is registered on the context (registered: "
                 "'scale_rows', 'split_sign'");
    expect_error("    return call_dps_packed(\"scale_rows\", (x,), out_sinfo=Tensor((\"n\", 4), \"float32\"))\n",
                 MT_ERR_TYPE, 3, 42, "host function 'scale_rows' takes 2 inputs, got 1");
    expect_error("    return call_dps_packed(\"scale_rows\", (x, x), out_sinfo=Tensor((\"n\", 4), \"float32\"))\n",
                 MT_ERR_TYPE, 3, 46, "input 1 of host function 'scale_rows' must be float32 of rank 1, got x "
                 "float32 (n, 4)");
    expect_error("    return call_dps_packed(\"scale_rows\", (x.astype(\"int32\"), w), "
                 "out_sinfo=Tensor((\"n\", 4), \"float32\"))\n",
                 MT_ERR_TYPE, 3, 51, "input 0 of host function 'scale_rows' must be float32 of rank 2, got "
                 "x.astype(\"int32\") int32 (n, 4)");
    expect_error("    return call_dps_packed(\"scale_rows\", (x, w), out_sinfo=Tensor((\"n\", 4), \"int32\"))\n",
                 MT_ERR_TYPE, 3, 60, "output 0 of host function 'scale_rows' must be float32 of rank 2, got "
                 "out_sinfo says int32 (n, 4)");
    expect_error("    return call_dps_packed(\"scale_rows\", (x, w), out_sinfo=[Tensor((\"n\", 4), \"float32\"), "
                 "Tensor((4,), \"float32\")])\n",
                 MT_ERR_TYPE, 3, 60, "host function 'scale_rows' has 1 output, out_sinfo gives 2");
    expect_error("    return call_dps_packed(\"scale_rows\", (x, w))\n", MT_ERR_TYPE, 3, 27,
                 "call_dps_packed needs out_sinfo=Tensor(shape, dtype)");
    expect_error("    return call_dps_packed(\"scale_rows\", (x, w), out=1)\n", MT_ERR_TYPE, 3, 50,
                 "unexpected keyword argument 'out'");
    expect_error("    return call_dps_packed(scale_rows, (x, w), out_sinfo=Tensor((\"n\", 4), \"float32\"))\n",
                 MT_ERR_TYPE, 3, 28, "the first argument of call_dps_packed must be the host function's name");
    expect_error("    return call_dps_packed(\"scale_rows\", (x, w), out_sinfo=Tensor((\"m\", 4), \"float32\"))\n",
                 MT_ERR_SHAPE, 3, 60, "symbolic dimension \"m\" of out_sinfo is no dimension of an input");
    expect_error("    return call_dps_packed(\"split_sign\", 1.0, out_sinfo=[Tensor((4,), \"float32\"), "
                 "Tensor((4,), \"float32\")])\n",
                 MT_ERR_TYPE, 3, 42, "input 0 of host function 'split_sign' must be a tensor, not a literal");
    expect_error("    y = call_dps_packed(\"split_sign\", v, out_sinfo=[Tensor((\"n\",), \"float32\"), "
                 "Tensor((\"n\",), \"float32\")]) * 2.0\n    return y\n",
                 MT_ERR_TYPE, 3, 24, "the host function returns 2 values; unpack them");
    expect_error("    return call_dps_packed(\"scale_rows\", (x, w), out_sinfo=Tensor((\"n\", 4), \"f32\"))\n",
                 MT_ERR_TYPE, 3, 77, "unknown dtype 'f32'");
}

/* ---- runs ------------------------------------------------------------------------ */

static mt_tensor *floats(int ndim, const int64_t *shape, float (*f)(int64_t)) {
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, ndim, shape);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++) ((float *)mt_tensor_data(t))[i] = f(i);
    return t;
}
static float ramp(int64_t i) { return (float)(i % 13) - 6.0f; }
static float quarter(int64_t i) { return 0.25f * (float)(i + 1); }

static void test_run_scale_rows(void **s) {
    skip_if_gpu_target("the host function reads host memory");
    mt_kernel *k = compile_ok("def f(x: Tensor((\"n\", 4), \"float32\"), w: Tensor((4,), \"float32\")):\n"
                              "    y = call_dps_packed(\"scale_rows\", (x * 2.0, w), "
                              "out_sinfo=Tensor((\"n\", 4), \"float32\"))\n"
                              "    return relu(y - 101.0)\n");
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_GRAPH_OPT),
                           "R.call_dps_packed(\"scale_rows\", (lv, w), out_sinfo=R.Tensor((\"n\", 4), dtype=\"float32\"))"));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_GRAPH_OPT), "fused_subtract_relu"));
    int64_t sizes[3] = {1, 7, 1000};
    for (int c = 0; c < 3; c++) {
        int64_t xs[2] = {sizes[c], 4}, ws[1] = {4};
        mt_tensor *args[2] = {floats(2, xs, ramp), floats(1, ws, quarter)}, *out = NULL;
        mt_diag d;
        assert_int_equal(mt_kernel_run(k, args, 2, &out, 1, &d), MT_OK);
        const float *x = mt_tensor_data(args[0]), *w = mt_tensor_data(args[1]), *o = mt_tensor_data(out);
        for (int64_t i = 0; i < sizes[c] * 4; i++) {
            double want = (double)x[i] * 2.0 * w[i % 4] + 100.0 - 101.0;
            assert_float_equal(o[i], want > 0 ? want : 0, 1e-5);
        }
        mt_tensor_release(out);
        mt_tensor_release(args[0]);
        mt_tensor_release(args[1]);
    }
    mt_kernel_release(k);
}

static void test_run_two_outputs_in_a_loop(void **s) {
    skip_if_gpu_target("the host function reads host memory");
    mt_kernel *k = compile_ok("def f(v: Tensor((\"n\",), \"float32\"), steps: int64):\n"
                              "    acc = v * 0.0\n"
                              "    for i in range(steps):\n"
                              "        p, q = call_dps_packed(\"split_sign\", v, out_sinfo=[Tensor((\"n\",), \"float32\"), "
                              "Tensor((\"n\",), \"float32\")])\n"
                              "        acc = acc + p - q\n"
                              "    return acc\n");
    int64_t n[1] = {37};
    mt_tensor *v = floats(1, n, ramp), *steps = mt_tensor_create(MT_INT64, 0, NULL), *out = NULL;
    *(int64_t *)mt_tensor_data(steps) = 3;
    mt_tensor *args[2] = {v, steps};
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args, 2, &out, 1, &d), MT_OK);
    for (int64_t i = 0; i < 37; i++) {
        float x = ((float *)mt_tensor_data(v))[i];
        assert_float_equal(((float *)mt_tensor_data(out))[i], 3.0f * (x < 0 ? -x : x), 1e-6);
    }
    mt_tensor_release(out);
    mt_tensor_release(v);
    mt_tensor_release(steps);
    mt_kernel_release(k);
}

static void test_run_sees_dltensors(void **s) {
    skip_if_gpu_target("checks host tensors");
    seen_calls = 0;
    mt_kernel *k = compile_ok("def f(x: Tensor((3, 5), \"int32\")):\n"
                              "    return call_dps_packed(\"lib.record\", x + 1, out_sinfo=Tensor((3, 5), \"int32\"))\n");
    int64_t shape[2] = {3, 5};
    mt_tensor *x = mt_tensor_create(MT_INT32, 2, shape), *out = NULL;
    for (int i = 0; i < 15; i++) ((int32_t *)mt_tensor_data(x))[i] = i;
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, &x, 1, &out, 1, &d), MT_OK);
    assert_int_equal(seen_calls, 1);
    assert_int_equal(seen_in.device.device_type, kDLCPU);
    assert_int_equal(seen_in.ndim, 2);
    assert_int_equal(seen_in.dtype.code, kDLInt);
    assert_int_equal(seen_in.dtype.bits, 32);
    assert_int_equal(seen_in.dtype.lanes, 1);
    assert_int_equal(seen_shape[0], 3);
    assert_int_equal(seen_shape[1], 5);
    assert_int_equal(seen_strides[0], 5);
    assert_int_equal(seen_strides[1], 1);
    assert_int_equal(seen_in.byte_offset, 0);
    assert_ptr_equal(seen_out.data, mt_tensor_data(out));
    for (int i = 0; i < 15; i++) assert_int_equal(((int32_t *)mt_tensor_data(out))[i], i + 2);
    mt_tensor_release(out);
    mt_tensor_release(x);
    mt_kernel_release(k);
}

static void test_run_failure(void **s) {
    skip_if_gpu_target("the same on every target; run once");
    mt_kernel *k = compile_ok("def f(v: Tensor((4,), \"float32\")):\n"
                              "    return call_dps_packed(\"fail7\", v, out_sinfo=Tensor((4,), \"float32\"))\n");
    int64_t n[1] = {4};
    mt_tensor *v = floats(1, n, ramp), *out = NULL;
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, &v, 1, &out, 1, &d), MT_ERR_RUNTIME);
    assert_non_null(strstr(d.message, "host function 'fail7' failed (it returned 7)"));
    assert_null(out);
    mt_tensor_release(v);
    mt_kernel_release(k);
}

/* On a GPU target the function gets the device's tensors (here the
 * emulated GPU's, which the host must not read: it only looks). */
static void test_run_on_device(void **s) {
    if (!test_gpu_emulated()) {
        print_message("skipped: needs MT_TEST_TARGET=cuda-emulate (test_extern_gpu_emulated)\n");
        skip();
    }
    seen_calls = 0;
    mt_kernel *k = compile_ok("def f(x: Tensor((3, 5), \"int32\")):\n"
                              "    return call_dps_packed(\"lib.record\", x, out_sinfo=Tensor((3, 5), \"int32\"))\n");
    int64_t shape[2] = {3, 5};
    mt_tensor *x = mt_tensor_create(MT_INT32, 2, shape), *out = NULL;
    mt_diag d;
    assert_int_equal(test_kernel_run(k, &x, 1, &out, 1, &d), MT_OK);
    assert_int_equal(seen_calls, 1);
    assert_int_equal(seen_in.device.device_type, kDLCUDA);
    assert_int_equal(seen_out.device.device_type, kDLCUDA);
    mt_tensor_release(out);
    mt_tensor_release(x);
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register_errors),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_run_scale_rows),
        cmocka_unit_test(test_run_two_outputs_in_a_loop),
        cmocka_unit_test(test_run_sees_dltensors),
        cmocka_unit_test(test_run_failure),
        cmocka_unit_test(test_run_on_device),
    };
    return cmocka_run_group_tests(tests, setup, test_teardown_ctx);
}
