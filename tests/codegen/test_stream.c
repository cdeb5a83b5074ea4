/*
 * test_stream.c -- streaming (non-temporal) stores (src/codegen/llvm_stream.c).
 *
 * A buffer of at least 32 MiB that a kernel writes and never reads is
 * written with non-temporal stores where the address is 64-byte aligned,
 * normal stores where it is not, and the function ends with an sfence
 * (x86 targets; on others the same kernels keep normal stores).
 * Checked through the public API: which kernels get them (the LLVM IR
 * dump), and that layer_norm over 2048 x 4096 float32 (32 MiB) gives the
 * reference's numbers into an output the executor allocates (aligned), a
 * caller's output at an aligned offset, and one 4 bytes off (every
 * streaming store takes the normal path). Reference: double, per row;
 * tolerance 1e-4 absolute on outputs of magnitude up to ~3 (float32
 * normalization of 4096 values, gamma and beta in [-1, 1]). And an
 * elementwise kernel of 8,388,613 float32 (32 MiB and a scalar tail of 5)
 * into the same three outputs, compared exactly with float C.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define ROWS 2048
#define COLS 4096

static const char *LN_BIG =
    "def ln(x: Tensor((2048, 4096), \"float32\"), g: Tensor((4096,), \"float32\"),"
    " b: Tensor((4096,), \"float32\")):\n"
    "    return layer_norm(x, g, b)\n";

/* Streaming stores are made for x86 targets only (llvm.c): the module's
 * triple says whether this host's JIT is one. */
static bool x86_target(mt_kernel *k) {
    const char *ir = mt_kernel_dump(k, MT_STAGE_LLVM);
    assert_non_null(ir);
    const char *t = strstr(ir, "target triple = \"");
    assert_non_null(t);
    t += strlen("target triple = \"");
    return strncmp(t, "x86_64", 6) == 0 || strncmp(t, "i686", 4) == 0;
}

static bool streams(mt_kernel *k) {
    const char *ir = mt_kernel_dump(k, MT_STAGE_LLVM);
    assert_non_null(ir);
    bool nt = strstr(ir, "!nontemporal") != NULL;
    /* streaming stores come with the fence that orders them */
    assert_int_equal(nt, strstr(ir, "llvm.x86.sse.sfence") != NULL);
    if (nt) { /* and they reach the machine code (movntps, movntdq, ...) */
        const char *as = mt_kernel_dump(k, MT_STAGE_ASM);
        assert_non_null(as);
        if (!strstr(as, "movnt")) fail_msg("!nontemporal in the IR but no movnt* in the machine code");
    }
    return nt;
}

static void test_which_kernels(void **state) {
    (void)state;
    mt_kernel *k = compile_ok(LN_BIG);
    bool x86 = x86_target(k);
    assert_int_equal(streams(k), x86);
    mt_kernel_release(k);
    /* 1 MiB: stays in cache for whoever reads it next */
    k = compile_ok("def ln(x: Tensor((64, 4096), \"float32\"), g: Tensor((4096,), \"float32\"),"
                   " b: Tensor((4096,), \"float32\")):\n"
                   "    return layer_norm(x, g, b)\n");
    assert_false(streams(k));
    mt_kernel_release(k);
    /* softmax reads its output back (exp stored, then scaled): never streamed */
    k = compile_ok("def sm(x: Tensor((2048, 4096), \"float32\")):\n"
                   "    return softmax(x, axis=-1)\n");
    assert_false(streams(k));
    mt_kernel_release(k);
}

static double ref_at(const float *x, const float *g, const float *b, const double *mean,
                     const double *rstd, int64_t r, int64_t c) {
    return ((double)x[r * COLS + c] - mean[r]) * rstd[r] * g[c] + b[c];
}

static void check_ln(const float *o, const float *x, const float *g, const float *b,
                     const double *mean, const double *rstd, const char *what) {
    double worst = 0;
    for (int64_t r = 0; r < ROWS; r++)
        for (int64_t c = 0; c < COLS; c++) {
            double err = fabs(o[r * COLS + c] - ref_at(x, g, b, mean, rstd, r, c));
            if (!(err <= worst)) worst = err; /* NaN stays */
        }
    if (!(worst <= 1e-4)) fail_msg("%s: largest error %g (tolerance 1e-4)", what, worst);
}

