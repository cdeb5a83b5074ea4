/*
 * parallel.c -- mt_parallel_for, the one runtime call behind parallel loops.
 *
 * Work split. [0, n) is cut into t contiguous ranges whose sizes differ by at
 * most one (the first n % t ranges get the extra iteration), one per thread,
 * t = min(n, thread count). Static contiguous ranges are what a streaming
 * kernel wants: each thread walks its own part of every buffer front to back
 * (hardware prefetchers, huge pages, no false sharing except at the t - 1
 * boundaries), and the only synchronization is the fork and the join. The
 * iterations of a parallel loop are themselves chunks of work (the schedule
 * makes each one at least 64 KiB of output, docs/schedule.md), so balance is
 * the schedule's business and the runtime's split needs no cleverness.
 *
 * Threads. With OpenMP (MT_HAVE_OPENMP: CMake compiles this file alone with
 * -fopenmp, gcc's libgomp) one `omp parallel num_threads(t)` region runs the
 * ranges: libgomp keeps its team between regions, so a call costs a wake-up
 * and a barrier (microseconds), not thread creation. Without OpenMP, which
 * includes the ThreadSanitizer build (libgomp is not instrumented, so TSan
 * cannot see its barriers and reports every kernel's writes as races, even in
 * a trivial correct OpenMP program), or with MT_PARALLEL_PTHREADS defined,
 * each call creates t - 1 pthreads and joins them; TSan understands that. It
 * is slower per call and meant for checking.
 *
 * Thread count. A thread-local setting (mt_parallel_set_num_threads), 0
 * meaning OpenMP's default (OMP_NUM_THREADS, else all cores). The executor
 * sets it from the context's option for the duration of a run and restores
 * the previous value, so contexts with different counts do not interfere,
 * whichever host threads run them. Generated code therefore needs no extra
 * argument: it calls mt_parallel_for on the thread that runs the kernel.
 *
 * Nesting. A call made while a parallel region is active (from a body, or
 * from inside the host's own OpenMP region) runs body(0, n) serially on the
 * calling thread; codegen already makes every parallel loop nested in
 * another one serial, so this only guards calls from elsewhere.
 */
#include "runtime/parallel.h"

#if defined(MT_HAVE_OPENMP) && !defined(MT_PARALLEL_PTHREADS)
#include <omp.h>
#else
#include <pthread.h>
#include <unistd.h>
#endif

static _Thread_local int tl_num_threads; /* 0 = default */

int mt_parallel_set_num_threads(int n) {
    int prev = tl_num_threads;
    tl_num_threads = n > 0 ? n : 0;
    return prev;
}

/* Range [b, e) of part id out of t over [0, n). */
static void part(int64_t n, int64_t t, int64_t id, int64_t *b, int64_t *e) {
    int64_t q = n / t, r = n % t;
    *b = id * q + (id < r ? id : r);
    *e = *b + q + (id < r ? 1 : 0);
}

#if defined(MT_HAVE_OPENMP) && !defined(MT_PARALLEL_PTHREADS)

int mt_parallel_num_threads(void) {
    return tl_num_threads > 0 ? tl_num_threads : omp_get_max_threads();
}

void mt_parallel_for(int64_t n, mt_parallel_body body, void *closure) {
    if (n <= 0) return;
    int64_t t = mt_parallel_num_threads();
    if (t > n) t = n;
    if (t <= 1 || omp_in_parallel()) {
        body(0, n, closure);
        return;
    }
#pragma omp parallel num_threads((int)t)
    {
        int64_t b, e;
        part(n, omp_get_num_threads(), omp_get_thread_num(), &b, &e);
        if (b < e) body(b, e, closure);
    }
}

#else /* pthreads: one thread per range, created and joined per call */

static _Thread_local int tl_in_parallel;

typedef struct job {
    mt_parallel_body body;
    void *closure;
    int64_t begin, end;
} job;

static void *run_job(void *p) {
    job *j = p;
    tl_in_parallel = 1;
    j->body(j->begin, j->end, j->closure);
    return NULL;
}

int mt_parallel_num_threads(void) {
    if (tl_num_threads > 0) return tl_num_threads;
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (int)c : 1;
}

void mt_parallel_for(int64_t n, mt_parallel_body body, void *closure) {
    enum { MAX_T = 256 };
    if (n <= 0) return;
    int64_t t = mt_parallel_num_threads();
    if (t > n) t = n;
    if (t > MAX_T) t = MAX_T;
    if (t <= 1 || tl_in_parallel) {
        body(0, n, closure);
        return;
    }
    job jobs[MAX_T];
    pthread_t tid[MAX_T];
    char started[MAX_T];
    for (int64_t i = 0; i < t; i++) {
        jobs[i].body = body;
        jobs[i].closure = closure;
        part(n, t, i, &jobs[i].begin, &jobs[i].end);
        /* a thread that cannot be created runs its range on this thread */
        started[i] = i > 0 && pthread_create(&tid[i], NULL, run_job, &jobs[i]) == 0;
    }
    tl_in_parallel = 1;
    for (int64_t i = 0; i < t; i++)
        if (!started[i]) body(jobs[i].begin, jobs[i].end, closure);
    tl_in_parallel = 0;
    for (int64_t i = 1; i < t; i++)
        if (started[i]) pthread_join(tid[i], NULL);
}

#endif
