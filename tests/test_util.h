/*
 * test_util.h -- helpers shared by the tests that go through the public API.
 */
#ifndef MT_TEST_UTIL_H
#define MT_TEST_UTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "minitriton.h"

/* ---- the target the tests compile for ------------------------------------
 * MT_TEST_TARGET selects it for the suites that go through compile_ok and
 * test_kernel_run (the op suites, test_numerics):
 *
 *     unset, "" or "cpu"   the CPU (the default)
 *     "cuda-emulate"       target cuda with emulate: the GPU schedules, run on
 *                          the CPU under the CUDA execution model. Arguments
 *                          and results live on the emulated GPU (cuda:0);
 *                          test_kernel_run moves them there and back.
 *     "cuda"               target cuda on the machine's GPU (scripts/gpu_check.sh
 *                          runs the suites so on a GPU machine); the same moves.
 *
 * tests/ops_*.cmake and tests/e2e.cmake register each such suite twice, the
 * second time as <suite>_gpu_emulated with MT_TEST_TARGET=cuda-emulate.
 * A test that checks what only the CPU pipeline makes (its scheduled TIR,
 * LLVM text) says so with skip_if_gpu_target(why). */
static int test_gpu_emulated(void) {
    const char *t = getenv("MT_TEST_TARGET");
    return t && strcmp(t, "cuda-emulate") == 0;
}

/* Target cuda, emulated or on the GPU. */
static int test_gpu_target(void) {
    const char *t = getenv("MT_TEST_TARGET");
    return t && (strcmp(t, "cuda-emulate") == 0 || strcmp(t, "cuda") == 0);
}

#define skip_if_gpu_target(why)                                                         \
    do {                                                                                  \
        if (test_gpu_target()) {                                                          \
            print_message("skipped under target cuda: %s\n", (why));                       \
            skip();                                                                       \
        }                                                                                 \
    } while (0)

/* opts (NULL: the defaults) for the selected target: cuda with emulate when
 * MT_TEST_TARGET=cuda-emulate, every other field as the test set it. */
__attribute__((unused)) static mt_compile_options test_target_options(const mt_compile_options *opts) {
    mt_compile_options o;
    if (opts) o = *opts;
    else mt_compile_options_init(&o);
    if (test_gpu_target()) {
        o.target = MT_TARGET_CUDA;
        o.emulate = test_gpu_emulated();
    }
    return o;
}

/* The whole file at path, NUL-terminated (free it), or NULL. */
__attribute__((unused)) static char *test_read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!buf) {
        fclose(f);
        return NULL;
    }
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = 0;
    fclose(f);
    return buf;
}

/* One context for a whole test binary (creating the JIT costs ~20 ms). */
__attribute__((unused)) static mt_context *test_ctx;

__attribute__((unused)) static int test_setup_ctx(void **state) {
    (void)state;
    const char *t = getenv("MT_TEST_TARGET");
    if (t && *t && strcmp(t, "cpu") != 0 && !test_gpu_target()) {
        fprintf(stderr, "MT_TEST_TARGET=%s: want cpu, cuda-emulate or cuda\n", t);
        return -1;
    }
    if (test_gpu_target())
        print_message("MT_TEST_TARGET=%s: target cuda%s\n", t,
                      test_gpu_emulated() ? ", emulated on the CPU" : ", on the GPU");
    test_ctx = mt_context_create(NULL);
    return test_ctx ? 0 : -1;
}

__attribute__((unused)) static int test_teardown_ctx(void **state) {
    (void)state;
    mt_context_destroy(test_ctx);
    test_ctx = NULL;
    return 0;
}

/* Compiles (for the selected target) or fails the test with the diagnostic. */
__attribute__((unused)) static mt_kernel *compile_ok_opts(const char *src, const mt_compile_options *opts) {
    mt_diag d;
    mt_compile_options o = test_target_options(opts);
    mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &d);
    if (!k) fail_msg("compile failed%s:\n%s\nsource:\n%s", test_gpu_target() ? " (target cuda)" : "",
                     d.text, src);
    return k;
}

__attribute__((unused)) static mt_kernel *compile_ok(const char *src) { return compile_ok_opts(src, NULL); }

/* Compiles (for the selected target) expecting failure; returns the diagnostic. */
__attribute__((unused)) static mt_diag compile_err(const char *src) {
    mt_diag d;
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.filename = "k.py";
    o = test_target_options(&o);
    mt_kernel *k = mt_jit_compile(test_ctx, src, &o, &d);
    if (k) {
        mt_kernel_release(k);
        fail_msg("expected a compile error for:\n%s", src);
    }
    return d;
}

static int test_same_device(mt_device a, mt_device b) { return a.type == b.type && a.id == b.id; }

/* Copies host tensor h into dst (same dtype and shape, on the CPU, any strides). */
__attribute__((unused)) static void test_copy_into(mt_tensor *dst, const mt_tensor *h) {
    int nd = mt_tensor_ndim(dst);
    size_t es = mt_dtype_size(mt_tensor_dtype(dst));
    const int64_t *shape = mt_tensor_shape(dst), *str = mt_tensor_strides(dst);
    int64_t n = mt_tensor_numel(dst), idx[MT_MAX_RANK] = {0};
    const char *from = mt_tensor_data(h);
    char *to = mt_tensor_data(dst);
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++) off += idx[d] * str[d];
        memcpy(to + off * (int64_t)es, from + i * (int64_t)es, es);
        for (int d = nd - 1; d >= 0 && ++idx[d] == shape[d]; d--) idx[d] = 0;
    }
}

