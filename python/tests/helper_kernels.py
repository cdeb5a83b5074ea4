"""@jit helpers in a module of their own, called from test_helpers.py's kernels."""
from minitriton import Tensor, jit


@jit
def scale3(x: Tensor(("n",), "float32")):
    return x * 3.0


@jit
def broken(x: Tensor(("n",), "float32")):
    return x + undefined_here  # noqa: F821 - the error under test
