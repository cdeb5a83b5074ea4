/*
 * test_target.c -- target descriptions (src/target) and how a compilation
 * chooses, prints and keys them.
 */
#include "test_util.h"

#include "passes/registry.h"
#include "target/target.h"
#include "tir/tir.h"

static void test_host_cpu_features(void **s) {
    (void)s;
    mt_target_desc t;
    mt_target_host_cpu(&t, "znver5", "+sse2,+avx,+avx2,+avx512f,-amx-tile", 2);
    assert_int_equal(t.kind, MT_TARGET_CPU);
    assert_string_equal(t.cpu, "znver5");
    assert_int_equal(t.vector_bytes, 64);
    assert_int_equal(t.vector_registers, 32);
    assert_int_equal(t.cores, 2);
    assert_true(t.l1d_bytes > 0 && t.l2_bytes > 0);
    mt_target_host_cpu(&t, "znver3", "+sse2,+avx,+avx2,-avx512f,-avx512fp16", 16);
    assert_int_equal(t.vector_bytes, 32);
    assert_int_equal(t.vector_registers, 16);
    assert_int_equal(t.cores, 16);
    mt_target_host_cpu(&t, "neoverse-v2", "+neon,+fp-armv8", 0);
    assert_int_equal(t.vector_bytes, 16);
    assert_int_equal(t.vector_registers, 32);
    assert_int_equal(t.cores, 1); /* at least one */
    mt_target_host_cpu(&t, "", "", 4);
    assert_string_equal(t.cpu, "generic");
    assert_int_equal(t.vector_bytes, 16);
    /* "-avx512f" is not "+avx512f"; "+avx512fp16" alone is not it either */
    mt_target_host_cpu(&t, "x", "+avx512fp16", 1);
    assert_int_equal(t.vector_bytes, 16);
}

static void test_step_and_lanes(void **s) {
    (void)s;
    mt_target_desc t;
    mt_target_host_cpu(&t, "znver3", "+avx2", 2);
    assert_int_equal(mt_target_step_bytes(&t), 64); /* at least a cache line */
    assert_int_equal(mt_target_lanes(&t, MT_FLOAT32), 16);
    assert_int_equal(mt_target_lanes(&t, MT_FLOAT64), 8);
    t.vector_bytes = 128; /* a wider machine: the register wins */
    assert_int_equal(mt_target_step_bytes(&t), 128);
    assert_int_equal(mt_target_lanes(&t, MT_INT8), 128);
    const mt_target_desc *d = mt_target_default_cpu();
    assert_int_equal(d->vector_bytes, 64);
    assert_int_equal(mt_tfunc_target(NULL), d);
}

static void test_cuda_archs(void **s) {
    (void)s;
    mt_target_desc t;
    memset(&t, 0x5a, sizeof t);
    assert_false(mt_target_cuda(&t, "sm_70"));
    assert_int_equal(t.sm, 0x5a5a5a5a); /* left alone */
    assert_true(mt_target_cuda(&t, NULL));
    assert_int_equal(t.kind, MT_TARGET_CUDA);
    assert_int_equal(t.sm, 90);
    assert_int_equal(t.warp_size, 32);
    assert_int_equal(t.max_threads_per_block, 1024);
    assert_int_equal(t.max_shared_per_block, 227 << 10);
    assert_true(mt_target_cuda(&t, "sm_80"));
    assert_int_equal(t.sm, 80);
    assert_int_equal(t.max_shared_per_block, 163 << 10);
    assert_true(mt_target_cuda(&t, "sm_86") && t.sm == 86);
    assert_true(mt_target_cuda(&t, "sm_89") && t.sm == 89);
    char buf[256];
    mt_target_cuda(&t, "sm_90");
    assert_string_equal(mt_target_str(&t, buf, sizeof buf),
                        "cuda -arch=sm_90 -warp=32 -max-threads=1024 -max-shared=227K -regs=65536 -sms=132 -mma=16x16x16");
}

