/*
 * check_bounds.c -- what run-time bounds checks cost (mt_compile_options.
 * check_bounds, passes/tir/check_bounds.c).
 *
 *     ./build/bench/mt_check_bounds_bench [threads]
 *
 * Hand-written loop functions, each compiled without and with the option
 * and timed alternately in the same run (median of 11 batches after a
 * warm-up); the ratio is checked / unchecked:
 *   ew        z[i] = x[i] + y[i] over a symbolic n (proven: no check)
 *   ew_off    y[i] = x[i + k] + w[i], k read at run time (one hoisted check)
 *   gather    y[i] = x[idx[i]] (a check per element)
 *   mm        C = A @ B over symbolic M, N, K (proven: no check)
 *   mm_off    C[i, j] += A[i, k + s] * B[k, j], s read at run time (one
 *             hoisted check, which keeps the matmul rule from matching)
 * Not a test; built with the benchmark (target mt_check_bounds_bench).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "minitriton.h"

enum { BATCHES = 11, NE = 1 << 22, NM = 512 };

static const char ew_src[] =
    "@T.prim_func\n"
    "def ew(x: T.Buffer((\"n\",), \"float32\"), y: T.Buffer((\"n\",), \"float32\"),\n"
    "       z: T.Buffer((\"n\",), \"float32\")):\n"
    "    for i in range(n):\n"
    "        with T.block(\"z\"):\n"
    "            vi = T.axis.spatial(n, i)\n"
    "            z[vi] = x[vi] + y[vi]\n";

static const char ew_off_src[] =
    "@T.prim_func\n"
    "def ew_off(x: T.Buffer((\"n\",), \"float32\"), w: T.Buffer((\"m\",), \"float32\"),\n"
    "           k: T.Buffer((), \"int64\"), y: T.Buffer((\"m\",), \"float32\")):\n"
    "    for i in range(m):\n"
    "        with T.block(\"y\"):\n"
    "            vi = T.axis.spatial(m, i)\n"
    "            y[vi] = x[vi + k[()]] + w[vi]\n";

static const char gather_src[] =
    "@T.prim_func\n"
    "def gather(x: T.Buffer((\"n\",), \"float32\"), idx: T.Buffer((\"m\",), \"int64\"),\n"
    "           y: T.Buffer((\"m\",), \"float32\")):\n"
    "    for i in range(m):\n"
    "        with T.block(\"y\"):\n"
    "            vi = T.axis.spatial(m, i)\n"
    "            y[vi] = x[idx[vi]]\n";

static const char mm_src[] =
    "@T.prim_func\n"
    "def mm(A: T.Buffer((\"M\", \"K\"), \"float32\"), B: T.Buffer((\"K\", \"N\"), \"float32\"),\n"
    "       C: T.Buffer((\"M\", \"N\"), \"float32\")):\n"
    "    for i, j, k in T.grid(M, N, K):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = 0.0\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

static const char mm_off_src[] =
    "@T.prim_func\n"
    "def mm_off(A: T.Buffer((\"M\", \"KA\"), \"float32\"), B: T.Buffer((\"K\", \"N\"), \"float32\"),\n"
    "           s: T.Buffer((), \"int64\"), C: T.Buffer((\"M\", \"N\"), \"float32\")):\n"
    "    for i, j, k in T.grid(M, N, K):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = 0.0\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk + s[()]] * B[vk, vj]\n";

static mt_kernel *compile(mt_context *c, const char *src, int check) {
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.check_bounds = check;
    mt_diag d;
    mt_kernel *k = mt_jit_compile(c, src, &o, &d);
    if (!k) {
        fprintf(stderr, "%s\n", d.text);
        exit(1);
    }
    return k;
}

static mt_tensor *filled(mt_dtype dt, int ndim, const int64_t *shape, int64_t mod) {
    mt_tensor *t = mt_tensor_create(dt, ndim, shape);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    for (int64_t i = 0; i < n; i++) {
        if (dt == MT_INT64) ((int64_t *)mt_tensor_data(t))[i] = (i * 7919) % mod;
        else ((float *)mt_tensor_data(t))[i] = (float)(i % 17) * 0.25f;
    }
    return t;
}

static double run_ms(mt_kernel *k, mt_tensor **args, int nargs, mt_tensor *out, int reps) {
    double t0 = now_s();
    for (int r = 0; r < reps; r++) {
        mt_tensor *res = out;
        mt_diag d;
        if (mt_kernel_run(k, args, nargs, &res, 1, &d) != MT_OK) {
            fprintf(stderr, "%s\n", d.text);
            exit(1);
        }
    }
    return (now_s() - t0) / reps * 1e3;
}

/* Medians of plain and checked, timed alternately. */
static void bench(mt_context *c, const char *name, const char *src, mt_tensor **args, int nargs,
                  mt_tensor *out, int reps) {
    mt_kernel *k0 = compile(c, src, 0), *k1 = compile(c, src, 1);
    int checks = 0;
    for (const char *p = mt_kernel_dump(k1, MT_STAGE_TIR); (p = strstr(p, "T.check_bounds(")); p++) checks++;
    double t0[BATCHES], t1[BATCHES];
    run_ms(k0, args, nargs, out, reps), run_ms(k1, args, nargs, out, reps);
    for (int b = 0; b < BATCHES; b++) {
        t0[b] = run_ms(k0, args, nargs, out, reps);
        t1[b] = run_ms(k1, args, nargs, out, reps);
    }
    double m0 = median(t0, BATCHES), m1 = median(t1, BATCHES);
    printf("| %-7s | %d | %8.3f | %8.3f | %5.2f |\n", name, checks, m0, m1, m1 / m0);
    mt_kernel_release(k0), mt_kernel_release(k1);
}

