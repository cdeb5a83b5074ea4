# expect: MT_ERR_UNSUPPORTED 2:1 'import' is not supported in minitriton kernels
import numpy
def f(a: Tensor((2, 3), "float32")):
    return a
