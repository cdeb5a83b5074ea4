/*
 * test_cuda_text.c -- the CUDA C of whole programs (target cuda): golden
 * text, and NVRTC's verdict on it.
 *
 *  1. Golden CUDA: each tests/golden/cuda/NAME.py compiled for target cuda
 *     (sm_90) gives `--emit cuda` text equal to tests/golden/cuda/NAME.cu,
 *     up to ptxas's report, which is there only where NVRTC is. The seed's
 *     add is one kernel, fused_add_add; matmul_f16_bias_relu and
 *     matmul_bf16_bias_relu take the tensor cores (WMMA). MT_UPDATE_GOLDEN=1 rewrites the
 *     .cu files instead of comparing (review the diff like code).
 *     Each .cu also compiles alone with `nvcc -c` for sm_80 and sm_90
 *     (skipped, counted, without nvcc). ewise_vec is a float4 per thread,
 *     sum_split a reduction split across threads.
 *  2. NVRTC: every golden program (tests/golden/cuda, tests/golden) and
 *     every tests/gpu program compiles for sm_80 and sm_90 (NVRTC runs in
 *     mt_jit_compile), every kernel is in ptxas's report, and none spills
 *     (0 bytes spill stores and loads). Skipped, counted, without NVRTC.
 */
#include <dirent.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

static const char *src_dir(void) {
    const char *d = getenv("MT_SOURCE_DIR");
    return d ? d : ".";
}

static mt_kernel *compile_cuda(const char *src, const char *name, const char *arch) {
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    o.arch = arch;
    o.filename = name;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &d);
    if (!k) fail_msg("%s (%s): %s", name, arch, d.text);
    return k;
}

/* The CUDA C without ptxas's report. */
static char *cuda_text(mt_kernel *k) {
    const char *t = mt_kernel_dump(k, MT_STAGE_CUDA);
    assert_non_null(t);
    const char *report = strstr(t, "\n// ptxas (");
    size_t n = report ? (size_t)(report - t) + 1 : strlen(t);
    char *s = malloc(n + 1);
    memcpy(s, t, n);
    s[n] = 0;
    return s;
}

static bool nvrtc_here(void) {
    mt_kernel *k = compile_cuda("def f(a: Tensor((4,), \"float32\")):\n    return a + a\n", "probe", "sm_90");
    bool yes = strstr(mt_kernel_dump(k, MT_STAGE_CUDA), "\n// ptxas (") != NULL;
    mt_kernel_release(k);
    return yes;
}

/* ---- 1. golden CUDA -------------------------------------------------------------- */

