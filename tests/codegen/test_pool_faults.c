/*
 * test_pool_faults.c -- the thread pool (src/runtime/parallel.c) when the
 * system misbehaves: pthread_create failing (every time, or after some
 * workers started; the link wraps pthread_create, tests/parallel.cmake), and
 * a fork() after the pool's workers started (the child has none of them).
 * In every case mt_parallel_for still covers [0, n) exactly once and
 * mt_thread_pool_destroy returns. Also: a fault in a kernel on a worker
 * reaches the host's handler, and a kernel allocation failing on a worker
 * is reported to the thread that ran the region.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/parallel.h"

/* ---- pthread_create, wrapped (-Wl,--wrap=pthread_create) --------------------- */

static atomic_int creates_left = -1; /* successful creates still allowed (-1: all) */
static atomic_int create_calls;

int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *arg) {
    atomic_fetch_add(&create_calls, 1);
    int left = atomic_load(&creates_left);
    if (left == 0) return EAGAIN;
    if (left > 0) atomic_fetch_sub(&creates_left, 1);
    return __real_pthread_create(t, a, f, arg);
}

/* ---- a body that counts --------------------------------------------------------- */

enum { N = 10007 };
static atomic_int hits[N];

static void count_body(int64_t b, int64_t e, void *c) {
    (void)c;
    for (int64_t i = b; i < e; i++) atomic_fetch_add_explicit(&hits[i], 1, memory_order_relaxed);
}

/* Runs parallel-for over [0, N) `rounds` times on p; true when every
 * iteration ran exactly once per round. */
static bool cover(mt_thread_pool *p, int rounds) {
    mt_thread_pool *prev = mt_parallel_set_pool(p);
    bool ok = true;
    for (int r = 0; r < rounds && ok; r++) {
        for (int i = 0; i < N; i++) atomic_store(&hits[i], 0);
        mt_parallel_for(N, count_body, NULL);
        for (int i = 0; i < N; i++) ok &= atomic_load(&hits[i]) == 1;
    }
    mt_parallel_set_pool(prev);
    return ok;
}

/* The threads that ran a body (at most 8). */
static atomic_ulong ran[8];

static void who_body(int64_t b, int64_t e, void *c) {
    (void)b, (void)e, (void)c;
    unsigned long me = (unsigned long)pthread_self();
    for (int i = 0; i < 8; i++) {
        unsigned long seen = 0;
        if (atomic_compare_exchange_strong(&ran[i], &seen, me) || seen == me) return;
    }
}

/* Runs regions on p until `threads` distinct threads have run a body (for
 * at most about 2 s); true when they did. A worker that ran a body has
 * finished starting, sanitizer bookkeeping included. */
static bool all_ran(mt_thread_pool *p, int threads) {
    mt_thread_pool *prev = mt_parallel_set_pool(p);
    for (int i = 0; i < 8; i++) atomic_store(&ran[i], 0);
    bool ok = false;
    for (int tries = 0; tries < 2000 && !ok; tries++) {
        mt_parallel_for(N, who_body, NULL);
        int n = 0;
        for (int i = 0; i < 8; i++) n += atomic_load(&ran[i]) != 0;
        ok = n == threads;
        if (!ok) usleep(1000);
    }
    mt_parallel_set_pool(prev);
    return ok;
}

/* No thread can be created: the caller runs every range, nothing hangs, and
 * the pool does not retry at every region. */
static void test_create_always_fails(void **s) {
    (void)s;
    atomic_store(&creates_left, 0);
    atomic_store(&create_calls, 0);
    mt_thread_pool *p = mt_thread_pool_create(4);
    assert_non_null(p);
    assert_true(cover(p, 50));
    assert_int_equal(mt_thread_pool_started(p), 0);
    assert_int_equal(atomic_load(&create_calls), 1);
    mt_thread_pool_destroy(p);
    atomic_store(&creates_left, -1);
}

/* One worker of three starts: regions run on two threads. */
static void test_create_fails_later(void **s) {
    (void)s;
    atomic_store(&creates_left, 1);
    mt_thread_pool *p = mt_thread_pool_create(4);
    assert_non_null(p);
    assert_true(cover(p, 200));
    assert_int_equal(mt_thread_pool_started(p), 1);
    mt_thread_pool_destroy(p);
    atomic_store(&creates_left, -1);
}

/* fork() while the pool has workers (idle): the child has only the forking
 * thread. Its parallel-for must still cover [0, n), and destroying the pool
 * in the child must return (the parent's workers cannot be joined there). The
 * child reports by exit status; alarm() turns a hang into a failure. */
static void test_fork_child(void **s) {
    (void)s;
    mt_thread_pool *p = mt_thread_pool_create(4);
    assert_non_null(p);
    assert_true(cover(p, 20));
    assert_int_equal(mt_thread_pool_started(p), 3);
    /* Every worker past its start before the fork: under ASan a worker
     * still in its start-up can hold the allocator's lock at the fork, and
     * the child, which inherits the lock but not the thread, then hangs in
     * its first allocation of that size (seen about once in 30 runs). */
    assert_true(all_ran(p, 4));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20);
        int rc = cover(p, 20) ? 0 : 3;
        mt_thread_pool_destroy(p);
