"""numpy_gemv.py -- the NumPy reference of mt_gemv_bench's rows (bench/gemv_bench.c runs it).

    numpy_gemv.py M K N LAYOUT REPS

times `x @ w` (LAYOUT n: w is (K, N) row-major) or `x @ w.T` (LAYOUT t: w is
(N, K)) in fp32, x (M, K), the way a NumPy user writes it, on the BLAS NumPy
is linked with (OPENBLAS_NUM_THREADS comes from the caller). The result goes
into a preallocated array (out=), as mt_gemv_bench's kernels write into the
caller's tensor. Prints

    gemv MEDIAN_SECONDS BEST_SECONDS NUMPY_VERSION

after three warm-up calls, over REPS timed calls.
"""
import sys
import time

import numpy as np


def main():
    m, k, n, layout, reps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    rng = np.random.default_rng(0)
    x = rng.random((m, k), dtype=np.float32) - 0.5
    w = rng.random((k, n) if layout == "n" else (n, k), dtype=np.float32) - 0.5
    wv = w if layout == "n" else w.T
    out = np.empty((m, n), dtype=np.float32)
    for _ in range(3):
        np.matmul(x, wv, out=out)
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        np.matmul(x, wv, out=out)
        ts.append(time.perf_counter() - t)
    ts.sort()
    print(f"gemv {ts[len(ts) // 2]:.9f} {ts[0]:.9f} {np.__version__}", flush=True)


if __name__ == "__main__":
    main()