static void test_layer_norm_alignments(void **state) {
    (void)state;
    int64_t xs[2] = {ROWS, COLS}, vs[1] = {COLS};
    mt_tensor *x = mt_tensor_create(MT_FLOAT32, 2, xs), *g = mt_tensor_create(MT_FLOAT32, 1, vs),
              *b = mt_tensor_create(MT_FLOAT32, 1, vs);
    float *xp = mt_tensor_data(x), *gp = mt_tensor_data(g), *bp = mt_tensor_data(b);
    unsigned seed = 7;
    for (int64_t i = 0; i < (int64_t)ROWS * COLS; i++) {
        seed = seed * 1103515245u + 12345u;
        xp[i] = (float)((seed >> 8) % 20001) / 10000.0f - 1.0f + (float)(i / COLS % 5);
    }
    for (int64_t c = 0; c < COLS; c++) {
        gp[c] = (float)(c % 17) / 8.0f - 1.0f;
        bp[c] = (float)(c % 13) / 6.0f - 1.0f;
    }
    double *mean = malloc(sizeof(double) * ROWS), *rstd = malloc(sizeof(double) * ROWS);
    for (int64_t r = 0; r < ROWS; r++) {
        double s = 0, q = 0;
        for (int64_t c = 0; c < COLS; c++) s += xp[r * COLS + c];
        mean[r] = s / COLS;
        for (int64_t c = 0; c < COLS; c++) {
            double d = xp[r * COLS + c] - mean[r];
            q += d * d;
        }
        rstd[r] = 1.0 / sqrt(q / COLS + 1e-5);
    }

    mt_kernel *k = compile_ok(LN_BIG);
    mt_tensor *args[3] = {x, g, b};
    mt_diag d;
    /* the executor's output (64-byte aligned): streamed */
    mt_tensor *out = NULL;
    assert_int_equal(mt_kernel_run(k, args, 3, &out, 1, &d), MT_OK);
    check_ln(mt_tensor_data(out), xp, gp, bp, mean, rstd, "executor's output");
    mt_tensor_release(out);

    /* the caller's memory at +64 bytes (aligned) and +4 bytes (not) */
    size_t bytes = (size_t)ROWS * COLS * sizeof(float);
    char *raw = aligned_alloc(64, bytes + 128);
    assert_non_null(raw);
    const int offsets[2] = {64, 4};
    for (int t = 0; t < 2; t++) {
        float *o = (float *)(raw + offsets[t]);
        for (int64_t i = 0; i < (int64_t)ROWS * COLS; i++) o[i] = NAN;
        mt_tensor *w = mt_tensor_wrap(o, MT_FLOAT32, 2, xs, NULL);
        out = w;
        assert_int_equal(mt_kernel_run(k, args, 3, &out, 1, &d), MT_OK);
        assert_ptr_equal(out, w);
        check_ln(o, xp, gp, bp, mean, rstd, offsets[t] == 4 ? "caller's output +4" : "caller's output +64");
        mt_tensor_release(w);
    }
    free(raw);
    mt_kernel_release(k);
    free(mean);
    free(rstd);
    mt_tensor_release(x);
    mt_tensor_release(g);
    mt_tensor_release(b);
}

static void test_elementwise_alignments(void **state) {
    (void)state;
    enum { N = 8388613 };
    mt_kernel *k = compile_ok("def f(a: Tensor((8388613,), \"float32\"), b: Tensor((8388613,), \"float32\")):\n"
                              "    return a + b * 2.0\n");
    assert_int_equal(streams(k), x86_target(k));
    int64_t n = N;
    mt_tensor *a = mt_tensor_create(MT_FLOAT32, 1, &n), *b = mt_tensor_create(MT_FLOAT32, 1, &n);
    float *ap = mt_tensor_data(a), *bp = mt_tensor_data(b);
    for (int64_t i = 0; i < N; i++) {
        ap[i] = (float)(i % 1001) * 0.37f - 100.0f;
        bp[i] = (float)(i % 37) * 1.5f - 20.0f;
    }
    mt_tensor *args[2] = {a, b};
    char *raw = aligned_alloc(64, ((size_t)N * sizeof(float) + 127) / 64 * 64 + 64); /* a multiple of 64 */
    assert_non_null(raw);
    for (int t = 0; t < 3; t++) { /* the executor's, the caller's at +64, at +4 */
        mt_tensor *out = NULL;
        float *o = NULL;
        if (t > 0) {
            o = (float *)(raw + (t == 1 ? 64 : 4));
            for (int64_t i = 0; i < N; i++) o[i] = NAN;
            out = mt_tensor_wrap(o, MT_FLOAT32, 1, &n, NULL);
        }
        mt_tensor *w = out;
        assert_int_equal(mt_kernel_run(k, args, 2, &out, 1, NULL), MT_OK);
        if (t > 0) assert_ptr_equal(out, w);
        const float *got = mt_tensor_data(out);
        for (int64_t i = 0; i < N; i++) {
            float want = ap[i] + bp[i] * 2.0f;
            if (got[i] != want) fail_msg("output %d, element %lld: %g, want %g", t, (long long)i, got[i], want);
        }
        mt_tensor_release(out);
    }
    free(raw);
    mt_kernel_release(k);
    mt_tensor_release(a);
    mt_tensor_release(b);
}

