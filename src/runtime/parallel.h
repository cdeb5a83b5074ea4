/*
 * parallel.h -- the parallel-for that generated code calls, and the thread
 * pools that run it.
 *
 * A parallel loop of a kernel (MT_FOR_PARALLEL) is compiled into a body
 * function that runs the loop over a sub-range [begin, end) of its
 * iterations, with everything it needs in a closure the kernel built on its
 * stack, and one call
 *
 *     mt_parallel_for(n, body, closure);
 *
 * which splits [0, n) into contiguous ranges, one per thread (each cut into
 * at most 8 chunks, so that threads done early help a late one; parallel.c),
 * and returns when all ranges are
 * done. The threads are those of the calling thread's current pool (see
 * mt_parallel_set_pool): the executor makes the kernel's context's pool
 * current for the duration of a run, and sets the thread count from the
 * context's num_threads option, so two contexts, used from any threads,
 * never share workers or see each other's settings. Generated code needs no
 * extra argument. See parallel.c for the algorithm and docs/codegen.md.
 */
#ifndef MT_RUNTIME_PARALLEL_H
#define MT_RUNTIME_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

/* Runs the iterations [begin, end) of a parallel loop. */
typedef void (*mt_parallel_body)(int64_t begin, int64_t end, void *closure);

/* Persistent worker threads (one context owns one). */
typedef struct mt_thread_pool mt_thread_pool;

/* A pool for nthreads threads in all, the caller of mt_parallel_for being
 * one of them (0 = one per CPU this process may run on). No thread starts
 * here: the nthreads - 1 workers start at the pool's first parallel region.
 * NULL when out of memory. */
mt_thread_pool *mt_thread_pool_create(int nthreads);

/* Stops and joins the workers and frees the pool. The pool must be idle (no
 * mt_parallel_for running on it). In a fork()'s child, a pool made before
 * the fork is freed without joining (its workers are not in this process).
 * NULL is a no-op. */
void mt_thread_pool_destroy(mt_thread_pool *p);

/* Threads the pool runs a region on (the caller included); workers started
 * so far. */
int mt_thread_pool_size(const mt_thread_pool *p);
int mt_thread_pool_started(const mt_thread_pool *p);

/* Calls body on contiguous ranges covering [0, n) exactly once and returns
 * when every range is done. With a current pool and t = min(n, thread count)
 * > 1, [0, n) is cut into t ranges (sizes differing by at most one) that the
 * pool's threads and the calling thread run. It runs body(0, n) on the
 * calling thread instead when there is no current pool, when t <= 1, when
 * called from inside a region (a body, on any thread: no nested threads), or
 * when another thread is running a region on the same pool (two host threads
 * on one context: the second runs serially rather than wait). n <= 0 does
 * nothing. In the child of a fork(), a pool made before the fork runs every
 * loop serially (its workers stayed in the parent). Generated code resolves
 * this symbol by address (codegen/jit.c). */
void mt_parallel_for(int64_t n, mt_parallel_body body, void *closure);

/* Makes p the calling thread's current pool (NULL: none) and returns the
 * previous one, so that a caller can restore it. Thread-local. */
mt_thread_pool *mt_parallel_set_pool(mt_thread_pool *p);

/* Sets the calling thread's thread count for later mt_parallel_for calls
 * (0 = the current pool's size) and returns the previous setting. A count
 * above the pool's size gives that many ranges, run by the pool's threads
 * (the ranges beyond the pool's threads have no owner: threads done with
 * their own take them).
 * Thread-local. */
int mt_parallel_set_num_threads(int n);

/* The number of ranges mt_parallel_for would make now for a large n (1
 * without a current pool). */
int mt_parallel_num_threads(void);

/* The number of CPUs this process may run on (at least 1). */
int mt_parallel_num_cpus(void);

/* A kernel's own heap buffer (codegen/llvm.c: TS_ALLOC over 64 KiB, or of
 * symbolic size): count * esize bytes from malloc, or NULL when that
 * overflows or malloc fails. Then the kernel skips the statement that needed
 * the buffer and the calling thread's allocation-failure flag is set; a
 * worker's flag is handed to the thread that ran the region when its range
 * ends, so the executor sees it after the kernel returns and fails the run
 * with MT_ERR_NOMEM. Generated code resolves this symbol by address. */
void *mt_kernel_malloc(int64_t count, int64_t esize);

/* Returns and clears the calling thread's allocation-failure flag. */
bool mt_kernel_alloc_failed(void);

/* ---- run-time bounds checks (passes/tir/check_bounds.c) ----------------------
 * A failed T.check_bounds calls mt_kernel_oob and returns from the function
 * it is in. The first failure on a thread is kept in that thread's record
 * (later ones are dropped). A parallel region whose chunk fails stops: the
 * chunks not started yet are skipped, the first failing chunk's record is
 * handed to the thread that ran the region when the region ends (like the
 * allocation flag above), and the kernel, which calls mt_kernel_stopped()
 * after each parallel loop with checks, returns too. The executor takes the
 * record after the kernel (mt_kernel_take_oob) and fails the run with
 * MT_ERR_RUNTIME. */

/* What a failed check reports. */
typedef struct mt_oob_record {
    bool set;          /* a check failed */
    bool store;        /* the access is a store (else a load) */
    int line, col;     /* the access's place in the source */
    int ndim;          /* index values and dims kept (at most MT_MAX_RANK) */
    int ndim_all;      /* the access's rank */
    char name[64];     /* the buffer's name (truncated) */
    int64_t idx[8], dims[8];
} mt_oob_record;

/* Records a failed check on the calling thread: the access of buffer name
 * at line:col with n index values vals[0..n) against dims vals[n..2n).
 * Generated code resolves this symbol by address. */
void mt_kernel_oob(const char *name, int32_t store, int32_t line, int32_t col, int32_t n,
                   const int64_t *vals);

/* Has a check failed on the calling thread (its record is set)? Generated
 * code resolves this symbol by address. */
bool mt_kernel_stopped(void);

/* Moves the calling thread's record into *out (when out is not NULL) and
 * clears it; true when one was set. */
bool mt_kernel_take_oob(mt_oob_record *out);

#endif
