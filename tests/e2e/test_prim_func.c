/*
 * test_prim_func.c -- loop functions written in the source (@T.prim_func)
 * end to end: as the entry (the buffers stored into are the results, in
 * parameter order), called from a graph function in destination-passing
 * style (trailing outputs left out) and through R.call_tir, with symbolic
 * dims bound by the caller. Numerics against plain C loops.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

static mt_tensor *tensor_f32(int ndim, const int64_t *shape, unsigned seed) {
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, ndim, shape);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    float *p = mt_tensor_data(t);
    for (int64_t i = 0; i < n; i++) p[i] = (float)((i * 7919 + seed * 104729) % 1000) / 250.0f - 2.0f;
    return t;
}

static const float *F(const mt_tensor *t) { return mt_tensor_data(t); }

/* Runs k; results into outs (caller releases them and the args). */
static void run(mt_kernel *k, mt_tensor **args, int nargs, mt_tensor **outs, int nouts) {
    mt_diag d;
    for (int i = 0; i < nouts; i++) outs[i] = NULL;
    if (test_kernel_run(k, args, nargs, outs, nouts, &d) != MT_OK) fail_msg("run failed:\n%s", d.text);
}

static void release(mt_tensor **ts, int n) {
    for (int i = 0; i < n; i++) mt_tensor_release(ts[i]);
}

static const char custom_add[] =
    "@T.prim_func\n"
    "def custom_add(x: T.Buffer((2, 3), \"float32\"), y: T.Buffer((2, 3), \"float32\"),\n"
    "               out: T.Buffer((2, 3), \"float32\")):\n"
    "    for i, j in T.grid(2, 3):\n"
    "        with T.block(\"add\"):\n"
    "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
    "            out[vi, vj] = x[vi, vj] + y[vi, vj]\n"
    "\n";

/* DSL.md §2: main(a, b) = custom_add(a, a + b), both call forms. */
static void test_call_custom_add(void **state) {
    (void)state;
    const char *mains[2] = {
        "def main(a: Tensor((2, 3), \"float32\"), b: Tensor((2, 3), \"float32\")):\n"
        "    s = a + b\n"
        "    return custom_add(a, s)\n",
        "def main(a: Tensor((2, 3), \"float32\"), b: Tensor((2, 3), \"float32\")):\n"
        "    s = a + b\n"
        "    return R.call_tir(custom_add, (a, s), out_sinfo=Tensor((2, 3), \"float32\"))\n",
    };
    for (int m = 0; m < 2; m++) {
        char src[2048];
        snprintf(src, sizeof src, "%s%s", custom_add, mains[m]);
        mt_kernel *k = compile_ok(src);
        /* custom_add is elementwise: fused with the add before it */
        const char *g = mt_kernel_dump(k, MT_STAGE_GRAPH_OPT);
        assert_non_null(strstr(g, "R.call_tir(cls.fused_add_custom_add, (a, b), "));
        assert_int_equal(mt_kernel_num_params(k), 2);
        int64_t sh[2] = {2, 3};
        mt_tensor *args[2] = {tensor_f32(2, sh, 1), tensor_f32(2, sh, 2)}, *out;
        run(k, args, 2, &out, 1);
        for (int i = 0; i < 6; i++) assert_true(F(out)[i] == F(args[0])[i] + (F(args[0])[i] + F(args[1])[i]));
        release(args, 2);
        mt_tensor_release(out);
        mt_kernel_release(k);
    }
}

/* The entry: a matmul with T.init over symbolic dims, against C. */
static void test_entry_matmul(void **state) {
    (void)state;
    mt_kernel *k = compile_ok(
        "@T.prim_func\n"
        "def mm(A: T.Buffer((\"n\", 24), \"float32\"), B: T.Buffer((24, \"m\"), \"float32\"),\n"
        "       C: T.Buffer((\"n\", \"m\"), \"float32\")):\n"
        "    for i, j, k in T.grid(n, m, 24):\n"
        "        with T.block(\"C\"):\n"
        "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
        "            with T.init():\n"
        "                C[vi, vj] = 0.0\n"
        "            C[vi, vj] += A[vi, vk] * B[vk, vj]\n");
    assert_int_equal(mt_kernel_num_params(k), 2);
    int64_t n = 37, m = 45;
    int64_t sa[2] = {n, 24}, sb[2] = {24, m};
    mt_tensor *args[2] = {tensor_f32(2, sa, 3), tensor_f32(2, sb, 4)}, *c;
    run(k, args, 2, &c, 1);
    assert_int_equal(mt_tensor_shape(c)[0], n);
    assert_int_equal(mt_tensor_shape(c)[1], m);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
            float acc = 0;
            for (int q = 0; q < 24; q++) acc += F(args[0])[i * 24 + q] * F(args[1])[q * m + j];
            assert_true(fabsf(F(c)[i * m + j] - acc) <= 1e-4f * (1 + fabsf(acc)));
        }
    release(args, 2);
    mt_tensor_release(c);
    mt_kernel_release(k);
}

