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

static const char mm_src[] =
    "@T.prim_func\n"
    "def mm(A: T.Buffer((960, 960), \"float32\"), B: T.Buffer((960, 960), \"float32\"),\n"
    "       C: T.Buffer((960, 960), \"float32\")):\n"
    "    for i, j, k in T.grid(960, 960, 960):\n"
    "        with T.block(\"C\"):\n"
    "            vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
    "            with T.init():\n"
    "                C[vi, vj] = T.float32(0)\n"
    "            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n";

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
                 mt_tensor *out, int reps) {
    mt_kernel *k = compile(c, src);
    double t0[BATCHES], t1[BATCHES];
    run_ms(def, args, out, 1), run_ms(k, args, out, 1);
    for (int b = 0; b < BATCHES; b++) {
        t0[b] = run_ms(def, args, out, 3);
        t1[b] = run_ms(k, args, out, reps);
    }
    double m0 = median(t0, BATCHES), m1 = median(t1, BATCHES);
    printf("| %-10s | %9.2f | %9.2f | %6.1f | %5.2f |\n", name, m1, m0, 2.0 * N * N * N / m1 * 1e-6, m0 / m1);
    mt_kernel_release(k);
}

int main(int argc, char **argv) {
    mt_context_options co = {0};
    co.num_threads = argc > 1 ? atoi(argv[1]) : 0;
    mt_context *c = mt_context_create(&co);
    if (!c) return 1;
    char cpu[256], src[8192];
    bench_cpu_model(cpu, sizeof cpu);
    printf("%s, threads %d, matmul %d^3 float32\n\n", cpu, co.num_threads, N);
    printf("| step | ms | default ms | GFLOP/s | default / step |\n| --- | --- | --- | --- | --- |\n");
    int64_t sh[2] = {N, N};
    mt_tensor *A = mt_tensor_create(MT_FLOAT32, 2, sh), *B = mt_tensor_create(MT_FLOAT32, 2, sh);
    mt_tensor *C = mt_tensor_create(MT_FLOAT32, 2, sh);
    for (int64_t i = 0; i < N * N; i++) {
        ((float *)mt_tensor_data(A))[i] = (float)(i % 17) * 0.25f;
        ((float *)mt_tensor_data(B))[i] = (float)(i % 13) * 0.5f;
    }
    mt_tensor *args[2] = {A, B};
    mt_kernel *def = compile(c, mm_src);
    step(c, def, "default", mm_src, args, C, 3);
    snprintf(src, sizeof src, "%s\n%s", mm_src, naive);
    step(c, def, "naive", src, args, C, 1);
    snprintf(src, sizeof src, "%s\n%s", mm_src, tiled);
    step(c, def, "tiled", src, args, C, 3);
    const char *packed = read_file(MT_SCHEDULE_EXAMPLE);
    if (!packed) {
        fprintf(stderr, "cannot read %s\n", MT_SCHEDULE_EXAMPLE);
        return 1;
    }
    step(c, def, "packed", packed, args, C, 3);
    snprintf(src, sizeof src, "%s\n%s", mm_src, primitives);
    step(c, def, "primitives", src, args, C, 3);
    mt_kernel_release(def);
    mt_tensor_release(A), mt_tensor_release(B), mt_tensor_release(C);
    mt_context_destroy(c);
    return 0;
}
