"""numpy_mlp.py -- the NumPy reference of mt_bench's MLP rows (bench/numpy_ref.c runs it).

The MLP 784-128-10 the way a NumPy user writes it, fp32, on the BLAS that NumPy
is linked with (Debian's python3-numpy takes OpenBLAS through libblas.so.3 when
libopenblas0 is installed; OPENBLAS_NUM_THREADS and OPENBLAS_CORETYPE come from
the caller). Prints one line per batch size:

    mlp BATCH MEDIAN_SECONDS BEST_SECONDS NUMPY_VERSION

after two warm-up calls, over REPS timed calls (batch 4096: 40, batch 1: 20000).
"""
import time

import numpy as np


def bench(f, reps):
    f()
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2], ts[0]


def main():
    rng = np.random.default_rng(0)
    w0 = (rng.random((128, 784), dtype=np.float32) - 0.5) * 0.1
    b0 = rng.random(128, dtype=np.float32)
    w1 = (rng.random((10, 128), dtype=np.float32) - 0.5) * 0.1
    b1 = rng.random(10, dtype=np.float32)
    for batch, reps in ((4096, 40), (1, 20000)):
        x = rng.random((batch, 784), dtype=np.float32)
        med, best = bench(lambda: np.maximum(x @ w0.T + b0, 0) @ w1.T + b1, reps)
        print(f"mlp {batch} {med:.9f} {best:.9f} {np.__version__}", flush=True)


if __name__ == "__main__":
    main()
