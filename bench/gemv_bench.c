/*
 * gemv_bench.c -- GEMV and skinny matmuls against the machine's bandwidth,
 * OpenBLAS and NumPy, measured in the same run (scripts/bench_gemv.sh).
 *
 * The rows are issue 17's: `x @ W` and `x @ W.T` with x 1 x 4096 and W
 * 4096 x 4096 (the LLM-decode GEMV: W, 64 MiB, is streamed from memory once
 * per call), x @ W with M = 2, 4, 8, 16 rows, an odd shape (1 x 4097 @ 4097
 * x 1000) and two larger skinny ones. Each row runs in a context with
 * num_threads = 1 and one with 2, and shows:
 *
 *   - minitriton: the median of mt_kernel_run, and the rate at which it
 *     reads W (K * N * 4 bytes; x and the output are small) as a share of
 *     the STREAM add bandwidth (c = a + b over three 64 MiB arrays, counted
 *     as STREAM counts it) measured in the same blocks;
 *   - OpenBLAS cblas_sgemm on the same buffers (dlopen'd, as mt_bench does;
 *     OPENBLAS_CORETYPE as the caller sets it), its threads set to the row's;
 *   - NumPy: bench/numpy_gemv.py in a child python3 (MT_BENCH_PYTHON, else
 *     /usr/bin/python3) with OPENBLAS_NUM_THREADS = the row's threads,
 *     started just before the row: `np.matmul(x, w, out=...)` on its own
 *     random data of the same shape.
 *
 * STREAM, OpenBLAS and the kernel alternate in blocks of back-to-back calls
 * (one untimed call, then `per` timed ones, a 10 ms pause between blocks so
 * that idle worker threads go to sleep) and the medians are compared, so
 * that all three see the same load on this shared machine. Each kernel's
 * result is spot-checked against a double reference (WRONG when it fails).
 *
 * Output: a Markdown table on stdout (docs/performance.md quotes it),
 * progress on stderr. `mt_gemv_bench NAME` runs the rows whose name
 * contains NAME.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "minitriton.h"

#ifndef MT_BENCH_NUMPY_GEMV_SCRIPT
#define MT_BENCH_NUMPY_GEMV_SCRIPT "bench/numpy_gemv.py"
#endif

static void die(const char *what) {
    fprintf(stderr, "mt_gemv_bench: %s\n", what);
    exit(1);
}

/* ---- buffers ------------------------------------------------------------------ */

#define STREAM_N ((int64_t)16 * 1024 * 1024) /* floats in each STREAM array: 64 MiB */
#define W_MAX ((int64_t)8192 * 4096)        /* floats in W: 128 MiB */

static float *big_alloc(int64_t n) {
    size_t bytes = (size_t)n * sizeof(float);
    float *p = aligned_alloc(2u << 20, (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20));
    if (!p) die("out of memory");
    madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static float frand(void) { /* uniform in [-1, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)(rng_state >> 40) * 0x1p-23f - 1.0f;
}

static float *SA, *SB, *SC; /* STREAM */
static char np_version[32];
static float *W, *X, *Y;    /* the GEMV's operands and result */

/* ---- STREAM add on 1 or 2 threads ----------------------------------------------- */

typedef struct part {
    int64_t lo, hi;
} part;
static void *stream_part(void *p) {
    part *sp = p;
    float *restrict c = SC;
    const float *restrict a = SA, *restrict b = SB;
    for (int64_t i = sp->lo; i < sp->hi; i++) c[i] = a[i] + b[i];
    return NULL;
}
static void stream_once(void *p) {
    int threads = *(int *)p;
    pthread_t th[8];
    part parts[8];
    for (int i = 0; i < threads; i++) {
        parts[i] = (part){STREAM_N * i / threads, STREAM_N * (i + 1) / threads};
        if (i > 0 && pthread_create(&th[i], NULL, stream_part, &parts[i]) != 0) die("pthread_create failed");
    }
    stream_part(&parts[0]);
    for (int i = 1; i < threads; i++) pthread_join(th[i], NULL);
}

/* ---- OpenBLAS --------------------------------------------------------------------- */

enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                         float *, int);
static struct {
    void *lib;
    sgemm_fn sgemm;
    void (*set_threads)(int);
    char *(*corename)(void);
} blas;

static void blas_load(void) {
    const char *names[] = {"libopenblas.so.0", "libopenblas.so", "libopenblasp.so.0"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !blas.lib; i++)
        blas.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!blas.lib) return;
    blas.sgemm = (sgemm_fn)dlsym(blas.lib, "cblas_sgemm");
    blas.set_threads = (void (*)(int))dlsym(blas.lib, "openblas_set_num_threads");
    blas.corename = (char *(*)(void))dlsym(blas.lib, "openblas_get_corename");
    if (!blas.sgemm || !blas.set_threads) blas.lib = NULL;
}

