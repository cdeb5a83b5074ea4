/*
 * parallel.h -- the parallel-for that generated code calls.
 *
 * A parallel loop of a kernel (MT_FOR_PARALLEL) is compiled into a body
 * function that runs the loop over a sub-range [begin, end) of its
 * iterations, with everything it needs in a closure the kernel built on its
 * stack, and one call
 *
 *     mt_parallel_for(n, body, closure);
 *
 * which splits [0, n) into one contiguous range per thread and returns when
 * all ranges are done. The thread count is the calling thread's (see
 * mt_parallel_set_num_threads): the executor sets it from the context's
 * num_threads option for the duration of a run, so two contexts with
 * different counts, used from any threads, never see each other's. See
 * parallel.c for the implementation and docs/codegen.md for the codegen side.
 */
#ifndef MT_RUNTIME_PARALLEL_H
#define MT_RUNTIME_PARALLEL_H

#include <stdint.h>

/* Runs the iterations [begin, end) of a parallel loop. */
typedef void (*mt_parallel_body)(int64_t begin, int64_t end, void *closure);

/* Calls body on contiguous ranges covering [0, n) exactly once, from up to
 * the calling thread's thread count threads (at most n; the calling thread
 * is one of them), and returns when every range is done. n <= 0 does
 * nothing. Called from inside a parallel region (a body, or the host's own
 * OpenMP region) it runs body(0, n) on the calling thread: no nested threads.
 * Generated code resolves this symbol by address (codegen/jit.c). */
void mt_parallel_for(int64_t n, mt_parallel_body body, void *closure);

/* Sets the calling thread's thread count for later mt_parallel_for calls
 * (0 = the default: OpenMP's, i.e. OMP_NUM_THREADS or all cores) and returns
 * the previous setting, so that a caller can restore it. Thread-local. */
int mt_parallel_set_num_threads(int n);

/* The number of threads mt_parallel_for would use now for a large n. */
int mt_parallel_num_threads(void);

#endif