int main(int argc, char **argv) {
    mt_context_options co = {0};
    co.num_threads = argc > 1 ? atoi(argv[1]) : 0;
    co.cache_max_bytes = -1;
    mt_context *c = mt_context_create(&co);
    if (!c) return 1;
    char cpu[256];
    bench_cpu_model(cpu, sizeof cpu);
    printf("%s, threads %d, elementwise n = %d, matmul %d^3\n\n", cpu, co.num_threads, NE, NM);
    printf("| kernel | checks | plain ms | checked ms | ratio |\n| --- | --- | --- | --- | --- |\n");
    int64_t n = NE, nm[2] = {NM, NM}, nka[2] = {NM, NM + 1};
    mt_tensor *x = filled(MT_FLOAT32, 1, &n, 0), *y = filled(MT_FLOAT32, 1, &n, 0);
    mt_tensor *z = mt_tensor_create(MT_FLOAT32, 1, &n), *k = mt_tensor_create(MT_INT64, 0, NULL);
    mt_tensor *idx = filled(MT_INT64, 1, &n, NE);
    *(int64_t *)mt_tensor_data(k) = 0;
    bench(c, "ew", ew_src, (mt_tensor *[]){x, y}, 2, z, 20);
    bench(c, "ew_off", ew_off_src, (mt_tensor *[]){x, y, k}, 3, z, 20);
    bench(c, "gather", gather_src, (mt_tensor *[]){x, idx}, 2, z, 10);
    mt_tensor *A = filled(MT_FLOAT32, 2, nm, 0), *B = filled(MT_FLOAT32, 2, nm, 0);
    mt_tensor *A1 = filled(MT_FLOAT32, 2, nka, 0), *C = mt_tensor_create(MT_FLOAT32, 2, nm);
    bench(c, "mm", mm_src, (mt_tensor *[]){A, B}, 2, C, 5);
    *(int64_t *)mt_tensor_data(k) = 1;
    bench(c, "mm_off", mm_off_src, (mt_tensor *[]){A1, B, k}, 3, C, 2);
    mt_tensor *all[] = {x, y, z, k, idx, A, B, A1, C};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) mt_tensor_release(all[i]);
    mt_context_destroy(c);
    return 0;
}
