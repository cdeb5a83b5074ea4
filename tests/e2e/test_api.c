/*
 * test_api.c -- the public API's contract: misuse gives a status and a
 * message (never a crash), introspection, dumps, names, tensors.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "test_util.h"

static const char *ADD =
    "def add(a: Tensor((2, 3), \"float32\"), b: Tensor((2, 3), \"float32\")):\n"
    "    out = a + b\n"
    "    out = out + a\n"
    "    return out\n";

static mt_tensor *ones(mt_dtype dt, int ndim, const int64_t *shape) {
    mt_tensor *t = mt_tensor_create(dt, ndim, shape);
    assert_non_null(t);
    if (dt == MT_FLOAT32)
        for (int64_t i = 0; i < mt_tensor_numel(t); i++) ((float *)mt_tensor_data(t))[i] = 1;
    return t;
}

static void test_null_arguments(void **s) {
    mt_diag d;
    assert_null(mt_jit_compile(NULL, ADD, NULL, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.message, "context is NULL"));
    assert_null(mt_jit_compile(test_ctx, NULL, NULL, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_null(mt_jit_compile(test_ctx, "def f(:", NULL, NULL)); /* diag may be NULL */
    assert_int_equal(mt_kernel_run(NULL, NULL, 0, NULL, 0, &d), MT_ERR_INVALID_ARG);
    mt_kernel_release(NULL);
    mt_kernel_retain(NULL);
    mt_context_destroy(NULL);
    mt_tensor_release(NULL);
    assert_null(mt_kernel_dump(NULL, MT_STAGE_AST));
    assert_int_equal(mt_kernel_num_params(NULL), -1);
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.opt_level = 7;
    assert_null(mt_jit_compile(test_ctx, ADD, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
}

static void test_the_issue_example(void **s) {
    mt_kernel *k = compile_ok(ADD);
    int64_t shape[2] = {2, 3};
    mt_tensor *args[2] = {ones(MT_FLOAT32, 2, shape), ones(MT_FLOAT32, 2, shape)};
    mt_tensor *out = NULL;
    assert_int_equal(mt_kernel_run(k, args, 2, &out, 1, NULL), MT_OK);
    for (int i = 0; i < 6; i++) assert_true(((float *)mt_tensor_data(out))[i] == 3.0f);
    /* graph-opt: exactly one call_tir, to the fused function */
    const char *g = mt_kernel_dump(k, MT_STAGE_GRAPH_OPT);
    assert_non_null(g);
    const char *first = strstr(g, "R.call_tir(cls.fused_add_add, (a, b)");
    assert_non_null(first);
    assert_null(strstr(first + 1, "R.call_tir"));
    /* tir: one loop nest computing a + b + a */
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR);
    assert_non_null(t);
    assert_non_null(strstr(t, "a[v0, v1] + b[v0, v1] + a[v0, v1]"));
    const char *grid = strstr(t, "T.grid(");
    assert_non_null(grid);
    assert_null(strstr(grid + 1, "T.grid("));
    mt_tensor_release(out);
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_kernel_release(k);
}

static void test_dumps(void **s) {
    mt_kernel *k = compile_ok(ADD);
    for (int st = 0; st < MT_STAGE_COUNT_; st++) {
        const char *text = mt_kernel_dump(k, (mt_stage)st);
        if (st == MT_STAGE_CUDA) {
            assert_null(text);
            assert_non_null(strstr(mt_kernel_dump_unavailable(k, (mt_stage)st), "CUDA"));
        } else {
            assert_non_null(text);
            assert_true(strlen(text) > 10);
            assert_null(mt_kernel_dump_unavailable(k, (mt_stage)st));
        }
    }
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_LLVM), "noalias"));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_ASM), "fused_add_add"));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_AST), "FunctionDef"));
    assert_null(mt_kernel_dump(k, (mt_stage)99));
    mt_kernel_release(k);
}

/* The stages "ast", "tir" and "tir-sched" are printed on demand
 * (src/pipeline.c): the text is the one the pipeline records at that point
 * (dump_after "parse", "inline_producers", "split_host_device", printed as
 * the compile goes), also after the kernel has run, the same pointer when
 * asked twice; for the CPU, and for an emulated GPU (whose tir-sched dump
 * is the GPU program, lowered once more after it). No disk cache: with
 * one the compile prints tir-sched for the key. */
