/*
 * test_dlpack.c -- tensors in and out through DLPack (src/runtime/dlpack.c).
 *
 * Import: a producer's managed tensor (made here, with a deleter that counts
 * its calls) becomes a tensor kernels run on, byte offsets and strides
 * included; the deleter runs exactly once, at the tensor's last release, and
 * never for a refused tensor. Every refusal says why. Export: a tensor's
 * managed tensor describes it exactly and keeps it alive until its deleter.
 * Round trips share memory. CUDA tensors: refused with the reason on a
 * machine without a GPU, taken on one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "minitriton.h"
#include "runtime/dlpack_internal.h" /* <dlpack/dlpack.h>, with DLPack 1.0's versioned struct */


/* ---- a producer --------------------------------------------------------------- */

static int deleted; /* deleter calls */
static void count_delete(DLManagedTensor *m) { deleted++; (void)m; }
static void count_delete_v(DLManagedTensorVersioned *m) { deleted++; (void)m; }

typedef struct producer {
    DLManagedTensor m;
    DLManagedTensorVersioned mv;
    int64_t shape[16], strides[16];
    float data[64];
} producer;

/* A float32 tensor of the given shape over p->data (0, 1, 2, ...). */
static void make(producer *p, int ndim, const int64_t *shape) {
    memset(p, 0, sizeof *p);
    for (int i = 0; i < 64; i++) p->data[i] = (float)i;
    for (int i = 0; i < ndim; i++) p->shape[i] = shape[i];
    DLTensor *dl = &p->m.dl_tensor;
    dl->data = p->data;
    dl->device = (DLDevice){kDLCPU, 0};
    dl->ndim = ndim;
    dl->dtype = (DLDataType){kDLFloat, 32, 1};
    dl->shape = p->shape;
    dl->strides = NULL;
    p->m.deleter = count_delete;
    p->mv.version = (DLPackVersion){1, 0};
    p->mv.deleter = count_delete_v;
}

static void sync_versioned(producer *p) { p->mv.dl_tensor = p->m.dl_tensor; }

static mt_context *ctx;
static mt_kernel *twice; /* a * 2.0 over float32 (2, 3) */

static int setup(void **state) {
    ctx = mt_context_create(NULL);
    mt_diag d;
    twice = ctx ? mt_jit_compile(ctx,
                                 "def twice(a: Tensor((2, 3), \"float32\")):\n"
                                 "    return a * 2.0\n", NULL, &d)
                : NULL;
    deleted = 0;
    return twice ? 0 : -1;
}

static int teardown(void **state) {
    mt_kernel_release(twice);
    mt_context_destroy(ctx);
    return 0;
}

static const int64_t shape23[2] = {2, 3};

/* runs twice on t, returns the status (and the result in *out, or NULL) */
static mt_status run_twice(mt_tensor *t, mt_tensor **out, mt_diag *d) {
    *out = NULL;
    return mt_kernel_run(twice, &t, 1, out, 1, d);
}

/* ---- import ------------------------------------------------------------------- */

static void test_import_runs(void **state) {
    producer p;
    make(&p, 2, shape23);
    mt_diag d;
    mt_tensor *t = mt_tensor_from_dlpack(&p.m, &d);
    assert_non_null(t);
    assert_int_equal(d.status, MT_OK);
    assert_ptr_equal(mt_tensor_data(t), p.data);
    assert_int_equal(mt_tensor_device(t).type, MT_DEVICE_CPU);
    mt_tensor *out;
    assert_int_equal(run_twice(t, &out, &d), MT_OK);
    const float *o = mt_tensor_data(out);
    for (int i = 0; i < 6; i++) assert_true(o[i] == 2.0f * (float)i);
    mt_tensor_release(out);
    assert_int_equal(deleted, 0);
    mt_tensor_retain(t);
    mt_tensor_release(t);
    assert_int_equal(deleted, 0); /* only the last release */
    mt_tensor_release(t);
    assert_int_equal(deleted, 1);
}

