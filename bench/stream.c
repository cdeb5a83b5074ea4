/*
 * stream.c -- memory bandwidth as STREAM's add measures it: c = a + b over
 * arrays much larger than the caches, every array counted once (the reads
 * and the write; not the write-allocate read of c), best of several passes.
 * Compiled for this CPU (-march=native), as STREAM is. mt_bench and
 * mt_sweep measure it in their own run, beside what they compare with it.
 */
#include "stream.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

typedef struct stream_part {
    float *c;
    const float *a, *b;
    int64_t lo, hi;
} stream_part;

static void *stream_part_run(void *p) {
    stream_part *sp = p;
    float *restrict c = sp->c;
    const float *restrict a = sp->a, *restrict b = sp->b;
    for (int64_t i = sp->lo; i < sp->hi; i++) c[i] = a[i] + b[i];
    return NULL;
}

void stream_add_pass(float *c, const float *a, const float *b, int64_t n, int threads) {
    pthread_t th[8];
    stream_part parts[8];
    if (threads < 1) threads = 1;
    if (threads > 8) threads = 8;
    for (int i = 0; i < threads; i++) {
        parts[i] = (stream_part){c, a, b, n * i / threads, n * (i + 1) / threads};
        if (i > 0 && pthread_create(&th[i], NULL, stream_part_run, &parts[i]) != 0) {
            fprintf(stderr, "stream: pthread_create failed\n");
            exit(1);
        }
    }
    stream_part_run(&parts[0]);
    for (int i = 1; i < threads; i++) pthread_join(th[i], NULL);
}

double stream_add_gbs(float *c, const float *a, const float *b, int64_t n, int threads,
                      int passes) {
    double best = 1e30;
    for (int r = 0; r < passes; r++) {
        double t0 = now_s();
        stream_add_pass(c, a, b, n, threads);
        double t = now_s() - t0;
        if (r > 0 && t < best) best = t;
    }
    return 3.0 * (double)n * sizeof(float) / best / 1e9;
}
