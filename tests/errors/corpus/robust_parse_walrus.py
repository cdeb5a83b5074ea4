# expect: MT_ERR_UNSUPPORTED 3:15 assignment expressions (':=') are not supported in minitriton kernels
def f(a: Tensor((2, 3), "float32")):
    return (b := a)
