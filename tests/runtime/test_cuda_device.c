/*
 * test_cuda_device.c -- the CUDA device (src/runtime/device_cuda.c) with
 * the driver found the usual way (libcuda.so.1).
 *
 * Without a GPU (no driver, or a driver and no device) the first test
 * checks that creating the device says so, MT_ERR_UNAVAILABLE and a message
 * naming what is missing, and every other test prints why and is skipped.
 * With one, cuda:0 is opened once for the program and the tests check its
 * properties; memory (copies every way, at offsets, exactly); a vector add
 * compiled by NVRTC (src/codegen/nvrtc.c) for the device's architecture,
 * launched on 1M floats and compared exactly, with its time from the
 * driver's events printed; a hand-written PTX kernel with int64 scalar
 * arguments; dynamic shared memory past the 48 KiB default; the errors a
 * launch, a load and an allocation can give; and use from another thread.
 * The driver missing on purpose (MT_CUDA_DRIVER_LIBRARY) is
 * test_cuda_absent.c.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codegen/nvrtc.h"
#include "runtime/cuda_driver.h"
#include "runtime/device.h"

static mt_dev *gpu;          /* cuda:0, or NULL */
static mt_dev_err gpu_why;   /* why not */
static mt_status gpu_status;

static int setup(void **state) {
    (void)state;
    gpu_status = mt_dev_cuda_open(0, &gpu, &gpu_why);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    mt_dev_release(gpu);
    return 0;
}

/* Skips the calling test, saying why, without a GPU. */
static void need_gpu(void) {
    if (gpu) return;
    printf("skipped: %s\n", gpu_why.msg);
    skip();
}

static void need_nvrtc(void) {
    char why[512];
    if (mt_nvrtc_available(why, sizeof why)) return;
    printf("skipped: %s\n", why);
    skip();
}

/* call, whose `e` is the macro's own error block, must return MT_OK. */
#define OK(call)                                                                          \
    do {                                                                                  \
        mt_dev_err e_ = {{0}};                                                            \
        mt_dev_err *e = &e_;                                                              \
        mt_status st_ = (call);                                                           \
        if (st_ != MT_OK) fail_msg("%s: %s (%s)", #call, e_.msg, mt_status_str(st_));     \
    } while (0)

/* Without a GPU: the reason, naming what is missing. With one: the same
 * for an ordinal past the last. */
static void test_availability(void **state) {
    (void)state;
    mt_dev_err e = {{0}};
    int n = mt_dev_cuda_count(&e);
    if (!gpu) {
        printf("no CUDA device: %s\n", gpu_why.msg);
        assert_int_equal(gpu_status, MT_ERR_UNAVAILABLE);
        assert_int_equal(n, 0);
        assert_string_equal(e.msg, gpu_why.msg);
        void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) assert_non_null(strstr(gpu_why.msg, "CUDA driver not found (libcuda.so.1"));
        else dlclose(lib);
        assert_null(mt_dev_cuda_create(0, &e));
        return;
    }
    assert_true(n >= 1);
    mt_dev *d = (mt_dev *)&e;
    assert_int_equal(mt_dev_cuda_open(n, &d, &e), MT_ERR_UNAVAILABLE);
    assert_null(d);
    char want[64];
    snprintf(want, sizeof want, "no CUDA device %d", n);
    assert_non_null(strstr(e.msg, want));
    assert_int_equal(mt_dev_cuda_open(-1, &d, &e), MT_ERR_UNAVAILABLE);
}

