/*
 * test_threads.c -- one context, many threads (docs/api.md, "Lifetimes and
 * threads").
 *
 * What the API promises, exercised all at once from NTHREADS threads that
 * start together at a barrier:
 *
 *   - each thread compiles kernels of its own (sources that differ per
 *     thread and per round, so the compile cache cannot answer them), runs
 *     them on its own tensors and checks every element;
 *   - each thread compiles a program of two kernel functions, which LLVM
 *     compiles on two threads of that compile (one module each), runs it
 *     and dumps its linked LLVM IR;
 *   - each thread also compiles a source that every thread compiles (the
 *     cache and the JIT see the same key from all threads at once) and one
 *     that fails (error frames are per thread: each gets its own diagnostic);
 *   - one kernel compiled before the threads start is run by all of them at
 *     once, each on separate tensors, results checked;
 *   - every thread asks for every dump of that shared kernel, including the
 *     ASM dump that is produced lazily on first request (under the kernel's
 *     mutex): all threads must get the same text;
 *   - the threads retain and release the shared kernel while others run it.
 *
 * Under ThreadSanitizer (scripts/test.sh, build-tsan) this is the data-race
 * check of the runtime and the compiler; in the other builds it is a
 * functional test of the same promises.
 */
#include <pthread.h>
#include <stdlib.h>

#include "test_util.h"

enum { NTHREADS = 6, ROUNDS = 3, RUNS = 20 };

static mt_kernel *shared;
static pthread_barrier_t start;

static const char *SHARED_SRC =
    "def shared(a: Tensor((\"n\",), \"float32\"), b: Tensor((\"n\",), \"float32\")):\n"
    "    out = a * b + a\n"
    "    return out\n";

typedef struct job {
    int id;
    int failures;
    char why[256];
    const char *asm_text;   /* what mt_kernel_dump(shared, ASM) gave */
} job;

static void failed(job *j, const char *fmt, int a, int b) {
    if (!j->failures++) snprintf(j->why, sizeof j->why, fmt, a, b);
}

/* Runs k (out = a * scale + b + bias over n floats) and checks it. */
static void run_affine(job *j, mt_kernel *k, int n, float scale, float bias) {
    int64_t shape = n;
    mt_tensor *a = mt_tensor_create(MT_FLOAT32, 1, &shape), *b = mt_tensor_create(MT_FLOAT32, 1, &shape);
    float *pa = mt_tensor_data(a), *pb = mt_tensor_data(b);
    for (int i = 0; i < n; i++) {
        pa[i] = (float)(i % 7) + (float)j->id;
        pb[i] = (float)(i % 5);
    }
    mt_tensor *args[2] = {a, b};
    mt_tensor *out = NULL;
    mt_diag d;
    if (mt_kernel_run(k, args, 2, &out, 1, &d) != MT_OK) {
        failed(j, "thread %d: run failed (%d)", j->id, (int)d.status);
    } else {
        const float *po = mt_tensor_data(out);
        for (int i = 0; i < n; i++)
            if (po[i] != pa[i] * scale + pb[i] + bias) {
                failed(j, "thread %d: wrong element %d", j->id, i);
                break;
            }
        mt_tensor_release(out);
    }
    mt_tensor_release(a);
    mt_tensor_release(b);
}

/* A program of two kernel functions (matmul + relu, then matmul), which
 * LLVM compiles on several threads of the compile: relu(x @ w0) @ w1 with
 * x = 1, w0 = id + 1, w1 = 1 (4 x 8, 8 x 8, 8 x 8) is 64 (id + 1) everywhere. */
