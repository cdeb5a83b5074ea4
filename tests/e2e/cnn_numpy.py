#!/usr/bin/env python3
"""The example CNN (examples/kernels/cnn.py) run by mtc against NumPy.

usage: cnn_numpy.py MTC EXAMPLE [--target cuda --emulate]

Writes seeded random inputs as .npy files into a temporary directory, runs
`MTC --input ... --output out.npy EXAMPLE` (extra arguments go to mtc), and
compares the result with the model computed here in float64 NumPy:
conv2d as a sum of shifted slices, relu, max pooling by reshaping, flatten,
x @ w.T + b. Bound: every element within 1e-4 * (1 + |want|) (float32
sums of at most 72 products per conv output, 400 in the linear layer, on
values of order 1). Exit status 0 when it matches, 1 otherwise.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


def conv2d(x, w):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,oc->nohw", x[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return out


def max_pool2(x):
    n, c, h, w = x.shape
    h2, w2 = h // 2, w // 2
    return x[:, :, :h2 * 2, :w2 * 2].reshape(n, c, h2, 2, w2, 2).max(axis=(3, 5))


def main():
    mtc, example, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    rng = np.random.default_rng(17)
    shapes = {"x": (1, 1, 28, 28), "w1": (8, 1, 3, 3), "b1": (8, 1, 1), "w2": (16, 8, 3, 3),
              "b2": (16, 1, 1), "w3": (10, 400), "b3": (10,)}
    vals = {k: (rng.standard_normal(s) * (0.3 if k[0] == "w" else 1)).astype(np.float32)
            for k, s in shapes.items()}
    with tempfile.TemporaryDirectory() as d:
        args = [mtc]
        for k, v in vals.items():
            path = os.path.join(d, k + ".npy")
            np.save(path, v)
            args += ["--input", f"{k}={path}"]
        out = os.path.join(d, "out.npy")
        subprocess.run(args + ["--output", out] + extra + [example], check=True)
        got = np.load(out)
    v = {k: a.astype(np.float64) for k, a in vals.items()}
    h = max_pool2(np.maximum(conv2d(v["x"], v["w1"]) + v["b1"], 0))
    h = max_pool2(np.maximum(conv2d(h, v["w2"]) + v["b2"], 0))
    want = h.reshape(1, -1) @ v["w3"].T + v["b3"]
    if got.shape != want.shape or got.dtype != np.float32:
        print(f"cnn_numpy: got {got.dtype} {got.shape}, want float32 {want.shape}")
        return 1
    err = np.abs(got - want) / (1 + np.abs(want))
    print(f"cnn_numpy: max scaled error {err.max():.3g} over {want.size} outputs")
    return 0 if err.max() <= 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