static void test_props(void **state) {
    (void)state;
    need_gpu();
    mt_dev_cuda_props p;
    assert_true(mt_dev_cuda_get_props(gpu, &p));
    printf("cuda:0: %s, sm_%d, %d SMs, %d bytes shared per block (opt-in), driver %d\n", p.name,
           p.sm, p.sms, p.max_shared_optin, p.driver_version);
    assert_int_equal(mt_dev_cuda_sm(gpu), p.sm);
    assert_int_equal(p.sm, p.cc_major * 10 + p.cc_minor);
    assert_true(p.sm >= 50 && p.sms > 0 && p.warp_size == 32 && p.max_threads >= 1024);
    assert_true(p.max_shared_optin >= 48 * 1024);
    assert_non_null(mt_dev_cuda_stream(gpu));
    assert_string_equal(gpu->ops->kind, "cuda");
    assert_false(gpu->ops->host_memory);
    assert_int_equal(gpu->where.type, MT_DEVICE_CUDA);
    assert_int_equal(gpu->where.id, 0);
    /* not a CUDA device */
    mt_dev_err e;
    mt_dev *t = mt_dev_test_create(0, &e);
    assert_int_equal(mt_dev_cuda_sm(t), 0);
    assert_null(mt_dev_cuda_stream(t));
    assert_false(mt_dev_cuda_get_props(t, &p));
    mt_dev_release(t);
}

/* Host -> device -> device (at offsets) -> host, exactly; a zero-byte
 * block; an allocation too large; and a block outliving the owner's
 * reference to its device. */
static void test_memory(void **state) {
    (void)state;
    need_gpu();
    const mt_dev_ops *o = gpu->ops;
    void *a, *b;
    size_t ca, cb;
    OK(o->alloc(gpu, 1000, &a, &ca, e));
    OK(o->alloc(gpu, 0, &b, &cb, e));
    assert_true(ca >= 1000 && cb > 0 && a != b);
    unsigned char src[1000], back[1000];
    for (int i = 0; i < 1000; i++) src[i] = (unsigned char)(i * 7 + 3);
    OK(o->copy_h2d(gpu, a, src, sizeof src, e));
    OK(o->copy_d2d(gpu, b, (char *)a + 100, 64, e));
    memset(back, 0, sizeof back);
    OK(o->copy_d2h(gpu, back, b, 64, e));
    assert_memory_equal(back, src + 100, 64);
    OK(o->copy_d2h(gpu, back, a, sizeof back, e));
    assert_memory_equal(back, src, sizeof src);
    OK(o->copy_d2d(gpu, a, a, 1000, e));               /* equal ends: nothing to do */
    OK(o->copy_h2d(gpu, (char *)a + 10, src, 0, e));  /* zero bytes */
    OK(o->sync(gpu, e));
    o->free(gpu, a, ca);
    o->free(gpu, b, cb);

    mt_dev_err e = {{0}};
    void *huge;
    size_t ch;
    assert_int_equal(o->alloc(gpu, (size_t)1 << 50, &huge, &ch, &e), MT_ERR_NOMEM);
    assert_null(huge);
    assert_non_null(strstr(e.msg, "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY"));

    /* a second device on the same GPU; its block keeps it alive */
    mt_dev *d2 = mt_dev_cuda_create(0, &e);
    assert_non_null(d2);
    OK(d2->ops->alloc(d2, 256, &a, &ca, e));
    mt_dev_release(d2);
    OK(d2->ops->copy_h2d(d2, a, src, 256, e));
    OK(d2->ops->copy_d2h(d2, back, a, 256, e));
    assert_memory_equal(back, src, 256);
    d2->ops->free(d2, a, ca); /* the last reference: destroys d2 */
}

static const char *vadd_src =
    "extern \"C\" __global__ void vadd(const float *a, const float *b, float *c, long long n) {\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n"
    "extern \"C\" __global__ void reverse(int *x, long long n) {\n"
    "    extern __shared__ int s[];\n"
    "    for (long long i = threadIdx.x; i < n; i += blockDim.x) s[i] = x[i];\n"
    "    __syncthreads();\n"
    "    for (long long i = threadIdx.x; i < n; i += blockDim.x) x[i] = s[n - 1 - i];\n"
    "}\n";