static void lazy_vs_eager(mt_context *ctx, const mt_compile_options *base, bool run) {
    static const char *MM =
        "def mm(x: Tensor((64, 96), \"float32\"), w: Tensor((96, 128), \"float32\"),\n"
        "       b: Tensor((128,), \"float32\")):\n"
        "    return softmax(relu(x @ w + b), axis=-1)\n";
    mt_diag d;
    mt_kernel *lazy = mt_jit_compile(ctx, MM, base, &d);
    assert_non_null(lazy);
    if (run) {
        int64_t xs[2] = {64, 96}, ws[2] = {96, 128}, bs[1] = {128};
        mt_tensor *args[3] = {ones(MT_FLOAT32, 2, xs), ones(MT_FLOAT32, 2, ws), ones(MT_FLOAT32, 1, bs)};
        mt_tensor *out = NULL;
        mt_status st = mt_kernel_run(lazy, args, 3, &out, 1, &d);
        if (st != MT_OK) fail_msg("%s", d.message);
        for (int i = 0; i < 3; i++) mt_tensor_release(args[i]);
        mt_tensor_release(out);
    }
    mt_compile_options o = *base;
    o.dump_after = "parse,inline_producers,split_host_device";
    mt_kernel *eager = mt_jit_compile(ctx, MM, &o, &d);
    assert_non_null(eager);
    assert_ptr_not_equal(lazy, eager);
    static const struct {
        mt_stage stage;
        const char *pass;
    } pairs[] = {{MT_STAGE_AST, "parse"}, {MT_STAGE_TIR, "inline_producers"},
                 {MT_STAGE_TIR_SCHED, "split_host_device"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const char *want = mt_kernel_pass_dump(eager, pairs[i].pass);
        assert_non_null(want);
        const char *got = mt_kernel_dump(lazy, pairs[i].stage);
        assert_non_null(got);
        assert_string_equal(got, want);
        assert_ptr_equal(mt_kernel_dump(lazy, pairs[i].stage), got); /* printed once */
        assert_string_equal(mt_kernel_dump(eager, pairs[i].stage), want);
        assert_null(mt_kernel_dump_unavailable(lazy, pairs[i].stage));
    }
    assert_non_null(strstr(mt_kernel_dump(lazy, MT_STAGE_TIR_SCHED), "T.func_attr"));
    mt_kernel_release(eager);
    mt_kernel_release(lazy);
}

static void test_lazy_dumps(void **s) {
    mt_context_options co = {0};
    co.cache_dir = ""; /* no disk cache */
    mt_context *ctx = mt_context_create(&co);
    assert_non_null(ctx);
    mt_compile_options o;
    mt_compile_options_init(&o);
    lazy_vs_eager(ctx, &o, true);
    o.target = MT_TARGET_CUDA;
    o.arch = "sm_90";
    o.emulate = 1; /* its arguments would live on the emulated GPU: not run */
    lazy_vs_eager(ctx, &o, false);
    o.emulate = 0; /* a GPU program: compiled and printed */
    lazy_vs_eager(ctx, &o, false);
    mt_context_destroy(ctx);
}

/* --emit dot: one cluster per fused group, named as its kernel; edges
 * from definitions to uses (dot itself parses it: tests/tools.cmake) */
static void test_dot(void **s) {
    mt_kernel *k = compile_ok("def f(x: Tensor((4, 8), \"float32\"), w: Tensor((8, 16), \"float32\"),\n"
                              "      b: Tensor((16,), \"float32\")):\n"
                              "    return softmax(relu(x @ w + b), axis=-1)\n");
    const char *dot = mt_kernel_dump(k, MT_STAGE_DOT);
    assert_non_null(dot);
    assert_true(strncmp(dot, "digraph minitriton {", 20) == 0);
    assert_non_null(strstr(dot, "label=\"f\"; style=solid;"));
    assert_non_null(strstr(dot, "[shape=ellipse, label=\"x\\nfloat32 (4, 8)\"]"));
    const char *c = strstr(dot, "subgraph cluster_1 {");
    assert_non_null(c);
    assert_non_null(strstr(c, "style=\"rounded,filled\""));
    assert_non_null(strstr(dot, "[label=\"relu\\nfloat32 (4, 16)\"]")); /* a temporary: no name */
    assert_non_null(strstr(dot, " [label=\"x @ w + b\"];")); /* an edge: what the user wrote */
    assert_null(strstr(dot, "cluster_3")); /* the function, two groups */
    mt_kernel_release(k);
}

static void test_pass_dumps(void **s) {
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.dump_after = "legalize,fuse_ops,simplify";
    mt_kernel *k = compile_ok_opts(ADD, &o);
    const char *leg = mt_kernel_pass_dump(k, "legalize");
    assert_non_null(leg);
    assert_non_null(strstr(leg, "R.call_tir(cls.add, (a, b)"));
    assert_non_null(strstr(leg, "R.call_tir(cls.add_1, (out, a)"));
    assert_non_null(mt_kernel_pass_dump(k, "fuse_ops"));
    assert_non_null(mt_kernel_pass_dump(k, "simplify"));
    assert_null(mt_kernel_pass_dump(k, "fuse_tir"));
    assert_null(mt_kernel_pass_dump(k, "nonsense"));
    mt_kernel_release(k);

    /* A name that is no pass is an error, not an empty dump. */
    mt_diag d;
    o.dump_after = "legalize,fuse_opz,simplify";
    assert_null(mt_jit_compile(test_ctx, ADD, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_string_equal(d.message, "mt_jit_compile: dump_after names no pass: 'fuse_opz'");
    o.dump_after = "legalize,,nope";
    assert_null(mt_jit_compile(test_ctx, ADD, &o, &d));
    assert_string_equal(d.message, "mt_jit_compile: dump_after names no pass: 'nope'");
    o.dump_after = "all,remove_unit_loops,parse";
    k = compile_ok_opts(ADD, &o);
    assert_non_null(mt_kernel_pass_dump(k, "schedule_reduce"));
    /* in the order the passes ran, a pass that ran twice numbered */
    int n = mt_kernel_num_pass_dumps(k), at_s1 = -1, at_s2 = -1, at_fuse = -1;
    assert_true(n > 20);
    assert_string_equal(mt_kernel_pass_dump_name(k, 0), "parse");
    for (int i = 0; i < n; i++) {
        const char *name = mt_kernel_pass_dump_name(k, i);
        assert_non_null(mt_kernel_pass_dump_at(k, i));
        assert_string_not_equal(name, "simplify"); /* it ran twice: numbered */
        if (!strcmp(name, "simplify#1")) at_s1 = i;
        if (!strcmp(name, "simplify#2")) at_s2 = i;
        if (!strcmp(name, "fuse_ops")) at_fuse = i;
    }
    assert_true(at_fuse >= 0 && at_fuse < at_s1 && at_s1 < at_s2);
    assert_ptr_equal(mt_kernel_pass_dump(k, "simplify#1"), mt_kernel_pass_dump_at(k, at_s1));
    assert_ptr_equal(mt_kernel_pass_dump(k, "simplify"), mt_kernel_pass_dump_at(k, at_s2)); /* the last */
    assert_null(mt_kernel_pass_dump_name(k, n));
    assert_null(mt_kernel_pass_dump_at(k, -1));
    assert_int_equal(mt_kernel_num_pass_dumps(NULL), 0);
    mt_kernel_release(k);

    /* split_host_device, after tir_cse: the parallel loop becomes a launch
     * of a parallel body; its dump is the tir-sched stage */
    o.dump_after = "tir_cse,split_host_device";
    k = compile_ok_opts("def big(a: Tensor((1000000,), \"float32\")):\n    return a * 2.0\n", &o);
    const char *cse = mt_kernel_pass_dump(k, "tir_cse"), *split = mt_kernel_pass_dump(k, "split_host_device");
    assert_non_null(strstr(cse, "T.parallel("));
    assert_null(strstr(cse, "T.launch("));
    assert_null(strstr(split, "T.parallel("));
    assert_non_null(strstr(split, "    T.launch(\"multiply_par0\", lv, a, grid=(62,))\n"));
    assert_non_null(strstr(split, "T.func_attr({\"kind\": \"parallel_body\", \"target\": \"cpu "));
    assert_string_equal(split, mt_kernel_dump(k, MT_STAGE_TIR_SCHED));
    mt_kernel_release(k);
}

static void test_introspection(void **s) {
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((\"n\", 4), \"float64\"), y: Tensor((4,), \"float64\")):\n"
        "    return x * y, y\n");
    assert_string_equal(mt_kernel_name(k), "f");
    assert_int_equal(mt_kernel_num_params(k), 2);
    assert_int_equal(mt_kernel_num_results(k), 2);
    assert_string_equal(mt_kernel_param_name(k, 0), "x");
    assert_string_equal(mt_kernel_param_name(k, 1), "y");
    assert_int_equal(mt_kernel_param_dtype(k, 0), MT_FLOAT64);
    assert_int_equal(mt_kernel_param_ndim(k, 0), 2);
    assert_int_equal(mt_kernel_param_dim(k, 0, 0), -1);
    assert_string_equal(mt_kernel_param_dim_name(k, 0, 0), "n");
    assert_int_equal(mt_kernel_param_dim(k, 0, 1), 4);
    assert_null(mt_kernel_param_dim_name(k, 0, 1));
    assert_int_equal(mt_kernel_param_dim(k, 0, 2), -1);
    assert_null(mt_kernel_param_name(k, 2));
    assert_null(mt_kernel_param_name(k, -1));
    assert_int_equal(mt_kernel_result_ndim(k, 0), 2);
    assert_int_equal(mt_kernel_result_dim(k, 0, 1), 4);
    assert_int_equal(mt_kernel_result_dtype(k, 1), MT_FLOAT64);
    assert_int_equal(mt_kernel_result_ndim(k, 5), -1);
    mt_kernel_retain(k);
    mt_kernel_release(k);
    mt_kernel_release(k);
}

/* Each wrong call: status, message, and for a parameter the place of its
 * declaration in the rendered diagnostic. */
static void expect_run_error(mt_kernel *k, mt_tensor *const *args, int nargs, mt_tensor **res,
                             int nres, const char *msg, int line, int col) {
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args, nargs, res, nres, &d), MT_ERR_INVALID_ARG);
    if (strcmp(d.message, msg) != 0) fail_msg("message:\n  got  %s\n  want %s", d.message, msg);
    assert_int_equal(d.line, line);
    assert_int_equal(d.col, col);
}

static void test_run_errors(void **s) {
    mt_kernel *k = compile_ok(
        "def f(a: Tensor((\"n\", 3), \"float32\"),\n      b: Tensor((\"n\", 3), \"float32\")):\n"
        "    return a + b\n");
    int64_t s23[2] = {2, 3}, s24[2] = {2, 4}, s33[2] = {3, 3}, s6[1] = {6};
    mt_tensor *a = ones(MT_FLOAT32, 2, s23), *b = ones(MT_FLOAT32, 2, s23);
    mt_tensor *bi = ones(MT_INT32, 2, s23), *b24 = ones(MT_FLOAT32, 2, s24);
    mt_tensor *b33 = ones(MT_FLOAT32, 2, s33), *b6 = ones(MT_FLOAT32, 1, s6);
    mt_tensor *out = NULL;

    mt_tensor *two[2] = {a, b};
    expect_run_error(k, two, 1, &out, 1, "the kernel takes 2 arguments, got 1", 0, 0);
    expect_run_error(k, two, 2, &out, 2, "the kernel returns 1 result, got 2 slots", 0, 0);
    mt_tensor *withnull[2] = {a, NULL};
    expect_run_error(k, withnull, 2, &out, 1, "argument 'b' is NULL", 2, 7);
    mt_tensor *wrongdt[2] = {a, bi};
    expect_run_error(k, wrongdt, 2, &out, 1, "argument 'b' has dtype int32, expected float32", 2, 7);
    mt_tensor *wrongrank[2] = {b6, b};
    expect_run_error(k, wrongrank, 2, &out, 1, "argument 'a' has rank 1, expected 2", 1, 7);
    mt_tensor *wrongdim[2] = {a, b24};
    expect_run_error(k, wrongdim, 2, &out, 1,
                     "argument 'b' has shape (2, 4): dim 1 is 4, expected 3", 2, 7);
    mt_tensor *wrongsym[2] = {a, b33};
    expect_run_error(k, wrongsym, 2, &out, 1,
                     "symbolic dim 'n' is 3 in argument 'b' but 2 in argument 'a'", 2, 7);
    assert_null(out); /* failures leave the slots alone */

    /* result slots: wrong shape, aliasing an argument */
    mt_tensor *bad = ones(MT_FLOAT32, 2, s33);
    expect_run_error(k, two, 2, &bad, 1, "result 0 is float32 (3, 3), expected float32 (2, 3)", 0, 0);
    mt_tensor *alias = a;
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, two, 2, &alias, 1, &d), MT_ERR_INVALID_ARG);
    assert_string_equal(d.message, "result 0 overlaps the memory of argument 'a'");

    /* non-contiguous arguments are refused */
    float buf[12] = {0};
    int64_t strides[2] = {1, 2};
    mt_tensor *tr = mt_tensor_wrap(buf, MT_FLOAT32, 2, s23, strides);
    mt_tensor *strided[2] = {tr, b};
    expect_run_error(k, strided, 2, &out, 1,
                     "argument 'a' is not C-contiguous; strided tensors are not supported yet", 1, 7);

    /* the rendered text shows the declaration */
    assert_int_equal(mt_kernel_run(k, wrongdt, 2, &out, 1, &d), MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.text, "error: argument 'b' has dtype int32, expected float32\n"));
    assert_non_null(strstr(d.text, "      b: Tensor((\"n\", 3), \"float32\")):\n      ^\n"));

    /* and a good run after all that */
    assert_int_equal(mt_kernel_run(k, two, 2, &out, 1, &d), MT_OK);
    assert_true(((float *)mt_tensor_data(out))[5] == 2.0f);

    mt_tensor *all[] = {a, b, bi, b24, b33, b6, bad, tr, out};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mt_tensor_release(all[i]);
    mt_kernel_release(k);
}