/* ---- the rows ------------------------------------------------------------------------ */

typedef struct shape {
    const char *name;
    int64_t m, k, n;
    bool t; /* x @ w.T, w (N, K) */
} shape;

static const shape SHAPES[] = {
    {"x @ W, 1x4096 @ 4096x4096", 1, 4096, 4096, false},
    {"x @ W.T, 1x4096 @ (4096x4096).T", 1, 4096, 4096, true},
    {"x @ W, 2x4096 @ 4096x4096", 2, 4096, 4096, false},
    {"x @ W, 4x4096 @ 4096x4096", 4, 4096, 4096, false},
    {"x @ W, 8x4096 @ 4096x4096", 8, 4096, 4096, false},
    {"x @ W, 16x4096 @ 4096x4096", 16, 4096, 4096, false},
    {"x @ W, 1x4097 @ 4097x1000 (odd)", 1, 4097, 1000, false},
    {"x @ W, 4x8192 @ 8192x4096", 4, 8192, 4096, false},
    {"x @ W, 16x4096 @ 4096x8192", 16, 4096, 8192, false},
};
enum { NSHAPES = sizeof SHAPES / sizeof SHAPES[0] };

typedef struct run_arg {
    mt_kernel *k;
    mt_tensor *args[2], *out;
    const shape *s;
} run_arg;

static void run_kernel(void *p) {
    run_arg *r = p;
    mt_diag d;
    if (mt_kernel_run(r->k, r->args, 2, &r->out, 1, &d) != MT_OK) {
        fprintf(stderr, "mt_gemv_bench: run failed:\n%s\n", d.text);
        exit(1);
    }
}

static void run_blas(void *p) {
    const shape *s = p;
    if (s->t)
        blas.sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_TRANS, (int)s->m, (int)s->n, (int)s->k, 1.0f, X,
                   (int)s->k, W, (int)s->k, 0.0f, Y, (int)s->n);
    else
        blas.sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, (int)s->m, (int)s->n, (int)s->k, 1.0f, X,
                   (int)s->k, W, (int)s->n, 0.0f, Y, (int)s->n);
}

/* Does Y hold x @ w (a sample, against double with the bound of any order)? */
static bool check(const shape *s) {
    for (int q = 0; q < 24; q++) {
        int64_t i = q == 23 ? s->m - 1 : (q * 7) % s->m, j = q == 23 ? s->n - 1 : (q * 104729 + 13) % s->n;
        double acc = 0, mag = 0;
        for (int64_t k = 0; k < s->k; k++) {
            double w = s->t ? W[j * s->k + k] : W[k * s->n + j];
            acc += (double)X[i * s->k + k] * w;
            mag += fabs((double)X[i * s->k + k] * w);
        }
        double got = Y[i * s->n + j];
        if (!(fabs(got - acc) <= (double)(s->k + 1) * 6e-8 * mag + 1e-30)) return false;
    }
    return true;
}

