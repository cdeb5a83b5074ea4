/*
 * pool_wake.c -- what a parallel region costs after the machine was idle.
 *
 *     ./build-bench/bench/mt_pool_wake
 *
 * A pool of 2 threads runs mt_parallel_for over 32 iterations of busy work,
 * 4 ms in all (2 ms per thread when both run), after a pause of 0 to 50 ms,
 * 30 times per pause. It prints, per pause, the medians of: when the worker
 * started its first chunk (from the region's start), how many of the 16
 * chunks it ran, and the region's time; and how often the worker ran on
 * the caller's CPU. On this VM (docs/performance.md, "Waking workers") a
 * worker woken after a few milliseconds of idleness starts 1-2 ms late or
 * is put on the caller's CPU, so a region of 2 ms takes up to 4. Not a
 * test; built with the benchmark (target mt_pool_wake).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "runtime/parallel.h"


enum { N = 32, REPS = 30 };
static double t0, first;     /* region start; the worker's first chunk (-1: none) */
static pthread_t caller;
static int caller_cpu, worker_chunks, same_cpu;

static void body(int64_t b, int64_t e, void *c) {
    (void)c;
    double s = now_s();
    if (pthread_equal(pthread_self(), caller)) {
        caller_cpu = sched_getcpu();
    } else {
        if (first < 0) first = s - t0;
        worker_chunks++;
        same_cpu += sched_getcpu() == caller_cpu;
    }
    while (now_s() - s < (double)(e - b) * (0.004 / N)) {
    }
}

int main(void) {
    caller = pthread_self();
    mt_thread_pool *p = mt_thread_pool_create(2);
    if (!p) return 1;
    mt_parallel_set_pool(p);
    mt_parallel_for(N, body, NULL); /* starts the worker */
    static const int pauses_us[] = {0, 100, 1000, 5000, 10000, 50000};
    printf("| pause | worker starts after (median) | chunks the worker ran (of 16) | region (median; 4 ms on one thread) | worker chunks on the caller's CPU |\n");
    printf("| --- | --- | --- | --- | --- |\n");
    for (size_t pi = 0; pi < sizeof pauses_us / sizeof *pauses_us; pi++) {
        double start[REPS], region[REPS];
        int chunks = 0, same = 0;
        for (int r = 0; r < REPS; r++) {
            if (pauses_us[pi]) usleep((useconds_t)pauses_us[pi]);
            first = -1, worker_chunks = 0, same_cpu = 0;
            t0 = now_s();
            mt_parallel_for(N, body, NULL);
            region[r] = now_s() - t0;
            start[r] = first < 0 ? 1e9 : first;
            chunks += worker_chunks, same += same_cpu;
        }
        qsort(start, REPS, sizeof *start, cmp_double);
        qsort(region, REPS, sizeof *region, cmp_double);
        char st[32];
        if (start[REPS / 2] >= 1e9) snprintf(st, sizeof st, "never");
        else snprintf(st, sizeof st, "%.0f µs", start[REPS / 2] * 1e6);
        printf("| %g ms | %s | %.1f | %.2f ms | %d of %d |\n", pauses_us[pi] / 1000.0, st,
               (double)chunks / REPS, region[REPS / 2] * 1e3, same, chunks);
    }
    mt_parallel_set_pool(NULL);
    mt_thread_pool_destroy(p);
    return 0;
}