/* A compile error: status, place, message, rendered text with a caret. */
static void test_compile_error_diag(void **s) {
    mt_diag d = compile_err(
        "def f(a: Tensor((2, 3), \"float32\")):\n    out = a + c\n    return out\n");
    assert_int_equal(d.status, MT_ERR_NAME);
    assert_int_equal(d.line, 2);
    assert_int_equal(d.col, 15);
    assert_string_equal(d.message, "unknown name 'c'");
    assert_string_equal(d.text, "k.py:2:15: error: unknown name 'c'\n    out = a + c\n              ^\n");
}

static void test_kernel_outlives_context_handle(void **s) {
    mt_context *ctx = mt_context_create(NULL);
    assert_non_null(ctx);
    mt_diag d;
    mt_kernel *k = mt_jit_compile(ctx, ADD, NULL, &d);
    assert_non_null(k);
    mt_context_destroy(ctx); /* the kernel keeps the context alive */
    int64_t shape[2] = {2, 3};
    mt_tensor *args[2] = {ones(MT_FLOAT32, 2, shape), ones(MT_FLOAT32, 2, shape)};
    mt_tensor *out = NULL;
    assert_int_equal(mt_kernel_run(k, args, 2, &out, 1, NULL), MT_OK);
    assert_true(((float *)mt_tensor_data(out))[0] == 3.0f);
    mt_tensor_release(out);
    mt_tensor_release(args[0]);
    mt_tensor_release(args[1]);
    mt_kernel_release(k);
}