/* The entry's results are the buffers it stores into, in parameter order,
 * wherever they are: a row sum and a row max written before the input. */
static void test_entry_reduction_outputs_first(void **state) {
    (void)state;
    mt_kernel *k = compile_ok(
        "@T.prim_func\n"
        "def rows(total: T.Buffer((\"r\",), \"float32\"), x: T.Buffer((\"r\", 19), \"float32\"),\n"
        "         top: T.Buffer((\"r\",), \"float32\")):\n"
        "    for i in range(r):\n"
        "        for j in range(19):\n"
        "            with T.block(\"sum\"):\n"
        "                vi = T.axis.spatial(r, i)\n"
        "                vj = T.axis.reduce(19, j)\n"
        "                with T.init():\n"
        "                    total[vi] = T.float32(0)\n"
        "                total[vi] = total[vi] + x[vi, vj]\n"
        "    for i in range(r):\n"
        "        m = x[i, 0]\n"
        "        top[i] = m\n"
        "        for j in range(1, 19):\n"
        "            top[i] = T.max(top[i], x[i, j])\n");
    assert_int_equal(mt_kernel_num_params(k), 1);
    int64_t r = 11, sx[2] = {r, 19};
    mt_tensor *x = tensor_f32(2, sx, 5), *outs[2];
    run(k, &x, 1, outs, 2);
    for (int64_t i = 0; i < r; i++) {
        float s = 0, mx = F(x)[i * 19];
        for (int j = 0; j < 19; j++) s += F(x)[i * 19 + j], mx = fmaxf(mx, F(x)[i * 19 + j]);
        assert_true(fabsf(F(outs[0])[i] - s) <= 1e-4f * (1 + fabsf(s)));
        assert_true(F(outs[1])[i] == mx);
    }
    mt_tensor_release(x);
    release(outs, 2);
    mt_kernel_release(k);
}

/* Without blocks: explicit loop kinds, an if/else, a let, intrinsics. */
static void test_entry_lowered_style(void **state) {
    (void)state;
    mt_kernel *k = compile_ok(
        "@T.prim_func\n"
        "def act(x: T.Buffer((64,), \"float32\"), y: T.Buffer((64,), \"float32\")):\n"
        "    for i in T.parallel(4):\n"
        "        for j in T.serial(16):\n"
        "            v = x[i * 16 + j]\n"
        "            if v > 0.0:\n"
        "                y[i * 16 + j] = T.exp(v) - 1.0\n"
        "            else:\n"
        "                y[i * 16 + j] = T.if_then_else(v < -1.0, T.float32(-1), v * 0.5)\n");
    int64_t n = 64;
    mt_tensor *x = tensor_f32(1, &n, 6), *y;
    run(k, &x, 1, &y, 1);
    for (int i = 0; i < 64; i++) {
        float v = F(x)[i], want = v > 0 ? expf(v) - 1 : (v < -1 ? -1 : v * 0.5f);
        assert_true(fabsf(F(y)[i] - want) <= 1e-5f * (1 + fabsf(want)));
    }
    mt_tensor_release(x);
    mt_tensor_release(y);
    mt_kernel_release(k);
}

/* T.Shuffle: a 4 x 4 transpose of vector lets in two rounds of two-vector
 * shuffles, a reversal of one vector, and one lane taken as a scalar; a
 * vector let used as a vector (the dump prints it the same way). On the
 * CPU (LLVM's shufflevector) and, scalarized, in CUDA C. */