#ifndef __SANITIZE_THREAD__ /* TSan cannot start threads in a multi-threaded process's child */
        /* a new pool in the child gets threads of its own */
        mt_thread_pool *q = mt_thread_pool_create(3);
        if (!q || !cover(q, 20) || mt_thread_pool_started(q) != 2) rc = 4;
        mt_thread_pool_destroy(q);
#endif
        _exit(rc);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) fail_msg("the child died of signal %d", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* the parent's pool is untouched */
    assert_true(cover(p, 20));
    mt_thread_pool_destroy(p);
}

/* A host that tracks writes with page protection (GC write barriers, dirty
 * tracking): the first write to a read-only page faults, the host's SIGSEGV
 * handler makes the page writable and the write is retried. A fault is
 * delivered to the thread that caused it, so a worker must not have SIGSEGV
 * blocked: with it blocked the kernel kills the process instead of running
 * the handler. The writes happen in a child, whose death is the failure. */
enum { PAGES = 8 };
static char *pages;
static long page_size;
static atomic_int faults; /* lock-free: fine in a signal handler */
static pthread_t main_thread;
static atomic_int worker_wrote;

static void on_segv(int sig, siginfo_t *si, void *uc) {
    (void)sig, (void)uc;
    char *a = si->si_addr;
    if (a < pages || a >= pages + PAGES * page_size) _exit(5); /* a real crash */
    char *pg = pages + (a - pages) / page_size * page_size;
    mprotect(pg, (size_t)page_size, PROT_READ | PROT_WRITE);
    atomic_fetch_add(&faults, 1);
}

static void write_pages(int64_t b, int64_t e, void *c) {
    (void)c;
    if (!pthread_equal(pthread_self(), main_thread)) atomic_store(&worker_wrote, 1);
    for (int64_t i = b; i < e; i++) pages[i * page_size] = (char)(i + 1);
}

static void test_worker_faults_reach_host(void **s) {
    (void)s;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20);
        page_size = sysconf(_SC_PAGESIZE);
        pages = mmap(NULL, (size_t)(PAGES * page_size), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (pages == MAP_FAILED) _exit(6);
        struct sigaction sa = {0};
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
        mt_thread_pool *p = mt_thread_pool_create(4);
        mt_thread_pool *prev = mt_parallel_set_pool(p);
        mt_parallel_for(1, count_body, NULL); /* starts the workers */
        /* the workers are idle now; the caller may run every range itself,
         * so run until a worker has taken one (bounded) */
        main_thread = pthread_self();
        for (int round = 0; round < 200 || !atomic_load(&worker_wrote); round++) {
            mprotect(pages, (size_t)(PAGES * page_size), PROT_READ);
            mt_parallel_for(PAGES, write_pages, NULL);
            for (int i = 0; i < PAGES; i++)
                if (pages[i * page_size] != (char)(i + 1)) _exit(7);
        }
        mt_parallel_set_pool(prev);
        mt_thread_pool_destroy(p);
        _exit(atomic_load(&faults) >= PAGES && atomic_load(&worker_wrote) ? 0 : 8);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) fail_msg("the child died of signal %d", WTERMSIG(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* mt_kernel_malloc failing in a range run by a worker (an overflowing size
 * here): the flag reaches the thread that ran the region, once. */
static atomic_int failed_on_worker;

static void alloc_body(int64_t b, int64_t e, void *c) {
    (void)c;
    for (int64_t i = b; i < e; i++) {
        bool bad = i == N - 1; /* the last range: a worker's, unless the caller took it */
        void *m = mt_kernel_malloc(bad ? INT64_MAX : 16, bad ? 8 : 4);
        if (bad && !pthread_equal(pthread_self(), main_thread)) atomic_store(&failed_on_worker, 1);
        if (!bad && !m) fail_msg("a 64-byte allocation failed");
        free(m);
    }
}

static void test_kernel_alloc_failure_reaches_caller(void **s) {
    (void)s;
    main_thread = pthread_self();
    mt_thread_pool *p = mt_thread_pool_create(4);
    mt_thread_pool *prev = mt_parallel_set_pool(p);
    assert_false(mt_kernel_alloc_failed());
    for (int round = 0; round < 1000 && !atomic_load(&failed_on_worker); round++) {
        mt_parallel_for(N, alloc_body, NULL);
        assert_true(mt_kernel_alloc_failed());
        assert_false(mt_kernel_alloc_failed()); /* cleared */
    }
    assert_true(atomic_load(&failed_on_worker)); /* the worker path was taken */
    /* no failure, no flag */
    mt_parallel_for(N, count_body, NULL);
    assert_false(mt_kernel_alloc_failed());
    mt_parallel_set_pool(prev);
    mt_thread_pool_destroy(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_always_fails),
        cmocka_unit_test(test_create_fails_later),
        cmocka_unit_test(test_fork_child),
        cmocka_unit_test(test_worker_faults_reach_host),
        cmocka_unit_test(test_kernel_alloc_failure_reaches_caller),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