static void test_names(void **s) {
    for (int i = 0; i < MT_STATUS_COUNT_; i++) {
        assert_non_null(mt_status_str((mt_status)i));
        assert_true(strlen(mt_status_str((mt_status)i)) > 1);
    }
    assert_string_equal(mt_status_str(MT_OK), "ok");
    assert_string_equal(mt_status_str((mt_status)1000), "unknown status");
    mt_dtype dt;
    for (int i = 0; i < MT_DTYPE_COUNT_; i++) {
        assert_int_equal(mt_dtype_from_str(mt_dtype_str((mt_dtype)i), &dt), 0);
        assert_int_equal(dt, i);
    }
    assert_int_equal(mt_dtype_size(MT_FLOAT16), 2);
    assert_int_equal(mt_dtype_size(MT_INT64), 8);
    assert_int_equal(mt_dtype_from_str("float33", &dt), -1);
    mt_stage st;
    assert_int_equal(mt_stage_from_str("graph-opt", &st), 0);
    assert_int_equal(st, MT_STAGE_GRAPH_OPT);
    assert_int_equal(mt_stage_from_str("tir-sched", &st), 0);
    assert_int_equal(st, MT_STAGE_TIR_SCHED);
    assert_int_equal(mt_stage_from_str("nope", &st), -1);
    assert_string_equal(mt_version(), MT_VERSION_STRING);
}

