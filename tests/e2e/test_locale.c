/*
 * test_locale.c -- what the library writes and reads back does not follow
 * the host program's LC_NUMERIC. Under a German locale (a comma for the
 * decimal point) a printf'd 2.5 is "2,5": CUDA C read `a * 2,5f` as the
 * comma operator (a * 2: a wrong kernel), and the tuning log written with
 * "ms": 0,00012 was refused by every later read. The locale is made with
 * localedef (Debian's `locales`, which scripts/setup.sh installs) when the
 * system has none; without either the tests are skipped, saying why.
 */
#include <locale.h>
#include <stdbool.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

static const char *SRC = "def f(a: Tensor((64,), \"float32\")):\n"
                         "    return a * 2.5 + 0.25\n";

/* Is LC_NUMERIC a comma locale now (made with localedef if need be)? */
static bool comma_locale(void) {
    if (!setlocale(LC_NUMERIC, "de_DE.UTF-8")) {
        char dir[] = "/tmp/mt_locale_XXXXXX", cmd[256];
        if (!mkdtemp(dir)) return false;
        snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
        if (system(cmd) != 0) return false;
        setenv("LOCPATH", dir, 1);
        if (!setlocale(LC_NUMERIC, "de_DE.UTF-8")) return false;
    }
    char buf[16];
    snprintf(buf, sizeof buf, "%.1f", 2.5);
    return strcmp(buf, "2,5") == 0;
}

static int setup(void **state) {
    if (test_setup_ctx(state)) return -1;
    *state = (void *)(intptr_t)comma_locale();
    return 0;
}

static int teardown(void **state) {
    setlocale(LC_NUMERIC, "C");
    return test_teardown_ctx(state);
}

#define NEED_COMMA_LOCALE(state)                                                                   \
    do {                                                                                           \
        if (!*(state)) {                                                                           \
            print_message("skipped: no de_DE.UTF-8 locale and localedef could not make one\n");    \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

/* The literals read right, the result is a * 2.5 + 0.25, the TIR prints 2.5. */
static void test_cpu_kernel(void **state) {
    NEED_COMMA_LOCALE(state);
    mt_kernel *k = compile_ok(SRC);
    int64_t n = 64;
    mt_tensor *a = mt_tensor_create(MT_FLOAT32, 1, &n), *out = NULL;
    float *x = mt_tensor_data(a);
    for (int i = 0; i < n; i++) x[i] = (float)i - 7.0f;
    assert_int_equal(mt_kernel_run(k, &a, 1, &out, 1, NULL), MT_OK);
    for (int i = 0; i < n; i++) assert_true(((float *)mt_tensor_data(out))[i] == x[i] * 2.5f + 0.25f);
    const char *tir = mt_kernel_dump(k, MT_STAGE_TIR);
    assert_non_null(strstr(tir, "2.5"));
    assert_null(strstr(tir, "2,5"));
    mt_tensor_release(out);
    mt_tensor_release(a);
    mt_kernel_release(k);
}

/* The CUDA C's constants have a decimal point. */
static void test_cuda_constants(void **state) {
    NEED_COMMA_LOCALE(state);
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, SRC, &o, &d);
    if (!k) fail_msg("%s", d.text);
    const char *cu = mt_kernel_dump(k, MT_STAGE_CUDA);
    assert_non_null(strstr(cu, "2.5f"));
    assert_non_null(strstr(cu, "0.25f"));
    assert_null(strstr(cu, "2,5"));
    mt_kernel_release(k);
}

/* A log mt_tune writes under the locale reads back, and its times have points. */
static void test_tuning_log(void **state) {
    NEED_COMMA_LOCALE(state);
    char path[] = "/tmp/mt_locale_log_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const char *mm = "def f(a: Tensor((48, 40), \"float32\"), b: Tensor((40, 24), \"float32\")):\n"
                     "    return a @ b\n";
    mt_tune_options t;
    mt_tune_options_init(&t);
    t.log = path;
    t.trials = 2;
    mt_diag d;
    if (mt_tune(test_ctx, mm, NULL, &t, &d) != MT_OK) fail_msg("%s", d.text);
    FILE *f = fopen(path, "r");
    char text[4096] = {0};
    assert_true(fread(text, 1, sizeof text - 1, f) > 0);
    fclose(f);
    assert_non_null(strstr(text, "\"ms\": 0."));
    assert_null(strstr(text, "\"ms\": 0,"));
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.tuning_log = path;
    mt_kernel *k = mt_jit_compile(test_ctx, mm, &o, &d);
    if (!k) fail_msg("%s", d.text);
    mt_kernel_release(k);
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_kernel),
        cmocka_unit_test(test_cuda_constants),
        cmocka_unit_test(test_tuning_log),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
