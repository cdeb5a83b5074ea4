# expect: MT_ERR_UNSUPPORTED 3:14 operator 'is' is not supported in kernels
def f(a: Tensor((2, 3), "float32")):
    return a is a
