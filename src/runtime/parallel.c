/*
 * parallel.c -- mt_parallel_for and the thread pools behind it.
 *
 * Why our own pool and not OpenMP: libgomp's threads spin at every join and
 * after every region (OMP_WAIT_POLICY, GOMP_SPINCOUNT), and those are
 * process-wide settings read from the environment when libgomp starts, so a
 * library cannot choose them without changing the host's OpenMP. On a loaded
 * machine (more runnable threads than CPUs) a spinning worker takes the CPU
 * from the thread the join waits for; measured in docs/performance.md.
 *
 * Pool. Each context owns one pool of nthreads - 1 worker threads, started
 * at its first parallel region and joined when the context is freed. The
 * thread that calls mt_parallel_for takes part in the region.
 *
 * A region. [0, n) is cut into t contiguous ranges whose sizes differ by at
 * most one, t = min(n, thread count), and each range into at most
 * MAX_CHUNKS contiguous chunks. Thread i (the caller is 0, worker w is w + 1)
 * owns range i: it claims that range's chunks from the front, in order.
 * A thread done with its own range helps the others: it claims their chunks
 * from the back. So when every thread is on time each runs its own range
 * front to back, the same part of every buffer in every region (what one
 * loop wrote, the next reads from the same core's cache); a worker that is
 * late costs only the chunks it did not get to. Late is common: waking a
 * sleeping worker takes 40-100 us here, and after the machine was idle for
 * a few milliseconds up to 2 ms (the hypervisor has to run the idle vCPU
 * again; docs/performance.md), when a region of a 4 ms kernel lasts 1-2 ms.
 * With whole ranges the caller then ran the late worker's range after its
 * own, at one thread's speed. Each range has one claim word {generation,
 * front, back}, changed by compare-and-swap; the caller publishes the job
 * (body, closure, n), the claim words and a ticket {generation, t}. The join
 * is an atomic count of unfinished chunks; the thread that finishes the
 * last one wakes the caller if it went to sleep. The generation makes a
 * claim from a thread that read the ticket of an earlier region fail (the
 * job fields are only read after a successful claim, and the caller does
 * not change them until every chunk of its region is done). A body is
 * called once per chunk: a kernel's result does not depend on how [0, n) is
 * cut (the schedule makes each iteration at least 64 KiB of work,
 * docs/schedule.md).
 *
 * Waiting. A waiting thread spins for MT_SPIN_NS (a few microseconds,
 * `pause` between polls). Then a worker between regions keeps polling,
 * yielding its CPU between polls, until MT_SPIN_HOT_NS (2 ms) after its
 * last region ended, and the caller at the join for MT_SPIN_HOT_NS more;
 * then each sleeps on a futex (Linux; a mutex and condition variable
 * elsewhere): an idle pool uses no CPU 2 ms after its last region. The
 * caller issues the wake-up system call only when a worker sleeps (a count
 * of sleepers), so back-to-back regions cost no system call. A pool with
 * more threads than the CPUs it may use does not poll (its threads would
 * take the CPUs from each other): 5 µs, then sleep.
 *
 * Why poll for milliseconds. A sleeping thread is woken where the
 * scheduler puts it, and on the VMs measured (docs/performance.md, "The
 * parallel runtime") that was often the CPU of the thread that woke it: a
 * worker woken by the caller shares the caller's CPU for the whole region
 * (a region of 2 ms took 4), and a caller woken at the join by a worker
 * lands on the worker's CPU for the next one. A thread that stays awake
 * between regions stays on its CPU; the yields give the CPU to any other
 * runnable thread, so an oversubscribed machine loses little. And a worker
 * that finds itself on the caller's CPU anyway (at a region's start, or
 * while polling) moves: its affinity is narrowed to exclude that CPU for a
 * moment (the kernel migrates it at once) and then restored, when the pool
 * has no more threads than the CPUs the worker may use.
 *
 * Nesting and sharing. A thread inside a region (a worker, or the caller
 * while it runs ranges) runs any mt_parallel_for serially: a kernel's body
 * that reaches another parallel loop, or a kernel run from inside a body.
 * A pool runs one region at a time: a second thread that finds it busy
 * (two host threads running kernels of one context at once, or a host's
 * own OpenMP threads doing so) runs its loop serially on its own thread
 * instead of waiting, so nothing can deadlock and the results are the same
 * (each range computes its iterations independently of how [0, n) is cut).
 *
 * Memory order. The job fields are plain: they are written before the
 * ticket is stored (release) and read after a successful claim (acq_rel
 * CAS); the caller rewrites them only after it saw the count of unfinished
 * ranges reach zero (acquire), which every thread decrements (release)
 * after its last read. The futexes only put threads to sleep; all ordering
 * goes through atomics, so ThreadSanitizer sees it (the TSan build runs this
 * same code).
 *
 * fork(). The child of a fork has only the forking thread: a pool made
 * before the fork has no workers there (and its state may be that of a
 * region another thread was running). A process-wide fork count, bumped in
 * the child by a pthread_atfork handler, tells the child that such a pool is
 * its parent's: its parallel-for runs serially and mt_thread_pool_destroy
 * frees it without joining threads that do not exist in the child (joining
 * them crashed). A pool made in the child is an ordinary pool.
 *
 * Thread count. A thread-local setting (mt_parallel_set_num_threads), 0
 * meaning the current pool's size; the executor sets the pool and the
 * count from the context for the duration of a run and restores both.
 */
