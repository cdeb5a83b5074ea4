/*
 * test_thread_pool.c -- the context's thread pool through the public API
 * (src/runtime/parallel.c): num_threads 1, 2 and 4 give bit-identical
 * results; one pool serves thousands of runs; one kernel run from four host
 * threads at once; contexts destroyed idle, right after a run, or never
 * run; many contexts created and destroyed.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "minitriton.h"

static const char *ADD2 =
    "def add2(a: Tensor((\"n\",), \"float32\"), b: Tensor((\"n\",), \"float32\")):\n"
    "    out = a + b\n"
    "    out = out + a\n"
    "    return out\n";

/* matmul (parallel row blocks) with its epilogue, then a second matmul */
static const char *MLP =
    "def mlp(x: Tensor((\"n\", 96), \"float32\"), w0: Tensor((64, 96), \"float32\"),\n"
    "        b0: Tensor((64,), \"float32\"), w1: Tensor((10, 64), \"float32\")):\n"
    "    return relu(x @ w0.T + b0) @ w1.T\n";

static const char *SOFTMAX =
    "def sm(x: Tensor((\"n\", 513), \"float32\")):\n"
    "    return softmax(x, axis=-1)\n";

static mt_context *ctx_with(int threads) {
    mt_context_options o = {0};
    o.num_threads = threads;
    mt_context *c = mt_context_create(&o);
    assert_non_null(c);
    return c;
}

static mt_kernel *compile_in(mt_context *c, const char *src) {
    mt_diag d;
    mt_kernel *k = mt_jit_compile(c, src, NULL, &d);
    if (!k) fail_msg("compile failed:\n%s", d.text);
    return k;
}

static mt_tensor *filled(int ndim, int64_t d0, int64_t d1, int seed) {
    int64_t shape[2] = {d0, d1};
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, ndim, shape);
    float *p = mt_tensor_data(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++)
        p[i] = (float)((i * 37 + seed * 11) % 97) * 0.03125f - 1.5f;
    return t;
}

static mt_tensor *run(mt_kernel *k, mt_tensor **args, int nargs) {
    mt_tensor *r = NULL;
    mt_diag d;
    if (mt_kernel_run(k, args, nargs, &r, 1, &d) != MT_OK) fail_msg("run failed: %s", d.text);
    return r;
}

static size_t nbytes(const mt_tensor *t) { return (size_t)mt_tensor_numel(t) * sizeof(float); }

/* Each kernel in contexts of 1, 2 and 4 threads: the same bits. The ranges
 * differ, the iterations each computes do not. One result is also checked
 * against a double reference, so that "identical" is not "identically wrong". */
static void test_identical_across_thread_counts(void **state) {
    const int64_t n = 777;
    mt_tensor *x = filled(2, n, 96, 1), *w0 = filled(2, 64, 96, 2), *b0 = filled(1, 64, 0, 3);
    mt_tensor *w1 = filled(2, 10, 64, 4), *s = filled(2, n, 513, 5);
    mt_tensor *va = filled(1, (1 << 20) + 3, 0, 6), *vb = filled(1, (1 << 20) + 3, 0, 7);
    mt_tensor *margs[4] = {x, w0, b0, w1}, *sargs[1] = {s}, *vargs[2] = {va, vb};
    mt_tensor *first[3] = {NULL, NULL, NULL};
    static const int threads[] = {1, 2, 4};
    for (int t = 0; t < 3; t++) {
        mt_context *c = ctx_with(threads[t]);
        mt_kernel *ks[3] = {compile_in(c, MLP), compile_in(c, SOFTMAX), compile_in(c, ADD2)};
        mt_tensor **args[3] = {margs, sargs, vargs};
        int nargs[3] = {4, 1, 2};
        for (int k = 0; k < 3; k++) {
            mt_tensor *r = run(ks[k], args[k], nargs[k]);
            if (t == 0) {
                first[k] = r;
            } else {
                assert_int_equal(mt_tensor_numel(r), mt_tensor_numel(first[k]));
                assert_memory_equal(mt_tensor_data(r), mt_tensor_data(first[k]), nbytes(r));
                mt_tensor_release(r);
            }
            mt_kernel_release(ks[k]);
        }
        mt_context_destroy(c);
    }
    /* the MLP against double: relu(x w0^T + b0) w1^T, tolerance 1e-4 relative */
    const float *xv = mt_tensor_data(x), *w0v = mt_tensor_data(w0), *b0v = mt_tensor_data(b0);
    const float *w1v = mt_tensor_data(w1), *rv = mt_tensor_data(first[0]);
    for (int64_t i = 0; i < n; i += 13) {
        double h[64];
        for (int j = 0; j < 64; j++) {
            double acc = b0v[j];
            for (int k = 0; k < 96; k++) acc += (double)xv[i * 96 + k] * w0v[j * 96 + k];
            h[j] = acc > 0 ? acc : 0;
        }
        for (int o = 0; o < 10; o++) {
            double want = 0;
            for (int j = 0; j < 64; j++) want += h[j] * w1v[o * 64 + j];
            assert_true(fabs(rv[i * 10 + o] - want) <= 1e-4 * fmax(1.0, fabs(want)));
        }
    }
    for (int k = 0; k < 3; k++) mt_tensor_release(first[k]);
    mt_tensor_release(x), mt_tensor_release(w0), mt_tensor_release(b0), mt_tensor_release(w1);
    mt_tensor_release(s), mt_tensor_release(va), mt_tensor_release(vb);
}