static void test_shuffle(void **state) {
    (void)state;
    mt_kernel *k = compile_ok(
        "@T.prim_func\n"
        "def tr(x: T.Buffer((16,), \"float32\"), y: T.Buffer((16,), \"float32\"), z: T.Buffer((5,), \"float32\")):\n"
        "    r0 = x[T.Ramp(0, 1, 4)]\n"
        "    r1 = x[T.Ramp(4, 1, 4)]\n"
        "    r2 = x[T.Ramp(8, 1, 4)]\n"
        "    r3 = x[T.Ramp(12, 1, 4)]\n"
        "    a0 = T.Shuffle([r0, r1], [0, 4, 2, 6])\n"
        "    a1 = T.Shuffle([r0, r1], [1, 5, 3, 7])\n"
        "    a2 = T.Shuffle([r2, r3], [0, 4, 2, 6])\n"
        "    a3 = T.Shuffle([r2, r3], [1, 5, 3, 7])\n"
        "    y[T.Ramp(0, 1, 4)] = T.Shuffle([a0, a2], [0, 1, 4, 5])\n"
        "    y[T.Ramp(4, 1, 4)] = T.Shuffle([a1, a3], [0, 1, 4, 5])\n"
        "    y[T.Ramp(8, 1, 4)] = T.Shuffle([a0, a2], [2, 3, 6, 7])\n"
        "    y[T.Ramp(12, 1, 4)] = T.Shuffle([a1, a3], [2, 3, 6, 7])\n"
        "    z[T.Ramp(0, 1, 4)] = T.Shuffle([r3], [3, 2, 1, 0]) * 2.0\n"
        "    z[4] = T.Shuffle([r1], [2]) + 1.0\n");
    const char *dump = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(dump, "T.Shuffle([r0, r1], [0, 4, 2, 6])"));
    int64_t n = 16;
    mt_tensor *x = tensor_f32(1, &n, 3), *out[2];
    run(k, &x, 1, out, 2);
    const float *xv = F(x);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) assert_true(F(out[0])[i * 4 + j] == xv[j * 4 + i]);
    for (int i = 0; i < 4; i++) assert_true(F(out[1])[i] == xv[15 - i] * 2.0f);
    assert_true(F(out[1])[4] == xv[6] + 1.0f);
    mt_tensor_release(x);
    release(out, 2);
    mt_kernel_release(k);
}

/* Loops clamped to a tail (what split prints: the last tile's extent a
 * T.min) and a block variable declared over more than its loop reaches
 * stay in bounds although interval arithmetic over their declared ranges
 * leaves the buffer: they compile (only a provably out-of-bounds index is
 * a compile error), get run-time checks, and compute the right values. */
static void test_clamped_tail(void **state) {
    (void)state;
    mt_kernel *k = compile_ok(
        "@T.prim_func\n"
        "def tail(x: T.Buffer((60,), \"float32\"), y: T.Buffer((60,), \"float32\")):\n"
        "    for i0 in range(4):\n"
        "        for i1 in range(T.min(16, 60 - i0 * 16)):\n"
        "            with T.block(\"b\"):\n"
        "                vo = T.axis.spatial(4, i0)\n"
        "                vi = T.axis.spatial(16, i1)\n"
        "                y[vo * 16 + vi] = x[vo * 16 + vi] * 2.0\n");
    /* not proven in bounds at compile time: checked at run time */
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR), "T.check_bounds("));
    int64_t n = 60;
    mt_tensor *x = tensor_f32(1, &n, 7), *y;
    run(k, &x, 1, &y, 1);
    for (int i = 0; i < 60; i++) assert_true(F(y)[i] == F(x)[i] * 2.0f);
    mt_tensor_release(x);
    mt_tensor_release(y);
    mt_kernel_release(k);
}

/* A call binds the loop function's symbolic dim to the caller's (its own
 * name, another name, a constant): one function per binding. */
static void test_call_symbolic(void **state) {
    (void)state;
    mt_kernel *k = compile_ok(
        "@T.prim_func\n"
        "def scale(x: T.Buffer((\"n\", 3), \"float32\"), out: T.Buffer((\"n\", 3), \"float32\")):\n"
        "    for i, j in T.grid(n, 3):\n"
        "        with T.block(\"s\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            out[vi, vj] = x[vi, vj] * T.Cast(\"float32\", vi + 1)\n"
        "\n"
        "def main(a: Tensor((\"k\", 3), \"float32\"), b: Tensor((4, 3), \"float32\")):\n"
        "    p = scale(a)\n"
        "    q = scale(b)\n"
        "    r = scale(b + 1.0)\n"
        "    return p, q + r\n");
    /* before fusion (which takes these elementwise functions) */
    const char *g = mt_kernel_dump(k, MT_STAGE_GRAPH);
    assert_non_null(strstr(g, "R.call_tir(cls.scale, (a,), out_sinfo=R.Tensor((\"k\", 3)"));
    assert_non_null(strstr(g, "R.call_tir(cls.scale_1, (b,), out_sinfo=R.Tensor((4, 3)"));
    assert_non_null(strstr(g, "R.call_tir(cls.scale_1, (lv2,)"));
    assert_null(strstr(g, "scale_2"));
    int64_t sa[2] = {5, 3}, sb[2] = {4, 3};
    mt_tensor *args[2] = {tensor_f32(2, sa, 7), tensor_f32(2, sb, 8)}, *outs[2];
    run(k, args, 2, outs, 2);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 3; j++) assert_true(F(outs[0])[i * 3 + j] == F(args[0])[i * 3 + j] * (float)(i + 1));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) {
            float b = F(args[1])[i * 3 + j];
            assert_true(fabsf(F(outs[1])[i * 3 + j] - (b * (i + 1) + (b + 1.0f) * (i + 1))) <= 1e-5f);
        }
    release(args, 2);
    release(outs, 2);
    mt_kernel_release(k);
}