#define _GNU_SOURCE
#include "runtime/parallel.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() ((void)0)
#endif

/* How long a waiting thread spins, then polls yielding its CPU, before it
 * sleeps (see the top). */
#ifndef MT_SPIN_NS
#define MT_SPIN_NS 5000
#endif
#ifndef MT_SPIN_HOT_NS
#define MT_SPIN_HOT_NS 2000000
#endif

enum { MAX_THREADS = 256, MAX_CHUNKS = 8 };

typedef struct worker_arg {
    struct mt_thread_pool *pool;
    int id; /* the range it owns: 1, 2, ... (the caller owns 0) */
} worker_arg;

struct mt_thread_pool {
    int nthreads;                 /* threads per region, the caller included */
    int nworkers;                 /* workers started (<= nthreads - 1) */
    unsigned forks;               /* fork_count when made: another value, a fork's child */
    bool start_failed;            /* the system refused a thread: do not retry */
    pthread_t *tids;
    struct worker_arg *args;      /* [nthreads - 1]: each worker's pool and id */
    atomic_int busy;              /* 1 while a region runs */
    /* the job: written by the caller between regions (see the header) */
    mt_parallel_body body;
    void *closure;
    int64_t n;
    _Alignas(64) _Atomic uint64_t ticket; /* gen << 32 | t << 16: the current region */
    _Atomic uint64_t *claims;             /* [MAX_THREADS] per range: gen << 32 | front << 16 | back */
    _Alignas(64) _Atomic uint32_t seq;    /* bumped per region and at stop: workers sleep on it */
    atomic_int sleepers;                   /* workers asleep (or about to be) on seq */
    atomic_bool stop;
    _Alignas(64) _Atomic uint32_t left;   /* ranges not finished: the caller sleeps on it */
    atomic_bool caller_asleep;
    atomic_bool alloc_failed;     /* a range's mt_kernel_malloc failed (see the header) */
    atomic_bool stopped;          /* a chunk's bounds check failed: skip the rest */
    atomic_int caller_cpu;        /* the CPU the caller started the region on, or -1 */
    bool poll;                    /* wait hot between regions: no more threads than CPUs */
    mt_oob_record oob;            /* the first failing chunk's record (its writer set stopped) */
};

static atomic_uint fork_count; /* forks this process is the child of (see the top) */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void after_fork_child(void) {
    atomic_fetch_add_explicit(&fork_count, 1, memory_order_relaxed);
}
static void register_atfork(void) { pthread_atfork(NULL, NULL, after_fork_child); }
static bool inherited(const mt_thread_pool *p) {
    return p->forks != atomic_load_explicit(&fork_count, memory_order_relaxed);
}