/* Target cuda compiles: host code for the CPU, CUDA C for the kernels;
 * its parameters live on the GPU, so host tensors are refused (or, without
 * a GPU or NVRTC, the run says what is missing). */
static void test_cuda_target_unavailable(void **s) {
    (void)s;
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, ADD, &o, &d);
    assert_non_null(k);
    mt_device dev = mt_kernel_param_device(k, 0);
    assert_int_equal(dev.type, MT_DEVICE_CUDA);
    assert_int_equal(mt_kernel_result_device(k, 0).type, MT_DEVICE_CUDA);
    assert_int_equal(mt_kernel_param_device(k, 9).type, 0);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_LLVM), "mt_gpu_launch"));
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_CUDA), "extern \"C\" __global__"));
    int64_t shape[2] = {2, 3};
    mt_tensor *a = mt_tensor_create(MT_FLOAT32, 2, shape), *b = mt_tensor_create(MT_FLOAT32, 2, shape);
    mt_tensor *args[2] = {a, b}, *res[1] = {NULL};
    mt_status st = mt_kernel_run(k, args, 2, res, 1, &d);
    assert_true(st == MT_ERR_UNAVAILABLE || st == MT_ERR_INVALID_ARG);
    assert_true(d.message[0] != 0);
    mt_tensor_release(a);
    mt_tensor_release(b);
    mt_kernel_release(k);
    o.target = MT_TARGET_CPU;
    o.emulate = 1;
    assert_null(mt_jit_compile(test_ctx, ADD, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.message, "emulate is for target cuda"));
}

static const char *TWICE = "def f(a: Tensor((64,), \"float32\")):\n    return a + a\n";

/* mt_kernel_run_with: a CUDA stream for a kernel that runs no CUDA GPU is
 * refused (never dereferenced). */
static void test_caller_stream_refused(void **s) {
    (void)s;
    mt_run_options ro;
    mt_run_options_init(&ro);
    assert_null(ro.cuda_stream);
    ro.cuda_stream = (void *)(uintptr_t)0x1234; /* never a valid stream: must not be touched */
    mt_compile_options o;
    mt_compile_options_init(&o);
    for (int emulate = 0; emulate < 2; emulate++) {
        o.target = emulate ? MT_TARGET_CUDA : MT_TARGET_CPU;
        o.emulate = emulate;
        mt_diag d;
        mt_kernel *k = mt_jit_compile(test_ctx, TWICE, &o, &d);
        assert_non_null(k);
        int64_t n = 64;
        mt_tensor *a = mt_tensor_create(MT_FLOAT32, 1, &n), *res[1] = {NULL};
        assert_int_equal(mt_kernel_run_with(k, &a, 1, res, 1, &ro, &d), MT_ERR_INVALID_ARG);
        assert_non_null(strstr(d.message, emulate ? "runs no CUDA GPU (target cuda, emulated)"
                                                  : "runs no CUDA GPU (target cpu)"));
        assert_null(res[0]);
        mt_run_options nw;
        mt_run_options_init(&nw);
        nw.no_wait = 1; /* without a stream: refused, whatever the target */
        assert_int_equal(mt_kernel_run_with(k, &a, 1, res, 1, &nw, &d), MT_ERR_INVALID_ARG);
        assert_non_null(strstr(d.message, "no_wait needs a cuda_stream"));
        assert_null(res[0]);
        mt_tensor_release(a);
        mt_kernel_release(k);
    }
}