/* vadd_src compiled for the GPU and loaded. */
static mt_dev_module *load_vadd(void) {
    mt_nvrtc_out out;
    char err[512];
    if (mt_nvrtc_compile(vadd_src, "vadd.cu", mt_dev_cuda_sm(gpu), &out, err, sizeof err) != MT_OK)
        fail_msg("%s", err);
    printf("compiled for sm_%d in %.1f ms (%zu-byte cubin)\n", mt_dev_cuda_sm(gpu), out.ms,
           out.size);
    mt_dev_image img = {.format = MT_IMAGE_CUBIN, .data = out.image, .size = out.size};
    mt_dev_module *m;
    OK(gpu->ops->load(gpu, &img, &m, e));
    mt_nvrtc_out_free(&out); /* the driver has its own copy */
    return m;
}

enum { N = 1 << 20 };

/* The kernel's time on the device's stream, from the driver's events. */
static float timed_launch(const mt_dev_launch *l) {
    const mt_cuda_api *cu;
    OK(mt_cuda_driver(&cu, e));
    mt_cu_stream s = mt_dev_cuda_stream(gpu);
    mt_cu_event t0, t1;
    float ms = 0;
    OK(mt_cuda_check(cu, cu->cuEventCreate(&t0, MT_CU_EVENT_DEFAULT), "cuEventCreate", e));
    OK(mt_cuda_check(cu, cu->cuEventCreate(&t1, MT_CU_EVENT_DEFAULT), "cuEventCreate", e));
    OK(mt_cuda_check(cu, cu->cuEventRecord(t0, s), "cuEventRecord", e));
    OK(gpu->ops->launch(gpu, l, e));
    OK(mt_cuda_check(cu, cu->cuEventRecord(t1, s), "cuEventRecord", e));
    OK(mt_cuda_check(cu, cu->cuEventSynchronize(t1), "cuEventSynchronize", e));
    OK(mt_cuda_check(cu, cu->cuEventElapsedTime(&ms, t0, t1), "cuEventElapsedTime", e));
    OK(mt_cuda_check(cu, cu->cuEventDestroy(t0), "cuEventDestroy", e));
    OK(mt_cuda_check(cu, cu->cuEventDestroy(t1), "cuEventDestroy", e));
    return ms;
}

/* c = a + b on 1M floats, compared exactly with the host's sums. */
static void test_vadd(void **state) {
    (void)state;
    need_gpu();
    need_nvrtc();
    const mt_dev_ops *o = gpu->ops;
    mt_dev_module *m = load_vadd();
    void *fn;
    OK(o->function(gpu, m, "vadd", &fn, e));
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
    assert_true(a && b && c);
    for (int i = 0; i < N; i++) a[i] = (float)i * 0.5f, b[i] = 1.0f / (float)(i + 1), c[i] = -1;
    void *da, *db, *dc;
    size_t cap[3];
    OK(o->alloc(gpu, N * sizeof *a, &da, &cap[0], e));
    OK(o->alloc(gpu, N * sizeof *b, &db, &cap[1], e));
    OK(o->alloc(gpu, N * sizeof *c, &dc, &cap[2], e));
    OK(o->copy_h2d(gpu, da, a, N * sizeof *a, e));
    OK(o->copy_h2d(gpu, db, b, N * sizeof *b, e));
    uint64_t args[] = {(uintptr_t)da, (uintptr_t)db, (uintptr_t)dc, N};
    mt_dev_launch l = {.fn = fn, .name = "vadd", .nptrs = 3, .nscalars = 1, .args = args,
                       .dims = {.grid = {(N + 255) / 256}, .block = {256}}};
    OK(o->launch(gpu, &l, e));
    OK(o->sync(gpu, e));
    OK(o->copy_d2h(gpu, c, dc, N * sizeof *c, e));
    for (int i = 0; i < N; i++)
        if (c[i] != a[i] + b[i]) fail_msg("c[%d] = %.9g, want %.9g", i, c[i], a[i] + b[i]);
    float ms = timed_launch(&l);
    printf("vadd on %d floats: %.3f ms (%.0f GB/s)\n", N, ms, 3.0 * N * 4 / (ms * 1e6));
    o->free(gpu, da, cap[0]);
    o->free(gpu, db, cap[1]);
    o->free(gpu, dc, cap[2]);
    o->unload(gpu, m);
    free(a), free(b), free(c);
}