static void two_kernels(job *j, int r) {
    char src[512];
    snprintf(src, sizeof src,
             "def chain_t%d_r%d(x: Tensor((4, 8), \"float32\"), w0: Tensor((8, 8), \"float32\"),"
             " w1: Tensor((8, 8), \"float32\")):\n"
             "    return relu(x @ w0) @ w1\n",
             j->id, r);
    mt_diag d;
    mt_kernel *k = mt_jit_compile(test_ctx, src, NULL, &d);
    if (!k) {
        failed(j, "thread %d round %d: compiling two kernels failed", j->id, r);
        return;
    }
    mt_compile_times t;
    if (mt_kernel_compile_times(k, &t) != MT_OK || t.llvm_threads < 1 || t.llvm_threads > 2)
        failed(j, "thread %d: %d LLVM threads for two kernel functions", j->id, t.llvm_threads);
    int64_t sx[2] = {4, 8}, sw[2] = {8, 8};
    mt_tensor *x = mt_tensor_create(MT_FLOAT32, 2, sx), *w0 = mt_tensor_create(MT_FLOAT32, 2, sw),
              *w1 = mt_tensor_create(MT_FLOAT32, 2, sw);
    float *px = mt_tensor_data(x), *p0 = mt_tensor_data(w0), *p1 = mt_tensor_data(w1);
    for (int i = 0; i < 32; i++) px[i] = 1;
    for (int i = 0; i < 64; i++) {
        p0[i] = (float)(j->id + 1);
        p1[i] = 1;
    }
    mt_tensor *args[3] = {x, w0, w1}, *out = NULL;
    if (mt_kernel_run(k, args, 3, &out, 1, &d) != MT_OK) {
        failed(j, "thread %d: running two kernels failed (%d)", j->id, (int)d.status);
    } else {
        const float *po = mt_tensor_data(out);
        for (int i = 0; i < 32; i++)
            if (po[i] != 64.0f * (float)(j->id + 1)) {
                failed(j, "thread %d: wrong element %d of two kernels", j->id, i);
                break;
            }
        mt_tensor_release(out);
    }
    const char *ir = mt_kernel_dump(k, MT_STAGE_LLVM);
    if (!ir || !strstr(ir, "fused_matmul_relu") || !strstr(ir, "define void"))
        failed(j, "thread %d: LLVM dump of two kernels", j->id, 0);
    mt_tensor_release(x);
    mt_tensor_release(w0);
    mt_tensor_release(w1);
    mt_kernel_release(k);
}

/* The shared kernel on this thread's tensors: out = a * b + a. */
static void run_shared(job *j, int n) {
    int64_t shape = n;
    mt_tensor *a = mt_tensor_create(MT_FLOAT32, 1, &shape), *b = mt_tensor_create(MT_FLOAT32, 1, &shape);
    mt_tensor *out = mt_tensor_create(MT_FLOAT32, 1, &shape);
    float *pa = mt_tensor_data(a), *pb = mt_tensor_data(b);
    for (int i = 0; i < n; i++) {
        pa[i] = (float)(j->id + 1);
        pb[i] = (float)(i % 3);
    }
    mt_tensor *args[2] = {a, b};
    if (mt_kernel_run(shared, args, 2, &out, 1, NULL) != MT_OK) {
        failed(j, "thread %d: shared run failed (n=%d)", j->id, n);
    } else {
        const float *po = mt_tensor_data(out);
        for (int i = 0; i < n; i++)
            if (po[i] != pa[i] * pb[i] + pa[i]) {
                failed(j, "thread %d: shared kernel wrong at %d", j->id, i);
                break;
            }
    }
    mt_tensor_release(a);
    mt_tensor_release(b);
    mt_tensor_release(out);
}

