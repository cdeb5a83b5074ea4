/* fma_peak.h -- the measured fp32 FMA peak (fma_peak.c). */
#ifndef MT_BENCH_FMA_PEAK_H
#define MT_BENCH_FMA_PEAK_H

/* GFLOP/s of `threads` threads (1-8) each running independent vector FMAs on
 * registers at once: the sum over the threads of each one's best chunk. */
double fma_peak_gflops(int threads);
/* The vector width the loop was compiled for, in bits. */
int fma_peak_vector_bits(void);

#endif
