/*
 * test_robust.c -- the library inside someone else's process: every public
 * function given garbage, every run-time argument error, every limit.
 *
 * The contract (docs/robustness.md): whatever the host passes and whatever
 * source it compiles, a call returns a status, a NULL or a neutral value with
 * a message; it never crashes, hangs, leaks or writes out of bounds. This
 * file covers what tests/e2e/test_api.c does not:
 *
 *   - garbage to every public function: enum values out of range, negative
 *     and too-large ranks, NULL shapes, negative and overflowing dims, NULL
 *     pointers where a pointer is required, bad compile options;
 *   - run-time argument errors the executor must catch: outputs that alias
 *     each other (wholly or in part), a rank-0 scalar of the wrong dtype,
 *     NULL arrays, negative counts, wrong result slots, and the legal edge
 *     cases next to them (zero-size dims with no data);
 *   - MT_ERR_NOMEM from mt_kernel_run when a result cannot be allocated
 *     (symbolic dims whose product is huge), never a crash;
 *   - a run-time loop whose variable would pass INT64_MAX;
 *   - the compile-time limits through the public API: source size, tokens,
 *     nesting, indentation, tensor size, unrolled operations, inlined calls;
 *   - an internal error (mt_ice) caught by an error frame as MT_ERR_INTERNAL
 *     with its place, through the same machinery every API function uses.
 *
 * Under the ASan suite the allocator must return NULL rather than abort on
 * impossible sizes (allocator_may_return_null=1, set by scripts/test.sh).
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>

#include "npy.h"
#include "support/diag.h"
#include "test_util.h"

static const char *TWO_OUT =
    "def f(x: Tensor((\"n\",), \"float32\"), s: float32):\n"
    "    return x * s, x + s\n";

static const char *OUTER =
    "def f(x: Tensor((\"n\",), \"float32\"), y: Tensor((\"m\",), \"float32\")):\n"
    "    return expand_dims(x, 1) + expand_dims(y, 0)\n";

static mt_tensor *vec(int64_t n, float v) {
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, 1, &n);
    assert_non_null(t);
    for (int64_t i = 0; i < n; i++) ((float *)mt_tensor_data(t))[i] = v;
    return t;
}

static mt_tensor *scalar_f32(float v) {
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, 0, NULL);
    assert_non_null(t);
    *(float *)mt_tensor_data(t) = v;
    return t;
}

static void expect_run(mt_kernel *k, mt_tensor *const *args, int nargs, mt_tensor **res, int nres,
                       mt_status st, const char *msg) {
    mt_diag d;
    mt_status got = mt_kernel_run(k, args, nargs, res, nres, &d);
    if (got != st || strcmp(d.message, msg) != 0)
        fail_msg("run: got %s '%s', want %s '%s'", mt_status_str(got), d.message, mt_status_str(st), msg);
    assert_int_equal(d.status, st);
}

/* ---- garbage to the public functions --------------------------------------- */

