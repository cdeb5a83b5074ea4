# expect: MT_ERR_UNSUPPORTED 3:13 lambda expressions are not supported in minitriton kernels
def f(a: Tensor((2, 3), "float32")):
    return (lambda: a)()