/* A kernel using 64 KiB of dynamic shared memory (over the default 48
 * KiB: opted into at launch); more than the device has is refused. */
static void test_dynamic_shared(void **state) {
    (void)state;
    need_gpu();
    need_nvrtc();
    const mt_dev_ops *o = gpu->ops;
    mt_dev_module *m = load_vadd();
    void *fn, *dx;
    size_t cap;
    OK(o->function(gpu, m, "reverse", &fn, e));
    enum { K = 16 * 1024 }; /* ints: 64 KiB */
    int *x = malloc(K * sizeof *x);
    for (int i = 0; i < K; i++) x[i] = i * 3 + 1;
    OK(o->alloc(gpu, K * sizeof *x, &dx, &cap, e));
    OK(o->copy_h2d(gpu, dx, x, K * sizeof *x, e));
    uint64_t args[] = {(uintptr_t)dx, K};
    mt_dev_launch l = {.fn = fn, .name = "reverse", .nptrs = 1, .nscalars = 1, .args = args,
                       .dims = {.grid = {1}, .block = {512}, .shared_bytes = K * sizeof *x}};
    OK(o->launch(gpu, &l, e));
    OK(o->copy_d2h(gpu, x, dx, K * sizeof *x, e)); /* ordered after the launch */
    for (int i = 0; i < K; i++)
        if (x[i] != (K - 1 - i) * 3 + 1) fail_msg("x[%d] = %d", i, x[i]);
    mt_dev_cuda_props p;
    mt_dev_cuda_get_props(gpu, &p);
    l.dims.shared_bytes = (uint32_t)p.max_shared_optin + 1024;
    mt_dev_err e = {{0}};
    assert_int_equal(o->launch(gpu, &l, &e), MT_ERR_LIMIT);
    assert_non_null(strstr(e.msg, "reverse"));
    o->free(gpu, dx, cap);
    o->unload(gpu, m);
    free(x);
}

/* fill(dst, n, value): dst[i] = value for i < n, 64-bit words. Hand-written
 * PTX with int64 scalar parameters, loaded without its NUL (the device
 * adds one). */
static const char fill_ptx[] =
    ".version 7.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry fill(.param .u64 dst, .param .u64 n, .param .u64 value)\n"
    "{\n"
    "    .reg .pred %p;\n"
    "    .reg .b32 %r<4>;\n"
    "    .reg .b64 %rd<8>;\n"
    "    ld.param.u64 %rd1, [dst];\n"
    "    ld.param.u64 %rd2, [n];\n"
    "    ld.param.u64 %rd3, [value];\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    mov.u32 %r3, %tid.x;\n"
    "    mul.wide.u32 %rd4, %r1, %r2;\n"
    "    cvt.u64.u32 %rd5, %r3;\n"
    "    add.u64 %rd4, %rd4, %rd5;\n"
    "    setp.ge.u64 %p, %rd4, %rd2;\n"
    "    @%p bra DONE;\n"
    "    cvta.to.global.u64 %rd6, %rd1;\n"
    "    shl.b64 %rd7, %rd4, 3;\n"
    "    add.u64 %rd6, %rd6, %rd7;\n"
    "    st.global.u64 [%rd6], %rd3;\n"
    "DONE:\n"
    "    ret;\n"
    "}\n";

static mt_dev_module *load_fill(void **fn) {
    mt_dev_image img = {.format = MT_IMAGE_PTX, .data = fill_ptx, .size = sizeof fill_ptx - 1};
    mt_dev_module *m;
    OK(gpu->ops->load(gpu, &img, &m, e));
    OK(gpu->ops->function(gpu, m, "fill", fn, e));
    return m;
}

/* Fills words [0, n) of a zeroed 1024-word block with value and checks all
 * 1024 (on the calling thread). */
