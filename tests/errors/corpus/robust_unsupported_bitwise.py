# expect: MT_ERR_UNSUPPORTED 3:14 operator '&' is not supported on tensors
def f(a: Tensor((2, 3), "int32")):
    return a & a