/* Two outputs, unpacked; an entry named by the options among graph functions. */
static void test_two_outputs_and_entry_option(void **state) {
    (void)state;
    const char *src =
        "@T.prim_func\n"
        "def split(x: T.Buffer((8,), \"float32\"), lo: T.Buffer((8,), \"float32\"), hi: T.Buffer((8,), \"float32\")):\n"
        "    for i in range(8):\n"
        "        lo[i] = T.min(x[i], 0.0)\n"
        "        hi[i] = T.max(x[i], 0.0)\n"
        "\n"
        "def main(a: Tensor((8,), \"float32\")):\n"
        "    l, h = split(a)\n"
        "    return h - l\n";
    int64_t n = 8;
    for (int entry = 0; entry < 2; entry++) {
        mt_compile_options o;
        mt_compile_options_init(&o);
        o.entry = entry ? "split" : NULL;
        mt_kernel *k = compile_ok_opts(src, &o);
        mt_tensor *x = tensor_f32(1, &n, 9), *outs[2];
        run(k, &x, 1, outs, entry ? 2 : 1);
        for (int i = 0; i < 8; i++) {
            float v = F(x)[i];
            if (entry) {
                assert_true(F(outs[0])[i] == fminf(v, 0) && F(outs[1])[i] == fmaxf(v, 0));
            } else {
                assert_true(F(outs[0])[i] == fabsf(v));
            }
        }
        mt_tensor_release(x);
        release(outs, entry ? 2 : 1);
        mt_kernel_release(k);
    }
}

/* A called loop function stays a kernel of its own, even when a pasted dump
 * says it is elementwise: the ops around it fuse without it. */
static void test_call_not_fused(void **state) {
    (void)state;
    mt_kernel *k = compile_ok(
        "@T.prim_func\n"
        "def twice(x: T.Buffer((8,), \"float32\"), y: T.Buffer((8,), \"float32\")):\n"
        "    T.func_attr({\"op_pattern\": \"elemwise\"})\n"
        "    for i in range(8):\n"
        "        y[i] = x[i] * 2.0\n"
        "\n"
        "def main(a: Tensor((8,), \"float32\")):\n"
        "    return exp(twice(exp(a) + 1.0)) - 1.0\n");
    const char *g = mt_kernel_dump(k, MT_STAGE_GRAPH_OPT);
    assert_non_null(strstr(g, "R.call_tir(cls.twice, "));
    assert_non_null(strstr(g, "cls.fused_exp_add, "));
    assert_non_null(strstr(g, "cls.fused_exp_subtract, "));
    int64_t n = 8;
    mt_tensor *x = tensor_f32(1, &n, 10), *y;
    run(k, &x, 1, &y, 1);
    for (int i = 0; i < 8; i++) {
        float want = expf((expf(F(x)[i]) + 1.0f) * 2.0f) - 1.0f;
        assert_true(fabsf(F(y)[i] - want) <= 1e-5f * (1 + fabsf(want)));
    }
    mt_tensor_release(x);
    mt_tensor_release(y);
    mt_kernel_release(k);
}

/* Loop functions whose pattern is inferred (broadcast, reduction) take
 * part in fusion; one a schedule names stays as written. */
