/*
 * test_rule_choice.c -- which default rule schedules each kernel, over
 * symbolic dims in every position and the epilogues fusion gives: a rule
 * that silently stops matching leaves a kernel to the fallback, correct
 * and many times slower, which no numeric test notices (a symbolic K
 * under a one-op epilogue ran the source's triple loop on the CPU and one
 * thread per output on the GPU until fuse_tir flattened its groups).
 *
 * Each case names, for target cpu and for target cuda (emulated: no GPU
 * needed), the rules the "schedule" dump must name for its kernels, in
 * kernel order ("# <kernel>: the default rule <rule>, as a schedule").
 */
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

typedef struct rcase {
    const char *params, *expr;
    const char *cpu, *cuda; /* the rules, space-separated, in kernel order */
} rcase;

#define F "\"float32\""
static const rcase CASES[] = {
    /* matmuls: each dim symbolic in turn, with and without epilogues */
    {"a: Tensor((64, 128), " F "), b: Tensor((128, 96), " F ")", "a @ b + 1.0", "schedule_matmul", "gpu_matmul"},
    {"a: Tensor((\"m\", 128), " F "), b: Tensor((128, 96), " F ")", "a @ b + 1.0", "schedule_matmul",
     "gpu_matmul"},
    {"a: Tensor((64, \"k\"), " F "), b: Tensor((\"k\", 96), " F ")", "a @ b", "schedule_matmul", "gpu_matmul"},
    {"a: Tensor((64, \"k\"), " F "), b: Tensor((\"k\", 96), " F ")", "a @ b + 1.0", "schedule_matmul",
     "gpu_matmul"},
    {"a: Tensor((64, \"k\"), " F "), b: Tensor((\"k\", 96), " F ")", "relu(a @ b)", "schedule_matmul",
     "gpu_matmul"},
    {"a: Tensor((64, \"k\"), " F "), b: Tensor((\"k\", 96), " F "), c: Tensor((96,), " F ")", "a @ b + c",
     "schedule_matmul", "gpu_matmul"},
    {"a: Tensor((64, \"k\"), " F "), b: Tensor((96, \"k\"), " F ")", "a @ b.T * 2.0", "schedule_matmul",
     "gpu_matmul"},
    {"a: Tensor((64, 128), " F "), b: Tensor((128, \"n\"), " F ")", "exp(a @ b)", "schedule_matmul",
     "gpu_matmul"},
    {"a: Tensor((\"m\", \"k\"), " F "), b: Tensor((\"k\", \"n\"), " F "), c: Tensor((\"n\",), " F ")",
     "relu(a @ b + c)", "schedule_matmul", "gpu_matmul"},
    {"a: Tensor((8, 64, \"k\"), " F "), b: Tensor((8, \"k\", 48), " F ")", "a @ b + 1.0", "schedule_matmul",
     "gpu_matmul"},
    {"a: Tensor((\"b\", 64, 32), " F "), b: Tensor((\"b\", 32, 48), " F ")", "relu(a @ b)", "schedule_matmul",
     "gpu_matmul"},
    /* few rows */
    {"x: Tensor((1, \"k\"), " F "), w: Tensor((\"k\", 512), " F ")", "x @ w * 2.0", "schedule_matmul",
     "gpu_gemv"},
    {"x: Tensor((1, 512), " F "), w: Tensor((\"n\", 512), " F ")", "relu(x @ w.T)", "schedule_matmul",
     "gpu_gemv"},
    /* a matmul, then a row reduction over its result */
    {"a: Tensor((64, \"k\"), " F "), b: Tensor((\"k\", 96), " F ")", "softmax(a @ b, axis=-1)",
     "schedule_matmul schedule_reduce", "gpu_matmul gpu_reduce_rows"},
    /* row reductions with fused producers and consumers */
    {"x: Tensor((64, \"n\"), " F ")", "softmax(x * 2.0, axis=-1)", "schedule_reduce", "gpu_reduce_rows"},
    {"x: Tensor((\"r\", 1000), " F ")", "log_softmax(x + 1.0, axis=-1)", "schedule_reduce", "gpu_reduce_rows"},
    {"x: Tensor((64, \"n\"), " F "), w: Tensor((\"n\",), " F ")", "layer_norm(x + 1.0, w, w)", "schedule_reduce",
     "gpu_reduce_rows"},
    {"x: Tensor((64, \"n\"), " F ")", "max(exp(x), axis=-1) + 1.0", "schedule_reduce", "gpu_reduce_rows"},
    {"x: Tensor((64, \"n\"), " F ")", "argmax(x * 2.0, axis=-1)", "schedule_reduce", "gpu_argreduce_rows"},
    /* reductions over outer axes and over everything: primitives */
    {"x: Tensor((\"r\", 64), " F ")", "sum(x * 2.0, axis=0)", "schedule", "gpu_fallback"},
    {"x: Tensor((16, \"r\", 64), " F ")", "max(x, axis=1) + 1.0", "schedule", "gpu_fallback"},
    /* CNN ops */
    {"x: Tensor((\"n\", 16, 28, 28), " F "), w: Tensor((32, 16, 3, 3), " F ")", "relu(conv2d(x, w, padding=1))",
     "schedule_conv", "gpu_fallback"},
    {"x: Tensor((\"n\", 16, 28, 28), " F "), w: Tensor((32, 16, 1, 1), " F ")", "conv2d(x, w) + 1.0",
     "schedule_conv", "gpu_fallback"},
    {"x: Tensor((\"n\", 16, 28, 28), " F ")", "max_pool2d(x, 2)", "schedule_pool", "gpu_fallback"},
};

/* The rules the schedule dump names, in kernel order, space-separated. */
static char *rules_of(const char *dump) {
    static const char mark[] = ": the default rule ";
    size_t cap = strlen(dump) + 1, len = 0;
    char *out = calloc(cap, 1);
    for (const char *p = dump; (p = strstr(p, mark)); p += sizeof mark - 1) {
        const char *r = p + sizeof mark - 1, *e = r + strcspn(r, ", \n");
        len += (size_t)snprintf(out + len, cap - len, "%s%.*s", len ? " " : "", (int)(e - r), r);
    }
    return out;
}

static void check_target(bool cuda) {
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const rcase *c = &CASES[i];
        char src[512];
        snprintf(src, sizeof src, "def f(%s):\n    return %s\n", c->params, c->expr);
        mt_compile_options o;
        mt_compile_options_init(&o);
        if (cuda) {
            o.target = MT_TARGET_CUDA;
            o.emulate = 1;
        }
        mt_kernel *k = compile_ok_opts(src, &o);
        char *got = rules_of(mt_kernel_dump(k, MT_STAGE_SCHEDULE));
        const char *want = cuda ? c->cuda : c->cpu;
        if (strcmp(got, want) != 0)
            fail_msg("target %s, %s:\n  rules %s, want %s\n%s", cuda ? "cuda" : "cpu", src, got, want,
                     mt_kernel_dump(k, MT_STAGE_SCHEDULE));
        free(got);
        mt_kernel_release(k);
    }
}

static void test_cpu_rules(void **s) {
    (void)s;
    check_target(false);
}

static void test_cuda_rules(void **s) {
    (void)s;
    check_target(true);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_rules),
        cmocka_unit_test(test_cuda_rules),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
