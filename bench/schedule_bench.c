/*
 * schedule_bench.c -- user schedules against the default rule: the steps
 * of docs/tutorial.md "Your own schedule" on a 960^3 float32 matmul
 * written as a loop function.
 *
 *     ./build/bench/mt_schedule_bench [threads]
 *
 *   default  the loop function without a schedule: the matmul rule
 *   naive    a schedule that applies nothing: the loops as written
 *   tiled    6 x 16 tiles of C kept in registers across k, rows of tiles
 *            on threads, tile columns vectorized
 *   packed   examples/kernels/matmul_schedule.py: B packed into panels of
 *            16 columns by the loop function, each product a T.fma, the
 *            same tiles on the panels
 *   primitives  the loop function as written (no panels, no T.fma) and a
 *            schedule alone that makes the packed kernel: use_fma, a
 *            cache_read of B moved under the panel loop (compact_buffers
 *            makes it one contiguous panel per iteration), the same tiles
 *   blocked  the same with K and N blocked as the default rule blocks them:
 *            a kc x nc block of B per copy, kept as 16-column panels by
 *            transform_layout (examples/kernels/matmul_blocked.py)
 *
 * Then default, primitives and blocked at a long K, 512 x 32768 x 512,
 * where a panel of the whole K (32768 x 16 floats, 2 MiB) is four times
 * L2 and a 256 x 128 block (128 KiB) fits it.
 *
 * Each is timed alternately with the default in the same run (median of
 * 7 batches after a warm-up); the ratio is default / step (1.0: as fast
 * as the default rule). Not a test; built with the benchmark (target
 * mt_schedule_bench), run by scripts/bench.sh --schedule.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "minitriton.h"

enum { BATCHES = 7, N = 960 };

/* The loop function for M x K times K x N. */
static const char *mm_source(int m, int n, int k) {
    static char buf[1024];
    snprintf(buf, sizeof buf,
             "@T.prim_func\n"
             "def mm(A: T.Buffer((%d, %d), \"float32\"), B: T.Buffer((%d, %d), \"float32\"),\n"
             "       C: T.Buffer((%d, %d), \"float32\")):\n"
             "    for i, j, k in T.grid(%d, %d, %d):\n"
             "        with T.block(\"C\"):\n"
             "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
             "            with T.init():\n"
             "                C[vi, vj] = T.float32(0)\n"
             "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n",
             m, k, k, n, m, n, m, n, k);
    return buf;
}

static const char naive[] = "@T.schedule(mm)\ndef s(sch):\n    pass\n";

static const char tiled[] =
    "@T.schedule(mm)\n"
    "def s(sch):\n"
    "    blk = sch.get_block(\"C\")\n"
    "    i, j, k = sch.get_loops(blk)\n"
    "    i0, i1 = sch.split(i, factors=[None, 6])\n"
    "    j0, j1 = sch.split(j, factors=[None, 16])\n"
    "    sch.reorder(i0, j0, k, i1, j1)\n"
    "    sch.decompose_reduction(blk, k)\n"
    "    sch.parallel(i0)\n"
    "    sch.unroll(i1)\n"
    "    sch.vectorize(j1)\n";

static const char primitives[] =
    "@T.schedule(mm)\n"
    "def s(sch):\n"
    "    blk = sch.get_block(\"C\")\n"
    "    i, j, k = sch.get_loops(blk)\n"
    "    i0, i1 = sch.split(i, factors=[None, 6])\n"
    "    j0, j1 = sch.split(j, factors=[None, 16])\n"
    "    sch.reorder(j0, i0, k, i1, j1)\n"
    "    sch.use_fma(blk)\n"
    "    pack = sch.cache_read(blk, 1, \"global\")\n"
    "    sch.compute_at(pack, j0)\n"
    "    _, pk, pj = sch.get_loops(pack)\n"
    "    sch.vectorize(pj)\n"
    "    sch.decompose_reduction(blk, k)\n"
    "    sch.parallel(j0)\n"
    "    sch.unroll(i1)\n"
    "    sch.vectorize(j1)\n";

/* kc x nc blocks of B as 16-column panels (nc / 16 panels per block). */
static const char blocked[] =
    "@T.schedule(mm)\n"
    "def s(sch):\n"
    "    blk = sch.get_block(\"C\")\n"
    "    i, j, k = sch.get_loops(blk)\n"
    "    j0, j1, j2 = sch.split(j, factors=[None, %d, 16])\n"
    "    k0, k1 = sch.split(k, factors=[None, %d])\n"
    "    i0, i1 = sch.split(i, factors=[None, 6])\n"
    "    sch.reorder(j0, k0, i0, j1, k1, i1, j2)\n"
    "    sch.use_fma(blk)\n"
    "    pack = sch.cache_read(blk, 1, \"global\")\n"
    "    sch.compute_at(pack, k0)\n"
    "    sch.transform_layout(pack, \"B_global\", lambda k, j: (j // 16, k, j %% 16))\n"
    "    _, _, pk, pj = sch.get_loops(pack)\n"
    "    pj0, pj1 = sch.split(pj, factors=[None, 16])\n"
    "    sch.reorder(pj0, pk, pj1)\n"
    "    sch.vectorize(pj1)\n"
    "    sch.decompose_reduction(blk, k0)\n"
    "    sch.parallel(j0)\n"
    "    sch.unroll(i1)\n"
    "    sch.vectorize(j2)\n";