/* The driver API calls the test makes itself (libcuda.so.1, dlopen). */
typedef struct drv {
    int (*stream_create)(void **s, unsigned flags);
    int (*stream_destroy)(void *s);
    int (*event_create)(void **e, unsigned flags);
    int (*event_record)(void *e, void *s);
    int (*event_sync)(void *e);
    int (*event_elapsed)(float *ms, void *a, void *b);
    int (*event_destroy)(void *e);
    int (*stream_query)(void *s);
} drv;

static bool load_driver(drv *d) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    *(void **)&d->stream_create = dlsym(lib, "cuStreamCreate");
    *(void **)&d->stream_destroy = dlsym(lib, "cuStreamDestroy_v2");
    *(void **)&d->event_create = dlsym(lib, "cuEventCreate");
    *(void **)&d->event_record = dlsym(lib, "cuEventRecord");
    *(void **)&d->event_sync = dlsym(lib, "cuEventSynchronize");
    *(void **)&d->event_elapsed = dlsym(lib, "cuEventElapsedTime_v2");
    if (!d->event_elapsed) *(void **)&d->event_elapsed = dlsym(lib, "cuEventElapsedTime");
    *(void **)&d->event_destroy = dlsym(lib, "cuEventDestroy_v2");
    *(void **)&d->stream_query = dlsym(lib, "cuStreamQuery");
    return d->stream_create && d->stream_destroy && d->event_create && d->event_record &&
           d->event_sync && d->event_elapsed && d->event_destroy && d->stream_query;
}

/* On a GPU: a run on the caller's stream, between two events the caller
 * records there: its results are ready when it returns, and the events
 * measure it. Skipped (saying why) without a GPU. */
static void test_caller_stream_gpu(void **s) {
    (void)s;
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, TWICE, &o, &d);
    assert_non_null(k);
    int64_t n = 64;
    mt_tensor *h = mt_tensor_create(MT_FLOAT32, 1, &n), *a = NULL, *res[1] = {NULL};
    for (int i = 0; i < n; i++) ((float *)mt_tensor_data(h))[i] = (float)i - 7.5f;
    drv dr = {0};
    if (mt_kernel_tensor_to(k, h, mt_kernel_param_device(k, 0), &a, &d) != MT_OK || !load_driver(&dr)) {
        print_message("skipped: no GPU here: %s\n", d.message[0] ? d.message : "no libcuda.so.1");
        mt_tensor_release(h);
        mt_kernel_release(k);
        skip();
    }
    /* the library made its context current on this thread: the stream is in it */
    void *stream = NULL, *e0 = NULL, *e1 = NULL;
    assert_int_equal(dr.stream_create(&stream, 0), 0);
    assert_int_equal(dr.event_create(&e0, 0), 0);
    assert_int_equal(dr.event_create(&e1, 0), 0);
    mt_run_options ro;
    mt_run_options_init(&ro);
    ro.cuda_stream = stream;
    assert_int_equal(dr.event_record(e0, stream), 0);
    if (mt_kernel_run_with(k, &a, 1, res, 1, &ro, &d) != MT_OK) fail_msg("run: %s", d.text);
    assert_int_equal(dr.event_record(e1, stream), 0);
    assert_int_equal(dr.event_sync(e1), 0);
    float ms = -1;
    assert_int_equal(dr.event_elapsed(&ms, e0, e1), 0);
    assert_true(ms > 0);
    mt_tensor *back = NULL;
    mt_device cpu = {MT_DEVICE_CPU, 0};
    if (mt_kernel_tensor_to(k, res[0], cpu, &back, &d) != MT_OK) fail_msg("copy back: %s", d.text);
    for (int i = 0; i < n; i++) assert_true(((float *)mt_tensor_data(back))[i] == 2 * ((float)i - 7.5f));
    dr.event_destroy(e0);
    dr.event_destroy(e1);
    dr.stream_destroy(stream);
    mt_tensor_release(back);
    mt_tensor_release(res[0]);
    mt_tensor_release(a);
    mt_tensor_release(h);
    mt_kernel_release(k);
}

/* Two layers: an intermediate buffer between the two kernels. */
static const char *LAYERS = "def f(x: Tensor((8, 16), \"float32\"), w0: Tensor((32, 16), \"float32\"), "
                            "w1: Tensor((4, 32), \"float32\")):\n    return relu(x @ w0.T) @ w1.T\n";

/* Inputs of LAYERS on the CPU, and their copies on the kernel's devices:
 * false (d says why) when those cannot be made. */
static bool layers_inputs(mt_kernel *k, mt_tensor **host, mt_tensor **dev, mt_diag *d) {
    for (int i = 0; i < 3; i++) {
        int64_t shape[2] = {mt_kernel_param_dim(k, i, 0), mt_kernel_param_dim(k, i, 1)};
        host[i] = mt_tensor_create(MT_FLOAT32, 2, shape);
        float *p = mt_tensor_data(host[i]);
        for (int64_t j = 0; j < shape[0] * shape[1]; j++) p[j] = (float)((j * 37 + i * 11) % 19) / 8.0f - 1.0f;
        if (mt_kernel_tensor_to(k, host[i], mt_kernel_param_device(k, i), &dev[i], d) != MT_OK) return false;
    }
    return true;
}

