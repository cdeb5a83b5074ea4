"""numpy_sweep.py -- the NumPy side of mt_sweep's shape sweep (bench/sweep.c runs it).

mt_sweep starts one child per thread count (`/usr/bin/python3 numpy_sweep.py`,
with OPENBLAS_NUM_THREADS set to that count) and talks to it over stdin and
stdout, one line each way, so that NumPy's timings alternate with
minitriton's in the same run. The cases are mt_sweep's table (bench/sweep.c):
the same expression text is compiled by minitriton and evaluated here, with
the kernel language's library functions (softmax, sum, concat, ...) defined
below as a NumPy user writes them.

Requests and answers:

    case SHAPES EXPR   SHAPES: the float32 inputs a, b, c, ... as 64x4096,4096
                       (a scalar: "-"); builds them (input j filled like
                       sweep.c's fill(): a hash of the flat index and j),
                       evaluates EXPR once and answers
                       "ok N V0 ... V32 M0 ... M32": the result's size, its
                       values at the sample indices (sample_indices) and their
                       magnitudes (EXPR over the inputs' absolute values, in
                       float64: for a sum, the sum of |x|, which bounds its
                       rounding error), or "err TEXT".
    time REPS WARM     WARM (0 or 1) untimed calls, then REPS timed calls of EXPR;
                       answers "t T1 T2 ..." (seconds each).
    version            answers "ok NUMPY_VERSION"
    quit

A result that is a view (x.T, a slice, broadcast_to) is copied (.copy()),
because minitriton's result is a new contiguous array: timing a view would
time nothing. The garbage collector is off while timing, as in timeit.
"""
import gc
import sys
import time

import numpy as np

HASH = np.uint64(2654435761)
SEED_STRIDE = 1000003
NSAMPLES = 32


def fill(shape, seed):
    """Input `seed`: value(i) = ((i + seed * 1000003) * 2654435761 mod 2^32) / 2^32 - 0.5."""
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    out = np.empty(n, dtype=np.float32)
    step = 1 << 22
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        i = np.arange(lo, hi, dtype=np.uint64) + np.uint64(seed * SEED_STRIDE)
        h = (i * HASH) & np.uint64(0xFFFFFFFF)
        out[lo:hi] = (h.astype(np.float64) / 4294967296.0 - 0.5).astype(np.float32)
    return out.reshape(shape)


def sample_indices(n):
    """The flat indices checked: 32 spread by a hash, and the last."""
    return [(k * 2654435761 + 12345) % n for k in range(NSAMPLES)] + [n - 1]


# ---- the kernel language's library, the NumPy way ----------------------------


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


NS = {
    "np": np,
    "softmax": softmax,
    "log_softmax": log_softmax,
    "layer_norm": layer_norm,
    "sum": lambda x, axis=None, keepdims=False: np.sum(x, axis=axis, keepdims=keepdims),
    "mean": lambda x, axis=None, keepdims=False: np.mean(x, axis=axis, keepdims=keepdims),
    "max": lambda x, axis=None, keepdims=False: np.max(x, axis=axis, keepdims=keepdims),
    "min": lambda x, axis=None, keepdims=False: np.min(x, axis=axis, keepdims=keepdims),
    "argmax": lambda x, axis=None, keepdims=False: np.argmax(x, axis=axis, keepdims=keepdims),
    "argmin": lambda x, axis=None, keepdims=False: np.argmin(x, axis=axis, keepdims=keepdims),
    "exp": np.exp,
    "log": np.log,
    "tanh": np.tanh,
    "sqrt": np.sqrt,
    "abs": np.abs,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "where": np.where,
    "relu": lambda x: np.maximum(x, np.float32(0)),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "matmul": np.matmul,
    "transpose": np.transpose,
    "reshape": np.reshape,
    "broadcast_to": np.broadcast_to,
    "concat": lambda xs, axis=0: np.concatenate(xs, axis=axis),
}

NAMES = "abcdefgh"


def parse_shapes(text):
    shapes = []
    for s in text.split(","):
        shapes.append(() if s == "-" else tuple(int(d) for d in s.split("x")))
    return shapes


def main():
    f = args = None
    out = sys.stdout
    for line in sys.stdin:
        words = line.rstrip("\n").split(" ", 2)
        try:
            if words[0] == "case":
                f = args = None
                shapes = parse_shapes(words[1])
                args = [fill(s, j + 1) for j, s in enumerate(shapes)]
                params = ", ".join(NAMES[: len(args)])
                g = eval(f"lambda {params}: {words[2]}", NS)
                r = np.asarray(g(*args))
                if r.flags.owndata and r.flags.c_contiguous:
                    f = g
                else:
                    f = lambda *x: g(*x).copy()  # noqa: E731
                    r = np.asarray(f(*args))
                flat = r.reshape(-1)
                idx = sample_indices(flat.size)
                vals = " ".join(repr(float(flat[i])) for i in idx)
                # the magnitude of each sample: EXPR over |inputs| in float64
                # (for a sum, the sum of |x|): rounding error scales with it
                m = np.asarray(g(*(np.abs(x).astype(np.float64) for x in args))).reshape(-1)
                mags = " ".join(repr(abs(float(m[i]))) for i in idx)
                del m
                out.write(f"ok {flat.size} {vals} {mags}\n")
            elif words[0] == "time":
                reps, warm = (int(w) for w in words[1].split() + words[2:3])
                for _ in range(warm):
                    f(*args)
                ts = []
                gc.disable()
                for _ in range(reps):
                    t = time.perf_counter()
                    f(*args)
                    ts.append(time.perf_counter() - t)
                gc.enable()
                out.write("t " + " ".join(f"{t:.9f}" for t in ts) + "\n")
            elif words[0] == "version":
                out.write(f"ok {np.__version__}\n")
            elif words[0] == "quit":
                break
            else:
                out.write(f"err unknown request {words[0]}\n")
        except Exception as e:  # the answer names the error; mt_sweep reports it
            gc.enable()
            out.write("err " + f"{type(e).__name__}: {e}".replace("\n", " ")[:300] + "\n")
        out.flush()


if __name__ == "__main__":
    main()