static _Thread_local int tl_num_threads;      /* 0 = the pool's size */
static _Thread_local mt_thread_pool *tl_pool;
static _Thread_local bool tl_in_region;
static _Thread_local bool tl_alloc_failed; /* mt_kernel_malloc failed on this thread */
static _Thread_local mt_oob_record tl_oob;  /* the first failed bounds check on this thread */

/* ---- sleeping and waking ---------------------------------------------------- */

#ifdef __linux__
static void wait_while(_Atomic uint32_t *w, uint32_t v) {
    /* returns at once if *w != v; spurious returns are handled by the callers' loops */
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}
static void wake(_Atomic uint32_t *w, int n) {
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}
#else
static pthread_mutex_t park_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cv = PTHREAD_COND_INITIALIZER;
static void wait_while(_Atomic uint32_t *w, uint32_t v) {
    pthread_mutex_lock(&park_mu);
    if (atomic_load(w) == v) pthread_cond_wait(&park_cv, &park_mu);
    pthread_mutex_unlock(&park_mu);
}
static void wake(_Atomic uint32_t *w, int n) {
    (void)w, (void)n;
    pthread_mutex_lock(&park_mu);
    pthread_cond_broadcast(&park_cv);
    pthread_mutex_unlock(&park_mu);
}
#endif

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- regions ------------------------------------------------------------------ */

#define T_GEN(w) ((uint32_t)((w) >> 32))
#define T_COUNT(w) ((int)(((w) >> 16) & 0xffff))

/* Range [b, e) of part id out of t over [0, n). */
static void part(int64_t n, int64_t t, int64_t id, int64_t *b, int64_t *e) {
    int64_t q = n / t, r = n % t;
    *b = id * q + (id < r ? id : r);
    *e = *b + q + (id < r ? 1 : 0);
}

static int chunks_of(int64_t len) { return len < MAX_CHUNKS ? (int)len : MAX_CHUNKS; }

/* Claims a chunk of range r in region gen: the first unclaimed one (front)
 * or the last. Its index, or -1 when none is left (or the region is over). */
static int claim(mt_thread_pool *p, int r, uint32_t gen, bool front) {
    _Atomic uint64_t *w = &p->claims[r];
    uint64_t v = atomic_load_explicit(w, memory_order_acquire);
    for (;;) {
        int f = (int)((v >> 16) & 0xffff), b = (int)(v & 0xffff);
        if (T_GEN(v) != gen || f >= b) return -1;
        if (atomic_compare_exchange_weak_explicit(w, &v, front ? v + (1u << 16) : v - 1,
                                                  memory_order_acq_rel, memory_order_acquire))
            return front ? f : b - 1;
    }
}

/* Runs chunk k of range r (of t) of the current region. */
static void run_chunk(mt_thread_pool *p, int t, int r, int k) {
    int64_t rb, re, b, e;
    part(p->n, t, r, &rb, &re);
    part(re - rb, chunks_of(re - rb), k, &b, &e);
    if (!atomic_load_explicit(&p->stopped, memory_order_relaxed)) p->body(rb + b, rb + e, p->closure);
    if (tl_oob.set) { /* the first to stop the region keeps its record for the caller */
        bool expect = false;
        if (atomic_compare_exchange_strong(&p->stopped, &expect, true)) p->oob = tl_oob;
        tl_oob.set = false;
    }
    if (tl_alloc_failed) { /* to the caller: before the release below */
        tl_alloc_failed = false;
        atomic_store_explicit(&p->alloc_failed, true, memory_order_relaxed);
    }
    /* seq_cst, like join's store of caller_asleep and load of left: of
     * the two store-then-load sequences at least one sees the other's
     * store, so a caller going to sleep is always woken */
    if (atomic_fetch_sub(&p->left, 1) == 1 && atomic_load(&p->caller_asleep))
        wake(&p->left, 1);
}

/* Thread self's part of the current region: its own range from the front,
 * then what is left of the others from their backs (one sweep suffices: a
 * range with nothing left stays so for the rest of the region). */
