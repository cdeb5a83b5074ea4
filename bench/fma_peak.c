/*
 * fma_peak.c -- the machine's fp32 FMA peak, measured (mt_bench's reference
 * for compute-bound kernels).
 *
 * Twelve independent accumulators (more than FMA latency x FMA ports on
 * current x86 cores) each take one fused multiply-add per step on the
 * widest vectors this file is compiled for (-march=native: AVX-512 here),
 * with nothing read from memory, for about 0.3 s on each thread at once
 * (best of three).
 * What that reaches is the most any kernel can: matmul's and the MLP's
 * GFLOP/s are reported against it. It is measured because it is not a
 * constant of the machine: a host with the same ISA may run 512-bit FMAs at
 * full or half width (Zen 5 / Zen 4), and a shared host's clock moves.
 */
#include "fma_peak.h"

#include "bench_util.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#if defined(__AVX512F__)
#include <immintrin.h>
typedef __m512 vec;
#define VLANES 16
#define VSET(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VSUM(a) _mm512_reduce_add_ps(a)
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
typedef __m256 vec;
#define VLANES 8
#define VSET(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
static float vsum(__m256 a) {
    float f[8], s = 0;
    _mm256_storeu_ps(f, a);
    for (int i = 0; i < 8; i++) s += f[i];
    return s;
}
#define VSUM(a) vsum(a)
#else
typedef float vec; /* scalar: the compiler's own FMA or mul + add */
#define VLANES 1
#define VSET(x) (x)
#define VFMA(a, b, c) ((a) * (b) + (c))
#define VSUM(a) (a)
#endif

typedef struct peak_job {
    double gflops;
    float sink;
} peak_job;

enum { STEPS = 1 << 20 }; /* per timed chunk: 12 M FMAs, ~1-3 ms */

static void *peak_run(void *p) {
    peak_job *job = p;
    vec a0 = VSET(0), a1 = VSET(1), a2 = VSET(2), a3 = VSET(3), a4 = VSET(4), a5 = VSET(5);
    vec a6 = VSET(6), a7 = VSET(7), a8 = VSET(8), a9 = VSET(9), a10 = VSET(10), a11 = VSET(11);
    const vec m = VSET(0.999999f), c = VSET(1e-6f);
    double best = 0, start = now_s();
    while (now_s() - start < 0.3) {
        double t0 = now_s();
        for (int i = 0; i < STEPS; i++) {
            a0 = VFMA(a0, m, c), a1 = VFMA(a1, m, c), a2 = VFMA(a2, m, c);
            a3 = VFMA(a3, m, c), a4 = VFMA(a4, m, c), a5 = VFMA(a5, m, c);
            a6 = VFMA(a6, m, c), a7 = VFMA(a7, m, c), a8 = VFMA(a8, m, c);
            a9 = VFMA(a9, m, c), a10 = VFMA(a10, m, c), a11 = VFMA(a11, m, c);
            __asm__ volatile("" ::: "memory"); /* keeps the loop a loop of 12 FMAs */
        }
        double g = 12.0 * STEPS * VLANES * 2 / (now_s() - t0) / 1e9;
        if (g > best) best = g;
    }
    job->sink = VSUM(a0) + VSUM(a1) + VSUM(a2) + VSUM(a3) + VSUM(a4) + VSUM(a5) + VSUM(a6) +
                VSUM(a7) + VSUM(a8) + VSUM(a9) + VSUM(a10) + VSUM(a11);
    job->gflops = best;
    return NULL;
}

/* One measurement: the sum over the threads of each one's best chunk. */
static double peak_once(int threads) {
    peak_job jobs[8] = {{0}};
    pthread_t th[8];
    int started = 1;
    for (int i = 1; i < threads; i++, started++)
        if (pthread_create(&th[i], NULL, peak_run, &jobs[i]) != 0) break;
    peak_run(&jobs[0]);
    double sum = jobs[0].gflops;
    for (int i = 1; i < started; i++) {
        pthread_join(th[i], NULL);
        sum += jobs[i].gflops;
    }
    return sum;
}

double fma_peak_gflops(int threads) {
    if (threads < 1) threads = 1;
    if (threads > 8) threads = 8;
    double best = 0;
    for (int i = 0; i < 3; i++) { /* a neighbour on the host can hold a vCPU back for a while */
        double g = peak_once(threads);
        if (g > best) best = g;
    }
    return best;
}

int fma_peak_vector_bits(void) { return VLANES * 32; }
