# expect: MT_ERR_UNSUPPORTED 3:5 'global' is not supported in minitriton kernels
def f(a: Tensor((2, 3), "float32")):
    global a
    return a
