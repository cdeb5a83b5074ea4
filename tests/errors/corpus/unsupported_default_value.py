# expect: MT_ERR_UNSUPPORTED 2:38 default parameter values are not supported
def f(a: Tensor((2, 3), "float32") = 1):
    return a