/* On a GPU: runs that do not wait (no_wait), on two caller streams in
 * turn; the second run takes the intermediate block the first freed (its
 * event orders the reuse): every result as the CPU's once the streams are
 * done; and a train of large runs is still running when the last returns.
 * Skipped (saying why) without a GPU. */
static void test_no_wait_gpu(void **s) {
    (void)s;
    mt_compile_options o;
    mt_compile_options_init(&o);
    mt_diag d;
    mt_kernel *cpu = mt_jit_compile(test_ctx, LAYERS, &o, &d);
    o.target = MT_TARGET_CUDA;
    mt_kernel *k = mt_jit_compile(test_ctx, LAYERS, &o, &d);
    assert_non_null(cpu);
    assert_non_null(k);
    drv dr = {0};
    mt_tensor *h[3] = {NULL}, *a[3] = {NULL}, *want[1] = {NULL};
    if (!layers_inputs(k, h, a, &d) || !load_driver(&dr)) {
        print_message("skipped: no GPU here: %s\n", d.message[0] ? d.message : "no libcuda.so.1");
        for (int i = 0; i < 3; i++) mt_tensor_release(a[i]), mt_tensor_release(h[i]);
        mt_kernel_release(cpu);
        mt_kernel_release(k);
        skip();
    }
    if (mt_kernel_run(cpu, h, 3, want, 1, &d) != MT_OK) fail_msg("cpu run: %s", d.text);
    void *st[2] = {NULL, NULL};
    assert_int_equal(dr.stream_create(&st[0], 0), 0);
    assert_int_equal(dr.stream_create(&st[1], 0), 0);
    enum { RUNS = 6 };
    mt_tensor *res[RUNS] = {NULL};
    for (int r = 0; r < RUNS; r++) {
        mt_run_options ro;
        mt_run_options_init(&ro);
        ro.cuda_stream = st[r % 2];
        ro.no_wait = 1;
        if (mt_kernel_run_with(k, a, 3, &res[r], 1, &ro, &d) != MT_OK) fail_msg("run %d: %s", r, d.text);
    }
    /* the runs did not wait: a 64M-element run queued behind a 32-run train
     * (about 10 ms of the GPU's time) is not done when the last returns */
    mt_kernel *big = mt_jit_compile(test_ctx, "def f(a: Tensor((67108864,), \"float32\")):\n    return a * 2.0 + a\n",
                                    &o, &d);
    assert_non_null(big);
    int64_t bn = 67108864;
    mt_tensor *bh = mt_tensor_create(MT_FLOAT32, 1, &bn), *ba = NULL, *bres = NULL;
    memset(mt_tensor_data(bh), 0, (size_t)bn * sizeof(float));
    if (mt_kernel_tensor_to(big, bh, mt_kernel_param_device(big, 0), &ba, &d) != MT_OK) fail_msg("%s", d.text);
    for (int r = 0; r < 32; r++) {
        mt_run_options ro;
        mt_run_options_init(&ro);
        ro.cuda_stream = st[0];
        ro.no_wait = 1;
        if (mt_kernel_run_with(big, &ba, 1, &bres, 1, &ro, &d) != MT_OK) fail_msg("big run %d: %s", r, d.text);
    }
    assert_int_equal(dr.stream_query(st[0]), 600); /* CUDA_ERROR_NOT_READY */
    void *ev = NULL;
    assert_int_equal(dr.event_create(&ev, 0), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(dr.event_record(ev, st[i]), 0);
        assert_int_equal(dr.event_sync(ev), 0);
    }
    mt_device host = {MT_DEVICE_CPU, 0};
    for (int r = 0; r < RUNS; r++) {
        mt_tensor *back = NULL;
        if (mt_kernel_tensor_to(k, res[r], host, &back, &d) != MT_OK) fail_msg("copy back: %s", d.text);
        for (int i = 0; i < 8 * 4; i++) {
            float g = ((float *)mt_tensor_data(back))[i], w = ((float *)mt_tensor_data(want[0]))[i];
            if (fabsf(g - w) > 1e-4f * (1 + fabsf(w))) fail_msg("run %d, element %d: %g, want %g", r, i, g, w);
        }
        mt_tensor_release(back);
        mt_tensor_release(res[r]);
    }
    dr.event_destroy(ev);
    dr.stream_destroy(st[0]);
    dr.stream_destroy(st[1]);
    mt_tensor_release(bres), mt_tensor_release(ba), mt_tensor_release(bh);
    mt_kernel_release(big);
    for (int i = 0; i < 3; i++) mt_tensor_release(a[i]), mt_tensor_release(h[i]);
    mt_tensor_release(want[0]);
    mt_kernel_release(cpu);
    mt_kernel_release(k);
}

