# expect: MT_ERR_UNSUPPORTED 2:1 'class' is not supported in minitriton kernels
class K:
    pass

def f(a: Tensor((2, 3), "float32")):
    return a