static const char *python(void) {
    const char *p = getenv("MT_BENCH_PYTHON");
    if (p && *p) return p;
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

/* NumPy's median seconds for s on `threads` threads, or 0 (why says why). */
static double numpy_time(const shape *s, int threads, char *ver, size_t cap, char *why, size_t wcap) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "unset OPENBLAS_THREAD_TIMEOUT; OPENBLAS_NUM_THREADS=%d '%s' '%s' %lld %lld %lld %s %d 2>&1", threads,
             python(), MT_BENCH_NUMPY_GEMV_SCRIPT, (long long)s->m, (long long)s->k, (long long)s->n,
             s->t ? "t" : "n", s->m * s->k * s->n > 100000000 ? 60 : 200);
    FILE *f = popen(cmd, "r");
    if (!f) return 0;
    char line[512], v[32] = "";
    double med = 0, best;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "gemv %lf %lf %31s", &med, &best, v) != 3) snprintf(why, wcap, "%s", line);
    if (pclose(f) != 0) med = 0;
    snprintf(ver, cap, "%s", v);
    return med;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Medians of STREAM, OpenBLAS and the kernel, alternated in blocks: wall
 * time (wall[3]) and the calling thread's CPU time (cpu[3]; with one thread
 * this leaves out the time the thread was descheduled by other work on the
 * machine). */
static void time_three(run_arg *ra, int threads, double budget_s, double *wall, double *cpu) {
    enum { PER = 5, MAXR = 400 };
    static double ts[2][3][MAXR];
    int n = 0;
    double start = now_s();
    while (n + PER <= MAXR && (n < 20 || now_s() - start < budget_s)) {
        for (int w = 0; w < 3; w++) {
            if (w == 1 && !blas.lib) continue;
            for (int i = 0; i <= PER; i++) {
                double t0 = now_s(), c0 = cpu_now();
                if (w == 0) stream_once(&threads);
                else if (w == 1) run_blas((void *)ra->s);
                else run_kernel(ra);
                if (i > 0) ts[1][w][n + i - 1] = cpu_now() - c0, ts[0][w][n + i - 1] = now_s() - t0;
            }
            usleep(10 * 1000);
        }
        n += PER;
    }
    for (int q = 0; q < 2; q++)
        for (int w = 0; w < 3; w++) (q ? cpu : wall)[w] = w == 1 && !blas.lib ? 0 : median(ts[q][w], n);
}