static void run_region(mt_thread_pool *p, int self) {
    uint64_t tk = atomic_load_explicit(&p->ticket, memory_order_acquire);
    uint32_t gen = T_GEN(tk);
    int t = T_COUNT(tk), k;
    if (self < t)
        while ((k = claim(p, self, gen, true)) >= 0) run_chunk(p, t, self, k);
    for (int i = 1; i <= t; i++) {
        int r = (self + i) % t;
        while ((k = claim(p, r, gen, false)) >= 0) run_chunk(p, t, r, k);
    }
}

/* The caller's wait for the ranges other threads claimed: a spin of
 * MT_SPIN_NS, then polls with a yield of the CPU between them for up to
 * MT_SPIN_HOT_NS (what is left is a chunk another thread is running), then
 * a sleep. A caller woken from that sleep may be put on the CPU of the
 * worker that woke it, so it sleeps only when the wait is long. */
static void join(mt_thread_pool *p) {
    int64_t until = 0;
    for (int i = 0;; i++) {
        if (atomic_load_explicit(&p->left, memory_order_acquire) == 0) return;
        cpu_relax();
        if ((i & 31) != 31) continue;
        int64_t t = now_ns();
        if (!until) until = t + MT_SPIN_NS;
        else if (t >= until + (p->poll ? MT_SPIN_HOT_NS : 0)) break;
        else if (t >= until) sched_yield();
    }
    atomic_store(&p->caller_asleep, true);
    uint32_t left;
    while ((left = atomic_load(&p->left)) != 0) wait_while(&p->left, left);
    atomic_store(&p->caller_asleep, false);
}

/* A worker woken onto the CPU its caller runs on shares that CPU with it
 * for the whole region (see the top): it moves to another of the CPUs it
 * may use, by leaving the caller's CPU out of its affinity for a moment;
 * its affinity is then what it was. Only when the pool has no more threads
 * than those CPUs (else sharing is expected). */
static void leave_caller_cpu(mt_thread_pool *p) {
#ifdef __linux__
    int cpu = atomic_load_explicit(&p->caller_cpu, memory_order_relaxed);
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getcpu() != cpu) return;
    cpu_set_t mine, other;
    if (pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) != 0) return;
    if (CPU_COUNT(&mine) < p->nthreads || !CPU_ISSET(cpu, &mine)) return;
    other = mine;
    CPU_CLR(cpu, &other);
    if (pthread_setaffinity_np(pthread_self(), sizeof other, &other) == 0)
        pthread_setaffinity_np(pthread_self(), sizeof mine, &mine);
#else
    (void)p;
#endif
}

/* A worker's wait for the next region (seq != seen): a spin of MT_SPIN_NS,
 * then, until the deadline hot, polls with a yield of the CPU between
 * them, moving off the caller's CPU if it finds itself there; true when
 * the region came, false when the worker should sleep. */
static bool worker_spin(mt_thread_pool *p, uint32_t seen, int64_t hot) {
    int64_t until = 0;
    for (int i = 0;; i++) {
        if (atomic_load_explicit(&p->seq, memory_order_acquire) != seen) return true;
        cpu_relax();
        if ((i & 31) != 31) continue;
        int64_t t = now_ns();
        if (!until) until = t + MT_SPIN_NS;
        else if (t >= hot && t >= until) return false;
        else if (t >= until) {
            leave_caller_cpu(p);
            sched_yield();
        }
    }
}

static void *worker_main(void *arg) {
    mt_thread_pool *p = ((worker_arg *)arg)->pool;
    int self = ((worker_arg *)arg)->id;
    tl_in_region = true; /* anything a body calls runs serially */
    uint32_t seen = 0;   /* seq when the pool was created */
    int64_t hot = 0;
    for (;;) {
        if (!worker_spin(p, seen, hot)) {
            atomic_fetch_add(&p->sleepers, 1);
            while (atomic_load(&p->seq) == seen) wait_while(&p->seq, seen);
            atomic_fetch_sub(&p->sleepers, 1);
        }
        seen = atomic_load_explicit(&p->seq, memory_order_acquire);
        if (atomic_load(&p->stop)) return NULL;
        leave_caller_cpu(p);
        run_region(p, self);
        hot = p->poll ? now_ns() + MT_SPIN_HOT_NS : 0;
    }
}