static void *worker(void *arg) {
    job *j = arg;
    pthread_barrier_wait(&start);

    /* everyone asks for the lazy ASM dump at once */
    j->asm_text = mt_kernel_dump(shared, MT_STAGE_ASM);
    if (!j->asm_text || !strstr(j->asm_text, "fused_multiply_add"))
        failed(j, "thread %d: no ASM dump of the shared kernel", j->id, 0);
    for (int st = 0; st < MT_STAGE_COUNT_; st++) {
        const char *t = mt_kernel_dump(shared, (mt_stage)st);
        if (!t && !mt_kernel_dump_unavailable(shared, (mt_stage)st))
            failed(j, "thread %d: stage %d neither dumped nor explained", j->id, st);
    }

    for (int r = 0; r < ROUNDS; r++) {
        /* a kernel of this thread's own: constants and a size that differ per thread and round */
        int n = 37 + 11 * j->id + r;
        float scale = (float)(j->id + 2), bias = (float)r;
        char src[512];
        snprintf(src, sizeof src,
                 "def affine_t%d_r%d(a: Tensor((%d,), \"float32\"), b: Tensor((%d,), \"float32\")):\n"
                 "    out = a * %.1f + b\n"
                 "    out = out + %.1f\n"
                 "    return out\n",
                 j->id, r, n, n, scale, bias);
        mt_diag d;
        mt_kernel *k = mt_jit_compile(test_ctx, src, NULL, &d);
        if (!k) {
            failed(j, "thread %d round %d: compile failed", j->id, r);
            continue;
        }
        for (int i = 0; i < RUNS; i++) {
            run_affine(j, k, n, scale, bias);
            run_shared(j, 1 + (i * 13 + j->id) % 97);
        }
        mt_kernel_release(k);
        two_kernels(j, r);

        /* the same source from every thread at once */
        mt_kernel *same = mt_jit_compile(test_ctx, SHARED_SRC, NULL, &d);
        if (!same) failed(j, "thread %d: compiling the common source failed", j->id, 0);
        mt_kernel_release(same);

        /* a compile error: each thread's diagnostic is its own */
        snprintf(src, sizeof src, "def bad(a: Tensor((2,), \"float32\")):\n    return a + c%d\n", j->id);
        if (mt_jit_compile(test_ctx, src, NULL, &d) || d.status != MT_ERR_NAME || d.line != 2 ||
            d.col != 16) {
            failed(j, "thread %d: wrong diagnostic for an error (status %d)", j->id, (int)d.status);
        } else {
            char want[64];
            snprintf(want, sizeof want, "unknown name 'c%d'", j->id);
            if (strcmp(d.message, want) != 0) failed(j, "thread %d: diagnostic of another thread", j->id, 0);
        }

        /* references taken and dropped while other threads run the kernel */
        mt_kernel_retain(shared);
        run_shared(j, 64);
        mt_kernel_release(shared);
    }
    return NULL;
}

static void test_threads(void **state) {
    mt_diag d;
    shared = mt_jit_compile(test_ctx, SHARED_SRC, NULL, &d);
    if (!shared) fail_msg("%s", d.text);
    pthread_t th[NTHREADS];
    job jobs[NTHREADS];
    pthread_barrier_init(&start, NULL, NTHREADS);
    for (int i = 0; i < NTHREADS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].id = i;
        assert_int_equal(pthread_create(&th[i], NULL, worker, &jobs[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < NTHREADS; i++) {
        if (jobs[i].failures) fail_msg("%s (%d failures)", jobs[i].why, jobs[i].failures);
        /* the lazy dump was made once: every thread got the same text */
        assert_ptr_equal(jobs[i].asm_text, jobs[0].asm_text);
    }
    mt_kernel_release(shared);
}

/* Contexts created, used and destroyed by several threads at once, with
 * kernels that outlive their context's handle and are released elsewhere. */
static mt_kernel *handoff[NTHREADS];

static void *own_context(void *arg) {
    int id = (int)(intptr_t)arg;
    mt_context *ctx = mt_context_create(NULL);
    if (!ctx) return NULL;
    char src[256];
    snprintf(src, sizeof src,
             "def k%d(a: Tensor((4,), \"float32\"), b: Tensor((4,), \"float32\")):\n"
             "    return a * %d.0 + b\n",
             id, id);
    handoff[id] = mt_jit_compile(ctx, src, NULL, NULL);
    mt_context_destroy(ctx);
    return NULL;
}

static void test_contexts_per_thread(void **state) {
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, own_context, (void *)(intptr_t)i), 0);
    for (int i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < NTHREADS; i++) {
        assert_non_null(handoff[i]);
        job j = {.id = 0};
        run_affine(&j, handoff[i], 4, (float)i, 0.0f);
        assert_int_equal(j.failures, 0);
        mt_kernel_release(handoff[i]); /* frees the kernel and its context */
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_contexts_per_thread),
    };
    return cmocka_run_group_tests(tests, test_setup_ctx, test_teardown_ctx);
}