static void test_cpu_text(void **s) {
    (void)s;
    mt_target_desc t;
    mt_target_host_cpu(&t, "znver5", "+avx512f", 2);
    t.l1d_bytes = 48 << 10, t.l2_bytes = 1 << 20, t.l3_bytes = 0;
    char buf[256];
    assert_string_equal(mt_target_str(&t, buf, sizeof buf),
                        "cpu -mcpu=znver5 -vector-bytes=64 -cores=2 -l1d=48K -l2=1M -l3=0");
    t.test_device = true;
    assert_non_null(strstr(mt_target_str(&t, buf, sizeof buf), " -test-device"));
}

/* The rules run are the target's: the CPU has five, CUDA four. */
static void test_rules_by_target(void **s) {
    (void)s;
    int n;
    const mt_pass *r = mt_target_rules(MT_TARGET_CPU, &n);
    assert_int_equal(n, 5);
    assert_string_equal(r[0].name, "schedule_matmul");
    assert_string_equal(r[1].name, "schedule_conv");
    assert_string_equal(r[2].name, "schedule_pool");
    assert_string_equal(r[4].name, "schedule");
    r = mt_target_rules(MT_TARGET_CUDA, &n);
    assert_int_equal(n, 5);
    assert_string_equal(r[0].name, "gpu_gemv");
    assert_string_equal(r[1].name, "gpu_matmul");
    assert_string_equal(r[2].name, "gpu_reduce_rows");
    assert_string_equal(r[3].name, "gpu_argreduce_rows");
    assert_string_equal(r[4].name, "gpu_fallback");
    assert_true(mt_pass_name_known("gpu_fallback", 12));
    assert_true(mt_pass_name_known("realize_devices", 15));
    assert_true(mt_pass_name_known("parse", 5));
    assert_false(mt_pass_name_known("schedule_rules", 14));
}

static const char *ADD = "def f(a: Tensor((64,), \"float32\")):\n    return a + a\n";

/* The scheduled TIR says what it was compiled for. */
static void test_printed_in_tir_sched(void **s) {
    (void)s;
    mt_kernel *k = compile_ok(ADD);
    const char *t = mt_kernel_dump(k, MT_STAGE_TIR_SCHED);
    assert_non_null(strstr(t, "\"target\": \"cpu -mcpu="));
    assert_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR), "\"target\"")); /* before scheduling: not yet */
    mt_kernel_release(k);
}

/* The options choose the target: arch only with cuda, known archs only;
 * the arch chosen is the one in the scheduled TIR. */
static void test_options(void **s) {
    (void)s;
    mt_compile_options o;
    mt_compile_options_init(&o);
    assert_null(o.arch);
    mt_diag d;
    o.arch = "sm_90";
    assert_null(mt_jit_compile(test_ctx, ADD, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.message, "arch is for target cuda"));
    o.target = MT_TARGET_CUDA;
    o.arch = "sm_75";
    assert_null(mt_jit_compile(test_ctx, ADD, &o, &d));
    assert_int_equal(d.status, MT_ERR_INVALID_ARG);
    assert_non_null(strstr(d.message, "unknown arch 'sm_75' (known: sm_80, sm_86, sm_89, sm_90)"));
    o.arch = "sm_80";
    mt_kernel *k = mt_jit_compile(test_ctx, ADD, &o, &d);
    assert_non_null(k);
    assert_non_null(strstr(mt_kernel_dump(k, MT_STAGE_TIR_SCHED), "\"target\": \"cuda -arch=sm_80"));
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_cpu_features), cmocka_unit_test(test_step_and_lanes),
        cmocka_unit_test(test_cuda_archs),        cmocka_unit_test(test_cpu_text),
        cmocka_unit_test(test_rules_by_target),   cmocka_unit_test(test_printed_in_tir_sched),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