static void test_call_fused(void **state) {
    (void)state;
    static const char prims[] =
        "@T.prim_func\n"
        "def bias_add(x: T.Buffer((5, 7), \"float32\"), b: T.Buffer((7,), \"float32\"),\n"
        "             out: T.Buffer((5, 7), \"float32\")):\n"
        "    for i, j in T.grid(5, 7):\n"
        "        with T.block(\"bias\"):\n"
        "            vi, vj = T.axis.remap(\"SS\", [i, j])\n"
        "            out[vi, vj] = x[vi, vj] + b[vj]\n"
        "\n"
        "@T.prim_func\n"
        "def row_sum(x: T.Buffer((5, 7), \"float32\"), out: T.Buffer((5,), \"float32\")):\n"
        "    for i, k in T.grid(5, 7):\n"
        "        with T.block(\"sum\"):\n"
        "            vi, vk = T.axis.remap(\"SR\", [i, k])\n"
        "            with T.init():\n"
        "                out[vi] = T.float32(0)\n"
        "            out[vi] = out[vi] + x[vi, vk]\n"
        "\n"
        "def main(a: Tensor((5, 7), \"float32\"), b: Tensor((7,), \"float32\")):\n"
        "    return row_sum(exp(relu(bias_add(a, b))))\n";
    for (int sched = 0; sched < 2; sched++) {
        char src[4096];
        const char *gpu = "\n@T.schedule(bias_add)\ndef s(sch):\n"
                          "    i, j = sch.get_loops(sch.get_block(\"bias\"))\n"
                          "    sch.bind(i, \"blockIdx.x\")\n"
                          "    sch.bind(j, \"threadIdx.x\")\n";
        snprintf(src, sizeof src, "%s%s", prims,
                 !sched ? "" : test_gpu_target() ? gpu : "\n@T.schedule(bias_add)\ndef s(sch):\n    pass\n");
        mt_kernel *k = compile_ok(src);
        const char *g = mt_kernel_dump(k, MT_STAGE_GRAPH_OPT);
        if (sched) {
            assert_non_null(strstr(g, "R.call_tir(cls.bias_add, (a, b), "));
            assert_non_null(strstr(g, "cls.fused_relu_exp_row_sum, "));
        } else {
            assert_non_null(strstr(g, "R.call_tir(cls.fused_bias_add_relu_exp_row_sum, (a, b), "));
        }
        int64_t sa[2] = {5, 7}, sb = 7;
        mt_tensor *args[2] = {tensor_f32(2, sa, 11), tensor_f32(1, &sb, 12)}, *out;
        run(k, args, 2, &out, 1);
        for (int i = 0; i < 5; i++) {
            double want = 0;
            for (int j = 0; j < 7; j++) {
                double v = (double)F(args[0])[i * 7 + j] + F(args[1])[j];
                want += exp(v > 0 ? v : 0);
            }
            assert_true(fabs(F(out)[i] - want) <= 1e-5 * want);
        }
        release(args, 2);
        mt_tensor_release(out);
        mt_kernel_release(k);
    }
}

/* One loop function called twice in a row, the two calls fused into one
 * function: the second call's body gets variables of its own (both had
 * bound the same loop 'i': "2 loops over 'i'", an internal error found by
 * fuzz_graph). */
static void test_call_twice_fused(void **state) {
    (void)state;
    mt_kernel *k = compile_ok("@T.prim_func\n"
                              "def scale(A: T.Buffer((\"n\",), \"float32\"), B: T.Buffer((\"n\",), \"float32\")):\n"
                              "    for i in range(n):\n"
                              "        with T.block(\"B\"):\n"
                              "            vi = T.axis.spatial(n, i)\n"
                              "            B[vi] = A[vi] * T.float32(2)\n"
                              "\n"
                              "def main(x: Tensor((64,), \"float32\")):\n"
                              "    a = scale(x)\n"
                              "    b = scale(a)\n"
                              "    return a, b\n");
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_GRAPH_OPT), "fused_scale_scale"));
    int64_t n = 64;
    mt_tensor *args[1] = {tensor_f32(1, &n, 13)}, *out[2];
    run(k, args, 1, out, 2);
    for (int i = 0; i < 64; i++) {
        assert_true(F(out[0])[i] == 2.0f * F(args[0])[i]);
        assert_true(F(out[1])[i] == 4.0f * F(args[0])[i]);
    }
    release(args, 1);
    release(out, 2);
    mt_kernel_release(k);
}

/* A dump pasted back compiles to the same numbers: the "tir" dump of
 * layer_norm(x, g, b) * 2.0 (one fused loop function in block form, with
 * reductions, allocations and a symbolic dim) compiled as the entry. */