static void test_tensor_garbage(void **s) {
    int64_t shape[MT_MAX_RANK + 1] = {2, 3, 1, 1, 1, 1, 1, 1, 1};
    float buf[6];
    assert_null(mt_tensor_create((mt_dtype)99, 1, shape));
    assert_null(mt_tensor_create((mt_dtype)-1, 1, shape));
    assert_null(mt_tensor_create(MT_DTYPE_COUNT_, 1, shape));
    assert_null(mt_tensor_create(MT_FLOAT32, -1, shape));
    assert_null(mt_tensor_create(MT_FLOAT32, INT_MIN, shape));
    assert_null(mt_tensor_create(MT_FLOAT32, MT_MAX_RANK + 1, shape));
    assert_null(mt_tensor_create(MT_FLOAT32, INT_MAX, shape));
    assert_null(mt_tensor_create(MT_FLOAT32, 2, NULL));
    int64_t neg[2] = {2, -3}, huge[2] = {INT64_MAX, 2}, big[3] = {1 << 30, 1 << 30, 1 << 30};
    int64_t min[1] = {INT64_MIN};
    assert_null(mt_tensor_create(MT_FLOAT32, 2, neg));
    assert_null(mt_tensor_create(MT_FLOAT32, 1, min));
    assert_null(mt_tensor_create(MT_INT8, 2, huge));       /* numel overflows */
    assert_null(mt_tensor_create(MT_FLOAT64, 3, big));     /* bytes overflow */
    assert_null(mt_tensor_wrap(buf, (mt_dtype)42, 1, shape, NULL));
    assert_null(mt_tensor_wrap(buf, MT_FLOAT32, -2, shape, NULL));
    assert_null(mt_tensor_wrap(buf, MT_FLOAT32, MT_MAX_RANK + 1, shape, NULL));
    assert_null(mt_tensor_wrap(buf, MT_FLOAT32, 1, NULL, NULL));
    assert_null(mt_tensor_wrap(buf, MT_FLOAT32, 2, neg, NULL));
    assert_null(mt_tensor_wrap(buf, MT_FLOAT32, 2, huge, NULL));
    assert_null(mt_tensor_wrap(NULL, MT_FLOAT32, 2, shape, NULL)); /* NULL data, 6 elements */

    /* the legal neighbours: rank 0 with NULL shape, rank 8, NULL data when empty */
    mt_tensor *r0 = mt_tensor_create(MT_FLOAT32, 0, NULL);
    assert_non_null(r0);
    assert_int_equal(mt_tensor_numel(r0), 1);
    mt_tensor *r8 = mt_tensor_create(MT_INT8, MT_MAX_RANK, shape);
    assert_non_null(r8);
    assert_int_equal(mt_tensor_numel(r8), 6);
    int64_t empty[2] = {0, INT64_MAX};
    mt_tensor *e = mt_tensor_wrap(NULL, MT_FLOAT64, 2, empty, NULL);
    assert_non_null(e);
    assert_int_equal(mt_tensor_numel(e), 0);
    mt_tensor_release(r0);
    mt_tensor_release(r8);
    mt_tensor_release(e);

    /* no elements, but the other dims' product overflows: the strides made
     * for it must not (fuzz_npy found this through the .npy reader) */
    int64_t empty_huge[3] = {(int64_t)1 << 62, 0, 6};
    mt_tensor *eh = mt_tensor_create(MT_UINT8, 3, empty_huge);
    assert_non_null(eh);
    assert_int_equal(mt_tensor_numel(eh), 0);
    mt_tensor_release(eh);
    eh = mt_tensor_wrap(NULL, MT_INT8, 3, empty_huge, NULL);
    assert_non_null(eh);
    mt_tensor_release(eh);

    /* accessors of NULL */
    assert_null(mt_tensor_data(NULL));
    assert_int_equal(mt_tensor_ndim(NULL), -1);
    assert_null(mt_tensor_shape(NULL));
    assert_null(mt_tensor_strides(NULL));
    assert_int_equal(mt_tensor_numel(NULL), -1);
    assert_int_equal(mt_tensor_dtype(NULL), MT_DTYPE_COUNT_);
    mt_tensor_retain(NULL);
    mt_tensor_release(NULL);
}

static void test_names_garbage(void **s) {
    assert_string_equal(mt_status_str((mt_status)-1), "unknown status");
    assert_string_equal(mt_status_str(MT_STATUS_COUNT_), "unknown status");
    assert_string_equal(mt_dtype_str((mt_dtype)-1), "unknown");
    assert_string_equal(mt_dtype_str((mt_dtype)1000), "unknown");
    assert_int_equal(mt_dtype_size((mt_dtype)-1), 0);
    assert_int_equal(mt_dtype_size(MT_DTYPE_COUNT_), 0);
    assert_string_equal(mt_stage_str((mt_stage)-7), "unknown");
    assert_string_equal(mt_stage_str(MT_STAGE_COUNT_), "unknown");
    mt_dtype dt = MT_INT8;
    mt_stage st = MT_STAGE_AST;
    assert_int_equal(mt_dtype_from_str(NULL, &dt), -1);
    assert_int_equal(mt_dtype_from_str("", &dt), -1);
    assert_int_equal(mt_dtype_from_str("float32", NULL), 0); /* out may be NULL */
    assert_int_equal(mt_stage_from_str(NULL, &st), -1);
    assert_int_equal(mt_stage_from_str("", &st), -1);
    assert_int_equal(mt_stage_from_str("llvm", NULL), 0);
    assert_int_equal(dt, MT_INT8);
    assert_int_equal(st, MT_STAGE_AST);
    mt_compile_options_init(NULL);
}

