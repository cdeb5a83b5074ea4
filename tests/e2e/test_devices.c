/*
 * test_devices.c -- heterogeneous programs end to end: `with device("gpu")`
 * compiled in a context whose "gpu" is the test device (api_internal.h),
 * whose memory the host cannot touch. Checks the graph the compiler makes
 * (the copies realize_devices inserts, golden text), the numbers against C
 * loops in double, where results live, and the errors at the boundary.
 */
#include <math.h>

#include "test_util.h"

#include "api_internal.h"
#include "runtime/device.h"
#include "runtime/tensor.h"

static mt_context *tctx; /* "gpu" is the test device */

static int setup(void **s) {
    tctx = mt_context_create_testing(NULL, true);
    return tctx ? test_setup_ctx(s) : -1; /* test_ctx: a plain context */
}

static int teardown(void **s) {
    mt_context_destroy(tctx);
    return test_teardown_ctx(s);
}

static mt_kernel *compile_t(const char *src, const char *dump_after) {
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.dump_after = dump_after;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(tctx, src, &o, &d);
    if (!k) fail_msg("compile failed: %s", d.text);
    return k;
}

/* A CPU copy of t (any device), to read. */
static mt_tensor *to_host(const mt_tensor *t) {
    mt_tensor *h = mt_tensor_create(mt_tensor_dtype(t), mt_tensor_ndim(t), mt_tensor_shape(t));
    mt_dev_err e;
    assert_int_equal(mt_tensor_copy(h, t, &e), MT_OK);
    return h;
}

static bool on(const mt_tensor *t, int type) { return mt_tensor_device(t).type == type; }

static const char *CHAIN =
    "def f(a: Tensor((1000,), \"float32\"), b: Tensor((1000,), \"float32\")):\n"
    "    c = a + b\n"
    "    with device(\"gpu\"):\n"
    "        d = c * 2.0\n"
    "        e = d + a\n"
    "    g = e - 1.0\n"
    "    return g, d\n";

/* The copies are explicit in the graph; a fused kernel is one device's. */
static void test_chain_graph(void **s) {
    (void)s;
    mt_kernel *k = compile_t(CHAIN, "realize_devices");
    assert_text(mt_kernel_pass_dump(k, "realize_devices"),
                "@R.function\n"
                "def f(a: R.Tensor((1000,), dtype=\"float32\"), b: R.Tensor((1000,), dtype=\"float32\")):\n"
                "    with R.dataflow():\n"
                "        c = R.add(a, b)\n"
                "        c_test = R.to_vdevice(c, \"test:0\")\n"
                "        d: R.Tensor((1000,), dtype=\"float32\", vdevice=\"test:0\") = R.multiply(c_test, R.const(2.0, \"float32\"))\n"
                "        a_test = R.to_vdevice(a, \"test:0\")\n"
                "        e: R.Tensor((1000,), dtype=\"float32\", vdevice=\"test:0\") = R.add(d, a_test)\n"
                "        e_cpu = R.to_vdevice(e, \"cpu\")\n"
                "        g = R.subtract(e_cpu, R.const(1.0, \"float32\"))\n"
                "        R.output(d, g)\n"
                "    return (g, d)\n");
    const char *opt = mt_kernel_dump(k, MT_STAGE_GRAPH_OPT);
    assert_non_null(strstr(opt, "d, e = R.call_tir(cls.fused_multiply_add, (c_test, a_test), out_sinfo=["
                                "R.Tensor((1000,), dtype=\"float32\", vdevice=\"test:0\"), "
                                "R.Tensor((1000,), dtype=\"float32\", vdevice=\"test:0\")])"));
    assert_non_null(strstr(opt, "g = R.call_tir(cls.subtract, (e_cpu,)"));
    mt_kernel_release(k);
}

static void test_chain_runs(void **s) {
    (void)s;
    mt_kernel *k = compile_t(CHAIN, NULL);
    int64_t n = 1000;
    mt_tensor *a = mt_tensor_create(MT_FLOAT32, 1, &n), *b = mt_tensor_create(MT_FLOAT32, 1, &n);
    float *pa = mt_tensor_data(a), *pb = mt_tensor_data(b);
    for (int i = 0; i < n; i++) pa[i] = (float)i * 0.25f - 7.0f, pb[i] = 3.0f - (float)(i % 13);
    mt_tensor *args[2] = {a, b}, *res[2] = {NULL, NULL};
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args, 2, res, 2, &d), MT_OK);
    assert_true(on(res[0], MT_DEVICE_CPU)); /* g: computed on the CPU */
    assert_true(on(res[1], MT_DEVICE_TEST)); /* d: stays where it was made */
    mt_tensor *dh = to_host(res[1]);
    const float *g = mt_tensor_data(res[0]), *dd = mt_tensor_data(dh);
    for (int i = 0; i < n; i++) {
        double c = (double)pa[i] + pb[i], dv = c * 2.0, gv = dv + pa[i] - 1.0;
        assert_true(fabs(dd[i] - dv) <= 1e-5 * (1 + fabs(dv)));
        assert_true(fabs(g[i] - gv) <= 1e-5 * (1 + fabs(gv)));
    }
    /* an argument on the wrong device is refused, naming both */
    mt_tensor *at = mt_tensor_create_on(mt_context_test_device(tctx), MT_FLOAT32, 1, &n);
    mt_tensor *bad[2] = {at, b}, *r2[2] = {NULL, NULL};
    assert_int_equal(mt_kernel_run(k, bad, 2, r2, 2, &d), MT_ERR_INVALID_ARG);
    assert_string_equal(d.message, "argument 'a' is on test:0 but the kernel expects it on cpu");
    mt_tensor_release(at);
    mt_tensor_release(dh);
    mt_tensor_release(res[0]);
    mt_tensor_release(res[1]);
    mt_tensor_release(a);
    mt_tensor_release(b);
    mt_kernel_release(k);
}

