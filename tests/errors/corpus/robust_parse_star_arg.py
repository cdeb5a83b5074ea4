# expect: MT_ERR_UNSUPPORTED 3:16 '*' arguments are not supported
def f(a: Tensor((2, 3), "float32")):
    return exp(*a)
