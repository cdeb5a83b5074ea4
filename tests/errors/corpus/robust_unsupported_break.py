# expect: MT_ERR_UNSUPPORTED 4:9 'break' is not supported in minitriton kernels
def f(a: Tensor((2, 3), "float32"), n: int64):
    for i in range(n):
        break
    return a