/* A condition computed on the test device, an if and a run-time loop whose
 * body runs there, the loop counter copied to it each iteration. */
static const char *FLOW =
    "def f(x: Tensor((\"n\",), \"float32\"), k: int64):\n"
    "    with device(\"gpu\"):\n"
    "        pos = sum(x) > 0.0\n"
    "        y = x * 2.0\n"
    "    if pos:\n"
    "        y = y + 1.0\n"
    "    for i in range(k):\n"
    "        with device(\"gpu\"):\n"
    "            y = y * 0.5 + i\n"
    "    return y\n";

static void run_flow(mt_kernel *k, int64_t n, int64_t kk, double sign) {
    mt_tensor *x = mt_tensor_create(MT_FLOAT32, 1, &n), *kt = mt_tensor_create(MT_INT64, 0, NULL);
    float *px = mt_tensor_data(x);
    for (int i = 0; i < n; i++) px[i] = (float)(sign * (0.5 + (double)(i % 7)));
    *(int64_t *)mt_tensor_data(kt) = kk;
    mt_tensor *args[2] = {x, kt}, *res[1] = {NULL};
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args, 2, res, 1, &d), MT_OK);
    mt_tensor *h = to_host(res[0]);
    const float *py = mt_tensor_data(h);
    for (int i = 0; i < n; i++) {
        double y = px[i] * 2.0;
        if (sign > 0) y += 1.0;
        for (int64_t j = 0; j < kk; j++) y = y * 0.5 + (double)j;
        assert_true(fabs(py[i] - y) <= 1e-5 * (1 + fabs(y)));
    }
    mt_tensor_release(h);
    mt_tensor_release(res[0]);
    mt_tensor_release(x);
    mt_tensor_release(kt);
}

static void test_control_flow(void **s) {
    (void)s;
    mt_kernel *k = compile_t(FLOW, NULL);
    const char *opt = mt_kernel_dump(k, MT_STAGE_GRAPH_OPT);
    assert_non_null(strstr(opt, "i_test = R.to_vdevice(i, \"test:0\")"));
    assert_non_null(strstr(opt, "vdevice=\"test:0\""));
    int64_t sizes[] = {1, 7, 1000, 4097};
    for (int i = 0; i < 4; i++) {
        run_flow(k, sizes[i], 3, 1.0);  /* then-branch taken; the loop runs */
        run_flow(k, sizes[i], 0, -1.0); /* else-branch; the loop does not */
    }
    mt_kernel_release(k);
}

/* The memory plan has an arena per device; the test device's blocks all
 * come back after the runs. */
static void test_blocks_returned(void **s) {
    (void)s;
    mt_dev_test_stats before, after;
    mt_dev_test_get_stats(mt_context_test_device(tctx), &before);
    mt_kernel *k = compile_t(CHAIN, NULL);
    int64_t n = 1000;
    mt_tensor *a = mt_tensor_create(MT_FLOAT32, 1, &n), *b = mt_tensor_create(MT_FLOAT32, 1, &n);
    for (int rep = 0; rep < 3; rep++) {
        mt_tensor *args[2] = {a, b}, *res[2] = {NULL, NULL};
        mt_diag d;
        assert_int_equal(mt_kernel_run(k, args, 2, res, 2, &d), MT_OK);
        mt_tensor_release(res[0]);
        mt_tensor_release(res[1]);
    }
    mt_dev_test_get_stats(mt_context_test_device(tctx), &after);
    assert_int_equal(after.live_blocks, before.live_blocks);
    assert_true(after.launches >= before.launches + 3); /* the fused kernel ran there */
    mt_tensor_release(a);
    mt_tensor_release(b);
    mt_kernel_release(k);
}

/* A program placed only on the default device is the plain program; in
 * a plain context (no GPU), device("gpu") is refused. */
static void test_cpu_with_is_plain(void **s) {
    (void)s;
    mt_diag d = compile_err(CHAIN);
    assert_int_equal(d.status, MT_ERR_UNSUPPORTED);
    mt_kernel *k = compile_t("def f(a: Tensor((4,), \"float32\")):\n"
                             "    with device(\"cpu\"):\n"
                             "        b = a + a\n"
                             "    return b\n",
                             NULL);
    const char *opt = mt_kernel_dump(k, MT_STAGE_GRAPH_OPT);
    assert_null(strstr(opt, "to_vdevice"));
    assert_null(strstr(opt, "vdevice"));
    mt_kernel_release(k);
}

/* The "graph" dump (before realize_devices, which has not yet given the
 * values their devices) still says where each placed op runs. */
static void test_graph_dump_shows_placement(void **s) {
    (void)s;
    mt_kernel *k = compile_t(CHAIN, "cse");
    const char *g = mt_kernel_dump(k, MT_STAGE_GRAPH);
    assert_non_null(strstr(g, "d: R.Tensor((1000,), dtype=\"float32\", vdevice=\"test:0\") = R.multiply(c, "));
    assert_non_null(strstr(g, "e: R.Tensor((1000,), dtype=\"float32\", vdevice=\"test:0\") = R.add(d, a)"));
    assert_non_null(strstr(g, "g = R.subtract(e, "));
    assert_non_null(strstr(mt_kernel_pass_dump(k, "cse"), "d: R.Tensor((1000,), dtype=\"float32\", vdevice=\"test:0\")"));
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_graph),     cmocka_unit_test(test_chain_runs),
        cmocka_unit_test(test_control_flow),    cmocka_unit_test(test_blocks_returned),
        cmocka_unit_test(test_cpu_with_is_plain), cmocka_unit_test(test_graph_dump_shows_placement),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
