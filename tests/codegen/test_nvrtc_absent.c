/*
 * test_nvrtc_absent.c -- NVRTC that cannot be loaded (src/codegen/nvrtc.h):
 * MT_NVRTC_LIBRARY names a file that does not exist, set before anything
 * loads NVRTC (that happens once per process, hence a program of its own).
 * Every entry point then says so: MT_ERR_UNAVAILABLE and a message naming
 * what was tried.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codegen/nvrtc.h"

static void test_absent(void **state) {
    (void)state;
    char why[512] = "";
    assert_false(mt_nvrtc_available(why, sizeof why));
    assert_non_null(strstr(why, "NVRTC not found"));
    assert_non_null(strstr(why, "MT_NVRTC_LIBRARY=/nonexistent/libnvrtc.so"));
    assert_int_equal(mt_nvrtc_version(), 0);

    mt_nvrtc_out out;
    char err[512] = "";
    assert_int_equal(mt_nvrtc_compile("__global__ void k() {}", NULL, 90, &out, err, sizeof err),
                     MT_ERR_UNAVAILABLE);
    assert_string_equal(err, why);
    assert_null(out.image);
    assert_null(out.log);
    assert_int_equal(out.nkernels, 0);
    mt_nvrtc_out_free(&out);
    assert_false(mt_nvrtc_available(NULL, 0)); /* no buffer: still an answer */
}

int main(void) {
    setenv("MT_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so", 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_absent)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