/* One context, thousands of runs of a kernel with a parallel loop (13
 * chunks), the output passed by the caller: every run is right. */
static void test_reuse_many_runs(void **state) {
    mt_context *c = ctx_with(2);
    mt_kernel *k = compile_in(c, ADD2);
    const int64_t n = 200003;
    mt_tensor *a = filled(1, n, 0, 1), *b = filled(1, n, 0, 2), *out = filled(1, n, 0, 3);
    mt_tensor *args[2] = {a, b};
    const float *av = mt_tensor_data(a), *bv = mt_tensor_data(b);
    float *ov = mt_tensor_data(out);
    for (int rep = 0; rep < 2000; rep++) {
        ov[rep * 97 % n] = -1.0f; /* a stale value where this run must write */
        mt_tensor *r = out;
        assert_int_equal(mt_kernel_run(k, args, 2, &r, 1, NULL), MT_OK);
        assert_ptr_equal(r, out);
        int64_t i = rep * 97 % n;
        assert_true(ov[i] == (av[i] + bv[i]) + av[i]);
    }
    for (int64_t i = 0; i < n; i++) assert_true(ov[i] == (av[i] + bv[i]) + av[i]);
    mt_tensor_release(a), mt_tensor_release(b), mt_tensor_release(out);
    mt_kernel_release(k);
    mt_context_destroy(c);
}

/* One kernel of one 2-thread context run from four host threads at once:
 * one at a time gets the pool, the others run serially; all are right. */
typedef struct host {
    mt_kernel *k;
    int seed;
    int bad;
} host;

static void *host_main(void *h_) {
    host *h = h_;
    for (int rep = 0; rep < 25; rep++) {
        int64_t n = 100000 + h->seed * 1000 + rep * 7;
        mt_tensor *a = filled(1, n, 0, h->seed + rep), *b = filled(1, n, 0, h->seed - rep);
        mt_tensor *args[2] = {a, b}, *r = NULL;
        if (mt_kernel_run(h->k, args, 2, &r, 1, NULL) != MT_OK) {
            h->bad = 1;
        } else {
            const float *av = mt_tensor_data(a), *bv = mt_tensor_data(b), *rv = mt_tensor_data(r);
            for (int64_t i = 0; i < n; i++)
                if (rv[i] != (av[i] + bv[i]) + av[i]) h->bad = 1;
            mt_tensor_release(r);
        }
        mt_tensor_release(a), mt_tensor_release(b);
    }
    return NULL;
}

