/*
 * test_nvrtc.c -- CUDA C to cubins through NVRTC (src/codegen/nvrtc.h):
 * a vector add and a block reduction (shared memory, barriers, warp
 * shuffles) for sm_80 and sm_90, with ptxas's report read back per kernel;
 * a device function that is not inlined and a kernel with a stack frame
 * (the report's blocks that are not kernels); source that does not
 * compile, an architecture NVRTC refuses, and bad arguments. The compile
 * time of the vector add is printed, not checked.
 *
 * Where NVRTC cannot be loaded every test prints why and is skipped; the
 * missing-library path itself is test_nvrtc_absent.c (the library is
 * looked for once per process).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "codegen/nvrtc.h"

static const char *vadd_src =
    "extern \"C\" __global__ void vadd(const float *a, const float *b, float *c, long long n) {\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

/* One partial sum per block of up to 1024 threads. */
static const char *reduce_src =
    "extern \"C\" __global__ void block_sum(const float *x, float *out, long long n) {\n"
    "    __shared__ float warp_sums[32];\n"
    "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    float v = i < n ? x[i] : 0.0f;\n"
    "    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);\n"
    "    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;\n"
    "    __syncthreads();\n"
    "    if (threadIdx.x < 32) {\n"
    "        v = threadIdx.x < (blockDim.x + 31) / 32 ? warp_sums[threadIdx.x] : 0.0f;\n"
    "        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);\n"
    "        if (threadIdx.x == 0) out[blockIdx.x] = v;\n"
    "    }\n"
    "}\n";

/* Skips the calling test, saying why, when NVRTC cannot be loaded. */
static void need_nvrtc(void) {
    char why[512];
    if (mt_nvrtc_available(why, sizeof why)) return;
    printf("skipped: %s\n", why);
    skip();
}

static const mt_nvrtc_kernel_info *kernel(const mt_nvrtc_out *out, const char *name) {
    for (int i = 0; i < out->nkernels; i++)
        if (strcmp(out->kernels[i].name, name) == 0) return &out->kernels[i];
    fail_msg("no kernel '%s' in the report:\n%s", name, out->log ? out->log : "(no log)");
    return NULL;
}

static void compile_ok(const char *src, int sm, mt_nvrtc_out *out) {
    char err[512] = "";
    mt_status st = mt_nvrtc_compile(src, "k.cu", sm, out, err, sizeof err);
    if (st != MT_OK)
        fail_msg("sm_%d: %s (%s)\n%s", sm, err, mt_status_str(st), out->log ? out->log : "");
    assert_non_null(out->image);
    assert_true(out->size > 64);
    assert_memory_equal(out->image, "\177ELF", 4);
    assert_non_null(out->log); /* ptxas's report */
    assert_true(out->ms > 0);
}

/* A kernel that ptxas reports as using registers, spilling nothing. */
static void assert_clean(const mt_nvrtc_kernel_info *k) {
    assert_true(k->registers > 0);
    assert_int_equal(k->spill_store_bytes, 0);
    assert_int_equal(k->spill_load_bytes, 0);
    assert_int_equal(k->stack_bytes, 0);
}

static void test_version(void **state) {
    (void)state;
    need_nvrtc();
    int v = mt_nvrtc_version();
    printf("NVRTC %d.%d\n", v / 1000, v % 1000 / 10);
    assert_true(v >= 11020);
}

static void vadd_for(int sm) {
    mt_nvrtc_out out;
    compile_ok(vadd_src, sm, &out);
    assert_int_equal(out.nkernels, 1);
    const mt_nvrtc_kernel_info *k = kernel(&out, "vadd");
    assert_clean(k);
    assert_int_equal(k->shared_bytes, 0);
    printf("vadd sm_%d: %zu-byte cubin, %d registers, compiled in %.1f ms\n", sm, out.size,
           k->registers, out.ms);
    mt_nvrtc_out_free(&out);
    assert_null(out.image);
}

static void test_vadd(void **state) {
    (void)state;
    need_nvrtc();
    vadd_for(80);
    vadd_for(90);
    /* again: the first compile in a process also loads NVRTC's builtins;
     * and the same source twice still has ptxas's report (NVRTC's own
     * cache, where a driver is installed, would skip ptxas: nvrtc.c) */
    mt_nvrtc_out out;
    compile_ok(vadd_src, 90, &out);
    printf("vadd sm_90 again: %.1f ms\n", out.ms);
    assert_int_equal(out.nkernels, 1);
    assert_clean(kernel(&out, "vadd"));
    mt_nvrtc_out_free(&out);
}