/* Starts workers up to nthreads - 1 (fewer if the system refuses; the
 * caller runs what nobody else claims). Asynchronous signals go to the
 * host's threads. The synchronous ones (a fault in a kernel on a worker)
 * stay unblocked: they can only go to the faulting thread, and blocked there
 * the kernel kills the process instead of running the host's handler. */
static void start_workers(mt_thread_pool *p) {
    sigset_t all, old;
    sigfillset(&all);
    static const int sync_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof sync_signals / sizeof *sync_signals; i++)
        sigdelset(&all, sync_signals[i]);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (p->nworkers < p->nthreads - 1) {
        p->args[p->nworkers] = (worker_arg){p, p->nworkers + 1};
        if (pthread_create(&p->tids[p->nworkers], NULL, worker_main, &p->args[p->nworkers]) != 0) {
            p->start_failed = true;
            break;
        }
        p->nworkers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void mt_parallel_for(int64_t n, mt_parallel_body body, void *closure) {
    if (n <= 0) return;
    mt_thread_pool *p = tl_pool;
    int64_t t = mt_parallel_num_threads();
    if (t > n) t = n;
    int expect = 0;
    if (t <= 1 || tl_in_region || inherited(p) ||
        !atomic_compare_exchange_strong_explicit(&p->busy, &expect, 1, memory_order_acquire,
                                                 memory_order_relaxed)) {
        body(0, n, closure);
        return;
    }
    if (p->nworkers < p->nthreads - 1 && !p->start_failed) start_workers(p);

    p->body = body;
    p->closure = closure;
    p->n = n;
    uint64_t gen = (uint32_t)(T_GEN(atomic_load_explicit(&p->ticket, memory_order_relaxed)) + 1u);
    uint32_t chunks = 0;
    for (int r = 0; r < t; r++) {
        int64_t b, e;
        part(n, t, r, &b, &e);
        int c = chunks_of(e - b);
        chunks += (uint32_t)c;
        atomic_store_explicit(&p->claims[r], gen << 32 | (uint64_t)c, memory_order_release);
    }
    atomic_store_explicit(&p->left, chunks, memory_order_relaxed);
#ifdef __linux__
    atomic_store_explicit(&p->caller_cpu, sched_getcpu(), memory_order_relaxed);
#else
    atomic_store_explicit(&p->caller_cpu, -1, memory_order_relaxed);
#endif
    atomic_store_explicit(&p->ticket, gen << 32 | (uint64_t)t << 16, memory_order_release);
    atomic_fetch_add(&p->seq, 1);
    int asleep = atomic_load(&p->sleepers);
    if (asleep > 0) wake(&p->seq, (int)(t - 1 < asleep ? t - 1 : asleep));

    tl_in_region = true;
    run_region(p, 0);
    tl_in_region = false;

    join(p);
    if (atomic_load_explicit(&p->stopped, memory_order_relaxed)) {
        if (!tl_oob.set) tl_oob = p->oob;
        atomic_store_explicit(&p->stopped, false, memory_order_relaxed);
    }
    if (atomic_load_explicit(&p->alloc_failed, memory_order_relaxed)) {
        atomic_store_explicit(&p->alloc_failed, false, memory_order_relaxed);
        tl_alloc_failed = true;
    }
    atomic_store_explicit(&p->busy, 0, memory_order_release);
}

/* ---- pools and settings ------------------------------------------------------ */

void *mt_kernel_malloc(int64_t count, int64_t esize) {
    int64_t bytes;
    void *ptr = NULL;
    if (count >= 0 && esize > 0 && !__builtin_mul_overflow(count, esize, &bytes) &&
        (uint64_t)bytes <= (uint64_t)SIZE_MAX)
        ptr = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!ptr) tl_alloc_failed = true;
    return ptr;
}

