# expect: MT_ERR_SHAPE 2:21 dimension must be non-negative
def f(a: Tensor((2, -3), "float32")):
    return a
