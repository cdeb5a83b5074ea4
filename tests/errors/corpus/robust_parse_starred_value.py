# expect: MT_ERR_UNSUPPORTED 3:12 '*' unpacking is not supported in minitriton kernels
def f(a: Tensor((2, 3), "float32")):
    return *a