static mt_kernel *compile(mt_context *c, const char *src) {
    mt_diag d;
    mt_kernel *k = mt_jit_compile(c, src, NULL, &d);
    if (!k) {
        fprintf(stderr, "%s\n", d.text);
        exit(1);
    }
    return k;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static double run_ms(mt_kernel *k, mt_tensor **args, mt_tensor *out, int reps) {
    double t0 = now_s();
    for (int r = 0; r < reps; r++) {
        mt_tensor *res = out;
        mt_diag d;
        if (mt_kernel_run(k, args, 2, &res, 1, &d) != MT_OK) {
            fprintf(stderr, "%s\n", d.text);
            exit(1);
        }
    }
    return (now_s() - t0) / reps * 1e3;
}

static void step(mt_context *c, mt_kernel *def, const char *name, const char *src, mt_tensor **args,
                 mt_tensor *out, int reps, double flops) {
    mt_kernel *k = compile(c, src);
    double t0[BATCHES], t1[BATCHES];
    run_ms(def, args, out, 1), run_ms(k, args, out, 1);
    for (int b = 0; b < BATCHES; b++) {
        t0[b] = run_ms(def, args, out, 3);
        t1[b] = run_ms(k, args, out, reps);
    }
    double m0 = median(t0, BATCHES), m1 = median(t1, BATCHES);
    printf("| %-10s | %9.2f | %9.2f | %6.1f | %5.2f |\n", name, m1, m0, flops / m1 * 1e-6, m0 / m1);
    mt_kernel_release(k);
}

static mt_tensor *matrix(int rows, int cols, int mod, float scale) {
    int64_t sh[2] = {rows, cols};
    mt_tensor *t = mt_tensor_create(MT_FLOAT32, 2, sh);
    for (int64_t i = 0; i < (int64_t)rows * cols; i++) ((float *)mt_tensor_data(t))[i] = (float)(i % mod) * scale;
    return t;
}

/* The long-K table: default, primitives (whole-K panels), blocked. */
static void long_k(mt_context *c, int m, int n, int k) {
    char src[8192], sched[4096];
    double flops = 2.0 * m * n * k;
    printf("\nmatmul %d x %d x %d float32 (M x K x N)\n\n", m, k, n);
    printf("| step | ms | default ms | GFLOP/s | default / step |\n| --- | --- | --- | --- | --- |\n");
    mt_tensor *A = matrix(m, k, 17, 0.25f), *B = matrix(k, n, 13, 0.5f), *C = matrix(m, n, 1, 0.0f);
    mt_tensor *args[2] = {A, B};
    const char *mm = mm_source(m, n, k);
    mt_kernel *def = compile(c, mm);
    step(c, def, "default", mm, args, C, 1, flops);
    snprintf(src, sizeof src, "%s\n%s", mm, primitives);
    step(c, def, "primitives", src, args, C, 1, flops);
    snprintf(sched, sizeof sched, blocked, 128 / 16, 256);
    snprintf(src, sizeof src, "%s\n%s", mm, sched);
    step(c, def, "blocked", src, args, C, 1, flops);
    mt_kernel_release(def);
    mt_tensor_release(A), mt_tensor_release(B), mt_tensor_release(C);
}

int main(int argc, char **argv) {
    mt_context_options co = {0};
    co.num_threads = argc > 1 ? atoi(argv[1]) : 0;
    mt_context *c = mt_context_create(&co);
    if (!c) return 1;
    char cpu[256], src[8192], sched[4096];
    double flops = 2.0 * N * N * N;
    bench_cpu_model(cpu, sizeof cpu);
    printf("%s, threads %d, matmul %d^3 float32\n\n", cpu, co.num_threads, N);
    printf("| step | ms | default ms | GFLOP/s | default / step |\n| --- | --- | --- | --- | --- |\n");
    mt_tensor *A = matrix(N, N, 17, 0.25f), *B = matrix(N, N, 13, 0.5f), *C = matrix(N, N, 1, 0.0f);
    mt_tensor *args[2] = {A, B};
    const char *mm = mm_source(N, N, N);
    char mm_src[1024];
    snprintf(mm_src, sizeof mm_src, "%s", mm);
    mt_kernel *def = compile(c, mm_src);
    step(c, def, "default", mm_src, args, C, 3, flops);
    snprintf(src, sizeof src, "%s\n%s", mm_src, naive);
    step(c, def, "naive", src, args, C, 1, flops);
    snprintf(src, sizeof src, "%s\n%s", mm_src, tiled);
    step(c, def, "tiled", src, args, C, 3, flops);
    const char *packed = read_file(MT_SCHEDULE_EXAMPLE);
    if (!packed) {
        fprintf(stderr, "cannot read %s\n", MT_SCHEDULE_EXAMPLE);
        return 1;
    }
    step(c, def, "packed", packed, args, C, 3, flops);
    snprintf(src, sizeof src, "%s\n%s", mm_src, primitives);
    step(c, def, "primitives", src, args, C, 3, flops);
    snprintf(sched, sizeof sched, blocked, 240 / 16, 480);
    snprintf(src, sizeof src, "%s\n%s", mm_src, sched);
    step(c, def, "blocked", src, args, C, 3, flops);
    mt_kernel_release(def);
    mt_tensor_release(A), mt_tensor_release(B), mt_tensor_release(C);
    long_k(c, 512, 512, 32768);
    mt_context_destroy(c);
    return 0;
}
