/*
 * test_util.h -- helpers shared by the tests that go through the public API.
 */
#ifndef MT_TEST_UTIL_H
#define MT_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "minitriton.h"

/* One context for a whole test binary (creating the JIT costs ~20 ms). */
static mt_context *test_ctx;

static int test_setup_ctx(void **state) {
    (void)state;
    test_ctx = mt_context_create(NULL);
    return test_ctx ? 0 : -1;
}

static int test_teardown_ctx(void **state) {
    (void)state;
    mt_context_destroy(test_ctx);
    test_ctx = NULL;
    return 0;
}

/* Compiles or fails the test with the diagnostic. */
__attribute__((unused)) static mt_kernel *compile_ok_opts(const char *src, const mt_compile_options *opts) {
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, src, opts, &d);
    if (!k) fail_msg("compile failed:\n%s\nsource:\n%s", d.text, src);
    return k;
}

__attribute__((unused)) static mt_kernel *compile_ok(const char *src) { return compile_ok_opts(src, NULL); }

/* Compiles expecting failure; returns the diagnostic. */
__attribute__((unused)) static mt_diag compile_err(const char *src) {
    mt_diag d;
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.filename = "k.py";
    mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &d);
    if (k) {
        mt_kernel_release(k);
        fail_msg("expected a compile error for:\n%s", src);
    }
    return d;
}

/* Asserts two texts are equal, showing both when they are not. */
#define assert_text(got, want)                                                       \
    do {                                                                             \
        const char *g_ = (got), *w_ = (want);                                        \
        if (!g_ || strcmp(g_, w_) != 0)                                              \
            fail_msg("text differs.\n--- got ---\n%s\n--- want ---\n%s", g_ ? g_ : "(null)", w_); \
    } while (0)

#endif
