# expect: MT_ERR_UNSUPPORTED 3:13 operator '//' is not supported yet
def f(a: Tensor((2, 3), "float32")):
    out = a // 2
    return out