/* On a GPU: the values a kernel computes once from its bound parameters
 * are ready before any later run reads them, even when the first run does
 * not wait: that run queues behind a train of large runs on the caller's
 * stream, and a plain run on the library's stream follows at once. */
static void test_no_wait_once_gpu(void **s) {
    (void)s;
    enum { N = 1 << 20 };
    int64_t n = N;
    mt_tensor *w = mt_tensor_create(MT_FLOAT32, 1, &n), *hx = mt_tensor_create(MT_FLOAT32, 1, &n);
    for (int i = 0; i < N; i++) {
        ((float *)mt_tensor_data(w))[i] = (float)(i % 1000) - 500.0f;
        ((float *)mt_tensor_data(hx))[i] = (float)(i % 7);
    }
    mt_bound_param ps[1] = {{"w", w}};
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    o.params = ps;
    o.nparams = 1;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx,
                                  "def f(x: Tensor((1048576,), \"float32\"), w: Tensor((1048576,), \"float32\")):\n"
                                  "    return x + (w * 2.0 + 1.0)\n",
                                  &o, &d);
    if (!k) fail_msg("%s", d.text);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_PLAN), "# computed once"));
    o.params = NULL;
    o.nparams = 0;
    mt_kernel *big = mt_jit_compile(test_ctx, "def f(a: Tensor((67108864,), \"float32\")):\n    return a * 2.0 + a\n",
                                    &o, &d);
    assert_non_null(big);
    drv dr = {0};
    mt_tensor *x = NULL, *ba = NULL, *bres = NULL, *r[2] = {NULL, NULL};
    int64_t bn = 67108864;
    mt_tensor *bh = mt_tensor_create(MT_FLOAT32, 1, &bn);
    memset(mt_tensor_data(bh), 0, (size_t)bn * sizeof(float));
    if (mt_kernel_tensor_to(k, hx, mt_kernel_param_device(k, 0), &x, &d) != MT_OK || !load_driver(&dr)) {
        print_message("skipped: no GPU here: %s\n", d.message[0] ? d.message : "no libcuda.so.1");
        mt_tensor_release(bh), mt_tensor_release(hx), mt_tensor_release(w);
        mt_kernel_release(big);
        mt_kernel_release(k);
        skip();
    }
    if (mt_kernel_tensor_to(big, bh, mt_kernel_param_device(big, 0), &ba, &d) != MT_OK) fail_msg("%s", d.text);
    void *st = NULL;
    assert_int_equal(dr.stream_create(&st, 0), 0);
    mt_run_options ro;
    mt_run_options_init(&ro);
    ro.cuda_stream = st;
    ro.no_wait = 1;
    for (int i = 0; i < 32; i++)
        if (mt_kernel_run_with(big, &ba, 1, &bres, 1, &ro, &d) != MT_OK) fail_msg("big run %d: %s", i, d.text);
    if (mt_kernel_run_with(k, &x, 1, &r[0], 1, &ro, &d) != MT_OK) fail_msg("first run: %s", d.text);
    if (mt_kernel_run(k, &x, 1, &r[1], 1, &d) != MT_OK) fail_msg("second run: %s", d.text);
    void *ev = NULL;
    assert_int_equal(dr.event_create(&ev, 0), 0);
    assert_int_equal(dr.event_record(ev, st), 0);
    assert_int_equal(dr.event_sync(ev), 0);
    mt_device host = {MT_DEVICE_CPU, 0};
    for (int run = 0; run < 2; run++) {
        mt_tensor *back = NULL;
        if (mt_kernel_tensor_to(k, r[run], host, &back, &d) != MT_OK) fail_msg("copy back: %s", d.text);
        const float *g = mt_tensor_data(back), *wv = mt_tensor_data(w), *xv = mt_tensor_data(hx);
        for (int i = 0; i < N; i++)
            if (g[i] != xv[i] + (wv[i] * 2.0f + 1.0f)) fail_msg("run %d, element %d: %g", run, i, g[i]);
        mt_tensor_release(back);
        mt_tensor_release(r[run]);
    }
    dr.event_destroy(ev);
    dr.stream_destroy(st);
    mt_tensor_release(bres), mt_tensor_release(ba), mt_tensor_release(bh);
    mt_tensor_release(x), mt_tensor_release(hx), mt_tensor_release(w);
    mt_kernel_release(big);
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_the_issue_example),
        cmocka_unit_test(test_dumps),
        cmocka_unit_test(test_lazy_dumps),
        cmocka_unit_test(test_dot),
        cmocka_unit_test(test_pass_dumps),
        cmocka_unit_test(test_introspection),
        cmocka_unit_test(test_run_errors),
        cmocka_unit_test(test_compile_error_diag),
        cmocka_unit_test(test_kernel_outlives_context_handle),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_cuda_target_unavailable),
        cmocka_unit_test(test_caller_stream_refused),
        cmocka_unit_test(test_caller_stream_gpu),
        cmocka_unit_test(test_no_wait_gpu),
        cmocka_unit_test(test_no_wait_once_gpu),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