static void reduce_for(int sm) {
    mt_nvrtc_out out;
    compile_ok(reduce_src, sm, &out);
    assert_int_equal(out.nkernels, 1);
    const mt_nvrtc_kernel_info *k = kernel(&out, "block_sum");
    assert_clean(k);
    assert_int_equal(k->shared_bytes, 32 * 4);
    mt_nvrtc_out_free(&out);
}

static void test_shared_and_shuffles(void **state) {
    (void)state;
    need_nvrtc();
    reduce_for(80);
    reduce_for(90);
}

/* Two kernels in one program, a C++ (mangled) name, a device function that
 * is not inlined (its own "Function properties" block, not a kernel) and a
 * kernel with a local array indexed at run time (a stack frame). */
static void test_report(void **state) {
    (void)state;
    need_nvrtc();
    const char *src =
        "__device__ __noinline__ float twice(float x) { return 2.0f * x; }\n"
        "__global__ void mangled(float *x) { x[threadIdx.x] = twice(x[threadIdx.x]); }\n"
        "extern \"C\" __global__ void framed(float *x, int k) {\n"
        "    float buf[64];\n"
        "    for (int i = 0; i < 64; i++) buf[(i * k) & 63] = x[i * blockDim.x + threadIdx.x];\n"
        "    x[threadIdx.x] = buf[(k + threadIdx.x) & 63];\n"
        "}\n";
    mt_nvrtc_out out;
    compile_ok(src, 86, &out);
    assert_int_equal(out.nkernels, 2);
    const mt_nvrtc_kernel_info *m = kernel(&out, "_Z7mangledPf");
    assert_true(m->registers > 0);
    assert_int_equal(m->spill_store_bytes, 0);
    const mt_nvrtc_kernel_info *f = kernel(&out, "framed");
    assert_true(f->registers > 0);
    if (f->stack_bytes < 64 * 4) fail_msg("framed: %d bytes of stack\n%s", f->stack_bytes, out.log);
    mt_nvrtc_out_free(&out);
}

/* Source that does not compile: the status, the message and the log. */
static void test_syntax_error(void **state) {
    (void)state;
    need_nvrtc();
    const char *src = "extern \"C\" __global__ void broken(float *x) {\n"
                      "    int i = threadIdx.x;\n"
                      "    x[i] = = 1.0f;\n"
                      "}\n";
    mt_nvrtc_out out;
    char err[512] = "";
    assert_int_equal(mt_nvrtc_compile(src, "broken.cu", 90, &out, err, sizeof err),
                     MT_ERR_INTERNAL);
    assert_null(out.image);
    assert_non_null(out.log);
    assert_non_null(strstr(out.log, "broken.cu(3): error"));
    assert_non_null(strstr(err, "does not compile"));
    assert_non_null(strstr(err, "broken.cu(3): error"));
    mt_nvrtc_out_free(&out);
    /* a buffer too small for the message is cut, not overrun */
    char tiny[8];
    assert_int_equal(mt_nvrtc_compile(src, "broken.cu", 90, &out, tiny, sizeof tiny),
                     MT_ERR_INTERNAL);
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
    mt_nvrtc_out_free(&out);
}

static void test_refused(void **state) {
    (void)state;
    need_nvrtc();
    mt_nvrtc_out out;
    char err[512] = "";
    assert_int_equal(mt_nvrtc_compile(vadd_src, NULL, 20, &out, err, sizeof err),
                     MT_ERR_UNSUPPORTED);
    assert_non_null(strstr(err, "sm_20"));
    mt_nvrtc_out_free(&out);
    assert_int_equal(mt_nvrtc_compile(vadd_src, NULL, 9, &out, err, sizeof err),
                     MT_ERR_INVALID_ARG);
    assert_int_equal(mt_nvrtc_compile(NULL, NULL, 90, &out, err, sizeof err), MT_ERR_INVALID_ARG);
    assert_int_equal(mt_nvrtc_compile(vadd_src, NULL, 90, NULL, NULL, 0), MT_ERR_INVALID_ARG);
    mt_nvrtc_out_free(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_vadd),
        cmocka_unit_test(test_shared_and_shuffles),
        cmocka_unit_test(test_report),
        cmocka_unit_test(test_syntax_error),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
