/*
 * gpu_bench.c -- minitriton's GPU kernels timed: the workloads of the GPU
 * goals (docs/performance.md), compiled for target cuda and run on the GPU.
 *
 *     mt_gpu_bench [--emulate] [--quick] [--json FILE] [--only TEXT]
 *
 * Each case compiles one program for target cuda, makes its inputs on the
 * GPU (mt_kernel_tensor_to), runs it once to warm up, then times R runs
 * back to back with the wall clock; mt_kernel_run returns when the GPU is
 * done, so a run's time includes its launches and the final wait (a few
 * microseconds: the references of bench/gpu_reference.py time kernels only
 * with CUDA events, which favours them on small cases). It prints one
 * Markdown row per case: the median and best time, and the rate (GB/s from
 * the minimal bytes, TFLOP/s from 2 m n k). scripts/gpu_check.sh runs it
 * beside bench/gpu_reference.py and bench/gpu_ratios.py puts the two side
 * by side. It also times the first compile of a softmax (NVRTC included,
 * compile cache off).
 *
 * Each run also goes on a stream of the benchmark's own
 * (mt_kernel_run_with), between two CUDA events recorded there: the
 * "device ms" column is the median time between them: the run's launches,
 * the gaps between them, and the host's work before the first (the GPU is
 * idle when the first event is recorded). The "queued ms" column times the
 * runs as the references time theirs: R runs queued back to back without
 * waiting (mt_run_options.no_wait), each between two events, one wait at
 * the end; once the host is ahead of the GPU a run's events hold its
 * kernels and nothing of the host. Rates and the ratios
 * (bench/gpu_ratios.py) use it when there is one.
 *
 * --emulate runs the same cases on the CPU emulation at small sizes: a
 * check that the program works on machines without a GPU, not a benchmark.
 * --only TEXT runs the cases whose name holds TEXT ("MLP", "softmax").
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "minitriton.h"

#define F32(shape) "Tensor(" shape ", \"float32\")"

typedef struct bench_case {
    const char *name;   /* as in the goals table */
    const char *shape;
    const char *src;
    double bytes;       /* minimal bytes moved, 0: a FLOP case */
    double flops;
} bench_case;

enum { MAX_REPS = 50 };
static int emulate, quick;
static const char *only; /* --only: the cases whose name holds it */
static FILE *json;

/* The driver calls the device timing makes (libcuda.so.1, dlopen). */
static struct {
    int (*stream_create)(void **s, unsigned flags);
    int (*event_create)(void **e, unsigned flags);
    int (*event_record)(void *e, void *s);
    int (*event_sync)(void *e);
    int (*event_elapsed)(float *ms, void *a, void *b);
    void *stream, *ev[2];
    void *q[2][MAX_REPS]; /* the queued runs' events: before, after */
    int ok;
} cu;

static void *sym(void *lib, const char *a, const char *b) {
    void *f = dlsym(lib, a);
    return f ? f : b ? dlsym(lib, b) : NULL;
}

/* After the first run (the library's context is current on this thread). */
static void device_timing_init(void) {
    static int tried; /* once: a failure leaves the device timing off, nothing made twice */
    if (tried++ || emulate) return;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    *(void **)&cu.stream_create = sym(lib, "cuStreamCreate", NULL);
    *(void **)&cu.event_create = sym(lib, "cuEventCreate", NULL);
    *(void **)&cu.event_record = sym(lib, "cuEventRecord", NULL);
    *(void **)&cu.event_sync = sym(lib, "cuEventSynchronize", NULL);
    *(void **)&cu.event_elapsed = sym(lib, "cuEventElapsedTime_v2", "cuEventElapsedTime");
    cu.ok = cu.stream_create && cu.event_create && cu.event_record && cu.event_sync &&
            cu.event_elapsed && cu.stream_create(&cu.stream, 0) == 0 &&
            cu.event_create(&cu.ev[0], 0) == 0 && cu.event_create(&cu.ev[1], 0) == 0;
    for (int r = 0; cu.ok && r < MAX_REPS; r++)
        cu.ok = cu.event_create(&cu.q[0][r], 0) == 0 && cu.event_create(&cu.q[1][r], 0) == 0;
}

/* reps runs queued back to back on the benchmark's stream without waiting
 * (mt_run_options.no_wait), each between two events, then one wait: each
 * run's GPU time, t[r] (or -1), as the references time theirs -- once the
 * host is ahead of the GPU, the time between a run's events is its
 * kernels' and the gaps between them, not the host's work. */