/* mt_kernel_run for the selected target. On the CPU it is mt_kernel_run.
 * Under target cuda it moves each argument to its parameter's device
 * (mt_kernel_tensor_to), runs, checks that each result is on the device
 * mt_kernel_result_device names, and brings the results back to the host:
 * a NULL slot receives a new host tensor; a slot holding a (host) tensor
 * is run in place on a device copy of it (so values it held before show
 * where the kernel writes nothing) and copied back into it. What it cannot
 * move (a NULL argument, more arguments or results than the kernel has) is
 * passed as given, so mt_kernel_run reports it as it would. */
__attribute__((unused)) static mt_status test_kernel_run(mt_kernel *k, mt_tensor *const *args, int nargs,
                                                         mt_tensor **results, int nresults, mt_diag *diag) {
    if (!test_gpu_target() || !k || nargs < 0 || nresults < 0 || (nargs && !args) || (nresults && !results))
        return mt_kernel_run(k, args, nargs, results, nresults, diag);
    const mt_device cpu = {MT_DEVICE_CPU, 0};
    mt_tensor **a = calloc((size_t)nargs + 1, sizeof *a), **moved = calloc((size_t)nargs + 1, sizeof *moved);
    mt_tensor **r = calloc((size_t)nresults + 1, sizeof *r);
    assert_true(a && moved && r);
    for (int i = 0; i < nargs; i++) {
        a[i] = args[i];
        if (!args[i] || i >= mt_kernel_num_params(k)) continue;
        mt_device want = mt_kernel_param_device(k, i);
        if (test_same_device(mt_tensor_device(args[i]), want)) continue;
        mt_diag d;
        if (mt_kernel_tensor_to(k, args[i], want, &moved[i], &d) != MT_OK)
            fail_msg("test_kernel_run: argument %d to the kernel's device: %s", i, d.text);
        a[i] = moved[i];
    }
    for (int i = 0; i < nresults; i++) {
        if (!results[i] || i >= mt_kernel_num_results(k)) {
            r[i] = results[i];
            continue;
        }
        mt_device want = mt_kernel_result_device(k, i);
        if (test_same_device(mt_tensor_device(results[i]), want)) {
            r[i] = results[i];
            continue;
        }
        mt_diag d;
        if (mt_kernel_tensor_to(k, results[i], want, &r[i], &d) != MT_OK)
            fail_msg("test_kernel_run: result slot %d to the kernel's device: %s", i, d.text);
    }
    mt_status st = mt_kernel_run(k, a, nargs, r, nresults, diag);
    for (int i = 0; i < nresults; i++) {
        if (r[i] == results[i]) continue; /* passed as given (also a NULL slot left NULL) */
        if (st == MT_OK && i < mt_kernel_num_results(k)) {
            mt_device want = mt_kernel_result_device(k, i), got = mt_tensor_device(r[i]);
            if (!test_same_device(got, want))
                fail_msg("test_kernel_run: result %d is on device (%d, %d), the kernel says (%d, %d)", i,
                         (int)got.type, (int)got.id, (int)want.type, (int)want.id);
            mt_tensor *h = r[i];
            mt_diag d;
            if (!test_same_device(got, cpu) && mt_kernel_tensor_to(k, r[i], cpu, &h, &d) != MT_OK)
                fail_msg("test_kernel_run: result %d to the host: %s", i, d.text);
            if (results[i]) { /* in place: into the caller's tensor */
                test_copy_into(results[i], h);
                if (h != r[i]) mt_tensor_release(h);
                mt_tensor_release(r[i]);
            } else {
                if (h != r[i]) mt_tensor_release(r[i]);
                results[i] = h;
            }
        } else {
            mt_tensor_release(r[i]);
        }
    }
    for (int i = 0; i < nargs; i++) mt_tensor_release(moved[i]);
    free(a);
    free(moved);
    free(r);
    return st;
}

/* Asserts two texts are equal, showing both when they are not. */
#define assert_text(got, want)                                                       \
    do {                                                                             \
        const char *g_ = (got), *w_ = (want);                                        \
        if (!g_ || strcmp(g_, w_) != 0)                                              \
            fail_msg("text differs.\n--- got ---\n%s\n--- want ---\n%s", g_ ? g_ : "(null)", w_); \
    } while (0)

/* ---- bfloat16 references (float32's upper 16 bits) ------------------------- */

/* The value of bfloat16 bits b. */
__attribute__((unused)) static double test_bf16_value(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* d rounded to the nearest bfloat16, ties to even, from the definition:
 * the neighbours found by bisection over the bit patterns; at or past the
 * midpoint 2^128 - 2^119: inf; NaN: 0x7fff (what the compiler stores). */
__attribute__((unused)) static uint16_t test_bf16_round(double d) {
    if (isnan(d)) return 0x7fff;
    uint16_t sign = signbit(d) ? 0x8000 : 0;
    double a = fabs(d);
    if (a >= 0x1p128 - 0x1p119) return sign | 0x7f80;
    unsigned lo = 0, hi = 0x7f7f;
    while (lo < hi) {
        unsigned mid = (lo + hi + 1) / 2;
        if (test_bf16_value((uint16_t)mid) <= a) lo = mid;
        else hi = mid - 1;
    }
    double dl = a - test_bf16_value((uint16_t)lo),
           dh = (lo == 0x7f7f ? 0x1p128 : test_bf16_value((uint16_t)(lo + 1))) - a;
    return (uint16_t)(sign | (dl < dh ? lo : dh < dl ? lo + 1 : lo + (lo & 1)));
}

#endif
