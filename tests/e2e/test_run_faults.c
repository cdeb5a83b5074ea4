/*
 * test_run_faults.c -- mt_kernel_run when memory runs out at any point of a
 * run. The link wraps malloc, calloc, realloc and aligned_alloc
 * (tests/e2e.cmake; nothing in the library): for each k, the k-th
 * allocation the run makes fails, and the run must return MT_OK with the
 * right numbers or MT_ERR_NOMEM with no result handed out -- no crash, and
 * no leak (the ASan build checks). Kernels: a 40-step symbolic chain (more
 * values than the executor's on-stack tables: heap tables, per-run arena
 * placement), a short fixed-shape one with a constant, and a matmul that
 * allocates a scratch buffer of its own (mt_kernel_malloc). The wrap also
 * reaches the kernels' allocations: jit.c resolves them by address.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_util.h"

/* ---- allocation failure injection ----------------------------------------------- */

static atomic_long alloc_count; /* allocations since armed */
static atomic_long fail_at = -1; /* the one that fails (-1: none) */

static bool inject(void) {
    if (atomic_load_explicit(&fail_at, memory_order_relaxed) < 0) return false;
    return atomic_fetch_add(&alloc_count, 1) == atomic_load(&fail_at);
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void *__wrap_malloc(size_t n) { return inject() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { return inject() ? NULL : __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { return inject() ? NULL : __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t a, size_t n) {
    return inject() ? NULL : __real_aligned_alloc(a, n);
}

static void arm(long k) {
    atomic_store(&alloc_count, 0);
    atomic_store(&fail_at, k);
}
static long disarm(void) {
    atomic_store(&fail_at, -1);
    return atomic_load(&alloc_count);
}

/* ---- the runs --------------------------------------------------------------------- */

static void fill(mt_tensor *t, double scale) {
    float *p = mt_tensor_data(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++) p[i] = (float)(((i * 7) % 11 - 5) * scale);
}

/* out = x @ w applied `steps` times, in double */
static double *reference(const mt_tensor *x, const mt_tensor *w, int64_t n, int c, int steps,
                         double add) {
    double *a = malloc(sizeof(double) * (size_t)(n * c)), *t = malloc(sizeof(double) * (size_t)(n * c));
    const float *xv = mt_tensor_data(x), *wv = mt_tensor_data(w);
    for (int64_t i = 0; i < n * c; i++) a[i] = xv[i];
    for (int s = 0; s < steps; s++) {
        for (int64_t i = 0; i < n; i++)
            for (int j = 0; j < c; j++) {
                double acc = 0;
                for (int q = 0; q < c; q++) acc += a[i * c + q] * wv[q * c + j];
                t[i * c + j] = acc;
            }
        double *sw = a;
        a = t, t = sw;
    }
    for (int64_t i = 0; i < n * c; i++) a[i] += add;
    free(t);
    return a;
}

/* Runs k with the k-th allocation failing for k = 0, 1, ... until a run
 * makes fewer allocations than k (the failure never happened). */
static void run_all_failures(mt_kernel *k, int c, int steps, double add, bool symbolic) {
    long nfailed = 0;
    for (long fail = 0;; fail++) {
        int64_t n = symbolic ? 1 + (fail * 37) % 301 : c; /* new sizes: few pool hits */
        int64_t xs[2] = {n, c}, ws[2] = {c, c};
        mt_tensor *args[2] = {mt_tensor_create(MT_FLOAT32, 2, xs), mt_tensor_create(MT_FLOAT32, 2, ws)};
        fill(args[0], 0.25);
        fill(args[1], 1.0 / c);
        mt_tensor *out = NULL;
        mt_diag d;
        arm(fail);
        mt_status st = mt_kernel_run(k, args, 2, &out, 1, &d);
        long made = disarm();
        if (st == MT_OK) {
            assert_non_null(out);
            double *want = reference(args[0], args[1], n, c, steps, add);
            const float *got = mt_tensor_data(out);
            for (int64_t i = 0; i < n * c; i++)
                if (fabs(got[i] - want[i]) > 1e-4 * (1 + fabs(want[i])))
                    fail_msg("fail=%ld: out[%lld] = %g, want %g", fail, (long long)i, got[i], want[i]);
            free(want);
            mt_tensor_release(out);
        } else {
            if (st != MT_ERR_NOMEM) fail_msg("fail=%ld: status %d: %s", fail, st, d.text);
            assert_null(out);
            nfailed++;
        }
        mt_tensor_release(args[0]);
        mt_tensor_release(args[1]);
        if (made <= fail) break; /* this run never reached the failing allocation */
        if (fail > 10000) fail_msg("runs never stop allocating");
    }
    assert_true(nfailed > 0); /* some allocation was made, and its failure reported */
}

static void test_symbolic_chain_nomem(void **s) {
    (void)s;
    enum { STEPS = 40 };
    char src[4096];
    size_t len = (size_t)snprintf(src, sizeof src,
                                  "def f(x: Tensor((\"n\", 8), \"float32\"), w: Tensor((8, 8), \"float32\")):\n"
                                  "    a0 = x @ w\n");
    for (int i = 1; i < STEPS; i++)
        len += (size_t)snprintf(src + len, sizeof src - len, "    a%d = a%d @ w\n", i, i - 1);
    snprintf(src + len, sizeof src - len, "    return a%d\n", STEPS - 1);
    mt_kernel *k = compile_ok(src);
    run_all_failures(k, 8, STEPS, 0, true);
    mt_kernel_release(k);
}

static void test_fixed_chain_nomem(void **s) {
    (void)s;
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((16, 16), \"float32\"), w: Tensor((16, 16), \"float32\")):\n"
        "    a = x @ w\n    b = a @ w\n    return b + 1.5\n");
    run_all_failures(k, 16, 2, 1.5, false);
    mt_kernel_release(k);
}

/* A kernel that allocates its own buffer (matmul's packed B panel, 256 KiB:
 * over the 64 KiB stack limit, so mt_kernel_malloc). Its failure used to
 * make the kernel write through NULL (the host died of SIGSEGV). */
static void test_kernel_scratch_nomem(void **s) {
    (void)s;
    mt_kernel *k = compile_ok(
        "def f(x: Tensor((256, 256), \"float32\"), w: Tensor((256, 256), \"float32\")):\n"
        "    return x @ w\n");
    const char *ir = mt_kernel_dump(k, MT_STAGE_LLVM);
    assert_non_null(ir);
    assert_non_null(strstr(ir, "@mt_kernel_malloc"));
    run_all_failures(k, 256, 1, 0, false);
    mt_kernel_release(k);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symbolic_chain_nomem),
        cmocka_unit_test(test_fixed_chain_nomem),
        cmocka_unit_test(test_kernel_scratch_nomem),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
