# expect: MT_ERR_UNSUPPORTED 3:9 dict literals are not supported in minitriton kernels
def f(a: Tensor((2, 3), "float32")):
    d = {1: a}
    return a