static void test_import_byte_offset_and_strides(void **state) {
    producer p;
    make(&p, 2, shape23);
    p.m.dl_tensor.byte_offset = 4 * sizeof(float);
    p.strides[0] = 3, p.strides[1] = 1; /* compact, given */
    p.m.dl_tensor.strides = p.strides;
    mt_diag d;
    mt_tensor *t = mt_tensor_from_dlpack(&p.m, &d);
    assert_non_null(t);
    assert_ptr_equal(mt_tensor_data(t), p.data + 4);
    mt_tensor *out;
    assert_int_equal(run_twice(t, &out, &d), MT_OK);
    assert_true(((const float *)mt_tensor_data(out))[5] == 18.0f);
    mt_tensor_release(out);
    mt_tensor_release(t);

    /* a transposed view: taken, refused when run */
    int64_t shape32[2] = {3, 2};
    make(&p, 2, shape32);
    p.m.dl_tensor.shape[0] = 2, p.m.dl_tensor.shape[1] = 3;
    p.strides[0] = 1, p.strides[1] = 2;
    p.m.dl_tensor.strides = p.strides;
    t = mt_tensor_from_dlpack(&p.m, &d);
    assert_non_null(t);
    assert_int_equal(mt_tensor_strides(t)[0], 1);
    assert_int_equal(mt_tensor_strides(t)[1], 2);
    assert_int_equal(run_twice(t, &out, &d), MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.message, "not C-contiguous"));
    mt_tensor_release(t);
    assert_int_equal(deleted, 2);
}

typedef struct refusal {
    const char *what;
    void (*spoil)(producer *p);
    mt_status status;
    const char *message; /* a part of it */
} refusal;

static void rank9(producer *p) { p->m.dl_tensor.ndim = 9; }
static void negative(producer *p) { p->shape[1] = -1; }
static void no_shape(producer *p) { p->m.dl_tensor.shape = NULL; }
static void bf32(producer *p) { p->m.dl_tensor.dtype = (DLDataType){kDLBfloat, 32, 1}; }
static void lanes(producer *p) { p->m.dl_tensor.dtype = (DLDataType){kDLFloat, 32, 4}; }
static void int16(producer *p) { p->m.dl_tensor.dtype = (DLDataType){kDLInt, 16, 1}; }
static void misaligned(producer *p) { p->m.dl_tensor.byte_offset = 2; }
static void opencl(producer *p) { p->m.dl_tensor.device = (DLDevice){kDLOpenCL, 0}; }
static void null_data(producer *p) { p->m.dl_tensor.data = NULL; }

