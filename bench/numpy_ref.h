/* numpy_ref.h -- NumPy's MLP, measured in the benchmark's run (numpy_ref.c). */
#ifndef MT_BENCH_NUMPY_REF_H
#define MT_BENCH_NUMPY_REF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    double batch4096_s; /* median seconds of one call at batch 4096 */
    double batch1_s;    /* and at batch 1 */
    char version[32];   /* numpy.__version__ */
} numpy_mlp_ref;

/* Runs bench/numpy_mlp.py in a python3 with NumPy, its BLAS on `threads`
 * threads. False, with the reason in `why`, when there is no such python3 or
 * the script fails. */
bool numpy_mlp_measure(int threads, numpy_mlp_ref *out, char *why, size_t why_cap);

#endif
