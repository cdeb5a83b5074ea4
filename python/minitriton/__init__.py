"""minitriton: kernels written in a Python subset, JIT-compiled by the
libminitriton C library (LLVM on the CPU, CUDA C for NVIDIA GPUs), run on
NumPy arrays and DLPack tensors.

    import numpy as np
    from minitriton import jit, Tensor

    @jit
    def add(a: Tensor(shape=(2, 3), dtype="float32"), b: Tensor(shape=(2, 3), dtype="float32")):
        out = a + b
        return out

    add(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))   # a NumPy array
    print(add.dump("tir"))

The reference is docs/python.md in the repository.
"""
from ._lib import DTYPES, STAGES, VERSION as library_version, path as library_path
from .errors import CompileError, MinitritonError, RunError
from .jit import (Array, JITFunction, Kernel, Tensor, cache_stats, compile, configure, context,
                  disk_cache_stats, from_dlpack, jit)

__version__ = "0.1.0"

# Scalar annotations (`alpha: float32`): Python evaluates annotations when
# the function is defined, so these names must exist; the compiler reads
# the text. float, int and bool are Python's own.
float16, float32, float64, bfloat16 = "float16", "float32", "float64", "bfloat16"
int8, int32, int64, uint8 = "int8", "int32", "int64", "uint8"

__all__ = ["jit", "compile", "Tensor", "Kernel", "JITFunction", "Array", "from_dlpack",
           "CompileError", "RunError", "MinitritonError", "configure", "context", "cache_stats",
           "disk_cache_stats",
           "DTYPES", "STAGES", "library_path", "library_version",
           "float16", "float32", "float64", "bfloat16", "int8", "int32", "int64", "uint8"]
