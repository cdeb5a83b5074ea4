/*
 * test_cuda_absent.c -- a CUDA driver that cannot be used
 * (src/runtime/cuda_driver.c, device_cuda.c): MT_CUDA_DRIVER_LIBRARY is set
 * before anything loads the driver (that happens once per process, hence
 * a program of its own) to argv[1], by default a file that does not exist.
 * Every entry point must then answer MT_ERR_UNAVAILABLE with a message
 * holding argv[2] (by default the path).
 *
 *     test_cuda_absent                              no such file
 *     test_cuda_absent .../stubs/libcuda.so STUB    the toolkit's link stub:
 *                                                   every symbol is there,
 *                                                   cuInit refuses
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/cuda_driver.h"
#include "runtime/device.h"

static const char *expect; /* what every message must contain */

static void assert_names(const char *msg) {
    if (!strstr(msg, expect)) fail_msg("'%s' does not mention '%s'", msg, expect);
}

static void test_absent(void **state) {
    (void)state;
    mt_dev_err e = {{0}};
    const mt_cuda_api *cu = (const mt_cuda_api *)&e;
    assert_int_equal(mt_cuda_driver(&cu, &e), MT_ERR_UNAVAILABLE);
    assert_null(cu);
    assert_names(e.msg);
    printf("%s\n", e.msg);

    mt_dev *d = (mt_dev *)&e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mt_dev_cuda_open(0, &d, &e), MT_ERR_UNAVAILABLE);
    assert_null(d);
    assert_names(e.msg);

    memset(&e, 0, sizeof e);
    assert_null(mt_dev_cuda_create(0, &e));
    assert_names(e.msg);
    assert_null(mt_dev_cuda_create(1, NULL)); /* no message buffer: still an answer */

    memset(&e, 0, sizeof e);
    assert_int_equal(mt_dev_cuda_count(&e), 0);
    assert_names(e.msg);
    assert_int_equal(mt_dev_cuda_sm(NULL), 0);
    assert_null(mt_dev_cuda_stream(NULL));
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/nonexistent/libcuda.so.1";
    expect = argc > 2 ? argv[2] : path;
    setenv("MT_CUDA_DRIVER_LIBRARY", path, 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_absent)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