static void test_four_host_threads(void **state) {
    mt_context *c = ctx_with(2);
    mt_kernel *k = compile_in(c, ADD2);
    host h[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        h[i] = (host){k, i + 1, 0};
        assert_int_equal(pthread_create(&t[i], NULL, host_main, &h[i]), 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 4; i++) assert_int_equal(h[i].bad, 0);
    mt_kernel_release(k);
    mt_context_destroy(c);
}

/* A context is destroyed with its workers asleep, spinning (right after a
 * run), or never started; the kernel released before or after. */
static void test_destroy(void **state) {
    for (int mode = 0; mode < 4; mode++) {
        mt_context *c = ctx_with(3);
        mt_kernel *k = compile_in(c, ADD2);
        mt_tensor *a = filled(1, 100000, 0, 1), *b = filled(1, 100000, 0, 2);
        mt_tensor *args[2] = {a, b};
        if (mode != 3) mt_tensor_release(run(k, args, 2));
        if (mode == 1) usleep(30000); /* workers asleep */
        if (mode == 2) {
            mt_context_destroy(c); /* the kernel keeps it alive... */
            mt_tensor_release(run(k, args, 2)); /* ...and runnable */
            mt_kernel_release(k);
        } else {
            mt_kernel_release(k);
            mt_context_destroy(c);
        }
        mt_tensor_release(a), mt_tensor_release(b);
    }
}

/* Many contexts with various thread counts, created and destroyed, some
 * running a parallel kernel: no thread or memory survives them (LSan and
 * valgrind runs check the rest). */
static void test_many_contexts(void **state) {
    mt_tensor *a = filled(1, 50000, 0, 1), *b = filled(1, 50000, 0, 2);
    mt_tensor *args[2] = {a, b};
    for (int i = 0; i < 60; i++) {
        mt_context *c = ctx_with(i % 5); /* 0: all cores */
        if (i % 6 == 0) {
            mt_kernel *k = compile_in(c, ADD2);
            mt_tensor *r = run(k, args, 2);
            const float *av = mt_tensor_data(a), *bv = mt_tensor_data(b), *rv = mt_tensor_data(r);
            for (int64_t e = 0; e < 50000; e += 101) assert_true(rv[e] == (av[e] + bv[e]) + av[e]);
            mt_tensor_release(r);
            mt_kernel_release(k);
        }
        mt_context_destroy(c);
    }
    mt_tensor_release(a), mt_tensor_release(b);
}

/* fork() after a context's workers started (the child has none of them):
 * the child runs the context's kernels (serially) with the same results and
 * releases the kernel and the context without hanging or crashing (joining
 * the parent's workers there crashed). Not under TSan, which does not
 * support multi-threaded fork well. */
static void test_fork_child(void **state) {
    (void)state;
#ifndef __SANITIZE_THREAD__
    mt_context *c = ctx_with(4);
    mt_kernel *k = compile_in(c, ADD2);
    mt_tensor *a = filled(1, 100003, 0, 1), *b = filled(1, 100003, 0, 2);
    mt_tensor *args[2] = {a, b};
    mt_tensor *want = run(k, args, 2);
    /* Workers past their start-up before the fork: under ASan a worker still
     * starting can hold the allocator's lock at the fork, and the child,
     * which inherits the lock but not the thread, hangs in its first
     * allocation (CI, once, under load). Every run wakes the workers; many
     * runs give each of them time to start and take a chunk. The pool's own
     * test (test_pool_faults) checks that each one ran a body. */
    for (int i = 0; i < 200; i++) mt_tensor_release(run(k, args, 2));
    usleep(50000);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(30);
        int rc = 0;
        for (int i = 0; i < 5 && rc == 0; i++) {
            mt_tensor *got = run(k, args, 2);
            if (memcmp(mt_tensor_data(got), mt_tensor_data(want), nbytes(want)) != 0) rc = 3;
            mt_tensor_release(got);
        }
        mt_kernel_release(k);
        mt_context_destroy(c);
        _exit(rc);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) fail_msg("the child died of signal %d", WTERMSIG(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    mt_tensor *again = run(k, args, 2); /* the parent's pool still works */
    assert_memory_equal(mt_tensor_data(again), mt_tensor_data(want), nbytes(want));
    mt_tensor_release(again);
    mt_tensor_release(want);
    mt_tensor_release(a);
    mt_tensor_release(b);
    mt_kernel_release(k);
    mt_context_destroy(c);
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_across_thread_counts),
        cmocka_unit_test(test_reuse_many_runs),
        cmocka_unit_test(test_four_host_threads),
        cmocka_unit_test(test_destroy),
        cmocka_unit_test(test_many_contexts),
        cmocka_unit_test(test_fork_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