static void fill_and_check(void *fn, int64_t n, uint64_t value) {
    const mt_dev_ops *o = gpu->ops;
    enum { W = 1024 };
    uint64_t host[W] = {0};
    void *dst;
    size_t cap;
    OK(o->alloc(gpu, sizeof host, &dst, &cap, e));
    OK(o->copy_h2d(gpu, dst, host, sizeof host, e));
    uint64_t args[] = {(uintptr_t)dst, (uint64_t)n, value};
    mt_dev_launch l = {.fn = fn, .name = "fill", .nptrs = 1, .nscalars = 2, .args = args,
                       .dims = {.grid = {(W + 127) / 128}, .block = {128}}};
    OK(o->launch(gpu, &l, e));
    OK(o->sync(gpu, e));
    OK(o->copy_d2h(gpu, host, dst, sizeof host, e));
    for (int i = 0; i < W; i++)
        if (host[i] != (i < n ? value : 0))
            fail_msg("word %d = %#llx", i, (unsigned long long)host[i]);
    o->free(gpu, dst, cap);
}

static void test_ptx(void **state) {
    (void)state;
    need_gpu();
    void *fn;
    mt_dev_module *m = load_fill(&fn);
    fill_and_check(fn, 1000, 0x0123456789abcdefULL);
    gpu->ops->unload(gpu, m);
}

static void *fill_thread(void *fn) {
    fill_and_check(fn, 77, 42);
    return NULL;
}

/* Another thread copies and launches (the context is made current there). */
static void test_other_thread(void **state) {
    (void)state;
    need_gpu();
    void *fn;
    mt_dev_module *m = load_fill(&fn);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fill_thread, fn), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    gpu->ops->unload(gpu, m);
}

/* What loading, resolving and launching can refuse, with the driver's
 * words; the device still works after. */
static void test_errors(void **state) {
    (void)state;
    need_gpu();
    const mt_dev_ops *o = gpu->ops;
    mt_dev_err e = {{0}};
    mt_dev_module *m;
    static const char junk[64] = "this is not a cubin";
    mt_dev_image img = {.format = MT_IMAGE_CUBIN, .data = junk, .size = sizeof junk};
    assert_int_not_equal(o->load(gpu, &img, &m, &e), MT_OK);
    assert_null(m);
    assert_non_null(strstr(e.msg, "cuModuleLoadDataEx: CUDA_ERROR_"));
    printf("junk cubin: %s\n", e.msg);
    static const char bad_ptx[] = ".version 7.0\n.target sm_50\nnonsense;\n";
    img = (mt_dev_image){.format = MT_IMAGE_PTX, .data = bad_ptx}; /* size 0: up to the NUL */
    assert_int_not_equal(o->load(gpu, &img, &m, &e), MT_OK);
    printf("bad PTX: %s\n", e.msg);
    img = (mt_dev_image){.format = MT_IMAGE_HOST};
    assert_int_equal(o->load(gpu, &img, &m, &e), MT_ERR_UNSUPPORTED);

    void *fn;
    m = load_fill(&fn);
    void *none;
    assert_int_equal(o->function(gpu, m, "no_such_kernel", &none, &e), MT_ERR_INVALID_ARG);
    assert_non_null(strstr(e.msg, "no_such_kernel"));
    uint64_t args[] = {0, 0, 0};
    mt_dev_launch l = {.fn = fn, .name = "fill", .nptrs = 1, .nscalars = 2, .args = args,
                       .dims = {.grid = {1}, .block = {4096}}}; /* too many threads */
    assert_int_equal(o->launch(gpu, &l, &e), MT_ERR_INTERNAL);
    assert_non_null(strstr(e.msg, "kernel 'fill': cuLaunchKernel: CUDA_ERROR_"));
    printf("bad launch: %s\n", e.msg);
    l.nscalars = 600;
    assert_int_equal(o->launch(gpu, &l, &e), MT_ERR_LIMIT);
    fill_and_check(fn, 5, 9); /* nothing sticky */
    o->unload(gpu, m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_availability),
        cmocka_unit_test(test_props),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_vadd),
        cmocka_unit_test(test_dynamic_shared),
        cmocka_unit_test(test_ptx),
        cmocka_unit_test(test_other_thread),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