static void test_dump_compiles_back(void **state) {
    (void)state;
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((\"n\", 32), \"float32\"), g: Tensor((32,), \"float32\"), b: Tensor((32,), \"float32\")):\n"
        "    return layer_norm(x, g, b) * 2.0\n");
    const char *dump = mt_kernel_dump(k, MT_STAGE_TIR);
    assert_non_null(strstr(dump, "def fused_layer_norm_multiply("));
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.entry = "fused_layer_norm_multiply";
    mt_kernel *k2 = compile_ok_opts(dump, &o);
    assert_int_equal(mt_kernel_num_params(k2), 3);
    int64_t sx[2] = {9, 32}, sg = 32;
    mt_tensor *args[3] = {tensor_f32(2, sx, 11), tensor_f32(1, &sg, 12), tensor_f32(1, &sg, 13)}, *y1, *y2;
    run(k, args, 3, &y1, 1);
    run(k2, args, 3, &y2, 1);
    for (int i = 0; i < 9 * 32; i++) assert_true(F(y1)[i] == F(y2)[i]);
    release(args, 3);
    mt_tensor_release(y1);
    mt_tensor_release(y2);
    mt_kernel_release(k);
    mt_kernel_release(k2);
}

/* Placed diagnostics of calls: arity, dtype, shape, out_sinfo. */
static void test_call_errors(void **state) {
    (void)state;
    static const struct { const char *main; int line, col; const char *msg; } cases[] = {
        {"def main(a: Tensor((2, 3), \"float32\")):\n    return custom_add(a, a, a)\n", 10, 22,
         "'custom_add' has 3 buffer parameters: pass its inputs and leave out its outputs (the trailing buffers it stores into), got 3 arguments"},
        {"def main(a: Tensor((2, 3), \"int32\")):\n    return custom_add(a, a)\n", 10, 23,
         "argument 'x' of 'custom_add' must be R.Tensor((2, 3), dtype=\"float32\"), got int32 (2, 3)"},
        {"def main(a: Tensor((3, 2), \"float32\")):\n    return custom_add(a, a)\n", 10, 23,
         "argument 'x' of 'custom_add' has shape (3, 2), expected (2, 3)"},
        {"def main(a: Tensor((2, 3), \"float32\")):\n    return custom_add(a)\n", 10, 22,
         "'custom_add' is called with 1 inputs, so 'y' would be an output, but 'custom_add' never stores into it"},
        {"def main(a: Tensor((2, 3), \"float32\")):\n"
         "    return R.call_tir(custom_add, (a, a), out_sinfo=Tensor((3, 2), \"float32\"))\n", 10, 59,
         "out_sinfo says R.Tensor((3, 2), dtype=\"float32\"), but output 'out' of 'custom_add' is R.Tensor((2, 3), dtype=\"float32\")"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[2048];
        snprintf(src, sizeof src, "%s%s", custom_add, cases[i].main);
        mt_diag d = compile_err(src);
        if (d.line != cases[i].line || d.col != cases[i].col || strcmp(d.message, cases[i].msg) != 0)
            fail_msg("case %zu: got %d:%d %s", i, d.line, d.col, d.message);
    }
}

/* Loop functions the compact_buffers pass must leave alone (found in
 * review): each reads X where compacting it would change the result. */
static void run_vals(const char *src, const float *vals, int64_t n, mt_tensor **outs, int nouts) {
    mt_kernel *k = compile_ok(src);
    mt_tensor *v = mt_tensor_create(MT_FLOAT32, 1, &n);
    for (int64_t i = 0; i < n; i++) ((float *)mt_tensor_data(v))[i] = vals[i];
    run(k, &v, 1, outs, nouts);
    mt_tensor_release(v);
    mt_kernel_release(k);
}

static void test_compact_left_alone(void **state) {
    (void)state;
    mt_tensor *o[2];
    /* the writer's offset is a load that changes before the reader runs */
    static const float v2[] = {1, 2};
    run_vals("@T.prim_func\n"
             "def f(vals: T.Buffer((2,), \"float32\"), out: T.Buffer((1,), \"float32\")):\n"
             "    A = T.alloc_buffer((1,), \"int64\")\n"
             "    X = T.alloc_buffer((2,), \"float32\")\n"
             "    A[0] = T.int64(0)\n"
             "    out[0] = T.float32(0)\n"
             "    for i in range(2):\n"
             "        for v in range(1):\n"
             "            X[A[0] % 2 + v] = vals[i]\n"
             "        A[0] = 1 - A[0]\n"
             "        if i == 1:\n"
             "            out[0] = X[A[0] % 2]\n",
             v2, 2, o, 1);
    assert_true(F(o[0])[0] == 1.0f);
    release(o, 1);
    /* a let outside the writer's sequence reads X (last iteration's values) */
    static const float v3[] = {10, 20, 30};
    run_vals("@T.prim_func\n"
             "def f(vals: T.Buffer((3,), \"float32\"), out: T.Buffer((3,), \"float32\")):\n"
             "    X = T.alloc_buffer((4,), \"float32\")\n"
             "    for i in range(3):\n"
             "        t = X[0]\n"
             "        for v in range(2):\n"
             "            X[v] = vals[i] + T.float32(1)\n"
             "        for r in range(1, 2):\n"
             "            out[i] = X[r] + T.Select(i > 0, t, T.float32(0))\n",
             v3, 3, o, 1);
    assert_true(F(o[0])[0] == 11.0f && F(o[0])[1] == 32.0f && F(o[0])[2] == 52.0f);
    release(o, 1);
    /* a writer loop that indexes nothing runs 0 times in the second
     * iteration: X keeps the first iteration's values */
    static const float v4[] = {1, 2, 3, 4};
    run_vals("@T.prim_func\n"
             "def f(vals: T.Buffer((4,), \"float32\"), out: T.Buffer((8,), \"float32\"), o2: T.Buffer((3,), \"float32\")):\n"
             "    X = T.alloc_buffer((8,), \"float32\")\n"
             "    for i in range(2):\n"
             "        for v in range(4):\n"
             "            for w in range(T.min(1, 1 - i)):\n"
             "                X[v] = vals[v] + T.float32(1)\n"
             "        for r in range(4):\n"
             "            out[i * 4 + r] = X[r]\n"
             "        for u in T.unroll(T.min(2, 3 - i * 2)):\n"
             "            o2[i * 2 + u] = vals[u]\n",
             v4, 4, o, 2);
    for (int i = 0; i < 8; i++) assert_true(F(o[0])[i] == v4[i % 4] + 1.0f);
    assert_true(F(o[1])[0] == 1.0f && F(o[1])[1] == 2.0f && F(o[1])[2] == 1.0f);
    release(o, 2);
}

/* What compact_buffers takes (checked in the scheduled TIR, and against
 * the values): a later item that stores into the box (a reduction after
 * its init), a writer whose index is the digits of a split (a * 4 + b),
 * the buffer then allocated once outside serial loops and per iteration
 * of a parallel one; a store outside the box leaves X whole. The values
 * on every target; the structure on the CPU (a GPU compacts only shared
 * buffers). */
static const char *compacted(const char *src, const float *vals, int64_t n, mt_tensor **outs) {
    mt_kernel *k = compile_ok(src);
    mt_tensor *v = mt_tensor_create(MT_FLOAT32, 1, &n);
    for (int64_t i = 0; i < n; i++) ((float *)mt_tensor_data(v))[i] = vals[i];
    run(k, &v, 1, outs, 1);
    mt_tensor_release(v);
    static char text[16384];
    snprintf(text, sizeof text, "%s", mt_kernel_dump(k, MT_STAGE_TIR_SCHED));
    mt_kernel_release(k);
    return text;
}

static void test_compact_taken(void **state) {
    (void)state;
    mt_tensor *o[1];
    static const float v[] = {1, 2, 3, 4, 5, 6, 7, 8};
    /* init, update (loads and stores), read: X is 4 floats, allocated before the loop */
    const char *t = compacted("@T.prim_func\n"
                              "def f(vals: T.Buffer((8,), \"float32\"), out: T.Buffer((8,), \"float32\")):\n"
                              "    X = T.alloc_buffer((8,), \"float32\")\n"
                              "    for i in range(2):\n"
                              "        for c in range(4):\n"
                              "            X[i * 4 + c] = T.float32(0)\n"
                              "        for k in range(3):\n"
                              "            for c in range(4):\n"
                              "                X[i * 4 + c] = X[i * 4 + c] + vals[i * 4 + c] * T.float32(k + 1)\n"
                              "        for c in range(4):\n"
                              "            out[i * 4 + c] = X[i * 4 + c]\n",
                              v, 8, o);
    const char *al = strstr(t, "X = T.alloc_buffer((4,)"), *loop = strstr(t, "for i in range(2)");
    bool cpu = !test_gpu_target(); /* (on a GPU only shared buffers are compacted) */
    if (cpu && (!al || !loop || al > loop)) fail_msg("X not compacted before the loop:\n%s", t);
    for (int i = 0; i < 8; i++) assert_true(F(o[0])[i] == v[i] * 6.0f);
    release(o, 1);
    /* the digits of a split, under a parallel loop: X per iteration */
    t = compacted("@T.prim_func\n"
                  "def f(vals: T.Buffer((8,), \"float32\"), out: T.Buffer((16,), \"float32\")):\n"
                  "    X = T.alloc_buffer((2, 16), \"float32\")\n"
                  "    for i in T.parallel(2):\n"
                  "        for a in range(2):\n"
                  "            for b in range(4):\n"
                  "                X[i, a * 4 + b] = vals[a * 4 + b] + T.float32(i)\n"
                  "        for c in range(8):\n"
                  "            out[i * 8 + c] = X[i, 7 - c]\n",
                  v, 8, o);
    if (cpu && !strstr(t, "X = T.alloc_buffer((8,)") && !strstr(t, "X = T.alloc_buffer((1, 8)"))
        fail_msg("X not compacted to 8:\n%s", t);
    for (int i = 0; i < 16; i++) assert_true(F(o[0])[i] == v[7 - i % 8] + (float)(i / 8));
    release(o, 1);
    /* a later store outside the writer's box: X whole */
    t = compacted("@T.prim_func\n"
                  "def f(vals: T.Buffer((8,), \"float32\"), out: T.Buffer((8,), \"float32\")):\n"
                  "    X = T.alloc_buffer((8,), \"float32\")\n"
                  "    for i in range(2):\n"
                  "        for c in range(2):\n"
                  "            X[i * 4 + c] = vals[i * 4 + c]\n"
                  "        for c in range(2):\n"
                  "            X[i * 4 + c + 2] = X[i * 4 + c] * T.float32(2)\n"
                  "        for c in range(4):\n"
                  "            out[i * 4 + c] = X[i * 4 + c]\n",
                  v, 8, o);
    if (cpu && !strstr(t, "X = T.alloc_buffer((8,)")) fail_msg("X compacted past its writer's box:\n%s", t);
    for (int i = 0; i < 8; i++) assert_true(F(o[0])[i] == (i % 4 < 2 ? v[i] : 2 * v[i - 2]));
    release(o, 1);    /* a stencil: reads at constant offsets from the writer's part, within
     * the box (6 elements per iteration for 4 outputs of 3 taps); one tap
     * further (offset 3 reaches element 6) leaves X whole */
    for (int far = 0; far < 2; far++) {
        char src[1024];
        snprintf(src, sizeof src,
                 "@T.prim_func\n"
                 "def f(vals: T.Buffer((8,), \"float32\"), out: T.Buffer((8,), \"float32\")):\n"
                 "    X = T.alloc_buffer((11,), \"float32\")\n"
                 "    for i in range(2):\n"
                 "        for c in range(6):\n"
                 "            X[i * 4 + c] = T.float32(i * 4 + c)\n"
                 "        for c in range(4):\n"
                 "            out[i * 4 + c] = X[i * 4 + c] + X[i * 4 + c + 1] + X[i * 4 + c + %d]\n",
                 far ? 3 : 2);
        t = compacted(src, v, 8, o);
        const char *want = far ? "X = T.alloc_buffer((11,)" : "X = T.alloc_buffer((6,)";
        if (cpu && !strstr(t, want)) fail_msg("stencil, offset %d: want %s in:\n%s", far ? 3 : 2, want, t);
        if (!far)
            for (int j = 0; j < 8; j++) assert_true(F(o[0])[j] == (float)(3 * j + 3));
        release(o, 1);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call_custom_add),
        cmocka_unit_test(test_entry_matmul),
        cmocka_unit_test(test_entry_reduction_outputs_first),
        cmocka_unit_test(test_entry_lowered_style),
        cmocka_unit_test(test_shuffle),
        cmocka_unit_test(test_clamped_tail),
        cmocka_unit_test(test_call_symbolic),
        cmocka_unit_test(test_two_outputs_and_entry_option),
        cmocka_unit_test(test_call_not_fused),
        cmocka_unit_test(test_call_fused),
        cmocka_unit_test(test_call_twice_fused),
        cmocka_unit_test(test_dump_compiles_back),
        cmocka_unit_test(test_call_errors),
        cmocka_unit_test(test_compact_left_alone),
        cmocka_unit_test(test_compact_taken),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