static mt_tensor *wrap(float *p, int64_t d0, int64_t d1) {
    int64_t shape[2] = {d0, d1};
    mt_tensor *t = mt_tensor_wrap(p, MT_FLOAT32, 2, shape, NULL);
    if (!t) die("mt_tensor_wrap failed");
    return t;
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    SA = big_alloc(STREAM_N), SB = big_alloc(STREAM_N), SC = big_alloc(STREAM_N);
    W = big_alloc(W_MAX), X = big_alloc(16 * 8192), Y = big_alloc(16 * 8192);
    for (int64_t i = 0; i < STREAM_N; i++) SA[i] = frand(), SB[i] = frand(), SC[i] = 0;
    for (int64_t i = 0; i < W_MAX; i++) W[i] = frand();
    for (int64_t i = 0; i < 16 * 8192; i++) X[i] = frand();
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
    blas_load();

    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M %Z", localtime(&now));
    printf("# minitriton GEMV benchmark\n\n- date: %s\n- %ld online CPUs; minitriton %s\n", date,
           sysconf(_SC_NPROCESSORS_ONLN), mt_version());
    const char *ct = getenv("OPENBLAS_CORETYPE");
    if (blas.lib)
        printf("- OpenBLAS core %s (OPENBLAS_CORETYPE=%s)\n", blas.corename ? blas.corename() : "?", ct ? ct : "unset");
    printf("- times: medians; STREAM, OpenBLAS and minitriton alternate in blocks; NumPy runs in a child just "
           "before its row. W GB/s: K * N * 4 bytes over the time; %% STREAM: that over the STREAM add "
           "bandwidth of the same blocks; vs X: X's time over ours (> 1: we are faster)\n\n");
    printf("| shape | threads | minitriton | W GB/s | %% STREAM | STREAM GB/s | NumPy | vs NumPy | OpenBLAS sgemm | "
           "vs BLAS | thread CPU time (1 thread): ours, %% STREAM, vs BLAS | goal (2 threads: ≥ 85 %% STREAM and ≥ NumPy) |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    fflush(stdout);
    bool quick = getenv("MT_GEMV_QUICK") != NULL; /* 1 thread, no NumPy: for tuning */
    for (int threads = 1; threads <= (quick ? 1 : 2); threads++) {
        mt_context_options co = {0};
        co.num_threads = threads;
        mt_context *ctx = mt_context_create(&co);
        if (!ctx) die("mt_context_create failed");
        for (int q = 0; q < NSHAPES; q++) {
            const shape *s = &SHAPES[q];
            if (only && !strstr(s->name, only)) continue;
            fprintf(stderr, "  %s, %d thread%s ...\n", s->name, threads, threads > 1 ? "s" : "");
            char src[512];
            snprintf(src, sizeof src,
                     "def gemv(x: Tensor((%lld, %lld), \"float32\"), w: Tensor((%lld, %lld), \"float32\")):\n"
                     "    return x @ w%s\n",
                     (long long)s->m, (long long)s->k, (long long)(s->t ? s->n : s->k),
                     (long long)(s->t ? s->k : s->n), s->t ? ".T" : "");
            mt_diag d;
            run_arg ra = {0};
            ra.s = s;
            ra.k = mt_jit_compile(ctx, src, NULL, &d);
            if (!ra.k) {
                fprintf(stderr, "%s\n", d.text);
                die("compile failed");
            }
            ra.args[0] = wrap(X, s->m, s->k);
            ra.args[1] = s->t ? wrap(W, s->n, s->k) : wrap(W, s->k, s->n);
            ra.out = wrap(Y, s->m, s->n);
            memset(Y, 0, (size_t)(s->m * s->n) * 4);
            run_kernel(&ra);
            bool ok = check(s);
            char ver[32] = "", why[512] = "";
            double np_s = quick ? 0 : numpy_time(s, threads, ver, sizeof ver, why, sizeof why);
            if (blas.lib) blas.set_threads(threads);
            double wall[3], cpu[3];
            time_three(&ra, threads, s->k * s->n > 20000000 ? 2.0 : 1.0, wall, cpu);
            if (blas.lib) blas.set_threads(1);
            double st_s = wall[0], bl_s = wall[1], mt_s = wall[2];
            double stream = 3.0 * (double)STREAM_N * 4 / st_s / 1e9;
            double wgb = (double)s->k * s->n * 4 / mt_s / 1e9;
            char np[64] = "–", vnp[32] = "–", bl[32] = "–", vbl[32] = "–", ct[64] = "–";
            if (np_s > 0) snprintf(np, sizeof np, "%.3f ms", np_s * 1e3), snprintf(vnp, sizeof vnp, "%.2fx", np_s / mt_s);
            if (bl_s > 0) snprintf(bl, sizeof bl, "%.3f ms", bl_s * 1e3), snprintf(vbl, sizeof vbl, "%.2fx", bl_s / mt_s);
            if (threads == 1)
                snprintf(ct, sizeof ct, "%.3f ms, %.0f %%, %.2fx", cpu[2] * 1e3,
                         (double)s->k * s->n * 4 / cpu[2] / (3.0 * (double)STREAM_N * 4 / cpu[0]) * 100,
                         blas.lib ? cpu[1] / cpu[2] : 0);
            const char *met = !ok ? "WRONG" : threads < 2 ? "–"
                              : (wgb / stream >= 0.85 && (np_s <= 0 || mt_s <= np_s)) ? "yes" : "no";
            printf("| %s | %d | %.3f ms | %.1f | %.0f %% | %.1f | %s | %s | %s | %s | %s | %s |\n", s->name, threads,
                   mt_s * 1e3, wgb, wgb / stream * 100, stream, np, vnp, bl, vbl, ct, met);
            fflush(stdout);
            if (ver[0]) snprintf(np_version, sizeof np_version, "%s", ver);
            if (np_s <= 0 && !quick) fprintf(stderr, "  NumPy failed: %s\n", why);
            mt_tensor_release(ra.args[0]);
            mt_tensor_release(ra.args[1]);
            mt_tensor_release(ra.out);
            mt_kernel_release(ra.k);
            usleep(200 * 1000);
        }
        mt_context_destroy(ctx);
    }
    if (np_version[0]) printf("\nNumPy %s (%s).\n", np_version, python());
    return 0;
}
