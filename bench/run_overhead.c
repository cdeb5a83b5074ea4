/*
 * run_overhead.c -- what one mt_kernel_run costs beyond the kernel's work.
 *
 *     ./build/bench/mt_run_overhead [threads [row]]
 *
 * Times (median of 15 batches of 20000 runs, after a warm-up) of:
 *   - `a + b` on 4 float32 elements, the output passed by the caller;
 *   - the same with the result allocated by the run (and released);
 *   - `(a @ b) @ a` on 2 x 2 matrices: two kernels, one intermediate;
 *   - the MLP 784-128-10 at batch 1 (three kernel calls), output passed;
 * in a context with the given thread count (default 1). Not a test; built
 * with the benchmark (target mt_run_overhead).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "minitriton.h"


enum { BATCHES = 15, PER = 20000 };

typedef struct job {
    mt_kernel *k;
    mt_tensor **args;
    int nargs;
    mt_tensor *out; /* NULL: the run allocates, the loop releases */
} job;

static double per_call_ns(job *j) {
    double t[BATCHES];
    for (int b = -2; b < BATCHES; b++) {
        double t0 = now_s();
        for (int i = 0; i < PER; i++) {
            mt_tensor *r = j->out;
            if (mt_kernel_run(j->k, j->args, j->nargs, &r, 1, NULL) != MT_OK) {
                fprintf(stderr, "run failed\n");
                exit(1);
            }
            if (!j->out) mt_tensor_release(r);
        }
        if (b >= 0) t[b] = (now_s() - t0) / PER * 1e9;
    }
    qsort(t, BATCHES, sizeof t[0], cmp_double);
    return t[BATCHES / 2];
}

static mt_kernel *compile(mt_context *c, const char *src) {
    mt_diag d;
    mt_kernel *k = mt_jit_compile(c, src, NULL, &d);
    if (!k) {
        fprintf(stderr, "%s\n", d.text);
        exit(1);
    }
    return k;
}

static mt_tensor *filled(int ndim, int64_t d0, int64_t d1) {
    int64_t shape[2] = {d0, d1};
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, ndim, shape);
    float *p = mt_tensor_data(t);
    for (int64_t i = 0; i < mt_tensor_numel(t); i++) p[i] = (float)(i % 7) * 0.125f - 0.25f;
    return t;
}

int main(int argc, char **argv) {
    mt_context_options o = {0};
    o.num_threads = argc > 1 ? atoi(argv[1]) : 1;
    mt_context *c = mt_context_create(&o);
    if (!c) return 1;

#define F32(s) "Tensor(" s ", \"float32\")"
    mt_kernel *add = compile(c, "def add(a: " F32("(4,)") ", b: " F32("(4,)") "):\n"
                                "    return a + b\n");
    mt_kernel *add2 = compile(c, "def mm2(a: " F32("(2, 2)") ", b: " F32("(2, 2)") "):\n"
                                 "    return (a @ b) @ a\n");
    mt_kernel *mlp = compile(c, "def mlp1(x: " F32("(1, 784)") ", w0: " F32("(128, 784)")
                                ", b0: " F32("(128,)") ", w1: " F32("(10, 128)") ", b1: "
                                F32("(10,)") "):\n"
                                "    return relu(x @ w0.T + b0) @ w1.T + b1\n");
    mt_tensor *a = filled(1, 4, 0), *b = filled(1, 4, 0), *o4 = filled(1, 4, 0);
    mt_tensor *ab[2] = {a, b};
    mt_tensor *m2a = filled(2, 2, 2), *m2b = filled(2, 2, 2), *m2o = filled(2, 2, 2);
    mt_tensor *mm[2] = {m2a, m2b};
    mt_tensor *margs[5] = {filled(2, 1, 784), filled(2, 128, 784), filled(1, 128, 0),
                           filled(2, 10, 128), filled(1, 10, 0)};
    mt_tensor *mout = filled(2, 1, 10);

    job jobs[] = {{add, ab, 2, o4}, {add, ab, 2, NULL}, {add2, mm, 2, m2o}, {mlp, margs, 5, mout}};
    const char *names[] = {"a + b, 4 elements, output passed", "a + b, 4 elements, result allocated",
                           "(a @ b) @ a, 2 x 2, output passed",
                           "MLP 784-128-10 batch 1, output passed"};
    printf("| call (%d thread%s) | ns per mt_kernel_run |\n| --- | --- |\n", o.num_threads,
           o.num_threads == 1 ? "" : "s");
    int only = argc > 2 ? atoi(argv[2]) : -1; /* ./mt_run_overhead THREADS ROW: one row */
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++)
        if (only < 0 || (size_t)only == i) printf("| %s | %.0f |\n", names[i], per_call_ns(&jobs[i]));

    mt_tensor_release(m2a), mt_tensor_release(m2b), mt_tensor_release(m2o);
    mt_tensor_release(a), mt_tensor_release(b), mt_tensor_release(o4), mt_tensor_release(mout);
    for (int i = 0; i < 5; i++) mt_tensor_release(margs[i]);
    mt_kernel_release(add), mt_kernel_release(add2), mt_kernel_release(mlp);
    mt_context_destroy(c);
    return 0;
}