/* Compares NAME's CUDA C with its .cu; returns the kernel. */
static mt_kernel *check_golden(const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/golden/cuda/%s.py", src_dir(), name);
    char *src = test_read_file(path);
    if (!src) fail_msg("cannot read %s", path);
    mt_kernel *k = compile_cuda(src, name, "sm_90");
    char *got = cuda_text(k);
    snprintf(path, sizeof path, "%s/tests/golden/cuda/%s.cu", src_dir(), name);
    if (getenv("MT_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fputs(got, f);
        fclose(f);
    } else {
        char *want = test_read_file(path);
        if (!want) fail_msg("no %s (MT_UPDATE_GOLDEN=1 writes it)", path);
        if (strcmp(got, want) != 0)
            fail_msg("%s: the CUDA C differs from %s:\n%s", name, path, got);
        free(want);
    }
    free(got);
    free(src);
    return k;
}

static void golden(const char *name) { mt_kernel_release(check_golden(name)); }

/* The seed's add: one kernel, the fused one. */
static void test_golden_add(void **s) {
    (void)s;
    mt_kernel *k = check_golden("add");
    const char *first = strstr(mt_kernel_dump(k, MT_STAGE_CUDA), "// launch fused_add_add_kernel0 ");
    assert_non_null(first);
    assert_null(strstr(first + 1, "// launch "));
    mt_kernel_release(k);
}

static void test_golden_softmax(void **s) { (void)s, golden("softmax"); }
static void test_golden_layer_norm(void **s) { (void)s, golden("layer_norm"); }
static void test_golden_gemv(void **s) { (void)s, golden("gemv"); }
static void test_golden_matmul_bias_relu(void **s) { (void)s, golden("matmul_bias_relu"); }
static void test_golden_matmul_f16_bias_relu(void **s) { (void)s, golden("matmul_f16_bias_relu"); }
static void test_golden_matmul_bf16_bias_relu(void **s) { (void)s, golden("matmul_bf16_bias_relu"); }
static void test_golden_ewise_vec(void **s) { (void)s, golden("ewise_vec"); }
static void test_golden_sum_split(void **s) { (void)s, golden("sum_split"); }

/* Each golden .cu (the text the tests above compare with) compiles alone
 * with `nvcc -c` for sm_80 and sm_90, without a warning. Skipped, counted,
 * without nvcc (MT_NVCC, else /usr/local/cuda/bin/nvcc, else on PATH). */
static void test_nvcc_goldens(void **s) {
    (void)s;
    const char *nvcc = getenv("MT_NVCC");
    if (!nvcc || !*nvcc) nvcc = access("/usr/local/cuda/bin/nvcc", X_OK) == 0 ? "/usr/local/cuda/bin/nvcc" : NULL;
    if (!nvcc && system("command -v nvcc > /dev/null 2>&1") == 0) nvcc = "nvcc";
    if (!nvcc) {
        print_message("skipped: no nvcc (install the CUDA toolkit or set MT_NVCC)\n");
        skip();
    }
    char dir[1024], cmd[4096];
    snprintf(dir, sizeof dir, "%s/tests/golden/cuda", src_dir());
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open %s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".cu") != 0) continue;
        snprintf(cmd, sizeof cmd,
                 "'%s' -c -Werror all-warnings -gencode arch=compute_80,code=sm_80 "
                 "-gencode arch=compute_90,code=sm_90 '%s/%s' -o /dev/null 2>&1",
                 nvcc, dir, e->d_name);
        if (system(cmd) != 0) fail_msg("nvcc -c %s failed (%s)", e->d_name, cmd);
        n++;
    }
    closedir(d);
    assert_true(n >= 9);
}

/* ---- 2. NVRTC: compiles, no spills ------------------------------------------------ */

static int count(const char *s, const char *what) {
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

/* Every kernel reported, none spilling. */
static void check_nvrtc(const char *file, const char *src, const char *arch) {
    mt_kernel *k = compile_cuda(src, file, arch);
    const char *t = mt_kernel_dump(k, MT_STAGE_CUDA);
    const char *report = strstr(t, "\n// ptxas (");
    assert_non_null(report);
    int kernels = count(t, "// launch "), reported = count(report, " registers, ");
    if (kernels != reported) fail_msg("%s (%s): %d kernels, %d in ptxas's report", file, arch, kernels, reported);
    if (count(report, " 0 bytes spill stores, 0 bytes spill loads,") != reported)
        fail_msg("%s (%s): a kernel spills:\n%s", file, arch, report);
    mt_kernel_release(k);
}

static int corpus(const char *sub, const char *arch) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", src_dir(), sub);
    DIR *d = opendir(dir);
    if (!d) fail_msg("cannot open %s", dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".py") != 0 || strcmp(e->d_name, "compare.py") == 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *src = test_read_file(path);
        if (!src) fail_msg("cannot read %s", path);
        check_nvrtc(e->d_name, src, arch);
        free(src);
        n++;
    }
    closedir(d);
    return n;
}

static void test_nvrtc_no_spills(void **s) {
    (void)s;
    if (!nvrtc_here()) {
        print_message("skipped: NVRTC is not here (install the CUDA toolkit or set MT_NVRTC_LIBRARY)\n");
        skip();
    }
    const char *archs[] = {"sm_80", "sm_90"};
    for (int a = 0; a < 2; a++) {
        int n = corpus("tests/golden/cuda", archs[a]) + corpus("tests/golden", archs[a]) +
                corpus("tests/gpu", archs[a]);
        assert_true(n >= 20);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_add),       cmocka_unit_test(test_golden_softmax),
        cmocka_unit_test(test_golden_layer_norm), cmocka_unit_test(test_golden_gemv),
        cmocka_unit_test(test_golden_matmul_bias_relu), cmocka_unit_test(test_golden_matmul_f16_bias_relu),
        cmocka_unit_test(test_golden_matmul_bf16_bias_relu),
        cmocka_unit_test(test_golden_ewise_vec), cmocka_unit_test(test_golden_sum_split),
        cmocka_unit_test(test_nvcc_goldens),
        cmocka_unit_test(test_nvrtc_no_spills),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