static void queued_runs(mt_kernel *k, mt_tensor **args, int np, mt_tensor **res, int nr, double *t, int reps) {
    mt_run_options ro;
    mt_run_options_init(&ro);
    ro.cuda_stream = cu.stream;
    ro.no_wait = 1;
    mt_diag d;
    int ok = 1;
    for (int r = 0; r < reps && ok; r++) {
        ok = cu.event_record(cu.q[0][r], cu.stream) == 0;
        if (ok && mt_kernel_run_with(k, args, np, res, nr, &ro, &d) != MT_OK) {
            fprintf(stderr, "gpu_bench: queued run: %s\n", d.message);
            ok = 0;
        }
        ok = ok && cu.event_record(cu.q[1][r], cu.stream) == 0;
    }
    ok = ok && cu.event_sync(cu.q[1][reps - 1]) == 0;
    for (int r = 0; r < reps; r++) {
        float ms = -1;
        t[r] = ok && cu.event_elapsed(&ms, cu.q[0][r], cu.q[1][r]) == 0 ? ms : -1;
    }
}

/* One run on the benchmark's stream between two events: the GPU's ms, or
 * -1 when the run or the events fail. */
static double device_run(mt_kernel *k, mt_tensor **args, int np, mt_tensor **res, int nr) {
    mt_run_options ro;
    mt_run_options_init(&ro);
    ro.cuda_stream = cu.stream;
    mt_diag d;
    float ms = -1;
    if (cu.event_record(cu.ev[0], cu.stream) || mt_kernel_run_with(k, args, np, res, nr, &ro, &d) != MT_OK ||
        cu.event_record(cu.ev[1], cu.stream) || cu.event_sync(cu.ev[1]) ||
        cu.event_elapsed(&ms, cu.ev[0], cu.ev[1]))
        return -1;
    return ms;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static mt_kernel *compile(mt_context *ctx, const char *src, double *ms) {
    mt_compile_options o;
    mt_compile_options_init(&o);
    o.target = MT_TARGET_CUDA;
    o.emulate = emulate;
    mt_diag d;
    double t0 = now_ms();
    mt_kernel *k = mt_jit_compile(ctx, src, &o, &d);
    if (ms) *ms = now_ms() - t0;
    if (!k) fprintf(stderr, "gpu_bench: compile failed: %s\n", d.text);
    return k;
}

/* v in [-0.5, 0.5) as float16 bits (exact: v is a multiple of 2^-10). */
static uint16_t half_of(int q) { /* v = q / 1024, |q| <= 512 */
    if (q == 0) return 0;
    uint16_t sign = q < 0 ? 0x8000 : 0;
    unsigned m = (unsigned)(q < 0 ? -q : q), e = 0;
    while (m < 1024) m <<= 1, e++;
    return (uint16_t)(sign | ((15 - e) << 10) | (m & 0x3ff));
}

/* Inputs on the kernel's devices, filled with small values. */
static int make_args(mt_kernel *k, mt_tensor **args, int np) {
    for (int i = 0; i < np; i++) {
        int nd = mt_kernel_param_ndim(k, i);
        int64_t shape[8];
        for (int a = 0; a < nd; a++) shape[a] = mt_kernel_param_dim(k, i, a);
        mt_tensor *h = mt_tensor_create(mt_kernel_param_dtype(k, i), nd, shape);
        if (!h) return -1;
        int64_t n = mt_tensor_numel(h);
        if (mt_tensor_dtype(h) == MT_FLOAT16) {
            uint16_t *p = mt_tensor_data(h);
            for (int64_t j = 0; j < n; j++) p[j] = half_of((int)((j * 7919) % 1024) - 512);
        } else {
            float *p = mt_tensor_data(h);
            for (int64_t j = 0; j < n; j++) p[j] = (float)((j * 7919) % 1000) * 1e-3f - 0.5f;
        }
        mt_diag d;
        mt_status st = mt_kernel_tensor_to(k, h, mt_kernel_param_device(k, i), &args[i], &d);
        mt_tensor_release(h);
        if (st != MT_OK) {
            fprintf(stderr, "gpu_bench: input %d: %s\n", i, d.message);
            return -1;
        }
    }
    return 0;
}

/* dev, queued: the median device and queued times, or <= 0 when not measured. */
static void report(const bench_case *c, double med, double best, double dev, double queued, int reps) {
    char rate[64] = "-", devs[32] = "-", qs[32] = "-";
    double t = queued > 0 ? queued : dev > 0 ? dev : med; /* rates from the GPU's time when there is one */
    if (c->bytes > 0) snprintf(rate, sizeof rate, "%.1f GB/s", c->bytes / (t * 1e-3) / 1e9);
    if (c->flops > 0) snprintf(rate, sizeof rate, "%.2f TFLOP/s", c->flops / (t * 1e-3) / 1e12);
    if (dev > 0) snprintf(devs, sizeof devs, "%.4f", dev);
    if (queued > 0) snprintf(qs, sizeof qs, "%.4f", queued);
    printf("| %s | %s | %.4f | %.4f | %s | %s | %d | %s |\n", c->name, c->shape, med, best, devs, qs, reps, rate);
    if (json)
        fprintf(json, "%s{\"name\": \"%s\", \"shape\": \"%s\", \"median_ms\": %.6f, \"best_ms\": %.6f, "
                      "\"device_ms\": %.6f, \"queued_ms\": %.6f}",
                ftell(json) > 2 ? ",\n " : "", c->name, c->shape, med, best, dev > 0 ? dev : 0.0,
                queued > 0 ? queued : 0.0);
    fflush(stdout);
}

static void run_case(mt_context *ctx, const bench_case *c) {
    mt_kernel *k = compile(ctx, c->src, NULL);
    if (!k) return;
    int np = mt_kernel_num_params(k), nr = mt_kernel_num_results(k);
    mt_tensor *args[8] = {0}, *res[4] = {0};
    mt_diag d;
    int reps = quick || emulate ? 5 : MAX_REPS;
    double *t = calloc((size_t)reps, sizeof *t);
    if (make_args(k, args, np) == 0 && mt_kernel_run(k, args, np, res, nr, &d) == MT_OK) {
        for (int r = 0; r < reps; r++) {
            double t0 = now_ms();
            if (mt_kernel_run(k, args, np, res, nr, &d) != MT_OK) break;
            t[r] = now_ms() - t0;
        }
        qsort(t, (size_t)reps, sizeof *t, cmp);
        double med = t[reps / 2], best = t[0], dev = -1, queued = -1;
        device_timing_init();
        if (cu.ok) {
            for (int r = 0; r < reps; r++) t[r] = device_run(k, args, np, res, nr);
            qsort(t, (size_t)reps, sizeof *t, cmp);
            dev = t[0] > 0 ? t[reps / 2] : -1;
            queued_runs(k, args, np, res, nr, t, reps);
            qsort(t, (size_t)reps, sizeof *t, cmp);
            queued = t[0] > 0 ? t[reps / 2] : -1;
        }
        report(c, med, best, dev, queued, reps);
    } else {
        printf("| %s | %s | failed: %s | | | | | |\n", c->name, c->shape, d.message);
    }
    for (int i = 0; i < np; i++) mt_tensor_release(args[i]);
    for (int i = 0; i < nr; i++) mt_tensor_release(res[i]);
    free(t);
    mt_kernel_release(k);
}

/* The sources, with sizes filled in. */
static char *fmt(const char *f, long a, long b) {
    char *s = malloc(1024);
    snprintf(s, 1024, f, a, b, a, b);
    return s;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--emulate")) emulate = 1;
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--json") && i + 1 < argc) json = fopen(argv[++i], "w");
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: mt_gpu_bench [--emulate] [--quick] [--json FILE] [--only TEXT]\n");
            return 2;
        }
    }
    mt_context_options co = {0, -1};
    co.cache_dir = ""; /* no disk cache either: the compile below is timed "cache off" */
    mt_context *ctx = mt_context_create(&co);
    if (!ctx) return 1;
    if (json) fputs("[", json);
    long big = emulate ? 1L << 16 : 1L << 28, small = emulate ? 1L << 12 : 1L << 24;
    long rows = emulate ? 64 : 4096, cols = emulate ? 256 : 4096;
    long trows = emulate ? 256 : 32768, tcols = emulate ? 64 : 1024, mm = emulate ? 128 : 4096;
    printf("| case | shape | median ms | best ms | device ms | queued ms | reps | rate |\n"
           "|---|---|---:|---:|---:|---:|---:|---|\n");
    const char *add = "def f(a: Tensor((%ld,), \"float32\"), b: Tensor((%ld,), \"float32\")):\n"
                      "    return a + b + a\n";
    const char *ex = "def f(a: Tensor((%ld,), \"float32\"), b: Tensor((%ld,), \"float32\")):\n"
                     "    return exp(a) * b + 1.0\n";
    const char *sm = "def f(x: Tensor((%ld, %ld), \"float32\")):\n    return softmax(x, axis=-1)\n";
    const char *ln = "def f(x: Tensor((%ld, %ld), \"float32\"), g: Tensor((%ld,), \"float32\"), "
                     "b: Tensor((%ld,), \"float32\")):\n    return layer_norm(x, g, b)\n";
    const char *sum = "def f(x: Tensor((%ld, %ld), \"float32\")):\n    return sum(x)\n";
    const char *colsum = "def f(x: Tensor((%ld, %ld), \"float32\")):\n    return sum(x, axis=0)\n";
    const char *mmf = "def f(a: Tensor((%ld, %ld), \"float32\"), b: Tensor((%ld, %ld), \"float32\")):\n"
                      "    return a @ b\n";
    const char *mmh = "def f(a: Tensor((%ld, %ld), \"float16\"), b: Tensor((%ld, %ld), \"float16\")):\n"
                      "    return a @ b\n";
    char lnsrc[2][1024];
    snprintf(lnsrc[0], sizeof lnsrc[0], ln, rows, cols, cols, cols);
    snprintf(lnsrc[1], sizeof lnsrc[1], ln, trows, tcols, tcols, tcols);
    char shp[8][48];
    snprintf(shp[0], 48, "%ldM", small >> 20);
    snprintf(shp[1], 48, "%ldM", big >> 20);
    snprintf(shp[2], 48, "%ldx%ld", rows, cols);
    snprintf(shp[3], 48, "%ldx%ld", trows, tcols);
    snprintf(shp[4], 48, "%ldx%ldx%ld", mm, mm, mm);
    const char *mlp = "def f(x: Tensor((%ld, 784), \"float32\"), w0: Tensor((128, 784), \"float32\"), "
                      "b0: Tensor((128,), \"float32\"), w1: Tensor((10, 128), \"float32\"), "
                      "b1: Tensor((10,), \"float32\")):\n"
                      "    return relu(x @ w0.T + b0) @ w1.T + b1\n";
    char *srcs[] = {fmt(add, small, small), fmt(ex, small, small), fmt(add, big, big),
                    fmt(ex, big, big), fmt(sm, rows, cols), fmt(sm, trows, tcols),
                    fmt(mmf, mm, mm), fmt(mlp, emulate ? 64 : 4096, 0), fmt(mlp, 1, 0),
                    fmt(mmh, mm, mm), fmt(add, 1024, 1024), fmt(sum, rows, cols), fmt(colsum, rows * cols / 16, 16)};
    const bench_case cases[] = {
        {"a+b+a", "1K", srcs[10], 12.0 * 1024, 0}, /* the fixed cost of a run */
        {"a+b+a", shp[0], srcs[0], 12.0 * small, 0},
        {"exp(a)*b+1", shp[0], srcs[1], 12.0 * small, 0},
        {"a+b+a", shp[1], srcs[2], 12.0 * big, 0},
        {"exp(a)*b+1", shp[1], srcs[3], 12.0 * big, 0},
        {"softmax", shp[2], srcs[4], 8.0 * rows * cols, 0},
        {"softmax", shp[3], srcs[5], 8.0 * trows * tcols, 0},
        {"layer_norm", shp[2], lnsrc[0], 8.0 * rows * cols, 0},
        {"layer_norm", shp[3], lnsrc[1], 8.0 * trows * tcols, 0},
        {"sum(x)", shp[2], srcs[11], 4.0 * rows * cols, 0},             /* split reductions */
        {"sum(x, axis=0)", "x16 columns", srcs[12], 4.0 * rows * cols, 0}, /* (rows * cols / 16) x 16 */
        {"matmul fp32", shp[4], srcs[6], 0, 2.0 * mm * mm * mm},
        {"matmul fp16", shp[4], srcs[9], 0, 2.0 * mm * mm * mm},
        {"MLP 784-128-10", "batch 4096", srcs[7], 0, 0},
        {"MLP 784-128-10", "batch 1", srcs[8], 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!only || strstr(cases[i].name, only)) run_case(ctx, &cases[i]);
    double ms;
    mt_kernel *k = compile(ctx, srcs[5], &ms);
    mt_compile_times ct;
    if (k && mt_kernel_compile_times(k, &ct) == MT_OK)
        printf("\nfirst compile of a softmax (target cuda%s, cache off): %.1f ms (frontend %.1f, graph %.1f, "
               "TIR %.1f, host code %.1f, CUDA C %.1f, NVRTC %.1f)\n",
               emulate ? ", emulated" : "", ms, ct.frontend_ms, ct.graph_ms, ct.tir_ms,
               ct.irgen_ms + ct.opt_ms + ct.jit_ms, ct.cuda_ms, ct.nvrtc_ms);
    mt_kernel_release(k);
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) free(srcs[i]);
    if (json) {
        fputs("]\n", json);
        fclose(json);
    }
    mt_context_destroy(ctx);
    return 0;
}