static void test_import_refusals(void **state) {
    static const refusal cases[] = {
        {"rank 9", rank9, MT_ERR_LIMIT, "at most 8 dimensions"},
        {"negative dim", negative, MT_ERR_INVALID_ARG, "dimension 1 of size -1"},
        {"no shape", no_shape, MT_ERR_INVALID_ARG, "without a shape"},
        {"bfloat32", bf32, MT_ERR_UNSUPPORTED, "dtype bfloat32 is not supported"},
        {"lanes", lanes, MT_ERR_UNSUPPORTED, "dtype float32x4 is not supported"},
        {"int16", int16, MT_ERR_UNSUPPORTED, "dtype int16 is not supported"},
        {"misaligned", misaligned, MT_ERR_UNSUPPORTED, "not aligned to 4 bytes"},
        {"opencl", opencl, MT_ERR_UNSUPPORTED, "device type 4 is not supported"},
        {"null data", null_data, MT_ERR_INVALID_ARG, "data is NULL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        producer p;
        make(&p, 2, shape23);
        cases[i].spoil(&p);
        mt_diag d;
        mt_tensor *t = mt_tensor_from_dlpack(&p.m, &d);
        if (t || d.status != cases[i].status || !strstr(d.message, cases[i].message))
            fail_msg("%s: got %p, %s '%s'", cases[i].what, (void *)t, mt_status_str(d.status), d.message);
        /* the versioned import refuses it the same way */
        sync_versioned(&p);
        t = mt_tensor_from_dlpack_versioned(&p.mv, &d);
        if (t || d.status != cases[i].status) fail_msg("%s (versioned): not refused", cases[i].what);
    }
    assert_int_equal(deleted, 0);
    mt_diag d;
    assert_null(mt_tensor_from_dlpack(NULL, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_null(mt_tensor_from_dlpack(NULL, NULL)); /* diag may be NULL */
}

static void test_import_versioned(void **state) {
    producer p;
    make(&p, 2, shape23);
    sync_versioned(&p);
    p.mv.version = (DLPackVersion){2, 0};
    mt_diag d;
    assert_null(mt_tensor_from_dlpack_versioned(&p.mv, &d));
    assert_int_equal(d.status, MT_ERR_UNSUPPORTED);
    assert_non_null(strstr(d.message, "DLPack 2.0 tensor"));

    /* read-only: an argument, not a result slot */
    p.mv.version = (DLPackVersion){1, 1};
    p.mv.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    mt_tensor *t = mt_tensor_from_dlpack_versioned(&p.mv, &d);
    assert_non_null(t);
    mt_tensor *out;
    assert_int_equal(run_twice(t, &out, &d), MT_OK);
    mt_tensor *ro = t;
    assert_int_equal(mt_kernel_run(twice, &out, 1, &ro, 1, &d), MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.message, "read-only"));
    assert_true(p.data[1] == 1.0f); /* untouched */
    mt_tensor_release(out);
    mt_tensor_release(t);
    assert_int_equal(deleted, 1);
}

static void test_import_cuda(void **state) {
    producer p;
    make(&p, 2, shape23);
    p.m.dl_tensor.device = (DLDevice){kDLCUDA, 0};
    mt_diag d;
    mt_tensor *t = mt_tensor_from_dlpack(&p.m, &d);
    if (!t) { /* no GPU here: the reason, and the tensor still the caller's */
        assert_int_equal(d.status, MT_ERR_UNAVAILABLE);
        assert_non_null(strstr(d.message, "a DLPack tensor on cuda:0 needs that GPU"));
        assert_int_equal(deleted, 0);
        return;
    }
    /* a GPU: the tensor is on it (the data pointer is not dereferenced here) */
    assert_int_equal(mt_tensor_device(t).type, MT_DEVICE_CUDA);
    assert_int_equal(mt_tensor_device(t).id, 0);
    mt_tensor_release(t);
    assert_int_equal(deleted, 1);
}

/* ---- export ------------------------------------------------------------------- */

static void test_export(void **state) {
    int64_t shape[3] = {2, 3, 4};
    mt_tensor *t = mt_tensor_create(MT_INT32, 3, shape);
    int32_t *v = mt_tensor_data(t);
    for (int i = 0; i < 24; i++) v[i] = i * 7;
    mt_diag d;
    DLManagedTensor *m = mt_tensor_to_dlpack(t, &d);
    assert_non_null(m);
    mt_tensor_release(t); /* the managed tensor keeps it alive */
    const DLTensor *dl = &m->dl_tensor;
    assert_ptr_equal(dl->data, v);
    assert_int_equal(dl->device.device_type, kDLCPU);
    assert_int_equal(dl->ndim, 3);
    assert_int_equal(dl->dtype.code, kDLInt);
    assert_int_equal(dl->dtype.bits, 32);
    assert_int_equal(dl->dtype.lanes, 1);
    assert_int_equal(dl->byte_offset, 0);
    for (int i = 0; i < 3; i++) assert_int_equal(dl->shape[i], shape[i]);
    assert_int_equal(dl->strides[0], 12);
    assert_int_equal(dl->strides[1], 4);
    assert_int_equal(dl->strides[2], 1);
    assert_int_equal(((int32_t *)dl->data)[23], 161);
    m->deleter(m); /* frees t (ASan and valgrind check) */

    assert_null(mt_tensor_to_dlpack(NULL, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
}

static void test_export_versioned_result(void **state) {
    producer p;
    make(&p, 2, shape23);
    mt_diag d;
    mt_tensor *a = mt_tensor_from_dlpack(&p.m, &d), *out;
    assert_int_equal(run_twice(a, &out, &d), MT_OK);
    mt_tensor_release(a);
    DLManagedTensorVersioned *m = mt_tensor_to_dlpack_versioned(out, &d);
    mt_tensor_release(out);
    assert_non_null(m);
    assert_int_equal(m->version.major, 1);
    assert_int_equal(m->flags, 0);
    assert_int_equal(m->dl_tensor.dtype.code, kDLFloat);
    assert_true(((const float *)m->dl_tensor.data)[5] == 10.0f);
    m->deleter(m);
    assert_int_equal(deleted, 1);
}

/* A result on the emulated GPU answers to cuda:0, but its memory is the
 * host's test device memory, not CUDA's: exporting it is refused. */
static void test_export_emulated_refused(void **state) {
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    o.emulate = 1;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(ctx, "def twice(a: Tensor((2, 3), \"float32\")):\n    return a * 2.0\n", &o, &d);
    assert_non_null(k);
    mt_tensor *host = mt_tensor_create(MT_FLOAT32, 2, shape23), *dev = NULL, *out = NULL;
    assert_int_equal(mt_kernel_tensor_to(k, host, mt_kernel_param_device(k, 0), &dev, &d), MT_OK);
    assert_int_equal(mt_kernel_run(k, &dev, 1, &out, 1, &d), MT_OK);
    assert_int_equal(mt_tensor_device(out).type, MT_DEVICE_CUDA);
    assert_null(mt_tensor_to_dlpack(out, &d));
    assert_int_equal(d.status, MT_ERR_UNSUPPORTED);
    assert_non_null(strstr(d.message, "the tensor is on the emulated GPU"));
    assert_null(mt_tensor_to_dlpack_versioned(out, &d));
    mt_tensor_release(out);
    mt_tensor_release(dev);
    mt_tensor_release(host);
    mt_kernel_release(k);
}

static void test_round_trip_dtypes(void **state) {
    for (int dt = 0; dt < MT_DTYPE_COUNT_; dt++) {
        int64_t shape[1] = {5};
        mt_tensor *t = mt_tensor_create((mt_dtype)dt, 1, shape);
        mt_diag d;
        DLManagedTensor *m = mt_tensor_to_dlpack(t, &d);
        assert_int_equal(m->dl_tensor.dtype.bits, 8 * mt_dtype_size((mt_dtype)dt));
        if (dt == MT_BOOL) assert_int_equal(m->dl_tensor.dtype.code, 6); /* kDLBool */
        if (dt == MT_BFLOAT16) assert_int_equal(m->dl_tensor.dtype.code, kDLBfloat);
        mt_tensor *back = mt_tensor_from_dlpack(m, &d);
        if (!back) fail_msg("%s: %s", mt_dtype_str((mt_dtype)dt), d.message);
        assert_int_equal(mt_tensor_dtype(back), dt);
        assert_ptr_equal(mt_tensor_data(back), mt_tensor_data(t));
        mt_tensor_release(t);
        mt_tensor_release(back); /* calls m's deleter, which releases t */
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_import_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_byte_offset_and_strides, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_versioned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_cuda, setup, teardown),
        cmocka_unit_test_setup_teardown(test_export, setup, teardown),
        cmocka_unit_test_setup_teardown(test_export_versioned_result, setup, teardown),
        cmocka_unit_test_setup_teardown(test_export_emulated_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_dtypes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