static void test_kernel_garbage(void **s) {
    mt_kernel *k = compile_ok(TWO_OUT);
    /* stages out of range */
    assert_null(mt_kernel_dump(k, (mt_stage)-1));
    assert_null(mt_kernel_dump(k, MT_STAGE_COUNT_));
    assert_null(mt_kernel_dump(k, (mt_stage)INT_MAX));
    assert_string_equal(mt_kernel_dump_unavailable(k, (mt_stage)-1), "unknown stage");
    assert_string_equal(mt_kernel_dump_unavailable(k, MT_STAGE_COUNT_), "unknown stage");
    assert_string_equal(mt_kernel_dump_unavailable(NULL, MT_STAGE_AST), "no kernel");
    assert_null(mt_kernel_pass_dump(k, NULL));
    assert_null(mt_kernel_pass_dump(NULL, "legalize"));
    /* indices out of range, every accessor */
    int idx[] = {-1, 2, INT_MAX, INT_MIN};
    for (size_t i = 0; i < sizeof idx / sizeof idx[0]; i++) {
        assert_null(mt_kernel_param_name(k, idx[i]));
        assert_int_equal((int)mt_kernel_param_dtype(k, idx[i]), -1);
        assert_int_equal(mt_kernel_param_ndim(k, idx[i]), -1);
        assert_int_equal(mt_kernel_param_dim(k, idx[i], 0), -1);
        assert_null(mt_kernel_param_dim_name(k, idx[i], 0));
        assert_int_equal((int)mt_kernel_result_dtype(k, idx[i]), -1);
        assert_int_equal(mt_kernel_result_ndim(k, idx[i]), -1);
        assert_int_equal(mt_kernel_result_dim(k, idx[i], 0), -1);
        /* axes out of range on a valid parameter */
        assert_int_equal(mt_kernel_param_dim(k, 0, idx[i] == 2 ? 1 : idx[i]), -1);
        assert_null(mt_kernel_param_dim_name(k, 0, idx[i] == 2 ? 1 : idx[i]));
        assert_int_equal(mt_kernel_result_dim(k, 0, idx[i] == 2 ? 1 : idx[i]), -1);
    }
    /* compile times and cache statistics: NULL in, MT_ERR_INVALID_ARG out */
    mt_compile_times times;
    mt_cache_stats stats;
    assert_int_equal(mt_kernel_compile_times(NULL, &times), MT_ERR_INVALID_ARG);
    assert_int_equal(mt_kernel_compile_times(k, NULL), MT_ERR_INVALID_ARG);
    assert_int_equal(mt_kernel_compile_times(k, &times), MT_OK);
    assert_int_equal(mt_context_cache_stats(NULL, &stats), MT_ERR_INVALID_ARG);
    assert_int_equal(mt_context_cache_stats(test_ctx, NULL), MT_ERR_INVALID_ARG);

    /* NULL kernel, every accessor */
    assert_null(mt_kernel_name(NULL));
    assert_int_equal(mt_kernel_num_results(NULL), -1);
    assert_null(mt_kernel_param_name(NULL, 0));
    assert_int_equal(mt_kernel_param_ndim(NULL, 0), -1);
    assert_int_equal(mt_kernel_result_ndim(NULL, 0), -1);
    mt_kernel_release(k);
}

