/* stream.h -- the STREAM-like add c = a + b, shared by mt_bench and mt_sweep
 * (stream.c). */
#ifndef MT_BENCH_STREAM_H
#define MT_BENCH_STREAM_H

#include <stdint.h>

/* One pass of c[i] = a[i] + b[i] for i < n on `threads` threads (the
 * caller's and threads - 1 new ones, at most 8). */
void stream_add_pass(float *c, const float *a, const float *b, int64_t n, int threads);

/* Best-of bandwidth in GB/s of `passes` such passes (the first is a
 * warm-up), counting each array once as STREAM does: 3 * n * 4 bytes. */
double stream_add_gbs(float *c, const float *a, const float *b, int64_t n, int threads,
                      int passes);

#endif