/* float16: IEEE half bits <-> double (normal and zero values only: the
 * data below stays within them). */
static uint16_t to_half(double d) {
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u, mant = u & 0x7fffffu;
    int e = (int)((u >> 23) & 0xff) - 127 + 15;
    if ((u & 0x7fffffffu) == 0 || e <= 0) return (uint16_t)sign;
    uint32_t h = sign | (uint32_t)e << 10 | mant >> 13, rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++; /* nearest, ties to even */
    return (uint16_t)h;
}

static double from_half(uint16_t h) {
    int e = (h >> 10) & 0x1f;
    double m = (double)(h & 0x3ff);
    double v = e == 0 ? ldexp(m, -24) : ldexp(1024.0 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* A float16 output of 32 MiB takes the streaming path too, with the same
 * bits at an aligned and an unaligned output. (Only the IR is checked: on
 * AVX-512 hosts LLVM 19 selects a normal vmovaps for a !nontemporal store
 * of a <32 x half> held in a register; docs/codegen.md.) Reference: double
 * from the same float16 inputs; tolerance 4e-3 absolute (half an ulp of
 * float16 at magnitudes up to 4 is 2e-3, plus the float32 arithmetic). */
static void test_float16(void **state) {
    (void)state;
    enum { R = 4096, C = 4096 };
    mt_kernel *k = compile_ok("def ln(x: Tensor((4096, 4096), \"float16\"), g: Tensor((4096,), \"float16\"),"
                              " b: Tensor((4096,), \"float16\")):\n"
                              "    return layer_norm(x, g, b)\n");
    const char *ir = mt_kernel_dump(k, MT_STAGE_LLVM);
    assert_non_null(ir);
    assert_int_equal(strstr(ir, "!nontemporal") != NULL, x86_target(k));
    int64_t xs[2] = {R, C}, vs[1] = {C};
    mt_tensor *x = mt_tensor_create(MT_FLOAT16, 2, xs), *g = mt_tensor_create(MT_FLOAT16, 1, vs),
              *b = mt_tensor_create(MT_FLOAT16, 1, vs);
    uint16_t *xp = mt_tensor_data(x), *gp = mt_tensor_data(g), *bp = mt_tensor_data(b);
    unsigned seed = 11;
    for (int64_t i = 0; i < (int64_t)R * C; i++) {
        seed = seed * 1103515245u + 12345u;
        xp[i] = to_half((double)((seed >> 8) % 2001) / 1000.0 - 1.0 + (double)(i / C % 3));
    }
    for (int64_t c = 0; c < C; c++) {
        gp[c] = to_half((double)(c % 17) / 8.0 - 1.0);
        bp[c] = to_half((double)(c % 13) / 6.0 - 1.0);
    }
    mt_tensor *args[3] = {x, g, b}, *out = NULL;
    mt_diag d;
    assert_int_equal(mt_kernel_run(k, args, 3, &out, 1, &d), MT_OK);
    const uint16_t *o = mt_tensor_data(out);
    double worst = 0;
    for (int64_t r = 0; r < R; r++) {
        double s = 0, q = 0;
        for (int64_t c = 0; c < C; c++) s += from_half(xp[r * C + c]);
        double mean = s / C;
        for (int64_t c = 0; c < C; c++) q += (from_half(xp[r * C + c]) - mean) * (from_half(xp[r * C + c]) - mean);
        double rstd = 1.0 / sqrt(q / C + 1e-5);
        for (int64_t c = 0; c < C; c++) {
            double want = (from_half(xp[r * C + c]) - mean) * rstd * from_half(gp[c]) + from_half(bp[c]);
            double err = fabs(from_half(o[r * C + c]) - want);
            if (!(err <= worst)) worst = err;
        }
    }
    if (!(worst <= 4e-3)) fail_msg("float16 layer_norm: largest error %g (tolerance 4e-3)", worst);
    /* 2 bytes off 64: every streaming store takes the normal path */
    size_t bytes = (size_t)R * C * 2;
    char *raw = aligned_alloc(64, bytes + 128);
    assert_non_null(raw);
    mt_tensor *w = mt_tensor_wrap(raw + 2, MT_FLOAT16, 2, xs, NULL), *res = w;
    assert_int_equal(mt_kernel_run(k, args, 3, &res, 1, &d), MT_OK);
    assert_int_equal(memcmp(raw + 2, o, bytes), 0);
    mt_tensor_release(w);
    free(raw);
    mt_tensor_release(out);
    mt_kernel_release(k);
    mt_tensor_release(x);
    mt_tensor_release(g);
    mt_tensor_release(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_which_kernels),
        cmocka_unit_test(test_layer_norm_alignments),
        cmocka_unit_test(test_elementwise_alignments),
        cmocka_unit_test(test_float16),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