static void test_compile_options_garbage(void **s) {
    mt_diag d;
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = (mt_target)7;
    assert_null(mt_jit_compile(test_ctx, TWO_OUT, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_string_equal(d.message, "mt_jit_compile: target must be MT_TARGET_CPU or MT_TARGET_CUDA");
    o.target = (mt_target)-1;
    assert_null(mt_jit_compile(test_ctx, TWO_OUT, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);

    mt_compile_options_init(&o);
    o.opt_level = -1;
    assert_null(mt_jit_compile(test_ctx, TWO_OUT, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    o.opt_level = INT_MIN;
    assert_null(mt_jit_compile(test_ctx, TWO_OUT, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);

    /* dump_after: a name that is no pass is an error (a very long one is cut
     * in the message); empty names are none */
    mt_compile_options_init(&o);
    o.dump_after = ",,,all,,nonsense,";
    assert_null(mt_jit_compile(test_ctx, TWO_OUT, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_string_equal(d.message, "mt_jit_compile: dump_after names no pass: 'nonsense'");
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    o.dump_after = longname;
    assert_null(mt_jit_compile(test_ctx, TWO_OUT, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);

    /* tolerated: NULL filename ("<source>"), a negative unroll threshold (the
     * default), empty names in dump_after */
    mt_compile_options_init(&o);
    o.filename = NULL;
    o.unroll_threshold = INT_MIN;
    o.dump_after = ",,,all,,";
    mt_kernel *k = mt_jit_compile(test_ctx, TWO_OUT, &o, &d);
    assert_non_null(k);
    assert_non_null(mt_kernel_pass_dump(k, "fuse_ops"));
    mt_kernel_release(k);

    /* an entry that does not exist, or names no function */
    mt_compile_options_init(&o);
    o.entry = "nope";
    assert_null(mt_jit_compile(test_ctx, TWO_OUT, &o, &d));
    assert_true(d.status != MT_OK && d.status != MT_ERR_INTERNAL);
    assert_true(d.message[0] != 0);
    o.entry = "";
    assert_null(mt_jit_compile(test_ctx, TWO_OUT, &o, &d));
    assert_true(d.status != MT_OK && d.status != MT_ERR_INTERNAL);

    /* a huge unroll threshold is bounded by the operation limit */
    mt_compile_options_init(&o);
    o.unroll_threshold = INT_MAX;
    k = mt_jit_compile(test_ctx,
                       "def f(x: Tensor((2,), \"float32\")):\n"
                       "    for i in range(1000000000):\n"
                       "        x = x + 1.0\n"
                       "    return x\n",
                       &o, &d);
    assert_null(k);
    assert_int_equal(d.status, MT_ERR_LIMIT);
    assert_string_equal(d.message, "kernel too large: more than 2048 operations after unrolling");

    /* contexts: negative thread counts mean the default, a negative cache
     * size no cache; an absurd cache size gives a context or NULL (no memory
     * for its table), never a crash */
    mt_context_options co = {-5, -7};
    mt_context *ctx = mt_context_create(&co);
    assert_non_null(ctx);
    k = mt_jit_compile(ctx, TWO_OUT, NULL, &d);
    assert_non_null(k);
    mt_kernel_release(k);
    mt_context_destroy(ctx);
    co.num_threads = INT_MAX;
    co.cache_entries = INT_MAX;
    ctx = mt_context_create(&co);
    if (ctx) {
        k = mt_jit_compile(ctx, TWO_OUT, NULL, &d);
        assert_non_null(k);
        mt_kernel_release(k);
        mt_context_destroy(ctx);
    }
}

/* ---- run-time argument errors ------------------------------------------------ */

static void test_run_argument_errors(void **s) {
    mt_kernel *k = compile_ok(TWO_OUT);
    mt_tensor *x = vec(4, 2.0f), *sc = scalar_f32(3.0f);
    mt_tensor *args[2] = {x, sc};
    mt_tensor *res[2] = {NULL, NULL};

    /* NULL arrays and negative counts */
    expect_run(k, NULL, 2, res, 2, MT_ERR_INVALID_ARG, "args is NULL");
    expect_run(k, args, 2, NULL, 2, MT_ERR_INVALID_ARG, "results is NULL");
    expect_run(k, args, -1, res, 2, MT_ERR_INVALID_ARG, "the kernel takes 2 arguments, got -1");
    expect_run(k, args, 2, res, -3, MT_ERR_INVALID_ARG, "the kernel returns 2 results, got -3 slots");
    expect_run(k, args, INT_MAX, res, 2, MT_ERR_INVALID_ARG,
               "the kernel takes 2 arguments, got 2147483647");

    /* a rank-0 scalar of the wrong dtype, of the wrong rank */
    mt_tensor *si = mt_tensor_create(MT_INT32, 0, NULL);
    mt_tensor *bad_scalar[2] = {x, si};
    expect_run(k, bad_scalar, 2, res, 2, MT_ERR_INVALID_ARG,
               "argument 's' has dtype int32, expected float32");
    int64_t one = 1;
    mt_tensor *s1 = mt_tensor_create(MT_FLOAT32, 1, &one);
    mt_tensor *rank1_scalar[2] = {x, s1};
    expect_run(k, rank1_scalar, 2, res, 2, MT_ERR_INVALID_ARG, "argument 's' has rank 1, expected 0");

    /* an output aliasing another output: the same tensor, then two views of
     * one buffer that overlap by one element */
    mt_tensor *o = vec(4, 0.0f);
    mt_tensor *same[2] = {o, o};
    expect_run(k, args, 2, same, 2, MT_ERR_INVALID_ARG, "results 0 and 1 overlap");
    float buf[7];
    int64_t four = 4;
    mt_tensor *v0 = mt_tensor_wrap(buf, MT_FLOAT32, 1, &four, NULL);
    mt_tensor *v1 = mt_tensor_wrap(buf + 3, MT_FLOAT32, 1, &four, NULL);
    mt_tensor *views[2] = {v0, v1};
    expect_run(k, args, 2, views, 2, MT_ERR_INVALID_ARG, "results 0 and 1 overlap");
    /* ... and adjacent views do not overlap: that run is fine */
    mt_tensor *w0 = mt_tensor_wrap(buf, MT_FLOAT32, 1, &(int64_t){3}, NULL);
    mt_tensor *x3 = vec(3, 2.0f);
    mt_tensor *args3[2] = {x3, sc};
    mt_tensor *w1 = mt_tensor_wrap(buf + 3, MT_FLOAT32, 1, &(int64_t){3}, NULL);
    mt_tensor *adjacent[2] = {w0, w1};
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args3, 2, adjacent, 2, &d), MT_OK);
    assert_true(buf[0] == 6.0f && buf[2] == 6.0f && buf[3] == 5.0f && buf[5] == 5.0f);

    /* a result overlapping an argument in part */
    mt_tensor *xin = mt_tensor_wrap(buf, MT_FLOAT32, 1, &four, NULL);
    mt_tensor *part_args[2] = {xin, sc};
    mt_tensor *tail = mt_tensor_wrap(buf + 3, MT_FLOAT32, 1, &four, NULL);
    mt_tensor *part_res[2] = {NULL, tail};
    expect_run(k, part_args, 2, part_res, 2, MT_ERR_INVALID_ARG,
               "result 1 overlaps the memory of argument 'x'");
    assert_null(part_res[0]); /* nothing was handed out */

    /* a result slot of the wrong rank, a strided one */
    mt_tensor *r0 = scalar_f32(0);
    mt_tensor *wrong_rank[2] = {r0, NULL};
    expect_run(k, args, 2, wrong_rank, 2, MT_ERR_INVALID_ARG,
               "result 0 is float32 (), expected float32 (4,)");
    int64_t stride = 2;
    mt_tensor *strided = mt_tensor_wrap(buf, MT_FLOAT32, 1, &(int64_t){3}, &stride);
    mt_tensor *strided_res[2] = {NULL, strided};
    expect_run(k, args3, 2, strided_res, 2, MT_ERR_INVALID_ARG,
               "result 1 is not a contiguous tensor with data");
    assert_null(strided_res[0]);

    mt_tensor *all[] = {x, sc, si, s1, o, v0, v1, w0, w1, x3, xin, tail, r0, strided};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mt_tensor_release(all[i]);
    mt_kernel_release(k);
}

/* Zero-size dims: legal, with or without data, and the results are empty. */
static void test_zero_size(void **s) {
    mt_kernel *k = compile_ok(TWO_OUT);
    int64_t zero = 0;
    mt_tensor *x = mt_tensor_wrap(NULL, MT_FLOAT32, 1, &zero, NULL);
    assert_non_null(x);
    mt_tensor *sc = scalar_f32(1.0f);
    mt_tensor *args[2] = {x, sc};
    mt_tensor *res[2] = {NULL, NULL};
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args, 2, res, 2, &d), MT_OK);
    for (int r = 0; r < 2; r++) {
        assert_non_null(res[r]);
        assert_int_equal(mt_tensor_ndim(res[r]), 1);
        assert_int_equal(mt_tensor_shape(res[r])[0], 0);
        assert_int_equal(mt_tensor_numel(res[r]), 0);
        mt_tensor_release(res[r]);
    }
    /* empty caller-provided results with no data */
    mt_tensor *e0 = mt_tensor_wrap(NULL, MT_FLOAT32, 1, &zero, NULL);
    mt_tensor *e1 = mt_tensor_wrap(NULL, MT_FLOAT32, 1, &zero, NULL);
    mt_tensor *given[2] = {e0, e1};
    assert_int_equal(mt_kernel_run(k, args, 2, given, 2, &d), MT_OK);
    mt_tensor_release(e0);
    mt_tensor_release(e1);
    mt_tensor_release(x);
    mt_tensor_release(sc);
    mt_kernel_release(k);

    /* an (n, m) result with one of them zero */
    k = compile_ok(OUTER);
    int64_t three = 3;
    mt_tensor *a = vec(3, 1.0f), *b = mt_tensor_wrap(NULL, MT_FLOAT32, 1, &zero, NULL);
    mt_tensor *ab[2] = {a, b};
    mt_tensor *out = NULL;
    assert_int_equal(mt_kernel_run(k, ab, 2, &out, 1, &d), MT_OK);
    assert_int_equal(mt_tensor_shape(out)[0], three);
    assert_int_equal(mt_tensor_shape(out)[1], 0);
    mt_tensor_release(out);
    mt_tensor_release(a);
    mt_tensor_release(b);
    mt_kernel_release(k);
}

/* A result the machine cannot hold: MT_ERR_NOMEM, the slot left alone. The
 * arguments borrow a small buffer while claiming 2**24 or 2**31 elements;
 * nothing reads them, because every allocation happens before any kernel
 * runs and the first one fails. */
static void test_result_too_large(void **s) {
    mt_kernel *k = compile_ok(OUTER);
    static float backing[16];
    int64_t sizes[] = {(int64_t)1 << 24, (int64_t)1 << 31};
    for (int i = 0; i < 2; i++) {
        mt_tensor *x = mt_tensor_wrap(backing, MT_FLOAT32, 1, &sizes[i], NULL);
        mt_tensor *y = mt_tensor_wrap(backing, MT_FLOAT32, 1, &sizes[i], NULL);
        assert_non_null(x);
        assert_non_null(y);
        mt_tensor *args[2] = {x, y};
        mt_tensor *out = NULL;
        mt_diag d;
        /* 2**48 * 4 bytes: no memory; 2**62 * 4: the size overflows */
        assert_int_equal(mt_kernel_run(k, args, 2, &out, 1, &d), MT_ERR_NOMEM);
        assert_string_equal(d.message, "cannot allocate result 0");
        assert_null(out);
        mt_tensor_release(x);
        mt_tensor_release(y);
    }
    /* the kernel still works afterwards */
    mt_tensor *a = vec(2, 1.0f), *b = vec(3, 2.0f);
    mt_tensor *ab[2] = {a, b};
    mt_tensor *out = NULL;
    assert_int_equal(mt_kernel_run(k, ab, 2, &out, 1, NULL), MT_OK);
    assert_true(((float *)mt_tensor_data(out))[5] == 3.0f);
    mt_tensor_release(out);
    mt_tensor_release(a);
    mt_tensor_release(b);
    mt_kernel_release(k);
}

/* A loop in the executor whose variable would step past INT64_MAX stops
 * instead of wrapping around (signed overflow). */
static void test_loop_near_int64_max(void **s) {
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((\"n\",), \"float32\"), s: int64):\n"
        "    y = x\n"
        "    for i in range(9223372036854775800, 9223372036854775807, s):\n"
        "        y = y + 1.0\n"
        "    return y\n");
    mt_tensor *x = vec(2, 0.0f);
    mt_tensor *st = mt_tensor_create(MT_INT64, 0, NULL);
    int64_t steps[] = {5, 3, INT64_MAX, 7};
    float want[] = {2.0f, 3.0f, 1.0f, 1.0f};
    for (int i = 0; i < 4; i++) {
        *(int64_t *)mt_tensor_data(st) = steps[i];
        mt_tensor *args[2] = {x, st};
        mt_tensor *out = NULL;
        assert_int_equal(mt_kernel_run(k, args, 2, &out, 1, NULL), MT_OK);
        assert_true(((float *)mt_tensor_data(out))[0] == want[i]);
        mt_tensor_release(out);
    }
    mt_tensor_release(x);
    mt_tensor_release(st);
    mt_kernel_release(k);
}

/* ---- compile-time limits through the API ---------------------------------- */

static mt_diag compile_fail(const char *src) {
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, src, NULL, &d);
    if (k) {
        mt_kernel_release(k);
        fail_msg("expected a compile error");
    }
    return d;
}

static char *repeat(const char *head, const char *unit, size_t times, const char *tail) {
    size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
    char *s = malloc(hl + ul * times + tl + 1);
    assert_non_null(s);
    memcpy(s, head, hl);
    for (size_t i = 0; i < times; i++) memcpy(s + hl + i * ul, unit, ul);
    memcpy(s + hl + ul * times, tail, tl + 1);
    return s;
}

static void test_limits(void **s) {
    /* source size: 16 MiB */
    char *big = repeat("", "#", (size_t)16 << 20, "\n");
    mt_diag d = compile_fail(big);
    assert_int_equal(d.status, MT_ERR_LIMIT);
    assert_string_equal(d.message, "source is too large (16777217 bytes; the limit is 16777216)");
    free(big);

    /* tokens: 1,000,000 */
    char *toks = repeat("def f(x: Tensor((2,), \"float32\")):\n    return x", "+x", 600000, "\n");
    d = compile_fail(toks);
    assert_int_equal(d.status, MT_ERR_LIMIT);
    assert_string_equal(d.message, "too many tokens (more than 1000000)");
    free(toks);

    /* nesting: 200 levels of brackets */
    char *open = repeat("def f(x: Tensor((2,), \"float32\")):\n    return ", "(", 300, "x");
    char *deep = repeat(open, ")", 300, "\n");
    free(open);
    d = compile_fail(deep);
    assert_int_equal(d.status, MT_ERR_LIMIT);
    assert_string_equal(d.message, "nesting too deep (more than 200 levels)");
    free(deep);

    /* tensor size: 2**48 bytes */
    d = compile_fail("def f(x: Tensor((65536, 65536, 65536), \"float16\")):\n    return x\n");
    assert_int_equal(d.status, MT_ERR_LIMIT);
    assert_string_equal(d.message, "a tensor of shape (65536, 65536, 65536) and dtype float16 is too "
                                   "large (more than 2**48 bytes)");
    assert_int_equal(d.line, 1);
    assert_int_equal(d.col, 17);

    /* unrolled operations: 16**5 copies of one add stop at the limit, fast */
    d = compile_fail("def f(x: Tensor((2,), \"float32\")):\n"
                     "    for a in range(16):\n"
                     "        for b in range(16):\n"
                     "            for c in range(16):\n"
                     "                for e in range(16):\n"
                     "                    for g in range(16):\n"
                     "                        x = x + 1.0\n"
                     "    return x\n");
    assert_int_equal(d.status, MT_ERR_LIMIT);
    assert_string_equal(d.message, "kernel too large: more than 2048 operations after unrolling");
    assert_int_equal(d.line, 7);

    /* 100,000 names bound in a straight line, each read once: compiles (a
     * name lookup scanned every name bound since, 53 s; now a hash probe) */
    char *names = malloc(2200000);
    assert_non_null(names);
    size_t n = (size_t)sprintf(names, "def f(x: Tensor((4,), \"float32\")):\n");
    for (int i = 0; i < 100000; i++) n += (size_t)sprintf(names + n, "    a%d = x\n", i);
    sprintf(names + n, "    return a99999 + a0\n");
    mt_diag dn;
    mt_kernel *k = mt_jit_compile(test_ctx, names, NULL, &dn);
    if (!k) fail_msg("%s", dn.text);
    mt_kernel_release(k);
    free(names);
}

/* ---- internal errors --------------------------------------------------------- */

/* The mechanism every API function uses: mt_ice longjmps to the innermost
 * frame with MT_ERR_INTERNAL and the C place; the diagnostic has no source
 * place. (No public path is known to reach an internal error: the fuzzer
 * treats one as a finding.) */
static void test_internal_error_frame(void **s) {
    mt_errframe fr;
    volatile int reached = 0;
    if (MT_TRY(&fr)) {
        reached = 1;
        mt_ice("invariant %d broken", 42);
    } else {
        mt_err_pop(&fr);
    }
    assert_int_equal(reached, 1);
    assert_int_equal(fr.status, MT_ERR_INTERNAL);
    assert_non_null(strstr(fr.msg, "internal error at test_robust.c:"));
    assert_non_null(strstr(fr.msg, "invariant 42 broken"));
    mt_diag d;
    mt_diag_from_frame(&d, &fr, "k.py", "def f():\n");
    assert_int_equal(d.status, MT_ERR_INTERNAL);
    assert_int_equal(d.line, 0);
    assert_non_null(strstr(d.text, "k.py: error: internal error at test_robust.c:"));
}

/* Diagnostics render the line the lexer counted, for every line ending. */
static void test_diag_line_endings(void **s) {
    const char *srcs[] = {
        "def f(a: Tensor((2,), \"float32\")):\n    out = a + c\n    return out\n",
        "def f(a: Tensor((2,), \"float32\")):\r\n    out = a + c\r\n    return out\r\n",
        "def f(a: Tensor((2,), \"float32\")):\r    out = a + c\r    return out\r",
    };
    for (int i = 0; i < 3; i++) {
        mt_diag d = compile_fail(srcs[i]);
        assert_int_equal(d.status, MT_ERR_NAME);
        assert_int_equal(d.line, 2);
        assert_int_equal(d.col, 15);
        assert_non_null(strstr(d.text, "\n    out = a + c\n              ^\n"));
    }
}

/* Every input the fuzzers found a bug with (tests/fuzz/regressions: kernels,
 * each with a comment on what it broke, and .npy files) compiles, for the
 * CPU and for cuda emulated, or fails with a user error, or loads; under the ASan+UBSan suite this also checks
 * that nothing undefined happens on the way. */
static void test_fuzz_regressions(void **s) {
    const char *root = getenv("MT_SOURCE_DIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/regressions", root ? root : ".");
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open %s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".npy") == 0) {
            /* .npy inputs of fuzz_npy: loaded or refused, never a crash */
            char err[256];
            mt_tensor_release(mt_npy_load(path, err, sizeof err));
            n++;
            continue;
        }
        if (len < 4 || strcmp(e->d_name + len - 3, ".py") != 0) continue;
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static char src[1 << 16];
        size_t got = fread(src, 1, sizeof src - 1, f);
        src[got] = 0;
        fclose(f);
        for (int gpu = 0; gpu < 2; gpu++) { /* the CPU, and cuda emulated as fuzz_graph does one input in four */
            mt_compile_options o;
            mt_compile_options_init(&o);
            o.filename = e->d_name;
            if (gpu) o.target = MT_TARGET_CUDA, o.emulate = 1;
            mt_diag dg;
            mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &dg);
            if (k) {
                assert_non_null(mt_kernel_dump(k, MT_STAGE_TIR_SCHED));
                mt_kernel_release(k);
            } else if (dg.status == MT_ERR_INTERNAL || !dg.message[0]) {
                fail_msg("%s%s", gpu ? "(target cuda, emulated) " : "", dg.text);
            }
        }
        n++;
    }
    closedir(d);
    assert_true(n >= 6);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_garbage),
        cmocka_unit_test(test_names_garbage),
        cmocka_unit_test(test_kernel_garbage),
        cmocka_unit_test(test_compile_options_garbage),
        cmocka_unit_test(test_run_argument_errors),
        cmocka_unit_test(test_zero_size),
        cmocka_unit_test(test_result_too_large),
        cmocka_unit_test(test_loop_near_int64_max),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_internal_error_frame),
        cmocka_unit_test(test_diag_line_endings),
        cmocka_unit_test(test_fuzz_regressions),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
