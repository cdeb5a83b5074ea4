# expect: MT_ERR_UNSUPPORTED 3:9 lambda expressions are not supported in minitriton kernels
def f(a: Tensor((2, 3), "float32")):
    g = lambda x: x
    return a