bool mt_kernel_alloc_failed(void) {
    bool f = tl_alloc_failed;
    tl_alloc_failed = false;
    return f;
}

void mt_kernel_oob(const char *name, int32_t store, int32_t line, int32_t col, int32_t n,
                   const int64_t *vals) {
    if (tl_oob.set) return;
    mt_oob_record *r = &tl_oob;
    r->store = store != 0;
    r->line = line, r->col = col;
    r->ndim_all = n;
    r->ndim = n < 8 ? n : 8;
    snprintf(r->name, sizeof r->name, "%s", name ? name : "?");
    for (int i = 0; i < r->ndim; i++) r->idx[i] = vals[i], r->dims[i] = vals[n + i];
    r->set = true;
}

bool mt_kernel_stopped(void) { return tl_oob.set; }

bool mt_kernel_take_oob(mt_oob_record *out) {
    bool set = tl_oob.set;
    if (set && out) *out = tl_oob;
    tl_oob.set = false;
    return set;
}

int mt_parallel_num_cpus(void) {
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int c = CPU_COUNT(&set);
        if (c > 0) return c;
    }
#endif
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (int)c : 1;
}

mt_thread_pool *mt_thread_pool_create(int nthreads) {
    if (nthreads <= 0) nthreads = mt_parallel_num_cpus();
    if (nthreads > MAX_THREADS) nthreads = MAX_THREADS;
    mt_thread_pool *p = aligned_alloc(64, (sizeof *p + 63) / 64 * 64);
    if (!p) return NULL;
    *p = (mt_thread_pool){0};
    p->nthreads = nthreads;
    p->poll = nthreads <= mt_parallel_num_cpus();
    pthread_once(&atfork_once, register_atfork);
    p->forks = atomic_load_explicit(&fork_count, memory_order_relaxed);
    p->tids = calloc((size_t)nthreads, sizeof *p->tids);
    p->args = calloc((size_t)nthreads, sizeof *p->args);
    p->claims = calloc(MAX_THREADS, sizeof *p->claims); /* ranges: up to the thread count set */
    if (!p->tids || !p->args || !p->claims) {
        free(p->tids), free(p->args), free(p->claims);
        free(p);
        return NULL;
    }
    for (int i = 0; i < MAX_THREADS; i++) atomic_init(&p->claims[i], 0);
    atomic_init(&p->busy, 0);
    atomic_init(&p->ticket, 0);
    atomic_init(&p->seq, 0);
    atomic_init(&p->sleepers, 0);
    atomic_init(&p->stop, false);
    atomic_init(&p->left, 0);
    atomic_init(&p->caller_asleep, false);
    atomic_init(&p->alloc_failed, false);
    atomic_init(&p->stopped, false);
    atomic_init(&p->caller_cpu, -1);
    return p;
}

void mt_thread_pool_destroy(mt_thread_pool *p) {
    if (!p) return;
    if (p->nworkers > 0 && !inherited(p)) {
        atomic_store(&p->stop, true);
        atomic_fetch_add(&p->seq, 1);
        wake(&p->seq, p->nworkers);
        for (int i = 0; i < p->nworkers; i++) pthread_join(p->tids[i], NULL);
    }
    free(p->tids);
    free(p->args);
    free(p->claims);
    free(p);
}

int mt_thread_pool_size(const mt_thread_pool *p) { return p ? p->nthreads : 0; }
int mt_thread_pool_started(const mt_thread_pool *p) { return p ? p->nworkers : 0; }

mt_thread_pool *mt_parallel_set_pool(mt_thread_pool *p) {
    mt_thread_pool *prev = tl_pool;
    tl_pool = p;
    return prev;
}

int mt_parallel_set_num_threads(int n) {
    int prev = tl_num_threads;
    tl_num_threads = n > 0 ? n : 0;
    return prev;
}

int mt_parallel_num_threads(void) {
    if (!tl_pool) return 1;
    int t = tl_num_threads > 0 ? tl_num_threads : tl_pool->nthreads;
    return t < MAX_THREADS ? t : MAX_THREADS;
}
